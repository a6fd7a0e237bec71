"""The one backward pass: :func:`run_backward`, and :func:`backward` and :func:`grad` on it.

An op's ``backward(g, ns, inputs, out)`` is written once against an array namespace
``ns``. The ordinary pass hands it the device's array namespace and raw arrays; a pass
with ``create_graph=True`` hands it the namespace of tensor ops the Tensor class
registered (``tinygrad_attn.ops.tensor_namespace``), so the gradient is itself recorded
and can be differentiated again, to any order. Broadcasting is undone in one place,
:func:`unbroadcast`; gradients are added into ``.grad`` in one place, :func:`accumulate_grad`.
"""

from __future__ import annotations

import heapq
import itertools
import sys
import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from ..engine.warn import warn as _user_warn
from . import function as _function
from . import saved as _saved
from . import switches as _switches
from . import versions as _versions
from .bfloat16 import BFLOAT16 as _BFLOAT16
from .function import (
    _NUMPY_SCALARS,
    FreedArray,
    _as_ndarray,
    replay_if_stale,
)
from .kernel_gradients import as_pytorch_records
from .quiet import FP_STATE, QUIET
from .switches import _State, active_tracer
from .versions import _check_versions, as_seen_by

if TYPE_CHECKING:
    from ..tensors._tensor import Tensor

_NDARRAY = _function._NDARRAY


class SliceGradient:
    """The gradient that ``x[key]`` sends to ``x``: zero except ``g`` at ``key``, not yet
    written out. Where several slices of one tensor send gradients (``q, k, v`` split
    from one projection, an RNN reading ``x[:, t]`` step by step) the backward pass adds
    each into one array in place, instead of making a full-size array per slice and
    summing them. It reports no shape, so the pass never mistakes it for an array.
    """

    __slots__ = ("g", "full_shape", "key", "ns")
    shape = None

    def __init__(self, g: Any, full_shape: tuple, key: Any, ns: Any) -> None:
        self.g, self.full_shape, self.key, self.ns = g, full_shape, key, ns

    def dense(self) -> Any:
        return self.ns.slice_grad(self.g, self.full_shape, self.key)

    def add_into(self, acc: Any) -> Any:
        """``acc`` (an array this pass owns) plus this gradient, in place."""
        acc[self.key] += self.g
        return acc


class _Terms(list):
    """Recorded gradients (tensors of one dtype) that one tensor got from several consumers,
    summed by one ``add_n`` (``add`` for two) when it is complete (or when :data:`_MAX_TERMS` wait): one node,
    or one line of a traced program, instead of an ``add`` per consumer (a weight that each
    step of an unrolled loop reads). It reports no shape, so the pass never mistakes it for
    a gradient."""

    __slots__ = ()
    shape = None

    def total(self, ns: Any) -> Any:
        n = len(self)
        return self[0] if n == 1 else ns.add(*self) if n == 2 else ns.add_n(*self)  # (two: the plain add)


#: At most this many recorded gradients of one tensor wait for their sum (a bound on the
#: memory they hold: a weight read at every step of a long loop).
_MAX_TERMS = 16


def _sum_with_slices(a: Any, b: Any, a_owned: bool) -> Any:
    """``a + b`` where either may be a :class:`SliceGradient`; a new or owned array."""
    if a.__class__ is SliceGradient:
        if b.__class__ is SliceGradient:
            return b.add_into(a.dense())
        a, b, a_owned = b, a, False  # b may be shared: copy it below
    if b.__class__ is not SliceGradient:
        return _plus(a, b)
    if a.__class__ in _NUMPY_SCALARS:  # (a 0-d gradient NumPy gave as a scalar: a new array to add into)
        return b.add_into(_as_ndarray(a))
    return b.add_into(a if a_owned else b.ns.copy(a))


def unbroadcast(g: Any, shape: tuple, ns: Any) -> Any:
    """Sum ``g`` down to ``shape``: the one place NumPy broadcasting is undone."""
    gshape = tuple(g.shape)
    if gshape == shape:
        return g
    lead = len(gshape) - len(shape)
    lead_axes = tuple(range(lead))
    if 1 not in shape:  # the common case, a bias: only leading axes were added
        return ns.sum(g, axis=lead_axes)
    axes = lead_axes + tuple(i + lead for i, s in enumerate(shape) if s == 1 and gshape[i + lead] != 1)
    if axes:
        g = ns.sum(g, axis=axes, keepdims=True)
    # (no reshape to the shape it has: under a trace or create_graph it would be one more op)
    return g if tuple(g.shape) == shape else ns.reshape(g, shape)


