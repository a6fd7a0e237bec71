"""In-place ops on tensors with a graph: rebasing a tensor's history, writing through views,
and replaying views taken before their base changed, as PyTorch records them.

``apply_inplace`` is the one in-place mechanism (every ``x.op_()``, ``x += y``, ``x[k] = v``
goes through it); :func:`_rebase` is the one place a tensor takes a new history whose node
(``ops.alias.InPlace``) keeps the old one as ``previous``. Version counters live in
``engine/versions.py``; this module registers :func:`_replay_view` with the engine, which
calls it before an op reads a view that may be stale, and :func:`_detached_history`, which
the backward pass asks for an input detached in place after its consumer read it.
``apply_restride`` is the one mechanism of the in-place metadata changes (``t_()``,
``squeeze_()``, ...: a ``ops.alias.Restride`` node), ``detach_inplace`` that of ``detach_()``,
``store_array`` that of the writes outside any graph (an optimizer's step, loading a state dict).
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from ... import ops
from ...engine import function as _function
from ...engine import versions as _versions
from ...engine.forward_grads import set_tangent, tangent_of
from ...engine.function import FreedArray, Function, _new, _next_seq, note_rebase
from ...engine.switches import _State, active_tracer, no_grad, refuse_inference_change
from ...engine.versions import _memory_root, as_seen_by, bump_version
from ...ops.alias import Copy, InPlace, Restride
from ..dtypes import can_cast, scalar_type_name

if TYPE_CHECKING:
    from .._tensor import Tensor


def _moved_history(t: Tensor) -> Tensor:
    """A new tensor object that takes over ``t``'s history (node, uses, array, name), so
    that ``t`` can take a new one: ops that used ``t`` so far used the values it had."""
    old = _new(_function.Tensor)
    old._data, old._dev, old.grad, old.name = t._data, t._dev, None, t.name
    old.requires_grad, old._ctx, old._uses = t.requires_grad, t._ctx, t._uses
    t._uses = 0  # the ops that used t so far used the old values: their uses move with them
    if (tangent := tangent_of(t)) is not None:  # (and a dual tensor's tangent: the old values')
        set_tangent(old, tangent)
    return old


def _rebase(t: Tensor, old: Tensor, result: Tensor, label: str) -> None:
    """``t`` becomes ``result`` through an :class:`InPlace` node whose ``previous`` is
    ``old`` (its history before), or a tensor without a graph where ``result`` has none."""
    if result.requires_grad:
        node = InPlace.apply(result, args=label)._ctx  # (made after the change: ordered after it)
        node.previous = old
        t._ctx, t._requires_grad = node, True
    else:  # (the result no longer depends on anything that requires grad)
        t._ctx, t._requires_grad = None, False


def _is_view(t: Tensor) -> bool:
    """Whether ``t`` shows memory of another tensor (a slice, reshape, permute, expand)."""
    if t._ctx is not None:
        v = _view_node(t)
        if v is None:
            return False
        bdata = v.inputs[0]._data  # (a reshape that could not view made a copy: not a view)
        return bdata.__class__ is FreedArray or _memory_root(t._data) is _memory_root(bdata)
    return _memory_root(t._data) is not getattr(t._data, "_array", t._data)


def _view_node(t: Tensor) -> Function | None:
    """The view op ``t`` shows its base through: its own node, or the view an InPlace node
    holds (``t`` was written through, or replayed); None where ``t`` is not a view."""
    c = t._ctx
    if c.rebases:
        c = c.inputs[0]._ctx
    return c if c is not None and c.view else None


def _replay_view(t: Tensor) -> None:
    """Give the view ``t`` the history of its base's current values, as PyTorch does.

    A view taken before its base was changed in place shows the new values (the same
    memory), while its node still leads to the old ones. Before an op uses it, the view
    op runs again on the base as it is now, and ``t`` becomes that result through an
    :class:`InPlace` node; ops that used ``t`` before still take their gradient to its
    old history (see :func:`_as_seen_by`). Called by ``Function.apply`` only for an input
    whose node (a view op, or InPlace) is older than the latest in-place change.
    """
    if not _State.grad_enabled:  # nothing is recorded: the old node harms no gradient
        return
    v = _view_node(t)
    if v is None:
        return
    base = v.inputs[0]
    bc = base._ctx
    if bc is not None and bc.seq < _function._last_rebase and (bc.view or bc.rebases):
        _replay_view(base)  # a view of a view: its base first
        bc = base._ctx
    if bc is None or not bc.rebases or bc.seq < v.seq:  # the base is as the view saw it
        return
    data, bdata = t._data, base._data
    if data.__class__ is FreedArray or bdata.__class__ is FreedArray:
        raise RuntimeError(
            f"{v.op_name}: this view (shape {tuple(t.shape)}) of a tensor of shape {tuple(base.shape)} was taken "
            "before its base was changed in place, and the values needed to tell whether it still shows that "
            "tensor's memory were freed; take the view after the change, or .clone() it before the change"
        )
    if _memory_root(data) is not _memory_root(bdata):  # a copy (a reshape that could not view): old values
        return
    fresh = v.__class__.apply(_before_restrides(base, v.seq), args=v.args)
    _rebase(t, _moved_history(t), fresh, f"{v.op_name} (replayed)")


def _before_restrides(base: Tensor, seq: int) -> Tensor:
    """``base`` in the layout it had at ``seq``: its metadata changes since (``t_()``,
    ``squeeze_()``, ...) undone, newest first (the values stay the current ones)."""
    c = base._ctx
    while c is not None and c.rebases and c.seq > seq:
        if isinstance(c, Restride):
            base = c.undo(base)
        c = c.previous._ctx
    return base


# The views made by one op that returns several (chunk, split, unbind), while gradients are
# recorded: PyTorch refuses to change them in place (id -> (weak reference, the op's name)).
_MULTI_OUTPUT_VIEWS: dict[int, tuple[Any, str]] = {}


def mark_multi_output_views(views: Sequence[Tensor], op: str) -> Sequence[Tensor]:
    """``views``, the outputs of ``op`` (``chunk``, ``split``, ``unbind``), marked so that an
    in-place change of one raises, as PyTorch's does, where they are recorded for gradients."""
    if _State.grad_enabled and views and views[0].requires_grad:
        for v in views:
            key = id(v)
            _MULTI_OUTPUT_VIEWS[key] = (weakref.ref(v, lambda _, key=key: _MULTI_OUTPUT_VIEWS.pop(key, None)), op)
    return views


