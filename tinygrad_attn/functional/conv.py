"""Convolution, pooling, batch normalisation and the bilinear map, with PyTorch's signatures.

Each convolution and pooling function is a composite: its definition here is written in
primitive ops (pad, strided slices stacked into windows, reshape, matmul, max, sum), and
:mod:`tinygrad_attn.ops.conv` holds its one-node fast path (im2col and one matmul) that
the tests keep equal to it. ``tinygrad_attn.functional`` re-exports every public name.

>>> F.conv2d(x, w, b, stride=2, padding=1)  # doctest: +SKIP  (x: (N, C, H, W), w: (O, C, kh, kw))
"""

from __future__ import annotations

import contextlib
import itertools
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..engine.arguments import int_or_ints
from ..engine.arguments import output_size as _output_size_arg
from ..engine.composite import composite, computed_for, recorded_as
from ..engine.declare import accepts, check_dtype, public
from ..engine.forward_grads import differentiated
from ..engine.layout import result_in_format_of
from ..engine.switches import is_grad_enabled, no_grad
from ..ops import conv as _conv
from ..ops.alias import RefusedDerivative
from ..ops.conv import Geometry, im2col, lowest, out_size
from ..ops.saved import saved_for_backward, with_gradient_of
from ..tensors._tensor import TENSOR_NS, InvalidArgumentError, Tensor, cat
from . import checks as _F


# -- arguments -------------------------------------------------------------------------
def _ntuple(value: Any, n: int, what: str, op: str) -> tuple[int, ...]:
    value = int_or_ints(value)
    if isinstance(value, int):
        return (value,) * n
    if isinstance(value, Sequence) and len(value) == 1 and n > 1:
        return (int(value[0]),) * n
    if isinstance(value, Sequence) and len(value) == n:
        return tuple(int(v) for v in value)
    if not isinstance(value, Sequence) or isinstance(value, str):  # (PyTorch's parser: int[])
        raise TypeError(f"{op}(): argument '{what}' must be tuple of ints, not {type(value).__name__}")
    raise InvalidArgumentError(f"{op}: {what} must be an int or a tuple of {n} ints, got {value!r}")


def _check_input(op: str, nd: int, x: Any) -> tuple[Tensor, bool]:
    """``x`` with a batch axis, and whether it had none (PyTorch takes unbatched input)."""
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}: input must be a Tensor, got {type(x).__name__}")
    if x.ndim not in (nd + 1, nd + 2):
        raise (_F.MissingAxisError if x.ndim < nd + 1 else InvalidArgumentError)(
            f"{op}: expected a {nd + 1}-D (unbatched) or {nd + 2}-D (batched) input, got shape {tuple(x.shape)}"
        )
    return (x.unsqueeze(0), True) if x.ndim == nd + 1 else (x, False)


def _geometry(op: str, spatial: tuple[int, ...], kernel: tuple[int, ...], stride: tuple[int, ...],
              pads: tuple[tuple[int, int], ...], dilation: tuple[int, ...]) -> Geometry:  # fmt: skip
    if any(s < 1 for s in stride) or any(d < 1 for d in dilation) or any(k < 1 for k in kernel):
        raise InvalidArgumentError(
            f"{op}: kernel size {kernel}, stride {stride} and dilation {dilation} must be positive"
        )
    if any(lo < 0 or hi < 0 for lo, hi in pads):
        raise InvalidArgumentError(f"{op}: negative padding {pads} is not supported")
    out = tuple(out_size(n, k, s, lo, hi, d) for n, k, s, (lo, hi), d in zip(spatial, kernel, stride, pads, dilation))
    if any(o < 1 for o in out):
        raise InvalidArgumentError(
            f"{op}: input of spatial size {spatial} padded by {pads} is smaller than the kernel {kernel} "
            f"(dilation {dilation}); the output would be {out}"
        )
    return Geometry((kernel, stride, pads, dilation, out))


# -- convolution -----------------------------------------------------------------------
def _empty_positions(op: str, x: Tensor) -> None:
    """PyTorch's convolutions take an empty batch or no channels, not an empty spatial axis."""
    if x.shape[0] and x.shape[1] and 0 in x.shape[2:]:
        raise InvalidArgumentError(
            f"{op}: Only zero batch or zero channel inputs are supported, but got input shape: {list(x.shape)}"
        )


