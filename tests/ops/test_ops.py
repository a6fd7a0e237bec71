"""Every primitive op: values against NumPy, gradients against finite differences (float64),
on every array namespace.

The ops of the PyTorch face (sin, cos, rounding, cumsum/cumprod/prod, norm, index
ops, sorting, flip/roll/repeat, einsum, // and %): values against NumPy, gradients
against finite differences in float64, first order and with ``create_graph=True``, on
every CPU array namespace; composites also decomposed."""

from __future__ import annotations

import builtins
import importlib
import pkgutil

import numpy as np
import pytest
from helpers import close, examples, rand
from hypothesis import given, settings
from hypothesis import strategies as st

import tinygrad_attn as tga
from tinygrad_attn import Tensor

UNARY = {
    "exp": (lambda x: x.exp(), np.exp, None),
    "log": (lambda x: x.abs().log(), lambda a: np.log(np.abs(a)), 0.1),
    "sqrt": (lambda x: x.abs().sqrt(), lambda a: np.sqrt(np.abs(a)), 0.1),
    "tanh": (lambda x: x.tanh(), np.tanh, None),
    "sigmoid": (lambda x: x.sigmoid(), lambda a: 1 / (1 + np.exp(-a)), None),
    "relu": (lambda x: x.relu(), lambda a: np.maximum(a, 0), 0.05),
    "abs": (lambda x: x.abs(), np.abs, 0.05),
    "neg": (lambda x: -x, np.negative, None),
    "pow2": (lambda x: x**2, lambda a: a**2, None),
    "pow3": (lambda x: x**3.0, lambda a: a**3, None),
    "rpow": (lambda x: 2.0**x, lambda a: 2.0**a, None),
    "rsub": (lambda x: 1.0 - x, lambda a: 1.0 - a, None),
    "rdiv": (lambda x: 1.0 / x, lambda a: 1.0 / a, 0.2),
    "clip": (lambda x: x.clip(-0.5, 0.5), lambda a: np.clip(a, -0.5, 0.5), None),
}

BINARY = {
    "add": (lambda a, b: a + b, np.add),
    "sub": (lambda a, b: a - b, np.subtract),
    "mul": (lambda a, b: a * b, np.multiply),
    "div": (lambda a, b: a / b, np.divide),
    "maximum": (lambda a, b: a.maximum(b), np.maximum),
    "minimum": (lambda a, b: a.minimum(b), np.minimum),
    "pow": (lambda a, b: a.abs() ** b, lambda a, b: np.abs(a) ** b),
}


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_value_and_grad(name, device, rng):
    f, ref, low = UNARY[name]
    if name == "clip":  # keep points away from the kinks
        a = rng.uniform(-1, 1, (3, 4))
        a = np.where(np.abs(np.abs(a) - 0.5) < 0.05, a + 0.1, a)
        x = Tensor(a, device=device, requires_grad=True)
    else:
        x = rand(rng, 3, 4, device=device, low=low)
    close(f(x), ref(x.detach().numpy()), atol=1e-12)
    assert tga.gradcheck(f, x)


@pytest.mark.parametrize("name", sorted(BINARY))
@pytest.mark.parametrize("shapes", [((3, 4), (3, 4)), ((2, 3, 4), (4,)), ((3, 1), (1, 4)), ((), (2, 3))])
def test_binary_broadcast_value_and_grad(name, shapes, device, rng):
    f, ref = BINARY[name]
    a = rand(rng, *shapes[0], device=device, low=0.3)
    b = rand(rng, *shapes[1], device=device, low=0.3)
    close(f(a, b), ref(a.detach().numpy(), b.detach().numpy()), atol=1e-12)
    assert tga.gradcheck(f, a, b)


@pytest.mark.parametrize("name", ["add", "sub", "mul", "div"])
def test_python_scalars_on_either_side(name, device, rng):
    f, ref = BINARY[name]
    a = rand(rng, 2, 3, device=device, low=0.5)
    close(f(a, 2.5), ref(a.detach().numpy(), 2.5))
    close(f(2.5, a), ref(2.5, a.detach().numpy()))
    assert tga.gradcheck(lambda x: f(x, 2.5) + f(2.5, x), a)


def test_scalar_keeps_float32(device, rng):
    a = rand(rng, 2, 2, device=device, dtype=np.float32)
    for out in (a + 1.5, 2.0 * a, a / 3.0, 1.0 - a, a**2):
        assert out.dtype == np.float32


def test_maximum_ties_split_gradient(device):
    a = Tensor([1.0, 2.0], device=device, requires_grad=True, dtype=np.float64)
    b = Tensor([1.0, 3.0], device=device, requires_grad=True, dtype=np.float64)
    a.maximum(b).sum().backward()
    close(a.grad, [0.5, 0.0])
    close(b.grad, [0.5, 1.0])


@pytest.mark.parametrize("axis", [None, 0, 1, -1, (0, 2)])
@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("op", ["sum", "mean", "max", "min", "var", "logsumexp"])
def test_reductions(op, axis, keepdims, device, rng):
    x = rand(rng, 2, 3, 4, device=device)
    refs = {
        "sum": np.sum,
        "mean": np.mean,
        "max": np.max,
        "min": np.min,
        "var": np.var,
        "logsumexp": lambda a, axis, keepdims: np.log(np.sum(np.exp(a), axis=axis, keepdims=keepdims)),
    }
    f = lambda t: getattr(t, op)(axis=axis, keepdims=keepdims)
    close(f(x), refs[op](x.detach().numpy(), axis=axis, keepdims=keepdims), atol=1e-12)
    assert tga.gradcheck(f, x)


def test_max_ties_share_gradient(device):
    x = Tensor([[1.0, 3.0, 3.0]], device=device, requires_grad=True, dtype=np.float64)
    x.max().backward()
    close(x.grad, [[0.0, 0.5, 0.5]])


def test_argmax(device, rng):
    x = rand(rng, 3, 5, device=device)
    assert x.argmax(1).tolist() == np.argmax(x.detach().numpy(), 1).tolist()
    assert x.argmax().item() == np.argmax(x.detach().numpy())


