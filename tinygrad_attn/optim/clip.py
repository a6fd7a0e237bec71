"""Gradient clipping by the global norm of all gradients."""

from __future__ import annotations

import math
from collections.abc import Iterable

from .._tensor import Tensor
from ..autograd import _State


def clip_grad_norm_(params: Tensor | Iterable[Tensor], max_norm: float, norm_type: float = 2.0,
                    error_if_nonfinite: bool = False) -> float:  # fmt: skip
    """Scale all gradients together so that their joint norm is at most ``max_norm``.

    Returns the norm before clipping, as a Python float. As ``torch.nn.utils.clip_grad_norm_``,
    the scale is ``max_norm / (norm + 1e-6)``, applied only when it is below 1.

    >>> total = clip_grad_norm_(model.parameters(), 1.0)  # doctest: +SKIP
    """
    ps = [params] if isinstance(params, Tensor) else list(params)
    grads = [p for p in ps if p.grad is not None]
    if not grads:
        return 0.0
    if _State.tracer is not None:  # a Python decision on the gradients' values: a replay would not make it again
        _State.tracer.check_read(grads[0].grad, "clip_grad_norm_")
    norm_type = float(norm_type)
    parts = []
    for p in grads:  # one number per tensor on its own device, summed on the host
        xp, g = p.grad._dev.ops, p.grad._data
        if norm_type == math.inf:
            parts.append(float(xp.max(xp.abs(g))) if g.size else 0.0)
        else:
            parts.append(float(xp.sum(xp.abs(g) ** norm_type)))
    total = max(parts) if norm_type == math.inf else sum(parts) ** (1.0 / norm_type)
    if error_if_nonfinite and not math.isfinite(total):
        raise RuntimeError(f"clip_grad_norm_: the total norm of the gradients is {total}")
    coef = float(max_norm) / (total + 1e-6)
    if coef < 1.0:
        for p in grads:
            p.grad = Tensor._wrap(p.grad._data * coef, p.grad._dev)
    return total
