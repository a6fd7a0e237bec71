"""Fused convolution and pooling: im2col (windows as strided slices) and one matmul.

These are the fast paths of composites defined in :mod:`tinygrad_attn.functional_conv`
from primitives; ``recompute`` calls those definitions, and the tests hold the two
equal. Every op works on ``(N, C, *spatial)`` arrays with any number of spatial axes.

The window tensor ``cols`` of shape ``(N, C, K, *out)`` holds, for each of the ``K``
kernel offsets, the input positions that offset meets at every output position. It is
built with one strided slice per kernel offset (``K`` slices, never a loop over output
positions), or, where windows tile the input (stride == kernel, no dilation: a ViT's
patch embedding), with one reshape and permute. Its adjoint, :func:`col2im`, sums the
slices back.
"""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np

from ..engine.composite import FusedFunction
from ..engine.layout import in_format_of


def out_size(n: int, k: int, s: int, lo: int, hi: int, d: int) -> int:
    """Output length of a window of ``k`` (dilation ``d``) sliding by ``s`` over ``lo + n + hi``."""
    return (n + lo + hi - d * (k - 1) - 1) // s + 1


def _tiles(ks, stride, dilation) -> bool:
    return all(k == s for k, s in zip(ks, stride)) and all(d == 1 for d in dilation)


def pad_array(ns, x, pads, value=0.0):
    """``x`` (N, C, *S) with ``(lo, hi)`` of ``value`` around each spatial axis."""
    if not any(lo or hi for lo, hi in pads):
        return x
    shape = tuple(x.shape[:2]) + tuple(n + lo + hi for n, (lo, hi) in zip(x.shape[2:], pads))
    out = ns.zeros(shape, x.dtype)
    if value != 0.0:
        out = out + value
    out[(slice(None), slice(None)) + tuple(slice(lo, lo + n) for n, (lo, _) in zip(x.shape[2:], pads))] = x
    return out


def _offset_keys(ks, stride, dilation, out):
    """One slice key per kernel offset (in row-major kernel order): the positions it meets."""
    for offs in itertools.product(*(range(k) for k in ks)):
        yield (slice(None), slice(None)) + tuple(
            slice(i * d, i * d + s * (o - 1) + 1, s) for i, s, d, o in zip(offs, stride, dilation, out)
        )


def im2col(ns, xpad, ks, stride, dilation, out):
    """The windows of the padded input ``xpad`` (N, C, *S) -> (N, C, K, *out)."""
    n, c = xpad.shape[:2]
    nd = len(ks)
    if _tiles(ks, stride, dilation):  # windows tile the input: one reshape and one permute
        crop = xpad[(slice(None), slice(None)) + tuple(slice(0, o * k) for o, k in zip(out, ks))]
        split = (n, c) + tuple(v for o, k in zip(out, ks) for v in (o, k))  # (N, C, O1, k1, O2, k2, ...)
        t = ns.reshape(crop, split)
        perm = (0, 1) + tuple(3 + 2 * i for i in range(nd)) + tuple(2 + 2 * i for i in range(nd))
        t = ns.permute_dims(t, perm)  # (N, C, k1, k2, ..., O1, O2, ...)
        return ns.reshape(t, (n, c, math.prod(ks)) + tuple(out))
    return ns.stack([xpad[key] for key in _offset_keys(ks, stride, dilation, out)], axis=2)


def col2im(ns, cols, padded_shape, ks, stride, dilation, out):
    """The adjoint of :func:`im2col`: ``cols`` (N, C, K, *out) summed back into an array of
    ``padded_shape`` (N, C, *S)."""
    n, c = padded_shape[:2]
    nd = len(ks)
    if _tiles(ks, stride, dilation):
        split = (n, c) + tuple(ks) + tuple(out)
        t = ns.reshape(cols, split)
        perm = (0, 1) + tuple(v for i in range(nd) for v in (2 + nd + i, 2 + i))  # (N, C, O1, k1, O2, k2, ...)
        t = ns.reshape(ns.permute_dims(t, perm), (n, c) + tuple(o * k for o, k in zip(out, ks)))
        if tuple(t.shape) == tuple(padded_shape):
            return t
        full = ns.zeros(tuple(padded_shape), cols.dtype)
        full[(slice(None), slice(None)) + tuple(slice(0, o * k) for o, k in zip(out, ks))] = t
        return full
    full = ns.zeros(tuple(padded_shape), cols.dtype)
    for i, key in enumerate(_offset_keys(ks, stride, dilation, out)):
        full[key] = full[key] + cols[:, :, i, ...]
    return full


def crop_array(x, pads):
    """Undo :func:`pad_array`."""
    if not any(lo or hi for lo, hi in pads):
        return x
    return x[(slice(None), slice(None)) + tuple(slice(lo, n - hi) for n, (lo, hi) in zip(x.shape[2:], pads))]


