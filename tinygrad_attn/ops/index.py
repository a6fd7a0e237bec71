"""Integer-array indexing: a gather and its adjoint, a scatter-add."""

from __future__ import annotations

from ..autograd import Function


class Gather(Function):
    """``take`` along ``axis`` with an integer index array of any shape.

    ``args = (axis, index)``; the output has the index's shape in place of ``axis``.
    """

    __slots__ = ()
    reads_values = False  # backward reads shapes only

    def forward(self, xp, a):
        axis, index = self.args
        return xp.gather(a, axis, index)

    def backward(self, g, ns, inputs, out):
        axis, index = self.args
        return (ns.scatter_add(g, tuple(inputs[0].shape), axis, index),)


class ScatterAdd(Function):
    """Zeros of ``shape`` with ``g`` summed in at ``index`` along ``axis``: the adjoint of
    :class:`Gather`. ``args = (shape, axis, index)``."""

    __slots__ = ()
    reads_values = False  # backward reads shapes only
    name = "scatter_add"

    def forward(self, xp, g):
        shape, axis, index = self.args
        return xp.scatter_add(g, shape, axis, index)

    def backward(self, g, ns, inputs, out):
        shape, axis, index = self.args
        return (ns.gather(g, axis, index),)
