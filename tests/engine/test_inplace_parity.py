"""In-place changes before backward raise exactly where PyTorch's raise.

Each op keeps for its backward what PyTorch's keeps (``Function.keep``, ``keeps_input``,
``reads_output``, ``reads_values``: the engine's version check follows from them). For
every op of the table (``tests/opinfo.py``) and the patterns real code writes, the output
and then each input is changed in place between the forward and the backward; ours must
raise exactly when PyTorch raises.
"""

from __future__ import annotations

import contextlib
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from opinfo import OPS, OpInfo  # noqa: E402

import tinygrad_attn as tga  # noqa: E402
import tinygrad_attn.functional as F  # noqa: E402
from tinygrad_attn import Tensor  # noqa: E402

TF = torch.nn.functional

#: Where ours does not raise but PyTorch does, with the reason it is safe: our backward
#: does not read the value PyTorch's keeps, so the gradient is still exact.
NOT_RAISING_HERE = {
    ("clamp", "input 0"): "clamp is where(x < lo, ...): its masks are fresh arrays, the input is not read",
    ("clip", "input 0"): "as clamp",
    ("prod", "output"): "the product tree reads its factors, not the product (PyTorch divides the product)",
    ("cumprod", "output"): "as prod",
    ("var", "input 0"): "the centred values are a new array that the backward reads",
    ("var_overcorrected", "input 0"): "as var",
    ("std", "input 0"): "as var",
    ("std", "output"): "its square root reads the variance, not the deviation (gradient 0 where it is 0)",
    ("logsumexp", "output"): "its backward is a softmax of the input, recomputed",
    ("logsumexp", "input 0"): "the shifted input is a new array that the backward reads",
    ("softmax", "output"): "a 0-d softmax is the constant 1, which reads nothing",
    ("log_softmax", "output"): "a 0-d log_softmax is the constant 0, which reads nothing",
    ("layer_norm", "input 2"): "the bias's gradient is the incoming gradient: nothing of it is read",
    ("mse_loss", "input 0"): "the difference is a new array that the backward reads",
    ("mse_loss", "input 1"): "as input 0",
    ("leaky_relu", "input 0"): "a where of a fresh mask: the input is not read",
    ("elu", "input 0"): "a where of a fresh mask and exp's output: the input is not read",
    ("elu_off_0", "input 0"): "as elu",
    ("softplus", "input 0"): "its backward reads a fresh sigmoid of the input, not the input",
    ("nll_loss", "input 0"): "the gradient is a scatter of the weights at the targets: the input is not read",
    ("gather_along", "input 0"): "the gradient is a scatter at the index: the input is not read",
    ("prod", "input 0"): "over a length-1 axis the product is a copy: nothing is read",
    ("cumprod", "input 0"): "as prod",
    # the math API, activations, pooling and losses (their backward reads fresh arrays only)
    ("sinh", "input 0"): "expm1(x) - expm1(-x): each expm1 reads its own output, a new array",
    ("cosh", "input 0"): "exp(x) + exp(-x): each exp reads its own output, a new array",
    ("clamp_min", "input 0"): "as clamp",
    ("clamp_max", "input 0"): "as clamp",
    ("hardtanh", "input 0"): "nested wheres of fresh masks: the input is not read",
    ("celu", "input 0"): "as elu",
    ("selu", "input 0"): "as elu",
    ("logsigmoid", "input 0"): "as softplus",
    ("softmin", "output"): "as softmax",
    ("logaddexp", "input 0"): "a logsumexp of a stacked copy of the pair: the input is not read",
    ("logaddexp", "input 1"): "as input 0",
    ("logcumsumexp", "output"): "its last step is a logaddexp, whose backward reads no output",
    ("logcumsumexp", "input 0"): "as logaddexp",
    ("remainder", "input 0"): "a - floor(a / b).detach() * b: a's gradient is g, b's reads the floor",
    ("remainder", "input 1"): "as input 0: b's gradient is -g * floor(a / b), a new array",
    ("copysign", "output"): "wheres of fresh sign masks: the output is not read",
    ("copysign", "input 0"): "as output",
    ("masked_select", "input 0"): "a boolean index: the gradient is a scatter at the mask",
    ("scatter_reduce", "output"): "its last step is a where or a sum, whose backward reads no output",
    ("scatter_reduce", "input 0"): "the gradient masks (ties, writes) are new arrays; the input is not read",
    ("scatter_reduce", "input 1"): "as input 0 (the source's gradient is a gather of g times fresh masks)",
    ("index_add", "input 1"): "the source's gradient is a gather of g: the source is not read",
    ("index_copy", "input 1"): "as index_add",
    ("cummax", "input 0"): "as gather_along (the gradient goes to the recorded indices)",
    ("cummin", "input 0"): "as cummax",
    ("var_mean", "input 0"): "as var",
    ("std_mean", "input 0"): "as var",
    ("max_pool1d", "input 0"): "the gradient is a scatter at the argmax indices kept from forward",
    ("max_pool2d", "input 0"): "as max_pool1d",
    ("avg_pool2d", "input 0"): "the gradient is g spread over the windows: nothing of the input is read",
    ("adaptive_avg_pool2d", "input 0"): "as avg_pool2d",
    ("smooth_l1_loss", "input 0"): "as mse_loss (the difference and its masks are new arrays)",
    ("smooth_l1_loss", "input 1"): "as input 0",
    ("huber_loss", "input 0"): "as smooth_l1_loss",
    ("huber_loss", "input 1"): "as input 0",
}
# transposed convolutions (functional_conv.py)
NOT_RAISING_HERE.update({
    ("conv_transpose1d", "input 1"): "the convolution reads its flipped, regrouped copy of the weight, not the weight",
    ("conv_transpose2d", "input 1"): "as conv_transpose1d",
    ("conv_transpose1d", "input 0"): "with a stride or padding the convolution reads the zero-spread, padded copy",
    ("conv_transpose2d", "input 0"): "as conv_transpose1d",
})  # fmt: skip