@pytest.mark.parametrize(
    "sa,sb",
    [((3, 4), (4, 5)), ((4,), (4, 5)), ((3, 4), (4,)), ((4,), (4,)), ((2, 3, 4), (4, 5)), ((2, 1, 3, 4), (5, 4, 2))],
)
def test_matmul_like_numpy(sa, sb, device, rng):
    a = rand(rng, *sa, device=device)
    b = rand(rng, *sb, device=device)
    close(a @ b, np.matmul(a.detach().numpy(), b.detach().numpy()), atol=1e-12)
    assert tga.gradcheck(lambda x, y: x @ y, a, b)


def test_rmatmul_with_array(rng):
    """``array @ tensor`` is Python's TypeError, as PyTorch's (the array defers, the tensor refuses);
    ``tensor @ array`` is NumPy's product wrapped as a tensor."""
    a = rand(rng, 3, 4)
    m = rng.standard_normal((2, 3))
    with pytest.raises(TypeError):
        m @ a
    close(a.detach().T @ m.T, (m @ a.detach().numpy()).T)


@pytest.mark.parametrize(
    "f",
    [
        lambda x: x.reshape(4, 6),
        lambda x: x.reshape(-1),
        lambda x: x.permute(2, 0, 1),
        lambda x: x.transpose(0, 2),
        lambda x: x.mT,
        lambda x: x.unsqueeze(1).expand(2, 5, 3, 4),
        lambda x: x[:1].squeeze(0),
        lambda x: x.unsqueeze(-1),
        lambda x: x.flatten(1),
        lambda x: x[1, :, 2:],
        lambda x: x[..., ::2],
        lambda x: x[None, :, -1],
        lambda x: x[:, [0, 2, 2]],
        lambda x: x[[1, 0]][:, [0, 2], [3, 1]],
        lambda x: x[np.array([[0, 1], [1, 1]])],
        lambda x: x[x.detach() > 0],
        lambda x: tga.cat([x, x * 2], axis=1),
        lambda x: tga.stack([x, x + 1], axis=-1),
        lambda x: x.chunk(2, axis=2)[1],
    ],
)
def test_shape_ops_value_and_grad(f, device, rng):
    x = rand(rng, 2, 3, 4, device=device)
    host = Tensor(x.detach().numpy(), dtype=np.float64)
    close(f(x), f(host).detach().numpy())
    assert tga.gradcheck(f, x)


def test_indexing_matches_numpy(rng):
    a = rng.standard_normal((3, 4, 5))
    x = Tensor(a)
    keys = [
        (0,),
        (slice(None), 1),
        (Ellipsis, -1),
        (None, 1, None),
        ([0, 2],),
        (slice(None), [1, 3], [0, 4]),
        ([0, 2], slice(None), [1, 1]),
        (np.array([[0, 1], [2, 2]]),),
        (a > 0,),
        (-1, [0, -1]),
    ]
    for k in keys:
        np.testing.assert_allclose(x[k].detach().numpy(), a[k].astype(np.float32), err_msg=str(k))


def test_index_out_of_range_is_clear():
    x = Tensor.zeros(3, 4)
    with pytest.raises(IndexError, match="out of bounds"):
        x[[0, 3]]
    with pytest.raises(IndexError, match="out of bounds"):
        x[5]


def test_gather_duplicates_accumulate(device):
    x = Tensor([1.0, 2.0, 3.0], device=device, requires_grad=True, dtype=np.float64)
    x[[0, 0, 2, 0]].sum().backward()
    close(x.grad, [3.0, 0.0, 1.0])


def test_where_masked_fill_tril_triu(device, rng):
    x = rand(rng, 3, 3, device=device)
    cond = Tensor(rng.standard_normal((3, 3)) > 0, device=device)
    close(tga.where(cond, x, 0.0), np.where(cond.detach().numpy(), x.detach().numpy(), 0.0))
    close(x.masked_fill(cond, -1.0), np.where(cond.detach().numpy(), -1.0, x.detach().numpy()))
    close(tga.tril(x), np.tril(x.detach().numpy()))
    close(tga.triu(x, 1), np.triu(x.detach().numpy(), 1))
    y = rand(rng, 3, 3, device=device)
    assert tga.gradcheck(lambda a, b: tga.where(cond, a, b), x, y)
    assert tga.gradcheck(lambda a: tga.tril(a) + tga.triu(a, 1) * 2, x)


def test_comparisons_are_boolean_and_not_differentiable(device, rng):
    x = rand(rng, 2, 3, device=device)
    for out in (x < 0, x <= 0, x > 0, x >= 0, x == x, x != 0.5):
        assert out.dtype == np.bool_
        assert not out.requires_grad
    assert ((x > 0) == Tensor(x.detach().numpy() > 0, device=device)).all().item()


def test_erf_matches_math(device):
    import math

    a = np.concatenate([np.linspace(-7, 7, 281), [2.5, -2.5, 2.5 - 1e-12, 30.0, -1e8]])
    ref = [math.erf(v) for v in a]
    got64 = Tensor(a, dtype=np.float64, device=device).erf().detach().numpy()
    np.testing.assert_allclose(got64, ref, rtol=1e-13, atol=1e-300)  # float64: to its precision
    got32 = Tensor(a, dtype=np.float32, device=device).erf().detach().numpy()
    np.testing.assert_allclose(got32, ref, atol=3e-7)  # float32: below its resolution


def test_relu_keeps_nan_as_pytorch_does(device):
    got = Tensor(np.array([np.nan, -1.0, 0.0, 2.5, -np.inf, np.inf]), device=device).relu().detach().numpy()
    assert np.isnan(got[0]) and got[1:].tolist() == [0.0, 0.0, 2.5, 0.0, np.inf]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_erf_special_values(dtype, device):
    got = (
        Tensor(np.array([np.inf, -np.inf, np.nan, 0.0, -0.0, 1e-30]), dtype=dtype, device=device).erf().detach().numpy()
    )
    assert got[0] == 1.0 and got[1] == -1.0 and np.isnan(got[2])
    assert got[3] == 0.0 and not np.signbit(got[3]) and np.signbit(got[4])  # odd: erf(-0) = -0
    assert got[5] >= 0.0


