"""Edge cases of PyTorch's OpInfo samples, each class over a small grid against PyTorch.

``test_torch_opinfo.py`` meets each of these in one or two of PyTorch's samples; here each class
is run over its own grid (shapes, ranks, keywords, drivers), so a regression shows by name:
empty and 0-d inputs, negative indices, the fields each ``lstsq`` driver fills, ...
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")

# (inf, NaN and pole inputs make NumPy warn of 0 * inf and the like on both sides: the values are what is compared)
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

import tinygrad_attn as tga  # noqa: E402
import tinygrad_attn.functional as F  # noqa: E402
from tinygrad_attn.tensors._tensor import UnsupportedModeError  # noqa: E402


def ours(t: torch.Tensor, requires_grad: bool = False) -> tga.Tensor:
    return tga.tensor(t.detach().numpy().copy(), requires_grad=requires_grad)


def same(got: tga.Tensor, want: torch.Tensor, tol: float = 1e-12) -> None:
    assert tuple(got.shape) == tuple(want.shape), f"shape {tuple(got.shape)}, PyTorch's {tuple(want.shape)}"
    assert str(got.dtype) == str(want.dtype), f"dtype {got.dtype}, PyTorch's {want.dtype}"
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=tol, atol=tol, equal_nan=True)


# -- empty and 0-d inputs -----------------------------------------------------------------
@pytest.mark.parametrize("index_shape", [(0,), (2, 0), (0, 3, 4), (1, 0, 1, 1)])
@pytest.mark.parametrize("x_shape", [(5,), (3, 4)])
def test_gather_empty_index_of_any_rank(x_shape: tuple, index_shape: tuple) -> None:
    x = torch.rand(x_shape, dtype=torch.float64, requires_grad=True)
    idx = torch.zeros(index_shape, dtype=torch.int64)
    want = torch.gather(x, 0, idx)
    xo = ours(x, True)
    got = tga.gather(xo, 0, ours(idx))
    same(got, want)
    got.sum().backward()
    same(xo.grad, torch.zeros(x_shape, dtype=torch.float64))


@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("shape", [(0,), (0, 3), (2, 0), (0, 3, 4), (2, 3, 0)])
def test_batch_norm_of_empty_input(shape: tuple, training: bool) -> None:
    c = shape[1] if len(shape) > 1 else 0
    rm, rv = torch.zeros(c, dtype=torch.float64), torch.ones(c, dtype=torch.float64)
    x = torch.rand(shape, dtype=torch.float64)
    want = torch.nn.functional.batch_norm(x, rm, rv, training=training)
    orm, orv = ours(rm), ours(rv)
    same(F.batch_norm(ours(x), orm, orv, training=training), want)
    same(orm, rm)  # (nothing to update them with)
    same(orv, rv)


@pytest.mark.parametrize(("x", "target"), [(0.7, 0), (0.7, -1), (-2.0, [0]), ([0.3], 0)])
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_multilabel_margin_loss_of_one_class(x: object, target: object, reduction: str) -> None:
    xt, tt = torch.tensor(x, dtype=torch.float64), torch.tensor(target)
    want = torch.nn.functional.multilabel_margin_loss(xt, tt, reduction=reduction)
    same(F.multilabel_margin_loss(ours(xt), ours(tt), reduction=reduction), want)


@pytest.mark.parametrize("q", [0.25, [0.1, 0.9]])
@pytest.mark.parametrize(("dim", "keepdim"), [(None, False), (None, True), (0, False), (0, True), (-1, True)])
@pytest.mark.parametrize("fn", ["quantile", "nanquantile"])
def test_quantile_of_0d(fn: str, dim: object, keepdim: bool, q: object) -> None:
    x = torch.tensor(1.5, dtype=torch.float64)
    qt = torch.tensor(q, dtype=torch.float64) if isinstance(q, list) else q
    want = getattr(torch, fn)(x, qt, dim=dim, keepdim=keepdim)
    got = getattr(tga, fn)(ours(x), ours(qt) if isinstance(q, list) else q, dim=dim, keepdim=keepdim)
    same(got, want)


@pytest.mark.parametrize("n", [None, 2, 4])
@pytest.mark.parametrize("shape", [(), (3,), (2, 3)])
def test_vander_of_0d_and_more(shape: tuple, n: int | None) -> None:
    x = torch.rand(shape, dtype=torch.float64) + 0.5
    try:
        want = torch.linalg.vander(x, N=n)
    except RuntimeError:
        with pytest.raises(RuntimeError):
            tga.linalg.vander(ours(x), N=n)
        return
    same(tga.linalg.vander(ours(x), N=n), want)


# -- indices ------------------------------------------------------------------------------
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_take_along_dim_wraps_negative_indices(dim: int) -> None:
    x = torch.rand(4, 5, dtype=torch.float64)
    g = torch.Generator().manual_seed(dim + 3)
    n = x.shape[dim]
    idx = torch.randint(-n, n, (4, 5) if dim == 0 else (4, 3), generator=g)
    if dim == 0:
        idx = idx[:3]
    same(tga.take_along_dim(ours(x), ours(idx), dim), torch.take_along_dim(x, idx, dim))


@pytest.mark.parametrize("src_shape", [(2, 4), (3, 5)])
@pytest.mark.parametrize("dim", [0, 1])
def test_scatter_multiply_with_a_tensor_src(dim: int, src_shape: tuple) -> None:
    g = torch.Generator().manual_seed(dim)
    x = torch.rand(3, 4, dtype=torch.float64, generator=g)
    src = torch.rand(src_shape, dtype=torch.float64, generator=g)
    idx = torch.randint(0, x.shape[dim], (2, 4), generator=g)  # (repeats multiply together)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (PyTorch deprecates reduce= for scatter_reduce)
        want = torch.scatter(x, dim, idx, src, reduce="multiply")
    same(tga.scatter(ours(x), dim, ours(idx), ours(src), reduce="multiply"), want)
    xo = ours(x)
    xo.scatter_(dim, ours(idx), ours(src), reduce="multiply")
    same(xo, want)


# -- the fields each lstsq driver fills ---------------------------------------------------
@pytest.mark.parametrize("driver", [None, "gels", "gelsy", "gelsd", "gelss"])
@pytest.mark.parametrize(("a_shape", "b_shape"), [((4, 2), (4, 3)), ((2, 3), (2, 1)), ((2, 5, 3), (2, 5)),
                                                  ((3, 2, 2, 3), (3, 2, 2, 1))])  # fmt: skip
def test_lstsq_fields_per_driver(a_shape: tuple, b_shape: tuple, driver: str | None) -> None:
    g = torch.Generator().manual_seed(len(a_shape))
    a = torch.rand(a_shape, dtype=torch.float64, generator=g, requires_grad=True)
    b = torch.rand(b_shape, dtype=torch.float64, generator=g)
    want = torch.linalg.lstsq(a, b, driver=driver)
    ao = ours(a, True)
    got = tga.linalg.lstsq(ao, ours(b), driver=driver)
    for w, o in zip(want, got, strict=True):
        same(o, w, 1e-9)
    assert got.residuals.requires_grad  # (empty or not, on the graph as PyTorch's)
    if want.residuals.numel():
        (ta,) = torch.autograd.grad(want.residuals.sum(), a)
        (oa,) = tga.autograd.grad(got.residuals.sum(), ao)
        same(oa, ta, 1e-8)


def test_lstsq_residuals_only_where_every_matrix_has_full_rank() -> None:
    a = torch.stack([torch.tensor([[1.0, 2], [2, 4], [3, 6]], dtype=torch.float64), torch.rand(3, 2).double()])
    b = torch.rand(2, 3, 1, dtype=torch.float64)
    for driver in ("gelsd", "gelss"):
        want = torch.linalg.lstsq(a, b, driver=driver)
        got = tga.linalg.lstsq(ours(a), ours(b), driver=driver)
        same(got.residuals, want.residuals)
        same(got.rank, want.rank)


def test_lstsq_names_its_drivers() -> None:
    with pytest.raises(RuntimeError, match="gels, gelsy, gelsd, gelss"):
        tga.linalg.lstsq(tga.ones(3, 2), tga.ones(3, 1), driver="qr")


# -- pseudo-inverse: the lower triangle, dropped singular values ---------------------------
def _rank_one(n: int, g: torch.Generator) -> torch.Tensor:
    u = torch.rand(n, 1, dtype=torch.float64, generator=g)
    return u @ torch.rand(1, n, dtype=torch.float64, generator=g)


_PINV_CASES = [
    (kind, tols, hermitian)
    for kind in ("square", "batch", "rank one", "wide")
    for tols in ((None, None), (1.0, None), (0.3, None), (None, 0.5), (0.0, 0.0))
    for hermitian in (False, True)
    if not (hermitian and kind == "wide")  # (hermitian=True takes square matrices)
    and not (kind == "rank one" and tols == (0.0, 0.0))  # (inverts rounding noise: 1e16 either way)
]


def _pinv_input(kind: str, g: torch.Generator) -> torch.Tensor:
    """A float64 matrix (batch) of ``kind`` that requires grad, drawn from ``g``."""
    shape = {"square": (4, 4), "batch": (2, 3, 3), "rank one": (3, 3), "wide": (2, 4)}[kind]
    a = _rank_one(3, g) if kind == "rank one" else torch.randn(shape, dtype=torch.float64, generator=g)
    return a.requires_grad_()


@pytest.mark.parametrize(("kind", "tols", "hermitian"), _PINV_CASES)
def test_pinv_values_and_gradient(kind: str, tols: tuple, hermitian: bool) -> None:
    rtol, atol = tols
    g = torch.Generator().manual_seed(7)
    a = _pinv_input(kind, g)
    want = torch.linalg.pinv(a, rtol=rtol, atol=atol, hermitian=hermitian)  # (an unsymmetric a: its lower triangle)
    ao = ours(a, True)
    got = tga.linalg.pinv(ao, rtol=rtol, atol=atol, hermitian=hermitian)
    same(got, want, 1e-9)
    cot = torch.randn(want.shape, dtype=torch.float64, generator=g)
    (ta,) = torch.autograd.grad(want, a, cot)
    (oa,) = tga.autograd.grad(got, ao, ours(cot))
    same(oa, ta, 1e-7)


# -- dtypes of weights ----------------------------------------------------------------------
_COV_W = {"int32": torch.int32, "int64": torch.int64, "float32": torch.float32, "float64": torch.float64}


@pytest.mark.parametrize("correction", [0, 1, 2])
@pytest.mark.parametrize("aweights", [None, "float32", "float64"])
@pytest.mark.parametrize("fweights", [None, "int32", "int64"])
@pytest.mark.parametrize("x_dtype", [torch.float32, torch.float64, torch.int64])
def test_cov_weights_keep_their_dtype(x_dtype: torch.dtype, fweights: str | None, aweights: str | None,
                                      correction: int) -> None:  # fmt: skip
    g = torch.Generator().manual_seed(correction)
    x = (torch.rand(3, 5, generator=g, dtype=torch.float64) * 10).to(x_dtype)
    kw = {}
    if fweights:
        kw["fweights"] = torch.randint(1, 4, (5,), generator=g, dtype=_COV_W[fweights])
    if aweights:
        kw["aweights"] = (torch.rand(5, generator=g, dtype=torch.float64) + 0.1).to(_COV_W[aweights])
    want = torch.cov(x, correction=correction, **kw)
    got = tga.cov(ours(x), correction=correction, **{k: ours(v) for k, v in kw.items()})
    # (float32 weights sum in float32, in PyTorch's order of its vector lanes: equal to float32 rounding)
    same(got, want, 1e-12 if want.dtype == torch.float64 and aweights != "float32" else 2e-6)


# -- renorm's norms -----------------------------------------------------------------------
@pytest.mark.parametrize("maxnorm", [0.0, 0.5, 3.0])
@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("p", [1, 2, 3.5, float("inf")])
def test_renorm_values_and_gradient(p: float, dim: int, maxnorm: float) -> None:
    g = torch.Generator().manual_seed(5)
    x = torch.randn(3, 4, 2, dtype=torch.float64, generator=g, requires_grad=True)
    want = torch.renorm(x, p, dim, maxnorm)
    xo = ours(x, True)
    got = tga.renorm(xo, p, dim, maxnorm)
    same(got, want)
    cot = torch.randn(want.shape, dtype=torch.float64, generator=g)
    (tx,) = torch.autograd.grad(want, x, cot)
    (ox,) = tga.autograd.grad(got, xo, ours(cot))
    same(ox, tx, 1e-9)


# -- gradients PyTorch defines where the function is a step or flat ------------------------
_SPECIAL = [0.0, -0.0, 1.5, -3.0, 1e-310, float("inf"), float("-inf"), float("nan"), 2.0**-1022, 7.25, 1e300, 3e-40]


def _grads(fn_t, fn_o, *xs: torch.Tensor, tol: float = 1e-12) -> None:
    """Values and gradients (a fixed cotangent) of ``fn_t`` on ``xs`` and ``fn_o`` on ours."""
    ts = [x.clone().requires_grad_() for x in xs]
    os_ = [ours(x, True) for x in xs]
    want, got = fn_t(*ts), fn_o(*os_)
    same(got, want)
    cot = torch.linspace(-1, 2, want.numel(), dtype=torch.float64).reshape(want.shape)
    tg = torch.autograd.grad(want, ts, cot, allow_unused=True)
    og = tga.autograd.grad(got, os_, ours(cot), allow_unused=True)
    for x, o, t in zip(xs, og, tg, strict=True):  # (an input PyTorch's graph does not reach: gradient 0)
        zeros = torch.zeros(x.shape, dtype=torch.float64)
        same(ours(zeros) if o is None else o, zeros if t is None else t, tol)


def test_frexp_mantissa_gradient() -> None:
    x = torch.tensor(_SPECIAL, dtype=torch.float64)
    _grads(lambda a: torch.frexp(a)[0], lambda a: tga.frexp(a)[0], x)


@pytest.mark.parametrize("shift", [0, 1, 3])
def test_nextafter_gradient(shift: int) -> None:
    x = torch.tensor(_SPECIAL, dtype=torch.float64)
    _grads(torch.nextafter, tga.nextafter, x, x.roll(shift))  # (shift 0: every pair equal)


_NORM_INPUTS = {
    "zeros": [0.0, 0.0, 0.0],
    "one zero": [0.0, 1.0, -2.0],
    "no zero": [0.5, 1.0, -2.0],
    "negative zero": [-0.0, 3.0, 0.0],
}


@pytest.mark.parametrize("p", [0, 0.5, 1, 1.5, 2, 3, -1, -0.5, float("inf"), float("-inf")])
@pytest.mark.parametrize("values", list(_NORM_INPUTS))
@pytest.mark.parametrize("fn", ["vector_norm", "norm"])
def test_norm_subgradients_at_zero(fn: str, values: str, p: float) -> None:
    """PyTorch's norm gradient is 0 at zero entries and where the norm is 0, for every ``p``."""
    x = torch.tensor([_NORM_INPUTS[values], [1.0, 2.0, 3.0]], dtype=torch.float64)
    if fn == "vector_norm":
        _grads(lambda a: torch.linalg.vector_norm(a, p, dim=1), lambda a: tga.linalg.vector_norm(a, p, dim=1), x)
        return
    t = torch.norm(x.clone().requires_grad_(), p, dim=1)
    got = tga.norm(ours(x, True), p, dim=1)
    assert got.requires_grad == t.requires_grad  # (p=0 too: in the graph, gradient 0)
    _grads(lambda a: torch.norm(a, p, dim=1), lambda a: tga.norm(a, p, dim=1), x)