def _flat(out) -> list:
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in _flat(o)]
    return [out]


def _float(t) -> bool:
    return t.dtype in (np.float64, torch.float64)


def _attempt(side: str, op: OpInfo, sample, where: str) -> str:
    """Run the op on non-leaf copies of the inputs, change ``where`` in place, backward:
    "ok", "raises" (RuntimeError) or "skip" (nothing to change or to differentiate)."""
    ours = side == "ours"
    leaves = []
    for a in sample.args:
        if a.dtype == np.float64:
            leaf = Tensor(a.copy(), requires_grad=True) if ours else torch.tensor(a.copy(), requires_grad=True)
            leaves.append(leaf * 1.0)  # a non-leaf: in-place changes are allowed on it
        else:
            leaves.append(Tensor(a.copy()) if ours else torch.tensor(a.copy()))
    outs = [o for o in _flat((op.ours if ours else op.theirs)(*leaves, **sample.kwargs)) if _float(o)]
    if not outs or not outs[0].requires_grad:
        return "skip"
    target = outs[0] if where == "output" else leaves[int(where.split()[1])]
    if not _float(target) or not target.requires_grad or not target.numel():
        return "skip"
    try:
        target.mul_(1.0)
    except RuntimeError:  # (a view of a leaf, an expanded tensor: the change itself is refused)
        return "skip"
    try:
        outs[0].sum().backward()
    except RuntimeError:
        return "raises"
    return "ok"


_SETTINGS = settings(max_examples=4, deadline=None, derandomize=True, database=None,
                     suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])  # fmt: skip


