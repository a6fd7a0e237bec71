"""Convolution layers with PyTorch's arguments, parameter layout and initialisation."""

from __future__ import annotations

from typing import Any

from .. import functional as F
from ..engine.arguments import int_or_ints
from ..tensors._tensor import InvalidArgumentError, Tensor
from .layers import _bias_bound, _kaiming_uniform, _uniform
from .module import Module

_PADDING_MODES = ("zeros", "reflect", "replicate", "circular")


def _tuple(value: Any, n: int, what: str, op: str) -> tuple[int, ...]:
    value = int_or_ints(value)
    if isinstance(value, int):
        return (value,) * n
    if isinstance(value, (tuple, list)) and len(value) == n:
        return tuple(int(v) for v in value)
    raise InvalidArgumentError(f"{op}: {what} must be an int or a tuple of {n} ints, got {value!r}")


def _conv_repr(m: Module) -> str:
    """The arguments that differ from their defaults, in PyTorch's order and spelling (one
    rule for the convolutions and their transposes: ``output_padding`` only the latter have)."""
    nd = len(m.kernel_size)
    s = f"{m.in_channels}, {m.out_channels}, kernel_size={m.kernel_size}, stride={m.stride}"
    if m.padding != (0,) * nd:
        s += f", padding={m.padding}"
    if m.dilation != (1,) * nd:
        s += f", dilation={m.dilation}"
    if getattr(m, "output_padding", (0,) * nd) != (0,) * nd:
        s += f", output_padding={m.output_padding}"
    if m.groups != 1:
        s += f", groups={m.groups}"
    if m.bias is None:
        s += ", bias=False"
    if getattr(m, "padding_mode", "zeros") != "zeros":
        s += f", padding_mode={m.padding_mode}"
    return s


