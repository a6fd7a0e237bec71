"""Reverse-mode autograd: the :class:`Function` every op is, and the backward pass.

One mechanism, one place. ``Function.apply`` checks the inputs, runs the op's forward
on raw arrays and, when a gradient is wanted, records the op as the output's graph node.
The node keeps what the graph pictures need, cheaply: the op (its class), its inputs,
its non-array arguments, the arrays it saved, and the :class:`Scope` it was made in.

An op's ``backward(g, ns, inputs, out)`` is written once against an array namespace
``ns``. The ordinary pass hands it the device's array namespace and raw arrays; a pass
with ``create_graph=True`` hands it :data:`TENSOR_NS`, whose functions are tensor ops,
so the gradient is itself recorded and can be differentiated again, to any order.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import heapq
import itertools
import sys
import threading
import traceback
import weakref
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from ._tensor import Tensor

# Set by tensor.py (the Tensor class needs this module, and this module makes Tensors).
Tensor: Any = None
TENSOR_NS: Any = None


#: Intermediates of at least this many elements give their values back once nothing but
#: the graph holds them and no backward step reads them (smaller ones are not worth the
#: check); gradients of this size may be overwritten by the step that receives them.
FREE_MIN_SIZE = 1 << 14
# Knowing that only the graph holds a tensor or an array takes exact reference counts:
# CPython before 3.14, which may skip counting some references on the stack. Elsewhere
# nothing is freed early and no gradient is overwritten.
_CAN_COUNT_REFS = sys.implementation.name == "cpython" and sys.version_info < (3, 14)


# How many threads have grad mode off: while none has, an op need not read its thread's
# switch (a module global reads faster than a ``threading.local`` attribute).
_grad_off_threads = 0
_switch_lock = threading.Lock()
# How many threads are tracing (tinygrad_attn.symbolic): while none is, an op need not read
# its thread's tracer.
_tracing = 0


def count_tracing(delta: int) -> None:
    """A thread starts (+1) or stops (-1) tracing."""
    global _tracing
    with _switch_lock:
        _tracing += delta


class _Switches(threading.local):
    """The switches every op reads, one set per thread: each thread starts from the class
    defaults (grad enabled), and what one thread switches no other thread sees. Reads of
    a ``threading.local`` attribute cost a few tens of nanoseconds, a small share of an op.
    """

    _grad = True

    @property
    def grad_enabled(self) -> bool:
        return self._grad

    @grad_enabled.setter
    def grad_enabled(self, flag: bool) -> None:
        global _grad_off_threads
        flag = bool(flag)
        if flag == self._grad:
            return
        if not flag:  # (counted before the switch, uncounted after: the count never says "none" wrongly)
            with _switch_lock:
                _grad_off_threads += 1
            self._grad = False
        else:
            self._grad = True
            with _switch_lock:
                _grad_off_threads -= 1

    decompose = False
    anomaly = False
    scope: Scope | None = None
    # id -> weakref of non-leaf tensors that called retain_grad(): one registry for the
    # process (a class attribute, never set per thread), as a tensor may be made in one
    # thread and reach backward in another.
    retained: dict = {}
    # Whether recording an op may release the values of intermediates that nothing but
    # the graph holds (off during a backward pass, which counts roots' uses once more).
    releasing = _CAN_COUNT_REFS
    # The gradient array the backward step now running may overwrite (see may_overwrite).
    overwritable: Any = None
    # The symbolic tracer recording every op of this thread (tinygrad_attn.symbolic), or None.
    tracer: Any = None

    def __init__(self) -> None:  # (runs once in each thread that touches the switches)
        # What each switch held when a context manager entered, innermost last: leaving
        # restores it, so one manager instance can be entered recursively or by two threads.
        self.saved: list = []


_State = _Switches()


# -- switches ---------------------------------------------------------------------
class _Switch(contextlib.ContextDecorator):
    """Sets switch ``attr`` to ``value`` inside; leaving restores what was in force."""

    attr = ""
    value: Any = None

    def __enter__(self) -> None:
        st = _State
        st.saved.append(getattr(st, self.attr))
        setattr(st, self.attr, self.value)

    def __exit__(self, *exc: object) -> None:
        st = _State
        setattr(st, self.attr, st.saved.pop())


class no_grad(_Switch):
    """Record nothing inside: ``with tga.no_grad(): ...`` or ``@tga.no_grad()``."""

    attr, value = "grad_enabled", False


class enable_grad(_Switch):
    """Record again inside a ``no_grad`` region."""

    attr, value = "grad_enabled", True


def is_grad_enabled() -> bool:
    return _State.grad_enabled


class decompose(_Switch):
    """Run every composite op as its primitive-op definition, so graphs show each primitive.

    >>> with tga.decompose():  # doctest: +SKIP
    ...     y = x.softmax()    # exp, max, sum, sub, div nodes instead of one softmax node
    """

    attr, value = "decompose", True


# How many threads are inside detect_anomaly: while none is, ops skip reading the switch.
_anomaly_threads = 0


class detect_anomaly(_Switch):
    """Raise at the first op whose forward or backward makes NaN or Inf.

    The error names the op and the line of user code that created it.
    """

    attr, value = "anomaly", True

    def __enter__(self) -> None:
        global _anomaly_threads
        with _switch_lock:
            _anomaly_threads += 1
        super().__enter__()

    def __exit__(self, *exc: object) -> None:
        global _anomaly_threads
        super().__exit__(*exc)
        with _switch_lock:
            _anomaly_threads -= 1


# -- scopes: the module and composite op an op was made in -------------------------
class Scope:
    """A node of the scope tree: a module call (``kind="module"``) or a composite op.

    Graph nodes hold a reference to the scope they were made in, never a string, so
    recording it costs one attribute read. ``path`` is built only when asked for.
    """

    __slots__ = ("name", "kind", "parent", "module", "__weakref__")

    def __init__(self, name: str, kind: str, parent: Scope | None, module: Any = None) -> None:
        self.name = name
        self.kind = kind
        self.parent = parent
        self.module = module

    def chain(self) -> list[Scope]:
        """This scope and its parents, outermost first."""
        out, s = [], self
        while s is not None:
            out.append(s)
            s = s.parent
        return out[::-1]

    @property
    def path(self) -> str:
        """Dotted module path with composites after a slash: ``layers.0.attn/softmax``."""
        mods = [s.name for s in self.chain() if s.kind == "module" and s.name]
        comps = [s.name for s in self.chain() if s.kind != "module"]
        return ".".join(mods) + ("/" + "/".join(comps) if comps else "")

    def __repr__(self) -> str:
        return f"Scope({self.path!r})"


@contextlib.contextmanager
def scope(name: str, kind: str = "composite", module: Any = None) -> Iterator[Scope]:
    """Ops made inside belong to a new child scope of the current one."""
    prev = _State.scope
    s = Scope(name, kind, prev, module)
    _State.scope = s
    try:
        yield s
    finally:
        _State.scope = prev


def current_scope() -> Scope | None:
    return _State.scope


# -- the cyclic collector and long graphs ------------------------------------------
# Graph nodes form no reference cycles (tests/test_graph_gc.py): reference counting frees
# a graph, and the collector never finds garbage in one. Yet each full collection walks
# every live node, and while a long graph is built (a 200k-op loop) full collections
# come again and again: 45% of such a forward. So while a node recorded GC_LONG_GRAPH
# nodes ago is still alive, full collections are made 100x rarer (young generations
# are collected as before, and a full collection still comes after ~7M allocations);
# when that node dies, with its graph, the user's thresholds come back (unless the user
# changed them meanwhile). Only ``gc.set_threshold``'s third number changes: whether
# the collector is enabled stays the user's.
GC_LONG_GRAPH = 0x2000  # checked every this many recorded ops (Function.apply spells it 0x1FFF)
GC_DEFERRED_FULL = 1000  # threshold2 while a long graph lives (the default is 10)
GC_DEFER = True  # False: never defer (benchmarks/overhead.py compares)
_gc_lock = threading.RLock()  # (reentrant: a sentinel's callback may run while it is held)
_gc_sentinel: list = [None, None]  # [weakref to the node last checked, thresholds set by us or None]


def _gc_long_graph(fn: Function) -> None:
    """Every ``GC_LONG_GRAPH`` recorded ops: defer full collections if the node checked
    last time still lives (a graph spans both), else remember this one."""
    with _gc_lock:
        ref, ours = _gc_sentinel
        if ours is not None or not GC_DEFER:  # deferring already, until that node dies
            return
        if ref is not None and ref() is not None:
            user = gc.get_threshold()
            if user[2] >= GC_DEFERRED_FULL or not gc.isenabled():
                return
            ours = (user[0], user[1], GC_DEFERRED_FULL)
            gc.set_threshold(*ours)
            _gc_sentinel[1] = ours
            _gc_sentinel[0] = weakref.ref(ref(), functools.partial(_gc_graph_gone, user))
        else:
            _gc_sentinel[0] = weakref.ref(fn)


def _gc_graph_gone(user: tuple, _ref: Any) -> None:
    with _gc_lock:
        if _gc_sentinel[1] is not None and gc.get_threshold() == _gc_sentinel[1]:
            gc.set_threshold(*user)
        _gc_sentinel[0] = _gc_sentinel[1] = None


# -- the op base class ------------------------------------------------------------
# NumPy returns 0-d results (a full sum, a product of two 0-d arrays) as scalars such as
# ``numpy.float32``; a tensor's data is always an array (in-place updates, ``__dlpack__``).
_NUMPY_SCALARS = frozenset(t for t in np.sctypeDict.values() if issubclass(t, np.generic))
_as_ndarray = np.asarray
_NUMBER_TYPES = frozenset((int, float, bool))
_new = object.__new__  # makes an instance without calling __init__ (Function and Tensor have none to run)
_next_seq = itertools.count(1).__next__  # creation order of recorded ops; leaves count as 0


class Function:
    """A differentiable op. Subclasses give ``forward`` (on arrays) and ``backward``.

    - ``forward(self, xp, *datas)``: the device's array namespace and the inputs' arrays
      (Python scalars stay scalars); non-array arguments are in ``self.args``. Returns
      one array.
    - ``backward(self, g, ns, inputs, out)``: the gradient of each input (``None`` for
      one that has none), computed with the namespace ``ns``. ``inputs`` and ``out``
      are arrays in an ordinary pass and tensors with ``create_graph=True``. Gradients
      may keep the output's broadcast shape: the engine reduces them in one place.
    - ``self.ctx``: anything else forward keeps for backward; released with ``saved``.
    - ``keep`` and ``reads_output`` say what ``backward`` reads, so that the values of an
      intermediate nobody else holds can go before backward runs (see
      :func:`_release_unread`). ``keep``: the positions of the inputs whose arrays it
      reads (``None``: all; ``"other"``: input ``i``'s when the other input needs a
      gradient, as in a product). Inputs it does not read arrive as ``None`` once
      released (Python numbers always stay). ``reads_output``: whether it reads ``out``.
    - ``reads_values``: False for ops whose backward reads only shapes (reshape, slice,
      sum, cast, ...): no in-place change of their inputs or output can spoil it.
    - :meth:`keeps_input` says which inputs the backward keeps, as PyTorch's keeps them
      (by default: those of ``keep``); the engine's version check follows from it and
      from ``reads_output``, so an in-place change raises exactly where PyTorch's does.
    """

    __slots__ = ("inputs", "args", "saved", "ctx", "scope", "trace", "seq", "__weakref__")
    differentiable = True
    keep: tuple[int, ...] | str | None = None
    reads_output = True
    reads_values = True

    def keeps_input(self, i: int) -> bool:
        """Whether backward reads the values of input ``i`` (so changing it in place after
        the forward must raise). Ops whose needs depend on more than ``keep`` override it."""
        keep = self.keep
        if keep is None:
            return True
        if keep == "other":
            other = self.inputs[1 - i]
            return isinstance(other, Tensor) and other.requires_grad
        return i in keep

    @classmethod
    def apply(cls, *inputs: Any, args: Any = None) -> Tensor:
        # Every op runs through here, so it is written for speed: locals, slot writes,
        # no helper calls on the common path.
        fn = _new(cls)
        fn.args = args
        fn.ctx = None  # forward may set it
        numbers = False
        if len(inputs) == 1 and inputs[0].__class__ is Tensor:  # most ops: one tensor, no loop
            t = inputs[0]
            # A view taken before its base changed in place shows the new values: replay it.
            # (_last_rebase is 0 until an in-place op rebases a tensor.)
            if _last_rebase and (c := t._ctx) is not None and c.seq < _last_rebase and c.__class__ in _VIEW_NODES:
                _replay_view(t)
            dev = t._dev
            need = t.requires_grad
            if need:
                t._uses += 1
            datas = [t._data]
        else:
            dev = None
            need = False
            datas = []  # (datas.append, not a saved bound method: Python 3.11+ makes it a direct call)
            for t in inputs:
                if isinstance(t, Tensor):
                    if _last_rebase and (c := t._ctx) is not None and c.seq < _last_rebase:
                        if c.__class__ in _VIEW_NODES:
                            _replay_view(t)
                    if t._dev is not dev:
                        if dev is not None:
                            _raise_device_mix(cls, inputs)
                        dev = t._dev
                    if t.requires_grad:
                        need = True
                        t._uses += 1  # (given back below if nothing is recorded)
                    datas.append(t._data)
                else:
                    datas.append(t)
                    numbers = True
        xp = dev.ops
        try:
            # Spelled out for one and two inputs: a call with ``*datas`` costs more than the
            # arithmetic of a small op.
            n = len(datas)
            if n == 1:
                out_data = fn.forward(xp, datas[0])
            elif n == 2:
                a, b = datas
                if numbers:  # a number as the device computes with it fastest (saved as given)
                    if b.__class__ in _NUMBER_TYPES:
                        b = xp.scalar(b, a)
                    elif a.__class__ in _NUMBER_TYPES:
                        a = xp.scalar(a, b)
                out_data = fn.forward(xp, a, b)
            else:
                out_data = fn.forward(xp, *datas)
        except (ValueError, TypeError, IndexError) as e:
            if getattr(e, "names_op", False):  # the op's own message already names it and the shapes
                raise
            raise _op_error(cls, inputs, e) from e
        if out_data.__class__ in _NUMPY_SCALARS:  # NumPy gives 0-d results as scalars
            out_data = _as_ndarray(out_data)
        out = _new(Tensor)
        out._data = out_data
        out._dev = dev
        out.grad = None
        out.name = None
        out._uses = 0
        if need and (not _grad_off_threads or _State._grad) and cls.differentiable:
            out.requires_grad = True
            out._ctx = fn
            fn.inputs = inputs
            fn.saved = datas
            fn.scope = _State.scope
            fn.seq = _next_seq()
            if not fn.seq & 0x1FFF:  # every GC_LONG_GRAPH recorded ops (a literal: the hot path)
                _gc_long_graph(fn)
            if _anomaly_threads and _State.anomaly:
                fn.trace = _user_frame()
                _check_finite(fn, out_data, "forward")
            if out_data.size >= FREE_MIN_SIZE and _State.releasing:  # a large new array: make room
                _release_unread(inputs)
        else:
            out.requires_grad = False
            out._ctx = None
            if need:  # nothing was recorded: take back the uses counted above, so they stay exact
                for t in inputs:
                    if isinstance(t, Tensor) and t.requires_grad:
                        t._uses -= 1
            if _anomaly_threads and _State.anomaly:
                fn.inputs, fn.scope, fn.trace = inputs, _State.scope, _user_frame()
                _check_finite(fn, out_data, "forward")
        if _tracing and _State.tracer is not None:  # a symbolic trace records every op (tinygrad_attn.symbolic)
            _State.tracer.record(fn, inputs, out)
        return out

    def forward(self, xp: Any, *datas: Any) -> Any:  # pragma: no cover - abstract
        raise NotImplementedError

    def backward(self, g: Any, ns: Any, inputs: Sequence[Any], out: Any) -> Sequence[Any]:  # pragma: no cover
        raise NotImplementedError(f"{self.op_name} has no gradient")

    @classmethod
    def op_name_of(cls) -> str:
        return getattr(cls, "name", None) or cls.__name__.lower()

    @property
    def op_name(self) -> str:
        return self.op_name_of()

    @property
    def freed(self) -> bool:
        return self.saved is None

    def __repr__(self) -> str:
        return f"<{self.op_name} node>"


def _release_unread(inputs: Sequence[Any]) -> None:
    """Free the values of intermediates that only the graph holds and no step will read.

    Called as an op records a large output. For each input made by a recorded op, that
    op drops the input arrays its backward does not read (its ``keep``), and each of
    its own inputs gives its values back when nothing holds the tensor but the graph
    (its consumers' input lists: exactly ``_uses`` references), nothing holds the array
    but the tensor, and the op that made it does not read its output. So in
    ``((q @ k.mT) * c).softmax(-1)`` the scores are freed as soon as they are scaled, as
    a hand-written version would let them go, while the graph keeps every node for the
    pictures (the freed values show as shape and dtype).
    """
    for t in inputs:
        if not isinstance(t, Tensor):
            continue
        fn = t._ctx
        if fn is None or fn.saved is None:  # a leaf, or a node a backward already released
            continue
        if fn.keep is not None:
            _drop_unread(fn)
        for x in fn.inputs:
            if not isinstance(x, Tensor) or x._ctx is None or x._ctx.reads_output:
                continue
            d = x._data
            if d.__class__ is FreedArray or d.size < FREE_MIN_SIZE:
                continue
            # x: its consumers' input lists, this loop, getrefcount's argument.
            # d: x._data, this local, getrefcount's argument.
            if sys.getrefcount(x) <= x._uses + 2 and sys.getrefcount(d) <= 3:
                x._data = FreedArray(d, "before backward, which does not read them")


def _drop_unread(fn: Function) -> None:
    """Replace by None the input arrays ``fn``'s backward does not read (see ``keep``)."""
    saved = fn.saved
    for i in range(len(saved)):
        if not hasattr(saved[i], "shape"):  # None, or a number: free to keep
            continue
        if not fn.keeps_input(i):
            saved[i] = None


def may_overwrite(g: Any) -> bool:
    """Whether a backward step may write its result over ``g``, the gradient it received.

    True only for a large array the backward pass holds alone (no other step, no
    ``.grad``, no caller, no other view of its memory); never with ``create_graph``.
    Steps that can work in place (softmax, a mask, a scale) then make no new array.
    """
    return _State.overwritable is g


def _shape_str(t: Any) -> str:
    if isinstance(t, Tensor):
        return str(tuple(t.shape))
    return repr(t)


class InvalidArgumentError(ValueError, RuntimeError):
    """An argument the op cannot take (mismatched shapes, repeated axes, a bad mode).
    PyTorch raises ``RuntimeError`` for these, NumPy ``ValueError``; this is both."""


def _op_error(cls: type, inputs: Sequence[Any], e: Exception) -> Exception:
    shapes = ", ".join(_shape_str(t) for t in inputs)
    # (shapes that do not fit: PyTorch's RuntimeError, still the ValueError NumPy raised)
    kind = InvalidArgumentError if type(e) is ValueError else type(e)
    return kind(f"{cls.op_name_of()}: cannot apply to inputs of shapes {shapes}: {e}")


def _raise_device_mix(cls: type, inputs: Sequence[Any]) -> None:
    devs = [str(t.device) for t in inputs if isinstance(t, Tensor)]
    names = " and ".join(dict.fromkeys(devs))
    raise RuntimeError(
        f"{cls.op_name_of()}: expected all tensors on one device, got {names}; move them with .to(device)"
    )


def _user_frame() -> str:
    """The innermost stack frame outside this package: where the user made the op."""
    pkg = __name__.rsplit(".", 1)[0].replace(".", "/")
    for fr in reversed(traceback.extract_stack()[:-2]):
        if f"/{pkg}/" not in fr.filename.replace("\\", "/"):
            return f'File "{fr.filename}", line {fr.lineno}, in {fr.name}: {fr.line}'
    return "<unknown>"


def _check_finite(fn: Function, arr: Any, phase: str) -> None:
    if arr.__class__ is SliceGradient:
        arr = arr.g
    dev = None
    for t in fn.inputs or ():
        if isinstance(t, Tensor):
            dev = t._dev
            break
    if dev is None or arr is None or not hasattr(arr, "dtype"):
        return
    kind = dev.np_dtype(arr.dtype).kind
    if kind not in "fc":
        return
    if not bool(dev.ops.all(dev.ops.isfinite(arr))):
        where = getattr(fn, "trace", None) or "<unknown>"
        raise RuntimeError(
            f"detect_anomaly: {fn.op_name} produced NaN or Inf in its {phase}; the op was created at {where}"
        )


# -- the backward pass -------------------------------------------------------------
class FreedArray:
    """Stands in for the values of an intermediate tensor that were given back early.

    Only the graph held that tensor, and no backward step would read its values (they
    were never read, or backward had run), so nobody could read them any more; the graph
    keeps the tensor for pictures, which need its shape and dtype. ``when`` says which.
    """

    __slots__ = ("shape", "dtype", "ndim", "size", "when")

    def __init__(self, arr: Any, when: str = "by backward") -> None:
        self.shape, self.dtype, self.ndim, self.size = tuple(arr.shape), arr.dtype, arr.ndim, arr.size
        self.when = when

    def __repr__(self) -> str:
        return f"<values freed {self.when}: shape {self.shape}, dtype {self.dtype}>"


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
) -> list[Any] | None:
    """Propagate ``root_grads`` from ``roots`` to the leaves.

    A tensor is visited once its gradient is complete, found without walking the graph
    first. One that a single recorded op consumed (``_uses == 1``) is complete when that
    op sends its share: it goes straight on a stack. Any other waits in a heap ordered by
    creation, newest first; when it is the newest tensor waiting and the stack is empty,
    every op that consumed it (all made after it) has already run, so it is complete too.

    With ``targets`` the gradients of those tensors are returned and no ``.grad`` is
    touched; otherwise they accumulate into the ``.grad`` of leaves (and of tensors that
    called ``retain_grad()``). Gradients are arrays here, tensors with ``create_graph``.
    ``stop_at_targets``: go no further than the targets (none is an ancestor of another).
    """
    if _State.tracer is not None:  # a symbolic trace records the backward pass as ops
        return _State.tracer.run_backward(roots, root_grads, retain_graph, create_graph, targets)
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
    watch = wanted is not None or bool(retained)
    anomaly = _State.anomaly
    # Free the values of large intermediates as soon as their node is done, when nothing
    # but the graph holds them: the graph's own references are its consumer edges.
    free = _CAN_COUNT_REFS and not (retain_graph or create_graph)
    prev_enabled, prev_releasing = _State.grad_enabled, _State.releasing
    _State.grad_enabled = create_graph
    _State.releasing = False  # roots count one use more during the pass
    overwrite = _CAN_COUNT_REFS and not create_graph
    getrefcount = sys.getrefcount
    T = Tensor
    # Nodes recorded after the latest in-place change anywhere need no version check, and
    # while no in-place op has rebased a tensor every input is what its consumer saw.
    last_change, rebased = _last_change, _rebased
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
            else:
                break
            fn = t._ctx
            if watch or fn is None:
                if g is not None:
                    if wanted is not None:
                        if id(t) in wanted:
                            found[wanted[id(t)]] = g
                            if stop_at_targets:
                                continue
                    elif fn is None or (retained and id(t) in retained):
                        # (References to g: this pass's one, and getrefcount's argument.)
                        sole = overwrite and getrefcount(g) == 2 and _sole_view(g)
                        _accumulate(t, g, create_graph, sole)
                if fn is None:
                    continue
            inputs = fn.inputs
            out = t._data
            big = out.size >= FREE_MIN_SIZE  # (g has its shape)
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
            elif create_graph:
                seen = inputs
                if fn.keep is not None:  # an input whose array was dropped reads as None, as in an ordinary pass
                    seen = [None if a is None and isinstance(i, T) else i for i, a in zip(inputs, fn.saved)]
                gs = fn.backward(g, TENSOR_NS, seen, t)
            elif big and overwrite and getrefcount(g) == 2 and _sole_view(g):
                # (references: this pass's one, and getrefcount's argument.) Nobody else can
                # see g: the step may write over it.
                _State.overwritable = g
                try:
                    gs = fn.backward(g, t._dev.ops, fn.saved, out)
                finally:
                    _State.overwritable = None
            else:
                gs = fn.backward(g, t._dev.ops, fn.saved, out)
            del g
            if anomaly:
                for gi in gs:
                    if gi is not None:
                        _check_finite(fn, gi._data if create_graph else gi, "backward")
            if not retain_graph:  # release what forward kept; the structure stays for pictures
                fn.saved = None
                fn.ctx = None
            i = -1
            for inp in inputs:  # (an index, not zip: zip costs more than the rest of this loop)
                i += 1
                if not isinstance(inp, T):
                    continue
                if rebased and inp._ctx is not None and inp._ctx.seq > fn.seq:
                    inp = _as_seen_by(inp, fn.seq)  # changed in place after this op read it
                if not inp.requires_grad:
                    if not rebased or (inp := _detached_history(inp, fn, i)) is None:
                        continue
                gi = gs[i]
                if gi is not None and gi.shape != inp._data.shape:
                    if gi.__class__ is not SliceGradient:
                        gi = unbroadcast(gi, tuple(inp._data.shape), TENSOR_NS if create_graph else inp._dev.ops)
                    elif inp._uses == 1:  # nothing to add it into
                        gi = gi.dense()
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
                    if prev.__class__ is SliceGradient or gi.__class__ is SliceGradient:
                        entry[0] = _sum_with_slices(prev, gi, ki in owned)
                        owned.add(ki)
                    elif ki in owned and not create_graph and prev.dtype == gi.dtype:
                        prev += gi  # (an array, never a NumPy scalar: _plus made it)
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


