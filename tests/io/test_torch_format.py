"""tga.save / tga.load in PyTorch's own format, against the real PyTorch in both directions:
dtypes, shapes, views sharing storage, containers, state dicts, paths and file objects,
map_location, mmap; the weights_only allow-list; damaged files; atomic saves."""

from __future__ import annotations

import io
import itertools
import os
import pickle
import subprocess
import sys
import zipfile
from collections import Counter, OrderedDict

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import tinygrad_attn as tga
from tinygrad_attn import Tensor
from tinygrad_attn import serialization as ser
from tinygrad_attn.nn.module import Parameter
from tinygrad_attn.serialization import safetensors_file

torch = pytest.importorskip("torch")

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64"]
SHAPES = [(), (0,), (3,), (2, 0, 3), (3, 4), (2, 3, 4)]


def _values(dtype: str, shape: tuple, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        return np.asarray(rng.random(shape) < 0.5)
    if dtype.startswith("float"):
        a = np.asarray(rng.standard_normal(shape) * 100, dtype=dtype)
        if a.size >= 3:
            a.flat[:3] = [np.nan, np.inf, -0.0]  # the values that compare oddly must survive too
        return a
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, shape, dtype=dtype, endpoint=True)


# Views of one base array, each as (name, function of the base): the base's memory is what is shared.
LAYOUTS = {
    "whole": lambda b: b,
    "transposed": lambda b: b.T,
    "stepped": lambda b: b[..., ::2],
    "offset": lambda b: b[1:] if b.ndim else b,
    "broadcast": lambda b: np.broadcast_to(b, (2, *b.shape)),
}


def _torch_of(a: np.ndarray) -> torch.Tensor:
    return torch.from_numpy(np.ascontiguousarray(a)) if a.ndim == 0 else torch.from_numpy(a.copy())


def _same_values(ours: Tensor, ref: torch.Tensor) -> None:
    a, b = np.asarray(ours.detach().numpy()), ref.detach().numpy()
    assert str(ours.dtype) == str(ref.dtype), (ours.dtype, ref.dtype)
    assert a.shape == tuple(ref.shape)
    assert a.tobytes() == np.ascontiguousarray(b).tobytes()  # bit for bit: NaN, -0.0


