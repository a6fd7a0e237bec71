"""Piecewise-constant elementwise ops: floor, ceil, round (half to even) and sign.

Their derivative is zero wherever it exists, so the gradient is zeros (as PyTorch
gives), not ``None``: a tensor that went only through them still gets a ``.grad``.
"""

from __future__ import annotations

from ..engine.function import Function


class _Stepwise(Function):
    __slots__ = ()
    keep = ()
    reads_output = False
    fn = ""  # the array-API function's name

    def forward(self, ns, a):
        return getattr(ns.device.xp, self.fn)(a)

    def backward(self, g, ns, inputs, out):
        return (ns.zeros_like(g),)


class Floor(_Stepwise):
    __slots__ = ()
    primitive = True
    fn = "floor"


class Ceil(_Stepwise):
    __slots__ = ()
    primitive = True
    fn = "ceil"


class Round(_Stepwise):
    __slots__ = ()
    primitive = True
    fn = "round"


class Sign(_Stepwise):
    """The sign, 0 at NaN as PyTorch's (``(x > 0) - (x < 0)``; NumPy's sign of NaN is NaN)."""

    __slots__ = ()
    primitive = True
    fn = "sign"

    def forward(self, ns, a):
        raw = ns.device.xp
        s = raw.sign(a)
        return raw.where(s == s, s, raw.zeros_like(s))


def _astype(raw, x, dtype):
    """``x`` cast, through the namespace's ``astype`` (the array API's) or the array's own (older CuPy)."""
    cast = getattr(raw, "astype", None)
    return cast(x, dtype) if cast is not None else x.astype(dtype)


class Fmod(Function):
    """C's ``fmod(a, b)``: the remainder of truncated division, with the sign of ``a``.

    Forward as ``copysign(remainder(|a|, |b|), a)``: the remainder of two non-negative
    numbers is exact, where ``a - trunc(a / b) * b`` loses the digits of ``fmod(1e-300, 1.5)``.
    Backward as PyTorch: ``g`` for ``a``, ``-g * trunc(a / b)`` for ``b``, a quotient of zero
    derivative (fmod's second is 0), computed from the inputs as PyTorch's is: the output is
    not read, so it may change in place before the backward, as in PyTorch.
    """

    __slots__ = ()
    laid_out_as = slice(0, None)
    primitive = True
    operands = ("a", "b")
    reads_output = False

    def forward(self, ns, a, b):
        raw = ns.device.xp
        dt = ns.device.np_dtype(a.dtype)
        if dt.kind == "i" and dt.itemsize < 8:  # (|a| of the dtype's least value overflows it: in int64)
            wide = _astype(raw, a, raw.int64)
            b = b if type(b) in (int, float) else _astype(raw, b, raw.int64)
            return _astype(raw, self.forward_wide(raw, wide, b), a.dtype)
        r = raw.remainder(raw.abs(a), abs(b) if type(b) in (int, float) else raw.abs(b))
        if ns.device.np_dtype(r.dtype).kind == "f":
            return raw.copysign(r, a)
        return raw.where(a < 0, -r, r)

    @staticmethod
    def forward_wide(raw, a, b):
        r = raw.remainder(raw.abs(a), abs(b) if type(b) in (int, float) else raw.abs(b))
        return raw.where(a < 0, -r, r)

    def backward(self, g, ns, inputs, out):
        a, b = inputs
        if type(b) in (int, float, bool):
            return g, None
        # The quotient is a constant of a recorded graph: computed on the values.
        va, vb = ns.values(a), ns.values(b)
        raw = ns.device_of(va).xp  # (asarray: NumPy's 0-d quotient is a scalar)
        return g, -(g * ns.const(raw.asarray(raw.trunc(va / vb))))