def test_astype_gradient_flows(device, rng):
    x = rand(rng, 3, device=device)
    y = x.astype(np.float32)
    assert y.dtype == np.float32
    (y * 2).sum().backward()
    assert x.grad.dtype == np.float64
    close(x.grad, [2.0, 2.0, 2.0])


# -- no silent wrong answer: dtypes of Python numbers, gradients at edges, empty reductions --
@pytest.mark.parametrize(
    "make, expected, dtype",
    [
        (lambda x: tga.where(x > 0.5, 4.0, 2.0), [2.0, 4.0], np.float32),
        (lambda x: tga.where(x > 0.5, 4, 2), [2, 4], np.int64),
        (lambda x: tga.where(x > 0.5, True, False), [False, True], np.bool_),
        (lambda x: tga.where(x > 0.5, x, 1), [1.0, 0.75], np.float64),
        (lambda x: tga.where(x > 0.5, (x * 4).astype(np.int64), 0.5), [0.5, 3.0], np.float32),
        (lambda x: tga.where(x > 0.5, x > 0, 7), [7, 1], np.int64),
        (lambda x: (x > 0.5).masked_fill(x < 0.5, 3), [True, True], np.bool_),
        (lambda x: (x * 4).astype(np.int64).masked_fill(x > 0.5, 0.7), [1, 0], np.int64),
        (lambda x: x.masked_fill(x > 0.5, 3), [0.25, 3.0], np.float64),
        (lambda x: (x * 4).astype(np.int64).clamp_min(1.5), [1.5, 3.0], np.float32),
        (lambda x: (x * 4).astype(np.int64).clamp_max(1.5), [1.0, 1.5], np.float32),
        (lambda x: (x * 4).astype(np.int64).clip(1.5, 2.5), [1.5, 2.5], np.float32),
        (lambda x: (x * 4).astype(np.int64).clip(0, 2), [1, 2], np.int64),
        (lambda x: x.astype(np.float32).clip(0, 0.5), [0.25, 0.5], np.float32),
    ],
)
def test_python_numbers_take_the_tensors_dtype_as_in_pytorch(make, expected, dtype, device):
    out = make(Tensor(np.array([0.25, 0.75]), device=device))
    assert out.dtype == dtype
    close(out.astype(np.float64), np.asarray(expected, dtype=np.float64))


def test_clip_gradient_is_one_at_the_bounds(device):
    x = Tensor(np.array([-1.0, 0.0, 0.5, 1.0, 2.0]), device=device, requires_grad=True)
    (g,) = tga.grad(x.clip(0.0, 1.0).sum(), [x])
    close(g, [0.0, 1.0, 1.0, 1.0, 0.0])
    lo = Tensor(np.array(0.0), device=device, requires_grad=True)
    hi = Tensor(np.array(1.0), device=device)  # (PyTorch takes both bounds as tensors or both as numbers)
    (glo,) = tga.grad(x.clip(lo, hi).sum(), [lo])
    close(glo, 1.0)  # only x = -1 is below the bound (x = 0 sits on it: its gradient goes to x)


def test_pow_gradients_at_base_zero_are_not_nan(device):
    x = Tensor(np.array([0.0, 2.0]), device=device, requires_grad=True)
    (g,) = tga.grad((x**0.0).sum(), [x])
    close(g, [0.0, 0.0])
    y = Tensor(np.array([2.0, 0.0]), device=device, requires_grad=True)
    gx, gy = tga.grad((x**y).sum(), [x, y])
    close(gx, [0.0, 0.0])  # d/dx 0 ** 2 = 0; d/dx 2 ** 0 = 0
    close(gy, [0.0, np.log(2.0)])  # d/dy 0 ** y = 0 at y >= 0
    e = Tensor(np.array([0.0, 1.5, 3.0]), device=device, requires_grad=True)
    (ge,) = tga.grad((0.0**e).sum(), [e])
    close(ge, [0.0, 0.0, 0.0])
    assert tga.gradcheck(lambda a, b: a**b, Tensor(np.array([0.5, 2.0])), Tensor(np.array([0.0, 1.5])))
    assert tga.gradcheck(lambda b: 3.0**b, Tensor(np.array([-1.0, 0.0, 1.5])))


def test_rpow_with_zero_and_negative_base(device):
    t = Tensor(np.array([0.0, 1.0, 2.0, 3.0]), device=device)
    close(0.0**t, [1.0, 0.0, 0.0, 0.0])
    close((-2.0) ** t, [1.0, -2.0, 4.0, -8.0])
    e = Tensor(np.array([1.0, 2.0]), device=device, requires_grad=True)
    (g,) = tga.grad((2.0**e).sum(), [e])
    close(g, np.log(2.0) * np.array([2.0, 4.0]))


@np.errstate(divide="ignore", invalid="ignore")  # (NumPy warns of the infinities asked for)
def test_logsumexp_with_infinities(device):
    close(Tensor(np.array([np.inf, 0.0]), device=device).logsumexp(0), np.inf)  # (dim is required, as PyTorch's)
    close(Tensor(np.array([-np.inf, -np.inf]), device=device).logsumexp(0), -np.inf)
    close(Tensor(np.array([[-np.inf, 1.0], [2.0, np.inf]]), device=device).logsumexp(-1), [1.0, np.inf])
    close(Tensor(np.zeros((2, 0)), device=device).logsumexp(-1), [-np.inf, -np.inf])


@np.errstate(divide="ignore", invalid="ignore")
def test_empty_means_and_overcorrected_variances_are_not_finite(device):
    close(Tensor(np.zeros((0, 3)), device=device).mean(0), np.full(3, np.nan))
    close(Tensor(np.zeros((0,)), device=device).mean(), np.nan)
    close(Tensor(np.array([1.0, 2.0]), device=device).var(correction=2), np.inf)
    close(Tensor(np.array([1.0, 2.0, 4.0]), device=device).var(correction=5), np.inf)
    close(Tensor(np.array([1.0, 2.0]), device=device).var(correction=1), 0.5)


