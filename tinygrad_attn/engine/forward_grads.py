"""Forward-mode AD (PyTorch's ``torch.autograd.forward_ad``): the tangent of each dual tensor at the one
dual level, and the rule that gives every op's output its tangent.

The rule needs no forward formula per op: an op's gradient ``vjp(u) = J^T u`` is linear in ``u``, so the
Jacobian-vector product is the gradient of ``<vjp(u), t>`` with respect to ``u``:
``J t = d/du sum(vjp(u) * t)`` (for complex tensors ``Re sum(vjp(u) * conj(t))``, PyTorch's conjugate
convention). An op whose PyTorch forward formula is not the transpose of its backward one (logcumsumexp,
through logs of ``|u|``) gives its own as ``forward_derivative(inputs, tangents, out)``. :class:`ForwardGrads`, installed by :func:`enter_level` as the observer of the thread's ops
(``engine/switches.py``), records each op that reads a dual tensor once more, from stand-ins of its inputs, and
takes those two gradients of the record. Every op passes through ``Function.apply``, so every op, fused or
written from others, has its tangent; in-place writes carry theirs through :meth:`ForwardGrads.write`.

A tangent is itself differentiable where PyTorch's is: it depends on the inputs that require grad (grad mode on).
"""

from __future__ import annotations

import weakref
from contextlib import AbstractContextManager
from typing import Any

from . import function as _function
from .backward import run_backward
from .switches import Hook, _State, enable_grad, observing

#: The current dual level (PyTorch allows one at a time and numbers it 0), or -1 where there is none.
_level = -1
#: id(tensor) -> (a weak reference to it, its tangent) at the current level.
_tangents: dict[int, tuple[weakref.ref, Any]] = {}
_installed: AbstractContextManager[Hook] | None = None
#: Nonzero while a tangent is being computed: the ops it runs read no tangents themselves.
_busy = 0


def current_level() -> int:
    return _level


def tangent_of(t: Any) -> Any:
    """``t``'s tangent at the current level, or None."""
    if not _tangents:
        return None
    entry = _tangents.get(id(t))
    return entry[1] if entry is not None and entry[0]() is t else None


def set_tangent(t: Any, tangent: Any) -> None:
    key = id(t)

    def forget(ref: weakref.ref, key: int = key) -> None:
        entry = _tangents.get(key)
        if entry is not None and entry[0] is ref:
            del _tangents[key]

    _tangents[key] = (weakref.ref(t, forget), tangent)


class suspended:
    """Inside, ops propagate no tangents (the steps of a tangent, a custom Function's forward)."""

    def __enter__(self) -> None:
        global _busy
        _busy += 1

    def __exit__(self, *exc: Any) -> None:
        global _busy
        _busy -= 1


def enter_level() -> int:
    global _level, _installed
    if _level >= 0:
        raise RuntimeError("Nested forward mode AD is not supported at the moment")
    _installed = observing(ForwardGrads())
    _installed.__enter__()
    _level = 0
    return _level


def exit_level(level: int | None = None) -> None:
    global _level, _installed
    level = _level if level is None else level
    if level < 0:
        raise RuntimeError("Dual level must be a positive number.")
    if level != _level:
        raise RuntimeError("Trying to exit a forward AD level that was not the last one that was created. This is "
                           "not supported.")  # fmt: skip
    _tangents.clear()
    _level = -1
    installed, _installed = _installed, None
    if installed is not None:
        installed.__exit__(None, None, None)


def _is_inexact(t: Any) -> bool:
    return t._dev.np_dtype(t._data.dtype).kind in "fc"


class ForwardGrads(Hook):
    """The observer that gives each op's output its tangent while a dual level is open."""

    def op(self, fn: Any, inputs: Any, out: Any) -> None:
        if not _busy and _tangents and fn.differentiable and _is_inexact(out):
            duals = [(i, tan) for i, t in enumerate(inputs) if (tan := tangent_of(t)) is not None]
            if duals:
                set_tangent(out, jvp_of(fn, inputs, out, duals))
        super().op(fn, inputs, out)

    def write(self, t: Any, key: Any, value: Any) -> None:
        if not _busy and _tangents:
            _written(t, key, value)
        super().write(t, key, value)


def _written(t: Any, key: Any, value: Any) -> None:
    """``t``'s tangent after ``value`` is written into it (at ``key``; ``None``: all of it)."""
    T = _function.Tensor
    mine, theirs = tangent_of(t), (tangent_of(value) if isinstance(value, T) else None)
    if mine is None and theirs is None or not _is_inexact(t):
        return
    with suspended():
        if key is None:
            new = theirs if theirs is not None else mine.new_zeros(mine.shape)
        else:
            new = mine.clone() if mine is not None else T._wrap(t._dev.ops.zeros_like(t._data), t._dev)
            new[key] = theirs if theirs is not None else 0
    set_tangent(t, new)
    _through_views(t, new)


def _view_op(t: Any) -> Any:
    """The view op ``t`` shows its base through (recorded, or remembered by an unrecorded view), or None."""
    c = t._ctx
    if c is None:
        return getattr(t, "_base", None)
    if c.rebases:  # (a view written through: the view op under its InPlace node)
        c = c.inputs[0]._ctx
    return c if c is not None and c.view else None