def _refuse_multi_output_view(t: Tensor, name: str) -> None:
    entry = _MULTI_OUTPUT_VIEWS.get(id(t))
    if entry is not None and entry[0]() is t:
        raise RuntimeError(
            f"{name}: Output of {entry[1]} is a view and is being modified inplace. This view is the output of a "
            "function that returns multiple views. Such functions do not allow the output views to be modified "
            f"inplace. You should replace the inplace operation by an out-of-place one (shape {tuple(t.shape)})"
        )


def apply_inplace(t: Tensor, name: str, compute: Callable[..., Tensor], *operands: Any,
                  operator: bool = False, reads_old: bool = True) -> Tensor:  # fmt: skip
    """Write ``compute(t, *operands)`` into ``t``'s array; the in-place op ``name``.

    Recorded where a gradient is wanted (grad mode on, and ``t`` or an operand requires
    grad): ``t``'s history is rebased, as PyTorch does. Its previous node moves to a new
    tensor object sharing ``t``'s array, the op runs on that, and ``t`` becomes the op's
    output through an :class:`InPlace` node. Where ``compute``'s backward reads the old
    values (``reads_old``; not an add or a store) it runs on a recorded copy, as
    PyTorch keeps the original of ``x.mul_(w)``; a previous node that reads its output
    finds it changed, and backward raises, as in PyTorch. A view of ``x`` (a basic slice
    ``x[key]``, a reshape, a permute) is changed through ``x`` (see
    :func:`_write_through_view`), and views of ``x`` taken before follow the change when
    next used (see :func:`_replay_view`). ``operator`` (``+=`` and the like): where the
    change cannot be recorded in place (an expanded view, a view without a graph of
    another tensor's memory), return the result as a new tensor, as Python does for
    immutable values; ``x[i] += v`` then writes it back through ``x.__setitem__``.
    """
    if t._data.__class__ is FreedArray:
        raise RuntimeError(f"{name}: the values of this tensor (shape {tuple(t.shape)}) were freed {t._data.when}")
    for o in operands:  # (setitem writes a part of t: indexing.setitem checks that part itself)
        if isinstance(o, _function.Tensor) and o._data is not t._data and name != "setitem":
            refuse_partial_overlap(t._data, o._data, name)
    wants = _State.grad_enabled and (
        t.requires_grad or any(isinstance(o, _function.Tensor) and o.requires_grad for o in operands)
    )
    if not wants:
        if getattr(t._data, "base", None) is not None:  # a view of NumPy or CuPy memory
            _refuse_overlapping(t, getattr(t, "_base", None) if t._ctx is None else None, name)
        with no_grad():
            r = compute(t, *operands)
        _write(t, r, name)
        # (an inference tensor outside inference_mode: PyTorch's kernel has written when its check raises)
        refuse_inference_change(t, name)
        return t
    refuse_inference_change(t, name)
    if t._ctx is None and getattr(getattr(t, "_base", None), "without_grad", False):
        raise RuntimeError(
            f"{name}: A view was created in no_grad mode and is being modified inplace with grad mode enabled "
            f"(shape {tuple(t.shape)}). Given that this use case is ambiguous and error-prone, it is forbidden. You "
            "can clarify your code by moving both the view and the inplace either both inside the no_grad block (if "
            "you don't want the inplace to be tracked) or both outside (if you want the inplace to be tracked)."
        )
    if _MULTI_OUTPUT_VIEWS:
        _refuse_multi_output_view(t, name)
    if t._ctx is None and t.requires_grad:
        raise RuntimeError(
            f"{name}: a leaf tensor that requires grad (shape {tuple(t.shape)}) cannot be changed in place "
            "while gradients are recorded; make the change inside `with tga.no_grad():` (as an optimizer "
            "step does), or change a copy (x.clone())"
        )
    if _is_view(t):
        # (a view made without recording remembers its view op in ``_base``: PyTorch's ``v += w``
        # on a view of a tensor without grad writes the base, which then requires grad)
        v = _view_node(t) if t._ctx is not None else getattr(t, "_base", None)
        if v is not None and not isinstance(v, ops.Expand):  # x[key], a reshape, a permute of x
            return _write_through_view(t, name, compute, operands, reads_old, v)
        if t.numel() == 0 and isinstance(v, ops.Expand):  # (an empty expand: nothing to write, as PyTorch runs)
            return _record_empty_write(t, name, compute, operands, v)
        if isinstance(v, ops.Expand):
            if operator:
                return compute(t, *operands)
            raise RuntimeError(
                f"{name}: this tensor (shape {tuple(t.shape)}) is an expanded view of another tensor's memory, and "
                "an in-place change of this view is not recorded for gradients; write through the tensor it views "
                "(x[idx] = value, x[idx] += value)"
            )
        # (else a view no op made (``x.detach()``, ``x.data``): PyTorch's views that take no part in
        # autograd, whose change is recorded on the view alone, as below)
    old = _moved_history(t)
    # An operand that is t itself (x += x, x.copy_(x)) is its value before the change
    operands = tuple(old if o is t else o for o in operands)
    start = _next_seq()
    try:
        r = compute(Copy.apply(old) if reads_old else old, *operands)
        r = _checked_result(t, r, name)
    except BaseException:
        t._uses = old._uses
        raise
    _write(t, r, name)
    _output_in(r, t._data, start, (old, *operands))
    _rebase(t, old, r, name)
    note_rebase(_next_seq())
    return t


