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

import contextlib
import copy
import functools
import pickle
import weakref
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, NamedTuple, TypeVar

import numpy as np

from ..engine.overrides import _disabled_torch_function_impl
from ..engine.switches import Scope, _State, active_tracer
from ..engine.warn import warn as _user_warn
from ..tensors import dtypes as _dtypes
from ..tensors._tensor import Tensor, _memory_copy, _to_args
from ..tensors.factories.creation import typename
from ..tensors.mutation.inplace import store_array


class Parameter(Tensor):
    """A tensor that a :class:`Module` registers as a learnable weight.

    ``Parameter(t)`` of a tensor is a leaf of its own over ``t``'s memory, as PyTorch's (a
    change of either shows in the other); of an array, or with another ``dtype`` or
    ``device``, it holds a copy.
    """

    __slots__ = ()
    _subclass_results = False  # (an op of a parameter gives a Tensor, as PyTorch's)
    __torch_function__ = _disabled_torch_function_impl  # (PyTorch's: a parameter takes part in no dispatch)

    def __init__(self, data: Any = None, requires_grad: bool = True, *, dtype: Any = None, device: Any = None,
                 name: str | None = None) -> None:  # fmt: skip
        """``data`` (an empty tensor without it, as PyTorch's ``Parameter()``) as a learnable leaf;
        ``dtype``, ``device`` and ``name`` are the library's, as :class:`Tensor`'s."""
        if data is None:
            data = ()
        if isinstance(data, Tensor):
            if dtype is None and device in (None, data.device):
                super().__init__((), name=name)
                self._data, self._dev = data._data, data._dev
                if requires_grad:
                    self.requires_grad_(True)
                return
            device = data.device if device is None else device
            data = data.detach()
        super().__init__(data, requires_grad=requires_grad, dtype=dtype, device=device, name=name)

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()

    def __deepcopy__(self, memo: dict) -> Parameter:
        """A parameter over a clone of the values (in their layout), with ``requires_grad`` and
        without ``.grad``, as PyTorch's: its memory is its own even among views copied with it."""
        if id(self) not in memo:
            copied = Tensor._wrap(_memory_copy(self._data, {}, self._dev), self._dev)  # (a memo of its own)
            memo[id(self)] = type(self)(copied, self.requires_grad)
        return memo[id(self)]


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
    _subclass_results = False

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
    t._dev.refuse_copy_out(dev)  # (a meta module gets memory by to_empty, as PyTorch's says)
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


