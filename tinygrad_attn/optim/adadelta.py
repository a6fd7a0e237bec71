"""Adadelta, as ``torch.optim.Adadelta``: steps in the units of the parameter, from running averages."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..tensors._tensor import Tensor
from .optimizer import Optimizer


class Adadelta(Optimizer):
    """With ``g = grad + weight_decay * p``: ``v = rho v + (1 - rho) g^2``,
    ``delta = sqrt(u + eps) / sqrt(v + eps) * g``, ``u = rho u + (1 - rho) delta^2`` and
    ``p -= lr * delta`` (``v``: ``square_avg``, ``u``: ``acc_delta``).

    >>> opt = Adadelta(model.parameters())  # doctest: +SKIP
    """

    def __init__(self, params: Iterable[Any], lr: float = 1.0, rho: float = 0.9, eps: float = 1e-6,
                 weight_decay: float = 0, foreach: bool | None = None, *, capturable: bool = False,
                 maximize: bool = False, differentiable: bool = False) -> None:  # fmt: skip
        super().__init__(params, dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize,
                                      capturable=capturable, foreach=foreach, differentiable=differentiable))  # fmt: skip

    def _check(self, group: dict[str, Any]) -> None:
        super()._check(group)
        self._require(0.0 <= float(group["rho"]) <= 1.0, f"Invalid rho value: {group['rho']}")

    def _update(self, p: Tensor, grad: Any, state: dict[str, Any], group: dict[str, Any]) -> Any:
        ns = p._dev.ops
        lr, rho, eps, wd = float(group["lr"]), float(group["rho"]), float(group["eps"]), float(group["weight_decay"])
        if not state:
            state.update(step=0, square_avg=self._zeros_like(p), acc_delta=self._zeros_like(p))
        state["step"] += 1
        w = p._data
        if wd:
            grad = grad + wd * w
        v, u = state["square_avg"], state["acc_delta"]
        v._data = rho * v._data + (1.0 - rho) * (grad * grad)
        delta = ns.sqrt(u._data + eps) / ns.sqrt(v._data + eps) * grad
        u._data = rho * u._data + (1.0 - rho) * (delta * delta)
        return w - lr * delta