class _ConvNd(Module):
    _nd = 0

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1, padding: Any = 0,
                 dilation: Any = 1, groups: int = 1, bias: bool = True, padding_mode: str = "zeros",
                 device: Any = None, dtype: Any = None) -> None:  # fmt: skip
        super().__init__()
        op, nd = type(self).__name__, self._nd
        if groups < 1 or in_channels % groups or out_channels % groups:
            raise InvalidArgumentError(
                f"{op}: in_channels ({in_channels}) and out_channels ({out_channels}) must be divisible by groups "
                f"({groups})"
            )
        if padding_mode not in _PADDING_MODES:
            raise InvalidArgumentError(f"{op}: padding_mode must be one of {_PADDING_MODES}, got {padding_mode!r}")
        self.in_channels, self.out_channels, self.groups = in_channels, out_channels, groups
        self.kernel_size = _tuple(kernel_size, nd, "kernel_size", op)
        self.stride = _tuple(stride, nd, "stride", op)
        self.dilation = _tuple(dilation, nd, "dilation", op)
        if isinstance(padding, str):
            if padding not in ("same", "valid"):
                raise InvalidArgumentError(f"{op}: padding must be 'same', 'valid', an int or a tuple, got {padding!r}")
            if padding == "same" and any(s != 1 for s in self.stride):
                raise InvalidArgumentError(f"{op}: padding='same' is not supported for strided convolutions")
            self.padding: Any = padding
        else:
            self.padding = _tuple(padding, nd, "padding", op)
        self.padding_mode = padding_mode
        # PyTorch's init: kaiming_uniform_(a=sqrt(5)) for the weight, which is U(±1/sqrt(fan_in)), and the same
        # bound for the bias.
        self.weight = _kaiming_uniform((out_channels, in_channels // groups, *self.kernel_size), device, dtype)
        self.bias = _uniform((out_channels,), _bias_bound(self.weight.shape), device, dtype) if bias else None

    def _explicit_padding(self) -> tuple[tuple[int, int], ...]:
        if self.padding == "valid":
            return ((0, 0),) * self._nd
        if self.padding == "same":
            total = [d * (k - 1) for d, k in zip(self.dilation, self.kernel_size)]
            return tuple((t // 2, t - t // 2) for t in total)
        return tuple((p, p) for p in self.padding)

    def forward(self, input: Tensor) -> Tensor:
        conv = (F.conv1d, F.conv2d, F.conv3d)[self._nd - 1]
        if self.padding_mode == "zeros":
            return conv(input, self.weight, self.bias, self.stride, self.padding, self.dilation, self.groups)
        # Other modes pad first, then convolve without padding (as PyTorch).
        widths = tuple(v for lo_hi in reversed(self._explicit_padding()) for v in lo_hi)
        return conv(F.pad(input, widths, mode=self.padding_mode), self.weight, self.bias, self.stride, 0,
                    self.dilation, self.groups)  # fmt: skip

    def extra_repr(self) -> str:
        return _conv_repr(self)


class Conv1d(_ConvNd):
    """``input (N, C_in, L)`` -> ``(N, C_out, L_out)``; weight ``(C_out, C_in/groups, k)``.

    PyTorch's ``nn.Conv1d(in_channels, out_channels, kernel_size, stride=1, padding=0,
    dilation=1, groups=1, bias=True, padding_mode="zeros")``.
    """

    _nd = 1


class Conv2d(_ConvNd):
    """``input (N, C_in, H, W)`` -> ``(N, C_out, H_out, W_out)``; weight ``(C_out, C_in/groups, kh, kw)``.

    PyTorch's ``nn.Conv2d(in_channels, out_channels, kernel_size, stride=1, padding=0,
    dilation=1, groups=1, bias=True, padding_mode="zeros")``. A ViT's patch embedding,
    ``Conv2d(c, d, kernel_size=p, stride=p)``, runs as one reshape, permute and matmul.
    """

    _nd = 2


class Conv3d(_ConvNd):
    """``input (N, C_in, D, H, W)`` -> ``(N, C_out, D_out, H_out, W_out)``; weight ``(C_out,
    C_in/groups, kd, kh, kw)``: PyTorch's ``nn.Conv3d``, with ``nn.Conv2d``'s arguments."""

    _nd = 3


# -- transposed convolution ------------------------------------------------------------------
class _ConvTransposeNd(Module):
    _nd = 0

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1, padding: Any = 0,
                 output_padding: Any = 0, groups: int = 1, bias: bool = True, dilation: Any = 1,
                 padding_mode: str = "zeros", device: Any = None, dtype: Any = None) -> None:  # fmt: skip
        super().__init__()
        op, nd = type(self).__name__, self._nd
        if groups < 1 or in_channels % groups or out_channels % groups:
            raise InvalidArgumentError(
                f"{op}: in_channels ({in_channels}) and out_channels ({out_channels}) must be divisible by groups "
                f"({groups})"
            )
        if padding_mode != "zeros":  # (PyTorch's own limit)
            raise InvalidArgumentError(f'{op}: only "zeros" padding mode is supported, got {padding_mode!r}')
        self.in_channels, self.out_channels, self.groups = in_channels, out_channels, groups
        self.kernel_size = _tuple(kernel_size, nd, "kernel_size", op)
        self.stride = _tuple(stride, nd, "stride", op)
        self.padding = _tuple(padding, nd, "padding", op)
        self.output_padding = _tuple(output_padding, nd, "output_padding", op)
        self.dilation = _tuple(dilation, nd, "dilation", op)
        self.padding_mode = padding_mode
        # PyTorch's init, kaiming_uniform_(a=sqrt(5)): U(±1/sqrt(fan_in)), where the weight
        # (in, out/groups, *k) has fan_in = out/groups * prod(k); the bias takes the same bound.
        self.weight = _kaiming_uniform((in_channels, out_channels // groups, *self.kernel_size), device, dtype)
        self.bias = _uniform((out_channels,), _bias_bound(self.weight.shape), device, dtype) if bias else None

    def _output_padding(self, input: Tensor, output_size: Any) -> tuple[int, ...]:
        """The ``output_padding`` that gives ``output_size`` (PyTorch's rule: each size must lie
        within ``stride - 1`` above the smallest the convolution can give)."""
        if output_size is None:
            return self.output_padding
        op, nd = type(self).__name__, self._nd
        sizes = tuple(int(s) for s in output_size)
        if len(sizes) not in (nd, input.ndim):
            raise InvalidArgumentError(
                f"{op}: output_size {sizes} must have {nd} or {input.ndim} elements (input shape {tuple(input.shape)})"
            )
        sizes = sizes[-nd:]
        pads = []
        for i in range(nd):
            n = input.shape[input.ndim - nd + i]
            smallest = (n - 1) * self.stride[i] - 2 * self.padding[i] + self.dilation[i] * (self.kernel_size[i] - 1) + 1
            largest = smallest + self.stride[i] - 1
            if not smallest <= sizes[i] <= largest:
                raise InvalidArgumentError(
                    f"{op}: requested output size {sizes} for input {tuple(input.shape)}, but dimension {i} must lie "
                    f"between {smallest} and {largest}"
                )
            pads.append(sizes[i] - smallest)
        return tuple(pads)

    def forward(self, input: Tensor, output_size: Any = None) -> Tensor:
        conv = (F.conv_transpose1d, F.conv_transpose2d, F.conv_transpose3d)[self._nd - 1]
        return conv(input, self.weight, self.bias, self.stride, self.padding, self._output_padding(input, output_size),
                    self.groups, self.dilation)  # fmt: skip

    def extra_repr(self) -> str:
        return _conv_repr(self)


class ConvTranspose1d(_ConvTransposeNd):
    """``input (N, C_in, L)`` -> ``(N, C_out, L_out)``; weight ``(C_in, C_out/groups, k)``.

    PyTorch's ``nn.ConvTranspose1d(in_channels, out_channels, kernel_size, stride=1,
    padding=0, output_padding=0, groups=1, bias=True, dilation=1, padding_mode="zeros")``;
    ``forward(input, output_size=None)``.
    """

    _nd = 1


class ConvTranspose2d(_ConvTransposeNd):
    """``input (N, C_in, H, W)`` -> ``(N, C_out, H_out, W_out)``; weight ``(C_in, C_out/groups, kh, kw)``.

    PyTorch's ``nn.ConvTranspose2d``: the upsampling layer of decoders and GAN generators, with
    ``nn.ConvTranspose1d``'s arguments; ``forward(input, output_size=None)``.
    """

    _nd = 2


class ConvTranspose3d(_ConvTransposeNd):
    """``input (N, C_in, D, H, W)`` -> ``(N, C_out, D_out, H_out, W_out)``; weight ``(C_in,
    C_out/groups, kd, kh, kw)``: PyTorch's ``nn.ConvTranspose3d``; ``forward(input, output_size=None)``."""

    _nd = 3
