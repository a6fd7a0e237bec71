"""``torch.special``'s ``bessel_j0 bessel_j1 bessel_y0 bessel_y1 airy_ai`` against PyTorch: values
over wide grids and at the edges of each approximation (5, +-2.09, 8.32, 103.892, 0, +-inf, NaN,
huge and tiny), in float64 and float32 (each computed in its own dtype, as PyTorch's kernels),
result dtypes of integer and bool inputs, ``out=``, the refused dtypes, and no gradient, as
PyTorch's."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

import tinygrad_attn as tga
from tinygrad_attn import Tensor

torch = pytest.importorskip("torch")

NAMES = ["bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "airy_ai"]
EDGES = [0.0, -0.0, 1e-5, 0.99999e-5, -1e-5, 1e-300, -1e-300, 1e-30, 5.0, -5.0, 4.9999999, 5.0000001, 2.09, -2.09,
         2.0899999, -2.0900001, 8.3203353, 8.3203354, 103.892, 103.8921, -103.9, 1e5, -1e5, 1e300, -1e300, math.inf,
         -math.inf, math.nan]  # fmt: skip


def _grid(rng):
    return np.concatenate([rng.standard_normal(800) * 3, rng.standard_normal(800) * 30, rng.uniform(-12, 12, 1200),
                           10 ** rng.uniform(-300, 300, 200), -(10 ** rng.uniform(-300, 300, 200)), EDGES])  # fmt: skip


def _close(got, want, dtype):
    """Equal NaN, infinity and zero-sign patterns; finite entries within 16 ulps of ``max(|want|, 1)``
    (the sines and logarithms of NumPy and of C differ by an ulp, and a compiler may fuse a
    multiply-add of Horner's loops)."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype == dtype
    assert np.array_equal(np.isnan(got), np.isnan(want))
    inf = np.isinf(want)
    assert np.array_equal(got[inf], want[inf])
    zero = want == 0
    assert np.array_equal(np.signbit(got[zero]), np.signbit(want[zero]))
    fin = np.isfinite(want)
    g, w = got[fin].astype(np.float64), want[fin].astype(np.float64)
    bound = 16 * np.finfo(dtype).eps * np.maximum(np.abs(w), 1.0)
    bad = np.abs(g - w) > bound
    assert not bad.any(), (g[bad], w[bad])


@pytest.mark.parametrize(("name", "dtype"), itertools.product(NAMES, [np.float64, np.float32]))
def test_values_match_pytorch(rng, name, dtype):
    with np.errstate(over="ignore", under="ignore"):
        x = _grid(rng).astype(dtype)
    got = getattr(tga.special, name)(Tensor(x)).numpy()
    want = getattr(torch.special, name)(torch.tensor(x)).numpy()
    _close(got, want, dtype)


@pytest.mark.parametrize("name", NAMES)
def test_shapes_and_zero_dimensional_tensors(name):
    x = np.linspace(-7.0, 7.0, 24).reshape(2, 3, 4)
    for a in (x, np.asarray(x[0, 0, 1]), x[:, :0]):
        got = getattr(tga.special, name)(Tensor(a))
        want = getattr(torch.special, name)(torch.tensor(a)).numpy()
        assert tuple(got.shape) == want.shape
        _close(got.numpy(), want, np.float64)


@pytest.mark.parametrize(("name", "dtype"), itertools.product(NAMES, ["bool", "uint8", "int8", "int32", "int64"]))
def test_integers_and_bools(name, dtype):
    x = np.array([0, 1, 1, 0], dtype=dtype) if dtype == "bool" else np.arange(-3, 5).astype(dtype)
    got, want = getattr(tga.special, name)(Tensor(x)), getattr(torch.special, name)(torch.tensor(x)).numpy()
    _close(got.numpy(), want, np.float32)


@pytest.mark.parametrize("name", NAMES)
def test_no_gradient_as_pytorch(name):
    a, t = Tensor([0.3, 6.0], requires_grad=True), torch.tensor([0.3, 6.0], requires_grad=True)
    y, ty = getattr(tga.special, name)(a), getattr(torch.special, name)(t)
    assert y.requires_grad is ty.requires_grad is False
    assert y.grad_fn is None and ty.grad_fn is None
    with pytest.raises(RuntimeError):
        ty.sum().backward()
    with pytest.raises(RuntimeError, match="grad"):
        y.sum().backward()


@pytest.mark.parametrize(("name", "dtype"), itertools.product(NAMES, ["float16", "complex64", "complex128"]))
def test_refused_dtypes_raise_pytorchs_class(name, dtype):
    with pytest.raises(NotImplementedError) as theirs:
        getattr(torch.special, name)(torch.ones(3, dtype=getattr(torch, dtype)))
    with pytest.raises(NotImplementedError) as ours:
        getattr(tga.special, name)(tga.ones(3, dtype=getattr(tga, dtype)))
    assert name in str(theirs.value) and name in str(ours.value)


@pytest.mark.parametrize("name", NAMES)
def test_out_argument(name):
    x = np.array([0.25, 3.0, 7.5])
    out, tout = tga.empty(3, dtype=tga.float64), torch.empty(3, dtype=torch.float64)
    assert getattr(tga.special, name)(Tensor(x), out=out) is out
    getattr(torch.special, name)(torch.tensor(x), out=tout)
    _close(out.numpy(), tout.numpy(), np.float64)
    with pytest.raises(RuntimeError):
        getattr(torch.special, name)(torch.tensor(x), out=torch.empty(3, dtype=torch.int64))
    with pytest.raises(RuntimeError):
        getattr(tga.special, name)(Tensor(x), out=tga.empty(3, dtype=tga.int64))


def test_only_under_torch_special_as_pytorch():
    for name in NAMES:
        assert hasattr(torch.Tensor, name) is hasattr(Tensor, name) is False
        assert hasattr(torch, name) is hasattr(tga, name) is False


def test_airy_series_stops_per_entry():
    # (each entry sums its own number of terms: a zero beside entries near +-2.09 is still exact)
    x = np.array([0.0, 2.0899, -2.0899, 1e-8, -0.5, 1.5])
    _close(tga.special.airy_ai(Tensor(x)).numpy(), torch.special.airy_ai(torch.tensor(x)).numpy(), np.float64)


@pytest.mark.parametrize("name", NAMES)
def test_every_device_computes_the_host_values(device, name):
    x = np.array([-3.0, 0.0, 0.2, 0.5, 2.0, 5.5, 7.0, 120.0])
    want = getattr(tga.special, name)(Tensor(x))
    got = getattr(tga.special, name)(tga.tensor(x, device=device))
    assert str(got.device).startswith(device.split(":")[0])
    np.testing.assert_allclose(got.cpu().numpy(), want.numpy(), rtol=1e-13, atol=1e-15)
