"""NAdam, as ``torch.optim.NAdam``: Adam with Nesterov momentum and a momentum schedule."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..tensors._tensor import Tensor
from .optimizer import Optimizer


class NAdam(Optimizer):
    """With ``g = grad + weight_decay * p`` (or ``p *= 1 - lr * weight_decay`` with
    ``decoupled_weight_decay``) at step ``t``: the momentum ``mu_t = b1 (1 - 0.96^(t psi) / 2)``
    (``psi``: ``momentum_decay``), ``mu_product`` their running product, Adam's moments
    ``m`` and ``v``, and
    ``p -= lr ((1 - mu_t) / (1 - mu_product) g + mu_{t+1} / (1 - mu_product mu_{t+1}) m) / (sqrt(v / (1 - b2^t)) + eps)``.

    >>> opt = NAdam(model.parameters(), lr=2e-3)  # doctest: +SKIP
    """

    _scalar_state = ("step", "mu_product")

    def __init__(self, params: Iterable[Any], lr: float = 2e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0, momentum_decay: float = 4e-3,
                 decoupled_weight_decay: bool = False, *, foreach: bool | None = None, maximize: bool = False,
                 capturable: bool = False, differentiable: bool = False) -> None:  # fmt: skip
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay,
                                      momentum_decay=momentum_decay, decoupled_weight_decay=decoupled_weight_decay,
                                      maximize=maximize, foreach=foreach, capturable=capturable,
                                      differentiable=differentiable))  # fmt: skip

    def _check(self, group: dict[str, Any]) -> None:
        super()._check(group)
        decay = group["momentum_decay"]
        self._require(float(decay) >= 0.0, f"Invalid momentum_decay value: {decay}")

    def _update(self, p: Tensor, grad: Any, state: dict[str, Any], group: dict[str, Any]) -> Any:
        ns = p._dev.ops
        lr, eps, wd = float(group["lr"]), float(group["eps"]), float(group["weight_decay"])
        b1, b2 = (float(b) for b in group["betas"])
        psi = float(group["momentum_decay"])
        if not state:
            state.update(step=0, mu_product=1.0, exp_avg=self._zeros_like(p), exp_avg_sq=self._zeros_like(p))
        state["step"] += 1
        t = state["step"]
        w = p._data
        if wd and group.get("decoupled_weight_decay"):
            w = w * (1.0 - lr * wd)
        elif wd:
            grad = grad + wd * w
        mu = b1 * (1.0 - 0.5 * 0.96 ** (t * psi))
        mu_next = b1 * (1.0 - 0.5 * 0.96 ** ((t + 1) * psi))
        state["mu_product"] = prod = float(state["mu_product"]) * mu
        m, v = state["exp_avg"], state["exp_avg_sq"]
        m._data = m._data + (1.0 - b1) * (grad - m._data)
        v._data = b2 * v._data + (1.0 - b2) * (grad * grad)
        denom = ns.sqrt(v._data / (1.0 - b2**t)) + eps
        w = w + (-lr * (1.0 - mu) / (1.0 - prod)) * (grad / denom)
        return w + (-lr * mu_next / (1.0 - prod * mu_next)) * (m._data / denom)

    def _writes(self, group: dict[str, Any]) -> int:
        # (PyTorch's decoupled decay scales the parameter in place before the update)
        return 2 if group.get("decoupled_weight_decay") and float(group["weight_decay"]) else 1
