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
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from . import function as _function
from . import switches as _switches
from . import versions as _versions
from .function import (
    _NUMPY_SCALARS,
    FreedArray,
    _as_ndarray,
    replay_if_stale,
)
from .switches import _State
from .versions import _check_versions, as_seen_by

if TYPE_CHECKING:
    from .._tensor import Tensor


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
    return ns.reshape(g, shape)


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
    """Propagate ``root_grads`` from ``roots`` to the leaves.

    A tensor is visited once its gradient is complete, found without walking the graph
    first. One that a single recorded op consumed (``_uses == 1``) is complete when that
    op sends its share: it goes straight on a stack. Any other waits in a heap ordered by
    creation, newest first; when it is the newest tensor waiting and the stack is empty,
    every op that consumed it (all made after it) has already run, so it is complete too.

    With ``targets`` the gradients of those tensors are returned and no ``.grad`` is
    touched; otherwise they accumulate into the ``.grad`` of leaves (and of tensors that
    called ``retain_grad()``). ``stop_at_targets``: go no further than the targets (none is
    an ancestor of another); ``retained_too``: with ``targets``, tensors that called
    ``retain_grad()`` still accumulate into their ``.grad`` (``backward(inputs=...)``).

    Gradients are arrays, each step computing with its device's array namespace; with
    ``create_graph`` they are tensors, computed with the registered namespace of tensor ops
    (so recorded, and differentiable again). A tracer passes its own namespace ``ns`` (tensor
    gradients, grad mode off: the tracer records the steps, no graph does), ``accumulate``
    (what a leaf's gradient goes to, instead of :func:`accumulate_grad`) and ``within`` (False
    for a node made before the trace: a leaf of the traced pass). The thread's hook (see
    ``switches.Hook``) sees every step.
    """
    if ns is None and _State.tracer is not None:  # inside a trace: the tracer's namespace and accumulation
        return _State.tracer.backward_pass(roots, root_grads, retain_graph, create_graph, targets)
    tensors = create_graph or ns is not None  # gradients are tensors (each step recorded), else arrays
    if ns is None and create_graph:
        ns = _function.TENSOR_NS
    if accumulate is None:
        accumulate = accumulate_grad
    hook = _State.hook if _switches._observing else None
    # id -> [partial gradient, consumer edges that delivered it] of tensors in the heap
    pending: dict[int, list] = {}
    heap: list[tuple] = []  # (-seq, id, tensor): the newest first
    for r in roots:
        r._uses += 1  # a root is never complete after one consumer: it has its own gradient
    for r, g in zip(roots, root_grads):
        k = id(r)
        if k in pending:
            pending[k][0] = _plus(pending[k][0], g)
        else:
            pending[k] = [g, 0]
            heapq.heappush(heap, (-r._ctx.seq if r._ctx is not None else 0, k, r))
    ready: list[tuple] = []  # (tensor, its complete gradient) from a single consumer
    heappop, heappush = heapq.heappop, heapq.heappush
    # Sums this pass allocated itself: no one else holds them, so they may grow in place.
    # Any other gradient may be shared (an add hands the same g to both its inputs).
    owned: set[int] = set()
    wanted = {id(t): i for i, t in enumerate(targets)} if targets is not None else None
    found: list[Any] = [None] * len(targets) if targets is not None else []
    retained = _State.retained
    hooked = _State.grad_hooks
    watch = wanted is not None or bool(retained) or bool(hooked)
    # Free the values of large intermediates as soon as their node is done, when nothing
    # but the graph holds them: the graph's own references are its consumer edges.
    counts = _switches._CAN_COUNT_REFS
    free_min = _function.FREE_MIN_SIZE
    free = counts and not (retain_graph or tensors)
    prev_enabled, prev_releasing = _State.grad_enabled, _State.releasing
    _State.grad_enabled = create_graph
    _State.releasing = False  # roots count one use more during the pass
    overwrite = counts and not tensors
    getrefcount = sys.getrefcount
    T = _function.Tensor
    # Nodes recorded after the latest in-place change anywhere need no version check, and
    # while no in-place op has rebased a tensor every input is what its consumer saw.
    last_change, rebased = _versions._last_change, _versions._rebased
    try:
        while True:
            if ready:
                t, g = ready.pop()
                edges = 1
            elif heap:
                t = heappop(heap)[2]
                g, edges = pending.pop(id(t))
                if g.__class__ is SliceGradient:
                    g = g.dense()
                elif g.__class__ is _Terms:
                    g = g.total(ns)
            else:
                break
            fn = t._ctx
            if watch or fn is None:
                if hooked and g is not None and (entry := hooked.get(id(t))) is not None and entry[0]() is t:
                    g = _run_hooks(t, g, entry[1], tensors)
                if g is not None:
                    if wanted is not None:
                        if id(t) in wanted:
                            found[wanted[id(t)]] = g
                            if stop_at_targets:
                                continue
                        elif retained_too and retained and id(t) in retained and fn is not None:
                            accumulate(t, g, False)
                    elif fn is None or (retained and id(t) in retained):
                        # (References to g: this pass's one, and getrefcount's argument.)
                        sole = overwrite and getrefcount(g) == 2 and _sole_view(g)
                        accumulate(t, g, sole)
                if fn is None:
                    continue
            if within is not None and not within(fn):  # a leaf of this pass (made before a trace)
                continue
            inputs = fn.inputs
            out = t._data
            big = out.size >= free_min  # (g has its shape)
            if fn.seq < last_change and g is not None and fn.saved is not None:
                _check_versions(fn, t)
            if g is None:  # nothing flows through here (an unused branch): only release
                gs = (None,) * len(inputs)
            elif fn.saved is None:
                raise RuntimeError(
                    f"backward through the graph a second time: the saved arrays of '{fn.op_name}' "
                    "were already freed by an earlier backward. Call backward(retain_graph=True) "
                    "the first time if you need to go through the graph again."
                )
            else:
                if hook is not None:
                    hook.before_step(t, g)
                if tensors:
                    seen = inputs
                    if fn.keep is not None:  # an input whose array was dropped reads as None, as in an ordinary pass
                        seen = [None if a is None and isinstance(i, T) else i for i, a in zip(inputs, fn.saved)]
                    gs = fn.backward(g, ns, seen, t)
                elif big and overwrite and getrefcount(g) == 2 and _sole_view(g):
                    # (references: this pass's one, and getrefcount's argument; a hook that
                    # kept g adds one.) Nobody else can see g: the step may write over it.
                    _State.overwritable = g
                    try:
                        gs = fn.backward(g, t._dev.ops, fn.saved, out)
                    finally:
                        _State.overwritable = None
                else:
                    gs = fn.backward(g, t._dev.ops, fn.saved, out)
                if hook is not None:
                    hook.after_step(fn, gs, ns if tensors else t._dev.ops)
            del g
            if not retain_graph:  # release what forward kept; the structure stays for pictures
                fn.saved = None
                fn.ctx = None
            i = -1
            for inp in inputs:  # (an index, not zip: zip costs more than the rest of this loop)
                i += 1
                if not isinstance(inp, T):
                    continue
                if rebased and inp._ctx is not None and inp._ctx.seq > fn.seq:
                    inp = as_seen_by(inp, fn.seq)  # changed in place after this op read it
                if not inp.requires_grad:
                    # (detached in place after this op read it: its history still takes the gradient)
                    if not rebased or (inp := _versions.detached_history(inp, fn, i)) is None:
                        continue
                gi = gs[i]
                if gi is not None and gi.shape != inp._data.shape:
                    if gi.__class__ is not SliceGradient:
                        gi = unbroadcast(gi, tuple(inp._data.shape), ns if tensors else inp._dev.ops)
                    elif inp._uses == 1:  # nothing to add it into
                        gi = gi.dense()
                if gi is not None and gi.__class__ is not SliceGradient:
                    gd = gi._data.dtype if gi.__class__ is T else getattr(gi, "dtype", None)
                    if gd is not None and gd != inp._data.dtype:  # (float32 met float64: PyTorch's grad is float32)
                        gi = (ns if tensors else inp._dev.ops).astype(gi, inp._data.dtype)
                if inp._uses == 1:  # its only consumer: its gradient is complete
                    ready.append((inp, gi))
                    continue
                ki = id(inp)
                entry = pending.get(ki)
                if entry is None:
                    pending[ki] = [gi, 1]
                    c = inp._ctx
                    heappush(heap, (-c.seq if c is not None else 0, ki, inp))
                    continue
                entry[1] += 1
                prev = entry[0]
                if prev is None:
                    entry[0] = gi
                elif gi is not None:
                    if prev.__class__ is _Terms:
                        if gi.__class__ is T and gi._data.dtype == prev[0]._data.dtype:
                            prev.append(gi)
                            if len(prev) == _MAX_TERMS:
                                entry[0] = _Terms((prev.total(ns),))
                            continue
                        prev = entry[0] = prev.total(ns)  # (another dtype: summed as before)
                    if prev.__class__ is SliceGradient or gi.__class__ is SliceGradient:
                        entry[0] = _sum_with_slices(prev, gi, ki in owned)
                        owned.add(ki)
                    elif ki in owned and not tensors and prev.dtype == gi.dtype:
                        prev += gi  # (an array, never a NumPy scalar: _plus made it)
                    elif tensors and prev.__class__ is T is gi.__class__ and prev._data.dtype == gi._data.dtype:
                        entry[0] = _Terms((prev, gi))  # (summed by one op when complete)
                    else:
                        entry[0] = _plus(prev, gi)
                        owned.add(ki)
            gs = gi = None  # (no stale reference: a gradient another step gets may be overwritten)
            if big and free and out.__class__ is not FreedArray:
                # References: one per consumer edge, ``t`` here, and getrefcount's argument.
                if sys.getrefcount(t) <= edges + 2:
                    t._data = FreedArray(out)
            del out
    finally:
        _State.grad_enabled, _State.releasing = prev_enabled, prev_releasing
        for r in roots:
            r._uses -= 1
    return found if targets is not None else None


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
    if _State.tracer is not None:
        _State.tracer.gradient_hook(t)
    T = _function.Tensor
    for hook in list(hooks):
        r = hook(g if tensors else T._wrap(g, t._dev))
        if r is None:
            continue
        if not isinstance(r, T):
            raise TypeError(f"register_hook: a hook returned {type(r).__name__}; return a Tensor or None")
        if r.shape != t.shape:
            raise RuntimeError(
                f"register_hook: a hook returned a gradient of shape {r.shape} for a tensor of shape {t.shape}"
            )
        g = r if tensors else r._data
    return g


