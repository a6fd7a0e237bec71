"""PyTorch's ``__torch_function__`` protocol (``torch.overrides``; ``torch._C``'s switches).

A class with a ``__torch_function__(cls, func, types, args, kwargs)`` classmethod takes over a public
function called with one of its instances: ``tga.mean(ScalarTensor(5, 2))`` calls
``ScalarTensor.__torch_function__(tga.mean, (ScalarTensor,), (s,), {})``. So does a Tensor subclass that
overrides it (``super().__torch_function__(...)`` runs the op and gives the subclass back), and a
:class:`TorchFunctionMode` entered with ``with``, which sees every call.

Where it runs: :func:`dispatching` wraps every free function when the declarations are installed
(``engine.declare.install``, ``tga.nn.functional``'s namespace); its plain path is one class test per
argument (:data:`_PLAIN`, which learns the classes that never override). Tensor methods cost nothing
more: :func:`dispatch_methods` gives a class its methods behind the same check only where needed, a
Tensor subclass that defines ``__torch_function__`` (``Tensor.__init_subclass__``), and ``Tensor``
itself while a mode is entered. The order is PyTorch's: the innermost mode first, then the
arguments' classes, a subclass before its superclass, else left to right; ``NotImplemented`` passes
on, and when all pass, a TypeError.

Not dispatched: properties (``t.shape``), and the methods of a plain tensor given an overriding
object as another argument (``t.add(s)``) outside a mode.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from typing import Any

__all__ = [
    "TorchFunctionMode",
    "get_ignored_functions",
    "get_overridable_functions",
    "get_testing_overrides",
    "handle_torch_function",
    "has_torch_function",
    "has_torch_function_unary",
    "has_torch_function_variadic",
    "is_tensor_like",
    "is_tensor_method_or_property",
    "wrap_torch_function",
]

#: the modes entered, innermost last (one stack for the process)
_MODES: list[Any] = []
#: the classes whose instances never take a call over (a number, a plain tensor, a dtype, ...): the
#: plain path tests an argument's class against it; classes found plain are added
_PLAIN: set[type] = {int, float, bool, complex, str, type(None), slice, type(Ellipsis), bytes}
#: the counters of DisableTorchFunctionSubclass (subclasses off) and DisableTorchFunction (all off)
_OFF = [0, 0]
#: the public free functions, by id: name (filled as :func:`dispatching` wraps them)
_PUBLIC: dict[int, Any] = {}
_WRAPPERS: dict[str, Any] = {}  # (each method's one wrapper, shared by the classes that have it)
_OWNER: list[Any] = [
    None
]  # (the Tensor class, whose methods those are: registered by the package, see register_methods)
#: the names of the Tensor methods :func:`dispatch_methods` puts behind the check, and their own functions
_METHODS: dict[str, Any] = {}


def _disabled_torch_function_impl(func: Callable, types: Any, args: tuple = (), kwargs: dict | None = None) -> Any:
    """PyTorch's ``torch._C._disabled_torch_function_impl``: the ``__torch_function__`` of a class that
    takes part in no dispatch (``nn.Parameter``'s): calls ``func`` with dispatch of subclasses off."""
    with DisableTorchFunctionSubclass():
        return func(*args, **(kwargs or {}))


def _default() -> Any:
    Tensor = _OWNER[0]  # noqa: N806
    return None if Tensor is None else Tensor.__dict__["__torch_function__"].__func__


def _overrides(cls: type) -> bool:
    """Whether ``cls`` takes calls over: it defines a ``__torch_function__`` other than Tensor's default
    and the disabled one."""
    tf = getattr(cls, "__torch_function__", None)
    if tf is None:
        return False
    tf = getattr(tf, "__func__", tf)
    return tf is not _disabled_torch_function_impl and tf is not _default()


def _relevant(args: tuple, kwargs: dict) -> Iterable[Any]:
    """The arguments PyTorch's parser looks at: each one, and the items of a list or tuple argument."""
    for a in (*args, *kwargs.values()):
        if a.__class__ is list or a.__class__ is tuple:
            yield from a
        else:
            yield a


def _get_overloaded_args(relevant_args: Iterable[Any]) -> list[Any]:
    """PyTorch's order of the arguments whose classes take part: one argument per class, a subclass
    before its superclass, else left to right (a plain tensor and a Parameter take no part)."""
    Tensor = _OWNER[0]  # noqa: N806

    seen: set[type] = set()
    out: list[Any] = []
    for arg in relevant_args:
        t = arg.__class__
        if t in seen or t is Tensor or t in _PLAIN and not _overrides(t):
            continue
        tf = getattr(t, "__torch_function__", None)
        if tf is None or getattr(tf, "__func__", tf) is _disabled_torch_function_impl:
            continue
        seen.add(t)
        index = len(out)
        for i, old in enumerate(out):
            if issubclass(t, old.__class__):
                index = i
                break
        out.insert(index, arg)
    return out


def _name(func: Any) -> str:
    own = getattr(func, "__qualname__", getattr(func, "__name__", repr(func)))
    module = getattr(func, "__module__", "") or ""
    if "." in own and own.split(".")[0] == "Tensor":
        return f"torch.{own}"
    if module.endswith("functional"):
        return f"torch.nn.functional.{own}"
    return f"torch.{own}"


def _run(func: Any, fn: Callable, args: tuple, kwargs: dict) -> Any:
    """The call of ``func`` (the public object; ``fn`` what it runs) when an argument's class or a mode
    may take it over."""
    modes = _MODES if not _OFF[1] else ()
    overloaded = [] if _OFF[0] or _OFF[1] else _get_overloaded_args(_relevant(args, kwargs))
    if not modes and not any(_overrides(a.__class__) for a in overloaded):
        for a in _relevant(args, kwargs):  # (learnt: the classes of this call never take one over)
            t = a.__class__
            if t is not list and t is not tuple and not _overrides(t):
                _PLAIN.add(t)
        return fn(*args, **kwargs)
    return _handle(func, overloaded, args, kwargs)


def _handle(func: Any, overloaded: list[Any], args: tuple, kwargs: dict) -> Any:
    types = tuple(a.__class__ for a in overloaded)
    if _MODES and not _OFF[1]:
        mode = _MODES.pop()  # (out of the stack while it runs: its own calls reach the modes below it)
        try:
            result = mode.__torch_function__(func, types, args, kwargs)
        finally:
            _MODES.append(mode)
        if result is not NotImplemented:
            return result
    for arg in overloaded:
        result = arg.__class__.__torch_function__(func, types, args, kwargs)
        if result is not NotImplemented:
            return result
    listed = "".join(f"  - tensor subclass {t}\n" for t in types) or "  - mode object\n"
    raise TypeError(
        f"Multiple dispatch failed for '{_name(func)}'; all __torch_function__ handlers returned NotImplemented:\n\n"
        f"{listed}\nFor more information, try re-running with TORCH_LOGS=not_implemented"
    )


def dispatching(fn: Callable, public_name: str | None = None) -> Callable:
    """``fn`` behind the protocol's check: when an argument's class is not a plain one (:data:`_PLAIN`)
    or a mode is entered, the call may be taken over, and the override is given this wrapper as ``func``
    (``func is tga.add``)."""
    if getattr(fn, "torch_function_of", None) is not None:
        return fn
    modes, plain = _MODES, _PLAIN

    @functools.wraps(fn)
    def public(*args: Any, **kwargs: Any) -> Any:
        if modes:
            return _run(public, fn, args, kwargs)
        for a in args:
            if a.__class__ not in plain:
                return _run(public, fn, args, kwargs)
        if kwargs:
            for a in kwargs.values():
                if a.__class__ not in plain:
                    return _run(public, fn, args, kwargs)
        return fn(*args, **kwargs)

    public.torch_function_of = fn  # type: ignore[attr-defined]
    if public_name is not None:  # (named as it is public: a mode reads func.__name__)
        _PUBLIC[id(public)] = (public_name, public)
        public.__name__ = public.__qualname__ = public_name.rpartition(".")[2]
    return public


def _method(name: str, fn: Callable) -> Callable:
    """A Tensor method behind the check (see :func:`dispatch_methods`); ``func`` is Tensor's method."""
    if name in _WRAPPERS:
        return _WRAPPERS[name]

    @functools.wraps(fn)
    def method(*args: Any, **kwargs: Any) -> Any:
        if _MODES or not (_OFF[0] or _OFF[1]):
            # (func: what Tensor.<name> is now, the method itself while a mode is entered, which the mode's
            # own call passes to the modes below it)
            return _run(method if _MODES else fn, fn, args, kwargs)
        return fn(*args, **kwargs)

    method.torch_function_of = fn  # type: ignore[attr-defined]
    _WRAPPERS[name] = method
    return method


def register_methods(cls: type, names: Iterable[str]) -> None:
    """Called once the Tensor's methods are installed: the names of those PyTorch dispatches."""
    _OWNER[0] = cls
    for n in names:
        fn = cls.__dict__.get(n)
        if callable(fn) and not isinstance(fn, (staticmethod, classmethod, type)):
            _METHODS[n] = fn


def dispatch_methods(cls: type, on: bool = True) -> None:
    """Put ``cls``'s dispatched methods behind the protocol's check (``on``), or take them back: a Tensor
    subclass that defines ``__torch_function__`` gets them when made, ``Tensor`` while a mode is entered.
    A method the class defines itself is left as it is."""
    for n, fn in _METHODS.items():
        own = cls.__dict__.get(n)
        if on and (own is None or own is fn):
            setattr(cls, n, _method(n, fn))
        elif not on and getattr(own, "torch_function_of", None) is fn:
            setattr(cls, n, fn) if cls is _OWNER[0] else delattr(cls, n)


def subclass_made(cls: type) -> None:
    """``Tensor.__init_subclass__``: a subclass that overrides ``__torch_function__`` gets dispatched methods."""
    if "__torch_function__" in cls.__dict__ and _overrides(cls):
        dispatch_methods(cls)


# -- PyTorch's switches (``torch._C``) -----------------------------------------------------------
class DisableTorchFunctionSubclass:
    """``torch._C.DisableTorchFunctionSubclass``: within it, no argument's class takes a call over (modes still do)."""

    def __enter__(self) -> DisableTorchFunctionSubclass:
        _OFF[0] += 1
        return self

    def __exit__(self, *exc: object) -> None:
        _OFF[0] -= 1


class DisableTorchFunction:
    """``torch._C.DisableTorchFunction``: within it, neither an argument's class nor a mode takes a call over."""

    def __enter__(self) -> DisableTorchFunction:
        _OFF[1] += 1
        return self

    def __exit__(self, *exc: object) -> None:
        _OFF[1] -= 1


def _is_torch_function_mode_enabled() -> bool:
    return bool(_MODES) and not _OFF[1]


# -- torch.overrides -----------------------------------------------------------------------------
class TorchFunctionMode:
    """A mode: within ``with mode:`` its ``__torch_function__(func, types, args, kwargs)`` is called for every
    public function and Tensor method, the innermost mode first (while it runs, it is out of the stack)."""

    def __torch_function__(self, func: Callable, types: tuple, args: tuple = (), kwargs: dict | None = None) -> Any:
        raise NotImplementedError

    def __enter__(self) -> TorchFunctionMode:
        Tensor = _OWNER[0]  # noqa: N806

        if not _MODES:
            dispatch_methods(Tensor)
        _MODES.append(self)
        return self

    def __exit__(self, *exc: object) -> None:
        Tensor = _OWNER[0]  # noqa: N806

        if _MODES and _MODES[-1] is self:
            _MODES.pop()
        else:  # (left out of order)
            _MODES.remove(self)
        if not _MODES:
            dispatch_methods(Tensor, on=False)

    @classmethod
    def push(cls, *args: Any, **kwargs: Any) -> TorchFunctionMode:
        """``cls(*args, **kwargs)`` entered (PyTorch's deprecated spelling)."""
        mode = cls(*args, **kwargs)
        mode.__enter__()
        return mode


def has_torch_function(relevant_args: Iterable[Any]) -> bool:
    """Whether a call with ``relevant_args`` would be taken over: a mode is entered, or one of them is of a
    class that overrides ``__torch_function__``."""
    if _OFF[1]:
        return False
    return bool(_MODES) or (not _OFF[0] and any(_overrides(a.__class__) for a in relevant_args))


def has_torch_function_unary(arg: Any) -> bool:
    """:func:`has_torch_function` of one argument."""
    return has_torch_function((arg,))


def has_torch_function_variadic(*args: Any) -> bool:
    """:func:`has_torch_function` of the arguments."""
    return has_torch_function(args)


def handle_torch_function(public_api: Callable, relevant_args: Iterable[Any], *args: Any, **kwargs: Any) -> Any:
    """Call the overrides of ``public_api`` (a user's function that takes part, after
    :func:`has_torch_function` said so): the mode, then the classes of ``relevant_args`` in PyTorch's order."""
    overloaded = [] if _OFF[0] else _get_overloaded_args(relevant_args)
    return _handle(public_api, overloaded, args, kwargs)


def wrap_torch_function(dispatcher: Callable) -> Callable:
    """PyTorch's decorator: the function takes part in the protocol, ``dispatcher(*args, **kwargs)`` naming the
    arguments that may take a call over."""

    def inner(func: Callable) -> Callable:
        @functools.wraps(func)
        def wrapped(*args: Any, **kwargs: Any) -> Any:
            relevant = dispatcher(*args, **kwargs)
            if has_torch_function(relevant):
                return handle_torch_function(wrapped, relevant, *args, **kwargs)
            return func(*args, **kwargs)

        return wrapped

    return inner


def is_tensor_like(inp: Any) -> bool:
    """Whether ``inp`` is a tensor or of a class with a ``__torch_function__``."""
    Tensor = _OWNER[0]  # noqa: N806

    return type(inp) is Tensor or hasattr(inp, "__torch_function__")


def is_tensor_method_or_property(func: Callable) -> bool:
    """Whether ``func`` is one of Tensor's methods or properties (a free function is not)."""
    Tensor = _OWNER[0]  # noqa: N806

    name = getattr(func, "__name__", None)
    return name is not None and getattr(Tensor, name, None) is func or func in _METHODS.values()


def get_overridable_functions() -> dict[Any, list[Callable]]:
    """The functions a ``__torch_function__`` takes over, by namespace (the package, ``Tensor``,
    ``nn.functional``)."""
    import sys  # noqa: PLC0415

    Tensor = _OWNER[0]  # noqa: N806

    package = sys.modules[__name__.split(".")[0]]
    out: dict[Any, list[Callable]] = {package: [], Tensor: list(_METHODS.values())}
    functional = sys.modules.get(f"{package.__name__}.functional")
    if functional is not None:
        out[functional] = []
    for name, fn in _PUBLIC.values():
        ns = functional if name.startswith("nn.functional.") else package
        if ns is not None:
            out[ns].append(fn)
    return out


def get_ignored_functions() -> set[Callable]:
    """The public functions that take no part: none here (every free function is behind the check, the
    factories too, which PyTorch lists)."""
    return set()


def get_testing_overrides() -> dict[Callable, Callable]:
    """For every overridable function, a dummy of the same arguments returning -1, as PyTorch's."""
    out: dict[Callable, Callable] = {}
    for fns in get_overridable_functions().values():
        for fn in fns:
            out[fn] = lambda *args, **kwargs: -1
    return out