@pytest.mark.parametrize("value", [float("nan"), float("inf"), float("-inf"), 0.0, -0.0, 6.0, -1.0, 0.5])
@pytest.mark.parametrize("fn", ["elu", "celu", "selu", "relu6", "hardtanh", "hardshrink", "softshrink"])
def test_piecewise_activation_gradient_at_non_finite(fn: str, value: float) -> None:
    """One entry: PyTorch's scalar path, the same on every CPU (in whole vector blocks of a longer
    tensor PyTorch's gradient at NaN depends on the vector width: ``test_torch_opinfo.NAN_GRADIENT_UNDEFINED``)."""
    x = torch.tensor([value], dtype=torch.float64)
    _grads(getattr(torch.nn.functional, fn), getattr(F, fn), x)


# -- the gamma family's poles and far negative arguments -----------------------------------
_POLYGAMMA_X = [-1001.2, -501.0, -50.7, -8.500072414776497, -3.0, -2.3, -1.0, -0.75, -0.25, -1e-3, 0.0, 1e-3, 0.3,
                1.0, 5.5, 13.7, 100.5, float("inf"), float("-inf"), float("nan")]  # fmt: skip


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
@pytest.mark.parametrize("n", [0, 1, 2, 3, 4, 5])
def test_polygamma_values(n: int, dtype: torch.dtype) -> None:
    """Values against PyTorch's (trigamma by its own steps, so its large finite numbers at the negative
    integers too; float32 in float32 for trigamma, once rounded from float64 for n >= 2)."""
    x = torch.tensor(_POLYGAMMA_X, dtype=dtype)
    if n == 0:
        x = x[x != -3.0]  # (digamma near the poles: PyTorch's tan of the fraction loses digits there; ours does not)
    same(tga.polygamma(n, ours(x)), torch.polygamma(n, x), 1e-9 if dtype == torch.float64 else 2e-5)


