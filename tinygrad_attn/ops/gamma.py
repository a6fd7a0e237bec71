"""The log-gamma function and its derivatives (``lgamma``, ``digamma``, ``polygamma``), and the
regularized incomplete gamma functions (``igamma``, ``igammac``).

No array namespace has them, and no composite of the other primitives is accurate, so
each is written here from the array namespace's ``log``, ``sin`` and ``tan``: the argument
is shifted up by the recurrences ``lgamma(x) = lgamma(x + 1) - log|x|`` and
``psi_n(x) = psi_n(x + 1) - (-1)**n n! / x**(n + 1)`` until it is large, where the
asymptotic (Stirling) series is good to the last digit of a float64; negative arguments of
``lgamma`` and ``digamma`` go through the reflection formulas. The derivative of
``polygamma(n, x)`` is ``polygamma(n + 1, x)``, so gradients of every order are these ops.
"""

from __future__ import annotations

import math

import numpy as np

from ..engine.function import Function

#: Bernoulli numbers B_2, B_4, ..., B_20 (the asymptotic series' coefficients).
_B2K = (1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6, -3617 / 510, 43867 / 798, -174611 / 330)
#: Arguments are shifted up to at least this before the series (12 terms then reach 1e-17).
_SHIFT = 12.0


def _shifted(raw, x):
    """``x`` and how many unit steps (at most ``_SHIFT``) take it to at least ``_SHIFT``."""
    steps = raw.clip(raw.ceil(_SHIFT - x), 0.0, _SHIFT)
    return steps


def lgamma_array(raw, x):
    """``log|Gamma(x)|`` elementwise (``x`` a float array of namespace ``raw``)."""
    neg = x < 0.5
    # reflection for x < 0.5: lgamma(x) = log(pi / |sin(pi x)|) - lgamma(1 - x)
    y = raw.where(neg, 1.0 - x, x)
    fin = raw.isfinite(y)
    y = raw.where(fin, y, raw.full_like(y, 2.0))
    steps = _shifted(raw, y)
    z = y + steps
    # log(y (y + 1) ... (y + steps - 1)), one factor per step still owed
    acc = raw.zeros_like(y)
    for k in range(int(_SHIFT)):
        acc = acc + raw.where(steps > k, raw.log(raw.abs(y + float(k))), raw.zeros_like(y))
    inv = 1.0 / z
    inv2 = inv * inv
    series = raw.zeros_like(z)
    for k in range(len(_B2K) - 1, -1, -1):
        two_k = 2 * (k + 1)
        series = series * inv2 + _B2K[k] / (two_k * (two_k - 1))
    big = (z - 0.5) * raw.log(z) - z + 0.5 * math.log(2 * math.pi) + series * inv
    out = big - acc
    s = raw.abs(raw.sin(math.pi * (x - raw.round(x))))  # (sin(pi x) from x's distance to an integer: exact there)
    pole = s == 0  # (the non-positive integers: lgamma is +inf there, without a log(0) warning)
    refl = math.log(math.pi) - raw.log(raw.where(pole, raw.ones_like(s), s)) - out
    out = raw.where(neg, raw.where(pole, raw.full_like(s, math.inf), refl), out)
    out = raw.where((x == 1.0) | (x == 2.0), raw.zeros_like(out), out)  # (log 0! and log 1!: 0 exactly, as libm's)
    # infinities: lgamma(+-inf) = inf; NaN stays NaN
    return raw.where(fin, out, raw.where(raw.isnan(x), x, raw.abs(x)))


def trigamma_array(raw, x):
    """``psi_1(x)`` as PyTorch takes it: below 0.5 the reflection ``pi^2 / sin^2(pi x) - psi_1(1 - x)``
    with ``sin(pi x)`` taken as written (near a pole far from 0, and at the negative integers, where it
    is a rounding error and not 0, that is PyTorch's large finite number). In float64 ``psi_1`` of the
    reflected argument is :func:`polygamma_array`'s (to the last digit; PyTorch's six steps and short
    series are good to ~1e-9); in float32 every step is PyTorch's own, in float32: six steps of
    ``psi_1(x) = psi_1(x + 1) + 1 / x^2`` and the asymptotic series to its ``x^-7`` term."""

    def t(v: float):  # (a constant rounded to x's dtype, so each step rounds as PyTorch's does in it)
        return raw.asarray(v, dtype=x.dtype)

    pi, one = t(math.pi), t(1.0)
    neg = x < 0.5
    s = raw.sin(pi * x)
    s2 = s * s
    nil = s2 == 0
    ones = raw.ones_like(x)
    refl = raw.where(nil, math.inf * ones, (pi * pi) / raw.where(nil, ones, s2))  # (+inf at 0: sin(0) is 0)
    y = raw.where(neg, one - x, x)
    if x.dtype == raw.float64:
        core = polygamma_array(raw, 1, y, _steps=True)
        core = raw.where(y == math.inf, raw.zeros_like(y), core)  # (psi_1(+inf) = 0, as PyTorch's)
        return raw.where(neg, refl - core, core)
    result = raw.zeros_like(x)
    for _ in range(6):
        result = result + one / (y * y)
        y = y + one
    ixx = one / (y * y)
    result = result + (one + one / (t(2.0) * y) + ixx * (t(1 / 6) - ixx * (t(1 / 30) - ixx * t(1 / 42)))) / y
    return raw.where(neg, refl - result, result)