def _layout(t: Tensor) -> tuple[tuple, int]:
    """A tensor's strides and the address of its first element, in elements."""
    a = t._data
    return tuple(s // a.itemsize for s in a.strides), a.__array_interface__["data"][0] // a.itemsize


CASES = [(d, s, lay) for d in DTYPES for s in SHAPES for lay in LAYOUTS if not (lay == "stepped" and not s)]


@pytest.mark.parametrize(("dtype", "shape", "layout"), CASES)
def test_ours_load_in_torch_with_their_views_shared(dtype, shape, layout):
    base = _values(dtype, shape, seed=len(CASES))
    view = LAYOUTS[layout](base)
    obj = {"base": tga.from_numpy(base), "view": tga.from_numpy(view)}
    buf = io.BytesIO()
    tga.save(obj, buf)
    buf.seek(0)
    back = torch.load(buf)  # weights_only=True, PyTorch's default
    _same_values(obj["base"], back["base"])
    _same_values(obj["view"], back["view"])
    if view.size and np.shares_memory(base, view):
        assert back["view"].untyped_storage().data_ptr() == back["base"].untyped_storage().data_ptr()
        assert back["view"].stride() == tuple(s // view.itemsize for s in view.strides)
        start = (view.__array_interface__["data"][0] - base.__array_interface__["data"][0]) // max(view.itemsize, 1)
        assert back["view"].storage_offset() == start


TORCH_LAYOUTS = {
    "whole": lambda t: t,
    "transposed": lambda t: t.mT if t.ndim >= 2 else t,
    "stepped": lambda t: t[..., ::2] if t.ndim else t,
    "offset": lambda t: t[1:] if t.ndim else t,
    "expanded": lambda t: t.expand(2, *t.shape),
}


@pytest.mark.parametrize(("dtype", "shape", "layout"), [(d, s, lay) for d, s, lay in CASES if lay != "broadcast"])
def test_torchs_load_here_with_their_views_shared(dtype, shape, layout, tmp_path):
    base = _torch_of(_values(dtype, shape, seed=7))
    view = TORCH_LAYOUTS[layout](base)
    path = tmp_path / "t.pt"
    torch.save({"base": base, "view": view}, path)
    back = tga.load(path)
    assert isinstance(back["view"], Tensor)
    _same_values(back["base"], base)
    _same_values(back["view"], view)
    if view.numel() and base.numel():
        strides, first = _layout(back["view"])
        assert strides == view.stride()
        assert first - _layout(back["base"])[1] == view.storage_offset() - base.storage_offset()
        assert np.shares_memory(back["view"]._data, back["base"]._data)


def test_views_loaded_share_memory_as_in_torch(tmp_path):
    base = torch.arange(12.0).reshape(3, 4)
    torch.save([base, base[:, 1], base.t()], tmp_path / "v.pt")
    a, col, t = tga.load(tmp_path / "v.pt")
    a.add_(1.0)  # a write through one shows in the others, as in PyTorch
    np.testing.assert_array_equal(col.detach().numpy(), (base[:, 1] + 1).detach().numpy())
    np.testing.assert_array_equal(t.detach().numpy(), (base.t() + 1).detach().numpy())


def _nested(make, rng):
    """The same nested container, its tensors made by ``make`` (ours or torch's)."""
    w = make(rng.standard_normal((2, 3)).astype(np.float32))
    return {
        "od": OrderedDict([("w", w), ("b", make(np.zeros(2, np.float64)))]),
        "again": w,
        3: {"step": 5, "lr": 0.5, "flag": True, "none": None, "name": "adam", "betas": (0.9, 0.999)},
        "list": [make(np.array(1, np.int64)), [], (), {}, [1, [2, (3, "x")]]],
        "counter": Counter({3: 2, 1: 1}),
        "set": {1, 2},
        "big": 2**70,
        "complex": 1 + 2j,
        "bytes": b"\x00\xff",
    }


def _assert_same_structure(ours, ref):
    if isinstance(ref, torch.Tensor):
        assert isinstance(ours, Tensor)
        _same_values(ours, ref)
    elif isinstance(ref, dict):
        assert type(ours) is type(ref) and list(ours) == list(ref)
        for k in ref:
            _assert_same_structure(ours[k], ref[k])
    elif isinstance(ref, (list, tuple)):
        assert type(ours) is type(ref) and len(ours) == len(ref)
        for a, b in zip(ours, ref):
            _assert_same_structure(a, b)
    else:
        assert type(ours) is type(ref) and ours == ref


@pytest.mark.parametrize("how", ["path", "pathlike", "open file", "bytesio"])
def test_nested_containers_both_ways(how, tmp_path, rng):
    seed = rng.integers(1 << 30)
    ours = _nested(tga.from_numpy, np.random.default_rng(seed))
    ref = _nested(torch.from_numpy, np.random.default_rng(seed))

    def write(save, obj, name):
        p = tmp_path / name
        if how == "path":
            save(obj, str(p))
        elif how == "pathlike":
            save(obj, p)
        elif how == "open file":
            with open(p, "wb") as f:
                save(obj, f)
        else:
            buf = io.BytesIO()
            save(obj, buf)
            p.write_bytes(buf.getvalue())
        return p

    def read(load, p, **kw):
        if how in ("path", "pathlike"):
            return load(str(p) if how == "path" else p, **kw)
        if how == "open file":
            with open(p, "rb") as f:
                return load(f, **kw)
        return load(io.BytesIO(p.read_bytes()), **kw)

    from_torch = read(tga.load, write(torch.save, ref, "theirs.pt"))
    _assert_same_structure(from_torch, ref)
    assert from_torch["again"] is from_torch["od"]["w"]  # one tensor stays one object
    from_us = read(torch.load, write(tga.save, ours, "ours.pt"), weights_only=True)
    _assert_same_structure(from_torch, from_us)  # (our reading of theirs == their reading of ours)
    assert from_us["again"] is from_us["od"]["w"]


def test_dtypes_devices_and_sizes_as_values_both_ways(tmp_path):
    ref = {"dt": [getattr(torch, d) for d in DTYPES], "dev": torch.device("cpu"), "size": torch.Size([2, 3])}
    torch.save(ref, tmp_path / "t.pt")
    back = tga.load(tmp_path / "t.pt")
    assert back["dt"] == [getattr(tga, d) for d in DTYPES]
    assert back["dev"] == tga.device("cpu") and back["size"] == (2, 3) and type(back["size"]) is tga.Size
    tga.save({"dt": back["dt"], "dev": back["dev"], "size": tga.ones(4, 1).size()}, tmp_path / "o.pt")
    again = torch.load(tmp_path / "o.pt")  # weights_only=True: a shape under PyTorch's name is allowed
    assert again["dt"] == ref["dt"] and again["dev"] == torch.device("cpu")
    assert type(again["size"]) is torch.Size and again["size"] == torch.Size([4, 1])
    ours = tga.load(tmp_path / "o.pt")
    assert type(ours["size"]) is tga.Size and ours["size"] == (4, 1)


def _torch_net():
    return torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.LayerNorm(3), torch.nn.Linear(3, 2))


def _our_net():
    return tga.nn.Sequential(tga.nn.Linear(4, 3), tga.nn.LayerNorm(3), tga.nn.Linear(3, 2))


def _train(net, opt, x, steps=2):
    for _ in range(steps):
        opt.zero_grad()
        (net(x) ** 2).sum().backward()
        opt.step()


def test_model_and_optimizer_from_torch_resume_here(tmp_path, rng):
    x = rng.standard_normal((5, 4)).astype(np.float32)
    ref = _torch_net()
    ref_opt = torch.optim.AdamW(ref.parameters(), lr=0.01)
    _train(ref, ref_opt, torch.from_numpy(x))
    torch.save({"model": ref.state_dict(), "optim": ref_opt.state_dict(), "epoch": 2}, tmp_path / "ckpt.pt")
    ck = tga.load(tmp_path / "ckpt.pt", map_location="cpu")
    assert isinstance(ck["model"], OrderedDict) and ck["epoch"] == 2
    net = _our_net()
    net.load_state_dict(ck["model"])
    opt = tga.optim.AdamW(net.parameters(), lr=0.5)
    opt.load_state_dict(ck["optim"])
    _train(ref, ref_opt, torch.from_numpy(x))
    _train(net, opt, Tensor(x))
    for (k, a), b in zip(ref.state_dict().items(), net.state_dict().values()):
        np.testing.assert_allclose(b.detach().numpy(), a.detach().numpy(), rtol=1e-5, atol=1e-6, err_msg=k)


def test_model_and_optimizer_from_here_resume_in_torch(tmp_path, rng):
    x = rng.standard_normal((5, 4)).astype(np.float32)
    net = _our_net()
    opt = tga.optim.SGD(net.parameters(), lr=0.05, momentum=0.9)
    _train(net, opt, Tensor(x))
    tga.save({"model": net.state_dict(), "optim": opt.state_dict()}, tmp_path / "ckpt.pt")
    ck = torch.load(tmp_path / "ckpt.pt", weights_only=True)
    ref = _torch_net()
    ref.load_state_dict(ck["model"])
    ref_opt = torch.optim.SGD(ref.parameters(), lr=1.0)
    ref_opt.load_state_dict(ck["optim"])
    assert ref_opt.param_groups[0]["lr"] == 0.05
    _train(ref, ref_opt, torch.from_numpy(x))
    _train(net, opt, Tensor(x))
    for (k, a), b in zip(ref.state_dict().items(), net.state_dict().values()):
        np.testing.assert_allclose(b.detach().numpy(), a.detach().numpy(), rtol=1e-5, atol=1e-6, err_msg=k)


def test_parameters_stay_parameters_both_ways(tmp_path):
    p = Parameter(np.ones((2, 2), np.float32))
    tga.save([p, Tensor(np.zeros(2), requires_grad=True)], tmp_path / "p.pt")
    theirs = torch.load(tmp_path / "p.pt")
    assert isinstance(theirs[0], torch.nn.Parameter) and theirs[1].requires_grad
    torch.save(theirs, tmp_path / "q.pt")
    ours = tga.load(tmp_path / "q.pt")
    assert isinstance(ours[0], Parameter) and ours[0].requires_grad and ours[1].requires_grad


# -- the allow-list ---------------------------------------------------------------------------
class Evil:
    def __init__(self, marker: str) -> None:
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


class Config:
    def __init__(self, depth: int) -> None:
        self.depth = depth


@pytest.mark.parametrize("writer", ["ours", "torch"])
@pytest.mark.parametrize("source", ["path", "file object"])
def test_a_pickle_that_runs_a_command_is_refused_and_never_run(tmp_path, writer, source):
    marker = tmp_path / "ran"
    path = tmp_path / "evil.pt"
    (tga.save if writer == "ours" else torch.save)({"w": torch.ones(1) if writer == "torch" else tga.ones(1),
                                                    "x": Evil(str(marker))}, path)  # fmt: skip
    assert not marker.exists()
    f = path if source == "path" else io.BytesIO(path.read_bytes())
    with pytest.raises(pickle.UnpicklingError, match=r"(posix|nt)\.system.*blocked") as e:
        tga.load(f)
    assert "Weights only load failed" in str(e.value) and "weights_only=False" in str(e.value)
    if source == "path":
        assert str(path) in str(e.value)
    assert not marker.exists()


def test_other_classes_need_allowing(tmp_path):
    tga.save({"cfg": Config(3), "w": tga.ones(2)}, tmp_path / "c.pt")
    with pytest.raises(
        pickle.UnpicklingError, match=rf"GLOBAL {__name__}.Config was not an allowed global.*add_safe_globals"
    ):
        tga.load(tmp_path / "c.pt")
    with ser.safe_globals([Config]):
        assert tga.load(tmp_path / "c.pt")["cfg"].depth == 3
        assert Config in ser.get_safe_globals()
    assert Config not in ser.get_safe_globals()  # the block's allowance ends with it
    with pytest.raises(pickle.UnpicklingError):
        tga.load(tmp_path / "c.pt")
    ser.add_safe_globals([Config])
    try:
        assert tga.load(tmp_path / "c.pt")["cfg"].depth == 3
    finally:
        ser.clear_safe_globals()
    assert ser.get_safe_globals() == []
    assert tga.load(tmp_path / "c.pt", weights_only=False)["cfg"].depth == 3


def test_whole_modules_load_only_without_weights_only(tmp_path, rng):
    net = _our_net()
    tga.save(net, tmp_path / "net.pt")
    with pytest.raises(pickle.UnpicklingError, match=r"tinygrad_attn\.nn\..*was not an allowed global"):
        tga.load(tmp_path / "net.pt")
    back = tga.load(tmp_path / "net.pt", weights_only=False)
    x = Tensor(rng.standard_normal((2, 4)).astype(np.float32))
    np.testing.assert_array_equal(back(x).detach().numpy(), net(x).detach().numpy())


def test_a_torch_module_file_is_refused_with_weights_only(tmp_path):
    torch.save(torch.nn.Linear(2, 2), tmp_path / "lin.pt")
    with pytest.raises(pickle.UnpicklingError, match=r"torch\.nn\.modules\.linear\.Linear"):
        tga.load(tmp_path / "lin.pt")


def test_writing_needs_no_torch(tmp_path):
    script = (
        "import sys; sys.modules['torch'] = None\n"
        "import numpy as np, tinygrad_attn as tga\n"
        "m = tga.nn.Linear(3, 2)\n"
        "tga.save({'model': m.state_dict(), 'x': tga.arange(6).reshape(2, 3).t()}, sys.argv[1])\n"
        "print(tga.load(sys.argv[1])['x'].tolist())\n"
    )
    env = {**os.environ, "PYTHONPATH": os.getcwd()}
    out = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path / "n.pt")], capture_output=True, text=True, env=env
    )
    assert out.returncode == 0, out.stderr
    assert torch.load(tmp_path / "n.pt")["x"].tolist() == [[0, 3], [1, 4], [2, 5]]