@pytest.mark.parametrize("fn", ["digamma", "lgamma"])
def test_gamma_gradients_at_the_poles(fn: str) -> None:
    x = torch.tensor([-1.0, -501.0, -2.5, -0.3, 0.7, 3.0], dtype=torch.float64)
    # (digamma's gradient is PyTorch's trigamma, whose six steps and short series hold ~1e-9; ours the last digit)
    _grads(getattr(torch, fn), getattr(tga, fn), x, tol=1e-9)


@pytest.mark.parametrize("value", [0.0, -0.0, float("nan"), float("inf"), float("-inf"), 2.0])
def test_abs_gradient(value: float) -> None:
    _grads(torch.abs, tga.abs, torch.tensor([value, -1.5], dtype=torch.float64))


@pytest.mark.parametrize("eps", [None, 0.0, 0.1])
def test_logit_gradient_outside_the_unit_interval(eps: float | None) -> None:
    x = torch.tensor([-0.5, 0.0, 0.3, 1.0, 1.5, float("inf"), float("-inf"), float("nan")], dtype=torch.float64)
    _grads(lambda a: torch.logit(a, eps), lambda a: tga.logit(a, eps), x)


# -- floor division and remainder of floats: PyTorch's fmod-based rule ----------------------
_DIVIDENDS = [1e20, -1e20, 1e300, 5.0, -7.0, 7.0, 0.3, 1e-3, -0.0, 0.0, 6.0, -6.0, 250.0, 0.999, -1e-300, float("inf")]
_DIVISORS = [1e-300, -1e-300, 3.0, -3.0, 0.1, -7.0, 0.001, 0.0, -0.0, float("inf"), float("-inf"), 1.5, 7e-3]


