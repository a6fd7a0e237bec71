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

import copy
import pickle
import weakref
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, NamedTuple

import numpy as np

from ..engine.switches import Scope, _State, active_tracer
from ..tensors._tensor import Tensor, _to_args
from ..tensors.mutation.inplace import store_array


class Parameter(Tensor):
    """A tensor that a :class:`Module` registers as a learnable weight.

    ``Parameter(t)`` of a tensor is a leaf of its own over ``t``'s memory, as PyTorch's (a
    change of either shows in the other); of an array, or with another ``dtype`` or
    ``device``, it holds a copy.
    """

    __slots__ = ()

    def __init__(self, data: Any, requires_grad: bool = True, **kw: Any) -> None:
        if isinstance(data, Tensor):
            if kw.get("dtype") is None and kw.get("device") in (None, data.device):
                super().__init__((), name=kw.get("name"))
                self._data, self._dev = data._data, data._dev
                if requires_grad:
                    self.requires_grad_(True)
                return
            kw.setdefault("device", data.device)
            data = data.detach()
        super().__init__(data, requires_grad=requires_grad, **kw)

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()


class Buffer(Tensor):
    """PyTorch's ``nn.Buffer(data=None, *, persistent=True)``: a tensor that a :class:`Module`
    registers as a buffer when it is assigned to an attribute (``self.mean = nn.Buffer(x)`` is
    ``self.register_buffer("mean", x)``), saved in the state dict unless ``persistent=False``.

    As PyTorch's, it is ``data`` detached (the same memory), keeping ``requires_grad``; no
    argument makes an empty one.

    >>> m = Module(); m.scale = Buffer(Tensor([2.0])); [n for n, _ in m.named_buffers()]
    ['scale']
    """

    __slots__ = ("persistent",)

    def __init__(self, data: Any = None, *, persistent: bool = True) -> None:
        if data is None:
            data = Tensor(np.zeros((0,), np.float32))
        elif not isinstance(data, Tensor):
            data = Tensor(data)
        super().__init__((), name=data.name)
        self._data, self._dev = data._data, data._dev
        if data.requires_grad:
            self.requires_grad_(True)
        self.persistent = persistent

    def __reduce__(self) -> tuple:
        return (_rebuild_buffer, (Tensor.__reduce__(self), self.persistent))

    def __deepcopy__(self, memo: dict) -> Tensor:
        out = Tensor.__deepcopy__(self, memo)
        out.persistent = self.persistent
        return out


def _rebuild_buffer(reduced: tuple, persistent: bool) -> Buffer:
    """The other half of ``Buffer.__reduce__``: the tensor rebuilt, then its persistence."""
    rebuild, args = reduced
    out = rebuild(*args)
    out.persistent = persistent
    return out


class StateDictError(RuntimeError, KeyError, ValueError):
    """A state dict does not fit a module: a missing, unexpected or wrongly shaped entry.

    It is a ``RuntimeError`` (what PyTorch raises), and also a ``KeyError`` and a
    ``ValueError``, so code written for any of the three catches it.
    """

    __str__ = BaseException.__str__  # KeyError's would quote the whole message


class _IncompatibleKeys(NamedTuple):
    """What :meth:`Module.load_state_dict` returns, as PyTorch's: the module's keys the
    state dict lacked, and the state dict's keys the module lacks (both empty when strict)."""

    missing_keys: list[str]
    unexpected_keys: list[str]

    def __repr__(self) -> str:
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return f"_IncompatibleKeys(missing_keys={self.missing_keys!r}, unexpected_keys={self.unexpected_keys!r})"

    __str__ = __repr__


def _host_array(v: Any) -> np.ndarray:
    """A state dict's entry as a host array: a Tensor, a NumPy array, or another library's
    tensor (a torch tensor: detached first, then read through ``__array__``/DLPack)."""
    if isinstance(v, Tensor):
        return v.detach().numpy()
    if isinstance(v, np.ndarray):
        return v
    if hasattr(v, "detach"):  # torch: a tensor that requires grad refuses __array__
        v = v.detach()
    if hasattr(v, "cpu"):
        v = v.cpu()
    try:
        return np.asarray(v)
    except (TypeError, RuntimeError):
        return np.from_dlpack(v)


def _move(t: Tensor, dev: Any, dtype: Any = None) -> None:
    """Put ``t``'s array (and its gradient's) on ``dev`` in ``dtype``, keeping the object."""
    dt = t.dtype if dtype is None else np.dtype(dtype)
    if t._dev is dev and t.dtype == dt:
        return
    t._data = dev.asarray(t._dev.to_host(t._data), dtype=dt)
    if t.grad is not None:
        g = t.grad
        t.grad = Tensor._wrap(dev.asarray(g._dev.to_host(g._data), dtype=dt), dev)
    t._dev = dev