def _cot_derivative_coefficients(n: int) -> list[int]:
    """The coefficients (of ``c^0, c^1, ...``) of ``P_n`` with ``d^n/dy^n cot(y) = P_n(cot(y))``:
    ``P_0 = c``, ``P_(k+1) = -(1 + c^2) P_k'`` (integers, exact)."""
    p = [0, 1]
    for _ in range(n):
        d = [k * p[k] for k in range(1, len(p))]  # P'
        q = [0] * (len(d) + 2)
        for k, a in enumerate(d):
            q[k] -= a
            q[k + 2] -= a
        p = q
    return p


def _polygamma_reflected(raw, n: int, x):
    """``psi_n(x)`` of negative ``x`` (``n >= 1``) by the reflection ``psi_n(x) = (-1)^n psi_n(1 - x) -
    pi^(n+1) d^n/dy^n cot(y)`` at ``y = pi x``, ``cot`` taken at ``x``'s distance to an integer (exact
    there); at the non-positive integers ``(-1)^(n+1) inf``, as PyTorch's."""
    near = x - raw.round(x)  # (in [-0.5, 0.5])
    pole = (near == 0) | raw.isinf(x)
    far = raw.abs(near) > 0.25  # (there cot(pi r) = tan(pi (1/2 - |r|)) sign(r): exact near the half-integers)
    c = raw.where(
        far,
        raw.copysign(raw.tan(math.pi * (0.5 - raw.abs(near))), near),
        1.0 / raw.tan(math.pi * raw.where(pole | far, raw.full_like(near, 0.25), near)),
    )
    coeffs = _cot_derivative_coefficients(n)
    p = raw.full_like(c, float(coeffs[-1]))  # (Horner from the leading term: no 0 * inf at a subnormal r)
    for a in reversed(coeffs[:-1]):
        p = p * c + float(a)
    out = (-1.0) ** n * polygamma_array(raw, n, 1.0 - raw.where(pole, raw.zeros_like(x), x)) - math.pi ** (n + 1) * p
    return raw.where(
        pole | raw.isnan(x), raw.where(raw.isnan(x), x, raw.full_like(x, (-1.0) ** (n + 1) * math.inf)), out
    )


