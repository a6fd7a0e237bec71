"""Reductions over axes: ``args`` is ``(axis, keepdims)`` with ``axis`` a tuple or None."""

from __future__ import annotations

from ..engine.function import Function


def _keepdims_shape(shape: tuple, axis: tuple | None) -> tuple:
    if axis is None:
        return (1,) * len(shape)
    return tuple(1 if i in axis else s for i, s in enumerate(shape))


class Sum(Function):
    __slots__ = ()
    primitive = True
    reads_values = False  # backward reads shapes only
    args_label = "axes"  # pictures: the line that says which axes
    reads_output = False

    def forward(self, ns, a):
        axis, keepdims = self.args
        return ns.sum(a, axis=axis, keepdims=keepdims)

    def backward(self, g, ns, inputs, out):
        shape = tuple(inputs[0].shape)
        axis, keepdims = self.args
        if not keepdims:
            g = ns.reshape(g, _keepdims_shape(shape, axis))
        return (ns.broadcast_to(g, shape),)


class Max(Function):
    """Max over axes; tied maxima share the gradient equally."""

    __slots__ = ()
    primitive = True
    args_label = "axes"  # pictures: the line that says which axes
    pick = "max"

    def forward(self, ns, a):
        axis, keepdims = self.args
        return getattr(ns, self.pick)(a, axis=axis, keepdims=keepdims)

    def backward(self, g, ns, inputs, out):
        a = inputs[0]
        shape = tuple(a.shape)
        axis, keepdims = self.args
        if not keepdims:
            kshape = _keepdims_shape(shape, axis)
            g = ns.reshape(g, kshape)
            out = ns.reshape(out, kshape)
        hit = ns.astype(a == out, g.dtype)
        return (hit * (g / ns.sum(hit, axis=axis, keepdims=True)),)


class Min(Max):
    __slots__ = ()
    primitive = True
    pick = "min"
