"""Checkpoints: safetensors round trips bit for bit, atomic saves, clear errors, no pickle."""

from __future__ import annotations

import os
import sys

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from tinygrad_attn import serialization as ckpt
from tinygrad_attn.models import Embedding, LayerNorm, Linear, Module, Parameter, Sequential
from tinygrad_attn.nn.module import StateDictError


class Tiny(Module):
    def __init__(self) -> None:
        super().__init__()
        self.emb = Embedding(5, 3)
        self.body = Sequential(Linear(3, 4), LayerNorm(4))
        self.temperature = Parameter(np.array(0.5, np.float32))  # 0-d: must stay 0-d


def _same_bits(a: dict, b: dict) -> None:
    assert list(a) == list(b) or sorted(a) == sorted(b)
    for k in a:
        x, y = np.asarray(a[k]), np.asarray(b[k])  # (a module's state dict holds Tensors)
        assert x.dtype == y.dtype and x.shape == y.shape, k
        assert x.tobytes() == y.tobytes(), k


def test_state_dict_round_trips_bit_for_bit(tmp_path, rng):
    sd = {
        "f32": rng.standard_normal((3, 4)).astype(np.float32),
        "f64": rng.standard_normal(5),
        "f16": rng.standard_normal((2, 2)).astype(np.float16),
        "i64": np.arange(6, dtype=np.int64).reshape(2, 3) - 3,
        "mask": np.array([True, False, True]),
        "scalar": np.array(1.5, np.float32),
        "special": np.array([np.nan, np.inf, -np.inf, -0.0, 1e-45], np.float32),  # incl. a subnormal
        "strided": rng.standard_normal((4, 6)).astype(np.float32)[:, ::2],  # not contiguous
    }
    path = tmp_path / "sd.safetensors"
    ckpt.save_safetensors(sd, path)
    _same_bits(sd, ckpt.load_safetensors(path))


_ARRAYS = hnp.arrays(
    dtype=st.sampled_from([np.float32, np.float64, np.float16, np.int8, np.int64, np.uint8, np.bool_]),
    shape=hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4),
)  # any values: NaN payloads, infinities, signed zeros, subnormals


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(sd=st.dictionaries(st.text(st.characters(codec="utf-8"), min_size=1, max_size=12), _ARRAYS, max_size=4))
def test_any_state_dict_round_trips_bit_for_bit(tmp_path, sd):
    path = tmp_path / "any.safetensors"
    ckpt.save_safetensors(sd, path)
    _same_bits(sd, ckpt.load_safetensors(path))


def test_module_save_load_in_place(tmp_path, device):
    src, dst = Tiny(), Tiny().to(device)
    path = tmp_path / "tiny.safetensors"
    src.save(path)
    params = list(dst.parameters())
    assert dst.load(path) is dst
    assert all(p is q for p, q in zip(params, dst.parameters()))
    assert all(p.device == params[0].device for p in dst.parameters())  # stayed on its device
    _same_bits(src.state_dict(), dst.state_dict())
    assert os.listdir(tmp_path) == ["tiny.safetensors"]  # no temporary file left


def test_load_is_strict(tmp_path):
    path = tmp_path / "lin.safetensors"
    Linear(3, 4).save(path)
    with pytest.raises(KeyError, match="unexpected key 'bias'"):
        Linear(3, 4, bias=False).load(path)
    Linear(3, 4, bias=False).save(path)
    with pytest.raises(KeyError, match="missing key 'bias'"):
        Linear(3, 4).load(path)
    Linear(3, 4).save(path)
    with pytest.raises(ValueError, match=r"'weight' has shape \(4, 3\) in the state dict but \(4, 2\)"):
        Linear(2, 4).load(path)