def _place(module: Module, device: Any, dtype: Any) -> None:
    """The ``device=``/``dtype=`` arguments of PyTorch's constructors: cast, then move, in place."""
    if dtype is not None:
        module.astype(dtype)
    if device is not None:
        module.to(device)


def _clear_grads(params: Iterable[Tensor], set_to_none: bool) -> None:
    """``zero_grad``'s work: ``grad = None``, or zeros in the gradient's own tensor."""
    for p in params:
        if set_to_none or p.grad is None:
            p.grad = None
        else:
            if p.grad._ctx is not None:  # a gradient made with create_graph: drop its history, as PyTorch
                p.grad = p.grad.detach()
            p.grad.zero_()


#: How many times any module's attributes changed (assigned, deleted, a buffer registered, a
#: training flag set): ``tga.compile``'s guard re-reads a module's attributes only when it moved.
_CHANGES = [0]


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
            if isinstance(value, (Parameter, Module)):  # (PyTorch's AttributeError; a RuntimeError as before)
                raise _BeforeInitError(f"cannot assign {'parameter' if isinstance(value, Parameter) else 'module'} "
                                       f"before Module.__init__() call ({type(self).__name__}.{name}): call "
                                       "super().__init__() first")  # fmt: skip
            raise RuntimeError(f"{type(self).__name__}: call super().__init__() before assigning attributes")
        params, mods, bufs = self._parameters, self._modules, self._buffers
        if name in params and isinstance(value, Tensor) and not isinstance(value, Parameter):
            # Silently unregistering would stop the weight from being trained and saved.
            raise TypeError(
                f"{type(self).__name__}.{name} is a parameter: assign a Parameter (or None), not a "
                f"Tensor of shape {tuple(value._data.shape)}; to change its values assign to .{name}.data"
            )
        if isinstance(value, Buffer):  # nn.Buffer: registered as register_buffer would, with its persistence
            params.pop(name, None)
            mods.pop(name, None)
            self.register_buffer(name, value, value.persistent)
            return
        if isinstance(value, Parameter):
            target = params
        elif isinstance(value, Module):
            target = mods
            if not value._scope_name:
                object.__setattr__(value, "_scope_name", name)
        elif name in self.__dict__.get("_buffer_names", ()) and isinstance(value, Tensor):
            target = bufs
        else:
            target = None
        for d in (params, mods, bufs):
            if d is not target:
                d.pop(name, None)
        if target is not None:
            target[name] = value  # an existing name keeps its place, as in PyTorch
        object.__setattr__(self, name, value)
        _CHANGES[0] += 1

    def __delattr__(self, name: str) -> None:
        for d in (self._parameters, self._modules, self._buffers):
            d.pop(name, None)
        object.__delattr__(self, name)
        _CHANGES[0] += 1

    def register_buffer(self, name: str, tensor: Tensor | None, persistent: bool = True) -> None:
        """A tensor that is state but not learned (moves with ``to``; saved if persistent)."""
        _check_name(self, name, "buffer", self._buffers)
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{type(tensor).__name__}' object to buffer '{name}' "
                            "(torch Tensor or None required)")  # fmt: skip
        names = self.__dict__.setdefault("_buffer_names", set())
        names.add(name)
        if persistent:
            self._non_persistent.discard(name)
        else:
            self._non_persistent.add(name)
        object.__setattr__(self, name, tensor)
        if tensor is not None:
            self._buffers[name] = tensor
        _CHANGES[0] += 1

    def register_parameter(self, name: str, param: Parameter | None) -> None:
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        _check_name(self, name, "parameter", self._parameters)
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{type(param).__name__}' object to parameter '{name}' "
                            "(torch.nn.Parameter or None required)")  # fmt: skip
        if param is None:
            object.__setattr__(self, name, None)
            _CHANGES[0] += 1
        else:
            setattr(self, name, param)

    def add_module(self, name: str, module: Module) -> None:
        """Register ``module`` as the child ``name`` (for names that are not identifiers)."""
        setattr(self, name, module)

    # -- calling ------------------------------------------------------------------
    def forward(self, *args: Any, **kw: Any) -> Any:
        raise NotImplementedError(f"{type(self).__name__} has no forward()")

    def __call__(self, *args: Any, **kw: Any) -> Any:
        d = self.__dict__
        pre, post = d.get("_forward_pre_hooks"), d.get("_forward_hooks")
        if pre:
            args, kw = _run_pre_hooks(self, pre, args, kw)
        prev = _State.scope
        _State.scope = Scope(self._scope_name, "module", prev, self)
        try:
            out = self.forward(*args, **kw)
        finally:
            _State.scope = prev
        if post:
            for hook, with_kwargs in list(post.values()):
                got = hook(self, args, kw, out) if with_kwargs else hook(self, args, out)
                if got is not None:
                    out = got
        return out

    def register_forward_pre_hook(self, hook: Callable[..., Any], *, prepend: bool = False,
                                  with_kwargs: bool = False) -> RemovableHandle:  # fmt: skip
        """PyTorch's: ``hook(module, args)`` (``with_kwargs``: ``hook(module, args, kwargs)``)
        runs before each ``forward``; what it returns (not None) replaces the arguments (a
        single value becomes a one-tuple; ``with_kwargs``: an ``(args, kwargs)`` pair)."""
        return _add_hook(self, "_forward_pre_hooks", (hook, with_kwargs), prepend)

    def register_forward_hook(self, hook: Callable[..., Any], *, prepend: bool = False,
                              with_kwargs: bool = False, always_call: bool = False) -> RemovableHandle:  # fmt: skip
        """PyTorch's: ``hook(module, args, output)`` (``with_kwargs``: ``hook(module, args,
        kwargs, output)``) runs after each ``forward``; what it returns (not None) replaces
        the output."""
        return _add_hook(self, "_forward_hooks", (hook, with_kwargs), prepend)

    # -- traversal ----------------------------------------------------------------
    def named_children(self) -> Iterator[tuple[str, Module]]:
        yield from self._modules.items()

    def children(self) -> Iterator[Module]:
        for _, m in self.named_children():
            yield m

    def named_modules(self, prefix: str = "") -> Iterator[tuple[str, Module]]:
        """``(dotted name, module)`` for this module and every descendant, each once, in pre-order."""
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

    def get_submodule(self, target: str) -> Module:
        """The descendant at a dotted path (``""`` is this module)."""
        m = self
        for part in target.split(".") if target else ():
            if part not in m._modules:
                raise AttributeError(f"{type(self).__name__} has no submodule '{target}' ('{part}' is missing)")
            m = m._modules[part]
        return m

    def named_parameters(self, prefix: str = "", recurse: bool = True,
                         remove_duplicate: bool = True) -> Iterator[tuple[str, Parameter]]:  # fmt: skip
        """``(dotted name, parameter)`` pairs, each parameter once (``remove_duplicate=False``:
        under every name), in registration order."""
        yield from self._named_members("_parameters", prefix, recurse, remove_duplicate)

    def _named_members(self, registry: str, prefix: str, recurse: bool,
                       remove_duplicate: bool) -> Iterator[tuple[str, Any]]:  # fmt: skip
        seen: set[int] = set()
        if not recurse:
            mods: Iterable[tuple[str, Module]] = [(prefix, self)]
        elif remove_duplicate:
            mods = self.named_modules(prefix)
        else:
            mods = self._all_named_modules(prefix)
        for mname, m in mods:
            for pname, p in getattr(m, registry).items():
                if p is None or (remove_duplicate and id(p) in seen):
                    continue
                seen.add(id(p))
                yield (f"{mname}.{pname}" if mname else pname), p

    def _all_named_modules(self, prefix: str) -> Iterator[tuple[str, Module]]:
        yield prefix, self
        for k, c in self._modules.items():
            if c is not None:
                yield from c._all_named_modules(f"{prefix}.{k}" if prefix else k)

    def get_parameter(self, target: str) -> Parameter:
        """The parameter at a dotted path (``"1.weight"``), as PyTorch's."""
        return self._get_member(target, "_parameters", "parameter")

    def get_buffer(self, target: str) -> Tensor:
        """The buffer at a dotted path, as PyTorch's."""
        return self._get_member(target, "_buffers", "buffer")

    def _get_member(self, target: str, registry: str, what: str) -> Any:
        path, _, name = target.rpartition(".")
        owner = self.get_submodule(path)
        if not hasattr(owner, name):
            raise AttributeError(f"{type(owner).__name__} has no attribute `{name}`")
        if name not in getattr(owner, registry):
            raise AttributeError(f"`{name}` is not a {what}")
        return getattr(owner, registry)[name]

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_buffers(self, prefix: str = "", recurse: bool = True,
                      remove_duplicate: bool = True) -> Iterator[tuple[str, Tensor]]:  # fmt: skip
        yield from self._named_members("_buffers", prefix, recurse, remove_duplicate)

    def buffers(self, recurse: bool = True) -> Iterator[Tensor]:
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    def apply(self, fn: Callable[[Module], Any]) -> Module:
        """Call ``fn`` on every descendant, then on this module (children first, as PyTorch)."""
        for m in self.children():
            m.apply(fn)
        fn(self)
        return self

    # -- state ----------------------------------------------------------------------
    def train(self, mode: bool = True) -> Module:
        """Set training mode on this module and every descendant (Dropout reads it)."""
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        for m in self.modules():
            object.__setattr__(m, "training", mode)
        _CHANGES[0] += 1
        return self

    def eval(self) -> Module:
        return self.train(False)

    def requires_grad_(self, flag: bool = True) -> Module:
        """Freeze (``False``) or unfreeze every parameter."""
        for p in self.parameters():
            p.requires_grad_(flag)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Forget every parameter's gradient (``grad = None``, PyTorch's default), or with
        ``set_to_none=False`` fill it with zeros (cut from any graph it had)."""
        if (tracer := active_tracer()) is not None:  # a symbolic trace records the call (tinygrad_attn.symbolic)
            call = Module.zero_grad if set_to_none else lambda m: Module.zero_grad(m, set_to_none=False)
            return tracer.effect(self, "zero_grad", call)
        _clear_grads(self.parameters(), set_to_none)

    def to(self, *args: Any, **kw: Any) -> Module:
        """Move every parameter, buffer and gradient to a device and/or cast the floating
        ones to a dtype, in place; returns self. PyTorch's signatures: ``to(device)``,
        ``to(dtype)``, ``to(device, dtype)``, ``to(tensor)``, ``to(device=..., dtype=...)``.

        The tensors stay the same objects, so optimizers holding them follow (their
        state moves at their next ``step``).
        """
        dev, dtype, _ = _to_args(args, kw, "Module.to")
        if dtype is not None:
            if np.dtype(dtype).kind not in "fc":
                raise TypeError(f"Module.to: only floating dtypes can be given to a module, got {np.dtype(dtype)}")
            self.astype(dtype)
        if dev is not None:
            for t in self._tensors():
                _move(t, dev)
        return self

    def astype(self, dtype: Any) -> Module:
        """Cast every floating-point parameter and buffer to ``dtype``, in place; returns self."""
        for t in self._tensors():
            if t.dtype.kind == "f":
                _move(t, t._dev, dtype)
        return self

    def double(self) -> Module:
        return self.astype(np.float64)

    def float(self) -> Module:
        return self.astype(np.float32)

    def half(self) -> Module:
        return self.astype(np.float16)

    def _tensors(self) -> Iterator[Tensor]:
        for m in self.modules():
            for t in list(m._parameters.values()) + list(m._buffers.values()):
                if t is not None:
                    yield t

    def _state_items(self, prefix: str = "") -> Iterator[tuple[str, Tensor]]:
        """Every parameter and persistent buffer under every name it has.

        Unlike ``named_parameters`` this does not drop a second name of a shared
        tensor: PyTorch's ``state_dict`` keeps both, so checkpoints of tied weights
        load in either library.
        """
        for pname, p in self._parameters.items():
            if p is not None:
                yield prefix + pname, p
        for bname, b in self._buffers.items():
            if bname not in self._non_persistent:
                yield prefix + bname, b
        for mname, m in self._modules.items():
            yield from m._state_items(f"{prefix}{mname}.")

    def state_dict(
        self, *, destination: dict | None = None, prefix: str = "", keep_vars: bool = False
    ) -> dict[str, Tensor]:
        """Every parameter and persistent buffer, by dotted name, as in PyTorch: a tensor
        without history sharing the module's memory (``keep_vars``: the parameters
        themselves). ``np.asarray(v)`` reads one as a NumPy array; ``v.clone()`` copies."""
        out = OrderedDict() if destination is None else destination  # (PyTorch's type)
        for k, t in self._state_items(prefix):
            out[k] = t if keep_vars else t.detach()
        return out

    def load_state_dict(self, state_dict: Mapping[str, Any], strict: bool = True,
                        assign: bool = False) -> _IncompatibleKeys:  # fmt: skip
        """Copy arrays into this module's parameters and buffers, in place (as PyTorch's: their
        views, ``detach()`` and earlier ``state_dict()`` entries see the new values, and each
        version counts the copy); returns PyTorch's named tuple ``(missing_keys, unexpected_keys)``.

        Every entry is checked before any is copied, so a state dict that does not fit
        leaves the module as it was. A missing or unexpected key (with ``strict``) or a
        wrong shape (always) raises :class:`StateDictError` naming the key and shapes.
        ``assign=True``: a Tensor entry already of the parameter's device and dtype is
        taken as it is (its memory shared, as PyTorch assigns it) instead of copied.
        """
        state = state_dict
        own = dict(self._state_items())
        arrays = {k: _host_array(v) for k, v in state.items()}
        keys = _IncompatibleKeys([k for k in own if k not in arrays], [k for k in arrays if k not in own])
        who = f"load_state_dict({type(self).__name__})"
        problems = []
        if strict:
            problems += [
                f"missing key '{k}' (the module's shape {tuple(t.shape)})" for k, t in own.items() if k not in arrays
            ]
            problems += [
                f"unexpected key '{k}' (shape {tuple(a.shape)} in the state dict)" for k, a in arrays.items()
                if k not in own
            ]  # fmt: skip
        for k, t in own.items():
            if k in arrays and tuple(arrays[k].shape) != t.shape:
                problems.append(
                    f"'{k}' has shape {tuple(arrays[k].shape)} in the state dict but {tuple(t.shape)} in the module"
                )
        if problems:
            raise StateDictError(f"{who}: " + "; ".join(problems))
        # Every entry is converted before any is stored: one that cannot be cast leaves the
        # module whole instead of half written.
        new, taken = {}, set()
        for k, t in own.items():
            if k not in arrays:
                continue
            a = arrays[k]
            v = state[k]
            if assign and isinstance(v, Tensor) and v._dev is t._dev and v.dtype == t.dtype:
                new[k] = v._data
                taken.add(k)
                continue
            if a.dtype.kind not in "biuf":  # strings, objects, complex: no meaningful cast to a weight
                raise StateDictError(
                    f"{who}: '{k}' is {a.dtype} in the state dict but {t.dtype} in the module, and cannot be cast; "
                    "nothing was loaded"
                )
            try:
                # np.array, not np.ascontiguousarray: that one turns a 0-d array into 1-d.
                new[k] = t._dev.asarray(np.array(a, order="C"), dtype=t.dtype)
            except (TypeError, ValueError) as e:
                raise StateDictError(
                    f"{who}: '{k}' ({a.dtype}) cannot be cast to {t.dtype} ({e}); nothing was loaded"
                ) from e
        for k, arr in new.items():
            if k in taken:
                own[k]._data = arr
            else:
                store_array(own[k], arr)
        return keys

    def save(self, path: Any) -> None:
        """Write the state dict as safetensors; atomically (a crash keeps the old file whole)."""
        from ..serialization.safetensors_file import save_safetensors  # noqa: PLC0415 - safetensors is optional

        save_safetensors(self.state_dict(), path)

    def load(self, path: Any) -> Module:
        """Fill this module from a safetensors file (strictly) and return it. Never unpickles."""
        from ..serialization.safetensors_file import load_safetensors  # noqa: PLC0415

        self.load_state_dict(load_safetensors(path), strict=True)
        return self

    # -- pickling and copying ---------------------------------------------------------------
    def __getstate__(self) -> dict[str, Any]:
        """The attributes as they are (tensors pickle their values, see ``Tensor.__reduce__``);
        any other object is wrapped so that, if it cannot be pickled, the error names its path."""
        for mname, m in self.named_modules():
            _PICKLE_PATHS.setdefault(m, f"{type(self).__name__}.{mname}" if mname else type(self).__name__)
        where = _PICKLE_PATHS.get(self, type(self).__name__)
        state = {}
        for k, v in self.__dict__.items():
            plain = v is None or isinstance(v, (bool, int, float, str, Tensor, Module, dict, set, list, tuple))
            state[k] = v if plain else _Attribute(v, f"{where}.{k}")
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        # copy.copy hands the wrapped attributes back as they are: unwrap them.
        self.__dict__.update({k: v.value if isinstance(v, _Attribute) else v for k, v in state.items()})

    # -- display ------------------------------------------------------------------------
    def extra_repr(self) -> str:
        return ""

    def __repr__(self) -> str:
        # PyTorch's layout: a one-line extra_repr inline; with children (or several lines) each on its own line
        extra = self.extra_repr()
        extra_lines = extra.split("\n") if extra else []
        child_lines = [f"({name}): " + repr(m).replace("\n", "\n  ") for name, m in self._modules.items()]
        lines = extra_lines + child_lines
        if not lines:
            return f"{type(self).__name__}()"
        if len(extra_lines) == 1 and not child_lines:
            return f"{type(self).__name__}({extra_lines[0]})"
        return f"{type(self).__name__}(\n  " + "\n  ".join(lines) + "\n)"


_PICKLE_PATHS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # module -> dotted path from the pickled root


class _Attribute:
    """A module's attribute on its way through pickle or deepcopy: pickling it tries the value
    first, so a failure names the attribute's dotted path instead of only its type."""

    __slots__ = ("value", "path")

    def __init__(self, value: Any, path: str) -> None:
        self.value, self.path = value, path

    def __reduce_ex__(self, protocol: Any) -> tuple:
        try:
            pickle.dumps(self.value, protocol=protocol)
        except Exception as e:
            raise TypeError(
                f"cannot pickle {self.path}, a {type(self.value).__name__}: {e}; remove it from the module before "
                "pickling (or save the state dict: module.save(path))"
            ) from e
        return (_same, (self.value,))

    def __deepcopy__(self, memo: dict) -> Any:
        return copy.deepcopy(self.value, memo)


