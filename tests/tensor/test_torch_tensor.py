"""The PyTorch face, held against PyTorch itself: each case is one piece of code run twice,
once with ``m = torch`` and once with ``m = tinygrad_attn``, on the same float64 inputs;
values, dtypes, shapes and the gradients of every input must agree. The calls are
PyTorch's own spellings: positional dims, ``dim=``, negative dims, ``keepdim``."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import tinygrad_attn as tga

torch = pytest.importorskip("torch")

S = (3, 4, 5)  # the default input shape

# id -> (code run with m = torch and m = tga, input shapes)
CASES = {
    # reductions, in every spelling
    "sum": (lambda m, x: x.sum(), [S]),
    "sum_pos": (lambda m, x: x.sum(1), [S]),
    "sum_pos_keepdim": (lambda m, x: x.sum(1, True), [S]),
    "sum_dim_keepdim": (lambda m, x: x.sum(dim=-1, keepdim=True), [S]),
    "sum_dims": (lambda m, x: x.sum(dim=(0, 2)), [S]),
    "m.sum": (lambda m, x: m.sum(x, 1), [S]),
    "m.sum_kw": (lambda m, x: m.sum(x, dim=-2, keepdim=True), [S]),
    "mean_dim": (lambda m, x: x.mean(dim=1), [S]),
    "mean_neg_keepdim": (lambda m, x: x.mean(-1, keepdim=True), [S]),
    "m.mean": (lambda m, x: m.mean(x, (0, 1)), [S]),
    "max_full": (lambda m, x: x.max(), [S]),
    "max_dim": (lambda m, x: x.max(dim=1), [S]),
    "max_dim_keepdim": (lambda m, x: x.max(dim=-1, keepdim=True), [S]),
    "max_pos_keepdim": (lambda m, x: x.max(1, keepdim=True)[1], [S]),
    "m.max_pos": (lambda m, x: m.max(x, 1), [S]),
    "m.max_dim": (lambda m, x: m.max(x, dim=0).values, [S]),
    "m.max_elementwise": (lambda m, x, y: m.max(x, y), [S, S]),
    "max_elementwise": (lambda m, x, y: x.max(y), [S, S]),
    "min_dim": (lambda m, x: x.min(dim=2), [S]),
    "m.min_pos": (lambda m, x: m.min(x, -1).indices, [S]),
    "m.min_full": (lambda m, x: m.min(x), [S]),
    "amax": (lambda m, x: x.amax(dim=(0, 2)), [S]),
    "var_dim": (lambda m, x: x.var(dim=1), [S]),
    "var_pos_keepdim": (lambda m, x: x.var(1, keepdim=True), [S]),
    "var_unbiased_false": (lambda m, x: x.var(dim=0, unbiased=False), [S]),
    "var_correction": (lambda m, x: x.var(dim=(1, 2), correction=0), [S]),
    "m.var": (lambda m, x: m.var(x), [S]),
    "m.var_dim": (lambda m, x: m.var(x, 1), [S]),
    "std_dim": (lambda m, x: x.std(dim=-1), [S]),
    "m.std": (lambda m, x: m.std(x, dim=0, keepdim=True), [S]),
    "logsumexp": (lambda m, x: x.logsumexp(dim=1), [S]),
    "m.logsumexp": (lambda m, x: m.logsumexp(x, -1, keepdim=True), [S]),
    "argmax": (lambda m, x: x.argmax(), [S]),
    "argmax_dim": (lambda m, x: x.argmax(dim=1), [S]),
    "m.argmax": (lambda m, x: m.argmax(x, -1, keepdim=True), [S]),
    "argmin_dim": (lambda m, x: x.argmin(dim=0), [S]),
    "m.argmin": (lambda m, x: m.argmin(x, 2), [S]),
    "prod": (lambda m, x: x.prod(), [(2, 3)]),
    "prod_dim": (lambda m, x: x.prod(1), [S]),
    "m.prod": (lambda m, x: m.prod(x, -1, keepdim=True), [S]),
    "cumsum": (lambda m, x: x.cumsum(1), [S]),
    "m.cumsum": (lambda m, x: m.cumsum(x, dim=-1), [S]),
    "cumprod": (lambda m, x: x.cumprod(dim=2), [S]),
    "norm": (lambda m, x: x.norm(), [S]),
    "norm_dim": (lambda m, x: x.norm(dim=1), [S]),
    "norm_p1": (lambda m, x: x.norm(1, dim=-1, keepdim=True), [S]),
    "norm_p3": (lambda m, x: x.norm(p=3, dim=0), [S]),
    "any_all": (lambda m, x: ((x > 0).any(), (x > 0).all(), (x > 0).any(dim=1), (x > -3).all(1, keepdim=True)), [S]),
    # softmax and friends
    "softmax": (lambda m, x: x.softmax(-1), [S]),
    "softmax_dim": (lambda m, x: x.softmax(dim=1), [S]),
    "m.softmax": (lambda m, x: m.softmax(x, dim=0), [S]),
    "m.log_softmax": (lambda m, x: m.log_softmax(x, 1), [S]),
    "log_softmax_dim": (lambda m, x: x.log_softmax(dim=-1), [S]),
    # shape
    "squeeze_dim": (lambda m, x: x.squeeze(dim=1), [(3, 1, 5)]),
    "squeeze_pos": (lambda m, x: x.squeeze(1), [(3, 1, 5)]),
    "squeeze_noop": (lambda m, x: x.squeeze(dim=0), [S]),
    "m.squeeze": (lambda m, x: m.squeeze(x), [(1, 3, 1)]),
    "unsqueeze": (lambda m, x: x.unsqueeze(1), [S]),
    "unsqueeze_dim": (lambda m, x: x.unsqueeze(dim=-1), [S]),
    "m.unsqueeze": (lambda m, x: m.unsqueeze(x, 0), [S]),
    "flatten": (lambda m, x: x.flatten(), [S]),
    "flatten_start": (lambda m, x: x.flatten(1), [S]),
    "flatten_kw": (lambda m, x: x.flatten(start_dim=0, end_dim=-2), [S]),
    "m.flatten": (lambda m, x: m.flatten(x, 1, 2), [S]),
    "view": (lambda m, x: x.view(-1), [S]),
    "view_shape": (lambda m, x: x.view(4, -1, 3), [S]),
    "view_tuple": (lambda m, x: x.view((12, 5)), [S]),
    "view_as": (lambda m, x, y: x.view_as(y), [S, (5, 12)]),
    "reshape_as": (lambda m, x, y: x.reshape_as(y), [S, (60,)]),
    "expand": (lambda m, x: x.expand(2, -1, -1), [(1, 4, 5)]),
    "expand_new": (lambda m, x: x.expand(3, 2, 4), [(2, 1)]),
    "expand_as": (lambda m, x, y: x.expand_as(y), [(4, 1), (2, 4, 3)]),
    "repeat": (lambda m, x: x.repeat(2, 1, 3), [S]),
    "repeat_more": (lambda m, x: x.repeat(2, 3, 1), [(4, 5)]),
    "permute": (lambda m, x: x.permute(2, 0, 1), [S]),
    "permute_tuple": (lambda m, x: x.permute((1, 2, 0)), [S]),
    "m.permute": (lambda m, x: m.permute(x, (1, 2, 0)), [S]),
    "transpose": (lambda m, x: (x.transpose(0, 2), x.transpose(dim0=1, dim1=-1)), [S]),
    "m.transpose": (lambda m, x: m.transpose(x, -1, 1), [S]),
    "t": (lambda m, x: x.t(), [(3, 4)]),
    "T_mT": (lambda m, x, y: (x.T, y.mT), [(3, 4), S]),
    "m.cat": (lambda m, x, y: m.cat([x, y], dim=1), [S, (3, 2, 5)]),
    "m.cat_pos": (lambda m, x, y: m.cat((x, y), -1), [S, (3, 4, 2)]),
    "m.cat_default": (lambda m, x, y: m.cat([x, y]), [S, S]),
    "m.stack": (lambda m, x, y: m.stack([x, y], dim=1), [S, S]),
    "m.stack_pos": (lambda m, x, y: m.stack((x, y), -1), [S, S]),
    "chunk": (lambda m, x: x.chunk(2, dim=1), [S]),
    "m.chunk": (lambda m, x: m.chunk(x, 3, -1), [S]),
    "split": (lambda m, x: x.split(2, dim=2), [S]),
    "split_sizes": (lambda m, x: x.split([1, 3], 1), [S]),
    "m.split": (lambda m, x: m.split(x, 2), [S]),
    "m.split_sizes": (lambda m, x: m.split(x, [2, 2, 1], dim=-1), [S]),
    "unbind": (lambda m, x: x.unbind(1), [S]),
    "flip": (lambda m, x: x.flip(0, 2), [S]),
    "flip_list": (lambda m, x: (x.flip([1]), x.flip(dims=(0, -1))), [S]),
    "m.flip": (lambda m, x: m.flip(x, dims=(-1,)), [S]),
    "roll": (lambda m, x: x.roll(2, 1), [S]),
    "roll_dims": (lambda m, x: x.roll(shifts=(1, -2), dims=(0, 2)), [S]),
    "roll_flat": (lambda m, x: x.roll(7), [S]),
    "m.roll": (lambda m, x: m.roll(x, -1, -1), [S]),
    "narrow_select": (lambda m, x: (x.narrow(1, 1, 2), x.select(2, 3)), [S]),
    "getitem": (lambda m, x: x[1:, None, ..., -1], [S]),
    "size_dim_numel": (lambda m, x: (x.size(), x.size(1), x.size(dim=-1), x.dim(), x.numel(), list(x.shape), x.ndim), [S]),
    # arithmetic and elementwise
    "add_alpha": (lambda m, x, y: x.add(y, alpha=2.0), [S, S]),
    "sub_mul_div": (lambda m, x, y: (x.sub(y), x.mul(y), x.div(y.abs() + 0.5), x.sub(y, alpha=0.5)), [S, S]),
    "pow": (lambda m, x: (x.abs() + 0.1).pow(1.5), [S]),
    "m.pow_tensor": (lambda m, x, y: m.pow(x.abs() + 0.1, y), [S, S]),
    "neg_square": (lambda m, x: (x.neg(), x.square(), m.square(x), m.neg(x)), [S]),
    "abs_op": (lambda m, x: (abs(x), x.abs(), m.abs(x)), [S]),
    "sign": (lambda m, x: (x.sign(), m.sign(x)), [S]),
    "sin_cos": (lambda m, x: (x.sin(), x.cos(), m.sin(x), m.cos(x)), [S]),
    "floor_ceil_round": (lambda m, x: (x.floor(), x.ceil(), (x * 3).round(), m.floor(x), m.round(x, decimals=1)), [S]),
    "exp_log_sqrt": (lambda m, x: (m.exp(x), m.log(x.abs() + 0.1), m.sqrt(x.abs() + 0.1), (x.abs() + 0.1).rsqrt(),
                                   (x.abs() + 0.1).reciprocal()), [S]),
    "activations": (lambda m, x: (m.tanh(x), m.sigmoid(x), m.relu(x), x.relu(), x.sigmoid(), x.tanh()), [S]),
    "mod": (lambda m, x: (x % 0.7, x % -0.7), [S]),  # (torch has no gradient for 2.0 % x: test_new_ops checks it)
    "clamp": (lambda m, x: (x.clamp(min=-0.5), x.clamp(max=0.3), x.clamp(-0.2, 0.4), m.clamp(x, min=-1.0, max=1.0)), [S]),
    "clip": (lambda m, x: m.clip(x, -0.5, 0.5), [S]),
    "where": (lambda m, x, y: m.where(x > 0, x, y), [S, S]),
    "where_scalar": (lambda m, x: m.where(x > 0, x, 0.0), [S]),
    "maximum_minimum": (lambda m, x, y: (m.maximum(x, y), m.minimum(x, y)), [S, S]),
    "masked_fill": (lambda m, x: x.masked_fill(x < 0, 0.5), [S]),
    "tril_triu": (lambda m, x: (m.tril(x), m.triu(x, 1), x.tril(-1), m.tril(x, diagonal=2)), [(4, 5)]),
    "comparisons": (lambda m, x, y: (x.eq(y), x.ne(y), x.lt(y), x.le(y), x.gt(y), x.ge(y), x == x), [S, S]),
    # products
    "matmul": (lambda m, x, y: (x.matmul(y), m.matmul(x, y), x @ y), [S, (5, 2)]),
    "matmul_batch": (lambda m, x, y: m.matmul(x, y), [(2, 1, 3, 4), (5, 4, 2)]),
    "matmul_vec": (lambda m, x, y: (x @ y, y @ x.mT), [S, (5,)]),
    "mm": (lambda m, x, y: (x.mm(y), m.mm(x, y)), [(3, 4), (4, 2)]),
    "bmm": (lambda m, x, y: (x.bmm(y), m.bmm(x, y)), [S, (3, 5, 2)]),
    "dot": (lambda m, x, y: (x.dot(y), m.dot(x, y)), [(4,), (4,)]),
    "einsum_attention": (lambda m, q, k: m.einsum("bhqd,bhkd->bhqk", q, k), [(2, 3, 4, 5), (2, 3, 6, 5)]),
    "einsum_values": (lambda m, w, v: m.einsum("bqk,bkd->bqd", w, v), [(2, 3, 4), (2, 4, 5)]),
    "einsum_trace_free": (lambda m, x, y: m.einsum("ij,jk", x, y), [(3, 4), (4, 2)]),
    "einsum_reduce": (lambda m, x: m.einsum("ijk->ki", x), [S]),
    "einsum_outer_list": (lambda m, x, y: m.einsum("i,j->ij", [x, y]), [(3,), (4,)]),
    "einsum_bilinear": (lambda m, x, w, y: m.einsum("bi,oij,bj->bo", x, w, y), [(2, 3), (4, 3, 5), (2, 5)]),
    "einsum_ellipsis": (lambda m, x, y: m.einsum("...ij,...jk->...ik", x, y), [(2, 3, 4, 5), (3, 5, 2)]),
    "einsum_ellipsis_implicit": (lambda m, x, y: m.einsum("...ij,...jk", x, y), [(2, 1, 4, 5), (3, 5, 2)]),
    "einsum_spaces_broadcast": (lambda m, x, y: m.einsum("b i d, b j d -> b i j", x, y), [(2, 3, 4), (1, 5, 4)]),
    "einsum_sum_ellipsis": (lambda m, x: m.einsum("...i->...", x), [S]),
    # indexing by index tensors
    "gather": (lambda m, x: x.gather(1, m.tensor([[[0, 1, 2, 3, 0]], [[3, 3, 3, 3, 3]], [[1, 0, 1, 0, 1]]])), [S]),
    "gather_neg_dim": (lambda m, x: m.gather(x, -1, m.tensor([[2, 0], [1, 1], [0, 3]])), [(3, 4)]),
    "gather_small_index": (lambda m, x: x.gather(0, m.tensor([[2, 0]])), [(3, 4)]),
    "scatter": (lambda m, x, s: x.scatter(0, m.tensor([[1, 2, 0, 1]]), s), [(3, 4), (1, 4)]),
    "scatter_dim1": (lambda m, x, s: x.scatter(1, m.tensor([[3, 0], [1, 2], [0, 1]]), s), [(3, 4), (3, 2)]),
    "scatter_value": (lambda m, x: x.scatter(1, m.tensor([[3], [1], [0]]), 2.5), [(3, 4)]),
    "scatter_add": (lambda m, x, s: x.scatter_add(0, m.tensor([[1, 1, 0, 1], [1, 2, 2, 1]]), s), [(3, 4), (2, 4)]),
    "index_select": (lambda m, x: x.index_select(1, m.tensor([3, 0, 3])), [S]),
    "m.index_select": (lambda m, x: m.index_select(x, -1, m.tensor([4, 1])), [S]),
    # sorting
    "sort": (lambda m, x: x.sort(), [S]),
    "sort_dim_desc": (lambda m, x: x.sort(dim=1, descending=True), [S]),
    "m.sort": (lambda m, x: m.sort(x, 0), [S]),
    "argsort": (lambda m, x: (x.argsort(), x.argsort(dim=0, descending=True)), [S]),
    "topk": (lambda m, x: x.topk(2), [S]),
    "topk_dim_smallest": (lambda m, x: x.topk(3, dim=1, largest=False), [S]),
    "m.topk": (lambda m, x: m.topk(x, 2, 0).values, [S]),
    "more_free_functions": (lambda m, x, y: (m.outer(x[0], y[1]), m.log1p(x.abs()), m.expm1(x), m.rsqrt(x.abs() + 0.1),
                                          m.reciprocal(x + 3.0), m.erf(x), m.masked_fill(x, x > 0.5, -1.0)), [(3, 4), (3, 4)]),
    "finite_tests": (lambda m, x: _finite_tests(m, m.where(x > 0, x * float("nan"), x * float("inf")), x), [(3, 4)]),
    "repeat_interleave": (lambda m, x: (m.repeat_interleave(x, 2, dim=1), m.repeat_interleave(x, 3),
                                        x.repeat_interleave(2, dim=0)), [(3, 4)]),
    # conversions
    "dtypes": (lambda m, x: (x.float(), x.double(), x.long(), x.int(), x.bool(), x.half(), x.type_as(x.float())), [S]),
    "clone_contiguous": (lambda m, x: (x.clone(), x.contiguous() * 2), [S]),
    # axis= (PyTorch's alias of dim), dtype=, and dim 0 of a 0-d tensor
    "cumsum_axis": (lambda m, x: (x.cumsum(axis=1), x.cumsum(axis=-1)), [S]),
    "cumprod_axis": (lambda m, x: x.cumprod(axis=0), [S]),
    "prod_axis_keepdim": (lambda m, x: x.prod(axis=1, keepdim=True), [S]),
    "dim0_of_0d": (lambda m, x: (x.sum().prod(0), x.sum().cumsum(0), x.sum().cumprod(-1)), [S]),
    "sum_prod_dtype": (lambda m, x: (x.sum(dtype=m.float32), x.prod(1, dtype=m.float32), x.cumsum(0, dtype=m.float32),
                                     x.detach().float().sum(dtype=m.float64)), [(3, 4)]),
    # dtypes of mixed-kind arithmetic: the higher kind's dtype (NumPy would give float64)
    "int_with_float32": (lambda m, x, y: ((x * 3).int() * y.float(), (x * 3).int() + y.float()[0, 0, 0],
                                         (x * 3).int() - 2.5, 2.5 * (x * 3).int(), m.maximum((x * 3).int(), y.float()),
                                         m.minimum(x > 0, y.float()[1, 2, 3]), (x > 0) * y.float()), [S, S]),
    "int_true_division": (lambda m, x, y: ((x * 9).int() / 7, 7 / (y.abs() * 3 + 1).int(),
                                          (x * 9).int() / (y.abs() * 3 + 1).int(), (x > 0) / 2), [S, S]),
    "int_powers": (lambda m, x: (0.7 ** (x * 3).int(), (x * 3).int() ** 2.0, (x * 3).int() ** 3), [S]),
    "mixed_floor_and_remainder": (lambda m, x, y: ((x * 9).int() // y.float(), (x * 9).int() % y.float()), [S, S]),
    "div_rounding_ints": (lambda m, x, y: tuple((x * 9).int().div(d, rounding_mode=r) for r in ("trunc", "floor")
                                                for d in (3, -3, (y.abs() * 3 + 1).int(), -(y.abs() * 3 + 1).int())),
                          [S, S]),
    "div_rounding_mixed": (lambda m, x, y: ((x * 9).int().div(y.float(), rounding_mode="trunc"),
                                           (x * 9).int().div(-2.5, rounding_mode="floor"), x.div(y, rounding_mode="trunc")),
                           [S, S]),
    "scatter_reduce_number": (lambda m, x: _scatter_reduced(m, x.detach()), [S[:2]]),  # (no derivative in PyTorch)
    "scatter_repeated_index": (lambda m, x, s: (x.scatter(1, m.tensor([[0, 0, 3], [1, 1, 1], [2, 0, 2]]), s.detach()),
                                                x.scatter(0, m.tensor([[0, 0, 2, 2], [0, 1, 2, 2]]), 7.0)), [S[:2], S[:2]]),
    "scatter_reduce_add_src": (lambda m, x, s: _scatter_add_by_reduce(m, x.detach(), s.detach()),
                               [(3, 4), (2, 4)]),
}  # fmt: skip


def _scatter_reduced(m, x):
    return (
        x.scatter(1, m.tensor([[0, 0, 3], [1, 1, 1], [2, 0, 2]]), 1.5, reduce="add"),
        x.scatter(0, m.tensor([[0, 0, 2, 2], [0, 1, 2, 2]]), -2.0, reduce="multiply"),
        x.scatter(1, m.tensor([[3], [0], [1]]), value=3.0, reduce="add"),
    )


def _scatter_add_by_reduce(m, x, s):
    with warnings.catch_warnings():  # (PyTorch deprecates reduce= with a tensor src, and has no derivative for it)
        warnings.simplefilter("ignore", UserWarning)
        return x.scatter(0, m.tensor([[1, 1, 0, 1], [1, 2, 2, 1]]), s, reduce="add")


def _finite_tests(m, y, x):
    mixed = m.where(x > 0.5, x, y)  # finite, NaN and infinite entries
    return m.isnan(y), m.isinf(y), m.isfinite(mixed), mixed.isnan(), y.isinf(), mixed.isfinite()


#: Outputs compared with a looser tolerance (float16 rounding).
_TOL = {
    "dtypes": 1e-3,
    "int_with_float32": 1e-6,
    "int_true_division": 1e-6,
    "int_powers": 1e-6,
    "mixed_floor_and_remainder": 1e-6,
    "div_rounding_mixed": 1e-6,
    "sum_prod_dtype": 1e-6,
}


def _host(v):
    return v.detach().numpy() if isinstance(v, torch.Tensor) else v.detach().numpy()


def _dtype_name(d):
    return str(d).replace("torch.", "")


def _flat(out):
    if isinstance(out, (tuple, list)) and not isinstance(out, (torch.Size, tga.Size)):
        return [o for x in out for o in _flat(x)]
    return [out]


def _run(module, fn, arrays):
    xs = [module.tensor(a, requires_grad=True) for a in arrays]
    return xs, _flat(fn(module, *xs))


@pytest.mark.parametrize("case", CASES)
def test_same_values_and_gradients_as_torch(case):
    fn, shapes = CASES[case]
    rng = np.random.default_rng(sum(map(ord, case)))
    arrays = [rng.standard_normal(s) for s in shapes]
    t_in, t_out = _run(torch, fn, arrays)
    g_in, g_out = _run(tga, fn, arrays)
    assert len(t_out) == len(g_out), case
    tol = _TOL.get(case, 1e-10)
    t_loss, g_loss = 0.0, 0.0
    for i, (t, g) in enumerate(zip(t_out, g_out)):
        if not isinstance(t, torch.Tensor):
            assert tuple(t) == tuple(g) if isinstance(t, tuple) else t == g, (case, i, t, g)
            continue
        assert isinstance(g, tga.Tensor), (case, i, type(g))
        assert tuple(g.shape) == tuple(t.shape), (case, i, g.shape, t.shape)
        assert g.dtype.name == _dtype_name(t.dtype), (case, i, g.dtype, t.dtype)
        np.testing.assert_allclose(_host(g).astype(np.float64), _host(t).astype(np.float64), rtol=tol, atol=tol,
                                   err_msg=f"{case}: output {i}")  # fmt: skip
        if t.requires_grad and t.dtype == torch.float64:
            w = rng.standard_normal(tuple(t.shape))
            t_loss = t_loss + (t * torch.tensor(w)).sum()
            g_loss = g_loss + (g * tga.tensor(w)).sum()
    if isinstance(t_loss, float):
        return
    t_loss.backward()
    g_loss.backward()
    for i, (tx, gx) in enumerate(zip(t_in, g_in)):
        if tx.grad is None:
            assert gx.grad is None or not np.any(gx.grad.detach().numpy()), (case, i)
            continue
        assert gx.grad is not None, (case, i)
        np.testing.assert_allclose(gx.grad.detach().numpy(), tx.grad.detach().numpy(), rtol=1e-9, atol=1e-10,
                                   err_msg=f"{case}: gradient of input {i}")  # fmt: skip


def test_named_tuples_have_values_and_indices():
    x = tga.tensor([[1.0, 5.0, 3.0], [7.0, 2.0, 2.5]])
    for r in (x.max(dim=1), tga.max(x, 1), x.min(dim=0), x.sort(1), x.topk(1), tga.sort(x), tga.topk(x, 2, dim=0)):
        assert isinstance(r.values, tga.Tensor) and isinstance(r.indices, tga.Tensor)
        v, i = r
        assert v is r.values and i is r.indices and i.dtype == np.int64
    np.testing.assert_array_equal(x.max(dim=1).indices.detach().numpy(), [1, 0])


def test_spelling_decides_where_torch_and_numpy_differ():
    """NumPy's meaning only with NumPy's keywords (axis=, keepdims=, ddof=); a positional
    axis or PyTorch's keywords give PyTorch's meaning (API.md's rule)."""
    a = np.random.default_rng(0).standard_normal((3, 4))
    x = tga.tensor(a)
    assert isinstance(x.max(axis=1), tga.Tensor) and x.max(axis=1).shape == (3,)
    assert isinstance(x.max(1), tuple) and isinstance(tga.max(x, 1), tuple)  # positional: PyTorch's pair
    assert isinstance(x.max(dim=1), tuple) and isinstance(x.max(1, keepdim=True), tuple)
    assert isinstance(x.max(axis=1, keepdim=True), tga.Tensor)  # axis= spelled: values (tinygrad's spelling)
    assert isinstance(x.max(1, keepdims=True), tga.Tensor)  # keepdims= is NumPy's keyword
    assert x.min(axis=0, keepdim=True).shape == (1, 4) and x.min(0, keepdim=True).indices.shape == (1, 4)
    np.testing.assert_allclose(x.var(1).detach().numpy(), a.var(1, ddof=1))  # positional: PyTorch's unbiased
    np.testing.assert_allclose(x.std(1).detach().numpy(), a.std(1, ddof=1))
    np.testing.assert_allclose(x.var(0, True).detach().numpy(), a.var(0, ddof=1))  # (dim, unbiased), as PyTorch
    np.testing.assert_allclose(x.var(0, False).detach().numpy(), a.var(0))
    np.testing.assert_allclose(x.var(1, keepdim=True).detach().numpy().ravel(), a.var(1, ddof=1))  # PyTorch's keyword
    np.testing.assert_allclose(x.std(axis=1, keepdim=True).detach().numpy().ravel(), a.std(1))
    np.testing.assert_allclose(x.var(1, ddof=0).detach().numpy(), a.var(1))
    with pytest.raises(TypeError, match="max: got both axis=1 and dim=1"):
        x.max(1, axis=1)
    np.testing.assert_allclose(x.var(axis=1).detach().numpy(), a.var(1))  # NumPy: population
    np.testing.assert_allclose(x.var(dim=1).detach().numpy(), a.var(1, ddof=1))  # PyTorch: unbiased
    np.testing.assert_allclose(x.var().detach().numpy(), a.var(ddof=1))  # no dim: PyTorch's unbiased variance
    np.testing.assert_allclose(x.var(unbiased=True).detach().numpy(), a.var(ddof=1))
    np.testing.assert_allclose(tga.var(x).detach().numpy(), a.var(ddof=1))  # the free function is the same rule
    np.testing.assert_allclose(tga.std(x, 1).detach().numpy(), x.std(1).detach().numpy())
    np.testing.assert_allclose(tga.var(x, axis=0).detach().numpy(), a.var(0))
    np.testing.assert_allclose(x.std(dim=0, correction=0).detach().numpy(), a.std(0))
    assert (
        x.squeeze(1).shape == x.shape and tga.squeeze(x, 0).shape == x.shape
    )  # PyTorch: a dim not of length 1 is left
    assert x.squeeze(1) is not x  # (a new view, as PyTorch's)
    with pytest.raises(ValueError, match="squeeze: axis 1 has size 4"):
        x.squeeze(axis=1)
    assert isinstance(x.sort(1), tuple) and isinstance(x.sort(axis=1), tga.Tensor)
    np.testing.assert_array_equal(tga.tril(x, k=1).detach().numpy(), np.tril(a, 1))  # the first name of the offset
    with pytest.raises(TypeError, match="sum: got both axis=0 and dim=1"):
        x.sum(axis=0, dim=1)
    with pytest.raises(TypeError, match="var: pass correction= or unbiased="):
        x.var(dim=0, correction=1, unbiased=True)


def test_positional_axes_match_pytorch():
    torch = pytest.importorskip("torch")
    a = np.random.default_rng(1).standard_normal((3, 4))
    x, t = tga.tensor(a), torch.tensor(a)
    for f in (lambda m: m.max(1), lambda m: m.min(0, True), lambda m: m.sort(1), lambda m: m.max(dim=0)):
        (v, i), (tv, ti) = f(x), f(t)
        np.testing.assert_allclose(v.detach().numpy(), tv.detach().numpy())
        np.testing.assert_array_equal(i.detach().numpy(), ti.detach().numpy())
    for f in (lambda m: m.var(), lambda m: m.std(1), lambda m: m.var(0, True), lambda m: m.var(1, False, True),
              lambda m: m.std(0, keepdim=True), lambda m: m.var(False)):  # fmt: skip
        np.testing.assert_allclose(f(x).detach().numpy(), f(t).detach().numpy())
    for m, tm in ((tga, torch),):
        np.testing.assert_allclose(m.var(x, 1).detach().numpy(), tm.var(t, 1).detach().numpy())
        np.testing.assert_allclose(m.std(x, 0, True).detach().numpy(), tm.std(t, 0, True).detach().numpy())
        assert isinstance(m.min(x, 1), tuple)
    z, tz = tga.tensor(3.0), torch.tensor(3.0)  # dim=0 of a 0-d tensor: itself and index 0
    assert z.max(dim=0).values.item() == tz.max(dim=0).values.item() and z.max(dim=0).indices.item() == 0


FACTORIES = {
    "tensor_int": lambda m: m.tensor([[1, 2], [3, 4]]),
    "tensor_float": lambda m: m.tensor([1.0, 2]),
    "tensor_bool": lambda m: m.tensor([True, False]),
    "tensor_scalar": lambda m: m.tensor(3.5),
    "tensor_int_scalar": lambda m: m.tensor(7),
    "tensor_dtype": lambda m: m.tensor([1, 2], dtype=m.float64),
    "zeros": lambda m: m.zeros(2, 3),
    "zeros_tuple": lambda m: m.zeros((2, 3), dtype=m.int64),
    "ones": lambda m: m.ones(4, dtype=m.int32),
    "ones_list": lambda m: m.ones([2, 1]),
    "empty_shape": lambda m: m.empty(3, 2).shape,
    "full_float": lambda m: m.full((2, 3), 1.5),
    "full_int": lambda m: m.full((2,), 3),
    "full_bool": lambda m: m.full((2,), True),
    "arange": lambda m: m.arange(5),
    "arange_range": lambda m: m.arange(2, 9, 3),
    "arange_float": lambda m: m.arange(1, 4, 0.5),
    "arange_dtype": lambda m: m.arange(4, dtype=m.float32),
    "linspace": lambda m: m.linspace(0, 1, 5),
    "linspace_dtype": lambda m: m.linspace(-1, 1, steps=4, dtype=m.float64),
    "eye": lambda m: m.eye(3),
    "eye_rect": lambda m: m.eye(2, 3),
    "zeros_like": lambda m: m.zeros_like(m.ones(2, 3, dtype=m.float64)),
    "ones_like": lambda m: m.ones_like(m.zeros(2, dtype=m.int64)),
    "full_like": lambda m: m.full_like(m.zeros(2, 2), 7.0),
    "zeros_like_dtype": lambda m: m.zeros_like(m.ones(2), dtype=m.int64),
    "dtype_names": lambda m: [_dtype_name(d) for d in (m.float32, m.float64, m.float16, m.int64, m.int32, m.bool,
                                                     m.long, m.int, m.float, m.double, m.half, m.uint8)],
    "new_zeros": lambda m: m.ones(2, dtype=m.float64).new_zeros(3),
    "new_full": lambda m: m.ones(2, dtype=m.int64).new_full((2, 2), 4),
}  # fmt: skip


@pytest.mark.parametrize("case", FACTORIES)
def test_factories_match_torch(case):
    t, g = FACTORIES[case](torch), FACTORIES[case](tga)
    if isinstance(t, torch.Tensor):
        assert g.shape == tuple(t.shape)
        assert g.dtype.name == _dtype_name(t.dtype), (g.dtype, t.dtype)
        np.testing.assert_allclose(g.detach().numpy(), t.detach().numpy(), rtol=1e-6)
    else:
        assert list(t) == list(g)


def test_random_factories_match_torch_in_shape_and_dtype():
    tga.manual_seed(1)
    a = tga.rand(2, 3)
    tga.manual_seed(1)
    assert np.array_equal(a.detach().numpy(), tga.rand(2, 3).detach().numpy())  # the one seed holds for these too
    for make in (lambda m: m.rand(2, 3), lambda m: m.randn((4,), dtype=m.float64), lambda m: m.randint(0, 10, (3, 2)),
                 lambda m: m.randint(5, (7,)), lambda m: m.randint(high=4, size=(2,)), lambda m: m.rand_like(m.zeros(2, 2)),
                 lambda m: m.randn_like(m.zeros(3, dtype=m.float64))):  # fmt: skip
        t, g = make(torch), make(tga)
        assert g.shape == tuple(t.shape) and g.dtype.name == _dtype_name(t.dtype)
    r = tga.randint(3, 6, (1000,)).detach().numpy()
    assert r.min() == 3 and r.max() == 5
    x = tga.randn(3, requires_grad=True)
    assert x.requires_grad and x.is_leaf
    assert tga.zeros(2, device="array_api_strict").device == "array_api_strict"


def test_tensor_is_a_copy_cut_from_the_graph():
    x = tga.randn(3, requires_grad=True)
    y = tga.tensor(x * 2)
    assert not y.requires_grad and y.is_leaf
    z = tga.tensor([x[0].item(), 1])
    assert z.dtype == np.float32
    assert tga.tensor(np.arange(3, dtype=np.int32)).dtype == np.int32  # an array keeps its dtype
    assert tga.is_tensor(y) and not tga.is_tensor(3)
    assert tga.from_numpy(np.ones(2)).dtype == np.float64


# The names of API.md's "The PyTorch face", as users type them.
TOP_LEVEL = ("tensor zeros ones full empty rand randn randint arange linspace eye zeros_like ones_like full_like "
             "rand_like randn_like matmul bmm mm cat stack split chunk where tanh exp log sigmoid relu softmax "
             "log_softmax einsum max min sum mean argmax argmin sort topk gather clamp flatten "
             "float32 float64 float16 int64 int32 bool").split()  # fmt: skip
METHODS = ("size dim numel view view_as reshape_as expand_as repeat contiguous clone float double long int bool "
           "type_as add sub mul div pow neg matmul mm bmm dot square norm sign sin cos floor ceil round gather "
           "scatter scatter_add index_select split unbind flip roll cumsum prod any all sort argsort topk std "
           "__floordiv__ __rfloordiv__ __mod__ __rmod__ __abs__ half cumprod expand").split()  # fmt: skip


def test_every_name_of_the_contract_exists():
    assert [n for n in TOP_LEVEL if not hasattr(tga, n)] == []
    assert [n for n in METHODS if not callable(getattr(tga.Tensor, n, None))] == []
    for n in TOP_LEVEL:
        if n in ("float32", "float64", "float16", "int64", "int32", "bool"):
            assert getattr(tga, n) == np.dtype(n if n != "bool" else np.bool_)
        else:
            assert callable(getattr(tga, n)), n


def test_tutorial_code_runs_after_changing_the_import():
    # A classifier step as the PyTorch tutorials write it; only the import differs.
    import tinygrad_attn as torch  # noqa: PLC0415

    torch.manual_seed(0)
    x = torch.randn(8, 4)
    y = torch.randint(0, 3, (8,))
    w = torch.zeros(4, 3, requires_grad=True)
    b = torch.zeros(3, requires_grad=True)
    logits = x @ w + b
    loss = -torch.log_softmax(logits, dim=1).gather(1, y.view(-1, 1)).mean()
    loss.backward()
    pred = logits.max(1, keepdim=True)[1]
    correct = pred.eq(y.view_as(pred)).sum().item()
    _, predicted = torch.max(logits, 1)
    assert w.grad.shape == (4, 3) and 0 <= correct <= 8 and predicted.shape == (8,)
    assert math.isclose(loss.item(), math.log(3), rel_tol=1e-6)


def test_to_dtype_type_and_cuda_questions():
    for m in (torch, tga):
        x = m.ones(2, 3)
        assert _dtype_name(x.to(m.float64).dtype) == "float64"
        assert _dtype_name(x.type(m.int64).dtype) == "int64"
        assert m.cuda.is_available() in (True, False) and m.cuda.device_count() >= 0
    x = tga.ones(2, requires_grad=True)
    x.to(tga.float64).sum().backward()  # a differentiable conversion
    assert x.grad.dtype == np.float32 and x.to("cpu") is x
    assert tga.ones(2).type() == torch.ones(2).type() == "torch.FloatTensor"


def test_multinomial_and_bernoulli_draw_as_torch_does():
    tga.manual_seed(0)
    p = tga.tensor([[0.0, 0.2, 0.8], [1.0, 0.0, 0.0]])
    draws = tga.multinomial(p, 500, replacement=True)
    torch.manual_seed(0)
    t_draws = torch.multinomial(torch.tensor(p.detach().numpy()), 500, replacement=True)
    np.testing.assert_array_equal(draws.detach().numpy(), t_draws.detach().numpy())  # the same seed, the same draws
    assert draws.shape == tuple(t_draws.shape) and draws.dtype.name == _dtype_name(t_draws.dtype)
    counts = np.bincount(draws.detach().numpy()[0], minlength=3)
    assert counts[0] == 0 and 300 < counts[2] < 480 and (draws.detach().numpy()[1] == 0).all()
    one = tga.multinomial(tga.tensor([0.1, 0.5, 0.4]), 3)
    assert sorted(one.tolist()) == [0, 1, 2]  # without replacement: each category once
    with pytest.raises(RuntimeError, match="multinomial: cannot sample n_sample > prob_dist"):  # (PyTorch's class)
        tga.multinomial(tga.tensor([0.1, 0.5, 0.4]), 4)
    b = tga.bernoulli(tga.full((2000,), 0.25))
    assert b.dtype == np.float32 and 0.2 < b.mean().item() < 0.3


ERRORS = {
    # id -> (code run with m = torch and m = tga, the exception class PyTorch raises)
    "sum_dim_out_of_range": (lambda m, x: x.sum(5), IndexError),
    "sum_dim_of_0d": (lambda m, x: x.sum().sum(1), IndexError),
    "cumsum_dim_out_of_range": (lambda m, x: x.cumsum(axis=-4), IndexError),
    "cumprod_dim_of_0d": (lambda m, x: x.sum().cumprod(1), IndexError),
    "squeeze_dim_out_of_range": (lambda m, x: x.squeeze(dim=50), IndexError),
    "permute_repeated_dim": (lambda m, x: x.permute((0, 0)), RuntimeError),
    "flip_repeated_dim": (lambda m, x: x.flip((1, -1)), RuntimeError),
    "roll_shifts_without_dims": (lambda m, x: x.roll((1, 2)), RuntimeError),
    "clip_no_bounds": (lambda m, x: x.clip(None, None), RuntimeError),
    "int_negative_power": (lambda m, x: x.int() ** -2, RuntimeError),
    "div_bad_rounding_mode": (lambda m, x: x.div(2, rounding_mode="typo"), RuntimeError),
    "gather_index_rank": (lambda m, x: x.gather(0, m.tensor([1])), RuntimeError),
    "scatter_src_dtype": (lambda m, x: x.half().scatter(0, m.tensor([[0, 1, 2, 0, 1]]), x), RuntimeError),
    "scatter_bad_reduce": (lambda m, x: x.scatter(0, m.tensor([[0, 1, 2, 0, 1]]), 1.0, reduce="max"), RuntimeError),
}


@pytest.mark.parametrize("case", ERRORS)
def test_errors_have_torch_exception_classes(case):
    """Each mistake raises the class PyTorch raises for it (the library's own class also
    stays a ValueError, so code written against NumPy's errors still catches it)."""
    fn, cls = ERRORS[case]
    a = np.random.default_rng(0).standard_normal((3, 5))
    with pytest.raises(cls):
        fn(torch, torch.tensor(a))
    with pytest.raises(cls) as err:
        fn(tga, tga.tensor(a))
    assert isinstance(err.value, ValueError), (case, type(err.value))


# -- PyTorch's free spellings of shape methods: values, and the memory of a view --------------
FREE_SHAPE_FUNCTIONS = [
    ("narrow", (1, 1, 2)), ("select", (0, 1)), ("t", ()), ("swapaxes", (0, 1)), ("swapdims", (1, 0)),
    ("broadcast_to", ((2, 2, 3),)),
]  # fmt: skip


@pytest.mark.parametrize("name,args", FREE_SHAPE_FUNCTIONS)
def test_free_shape_functions_are_pytorchs_views(name, args):
    a = np.arange(6.0).reshape(2, 3)
    x, tx = tga.tensor(a.copy()), torch.tensor(a.copy())
    y, ty = getattr(tga, name)(x, *args), getattr(torch, name)(tx, *args)
    np.testing.assert_array_equal(y.detach().numpy(), ty.detach().numpy())
    with tga.no_grad():
        x.add_(1.0)
    tx.add_(1.0)
    np.testing.assert_array_equal(y.detach().numpy(), ty.detach().numpy())  # a view: it shows the change
    with pytest.raises(TypeError, match=name):
        getattr(tga, name)(a, *args)


def test_new_empty_has_pytorchs_shape_dtype_and_device():
    x, tx = tga.ones(2, dtype=tga.float64), torch.ones(2, dtype=torch.float64)
    for args, kw in (((3,), {}), ((2, 3), {}), (((2, 3),), {}), ((4,), {"dtype": tga.int64})):
        tkw = {"dtype": torch.int64} if kw else {}
        ours, theirs = x.new_empty(*args, **kw), tx.new_empty(*args, **tkw)
        assert ours.shape == tuple(theirs.shape) and str(ours.dtype) == str(theirs.dtype)
        assert ours.device == x.device