def _through_views(t: Any, new: Any) -> None:
    """A write into a view changes its base: each base up the chain takes ``new`` as the tangent of the part the
    view shows (``c[0].mul_(2)`` doubles that row of ``c``'s tangent, as PyTorch's views of one tangent do)."""
    T = _function.Tensor
    v = _view_op(t)
    while v is not None and isinstance(v.inputs[0], T) and _is_inexact(v.inputs[0]):
        base = v.inputs[0]
        with suspended():
            mine = tangent_of(base)
            whole = mine.clone() if mine is not None else T._wrap(base._dev.ops.zeros_like(base._data), base._dev)
            part = type(v).apply(whole, args=v.args)  # (the same view of the base's tangent: its memory)
            part.copy_(new.to(part.dtype))
        set_tangent(base, whole)
        new, v = whole, _view_op(base)


def jvp_of(fn: Any, inputs: Any, out: Any, duals: list[tuple[int, Any]]) -> Any:
    """The tangent of ``out``, which ``fn`` made from ``inputs``, where input ``i`` has tangent ``tan`` for each
    ``(i, tan)`` of ``duals``: ``fn`` recorded again from stand-ins, its gradient transposed (module docstring)."""
    T = _function.Tensor
    if (rule := getattr(fn, "forward_derivative", None)) is not None:  # (an op whose PyTorch formula is its own)
        tangents = [None] * len(inputs)
        for i, tan in duals:
            tangents[i] = tan
        with suspended():
            return rule(inputs, tangents, out)
    keep = _State.grad_enabled and (any(isinstance(t, T) and t._requires_grad for t in inputs)
                                    or any(tan._requires_grad for _, tan in duals))  # fmt: skip
    with suspended(), enable_grad():
        stand = list(inputs)
        for i, _ in duals:
            t = inputs[i]
            stand[i] = t.view_as(t) if t._requires_grad else T._wrap(t._data, t._dev).requires_grad_()
        record = _function._new(type(fn))
        record.args, record.ctx, record.scope = fn.args, fn.ctx, None
        record.inputs = stand
        record.saved = [x._data if isinstance(x, T) else x for x in stand]
        record.seq = _function._next_seq()
        for x in stand:
            if isinstance(x, T) and x._requires_grad:
                x._uses += 1
        o = T._wrap(out._data, out._dev)
        o._requires_grad, o._ctx = True, record
        u = T._wrap(out._dev.ops.zeros_like(out._data), out._dev).requires_grad_()
        targets = [stand[i] for i, _ in duals]
        grads = run_backward([o], [u], retain_graph=True, create_graph=True, targets=targets, stop_at_targets=True)
        total = None
        for g, (_, tan) in zip(grads or (), duals):
            if g is None:
                continue
            term = (g * tan).sum() if not g.is_complex() else (g * tan.conj()).real.sum()
            total = term if total is None else total + term
        if total is None or not total._requires_grad:
            return T._wrap(out._dev.ops.zeros_like(out._data), out._dev)
        one = T._wrap(total._dev.ops.ones_like(total._data), total._dev)
        (jvp,) = run_backward([total], [one], retain_graph=True, create_graph=keep, targets=[u], stop_at_targets=True)
    if jvp is None:
        return T._wrap(out._dev.ops.zeros_like(out._data), out._dev)
    jvp = jvp if isinstance(jvp, T) else T._wrap(jvp, out._dev)
    wide = [tan.dtype for i, tan in duals if tan.dtype.itemsize > max(inputs[i].dtype.itemsize, jvp.dtype.itemsize)]
    if wide:  # (a float64 tangent of a float32 primal: PyTorch's formulas compute, and keep, the wider dtype)
        with suspended():
            jvp = jvp.to(max(wide, key=lambda d: d.itemsize))
    if keep and not jvp._requires_grad and _zero_link is not None and _reads_primals(fn):
        with suspended():
            return _zero_link(jvp, *[t for t in inputs if isinstance(t, T) and t._requires_grad])
    return jvp


def _reads_primals(fn: Any) -> bool:
    """Whether the op the user called (``fn``, or the composite ``fn`` is a step of: a mean's product by
    ``1/n`` is the mean's, whose formula reads no primal) is one of :data:`READS_PRIMALS`."""
    scope = _State.scope
    return (fn.op_name if scope is None or scope.kind != "composite" else scope.name) in READS_PRIMALS


#: The ops whose PyTorch forward formula reads their primals (or result) where the tangent does not depend on
#: them in value: a product by a constant (``other_t * self_p + self_t * other_p``, a zero tangent in place of a
#: missing one), a step (``threshold_backward(self_t, result)``). Their tangent requires grad where an input does.
READS_PRIMALS = frozenset(
    "mul div matmul relu fmod remainder hardtanh relu6 leaky_relu hardsigmoid threshold margin_ranking_loss".split()
)
#: ``ops.saved.ZeroDerivative``'s apply (the engine imports no op): a value linked to tensors with derivative 0.
_zero_link: Any = None


def register_zero_link(link: Any) -> None:
    global _zero_link
    _zero_link = link


def differentiated(t: Any) -> bool:
    """Whether an op must record its steps for ``t``: ``t`` requires grad or carries a tangent. (A fast path
    that computes on the arrays alone, for a tensor neither, would leave a dual tensor's tangent behind.)"""
    return t._requires_grad or (bool(_tangents) and tangent_of(t) is not None)


def refuse_tangents(kernel: str, *tensors: Any) -> None:
    """PyTorch's error for an op whose kernel ``kernel`` has no forward formula there (``cdist``, ``pdist``,
    ``grid_sample``, the CPU flash attention...), where one of ``tensors`` is a dual tensor: forward-mode AD raises
    for it, as PyTorch's does, rather than computing a tangent PyTorch has none of."""
    if _tangents and any(tangent_of(t) is not None for t in tensors):
        raise NotImplementedError(f"Trying to use forward AD with {kernel} that does not support it because it has "
                                  "not been implemented yet.")  # fmt: skip
