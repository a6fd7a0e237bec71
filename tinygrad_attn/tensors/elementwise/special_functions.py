"""PyTorch's further elementwise math: the gamma family (``lgamma digamma polygamma mvlgamma igamma
igammac``, primitives of ``ops/gamma.py``), the Bessel function ``i0`` (and ``i0e i1 i1e``, the
names of ``torch.special``; ``ops/bessel.py``), ``erfc logit logaddexp2 ldexp float_power fmax fmin renorm``
(composites), and the functions without a gradient (``heaviside nextafter frexp signbit gcd
lcm``) and the real-number spellings ``sgn angle`` (``positive`` is tensor_torch's). ``torch.special``'s
own: ``entr xlog1py ndtr log_ndtr ndtri`` (``ops/normal_law.py``), ``zeta`` (``ops/zeta.py``),
``spherical_bessel_j0 modified_bessel_i0 modified_bessel_i1``; the K Bessel functions are
``bessel_k.py``'s, the orthogonal polynomials ``orthogonal_polynomials.py``'s.

Each is a ``tga.`` free function and, where PyTorch has one, a :class:`Tensor` method (the
table :data:`METHODS`); float functions of integer tensors give float32, as PyTorch's.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np

from ... import ops
from ...engine.declare import low_precision, public
from ...engine.forward_grads import differentiated
from ...functional.checks import tensor_arg as _tensor
from ...functional.checks import tensor_operand
from ...ops.array_function import array_function
from ...ops.compare import NextAfter, SignBit
from ...ops.elementwise import erf_array, erfcx_array
from ...ops.saved import saved_for_backward, with_gradient_of
from .._tensor import Tensor, where
from ..dtypes import UnsupportedDtypeError, result_type, scalar_type_name
from ..mutation.out_argument import written_to_out
from ..promotion import float_dtype_of
from ..reduce.tensor_reduce import norm2, power_norm
from ..return_types import structseq
from ..shape import dims
from . import bessel_j, bessel_k, orthogonal_polynomials  # noqa: F401 (they declare torch.special's J, Y, Ai, K and polynomials)
from .complex_numbers import complex_angle, complex_sgn


def _floating(x: Any, op: str) -> Tensor:
    x = _tensor(x, op)
    return x if x.dtype.kind == "f" else x.astype(float_dtype_of(x.dtype))


def _operands(a: Any, b: Any, op: str, floating: bool = False) -> tuple[Tensor, Tensor]:
    """Two operands of PyTorch's promoted dtype on one device (a float one where ``floating``)."""
    like = a if isinstance(a, Tensor) else b
    if not isinstance(like, Tensor):
        raise TypeError(f"{op}: at least one operand must be a Tensor")
    dt = np.dtype(result_type(a, b))
    if floating:
        dt = float_dtype_of(dt)
    out = []
    for v in (a, b):
        t = v if isinstance(v, Tensor) else Tensor(np.asarray(v, dtype=dt), device=like._dev)
        out.append(t if t.dtype == dt else t.astype(dt))
    return out[0], out[1]


@public(
    function=False,
    special=("erfcx",),
    dtypes="no_half",
)
def erfcx(input: Tensor) -> Tensor:  # noqa: A002
    """``exp(x**2) * erfc(x)``, finite where ``erfc`` underflows (``torch.special.erfcx``)."""
    return ops.Erfcx.apply(_floating(input, "erfcx"))


# -- the gamma family ------------------------------------------------------------------
@public(method=True, inplace=True, special=("gammaln",))
def lgamma(input: Tensor) -> Tensor:  # noqa: A002
    """``log|Gamma(x)|``."""
    return ops.Lgamma.apply(_floating(input, "lgamma"))


@public(method=True, inplace=True, special=("digamma", "psi"))
def digamma(input: Tensor) -> Tensor:  # noqa: A002
    """The logarithmic derivative of the gamma function, ``Gamma'(x) / Gamma(x)`` (-inf at 0, NaN at
    the negative integers)."""
    return ops.Polygamma.apply(_floating(input, "digamma"), args=0)


