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
        if ns.device.np_dtype(a.dtype).kind in "iu":
            # (integers: from the floored remainder, which never takes |a|: |least value| overflows its dtype)
            r = raw.remainder(a, b)
            return raw.where((r != 0) & ((a < 0) != (b < 0)), r - b, r)
        r = raw.remainder(raw.abs(a), abs(b) if type(b) in (int, float) else raw.abs(b))
        if ns.device.np_dtype(r.dtype).kind == "f":
            return raw.copysign(r, a)
        return raw.where(a < 0, -r, r)

    def backward(self, g, ns, inputs, out):
        a, b = inputs
        if type(b) in (int, float, bool):
            return g, None
        # The quotient is a constant of a recorded graph: computed on the values.
        va, vb = ns.values(a), ns.values(b)
        raw = ns.device_of(va).xp  # (asarray: NumPy's 0-d quotient is a scalar)
        return g, -(g * ns.const(raw.asarray(raw.trunc(va / vb))))
