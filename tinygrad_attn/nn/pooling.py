"""Pooling layers with PyTorch's arguments (they hold no parameters)."""

from __future__ import annotations

from typing import Any

from .. import functional as F
from ..tensors._tensor import Tensor
from .module import Module


class _MaxPoolNd(Module):
    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0, dilation: Any = 1,
                 return_indices: bool = False, ceil_mode: bool = False) -> None:  # fmt: skip
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding, self.dilation = padding, dilation
        self.return_indices, self.ceil_mode = return_indices, ceil_mode

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
                f"dilation={self.dilation}, ceil_mode={self.ceil_mode}")  # fmt: skip


class MaxPool1d(_MaxPoolNd):
    """The max of each window of ``(N, C, L)``: PyTorch's ``nn.MaxPool1d``."""

    def forward(self, input: Tensor) -> Tensor:
        return F.max_pool1d(input, self.kernel_size, self.stride, self.padding, self.dilation, self.ceil_mode,
                            self.return_indices)  # fmt: skip


class MaxPool2d(_MaxPoolNd):
    """The max of each window of ``(N, C, H, W)``: PyTorch's ``nn.MaxPool2d``."""

    def forward(self, input: Tensor) -> Tensor:
        return F.max_pool2d(input, self.kernel_size, self.stride, self.padding, self.dilation, self.ceil_mode,
                            self.return_indices)  # fmt: skip


class AvgPool2d(Module):
    """The mean of each window of ``(N, C, H, W)``: PyTorch's ``nn.AvgPool2d``."""

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0, ceil_mode: bool = False,
                 count_include_pad: bool = True, divisor_override: int | None = None) -> None:  # fmt: skip
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding, self.ceil_mode = padding, ceil_mode
        self.count_include_pad, self.divisor_override = count_include_pad, divisor_override

    def forward(self, input: Tensor) -> Tensor:
        return F.avg_pool2d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad, self.divisor_override)  # fmt: skip

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AdaptiveAvgPool2d(Module):
    """Average ``(N, C, H, W)`` down to ``output_size``: PyTorch's ``nn.AdaptiveAvgPool2d``."""

    def __init__(self, output_size: Any) -> None:
        super().__init__()
        self.output_size = output_size

    def forward(self, input: Tensor) -> Tensor:
        return F.adaptive_avg_pool2d(input, self.output_size)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class MaxPool3d(_MaxPoolNd):
    """The max of each window of ``(N, C, D, H, W)``: PyTorch's ``nn.MaxPool3d``."""

    def forward(self, input: Tensor) -> Tensor:
        return F.max_pool3d(input, self.kernel_size, self.stride, self.padding, self.dilation, self.ceil_mode,
                            self.return_indices)  # fmt: skip


class AvgPool1d(Module):
    """The mean of each window of ``(N, C, L)``: PyTorch's ``nn.AvgPool1d`` (its sizes stored
    as 1-tuples, as PyTorch stores them)."""

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0, ceil_mode: bool = False,
                 count_include_pad: bool = True) -> None:  # fmt: skip
        super().__init__()
        self.kernel_size = _single(kernel_size)
        self.stride = _single(stride if stride is not None else kernel_size)
        self.padding = _single(padding)
        self.ceil_mode, self.count_include_pad = ceil_mode, count_include_pad

    def forward(self, input: Tensor) -> Tensor:
        return F.avg_pool1d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode, self.count_include_pad)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


def _single(v: Any) -> tuple:
    return tuple(v) if isinstance(v, (tuple, list)) else (v,)


class AvgPool3d(AvgPool2d):
    """The mean of each window of ``(N, C, D, H, W)``: PyTorch's ``nn.AvgPool3d``."""

    def forward(self, input: Tensor) -> Tensor:
        return F.avg_pool3d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad, self.divisor_override)  # fmt: skip


class _AdaptivePool(Module):
    _fn = ""

    def __init__(self, output_size: Any, return_indices: bool = False) -> None:
        super().__init__()
        self.output_size = output_size
        if self._fn.startswith("adaptive_max"):
            self.return_indices = return_indices

    def forward(self, input: Tensor) -> Any:
        fn = getattr(F, self._fn)
        if self._fn.startswith("adaptive_max"):
            return fn(input, self.output_size, self.return_indices)
        return fn(input, self.output_size)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveAvgPool1d(_AdaptivePool):
    """Average ``(N, C, L)`` down to ``output_size``: PyTorch's ``nn.AdaptiveAvgPool1d(output_size)``."""

    _fn = "adaptive_avg_pool1d"

    def __init__(self, output_size: Any) -> None:
        super().__init__(output_size)


