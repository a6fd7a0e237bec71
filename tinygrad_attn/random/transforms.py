"""PyTorch's CPU transforms from a generator's raw draws to values, on the host.

Each function takes a :class:`~tinygrad_attn.random.Generator` and returns a NumPy array
holding the numbers PyTorch's CPU kernels write for the same generator state:

- uniform floats take the low ``digits`` bits of one draw (24 for float32, from a 32-bit
  draw; 53 for float64, from a 64-bit one), scaled to [0, 1), then ``x * (to - from) + from``;
- integers are a draw modulo the range (a 64-bit draw once the range reaches 2**28);
- normals of 16 numbers or more fill uniforms and transform them by Box-Muller in blocks of
  16 (the first 8 against the last 8), redrawing the last 16 when the size is not a
  multiple of 16 (float16's fill only the whole blocks before); fewer than 16, or a tensor that
  is not contiguous, take the scalar path, two uniforms per pair of normals, the second kept
  for the next call (it is part of the generator's state);
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

from ..engine.bfloat16 import BFLOAT16, kind_of
from ..engine.layout import dense_order, is_contiguous_as

if TYPE_CHECKING:  # (the generator's module imports this one, for its Draw op)
    from . import Generator

__all__ = ["memory_order", "in_order", "fill_plan", "fill_draws", "uniform", "normal", "integers", "random_bits",
           "randperm", "bernoulli", "exponential", "geometric", "log_normal", "cauchy", "multinomial"]  # fmt: skip

#: mantissa digits of each float dtype (std::numeric_limits<T>::digits)
_DIGITS = {np.dtype(np.float64): 53, np.dtype(np.float32): 24, np.dtype(np.float16): 11}
if BFLOAT16 is not None:
    _DIGITS[BFLOAT16] = 8
_TWO_PI = 2.0 * math.pi


def memory_order(shape: tuple, strides: tuple) -> tuple[int, ...] | None:
    """The dims of a tensor of ``shape`` and ``strides`` (in elements), slowest first, in the
    order PyTorch's CPU kernels walk it (TensorIterator's, :func:`~tinygrad_attn.engine.layout.dense_order`);
    ``None`` where that is row order, size-1 dims aside. Random fills draw in this order:
    ``x.t().uniform_()`` fills ``x``'s memory as ``x.uniform_()`` would, and ``dropout(x.t())``
    drops what ``dropout(x).t()`` drops.

    >>> memory_order((3, 4), (1, 3))
    (1, 0)
    """
    order = tuple(reversed(dense_order(shape, [strides])))
    big = [d for d in order if shape[d] != 1]
    return None if big == sorted(big) else order


def in_order(make: Any, shape: tuple, order: tuple[int, ...] | None) -> Any:
    """``make(shape')`` (an array of draws in row order of ``shape'``) laid out in ``shape`` so
    that the draws go in ``order`` (see :func:`memory_order`): row order of the permuted shape,
    then the view back."""
    if order is None:
        return make(tuple(shape))
    arr = make(tuple(shape[d] for d in order))
    return arr.transpose(tuple(np.argsort(order)))


def fill_plan(maker: str, shape: tuple, strides: tuple, params: tuple) -> tuple[tuple[int, ...] | None, tuple]:
    """How PyTorch's in-place fill by ``maker`` writes a tensor of ``shape`` and ``strides``: the
    order of its draws (:func:`memory_order`) and the maker's parameters, where a normal fill of a
    tensor that is not contiguous takes the scalar path (``serial``)."""
    if maker == "normal":
        params = (*params, not is_contiguous_as(shape, strides))
    return memory_order(shape, strides), params


def fill_draws(gen: Generator, maker: str, shape: tuple, strides: tuple, dtype: Any, *params: Any) -> np.ndarray:
    """The numbers PyTorch's in-place fill by ``maker`` (``uniform``, ``normal``, ...) writes into a
    tensor of ``shape`` and ``strides``, laid out in ``shape`` (see :func:`fill_plan`)."""
    order, params = fill_plan(maker, shape, strides, params)
    return in_order(lambda s: globals()[maker](gen, s, dtype, *params), shape, order)


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
    out_dt = np.dtype(dtype) if kind_of(np.dtype(dtype)) == "f" else np.dtype(np.float32)
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


def normal(gen: Generator, shape: Any, dtype: Any, mean: float = 0.0, std: float = 1.0,
           serial: bool = False) -> np.ndarray:  # fmt: skip
    """``Tensor.normal_(mean, std)`` (see the module's note on sizes below and above 16);
    ``serial``: of a tensor that is not contiguous, which PyTorch fills one scalar draw at a time."""
    dt = np.dtype(dtype)
    n = _numel(shape)
    if n < 16 or serial:
        return np.array([_scalar_normal(gen, mean, std) for _ in range(n)], dtype=np.float64).astype(dt).reshape(shape)
    work = np.float64 if dt == np.float64 else np.float32
    full = n // 16 * 16
    # (float16's and bfloat16's kernel draws uniforms for the whole blocks only, then the last 16;
    # float32's and float64's for every number first)
    u = _unit(gen, full if dt.itemsize == 2 else n, work).astype(work)
    out = np.empty(n, dtype=work)
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
    modulus = (1 << _DIGITS[dt]) + 1 if dt in _DIGITS else int(np.iinfo(dt).max) + 1
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


def bernoulli_number(gen: Generator, shape: Any, dtype: Any, p: float) -> np.ndarray:
    """1 where a float64 uniform draw is below ``p``, else 0 (``Tensor.bernoulli_`` of a number)."""
    return (uniform(gen, shape, np.float64) < p).astype(dtype)


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
        # (PyTorch's q is empty_like(probs).exponential_(): drawn in the weights' memory order)
        strides = tuple(s // probs.itemsize for s in probs.strides)
        q = fill_draws(gen, "exponential", probs.shape, strides, probs.dtype, 1.0)
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


# --- the samplers of torch.distributions: gamma (and Dirichlet from it), Poisson, binomial ---------------------------

_F32 = np.float32


def _gamma_one(gen: Generator, alpha: float, single: bool) -> float:
    """One draw of PyTorch's CPU ``sample_gamma``: Marsaglia and Tsang's acceptance-rejection
    on the generator's float64 normals and uniforms, ``alpha < 1`` boosted by one and scaled by
    ``u ** (1 / alpha)``. ``single``: ``alpha`` is float32, and its own arithmetic is float32's
    (the float literals of the kernel are float32 numbers widened to float64)."""
    one = _F32(1.0) if single else 1.0
    scale = 1.0
    if alpha < 1.0:
        if alpha == 0.0:
            return 0.0
        inv = float(one / _F32(alpha)) if single else 1.0 / alpha
        scale *= (1.0 - _unit(gen, 1, np.float64)[0]) ** inv
        alpha = float(_F32(alpha) + one) if single else alpha + 1.0
    third = float(_F32(1.0) / _F32(3.0))
    d = float(_F32(alpha) - _F32(third)) if single else alpha - third
    c = 1.0 / math.sqrt(9.0 * d)
    k = float(_F32(0.0331))
    while True:
        while True:
            x = _scalar_normal(gen, 0.0, 1.0)
            y = 1.0 + c * x
            if y > 0:
                break
        v = y * y * y
        u = 1.0 - _unit(gen, 1, np.float64)[0]
        xx = x * x
        if u < 1.0 - k * xx * xx:
            return scale * d * v
        if _log(u) < 0.5 * xx + d * (1.0 - v + _log(v)):
            return scale * d * v


def standard_gamma(gen: Generator, alpha: np.ndarray) -> np.ndarray:
    """``torch._standard_gamma(alpha)`` on the host: one draw per element in order, at least the
    dtype's smallest normal number (the numbers PyTorch's CPU kernel writes for a seed)."""
    single = alpha.dtype != np.float64
    tiny = np.finfo(alpha.dtype).tiny
    flat = [_gamma_one(gen, a, single) for a in alpha.ravel().tolist()]
    out = np.array(flat, dtype=np.float64).astype(alpha.dtype)
    return np.maximum(out, tiny).reshape(alpha.shape)


def dirichlet(gen: Generator, alpha: np.ndarray) -> np.ndarray:
    """``torch._sample_dirichlet(alpha)`` on the host: float64 gamma draws of ``alpha`` (as
    float64), normalised along the last axis, kept inside ``[tiny, 1)`` of ``alpha``'s dtype."""
    gammas = np.maximum(standard_gamma(gen, alpha.astype(np.float64)), np.finfo(np.float64).tiny)
    ratio = (gammas / gammas.sum(-1, keepdims=True)).astype(alpha.dtype)
    top = np.nextafter(alpha.dtype.type(1), alpha.dtype.type(0))
    return np.clip(ratio, np.finfo(alpha.dtype).tiny, top)


