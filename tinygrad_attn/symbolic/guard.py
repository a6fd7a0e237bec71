"""One guard for everything a compiled step can reach: a fingerprint of the Python state.

A replayed program has baked in every Python value its trace read: a loss coefficient in a
list, a ``max_norm`` in a config dict, which activation a submodule is, which optimizer
object an update goes to. Rather than list the places such a value may hide, the guard
walks everything the step can reach and writes it down as one flat tuple (the *key*):

- the step's ``self`` (a bound method, a module), ``functools.partial`` arguments, its
  closure cells, its defaults and the globals its code names (nested functions' too); the
  same for the functions those name, to a depth (:data:`DEPTH`), and for the methods of
  the user's classes whose instances it reaches;
- containers (lists, tuples, dicts, sets) to any depth, numbers (NumPy scalars included) by
  type and value, strings by value;
- callables, Python modules and classes by identity; ``nn.Module`` trees by identity, class
  and every attribute (submodules, parameters, buffers, plain tensors, numbers);
- optimizers by identity and class, their param groups (which parameters, and each
  setting; the numbers a program reads live at each replay, the learning rate and the
  other :data:`LIVE_HYPERPARAMETERS`, only by whether they are zero);
- tensors by identity, shape, dtype, device and ``requires_grad``; NumPy arrays by contents
  (small ones by their bytes, larger ones by a version counted up when they change: see
  :data:`MAX_ARRAY_COMPARED`);
- objects of the user's classes (a trainer, a config dataclass, a ``SimpleNamespace``)
  by class and attributes; any other object by identity and class;
- the grad mode and the default device.

Two calls with equal keys would trace the same program. It is cheap: a module's attributes
are re-read only when some module changed (``nn.module._CHANGES`` counts assignments),
and only the values that can change without an assignment (tensors' ``requires_grad``
and shape, containers, plain objects, globals, closure cells) are walked at each call.
Cheaper still, each walk for a key writes down the reads it made as a :class:`_Plan`, one
generated function of flat compares (``cell.cell_contents is c3``, ``t._requires_grad is
True``...); the next call runs it first and, when every read finds what the walk found,
returns the last key itself (about a quarter of a walk's time: 2.6 µs against 8.4 for the
tiny attention step's 38 values). A plan that fails at once makes the next ones rarer
(a back-off), so a reach that changes at every call costs about a walk.
:meth:`Guard.describe` walks again with a name for each value: what a cache-limit warning
names.
"""

from __future__ import annotations

import dataclasses
import dis
import functools
import inspect
import operator
import random
import sys
import sysconfig
import threading
import types
import weakref
from collections.abc import Callable
from typing import Any

import numpy as np

from ..engine.switches import _State
from ..tensors._tensor import Tensor
from ..tensors.dtypes import _DEFAULT_FLOAT

#: How many functions deep the globals of called functions are walked.
DEPTH = 3
#: Optimizer settings a program reads at each replay: only whether each is zero is guarded
#: (it decides which ops the update has).
LIVE_HYPERPARAMETERS = frozenset({"lr", "betas", "momentum", "eps", "weight_decay", "dampening"})
#: Containers longer than this are guarded by identity and length (a data set in a global).
MAX_ITEMS = 4096
#: NumPy arrays up to this many elements are guarded by their contents.
MAX_ARRAY_CONTENTS = 1024
#: Larger ones, up to this many elements, by a version counted up when a compare with a kept
#: copy finds their contents changed (about 0.3 ms per call at the largest); beyond, by identity.
MAX_ARRAY_COMPARED = 1 << 20

_SCALARS = (int, float, bool, complex, np.generic)
_PLAIN = frozenset({int, float, bool, str, bytes, type(None)})
_MODULE_SKIP = frozenset({"_parameters", "_modules", "_buffers", "_non_persistent", "_scope_name", "_buffer_names"})
_OPT_SKIP = frozenset({"state", "defaults", "_flat", "param_groups"})
_MISSING = object()
_is = operator.is_
_Module: Any = None
_Optimizer: Any = None
_backend: Any = None
_CHANGES: list[int] = [0]
_GLOBAL_HOOKS: list[Any] = []  # nn.module's registries of the hooks of every module
_USER_FILES: dict[str, bool] = {}
_USER_CLASSES: dict[type, bool] = {}
_USER_MODULES: dict[str, bool] = {}
_STDLIB = sysconfig.get_paths()["stdlib"].replace("\\", "/")
_NAMES: dict[Any, tuple[str, ...]] = {}  # a code object -> the global names it (and its nested code) reads
_ATTRS: dict[Any, tuple[str, ...]] = {}  # a code object -> every name it looks up (see _attribute_names)
_GLOBAL_OPS = frozenset({"LOAD_GLOBAL", "STORE_GLOBAL", "DELETE_GLOBAL", "LOAD_NAME", "STORE_NAME", "DELETE_NAME"})


def _user_file(filename: str | None) -> bool:
    """Code outside this package and outside installed libraries: the user's."""
    if not filename:
        return False
    user = _USER_FILES.get(filename)
    if user is None:
        f = filename.replace("\\", "/")
        user = ("/tinygrad_attn/" not in f or "/tests/" in f) and "-packages/" not in f and not f.startswith("<frozen")
        user = user and not f.startswith(_STDLIB)  # (logging's Logger, with its cache, is not the user's)
        _USER_FILES[filename] = user
    return user


def _user_module(m: types.ModuleType) -> bool:
    """A Python module of the user's own (a settings file), not the standard library's."""
    user = _USER_MODULES.get(m.__name__)
    if user is None:
        f = getattr(m, "__file__", None)
        user = _USER_MODULES[m.__name__] = _user_file(f)  # (not the standard library's: see _user_file)
    return user


