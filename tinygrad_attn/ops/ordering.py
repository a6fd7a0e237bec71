"""Indices that depend on the values: argsort and argmax/argmin along one axis.

Ops (not plain array calls) so that a traced program recomputes them on new inputs.
They carry no gradient; ``sort``, ``topk`` and ``max(dim=)`` gather the values by them
(:class:`~tinygrad_attn.ops.gather_along.GatherAlong`), which does.
"""

from __future__ import annotations

import numpy as np

from ..engine.function import Function
from .tie_order import RADIX_MIN, topk_rows, unstable_argsort_rows


class Argsort(Function):
    """``args = (dim, descending[, stable])``. int64. Stable (the default): ties keep their order;
    ``stable=False`` on a CPU: ties in the order PyTorch's CPU sort leaves them
    (:func:`~tinygrad_attn.ops.tie_order.unstable_argsort_rows`, on the host). A GPU's unstable
    order is PyTorch's CUDA sort's own, not reproduced: there ties keep their order."""

    __slots__ = ()
    laid_out_as = slice(0, None)  # (PyTorch's sort keeps its input's layout)
    differentiable = False

    def forward(self, ns, a):
        dim, descending, *rest = self.args
        dev = ns.device
        if (
            rest
            and not rest[0]
            and a.size
            and not dev.name.startswith("cuda")
            and not _radix_sorted(dev, a, descending)
        ):
            host = np.moveaxis(dev.to_host(a), dim, -1)
            order = unstable_argsort_rows(host.reshape(-1, host.shape[-1]), descending)
            return dev.asarray(np.moveaxis(order.reshape(host.shape), -1, dim), dtype=np.int64)
        return _stable_argsort(ns, a, dim, descending)


def _stable_argsort(ns, a, dim: int, descending: bool):
    """Ties in their order. Descending: the reversed ascending order of the reversed ``a`` (NaN
    first, as PyTorch's, and ties still in their order; a negation would keep NaN last)."""
    xp = ns.device.xp
    if descending:
        a = xp.flip(a, axis=dim)
    try:  # the array API's signature (array_api_strict, NumPy 2)
        idx = xp.argsort(a, axis=dim, stable=True)
    except TypeError:  # (CuPy: its sort is stable)
        idx = xp.argsort(a, axis=dim, kind="stable")
    idx = ns.astype(idx, ns.device.dtype(np.int64))
    return (a.shape[dim] - 1) - xp.flip(idx, axis=dim) if descending else idx


class TopkIndices(Function):
    """``args = (dim, k, largest, sorted)``: the indices of the ``k`` largest (or smallest) entries
    along ``dim``, int64. On a CPU in PyTorch's CPU order (ties, and ``sorted=False``'s order:
    :func:`~tinygrad_attn.ops.tie_order.topk_rows`, on the host); on a GPU the first ``k`` of a
    stable sort."""

    __slots__ = ()
    differentiable = False

    def forward(self, ns, a):
        dim, k, largest, is_sorted = self.args
        dev = ns.device
        if k and not dev.name.startswith("cuda"):
            host = np.moveaxis(dev.to_host(a), dim, -1)
            order = topk_rows(host.reshape(-1, host.shape[-1]), k, largest, is_sorted)
            return dev.asarray(np.moveaxis(order.reshape(host.shape[:-1] + (k,)), -1, dim), dtype=np.int64)
        idx = _stable_argsort(ns, a, dim, largest)
        return ns.take(idx, dev.asarray(np.arange(k), dtype=np.int64), axis=dim)


def _radix_sorted(dev, a, descending: bool) -> bool:
    """Whether PyTorch's CPU sorts ``a`` with its (stable) radix sort: 1-D integers, ascending, long."""
    return a.ndim == 1 and not descending and dev.np_dtype(a.dtype).kind in "iu" and a.shape[0] >= RADIX_MIN


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
