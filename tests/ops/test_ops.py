"""Every primitive op: values against NumPy, gradients against finite differences (float64),
on every array namespace."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import close, rand

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
    close(f(x), ref(x.numpy()), atol=1e-12)
    assert tga.gradcheck(f, x)


@pytest.mark.parametrize("name", sorted(BINARY))
@pytest.mark.parametrize("shapes", [((3, 4), (3, 4)), ((2, 3, 4), (4,)), ((3, 1), (1, 4)), ((), (2, 3))])
def test_binary_broadcast_value_and_grad(name, shapes, device, rng):
    f, ref = BINARY[name]
    a = rand(rng, *shapes[0], device=device, low=0.3)
    b = rand(rng, *shapes[1], device=device, low=0.3)
    close(f(a, b), ref(a.numpy(), b.numpy()), atol=1e-12)
    assert tga.gradcheck(f, a, b)


@pytest.mark.parametrize("name", ["add", "sub", "mul", "div"])
def test_python_scalars_on_either_side(name, device, rng):
    f, ref = BINARY[name]
    a = rand(rng, 2, 3, device=device, low=0.5)
    close(f(a, 2.5), ref(a.numpy(), 2.5))
    close(f(2.5, a), ref(2.5, a.numpy()))
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
    close(f(x), refs[op](x.numpy(), axis=axis, keepdims=keepdims), atol=1e-12)
    assert tga.gradcheck(f, x)


def test_max_ties_share_gradient(device):
    x = Tensor([[1.0, 3.0, 3.0]], device=device, requires_grad=True, dtype=np.float64)
    x.max().backward()
    close(x.grad, [[0.0, 0.5, 0.5]])


def test_argmax(device, rng):
    x = rand(rng, 3, 5, device=device)
    assert x.argmax(1).tolist() == np.argmax(x.numpy(), 1).tolist()
    assert x.argmax().item() == np.argmax(x.numpy())


@pytest.mark.parametrize(
    "sa,sb",
    [((3, 4), (4, 5)), ((4,), (4, 5)), ((3, 4), (4,)), ((4,), (4,)), ((2, 3, 4), (4, 5)), ((2, 1, 3, 4), (5, 4, 2))],
)
def test_matmul_like_numpy(sa, sb, device, rng):
    a = rand(rng, *sa, device=device)
    b = rand(rng, *sb, device=device)
    close(a @ b, np.matmul(a.numpy(), b.numpy()), atol=1e-12)
    assert tga.gradcheck(lambda x, y: x @ y, a, b)


def test_rmatmul_with_array(rng):
    a = rand(rng, 3, 4)
    m = rng.standard_normal((2, 3))
    close(m @ a, m @ a.numpy())


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
    host = Tensor(x.numpy(), dtype=np.float64)
    close(f(x), f(host).numpy())
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
        np.testing.assert_allclose(x[k].numpy(), a[k].astype(np.float32), err_msg=str(k))


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
    close(tga.where(cond, x, 0.0), np.where(cond.numpy(), x.numpy(), 0.0))
    close(x.masked_fill(cond, -1.0), np.where(cond.numpy(), -1.0, x.numpy()))
    close(tga.tril(x), np.tril(x.numpy()))
    close(tga.triu(x, 1), np.triu(x.numpy(), 1))
    y = rand(rng, 3, 3, device=device)
    assert tga.gradcheck(lambda a, b: tga.where(cond, a, b), x, y)
    assert tga.gradcheck(lambda a: tga.tril(a) + tga.triu(a, 1) * 2, x)


def test_comparisons_are_boolean_and_not_differentiable(device, rng):
    x = rand(rng, 2, 3, device=device)
    for out in (x < 0, x <= 0, x > 0, x >= 0, x == x, x != 0.5):
        assert out.dtype == np.bool_
        assert not out.requires_grad
    assert ((x > 0) == Tensor(x.numpy() > 0, device=device)).all().item()


def test_erf_matches_math(device):
    import math

    a = np.concatenate([np.linspace(-7, 7, 281), [2.5, -2.5, 2.5 - 1e-12, 30.0, -1e8]])
    ref = [math.erf(v) for v in a]
    got64 = Tensor(a, dtype=np.float64, device=device).erf().numpy()
    np.testing.assert_allclose(got64, ref, rtol=1e-13, atol=1e-300)  # float64: to its precision
    got32 = Tensor(a, dtype=np.float32, device=device).erf().numpy()
    np.testing.assert_allclose(got32, ref, atol=3e-7)  # float32: below its resolution


def test_relu_keeps_nan_as_pytorch_does(device):
    got = Tensor(np.array([np.nan, -1.0, 0.0, 2.5, -np.inf, np.inf]), device=device).relu().numpy()
    assert np.isnan(got[0]) and got[1:].tolist() == [0.0, 0.0, 2.5, 0.0, np.inf]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_erf_special_values(dtype, device):
    got = Tensor(np.array([np.inf, -np.inf, np.nan, 0.0, -0.0, 1e-30]), dtype=dtype, device=device).erf().numpy()
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
        (lambda x: (x * 4).astype(np.int64).maximum(1.5), [1.5, 3.0], np.float32),
        (lambda x: (x * 4).astype(np.int64).minimum(1.5), [1.0, 1.5], np.float32),
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
    (glo,) = tga.grad(x.clip(lo, 1.0).sum(), [lo])
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
    close(Tensor(np.array([np.inf, 0.0]), device=device).logsumexp(), np.inf)
    close(Tensor(np.array([-np.inf, -np.inf]), device=device).logsumexp(), -np.inf)
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
    assert b.argmin(1).tolist() == [1, 0] and b.argmin().item() == 1
    assert Tensor(np.array(2.0), device=device).argmin(0).item() == 0
    with pytest.raises(ValueError, match="argmin: .*empty"):
        Tensor(np.zeros((0, 2)), device=device).argmin(0)


@pytest.mark.parametrize("dtype", [np.bool_, np.int32, np.int64, np.float32])
def test_tril_triu_keep_the_dtype(dtype, device):
    x = Tensor(np.ones((3, 3), dtype), device=device)
    for f, ref in ((tga.tril, np.tril), (tga.triu, np.triu)):
        out = f(x)
        assert out.dtype == dtype
        np.testing.assert_array_equal(out.numpy(), ref(np.ones((3, 3), dtype)))


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
    assert x.maximum(True).tolist() == [1.0, 1.5] and x.clip(False, True).tolist() == [0.25, 1.0]
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
    assert np.isfinite(g.numpy()).all()
    assert tga.gradcheck(lambda a: a.std(-1, correction=0), Tensor(np.array([[1.0, 2.0, 4.0]]), device=device))