def _record_empty_write(t: Tensor, name: str, compute: Callable[..., Tensor], operands: Sequence[Any],
                        v: Function) -> Tensor:  # fmt: skip
    """An in-place change of an empty expanded view: nothing is written, but, as in PyTorch, the
    tensor it views depends on the change from now on, so operands that require grad get their
    (empty) gradients from a backward through it."""
    from ...ops.saved import ZeroDerivative  # noqa: PLC0415 - (kept off the shared import lines)

    if not any(isinstance(o, _function.Tensor) and o.requires_grad for o in operands):
        bump_version(t._data)
        return t
    r = compute(t.detach().clone(), *operands)  # (a copy: the version bump below is not a change of it)
    apply_inplace(v.inputs[0], name, lambda b, r: ZeroDerivative.apply(b, r), r, reads_old=False)
    return t


def _write_through_view(t: Tensor, name: str, compute: Callable[..., Tensor], operands: Sequence[Any],
                        reads_old: bool, v: Function) -> Tensor:  # fmt: skip
    """``x[key].op_(...)`` (or of ``x.T``, ``x.reshape(...)``, ``x.diagonal()``, ``x.unfold(...)``)
    as PyTorch records it: the result is stored into the tensor the view shows (``x[key] =
    result``; for a strided view, at the index arrays of the positions it shows; ``x``
    becomes the result permuted or reshaped back; itself recorded), and the view becomes the
    same view of the new ``x``. Ops that used the view before keep its old history."""
    # v: t's own view op, or the one of its latest write or replay, or the unrecorded view it is
    base = v.inputs[0]
    start = _next_seq()
    value = _checked_result(t, compute(Copy.apply(t) if reads_old else t, *operands), name)
    # (the base's own checks apply: a leaf that requires grad raises there)
    if isinstance(v, ops.Slice):
        under = _view_node(base) if base._ctx is not None else getattr(base, "_base", None)
        if isinstance(under, ops.Strided) and under.overlaps:  # a slice of overlapping windows (u[0])
            _refuse_overlapping(t, v, name)
            _write_slice_of_overlapping(under, v.args, value)
        else:
            base[v.args] = value
    elif isinstance(v, ops.Strided):  # (diagonal, unfold): the positions it shows, as index arrays
        _refuse_overlapping(t, v, name)
        base[np.unravel_index(v.positions(tuple(base.shape)), tuple(base.shape))] = value
    else:  # a permute, reshape or complex view shows every element of the base once: the result replaces it
        if hasattr(v, "whole_from"):  # (real/imag parts, view_as_real/view_as_complex: the view's own inverse)
            whole = v.whole_from(base, value)
        elif isinstance(v, ops.Reshape):
            whole = value.reshape(base.shape)
        else:  # (the permutation's own inverse, as its backward uses)
            whole = value.permute(ops.movement._inverse(tuple(v.args)))
        apply_inplace(base, name, _replaced_by, whole, reads_old=False)
    fresh = v.__class__.apply(base, args=v.args)
    _output_in(value, fresh._data, start, (t, *operands))
    _rebase(t, _moved_history(t), fresh, name)
    note_rebase(_next_seq())
    return t