def _same(value: Any) -> Any:
    return value


def functional_call(module: Module, tensors: Mapping[str, Tensor], *args: Any, **kw: Any) -> Any:
    """``module(*args, **kw)`` with some parameters or buffers replaced, by dotted name.

    The replacements are used as given, so gradients flow to them; the module's own
    tensors are put back afterwards. Handy for gradient checks in float64:

    >>> m = Linear(3, 2)  # doctest: +SKIP
    >>> w, b = (Tensor(p.numpy().astype("float64"), requires_grad=True) for p in m.parameters())
    >>> y = functional_call(m, {"weight": w, "bias": b}, x)
    """
    swaps = []
    for name, t in tensors.items():
        path, _, attr = name.rpartition(".")
        owner = module.get_submodule(path)
        if attr not in owner._parameters and attr not in owner._buffers:
            raise KeyError(f"functional_call: {type(module).__name__} has no parameter or buffer '{name}'")
        swaps.append((owner, attr, owner.__dict__[attr], t))
    try:
        for owner, attr, _, t in swaps:
            object.__setattr__(owner, attr, t)  # the attribute only: the registry keeps the original
        _CHANGES[0] += 1
        return module(*args, **kw)
    finally:
        for owner, attr, old, _ in swaps:
            object.__setattr__(owner, attr, old)
        _CHANGES[0] += 1


