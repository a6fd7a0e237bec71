"""Devices: names, defaults, the CUDA error messages, and CuPy on a real GPU."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import tinygrad_attn as tga
from tinygrad_attn import Tensor
from tinygrad_attn.runtime import backend


def test_devices_lists_cpu():
    assert "cpu" in tga.devices()
    assert tga.is_available("cpu")
    assert tga.is_available("array_api_strict:device1")


def test_cuda_without_cupy_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "cupy", None)  # import cupy -> ImportError
    monkeypatch.setattr(backend, "_devices", {k: v for k, v in backend._devices.items() if not k.startswith("cuda")})
    with pytest.raises(RuntimeError, match=r"CuPy.*tinygrad_attn\[cuda12\]"):
        Tensor.zeros(2, device="cuda")
    assert not tga.is_available("cuda")


def test_cuda_without_gpu_says_so(monkeypatch):
    class FakeCuda:
        @staticmethod
        def is_available():
            return False

    class FakeCupy:
        cuda = FakeCuda

    monkeypatch.setitem(sys.modules, "cupy", FakeCupy)
    monkeypatch.setattr(backend, "_devices", {k: v for k, v in backend._devices.items() if not k.startswith("cuda")})
    with pytest.raises(RuntimeError, match="no GPU"):
        Tensor.zeros(2, device="cuda:0")


def test_unknown_device_is_an_error():
    with pytest.raises(RuntimeError, match="Expected one of cpu, cuda"):  # (not a device type PyTorch knows)
        Tensor.zeros(2, device="tpu")
    for name in ("gpu", "CPU", " cpu", "cuda:x"):  # (PyTorch's parser refuses each)
        with pytest.raises(RuntimeError):
            tga.device(name)
        with pytest.raises(RuntimeError):
            Tensor.zeros(2, device=name)
    with pytest.raises(RuntimeError, match="unknown device"):  # (a type PyTorch knows, which this library lacks)
        Tensor.zeros(2, device="xla")


def test_set_default_device():
    try:
        tga.set_default_device("array_api_strict")
        assert Tensor.zeros(2).device == "array_api_strict"
        assert Tensor([1.0]).device == "array_api_strict"
    finally:
        tga.set_default_device("cpu")
    assert Tensor.zeros(2).device == "cpu"


@pytest.mark.slow  # (over a third of a second, or a new interpreter: not in the fast loop)
def test_environment_variable_sets_start_up_default():
    code = "import tinygrad_attn as t; print(t.Tensor.zeros(1).device)"
    out = subprocess.run(
        [sys.executable, "-c", code],
        env={"TINYGRAD_ATTN_DEVICE": "array_api_strict:device1", "PATH": ""},
        capture_output=True,
        text=True,
        check=True,
    )
    assert out.stdout.strip() == "array_api_strict:device1"


@pytest.mark.slow  # (over a third of a second, or a new interpreter: not in the fast loop)
def test_cupy_is_not_imported_for_cpu_work():
    code = "import sys, tinygrad_attn as t; (t.Tensor([1.0]) * 2).detach().numpy(); print('cupy' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


@pytest.mark.gpu
def test_cuda_round_trip_and_same_random_numbers():
    tga.manual_seed(3)
    a = Tensor.randn(4, 4, device="cuda")
    tga.manual_seed(3)
    b = Tensor.randn(4, 4)
    assert a.device == "cuda:0"
    np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())
    x = Tensor(np.ones(3), requires_grad=True).cuda()
    (x * x).sum().backward()
    assert x.is_leaf is False


@pytest.mark.slow  # (over a third of a second, or a new interpreter: not in the fast loop)
def test_a_bad_device_in_the_environment_names_the_variable():
    code = "import tinygrad_attn as t; t.Tensor.zeros(1)"
    out = subprocess.run([sys.executable, "-c", code], env={"TINYGRAD_ATTN_DEVICE": "garbage", "PATH": ""},
                         capture_output=True, text=True)  # fmt: skip
    assert out.returncode != 0
    assert "TINYGRAD_ATTN_DEVICE='garbage'" in out.stderr and "unknown device 'garbage'" in out.stderr
    assert "'cpu'" in out.stderr  # says what would work


def test_cpu_0_is_the_cpu_and_cpu_1_is_refused():
    assert Tensor.zeros(2, device="cpu:0").device == "cpu"
    assert tga.get_device("cpu:0") is tga.get_device("cpu")
    try:
        tga.set_default_device("cpu:0")
        assert Tensor([1.0]).device == "cpu"
    finally:
        tga.set_default_device("cpu")
    with pytest.raises(RuntimeError, match=r"unknown device 'cpu:1': there is one CPU device, 'cpu'"):
        Tensor.zeros(2, device="cpu:1")
    assert not tga.is_available("cpu:1")


@pytest.mark.slow  # (over a third of a second, or a new interpreter: not in the fast loop)
def test_environment_cpu_0_works():
    code = "import tinygrad_attn as t; print(t.Tensor.zeros(1).device)"
    out = subprocess.run([sys.executable, "-c", code], env={"TINYGRAD_ATTN_DEVICE": "cpu:0", "PATH": ""},
                         capture_output=True, text=True, check=True)  # fmt: skip
    assert out.stdout.strip() == "cpu"
