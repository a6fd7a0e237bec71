"""Layers that make the spatial axes larger (they hold no parameters): ``Upsample`` and
its fixed-mode forms over ``F.interpolate``, and ``MaxUnpool1d/2d`` over ``F.max_unpool*``,
with PyTorch's arguments."""

from __future__ import annotations

from typing import Any

from .. import functional as F
from ..tensors._tensor import Tensor
from .conv import _tuple
from .module import Module


class Upsample(Module):
    """PyTorch's ``nn.Upsample(size=None, scale_factor=None, mode="nearest",
    align_corners=None, recompute_scale_factor=None)``: ``F.interpolate`` as a layer."""

    def __init__(self, size: Any = None, scale_factor: Any = None, mode: str = "nearest",
                 align_corners: bool | None = None, recompute_scale_factor: bool | None = None) -> None:  # fmt: skip
        super().__init__()
        self.size = size
        # (PyTorch keeps a number as a float, a tuple as a tuple of floats)
        if isinstance(scale_factor, (tuple, list)):
            self.scale_factor: Any = tuple(float(f) for f in scale_factor)
        else:
            self.scale_factor = float(scale_factor) if scale_factor is not None else None
        self.mode, self.align_corners = mode, align_corners
        self.recompute_scale_factor = recompute_scale_factor

    def forward(self, input: Tensor) -> Tensor:
        return F.interpolate(input, self.size, self.scale_factor, self.mode, self.align_corners,
                             recompute_scale_factor=self.recompute_scale_factor)  # fmt: skip

    def extra_repr(self) -> str:
        what = f"scale_factor={self.scale_factor!r}" if self.scale_factor is not None else f"size={self.size!r}"
        return f"{what}, mode={self.mode!r}"


class UpsamplingNearest2d(Upsample):
    """PyTorch's ``nn.UpsamplingNearest2d(size=None, scale_factor=None)``."""

    def __init__(self, size: Any = None, scale_factor: Any = None) -> None:
        super().__init__(size, scale_factor, mode="nearest")


class UpsamplingBilinear2d(Upsample):
    """PyTorch's ``nn.UpsamplingBilinear2d(size=None, scale_factor=None)``: bilinear with
    ``align_corners=True``."""

    def __init__(self, size: Any = None, scale_factor: Any = None) -> None:
        super().__init__(size, scale_factor, mode="bilinear", align_corners=True)


class _MaxUnpoolNd(Module):
    _nd = 0

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0) -> None:
        super().__init__()
        op, nd = type(self).__name__, self._nd
        # (tuples, as PyTorch stores them)
        self.kernel_size = _tuple(kernel_size, nd, "kernel_size", op)
        self.stride = _tuple(stride if stride is not None else kernel_size, nd, "stride", op)
        self.padding = _tuple(padding, nd, "padding", op)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxUnpool1d(_MaxUnpoolNd):
    """PyTorch's ``nn.MaxUnpool1d(kernel_size, stride=None, padding=0)``; ``forward(input,
    indices, output_size=None)`` with the indices of ``MaxPool1d(..., return_indices=True)``."""

    _nd = 1

    def forward(self, input: Tensor, indices: Tensor, output_size: Any = None) -> Tensor:
        return F.max_unpool1d(input, indices, self.kernel_size, self.stride, self.padding, output_size)


class MaxUnpool2d(_MaxUnpoolNd):
    """PyTorch's ``nn.MaxUnpool2d(kernel_size, stride=None, padding=0)``; ``forward(input,
    indices, output_size=None)`` with the indices of ``MaxPool2d(..., return_indices=True)``."""

    _nd = 2

    def forward(self, input: Tensor, indices: Tensor, output_size: Any = None) -> Tensor:
        return F.max_unpool2d(input, indices, self.kernel_size, self.stride, self.padding, output_size)


class MaxUnpool3d(_MaxUnpoolNd):
    """PyTorch's ``nn.MaxUnpool3d(kernel_size, stride=None, padding=0)``; ``forward(input,
    indices, output_size=None)`` with the indices of ``MaxPool3d(..., return_indices=True)``."""

    _nd = 3

    def forward(self, input: Tensor, indices: Tensor, output_size: Any = None) -> Tensor:
        return F.max_unpool3d(input, indices, self.kernel_size, self.stride, self.padding, output_size)
