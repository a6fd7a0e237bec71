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
from helpers import examples

torch = pytest.importorskip("torch")

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from opinfo import OPS, OpInfo  # noqa: E402

import tinygrad_attn as tga  # noqa: E402
import tinygrad_attn.functional as F  # noqa: E402
from tinygrad_attn import Tensor  # noqa: E402

TF = torch.nn.functional

#: Where ours does not raise but PyTorch does, with the reason it is right not to: empty.
#: Every op keeps what PyTorch's keeps, also where its backward does not read it (composites
#: end with ``ops.saved.saved_for_backward``; primitives declare ``keep``/``keeps_input``).
NOT_RAISING_HERE: dict[tuple[str, str], str] = {}
_KEEPS_A = "the decomposition's gradient is computed from A, which it keeps (PyTorch's from its outputs)"
_CELL = (
    "the fused recurrence keeps what its gradients of higher order read (the biases; the GRU's output); "
    "PyTorch's cell is a composition whose ops keep none of them"
)
_KRON = "kron is a product of views, which keeps its operands; PyTorch's keeps none where an operand is empty"
#: Where ours raises but the oracle does not, with the reason: only ops PyTorch has no single
#: op for, whose oracle is a composition of PyTorch ops, and the decompositions that keep their input.
RAISING_HERE: dict[tuple[str, str], str] = {
    ("masked_softmax", "output"): "its backward reads its output, as softmax's (whose output PyTorch "
    "keeps too); the oracle's last op, a where, keeps nothing",
    **{
        ("additive_score", f"input {i}"): "the fused op keeps its query and keys (its gradients of higher "
        "order recompute from them); the oracle's add keeps nothing, its tanh keeps its output"
        for i in (0, 1)
    },
    # torch.linalg's decompositions: ours keep A, as each gradient is computed from A (eigh's eigenvalue and
    # eigenvector ops each recompute the other's values; svd and qr take LAPACK's values and the gradient of a
    # composite of A); PyTorch's keep their outputs only. (svdvals, and cond and the matrix norms through it,
    # read a copy of A, as PyTorch's keep none of A: they raise exactly where PyTorch's do.)
    **{(name, "input 0"): _KEEPS_A for name in ("eigh", "svd", "svd_vh", "qr", "torch_svd", "torch_svd_v", "torch_qr")},
    **{("kron", f"input {i}"): _KRON for i in (0, 1)},
    # torch's recurrent cells run nn's one fused recurrence, which keeps its biases (and the GRU's its output)
    **{
        (cell, f"input {i}"): _CELL
        for cell in ("rnn_tanh_cell", "rnn_relu_cell", "gru_cell", "lstm_cell")
        for i in (4, 5)
    },
    ("gru_cell", "output"): _CELL,
}


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


_SETTINGS = settings(max_examples=examples(4), deadline=None, derandomize=True, database=None,
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
            if ours == "raises" and (op.name, where) in RAISING_HERE:
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


def _input_changed(fn):
    """A pattern: ``fn(m, h)`` on a non-leaf ``h``, then ``h`` changed in place before the backward."""
    return lambda m, x: (lambda h: (fn(m, h), h.mul_(2.0))[0])(x * 1.0)


def _fn(m):
    return F if m is tga else TF


# Ops whose backward here reads only fresh arrays, but whose PyTorch counterpart keeps its
# input (or result): changing that in place must raise as in PyTorch
PATTERNS.update({
    "clamp_input": _input_changed(lambda m, h: h.clamp(-0.5, 0.5)),
    "elu_input": _input_changed(lambda m, h: _fn(m).elu(h)),
    "leaky_relu_input": _input_changed(lambda m, h: _fn(m).leaky_relu(h)),
    "hardtanh_input": _input_changed(lambda m, h: _fn(m).hardtanh(h)),
    "softplus_input": _input_changed(lambda m, h: _fn(m).softplus(h)),
    "mse_loss_input": _input_changed(lambda m, h: _fn(m).mse_loss(h, h.detach() * 0.5)),
    "var_input": _input_changed(lambda m, h: h.var(1)),
    "logsumexp_output": lambda m, x: x.logsumexp(1).mul_(2.0),
    "prod_output": lambda m, x: x.prod(1).mul_(2.0),
    "sinh_input": _input_changed(lambda m, h: h.sinh()),
    "gather_input": _input_changed(lambda m, h: h.gather(1, m.tensor(np.array([[0], [1], [2]])))),
    "index_select_input": _input_changed(lambda m, h: h.index_select(1, m.tensor(np.array([0, 2])))),
    "max_dim_input": _input_changed(lambda m, h: h.max(1).values),
    "layer_norm_bias": lambda m, x: (lambda b: (_fn(m).layer_norm(x, (4,), None, b), b.mul_(2.0))[0])(x[0] * 1.0),
    "logaddexp_output": lambda m, x: x.logaddexp(x * 0.5).mul_(2.0),
})  # fmt: skip


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
    np.testing.assert_array_equal(np.asarray(got.detach().numpy(), float), np.asarray(want.detach().numpy(), float))
