"""The op base class :class:`Function`: ``Function.apply``, op errors, and the early release
of values no backward step will read. (The package's own: ``tga.autograd.Function`` is
PyTorch's custom-Function API, :mod:`tinygrad_attn.autograd.function`, whose nodes are ops
of this class.)

One mechanism, one place. ``Function.apply`` checks the inputs, runs the op's forward
on raw arrays and, when a gradient is wanted, records the op as the output's graph node.
The node keeps what the graph pictures need, cheaply: the op (its class), its inputs,
its non-array arguments, the arrays it saved, and the :class:`Scope` it was made in.

This module imports no op and not the Tensor class: ``tinygrad_attn.tensors._tensor`` registers
the class (:func:`register_tensor`), and the in-place machinery above the ops registers
the view replay (:func:`register_view_replay`).
"""

from __future__ import annotations

import functools
import gc
import itertools
import math
import re
import sys
import threading
import traceback
import weakref
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from . import saved as _saved
from . import switches
from .bfloat16 import BFLOAT16
from .layout import of_operands as _laid_out_as_operands
from .overrides import _OFF as _TORCH_FUNCTION_OFF
from .quiet import FP_STATE as _FP_STATE
from .quiet import QUIET as _QUIET
from .switches import Hook, _State

if TYPE_CHECKING:
    from ..tensors._tensor import Tensor

# Registered by tinygrad_attn.tensors._tensor (register_tensor): the engine makes Tensors but does not
# import the class. ``TENSOR_NS``: the namespace of tensor ops a create_graph pass hands to
# each backward (tinygrad_attn.ops.tensor_namespace).
Tensor: Any = None
TENSOR_NS: Any = None
# Registered by tinygrad_attn.tensors.mutation.inplace: gives a view taken before its base changed in place
# the base's new history (called only once an in-place op rebased a tensor).
_replay_view: Callable[[Any], None] | None = None
# The seq of the latest in-place change that rebased a tensor's history (0: none yet; see
# note_rebase). A view recorded after it cannot show values its node does not know of, so
# ``Function.apply`` looks no further; while it is 0, the backward pass follows no history.
_last_rebase = 0


def register_tensor(tensor_class: type, tensor_ns: Any) -> None:
    """Called once by ``tinygrad_attn.tensors._tensor``: the class ops make, and the namespace of
    tensor ops that a backward pass with ``create_graph=True`` hands to each op."""
    global Tensor, TENSOR_NS
    Tensor, TENSOR_NS = tensor_class, tensor_ns


def add_uses(tensors: Sequence[Any], n: int = 1) -> None:
    """Count ``n`` more uses (fewer, if negative) of each tensor among ``tensors`` that
    requires grad. ``Tensor._uses`` is how many recorded ops read the tensor, exactly: the
    backward pass takes a tensor with one use as complete once that op sends its share, and
    the early release compares it with a reference count. It is counted in this module
    only: inline by ``Function.apply`` (every op), here for the nodes made elsewhere
    (``autograd.Function``) and for the roots of a backward pass (one use more while it runs)."""
    for t in tensors:
        if isinstance(t, Tensor) and t._requires_grad:
            t._uses += n


def register_view_replay(replay: Callable[[Any], None]) -> None:
    """Called once by ``tinygrad_attn.tensors.mutation.inplace``: how a view older than the latest in-place
    change of its base is brought up to date (see :data:`_replay_view`)."""
    global _replay_view
    _replay_view = replay


def note_rebase(seq: int) -> None:
    """Record that a tensor's history was rebased by the in-place change made at ``seq``."""
    global _last_rebase
    _last_rebase = seq


#: Intermediates of at least this many elements give their values back once nothing but
#: the graph holds them and no backward step reads them (smaller ones are not worth the
#: check); gradients of this size may be overwritten by the step that receives them.
FREE_MIN_SIZE = 1 << 14

# -- the cyclic collector and long graphs ------------------------------------------
# Graph nodes form no reference cycles (tests/engine/test_graph_gc.py): reference counting frees
# a graph, and the collector never finds garbage in one. Yet each full collection walks
# every live node, and while a long graph is built (a 200k-op loop) full collections
# come again and again: 45% of such a forward. So while a node recorded GC_LONG_GRAPH
# nodes ago is still alive, full collections are made 100x rarer (young generations
# are collected as before, and a full collection still comes after ~7M allocations);
# when that node dies, with its graph, the user's thresholds come back (unless the user
# changed them meanwhile). Only ``gc.set_threshold``'s third number changes: whether
# the collector is enabled stays the user's, except while a trace records (below).
GC_LONG_GRAPH = 0x2000  # checked every this many recorded ops: a power of two, so that
_GC_CHECK_BITS = GC_LONG_GRAPH - 1  # Function.apply tests only the low bits of each op's seq
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


# A trace (``symbolic.trace``) keeps everything it records alive until its program is built
# (tens of thousands of records, buffers, tensors and tuples), and none of it is garbage:
# each collection the allocations set off walks them again for nothing (a twentieth of a
# Seq2Seq trace). So the collector is off from the first recorded op to the built program,
# and back on after, unless the user had turned it off (reference counting frees everything
# else as before).
_pause_lock = threading.Lock()
_collector_pauses = 0  # traces in progress (in any thread) that found the collector on, or paused