@public(inplace=True, special=("polygamma",))
def polygamma(n: int, input: Tensor) -> Tensor:  # noqa: A002
    """The ``n``-th derivative of :func:`digamma` (``n >= 0``)."""
    if int(n) < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    return ops.Polygamma.apply(_floating(input, "polygamma"), args=int(n))


@public(name="polygamma", function=False, method=True, inplace=True)
def _polygamma_method(self: Tensor, n: int) -> Tensor:
    """``polygamma(n, self)`` (the method takes ``n`` after the tensor, as PyTorch's)."""
    return polygamma(n, self)


@public(method=True, inplace=True, special=("multigammaln",), dtypes="not_bool")
def mvlgamma(input: Tensor, p: int) -> Tensor:  # noqa: A002
    """The log of the multivariate gamma function of dimension ``p``:
    ``p (p - 1) / 4 log(pi) + sum_i lgamma(x - i / 2)`` (defined for entries above ``(p - 1) / 2``)."""
    x = _floating(input, "mvlgamma")
    if p < 1:
        raise RuntimeError(f"p has to be greater than or equal to 1, got {p}")
    # (PyTorch's CPU mvlgamma checks no domain: below (p - 1) / 2 it is the sum of log|gamma|.) As
    # PyTorch's, each term's argument is x plus its offset, 0.0 included: -0.0 + 0.0 is +0.0, so the
    # gradient at -0.0 is digamma(+0.0) = -inf, the side PyTorch's takes
    terms = [lgamma(x + (-i / 2)) for i in range(p - 1, -1, -1)]
    if x.dtype == np.float16:  # (PyTorch's sums the float16 terms in float32, rounding once)
        terms = [t.astype(np.float32) for t in terms]
    out = sum(terms[1:], terms[0]).astype(x.dtype) + p * (p - 1) / 4 * math.log(math.pi)
    return saved_for_backward(out, x)  # (as PyTorch's, it keeps its input)


# -- Bessel and incomplete gamma functions (ops/bessel.py, ops/gamma.py) -----------------
@public(method=True, inplace=True, inplace_function=True, special=("i0",))
def i0(input: Tensor) -> Tensor:  # noqa: A002
    """The modified Bessel function of the first kind of order 0, ``sum_k (x^2 / 4)^k / (k!)^2``;
    its derivative is :func:`i1`."""
    return ops.I0.apply(_floating(input, "i0"))


@public(function=False, special=("i0e",))
def i0e(input: Tensor) -> Tensor:  # noqa: A002
    """``exp(-|x|) i0(x)`` (``torch.special.i0e``), finite where ``i0`` overflows."""
    return ops.I0e.apply(_floating(input, "i0e"))


@public(function=False, special=("i1",))
def i1(input: Tensor) -> Tensor:  # noqa: A002
    """The modified Bessel function of the first kind of order 1 (``torch.special.i1``)."""
    return ops.I1.apply(_floating(input, "i1"))


@public(function=False, special=("i1e",))
def i1e(input: Tensor) -> Tensor:  # noqa: A002
    """``exp(-|x|) i1(x)`` (``torch.special.i1e``)."""
    return ops.I1e.apply(_floating(input, "i1e"))


def _gamma_operands(a: Any, x: Any, op: str) -> tuple[Tensor, Tensor]:
    for pos, v in ((1, a), (2, x)):  # (PyTorch's takes tensors only: a number is its TypeError)
        if not isinstance(v, Tensor):
            raise TypeError(f"{op}(): argument '{('input', 'other')[pos - 1]}' (position {pos}) must be Tensor, "
                            f"not {type(v).__name__}")  # fmt: skip
    a, x = _operands(a, x, op)
    if a.dtype.kind != "f":  # (PyTorch's message names its dtype: 'Long' for int64)
        names = {"int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool"}
        raise RuntimeError(f"\"{op}_cpu\" not implemented for '{names.get(str(a.dtype), str(a.dtype))}'")
    return a, x


