"""``torch.special``'s functions of the normal law and of entropy (``entr xlog1py ndtr log_ndtr ndtri``),
``spherical_bessel_j0``, ``modified_bessel_i0/i1`` and the orthogonal polynomials against PyTorch:
values over wide grids and at the edges (0, +-inf, NaN, huge and tiny), result dtypes of float,
integer and bool inputs, broadcasting, ``out=``, and the gradients (PyTorch's, finite differences,
second order) where PyTorch defines them, none where it does not."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

import tinygrad_attn as tga
from tinygrad_attn import Tensor

torch = pytest.importorskip("torch")

UNARY = ["entr", "ndtr", "log_ndtr", "ndtri", "spherical_bessel_j0", "modified_bessel_i0", "modified_bessel_i1"]
NO_GRADIENT_UNARY = [
    "modified_bessel_k0",
    "modified_bessel_k1",
    "scaled_modified_bessel_k0",
    "scaled_modified_bessel_k1",
]
DIFFERENTIABLE = ["entr", "ndtr", "log_ndtr", "ndtri"]
POLYNOMIALS = [f"{s}chebyshev_polynomial_{k}" for s in ("", "shifted_") for k in "tuvw"] + [
    "hermite_polynomial_h", "hermite_polynomial_he", "laguerre_polynomial_l", "legendre_polynomial_p",
]  # fmt: skip
EDGES = [0.0, -0.0, 1.0, -1.0, 0.5, 1e-300, -1e-300, 1e-30, 1e300, -1e300, 40.0, -40.0, -1e5, math.inf, -math.inf,
         math.nan]  # fmt: skip


def _ours(name):
    return getattr(tga.special, name)


def _theirs(name):
    return getattr(torch.special, name)


def _same(got, want, rtol, atol=0.0):
    """Equal NaN and infinity patterns; finite entries within ``rtol``/``atol``."""
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    assert got.shape == want.shape
    assert np.array_equal(np.isnan(got), np.isnan(want)), (got[np.isnan(got) != np.isnan(want)],
                                                          want[np.isnan(got) != np.isnan(want)])  # fmt: skip
    inf = np.isinf(want)
    assert np.array_equal(got[inf], want[inf])
    fin = np.isfinite(want)
    np.testing.assert_allclose(got[fin], want[fin], rtol=rtol, atol=atol)


def _unary_inputs(rng, name):
    if name == "ndtri":  # (its domain: [0, 1], both tails down to the smallest numbers)
        tiny = 10.0 ** -rng.uniform(0, 300, 200)
        return np.concatenate([rng.uniform(0, 1, 300), tiny, 1 - tiny[:60], [0.0, 1.0, 0.5, -0.1, 1.1, 2.0, -math.inf,
                                                                         math.inf, math.nan, 5e-324]])  # fmt: skip
    spread = np.concatenate([rng.standard_normal(300) * 3, rng.standard_normal(300) * 30, rng.uniform(-0.6, 0.6, 100)])
    return np.concatenate([spread, EDGES])


@pytest.mark.parametrize(("name", "dtype"), itertools.product(UNARY, [np.float64, np.float32]))
def test_unary_values_match_pytorch(rng, name, dtype):
    with np.errstate(over="ignore"):  # (1e300 is inf in float32)
        x = _unary_inputs(rng, name).astype(dtype)
    got = _ours(name)(Tensor(x))
    want = _theirs(name)(torch.tensor(x)).numpy()
    assert got.dtype == want.dtype
    if name == "ndtr":  # (PyTorch's CPU ndtr loses digits in the left tail, from x ~ -2.9 (float64): see below)
        keep = ~(x < -2.5) if dtype == np.float64 else ~(x < -2.0)
        got, want = Tensor(got.numpy()[keep]), want[keep]
    rtol = 1e-12 if dtype == np.float64 else 1e-5 if name == "log_ndtr" else 3e-6
    _same(got.numpy(), want, rtol, 1e-300 if dtype == np.float64 else 1e-37)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_ndtr_is_exact_in_the_left_tail(rng, dtype):
    # (the oracle here is Python's erfc in float64; PyTorch's ndtr is 1e-6 off at -6.6 and 0 past -37)
    x = np.concatenate([-rng.uniform(0, 38, 400), rng.uniform(-3, 9, 100)]).astype(dtype)
    want = np.array([math.erfc(-float(np.asarray(v * dtype(math.sqrt(0.5))).astype(dtype))) / 2 for v in x])
    got = tga.special.ndtr(Tensor(x)).numpy().astype(np.float64)
    keep = want > np.finfo(dtype).tiny * 1e3  # (float32's subnormals hold fewer digits)
    np.testing.assert_allclose(
        got[keep], want[keep], rtol=1e-13 if dtype == np.float64 else 1.2e-7
    )  # (float32: one rounding)


def test_log_ndtr_keeps_its_digits_in_the_left_tail():
    x = -np.logspace(0, 150, 200)
    _same(tga.special.log_ndtr(Tensor(x)).numpy(), torch.special.log_ndtr(torch.tensor(x)).numpy(), 1e-13)


def test_log_ndtr_gradient_in_the_far_left_tail_is_pytorchs():
    """PyTorch's gradient, ``exp(-(log_ndtr(x) + x^2/2)) / sqrt(2 pi)``, reads log_ndtr's last digits through
    a cancellation (1e-10 relative at x = -1000 for an ulp of the value): ours rounds its steps as PyTorch's."""
    x = -np.logspace(0.1, 3, 300)
    t, o = torch.tensor(x, requires_grad=True), Tensor(x, requires_grad=True)
    torch.special.log_ndtr(t).sum().backward()
    tga.special.log_ndtr(o).sum().backward()
    np.testing.assert_allclose(o.grad.numpy(), t.grad.numpy(), rtol=1e-12)


