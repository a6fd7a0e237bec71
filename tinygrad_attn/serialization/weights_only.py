"""Which globals a checkpoint's pickle may name: PyTorch's allow-list for ``weights_only=True``.

A pickle runs code only through the globals it names (a ``__reduce__`` of ``os.system``
is the global ``posix.system`` called with a string), and every global goes through the
unpickler's ``find_class``. :class:`WeightsUnpickler` answers it from an allow-list
(tensors and their storages, dtypes, devices, ``OrderedDict``, ``Counter``, ``set``,
``complex``, ``bytearray``) plus what the user allowed with :func:`add_safe_globals` or
:func:`safe_globals`, and refuses anything else with PyTorch's kind of message, before
the global is imported. :class:`FullUnpickler` (``weights_only=False``) imports what the
file names, as ``pickle`` does: only for files from a trusted source.

>>> with safe_globals([MyConfig]):  # doctest: +SKIP
...     ckpt = tga.load("run.pt")
"""

from __future__ import annotations

import _compat_pickle
import codecs
import contextlib
import importlib
import pickle
import pickletools
from collections import Counter, OrderedDict
from collections.abc import Callable, Iterable, Iterator
from typing import Any, BinaryIO

from . import torch_archive

_BASE: dict[str, Any] = {
    "collections.OrderedDict": OrderedDict,
    "collections.Counter": Counter,
    "builtins.set": set,
    "builtins.complex": complex,
    "builtins.bytearray": bytearray,
    "_codecs.encode": codecs.encode,  # how protocol 2 writes bytes
}
_user: dict[str, Any] = {}  # "module.qualname" -> the object, from add_safe_globals

# Modules whose globals run commands, open files or import code: named as blocked in the refusal.
_BLOCKED = {"os", "posix", "nt", "subprocess", "sys", "builtins", "shutil", "socket", "importlib", "runpy", "pickle",
            "io", "codecs", "ctypes", "pty", "commands", "webbrowser", "marshal", "types", "functools", "operator"}  # fmt: skip


def _python3_name(module: str, name: str) -> tuple[str, str]:
    """Protocol 2 writes Python 2's names of builtins (``__builtin__.set``), as pickle's own
    ``find_class`` reads them back."""
    if (module, name) in _compat_pickle.NAME_MAPPING:
        return _compat_pickle.NAME_MAPPING[(module, name)]
    return _compat_pickle.IMPORT_MAPPING.get(module, module), name


def _name_of(obj: Any) -> str:
    return f"{obj.__module__}.{obj.__qualname__}"


def add_safe_globals(safe_globals: Iterable[Any]) -> None:
    """Allow these classes and functions in files loaded with ``weights_only=True`` (as
    ``torch.serialization.add_safe_globals``). An entry is an object, found under its
    ``module.qualname``, or a pair ``(object, "module.name")`` for one stored under another name."""
    for g in safe_globals:
        if isinstance(g, tuple):
            if len(g) != 2 or not isinstance(g[1], str):
                raise TypeError(f"add_safe_globals: a pair must be (object, 'module.name'), got {g!r}")
            _user[g[1]] = g[0]
        else:
            try:
                _user[_name_of(g)] = g
            except AttributeError:
                raise TypeError(
                    f"add_safe_globals: {g!r} has no __module__/__qualname__; pass (object, 'module.name')"
                ) from None


def get_safe_globals() -> list[Any]:
    """What :func:`add_safe_globals` allowed (pairs for objects allowed under another name)."""
    return [v if _safe_name(v) == k else (v, k) for k, v in _user.items()]


def _safe_name(v: Any) -> str | None:
    try:
        return _name_of(v)
    except AttributeError:
        return None


def clear_safe_globals() -> None:
    """Forget everything :func:`add_safe_globals` allowed."""
    _user.clear()


@contextlib.contextmanager
def safe_globals(safe_globals: Iterable[Any]) -> Iterator[None]:
    """Allow these globals inside the ``with`` block only (as ``torch.serialization.safe_globals``)."""
    before = dict(_user)
    add_safe_globals(safe_globals)
    try:
        yield
    finally:
        _user.clear()
        _user.update(before)


def allowed_globals() -> dict[str, Any]:
    """Every global a ``weights_only=True`` load accepts, by ``module.name``."""
    return {**_BASE, **torch_archive.TORCH_GLOBALS, **torch_archive.lazy_globals(), **_user}


_TRUST_HINT = (
    "Re-running `tga.load` with `weights_only=False` will likely succeed, but it can result in arbitrary code "
    "execution. Do it only if you got the file from a trusted source."
)


