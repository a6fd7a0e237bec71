"""Adam (L2 penalty added to the gradient) and AdamW (decoupled weight decay)."""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import numpy as np

from ..ops import cpu_kernels
from ..tensors._tensor import Tensor
from .optimizer import Optimizer, _assign, _Bucket, _inplace_ns, _mul


class Adam(Optimizer):
    """Adam, as ``torch.optim.Adam``: with ``g = grad + weight_decay * p``,

    ``m = b1 m + (1 - b1) g``, ``v = b2 v + (1 - b2) g^2`` and
    ``p -= lr * (m / (1 - b1^t)) / (sqrt(v / (1 - b2^t)) + eps)``. With ``amsgrad`` the
    running maximum of ``v`` takes its place in the denominator.

    >>> opt = Adam(model.parameters(), lr=1e-3)  # doctest: +SKIP

    Each param group is updated flat (see :meth:`Optimizer._step_flat`): one compiled loop
    per parameter where numba is installed (the ``jit`` extra), else a few NumPy calls over
    flat arrays; ``foreach=False`` updates parameter by parameter instead, with the same
    numbers.
    """

    decoupled = False

    def __init__(self, params: Iterable[Any], lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0, amsgrad: bool = False, *, foreach: bool | None = None,
                 maximize: bool = False, capturable: bool = False, differentiable: bool = False,
                 fused: bool | None = None, decoupled_weight_decay: bool = False) -> None:  # fmt: skip
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay,
                                      amsgrad=bool(amsgrad), maximize=maximize, foreach=foreach,
                                      capturable=capturable, differentiable=differentiable, fused=fused,
                                      decoupled_weight_decay=bool(decoupled_weight_decay or self.decoupled)))  # fmt: skip

    def _decoupled(self, group: dict[str, Any]) -> bool:
        """Whether weight decay scales the parameter (AdamW) rather than adding to the gradient."""
        return bool(group.get("decoupled_weight_decay", self.decoupled))

    def _check_sparse(self, p: Tensor, group: dict[str, Any]) -> None:
        raise RuntimeError("Adam does not support sparse gradients, please consider SparseAdam instead")

    def _update(self, p: Tensor, grad: Any, state: dict[str, Any], group: dict[str, Any]) -> Any:
        ns = p._dev.ops
        # Python floats: a NumPy float64 scalar would promote float32 arrays to float64.
        lr, eps, wd = float(group["lr"]), float(group["eps"]), float(group["weight_decay"])
        b1, b2 = (float(b) for b in group["betas"])
        w = p._data
        if wd and self._decoupled(group):
            w = w * (1.0 - lr * wd)
        elif wd:
            grad = grad + wd * w
        if not state:
            state.update(step=0, exp_avg=self._zeros_like(p), exp_avg_sq=self._zeros_like(p))
        amsgrad = group.get("amsgrad", False)
        if amsgrad and "max_exp_avg_sq" not in state:
            state["max_exp_avg_sq"] = self._zeros_like(p)
        state["step"] += 1
        t = state["step"]
        m, v = state["exp_avg"], state["exp_avg_sq"]
        m._data = b1 * m._data + (1.0 - b1) * grad
        v._data = b2 * v._data + (1.0 - b2) * (grad * grad)
        if amsgrad:
            vmax = state["max_exp_avg_sq"]
            vmax._data = ns.maximum(vmax._data, v._data)
            v = vmax
        # PyTorch's m_hat / (sqrt(v_hat) + eps) with the bias correction of v, c2 = sqrt(1 -
        # b2^t), moved onto the numbers: m / (sqrt(v) + eps c2) * c2 (one array pass fewer,
        # the same value to rounding).
        c2 = math.sqrt(1.0 - b2**t)
        denom = ns.sqrt(v._data) + eps * c2
        return w - (m._data / denom) * (lr / (1.0 - b1**t) * c2)

    def _writes(self, group: dict[str, Any]) -> int:
        # (PyTorch's AdamW scales the parameter in place before its Adam step)
        return 2 if self._decoupled(group) and float(group["weight_decay"]) else 1

    # -- the same update over a whole bucket at once (see Optimizer._step_flat) ----------
    def _flat_key(self, state: dict[str, Any]) -> Any:
        return state.get("step"), "max_exp_avg_sq" in state

    def _flat_begin(self, p: Tensor, state: dict[str, Any], group: dict[str, Any]) -> None:
        if not state:
            state.update(step=0, exp_avg=self._zeros_like(p), exp_avg_sq=self._zeros_like(p))
        if group.get("amsgrad", False) and "max_exp_avg_sq" not in state:
            state["max_exp_avg_sq"] = self._zeros_like(p)

    def _flat_update(self, b: _Bucket, grad: Any, group: dict[str, Any]) -> tuple[float, Any]:
        # The formulas of _update, in the same order (so the same numbers), in place on the
        # flat state with one scratch array where the namespace writes into one: 13 passes
        # over the bucket (AdamW with weight decay), after the gathering of the gradients.
        o = _inplace_ns(b.dev)
        ns = b.dev.ops
        lr, eps, wd = float(group["lr"]), float(group["eps"]), float(group["weight_decay"])
        b1, b2 = (float(x) for x in group["betas"])
        tmp = ns.empty(grad.shape, grad.dtype) if o is not None else None
        decay = 1.0
        if wd and self._decoupled(group):
            decay = 1.0 - lr * wd
        elif wd:
            grad += _mul(o, b.gather_params(), wd, tmp)  # grad is the bucket's own array
        for st in b.states:
            st["step"] += 1
        t = b.states[0]["step"]
        m, v = b.state["exp_avg"], b.state["exp_avg_sq"]
        m *= b1
        m += _mul(o, grad, 1.0 - b1, tmp)
        v *= b2
        g2 = _mul(o, grad, grad, tmp)
        g2 *= 1.0 - b2
        v += g2
        if group.get("amsgrad", False):
            vmax = b.state.get("max_exp_avg_sq")
            if vmax is None:  # amsgrad switched on after the first steps
                vmax = ns.zeros(v.shape, v.dtype)
            v = o.maximum(vmax, v, out=vmax) if o is not None else ns.maximum(vmax, v)
            b.state["max_exp_avg_sq"] = v
        c2 = math.sqrt(1.0 - b2**t)
        denom = o.sqrt(v, out=tmp) if o is not None else ns.sqrt(v)
        denom += eps * c2
        q = o.divide(m, denom, out=denom) if o is not None else m / denom
        q *= lr / (1.0 - b1**t) * c2
        return decay, q

    def _flat_update_pieces(self, b: _Bucket, grads: list[Any], group: dict[str, Any]) -> bool:
        """The update of :meth:`_flat_update` as a compiled loop (``ops.cpu_kernels``) per
        parameter, reading it and its gradient where they are and writing it in place: the
        same numbers bit for bit, without gathering the parameters and gradients first (a
        pass over all of them, out of the cache after a backward) or writing them back.
        False where the loop is not there (then the NumPy passes)."""
        if b.dev.xp is not np:
            return False
        ws = b._seen  # (the parameters' arrays, as b.intact found them this step)
        m, v = b.state["exp_avg"], b.state["exp_avg_sq"]
        amsgrad = bool(group.get("amsgrad", False))
        vmax = b.state.get("max_exp_avg_sq", v) if amsgrad else v
        if not b.loop_arrays(grads, m, v, vmax):
            return False
        kern = cpu_kernels.kernel("adam")
        if kern is None:
            return False
        if amsgrad and "max_exp_avg_sq" not in b.state:  # amsgrad switched on after the first steps
            b.state["max_exp_avg_sq"] = vmax = np.zeros(m.shape, m.dtype)
        for st in b.states:
            st["step"] += 1
        n = self._numbers(group, b.states[0])  # (the traced update's numbers: the same formulas)
        decay = n["decay"] if self._decoupled(group) else 1.0
        scalars = b.scalars((n["beta1"], n["beta2"], n["one_minus_beta1"], n["one_minus_beta2"], decay,
                             n["weight_decay"], n["eps_c2"], n["step_size_c2"]))  # fmt: skip
        coupled = bool(n["weight_decay"]) and not self._decoupled(group)
        for (a, _, _), w, g in zip(b._slices, ws, grads):
            kern(w, g, m, v, vmax, a, scalars, coupled, amsgrad)
        return True

    # -- the same update as tensor ops, for a symbolic trace (see Optimizer._traceable) --
    def _begin(self, p: Tensor, state: dict[str, Any], group: dict[str, Any]) -> None:
        if not state:
            state.update(step=0, exp_avg=self._zeros_like(p), exp_avg_sq=self._zeros_like(p))
        if group.get("amsgrad", False) and "max_exp_avg_sq" not in state:
            state["max_exp_avg_sq"] = self._zeros_like(p)
        state["step"] += 1

    def _numbers(self, group: dict[str, Any], state: dict[str, Any]) -> dict[str, float]:
        lr, wd = float(group["lr"]), float(group["weight_decay"])
        b1, b2 = (float(b) for b in group["betas"])
        t = state["step"]
        c2 = math.sqrt(1.0 - b2**t)
        return {"decay": 1.0 - lr * wd, "weight_decay": wd, "eps_c2": float(group["eps"]) * c2,
                "step_size_c2": lr / (1.0 - b1**t) * c2,
                # read at each replay too: a schedule (OneCycleLR) changes betas, and eps may change
                "beta1": b1, "one_minus_beta1": 1.0 - b1, "beta2": b2, "one_minus_beta2": 1.0 - b2}  # fmt: skip

    def _traced_update(self, p: Tensor, grad: Tensor, state: dict[str, Any], group: dict[str, Any],
                       numbers: dict[str, Tensor]) -> None:  # fmt: skip
        wd = float(group["weight_decay"])
        w = p
        if wd and self._decoupled(group):
            w = w * numbers["decay"]
        elif wd:
            grad = grad + numbers["weight_decay"] * w
        m, v = state["exp_avg"], state["exp_avg_sq"]
        _assign(m, numbers["beta1"] * m + numbers["one_minus_beta1"] * grad)
        _assign(v, numbers["beta2"] * v + numbers["one_minus_beta2"] * (grad * grad))
        if group.get("amsgrad", False):
            vmax = state["max_exp_avg_sq"]
            _assign(vmax, vmax.maximum(v))
            v = vmax
        denom = v.sqrt() + numbers["eps_c2"]
        _assign(p, w - (m / denom) * numbers["step_size_c2"])


class AdamW(Adam):
    """Adam with decoupled weight decay, as ``torch.optim.AdamW``: first
    ``p *= 1 - lr * weight_decay``, then the Adam step on the plain gradient.

    >>> opt = AdamW(model.parameters(), lr=3e-4, weight_decay=0.1)  # doctest: +SKIP
    """

    decoupled = True

    def __init__(self, params: Iterable[Any], lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0.01, amsgrad: bool = False, *, maximize: bool = False,
                 foreach: bool | None = None, capturable: bool = False, differentiable: bool = False,
                 fused: bool | None = None) -> None:  # fmt: skip
        super().__init__(params, lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad,
                         maximize=maximize, foreach=foreach, capturable=capturable, differentiable=differentiable,
                         fused=fused)  # fmt: skip