@pytest.mark.parametrize(
    ("name", "dtype"), itertools.product(UNARY + NO_GRADIENT_UNARY, ["bool", "uint8", "int8", "int32", "int64"])
)
def test_unary_of_integers_and_bools(name, dtype):
    x = np.array([0, 1, 1, 0], dtype=dtype) if dtype == "bool" else np.arange(-3, 5).astype(dtype)
    got, want = _ours(name)(Tensor(x)), _theirs(name)(torch.tensor(x)).numpy()
    assert got.dtype == want.dtype == np.float32
    _same(got.numpy(), want, 3e-6)


def _xlog1py_cases(rng):
    x = np.concatenate([rng.standard_normal(50) * 3, [0.0, 0.0, 0.0, 0.0, 1.0, -1.0, math.nan, math.inf, 0.0, 2.0]])
    y = np.concatenate([rng.uniform(-1, 5, 50), [-1.0, -2.0, math.nan, 0.0, -1.0, -1.0, 1.0, 0.0, math.inf, 1e-20]])
    return x, y


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_xlog1py_values_broadcasting_and_numbers(rng, dtype):
    x, y = (v.astype(dtype) for v in _xlog1py_cases(rng))
    rt = 1e-13 if dtype == np.float64 else 3e-6
    _same(tga.special.xlog1py(Tensor(x), Tensor(y)).numpy(),
          torch.special.xlog1py(torch.tensor(x), torch.tensor(y)).numpy(), rt)  # fmt: skip
    col, row = x[:6].reshape(6, 1), y[:5].reshape(1, 5)
    _same(tga.special.xlog1py(Tensor(col), Tensor(row)).numpy(),
          torch.special.xlog1py(torch.tensor(col), torch.tensor(row)).numpy(), rt)  # fmt: skip
    for a, b in [(2.5, y), (x, 0.75), (0, y)]:
        ours = tga.special.xlog1py(*(Tensor(v) if isinstance(v, np.ndarray) else v for v in (a, b)))
        want = torch.special.xlog1py(*(torch.tensor(v) if isinstance(v, np.ndarray) else v for v in (a, b)))
        assert ours.dtype == want.numpy().dtype
        _same(ours.numpy(), want.numpy(), rt)