@public(method=True, inplace=True, special=("gammainc",), dtypes="floating", operands=("input", "other"))
def igamma(input: Tensor, other: Tensor) -> Tensor:  # noqa: A002
    """The regularized lower incomplete gamma function ``P(a, x) = 1/Gamma(a) int_0^x t^(a-1) e^-t dt``
    (``a = input``, ``x = other``, both tensors, broadcast). The gradient reaches ``x`` only: asking
    for ``a``'s raises ``NotImplementedError``, as PyTorch's.

    >>> tga.igamma(tga.tensor([1.0]), tga.tensor([2.0]))  # 1 - exp(-2)  # doctest: +SKIP
    Tensor([0.8647])
    """
    a, x = _gamma_operands(input, other, "igamma")
    return ops.Igamma.apply(a, x, args=False)


@public(method=True, inplace=True, special=("gammaincc",), dtypes="floating", operands=("input", "other"))
def igammac(input: Tensor, other: Tensor) -> Tensor:  # noqa: A002
    """The regularized upper incomplete gamma function ``Q(a, x) = 1 - P(a, x)`` (see :func:`igamma`)."""
    a, x = _gamma_operands(input, other, "igammac")
    return ops.Igamma.apply(a, x, args=True)


# -- composites ------------------------------------------------------------------------
@public(method=True, inplace_function=True, special=("erfc",))
def erfc(input: Tensor) -> Tensor:  # noqa: A002
    """The complementary error function ``1 - erf(x)``: for ``x >= 0`` as ``erfcx(x) exp(-x^2)``,
    exact in the tail where ``1 - erf(x)`` cancels to nothing (erfc(10) is 2e-45, not 0), and
    ``2 - erfc(-x)`` below 0 (``-x`` spelled as a where: the gradient at 0 is the true one)."""
    x = _floating(input, "erfc")
    up = x >= 0
    t = where(up, x, -x)
    tail = array_function(_erfc_tail, t)
    if differentiated(t):  # (the gradient of 1 - erf: -2/sqrt(pi) exp(-t^2), PyTorch's, -0 at infinity)
        tail = with_gradient_of(tail, 1.0 - t.erf())
    return saved_for_backward(where(up, tail, 2.0 - tail), x)  # (PyTorch's keeps its input)


def _erfc_tail(ns: Any, t: Any) -> Any:
    """``erfcx(t) exp(-t^2)`` for ``t >= 0``, in float64 and rounded once: ``t^2`` split as
    ``hi^2 + lo (hi + t)`` with ``hi`` of 26 bits (exact in float64), since the rounding of
    ``t^2`` alone would cost ``exp`` a relative ``t^2 eps`` (5e-14 at t = 26)."""
    x = ns.minimum(ns.astype(t, ns.device.dtype("float64")), 40.0)  # (erfc underflows to 0 by 28)
    c = x * 134217729.0  # 2**27 + 1
    hi = c - (c - x)
    lo = x - hi
    e = erfcx_array(ns, x) * ns.exp(-(hi * hi)) * ns.exp(-(lo * (hi + x)))
    near = 1.0 - erf_array(ns, ns.minimum(x, 1.0))  # (below 1 no cancellation: one rounding fewer)
    return ns.astype(ns.where(x < 1.0, near, e), t.dtype)


@public(method=True, inplace_function=True, special=("logit",))
def logit(input: Tensor, eps: float | None = None) -> Tensor:  # noqa: A002
    """``log(x / (1 - x))``, ``x`` clamped to ``[eps, 1 - eps]`` first where ``eps`` is given
    (outside it the gradient is 0, as PyTorch's)."""
    return ops.Logit.apply(_floating(input, "logit"), args=None if eps is None else float(eps))


