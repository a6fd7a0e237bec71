"""``tga.compile``: trace a function on its first call, replay it on later ones.

A replay happens only when running ``fn`` eagerly would do exactly the same. Before each
call the cache computes a key from two things:

- the arguments' *structure*: tensors (at any depth of dicts, lists and tuples, and NumPy
  arrays, which become tensors) by shape, dtype, device and ``requires_grad``; every
  other value by its value (``id`` only for objects that cannot be hashed);
- the *guards*: the Python state a trace reads and bakes in. For each module ``fn``
  reaches (its ``self``, closure, globals): every submodule's ``training`` flag and plain
  attributes (numbers, strings), which Parameter objects it holds and their
  ``requires_grad``; for each optimizer: its param groups (which parameters) and
  the structural settings of each group (whether weight decay or momentum is on, amsgrad,
  nesterov); the numbers and tensors (by identity) in ``fn``'s closure and globals.

The values a schedule changes (learning rate, betas, momentum, eps, weight decay) are not
guarded: the program reads them at each replay. A changed guard traces again; past
``cache_limit`` programs a warning names what keeps changing and ``fn`` runs eagerly.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable
from typing import Any

from .._tensor import Tensor
from ..engine.switches import _State
from .program import Program
from .trace import expand, reachable, trace_with_result

#: Optimizer settings read by the program at each replay: only whether each is zero is guarded
#: (it decides which ops the update has).
LIVE_HYPERPARAMETERS = frozenset({"lr", "betas", "momentum", "eps", "weight_decay", "dampening"})

_PLAIN = (int, float, bool, str, bytes, type(None), complex)


class _Flat:
    """An argument structure with its tensors taken out: ``key`` says the structure."""

    def __init__(self) -> None:
        self.tensors: list[Tensor] = []
        self.key: list[Any] = []
        self._pos: dict[int, int] = {}  # id(tensor) -> its position: a tensor passed twice is one input

    def walk(self, a: Any) -> Any:
        """``a`` with each tensor replaced by its position in ``tensors`` (a ``_Leaf``)."""
        if isinstance(a, Tensor):
            j = self._pos.get(id(a))
            if j is not None:  # the same tensor again: so must it be at a replay
                self.key.append(("same", j))
                return _Leaf(j)
            self._pos[id(a)] = len(self.tensors)
            self.key.append(("tensor", a._data.shape, str(a.dtype), a.device, a.requires_grad))
            self.tensors.append(a)
            return _Leaf(len(self.tensors) - 1)
        if hasattr(a, "__array_interface__") and hasattr(a, "shape") and hasattr(a, "dtype"):
            # A host array is an input like a tensor, keyed by shape and dtype: never by contents.
            t = Tensor(a)
            self.key.append(("array", a.shape, str(a.dtype)))
            self.tensors.append(t)
            return _Leaf(len(self.tensors) - 1)
        if isinstance(a, (list, tuple)):
            self.key.append((type(a), len(a)))
            return type(a)(self.walk(v) for v in a) if type(a) in (list, tuple) else type(a)(*(self.walk(v) for v in a))
        if isinstance(a, dict):
            self.key.append((type(a), tuple(a)))
            return {k: self.walk(v) for k, v in a.items()}
        try:
            hash(a)
        except TypeError:
            self.key.append(("object", id(a)))
        else:
            self.key.append(("value", type(a), a))
        return a


class _Leaf:
    __slots__ = ("i",)

    def __init__(self, i: int) -> None:
        self.i = i


def _rebuild(s: Any, tensors: Any) -> Any:
    if isinstance(s, _Leaf):
        return tensors[s.i]
    if isinstance(s, (list, tuple)):
        items = [_rebuild(v, tensors) for v in s]
        return type(s)(items) if type(s) in (list, tuple) else type(s)(*items)
    if isinstance(s, dict):
        return {k: _rebuild(v, tensors) for k, v in s.items()}
    return s


_PLAIN_TYPES = frozenset(_PLAIN) | {tuple}


def _plain(v: Any) -> bool:
    return isinstance(v, _PLAIN) or (isinstance(v, tuple) and all(isinstance(x, _PLAIN) for x in v))


def guards(fn: Callable[..., Any], args: Any = ()) -> dict[str, Any]:
    """The Python state ``fn``'s trace would bake in, as ``{what: value}`` (see the module
    docstring); two calls with equal guards trace the same program. ``args``: the call's
    arguments, whose modules, optimizers and objects (``self`` of a method) count too."""
    from ..nn.module import Module  # noqa: PLC0415
    from ..optim.optimizer import Optimizer  # noqa: PLC0415

    out: dict[str, Any] = {}
    seen: set[int] = set()
    reach = reachable(fn)
    objects = {f"arg{i}": a for i, a in enumerate(args) if not isinstance(a, (Tensor, list, tuple, dict, *_PLAIN))}
    if objects:
        reach.update(expand(objects))
    for name, v in reach.items():
        if isinstance(v, Module):
            for mname, m in v.named_modules(name):
                if id(m) in seen:
                    continue
                seen.add(id(m))
                # One entry per module (its name is what a cache-limit warning shows): its flag,
                # plain attributes, parameters (identity, requires_grad) and buffers (identity).
                out[mname or name] = (
                    m.training,
                    tuple([(k, a) for k, a in m.__dict__.items() if type(a) in _PLAIN_TYPES and k[0] != "_"]),
                    tuple([(id(p), p is not None and p.requires_grad) for p in m._parameters.values()]),
                    tuple([id(b) for b in m._buffers.values()]),
                )
        elif isinstance(v, Optimizer):
            if id(v) in seen:
                continue
            seen.add(id(v))
            for gi, group in enumerate(v.param_groups):
                out[f"{name}.param_groups[{gi}].params"] = tuple((id(p), p.requires_grad) for p in group["params"])
                for k, h in group.items():
                    if k == "params":
                        continue
                    if k in LIVE_HYPERPARAMETERS:  # read live: only zero or not decides the program
                        h = tuple(float(x) != 0.0 for x in h) if isinstance(h, tuple) else float(h) != 0.0
                    out[f"{name}.param_groups[{gi}].{k}"] = h if _plain(h) else id(h)
        elif isinstance(v, Tensor):
            out[name] = (id(v), v.requires_grad, v._data.shape, str(v.dtype))
        elif isinstance(v, _PLAIN) and not isinstance(v, type):
            out[name] = v
    return out


class Compiled:
    """``fn`` with a cache of traced programs; call it as ``fn``."""

    def __init__(self, fn: Callable[..., Any], cache_limit: int = 8) -> None:
        self.fn = fn
        self.cache_limit = cache_limit
        self.programs: dict[Any, Program | None] = {}  # None: a key this function runs eagerly for
        self._last_guards: dict[str, Any] | None = None
        self._changing: str | None = None
        self._eager = False  # past the cache limit
        self._warned = False  # about a container the step changes (once)
        functools.update_wrapper(self, fn)

    def __call__(self, *args: Any, **kw: Any) -> Any:
        if _State.tracer is not None or self._eager:
            # Inside another trace: inlined, its ops become the outer program's.
            return self.fn(*args, **kw)
        flat = _Flat()
        structure = flat.walk((args, kw))
        g = guards(self.fn, args)
        key = (tuple(flat.key), tuple(g.items()))
        try:
            hash(key)
        except TypeError:  # (an attribute tuple holding a list: compared by its text)
            key = repr(key)
        prog = self.programs.get(key, False)
        if prog is None:
            return self.fn(*args, **kw)
        if prog is False:
            return self._trace(key, g, structure, flat.tensors, args, kw)
        return prog(*flat.tensors)

    def _trace(self, key: Any, g: dict[str, Any], structure: Any, tensors: list[Tensor], args: Any, kw: Any) -> Any:
        if self._last_guards is not None:
            changed = [k for k in g if self._last_guards.get(k, g[k]) != g[k]]
            if changed:
                self._changing = changed[0]
        self._last_guards = g
        if len(self.programs) >= self.cache_limit:
            what = f"the guard '{self._changing}'" if self._changing else "the arguments' shapes or values"
            warnings.warn(
                f"compile({getattr(self.fn, '__name__', 'fn')}): {len(self.programs)} programs traced, the "
                f"cache_limit; {what} keeps changing. Running eagerly from now on.",
                RuntimeWarning,
                stacklevel=3,
            )
            self._eager = True
            return self.fn(*args, **kw)
        fn = self.fn

        def run(*ts: Any) -> Any:
            a, k = _rebuild(structure, ts)
            return fn(*a, **k)

        names = _flat_names(fn, structure, len(tensors))
        containers = _containers(fn, args)
        prog, result = trace_with_result(run, tensors, auto_backward=False, reach=fn, arg_names=names)
        # A result with a graph is for a backward() outside: a replay gives none, so this
        # key runs eagerly (the trace just did: its result has the graph).
        eager = not prog.did_backward and _has_graph(result)
        grown = [n for n, (c, size) in containers.items() if len(c) != size]
        after = guards(self.fn, args)
        grown += [k for k in g if after.get(k, g[k]) != g[k]]  # (model.train() inside the step: state it sets)
        if grown:  # a Python side effect a replay would not make: this key runs eagerly, correct
            eager = True
        if grown and not self._warned:
            self._warned = True
            warnings.warn(
                f"compile({getattr(self.fn, '__name__', 'fn')}): the step changes the Python state "
                f"'{grown[0]}' (an append to a container, an attribute, a training flag), which a replayed "
                "program would not do again; it runs eagerly. Make the change outside the compiled function.",
                RuntimeWarning,
                stacklevel=3,
            )
        self.programs[key] = None if eager else prog
        return result

    def __get__(self, obj: Any, objtype: Any = None) -> Any:
        # As a method decorator: ``self`` becomes the first argument (a constant of the key).
        return self if obj is None else functools.partial(self.__call__, obj)

    @property
    def program(self) -> Program | None:
        """The most recently traced program."""
        return next((p for p in reversed(self.programs.values()) if p is not None), None)


def _containers(fn: Callable[..., Any], args: Any) -> dict[str, tuple[Any, int]]:
    """The lists, dicts and sets ``fn`` reaches (and its arguments), with their lengths now."""
    reach = reachable(fn)
    reach.update({f"arg{i}": a for i, a in enumerate(args)})
    return {n: (c, len(c)) for n, c in reach.items() if isinstance(c, (list, dict, set))}


def _has_graph(result: Any) -> bool:
    if isinstance(result, Tensor):
        return result.requires_grad and result._ctx is not None
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