def test_argmin_is_its_own_reduction(device):
    lo = np.iinfo(np.int64).min
    x = Tensor(np.array([3, lo, 0]), device=device)
    assert x.argmin().item() == 1 and x.argmax().item() == 0
    b = Tensor(np.array([[True, False], [True, True]]), device=device)
    with pytest.raises(RuntimeError, match="bool"):  # (as PyTorch's: no argmin of bools)
        b.argmin(1)
    assert Tensor(np.array(2.0), device=device).argmin(0).item() == 0
    with pytest.raises(ValueError, match="argmin: .*empty"):
        Tensor(np.zeros((0, 2)), device=device).argmin(0)


@pytest.mark.parametrize("dtype", [np.bool_, np.int32, np.int64, np.float32])
def test_tril_triu_keep_the_dtype(dtype, device):
    x = Tensor(np.ones((3, 3), dtype), device=device)
    for f, ref in ((tga.tril, np.tril), (tga.triu, np.triu)):
        out = f(x)
        assert out.dtype == dtype
        np.testing.assert_array_equal(out.detach().numpy(), ref(np.ones((3, 3), dtype)))


@pytest.mark.parametrize("axis", [0, -1, (0,), ()])
def test_reductions_of_0d_tensors_take_axis_0_and_minus_1(axis, device):
    x = Tensor(np.array(2.0), device=device, requires_grad=True)
    for name in ("sum", "mean", "max", "min", "logsumexp"):
        out = getattr(x, name)(axis=axis)  # (NumPy's keyword: max gives the values alone)
        assert out.shape == () and out.item() == 2.0, name
        assert getattr(x, name)(axis, keepdims=True).shape == ()
    assert x.squeeze(0).shape == () and x.transpose(0, -1).shape == ()
    assert x.var(axis=axis).item() == 0.0
    (g,) = tga.grad(x.logsumexp(axis) + x.sum(axis), [x])
    close(g, 2.0)
    with pytest.raises(ValueError, match="sum: axis 1 is out of range for a 0-d tensor"):
        x.sum(1)


def test_pow_second_order_at_base_zero_matches_finite_differences(device):
    # d/db 0 ** b = 0 for b > 0: its derivative, recorded with create_graph, is 0 too.
    def first(b):
        return tga.grad((0.0**b).sum(), [b], create_graph=True)[0] + b * 0.0

    assert tga.gradcheck(first, Tensor(np.array([0.5, 1.0, 2.5]), device=device))


@pytest.mark.parametrize("batch", [(2,), (0,), (2, 3)])
def test_matmul_with_an_empty_inner_or_batch_axis(batch, device, rng):
    for k, n in ((0, 3), (2, 0)):
        a = rand(rng, *batch, 2, k, device=device)
        w = rand(rng, k, n, device=device)
        out = a @ w
        close(out, np.zeros(batch + (2, n)))
        ga, gw = tga.grad(out, [a, w], Tensor(np.ones(out.shape), device=device))
        assert ga.shape == a.shape and gw.shape == w.shape
        close(gw, np.zeros((k, n)))
        y = tga.functional.linear(a, Tensor(np.ones((n, k)), device=device))
        assert y.shape == batch + (2, n)


def test_python_bools_and_bool_tensors_compare_and_select_on_every_namespace(device):
    # (the array API combines Python bools with bool arrays only, and orders numbers only)
    x = Tensor(np.array([0.25, 1.5]), device=device)
    i = Tensor(np.array([0, 2]), device=device)
    b = Tensor(np.array([False, True]), device=device)
    assert (x > True).tolist() == [False, True] and (i == True).tolist() == [False, False]  # noqa: E712
    assert (b < True).tolist() == [True, False] and (b >= b).tolist() == [True, True]
    assert x.clamp_min(True).tolist() == [1.0, 1.5] and x.clip(False, True).tolist() == [0.25, 1.0]
    out = tga.where(b, i, True)
    assert out.dtype == np.int64 and out.tolist() == [1, 2]


@pytest.mark.parametrize("decomposed", [False, True])
def test_std_gradient_where_the_spread_is_zero_is_zero(decomposed, device):
    x = Tensor(np.array([[1.5, 1.5, 1.5], [1.0, 2.0, 4.0]]), device=device, requires_grad=True)
    ctx = tga.decompose() if decomposed else tga.enable_grad()
    with ctx:
        s = x.std(-1, correction=0)
        (g,) = tga.grad(s.sum(), [x])
    close(s, [0.0, np.std([1.0, 2.0, 4.0])])
    close(g[0], [0.0, 0.0, 0.0])  # (PyTorch's too; the slope of sqrt at 0 is infinite)
    assert np.isfinite(g.detach().numpy()).all()
    assert tga.gradcheck(lambda a: a.std(-1, correction=0), Tensor(np.array([[1.0, 2.0, 4.0]]), device=device))


# -- The ops of the PyTorch face: sin, cos, rounding, cumsum/cumprod/prod, norm, index ops, sorting, flip/roll/repeat, einsum, // and % ---

CPU = ["cpu", "array_api_strict", "array_api_strict:device1"]


def _idx(data, device):
    return tga.tensor(data, device=device)


