"""SparseAdam, as ``torch.optim.SparseAdam``: Adam for sparse gradients only (``nn.Embedding(sparse=True)``'s),
whose moments change at the gradient's rows only; a dense gradient is PyTorch's error."""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

from ..engine.function import SparseData
from ..tensors._tensor import Tensor
from .optimizer import Optimizer


class SparseAdam(Optimizer):
    """PyTorch's constructor, checks and lazy update: at the rows of a (coalesced) sparse gradient
    ``g``, ``m += (1 - b1) (g - m)``, ``v += (1 - b2) (g^2 - v)`` and ``p -= step_size * m / (sqrt(v) + eps)``;
    the other rows, and their moments, stay. A dense gradient raises PyTorch's ``RuntimeError``."""

    def __init__(self, params: Iterable[Any], lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, maximize: bool = False) -> None:  # fmt: skip
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps, maximize=maximize))

    def _check(self, group: dict[str, Any]) -> None:
        self._require(float(group["lr"]) >= 0.0, f"Invalid learning rate: {group['lr']}")
        self._require(float(group["eps"]) >= 0.0, f"Invalid epsilon value: {group['eps']}")
        for i, b in enumerate(group["betas"]):
            self._require(0.0 <= float(b) < 1.0, f"Invalid beta parameter at index {i}: {b}")

    def _check_sparse(self, p: Tensor, group: dict[str, Any]) -> None:
        pass

    def _sparse_grad(self, p: Tensor, grad: Any, group: dict[str, Any]) -> Any:
        return grad

    def _update(self, p: Tensor, grad: Any, state: dict[str, Any], group: dict[str, Any]) -> Any:
        if not isinstance(grad, SparseData):
            raise RuntimeError("SparseAdam does not support dense gradients, please consider Adam instead")
        ns = p._dev.ops
        if not state:
            state.update(step=0, exp_avg=Tensor._wrap(ns.zeros_like(p._data), p._dev),
                         exp_avg_sq=Tensor._wrap(ns.zeros_like(p._data), p._dev))  # fmt: skip
        state["step"] += 1
        g = grad.coalesce()
        at = tuple(g.indices[i] for i in range(g.sparse_dim))
        b1, b2 = (float(b) for b in group["betas"])
        m, v, w = state["exp_avg"]._data, state["exp_avg_sq"]._data, p._data
        old_m, old_v = m[at], v[at]
        dm = (g.values - old_m) * (1 - b1)
        dv = (g.values * g.values - old_v) * (1 - b2)
        m[at] = old_m + dm
        v[at] = old_v + dv
        numer, denom = dm + old_m, ns.sqrt(dv + old_v) + float(group["eps"])
        step = state["step"]
        step_size = float(group["lr"]) * math.sqrt(1 - b2**step) / (1 - b1**step)
        w = w.copy()
        w[at] = w[at] + (-step_size * (numer / denom))
        return w
