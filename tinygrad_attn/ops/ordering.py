"""Indices that depend on the values: argsort and argmax/argmin along one axis.

Ops (not plain array calls) so that a traced program recomputes them on new inputs.
They carry no gradient; ``sort``, ``topk`` and ``max(dim=)`` gather the values by them
(:class:`~tinygrad_attn.ops.gather_along.GatherAlong`), which does.
"""

from __future__ import annotations

import numpy as np

from ..engine.function import Function


class Argsort(Function):
    """``args = (dim, descending)``; stable: ties keep their order. int64."""

    __slots__ = ()
    differentiable = False

    def forward(self, ns, a):
        dim, descending = self.args
        dev = ns.device
        try:  # the array API's signature (array_api_strict)
            idx = dev.xp.argsort(a, axis=dim, descending=descending, stable=True)
        except TypeError:  # NumPy and CuPy: no ``descending``; sorting the negation keeps ties in order
            kind = dev.np_dtype(a.dtype).kind
            key = -(ns.astype(a, dev.dtype(np.int64)) if kind in "bu" else a) if descending else a
            idx = dev.xp.argsort(key, axis=dim, kind="stable")
            if descending and kind in "fc":  # NaN is the largest value to PyTorch: first when descending
                xp = dev.xp
                nan_last = ~xp.isnan(xp.take_along_axis(a, idx, axis=dim))
                idx = xp.take_along_axis(idx, xp.argsort(nan_last, axis=dim, kind="stable"), axis=dim)
        return ns.astype(idx, dev.dtype(np.int64))


class ArgExtreme(Function):
    """The index of the largest (``args = (dim, "max")``) or smallest (``"min"``) entry
    along ``dim``, the axis kept (length 1). int64; the first of tied entries.

    Applying it applies :class:`ArgMax` or :class:`ArgMin`, which the ``args`` pick, so a
    traced program and a picture say which of the two ran."""

    __slots__ = ()
    differentiable = False
    name = "arg_extreme"

    @classmethod
    def apply(cls, *inputs, args=None):
        if cls is ArgExtreme:  # the args pick the op
            return (ArgMax if args[1] == "max" else ArgMin).apply(*inputs, args=args)
        return super().apply(*inputs, args=args)

    def forward(self, ns, a):
        dim, pick = self.args
        dev = ns.device
        if dev.np_dtype(a.dtype) == np.bool_:  # (the array API has no argmax of bool; the order is kept)
            a = ns.astype(a, dev.dtype(np.uint8))
        idx = getattr(dev.xp, "argmax" if pick == "max" else "argmin")(a, axis=dim, keepdims=True)
        return ns.astype(idx, dev.dtype(np.int64))


class ArgMax(ArgExtreme):
    """:class:`ArgExtreme` with ``args = (dim, "max")``."""

    __slots__ = ()
    name = "argmax"


class ArgMin(ArgExtreme):
    """:class:`ArgExtreme` with ``args = (dim, "min")``."""

    __slots__ = ()
    name = "argmin"