# name -> (function of x (3, 4) float64 on ``device``, NumPy reference of the host array)
OPS = {
    "sin": (lambda x, d: x.sin(), np.sin),
    "cos": (lambda x, d: tga.cos(x), np.cos),
    "cumsum0": (lambda x, d: x.cumsum(0), lambda a: np.cumsum(a, 0)),
    "cumsum-1": (lambda x, d: tga.cumsum(x, dim=-1), lambda a: np.cumsum(a, -1)),
    "cumprod1": (lambda x, d: x.cumprod(1), lambda a: np.cumprod(a, 1)),
    "cumprod0": (lambda x, d: x.cumprod(dim=0), lambda a: np.cumprod(a, 0)),
    "prod": (lambda x, d: x.prod(), np.prod),
    "prod1": (lambda x, d: x.prod(1), lambda a: np.prod(a, 1)),
    "prod0_keepdim": (lambda x, d: x.prod(0, keepdim=True), lambda a: np.prod(a, 0, keepdims=True)),
    "norm": (lambda x, d: x.norm(), np.linalg.norm),
    "norm1_dim": (lambda x, d: x.norm(1, dim=1), lambda a: np.abs(a).sum(1)),
    "norm_inf": (lambda x, d: x.norm(float("inf"), dim=0), lambda a: np.abs(a).max(0)),
    "norm3": (lambda x, d: x.norm(3, dim=-1, keepdim=True), lambda a: (np.abs(a) ** 3).sum(-1, keepdims=True) ** (1 / 3)),
    "gather1": (lambda x, d: x.gather(1, _idx([[0, 3], [2, 2], [1, 0]], d)),
                lambda a: np.take_along_axis(a, np.array([[0, 3], [2, 2], [1, 0]]), 1)),
    "gather0": (lambda x, d: tga.gather(x, 0, _idx([[2, 0, 1, 1]], d)),
                lambda a: np.take_along_axis(a, np.array([[2, 0, 1, 1]]), 0)),
    "index_select": (lambda x, d: x.index_select(1, _idx([3, 0, 0], d)), lambda a: a[:, [3, 0, 0]]),
    "sort": (lambda x, d: x.sort(dim=1).values, lambda a: np.sort(a, 1)),
    "sort_desc0": (lambda x, d: x.sort(0, descending=True)[0], lambda a: -np.sort(-a, 0)),
    "topk": (lambda x, d: x.topk(2).values, lambda a: -np.sort(-a, -1)[:, :2]),
    "topk_small": (lambda x, d: tga.topk(x, 2, dim=0, largest=False).values, lambda a: np.sort(a, 0)[:2]),
    "max_dim": (lambda x, d: x.max(dim=1).values, lambda a: a.max(1)),
    "min_dim": (lambda x, d: tga.min(x, 0).values, lambda a: a.min(0)),
    "flip": (lambda x, d: x.flip(0, 1), lambda a: a[::-1, ::-1]),
    "flip1": (lambda x, d: tga.flip(x, [1]), lambda a: a[:, ::-1]),
    "roll": (lambda x, d: x.roll(1, 1), lambda a: np.roll(a, 1, 1)),
    "roll2": (lambda x, d: x.roll((-1, 5), (0, 1)), lambda a: np.roll(a, (-1, 5), (0, 1))),
    "roll_flat": (lambda x, d: x.roll(3), lambda a: np.roll(a, 3)),
    "repeat": (lambda x, d: x.repeat(2, 3), lambda a: np.tile(a, (2, 3))),
    "repeat_new": (lambda x, d: x.repeat(2, 1, 2), lambda a: np.tile(a, (2, 1, 2))),
    "unbind": (lambda x, d: x.unbind(1)[2], lambda a: a[:, 2]),
    "split_sizes": (lambda x, d: x.split([1, 3], dim=1)[1], lambda a: a[:, 1:]),
    "var_dim": (lambda x, d: x.var(dim=1), lambda a: a.var(1, ddof=1)),
    "std_dim": (lambda x, d: x.std(dim=0, keepdim=True), lambda a: a.std(0, ddof=1, keepdims=True)),
    "mod": (lambda x, d: x % 0.7, lambda a: np.mod(a, 0.7)),
    "rmod": (lambda x, d: 2.5 % (x.abs() + 1.0), lambda a: np.mod(2.5, np.abs(a) + 1.0)),
    "einsum_mm": (lambda x, d: tga.einsum("ij,kj->ik", x, x), lambda a: a @ a.T),
    "einsum_sum": (lambda x, d: tga.einsum("ij->j", x), lambda a: a.sum(0)),
    "einsum_outer": (lambda x, d: tga.einsum("i,j->ij", x[0], x[1]), lambda a: np.outer(a[0], a[1])),
    "einsum_three": (lambda x, d: tga.einsum("ij,jk,kl->il", x, x.T, x), lambda a: a @ a.T @ a),
    "einsum_implicit": (lambda x, d: tga.einsum("ij,ij", x, x), lambda a: (a * a).sum()),
    "einsum_batch": (lambda x, d: tga.einsum("bij,bkj->bik", x.reshape(2, 2, 3), x.reshape(2, 2, 3)),
                     lambda a: a.reshape(2, 2, 3) @ a.reshape(2, 2, 3).transpose(0, 2, 1)),
    "repeat_interleave": (lambda x, d: x.repeat_interleave(2, dim=1), lambda a: np.repeat(a, 2, 1)),
    "repeat_interleave_flat": (lambda x, d: tga.repeat_interleave(x, 3), lambda a: np.repeat(a, 3)),
    "outer": (lambda x, d: tga.outer(x[0], x[1]), lambda a: np.outer(a[0], a[1])),
    "log1p_expm1": (lambda x, d: x.abs().log1p() + x.expm1(), lambda a: np.log1p(np.abs(a)) + np.expm1(a)),
    "einsum_ellipsis": (lambda x, d: tga.einsum("...ij,...kj->...ik", x.reshape(2, 2, 3), x[:2, :3].reshape(1, 2, 3)),
                        lambda a: a.reshape(2, 2, 3) @ a[:2, :3].reshape(1, 2, 3).transpose(0, 2, 1)),
    "mm": (lambda x, d: x.mm(x.T), lambda a: a @ a.T),
    "bmm": (lambda x, d: tga.bmm(x.reshape(2, 2, 3), x.reshape(2, 3, 2)),
            lambda a: a.reshape(2, 2, 3) @ a.reshape(2, 3, 2)),
    "dot": (lambda x, d: x[0].dot(x[1]), lambda a: a[0] @ a[1]),
}  # fmt: skip