@public(method=True, dtypes="floating", operands=("input", "other"))
def logaddexp2(input: Tensor, other: Tensor) -> Tensor:  # noqa: A002
    """``log2(2**x + 2**y)``, without overflow."""
    a, b = _operands(input, other, "logaddexp2", floating=True)
    out = (a * math.log(2.0)).logaddexp(b * math.log(2.0)) / math.log(2.0)
    return saved_for_backward(out, a, b)


@public(method=True, inplace_function=True)
def ldexp(input: Tensor, other: Any) -> Tensor:  # noqa: A002
    """``input * 2**other`` (a float result; complex where either is)."""
    x = tensor_operand(input, "ldexp")
    e = tensor_operand(other, "ldexp", "other", 2)
    if (
        x.dtype.kind == "f" and e.dtype.kind == "b"
    ):  # (a float input's kernel takes the exponent as it is: none for bool)
        raise UnsupportedDtypeError(f"\"ldexp_cpu_exp\" not implemented for 'Bool' (input {x.dtype}, other {e.dtype} "
                                    f"of shape {tuple(e.shape)}); convert other with .int()")  # fmt: skip
    if "c" in (x.dtype.kind, e.dtype.kind):  # (PyTorch's input * 2.0 ** other, in the complex dtype they promote to)
        e = e if e.dtype.kind in "fc" else e.astype(np.float32)
        return saved_for_backward(x * e.exp2(), output=True)
    # (PyTorch's input * 2.0 ** other: an integer input takes a float exponent's dtype, else the default float)
    x = x.astype(e.dtype) if x.dtype.kind in "biu" and e.dtype.kind == "f" else _floating(x, "ldexp")
    out = x * e.astype(x.dtype if e.dtype.kind != "f" else result_type(x, e)).exp2()
    return saved_for_backward(out, output=True)


@public(method=True)
def float_power(input: Any, exponent: Tensor | float) -> Tensor:  # noqa: A002
    """``input ** exponent`` in float64 (both operands converted first)."""
    wide = np.complex128 if any(getattr(v, "dtype", None) is not None and v.dtype.kind == "c" or isinstance(v, complex)
                                for v in (input, exponent)) else np.float64  # fmt: skip
    a, b = (v.astype(wide) if isinstance(v, Tensor) else v for v in (input, exponent))
    if not isinstance(a, Tensor) and not isinstance(b, Tensor):
        raise TypeError("float_power: at least one operand must be a Tensor")
    if not isinstance(a, Tensor):
        a = Tensor(np.asarray(a, dtype=wide), device=b._dev)
    return a**b


@public(method=True)
def fmax(input: Tensor, other: Any) -> Tensor:  # noqa: A002
    """The larger of the two, elementwise, a NaN losing to a number (NaN only where both are);
    at ties the gradient goes to ``input``, as PyTorch's."""
    for pos, x in ((1, input), (2, other)):  # (PyTorch's fmax takes tensors only: a number is its TypeError)
        if not isinstance(x, Tensor):
            raise TypeError(f"fmax(): argument '{('input', 'other')[pos - 1]}' (position {pos}) must be Tensor, "
                            f"not {type(x).__name__}")  # fmt: skip
    a, b = _operands(input, other, "fmax")
    if a.dtype.kind != "f":
        return where(a >= b, a, b)
    return saved_for_backward(where((a >= b) | b.isnan(), a, b), a, b)


@public(method=True)
def fmin(input: Tensor, other: Any) -> Tensor:  # noqa: A002
    """The smaller of the two, elementwise, a NaN losing to a number (NaN only where both are)."""
    for pos, x in ((1, input), (2, other)):  # (PyTorch's fmin takes tensors only: a number is its TypeError)
        if not isinstance(x, Tensor):
            raise TypeError(f"fmin(): argument '{('input', 'other')[pos - 1]}' (position {pos}) must be Tensor, "
                            f"not {type(x).__name__}")  # fmt: skip
    a, b = _operands(input, other, "fmin")
    if a.dtype.kind != "f":
        return where(a <= b, a, b)
    return saved_for_backward(where((a <= b) | b.isnan(), a, b), a, b)


