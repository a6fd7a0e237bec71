"""Classes of differences the program generators found, each checked over its siblings against
PyTorch: bool and complex clamps, integer powers by exponents a dtype cannot hold, moments with no
degrees of freedom left, the ord-0 norm's missing gradient, writes into empty expanded views,
in-place detaches of tensors a product kept, NaN in descending sorts and in binary searches, and
the order of topk among equal entries."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from differential import assert_same_as_torch

import tinygrad_attn as tga

_BOUNDS = ["False", "True", "0", "1", "0.5", "torch.tensor(False)", "torch.tensor([True, False])", "torch.tensor(1)"]


@pytest.mark.parametrize("call", [
    *(f"torch.clamp(x, {a}, {b})" for a, b in itertools.product(_BOUNDS + ["None"], repeat=2)),
    *(f"torch.clamp_min(x, {a})" for a in _BOUNDS), *(f"torch.clamp_max(x, {a})" for a in _BOUNDS),
    *(f"x.clone().clamp_min_({a})" for a in _BOUNDS), *(f"x.clone().clip_(max={a})" for a in _BOUNDS),
    "torch.clamp(x.to(torch.complex64), 0, 1)", "torch.clamp_min(x.float(), 1j)",
])  # fmt: skip
def test_clamp_of_bool_and_complex_raises_where_pytorch_does(call: str) -> None:
    assert_same_as_torch(f"x = torch.tensor([True, False])\nR({call})", pytest.importorskip("torch"))


@pytest.mark.parametrize(("dtype", "exponent"), itertools.product(
    ["uint8", "int8", "int16", "int32", "int64", "bool"],
    [0, 3, 127, 128, 255, 256, 300, 32767, 32768, 2**31, 2**63 - 1, 2**63, -1, -200],
))  # fmt: skip
@pytest.mark.parametrize(
    "form", ["x ** {e}", "x.pow({e})", "x.clone().pow_({e})", "torch.pow(x, {e})", "y = x.clone(); y **= {e}; R(y)"]
)
def test_integer_power_by_an_exponent_out_of_range_raises(dtype: str, exponent: int, form: str) -> None:
    expr = form.format(e=exponent)
    step = expr if expr.startswith("y =") else f"R({expr})"
    assert_same_as_torch(f"x = torch.tensor([2, 1, 0], dtype=torch.{dtype})\n{step}", pytest.importorskip("torch"))


@pytest.mark.parametrize("name", ["var", "std", "var_mean", "std_mean"])
@pytest.mark.parametrize("correction", [1, 2, 3, 4, 2.5])
@pytest.mark.parametrize(("data", "dim"), [
    ([2.0, 1.0, -1.5, 4.0], 0), ([[2.0, 1.0], [-1.5, 4.0]], 0), ([[2.0, 2.0], [-1.5, 4.0]], 1), ([3.0], 0),
    ([[1.0, 2.0, 3.0]], None),
])  # fmt: skip
def test_moments_without_degrees_of_freedom_have_pytorchs_gradient(name: str, correction: float, data: list,
                                                                    dim: int | None) -> None:  # fmt: skip
    assert_same_as_torch(f"""
x = torch.tensor({data}, dtype=torch.float64, requires_grad=True)
out = torch.{name}(x, dim={dim}, correction={correction})
outs = out if isinstance(out, tuple) else (out,)
sum((o * torch.linspace(0.5, 2.0, o.numel(), dtype=torch.float64).reshape(o.shape)).sum() for o in outs).backward()
R(outs, x.grad)
""", pytest.importorskip("torch"), warns=False)  # fmt: skip


@pytest.mark.parametrize("call", ["x.norm(0)", "torch.norm(x, p=0, dim=0)", "torch.linalg.vector_norm(x, 0)",
                                  "torch.linalg.norm(x, 0)", "torch.linalg.vector_norm(x, 0, dtype=torch.float64)",
                                  "x.norm(0) + x.sum()"])  # fmt: skip
@pytest.mark.parametrize("data", ["-2.0", "[-2.0, 0.0]", "[[1.0, 0.0], [0.0, 0.0]]"])
def test_ord_zero_norm_gives_no_gradient(call: str, data: str) -> None:
    assert_same_as_torch(f"""