def run_backward(
    roots: Sequence[Tensor],
    root_grads: Sequence[Any],
    *,
    retain_graph: bool,
    create_graph: bool,
    targets: Sequence[Tensor] | None = None,
    stop_at_targets: bool = False,
    ns: Any = None,
    accumulate: Callable[[Tensor, Any, bool], None] | None = None,
    within: Callable[[Any], bool] | None = None,
    retained_too: bool = False,
) -> list[Any] | None:
    """Propagate ``root_grads`` from ``roots`` to the leaves; with ``targets``, return their gradients.

    The algorithm of :mod:`.reference_backward`: take the tensors in an order where each
    one's gradient is complete, apply its node's backward, accumulate each input's share.
    The rest is named steps of :class:`_Pass`, which also explains the arguments.
    """
    if ns is None and (tracer := active_tracer()) is not None:  # tracing: the tracer runs this pass in its namespace
        return tracer.backward_pass(roots, root_grads, retain_graph, create_graph, targets)
    p = _Pass(roots, root_grads, retain_graph, create_graph, targets, stop_at_targets, ns, accumulate, retained_too)
    ready, heap, ns, tensors, hooked, watch = p.ready, p.heap, p.ns, p.tensors, p.hooked, p.watch
    slow, overwrite, free, last_change, rebased = p.slow, p.overwrite, p.free, p.last_change, _function._last_rebase
    free_min, getrefcount, T = _function.FREE_MIN_SIZE, sys.getrefcount, _function.Tensor
    try:
        while True:
            # Order: a tensor whose only consumer sent its share, else the newest one waiting.
            if ready:
                t, g = ready.pop()
                edges = 1
            elif heap:
                t, g, edges = p.newest_waiting()
            else:
                break
            fn = t._ctx
            if watch or fn is None:  # hooks, then the gradient's stops: a target, a .grad
                if hooked and g is not None:
                    g = p.run_hooks(t, g)
                if (g is not None and p.deliver(t, g, fn)) or fn is None:
                    continue
            if within is not None and not within(fn):  # (a tracer's: a node made before the trace)
                continue
            out = t._data  # Apply: the node's backward gives each input its share.
            big = out.size >= free_min  # (g has its shape)
            if slow or g is None or fn.saved is None or fn.seq < last_change or (big and overwrite):
                gs = p.apply(fn, t, g, out, big)
            elif g.__class__ is _NDARRAY and g.dtype is _BFLOAT16:  # (computed in float32: COMPUTED_IN_FLOAT32)
                gs = _function.backward_of(fn, g, t._dev.ops, fn.saved, out)
            else:
                gs = fn.backward(g, t._dev.ops, fn.saved, out)
            del g
            if not retain_graph:  # memory: what forward kept goes; the structure stays for pictures
                fn.saved, fn.ctx = _function.kept_after_backward(fn), None
            i = -1  # Accumulate: each input's share joins its gradient.
            for inp in fn.inputs:  # (an index, not zip: zip costs more than the rest of this loop)
                i += 1
                if not isinstance(inp, T):
                    continue
                if rebased or _function.grad_switched_on:  # in-place history, switched leaves: as fn read it
                    if (inp := _as_read_by(inp, fn, i)) is None:
                        continue
                elif not inp._requires_grad:
                    continue
                gi = gs[i]
                if gi is not None and gi.shape != inp._data.shape:
                    gi = _fit(gi, inp, ns if tensors else inp._dev.ops)
                gi = _in_dtype_of(gi, inp, ns if tensors else inp._dev.ops)
                if inp._uses == 1:  # its only consumer: its gradient is complete
                    ready.append((inp, gi))
                else:
                    p.add_share(inp, gi)
            gs = gi = None  # (no stale reference: a gradient another step gets may be overwritten)
            # Memory: t's values go when only the graph holds t (references: one per consumer edge, t, the call's)
            if big and free and out.__class__ is not FreedArray and getrefcount(t) <= edges + 2:
                t._data = FreedArray(out)
            del out
    finally:
        p.finish()
    return p.found if targets is not None else None