class _ListOf(Module):
    """The list interface of :class:`ModuleList` and :class:`ParameterList` over one registry
    of the module (``_entries``: its children, or its parameters), keyed ``0``, ``1``, ..."""

    _what = "entries"

    def _entries(self) -> dict[str, Any]:
        raise NotImplementedError  # pragma: no cover - each container names its registry

    def _put(self, key: str, value: Any) -> None:
        setattr(self, key, value)

    def append(self, value: Any) -> Any:
        self._put(str(len(self._entries())), value)
        return self

    def extend(self, values: Iterable[Any]) -> Any:
        for v in values:
            self.append(v)
        return self

    def _key(self, i: int) -> str:
        n = len(self._entries())
        if not -n <= i < n:
            raise IndexError(f"{type(self).__name__}: index {i} is out of range for {n} {self._what}")
        return str(i % n)

    def __getitem__(self, i: int | slice) -> Any:
        if isinstance(i, slice):
            return type(self)(list(self._entries().values())[i])
        return self._entries()[self._key(i)]

    def __setitem__(self, i: int, value: Any) -> None:
        self._put(self._key(i), value)

    def __delitem__(self, i: int | slice) -> None:
        """Remove entries; the rest are numbered ``0``, ``1``, ... again, as PyTorch's."""
        entries = self._entries()
        keys = list(entries)[i] if isinstance(i, slice) else [self._key(i)]
        kept = [v for k, v in entries.items() if k not in keys]
        self._renumber(kept)

    def _renumber(self, values: list[Any]) -> None:
        for k in list(self._entries()):
            delattr(self, k)
        for v in values:
            self.append(v)

    def insert(self, index: int, value: Any) -> None:
        """Put ``value`` before position ``index``, as ``list.insert``."""
        values = list(self._entries().values())
        values.insert(index, value)
        self._renumber(values)

    def pop(self, i: int = -1) -> Any:
        v = self[i]
        del self[i]
        return v

    def __iadd__(self, values: Iterable[Any]) -> Any:
        return self.extend(values)

    def __add__(self, other: Iterable[Any]) -> Any:
        return type(self)(list(self) + list(other))

    def __len__(self) -> int:
        return len(self._entries())

    def __iter__(self) -> Iterator[Any]:
        return iter(self._entries().values())