def _output_in(r: Tensor, memory: Any, start: int, given: Sequence[Any]) -> None:
    """The result ``r`` of an in-place op's computation, now written into ``memory`` (the
    tensor it changed), is that memory from here on, as in PyTorch, where the op writes its
    output there: a node that keeps its output (``exp_``, ``sigmoid_``) finds a later
    in-place change of the tensor, and its backward raises PyTorch's error. ``r``'s node is
    renumbered after the write (it saw the memory as written). Not for a result that is one
    of the ``given`` tensors (``copy_``'s source) or was not made by the computation (made
    before ``start``)."""
    fn = r._ctx
    if fn is None or fn.seq < start or not fn.reads_output or any(r is g for g in given):
        return
    if r._data is memory or r._data.__class__ is not memory.__class__ or r._data.dtype != memory.dtype:
        return
    if tuple(r._data.shape) != tuple(memory.shape):
        return
    r._data = memory
    fn.seq = _next_seq()


def _write_slice_of_overlapping(under: Function, key: Any, value: Tensor) -> None:
    """``u[key].op_(...)`` where ``u`` is a strided view whose elements overlap (unfold with
    ``step < size``): stored straight into the tensor ``u`` shows, at the positions of
    ``u[key]`` (distinct: a window, or entries of windows apart; see
    :func:`_refuse_overlapping`), as PyTorch's store does; ``u`` follows when next used."""
    root = under.inputs[0]
    shape = tuple(root.shape)
    root[np.unravel_index(under.positions(shape)[key], shape)] = value


def _host_span(a: Any) -> tuple[int, int] | None:
    """The bytes ``[first, end)`` a NumPy array covers when its elements tile them exactly
    (every stride positive, each the product of the sizes below it in stride order, as a
    permutation of contiguous memory is); None otherwise (PyTorch calls the overlap of such
    layouts too hard to tell, and lets it pass)."""
    if a.__class__ is not np.ndarray or a.size == 0:
        return None
    step = a.itemsize
    for st, n in sorted((st, n) for n, st in zip(a.shape, a.strides) if n != 1):
        if st != step:
            return None
        step *= n
    first = a.__array_interface__["data"][0]
    return first, first + a.nbytes