def _digamma_host(x: np.ndarray) -> np.ndarray:
    """Digamma of positive float64 numbers (recurrence up to 10, then the asymptotic series)."""
    x = np.array(x, dtype=np.float64)
    acc = np.zeros_like(x)
    while np.any(x < 10):
        small = x < 10
        acc = np.where(small, acc - 1.0 / np.where(small, x, 1.0), acc)
        x = np.where(small, x + 1.0, x)
    z = 1.0 / (x * x)
    series = [8.33333333333333333333e-2, -2.10927960927960927961e-2, 7.57575757575757575758e-3,
              -4.16666666666666666667e-3, 3.96825396825396825397e-3, -8.33333333333333333333e-3,
              8.33333333333333333333e-2]  # fmt: skip
    poly = np.zeros_like(z)
    for a in series:
        poly = poly * z + a
    return acc + np.log(x) - 0.5 / x - z * poly


#: the bivariate rational approximation of the gamma sample's derivative (rows: 1, u, u**2)
_GAMMA_GRAD_UV = np.array([
    [0.16009398, -0.094634809, 0.025146376, -0.0030648343, 1, 0.32668115, 0.10406089, 0.0014179084],
    [0.53487893, 0.1298071, 0.065735949, -0.0015649758, 0.16639465, 0.020070113, -0.0035938915, -0.00058392623],
    [0.040121004, -0.0065914022, -0.0026286047, -0.0013441777, 0.017050642, -0.0021309326, 0.00085092367,
     -1.5247877e-07],
])  # fmt: skip


