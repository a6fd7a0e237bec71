"""``tga.compile``: trace a function on its first call, replay it on later ones.

A replay happens only when running ``fn`` eagerly would do exactly the same. Before each
call the cache computes a key from two things:

- the arguments' *structure*: tensors and NumPy arrays (at any depth of dicts, lists and
  tuples) by shape, dtype, device and ``requires_grad``, never by contents (they are the
  program's inputs); numbers and strings by type and value;
- the *guard* (:mod:`.guard`): a fingerprint of every Python value ``fn`` can reach (its
  closure, the globals it and the functions it calls name, modules to their last attribute,
  optimizers and their param groups, the other arguments), and the grad mode.

The guard first runs its check of the last walk's reads (``guard._Plan``) and returns the
last key itself when each read finds what the walk found; the call then replays the last
program without hashing the key. The values a schedule changes (learning rate, betas,
momentum, eps, weight decay) are only guarded as zero or not: the program reads them at each
replay. A changed key traces again;
past ``cache_limit`` programs a warning names what keeps changing and ``fn`` runs eagerly.
A step that changes reachable Python state itself (an append, a counter, a training flag),
or computes in Python with a NumPy argument's values (``np.mean(x)``), runs eagerly for
that key: a replay would not do it again.

NumPy arguments reach ``fn`` as NumPy arrays, eager or traced (see ``trace.ArgArray``).
"""

from __future__ import annotations

import functools
import logging
import random
import sys
from collections.abc import Callable
from typing import Any

import numpy as np

from ..engine.switches import _State
from ..engine.warn import warn as _user_warn
from ..tensors._tensor import Tensor
from .guard import LIVE_HYPERPARAMETERS, Guard  # noqa: F401 - (LIVE_HYPERPARAMETERS: re-exported)
from .program import Program, same_kind
from .trace import ArgArray, trace_with_result

_ARGS_HEAD = (tuple, 2)  # (the key of ``(args, kw)``'s outer tuple, as _Flat writes it)
_NO_KW = (dict, ())


class _Flat:
    """An argument structure with its tensors taken out: ``key`` says the structure, ``others``
    holds the values the guard writes down (modules, optimizers, objects, NumPy scalars)."""

    def __init__(self) -> None:
        self.tensors: list[Tensor] = []
        self.key: list[Any] = []
        self.others: list[tuple[str, Any]] = []
        self._pos: dict[int, int] = {}  # id(tensor) -> its position: a tensor passed twice is one input

    def walk(self, a: Any) -> Any:
        """``a`` with each tensor replaced by its position in ``tensors`` (a ``_Leaf``)."""
        t = type(a)
        if t is Tensor or isinstance(a, Tensor):
            j = self._pos.get(id(a))
            if j is not None:  # the same tensor again: so must it be at a replay
                self.key.append(("same", j))
                return _Leaf(j)
            self._pos[id(a)] = len(self.tensors)
            d = a._data
            self.key.append((d.shape, d.dtype, a._dev, a._requires_grad))
            self.tensors.append(a)
            return _Leaf(len(self.tensors) - 1)
        if t is np.ndarray:
            # A host array is an input like a tensor, keyed by shape and dtype: never by contents.
            # The step still gets the array (see trace.ArgArray).
            j = self._pos.get(id(a))
            if j is not None:
                self.key.append(("same", j))
                return _Leaf(j, True)
            self._pos[id(a)] = len(self.tensors)
            self.key.append(("array", a.shape, a.dtype, a.strides))
            self.tensors.append(Tensor._wrap(a, _CPU()))
            return _Leaf(len(self.tensors) - 1, True)
        if t is float:
            self.key.append((t, a if a == a else "nan"))
            return a
        if t is int or t is bool or t is str or a is None:
            self.key.append((t, a))
            return a
        if t is list or t is tuple:
            self.key.append((t, len(a)))
            return t([self.walk(v) for v in a])
        if t is dict:
            self.key.append((t, tuple(a)))
            return {k: self.walk(v) for k, v in a.items()}
        if isinstance(a, tuple) and hasattr(a, "_fields"):  # a named tuple
            self.key.append((t, len(a)))
            return t(*(self.walk(v) for v in a))
        self.others.append((f"argument value {len(self.others)} ({t.__name__})", a))
        return a


