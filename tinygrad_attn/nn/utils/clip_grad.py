"""Gradient clipping, by the joint norm of all gradients or by value.

Written in tensor ops with no Python decision on the gradients' values, so a step that
clips traces under ``tga.compile`` and replays with fresh gradients.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from ...engine.switches import active_tracer, check_host_read, no_grad
from ...engine.warn import warn
from ...tensors._tensor import Tensor, stack


def _with_grads(parameters: Tensor | Iterable[Tensor], op: str) -> list[Tensor]:
    ps = [parameters] if isinstance(parameters, Tensor) else list(parameters)
    ps = [p for p in ps if p.grad is not None]
    tracer = active_tracer()
    if ps and tracer is not None and not hasattr(tracer, "sync_grads"):
        # A tracer that does not record assignments to .grad would replay the unscaled
        # gradients: refuse, naming the line, rather than give a silently different step.
        tracer.check_read(ps[0].grad, op)
    return ps


def _norm(g: Tensor, norm_type: float) -> Tensor:
    """The ``norm_type``-norm of all of ``g``'s elements, a 0-d tensor."""
    a = g.abs()
    if norm_type == math.inf:
        return a.max() if g.numel() else (a.sum() * 0.0)
    if norm_type == 2.0:
        return (a * a).sum().sqrt()
    if norm_type == 1.0:
        return a.sum()
    if norm_type == -math.inf:
        return a.min() if g.numel() else (a.sum() * 0.0 + math.inf)
    if norm_type == 0.0:  # (how many entries are not zero, as PyTorch's vector_norm of order 0)
        return (a != 0).sum().to(a.dtype)
    return (a**norm_type).sum() ** (1.0 / norm_type)


def get_total_norm(tensors: Tensor | Iterable[Tensor], norm_type: float = 2.0, error_if_nonfinite: bool = False,
                   foreach: bool | None = None) -> Tensor:  # fmt: skip
    """The joint ``norm_type``-norm of ``tensors`` (the norm of their norms), a 0-d tensor on the first
    one's device, as ``torch.nn.utils.get_total_norm``; ``error_if_nonfinite=True`` raises
    ``RuntimeError`` when it is inf or NaN (which reads it on the host). ``foreach`` is accepted and ignored."""
    return _total_norm(tensors, norm_type, error_if_nonfinite, "get_total_norm")


def _total_norm(tensors: Tensor | Iterable[Tensor], norm_type: float, error_if_nonfinite: bool, op: str) -> Tensor:
    ts = [tensors] if isinstance(tensors, Tensor) else [t for t in tensors if t is not None]
    norm_type = float(norm_type)
    if not ts:
        return Tensor(0.0)
    with no_grad():
        norms = [_norm(t, norm_type) for t in ts]
        dev = ts[0]._dev
        norms = [n if n._dev is dev else n.to(dev) for n in norms]  # summed on the first tensor's device
        total = _norm(stack(norms), norm_type) if len(norms) > 1 or norm_type == 0.0 else norms[0]
    if error_if_nonfinite:
        check_host_read(total, op)  # (a Python decision on a value: a replay would not make it again)
        if not math.isfinite(float(total)):
            raise RuntimeError(
                f"{op}: the total norm of order {norm_type} of the gradients is {float(total)}, non-finite, so it "
                "cannot be clipped; set error_if_nonfinite=False to clip anyway"
            )
    return total


def clip_grads_with_norm_(parameters: Tensor | Iterable[Tensor], max_norm: float, total_norm: Tensor,
                          foreach: bool | None = None) -> None:  # fmt: skip
    """Scale the parameters' gradients, in place, by ``clamp(max_norm / (total_norm + 1e-6), max=1)``,
    as ``torch.nn.utils.clip_grads_with_norm_`` (``total_norm`` from :func:`get_total_norm`)."""
    params = _with_grads(parameters, "clip_grads_with_norm_")
    if not params:
        return
    with no_grad():
        coef = (float(max_norm) / (total_norm + 1e-6)).clamp(max=1.0)
        for p in params:  # in place, as PyTorch's: a tensor holding a .grad sees it clipped
            p.grad.mul_(coef if p.grad._dev is coef._dev else coef.to(p.grad._dev))


def clip_grad_norm_(parameters: Tensor | Iterable[Tensor], max_norm: float, norm_type: float = 2.0,
                    error_if_nonfinite: bool = False, foreach: bool | None = None) -> Tensor:  # fmt: skip
    """Scale all gradients together, in place, so that their joint norm is at most ``max_norm``.

    As ``torch.nn.utils.clip_grad_norm_``: the joint norm is the norm of the per-tensor
    norms (:func:`get_total_norm`); every gradient is multiplied by
    ``clamp(max_norm / (total + 1e-6), max=1)`` (:func:`clip_grads_with_norm_`: a gradient under
    the limit is left as it is); returns ``total``, the norm before clipping, as a 0-d tensor.
    Each ``.grad`` is scaled in its own memory, as PyTorch's. ``error_if_nonfinite=True`` raises
    ``RuntimeError`` when it is inf or NaN (which reads it on the host). ``foreach`` is accepted and ignored.

    >>> total = clip_grad_norm_(model.parameters(), 1.0)  # doctest: +SKIP
    """
    params = _with_grads(parameters, "clip_grad_norm_")
    total = _total_norm([p.grad for p in params], norm_type, error_if_nonfinite, "clip_grad_norm_")
    clip_grads_with_norm_(params, max_norm, total)
    return total


def clip_grad_norm(parameters: Tensor | Iterable[Tensor], max_norm: float, norm_type: float = 2.0,
                   error_if_nonfinite: bool = False, foreach: bool | None = None) -> Tensor:  # fmt: skip
    """:func:`clip_grad_norm_` under its deprecated name (with PyTorch's FutureWarning)."""
    warn(
        "`torch.nn.utils.clip_grad_norm` is now deprecated in favor of `torch.nn.utils.clip_grad_norm_`.",
        FutureWarning,
    )
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


def clip_grad_value_(parameters: Tensor | Iterable[Tensor], clip_value: float, foreach: bool | None = None) -> None:
    """Clamp every gradient, in place, to ``[-clip_value, clip_value]``."""
    v = float(clip_value)
    params = _with_grads(parameters, "clip_grad_value_")
    if not params:  # (PyTorch groups the gradients by device first, and its grouping refuses an empty list)
        raise RuntimeError("clip_grad_value_: no parameter has a gradient (PyTorch refuses an empty list of them)")
    with no_grad():
        for p in params:
            p.grad.clamp_(-v, v)
