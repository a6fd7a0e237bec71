"""Resizing: PyTorch's ``F.interpolate`` for the modes ``nearest``, ``nearest-exact``,
``linear``, ``bilinear``, ``trilinear`` and ``bicubic``, written in primitives (``index_select``
of the source rows along each spatial axis, then a weighted sum), so its gradient is the
autograd of those ops; ``area`` is adaptive average pooling to the size, as PyTorch's.
``tinygrad_attn.functional`` re-exports it.

>>> F.interpolate(x, scale_factor=2, mode="bilinear")  # doctest: +SKIP  (x: (N, C, H, W))
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..engine.composite import recorded_as
from ..engine.declare import check_dtype, public
from ..engine.layout import result_in_format_of
from ..engine.warn import warn as _user_warn
from ..tensors._tensor import InvalidArgumentError, Tensor, UnsupportedModeError
from ..tensors.dtypes import float16, uint8
from .conv import adaptive_avg_pool2d
from .pooling import adaptive_avg_pool1d, adaptive_avg_pool3d
from .resize_taps import int16_weights, source_scale, taps

_NEAREST_DTYPES = ("uint8", "float16", "float32", "float64")
_LINEAR = {"linear": 1, "bilinear": 2, "trilinear": 3, "bicubic": 2}
_CUBIC_A = -0.75  # (PyTorch's cubic convolution constant, as OpenCV's)


def _cubic_sources(n_in: int, n_out: int, scale: float | None, align_corners: bool) -> tuple[list, list]:
    """PyTorch's bicubic taps along one axis: the four source indices of each output (clamped to the
    edge) and their weights, Keys' cubic convolution kernel at the distances to the source point."""
    dst = np.arange(n_out, dtype=np.float64)
    if align_corners:
        src = dst * ((n_in - 1) / (n_out - 1)) if n_out > 1 else np.zeros(n_out)
    else:  # (not clamped at 0, unlike the linear modes: PyTorch's cubic source index)
        src = (dst + 0.5) * (1.0 / scale if scale is not None else n_in / n_out) - 0.5
    base = np.floor(src)
    t = src - base
    a = _CUBIC_A

    def near(x: np.ndarray) -> np.ndarray:  # |x| <= 1
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x: np.ndarray) -> np.ndarray:  # 1 < |x| < 2
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a

    weights = [far(t + 1), near(t), near(1 - t), far(2 - t)]
    index = [np.clip(base.astype(np.int64) + k, 0, n_in - 1) for k in (-1, 0, 1, 2)]
    return index, weights


def _per_axis(value: Any, nd: int, what: str) -> tuple | None:
    if value is None:
        return None
    if isinstance(value, Sequence):
        if len(value) != nd:
            raise InvalidArgumentError(
                f"interpolate: {what} {tuple(value)} must have {nd} entries for {nd} spatial axes"
            )
        return tuple(value)
    return (value,) * nd


def _sources(n_in: int, n_out: int, scale: float | None, mode: str, align_corners: bool) -> tuple:
    """PyTorch's source coordinate of each output position along one axis: for the nearest
    modes the source index; for linear the two neighbours and the weight of the second."""
    # PyTorch's ratio: from a given scale_factor when there is one, else from the sizes
    ratio = 1.0 / scale if scale is not None else n_in / n_out
    dst = np.arange(n_out, dtype=np.float64)
    if mode == "nearest":
        return (np.minimum(np.floor(dst * ratio).astype(np.int64), n_in - 1),)
    if mode == "nearest-exact":
        return (np.minimum(np.floor((dst + 0.5) * ratio).astype(np.int64), n_in - 1),)
    if align_corners:
        src = dst * ((n_in - 1) / (n_out - 1)) if n_out > 1 else np.zeros(n_out)
    else:
        src = np.maximum((dst + 0.5) * ratio - 0.5, 0.0)
    lo = np.minimum(np.floor(src).astype(np.int64), n_in - 1)
    hi = np.minimum(lo + 1, n_in - 1)
    return lo, hi, src - lo