#: PyTorch's per-module hook registries (``_forward_hooks``: the hooks by handle id; the ``_with_kwargs``
#: and ``_always_called`` ones: the ids of the hooks registered so)
_HOOK_REGISTRIES = frozenset(
    """_forward_hooks _forward_hooks_with_kwargs _forward_hooks_always_called _forward_pre_hooks
    _forward_pre_hooks_with_kwargs _backward_hooks _backward_pre_hooks _state_dict_hooks _state_dict_pre_hooks
    _load_state_dict_pre_hooks _load_state_dict_post_hooks""".split()
)

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

    def __getattr__(self, name: str) -> Any:
        """PyTorch's hook registries (``_forward_hooks``, ...), made at their first reading (a
        module without hooks keeps none: nothing for a compiled step's guard to walk)."""
        if name in _HOOK_REGISTRIES:
            return _registry(self, name)
        if name == "_is_full_backward_hook":
            return None
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

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
            value = _registration_hooks(_GLOBAL_PARAMETER_REGISTRATION_HOOKS, self, name, value)
            target = params
        elif isinstance(value, Module):
            value = _registration_hooks(_GLOBAL_MODULE_REGISTRATION_HOOKS, self, name, value)
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
        tensor = _registration_hooks(_GLOBAL_BUFFER_REGISTRATION_HOOKS, self, name, tensor)
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
        _check_module_name(self, name, module)
        setattr(self, name, module)

    # -- calling ------------------------------------------------------------------
    def forward(self, *input: Any) -> Any:
        raise NotImplementedError(f"{type(self).__name__} has no forward()")

    def __call__(self, *args: Any, **kw: Any) -> Any:
        compiled = self.__dict__.get("_compiled_call_impl")  # (set by Module.compile)
        if compiled is not None:
            return compiled(*args, **kw)
        return self._call_impl(*args, **kw)

    def _call_impl(self, *args: Any, **kw: Any) -> Any:
        d = self.__dict__
        pre, post = d.get("_forward_pre_hooks"), d.get("_forward_hooks")
        if pre:  # (PyTorch's registries: the hook by id, and the ids of those taking kwargs)
            pre = {i: (h, i in d.get("_forward_pre_hooks_with_kwargs", ())) for i, h in pre.items()}
        if post:
            kws, always = d.get("_forward_hooks_with_kwargs", ()), d.get("_forward_hooks_always_called", ())
            post = {i: (h, i in kws, i in always) for i, h in post.items()}
        if _GLOBAL_FORWARD_PRE_HOOKS or _GLOBAL_FORWARD_HOOKS:  # (every module's: registered in this module)
            pre = {**_GLOBAL_FORWARD_PRE_HOOKS, **(pre or {})}
            post = {**_GLOBAL_FORWARD_HOOKS, **(post or {})}
        if pre:
            args, kw = _run_pre_hooks(self, pre, args, kw)
        bw = _backward_hook_call(self, d)
        if bw is not None:
            args = bw.setup_inputs(args)
        prev = _State.scope
        _State.scope = Scope(self._scope_name, "module", prev, self)
        try:
            out = self.forward(*args, **kw)
        except BaseException:
            if post:  # (PyTorch's always_call hooks run on an error too, their errors dropped)
                for hook, with_kwargs, always in list(post.values()):
                    if always:
                        with contextlib.suppress(Exception):
                            hook(self, args, kw, None) if with_kwargs else hook(self, args, None)
            raise
        finally:
            _State.scope = prev
        if post:
            for hook, with_kwargs, _ in list(post.values()):
                got = hook(self, args, kw, out) if with_kwargs else hook(self, args, out)
                if got is not None:
                    out = got
        if bw is not None:
            bw.check_inputs_unchanged()
            out = bw.setup_outputs(out)
        return out

    def register_forward_pre_hook(self, hook: Callable[..., Any], *, prepend: bool = False,
                                  with_kwargs: bool = False) -> RemovableHandle:  # fmt: skip
        """PyTorch's: ``hook(module, args)`` (``with_kwargs``: ``hook(module, args, kwargs)``)
        runs before each ``forward``; what it returns (not None) replaces the arguments (a
        single value becomes a one-tuple; ``with_kwargs``: an ``(args, kwargs)`` pair)."""
        return _add_hook(self, "_forward_pre_hooks", hook, prepend, with_kwargs=with_kwargs)

    def register_forward_hook(self, hook: Callable[..., Any], *, prepend: bool = False,
                              with_kwargs: bool = False, always_call: bool = False) -> RemovableHandle:  # fmt: skip
        """PyTorch's: ``hook(module, args, output)`` (``with_kwargs``: ``hook(module, args,
        kwargs, output)``) runs after each ``forward``; what it returns (not None) replaces
        the output."""
        return _add_hook(self, "_forward_hooks", hook, prepend, with_kwargs=with_kwargs, always_called=always_call)

    # -- traversal ----------------------------------------------------------------
    def named_children(self) -> Iterator[tuple[str, Module]]:
        yield from self._modules.items()

    def children(self) -> Iterator[Module]:
        for _, m in self.named_children():
            yield m

    def named_modules(self, memo: set[Module] | None = None, prefix: str = "",
                      remove_duplicate: bool = True) -> Iterator[tuple[str, Module]]:  # fmt: skip
        """``(dotted name, module)`` for this module and every descendant, in pre-order: each once
        (``memo`` holds those already given), or with ``remove_duplicate=False`` at every path
        that reaches it, as PyTorch's."""
        if memo is None:
            memo = set()
        if self in memo:
            return
        if remove_duplicate:
            memo.add(self)
        yield prefix, self
        for name, child in self._modules.items():
            if child is not None:
                yield from child.named_modules(memo, f"{prefix}.{name}" if prefix else name, remove_duplicate)

    def modules(self, remove_duplicate: bool = True) -> Iterator[Module]:
        """This module and every descendant, as :meth:`named_modules` gives them."""
        for _, m in self.named_modules(remove_duplicate=remove_duplicate):
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
        mods = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) if recurse else [(prefix, self)]
        for mname, m in mods:
            for pname, p in getattr(m, registry).items():
                if p is None or (remove_duplicate and id(p) in seen):
                    continue
                seen.add(id(p))
                yield (f"{mname}.{pname}" if mname else pname), p

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

    def requires_grad_(self, requires_grad: bool = True) -> Module:
        """Freeze (``False``) or unfreeze every parameter."""
        for p in self.parameters():
            p.requires_grad_(requires_grad)
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
        kw.pop("memory_format", None)  # (the parameters keep their layouts)
        dev, dtype, _ = _to_args(args, kw, "Module.to")
        if dtype is not None and _dtypes.torch_dtype(dtype).kind not in "fc":
            raise TypeError(f"Module.to: only floating dtypes can be given to a module, got {np.dtype(dtype)}")
        if _overrides_apply(self):  # (PyTorch's `to` goes through `_apply`, which a class may extend)
            return self._apply(lambda t: t.to(dev, dtype if t.dtype.kind in "fc" else None))
        if dtype is not None:
            self.astype(dtype)
        if dev is not None:
            for t in self._tensors():
                _move(t, dev)
        return self

    def astype(self, dtype: Any) -> Module:
        """Cast every floating-point parameter and buffer to ``dtype``, in place; returns self."""
        if _overrides_apply(self):
            return self._apply(lambda t: t.astype(dtype) if t.dtype.kind == "f" else t)
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
        self, *args: Any, destination: dict | None = None, prefix: str = "", keep_vars: bool = False
    ) -> dict[str, Tensor]:
        """Every parameter and persistent buffer, by dotted name, as in PyTorch: a tensor
        without history sharing the module's memory (``keep_vars``: the parameters
        themselves). ``np.asarray(v)`` reads one as a NumPy array; ``v.clone()`` copies.

        As PyTorch's, each module adds its own entries through ``_save_to_state_dict`` (with
        ``_extra_state`` where the class defines ``get_extra_state``), its children follow, and
        its state-dict hooks run before and after; the dict's ``_metadata`` holds each module's
        ``_version``, which ``_load_from_state_dict`` receives back."""
        if args:  # (PyTorch's old positional order, which it still takes, with a warning)
            _user_warn("Positional args are being deprecated, use kwargs instead: state_dict(destination=..., "
                          "prefix=..., keep_vars=...)", FutureWarning)  # fmt: skip
            given = dict(zip(("destination", "prefix", "keep_vars"), args))
            destination = given.get("destination", destination)
            prefix, keep_vars = given.get("prefix", prefix), given.get("keep_vars", keep_vars)
        if destination is None:
            destination = OrderedDict()  # (PyTorch's type)
            destination._metadata = OrderedDict()  # type: ignore[attr-defined]
        local_metadata = {"version": self._version}
        if hasattr(destination, "_metadata"):
            destination._metadata[prefix[:-1]] = local_metadata
        for hook in list(self.__dict__.get("_state_dict_pre_hooks", {}).values()):
            hook(self, prefix, keep_vars)
        self._save_to_state_dict(destination, prefix, keep_vars)
        for name, m in self._modules.items():
            if m is not None:
                m.state_dict(destination=destination, prefix=f"{prefix}{name}.", keep_vars=keep_vars)
        for hook, public in list(self.__dict__.get("_state_dict_hooks", {}).values()):
            got = hook(self, destination, prefix, local_metadata)
            if public and got is not None:
                raise RuntimeError("state_dict post-hook must return None")
            if got is not None:
                destination = got
        return destination

    def load_state_dict(self, state_dict: Mapping[str, Any], strict: bool = True,
                        assign: bool = False) -> _IncompatibleKeys:  # fmt: skip
        """Copy arrays into this module's parameters and buffers, in place (as PyTorch's: their
        views, ``detach()`` and earlier ``state_dict()`` entries see the new values, and each
        version counts the copy); returns PyTorch's named tuple ``(missing_keys, unexpected_keys)``.

        As PyTorch's, each module reads its own entries in ``_load_from_state_dict`` (which a
        subclass may override, to rename old keys for instance) after its load pre-hooks, its
        children follow, then its load post-hooks run. Every entry is checked before any is
        copied, so a state dict that does not fit leaves the module as it was. A missing or
        unexpected key (with ``strict``) or a wrong shape (always) raises :class:`StateDictError`
        naming the key and shapes. ``assign=True``: a Tensor entry already of the parameter's
        device and dtype is taken as it is (its memory shared, as PyTorch assigns it) instead of
        copied.
        """
        if not isinstance(state_dict, Mapping):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        missing: list[str] = []
        unexpected: list[str] = []
        errors: list[str] = []
        metadata = getattr(state_dict, "_metadata", None)
        state = OrderedDict(state_dict)
        if metadata is not None:
            state._metadata = metadata  # type: ignore[attr-defined]
        journal = _LoadJournal()
        visited: list[Module] = []

        def load(module: Module, local: Mapping[str, Any], prefix: str) -> None:
            local_metadata = {} if metadata is None else dict(metadata.get(prefix[:-1], {}))
            if assign:
                local_metadata["assign_to_params_buffers"] = assign
            module._load_from_state_dict(local, prefix, local_metadata, True, missing, unexpected, errors)
            for name, child in module._modules.items():
                if child is not None:
                    cp = f"{prefix}{name}."
                    load(child, {k: v for k, v in local.items() if k.startswith(cp)}, cp)
            visited.append(module)

        _LOADING.append(journal)
        try:
            load(self, state, "")
        finally:
            _LOADING.pop()
        who = f"load_state_dict({type(self).__name__})"
        if errors:
            raise StateDictError(_load_errors(self, errors, strict, missing, unexpected, journal, who))
        post = [(m, h) for m in visited for h in list(m.__dict__.get("_load_state_dict_post_hooks", {}).values())]
        if not post and strict and (missing or unexpected):  # (nothing written: the module stays as it was)
            raise StateDictError(_load_errors(self, errors, strict, missing, unexpected, journal, who))
        journal.commit()
        keys = _IncompatibleKeys(missing, unexpected)
        for m, hook in post:
            if hook(m, keys) is not None:
                raise _HookResultError("Hooks registered with ``register_load_state_dict_post_hook`` are not "
                                       "expected to return new values, if incompatible_keys need to be modified, it "
                                       "should be done inplace.")  # fmt: skip
        if strict and (missing or unexpected):
            raise StateDictError(_load_errors(self, errors, strict, missing, unexpected, journal, who))
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

    # -- the rest of PyTorch's Module API -------------------------------------------------
    #: PyTorch's: the version of a class's state-dict layout, saved in ``state_dict()._metadata``
    #: and handed back to ``_load_from_state_dict`` (a subclass raises it when its keys change).
    _version: int = 1
    #: PyTorch's flags of the class: no old-pickle patches, and ``__init__`` does not call super's.
    dump_patches: bool = False
    call_super_init: bool = False
    T_destination = TypeVar("T_destination", bound=Mapping[str, Any])

    @property
    def _non_persistent_buffers_set(self) -> set[str]:
        """PyTorch's name of the set of buffers that ``state_dict`` leaves out."""
        return self._non_persistent

    def _get_name(self) -> str:
        return type(self).__name__

    #: The compiled call that :meth:`compile` puts on an instance (None: the module runs eagerly).
    _compiled_call_impl: Any = None

    def _wrapped_call_impl(self, *args: Any, **kw: Any) -> Any:
        """PyTorch's name of what ``module(...)`` runs: the compiled call, else ``_call_impl``."""
        return Module.__call__(self, *args, **kw)

    def register_module(self, name: str, module: Module | None) -> None:
        """PyTorch's alias of :meth:`add_module`."""
        self.add_module(name, module)  # type: ignore[arg-type]

    def set_submodule(self, target: str, module: Module, strict: bool = False) -> None:
        """Put ``module`` at the dotted path ``target``, as PyTorch's: its parent must exist;
        ``strict=True``: so must the child it replaces."""
        if target == "":
            raise ValueError("Cannot set the submodule without a target name!")
        if not isinstance(module, Module):
            raise ValueError(f"`module` is not an nn.Module, found {type(module)}")
        path, _, name = target.rpartition(".")
        parent = self.get_submodule(path)
        if strict and not hasattr(parent, name):
            raise AttributeError(f"{parent._get_name()} has no attribute `{name}`")
        if hasattr(parent, name) and not isinstance(getattr(parent, name), Module):
            raise AttributeError(f"`{name}` is not an nn.Module")
        setattr(parent, name, module)

    def _apply(self, fn: Callable[[Tensor], Tensor], recurse: bool = True) -> Module:
        """PyTorch's one path of ``cpu``, ``cuda``, ``type``, ``to_empty``, ...: ``fn`` of every
        parameter (which keeps its object: optimizers holding it follow) and of its gradient,
        and of every buffer (replaced by what ``fn`` returns); children first. Returns self."""
        from ..engine.switches import no_grad  # noqa: PLC0415

        if recurse:
            for m in self.children():
                m._apply(fn)
        with no_grad():
            for p in self._parameters.values():
                if p is None:
                    continue
                new = fn(p)
                if p.requires_grad and new.dtype.kind not in "fc":  # (PyTorch's check of `param.data = new`)
                    raise RuntimeError(f"data set to a tensor that requires gradients must be floating point or "
                                       f"complex dtype ({self._get_name()}: a parameter would become {new.dtype})")  # fmt: skip
                p._data, p._dev = new._data, new._dev
                if p.grad is not None:
                    g = fn(p.grad)
                    p.grad._data, p.grad._dev = g._data, g._dev
            for name, b in list(self._buffers.items()):
                if b is not None:
                    new = fn(b)
                    if new is not b:
                        self._buffers[name] = new
                        object.__setattr__(self, name, new)
        _CHANGES[0] += 1  # (attributes changed without __setattr__: tga.compile's guard re-reads the tree)
        return self

    def cpu(self) -> Module:
        """Every parameter and buffer moved to the CPU, in place; returns self."""
        return self._apply(lambda t: t.cpu())

    def cuda(self, device: int | Any = None) -> Module:
        """Every parameter and buffer moved to a CUDA device (default the first), in place;
        without one, PyTorch's ``AssertionError``."""
        from ..runtime import cuda as _cuda  # noqa: PLC0415

        if not _cuda.is_available():
            raise _NoCudaError(f"Torch not compiled with CUDA enabled: {self._get_name()}.cuda() needs a CUDA "
                               "device (with CuPy), and none can be used here; keep the module on the CPU")  # fmt: skip
        return self._apply(lambda t: t.cuda(device))

    def type(self, dst_type: Any) -> Module:
        """Every parameter and buffer (integer ones too, as PyTorch's) cast to ``dst_type``."""
        return self._apply(lambda t: t.type(dst_type))

    def bfloat16(self) -> Module:
        """PyTorch's cast of the floating parameters and buffers to bfloat16, in place; returns self.
        NumPy's bfloat16 is the ``ml_dtypes`` package's (``pip install tinygrad_attn[bfloat16]``):
        without it a ``TypeError`` says so, unless there is nothing to cast."""
        if any(t.dtype.kind == "f" for t in [*self.parameters(), *self.buffers()]):
            return self.astype(_dtypes.bfloat16)
        return self

    def share_memory(self) -> Module:
        """PyTorch moves the tensors to shared memory for ``torch.multiprocessing``; the arrays
        here are process-local NumPy/CuPy memory that worker processes receive by pickling, so
        there is nothing to move. Returns self."""
        return self

    def to_empty(self, *, device: Any, recurse: bool = True) -> Module:
        """Every parameter and buffer replaced by uninitialised memory of its shape and dtype on
        ``device`` (PyTorch's way out of the meta device); returns self."""
        from ..tensors.factories.creation import empty_like  # noqa: PLC0415

        return self._apply(lambda t: empty_like(t, device=device), recurse=recurse)

    def compile(self, *args: Any, **kwargs: Any) -> None:
        """Compile this module's calls with :func:`tga.compile`, as PyTorch's wraps them in
        ``torch.compile``: ``module(x)`` then traces once and replays. PyTorch's tuning
        arguments (``fullgraph``, ``dynamic``, ``backend``, ``mode``, ``options``) have nothing to
        tune here and are accepted; ``disable=True`` leaves the module eager."""
        import importlib  # noqa: PLC0415

        # The compiler sits above nn (its guard reads module trees): found at call time by name, as
        # the package's own lazy subpackages are, so that nn imports nothing of it.
        _compile = importlib.import_module(f"{__package__.rpartition('.')[0]}.symbolic.compile").compile

        unknown = set(kwargs) - {"fullgraph", "dynamic", "backend", "mode", "options", "disable", "cache_limit"}
        if args or unknown:
            raise TypeError(f"{self._get_name()}.compile: unexpected arguments {args or ''}{sorted(unknown) or ''}")
        if kwargs.get("disable"):
            return
        limit = {"cache_limit": kwargs["cache_limit"]} if "cache_limit" in kwargs else {}
        object.__setattr__(self, "_compiled_call_impl", _compile(self._call_impl, **limit))
        _CHANGES[0] += 1

    # extra state: a subclass defines both, and its state dict carries ``_extra_state``
    def get_extra_state(self) -> Any:
        raise RuntimeError(
            "Reached a code path in Module.get_extra_state() that should never be called: a class that adds extra "
            "state to its state dict defines get_extra_state (and set_extra_state)."
        )

    def set_extra_state(self, state: Any) -> None:
        raise RuntimeError(
            "Reached a code path in Module.set_extra_state() that should never be called: a class that adds extra "
            "state to its state dict defines set_extra_state (and get_extra_state)."
        )

    def _save_to_state_dict(self, destination: dict, prefix: str, keep_vars: bool) -> None:
        """This module's own entries (not its children's) of ``state_dict``, as PyTorch's."""
        for name, p in self._parameters.items():
            if p is not None:
                destination[prefix + name] = p if keep_vars else p.detach()
        for name, b in self._buffers.items():
            if b is not None and name not in self._non_persistent:
                destination[prefix + name] = b if keep_vars else b.detach()
        if type(self).get_extra_state is not Module.get_extra_state:
            destination[prefix + _EXTRA_STATE] = self.get_extra_state()

    def _load_from_state_dict(self, state_dict: Mapping[str, Any], prefix: str, local_metadata: dict,
                              strict: bool, missing_keys: list[str], unexpected_keys: list[str],
                              error_msgs: list[str]) -> None:  # fmt: skip
        """This module's own entries of ``load_state_dict``, as PyTorch's: its load pre-hooks run,
        each parameter and persistent buffer under ``prefix`` is read (missing, unexpected and
        ill-fitting keys go to the lists), then the extra state. Inside ``load_state_dict`` the
        copies wait until every module has been checked; called alone, it copies at once."""
        for hook in list(self.__dict__.get("_load_state_dict_pre_hooks", {}).values()):
            hook(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs)
        local = {k: v for k, v in self._parameters.items() if v is not None}
        local.update((k, v) for k, v in self._buffers.items() if v is not None and k not in self._non_persistent)
        journal = _LOADING[-1] if _LOADING else _LoadJournal()
        assign = local_metadata.get("assign_to_params_buffers", False)
        for name, t in local.items():
            key = prefix + name
            if key not in state_dict:
                if strict:
                    missing_keys.append(key)
                    journal.shapes[key] = t._data.shape
                continue
            journal.stage(key, t, state_dict[key], assign, error_msgs)
        extra = prefix + _EXTRA_STATE
        if type(self).set_extra_state is not Module.set_extra_state:
            if extra in state_dict:
                journal.later.append(lambda v=state_dict[extra]: self.set_extra_state(v))
            elif strict:
                missing_keys.append(extra)
        elif strict and extra in state_dict:
            unexpected_keys.append(extra)
        if strict:
            for key in state_dict:
                if key.startswith(prefix) and key != extra:
                    head, dot, _ = key[len(prefix) :].partition(".")
                    if (head not in self._modules) if dot else (head not in local):
                        unexpected_keys.append(key)
                        journal.unexpected_shapes[key] = tuple(getattr(state_dict[key], "shape", ()))
        if not _LOADING:
            journal.commit()

    # state-dict hooks, with PyTorch's signatures and order
    def register_state_dict_pre_hook(self, hook: Callable[[Module, str, bool], None]) -> RemovableHandle:
        """``hook(module, prefix, keep_vars)`` runs before ``state_dict`` reads this module."""
        return _add_hook(self, "_state_dict_pre_hooks", hook, False)

    def register_state_dict_post_hook(self, hook: Callable[..., None]) -> RemovableHandle:
        """``hook(module, state_dict, prefix, local_metadata)`` runs after ``state_dict`` has read
        this module and its children; it may change the dict in place and returns None."""
        return _add_hook(self, "_state_dict_hooks", (hook, True), False)

    def _register_state_dict_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """PyTorch's older post-hook: what it returns (not None) replaces the state dict."""
        return _add_hook(self, "_state_dict_hooks", (hook, False), False)

    def register_load_state_dict_pre_hook(self, hook: Callable[..., None]) -> RemovableHandle:
        """``hook(module, state_dict, prefix, local_metadata, strict, missing_keys,
        unexpected_keys, error_msgs)`` runs before this module reads its entries (it may rename
        keys of ``state_dict`` in place)."""
        return self._register_load_state_dict_pre_hook(hook, with_module=True)

    def _register_load_state_dict_pre_hook(self, hook: Callable[..., None], with_module: bool = False) -> Any:
        """PyTorch's older form: ``with_module=False`` calls ``hook`` without the module."""
        return _add_hook(self, "_load_state_dict_pre_hooks", functools.partial(hook, self) if with_module else hook,
                         False)  # fmt: skip

    def register_load_state_dict_post_hook(self, hook: Callable[[Module, Any], None]) -> RemovableHandle:
        """``hook(module, incompatible_keys)`` runs after ``load_state_dict`` has read this module
        and its children; clearing ``incompatible_keys.missing_keys`` (in place) avoids the
        strict error, as in PyTorch."""
        return _add_hook(self, "_load_state_dict_post_hooks", hook, False)

    # backward hooks, run by nn.backward_hooks
    def register_full_backward_hook(self, hook: Callable[..., Any], prepend: bool = False) -> RemovableHandle:
        """PyTorch's: ``hook(module, grad_input, grad_output)`` runs once per backward pass
        through a call, when the gradients of the call's inputs are known; what it returns (not
        None) replaces ``grad_input``. ``grad_input`` has an entry per positional argument (None
        for one that takes no gradient)."""
        _backward_hook_kind(self, True)
        return _add_hook(self, "_backward_hooks", hook, prepend)

    def register_full_backward_pre_hook(self, hook: Callable[..., Any], prepend: bool = False) -> RemovableHandle:
        """PyTorch's: ``hook(module, grad_output)`` runs when the gradients of a call's outputs
        are known, before the module's own backward; what it returns (not None) replaces them."""
        return _add_hook(self, "_backward_pre_hooks", hook, prepend)

    def register_backward_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """PyTorch's deprecated backward hook. PyTorch hands it the gradients of the inputs of
        the module's last operation; here it receives the module's own ``grad_input``, as
        :meth:`register_full_backward_hook` (the hook PyTorch recommends instead)."""
        _backward_hook_kind(self, False)
        return _add_hook(self, "_backward_hooks", hook, False)

    def _get_backward_hooks(self) -> tuple[list, list]:
        """PyTorch's: the full backward hooks and the deprecated ones."""
        hooks = list(self.__dict__.get("_backward_hooks", {}).values())
        full = self.__dict__.get("_is_full_backward_hook")
        return (hooks, []) if full is not False else ([], hooks)

    def _get_backward_pre_hooks(self) -> list:
        return list(self.__dict__.get("_backward_pre_hooks", {}).values())


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


