"""The index of the running maximum (or minimum) along one axis: ``cummax``'s indices.

An op (not a plain array call) so that a traced program recomputes it on new inputs. It
carries no gradient; ``cummax`` gathers its values by it, which does.
"""

from __future__ import annotations

import numpy as np

from ..engine.function import Function


class CumArgExtreme(Function):
    """``args = (dim, "max" | "min")``. int64, PyTorch's choice among ties: the latest
    index (and a NaN, once seen, stays the extreme). A log-depth scan: each step combines
    every entry with the one ``s`` places before it, ``s`` doubling.

    Applying it applies :class:`CumArgMax` or :class:`CumArgMin`, which the ``args`` pick,
    so a traced program and a picture say which of the two ran."""

    __slots__ = ()
    differentiable = False
    name = "cum_arg_extreme"

    @classmethod
    def apply(cls, *inputs, args=None):
        if cls is CumArgExtreme:  # the args pick the op
            return (CumArgMax if args[1] == "max" else CumArgMin).apply(*inputs, args=args)
        return super().apply(*inputs, args=args)

    def forward(self, ns, a):
        dim, pick = self.args
        dev = ns.device
        raw = dev.xp
        if dev.np_dtype(a.dtype) == np.bool_:  # (no order on bool in the array API)
            a = ns.astype(a, dev.dtype(np.uint8))
        v = raw.moveaxis(a, dim, -1)
        n = v.shape[-1]
        i64 = dev.dtype(np.int64)
        idx = raw.broadcast_to(raw.arange(n, dtype=i64, device=getattr(v, "device", None)), v.shape)
        floating = dev.np_dtype(a.dtype).kind in "fc"
        concat = getattr(raw, "concat", None) or raw.concatenate  # (CuPy's older name)
        s = 1
        while s < n:
            ev, ei, lv, li = v[..., : n - s], idx[..., : n - s], v[..., s:], idx[..., s:]
            beats = ev > lv if pick == "max" else ev < lv
            if floating:  # a NaN wins over any number; of two NaNs, the later
                beats = raw.logical_and(raw.logical_not(raw.isnan(lv)), raw.logical_or(raw.isnan(ev), beats))
            v = concat([v[..., :s], raw.where(beats, ev, lv)], axis=-1)
            idx = concat([idx[..., :s], raw.where(beats, ei, li)], axis=-1)
            s *= 2
        return raw.moveaxis(idx, -1, dim)


class CumArgMax(CumArgExtreme):
    """:class:`CumArgExtreme` with ``args = (dim, "max")``: ``cummax``'s indices."""

    __slots__ = ()
    name = "cumargmax"


class CumArgMin(CumArgExtreme):
    """:class:`CumArgExtreme` with ``args = (dim, "min")``: ``cummin``'s indices."""

    __slots__ = ()
    name = "cumargmin"
