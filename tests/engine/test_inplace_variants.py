"""PyTorch's in-place variants (``tinygrad_attn/tensors/mutation/inplace_variants.py``): each writes what the
out-of-place op gives into the same tensor, bumps its version, records a gradient where
one is wanted (checked against finite differences in float64), refuses where PyTorch
does; and the random fills draw from the library's generator."""

from __future__ import annotations

import math

import numpy as np
import pytest
from helpers import close, rand

import tinygrad_attn as tga
from tinygrad_attn import Tensor
from tinygrad_attn.engine.declare import DECLARED, METHOD_ONLY

UNARY = ["relu", "exp", "log", "sqrt", "tanh", "sigmoid", "abs", "neg", "sin", "cos", "tan", "floor", "ceil",
         "round", "sign", "trunc", "frac", "exp2", "expm1", "log1p", "log2", "log10", "asin", "acos", "atan",
         "asinh", "acosh", "atanh", "sinh", "cosh", "rsqrt", "reciprocal", "square", "erf", "erfinv", "deg2rad",
         "rad2deg", "absolute", "negative", "fix", "arcsin", "arctan"]  # fmt: skip
DOMAIN = {"log": 0, "sqrt": 0, "log1p": 0, "log2": 0, "log10": 0, "rsqrt": 0, "acosh": 1,
          "asin": -1, "acos": -1, "atanh": -1, "erfinv": -1, "arcsin": -1}  # fmt: skip
# Smooth ones: gradients checked (the steps' are 0 and are checked by value only).
SMOOTH = [n for n in UNARY if n not in ("floor", "ceil", "round", "sign", "trunc", "fix", "abs", "absolute", "relu")]


def _input(name, a):
    kind = DOMAIN.get(name)
    if kind == 0:
        return np.abs(a) + 0.5
    if kind == 1:
        return np.abs(a) + 1.5
    if kind == -1:
        return np.tanh(a) * 0.9
    return a


@pytest.mark.parametrize("name", UNARY)
def test_unary_variant_writes_the_op_into_the_same_tensor(name, device, rng):
    a = _input(name, rng.standard_normal((3, 4)) * 2)
    x = Tensor(a.copy(), device=device)
    want = getattr(x, name)().detach().numpy()
    before, data = x._version, x._data
    out = getattr(x, name + "_")()
    assert out is x and x._data is data  # the same tensor and the same memory
    assert x._version == before + 1
    close(x, want, atol=1e-12, rtol=1e-12)


@pytest.mark.parametrize("name", SMOOTH)
def test_unary_variant_gradients_match_finite_differences(name, device, rng):
    x = Tensor(_input(name, rng.standard_normal((2, 3))), device=device, requires_grad=True)
    assert tga.gradcheck(lambda t: getattr(t * 1.0, name + "_")(), x)


def test_a_variant_of_an_op_that_reads_its_input_still_differentiates(device, rng):
    # y.sin_() overwrites y, whose old values sin's backward needs: a copy is kept, as PyTorch keeps it
    x = rand(rng, 4, device=device)
    y = x * 2.0
    y.sin_()
    y.sum().backward()
    close(x.grad, 2.0 * np.cos(2.0 * x.detach().numpy()), atol=1e-12)


@pytest.mark.parametrize(
    "name, args",
    [("pow", (2.0,)), ("clamp_min", (0.1,)), ("clamp_max", (0.2,)), ("fmod", (0.7,)), ("remainder", (0.7,)),
     ("lerp", ("other", 0.3)), ("atan2", ("other",)), ("hypot", ("other",)), ("copysign", ("other",)),
     ("xlogy", ("pos",)), ("logical_and", ("other",)), ("logical_or", ("other",)), ("logical_xor", ("other",)),
     ("logical_not", ()), ("floor_divide", (0.7,)), ("eq", ("other",)), ("lt", ("other",)), ("ge", (0.0,)),
     ("tril", (1,)), ("triu", ()), ("mul", ("other",)), ("true_divide", ("pos",)), ("clamp", (-0.5, 0.5))],
)  # fmt: skip
def test_variants_with_operands_match_pytorch(name, args, device, rng):
    torch = pytest.importorskip("torch")
    a, b = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
    ops = {"other": b, "pos": np.abs(b) + 0.5}

    def run(mod, wrap):
        x = wrap(a.copy())
        real = [wrap(ops[v]) if isinstance(v, str) else v for v in args]
        return getattr(x, name + "_")(*real)

    ours = run(tga, lambda v: Tensor(v, device=device))
    theirs = run(torch, torch.from_numpy)
    assert ours.dtype == np.float64
    close(ours, theirs.detach().numpy(), atol=1e-12, rtol=1e-12)


