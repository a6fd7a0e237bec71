"""Activation layers with PyTorch's names and constructor arguments.

Each wraps one function of :mod:`tinygrad_attn.functional`, so ``nn.ReLU()(x)`` and
``F.relu(x)`` are the same op.

>>> from tinygrad_attn import nn
>>> nn.Softmax(dim=-1)(Tensor([[1.0, 1.0]])).tolist()
[[0.5, 0.5]]
"""

from __future__ import annotations

from .. import functional as F
from .._tensor import Tensor
from .module import Module


class ReLU(Module):
    """``max(x, 0)``. ``inplace`` is accepted for PyTorch code and ignored (the result is new)."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, x: Tensor) -> Tensor:
        return F.relu(x)


class GELU(Module):
    """Gaussian error linear unit; ``approximate="tanh"`` for the tanh form of GPT-2."""

    def __init__(self, approximate: str = "none") -> None:
        super().__init__()
        if approximate not in ("none", "tanh"):
            raise ValueError(f"GELU: approximate must be 'none' or 'tanh', got {approximate!r}")
        self.approximate = approximate

    def forward(self, x: Tensor) -> Tensor:
        return F.gelu(x, self.approximate)

    def extra_repr(self) -> str:
        return f"approximate={self.approximate!r}"


class Tanh(Module):
    def forward(self, x: Tensor) -> Tensor:
        return F.tanh(x)


class Sigmoid(Module):
    def forward(self, x: Tensor) -> Tensor:
        return F.sigmoid(x)


def _legacy_dim(x: Tensor) -> int:
    # PyTorch's rule when no dim is given: the first axis for 0-, 1- and 3-D inputs
    # (an unbatched vector or image), the second otherwise (batched).
    return 0 if x.ndim in (0, 1, 3) else 1


class Softmax(Module):
    """``softmax`` along ``dim``; without ``dim``, PyTorch's legacy choice of axis."""

    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, x: Tensor) -> Tensor:
        return F.softmax(x, _legacy_dim(x) if self.dim is None else self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class LogSoftmax(Softmax):
    """``log_softmax`` along ``dim``; without ``dim``, PyTorch's legacy choice of axis."""

    def forward(self, x: Tensor) -> Tensor:
        return F.log_softmax(x, _legacy_dim(x) if self.dim is None else self.dim)