@pytest.mark.parametrize(("a", "b"), [("int64", "int64"), ("int32", "float64"), ("bool", "float32"),
                                      ("float32", "float64"), ("uint8", "int8")])  # fmt: skip
def test_xlog1py_result_dtypes(a, b):
    x, y = np.array([0, 1, 2]).astype(a), np.array([1, 0, 3]).astype(b)
    got, want = tga.special.xlog1py(Tensor(x), Tensor(y)), torch.special.xlog1py(torch.tensor(x), torch.tensor(y))
    assert got.dtype == want.numpy().dtype
    _same(got.numpy(), want.numpy(), 3e-6)


def _grad_points(name):
    if name == "ndtri":
        return np.array([1e-30, 1e-5, 0.02, 0.3, 0.5, 0.77, 0.999, 1 - 1e-12])
    if name == "entr":
        return np.array([1e-8, 0.2, 1.0, 3.0, 70.0])
    return np.array([-60.0, -8.0, -1.5, -1.0, -0.3, 0.0, 0.4, 1.0, 2.5, 9.0])


@pytest.mark.parametrize("name", DIFFERENTIABLE)
def test_gradients_match_pytorch_to_second_order(name):
    x = _grad_points(name)
    a, t = Tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    (g,) = tga.autograd.grad(_ours(name)(a).sum(), a, create_graph=True)
    (tg,) = torch.autograd.grad(_theirs(name)(t).sum(), t, create_graph=True)
    _same(g.detach().numpy(), tg.detach().numpy(), 1e-12)
    (gg,) = tga.autograd.grad(g.sum(), a)
    (tgg,) = torch.autograd.grad(tg.sum(), t)
    # (log_ndtr's at -60 is a difference of two numbers near 60: both lose nine digits there)
    _same(gg.numpy(), tgg.numpy(), 1e-8, 1e-300)


@pytest.mark.parametrize("name", DIFFERENTIABLE)
def test_gradients_against_finite_differences(name):
    x = {"ndtri": [0.02, 0.3, 0.5, 0.8], "entr": [0.2, 1.0, 3.0]}.get(name, [-7.0, -1.5, -0.3, 0.4, 2.5])
    x = np.array(x)
    assert tga.gradcheck(_ours(name), Tensor(x, requires_grad=True))
    assert tga.autograd.gradgradcheck(_ours(name), Tensor(x, requires_grad=True))


def test_entr_gradient_at_the_edges_is_pytorchs():
    x = np.array([0.0, -1.0, math.nan, math.inf])
    a, t = Tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    tga.special.entr(a).sum().backward()
    torch.special.entr(t).sum().backward()
    _same(a.grad.numpy(), t.grad.numpy(), 0)


def test_xlog1py_gradients():
    x, y = np.array([0.0, 0.0, 1.5, -2.0, 0.7]), np.array([-1.0, 0.5, -0.5, 3.0, -1.0])
    a, b = Tensor(x, requires_grad=True), Tensor(y, requires_grad=True)
    t, u = torch.tensor(x, requires_grad=True), torch.tensor(y, requires_grad=True)
    ga = tga.autograd.grad(tga.special.xlog1py(a, b).sum(), (a, b), create_graph=True)
    gt = torch.autograd.grad(torch.special.xlog1py(t, u).sum(), (t, u), create_graph=True)
    for o, w in zip(ga, gt):
        _same(o.detach().numpy(), w.detach().numpy(), 1e-13)
    gga = tga.autograd.grad(sum(g.sum() for g in ga), (a, b), allow_unused=True)
    ggt = torch.autograd.grad(sum(g.sum() for g in gt), (t, u), allow_unused=True)
    for o, w in zip(gga, ggt):
        _same(o.numpy(), w.numpy(), 1e-13)
    inner = (Tensor([0.5, 1.2, -0.3], requires_grad=True), Tensor([0.4, 2.0, 0.1], requires_grad=True))
    assert tga.gradcheck(tga.special.xlog1py, inner)
    assert tga.autograd.gradgradcheck(tga.special.xlog1py, inner)


