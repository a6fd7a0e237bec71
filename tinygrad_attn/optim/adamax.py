"""Adamax, as ``torch.optim.Adamax``: Adam with the infinity norm in place of the second moment."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..tensors._tensor import Tensor
from .optimizer import Optimizer


class Adamax(Optimizer):
    """With ``g = grad + weight_decay * p`` at step ``t``: ``m = b1 m + (1 - b1) g``,
    ``u = max(b2 u, |g| + eps)`` and ``p -= lr / (1 - b1^t) * m / u`` (``exp_avg``, ``exp_inf``).

    >>> opt = Adamax(model.parameters(), lr=2e-3)  # doctest: +SKIP
    """

    def __init__(self, params: Iterable[Any], lr: float = 2e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0, foreach: bool | None = None, *, maximize: bool = False,
                 differentiable: bool = False, capturable: bool = False) -> None:  # fmt: skip
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay, foreach=foreach,
                                      maximize=maximize, differentiable=differentiable, capturable=capturable))  # fmt: skip

    def _update(self, p: Tensor, grad: Any, state: dict[str, Any], group: dict[str, Any]) -> Any:
        ns = p._dev.ops
        lr, eps, wd = float(group["lr"]), float(group["eps"]), float(group["weight_decay"])
        b1, b2 = (float(b) for b in group["betas"])
        if not state:
            state.update(step=0, exp_avg=self._zeros_like(p), exp_inf=self._zeros_like(p))
        state["step"] += 1
        w = p._data
        if wd:
            grad = grad + wd * w
        m, u = state["exp_avg"], state["exp_inf"]
        m._data = m._data + (1.0 - b1) * (grad - m._data)
        u._data = ns.maximum(u._data * b2, ns.abs(grad) + eps)
        return w - lr / (1.0 - b1 ** state["step"]) * (m._data / u._data)