class RemovableHandle:
    """What a ``register_*_hook`` returns, as PyTorch's: ``remove()`` takes the hook away (a
    ``with`` block removes it at its end)."""

    _next_id = [0]

    def __init__(self, hooks: dict) -> None:
        self._hooks_ref = weakref.ref(hooks) if hasattr(hooks, "__weakref__") else (lambda: hooks)
        self.id = RemovableHandle._next_id[0]
        RemovableHandle._next_id[0] += 1

    def remove(self) -> None:
        hooks = self._hooks_ref()
        if hooks is not None:
            hooks.pop(self.id, None)

    def __enter__(self) -> RemovableHandle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.remove()


def _add_hook(module: Module, registry: str, entry: tuple, prepend: bool) -> RemovableHandle:
    hooks = module.__dict__.get(registry)
    if hooks is None:
        hooks = OrderedDict()
        object.__setattr__(module, registry, hooks)
    handle = RemovableHandle(hooks)
    hooks[handle.id] = entry
    if prepend:
        hooks.move_to_end(handle.id, last=False)
    return handle


def _run_pre_hooks(module: Module, hooks: dict, args: tuple, kw: dict) -> tuple[tuple, dict]:
    for hook, with_kwargs in list(hooks.values()):
        if with_kwargs:
            got = hook(module, args, kw)
            if got is not None:
                if not (isinstance(got, tuple) and len(got) == 2):
                    raise RuntimeError(f"forward pre-hook must return None or a tuple of (new_args, new_kwargs), "
                                       f"but got {got!r}.")  # fmt: skip
                args, kw = got
        else:
            got = hook(module, args)
            if got is not None:
                args = got if isinstance(got, tuple) else (got,)
    return args, kw