def _user_class(cls: type) -> bool:
    user = _USER_CLASSES.get(cls)
    if user is None:
        mod = sys.modules.get(cls.__module__)
        user = cls.__module__ == "__main__" or _user_file(getattr(mod, "__file__", None))
        user = user or dataclasses.is_dataclass(cls) or cls in (types.SimpleNamespace,)
        user = user or (cls.__name__ == "Namespace" and cls.__module__ == "argparse")
        # (a distribution held across calls, a prior: its parameters are attributes a user reassigns)
        user = user or cls.__module__.startswith("tinygrad_attn.distributions.")
        _USER_CLASSES[cls] = user
    return user


def _tree(m: Any, static: list[Any], tensors: list[Any], live: list[Any], classes: list[type], seen: set[int]) -> None:
    """Sort a module tree's attributes for :meth:`Guard.module`: ``static`` tokens (classes,
    identities, numbers, strings), the ``tensors`` (whose ``requires_grad`` and shape change
    without an assignment), the ``live`` values walked at each call (containers, objects,
    functions) and the user's ``classes`` (whose methods' globals are walked)."""
    t = type(m)
    if id(m) in seen:
        static.append(("module seen", id(m)))
        return
    seen.add(id(m))
    static.append((t, id(m)))
    if _user_class(t) and t not in classes:
        classes.append(t)
    for k, x in m.__dict__.items():
        if k in _MODULE_SKIP:
            continue
        tx = type(x)
        if tx in (int, float, bool, str, type(None)) and (tx is not float or x == x):
            static.append((k, tx, x))
        elif isinstance(x, Tensor):
            static.append(k)
            tensors.append(x)
        elif isinstance(x, _Module):
            static.append(k)
            _tree(x, static, tensors, live, classes, seen)
        else:
            static.append(k)
            live.append(x)


def _position(v: Any) -> Any:
    """Where an iterator, a generator or a random generator stands (None for other objects):
    a step that advances one (``next(batches)``, ``rng.normal()``) did what a replay would
    not do again."""
    if isinstance(v, types.GeneratorType):
        frame = v.gi_frame
        if frame is None:
            return ("finished",)
        return frame.f_lasti, tuple(
            (type(x), x) if type(x) in (int, float, bool, str) else id(x) for x in frame.f_locals.values()
        )
    if isinstance(v, np.random.Generator):
        return repr(v.bit_generator.state)
    if isinstance(v, random.Random):
        return hash(v.getstate())
    if isinstance(v, np.random.RandomState):
        st = v.get_state()
        return st[2], st[1].tobytes()
    if hasattr(type(v), "__next__") and not hasattr(v, "__dict__"):  # (a user's iterator: its attributes say)
        left = operator.length_hint(v, -1)  # (a list's or a range's iterator: how many are left)
        if left >= 0:
            return left
        try:  # (itertools.count, map, enumerate: the state they pickle, iterators in it by position)
            red = v.__reduce__()
        except Exception:  # noqa: BLE001 - an iterator that cannot say where it stands
            return None
        parts = [*(red[1] if len(red) > 1 and isinstance(red[1], tuple) else ()), *red[2:3]]
        return tuple(
            x if type(x) in (int, float, bool, str) else _position(x) if hasattr(type(x), "__next__") else id(x)
            for x in parts
        )
    return None


def nested_codes(code: Any) -> list[Any]:
    """``code`` and every code object nested in it (lambdas, comprehensions, inner functions)."""
    out, todo = [], [code]
    while todo:
        c = todo.pop()
        out.append(c)
        todo.extend(k for k in c.co_consts if inspect.iscode(k))
    return out


def _global_names(code: Any) -> tuple[str, ...]:
    """The global names ``code`` (and its nested code: lambdas, comprehensions) reads or
    writes, not the attribute names (``x.shape``) that share ``co_names`` with them."""
    names = _NAMES.get(code)
    if names is None:
        found: dict[str, None] = {}
        for c in nested_codes(code):
            found.update((i.argval, None) for i in dis.get_instructions(c) if i.opname in _GLOBAL_OPS)
        names = _NAMES[code] = tuple(found)
    return names


_CHAINS: dict[Any, dict[str, tuple[tuple[str, ...], ...]]] = {}  # a code object -> see _attribute_chains


def _attribute_chains(code: Any) -> dict[str, tuple[tuple[str, ...], ...]]:
    """The attribute chains ``code`` (and its nested code) reads off each global, by the global's
    name: ``F.gelu(x)`` is ``{"F": (("gelu",),)}``, ``tga.nn.functional.gelu`` ``(("nn", "functional",
    "gelu"),)`` under ``"tga"``: what a step reads of a library module it names."""
    chains = _CHAINS.get(code)
    if chains is None:
        found: dict[str, dict[tuple[str, ...], None]] = {}
        for c in nested_codes(code):
            head, attrs = None, []
            for i in (*dis.get_instructions(c), None):
                if i is not None and i.opname in ("LOAD_ATTR", "LOAD_METHOD") and head is not None:
                    attrs.append(i.argval)
                    continue
                if head is not None and attrs:
                    found.setdefault(head, {})[tuple(attrs)] = None
                head, attrs = (i.argval, []) if i is not None and i.opname == "LOAD_GLOBAL" else (None, [])
        chains = _CHAINS[code] = {k: tuple(v) for k, v in found.items()}
    return chains