def _conv_setup(op: str, nd: int, x: Any, w: Tensor, b: Tensor | None, stride: Any, padding: Any, dilation: Any,
                groups: int) -> tuple[Tensor, bool, Geometry, int]:  # fmt: skip
    x, unbatched = _check_input(op, nd, x)
    _empty_positions(op, x)
    _F.tensor_operand(w, op, "weight", 2)
    if b is not None:
        _F.tensor_operand(b, op, "bias", 3)
    if w.ndim != nd + 2:
        raise InvalidArgumentError(
            f"{op}: weight must be {nd + 2}-D (out, in/groups, *kernel), got shape {tuple(w.shape)}"
        )
    groups = int(groups)
    c, co = x.shape[1], w.shape[0]
    if groups < 1 or co % groups or w.shape[1] * groups != c:
        raise InvalidArgumentError(
            f"{op}: input {tuple(x.shape)} with {c} channels, weight {tuple(w.shape)} and groups={groups} do not fit: need "
            f"weight (out, in/groups, *kernel) with out divisible by groups"
        )
    if b is not None and b.shape != (co,):
        raise InvalidArgumentError(f"{op}: bias has shape {tuple(b.shape)}, expected ({co},)")
    if x._dev is not w._dev or (b is not None and b._dev is not w._dev):
        raise RuntimeError(f"{op}: input on {x.device}, weight on {w.device}; move them to one device")
    if x.dtype != w.dtype or (b is not None and b.dtype != w.dtype):
        raise RuntimeError(f"{op}: input ({x.dtype}), weight ({w.dtype}) and bias ({None if b is None else b.dtype}) "
                           "should be the same dtype")  # fmt: skip
    kernel = tuple(w.shape[2:])
    stride = _ntuple(stride, nd, "stride", op)
    dilation = _ntuple(dilation, nd, "dilation", op)
    if isinstance(padding, str):
        if padding == "valid":
            pads = ((0, 0),) * nd
        elif padding == "same":
            if any(s != 1 for s in stride):
                raise InvalidArgumentError(f"{op}: padding='same' is not supported for strided convolutions")
            total = [d * (k - 1) for d, k in zip(dilation, kernel)]
            pads = tuple((t // 2, t - t // 2) for t in total)  # the odd one on the right, as PyTorch
            if any(lo != hi for lo, hi in pads):
                # As PyTorch: the odd one padded onto a copy of the input first, the rest by the
                # convolution, which so keeps the copy (changing the input in place after it is fine)
                x = _pad(x, tuple((0, hi - lo) for lo, hi in pads), 0.0)
                pads = tuple((lo, lo) for lo, _ in pads)
        else:
            raise InvalidArgumentError(f"{op}: padding must be 'valid', 'same', an int or a tuple, got {padding!r}")
    else:
        pads = tuple((p, p) for p in _ntuple(padding, nd, "padding", op))
    return x, unbatched, _geometry(op, tuple(x.shape[2:]), kernel, stride, pads, dilation), groups


def _pad(x: Tensor, pads: tuple[tuple[int, int], ...], value: float) -> Tensor:
    for i, (lo, hi) in enumerate(pads):
        if lo or hi:
            x = _F._pad_constant(x, 2 + i, lo, hi, value)
    return x


def _windows(x: Tensor, geo: Geometry, value: float = 0.0) -> Tensor:
    """(N, C, *S) -> (N, C, K, *out): the input each kernel offset meets, in primitives."""
    return im2col(TENSOR_NS, _pad(x, geo.pads, value), geo.kernel, geo.stride, geo.dilation, geo.out)


def conv_reference(x: Tensor, w: Tensor, b: Tensor | None, geo: Geometry, groups: int) -> Tensor:
    """The convolution in primitives: windows, one matmul with the weight, bias."""
    n, c = x.shape[:2]
    co = w.shape[0]
    cols = _windows(x, geo).reshape(
        n, groups, (c // groups) * math.prod(geo.kernel), math.prod(geo.out)
    )  # (N, G, C/G*K, L)
    y = (w.reshape(groups, co // groups, -1) @ cols).reshape((n, co) + tuple(geo.out))  # (N, O, *out)
    return y + b.reshape((co,) + (1,) * len(geo.out)) if b is not None else y


def _conv_composite(nd: int, name: str, fused_cls: type) -> Any:
    def fused(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Any = 1, padding: Any = 0,
              dilation: Any = 1, groups: int = 1) -> Tensor:  # fmt: skip
        x, unbatched, geo, groups = _conv_setup(name, nd, input, weight, bias, stride, padding, dilation, groups)
        y = fused_cls.apply(x, weight, bias, args=(geo, groups))
        return y.squeeze(0) if unbatched else y

    def reference(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Any = 1, padding: Any = 0,
                  dilation: Any = 1, groups: int = 1) -> Tensor:  # fmt: skip
        x, unbatched, geo, groups = _conv_setup(name, nd, input, weight, bias, stride, padding, dilation, groups)
        y = conv_reference(x, weight, bias, geo, groups)
        return y.squeeze(0) if unbatched else y

    return composite(name, fused)(reference)


conv1d = public(_conv_composite(1, "conv1d", _conv.Convolution1d), name="conv1d", functional=True, dtypes="numeric")
conv1d.__doc__ = """``input (N, C, L)`` convolved with ``weight (O, C/groups, k)`` -> ``(N, O, L_out)``.

PyTorch's ``F.conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1)``;
``padding`` is an int, a tuple, ``"valid"`` or ``"same"``; unbatched ``(C, L)`` input works too.
"""
conv2d = public(_conv_composite(2, "conv2d", _conv.Convolution2d), name="conv2d", functional=True, dtypes="numeric")
conv2d.__doc__ = """``input (N, C, H, W)`` convolved with ``weight (O, C/groups, kh, kw)`` -> ``(N, O, H_out, W_out)``.

PyTorch's ``F.conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1)``;
``padding`` is an int, a pair, ``"valid"`` or ``"same"``; unbatched ``(C, H, W)`` input works too.
Windows that tile the input (``stride == kernel_size``, a ViT's patch embedding) take a
reshape-and-permute path with no copies per kernel offset.
"""
conv3d = public(_conv_composite(3, "conv3d", _conv.Convolution3d), name="conv3d", functional=True, dtypes="numeric")
conv3d.__doc__ = """``input (N, C, D, H, W)`` convolved with ``weight (O, C/groups, kd, kh, kw)``: PyTorch's
``F.conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1)`` (video, volumes)."""


# -- transposed convolution --------------------------------------------------------------
def _spread(x: Tensor, stride: tuple[int, ...]) -> Tensor:
    """``x`` with ``s - 1`` zeros between neighbours along each spatial axis (``stride``)."""
    for i, s in enumerate(stride):  # s - 1 zeros after each input, the last ones cut
        if s > 1:
            axis = 2 + i
            n = x.shape[axis]
            z = _F._pad_constant(x.unsqueeze(axis + 1), axis + 1, 0, s - 1, 0.0)
            x = z.reshape(x.shape[:axis] + (n * s,) + x.shape[axis + 1 :])
            x = x[(slice(None),) * axis + (slice(0, (n - 1) * s + 1),)]
    return x


def _conv_transpose_half(x: Tensor, weight: Tensor, groups: int, stride: tuple, pad: tuple, dilation: tuple,
                         out: tuple) -> Tensor:  # fmt: skip
    """float16 ``conv_transpose`` as PyTorch's CPU computes it: each input pixel times the kernel, summed over
    the input channels in float32 and rounded to float16 (a gemm), then the kernel offsets' contributions
    added into each output pixel one by one in float16, in the kernel's order (col2im)."""
    (n, cin), spatial = x.shape[:2], x.shape[2:]
    cog, kernel = weight.shape[1], tuple(weight.shape[2:])
    cg, single = cin // groups, np.dtype(np.float32)
    cols = []
    for g in range(groups):
        w = weight[g * cg : (g + 1) * cg].astype(single).reshape(cg, -1)  # (cin/g, cog * kernel)
        xg = x[:, g * cg : (g + 1) * cg].astype(single).reshape(n, cg, math.prod(x.shape[2:]))  # (n, cin/g, pixels)
        cols.append((w.transpose(0, 1) @ xg).astype(np.float16).reshape((n, cog) + kernel + spatial))
    col = cols[0] if groups == 1 else cat(cols, 1)
    y = None
    for at in itertools.product(*(range(k) for k in kernel)):  # (the kernel's order: col2im's)
        part = _spread(col[(slice(None), slice(None), *at)], stride)
        for i, (k, p, d) in enumerate(zip(at, pad, dilation)):
            before = k * d - p
            part = _F._pad_constant(part, 2 + i, before, out[i] - before - part.shape[2 + i], 0.0)
        y = part + 0.0 if y is None else y + part  # (+ 0.0: into zeros, as col2im's output starts)
    return y


def _conv_transpose(op: str, nd: int, input: Any, weight: Tensor, bias: Tensor | None, stride: Any, padding: Any,
                    output_padding: Any, groups: int, dilation: Any) -> Tensor:  # fmt: skip
    """The adjoint of a convolution, in primitives: zeros between the inputs (stride), the
    kernel's reach minus ``padding`` around them, then a stride-1 convolution with the
    kernel flipped and its in/out channels swapped within each group."""
    x, unbatched = _check_input(op, nd, input)
    _empty_positions(op, x)
    if not isinstance(weight, Tensor) or weight.ndim != nd + 2:
        raise InvalidArgumentError(
            f"{op}: weight must be {nd + 2}-D (in, out/groups, *kernel), got shape {getattr(weight, 'shape', None)}"
        )
    groups = int(groups)
    cin, cog, kernel = weight.shape[0], weight.shape[1], tuple(weight.shape[2:])
    if groups < 1 or cin % groups or x.shape[1] != cin:
        raise InvalidArgumentError(
            f"{op}: input {tuple(x.shape)} with {x.shape[1]} channels, weight {tuple(weight.shape)} and groups={groups} do not fit: "
            f"need weight (in, out/groups, *kernel) with in divisible by groups"
        )
    if bias is not None and bias.shape != (cog * groups,):
        raise InvalidArgumentError(f"{op}: bias has shape {tuple(bias.shape)}, expected ({cog * groups},)")
    if bias is not None and bias.dtype != x.dtype:  # (PyTorch's adds the bias in the input's dtype)
        if bias.dtype.kind == "f" and x.dtype.kind != "f":
            raise RuntimeError(f"{op}: result type {bias.dtype} can't be cast to the desired output type {x.dtype} "
                               "(a float bias for an integer input)")  # fmt: skip
        bias = bias.to(x.dtype)
    stride = _ntuple(stride, nd, "stride", op)
    pad = _ntuple(padding, nd, "padding", op)
    outpad = _ntuple(output_padding, nd, "output_padding", op)
    dilation = _ntuple(dilation, nd, "dilation", op)
    if any(v < 1 for v in stride + dilation) or any(v < 0 for v in pad):
        raise InvalidArgumentError(
            f"{op}: stride {stride} and dilation {dilation} must be positive, padding {pad} not negative"
        )
    if any(o >= max(s, d) for o, s, d in zip(outpad, stride, dilation)):
        raise InvalidArgumentError(
            f"{op}: output_padding {outpad} must be smaller than either stride {stride} or dilation {dilation}"
        )
    out = tuple((n - 1) * s - 2 * p + d * (k - 1) + o + 1
                for n, s, p, d, k, o in zip(x.shape[2:], stride, pad, dilation, kernel, outpad))  # fmt: skip
    # (PyTorch's reference kernel refuses an empty output but for an empty batch, whose result is empty; its
    # oneDNN kernel, which it picks for some float32 batches, returns an empty result instead)
    if any(v < 0 for v in out) or (0 in out and x.shape[0]):
        raise InvalidArgumentError(
            f"{op}: input {tuple(x.shape)} with weight {tuple(weight.shape)}, stride {stride} and padding {pad} gives an "
            f"empty output {out}"
        )
    with recorded_as("convolution", x, weight, bias):  # (PyTorch's one ConvolutionBackward0, transposed=True)
        y = saved_for_backward(_transposed(x, weight, bias, groups, stride, pad, outpad, dilation, out), x, weight)
    return y.squeeze(0) if unbatched else y  # (an unbatched input: unsqueeze, the node, squeeze, as PyTorch's)


def _transposed(x: Tensor, weight: Tensor, bias: Tensor | None, groups: int, stride: tuple, pad: tuple,
                outpad: tuple, dilation: tuple, out: tuple) -> Tensor:  # fmt: skip
    """``conv_transpose`` of a batched input whose arguments are checked, in primitives."""
    nd, cin, cog, kernel = x.ndim - 2, weight.shape[0], weight.shape[1], tuple(weight.shape[2:])
    if 0 in out:  # (an empty batch: on the graph of the input and the weight, whose gradients are zeros)
        zero = x.reshape(-1)[:0].sum() + weight.reshape(-1)[:0].sum()
        y = zero.expand((x.shape[0], cog * groups) + out).contiguous()
        if bias is not None:
            y = y + bias.reshape((-1,) + (1,) * nd)
        return y
    if x.dtype == np.float16 and weight.dtype == np.float16:
        y = _conv_transpose_half(x, weight, groups, stride, pad, dilation, out)
        if bias is not None:
            y = y + bias.reshape((-1,) + (1,) * nd)
        return y
    x = _spread(x, stride)
    for i, (k, p, o, d) in enumerate(zip(kernel, pad, outpad, dilation)):
        reach = d * (k - 1)
        x = _F._pad_constant(x, 2 + i, reach - p, reach - p + o, 0.0)  # (negative: a crop)
    w = weight.reshape((groups, cin // groups, cog) + kernel).transpose(1, 2)
    w = w.reshape((groups * cog, cin // groups) + kernel).flip(tuple(range(2, nd + 2)))
    conv = (conv1d, conv2d, conv3d)[nd - 1]
    y = conv(x, w, None, 1, 0, dilation, groups)
    if bias is not None:  # (added after: its backward reads nothing of the bias, as PyTorch's)
        y = y + bias.reshape((-1,) + (1,) * nd)
    return y


@public(functional=True)
@public(dtypes=("int64", "float16", "float32", "float64", "complex64", "complex128"))
def conv_transpose1d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Any = 1, padding: Any = 0,
                     output_padding: Any = 0, groups: int = 1, dilation: Any = 1) -> Tensor:  # fmt: skip
    """PyTorch's ``F.conv_transpose1d``: ``input (N, C_in, L)`` and ``weight (C_in,
    C_out/groups, k)`` -> ``(N, C_out, (L-1)*stride - 2*padding + dilation*(k-1) + output_padding + 1)``."""
    return _conv_transpose("conv_transpose1d", 1, input, weight, bias, stride, padding, output_padding, groups,
                           dilation)  # fmt: skip


@public(functional=True)
@public(dtypes=("int64", "float16", "float32", "float64", "complex64", "complex128"))
def conv_transpose2d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Any = 1, padding: Any = 0,
                     output_padding: Any = 0, groups: int = 1, dilation: Any = 1) -> Tensor:  # fmt: skip
    """PyTorch's ``F.conv_transpose2d``: the gradient of ``conv2d`` with respect to its
    input, as a layer (upsampling decoders, GAN generators); ``weight (C_in, C_out/groups, kh, kw)``."""
    return _conv_transpose("conv_transpose2d", 2, input, weight, bias, stride, padding, output_padding, groups,
                           dilation)  # fmt: skip


@public(functional=True)
@public(dtypes=("int64", "float16", "float32", "float64", "complex64", "complex128"))
def conv_transpose3d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Any = 1, padding: Any = 0,
                     output_padding: Any = 0, groups: int = 1, dilation: Any = 1) -> Tensor:  # fmt: skip
    """PyTorch's ``F.conv_transpose3d``: ``conv_transpose2d`` over ``(N, C_in, D, H, W)`` with
    ``weight (C_in, C_out/groups, kd, kh, kw)``."""
    return _conv_transpose("conv_transpose3d", 3, input, weight, bias, stride, padding, output_padding, groups,
                           dilation)  # fmt: skip


# -- pooling ---------------------------------------------------------------------------
#: PyTorch's pooling kernels: max pooling of every dtype but bool, average pooling of int64 and the floats
#: (avg_pool3d without float16)
_MAX_POOL_DTYPES = ("uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64")
_POOL_DTYPES = {
    **{f"max_pool{n}d": _MAX_POOL_DTYPES for n in (1, 2, 3)},
    **{f"avg_pool{n}d": ("int64", "float16", "float32", "float64") for n in (1, 2)},
    "avg_pool3d": ("int64", "float32", "float64"),
}


def _pool_setup(op: str, nd: int, x: Any, kernel_size: Any, stride: Any, padding: Any, dilation: Any,
                ceil_mode: bool) -> tuple[Tensor, bool, Geometry]:  # fmt: skip
    x, unbatched = _check_input(op, nd, x)
    if 0 in x.shape[1:]:  # (only the batch may be empty, as in PyTorch)
        raise RuntimeError(f"{op}: Expected input's non-batch dimensions to have positive length, got shape "
                           f"{tuple(x.shape[1:]) if unbatched else x.shape}")  # fmt: skip
    check_dtype(op, x, _POOL_DTYPES.get(op, "floating"))
    kernel = _ntuple(kernel_size, nd, "kernel_size", op)
    stride = kernel if stride is None or (isinstance(stride, Sequence) and not stride) else _ntuple(
        stride, nd, "stride", op)  # fmt: skip
    dilation = _ntuple(dilation, nd, "dilation", op)
    pad = _ntuple(padding, nd, "padding", op)
    for p, k in zip(pad, kernel):
        if 2 * p > k:  # (PyTorch's rule, whatever the dilation)
            raise InvalidArgumentError(
                f"{op}: pad should be at most half of the kernel size, but got pad={pad}, kernel_size={kernel} "
                f"and dilation={dilation}"
            )
    pads = tuple((p, p + (_ceil_extra(n, k, s, p, d) if ceil_mode else 0))
                 for n, k, s, p, d in zip(x.shape[2:], kernel, stride, pad, dilation))  # fmt: skip
    geo = _geometry(op, tuple(x.shape[2:]), kernel, stride, pads, dilation)
    return x, unbatched, geo


def _ceil_extra(n: int, k: int, s: int, p: int, d: int) -> int:
    """The padding ``ceil_mode=True`` adds on the right: enough for PyTorch's rounded-up
    output length, whose last window must still start inside the input or its left padding."""
    span = d * (k - 1) + 1
    out = -(-(n + 2 * p - span) // s) + 1
    if (out - 1) * s >= n + p:
        out -= 1
    return max(0, (out - 1) * s + span - (n + 2 * p))


def _kernel_node(name: str, nd: int, input: Any) -> Any:
    """Where ``input`` is unbatched, the scope that shows a fused pooling op as PyTorch's one node
    ``name`` (its kernels read a ``(C, *spatial)`` input as it is), not as the batch axis added, the
    op's node and the axis taken off; else nothing."""
    if isinstance(input, Tensor) and input.ndim == nd + 1:
        return recorded_as(name, input)
    return contextlib.nullcontext()


def max_pool_reference(x: Tensor, geo: Geometry) -> Tensor:
    """The max of each window (padding counts as -inf), in primitives: picked by its index,
    so that a tie sends the gradient to the first maximum, as PyTorch (``max`` would share it)."""
    cols = _windows(x, geo, lowest(x.dtype))  # (N, C, K, *out)
    first = cols.argmax(2).unsqueeze(2)  # (N, C, 1, *out)
    return cols.gather(2, first).squeeze(2)


def _max_pool_composite(nd: int, name: str, fused_cls: type) -> Any:
    def fused(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0, dilation: Any = 1,
              ceil_mode: bool = False, return_indices: bool = False) -> Tensor:  # fmt: skip
        with _kernel_node(f"{name}_with_indices", nd, input):
            x, unbatched, geo = _pool_setup(name, nd, input, kernel_size, stride, padding, dilation, ceil_mode)
            y = fused_cls.apply(x, args=geo)
            return _pool_result(y, x, geo, unbatched, return_indices)

    def reference(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0, dilation: Any = 1,
                  ceil_mode: bool = False, return_indices: bool = False) -> Tensor:  # fmt: skip
        x, unbatched, geo = _pool_setup(name, nd, input, kernel_size, stride, padding, dilation, ceil_mode)
        y = max_pool_reference(x, geo)
        return _pool_result(y, x, geo, unbatched, return_indices)

    return composite(name, fused)(reference)


def _pool_result(y: Tensor, x: Tensor, geo: Geometry, unbatched: bool, return_indices: bool) -> Any:
    """``y`` (without the batch axis the input lacked), and with ``return_indices`` also
    PyTorch's indices: where each maximum sits in its (N, C) plane, flattened, as int64."""
    if not return_indices:
        return y.squeeze(0) if unbatched else y
    with no_grad():
        cols = _windows(x.detach(), geo, lowest(x.dtype))  # (N, C, K, *out)
        first = cols.argmax(2).unsqueeze(2)
        where = Tensor._wrap(x._dev.asarray(_flat_positions(tuple(x.shape[2:]), geo)), x._dev)
        idx = where.expand(cols.shape).gather(2, first).squeeze(2)
    return (y.squeeze(0), idx.squeeze(0)) if unbatched else (y, idx)


def _flat_positions(spatial: tuple[int, ...], geo: Geometry) -> np.ndarray:
    """(1, 1, K, *out) int64: the flat input position each kernel offset meets at each output
    position, in the order of :func:`_windows`' kernel axis (padding positions are never a
    window's maximum, so their values do not matter)."""
    flat = np.arange(math.prod(spatial), dtype=np.int64).reshape((1, 1) + spatial)
    return im2col(np, _conv.pad_array(np, flat, geo.pads, -1), geo.kernel, geo.stride, geo.dilation, geo.out)


@public(function=True, functional=True)
def max_pool1d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0, dilation: Any = 1,
               ceil_mode: bool = False, return_indices: bool = False) -> Any:  # fmt: skip
    """The max of each window of ``input (N, C, L)``: PyTorch's ``F.max_pool1d(input, kernel_size,
    stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False)`` (``stride`` defaults to
    ``kernel_size``). Written as PyTorch's: ``max_pool2d`` of the input with a height of 1
    (``SqueezeBackward1`` over ``MaxPool2DWithIndicesBackward0`` over ``UnsqueezeBackward0``)."""
    _, _, geo = _pool_setup("max_pool1d", 1, input, kernel_size, stride, padding, dilation, ceil_mode)
    (k,), (s,), ((p, _),), (d,) = geo.kernel, geo.stride, geo.pads, geo.dilation
    y = max_pool2d(input.unsqueeze(-2), (1, k), (1, s), (0, p), (1, d), ceil_mode, return_indices)
    return (y[0].squeeze(-2), y[1].squeeze(-2)) if return_indices else y.squeeze(-2)


max_pool2d = public(
    _max_pool_composite(2, "max_pool2d", _conv.MaxPooling2d), function=True, functional=True, name="max_pool2d"
)
max_pool2d.__doc__ = """The max of each window of ``input (N, C, H, W)``: PyTorch's ``F.max_pool2d(input,
kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False)``
(``stride`` defaults to ``kernel_size``)."""
max_pool3d = public(
    _max_pool_composite(3, "max_pool3d", _conv.MaxPooling3d), function=True, functional=True, name="max_pool3d"
)
max_pool3d.__doc__ = """The max of each window of ``input (N, C, D, H, W)``: PyTorch's ``F.max_pool3d``, with
``max_pool2d``'s arguments."""


def _max_unpool(op: str, nd: int, input: Any, indices: Any, kernel_size: Any, stride: Any, padding: Any,
                output_size: Any) -> Tensor:  # fmt: skip
    x, _ = _check_input(op, nd, input)
    if not isinstance(indices, Tensor) or indices.shape != input.shape or indices.dtype.kind not in "iu":
        raise InvalidArgumentError(
            f"{op}: indices must be an integer Tensor of the input's shape {tuple(input.shape)}, got "
            f"{getattr(indices, 'shape', type(indices).__name__)}"
        )
    kernel = _ntuple(kernel_size, nd, "kernel_size", op)
    stride = kernel if stride is None else _ntuple(stride, nd, "stride", op)
    pad = _ntuple(padding, nd, "padding", op)
    spatial = tuple((n - 1) * s - 2 * p + k for n, s, p, k in zip(x.shape[2:], stride, pad, kernel))
    if output_size is not None:
        # PyTorch's rule: nd sizes (or nd + 2, a leading N, C ignored), each within a stride of the default
        given = tuple(int(v) for v in output_size)
        given = given[2:] if len(given) == nd + 2 else given
        if len(given) != nd:
            raise ValueError(f"{op}: output_size should be a sequence containing {nd} or {nd + 2} elements, but it "
                             f"has a length of '{len(given)}'")  # fmt: skip
        for d, (o, n, s) in enumerate(zip(given, spatial, stride)):
            if not n - s < o < n + s:
                raise ValueError(f'{op}: invalid output_size "{list(output_size)}" (dim {d} must be between '
                                 f"{n - s} and {n + s})")  # fmt: skip
            if o < 0:
                raise ValueError(f"max_unpooling: output_size must contain non-negative spatial dimensions, but "
                                 f"got output_size[{d}]={o}")  # fmt: skip
        spatial = given
    if nd == 1:  # (PyTorch's: max_unpool2d of the input with a width of 1, squeezed)
        return _unpooled("max_unpool2d", input.unsqueeze(-1), indices.unsqueeze(-1), (*spatial, 1)).squeeze(-1)
    return _unpooled(f"max_unpool{nd}d", input, indices, spatial)


def _unpooled(name: str, input: Tensor, indices: Tensor, spatial: tuple[int, ...]) -> Tensor:
    """Zeros of ``spatial`` with each value of ``input`` at its flat position of ``indices`` (checked):
    PyTorch's one node ``name`` (``MaxUnpool2DBackward0``), whose gradient gathers them back."""
    with recorded_as(name, input):
        return _unpool_steps(input, indices, spatial)


def _unpool_steps(input: Tensor, indices: Tensor, spatial: tuple[int, ...]) -> Tensor:
    unbatched = input.ndim == len(spatial) + 1
    x, idx = (input.unsqueeze(0), indices.unsqueeze(0)) if unbatched else (input, indices)
    n, c = x.shape[:2]
    flat = x.reshape((n, c, math.prod(x.shape[2:])))
    if math.prod(spatial) == 0 and flat.numel():  # (PyTorch's writes nothing; its backward's gather refuses)
        y = flat[..., :0].reshape((n, c) + spatial)
        if y.requires_grad:
            first = int(idx.reshape(-1)[0].item())
            y = RefusedDerivative.apply(y, args=f"index {first} is out of bounds for dimension 2 with size 0")
        return y.squeeze(0) if unbatched else y
    out = Tensor._wrap(x._dev.ops.zeros((n, c, math.prod(spatial)), dtype=x._data.dtype), x._dev)
    # each value goes to the flat position max_pool's indices recorded (the gradient gathers it back)
    at = idx.reshape((n, c, math.prod(idx.shape[2:])))
    y = out.scatter(2, at, flat)
    if differentiated(flat):  # (every value gets the gradient of its position, duplicates too, as PyTorch's)
        from ..ops.gather_along import ScatterAddAlong  # noqa: PLC0415
        from ..ops.saved import with_gradient_of  # noqa: PLC0415

        y = with_gradient_of(y, ScatterAddAlong.apply(flat, at, args=(2, tuple(out.shape))))
    y = y.reshape((n, c) + spatial)
    return y.squeeze(0) if unbatched else y


@public(function=False, functional=True)
@accepts("floating")
def max_unpool1d(input: Tensor, indices: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
                 output_size: Any = None) -> Tensor:  # fmt: skip
    """PyTorch's ``F.max_unpool1d``: zeros except where ``max_pool1d(..., return_indices=True)``
    found each maximum, which gets that value back."""
    return _max_unpool("max_unpool1d", 1, input, indices, kernel_size, stride, padding, output_size)


@public(function=False, functional=True)
@accepts("floating")
def max_unpool2d(input: Tensor, indices: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
                 output_size: Any = None) -> Tensor:  # fmt: skip
    """PyTorch's ``F.max_unpool2d``: the partial inverse of ``max_pool2d(..., return_indices=True)``;
    output ``(N, C, (H-1)*stride - 2*padding + kernel, ...)`` unless ``output_size`` is given.
    Where overlapping windows recorded one position twice, the last value is kept and only it
    gets the gradient (PyTorch's choice there is unspecified; it sends the gradient to each)."""
    return _max_unpool("max_unpool2d", 2, input, indices, kernel_size, stride, padding, output_size)


@public(function=False, functional=True)
@accepts("floating")
def max_unpool3d(input: Tensor, indices: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
                 output_size: Any = None) -> Tensor:  # fmt: skip
    """PyTorch's ``F.max_unpool3d``: the partial inverse of ``max_pool3d(..., return_indices=True)``."""
    return _max_unpool("max_unpool3d", 3, input, indices, kernel_size, stride, padding, output_size)


def _avg_scale(x: Tensor, geo: Geometry, count_include_pad: bool, divisor_override: int | None,
               op: str = "avg_pool2d") -> Any:  # fmt: skip
    """The reciprocal divisor: a number, or (without the padding counted) an array of the
    output's spatial shape on ``x``'s device, in its dtype."""
    if divisor_override is not None:
        if int(divisor_override) == 0:
            raise InvalidArgumentError(f"{op}: divisor_override must not be zero")
        return 1.0 / int(divisor_override)
    extra = tuple(hi - lo for lo, hi in geo.pads)  # what ceil_mode added: never counted
    if (count_include_pad or not any(lo or hi for lo, hi in geo.pads)) and not any(extra):
        return 1.0 / math.prod(geo.kernel)
    if count_include_pad:  # the symmetric padding counts, ceil_mode's extra does not
        ones = np.ones((1, 1) + tuple(n + 2 * lo for n, (lo, _) in zip(x.shape[2:], geo.pads)))
        ones = _conv.pad_array(np, ones, tuple((0, e) for e in extra))
    else:
        ones = _conv.pad_array(np, np.ones((1, 1) + tuple(x.shape[2:])), geo.pads)
    cols = im2col(np, ones, geo.kernel, geo.stride, geo.dilation, geo.out)
    counts = cols.sum(axis=2)[0, 0]  # (*out): the real (unpadded) inputs of each window
    return x._dev.asarray((1.0 / counts).astype(x.dtype))


def avg_pool_reference(x: Tensor, geo: Geometry, scale: Any) -> Tensor:
    """The mean of each window, in primitives (``scale``: see :func:`_avg_scale`)."""
    s = _windows(x, geo).sum(2)
    return s * (scale if isinstance(scale, float) else Tensor._wrap(scale, x._dev))


def _avg_pool_composite(nd: int, name: str, fused_cls: type, overridable: bool) -> Any:
    """``avg_pool{nd}d``: PyTorch's 1-d form has no ``divisor_override``, the 2-d and 3-d ones do."""

    def setup(input: Tensor, kernel_size: Any, stride: Any, padding: Any, ceil_mode: bool, count_include_pad: bool,
              divisor_override: int | None) -> tuple[Tensor, bool, Geometry, Any]:  # fmt: skip
        x, unbatched, geo = _pool_setup(name, nd, input, kernel_size, stride, padding, 1, ceil_mode)
        if nd == 3 and any(n < k for n, k in zip(x.shape[2:], geo.kernel)):  # (PyTorch's 3-d check, padding aside)
            (t, h, w), (kt, kh, kw) = x.shape[2:], geo.kernel
            raise InvalidArgumentError(f"{name}: input image (T: {t} H: {h} W: {w}) smaller than kernel size (kT: {kt} "
                                       f"kH: {kh} kW: {kw})")  # fmt: skip
        if x.dtype.kind == "i":  # (PyTorch's int64 kernel: the sum divided as integers, toward zero; here in float64)
            x = x.astype(np.float64)
        return x, unbatched, geo, _avg_scale(x, geo, count_include_pad, divisor_override, name)

    def result(y: Tensor, input: Tensor, unbatched: bool) -> Tensor:
        if input.dtype.kind == "i":
            y = y.trunc().astype(input.dtype)
        return y.squeeze(0) if unbatched else y

    def fused(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0, ceil_mode: bool = False,
              count_include_pad: bool = True, divisor_override: int | None = None) -> Tensor:  # fmt: skip
        with _kernel_node(name, nd, input):
            x, unbatched, geo, scale = setup(input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                                             divisor_override)  # fmt: skip
            return result(fused_cls.apply(x, args=(geo, scale)), input, unbatched)

    def reference(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0, ceil_mode: bool = False,
                  count_include_pad: bool = True, divisor_override: int | None = None) -> Tensor:  # fmt: skip
        x, unbatched, geo, scale = setup(input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                                         divisor_override)  # fmt: skip
        return result(avg_pool_reference(x, geo, scale), input, unbatched)

    run = composite(name, fused)(reference)
    if overridable:
        return run

    def without_override(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
                         ceil_mode: bool = False, count_include_pad: bool = True) -> Tensor:  # fmt: skip
        return run(input, kernel_size, stride, padding, ceil_mode, count_include_pad)

    without_override.reference = run.reference  # type: ignore[attr-defined]
    without_override.composite_name = name  # type: ignore[attr-defined]
    return without_override


@public(function=True, functional=True)
def avg_pool1d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0, ceil_mode: bool = False,
               count_include_pad: bool = True) -> Tensor:  # fmt: skip
    """The mean of each window of ``input (N, C, L)``: PyTorch's ``F.avg_pool1d(input, kernel_size,
    stride=None, padding=0, ceil_mode=False, count_include_pad=True)``. Written as PyTorch's:
    ``avg_pool2d`` of the input with a height of 1 (``SqueezeBackward1`` over ``AvgPool2DBackward0``)."""
    _, _, geo = _pool_setup("avg_pool1d", 1, input, kernel_size, stride, padding, 1, ceil_mode)
    (k,), (s,), ((p, _),) = geo.kernel, geo.stride, geo.pads
    return avg_pool2d(input.unsqueeze(-2), (1, k), (1, s), (0, p), ceil_mode, count_include_pad).squeeze(-2)


avg_pool2d = public(
    _avg_pool_composite(2, "avg_pool2d", _conv.AveragePooling2d, overridable=True),
    function=False,
    functional=True,
    name="avg_pool2d",
)
avg_pool2d.__doc__ = """The mean of each window of ``input (N, C, H, W)``, PyTorch's ``F.avg_pool2d``: zero
padding counted in the mean unless ``count_include_pad=False``; ``divisor_override``
replaces the window size."""
avg_pool3d = public(
    _avg_pool_composite(3, "avg_pool3d", _conv.AveragePooling3d, overridable=True),
    function=False,
    functional=True,
    name="avg_pool3d",
)
avg_pool3d.__doc__ = """The mean of each window of ``input (N, C, D, H, W)``: PyTorch's ``F.avg_pool3d``, with
``avg_pool2d``'s arguments."""


def _adaptive_matrix(n: int, m: int) -> np.ndarray:
    """(m, n): row ``i`` averages inputs ``floor(i n / m)`` to ``ceil((i + 1) n / m)``, PyTorch's windows."""
    a = np.zeros((m, n))
    for i in range(m):
        lo, hi = (i * n) // m, -((-(i + 1) * n) // m)
        a[i, lo:hi] = 1.0 / (hi - lo)
    return a


def empty_batch_result(op: str, x: Tensor, out: tuple[int, ...], unbatched: bool) -> Tensor:
    """An adaptive average pool of an empty batch ``x`` of a non-floating dtype: PyTorch's 1-d and 2-d
    kernels return it (of output size ``out``) before they read the dtype."""
    if x.dtype.kind == "c" and x.requires_grad and is_grad_enabled():
        raise RuntimeError(
            f"{op}: _adaptive_avg_pool2d does not support automatic differentiation for outputs with complex "
            f"dtype (an empty {x.dtype} batch; PyTorch's refusal)"
        )
    empty = Tensor.zeros(tuple(x.shape[:2]) + tuple(out), dtype=x.dtype, device=x._dev)
    return empty.squeeze(0) if unbatched else empty


def _adaptive_setup(input: Any, output_size: Any) -> tuple[Tensor, bool, Any, Any]:
    """The batched input, whether it was not, and the averaging matrices of its two axes (None, None
    and the output size for an empty batch of a non-floating dtype: :func:`empty_batch_result`)."""
    op = "adaptive_avg_pool2d"
    x, unbatched = _check_input(op, 2, input)
    empty = x.numel() == 0 and x.dtype.kind != "f"
    if not empty:
        _F._float(x, op)
    output_size = _output_size_arg(op, 2, output_size)
    if isinstance(output_size, int):
        output_size = (output_size,) * 2
    if len(output_size) != 2:
        raise InvalidArgumentError(f"{op}: output_size must be an int or a pair, got {output_size!r}")
    h, w = x.shape[2:]
    oh, ow = (s if o is None else int(o) for o, s in zip(output_size, (h, w)))
    if oh < 0 or ow < 0 or h < 1 or w < 1:  # (an output side of 0 is an empty result, as PyTorch's)
        raise InvalidArgumentError(f"{op}: input {tuple(x.shape)} and output size {(oh, ow)} must be non-empty")
    if empty:
        return x, unbatched, None, (oh, ow)
    dev = x._dev
    ah = dev.asarray(_adaptive_matrix(h, oh).astype(x.dtype))
    aw = dev.asarray(_adaptive_matrix(w, ow).astype(x.dtype))
    return x, unbatched, ah, aw


def adaptive_global_mean(op: str, nd: int, input: Any, output_size: Any) -> Tensor | None:
    """The mean over the last ``nd`` axes where every output side is 1, else None: PyTorch's
    ``adaptive_avg_pool2d``/``3d`` take that path before they read the input's rank, so ``(H, W)``
    pools to ``(1, 1)`` and any leading axes are kept."""
    if not isinstance(input, Tensor):
        return None
    try:
        output_size = _output_size_arg(op, nd, output_size)
    except TypeError:  # (no output size: the pool's own reading refuses it, after the input's rank)
        return None
    if isinstance(output_size, int):
        sides = (output_size,) * nd
    elif isinstance(output_size, Sequence) and 0 < len(output_size) < input.ndim:
        sides = tuple(n if o is None else o for o, n in zip(output_size, input.shape[-len(output_size) :]))
    else:
        return None
    if len(sides) != nd or any(s != 1 for s in sides):
        return None
    _F._float(input, op)
    return result_in_format_of(input.mean(tuple(range(-nd, 0)), keepdim=True), input)  # (in input's format)


def _empty_refused(kernel: str, y: Tensor) -> Tensor:
    """``y``, an adaptive pool's result with an empty output axis, whose backward PyTorch's kernel
    (the 2-d one for 1-d and 2-d pools) refuses."""
    if not y.requires_grad or 0 not in y.shape[2:]:
        return y
    kernel += "3d" if y.ndim == 5 else "2d"
    at = next(i for i in range(2, y.ndim) if y.shape[i] == 0)
    sizes = list(y.shape) if y.ndim > 3 else [*y.shape[:2], 1, y.shape[2]]
    return RefusedDerivative.apply(y, args=f"{kernel}_backward(): Expected grad_output to have non-zero size for "
                                   f"non-batch dimensions, but grad_output has sizes {sizes} with dimension "
                                   f"{at + (y.ndim == 3)} being empty")  # fmt: skip


def adaptive_avg_pool2d_reference(x: Tensor, ah: Any, aw: Any) -> Tensor:
    """``A_h @ x @ A_w.T`` in primitives (two matmuls)."""
    return (Tensor._wrap(ah, x._dev) @ x) @ Tensor._wrap(aw, x._dev).mT


def _adaptive_avg_pool2d_fused(input: Tensor, output_size: Any) -> Tensor:
    mean = adaptive_global_mean("adaptive_avg_pool2d", 2, input, output_size)
    if mean is not None:
        return mean
    with _kernel_node("adaptive_avg_pool2d", 2, input):
        x, unbatched, ah, aw = _adaptive_setup(input, output_size)
        if ah is None:
            return empty_batch_result("adaptive_avg_pool2d", x, aw, unbatched)
        y = _empty_refused("adaptive_avg_pool", _conv.AdaptiveAveragePooling2d.apply(x, args=(ah, aw)))
        return y.squeeze(0) if unbatched else y


@public(function=False, functional=True)
@composite("adaptive_avg_pool2d", _adaptive_avg_pool2d_fused)
def adaptive_avg_pool2d(input: Tensor, output_size: Any) -> Tensor:
    """Average ``input (N, C, H, W)`` into ``output_size`` (an int, or a pair; ``None`` keeps
    that side) with PyTorch's adaptive windows."""
    mean = adaptive_global_mean("adaptive_avg_pool2d", 2, input, output_size)
    if mean is not None:
        return mean
    x, unbatched, ah, aw = _adaptive_setup(input, output_size)
    if ah is None:
        return empty_batch_result("adaptive_avg_pool2d", x, aw, unbatched)
    y = _empty_refused("adaptive_avg_pool", adaptive_avg_pool2d_reference(x, ah, aw))
    return y.squeeze(0) if unbatched else y


# -- batch normalisation ------------------------------------------------------------------
def _channel_vector(op: str, t: Any, c: int, what: str, x: Tensor) -> None:
    """Check that ``t`` (None or a per-channel parameter or statistic of the input ``x``) has
    shape ``(c,)`` and ``x``'s dtype (float32 for a float16 ``x`` too, as PyTorch's CPU takes)."""
    if t is not None and (not isinstance(t, Tensor) or t.shape != (c,)):
        shape = t.shape if isinstance(t, Tensor) else type(t).__name__
        raise InvalidArgumentError(f"{op}: {what} must be a tensor of shape ({c},), got {shape}")
    _F.same_dtype(op, x, (what, t), float16_input=True)


@public(function=False, functional=True)
@composite("batch_norm", edges=("input", "weight", "bias"))
def batch_norm(input: Tensor, running_mean: Tensor | None, running_var: Tensor | None, weight: Tensor | None = None,
               bias: Tensor | None = None, training: bool = False, momentum: float | None = 0.1,
               eps: float = 1e-5) -> Tensor:  # fmt: skip
    """Normalise each channel (axis 1) of ``input (N, C, *)``, PyTorch's ``F.batch_norm``.

    Training: by the batch's mean and biased variance over every axis but 1, and, where
    given, ``running_mean``/``running_var`` move towards the batch's mean and unbiased
    variance by ``momentum``, in place. Otherwise: by the running statistics. Then
    ``* weight + bias``.
    """
    op = "batch_norm"
    _F._float(input, op)
    if input.ndim < 2 and input.numel() == 0:
        return input.clone()  # (PyTorch checks nothing of an empty vector: it has no channel to normalise)
    if input.ndim < 2:
        raise InvalidArgumentError(f"{op}: input must be (N, C, *), got shape {tuple(input.shape)}")
    # (PyTorch's F.batch_norm checks the batch size and eps in Python, then its parser the momentum, then
    # its kernel the shapes of the statistics)
    if training and input.shape[0] * math.prod(input.shape[2:]) == 1:
        raise InvalidArgumentError(
            f"{op}: expected more than 1 value per channel when training, got input size {tuple(input.shape)}"
        )
    if training and eps <= 0.0:
        raise ValueError(f"{op}: eps must be positive during training, but got {eps}")
    if eps < 0.0:
        raise ValueError(f"{op}: eps must be non-negative, but got {eps}")
    if momentum is None:
        raise TypeError(f"{op}(): argument 'momentum' (position 7) must be float, not NoneType")
    c = input.shape[1]
    for t, what in ((running_mean, "running_mean"), (running_var, "running_var"), (weight, "weight"),
                    (bias, "bias")):  # fmt: skip
        _channel_vector(op, t, c, what, input)
    given, x0 = input.dtype, input
    if given == np.float16:  # (PyTorch's CPU kernel normalises float16 in float32, rounding once)
        input = input.float()  # noqa: A001
    axes = (0,) + tuple(range(2, input.ndim))
    bshape = (1, c) + (1,) * (input.ndim - 2)  # broadcasts a per-channel vector over (N, C, *)
    if input.numel() == 0:  # no value to normalise, none to update the running statistics with
        y = input.clone()
    elif training:
        n = input.numel() // c
        if n <= 1:
            raise InvalidArgumentError(
                f"{op}: expected more than 1 value per channel when training, got input size {tuple(input.shape)}"
            )
        mean = input.mean(axes, keepdims=True)
        xc = input - mean
        var = (xc * xc).mean(axes, keepdims=True)
        _update_running(running_mean, running_var, mean, var, n, momentum)
        y = normalised(input, xc, mean, var, eps)
    else:
        if running_mean is None or running_var is None:
            raise InvalidArgumentError(f"{op}: running_mean and running_var are needed when not training")
        y = (input - running_mean.reshape(bshape)) / (running_var.reshape(bshape) + eps).sqrt()
    if weight is not None:
        y = y * weight.reshape(bshape)
    if bias is not None:
        y = y + bias.reshape(bshape)
    y = y if y.dtype == given else y.to(given)  # (float16 with float32 parameters: float16)
    y = result_in_format_of(y, x0)  # (PyTorch's kernel writes in its input's format)
    return saved_for_backward(y, x0, weight, joint=True)  # (PyTorch's backward: one op of the input and weight)


def normalised(x: Tensor, xc: Tensor, mean: Tensor, var: Tensor, eps: float) -> Tensor:
    """``xc / sqrt(var + eps)``, ``xc`` being ``x - mean``, as PyTorch's batch norm kernel computes it in
    training: for float16 and bfloat16 tensors (a composite computing them in float32, ``computed_for``) it
    saves the mean and 1/std in their dtype and normalises with those, ``(x - mean) * invstd`` in float32
    (checked against PyTorch: equal in every entry, where unrounded they were up to 18 float16 units apart)."""
    if (low := computed_for()) is None:
        return xc / (var + eps).sqrt()
    m = _rounded_values(mean, low)
    invstd = (var + eps).rsqrt().detach().astype(low).astype(x.dtype)
    if differentiated(x):  # (its backward's formula of those, dx = (dy - mean(dy) - (x - m) invstd^2 mean(dy (x - m)))
        # invstd: 1/std differentiated as -invstd^3 (x - m) / n, of the saved values)
        axes = tuple(i for i in range(x.ndim) if mean.shape[i] == 1 and x.shape[i] != 1)
        invstd = with_gradient_of(invstd, ((x - m.detach()).square().mean(axes, keepdims=True)) * (invstd**3 * -0.5))
    return (x - m) * invstd


def _rounded_values(t: Tensor, low: np.dtype) -> Tensor:
    """``t``'s values rounded to ``low`` (in ``t``'s dtype), differentiated as ``t`` itself: what a kernel
    that stores ``t`` in ``low`` reads back, where its backward differentiates the exact formula."""
    return with_gradient_of(t.detach().astype(low).astype(t.dtype), t)


def _update_running(running_mean: Tensor | None, running_var: Tensor | None, mean: Tensor, var: Tensor, n: int,
                    momentum: float) -> None:  # fmt: skip
    """``running = (1 - momentum) running + momentum batch``, in place, without a graph."""
    m = float(momentum)
    with no_grad():
        if running_mean is not None:
            running_mean.mul_(1.0 - m).add_(mean.detach().reshape(-1).astype(running_mean.dtype) * m)
        if running_var is not None:
            unbiased = var.detach().reshape(-1) * (n / (n - 1))
            running_var.mul_(1.0 - m).add_(unbiased.astype(running_var.dtype) * m)


# -- bilinear -------------------------------------------------------------------------------
@public(function=True, functional=True)
@composite("bilinear")
def bilinear(input1: Tensor, input2: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """``y[..., o] = x1 @ weight[o] @ x2 + bias[o]``: PyTorch's ``F.bilinear`` with ``input1
    (..., in1)``, ``input2 (..., in2)``, ``weight (out, in1, in2)`` -> ``(..., out)``."""
    op = "bilinear"
    _F.same_dtype(op, input1, ("input2", input2), ("weight", weight), ("bias", bias))  # (PyTorch's promotes none)
    if weight.ndim != 3 or input1.shape[-1:] != weight.shape[1:2] or input2.shape[-1:] != weight.shape[2:3] or (
            input1.shape[:-1] != input2.shape[:-1]):  # fmt: skip
        # (a weight of fewer than 3 axes: PyTorch reads its axis 2, an IndexError)
        raise (_F.MissingAxisError if weight.ndim < 3 or min(input1.ndim, input2.ndim) < 1 else InvalidArgumentError)(
            f"{op}: input1 {tuple(input1.shape)}, input2 {tuple(input2.shape)} and weight {tuple(weight.shape)} do not fit: need "
            "input1 (..., in1), input2 (..., in2) with the same leading shape, weight (out, in1, in2)"
        )
    out, in1, in2 = weight.shape
    if bias is not None and bias.shape != (out,):
        raise InvalidArgumentError(f"{op}: bias has shape {tuple(bias.shape)}, expected ({out},)")
    lead = input1.shape[:-1]
    x1 = input1.reshape(-1, in1)  # (M, in1)
    t = x1 @ weight.permute(1, 0, 2).reshape(in1, out * in2)  # (M, out * in2)
    t, x2 = t.reshape(-1, out, in2), input2.reshape(-1, 1, in2)
    if t.dtype == np.float16:  # (the second product is a matmul too in PyTorch's: in float32, rounded once)
        t, x2 = t.astype(np.float32), x2.astype(np.float32)
    terms = t * x2
    y = terms.sum(-1, dtype=terms.dtype).astype(
        input1.dtype
    )  # (M, out; an integer sum keeps its dtype, as PyTorch's matmuls)
    if bias is not None:
        y = y + bias
    return saved_for_backward(y.reshape(*lead, out), input1, input2, weight)  # (what PyTorch's keeps)


# -- each fused op's definition in tensor ops (what it recomputes for gradients of higher
# order), handed down to the op, which imports nothing above it
_conv.Convolution.definition = staticmethod(conv_reference)
_conv.MaxPooling.definition = staticmethod(max_pool_reference)
_conv.AveragePooling.definition = staticmethod(avg_pool_reference)
_conv.AdaptiveAveragePooling2d.definition = staticmethod(adaptive_avg_pool2d_reference)


@public(function=True, functional=True)
def conv_tbc(input: Tensor, weight: Tensor, bias: Tensor, pad: int = 0) -> Tensor:
    """PyTorch's ``F.conv_tbc``: a 1-d convolution of ``input`` laid out ``(time, batch,
    in_channels)`` with ``weight`` ``(kernel_width, in_channels, out_channels)``, plus ``bias``
    ``(out_channels,)``, ``pad`` steps of zeros at both ends of time; the output is
    ``(time + 2 * pad - kernel_width + 1, batch, out_channels)``. (It is :func:`conv1d` with
    the axes moved.)"""
    for t, what in ((input, "input"), (weight, "weight"), (bias, "bias")):
        if not isinstance(t, Tensor):
            raise TypeError(f"conv_tbc: {what} must be a Tensor, got {type(t).__name__}")
    if input.ndim != 3:
        raise RuntimeError(f"Input must have 3 dims: time, batch, in_channel (conv_tbc got shape {tuple(input.shape)})")
    if weight.ndim != 3:
        raise RuntimeError("Weight tensor must have 3 dims: kernel_width, in_channels, out_channels "
                           f"(conv_tbc got shape {tuple(weight.shape)})")  # fmt: skip
    if bias.ndim != 1:
        raise RuntimeError(f"Bias must be 1-D (conv_tbc got shape {tuple(bias.shape)})")
    if input.shape[2] != weight.shape[1]:
        raise RuntimeError(f"Input dim 2 (input channels) is not == dim 1 in the weight tensor (conv_tbc: input "
                           f"{tuple(input.shape)}, weight {tuple(weight.shape)})")  # fmt: skip
    if weight.shape[2] != bias.shape[0]:
        raise RuntimeError(f"Bias size must equal dim 2 in the weight tensor (output channels) (conv_tbc: weight "
                           f"{tuple(weight.shape)}, bias {tuple(bias.shape)})")  # fmt: skip
    # (T, B, C) -> (B, C, T); weight (K, C, O) -> (O, C, K): conv1d's layouts, and back
    y = conv1d(input.permute(1, 2, 0), weight.permute(2, 1, 0), bias, padding=pad)  # (B, O, T')
    return saved_for_backward(y.permute(2, 0, 1), input, weight, bias)  # (PyTorch's keeps all three)
