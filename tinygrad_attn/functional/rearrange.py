"""Rearrangements of channels and positions with PyTorch's names: ``pixel_shuffle`` and
``pixel_unshuffle`` (channels to and from space, a super-resolution layer),
``channel_shuffle`` (ShuffleNet), and ``unfold``/``fold`` (sliding blocks to columns and
back, the im2col of the convolutions and its adjoint), and the spatial transformer's
``affine_grid`` and ``grid_sample`` (reading an image at arbitrary positions). Each is written from primitives
(reshape, permute, strided slices, a scatter-add), so it differentiates to every order.
``tinygrad_attn.functional`` re-exports every public name.

>>> F.unfold(x, kernel_size=2, stride=2)  # doctest: +SKIP  (x: (N, C, H, W) -> (N, C*4, H*W/4))
"""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np

from ..engine.composite import recorded_as
from ..engine.declare import accepts, public
from ..engine.forward_grads import differentiated, refuse_tangents
from ..engine.versions import _memory_root
from ..engine.warn import warn as _user_warn
from ..ops.conv import im2col, out_size
from ..ops.saved import ZeroDerivative, saved_for_backward
from ..tensors._tensor import TENSOR_NS, InvalidArgumentError, Tensor, where
from . import checks as _F
from .conv import _ntuple, _pad


@public(function=False, functional=True)
def assert_int_or_pair(arg: Any, arg_name: Any, message: Any) -> None:
    """PyTorch's ``F.assert_int_or_pair``: ``arg`` (of ``fold``/``unfold``) must be an int or a
    pair, else an ``AssertionError`` with ``message.format(arg_name)`` (PyTorch's reads the message only
    then, so a name or a message of another type is no error while ``arg`` is right)."""
    assert isinstance(arg, int) or len(arg) == 2, message.format(arg_name)


def _fresh(y: Tensor, x: Tensor) -> Tensor:
    """``y`` in memory of its own: PyTorch's rearrangements return new memory even where a
    view would do (a factor of 1, one group, windows that tile), so a later in-place change
    of one must not show in the other."""
    return y.clone() if _memory_root(y._data) is _memory_root(x._data) else y


def _factor(op: str, x: Tensor, r: int, what: str) -> int:
    if x.ndim < 3:
        raise InvalidArgumentError(
            f"{op} expects input to have at least 3 dimensions, but got input with {x.ndim} dimension(s)"
        )
    if int(r) < 1:
        raise InvalidArgumentError(f"{op} expects a positive {what}, but got {what}={r}")
    return int(r)


