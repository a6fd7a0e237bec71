"""Reductions over axes: ``args`` is ``(axis, keepdims)`` with ``axis`` a tuple or None."""

from __future__ import annotations

import math

import numpy as np

from ..engine import function as _function
from ..engine.function import Function
from ..engine.layout import row_major_array
from ..engine.switches import no_grad


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
        return row_major_array(ns.sum(a, axis=axis, keepdims=keepdims))

    def backward(self, g, ns, inputs, out):
        shape = tuple(inputs[0].shape)
        axis, keepdims = self.args
        if not keepdims:
            g = ns.reshape(g, _keepdims_shape(shape, axis))
        return (ns.broadcast_to(g, shape),)


class Max(Function):
    """Max over axes (``args``: the axes, None for every entry as ``max()``'s, and keepdims); tied
    maxima share the gradient equally (where the max is NaN, ``max()``'s NaNs do; ``amax``'s gradient
    is then NaN, as PyTorch's)."""

    __slots__ = ()
    primitive = True
    args_label = "axes"  # pictures: the line that says which axes
    pick = "max"

    def forward(self, ns, a):
        axis, keepdims = self.args
        return row_major_array(getattr(ns, self.pick)(a, axis=axis, keepdims=keepdims))

    def backward(self, g, ns, inputs, out):
        a = inputs[0]
        shape = tuple(a.shape)
        axis, keepdims = self.args
        if not keepdims:
            kshape = _keepdims_shape(shape, axis)
            g = ns.reshape(g, kshape)
            out = ns.reshape(out, kshape)
        hit = a == out
        if axis is None:  # (max()/min() of every entry: PyTorch's even split, among the NaNs of a NaN result too)
            hit = hit | ((a != a) & (out != out))
        hit = ns.astype(hit, g.dtype)
        return (hit * (g / ns.sum(hit, axis=axis, keepdims=True)),)


class Min(Max):
    __slots__ = ()
    primitive = True
    pick = "min"


class Norm2(Function):
    """The 2-norm over axes, ``sqrt(sum(x * x))``, with PyTorch's gradient formula
    ``g * (x / norm)``, 0 where the norm is 0. Its own derivative is then PyTorch's too: at a
    zero norm NaN, the masked side's 0 / 0 (the function is not twice differentiable there).
    NumPy's warnings about that side are silenced."""

    __slots__ = ()
    args_label = "axes"
    name = "norm2"

    def forward(self, ns, a):
        axis, keepdims = self.args
        return ns.sqrt(ns.sum(a * a, axis=axis, keepdims=keepdims))

    def backward(self, g, ns, inputs, out):
        a = inputs[0]
        axis, keepdims = self.args
        if not keepdims:
            kshape = _keepdims_shape(tuple(a.shape), axis)
            g, out = ns.reshape(g, kshape), ns.reshape(out, kshape)
        with np.errstate(divide="ignore", invalid="ignore"):
            return (g * ns.where(out == 0, 0.0, a / out),)


class Renorm(Function):
    """``x`` with each slice (over the axes ``others``) whose ``p``-norm exceeds ``maxnorm`` scaled
    by ``maxnorm / (norm + 1e-7)`` (``args = (p, others, maxnorm)``), as PyTorch's ``renorm``. Its
    gradient is PyTorch's ``renorm_backward``, written in tensor ops
    (:func:`~tinygrad_attn.tensors.elementwise.special_functions.renorm_gradient`), so that recorded
    its own derivative is PyTorch's too (NaN at a zero slice, as there)."""

    __slots__ = ()
    name = "renorm"
    keep = (0,)
    reads_output = False
    conjugate_backward = False  # (renorm_backward is PyTorch's complex formula as it stands: not holomorphic)

    def forward(self, ns, x):
        p, others, maxnorm = self.args
        a = ns.abs(x)
        with np.errstate(over="ignore"):
            if not others:
                norm = a
            elif p == math.inf:
                norm = ns.max(a, axis=others, keepdims=True)
            elif p == 2:
                norm = ns.sqrt(ns.sum(a * a, axis=others, keepdims=True))
            else:
                norm = ns.sum(a**p, axis=others, keepdims=True) ** (1.0 / p)
        factor = ns.where(norm > maxnorm, maxnorm / (norm + 1e-7), 1.0)
        return x * ns.astype(factor, x.dtype)

    def backward(self, g, ns, inputs, out):
        from ..tensors.elementwise.special_functions import renorm_gradient  # noqa: PLC0415 - built on the ops

        p, others, maxnorm = self.args
        x = inputs[0]
        with np.errstate(divide="ignore", invalid="ignore"):  # (a zero slice's masked 0 / 0, as PyTorch's)
            if ns.recording:
                return (renorm_gradient(g, x, p, others, maxnorm),)
            wrap = _function.Tensor._wrap
            with no_grad():
                return (renorm_gradient(wrap(g, ns.device), wrap(x, ns.device), p, others, maxnorm)._data,)


class VarianceWithoutFreedom(Function):
    """The variance over ``axis`` with no degree of freedom left (``N - correction <= 0``):
    ``args = (axis, keepdims, dof)``. Its value is ``sum((x - mean)**2)`` times inf (NaN where
    the spread is 0), PyTorch's clamped divisor; its gradient PyTorch's unclamped formula
    ``(2 / dof) * g * (x - mean)`` in tensor ops, so that recorded it is differentiated as
    PyTorch's: ``(2 / dof) * g * (1 - 1 / N)`` on the diagonal, +-inf or NaN for ``dof = 0``."""

    __slots__ = ()
    name = "var"
    keep = (0,)
    reads_output = False

    def forward(self, ns, a):
        xp = ns.device.xp
        axis, keepdims, _ = self.args
        count = math.prod(a.shape[i] for i in axis)
        with np.errstate(invalid="ignore", divide="ignore"):  # (an empty axis: NaN, as PyTorch's)
            d = a - xp.sum(a, axis=axis, keepdims=True) / count
            return xp.sum(d * d, axis=axis, keepdims=keepdims) * math.inf

    def backward(self, g, ns, inputs, out):
        axis, keepdims, dof = self.args

        def formula(g, x):
            if not keepdims:
                g = g.reshape(_keepdims_shape(tuple(x.shape), axis))
            return ((2.0 / dof if dof else math.inf) * g) * (x - x.mean(axis, keepdims=True))

        with np.errstate(invalid="ignore", divide="ignore"):
            if ns.recording:
                return (formula(g, inputs[0]),)
            wrap = _function.Tensor._wrap
            with no_grad():
                return (formula(wrap(g, ns.device), wrap(inputs[0], ns.device))._data,)