def _pairs(dtype: torch.dtype) -> tuple[torch.Tensor, torch.Tensor]:
    a = torch.tensor([x for x in _DIVIDENDS for _ in _DIVISORS], dtype=dtype)
    b = torch.tensor([y for _ in _DIVIDENDS for y in _DIVISORS], dtype=dtype)
    keep = (a.abs() / b.abs()).isfinite() | (b == 0) | a.isinf()  # (an overflowing quotient: below)
    return a[keep], b[keep]


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
@pytest.mark.parametrize("fn", ["remainder", "floor_divide", "div_floor"])
def test_floor_division_of_floats(fn: str, dtype: torch.dtype) -> None:
    """Element by element (one at a time: PyTorch's scalar path; its vector blocks give NaN where the
    quotient overflows, by vector width), with signed zeros."""
    a, b = _pairs(dtype)
    for x, y in zip(a, b, strict=True):
        x, y = x.reshape(1), y.reshape(1)
        if fn == "div_floor":
            want, got = torch.div(x, y, rounding_mode="floor"), tga.div(ours(x), ours(y), rounding_mode="floor")
        else:
            want, got = getattr(torch, fn)(x, y), getattr(tga, fn)(ours(x), ours(y))
        same(got, want, 0.0)
        if not want.isnan().any():  # (a NaN's sign bit means nothing)
            assert np.signbit(got.detach().numpy()).tolist() == np.signbit(want.detach().numpy()).tolist(), (x, y)