def test_index_variants_match_pytorch(device, rng):
    torch = pytest.importorskip("torch")
    a, s = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
    i2 = np.array([[0, 1, 2, 0], [2, 0, 1, 1]])
    calls = [
        ("scatter_", lambda m, T: (0, T(i2), T(s[:2]))),
        ("scatter_", lambda m, T: (1, T(i2[:, :2]), 5.0)),
        ("scatter_add_", lambda m, T: (0, T(i2), T(s[:2]))),
        ("scatter_reduce_", lambda m, T: (0, T(i2), T(s[:2]), "amax")),
        ("index_fill_", lambda m, T: (1, T(np.array([0, 3])), -2.0)),
        ("index_add_", lambda m, T: (0, T(np.array([2, 0])), T(s[:2]))),
        ("index_copy_", lambda m, T: (1, T(np.array([3, 1])), T(s[:, :2]))),
        ("masked_scatter_", lambda m, T: (T(a > 0), T(s))),
        ("masked_fill_", lambda m, T: (T(a > 0), 0.5)),
        ("fill_diagonal_", lambda m, T: (7.0,)),
    ]
    for name, make in calls:
        x, t = Tensor(a.copy(), device=device), torch.from_numpy(a.copy())
        getattr(x, name)(*make(tga, lambda v: Tensor(v, device=device)))
        getattr(t, name)(*make(torch, torch.from_numpy))
        close(x, t.detach().numpy(), atol=1e-12)


@pytest.mark.parametrize("shape, wrap", [((5, 3), False), ((5, 3), True), ((3, 5), False), ((3, 3, 3), False)])
def test_fill_diagonal_matches_pytorch(shape, wrap):
    torch = pytest.importorskip("torch")
    x, t = Tensor(np.zeros(shape)), torch.zeros(shape, dtype=torch.float64)
    x.fill_diagonal_(2.0, wrap)
    t.fill_diagonal_(2.0, wrap)
    np.testing.assert_array_equal(x.detach().numpy(), t.detach().numpy())


def test_index_variant_gradients_reach_the_source(device, rng):
    x, src = rand(rng, 3, 4, device=device), rand(rng, 2, 4, device=device)
    idx = tga.tensor([2, 0], device=device)
    assert tga.gradcheck(lambda a, s: (a * 1.0).index_add_(0, idx, s, alpha=2.0), x, src)
    assert tga.gradcheck(lambda a, s: (a * 1.0).index_copy_(0, idx, s), x, src)
    assert tga.gradcheck(lambda a, s: (a * 1.0).scatter_(0, tga.tensor([[0, 1, 2, 0]], device=device), s[:1]), x, src)
    m = tga.tensor(rng.standard_normal((3, 4)) > 0, device=device)
    assert tga.gradcheck(lambda a, s: (a * 1.0).masked_scatter_(m, s.reshape(-1).repeat(2)), x, src)


def test_variants_refuse_where_pytorch_does(device):
    leaf = Tensor(np.ones(3), device=device, requires_grad=True)
    with pytest.raises(RuntimeError, match="exp_"):
        leaf.exp_()
    with tga.no_grad():  # (as an optimizer step or nn.init does)
        leaf.exp_()
    close(leaf, np.full(3, math.e))
    ints = tga.tensor([1, 4, 9], device=device)
    with pytest.raises(RuntimeError, match="log2_"):
        ints.log2_()  # (float results cannot be written into an integer tensor)
    with pytest.raises(RuntimeError, match="uniform_"):
        ints.uniform_()