def standard_gamma_grad(alpha: np.ndarray, x: np.ndarray) -> np.ndarray:
    """``d x / d alpha`` of a standard gamma draw ``x`` (``torch._standard_gamma_grad``):
    ``-(d cdf / d alpha) / pdf``, from a series in ``x`` below 0.8, Rice's saddle-point
    expansion for ``alpha > 8``, else a rational approximation in ``log(x / alpha)`` and
    ``log(alpha)``; computed in float64, returned in ``x``'s dtype."""
    a = alpha.astype(np.float64)
    z = x.astype(np.float64)
    out = np.zeros(np.broadcast_shapes(a.shape, z.shape))
    a, z = np.broadcast_to(a, out.shape), np.broadcast_to(z, out.shape)
    with np.errstate(all="ignore"):
        # small x: the series of the lower incomplete gamma function and its alpha-derivative
        numer, denom = np.ones_like(a), a.copy()
        s1, s2 = numer / denom, numer / (denom * denom)
        for i in range(1, 6):
            numer = numer * (-z / i)
            denom = denom + 1
            s1, s2 = s1 + numer / denom, s2 + numer / (denom * denom)
        pow_xa = z**a
        pdf = z ** (a - 1) * np.exp(-z)
        cdf_a = (np.log(z) - _digamma_host(a)) * (pow_xa * s1) - pow_xa * s2
        small = -cdf_a / pdf
        small = np.where(np.isnan(small), 0.0, small)
        # large alpha: the saddle-point expansion, its own formula near the mode
        near = (1 + 24 * a * (1 + 12 * a)) * (1440 * a * a + 6 * z * (53 - 120 * z) - 65 * z * z / a
                                              + a * (107 + 3600 * z)) / (1244160 * a * a * a * a)  # fmt: skip
        root = np.sqrt(8 * a)
        t2 = root / (a - z)
        t3 = (z - a - a * np.log(z / a)) ** -1.5
        t23 = np.where(z < a, t2 - t3, t2 + t3)
        t1 = np.log(z / a) * t23 - np.sqrt(2 / a) * (a + z) / ((a - z) * (a - z))
        stirling = 1 + 1 / (12 * a) * (1 + 1 / (24 * a))
        far = -stirling * (z * t1) / root
        lo, hi = float(_F32(0.9)) * a, float(_F32(1.1)) * a
        large = np.where((lo <= z) & (z <= hi), near, far)
        # otherwise: the rational approximation
        u, v = np.log(z / a), np.log(a)
        cv = [_GAMMA_GRAD_UV[0, i] + u * (_GAMMA_GRAD_UV[1, i] + u * _GAMMA_GRAD_UV[2, i]) for i in range(8)]
        p = cv[0] + v * (cv[1] + v * (cv[2] + v * cv[3]))
        q = cv[4] + v * (cv[5] + v * (cv[6] + v * cv[7]))
        rational = np.exp(p / q)
    out = np.where(z < float(_F32(0.8)), small, np.where(a > 8.0, large, rational))
    return out.astype(x.dtype)


