"""The gradients of ``prod``, ``cumprod`` and ``logcumsumexp`` as PyTorch computes them, in tensor ops.

Each takes the incoming gradient ``g``, the input ``x``, the op's result ``out``, the op's
arguments and whether the backward pass records (``create_graph=True``). Recorded, each formula
is differentiated step by step, so second derivatives are PyTorch's as well: at ±inf, NaN and
zeros they are not the derivatives of the forward (``inf / inf`` is NaN where the product of
the other entries is finite). The ops of :mod:`tinygrad_attn.ops.products` call them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ...engine.switches import tracing
from .._tensor import Tensor, cat, where


def _ones_along(x: Tensor, d: int) -> Tensor:
    return Tensor.ones(x.shape[:d] + (1,) + x.shape[d + 1 :], dtype=x.dtype, device=x._dev)


def _slice(x: Tensor, d: int, start: int, stop: int | None = None) -> Tensor:
    return x[(slice(None),) * d + (slice(start, stop),)]


def _by_zeros(x: Tensor, with_zero: Callable[[], Tensor], without: Callable[[], Tensor], zeros: int = 1) -> Tensor:
    """``with_zero()`` where ``x`` holds at least ``zeros`` zeros, else ``without()``: PyTorch's test
    of the whole tensor. A trace (which replays no Python decision) computes both and picks."""
    count = (x == 0).sum()
    if tracing():
        return where(count >= zeros, with_zero(), without())
    return with_zero() if int(count.item()) >= zeros else without()


def _others(x: Tensor, d: int) -> Tensor:
    """The product of every other entry along ``d``: the running product before each entry
    times the running product after it (no division, so exact at zeros)."""
    ones = _ones_along(x, d)
    before = cat([ones, _slice(x, d, 0, x.shape[d] - 1)], d).cumprod(d)
    after = cat([ones, _slice(x, d, 1).flip(d)], d).cumprod(d).flip(d)
    return before * after


def prod_gradient(g: Tensor, x: Tensor, out: Tensor, axis: Any, keepdims: bool, recording: bool) -> Tensor:
    """``g * (out / x)`` where ``x`` holds no zero; else the products of the other entries (and
    zeros, unrecorded, for a full product with two zeros or more)."""
    if x.ndim == 0:
        return g * 1.0
    if axis is None:
        exact = _by_zeros(
            x, lambda: (g.reshape(()) * _others(x.reshape(-1), 0)).reshape(x.shape), lambda: g * (out / x)
        )
        return exact if recording else _by_zeros(x, lambda: x.new_zeros(x.shape), lambda: exact, zeros=2)
    (d,) = axis
    if not keepdims:
        g, out = g.unsqueeze(d), out.unsqueeze(d)
    return _by_zeros(x, lambda: g * _others(x, d), lambda: g * (out / x))


def _reversed_cumsum(w: Tensor, d: int) -> Tensor:
    return w.flip(d).cumsum(d).flip(d)


def cumprod_gradient(g: Tensor, x: Tensor, out: Tensor, d: int, recording: bool) -> Tensor:
    """A reversed running sum of ``out * g`` over ``x`` where ``x`` holds no zero; else, recorded,
    the sums of products of the other entries, and, unrecorded, the same by masks (division
    up to the first zero, products from the first zero to the second, zeros beyond)."""
    n = x.shape[d] if x.ndim else 1
    if x.numel() <= 1 or n == 1:
        return g * 1.0
    w = out * g
    return _by_zeros(x, lambda: _cumprod_at_zeros(g, x, out, w, d, n, recording), lambda: _reversed_cumsum(w, d) / x)


def _cumprod_at_zeros(g: Tensor, x: Tensor, out: Tensor, w: Tensor, d: int, n: int, recording: bool) -> Tensor:
    if recording:
        ones = _ones_along(x, d)
        parts = []
        for k in range(n):
            if k == 0:
                omitted = cat([ones, _slice(x, d, 1).cumprod(d)], d)
            else:
                until = _slice(x, d, 0, k).prod(d, keepdim=True)
                if k == n - 1:
                    omitted = until
                else:
                    after = _slice(x, d, k + 1).cumprod(d)
                    omitted = cat([until, until.expand(after.shape) * after], d)
            parts.append((_slice(g, d, k) * omitted).sum(d, keepdim=True))
        return cat(parts, d)
    zeros_so_far = (x == 0).cumsum(d)
    before = zeros_so_far == 0
    grad = where(before, _reversed_cumsum(where(before, w, 0.0), d) / x, 0.0)
    from_first = zeros_so_far == 1
    first = from_first.to(np.int64).argmax(d, keepdim=True)
    at_first = (Tensor.arange(n, device=x._dev).reshape((n,) + (1,) * (x.ndim - 1 - d)) == first) & from_first
    between = from_first & ~at_first
    runs = where(between, x, 1.0).cumprod(d)
    prefix = where(first == 0, 1.0, out.gather(d, (first - 1).clamp(min=0)))
    value = (runs * where(from_first, g, 0.0)).sum(d, keepdim=True) * prefix
    return where(at_first, value, grad)


def logcumsumexp_gradient(g: Tensor, x: Tensor, out: Tensor, d: int, recording: bool) -> Tensor:
    """``exp(rlcse(log g+ - out) + x) - exp(rlcse(log g- - out) + x)``, ``rlcse`` the reversed
    logcumsumexp and ``log g±`` the logs of the positive (negative) parts of ``g``, the lowest
    finite number (not -inf) where that part is zero."""
    if g.ndim == 0 or g.numel() == 0:
        return g * 1.0
    lowest = float(np.finfo(g.dtype).min)
    with np.errstate(divide="ignore"):
        log_abs = g.abs().log()
    positive = where(g > 0, log_abs, lowest)
    negative = where(g < 0, log_abs, lowest)

    def reversed_lcse(t: Tensor) -> Tensor:
        return t.flip(d).logcumsumexp(d).flip(d)

    return (reversed_lcse(positive - out) + x).exp() - (reversed_lcse(negative - out) + x).exp()