class _Pass:
    """One backward pass: its settings, the tensors waiting for their gradient, and the steps
    :func:`run_backward` names (the order, hooks, targets and ``.grad``, a checked step,
    several consumers' shares).

    Order. A tensor is visited once its gradient is complete, found without walking the
    graph first. One that a single recorded op consumed (``_uses == 1``) is complete when
    that op sends its share: it goes straight on the stack ``ready``. Any other waits in
    ``heap``, ordered by creation, newest first; when it is the newest tensor waiting and
    the stack is empty, every op that consumed it (all made after it) has already run.

    Where gradients go. With ``targets`` their gradients are returned (``found``) and no
    ``.grad`` is touched; ``stop_at_targets``: go no further than them (none is an ancestor
    of another); ``retained_too``: tensors that called ``retain_grad()`` still accumulate
    into their ``.grad`` (``backward(inputs=...)``). Otherwise gradients accumulate into the
    ``.grad`` of leaves and of ``retain_grad()`` tensors, by ``accumulate`` (a tracer's, or
    :func:`accumulate_grad`).

    Gradients are arrays, each step computing with its device's array namespace; with
    ``create_graph`` (``tensors``) they are tensors, computed with the registered namespace
    of tensor ops, so recorded and differentiable again; a tracer passes its own ``ns``.
    The thread's hook (``switches.Hook``) sees every step.

    Memory. With exact reference counts, and neither ``retain_graph`` nor ``tensors``, a
    large intermediate gives its values back once its node is done and only the graph
    holds it (``free``), and a large gradient that only this pass can see may be written
    over by the step that receives it (``overwrite``, see ``function.may_overwrite``).
    """

    __slots__ = ("roots", "tensors", "ns", "accumulate", "hook", "slow", "wanted", "found", "stop_at_targets",
                 "retained_too", "retained", "hooked", "watch", "overwrite", "free", "last_change", "ready",
                 "heap", "pending", "owned", "before", "quiet", "retain", "serial", "at_end")  # fmt: skip

    def __init__(self, roots: Sequence[Tensor], root_grads: Sequence[Any], retain_graph: bool, create_graph: bool,
                 targets: Sequence[Tensor] | None, stop_at_targets: bool, ns: Any,
                 accumulate: Callable[[Tensor, Any, bool], None] | None, retained_too: bool) -> None:  # fmt: skip
        self.tensors = tensors = create_graph or ns is not None  # gradients are tensors (each step recorded)
        self.ns = _function.TENSOR_NS if ns is None and create_graph else ns
        self.accumulate = accumulate_grad if accumulate is None else accumulate
        self.hook = _State.hook if _switches._observing else None
        # every step through apply (which runs a node's hooks and unpacks its saved tensors)
        self.slow = tensors or self.hook is not None or _saved.in_use
        self.retain, self.serial, self.at_end = retain_graph, _next_pass(), None
        _running.passes.append(self)
        self.wanted = {id(t): i for i, t in enumerate(targets)} if targets is not None else None
        self.found: list[Any] = [None] * len(targets) if targets is not None else []
        self.stop_at_targets, self.retained_too = stop_at_targets, retained_too
        self.retained, self.hooked = _State.retained, _State.grad_hooks
        self.watch = self.wanted is not None or bool(self.retained) or bool(self.hooked)
        counts = _switches._CAN_COUNT_REFS
        self.overwrite = counts and not tensors
        self.free = counts and not (retain_graph or tensors)
        # Nodes recorded after the latest in-place change anywhere need no version check.
        self.last_change = _versions._last_change
        self.ready: list[tuple] = []  # (tensor, its complete gradient) from its single consumer
        self.heap: list[tuple] = []  # (-seq, id, tensor) of tensors waiting: the newest first
        self.pending: dict[int, list] = {}  # id -> [gradient so far, consumer edges that sent it]
        # Sums this pass allocated itself: no one else holds them, so they may grow in place.
        # Any other gradient may be shared (an add hands the same g to both its inputs).
        self.owned: set[int] = set()
        self.roots = roots
        _function.add_uses(roots)  # a root is never complete after one consumer: it has its own gradient
        for r, g in zip(roots, root_grads):
            if (entry := self.pending.get(id(r))) is not None:
                entry[0] = _plus(entry[0], g)
            else:
                self.pending[id(r)] = [g, 0]
                heapq.heappush(self.heap, (-r._ctx.seq if r._ctx is not None else 0, id(r), r))
        self.before = _State.grad_enabled, _State.releasing
        _State.grad_enabled = create_graph
        _State.releasing = False  # roots count one use more during the pass
        self.quiet = FP_STATE.set(QUIET)  # (no NumPy warning of the infinities a gradient holds: engine/quiet.py)

    def finish(self) -> None:
        FP_STATE.reset(self.quiet)
        _State.grad_enabled, _State.releasing = self.before
        _function.add_uses(self.roots, -1)
        _running.passes.pop()
        if self.at_end:  # callbacks of this pass: multi-grad hooks waiting for all their tensors
            at_end, self.at_end = self.at_end, None
            for call in at_end:
                call()

    def call_at_end(self, fn: Callable[[], Any]) -> None:
        """Call ``fn()`` once this pass has computed every gradient it will."""
        if self.at_end is None:
            self.at_end = []
        self.at_end.append(fn)

    def newest_waiting(self) -> tuple[Tensor, Any, int]:
        """The newest tensor waiting, its (complete) gradient, and how many edges sent it."""
        t = heapq.heappop(self.heap)[2]
        g, edges = self.pending.pop(id(t))
        if g.__class__ is SliceGradient:
            g = g.dense()
        elif g.__class__ is _Terms:
            g = g.total(self.ns)
        return t, g, edges

    def run_hooks(self, t: Tensor, g: Any) -> Any:
        """``g`` through ``t``'s hooks (``Tensor.register_hook``), if it has any."""
        entry = self.hooked.get(id(t))
        if entry is None or entry[0]() is not t:
            return g
        return _run_hooks(t, g, entry[1], self.tensors)

    def deliver(self, t: Tensor, g: Any, fn: Any) -> bool:
        """Hand ``t``'s complete gradient ``g`` to where it stops: a target's slot, or
        ``.grad`` (a leaf, a ``retain_grad()`` tensor). True: the pass goes no further here."""
        retained = self.retained
        if self.wanted is not None:
            if (k := self.wanted.get(id(t))) is not None:
                self.found[k] = g
                return self.stop_at_targets
            if self.retained_too and retained and id(t) in retained and fn is not None:
                self.accumulate(t, g, False)
        elif fn is None or (retained and id(t) in retained):
            # (references to g: run_backward's, this call's, getrefcount's argument)
            sole = self.overwrite and sys.getrefcount(g) == 3 and _sole_view(g)
            self.accumulate(t, g, sole)
        return False

    def apply(self, fn: Any, t: Tensor, g: Any, out: Any, big: bool) -> Sequence[Any]:
        """``fn``'s backward, with what the common case skips: the in-place version check,
        the observers, tensor gradients, a gradient the step may write over."""
        if g is None:  # nothing flows through here (an unused branch): only release
            return (None,) * len(fn.inputs)
        if fn.saved is None:
            raise RuntimeError(f"{_function.FREED_MESSAGE} (the saved values of '{fn.op_name}')")
        if fn.seq < self.last_change:
            _check_versions(fn, t)
        if (st := getattr(fn, "_state", None)) is not None:
            return self.apply_with_state(fn, t, g, out, st)
        hook, ns = self.hook, self.ns if self.tensors else t._dev.ops
        if hook is not None:
            hook.before_step(t, g)
        if self.tensors:
            seen = fn.inputs
            if fn.keep is not None:  # an input whose array was dropped reads as None, as in an ordinary pass
                seen = [None if a is None and isinstance(i, _function.Tensor) else i for i, a in zip(seen, fn.saved)]
            gs = fn.backward(g, ns, seen, t)
            if _State.grad_enabled:  # (create_graph: not a trace's pass, which records without a graph)
                gs = as_pytorch_records(fn, gs)
        elif big and self.overwrite and sys.getrefcount(g) == 3 and _sole_view(g):
            # (references: run_backward's, this call's, getrefcount's argument; a hook that
            # kept g adds one.) Nobody else can see g: the step may write over it.
            _State.overwritable = g
            try:
                gs = _function.backward_of(fn, g, ns, fn.saved, out)
            finally:
                _State.overwritable = None
        else:
            gs = _function.backward_of(fn, g, ns, fn.saved, out)
        if hook is not None:
            hook.after_step(fn, gs, ns)
        return gs

    def apply_with_state(self, fn: Any, t: Tensor, g: Any, out: Any, st: Any) -> Sequence[Any]:
        """``fn``'s backward for a node with a user's state (``engine/saved.py``): its pre-hooks
        on the gradient, its saved tensors through the unpack hook, its hooks on the result."""
        ns, tensors = self.ns if self.tensors else t._dev.ops, self.tensors
        T = _function.Tensor
        if st.pre_hooks:
            g = _node_prehooks(st.pre_hooks, g, t, tensors)
        saved, outv = fn.saved, (t if tensors else out)
        if _saved.has_packed(st):
            saved, outv = _saved.unpacked(fn, st, fn.saved, outv, tensors, T)
        elif tensors:
            saved = fn.inputs
            if fn.keep is not None:
                saved = [None if a is None and isinstance(i, T) else i for i, a in zip(saved, fn.saved)]
        if self.hook is not None:
            self.hook.before_step(t, g)
        gs = _function.backward_of(fn, g, ns, saved, outv)
        if tensors and _State.grad_enabled:
            gs = as_pytorch_records(fn, gs)
        if self.hook is not None:
            self.hook.after_step(fn, gs, ns)
        if not self.retain:
            _saved.release(fn)
        if st.post_hooks:
            gs = _node_posthooks(st.post_hooks, fn, gs, g, t, ns, tensors)
        return gs

    def add_share(self, t: Tensor, g: Any) -> None:
        """Add ``g`` to the gradient of ``t``, which several ops consumed, as it waits."""
        k = id(t)
        entry = self.pending.get(k)
        if entry is None:  # the first share: t starts waiting
            self.pending[k] = [g, 1]
            heapq.heappush(self.heap, (-t._ctx.seq if t._ctx is not None else 0, k, t))
            return
        entry[1] += 1
        if entry[0] is None:
            entry[0] = g
        elif g is not None:
            entry[0] = self._sum(entry[0], g, k)

    def _sum(self, prev: Any, g: Any, k: int) -> Any:
        T, owned = _function.Tensor, self.owned
        if prev.__class__ is _Terms:
            if g.__class__ is T and g._data.dtype == prev[0]._data.dtype:
                prev.append(g)
                return prev if len(prev) < _MAX_TERMS else _Terms((prev.total(self.ns),))
            prev = prev.total(self.ns)  # (another dtype: summed as before)
        if prev.__class__ is SliceGradient or g.__class__ is SliceGradient:
            s = _sum_with_slices(prev, g, k in owned)
        elif k in owned and not self.tensors and prev.dtype == g.dtype:
            prev += g  # (an array, never a NumPy scalar: _plus made it)
            return prev
        elif self.tensors and prev.__class__ is T is g.__class__ and prev._data.dtype == g._data.dtype:
            return _Terms((prev, g))  # (summed by one op when complete)
        else:
            s = _plus(prev, g)
        owned.add(k)
        return s


