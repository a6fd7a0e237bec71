"""Shape primitives: views and copies that move elements without changing them."""

from __future__ import annotations

import functools

from ..engine.backward import SliceGradient
from ..engine.function import Function


class Reshape(Function):
    __slots__ = ()
    primitive = True
    view = True  # the result may share the input's memory
    reads_values = False  # backward reads shapes only
    reads_output = False

    def forward(self, xp, a):
        return xp.reshape(a, self.args)

    def backward(self, g, ns, inputs, out):
        return (ns.reshape(g, tuple(inputs[0].shape)),)


class Permute(Function):
    __slots__ = ()
    primitive = True
    view = True  # the result may share the input's memory
    reads_values = False  # backward reads shapes only
    args_label = "axes"
    reads_output = False

    def forward(self, xp, a):
        return xp.permute_dims(a, self.args)

    def backward(self, g, ns, inputs, out):
        return (ns.permute_dims(g, _inverse(self.args)),)


class Transpose(Permute):
    """``x.transpose(a, b)``: a permute that swaps two axes, drawn under the name the user wrote."""

    __slots__ = ()
    name = "transpose"

    @staticmethod
    def describe_args(perm: tuple[int, ...]) -> str:
        return "swap axes " + " ↔ ".join(str(i) for i, p in enumerate(perm) if i != p)


class MatrixTranspose(Transpose):
    """``x.mT``: the last two axes swapped."""

    __slots__ = ()
    name = "mT"


class TwoDTranspose(Transpose):
    """``x.T`` of a matrix."""

    __slots__ = ()
    name = "T"


@functools.cache
def _inverse(axes: tuple[int, ...]) -> tuple[int, ...]:
    """The permutation that undoes ``axes`` (cached: a model permutes the same few ways)."""
    inverse = [0] * len(axes)
    for i, ax in enumerate(axes):
        inverse[ax] = i
    return tuple(inverse)


class Expand(Function):
    """Broadcast to a larger shape; the engine sums the gradient back."""

    __slots__ = ()
    primitive = True
    view = True  # the result may share the input's memory
    reads_values = False  # backward reads shapes only
    reads_output = False

    def forward(self, xp, a):
        return xp.broadcast_to(a, self.args)

    def backward(self, g, ns, inputs, out):
        return (g,)


class Slice(Function):
    """Basic indexing ``x[key]``: ints, slices and ``...`` (no ``None``, no arrays)."""

    __slots__ = ()
    primitive = True
    view = True  # the result may share the input's memory
    reads_values = False  # backward reads shapes only
    reads_output = False
    name = "getitem"

    def forward(self, xp, a):
        return a[self.args]

    def backward(self, g, ns, inputs, out):
        if ns.recording:  # a recorded gradient: the SliceGrad op
            return (ns.slice_grad(g, tuple(inputs[0].shape), self.args),)
        return (SliceGradient(g, tuple(inputs[0].shape), self.args, ns),)


class SliceGrad(Function):
    """Zeros of ``shape`` with ``g`` written at ``key``: the adjoint of :class:`Slice`."""

    __slots__ = ()
    primitive = True
    reads_values = False  # backward reads shapes only
    name = "slice_backward"

    def forward(self, xp, g):
        shape, key = self.args
        return xp.slice_grad(g, shape, key)

    def backward(self, g, ns, inputs, out):
        return (g[self.args[1]],)


class Cat(Function):
    """Join along ``axis`` (``args``); each input's gradient is its slice of ``g``."""

    __slots__ = ()
    primitive = True
    reads_values = False  # backward reads shapes only
    args_label = "axis"
    reads_output = False

    def forward(self, xp, *arrays):
        return xp.concat(arrays, axis=self.args)

    def backward(self, g, ns, inputs, out):
        axis = self.args
        grads, start = [], 0
        lead = (slice(None),) * (axis % g.ndim)
        for x in inputs:
            n = x.shape[axis]
            grads.append(g[lead + (slice(start, start + n), Ellipsis)])
            start += n
        return grads
