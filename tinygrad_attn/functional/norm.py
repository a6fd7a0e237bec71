"""Normalisation by groups of channels, by instance, and across neighbouring channels:
PyTorch's ``F.group_norm``, ``F.instance_norm`` and ``F.local_response_norm``, each a
composite of primitives (means, a square root, shifted slices). ``batch_norm`` lives
beside the convolutions (``conv.py``); ``tinygrad_attn.functional`` re-exports
every public name.

>>> F.group_norm(x, 2, weight, bias)  # doctest: +SKIP  (x: (N, C, *), C divisible by 2)
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..engine.arguments import index_value, refuse
from ..engine.composite import composite
from ..engine.declare import LOW_PRECISION, accepts, public
from ..engine.layout import result_in_format_of
from ..engine.switches import no_grad
from ..ops.saved import saved_for_backward
from ..tensors._tensor import InvalidArgumentError, Tensor
from . import checks as _F
from .conv import _channel_vector, normalised


def _affine(y: Tensor, weight: Tensor | None, bias: Tensor | None) -> Tensor:
    """``y (N, C, *) * weight[c] + bias[c]`` where given."""
    shape = (1, y.shape[1]) + (1,) * (y.ndim - 2)
    if weight is not None:
        y = y * weight.reshape(shape)
    if bias is not None:
        y = y + bias.reshape(shape)
    return y


@public(function=False, functional=True)
def group_norm(input: Tensor, num_groups: int, weight: Tensor | None = None, bias: Tensor | None = None,
               eps: float = 1e-5) -> Tensor:  # fmt: skip
    """Normalise ``input (N, C, *)`` over each group of ``C / num_groups`` channels and all
    positions (mean and biased variance per sample and group), then ``* weight + bias`` per
    channel: PyTorch's ``F.group_norm``."""
    op = "group_norm"
    x = _F.tensor_arg(input, op)
    if x.ndim < 2:
        raise RuntimeError(f"{op}: expected at least 2 dimensions for input tensor but received {x.ndim}")
    n, c = x.shape[:2]
    # F's check of the batch, before torch.group_norm's of the groups and the dtype: the values per
    # group counted as PyTorch's (N * C // num_groups) * positions, a division by 0 groups its ZeroDivisionError
    if num_groups == 0:
        raise ZeroDivisionError(f"{op}: num_groups must not be 0 (the {c} channels are divided into num_groups groups)")
    sizes = [n * c // num_groups, num_groups, *x.shape[2:]]
    if (n * c // num_groups) * math.prod(x.shape[2:]) == 1:
        raise ValueError(f"{op}: expected more than 1 value per channel when training, got input size {sizes}")
    return _group_norm(input, num_groups, weight, bias, eps)


@composite("group_norm")
def _group_norm(input: Tensor, num_groups: int, weight: Tensor | None, bias: Tensor | None, eps: float) -> Tensor:  # noqa: A002
    """``torch.group_norm``'s computation and checks (F's of the batch before it)."""
    op = "group_norm"
    x = _F.tensor_arg(input, op)
    if x.ndim < 2:
        raise RuntimeError(f"{op}: expected at least 2 dimensions for input tensor but received {x.ndim}")
    n, c = x.shape[:2]
    if num_groups < 1:
        raise RuntimeError(f"{op}: expected num groups to be greater than 0, got {num_groups}")
    _F._float(x, op)
    if c % num_groups:
        raise RuntimeError(
            f"{op}: expected number of channels in input to be divisible by num_groups, but got input of shape "
            f"{tuple(x.shape)} and num_groups={num_groups}"
        )
    for t, what in ((weight, "weight"), (bias, "bias")):
        _channel_vector(op, t, c, what, x)
    given = x.dtype
    if given == np.float16:  # (PyTorch's CPU kernel normalises float16 in float32, rounding once)
        x = x.float()
    per_sample = c // num_groups * math.prod(x.shape[2:])  # (spelt out: -1 cannot be inferred when N is 0)
    g = x.reshape(n, num_groups, per_sample)  # (N, G, C/G * positions)
    mean = g.mean(-1, keepdims=True)
    gc = g - mean
    var = (gc * gc).mean(-1, keepdims=True)
    y = (gc / (var + eps).sqrt()).reshape(x.shape)
    y = _affine(y, weight, bias)
    y = y if y.dtype == given else y.to(given)  # (float16 with float32 parameters: float16, as PyTorch's)
    # (PyTorch's kernel writes a new tensor in the input's memory format: its batch stride too where N is 1)
    return saved_for_backward(result_in_format_of(y, x), input, weight)  # (what PyTorch's keeps)


@public(function=False, functional=True)
@composite("instance_norm")
def instance_norm(input: Tensor, running_mean: Any = None, running_var: Any = None,
                  weight: Any = None, bias: Any = None, use_input_stats: bool = True,
                  momentum: float = 0.1, eps: float = 1e-5) -> Tensor:  # fmt: skip
    """Normalise each channel of each sample of ``input (N, C, *)`` over its positions:
    PyTorch's ``F.instance_norm``. With ``use_input_stats`` the running statistics (where
    given) move by ``momentum`` towards the batch's mean of the per-instance means and
    unbiased variances, in place; without it they normalise instead."""
    op = "instance_norm"
    x = _F.tensor_arg(input, op)
    if use_input_stats and math.prod(x.shape[2:]) == 1:  # (PyTorch's Python checks this before anything else)
        raise ValueError(f"{op}: Expected more than 1 spatial element when training, got input size {tuple(x.shape)}")
    for at, (t, what) in enumerate(((running_mean, "running_mean"), (running_var, "running_var"),
                                    (weight, "weight"), (bias, "bias"))):  # fmt: skip
        if t is not None and not isinstance(t, Tensor):
            refuse(op, what, at + 1, "Tensor!", t)
    _F._float(x, op)
    if x.ndim < (3 if use_input_stats else 2):  # (the running statistics normalise an (N, C) input too)
        raise InvalidArgumentError(
            f"{op}: input must be (N, C, *) with at least one position axis, got {tuple(x.shape)}"
        )
    c = x.shape[1]
    for t, what in ((running_mean, "running_mean"), (running_var, "running_var"), (weight, "weight"),
                    (bias, "bias")):  # fmt: skip
        # (PyTorch's instance norm converts the running statistics: only the weight and bias must match)
        _channel_vector(op, t, c, what, x if what in ("weight", "bias") else t)
    given = x.dtype
    if given == np.float16:  # (PyTorch's CPU kernel normalises float16 in float32, rounding once)
        x = x.float()
    axes = tuple(range(2, x.ndim))
    bshape = (1, c) + (1,) * (x.ndim - 2)
    if use_input_stats:
        count = x[0, 0].numel()
        if count <= 1:
            raise ValueError(
                f"{op}: expected more than 1 spatial element when training, got input size {tuple(x.shape)}"
            )
        mean = x.mean(axes, keepdims=True)  # (N, C, 1, ...)
        xc = x - mean
        var = (xc * xc).mean(axes, keepdims=True)
        m = float(momentum)
        # (PyTorch's: each sample's copy of a buffer, in the input's dtype, moves by its own statistics; the
        # copies' mean is copied back, so an integer buffer keeps it truncated and a bool one its truth)
        per_sample = {"mean": mean.detach().reshape(x.shape[0], c),
                      "var": var.detach().reshape(x.shape[0], c) * (count / (count - 1))}  # fmt: skip
        with no_grad():
            for buffer, stat in ((running_mean, per_sample["mean"]), (running_var, per_sample["var"])):
                if buffer is not None:
                    moved = (buffer.astype(x.dtype) * (1.0 - m) + stat * m).astype(given)  # (N, C)
                    buffer.copy_(moved.mean(0))
        y = normalised(x, xc, mean, var, eps)  # (PyTorch's instance norm is its batch norm kernel)
    else:
        if running_mean is None or running_var is None:
            raise InvalidArgumentError(f"{op}: running_mean and running_var are needed when use_input_stats=False")
        y = (x - running_mean.reshape(bshape)) / (running_var.reshape(bshape) + eps).sqrt()
    n, ones = x.shape[0], (1,) * (x.ndim - 2)
    copies = None
    if weight is not None:  # (one copy per sample, as PyTorch's: the copy is kept, the weight may change in place)
        copies = weight.repeat(n)
        y = y * copies.reshape((n, c) + ones)
    if bias is not None:
        y = y + bias.reshape(bshape)
    y = y if y.dtype == given else y.to(given)  # (float16 with float32 parameters: float16, as PyTorch's)
    return saved_for_backward(y, input, copies, joint=True)  # (PyTorch's: batch norm's backward, one op)


def channel_window_sum(sq: Tensor, before: int, after: int) -> Tensor:
    """``sum(sq[:, c - before : c + after + 1])`` for every channel ``c`` of ``sq (N, C, *)``
    (the channels outside count as 0), as shifted slices of the zero-padded channel axis."""
    c = sq.shape[1]
    padded = _F._pad_constant(sq, 1, before, after, 0.0)
    out = padded[:, 0:c]
    for j in range(1, before + after + 1):
        out = out + padded[:, j : j + c]
    return out


@public(function=False, functional=True)
@accepts(("int64", "float16", "float32", "float64"))
@composite("local_response_norm")
def local_response_norm(
    input: Tensor, size: Any, alpha: Tensor | float = 1e-4, beta: Tensor | float = 0.75, k: Any = 1.0
) -> Tensor:
    """``x / (k + alpha * mean of x^2 over size neighbouring channels)^beta`` for ``input
    (N, C, *)``: PyTorch's ``F.local_response_norm`` (AlexNet's normalisation; the window
    reaches ``size // 2`` channels back and ``(size - 1) // 2`` ahead)."""
    op = "local_response_norm"
    x = _F.tensor_arg(input, op)
    if x.ndim < 3:
        raise ValueError(f"Expected 3D or higher dimensionality input (got {x.ndim} dimensions)")
    # (PyTorch's is Python: the rank first, then size as a window's int; alpha, beta and k may be tensors)
    if index_value(size) is None:
        refuse(op, "size", 1, "int", size)
    size = index_value(size)
    if x.numel() == 0:
        return x
    sq = x * x
    if sq.dtype in LOW_PRECISION:  # (PyTorch's steps are ops in the dtype, its avg_pool one kernel: in float32)
        return (
            x
            / ((channel_window_sum(sq.float(), size // 2, (size - 1) // 2) / size).astype(sq.dtype) * alpha + k) ** beta
        )
    s = channel_window_sum(sq, size // 2, (size - 1) // 2)
    # (an integer input's mean of squares is an integer, cut toward zero, as PyTorch's integer avg_pool)
    s = s.div(size, rounding_mode="trunc") if s.dtype.kind in "iu" else s / size  # (avg_pool divides, as here)
    return x / (s * alpha + k) ** beta


# -- torch's top-level spellings (``torch.group_norm``, ``torch.native_layer_norm``, ...) -----------
# (not in ``F``, as in PyTorch; their declarations put them at ``tga.``)
@public(name="group_norm")
def torch_group_norm(input: Tensor, num_groups: int, weight: Tensor | None = None, bias: Tensor | None = None,  # noqa: A002
                     eps: float = 1e-5, cudnn_enabled: bool = True) -> Tensor:  # fmt: skip
    """``torch.group_norm``: :func:`group_norm` without ``F``'s check of the batch (one value per group
    normalises to 0), with PyTorch's ``cudnn_enabled`` flag (no effect here)."""
    return _group_norm(input, num_groups, weight, bias, eps)


@public(dtypes="floating")
def native_layer_norm(input: Tensor, normalized_shape: Any, weight: Tensor | None, bias: Tensor | None,  # noqa: A002
                      eps: float) -> tuple[Tensor, Tensor, Tensor]:  # fmt: skip
    """``F.layer_norm``'s output with the statistics it used: ``(out, mean, rstd)``, the last two of
    shape ``input.shape[:axis] + (1,) * len(normalized_shape)`` and without a graph, as PyTorch's."""
    op = "native_layer_norm"
    x = _F.tensor_arg(input, op)
    shape = tuple(int(s) for s in normalized_shape)
    if not shape or tuple(x.shape[x.ndim - len(shape) :]) != shape or len(shape) > x.ndim:
        raise RuntimeError(f"{op}: normalized_shape {list(shape)} must be the trailing dims of the input, of shape "
                           f"{list(x.shape)}")  # fmt: skip
    axes = tuple(range(x.ndim - len(shape), x.ndim))
    mean = x.mean(axes, keepdims=True)
    xc = x - mean
    rstd = ((xc * xc).mean(axes, keepdims=True) + eps).rsqrt()
    y = xc * rstd
    if weight is not None:
        y = y * weight
    if bias is not None:
        y = y + bias
    return saved_for_backward(y, x, weight, bias), mean.detach(), rstd.detach()  # (what PyTorch's keeps)


@public
def native_batch_norm(input: Tensor, weight: Tensor | None, bias: Tensor | None, running_mean: Tensor | None,  # noqa: A002
                      running_var: Tensor | None, training: bool, momentum: float,
                      eps: float) -> tuple[Tensor, Tensor, Tensor]:  # fmt: skip
    """``F.batch_norm``'s output with the batch's statistics: ``(out, mean, invstd)`` per channel when
    training (the running statistics move by ``momentum``, in place), else two empty tensors."""
    from .conv import batch_norm  # noqa: PLC0415

    x = _F.tensor_arg(input, "native_batch_norm")
    out = saved_for_backward(batch_norm(x, running_mean, running_var, weight, bias, training, momentum, eps), x, weight)
    if not training:
        empty = Tensor.zeros(0, dtype=x.dtype, device=x._dev)
        return out, empty, empty.clone()
    with no_grad():
        axes = (0,) + tuple(range(2, x.ndim))
        mean = x.mean(axes)
        xc = x - mean.reshape((1, -1) + (1,) * (x.ndim - 2))
        invstd = ((xc * xc).mean(axes) + eps).rsqrt()
    return out, mean, invstd


@public(dtypes="floating")
def native_group_norm(input: Tensor, weight: Tensor | None, bias: Tensor | None, N: int, C: int, HxW: int,  # noqa: A002, N803
                      group: int, eps: float) -> tuple[Tensor, Tensor, Tensor]:  # fmt: skip
    """:func:`group_norm` of ``input (N, C, *)`` (``HxW`` positions per channel) with the statistics it
    used: ``(out, mean, rstd)``, each of the last two ``(N, group)`` (differentiable, as PyTorch's)."""
    op = "native_group_norm"
    x = _F.tensor_arg(input, op)
    if x.numel() != N * C * HxW or (x.ndim and x.shape[0] != N) or (x.ndim > 1 and x.shape[1] != C):
        raise RuntimeError(f"{op}: expected input of shape (N={N}, C={C}, HxW={HxW} positions), got {list(x.shape)}")
    if group < 1 or C % group:
        raise RuntimeError(f"{op}: expected number of channels {C} to be divisible by group={group}")
    g = x.reshape(N, group, C // group * HxW)  # (N, G, C/G * positions)
    mean = g.mean(-1, keepdims=True)
    gc = g - mean
    rstd = ((gc * gc).mean(-1, keepdims=True) + eps).rsqrt()
    y = _affine((gc * rstd).reshape(x.shape), weight, bias) if x.ndim >= 2 else (gc * rstd).reshape(x.shape)
    return saved_for_backward(y, x, weight), mean.reshape(N, group), rstd.reshape(N, group)  # (what PyTorch's keeps)