def test_every_listed_variant_is_a_method_and_pytorchs_names_exist():
    torch = pytest.importorskip("torch")
    for d in (*DECLARED.values(), *METHOD_ONLY.values()):
        for name in d.names if d.inplace else ():
            assert getattr(Tensor, name + "_").__name__ == name + "_", name
    for name in ["relu_", "exp_", "log_", "sqrt_", "tanh_", "sigmoid_", "abs_", "neg_", "pow_", "clamp_",
                 "clamp_min_", "clamp_max_", "floor_", "ceil_", "round_", "sign_", "sin_", "cos_", "scatter_",
                 "scatter_add_", "index_fill_", "index_add_", "index_copy_", "masked_scatter_", "fill_diagonal_",
                 "tril_", "triu_", "uniform_", "normal_", "bernoulli_", "random_", "exponential_", "geometric_",
                 "log_normal_", "cauchy_", "zero_", "fill_", "copy_", "atan2_", "lerp_", "erfinv_"]:  # fmt: skip
        assert hasattr(torch.Tensor, name), name
        assert hasattr(Tensor, name), name


# -- random fills ----------------------------------------------------------------------------
_SE5 = 5 * 5 / (12 * 2000) ** 0.5
FILLS = [
    # (the mean within 5 standard errors, 5 / sqrt(12 * 2000): seed 5 draws PyTorch's 0.3845, 3.6 of them off)
    ("uniform_", (-2.0, 3.0), lambda v: v.min() >= -2.0 and v.max() < 3.0 and abs(v.mean() - 0.5) < _SE5),
    ("normal_", (1.0, 2.0), lambda v: abs(v.mean() - 1.0) < 0.1 and abs(v.std() - 2.0) < 0.1),
    ("bernoulli_", (0.3,), lambda v: set(np.unique(v)) <= {0.0, 1.0} and abs(v.mean() - 0.3) < 0.03),
    ("random_", (2, 7), lambda v: set(np.unique(v)) == {2.0, 3.0, 4.0, 5.0, 6.0}),
    ("random_", (4,), lambda v: set(np.unique(v)) == {0.0, 1.0, 2.0, 3.0}),
    ("exponential_", (2.0,), lambda v: v.min() >= 0 and abs(v.mean() - 0.5) < 0.05),
    ("geometric_", (0.5,), lambda v: v.min() >= 1 and abs(v.mean() - 2.0) < 0.1),
    ("log_normal_", (0.0, 0.5), lambda v: v.min() > 0 and abs(np.log(v).std() - 0.5) < 0.05),
    ("cauchy_", (1.0, 0.1), lambda v: abs(np.median(v) - 1.0) < 0.02),
]


@pytest.mark.parametrize("name, args, ok", FILLS, ids=[f"{f[0]}{f[1]}" for f in FILLS])
def test_random_fills(name, args, ok, device):
    x = Tensor(np.zeros((40, 50), np.float32), device=device)
    data = x._data
    tga.manual_seed(5)
    assert getattr(x, name)(*args) is x and x._data is data and x.dtype == np.float32
    assert ok(x.detach().numpy().astype(np.float64)), x.detach().numpy()[:2]
    first = x.detach().numpy().copy()
    tga.manual_seed(5)  # the library's generator: a seed repeats the draw
    getattr(x, name)(*args)
    np.testing.assert_array_equal(x.detach().numpy(), first)


def test_random_fills_of_parameters_under_no_grad_and_their_errors():
    w = Tensor(np.zeros((3, 2)), requires_grad=True)
    with tga.no_grad():
        w.uniform_(-0.1, 0.1).normal_(0, 0.01)
    assert w.requires_grad and w._ctx is None
    with pytest.raises(RuntimeError, match="normal_"):
        w.normal_()  # (a leaf that requires grad, with gradients recorded, as in PyTorch)
    with pytest.raises(RuntimeError, match="uniform_"):
        Tensor(np.zeros(2)).uniform_(1.0, 0.0)
    with pytest.raises(RuntimeError, match="normal_"):
        Tensor(np.zeros(2)).normal_(0.0, -1.0)
    ints = tga.tensor([0, 0, 0])
    ints.random_(0, 3)
    assert ints.dtype == np.int64 and set(ints.tolist()) <= {0, 1, 2}