_EXTRA_STATE = "_extra_state"


class _NoCudaError(AssertionError, RuntimeError):
    """``Module.cuda()`` where no CUDA device can be used: PyTorch's ``AssertionError`` (and the
    ``RuntimeError`` a tensor's ``.cuda()`` raises here)."""


class _HookResultError(AssertionError, RuntimeError):
    """A load-state-dict post-hook returned a value: PyTorch's ``AssertionError``."""


class _LoadJournal:
    """What one ``load_state_dict`` will write, held until every module has been checked, so that
    a state dict that does not fit leaves the module whole; and the shapes its errors name."""

    def __init__(self) -> None:
        self.writes: list[tuple[Tensor, Any, Any]] = []  # (tensor, new array, its device if taken as it is)
        self.later: list[Callable[[], Any]] = []  # set_extra_state calls
        self.shapes: dict[str, tuple] = {}  # missing key -> the module's shape
        self.unexpected_shapes: dict[str, tuple] = {}
        self.committed = False

    def stage(self, key: str, t: Tensor, v: Any, assign: bool, errors: list[str]) -> None:
        """Check entry ``key`` of the state dict against ``t`` and convert it, or say why not."""
        try:
            a = _host_array(v)
        except Exception:  # noqa: BLE001 - anything that is no array is the same mistake
            errors.append(f'While copying the parameter named "{key}", expected torch.Tensor or Tensor-like object '
                          f"from checkpoint but received {type(v)}")  # fmt: skip
            return
        if getattr(t, "cls_to_become", None) is not None and hasattr(t, "materialize"):
            # (PyTorch materializes a lazy module's placeholder from the checkpoint; here its first forward does)
            errors.append(f"'{key}' is an uninitialized parameter or buffer of a lazy module: run one forward "
                          f"before loading (the state dict has shape {tuple(a.shape)})")  # fmt: skip
            return
        if tuple(a.shape) != tuple(t._data.shape):
            theirs, ours = tuple(a.shape), tuple(t._data.shape)
            errors.append(f"size mismatch for {key}: copying a param with shape {theirs} from checkpoint, the shape "
                          f"in current model is {ours}. ('{key}' has shape {theirs} in the state dict but {ours} in "
                          "the module)")  # fmt: skip
            return
        if assign and isinstance(v, Tensor) and (v._dev is t._dev or t._dev.meta) and v.dtype == t.dtype:
            self.writes.append((t, v._data, v._dev))  # (a meta parameter takes the entry's memory and device)
            return
        if a.dtype.kind not in "biuf":  # strings, objects, complex: no meaningful cast to a weight
            errors.append(f"'{key}' is {a.dtype} in the state dict but {t.dtype} in the module, and cannot be cast; "
                          "nothing was loaded")  # fmt: skip
            return
        try:
            # np.array, not np.ascontiguousarray: that one turns a 0-d array into 1-d.
            self.writes.append((t, t._dev.asarray(np.array(a, order="C"), dtype=t.dtype), None))
        except (TypeError, ValueError) as e:
            errors.append(f"'{key}' ({a.dtype}) cannot be cast to {t.dtype} ({e}); nothing was loaded")

    def commit(self) -> None:
        for t, arr, taken in self.writes:  # (taken: the device of an entry assigned as it is)
            if taken is not None:
                t._data, t._dev = arr, taken
            else:
                store_array(t, arr)
        for call in self.later:
            call()
        self.writes, self.later = [], []
        self.committed = True