# -- map_location and mmap ------------------------------------------------------------------------
def _saved_on_cuda(tmp_path) -> os.PathLike:
    """A checkpoint that says its tensor was on 'cuda:0' (torch's file with the location rewritten)."""
    buf = io.BytesIO()
    torch.save({"w": torch.arange(3.0)}, buf)
    src = zipfile.ZipFile(io.BytesIO(buf.getvalue()))
    path = tmp_path / "cuda.pt"
    with zipfile.ZipFile(path, "w") as dst:
        for info in src.infolist():
            data = src.read(info)
            if info.filename.endswith("data.pkl"):
                data = data.replace(b"X\x03\x00\x00\x00cpu", b"X\x06\x00\x00\x00cuda:0")
            dst.writestr(info.filename, data)
    return path


@pytest.mark.parametrize(
    "map_location",
    ["cpu", tga.device("cpu"), {"cuda:0": "cpu"}, lambda storage, loc: storage, lambda s, loc: s.cpu()],
    ids=["str", "device", "dict", "callable", "callable-cpu"],
)
def test_map_location_brings_cuda_tensors_to_the_cpu(tmp_path, map_location):
    back = tga.load(_saved_on_cuda(tmp_path), map_location=map_location)
    assert back["w"].device == "cpu" and back["w"].tolist() == [0.0, 1.0, 2.0]