@pytest.mark.parametrize("name", OPS)
def test_values_match_numpy(name, device, rng):
    fn, ref = OPS[name]
    x = rand(rng, 3, 4, device=device, requires_grad=False)
    close(fn(x, device), ref(x.detach().numpy()), atol=1e-12, rtol=1e-10)


@pytest.mark.parametrize("name", OPS)
def test_gradients_match_finite_differences(name, device, rng):
    fn, _ = OPS[name]
    x = rand(rng, 3, 4, device=device, low=0.2)
    assert tga.gradcheck(lambda t: fn(t, device), x)


@pytest.mark.parametrize("name", OPS)
def test_second_order_matches_finite_differences(name, device, rng):
    fn, _ = OPS[name]
    x = rand(rng, 3, 4, device=device, low=0.2)
    w = Tensor(rng.standard_normal(fn(x, device).shape), device=device)

    def grad_of(t, create_graph=True):
        (g,) = tga.grad((fn(t, device) * w * fn(t, device)).sum(), t, create_graph=create_graph)
        return g

    # The recorded gradient must be the ordinary one (a wrong recorded formula would still
    # be self-consistent under finite differences), and differentiate correctly.
    close(grad_of(x), grad_of(x, create_graph=False).detach().numpy(), atol=1e-12, rtol=1e-10)
    assert tga.gradcheck(grad_of, x)


@pytest.mark.parametrize("decomposed", [False, True])
@pytest.mark.parametrize("fn", [lambda x: x.prod(1), lambda x: x.cumprod(1), lambda x: x.prod()])
def test_products_with_zeros_have_exact_gradients(fn, decomposed, device):
    # No division by the product: a zero (or two) in a row still gives every gradient.
    a = np.array([[0.0, 2.0, 3.0, -1.5], [1.5, 0.0, 0.0, 2.0], [0.5, -2.0, 1.25, 3.0]])
    x = Tensor(a, device=device, requires_grad=True)
    with tga.decompose() if decomposed else _nothing():
        assert tga.gradcheck(fn, x)
        (g,) = tga.grad(x.prod(1).sum(), x)
    expect = np.stack([[np.prod(np.delete(r, j)) for j in range(4)] for r in a])
    close(g, expect, atol=1e-12)


class _nothing:
    def __enter__(self):
        return None

    def __exit__(self, *exc):
        return False


@pytest.mark.parametrize("op", ["floor", "ceil", "round", "sign"])
def test_rounding_values_and_zero_gradient(op, device):
    a = np.array([-2.5, -1.5, -0.7, -0.0, 0.3, 0.5, 1.5, 2.5, 3.7])
    x = Tensor(a, device=device, requires_grad=True)
    y = getattr(x, op)()
    close(y, getattr(np, op)(a))
    y.sum().backward()
    close(x.grad, np.zeros_like(a))  # zeros, as PyTorch gives (not None)


