"""tga.save / tga.load of nested state, pickling and deep copies of tensors and modules,
bfloat16 files, and the temporary files of saves killed mid-write."""

from __future__ import annotations

import copy
import json
import os
import pickle
import struct
import subprocess
import sys

import numpy as np
import pytest

import tinygrad_attn as tga
from tinygrad_attn import Tensor
from tinygrad_attn import serialization as ckpt
from tinygrad_attn.models import GPT, Linear, Module, Parameter
from tinygrad_attn.optim import SGD, AdamW
from tinygrad_attn.serialization import safetensors_file

# -- tga.save / tga.load ----------------------------------------------------------------


def test_nested_state_round_trips(tmp_path, device):
    w = Tensor(np.arange(6.0).reshape(2, 3), requires_grad=True, device=device)
    obj = {
        "w": w,
        "again": w,  # one tensor under two names stays one object
        "arr": np.array([[1, 2]], np.int64),
        "scalar": np.float32(2.5),
        "numbers": [1, 2.5, float("inf"), None, True, "text", (0.9, 0.999)],
        "by_index": {0: {"step": 3}, 1: {"step": 4}},
        "empty": {},
    }
    path = tmp_path / "state.safetensors"
    tga.save(obj, path)
    back = tga.load(path, device=device)
    assert set(back) == set(obj)
    assert isinstance(back["w"], Tensor) and back["w"].device == tga.get_device(device).name
    assert back["w"].requires_grad and back["w"].dtype == np.float64
    np.testing.assert_array_equal(back["w"].detach().numpy(), w.detach().numpy())
    assert back["again"] is back["w"]
    assert back["arr"].dtype == np.int64 and back["arr"].tolist() == [[1, 2]]
    assert back["scalar"] == np.float32(2.5) and back["scalar"].dtype == np.float32
    assert back["numbers"] == obj["numbers"] and isinstance(back["numbers"][-1], tuple)
    assert back["by_index"] == {0: {"step": 3}, 1: {"step": 4}}  # int keys stay ints
    assert back["empty"] == {}


def test_saved_file_is_plain_safetensors_named_by_path(tmp_path):
    path = tmp_path / "s.safetensors"
    tga.save({"model": {"w": np.ones(2, np.float32)}, "opt": [np.zeros(1)]}, path)
    assert sorted(ckpt.load_safetensors(path)) == ["model.w", "opt.0"]


def test_load_of_a_foreign_file_gives_tensors(tmp_path):
    path = tmp_path / "plain.safetensors"
    ckpt.save_safetensors({"a": np.ones(3, np.float32)}, path)
    back = tga.load(path)
    assert isinstance(back["a"], Tensor) and back["a"].tolist() == [1.0, 1.0, 1.0]


def test_module_and_optimizer_state_round_trip(tmp_path, rng):
    model = Linear(3, 2)
    opt = AdamW(model.parameters(), lr=0.01)
    for _ in range(2):
        (model(Tensor(rng.standard_normal((4, 3)).astype(np.float32))) ** 2).sum().backward()
        opt.step()
        opt.zero_grad()
    tga.save({"model": model.state_dict(), "opt": opt.state_dict(), "epoch": 7}, tmp_path / "c.safetensors")
    back = tga.load(tmp_path / "c.safetensors")
    assert back["epoch"] == 7
    model2 = Linear(3, 2)
    model2.load_state_dict(back["model"])
    opt2 = AdamW(model2.parameters(), lr=0.5)
    opt2.load_state_dict(back["opt"])
    assert opt2.param_groups[0]["lr"] == 0.01 and opt2.param_groups[0]["betas"] == (0.9, 0.999)
    x = Tensor(rng.standard_normal((4, 3)).astype(np.float32))
    for m, o in ((model, opt), (model2, opt2)):
        (m(x) ** 2).sum().backward()
        o.step()
    for a, b in zip(model.parameters(), model2.parameters()):
        np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())


