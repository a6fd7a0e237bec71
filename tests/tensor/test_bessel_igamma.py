"""The Bessel functions ``i0`` (and ``i0e i1 i1e``, ``torch.special``'s) and the regularized incomplete
gamma functions ``igamma``/``igammac`` against PyTorch: values over the whole range (both sides of
each method's switch, non-finite inputs), dtypes, Tensor methods and in-place twins, errors, and
gradients against PyTorch's and finite differences (first and second order)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

import tinygrad_attn as tga
from tinygrad_attn import Tensor
from tinygrad_attn import special_functions as sf

torch = pytest.importorskip("torch")

BESSEL = [("i0", tga.i0, torch.i0), ("i0e", sf.i0e, torch.special.i0e), ("i1", sf.i1, torch.special.i1),
          ("i1e", sf.i1e, torch.special.i1e)]  # fmt: skip
EDGES = [0.0, -0.0, 19.999, 20.0, 20.001, -20.0, 700.0, 720.0, -720.0, math.inf, -math.inf, math.nan, 1e-300]


def _relative_close(got, want, rtol):
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    assert np.array_equal(np.isnan(got), np.isnan(want))
    fin = np.isfinite(want)
    assert np.array_equal(got[~fin & ~np.isnan(want)], want[~fin & ~np.isnan(want)])
    np.testing.assert_allclose(got[fin], want[fin], rtol=rtol, atol=0)


@pytest.mark.parametrize(("name", "dtype"), itertools.product([b[0] for b in BESSEL], [np.float64, np.float32]))
def test_bessel_values_match_pytorch(rng, name, dtype):
    _, ours, theirs = next(b for b in BESSEL if b[0] == name)
    x = np.concatenate([rng.standard_normal(300) * 8, rng.standard_normal(300) * 60, EDGES]).astype(dtype)
    got = ours(Tensor(x))
    assert got.dtype == dtype
    _relative_close(
        got.detach().numpy(), theirs(torch.tensor(x)).detach().numpy(), 1e-13 if dtype == np.float64 else 2e-6
    )


def test_i0_of_integers_is_float32_and_methods_and_inplace_twin_exist():
    assert tga.i0(Tensor([1, 2])).dtype == np.float32 == torch.i0(torch.tensor([1, 2])).detach().numpy().dtype
    x, t = Tensor([0.5, -2.0]), torch.tensor([0.5, -2.0])
    np.testing.assert_allclose(x.i0().detach().numpy(), t.i0().detach().numpy(), rtol=1e-6)
    same = x.i0_()
    t.i0_()
    assert same is x
    np.testing.assert_allclose(x.detach().numpy(), t.detach().numpy(), rtol=1e-6)


@pytest.mark.parametrize("name", [b[0] for b in BESSEL])
def test_bessel_gradients_of_first_and_second_order(name):
    _, ours, theirs = next(b for b in BESSEL if b[0] == name)
    x = np.array([0.0, 0.3, -1.5, 4.0, 19.5, 20.5, -25.0])
    a, t = Tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    (g,) = tga.autograd.grad(ours(a).sum(), a, create_graph=True)
    (tg,) = torch.autograd.grad(theirs(t).sum(), t, create_graph=True)
    np.testing.assert_allclose(g.detach().numpy(), tg.detach().numpy(), rtol=1e-12)
    (gg,) = tga.autograd.grad(g.sum(), a)
    (tgg,) = torch.autograd.grad(tg.sum(), t)
    np.testing.assert_allclose(gg.detach().numpy(), tgg.detach().numpy(), rtol=1e-10, atol=1e-12)
    # (finite differences lose their digits beside i0's large values; i0e and i1e have a kink at 0)
    small = x[(np.abs(x) < 5) & (x != 0)]
    assert tga.gradcheck(ours, small)
    assert tga.gradcheck(lambda y: tga.autograd.grad(ours(y).sum(), y, create_graph=True)[0], small)


def test_i0_derivative_is_i1():
    x = Tensor(np.linspace(-5, 5, 11), requires_grad=True)
    tga.i0(x).sum().backward()
    np.testing.assert_allclose(x.grad.detach().numpy(), sf.i1(x.detach()).detach().numpy(), rtol=1e-15)


def _gamma_cases(rng):
    scale = np.array([0.01, 0.5, 3.0, 30.0, 300.0, 3000.0, 1e6])[rng.integers(0, 7, 400)]
    a = np.abs(rng.standard_normal(400)) * scale + 1e-3
    x = a * np.exp(rng.standard_normal(400) * np.where(scale > 100, 0.02, 0.7))  # (near a: the hard region)
    edge_a = [0.0, 0.0, 1.0, -1.0, 1.0, math.inf, 2.0, 1.0, math.inf, math.nan, 5.0, 1e20, 1e20]
    edge_x = [0.0, 1.0, 0.0, 1.0, -1.0, 1.0, math.inf, math.nan, math.inf, 1.0, -0.0, 1e20, 501.0]
    return np.concatenate([a, edge_a]), np.concatenate([x, edge_x])


@pytest.mark.parametrize(("upper", "dtype"), itertools.product([False, True], [np.float64, np.float32]))
def test_igamma_values_match_pytorch(rng, upper, dtype):
    a, x = (v.astype(dtype) for v in _gamma_cases(rng))
    ours, theirs = (tga.igammac, torch.igammac) if upper else (tga.igamma, torch.igamma)
    got = ours(Tensor(a), Tensor(x))
    assert got.dtype == dtype
    want = theirs(torch.tensor(a), torch.tensor(x)).detach().numpy()
    # (PyTorch computes float32 in float32, good to ~1e-5 near x = a; ours is float64's result rounded:
    # against PyTorch's float64 on the same inputs it is float32's rounding)
    np.testing.assert_allclose(got.detach().numpy(), want, rtol=1e-8 if dtype == np.float64 else 1e-4,
                               atol=1e-9 if dtype == np.float64 else 3e-5)  # fmt: skip
    assert np.array_equal(np.isnan(got.detach().numpy()), np.isnan(want))
    if dtype == np.float32:
        exact = theirs(torch.tensor(a).double(), torch.tensor(x).double()).detach().numpy()
        moderate = a <= 1000  # (above, PyTorch's own float64 is good to ~1e-5 in the far tails)
        np.testing.assert_allclose(
            got.detach().numpy()[moderate], exact.astype(np.float32)[moderate], rtol=2e-7, atol=1e-12
        )


def test_igamma_against_closed_forms():
    # P(1, x) = 1 - e^-x; P(1/2, x) = erf(sqrt(x)); Q(n, x) = e^-x sum_{k<n} x^k / k!
    x = np.array([1e-8, 0.1, 1.0, 2.5, 10.0, 40.0])
    np.testing.assert_allclose(tga.igamma(Tensor(np.ones(6)), Tensor(x)).detach().numpy(), -np.expm1(-x), rtol=1e-14)
    np.testing.assert_allclose(tga.igamma(Tensor(np.full(6, 0.5)), Tensor(x)).detach().numpy(),
                               [math.erf(math.sqrt(v)) for v in x], rtol=1e-14)  # fmt: skip
    q = [math.exp(-v) * sum(v**k / math.factorial(k) for k in range(4)) for v in x]
    np.testing.assert_allclose(tga.igammac(Tensor(np.full(6, 4.0)), Tensor(x)).detach().numpy(), q, rtol=1e-13)


def test_igamma_methods_inplace_twins_and_promotion():
    a, x = Tensor([1.0, 2.0]), Tensor([0.5, 3.0], dtype=tga.float64)
    assert (
        a.igamma(x).dtype
        == np.float64
        == torch.igamma(torch.tensor([1.0]), torch.tensor([2.0]).double()).detach().numpy().dtype
    )
    for name in ("igamma", "igammac"):
        y, t = Tensor([1.0, 2.0]), torch.tensor([1.0, 2.0])
        same = getattr(y, name + "_")(Tensor([0.5, 3.0]))
        getattr(t, name + "_")(torch.tensor([0.5, 3.0]))
        assert same is y
        np.testing.assert_allclose(y.detach().numpy(), t.detach().numpy(), rtol=1e-6)


def test_igamma_errors_as_pytorch():
    with pytest.raises(TypeError, match="igamma.*Tensor"):
        tga.igamma(Tensor([1.0]), 2.0)
    with pytest.raises(RuntimeError, match="igamma.*Long|igamma.*int64"):
        tga.igamma(tga.tensor([1]), tga.tensor([2]))


@pytest.mark.parametrize("upper", [False, True])
def test_igamma_gradient_in_x_and_none_in_a(upper):
    ours, theirs = (tga.igammac, torch.igammac) if upper else (tga.igamma, torch.igamma)
    a, x = np.array([0.5, 1.0, 2.0, 30.0, 2000.0]), np.array([0.3, 2.0, 1.5, 31.0, 1990.0])
    aa, ta = Tensor(a), torch.tensor(a)
    xx, tx = Tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    (g,) = tga.autograd.grad(ours(aa, xx).sum(), xx, create_graph=True)
    (tg,) = torch.autograd.grad(theirs(ta, tx).sum(), tx, create_graph=True)
    np.testing.assert_allclose(g.detach().numpy(), tg.detach().numpy(), rtol=1e-10)
    (gg,) = tga.autograd.grad(g.sum(), xx)
    (tgg,) = torch.autograd.grad(tg.sum(), tx)
    np.testing.assert_allclose(gg.detach().numpy(), tgg.detach().numpy(), rtol=1e-9)
    assert tga.gradcheck(lambda y: ours(aa[:4], y), x[:4])
    assert tga.gradcheck(lambda y: tga.autograd.grad(ours(aa[:4], y).sum(), y, create_graph=True)[0], x[:4])
    a_grad = Tensor(a, requires_grad=True)
    with pytest.raises(NotImplementedError, match="derivative"):
        ours(a_grad, xx).sum().backward()
    with pytest.raises(NotImplementedError, match="derivative"):
        theirs(torch.tensor(a, requires_grad=True), tx).sum().backward()
