"""Argument checks and small helpers that the functional modules share (``functional.py``,
``conv.py``, ``losses.py``, ...) and the modules of tensor functions
(``tensor_functions.py``, ``math_functions.py``, ``activations.py``): here, below all of them,
so that none imports another to reach them."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..engine.switches import is_grad_enabled
from ..engine.warn import warn as _user_warn
from ..tensors._tensor import InvalidArgumentError, Tensor, cat
from ..tensors.dtypes import UnsupportedDtypeError
from ..tensors.mutation.out_argument import written_to_out  # noqa: F401 - (PyTorch's out=, one rule: its module's)
from ..tensors.shape.dims import AxisRuleError

_REDUCTIONS = ("mean", "sum", "none")


class MissingAxisError(AxisRuleError, InvalidArgumentError):
    """An input with fewer axes than the op reads (a 2-D input to ``avg_pool2d``): PyTorch's code reads
    the axis it lacks (``size(-3)``) and raises its ``IndexError`` ("Dimension out of range") where its
    own check of the rank would raise ``RuntimeError``; this is both, and the library's
    ``InvalidArgumentError`` (a ``ValueError``) for a shape the op cannot take."""


def tensor_arg(x: Any, op: str) -> Tensor:
    """``x`` itself where it is a Tensor; otherwise a ``TypeError`` naming ``op`` and what it got."""
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}: expected a Tensor, got {type(x).__name__}")
    return x


def broadcast_of(op: str, *shapes: tuple) -> tuple:
    """The shape ``shapes`` broadcast to; PyTorch's ``RuntimeError`` (a ``ValueError`` too, as
    NumPy's) naming ``op`` and the shapes when they do not broadcast."""
    try:
        return np.broadcast_shapes(*shapes)
    except ValueError:
        raise InvalidArgumentError(
            f"{op}: the shapes {', '.join(str(tuple(s)) for s in shapes)} do not broadcast "
            "(the size of each dimension must match or be 1)"
        ) from None


def tensor_operand(x: Any, op: str, name: str = "input", position: int = 1) -> Any:
    """``x`` where it is a Tensor; otherwise PyTorch's ``TypeError`` for an op whose argument
    ``name`` takes no Python number (``torch.eq(2, t)``, ``torch.logaddexp(t, 2)``)."""
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}(): argument '{name}' (position {position}) must be Tensor, not {type(x).__name__}")
    return x


def same_dtype(op: str, input: Tensor, *others: tuple[str, Any], float16_input: bool = False) -> None:  # noqa: A002
    """PyTorch's refusal of operands of different dtypes where its CPU kernel promotes none
    (normalisations, matrix products, attention, weighted losses): a ``RuntimeError`` naming
    ``op`` and each dtype. ``others`` are ``(name, tensor or None)``; with ``float16_input`` a
    float16 or bfloat16 input may take float32 parameters (PyTorch's mixed-precision normalisations).

    >>> same_dtype("layer_norm", x64, ("weight", w32))  # doctest: +SKIP
    RuntimeError: layer_norm: expected all tensors to have the same dtype, but got input torch.float64 and weight ...
    """
    for name, t in others:
        if not isinstance(t, Tensor) or t.dtype == input.dtype:
            continue
        if float16_input and input.dtype.name in ("float16", "bfloat16") and t.dtype == np.float32:
            continue
        raise RuntimeError(
            f"{op}: expected all tensors to have the same dtype, but got input {input.dtype} and {name} {t.dtype} "
            f"(PyTorch's CPU kernel promotes none); convert with .to({input.dtype})"
        )


def not_differentiable(kernel: str, **operands: Any) -> None:
    """PyTorch's refusal of an operand its kernel has no derivative for (a loss's class
    ``weight``, ``pos_weight``) while it requires grad and grad mode is on: a ``RuntimeError``
    naming the kernel (``nll_loss_forward``, ``binary_cross_entropy``) and the argument.
    The operands are checked in the order given, PyTorch's."""
    if not is_grad_enabled():
        return
    for name, t in operands.items():
        if isinstance(t, Tensor) and t.requires_grad:
            raise RuntimeError(
                f"The function '{kernel}' is not differentiable with respect to argument '{name}'. "
                "This input cannot have requires_grad True."
            )


def _float(x: Tensor, op: str, complex_ok: bool = False) -> None:
    """Refuse a tensor that is not floating-point (or complex, where ``complex_ok``: the ops
    whose PyTorch kernel or composite computes complex too)."""
    if x.dtype.kind != "f" and not (complex_ok and x.dtype.kind == "c"):
        raise UnsupportedDtypeError(f"{op}: needs a floating-point tensor, got {x.dtype}; convert with .float()")