def _plus(a: Any, b: Any) -> Any:
    """``a + b`` as an array: NumPy gives the sum of two 0-d arrays as a scalar, which a
    later ``+=`` would rebind instead of updating (a 0-d leaf used three times lost a use)."""
    s = a + b
    return _as_ndarray(s) if s.__class__ in _NUMPY_SCALARS else s


def _accumulate(t: Tensor, g: Any, create_graph: bool, sole: bool = False) -> None:
    """Add ``g`` into ``t.grad``. Each ``.grad`` is an array of its own: ``g`` is handed
    over only when ``sole`` (the pass holds it alone, writable, no other view); otherwise it
    may be another leaf's gradient too, the caller's ``grad``, or a read-only broadcast."""
    if not create_graph:
        if t.grad is None:
            if g.__class__ in _NUMPY_SCALARS:
                g = _as_ndarray(g)
            elif not sole:
                g = t._dev.ops.copy(g)
            t.grad = Tensor._wrap(g, t._dev)
        else:  # a new array: the old .grad may be held by the caller
            t.grad = Tensor._wrap(_plus(t.grad._data, g), t._dev)
        return
    if not t.requires_grad or g is None:
        return
    # (A recorded copy: g may be another leaf's gradient too, or the caller's grad.)
    t.grad = _Copy.apply(g) if t.grad is None else t.grad + g


