"""PyTorch's margin and ranking losses: ``margin_ranking_loss``, ``hinge_embedding_loss``,
``soft_margin_loss``, ``multilabel_soft_margin_loss``, ``multi_margin_loss``,
``multilabel_margin_loss``, ``triplet_margin_loss`` and
``triplet_margin_with_distance_loss``, each a composite of primitives (hinges as
``maximum(·, 0)``, softplus written without overflow). ``tinygrad_attn.functional``
re-exports every public name.

>>> F.triplet_margin_loss(anchor, positive, negative, margin=1.0)  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..engine.arguments import refuse
from ..engine.composite import composite
from ..engine.declare import accepts, check_dtype, public
from ..engine.forward_grads import refuse_tangents
from ..engine.switches import tracing
from ..ops.alias import RefusedDerivative
from ..ops.saved import saved_for_backward
from ..runtime.meta_stand_ins import stand_in
from ..tensors._tensor import InvalidArgumentError, Tensor, _bool_subtraction, where
from ..tensors.dtypes import check_fill_value
from . import checks as _F
from .activations import logsigmoid
from .distance import pairwise_distance


def _reduction(op: str, reduction: str, size_average: Any = None, reduce: Any = None) -> str:
    return _F._reduction(op, reduction, size_average, reduce)


@public(function=False, functional=True)
@composite("margin_ranking_loss")
def margin_ranking_loss(input1: Tensor, input2: Tensor, target: Any, margin: float = 0, size_average: Any = None,
                        reduce: Any = None, reduction: str = "mean") -> Tensor:  # fmt: skip
    """``max(0, -target * (input1 - input2) + margin)``: ``target`` 1 where ``input1`` should
    rank higher, -1 where ``input2`` should (PyTorch's ``F.margin_ranking_loss``)."""
    op = "margin_ranking_loss"
    reduction = _reduction(op, reduction, size_average, reduce)
    check_dtype(op, _F.tensor_arg(input1, op), "numeric")  # (integers: PyTorch's formula, a float with the margin)
    # (a target tensor as it is: PyTorch's formula promotes over the three, a float64 target makes the loss float64)
    target = target if isinstance(target, Tensor) else _F._as_operand(op, target, input1)
    if not input1.ndim == input2.ndim == target.ndim:
        raise RuntimeError(
            f"{op}: All input tensors should have same dimension but got sizes: input1: {tuple(input1.shape)}, input2: "
            f"{tuple(input2.shape)}, target: {tuple(target.shape)} "
        )
    return _F._reduce((-target * (input1 - input2) + margin).clamp_min(0.0), reduction)  # (grad 1 at 0, as PyTorch)


@public(function=False, functional=True)
@composite("hinge_embedding_loss")
def hinge_embedding_loss(input: Tensor, target: Tensor, margin: float = 1.0, size_average: Any = None,  # noqa: A002
                         reduce: Any = None, reduction: str = "mean") -> Tensor:  # fmt: skip
    """``x`` where ``target`` is 1, ``max(0, margin - x)`` where it is -1 (``input`` often a
    distance): PyTorch's ``F.hinge_embedding_loss``."""
    op = "hinge_embedding_loss"
    reduction = _reduction(op, reduction, size_average, reduce)
    x = _F.tensor_arg(input, op)
    check_dtype(op, x, "numeric")
    target = _F._as_operand(op, target, x)
    if x.dtype.kind in "iu":  # (PyTorch's integer kernel takes the margin as an integer of the input's dtype)
        check_fill_value(op, margin, x.dtype)
        margin = int(margin)
    # (as PyTorch counts them: a target that is neither 1 nor -1 takes both terms)
    loss = where(target != 1, (margin - x).clamp_min(0), 0) + where(target != -1, x, 0)
    return _F._reduce(loss, reduction)


@public(function=False, functional=True)
@composite("soft_margin_loss", edges=("input",))  # (PyTorch differentiates the input only)
def soft_margin_loss(input: Tensor, target: Tensor, size_average: Any = None, reduce: Any = None,  # noqa: A002
                     reduction: str = "mean") -> Tensor:  # fmt: skip
    """``log(1 + exp(-target * input))`` for targets of 1 and -1: PyTorch's ``F.soft_margin_loss``."""
    op = "soft_margin_loss"
    reduction = _reduction(op, reduction, size_average, reduce)
    x = _F.tensor_arg(input, op)
    _F._float(x, op, complex_ok=True)  # (PyTorch's composite computes complex too)
    target = _F._as_operand(op, target, x)
    if target.shape != x.shape:  # (PyTorch's kernel broadcasts the target to the input's shape, never beyond)
        _F._broadcast_to_input(op, x, target)
    # log1p(exp(.)) in the input's dtype, as PyTorch's kernel: inf where exp overflows (float16 beyond 11.1,
    # float32 beyond 88.7), as PyTorch's loss is
    out = _F._reduce((-x * target).exp().log1p(), reduction)  # (PyTorch's order: a bool target is a 0/1 factor)
    if target.dtype.kind == "b" and out.requires_grad:  # (PyTorch's backward negates the target: a bool refused)
        out = RefusedDerivative.apply(out, args="Negation, the `-` operator, on a bool tensor is not supported. If "
                                                "you are trying to invert a mask, use the `~` or `logical_not()` "
                                                "operator instead.")  # fmt: skip
    return out


def _class_weight(op: str, weight: Any, like: Tensor, c: int) -> Tensor | None:
    if weight is None:
        return None
    _F.same_dtype(op, like, ("weight", weight))  # (PyTorch's kernel takes a weight of the input's dtype only)
    weight = _F._as_operand(op, weight, like, "weight")
    if weight.ndim != 1 or weight.shape[0] != c:
        raise InvalidArgumentError(f"{op}: weight must be a vector of the {c} classes, got shape {tuple(weight.shape)}")
    return weight


@public(function=False, functional=True)
@composite("multilabel_soft_margin_loss")
def multilabel_soft_margin_loss(input: Tensor, target: Any, weight: Any = None, size_average: Any = None,  # noqa: A002
                                reduce: Any = None, reduction: str = "mean") -> Tensor:  # fmt: skip
    """The mean over classes of each class's logistic loss, ``target`` 0 or 1 per class of
    ``input (N, C)``, times ``weight[c]`` where given: PyTorch's ``F.multilabel_soft_margin_loss``."""
    op = "multilabel_soft_margin_loss"
    reduction = _reduction(op, reduction, size_average, reduce)
    x = _F.tensor_arg(input, op)
    _F._float(x, op)
    if isinstance(target, Tensor) and target.dtype.kind == "b":
        _bool_subtraction(1, target)  # (PyTorch's formula takes 1 - target: a bool target refused)
    x, target = _F._computed_together(op, x, target)  # (PyTorch's dtype: both promoted)
    if x.ndim == 0:
        raise InvalidArgumentError(f"{op}: input needs a class axis, got a scalar")
    # (PyTorch's -(t * logsigmoid(x) + (1 - t) * logsigmoid(-x)): its logsigmoid is one kernel, in float32 for
    # float16 and bfloat16, rounded once, where softplus's steps here rounded each)
    loss = -(target * logsigmoid(x) + (1.0 - target) * logsigmoid(-x))
    if weight is not None:  # (PyTorch's weight broadcasts against the loss: per class, or per entry)
        w = _F._as_operand(op, weight, x, "weight")
        try:
            np.broadcast_shapes(w.shape, loss.shape)
        except ValueError:
            raise InvalidArgumentError(
                f"{op}: weight of shape {tuple(w.shape)} does not broadcast against the input's {tuple(x.shape)}"
            ) from None
        loss = loss * w
    # (the sum over the input's last dim, counted from the front as PyTorch's: a target of more dims broadcasts
    # the loss, whose own last dim is then not the classes')
    loss = loss.sum(x.ndim - 1) / float(x.shape[-1])
    return saved_for_backward(_F._reduce(loss, reduction), x)  # (as PyTorch's)


def _classes(op: str, x: Tensor, target: Any, multilabel: bool) -> tuple[Tensor, Tensor]:
    """``input`` as ``(N, C)`` and an integer ``target`` (``(N,)``, or ``(N, C)`` multilabel),
    checked as PyTorch checks them."""
    _F._float(x, op)
    target = _F._as_operand(op, target, x)
    if target.dtype != np.int64:  # (PyTorch's kernels read int64 classes only: int32 and uint8 refused too)
        raise RuntimeError(f"{op}: expected scalar type Long (an int64 target), got {target.dtype}")
    if x.ndim > 2 or (x.ndim == 1 and x.numel() == 0 and multilabel):
        raise InvalidArgumentError(f"{op}: expected a non-empty vector or matrix input, got shape {tuple(x.shape)}")
    want = x.shape if multilabel else x.shape[:-1]
    # a vector takes a target of as many entries, a 0-d input (one class) one of shape () or (1,)
    vector = multilabel and x.ndim <= 1 and target.ndim <= 1 and target.numel() == (x.numel() if x.ndim else 1)
    if target.shape != want and not vector and not (not multilabel and x.ndim <= 1 and target.numel() == 1):
        raise InvalidArgumentError(
            f"{op}: inconsistent target size: {tuple(target.shape)} for input of size: {tuple(x.shape)}"
        )
    x2 = x.reshape(-1, x.shape[-1] if x.ndim else 1)
    if multilabel and not tracing() and target.numel():  # (PyTorch's kernel reads every entry, after a -1 too)
        lo, hi = int(target.min().item()), int(target.max().item())
        if lo < -1 or hi >= x2.shape[1]:
            raise RuntimeError(f"{op}: argument #2 'target' is out of range: its entries span [{lo}, {hi}], and "
                               f"each must be a class in [0, {x2.shape[1]}) or -1 (the end of a list)")  # fmt: skip
    return x2, target.reshape(x2.shape) if multilabel else target.reshape(-1)


@public(function=False, functional=True)
@accepts("float3264")
@composite("multi_margin_loss")
def multi_margin_loss(input: Tensor, target: Any, p: float = 1, margin: float = 1.0, weight: Any = None,  # noqa: A002
                      size_average: Any = None, reduce: Any = None, reduction: str = "mean") -> Tensor:  # fmt: skip
    """The multi-class hinge loss of ``input (N, C)`` and class indices ``target (N,)``:
    ``sum over i != y of max(0, margin - x[y] + x[i])^p * weight[y] / C`` (``p`` 1 or 2),
    PyTorch's ``F.multi_margin_loss``."""
    refuse_tangents("multi_margin_loss", input, weight)
    op = "multi_margin_loss"
    reduction = _reduction(op, reduction, size_average, reduce)
    if p not in (1, 2):
        raise ValueError("only p == 1 and p == 2 supported")
    if isinstance(weight, Tensor) and weight.ndim != 1:  # (checked first, as PyTorch's)
        raise ValueError(f"{op}: weight must be one-dimensional, got shape {tuple(weight.shape)}")
    if not isinstance(target, Tensor):  # (PyTorch's parser reads the target after its Python checks of p and weight)
        refuse(op, "target", 1, "Tensor!", target)
    _F.not_differentiable(op, weight=weight)
    x = _F.tensor_arg(input, op)
    x2, t = _classes(op, x, target, multilabel=False)
    n, c = x2.shape
    picked = x2.gather(1, t.reshape(n, 1))  # (N, 1): x[y]
    z = x2 - picked + margin
    h = where(z > 0, z, 0.0)  # (no gradient at 0, as PyTorch's kernel)
    if p == 2:
        h = h * h
    w = _class_weight(op, weight, x, c)
    if w is not None:
        h = h * w[t].reshape(n, 1)
    other = Tensor.arange(c, device=x.device).reshape(1, c) != t.reshape(n, 1)
    loss = where(other, h, 0.0).sum(1) / float(c)  # (N,)
    out = _F._reduce(loss.reshape(x.shape[:-1]) if x.ndim else loss.reshape(()), reduction)
    # (kept as PyTorch's; its gradient, recorded, is a function of them: its second derivative PyTorch lacks)
    return saved_for_backward(out, x, target, weight, piecewise=True)


@public(function=False, functional=True)
@accepts("float3264")
@composite("multilabel_margin_loss")
@stand_in()
def multilabel_margin_loss(input: Tensor, target: Tensor, size_average: Any = None, reduce: Any = None,  # noqa: A002
                           reduction: str = "mean") -> Tensor:  # fmt: skip
    """The multi-label hinge loss: ``target (N, C)`` lists each sample's classes, ended by the
    first -1; every listed class ``j`` should beat every unlisted ``i`` by 1: ``sum of max(0,
    1 - (x[j] - x[i])) / C`` (PyTorch's ``F.multilabel_margin_loss``)."""
    refuse_tangents("multilabel_margin_loss_forward", input)
    op = "multilabel_margin_loss"
    reduction = _reduction(op, reduction, size_average, reduce)
    x = _F.tensor_arg(input, op)
    x2, t = _classes(op, x, target, multilabel=True)
    n, c = x2.shape
    listed = (t != -1).astype("int64").cumprod(1) != 0  # (N, C): before the first -1
    classes = Tensor.arange(c, device=x.device).reshape(1, 1, c)
    # (N, C): how many listed positions name class k (a class listed twice counts twice, as in PyTorch)
    count = ((t.reshape(n, c, 1) == classes) & listed.reshape(n, c, 1)).astype(x2.dtype).sum(1)
    is_target = count > 0
    z = 1.0 - x2.reshape(n, c, 1) + x2.reshape(n, 1, c)  # (N, j, i)
    h = where(z > 0, z, 0.0)  # (no gradient at 0, as PyTorch's kernel)
    h = where(is_target.reshape(n, 1, c), 0.0, h) * count.reshape(n, c, 1)  # j listed, i not
    loss = h.sum((1, 2)) / float(c)
    out = _F._reduce(loss.reshape(x.shape[:-1]) if x.ndim > 1 else loss.reshape(()), reduction)
    return saved_for_backward(out, x, target, piecewise=True)  # (as PyTorch's: it keeps both; see multi_margin_loss)


def _triplet_check(op: str, anchor: Tensor, positive: Tensor, negative: Tensor) -> None:
    a, p, n = anchor.ndim, positive.ndim, negative.ndim
    if not a == p == n:
        raise RuntimeError(
            f"The anchor, positive, and negative tensors are expected to have the same number of dimensions, but "
            f"got: anchor {a}D, positive {p}D, and negative {n}D inputs"
        )


def _triplet(anchor: Tensor, positive: Tensor, negative: Tensor, dist: Callable[[Tensor, Tensor], Tensor],
             margin: float, swap: bool, reduction: str) -> Tensor:  # fmt: skip
    d_ap, d_an = dist(anchor, positive), dist(anchor, negative)
    if swap:  # the harder of the two negatives' distances
        d_an = d_an.minimum(dist(positive, negative))
    return _F._reduce((d_ap - d_an + margin).clamp_min(0.0), reduction)


@public(function=False, functional=True)
@composite("triplet_margin_loss")
def triplet_margin_loss(anchor: Tensor, positive: Tensor, negative: Tensor, margin: float = 1.0, p: float = 2,
                        eps: float = 1e-6, swap: bool = False, size_average: Any = None, reduce: Any = None,
                        reduction: str = "mean") -> Tensor:  # fmt: skip
    """``max(0, d(a, p) - d(a, n) + margin)`` with ``d`` the ``p``-norm distance
    (``pairwise_distance``); ``swap`` takes ``min(d(a, n), d(p, n))``: PyTorch's
    ``F.triplet_margin_loss`` over ``(N, D)`` or ``(D,)``."""
    op = "triplet_margin_loss"
    reduction = _reduction(op, reduction, size_average, reduce)
    if margin <= 0:
        raise ValueError(f"{op}: margin must be greater than 0, got {margin}")
    _triplet_check(op, anchor, positive, negative)
    if anchor.ndim not in (1, 2):
        raise InvalidArgumentError(f"{op}: expected (N, D) or (D,) inputs, got {anchor.ndim}D")
    return _triplet(anchor, positive, negative, lambda u, v: pairwise_distance(u, v, p, eps), margin, swap, reduction)


@public(function=False, functional=True)
def triplet_margin_with_distance_loss(anchor: Tensor, positive: Tensor, negative: Tensor, *,
                                      distance_function: Callable[[Tensor, Tensor], Tensor] | None = None,
                                      margin: float = 1.0, swap: bool = False, reduction: str = "mean") -> Tensor:  # fmt: skip
    """:func:`triplet_margin_loss` with any ``distance_function(x1, x2)`` (default
    ``pairwise_distance``): PyTorch's ``F.triplet_margin_with_distance_loss``."""
    op = "triplet_margin_with_distance_loss"
    reduction = _reduction(op, reduction)
    if margin <= 0:
        raise ValueError(f"{op}: margin must be greater than 0, got {margin}")
    _triplet_check(op, anchor, positive, negative)
    dist = distance_function if distance_function is not None else pairwise_distance
    return _triplet(anchor, positive, negative, dist, margin, swap, reduction)
