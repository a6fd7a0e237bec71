"""Averaged SGD, as ``torch.optim.ASGD``: SGD with a decaying step and a running average of the iterates."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..tensors._tensor import Tensor
from .optimizer import Optimizer


class ASGD(Optimizer):
    """With ``g = grad + weight_decay * p`` at step ``t``: ``p = p (1 - lambd eta) - eta g``;
    the average ``ax`` follows ``p`` (``ax += mu (p - ax)``, a copy while ``mu`` is 1); then
    ``eta = lr / (1 + lambd lr t)^alpha`` and ``mu = 1 / max(1, t - t0)``.

    >>> opt = ASGD(model.parameters(), lr=0.01)  # doctest: +SKIP
    """

    _scalar_state = ("step", "eta", "mu")

    def __init__(self, params: Iterable[Any], lr: float = 1e-2, lambd: float = 1e-4, alpha: float = 0.75,
                 t0: float = 1e6, weight_decay: float = 0, foreach: bool | None = None, maximize: bool = False,
                 differentiable: bool = False, capturable: bool = False) -> None:  # fmt: skip
        super().__init__(params, dict(lr=lr, lambd=lambd, alpha=alpha, t0=t0, weight_decay=weight_decay,
                                      foreach=foreach, maximize=maximize, differentiable=differentiable,
                                      capturable=capturable))  # fmt: skip

    def _update(self, p: Tensor, grad: Any, state: dict[str, Any], group: dict[str, Any]) -> Any:
        lr, lambd, wd = float(group["lr"]), float(group["lambd"]), float(group["weight_decay"])
        if not state:
            state.update(step=0, eta=lr, mu=1.0, ax=self._zeros_like(p))
        state["step"] += 1
        t = state["step"]
        w = p._data
        if wd:
            grad = grad + wd * w
        eta, mu = self._item(p, state["eta"]), self._item(p, state["mu"])  # (PyTorch's: tensors on p's device)
        w = w * (1.0 - lambd * eta) - eta * grad
        ax = state["ax"]
        ax._data = ax._data + (w - ax._data) * mu if mu != 1.0 else w * 1.0
        state["eta"] = lr / (1.0 + lambd * lr * t) ** float(group["alpha"])
        state["mu"] = 1.0 / max(1.0, t - float(group["t0"]))
        return w

    def _writes(self, group: dict[str, Any]) -> int:
        return 2  # (PyTorch's decay and step are two in-place writes)