#: The journals of the ``load_state_dict`` calls under way (innermost last).
_LOADING: list[_LoadJournal] = []


def _load_errors(module: Module, errors: list[str], strict: bool, missing: list[str], unexpected: list[str],
                 journal: _LoadJournal, who: str) -> str:  # fmt: skip
    """PyTorch's message of a failed ``load_state_dict``, with each key's shape, and a last word
    on what was loaded."""
    lines = list(errors)
    if strict and unexpected:
        lines.insert(0, "Unexpected key(s) in state_dict: " + ", ".join(f'"{k}"' for k in unexpected) + ". ("
                     + "; ".join(f"unexpected key '{k}' (shape {journal.unexpected_shapes.get(k, '?')} in the state "
                                 "dict)" for k in unexpected) + ")")  # fmt: skip
    if strict and missing:
        lines.insert(0, "Missing key(s) in state_dict: " + ", ".join(f'"{k}"' for k in missing) + ". ("
                     + "; ".join(f"missing key '{k}' (the module's shape {journal.shapes.get(k, '?')})"
                                 for k in missing) + ")")  # fmt: skip
    done = "the rest was loaded" if journal.committed else "nothing was loaded"
    return f"Error(s) in loading state_dict for {module._get_name()} ({who}; {done}):\n\t" + "\n\t".join(lines)