def _check_name(module: Module, name: Any, what: str, registry: dict) -> None:
    """PyTorch's checks of a name given to ``register_buffer``/``register_parameter``."""
    if not isinstance(name, str):
        raise TypeError(f"{what} name should be a string. Got {type(name).__name__}")
    if "." in name:
        raise KeyError(f'{what} name can\'t contain "."')
    if name == "":
        raise KeyError(f'{what} name can\'t be empty string ""')
    if module.__dict__.get(name) is not None and name not in registry:
        raise KeyError(f"attribute '{name}' already exists")


class _BeforeInitError(AttributeError, RuntimeError):
    """An attribute assigned to a module before ``Module.__init__`` ran: PyTorch's
    ``AttributeError``."""


class ModuleList(_ListOf):
    """A list of modules, registered as children ``0``, ``1``, ..."""

    _what = "modules"

    def __init__(self, modules: Iterable[Module] | None = None) -> None:
        super().__init__()
        for m in modules or ():
            self.append(m)

    def _entries(self) -> dict[str, Any]:
        return self._modules

    def __repr__(self) -> str:
        """PyTorch's: a run of equal children prints once, ``(0-3): 4 x Linear(...)``."""
        if isinstance(self, Sequential):  # (PyTorch's Sequential lists every child)
            return super().__repr__()
        runs: list[list] = []  # [first, last, repr]
        for i, m in enumerate(self):
            text = repr(m)
            if runs and runs[-1][2] == text:
                runs[-1][1] = i
            else:
                runs.append([i, i, text])
        if not runs:
            return "ModuleList()"
        lines = [(f"({a}): " if a == b else f"({a}-{b}): {b - a + 1} x ") + t.replace("\n", "\n  ") for a, b, t in runs]
        return "ModuleList(\n  " + "\n  ".join(lines) + "\n)"