def _uniform_one(gen: Generator) -> float:
    return float(_unit(gen, 1, np.float64)[0])


def _poisson_one(gen: Generator, lam: float) -> int:
    """One draw of PyTorch's CPU ``sample_poisson``: Hoermann's transformed rejection from a
    rate of 10 up, else the product of uniforms (Knuth)."""
    if lam >= 10:
        slam, loglam = math.sqrt(lam), math.log(lam)
        b = 0.931 + 2.53 * slam
        a = -0.059 + 0.02483 * b
        invalpha = 1.1239 + 1.1328 / (b - 3.4)
        vr = 0.9277 - 3.6224 / (b - 2)
        while True:
            u = _uniform_one(gen) - 0.5
            v = _uniform_one(gen)
            us = 0.5 - abs(u)
            k = math.floor((2 * a / us + b) * u + lam + 0.43)
            if us >= 0.07 and v <= vr:
                return k
            if k < 0 or (us < 0.013 and v > us):
                continue
            if _log(v) + math.log(invalpha) - math.log(a / (us * us) + b) <= -lam + k * loglam - math.lgamma(k + 1.0):
                return k
    if lam == 0:
        return 0
    enlam, x, prod = math.exp(-lam), 0, 1.0
    while True:
        prod *= _uniform_one(gen)
        if prod > enlam:
            x += 1
        else:
            return x


def poisson(gen: Generator, rate: np.ndarray) -> np.ndarray:
    """``torch.poisson(rate)`` on the host: one draw per element in order (PyTorch's numbers for a seed)."""
    if np.any(rate < 0):
        raise RuntimeError("poisson: invalid Poisson rate, expected rate to be non-negative")
    flat = [_poisson_one(gen, float(v)) for v in rate.ravel().tolist()]
    return np.array(flat, dtype=np.float64).astype(rate.dtype).reshape(rate.shape)


_STIRLING_TAIL = (0.0810614667953272, 0.0413406959554092, 0.0276779256849983, 0.02079067210376509,
                  0.0166446911898211, 0.0138761288230707, 0.0118967099458917, 0.0104112652619720,
                  0.00925546218271273, 0.00833056343336287)  # fmt: skip


def _stirling_tail(k: float) -> float:
    """``log(k!) - `` Stirling's approximation of it: a table to 9, the series above."""
    if k <= 9:
        return _STIRLING_TAIL[int(k)]
    kp1sq = (k + 1) * (k + 1)
    return (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / kp1sq) / kp1sq) / (k + 1)


def _binomial_inversion(gen: Generator, count: float, prob: float, t: Any) -> float:
    logprob = float(t(math.log1p(-prob)))
    geom_sum, num = 0.0, 0
    while True:
        geom_sum += math.ceil(_log(_uniform_one(gen)) / logprob)
        if geom_sum > count:
            return float(num)
        num += 1