class _Running(threading.local):
    def __init__(self) -> None:
        self.passes: list[_Pass] = []


_running = _Running()
_next_pass = itertools.count(1).__next__


def current_pass() -> Any:
    """The innermost backward pass this thread is running (None outside one): what a hook that
    waits for several gradients of one pass keys on (PyTorch's graph task)."""
    return _running.passes[-1] if _running.passes else None


def _as_tensor(g: Any, t: Tensor, tensors: bool) -> Any:
    if g is None or tensors:
        return g
    if g.__class__ is SliceGradient:
        g = g.dense()
    return _gradient_tensor(g, t._dev)


def _node_prehooks(hooks: dict, g: Any, t: Tensor, tensors: bool) -> Any:
    """``g`` through a node's ``register_prehook`` hooks: each gets ``(grad_output,)`` and may
    return a tuple that replaces it."""
    for hook in list(hooks.values()):
        r = hook((_as_tensor(g, t, tensors),))
        if r is None:
            continue
        if not isinstance(r, tuple) or len(r) != 1:
            raise RuntimeError(f"hook '{getattr(hook, '__name__', 'hook')}' returned {type(r).__name__}; a prehook "
                               "returns None or a tuple of one gradient per output")  # fmt: skip
        g = r[0] if tensors or r[0] is None else r[0]._data
    return g