def backward(tensor: Tensor, grad: Any = None, *, retain_graph: bool = False, create_graph: bool = False) -> None:
    """``tensor.backward()``: accumulate d tensor / d leaf into every leaf's ``.grad``."""
    _replay_if_stale(tensor)
    if not tensor.requires_grad:
        raise RuntimeError(
            "backward: the tensor does not require grad and has no graph; set requires_grad=True "
            "on a leaf it depends on"
        )
    g = _root_grad(tensor, grad, create_graph, "backward")
    run_backward([tensor], [g], retain_graph=retain_graph or create_graph, create_graph=create_graph)


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
    outs = [outputs] if isinstance(outputs, Tensor) else list(outputs)
    ins = [inputs] if isinstance(inputs, Tensor) else list(inputs)
    if grad_outputs is None or isinstance(grad_outputs, Tensor):
        grad_outputs = [grad_outputs] * len(outs) if grad_outputs is None else [grad_outputs]
    for i, o in enumerate(outs):
        _replay_if_stale(o)
        if not o.requires_grad:
            raise RuntimeError(f"grad: output {i} does not require grad and has no graph")
    for i, t in enumerate(ins):
        if not isinstance(t, Tensor) or not t.requires_grad:
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
            result.append(g if create_graph else Tensor._wrap(g, t._dev))
    return tuple(result)


