"""Batch normalisation with PyTorch's arguments, parameters and running-statistics buffers."""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import functional as F
from .._tensor import InvalidArgumentError, Tensor
from ..engine.switches import no_grad
from .layers import _float_dtype
from .module import Module, Parameter


class _BatchNorm(Module):
    _dims: tuple[int, ...] = ()

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1, affine: bool = True,
                 track_running_stats: bool = True, device: Any = None, dtype: Any = None, *,
                 bias: bool = True) -> None:  # fmt: skip
        super().__init__()
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        dtype = _float_dtype(dtype)
        self.weight = Parameter(np.ones(num_features, dtype), device=device) if affine else None
        self.bias = Parameter(np.zeros(num_features, dtype), device=device) if affine and bias else None
        if track_running_stats:
            self.register_buffer("running_mean", Tensor(np.zeros(num_features, dtype), device=device))
            self.register_buffer("running_var", Tensor(np.ones(num_features, dtype), device=device))
            self.register_buffer("num_batches_tracked", Tensor(np.array(0, dtype=np.int64), device=device))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)

    def reset_running_stats(self) -> None:
        """Running mean 0, variance 1, no batches seen."""
        if self.track_running_stats:
            with no_grad():
                self.running_mean.zero_()
                self.running_var.fill_(1.0)
                self.num_batches_tracked.zero_()

    def forward(self, input: Tensor) -> Tensor:
        if input.ndim not in self._dims:
            want = " or ".join(f"{d}D" for d in self._dims)
            raise InvalidArgumentError(f"{type(self).__name__}: expected {want} input (got {input.ndim}D input)")
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            with no_grad():
                self.num_batches_tracked.add_(1)
            if self.momentum is None:  # a cumulative average over all batches so far
                factor = 1.0 / float(self.num_batches_tracked)
        bn_training = self.training or (self.running_mean is None and self.running_var is None)
        track = not self.training or self.track_running_stats
        return F.batch_norm(input, self.running_mean if track else None, self.running_var if track else None,
                            self.weight, self.bias, bn_training, factor, self.eps)  # fmt: skip

    def extra_repr(self) -> str:
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, affine={self.affine}, "
                f"bias={self.bias is not None}, "
                f"track_running_stats={self.track_running_stats}")  # fmt: skip


class BatchNorm1d(_BatchNorm):
    """Normalise each channel of ``(N, C)`` or ``(N, C, L)`` over the batch: PyTorch's ``nn.BatchNorm1d``."""

    _dims = (2, 3)


class BatchNorm2d(_BatchNorm):
    """Normalise each channel of ``(N, C, H, W)`` over the batch: PyTorch's ``nn.BatchNorm2d``."""

    _dims = (4,)
