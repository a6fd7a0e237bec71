"""Adafactor, as ``torch.optim.Adafactor``: a second moment kept as a row and a column factor
for matrices, steps relative to the parameter's size, updates clipped by their RMS."""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import numpy as np

from ..tensors._tensor import Tensor
from ..tensors.dtypes import finfo
from .optimizer import Optimizer


class Adafactor(Optimizer):
    """At step ``t`` with ``b = t ** beta2_decay``, ``rho = min(lr, 1 / sqrt(t))`` and
    ``alpha = max(eps2, rms(p)) * rho``: ``p *= 1 - lr * weight_decay``; for a matrix (the last
    two axes) ``row_var`` and ``col_var`` move towards the mean squared gradient of each row
    and column by ``b``, and the variance is ``row_var @ col_var / mean(row_var)``; for others
    ``variance`` moves towards ``grad ** 2``. Then ``u = grad / sqrt(max(var, eps1 ** 2))``
    and ``p -= alpha / max(1, rms(u) / d) * u``. ``eps1=None`` is the dtype's epsilon.

    >>> opt = Adafactor(model.parameters(), lr=1e-2)  # doctest: +SKIP
    """

    def __init__(self, params: Iterable[Any], lr: float = 1e-2, beta2_decay: float = -0.8,
                 eps: tuple[float | None, float] = (None, 1e-3), d: float = 1.0, weight_decay: float = 0.0, *,
                 foreach: bool | None = None, maximize: bool = False) -> None:  # fmt: skip
        super().__init__(params, dict(lr=lr, beta2_decay=beta2_decay, eps=tuple(eps), d=d, weight_decay=weight_decay,
                                      foreach=foreach, maximize=maximize))  # fmt: skip

    def _check(self, group: dict[str, Any]) -> None:
        # (PyTorch's checks and messages; eps is a pair here, which the base check cannot read)
        eps1, eps2 = group["eps"]
        self._require(float(group["lr"]) >= 0.0, f"Learning rate should be >= 0 but is: {group['lr']}")
        self._require(float(group["beta2_decay"]) <= 0.0, f"beta2_decay should be <= 0 but is: {group['beta2_decay']}")
        self._require(eps1 is None or float(eps1) >= 0.0, f"epsilon1 should be >= 0 but is: {eps1}")
        self._require(float(eps2) >= 0.0, f"epsilon2 should be >= 0 but is: {eps2}")
        self._require(float(group["d"]) >= 1.0, f"Clipping threshold d should be >= 1 but is: {group['d']}")
        self._require(float(group["weight_decay"]) >= 0.0,
                      f"weight_decay should be >= 0 but is: {group['weight_decay']}")  # fmt: skip

    def _state_value(self, p: Tensor, name: str, v: Any, where: str, scalar: bool = False) -> Any:  # type: ignore[override]
        """The row and column factors load with their own shapes (the parameter's with its last,
        or next to last, axis 1); the rest as any optimizer's state."""
        if name not in ("row_var", "col_var"):
            return Optimizer._state_value(p, name, v, where, scalar)
        arr = np.asarray(v._dev.to_host(v._data) if isinstance(v, Tensor) else v)
        shape = list(p.shape)
        shape[-1 if name == "row_var" else -2] = 1
        if p.ndim < 2 or arr.shape != tuple(shape):
            raise ValueError(f"{where} has shape {tuple(arr.shape)}, but this parameter's needs {tuple(shape)}")
        return Tensor._wrap(p._dev.asarray(np.array(arr, order="C"), dtype=p.dtype), p._dev)

    def _update(self, p: Tensor, grad: Any, state: dict[str, Any], group: dict[str, Any]) -> Any:
        ns = p._dev.ops
        if np.dtype(p._data.dtype).kind == "c":
            raise RuntimeError("Adafactor does not support complex parameters")
        factored = p.ndim > 1
        if not state:
            state["step"] = 0
            if factored:
                shape = tuple(p.shape)
                state["row_var"] = Tensor._wrap(ns.zeros((*shape[:-1], 1), dtype=p._data.dtype), p._dev)
                state["col_var"] = Tensor._wrap(ns.zeros((*shape[:-2], 1, shape[-1]), dtype=p._data.dtype), p._dev)
            else:
                state["variance"] = self._zeros_like(p)
        state["step"] += 1
        t = float(state["step"])
        lr, wd, d = float(group["lr"]), float(group["weight_decay"]), float(group["d"])
        eps1, eps2 = group["eps"]
        eps1 = float(finfo(p.dtype).eps) if eps1 is None else float(eps1)
        beta = t ** float(group["beta2_decay"])  # (the weight of the new square in the running means)
        n = max(1, math.prod(p.shape))
        w = p._data
        alpha = max(float(eps2), self._item(p, _norm(ns, w)) / math.sqrt(n)) * min(lr, 1.0 / math.sqrt(t))
        if wd:
            w = w * (1.0 - lr * wd)
        sq = grad * grad
        if factored:
            row, col = state["row_var"], state["col_var"]
            row._data = row._data + (ns.sum(sq, axis=-1, keepdims=True) / grad.shape[-1] - row._data) * beta
            col._data = col._data + (ns.sum(sq, axis=-2, keepdims=True) / grad.shape[-2] - col._data) * beta
            var = ns.matmul(row._data, col._data) / ns.maximum(
                ns.sum(row._data, axis=-2, keepdims=True) / grad.shape[-2], eps1
            )
        else:
            v = state["variance"]
            v._data = v._data + (sq - v._data) * beta
            var = v._data
        u = grad * (1.0 / ns.sqrt(ns.maximum(var, eps1 * eps1)))
        denom = max(1.0, _norm(ns, u) / (math.sqrt(n) * d))
        return w - u * (alpha / denom)


def _norm(ns: Any, a: Any) -> float:
    """The 2-norm of an array, on the host."""
    return float(ns.sqrt(ns.sum(a * a)))