class Geometry(tuple):
    """``(kernel, stride, pads, dilation, out)``, each a tuple over the spatial axes."""

    __slots__ = ()

    @property
    def kernel(self):
        return self[0]

    @property
    def stride(self):
        return self[1]

    @property
    def pads(self):
        return self[2]

    @property
    def dilation(self):
        return self[3]

    @property
    def out(self):
        return self[4]


def describe_geometry(geo) -> str:
    """The pictures' line for a window geometry: the kernel, then what is not the default."""
    parts = [f"kernel {geo.kernel}"]
    if any(s != 1 for s in geo.stride):
        parts.append(f"stride {geo.stride}")
    if any(lo or hi for lo, hi in geo.pads):
        parts.append(f"padding {geo.pads}")
    if any(d != 1 for d in geo.dilation):
        parts.append(f"dilation {geo.dilation}")
    return " · ".join(parts)


def _windows(ns, x, geo, value=0.0):
    xpad = pad_array(ns, x, geo.pads, value)
    return im2col(ns, xpad, geo.kernel, geo.stride, geo.dilation, geo.out), tuple(xpad.shape)


def _unwindows(ns, gcols, padded_shape, geo):
    full = col2im(ns, gcols, padded_shape, geo.kernel, geo.stride, geo.dilation, geo.out)
    return crop_array(full, geo.pads)


