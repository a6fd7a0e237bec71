"""The Hurwitz zeta function ``zeta(x, q) = sum_k (q + k)^-x`` (``torch.special.zeta``).

Computed in float64 (float32 too, as PyTorch's, rounded once): the first terms summed directly
until ``q + k`` passes 9 (at least nine of them), the rest by the Euler-Maclaurin formula,
``int_w^inf t^-x dt - w^-x / 2 + sum_j B_2j / (2j)! x (x+1) ... (x+2j-2) w^(-x-2j+1)`` from the last
term ``w`` on, with twelve Bernoulli numbers (the correction's terms fall by ``(x / 2 pi w)^2`` each).
PyTorch's domain: ``inf`` at ``x = 1`` and at the non-positive integers ``q``, NaN for ``x < 1`` and
for a negative non-integer ``q`` with a non-integer ``x``. Its derivative in ``q`` is
``-x zeta(x + 1, q)``; in ``x`` PyTorch has none, and neither does this (asking raises, as there).
"""

from __future__ import annotations

import math

import numpy as np

from ..engine.function import Function
from .factorizations import loop_namespace

#: ``B_2j / (2j)!`` for j = 1..12 (the Bernoulli numbers' exact fractions, divided once)
_BERNOULLI = [b / math.factorial(2 * j) for j, b in enumerate(
    [1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6, -3617 / 510, 43867 / 798, -174611 / 330,
     854513 / 138, -236364091 / 2730], start=1)]  # fmt: skip
_DIRECT = 9  # (terms summed directly, and the least q + k the formula starts from)
_MACHEP = 1.11022302462515654042e-16  # (Cephes' machine epsilon, PyTorch's test for a negligible term)


def zeta_array(raw, x, q):
    """``zeta(x, q)`` elementwise of float64 arrays (broadcast)."""
    x, q = raw.broadcast_arrays(x, q)
    domain = (x > 1.0) & (q == q) & ~((q <= 0) & (q == raw.floor(q))) & ~((q < 0) & (x != raw.floor(x)))
    qs = raw.where(domain, q, 1.0)
    xs = raw.where(domain, x, 2.0)
    # the direct terms: q + k for k = 0 .. n, n the least >= 9 with q + n > 9
    n = raw.maximum(_DIRECT, raw.floor(_DIRECT - qs) + 1.0)
    total = qs**-xs
    # (PyTorch's sum stops where a term is below its machine epsilon of the total: past it, a total
    # already infinite, (-0.5)^-1e20 = inf, stays so instead of meeting the tail's 0 * inf)
    done = raw.zeros(total.shape, dtype=bool)
    top = int(raw.max(n)) if n.size else 0
    for k in range(1, top + 1):
        term = (qs + k) ** -xs
        adds = (k <= n) & ~done
        total = raw.where(adds, total + term, total)
        done = done | (adds & (raw.abs(term / total) < _MACHEP))
    w = qs + n
    last = w**-xs
    total = raw.where(done, total, total + last * w / (xs - 1.0) - last / 2.0)
    rising, power = raw.ones_like(xs), last
    for j, c in enumerate(_BERNOULLI):
        rising = rising * (xs + 2 * j) if j == 0 else rising * (xs + 2 * j - 1) * (xs + 2 * j)
        power = power / w if j == 0 else power / (w * w)
        term = c * rising * power
        total = raw.where(done, total, total + term)
        done = done | (raw.abs(term / total) < _MACHEP)
    out = raw.where(domain, total, math.nan)
    # x = inf: a term |q + k| < 1 makes it inf, q = 1 is 1; PyTorch's sum is NaN above (its 0 * inf)
    out = raw.where(domain & raw.isinf(x), raw.where(q < 1.0, math.inf, raw.where(q == 1.0, 1.0, math.nan)), out)
    pole = (x == 1.0) | ((x > 1.0) & (q <= 0) & (q == raw.floor(q)))
    out = raw.where(pole, math.inf, out)
    return raw.where(raw.isnan(x) | raw.isnan(q), x + q, out)


class Zeta(Function):
    """``zeta(x, q)``; its gradient reaches ``q`` only (``-x zeta(x + 1, q)``, PyTorch's)."""

    __slots__ = ()
    primitive = True
    name = "zeta"
    operands = ("x", "q")
    keep = (0, 1)
    reads_output = False

    def forward(self, ns, x, q):
        raw, to_raw, back = loop_namespace(ns.device)
        a, b = to_raw(x), to_raw(q)
        with np.errstate(all="ignore"):
            return back(zeta_array(raw, a.astype(raw.float64), b.astype(raw.float64)).astype(a.dtype))

    def backward(self, g, ns, inputs, out):
        if getattr(self.inputs[0], "requires_grad", False):
            raise NotImplementedError("the derivative for 'zeta' is not implemented.")
        x, q = inputs
        return None, g * -x * ns.apply(Zeta, x + 1.0, q)