def test_a_cuda_checkpoint_without_a_gpu_names_map_location(tmp_path):
    if tga.is_available("cuda"):
        pytest.skip("a GPU is present: the tensors load onto it")
    with pytest.raises(RuntimeError, match="map_location"):
        tga.load(_saved_on_cuda(tmp_path))


def test_callable_map_location_sees_each_storage_and_location(tmp_path):
    seen = []
    tga.load(_saved_on_cuda(tmp_path), map_location=lambda s, loc: seen.append((s.nbytes(), loc)) or s.cpu())
    assert seen == [(12, "cuda:0")]
    assert (
        ser.default_restore_location(ser.Storage(np.zeros(4, np.uint8), None, tga.get_device("cpu")), "cpu").device
        == "cpu"
    )


def test_mmap_reads_the_same_values(tmp_path, rng):
    obj = {"a": tga.from_numpy(rng.standard_normal((64, 3))), "b": tga.arange(5)}
    tga.save(obj, tmp_path / "m.pt")
    back = tga.load(tmp_path / "m.pt", mmap=True)
    for k in obj:
        np.testing.assert_array_equal(back[k].detach().numpy(), obj[k].detach().numpy())
    back["a"].add_(1.0)  # copy-on-write: the file is never changed
    np.testing.assert_array_equal(tga.load(tmp_path / "m.pt")["a"].detach().numpy(), obj["a"].detach().numpy())
    with pytest.raises(ValueError, match="mmap"):
        tga.load(io.BytesIO((tmp_path / "m.pt").read_bytes()), mmap=True)