class Convolution(FusedFunction):
    """``conv(x, weight) + bias`` in one node: ``args = (geometry, groups)``; bias may be None.

    Forward: windows ``(N, G, C/G * K, L)`` and one batched product with the weight
    ``(G, O/G, C/G * K)``. Backward: the weight's gradient is a product with the windows
    (kept from forward), the input's is the weight's transpose times the output
    gradient, summed back by :func:`col2im`.
    """

    __slots__ = ()
    operands = ("input", "weight", "bias")
    name = "conv"
    # (all inputs: the windows in ctx may be a view of the input, for 1x1 kernels, so the
    # input's in-place changes must be caught by the version check)
    reads_output = False

    def keeps_input(self, i: int) -> bool:
        # the bias's gradient is a sum of g, which reads none of its values: PyTorch's does
        # not keep it either, so it may change in place before the backward
        return i != 2

    def forward(self, ns, x, w, b):
        geo, groups = self.args
        cols, padded = _windows(ns, x, geo)  # (N, C, K, *out)
        n, c = x.shape[:2]
        co = w.shape[0]
        lsize = math.prod(geo.out)
        cols = ns.reshape(cols, (n, groups, (c // groups) * math.prod(geo.kernel), lsize))  # (N, G, C/G*K, L)
        wm = ns.reshape(w, (groups, co // groups, math.prod(w.shape[1:])))  # (G, O/G, C/G*K)
        y = ns.reshape(ns.matmul(wm, cols), (n, co) + tuple(geo.out))  # (N, O, *out)
        if b is not None:
            y = y + ns.reshape(b, (co,) + (1,) * len(geo.out))
        self.ctx = (cols, padded)
        return in_format_of(y, x)

    def backward_arrays(self, g, ns, inputs, out):
        _, w, b = inputs
        geo, groups = self.args
        cols, padded = self.ctx
        if getattr(g.dtype, "kind", None) == "c":  # (the engine conjugates the inputs, not the windows kept here)
            cols = ns.device.xp.conj(cols)
        n, co = g.shape[:2]
        gm = ns.reshape(g, (n, groups, co // groups, math.prod(g.shape[2:])))  # (N, G, O/G, L)
        gw = ns.sum(ns.matmul(gm, ns.matrix_transpose(cols)), axis=0)  # (G, O/G, C/G*K)
        gw = ns.reshape(gw, tuple(w.shape))
        wm = ns.reshape(w, (groups, co // groups, math.prod(w.shape[1:])))
        gcols = ns.matmul(ns.matrix_transpose(wm), gm)  # (N, G, C/G*K, L)
        gcols = ns.reshape(gcols, (n, padded[1], math.prod(geo.kernel)) + tuple(geo.out))
        gx = _unwindows(ns, gcols, padded, geo)
        gb = ns.sum(g, axis=(0,) + tuple(range(2, g.ndim))) if b is not None else None
        return gx, gw, gb

    def recompute(self, x, w, b):
        geo, groups = self.args
        return self.definition(x, w, b, geo, groups)

    def describe_args(self, args):
        geo, groups = args
        return describe_geometry(geo) + (f" · groups {groups}" if groups != 1 else "")


class Convolution1d(Convolution):
    __slots__ = ()
    name = "conv1d"


class Convolution2d(Convolution):
    __slots__ = ()
    name = "conv2d"


class Convolution3d(Convolution):
    __slots__ = ()
    name = "conv3d"


def lowest(dtype: Any) -> float | int:
    """What a max pool's padding counts as: -inf, or the least integer of an integer dtype."""
    dt = np.dtype(str(dtype).rsplit(".", 1)[-1]) if not isinstance(dtype, np.dtype) else dtype
    return int(np.iinfo(dt).min) if dt.kind in "iu" else -math.inf


class MaxPooling(FusedFunction):
    """The max of each window (padding is -inf) in one node; ``args`` is the geometry.
    The gradient goes to the first maximum of each window, as PyTorch's."""

    __slots__ = ()
    name = "max_pool"
    keep = (0,)  # (not read: the indices are in ctx; kept as PyTorch's keeps it, so the version check follows)
    reads_output = False

    def forward(self, ns, x):
        geo = self.args
        cols, padded = _windows(ns, x, geo, lowest(x.dtype))  # (N, C, K, *out)
        self.ctx = (ns.argmax(cols, axis=2), padded)
        return in_format_of(ns.max(cols, axis=2), x)

    def backward_arrays(self, g, ns, inputs, out):
        geo = self.args
        idx, padded = self.ctx
        k = math.prod(geo.kernel)
        offsets = ns.reshape(ns.device.asarray(_host_arange(k)), (1, 1, k) + (1,) * len(geo.out))
        hit = ns.astype(ns.expand_dims(idx, axis=2) == ns.astype(offsets, idx.dtype), g.dtype)  # (N, C, K, *out)
        return (_unwindows(ns, hit * ns.expand_dims(g, axis=2), padded, geo),)

    def recompute(self, x):
        return self.definition(x, self.args)

    def describe_args(self, args):
        return describe_geometry(args)


class MaxPooling1d(MaxPooling):
    __slots__ = ()
    name = "max_pool1d"


class MaxPooling2d(MaxPooling):
    __slots__ = ()
    name = "max_pool2d"


class MaxPooling3d(MaxPooling):
    __slots__ = ()
    name = "max_pool3d"


def _host_arange(k: int):
    import numpy as np  # noqa: PLC0415 - a host constant, moved to the device by the caller

    return np.arange(k)


class AveragePooling(FusedFunction):
    """The mean of each window in one node: ``args = (geometry, scale)``, ``scale`` the
    reciprocal divisor (a number, or an array over the output positions)."""

    __slots__ = ()
    name = "avg_pool"
    keep = (0,)  # (not read; kept as PyTorch's keeps it, so the version check follows)
    reads_output = False

    def forward(self, ns, x):
        geo, scale = self.args
        cols, padded = _windows(ns, x, geo)
        self.ctx = (padded, x.dtype)
        return in_format_of(ns.astype(ns.sum(cols, axis=2) * scale, x.dtype), x)

    def backward_arrays(self, g, ns, inputs, out):
        geo, scale = self.args
        padded, dtype = self.ctx
        k = math.prod(geo.kernel)
        gs = ns.astype(ns.expand_dims(g * scale, axis=2), g.dtype)  # (N, C, 1, *out)
        gcols = ns.broadcast_to(gs, tuple(g.shape[:2]) + (k,) + tuple(g.shape[2:]))
        return (_unwindows(ns, gcols, padded, geo),)

    def recompute(self, x):
        geo, scale = self.args
        return self.definition(x, geo, scale)

    def describe_args(self, args):
        return describe_geometry(args[0])


class AveragePooling2d(AveragePooling):
    __slots__ = ()
    name = "avg_pool2d"


class AveragePooling1d(AveragePooling):
    __slots__ = ()
    name = "avg_pool1d"


class AveragePooling3d(AveragePooling):
    __slots__ = ()
    name = "avg_pool3d"


class AdaptiveAveragePooling2d(FusedFunction):
    """``A_h @ x @ A_w.T`` in one node, ``A`` the (out, in) averaging matrices (``args``, on
    the device): each output averages the inputs of its adaptive window, as PyTorch's."""

    __slots__ = ()
    name = "adaptive_avg_pool2d"
    keep = ()
    reads_output = False

    def keeps_input(self, i: int) -> bool:
        # Not read, but kept as PyTorch's keeps it (so the version check follows), except
        # for a (1, 1) output, which PyTorch computes as a mean that keeps nothing
        ah, aw = self.args
        return ah.shape[0] * aw.shape[0] != 1

    def forward(self, ns, x):
        ah, aw = self.args
        return in_format_of(ns.matmul(ns.matmul(ah, x), ns.matrix_transpose(aw)), x)  # (N, C, OH, OW)

    def backward_arrays(self, g, ns, inputs, out):
        ah, aw = self.args
        return (ns.matmul(ns.matmul(ns.matrix_transpose(ah), g), aw),)

    def recompute(self, x):
        return self.definition(x, *self.args)

    def describe_args(self, args):
        ah, aw = args
        return f"output ({ah.shape[0]}, {aw.shape[0]})"