def _attribute_names(code: Any) -> tuple[str, ...]:
    """Every name ``code`` (and its nested code) looks up: globals and attributes
    (``settings.scale``'s ``scale``)."""
    names = _ATTRS.get(code)
    if names is None:
        found: dict[str, None] = {}
        for c in nested_codes(code):
            found.update(dict.fromkeys(c.co_names))
        names = _ATTRS[code] = tuple(found)
    return names


#: A plan longer than this many lines is not compiled: the full walk runs at every call.
MAX_PLAN_LINES = 4000
#: Containers up to this many items are checked by unpacking into locals, longer ones by a loop.
_UNPACK = 16


def _grad_hooks_token() -> tuple:
    hooks = _State.grad_hooks
    # Gradient hooks run in eager backward passes only: one registered or removed traces again.
    return tuple([(k, len(e[1])) for k, e in hooks.items() if e[1]]) if hooks else ()


def _module_hooks_token() -> tuple:
    # Hooks of every module (nn.modules.module.register_module_forward_hook): one added or removed traces again.
    return tuple([tuple(r) for r in _GLOBAL_HOOKS]) if any(_GLOBAL_HOOKS) else ()


def _live_token(h: Any) -> Any:
    """A live optimizer setting as the key writes it: only whether it is zero."""
    try:
        return tuple(float(x) != 0.0 for x in h) if isinstance(h, (tuple, list)) else float(h) != 0.0
    except (TypeError, ValueError):
        return None


def _array_version(arrays: dict[int, list[Any]], v: np.ndarray) -> int:
    """How many times a large NumPy array's contents were seen to change: compared with a
    copy at each key (a vectorised compare, not a hash of the bytes), counted up on a change."""
    e = arrays.get(id(v))
    if e is None or e[0]() is not v:
        e = arrays[id(v)] = [weakref.ref(v), v.copy(), 0]
    elif not (np.array_equal(v, e[1]) or v.dtype.kind in "fc" and np.array_equal(v, e[1], equal_nan=True)):
        e[1], e[2] = v.copy(), e[2] + 1
    return e[2]


def _cell(cell: Any) -> Any:
    try:
        return cell.cell_contents
    except ValueError:  # an empty cell
        return _MISSING


class _Plan:
    """The reads one key's walk made, written down as Python lines that make them again and
    compare what they find with what the walk found: every object by identity (numbers by type
    and value; another object equal, a tuple or a string made again, fails: then the walk runs),
    a tensor's shape, dtype, device and ``requires_grad``, a container's length, keys and items,
    a name's absence. All the walk's tokens are functions of these reads, so when every line
    holds, the walk would write the same key; compiled once per walk into one function
    (:meth:`compile`), it is what a call checks first. A read that raises (a list grown: its
    unpacking) fails the check too (see :meth:`Guard.key`).

    >>> p = _Plan()
    >>> box = [2.0]
    >>> _ = p.items(p.c(box), box)
    >>> check = p.compile({})
    >>> check(), box.__setitem__(0, 3.0), check()
    (True, None, False)
    """

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.consts: list[Any] = []
        self._names: dict[int, str] = {}
        self._locals = 0
        self._made: set[str] = set()

    def c(self, obj: Any) -> str:
        """The name under which the check reads ``obj`` (held: its id cannot be reused)."""
        n = self._names.get(id(obj))
        if n is None:
            n = self._names[id(obj)] = f"c{len(self.consts)}"
            self.consts.append(obj)
        return n

    def need(self, cond: str) -> None:
        if cond in self._made:  # (made already in this check, with nothing changed in between)
            return
        self._made.add(cond)
        lines = self.lines
        if lines and lines[-1].startswith("    if not ("):  # (joined to the last test: one branch fewer)
            lines[-1] = f"{lines[-1][:-1]} and {cond})"
        else:
            lines.append(f"    if not ({cond})")

    def same(self, expr: str, obj: Any) -> None:
        self.need(self._is(expr, obj))

    def _is(self, expr: str, obj: Any) -> str:
        """``expr`` reads ``obj`` again: by identity; a number by type and value (one computed
        again at each call, equal, is a new object: by identity the walk would run each time)."""
        t = type(obj)
        if (t is float or t is int or isinstance(obj, np.generic)) and obj == obj:
            if expr.isidentifier():
                return f"{expr}.__class__ is {self.c(t)} and {expr} == {self.c(obj)}"
            return f"(y := {expr}).__class__ is {self.c(t)} and y == {self.c(obj)}"
        return f"{expr} is {self.c(obj)}"

    def get(self, d: Any, key: str, v: Any) -> None:
        """``d.get(key)`` is ``v`` (or ``key`` is not in ``d`` when ``v`` is missing)."""
        if v is _MISSING:
            self.need(f"{key!r} not in {self.c(d)}")
        else:  # (a value None: the key still there)
            self.need(self._is(f"{self.c(d)}.get({key!r}{', M' if v is None else ''})", v))

    def tensor(self, t: Any) -> None:
        d, n = t._data, self.c(t)
        self.need(f"{n}._requires_grad is {t._requires_grad!r}")  # (apart: an optimizer's list reads it too)
        self.need(f"{n}._dev is {self.c(t._dev)}")
        self.need(f"(d := {n}._data).shape == {self.c(d.shape)} and d.dtype is {self.c(d.dtype)}")

    def items(self, seq: str, items: Any, skip: frozenset[int] = frozenset()) -> list[str]:
        """``seq`` (an expression) has exactly ``items``, each the same object but those at the
        positions ``skip``; the expressions that read each item."""
        items = list(items)
        if not items:
            self.need(f"not {seq}")
            return []
        if len(items) > _UNPACK:
            if not skip:
                held = self.c(tuple(items))
                self.need(f"len({seq}) == {len(items)} and all(map(_is, {seq}, {held}))")
                return [f"{held}[{i}]" for i in range(len(items))]
            x = f"x{self._locals}"
            self._locals += 1
            self.lines.append(f"    {x} = tuple({seq})")
            names = [f"{x}[{i}]" for i in range(len(items))]
            self.need(f"len({x}) == {len(items)}")
        else:
            names = [f"x{self._locals + i}" for i in range(len(items))]
            self._locals += len(items)
            self.lines.append(f"    {', '.join(names)}, = {seq}")
        same = [self._is(k, v) for i, (k, v) in enumerate(zip(names, items)) if i not in skip]
        if same:
            self.need(" and ".join(same))
        return names

    def mapping(self, d: Any) -> list[str]:
        """A dict (or a class's mapping proxy) ``d``: its keys in order and each value by identity."""
        n = self.c(d)
        self.need(f"tuple({n}) == {self.c(tuple(d))}")
        return self.items(f"{n}.values()", d.values())

    def compile(self, helpers: dict[str, Any]) -> Callable[[], bool] | None:
        if len(self.lines) > MAX_PLAN_LINES:
            return None
        lines = [f"{ln}: return False" if ln.startswith("    if not (") else ln for ln in self.lines]
        src = "def check():\n" + "\n".join(lines) + "\n    return True\n"
        env = {**helpers, **{f"c{i}": v for i, v in enumerate(self.consts)}}
        exec(compile(src, "<guard check>", "exec"), env)
        return env.pop("check")