@pytest.mark.parametrize("bad", [object(), {("tuple", "key"): 1}, Linear(2, 2)])
def test_what_cannot_be_stored_is_named(tmp_path, bad):
    with pytest.raises(TypeError, match=r"save: .*'x"):
        tga.save({"x": bad}, tmp_path / "bad.safetensors")
    assert not os.listdir(tmp_path)


def test_load_never_unpickles(tmp_path, monkeypatch):
    tga.save({"a": [np.ones(2)], "b": 1}, tmp_path / "s.safetensors")

    def refuse(*a, **k):
        raise AssertionError("pickle was used")

    monkeypatch.setattr(pickle, "loads", refuse)
    monkeypatch.setattr(pickle, "load", refuse)
    monkeypatch.setattr(pickle, "Unpickler", refuse)
    assert tga.load(tmp_path / "s.safetensors")["b"] == 1


# -- bfloat16 ------------------------------------------------------------------------------


def _write_safetensors_by_hand(path, tensors: dict) -> None:
    """The format itself: 8-byte little-endian header length, JSON header, raw bytes."""
    header, blobs, offset = {}, [], 0
    for name, (dtype, shape, raw) in tensors.items():
        header[name] = {"dtype": dtype, "shape": list(shape), "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    head = json.dumps(header).encode()
    head += b" " * (-len(head) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(head)) + head + b"".join(blobs))


@pytest.fixture
def without_ml_dtypes(monkeypatch):
    """The library as it reads bfloat16 files where ml_dtypes (NumPy's bfloat16) is not installed."""
    monkeypatch.setattr(safetensors_file, "BFLOAT16", None)


def test_bfloat16_loads_as_bfloat16(tmp_path):
    pytest.importorskip("ml_dtypes")
    values = np.array([[1.0, -2.5, 0.15625], [np.inf, -0.0, 2.0**127]], np.float32)
    bf16 = (values.view(np.uint32) >> 16).astype("<u2")
    path = tmp_path / "bf16.safetensors"
    _write_safetensors_by_hand(path, {"w": ("BF16", values.shape, bf16.tobytes())})
    w = tga.load(path)["w"]
    assert w.dtype is tga.bfloat16 and w.tolist() == values.tolist()
    tga.save({"w": w}, tmp_path / "again.safetensors")  # written as BF16, read back the same
    assert tga.load(tmp_path / "again.safetensors")["w"].tolist() == values.tolist()


def test_bfloat16_loads_as_float32_with_a_warning(tmp_path, without_ml_dtypes):
    values = np.array([[1.0, -2.5, 0.15625], [np.inf, -0.0, 2.0**127]], np.float32)
    bf16 = (values.view(np.uint32) >> 16).astype("<u2")  # exact: each value fits in bfloat16
    path = tmp_path / "bf16.safetensors"
    _write_safetensors_by_hand(path, {"w": ("BF16", values.shape, bf16.tobytes()),
                                      "b": ("F32", (2,), np.array([1, 2], "<f4").tobytes())})  # fmt: skip
    with pytest.warns(UserWarning, match=r"bfloat16.*float32.*\bw\b"):
        sd = ckpt.load_safetensors(path)
    assert sd["w"].dtype == np.float32 and sd["w"].shape == (2, 3)
    np.testing.assert_array_equal(sd["w"], values)
    np.testing.assert_array_equal(sd["b"], [1.0, 2.0])


def test_bfloat16_file_from_torch_loads_into_a_module(tmp_path, without_ml_dtypes):
    torch = pytest.importorskip("torch")
    st_torch = pytest.importorskip("safetensors.torch")
    ref = torch.nn.Linear(3, 2).to(torch.bfloat16)
    path = tmp_path / "torch_bf16.safetensors"
    st_torch.save_file(ref.state_dict(), str(path))
    ours = Linear(3, 2)
    with pytest.warns(UserWarning, match="bfloat16"):
        ours.load(path)
    assert ours.weight.dtype == np.float32
    np.testing.assert_array_equal(ours.weight.detach().numpy(), ref.weight.float().detach().numpy())


