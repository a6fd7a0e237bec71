"""``torch.special``'s orthogonal polynomials of degree ``n`` at ``x``: Chebyshev's ``T U V W`` (and
their shifted forms on ``[0, 1]``), Hermite's ``H`` (physicists') and ``He`` (probabilists'),
Laguerre's ``L`` and Legendre's ``P``.

Each is its three-term recurrence, run for every entry at once up to the largest degree, with
PyTorch's special cases where its kernel takes them: 0 for ``n < 0``, exact values at the ends of
the interval, the trigonometric closed form for large ``n`` inside it (``cos(n acos x)`` for ``T``),
and NaN for a Hermite degree above 128 (float32) or 512 (float64). ``n`` is a tensor or a number
(truncated to an integer); ``x`` a tensor or a number (not both numbers). The result has the
promoted float dtype of ``x`` and ``n`` and no gradient, as PyTorch's.

>>> tga.special.chebyshev_polynomial_t(tga.tensor([0.5]), 2)  # 2 x^2 - 1  # doctest: +SKIP
tensor([-0.5000])
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...engine.declare import public
from ...ops.array_function import array_function
from ...ops.factorizations import loop_namespace
from .._tensor import Tensor
from ..dtypes import result_type
from ..mutation.out_argument import written_to_out
from ..promotion import float_dtype_of


@dataclass(frozen=True)
class _Family:
    """One polynomial family: its degree-1 value, its step from ``(p, q)`` (degrees ``j - 1``, ``j``)
    to degree ``j + 1`` as ``(a * q - b) / d``, ``step(x, j, p) = (a, b, d)`` (``d`` None: no division),
    and its special cases (a function of ``(xp, x, n)`` giving ``(mask, value)`` pairs, the first true
    one winning)."""

    first: Callable[[Any], Any]
    step: Callable[[Any, int, Any], tuple[Any, Any, Any]]
    cases: Callable[[Any, Any, Any], list[tuple[Any, Any]]]
    hermite: bool = False


#: a wider type in which ``a * q`` is exact (float32) or nearly so (float64, in the host's long double)
_WIDER = {np.dtype(np.float32): np.float64, np.dtype(np.float64): np.longdouble}


def _fused(xp: Any, a: Any, q: Any, b: Any) -> Any:
    """``a * q - b`` rounded once, as PyTorch's compiled kernels compute their recurrences (the compiler
    fuses the product into the subtraction: one fused multiply-add); on a device without a wider type
    for the dtype, the plain expression."""
    wide = _WIDER.get(q.dtype)
    if wide is None or (wide is np.longdouble and xp is not np):
        return a * q - b
    return (xp.asarray(a).astype(wide) * q.astype(wide) - b.astype(wide)).astype(q.dtype)


def _even(n: Any) -> Any:
    return n % 2 == 0


def _chebyshev_cases(kind: str, shifted: bool) -> Callable[[Any, Any, Any], list[tuple[Any, Any]]]:
    """PyTorch's ends and trigonometric forms of Chebyshev's ``kind``; on ``[0, 1]`` where ``shifted``
    (the ends are then ``x == 1`` and ``x == 0``, and the angle that of ``2x - 1``)."""

    def cases(xp: Any, x: Any, n: Any) -> list[tuple[Any, Any]]:
        s = x + x - 1.0 if shifted else x
        top, bottom = (x == 1.0, x == 0.0) if shifted else (xp.abs(x) == 1.0, xp.abs(x) == 1.0)
        if not shifted:
            top, bottom = top & (x > 0), bottom & ~(x > 0)
        one, two_n1, n1 = xp.ones_like(s), (n + n + 1).astype(s.dtype), (n + 1).astype(s.dtype)
        sign = xp.where(_even(n), 1.0, -1.0).astype(s.dtype)
        inside = xp.abs(s) < 1.0
        with np.errstate(all="ignore"):
            theta = xp.arccos(xp.where(inside, s, 0.0))
            nf = n.astype(s.dtype)
            if kind == "t":
                ends = [(top, one), (bottom, sign)]
                trig = [(inside & (n > 6), xp.cos(nf * theta))]
            elif kind == "u":
                ends = [(top, n1), (bottom, sign * n1)]
                sin = xp.sin(theta)
                form = xp.where(sin != 0, xp.sin(n1 * theta) / sin, n1 * xp.cos(n1 * theta) / s)
                trig = [(inside & (n > (6 if shifted else 8)), form)]
            elif kind == "v":
                ends = [(top, one), (bottom, sign * two_n1)]
                half = xp.sin(theta / 2.0)
                form = xp.where(half != 1.0, xp.cos((nf + 0.5) * theta) / xp.cos(theta / 2.0), sign * two_n1)
                trig = [(inside & (n > (6 if shifted else 8)), form)]
            else:
                ends = [(top, two_n1), (bottom, sign)]
                half = xp.cos(theta / 2.0)
                edge = sign if shifted else xp.where(s > 0, two_n1, sign)
                form = xp.where(half != 1.0, xp.sin((nf + 0.5) * theta) / xp.sin(theta / 2.0), edge)
                trig = [(inside & (n > (4 if shifted else 8)), form)]
        return ends + trig

    return cases


def _none(xp: Any, x: Any, n: Any) -> list[tuple[Any, Any]]:
    return []


def _chebyshev(kind: str, shifted: bool) -> _Family:
    offset = {"t": None, "u": 0.0, "v": -1.0, "w": 1.0}[kind]

    def first(x: Any) -> Any:
        s = x + x - 1.0 if shifted else x
        return s if offset is None else (s + s if offset == 0.0 else s + s + offset)

    def step(x: Any, j: int, p: Any) -> tuple[Any, Any, Any]:
        s = x + x - 1.0 if shifted else x
        return s + s, p, None

    return _Family(first, step, _chebyshev_cases(kind, shifted))


def _laguerre_cases(xp: Any, x: Any, n: Any) -> list[tuple[Any, Any]]:
    return [(x == 0, xp.ones_like(x))]


def _legendre_cases(xp: Any, x: Any, n: Any) -> list[tuple[Any, Any]]:
    end = xp.abs(x) == 1.0
    return [(end & ((x > 0) | _even(n)), xp.ones_like(x)), (end, -xp.ones_like(x))]


_FAMILIES: dict[str, _Family] = {
    **{f"chebyshev_polynomial_{k}": _chebyshev(k, False) for k in "tuvw"},
    **{f"shifted_chebyshev_polynomial_{k}": _chebyshev(k, True) for k in "tuvw"},
    "hermite_polynomial_h": _Family(lambda x: x + x, lambda x, j, p: (x + x, (2 * j) * p, None), _none, True),
    "hermite_polynomial_he": _Family(lambda x: x, lambda x, j, p: (x, j * p, None), _none, True),
    "laguerre_polynomial_l": _Family(
        lambda x: 1.0 - x, lambda x, j, p: ((j + j) + (1.0 - x), j * p, j + 1), _laguerre_cases
    ),
    "legendre_polynomial_p": _Family(lambda x: x, lambda x, j, p: ((j + j + 1) * x, j * p, j + 1), _legendre_cases),
}


def _polynomial_array(ns: Any, x: Any, n: Any, family: str) -> Any:
    """The polynomial ``family`` of degree ``n`` (any real dtype, truncated) at ``x``, elementwise."""
    xp, to_raw, back = loop_namespace(ns.device)  # (NumPy's or CuPy's: astype, dtype kinds)
    return back(_polynomial_raw(xp, to_raw(x), to_raw(n), family))


def _polynomial_raw(xp: Any, x: Any, n: Any, family: str) -> Any:
    f = _FAMILIES[family]
    x, n = xp.broadcast_arrays(x, n)
    with np.errstate(all="ignore"):
        n = xp.where(xp.isfinite(n), n, 0).astype(np.int64) if n.dtype.kind == "f" else n.astype(np.int64)
        one = xp.ones_like(x)
        p, q = one, f.first(x)
        top = int(xp.max(n)) if n.size else 0
        for j in range(1, top):  # (degree j + 1 from degrees j - 1 and j, where n reaches it)
            a, b, d = f.step(x, j, p)
            r = _fused(xp, a, q, b) if d is None else _fused(xp, a, q, b) / d
            more = n > j
            p, q = xp.where(more, q, p), xp.where(more, r, q)
            if not bool(xp.any(more & ~xp.isnan(q))):  # (as PyTorch's loop, which stops at a NaN)
                break
        out = xp.where(n == 0, one, q)
        cases = [(n < 0, xp.zeros_like(x))] + f.cases(xp, x, n)
        if f.hermite:
            cases.append((n > (128 if x.dtype == np.float32 else 512), xp.full_like(x, np.nan)))
        for mask, value in reversed(cases):
            out = xp.where(mask, value.astype(x.dtype), out)
        return out


def _operands(x: Any, n: Any, op: str) -> tuple[Tensor, Tensor]:
    like = x if isinstance(x, Tensor) else n
    if not isinstance(like, Tensor):
        raise TypeError(f"special_{op}(): at least one of 'x' and 'n' must be a Tensor, got {type(x).__name__} "
                        f"and {type(n).__name__}")  # fmt: skip
    dt = np.dtype(result_type(x, n))
    if dt.kind == "c":
        raise NotImplementedError(f'"{op}_cpu" not implemented for complex tensors ({dt})')
    dt = float_dtype_of(dt)
    out = []
    for v in (x, n):
        t = v if isinstance(v, Tensor) else Tensor(np.asarray(v, dtype=dt), device=like._dev)
        out.append(t.detach().astype(dt))
    return out[0], out[1]


def _declare(family: str) -> None:
    def polynomial(x: Tensor | float, n: Tensor | float, *, out: Tensor | None = None) -> Tensor:
        a, d = _operands(x, n, family)
        r = array_function(_polynomial_array, a, d, family=family)
        return written_to_out(r, out, f"special_{family}")

    polynomial.__name__ = polynomial.__qualname__ = family
    polynomial.__module__ = __name__
    polynomial.__doc__ = f"``torch.special.{family}(x, n)``: see the module's docstring."
    globals()[family] = public(function=False, special=(family,), name=family, dtypes="no_half", operands=("x", "n"))(
        polynomial
    )


for _name in _FAMILIES:
    _declare(_name)
