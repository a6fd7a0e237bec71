"""Composite ops: a definition in primitive ops (the reference), optionally computed by one
fused op whose backward is written by hand (:class:`FusedFunction`)."""

from __future__ import annotations

import contextlib
import functools
import inspect
import threading
import weakref
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from . import function as _function
from .backward import run_backward
from .bfloat16 import BFLOAT16
from .function import FreedArray, Function
from .switches import Scope, _State, decompose, no_grad
from .versions import as_seen_by, changed_since

if TYPE_CHECKING:
    from ..tensors._tensor import Tensor


#: Composites and public functions (``@public`` applies it by name) that PyTorch computes in one
#: kernel, in float32 for float16 and bfloat16 tensors ("opmath"): given such floating tensors (integer ones,
#: indices, beside them), they run in float32 here too and round once at the end (in float16 each
#: of their steps rounded: softplus 63 units off, mish 69, hardsigmoid 43, addcmul and avg_pool a
#: few). instance_norm is one batch_norm kernel in PyTorch. (Not those PyTorch itself writes as
#: several float16 ops: tanhshrink, softsign, logsumexp, local_response_norm (its avg_pool one kernel);
#: nor those whose kernel rounds in between: addr, addbmm, conv_transpose, ldexp, soft_margin_loss, which round where PyTorch's do, and
#: grid_sample, adaptive_avg_pool3d, poisson_nll_loss, which computed in float32 are further from
#: PyTorch's: tests/ops/test_half_precision_torch.py's KNOWN.) ``linear``, ``addmm``, ``baddbmm`` and the
#: convolutions add their bias to the float32 product before the one rounding, as PyTorch's GEMM
#: does (rounded twice, ``nn.Linear``'s float16 outputs were a unit off in 40% of the entries).
HALF_IN_FLOAT32 = frozenset(
    "celu cosh elu gelu group_norm hardsigmoid hardswish layer_norm leaky_relu logaddexp "
    "logcumsumexp logsigmoid mish normalize rms_norm selu silu sinh softplus hypot xlogy mean norm "
    "addcmul addcdiv exp2 avg_pool1d avg_pool2d batch_norm native_batch_norm instance_norm "
    "native_group_norm embedding_bag interpolate upsample upsample_bilinear "
    "linear addmm addmv baddbmm lerp deg2rad rad2deg log10 log2 logaddexp2 glu huber_loss smooth_l1_loss "
    "binary_cross_entropy renorm std var "
    "std_mean var_mean adaptive_avg_pool1d adaptive_avg_pool2d conv1d conv2d conv3d".split()
)


#: Public functions written here from other ops that PyTorch records as one node of its own: name ->
#: the op whose node PyTorch's graph shows (``addmm`` -> ``AddmmBackward0``; ``fliplr`` -> ``flip``'s
#: ``FlipBackward0``). ``public`` makes each a composite of that name, so its steps show as that one
#: node (``engine.function.grad_fn_name``), with an edge to each tensor it reads from outside. (Not
#: those PyTorch itself writes from others, as ``cov`` or ``kron``: their steps show in both graphs.)
RECORDED_AS_ONE: dict[str, str] = {
    **{n: n for n in (
        "addbmm addcdiv addcmul addmm addmv addr baddbmm block_diag cdist cummax cummin deg2rad rad2deg dist erfc "
        "exp2 flip fmax fmin gather kthvalue ldexp lerp log10 log2 logaddexp2 masked_fill masked_scatter "
        "masked_select median nanmedian nan_to_num nansum put reciprocal roll rot90 rsqrt scatter scatter_add "
        "select_scatter slice_scatter diagonal_scatter sort topk take trace tril triu std var var_mean std_mean "
        "angle sgn index_add index_copy index_fill index_select index_reduce mode logsumexp diag_embed mvlgamma "
        "ormqr pdist"
    ).split()},
    **{n: n for n in "round clamp clamp_min clamp_max fmod remainder".split()},
    "cross": "linalg_cross", "bmm": "bmm", "mv": "mv", "vdot": "vdot",
    "fliplr": "flip", "flipud": "flip", "tile": "repeat", "square": "pow", "take_along_dim": "gather",
    "cholesky": "cholesky", "cholesky_solve": "cholesky_solve", "cholesky_inverse": "cholesky_inverse",
    "triangular_solve": "triangular_solve", "lu_unpack": "lu_unpack", "matrix_exp": "linalg_matrix_exp",
    "transpose": "transpose", "split_with_sizes": "split_with_sizes", "unsafe_split": "unsafe_split",
    "unsafe_chunk": "unsafe_split", "unsafe_split_with_sizes": "unsafe_split_with_sizes",
    **{n: n for n in _function.VIEW_COPIES},  # (the view's node with _copy: PermuteBackward0_copy)
    "det": "linalg_det", "slogdet": "linalg_slogdet", "qr": "linalg_qr",
    "lu": "linalg_lu_factor_ex", "lu_solve": "linalg_lu_solve", "pinverse": "linalg_pinv",
    **{n: n for n in (
        "narrow_copy pixel_shuffle pixel_unshuffle channel_shuffle glu digamma nextafter frexp aminmax polar "
        "native_batch_norm native_group_norm native_layer_norm embedding rsub fill repeat"
    ).split()},
}  # fmt: skip


