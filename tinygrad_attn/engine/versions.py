"""Version counters of arrays changed in place, and the check a backward step makes.

Every array's memory has a version, counted per memory root (the array that owns the
memory), so views and detached tensors share it with no cost to ordinary ops: it exists
only once something was changed in place. A backward step checks the arrays it reads
only when its node is older than the latest in-place change anywhere.

An optimizer keeps a param group's parameters as views of one flat array: there the flat
array is not the root, each parameter's part is (:func:`own_versions`), so writing one
parameter in place leaves graphs that saved another alone, as PyTorch's separate tensors.
"""

from __future__ import annotations

import bisect
import functools
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from . import function as _function
from .function import FreedArray, Function, _next_seq

if TYPE_CHECKING:
    from .._tensor import Tensor

_MAX_RECENT = 64


class _Version:
    """How many in-place changes a memory root has had, and the creation order (``seq``)
    of the latest ones, so a node knows the version it saw."""

    __slots__ = ("count", "recent")

    def __init__(self) -> None:
        self.count = 0
        self.recent: list[int] = []

    def at(self, seq: int) -> int:
        """The version before anything made after ``seq`` (at least; the newest 64 are known)."""
        return self.count - sum(1 for s in self.recent if s > seq)


_versions: dict[int, tuple[_Version, Any]] = {}  # id(memory root) -> (version, weakref to the root)
_last_change = 0  # seq of the latest in-place change in the process
_rebased = False  # whether an in-place op has rebased a tensor's history yet
# The seq of the latest recorded in-place change (0: none yet). A view recorded after it
# cannot show values its node does not know of, so ``Function.apply`` looks no further
# (it reads its own copy, function._last_rebase, written with this one).
_last_rebase = 0
# Registered by tinygrad_attn.inplace (register_detached_history): for an input ``t`` of the
# node ``fn`` (its input ``i``) that no longer requires grad, the tensor holding the history
# ``t`` had when ``fn`` read it, if ``t`` was detached in place (``detach_()``) since; else None.
detached_history: Callable[[Any, Function, int], Any] | None = None


def _memory_root(arr: Any) -> Any:
    x = a = getattr(arr, "_array", arr)  # array_api_strict wraps a NumPy array
    while True:
        b = getattr(a, "base", None)
        if b is None:
            break
        a = b
    if _parts and a is not x and (parts := _parts.get(id(a))) is not None:
        return parts.part_of(x, a)
    return a


class _Part:
    """The memory of one part of a partitioned array (see :func:`own_versions`): the memory
    root of the part and of the views of it, holding their version itself."""

    __slots__ = ("version",)

    def __init__(self, version: _Version | None) -> None:
        self.version = version


class _Partition:
    """The parts of one array that count their versions apart, by the addresses they span."""

    __slots__ = ("starts", "ends", "parts")

    def __init__(self, starts: list[int], ends: list[int], parts: list[_Part]) -> None:
        self.starts, self.ends, self.parts = starts, ends, parts  # (starts ascending)

    def part_of(self, x: Any, root: Any) -> Any:
        """The part that the view ``x`` of the partitioned ``root`` shows (every element of a
        view of one part lies in that part), or ``root`` for a view of no single part."""
        if not x.size:
            return root
        at = _address(x)
        i = bisect.bisect_right(self.starts, at) - 1
        return self.parts[i] if i >= 0 and at < self.ends[i] else root


# id(memory root) -> its parts (see own_versions), forgotten with the root
_parts: dict[int, _Partition] = {}


def _address(x: Any) -> int:
    """Where the first element of ``x`` (a NumPy or CuPy array) lies in memory."""
    iface = getattr(x, "__array_interface__", None)
    if iface is None:
        iface = x.__cuda_array_interface__
    return iface["data"][0]


def own_versions(flat: Any, ranges: list[tuple[int, int]], before: list[Any] | None = None,
                 changes: int = 0) -> list[Any]:  # fmt: skip
    """The parts ``flat[a:b]`` (``ranges``, disjoint, ascending) of the 1-D array ``flat``,
    such as the parameters an optimizer keeps in one flat array, each count their in-place
    changes apart, as tensors of their own: ``flat`` is not their version root. Views of a
    part share its version (NumPy gives a view of a view the owner as its base, so a view
    finds its part by the memory it shows). Returns the parts' memory roots.

    ``before[i]``: an array whose values part ``i`` takes over as a tensor's memory (an
    optimizer's step gives a parameter new memory), or the root a previous call returned
    for it: part ``i`` continues its version, which then counts ``changes`` in-place changes
    (PyTorch's in-place step bumps each parameter's version), seen by any graph that saved
    the old memory.
    """
    global _last_change
    root = _memory_root(flat)
    key = id(root)
    x = getattr(flat, "_array", flat)
    at, size = (_address(x), x.itemsize) if x.size else (0, 0)
    seq = _next_seq() if changes else 0  # (one change of them all: a graph's node is before or after it)
    stamp = (seq,) * changes
    tokens = []
    for i in range(len(ranges)):
        v = None
        if before is not None:
            old = before[i]
            old = old if old.__class__ is _Part else _memory_root(old)
            v = old.version if old.__class__ is _Part else _version_entry(old)[0]
            if v is None:  # (counted from now on: a graph that saved the old memory sees later changes)
                v = old.version = _Version()
        if changes:
            if v is None:
                v = _Version()
            v.count += changes
            recent = v.recent
            recent.extend(stamp)
            if len(recent) > _MAX_RECENT:
                del recent[:-_MAX_RECENT]
        tokens.append(_Part(v))
    if changes:
        _last_change = seq
    _parts[key] = _Partition([at + a * size for a, _ in ranges], [at + b * size for _, b in ranges], tokens)
    try:
        weakref.finalize(root, _parts.pop, key, None)
    except TypeError:  # (memory without weak references: kept, as versions are)
        pass
    return tokens