def _node_posthooks(hooks: dict, fn: Any, gs: Sequence[Any], g: Any, t: Tensor, ns: Any, tensors: bool) -> Any:
    """A node's ``register_hook`` hooks, each called as ``hook(grad_inputs, grad_outputs)``: one
    gradient per tensor input (None where it has none), in the shape of that input; a tuple it
    returns replaces them."""
    T = _function.Tensor
    places = [i for i, x in enumerate(fn.inputs) if isinstance(x, T)]
    gs = list(gs)
    for i in places:
        if gs[i] is not None and gs[i].shape != fn.inputs[i]._data.shape:
            gs[i] = _fit(gs[i], fn.inputs[i], ns)
    grad_outputs = (_as_tensor(g, t, tensors),)
    for hook in list(hooks.values()):
        grad_inputs = tuple(_as_tensor(gs[i], fn.inputs[i], tensors) for i in places)
        r = hook(grad_inputs, grad_outputs)
        if r is None:
            continue
        if not isinstance(r, tuple) or len(r) != len(places):
            raise RuntimeError(f"hook '{getattr(hook, '__name__', 'hook')}' has returned an incorrect number of "
                               f"values (got {len(r) if isinstance(r, tuple) else 1}, but expected {len(places)})")  # fmt: skip
        for i, v in zip(places, r):
            gs[i] = v if tensors or v is None else v._data
    return gs


def _as_read_by(t: Tensor, fn: Any, i: int) -> Tensor | None:
    """Input ``i`` of ``fn`` as ``fn`` read it: changed in place since, the history it had
    then; detached in place since (``detach_()``), the history kept aside; else None when
    it takes no gradient. A leaf that did not require grad when ``fn`` read it takes none either
    (see ``function.grad_switched_on``)."""
    if _function.grad_switched_on and _function.read_as_constant(t, fn):
        return _versions.detached_history(t, fn, i)
    if t._ctx is not None and t._ctx.seq > fn.seq:
        t = as_seen_by(t, fn.seq)
    if not t._requires_grad:
        return _versions.detached_history(t, fn, i)
    return t


def _fit(g: Any, t: Tensor, ns: Any) -> Any:
    """The gradient ``g`` in the shape of ``t``: broadcasting undone; a slice's gradient
    written out where there is nothing to add it into (``t`` has one consumer)."""
    if g.__class__ is not SliceGradient:
        return unbroadcast(g, tuple(t._data.shape), ns)
    return g.dense() if t._uses == 1 else g