class Sequential(ModuleList):
    """Modules applied one after the other: ``Sequential(Linear(4, 8), Linear(8, 2))``.

    As in PyTorch, one ``OrderedDict`` (or dict) of named modules names the children.
    """

    def __init__(self, *modules: Module | Mapping[str, Module]) -> None:
        if len(modules) == 1 and isinstance(modules[0], Mapping):
            super().__init__()
            for name, m in modules[0].items():
                self.add_module(name, m)
        else:
            super().__init__(modules)  # type: ignore[arg-type]

    def _key(self, i: int) -> str:
        # By position: the children may have names rather than "0", "1", ...
        keys = list(self._modules)
        if not -len(keys) <= i < len(keys):
            raise IndexError(f"{type(self).__name__}: index {i} is out of range for {len(keys)} modules")
        return keys[i]

    def __getitem__(self, i: int | slice) -> Any:
        if isinstance(i, slice):
            from collections import OrderedDict  # noqa: PLC0415

            return Sequential(OrderedDict(list(self._modules.items())[i]))
        return super().__getitem__(i)

    def forward(self, x: Any) -> Any:
        for m in self:
            x = m(x)
        return x


class Container(Module):
    """PyTorch's deprecated ``nn.Container(**modules)``: a :class:`Module` with the given
    children (it warns with a ``FutureWarning``, as PyTorch's; subclass :class:`Module` instead)."""

    def __init__(self, **kwargs: Module) -> None:
        import warnings  # noqa: PLC0415 - only for this deprecated class

        warnings.warn("`nn.Container` is deprecated. All of its functionality is now implemented in `nn.Module`. "
                      "Subclass that instead.", FutureWarning, stacklevel=2)  # fmt: skip
        super().__init__()
        for key, value in kwargs.items():
            self.add_module(key, value)