def test_storages_are_aligned_for_mapping(tmp_path):
    tga.save({"a": tga.ones(3), "b": tga.zeros(5, dtype=tga.int64), "c": tga.ones(1)}, tmp_path / "a.pt")
    with zipfile.ZipFile(tmp_path / "a.pt") as zf:
        data = [i for i in zf.infolist() if "/data/" in i.filename]
        assert len(data) == 3
        for info in data:
            with open(tmp_path / "a.pt", "rb") as f:
                f.seek(info.header_offset + 26)
                n, m = np.frombuffer(f.read(4), "<u2")
            assert (info.header_offset + 30 + int(n) + int(m)) % 64 == 0


# -- damaged files and atomic saves -----------------------------------------------------------
def _good_file(tmp_path) -> bytes:
    path = tmp_path / "good.pt"
    tga.save({"w": tga.arange(100.0), "step": 3}, path)
    return path.read_bytes()


@pytest.mark.parametrize("cut", [0.1, 0.5, 0.9, 0.99])
def test_a_truncated_file_is_named(tmp_path, cut):
    good = _good_file(tmp_path)
    path = tmp_path / "cut.pt"
    path.write_bytes(good[: int(len(good) * cut)])
    with pytest.raises(RuntimeError, match=r"cut\.pt.*(damaged|truncated)"):
        tga.load(path)


@pytest.mark.parametrize("content", [b"", b"not a checkpoint", b"\x80\x02}q\x00."], ids=["empty", "text", "pickle"])
def test_a_wrong_magic_is_named(tmp_path, content):
    path = tmp_path / "bad.pt"
    path.write_bytes(content)
    with pytest.raises(RuntimeError, match=r"bad\.pt"):
        tga.load(path)