def _btrs(gen: Generator, count: float, prob: float, t: Any) -> float:
    """Hoermann's BTRS transformed rejection (as PyTorch's, after TensorFlow's): ``t`` rounds
    what the kernel computes in the parameters' own float type."""
    stddev = float(t(math.sqrt(t(t(count * prob) * t(1 - prob)))))
    b = 1.15 + 2.53 * stddev
    a = -0.0873 + 0.0248 * b + 0.01 * prob
    c = float(t(count * prob)) + 0.5
    v_r = 0.92 - 4.2 / b
    r = float(t(prob / t(1 - prob)))
    alpha = (2.83 + 5.1 / b) * stddev
    m = math.floor(t(t(count + 1) * prob))
    while True:
        u = _uniform_one(gen) - 0.5
        v = _uniform_one(gen)
        us = 0.5 - abs(u)
        k = float(t(math.floor((2 * a / us + b) * u + c)))
        if k < 0 or k > count:
            continue
        if us >= 0.07 and v <= v_r:
            return k
        v = _log(v * alpha / (a / (us * us) + b))
        bound = ((m + 0.5) * math.log((m + 1) / (r * (count - m + 1)))
                 + (count + 1) * math.log((count - m + 1) / (count - k + 1))
                 + (k + 0.5) * math.log(r * (count - k + 1) / (k + 1))
                 + _stirling_tail(m) + _stirling_tail(count - m) - _stirling_tail(k) - _stirling_tail(count - k))  # fmt: skip
        if v <= bound:
            return k


def _binomial_one(gen: Generator, count: float, prob: float, t: Any) -> float:
    if count <= 0.0 or prob <= 0.0:
        return 0.0
    if prob >= 1.0:
        return count
    if prob <= 0.5:
        if t(count * prob) >= 10.0:
            return _btrs(gen, count, prob, t)
        return _binomial_inversion(gen, count, prob, t)
    if prob > 0.5:
        q = float(t(1.0 - prob))
        if t(count * q) >= 10.0:
            return float(t(count - _btrs(gen, count, q, t)))
        return float(t(count - _binomial_inversion(gen, count, q, t)))
    return math.nan


def binomial(gen: Generator, count: np.ndarray, prob: np.ndarray) -> np.ndarray:
    """``torch.binomial(count, prob)`` on the host: one draw per element in order, BTRS where
    the mean is 10 or more, else inversion of geometric draws (PyTorch's numbers for a seed)."""
    count, prob = np.broadcast_arrays(count, prob)
    single = prob.dtype != np.float64

    def t(x: float) -> float:  # (the kernel's arithmetic in the parameters' float type)
        return float(np.float32(x)) if single else float(x)

    pairs = zip(count.ravel().tolist(), prob.ravel().tolist())
    flat = [_binomial_one(gen, float(n), float(p), t) for n, p in pairs]
    return np.array(flat, dtype=np.float64).astype(prob.dtype).reshape(prob.shape)


# --- the Dirichlet draw's derivative (torch._dirichlet_grad): the beta marginal's, per element --------------------------


def _digamma_one(x: Any, t: Any) -> Any:
    """Digamma of a positive number in the kernel's arithmetic: ``t`` is its float type
    (np.float32 or np.float64); the running sum is float64, the result rounded to ``t``."""
    x = t(x)
    if x == 0:
        return t(np.inf)
    acc = 0.0
    while x < 10:
        acc -= float(t(1) / x)
        x = t(x + t(1))
    if x == 10:
        return t(acc + 2.25175258906672110764)
    z = 1.0 / float(x * x)
    poly = 0.0
    for a in (8.33333333333333333333e-2, -2.10927960927960927961e-2, 7.57575757575757575758e-3,
              -4.16666666666666666667e-3, 3.96825396825396825397e-3, -8.33333333333333333333e-3,
              8.33333333333333333333e-2):  # fmt: skip
        poly = poly * z + a
    return t(acc + float(np.log(x)) - float(t(0.5) / x) - z * poly)


