"""Transcendental functions that no composite of the other primitives computes accurately.

``asin(x)`` as ``atan(x / sqrt(1 - x**2))`` is NaN-gradient at ``|x| = 1``; ``acosh(x)`` as
``log(x + sqrt(x**2 - 1))`` overflows past ``1e154``; ``log1p(x)`` as ``log(1 + x)`` loses
every digit of a float32 ``x`` below ``1e-8``. Each of these is one array-API call forward
and a one-line derivative backward, written against ``ns`` so that it records a graph
under ``create_graph=True``.
"""

from __future__ import annotations

import math

import numpy as np

from ..engine.function import Function, rounded_to
from .elementwise import erf_array
from .trigonometric import Cos, Sin


def _raw(ns, name: str, numpy_name: str):
    # The array API's name (asin), else NumPy's and older CuPy's (arcsin).
    raw = ns.device.xp
    return getattr(raw, name, None) or getattr(raw, numpy_name)


class Asin(Function):
    __slots__ = ()
    primitive = True
    elementwise = "asin({0})"
    reads_output = False

    def forward(self, ns, a):
        return _raw(ns, "asin", "arcsin")(a)

    def backward(self, g, ns, inputs, out):
        a = inputs[0]
        return (g / ns.sqrt(1.0 - a * a),)


class Acos(Function):
    __slots__ = ()
    primitive = True
    elementwise = "acos({0})"
    reads_output = False

    def forward(self, ns, a):
        return _raw(ns, "acos", "arccos")(a)

    def backward(self, g, ns, inputs, out):
        a = inputs[0]
        return (-(g / ns.sqrt(1.0 - a * a)),)


class Atan(Function):
    __slots__ = ()
    primitive = True
    elementwise = "atan({0})"
    reads_output = False

    def forward(self, ns, a):
        return _raw(ns, "atan", "arctan")(a)

    def backward(self, g, ns, inputs, out):
        a = inputs[0]
        return (g / (1.0 + a * a),)


class Asinh(Function):
    __slots__ = ()
    primitive = True
    elementwise = "asinh({0})"
    reads_output = False

    def forward(self, ns, a):
        return _raw(ns, "asinh", "arcsinh")(a)

    def backward(self, g, ns, inputs, out):
        a = inputs[0]
        return (g / ns.sqrt(a * a + 1.0),)


class Acosh(Function):
    __slots__ = ()
    primitive = True
    elementwise = "acosh({0})"
    reads_output = False

    def forward(self, ns, a):
        return _raw(ns, "acosh", "arccosh")(a)

    def backward(self, g, ns, inputs, out):
        a = inputs[0]
        # PyTorch's formula, finite below -1 too (where acosh itself is NaN)
        return (g / ns.sqrt(a * a - 1.0),)


class Atanh(Function):
    __slots__ = ()
    primitive = True
    elementwise = "atanh({0})"
    reads_output = False

    def forward(self, ns, a):
        return _raw(ns, "atanh", "arctanh")(a)

    def backward(self, g, ns, inputs, out):
        a = inputs[0]
        return (g / (1.0 - a * a),)


class Atan2(Function):
    """``atan2(y, x)``: the angle of the point ``(x, y)``, in ``(-pi, pi]``."""

    __slots__ = ()
    primitive = True
    elementwise = "atan2({0}, {1})"
    operands = ("y", "x")
    reads_output = False

    def forward(self, ns, y, x):
        return _raw(ns, "atan2", "arctan2")(y, x)

    def backward(self, g, ns, inputs, out):
        y, x = inputs
        # (1 / r2 as 0 where it is inf (the origin), as PyTorch's: atan2(0, 0)'s gradient is 0, not 0/0.
        # Recorded, the derivative is PyTorch's too: NaN at the origin, the masked side's 0 * inf.)
        with np.errstate(divide="ignore", invalid="ignore"):
            recip = 1.0 / (x * x + y * y)
            recip = ns.where(recip == math.inf, 0.0, recip)
            return g * x * recip, -(g * y) * recip


class Log1p(Function):
    __slots__ = ()
    primitive = True
    elementwise = "log1p({0})"
    reads_output = False

    def forward(self, ns, a):
        return ns.device.xp.log1p(a)

    def backward(self, g, ns, inputs, out):
        return (g / (inputs[0] + 1.0),)


def _in_float64(ns, name: str, a):
    """``xp.<name>(a)`` computed in float64 and rounded once to ``a``'s dtype: NumPy's float32 ``log10``
    is not exact at powers of ten (``log10(1000)`` 3.0000002), PyTorch's is."""
    xp = ns.device.xp
    fn = getattr(xp, name, None) or (lambda v: xp.pow(xp.full_like(v, 2.0), v))  # (the array API has no exp2)
    if a.dtype == ns.device.dtype("float64") or ns.device.np_dtype(a.dtype).kind == "c":
        return fn(a)
    return ns.astype(fn(ns.astype(a, ns.device.dtype("float64"))), a.dtype)