def refuse_partial_overlap(dest: Any, src: Any, name: str) -> None:
    """Raise PyTorch's RuntimeError where an in-place op would read ``src`` while writing
    ``dest`` and the two arrays share some but not all of their memory, element for element
    (``x += x.t()``, ``x[1:] = x[:-1]``): the result would depend on the order of the writes.
    The same memory read as the same layout (``x += x``) is fine."""
    a, b = _host_span(dest), _host_span(src)
    if a is None or b is None or a[1] <= b[0] or b[1] <= a[0]:
        return
    if a == b and dest.strides == src.strides:  # (PyTorch's full overlap: the same bytes, the same strides)
        return
    raise RuntimeError(
        f"{name}: unsupported operation: some elements of the input tensor and the written-to tensor refer to a "
        f"single memory location (shapes {tuple(src.shape)} and {tuple(dest.shape)}). Please clone() the tensor "
        "before performing the operation."
    )


def refuse_internal_overlap(dest: Any, name: str) -> None:
    """Raise PyTorch's RuntimeError where ``dest``, an array an op is to write, has two elements in
    one place (a stride 0 along a dimension of more than one element: an ``expand``)."""
    if dest.__class__ is np.ndarray and any(st == 0 and n > 1 for n, st in zip(dest.shape, dest.strides)):
        raise RuntimeError(
            f"{name}(): unsupported operation: more than one element of the written-to tensor (shape "
            f"{tuple(dest.shape)}) refers to a single memory location. Please clone() the tensor before performing "
            "the operation (an expanded tensor repeats its elements)."
        )


def expanded_alias(a: Any) -> Any:
    """A writeable array of the memory ``a`` shows, where ``a`` is an expanded NumPy array (a
    read-only broadcast: a stride 0 along a dimension of more than one element) of writeable
    memory; None otherwise. PyTorch's ``fill_``, ``masked_fill_`` and ``index_put_`` (``x[mask] =
    v``, ``x[idx] = v``) write such memory, every element the expansion repeats."""
    if a.__class__ is not np.ndarray or a.flags.writeable:
        return None
    if not any(st == 0 and n > 1 for n, st in zip(a.shape, a.strides)):
        return None
    root = a
    while isinstance(root.base, np.ndarray):
        root = root.base
    if root is a or not root.flags.writeable or not root.flags.c_contiguous:
        return None
    offset = a.__array_interface__["data"][0] - root.__array_interface__["data"][0]
    try:
        return np.ndarray(a.shape, a.dtype, buffer=root, offset=offset, strides=a.strides)
    except (TypeError, ValueError):
        return None


#: The in-place ops that write an expanded tensor's memory, as PyTorch's (the last two with its
#: deprecation warning); the others refuse it (:func:`refuse_internal_overlap`).
WRITES_EXPANDED = {"fill_": False, "zero_": False, "masked_fill_": True, "index_put_": True}


def write_expanded(dst: Any, new: Any, name: str) -> bool:
    """Write ``new`` into the expanded array ``dst`` where its values change (the elements the op
    writes), for an op of :data:`WRITES_EXPANDED`; False where ``dst`` is no such array."""
    alias = expanded_alias(dst) if name in WRITES_EXPANDED else None
    if alias is None:
        return False
    if WRITES_EXPANDED[name]:
        deprecated_expanded_write(name)
    new = np.asarray(new)
    changed = new != dst
    if new.dtype.kind in "fc":
        changed &= ~(np.isnan(new) & np.isnan(dst))
    alias[changed] = new[changed]
    return True


def deprecated_expanded_write(name: str) -> None:
    """PyTorch's warning for ``masked_fill_``/``index_put_`` into an expanded tensor."""
    from ...engine.warn import warn  # noqa: PLC0415 - (kept off the shared import lines)

    warn(
        f"Use of {name} on expanded tensors is deprecated. Please clone() the tensor before performing this "
        "operation. This also applies to advanced indexing e.g. "
        + ("tensor[mask] = scalar" if name == "masked_fill_" else "tensor[indices] = tensor"),
        UserWarning,
    )


