"""``Module``: parameters and children registered by assignment, named as PyTorch names them.

>>> class Net(Module):
...     def __init__(self):
...         super().__init__()
...         self.fc = Linear(4, 2)
...     def forward(self, x):
...         return self.fc(x).relu()
>>> [n for n, _ in Net().named_parameters()]
['fc.weight', 'fc.bias']
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from ..autograd import Scope, _State
from ..device import get_device
from ..tensor import Tensor


class Parameter(Tensor):
    """A tensor that a :class:`Module` registers as a learnable weight."""

    __slots__ = ()

    def __init__(self, data: Any, requires_grad: bool = True, **kw: Any) -> None:
        if isinstance(data, Tensor):
            kw.setdefault("device", data.device)
            data = data.detach()
        super().__init__(data, requires_grad=requires_grad, **kw)


class Module:
    """Base class of every layer and model.

    Assigning a :class:`Parameter`, a ``Module`` or a buffer (``register_buffer``) to an
    attribute registers it. Calling a module runs ``forward`` inside a graph scope named
    after the attribute it is stored under, so pictures group its ops.
    """

    training: bool

    def __init__(self) -> None:
        object.__setattr__(self, "_parameters", {})
        object.__setattr__(self, "_modules", {})
        object.__setattr__(self, "_buffers", {})
        object.__setattr__(self, "_non_persistent", set())
        object.__setattr__(self, "_scope_name", "")
        object.__setattr__(self, "training", True)

    # -- registration -------------------------------------------------------------
    def __setattr__(self, name: str, value: Any) -> None:
        if "_parameters" not in self.__dict__:
            raise RuntimeError(f"{type(self).__name__}: call super().__init__() before assigning attributes")
        params, mods, bufs = self._parameters, self._modules, self._buffers
        for d in (params, mods, bufs):
            d.pop(name, None)
        if isinstance(value, Parameter):
            params[name] = value
        elif isinstance(value, Module):
            mods[name] = value
            if not value._scope_name:
                object.__setattr__(value, "_scope_name", name)
        elif name in self.__dict__.get("_buffer_names", ()) and isinstance(value, Tensor):
            bufs[name] = value
        object.__setattr__(self, name, value)

    def __delattr__(self, name: str) -> None:
        for d in (self._parameters, self._modules, self._buffers):
            d.pop(name, None)
        object.__delattr__(self, name)

    def register_buffer(self, name: str, tensor: Tensor | None, persistent: bool = True) -> None:
        """A tensor that is state but not learned (moves with ``to``; saved if persistent)."""
        names = self.__dict__.setdefault("_buffer_names", set())
        names.add(name)
        if not persistent:
            self._non_persistent.add(name)
        object.__setattr__(self, name, tensor)
        if tensor is not None:
            self._buffers[name] = tensor

    def register_parameter(self, name: str, param: Parameter | None) -> None:
        if param is None:
            object.__setattr__(self, name, None)
        else:
            setattr(self, name, param)

    # -- calling ------------------------------------------------------------------
    def forward(self, *args: Any, **kw: Any) -> Any:
        raise NotImplementedError(f"{type(self).__name__} has no forward()")

    def __call__(self, *args: Any, **kw: Any) -> Any:
        prev = _State.scope
        _State.scope = Scope(self._scope_name, "module", prev, self)
        try:
            return self.forward(*args, **kw)
        finally:
            _State.scope = prev

    # -- traversal ----------------------------------------------------------------
    def named_children(self) -> Iterator[tuple[str, Module]]:
        yield from self._modules.items()

    def children(self) -> Iterator[Module]:
        for _, m in self.named_children():
            yield m

    def named_modules(self, prefix: str = "") -> Iterator[tuple[str, Module]]:
        seen: set[int] = set()
        stack = [(prefix, self)]
        while stack:
            name, m = stack.pop()
            if id(m) in seen:
                continue
            seen.add(id(m))
            yield name, m
            kids = [(f"{name}.{k}" if name else k, c) for k, c in m._modules.items()]
            stack.extend(reversed(kids))

    def modules(self) -> Iterator[Module]:
        for _, m in self.named_modules():
            yield m

    def named_parameters(self, prefix: str = "", recurse: bool = True) -> Iterator[tuple[str, Parameter]]:
        """``(dotted name, parameter)`` pairs, each parameter once, in registration order."""
        seen: set[int] = set()
        mods = self.named_modules(prefix) if recurse else iter([(prefix, self)])
        for mname, m in mods:
            for pname, p in m._parameters.items():
                if p is None or id(p) in seen:
                    continue
                seen.add(id(p))
                yield (f"{mname}.{pname}" if mname else pname), p

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_buffers(self, prefix: str = "") -> Iterator[tuple[str, Tensor]]:
        for mname, m in self.named_modules(prefix):
            for bname, b in m._buffers.items():
                yield (f"{mname}.{bname}" if mname else bname), b

    # -- state ----------------------------------------------------------------------
    def train(self, mode: bool = True) -> Module:
        for m in self.modules():
            object.__setattr__(m, "training", mode)
        return self

    def eval(self) -> Module:
        return self.train(False)

    def zero_grad(self) -> None:
        for p in self.parameters():
            p.grad = None

    def to(self, device: Any) -> Module:
        """Move every parameter and buffer to ``device``, in place; returns self."""
        dev = get_device(device)
        for m in self.modules():
            for t in list(m._parameters.values()) + list(m._buffers.values()):
                if t is not None and t._dev is not dev:
                    t.data = dev.asarray(t._dev.to_host(t.data))
                    t._dev = dev
                    if t.grad is not None:
                        t.grad = t.grad.to(dev)
        return self

    def _state_items(self) -> Iterator[tuple[str, Tensor]]:
        yield from self.named_parameters()
        for mname, m in self.named_modules():
            for bname, b in m._buffers.items():
                if bname not in m._non_persistent:
                    yield (f"{mname}.{bname}" if mname else bname), b

    def state_dict(self) -> dict[str, np.ndarray]:
        """Every parameter and persistent buffer, by dotted name, as a NumPy array (a copy)."""
        return {k: t.numpy() for k, t in self._state_items()}

    def load_state_dict(self, state: dict[str, Any], strict: bool = True) -> Module:
        """Copy arrays into this module's parameters and buffers, checking names and shapes."""
        own = dict(self._state_items())
        missing = [k for k in own if k not in state]
        unexpected = [k for k in state if k not in own]
        if strict and (missing or unexpected):
            parts = []
            if missing:
                parts.append(f"missing keys {missing}")
            if unexpected:
                parts.append(f"unexpected keys {unexpected}")
            raise KeyError(f"load_state_dict({type(self).__name__}): " + "; ".join(parts))
        for k, t in own.items():
            if k not in state:
                continue
            v = state[k]
            arr = v.numpy() if isinstance(v, Tensor) else np.asarray(v)
            if tuple(arr.shape) != t.shape:
                raise ValueError(
                    f"load_state_dict({type(self).__name__}): '{k}' has shape {tuple(arr.shape)} in the "
                    f"state dict but {t.shape} in the module"
                )
            t.data = t._dev.asarray(np.ascontiguousarray(arr), dtype=t.dtype)
        return self

    def save(self, path: Any) -> None:
        """Write the state dict as safetensors; atomically (a crash keeps the old file whole)."""
        from .checkpoint import save_state_dict  # noqa: PLC0415 - safetensors is optional

        save_state_dict(self.state_dict(), path)

    def load(self, path: Any) -> Module:
        """Fill this module from a safetensors file (strictly) and return it. Never unpickles."""
        from .checkpoint import load_state_dict  # noqa: PLC0415

        return self.load_state_dict(load_state_dict(path), strict=True)

    # -- display ------------------------------------------------------------------------
    def extra_repr(self) -> str:
        return ""

    def __repr__(self) -> str:
        lines = [f"{type(self).__name__}({self.extra_repr()}"]
        for name, m in self._modules.items():
            sub = repr(m).replace("\n", "\n  ")
            lines.append(f"  ({name}): {sub}")
        return "\n".join(lines) + ("\n)" if len(lines) > 1 else ")")


class ModuleList(Module):
    """A list of modules, registered as children ``0``, ``1``, ..."""

    def __init__(self, modules: Any = ()) -> None:
        super().__init__()
        for m in modules:
            self.append(m)

    def append(self, m: Module) -> ModuleList:
        setattr(self, str(len(self._modules)), m)
        return self

    def __getitem__(self, i: int) -> Any:
        if isinstance(i, slice):
            return ModuleList(list(self._modules.values())[i])
        return list(self._modules.values())[i]

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())


class Sequential(ModuleList):
    """Modules applied one after the other."""

    def __init__(self, *modules: Module) -> None:
        super().__init__(modules)

    def forward(self, x: Any) -> Any:
        for m in self:
            x = m(x)
        return x