class Log2(Function):
    """``log2(x)``: the library's own, exact at powers of two (``log(x) / log(2)`` is not: 2.9999999999999996
    at 8), as PyTorch's ``std::log2``."""

    __slots__ = ()
    primitive = True
    elementwise = "log2({0})"
    reads_output = False

    def forward(self, ns, a):
        return _in_float64(ns, "log2", a)

    def backward(self, g, ns, inputs, out):
        return (g / (inputs[0] * math.log(2.0)),)


class Log10(Function):
    """``log10(x)``, exact at powers of ten, as PyTorch's ``std::log10``."""

    __slots__ = ()
    primitive = True
    elementwise = "log10({0})"
    reads_output = False

    def forward(self, ns, a):
        return _in_float64(ns, "log10", a)

    def backward(self, g, ns, inputs, out):
        return (g / (inputs[0] * math.log(10.0)),)


class Exp2(Function):
    """``2 ** x``, exact at integers, as PyTorch's ``std::exp2``; its gradient reads the result."""

    __slots__ = ()
    primitive = True
    keep = ()

    def forward(self, ns, a):
        return _in_float64(ns, "exp2", a)

    def backward(self, g, ns, inputs, out):
        return (g * out * math.log(2.0),)


class Expm1(Function):
    __slots__ = ()
    primitive = True
    elementwise = "expm1({0})"
    keep = ()

    def forward(self, ns, a):
        return ns.device.xp.expm1(a)

    def backward(self, g, ns, inputs, out):
        return (g * out + g,)  # g * exp(a), as g * (out + 1)


class Erfinv(Function):
    """The inverse error function: Giles' approximation refined by Newton steps on erf."""

    __slots__ = ()
    primitive = True
    elementwise = "erfinv({0})"
    name = "erfinv"
    # PyTorch's keeps the input and recomputes erfinv from it: its output may change in place
    keep = (0,)
    reads_output = False

    def forward(self, ns, a):
        raw = ns.device.xp
        # Giles (2010): w = -log(1 - a^2); a polynomial in w (two branches) gives ~1e-7
        w = -raw.log((1.0 - a) * (1.0 + a))
        small = w < 5.0
        ws = raw.where(small, w - 2.5, raw.sqrt(raw.where(small, raw.full_like(w, 5.0), w)) - 3.0)
        p1 = [2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087,
              -0.00125372503, -0.00417768164, 0.246640727, 1.50140941]  # fmt: skip
        p2 = [-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773,
              -0.0076224613, 0.00943887047, 1.00167406, 2.83297682]  # fmt: skip
        pa, pb = p1[0], p2[0]
        for c1, c2 in zip(p1[1:], p2[1:]):
            pa = pa * ws + c1
            pb = pb * ws + c2
        y = raw.where(small, pa, pb) * a
        # Newton on erf(y) = a: y -= (erf(y) - a) / (2/sqrt(pi) exp(-y^2))
        for _ in range(2):
            fin = raw.isfinite(y)
            ys = raw.where(fin, y, 0.0 * a)
            step = (erf_array(ns, ys) - a) / (1.1283791670955126 * raw.exp(-ys * ys))
            y = raw.where(fin, y - step, y)
        edge = raw.abs(a) == 1.0
        inf = raw.full_like(a, math.inf)
        return raw.where(edge, raw.where(a > 0, inf, -inf), y)

    def backward(self, g, ns, inputs, out):
        # d erfinv / da = sqrt(pi)/2 exp(erfinv(a)^2), erfinv(a) recomputed from the input
        a = inputs[0]
        y = ns.apply(Erfinv, a)
        return (g * (0.886226925452758 * ns.exp(y * y)),)


class Sinc(Function):
    """``sin(pi x) / (pi x)``, 1 at 0 (the normalized sinc, as ``torch.sinc``): one op, so
    that the forward pass divides no 0 by 0."""

    __slots__ = ()
    primitive = True
    elementwise = "({0} == 0 ? 1 : sin(3.141592653589793 * {0}) / (3.141592653589793 * {0}))"
    reads_output = False

    def forward(self, ns, a):
        raw = ns.device.xp
        zero = a == 0
        y = math.pi * raw.where(zero, raw.ones_like(a), a)
        return raw.where(zero, raw.ones_like(a), raw.sin(y) / y)

    def backward(self, g, ns, inputs, out):
        # PyTorch's formula, (pi x cos(pi x) - sin(pi x)) / (pi x x), and 0 where pi x x is 0 (x = 0,
        # and where x x underflows). Recorded, its own derivative is PyTorch's too: NaN there, the
        # 0 / 0 of the masked side (the limit would be -pi^2 / 3); NumPy's warnings are silenced.
        a = inputs[0]
        with np.errstate(divide="ignore", invalid="ignore"):
            y = a * math.pi
            den = a * a * math.pi
            d = g * (y * ns.apply(Cos, y) - ns.apply(Sin, y)) / den
            return (ns.where(den == 0, 0.0, d),)