def _plus(a: Any, b: Any) -> Any:
    """``a + b`` as an array: NumPy gives the sum of two 0-d arrays as a scalar, which a
    later ``+=`` would rebind instead of updating (a 0-d leaf used three times lost a use)."""
    s = a + b
    return _as_ndarray(s) if s.__class__ in _NUMPY_SCALARS else s


def accumulate_grad(t: Tensor, g: Any, sole: bool = False) -> None:
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
    if g.__class__ is not T:
        if t.grad is None:
            if g.__class__ in _NUMPY_SCALARS:
                g = _as_ndarray(g)
            elif not sole:
                g = t._dev.ops.copy(g)
            t.grad = T._wrap(g, t._dev)
            return
        old = t.grad._data
        if old.shape == g.shape and old.dtype == g.dtype:
            try:
                old += g  # (in place in NumPy, CuPy and array_api_strict alike)
            except (ValueError, TypeError):  # read-only memory: left as it is
                pass
            else:
                if t.grad._tracks_versions:
                    _versions.bump_version(old)
                return
        t.grad = T._wrap(_plus(old, g), t._dev)
        return
    if not t.requires_grad:
        return
    # (A recorded copy: g may be another leaf's gradient too, or the caller's grad.)
    t.grad = _function.TENSOR_NS.copy(g) if t.grad is None else t.grad + g