@public(function=False, functional=True)
def interpolate(input: Tensor, size: Any = None, scale_factor: Any = None, mode: str = "nearest",
                align_corners: bool | None = None, recompute_scale_factor: bool | None = None,
                antialias: bool = False) -> Tensor:  # fmt: skip
    """PyTorch's ``F.interpolate``: resize the spatial axes of ``input (N, C, *S)`` to
    ``size`` or by ``scale_factor``. ``mode``: ``nearest`` (PyTorch's legacy rounding),
    ``nearest-exact``, or ``linear``/``bilinear``/``trilinear`` for 1/2/3 spatial axes
    (``align_corners`` as PyTorch's), ``bicubic`` for 2, ``area`` (adaptive average pooling to
    the size). ``antialias`` (bilinear and bicubic): PyTorch's separable filter, which averages
    every source entry under a shrinking output's footprint; ``uint8`` bilinear and bicubic
    compute in PyTorch's fixed point (:mod:`~tinygrad_attn.functional.resize_taps`)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"interpolate: input must be a Tensor, got {type(input).__name__}")
    nd = input.ndim - 2
    if not 1 <= nd <= 3:
        # (PyTorch's class: NotImplementedError; ours is a ValueError too)
        raise UnsupportedModeError(
            f"interpolate: Only 3D, 4D and 5D input Tensors supported (got {input.ndim}D): needs an input "
            f"(N, C, *spatial), got shape {tuple(input.shape)}"
        )
    if mode not in ("nearest", "nearest-exact", "area", *_LINEAR):
        raise UnsupportedModeError(f"interpolate: mode {mode!r} is not supported (nearest, nearest-exact, area, "
                                   f"linear, bilinear, bicubic, trilinear)")  # fmt: skip
    if mode in _LINEAR and _LINEAR[mode] != nd:
        raise UnsupportedModeError(
            f"interpolate: mode {mode!r} needs {_LINEAR[mode] + 2}-D input, got {input.ndim}-D {tuple(input.shape)}"
        )
    if align_corners is not None and mode not in _LINEAR:
        raise InvalidArgumentError(
            f"interpolate: align_corners is only for the linear modes (linear, bilinear, bicubic, trilinear), not {mode!r}"
        )
    if antialias and (mode not in ("bilinear", "bicubic") or nd != 2):
        raise ValueError("Anti-alias option is restricted to bilinear, bicubic, and lanczos modes and requires a "
                         f"4-D tensor as input (interpolate: mode {mode!r}, input {tuple(input.shape)})")  # fmt: skip
    if (size is None) == (scale_factor is None):
        raise InvalidArgumentError("interpolate: give exactly one of size and scale_factor")
    sizes, scales = _per_axis(size, nd, "size"), _per_axis(scale_factor, nd, "scale_factor")
    spatial = tuple(input.shape[2:])
    if sizes is None:
        sizes = tuple(int(math.floor(n * float(s))) for n, s in zip(spatial, scales))
        if recompute_scale_factor:  # the ratio then comes from the sizes
            scales = None
    sizes = tuple(int(s) for s in sizes)
    if mode != "area" and any(s < 1 for s in sizes):  # (area is an adaptive pool, which gives empty axes)
        raise InvalidArgumentError(f"interpolate: output size {sizes} for input {tuple(input.shape)} must be positive")
    # (PyTorch's kernels: uint8 and floats for the nearest modes and for bilinear and bicubic, whose
    # uint8 kernel computes in fixed point; floats for the others)
    accepted = _NEAREST_DTYPES if mode in ("nearest", "nearest-exact", "bilinear", "bicubic") else "floating"
    check_dtype(f"upsample_{mode}{'_aa' if antialias else ''}", input, accepted)
    if mode == "area":  # (PyTorch's: the adaptive average pooling to the output size)
        if nd > 3:
            raise UnsupportedModeError(
                f"interpolate: mode 'area' takes 3-D to 5-D input, got shape {tuple(input.shape)}"
            )
        return (adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d)[nd - 1](input, sizes)
    # (PyTorch's one node of the mode's kernel: UpsampleNearest1DBackward0, UpsampleBilinear2DAaBackward0, ...)
    name = f"upsample_{mode.replace('-', '_')}{nd}d"
    with recorded_as(f"_{name}_aa" if antialias else name, input):
        return result_in_format_of(_resized(input, sizes, scales, mode, align_corners, antialias), input)


def _resized(input: Tensor, sizes: tuple, scales: tuple | None, mode: str, align_corners: bool | None,  # noqa: A002
             antialias: bool) -> Tensor:  # fmt: skip
    """:func:`interpolate`'s steps for a mode other than ``area``, its arguments checked."""
    nd, spatial = input.ndim - 2, tuple(input.shape[2:])
    if antialias or (mode in ("bilinear", "bicubic") and input.dtype == uint8):
        return _separable(input, sizes, scales, mode == "bicubic", bool(align_corners), antialias)
    if input.dtype == float16 and mode in ("linear", "trilinear"):  # (bilinear: another kernel, float32 weights)
        return _half_linear(input, sizes, scales, bool(align_corners))
    out = input
    for i, (n_in, n_out) in enumerate(zip(spatial, sizes)):
        axis = 2 + i
        shape = (n_out,) + (1,) * (nd - 1 - i)  # broadcast the weights along this axis
        if mode == "bicubic":
            index, weights = _cubic_sources(n_in, n_out, None if scales is None else float(scales[i]),
                                            bool(align_corners))  # fmt: skip
            taps = [out.index_select(axis, Tensor(j, device=input.device)) * Tensor(w.reshape(shape).astype(
                    input.dtype), device=input.device) for j, w in zip(index, weights)]  # fmt: skip
            out = taps[0] + taps[1] + taps[2] + taps[3]
            continue
        src = _sources(n_in, n_out, None if scales is None else float(scales[i]), mode, bool(align_corners))
        if len(src) == 1:
            out = out.index_select(axis, Tensor(src[0], device=input.device))
            continue
        lo, hi, w = src
        a = out.index_select(axis, Tensor(lo, device=input.device))
        b = out.index_select(axis, Tensor(hi, device=input.device))
        wt = Tensor(w.reshape(shape).astype(input.dtype), device=input.device)
        out = a + (b - a) * wt
    return out


