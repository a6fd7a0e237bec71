"""The float32 fast paths of fused ops against their float64 reference, on every CPU device.

The fast paths write into buffers of their own with NumPy (``out=``, sign bits set with
integer passes) and run the same arithmetic without ``out=`` on other namespaces: the
values must agree with the exact formula to float32's resolution, and across devices
bit for bit.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import tinygrad_attn as tga
import tinygrad_attn.functional as F
from tinygrad_attn import Tensor

_ERF = np.vectorize(math.erf)


def _gelu_and_grad_f64(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    x = x.astype(np.float64)
    cdf = 0.5 * (1.0 + _ERF(x / math.sqrt(2.0)))
    return x * cdf, cdf + x * np.exp(-0.5 * x * x) / math.sqrt(2.0 * math.pi)


def _gelu_run(x: np.ndarray, g: np.ndarray, device: str) -> tuple[np.ndarray, np.ndarray]:
    xt = Tensor(x, device=device, requires_grad=True)
    y = F.gelu(xt)
    y.backward(Tensor(g, device=device))
    return y.numpy(), xt.grad.numpy()


# Both signs, zero, the tails where the CDF is within float32's resolution of 0 or 1, and
# a shape that is not a whole number of cache blocks.
_X = np.concatenate([np.linspace(-9.0, 9.0, 4001), [0.0, -0.0, 1e-30, -1e-30, 40.0, -40.0]]).astype(np.float32)


def test_gelu_float32_matches_the_exact_formula(device):
    g = np.cos(np.arange(_X.size)).astype(np.float32)
    y, gx = _gelu_run(_X, g, device)
    assert y.dtype == np.float32 and gx.dtype == np.float32  # kept float32, never upcast
    ref_y, ref_d = _gelu_and_grad_f64(_X)
    np.testing.assert_allclose(y, ref_y, rtol=0, atol=5e-7)
    np.testing.assert_allclose(gx, ref_d * g, rtol=0, atol=5e-7)
    # the sign: exact zeros keep theirs, and the negative side is the small side
    assert np.signbit(y[_X.size - 5]) and not np.signbit(y[_X.size - 6])
    assert np.all(y[_X < 0] <= 0) and np.all(y[_X > 0] > 0)


def test_gelu_float32_equal_on_every_device_and_in_blocks(monkeypatch):
    from tinygrad_attn.backend import get_device

    x = np.linspace(-6.0, 6.0, 3 * 4099).reshape(3, 4099).astype(np.float32)
    g = np.sin(np.arange(x.size)).reshape(x.shape).astype(np.float32)
    ref = _gelu_run(x, g, "cpu")
    for dev in ("array_api_strict", "array_api_strict:device1"):
        for a, b in zip(ref, _gelu_run(x, g, dev)):
            np.testing.assert_array_equal(a, b)
    monkeypatch.setattr(get_device("cpu").ops, "cache_block", 1000)  # 13 blocks
    for a, b in zip(ref, _gelu_run(x, g, "cpu")):
        np.testing.assert_array_equal(a, b)


def test_gelu_float32_against_torch():
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(0).standard_normal((4, 64, 33)).astype(np.float32) * 3
    g = np.random.default_rng(1).standard_normal(x.shape).astype(np.float32)
    y, gx = _gelu_run(x, g, "cpu")
    tx = torch.tensor(x, requires_grad=True)
    ty = torch.nn.functional.gelu(tx)
    ty.backward(torch.tensor(g))
    np.testing.assert_allclose(y, ty.detach().numpy(), rtol=0, atol=1e-6)
    np.testing.assert_allclose(gx, tx.grad.numpy(), rtol=0, atol=1e-6)


def test_gelu_float32_decomposed_agrees():
    x = np.linspace(-5.0, 5.0, 777).astype(np.float32)
    g = np.ones_like(x)
    fused = _gelu_run(x, g, "cpu")
    with tga.decompose():
        ref = _gelu_run(x, g, "cpu")
    for a, b in zip(fused, ref):
        np.testing.assert_allclose(a, b, rtol=0, atol=5e-7)
