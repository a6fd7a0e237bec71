"""Running (prefix) sums along one axis.

A primitive because a composite would be quadratic (a sum per prefix) or a log-depth
chain of shifted adds; the gradient of a prefix sum is the suffix sum of ``g``, which is
the prefix sum of ``g`` reversed, reversed back.
"""

from __future__ import annotations

from ..engine.function import Function
from ..engine.layout import row_major_array


def cumsum_array(ns, a, axis: int):
    """``cumulative_sum`` (array API 2023) or, where the namespace predates it, ``cumsum``."""
    raw = ns.device.xp
    a = row_major_array(a)  # (PyTorch's scans are row-major whatever their input's layout)
    fn = getattr(raw, "cumulative_sum", None)
    if fn is not None:
        return fn(a, axis=axis)
    return raw.cumsum(a, axis=axis)


class Cumsum(Function):
    """``args = axis`` (non-negative)."""

    __slots__ = ()
    primitive = True
    keep = ()
    reads_output = False

    def forward(self, ns, a):
        return cumsum_array(ns, a, self.args)

    def backward(self, g, ns, inputs, out):
        axis = self.args
        rev = (slice(None),) * axis + (slice(None, None, -1), Ellipsis)
        if hasattr(g, "flip"):  # (a recorded gradient: a tensor takes no negative step, as PyTorch's)
            return (ns.apply(Cumsum, g.flip(axis), args=axis).flip(axis),)
        return (ns.apply(Cumsum, g[rev], args=axis)[rev],)