@public(method=True, inplace=True, dtypes="floating")
def renorm(input: Tensor, p: float, dim: int, maxnorm: float) -> Tensor:  # noqa: A002
    """``input`` with each slice along ``dim`` whose ``p``-norm exceeds ``maxnorm`` scaled down to it."""
    x = _tensor(input, "renorm")
    if x.ndim < 2:
        raise RuntimeError(f"renorm: input needs at least 2 dimensions, got {x.ndim} dimensions")
    if p <= 0:
        raise RuntimeError(f"renorm: non-positive-norm not supported, got p={p}")
    if maxnorm < 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm}")
    d = dims.one(x.shape, dim, "renorm")
    return ops.Renorm.apply(x, args=(float(p), tuple(i for i in range(x.ndim) if i != d), float(maxnorm)))


def _slice_norm(x: Tensor, p: float, others: tuple) -> Tensor:
    """The ``p``-norm of each slice of ``x`` over the axes ``others`` (kept), as PyTorch's vector norm."""
    if not others:
        return x.abs()
    if p == 2:
        return norm2(x, others, True)
    if math.isinf(p):
        return x.abs().amax(others, keepdim=True)
    if p == 1:
        return x.abs().sum(others, keepdim=True)
    return power_norm(x.abs(), p, others, True)


def _norm_backward(go: Tensor, x: Tensor, p: float, norm: Tensor, others: tuple) -> Tensor:
    """PyTorch's ``norm_backward``: ``go`` (one per slice) times the norm's derivative, its zero norms
    masked after the division (so that, differentiated again, they are NaN, as PyTorch's); of a
    complex ``x``, ``sgn`` for ``sign`` (the norm's conjugate Wirtinger derivative, as PyTorch's)."""
    sign = x.sgn if x.dtype.kind == "c" else x.sign
    if p == 1:
        return sign() * go
    if p == 2:
        return go * where(norm == 0, 0.0, x / norm)
    a = x.abs()
    if math.isinf(p):
        hit = ((a == norm) | a.isnan()).astype(x.dtype)
        return sign() * ((go / hit.sum(others, keepdim=True)) * hit)
    if p < 1:
        return sign() * where(x == 0, 0.0, a ** (p - 1)) * go * norm ** (1 - p)
    scaled = sign() * a ** (p - 1) if p < 2 else x * a ** (p - 2)
    return scaled * where(norm == 0, 0.0, go / norm ** (p - 1))


def renorm_gradient(g: Tensor, x: Tensor, p: float, others: tuple, maxnorm: float) -> Tensor:
    """PyTorch's ``renorm_backward`` in tensor ops: recorded (``create_graph``), its derivative is PyTorch's."""
    norm = _slice_norm(x, p, others)
    xg = x.conj() * g if x.dtype.kind == "c" else x * g  # (the norm is real: of a complex x, the real part)
    nb = _norm_backward((xg.real if x.dtype.kind == "c" else xg).sum(others, keepdim=True), x, p, norm, others)
    inverse = 1.0 / (norm + 1e-7)
    factor = inverse * maxnorm
    return where(norm > maxnorm, factor * g - (factor * inverse) * nb, g)


# -- without gradient ------------------------------------------------------------------
# (each computed by an op, ``array_function``: a trace computes it again at each replay)
def _computed_on_host(f: Any) -> Any:
    """An array function computed by NumPy on the host, its result put back on the device."""

    @functools.wraps(f)
    def run(ns: Any, *arrays: Any) -> Any:
        dev = ns.device
        return dev.asarray(np.asarray(f(*(np.asarray(dev.to_host(a)) for a in arrays))))

    return run


@_computed_on_host
def _frexp_mantissa(a: Any) -> Any:
    return np.frexp(a)[0]


@_computed_on_host
def _frexp_exponent(a: Any) -> Any:
    return np.frexp(a)[1].astype(np.int32)