#: The parameters whose tensors are the edges of PyTorch's node, in its order, where they are not
#: the op's floating tensor arguments in order (an optional one not given: a None edge, as PyTorch's
#: undefined input): the running statistics of ``native_batch_norm`` are
#: no inputs of its node (PyTorch differentiates neither), ``lu_solve(b, LU, pivots)`` is
#: ``linalg_lu_solve(LU, pivots, B)``.
EDGES: dict[str, tuple[str, ...]] = {
    "native_batch_norm": ("input", "weight", "bias"), "native_layer_norm": ("input", "weight", "bias"),
    "native_group_norm": ("input", "weight", "bias"), "lu_solve": ("LU_data", "b"),
}  # fmt: skip


#: PyTorch's overload numbers of ops written here from others (the rest: 0): op -> (rule, parameters).
#: ``"given"``: 1 where one of them is given (``mean(x, 0)`` ``MeanBackward1``, ``round(x, decimals=2)``);
#: ``"tensor"``: 1 where one of them is a tensor (``clamp_min(x, t)`` ``ClampMinBackward1``, ``masked_fill``
#: of a tensor value); ``"number"``: 1 where none is (``clamp(x, 0)`` ``ClampBackward1``, ``clamp(x, t)`` 0).
OVERLOADS: dict[str, tuple[str, tuple[str, ...]]] = {
    "mean": ("given", ("axis",)), "prod": ("given", ("dim",)), "median": ("given", ("dim",)),
    "nanmedian": ("given", ("dim",)), "round": ("given", ("decimals",)), "clamp": ("number", ("min", "max")),
    "clamp_min": ("tensor", ("min",)), "clamp_max": ("tensor", ("max",)), "masked_fill": ("tensor", ("value",)),
    "index_fill": ("tensor", ("value",)), "fmod": ("tensor", ("other",)), "remainder": ("tensor", ("other",)),
    "rsub": ("number", ("other",)), "fill": ("tensor", ("value",)),
}  # fmt: skip


def _overload(rule: tuple[str, tuple[str, ...]], params: dict[str, inspect.Parameter], args: tuple, kw: dict) -> int:
    """The overload number ``rule`` (of :data:`OVERLOADS`) gives a call of ``args``, ``kw``."""
    kind, names = rule
    values = []
    for n in names:
        p = params[n]
        i = list(params).index(n)
        values.append(kw[n] if n in kw else args[i] if i < len(args) else p.default)
    if kind == "given":
        return int(any(v is not None and v is not params[n].default for n, v in zip(names, values)))
    tensors = any(isinstance(v, _function.Tensor) for v in values)
    return int(tensors) if kind == "tensor" else int(not tensors)


def _in_float32(args: tuple, kw: dict, inplace_at: int | None) -> tuple[tuple, dict, np.dtype, list] | None:
    """``args`` and ``kw`` with their float16 (or bfloat16) tensors in float32, that dtype, and each
    widened tensor with its float32 copy and the copy's version; or None where no tensor is of one of
    them, a floating tensor is of another dtype, or the call writes in place (``inplace=True``: into the
    caller's tensor). Integer and bool tensors (indices, offsets, masks) stay as they are."""
    Tensor = _function.Tensor  # noqa: N806
    low = None
    for v in (*args, *kw.values()) if kw else args:  # (a float32 call leaves at its first tensor)
        if isinstance(v, Tensor):
            d = v.dtype
            if d.kind == "f":
                if low is None:
                    if d not in _LOW:
                        return None
                    low = d
                elif d != low:
                    return None
    if low is None:
        return None
    if _writes_in_place(args, kw, inplace_at):
        return None
    if kw.get("dtype") is not None and np.dtype(kw["dtype"]) != low:  # (mean(dtype=float32): its result's dtype)
        return None

    widened: list = []

    def up(v: Any) -> Any:
        if not (isinstance(v, Tensor) and v.dtype == low):
            return v
        wide = v.astype(_SINGLE)
        widened.append((v, wide, wide._version))
        return wide

    return tuple(map(up, args)), {k: up(v) for k, v in kw.items()}, np.dtype(low), widened