def _root_grad(t: Tensor, grad: Any, create_graph: bool, who: str) -> Any:
    if grad is None:
        if t._data.size != 1:  # (one element of any shape is a scalar, as PyTorch accepts)
            raise RuntimeError(
                f"{who}: grad can be created implicitly only for a scalar output, but the output has "
                f"shape {tuple(t.shape)}; pass a gradient of that shape"
            )
        g = t._dev.ops.ones_like(t._data)
        return Tensor._wrap(g, t._dev) if create_graph else g
    if not isinstance(grad, Tensor):
        grad = Tensor(grad, dtype=t.dtype, device=t.device)
    if grad._dev is not t._dev:
        raise RuntimeError(f"{who}: gradient on {grad.device} for an output on {t.device}")
    if tuple(grad.shape) != tuple(t.shape):
        raise RuntimeError(f"{who}: gradient of shape {tuple(grad.shape)} for an output of shape {tuple(t.shape)}")
    return grad if create_graph else grad._data


# -- composite ops: a primitive definition, optionally a fused implementation -------
def composite(name: str, fused: Callable[..., Tensor | None] | None = None) -> Callable:
    """Declare ``reference`` (written in tensor ops) as the definition of composite op ``name``.

    ``fused(*args, **kw)`` may return a tensor computed by one fused :class:`Function`, or
    ``None`` where it does not apply. Inside ``tga.decompose()`` the reference always runs,
    within a scope named ``name`` so its primitives draw as one group.
    """

    def deco(reference: Callable[..., Tensor]) -> Callable[..., Tensor]:
        @functools.wraps(reference)
        def run(*args: Any, **kw: Any) -> Tensor:
            if fused is not None and not _State.decompose:
                out = fused(*args, **kw)
                if out is not None:
                    return out
            prev = _State.scope
            _State.scope = Scope(name, "composite", prev)
            try:
                return reference(*args, **kw)
            finally:
                _State.scope = prev

        run.reference = reference  # type: ignore[attr-defined]
        run.composite_name = name  # type: ignore[attr-defined]
        return run

    return deco