def _in_dtype_of(g: Any, t: Tensor, ns: Any) -> Any:
    """The gradient ``g`` in ``t``'s dtype, as PyTorch's engine casts it: a float32 tensor
    that met float64 (``where``, ``cat``, a tensor-bound ``clamp``) gets a float32 gradient."""
    if g is None:
        return g
    if g.__class__ is SliceGradient:  # (its slice in the dtype: a bfloat16 one was computed in float32)
        if getattr(g.g, "dtype", None) is not None and g.g.dtype != t._data.dtype and g.g.__class__ is _NDARRAY:
            g.g = ns.astype(g.g, t._data.dtype)
        return g
    gd = g._data.dtype if g.__class__ is _function.Tensor else getattr(g, "dtype", None)
    if gd is None or gd == t._data.dtype:
        return g
    if getattr(gd, "kind", None) == "c" and t.dtype.kind != "c":  # (a real tensor's share of a complex gradient)
        g = ns.apply(_function.COMPLEX_PARTS["real"], g)
    return ns.astype(g, t._data.dtype)


def _sole_view(g: Any) -> bool:
    """Whether ``g`` may be written and no other array shares its memory: it owns it, or
    it is the one view of a whole array nothing else holds (not a broadcast, which
    repeats elements, nor a slice). False where arrays have no ``base`` (array_api_strict)."""
    base = getattr(g, "base", False)
    if base is False or not getattr(g.flags, "writeable", True):
        return False
    # A view of the whole base only: CuPy's broadcasts are writeable, and repeat elements.
    # (References to base: g.base, this local, getrefcount's argument.)
    return base is None or (base.size == g.size and sys.getrefcount(base) == 3)


def _run_hooks(t: Tensor, g: Any, hooks: list, tensors: bool) -> Any:
    """``t``'s complete gradient ``g`` passed through its hooks (``Tensor.register_hook``), in
    the order they were registered: each gets it as a tensor, and one it returns replaces it."""
    if (tracer := active_tracer()) is not None:
        tracer.gradient_hook(t)
    T = _function.Tensor
    for hook in list(hooks):
        r = hook(g if tensors else _gradient_tensor(g, t._dev))
        if r is None:
            continue
        if not isinstance(r, T):
            raise TypeError(f"register_hook: a hook returned {type(r).__name__}; return a Tensor or None")
        name = getattr(hook, "__name__", type(hook).__name__)
        if r.shape != t.shape:
            raise RuntimeError(
                f"hook '{name}' has changed the size of value: a gradient of shape {tuple(r.shape)} for a tensor "
                f"of shape {tuple(t.shape)}"
            )
        if r.dtype != t.dtype:  # (PyTorch names the types by their legacy tensor classes)
            raise RuntimeError(f"hook '{name}' has changed the type of value (was {t.type()} got {r.type()})")
        g = r if tensors else r._data
    return g


def _plus(a: Any, b: Any) -> Any:
    """``a + b`` as an array: NumPy gives the sum of two 0-d arrays as a scalar, which a
    later ``+=`` would rebind instead of updating (a 0-d leaf used three times lost a use)."""
    s = a + b
    return _as_ndarray(s) if s.__class__ in _NUMPY_SCALARS else s


def accumulate_grad(t: Tensor, g: Any, sole: bool = False) -> None:
    """Add ``g`` into ``t.grad`` (:func:`_add_into_grad`), then call the leaf's hooks of
    ``register_post_accumulate_grad_hook`` with the tensor, as PyTorch's."""
    _add_into_grad(t, g, sole)
    if _State.post_accumulate_hooks and t._ctx is None:
        entry = _State.post_accumulate_hooks.get(id(t))
        if entry is not None and entry[0]() is t:
            for hook in tuple(entry[1]):
                if hook(t) is not None:  # (it changes t.grad in place, if anything: PyTorch's check)
                    raise RuntimeError(f"Tensor post accumulate grad hooks should return None (hook {hook!r} "
                                       f"returned a value for a leaf of shape {tuple(t.shape)})")  # fmt: skip


def _add_into_grad(t: Tensor, g: Any, sole: bool = False) -> None:
    """Add ``g`` into ``t.grad``: the one gradient accumulation (the backward pass, and a
    compiled program's replay, call it). Each ``.grad`` is an array of its own, which the
    user may change in place: ``g`` is handed over only when ``sole`` (nobody else holds it,
    it is writable and no other view shares its memory); otherwise it may be another leaf's
    gradient too, the caller's ``grad``, a read-only broadcast or a program's constant, and
    ``.grad`` gets a copy. Into an existing ``.grad`` the array ``g`` is added in place, as
    PyTorch's ``AccumulateGrad`` does outside grad mode (a tensor holding that ``.grad``
    sees the sum, and its version counts the change); where that memory cannot be written
    (read-only), ``.grad`` becomes the sum in new memory. A tensor ``g`` (``create_graph``)
    is added as recorded ops, into a new ``.grad``, as PyTorch's grad-mode branch does."""
    T = _function.Tensor
    if isinstance(g, _function.SparseData) or (t._grad is not None and isinstance(t._grad._data, _function.SparseData)):
        _add_sparse_into_grad(t, g)
        return
    if g.__class__ is not T:
        if t._grad is None:
            if g.__class__ in _NUMPY_SCALARS:
                g = _as_ndarray(g)
            elif not sole:
                g = t._dev.ops.copy(g)
            t._grad = T._wrap(g, t._dev)
            return
        old = t._grad._data
        if old.shape == g.shape and old.dtype == g.dtype:
            try:
                old += g  # (in place in NumPy, CuPy and array_api_strict alike)
            except (ValueError, TypeError):  # read-only memory: left as it is
                pass
            else:
                if t._grad._tracks_versions:
                    _versions.bump_version(old)
                return
        t._grad = T._wrap(_plus(old, g), t._dev)
        return
    if not t._requires_grad:
        return
    # (A recorded copy: g may be another leaf's gradient too, or the caller's grad.)
    t._grad = _function.TENSOR_NS.copy(g) if t._grad is None else t._grad + g