class _DictOf(Module):
    """The dict interface of :class:`ModuleDict` and :class:`ParameterDict` over one registry of
    the module (``_entries``), insertion order kept."""

    def _entries(self) -> dict[str, Any]:
        raise NotImplementedError  # pragma: no cover - each container names its registry

    def _put(self, key: str, value: Any) -> None:
        setattr(self, key, value)

    def __getitem__(self, key: str) -> Any:
        return self._entries()[key]

    def __setitem__(self, key: str, value: Any) -> None:
        if not isinstance(key, str) or hasattr(type(self), key):
            # A key such as "items" would hide the method of the same name.
            name = type(self).__name__
            raise KeyError(f"{name}: key {key!r} must be a string that is not a {name} attribute")
        self._put(key, value)

    def __delitem__(self, key: str) -> None:
        delattr(self, key)

    def __len__(self) -> int:
        return len(self._entries())

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries())

    def __contains__(self, key: object) -> bool:
        return key in self._entries()

    def keys(self) -> Iterable[str]:
        return self._entries().keys()

    def items(self) -> Iterable[tuple[str, Any]]:
        return self._entries().items()

    def values(self) -> Iterable[Any]:
        return self._entries().values()

    def get(self, key: str, default: Any = None) -> Any:
        return self._entries().get(key, default)

    def pop(self, key: str) -> Any:
        value = self._entries()[key]
        del self[key]
        return value

    def clear(self) -> None:
        for k in list(self._entries()):
            del self[k]

    def update(self, values: Mapping[str, Any] | Iterable[tuple[str, Any]]) -> None:
        for k, v in values.items() if isinstance(values, Mapping) else values:
            self[k] = v


class ModuleDict(_DictOf):
    """A dict of modules, registered as children under their keys (insertion order kept)."""

    def __init__(self, modules: Mapping[str, Module] | Iterable[tuple[str, Module]] | None = None) -> None:
        super().__init__()
        if modules is not None:
            self.update(modules)

    def _entries(self) -> dict[str, Any]:
        return self._modules


def _as_parameter(value: Any, where: str) -> Parameter:
    """A value for a parameter container: a Parameter as it is, a tensor made a Parameter over its
    memory (as PyTorch's containers do)."""
    if isinstance(value, Parameter):
        return value
    if isinstance(value, Tensor):
        return Parameter(value)
    raise TypeError(f"{where}: expected a Parameter or a Tensor, got {type(value).__name__}")


class ParameterList(_ListOf):
    """PyTorch's ``nn.ParameterList``: parameters registered as ``0``, ``1``, ... (a tensor given
    becomes a Parameter), indexed, iterated and extended as a list.

    >>> heads = ParameterList(Parameter(np.zeros((4, 4))) for _ in range(3))  # doctest: +SKIP
    """

    _what = "parameters"

    def __init__(self, values: Iterable[Any] | None = None) -> None:
        super().__init__()
        for v in values or ():
            self.append(v)

    def _entries(self) -> dict[str, Any]:
        return self._parameters

    def _put(self, key: str, value: Any) -> None:
        setattr(self, key, _as_parameter(value, "ParameterList"))

    def __iadd__(self, values: Iterable[Any]) -> ParameterList:
        return self.extend(values)


class ParameterDict(_DictOf):
    """PyTorch's ``nn.ParameterDict``: parameters registered under their keys (a tensor given
    becomes a Parameter), insertion order kept, used as a dict."""

    def __init__(self, parameters: Mapping[str, Any] | Iterable[tuple[str, Any]] | None = None) -> None:
        super().__init__()
        if parameters is not None:
            self.update(parameters)

    def _entries(self) -> dict[str, Any]:
        return self._parameters

    def _put(self, key: str, value: Any) -> None:
        setattr(self, key, _as_parameter(value, "ParameterDict"))
