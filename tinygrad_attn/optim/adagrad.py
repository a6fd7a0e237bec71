"""Adagrad, as ``torch.optim.Adagrad``: steps scaled by the root of the summed squared gradients."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..tensors._tensor import Tensor
from .optimizer import Optimizer


class Adagrad(Optimizer):
    """With ``g = grad + weight_decay * p`` at step ``t``: ``sum += g^2`` and
    ``p -= lr / (1 + (t - 1) lr_decay) * g / (sqrt(sum) + eps)``. ``sum`` starts at
    ``initial_accumulator_value``; as in PyTorch the state exists from construction.

    >>> opt = Adagrad(model.parameters(), lr=0.1)  # doctest: +SKIP
    """

    def __init__(self, params: Iterable[Any], lr: float = 1e-2, lr_decay: float = 0, weight_decay: float = 0,
                 initial_accumulator_value: float = 0, eps: float = 1e-10, foreach: bool | None = None, *,
                 maximize: bool = False, differentiable: bool = False, fused: bool | None = None) -> None:  # fmt: skip
        super().__init__(params, dict(lr=lr, lr_decay=lr_decay, eps=eps, weight_decay=weight_decay,
                                      initial_accumulator_value=initial_accumulator_value, foreach=foreach,
                                      maximize=maximize, differentiable=differentiable, fused=fused))  # fmt: skip
        for group in self.param_groups:
            for p in group["params"]:
                self._init_state(p, self.state.setdefault(p, {}), group)

    def _check(self, group: dict[str, Any]) -> None:
        super()._check(group)
        self._require(float(group["lr_decay"]) >= 0.0, f"Invalid lr_decay value: {group['lr_decay']}")
        init = group["initial_accumulator_value"]
        self._require(float(init) >= 0.0, f"Invalid initial_accumulator_value value: {init}")

    def _init_state(self, p: Tensor, state: dict[str, Any], group: dict[str, Any]) -> None:
        if not state:
            init = float(group["initial_accumulator_value"])
            state.update(step=0, sum=Tensor._wrap(p._dev.ops.zeros_like(p._data) + init, p._dev))

    def _update(self, p: Tensor, grad: Any, state: dict[str, Any], group: dict[str, Any]) -> Any:
        ns = p._dev.ops
        self._init_state(p, state, group)  # (a parameter added by add_param_group)
        lr, eps, wd = float(group["lr"]), float(group["eps"]), float(group["weight_decay"])
        state["step"] += 1
        w = p._data
        if wd:
            grad = grad + wd * w
        clr = lr / (1.0 + (state["step"] - 1) * float(group["lr_decay"]))
        acc = state["sum"]
        acc._data = acc._data + grad * grad
        return w - clr * (grad / (ns.sqrt(acc._data) + eps))

    def _check_sparse(self, p: Tensor, group: dict[str, Any]) -> None:
        """A sparse gradient updates the sum and the parameter at its rows only, as the dense update
        of zeros elsewhere does; weight decay is PyTorch's error."""
        if float(group["weight_decay"]):
            raise RuntimeError("weight_decay option is not compatible with sparse gradients")
