"""PyTorch's remaining dropouts: ``dropout1d/2d/3d`` (whole channels zeroed, for
convolutional features) and ``alpha_dropout``/``feature_alpha_dropout`` (the dropout that
keeps SELU's zero mean and unit variance). Masks are drawn through the one random op
(:func:`tinygrad_attn.random.draw`), so a traced program draws afresh at each replay.
``tinygrad_attn.functional`` re-exports every public name.

>>> F.dropout2d(x, 0.2)  # doctest: +SKIP  (x: (N, C, H, W): each (n, c) plane kept or zeroed)
"""

from __future__ import annotations

import math
from typing import Any

from ..engine.declare import public
from ..engine.warn import warn as _user_warn
from ..random import draw, memory_order
from ..tensors._tensor import InvalidArgumentError, Tensor, where
from . import checks as _F
from .activations import _in_place

#: SELU's negative saturation, ``-scale * alpha``: where alpha dropout sends dropped units
_SELU_SATURATION = 1.0507009873554804934193349852946 * 1.6732632423543772848170429916717


def _probability(op: str, p: float) -> None:
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"{op}: dropout probability has to be between 0 and 1, but got {p}")


def _feature_mask(x: Tensor, p: float, batched: bool) -> Tensor:
    """``keep / (1 - p)`` per channel, ones on every later axis: (N, C, 1, ...) or (C, 1, ...)."""
    lead = 2 if batched else 1
    return draw("dropout", tuple(x.shape[:lead]) + (1,) * (x.ndim - lead), x.dtype, x, p)


def _feature_dropout(op: str, x: Tensor, p: float, training: bool, inplace: bool, batched: bool) -> Tensor:
    _probability(op, p)
    if not batched:  # (PyTorch's: the batch axis added and taken off around it, whatever p; in place with
        # unsqueeze_ and squeeze_, which a leaf that requires grad refuses)
        if inplace:
            return _feature_dropout(op, x.unsqueeze_(0), p, training, True, True).squeeze_(0)
        return _feature_dropout(op, x.unsqueeze(0), p, training, False, True).squeeze(0)
    if not training or p == 0.0:
        return x
    if inplace:
        return _in_place(x, op, lambda t: _feature_dropout(op, t, p, training, False, batched))
    if p == 1.0:
        return x * 0.0
    if x.ndim + (not batched) < 2:  # (a channel axis, counting the batch axis PyTorch puts on an unbatched input)
        raise RuntimeError(
            f"{op}: Feature dropout requires at least 2 dimensions in the input, got shape {tuple(x.shape)}"
        )
    if x.dtype.kind not in "fc":  # (the scaled mask is floating point, and PyTorch's kernel writes it in x's dtype)
        raise RuntimeError(f"{op}: result type Float can't be cast to the desired output type {x.dtype}")
    return x * _feature_mask(x, p, batched)


@public(function=False, functional=True)
def dropout1d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:  # noqa: A002
    """Zero whole channels of ``(N, C, L)`` (or ``(C, L)``) with probability ``p``, scaling the
    rest by ``1 / (1 - p)``: PyTorch's ``F.dropout1d``."""
    x = _F.tensor_arg(input, "dropout1d")
    if x.ndim not in (2, 3):
        raise InvalidArgumentError(
            f"dropout1d: Expected 2D or 3D input, but received a {x.ndim}D input. Note that dropout1d exists to "
            "provide channel-wise dropout on inputs with 1 spatial dimension, a channel dimension, and an optional "
            "batch dimension (i.e. 2D or 3D inputs)."
        )
    return _feature_dropout("dropout1d", x, p, training, inplace, batched=x.ndim == 3)


@public(function=False, functional=True)
def dropout2d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:  # noqa: A002
    """Zero whole channels of ``(N, C, H, W)`` (or ``(C, H, W)``): PyTorch's ``F.dropout2d``.
    A 3-D input is read as ``(N, C, L)``, with PyTorch's warning; other ranks warn too."""
    x = _F.tensor_arg(input, "dropout2d")
    if x.ndim not in (3, 4):
        _user_warn(f"dropout2d: Received a {x.ndim}-D input to dropout2d, which is deprecated and will result in "
                      "an error in a future release; use dropout instead (channel-wise dropout needs 3D or 4D "
                      "inputs)")  # fmt: skip
    if x.ndim == 3:
        _user_warn("dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D dropout "
                      "behavior is desired - input is interpreted as shape (N, C, L), where C is the channel dim. "
                      "To maintain the 1D channel-wise dropout behavior, please switch to using dropout1d instead.")  # fmt: skip
    # (no batch axis is added: PyTorch's dropout2d reads any input as (N, C, *), and refuses fewer than 2 axes)
    return _feature_dropout("dropout2d", x, p, training, inplace, batched=True)