def _CPU() -> Any:
    from ..runtime.backend import get_device  # noqa: PLC0415

    return get_device("cpu")


class _Leaf:
    __slots__ = ("i", "array")

    def __init__(self, i: int, array: bool = False) -> None:
        self.i = i
        self.array = array


def _rebuild(s: Any, tensors: Any, arrays: bool = False) -> Any:
    """The arguments again, tensors from ``tensors``; NumPy arguments as the arrays they were
    (``arrays``: as :class:`~.trace.ArgArray` views, which a trace follows)."""
    if isinstance(s, _Leaf):
        t = tensors[s.i]
        if s.array:
            return ArgArray.of(t._data, s.i) if arrays else t._data
        return t
    if isinstance(s, (list, tuple)):
        return same_kind(s, [_rebuild(v, tensors, arrays) for v in s])
    if isinstance(s, dict):
        return {k: _rebuild(v, tensors, arrays) for k, v in s.items()}
    return s


class Compiled:
    """``fn`` with a cache of traced programs; call it as ``fn``."""

    def __init__(self, fn: Callable[..., Any], cache_limit: int = 8) -> None:
        self.fn = fn
        self.cache_limit = cache_limit
        self.programs: dict[Any, Program | None] = {}  # None: a key this function runs eagerly for
        self.guard = Guard()
        self._last: dict[str, Any] | None = None  # the described guard of the last traced call
        self._lastargs: tuple | None = None
        self._changing: str | None = None
        self._eager = False  # past the cache limit
        self._warned = False  # about Python state the step changes (once)
        self._kept: dict[Any, list[Any]] = {}  # per key, what its guard holds by identity
        self._hot: tuple = (None, None, None, -1)  # the last replay's guard key, argument key, program
        functools.update_wrapper(self, fn)

    def __call__(self, *args: Any, **kw: Any) -> Any:
        if _State.tracer is not None or self._eager:
            # Inside another trace: inlined, its ops become the outer program's.
            return self.fn(*args, **kw)
        if not kw:  # (the common call, tensors only: its key without walking a structure)
            tokens: list[Any] = [_ARGS_HEAD, (tuple, len(args))]
            for a in args:
                if a.__class__ is not Tensor:
                    break
                d = a._data
                tokens.append((d.shape, d.dtype, a._dev, a._requires_grad))
            else:
                if len(args) < 2 or len({id(a) for a in args}) == len(args):  # (a tensor passed twice: "same")
                    tokens.append(_NO_KW)
                    guard, tokens = self.guard.key(self.fn, ()), tuple(tokens)
                    hot = self._hot
                    # (the last call's program when the guard returned the very same key: no hash of it)
                    if guard is hot[0] and tokens == hot[1] and len(self.programs) == hot[3]:
                        return hot[2].replay(args)
                    key = (tokens, guard)
                    prog = self.programs.get(key, False)
                    if prog:
                        self._hot = (guard, tokens, prog, len(self.programs))
                        return prog.replay(args)
                    if prog is None:  # (a key this function runs eagerly for)
                        return self.fn(*args)
        flat = _Flat()
        structure = flat.walk((args, kw))
        key = (tuple(flat.key), self.guard.key(self.fn, flat.others))
        try:
            prog = self.programs.get(key, False)
        except TypeError:  # (an unhashable value written down: compared by its text)
            key = repr(key)
            prog = self.programs.get(key, False)
        if prog is None:
            return self.fn(*args, **kw)
        if prog is False:
            return self._trace(key, structure, flat, args, kw)
        return prog.replay(flat.tensors)

    def _trace(self, key: Any, structure: Any, flat: _Flat, args: Any, kw: Any) -> Any:
        now = self.guard.describe(self.fn, flat.others)
        # The objects the key holds by identity live as long as its program: a function or object
        # replaced at every call, freed, could otherwise give its id to the next one (same key).
        kept = self.guard.kept
        if self._last is not None:
            changed = [k for k, v in now.items() if self._last.get(k, v) != v] or [
                k for k in now if k not in self._last
            ]
            if changed:
                self._changing = changed[0]
            elif tuple(flat.key) != self._lastargs:
                self._changing = None
        self._last, self._lastargs = now, tuple(flat.key)
        if len(self.programs) >= self.cache_limit:
            what = f"'{self._changing}'" if self._changing else "the arguments' shapes or values"
            _user_warn(
                f"compile({getattr(self.fn, '__name__', 'fn')}): {len(self.programs)} programs traced, the "
                f"cache_limit; {what} keeps changing. Running eagerly from now on.",
                RuntimeWarning,
            )
            self._eager = True
            return self.fn(*args, **kw)
        fn = self.fn
        tensors = flat.tensors

        def run(*ts: Any) -> Any:
            a, k = _rebuild(structure, ts, arrays=True)
            return fn(*a, **k)

        names = _flat_names(fn, structure, len(tensors))
        streams = _host_streams()
        flags = [(t._requires_grad, t._data.shape, t._data.dtype) for t in tensors]
        with _WatchedOutput() as printed:
            prog, result = trace_with_result(run, tensors, auto_backward=False, reach=fn, arg_names=names,
                                             fallback=True)  # fmt: skip
        # A result with a graph is for a backward() outside: a replay gives none, so this
        # key runs eagerly (the trace just did: its result has the graph).
        eager = not prog.did_backward and _has_graph(result)
        after = self.guard.describe(self.fn, flat.others)
        # Python state the step changed (an append, an attribute, a training flag, a counter):
        # a replayed program would not change it again, so this key runs eagerly, correct.
        grown = [k for k, v in after.items() if now.get(k, v) != v] or [k for k in after if k not in now]
        if prog.host_reads:
            grown.append(prog.host_reads[0])
        if _host_streams() != streams:  # (a number drawn in Python: a replay would repeat it)
            grown.append("Python's or NumPy's global random numbers (random.random(), np.random.rand())")
        moved = [
            i for i, (t, f) in enumerate(zip(tensors, flags)) if (t._requires_grad, t._data.shape, t._data.dtype) != f
        ]
        if moved:  # (x.requires_grad_(), x.t_() inside the step: a replay would not do it to the next x)
            grown.append(f"requires_grad, shape or dtype of the argument {names[moved[0]]}")
        if printed.wrote:
            what = (
                printed.wrote if printed.wrote.startswith("a logging") else f"output to sys.{printed.wrote} (a print)"
            )
            grown.append(what)
        if grown:
            eager = True
        if grown and not self._warned:
            self._warned = True
            _user_warn(
                f"compile({getattr(self.fn, '__name__', 'fn')}): the step changes or reads the Python state "
                f"'{grown[0]}' (an append to a container, an attribute, a training flag, a NumPy computation on "
                "an argument, a random number drawn in Python, a print, an iterator advanced) in a way a replayed "
                "program would not repeat; it runs eagerly. Make the change outside the compiled function, or "
                "compute with tensors.",
                RuntimeWarning,
            )
        self.programs[key] = None if eager else prog
        self._hot = (None, None, None, -1)
        self._kept[key] = kept
        return _host_result(result)

    def __get__(self, obj: Any, objtype: Any = None) -> Any:
        # As a method decorator: ``self`` becomes the first argument (written down by the guard).
        return self if obj is None else functools.partial(self.__call__, obj)

    @property
    def program(self) -> Program | None:
        """The most recently traced program."""
        return next((p for p in reversed(self.programs.values()) if p is not None), None)


