"""Running (prefix) sums along one axis.

A primitive because a composite would be quadratic (a sum per prefix) or a log-depth
chain of shifted adds; the gradient of a prefix sum is the suffix sum of ``g``, which is
the prefix sum of ``g`` reversed, reversed back.
"""

from __future__ import annotations

import numpy as np

from ..engine.function import Function
from ..engine.layout import row_major_array

#: The dtype PyTorch's scans (cumsum, cumprod, logcumsumexp) carry their running value in, by the input's
#: (``at::acc_type``): on the CPU a float32 scan runs in float64, on CUDA in float32; float16 in float32 on both.
#: Each output is the running value rounded: 100,000 float32 0.1s sum to 10000.0, not float32's 9998.557.
_ACCUMULATOR = {"float16": "float32", "bfloat16": "float32", "float32": "float64", "complex64": "complex128"}
_ACCUMULATOR_CUDA = {"float16": "float32", "bfloat16": "float32"}


def accumulated(ns, a, scan):
    """``scan(a)`` run in PyTorch's accumulation dtype for ``a``'s, its result rounded back to ``a``'s dtype."""
    name = ns.device.np_dtype(a.dtype).name
    wide = (_ACCUMULATOR_CUDA if ns.device.name.startswith("cuda") else _ACCUMULATOR).get(name)
    if wide is None:
        return scan(a)
    with np.errstate(over="ignore"):  # (beyond the dtype's range: inf, as PyTorch's)
        return ns.astype(scan(ns.astype(a, ns.device.dtype(np.dtype(wide)))), a.dtype)


def cumsum_array(ns, a, axis: int):
    """``cumulative_sum`` (array API 2023) or, where the namespace predates it, ``cumsum``, in PyTorch's
    accumulation dtype (:func:`accumulated`)."""
    raw = ns.device.xp
    a = row_major_array(a)  # (PyTorch's scans are row-major whatever their input's layout)
    fn = getattr(raw, "cumulative_sum", None) or raw.cumsum
    return accumulated(ns, a, lambda x: fn(x, axis=axis))


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
