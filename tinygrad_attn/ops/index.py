"""Integer-array indexing: a gather and its adjoint, a scatter-add."""

from __future__ import annotations

from ..engine.function import Function


class Gather(Function):
    """``take`` along ``axis`` with an integer index array of any shape.

    ``args = (axis, index)``; the output has the index's shape in place of ``axis``.
    """

    __slots__ = ()
    primitive = True
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
    primitive = True
    reads_values = False  # backward reads shapes only
    name = "scatter_add"

    def forward(self, xp, g):
        shape, axis, index = self.args
        return xp.scatter_add(g, shape, axis, index)

    def backward(self, g, ns, inputs, out):
        shape, axis, index = self.args
        return (ns.gather(g, axis, index),)


# -- an index read at each replay: the index as an input, not an argument ---------------
class Take(Function):
    """:class:`Gather` with the index as the op's second input, so that a traced program
    reads it at each replay (``W[ids]``, ``logits[arange, y]`` with tensor indices while
    tracing). ``args = axis``; inputs ``(a, index)``; the index gets no gradient."""

    __slots__ = ()
    keep = (1,)  # backward reads the index only
    reads_output = False
    name = "take"

    def forward(self, xp, a, index):
        return xp.gather(a, self.args, index)

    def backward(self, g, ns, inputs, out):
        index = inputs[1]
        shape = tuple(inputs[0].shape)
        return ns.apply(PutAdd, g, index, args=(shape, self.args)), None  # the adjoint op


class PutAdd(Function):
    """Zeros of ``shape`` with ``g`` summed in at ``index`` along ``axis``, the index an
    input: the adjoint of :class:`Take`. ``args = (shape, axis)``; inputs ``(g, index)``."""

    __slots__ = ()
    keep = (1,)
    reads_output = False
    name = "put_add"

    def forward(self, xp, g, index):
        shape, axis = self.args
        return xp.scatter_add(g, shape, axis, index)

    def backward(self, g, ns, inputs, out):
        index = inputs[1]
        return ns.apply(Take, g, index, args=self.args[1]), None