def _backward_hook_kind(module: Module, full: bool) -> None:
    """PyTorch's rule: one module has full backward hooks or deprecated ones, never both."""
    now = module.__dict__.get("_is_full_backward_hook")
    if now is not None and now is not full and module.__dict__.get("_backward_hooks"):
        raise RuntimeError("Cannot use both regular backward hooks and full backward hooks on a single Module. "
                           "Please use only one of them.")  # fmt: skip
    object.__setattr__(module, "_is_full_backward_hook", full)
    _CHANGES[0] += 1


def _backward_hook_call(module: Module, d: dict) -> Any:
    """The backward hooks of one call of ``module`` (None without any, the common case)."""
    hooks, pre = d.get("_backward_hooks"), d.get("_backward_pre_hooks")
    if _GLOBAL_BACKWARD_HOOKS or _GLOBAL_BACKWARD_PRE_HOOKS:
        hooks = {**_GLOBAL_BACKWARD_HOOKS, **(hooks or {})}
        pre = {**_GLOBAL_BACKWARD_PRE_HOOKS, **(pre or {})}
    if not hooks and not pre:
        return None
    from .backward_hooks import BackwardHookCall  # noqa: PLC0415

    return BackwardHookCall(module, list(hooks.values()) if hooks else [], list(pre.values()) if pre else [])


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