x = torch.tensor({data}, requires_grad=True)
y = {call}
R(y, y.requires_grad)
y.backward()
R(x.grad)
R(torch.autograd.grad({call}, x, allow_unused=True))
""", pytest.importorskip("torch"))  # fmt: skip


@pytest.mark.parametrize("op", ["addcmul_(w, w, value=0.5)", "mul_(w)", "add_(w)", "copy_(w)", "lerp_(w, 0.25)",
                                "sub_(w, alpha=2)", "addcdiv_(w, w + 1)", "mul_(2)", "div_(w)"])  # fmt: skip
def test_a_write_into_an_empty_expanded_view_is_recorded(op: str) -> None:
    assert_same_as_torch(f"""
x = torch.tensor([3.0, -1.5], dtype=torch.float64, requires_grad=True)
b = x + 0
v = b.narrow(0, 1, 0).expand(2, -1)
w = torch.zeros(2, 0, dtype=torch.float64, requires_grad=True)
v.{op}
R(v, b, v._version == b._version)
((b * 2).sum() + (v * 3).sum()).backward()
R(x.grad, w.grad)
""", pytest.importorskip("torch"))  # fmt: skip


@pytest.mark.parametrize("expr", ["t2 * t2", "t2 @ t2", "t2 / t2", "torch.atan2(t2, t2)", "t2 ** t2", "t2.mul(t2)",
                                  "torch.hypot(t2, t2)", "torch.addcmul(t2, t2, t2)", "t2 * 3", "t2.sum()",
                                  "t2.exp()", "torch.where(t2 > 0, t2, t2)"])  # fmt: skip
def test_detaching_in_place_a_tensor_a_backward_needs_raises_there(expr: str) -> None:
    assert_same_as_torch(f"""
t1 = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
t2 = t1 * 1
t3 = {expr}
t2.detach_()
t3.sum().backward()
R(t1.grad)
""", pytest.importorskip("torch"))  # fmt: skip


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("call", ["x.sort(descending=True)", "x.sort(descending=True, stable=True)",
                                  "x.argsort(descending=True, stable=True)", "x.topk(3)", "x.topk(2, largest=False)",
                                  "x.reshape(2, 3).sort(0, descending=True)"])  # fmt: skip
def test_nan_is_the_largest_entry_of_a_descending_sort(dtype: str, call: str) -> None:
    data = "[float('nan'), -0.5, 1.0, float('inf'), float('nan'), -float('inf')]"
    assert_same_as_torch(f"x = torch.tensor({data}, dtype=torch.{dtype})\nR({call})", pytest.importorskip("torch"))


@pytest.mark.parametrize("right", [False, True])
@pytest.mark.parametrize("seq", ["[-float('inf'), float('inf'), float('nan')]", "[5.0, 100.0]",
                                 "[float('nan'), 1.0, float('nan')]", "[[1.0, float('nan')], [0.0, 2.0]]"])  # fmt: skip
def test_binary_search_with_nan_lands_where_pytorchs_does(seq: str, right: bool) -> None:
    values = "[float('nan'), float('inf'), -float('inf'), 1.0, 2.0]"
    assert_same_as_torch(f"""
s = torch.tensor({seq})
v = torch.tensor({values})
R(torch.searchsorted(s, v if s.ndim == 1 else v[:2].expand(2, 2).contiguous(), right={right}))
R(torch.bucketize(v, s.flatten()[:2], right={right}))
""", pytest.importorskip("torch"))  # fmt: skip


@pytest.mark.parametrize("seed", range(12))
def test_topk_picks_pytorchs_entries_among_equal_ones(seed: int) -> None:
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(seed)
    shape = [(6,), (3, 5), (2, 70), (4, 130)][seed % 4]
    x = rng.integers(-2, 3, shape).astype(np.float32)
    if seed % 3 == 0:
        x.flat[rng.integers(0, x.size, 2)] = np.nan
    for dtype, d, largest, ordered in itertools.product(["float32", "int64", "float16"], range(len(shape)),
                                                        [True, False], [True, False]):  # fmt: skip
        a = np.nan_to_num(x).astype(dtype) if dtype == "int64" else x.astype(dtype)
        for k in {1, 3, shape[d]} & set(range(1, shape[d] + 1)):
            want = torch.topk(torch.tensor(a), k, dim=d, largest=largest, sorted=ordered)
            got = tga.topk(tga.tensor(a), k, dim=d, largest=largest, sorted=ordered)
            assert np.array_equal(want.indices.numpy(), got.indices.numpy()), (dtype, d, k, largest, ordered)
            np.testing.assert_array_equal(want.values.numpy(), got.values.numpy())