def _gradient_tensor(g: Any, dev: Any) -> Tensor:
    """A gradient array as the tensor handed out: a sparse one (``SparseData``) as a sparse tensor."""
    if isinstance(g, _function.SparseData):
        return g.tensor_class._wrap(g, dev)
    return _function.Tensor._wrap(g, dev)


def _add_sparse_into_grad(t: Tensor, g: Any) -> None:
    """A sparse gradient (or one into a sparse ``.grad``): a sparse ``.grad`` holding both shares
    (their indices concatenated, uncoalesced, as PyTorch's), or dense where either is."""
    if isinstance(g, _function.Tensor):
        g = g._data
    old = None if t._grad is None else t._grad._data
    t._grad = _gradient_tensor(g if old is None else old + g, t._dev)


def backward(tensor: Tensor, grad: Any = None, *, retain_graph: bool = False, create_graph: bool = False,
             inputs: Sequence[Tensor] | None = None) -> None:  # fmt: skip
    """``tensor.backward()``: accumulate d tensor / d leaf into every leaf's ``.grad`` (only
    into the ``.grad`` of ``inputs``, leaves or not, where given)."""
    replay_if_stale(tensor)
    if not tensor._requires_grad:
        raise RuntimeError(
            "backward: the tensor does not require grad and has no graph; set requires_grad=True "
            "on a leaf it depends on"
        )
    if inputs is not None and not inputs:
        raise RuntimeError("'inputs' argument to backward() cannot be empty.")
    if create_graph and inputs is None:  # (PyTorch's warning: each leaf's .grad then holds a graph through it)
        _user_warn(
            "Using backward() with create_graph=True will create a reference cycle between the parameter and its "
            "gradient which can cause a memory leak. We recommend using autograd.grad when creating the graph to "
            "avoid this. If you have to use this function, make sure to reset the .grad fields of your parameters "
            "to None after use to break the cycle and avoid the leak.",
            UserWarning,
        )
    if grad is not None and not isinstance(grad, _function.Tensor):  # (PyTorch reads it as one per tensor)
        try:
            given = list(grad)
        except TypeError:
            raise TypeError(f"'{type(grad).__name__}' object is not iterable") from None
        if len(given) != 1 or not (given[0] is None or isinstance(given[0], _function.Tensor)):
            bad = next((v for v in given if v is not None and not isinstance(v, _function.Tensor)), None)
            if bad is not None:
                raise TypeError(f"gradients can be either Tensors or None, but got {type(bad).__name__}")
            raise RuntimeError(f"got 1 tensors and {len(given)} gradients")
        grad = given[0]
    g = _root_grad(tensor, grad, create_graph, "backward")
    keep = retain_graph or create_graph
    found = run_backward([tensor], [g], retain_graph=keep, create_graph=create_graph, targets=inputs,
                         retained_too=True, within=_within_paths([tensor], inputs))  # fmt: skip
    _accumulate_found(inputs, found)


def _accumulate_found(targets: Sequence[Tensor] | None, found: Sequence[Any] | None) -> None:
    """Add the gradients a pass found for ``targets`` into their ``.grad`` (``backward(inputs=...)``);
    inside a trace, as accumulation lines of the program."""
    tracer = active_tracer()
    for t, g in zip(targets or (), found or ()):
        if g is None:
            continue
        if tracer is not None:
            tracer.accumulate_found(t, g)
        else:
            accumulate_grad(t, g)