@public(function=False, functional=True)
def dropout3d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:  # noqa: A002
    """Zero whole channels of ``(N, C, D, H, W)`` (or ``(C, D, H, W)``): PyTorch's ``F.dropout3d``."""
    x = _F.tensor_arg(input, "dropout3d")
    if x.ndim not in (4, 5):
        _user_warn(f"dropout3d: Received a {x.ndim}-D input to dropout3d, which is deprecated and will result in "
                      "an error in a future release; use dropout instead (channel-wise dropout needs 4D or 5D "
                      "inputs)")  # fmt: skip
    return _feature_dropout("dropout3d", x, p, training, inplace, batched=x.ndim == 5)  # (PyTorch's: 5-D only)


def _alpha(op: str, x: Tensor, p: float, training: bool, inplace: bool, feature: bool) -> Tensor:
    """Dropped units set to SELU's saturation ``-1.7581``, then ``a x + b`` with ``a, b``
    chosen so that a zero-mean, unit-variance input keeps its mean and variance."""
    _probability(op, p)
    if not training or p == 0.0:
        return x
    if inplace:
        return _in_place(x, op, lambda t: _alpha(op, t, p, training, False, feature))
    if p == 1.0:
        return x * 0.0
    if feature and x.ndim < 2:
        raise InvalidArgumentError(
            f"{op}: feature dropout needs an input of at least 2 dimensions, got {tuple(x.shape)}"
        )
    shape = tuple(x.shape[:2]) + (1,) * (x.ndim - 2) if feature else tuple(x.shape)
    order = None if feature else memory_order(shape, x.stride())  # (PyTorch's mask: in x's memory order)
    keep = (draw("dropout", shape, x.dtype, x, p, order=order) != 0).astype(x.dtype)  # 1 kept, 0 dropped
    a = 1.0 / math.sqrt((_SELU_SATURATION**2 * p + 1.0) * (1.0 - p))
    return x * (keep * a) + (keep - 1.0) * (_SELU_SATURATION * a) + _SELU_SATURATION * a * p


@public(function=False, functional=True)
def alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False, inplace: bool = False) -> Tensor:  # noqa: A002
    """SELU's dropout, element by element: PyTorch's ``F.alpha_dropout`` (the identity unless ``training``)."""
    return _alpha("alpha_dropout", _F.tensor_arg(input, "alpha_dropout"), p, training, inplace, feature=False)


@public(function=False, functional=True)
def feature_alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False,  # noqa: A002
                          inplace: bool = False) -> Tensor:  # fmt: skip
    """SELU's dropout of whole channels (axis 1): PyTorch's ``F.feature_alpha_dropout``."""
    x = _F.tensor_arg(input, "feature_alpha_dropout")
    return _alpha("feature_alpha_dropout", x, p, training, inplace, feature=True)


@public(function=False, functional=True)
def gumbel_softmax(logits: Tensor, tau: Any = 1, hard: Any = False, eps: float = 1e-10, dim: int = -1) -> Tensor:
    """A sample of the Gumbel-softmax distribution: ``softmax((logits + g) / tau)`` along ``dim``
    with ``g`` standard Gumbel noise; ``hard=True`` returns the one-hot of its argmax whose
    gradient is the soft sample's (the straight-through estimator): PyTorch's ``F.gumbel_softmax``
    (``eps`` unused, as in PyTorch)."""
    x = _F.tensor_arg(logits, "gumbel_softmax")
    if x.dtype.kind != "f":  # (PyTorch's noise is exponential_(): continuous, so floating point only)
        raise RuntimeError(
            f"gumbel_softmax: the Gumbel noise is continuous: logits must be floating point, got {x.dtype}"
        )
    # -log of Exponential(1) draws, drawn as PyTorch's exponential_() draws them: its numbers for a seed
    gumbels = -draw(("fill", "exponential", (1.0,)), tuple(x.shape), x.dtype, x).log()
    soft = ((x + gumbels) / tau).softmax(dim)
    if not hard:
        return soft
    one_hot = (soft.detach() == soft.detach().amax(dim, keepdim=True)).astype(soft.dtype)
    first = one_hot.cumsum(dim) == 1.0  # (one position even where two tie)
    return where(first, one_hot, 0.0) - soft.detach() + soft
