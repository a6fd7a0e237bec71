"""PyTorch's remaining pooling functions: adaptive average and max pooling of 1 to 3
spatial axes, power-average (LP) pooling, fractional max pooling, and the ``*_with_indices``
spellings.

Each is written from primitives (matmuls with averaging matrices; an index gather and a
max; ``avg_pool`` of powers), so it differentiates to every order and traces as its
primitives. ``tinygrad_attn.functional`` re-exports every public name.

>>> F.adaptive_max_pool1d(x, 4, return_indices=True)  # doctest: +SKIP  (x: (N, C, L))
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..engine.arguments import _is_ints, refuse
from ..engine.arguments import output_size as _output_size_arg
from ..engine.composite import composite
from ..engine.declare import public
from ..engine.switches import no_grad
from ..ops.saved import saved_for_backward
from ..runtime.meta_stand_ins import stand_in
from ..tensors._tensor import InvalidArgumentError, Tensor, where
from . import checks as _F
from .conv import (
    _adaptive_matrix,
    _check_input,
    _empty_refused,
    _ntuple,
    adaptive_avg_pool2d,
    adaptive_global_mean,
    avg_pool1d,
    avg_pool2d,
    avg_pool3d,
    max_pool1d,
    max_pool2d,
    max_pool3d,
)


def _output_size(op: str, nd: int, x: Tensor, output_size: Any) -> tuple[int, ...]:
    """PyTorch's ``output_size``: an int, or ``nd`` entries of which ``None`` keeps that side."""
    output_size = _output_size_arg(op, nd, output_size)
    if isinstance(output_size, int):
        output_size = (output_size,) * nd
    if len(output_size) != nd:
        raise InvalidArgumentError(f"{op}: output_size must be an int or a tuple of {nd}, got {output_size!r}")
    spatial = tuple(x.shape[2:])
    out = tuple(n if o is None else int(o) for o, n in zip(output_size, spatial))
    if any(o < 0 for o in out) or any(n < 1 for n in spatial):  # (an output side of 0 is an empty result, as PyTorch's)
        raise InvalidArgumentError(f"{op}: input {tuple(x.shape)} and output size {out} must be non-empty")
    return out


# -- adaptive average pooling -------------------------------------------------------------
def _adaptive_avg(op: str, nd: int, input: Any, output_size: Any) -> Tensor:
    """One matmul per spatial axis with PyTorch's averaging matrix (each output averages its
    window ``floor(i n / m)`` to ``ceil((i + 1) n / m)``)."""
    x, unbatched = _check_input(op, nd, input)
    out = _output_size(op, nd, x, output_size)
    _F._float(x, op)
    for i, (n, m) in enumerate(zip(x.shape[2:], out)):
        a = Tensor._wrap(x._dev.asarray(_adaptive_matrix(n, m).astype(x.dtype)), x._dev)  # (m, n)
        x = (x.transpose(2 + i, -1) @ a.mT).transpose(2 + i, -1)
    if any(m != 1 for m in out):  # (as PyTorch's, it keeps its input, except for a mean over everything)
        x = saved_for_backward(x, input)
    x = _empty_refused("adaptive_avg_pool", x) if 0 in out else x
    return x.squeeze(0) if unbatched else x


@public(function=True, functional=True)
def adaptive_avg_pool1d(input: Tensor, output_size: Any) -> Tensor:
    """Average ``input (N, C, L)`` into ``output_size`` windows: PyTorch's ``F.adaptive_avg_pool1d``,
    written as PyTorch's: ``adaptive_avg_pool2d`` of the input with a height of 1 (``SqueezeBackward1``
    over ``AdaptiveAvgPool2DBackward0`` over ``UnsqueezeBackward0``)."""
    op = "adaptive_avg_pool1d"
    x, _ = _check_input(op, 1, input)
    (out,) = _output_size(op, 1, x, output_size)
    return adaptive_avg_pool2d(input.unsqueeze(-2), (1, out)).squeeze(-2)


@public(function=False, functional=True)
@composite("adaptive_avg_pool3d")
def adaptive_avg_pool3d(input: Tensor, output_size: Any) -> Tensor:
    """Average ``input (N, C, D, H, W)`` into ``output_size`` (an int or a triple; ``None``
    keeps that side): PyTorch's ``F.adaptive_avg_pool3d``."""
    mean = adaptive_global_mean("adaptive_avg_pool3d", 3, input, output_size)
    if mean is not None:
        return mean
    return _adaptive_avg("adaptive_avg_pool3d", 3, input, output_size)