def grad(
    outputs: Tensor | Sequence[Tensor],
    inputs: Tensor | Sequence[Tensor],
    grad_outputs: Any = None,
    *,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    allow_unused: bool = False,
) -> tuple[Tensor, ...]:
    """The gradients of ``outputs`` with respect to ``inputs``; no ``.grad`` is touched.

    >>> (gx,) = tga.grad((x * x).sum(), x)  # doctest: +SKIP
    """
    outs = [outputs] if isinstance(outputs, _function.Tensor) else list(outputs)
    ins = [inputs] if isinstance(inputs, _function.Tensor) else list(inputs)
    if grad_outputs is None or isinstance(grad_outputs, _function.Tensor):
        grad_outputs = [grad_outputs] * len(outs) if grad_outputs is None else [grad_outputs]
    for i, o in enumerate(outs):
        replay_if_stale(o)
        if not o._requires_grad:
            raise RuntimeError(f"grad: output {i} does not require grad and has no graph")
    for i, t in enumerate(ins):
        if not isinstance(t, _function.Tensor) or not t._requires_grad:
            raise RuntimeError(f"grad: input {i} is not a tensor with requires_grad=True")
    gs = [_root_grad(o, go, create_graph, "grad") for o, go in zip(outs, grad_outputs)]
    keep = create_graph if retain_graph is None else retain_graph
    # (an input named twice gets its gradient twice: the pass collects each tensor's once)
    unique = list({id(t): t for t in ins}.values())
    found_unique = run_backward(outs, gs, retain_graph=keep, create_graph=create_graph, targets=unique,
                                within=_within_paths(outs, unique))  # fmt: skip
    by_id = {id(t): g for t, g in zip(unique, found_unique or [None] * len(unique))}
    found = [by_id[id(t)] for t in ins]
    result = []
    for i, (t, g) in enumerate(zip(ins, found)):
        if g is None:
            if not allow_unused:
                raise RuntimeError(
                    f"grad: input {i} (shape {tuple(t.shape)}) was not used to compute the outputs; "
                    "pass allow_unused=True to get None for it"
                )
            result.append(None)
        else:
            if not create_graph and g.__class__ in _NUMPY_SCALARS:
                g = _as_ndarray(g)
            result.append(g if create_graph else _gradient_tensor(g, t._dev))
    return tuple(result)


def _within_paths(roots: Sequence[Tensor], targets: Sequence[Tensor] | None) -> Callable[[Any], bool] | None:
    """With ``targets`` (``backward(inputs=...)``), the test of the nodes a pass runs: those on a path
    to a target (None: all)."""
    if targets is None:
        return None
    needed = _nodes_leading_to(roots, targets)
    return None if needed is None else lambda fn: id(fn) in needed


def _nodes_leading_to(roots: Sequence[Tensor], targets: Sequence[Tensor]) -> set[int] | None:
    """The ids of the nodes behind ``roots`` with a path to one of ``targets``: the only ones
    ``grad`` runs, as PyTorch's, so the rest of the graph keeps its saved values (and its hooks
    do not fire). None where the graph holds an in-place change (its rebased history is followed
    by the pass itself): there every node runs."""
    T = _function.Tensor
    want = {id(t) for t in targets}
    leads: dict[int, bool] = {}  # id(node) -> whether one of its inputs leads to a target
    entered: set[int] = set()  # (a node whose inputs are being looked at: met again below, it is not waited for)
    stack = [r._ctx for r in roots if r._ctx is not None]
    while stack:
        fn = stack[-1]
        if id(fn) in leads:
            stack.pop()
            continue
        if fn.rebases:
            return None
        entered.add(id(fn))
        ins = [t for t in (fn.inputs or ()) if isinstance(t, T)]
        todo = [t._ctx for t in ins if t._ctx is not None and id(t._ctx) not in leads and id(t._ctx) not in entered]
        if todo:
            stack.extend(todo)
            continue
        stack.pop()
        leads[id(fn)] = any(id(t) in want or (t._ctx is not None and leads.get(id(t._ctx), False)) for t in ins)
    return {k for k, v in leads.items() if v}


def _root_grad(t: Tensor, grad: Any, create_graph: bool, who: str) -> Any:
    if grad is None:
        if t._data.size != 1:  # (one element of any shape is a scalar, as PyTorch accepts)
            raise RuntimeError(
                f"{who}: grad can be created implicitly only for a scalar output, but the output has "
                f"shape {tuple(t.shape)}; pass a gradient of that shape"
            )
        if t.dtype.kind == "c":  # (PyTorch's: d(complex)/d(z) has no one meaning for a seed of 1)
            raise RuntimeError(
                f"{who}: grad can be implicitly created only for real scalar outputs, but the output is {t.dtype}; "
                "take a real loss (.abs(), .real) or pass a gradient"
            )
        g = t._dev.ops.ones_like(t._data)
        return _function.Tensor._wrap(g, t._dev) if create_graph else g
    if not isinstance(grad, _function.Tensor):
        grad = _function.Tensor(grad, dtype=t.dtype, device=t.device)
    if grad._dev is not t._dev:
        raise RuntimeError(f"{who}: gradient on {grad.device} for an output on {t.device}")
    if tuple(grad.shape) != tuple(t.shape):
        raise RuntimeError(f"{who}: gradient of shape {tuple(grad.shape)} for an output of shape {tuple(t.shape)}")
    if grad.dtype != t.dtype:  # (PyTorch casts a gradient to its output's dtype)
        grad = grad.to(t.dtype)
    return grad if create_graph else grad._data