def _called_in_float32(fn: Callable[..., Any], wide: tuple) -> Any:
    """``fn`` on the float32 arguments ``wide`` (from :func:`_in_float32`), what it wrote into them
    written back into the caller's tensors, its result rounded to their dtype."""
    outer = getattr(_COMPUTING, "low", None)
    _COMPUTING.low = wide[2]
    try:
        out = fn(*wide[0], **wide[1])
    finally:
        _COMPUTING.low = outer
    _written_back(wide[3])
    return _rounded_to(out, wide[2])


#: The dtype whose tensors the composite running in this thread computes in float32 (:func:`computed_for`).
_COMPUTING = threading.local()


def computed_for() -> np.dtype | None:
    """The low-precision dtype (float16, bfloat16) whose tensors the composite of :data:`HALF_IN_FLOAT32`
    running now computes in float32, rounding its result to it once, or None. For a composite whose
    PyTorch kernel keeps an intermediate in the input's dtype (``batch_norm``'s saved mean and 1/std,
    which it normalises with): it rounds that one there too."""
    return getattr(_COMPUTING, "low", None)


def _written_back(widened: list) -> None:
    """Into each caller's tensor whose float32 copy the op wrote in place (a norm's running statistics),
    the values written, rounded to its dtype: the op's buffers are the caller's, as PyTorch's."""
    for given, wide, seen in widened:
        if wide._version != seen:
            with no_grad():
                given.copy_(wide)