def backward(tensor: Tensor, grad: Any = None, *, retain_graph: bool = False, create_graph: bool = False,
             inputs: Sequence[Tensor] | None = None) -> None:  # fmt: skip
    """``tensor.backward()``: accumulate d tensor / d leaf into every leaf's ``.grad`` (only
    into the ``.grad`` of ``inputs``, leaves or not, where given)."""
    replay_if_stale(tensor)
    if not tensor.requires_grad:
        raise RuntimeError(
            "backward: the tensor does not require grad and has no graph; set requires_grad=True "
            "on a leaf it depends on"
        )
    if inputs is not None and not inputs:
        raise RuntimeError("'inputs' argument to backward() cannot be empty.")
    g = _root_grad(tensor, grad, create_graph, "backward")
    keep = retain_graph or create_graph
    found = run_backward([tensor], [g], retain_graph=keep, create_graph=create_graph, targets=inputs,
                         retained_too=True)  # fmt: skip
    _accumulate_found(inputs, found)


def _accumulate_found(targets: Sequence[Tensor] | None, found: Sequence[Any] | None) -> None:
    """Add the gradients a pass found for ``targets`` into their ``.grad`` (``backward(inputs=...)``);
    inside a trace, as accumulation lines of the program."""
    tracer = _State.tracer
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
        if not o.requires_grad:
            raise RuntimeError(f"grad: output {i} does not require grad and has no graph")
    for i, t in enumerate(ins):
        if not isinstance(t, _function.Tensor) or not t.requires_grad:
            raise RuntimeError(f"grad: input {i} is not a tensor with requires_grad=True")
    gs = [_root_grad(o, go, create_graph, "grad") for o, go in zip(outs, grad_outputs)]
    keep = create_graph if retain_graph is None else retain_graph
    found = run_backward(outs, gs, retain_graph=keep, create_graph=create_graph, targets=ins)
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
            result.append(g if create_graph else _function.Tensor._wrap(g, t._dev))
    return tuple(result)


def _root_grad(t: Tensor, grad: Any, create_graph: bool, who: str) -> Any:
    if grad is None:
        if t._data.size != 1:  # (one element of any shape is a scalar, as PyTorch accepts)
            raise RuntimeError(
                f"{who}: grad can be created implicitly only for a scalar output, but the output has "
                f"shape {tuple(t.shape)}; pass a gradient of that shape"
            )
        g = t._dev.ops.ones_like(t._data)
        return _function.Tensor._wrap(g, t._dev) if create_graph else g
    if not isinstance(grad, _function.Tensor):
        grad = _function.Tensor(grad, dtype=t.dtype, device=t.device)
    if grad._dev is not t._dev:
        raise RuntimeError(f"{who}: gradient on {grad.device} for an output on {t.device}")
    if tuple(grad.shape) != tuple(t.shape):
        raise RuntimeError(f"{who}: gradient of shape {tuple(grad.shape)} for an output of shape {tuple(t.shape)}")
    return grad if create_graph else grad._data