def _host_streams() -> tuple:
    """Where Python's and NumPy's global random streams stand: a step that draws from them
    changes this (compared around a trace only; ``tga.rand`` has its own stream, replayed)."""
    st = np.random.get_state()
    return random.getstate(), st[2], st[1].tobytes(), st[3], st[4]


class _WatchedOutput:
    """``sys.stdout`` and ``sys.stderr`` while a step is traced: what the step prints goes
    through, and ``wrote`` names the stream written to (a replay would print nothing)."""

    def __enter__(self) -> _WatchedOutput:
        self.wrote: str | None = None
        self._prev = sys.stdout, sys.stderr
        sys.stdout, sys.stderr = _Tee(sys.stdout, self, "stdout"), _Tee(sys.stderr, self, "stderr")
        # (a logging handler holds the stream it was made with: a record handled is output too)
        self._handle = handle = logging.Logger.handle

        def logged(logger: Any, record: Any) -> Any:
            if self.wrote is None:
                self.wrote = f"a logging record ({logger.name})"
            return handle(logger, record)

        self._logged = logged
        logging.Logger.handle = logged
        return self

    def __exit__(self, *exc: Any) -> None:
        # (only our own wrapper is taken away: another thread may have put its own since)
        if type(sys.stdout) is _Tee and sys.stdout._watch is self:
            sys.stdout = self._prev[0]
        if type(sys.stderr) is _Tee and sys.stderr._watch is self:
            sys.stderr = self._prev[1]
        if logging.Logger.handle is self._logged:
            logging.Logger.handle = self._handle
        self._logged = None  # (it holds this object: no cycle left for the collector)