class AdaptiveAvgPool3d(_AdaptivePool):
    """Average ``(N, C, D, H, W)`` down to ``output_size``: PyTorch's ``nn.AdaptiveAvgPool3d(output_size)``."""

    _fn = "adaptive_avg_pool3d"

    def __init__(self, output_size: Any) -> None:
        super().__init__(output_size)


class AdaptiveMaxPool1d(_AdaptivePool):
    """The max of each adaptive window of ``(N, C, L)``: PyTorch's ``nn.AdaptiveMaxPool1d(output_size,
    return_indices=False)``."""

    _fn = "adaptive_max_pool1d"


class AdaptiveMaxPool2d(_AdaptivePool):
    """PyTorch's ``nn.AdaptiveMaxPool2d(output_size, return_indices=False)`` over ``(N, C, H, W)``."""

    _fn = "adaptive_max_pool2d"


class AdaptiveMaxPool3d(_AdaptivePool):
    """PyTorch's ``nn.AdaptiveMaxPool3d(output_size, return_indices=False)`` over ``(N, C, D, H, W)``."""

    _fn = "adaptive_max_pool3d"


class _LPPool(Module):
    _fn = ""

    def __init__(self, norm_type: float, kernel_size: Any, stride: Any = None, ceil_mode: bool = False) -> None:
        super().__init__()
        self.norm_type, self.kernel_size, self.stride, self.ceil_mode = norm_type, kernel_size, stride, ceil_mode

    def forward(self, input: Tensor) -> Tensor:
        return getattr(F, self._fn)(input, float(self.norm_type), self.kernel_size, self.stride, self.ceil_mode)

    def extra_repr(self) -> str:
        return (f"norm_type={self.norm_type}, kernel_size={self.kernel_size}, stride={self.stride}, "
                f"ceil_mode={self.ceil_mode}")  # fmt: skip


class LPPool1d(_LPPool):
    """``(sum of x^p over each window)^(1/p)`` of ``(N, C, L)``: PyTorch's ``nn.LPPool1d(norm_type,
    kernel_size, stride=None, ceil_mode=False)``."""

    _fn = "lp_pool1d"


class LPPool2d(_LPPool):
    """PyTorch's ``nn.LPPool2d`` over ``(N, C, H, W)``."""

    _fn = "lp_pool2d"


class LPPool3d(_LPPool):
    """PyTorch's ``nn.LPPool3d`` over ``(N, C, D, H, W)``."""

    _fn = "lp_pool3d"


class _FractionalMaxPool(Module):
    _nd = 2

    def __init__(self, kernel_size: Any, output_size: Any = None, output_ratio: Any = None,
                 return_indices: bool = False, _random_samples: Tensor | None = None) -> None:  # fmt: skip
        super().__init__()
        nd, name = self._nd, type(self).__name__

        def tup(v: Any) -> tuple:
            return tuple(v) if isinstance(v, (tuple, list)) else (v,) * nd

        self.kernel_size = tup(kernel_size)
        self.return_indices = return_indices
        self.register_buffer("_random_samples", _random_samples)  # fixed placements, else drawn per call
        self.output_size = tup(output_size) if output_size is not None else None
        self.output_ratio = tup(output_ratio) if output_ratio is not None else None
        if output_size is None and output_ratio is None:
            raise ValueError(f"{name} requires specifying either an output size, or a pooling ratio")
        if output_size is not None and output_ratio is not None:
            raise ValueError("only one of output_size and output_ratio may be specified")
        if self.output_ratio is not None and not all(0 < r < 1 for r in self.output_ratio):
            raise ValueError(f"output_ratio must be between 0 and 1 (got {output_ratio})")

    def forward(self, input: Tensor) -> Any:
        fn = F.fractional_max_pool2d if self._nd == 2 else F.fractional_max_pool3d
        return fn(input, self.kernel_size, self.output_size, self.output_ratio, self.return_indices,
                  _random_samples=self._random_samples)  # fmt: skip


class FractionalMaxPool2d(_FractionalMaxPool):
    """PyTorch's ``nn.FractionalMaxPool2d(kernel_size, output_size=None, output_ratio=None,
    return_indices=False, _random_samples=None)``: see :func:`F.fractional_max_pool2d`; the
    windows' placement is drawn from the default generator at each call (as PyTorch's)
    unless ``_random_samples`` fixes it."""

    _nd = 2


class FractionalMaxPool3d(_FractionalMaxPool):
    """PyTorch's ``nn.FractionalMaxPool3d``: :class:`FractionalMaxPool2d` over ``(N, C, T, H, W)``."""

    _nd = 3