def _rewrite(tmp_path, good: bytes, change) -> os.PathLike:
    src = zipfile.ZipFile(io.BytesIO(good))
    path = tmp_path / "changed.pt"
    with zipfile.ZipFile(path, "w") as dst:
        for info in src.infolist():
            data = change(info.filename, src.read(info))
            if data is not None:
                dst.writestr(info.filename, data)
    return path


def test_a_missing_storage_is_named(tmp_path):
    path = _rewrite(tmp_path, _good_file(tmp_path), lambda n, d: None if n.endswith("data/0") else d)
    with pytest.raises(RuntimeError, match=r"changed\.pt.*lacks the storage 'archive/data/0'"):
        tga.load(path)


def test_a_short_storage_is_named(tmp_path):
    path = _rewrite(tmp_path, _good_file(tmp_path), lambda n, d: d[:-8] if n.endswith("data/0") else d)
    with pytest.raises(RuntimeError, match=r"changed\.pt.*holds 392 bytes.*100 elements"):
        tga.load(path)


def test_a_flipped_byte_is_caught(tmp_path):
    good = bytearray(_good_file(tmp_path))
    with zipfile.ZipFile(io.BytesIO(bytes(good))) as zf:
        info = zf.getinfo("archive/data/0")
    path = tmp_path / "flip.pt"
    at = info.header_offset + 30 + len(info.filename) + len(info.extra) + 17  # inside the storage's bytes
    good[at] ^= 0xFF
    path.write_bytes(bytes(good))
    with pytest.raises(RuntimeError, match=r"flip\.pt.*(CRC|damaged)"):
        tga.load(path)


@pytest.mark.parametrize("fail_at", ["fsync", "replace"])
def test_a_failed_save_leaves_the_old_file_whole(tmp_path, monkeypatch, fail_at):
    path = tmp_path / "ckpt.pt"
    tga.save({"w": tga.ones(3)}, path)
    old = path.read_bytes()

    def crash(*a, **k):
        raise OSError("disk full")

    monkeypatch.setattr(os, fail_at, crash)
    with pytest.raises(OSError, match="disk full"):
        tga.save({"w": tga.zeros(3)}, path)
    monkeypatch.undo()
    assert path.read_bytes() == old and os.listdir(tmp_path) == ["ckpt.pt"]


def test_an_unpicklable_object_leaves_the_old_file_whole(tmp_path):
    path = tmp_path / "ckpt.pt"
    tga.save({"w": tga.ones(3)}, path)
    old = path.read_bytes()
    with pytest.raises((pickle.PicklingError, AttributeError, TypeError)):
        tga.save({"w": tga.zeros(3), "f": lambda: 0}, path)
    assert path.read_bytes() == old and os.listdir(tmp_path) == ["ckpt.pt"]
    buf = io.BytesIO()
    with pytest.raises((pickle.PicklingError, AttributeError, TypeError)):
        tga.save({"f": lambda: 0}, buf)
    assert buf.getvalue() == b""  # nothing half-written into a file object either


def test_safetensors_paths_and_older_files_still_work(tmp_path):
    obj = {"w": tga.arange(4.0), "n": [1, "a"]}
    tga.save(obj, tmp_path / "s.safetensors")
    assert safetensors_file.load_safetensors(tmp_path / "s.safetensors")["w"].tolist() == [0, 1, 2, 3]
    assert tga.load(tmp_path / "s.safetensors")["n"] == [1, "a"]
    safetensors_file.save(obj, tmp_path / "old.pt")  # the form this package wrote before, under any name
    assert tga.load(tmp_path / "old.pt")["w"].tolist() == [0.0, 1.0, 2.0, 3.0]