def _beta_grad_alpha_small(x: Any, alpha: Any, beta: Any, t: Any) -> Any:
    """``d x / d alpha`` of a Beta(alpha, beta) draw near 0: a series in ``x`` (in ``t``'s arithmetic)."""
    factor = t(_digamma_one(alpha, t) - _digamma_one(t(alpha + beta), t) - np.log(x))
    numer = t(1)
    series = t(numer / alpha * t(factor + t(1) / alpha))
    for i in range(1, 11):
        ti = t(i)
        numer = t(numer * t(t(ti - beta) * x / ti))
        denom = t(alpha + ti)
        series = t(series + t(numer / denom * t(factor + t(1) / denom)))
    result = t(t(x * np.power(t(t(1) - x), -beta)) * series)
    return t(0) if np.isnan(result) else result


def _beta_grad_beta_small(x: Any, alpha: Any, beta: Any, t: Any) -> Any:
    """``d x / d beta`` of a Beta(alpha, beta) draw near 0."""
    factor = t(_digamma_one(t(alpha + beta), t) - _digamma_one(beta, t))
    numer, betas, dbetas, series = t(1), t(1), t(0), t(factor / alpha)
    for i in range(1, 9):
        ti = t(i)
        numer = t(numer * t(-x / ti))
        dbetas = t(t(dbetas * t(beta - ti)) + betas)
        betas = t(betas * t(beta - ti))
        series = t(series + t(t(numer / t(alpha + ti)) * t(dbetas + t(factor * betas))))
    result = t(-np.power(t(t(1) - x), t(t(1) - beta)) * series)
    return t(0) if np.isnan(result) else result


def _beta_grad_alpha_mid(x: float, alpha: float, beta: float) -> float:
    """``d x / d alpha`` of a Beta draw for large ``alpha`` and ``beta``: Rice's saddle-point expansion (float64)."""
    total = alpha + beta
    mean = alpha / total
    std = math.sqrt(alpha * beta / (total + 1)) / total
    if mean - 0.1 * std <= x <= mean + 0.1 * std:  # (its own formula at the mean, where the expansion is singular)
        poly = 47 * x * (beta * beta) * (beta * beta) + alpha * (
            (43 + 20 * (16 + 27 * beta) * x) * (beta * beta) * beta
            + alpha * (3 * (59 + 180 * beta - 90 * x) * (beta * beta)
                       + alpha * ((453 + 1620 * beta * (1 - x) - 455 * x) * beta
                                  + alpha * (8 * (1 - x) * (135 * beta - 11)))))  # fmt: skip
        prefactor_num = (1 + 12 * alpha) * (1 + 12 * beta) / (total * total)
        prefactor_den = 12960 * alpha * alpha * alpha * beta * beta * (1 + 12 * total)
        return prefactor_num / (1 - x) * poly / prefactor_den
    prefactor = -x / math.sqrt(2 * alpha * beta / total)
    stirling = ((1 + 1 / (12 * alpha) + 1 / (288 * alpha * alpha)) * (1 + 1 / (12 * beta) + 1 / (288 * beta * beta))
                / (1 + 1 / (12 * total) + 1 / (288 * total * total)))  # fmt: skip
    term1_num = 2 * (alpha * alpha) * (x - 1) + alpha * beta * (x - 1) - x * (beta * beta)
    axbx = alpha * (x - 1) + beta * x
    term1 = term1_num / (math.sqrt(2 * alpha / beta) * total**1.5 * axbx * axbx)
    term2 = 0.5 * math.log(alpha / (total * x))
    term3 = math.sqrt(8 * alpha * beta / total) / (beta * x + alpha * (x - 1))
    term4_base = beta * math.log(beta / (total * (1 - x))) + alpha * math.log(alpha / (total * x))
    term4 = term4_base**-1.5 if term4_base > 0 else math.nan
    return stirling * prefactor * (term1 + term2 * (term3 + (term4 if x < mean else -term4)))


