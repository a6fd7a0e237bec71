"""PyTorch's CPU transforms from a generator's raw draws to values, on the host.

Each function takes a :class:`~tinygrad_attn.random.Generator` and returns a NumPy array
holding the numbers PyTorch's CPU kernels write for the same generator state:

- uniform floats take the low ``digits`` bits of one draw (24 for float32, from a 32-bit
  draw; 53 for float64, from a 64-bit one), scaled to [0, 1), then ``x * (to - from) + from``;
- integers are a draw modulo the range (a 64-bit draw once the range reaches 2**28);
- normals of 16 numbers or more fill uniforms and transform them by Box-Muller in blocks of
  16 (the first 8 against the last 8), redrawing the last 16 when the size is not a
  multiple of 16; fewer than 16 take the scalar path, two uniforms per pair of normals, the
  second kept for the next call (it is part of the generator's state);
- ``randperm`` swaps each place with a later one picked by a draw (Fisher-Yates).

Float32 normals of 16 or more use PyTorch's vectorised ``log``/``sin``/``cos``; ours are
NumPy's, so those agree to a few units in the last place (the tests measure it); every
other transform here is the same arithmetic and gives the same bits.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:  # (the generator's module imports this one, for its Draw op)
    from . import Generator

__all__ = ["uniform", "normal", "integers", "random_bits", "randperm", "bernoulli", "exponential", "geometric",
           "log_normal", "cauchy", "multinomial"]  # fmt: skip

#: mantissa digits of each float dtype (std::numeric_limits<T>::digits)
_DIGITS = {np.dtype(np.float64): 53, np.dtype(np.float32): 24, np.dtype(np.float16): 11}
_TWO_PI = 2.0 * math.pi


def _numel(shape: Any) -> int:
    return int(math.prod(shape))


def _unit(gen: Generator, n: int, dtype: Any) -> np.ndarray:
    """``n`` uniforms in [0, 1) as PyTorch's CPU kernels make them: float64 from the low 53
    bits of 64-bit draws, every narrower float from the low 24 bits of 32-bit ones (float32's
    uniforms, as float16's are too), exact in float64."""
    digits = 53 if np.dtype(dtype) == np.float64 else 24
    raw = gen._u64(n) if digits == 53 else gen._u32(n)
    return (raw & np.uint64((1 << digits) - 1)).astype(np.float64) * (1.0 / (1 << digits))


def uniform(gen: Generator, shape: Any, dtype: Any, low: float = 0.0, high: float = 1.0) -> np.ndarray:
    """``Tensor.uniform_(low, high)``: the bounds are cast to the working float (float64 for
    float64, else float32) and their difference taken there, ``x * span + low`` computed in
    float64 with one rounding (PyTorch's fused multiply-add) and rounded to ``dtype``."""
    out_dt = np.dtype(dtype) if np.dtype(dtype).kind == "f" else np.dtype(np.float32)
    dt = np.dtype(np.float64) if out_dt == np.float64 else np.dtype(np.float32)
    x = _unit(gen, _numel(shape), dt)
    lo, hi = dt.type(low), dt.type(high)
    out = x if (lo, hi) == (0, 1) else _fma(x, float(hi - lo), float(lo))
    return out.astype(out_dt).reshape(shape)


def rrelu_slopes(gen: Generator, x: np.ndarray, dtype: Any, lower: float, upper: float) -> np.ndarray:
    """The slopes training ``rrelu`` multiplies ``x`` by, as PyTorch's CPU kernel draws them:
    walking ``x`` in order, one float64 uniform in ``[lower, upper)`` for each element ``<= 0``
    (bounds first cast to the working float), 1 for the others, so the stream advances by
    the count of non-positive elements only."""
    work = np.dtype(np.float64) if np.dtype(dtype) == np.float64 else np.dtype(np.float32)
    flat = np.asarray(x).reshape(-1)
    drawn = flat <= 0
    lo, hi = float(work.type(lower)), float(work.type(upper))
    out = np.ones(flat.shape, work)
    out[drawn] = _unit(gen, int(drawn.sum()), np.float64) * (hi - lo) + lo
    return out.reshape(np.shape(x))


def _fma(a: np.ndarray, b: float, c: float) -> np.ndarray:
    """``a * b + c`` rounded once, as the fused multiply-add PyTorch's compiled kernels use:
    the product split exactly (Dekker's two-product) and the sum's error carried (two-sum)."""
    split = 134217729.0  # 2**27 + 1
    p = a * b
    ah = a * split
    ah = ah - (ah - a)
    bh = b * split
    bh = bh - (bh - b)
    err = ((ah * bh - p) + ah * (b - bh) + (a - ah) * bh) + (a - ah) * (b - bh)
    s = p + c
    bb = s - p
    t = (p - (s - bb)) + (c - bb)
    return s + (t + err)


def _libm(fn: Any, x: np.ndarray) -> np.ndarray:
    """``fn`` of each number through the C library (as PyTorch's float64 kernels call it):
    NumPy's vectorised float64 ``log``/``cos``/``sin`` differ from it in the last bit now and then."""
    return np.array([fn(v) for v in x.ravel().tolist()], dtype=np.float64).reshape(x.shape)


def _log(x: float) -> float:
    return math.log(x) if x > 0 else -math.inf


def _box_muller_blocks(u: np.ndarray, dtype: np.dtype, mean: float, std: float) -> np.ndarray:
    """Blocks of 16 uniforms ``(m, 16)`` to normals: the first 8 (as ``1 - u``) give the
    radius, the last 8 the angle; cosine to the first half, sine to the second."""
    if dtype == np.float32:  # (PyTorch's vectorised float32 kernel; the closest of NumPy's functions measured)
        f32 = np.float32
        u1, u2 = f32(1.0) - u[:, :8].astype(f32), u[:, 8:].astype(f32)
        radius = np.sqrt(f32(-2.0) * np.log(u1.astype(np.float64)).astype(f32))
        theta = f32(_TWO_PI) * u2
        n1, n2 = radius * np.cos(theta), radius * np.sin(theta)
        # a fused multiply-add: the float32 product is exact in float64, one rounding at the end
        both = np.concatenate([n1, n2], axis=1).astype(np.float64) * float(f32(std)) + float(f32(mean))
        return both.astype(f32)
    u1, u2 = 1.0 - u[:, :8], u[:, 8:]
    radius = np.sqrt(-2.0 * _libm(math.log, u1))
    theta = _TWO_PI * u2
    both = np.concatenate([radius * _libm(math.cos, theta), radius * _libm(math.sin, theta)], axis=1)
    return both if (mean, std) == (0.0, 1.0) else _fma(both, float(std), float(mean))


def _scalar_normal(gen: Generator, mean: float, std: float) -> float:
    """One draw of PyTorch's ``normal_distribution<double>``: Box-Muller on two uniforms, the
    sine half kept in the generator for the next call."""
    if gen._normal_double is not None:
        z, gen._normal_double = gen._normal_double, None
        return _fma_exact(z, std, mean)
    u1, u2 = _unit(gen, 2, np.float64).tolist()
    r = math.sqrt(-2.0 * math.log1p(-u2))
    theta = _TWO_PI * u1
    gen._normal_double = r * math.sin(theta)
    return _fma_exact(r * math.cos(theta), std, mean)


def _fma_exact(a: float, b: float, c: float) -> float:
    """``a * b + c`` rounded once (exact rational arithmetic: the scalar path is a few numbers)."""
    return float(Fraction(a) * Fraction(b) + Fraction(c))


def normal(gen: Generator, shape: Any, dtype: Any, mean: float = 0.0, std: float = 1.0) -> np.ndarray:
    """``Tensor.normal_(mean, std)`` (see the module's note on sizes below and above 16)."""
    dt = np.dtype(dtype)
    n = _numel(shape)
    if n < 16:
        return np.array([_scalar_normal(gen, mean, std) for _ in range(n)], dtype=np.float64).astype(dt).reshape(shape)
    work = np.float64 if dt == np.float64 else np.float32
    u = _unit(gen, n, work).astype(work)
    out = np.empty(n, dtype=work)
    full = n // 16 * 16
    out[:full] = _box_muller_blocks(u[:full].reshape(-1, 16), np.dtype(work), mean, std).reshape(-1)
    if n % 16:  # PyTorch redraws the last 16 and transforms them again
        tail = _unit(gen, 16, work).astype(work)
        out[n - 16 :] = _box_muller_blocks(tail.reshape(1, 16), np.dtype(work), mean, std).reshape(-1)
    return out.astype(dt).reshape(shape)


def integers(gen: Generator, shape: Any, dtype: Any, low: int, high: int) -> np.ndarray:
    """``Tensor.random_(low, high)`` and ``randint``: a draw modulo ``high - low``, plus
    ``low``; 64-bit draws from a range of 2**28 up, 32-bit ones below."""
    span = int(high) - int(low)
    n = _numel(shape)
    raw = gen._u64(n) if span >= 1 << 28 else gen._u32(n)
    vals = raw % np.uint64(span)
    out = vals.astype(np.int64) + np.int64(low) if span < 2**63 else (vals + np.uint64(low % 2**64)).view(np.int64)
    return out.astype(np.dtype(dtype)).reshape(shape)


def random_bits(gen: Generator, shape: Any, dtype: Any) -> np.ndarray:
    """``Tensor.random_()`` without bounds: ``[0, 2**digits]`` for floats, ``[0, max]`` for
    integers, a draw's lowest bit for bool; float64 and int64 from 64-bit draws."""
    dt = np.dtype(dtype)
    n = _numel(shape)
    wide = dt in (np.dtype(np.float64), np.dtype(np.int64))
    raw = gen._u64(n) if wide else gen._u32(n)
    if dt == np.bool_:
        return (raw & np.uint64(1)).astype(bool).reshape(shape)
    modulus = (1 << _DIGITS[dt]) + 1 if dt.kind == "f" else int(np.iinfo(dt).max) + 1
    return (raw % np.uint64(modulus)).astype(dt).reshape(shape)


def randperm(gen: Generator, n: int) -> np.ndarray:
    """``torch.randperm(n)``: for each place ``i`` a draw picks a place ``z`` in ``[i, n)`` to
    swap with (the draws are made at once; the swaps run in order, compiled where numba is)."""
    n = int(n)
    if n >= (2**32 - 1) // 20:  # PyTorch's inside-out shuffle on 64-bit draws past ~2e8
        raw = gen._u64(n)
        picks = (raw % np.arange(1, n + 1, dtype=np.uint64)).astype(np.int64)
        return _inside_out(picks)
    raw = gen._u32(max(n - 1, 0))
    picks = (raw % np.arange(n, 1, -1, dtype=np.uint64)).astype(np.int64) + np.arange(max(n - 1, 0), dtype=np.int64)
    return _swap_forward(picks, n)


def _swap_forward(picks: np.ndarray, n: int) -> np.ndarray:
    from ..ops import cpu_kernels  # noqa: PLC0415 - numba is imported only when asked

    kernel = cpu_kernels.kernel("swap_forward") if n > 64 else None
    if kernel is not None:
        out = np.arange(n, dtype=np.int64)
        kernel(out, picks)
        return out
    order = list(range(n))  # (a list: its items swap faster than an array's)
    for i, z in enumerate(picks.tolist()):
        order[i], order[z] = order[z], order[i]
    return np.array(order, dtype=np.int64)


def _inside_out(picks: np.ndarray) -> np.ndarray:
    out = [0] * len(picks)
    for i, z in enumerate(picks.tolist()):
        out[i] = out[z]
        out[z] = i
    return np.array(out, dtype=np.int64)


def bernoulli(gen: Generator, p: np.ndarray) -> np.ndarray:
    """``Tensor.bernoulli_(p)`` for a tensor ``p`` (already broadcast to the output's shape):
    a uniform of ``p``'s precision per element (float64 draws for float64 ``p``, else
    float32's), 1 where it is below ``p``."""
    u = _unit(gen, p.size, np.float64 if p.dtype == np.float64 else np.float32).reshape(p.shape)
    return u < p


def exponential(gen: Generator, shape: Any, dtype: Any, lambd: float = 1.0) -> np.ndarray:
    """``Tensor.exponential_(lambd)``: ``-log1p(-u) / lambd`` of a float64 uniform ``u`` (for
    every dtype), rounded to ``dtype``."""
    u = _unit(gen, _numel(shape), np.float64)
    logs = _libm(math.log1p, -u)
    return (-1.0 / lambd * logs).astype(np.dtype(dtype)).reshape(shape)


def geometric(gen: Generator, shape: Any, dtype: Any, p: float) -> np.ndarray:
    """``Tensor.geometric_(p)``: ``ceil(log(u) / log1p(-p))`` of a float64 uniform ``u``."""
    u = _unit(gen, _numel(shape), np.float64)
    with np.errstate(divide="ignore"):
        return np.ceil(_libm(_log, u) / math.log1p(-p)).astype(np.dtype(dtype)).reshape(shape)


def log_normal(gen: Generator, shape: Any, dtype: Any, mean: float, std: float) -> np.ndarray:
    """``Tensor.log_normal_(mean, std)``: ``exp`` of scalar normal draws, one element at a time."""
    vals = [math.exp(_scalar_normal(gen, mean, std)) for _ in range(_numel(shape))]
    return np.array(vals, dtype=np.float64).astype(np.dtype(dtype)).reshape(shape)


def cauchy(gen: Generator, shape: Any, dtype: Any, median: float, sigma: float) -> np.ndarray:
    """``Tensor.cauchy_(median, sigma)``: ``median + sigma * tan(pi * (u - 1/2))`` (one rounding)."""
    u = _unit(gen, _numel(shape), np.float64)
    return _fma(_libm(math.tan, math.pi * (u - 0.5)), sigma, median).astype(np.dtype(dtype)).reshape(shape)


def multinomial(gen: Generator, probs: np.ndarray, num_samples: int, replacement: bool) -> np.ndarray:
    """``torch.multinomial`` on host rows ``(rows, categories)``: with replacement (and more
    than one sample), each sample a float64 uniform looked up in the row's normalised running
    sum; else the ``num_samples`` largest of ``probs / q`` for exponential draws ``q`` (ties,
    the categories of weight 0 drawn last, in the order of their index: PyTorch's follow its sort)."""
    rows, cats = probs.shape
    if not replacement or num_samples == 1:
        q = exponential(gen, probs.shape, probs.dtype, 1.0)
        with np.errstate(divide="ignore", invalid="ignore"):
            keys = probs / q
        order = np.argsort(-keys, axis=1, kind="stable")
        return order[:, :num_samples]
    out = np.empty((rows, num_samples), dtype=np.int64)
    for r in range(rows):
        cum = np.cumsum(probs[r])  # (sequential, in the row's dtype)
        cum = cum / cum[-1]
        cum[-1] = 1
        out[r] = np.searchsorted(cum, _unit(gen, num_samples, np.float64), side="left")
    return out