def _refuse_overlapping(t: Tensor, v: Function | None, name: str) -> None:
    """Raise where ``t`` is a strided view (``unfold`` with ``step < size``) two of whose
    elements are one element of its base: an in-place change of it has no single meaning
    (PyTorch's result depends on the order its kernel visits them), so none is made."""
    if v is None and t._ctx is not None:
        v = _view_node(t)
    if isinstance(v, ops.Slice):  # a slice of such a view: where its own positions repeat
        base = v.inputs[0]
        under = _view_node(base) if base._ctx is not None else getattr(base, "_base", None)
        if not (isinstance(under, ops.Strided) and under.overlaps):
            return
        pos = under.positions(tuple(under.inputs[0].shape))[v.args]
        if np.unique(pos).size == pos.size:
            return
        v = under
    if isinstance(v, ops.Strided) and v.overlaps:
        raise RuntimeError(
            f"{name}: this tensor (shape {tuple(t.shape)}) is a view made by {v.op_name} whose elements overlap in "
            f"memory (windows closer than their size), so an in-place change of it would change one element of "
            f"its base (shape {tuple(v.inputs[0].shape)}) several times, in an order PyTorch leaves undefined; "
            "change a copy (.clone()) or the base instead"
        )


def apply_restride(t: Tensor, name: str, view: Callable[[Tensor], Tensor], undo: Callable[[Tensor], Tensor]) -> Tensor:
    """Make ``t`` show its memory as ``view(t)`` does: the in-place op ``name`` that changes
    only shape and strides (``t_ transpose_ squeeze_ unsqueeze_``). ``t`` keeps its identity
    and memory, its version is bumped, and, where gradients are recorded, its history is
    rebased onto the view (a :class:`Restride` node), as PyTorch does; ``undo`` is the view
    that maps the new layout back to the old one."""
    if t._data.__class__ is FreedArray:
        raise RuntimeError(f"{name}: the values of this tensor (shape {tuple(t.shape)}) were freed {t._data.when}")
    tracer = active_tracer()
    if not (_State.grad_enabled and t.requires_grad):
        with no_grad():
            r = view(t)
        t._data = r._data
        if tracer is not None:  # the program reads the new layout from here on
            tracer._bind(t, tracer.value(r))
    else:
        if t._ctx is None:
            raise RuntimeError(
                f"{name}: a leaf tensor that requires grad (shape {tuple(t.shape)}) cannot be changed in place "
                "while gradients are recorded (PyTorch: 'a leaf Variable that requires grad is being used in an "
                "in-place operation'); change it inside `with tga.no_grad():`, or use the out-of-place op"
            )
        old = _moved_history(t)
        r = view(old)
        node = Restride.apply(r, args=name)._ctx
        node.previous, node.undo = old, undo
        t._ctx, t._data = node, r._data
        if tracer is not None:
            tracer._bind(t, tracer.value(r))
        note_rebase(_next_seq())
    if (tangent := tangent_of(r)) is not None or tangent_of(t) is not None:  # (a dual tensor's, in its new layout)
        set_tangent(t, tangent)
    if t._tracks_versions:
        bump_version(t._data)
    return t


# id(t) -> (a weak reference to t, the seq of its detach_(), the tensor holding its history)
_DETACHED: dict[int, tuple[Any, int, Tensor]] = {}


def detach_inplace(t: Tensor) -> Tensor:
    """``t.detach_()``: ``t`` becomes a leaf that does not require grad, keeping its identity.
    Ops that read it before still send their gradient to its history (kept on another tensor
    object, found by :func:`_detached_history`), as PyTorch's edges do."""
    if t._ctx is not None and t._uses:
        old = _moved_history(t)
        key = id(t)
        seq = _next_seq()
        _DETACHED[key] = (weakref.ref(t, lambda _r, key=key: _DETACHED.pop(key, None)), seq, old)
        note_rebase(seq)
    t._ctx, t._requires_grad, t._uses = None, False, 0  # (not the setter: no switch of a leaf to note)
    return t


def _detached_since(t: Any, seq: int) -> bool:
    entry = _DETACHED.get(id(t))
    return entry is not None and entry[0]() is t and entry[1] >= seq


def _kept_when_read(fn: Function, i: int) -> bool:
    """Whether ``fn`` kept its input ``i`` when it ran. What a product (``mul``, ``matmul``, ``div``)
    keeps depends on which inputs required grad then: an input detached in place since (``t * t``,
    then ``t.detach_()``) is asked about as it was, as PyTorch's saved tensors remember."""
    back = [x for x in fn.inputs if isinstance(x, _function.Tensor) and not x._requires_grad
            and _detached_since(x, fn.seq)]  # fmt: skip
    for x in back:
        x._requires_grad = True
    try:
        return fn.keeps_input(i)
    finally:
        for x in back:
            x._requires_grad = False