class FusedFunction(Function):
    """A composite op computed in one step, with a hand-derived backward.

    ``reference`` is the primitive definition (a function of tensors). With
    ``create_graph=True`` the backward recomputes it and differentiates that, so fused ops
    have gradients of every order without a second hand-derived formula.
    """

    __slots__ = ()

    def recompute(self, *inputs: Any) -> Tensor:
        """The op's primitive definition applied to ``inputs`` (used for higher orders)."""
        raise NotImplementedError  # pragma: no cover

    def backward(self, g: Any, ns: Any, inputs: Sequence[Any], out: Any) -> Sequence[Any]:
        if ns is TENSOR_NS:
            return self._backward_by_reference(g, inputs)
        return self.backward_arrays(g, ns, inputs, out)

    def backward_arrays(self, g: Any, ns: Any, inputs: Sequence[Any], out: Any) -> Sequence[Any]:
        raise NotImplementedError  # pragma: no cover

    def _backward_by_reference(self, g: Tensor, inputs: Sequence[Any]) -> list[Any]:
        # The local derivative only: the reference runs on stand-ins (one alias op per
        # differentiable input) and the pass below stops at them. Differentiating with
        # respect to the inputs themselves would also follow the paths through their own
        # history, counted again by the outer pass where one input depends on another
        # (``linear(W * 1.0, W)``). The stand-ins stay in the graph, so the gradient is
        # still differentiable with respect to the inputs, to any order.
        stand_ins = [_Alias.apply(t) if isinstance(t, Tensor) and t.requires_grad else t for t in inputs]
        diff = [s for s, t in zip(stand_ins, inputs) if s is not t]
        with decompose():
            y = self.recompute(*stand_ins)
        found = run_backward([y], [g], retain_graph=True, create_graph=True, targets=diff, stop_at_targets=True)
        gs = iter(found)
        return [next(gs) if s is not t else None for s, t in zip(stand_ins, inputs)]