def polygamma_array(raw, n: int, x, _steps: bool = False):
    """``psi_n(x)``, the ``n``-th derivative of the digamma function (``n = 0``: digamma), elementwise.
    ``n = 1`` is :func:`trigamma_array`'s (``_steps``: this function's upward steps and series, for
    ``x >= 0.5``); negative ``x`` with ``n >= 2`` goes through :func:`_polygamma_reflected` (the upward
    steps from far below 0 would need as many steps as ``|x|``)."""
    if n == 1 and not _steps:
        return trigamma_array(raw, x)
    if n >= 2 and bool(raw.any(x < 0)):
        neg = x < 0
        pos = polygamma_array(raw, n, raw.where(neg, raw.ones_like(x), x))
        refl = _polygamma_reflected(raw, n, raw.where(neg, x, -raw.full_like(x, 0.5)))
        return raw.where(neg, refl, pos)
    if n == 0:
        neg = x < 0.5
        y = raw.where(neg, 1.0 - x, x)
    else:
        neg = None
        y = x
    fin = raw.isfinite(y)
    y = raw.where(fin, y, raw.full_like(y, 2.0))
    steps = _shifted(raw, y)
    z = y + steps
    sign = -1.0 if n % 2 == 0 else 1.0  # (-1) ** (n + 1)
    nfact = math.factorial(n)
    acc = raw.zeros_like(y)
    for k in range(int(_SHIFT)):
        acc = acc + raw.where(steps > k, 1.0 / (y + float(k)) ** (n + 1), raw.zeros_like(y))
    inv = 1.0 / z
    inv2 = inv * inv
    if n == 0:
        series = raw.zeros_like(z)
        for k in range(len(_B2K) - 1, -1, -1):
            series = series * inv2 + _B2K[k] / (2 * (k + 1))
        big = raw.log(z) - 0.5 * inv - series * inv2
        out = big - acc
    else:
        series = raw.zeros_like(z)
        for k in range(len(_B2K) - 1, -1, -1):
            two_k = 2 * (k + 1)
            coef = _B2K[k] * math.factorial(two_k + n - 1) / math.factorial(two_k)
            series = series * inv2 + coef
        lead = math.factorial(n - 1) * inv**n + 0.5 * nfact * inv ** (n + 1)
        big = sign * (lead + series * inv ** (n + 2))
        out = big + sign * nfact * acc
    if neg is not None:
        # digamma(x) = digamma(1 - x) - pi / tan(pi x); at the poles (0, -1, ...) NaN, as PyTorch's
        near = x - raw.round(x)  # (tan(pi x) from x's distance to an integer: exact near it, of period 1)
        pole = near == 0
        t = raw.where(pole, raw.ones_like(near), raw.tan(math.pi * near))  # (no 1/0 at integers: set below)
        refl = out - math.pi / t
        refl = raw.where(
            pole, raw.where(x == 0, -raw.copysign(raw.full_like(x, math.inf), x), raw.full_like(x, math.nan)), refl
        )
        out = raw.where(neg, refl, out)
    if n == 0:
        edge = raw.where(raw.isnan(x) | (x < 0), raw.full_like(x, math.nan), raw.full_like(x, math.inf))
    else:  # (PyTorch's zeta: NaN at +inf and NaN; -inf is below every pole, (-1)^(n+1) inf)
        edge = raw.where(x < 0, raw.full_like(x, (-1.0) ** (n + 1) * math.inf), raw.full_like(x, math.nan))
    return raw.where(fin, out, edge)


class Lgamma(Function):
    """``log|Gamma(x)|``; its derivative is ``digamma(x)``."""

    __slots__ = ()
    primitive = True
    name = "lgamma"
    keep = (0,)
    reads_output = False

    def forward(self, ns, a):
        f64 = ns.device.dtype("float64")
        if a.dtype == f64:
            return lgamma_array(ns.device.xp, a)
        # (in float32 the shifted sum and the reflection lose ~40 ulps where lgamma is near 0; in
        # float64 they lose nothing float32 can see: one rounding at the end, as PyTorch's)
        return ns.astype(lgamma_array(ns.device.xp, ns.astype(a, f64)), a.dtype)

    def backward(self, g, ns, inputs, out):
        return (g * ns.apply(Polygamma, inputs[0], args=0),)


class Polygamma(Function):
    """``args = n``: the ``n``-th derivative of the digamma function; its derivative is the ``n + 1``-th."""

    __slots__ = ()
    primitive = True
    name = "polygamma"
    keep = (0,)
    reads_output = False

    def forward(self, ns, a):
        n, raw = self.args, ns.device.xp
        f64 = ns.device.dtype("float64")
        if n in (0, 1) or a.dtype == f64:  # (trigamma: PyTorch's steps in the input's dtype)
            return polygamma_array(raw, n, a)
        # (in float32 the series and reflection lose digits near the poles: in float64, one rounding, as
        # PyTorch's zeta's accuracy shows)
        return ns.astype(polygamma_array(raw, n, ns.astype(a, f64)), a.dtype)

    def backward(self, g, ns, inputs, out):
        return (g * ns.apply(Polygamma, inputs[0], args=self.args + 1),)


#: The incomplete gamma function's series and continued fraction stop at this many terms (its
#: arguments near each other and large need about ``10 sqrt(a)`` of them).
_IGAMMA_MAX_TERMS = 2000
_IGAMMA_EPS = 1e-16
_TINY = 1e-300