# -- adaptive max pooling -----------------------------------------------------------------
def _adaptive_positions(spatial: tuple[int, ...], out: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
    """(M, K) flat input positions of each output's window (``M`` outputs, ``K`` the largest
    window, both row-major over the axes) and whether each is inside its window (shorter
    windows are padded with a repeated position that does not count)."""
    pos, valid = np.zeros((1, 1), np.int64), np.ones((1, 1), bool)
    for n, m in zip(spatial, out):
        lo = (np.arange(m) * n) // m
        hi = -((-(np.arange(m) + 1) * n) // m)
        p = lo[:, None] + np.arange(int((hi - lo).max()))[None, :]  # (m, k)
        ok = p < hi[:, None]
        mm, kk = pos.shape[0] * m, pos.shape[1] * p.shape[1]
        pos = (pos[:, None, :, None] * n + np.minimum(p, n - 1)[None, :, None, :]).reshape(mm, kk)
        valid = (valid[:, None, :, None] & ok[None, :, None, :]).reshape(mm, kk)
    return pos, valid


def _adaptive_max(op: str, nd: int, input: Any, output_size: Any, return_indices: bool) -> Any:
    x, unbatched = _check_input(op, nd, input)
    _F._float(x, op)
    out = _output_size(op, nd, x, output_size)
    spatial = tuple(x.shape[2:])
    if 0 in out:  # (no windows: an empty result, still of x's graph, and empty indices)
        y = _empty_refused("adaptive_max_pool", x.flatten(2)[..., :0].reshape(tuple(x.shape[:2]) + out))
        idx = Tensor.zeros(y.shape, dtype=np.int64, device=x._dev)
        y, idx = (y.squeeze(0), idx.squeeze(0)) if unbatched else (y, idx)
        return (y, idx) if return_indices else y
    pos, valid = _adaptive_positions(spatial, out)  # (M, K)
    m, k = pos.shape
    dev = x._dev
    n, c = x.shape[:2]
    flat = x.reshape(n, c, math.prod(spatial))
    cols = flat.index_select(2, Tensor._wrap(dev.asarray(pos.reshape(-1)), dev)).reshape(n, c, m, k)
    cols = where(Tensor._wrap(dev.asarray(valid), dev), cols, -math.inf)
    first = cols.argmax(-1).unsqueeze(-1)  # (N, C, M, 1): the first maximum gets the gradient, as PyTorch's
    y = saved_for_backward(cols.gather(-1, first).reshape((n, c) + out), input)  # (as PyTorch's, it keeps x)
    if not return_indices:
        return y.squeeze(0) if unbatched else y
    with no_grad():
        where_ = Tensor._wrap(dev.asarray(pos), dev).expand((n, c, m, k))
        idx = where_.gather(-1, first.detach()).reshape((n, c) + out)
    return (y.squeeze(0), idx.squeeze(0)) if unbatched else (y, idx)


@public(function=False, functional=True)
def adaptive_max_pool1d(input: Tensor, output_size: Any, return_indices: bool = False) -> Any:
    """The max of each of ``output_size`` adaptive windows of ``input (N, C, L)``: PyTorch's
    ``F.adaptive_max_pool1d``; with ``return_indices`` also where each max sits (int64). Written as
    PyTorch's: ``adaptive_max_pool2d`` of the input with a height of 1."""
    op = "adaptive_max_pool1d"
    x, _ = _check_input(op, 1, input)
    _F._float(x, op)
    (out,) = _output_size(op, 1, x, output_size)
    y = adaptive_max_pool2d(input.unsqueeze(-2), (1, out), return_indices)
    return (y[0].squeeze(-2), y[1].squeeze(-2)) if return_indices else y.squeeze(-2)


@public(function=False, functional=True)
@composite("adaptive_max_pool2d")
def adaptive_max_pool2d(input: Tensor, output_size: Any, return_indices: bool = False) -> Any:
    """PyTorch's ``F.adaptive_max_pool2d`` over ``input (N, C, H, W)``; indices flat in each plane."""
    return _adaptive_max("adaptive_max_pool2d", 2, input, output_size, return_indices)


@public(function=False, functional=True)
@composite("adaptive_max_pool3d")
def adaptive_max_pool3d(input: Tensor, output_size: Any, return_indices: bool = False) -> Any:
    """PyTorch's ``F.adaptive_max_pool3d`` over ``input (N, C, D, H, W)``."""
    return _adaptive_max("adaptive_max_pool3d", 3, input, output_size, return_indices)


@public(function=False, functional=True)
def adaptive_max_pool1d_with_indices(input: Tensor, output_size: Any, return_indices: bool = False) -> Any:
    """``adaptive_max_pool1d(..., return_indices=True)``: the ``(values, indices)`` pair."""
    return adaptive_max_pool1d(input, output_size, True)


@public(function=False, functional=True)
def adaptive_max_pool2d_with_indices(input: Tensor, output_size: Any, return_indices: bool = False) -> Any:
    """``adaptive_max_pool2d(..., return_indices=True)``: the ``(values, indices)`` pair."""
    return adaptive_max_pool2d(input, output_size, True)


@public(function=False, functional=True)
def adaptive_max_pool3d_with_indices(input: Tensor, output_size: Any, return_indices: bool = False) -> Any:
    """``adaptive_max_pool3d(..., return_indices=True)``: the ``(values, indices)`` pair."""
    return adaptive_max_pool3d(input, output_size, True)


@public(function=True, functional=True)
def max_pool1d_with_indices(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0, dilation: Any = 1,
                            ceil_mode: bool = False, return_indices: bool = False) -> Any:  # fmt: skip
    """``max_pool1d(..., return_indices=True)``: the ``(values, indices)`` pair."""
    return max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


@public(function=False, functional=True)
def max_pool2d_with_indices(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0, dilation: Any = 1,
                            ceil_mode: bool = False, return_indices: bool = False) -> Any:  # fmt: skip
    """``max_pool2d(..., return_indices=True)``: the ``(values, indices)`` pair."""
    return max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


@public(function=False, functional=True)
def max_pool3d_with_indices(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0, dilation: Any = 1,
                            ceil_mode: bool = False, return_indices: bool = False) -> Any:  # fmt: skip
    """``max_pool3d(..., return_indices=True)``: the ``(values, indices)`` pair."""
    return max_pool3d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


# -- power-average pooling ----------------------------------------------------------------
def _lp_pool(op: str, nd: int, input: Any, norm_type: float, kernel_size: Any, stride: Any, ceil_mode: bool) -> Tensor:
    """``(sum of x^p over each window)^(1/p)``, as PyTorch computes it: the window mean of
    ``x^p`` times the window size (so ``ceil_mode``'s cut windows count as PyTorch's do), a
    zero sum passing no gradient."""
    x = _F.tensor_arg(input, op)
    kernel = _ntuple(kernel_size, nd, "kernel_size", op)
    pool = (avg_pool1d, avg_pool2d, avg_pool3d)[nd - 1]
    s = pool(x ** float(norm_type), kernel, stride, 0, ceil_mode)
    if nd == 1 and not isinstance(
        kernel_size, numbers.Integral
    ):  # (PyTorch's 1-d form multiplies by it, after the pool)
        raise TypeError(f"mul(): argument 'other' (position 1) must be Tensor, not {type(kernel_size).__name__}")
    s = s * float(math.prod(kernel))
    # PyTorch's root of sign(s) * relu(|s|): of s itself, but an all-zero window is 0 and passes no
    # gradient. Spelled as wheres, no root is taken at 0: its infinite slope (a product with relu's
    # 0/1 mask made it 0 * inf) and the warning of 0 ** -(1 - 1/p) stay out
    some = s != 0
    return where(some, where(some, s, 1.0) ** (1.0 / float(norm_type)), 0.0)


@public(function=False, functional=True)
@composite("lp_pool1d")
def lp_pool1d(input: Tensor, norm_type: float, kernel_size: Any, stride: Any = None, ceil_mode: bool = False) -> Tensor:
    """The ``norm_type``-norm of each window of ``input (N, C, L)``: PyTorch's ``F.lp_pool1d``."""
    return _lp_pool("lp_pool1d", 1, input, norm_type, kernel_size, stride, ceil_mode)


@public(function=False, functional=True)
@composite("lp_pool2d")
def lp_pool2d(input: Tensor, norm_type: float, kernel_size: Any, stride: Any = None, ceil_mode: bool = False) -> Tensor:
    """The ``norm_type``-norm of each window of ``input (N, C, H, W)``: PyTorch's ``F.lp_pool2d``."""
    return _lp_pool("lp_pool2d", 2, input, norm_type, kernel_size, stride, ceil_mode)


@public(function=False, functional=True)
@composite("lp_pool3d")
def lp_pool3d(input: Tensor, norm_type: float, kernel_size: Any, stride: Any = None, ceil_mode: bool = False) -> Tensor:
    """The ``norm_type``-norm of each window of ``input (N, C, D, H, W)``: PyTorch's ``F.lp_pool3d``."""
    return _lp_pool("lp_pool3d", 3, input, norm_type, kernel_size, stride, ceil_mode)


# -- fractional max pooling ----------------------------------------------------------------------
_SIDES = {2: ("height", "width"), 3: ("time", "height", "width")}


def _fractional_starts(sample: np.ndarray, n: int, m: int, k: int) -> np.ndarray:
    """Where each of ``m`` windows of ``k`` starts along an axis of ``n``, for each of the
    ``sample`` values in [0, 1) (PyTorch's pseudo-random sequence, in the samples' float type:
    ``floor((i + u) * alpha) - floor(u * alpha)``, the last window flush with the end)."""
    if m == 0:
        return np.zeros(sample.shape + (0,), np.int64)
    if m == 1:
        return np.full(sample.shape + (1,), n - k, np.int64)
    alpha = sample.dtype.type(n - k) / sample.dtype.type(m - 1)
    i = np.arange(m - 1, dtype=sample.dtype)
    starts = ((i + sample[..., None]) * alpha).astype(np.int64) - (sample[..., None] * alpha).astype(np.int64)
    last = np.full(sample.shape + (1,), n - k, np.int64)
    return np.concatenate([starts, last], axis=-1)


def _fractional_max(op: str, nd: int, input: Any, kernel_size: Any, output_size: Any, output_ratio: Any,
                    return_indices: bool, samples: Any) -> Any:  # fmt: skip
    from ..tensors.factories.creation import rand  # noqa: PLC0415 - the draw, only where the caller gave no samples

    if not isinstance(input, Tensor):
        raise TypeError(f"{op}: input must be a Tensor, got {type(input).__name__}")
    if output_size is None and output_ratio is None:
        raise ValueError(f"{op} requires specifying either an output_size or an output_ratio")
    x, unbatched = _check_input(op, nd, input)
    if not _is_ints(kernel_size):  # (PyTorch's Python reads the sizes and the rank first, then parses kernel_size)
        refuse(op, "kernel_size", 1, "ints", kernel_size)
    _F._float(x, op)
    spatial = tuple(x.shape[2:])
    kernel = _ntuple(kernel_size, nd, "kernel_size", op)
    if output_size is None:
        if nd == 2 and not isinstance(output_ratio, Sequence):  # (PyTorch's 2-d functional takes its length first)
            raise TypeError(f"object of type '{type(output_ratio).__name__}' has no len()")
        if isinstance(output_ratio, Sequence) and len(output_ratio) > nd:
            raise ValueError(f"{op} requires output_ratio to either be a single Int or tuple of Ints.")
        ratio = (output_ratio,) * nd if not isinstance(output_ratio, Sequence) else tuple(output_ratio)
        if len(ratio) == 1:
            ratio = ratio * nd
        out = tuple(int(n * r) for n, r in zip(spatial, ratio))
    else:
        out = _ntuple(output_size, nd, "output_size", op)
    for side, n, m, k in zip(_SIDES[nd], spatial, out, kernel):
        # (PyTorch's 3-d check is strict: the last window may not end at the input's end)
        if m + k - 1 > n or (nd == 3 and m + k - 1 == n):
            name = op if nd == 2 else op + "_out"
            raise RuntimeError(f"{name}(): pool {side} {k} too large relative to input {side} {n}")
    nb, c = x.shape[:2]
    if samples is None:  # drawn as PyTorch's: (N, C, nd) uniforms in the input's dtype, from the default generator
        samples = rand(nb, c, nd, dtype=x.dtype, device=x.device)
    if not isinstance(samples, Tensor) or samples.ndim != 3 or samples.shape[2] != nd:
        raise RuntimeError(f"{op}: _random_samples must be a tensor of shape ({nb}, {c}, {nd}), got "
                           f"{getattr(samples, 'shape', type(samples).__name__)}")  # fmt: skip
    if samples.shape[0] < nb:  # (more rows are allowed and the first used, as PyTorch's)
        raise RuntimeError("Expect _random_samples.size(0) no less then input batch size.")
    if samples.shape[1] != c:
        raise RuntimeError("Expect _random_samples.size(1) equals to input channel size.")
    if samples.dtype != x.dtype:
        raise RuntimeError("Expect _random_samples to have the same dtype as input")
    u = samples._read("fractional_max_pool")[
        :nb
    ]  # (N, C, nd): for 2-d, [..., 0] moves along the width, [..., 1] the height
    order = (1, 0) if nd == 2 else (0, 1, 2)
    pos = np.zeros((nb, c, 1, 1), np.int64)  # (N, C, outputs so far, window positions so far): flat input indices
    for axis, (n, m, k) in enumerate(zip(spatial, out, kernel)):
        starts = _fractional_starts(u[..., order[axis]], n, m, k)  # (N, C, m)
        p = starts[..., :, None] + np.arange(k)  # (N, C, m, k)
        a, b = pos.shape[2], pos.shape[3]
        pos = (pos[:, :, :, None, :, None] * n + p[:, :, None, :, None, :]).reshape(nb, c, a * m, b * k)
    m, k = pos.shape[2], pos.shape[3]
    dev = x._dev
    where_ = Tensor._wrap(dev.asarray(pos), dev)  # (N, C, M, K)
    flat = x.reshape(nb, c, math.prod(spatial))
    cols = flat.gather(2, where_.reshape(nb, c, m * k)).reshape(nb, c, m, k)
    first = cols.argmax(-1).unsqueeze(-1)  # (N, C, M, 1): the first maximum, as PyTorch's scan
    y = cols.gather(-1, first).reshape((nb, c) + out)
    if not return_indices:
        return y.squeeze(0) if unbatched else y
    with no_grad():
        idx = where_.gather(-1, first.detach()).reshape((nb, c) + out)
    return (y.squeeze(0), idx.squeeze(0)) if unbatched else (y, idx)


@public(function=False, functional=True)
@composite("fractional_max_pool2d")
@stand_in()
def fractional_max_pool2d(input: Tensor, kernel_size: int | Sequence[int], output_size: Any = None, output_ratio: Any = None,
                          return_indices: bool = False, _random_samples: Tensor | None = None) -> Any:  # fmt: skip
    """PyTorch's ``F.fractional_max_pool2d``: the max of ``kernel_size`` windows of ``input``
    ``(N, C, H, W)`` placed at pseudo-random fractional strides so that the output is
    ``output_size`` (or ``output_ratio`` of the input). The placement comes from
    ``_random_samples`` ``(N, C, 2)`` in [0, 1), drawn from the default generator as PyTorch
    draws them when not given (the same seed, the same windows); with ``return_indices``
    also where each max sits (flat in its plane, int64).

    >>> F.fractional_max_pool2d(tga.randn(1, 3, 9, 9), 2, output_size=4).shape  # doctest: +SKIP
    (1, 3, 4, 4)
    """
    return _fractional_max("fractional_max_pool2d", 2, input, kernel_size, output_size, output_ratio, return_indices,
                           _random_samples)  # fmt: skip


@public(function=False, functional=True)
@composite("fractional_max_pool3d")
@stand_in()
def fractional_max_pool3d(input: Tensor, kernel_size: int | Sequence[int], output_size: Any = None, output_ratio: Any = None,
                          return_indices: bool = False, _random_samples: Tensor | None = None) -> Any:  # fmt: skip
    """PyTorch's ``F.fractional_max_pool3d`` over ``input`` ``(N, C, T, H, W)``; samples ``(N, C, 3)``."""
    return _fractional_max("fractional_max_pool3d", 3, input, kernel_size, output_size, output_ratio, return_indices,
                           _random_samples)  # fmt: skip


@public(function=False, functional=True)
def fractional_max_pool2d_with_indices(input: Tensor, kernel_size: int | Sequence[int], output_size: Any = None,
                                       output_ratio: Any = None, return_indices: bool = False,
                                       _random_samples: Tensor | None = None) -> Any:  # fmt: skip
    """``fractional_max_pool2d(..., return_indices=True)``: the ``(values, indices)`` pair."""
    return fractional_max_pool2d(input, kernel_size, output_size, output_ratio, True, _random_samples)


@public(function=False, functional=True)
def fractional_max_pool3d_with_indices(input: Tensor, kernel_size: int | Sequence[int], output_size: Any = None,
                                       output_ratio: Any = None, return_indices: bool = False,
                                       _random_samples: Tensor | None = None) -> Any:  # fmt: skip
    """``fractional_max_pool3d(..., return_indices=True)``: the ``(values, indices)`` pair."""
    return fractional_max_pool3d(input, kernel_size, output_size, output_ratio, True, _random_samples)
