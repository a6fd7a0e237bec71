"""RAdam, as ``torch.optim.RAdam``: Adam whose adaptive step is rectified while its variance is unreliable."""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

from ..tensors._tensor import Tensor
from .optimizer import Optimizer


class RAdam(Optimizer):
    """Adam's moments ``m``, ``v`` of ``g = grad + weight_decay * p`` (or ``p *= 1 - lr *
    weight_decay`` with ``decoupled_weight_decay``); with ``rho_inf = 2 / (1 - b2) - 1`` and
    ``rho_t = rho_inf - 2 t b2^t / (1 - b2^t)``, the step is ``lr * m / (1 - b1^t)``, times
    ``r_t sqrt(1 - b2^t) / (sqrt(v) + eps)`` (``r_t`` the rectification) once ``rho_t > 5``.

    >>> opt = RAdam(model.parameters(), lr=1e-3)  # doctest: +SKIP
    """

    def __init__(self, params: Iterable[Any], lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0, decoupled_weight_decay: bool = False, *,
                 foreach: bool | None = None, maximize: bool = False, capturable: bool = False,
                 differentiable: bool = False) -> None:  # fmt: skip
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay,
                                      maximize=maximize, foreach=foreach, capturable=capturable,
                                      decoupled_weight_decay=decoupled_weight_decay,
                                      differentiable=differentiable))  # fmt: skip

    def _update(self, p: Tensor, grad: Any, state: dict[str, Any], group: dict[str, Any]) -> Any:
        ns = p._dev.ops
        lr, eps, wd = float(group["lr"]), float(group["eps"]), float(group["weight_decay"])
        b1, b2 = (float(b) for b in group["betas"])
        if not state:
            state.update(step=0, exp_avg=self._zeros_like(p), exp_avg_sq=self._zeros_like(p))
        state["step"] += 1
        t = state["step"]
        w = p._data
        if wd and group.get("decoupled_weight_decay"):
            w = w * (1.0 - lr * wd)
        elif wd:
            grad = grad + wd * w
        m, v = state["exp_avg"], state["exp_avg_sq"]
        m._data = m._data + (1.0 - b1) * (grad - m._data)
        v._data = b2 * v._data + (1.0 - b2) * (grad * grad)
        c2 = 1.0 - b2**t
        m_hat = m._data / (1.0 - b1**t)
        rho_inf = 2.0 / (1.0 - b2) - 1.0
        rho_t = rho_inf - 2.0 * t * b2**t / c2
        if rho_t <= 5.0:  # too few steps for the variance: plain momentum
            return w - m_hat * lr
        rect = math.sqrt((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t))
        return w - m_hat * lr * (math.sqrt(c2) / (ns.sqrt(v._data) + eps)) * rect

    def _writes(self, group: dict[str, Any]) -> int:
        # (PyTorch's decoupled decay scales the parameter in place before the update)
        return 2 if group.get("decoupled_weight_decay") and float(group["weight_decay"]) else 1
