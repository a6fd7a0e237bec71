"""RMSprop, as ``torch.optim.RMSprop``: steps scaled by a running root mean square of the gradient."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..tensors._tensor import Tensor
from .optimizer import Optimizer


class RMSprop(Optimizer):
    """With ``g = grad + weight_decay * p``: ``v = alpha v + (1 - alpha) g^2`` and
    ``p -= lr * g / (sqrt(v) + eps)``; ``centered`` subtracts the square of the running
    mean of ``g`` from ``v`` first, and ``momentum`` keeps ``buf = momentum buf + g / avg``
    and steps by ``lr * buf``.

    >>> opt = RMSprop(model.parameters(), lr=1e-3, momentum=0.9)  # doctest: +SKIP
    """

    def __init__(self, params: Iterable[Any], lr: float = 1e-2, alpha: float = 0.99, eps: float = 1e-8,
                 weight_decay: float = 0, momentum: float = 0, centered: bool = False, capturable: bool = False,
                 foreach: bool | None = None, maximize: bool = False, differentiable: bool = False) -> None:  # fmt: skip
        super().__init__(params, dict(lr=lr, momentum=momentum, alpha=alpha, eps=eps, centered=centered,
                                      weight_decay=weight_decay, capturable=capturable, foreach=foreach,
                                      maximize=maximize, differentiable=differentiable))  # fmt: skip

    def _check(self, group: dict[str, Any]) -> None:
        super()._check(group)
        self._require(float(group["momentum"]) >= 0.0, f"Invalid momentum value: {group['momentum']}")
        self._require(float(group["alpha"]) >= 0.0, f"Invalid alpha value: {group['alpha']}")

    def _update(self, p: Tensor, grad: Any, state: dict[str, Any], group: dict[str, Any]) -> Any:
        ns = p._dev.ops
        lr, alpha, eps = float(group["lr"]), float(group["alpha"]), float(group["eps"])
        wd, mu = float(group["weight_decay"]), float(group["momentum"])
        if not state:
            state.update(step=0, square_avg=self._zeros_like(p))
        if mu > 0 and "momentum_buffer" not in state:
            state["momentum_buffer"] = self._zeros_like(p)
        if group["centered"] and "grad_avg" not in state:
            state["grad_avg"] = self._zeros_like(p)
        state["step"] += 1
        w = p._data
        if wd:
            grad = grad + wd * w
        sq = state["square_avg"]
        sq._data = alpha * sq._data + (1.0 - alpha) * (grad * grad)
        if group["centered"]:
            ga = state["grad_avg"]
            ga._data = ga._data + (1.0 - alpha) * (grad - ga._data)
            avg = ns.sqrt(sq._data - ga._data * ga._data) + eps
        else:
            avg = ns.sqrt(sq._data) + eps
        if mu > 0:
            buf = state["momentum_buffer"]
            buf._data = mu * buf._data + grad / avg
            return w - lr * buf._data
        return w - lr * (grad / avg)
