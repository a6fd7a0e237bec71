"""Stochastic gradient descent, with momentum and L2 weight decay as ``torch.optim.SGD``."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from ..ops import cpu_kernels
from ..tensors._tensor import Tensor
from ..tensors.mutation.inplace import store_array
from .optimizer import Optimizer, _assign, _Bucket, _inplace_ns, _mul


class SGD(Optimizer):
    """``p -= lr * d``, where ``d = grad + weight_decay * p``, or with momentum ``mu``:
    ``buf = mu * buf + (1 - dampening) * d`` (``buf = d`` at the first step) and
    ``d = buf`` (or ``d + mu * buf`` with ``nesterov``).

    >>> opt = SGD(model.parameters(), lr=0.1, momentum=0.9)  # doctest: +SKIP

    Each param group is updated flat (see :meth:`Optimizer._step_flat`): one compiled loop
    per parameter where numba is installed (the ``jit`` extra), else a few NumPy calls over
    flat arrays; ``foreach=False`` updates parameter by parameter instead, with the same
    numbers.
    """

    def __init__(self, params: Iterable[Any], lr: float = 1e-3, momentum: float = 0, dampening: float = 0,
                 weight_decay: float = 0, nesterov: bool = False, *, maximize: bool = False,
                 foreach: bool | None = None, differentiable: bool = False, fused: bool | None = None) -> None:  # fmt: skip
        super().__init__(params, dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay,
                                      nesterov=nesterov, maximize=maximize, foreach=foreach,
                                      differentiable=differentiable, fused=fused))  # fmt: skip

    def _check(self, group: dict[str, Any]) -> None:
        super()._check(group)
        self._require(float(group["momentum"]) >= 0.0, f"Invalid momentum value: {group['momentum']}")
        self._require(
            not group["nesterov"] or (group["momentum"] > 0 and group["dampening"] == 0),
            "Nesterov momentum requires a momentum and zero dampening",
        )

    def foreach_update(self, group: int) -> None:
        """The update of ``param_groups[group]``; then, where PyTorch's step takes its
        multi-tensor path (``foreach=True``, or unset with every parameter on a GPU) with
        Nesterov momentum, no weight decay and no ``maximize``, each gradient is left as that
        path leaves it: ``grad + momentum * momentum_buffer`` (it adds into the gradients)."""
        super().foreach_update(group)
        g = self.param_groups[group]
        if not g["nesterov"]:  # (the usual step: nothing more to do, decided before reading any device)
            return
        fe = g.get("foreach")
        if fe is None:
            fe = not g.get("fused") and not g.get("differentiable") and all(
                p.device.type == "cuda" for p in g["params"]
            )  # fmt: skip
        if not (fe and g["nesterov"] and g["momentum"] and not g["weight_decay"] and not g["maximize"]):
            return
        mu = float(g["momentum"])
        for p in g["params"]:
            buf = self.state.get(p, {}).get("momentum_buffer")
            if p.grad is not None and buf is not None:
                store_array(p.grad, p.grad._data + mu * buf._data)

    def _update(self, p: Tensor, grad: Any, state: dict[str, Any], group: dict[str, Any]) -> Any:
        lr, mu, wd = float(group["lr"]), float(group["momentum"]), float(group["weight_decay"])
        d = grad + wd * p._data if wd else grad
        if mu:
            buf = state.get("momentum_buffer")
            if buf is None:
                buf = Tensor._wrap(d * 1.0, p._dev)  # a fresh array: never an alias of .grad
            else:
                buf._data = mu * buf._data + (1.0 - float(group["dampening"])) * d
            state["momentum_buffer"] = buf
            d = d + mu * buf._data if group["nesterov"] else buf._data
        return p._data - lr * d

    def _check_sparse(self, p: Tensor, group: dict[str, Any]) -> None:
        """A sparse gradient steps as a dense one of zeros elsewhere (PyTorch's sparse ``add_``);
        with weight decay it is PyTorch's error (``grad.add(p)`` of a sparse gradient)."""
        if float(group["weight_decay"]):
            raise RuntimeError("add(sparse, dense) is not supported. Use add(dense, sparse) instead.")

    # -- the same update over a whole bucket at once (see Optimizer._step_flat) ----------
    def _flat_key(self, state: dict[str, Any]) -> Any:
        return "momentum_buffer" in state

    def _flat_update(self, b: _Bucket, grad: Any, group: dict[str, Any]) -> tuple[float, Any]:
        # The per-parameter formulas above, in the same order (so the same numbers), with
        # one scratch array where the namespace writes into one.
        o = _inplace_ns(b.dev)
        lr, mu, wd = float(group["lr"]), float(group["momentum"]), float(group["weight_decay"])
        tmp = b.dev.ops.empty(grad.shape, grad.dtype) if o is not None else None
        d = grad  # the bucket's own array: written over
        if wd:
            tmp = _mul(o, b.gather_params(), wd, tmp)
            d += tmp
        if mu:
            buf = b.state.get("momentum_buffer")
            if buf is None:
                b.state["momentum_buffer"] = buf = d * 1.0  # a fresh array: d changes below
            else:
                buf *= mu
                damp = 1.0 - float(group["dampening"])
                buf += _mul(o, d, damp, tmp) if damp != 1.0 else d
            if group["nesterov"]:
                d += _mul(o, buf, mu, tmp)
            else:
                d = buf
        return 1.0, _mul(o, d, lr, tmp)

    def _flat_update_pieces(self, b: _Bucket, grads: list[Any], group: dict[str, Any]) -> bool:
        """The update of :meth:`_flat_update` as one compiled loop (``ops.cpu_kernels``) per
        parameter, reading it and its gradient where they are and writing it in place: the
        same numbers bit for bit, in one pass over each parameter instead of a gathering pass
        and a few NumPy calls per parameter. False where the loop is not there (then the
        NumPy passes)."""
        if b.dev.xp is not np:
            return False
        ws = b._seen  # (the parameters' arrays, as b.intact found them this step)
        mu, wd = float(group["momentum"]), float(group["weight_decay"])
        if mu == 0.0 and wd == 0.0:  # (the commonest step: no state to check or pass)
            kern = cpu_kernels.kernel("sgd_plain")
            if kern is None or not b.loop_arrays(grads):
                return False
            scalars = b.scalars((float(group["lr"]),))
            for w, g in zip(ws, grads):
                kern(w, g, scalars)
            return True
        buf = b.state.get("momentum_buffer") if mu else None
        first = mu != 0.0 and buf is None
        if first:
            buf = np.empty(b.size, b.dtype)
        elif buf is None:
            buf = _NO_BUFFER.get(b.dtype)  # (not read: the kernel's momentum flag is off)
            if buf is None:
                buf = _NO_BUFFER[b.dtype] = np.empty(0, b.dtype)
        if not b.loop_arrays(grads, buf):
            return False
        kern = cpu_kernels.kernel("sgd")
        if kern is None:
            return False
        switches = (wd != 0.0, mu != 0.0, first, bool(group["nesterov"]))
        scalars = b.scalars((float(group["lr"]), wd, mu, 1.0 - float(group["dampening"]), *switches))
        for (a, _, _), w, g in zip(b._slices, ws, grads):
            kern(w, g, buf, a, scalars)
        if first:
            b.state["momentum_buffer"] = buf
        return True

    # -- the same update as tensor ops, for a symbolic trace (see Optimizer._traceable) --
    def _traceable(self) -> bool:
        # A first step sets the momentum buffer to d; the traced update starts from a zero
        # buffer instead (mu * 0 + (1 - dampening) * d), the same only without dampening.
        return super()._traceable() and all(
            not g["momentum"] or not g["dampening"] or all(self.state.get(p) for p in g["params"])
            for g in self.param_groups
        )

    def _begin(self, p: Tensor, state: dict[str, Any], group: dict[str, Any]) -> None:
        if group["momentum"] and "momentum_buffer" not in state:
            state["momentum_buffer"] = self._zeros_like(p)

    def _numbers(self, group: dict[str, Any], state: dict[str, Any]) -> dict[str, float]:
        # momentum and dampening read at each replay too: a schedule (OneCycleLR) changes momentum
        return {
            "lr": float(group["lr"]),
            "weight_decay": float(group["weight_decay"]),
            "momentum": float(group["momentum"]),
            "one_minus_dampening": 1.0 - float(group["dampening"]),
        }

    def _traced_update(self, p: Tensor, grad: Tensor, state: dict[str, Any], group: dict[str, Any],
                       numbers: dict[str, Tensor]) -> None:  # fmt: skip
        d = grad + numbers["weight_decay"] * p if group["weight_decay"] else grad
        if group["momentum"]:
            mu = numbers["momentum"]
            buf = state["momentum_buffer"]
            _assign(buf, mu * buf + numbers["one_minus_dampening"] * d)
            d = d + mu * buf if group["nesterov"] else buf
        _assign(p, p - numbers["lr"] * d)


_NO_BUFFER: dict[Any, Any] = {}  # dtype -> an empty array, the momentum buffer of a step without momentum