@pytest.mark.parametrize(
    "name", ["spherical_bessel_j0", "modified_bessel_i0", "modified_bessel_i1", *NO_GRADIENT_UNARY, *POLYNOMIALS]
)
def test_no_gradient_where_pytorch_has_none(name):
    a, t = Tensor([0.3, 0.6], requires_grad=True), torch.tensor([0.3, 0.6], requires_grad=True)
    args = (3,) if name in POLYNOMIALS else ()
    assert _ours(name)(a, *args).requires_grad == _theirs(name)(t, *args).requires_grad is False


@pytest.mark.parametrize("name", [*UNARY, *NO_GRADIENT_UNARY, "xlog1py", "zeta", *POLYNOMIALS])
def test_out_argument(name):
    x = np.array([0.25, 0.5, 0.75])
    two = name in ("xlog1py", "zeta")
    args = (
        Tensor(x + 1.5) if name == "zeta" else Tensor(x),
        *((Tensor(x),) if two else (3,) if name in POLYNOMIALS else ()),
    )
    targs = (torch.tensor(x + 1.5) if name == "zeta" else torch.tensor(x),
             *((torch.tensor(x),) if two else (3,) if name in POLYNOMIALS else ()))  # fmt: skip
    out, tout = tga.empty(3, dtype=tga.float64), torch.empty(3, dtype=torch.float64)
    assert _ours(name)(*args, out=out) is out
    _theirs(name)(*targs, out=tout)
    _same(out.numpy(), tout.numpy(), 1e-13)
    with pytest.raises(RuntimeError):
        _ours(name)(*args, out=tga.empty(3, dtype=tga.int64))
    with pytest.raises(RuntimeError):
        _theirs(name)(*targs, out=torch.empty(3, dtype=torch.int64))


def _polynomial_grid(name):
    xs = np.concatenate([np.linspace(-1.5, 1.5, 61), [-1.0, 1.0, 0.0, 0.5, -0.5, 2.0, -3.0, 1e-3, 1.0 - 1e-12,
                                                       7.5, -7.5, math.inf, -math.inf, math.nan]])  # fmt: skip
    if name.startswith("shifted"):
        xs = np.concatenate([xs, (xs + 1.0) / 2.0])
    ns = np.array([-3, -1, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 13, 20, 40, 129, 513, 600])
    return xs[:, None], ns[None, :]


@pytest.mark.parametrize(("name", "dtype"), itertools.product(POLYNOMIALS, [np.float64, np.float32]))
def test_polynomial_values_match_pytorch_over_a_grid(name, dtype):
    x, n = _polynomial_grid(name)
    x = x.astype(dtype)
    got = _ours(name)(Tensor(x), Tensor(n))
    want = _theirs(name)(torch.tensor(x), torch.tensor(n)).numpy()
    assert got.dtype == want.dtype == dtype
    if dtype == np.float32:  # (PyTorch's compiled recurrence fuses a multiply-add: at the edge of float32's
        # range it can stay finite where the separate product overflows)
        keep = ~(np.abs(want) > 1e38)
        got, want = Tensor(got.numpy()[keep]), want[keep]
    # (recurrences of hundreds of steps lose a few digits: PyTorch's and ours round alike, but the
    # float32 trigonometric forms differ from C's by an ulp or two, amplified by the degree)
    _same(got.numpy(), want, 1e-11 if dtype == np.float64 else 2e-4, 1e-9 if dtype == np.float64 else 2e-3)


@pytest.mark.parametrize("name", POLYNOMIALS)
def test_polynomial_recurrences_round_as_pytorchs_in_float32(rng, name):
    """Outside ``[-1, 1]`` (``[0, 1]`` shifted), where no closed form is taken, each step of the recurrence
    rounds as PyTorch's compiled one, whose product and difference are one fused multiply-add: float32's
    values agree to an ulp or two where separate roundings drift by 1e-5 within 20 steps."""
    x = (rng.standard_normal(600) * rng.choice([1.5, 4.0, 30.0, 300.0], 600)).astype(np.float32)
    x = x[(x < 0) | (x > 1)] if name.startswith("shifted") else x[np.abs(x) > 1]
    n = rng.integers(0, 24, x.shape).astype(np.float32)
    got = _ours(name)(Tensor(x), Tensor(n)).numpy()
    want = _theirs(name)(torch.tensor(x), torch.tensor(n)).numpy()
    keep = np.isfinite(want) & (np.abs(want) < 1e37)
    np.testing.assert_allclose(got[keep], want[keep], rtol=3e-7, atol=0)