def test_remainder_gradient() -> None:
    a, b = _pairs(torch.float64)
    fin = a.isfinite() & b.isfinite() & (b != 0)
    _grads(torch.remainder, tga.remainder, a[fin], b[fin])


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_hypot_scales_instead_of_overflowing(dtype: torch.dtype) -> None:
    big = torch.finfo(dtype).max / 2
    vals = [big, -big, 1e20, 3.0, 0.0, -0.0, 1e-30, torch.finfo(dtype).tiny, float("inf"), float("nan")]
    a = torch.tensor([x for x in vals for _ in vals], dtype=dtype)
    b = torch.tensor([y for _ in vals for y in vals], dtype=dtype)
    same(tga.hypot(ours(a), ours(b)), torch.hypot(a, b), 0.0 if dtype == torch.float64 else 1e-7)
    if dtype == torch.float64:
        fin = a.isfinite() & b.isfinite() & ((a != 0) | (b != 0))
        _grads(torch.hypot, tga.hypot, a[fin], b[fin])


@pytest.mark.parametrize("scale", [0.1, 1.0, 5.0, 30.0])
def test_matrix_exp_float32_as_accurate_as_pytorchs(scale: float) -> None:
    """Normwise: an entry far below the largest holds only the largest's float32 rounding (on both sides)."""
    g = torch.Generator().manual_seed(int(scale * 10))
    a = torch.randn(4, 5, 5, dtype=torch.float64, generator=g) * scale / 5
    exact = torch.linalg.matrix_exp(a)
    norm = exact.abs().amax((-2, -1), keepdim=True)
    theirs = (torch.linalg.matrix_exp(a.float()).double() - exact).abs() / norm
    got = torch.from_numpy(tga.linalg.matrix_exp(ours(a.float())).detach().numpy()).double()
    mine = (got - exact).abs() / norm
    assert float(mine.max()) <= 4 * float(theirs.max()) + 1e-6, (float(mine.max()), float(theirs.max()))