#: Above this ``a`` Temme's uniform asymptotic expansion (its terms to ``1/a^2``; the next is below
#: 1e-12 there); below it the series and the continued fraction, which need ``~10 sqrt(a)`` terms.
_TEMME_FROM = 1000.0
#: Temme's coefficients ``c_k(eta)`` as power series in ``eta`` (for ``c_0``, ``c_1`` where the
#: closed forms cancel; ``c_2`` everywhere: ``exp(-a eta^2 / 2)`` makes its error negligible).
_C0 = (-1 / 3, 1 / 12, -2 / 135, 1 / 864, 1 / 2835, -139 / 777600)
_C1 = (-1 / 540, -1 / 288, 1 / 378, -77 / 77760, 1 / 4860)
_C2 = (25 / 6048, -139 / 51840, 1 / 1296)


def _poly(raw, coeffs, t):
    out = raw.zeros_like(t)
    for c in reversed(coeffs):
        out = out * t + c
    return out


def _erfc_array(raw, z):
    """``erfc(z)`` in float64 with relative precision in the upper tail (the series of erf below
    |z| = 2.5, the continued fraction of erfc above)."""
    az = raw.abs(z)
    s = raw.minimum(az, 2.5)
    s2 = s * s
    term = s.copy()
    total = s.copy()
    for n in range(1, 45):
        term = term * (-s2 / n)
        total = total + term / (2 * n + 1)
    small = 1.0 - total * (2.0 / math.sqrt(math.pi))
    y = raw.maximum(az, 2.5)
    f = y.copy()
    for k in range(60, 0, -1):
        f = y + (0.5 * k) / f
    large = raw.exp(-(y * y)) / (f * math.sqrt(math.pi))
    pos = raw.where(az <= 2.5, small, large)
    return raw.where(z < 0, 2.0 - pos, pos)


def _temme(raw, a, x):
    """``(P(a, x), Q(a, x))`` by Temme's expansion: ``erfc(eta sqrt(a/2)) / 2 + exp(-a eta^2/2) / sqrt(2 pi a) sum c_k / a^k``
    with ``lambda = x / a``, ``eta = sign(lambda - 1) sqrt(2 (lambda - 1 - log lambda))``."""
    mu = (x - a) / a  # (x - a exact where the two are close: no rounding of x / a before the difference)
    small = raw.abs(mu) < 0.01
    ms = raw.where(small, mu, 0.0)
    # mu - log(1 + mu): its series near 0 (no cancellation), log1p elsewhere
    acc = raw.zeros_like(ms)
    for k in range(13, 1, -1):
        acc = acc * ms + (-1.0) ** k / k
    half_sq = raw.where(small, acc * ms * ms, mu - raw.log1p(raw.where(small, 0.0, mu)))
    eta = raw.sign(mu) * raw.sqrt(2.0 * raw.maximum(half_sq, 0.0))
    safe_mu = raw.where(small, 1.0, mu)
    safe_eta = raw.where(small, 1.0, eta)
    c0 = raw.where(small, _poly(raw, _C0, eta), 1.0 / safe_mu - 1.0 / safe_eta)
    c1 = raw.where(small, _poly(raw, _C1, eta),
                   1.0 / safe_eta**3 - 1.0 / safe_mu**3 - 1.0 / safe_mu**2 - 1.0 / (12.0 * safe_mu))  # fmt: skip
    c2 = _poly(raw, _C2, eta)
    weight = raw.exp(-0.5 * a * eta * eta) / raw.sqrt(2.0 * math.pi * a)
    # (far from x = a the weight underflows to 0 while the c_k grow: the product is 0 there, not 0 * inf)
    tail = raw.where(weight == 0, 0.0, weight * (c0 + (c1 + c2 / a) / a))
    z = eta * raw.sqrt(a / 2.0)
    # (each from its own erfc, not as 1 minus the other: both keep their relative precision where small)
    return 0.5 * _erfc_array(raw, -z) - tail, 0.5 * _erfc_array(raw, z) + tail


