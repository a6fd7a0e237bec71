"""Version counters of arrays changed in place, and the check a backward step makes.

Every array's memory has a version, counted per memory root (the array that owns the
memory), so views and detached tensors share it with no cost to ordinary ops: it exists
only once something was changed in place. A backward step checks the arrays it reads
only when its node is older than the latest in-place change anywhere.
"""

from __future__ import annotations

import functools
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from . import function as _function
from .function import FreedArray, Function, _next_seq

if TYPE_CHECKING:
    from ..tensors._tensor import Tensor

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
# Registered by tinygrad_attn.tensors.mutation.inplace (register_detached_history): for an input ``t`` of the
# node ``fn`` (its input ``i``) that no longer requires grad, the tensor holding the history
# ``t`` had when ``fn`` read it, if ``t`` was detached in place (``detach_()``) since; else None.
detached_history: Callable[[Any, Function, int], Any] | None = None


def _memory_root(arr: Any) -> Any:
    a = getattr(arr, "_array", arr)  # array_api_strict wraps a NumPy array
    while True:
        b = getattr(a, "base", None)
        if b is None:
            return a
        a = b


_shared_with_numpy: dict[int, Any] = {}  # id(memory root) -> weakref to the root


def share_with_numpy(arr: Any) -> None:
    """Note that ``arr``'s memory is shared with NumPy (``numpy()``, ``np.asarray(t)``,
    ``from_numpy``): as PyTorch's storage then, it cannot grow (``resize_``), since the NumPy
    array would no longer show the tensor."""
    root = _memory_root(arr)
    key = id(root)
    if key not in _shared_with_numpy:
        try:
            _shared_with_numpy[key] = weakref.ref(root, lambda _, k=key: _shared_with_numpy.pop(k, None))
        except TypeError:  # (an array that takes no weak reference: nothing to note)
            pass


def shared_with_numpy(arr: Any) -> bool:
    """Whether ``arr``'s memory was shared with NumPy (:func:`share_with_numpy`)."""
    root = _memory_root(arr)
    ref = _shared_with_numpy.get(id(root))
    return ref is not None and ref() is root


def continue_version(new: Any, old: Any, changes: int = 0) -> None:
    """``new`` replaces ``old`` as a tensor's memory (where an optimizer cannot write a
    parameter in place): it continues ``old``'s version, which then counts ``changes``
    in-place changes."""
    new_root, old_root = _memory_root(new), _memory_root(old)
    if new_root is not old_root:
        v = _version_entry(old_root)[0]
        _versions[id(new_root)] = (v, _ref(new_root, id(new_root)))
    if changes:
        _bump_root(new_root, changes)


def version_of(arr: Any) -> _Version | None:
    """The version of ``arr``'s memory; None while it was never changed in place."""
    entry = _versions.get(id(_memory_root(arr)))
    return entry[0] if entry is not None else None


def changed_since(arr: Any, seq: int) -> bool:
    """Whether ``arr``'s memory was changed in place after the op made at ``seq`` ran."""
    v = version_of(arr)
    return v is not None and bool(v.recent) and v.recent[-1] > seq


def bump_version(arr: Any, n: int = 1) -> None:
    """Record ``n`` in-place changes of ``arr``'s memory."""
    _bump_root(_memory_root(arr), n)


def bump_versions(arrays: list[Any], n: int = 1) -> None:
    """Record ``n`` in-place changes of each array's memory, made together (as an optimizer's
    step writes its parameters): one point in the order of ops, which a graph's node is
    before or after."""
    global _last_change
    seq = _next_seq()
    for arr in arrays:
        _count(_version_entry(_memory_root(arr))[0], n, seq)
    _last_change = seq


def bump_roots(roots: list[Any], n: int = 1) -> None:
    """:func:`bump_versions` of arrays given by their memory roots (``_memory_root``), which a
    caller that writes the same arrays at every step (an optimizer) finds once."""
    global _last_change
    seq = _next_seq()
    for root in roots:
        entry = _versions.get(id(root))
        v = (entry if entry is not None else _version_entry(root))[0]
        v.count += n
        recent = v.recent
        if n == 1:
            recent.append(seq)
        else:
            recent.extend((seq,) * n)
        if len(recent) > _MAX_RECENT:
            del recent[:-_MAX_RECENT]
    _last_change = seq


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
    seq = _next_seq()
    _count(_version_entry(root)[0], n, seq)
    _last_change = seq


def _count(v: _Version, n: int, seq: int) -> None:
    v.count += n
    recent = v.recent
    recent.extend((seq,) * n)
    if len(recent) > _MAX_RECENT:
        del recent[:-_MAX_RECENT]


def _forget_version(key: int, ref: Any) -> None:
    entry = _versions.get(key)
    if entry is not None and entry[1] is ref:
        del _versions[key]


def register_detached_history(find: Callable[[Any, Function, int], Any]) -> None:
    """Called once by ``tinygrad_attn.tensors.mutation.inplace``: how the backward pass finds the history of
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
