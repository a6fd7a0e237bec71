"""Integer-array indexing: a gather and its adjoint, a scatter-add; a put (``x[idx] = v``)."""

from __future__ import annotations

from ..engine.function import Function


class Gather(Function):
    """``take`` along ``axis`` with an integer index array of any shape.

    ``args = (axis, index)``; the output has the index's shape in place of ``axis``.
    """

    __slots__ = ()
    primitive = True
    reads_values = False  # backward reads shapes only

    def forward(self, ns, a):
        axis, index = self.args
        return ns.gather(a, axis, index)

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

    def forward(self, ns, g):
        shape, axis, index = self.args
        return ns.scatter_add(g, shape, axis, index)

    def backward(self, g, ns, inputs, out):
        shape, axis, index = self.args
        return (ns.gather(g, axis, index),)


# -- an index read at each replay: the index as an input, not an argument ---------------
class Take(Function):
    """:class:`Gather` with the index as the op's second input, so that a traced program
    reads it at each replay (``W[ids]``, ``logits[arange, y]`` with tensor indices while
    tracing). ``args = axis``; inputs ``(a, index)``; the index gets no gradient."""

    __slots__ = ()
    no_edge = (1,)  # (the index is no edge of PyTorch's node)
    keep = (1,)  # backward reads the index only
    reads_output = False
    name = "take"

    def forward(self, ns, a, index):
        return ns.gather(a, self.args, index)

    def backward(self, g, ns, inputs, out):
        index = inputs[1]
        shape = tuple(inputs[0].shape)
        return ns.apply(PutAdd, g, index, args=(shape, self.args)), None  # the adjoint op


class PutAdd(Function):
    """Zeros of ``shape`` with ``g`` summed in at ``index`` along ``axis``, the index an
    input: the adjoint of :class:`Take`. ``args = (shape, axis)``; inputs ``(g, index)``."""

    __slots__ = ()
    no_edge = (1,)  # (the index is no edge of PyTorch's node)
    keep = (1,)
    reads_output = False
    name = "put_add"

    def forward(self, ns, g, index):
        shape, axis = self.args
        return ns.scatter_add(g, shape, axis, index)

    def backward(self, g, ns, inputs, out):
        index = inputs[1]
        return ns.apply(Take, g, index, args=self.args[1]), None


class Put(Function):
    """``x`` (1-D) with ``v`` written at the positions ``index`` (1-D, each in
    ``0..len(x)-1``): a new array. Where a position is given more than once the last write
    stays, as NumPy's ``a[idx] = v`` stores. ``v`` has ``index``'s shape, or is a number;
    inputs ``(x, v, index)``, the index an input so that a traced program reads it at each
    replay. What ``x[idx] = v`` records with an index array or mask, eager and traced alike.

    The gradient of ``x`` is ``g`` with zeros at the written positions; that of ``v`` is
    ``g`` gathered at ``index``, for every write, kept or not (as PyTorch's ``index_put_``;
    for a write a later one overwrites, that is not the derivative, which is 0).
    Both are this op and :class:`Take` again, so differentiable to any order.
    """

    __slots__ = ()
    keep = (2,)  # backward reads the index only
    reads_output = False
    name = "put"

    def forward(self, ns, x, v, index):
        return put_array(ns, x, v, index)

    def backward(self, g, ns, inputs, out):
        index = inputs[2]
        gv = None if inputs[1].__class__ in (int, float, bool) else ns.apply(Take, g, index, args=0)
        return ns.apply(Put, g, 0.0, index), gv, None


def put_array(ns, x, v, index):
    """:class:`Put`'s forward on arrays of the namespace ``ns``."""
    out = ns.copy(x)
    if not index.shape[0]:
        return out
    pos, which = _last_writes(ns, index)
    number = not hasattr(v, "shape")
    if not number:
        if v.dtype != x.dtype:
            v = ns.astype(v, x.dtype)
        v = ns.take(v, which, axis=0)  # (one value per written position)
    dev = ns.device
    if hasattr(dev.xp, "copyto"):  # NumPy, CuPy: a store at distinct positions
        out[pos] = v
        return out
    # (array_api_strict stores at no index array: the values summed into zeros at their
    # distinct positions, then selected where written)
    ones = ns.ones_like(pos, dtype=x.dtype)
    hit = dev.index_add(tuple(x.shape), 0, pos, ones) > 0
    placed = dev.index_add(tuple(x.shape), 0, pos, ones * v if number else v)
    return ns.where(hit, placed, out)


def _last_writes(ns, index):
    """The distinct positions of ``index`` (1-D), each with where in ``index`` its last
    write is: ``(positions, which)``."""
    raw = ns.device.xp
    try:
        order = raw.argsort(index, stable=True)  # (stable: equal positions keep their order)
    except TypeError:  # (CuPy: no such argument; its sort is stable)
        order = raw.argsort(index)
    ordered = ns.take(index, order, axis=0)
    last = ns.concat((ordered[1:] != ordered[:-1], ordered[-1:] == ordered[-1:]))  # the end of each run
    return ordered[last], order[last]