@pytest.mark.parametrize(
    ("dtype", "layout"), list(itertools.product(["float32", "int64", "bool"], ["whole", "stepped"]))
)
def test_bfloat16_and_unsigned_from_torch(tmp_path, dtype, layout, monkeypatch):
    from tinygrad_attn.serialization import torch_archive

    monkeypatch.setattr(torch_archive, "BFLOAT16", None)  # (as without ml_dtypes: NumPy has no bfloat16)
    ref = {"bf": torch.tensor([1.5, -2.0, 3.25]).to(torch.bfloat16), "u16": torch.tensor([1, 65535], dtype=torch.uint16),
           "x": TORCH_LAYOUTS[layout](_torch_of(_values(dtype, (3, 4), 1)))}  # fmt: skip
    torch.save(ref, tmp_path / "b.pt")
    with pytest.warns(UserWarning, match=r"b\.pt.*bfloat16.*float32"):
        back = tga.load(tmp_path / "b.pt")
    assert back["bf"].dtype == np.float32 and back["bf"].tolist() == [1.5, -2.0, 3.25]
    assert back["u16"].dtype == np.uint16 and back["u16"].tolist() == [1, 65535]
    _same_values(back["x"], ref["x"])
    tga.save({"u16": back["u16"]}, tmp_path / "u.pt")
    assert torch.load(tmp_path / "u.pt")["u16"].dtype == torch.uint16


# -- PyTorch's legacy format (torch.save(..., _use_new_zipfile_serialization=False)) ------------
@pytest.mark.parametrize("dtype", DTYPES)
def test_legacy_files_load_with_views_shared(tmp_path, dtype):
    base = _torch_of(_values(dtype, (3, 4), 3))
    ref = {"base": base, "row": base[1], "t": base.t(), "n": [1, (2.5, None)], "od": OrderedDict(x=base[:, ::2])}
    torch.save(ref, tmp_path / "old.pt", _use_new_zipfile_serialization=False)
    back = tga.load(tmp_path / "old.pt")
    _assert_same_structure(back, ref)
    assert np.shares_memory(back["row"]._data, back["base"]._data)
    assert _layout(back["t"])[0] == base.t().stride()
    with open(tmp_path / "old.pt", "rb") as f:  # and from a file object
        _assert_same_structure(tga.load(f, map_location="cpu"), ref)