@pytest.mark.parametrize("op", [op for op in OPS if op.grad], ids=[op.name for op in OPS if op.grad])
def test_every_op_raises_where_pytorch_raises(op: OpInfo):
    @_SETTINGS
    @given(st.data())
    def check(data):
        sample = data.draw(op.sample)
        for where in ["output"] + [f"input {i}" for i in range(len(sample.args))]:
            with np.errstate(all="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                try:
                    theirs = _attempt("theirs", op, sample, where)
                except Exception:  # (inputs PyTorch refuses are the value tests' business)
                    continue
                ours = _attempt("ours", op, sample, where)
            if "skip" in (ours, theirs) or ours == theirs:
                continue
            if ours == "ok" and (op.name, where) in NOT_RAISING_HERE:
                continue
            raise AssertionError(f"{op.name}: changing its {where} in place before backward: here {ours}, "
                                 f"in PyTorch {theirs} (sample {sample})")  # fmt: skip

    check()


def _linear(m):
    return tga.nn.Linear(4, 4, dtype=np.float64) if m is tga else torch.nn.Linear(4, 4, dtype=torch.float64)


# The patterns of real code: (a function of the module, tga or torch, and a (3, 4) leaf)
PATTERNS = {
    "residual_after_linear": lambda m, x: (lambda h: h.add_(x))(_linear(m)(x)),
    "scaled_scores_masked": lambda m, x: (x / 2.0).masked_fill_(x > 0, -1e9),
    "div_output": lambda m, x: (x / (x * x + 1.0)).mul_(2.0),
    "relu_input": lambda m, x: (lambda h: (h.relu(), h.mul_(2.0))[0])(x * 1.0),
    "exp_output": lambda m, x: x.exp().mul_(2.0),
    "log_output": lambda m, x: (x * x + 1.0).log().mul_(2.0),
    "log_softmax_input": lambda m, x: (lambda h: (h.log_softmax(-1), h.mul_(2.0))[0])(x * 1.0),
    "softmax_output": lambda m, x: x.softmax(-1).mul_(2.0),
    "frozen_weight_matmul_input": lambda m, x: (
        lambda h: (h @ (Tensor if m is tga else torch.tensor)(np.ones((4, 2))), h.mul_(2.0))[0]
    )(x * 1.0),  # fmt: skip
    "gelu_output": lambda m, x: (F if m is tga else TF).gelu(x).mul_(2.0),
    "layer_norm_output": lambda m, x: (F if m is tga else TF).layer_norm(x, (4,)).mul_(2.0),
    "layer_norm_input": lambda m, x: (lambda h: ((F if m is tga else TF).layer_norm(h, (4,)), h.mul_(2.0))[0])(x * 1.0),
    "maximum_output": lambda m, x: x.maximum(x * 0.5).mul_(2.0),
    "pow_output": lambda m, x: (x**3).mul_(2.0),
    "abs_output": lambda m, x: x.abs().mul_(2.0),
    "tanh_output": lambda m, x: x.tanh().mul_(2.0),
    "sigmoid_output": lambda m, x: x.sigmoid().mul_(2.0),
    "x *= x": lambda m, x: (lambda h: h.__imul__(h))(x * 1.0),  # (PyTorch raises: the product read h)
    "mul_input": lambda m, x: (lambda h: (h * x, h.mul_(2.0))[0])(x * 1.0),
}


@pytest.mark.parametrize("name", sorted(PATTERNS))
def test_patterns_raise_where_pytorch_raises(name):
    a = np.random.default_rng(0).standard_normal((3, 4))
    results = []
    for m, x in ((tga, Tensor(a.copy(), requires_grad=True)), (torch, torch.tensor(a.copy(), requires_grad=True))):
        with contextlib.suppress(Exception):
            torch.manual_seed(0)
        try:
            PATTERNS[name](m, x).sum().backward()
            results.append("ok")
        except RuntimeError:
            results.append("raises")
    assert results[0] == results[1], f"{name}: here {results[0]}, in PyTorch {results[1]}"


def _leaf(m, a):
    return m.tensor(np.array(a, dtype=np.float64), requires_grad=True)


def _grad_after(m, x, y):
    y.sum().backward()
    return x.grad


def _set_all(h):
    h[:] = h
    return h


def _add_through_none(h):
    h[:, None] += 1.0
    return h


def _set_0d(m):
    x = _leaf(m, 3.0)
    v = x * 2.0
    v[...] = 5.0
    (v * x).backward()
    return x.grad


def _ce_all_ignored_then_elu(m):
    f = F if m is tga else TF
    x = _leaf(m, [[1.0, 2.0], [3.0, 4.0]])
    f.elu(f.cross_entropy(x, m.tensor(np.array([-100, -100])))).backward()
    return x.grad


# Idioms that once raised or gave other values: (a function of the module, tga or torch)
IDIOMS = {
    "x += x": lambda m: (lambda x: (lambda h: (h.__iadd__(h), _grad_after(m, x, h))[1])(x * 1.0))(_leaf(m, [1.0, 2.0])),
    "x.add_(x)": lambda m: (lambda x: (lambda h: (h.add_(h), _grad_after(m, x, h))[1])(x * 1.0))(_leaf(m, [1.0, 2.0])),
    "x.copy_(x)": lambda m: (lambda x: (lambda h: (h.copy_(h), _grad_after(m, x, h))[1])(x * 1.0))(
        _leaf(m, [1.0, 2.0])
    ),
    "x[:] = x": lambda m: (lambda x: (lambda h: (_set_all(h), _grad_after(m, x, h))[1])(x * 1.0))(_leaf(m, [1.0, 2.0])),
    "v[...] = 5 of 0-d": _set_0d,
    "x[:, None] += 1": lambda m: (
        lambda x: (lambda h: (h[:, None].__iadd__(1.0), _add_through_none(h), _grad_after(m, x, h))[2])(x * 1.0)
    )(_leaf(m, [[1.0, 2.0]])),
    "backward of one element": lambda m: (lambda a: ((a * a).backward(), a.grad)[1])(_leaf(m, [3.0])),
    "flatten(0, 1) of (3, 2, 0)": lambda m: m.tensor(list(m.zeros(3, 2, 0).flatten(0, 1).shape)),
    "empty.chunk(1)": lambda m: m.tensor(len(m.zeros(0).chunk(1))),
    "empty.split(3)": lambda m: m.tensor(len(m.zeros(0).split(3))),
    "squeeze(0) of a non-1 axis": lambda m: m.tensor(list(m.zeros(2, 3).squeeze(0).shape)),
    "max(dim=0) of 0-d": lambda m: m.tensor(3.0).max(dim=0).values,
    "cross_entropy all ignored then elu": _ce_all_ignored_then_elu,
}


@pytest.mark.parametrize("name", sorted(IDIOMS))
def test_idioms_behave_as_pytorch(name):
    got, want = (IDIOMS[name](m) for m in (tga, torch))
    np.testing.assert_array_equal(np.asarray(got.numpy(), float), np.asarray(want.detach().numpy(), float))