def _half_linear(x: Tensor, sizes: tuple, scales: tuple | None, align_corners: bool) -> Tensor:
    """``linear`` and ``trilinear`` of a float16 input, rounded as PyTorch's: source positions in float32, each
    weight stored in float16 (the second rounded, the first ``1 - second`` in float16), the sums in
    float32 from the last axis out (each a fused multiply-add), and one rounding of the result to float16."""
    out = x.float()
    f32 = np.float32
    for axis in range(x.ndim - 1, 1, -1):
        n_in, n_out = x.shape[axis], sizes[axis - 2]
        if align_corners:
            scale = f32(n_in - 1) / f32(n_out - 1) if n_out > 1 else f32(0.0)
        else:
            given = None if scales is None else float(scales[axis - 2])
            scale = f32(1.0 / given) if given is not None and given > 0 else f32(n_in) / f32(n_out)
        dst = np.arange(n_out, dtype=f32)
        src = scale * dst if align_corners else np.maximum(scale * (dst + f32(0.5)) - f32(0.5), f32(0.0))
        lo = np.minimum(np.floor(src).astype(np.int64), n_in - 1)
        hi = lo + (lo < n_in - 1)
        second = np.clip(src - lo.astype(f32), f32(0.0), f32(1.0)).astype(np.float16)
        first = (np.float16(1.0) - second).astype(np.float16)
        shape = (n_out,) + (1,) * (x.ndim - 1 - axis)
        a = out.index_select(axis, Tensor(lo, device=x.device))
        b = out.index_select(axis, Tensor(hi, device=x.device))
        w0 = Tensor(first.astype(np.float64).reshape(shape), device=x.device)
        w1 = Tensor(second.astype(f32).reshape(shape), device=x.device)
        # (a * w0 + b * w1 with the first product fused into the addition, as PyTorch's compiled
        # kernel: exact in float64, one rounding to float32)
        out = (a.double() * w0 + (b * w1).double()).float()
    return out.to(float16)