@_computed_on_host
def _frexp_scale(a: Any) -> Any:
    # d mantissa / dx = 1 / 2**exponent, with 2**exponent taken from the int32 exponent in float32 as
    # PyTorch's gradient takes it: 0 below float32's range (gradient inf), inf above it (gradient 0)
    with np.errstate(over="ignore", under="ignore", divide="ignore"):
        return 1.0 / np.exp2(np.frexp(a)[1].astype(np.float32)).astype(a.dtype)


@public(method=True, inplace=True)
def heaviside(input: Tensor, values: Any) -> Tensor:  # noqa: A002
    """0 where ``input < 0``, 1 where ``input > 0``, ``values`` where it is 0 (no gradient, as PyTorch's)."""
    x = _tensor(input, "heaviside")
    v = _tensor(values, "heaviside")
    if x.dtype != v.dtype:
        raise RuntimeError(f"heaviside is not yet implemented for tensors with different dtypes, got {x.dtype} "
                           f"and {v.dtype}")  # fmt: skip
    with _no_grad():
        return where(x == 0, v, (x > 0).astype(x.dtype))


def _no_grad() -> Any:
    from ...engine.switches import no_grad  # noqa: PLC0415

    return no_grad()


@public(method=True, inplace=True)
def nextafter(input: Tensor, other: Tensor) -> Tensor:  # noqa: A002
    """The next float after ``input`` toward ``other``."""
    a, b = _operands(input, other, "nextafter")
    if a.dtype.kind != "f":
        raise UnsupportedDtypeError(f"nextafter: expected floating-point tensors, got {a.dtype}")
    out = NextAfter.apply(a.detach(), b.detach())
    if not (differentiated(a) or differentiated(b)):
        return out
    # PyTorch's gradient: the identity in input where it differs from other (0 where they are equal),
    # zero in other (a where that never picks it)
    never = Tensor(np.zeros((), bool), device=a._dev)
    return with_gradient_of(out, where(never, b, where(a != b, a, 0.0)))


MantissaExponent = structseq("frexp", ("mantissa", "exponent"))


@public(method=True)
def frexp(input: Tensor) -> MantissaExponent:  # noqa: A002
    """``(mantissa, exponent)`` with ``input = mantissa * 2**exponent``, ``0.5 <= |mantissa| < 1``;
    the exponent is int32."""
    x = _tensor(input, "frexp")
    if x.dtype.kind != "f":
        raise RuntimeError("torch.frexp() only supports floating-point dtypes")
    src = x.detach()
    mantissa = array_function(_frexp_mantissa, src)
    if differentiated(x):
        mantissa = with_gradient_of(mantissa, x * array_function(_frexp_scale, src))
    return MantissaExponent(mantissa, array_function(_frexp_exponent, src))


@public(method=True)
def signbit(input: Tensor) -> Tensor:  # noqa: A002
    """Whether the sign bit is set (true for -0.0 and negative NaN)."""
    x = _tensor(input, "signbit")
    if x.dtype.kind == "b":
        return x & False
    if x.dtype.kind == "u":
        return x != x
    if x.dtype.kind == "i":
        return x < 0
    return SignBit.apply(x.detach())


@_computed_on_host
def _gcd(a: Any, b: Any) -> Any:
    # Euclid's steps on |a| and |b| in their own dtype, with C's remainder, as PyTorch's kernel: the
    # smallest int is its own absolute value there, so gcd(-128, -127) of int8 is -1 (NumPy's gives 1)
    dt = np.result_type(a, b)
    a, b = (np.array(v, dtype=dt) for v in np.broadcast_arrays(np.abs(a).astype(dt), np.abs(b).astype(dt)))
    with np.errstate(all="ignore"):
        while (live := a != 0).any():
            c = a[live]
            a[live] = np.fmod(b[live], c)
            b[live] = c
    return b


@_computed_on_host
def _lcm(a: Any, b: Any) -> Any:
    return np.lcm(a, b).astype(np.result_type(a, b))


