"""Basic layers, with PyTorch's weight layouts and default initialisations."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import functional as F
from ..random import host_generator
from ..tensor import Tensor
from .module import Module, Parameter


def _uniform(shape: tuple[int, ...], bound: float, device: Any = None, dtype: Any = np.float32) -> Parameter:
    arr = host_generator().uniform(-bound, bound, shape)
    return Parameter(arr.astype(dtype), device=device)


class Linear(Module):
    """``y = x @ weight.T + bias`` with ``weight`` of shape ``(out_features, in_features)``.

    Initialised as PyTorch does: both uniform in ``±1/sqrt(in_features)``.
    """

    def __init__(self, in_features: int, out_features: int, bias: bool = True, device: Any = None,
                 dtype: Any = np.float32) -> None:  # fmt: skip
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        bound = 1.0 / math.sqrt(in_features) if in_features else 0.0
        self.weight = _uniform((out_features, in_features), bound, device, dtype)
        self.bias = _uniform((out_features,), bound, device, dtype) if bias else None

    def forward(self, x: Tensor) -> Tensor:
        if x.shape[-1:] != (self.in_features,):
            raise ValueError(f"Linear({self.in_features}, {self.out_features}): input of shape {x.shape} "
                             f"must end in {self.in_features}")  # fmt: skip
        y = x @ self.weight.mT  # (..., out)
        return y + self.bias if self.bias is not None else y

    def extra_repr(self) -> str:
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"


class Embedding(Module):
    """A table of ``num`` vectors of size ``dim``, looked up by integer ids (N(0, 1) init)."""

    def __init__(self, num: int, dim: int, device: Any = None, dtype: Any = np.float32) -> None:
        super().__init__()
        self.num, self.dim = num, dim
        self.weight = Parameter(host_generator().standard_normal((num, dim)).astype(dtype), device=device)

    def forward(self, ids: Any) -> Tensor:
        if not isinstance(ids, Tensor):
            ids = Tensor(np.asarray(ids), device=self.weight.device)
        host = ids.numpy()
        if host.dtype.kind == "f":
            if not np.all(host == np.round(host)):
                raise TypeError("Embedding: ids must be integers")
            host = host.astype(np.int64)
        elif host.dtype.kind not in "iu":
            raise TypeError(f"Embedding: ids must be integers, got {host.dtype}")
        if host.size and (host.min() < 0 or host.max() >= self.num):
            bad = host.max() if host.max() >= self.num else host.min()
            raise IndexError(f"Embedding({self.num}, {self.dim}): id {bad} is out of range [0, {self.num})")
        return self.weight[host]  # (..., dim); repeated ids accumulate gradient

    def extra_repr(self) -> str:
        return f"{self.num}, {self.dim}"


class LayerNorm(Module):
    """Normalise the last axis; learnable ``weight`` (ones) and ``bias`` (zeros)."""

    def __init__(self, dim: int, eps: float = 1e-5, device: Any = None, dtype: Any = np.float32) -> None:
        super().__init__()
        self.dim, self.eps = dim, eps
        self.weight = Parameter(np.ones(dim, dtype), device=device)
        self.bias = Parameter(np.zeros(dim, dtype), device=device)

    def forward(self, x: Tensor) -> Tensor:
        return F.layer_norm(x, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return f"{self.dim}, eps={self.eps}"


class Dropout(Module):
    """Zero elements with probability ``p`` while training; the identity in ``eval()``."""

    def __init__(self, p: float = 0.5) -> None:
        super().__init__()
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"Dropout: p must be in [0, 1], got {p}")
        self.p = p

    def forward(self, x: Tensor) -> Tensor:
        return F.dropout(x, self.p, self.training)

    def extra_repr(self) -> str:
        return f"p={self.p}"