class Guard:
    """The fingerprint of what one function reaches (see the module docstring).

    >>> g = Guard()
    >>> coef = [1.0]
    >>> f = lambda x: x * coef[0]
    >>> k = g.key(f)
    >>> coef[0] = 2.0
    >>> g.key(f) == k
    False
    """

    def __init__(self) -> None:
        global _Module, _Optimizer, _backend, _CHANGES
        if _Module is None:  # (imported here: the package imports this module before nn and optim)
            from ..nn.module import _CHANGES as changes  # noqa: PLC0415
            from ..nn.module import GLOBAL_HOOKS, Module  # noqa: PLC0415
            from ..optim.optimizer import Optimizer  # noqa: PLC0415
            from ..runtime import backend  # noqa: PLC0415

            _Module, _Optimizer, _backend, _CHANGES = Module, Optimizer, backend, changes
            _GLOBAL_HOOKS[:] = GLOBAL_HOOKS
        self._lock = threading.Lock()
        self._modules: dict[int, tuple[Any, int, list[Any], list[tuple[str, Any]]]] = {}
        self._classes: dict[type, list[type]] = {}  # a class -> the user's classes of its MRO
        self.out: list[Any] = []
        self.paths: list[str] | None = None
        self._seen: dict[int, int] = {}
        self._arrays: dict[int, list[Any]] = {}  # id(large array) -> [a weak reference, its copy, its version]
        self.kept: list[Any] = []  # what the last describe wrote down by identity
        # The compiled check of the last key's reads (see key), what it was for, and how it fared
        self._plan: _Plan | None = None
        self._check: Callable[[], bool] | None = None
        self._check_fn: Any = None
        self._check_key: tuple = ()
        self._check_args: list[Any] = []
        self._hits = 0
        self._skip = 0
        self._backoff = 1
        self._helpers = {
            "_is": _is,
            "M": _MISSING,
            "_State": _State,
            "_CHANGES": _CHANGES,
            "_backend": _backend,
            "_DEFAULT_FLOAT": _DEFAULT_FLOAT,
            "_GLOBAL_HOOKS": _GLOBAL_HOOKS,
            "_grad_hooks_token": _grad_hooks_token,
            "_module_hooks_token": _module_hooks_token,
            "_live": _live_token,
            "_cell": _cell,
            "_ver": _array_version,
            "_arrays": self._arrays,
        }

    # -- entry points -------------------------------------------------------------------
    def key(self, fn: Callable[..., Any], args: Any = ()) -> tuple:
        """The fingerprint of ``fn``'s reach and of the non-tensor values of ``args`` (a
        list of ``(name, value)``).

        The last walk's reads, compiled (:class:`_Plan`), are made first: when each finds what
        the walk found, the last key is returned as it is (the same tuple); else the walk runs
        again and writes down its reads anew."""
        with self._lock:  # (one walk at a time: its state lives on the guard)
            check = self._check
            if check is not None and fn is self._check_fn and len(args) == len(self._check_args):
                try:
                    ok = (not args or all(map(_is, [a[1] for a in args], self._check_args))) and check()
                except Exception:  # noqa: BLE001 - (a read that fails now: the walk decides)
                    ok = False
                if ok:
                    self._hits += 1
                    return self._check_key
            plan = None
            if self._skip > 0:  # (plans failed at once lately: walk without writing one down)
                self._skip -= 1
            else:
                plan = _Plan()
                if check is not None and not self._hits:  # (the last plan never held: back off)
                    self._backoff = min(self._backoff * 2, 256)
                    self._skip = self._backoff
                elif self._hits:
                    self._backoff = 1
            self.out, self.paths, self._seen, self._plan = [], None, {}, plan
            try:
                self._walk_all(fn, args)
            finally:
                self._plan = None
            out = tuple(self.out)
            self.out, self._seen = [], {}
            self._check, self._hits = None, 0
            if plan is not None:
                check = plan.compile(self._helpers)
                if check is not None:
                    self._check, self._check_fn, self._check_key = check, fn, out
                    self._check_args = [a[1] for a in args]
                else:  # (too long to be worth compiling: the walk alone, mostly)
                    self._backoff = self._skip = 256
        return out

    def describe(self, fn: Callable[..., Any], args: Any = ()) -> dict[str, Any]:
        """``{name: what was written down}`` for each value of the fingerprint; ``kept`` holds
        the objects written down by identity (see :class:`~.compile.Compiled`)."""
        with self._lock:
            self.out, self.paths, self._seen, self.kept = [], [], {}, []
            self._walk_all(fn, args)
            out, paths = self.out, self.paths
            self.out, self.paths, self._seen = [], None, {}
        found: dict[str, list[Any]] = {}
        for p, v in zip(paths, out):
            found.setdefault(p, []).append(v)
        return {p: tuple(v) for p, v in found.items()}

    def _walk_all(self, fn: Any, args: Any) -> None:
        out = self.out
        out.append(_State.grad_enabled)
        out.append(_backend._default_name)
        out.append(_DEFAULT_FLOAT[0])  # (what a float factory and a Python float make)
        out.append(_grad_hooks_token())
        out.append(_module_hooks_token())
        plan = self._plan
        if plan is not None:
            plan.need(f"_State.grad_enabled is {plan.c(out[-5])} and _DEFAULT_FLOAT[0] is {plan.c(out[-3])}")
            plan.need(f"_backend._default_name == {plan.c(out[-4])}")
            plan.need("not _State.grad_hooks" if not _State.grad_hooks else f"_grad_hooks_token() == {plan.c(out[-2])}")
            plan.need(
                "not any(_GLOBAL_HOOKS)" if not any(_GLOBAL_HOOKS) else f"_module_hooks_token() == {plan.c(out[-1])}"
            )
        if self.paths is not None:
            self.paths += [
                "grad mode",
                "default device",
                "default dtype",
                "tensor hooks (register_hook)",
                "hooks of every module (register_module_forward_hook)",
            ]
        self.function(fn, "fn", DEPTH)
        for name, a in args:
            self.walk(a, name)

    # -- the walk -----------------------------------------------------------------------
    def _emit(self, v: Any, path: str) -> None:
        self.out.append(v)
        if self.paths is not None:
            self.paths.append(path)

    def walk(self, v: Any, path: str = "", depth: int = DEPTH) -> None:
        """Write down ``v`` (see the module docstring)."""
        t = type(v)
        if self.paths is not None and t not in _PLAIN:
            self.kept.append(v)
        if t is float:
            tok: Any = (float, v if v == v else "nan")
        elif t is int or t is bool or t is str or v is None or t is bytes:
            tok = (t, v)
        elif t is Tensor or isinstance(v, Tensor):
            d = v._data
            tok = (id(v), d.shape, d.dtype, v._dev, v._requires_grad)
        elif isinstance(v, _SCALARS):
            tok = (t, v.item() if isinstance(v, np.generic) and v == v else repr(v))
        else:
            tok = None
        if tok is not None:  # (the common case, inlined: a call per value was a third of the cost)
            self.out.append(tok)
            if self.paths is not None:
                self.paths.append(path)
            elif self._plan is not None and len(tok) == 5:  # (a tensor: numbers and strings are immutable)
                self._plan.tensor(v)
        else:
            paths = self.paths
            k = id(v)
            at = self._seen.get(k)
            if at is not None:  # walked already in this key (a cycle, or one object reached twice)
                self._emit(("seen", at), path)
                return
            self._seen[k] = len(self.out)
            if t is list or t is tuple or t is dict or isinstance(v, (list, tuple, dict)):
                self._container(v, t, path, depth)
            elif isinstance(v, (set, frozenset)):
                try:
                    self._emit((t, frozenset(v)), path)
                    if self._plan is not None and t is not frozenset:
                        self._plan.need(f"frozenset({self._plan.c(v)}) == {self._plan.c(self.out[-1][1])}")
                except TypeError:
                    self._emit((t, id(v), len(v)), path)
                    if self._plan is not None:
                        self._plan.need(f"len({self._plan.c(v)}) == {len(v)}")
            elif isinstance(v, np.ndarray):
                plan = self._plan
                if plan is not None:
                    n = plan.c(v)
                    plan.need(f"{n}.shape == {plan.c(v.shape)} and {n}.dtype == {plan.c(v.dtype)}")
                if v.size <= MAX_ARRAY_CONTENTS:
                    self._emit(("array", v.shape, v.dtype, v.tobytes()), path)
                    if plan is not None:
                        plan.need(f"{n}.tobytes() == {plan.c(self.out[-1][3])}")
                elif v.size <= MAX_ARRAY_COMPARED and v.dtype.kind in "biufc":
                    self._emit(("array", id(v), v.shape, v.dtype, self._array_version(v)), path)
                    if plan is not None:
                        plan.need(f"_ver(_arrays, {n}) == {self.out[-1][4]}")
                else:
                    self._emit(("array", id(v), v.shape, v.dtype), path)
            else:
                self._object(v, t, path if paths is not None else "", depth)

    def _array_version(self, v: np.ndarray) -> int:
        return _array_version(self._arrays, v)

    def _container(self, v: Any, t: type, path: str, depth: int) -> None:
        n = len(v)
        plan = self._plan
        if n > MAX_ITEMS:
            self._emit((t, id(v), n), path)
            if plan is not None and not isinstance(v, tuple):
                plan.need(f"len({plan.c(v)}) == {n}")
            return
        paths = self.paths
        if plan is not None:  # (a tuple's items cannot change; a list's and a dict's are read again)
            if isinstance(v, dict):
                plan.mapping(v)
            elif not isinstance(v, tuple):
                plan.items(plan.c(v), v)
        if paths is None:  # (a key: tensors and plain numbers inline, as walk writes them, a call fewer each)
            out = self.out
            out.append((t, tuple(v)) if n < 64 and isinstance(v, dict) else (t, n))
            walk = self.walk
            for x in v.values() if isinstance(v, dict) else v:
                tx = type(x)
                if tx is Tensor:
                    d = x._data
                    out.append((id(x), d.shape, d.dtype, x._dev, x._requires_grad))
                    if plan is not None:
                        plan.tensor(x)
                elif tx is int or tx is bool or tx is str or x is None:
                    out.append((tx, x))
                else:
                    walk(x, "", depth)
        elif isinstance(v, dict):
            self._emit((t, tuple(v)) if n < 64 else (t, n), path)
            for k, x in v.items():
                self.walk(x, f"{path}[{k!r}]", depth)
        else:
            self._emit((t, n), path)
            for i, x in enumerate(v):
                self.walk(x, f"{path}[{i}]", depth)

    def _object(self, v: Any, t: type, path: str, depth: int) -> None:
        if isinstance(v, _Module):
            self.module(v, path, depth)
        elif isinstance(v, _Optimizer):
            self.optimizer(v, path)
        elif t is types.FunctionType or t is types.MethodType or t is functools.partial:
            self.function(v, path, depth)
        elif t is types.ModuleType or isinstance(v, type) or callable(v) and not hasattr(v, "__dict__"):
            self._emit((t, id(v)), path)  # a Python module, a class, a builtin: by identity
        elif hasattr(v, "__dict__") and _user_class(t):
            self._emit((t, id(v)), path)
            plan = self._plan
            if plan is not None:
                n = plan.c(v)
                plan.need(f"{n}.__class__ is {plan.c(t)}")
                plan.same(f"{n}.__dict__", vars(v))
                plan.mapping(vars(v))
            self._class(t, path, depth)
            paths = self.paths
            for k, x in vars(v).items():
                self.walk(x, f"{path}.{k}" if paths is not None else "", depth)
        else:
            self._emit((t, id(v)), path)
            wrapped = getattr(v, "__wrapped__", None) if callable(v) else None
            plan = self._plan
            if plan is not None:  # (as the walk: only a callable's is read)
                n = plan.c(v)
                plan.need(
                    f"getattr({n}, '__wrapped__', None) is {plan.c(wrapped)}" if callable(v) else f"not callable({n})"
                )
            if wrapped is not None:  # (a compiled function, a decorator's wrapper object: what it calls)
                self.function(wrapped, f"{path}.__wrapped__" if self.paths is not None else "", depth)
                code = getattr(wrapped, "__code__", None)
                own = getattr(v, "__dict__", None)
                if plan is not None:
                    plan.same(f"getattr({plan.c(wrapped)}, '__code__', None)", code)
                    plan.same(f"getattr({plan.c(v)}, '__dict__', None)", own)
                    if own is not None:
                        plan.need(f"bool({plan.c(own)}) is {bool(own)}")
                if code is not None and own:  # (``step.scale`` set on the compiled object: what the code names)
                    for attr in _attribute_names(code):
                        x = own.get(attr, _MISSING)
                        if plan is not None:
                            plan.get(own, attr, x)
                        if x is not _MISSING:
                            self.walk(x, f"{path}.{attr}" if self.paths is not None else "", depth)
        if self.paths is not None:  # (described around a trace: what the step advanced)
            pos = _position(v)
            if pos is not None:
                self._emit(pos, f"{path} (its position)")

    def module(self, m: Any, path: str, depth: int) -> None:
        """A module tree: classes and attributes, read again only after a module changed (then
        only its tensors, containers and other objects are walked: what changes unassigned)."""
        paths = self.paths
        t = type(m)
        if paths is not None:  # (naming: walked in full)
            self._emit((t, id(m), m.training), path)
            for k, x in m.__dict__.items():
                if k not in _MODULE_SKIP:
                    self.walk(x, f"{path}.{k}" if path else k, depth)
            if _user_class(t):
                self._class(t, path, depth)
            return
        plan = self._plan
        if plan is not None:  # (the tree's attributes are read again after any module's assignment)
            plan.need(f"_CHANGES[0] == {_CHANGES[0]}")
        c = self._modules.get(id(m))
        if c is None or c[0] is not m or c[1] != _CHANGES[0]:
            static: list[Any] = []
            tensors: list[Any] = []
            live: list[Any] = []
            classes: list[type] = []
            _tree(m, static, tensors, live, classes, set())
            c = self._modules[id(m)] = (m, _CHANGES[0], static, tensors, live, classes)
        out = self.out
        out.extend(c[2])
        for v in c[3]:
            d = v._data
            out.append((id(v), d.shape, d.dtype, v._dev, v._requires_grad))
            if plan is not None:
                plan.tensor(v)
        for x in c[4]:
            self.walk(x, "", depth)
        for cls in c[5]:
            self._class(cls, "", depth)

    def _class(self, cls: type, path: str, depth: int) -> None:
        """A user's class: its attributes (``Trainer.scale``, a method replaced: read through
        ``self`` but changed with no assignment to an instance) and the globals its methods
        name (a ``forward`` calling a global activation)."""
        if depth <= 0:
            return
        own = self._classes.get(cls)
        if own is None:
            own = self._classes[cls] = [k for k in cls.__mro__ if k is not object and _user_class(k)]
        paths = self.paths
        plan = self._plan
        for klass in own:
            if plan is not None:  # (each value by identity: a method replaced on the class)
                plan.mapping(vars(klass))
            for k, f in vars(klass).items():
                if k[:2] == "__":
                    continue
                f = getattr(f, "__func__", f)
                kp = f"{path}.{k}" if paths is not None else ""
                if type(f) is types.FunctionType:
                    self._emit(("fn", id(f), id(f.__code__)), kp)
                    if paths is not None:
                        self.kept += [f, f.__code__]
                    if plan is not None:
                        plan.same(f"{plan.c(f)}.__code__", f.__code__)
                    if _user_file(f.__code__.co_filename):
                        self._globals_of(f, kp, depth - 1)
                else:
                    self.walk(f, kp, depth - 1)

    def optimizer(self, opt: Any, path: str) -> None:
        """An optimizer: its class, identity, param groups and hooks (not its state, which the
        program reads live)."""
        paths = self.paths
        self._emit((type(opt), id(opt), len(opt.param_groups)), path)
        if paths is None:
            self._optimizer_key(opt)
            return
        for gi, group in enumerate(opt.param_groups):
            gpath = f"{path}.param_groups[{gi}]" if paths is not None else ""
            for k, h in group.items():
                kp = f"{gpath}[{k!r}]" if paths is not None else ""
                if k == "params":
                    self._emit(tuple([(id(p), p._requires_grad) for p in h]), kp)
                elif k in LIVE_HYPERPARAMETERS:
                    try:  # read live: only zero or not decides the program
                        z = tuple(float(x) != 0.0 for x in h) if isinstance(h, (tuple, list)) else float(h) != 0.0
                    except (TypeError, ValueError):
                        z = None
                    self._emit((k, z), kp)
                else:
                    self._emit(k, kp)
                    self.walk(h, kp, 1)
        for k, x in vars(opt).items():  # (its own bookkeeping, underscored, changes as it steps)
            if k not in _OPT_SKIP and (k[0] != "_" or k.endswith("hooks")):
                self.walk(x, f"{path}.{k}" if paths is not None else "", 1)

    def _optimizer_key(self, opt: Any) -> None:
        """:meth:`optimizer`'s tokens for a key (no names), the settings of plain types
        written inline: an optimizer is walked at every call of a compiled training step."""
        out, walk, plan = self.out, self.walk, self._plan
        if plan is not None:
            n = plan.c(opt)
            plan.need(f"{n}.__class__ is {plan.c(type(opt))}")
            plan.same(f"{n}.param_groups", opt.param_groups)
            plan.items(plan.c(opt.param_groups), opt.param_groups)
            plan.same(f"{n}.__dict__", vars(opt))
            plan.need(f"tuple({plan.c(vars(opt))}) == {plan.c(tuple(vars(opt)))}")
        for group in opt.param_groups:
            if plan is not None:  # (the live settings by whether they are zero, the rest by identity)
                g = plan.c(group)
                plan.need(f"tuple({g}) == {plan.c(tuple(group))}")
                live = frozenset(i for i, k in enumerate(group) if k in LIVE_HYPERPARAMETERS)
                reads = plan.items(f"{g}.values()", group.values(), skip=live)
                for i, h in enumerate(group.values()):
                    th = type(h)
                    if i not in live:
                        continue
                    if th is float or th is int:
                        plan.need(f"{reads[i]}.__class__ is {th.__name__} and ({reads[i]} != 0.0) is {h != 0.0}")
                    else:
                        plan.need(f"_live({reads[i]}) == {plan.c(_live_token(h))}")
                ps = group.get("params", _MISSING)
                if ps is not _MISSING:
                    plan.items(plan.c(ps), ps)
                    for q in ps:
                        plan.need(f"{plan.c(q)}._requires_grad is {q._requires_grad!r}")
            for k, h in group.items():
                th = type(h)
                if k == "params":
                    out.append(tuple([(id(p), p._requires_grad) for p in h]))
                elif k in LIVE_HYPERPARAMETERS:
                    if th is float or th is int:
                        out.append((k, h != 0.0))
                        continue
                    try:  # read live: only zero or not decides the program
                        z = tuple(float(x) != 0.0 for x in h) if isinstance(h, (tuple, list)) else float(h) != 0.0
                    except (TypeError, ValueError):
                        z = None
                    out.append((k, z))
                elif th is bool or th is int or th is str or h is None:
                    out.append(k)
                    out.append((th, h))
                else:
                    out.append(k)
                    walk(h, "", 1)
        for k, x in vars(opt).items():  # (its own bookkeeping, underscored, changes as it steps)
            if k not in _OPT_SKIP and (k[0] != "_" or k.endswith("hooks")):
                if plan is not None:
                    plan.same(f"{plan.c(vars(opt))}[{k!r}]", x)
                if type(x) is dict and not x:  # (no hooks: the usual case, as walk writes it)
                    out.append((dict, ()))
                    if plan is not None:
                        plan.need(f"not {plan.c(x)}")
                else:
                    walk(x, "", 1)

    def function(self, f: Any, path: str, depth: int) -> None:
        """A callable: by identity; the user's functions also by their closure, defaults and
        the globals they name (to ``depth`` functions deep)."""
        paths = self.paths
        if paths is not None:
            self.kept.append(f)
        while type(f) is functools.partial:
            self._emit((functools.partial, id(f)), path)
            plan = self._plan
            if plan is not None:  # (its parts are read-only but for __setstate__)
                n = plan.c(f)
                plan.need(f"{n}.func is {plan.c(f.func)} and {n}.args is {plan.c(f.args)}")
                plan.same(f"{n}.keywords", f.keywords)
                plan.mapping(f.keywords)
            for i, a in enumerate(f.args):
                self.walk(a, f"{path}.args[{i}]" if paths is not None else "", depth)
            for k, a in f.keywords.items():
                self.walk(a, f"{path}.{k}" if paths is not None else "", depth)
            f = f.func
        if type(f) is not types.FunctionType:  # (a plain function has no __self__: most steps, most globals)
            if isinstance(f, _Module):
                self.module(f, path, depth)
                return
            obj = getattr(f, "__self__", None)
            if obj is not None and type(f) is types.MethodType:
                self.walk(obj, f"{path}.__self__" if paths is not None else "", depth)
                f = f.__func__
            elif obj is not None and not isinstance(obj, (type, types.ModuleType)):
                self.walk(obj, f"{path}.__self__" if paths is not None else "", depth)  # (a bound builtin)
        code = getattr(f, "__code__", None)
        # (its code by identity too: ``f.__code__ = ...`` makes another function of the same object)
        self._emit(("fn", id(f), id(code)), path)
        if paths is not None and code is not None:
            self.kept.append(code)
        plan = self._plan
        if plan is not None:
            n = plan.c(f)
            plan.same(f"{n}.__code__" if type(f) is types.FunctionType else f"getattr({n}, '__code__', None)", code)
        if code is None or depth <= 0 or not _user_file(code.co_filename):
            if code is None and hasattr(f, "__dict__") and not isinstance(f, type) and _user_class(type(f)):
                self._object(f, type(f), path, depth)  # (a callable object of the user's)
            return
        for name, cell in zip(code.co_freevars, f.__closure__ or ()):
            v = _cell(cell)
            if plan is not None:  # (an emptied cell raises: the check fails, the walk decides)
                plan.same(f"_cell({plan.c(cell)})" if v is _MISSING else f"{plan.c(cell)}.cell_contents", v)
            self.walk(v, (name if path == "fn" else f"{path}.{name}") if paths is not None else "", depth)
        if plan is not None:
            fn = plan.c(f)
            plan.same(f"{fn}.__defaults__", f.__defaults__)
            plan.same(f"{fn}.__kwdefaults__", f.__kwdefaults__)
            plan.same(f"{fn}.__dict__", f.__dict__)
            if not f.__dict__:
                plan.need(f"not {plan.c(f.__dict__)}")
            if f.__kwdefaults__ is not None and not f.__kwdefaults__:
                plan.need(f"not {plan.c(f.__kwdefaults__)}")
        if f.__defaults__:
            self.walk(f.__defaults__, f"{path}.__defaults__" if paths is not None else "", depth)  # (fn.__defaults__)
        if f.__kwdefaults__:
            self.walk(f.__kwdefaults__, f"{path}.__kwdefaults__" if paths is not None else "", depth)
        if f.__dict__:  # (``step.scale = 0.5``: an attribute of the function itself)
            self.walk(f.__dict__, f"{path}.__dict__" if paths is not None else "", depth)
        self._globals_of(f, path, depth)

    def _globals_of(self, f: Any, path: str, depth: int) -> None:
        glb = f.__globals__
        paths = self.paths
        plan = self._plan
        for name in _global_names(f.__code__):
            v = glb.get(name, _MISSING)
            if plan is not None:  # (a name not there is checked too: a global defined later)
                plan.get(glb, name, v)
            if v is _MISSING:
                continue
            self._global(v, name if paths is not None else "", depth - 1)
            if type(v) is types.ModuleType and not _user_module(v):
                self._library_reads(v, name, _attribute_chains(f.__code__).get(name, ()))
            elif type(v) is types.ModuleType:
                # ``import settings`` then ``settings.scale``: the attributes the code names
                d = v.__dict__
                for attr in _attribute_names(f.__code__):
                    x = d.get(attr, _MISSING)
                    if plan is not None:
                        plan.get(d, attr, x)
                    if x is not _MISSING:
                        self._global(x, f"{name}.{attr}" if paths is not None else "", depth - 1)

    def _library_reads(self, m: types.ModuleType, name: str, chains: tuple[tuple[str, ...], ...]) -> None:
        """What the step reads of a library module (``F.gelu``, ``tga.nn.functional.gelu``), by
        identity, down each chain while it names modules: a function swapped in a library's
        namespace (``F.gelu = F.relu``) is a new key, as eager would call the new one."""
        plan, paths = self._plan, self.paths
        for chain in chains:
            obj = m
            for depth, attr in enumerate(chain):
                d = obj.__dict__
                x = d.get(attr, _MISSING)
                if plan is not None:
                    plan.get(d, attr, x)
                self._emit(("lib", id(x)), ".".join((name, *chain[: depth + 1])) if paths is not None else "")
                if type(x) is not types.ModuleType:
                    break
                obj = x

    def _global(self, v: Any, path: str, depth: int) -> None:
        """A global (or a user module's attribute): functions and Python modules directly, the
        most common globals, a walk's dispatch fewer each."""
        t = type(v)
        if t is types.FunctionType or t is functools.partial:
            k = id(v)
            at = self._seen.get(k)
            if at is not None:
                self._emit(("seen", at), path)
                return
            self._seen[k] = len(self.out)
            self.function(v, path, depth)
        elif t is types.ModuleType:
            self._emit((t, id(v)), path)
        else:
            self.walk(v, path, depth)