class _Alias(Function):
    """The same array under a new node (a stand-in; see ``_backward_by_reference``)."""

    __slots__ = ()
    name = "alias"
    keep = ()
    reads_output = False
    reads_values = False

    def forward(self, xp: Any, x: Any) -> Any:
        return x

    def backward(self, g: Any, ns: Any, inputs: Sequence[Any], out: Any) -> Sequence[Any]:
        return (g,)


class _Copy(_Alias):
    """The same values in a new array."""

    __slots__ = ()
    name = "copy"

    def forward(self, xp: Any, x: Any) -> Any:
        return xp.copy(x)


# -- in-place ops: versions and rebased histories ------------------------------------
# Every array's memory has a version, counted per memory root (the array that owns the
# memory), so views and detached tensors share it with no cost to ordinary ops: it exists
# only once something was changed in place. A backward step checks the arrays it reads
# only when its node is older than the latest in-place change anywhere.
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
# cannot show values its node does not know of, so ``Function.apply`` looks no further.
_last_rebase = 0
_VIEW_OPS: frozenset = frozenset()  # the ops whose output may share its input's memory
_VIEW_NODES: frozenset = frozenset()  # those and InPlace (a view written through or replayed)


def _memory_root(arr: Any) -> Any:
    a = getattr(arr, "_array", arr)  # array_api_strict wraps a NumPy array
    while True:
        b = getattr(a, "base", None)
        if b is None:
            return a
        a = b


def version_of(arr: Any) -> _Version | None:
    """The version of ``arr``'s memory; None while it was never changed in place."""
    entry = _versions.get(id(_memory_root(arr)))
    return entry[0] if entry is not None else None


def bump_version(arr: Any) -> None:
    """Record an in-place change of ``arr``'s memory."""
    global _last_change
    root = _memory_root(arr)
    key = id(root)
    entry = _versions.get(key)
    if entry is None:
        v = _Version()
        try:
            ref = weakref.ref(root, functools.partial(_forget_version, key))
        except TypeError:  # memory owned by an object without weak references (bytes): kept
            ref = None
        _versions[key] = (v, ref)
    else:
        v = entry[0]
    seq = _next_seq()
    v.count += 1
    v.recent.append(seq)
    if len(v.recent) > _MAX_RECENT:
        del v.recent[0]
    _last_change = seq


def _forget_version(key: int, ref: Any) -> None:
    entry = _versions.get(key)
    if entry is not None and entry[1] is ref:
        del _versions[key]


def _with_subclasses(classes: Any) -> frozenset:
    """``classes`` and every subclass of them (a transpose is a permute)."""
    out, todo = set(), list(classes)
    while todo:
        c = todo.pop()
        if c not in out:
            out.add(c)
            todo.extend(c.__subclasses__())
    return frozenset(out)


def _know_view_ops() -> None:
    """Fill :data:`_VIEW_OPS` (the ops module is imported after this one)."""
    global _VIEW_OPS, _VIEW_NODES
    if not _VIEW_OPS:
        from . import ops  # noqa: PLC0415 - ops builds on this module

        _VIEW_OPS = _with_subclasses((ops.Slice, ops.Reshape, ops.Permute, ops.Expand))
        _VIEW_NODES = _VIEW_OPS | {InPlace, Restride}


