"""Forward-mode AD (``torch.autograd.forward_ad``) of every shared OpInfo against PyTorch's, in float64.

For each sample of an op PyTorch differentiates forward (``supports_forward_ad``), both libraries make each
floating input a dual tensor with the same random tangent, inside ``dual_level``, and the tangents of the outputs
(the Jacobian-vector products) must be PyTorch's: a tangent missing where PyTorch's is nonzero is a difference.
The samples, the conversion to our tensors and the comparison are the first-order runner's
(``test_torch_opinfo``); the fast loop runs the first sample of each op, the slow pass more of them.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import tinygrad_attn as tga  # noqa: E402
from tests.ops import test_torch_opinfo as runner  # noqa: E402

FAST_SAMPLES = 1
SLOW_SAMPLES = 6

_SYMMETRIC = ("PyTorch's forward formula reads the whole tangent of A, its backward formula (the transpose of which "
              "gives our tangent) only its {} part: off tangents of that form the two are not adjoint, and the "
              "tangents of a symmetric (or triangular) perturbation agree")  # fmt: skip
_DUPLICATES = ("at entries written twice (duplicate indices, or ties of the reduction) PyTorch's forward formula takes "
               "the tangent of the one that stays, its backward (whose transpose gives ours) passes the gradient to "
               "every one of them")  # fmt: skip

#: op id -> why its tangents differ from PyTorch's today
KNOWN: dict[str, str] = {
    "linalg.cholesky": _SYMMETRIC.format("Hermitian (with upper=True, transposed)"),
    "linalg.cholesky_ex": _SYMMETRIC.format("Hermitian (with upper=True, transposed)"),
    "linalg.eigh": _SYMMETRIC.format("Hermitian"),
    "triangular_solve": _SYMMETRIC.format("triangular"),
    "nn.functional.max_unpool3d": _DUPLICATES,
    "scatter_reduce.amax": _DUPLICATES,
    "scatter_reduce.amin": _DUPLICATES,
}
#: the same, in the slow pass's samples only
KNOWN_SLOW: dict[str, str] = {
    "logcumsumexp": "rounding: the forward formula divides two cumulative sums of exp(x - max), tiny where the first "
    "entries lie far below the axis's maximum; the ulps of exp there are 1e-7 of the quotient",
    "nn.functional.max_unpool1d": _DUPLICATES,
    "nn.functional.max_unpool2d": _DUPLICATES,
}
_INDEXED = ("its tangent requires grad here, PyTorch's not: the recorded gradient of this op reads positions computed "
            "from the input as tensors (a gather's index, a window's bounds), which tie the tangent to the primal "
            "with derivative zero; PyTorch's forward formula reads the tangent alone")  # fmt: skip
#: op id -> why whether its tangent requires grad (its primals requiring grad) differs from PyTorch's
KNOWN_FLAGS: dict[str, str] = {
    **dict.fromkeys(
        (
            "nn.functional.adaptive_avg_pool3d",
            "nn.functional.adaptive_max_pool1d",
            "nn.functional.adaptive_max_pool2d",
            "nn.functional.adaptive_max_pool3d",
            "nn.functional.fractional_max_pool2d",
            "nn.functional.fractional_max_pool3d",
            "nn.functional.pad.reflect",
            "nn.functional.pad.replicate",
            "nn.functional.pad.replicate_negative",
        ),
        _INDEXED,
    ),  # fmt: skip
    "gradient": "its tangent requires grad here, PyTorch's not: its steps divide by the spacing, and a division's "
    "tangent reads the primal (div's formula), where PyTorch's gradient is one formula of the tangent",
    "linalg.slogdet": "its tangent requires grad here, PyTorch's not: the log of |det| is written from the LU factors, "
    "whose tangent reads the factors; PyTorch's formula of logabsdet's tangent is detached",
    "logdet": "its tangent requires grad here, PyTorch's not: the log of |det| is written from the LU factors, "
    "whose tangent reads the factors; PyTorch's formula of logabsdet's tangent is detached",
}


def _vector(t: Any, seed: int) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    return torch.randn(t.shape, dtype=t.dtype, generator=g)


def _replaced(x: Any, table: dict[int, Any]) -> Any:
    if id(x) in table:
        return table[id(x)]
    if isinstance(x, list):
        return [_replaced(v, table) for v in x]
    if isinstance(x, tuple):
        return tuple(_replaced(v, table) for v in x)
    if isinstance(x, dict):
        return {k: _replaced(v, table) for k, v in x.items()}
    return x


def _tangents(
    lib: Any, fn: Any, inp: Any, args: Any, kwargs: Any, leaves: list, tangents: list, process: Any, grad: bool
) -> list:
    """The outputs' tangents of ``fn`` at the sample, each leaf a dual tensor with its tangent (its primal
    requiring grad where ``grad``, else detached: the two paths an op may take)."""
    fw = lib.autograd.forward_ad
    with fw.dual_level():
        table = {id(leaf): fw.make_dual(leaf if grad else leaf.detach(), tan) for leaf, tan in zip(leaves, tangents)}
        outs = runner._flat(process(fn(_replaced(inp, table), *_replaced(args, table), **_replaced(kwargs, table))))
        return [fw.unpack_dual(o).tangent if isinstance(o, lib.Tensor) and o.is_floating_point() else None
                for o in outs]  # fmt: skip


def _converted(sample: Any) -> tuple | None:
    """The sample's input, args and kwargs as ours, its floating leaves (PyTorch's, ours) and a random tangent
    for each; None where the sample has no leaf or holds what ours cannot take."""
    leaves: list = []
    try:
        inp = runner.to_ours(sample.input, leaves)
        args, kwargs = runner.to_ours(sample.args, leaves), runner.to_ours(sample.kwargs, leaves)
    except runner.Unsupported:
        return None
    if not leaves:
        return None
    return inp, args, kwargs, leaves, [_vector(t, 1234 + k) for k, (t, _) in enumerate(leaves)]


def compare_tangents(target: runner.Target, sample: Any, grad: bool = False, flags: bool = False) -> str | None:
    """Why our forward-mode derivative of one sample differs from PyTorch's (None: equal or not comparable);
    with ``flags``, whether each tangent requires grad (the primals requiring grad), not its values."""
    op = target.op
    if sample.kwargs.get("dropout_p", 0) > 0 or "dropout" in op.name:
        return None  # (random: PyTorch's generator is not ours)
    converted = _converted(sample)
    if converted is None:
        return None
    inp, args, kwargs, leaves, tangents = converted
    process = sample.output_process_fn_grad
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            theirs = _tangents(torch, op.op, sample.input, sample.args, sample.kwargs, [t for t, _ in leaves],
                               tangents, process, grad)  # fmt: skip
    except Exception:
        return None  # PyTorch has no forward derivative here
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            ours = _tangents(tga, target.function, inp, args, kwargs, [o for _, o in leaves],
                             [tga.tensor(t.numpy()) for t in tangents], process, grad)  # fmt: skip
    except Exception as e:
        return f"raises {type(e).__name__}: {str(e)[:200]}"
    if len(ours) != len(theirs):
        return f"{len(ours)} outputs, PyTorch's {len(theirs)}"
    if flags:
        for k, (a, b) in enumerate(zip(ours, theirs)):
            if a is not None and b is not None and a.requires_grad != b.requires_grad:
                return f"output {k}: its tangent requires grad: {a.requires_grad}, PyTorch's: {b.requires_grad}"
        return None
    pairs = [(a, b) for a, b in zip(ours, theirs) if b is not None]
    outs = [(b, None) for _, b in pairs]  # (the tolerance of each output's dtype)
    return runner.compare_gradients(op.name, [a for a, _ in pairs], [b for _, b in pairs], outs, "tangent")


def run_op(op_id: str, n: int, flags: bool = False) -> runner.Tally:
    target = runner.TARGETS[op_id]
    tally = runner.Tally()
    tga.manual_seed(0)
    for sample in runner._samples(target.op, torch.float64, n, reference=False, requires_grad=True):
        tally.compared += 1
        for grad in (True,) if flags else (False, True):
            why = compare_tangents(target, sample, grad, flags)
            if why:
                tally.fail(f"{runner._describe(sample)}{' (primals requiring grad)' if grad else ''}: {why}")
    return tally


def _forward_differentiable(op_id: str) -> bool:
    t = runner.TARGETS[op_id]
    return (
        t.function is not None
        and t.op.supports_forward_ad
        and op_id not in runner.RANDOM
        and torch.float64 in runner._supported(t.op)
    )


def _params(slow: bool, flags: bool = False) -> list:
    known = KNOWN_FLAGS if flags else {**KNOWN, **(KNOWN_SLOW if slow else {})}
    return runner.op_params(filter(_forward_differentiable, runner.TARGETS), known, slow)


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("op_id", _params(slow=False))
def test_forward_derivative_is_pytorchs(op_id: str) -> None:
    tally = run_op(op_id, FAST_SAMPLES)
    runner._check(tally)


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("op_id", _params(slow=True))
def test_forward_derivative_of_more_samples_is_pytorchs(op_id: str) -> None:
    tally = run_op(op_id, SLOW_SAMPLES)
    runner._check(tally)


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("op_id", _params(slow=False, flags=True))
def test_a_tangent_requires_grad_as_pytorchs(op_id: str) -> None:
    """With primals that require grad, each output's tangent requires grad where PyTorch's does (a tangent a
    later backward differentiates: ``jvp`` then ``backward``, as a Hessian-vector product written by hand)."""
    tally = run_op(op_id, FAST_SAMPLES, flags=True)
    runner._check(tally)


def compare_refusal(target: runner.Target, sample: Any) -> str | None:
    """For an op PyTorch gives no forward formula (``supports_forward_ad=False``): where PyTorch's forward-mode
    AD raises, ours raises the same class with the same first line; where it computes, the tangents agree."""
    converted = _converted(sample)
    if converted is None:
        return None
    inp, args, kwargs, leaves, tangents = converted
    raised = []
    for lib, fn, i, a, k, lv, tn in (
        (torch, target.op.op, sample.input, sample.args, sample.kwargs, [t for t, _ in leaves], tangents),
        (tga, target.function, inp, args, kwargs, [o for _, o in leaves], [tga.tensor(t.numpy()) for t in tangents]),
    ):
        try:
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore")
                _tangents(lib, fn, i, a, k, lv, tn, sample.output_process_fn_grad, False)
            raised.append(None)
        except Exception as e:
            raised.append((type(e), str(e).splitlines()[0] if str(e) else ""))
    theirs, ours = raised
    if theirs is None:
        return None if ours is None else f"raises {ours[0].__name__}: {ours[1][:160]}, where PyTorch computes"
    if theirs[0] is NotImplementedError and (ours is None or ours != theirs):
        return f"PyTorch raises {theirs[1][:120]!r}; ours: {ours}"
    return None


def _refused(op_id: str) -> bool:
    t = runner.TARGETS[op_id]
    return t.function is not None and t.op.supports_autograd and not t.op.supports_forward_ad


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("op_id", sorted(filter(_refused, runner.TARGETS)))
def test_an_op_pytorch_has_no_forward_formula_for_raises_as_pytorchs(op_id: str) -> None:
    target = runner.TARGETS[op_id]
    dtype = torch.float64 if torch.float64 in runner._supported(target.op) else torch.float32
    for sample in runner._samples(target.op, dtype, FAST_SAMPLES, reference=False, requires_grad=True):
        why = compare_refusal(target, sample)
        assert why is None, f"{runner._describe(sample)}: {why}"