class _Tee:
    def __init__(self, stream: Any, watch: _WatchedOutput, name: str) -> None:
        self._stream, self._watch, self._name = stream, watch, name

    def write(self, text: str) -> Any:
        if text and self._watch.wrote is None and not sys._getframe(1).f_code.co_filename.endswith("warnings.py"):
            self._watch.wrote = self._name  # (a warning is shown once per place by default, eager too)
        return self._stream.write(text)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def _host_result(result: Any) -> Any:
    """What the traced run returned, with the NumPy arguments it hands back as plain arrays."""
    if isinstance(result, ArgArray):
        return result.view(np.ndarray)
    if isinstance(result, (list, tuple)):
        return same_kind(result, [_host_result(r) for r in result])
    if type(result) is dict:
        return {k: _host_result(v) for k, v in result.items()}
    return result


def _has_graph(result: Any) -> bool:
    if isinstance(result, Tensor):
        return result._requires_grad and result._ctx is not None
    if isinstance(result, (list, tuple)):
        return any(_has_graph(r) for r in result)
    if isinstance(result, dict):
        return any(_has_graph(r) for r in result.values())
    return False


def _flat_names(fn: Callable[..., Any], structure: Any, n: int) -> list[str]:
    """A name per flattened tensor: the parameter's name, with the key or index below it."""
    from .trace import _arg_names  # noqa: PLC0415

    args, kw = structure
    names = [f"arg{i}" for i in range(n)]

    def walk(s: Any, name: str) -> None:
        if isinstance(s, _Leaf):
            names[s.i] = name
        elif isinstance(s, (list, tuple)):
            for j, v in enumerate(s):
                walk(v, f"{name}_{j}")
        elif isinstance(s, dict):
            for k, v in s.items():
                walk(v, f"{name}_{k}")

    for a, nm in zip(args, _arg_names(fn, len(args))):
        walk(a, nm)
    for k, v in kw.items():
        walk(v, str(k))
    walk = None  # (it calls itself through its closure: a cycle left to the collector at every trace)
    return names


def compile(fn: Callable[..., Any] | None = None, cache_limit: int = 8) -> Any:  # noqa: A001 - the API's name
    """Trace ``fn`` on its first call and replay the program on later calls that eager
    would run the same way (same argument structure, shapes, dtypes and devices, same
    guarded Python state; see :mod:`tinygrad_attn.symbolic.compile`). ``fn`` may be a
    whole training step (forward, ``backward()``, ``optimizer.step()``, ``zero_grad()``);
    replaying it updates the parameters and gradients as running ``fn`` would. At most
    ``cache_limit`` programs are kept; past that ``fn`` runs eagerly, with a warning.

    >>> @tga.compile  # doctest: +SKIP
    ... def step(x, y):
    ...     loss = F.cross_entropy(model(x), y)
    ...     opt.zero_grad(); loss.backward(); opt.step()
    ...     return loss
    """
    if fn is None:  # ``@tga.compile(cache_limit=4)``
        return functools.partial(Compiled, cache_limit=cache_limit)
    return Compiled(fn, cache_limit)