def _note_rebase(seq: int) -> None:
    """Record that a tensor's history was rebased by the change made at ``seq``."""
    global _rebased, _last_rebase
    _know_view_ops()
    _rebased = True
    _last_rebase = seq


def _check_versions(fn: Function, t: Tensor) -> None:
    """Raise if an array ``fn``'s backward reads was changed in place after ``fn`` ran
    (what it reads: its declaration, ``reads_values``, ``keeps_input`` and ``reads_output``)."""
    if not fn.reads_values:
        return
    inputs = fn.inputs
    for i, a in enumerate(fn.saved):
        if a is None or not isinstance(inputs[i], Tensor) or not fn.keeps_input(i):
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


class InPlace(_Alias):
    """The node an in-place op leaves on the tensor it changed: its value is the result of
    the op (the input), passed on as an alias does, recorded from the tensor's previous node
    (``previous``). Ops recorded before the change still take their gradient to ``previous``."""

    __slots__ = ("previous",)
    name = "inplace"

    @property
    def op_name(self) -> str:
        return self.args


class Restride(InPlace):
    """The node a metadata-changing in-place op (``t_ transpose_ squeeze_ unsqueeze_``)
    leaves: the same memory shown with another shape. ``undo`` maps a tensor of the new
    layout back to the old one, so that a view taken before the change replays right."""

    __slots__ = ("undo",)


def _as_seen_by(t: Tensor, seq: int) -> Tensor:
    """The tensor as the op made at ``seq`` saw it: before the in-place changes since."""
    c = t._ctx
    while (c.__class__ is InPlace or c.__class__ is Restride) and c.seq > seq:
        t = c.previous
        c = t._ctx
    return t


def _is_view(t: Tensor) -> bool:
    """Whether ``t`` shows memory of another tensor (a slice, reshape, permute, expand)."""
    if t._ctx is not None:
        _know_view_ops()
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
    if c.__class__ is InPlace or c.__class__ is Restride:
        c = c.inputs[0]._ctx
    return c if c.__class__ in _VIEW_OPS else None


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
    if bc is not None and bc.seq < _last_rebase and bc.__class__ in _VIEW_NODES:
        _replay_view(base)  # a view of a view: its base first
        bc = base._ctx
    if (bc.__class__ is not InPlace and bc.__class__ is not Restride) or bc.seq < v.seq:
        return  # the base is as the view saw it
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
    old = _new(Tensor)
    old._data, old._dev, old.grad, old.name = data, t._dev, None, t.name
    old.requires_grad, old._ctx, old._uses = t.requires_grad, t._ctx, t._uses
    t._uses = 0  # the ops that used t so far used the old values: their uses move with them
    if fresh.requires_grad:
        node = InPlace.apply(fresh, args=f"{v.op_name} (replayed)")._ctx
        node.previous = old
        t._ctx, t.requires_grad = node, True
    else:
        t._ctx, t.requires_grad = None, False


def _before_restrides(base: Tensor, seq: int) -> Tensor:
    """``base`` in the layout it had at ``seq``: its metadata changes since (``t_()``,
    ``squeeze_()``, ...) undone, newest first (the values stay the current ones)."""
    c = base._ctx
    while (c.__class__ is InPlace or c.__class__ is Restride) and c.seq > seq:
        if c.__class__ is Restride:
            base = c.undo(base)
        c = c.previous._ctx
    return base


def _replay_if_stale(t: Tensor) -> None:
    """Replay ``t`` if it may be a view older than the latest in-place change (see above)."""
    c = t._ctx
    if c is not None and c.seq < _last_rebase and c.__class__ in _VIEW_NODES:
        _replay_view(t)


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
    wants = _State.grad_enabled and (
        t.requires_grad or any(isinstance(o, Tensor) and o.requires_grad for o in operands)
    )
    if not wants:
        with no_grad():
            r = compute(t, *operands)
        _write(t, r, name)
        return t
    if t._ctx is None and t.requires_grad:
        raise RuntimeError(
            f"{name}: a leaf tensor that requires grad (shape {tuple(t.shape)}) cannot be changed in place "
            "while gradients are recorded; make the change inside `with tga.no_grad():` (as an optimizer "
            "step does), or change a copy (x.clone())"
        )
    if _is_view(t):
        from . import ops  # noqa: PLC0415 - ops builds on this module

        v = _view_node(t) if t._ctx is not None else None
        if v is not None and not isinstance(v, ops.Expand):  # x[key], a reshape, a permute of x
            return _write_through_view(t, name, compute, operands, reads_old)
        if operator:
            return compute(t, *operands)
        raise RuntimeError(
            f"{name}: this tensor (shape {tuple(t.shape)}) is a view of another tensor's memory, and an "
            "in-place change of this view is not recorded for gradients; write through the tensor it views "
            "(x[idx] = value, x[idx] += value)"
        )
    old = _new(Tensor)
    old._data = t._data
    old._dev, old.grad, old.name = t._dev, None, t.name
    old.requires_grad, old._ctx, old._uses = t.requires_grad, t._ctx, t._uses
    t._uses = 0  # the ops that used t so far used the old value: their uses move with it
    # An operand that is t itself (x += x, x.copy_(x)) is its value before the change
    operands = tuple(old if o is t else o for o in operands)
    try:
        r = compute(_Copy.apply(old) if reads_old else old, *operands)
        r = _checked_result(t, r, name)
    except BaseException:
        t._uses = old._uses
        raise
    _write(t, r, name)
    if not r.requires_grad:  # (the result no longer depends on anything that requires grad)
        t._ctx, t.requires_grad = None, False
    else:
        node = InPlace.apply(r, args=name)._ctx  # (made after the change: ordered after it)
        node.previous = old
        t._ctx, t.requires_grad = node, True
    _note_rebase(_next_seq())
    return t