def test_a_damaged_bfloat16_file_is_named(tmp_path, without_ml_dtypes):
    path = tmp_path / "short.safetensors"
    _write_safetensors_by_hand(path, {"w": ("BF16", (4,), b"\x00" * 6)})  # 4 elements need 8 bytes
    with pytest.raises(ValueError, match="not a valid safetensors file"), pytest.warns(UserWarning):
        ckpt.load_safetensors(path)


# -- pickle and deepcopy ------------------------------------------------------------------


def test_tensor_pickles_values_dtype_device_and_flags_but_not_grad(device):
    x = Tensor(np.array([1.0, 2.0]), requires_grad=True, device=device, name="x")
    (x * x).sum().backward()
    y = pickle.loads(pickle.dumps(x))
    assert type(y) is Tensor and y is not x
    assert (y.device, y.dtype, y.requires_grad, y.name, y.is_leaf) == (x.device, x.dtype, True, "x", True)
    np.testing.assert_array_equal(y.detach().numpy(), x.detach().numpy())
    assert y.grad is None  # (as PyTorch's pickle: the gradient is no part of it; deepcopy keeps it)
    y.data[...] = 0 if device == "cpu" else y.data  # a copy, not shared
    assert x.tolist() == [1.0, 2.0]


def test_non_leaf_pickles_detached_and_refuses_deepcopy():
    x = Tensor([1.0, 2.0], requires_grad=True)
    y = x * 3
    z = pickle.loads(pickle.dumps(y))
    assert z.is_leaf and z.requires_grad and z.tolist() == [3.0, 6.0]  # as PyTorch
    with pytest.raises(RuntimeError, match=r"deepcopy.*\(2,\).*Mul.*detach"):
        copy.deepcopy(y)
    assert copy.deepcopy(y.detach()).tolist() == [3.0, 6.0]


def test_deepcopy_of_a_leaf_copies_values_and_grad(device):
    t = Tensor(np.ones((2, 2)), device=device, requires_grad=True)
    t.grad = Tensor(np.full((2, 2), 3.0), device=device)
    u = copy.deepcopy(t)
    assert type(u) is Tensor and u.device == t.device and u.requires_grad
    assert u.grad is not t.grad and u.grad.tolist() == [[3.0, 3.0], [3.0, 3.0]]
    p = Parameter(Tensor(np.ones((2, 2)), device=device))
    p.grad = Tensor(np.full((2, 2), 3.0), device=device)
    q = copy.deepcopy(p)
    assert type(q) is Parameter and q.device == p.device and q.requires_grad
    assert q.grad is None  # (as PyTorch's Parameter.__deepcopy__: the values, not the gradient)
    q.data = q.data * 2
    assert p.tolist() == [[1.0, 1.0], [1.0, 1.0]]


@pytest.mark.parametrize("how", ["pickle", "deepcopy"])
def test_module_copies_are_independent_and_equal(how, rng):
    m = GPT(16, 8, 2, 1, 8)
    m2 = pickle.loads(pickle.dumps(m)) if how == "pickle" else copy.deepcopy(m)
    assert type(m2) is GPT
    idx = Tensor(rng.integers(0, 16, (2, 8)), dtype=np.int64)
    np.testing.assert_array_equal(m(idx).detach().numpy(), m2(idx).detach().numpy())
    assert [n for n, _ in m.named_parameters()] == [n for n, _ in m2.named_parameters()]
    assert all(a is not b for a, b in zip(m.parameters(), m2.parameters()))
    (m2(idx) ** 2).sum().backward()  # the copy trains and keeps its own weights
    SGD(m2.parameters(), lr=0.1).step()
    assert any((a.detach().numpy() != b.detach().numpy()).any() for a, b in zip(m.parameters(), m2.parameters()))


class Net(Module):
    def __init__(self):
        super().__init__()
        self.inner = Linear(2, 2)


def test_unpicklable_attribute_is_named_by_its_path():
    net = Net()
    net.inner.hook = lambda x: x  # a lambda: deepcopy keeps it, pickle cannot store it
    with pytest.raises(TypeError, match=r"cannot pickle Net\.inner\.hook, a function"):
        pickle.dumps(net)
    assert copy.deepcopy(net).inner.hook is net.inner.hook
    assert copy.copy(net.inner).hook is net.inner.hook  # a shallow copy gets the attribute itself


