"""SparseAdam, as ``torch.optim.SparseAdam``: Adam for sparse gradients only. Sparse tensors are
outside this library, so every gradient here is dense, and a step raises PyTorch's error."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..tensors._tensor import Tensor
from .optimizer import Optimizer


class SparseAdam(Optimizer):
    """PyTorch's constructor and checks; ``step`` with a (dense) gradient raises
    ``RuntimeError`` as PyTorch's does, pointing at :class:`Adam`."""

    def __init__(self, params: Iterable[Any], lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, maximize: bool = False) -> None:  # fmt: skip
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps, maximize=maximize))

    def _check(self, group: dict[str, Any]) -> None:
        self._require(float(group["lr"]) >= 0.0, f"Invalid learning rate: {group['lr']}")
        self._require(float(group["eps"]) >= 0.0, f"Invalid epsilon value: {group['eps']}")
        for i, b in enumerate(group["betas"]):
            self._require(0.0 <= float(b) < 1.0, f"Invalid beta parameter at index {i}: {b}")

    def _update(self, p: Tensor, grad: Any, state: dict[str, Any], group: dict[str, Any]) -> Any:
        raise RuntimeError("SparseAdam does not support dense gradients, please consider Adam instead")