class WeightsUnpickler(pickle.Unpickler):
    """Unpickles only the allowed globals; the file's other globals are never imported."""

    def __init__(self, file: BinaryIO, persistent_load: Callable[[Any], Any], source: str = "the file",
                 **kw: Any) -> None:  # fmt: skip
        super().__init__(file, **kw)
        self._load_storage, self._source, self._allowed = persistent_load, source, allowed_globals()

    def persistent_load(self, pid: Any) -> Any:
        return self._load_storage(pid)

    def find_class(self, module: str, name: str) -> Any:
        module, name = _python3_name(module, name)
        full = f"{module}.{name}"
        if full in self._allowed:
            return self._allowed[full]
        top = module.split(".")[0]
        if top in _BLOCKED:
            why = f"Trying to load unsupported GLOBAL {full} whose module {module} is blocked."
        else:
            why = (
                f"Unsupported global: GLOBAL {full} was not an allowed global by default. Please use "
                f"`tga.serialization.add_safe_globals([{full}])` or the `tga.serialization.safe_globals([{full}])` "
                "context manager to allowlist this global if you trust this class/function."
            )
        raise pickle.UnpicklingError(f"Weights only load failed for {self._source}. {_TRUST_HINT}\n\n{why}")


class FullUnpickler(pickle.Unpickler):
    """``weights_only=False``: any global, imported. PyTorch's own names map to this package's
    (a tensor's rebuild, dtypes, ``torch.nn.Linear`` -> ``tinygrad_attn.nn.Linear`` where the
    path exists here)."""

    def __init__(self, file: BinaryIO, persistent_load: Callable[[Any], Any], source: str = "the file",
                 **kw: Any) -> None:  # fmt: skip
        super().__init__(file, **kw)
        self._load_storage, self._source = persistent_load, source
        self._known = {**_BASE, **torch_archive.TORCH_GLOBALS, **torch_archive.lazy_globals()}

    def persistent_load(self, pid: Any) -> Any:
        return self._load_storage(pid)

    def find_class(self, module: str, name: str) -> Any:
        full = ".".join(_python3_name(module, name))
        if full in self._known:
            return self._known[full]
        if module == "torch" or module.startswith("torch."):
            try:
                ours = getattr(importlib.import_module("tinygrad_attn" + module[len("torch") :]), name)
            except (ImportError, AttributeError, NotImplementedError):
                ours = None
            if ours is not None and not (isinstance(ours, type) and issubclass(ours, _module_class())):
                return ours
            # A PyTorch class pickled whole (a module keeps its parameters in PyTorch's own
            # attributes): never imported from PyTorch to hold this package's tensors.
            raise pickle.UnpicklingError(
                f"load: {self._source} holds a pickled {full}, a PyTorch object itself rather than tensors and "
                "containers; this package reads PyTorch's tensors, not its classes. In PyTorch, save the model's "
                "state_dict() instead and load it with module.load_state_dict(tga.load(path))"
            )
        return super().find_class(module, name)


def _module_class() -> type:
    from ..nn.module import Module  # noqa: PLC0415 - nn builds on the tensors this package reads

    return Module


_STRING_OPS = {"STRING", "BINSTRING", "SHORT_BINSTRING", "UNICODE", "BINUNICODE", "SHORT_BINUNICODE", "BINUNICODE8"}
_PUT_OPS = {"PUT", "BINPUT", "LONG_BINPUT"}
_GET_OPS = {"GET", "BINGET", "LONG_BINGET"}


def globals_named(src: BinaryIO) -> list[str]:
    """The globals one pickle (read from ``src`` up to its STOP) names, ``module.name``, in
    order, found by reading its opcodes: nothing is unpickled. A protocol 4 name
    (``STACK_GLOBAL``) is the two strings pushed before it, directly or from the memo."""
    found: list[str] = []
    memo: dict[int, Any] = {}
    pushed: list[Any] = []  # the values pushed most recently (None: anything but a string)
    memoized = 0
    for op, arg, _ in pickletools.genops(src):
        if op.name in ("GLOBAL", "INST"):
            found.append(".".join(arg.split(" ", 1)))
        elif op.name == "STACK_GLOBAL":
            if len(pushed) >= 2 and all(isinstance(v, str) for v in pushed[-2:]):
                found.append(f"{pushed[-2]}.{pushed[-1]}")
            pushed.append(None)
        elif op.name in _PUT_OPS or op.name == "MEMOIZE":
            memo[arg if op.name in _PUT_OPS else memoized] = pushed[-1] if pushed else None
            memoized += 1
        elif op.name in _GET_OPS:
            pushed.append(memo.get(arg))
        else:
            pushed.append(arg if op.name in _STRING_OPS else None)
        del pushed[:-2]
    return found
