"""Piecewise-constant elementwise ops: floor, ceil, round (half to even) and sign.

Their derivative is zero wherever it exists, so the gradient is zeros (as PyTorch
gives), not ``None``: a tensor that went only through them still gets a ``.grad``.
"""

from __future__ import annotations

from ..autograd import Function


class _Stepwise(Function):
    __slots__ = ()
    keep = ()
    reads_output = False
    fn = ""  # the array-API function's name

    def forward(self, xp, a):
        return getattr(xp.device.xp, self.fn)(a)

    def backward(self, g, ns, inputs, out):
        return (ns.zeros_like(g),)


class Floor(_Stepwise):
    __slots__ = ()
    fn = "floor"


class Ceil(_Stepwise):
    __slots__ = ()
    fn = "ceil"


class Round(_Stepwise):
    __slots__ = ()
    fn = "round"


class Sign(_Stepwise):
    __slots__ = ()
    fn = "sign"