# -- factories ------------------------------------------------------------------------------
@pytest.mark.parametrize("bounds", ["numbers", "float32 tensors", "float64 tensors", "int tensors"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.int64, torch.int32])
def test_linspace_values(dtype: torch.dtype, bounds: str) -> None:
    """PyTorch's values to the last bit, over random bounds and step counts (0-d tensor bounds read as numbers)."""
    g = torch.Generator().manual_seed(11)
    for _ in range(40):
        s, e = (torch.rand(2, generator=g, dtype=torch.float64) * 100 - 50).tolist()
        steps = int(torch.randint(0, 40, (1,), generator=g))
        if bounds == "numbers":
            ts, te, os_, oe = s, e, s, e
        else:
            bdt = {"float32 tensors": torch.float32, "float64 tensors": torch.float64, "int tensors": torch.int64}[
                bounds
            ]
            ts, te = torch.tensor(s).to(bdt), torch.tensor(e).to(bdt)
            os_, oe = ours(ts), ours(te)
        same(
            tga.linspace(os_, oe, steps, dtype=getattr(tga, str(dtype)[6:])),
            torch.linspace(ts, te, steps, dtype=dtype),
            0.0,
        )


# -- embeddings: gradient scaling, sparse gradients ------------------------------------------
@pytest.mark.parametrize("padding_idx", [None, 1])
@pytest.mark.parametrize(("mode", "weights"), [("sum", False), ("sum", True), ("mean", False)])  # (weights: sum only)
@pytest.mark.parametrize(("ids", "offsets"), [([1, 1, 3, 1, 4, 3], [0, 2, 4]), ([5, 5, 5, 5, 0, 2], [0, 3]),
                                              ([4, 3, 1, 1, 1, 3], [0]), ([[1, 1, 3], [1, 4, 3]], None),
                                              ([2, 0, 2, 2, 5, 0, 1], [0, 1, 1, 6])])  # fmt: skip
