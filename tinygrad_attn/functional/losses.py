"""Regression and divergence losses with PyTorch's signatures, each written from primitive ops.

``tinygrad_attn.functional`` re-exports every public name. ``reduction`` is ``"mean"``,
``"sum"`` or ``"none"`` (``kl_div`` also takes ``"batchmean"``), or is given by PyTorch's
deprecated ``size_average``/``reduce``.
"""

from __future__ import annotations

from typing import Any

from ..engine.composite import composite
from ..engine.declare import public
from ..engine.warn import warn as _user_warn
from ..ops.alias import RefusedDerivative
from ..ops.saved import saved_for_backward
from ..tensors._tensor import InvalidArgumentError, Tensor, _bool_subtraction, where
from ..tensors.dtypes import scalar_type_name
from . import checks as _F


def _pair(op: str, input: Tensor, target: Any, complex_ok: bool = False) -> Tensor:
    """``target`` as an operand of ``input``'s loss, in ``input``'s dtype (PyTorch's Huber
    loss computes in it): of another shape it broadcasts, with PyTorch's warning (a likely
    mistake, which PyTorch runs); ``complex_ok``: a complex input too."""
    _F._float(input, op, complex_ok)
    target = _F._as_operand(op, target, input)
    if target.dtype != input.dtype:  # (a bool or integer target too: cast to the input's, as PyTorch's kernel)
        target = target.astype(input.dtype)
    if target.shape != input.shape:
        _user_warn(
            f"{op}: Using a target size ({tuple(target.shape)}) that is different to the input size ({tuple(input.shape)}). "
            "This will likely lead to incorrect results due to broadcasting. Please ensure they have the same size.",
            UserWarning,
        )  # fmt: skip
    return target


def _weighted(op: str, loss: Tensor, weight: Any, input: Tensor) -> Tensor:
    if weight is None:
        return loss
    weight = _F._as_operand(op, weight, input, "weight")
    if weight.shape != input.shape:  # (PyTorch's rule: no broadcasting of a weight)
        raise ValueError(
            f"{op}: weight of shape {tuple(weight.shape)} must have the input's shape {tuple(input.shape)}"
        )
    return loss * weight


@public(function=False, functional=True)
@composite("l1_loss")
def l1_loss(input: Tensor, target: Any, size_average: Any = None, reduce: Any = None, reduction: str = "mean",
            weight: Any = None) -> Tensor:  # fmt: skip
    """``|input - target|``, optionally times ``weight`` (the input's shape); with a weight,
    ``"mean"`` divides by the weights' sum, as PyTorch."""
    op = "l1_loss"
    reduction = _F._reduction(op, reduction, size_average, reduce)
    if any(isinstance(t, Tensor) and t.dtype.kind == "b" for t in (input, target)):
        _bool_subtraction(input, target)  # (PyTorch's kernel is input - target: a bool operand refused)
    # (PyTorch's dtype: both promoted; complex ones too, whose loss is real)
    input, target = _F._computed_together(op, input, target, complex_ok=True)  # noqa: A001
    target = _pair(op, input, target, complex_ok=True)
    loss = _weighted(op, (input - target).abs(), weight, input)
    if weight is not None and reduction == "mean":
        return loss.sum() / _F._as_operand(op, weight, input, "weight").sum()
    return _F._reduce(loss, reduction)


@public(function=False, functional=True)
@composite("smooth_l1_loss")
def smooth_l1_loss(input: Tensor, target: Any, size_average: Any = None, reduce: Any = None,
                   reduction: str = "mean", beta: float = 1.0) -> Tensor:  # fmt: skip
    """``0.5 d² / beta`` where ``|d| < beta``, ``|d| - 0.5 beta`` elsewhere (``d = input - target``;
    ``beta = 0`` is the L1 loss)."""
    op = "smooth_l1_loss"
    reduction = _F._reduction(op, reduction, size_average, reduce)
    if beta < 0:
        raise InvalidArgumentError(f"{op}: beta must be non-negative, got {beta}")
    if beta == 0 and any(isinstance(t, Tensor) and t.dtype.kind == "b" for t in (input, target)):
        _bool_subtraction(input, target)  # (PyTorch's beta 0 is its l1_loss, whose input - target refuses a bool)
    input, target = _F._computed_together(op, input, target)  # noqa: A001 - (PyTorch's dtype: both promoted)
    target = _pair(op, input, target)
    d = input - target
    a = d.abs()
    if beta != 0:  # (the square of d only where it is taken: an infinite d's gradient is +-1, not 0 * inf)
        ds = where(a < beta, d, 0.0)
        a = where(a < beta, ds * ds * (0.5 / beta), a - 0.5 * beta)
    out = _F._reduce(a, reduction)
    return saved_for_backward(out, input, target)  # (what PyTorch's keeps)


