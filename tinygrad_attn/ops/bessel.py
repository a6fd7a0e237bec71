"""The modified Bessel functions of the first kind of orders 0 and 1, ``I0`` and ``I1``, and their
exponentially scaled forms ``I0e(x) = exp(-|x|) I0(x)``, ``I1e(x) = exp(-|x|) I1(x)``.

No array namespace has them, so they are written here from ``exp`` and ``sqrt``: below
``|x| = 20`` the power series (``I0 = sum (x^2/4)^k / k!^2``, every term positive, so no
cancellation), above it the asymptotic expansion of ``I_nu(x) exp(-x) sqrt(2 pi x)`` (its 30th
term is below float64's precision there). Each computes in float64 and returns its input's
dtype. Derivatives: ``I0' = I1``, ``I1' = I0 - I1 / x`` (1/2 at 0), ``I0e' = I1e - sign(x) I0e``,
``I1e' = I0e - I1e (sign(x) + 1 / x)`` (1/2 at 0): the ops themselves, so every order follows.
"""

from __future__ import annotations

import math

import numpy as np

from ..engine.function import Function
from .factorizations import loop_namespace

#: Below this magnitude the power series, above it the asymptotic expansion.
_SWITCH = 20.0
_SERIES_TERMS = 48
_ASYMPTOTIC_TERMS = 30


def _scaled_array(raw, x, order: int):
    """``exp(-|x|) I_order(|x|)`` in float64, elementwise (``x`` any float array of namespace ``raw``)."""
    a = raw.abs(x.astype(raw.float64))
    small = a < _SWITCH
    # the power series, at min(|x|, switch) so the large entries stay finite there
    s = raw.where(small, a, 0.0)
    y = s * s / 4.0
    term = raw.ones_like(s) if order == 0 else s / 2.0
    total = term
    for k in range(1, _SERIES_TERMS):
        term = term * y / (k * (k + order))
        total = total + term
    series = total * raw.exp(-s)
    # the asymptotic expansion, at max(|x|, switch)
    big = raw.where(small, _SWITCH, a)
    mu = 4.0 * order * order
    term = raw.ones_like(big)
    acc = term
    for k in range(1, _ASYMPTOTIC_TERMS):
        term = term * (-(mu - (2 * k - 1) ** 2)) / (k * 8.0 * big)
        acc = acc + term
    asym = acc / raw.sqrt(2.0 * math.pi * big)
    return raw.where(small, series, asym)


def bessel_array(raw, x, order: int, scaled: bool):
    """``I_order(x)`` (``scaled``: times ``exp(-|x|)``) elementwise, in ``x``'s dtype. As PyTorch's:
    ``I0(+-inf)`` and ``I1(+-inf)`` are NaN (their formula is ``inf * 0`` there), the scaled ones 0."""
    e = _scaled_array(raw, x, order)
    xd = x.astype(raw.float64)
    if order == 1:
        e = raw.where(xd < 0, -e, e)  # (I1 is odd, I0 even)
    if scaled:
        out = raw.where(raw.isinf(xd), raw.zeros_like(e) * raw.sign(xd), e)
    else:
        # (exp in x's own dtype, as PyTorch's: float32 overflows to inf from |x| ~ 88.7, where I0 itself
        # would still fit, and PyTorch's float32 I0 is inf there)
        out = (e * raw.exp(raw.abs(x)).astype(raw.float64)).astype(x.dtype).astype(raw.float64)
        out = raw.where(raw.isinf(xd), raw.full_like(e, math.nan), out)
    return raw.where(raw.isnan(xd), xd, out).astype(x.dtype)


def _bessel(ns, a, order: int, scaled: bool):
    raw, to_raw, back = loop_namespace(ns.device)
    with np.errstate(over="ignore", invalid="ignore"):  # (I0 and I1 overflow past |x| ~ 713 (float32: ~90) to inf)
        return back(bessel_array(raw, to_raw(a), order, scaled))


def _away_from_zero(ns, x):
    """``(not_tiny, safe)``: where ``|x|`` exceeds the dtype's epsilon (false at NaN), and ``x`` there
    (1 elsewhere). I1's and I1e's derivatives take their limit 1/2 where ``not_tiny`` is false, as
    PyTorch's (so at NaN too)."""
    name = str(x.dtype).rsplit(".", 1)[-1]  # (NumPy's name of any namespace's dtype: 'array_api_strict.float64')
    not_tiny = ns.abs(x) > float(np.finfo(np.dtype(name)).eps)
    return not_tiny, ns.where(not_tiny, x, ns.zeros_like(x) + 1.0)


class I0(Function):
    """``I0(x)``; its derivative is ``I1(x)``."""

    __slots__ = ()
    primitive = True
    name = "i0"
    keep = (0,)
    reads_output = False

    def forward(self, ns, a):
        return _bessel(ns, a, 0, scaled=False)

    def backward(self, g, ns, inputs, out):
        return (g * ns.apply(I1, inputs[0]),)


class I1(Function):
    """``I1(x)``; its derivative is ``I0(x) - I1(x) / x`` (1/2 at 0)."""

    __slots__ = ()
    primitive = True
    name = "i1"
    keep = (0,)  # (and its output, as PyTorch's backward keeps the result)

    def forward(self, ns, a):
        return _bessel(ns, a, 1, scaled=False)

    def backward(self, g, ns, inputs, out):
        not_tiny, x = _away_from_zero(ns, inputs[0])
        d = ns.apply(I0, x) - out / x
        return (g * ns.where(not_tiny, d, ns.zeros_like(d) + 0.5),)


class I0e(Function):
    """``exp(-|x|) I0(x)``; its derivative is ``I1e(x) - sign(x) I0e(x)``."""

    __slots__ = ()
    primitive = True
    name = "i0e"
    keep = (0,)  # (and its output, as PyTorch's backward keeps the result)

    def forward(self, ns, a):
        return _bessel(ns, a, 0, scaled=True)

    def backward(self, g, ns, inputs, out):
        x = inputs[0]
        return (g * (ns.apply(I1e, x) - ns.sign(x) * out),)


class I1e(Function):
    """``exp(-|x|) I1(x)``; its derivative is ``I0e(x) - I1e(x) (sign(x) + 1 / x)`` (1/2 at 0)."""

    __slots__ = ()
    primitive = True
    name = "i1e"
    keep = (0,)  # (and its output, as PyTorch's backward keeps the result)

    def forward(self, ns, a):
        return _bessel(ns, a, 1, scaled=True)

    def backward(self, g, ns, inputs, out):
        not_tiny, x = _away_from_zero(ns, inputs[0])
        d = ns.apply(I0e, x) - out * (ns.sign(x) + 1.0 / x)
        return (g * ns.where(not_tiny, d, ns.zeros_like(d) + 0.5),)