# -- hooks of every module (torch.nn.modules.module.register_module_*_hook) ---------------------
_GLOBAL_FORWARD_PRE_HOOKS: OrderedDict = OrderedDict()
_GLOBAL_FORWARD_HOOKS: OrderedDict = OrderedDict()
_GLOBAL_BACKWARD_HOOKS: OrderedDict = OrderedDict()
_GLOBAL_BACKWARD_PRE_HOOKS: OrderedDict = OrderedDict()
_GLOBAL_BUFFER_REGISTRATION_HOOKS: OrderedDict = OrderedDict()
_GLOBAL_MODULE_REGISTRATION_HOOKS: OrderedDict = OrderedDict()
_GLOBAL_PARAMETER_REGISTRATION_HOOKS: OrderedDict = OrderedDict()
#: every registry above: a compiled step's guard reads their keys (a hook added or removed traces again)
GLOBAL_HOOKS = (_GLOBAL_FORWARD_PRE_HOOKS, _GLOBAL_FORWARD_HOOKS, _GLOBAL_BACKWARD_HOOKS, _GLOBAL_BACKWARD_PRE_HOOKS)


def _global_hook(registry: OrderedDict, entry: Any) -> RemovableHandle:
    handle = RemovableHandle(registry)
    registry[handle.id] = entry
    return handle


def register_module_forward_pre_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """PyTorch's: ``hook(module, args)`` before the ``forward`` of every module, before its own
    pre-hooks; what it returns (not None) replaces the arguments."""
    return _global_hook(_GLOBAL_FORWARD_PRE_HOOKS, (hook, False))


