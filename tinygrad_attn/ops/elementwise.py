"""Elementwise primitives: each op's forward and its local derivative side by side.

Inputs broadcast as in NumPy; a Python scalar input is a constant (no gradient).
Gradients keep the broadcast shape: the engine sums them back in one place.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np

from ..engine.function import Function, may_overwrite, rounded_to
from ..engine.switches import _State
from .rounding import Sign
from .saved import depends_on

_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)


# A Python number input is a constant: no gradient is computed for it. (An exact type
# test: NumPy's float64 scalars, which reductions return, subclass float.)
_CONST = frozenset((int, float, bool, complex))


class Add(Function):
    __slots__ = ()
    primitive = True
    elementwise = "{0} + {1}"
    commutative = True  # pictures need not say which input is which
    keep = ()
    reads_output = False

    def forward(self, ns, a, b):
        return a + b

    def backward(self, g, ns, inputs, out):
        return g, g


class AddN(Function):
    """``a0 + a1 + ... + an``, summed left to right (each sum exactly what ``Add`` gives, in
    that order): the backward pass's sum of the gradients a tensor gets from its consumers
    when they are recorded (``create_graph``, a trace), one node instead of one ``Add`` per
    consumer. The gradient of each input is ``g``."""

    __slots__ = ()
    elementwise = "{0} + {1}"
    variadic = True  # (its expression folded left over all its operands: fusion reads this)
    commutative = True
    keep = ()
    reads_output = False
    name = "add_n"

    def forward(self, ns, *arrays):
        out = arrays[0] + arrays[1]
        for a in arrays[2:]:
            # (in place into the new sum where nothing is promoted or broadcast)
            if a.shape == out.shape and a.dtype == out.dtype:
                out += a
            else:
                out = out + a
        return out

    def backward(self, g, ns, inputs, out):
        return (g,) * len(inputs)


class Sub(Function):
    __slots__ = ()
    primitive = True
    elementwise = "{0} - {1}"
    operands = ("a", "b")  # a - b: pictures label which input is which
    keep = ()
    reads_output = False

    def forward(self, ns, a, b):
        return a - b

    def backward(self, g, ns, inputs, out):
        return g, (None if type(inputs[1]) in _CONST else -g)


class Mul(Function):
    number_in_float32 = True  # (PyTorch reads a number operand of a half array at float32)
    __slots__ = ()
    primitive = True
    elementwise = "{0} * {1}"
    commutative = True  # pictures need not say which input is which
    keep = "other"  # each side's gradient reads the other side
    reads_output = False

    def forward(self, ns, a, b):
        return a * b

    def backward(self, g, ns, inputs, out):
        a, b = inputs
        b_const = type(b) in _CONST
        if b_const or type(a) in _CONST:  # a scale: over g itself where allowed
            c = ns.scalar(b if b_const else a, g)
            if _State.overwritable is g:  # (may_overwrite(g), inlined: this is the hottest step)
                g *= c
            else:
                g = g * c
            return (g, None) if b_const else (None, g)
        # (an input released as None is one whose partner needs no gradient)
        return (None if b is None else g * b), (None if a is None else g * a)


class Div(Function):
    number_in_float32 = True  # (PyTorch reads a number operand of a half array at float32)
    __slots__ = ()
    primitive = True
    elementwise = "{0} / {1}"
    operands = ("a", "b")  # a / b
    reads_output = False  # as PyTorch: the output may change in place (s = x / 2; s.masked_fill_(...))

    def keeps_input(self, i: int) -> bool:
        # PyTorch keeps b, and a only when b needs a gradient (b's gradient reads it)
        return i == 1 or getattr(self.inputs[1], "requires_grad", False)

    def forward(self, ns, a, b):
        return a / b

    def backward(self, g, ns, inputs, out):
        a, b = inputs
        if type(b) in _CONST:
            return g / ns.scalar(b, g), None
        ga = g / b
        return ga, -ga * a / b


class Neg(Function):
    __slots__ = ()
    primitive = True
    elementwise = "-{0}"
    keep = ()
    reads_output = False

    def forward(self, ns, a):
        return -a

    def backward(self, g, ns, inputs, out):
        return (-g,)


class PowScalar(Function):
    """``x ** c`` for a constant exponent ``c`` (``self.args``)."""

    __slots__ = ()
    primitive = True
    elementwise = "pow({0}, {a})"
    name = "pow_scalar"  # (Pow, a tensor or number on either side, is "pow")
    reads_output = False

    def forward(self, ns, a):
        return scalar_power(ns, a, self.args)

    def backward(self, g, ns, inputs, out):
        c = self.args
        if (
            c.__class__ is complex
        ):  # (a complex exponent: conjugated as the inputs are, see Function.conjugate_backward)
            c = c.conjugate()
        (a,) = inputs
        if c == 0:  # x ** 0 is 1 everywhere: the derivative is 0, also at x = 0 (not 0 * inf), and a constant
            return (ns.zeros_like(a),)
        if c == 2 and not ns.recording:
            return (g * (2.0 * a),)
        # (recorded: PyTorch's pow_backward again, through x ** (c - 1) even for c = 2, so that the
        # second derivative of x ** 2 is recorded too, a function of x, as PyTorch's)
        return (g * (c * ns.apply(PowScalar, a, args=c - 1)),)  # (recorded: PyTorch's pow_backward again)


def scalar_power(ns, a, c):
    """``a ** c`` for a number ``c`` as PyTorch's pow computes it: ``c = 0.5`` and ``-0.5`` through
    a square root, so the power of -0.0 is -0.0 and -inf there (C's pow: +0.0 and +inf), and the
    gradient of ``x ** 0.5`` at -0.0 is -inf, of ``x ** 1.5`` -0.0, as PyTorch's."""
    if c == 0.5:
        return ns.sqrt(a)
    low = rounded_to()  # (bfloat16, computed in float32 here)
    if c == -0.5:
        if a.dtype == np.float16:  # (PyTorch's float16 kernel: 1 / sqrt in float32, rounded once)
            return ns.astype(1.0 / ns.sqrt(ns.astype(a, np.float32)), a.dtype)
        return 1.0 / ns.sqrt(a)
    if low is not None and c.__class__ in (int, float):
        # PyTorch's bfloat16 kernel: x ** 3 and x ** -2 from x * x rounded to bfloat16; another exponent rounded
        # to bfloat16 first, as a number operand is (NumPy's float16 power rounds it so too)
        if c in (3, -2):
            sq = ns.astype(ns.astype(a * a, low), a.dtype)
            return sq * a if c == 3 else 1.0 / sq
        c = float(np.asarray(c).astype(low))
    return a**c


def _integer_power(raw, a, b):
    """``a ** b`` of integers with negative exponents, as PyTorch's integer pow: 1 for a base
    of 1, +-1 for -1 (by the exponent's parity), 0 for any other base (0 included)."""
    neg = b < 0
    out = a ** raw.where(neg, 0, b)
    one = raw.ones_like(out)
    at_neg = raw.where(a == 1, one, raw.where(a == -1, raw.where(b % 2 == 0, one, -one), 0 * one))
    return raw.where(neg, at_neg, out)


class Pow(Function):
    """``a ** b`` with a tensor on at least one side (a number on the other is a constant).

    As PyTorch: the base's gradient is 0 where ``b == 0`` (not ``0 * a ** -1``, NaN at
    ``a = 0``), and the exponent's is 0 where ``a == 0`` and ``b >= 0`` (not
    ``0 * log(0)``). The masked values are PyTorch's formulas themselves, not stand-ins: a
    second-order gradient sees them as PyTorch's does (NaN at ``a = b = 0``, its ``0 * inf``);
    NumPy's warnings about them are silenced.
    """

    __slots__ = ()
    primitive = True
    elementwise = "pow({0}, {1})"
    operands = ("base", "exponent")

    def forward(self, ns, a, b):
        try:
            return a**b
        except ValueError:  # (NumPy refuses integers to negative integer powers)
            return _integer_power(ns.device.xp, a, b)

    def backward(self, g, ns, inputs, out):
        with np.errstate(divide="ignore", invalid="ignore"):
            return self._gradients(g, ns, inputs, out)

    def _gradients(self, g, ns, inputs, out):
        a, b = inputs
        a_const, b_const = type(a) in _CONST, type(b) in _CONST
        ga = gb = None
        if b_const:
            ga = g * 0.0 if b == 0 else g * (b * ns.apply(PowScalar, a, args=b - 1))
        elif not a_const:
            ga = ns.where(b == 0, 0.0, g * (b * a ** (b - 1)))
        if a_const:
            if a > 0:
                log_a = math.log(a)
            elif a < 0:
                log_a = math.nan  # (a real power of a negative base has no gradient)
            else:  # 0 ** b: log 0 = -inf matters only where b < 0 (there out = inf)
                log_a = ns.where(b < 0, -math.inf, ns.zeros_like(b))
            gb = g * out * log_a
        elif not b_const:
            gb = g * ns.where((a == 0) & (b >= 0), 0.0, out * ns.log(a))
        return ga, gb


class Exp(Function):
    __slots__ = ()
    primitive = True
    elementwise = "exp({0})"
    keep = ()

    def forward(self, ns, a):
        return ns.exp(a)

    def backward(self, g, ns, inputs, out):
        return (g * out,)


class Log(Function):
    __slots__ = ()
    primitive = True
    elementwise = "log({0})"
    reads_output = False

    def forward(self, ns, a):
        return ns.log(a)

    def backward(self, g, ns, inputs, out):
        return (g / inputs[0],)


class Sqrt(Function):
    __slots__ = ()
    primitive = True
    elementwise = "sqrt({0})"
    keep = ()

    def forward(self, ns, a):
        return ns.sqrt(a)

    def backward(self, g, ns, inputs, out):
        return (g / (2.0 * out),)


class HyperbolicTangent(Function):
    __slots__ = ()
    primitive = True
    name = "tanh"
    elementwise = "tanh({0})"
    keep = ()

    def forward(self, ns, a):
        return ns.tanh(a)

    def backward(self, g, ns, inputs, out):
        return (ns.apply(HyperbolicTangentBackward, g, out),)


class HyperbolicTangentBackward(Function):
    """``g * (1 - y**2)``, tanh's gradient from its output ``y`` (PyTorch's ``tanh_backward``):
    one op, so a recorded backward (``create_graph``, a trace) has one node per tanh."""

    __slots__ = ()
    primitive = True
    name = "tanh_backward"
    elementwise = "{0} * (1 - {1} * {1})"
    operands = ("grad", "output")
    reads_output = False

    def forward(self, ns, g, y):
        t = y * y
        t = 1.0 - t
        return g * t  # (PyTorch's order: an infinite g stays infinite where |y| < 1)

    def backward(self, g2, ns, inputs, out):
        g, y = inputs
        return ns.apply(HyperbolicTangentBackward, g2, y), g2 * g * y * -2.0


class Logistic(Function):
    """The logistic function ``1 / (1 + exp(-x))``, PyTorch's ``sigmoid``."""

    __slots__ = ()
    primitive = True
    name = "sigmoid"
    elementwise = "1 / (1 + exp(-{0}))"
    keep = ()

    def forward(self, ns, a):
        if getattr(a.dtype, "kind", None) == "c":  # (no sign to split on: the formula itself)
            return 1.0 / (1.0 + ns.exp(-a))
        e = ns.exp(-ns.abs(a))  # never overflows
        return ns.where(a >= 0, 1.0 / (1.0 + e), e / (1.0 + e))

    def backward(self, g, ns, inputs, out):
        return (ns.apply(LogisticBackward, g, out),)


class LogisticBackward(Function):
    """``g * y * (1 - y)``, the sigmoid's gradient from its output ``y`` (PyTorch's
    ``sigmoid_backward``): one op, so a recorded backward has one node per sigmoid."""

    __slots__ = ()
    primitive = True
    name = "sigmoid_backward"
    elementwise = "{0} * (1 - {1}) * {1}"
    operands = ("grad", "output")
    reads_output = False

    def forward(self, ns, g, y):
        return g * (1.0 - y) * y  # (PyTorch's order: an infinite g stays infinite where 0 < y < 1)

    def backward(self, g2, ns, inputs, out):
        g, y = inputs
        # d/dg: y (1 - y), this op again; d/dy: g (1 - 2y)
        return ns.apply(LogisticBackward, g2, y), g2 * g - g2 * g * y * 2.0


class Relu(Function):
    __slots__ = ()
    primitive = True
    elementwise = "(({0} > 0 || {0} != {0}) ? {0} : 0)"  # (a NaN stays NaN, as maximum's)
    keep = ()  # as PyTorch, backward reads the output (its sign is the input's), not the input

    def forward(self, ns, a):
        # (not a where: NumPy's where runs about 30x slower than a ufunc on data whose sign
        # varies at random; and maximum keeps NaN, as PyTorch's relu does)
        return ns.maximum(a, 0.0)

    def backward(self, g, ns, inputs, out):
        # PyTorch's threshold_backward: the gradient passes where out <= 0 is false (NaN included), and
        # is 0 elsewhere, also where it is inf or NaN (sqrt(relu(x)) at x < 0: not 0 * inf). Recorded,
        # a step function of the output, so it requires grad where out does.
        off = out <= 0
        if ns.recording:
            return (ns.where(off, 0.0, depends_on(g, ns, out)),)
        if ns.device.xp is np and g.dtype != np.float16:
            # (NumPy's where runs ~10x slower than a product on signs at random: the product, kept
            # unless it made a NaN or inf, which only an inf or NaN in g does; float16 sums overflow)
            product = g * ns.astype(~off, g.dtype)
            if np.isfinite(product.sum()):
                return (product,)
        return (ns.where(off, 0.0, g),)


class Abs(Function):
    __slots__ = ()
    primitive = True
    elementwise = "fabs({0})"
    reads_output = False

    def forward(self, ns, a):
        return ns.abs(a)

    def backward(self, g, ns, inputs, out):
        a = inputs[0]
        if (
            getattr(a.dtype, "kind", None) == "c"
        ):  # (sgn(z) = z / |z|, 0 at 0: written out, so a recorded gradient differentiates it)
            r = ns.abs(a)
            zero = r == 0
            return (ns.where(zero, 0.0, g * a / ns.where(zero, 1.0, r)),)
        return (g * ns.apply(Sign, a),)  # (PyTorch's sgn: 0 at 0 and at NaN)


class Erf(Function):
    """The error function. NumPy and the array API have none, so forward evaluates the
    Chebyshev fit of Numerical Recipes (``erfc``, relative error below 1.2e-7, so erf is
    within 4e-7) in float32, and a series and continued fraction to about 1e-15 in float64
    (see :func:`erf_array`); backward is the exact derivative ``2/sqrt(pi) * exp(-x**2)``."""

    __slots__ = ()
    primitive = True
    elementwise = "erf({0})"
    reads_output = False

    def forward(self, ns, a):
        return erf_array(ns, a)

    def backward(self, g, ns, inputs, out):
        a = inputs[0]
        return (g * (_TWO_OVER_SQRT_PI * ns.exp(-(a * a))),)


class Erfcx(Function):
    """The scaled complementary error function ``exp(x**2) * erfc(x)`` (``torch.special.erfcx``),
    for the tails where ``erfc`` underflows: the continued fraction of ``erfc`` without its
    ``exp(-x**2)`` from x = 1 up (no exp, so nothing underflows), ``exp(x**2) * (1 - erf(x))``
    below, in float64 whatever the dtype, rounded once. Backward: ``2 x erfcx(x) - 2/sqrt(pi)``."""

    __slots__ = ()
    primitive = True
    keep = (0,)

    def forward(self, ns, a):
        return ns.astype(erfcx_array(ns, ns.astype(a, ns.device.dtype("float64"))), a.dtype)

    def backward(self, g, ns, inputs, out):
        return (g * (2.0 * inputs[0] * out - _TWO_OVER_SQRT_PI),)


def _extreme_shares(ns: Any, g: Any, loses_a: Any, loses_b: Any, tie: Any) -> tuple[Any, Any]:
    """The gradients of ``maximum``/``minimum``'s operands, as PyTorch's: each side gets the
    gradient unless it lost (``loses_a``, ``loses_b``), half of it at a tie; where either is
    NaN neither lost nor tied, so both get all of it."""
    half = 0.5 * ns.astype(tie, g.dtype)
    return g * (1.0 - ns.astype(loses_a, g.dtype) - half), g * (1.0 - ns.astype(loses_b, g.dtype) - half)


class Maximum(Function):
    """Elementwise max; where both are equal, each side gets half the gradient (where either
    is NaN, each side all of it)."""

    __slots__ = ()
    primitive = True
    elementwise = "max({0}, {1})"
    reads_output = False
    commutative = True  # pictures need not say which input is which

    def forward(self, ns, a, b):
        return ns.maximum(a, b)

    def backward(self, g, ns, inputs, out):
        a, b = inputs
        return _extreme_shares(ns, g, a < b, a > b, a == b)


class Minimum(Function):
    """Elementwise min; where both are equal, each side gets half the gradient (where either
    is NaN, each side all of it)."""

    __slots__ = ()
    primitive = True
    elementwise = "min({0}, {1})"
    reads_output = False
    commutative = True  # pictures need not say which input is which

    def forward(self, ns, a, b):
        return ns.minimum(a, b)

    def backward(self, g, ns, inputs, out):
        a, b = inputs
        return _extreme_shares(ns, g, a > b, a < b, a == b)


class Where(Function):
    """``where(cond, a, b)``; ``cond`` is a boolean array and carries no gradient."""

    __slots__ = ()
    laid_out_as = slice(0, None)
    no_edge = (0,)  # (the condition is no edge of PyTorch's node)
    primitive = True
    elementwise = "({0} ? {1} : {2})"
    operands = ("cond", "if true", "if false")
    keep = (0,)
    reads_output = False

    def forward(self, ns, cond, a, b):
        return ns.where(cond, a, b)

    def backward(self, g, ns, inputs, out):
        cond, a, b = inputs
        cond = ns.const(cond)
        a_const, b_const = type(a) in _CONST, type(b) in _CONST
        if (a_const or b_const) and may_overwrite(g):  # one gradient only: mask g itself
            if a_const:
                return None, None, ns.fill_where(g, cond, 0.0)
            return None, ns.fill_where(g, ~cond, 0.0), None
        return (
            None,
            None if a_const else ns.where(cond, g, 0.0),
            None if b_const else ns.where(cond, 0.0, g),
        )


class Cast(Function):
    """``astype``; the gradient is cast back to the input's dtype (none for integers)."""

    __slots__ = ()
    primitive = True
    reads_values = False  # backward reads shapes only
    name = "astype"
    computes_in_float32 = False  # (a cast to or from bfloat16 rounds once, as PyTorch's)

    def forward(self, ns, a):
        if (
            getattr(a.dtype, "kind", None) == "c" and np.dtype(self.args).kind != "c"
        ):  # (complex to real: the real parts)
            a = a.real
        return ns.astype(a, self.args)

    def backward(self, g, ns, inputs, out):
        if (
            getattr(g.dtype, "kind", None) == "c" and inputs[0].dtype.kind != "c"
        ):  # (a real input's share: its real part)
            from .complex import Real  # noqa: PLC0415 - a sibling module that imports this one's base

            g = ns.apply(Real, g)
        return (ns.astype(g, inputs[0].dtype),)


# erfc(z) = t * exp(-z**2 + P(t)), t = 1 / (1 + z / 2): P's coefficients, highest power first.
_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
_ERFC_COEFFS = (0.17087277, -0.82215223, 1.48851587, -1.13520398, 0.27886807, -0.18628806, 0.09678418,
                0.37409196, 1.00002368, -1.26551223)  # fmt: skip


_SERIES_TERMS, _CF_TERMS, _SWITCH = 45, 60, 2.5


def blockwise(ns, f, *arrays):
    """``f(*arrays)`` for an elementwise ``f`` of same-shaped arrays, on a CPU computed
    ``ns.cache_block`` elements at a time, so that a chain of many passes over the data
    reads it from cache. ``f`` returns an array or a tuple of arrays.

    >>> blockwise(ns, lambda a, b: a * b + a, x, y)  # doctest: +SKIP
    """
    n = ns.cache_block
    a = arrays[0]
    size = math.prod(a.shape)
    if n is None or size <= 2 * n:
        return f(*arrays)
    flat = [ns.reshape(x, (-1,)) for x in arrays]
    outs = None
    for i in range(0, size, n):
        block = slice(i, i + n) if i + n < size else slice(i, None)  # (the array API has no stop past the end)
        part = f(*[x[block] for x in flat])
        parts = part if isinstance(part, tuple) else (part,)
        if outs is None:
            outs = [ns.empty((size,), p.dtype) for p in parts]  # (every block is written)
        for o, p in zip(outs, parts):
            o[block] = p
    shaped = tuple(ns.reshape(o, a.shape) for o in outs)
    return shaped if isinstance(part, tuple) else shaped[0]


def erfcx_array(ns, x):
    """``exp(x**2) * erfc(x)`` of a float64 array (see :class:`Erfcx`)."""
    y = ns.maximum(x, 1.0)
    f = y + 0.0
    for k in range(200, 0, -1):  # (200 terms: 20 ulps at x = 1, fewer beyond)
        f = y + (0.5 * k) / f
    large = 1.0 / (f * math.sqrt(math.pi))
    z = ns.minimum(x, 1.0)
    small = ns.exp(z * z) * (1.0 - erf_array(ns, z))
    return ns.where(x < 1.0, small, large)


def erf_array(ns, a):
    """erf on raw arrays: to float64 precision for float64, a fast fit otherwise.

    float64 (what gradient checks use) gets the Maclaurin series below |x| = 2.5 and the
    continued fraction of erfc above, each to about 1e-16. Other dtypes get Numerical
    Recipes' erfc fit (relative error < 1.2e-7, below float32's resolution), by Horner's
    rule in place on arrays made here: two passes per coefficient, no temporaries. Either
    runs block by block (see :func:`blockwise`).
    """
    if a.dtype == ns.device.dtype("float64"):
        return blockwise(ns, functools.partial(_erf_precise, ns), a)
    return blockwise(ns, functools.partial(_erf_fit, ns), a)


def _erf_fit(ns, a):
    z = ns.abs(a)
    t = z + 2.0
    t = 2.0 / t  # 1 / (1 + z / 2)
    p = t * _ERFC_COEFFS[0]
    for c in _ERFC_COEFFS[1:-1]:
        p += c
        p *= t
    p += _ERFC_COEFFS[-1]
    z *= z
    p -= z
    r = ns.exp(p)
    r *= t
    r -= 1.0  # -erf(|a|)
    r = ns.copysign(r, a)  # erf is odd: |r| with the sign of a (one pass, not a where)
    # Near 0, 1 - erfc keeps the fit's absolute error (1.2e-7), a large relative one (erf(1e-5)
    # was 1.2% off, erf(1e-10) 0): there the Maclaurin series, whose first omitted term is
    # x^13 / 9360 (relative 3e-8 at |x| = 0.5).
    s = ns.minimum(ns.maximum(a, -0.5), 0.5)  # (the series of the clipped value: no overflow far out)
    x2 = s * s
    series = x2 * (-1.0 / 1320) + 1.0 / 216
    for c in (-1.0 / 42, 1.0 / 10, -1.0 / 3, 1.0):
        series *= x2
        series += c
    series *= s * _TWO_OVER_SQRT_PI
    return ns.where(ns.abs(a) < 0.5, series, r)


def _erf_precise(ns, a):
    z = ns.abs(a)
    # Series: erf(x) = 2/sqrt(pi) * sum_n (-1)^n x^(2n+1) / (n! (2n+1)), on |x| <= 2.5.
    x = ns.minimum(z, _SWITCH)
    x2 = x * x
    term = x + 0.0
    total = x + 0.0
    for n in range(1, _SERIES_TERMS):
        term *= x2
        term *= -1.0 / n
        total += term * (1.0 / (2 * n + 1))
    small = total * _TWO_OVER_SQRT_PI
    # Continued fraction: erfc(x) = exp(-x^2) / sqrt(pi) / (x + (1/2)/(x + 1/(x + (3/2)/(x + ...)))).
    y = ns.maximum(z, _SWITCH)
    f = y + 0.0
    for k in range(_CF_TERMS, 0, -1):
        f = y + (0.5 * k) / f
    large = 1.0 - ns.exp(-(y * y)) / (f * math.sqrt(math.pi))
    r = ns.where(z <= _SWITCH, small, large)
    return ns.copysign(r, a)


class BinaryCrossEntropyWithLogitsEdge(Function):
    """Input 0 (binary cross-entropy with logits ``x``, input 1, and targets ``t``, input 2, per entry, with
    no graph of its own) with PyTorch's gradients, its backward formula's steps: ``(sigmoid(x) - t) g`` for
    ``x`` and ``-x g`` for ``t``, each step rounded to a float16 tensor's dtype as there (the gradient of the
    definition's steps, a softplus, cancelled to up to 14 float16 units from it)."""

    __slots__ = ()
    name = "binary_cross_entropy_with_logits"
    keep = (1, 2)
    reads_output = False

    def forward(self, ns: Any, value: Any, x: Any, t: Any) -> Any:
        return value

    def backward(self, g: Any, ns: Any, inputs: Any, out: Any) -> Any:
        _, x, t = inputs
        return None, g * (ns.apply(Logistic, x) - t), -(x * g)
