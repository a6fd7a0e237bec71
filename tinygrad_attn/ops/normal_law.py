"""``torch.special``'s functions of the normal law and of entropy: ``entr`` (``-x log x``),
``xlog1py`` (``x log1p(y)``), ``log_ndtr`` (the log of the standard normal CDF) and ``ndtri`` (its
inverse). Each computes in float64 and returns its input's dtype; each backward is PyTorch's formula
written with the recorded namespace, so it is differentiable again.
"""

from __future__ import annotations

import math

import numpy as np

from ..engine.function import Function
from .elementwise import erf_array, erfcx_array

_SQRT1_2 = math.sqrt(0.5)
_SQRT_2PI = math.sqrt(2.0 * math.pi)


def _f64(ns, a):
    return ns.astype(a, ns.device.dtype("float64"))


class Entr(Function):
    """``-x log x`` for ``x > 0``, 0 at 0, ``-inf`` below (NaN stays NaN). Backward: PyTorch's
    ``-(1 + log x)`` everywhere (``inf`` at 0, NaN below 0)."""

    __slots__ = ()
    primitive = True
    name = "entr"
    keep = (0,)
    reads_output = False

    def forward(self, ns, x):
        xp = ns.device.xp
        with np.errstate(divide="ignore", invalid="ignore"):
            pos = xp.where(x > 0, -x * xp.log(xp.where(x > 0, x, 1.0)), 0.0)
            return xp.where(x < 0, -math.inf, xp.where(x > 0, pos, x * 0.0))

    def backward(self, g, ns, inputs, out):
        with np.errstate(divide="ignore", invalid="ignore"):
            return (g * -(ns.log(inputs[0]) + 1.0),)


class Xlog1py(Function):
    """``x log1p(y)``, and 0 where ``x`` is 0 (unless ``y`` is NaN). Gradients, PyTorch's:
    ``x``'s ``xlog1py(g, y)`` (0 where ``x`` is 0 and ``y <= -1``), ``y``'s ``g x / (y + 1)``."""

    __slots__ = ()
    primitive = True
    name = "xlog1py"
    reads_output = False

    def forward(self, ns, x, y):
        xp = ns.device.xp
        with np.errstate(divide="ignore", invalid="ignore"):
            return xp.where((x == 0) & (y == y), 0.0 * x, x * xp.log1p(y))

    def backward(self, g, ns, inputs, out):
        x, y = inputs
        with np.errstate(divide="ignore", invalid="ignore"):
            gx = ns.where((x == 0) & (y <= -1.0), 0.0, ns.apply(Xlog1py, g, y))
            return gx, g * x / (y + 1.0)


def _erfc_array(ns, u):
    """``erfc(u)`` of a float64 array, accurate in the right tail (``erfcx(u) exp(-u^2)``)."""
    xp = ns.device.xp
    a = xp.abs(u)
    tail = xp.where(a < 1.0, 1.0 - erf_array(ns, xp.minimum(a, 1.0)), erfcx_array(ns, a) * xp.exp(-a * a))
    return xp.where(u < 0, 2.0 - tail, tail)


def log_ndtr_array(ns, x):
    """``log Phi(x)`` of a float64 array: below -1 as ``log(erfcx(t) / 2) - t^2``, ``t = -x/sqrt2`` (no
    underflow: finite down to where ``t^2`` overflows), above as ``log1p(-erfc(x/sqrt2) / 2)``: PyTorch's
    steps, whose rounding its gradient ``exp(-(log_ndtr(x) + x^2/2))`` magnifies in the far left tail."""
    xp = ns.device.xp
    lo = x < -1.0
    t = xp.where(lo, -x, 1.0) * _SQRT1_2
    left = xp.log(erfcx_array(ns, t) / 2.0) - t * t  # (PyTorch's t * t: its gradient reads these very digits)
    right = xp.log1p(-_erfc_array(ns, xp.where(lo, 0.0, x) * _SQRT1_2) / 2.0)
    return xp.where(lo, left, right)


class LogNdtr(Function):
    """``log`` of the standard normal CDF. Backward, PyTorch's: ``g exp(-(out + x^2/2)) / sqrt(2 pi)``."""

    __slots__ = ()
    primitive = True
    name = "log_ndtr"
    keep = (0,)

    def forward(self, ns, a):
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            return ns.astype(log_ndtr_array(ns, _f64(ns, a)), a.dtype)

    def backward(self, g, ns, inputs, out):
        x = inputs[0]
        return (g / _SQRT_2PI * ns.exp(-(out + x * x / 2.0)),)


def ndtri_array(ns, p):
    """The inverse of the standard normal CDF of a float64 array: ``x`` with ``Phi(x) = p``. The
    lower half is solved (``q = min(p, 1 - p)``, exact there) by Newton's method on
    ``log Phi(x) = log q`` from the erfinv guess (an asymptotic one in the far tail), which
    keeps its relative precision down to the smallest ``q``; the upper half by symmetry."""
    xp = ns.device.xp
    q = xp.minimum(p, 1.0 - p)
    ok = (q > 0) & (q <= 0.5)
    qs = xp.where(ok, q, 0.25)
    lq = xp.log(qs)
    # the guess: sqrt(2) erfinv(2q - 1) where 2q - 1 keeps q's digits enough, else the tail's
    # x ~ -sqrt(-2 log q - log(-2 log q) - log(2 pi))
    w = -2.0 * lq
    tail = -xp.sqrt(xp.maximum(w - xp.log(xp.maximum(w, 1.0)) - math.log(2.0 * math.pi), 1.0))
    x = tail
    for _ in range(40):  # (converges in a handful of steps from either guess; the rest change nothing)
        lp = log_ndtr_array(ns, x)
        dens = xp.exp(-x * x / 2.0 - lp) / _SQRT_2PI  # (d log Phi / dx)
        x = x - (lp - lq) / dens
    x = xp.where(p > 0.5, -x, x)
    x = xp.where(q == 0.5, 0.0 * p, x)
    x = xp.where(p == 0, -math.inf, xp.where(p == 1, math.inf, x))
    return xp.where(((p >= 0) & (p <= 1)) | (p != p), xp.where(p != p, p, x), math.nan)


class Ndtri(Function):
    """The inverse of the standard normal CDF (``-inf`` at 0, ``inf`` at 1, NaN outside ``[0, 1]``).
    Backward, PyTorch's: ``g sqrt(2 pi) exp(out^2 / 2)``."""

    __slots__ = ()
    primitive = True
    name = "ndtri"
    keep = ()

    def forward(self, ns, a):
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            return ns.astype(ndtri_array(ns, _f64(ns, a)), a.dtype)

    def backward(self, g, ns, inputs, out):
        return (g * _SQRT_2PI * ns.exp(out * out / 2.0),)