@pytest.mark.parametrize("fail_at", ["fsync", "replace"])
def test_failed_save_keeps_the_old_checkpoint(tmp_path, monkeypatch, fail_at):
    path = tmp_path / "model.safetensors"
    old = Tiny()
    old.save(path)
    old_bytes = path.read_bytes()

    def crash(*a, **k):
        raise OSError("disk full")

    monkeypatch.setattr(os, fail_at, crash)  # the bytes were (partly) written, never renamed into place
    with pytest.raises(OSError, match="disk full"):
        Tiny().save(path)
    monkeypatch.undo()
    assert path.read_bytes() == old_bytes
    assert os.listdir(tmp_path) == ["model.safetensors"]
    _same_bits(old.state_dict(), Tiny().load(path).state_dict())


def test_missing_file_is_named(tmp_path):
    path = tmp_path / "nowhere.safetensors"
    with pytest.raises(FileNotFoundError, match="nowhere.safetensors"):
        Tiny().load(path)


@pytest.mark.parametrize("content", [b"", b"not a checkpoint at all", b"\xff" * 8 + b"{}"])
def test_corrupt_file_is_named(tmp_path, content):
    path = tmp_path / "broken.safetensors"
    path.write_bytes(content)
    with pytest.raises(ValueError, match="broken.safetensors.*not a valid safetensors file"):
        ckpt.load_safetensors(path)


def test_truncated_file_is_named(tmp_path):
    path = tmp_path / "cut.safetensors"
    Tiny().save(path)
    path.write_bytes(path.read_bytes()[:-10])
    with pytest.raises(ValueError, match="cut.safetensors"):
        Tiny().load(path)


def test_loading_never_unpickles(tmp_path, monkeypatch):
    import pickle

    def forbidden(*a, **k):
        raise AssertionError("pickle used")

    monkeypatch.setattr(pickle, "load", forbidden)
    monkeypatch.setattr(pickle, "loads", forbidden)
    monkeypatch.setattr(np, "load", forbidden)
    path = tmp_path / "m.safetensors"
    Tiny().save(path)
    Tiny().load(path)
    path.write_bytes(pickle.dumps({"weight": np.zeros(3)}))  # a pickle is rejected, not run
    with pytest.raises(ValueError, match="not a valid safetensors file"):
        Tiny().load(path)


def test_missing_safetensors_names_the_extra(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "safetensors", None)
    monkeypatch.setitem(sys.modules, "safetensors.numpy", None)
    with pytest.raises(ImportError, match=r'pip install "tinygrad_attn\[io\]"'):
        Tiny().save(tmp_path / "x.safetensors")
    with pytest.raises(ImportError, match="safetensors"):
        Tiny().load(tmp_path / "x.safetensors")


def test_saved_file_has_the_usual_permissions(tmp_path):
    plain = tmp_path / "plain"
    plain.write_bytes(b"")  # what open() gives under this umask
    path = tmp_path / "m.safetensors"
    Tiny().save(path)
    assert os.stat(path).st_mode & 0o777 == os.stat(plain).st_mode & 0o777


def test_save_into_a_missing_folder_is_named(tmp_path):
    with pytest.raises(FileNotFoundError, match="nowhere"):
        Tiny().save(tmp_path / "nowhere" / "m.safetensors")


@pytest.mark.parametrize("bad", ["text", "complex", "object"])
def test_an_uncastable_entry_leaves_the_module_whole(bad):
    m = Tiny()
    before = {k: v.clone() for k, v in m.state_dict().items()}
    sd = {k: np.full_like(v, 7.0) for k, v in before.items()}  # every entry fits but the last
    last = list(sd)[-1]
    shape = sd[last].shape
    sd[last] = {
        "text": np.full(shape, "x"),
        "complex": np.full(shape, 1 + 2j),
        "object": np.full(shape, None, dtype=object),
    }[bad]
    with pytest.raises(StateDictError, match=rf"'{last}' is .* cannot be cast; nothing was loaded"):
        m.load_state_dict(sd)
    _same_bits(before, m.state_dict())