def half_in_float32(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` computing its float16 (or bfloat16) tensors in float32 and rounding its float32 results
    to their dtype once at the end: PyTorch's one-kernel float16 and bfloat16 ops ("opmath"). ``public`` applies it
    to the functions named in :data:`HALF_IN_FLOAT32`; ``composite`` to its composites there."""
    params = list(inspect.signature(fn).parameters)
    inplace_at = params.index("inplace") if "inplace" in params else None

    @functools.wraps(fn)
    def run(*args: Any, **kw: Any) -> Any:
        keeps = getattr(fn, "keeps_half", None)  # (a call PyTorch refuses in float16: fn's own check says so)
        if (keeps is None or not keeps(args, kw)) and (wide := _in_float32(args, kw, inplace_at)) is not None:
            return _called_in_float32(fn, wide)
        return fn(*args, **kw)

    return run


def _writes_in_place(args: tuple, kw: dict, inplace_at: int | None) -> bool:
    """Whether the call passes ``inplace=True`` (by keyword, or at its place ``inplace_at``)."""
    if inplace_at is None:
        return False
    return bool(kw["inplace"] if "inplace" in kw else len(args) > inplace_at and args[inplace_at])


def _rounded_to(out: Any, low: np.dtype) -> Any:
    Tensor = _function.Tensor  # noqa: N806
    if isinstance(out, Tensor):
        if out.dtype != _SINGLE:
            return out
        with np.errstate(over="ignore"):  # (beyond float16's range: inf, as PyTorch's)
            return out.astype(low)
    if isinstance(out, tuple) and not hasattr(out, "_fields"):
        return tuple(_rounded_to(o, low) for o in out)
    if isinstance(out, tuple):  # (a named tuple: values and indices)
        return type(out)(*(_rounded_to(o, low) for o in out))
    return out


_HALF, _SINGLE = np.dtype(np.float16), np.dtype(np.float32)
#: the dtypes a one-kernel op computes in float32 (``engine.function.COMPUTED_IN_FLOAT32``)
_LOW = frozenset({_HALF} if BFLOAT16 is None else {_HALF, BFLOAT16})


def composite(
    name: str,
    fused: Callable[..., Tensor | None] | None = None,
    edges: tuple[str, ...] | None = None,
    output: int = 0,
) -> Callable:
    """Declare ``reference`` (written in tensor ops) as the definition of composite op ``name``.

    ``fused(*args, **kw)`` may return a tensor computed by one fused :class:`Function`, or
    ``None`` where it does not apply. Inside ``tga.decompose()`` the reference always runs,
    within a scope named ``name`` so its primitives draw as one group. ``edges``: the parameters
    whose tensors are the edges of its node, in order (default: its floating tensor arguments).
    ``output``: which output of PyTorch's node a single result is (``svdvals``: ``S``, output 1 of
    ``LinalgSvdBackward0``), as an edge to it shows.
    """

    half = name in HALF_IN_FLOAT32
    rule = OVERLOADS.get(name)

    def deco(reference: Callable[..., Tensor]) -> Callable[..., Tensor]:
        sig = inspect.signature(reference) if half or rule or edges else None
        signature = dict(sig.parameters) if sig is not None else {}
        params = list(signature)
        inplace_at = params.index("inplace") if "inplace" in params else None

        @functools.wraps(reference)
        def run(*args: Any, **kw: Any) -> Tensor:
            if half and (wide := _in_float32(args, kw, inplace_at)) is not None:
                return _called_in_float32(run, wide)
            if fused is not None and not _State.decompose:
                out = fused(*args, **kw)
                if out is not None:
                    return out
            prev = _State.scope
            s = Scope(name, "composite", prev)  # (made whole before it is entered: nothing may raise in between)
            if edges is None:
                s.reads = _reads((*args, *kw.values()) if kw else args)
            else:
                try:
                    bound = sig.bind_partial(*args, **kw).arguments  # type: ignore[union-attr]
                except TypeError:
                    return reference(*args, **kw)  # (arguments the function refuses: its own error)
                s.reads = [(_reads((v,)) or [None])[0] for v in map(bound.get, edges)]
            if rule is not None:
                s.overload = _overload(rule, signature, args, kw)
            _State.scope = s
            try:
                out = reference(*args, **kw)
            finally:
                _State.scope = prev
            if isinstance(out, tuple):  # (several outputs: each is its output number of PyTorch's one node)
                s.outputs = {id(o._ctx): i for i, o in enumerate(out) if isinstance(o, _function.Tensor) and o._ctx}
            elif output and isinstance(out, _function.Tensor) and out._ctx is not None:
                s.outputs = {id(out._ctx): output}
            return out

        run.reference = reference  # type: ignore[attr-defined]
        run.composite_name = name  # type: ignore[attr-defined]
        return run

    return deco


@contextlib.contextmanager
def recorded_as(name: str, *reads: Any, overload: int = 0) -> Iterator[Scope]:
    """The steps run inside as one node of PyTorch's op ``name`` (``"reflection_pad1d"`` ->
    ``ReflectionPad1DBackward0``, overload ``overload``), with an edge to each floating tensor of
    ``reads`` (a None: a None edge, as PyTorch's for a number it wraps in a tensor): for a function
    whose PyTorch node depends on how it is called (``F.pad``'s mode and number of padded axes,
    ``F.interpolate``'s mode and rank), where a name in :data:`RECORDED_AS_ONE` cannot say it.
    The scope costs its creation only."""
    prev = _State.scope
    s = Scope(name, "composite", prev)
    s.reads = []
    for r in reads:
        if r is None:
            s.reads.append(None)
        else:
            _reads((r,), s.reads)
    s.overload = overload
    _State.scope = s
    try:
        yield s
    finally:
        _State.scope = prev


def _reads(args: tuple | list, out: list | None = None) -> list[Any]:
    """The edges PyTorch's node of an op has, from its arguments ``args`` (in order, within lists
    and keywords): one per floating tensor, the node that made it, a weak reference to a leaf that
    requires grad (its ``AccumulateGrad``), or None (a tensor without history that needs no gradient)."""
    out = [] if out is None else out
    tensor = _function.Tensor
    for a in args:
        if isinstance(a, tensor):
            # (the array's dtype: cheaper than the tensor's, where it has a kind: array_api_strict's has none)
            if (getattr(a._data.dtype, "kind", None) or a.dtype.kind) in "fc":
                ctx = a._ctx
                out.append(ctx if ctx is not None else weakref.ref(a) if a._requires_grad else None)
        elif a.__class__ in _SEQUENCES:
            _reads(a, out)
    return out


_SEQUENCES = (tuple, list)


class FusedFunction(Function):
    """A composite op computed in one step, with a hand-derived backward.

    ``reference`` is the primitive definition (a function of tensors). With
    ``create_graph=True`` the backward recomputes it and differentiates that, so fused ops
    have gradients of every order without a second hand-derived formula.
    """

    __slots__ = ()
    #: The composite's definition in tensor ops, which ``recompute`` applies. Set (as a
    #: ``staticmethod``) by the module that writes the definition, above the ops
    #: (``functional.py``, ``nn/rnn.py``): an op imports nothing above it.
    definition: Callable[..., Any] | None = None

    def recompute(self, *inputs: Any) -> Tensor:
        """The op's primitive definition applied to ``inputs`` (used for higher orders)."""
        raise NotImplementedError  # pragma: no cover

    def backward(self, g: Any, ns: Any, inputs: Sequence[Any], out: Any) -> Sequence[Any]:
        if ns.recording:  # a gradient that is itself recorded (create_graph, a trace): the namespace's way
            return ns.fused_backward(self, g, inputs, out)
        return self.backward_arrays(g, ns, inputs, out)

    def backward_arrays(self, g: Any, ns: Any, inputs: Sequence[Any], out: Any) -> Sequence[Any]:
        raise NotImplementedError  # pragma: no cover

    def forward_input(self, i: int, ns: Any) -> Any:
        """Input ``i``'s array as the forward saw it, rebuilt from what the op kept (its
        ``ctx``), or None. Asked only for an input the op does not keep (``keeps_input``)
        whose array was changed in place or released since: the recompute reads it. An op
        whose gradient reads no values of such an input returns None (any values do);
        one that keeps them in another form (cross-entropy its log-probabilities,
        attention its scaled queries) gives them back here."""
        return None

    def _backward_by_reference(self, g: Tensor, ns: Any, inputs: Sequence[Any]) -> list[Any]:
        # The local derivative only: the reference runs on stand-ins (one alias op per
        # differentiable input) and the pass below stops at them. Differentiating with
        # respect to the inputs themselves would also follow the paths through their own
        # history, counted again by the outer pass where one input depends on another
        # (``linear(W * 1.0, W)``). The stand-ins stay in the graph, so the gradient is
        # still differentiable with respect to the inputs, to any order. (``inputs`` are
        # what the pass hands every op, None where released: the stand-ins read the op's own.)
        stand_ins = [self._stand_in(i, t, ns) for i, t in enumerate(self.inputs)]
        diff = [s for s, t in zip(stand_ins, self.inputs) if s is not t and s.requires_grad]
        with decompose():
            y = self.recompute(*stand_ins)
        found = run_backward([y], [g], retain_graph=True, create_graph=True, targets=diff, stop_at_targets=True)
        gs = iter(found)
        return [next(gs) if s is not t and s.requires_grad else None for s, t in zip(stand_ins, self.inputs)]

    def _stand_in(self, i: int, t: Any, ns: Any) -> Any:
        """What the recompute reads for input ``i``: the values the forward saw, on the history
        the forward read (an input changed in place since has moved on; the version check
        already raised where the op keeps it). An input the op does not keep may have been
        changed or released: its values come from ``forward_input``, else any do."""
        if not isinstance(t, _function.Tensor):
            return t
        t = _as_read(t, self.seq)
        arr = t._data
        stale = arr.__class__ is FreedArray or changed_since(arr, self.seq)
        if stale and not self.keeps_input(i):
            arr = self.forward_input(i, t._dev.ops)
            if arr is None:  # (the gradient reads none of its values)
                arr = t._data if t._data.__class__ is not FreedArray else t._dev.zeros(t.shape, t._data.dtype)
        if not t.requires_grad:
            return t if arr is t._data else _function.Tensor._wrap(arr, t._dev)
        s = ns.alias(t)
        s._data = arr  # (an alias passes its gradient on unchanged: the values are the forward's)
        return s


def _as_read(t: Tensor, seq: int) -> Tensor:
    """``t`` on the history the op made at ``seq`` read (see ``as_seen_by``). A view whose
    base changed in place since is taken again of the base as it was: an op on the view
    itself would first replay it onto the base's new history (``Function.apply``)."""
    t = as_seen_by(t, seq)
    c = t._ctx
    if c is not None and c.view and c.seq < _function._last_rebase:
        base = _as_read(c.inputs[0], seq)
        if base is not c.inputs[0]:
            return c.__class__.apply(base, args=c.args)
    return t