# -- temporaries of killed saves ---------------------------------------------------------------

_KILLED_SAVE = """
import os, signal, sys
import numpy as np
from tinygrad_attn import serialization
os.fsync = lambda fd: os.kill(os.getpid(), signal.SIGKILL)  # dies after writing, before the rename
serialization.save_safetensors({"w": np.full(1000, 2.0, np.float32)}, sys.argv[1])
"""


@pytest.mark.slow  # (over half a second: the full suite runs it, the fast loop does not)
def test_a_save_killed_mid_write_leaves_a_temporary_that_the_next_save_removes(tmp_path):
    pytest.importorskip("safetensors")
    path = tmp_path / "model.safetensors"
    ckpt.save_safetensors({"w": np.ones(1000, np.float32)}, path)
    for _ in range(3):
        proc = subprocess.run([sys.executable, "-c", _KILLED_SAVE, str(path)], capture_output=True)
        assert proc.returncode == -9, proc.stderr.decode()
    orphans = [n for n in os.listdir(tmp_path) if n.endswith(".tmp")]
    assert len(orphans) == 1  # each killed save removed the one killed before it
    np.testing.assert_array_equal(ckpt.load_safetensors(path)["w"], np.ones(1000))  # the old one, whole
    other = tmp_path / "other.safetensors"
    ckpt.save_safetensors({"w": np.zeros(1)}, other)  # another target: its orphans are not its business
    assert [n for n in os.listdir(tmp_path) if n.endswith(".tmp")] == orphans
    tga.save({"w": np.zeros(2)}, path)
    assert sorted(os.listdir(tmp_path)) == ["model.safetensors", "other.safetensors"]


def test_temporaries_of_earlier_versions_go_when_a_day_old(tmp_path):
    path = tmp_path / "m.safetensors"
    old, recent = tmp_path / ".m.safetensors.0123456789ab.tmp", tmp_path / ".m.safetensors.ba9876543210.tmp"
    other = tmp_path / ".x.safetensors.0123456789ab.tmp"
    for f in (old, recent, other):
        f.write_bytes(b"half")
    two_days_ago = os.path.getmtime(old) - 2 * 24 * 3600
    os.utime(old, (two_days_ago, two_days_ago))
    os.utime(other, (two_days_ago, two_days_ago))
    ckpt.save_safetensors({"w": np.zeros(1)}, path)
    assert not old.exists() and recent.exists() and other.exists()


def test_a_temporary_of_a_live_writer_is_left_alone(tmp_path):
    path = tmp_path / "m.safetensors"
    live = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        mine = tmp_path / f"{safetensors_file._temporary_prefix(str(path))}{live.pid}.abc.tmp"
        mine.write_bytes(b"half")
        ckpt.save_safetensors({"w": np.zeros(1)}, path)
        assert mine.exists()
    finally:
        live.kill()
        live.wait()
    assert ckpt.remove_stale_temporaries(path) == [str(mine)]
    assert not mine.exists()


def test_schedule_state_round_trips_through_save(tmp_path):
    from tinygrad_attn.optim import lr_scheduler

    def make():
        opt = SGD([Parameter(np.zeros(1))], lr=1.0, momentum=0.9)
        return opt, [lr_scheduler.MultiStepLR(opt, [1, 3, 3]), lr_scheduler.OneCycleLR(opt, 2.0, total_steps=9)]

    opt, scheds = make()
    for _ in range(4):
        for s in scheds:
            s.step()
    tga.save({"opt": opt.state_dict(), "scheds": [s.state_dict() for s in scheds]}, tmp_path / "s.safetensors")
    back = tga.load(tmp_path / "s.safetensors")
    opt2, scheds2 = make()
    opt2.load_state_dict(back["opt"])
    for s, sd in zip(scheds2, back["scheds"]):
        s.load_state_dict(sd)
    for _ in range(3):
        for a, b in zip(scheds, scheds2):
            a.step()
            b.step()
            assert a.get_last_lr() == b.get_last_lr()
