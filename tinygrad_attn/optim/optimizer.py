"""The :class:`Optimizer` base: parameter groups, per-parameter state, device following."""

from __future__ import annotations

import functools
import math
import operator
from collections import OrderedDict, defaultdict
from collections.abc import Callable, Iterable
from itertools import repeat
from operator import is_
from typing import Any, TypeAlias

import numpy as np

from ..engine.function import SparseData
from ..engine.quiet import FP_STATE, QUIET
from ..engine.switches import active_tracer, enable_grad, no_grad
from ..engine.versions import _memory_root, bump_roots, bump_versions
from ..engine.warn import warn as _user_warn
from ..ops import cpu_kernels
from ..tensors._tensor import Tensor, legacy_type_name
from ..tensors.mutation.inplace import _write, store_array


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
        self.state: dict[Tensor, dict[str, Any]] = defaultdict(dict)  # (PyTorch's: state[p] of a new p is {})
        self._flat: dict[int, tuple] = {}  # id(group) -> (group, ids of its parameters, buckets)
        self._pre_hooks: dict[int, Callable[..., Any]] = {}
        self._post_hooks: dict[int, Callable[..., Any]] = {}
        if isinstance(params, Tensor):  # (PyTorch's TypeError: a lone tensor is not a list of them)
            raise TypeError(f"params argument given to the optimizer should be an iterable of Tensors or dicts, "
                            f"but got {legacy_type_name(params)}")  # fmt: skip
        groups = list(params)
        if not groups:
            raise ValueError(f"{self._name}: got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for g in groups:
            self.add_param_group(g)

    @property
    def _name(self) -> str:
        return type(self).__name__

    def add_param_group(self, param_group: dict[str, Any]) -> None:
        """Add parameters with their own hyperparameters (missing keys take the defaults)."""
        if not isinstance(param_group, dict) or "params" not in param_group:
            raise TypeError(f"{self._name}: a param group must be a dict with a 'params' entry, got {param_group!r}")
        ps = param_group["params"]
        ps = [ps] if isinstance(ps, Tensor) else list(ps)
        names = None
        if ps and all(isinstance(p, tuple) and len(p) == 2 for p in ps):  # model.named_parameters()
            names, ps = [n for n, _ in ps], [p for _, p in ps]
        if self.param_groups and ("param_names" in self.param_groups[0]) != (names is not None):
            raise ValueError(
                f"{self._name}: all optimizer param groups should be with/without names (from "
                "named_parameters()), as in PyTorch; this group differs from the first"
            )
        seen = {id(p) for g in self.param_groups for p in g["params"]}
        mine: set[int] = set()
        for i, p in enumerate(ps):
            if not isinstance(p, Tensor):
                raise TypeError(f"{self._name}: parameter {i} is a {type(p).__name__}, not a Tensor")
            if p.dtype.kind != "f":
                raise TypeError(
                    f"{self._name}: parameter {i} of shape {tuple(p.shape)} is {p.dtype}, not floating point"
                )
            if not self.defaults.get("differentiable") and not (p.is_leaf or p.retains_grad):
                raise ValueError(f"{self._name}: can't optimize a non-leaf Tensor (parameter {i} of shape "
                                 f"{tuple(p.shape)} was computed; pass a leaf, e.g. its .detach().requires_grad_())")  # fmt: skip
            if id(p) in seen:
                raise ValueError(
                    f"{self._name}: some parameters appear in more than one parameter group (parameter {i} of "
                    f"shape {tuple(p.shape)})"
                )
            mine.add(id(p))
        if len(mine) != len(ps):  # (PyTorch keeps them, and steps such a parameter once per listing)
            _user_warn("optimizer contains a parameter group with duplicate parameters; in future, this will cause "
                          "an error; see github.com/pytorch/pytorch/issues/40967 for more information")  # fmt: skip
        # PyTorch's key order: the group's own keys as given, its names, then the defaults it lacks
        full = {k: (ps if k == "params" else v) for k, v in param_group.items()}
        if names is not None:
            full["param_names"] = names
        for k, v in self.defaults.items():
            full.setdefault(k, v)
        self._check(full)
        self.param_groups.append(full)

    def _check(self, group: dict[str, Any]) -> None:
        """Validate a group's hyperparameters with PyTorch's messages (after the optimizer's
        name); subclasses add their own through :meth:`_require`."""
        self._require(float(group["lr"]) >= 0.0, f"Invalid learning rate: {group['lr']}")
        if "eps" in group:
            self._require(float(group["eps"]) >= 0.0, f"Invalid epsilon value: {group['eps']}")
        if "weight_decay" in group:
            self._require(float(group["weight_decay"]) >= 0.0, f"Invalid weight_decay value: {group['weight_decay']}")
        if "betas" in group:
            for i, b in enumerate(group["betas"]):
                self._require(0.0 <= float(b) < 1.0, f"Invalid beta parameter at index {i}: {b}")

    def _require(self, ok: bool, message: str) -> None:
        """Raise ``ValueError`` (PyTorch's class for a bad hyperparameter) unless ``ok``."""
        if not ok:
            raise ValueError(f"{self._name}: {message}")

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
        if (tracer := active_tracer()) is not None:  # a symbolic trace records the call (tinygrad_attn.symbolic)
            call = Optimizer.zero_grad if set_to_none else lambda opt: Optimizer.zero_grad(opt, set_to_none=False)
            return tracer.effect(self, "zero_grad", call)
        for g in self.param_groups:
            for p in g["params"]:
                if set_to_none or p._grad is None:  # (the slot itself: a parameter is a leaf)
                    p._grad = None
                    continue
                if p.grad._ctx is not None:  # a gradient made with create_graph: drop its history, as PyTorch
                    p.grad = p.grad.detach()
                p.grad.zero_()

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Update every parameter that has a gradient, in place (its memory is written).

        ``closure``, as in PyTorch, re-evaluates the model and returns the loss: it is
        called (with gradients recorded) before the update, and its loss returned."""
        self._opt_called = True  # (a schedule stepped before any optimizer step warns, as PyTorch's)
        for hook in list(self._pre_hooks.values()):
            hook(self, (), {})
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        self._step()
        for hook in list(self._post_hooks.values()):
            hook(self, (), {})
        return loss

    @no_grad()
    def _step(self) -> None:
        if (tracer := active_tracer()) is not None:  # a symbolic trace records the update (tinygrad_attn.symbolic)
            return tracer.optimizer_step(self)
        quiet = FP_STATE.set(QUIET)  # (an inf or NaN gradient updates without NumPy's warnings: engine/quiet.py)
        try:
            for i in range(len(self.param_groups)):
                self.foreach_update(i)
        finally:
            FP_STATE.reset(quiet)

    def register_step_pre_hook(self, hook: Callable[..., Any]) -> _HookHandle:
        """Call ``hook(optimizer, args, kwargs)`` before each ``step()``; returns a handle
        whose ``remove()`` takes it away."""
        return _HookHandle(self._pre_hooks, hook)

    def register_step_post_hook(self, hook: Callable[..., Any]) -> _HookHandle:
        """Call ``hook(optimizer, args, kwargs)`` after each ``step()``."""
        return _HookHandle(self._post_hooks, hook)

    def foreach_update(self, group: int) -> None:
        """What :meth:`step` does for ``param_groups[group]`` alone: the update of all its
        parameters that have a gradient, a flat bucket at a time where the optimizer has a
        flat form (``foreach`` not False). A traced step (``tga.compile``) shows and replays
        the update as one such line per param group."""
        group = self.param_groups[group]
        ps = group["params"]
        sparse = [p for p in ps if p._grad is not None and isinstance(p._grad._data, SparseData)]
        if sparse:  # (a sparse gradient: the optimizers that take one, each parameter by itself)
            for p in sparse:
                self._check_sparse(p, group)
        if (
            not sparse
            and type(self)._flat_update is not Optimizer._flat_update
            and group.get("foreach") is not False
            and len(set(map(id, ps))) == len(ps)  # (a parameter listed twice is stepped twice, one by one)
        ):
            self._step_flat(group)  # (array calls only: nothing it does records a graph)
            return
        with no_grad():
            for p in group["params"]:
                g = p.grad
                if g is None:
                    continue
                self._check_grad(p, g)
                gd = g._data
                if isinstance(gd, SparseData):
                    gd = self._sparse_grad(p, gd, group)
                if g.dtype != p.dtype:
                    gd = p._dev.ops.astype(gd, p._data.dtype)
                if group.get("maximize"):
                    gd = -gd
                store_array(p, self._update(p, gd, self._state_of(p), group), self._writes(group))

    def _update(self, p: Tensor, grad: Any, state: dict[str, Any], group: dict[str, Any]) -> Any:
        raise NotImplementedError(f"{self._name} has no update rule")

    def _check_sparse(self, p: Tensor, group: dict[str, Any]) -> None:
        """PyTorch's refusal of a sparse gradient (``nn.Embedding(sparse=True)``'s), for an optimizer
        that takes none; those that take one (SGD, Adagrad, SparseAdam) override it."""
        raise RuntimeError(f"{self._name} does not support sparse gradients")

    def _sparse_grad(self, p: Tensor, grad: Any, group: dict[str, Any]) -> Any:
        """The gradient ``_update`` gets for a sparse one: written out dense (zeros elsewhere, which
        SGD's and Adagrad's updates leave as PyTorch's sparse updates leave them)."""
        return grad.dense()

    def _writes(self, group: dict[str, Any]) -> int:
        """How many in-place writes PyTorch's step makes to each parameter it updates, which
        its version counts (``p._version`` as in PyTorch; a graph that saved a parameter
        before the step raises in its backward, as there)."""
        return 1

    def _check_grad(self, p: Tensor, g: Tensor) -> None:
        if g._dev is not p._dev or g.shape != p.shape:
            raise RuntimeError(
                f"{self._name}.step: a parameter of shape {tuple(p.shape)} on {p.device} has a gradient of "
                f"shape {tuple(g.shape)} on {g.device}"
            )

    # -- the update of a whole group in a few array calls ---------------------------------
    # The parameters of a group that share a device, a dtype and the shape of their state
    # (``_flat_key``) form a bucket: each of their state arrays is one flat array per
    # bucket, each state tensor's ``_data`` a view of its slice. A step gathers the
    # gradients into one array, updates the whole bucket's state with a dozen array calls
    # instead of a dozen per parameter (the benchmark GPT's AdamW, 36 parameters: figures in
    # benchmarks/README.md), and then each parameter with one or two (``p * decay - q``, in
    # place); where an optimizer has a compiled loop
    # (``_flat_update_pieces``: Adam's and SGD's, with numba), it updates each parameter in
    # place, reading it and its gradient where they are, with no gathering pass: one call
    # per parameter. (The parameters are not moved into one flat array for good, as views:
    # their memory would then have one root, so one version counter, and an in-place change
    # of one parameter would fail the backward of a graph that saved another; and an array
    # a user holds, ``p.data`` or a view, would stop being the parameter.) Either way a
    # parameter keeps its memory and the step writes it in place, as PyTorch's does: its
    # views, ``detach()`` and ``state_dict()`` see the new values, and its version counts
    # the step (``_writes``). State is updated in place. Before each step the bucket checks
    # that every state tensor still holds its view and every parameter its dtype, shape and
    # device (a user may assign ``p.data``, ``module.to`` moves it, ``load_state_dict``
    # replaces the state); where one does not, the bucket is gathered again.
    def _flat_update(self, b: _Bucket, grad: Any, group: dict[str, Any]) -> tuple[float, Any]:
        """Update the state of bucket ``b`` in place from its flat gradient ``grad`` (an array
        of its own, which may be overwritten); returns ``(decay, q)``: each parameter's new
        values are ``p * decay - q`` (its slice of the flat ``q``; ``decay`` 1: ``p - q``)."""
        raise NotImplementedError  # pragma: no cover - see step

    def _flat_update_pieces(self, b: _Bucket, grads: list[Any], group: dict[str, Any]) -> bool:
        """:meth:`_flat_update` with the parameters and their gradients (``grads``, each of its
        parameter's shape) read where they are (not gathered into one array first), the
        parameters written in place (their versions not counted); False where the optimizer
        has no such form for ``b``."""
        return False

    def _flat_key(self, state: dict[str, Any]) -> Any:
        """What parameters of one bucket must share in their state (a step count)."""
        return None

    def _flat_begin(self, p: Tensor, state: dict[str, Any], group: dict[str, Any]) -> None:
        """Make what a parameter's state needs before its first update."""

    def _step_flat(self, group: dict[str, Any]) -> None:
        """Update the parameters of ``group`` that have a gradient, bucket by bucket.

        The buckets are kept between steps while the same parameters have gradients and
        :meth:`_Bucket.intact` holds; each step then costs a few Python operations per
        parameter besides the update itself (a compiled step of a small model calls this at
        every replay)."""
        cached = self._flat.get(id(group))
        if cached is not None and cached[0] is group and len(cached[2]) == 1 and not group.get("maximize"):
            # (the usual step: nothing changed since the last one, checked in one pass)
            b = cached[2][0]
            grads = b.unchanged_grads(group["params"], self.state)
            if grads is not None and self._same_key(b) and self._flat_update_pieces(b, grads, group):
                b.bump(self._writes(group))
                b.share_state()
                return
        ready = []
        for p in group["params"]:
            g = p._grad
            if g is not None:
                if g._dev is not p._dev or g._data.shape != p._data.shape:
                    self._check_grad(p, g)  # (raises: before anything is updated)
                ready.append(p)
        if not ready:
            return
        ids = tuple(map(id, ready))
        cached = self._flat.get(id(group))
        state = self.state
        if (
            cached is None
            or cached[0] is not group
            or cached[1] != ids
            or not all(b.intact(state) and self._same_key(b) for b in cached[2])
        ):
            cached = (group, ids, self._buckets(ready, group))
            self._flat[id(group)] = cached
        writes = self._writes(group)
        maximize = group.get("maximize")
        for b in cached[2]:
            dtype, dev = b.dtype, b.dev
            grads = [p._grad._data for p in b.params]
            # (the dtypes by identity first: NumPy's builtin dtypes are one object each)
            if maximize or not (
                all(map(is_, map(_DTYPE, grads), repeat(dtype))) or all(gd.dtype == dtype for gd in grads)
            ):
                ns = dev.ops
                grads = [ns.astype(gd, dtype) if gd.dtype != dtype else gd for gd in grads]
                if maximize:
                    grads = [-gd for gd in grads]
            if self._flat_update_pieces(b, grads, group):
                b.bump(writes)
            else:
                ns = dev.ops
                grads = [ns.reshape(gd, (-1,)) for gd in grads]
                # (concat: a fresh array even for one parameter, which the update may overwrite)
                g = ns.concat(grads) if len(grads) > 1 else grads[0] * 1
                b.take_step(*self._flat_update(b, g, group), writes)
            b.share_state()

    def _same_key(self, b: _Bucket) -> bool:
        # (b.states: each parameter's state dict, which b.intact has just found in self.state;
        # where none gained or lost an entry since the last check, the answer is the last one)
        sizes = list(map(len, b.states))
        if sizes == b._state_sizes:
            return True
        flat_key = self._flat_key
        key = flat_key(b.states[0])
        same = all(flat_key(st) == key for st in b.states)
        b._state_sizes = sizes if same else None
        return same

    def _buckets(self, ready: list[Tensor], group: dict[str, Any]) -> list[_Bucket]:
        """The parameters ``ready`` (each with a gradient) as buckets, their values and
        state gathered into flat arrays."""
        by_key: dict[Any, list[Tensor]] = {}
        for p in ready:
            st = self._state_of(p)
            self._flat_begin(p, st, group)
            by_key.setdefault((p._dev, p.dtype, self._flat_key(st)), []).append(p)
        return [_Bucket(ps, self.state) for ps in by_key.values()]

    # -- the update as tensor ops, for a symbolic trace (tinygrad_attn.symbolic) ---------
    # A traced step is: ``_advance()`` (Python bookkeeping, one recorded call), then per
    # parameter ``_traced_update`` with the numbers ``_numbers`` gives (read at each
    # replay), written with tensor ops into the parameter and its state in place. The
    # eager step above keeps its array arithmetic: the same formulas, in the same order,
    # so a replay gives the eager step's values.
    def _traceable(self) -> bool:
        """Whether this optimizer can give its update as ops; if not, a trace records one
        call of ``step()``."""
        return type(self)._traced_update is not Optimizer._traced_update and not any(
            g.get("maximize") for g in self.param_groups
        )

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
        for pre in list(self._hooks("_optimizer_state_dict_pre_hooks").values()):
            pre(self)
        groups, state, index, number = [], {}, 0, {}
        for g in self.param_groups:
            # (PyTorch's numbering: a parameter listed twice in a group takes its last position)
            number.update({id(p): i for i, p in enumerate(g["params"], index) if id(p) not in number})
            ids = []
            for p in g["params"]:
                if self.state.get(p):
                    state[number[id(p)]] = {k: self._as_state_tensor(v, g.get("fused")) if k in self._scalar_state
                                            else v for k, v in self.state[p].items()}  # fmt: skip
                ids.append(number[id(p)])
            index += len(ids)
            groups.append({**{k: v for k, v in g.items() if k != "params"}, "params": ids})
        return self._after_state_dict({"state": state, "param_groups": groups})

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Take hyperparameters and state from :meth:`state_dict` (ours or PyTorch's, with
        its tensors as NumPy arrays or Tensors): the groups must hold as many parameters as
        this optimizer's. State moves to each parameter's device and dtype; everything is
        checked before anything changes."""
        who = f"{self._name}.load_state_dict"
        state_dict = self._before_load_state_dict(state_dict)
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
            for k in ("betas", "etas", "step_sizes", "eps"):
                if isinstance(g.get(k), list):  # through JSON or a hand-written dict
                    g[k] = tuple(g[k])
            # (options a state dict of an older version lacks take this optimizer's defaults)
            new_groups.append({**{k: v for k, v in self.defaults.items() if k not in g}, **g, "params": mine["params"]})
        new_state: dict[Tensor, dict[str, Any]] = {}
        for key, entries in saved_state.items():
            p = params.get(int(key))
            if p is None:
                raise ValueError(f"{who}: state for parameter {key}, which no param group lists")
            st = {}
            for name, v in entries.items():
                st[name] = self._state_value(p, name, v, f"{who}: state[{key}]['{name}']", name in self._scalar_state)
            new_state[p] = st
        for g in new_groups:
            self._check(g)
        self.param_groups[:] = new_groups
        self.state = defaultdict(dict, new_state)
        self._flat.clear()
        for post in list(self._hooks("_optimizer_load_state_dict_post_hooks").values()):
            post(self)

    # State entries that are numbers (PyTorch keeps them as 0-d tensors), whatever the parameter's shape.
    _scalar_state: tuple[str, ...] = ("step",)

    @staticmethod
    def _item(p: Tensor, v: Any) -> float:
        """``v`` (a number of ``p``'s step) as a float, where PyTorch's step reads it with ``item()`` from a
        tensor on ``p``'s device: a meta parameter has no values to give (PyTorch's ``RuntimeError``)."""
        if p._dev.meta:
            raise RuntimeError(f"Tensor.item() cannot be called on meta tensors (a step of a parameter of shape "
                               f"{tuple(p.shape)} reads a value)")  # fmt: skip
        return float(v)

    @staticmethod
    def _as_state_tensor(v: Any, fused: bool | None = None) -> Any:
        """A counter kept here as a Python number, as PyTorch keeps it: a 0-d tensor of the
        scalar dtype (float64 under a float64 default dtype, float32 otherwise or when fused)."""
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            return v
        from ..tensors.dtypes import get_default_dtype  # noqa: PLC0415 - (kept out of the import graph's cycles)
        from ..tensors.factories.creation import tensor  # noqa: PLC0415

        wide = get_default_dtype() == np.float64 and not fused
        return tensor(float(v), dtype=np.float64 if wide else np.float32)

    @staticmethod
    def _state_value(p: Tensor, name: str, v: Any, where: str, scalar: bool = False) -> Any:
        """One saved state entry for parameter ``p``: counters as Python numbers, arrays as
        tensors of ``p``'s shape, device and dtype."""
        if isinstance(v, Tensor):  # (asarray: a 0-d array's value may be a NumPy scalar, a float)
            v = np.asarray(v._dev.to_host(v._data))
        if v is None or isinstance(v, (bool, int, float)):
            return v
        arr = np.asarray(v)
        if name == "step" or scalar or (arr.ndim == 0 and p.ndim != 0):  # PyTorch keeps the step as a tensor
            return int(arr) if name == "step" and float(arr).is_integer() else arr.item()
        if arr.shape != p.shape:
            raise ValueError(f"{where} has shape {tuple(arr.shape)}, but the parameter has shape {tuple(p.shape)}")
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
        """PyTorch's layout: each group's settings (all but ``params``) in key order."""
        lines = [f"{type(self).__name__} ("]
        for i, group in enumerate(self.param_groups):
            lines += [""] * (i > 0) + [f"Parameter Group {i}"]  # (a blank line between groups)
            lines += [f"    {k}: {group[k]}" for k in sorted(group) if k != "params"]
        return "\n".join(lines) + "\n)"

    # -- the rest of PyTorch's Optimizer API: state-dict hooks, profile_hook_step -----------
    #: PyTorch's types of the step hooks: ``pre(optimizer, args, kwargs) -> None or (args, kwargs)``
    #: and ``post(optimizer, args, kwargs) -> None``.
    OptimizerPreHook: TypeAlias = Callable[[Any, tuple, dict], "tuple[tuple, dict] | None"]
    OptimizerPostHook: TypeAlias = Callable[[Any, tuple, dict], None]

    def _hooks(self, name: str) -> dict:
        """The hooks of one kind; their registry is made at the first registration (an optimizer
        without any carries none, and one unpickled from an older version works alike)."""
        return self.__dict__.get(name) or {}

    def _register_hook(self, name: str, hook: Callable[..., Any], prepend: bool) -> _HookHandle:
        hooks = self.__dict__.setdefault(name, OrderedDict())
        handle = _HookHandle(hooks, hook)
        if prepend:
            hooks.move_to_end(handle.id, last=False)
        return handle

    def register_state_dict_pre_hook(self, hook: Callable[[Any], None], prepend: bool = False) -> _HookHandle:
        """PyTorch's: ``hook(optimizer)`` runs before ``state_dict`` reads the optimizer."""
        return self._register_hook("_optimizer_state_dict_pre_hooks", hook, prepend)

    def register_state_dict_post_hook(self, hook: Callable[..., Any], prepend: bool = False) -> _HookHandle:
        """PyTorch's: ``hook(optimizer, state_dict)`` runs on what ``state_dict`` made; what it
        returns (not None) is returned instead."""
        return self._register_hook("_optimizer_state_dict_post_hooks", hook, prepend)

    def register_load_state_dict_pre_hook(self, hook: Callable[..., Any], prepend: bool = False) -> _HookHandle:
        """PyTorch's: ``hook(optimizer, state_dict)`` runs on (a shallow copy of) the dict that
        ``load_state_dict`` was given; what it returns (not None) is loaded instead."""
        return self._register_hook("_optimizer_load_state_dict_pre_hooks", hook, prepend)

    def register_load_state_dict_post_hook(self, hook: Callable[[Any], None], prepend: bool = False) -> _HookHandle:
        """PyTorch's: ``hook(optimizer)`` runs after ``load_state_dict`` has loaded."""
        return self._register_hook("_optimizer_load_state_dict_post_hooks", hook, prepend)

    def _after_state_dict(self, state_dict: dict[str, Any]) -> dict[str, Any]:
        for post in list(self._hooks("_optimizer_state_dict_post_hooks").values()):
            got = post(self, state_dict)
            if got is not None:
                state_dict = got
        return state_dict

    def _before_load_state_dict(self, state_dict: Any) -> Any:
        hooks = list(self._hooks("_optimizer_load_state_dict_pre_hooks").values())
        if not hooks:
            return state_dict
        state_dict = state_dict.copy()  # (PyTorch's: a hook may add or drop keys of it freely)
        for pre in hooks:
            got = pre(self, state_dict)
            if got is not None:
                state_dict = got
        return state_dict

    @staticmethod
    def profile_hook_step(func: Callable[..., Any]) -> Callable[..., Any]:
        """PyTorch's decorator of a ``step`` method: the optimizer's step pre-hooks run before it
        (one may return new ``(args, kwargs)``), its step post-hooks after."""

        @functools.wraps(func)
        def step(*args: Any, **kwargs: Any) -> Any:
            self = args[0]
            for pre in list(self._pre_hooks.values()):
                got = pre(self, args, kwargs)
                if got is not None:
                    if not (isinstance(got, tuple) and len(got) == 2):
                        raise RuntimeError(f"{func} must return None or a tuple of (new_args, new_kwargs), but got "
                                           f"{got}.")  # fmt: skip
                    args, kwargs = got
            out = func(*args, **kwargs)
            for post in list(self._post_hooks.values()):
                post(self, args, kwargs)
            return out

        return step


class _HookHandle:
    """What ``register_step_*_hook`` returns: ``remove()`` takes the hook away."""

    _next = 0

    def __init__(self, hooks: dict[int, Callable[..., Any]], hook: Callable[..., Any]) -> None:
        _HookHandle._next += 1
        self.id, self._hooks = _HookHandle._next, hooks
        hooks[self.id] = hook

    def remove(self) -> None:
        self._hooks.pop(self.id, None)


def _assign(t: Tensor, value: Tensor) -> None:
    """``t``'s array takes ``value``'s values, in place (one store of a traced program)."""
    _write(t, value, "step")


class _Bucket:
    """Parameters updated together (see :meth:`Optimizer._step_flat`): ``state[name]``
    holds each state array of theirs one after the other, each state tensor's ``_data`` a
    view of its slice (so they share a version counter, as views do); the parameters keep
    their own memory."""

    __slots__ = (
        "params",
        "dev",
        "dtype",
        "size",
        "state",
        "states",
        "_slices",
        "_seen",
        "_roots",
        "_held",
        "_shared",
        "_scalars",
        "_loopable",
        "_state_sizes",
    )

    def __init__(self, params: list[Tensor], states: dict[Tensor, dict[str, Any]]) -> None:
        self.params = params
        self.dev = params[0]._dev
        self.dtype = params[0]._data.dtype
        ns = self.dev.ops
        self._slices, o = [], 0
        for p in params:
            n = math.prod(p.shape)
            self._slices.append((o, o + n, tuple(p.shape)))
            o += n
        self.size = o
        self._seen = [p._data for p in params]
        self._state_sizes: list[int] | None = None
        self._roots: list[Any] | None = None
        self._scalars: tuple[tuple[float, ...], Any] = ((), None)
        self._loopable: bool | None = None
        self.states = [states[p] for p in params]
        self._shared: tuple | None = None  # the flat state arrays the state tensors were last made views of
        self._held: tuple = ((), (), (), (), True)
        self.state = {
            name: _gather(ns, [st[name]._data for st in self.states])
            for name, v in self.states[0].items()
            if isinstance(v, Tensor)
        }
        self.share_state()

    def _split(self, flat: Any) -> list[Any]:
        reshape = self.dev.ops.reshape
        return [reshape(flat[a:b], shape) for a, b, shape in self._slices]

    def gather_params(self) -> Any:
        """The parameters' values one after the other, in a new flat array."""
        return _gather(self.dev.ops, [p._data for p in self.params])

    def take_step(self, decay: float, q: Any, writes: int) -> None:
        """Each parameter becomes ``p * decay - q`` (its slice of the flat ``q``), in its own
        memory where it can be written (see :func:`~tinygrad_attn.tensors.mutation.inplace.store_array`), and counts ``writes`` changes."""
        o = _inplace_ns(self.dev)
        written = []
        for p, qi in zip(self.params, self._split(q)):
            dst = p._data
            if o is not None:
                try:
                    if decay != 1.0:
                        o.multiply(dst, decay, out=dst)
                    o.subtract(dst, qi, out=dst)
                except ValueError:  # (read-only memory: untouched, the ufunc checks before it writes)
                    pass
                else:
                    written.append(dst)
                    continue
            store_array(p, (dst * decay if decay != 1.0 else dst) - qi, writes)
        if written:
            bump_versions(written, writes)

    def unchanged_grads(self, params: list[Tensor], states: dict[Tensor, dict[str, Any]]) -> list[Any] | None:
        """The gradients' arrays, where this bucket is all of its group (``params``, in order)
        and nothing it depends on changed since the last step: every parameter has a gradient
        of its own shape, of the bucket's dtype (the same dtype object) and device, and the
        array, state dict and state tensors it had; else None (then the full check runs)."""
        if len(params) != len(self.params):
            return None
        dtype, dev = self.dtype, self.dev
        grads = []
        for p, q, st, d in zip(params, self.params, self.states, self._seen):
            g = p._grad
            if p is not q or g is None or p._data is not d or states.get(p) is not st:
                return None
            gd = g._data
            if g._dev is not dev or gd.dtype is not dtype or gd.shape != d.shape:
                return None
            grads.append(gd)
        return grads if self._held_intact() else None

    def loop_arrays(self, grads: list[Any], *state: Any) -> bool:
        """Whether the compiled loops (``ops.cpu_kernels``) can take this bucket: its
        parameters writable, they, their gradients ``grads`` and the flat ``state`` arrays
        C-contiguous NumPy arrays of one float dtype (the parameters' layout is checked once
        per array, the rest at each step)."""
        ws = self._seen
        if self._loopable is None:
            self._loopable = cpu_kernels.float_arrays(*ws)
        if not (self._loopable and all(map(_WRITEABLE, ws))):
            return False
        arrays = (*state, *grads)  # (C-level checks first; float_arrays where one fails, as it says why not)
        return (
            all(map(is_, map(type, arrays), repeat(np.ndarray)))
            and all(map(is_, map(_DTYPE, arrays), repeat(self.dtype)))
            and all(map(_C_CONTIGUOUS, arrays))
        ) or cpu_kernels.float_arrays(ws[0], *arrays)

    def scalars(self, values: tuple[float, ...]) -> Any:
        """``values`` as a NumPy array of the bucket's dtype, each number rounded as NumPy
        rounds a Python float for an array of that dtype (what the compiled loops read); the
        last one kept, for a step whose numbers did not change."""
        last, arr = self._scalars
        if last != values:
            arr = np.array(values, self.dtype)
            self._scalars = (values, arr)
        return arr

    def bump(self, writes: int) -> None:
        """Count ``writes`` in-place changes of each parameter (written in place by a compiled
        loop, see :meth:`Optimizer._flat_update_pieces`)."""
        roots = self._roots
        if roots is None:  # (the memory each parameter's array belongs to: kept while the arrays are)
            roots = self._roots = [_memory_root(d) for d in self._seen]
        bump_roots(roots, writes)

    def share_state(self) -> None:
        """Each parameter's state tensors become views of the flat state arrays where a
        step made a new one (SGD's momentum at its first step, or any update on a
        namespace without ``out=``)."""
        shared = self._shared
        if shared is not None and len(shared) == len(self.state) and all(map(is_, self.state.values(), shared)):
            return
        self._shared = tuple(self.state.values())
        held = []
        for name, flat in self.state.items():
            for st, v in zip(self.states, self._split(flat)):
                t = st.get(name)
                if isinstance(t, Tensor):
                    t._data = v
                else:
                    st[name] = t = Tensor._wrap(v, self.dev)
                held.append((st, name, t, v))
        cols = tuple(zip(*held)) if held else ((), (), (), ())  # (as columns: see intact)
        self._held = (*cols, all(type(st) is dict for st in cols[0]))

    def intact(self, states: dict[Tensor, dict[str, Any]]) -> bool:
        """Whether every parameter still has the device, dtype and shape this bucket was made
        for and the state dict it had, and every state tensor is the one this bucket made,
        holding its view (identity checks; the parameters' arrays found again where one changed)."""
        seen = self._seen
        for p, st, d in zip(self.params, self.states, seen):
            if p._data is not d or states.get(p) is not st:
                break
        else:
            return self._held_intact()
        for i, (p, st) in enumerate(zip(self.params, self.states)):
            d = p._data
            if d is not seen[i]:  # (new memory: user code assigned it, or module.to)
                if p._dev is not self.dev or d.dtype != self.dtype or tuple(d.shape) != self._slices[i][2]:
                    return False
                seen[i] = d
                self._roots = self._loopable = None
            if states.get(p) is not st:
                return False
        return self._held_intact()

    def _held_intact(self) -> bool:
        """Whether every state tensor this bucket made is still in its state dict, holding its
        view of the flat array (a column at a time)."""
        dicts, names, tensors, arrays, plain = self._held
        if not plain:
            return all(st.get(name) is t for st, name, t in zip(dicts, names, tensors)) and all(
                map(is_, map(_DATA, tensors), arrays)
            )
        return all(map(is_, map(dict.get, dicts, names), tensors)) and all(map(is_, map(_DATA, tensors), arrays))


_DATA = operator.attrgetter("_data")
_DTYPE = operator.attrgetter("dtype")
_WRITEABLE = operator.attrgetter("flags.writeable")
_C_CONTIGUOUS = operator.attrgetter("flags.c_contiguous")


def _inplace_ns(dev: Any) -> Any:
    """The array namespace if its functions take ``out=`` (NumPy, CuPy), else None
    (array_api_strict: each result is a new array)."""
    return dev.xp if hasattr(dev.xp, "copyto") else None


def _mul(o: Any, a: Any, b: Any, out: Any) -> Any:
    """``a * b``, written into ``out`` where the namespace ``o`` can."""
    return o.multiply(a, b, out=out) if o is not None else a * b


def _gather(ns: Any, arrays: list[Any]) -> Any:
    """The arrays' values one after the other in one new 1-D array."""
    return ns.concat([ns.reshape(a, (-1,)) for a in arrays])