@public(function=True, functional=True)
def pixel_shuffle(input: Tensor, upscale_factor: int) -> Tensor:  # noqa: A002 - PyTorch's names
    """``(*, C r^2, H, W)`` -> ``(*, C, H r, W r)``: each group of ``r^2`` channels becomes an
    ``r x r`` block of positions (PyTorch's ``F.pixel_shuffle``)."""
    op = "pixel_shuffle"
    x = _F.tensor_arg(input, op)
    r = _factor(op, x, upscale_factor, "upscale_factor")
    *lead, c, h, w = x.shape
    if c % (r * r):
        raise InvalidArgumentError(
            f"{op} expects its input's 'channel' dimension to be divisible by the square of upscale_factor, but "
            f"input.size(-3)={c} is not divisible by {r * r}"
        )
    k = len(lead)
    t = x.reshape(*lead, c // (r * r), r, r, h, w)
    t = t.permute(*range(k), k, k + 3, k + 1, k + 4, k + 2)  # (*, C, H, r, W, r)
    return _fresh(t.reshape(*lead, c // (r * r), h * r, w * r), x)


@public(function=True, functional=True)
def pixel_unshuffle(input: Tensor, downscale_factor: int) -> Tensor:  # noqa: A002
    """``(*, C, H r, W r)`` -> ``(*, C r^2, H, W)``: the inverse of :func:`pixel_shuffle`."""
    op = "pixel_unshuffle"
    x = _F.tensor_arg(input, op)
    r = _factor(op, x, downscale_factor, "downscale_factor")
    *lead, c, h, w = x.shape
    for n, side, axis in ((h, "height", -2), (w, "width", -1)):
        if n % r:
            raise InvalidArgumentError(
                f"{op} expects {side} to be divisible by downscale_factor, but input.size({axis})={n} is not "
                f"divisible by {r}"
            )
    k = len(lead)
    t = x.reshape(*lead, c, h // r, r, w // r, r)
    t = t.permute(*range(k), k, k + 2, k + 4, k + 1, k + 3)  # (*, C, r, r, H/r, W/r)
    return _fresh(t.reshape(*lead, c * r * r, h // r, w // r), x)


@public(function=True, functional=True)
def channel_shuffle(input: Tensor, groups: int) -> Tensor:  # noqa: A002
    """``(N, C, *)`` with its channels, read as ``groups`` rows of ``C / groups``, read out by
    column: PyTorch's ``F.channel_shuffle`` (ShuffleNet's mixing of grouped convolutions)."""
    op = "channel_shuffle"
    x = _F.tensor_arg(input, op)
    if x.ndim < 3:
        raise InvalidArgumentError(f"{op}: expects input of at least 3 dimensions, got {x.ndim}")
    n, c, *rest = x.shape
    if int(groups) < 1:
        raise InvalidArgumentError(f"Number of groups to divide channels in must be positive. Value of groups:{groups}")
    if c % groups:
        raise InvalidArgumentError(
            f"Number of channels must be divisible by groups. Got {c} channels and {groups} groups."
        )
    return _fresh(x.reshape(n, groups, c // groups, *rest).transpose(1, 2).reshape(x.shape), x)


@public(function=True, functional=True)
def native_channel_shuffle(input: Tensor, groups: int) -> Tensor:  # noqa: A002
    """:func:`channel_shuffle` (PyTorch's name for its native kernel)."""
    return channel_shuffle(input, groups)


def _block_args(op: str, kernel_size: Any, dilation: Any, padding: Any, stride: Any) -> tuple:
    k = _ntuple(kernel_size, 2, "kernel_size", op)
    d = _ntuple(dilation, 2, "dilation", op)
    p = _ntuple(padding, 2, "padding", op)
    s = _ntuple(stride, 2, "stride", op)
    if min(k) < 1 or min(d) < 1 or min(s) < 1 or min(p) < 0:
        raise InvalidArgumentError(
            f"{op}: kernel_size {k}, dilation {d} and stride {s} must be positive, padding {p} not negative"
        )
    return k, d, p, s


def _blocks(op: str, spatial: tuple[int, ...], k: tuple, d: tuple, p: tuple, s: tuple) -> tuple[int, ...]:
    out = tuple(out_size(n, kk, ss, pp, pp, dd) for n, kk, ss, pp, dd in zip(spatial, k, s, p, d))
    if min(out) < 1:
        raise InvalidArgumentError(
            f"{op}: given input with spatial size {spatial}, kernel_size={k}, dilation={d}, padding={p}, calculated "
            f"shape of the array of sliding blocks as {out}, but its components must be at least one."
        )
    return out


@public(function=False, functional=True)
@accepts(("bool", "float16", "float32", "float64", "complex64", "complex128"))
def unfold(input: Tensor, kernel_size: Any, dilation: Any = 1, padding: Any = 0, stride: Any = 1) -> Tensor:  # noqa: A002
    """The sliding blocks of ``input (N, C, H, W)`` (or ``(C, H, W)``) as columns: ``(N,
    C * kh * kw, L)``, ``L`` the number of blocks, channel-major then kernel offsets row-major
    (PyTorch's ``F.unfold``, im2col)."""
    op = "unfold"
    x = _F.tensor_arg(input, op)
    if x.ndim not in (3, 4):
        raise (_F.MissingAxisError if x.ndim < 3 else InvalidArgumentError)(
            f"{op}: expected 3D or 4D (batch mode) input, but got input of shape {tuple(x.shape)}"
        )
    unbatched = x.ndim == 3
    if 0 in x.shape[0 if unbatched else 1 :]:  # (only the batch may be empty, as in PyTorch)
        raise InvalidArgumentError(f"{op}: Expected 3D or 4D (batch mode) tensor with possibly 0 batch size and "
                                   f"other non-zero dimensions for input, but got: {list(x.shape)}")  # fmt: skip
    x = x.unsqueeze(0) if unbatched else x
    k, d, p, s = _block_args(op, kernel_size, dilation, padding, stride)
    out = _blocks(op, tuple(x.shape[2:]), k, d, p, s)
    pads = tuple((pp, pp) for pp in p)
    cols = im2col(TENSOR_NS, _pad(x, pads, 0.0), k, s, d, out)  # (N, C, K, *out)
    n, c = x.shape[:2]
    y = _fresh(cols.reshape(n, c * math.prod(k), math.prod(out)), x)
    return y.squeeze(0) if unbatched else y


@public(function=False, functional=True)
def fold(input: Tensor, output_size: Any, kernel_size: Any, dilation: Any = 1, padding: Any = 0,  # noqa: A002
         stride: Any = 1) -> Tensor:  # fmt: skip
    """Columns ``(N, C * kh * kw, L)`` (or unbatched) summed back into ``(N, C, *output_size)``,
    each block onto the positions :func:`unfold` read it from (PyTorch's ``F.fold``, col2im)."""
    op = "fold"
    x = _F.tensor_arg(input, op)
    if x.ndim not in (2, 3):
        raise InvalidArgumentError(
            f"{op}: expected 2D or 3D (batch mode) input, but got input of shape {tuple(x.shape)}"
        )
    unbatched = x.ndim == 2
    x = x.unsqueeze(0) if unbatched else x
    size = _ntuple(output_size, 2, "output_size", op)
    k, d, p, s = _block_args(op, kernel_size, dilation, padding, stride)
    kk = math.prod(k)
    n, ck, blocks = x.shape
    if ck % kk:
        raise InvalidArgumentError(
            f"Expected size of input's dimension 1 to be divisible by the product of kernel_size, but got "
            f"input.size(1)={ck} and kernel_size={k}."
        )
    out = _blocks(op, size, k, d, p, s)
    if math.prod(out) != blocks:
        raise InvalidArgumentError(
            f"Given output_size={size}, kernel_size={k}, dilation={d}, padding={p}, stride={s}, expected size of "
            f"input's dimension 2 to match the calculated number of sliding blocks {out[0]} * {out[1]} = "
            f"{math.prod(out)}, but got input.size(2)={blocks}."
        )
    c = ck // kk
    padded = tuple(n_ + 2 * pp for n_, pp in zip(size, p))
    # the flat position in the padded output of each (kernel offset, block): (K * L,)
    flat = np.arange(math.prod(padded), dtype=np.int64).reshape((1, 1) + padded)
    where = im2col(np, flat, k, s, d, out).reshape(-1)
    idx = Tensor._wrap(x._dev.asarray(where), x._dev).reshape(1, 1, -1).expand(n, c, kk * blocks)
    zeros = Tensor._wrap(x._dev.ops.zeros((n, c, math.prod(padded)), dtype=x._data.dtype), x._dev)
    y = zeros.scatter_add(2, idx, x.reshape(n, c, kk * blocks)).reshape((n, c) + padded)
    y = y[(slice(None), slice(None)) + tuple(slice(pp, pp + n_) for pp, n_ in zip(p, size))]
    return y.squeeze(0) if unbatched else y


def _base_coords(n: int, align_corners: bool) -> np.ndarray:
    """PyTorch's normalised coordinates of ``n`` positions: pixel centres in ``(-1, 1)``, or
    the corner pixels at ``±1`` with ``align_corners``; one position sits at 0."""
    if n <= 1:
        return np.zeros(max(n, 0))
    c = np.linspace(-1.0, 1.0, n)
    return c if align_corners else c * (n - 1) / n


@public(function=False, functional=True)
def affine_grid(theta: Tensor, size: Any, align_corners: bool | None = None) -> Tensor:
    """The sampling grid of a batch of affine maps: ``theta (N, 2, 3)`` and ``size (N, C, H, W)``
    -> ``(N, H, W, 2)`` (``(N, 3, 4)`` and ``(N, C, D, H, W)`` -> ``(N, D, H, W, 3)``), each
    output position's normalised ``(x, y[, z])`` mapped by ``theta``: PyTorch's ``F.affine_grid``."""
    op = "affine_grid"
    theta = _F.tensor_arg(theta, op)
    if align_corners is None:
        _user_warn("Default grid_sample and affine_grid behavior has changed to align_corners=False since 1.3.0. "
                      "Please specify align_corners=True if the old behavior is desired. See the documentation of "
                      "grid_sample for details.")  # fmt: skip
        align_corners = False
    if theta.dtype.kind != "f":
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    size = tuple(int(s) for s in size)
    nd = len(size) - 2
    if nd not in (2, 3):
        raise NotImplementedError(
            f"affine_grid only supports 4D and 5D sizes, for 2D and 3D affine transforms, respectively. Got size {size}."
        )
    if theta.ndim != 3 or tuple(theta.shape[1:]) != (nd, nd + 1) or theta.shape[0] != size[0]:
        want = "Nx2x3" if nd == 2 else "Nx3x4"
        raise ValueError(
            f"Expected a batch of {nd}D affine matrices of shape {want} for size {size}. Got {tuple(theta.shape)}."
        )
    spatial = size[2:]  # (H, W) or (D, H, W); coordinates are listed x first (the last axis)
    axes = [_base_coords(n, align_corners) for n in reversed(spatial)]  # x, y[, z]
    mesh = np.meshgrid(*axes[::-1], indexing="ij")[::-1]  # each (*spatial), x first
    base = np.stack([*mesh, np.ones(spatial)], axis=-1).reshape(-1, nd + 1).astype(theta.dtype)  # (P, nd+1)
    base_t = Tensor._wrap(theta._dev.asarray(base), theta._dev)
    grid = base_t @ theta.transpose(1, 2)  # (N, P, nd)
    return grid.reshape((size[0], *spatial, nd))


def _unnormalized(coord: Tensor, n: int, align_corners: bool) -> Tensor:
    """Normalised ``coord`` in ``[-1, 1]`` -> a position along an axis of ``n`` pixels."""
    return (coord + 1.0) * ((n - 1) / 2.0) if align_corners else ((coord + 1.0) * n - 1.0) / 2.0


def _padded_position(pos: Tensor, n: int, padding_mode: str, align_corners: bool) -> Tensor:
    """A position along an axis of ``n`` pixels with ``border`` clipping and ``reflection`` mirroring,
    as PyTorch's (``zeros`` leaves it: what falls outside reads 0)."""
    if padding_mode == "reflection":
        lo, hi = (0.0, n - 1.0) if align_corners else (-0.5, n - 0.5)
        span = hi - lo
        if span <= 0:
            return pos * 0.0
        d = (pos - lo).abs()
        flips = (d.detach() / span).floor()
        extra = d - flips * span
        odd = (flips - 2.0 * (flips / 2.0).floor()) > 0.5
        pos = where(odd, hi - extra, lo + extra)
    if padding_mode in ("border", "reflection"):
        # (PyTorch's clip passes no gradient at the borders themselves, where clamp would pass it:
        # a coordinate on the edge of a one-pixel axis does not move the sample)
        p = pos.detach()
        inside = (p > 0.0) & (p < n - 1.0)
        pos = where(inside, pos, p.clamp(0.0, n - 1.0))
    return pos


def _cubic_weights(t: Tensor) -> list[Tensor]:
    """The four weights of the taps at ``-1, 0, 1, 2`` from a position ``t`` in ``[0, 1)`` past the
    second: Keys' cubic convolution with ``A = -0.75``, as PyTorch's bicubic."""
    a = -0.75

    def near(u: Tensor) -> Tensor:  # |u| <= 1
        return ((a + 2.0) * u - (a + 3.0)) * u * u + 1.0

    def far(u: Tensor) -> Tensor:  # 1 < |u| < 2
        return ((a * u - 5.0 * a) * u + 8.0 * a) * u - 4.0 * a

    return [far(t + 1.0), near(t), near(1.0 - t), far(2.0 - t)]


@public(function=False, functional=True)
@accepts("floating")
def grid_sample(input: Tensor, grid: Tensor, mode: str = "bilinear", padding_mode: str = "zeros",  # noqa: A002
                align_corners: bool | None = None) -> Tensor:  # fmt: skip
    """``input (N, C, H, W)`` read at ``grid (N, H_out, W_out, 2)``'s normalised ``(x, y)``
    positions -> ``(N, C, H_out, W_out)`` (``(N, C, D, H, W)`` at ``(N, D_out, H_out, W_out, 3)``'s
    ``(x, y, z)``): ``mode`` ``"bilinear"`` (trilinear in 3-D), ``"nearest"`` or ``"bicubic"`` (4-D
    only), ``padding_mode`` ``"zeros"``, ``"border"`` or ``"reflection"``: PyTorch's ``F.grid_sample``,
    a spatial transformer's sampler. Gradients reach the input and the grid (zeros for nearest)."""
    refuse_tangents("grid_sampler_3d" if getattr(input, "ndim", 4) == 5 else "grid_sampler_2d", input, grid)
    op = "grid_sample"
    x, g = _F.tensor_arg(input, op), _F.tensor_arg(grid, op)
    if mode not in ("bilinear", "nearest", "bicubic"):
        raise ValueError(f"nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' or 'bicubic', "
                         f"but got: '{mode}'")  # fmt: skip
    if padding_mode not in ("zeros", "border", "reflection"):
        raise ValueError(f"nn.functional.grid_sample(): expected padding_mode to be 'zeros', 'border', or "
                         f"'reflection', but got: '{padding_mode}'")  # fmt: skip
    if align_corners is None:
        _user_warn("Default grid_sample and affine_grid behavior has changed to align_corners=False since 1.3.0. "
                      "Please specify align_corners=True if the old behavior is desired. See the documentation of "
                      "grid_sample for details.")  # fmt: skip
        align_corners = False
    if x.ndim not in (4, 5):
        raise RuntimeError(f"{op}(): expected 4D or 5D input and grid with same number of dimensions, but got input "
                           f"with sizes {list(x.shape)} and grid with sizes {list(g.shape)}")  # fmt: skip
    d = x.ndim - 2
    _F.same_dtype(op, x, ("grid", g))  # (PyTorch's sampler promotes none)
    if g.ndim != x.ndim or g.shape[-1] != d or g.shape[0] != x.shape[0]:
        raise RuntimeError(
            f"{op}: expected grid of shape (N, *out, {d}) for input {tuple(x.shape)}, got {tuple(g.shape)}"
        )
    if mode == "bicubic" and d != 2:
        raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")
    with recorded_as(f"grid_sampler_{d}d", x, g):  # (PyTorch's one node: GridSampler2DBackward0)
        return _grid_sample_steps(x, g, mode, padding_mode, align_corners)


def _grid_sample_steps(x: Tensor, g: Tensor, mode: str, padding_mode: str, align_corners: bool) -> Tensor:
    """:func:`grid_sample`'s steps, its arguments checked."""
    d = x.ndim - 2
    n, c, sizes = x.shape[0], x.shape[1], tuple(x.shape[2:])  # sizes: (H, W) or (D, H, W)
    outs = tuple(g.shape[1:-1])
    m = math.prod(outs)
    flat = x.reshape(n, c, math.prod(sizes))
    strides = [math.prod(sizes[a + 1 :]) for a in range(d)]

    def at(pos: list[Tensor]) -> Tensor:
        """``x`` at integer positions, one (N, *out) tensor per spatial axis (no history), 0 outside."""
        inside = None
        idx = None
        for p, size, stride in zip(pos, sizes, strides):
            ok = (p >= 0) & (p <= size - 1)
            inside = ok if inside is None else inside & ok
            term = p.clamp(0, size - 1) * stride
            idx = term if idx is None else idx + term
        vals = flat.gather(2, idx.astype("int64").reshape(n, 1, m).expand(n, c, m)).reshape((n, c) + outs)
        return where(inside.unsqueeze(1), vals, 0.0)

    # grid coordinates come x first (the last axis): spatial axis a reads coordinate d - 1 - a
    raw = [_unnormalized(g[..., d - 1 - a], sizes[a], align_corners) for a in range(d)]
    if mode == "bicubic":  # (16 taps around the unpadded position; each tap's position padded on its own)
        (iy, ix), (h, w) = raw, sizes
        y0, x0 = iy.detach().floor(), ix.detach().floor()
        wy, wx = _cubic_weights(iy - y0), _cubic_weights(ix - x0)  # (the weights carry the grid's gradient)
        out = None
        for i in range(4):
            py = _padded_position(y0 + float(i - 1), h, padding_mode, align_corners)
            row = None
            for j in range(4):
                px = _padded_position(x0 + float(j - 1), w, padding_mode, align_corners)
                term = at([py, px]) * wx[j].unsqueeze(1)
                row = term if row is None else row + term
            term = row * wy[i].unsqueeze(1)
            out = term if out is None else out + term
        return saved_for_backward(out, x, g)  # (PyTorch's keeps the input and the grid)
    pos = [_padded_position(r, size, padding_mode, align_corners) for r, size in zip(raw, sizes)]
    if mode == "nearest":  # (the nearest pixel, ties to even, as PyTorch's nearbyint)
        out = at([p.detach().round() for p in pos])
        if differentiated(g):  # (PyTorch's gradient of the grid there: zeros, not none)
            out = ZeroDerivative.apply(out, g)
        return saved_for_backward(out, x, g)  # (PyTorch's keeps both)
    lows = [p.detach().floor() for p in pos]
    highs = [p - lo for p, lo in zip(pos, lows)]  # (N, *out): the weights carry the gradient to the grid
    out = None
    for corner in itertools.product((0, 1), repeat=d):
        weight = None
        for a, k in enumerate(corner):
            wa = highs[a] if k else 1.0 - highs[a]
            weight = wa if weight is None else weight * wa
        term = at([lo + float(k) for lo, k in zip(lows, corner)]) * weight.unsqueeze(1)
        out = term if out is None else out + term
    return saved_for_backward(out, x, g)  # (PyTorch's keeps the input and the grid)
