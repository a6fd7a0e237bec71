"""What a recorded op keeps for its backward, seen from outside: PyTorch's saved-tensor hooks
(``torch.autograd.graph.saved_tensors_hooks``) and the per-node state a user may attach to
a graph node (``metadata``, ``register_hook``, ``register_prehook``).

An op keeps its inputs' arrays in ``fn.saved`` and reads its output's (see
``Function.keep``, ``keeps_input``, ``reads_output``): that is the one place where the engine
saves for backward. While a pair of hooks is set, ``Function.apply`` hands each tensor it
keeps to :func:`pack_node` (the pack hook runs then, as PyTorch's does when an op saves a
tensor), and the backward pass reads them back through :func:`unpacked` (the unpack hook).
Nodes with such state are rare: :data:`in_use` tells the backward pass to look for it
(while it is False, each step costs what it did).
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable
from typing import Any


class _Stack(threading.local):
    """Each thread's hooks, innermost last (PyTorch's are per thread too), and the messages of
    ``disable_saved_tensors_hooks`` in force."""

    def __init__(self) -> None:
        self.hooks: list[tuple[Callable[[Any], Any], Callable[[Any], Any]]] = []
        self.disabled: list[str] = []


_stack = _Stack()
#: How many pairs of hooks are set, in all threads: while none is, an op asks nothing more.
packing = 0
#: Whether any node ever held hooks or packed tensors: the backward pass then takes each step
#: through its checked path, which runs them.
in_use = False
_lock = threading.Lock()


def push_hooks(pack: Callable[[Any], Any], unpack: Callable[[Any], Any]) -> None:
    """Set ``pack``/``unpack`` for the ops this thread records until :func:`pop_hooks`."""
    global packing, in_use
    if _stack.disabled:
        raise RuntimeError(_stack.disabled[-1])
    _stack.hooks.append((pack, unpack))
    with _lock:
        packing += 1
        in_use = True


def pop_hooks() -> None:
    global packing
    _stack.hooks.pop()
    with _lock:
        packing -= 1


def disable(message: str) -> None:
    """Refuse saved-tensor hooks with ``message`` (as a RuntimeError) until :func:`enable`."""
    if _stack.hooks:
        raise RuntimeError(message)
    _stack.disabled.append(message)


def enable() -> None:
    _stack.disabled.pop()


def current_hooks() -> tuple[Callable[[Any], Any], Callable[[Any], Any]] | None:
    return _stack.hooks[-1] if _stack.hooks else None


class NodeState:
    """What a user attached to one graph node: ``metadata``, hooks, and the packed forms of
    the tensors it saved while saved-tensor hooks were set."""

    __slots__ = ("metadata", "pre_hooks", "post_hooks", "packed", "packed_out", "unpack")

    def __init__(self) -> None:
        self.metadata: dict = {}
        self.pre_hooks: dict = {}
        self.post_hooks: dict = {}
        self.packed: dict[int, Any] | None = None  # input position -> what pack returned
        self.packed_out: Any = _NOTHING
        self.unpack: Callable[[Any], Any] | None = None


_NOTHING = object()


class HookHandle:
    """What a node's ``register_hook``/``register_prehook`` returns, as PyTorch's
    ``RemovableHandle``: ``remove()`` takes the hook away (a ``with`` block removes it at its end)."""

    _next_id = itertools.count()

    def __init__(self, hooks: dict) -> None:
        self.hooks, self.id = hooks, next(HookHandle._next_id)

    def remove(self) -> None:
        self.hooks.pop(self.id, None)

    def __enter__(self) -> HookHandle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.remove()


def state_of(fn: Any, make: bool = True) -> NodeState | None:
    """``fn``'s :class:`NodeState` (made on first use when ``make``)."""
    global in_use
    st = getattr(fn, "_state", None)
    if st is None and make:
        st = fn._state = NodeState()
        in_use = True
    return st


def pack_one(pack: Callable[[Any], Any], t: Any) -> Any:
    before = t._version
    packed = pack(t)
    if t._version != before:
        raise RuntimeError(
            "A saved tensor pack hook is modifying its input in place. Tensors provided as input to pack hook cannot "
            "be modified by in-place operations as this can lead to unexpected side-effects. Please open an issue if "
            "you need to perform in-place operations on the input to a pack hook."
        )
    return packed


def pack_node(fn: Any, inputs: Any, out: Any) -> None:
    """Called by ``Function.apply`` for each op it records while this thread has hooks set:
    pack each tensor ``fn``'s backward reads (the inputs it keeps, then its output)."""
    hooks = current_hooks()
    if hooks is None:
        return
    pack, unpack = hooks
    T = out.__class__  # (the Tensor class: this module imports nothing of the engine)
    packed: dict[int, Any] = {}
    if fn.reads_values:
        for i, t in enumerate(inputs):
            if t.__class__ is T and fn.keeps_input(i):
                packed[i] = pack_one(pack, t)
    packed_out = pack_one(pack, out) if fn.reads_output and fn.reads_values else _NOTHING
    if not packed and packed_out is _NOTHING:
        return
    st = state_of(fn)
    st.packed, st.packed_out, st.unpack = packed, packed_out, unpack


def unpack_one(unpack: Callable[[Any], Any], packed: Any, tensor_class: type) -> Any:
    """What ``unpack`` gives back for ``packed``, which must be a tensor."""
    t = unpack(packed)
    if not isinstance(t, tensor_class):
        raise TypeError(
            f"Output of saved tensor unpack_hook expected to be a Tensor but got result of type {type(t).__name__}"
        )
    return t


def has_packed(st: NodeState | None) -> bool:
    return st is not None and (st.packed is not None)


def unpacked(fn: Any, st: NodeState, saved: list, out: Any, tensors: bool, T: type) -> tuple[list, Any]:
    """``fn``'s saved values and output as its backward reads them, each packed one through
    the unpack hook: arrays, or (``tensors``, a ``create_graph`` pass) tensors that keep the
    saved tensor's place in the graph, as PyTorch's unpacked tensors do."""
    unpack = st.unpack
    saved = list(saved)
    for i, p in (st.packed or {}).items():
        u = unpack_one(unpack, p, T)
        saved[i] = _in_place_of(fn.inputs[i], u) if tensors else u._data
    if st.packed_out is not _NOTHING:
        u = unpack_one(unpack, st.packed_out, T)
        out = _in_place_of(out, u) if tensors else u._data
    return saved, out


def _in_place_of(orig: Any, u: Any) -> Any:
    """``u``'s values where ``orig`` stands in the graph (a gradient through it reaches ``orig``)."""
    if u is orig or u._data is orig._data or not orig.requires_grad:
        return orig if (u is orig or u._data is orig._data) else u.detach()
    return orig + (u.detach() - orig.detach())


def release(fn: Any) -> None:
    """Drop what ``fn`` packed (its backward ran and the graph is not retained)."""
    st = getattr(fn, "_state", None)
    if st is not None:
        st.packed, st.packed_out, st.unpack = None, _NOTHING, None
