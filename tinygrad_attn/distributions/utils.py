"""Helpers the distributions share: broadcasting parameters, logits and probabilities."""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from ..tensors._tensor import Tensor
from ..tensors.dtypes import finfo, get_default_dtype


def broadcast_all(*values: Any) -> tuple[Tensor, ...]:
    """The parameters as tensors of one broadcast shape; numbers take the dtype and device of
    the first tensor among them (float32 when there is none), as PyTorch's."""
    like = next((v for v in values if isinstance(v, Tensor)), None)
    for v in values:
        if not isinstance(v, (Tensor, numbers.Number)):
            raise ValueError(
                f"Input arguments must all be instances of numbers.Number or Tensor, not {type(v).__name__}"
            )
    dtype = like.dtype if like is not None and like.dtype.kind == "f" else get_default_dtype()
    device = like.device if like is not None else None
    tensors = [v if isinstance(v, Tensor) else Tensor(np.asarray(v, dtype=dtype), device=device) for v in values]
    shape = np.broadcast_shapes(*(tuple(t.shape) for t in tensors))
    return tuple(t if tuple(t.shape) == shape else t.expand(shape) for t in tensors)


def clamp_probs(probs: Tensor) -> Tensor:
    """Probabilities kept inside (0, 1) by the dtype's epsilon, so their logarithms are finite."""
    eps = finfo(probs.dtype).eps
    return probs.clamp(min=eps, max=1 - eps)


def logits_to_probs(logits: Tensor, is_binary: bool = False) -> Tensor:
    """Log-odds to a probability (``is_binary``), or unnormalised log-probabilities along the
    last axis to probabilities."""
    return logits.sigmoid() if is_binary else logits.softmax(-1)


def probs_to_logits(probs: Tensor, is_binary: bool = False) -> Tensor:
    """The inverse of :func:`logits_to_probs` (on clamped probabilities)."""
    p = clamp_probs(probs)
    return p.log() - (-p).log1p() if is_binary else p.log()


class lazy_property:  # noqa: N801 - PyTorch's name
    """A property computed on first use and then kept on the instance (``probs`` of a
    distribution made from ``logits``, and the other way round)."""

    def __init__(self, compute: Any) -> None:
        self.compute = compute
        self.__doc__ = compute.__doc__
        self.name = compute.__name__

    def __get__(self, instance: Any, owner: Any = None) -> Any:
        if instance is None:
            return self
        value = self.compute(instance)
        instance.__dict__[self.name] = value  # (the instance's attribute hides this descriptor from now on)
        return value


def expand_probs_or_logits(old: Any, new: Any, shape: tuple) -> None:
    """``new`` (an ``expand`` of ``old``) given ``old``'s ``probs`` and/or ``logits``, whichever it
    holds, expanded to ``shape``; the last of them is its ``_param``."""
    if "probs" in old.__dict__:
        new.probs = new._param = old.probs.expand(shape)
    if "logits" in old.__dict__:
        new.logits = new._param = old.logits.expand(shape)


def sum_rightmost(value: Tensor, n: int) -> Tensor:
    """``value`` summed over its ``n`` last axes."""
    return value.reshape(*value.shape[: value.ndim - n], -1).sum(-1) if n > 0 else value
