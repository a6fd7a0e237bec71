"""Rprop, as ``torch.optim.Rprop``: steps of a per-element size that grows while the gradient's sign holds."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..tensors._tensor import Tensor
from .optimizer import Optimizer


class Rprop(Optimizer):
    """Each element's step size (``step_size``, from ``lr``) is multiplied by ``etas[1]``
    where the gradient kept its sign since the last step, by ``etas[0]`` where it changed
    (and that gradient is then taken as 0), and clamped to ``step_sizes``; then
    ``p -= sign(g) * step_size``.

    >>> opt = Rprop(model.parameters())  # doctest: +SKIP
    """

    def __init__(self, params: Iterable[Any], lr: float = 1e-2, etas: tuple[float, float] = (0.5, 1.2),
                 step_sizes: tuple[float, float] = (1e-6, 50), *, capturable: bool = False,
                 foreach: bool | None = None, maximize: bool = False, differentiable: bool = False) -> None:  # fmt: skip
        super().__init__(params, dict(lr=lr, etas=tuple(etas), step_sizes=tuple(step_sizes), foreach=foreach,
                                      maximize=maximize, differentiable=differentiable, capturable=capturable))  # fmt: skip

    def _check(self, group: dict[str, Any]) -> None:
        super()._check(group)
        lo, hi = group["etas"]
        self._require(0.0 < lo < 1.0 < hi, f"Invalid eta values: {lo}, {hi}")

    def _update(self, p: Tensor, grad: Any, state: dict[str, Any], group: dict[str, Any]) -> Any:
        ns = p._dev.ops
        eta_minus, eta_plus = (float(e) for e in group["etas"])
        smallest, largest = (float(s) for s in group["step_sizes"])
        if not state:
            size = Tensor._wrap(ns.zeros_like(p._data) + float(group["lr"]), p._dev)
            state.update(step=0, prev=self._zeros_like(p), step_size=size)
        state["step"] += 1
        prev, size = state["prev"], state["step_size"]
        s = ns.sign(grad * prev._data)
        z = size._data  # (each branch in the parameter's dtype, as PyTorch's factors are)
        z = ns.where(s > 0, z * eta_plus, ns.where(s < 0, z * eta_minus, z))
        size._data = ns.minimum(ns.maximum(z, smallest), largest)
        grad = ns.where(s < 0, 0.0, grad)  # (a sign change: no step, and no memory of it)
        prev._data = grad * 1.0
        return p._data - ns.sign(grad) * size._data
