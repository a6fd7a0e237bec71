"""Batch normalisation with PyTorch's arguments, parameters and running-statistics buffers."""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import functional as F
from ..engine.switches import no_grad
from ..engine.warn import warn as _user_warn
from ..tensors._tensor import InvalidArgumentError, Tensor
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


class BatchNorm3d(_BatchNorm):
    """Normalise each channel of ``(N, C, D, H, W)`` over the batch: PyTorch's ``nn.BatchNorm3d``."""

    _dims = (5,)


class SyncBatchNorm(_BatchNorm):
    """PyTorch's ``nn.SyncBatchNorm``: batch normalisation whose statistics a distributed run
    gathers over its processes; in one process (the only kind here) it is ``_BatchNorm``
    over ``(N, C, *)``. ``process_group`` is accepted and unused."""

    _dims = tuple(range(2, 33))

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1, affine: bool = True,
                 track_running_stats: bool = True, process_group: Any = None, device: Any = None, dtype: Any = None,
                 *, bias: bool = True) -> None:  # fmt: skip
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype, bias=bias)
        self.process_group = process_group

    @classmethod
    def convert_sync_batchnorm(cls, module: Module, process_group: Any = None) -> Module:
        """``module`` with each ``BatchNorm*d`` inside replaced by a ``SyncBatchNorm`` holding
        the same parameters and buffers (PyTorch's classmethod)."""
        out = module
        if isinstance(module, _BatchNorm) and not isinstance(module, SyncBatchNorm):
            out = cls(module.num_features, module.eps, module.momentum, module.affine, module.track_running_stats,
                      process_group)  # fmt: skip
            for name in ("weight", "bias"):
                setattr(out, name, getattr(module, name))
            for name in ("running_mean", "running_var", "num_batches_tracked"):
                out.register_buffer(name, getattr(module, name))
            out.training = module.training
        for name, child in module.named_children():
            setattr(out, name, cls.convert_sync_batchnorm(child, process_group))
        return out


class GroupNorm(Module):
    """``F.group_norm`` over ``num_groups`` groups of ``num_channels``: PyTorch's ``nn.GroupNorm(num_groups,
    num_channels, eps=1e-5, affine=True, device=None, dtype=None, *, bias=True)``."""

    def __init__(self, num_groups: int, num_channels: int, eps: float = 1e-5, affine: bool = True, device: Any = None,
                 dtype: Any = None, *, bias: bool = True) -> None:  # fmt: skip
        super().__init__()
        if num_channels % num_groups:
            raise ValueError("num_channels must be divisible by num_groups")
        self.num_groups, self.num_channels, self.eps, self.affine = num_groups, num_channels, eps, affine
        dtype = _float_dtype(dtype)
        self.weight = Parameter(np.ones(num_channels, dtype), device=device) if affine else None
        self.bias = Parameter(np.zeros(num_channels, dtype), device=device) if affine and bias else None

    def forward(self, input: Tensor) -> Tensor:
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}, bias={self.bias is not None}"


class _InstanceNorm(_BatchNorm):
    """PyTorch's instance norms: ``_BatchNorm``'s parameters and buffers (``affine=False``
    and ``track_running_stats=False`` by default), each sample normalised on its own."""

    _unbatched = 0

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1, affine: bool = False,
                 track_running_stats: bool = False, device: Any = None, dtype: Any = None, *,
                 bias: bool = True) -> None:  # fmt: skip
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype, bias=bias)

    def forward(self, input: Tensor) -> Tensor:
        name, nd = type(self).__name__, self._unbatched
        if input.ndim not in (nd, nd + 1):
            raise ValueError(f"{name}: expected {nd}D or {nd + 1}D input (got {input.ndim}D input)")
        channel_axis = input.ndim - nd
        if input.shape[channel_axis] != self.num_features:
            if self.affine:
                raise ValueError(
                    f"{name}: expected input's size at dim={channel_axis} to match num_features "
                    f"({self.num_features}), but got: {input.shape[channel_axis]}."
                )
            _user_warn(f"{name}: input's size at dim={channel_axis} does not match num_features. You can "
                          "silence this warning by not passing in num_features, which is not used because "
                          "affine=False")  # fmt: skip
        x = input.unsqueeze(0) if input.ndim == nd else input
        y = F.instance_norm(x, self.running_mean, self.running_var, self.weight, self.bias,
                            self.training or not self.track_running_stats,
                            0.0 if self.momentum is None else self.momentum, self.eps)  # fmt: skip
        return y.squeeze(0) if input.ndim == nd else y


class InstanceNorm1d(_InstanceNorm):
    """Normalise each channel of each sample of ``(N, C, L)`` (or ``(C, L)``): PyTorch's ``nn.InstanceNorm1d``."""

    _unbatched = 2


class InstanceNorm2d(_InstanceNorm):
    """Normalise each channel of each image of ``(N, C, H, W)``: PyTorch's ``nn.InstanceNorm2d``
    (style transfer's normalisation)."""

    _unbatched = 3


class InstanceNorm3d(_InstanceNorm):
    """Normalise each channel of each volume of ``(N, C, D, H, W)``: PyTorch's ``nn.InstanceNorm3d``."""

    _unbatched = 4


class LocalResponseNorm(Module):
    """``F.local_response_norm`` across ``size`` neighbouring channels: PyTorch's
    ``nn.LocalResponseNorm(size, alpha=1e-4, beta=0.75, k=1.0)``."""

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0) -> None:
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input: Tensor) -> Tensor:
        return F.local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self) -> str:
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


def _cross_map_window(channels: int, size: int) -> np.ndarray:
    """(C, C) 0/1: which channels' squares sum into each channel's scale in PyTorch's
    ``CrossMapLRN2d``. Its running sum starts with the first ``(size - 1) // 2 + 1`` channels,
    adds the next one at each step and drops one only from step ``pre_pad + 1`` on, so the
    windows are those of :class:`LocalResponseNorm` except that channel 0 stays in every
    later window; this reproduces that sum as written."""
    pre_pad = int((size - 1) / 2 + 1)
    window = np.zeros((channels, channels))
    window[0, : min(pre_pad, channels)] = 1
    for c in range(1, channels):
        window[c] = window[c - 1]
        if c < channels - pre_pad + 1:
            window[c, c + pre_pad - 1] += 1
        if c > pre_pad:
            window[c, c - pre_pad] -= 1
    return window


class CrossMapLRN2d(Module):
    """PyTorch's ``nn.CrossMapLRN2d(size, alpha=1e-4, beta=0.75, k=1)``: Lua Torch's local
    response normalisation across channels of a 4-d input, ``x / (k + alpha / size *
    sum(x[window] ** 2)) ** beta``, with PyTorch's windows (see :func:`_cross_map_window`).

    Its gradient is the derivative of that forward; PyTorch's hand-written backward is not
    (``torch.autograd.gradcheck`` fails on it), so the two gradients differ."""

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1) -> None:
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input: Tensor) -> Tensor:
        if input.ndim != 4:
            raise ValueError(f"CrossMapLRN2d: Expected input to be 4D, got {input.ndim}D instead.")
        n, c, h, w = input.shape
        window = Tensor(_cross_map_window(c, self.size), dtype=input.dtype, device=input.device)
        sums = (window @ (input * input).reshape(n, c, h * w)).reshape(n, c, h, w)  # (N, C, H, W)
        return input * (sums * (self.alpha / self.size) + self.k) ** (-self.beta)

    def extra_repr(self) -> str:
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"