class Xlogy(Function):
    """``x * log(y)``, and 0 where ``x`` is 0 (unless ``y`` is NaN). Its gradients are PyTorch's
    formulas, and so are their own derivatives: ``x``'s ``xlogy(g, y)``, 0 where ``x`` is 0 and
    ``y <= 0``; ``y``'s ``g x / y`` (NaN at ``x = y = 0``, as PyTorch's, where the limit would say 0)."""

    __slots__ = ()
    laid_out_as = slice(0, None)
    name = "xlogy"
    reads_output = False

    def forward(self, ns, x, y):
        with np.errstate(divide="ignore", invalid="ignore"):  # (log 0 and 0 * inf are the cases it defines)
            return ns.where((x == 0) & (y == y), 0.0, x * ns.log(y))

    def backward(self, g, ns, inputs, out):
        x, y = inputs
        with np.errstate(divide="ignore", invalid="ignore"):
            gx = ns.where((x == 0) & (y <= 0), 0.0, ns.apply(Xlogy, g, y))
            return gx, g * x / y


def _in(ns, a, low):
    """``a`` rounded to the low-precision dtype ``low`` (None: as it is), kept in its own dtype."""
    return a if low is None else ns.astype(ns.astype(a, low), a.dtype)


class Logit(Function):
    """``log(x / (1 - x))`` (``args``: ``eps``, or None), as two logs (float16 and bfloat16: the
    quotient, each step rounded to the dtype, as PyTorch's kernel for them), ``x`` clamped to
    ``[eps, 1 - eps]`` first where ``eps`` is given. The gradient is PyTorch's formula,
    ``g / (x (1 - x))``: 0 outside ``[eps, 1 - eps]``, NaN outside ``[0, 1]`` without ``eps``.
    Recorded, its own derivative is PyTorch's too (NaN at 0 and 1, the product's 0 * inf)."""

    __slots__ = ()
    name = "logit"
    keep = (0,)
    reads_output = False

    def forward(self, ns, x):
        eps = self.args
        xp = ns.device.xp
        low = rounded_to()  # (bfloat16, computed in float32 here)
        if eps is not None:  # (NaN stays NaN)
            x = _in(ns, ns.where(x < eps, eps, ns.where(x > 1.0 - eps, 1.0 - eps, x)), low)
        with np.errstate(divide="ignore", invalid="ignore"):  # (0 and 1: +-inf; outside [0, 1]: NaN)
            if low is None and x.dtype != np.float16:
                return ns.log(x) - xp.log1p(-x)
            # PyTorch's float16 and bfloat16 kernel: log(x / (1 - x)), each step rounded to the dtype (NumPy's
            # float16 steps round so; checked against PyTorch, equal in every entry, where two logs were 54 units off)
            return ns.log(_in(ns, x / _in(ns, 1.0 - x, low), low))

    def backward(self, g, ns, inputs, out):
        eps = self.args
        (x,) = inputs
        lo, hi, outside = (0.0, 1.0, math.nan) if eps is None else (eps, 1.0 - eps, 0.0)
        with np.errstate(divide="ignore", invalid="ignore"):
            d = g / (x * (1.0 - x))
            if ns.recording:  # (PyTorch's differentiable form selects the inside: a NaN x with eps gets 0)
                return (ns.where((x >= lo) & (x <= hi), d, outside),)
            # (its kernel masks the outside, so NaN passes; at 0 and 1 it is g * inf, whatever the zero's sign)
            d = ns.where((x == 0) | (x == 1), g * math.inf, d)
            return (ns.where((x < lo) | (x > hi), outside, d),)


class LogAddExp(Function):
    """``log(exp(a) + exp(b))`` as PyTorch computes it: the larger plus ``log1p(exp(-|a - b|))``,
    and two equal infinities themselves. Its gradients are PyTorch's formulas, ``g / (1 + exp(b - a))``
    and ``g / (1 + exp(a - b))`` (1 and 0 beside an infinite operand), so recorded their own
    derivatives are PyTorch's too (NaN where ``exp`` of the gap overflows)."""

    __slots__ = ()
    laid_out_as = slice(0, None)
    name = "logaddexp"
    reads_output = False

    def forward(self, ns, a, b):
        with np.errstate(over="ignore", invalid="ignore"):  # (inf - inf: the equal infinities, replaced)
            out = ns.maximum(a, b) + ns.device.xp.log1p(ns.exp(-ns.abs(a - b)))
            return ns.where((a == b) & (ns.abs(a) == math.inf), a, out)

    def backward(self, g, ns, inputs, out):
        a, b = inputs
        with np.errstate(over="ignore", invalid="ignore"):
            return g / (1.0 + ns.exp(b - a)), g / (1.0 + ns.exp(a - b))