def _separable(x: Tensor, sizes: tuple, scales: tuple | None, cubic: bool, align_corners: bool,
               antialias: bool) -> Tensor:  # fmt: skip
    """PyTorch's separable resize (:mod:`~tinygrad_attn.functional.resize_taps`): each axis that
    changes size, the last first, as a weighted sum of its taps (gathered by ``index_select``, so
    the gradient is autograd's); ``uint8`` in fixed point."""
    out = x
    for axis in range(x.ndim - 1, 1, -1):
        n_in, n_out = x.shape[axis], sizes[axis - 2]
        if n_in == n_out:
            continue
        scale = source_scale(n_in, n_out, align_corners, None if scales is None else float(scales[axis - 2]))
        lo, w = taps(n_in, n_out, scale, align_corners=align_corners, antialias=antialias, cubic=cubic)
        k = w.shape[1]
        index = np.minimum(lo[:, None] + np.arange(k), n_in - 1).reshape(-1)  # (the zero weights past the taps)
        picked = out.index_select(axis, Tensor(index, device=x.device))
        picked = picked.reshape(out.shape[:axis] + (n_out, k) + out.shape[axis + 1 :])
        trailing = (1,) * (x.ndim - 1 - axis)
        if x.dtype == uint8:
            w16, bits = int16_weights(w)
            acc = (picked.long() * Tensor(w16.reshape((n_out, k) + trailing), device=x.device)).sum(axis + 1)
            out = ((acc + (1 << (bits - 1))) >> bits).clamp(0, 255).to(uint8)
        else:
            weights = Tensor(w.reshape((n_out, k) + trailing).astype(np.dtype(x.dtype)), device=x.device)
            out = (picked * weights).sum(axis + 1)
    return out if out is not x else x.clone()


# -- PyTorch's deprecated spellings of interpolate ------------------------------------------
@public(function=False, functional=True)
def upsample(input: Tensor, size: Any = None, scale_factor: Any = None, mode: str = "nearest",
             align_corners: bool | None = None, *, recompute_scale_factor: bool | None = None) -> Tensor:  # fmt: skip
    """PyTorch's deprecated ``F.upsample``: :func:`interpolate`, with PyTorch's warning."""
    _user_warn("`nn.functional.upsample` is deprecated. Use `nn.functional.interpolate` instead.")
    return interpolate(input, size, scale_factor, mode, align_corners, recompute_scale_factor)


@public(function=False, functional=True)
def upsample_nearest(input: Tensor, size: Any = None, scale_factor: Any = None) -> Tensor:
    """PyTorch's deprecated ``F.upsample_nearest``: ``interpolate(mode="nearest")``."""
    _user_warn("`nn.functional.upsample_nearest` is deprecated. Use `nn.functional.interpolate` instead.")  # fmt: skip
    return interpolate(input, size, scale_factor, mode="nearest")


@public(function=False, functional=True)
def upsample_bilinear(input: Tensor, size: Any = None, scale_factor: Any = None) -> Tensor:
    """PyTorch's deprecated ``F.upsample_bilinear``: ``interpolate(mode="bilinear", align_corners=True)``."""
    _user_warn("`nn.functional.upsample_bilinear` is deprecated. Use `nn.functional.interpolate` instead.")  # fmt: skip
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


# (float16 ``linear``/``trilinear`` round as PyTorch's themselves, in :func:`_half_linear`: not the
# float32-then-round-once rule of the other float16 modes)
def _rounds_half_itself(args: tuple, kw: dict) -> bool:
    mode = kw["mode"] if "mode" in kw else args[3] if len(args) > 3 else "nearest"
    return mode in ("linear", "trilinear") and not kw.get("antialias", args[6] if len(args) > 6 else False)


for _fn in (interpolate, upsample):
    while _fn is not None:  # (every layer the declaration wrapped it in: the float16 rule reads its own)
        _fn.keeps_half = _rounds_half_itself
        _fn = getattr(_fn, "__wrapped__", None)