def test_embedding_bag_scale_grad_by_freq(ids: list, offsets: list | None, mode: str, weights: bool,
                                          padding_idx: int | None) -> None:  # fmt: skip
    """PyTorch's CPU rule, its divisor per distinct id included (see ``bag._frequency_divisors``)."""
    g = torch.Generator().manual_seed(3)
    w = torch.randn(6, 3, dtype=torch.float64, generator=g)
    it = torch.tensor(ids)
    off = None if offsets is None else torch.tensor(offsets)
    psw = torch.rand(it.shape, dtype=torch.float64, generator=g) if weights else None
    kw = {"mode": mode, "scale_grad_by_freq": True, "padding_idx": padding_idx}

    def theirs(w_: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.embedding_bag(it, w_, off, per_sample_weights=psw, **kw)

    def mine(w_: tga.Tensor) -> tga.Tensor:
        return F.embedding_bag(ours(it), w_, None if off is None else ours(off),
                               per_sample_weights=None if psw is None else ours(psw), **kw)  # fmt: skip

    _grads(theirs, mine, w)


def test_embedding_bag_max_does_not_scale_by_frequency() -> None:
    with pytest.raises(ValueError, match="max mode does not support"):
        F.embedding_bag(tga.tensor([1, 2]), tga.ones(4, 2), tga.tensor([0]), mode="max", scale_grad_by_freq=True)


def test_embedding_bag_refuses_sparse_gradients_by_name() -> None:
    """PyTorch's gradient with sparse=True is a sparse_coo tensor; embedding_bag's is not built here (embedding's
    is: tests/tensor/test_sparse_coo_torch.py)."""
    w = torch.ones(4, 2, requires_grad=True)
    torch.nn.functional.embedding_bag(torch.tensor([1, 2]), w, torch.tensor([0]), sparse=True).sum().backward()
    assert w.grad.layout == torch.sparse_coo  # (what there is no counterpart of here)
    with pytest.raises(UnsupportedModeError, match="sparse_coo"):
        F.embedding_bag(tga.tensor([1, 2]), tga.ones(4, 2, requires_grad=True), tga.tensor([0]), sparse=True)


# -- grid_sample: every mode, padding and corner rule, 4-D and 5-D ---------------------------
@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
@pytest.mark.parametrize(("mode", "dims"), [("bilinear", 2), ("nearest", 2), ("bicubic", 2), ("bilinear", 3),
                                            ("nearest", 3)])  # fmt: skip
def test_grid_sample(mode: str, dims: int, padding_mode: str, align_corners: bool) -> None:
    g = torch.Generator().manual_seed(dims * 7 + len(mode))
    size = (2, 3, 4, 5) if dims == 2 else (2, 2, 3, 4, 5)
    out = (2, 3, 4, 2) if dims == 2 else (2, 2, 3, 2, 3)
    x = torch.randn(size, dtype=torch.float64, generator=g)
    grid = torch.rand(out, dtype=torch.float64, generator=g) * 2.6 - 1.3  # (some outside [-1, 1])
    kw = {"mode": mode, "padding_mode": padding_mode, "align_corners": align_corners}
    _grads(lambda a, b: torch.nn.functional.grid_sample(a, b, **kw), lambda a, b: F.grid_sample(a, b, **kw), x, grid)


def test_grid_sample_bicubic_is_4d_only() -> None:
    with pytest.raises(RuntimeError, match="bicubic interpolation only supports 4D input"):
        F.grid_sample(tga.ones(1, 1, 2, 2, 2), tga.zeros(1, 1, 1, 1, 3), mode="bicubic", align_corners=False)


@pytest.mark.parametrize(("kind", "tols", "hermitian"), _PINV_CASES)
def test_pinv_second_derivative(kind: str, tols: tuple, hermitian: bool) -> None:
    """Of every rank (the derivative at constant rank is differentiated again, as PyTorch's formula is)."""
    rtol, atol = tols
    g = torch.Generator().manual_seed(9)
    a = _pinv_input(kind, g)
    cot = torch.randn(a.shape[:-2] + a.shape[-2:][::-1], dtype=torch.float64, generator=g)
    v = torch.randn(a.shape, dtype=torch.float64, generator=g)
    (ta,) = torch.autograd.grad(torch.linalg.pinv(a, rtol=rtol, atol=atol, hermitian=hermitian), a, cot,
                                create_graph=True)  # fmt: skip
    (tt,) = torch.autograd.grad((ta * v).sum(), a)
    ao = ours(a, True)
    (oa,) = tga.autograd.grad(tga.linalg.pinv(ao, rtol=rtol, atol=atol, hermitian=hermitian), ao, ours(cot),
                              create_graph=True)  # fmt: skip
    (ot,) = tga.autograd.grad((oa * ours(v)).sum(), ao)
    same(ot, tt, 1e-7)