@pytest.mark.parametrize("name", POLYNOMIALS)
def test_polynomial_numbers_floats_and_integers(name):
    x = np.array([0.25, -0.5, 0.9, 1.7])
    cases = [((Tensor(x), 4), (torch.tensor(x), 4)), ((Tensor(x), 4.7), (torch.tensor(x), 4.7)),
             ((0.3, Tensor([2, 5, 9])), (0.3, torch.tensor([2, 5, 9]))),
             ((Tensor([1, 0, 2]), Tensor([3, 2, 1])), (torch.tensor([1, 0, 2]), torch.tensor([3, 2, 1]))),
             ((Tensor(x.astype(np.float32)), Tensor([3])), (torch.tensor(x.astype(np.float32)), torch.tensor([3])))]  # fmt: skip
    for ours, theirs in cases:
        got, want = _ours(name)(*ours), _theirs(name)(*theirs)
        assert got.dtype == want.numpy().dtype
        # (float32's trigonometric forms amplify the rounding of n acos(x): a few ulps of C's differ from NumPy's)
        _same(got.numpy(), want.numpy(), 2e-5 if got.dtype == np.float32 else 1e-12)


def test_method_forms_are_absent_as_in_pytorch():
    for name in [*UNARY, *NO_GRADIENT_UNARY, "xlog1py", "zeta", *POLYNOMIALS]:
        assert hasattr(torch.Tensor, name) is hasattr(Tensor, name) is False
        assert hasattr(torch, name) is hasattr(tga, name) is False


@pytest.mark.parametrize(("name", "dtype"), itertools.product(NO_GRADIENT_UNARY, [np.float64, np.float32]))
def test_bessel_k_values_match_pytorch(rng, name, dtype):
    x = np.concatenate([rng.uniform(0, 2, 300), rng.uniform(2, 6, 200), 10 ** rng.uniform(-300, 3, 300),
                        [0.0, -0.0, -1.0, 2.0, 1.9999999, 2.0000001, 700.0, 800.0, 1e-300, math.inf, -math.inf,
                         math.nan]])  # fmt: skip
    with np.errstate(over="ignore", under="ignore"):
        x = x.astype(dtype)
    if dtype == np.float32:  # (PyTorch's float32 kernels overflow inside at subnormal x: K1(1e-45) is NaN there)
        x = x[~((x > 0) & (x < np.finfo(np.float32).tiny))]
    got, want = _ours(name)(Tensor(x)), _theirs(name)(torch.tensor(x)).numpy()
    assert got.dtype == want.dtype
    _same(got.numpy(), want, 1e-13 if dtype == np.float64 else 1e-6, 1e-300 if dtype == np.float64 else 1e-37)