def register_module_forward_hook(hook: Callable[..., Any], *, with_kwargs: bool = False,
                                 always_call: bool = False) -> RemovableHandle:  # fmt: skip
    """PyTorch's: ``hook(module, args, output)`` (``with_kwargs``: ``hook(module, args, kwargs,
    output)``) after the ``forward`` of every module, before its own hooks; what it returns (not
    None) replaces the output."""
    return _global_hook(_GLOBAL_FORWARD_HOOKS, (hook, with_kwargs, always_call))


def register_module_full_backward_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """PyTorch's: :meth:`Module.register_full_backward_hook` for every module."""
    return _global_hook(_GLOBAL_BACKWARD_HOOKS, hook)


def register_module_full_backward_pre_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """PyTorch's: :meth:`Module.register_full_backward_pre_hook` for every module."""
    return _global_hook(_GLOBAL_BACKWARD_PRE_HOOKS, hook)


def register_module_backward_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """PyTorch's deprecated global backward hook: here the full one (see
    :meth:`Module.register_backward_hook`)."""
    return _global_hook(_GLOBAL_BACKWARD_HOOKS, hook)


def register_module_buffer_registration_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """PyTorch's: ``hook(module, name, buffer)`` at each ``register_buffer``; what it returns (not
    None) is registered instead."""
    return _global_hook(_GLOBAL_BUFFER_REGISTRATION_HOOKS, hook)


def register_module_module_registration_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """PyTorch's: ``hook(module, name, submodule)`` at each submodule assigned or added."""
    return _global_hook(_GLOBAL_MODULE_REGISTRATION_HOOKS, hook)


def register_module_parameter_registration_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """PyTorch's: ``hook(module, name, param)`` at each parameter assigned or registered."""
    return _global_hook(_GLOBAL_PARAMETER_REGISTRATION_HOOKS, hook)


def _registration_hooks(registry: OrderedDict, module: Module, name: str, value: Any) -> Any:
    for hook in list(registry.values()):
        got = hook(module, name, value)
        if got is not None:
            value = got
    return value


class RemovableHandle:
    """What a ``register_*_hook`` returns, as PyTorch's: ``remove()`` takes the hook away (a
    ``with`` block removes it at its end)."""

    _next_id = [0]

    def __init__(self, hooks_dict: dict, *, extra_dict: dict | Sequence[dict] | None = None) -> None:
        hooks = hooks_dict
        self._hooks_ref = weakref.ref(hooks) if hasattr(hooks, "__weakref__") else (lambda: hooks)
        extra = [] if extra_dict is None else [extra_dict] if isinstance(extra_dict, dict) else list(extra_dict)
        self._extra = [weakref.ref(d) for d in extra]  # (the registries marking the hook: with_kwargs, ...)
        self.id = RemovableHandle._next_id[0]
        RemovableHandle._next_id[0] += 1

    def remove(self) -> None:
        for ref in (self._hooks_ref, *self._extra):
            hooks = ref()
            if hooks is not None:
                hooks.pop(self.id, None)

    def __enter__(self) -> RemovableHandle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.remove()


def _registry(module: Module, name: str) -> OrderedDict:
    hooks = module.__dict__.get(name)
    if hooks is None:
        hooks = OrderedDict()
        object.__setattr__(module, name, hooks)
        _CHANGES[0] += 1  # (a new attribute: what tga.compile's guard reads of a module tree)
    return hooks


def _add_hook(module: Module, registry: str, entry: Any, prepend: bool, **flags: bool) -> RemovableHandle:
    """``entry`` into ``module``'s ``registry`` under a new handle's id; each true flag adds the
    id to the registry ``<registry>_<flag>`` (PyTorch's ``_forward_hooks_with_kwargs``)."""
    hooks = _registry(module, registry)
    marks = [_registry(module, f"{registry}_{f}") for f, on in flags.items() if on]
    handle = RemovableHandle(hooks, extra_dict=marks)
    hooks[handle.id] = entry
    for m in marks:
        m[handle.id] = True
    if prepend:
        hooks.move_to_end(handle.id, last=False)
    return handle


def _run_pre_hooks(module: Module, hooks: dict, args: tuple, kw: dict) -> tuple[tuple, dict]:
    for hook, with_kwargs in list(hooks.values()):  # (id -> (hook, takes kwargs))
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


def _overrides_apply(module: Module) -> bool:
    """Whether a class of ``module``'s tree extends ``_apply`` (to move tensors it keeps outside
    its parameters and buffers, say): then ``to``, ``float``, ... go through it, as PyTorch's."""
    return any(type(m)._apply is not Module._apply for m in module.modules())


def _check_module_name(module: Module, name: Any, child: Any) -> None:
    """PyTorch's checks of ``add_module``/``register_module``."""
    if not isinstance(child, Module) and child is not None:
        raise TypeError(f"{type(child).__module__}.{type(child).__qualname__} is not a Module subclass")
    if not isinstance(name, str):
        raise TypeError(f"module name should be a string. Got {type(name).__name__}")
    if hasattr(module, name) and name not in module._modules:
        raise KeyError(f"attribute '{name}' already exists")
    if "." in name:
        raise KeyError(f'module name can\'t contain ".", got: {name}')
    if name == "":
        raise KeyError('module name can\'t be empty string ""')


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

    # (PyTorch's parameter names: ``module``, ``modules``; the list interface is _ListOf's)
    def append(self, module: Module) -> Any:
        """Add ``module`` at the end."""
        return super().append(module)

    def extend(self, modules: Iterable[Module]) -> Any:
        """Add each of ``modules`` at the end."""
        return super().extend(modules)

    def insert(self, index: int, module: Module) -> None:
        """Put ``module`` before position ``index``, as ``list.insert``."""
        super().insert(index, module)

    def pop(self, key: int | slice) -> Any:
        """Remove the module at ``key`` and return it."""
        return super().pop(key)

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
            return f"{type(self).__name__}()"
        lines = [(f"({a}): " if a == b else f"({a}-{b}): {b - a + 1} x ") + t.replace("\n", "\n  ") for a, b, t in runs]
        return f"{type(self).__name__}(\n  " + "\n  ".join(lines) + "\n)"  # (a subclass: its own name)


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

    def forward(self, input: Any) -> Any:
        for m in self:
            input = m(input)
        return input

    def extend(self, sequential: Iterable[Module]) -> Any:
        """Add each module of ``sequential`` at the end."""
        return super().extend(sequential)

    # the rest of PyTorch's Sequential: repetition
    def __mul__(self, other: int) -> Sequential:
        """The children ``other`` times over (the same modules, numbered on), as PyTorch's."""
        _check_repeat(self, other)
        return Sequential(*(list(self) * other))

    def __rmul__(self, other: int) -> Sequential:
        return self.__mul__(other)

    def __imul__(self, other: int) -> Sequential:
        _check_repeat(self, other)
        kids = list(self)
        for i, m in enumerate(kids * (other - 1)):
            self.add_module(str(len(kids) + i), m)
        return self