def _write_through_view(t: Tensor, name: str, compute: Callable[..., Tensor], operands: Sequence[Any],
                        reads_old: bool) -> Tensor:  # fmt: skip
    """``x[key].op_(...)`` (or of ``x.T``, ``x.reshape(...)``) as PyTorch records it: the
    result is stored into the tensor the view shows (``x[key] = result``; ``x`` becomes the
    result permuted or reshaped back; itself recorded), and the view becomes the same view
    of the new ``x``. Ops that used the view before keep its old history."""
    from . import ops  # noqa: PLC0415 - ops builds on this module

    v = _view_node(t)  # (t's own view op, or the one of its latest write or replay)
    base = v.inputs[0]
    value = _checked_result(t, compute(_Copy.apply(t) if reads_old else t, *operands), name)
    # (the base's own checks apply: a leaf that requires grad raises there)
    if isinstance(v, ops.Slice):
        base[v.args] = value
    else:  # a permute or reshape shows every element of the base once: the result replaces it
        if isinstance(v, ops.Reshape):
            whole = value.reshape(base.shape)
        else:  # (the permutation's own inverse, as its backward uses)
            whole = value.permute(ops.movement._inverse(tuple(v.args)))
        apply_inplace(base, name, _replaced_by, whole, reads_old=False)
    fresh = v.__class__.apply(base, args=v.args)
    old = _new(Tensor)
    old._data, old._dev, old.grad, old.name = t._data, t._dev, None, t.name
    old.requires_grad, old._ctx, old._uses = t.requires_grad, t._ctx, t._uses
    t._uses = 0
    if fresh.requires_grad:
        node = InPlace.apply(fresh, args=name)._ctx
        node.previous = old
        t._ctx, t.requires_grad = node, True
    else:
        t._ctx, t.requires_grad = None, False
    _note_rebase(_next_seq())
    return t


def apply_restride(t: Tensor, name: str, view: Callable[[Tensor], Tensor], undo: Callable[[Tensor], Tensor]) -> Tensor:
    """Make ``t`` show its memory as ``view(t)`` does: the in-place op ``name`` that changes
    only shape and strides (``t_ transpose_ squeeze_ unsqueeze_``). ``t`` keeps its identity
    and memory, its version is bumped, and, where gradients are recorded, its history is
    rebased onto the view (a :class:`Restride` node), as PyTorch does; ``undo`` is the view
    that maps the new layout back to the old one."""
    if t._data.__class__ is FreedArray:
        raise RuntimeError(f"{name}: the values of this tensor (shape {tuple(t.shape)}) were freed {t._data.when}")
    tracer = _State.tracer
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
        old = _new(Tensor)
        old._data = t._data
        old._dev, old.grad, old.name = t._dev, None, t.name
        old.requires_grad, old._ctx, old._uses = t.requires_grad, t._ctx, t._uses
        t._uses = 0  # the ops that used t so far used the old layout: their uses move with it
        r = view(old)
        node = Restride.apply(r, args=name)._ctx
        node.previous, node.undo = old, undo
        t._ctx, t._data = node, r._data
        if tracer is not None:
            tracer._bind(t, tracer.value(r))
        _note_rebase(_next_seq())
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
        old = _new(Tensor)
        old._data, old._dev, old.grad, old.name = t._data, t._dev, None, t.name
        old.requires_grad, old._ctx, old._uses = t.requires_grad, t._ctx, t._uses
        key = id(t)
        seq = _next_seq()
        _DETACHED[key] = (weakref.ref(t, lambda _r, key=key: _DETACHED.pop(key, None)), seq, old)
        _note_rebase(seq)
    t._ctx, t.requires_grad, t._uses = None, False, 0
    return t


def _detached_history(t: Tensor, fn: Function, i: int) -> Tensor | None:
    """The history ``t`` had when ``fn`` read it (as its input ``i``), if ``t`` was detached
    in place after that; else None. Raises, as PyTorch does, where ``fn`` kept ``t``."""
    seq = fn.seq
    entry = _DETACHED.get(id(t))
    if entry is None or entry[0]() is not t or entry[1] < seq:
        return None
    if fn.reads_values and fn.keeps_input(i):
        raise RuntimeError(
            f"backward: '{fn.op_name}' needs its input {i} of shape {tuple(t.shape)}, which was detached in place "
            "(detach_()) after the forward; use the out-of-place detach() instead (PyTorch raises here too)"
        )
    old = entry[2]
    if old._ctx is not None and old._ctx.seq > seq:
        old = _as_seen_by(old, seq)
    return old if old.requires_grad else None


def _replaced_by(old: Tensor, new: Tensor) -> Tensor:
    return new


def _checked_result(t: Tensor, r: Tensor, name: str) -> Tensor:
    if tuple(r.shape) != tuple(t.shape):
        raise RuntimeError(
            f"{name}: the result has shape {tuple(r.shape)}, but an in-place op cannot change the shape of "
            f"the tensor it writes ({tuple(t.shape)}); use the out-of-place op instead"
        )
    if r.dtype != t.dtype:
        if not np.can_cast(r.dtype, t.dtype, "same_kind"):
            raise RuntimeError(
                f"{name}: the result type {r.dtype} cannot be written into a tensor of type {t.dtype}; "
                "use the out-of-place op instead"
            )
        r = r.astype(t.dtype)
    return r


def _write(t: Tensor, r: Tensor, name: str) -> None:
    """Write ``r``'s values into ``t``'s array (same memory) and bump its version."""
    r = _checked_result(t, r, name)
    dst = t._data
    if _State.tracer is not None:  # a symbolic trace writes into the same buffer
        _State.tracer.write(t, None, r)
    if r._data is not dst:
        try:
            dst[...] = r._data
        except (ValueError, TypeError) as e:
            raise RuntimeError(
                f"{name}: cannot write into this tensor's array (shape {tuple(t.shape)}): {e}. An expanded "
                "tensor repeats one element in many places: write into a copy (x.clone()) instead"
            ) from e
    if t._tracks_versions:  # (not through ``.data``: PyTorch's untracked escape hatch)
        bump_version(dst)