def _zeta_cases(rng):
    x = np.concatenate([rng.uniform(1, 3, 200), rng.uniform(1, 60, 200),
                        [1.0, 1.0, 0.5, 2.0, 2.0, 3.0, 3.0, 2.5, math.nan, 2.0, math.inf, 1.0000001, 4.0, 2.0, 3.0,
                         math.inf, math.inf, math.inf, 4.0, 3.0, 1e20, 1e20, 1e300, 1e16, 41.0]])  # fmt: skip
    q = np.concatenate([rng.uniform(0.01, 5, 200), rng.uniform(-20, 50, 200),
                        [1.0, 0.0, 2.0, 0.0, -3.0, -2.5, -2.5, -2.5, 1.0, math.nan, 1.0, 1.0, 1e6, math.inf, -math.inf,
                         0.5, 2.0, -2.5, -1e4 - 0.5, 1e-300, -2.5, -0.5, -10.3, -3.7, -0.5]])  # fmt: skip
    return x, q


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_zeta_values_match_pytorch(rng, dtype):
    with np.errstate(under="ignore", over="ignore"):  # (1e300 in float32: inf)
        x, q = (v.astype(dtype) for v in _zeta_cases(rng))
    got, want = tga.special.zeta(Tensor(x), Tensor(q)), torch.special.zeta(torch.tensor(x), torch.tensor(q)).numpy()
    assert got.dtype == want.dtype
    # (float32's values below 1e-38 are subnormal: fewer digits)
    _same(got.numpy(), want, 1e-13 if dtype == np.float64 else 1e-6, 1e-300 if dtype == np.float64 else 1e-37)
    col, row = x[:7].reshape(7, 1), q[:5].reshape(1, 5)
    _same(tga.special.zeta(Tensor(col), Tensor(row)).numpy(),
          torch.special.zeta(torch.tensor(col), torch.tensor(row)).numpy(), 1e-6)  # fmt: skip


def test_zeta_numbers_and_dtypes():
    for a, b in [(2.0, np.array([1, 2, 3])), (np.array([2, 3]), 2), (np.array([2, 3]), np.array([1.5, 2.5])),
                 (np.array([2.0, 3.0], np.float32), np.array([1.5], np.float64))]:  # fmt: skip
        ours = tga.special.zeta(*(Tensor(v) if isinstance(v, np.ndarray) else v for v in (a, b)))
        want = torch.special.zeta(*(torch.tensor(v) if isinstance(v, np.ndarray) else v for v in (a, b)))
        assert ours.dtype == want.numpy().dtype
        _same(ours.numpy(), want.numpy(), 1e-6)


def test_zeta_gradient_in_q_only():
    x, q = np.array([2.0, 3.5, 1.5, 6.0]), np.array([1.5, 0.3, 4.0, 2.0])
    b, u = Tensor(q, requires_grad=True), torch.tensor(q, requires_grad=True)
    (g,) = tga.autograd.grad(tga.special.zeta(Tensor(x), b).sum(), b, create_graph=True)
    (tg,) = torch.autograd.grad(torch.special.zeta(torch.tensor(x), u).sum(), u, create_graph=True)
    _same(g.detach().numpy(), tg.detach().numpy(), 1e-13)
    (gg,) = tga.autograd.grad(g.sum(), b)
    (tgg,) = torch.autograd.grad(tg.sum(), u)
    _same(gg.numpy(), tgg.numpy(), 1e-13)
    assert tga.autograd.gradcheck(lambda v: tga.special.zeta(Tensor(x), v), Tensor(q, requires_grad=True))
    assert tga.autograd.gradgradcheck(lambda v: tga.special.zeta(Tensor(x), v), Tensor(q, requires_grad=True))
    a, t = Tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    with pytest.raises(NotImplementedError):
        torch.special.zeta(t, torch.tensor(q)).sum().backward()
    with pytest.raises(NotImplementedError, match="zeta"):
        tga.special.zeta(a, Tensor(q)).sum().backward()


@pytest.mark.parametrize("name", [*UNARY, *NO_GRADIENT_UNARY, "xlog1py", "zeta", *POLYNOMIALS])
def test_every_device_computes_the_host_values(device, name):
    x = np.array([0.0, 0.2, 0.5, 0.9, 2.0, 7.0])
    extra = (np.array([1.0, 0.5, 3.0, 0.25, 2.0, 1.5]),) if name in ("xlog1py", "zeta") else ()
    args = (x + 1.5 if name == "zeta" else x, *extra)
    want = _ours(name)(*(Tensor(a) for a in args), *((4,) if name in POLYNOMIALS else ()))
    got = _ours(name)(*(tga.tensor(a, device=device) for a in args), *((4,) if name in POLYNOMIALS else ()))
    assert str(got.device).startswith(device.split(":")[0])
    _same(got.cpu().numpy(), want.numpy(), 1e-13, 1e-300)