def _detached_history(t: Tensor, fn: Function, i: int) -> Tensor | None:
    """The history ``t`` had when ``fn`` read it (as its input ``i``), if ``t`` was detached
    in place after that; else None. Raises, as PyTorch does, where ``fn`` kept ``t``.
    (The backward pass asks, through ``engine.versions.register_detached_history``, for an
    input that no longer requires grad once an in-place op rebased a tensor.)"""
    seq = fn.seq
    if not _detached_since(t, seq):
        return None
    entry = _DETACHED[id(t)]
    if fn.reads_values and _kept_when_read(fn, i):
        raise RuntimeError(
            f"backward: '{fn.op_name}' needs its input {i} of shape {tuple(t.shape)}, which was detached in place "
            "(detach_()) after the forward; use the out-of-place detach() instead (PyTorch raises here too)"
        )
    old = entry[2]
    if old._ctx is not None and old._ctx.seq > seq:
        old = as_seen_by(old, seq)
    return old if old.requires_grad else None


def _replaced_by(old: Tensor, new: Tensor) -> Tensor:
    return new


def cast_error(name: str, result: np.dtype, t: Tensor) -> RuntimeError:
    """PyTorch's error where an in-place op's result cannot be written into ``t``'s dtype."""
    return RuntimeError(
        f"{name}: result type {scalar_type_name(result)} can't be cast to the desired output type "
        f"{scalar_type_name(t.dtype)} (a {np.dtype(result)} result into a {t.dtype} tensor of shape {tuple(t.shape)}); "
        "use the out-of-place op instead"
    )


def _checked_result(t: Tensor, r: Tensor, name: str) -> Tensor:
    if tuple(r.shape) != tuple(t.shape):
        raise RuntimeError(
            f"{name}: the result has shape {tuple(r.shape)}, but an in-place op cannot change the shape of "
            f"the tensor it writes ({tuple(t.shape)}); use the out-of-place op instead"
        )
    if r.dtype != t.dtype:
        if not can_cast(r.dtype, t.dtype):  # (never down a category: PyTorch's rule, words and type names)
            raise cast_error(name, r.dtype, t)
        r = r.astype(t.dtype)
    return r


def _write(t: Tensor, r: Tensor, name: str) -> None:
    """Write ``r``'s values into ``t``'s array (same memory) and bump its version."""
    r = _checked_result(t, r, name)
    dst = t._data
    if _State.hook is not None:  # a symbolic trace writes into the same buffer
        _State.hook.write(t, None, r)
    if r._data is not dst:
        try:
            dst[...] = r._data
        except (ValueError, TypeError) as e:
            if write_expanded(dst, r._data, name):
                return _bumped(t, dst)
            refuse_internal_overlap(dst, name)
            raise RuntimeError(
                f"{name}: cannot write into this tensor's array (shape {tuple(t.shape)}): {e}. An expanded "
                "tensor repeats one element in many places: write into a copy (x.clone()) instead"
            ) from e
    _bumped(t, dst)


def _bumped(t: Tensor, dst: Any) -> None:
    if t._tracks_versions:  # (not through ``.data``: PyTorch's untracked escape hatch)
        bump_version(dst)


def store_array(t: Tensor, new: Any, changes: int = 1) -> None:
    """``t`` takes the values of the array ``new`` (its shape, device and dtype) in its own
    memory, outside any graph, as PyTorch's ``optimizer.step()`` and ``load_state_dict``
    write a parameter: its views and detached tensors see them, and its version counts
    ``changes`` in-place changes. Memory that cannot be written (read-only, an expanded
    array) is replaced instead, the new memory continuing the old one's version."""
    dst = t._data
    try:
        dst[...] = new
    except (ValueError, TypeError):
        t._data = t._dev.asarray(new, dtype=t.dtype)
        _versions.continue_version(t._data, dst, changes)
    else:
        bump_version(dst, changes)


_function.register_view_replay(_replay_view)  # (the engine calls it; it cannot import this module)
_versions.register_detached_history(_detached_history)