def _check_repeat(seq: Sequential, other: Any) -> None:
    if not isinstance(other, int) or isinstance(other, bool):
        raise TypeError(f"unsupported operand type(s) for *: {type(seq)} and {type(other)}")
    if other <= 0:
        raise ValueError(f"Non-positive multiplication factor {other} for {type(seq)}")


class Container(Module):
    """PyTorch's deprecated ``nn.Container(**modules)``: a :class:`Module` with the given
    children (it warns with a ``FutureWarning``, as PyTorch's; subclass :class:`Module` instead)."""

    def __init__(self, **kwargs: Module) -> None:
        _user_warn("`nn.Container` is deprecated. All of its functionality is now implemented in `nn.Module`. "
                      "Subclass that instead.", FutureWarning)  # fmt: skip
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

    def _update(self, values: Mapping[str, Any] | Iterable[tuple[str, Any]]) -> None:
        for k, v in values.items() if isinstance(values, (Mapping, _DictOf)) else values:
            self[k] = v


class ModuleDict(_DictOf):
    """A dict of modules, registered as children under their keys (insertion order kept)."""

    def __init__(self, modules: Mapping[str, Module] | Iterable[tuple[str, Module]] | None = None) -> None:
        super().__init__()
        if modules is not None:
            self.update(modules)

    def _entries(self) -> dict[str, Any]:
        return self._modules

    def update(self, modules: Mapping[str, Module] | Iterable[tuple[str, Module]]) -> None:
        """Add (or replace) the ``(key, module)`` pairs of a mapping or an iterable of pairs."""
        self._update(modules)


def _as_parameter(value: Any, where: str) -> Parameter:
    """A value for a parameter container: a Parameter as it is, a tensor made a Parameter over its
    memory (as PyTorch's containers do)."""
    if isinstance(value, Parameter):
        return value
    if isinstance(value, Tensor):
        return Parameter(value)
    raise TypeError(f"{where}: expected a Parameter or a Tensor, got {type(value).__name__}")


def _parameter_lines(entries: Iterable[tuple[str, Any]], kind: Callable[[Any], str]) -> str:
    """PyTorch's lines for a ParameterList or ParameterDict: ``(key): Parameter containing:
    [<kind> of size 2x3]``, the device where it is a GPU."""
    lines = []
    for k, p in entries:
        size = "x".join(str(n) for n in p.shape)
        where = f" ({p.device})" if p.device.type != "cpu" else ""
        what = "Parameter" if isinstance(p, Parameter) else "Tensor"
        lines.append(f"  ({k}): {what} containing: [{kind(p)} of size {size}{where}]")
    return "\n".join(lines)


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

    def extra_repr(self) -> str:
        return _parameter_lines(self._parameters.items(), lambda p: str(p.dtype))


class ParameterDict(_DictOf):
    """PyTorch's ``nn.ParameterDict``: parameters registered under their keys (a tensor given
    becomes a Parameter), insertion order kept, used as a dict."""

    def __init__(self, parameters: Mapping[str, Any] | Iterable[tuple[str, Any]] | None = None) -> None:
        super().__init__()
        if parameters is not None:
            self.update(parameters)

    def _entries(self) -> dict[str, Any]:
        return self._parameters

    def update(self, parameters: Mapping[str, Any] | Iterable[tuple[str, Any]]) -> None:
        """Add (or replace) the ``(key, parameter)`` pairs of a mapping or an iterable of pairs; a
        mapping other than an ``OrderedDict`` or a ParameterDict (a plain ``dict`` too) in the order
        of its sorted keys, as PyTorch's."""
        if isinstance(parameters, Mapping) and not isinstance(parameters, (OrderedDict, ParameterDict)):
            parameters = sorted(parameters.items())
        self._update(parameters)

    def _put(self, key: str, value: Any) -> None:
        setattr(self, key, _as_parameter(value, "ParameterDict"))

    def extra_repr(self) -> str:
        return _parameter_lines(self._parameters.items(), typename)

    # the rest of PyTorch's ParameterDict: dict methods and operators
    def copy(self) -> ParameterDict:
        """A new ParameterDict holding the same parameters, as PyTorch's."""
        return ParameterDict(list(self.items()))

    def fromkeys(self, keys: Iterable[str], default: Any = None) -> ParameterDict:
        """A new ParameterDict with ``default`` under each key (an instance method, as PyTorch's)."""
        return ParameterDict((k, default) for k in keys)

    def popitem(self) -> tuple[str, Any]:
        """The last inserted ``(key, parameter)``, removed."""
        if not self._parameters:
            raise KeyError("popitem(): ParameterDict is empty")
        key = next(reversed(self._parameters))
        return key, self.pop(key)

    def setdefault(self, key: str, default: Any = None) -> Any:
        if key not in self:
            self[key] = default
        return self[key]

    def __reversed__(self) -> Iterator[str]:
        return reversed(list(self._parameters))

    def __or__(self, other: ParameterDict) -> ParameterDict:
        out = self.copy()
        out.update(other)
        return out

    def __ror__(self, other: ParameterDict) -> ParameterDict:
        out = other.copy()
        out.update(self)
        return out

    def __ior__(self, other: ParameterDict) -> ParameterDict:
        self.update(other)
        return self