def test_legacy_files_are_checked_like_the_others(tmp_path):
    marker = tmp_path / "ran"
    torch.save({"x": Evil(str(marker))}, tmp_path / "evil.pt", _use_new_zipfile_serialization=False)
    with pytest.raises(pickle.UnpicklingError, match="system"):
        tga.load(tmp_path / "evil.pt")
    assert not marker.exists()
    torch.save({"w": torch.arange(50.0)}, tmp_path / "old.pt", _use_new_zipfile_serialization=False)
    good = (tmp_path / "old.pt").read_bytes()
    for cut in (len(good) // 3, len(good) - 4):
        (tmp_path / "cut.pt").write_bytes(good[:cut])
        with pytest.raises(RuntimeError, match=r"cut\.pt.*truncated"):
            tga.load(tmp_path / "cut.pt")


def test_a_torch_module_pickled_whole_is_refused_even_without_weights_only(tmp_path):
    torch.save(torch.nn.Sequential(torch.nn.Linear(2, 2)), tmp_path / "whole.pt")
    with pytest.raises(
        pickle.UnpicklingError, match=r"whole\.pt.*torch\.nn\.modules\.container\.Sequential.*state_dict"
    ):
        tga.load(tmp_path / "whole.pt", weights_only=False)


def test_a_state_dict_that_does_not_fit_leaves_the_model_whole(tmp_path):
    ref = _torch_net()
    ref[2] = torch.nn.Linear(3, 5)  # the last layer's shapes differ from ours
    torch.save(ref.state_dict(), tmp_path / "sd.pt")
    net = _our_net()
    before = {k: v.detach().numpy().copy() for k, v in net.state_dict().items()}
    with pytest.raises(RuntimeError, match=r"2\.weight"):
        net.load_state_dict(tga.load(tmp_path / "sd.pt"))
    for k, v in net.state_dict().items():
        np.testing.assert_array_equal(v.detach().numpy(), before[k])


def test_mmap_of_a_legacy_file_is_refused(tmp_path):
    torch.save(torch.ones(2), tmp_path / "old.pt", _use_new_zipfile_serialization=False)
    with pytest.raises(RuntimeError, match=r"old\.pt.*legacy"):
        tga.load(tmp_path / "old.pt", mmap=True)


def test_a_pickle_with_wrong_arguments_is_named(tmp_path):
    def wrong(name, data):
        if name.endswith("data.pkl"):  # the storage offset becomes a string: the rebuild's arguments no longer fit
            return data.replace(b"K\x00K\x03", b"X\x01\x00\x00\x00aK\x03", 1)
        return data

    buf = io.BytesIO()
    torch.save(torch.ones(3), buf)
    path = _rewrite(tmp_path, buf.getvalue(), wrong)
    with pytest.raises((pickle.UnpicklingError, RuntimeError), match=r"changed\.pt"):
        tga.load(path)


@pytest.mark.parametrize("legacy", [False, True])
@pytest.mark.parametrize("protocol", [2, 4])
def test_unsafe_globals_are_listed_as_torch_lists_them(tmp_path, legacy, protocol):
    obj = {"cfg": Config(3), "evil": Evil(str(tmp_path / "ran")), "w": torch.ones(2), "od": OrderedDict(a=Counter())}
    path = tmp_path / "c.pt"
    torch.save(obj, path, pickle_protocol=protocol, _use_new_zipfile_serialization=not legacy)
    ours = ser.get_unsafe_globals_in_checkpoint(path)
    assert f"{__name__}.Config" in ours and any(g.endswith(".system") for g in ours)
    if not legacy and protocol == 2:  # (PyTorch's own reads neither legacy files nor protocol 4's frames)
        assert ours == sorted(torch.serialization.get_unsafe_globals_in_checkpoint(path))
    with ser.safe_globals([Config]):
        assert f"{__name__}.Config" not in ser.get_unsafe_globals_in_checkpoint(io.BytesIO(path.read_bytes()))
    assert not (tmp_path / "ran").exists()


def test_tensors_of_each_device_save_and_load_there(tmp_path, device):
    x = tga.arange(12.0, device=device).reshape(3, 4)
    tga.save({"x": x, "t": x.t(), "i": tga.tensor([1, 2], device=device)}, tmp_path / "d.pt")
    theirs = torch.load(tmp_path / "d.pt", map_location="cpu")
    assert theirs["t"].tolist() == x.t().tolist() and theirs["i"].dtype == torch.int64
    back = tga.load(tmp_path / "d.pt", map_location=device)
    assert all(v.device == tga.get_device(device).name for v in back.values())
    assert back["t"].tolist() == x.t().tolist()


# -- any nested container, generated ----------------------------------------------------------
_ARRAYS = hnp.arrays(
    dtype=st.sampled_from([np.dtype(d) for d in DTYPES]),
    shape=hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=3),
)
_LEAVES = st.one_of(
    st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.floats(allow_nan=False), st.text(max_size=5),
    _ARRAYS.map(lambda a: ("tensor", a)),
)  # fmt: skip
_KEYS = st.one_of(st.text(max_size=4), st.integers(-5, 5))
_SPECS = st.recursive(
    _LEAVES,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.lists(inner, max_size=3).map(tuple),
        st.dictionaries(_KEYS, inner, max_size=3),
        st.dictionaries(st.text(max_size=4), inner, max_size=3).map(lambda d: ("od", d)),
    ),
    max_leaves=8,
)


def _build(spec, make):
    if isinstance(spec, tuple) and len(spec) == 2 and spec[0] == "tensor":
        return make(spec[1].copy())
    if isinstance(spec, tuple) and len(spec) == 2 and spec[0] == "od":
        return OrderedDict((k, _build(v, make)) for k, v in spec[1].items())
    if isinstance(spec, list):
        return [_build(v, make) for v in spec]
    if isinstance(spec, tuple):
        return tuple(_build(v, make) for v in spec)
    if isinstance(spec, dict):
        return {k: _build(v, make) for k, v in spec.items()}
    return spec


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(spec=_SPECS)
def test_any_nested_container_both_ways(spec):
    ref = _build(spec, lambda a: torch.from_numpy(np.asarray(a)))
    buf = io.BytesIO()
    torch.save(ref, buf)
    buf.seek(0)
    _assert_same_structure(tga.load(buf), ref)
    buf = io.BytesIO()
    tga.save(_build(spec, lambda a: tga.from_numpy(np.asarray(a))), buf)
    buf.seek(0)
    _assert_same_structure(tga.load(io.BytesIO(buf.getvalue())), torch.load(buf))