def _reduction(op: str, reduction: str, size_average: Any = None, reduce: Any = None) -> str:
    """The reduction named by ``reduction=``, or by PyTorch's deprecated ``size_average``/``reduce``."""
    if size_average is not None or reduce is not None:
        # PyTorch's legacy rule reads both by truth (0 is False; a tensor of several elements raises)
        mean = True if size_average is None else size_average
        keep = True if reduce is None else reduce
        reduction = "mean" if mean and keep else "sum" if keep else "none"
        _user_warn(f"size_average and reduce args will be deprecated, please use reduction='{reduction}' instead.",
                   UserWarning)  # fmt: skip
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{op}: reduction must be 'mean', 'sum' or 'none', got {reduction!r}")
    return reduction


def _reduce(loss: Tensor, reduction: str) -> Tensor:
    return loss.mean() if reduction == "mean" else loss.sum() if reduction == "sum" else loss


def _as_operand(op: str, t: Any, like: Tensor, what: str = "target") -> Tensor:
    """``t`` as a tensor on ``like``'s device (arrays and lists are copied there); a float
    one in ``like``'s float dtype, so a float64 weight does not turn a float32 loss float64."""
    if not isinstance(t, Tensor):
        t = Tensor(np.asarray(t), device=like._dev)
    if t._dev is not like._dev:
        raise RuntimeError(f"{op}: input on {like.device}, {what} on {t.device}; move one with .to()")
    if t.dtype.kind == "f" and t.dtype != like.dtype:
        t = t.astype(like.dtype)
    return t


def _computed_together(op: str, input: Tensor, *others: Any, complex_ok: bool = False) -> tuple[Tensor, ...]:  # noqa: A002
    """``input`` and ``others`` (targets, variances) in ``torch.result_type``'s dtype over them,
    the dtype PyTorch's pointwise losses compute and return in: a float64 target makes a
    float32 input's loss float64, an integer input with a float target computes in that float.
    Lists and arrays become tensors in the input's float dtype first (:func:`_as_operand`);
    ``complex_ok``: a complex dtype too (the losses PyTorch computes for complex)."""
    from ..tensors.dtypes import result_type  # noqa: PLC0415 - (dtypes imports nothing of this layer)

    tensors = [t if isinstance(t, Tensor) else _as_operand(op, t, input) for t in others]
    for t in tensors:
        if t._dev is not input._dev:
            raise RuntimeError(f"{op}: input on {input.device}, target on {t.device}; move one with .to()")
    dt = result_type(input, *tensors)
    if dt.kind != "f" and not (complex_ok and dt.kind == "c"):
        _float(input, op, complex_ok)
        raise UnsupportedDtypeError(f"{op}: needs a floating-point target, got {dt}; convert with .float()")
    return tuple(t if t.dtype == dt else t.astype(dt) for t in (input, *tensors))


def _same_shape(op: str, x: Tensor, target: Tensor) -> None:
    if target.shape != x.shape:
        raise InvalidArgumentError(
            f"{op}: target of shape {tuple(target.shape)} must have the input's shape {tuple(x.shape)} (as in PyTorch)"
        )


def _broadcast_to_input(op: str, x: Tensor, target: Tensor, what: str = "target") -> None:
    """Refuse a target (or the ``what`` operand: a weight) that does not broadcast to the input's shape (a
    loss whose result has the input's shape, as PyTorch's kernel writes it)."""
    try:
        fits = np.broadcast_shapes(tuple(target.shape), tuple(x.shape)) == tuple(x.shape)
    except ValueError:
        fits = False
    if not fits:
        raise InvalidArgumentError(
            f"{op}: {what} of shape {tuple(target.shape)} does not broadcast to the input's shape {tuple(x.shape)}"
        )


def _pad_constant(x: Tensor, axis: int, lo: int, hi: int, value: float) -> Tensor:
    """Crop the negative sides of ``axis``, then put blocks of ``value`` on the positive ones."""
    lead = (slice(None),) * axis
    if lo < 0 or hi < 0:
        x = x[lead + (slice(max(-lo, 0), x.shape[axis] - max(-hi, 0)),)]
    parts = []
    for amount in (lo, hi):
        shape = x.shape[:axis] + (amount,) + x.shape[axis + 1 :]
        parts.append(Tensor.full(shape, value, dtype=x.dtype, device=x.device) if amount > 0 else None)
    pieces = [p for p in (parts[0], x, parts[1]) if p is not None]
    return cat(pieces, axis) if len(pieces) > 1 else x


# -- PyTorch's out= (normalize, norm) --


def implicit_dim(ndim: int, op: str, *, warn: bool = True) -> int:
    """The axis of a softmax-like ``op`` called without one, as PyTorch's (deprecated) rule picks
    it: the first of 0-, 1- and 3-D inputs, the second otherwise (a batch of rows, of images)."""
    d = 0 if ndim in (0, 1, 3) else 1
    if warn:
        _user_warn(
            f"Implicit dimension choice for {op} has been deprecated. Change the call to include dim=X as an argument.",
            UserWarning,
        )
    return d
