"""The ops of the PyTorch face (sin, cos, rounding, cumsum/cumprod/prod, norm, index
ops, sorting, flip/roll/repeat, einsum, // and %): values against NumPy, gradients
against finite differences in float64, first order and with ``create_graph=True``, on
every CPU array namespace; composites also decomposed."""

from __future__ import annotations

import builtins
import importlib
import pkgutil

import numpy as np
import pytest
from helpers import close, rand
from hypothesis import given, settings
from hypothesis import strategies as st

import tinygrad_attn as tga
from tinygrad_attn import Tensor

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
    close(fn(x, device), ref(x.numpy()), atol=1e-12, rtol=1e-10)


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
    close(grad_of(x), grad_of(x, create_graph=False).numpy(), atol=1e-12, rtol=1e-10)
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
    np.testing.assert_array_equal((a // 2).numpy(), np.array([-7, -3, 0, 5, 9]) // 2)
    np.testing.assert_array_equal((a % 3).numpy(), np.array([-7, -3, 0, 5, 9]) % 3)
    np.testing.assert_array_equal((7 % a[3:]).numpy(), 7 % np.array([5, 9]))


def test_remainder_gradient_in_the_divisor(device, rng):
    a = rand(rng, 5, device=device, low=0.3)
    b = Tensor(np.array([0.7, -0.9, 1.3, 0.45, -2.0]), device=device, requires_grad=True)
    assert tga.gradcheck(lambda p, q: p % q, a, b)


def test_scatter_values_and_gradients(device, rng):
    x = rand(rng, 3, 4, device=device)
    src = rand(rng, 2, 4, device=device)
    idx = _idx([[0, 1, 2, 0], [2, 0, 1, 1]], device)
    ref = x.numpy().copy()
    np.put_along_axis(ref, idx.numpy(), src.numpy(), 0)
    close(x.scatter(0, idx, src), ref)
    assert tga.gradcheck(lambda a, b: a.scatter(0, idx, b), x, src)
    ref = x.numpy().copy()
    np.put_along_axis(ref, idx.numpy(), 9.0, 0)
    close(x.scatter(0, idx, 9.0), ref)
    close(x.scatter(0, idx, value=9.0), ref)


def test_scatter_add_accumulates_repeats(device, rng):
    x = rand(rng, 3, 4, device=device)
    src = rand(rng, 3, 4, device=device)
    idx = _idx([[0, 0, 1], [2, 2, 2], [1, 1, 1]], device)  # smaller than src: its top-left part is used
    ref = x.numpy().copy()
    np.add.at(ref, (np.arange(3)[:, None], idx.numpy()), src.numpy()[:, :3])
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
    ref = x.numpy().copy()
    for i in range(3):
        for j in range(4):  # in order: a later write replaces an earlier one
            ref[i, idx.numpy()[i, j]] = src.numpy()[i, j]
    close(x.scatter(1, idx, src), ref)
    assert tga.gradcheck(lambda a, b: a.scatter(1, idx, b), x, src)


@pytest.mark.parametrize("reduce", ["add", "multiply"])
def test_scatter_reduce_with_a_number(reduce, device, rng):
    x = rand(rng, 3, 4, device=device)
    idx = _idx([[0, 0, 2, 2], [0, 2, 2, 2]], device)  # (0,0), (2,2), (2,3) named twice; row 1 never
    ref = x.numpy().copy()
    for i in range(2):
        for j in range(4):
            r = idx.numpy()[i, j]
            ref[r, j] = ref[r, j] + 1.5 if reduce == "add" else ref[r, j] * 1.5
    close(x.scatter(0, idx, 1.5, reduce=reduce), ref)
    assert tga.gradcheck(lambda a: a.scatter(0, idx, 1.5, reduce=reduce), x)
    out = x.scatter(0, idx, float("inf"), reduce=reduce)
    np.testing.assert_array_equal(out.numpy()[1], x.numpy()[1])  # an inf written elsewhere leaves row 1 alone
    if reduce == "add":  # (x * inf has an inf derivative, nan where the incoming gradient is 0, as in PyTorch)
        (g,) = tga.grad(out.sum(), x)
        np.testing.assert_array_equal(g.numpy(), 1.0)


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
    np.testing.assert_array_equal(i.numpy(), [[1, 3, 0, 2]])
    v, i = x.sort(descending=True)
    np.testing.assert_array_equal(v.numpy(), [[3, 3, 2, 1]])
    np.testing.assert_array_equal(i.numpy(), [[0, 2, 3, 1]])
    np.testing.assert_array_equal(x.argsort(descending=True).numpy(), [[0, 2, 3, 1]])
    assert i.dtype == np.int64


@pytest.mark.parametrize("descending", [False, True])
def test_sort_is_stable_on_long_rows_with_many_ties(descending, device):
    a = np.random.default_rng(3).integers(0, 3, (2, 200)).astype(np.float64)
    idx = Tensor(a, device=device).argsort(dim=1, descending=descending).numpy()
    expect = np.argsort(-a if descending else a, axis=1, kind="stable")
    np.testing.assert_array_equal(idx, expect)


def test_cumsum_of_integers_and_0d(device):
    a = tga.tensor([[1, 2], [3, 4]], device=device)
    np.testing.assert_array_equal(a.cumsum(0).numpy(), [[1, 2], [4, 6]])
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
            if info.name in ("tinygrad_attn.tensor_functions", "tinygrad_attn.tensor_reduce") and name not in ("bool", "int", "float"):
                continue  # the modules that define PyTorch's max, sum, ... (and use builtins.*)
            assert getattr(mod, name, getattr(builtins, name)) is getattr(builtins, name), (info.name, name)
    assert isinstance(True, builtins.bool) and Tensor([1.0]).bool().dtype == np.bool_


def test_finite_tests_on_every_namespace(device):
    x = Tensor(np.array([1.0, np.nan, np.inf, -np.inf]), device=device)
    np.testing.assert_array_equal(x.isnan().numpy(), [False, True, False, False])
    np.testing.assert_array_equal(tga.isinf(x).numpy(), [False, False, True, True])
    np.testing.assert_array_equal(tga.isfinite(x).numpy(), [True, False, False, False])


_shapes = st.lists(st.integers(1, 4), min_size=1, max_size=4).map(tuple)


@settings(max_examples=40, deadline=None)
@given(shape=_shapes, data=st.data())
def test_shape_ops_agree_with_numpy_on_any_shape(shape, data):
    a = np.arange(np.prod(shape), dtype=np.float64).reshape(shape)
    x = Tensor(a)
    nd = len(shape)
    d = data.draw(st.integers(-nd, nd - 1), label="dim")
    reps = data.draw(st.lists(st.integers(1, 3), min_size=nd, max_size=nd + 1), label="repeats")
    shift = data.draw(st.integers(-5, 5), label="shift")
    np.testing.assert_array_equal(x.flip(d).numpy(), np.flip(a, d))
    np.testing.assert_array_equal(x.roll(shift, d).numpy(), np.roll(a, shift, d))
    np.testing.assert_array_equal(x.repeat(*reps).numpy(), np.tile(a, reps))
    np.testing.assert_array_equal(x.cumsum(d).numpy(), np.cumsum(a, d))
    np.testing.assert_array_equal(x.prod(d).numpy(), np.prod(a, d))
    np.testing.assert_array_equal(x.sort(d, descending=True).values.numpy(), -np.sort(-a, d))
    v, i = x.max(dim=d, keepdim=True)
    np.testing.assert_array_equal(v.numpy(), a.max(d, keepdims=True))
    np.testing.assert_array_equal(i.numpy(), a.argmax(d, keepdims=True))
    pieces = x.split([1, shape[d] - 1], d) if shape[d] > 1 else x.split(1, d)
    np.testing.assert_array_equal(tga.cat(pieces, dim=d).numpy(), a)


@pytest.mark.parametrize("name", ["sin", "cumsum0", "cumprod1", "prod1", "gather1", "sort", "topk", "max_dim", "roll2",
                                  "repeat", "einsum_three", "mod", "scatter", "index_by_argsort", "index_select"])  # fmt: skip
def test_traced_programs_replay_the_new_ops(name, rng):
    # tga.trace records them like any op: a replay on new inputs gives eager's values and gradients.
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

    prog = tga.trace(loss, rand(rng, 3, 4))
    x = rand(rng, 3, 4)
    out = prog(x)
    got = x.grad.numpy()
    x.grad = None
    ref = loss(x)
    ref.backward()
    close(out, ref.numpy(), atol=1e-12)
    close(got, x.grad.numpy(), atol=1e-12)

