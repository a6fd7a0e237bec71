"""Sine and cosine: each the other's derivative."""

from __future__ import annotations

from ..engine.function import Function


class Sin(Function):
    __slots__ = ()
    primitive = True
    elementwise = "sin({0})"
    reads_output = False

    def forward(self, ns, a):
        return ns.device.xp.sin(a)

    def backward(self, g, ns, inputs, out):
        return (g * _cos(ns, inputs[0]),)


class Cos(Function):
    __slots__ = ()
    primitive = True
    elementwise = "cos({0})"
    reads_output = False

    def forward(self, ns, a):
        return ns.device.xp.cos(a)

    def backward(self, g, ns, inputs, out):
        return (-(g * _sin(ns, inputs[0])),)


class Tan(Function):
    """The tangent in one node: its derivative ``1 + tan^2`` reads the output only, as
    PyTorch's does, so the input may change in place before the backward (not the output)."""

    __slots__ = ()
    primitive = True
    elementwise = "tan({0})"
    keep = ()

    def forward(self, ns, a):
        return ns.device.xp.tan(a)

    def backward(self, g, ns, inputs, out):
        return (g + g * out * out,)


def _sin(ns, a):
    # (the op itself: recorded under create_graph, its forward on arrays otherwise)
    return ns.apply(Sin, a)


def _cos(ns, a):
    return ns.apply(Cos, a)
