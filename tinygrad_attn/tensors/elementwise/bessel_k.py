"""``torch.special``'s modified Bessel functions of the second kind, ``K0`` and ``K1``, and their
scaled forms ``exp(x) K0(x)``, ``exp(x) K1(x)``; no gradient, as PyTorch's.

No array namespace has them, so they are computed here in float64 and rounded once: below
``x = 2`` by their power series around 0 (``K0 = -(log(x/2) + gamma) I0(x) + sum_k H_k (x^2/4)^k / k!^2``,
``K1 = 1/x + log(x/2) I1(x) - x/4 sum_k (psi(k+1) + psi(k+2)) (x^2/4)^k / (k! (k+1)!)``), above it
by the trapezoidal rule on ``exp(x) K_nu(x) = int_0^inf exp(-2x sinh(t/2)^2) cosh(nu t) dt`` in
``u = sqrt(2x) sinh(t/2)``: ``int_0^inf exp(-u^2) cosh(nu t) 2 / sqrt(2x + u^2) du``, a Gaussian times a
function analytic within ``|Im u| < sqrt(2x)``, so the rule's error falls as ``exp(-2 pi sqrt(2x) / h)``
(the step ``h = 1/5``, x >= 2: 1e-27) and as ``exp(-pi^2 / h^2)`` for the Gaussian itself.
``K(0)`` is ``inf``, ``K`` of a negative number NaN, ``K(inf)`` 0.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ...engine.declare import public
from ...functional.checks import tensor_arg
from ...ops.array_function import array_function
from ...ops.bessel import bessel_array
from ...ops.factorizations import loop_namespace
from .._tensor import Tensor
from ..mutation.out_argument import written_to_out
from ..promotion import float_dtype_of

_EULER_GAMMA = 0.5772156649015329
_SERIES_TERMS = 30  # (at x = 2 the k-th term is below 1 / k!^2: 1e-64 by k = 30)
_STEP = 0.2
_NODES = 35  # (u up to 7: exp(-49) is below float64's precision)


def _scaled_k_array(raw: Any, x: Any, order: int) -> Any:
    """``exp(x) K_order(x)`` of a float64 array, for ``x > 0`` (other entries: any value)."""
    small = x < 2.0
    s = raw.where(small & (x > 0), x, 1.0)
    y = s * s / 4.0
    log_half = raw.log(s / 2.0)
    i = bessel_array(raw, s, order, scaled=False)
    term = raw.ones_like(s)
    if order == 0:
        harmonic, total = 0.0, raw.zeros_like(s)
        for k in range(1, _SERIES_TERMS):
            term = term * y / (k * k)
            harmonic += 1.0 / k
            total = total + harmonic * term
        series = -(log_half + _EULER_GAMMA) * i + total
    else:
        psi = 2.0 * -_EULER_GAMMA + 1.0  # (psi(1) + psi(2))
        total = psi * term
        for k in range(1, _SERIES_TERMS):
            term = term * y / (k * (k + 1))
            psi += 1.0 / k + 1.0 / (k + 1)
            total = total + psi * term
        series = 1.0 / s + log_half * i - s / 4.0 * total
    series = series * raw.exp(s)
    big = raw.where(small, 2.0, x)
    acc = raw.zeros_like(big)
    for k in range(_NODES, -1, -1):  # (the smallest terms first)
        u = k * _STEP
        f = math.exp(-u * u) * 2.0 / raw.sqrt(2.0 * big + u * u)
        if order == 1:  # (cosh t = 1 + u^2 / x)
            f = f * (1.0 + u * u / big)
        acc = acc + (f / 2.0 if k == 0 else f)
    integral = _STEP * acc
    return raw.where(small, series, integral)


def _k_array(ns: Any, a: Any, order: int, scaled: bool) -> Any:
    raw, to_raw, back = loop_namespace(ns.device)
    r = to_raw(a)
    x = r.astype(raw.float64)
    with np.errstate(all="ignore"):
        e = _scaled_k_array(raw, x, order)
        out = e if scaled else e * raw.exp(-x)
        out = raw.where(x == 0, math.inf, raw.where(x < 0, math.nan, out))
        out = raw.where(raw.isinf(x) & (x > 0), 0.0, out)
        return back(raw.where(raw.isnan(x), x, out).astype(r.dtype))


def _declare(name: str, order: int, scaled: bool) -> None:
    def k(input: Tensor, *, out: Tensor | None = None) -> Tensor:  # noqa: A002
        x = tensor_arg(input, f"special_{name}").detach()
        x = x if x.dtype.kind == "f" else x.astype(float_dtype_of(x.dtype))  # (an integer or bool: the default dtype)
        return written_to_out(array_function(_k_array, x, order=order, scaled=scaled), out, f"special_{name}")

    k.__name__ = k.__qualname__ = name
    k.__module__ = __name__
    k.__doc__ = f"``{'exp(x) ' if scaled else ''}K{order}(x)`` (``torch.special.{name}``); see the module's docstring."
    globals()[name] = public(function=False, special=(name,), name=name, dtypes="no_half")(k)  # (no float16 kernel)


for _order in (0, 1):
    _declare(f"modified_bessel_k{_order}", _order, False)
    _declare(f"scaled_modified_bessel_k{_order}", _order, True)