def continue_version(new: Any, old: Any, changes: int = 0) -> None:
    """``new`` replaces ``old`` as a tensor's memory (as an optimizer's step gives a parameter
    new memory): it continues ``old``'s version, which then counts ``changes`` in-place changes."""
    new_root, old_root = _memory_root(new), _memory_root(old)
    if new_root is not old_root:
        v = old_root.version if old_root.__class__ is _Part else _version_entry(old_root)[0]
        if v is None:
            v = old_root.version = _Version()
        if new_root.__class__ is _Part:
            new_root.version = v
        else:
            _versions[id(new_root)] = (v, _ref(new_root, id(new_root)))
    if changes:
        _bump_root(new_root, changes)


def version_of(arr: Any) -> _Version | None:
    """The version of ``arr``'s memory; None while it was never changed in place."""
    root = _memory_root(arr)
    if root.__class__ is _Part:
        return root.version
    entry = _versions.get(id(root))
    return entry[0] if entry is not None else None


def changed_since(arr: Any, seq: int) -> bool:
    """Whether ``arr``'s memory was changed in place after the op made at ``seq`` ran."""
    v = version_of(arr)
    return v is not None and bool(v.recent) and v.recent[-1] > seq


def bump_version(arr: Any) -> None:
    """Record an in-place change of ``arr``'s memory."""
    _bump_root(_memory_root(arr))


def _ref(root: Any, key: int) -> Any:
    try:
        return weakref.ref(root, functools.partial(_forget_version, key))
    except TypeError:  # memory owned by an object without weak references (bytes): kept
        return None


def _version_entry(root: Any) -> tuple[_Version, Any]:
    """The (version, weak reference) of a root that is an array, made if it has none yet."""
    key = id(root)
    entry = _versions.get(key)
    if entry is None:
        entry = _versions[key] = (_Version(), _ref(root, key))
    return entry


def _bump_root(root: Any, n: int = 1) -> None:
    global _last_change
    if root.__class__ is _Part:
        v = root.version
        if v is None:
            v = root.version = _Version()
    else:
        v = _version_entry(root)[0]
    seq = _next_seq()
    v.count += n
    v.recent.extend((seq,) * n)
    if len(v.recent) > _MAX_RECENT:
        del v.recent[:-_MAX_RECENT]
    _last_change = seq


def _forget_version(key: int, ref: Any) -> None:
    entry = _versions.get(key)
    if entry is not None and entry[1] is ref:
        del _versions[key]


def note_rebase(seq: int) -> None:
    """Record that a tensor's history was rebased by the change made at ``seq``."""
    global _rebased, _last_rebase
    _rebased = True
    _last_rebase = _function._last_rebase = seq


def register_detached_history(find: Callable[[Any, Function, int], Any]) -> None:
    """Called once by ``tinygrad_attn.inplace``: how the backward pass finds the history of
    an input detached in place after its consumer read it (see :data:`detached_history`)."""
    global detached_history
    detached_history = find


def _check_versions(fn: Function, t: Tensor) -> None:
    """Raise if an array ``fn``'s backward reads was changed in place after ``fn`` ran
    (what it reads: its declaration, ``reads_values``, ``keeps_input`` and ``reads_output``)."""
    if not fn.reads_values:
        return
    inputs = fn.inputs
    for i, a in enumerate(fn.saved):
        if a is None or not isinstance(inputs[i], _function.Tensor) or not fn.keeps_input(i):
            continue
        _check_version(fn, a, f"input {i}")
    if fn.reads_output and t._data.__class__ is not FreedArray:
        _check_version(fn, t._data, "output")


def _check_version(fn: Function, arr: Any, what: str) -> None:
    v = version_of(arr)
    if v is None or not v.recent or v.recent[-1] < fn.seq:
        return
    raise RuntimeError(
        f"backward: '{fn.op_name}' needs its {what} of shape {tuple(arr.shape)}, which an in-place op "
        f"changed after the forward: it was saved at version {v.at(fn.seq)} and is now at version "
        f"{v.count}. Change a copy instead (x.clone()), or change it after the backward."
    )


def as_seen_by(t: Tensor, seq: int) -> Tensor:
    """The tensor as the op made at ``seq`` saw it: before the in-place changes since
    (each in-place change left a node that ``rebases``, holding the tensor before it)."""
    c = t._ctx
    while c is not None and c.rebases and c.seq > seq:
        t = c.previous
        c = t._ctx
    return t