def _integers(a: Any, b: Any, op: str) -> tuple[Tensor, Tensor]:
    a, b = _operands(tensor_operand(a, op), tensor_operand(b, op, "other", 2), op)
    if a.dtype.kind not in "iu":
        raise UnsupportedDtypeError(f"\"{op}_cpu\" not implemented for '{scalar_type_name(a.dtype)}'")
    return a, b


@public(method=True, inplace_function=True)
def gcd(input: Tensor, other: Any) -> Tensor:  # noqa: A002
    """The greatest common divisor, elementwise (integers; non-negative)."""
    a, b = _integers(input, other, "gcd")
    return array_function(_gcd, a, b)


@public(method=True, inplace_function=True)
def lcm(input: Tensor, other: Any) -> Tensor:  # noqa: A002
    """The least common multiple, elementwise (integers; non-negative)."""
    a, b = _integers(input, other, "lcm")
    return array_function(_lcm, a, b)


# -- real-number spellings -------------------------------------------------------------
@public(method=True, inplace=True)
def sgn(input: Tensor) -> Tensor:  # noqa: A002
    """``sign(x)`` (for complex numbers PyTorch's ``x / |x|``; real tensors only here)."""
    x = _tensor(input, "sgn")
    if x.dtype.kind == "c":
        return complex_sgn(x)
    return saved_for_backward(x.sign(), x, output=True)  # (PyTorch's keeps its input and result)


@public(method=True)
def angle(input: Tensor) -> Tensor:  # noqa: A002
    """The argument of each entry as a complex number: 0 for ``x >= 0``, pi for ``x < 0`` (NaN stays NaN);
    its gradient is 0."""
    if _tensor(input, "angle").dtype.kind == "c":
        return complex_angle(input)
    x = _floating(input, "angle")
    # (the constant's branch carries no gradient)
    # (pi as a tensor of x's dtype: a Python float would pass through float32 and round there)
    # (a NaN passes as a value but, as PyTorch's, carries no gradient)
    return saved_for_backward(where(x.isnan(), x * 0.0, where(x < 0, x.new_tensor(math.pi), x.new_tensor(0.0))), x)


# -- torch.special's functions of the normal law and of entropy (ops/normal_law.py) ----------
_SQRT1_2 = math.sqrt(0.5)


@public(function=False, special=("entr",))
def entr(input: Tensor, *, out: Tensor | None = None) -> Tensor:  # noqa: A002
    """The elementwise entropy ``-x log x`` (0 at 0, ``-inf`` below 0)."""
    return written_to_out(ops.Entr.apply(_floating(input, "special_entr")), out, "special_entr")


@public(function=False, special=("xlog1py",))
def xlog1py(input: Tensor | float, other: Tensor | float, *, out: Tensor | None = None) -> Tensor:  # noqa: A002
    """``input * log1p(other)``, and 0 where ``input`` is 0 (unless ``other`` is NaN); either may be a number.

    >>> tga.special.xlog1py(tga.tensor([0.0, 2.0]), tga.tensor([-1.0, 1.0]))  # doctest: +SKIP
    tensor([0.0000, 1.3863])
    """
    a, b = _operands(input, other, "special_xlog1py", floating=True)
    return written_to_out(ops.Xlog1py.apply(a, b), out, "special_xlog1py")


@public(function=False, special=("ndtr",))
def ndtr(input: Tensor, *, out: Tensor | None = None) -> Tensor:  # noqa: A002
    """The standard normal CDF, ``erfc(-x / sqrt 2) / 2`` (exact in the left tail, as ``erfc``'s). In
    float16 and bfloat16 PyTorch's composite ``(1 + erf(x / sqrt 2)) / 2``, each of its steps rounded to the
    dtype as there (0 from x = -3.7 on: its erf rounds to -1, ``erfc`` keeps no more digits where it is rounded)."""
    x = _floating(input, "special_ndtr")
    if low_precision(x):
        return written_to_out(((x * _SQRT1_2).erf() + 1.0) * 0.5, out, "special_ndtr")
    return written_to_out(erfc(-(x * _SQRT1_2)) * 0.5, out, "special_ndtr")


