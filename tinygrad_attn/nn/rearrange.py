"""Layers that rearrange channels and positions, with PyTorch's names and reprs:
``PixelShuffle``, ``PixelUnshuffle``, ``ChannelShuffle``, ``Fold`` and ``Unfold``, each one
function of :mod:`tinygrad_attn.functional_rearrange` (they hold no parameters)."""

from __future__ import annotations

from typing import Any

from .. import functional as F
from ..tensors._tensor import Tensor
from .module import Module


class PixelShuffle(Module):
    """``(*, C r^2, H, W)`` -> ``(*, C, H r, W r)``: PyTorch's ``nn.PixelShuffle(upscale_factor)``."""

    def __init__(self, upscale_factor: int) -> None:
        super().__init__()
        self.upscale_factor = upscale_factor

    def forward(self, input: Tensor) -> Tensor:
        return F.pixel_shuffle(input, self.upscale_factor)

    def extra_repr(self) -> str:
        return f"upscale_factor={self.upscale_factor}"


class PixelUnshuffle(Module):
    """``(*, C, H r, W r)`` -> ``(*, C r^2, H, W)``: PyTorch's ``nn.PixelUnshuffle(downscale_factor)``."""

    def __init__(self, downscale_factor: int) -> None:
        super().__init__()
        self.downscale_factor = downscale_factor

    def forward(self, input: Tensor) -> Tensor:
        return F.pixel_unshuffle(input, self.downscale_factor)

    def extra_repr(self) -> str:
        return f"downscale_factor={self.downscale_factor}"


class ChannelShuffle(Module):
    """ShuffleNet's channel mixing: PyTorch's ``nn.ChannelShuffle(groups)``."""

    def __init__(self, groups: int) -> None:
        super().__init__()
        self.groups = groups

    def forward(self, input: Tensor) -> Tensor:
        return F.channel_shuffle(input, self.groups)

    def extra_repr(self) -> str:
        return f"groups={self.groups}"


class Fold(Module):
    """Columns of blocks summed back into images: PyTorch's ``nn.Fold(output_size, kernel_size,
    dilation=1, padding=0, stride=1)``."""

    def __init__(self, output_size: Any, kernel_size: Any, dilation: Any = 1, padding: Any = 0,
                 stride: Any = 1) -> None:  # fmt: skip
        super().__init__()
        self.output_size, self.kernel_size = output_size, kernel_size
        self.dilation, self.padding, self.stride = dilation, padding, stride

    def forward(self, input: Tensor) -> Tensor:
        return F.fold(input, self.output_size, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self) -> str:
        return (f"output_size={self.output_size}, kernel_size={self.kernel_size}, dilation={self.dilation}, "
                f"padding={self.padding}, stride={self.stride}")  # fmt: skip


class Unfold(Module):
    """The sliding blocks of images as columns: PyTorch's ``nn.Unfold(kernel_size, dilation=1,
    padding=0, stride=1)``."""

    def __init__(self, kernel_size: Any, dilation: Any = 1, padding: Any = 0, stride: Any = 1) -> None:
        super().__init__()
        self.kernel_size, self.dilation, self.padding, self.stride = kernel_size, dilation, padding, stride

    def forward(self, input: Tensor) -> Tensor:
        return F.unfold(input, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, dilation={self.dilation}, padding={self.padding}, "
                f"stride={self.stride}")  # fmt: skip