def test_round_decimals_and_floor_division(device):
    x = Tensor(np.array([1.2345, -7.5, 7.5]), device=device)
    close(x.round(decimals=2), np.round(np.array([1.2345, -7.5, 7.5]), 2))
    close(x // 2, np.floor_divide([1.2345, -7.5, 7.5], 2))
    close(x.div(2, rounding_mode="trunc"), np.trunc(np.array([1.2345, -7.5, 7.5]) / 2))
    close(x.div(2, rounding_mode="floor"), np.floor(np.array([1.2345, -7.5, 7.5]) / 2))
    close(10.0 // (x.abs() + 1), np.floor_divide(10.0, np.abs([1.2345, -7.5, 7.5]) + 1))


def test_integer_floor_division_and_remainder_stay_integers(device):
    a = tga.tensor([-7, -3, 0, 5, 9], device=device)
    assert (a // 2).dtype == np.int64 and (a % 3).dtype == np.int64
    np.testing.assert_array_equal((a // 2).detach().numpy(), np.array([-7, -3, 0, 5, 9]) // 2)
    np.testing.assert_array_equal((a % 3).detach().numpy(), np.array([-7, -3, 0, 5, 9]) % 3)
    np.testing.assert_array_equal((7 % a[3:]).detach().numpy(), 7 % np.array([5, 9]))


def test_remainder_gradient_in_the_divisor(device, rng):
    a = rand(rng, 5, device=device, low=0.3)
    b = Tensor(np.array([0.7, -0.9, 1.3, 0.45, -2.0]), device=device, requires_grad=True)
    assert tga.gradcheck(lambda p, q: p % q, a, b)


def test_scatter_values_and_gradients(device, rng):
    x = rand(rng, 3, 4, device=device)
    src = rand(rng, 2, 4, device=device)
    idx = _idx([[0, 1, 2, 0], [2, 0, 1, 1]], device)
    ref = x.detach().numpy().copy()
    np.put_along_axis(ref, idx.detach().numpy(), src.detach().numpy(), 0)
    close(x.scatter(0, idx, src), ref)
    assert tga.gradcheck(lambda a, b: a.scatter(0, idx, b), x, src)
    ref = x.detach().numpy().copy()
    np.put_along_axis(ref, idx.detach().numpy(), 9.0, 0)
    close(x.scatter(0, idx, 9.0), ref)
    close(x.scatter(0, idx, value=9.0), ref)


def test_scatter_add_accumulates_repeats(device, rng):
    x = rand(rng, 3, 4, device=device)
    src = rand(rng, 3, 4, device=device)
    idx = _idx([[0, 0, 1], [2, 2, 2], [1, 1, 1]], device)  # smaller than src: its top-left part is used
    ref = x.detach().numpy().copy()
    np.add.at(ref, (np.arange(3)[:, None], idx.detach().numpy()), src.detach().numpy()[:, :3])
    close(x.scatter_add(1, idx, src), ref)
    assert tga.gradcheck(lambda a, b: a.scatter_add(1, idx, b), x, src)


def test_scatter_add_of_an_infinity_leaves_the_other_slots_alone(device):
    # (the portable form once multiplied a one-hot matrix by the values: 0 * inf = NaN elsewhere)
    x = Tensor(np.array([np.inf, 1.0]), device=device)
    src = Tensor(np.array([np.inf]), device=device)
    idx = _idx([0], device)
    assert x.scatter_add(0, idx, src).tolist() == [np.inf, 1.0]
    assert x.index_add(0, idx, src).tolist() == [np.inf, 1.0]


def test_scatter_with_a_repeated_index_keeps_the_last_write(device, rng):
    x = rand(rng, 3, 4, device=device)
    src = rand(rng, 3, 4, device=device)
    idx = _idx([[0, 2, 0, 1], [1, 2, 0, 1], [1, 2, 3, 3]], device)  # repeats along dim 1 in every row
    ref = x.detach().numpy().copy()
    for i in range(3):
        for j in range(4):  # in order: a later write replaces an earlier one
            ref[i, idx.detach().numpy()[i, j]] = src.detach().numpy()[i, j]
    close(x.scatter(1, idx, src), ref)
    assert tga.gradcheck(lambda a, b: a.scatter(1, idx, b), x, src)


@pytest.mark.parametrize("reduce", ["add", "multiply"])
def test_scatter_reduce_with_a_number(reduce, device, rng):
    x = rand(rng, 3, 4, device=device)
    idx = _idx([[0, 0, 2, 2], [0, 2, 2, 2]], device)  # (0,0), (2,2), (2,3) named twice; row 1 never
    ref = x.detach().numpy().copy()
    for i in range(2):
        for j in range(4):
            r = idx.detach().numpy()[i, j]
            ref[r, j] = ref[r, j] + 1.5 if reduce == "add" else ref[r, j] * 1.5
    close(x.scatter(0, idx, 1.5, reduce=reduce), ref)
    assert tga.gradcheck(lambda a: a.scatter(0, idx, 1.5, reduce=reduce), x)
    out = x.scatter(0, idx, float("inf"), reduce=reduce)
    np.testing.assert_array_equal(
        out.detach().numpy()[1], x.detach().numpy()[1]
    )  # an inf written elsewhere leaves row 1 alone
    if reduce == "add":  # (x * inf has an inf derivative, nan where the incoming gradient is 0, as in PyTorch)
        (g,) = tga.grad(out.sum(), x)
        np.testing.assert_array_equal(g.detach().numpy(), 1.0)


def test_index_errors_name_the_op_and_the_bad_index(device):
    x = tga.zeros(2, 3, device=device)
    with pytest.raises(IndexError, match=r"gather: index 3 is out of range for dimension 1 of size 3"):
        x.gather(1, _idx([[0, 3]], device))
    with pytest.raises(ValueError, match="gather: the index needs as many dimensions"):
        x.gather(1, _idx([0, 1], device))
    with pytest.raises(TypeError, match=r"gather: the index must be an integer tensor.*\.long\(\)"):
        x.gather(1, Tensor([[0.0]], device=device))
    with pytest.raises(IndexError, match="index_select: index -1 is out of range"):
        x.index_select(0, _idx([-1], device))
    with pytest.raises(ValueError, match=r"topk: k=4 is out of range for dimension 1 of size 3"):
        x.topk(4)


def test_sort_indices_and_ties_stay_in_order(device):
    x = tga.tensor([[3.0, 1.0, 3.0, 2.0]], device=device)
    v, i = x.sort(dim=-1)
    np.testing.assert_array_equal(i.detach().numpy(), [[1, 3, 0, 2]])
    v, i = x.sort(descending=True)
    np.testing.assert_array_equal(v.detach().numpy(), [[3, 3, 2, 1]])
    np.testing.assert_array_equal(i.detach().numpy(), [[0, 2, 3, 1]])
    np.testing.assert_array_equal(x.argsort(descending=True).detach().numpy(), [[0, 2, 3, 1]])
    assert i.dtype == np.int64


@pytest.mark.parametrize("descending", [False, True])
def test_sort_is_stable_on_long_rows_with_many_ties(descending, device):
    # (stable=False gives PyTorch's CPU order of ties on a CPU: tests/ops/test_tie_order_torch.py)
    a = np.random.default_rng(3).integers(0, 3, (2, 200)).astype(np.float64)
    idx = Tensor(a, device=device).argsort(dim=1, descending=descending, stable=True).detach().numpy()
    expect = np.argsort(-a if descending else a, axis=1, kind="stable")
    np.testing.assert_array_equal(idx, expect)


def test_cumsum_of_integers_and_0d(device):
    a = tga.tensor([[1, 2], [3, 4]], device=device)
    np.testing.assert_array_equal(a.cumsum(0).detach().numpy(), [[1, 2], [4, 6]])
    s = tga.tensor(2.5, device=device)
    assert s.cumsum(0).item() == 2.5


def test_cumsum_is_one_primitive_in_the_graph(device):
    # A primitive, not a chain of adds: one node whatever the length.
    x = Tensor(np.ones(1000), device=device, requires_grad=True)
    y = x.cumsum(0)
    assert y.grad_fn.op_name == "cumsum"
    y.sum().backward()
    close(x.grad, np.arange(1000, 0, -1.0))


@pytest.mark.parametrize("decomposed", [False, True])
def test_composites_run_decomposed_the_same(decomposed, device, rng):
    x = rand(rng, 3, 4, device=device, low=0.2)
    with tga.decompose() if decomposed else _nothing():
        assert tga.gradcheck(lambda t: t.norm(dim=1) + t.prod(1) + t.cumprod(1).sum(1), x)


def test_einsum_errors(device):
    a = tga.zeros(2, 3, device=device)
    with pytest.raises(ValueError, match="einsum: subscripts 'ijk' name 3 axes, the operand has shape"):
        tga.einsum("ijk->i", a)
    with pytest.raises(ValueError, match="einsum: subscript 'j' has size 3 in one operand and 2"):
        tga.einsum("ij,jk->ik", a, a)
    with pytest.raises(ValueError, match="einsum: subscript 'i' repeats over axes of sizes 2 and 3"):
        tga.einsum("ii->i", tga.zeros(2, 3, device=device))  # (a diagonal needs equal sides)
    with pytest.raises(ValueError, match="name more axes than the operand's shape"):
        tga.einsum("...ijk->i", a)


def test_matmul_shape_error_names_both_shapes_and_the_dimension(device):
    a, b = tga.zeros(2, 3, device=device), tga.zeros(4, 5, device=device)
    with pytest.raises(ValueError) as e:
        a @ b
    msg = str(e.value)
    assert msg.startswith("matmul: shapes (2, 3) and (4, 5) cannot be multiplied")
    assert "last dimension has size 3" in msg and "second-to-last dimension has size 4" in msg
    assert "(n?,k),(k,m?)" not in msg and "gufunc" not in msg and "mismatch in its core dimension" not in msg
    with pytest.raises(ValueError, match=r"batch dimensions \(2,\) and \(3,\) do not broadcast"):
        tga.zeros(2, 2, 3, device=device) @ tga.zeros(3, 3, 4, device=device)
    with pytest.raises(ValueError, match=r"shapes \(3,\) and \(4,\) cannot be multiplied.*only dimension has size 4"):
        tga.zeros(3, device=device) @ tga.zeros(4, device=device)
    with pytest.raises(ValueError, match=r"shapes \(5, 2, 3\) and \(4, 5\) cannot be multiplied"):
        tga.zeros(5, 2, 3, device=device) @ tga.zeros(4, 5, device=device)


def test_bool_name_leaves_the_package_modules_alone():
    # ``tga.bool`` (and ``int``, ``float``) are dtypes at the top level only: every other
    # module of the package still sees Python's builtins.
    assert tga.bool == np.bool_ and tga.int == np.int32 and tga.float == np.float32 and tga.long == np.int64
    for info in pkgutil.walk_packages(tga.__path__, "tinygrad_attn."):
        if info.name.endswith(("cuda_kernels", "__main__")) or ".viz" in info.name:
            continue
        mod = importlib.import_module(info.name)
        if mod is tga.dtypes:
            continue
        for name in ("bool", "int", "float", "max", "min", "sum", "abs", "round", "all", "any"):
            if info.name in (
                "tinygrad_attn.tensors.tensor_functions",
                "tinygrad_attn.tensors.reduce.tensor_reduce",
                "tinygrad_attn.tensors.return_types",  # (torch.return_types.max, .min: named result classes)
            ) and name not in ("bool", "int", "float"):
                continue  # the modules that define PyTorch's max, sum, ... (and use builtins.*)
            assert getattr(mod, name, getattr(builtins, name)) is getattr(builtins, name), (info.name, name)
    assert isinstance(True, builtins.bool) and Tensor([1.0]).bool().dtype == np.bool_


def test_finite_tests_on_every_namespace(device):
    x = Tensor(np.array([1.0, np.nan, np.inf, -np.inf]), device=device)
    np.testing.assert_array_equal(x.isnan().detach().numpy(), [False, True, False, False])
    np.testing.assert_array_equal(tga.isinf(x).detach().numpy(), [False, False, True, True])
    np.testing.assert_array_equal(tga.isfinite(x).detach().numpy(), [True, False, False, False])


_shapes = st.lists(st.integers(1, 4), min_size=1, max_size=4).map(tuple)


@settings(max_examples=examples(40), deadline=None)
@given(shape=_shapes, data=st.data())
def test_shape_ops_agree_with_numpy_on_any_shape(shape, data):
    a = np.arange(np.prod(shape), dtype=np.float64).reshape(shape)
    x = Tensor(a)
    nd = len(shape)
    d = data.draw(st.integers(-nd, nd - 1), label="dim")
    reps = data.draw(st.lists(st.integers(1, 3), min_size=nd, max_size=nd + 1), label="repeats")
    shift = data.draw(st.integers(-5, 5), label="shift")
    np.testing.assert_array_equal(x.flip(d).detach().numpy(), np.flip(a, d))
    np.testing.assert_array_equal(x.roll(shift, d).detach().numpy(), np.roll(a, shift, d))
    np.testing.assert_array_equal(x.repeat(*reps).detach().numpy(), np.tile(a, reps))
    np.testing.assert_array_equal(x.cumsum(d).detach().numpy(), np.cumsum(a, d))
    np.testing.assert_array_equal(x.prod(d).detach().numpy(), np.prod(a, d))
    np.testing.assert_array_equal(x.sort(d, descending=True).values.detach().numpy(), -np.sort(-a, d))
    v, i = x.max(dim=d, keepdim=True)
    np.testing.assert_array_equal(v.detach().numpy(), a.max(d, keepdims=True))
    np.testing.assert_array_equal(i.detach().numpy(), a.argmax(d, keepdims=True))
    pieces = x.split([1, shape[d] - 1], d) if shape[d] > 1 else x.split(1, d)
    np.testing.assert_array_equal(tga.cat(pieces, dim=d).detach().numpy(), a)


@pytest.mark.parametrize("name", ["sin", "cumsum0", "cumprod1", "prod1", "gather1", "sort", "topk", "max_dim", "roll2",
                                  "repeat", "einsum_three", "mod", "scatter", "index_by_argsort", "index_select"])  # fmt: skip
def test_traced_programs_replay_the_new_ops(name, rng):
    # tga.jit.trace records them like any op: a replay on new inputs gives eager's values and gradients.
    if name == "scatter":

        def fn(t, d):
            return t.scatter(1, _idx([[3, 0], [1, 2], [0, 1]], d), t[:, :2] * 2.0)
    elif name == "index_by_argsort":

        def fn(t, d):
            return t.index_select(1, t[0].argsort()) + t.gather(1, t.argsort(dim=1, descending=True))
    else:
        fn = OPS[name][0]

    def loss(t):
        return (fn(t, "cpu") * fn(t, "cpu")).sum()

    prog = tga.jit.trace(loss, rand(rng, 3, 4))
    x = rand(rng, 3, 4)
    out = prog(x)
    got = x.grad.detach().numpy()
    x.grad = None
    ref = loss(x)
    ref.backward()
    close(out, ref.detach().numpy(), atol=1e-12)
    close(got, x.grad.detach().numpy(), atol=1e-12)
