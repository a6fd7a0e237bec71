"""The :class:`Optimizer` base: parameter groups, per-parameter state, device following."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .._tensor import Tensor
from ..autograd import no_grad


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

    def zero_grad(self) -> None:
        """Forget every parameter's gradient (``grad = None``)."""
        for g in self.param_groups:
            for p in g["params"]:
                p.grad = None

    @no_grad()
    def step(self) -> None:
        """Update every parameter that has a gradient, in place (``p.data`` is replaced)."""
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
                gd = g.data
                if g.dtype != p.dtype:
                    gd = p._dev.ops.astype(gd, p.data.dtype)
                new = self._update(p, gd, self._state_of(p), group)
                # asarray: NumPy turns 0-d results into scalars, and a parameter keeps an array
                # (no copy otherwise).
                p.data = p._dev.asarray(new, dtype=p.dtype)

    def _update(self, p: Tensor, grad: Any, state: dict[str, Any], group: dict[str, Any]) -> Any:
        raise NotImplementedError(f"{self._name} has no update rule")

    def _state_of(self, p: Tensor) -> dict[str, Any]:
        """``state[p]``, its tensors moved to ``p``'s device and dtype if ``p`` moved since."""
        st = self.state.setdefault(p, {})
        for k, v in st.items():
            if isinstance(v, Tensor) and (v._dev is not p._dev or v.dtype != p.dtype):
                st[k] = Tensor._wrap(p._dev.asarray(v._dev.to_host(v.data), dtype=p.dtype), p._dev)
        return st

    @staticmethod
    def _zeros_like(p: Tensor) -> Tensor:
        return Tensor._wrap(p._dev.ops.zeros_like(p.data), p._dev)

    def __repr__(self) -> str:
        hp = {k: v for k, v in self.defaults.items()}
        return f"{self._name}({', '.join(f'{k}={v}' for k, v in hp.items())}; {len(self.param_groups)} group(s))"