@public(function=False, functional=True)
@composite("huber_loss")
def huber_loss(input: Tensor, target: Any, reduction: str = "mean", delta: float = 1.0,
               weight: Any = None) -> Tensor:  # fmt: skip
    """``0.5 d²`` where ``|d| < delta``, ``delta (|d| - 0.5 delta)`` elsewhere (``d = input - target``)."""
    op = "huber_loss"
    reduction = _F._reduction(op, reduction)
    if delta <= 0:
        raise InvalidArgumentError(f"{op}: delta must be positive, got {delta}")
    given = target.dtype if isinstance(target, Tensor) else input.dtype
    target = _pair(op, input, target)
    d = input - target
    a = d.abs()
    # (|d| = delta on the linear side, as PyTorch's second derivative; the square only where taken)
    ds = where(a < delta, d, 0.0)
    loss = where(a < delta, ds * ds * 0.5, (a - 0.5 * delta) * delta)
    out = saved_for_backward(_F._reduce(_weighted(op, loss, weight, input), reduction), input, target)  # (as PyTorch's)
    if given != input.dtype and out.requires_grad:  # (PyTorch's forward casts the target; its backward refuses it)
        out = RefusedDerivative.apply(
            out, args=f"Found dtype {scalar_type_name(given)} but expected {scalar_type_name(input.dtype)}"
        )
    return out


@public(function=False, functional=True)
@composite("kl_div")
def kl_div(input: Tensor, target: Tensor, size_average: Any = None, reduce: Any = None, reduction: str = "mean",
           log_target: bool = False) -> Tensor:  # fmt: skip
    """``target (log target - input)`` for log-probabilities ``input``: PyTorch's ``F.kl_div``.

    ``log_target=True``: ``target`` holds log-probabilities too, ``exp(t) (t - input)``.
    A zero target contributes 0 (``0 log 0 = 0``; its own gradient there is NaN, as PyTorch's).
    ``reduction="batchmean"`` divides the sum by the batch size (``input.shape[0]``), the KL
    divergence per sample; ``"mean"`` divides by the number of elements (as PyTorch, which warns
    about it).
    """
    op = "kl_div"
    if size_average is not None or reduce is not None:
        reduction = _F._reduction(op, "mean", size_average, reduce)
    if reduction not in ("mean", "sum", "none", "batchmean"):
        raise ValueError(f"{op}: reduction must be 'mean', 'batchmean', 'sum' or 'none', got {reduction!r}")
    if isinstance(target, Tensor) and target.dtype.kind in "biu":
        raise RuntimeError(
            f"{op}: Integral inputs not supported (target of dtype {target.dtype}); convert with .float()"
        )
    if reduction == "mean":  # (PyTorch warns before it looks at the operands)
        _user_warn(
            "kl_div: reduction='mean' divides the total loss by both the batch size and the support size; "
            "'batchmean' divides only by the batch size, and matches the math definition of KL divergence",
            UserWarning,
        )
    _F._float(input, op)
    input, target = _F._computed_together(op, input, target)  # noqa: A001 - (PyTorch's dtype: both promoted)
    if log_target:
        loss = target.exp() * (target - input)
    else:
        loss = target.xlogy(target) - target * input  # (PyTorch's: a zero target's gradient NaN, its 0 / 0)
    if reduction == "batchmean":
        return loss.sum() / (input.shape[0] if input.ndim else 1)
    return _F._reduce(loss, reduction)


#: PyTorch's guard against a zero vector in cosine_embedding_loss.
_EPSILON = 1e-12


@public(function=False, functional=True)
@composite("cosine_embedding_loss")
def cosine_embedding_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0, size_average: Any = None,
                          reduce: Any = None, reduction: str = "mean") -> Tensor:  # fmt: skip
    """``1 - cos(x1, x2)`` where ``target`` is 1, ``max(0, cos(x1, x2) - margin)`` where it is -1.

    ``input1``, ``input2``: ``(N, D)`` or ``(D,)``; ``target``: ``(N,)`` or ``()`` of 1 and -1.
    """
    op = "cosine_embedding_loss"
    reduction = _F._reduction(op, reduction, size_average, reduce)
    _F.tensor_arg(input1, op)  # (every dtype: products of integers or bools are summed, then divided as floats)
    if input1.shape != input2.shape or input1.ndim not in (1, 2):
        raise InvalidArgumentError(
            f"{op}: input1 {tuple(input1.shape)} and input2 {tuple(input2.shape)} must both be (N, D) or (D,)"
        )
    target = target if isinstance(target, Tensor) else Tensor(target, device=input1.device)
    if target.shape != input1.shape[:-1]:
        raise InvalidArgumentError(f"{op}: target has shape {tuple(target.shape)}, expected {tuple(input1.shape[:-1])}")
    prod = (input1 * input2).sum(-1)
    mag1 = (input1 * input1).sum(-1) + _EPSILON
    mag2 = (input2 * input2).sum(-1) + _EPSILON
    cos = prod / (mag1 * mag2).sqrt()
    pos = where(target == 1, 1.0 - cos, 0.0)
    neg = where(target == -1, (cos - margin).clamp_min(0.0), 0.0)
    return _F._reduce(pos + neg, reduction)
