"""Padding layers with PyTorch's names: ``ZeroPad``, ``ConstantPad``, ``ReflectionPad``,
``ReplicationPad`` and ``CircularPad`` of 1, 2 and 3 trailing axes, each ``F.pad`` with its
mode. ``padding`` is an int (every side) or ints ``(left, right, top, bottom, front, back)``
from the last axis back, as ``F.pad`` reads them (``2 * nd`` of them, or as many as ``F.pad``
takes for the input, as PyTorch's modules pass them on).

>>> nn.ReflectionPad1d(2)(x)  # doctest: +SKIP  (x: (N, C, L) -> (N, C, L + 4))
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .. import functional as F
from ..tensors._tensor import Tensor
from .module import Module


def _widths(padding: Any, nd: int) -> tuple:
    """PyTorch's ``_ntuple(2 * nd)``: an iterable as its tuple (of any length: ``F.pad`` reads it
    at the forward, from the last axis back), anything else repeated for every side."""
    if isinstance(padding, Iterable):
        return tuple(padding)
    return (padding,) * (2 * nd)


class _PadNd(Module):
    _nd = 0
    _mode = "constant"

    def __init__(self, padding: Any) -> None:
        super().__init__()
        self.padding = _widths(padding, self._nd)

    def forward(self, input: Tensor) -> Tensor:
        nd, op = self._nd, type(self).__name__
        if self._mode == "circular" and input.ndim not in (nd + 1, nd + 2):  # (PyTorch's module checks first)
            raise ValueError(f"{op}: expected {nd + 1}D or {nd + 2}D input (got {input.ndim}D input)")
        if self._mode == "constant":
            return F.pad(input, self.padding, "constant", self.value)
        return F.pad(input, self.padding, self._mode)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class _ConstantPadNd(_PadNd):
    def __init__(self, padding: Any, value: float) -> None:
        super().__init__(padding)
        self.value = value

    def extra_repr(self) -> str:
        return f"padding={self.padding}, value={self.value}"


class _ZeroPadNd(_ConstantPadNd):
    def __init__(self, padding: Any) -> None:
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class ZeroPad1d(_ZeroPadNd):
    """Zeros around the last axis: PyTorch's ``nn.ZeroPad1d(padding)``."""

    _nd = 1


class ZeroPad2d(_ZeroPadNd):
    """Zeros around the last two axes: PyTorch's ``nn.ZeroPad2d(padding)``."""

    _nd = 2


class ZeroPad3d(_ZeroPadNd):
    """Zeros around the last three axes: PyTorch's ``nn.ZeroPad3d(padding)``."""

    _nd = 3


class ConstantPad1d(_ConstantPadNd):
    """``value`` around the last axis: PyTorch's ``nn.ConstantPad1d(padding, value)``."""

    _nd = 1


class ConstantPad2d(_ConstantPadNd):
    """``value`` around the last two axes: PyTorch's ``nn.ConstantPad2d(padding, value)``."""

    _nd = 2


class ConstantPad3d(_ConstantPadNd):
    """``value`` around the last three axes: PyTorch's ``nn.ConstantPad3d(padding, value)``."""

    _nd = 3


class ReflectionPad1d(_PadNd):
    """The last axis mirrored at its edges (the edge not repeated): PyTorch's ``nn.ReflectionPad1d``."""

    _nd, _mode = 1, "reflect"


class ReflectionPad2d(_PadNd):
    """The last two axes mirrored at their edges: PyTorch's ``nn.ReflectionPad2d``."""

    _nd, _mode = 2, "reflect"


class ReflectionPad3d(_PadNd):
    """The last three axes mirrored at their edges: PyTorch's ``nn.ReflectionPad3d``."""

    _nd, _mode = 3, "reflect"


class ReplicationPad1d(_PadNd):
    """The edge of the last axis repeated: PyTorch's ``nn.ReplicationPad1d``."""

    _nd, _mode = 1, "replicate"


class ReplicationPad2d(_PadNd):
    """The edges of the last two axes repeated: PyTorch's ``nn.ReplicationPad2d``."""

    _nd, _mode = 2, "replicate"


class ReplicationPad3d(_PadNd):
    """The edges of the last three axes repeated: PyTorch's ``nn.ReplicationPad3d``."""

    _nd, _mode = 3, "replicate"


class CircularPad1d(_PadNd):
    """The last axis wrapped around: PyTorch's ``nn.CircularPad1d``."""

    _nd, _mode = 1, "circular"


class CircularPad2d(_PadNd):
    """The last two axes wrapped around: PyTorch's ``nn.CircularPad2d``."""

    _nd, _mode = 2, "circular"


class CircularPad3d(_PadNd):
    """The last three axes wrapped around: PyTorch's ``nn.CircularPad3d``."""

    _nd, _mode = 3, "circular"