@public(function=False, special=("log_ndtr",), dtypes="no_half")
def log_ndtr(input: Tensor, *, out: Tensor | None = None) -> Tensor:  # noqa: A002
    """``log(ndtr(x))``, finite far into the left tail (``log_ndtr(-40)`` is about -804.6)."""
    return written_to_out(ops.LogNdtr.apply(_floating(input, "special_log_ndtr")), out, "special_log_ndtr")


@public(function=False, special=("ndtri",), dtypes="no_half")
def ndtri(input: Tensor, *, out: Tensor | None = None) -> Tensor:  # noqa: A002
    """The inverse of :func:`ndtr`: ``x`` with ``ndtr(x) = p`` (``-inf`` at 0, ``inf`` at 1, NaN outside)."""
    return written_to_out(ops.Ndtri.apply(_floating(input, "special_ndtri")), out, "special_ndtri")


def _spherical_j0_array(ns: Any, x: Any) -> Any:
    xp = ns.device.xp
    small = xp.abs(x) < 0.5
    s = xp.where(small, x, xp.zeros_like(x))
    y = s * s
    series = xp.ones_like(y)  # (Taylor's series of sin(x)/x to x^12: below |x| = 1/2 it is exact to rounding)
    term = xp.ones_like(y)
    for k in range(1, 7):
        term = term * (-y) / ((2 * k) * (2 * k + 1))
        series = series + term
    with np.errstate(invalid="ignore", divide="ignore"):
        big = xp.where(small, 1.0 + 0.0 * x, x)
        out = xp.where(small, series, xp.sin(big) / big)
    return xp.where(xp.isinf(x), xp.zeros_like(y), out)


@public(function=False, special=("spherical_bessel_j0",), dtypes="no_half")
def spherical_bessel_j0(input: Tensor, *, out: Tensor | None = None) -> Tensor:  # noqa: A002
    """The spherical Bessel function of the first kind of order 0, ``sin(x) / x`` (1 at 0, 0 at
    ``+-inf``); no gradient, as PyTorch's."""
    x = _floating(input, "special_spherical_bessel_j0").detach()
    return written_to_out(array_function(_spherical_j0_array, x), out, "special_spherical_bessel_j0")


@public(function=False, special=("modified_bessel_i0",), dtypes="no_half")
def modified_bessel_i0(input: Tensor, *, out: Tensor | None = None) -> Tensor:  # noqa: A002
    """:func:`i0` under ``torch.special``'s second name, without a gradient (as PyTorch's)."""
    x = _floating(input, "special_modified_bessel_i0").detach()
    return written_to_out(ops.I0.apply(x), out, "special_modified_bessel_i0")


@public(function=False, special=("modified_bessel_i1",), dtypes="no_half")
def modified_bessel_i1(input: Tensor, *, out: Tensor | None = None) -> Tensor:  # noqa: A002
    """:func:`i1` under ``torch.special``'s second name, without a gradient (as PyTorch's)."""
    x = _floating(input, "special_modified_bessel_i1").detach()
    return written_to_out(ops.I1.apply(x), out, "special_modified_bessel_i1")


@public(function=False, special=("zeta",), dtypes="no_half", operands=("input", "other"))
def zeta(input: Tensor | float, other: Tensor | float, *, out: Tensor | None = None) -> Tensor:  # noqa: A002
    """The Hurwitz zeta function ``sum_k (other + k)^-input`` (``ops/zeta.py``); either may be a number.
    Differentiable in ``other`` only, as PyTorch's.

    >>> tga.special.zeta(tga.tensor([2.0]), 1.0)  # pi^2 / 6  # doctest: +SKIP
    tensor([1.6449])
    """
    x, q = _operands(input, other, "special_zeta", floating=True)
    return written_to_out(ops.Zeta.apply(x, q), out, "special_zeta")
