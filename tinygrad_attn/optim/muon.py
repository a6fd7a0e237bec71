"""Muon, as ``torch.optim.Muon``: momentum whose update is orthogonalised by a Newton-Schulz
iteration in bfloat16, for the 2-D parameters of a network's hidden layers."""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import numpy as np

from ..tensors._tensor import Tensor
from .optimizer import Optimizer

NS_COEFFICIENTS = (3.4445, -4.7750, 2.0315)
NS_STEPS = 5
EPS = 1e-7
_ADJUST_LR_FNS = (None, "original", "match_rms_adamw")


class Muon(Optimizer):
    """At each step ``B = momentum * B + (1 - momentum) * g`` (``momentum_buffer``, a lerp), the
    update is ``g`` lerped towards ``B`` by ``momentum`` (``nesterov``) or ``B`` itself, made
    near-orthogonal by ``ns_steps`` Newton-Schulz steps with ``ns_coefficients`` ``(a, b, c)``
    (``X = a X + (b A + c A @ A) @ X``, ``A = X @ X.T``, from ``X = U / max(||U||, eps)``, all
    rounded to bfloat16 at each operation as PyTorch's), then ``p *= 1 - lr * weight_decay``
    and ``p -= lr' * O`` with ``lr' = lr * sqrt(max(1, rows / cols))`` (``adjust_lr_fn``
    ``"original"`` or None) or ``lr * 0.2 * sqrt(max(rows, cols))`` (``"match_rms_adamw"``).
    Every parameter must be a matrix (``ValueError`` otherwise, as PyTorch's).

    >>> opt = Muon([p for p in model.parameters() if p.ndim == 2], lr=0.02)  # doctest: +SKIP
    """

    def __init__(self, params: Iterable[Any], lr: float = 1e-3, weight_decay: float = 0.1, momentum: float = 0.95,
                 nesterov: bool = True, ns_coefficients: tuple[float, float, float] = NS_COEFFICIENTS,
                 eps: float = EPS, ns_steps: int = NS_STEPS, adjust_lr_fn: str | None = None) -> None:  # fmt: skip
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        super().__init__(params, dict(lr=lr, weight_decay=weight_decay, momentum=momentum, nesterov=nesterov,
                                      ns_coefficients=ns_coefficients, eps=eps, ns_steps=ns_steps,
                                      adjust_lr_fn=adjust_lr_fn))  # fmt: skip
        for group in self.param_groups:
            for p in group["params"]:
                if p.ndim != 2:
                    raise ValueError(
                        f"Muon only supports 2D parameters whereas we found a parameter with size: {p.size()}"
                    )

    def _check(self, group: dict[str, Any]) -> None:
        # (PyTorch's checks and messages, without the optimizer's name: PyTorch's own have none)
        if not float(group["lr"]) >= 0.0:
            raise ValueError(f"Learning rate should be >= 0 but is: {group['lr']}")
        if not float(group["momentum"]) >= 0.0:
            raise ValueError(f"momentum should be >= 0 but is: {group['momentum']}")
        if not float(group["weight_decay"]) >= 0.0:
            raise ValueError(f"weight decay should be >= 0 but is: {group['weight_decay']}")
        if group["adjust_lr_fn"] not in _ADJUST_LR_FNS:
            raise ValueError(f"Adjust learning rate function {group['adjust_lr_fn']} is not supported")

    def _writes(self, group: dict[str, Any]) -> int:
        return 2  # (PyTorch's mul_ for the decay, then add_)

    def _update(self, p: Tensor, grad: Any, state: dict[str, Any], group: dict[str, Any]) -> Any:
        if np.dtype(p._data.dtype).kind == "c":
            raise RuntimeError("Muon does not support complex parameters")
        if grad.ndim != 2:
            raise ValueError("Param gradient must be a 2D matrix")
        if not state:
            state["momentum_buffer"] = self._zeros_like(p)
        mu = float(group["momentum"])
        buf = state["momentum_buffer"]
        buf._data = _lerp(buf._data, grad, 1.0 - mu)
        update = _lerp(grad, buf._data, mu) if group["nesterov"] else buf._data
        ortho = newton_schulz(p._dev.ops, update, tuple(group["ns_coefficients"]), int(group["ns_steps"]),
                              float(group["eps"]))  # fmt: skip
        lr, wd = float(group["lr"]), float(group["weight_decay"])
        rows, cols = p.shape[:2]
        fn = group["adjust_lr_fn"]
        if fn is None or fn == "original":
            ratio = math.sqrt(max(1, rows / cols))
        elif fn == "match_rms_adamw":
            ratio = 0.2 * math.sqrt(max(rows, cols))
        else:
            ratio = 1.0
        w = p._data * (1.0 - lr * wd)
        return w - (lr * ratio) * p._dev.ops.astype(ortho, w.dtype)


def _lerp(start: Any, end: Any, weight: float) -> Any:
    """PyTorch's lerp: from ``start`` below a weight of one half, from ``end`` above."""
    if abs(weight) < 0.5:
        return start + weight * (end - start)
    return end - (end - start) * (1.0 - weight)


def _bf16(ns: Any, x: Any) -> Any:
    """``x`` rounded to bfloat16 (to nearest, ties to even), held as float32."""
    x = ns.astype(x, np.float32)
    bits = x.view(np.uint32).astype(np.uint64)
    bits = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) << 16
    out = bits.astype(np.uint32).view(np.float32)
    return ns.where(x != x, x, out)  # (NaN stays NaN)


def newton_schulz(ns: Any, grad: Any, coefficients: tuple[float, float, float], steps: int, eps: float) -> Any:
    """PyTorch's ``_zeropower_via_newtonschulz`` of the matrix ``grad`` (an array of namespace
    ``ns``): the result in bfloat16's values, as a float32 array."""
    if steps >= 100:
        raise ValueError("Number of steps must be less than 100 for computational efficiency")
    if grad.ndim != 2:
        raise ValueError("Input tensor gradient must be a 2D matrix")
    if len(coefficients) != 3:
        raise ValueError("Coefficients must be a tuple of exactly 3 values")
    a, b, c = (np.float32(v) for v in coefficients)
    tall = grad.shape[0] > grad.shape[1]
    x = _bf16(ns, grad)
    if tall:
        x = x.T
    norm = _bf16(ns, ns.sqrt(ns.sum(x * x)))
    x = _bf16(ns, x / ns.maximum(norm, np.float32(eps)))
    for _ in range(steps):
        gram = _bf16(ns, ns.matmul(x, x.T))
        poly = _bf16(ns, b * gram + c * ns.matmul(gram, gram))
        x = _bf16(ns, a * x + ns.matmul(poly, x))
    return x.T if tall else x
