"""PyTorch's ``gather`` and its adjoint, with the index as an input (not an argument).

``out[i][j] = x[index[i][j]][j]`` for ``dim=0``: every output element reads ``x`` at its
own coordinates, except along ``dim``, where ``index`` says where. Unlike
:class:`~tinygrad_attn.ops.index.Gather`, whose index is fixed with the op, here the
index is the op's second input, so an index computed from the data (``sort``, ``topk``,
``max(dim=)``) is recomputed wherever the op is replayed (``tga.jit.trace``, ``tga.compile``).
The index gets no gradient.
"""

from __future__ import annotations

import math

import numpy as np

from ..engine.function import Function


def flat_positions(ns, shape: tuple, dim: int, index):
    """The positions in ``x.reshape(-1)`` (``x`` of ``shape``) that ``gather`` reads:
    ``index`` along ``dim``, each element's own coordinate along the other axes."""
    dev = ns.device
    nd = len(shape)
    strides = [math.prod(shape[d + 1 :]) for d in range(nd)]
    flat = ns.astype(index, dev.dtype(np.int64)) * strides[dim]
    for d in range(nd):
        if d != dim and index.shape[d] > 1:
            coord = dev.asarray(np.arange(index.shape[d]).reshape([-1 if k == d else 1 for k in range(nd)]))
            flat = flat + coord * strides[d]
    return flat


class GatherAlong(Function):
    """``args = (dim, shape of x)``; inputs ``(x, index)``; the output has the index's shape."""

    __slots__ = ()
    no_edge = (1,)  # (the index is no edge of PyTorch's node)
    primitive = True
    keep = (1,)  # backward reads the index only (x's shape is in args)
    reads_output = False
    name = "gather_along"

    @staticmethod
    def take(ns, a, index, dim: int, shape: tuple):
        return ns.gather(ns.reshape(a, (-1,)), 0, flat_positions(ns, shape, dim, index))

    def forward(self, ns, a, index):
        dim, shape = self.args
        return self.take(ns, a, index, dim, shape)

    def backward(self, g, ns, inputs, out):
        dim, shape = self.args
        index = inputs[1]
        return ns.apply(ScatterAddAlong, g, index, args=(dim, shape)), None  # the adjoint op


class ScatterAddAlong(Function):
    """Zeros of ``shape`` with ``g`` (the index's shape) summed in where ``gather`` would
    read: the adjoint of :class:`GatherAlong`. ``args = (dim, shape)``; inputs ``(g, index)``."""

    __slots__ = ()
    no_edge = (1,)  # (the index is no edge of PyTorch's node)
    primitive = True
    keep = (1,)
    reads_output = False
    name = "scatter_add_along"

    @staticmethod
    def scatter(ns, g, index, dim: int, shape: tuple):
        flat = flat_positions(ns, shape, dim, index)
        return ns.reshape(ns.scatter_add(g, (math.prod(shape),), 0, flat), shape)

    def forward(self, ns, g, index):
        dim, shape = self.args
        return self.scatter(ns, g, index, dim, shape)

    def backward(self, g, ns, inputs, out):
        dim, shape = self.args
        index = inputs[1]
        return ns.apply(GatherAlong, g, index, args=(dim, shape)), None
