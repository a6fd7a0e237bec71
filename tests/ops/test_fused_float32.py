"""The float32 fast paths of fused ops against their float64 reference, on every CPU device.

The fast paths write into buffers of their own with NumPy (``out=``, sign bits set with
integer passes) and run the same arithmetic without ``out=`` on other namespaces: the
values must agree with the exact formula to float32's resolution, and across devices
bit for bit. (Layer norm's compiled CPU loop, numba's, sums its rows in another order:
``tests/ops/test_cpu_kernels.py`` holds it to the NumPy code within rounding, and the
cross-device comparison here runs the NumPy code.)
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from helpers import assert_rounding_close

import tinygrad_attn as tga
import tinygrad_attn.functional as F
from tinygrad_attn import Tensor
from tinygrad_attn.ops import cpu_kernels

_ERF = np.vectorize(math.erf)


def _gelu_and_grad_f64(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    x = x.astype(np.float64)
    cdf = 0.5 * (1.0 + _ERF(x / math.sqrt(2.0)))
    return x * cdf, cdf + x * np.exp(-0.5 * x * x) / math.sqrt(2.0 * math.pi)


def _gelu_run(x: np.ndarray, g: np.ndarray, device: str) -> tuple[np.ndarray, np.ndarray]:
    xt = Tensor(x, device=device, requires_grad=True)
    y = F.gelu(xt)
    y.backward(Tensor(g, device=device))
    return y.detach().numpy(), xt.grad.detach().numpy()


# Both signs, zero, the tails where the CDF is within float32's resolution of 0 or 1, and
# a shape that is not a whole number of cache blocks.
_X = np.concatenate([np.linspace(-9.0, 9.0, 4001), [0.0, -0.0, 1e-30, -1e-30, 40.0, -40.0]]).astype(np.float32)


def test_gelu_float32_matches_the_exact_formula(device):
    g = np.cos(np.arange(_X.size)).astype(np.float32)
    y, gx = _gelu_run(_X, g, device)
    assert y.dtype == np.float32 and gx.dtype == np.float32  # kept float32, never upcast
    ref_y, ref_d = _gelu_and_grad_f64(_X)
    assert_rounding_close(y, ref_y, np.float32, scale=np.abs(_X))
    assert_rounding_close(gx, ref_d * g, np.float32, scale=np.abs(_X * g))
    # the sign: exact zeros keep theirs, and the negative side is the small side
    assert np.signbit(y[_X.size - 5]) and not np.signbit(y[_X.size - 6])
    assert np.all(y[_X < 0] <= 0) and np.all(y[_X > 0] > 0)


def test_gelu_float32_equal_on_every_device_and_in_blocks(monkeypatch):
    from tinygrad_attn.runtime.backend import get_device

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
    assert_rounding_close(y, ty.detach().numpy(), np.float32, scale=np.abs(x))
    assert_rounding_close(gx, tx.grad.detach().numpy(), np.float32, scale=np.abs(x * g))


def test_gelu_float32_decomposed_agrees():
    x = np.linspace(-5.0, 5.0, 777).astype(np.float32)
    g = np.ones_like(x)
    fused = _gelu_run(x, g, "cpu")
    with tga.decompose():
        ref = _gelu_run(x, g, "cpu")
    for a, b in zip(fused, ref):
        assert_rounding_close(a, b, np.float32, scale=np.abs(x))


# -- layer norm and linear: sums over rows and columns as products with ones ------------------
def _layer_norm_run(x, w, b, g, device):
    xt, wt, bt = (Tensor(a, device=device, requires_grad=True) for a in (x, w, b))
    y = F.layer_norm(xt, (x.shape[-1],), wt, bt, 1e-5)
    y.backward(Tensor(g, device=device))
    return [y.detach().numpy(), xt.grad.detach().numpy(), wt.grad.detach().numpy(), bt.grad.detach().numpy()]


@pytest.mark.parametrize("dtype, tol", [(np.float32, 2e-5), (np.float64, 1e-12)])
def test_layer_norm_values_and_gradients_match_float64_numpy(device, dtype, tol):
    rng = np.random.default_rng(0)
    x = (rng.standard_normal((3, 5, 7)) * 3 + 1).astype(dtype)
    w, b = rng.standard_normal(7).astype(dtype), rng.standard_normal(7).astype(dtype)
    g = rng.standard_normal(x.shape).astype(dtype)
    out = _layer_norm_run(x, w, b, g, device)
    assert all(a.dtype == dtype for a in out)
    x64, w64, g64 = x.astype(np.float64), w.astype(np.float64), g.astype(np.float64)
    mu = x64.mean(-1, keepdims=True)
    rstd = 1.0 / np.sqrt(((x64 - mu) ** 2).mean(-1, keepdims=True) + 1e-5)
    xhat = (x64 - mu) * rstd
    gxhat = g64 * w64
    gx = rstd * (gxhat - gxhat.mean(-1, keepdims=True) - xhat * (gxhat * xhat).mean(-1, keepdims=True))
    ref = [xhat * w64 + b, gx, (g64 * xhat).sum((0, 1)), g64.sum((0, 1))]
    for a, r in zip(out, ref):
        np.testing.assert_allclose(a, r, rtol=tol, atol=tol)


def test_layer_norm_and_linear_float32_equal_on_every_device(monkeypatch):
    monkeypatch.setattr(cpu_kernels, "ENABLED", False)  # (see the module's docstring)
    rng = np.random.default_rng(1)
    x = rng.standard_normal((4, 6, 16)).astype(np.float32)
    w, b = rng.standard_normal(16).astype(np.float32), rng.standard_normal(16).astype(np.float32)
    g = rng.standard_normal(x.shape).astype(np.float32)
    lw = rng.standard_normal((5, 16)).astype(np.float32)
    lg = rng.standard_normal((4, 6, 5)).astype(np.float32)

    def run(device):
        xt, wt, bt = (Tensor(a, device=device, requires_grad=True) for a in (x, lw, w[:5]))
        y = F.linear(xt, wt, bt)
        y.backward(Tensor(lg, device=device))
        return _layer_norm_run(x, w, b, g, device) + [
            y.detach().numpy(),
            xt.grad.detach().numpy(),
            wt.grad.detach().numpy(),
            bt.grad.detach().numpy(),
        ]

    ref = run("cpu")
    np.testing.assert_allclose(ref[-1], lg.sum((0, 1)), rtol=1e-5, atol=1e-5)  # the bias's gradient
    for dev in ("array_api_strict", "array_api_strict:device1"):
        for a, b_ in zip(ref, run(dev)):
            np.testing.assert_array_equal(a, b_)
