"""The :class:`Optimizer` base: parameter groups, per-parameter state, device following."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from .. import autograd
from .._tensor import Tensor
from ..autograd import _State, no_grad


class Optimizer:
    """Holds parameter groups and updates each parameter from its ``.grad`` on ``step()``.

    ``params`` is an iterable of parameters, or of dicts ``{"params": [...], "lr": ...}``
    (param groups) whose keys override the defaults for those parameters. Subclasses
    give ``_update(p, grad, state, group)``: it gets raw arrays of the parameter's
    device and returns the new parameter array.

    ``state[p]`` holds a parameter's state as tensors on the parameter's device. When a
    parameter moves (``module.to``) or changes dtype, its state is moved at the next
    ``step``.
    """

    def __init__(self, params: Iterable[Any], defaults: dict[str, Any]) -> None:
        self.defaults = dict(defaults)
        self.param_groups: list[dict[str, Any]] = []
        self.state: dict[Tensor, dict[str, Any]] = {}
        groups = [params] if isinstance(params, Tensor) else list(params)
        if not groups:
            raise ValueError(f"{self._name}: got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for g in groups:
            self.add_param_group(g)

    @property
    def _name(self) -> str:
        return type(self).__name__

    def add_param_group(self, group: dict[str, Any]) -> None:
        """Add parameters with their own hyperparameters (missing keys take the defaults)."""
        if not isinstance(group, dict) or "params" not in group:
            raise TypeError(f"{self._name}: a param group must be a dict with a 'params' entry, got {group!r}")
        ps = group["params"]
        ps = [ps] if isinstance(ps, Tensor) else list(ps)
        seen = {id(p) for g in self.param_groups for p in g["params"]}
        for i, p in enumerate(ps):
            if not isinstance(p, Tensor):
                raise TypeError(f"{self._name}: parameter {i} is a {type(p).__name__}, not a Tensor")
            if p.dtype.kind != "f":
                raise TypeError(f"{self._name}: parameter {i} of shape {p.shape} is {p.dtype}, not floating point")
            if id(p) in seen:
                raise ValueError(f"{self._name}: parameter {i} of shape {p.shape} appears in more than one group")
            seen.add(id(p))
        full = {**self.defaults, **group, "params": ps}
        self._check(full)
        self.param_groups.append(full)

    def _check(self, group: dict[str, Any]) -> None:
        """Validate a group's hyperparameters; subclasses add their own."""
        if not float(group["lr"]) >= 0.0:
            raise ValueError(f"{self._name}: lr must be >= 0, got {group['lr']}")
        if not float(group.get("weight_decay", 0.0)) >= 0.0:
            raise ValueError(f"{self._name}: weight_decay must be >= 0, got {group['weight_decay']}")

    @property
    def lr(self) -> float:
        """The first group's learning rate; assigning ``opt.lr = x`` sets it in every group."""
        return self.param_groups[0]["lr"]

    @lr.setter
    def lr(self, value: float) -> None:
        for g in self.param_groups:
            g["lr"] = float(value)

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Forget every parameter's gradient (``grad = None``, PyTorch's default), or with
        ``set_to_none=False`` fill it with zeros (cut from any graph it had)."""
        if _State.tracer is not None:  # a symbolic trace records the call (tinygrad_attn.symbolic)
            call = Optimizer.zero_grad if set_to_none else lambda opt: Optimizer.zero_grad(opt, set_to_none=False)
            return _State.tracer.effect(self, "zero_grad", call)
        for g in self.param_groups:
            for p in g["params"]:
                if set_to_none or p.grad is None:
                    p.grad = None
                    continue
                if p.grad._ctx is not None:  # a gradient made with create_graph: drop its history, as PyTorch
                    p.grad = p.grad.detach()
                p.grad.zero_()

    @no_grad()
    def step(self) -> None:
        """Update every parameter that has a gradient, in place (``p._data`` is replaced)."""
        if _State.tracer is not None:  # a symbolic trace records the update (tinygrad_attn.symbolic)
            return _State.tracer.optimizer_step(self)
        for group in self.param_groups:
            for p in group["params"]:
                g = p.grad
                if g is None:
                    continue
                if g._dev is not p._dev or g.shape != p.shape:
                    raise RuntimeError(
                        f"{self._name}.step: a parameter of shape {p.shape} on {p.device} has a gradient of "
                        f"shape {g.shape} on {g.device}"
                    )
                gd = g._data
                if g.dtype != p.dtype:
                    gd = p._dev.ops.astype(gd, p._data.dtype)
                new = self._update(p, gd, self._state_of(p), group)
                # asarray: NumPy turns 0-d results into scalars, and a parameter keeps an array
                # (no copy otherwise).
                p._data = p._dev.asarray(new, dtype=p.dtype)

    def _update(self, p: Tensor, grad: Any, state: dict[str, Any], group: dict[str, Any]) -> Any:
        raise NotImplementedError(f"{self._name} has no update rule")

    # -- the update as tensor ops, for a symbolic trace (tinygrad_attn.symbolic) ---------
    # A traced step is: ``_advance()`` (Python bookkeeping, one recorded call), then per
    # parameter ``_traced_update`` with the numbers ``_numbers`` gives (read at each
    # replay), written with tensor ops into the parameter and its state in place. The
    # eager step above keeps its array arithmetic: the same formulas, in the same order,
    # so a replay gives the eager step's values.
    def _traceable(self) -> bool:
        """Whether this optimizer can give its update as ops; if not, a trace records one
        call of ``step()``."""
        return type(self)._traced_update is not Optimizer._traced_update

    def _advance(self) -> None:
        """What a step changes in Python before the arithmetic: for each parameter with a
        gradient, its state made (``_begin``) and counters moved."""
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    self._begin(p, self._state_of(p), group)

    def _begin(self, p: Tensor, state: dict[str, Any], group: dict[str, Any]) -> None:
        """One parameter's part of :meth:`_advance`."""

    def _numbers(self, group: dict[str, Any], state: dict[str, Any]) -> dict[str, float]:
        """The numbers the traced update reads that may change between steps, by name."""
        return {}

    def _traced_update(self, p: Tensor, grad: Tensor, state: dict[str, Any], group: dict[str, Any],
                       numbers: dict[str, Tensor]) -> None:  # fmt: skip
        raise NotImplementedError  # pragma: no cover - see _traceable

    # -- state dicts, laid out as PyTorch's ---------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        """``{"state": {index: {name: Tensor or number}}, "param_groups": [{..., "params": [index, ...]}]}``.

        Parameters are numbered across the groups in order, as in PyTorch, so the dict
        holds no tensor identities: it loads into an optimizer over another model of the
        same layout, and ``tga.save`` stores it. The state tensors are the optimizer's own
        (not copies), as in PyTorch.
        """
        groups, state, index = [], {}, 0
        for g in self.param_groups:
            ids = []
            for p in g["params"]:
                if self.state.get(p):
                    state[index] = dict(self.state[p])
                ids.append(index)
                index += 1
            groups.append({**{k: v for k, v in g.items() if k != "params"}, "params": ids})
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Take hyperparameters and state from :meth:`state_dict` (ours or PyTorch's, with
        its tensors as NumPy arrays or Tensors): the groups must hold as many parameters as
        this optimizer's. State moves to each parameter's device and dtype; everything is
        checked before anything changes."""
        who = f"{self._name}.load_state_dict"
        try:
            saved_groups, saved_state = state_dict["param_groups"], state_dict["state"]
        except (KeyError, TypeError):
            raise ValueError(f"{who}: expected a dict with 'state' and 'param_groups', got {type(state_dict).__name__}"
                             ) from None  # fmt: skip
        if len(saved_groups) != len(self.param_groups):
            raise ValueError(
                f"{who}: the state dict has {len(saved_groups)} param group(s), this optimizer {len(self.param_groups)}"
            )
        params: dict[int, Tensor] = {}
        new_groups = []
        for i, (mine, saved) in enumerate(zip(self.param_groups, saved_groups)):
            if len(saved["params"]) != len(mine["params"]):
                raise ValueError(
                    f"{who}: param group {i} has {len(saved['params'])} parameter(s) in the state dict but "
                    f"{len(mine['params'])} here"
                )
            params.update(zip((int(k) for k in saved["params"]), mine["params"]))
            g = {k: v for k, v in saved.items() if k != "params"}
            if g.get("maximize"):  # PyTorch's flag: silently minimizing instead would be worse than refusing
                raise ValueError(f"{who}: param group {i} has maximize=True, which {self._name} does not support")
            if isinstance(g.get("betas"), list):  # through JSON or a hand-written dict
                g["betas"] = tuple(g["betas"])
            new_groups.append({**g, "params": mine["params"]})
        new_state: dict[Tensor, dict[str, Any]] = {}
        for key, entries in saved_state.items():
            p = params.get(int(key))
            if p is None:
                raise ValueError(f"{who}: state for parameter {key}, which no param group lists")
            st = {}
            for name, v in entries.items():
                st[name] = self._state_value(p, name, v, f"{who}: state[{key}]['{name}']")
            new_state[p] = st
        for g in new_groups:
            self._check(g)
        self.param_groups[:] = new_groups
        self.state = new_state

    @staticmethod
    def _state_value(p: Tensor, name: str, v: Any, where: str) -> Any:
        """One saved state entry for parameter ``p``: counters as Python numbers, arrays as
        tensors of ``p``'s shape, device and dtype."""
        if isinstance(v, Tensor):
            v = v._dev.to_host(v._data)
        if v is None or isinstance(v, (bool, int, float)):
            return v
        arr = np.asarray(v)
        if name == "step" or (arr.ndim == 0 and p.ndim != 0):  # PyTorch keeps the step as a tensor
            return int(arr) if name == "step" and float(arr).is_integer() else arr.item()
        if arr.shape != p.shape:
            raise ValueError(f"{where} has shape {arr.shape}, but the parameter has shape {p.shape}")
        return Tensor._wrap(p._dev.asarray(np.array(arr, order="C"), dtype=p.dtype), p._dev)

    def _state_of(self, p: Tensor) -> dict[str, Any]:
        """``state[p]``, its tensors moved to ``p``'s device and dtype if ``p`` moved since."""
        st = self.state.setdefault(p, {})
        for k, v in st.items():
            if isinstance(v, Tensor) and (v._dev is not p._dev or v.dtype != p.dtype):
                st[k] = Tensor._wrap(p._dev.asarray(v._dev.to_host(v._data), dtype=p.dtype), p._dev)
        return st

    @staticmethod
    def _zeros_like(p: Tensor) -> Tensor:
        return Tensor._wrap(p._dev.ops.zeros_like(p._data), p._dev)

    def __repr__(self) -> str:
        hp = {k: v for k, v in self.defaults.items()}
        return f"{self._name}({', '.join(f'{k}={v}' for k, v in hp.items())}; {len(self.param_groups)} group(s))"


def _assign(t: Tensor, value: Tensor) -> None:
    """``t``'s array takes ``value``'s values, in place (one store of a traced program)."""
    autograd._write(t, value, "step")