#: the rational correction to the analytic approximation: [numerator / denominator][u power][a power][b power]
_DIRICHLET_GRAD = np.array([
    [[[1.003668233, -0.01061107488, -0.0657888334, 0.01201642863],
      [0.6336835991, -0.3557432599, 0.05486251648, -0.001465281033],
      [-0.03276231906, 0.004474107445, 0.002429354597, -0.0001557569013]],
     [[0.221950385, -0.3187676331, 0.01799915743, 0.01074823814],
      [-0.2951249643, 0.06219954479, 0.01535556598, 0.001550077057],
      [0.02155310298, 0.004170831599, 0.001292462449, 6.976601077e-05]],
     [[-0.05980841433, 0.008441916499, 0.01085618172, 0.002319392565],
      [0.02911413504, 0.01400243777, -0.002721828457, 0.000751041181],
      [0.005900514878, -0.001936558688, -9.495446725e-06, 5.385558597e-05]]],
    [[[1, -0.02924021934, -0.04438342661, 0.007285809825],
      [0.6357567472, -0.3473456711, 0.05454656494, -0.002407477521],
      [-0.03301322327, 0.004845219414, 0.00231480583, -0.0002307248149]],
     [[0.5925320577, -0.1757678135, 0.01505928619, 0.000564515273],
      [0.1014815858, -0.06589186703, 0.01272886114, -0.0007316646956],
      [-0.007258481865, 0.001096195486, 0.0003934994223, -4.12701925e-05]],
     [[0.06469649321, -0.0236701437, 0.002902096474, -5.896963079e-05],
      [0.001925008108, -0.002869809258, 0.0008000589141, -6.063713228e-05],
      [-0.0003477407336, 6.959756487e-05, 1.097287507e-05, -1.650964693e-06]]],
])  # fmt: skip


def _dirichlet_grad_one(x: Any, alpha: Any, total: Any, t: Any) -> Any:
    """``d x / d alpha`` of one Dirichlet draw's entry ``x`` (its Beta(alpha, total - alpha) marginal),
    scaled by ``1 / (1 - x)``: series near 0 and 1, Rice's expansion for large parameters, else a
    rational correction to an analytic approximation."""
    x, alpha, total = t(x), t(alpha), t(total)
    beta = t(total - alpha)
    boundary = t(t(total * x) * t(t(1) - x))
    if x <= 0.5 and boundary < 2.5:
        return _beta_grad_alpha_small(x, alpha, beta, t)
    if x >= 0.5 and boundary < 0.75:
        return t(-_beta_grad_beta_small(t(t(1) - x), beta, alpha, t))
    xd, ad, td = float(x), float(alpha), float(total)
    bd = td - ad
    if alpha > 6 and beta > 6:
        return t(_beta_grad_alpha_mid(xd, ad, bd))
    u = math.log(xd)
    a = math.log(ad) - u
    b = math.log(td) - a
    pow_u, pow_a = (1.0, u, u * u), (1.0, a, a * a)
    p = q = 0.0
    for i in range(3):
        for j in range(3):
            ua = pow_u[i] * pow_a[j]
            cp, cq = _DIRICHLET_GRAD[0, i, j], _DIRICHLET_GRAD[1, i, j]
            p += ua * (cp[0] + b * (cp[1] + b * (cp[2] + b * cp[3])))
            q += ua * (cq[0] + b * (cq[1] + b * (cq[2] + b * cq[3])))
    approx = xd * float(_digamma_one(td, t) - _digamma_one(ad, t)) / bd
    return t(p / q * approx)


def dirichlet_grad(x: np.ndarray, alpha: np.ndarray, total: np.ndarray) -> np.ndarray:
    """``torch._dirichlet_grad(x, alpha, total)`` elementwise (arrays of one shape and float dtype)."""
    t = np.float32 if x.dtype != np.float64 else np.float64
    flat = [_dirichlet_grad_one(a, b, c, t) for a, b, c in zip(x.ravel().tolist(), alpha.ravel().tolist(),
                                                                total.ravel().tolist())]  # fmt: skip
    return np.array(flat, dtype=x.dtype).reshape(x.shape)