def collector_paused(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` with the cyclic collector off while it runs (see above)."""

    @functools.wraps(fn)
    def run(*args: Any, **kw: Any) -> Any:
        global _collector_pauses
        with _pause_lock:
            mine = _collector_pauses > 0 or gc.isenabled()
            if mine:
                _collector_pauses += 1
                gc.disable()
        try:
            return fn(*args, **kw)
        finally:
            if mine:
                with _pause_lock:
                    _collector_pauses -= 1
                    if _collector_pauses == 0:
                        gc.enable()

    return run


# -- the op base class ------------------------------------------------------------
# NumPy returns 0-d results (a full sum, a product of two 0-d arrays) as scalars such as
# ``numpy.float32``; a tensor's data is always an array (in-place updates, ``__dlpack__``).
_NUMPY_SCALARS = frozenset(t for t in np.sctypeDict.values() if issubclass(t, np.generic))
_as_ndarray = np.asarray
_NUMBER_TYPES = frozenset((int, float, bool))
_new = object.__new__  # makes an instance without calling __init__ (Function and Tensor have none to run)
_next_seq = itertools.count(1).__next__  # creation order of recorded ops; leaves count as 0

#: Leaves whose ``requires_grad`` was switched: ``id -> (weakref, [(seq then, flag), ...])``. An op
#: recorded while such a leaf did not require grad read it as a constant and sends it no gradient,
#: as PyTorch's (whose graph has no edge to it): ``y = x * w; x.requires_grad_(); y.backward()``
#: leaves ``x.grad`` None.
grad_switched_on: dict[int, tuple[Any, list[tuple[int, bool]]]] = {}


def note_grad_switched_on(t: Any, flag: bool = True) -> None:
    """Called when leaf ``t``'s ``requires_grad`` changes to ``flag`` (see :data:`grad_switched_on`)."""
    key = id(t)
    entry = grad_switched_on.get(key)
    if entry is not None and entry[0]() is t:
        entry[1].append((_next_seq(), flag))
        return

    def forget(ref: weakref.ref, key: int = key) -> None:
        if (entry := grad_switched_on.get(key)) is not None and entry[0] is ref:
            del grad_switched_on[key]

    grad_switched_on[key] = (weakref.ref(t, forget), [(_next_seq(), flag)])


def read_as_constant(t: Any, fn: Any) -> bool:
    """Whether the op ``fn`` was recorded while leaf ``t`` did not require grad."""
    entry = grad_switched_on.get(id(t))
    if entry is None or entry[0]() is not t or t._ctx is not None:
        return False
    events = entry[1]
    wanted = not events[0][1]  # (before the first change: the other state)
    for seq, flag in events:
        if seq > fn.seq:
            break
        wanted = flag
    return not wanted


#: Ops computed in several steps (a series, a ratio of exponentials, a normalisation) whose
#: float16 forward runs in float32 and is rounded once at the end, as PyTorch computes
#: float16 on CPU and CUDA ("opmath"): in float16 throughout, each step's rounding adds up
#: (erf 90 units off, softmax 5, sigmoid 2). By op name, the graph's label of the op.
HALF_IN_FLOAT32 = frozenset(
    "sigmoid erf erfcx erfinv sinc lgamma polygamma igamma i0 i1 i0e i1e softmax log_softmax masked_softmax "
    "additive_score layer_norm gelu cross_entropy cross_entropy_kept attention".split()
) | frozenset(  # (LAPACK's ops, which have no float16 routine: only an empty float16 input reaches them, as in PyTorch)
    "det logabsdet inv solve cholesky eigvalsh eigh_vectors eigvals eig_vectors svd_values qr_values lu_packed".split()
)
#: The one rule of PyTorch's "opmath" here: the low-precision float dtypes whose ops compute in
#: float32 and round once at their end, and which ops. float16: those of :data:`HALF_IN_FLOAT32`
#: (NumPy's float16 loops compute each element in float32 already, and its sums accumulate in
#: float32). bfloat16 (``engine/bfloat16.py``): every op but views and casts, forward and
#: backward, as PyTorch's CPU kernels compute bfloat16 (reductions and products accumulate in
#: float32, rounded once), since NumPy has no bfloat16 kernels: ml_dtypes' ufuncs are 2 to 9
#: times slower than a float32 round trip, its sums accumulate in bfloat16 (a sum of 1e5
#: normals 12 units off) and its matmul answers float32.
COMPUTED_IN_FLOAT32: dict[str, frozenset[str] | None] = {"float16": HALF_IN_FLOAT32, "bfloat16": None}  # None: all


_HALF_OF: dict[Any, Any] = {}  # device -> its float16 dtype (None: it has none, as array_api_strict)
_HALF_UNKNOWN = object()
_NDARRAY = np.ndarray


def _half_dtype(device: Any) -> Any:
    try:
        return device.dtype(np.float16)
    except AttributeError:
        return None


def _half_in_float32(forward: Callable[..., Any]) -> Callable[..., Any]:
    """``forward`` computing float16 inputs in float32, its float32 result rounded to float16."""

    @functools.wraps(forward)
    def run(self: Function, ns: Any, *datas: Any) -> Any:
        half = _HALF_OF.get(ns.device, _HALF_UNKNOWN)
        if half is _HALF_UNKNOWN:
            half = _HALF_OF[ns.device] = _half_dtype(ns.device)
        if half is None or getattr(datas[0], "dtype", None) != half:
            return forward(self, ns, *datas)
        return _rounded(forward, self, ns, datas, half)

    return run


#: The dtype the float32 forward running in this thread rounds its result to (:func:`rounded_to`).
_ROUNDING = threading.local()


def rounded_to() -> Any:
    """The low-precision dtype (float16, bfloat16) whose inputs the forward running now computes in
    float32 and whose result it rounds to at its end (:data:`COMPUTED_IN_FLOAT32`), or None. For an op
    whose PyTorch kernel keeps an intermediate in the input's dtype (a buffer of ``scalar_t``): it rounds
    that intermediate to this dtype where PyTorch's does (``log_softmax``'s sums of exponentials)."""
    return getattr(_ROUNDING, "low", None)


def _rounded(forward: Callable[..., Any], fn: Function, ns: Any, datas: Sequence[Any], low: Any) -> Any:
    """``forward`` of ``datas`` computed in float32 (its inputs of dtype ``low`` widened), the float32
    result rounded to ``low``: :data:`COMPUTED_IN_FLOAT32`'s one rule."""
    single = ns.device.dtype(np.float32)
    up = [ns.astype(d, single) if getattr(d, "dtype", None) == low else d for d in datas]
    outer = getattr(_ROUNDING, "low", None)
    _ROUNDING.low = low
    try:
        out = forward(fn, ns, *up)
    finally:
        _ROUNDING.low = outer
    if getattr(out, "dtype", None) != single:
        return out
    with np.errstate(over="ignore", invalid="ignore"):  # (beyond the dtype's range: inf, as PyTorch's; NaN stays)
        return ns.astype(out, low)


def forward_in_float32(fn: Function, ns: Any, datas: Sequence[Any]) -> Any:
    """``fn``'s forward of bfloat16 ``datas`` under :data:`COMPUTED_IN_FLOAT32` (``Function.apply``
    calls it where an input is bfloat16: a check there costs less than a wrapper on every op)."""
    if not fn.computes_in_float32 or fn.view:
        return fn.forward(ns, *datas)
    return _rounded(type(fn).forward, fn, ns, datas, BFLOAT16)


#: The half-precision NumPy dtypes (float16, and bfloat16 where ml_dtypes gives it), by dtype
_HALVES: dict[Any, Any] = {np.dtype(np.float16): np.dtype(np.float16)}
if BFLOAT16 is not None:
    _HALVES[BFLOAT16] = BFLOAT16


def _half_with_number(fn: Function, ns: Any, a: Any, b: Any) -> Any:
    """``fn``'s forward of a float16 or bfloat16 array and a Python number as PyTorch's CPU kernels compute
    it: the number read at float32 (``number_in_float32``: mul, div) or rounded to the array's dtype (the
    rest), the op in float32, the result rounded once."""
    low = _HALVES[(a if a.__class__ is _NDARRAY else b).dtype]

    def number(v: Any) -> Any:
        if fn.number_in_float32 or v.__class__ is not float:
            return v
        with np.errstate(over="ignore"):
            return float(np.asarray(v).astype(low))  # (the number in the array's dtype, then read at float32)

    a = number(a) if a.__class__ in _NUMBER_TYPES else a
    b = number(b) if b.__class__ in _NUMBER_TYPES else b
    if not fn.computes_in_float32 or fn.view:
        return fn.forward(ns, a, b)
    return _rounded(type(fn).forward, fn, ns, (a, b), low)


def _forward_with_number(fn: Function, ns: Any, a: Any, b: Any) -> Any:
    """``fn``'s forward of an array and a Python number: a float16 or bfloat16 array by PyTorch's rule of
    the number (:func:`_half_with_number`), another with the number as the device computes with it fastest
    (``ns.scalar``; the node saves it as given)."""
    first = a if a.__class__ is _NDARRAY else b
    if _HALVES.get(getattr(first, "dtype", None)) is not None:
        return _half_with_number(fn, ns, a, b)
    if b.__class__ in _NUMBER_TYPES:
        b = ns.scalar(b, a)
    elif a.__class__ in _NUMBER_TYPES:
        a = ns.scalar(a, b)
    return fn.forward(ns, a, b)


def _give_back_uses(inputs: Sequence[Any]) -> None:
    for t in inputs:
        if isinstance(t, Tensor) and t._requires_grad:
            t._uses -= 1


def forward_of(fn: Function, ns: Any, *datas: Any) -> Any:
    """``fn``'s forward of ``datas`` as ``Function.apply`` computes it (bfloat16 ones in float32:
    :data:`COMPUTED_IN_FLOAT32`), for a traced program's replay, which calls forwards on arrays."""
    if BFLOAT16 is not None and any(map(is_bfloat16, datas)):
        return forward_in_float32(fn, ns, datas)
    return fn.forward(ns, *datas)


def is_bfloat16(x: Any) -> bool:
    """Whether ``x`` is a bfloat16 array (only NumPy holds them: ``engine/bfloat16.py``)."""
    return x.__class__ is _NDARRAY and x.dtype is BFLOAT16


def backward_of(fn: Function, g: Any, ns: Any, inputs: Sequence[Any], out: Any) -> Sequence[Any]:
    """``fn.backward``, of a bfloat16 gradient computed in float32 (its inputs, output and gradient
    widened) under :data:`COMPUTED_IN_FLOAT32`; the engine rounds each input's share to the
    input's dtype (``_in_dtype_of``)."""
    if g.__class__ is not _NDARRAY or g.dtype is not BFLOAT16 or not fn.computes_in_float32:
        return fn.backward(g, ns, inputs, out)
    single = ns.device.dtype(np.float32)

    def up(x: Any) -> Any:
        return ns.astype(x, single) if x.__class__ is _NDARRAY and x.dtype is BFLOAT16 else x

    return fn.backward(up(g), ns, [up(x) for x in inputs], up(out))


#: The ops of a complex tensor's conjugate and real part (``"conj"``, ``"real"``), which
#: ``tinygrad_attn.ops.complex`` registers here at import (the engine imports no op).
COMPLEX_PARTS: dict[str, Any] = {}


def _conjugated_for_complex(backward: Callable[..., Any]) -> Callable[..., Any]:
    """``backward`` under PyTorch's convention for complex numbers (the conjugate Wirtinger
    derivative: a real loss's gradient is ``dL/dx + i dL/dy``): where the gradient is complex,
    the formula reads the conjugates of its inputs and output, so that a holomorphic op's
    ``g * f'(z)`` becomes ``g * conj(f'(z))`` (``f(conj z) = conj f(z)`` for every op with real
    coefficients). Real gradients take the formula as written."""

    @functools.wraps(backward)
    def run(self: Function, g: Any, ns: Any, inputs: Sequence[Any], out: Any) -> Sequence[Any]:
        if getattr(getattr(g, "dtype", None), "kind", None) != "c":  # (array_api_strict's dtypes have no kind)
            return backward(self, g, ns, inputs, out)
        return backward(self, g, ns, [_conjugate(ns, x) for x in inputs], _conjugate(ns, out))

    return run


def _conjugate(ns: Any, x: Any) -> Any:
    if x.__class__ is complex:
        return x.conjugate()
    if x is None or x.__class__ is FreedArray or getattr(getattr(x, "dtype", None), "kind", None) != "c":
        return x
    return ns.apply(COMPLEX_PARTS["conj"], x)


class SparseData:
    """The base of a sparse tensor's data (``tensors/sparse.py``'s COO), which the backward pass
    accumulates as a sparse gradient; ``tensor_class`` is the tensor class that holds it."""

    __slots__ = ()
    tensor_class: Any = None


def _refuse_layout(cls: Any, t: Any) -> None:
    """PyTorch's error for an op without a kernel for a sparse operand, named as ATen's (``aten::exp``)."""
    backend = "SparseCUDA" if t._dev.public.type == "cuda" else "SparseCPU"
    raise NotImplementedError(
        f"Could not run 'aten::{cls.op_name_of()}' with arguments from the '{backend}' backend. This could be "
        f"because the operator doesn't exist for this backend (a sparse tensor of shape {tuple(t.shape)})"
    )


def _views_inference(inputs: Sequence[Any]) -> bool:
    """Whether a view's operand is an inference tensor (made inside ``inference_mode``)."""
    return any(isinstance(t, Tensor) and switches.is_inference_tensor(t) for t in inputs)


def _refuse_saved_inference(fn: Function, inputs: Sequence[Any]) -> None:
    """PyTorch's error for an inference tensor whose values a recorded op's backward reads (not its shape only)."""
    for i, t in enumerate(inputs):
        if isinstance(t, Tensor) and switches.is_inference_tensor(t) and fn.reads_values and fn.keeps_input(i):
            raise RuntimeError(
                "Inference tensors cannot be saved for backward. Please do not use Tensors created in inference mode "
                f"in computation tracked by autograd ({fn.op_name_of()}: input {i} of shape {tuple(t.shape)}). To work "
                "around this, you can make a clone to get a normal tensor and use it in autograd."
            )


class Function:
    """A differentiable op. Subclasses give ``forward`` (on arrays) and ``backward``.

    - ``forward(self, ns, *datas)``: the device's op namespace (``dev.ops``: the array
      functions, the same names backward's ``ns`` has; the array module itself is
      ``ns.device.xp``) and the inputs' arrays (Python scalars stay scalars); non-array
      arguments are in ``self.args``. Returns one array.
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
    - ``view``: True where the output may share the memory of input 0 (a slice, reshape,
      permute, expand), so that an in-place change of either shows in the other.
    - ``rebases``: True only for the node an in-place op leaves on the tensor it changed
      (``ops.alias.InPlace``), whose ``previous`` is the tensor as it was before.
    - ``no_edge``: the positions of the inputs that are no edges of PyTorch's node (an index, a
      condition: inputs its derivative formula does not differentiate), left out of ``next_functions``.
    """

    # (``_state``: a user's metadata, hooks and packed saved tensors, set on first use: engine/saved.py)
    # (``without_grad``: set only on an unrecorded view op, True where grad mode was off: see Function.apply)
    __slots__ = ("inputs", "args", "saved", "ctx", "scope", "trace", "seq", "_face", "_state", "without_grad",
                 "__weakref__")  # fmt: skip
    differentiable = True
    #: Whether the op takes a sparse tensor (``tensors/sparse.py``); every other op refuses one
    takes_sparse = False
    keep: tuple[int, ...] | str | None = None
    reads_output = True
    reads_values = True
    view = False
    rebases = False
    no_edge: tuple[int, ...] = ()
    #: An elementwise op's C expression over its operands (see ``ops/__init__.py``)
    elementwise: str | None = None
    #: The inputs whose layouts in memory decide the result's, as PyTorch's TensorIterator lays out
    #: a pointwise op's result (``slice(0, None)``: all; every op with an ``elementwise`` expression)
    laid_out_as: slice | None = None
    #: Whether a complex gradient's backward reads the conjugates of the inputs and output (see
    #: :func:`_conjugated_for_complex`); False for the ops that are not holomorphic (``abs``, ``real``).
    conjugate_backward = True
    #: Whether a bfloat16 op computes in float32, rounded at its end (:data:`COMPUTED_IN_FLOAT32`);
    #: False for the casts (a view, whose result is its input's memory, never does).
    computes_in_float32 = True
    # Whether a Python number operand of a float16 or bfloat16 array is read at float32 (PyTorch's mul and div
    # kernels read it as their "opmath" scalar: x * 0.1 multiplies by float32(0.1)); the other ops round it
    # to the array's dtype first, PyTorch's wrapped-number rule (x + 0.1 adds float16(0.1)). Either way the
    # op computes in float32 and rounds once.
    number_in_float32 = False

    def __init_subclass__(cls, **kw: Any) -> None:
        super().__init_subclass__(**kw)
        if cls.__dict__.get("elementwise") is not None and "laid_out_as" not in cls.__dict__:
            cls.laid_out_as = slice(0, None)
        if "forward" in cls.__dict__ and cls.op_name_of() in HALF_IN_FLOAT32:
            cls.forward = _half_in_float32(cls.__dict__["forward"])
        if "backward" in cls.__dict__ and cls.conjugate_backward:
            cls.backward = _conjugated_for_complex(cls.__dict__["backward"])

    def keeps_input(self, i: int) -> bool:
        """Whether backward reads the values of input ``i`` (so changing it in place after
        the forward must raise). Ops whose needs depend on more than ``keep`` override it."""
        keep = self.keep
        if keep is None:
            return True
        if keep == "other":
            other = self.inputs[1 - i]
            return isinstance(other, Tensor) and other._requires_grad
        return i in keep

    @classmethod
    def apply(cls, *inputs: Any, args: Any = None) -> Tensor:
        # Every op runs through here, so it is written for speed: locals, slot writes, few helper calls.
        fn = _new(cls)
        fn.args = args
        fn.ctx = None  # forward may set it
        numbers = False
        result_class = Tensor
        if len(inputs) == 1 and inputs[0].__class__ is Tensor:  # most ops: one tensor, no loop
            t = inputs[0]
            # A view taken before its base changed in place shows the new values: replay it.
            # (_last_rebase is 0 until an in-place op rebases a tensor.)
            if _last_rebase and (c := t._ctx) is not None and c.seq < _last_rebase and (c.view or c.rebases):
                _replay_view(t)
            dev = t._dev
            need = t._requires_grad
            if need:
                t._uses += 1
            datas = [t._data]
        else:
            dev = None
            need = False
            datas = []  # (datas.append, not a saved bound method: Python 3.11+ makes it a direct call)
            for t in inputs:
                if isinstance(t, Tensor):
                    if t.__class__ is not Tensor:
                        if t._refuses_ops and not cls.takes_sparse:  # (a sparse tensor: its own ops only)
                            _refuse_layout(cls, t)
                        if t._subclass_results and result_class is Tensor:
                            if not (_TORCH_FUNCTION_OFF[0] or _TORCH_FUNCTION_OFF[1]):  # (DisableTorchFunction*)
                                result_class = t.__class__  # (a user's subclass: PyTorch's results are of it)
                    if _last_rebase and (c := t._ctx) is not None and c.seq < _last_rebase:
                        if c.view or c.rebases:
                            _replay_view(t)
                    if t._dev is not dev:
                        if dev is not None:
                            dev = _mixed_device(cls, inputs, dev, t._dev)
                        else:
                            dev = t._dev
                    if t._requires_grad:
                        need = True
                        t._uses += 1  # (given back below if nothing is recorded)
                    datas.append(t._data)
                else:
                    datas.append(t)
                    numbers = True
        ns = dev.ops
        quiet = _FP_STATE.set(_QUIET)  # (PyTorch computes log(0) without a warning: engine/quiet.py)
        try:
            # Spelled out for one and two inputs (a call with ``*datas`` costs more than a small op); bfloat16 in
            # float32 (COMPUTED_IN_FLOAT32: the first array decides, operands are of one dtype by now)
            n = len(datas)
            if dev.meta:  # (no values: a placeholder of the result's shape, dtype and strides, runtime/meta.py)
                out_data = ns.meta_forward(fn, ns, datas)
            elif n == 1:
                a = datas[0]
                if a.__class__ is _NDARRAY and a.dtype is BFLOAT16:
                    out_data = forward_in_float32(fn, ns, datas)
                else:
                    out_data = fn.forward(ns, a)
            elif n == 2:
                a, b = datas
                if numbers:
                    out_data = _forward_with_number(fn, ns, a, b)
                elif a.__class__ is _NDARRAY and a.dtype is BFLOAT16:
                    out_data = forward_in_float32(fn, ns, datas)
                else:
                    out_data = fn.forward(ns, a, b)
            else:
                bf16 = BFLOAT16 is not None and any(map(is_bfloat16, datas))
                out_data = forward_in_float32(fn, ns, datas) if bf16 else fn.forward(ns, *datas)
        except (ValueError, TypeError, IndexError) as e:
            if getattr(e, "names_op", False):  # the op's own message already names it and the shapes
                raise
            raise _op_error(cls, inputs, e) from e
        finally:
            _FP_STATE.reset(quiet)
        if out_data.__class__ in _NUMPY_SCALARS:  # NumPy gives 0-d results as scalars
            out_data = _as_ndarray(out_data)
        elif cls.laid_out_as is not None and out_data.ndim > 1 and not dev.meta:  # (a placeholder: its own layout)
            if cls.elementwise is None or n - numbers > 1:  # (NumPy's ufunc of one array and numbers keeps its layout)
                out_data = _laid_out_as_operands(dev, out_data, datas[cls.laid_out_as])
        out = _new(result_class)
        out._data = out_data
        out._dev = dev
        out._grad = None
        out.name = None
        out._uses = 0
        # (inside inference_mode nothing is recorded, even under enable_grad: PyTorch's inference tensors)
        if need and (not switches._grad_off_threads or _State._grad) and cls.differentiable and not _State.inference:
            out._requires_grad = True
            out._ctx = fn
            fn.inputs = inputs
            fn.saved = datas
            fn.scope = _State.scope
            fn.seq = _next_seq()
            if _State.inference_tensors:  # (PyTorch's inference tensors are never kept for a backward)
                _refuse_saved_inference(fn, inputs)
            if not fn.seq & _GC_CHECK_BITS:  # every GC_LONG_GRAPH recorded ops
                _gc_long_graph(fn)
            if out_data.size >= FREE_MIN_SIZE and _State.releasing:  # a large new array: make room
                _release_unread(inputs)
            if _saved.packing:  # saved-tensor hooks are set (in some thread)
                _saved.pack_node(fn, inputs, out)
        else:
            out._requires_grad = False
            out._ctx = None
            if cls.view:  # an unrecorded view remembers what it shows: an in-place change of it that a
                fn.inputs = inputs  # gradient wants later still writes its base (PyTorch: `v += w`)
                fn.without_grad = bool(switches._grad_off_threads) and not _State._grad
                out._base = fn
            if need:  # nothing was recorded: take back the uses counted above, so they stay exact
                _give_back_uses(inputs)
        if _State.inference or (cls.view and _State.inference_tensors and _views_inference(inputs)):
            switches.mark_inference(out)  # (a view of an inference tensor is one too, as PyTorch's)
        if switches._observing and (hook := _State.hook) is not None:  # a tracer, anomaly detection, the explorer
            hook.op(fn, inputs, out)
        return out

    def forward(self, ns: Any, *datas: Any) -> Any:  # pragma: no cover - abstract
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
        return self.saved is None or self.saved.__class__ is ShapesOnly

    @property
    def next_functions(self) -> tuple[tuple[Any, int], ...]:
        """PyTorch's edges of the graph: for each tensor input, the node that made it, an
        :class:`AccumulateGrad` for a leaf that requires grad, or None, each with output 0."""
        out: list[tuple[Any, int]] = []
        skip = self.no_edge
        for i, t in enumerate(self.inputs):
            if skip and i in skip:
                continue
            if getattr(t, "_ctx", None) is not None:
                out.append((t._ctx, 0))
            elif getattr(t, "requires_grad", False):
                out.append((AccumulateGrad(t), 0))
            elif hasattr(t, "_ctx"):
                out.append((None, 0))
        return tuple(out)

    def __repr__(self) -> str:
        """As PyTorch prints a ``grad_fn``: ``<MulBackward0 object at 0x...>``."""
        return f"<{grad_fn_name(self)} object at {id(self):#x}>"


#: PyTorch's words for reading what a graph no longer keeps (a second backward, ``_saved_self``).
FREED_MESSAGE = (
    "Trying to backward through the graph a second time (or directly access saved tensors after they have already "
    "been freed). Saved intermediate values of the graph are freed when you call .backward() or autograd.grad(). "
    "Specify retain_graph=True if you need to backward through the graph a second time or if you need to access "
    "saved tensors after calling backward."
)


class AccumulateGrad:
    """What ``next_functions`` shows for a leaf that requires grad, as PyTorch's: the node that
    adds into ``variable.grad``, one per leaf while any is held (``is`` holds between two reads)."""

    __slots__ = ("variable", "_metadata", "__weakref__")

    def __new__(cls, variable: Any) -> AccumulateGrad:
        ref = _ACCUMULATORS.get(id(variable))
        if ref is not None and ref.variable is variable:
            return ref
        self = object.__new__(cls)
        self.variable, self._metadata = variable, None
        _ACCUMULATORS[id(variable)] = self
        return self

    @property
    def next_functions(self) -> tuple:
        return ()

    @property
    def metadata(self) -> dict:
        if self._metadata is None:
            self._metadata = {}
        return self._metadata

    def name(self) -> str:
        return "torch::autograd::AccumulateGrad"

    def register_prehook(self, fn: Callable[[tuple], Any]) -> Any:
        """``fn((grad,))`` before the gradient goes into ``variable.grad``; a tuple it returns
        replaces the gradient (the leaf's tensor hooks run first, as PyTorch's)."""

        def hook(g: Any) -> Any:
            r = fn((g,))
            return None if r is None else r[0]

        return self.variable.register_hook(hook)

    def register_hook(self, fn: Callable[[tuple, tuple], Any]) -> Any:
        """``fn((), (grad,))`` once the gradient is in ``variable.grad``."""

        def hook(v: Any) -> None:  # (a node hook's result is not the leaf hook's to return)
            fn((), (v.grad,))

        return self.variable.register_post_accumulate_grad_hook(hook)

    def __repr__(self) -> str:
        return f"<AccumulateGrad object at {id(self):#x}>"


_ACCUMULATORS: weakref.WeakValueDictionary = weakref.WeakValueDictionary()  # id(leaf) -> its AccumulateGrad

#: PyTorch's names of the saved inputs of a node, by its class name (the rest: ``self``, ``other``)
_SAVED_INPUT_NAMES = {"MmBackward0": ("self", "mat2"), "BmmBackward0": ("self", "mat2"), "DotBackward0": ("self", "tensor"),
                      "PowBackward0": ("self", "exponent"), "PowBackward1": ("self", "exponent"),
                      "PowBackward2": ("self", "exponent"), "AddmmBackward0": ("self", "mat1", "mat2")}  # fmt: skip


class BackwardNode:
    """What ``t.grad_fn`` hands out: a node of the graph under PyTorch's class name
    (``type(y.grad_fn).__name__`` is ``MulBackward0``, ``AddmmBackward0``, ...), with
    ``name()`` and ``next_functions`` as PyTorch's; anything else is read from the op that
    made the tensor. One face per op, so ``y.grad_fn is y.grad_fn``."""

    __slots__ = ("_node", "_out", "__weakref__")

    def __init__(self, node: Function) -> None:
        self._node = node
        self._out = None  # a weak reference to the tensor node made, once known

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_saved_") or name.startswith("_raw_saved_"):
            return self._read_saved(name)
        try:
            return getattr(self._node, name)
        except AttributeError:
            ctx = getattr(self._node, "fctx", None)  # (a custom Function's node is its ctx in PyTorch)
            if ctx is None:
                raise
            return getattr(ctx, name)

    def __dir__(self) -> list[str]:
        return sorted(
            set(super().__dir__()) | set(self._kept_names()) | {"metadata", "register_hook", "register_prehook"}
        )

    # -- what the node keeps for its backward, as PyTorch's ``_saved_<name>`` attributes ---------
    def _kept_names(self) -> dict[str, Any]:
        """``_saved_<name>`` -> the input position it reads (``"result"``: the output)."""
        node = self._node
        if not isinstance(node, Function) or not getattr(node, "reads_values", False):
            return {}
        if op_scope(node) is not None:
            return {}  # (an op written from others: what its steps keep is not what PyTorch's node saves)
        names = _SAVED_INPUT_NAMES.get(type(self).__name__, ("self", "other"))
        out: dict[str, Any] = {}
        inputs = getattr(node, "inputs", None) or ()
        for i, t in enumerate(inputs[: len(names)]):
            if node.keeps_input(i) and (isinstance(t, Tensor) or t.__class__ in _NUMBER_TYPES):
                out["_saved_" + names[i]] = i
        if node.reads_output:
            out["_saved_result"] = "result"
        return out

    def _read_saved(self, name: str) -> Any:
        raw = name.startswith("_raw_saved_")
        where = self._kept_names().get("_saved_" + name[len("_raw_saved_") :] if raw else name)
        if where is None:
            raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")
        node = self._node
        if raw:
            return SavedTensor(self, "_saved_" + name[len("_raw_saved_") :])
        if node.saved is None:
            raise RuntimeError(FREED_MESSAGE)
        st = getattr(node, "_state", None)
        if st is not None and st.unpack is not None:
            packed = st.packed_out if where == "result" else (st.packed or {}).get(where, _saved._NOTHING)
            if packed is not _saved._NOTHING:
                return _saved.unpack_one(st.unpack, packed, Tensor)
        if where == "result":
            out = self._out() if self._out is not None else None
            if out is None:
                raise RuntimeError(f"{self.name()}: the tensor it made no longer exists")
            return out
        t = node.inputs[where]
        if not isinstance(t, Tensor):  # (a number, which PyTorch keeps as a tensor)
            return sys.modules[__name__.split(".", 1)[0]].tensor(t)
        return t

    # -- a user's state: metadata and hooks ------------------------------------------------------
    @property
    def metadata(self) -> dict:
        """A dict of this node's own, kept as long as the node (PyTorch's ``Node.metadata``)."""
        return _saved.state_of(self._node).metadata

    def register_hook(self, fn: Callable[[tuple, tuple], Any]) -> Any:
        """``fn(grad_inputs, grad_outputs)`` after this node's backward runs; a tuple it returns
        replaces ``grad_inputs`` (one per input of ``next_functions``)."""
        return _node_handle(_saved.state_of(self._node).post_hooks, fn)

    def register_prehook(self, fn: Callable[[tuple], Any]) -> Any:
        """``fn(grad_outputs)`` before this node's backward runs; a tuple it returns replaces them."""
        return _node_handle(_saved.state_of(self._node).pre_hooks, fn)

    def name(self) -> str:
        n = type(self).__name__
        return "torch::autograd::" + n if n in ("CopySlices", "CopyBackwards", "NotImplemented") else n

    @property
    def next_functions(self) -> tuple[tuple[Any, int], ...]:
        node = self._node
        if type(node).__name__ in ("InPlace", "Restride"):  # (the op that made the new values is this node's own)
            inner = getattr(node.inputs[0], "_ctx", None) if node.inputs else None
            node = inner if inner is not None else node
        out = tuple(
            (backward_node(n), _output_number(n)) if isinstance(n, Function) else (n, i) for n, i in _op_edges(node)
        )
        inputs = getattr(node, "inputs", None) or ()
        if type(node).__name__ == "Affine" and len(out) in (2, 3):
            # (a linear layer: PyTorch's node is addmm(bias, x, weight.t()) or mm(x, weight.t()))
            w = out[1] if out[1][0] is None else (_transpose_node(node, out[1][0]), 0)
            return (out[2], out[0], w) if len(out) == 3 else (out[0], w)
        if (type(node).__name__ == "Where" and node is self._node and len(inputs) == 3 and len(out) < 2
                and len(out) == sum(hasattr(t, "_ctx") for t in inputs[1:]) and op_scope(node) is None):  # fmt: skip
            # (a number operand: PyTorch's where wraps it in a tensor that needs no gradient, a None edge)
            edges = iter(out)
            return tuple(next(edges) if hasattr(t, "_ctx") else (None, 0) for t in inputs[1:])
        if type(self).__name__ in _NUMBER_AS_TENSOR and len(inputs) == 2 and len(out) == 1:
            number_last = not hasattr(inputs[1], "shape")
            if number_last or type(self).__name__ in ("MulBackward0", "AddBackward0"):
                out += ((None, 0),)  # (PyTorch wraps the number in a tensor that needs no gradient: x * 2)
        return out

    def __repr__(self) -> str:
        return f"<{type(self).__name__} object at {id(self):#x}>"


class TransposeNode:
    """The ``TBackward0`` node PyTorch's linear layer puts between its product and its weight
    (``weight.t()``), where ours reads the weight directly: one per linear node."""

    __slots__ = ("_next", "_metadata", "__weakref__")

    def __init__(self, edge: Any) -> None:
        self._next, self._metadata = edge, None

    @property
    def next_functions(self) -> tuple:
        return ((self._next, 0),)

    @property
    def metadata(self) -> dict:
        if self._metadata is None:
            self._metadata = {}
        return self._metadata

    def name(self) -> str:
        return "TBackward0"

    def register_hook(self, fn: Callable[..., Any]) -> Any:
        raise NotImplementedError("TBackward0.register_hook: hooks on the transpose of a linear layer's weight")

    register_prehook = register_hook

    def __repr__(self) -> str:
        return f"<TBackward0 object at {id(self):#x}>"


TransposeNode.__name__ = TransposeNode.__qualname__ = "TBackward0"
_TRANSPOSES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # linear node -> its TBackward0


def _transpose_node(node: Function, edge: Any) -> TransposeNode:
    t = _TRANSPOSES.get(node)
    if t is None or t._next is not edge:
        t = _TRANSPOSES[node] = TransposeNode(edge)
    return t


def _node_handle(hooks: dict, fn: Callable[..., Any]) -> Any:
    handle = _saved.HookHandle(hooks)
    hooks[handle.id] = fn
    return handle


class SavedTensor:
    """``node._raw_saved_<name>``: a handle on one saved tensor (PyTorch's ``SavedTensor``)."""

    __slots__ = ("_face", "_name")

    def __init__(self, face: BackwardNode, name: str) -> None:
        self._face, self._name = face, name

    def register_hooks(self, pack: Callable[[Any], Any], unpack: Callable[[Any], Any]) -> None:
        """Pack the saved tensor now, and read it back through ``unpack`` from now on."""
        node = self._face._node
        where = self._face._kept_names()[self._name]
        if node.saved is None:
            raise RuntimeError(FREED_MESSAGE)
        st = _saved.state_of(node)
        if st.unpack is not None and st.unpack is not unpack and (st.packed or st.packed_out is not _saved._NOTHING):
            raise RuntimeError("SavedTensor.register_hooks: this tensor already has hooks: hooks can only be set once")
        value = getattr(self._face, self._name)
        packed = _saved.pack_one(pack, value)
        st.unpack = unpack
        if where == "result":
            st.packed_out = packed
        else:
            st.packed = dict(st.packed or {})
            st.packed[where] = packed

    def __repr__(self) -> str:
        return f"<SavedTensor object at {id(self):#x}>"


def _within(inner: Any, scope: Any) -> bool:
    """Whether scope ``inner`` is ``scope`` or inside it (an op written from others it calls)."""
    while inner is not None:
        if inner is scope:
            return True
        inner = inner.parent
    return False


def _op_edges(node: Function) -> list[tuple[Any, int]]:
    """``node.next_functions`` with the inner nodes of an op written from others (``mean``: a sum
    and a product) passed through, as PyTorch's one node per op shows them: one edge per tensor it
    reads from outside (as PyTorch's one node has one per input), none for the constants its steps
    made inside. Each inner node is walked once (a long composite, ``ctc_loss``, has thousands)."""
    scope = op_scope(node)
    if scope is None:
        return list(node.next_functions)
    if scope.reads is not None:  # (the op's arguments, as its call saw them)
        return [(_read_edge(r), 0) for r in scope.reads]
    out: list[tuple[Any, int]] = []
    seen_edges: set[int] = set()
    seen_inner: set[int] = {id(node)}
    stack = [iter(node.next_functions)]
    while stack:
        e = next(stack[-1], None)
        if e is None:
            stack.pop()
            continue
        n = e[0]
        if n is None:
            continue
        if _within(getattr(n, "scope", None), scope):
            if id(n) not in seen_inner:
                seen_inner.add(id(n))
                stack.append(iter(n.next_functions))
        elif id(n) not in seen_edges:
            seen_edges.add(id(n))
            out.append(e)
    return out


def _output_number(node: Function) -> int:
    """Which output of PyTorch's node ``node`` stands for: its position among the outputs of the op
    written from others that made it (``linalg.svd``'s ``Vh`` is output 2), else 0."""
    stand_in = getattr(node, "stands_for", None)
    if stand_in is not None:
        return stand_in[1]
    scope = op_scope(node)
    outputs = scope.outputs if scope is not None else None
    return outputs.get(id(node), 0) if outputs else 0


def _read_edge(read: Any) -> Any:
    """An edge of :attr:`Scope.reads <engine.switches.Scope.reads>` as ``next_functions`` shows it."""
    if read.__class__ is weakref.ref:
        leaf = read()
        return AccumulateGrad(leaf) if leaf is not None else None
    return read


_NODE_CLASSES: dict[str, type] = {}
_NUMBER_AS_TENSOR = frozenset(("MulBackward0", "AddBackward0", "SubBackward0", "DivBackward0"))


def backward_node(node: Function | None, out: Any = None) -> BackwardNode | None:
    """``node``'s face under PyTorch's name (one while any is held: ``y.grad_fn is y.grad_fn``);
    ``out``: the tensor it made, which ``_saved_result`` hands out."""
    if node is None:
        return None
    stand_in = getattr(node, "stands_for", None)  # (a step PyTorch's graph shows as another node's output)
    if stand_in is not None:
        return backward_node(stand_in[0], None)
    ref = getattr(node, "_face", None)
    face = ref() if ref is not None else None
    if face is not None and out is not None and face._out is None:
        face._out = weakref.ref(out)
    if face is None:
        name = grad_fn_name(node)
        cls = _NODE_CLASSES.get(name)
        if cls is None:
            cls = _NODE_CLASSES[name] = type(name, (BackwardNode,), {"__slots__": ()})
        face = cls(node)
        if out is not None:
            face._out = weakref.ref(out)
        node._face = weakref.ref(face)  # (weak: the face holds the node, not the other way round)
    return face


# Our op classes whose PyTorch backward node has another name (the rest are ``<Class>Backward0``)
_GRAD_FN_NAMES = {"Logistic": "Sigmoid", "HyperbolicTangent": "Tanh", "SoftmaxAlongDim": "Softmax",
                  "LogSoftmaxAlongDim": "LogSoftmax", "TwoDTranspose": "T", "ReversedAxes": "Permute", "PowScalar": "Pow",
                  "CrossEntropy": "NllLoss", "LayerNormalization": "NativeLayerNorm", "Reshape": "View", "ExpandSame": "Expand",
                  "LayerNorm": "NativeLayerNorm", "BatchNorm": "NativeBatchNorm", "Norm": "LinalgVectorNorm",
                  # (ops PyTorch has only in torch.special: its ATen op's special_ prefix)
                  "Entr": "SpecialEntr", "Erfcx": "SpecialErfcx", "I0e": "SpecialI0e", "I1": "SpecialI1",
                  "I1e": "SpecialI1e", "LogNdtr": "SpecialLogNdtr", "Ndtri": "SpecialNdtri",
                  "Xlog1py": "SpecialXlog1py",
                  # (nn.functional's kernels as PyTorch's ATen ops name them)
                  "Convolution1d": "Convolution", "Convolution2d": "Convolution", "Convolution3d": "Convolution",
                  "AveragePooling2d": "AvgPool2d", "AveragePooling3d": "AvgPool3d",
                  "AdaptiveAveragePooling2d": "AdaptiveAvgPool2d", "MaxPooling2d": "MaxPool2dWithIndices",
                  "MaxPooling3d": "MaxPool3dWithIndices", "Logsigmoid": "LogSigmoid", "GroupNorm": "NativeGroupNorm",
                  "Prelu": "PreluKernel", "Rrelu": "RreluWithNoise", "Selu": "Elu"}  # fmt: skip


_PRODUCT_NAMES = {(2, 2): "Mm", (1, 1): "Dot", (2, 1): "Mv"}  # (a product by the ranks of its operands)


def _batched_product_name(shapes: list, inputs: Any) -> str:
    """PyTorch's last node of ``a @ b`` past the ranks of ``_PRODUCT_NAMES``: a vector times a matrix
    unsqueezes, multiplies and squeezes (``SqueezeBackward4``); a batched product is folded or run as a
    ``bmm`` and viewed back (``UnsafeViewBackward0``), but where the first operand is one matrix (no batch, or
    a batch of 1) against a batch of them and needs a gradient, PyTorch multiplies the transposed product and
    copies it back contiguous (``CloneBackward0``)."""
    a, b = shapes
    if (len(a), len(b)) == (1, 2):
        return "SqueezeBackward4"
    # (PyTorch's fold of the transposed product: a matrix, or a batch of one in 3-D against another batch)
    folded = len(a) == 2 and len(b) >= 3 or len(a) == len(b) == 3 and a[0] == 1 and b[0] != 1
    if folded and getattr(inputs[0], "requires_grad", False):
        return "TransposeBackward0" if math.prod(b[:-2]) == 0 else "CloneBackward0"  # (nothing to copy back)
    return "UnsafeViewBackward0"


_AFTER_DIGIT = re.compile(r"(?<=\d)[a-z]")
# Ops PyTorch writes from others itself (its autograd graph shows their steps, as ours does): the
# rest of the ops written from others here show as one node named for the op, as PyTorch's.
_TORCH_DECOMPOSES = frozenset(("softsign", "tanhshrink", "normalize", "cosine_similarity", "cosine_embedding_loss",
                               "hinge_embedding_loss", "margin_ranking_loss", "triplet_margin_loss", "poisson_nll_loss",
                               "gaussian_nll_loss", "kl_div", "pairwise_distance", "l1_loss"))  # fmt: skip


#: PyTorch's copies of views, whose node is the view's with ``_copy`` (``PermuteBackward0_copy``); not
#: ``narrow_copy`` or ``index_copy``, ops of their own (``NarrowCopyBackward0``)
VIEW_COPIES = frozenset(
    n + "_copy"
    for n in "alias diagonal expand permute select slice split split_with_sizes squeeze t transpose unbind unfold "
    "unsqueeze view".split()
)


def op_scope(node: Any, within: Any = None) -> Any:
    """The op written from others that ``node`` is a step of, as PyTorch's graph shows it (one
    node named for the op), or None: the outermost composite scope around the node (inside scope
    ``within``), up to a module or an op PyTorch itself writes from others (whose steps show, each
    as its own op's node)."""
    found = None
    s = getattr(node, "scope", None)
    while s is not None and s is not within and s.kind == "composite" and s.name not in _TORCH_DECOMPOSES:
        found, s = s, s.parent
    return found


def grad_fn_name(node: Any, within: Any = None) -> str:
    """The name PyTorch prints in ``grad_fn=<...>`` for the node that made a tensor: a linear
    layer of a matrix is ``AddmmBackward0`` (``MmBackward0`` without a bias), a product of
    matrices ``MmBackward0``, of vectors ``DotBackward0``; the copy of a view (``permute_copy``, a
    composite named in :data:`VIEW_COPIES`) the view's node with ``_copy`` (``PermuteBackward0_copy``);
    a node may name itself (``torch_grad_fn_name``: a custom Function's ``<Class>Backward``)."""
    stand_in = getattr(node, "stands_for", None)
    own = getattr(stand_in[0] if stand_in is not None else node, "torch_grad_fn_name", None)
    if own is not None:
        return own
    name = type(node).__name__
    scope = op_scope(node, within)
    if scope is not None and scope.name in VIEW_COPIES:
        inner = getattr(node.inputs[0], "_ctx", None) if getattr(node, "inputs", None) else None
        if inner is not None and _within(getattr(inner, "scope", None), scope) and inner is not node:
            return grad_fn_name(inner, scope) + "_copy"  # (the view's own node, which the copy clones)
        return "".join(p[:1].upper() + p[1:] for p in scope.name[:-5].split("_")) + "Backward0_copy"
    if scope is not None:
        # (the last node of an op written from others, or the one that keeps its inputs: the op's name)
        name = "".join(part[:1].upper() + part[1:] for part in scope.name.split("_"))
    shapes = [t.shape for t in getattr(node, "inputs", ()) if hasattr(t, "shape")]
    special = _overload_name(name, node) if scope is None else None  # (a primitive's call: the overload's number)
    if special is not None:
        return special
    if name == "Affine" and shapes and len(shapes[0]) == 2:
        name = "Addmm" if len(shapes) == 3 else "Mm"
    elif name == "Affine" and shapes:
        name = "View"
    elif name == "Matmul" and len(shapes) == 2:
        if (ranks := tuple(map(len, shapes))) in _PRODUCT_NAMES:
            name = _PRODUCT_NAMES[ranks]
        else:
            return _batched_product_name(shapes, node.inputs)
    name = _GRAD_FN_NAMES.get(name, name)
    # (PyTorch's names capitalise a letter after a digit: Log1PBackward0, Deg2RadBackward0)
    return _AFTER_DIGIT.sub(lambda m: m[0].upper(), name) + f"Backward{scope.overload if scope is not None else 0}"


# In-place changes by label: PyTorch's node for each (the rest: ``<Op>Backward0`` of the op's name)
_INPLACE_NAMES = {"setitem": "CopySlices", "copy_": "CopyBackwards", "fill_": "FillBackward2",
                  "clamp_": "ClampBackward1", "t_": "TBackward1", "transpose_": "TransposeBackward1",
                  "unsqueeze_": "UnsqueezeBackward1"}  # fmt: skip


def _overload_name(name: str, node: Any) -> str | None:
    """PyTorch's name where it depends on how the op was called: the overload's number
    (``x.sum()`` is ``SumBackward0``, ``x.sum(0)`` ``SumBackward1``; ``1 - x`` ``RsubBackward1``;
    ``2 ** x`` ``PowBackward2``), an index's kind (``x[0]`` ``SelectBackward0``) and in-place
    changes (``y[0] = v`` ``CopySlices``)."""
    args = getattr(node, "args", None)
    inputs = getattr(node, "inputs", None) or ()
    if name == "NotDifferentiable":  # (an op without a derivative formula: PyTorch's NotImplemented node)
        return "NotImplemented"
    if name in ("InPlace", "Restride") and isinstance(args, str):
        label = args
        inner = getattr(inputs[0], "_ctx", None) if label == "fill_" and inputs else None
        if inner is not None and len(inner.next_functions) == 2:
            return "FillBackward3"  # (x.fill_(v) of a tensor v: its own overload, with an edge to v)
        if label == "squeeze_" and inputs:  # (the overload by the view it records: squeeze_(), (dim), (dims))
            view = type(getattr(inputs[0], "_ctx", None)).__name__
            return {"SqueezeDim": "SqueezeBackward4", "SqueezeDims": "SqueezeBackward5"}.get(view, "SqueezeBackward3")
        return (
            _INPLACE_NAMES.get(label)
            or "".join(p[:1].upper() + p[1:] for p in label.rstrip("_").split("_")) + "Backward0"
        )
    if name in ("Sum", "Max", "Min") and isinstance(args, tuple) and len(args) == 2:
        if name == "Sum":
            return "SumBackward0" if args[0] is None else "SumBackward1"
        return f"{name}Backward1" if args[0] is None else "A" + name.lower() + "Backward0"
    if name == "Slice" and isinstance(args, tuple):
        last = next(
            (k for k in reversed(args) if k is not Ellipsis and not (isinstance(k, slice) and k == slice(None))), None
        )
        return "SelectBackward0" if isinstance(last, int) else "SliceBackward0"
    if name in ("Sub", "Pow") and len(inputs) == 2 and not hasattr(inputs[0], "shape"):
        return "RsubBackward1" if name == "Sub" else "PowBackward2"
    if name == "Pow" and len(inputs) == 2:
        return "PowBackward1"
    if name in ("Cast", "Transfer"):  # (PyTorch's ``to``, of a dtype or a device)
        return "ToCopyBackward0"
    if name == "Add" and len(inputs) == 2 and inputs[1].__class__ is float and str(inputs[1]) == "-0.0":
        return "CloneBackward0"  # (clone: ``x + -0.0``, which changes no value)
    if name == "MatrixTranspose":
        return "TransposeBackward0"
    if name in ("SqueezeDim", "SqueezeDims"):
        return "SqueezeBackward1" if name == "SqueezeDim" else "SqueezeBackward2"
    return None


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


def kept_after_backward(fn: Any) -> Any:
    """What ``fn`` keeps once a backward without ``retain_graph`` ran through it: the shapes of its
    saved values where its backward reads only shapes (a second backward may run through it, as
    PyTorch's), else nothing."""
    return shapes_only(fn.saved) if saves_no_values(fn) else None


def saves_no_values(fn: Function) -> bool:
    """Whether ``fn``'s backward reads no values: only shapes (``reads_values`` False: a slice, a
    transpose, a sum, a cast), or neither an input nor its output (a sum, a difference, a
    negation), with nothing in ``ctx`` and no index array among its arguments. PyTorch's nodes of these ops save no
    tensor, so a second backward runs through them, where one through a node that saved values
    raises."""
    if fn.ctx is not None or _holds_array(fn.args):  # (an index array: PyTorch's node saves it)
        return False
    if not fn.reads_values:
        return True
    return not fn.reads_output and not any(fn.keeps_input(i) for i in range(len(fn.inputs)))


def _holds_array(args: Any) -> bool:
    if isinstance(args, (tuple, list)):
        return any(_holds_array(a) for a in args)
    return hasattr(args, "shape") and hasattr(args, "dtype")


def shapes_only(saved: Sequence[Any]) -> ShapesOnly:
    """What a node that :func:`saves_no_values` keeps after a backward released it: its arrays as
    their shapes and dtypes."""
    return ShapesOnly(FreedArray(a) if hasattr(a, "shape") and a.__class__ is not FreedArray else a for a in saved)


class ShapesOnly(list):
    """A released node's saved arrays as shapes (:func:`shapes_only`): freed, and enough for its backward."""

    __slots__ = ()


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


def _mixed_device(cls: type, inputs: Sequence[Any], dev: Any, other: Any) -> Any:
    """The device of an op whose tensors are on ``dev`` and ``other``: PyTorch lets a 0-d CPU tensor
    (a number) join meta tensors, and the op runs on the meta device; any other mix raises."""
    if dev.meta or other.meta:
        cpu = [t for t in inputs if isinstance(t, Tensor) and not t._dev.meta]
        if all(t._dev.name == "cpu" and t.ndim == 0 for t in cpu):
            return dev if dev.meta else other
    _raise_device_mix(cls, inputs)
    return dev


def _raise_device_mix(cls: type, inputs: Sequence[Any]) -> None:
    devs = [str(t.device) for t in inputs if isinstance(t, Tensor)]
    names = " and ".join(dict.fromkeys(devs))
    raise RuntimeError(
        f"{cls.op_name_of()}: expected all tensors on one device, got {names}; move them with .to(device)"
    )


def _user_frame() -> str:
    """The innermost stack frame outside this package: where the user made the op."""
    pkg = __name__.split(".", 1)[0]  # (the package, not the engine)
    for fr in reversed(traceback.extract_stack()[:-2]):
        if f"/{pkg}/" not in fr.filename.replace("\\", "/"):
            return f'File "{fr.filename}", line {fr.lineno}, in {fr.name}: {fr.line}'
    return "<unknown>"


def _check_no_nan(fn: Function, arr: Any, index: int) -> None:
    """PyTorch's anomaly error where the ``index``-th gradient ``fn``'s backward returned holds NaN."""
    dev = None
    for t in fn.inputs or ():
        if isinstance(t, Tensor):
            dev = t._dev
            break
    if dev is None or arr is None or not hasattr(arr, "dtype"):
        return
    if dev.np_dtype(arr.dtype).kind not in "fc":
        return
    if bool(dev.ops.any(arr != arr)):  # (NaN is the one value unequal to itself)
        where = getattr(fn, "trace", None) or "<unknown>"
        raise RuntimeError(
            f"Function '{grad_fn_name(fn)}' returned nan values in its {index}th output.\n"
            f"The {fn.op_name} it is the backward of was created at {where}"
        )


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
        return f"<values freed {self.when}: shape {tuple(self.shape)}, dtype {self.dtype}>"


def replay_if_stale(t: Tensor) -> None:
    """Replay ``t`` if it may be a view older than the latest in-place change (see
    ``tinygrad_attn.tensors.mutation.inplace``): before a backward pass starts from it."""
    c = t._ctx
    if c is not None and c.seq < _last_rebase and (c.view or c.rebases):
        _replay_view(t)


class AnomalyCheck(Hook):
    """What ``detect_anomaly`` installs: each op notes the line of user code that made it, and the
    backward pass raises PyTorch's error at the first node whose gradient holds NaN (while
    ``check_nan`` is on), naming the node and that line."""

    def op(self, fn: Function, inputs: Sequence[Any], out: Any) -> None:
        if out._ctx is not fn:  # (not recorded: the error still names its inputs and scope)
            fn.inputs, fn.scope = inputs, _State.scope
        fn.trace = _user_frame()
        super().op(fn, inputs, out)

    def after_step(self, fn: Function, grads: Sequence[Any], ns: Any) -> None:
        if switches.is_anomaly_check_nan_enabled():
            for i, gi in enumerate(grads):
                if gi is not None:
                    if ns.recording:
                        gi = gi._data
                    elif gi.shape is None:  # (a SliceGradient, which has no shape: the slice's gradient)
                        gi = gi.g
                    _check_no_nan(fn, gi, i)
        super().after_step(fn, grads, ns)


switches.register_anomaly_check(AnomalyCheck)