def igamma_array(raw, a, x, upper: bool):
    """The regularized lower (``upper``: upper) incomplete gamma function ``P(a, x)`` (``Q = 1 - P``),
    elementwise, in float64: where ``x < a + 1`` the series of ``P``, elsewhere the continued fraction
    of ``Q`` (Lentz's evaluation), each to float64's precision; the other one as its complement.
    Edges as PyTorch's: NaN for negative arguments and ``a = x = 0``; ``P(0, x > 0) = 1``,
    ``P(a, 0) = 0``, ``P(inf, x) = 0``, ``P(a, inf) = 1``."""
    dt = a.dtype
    a, x = raw.broadcast_arrays(a.astype(raw.float64), x.astype(raw.float64))
    ok = (a > 0) & (x > 0) & raw.isfinite(a) & raw.isfinite(x)
    aa = raw.where(ok, a, 1.0)
    xx = raw.where(ok, x, 1.0)
    log_front = aa * raw.log(xx) - xx - lgamma_array(raw, aa)  # log(x^a e^-x / Gamma(a))
    use_series = (xx < aa + 1.0) & (aa <= _TEMME_FROM)
    # series: P = x^a e^-x / Gamma(a + 1) * sum_n x^n / ((a + 1) ... (a + n))
    term = raw.where(use_series, 1.0 / aa, 0.0)
    total = term
    denom = aa.copy()
    for _ in range(_IGAMMA_MAX_TERMS):
        denom = denom + 1.0
        term = term * xx / denom
        total = total + term
        if not bool((raw.abs(term) > raw.abs(total) * _IGAMMA_EPS).any()):
            break
    p_series = total * raw.exp(log_front)
    # continued fraction: Q = x^a e^-x / Gamma(a) * 1 / (x + 1 - a - 1 (1 - a) / (x + 3 - a - ...))
    cf = ~use_series & (aa <= _TEMME_FROM)
    b = xx + 1.0 - aa
    c = raw.full_like(xx, 1.0 / _TINY)
    d = 1.0 / raw.where(cf, b, 1.0)
    h = d
    for i in range(1, _IGAMMA_MAX_TERMS):
        an = -i * (i - aa)
        b = b + 2.0
        d = an * d + b
        d = raw.where(raw.abs(d) < _TINY, _TINY, d)
        c = b + an / c
        c = raw.where(raw.abs(c) < _TINY, _TINY, c)
        d = 1.0 / d
        delta = d * c
        h = h * raw.where(cf, delta, 1.0)
        if not bool((cf & (raw.abs(delta - 1.0) > _IGAMMA_EPS)).any()):
            break
    q_cf = raw.exp(log_front) * h
    p = raw.where(use_series, p_series, 1.0 - q_cf)
    q = raw.where(use_series, 1.0 - p_series, q_cf)
    temme = aa > _TEMME_FROM
    if bool(temme.any()):
        p_t, q_t = _temme(raw, raw.where(temme, aa, 2.0 * _TEMME_FROM), raw.where(temme, xx, 2.0 * _TEMME_FROM))
        p = raw.where(temme, p_t, p)
        q = raw.where(temme, q_t, q)
    out = q if upper else p
    # the edges: which of P and Q is 1 (the other 0), or NaN
    one_p = ((a == 0) & (x > 0)) | (raw.isinf(x) & (x > 0) & raw.isfinite(a) & (a >= 0))
    zero_p = ((x == 0) & (a > 0)) | (raw.isinf(a) & (a > 0) & raw.isfinite(x) & (x >= 0))
    nan = (a < 0) | (x < 0) | raw.isnan(a) | raw.isnan(x) | ((a == 0) & (x == 0)) | (raw.isinf(a) & raw.isinf(x))
    edge_p = raw.where(one_p, 1.0, raw.where(zero_p, 0.0, math.nan))
    edge = (1.0 - edge_p) if upper else edge_p
    out = raw.where(ok, out, raw.where(nan, math.nan, edge))
    return out.astype(dt)


class Igamma(Function):
    """``args = upper``: the regularized incomplete gamma function ``P(a, x)`` (``upper``: ``Q(a, x)``).
    Its derivative in ``x`` is ``+-x^(a-1) e^-x / Gamma(a)``; in ``a`` PyTorch has none, and neither
    does this (asking for it raises, as there)."""

    __slots__ = ()
    laid_out_as = slice(0, None)
    primitive = True
    name = "igamma"
    operands = ("a", "x")
    keep = (0, 1)
    reads_output = False

    def forward(self, ns, a, x):
        from .factorizations import loop_namespace  # noqa: PLC0415

        raw, to_raw, back = loop_namespace(ns.device)
        with np.errstate(all="ignore"):  # (lanes a where discards overflow in the loops; CuPy never warns)
            return back(igamma_array(raw, to_raw(a), to_raw(x), self.args))

    def backward(self, g, ns, inputs, out):
        if getattr(self.inputs[0], "requires_grad", False):
            name = "igammac" if self.args else "igamma"
            raise NotImplementedError(f"the derivative for '{name}: input' is not implemented.")
        a, x = inputs
        with np.errstate(all="ignore"):  # (x = 0: the density is inf or 0, as PyTorch's)
            density = ns.exp((a - 1.0) * ns.log(x) - x - ns.apply(Lgamma, a))
        return None, (-g if self.args else g) * density
