"""The op table of the differential tests against PyTorch (``tests/ops/test_oracle.py``).

One :class:`OpInfo` per op, in the spirit of PyTorch's OpInfo: our callable, PyTorch's
callable and a hypothesis strategy of sample inputs. The generic tests check every entry,
in float64, for value, gradient and gradient of gradient (``create_graph=True``) against
PyTorch; composites (``composite=True``) run both fused and under ``tga.decompose()``.
``tests/ops/test_opinfo.py`` fails when a primitive of ``tinygrad_attn.ops.PRIMITIVES`` or a
public function of ``tinygrad_attn.functional`` has no entry that ``covers`` it.

Adding an op is one entry::

    OpInfo("softmax",
           ours=lambda x, axis: F.softmax(x, axis),
           theirs=lambda x, axis: torch.softmax(x, axis),
           sample=along_axis(),               # Sample((x,), {"axis": ...}) draws
           covers=("softmax",),               # PRIMITIVES class names / functional names
           composite=True)

- ``ours(*args, **kwargs)`` gets our tensors; ``theirs(*args, **kwargs)`` gets torch tensors
  (``torch`` here is imported on first use, so this module loads without PyTorch).
- ``sample`` draws a :class:`Sample`: ``args`` are NumPy arrays (float64 arrays become
  tensors that require grad; integer and bool arrays become plain tensors), ``kwargs``
  are Python values passed to both sides as they are.
- ``grad_args=n``: only the first ``n`` arguments are differentiated (PyTorch has no
  gradient for a loss's ``weight``, for instance).
- ``grad=False`` for ops without gradient (comparisons, argmax, masks), ``gradgrad=False``
  where a second order is not meaningful; ``extremes=False`` where inputs must stay finite
  (the value test otherwise sprinkles inf, -inf, huge and tiny numbers in). Say why in a
  comment whenever you turn something off.
"""

from __future__ import annotations

import importlib
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import tinygrad_attn as tga
import tinygrad_attn.functional as F


class _LazyModule:
    """``torch`` (and ``torch.nn.functional``), imported at first attribute read."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attr: str) -> Any:
        return getattr(importlib.import_module(self._name), attr)


torch = _LazyModule("torch")
TF = _LazyModule("torch.nn.functional")


class Sample(NamedTuple):
    args: tuple
    kwargs: dict


@dataclass(frozen=True)
class OpInfo:
    name: str
    ours: Callable[..., Any]
    theirs: Callable[..., Any]
    sample: st.SearchStrategy
    covers: tuple[str, ...] = ()
    composite: bool = False
    grad: bool = True
    gradgrad: bool = True
    extremes: bool = True
    grad_args: int | None = None  # only this many leading arguments require grad (None: every float64 one)
    atol: float = 1e-9
    rtol: float = 1e-7
    notes: str = field(default="", compare=False)


# -- sample strategies ---------------------------------------------------------------
MAX_SIDE = 3
#: Values with ties, zeros and ones among them: kinks (relu, abs, clip, max) and ties
#: (maximum, max) are where gradients conventions differ.
VALUES = st.one_of(st.floats(-3.0, 3.0, allow_subnormal=False), st.sampled_from([0.0, 1.0, -1.0, 0.5, -0.5]))
POSITIVE = st.one_of(st.floats(0.1, 3.0), st.sampled_from([1.0, 0.5, 2.0]))
AWAY_FROM_ZERO = st.one_of(st.floats(0.2, 3.0), st.floats(-3.0, -0.2), st.sampled_from([1.0, -1.0]))
#: What the value test sprinkles into inputs of ops with ``extremes=True``.
EXTREMES = [math.inf, -math.inf, 1e30, -1e30, 1e-300, -1e-300, 0.0, -0.0]


def shapes(min_dims: int = 0, max_dims: int = 3, min_side: int = 0) -> st.SearchStrategy:
    """Shapes with 0 and 1 sides among them, and 0-d."""
    return hnp.array_shapes(min_dims=min_dims, max_dims=max_dims, min_side=min_side, max_side=MAX_SIDE)


def array(shape: Any, elements: st.SearchStrategy = VALUES) -> st.SearchStrategy:
    return hnp.arrays(np.float64, shape, elements=elements)


def unary(elements: st.SearchStrategy = VALUES, **shape_kw: Any) -> st.SearchStrategy:
    return array(shapes(**shape_kw), elements).map(lambda a: Sample((a,), {}))


@st.composite
def binary(draw: Any, a_elements: st.SearchStrategy = VALUES, b_elements: st.SearchStrategy = VALUES) -> Sample:
    """Two arrays whose shapes broadcast together (0-d, 1 and 0 sides among them)."""
    sa, sb = draw(hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=3, max_side=MAX_SIDE)).input_shapes
    return Sample((draw(array(sa, a_elements)), draw(array(sb, b_elements))), {})


@st.composite
def reduction(
    draw: Any,
    nonempty: bool = False,
    keepdims: bool = True,
    elements: st.SearchStrategy = VALUES,
    **extra: st.SearchStrategy,
) -> Sample:
    """An array and an ``axis`` (None, an int of either sign, or a tuple) and ``keepdims``."""
    shape = draw(shapes(min_side=1 if nonempty else 0))
    nd = len(shape)
    axes = st.one_of(st.none(), st.integers(-max(nd, 1), max(nd, 1) - 1))
    if nd > 1:
        axes = st.one_of(axes, st.lists(st.integers(0, nd - 1), min_size=1, max_size=nd, unique=True).map(tuple))
    kw = {"axis": draw(axes)}
    if keepdims:
        kw["keepdims"] = draw(st.booleans())
    kw.update({k: draw(v) for k, v in extra.items()})
    return Sample((draw(array(shape, elements)),), kw)


@st.composite
def along_axis(draw: Any, min_dims: int = 0, elements: st.SearchStrategy = VALUES) -> Sample:
    """An array and one axis of it (0 or -1 for a 0-d array)."""
    shape = draw(shapes(min_dims=min_dims))
    nd = max(len(shape), 1)
    return Sample((draw(array(shape, elements)),), {"axis": draw(st.integers(-nd, nd - 1))})


def _dim(axis: Any, ndim: int) -> Any:
    """PyTorch's ``dim`` for our ``axis`` (None: every axis)."""
    return tuple(range(ndim)) if axis is None else axis


# -- samples of the shape, indexing and attention ops --------------------------------
@st.composite
def matmul_operands(draw: Any) -> Sample:
    """1-D, 2-D and batched operands, batches broadcasting, a shared 2-D weight, k = 0."""
    m, k, n = (draw(st.integers(0 if i == 1 else 1, MAX_SIDE)) for i in range(3))
    batch = draw(hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=2, max_side=MAX_SIDE)).input_shapes
    kind = draw(st.sampled_from(["vv", "vm", "mv", "mm", "batched", "batch_times_matrix", "v_batched"]))
    sa, sb = {
        "vv": ((k,), (k,)),
        "vm": ((k,), (k, n)),
        "mv": ((m, k), (k,)),
        "mm": ((m, k), (k, n)),
        "batched": (batch[0] + (m, k), batch[1] + (k, n)),
        "batch_times_matrix": ((2,) + batch[0] + (m, k), (k, n)),
        "v_batched": ((k,), batch[1] + (k, n)),
    }[kind]
    return Sample((draw(array(sa)), draw(array(sb))), {})


@st.composite
def basic_key(draw: Any) -> Sample:
    """An array and a key of ints, positive-step slices, ``None`` and ``...``."""
    shape = draw(shapes(min_dims=1))
    key: list[Any] = []
    for s in shape:
        choice = draw(st.sampled_from(["int", "slice", "full"] if s else ["slice", "full"]))
        if choice == "int":
            key.append(draw(st.integers(-s, s - 1)))
        elif choice == "slice":
            key.append(
                slice(
                    draw(st.none() | st.integers(-s - 1, s + 1)),
                    draw(st.none() | st.integers(-s - 1, s + 1)),
                    draw(st.none() | st.integers(1, 3)),
                )
            )
        else:
            key.append(slice(None))
    if draw(st.booleans()):
        key.insert(draw(st.integers(0, len(key))), None)
    if draw(st.booleans()):  # an ellipsis standing for a run of full slices
        i = draw(st.integers(0, len(key)))
        j = draw(st.integers(i, len(key)))
        if all(k == slice(None) for k in key[i:j]):
            key[i:j] = [Ellipsis]
    return Sample((draw(array(shape)),), {"key": tuple(key)})


@st.composite
def advanced_key(draw: Any) -> Sample:
    """An array and integer index arrays (negative entries, broadcasting, repeats) or a
    boolean mask, with slices and an ellipsis beside them."""
    shape = draw(shapes(min_dims=1, min_side=1))
    nd = len(shape)
    kind = draw(
        st.sampled_from(
            ["one", "two", "mask", "ellipsis_after", "ellipsis_before"] if nd > 1 else ["one", "mask", "ellipsis_after"]
        )
    )

    def idx(s: int, shape: Any = None) -> Any:
        return draw(
            hnp.arrays(np.int64, shapes(max_dims=2) if shape is None else shape, elements=st.integers(-s, s - 1))
        )

    if kind == "one":
        ax = draw(st.integers(0, nd - 1))
        key = (slice(None),) * ax + (idx(shape[ax]),)
    elif kind == "two":  # two index arrays that broadcast together, side by side or apart
        s0, s1 = draw(hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=2, max_side=MAX_SIDE)).input_shapes
        apart = nd == 3 and draw(st.booleans())
        if apart:  # (1-D or more: PyTorch takes a 0-d index tensor as an int, NumPy as an array, and
            # an int apart from an array puts the axes in different orders)
            s0, s1 = (s if s else (1,) for s in (s0, s1))
            key = (idx(shape[0], s0), slice(None), idx(shape[2], s1))
        else:
            key = (idx(shape[0], s0), idx(shape[1], s1))
    elif kind == "mask":
        key = (draw(hnp.arrays(np.bool_, shape[: draw(st.integers(1, nd))])),)
    elif kind == "ellipsis_after":
        key = (idx(shape[0]), Ellipsis)
    else:
        key = (Ellipsis, idx(shape[-1]))
    return Sample((draw(array(shape)),), {"key": key})


def _torch_key(key: tuple) -> tuple:
    return tuple(torch.from_numpy(k) if isinstance(k, np.ndarray) else k for k in key)


def _our_key(key: tuple) -> tuple:
    return tuple(k for k in key)  # NumPy arrays, as users pass them


@st.composite
def reshapes(draw: Any) -> Sample:
    shape = draw(shapes())
    n = math.prod(shape)
    target = draw(
        st.sampled_from(
            [(-1,), (n,), tuple(reversed(shape)), (1, n, 1), ()]
            if n == 1
            else [(-1,), (n,), tuple(reversed(shape)), (1, -1) if n else (1, 0)]
        )
    )
    return Sample((draw(array(shape)),), {"shape": target})


@st.composite
def permutes(draw: Any) -> Sample:
    shape = draw(shapes())
    return Sample((draw(array(shape)),), {"axes": tuple(draw(st.permutations(range(len(shape)))))})


@st.composite
def expands(draw: Any) -> Sample:
    shape = draw(shapes(max_dims=2))
    target = tuple(draw(st.integers(1, MAX_SIDE)) if s == 1 else s for s in shape)
    lead = tuple(draw(st.lists(st.integers(0, MAX_SIDE), max_size=2)))
    return Sample((draw(array(shape)),), {"shape": lead + target})


@st.composite
def cats(draw: Any) -> Sample:
    shape = list(draw(shapes(min_dims=1)))
    nd = len(shape)
    axis = draw(st.integers(-nd, nd - 1))
    arrays = []
    for _ in range(draw(st.integers(1, 3))):
        shape[axis] = draw(st.integers(0, MAX_SIDE))
        arrays.append(draw(array(tuple(shape))))
    return Sample(tuple(arrays), {"axis": axis})


@st.composite
def stacks(draw: Any) -> Sample:
    """1 to 3 arrays of one shape (0-d and empty among them) and a new axis, first to last."""
    shape = draw(shapes())
    nd = len(shape) + 1
    arrays = tuple(draw(array(shape)) for _ in range(draw(st.integers(1, 3))))
    return Sample(arrays, {"axis": draw(st.integers(-nd, nd - 1))})


@st.composite
def squeezes(draw: Any) -> Sample:
    shape = draw(shapes())
    ones = [i for i, s in enumerate(shape) if s == 1]
    axis = draw(st.sampled_from(ones)) if ones else None
    if not shape:
        axis = draw(st.sampled_from([0, -1, None]))
    return Sample((draw(array(shape)),), {"axis": axis})


@st.composite
def same_shape(draw: Any, n: int) -> Sample:
    shape = draw(shapes())
    return Sample(tuple(draw(array(shape)) for _ in range(n)), {})


@st.composite
def where_operands(draw: Any, n: int = 2) -> Sample:
    """A condition and ``n`` arrays, all broadcasting together."""
    sc, *rest = draw(hnp.mutually_broadcastable_shapes(num_shapes=n + 1, max_dims=3, max_side=MAX_SIDE)).input_shapes
    return Sample((draw(hnp.arrays(np.bool_, sc)), *(draw(array(s)) for s in rest)), {})


@st.composite
def masked_along_axis(draw: Any) -> Sample:
    """An array, a bool mask that broadcasts to it (rows of all False among them) and an axis."""
    sample = draw(masked_fills())
    x, mask = sample.args
    nd = max(x.ndim, 1)
    return Sample((x, mask), {"axis": draw(st.integers(-nd, nd - 1))})


@st.composite
def additive_scores(draw: Any) -> Sample:
    """Projected queries (..., Tq, h) and keys (..., Tk, h), leading axes broadcasting (0-sized
    among them), and h weights as (h,) or a Linear(h, 1)'s (1, h)."""
    lead_q, lead_k = draw(hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=2, max_side=2)).input_shapes
    h = draw(st.integers(1, 3))
    q = draw(array((*lead_q, draw(st.integers(0, 3)), h)))
    k = draw(array((*lead_k, draw(st.integers(0, 3)), h)))
    return Sample((q, k, draw(array(draw(st.sampled_from([(h,), (1, h)]))))), {})


@st.composite
def masked_fills(draw: Any) -> Sample:
    sx, sm = draw(hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=3, max_side=MAX_SIDE)).input_shapes
    x = draw(array(sx))
    sm = sm[-x.ndim :] if x.ndim else ()  # the mask broadcasts to x (PyTorch's rule)
    sm = tuple(s if s == x.shape[i - len(sm)] else 1 for i, s in enumerate(sm))
    return Sample((x, draw(hnp.arrays(np.bool_, sm))), {"value": draw(st.sampled_from([0.0, -1.5, math.inf, 2]))})


@st.composite
def attention(draw: Any, mask: str) -> Sample:
    """q (B, Tq, d), k (B, Tk, d), v (B, Tk, dv) and a mask of kind ``mask``."""
    b, tq, tk, d, dv = (draw(st.integers(1, MAX_SIDE)) for _ in range(5))
    if mask in ("none", "bool"):
        tk = draw(st.integers(0, MAX_SIDE))  # no keys too
    q, k, v = (draw(array(s, st.floats(-2.0, 2.0))) for s in ((b, tq, d), (b, tk, d), (b, tk, dv)))
    kw: dict[str, Any] = {"is_causal": mask == "causal"}
    if draw(st.booleans()):
        kw["scale"] = draw(st.sampled_from([0.5, 1.0, 2.0]))
    args: tuple = (q, k, v)
    if mask == "bool":
        args += (draw(hnp.arrays(np.bool_, (tq, tk))),)  # rows of all False among them
    elif mask in ("float", "float_with_inf"):
        fm = draw(array((b, 1, tk) if draw(st.booleans()) else (tq, tk), st.floats(-2.0, 2.0)))
        if mask == "float_with_inf":  # -inf entries, whole rows of them too
            fm = np.where(draw(hnp.arrays(np.bool_, fm.shape)), -math.inf, fm)
        args += (fm,)
    return Sample(args, kw)


def _sdpa_ours(q: Any, k: Any, v: Any, mask: Any = None, **kw: Any) -> Any:
    return F.scaled_dot_product_attention(q, k, v, mask=mask, **kw)


def _sdpa_theirs(q: Any, k: Any, v: Any, mask: Any = None, **kw: Any) -> Any:
    return TF.scaled_dot_product_attention(q, k, v, attn_mask=mask, **kw)


@st.composite
def cross_entropies(draw: Any) -> Sample:
    n, c = draw(st.integers(1, 4)), draw(st.integers(1, 4))
    lead = (n,) if draw(st.booleans()) else (draw(st.integers(1, 2)), n)
    logits = draw(array(lead + (c,), st.floats(-3.0, 3.0)))
    targets = draw(hnp.arrays(np.int64, lead, elements=st.integers(0, c - 1)))
    kw: dict[str, Any] = {"label_smoothing": draw(st.sampled_from([0.0, 0.1, 1.0]))}
    if draw(st.booleans()):
        kw["ignore_index"] = draw(st.integers(0, c - 1))
    return Sample((logits, targets), kw)


def _cross_entropy_theirs(logits: Any, targets: Any, ignore_index: int | None = None, **kw: Any) -> Any:
    return TF.cross_entropy(
        torch.movedim(logits, -1, 1) if logits.ndim > 2 else logits,
        targets,
        ignore_index=-100 if ignore_index is None else ignore_index,
        **kw,
    )


@st.composite
def layer_norms(draw: Any) -> Sample:
    shape = draw(shapes(min_dims=1, min_side=1))
    d = shape[-1]
    args = (draw(array(shape)),)
    kw = {"eps": draw(st.sampled_from([1e-5, 1e-2]))}
    affine = draw(st.sampled_from(["none", "weight", "both"]))
    if affine != "none":
        args += (draw(array((d,))),)
    if affine == "both":
        args += (draw(array((d,))),)
    return Sample(args, kw)


@st.composite
def plus_products(draw: Any, batched: bool) -> Sample:
    """``input, mat1, mat2`` of addmm (``batched``: baddbmm), ``input`` of the product's shape
    or one that broadcasts to it, and ``beta``, ``alpha``."""
    b, n, m, p = (draw(st.integers(1, 3)) for _ in range(4))
    lead = (b,) if batched else ()
    out = (*lead, n, p)
    shape = draw(st.sampled_from([out, out[-1:], (1,) * len(out), ()]))
    kw = {"beta": draw(st.sampled_from([1, 0.5, 0])), "alpha": draw(st.sampled_from([1, 2.0, -0.5]))}
    return Sample((draw(array(shape)), draw(array((*lead, n, m))), draw(array((*lead, m, p)))), kw)


@st.composite
def glus(draw: Any) -> Sample:
    shape = list(draw(shapes(min_dims=1, min_side=1)))
    dim = draw(st.integers(-len(shape), len(shape) - 1))
    shape[dim] *= 2
    return Sample((draw(array(tuple(shape))),), {"dim": dim})


@st.composite
def rms_norms(draw: Any) -> Sample:
    """An input, one or two trailing axes normalised (``n``), with or without a weight, and
    ``eps`` (None: the dtype's epsilon). Values away from zero: at an all-zero row the root
    mean square is ``sqrt(eps)``, where the float64 epsilon leaves no room for a difference
    quotient."""
    shape = draw(shapes(min_dims=1, min_side=1))
    n = draw(st.sampled_from([1, 2] if len(shape) > 1 else [1]))
    args = (draw(array(shape, AWAY_FROM_ZERO)),)
    if draw(st.booleans()):
        args += (draw(array(shape[len(shape) - n :])),)
    return Sample(args, {"n": n, "eps": draw(st.sampled_from([None, 1e-5, 0.1]))})


@st.composite
def linears(draw: Any) -> Sample:
    lead = draw(shapes(max_dims=2))
    i, o = draw(st.integers(1, MAX_SIDE)), draw(st.integers(1, MAX_SIDE))
    args = (draw(array(lead + (i,))), draw(array((o, i))))
    if draw(st.booleans()):
        args += (draw(array((o,))),)
    return Sample(args, {})


@st.composite
def tris(draw: Any) -> Sample:
    shape = draw(shapes(min_dims=2))
    return Sample((draw(array(shape)),), {"k": draw(st.integers(-MAX_SIDE, MAX_SIDE))})


@st.composite
def clips(draw: Any) -> Sample:
    x = draw(array(shapes()))
    lo, hi = sorted(draw(st.lists(st.sampled_from([-1.0, -0.5, 0.0, 0.5, 1.0]), min_size=2, max_size=2)))
    which = draw(st.sampled_from(["both", "lo", "hi"]))
    return Sample((x,), {"lo": None if which == "hi" else lo, "hi": None if which == "lo" else hi})


def _reduced(s: Sample) -> int:
    """How many elements each output of reduction sample ``s`` reduces."""
    shape, axis = s.args[0].shape, s.kwargs["axis"]
    if axis is None:
        return math.prod(shape)
    axes = (axis,) if isinstance(axis, int) else axis
    return math.prod(shape[a] for a in axes) if shape else 1


def _spread(s: Sample) -> bool:
    """Whether every slice a reduction sample reduces has values apart (std above 0.01)."""
    if _reduced(s) < 2:
        return False
    with np.errstate(all="ignore"):
        return bool(np.all(np.std(s.args[0], axis=s.kwargs["axis"]) > 0.01))


def _var_ours(x: Any, axis: Any, keepdims: bool, correction: int) -> Any:
    return x.var(axis, keepdim=keepdims, correction=correction)


def _var_theirs(x: Any, axis: Any, keepdims: bool, correction: int) -> Any:
    return torch.var(x, _dim(axis, x.ndim), correction=correction, keepdim=keepdims)


@st.composite
def typed_with_number(draw: Any, numeric: bool = False) -> Sample:
    """A bool, integer or float tensor, a condition, and a Python number: the dtype of the
    result is PyTorch's (a number takes the tensor's dtype unless it is of a higher kind)."""
    dtype = np.dtype(
        draw(st.sampled_from(([] if numeric else [np.bool_]) + [np.int32, np.int64, np.float32, np.float64]))
    )
    shape = draw(shapes())
    elements = {"b": st.booleans(), "i": st.integers(-3, 3), "f": st.floats(-3.0, 3.0, width=dtype.itemsize * 8)}
    x = draw(hnp.arrays(dtype, shape, elements=elements[dtype.kind]))
    number = draw(st.sampled_from([2, -1, 0.5, 1.5] if numeric else [2, -1, 0.5, 1.5, True, False]))
    return Sample((x, draw(hnp.arrays(np.bool_, shape))), {"number": number})


def _clip_theirs(x: Any, lo: Any, hi: Any) -> Any:
    return torch.clamp(x, lo, hi)


# -- the table -----------------------------------------------------------------------
OPS: list[OpInfo] = [
    # elementwise primitives
    OpInfo("add", lambda a, b: a + b, lambda a, b: a + b, binary(), ("Add",)),
    OpInfo("sub", lambda a, b: a - b, lambda a, b: a - b, binary(), ("Sub",)),
    # the gradients of tanh and sigmoid from their outputs, as PyTorch's autograd computes them
    OpInfo(
        "tanh_backward",
        lambda g, y: tga.ops.HyperbolicTangentBackward.apply(g, y),
        lambda g, y: torch.ops.aten.tanh_backward(g, y),
        binary(),
        ("HyperbolicTangentBackward",),
    ),
    OpInfo(
        "sigmoid_backward",
        lambda g, y: tga.ops.LogisticBackward.apply(g, y),
        lambda g, y: torch.ops.aten.sigmoid_backward(g, y),
        binary(),
        ("LogisticBackward",),
    ),
    OpInfo("mul", lambda a, b: a * b, lambda a, b: a * b, binary(), ("Mul",)),
    OpInfo("div", lambda a, b: a / b, lambda a, b: a / b, binary(b_elements=AWAY_FROM_ZERO), ("Div",)),
    OpInfo(
        "scalar_arith",
        lambda a: (2.5 - a) * 3 / 2.0 + 1 - 4.0 / (a * a + 1.0),
        lambda a: (2.5 - a) * 3 / 2.0 + 1 - 4.0 / (a * a + 1.0),
        unary(),
        ("Add", "Sub", "Mul", "Div"),
    ),
    OpInfo("neg", lambda a: -a, lambda a: -a, unary(), ("Neg",)),
    OpInfo("pow", lambda a, b: a**b, lambda a, b: a**b, binary(POSITIVE), ("Pow",)),
    # (second order at base 0: PyTorch's NaN, a 0 * inf inside its masked formula, is ours too)
    OpInfo(
        "pow_base_zero",
        lambda a, b: (a * 0.0) ** b,
        lambda a, b: (a * 0.0) ** b,
        binary(POSITIVE, st.sampled_from([0.0, 1.0, 2.0, 2.5])),
        ("Pow",),
    ),
    OpInfo(
        "pow_scalar",
        lambda a, c: a**c,
        lambda a, c: a**c,
        st.builds(
            lambda s, c: Sample((s.args[0],), {"c": c}), unary(POSITIVE), st.sampled_from([0.0, 1.0, 2, 3.0, -1.0, 0.5])
        ),
        ("PowScalar",),
    ),
    OpInfo(
        "pow_scalar_any_sign",
        lambda a, c: a**c,
        lambda a, c: a**c,
        st.builds(lambda s, c: Sample((s.args[0],), {"c": c}), unary(), st.sampled_from([0.0, 1.0, 2, 3.0])),
        ("PowScalar",),
    ),
    OpInfo(
        "rpow",
        lambda a, c: c**a,
        lambda a, c: c**a,
        st.builds(lambda s, c: Sample((s.args[0],), {"c": c}), unary(), st.sampled_from([2.0, 0.5, 1.0])),
        ("Pow",),
    ),
    OpInfo("rpow_zero_base", lambda a: 0.0**a, lambda a: 0.0**a, unary(POSITIVE), ("Pow",), gradgrad=False),
    OpInfo("exp", lambda a: a.exp(), lambda a: a.exp(), unary(), ("Exp",)),
    OpInfo("log", lambda a: a.log(), lambda a: a.log(), unary(POSITIVE), ("Log",)),
    OpInfo("sqrt", lambda a: a.sqrt(), lambda a: a.sqrt(), unary(POSITIVE), ("Sqrt",)),
    OpInfo("tanh", lambda a: F.tanh(a), lambda a: a.tanh(), unary(), ("HyperbolicTangent", "tanh")),
    OpInfo("sigmoid", lambda a: F.sigmoid(a), lambda a: a.sigmoid(), unary(), ("Logistic", "sigmoid")),
    OpInfo("relu", lambda a: F.relu(a), lambda a: a.relu(), unary(), ("Relu", "relu")),
    OpInfo("abs", lambda a: a.abs(), lambda a: a.abs(), unary(), ("Abs",)),
    OpInfo("erf", lambda a: a.erf(), lambda a: torch.erf(a), unary(st.floats(-6.0, 6.0)), ("Erf",), atol=1e-14),
    OpInfo(
        "special.erfcx",
        lambda a: tga.special.erfcx(a),
        lambda a: torch.special.erfcx(a),
        unary(st.floats(-4.0, 40.0)),
        ("Erfcx",),
    ),
    OpInfo("maximum", lambda a, b: a.maximum(b), lambda a, b: torch.maximum(a, b), binary(), ("Maximum",)),
    OpInfo("minimum", lambda a, b: a.minimum(b), lambda a, b: torch.minimum(a, b), binary(), ("Minimum",)),
    OpInfo(
        "where",
        lambda c, a, b: F.where(c, a, b),
        lambda c, a, b: torch.where(c, a, b),
        where_operands(2),
        ("Where", "where"),
    ),
    OpInfo(
        "where_scalar",
        lambda c, a: tga.where(c, a, 2.0),
        lambda c, a: torch.where(c, a, 2.0),
        where_operands(1),
        ("Where",),
    ),
    OpInfo(
        "masked_fill",
        lambda x, m, value: x.masked_fill(m, value),
        lambda x, m, value: x.masked_fill(m, value),
        masked_fills(),
        ("Where",),
    ),
    OpInfo("clip", lambda x, lo, hi: x.clip(lo, hi), _clip_theirs, clips(), ("Where",)),
    # dtypes of tensors combined with Python numbers (values and dtypes compared; nothing to differentiate)
    OpInfo(
        "where_number_dtype",
        lambda x, c, number: tga.where(c, x, number),
        lambda x, c, number: torch.where(c, x, number),
        typed_with_number(),
        grad=False,
        extremes=False,
    ),
    OpInfo(
        "masked_fill_number_dtype",
        lambda x, c, number: x.masked_fill(c, number),
        lambda x, c, number: x.masked_fill(c, number),
        typed_with_number(),
        grad=False,
        extremes=False,
    ),
    OpInfo(
        "clip_number_dtype",
        lambda x, c, number: x.clip(number, None),
        lambda x, c, number: torch.clamp(x, number),
        typed_with_number(numeric=True),
        grad=False,
        extremes=False,
    ),
    OpInfo(
        "compare_number_dtype",
        lambda x, c, number: (x < number) | (x == number),
        lambda x, c, number: (x < number) | (x == number),
        typed_with_number(),
        grad=False,
        extremes=False,
    ),
    OpInfo(
        "astype", lambda a: a.astype(np.float32).astype(np.float64), lambda a: a.float().double(), unary(), ("Cast",)
    ),
    # reductions
    OpInfo(
        "sum",
        lambda x, axis, keepdims: x.sum(axis, keepdims),
        lambda x, axis, keepdims: x.sum(_dim(axis, x.ndim), keepdims),
        reduction(),
        ("Sum",),
    ),
    OpInfo(
        "max",
        lambda x, axis, keepdims: x.max(axis=axis, keepdims=keepdims),
        lambda x, axis, keepdims: torch.amax(x, _dim(axis, x.ndim), keepdims),
        reduction(nonempty=True),
        ("Max",),
    ),
    OpInfo(
        "min",
        lambda x, axis, keepdims: x.min(axis=axis, keepdims=keepdims),
        lambda x, axis, keepdims: torch.amin(x, _dim(axis, x.ndim), keepdims),
        reduction(nonempty=True),
        ("Min",),
    ),
    OpInfo(
        "mean",
        lambda x, axis, keepdims: x.mean(axis, keepdims),
        lambda x, axis, keepdims: x.mean(_dim(axis, x.ndim), keepdims),
        reduction(),
        composite=True,
    ),
    # (var, std, layer_norm: extremes=False. The mean of huge values cancels to noise of 1e-16
    # relative to them, which NumPy and PyTorch round differently: a spread of 0 here, 1e14 there.)
    OpInfo(
        "var",
        _var_ours,
        _var_theirs,
        reduction(correction=st.sampled_from([0, 1])).filter(lambda s: _reduced(s) > s.kwargs["correction"]),
        composite=True,
        extremes=False,
    ),
    # correction >= N: inf or NaN, as PyTorch (its gradients there are 0 * inf: compared by the values only)
    OpInfo(
        "var_overcorrected",
        _var_ours,
        _var_theirs,
        reduction(correction=st.sampled_from([1, 2, 5])).filter(lambda s: _reduced(s) <= s.kwargs["correction"]),
        composite=True,
        grad=False,
        extremes=False,
    ),
    OpInfo(  # (a spread away from 0: sqrt's slope there is infinite; test_ops checks std at 0)
        "std",
        lambda x, axis, keepdims: x.std(axis=axis, keepdims=keepdims),
        lambda x, axis, keepdims: torch.std(x, _dim(axis, x.ndim), correction=0, keepdim=keepdims),
        reduction(elements=st.floats(-3.0, 3.0)).filter(_spread),
        composite=True,
        atol=1e-8,
        rtol=1e-6,
        extremes=False,
    ),
    OpInfo(
        "logsumexp",
        lambda x, axis, keepdims: x.logsumexp(_dim(axis, x.ndim), keepdims),
        lambda x, axis, keepdims: torch.logsumexp(x, _dim(axis, x.ndim), keepdims),
        reduction(),
        composite=True,
    ),
    OpInfo(
        "argmax",
        lambda x, axis: x.argmax(axis),
        lambda x, axis: torch.argmax(x, axis),
        reduction(nonempty=True, keepdims=False).filter(lambda s: not isinstance(s.kwargs["axis"], tuple)),
        grad=False,
        extremes=False,
    ),  # (ties among infinities resolve differently, as either is right)
    OpInfo(
        "argmin",
        lambda x, axis: x.argmin(axis),
        lambda x, axis: torch.argmin(x, axis),
        reduction(nonempty=True, keepdims=False).filter(lambda s: not isinstance(s.kwargs["axis"], tuple)),
        grad=False,
        extremes=False,
    ),
    OpInfo(
        "compare",
        lambda a, b: (a < b) & (a >= b * 0.5) | (a == b),
        lambda a, b: (a < b) & (a >= b * 0.5) | (a == b),
        binary(),
        grad=False,
    ),
    # linear algebra and shapes
    OpInfo("matmul", lambda a, b: a @ b, lambda a, b: a @ b, matmul_operands(), ("Matmul",)),
    OpInfo("reshape", lambda x, shape: x.reshape(shape), lambda x, shape: x.reshape(shape), reshapes(), ("Reshape",)),
    OpInfo("permute", lambda x, axes: x.permute(axes), lambda x, axes: x.permute(axes), permutes(), ("Permute",)),
    OpInfo("expand", lambda x, shape: x.expand(shape), lambda x, shape: x.expand(shape), expands(), ("Expand",)),
    OpInfo("getitem_basic", lambda x, key: x[key], lambda x, key: x[key], basic_key(), ("Slice", "SliceGrad")),
    OpInfo(
        "getitem_advanced",
        lambda x, key: x[_our_key(key)],
        lambda x, key: x[_torch_key(key)],
        advanced_key(),
        ("Gather", "ScatterAdd"),
    ),
    OpInfo("cat", lambda *xs, axis: tga.cat(xs, axis), lambda *xs, axis: torch.cat(xs, axis), cats(), ("Cat",)),
    OpInfo(
        "stack",
        lambda *xs, axis: tga.stack(xs, axis),
        lambda *xs, axis: torch.stack(xs, axis),
        stacks(),
        ("Stack",),
    ),
    OpInfo(
        "squeeze",
        lambda x, axis: x.squeeze() if axis is None else x.squeeze(axis),  # (squeeze(None) raises, as PyTorch's)
        lambda x, axis: x.squeeze() if axis is None else x.squeeze(axis),
        squeezes(),
    ),
    OpInfo("transpose", lambda x: x.transpose(0, -1), lambda x: x.transpose(0, -1), unary(min_dims=1)),
    OpInfo(
        "unsqueeze",
        lambda x, axis: x.unsqueeze(axis),
        lambda x, axis: x.unsqueeze(axis),
        st.builds(lambda a, i: Sample((a,), {"axis": i}), array(shapes()), st.integers(-4, 3)).filter(
            lambda s: -s.args[0].ndim - 1 <= s.kwargs["axis"] <= s.args[0].ndim
        ),
    ),
    OpInfo("flatten", lambda x: x.flatten(), lambda x: x.flatten(), unary()),
    OpInfo(
        "chunk",
        lambda x, n: tga.cat(x.chunk(n, -1), -1),
        lambda x, n: torch.cat(x.chunk(n, -1), -1),
        st.builds(lambda s, n: Sample(s.args, {"n": n}), unary(min_dims=1, min_side=1), st.integers(1, 3)),
    ),
    OpInfo("tril", lambda x, k: tga.tril(x, k), lambda x, k: torch.tril(x, k), tris()),
    OpInfo("triu", lambda x, k: tga.triu(x, k), lambda x, k: torch.triu(x, k), tris()),
    # composites of tinygrad_attn.functional
    OpInfo(
        "softmax",
        lambda x, axis: F.softmax(x, axis),
        lambda x, axis: torch.softmax(x, axis),
        along_axis(),
        ("softmax",),
        composite=True,
    ),
    OpInfo(
        "masked_softmax",
        lambda x, mask, axis: F.masked_softmax(x, mask, axis),
        # (PyTorch has no public masked softmax: its ops, as attention over padded keys uses them)
        lambda x, mask, axis: torch.where(mask, torch.softmax(torch.where(mask, x, -1e9), axis), 0.0),
        masked_along_axis(),
        ("masked_softmax",),
        composite=True,
    ),
    OpInfo(
        "additive_score",
        lambda q, k, v: F.additive_score(q, k, v),
        # (PyTorch has no such function: its ops, as a Bahdanau attention writes them)
        lambda q, k, v: torch.tanh(q.unsqueeze(-2) + k.unsqueeze(-3)) @ v.reshape(-1),
        additive_scores(),
        ("additive_score",),
        composite=True,
    ),
    OpInfo(
        "log_softmax",
        lambda x, axis: F.log_softmax(x, axis),
        lambda x, axis: torch.log_softmax(x, axis),
        along_axis(),
        ("log_softmax",),
        composite=True,
    ),
    OpInfo(
        "layer_norm",
        lambda x, w=None, b=None, eps=1e-5: F.layer_norm(x, x.shape[-1:], w, b, eps),
        lambda x, w=None, b=None, eps=1e-5: TF.layer_norm(x, x.shape[-1:], w, b, eps),
        layer_norms(),
        ("layer_norm",),
        composite=True,
        atol=1e-8,
        rtol=1e-6,
        extremes=False,
    ),
    OpInfo(
        "rms_norm",
        lambda x, w=None, n=1, eps=None: F.rms_norm(x, x.shape[x.ndim - n :], w, eps),
        lambda x, w=None, n=1, eps=None: TF.rms_norm(x, x.shape[x.ndim - n :], w, eps),
        rms_norms(),
        ("rms_norm",),
        composite=True,
        atol=1e-8,
        rtol=1e-6,
        extremes=False,
    ),
    OpInfo(
        "gelu",
        lambda x, approximate: F.gelu(x, approximate=approximate),
        lambda x, approximate: TF.gelu(x, approximate=approximate),
        st.builds(lambda s, a: Sample(s.args, {"approximate": a}), unary(), st.sampled_from(["none", "tanh"])),
        ("gelu",),
        composite=True,
        atol=1e-13,
    ),
    OpInfo(
        "linear",
        lambda x, w, b=None: F.linear(x, w, b),
        lambda x, w, b=None: TF.linear(x, w, b),
        linears(),
        ("linear",),
        composite=True,
    ),
    OpInfo(
        "dropout",
        lambda x, p, training: F.dropout(x, p, training),
        lambda x, p, training: TF.dropout(x, p, training),
        st.builds(
            lambda s, p, t: Sample(s.args, {"p": p, "training": t}),
            unary(),
            st.sampled_from([0.0, 1.0, 0.5]),
            st.booleans(),
        ).filter(lambda s: s.kwargs["p"] != 0.5 or not s.kwargs["training"]),
        ("dropout",),
        composite=True,
    ),  # (only where no random draw decides: p = 0 or 1, or not training)
    OpInfo(
        "cross_entropy",
        lambda logits, targets, **kw: F.cross_entropy(logits, targets, **kw, class_axis=-1),  # (classes last)
        _cross_entropy_theirs,
        cross_entropies(),
        ("cross_entropy",),
        composite=True,
        extremes=False,
    ),  # (the logits' extremes: see test_functional; here NaN targets nothing)
    OpInfo("mse_loss", F.mse_loss, lambda a, b: TF.mse_loss(a, b), same_shape(2), ("mse_loss",), composite=True),
    OpInfo(
        "attention",
        _sdpa_ours,
        _sdpa_theirs,
        attention("none"),
        ("scaled_dot_product_attention",),
        composite=True,
        extremes=False,
        atol=1e-8,
        rtol=1e-6,
    ),
    OpInfo(
        "attention_causal",
        _sdpa_ours,
        _sdpa_theirs,
        attention("causal"),
        composite=True,
        extremes=False,
        atol=1e-8,
        rtol=1e-6,
    ),
    OpInfo(
        "attention_bool_mask",
        _sdpa_ours,
        _sdpa_theirs,
        attention("bool"),
        composite=True,
        extremes=False,
        atol=1e-8,
        rtol=1e-6,
    ),
    OpInfo(
        "attention_float_mask",
        _sdpa_ours,
        _sdpa_theirs,
        attention("float"),
        composite=True,
        extremes=False,
        atol=1e-8,
        rtol=1e-6,
    ),
    OpInfo(
        "attention_float_mask_with_inf",
        _sdpa_ours,
        _sdpa_theirs,
        attention("float_with_inf"),
        composite=True,
        extremes=False,
        atol=1e-8,
        rtol=1e-6,
    ),
    OpInfo(
        "causal_mask",
        lambda tq, tk: F.causal_mask(tq, tk),
        lambda tq, tk: torch.ones(tq, tk, dtype=torch.bool).tril(),
        st.builds(lambda a, b: Sample((), {"tq": a, "tk": b}), st.integers(0, 4), st.integers(0, 4)),
        ("causal_mask",),
        grad=False,
    ),
]


# -- the PyTorch-face functions (entries take effect where tinygrad_attn.functional has them) --
@st.composite
def probabilities_and_targets(draw: Any, logits: bool) -> Sample:
    """Inputs, targets in [0, 1], and maybe ``weight`` and ``pos_weight`` (as arguments,
    so they are tensors on the device and their gradients are compared too)."""
    shape = draw(shapes(min_dims=1))
    x = draw(array(shape, st.floats(-3.0, 3.0) if logits else st.floats(0.05, 0.95)))
    args: tuple = (x, draw(array(shape, st.floats(0.0, 1.0))))
    names: tuple = ()
    for name in ("weight", "pos_weight") if logits else ("weight",):
        if draw(st.booleans()):
            args, names = args + (draw(array(shape[-1:], st.floats(0.1, 2.0))),), names + (name,)
    return Sample(args, {"reduction": draw(st.sampled_from(["mean", "sum", "none"])), "names": names})


def _named_extras(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn(a, b, **kw)`` called as ``call(a, b, *extras, names=...)``: the tensors after the
    first two are passed as the keyword arguments ``names`` says."""

    def call(a: Any, b: Any, *extras: Any, names: tuple = (), **kw: Any) -> Any:
        return fn(a, b, **kw, **dict(zip(names, extras)))

    return call


@st.composite
def nll_samples(draw: Any) -> Sample:
    n, c = draw(st.integers(1, 4)), draw(st.integers(1, 4))
    logp = draw(array((n, c), st.floats(-4.0, 0.0)))
    target = draw(hnp.arrays(np.int64, (n,), elements=st.integers(0, c - 1)))
    kw: dict[str, Any] = {"reduction": draw(st.sampled_from(["mean", "sum", "none"]))}
    if draw(st.booleans()):
        kw["ignore_index"] = draw(st.integers(0, c - 1))
    args: tuple = (logp, target)
    kw["names"] = ()
    if draw(st.booleans()):
        args, kw["names"] = args + (draw(array((c,), st.floats(0.1, 2.0))),), ("weight",)
    return Sample(args, kw)


@st.composite
def embeddings(draw: Any) -> Sample:
    v, d = draw(st.integers(1, 4)), draw(st.integers(1, 3))
    ids = draw(hnp.arrays(np.int64, shapes(max_dims=2), elements=st.integers(0, v - 1)))
    kw = {"padding_idx": draw(st.none() | st.integers(0, v - 1))}
    return Sample((ids, draw(array((v, d)))), kw)


@st.composite
def pads(draw: Any) -> Sample:
    x = draw(array(shapes(min_dims=1)))
    n = draw(st.integers(1, min(x.ndim, 2)))
    widths = tuple(draw(st.integers(0, 2)) for _ in range(2 * n))
    return Sample((x,), {"pad": widths, "value": draw(st.sampled_from([0.0, -1.5]))})


PYTORCH_FACE: list[OpInfo] = [
    OpInfo(
        "leaky_relu",
        lambda x, s: F.leaky_relu(x, s),
        lambda x, s: TF.leaky_relu(x, s),
        st.builds(lambda u, s: Sample(u.args, {"s": s}), unary(), st.sampled_from([0.01, 0.2])),
        ("leaky_relu",),
    ),
    OpInfo("silu", lambda x: F.silu(x), lambda x: TF.silu(x), unary(), ("silu",)),
    # (second order at exactly 0, where elu'' jumps from alpha to 0: PyTorch takes the right side)
    OpInfo(
        "elu",
        lambda x, alpha: F.elu(x, alpha),
        lambda x, alpha: TF.elu(x, alpha),
        st.builds(lambda u, a: Sample(u.args, {"alpha": a}), unary(), st.sampled_from([1.0, 0.5])),
        ("elu",),
        gradgrad=False,
    ),
    OpInfo(
        "elu_off_0",
        lambda x, alpha: F.elu(x, alpha),
        lambda x, alpha: TF.elu(x, alpha),
        st.builds(lambda u, a: Sample(u.args, {"alpha": a}), unary(AWAY_FROM_ZERO), st.sampled_from([1.0, 0.5])),
        ("elu",),
    ),
    OpInfo(
        "softplus",
        lambda x, beta, threshold: F.softplus(x, beta, threshold),
        lambda x, beta, threshold: TF.softplus(x, beta, threshold),
        st.builds(
            lambda u, b, t: Sample(u.args, {"beta": b, "threshold": t}),
            unary(),
            st.sampled_from([1.0, 2.0]),
            # Not 1.0: at beta * x exactly equal to the threshold, PyTorch's forward and first
            # derivative take the log(1 + exp) branch but its second derivative is 0 (the linear
            # branch's); ours is the true curvature there. 1.25 is never hit by the samples.
            st.sampled_from([20.0, 1.25]),
        ),
        ("softplus",),
    ),
    OpInfo(
        "normalize",
        lambda x, p, dim: F.normalize(x, p, dim),
        lambda x, p, dim: TF.normalize(x, p, dim),
        st.builds(
            lambda s, p: Sample(s.args, {"p": p, "dim": s.kwargs["axis"]}),
            along_axis(min_dims=1).filter(
                lambda s: s.args[0].shape[s.kwargs["axis"]] > 0
            ),  # (PyTorch has no inf-norm of nothing)
            st.sampled_from([2.0, 1.0, math.inf]),
        ),
        ("normalize",),
        atol=1e-8,
        rtol=1e-6,
    ),
    OpInfo(
        "binary_cross_entropy",
        _named_extras(lambda *a, **k: F.binary_cross_entropy(*a, **k)),
        _named_extras(lambda *a, **k: TF.binary_cross_entropy(*a, **k)),
        probabilities_and_targets(logits=False),
        ("binary_cross_entropy",),
        extremes=False,
        grad_args=1,
        atol=1e-8,
        rtol=1e-6,
    ),
    OpInfo(
        "binary_cross_entropy_with_logits",
        _named_extras(lambda *a, **k: F.binary_cross_entropy_with_logits(*a, **k)),
        _named_extras(lambda *a, **k: TF.binary_cross_entropy_with_logits(*a, **k)),
        probabilities_and_targets(logits=True),
        ("binary_cross_entropy_with_logits",),
        extremes=False,
        grad_args=2,
        atol=1e-8,
        rtol=1e-6,
    ),
    OpInfo(
        "nll_loss",
        _named_extras(lambda *a, **k: F.nll_loss(*a, **k)),
        _named_extras(lambda *a, **k: TF.nll_loss(*a, **k)),
        nll_samples(),
        ("nll_loss",),
        extremes=False,
        grad_args=1,
    ),
    OpInfo(
        "one_hot",
        lambda ids, num_classes: F.one_hot(ids, num_classes),
        lambda ids, num_classes: TF.one_hot(ids, num_classes),
        st.builds(
            lambda ids, extra: Sample((ids,), {"num_classes": 4 + extra}),
            hnp.arrays(np.int64, shapes(max_dims=2), elements=st.integers(0, 3)),
            st.integers(0, 2),
        ),
        ("one_hot",),
        grad=False,
    ),
    OpInfo(
        "embedding",
        lambda ids, w, padding_idx: F.embedding(ids, w, padding_idx),
        lambda ids, w, padding_idx: TF.embedding(ids, w, padding_idx),
        embeddings(),
        ("embedding",),
        extremes=False,
    ),
    OpInfo(
        "pad",
        lambda x, pad, value: F.pad(x, pad, "constant", value),
        lambda x, pad, value: TF.pad(x, pad, "constant", value),
        pads(),
        ("pad",),
    ),
]
OPS += [op for op in PYTORCH_FACE if all(hasattr(F, name) for name in op.covers)]


# -- the PyTorch face of Tensor (tinygrad_attn.tensors.tensor_functions and its primitives) ------
@st.composite
def gathers(draw: Any) -> Sample:
    """An array, one of its axes (of length >= 1) and an int64 index for ``gather`` along it:
    as many axes as the array, no longer off the axis, entries inside the axis, repeats allowed."""
    shape = draw(shapes(min_dims=1, min_side=1))
    nd = len(shape)
    dim = draw(st.integers(-nd, nd - 1))
    d = dim % nd
    ishape = tuple(draw(st.integers(1, 3)) if i == d else draw(st.integers(1, s)) for i, s in enumerate(shape))
    index = draw(hnp.arrays(np.int64, ishape, elements=st.integers(0, shape[d] - 1)))
    return Sample((draw(array(shape)), index), {"dim": dim})


TENSOR_FACE = [
    OpInfo("sin", lambda a: a.sin(), lambda a: a.sin(), unary(), ("Sin",)),
    OpInfo("cos", lambda a: tga.cos(a), lambda a: torch.cos(a), unary(), ("Cos",)),
    OpInfo("floor", lambda a: a.floor(), lambda a: a.floor(), unary(), ("Floor",)),
    OpInfo("ceil", lambda a: a.ceil(), lambda a: a.ceil(), unary(), ("Ceil",)),
    OpInfo("round", lambda a: (a * 2.0).round(), lambda a: (a * 2.0).round(), unary(), ("Round",)),
    OpInfo("sign", lambda a: a.sign(), lambda a: a.sign(), unary(), ("Sign",)),
    OpInfo("cumsum", lambda x, axis: x.cumsum(axis), lambda x, axis: x.cumsum(axis), along_axis(), ("Cumsum",)),
    OpInfo(
        "gather_along",
        lambda x, index, dim: x.gather(dim, index),
        lambda x, index, dim: x.gather(dim, index),
        gathers(),
        ("GatherAlong", "ScatterAddAlong"),
    ),
    OpInfo(
        "scatter_add_along",
        lambda x, index, dim: x.scatter_add(dim, index, x[tuple(slice(0, n) for n in index.shape)] * 2.0),
        lambda x, index, dim: x.scatter_add(dim, index, x[tuple(slice(0, n) for n in index.shape)] * 2.0),
        gathers().filter(lambda s: all(i <= n for i, n in zip(s.args[1].shape, s.args[0].shape))),
        ("ScatterAddAlong",),
    ),
    # (stable on both sides: with ties, an unstable sort may send a gradient to another copy)
    OpInfo(
        "sort",
        lambda x, axis: x.sort(dim=axis, stable=True).values,
        lambda x, axis: torch.sort(x, dim=axis, stable=True).values,
        along_axis(min_dims=1),
    ),
    # (extremes off: the product tree multiplies in another order than PyTorch, so 1e30 * 1e30
    # * 1e-300 may overflow on one side only)
    OpInfo("prod", lambda x, axis: x.prod(axis), lambda x, axis: x.prod(axis), along_axis(min_dims=1), extremes=False),
    # (exact zeros, but no tiny values: PyTorch's cumprod differentiates by dividing by the
    # product where no entry is 0, so products that underflow (1e-298 squared) give it a
    # second derivative of 0 where the true one, ours, is not)
    OpInfo("cumprod", lambda x, axis: x.cumprod(axis), lambda x, axis: x.cumprod(axis),
           along_axis(min_dims=1, elements=st.one_of(AWAY_FROM_ZERO, st.just(0.0))), extremes=False),
    OpInfo("flip", lambda x, axis: x.flip(axis), lambda x, axis: x.flip(axis), along_axis(min_dims=1)),
    OpInfo("roll", lambda x, axis: x.roll(2, axis), lambda x, axis: x.roll(2, axis), along_axis(min_dims=1)),
]  # fmt: skip
OPS += TENSOR_FACE


# -- PyTorch's further math, logic, scans, selections and activations (tinygrad_attn/tensors/elementwise/math_functions.py,
# activations.py, ops/transcendental.py, ops/running_index.py) -------------------------------------
INSIDE_ONE = st.floats(-0.95, 0.95)  # (asin, acos, atanh, erfinv: derivatives are infinite at +-1)
ABOVE_ONE = st.one_of(st.floats(1.05, 3.0), st.sampled_from([2.0, 1e3]))
ABOVE_MINUS_ONE = st.one_of(st.floats(-0.9, 3.0), st.sampled_from([0.0, 1e-12, -1e-12]))


def _with(strategy: st.SearchStrategy, **kw: st.SearchStrategy) -> st.SearchStrategy:
    """A sample strategy with keyword arguments drawn alongside."""
    return st.builds(lambda s, extra: Sample(s.args, {**s.kwargs, **extra}), strategy, st.fixed_dictionaries(kw))


@st.composite
def masked(draw: Any) -> Sample:
    """An array and a bool mask that broadcasts with it."""
    sa, sm = draw(hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=3, max_side=MAX_SIDE)).input_shapes
    return Sample((draw(array(sa)), draw(hnp.arrays(np.bool_, sm))), {})


@st.composite
def scatter_reduces(draw: Any) -> Sample:
    """``gathers()`` whose index fits the array, a ``src`` of the index's shape, a reduction."""
    s = draw(gathers().filter(lambda s: all(i <= n for i, n in zip(s.args[1].shape, s.args[0].shape))))
    x, index = s.args
    src = draw(array(index.shape, st.sampled_from([0.0, 1.0, -1.0, 0.5, 2.0]) | VALUES))
    kw = {"dim": s.kwargs["dim"], "reduce": draw(st.sampled_from(["sum", "prod", "mean", "amax", "amin"])),
          "include_self": draw(st.booleans())}  # fmt: skip
    return Sample((x, src, index), kw)


@st.composite
def index_lines(draw: Any) -> Sample:
    """An array, an axis of it, a 1-D index into the axis without repeats, and a source."""
    shape = draw(shapes(min_dims=1, min_side=1))
    dim = draw(st.integers(0, len(shape) - 1))
    idx = np.array(draw(st.lists(st.integers(0, shape[dim] - 1), min_size=1, max_size=shape[dim], unique=True)))
    src_shape = shape[:dim] + (len(idx),) + shape[dim + 1 :]
    return Sample((draw(array(shape)), draw(array(src_shape)), idx), {"dim": dim})


@st.composite
def planes(draw: Any) -> Sample:
    """An array of 2+ axes, two distinct axes of it and a diagonal offset."""
    shape = draw(shapes(min_dims=2))
    nd = len(shape)
    d1, d2 = draw(st.lists(st.integers(-nd, nd - 1), min_size=2, max_size=2, unique_by=lambda d: d % nd))
    return Sample((draw(array(shape)),), {"offset": draw(st.integers(-2, 2)), "dim1": d1, "dim2": d2})


@st.composite
def sums_to_size(draw: Any) -> Sample:
    """An array and a size it broadcasts from (ones and dropped leading axes)."""
    shape = draw(shapes())
    k = draw(st.integers(0, len(shape)))
    size = tuple(1 if draw(st.booleans()) else s for s in shape[k:])
    return Sample((draw(array(shape)),), {"size": size})


def _unary(name: str, ours: Callable, theirs: Callable, elements: st.SearchStrategy = VALUES, covers: tuple = (),
           **kw: Any) -> OpInfo:  # fmt: skip
    return OpInfo(name, ours, theirs, unary(elements), covers, **kw)


MATH_FUNCTIONS = [
    _unary("asin", lambda a: a.asin(), lambda a: a.asin(), INSIDE_ONE, ("Asin",)),
    _unary("acos", lambda a: tga.acos(a), lambda a: torch.acos(a), INSIDE_ONE, ("Acos",)),
    _unary("atan", lambda a: a.atan(), lambda a: a.atan(), covers=("Atan",)),
    _unary("asinh", lambda a: tga.asinh(a), lambda a: torch.asinh(a), covers=("Asinh",)),
    _unary("acosh", lambda a: a.acosh(), lambda a: a.acosh(), ABOVE_ONE, ("Acosh",)),
    _unary("atanh", lambda a: tga.atanh(a), lambda a: torch.atanh(a), INSIDE_ONE, ("Atanh",)),
    _unary("log1p", lambda a: a.log1p(), lambda a: a.log1p(), ABOVE_MINUS_ONE, ("Log1p",)),
    _unary("expm1", lambda a: tga.expm1(a), lambda a: torch.expm1(a), covers=("Expm1",)),
    _unary("sinc", lambda a: a.sinc(), lambda a: torch.sinc(a), AWAY_FROM_ZERO, ("Sinc",),
           notes="at 0 PyTorch's second derivative is NaN (ours: -pi^2/3, tests/tensor/test_math_functions.py)"),
    # (erfinv: our Newton-refined approximation is good to a few ulps, not to the last one)
    _unary("erfinv", lambda a: a.erfinv(), lambda a: a.erfinv(), INSIDE_ONE, ("Erfinv",), rtol=1e-12, atol=1e-13),
    _unary("sinh", lambda a: a.sinh(), lambda a: a.sinh(), composite=True),
    _unary("cosh", lambda a: tga.cosh(a), lambda a: torch.cosh(a), composite=True),
    _unary("tan", lambda a: a.tan(), lambda a: a.tan(), covers=("Tan",), composite=True),
    _unary("log2", lambda a: a.log2(), lambda a: a.log2(), POSITIVE, ("Log2",)),
    _unary("log10", lambda a: tga.log10(a), lambda a: torch.log10(a), POSITIVE, ("Log10",)),
    _unary("exp2", lambda a: a.exp2(), lambda a: a.exp2(), covers=("Exp2",)),
    _unary("deg2rad", lambda a: a.deg2rad(), lambda a: a.deg2rad()),
    _unary("rad2deg", lambda a: tga.rad2deg(a), lambda a: torch.rad2deg(a)),
    _unary("trunc", lambda a: (a * 2.0).trunc(), lambda a: (a * 2.0).trunc(), composite=True),
    _unary("frac", lambda a: (a * 2.0).frac(), lambda a: (a * 2.0).frac(), composite=True),
    _unary("clamp_max", lambda a: a.clamp_max(0.5), lambda a: a.clamp_max(0.5)),
    _unary("clamp_min", lambda a: tga.clamp_min(a, -0.5), lambda a: torch.clamp_min(a, -0.5)),
    OpInfo("atan2", lambda y, x: y.atan2(x), lambda y, x: y.atan2(x), binary(AWAY_FROM_ZERO, AWAY_FROM_ZERO),
           ("Atan2",)),
    OpInfo("logaddexp", lambda a, b: a.logaddexp(b), lambda a, b: a.logaddexp(b), binary(), composite=True),
    OpInfo("xlogy", lambda a, b: tga.xlogy(a, b), lambda a, b: torch.xlogy(a, b), binary(VALUES, POSITIVE),
           composite=True),
    # (extremes off: the squares of 1e30 and 1e-300 overflow and underflow where PyTorch's hypot scales)
    OpInfo("hypot", lambda a, b: a.hypot(b), lambda a, b: a.hypot(b), binary(AWAY_FROM_ZERO, AWAY_FROM_ZERO),
           composite=True, extremes=False),
    OpInfo("fmod", lambda a, b: a.fmod(b), lambda a, b: a.fmod(b), binary(VALUES, AWAY_FROM_ZERO), ("Fmod",),
           extremes=False),  # (PyTorch's gradient of the divisor, -trunc(a / b), differs where a / b overflows)
    OpInfo("remainder", lambda a, b: tga.remainder(a, b), lambda a, b: torch.remainder(a, b),
           binary(VALUES, AWAY_FROM_ZERO), extremes=False),
    OpInfo("lerp", lambda a, b, w: a.lerp(b, w), lambda a, b, w: a.lerp(b, w),
           _with(binary(), w=st.sampled_from([0.0, 0.25, 1.0, -0.5]))),
    # (no gradient reaches the sign's source, in PyTorch neither; no second order: copysign is
    # piecewise linear, and PyTorch differentiates its backward formula result / input, 0 / 0 at 0)
    OpInfo("copysign", lambda a, b: a.copysign(b), lambda a, b: a.copysign(b), binary(), composite=True,
           grad_args=1, gradgrad=False),
    OpInfo("addmm", lambda *a, **kw: tga.addmm(*a, **kw), lambda *a, **kw: torch.addmm(*a, **kw),
           plus_products(False), ("addmm",), composite=True, extremes=False),
    OpInfo("baddbmm", lambda *a, **kw: tga.baddbmm(*a, **kw), lambda *a, **kw: torch.baddbmm(*a, **kw),
           plus_products(True), ("baddbmm",), composite=True, extremes=False),
    OpInfo("glu", lambda x, dim: F.glu(x, dim), lambda x, dim: TF.glu(x, dim), glus(), ("glu",), composite=True),
    # (NaN and infinities among the values; the replaced positions take no gradient)
    OpInfo("nan_to_num", lambda x, **kw: tga.nan_to_num(x, **kw), lambda x, **kw: torch.nan_to_num(x, **kw),
           st.tuples(array(shapes(), st.one_of(VALUES, st.sampled_from([math.nan, math.inf, -math.inf]))),
                     st.sampled_from([{}, {"nan": 1.5}, {"posinf": 9.0, "neginf": -9.0}, {"nan": -1.0, "posinf": 2.0}]),
                     ).map(lambda p: Sample((p[0],), p[1])), ("nan_to_num",), composite=True, extremes=False),
    OpInfo("isclose", lambda a, b: tga.isclose(a, b, rtol=0.1, atol=0.1),
           lambda a, b: torch.isclose(a, b, rtol=0.1, atol=0.1), binary(), grad=False),
    OpInfo("logical_and", lambda a, b: a.logical_and(b), lambda a, b: a.logical_and(b), binary(), grad=False),
    OpInfo("logical_or", lambda a, b: tga.logical_or(a, b), lambda a, b: torch.logical_or(a, b), binary(), grad=False),
    OpInfo("logical_xor", lambda a, b: a.logical_xor(b), lambda a, b: a.logical_xor(b), binary(), grad=False),
    _unary("logical_not", lambda a: a.logical_not(), lambda a: a.logical_not(), grad=False),
    _unary("nonzero", lambda a: a.nonzero(), lambda a: a.nonzero(), grad=False),
    OpInfo("masked_select", lambda a, m: a.masked_select(m), lambda a, m: a.masked_select(m), masked()),
    OpInfo("masked_scatter", lambda a, m: a.masked_scatter(m, a * 2.0 + 1.0),
           lambda a, m: a.masked_scatter(m, a * 2.0 + 1.0), masked().filter(lambda s: s.args[0].ndim >= s.args[1].ndim
                                                                            and np.broadcast_shapes(s.args[0].shape, s.args[1].shape) == s.args[0].shape)),
    OpInfo("scatter_reduce", lambda x, src, index, dim, reduce, include_self: x.scatter_reduce(
               dim, index, src, reduce, include_self=include_self),
           lambda x, src, index, dim, reduce, include_self: x.scatter_reduce(
               dim, index, src, reduce, include_self=include_self), scatter_reduces(), composite=True,
           extremes=False),  # (torch's prod backward divides by the product; 1e30 * 1e30 * 1e-300 differs)
    OpInfo("index_add", lambda x, src, index, dim: x.index_add(dim, index, src, alpha=2.0),
           lambda x, src, index, dim: x.index_add(dim, index, src, alpha=2.0), index_lines(), extremes=False),
    # (extremes off for index_add and index_copy: the array API's scatter is a one-hot product, inf * 0)
    OpInfo("index_copy", lambda x, src, index, dim: x.index_copy(dim, index, src),
           lambda x, src, index, dim: x.index_copy(dim, index, src), index_lines(), extremes=False),
    OpInfo("index_fill", lambda x, src, index, dim: x.index_fill(dim, index, -2.0),
           lambda x, src, index, dim: x.index_fill(dim, index, -2.0), index_lines(), grad_args=1),
    OpInfo("cummax", lambda x, axis: x.cummax(axis).values, lambda x, axis: x.cummax(axis).values,
           along_axis(min_dims=1)),
    OpInfo("cummax_indices", lambda x, axis: tga.cummax(x, axis).indices, lambda x, axis: torch.cummax(x, axis).indices,
           along_axis(min_dims=1), grad=False),
    OpInfo("cummin", lambda x, axis: tga.cummin(x, axis)[0], lambda x, axis: torch.cummin(x, axis)[0],
           along_axis(min_dims=1)),
    OpInfo("cummin_indices", lambda x, axis: x.cummin(axis)[1], lambda x, axis: x.cummin(axis)[1],
           along_axis(min_dims=1), grad=False),
    OpInfo("logcumsumexp", lambda x, axis: x.logcumsumexp(axis), lambda x, axis: x.logcumsumexp(axis), along_axis(),
           composite=True),
    OpInfo("diagonal", lambda x, offset, dim1, dim2: x.diagonal(offset, dim1, dim2),
           lambda x, offset, dim1, dim2: x.diagonal(offset, dim1, dim2), planes()),
    OpInfo("diag_of_matrix", lambda x, offset, dim1, dim2: tga.diag(x, offset), lambda x, offset, dim1, dim2: torch.diag(x, offset),
           planes().filter(lambda s: s.args[0].ndim == 2)),
    OpInfo("trace", lambda x: tga.trace(x), lambda x: torch.trace(x), unary(min_dims=2, max_dims=2)),
    OpInfo("trace_method", lambda x: x.trace(), lambda x: x.trace(), unary(min_dims=2, max_dims=2)),
    OpInfo("diag_of_vector", lambda x, k: x.diag(k), lambda x, k: x.diag(k),
           _with(unary(min_dims=1, max_dims=1), k=st.integers(-2, 2))),
    OpInfo("movedim", lambda x, axis: x.movedim(axis, 0), lambda x, axis: x.movedim(axis, 0), along_axis(min_dims=1)),
    OpInfo("unflatten", lambda x: tga.unflatten(x.reshape(-1), 0, (-1, 1)), lambda x: torch.unflatten(x.reshape(-1), 0, (-1, 1)),
           unary()),
    OpInfo("meshgrid", lambda a, b: tga.meshgrid(a.reshape(-1), b.reshape(-1), indexing="xy")[0] * 2.0
           + tga.meshgrid(a.reshape(-1), b.reshape(-1), indexing="xy")[1],
           lambda a, b: torch.meshgrid(a.reshape(-1), b.reshape(-1), indexing="xy")[0] * 2.0
           + torch.meshgrid(a.reshape(-1), b.reshape(-1), indexing="xy")[1], binary()),
    # (away from zero: at 0 the 2- and 3-norms' gradients are conventions)
    OpInfo("norm", lambda x, axis, p: x.norm(p, axis), lambda x, axis, p: x.norm(p, axis),
           along_axis(min_dims=1, elements=AWAY_FROM_ZERO).map(lambda s: s._replace(kwargs={**s.kwargs, "p": 2.0})),
           ("norm",), composite=True, extremes=False),
    OpInfo("norm_p", lambda x, axis, p: x.norm(p, axis, True), lambda x, axis, p: x.norm(p, axis, True),
           along_axis(min_dims=1, elements=AWAY_FROM_ZERO).flatmap(
               lambda s: st.sampled_from([1.0, 3.0]).map(lambda p: s._replace(kwargs={**s.kwargs, "p": p}))),
           ("norm",), composite=True, extremes=False),
    OpInfo("var_mean", lambda x, axis: tga.var_mean(x, axis)[0] + tga.var_mean(x, axis)[1],
           lambda x, axis: torch.var_mean(x, axis)[0] + torch.var_mean(x, axis)[1], along_axis(min_dims=1)),
    OpInfo("std_mean", lambda x, axis: tga.std_mean(x, axis, correction=0)[0] * tga.std_mean(x, axis)[1],
           lambda x, axis: torch.std_mean(x, axis, correction=0)[0] * torch.std_mean(x, axis)[1],
           along_axis(min_dims=1, elements=AWAY_FROM_ZERO), extremes=False,
           gradgrad=False),  # (at zero spread std's gradient is 0 by convention; its derivative is not)
    OpInfo("sum_to_size", lambda x, size: x.sum_to_size(size), lambda x, size: x.sum_to_size(size), sums_to_size()),
    OpInfo("unfold", lambda x, axis: x.unfold(axis, 2, 1), lambda x, axis: x.unfold(axis, 2, 1),
           along_axis(min_dims=1).filter(lambda s: s.args[0].shape[s.kwargs["axis"]] >= 2)),
    OpInfo("bitwise_xor", lambda a, b: (a > 0) ^ (b > 0), lambda a, b: (a > 0) ^ (b > 0), binary(), grad=False),
    # activations
    OpInfo("celu", lambda x, alpha: F.celu(x, alpha), lambda x, alpha: TF.celu(x, alpha),
           _with(unary(), alpha=st.sampled_from([1.0, 0.5, 2.0])), ("celu",), composite=True, gradgrad=False),
    OpInfo("selu", lambda x: F.selu(x), lambda x: TF.selu(x), unary(AWAY_FROM_ZERO), ("selu",), composite=True),
    OpInfo("relu6", lambda x: F.relu6(x * 3.0), lambda x: TF.relu6(x * 3.0), unary(), ("relu6",)),
    OpInfo("hardtanh", lambda x: F.hardtanh(x, -0.5, 2.0), lambda x: TF.hardtanh(x, -0.5, 2.0), unary(),
           ("hardtanh",), composite=True),
    # (PyTorch has no second derivative of hardsigmoid: "not implemented")
    OpInfo("hardsigmoid", lambda x: F.hardsigmoid(x * 2.0), lambda x: TF.hardsigmoid(x * 2.0), unary(),
           ("hardsigmoid",), composite=True, gradgrad=False),
    OpInfo("hardswish", lambda x: F.hardswish(x * 2.0), lambda x: TF.hardswish(x * 2.0), unary(),
           ("hardswish",), composite=True),
    OpInfo("logsigmoid", lambda x: F.logsigmoid(x), lambda x: TF.logsigmoid(x), unary(), ("logsigmoid",),
           composite=True),
    OpInfo("mish", lambda x: F.mish(x), lambda x: TF.mish(x), unary(), ("mish",), composite=True),
    OpInfo("softmin", lambda x, axis: F.softmin(x, axis), lambda x, axis: TF.softmin(x, axis), along_axis(),
           ("softmin",)),
    OpInfo("softsign", lambda x: F.softsign(x), lambda x: TF.softsign(x), unary(), ("softsign",), composite=True),
]  # fmt: skip
OPS += MATH_FUNCTIONS

BY_NAME = {op.name: op for op in OPS}
assert len(BY_NAME) == len(OPS), "two OpInfo entries share a name"


# -- convolution, pooling, batch norm, bilinear and the regression/divergence losses -------
@st.composite
def convs(draw: Any, nd: int) -> Sample:
    """Input, weight and maybe bias of a grouped, strided, padded, dilated convolution whose
    output is not empty; padding an int, "same" (stride 1) or "valid"."""
    groups, cg, og = draw(st.integers(1, 2)), draw(st.integers(1, 2)), draw(st.integers(1, 2))
    kernel = tuple(draw(st.integers(1, 3)) for _ in range(nd))
    dilation = draw(st.integers(1, 2))
    stride = draw(st.integers(1, 2))
    padding = draw(st.sampled_from([0, 1, "valid"] + (["same"] if stride == 1 else [])))
    spatial = tuple(dilation * (k - 1) + 1 + draw(st.integers(0, 2)) for k in kernel)
    args = (draw(array((draw(st.integers(1, 2)), groups * cg) + spatial)), draw(array((groups * og, cg) + kernel)))
    if draw(st.booleans()):
        args += (draw(array((groups * og,))),)
    return Sample(args, {"stride": stride, "padding": padding, "dilation": dilation, "groups": groups})


@st.composite
def pools(draw: Any, nd: int, dilation: bool = True) -> Sample:
    kernel = draw(st.integers(1, 3))
    d = draw(st.integers(1, 2)) if dilation else 1
    # (no padding with dilation: a dilated window can then fall wholly in the padding, where
    # PyTorch's max_pool2d backward writes out of bounds and corrupts its heap)
    pad = draw(st.integers(0, kernel // 2)) if d == 1 else 0
    spatial = tuple(draw(st.integers(max(1, (kernel - 1) * d + 1 - 2 * pad), 5)) for _ in range(nd))
    kw: dict[str, Any] = {"kernel_size": kernel, "stride": draw(st.sampled_from([None, 1, 2])), "padding": pad}
    if dilation:
        kw["dilation"] = d
    return Sample((draw(array((draw(st.integers(1, 2)), draw(st.integers(1, 2))) + spatial)),), kw)


@st.composite
def avg_pools(draw: Any) -> Sample:
    s = draw(pools(2, dilation=False))
    kw = dict(s.kwargs, count_include_pad=draw(st.booleans()), divisor_override=draw(st.sampled_from([None, 3])))
    return Sample(s.args, kw)


@st.composite
def adaptive_pools(draw: Any) -> Sample:
    h, w = draw(st.integers(1, 5)), draw(st.integers(1, 5))
    size = (draw(st.sampled_from([None, *range(1, h + 1)])), draw(st.integers(1, w)))
    return Sample((draw(array((draw(st.integers(1, 2)), 2, h, w))),), {"output_size": size})


@st.composite
def batch_norms(draw: Any) -> Sample:
    c = draw(st.integers(1, 3))
    lead = (draw(st.integers(2, 3)), c) + tuple(draw(st.integers(1, 3)) for _ in range(draw(st.integers(0, 2))))
    args = (draw(array(lead)), draw(array((c,))), draw(array((c,))), draw(array((c,))), draw(array((c,), POSITIVE)))
    return Sample(args, {"training": draw(st.booleans()), "eps": draw(st.sampled_from([1e-5, 0.1]))})


def _batch_norm_ours(x: Any, w: Any, b: Any, rm: Any, rv: Any, **kw: Any) -> Any:
    return F.batch_norm(x, rm, rv, w, b, **kw)


def _batch_norm_theirs(x: Any, w: Any, b: Any, rm: Any, rv: Any, **kw: Any) -> Any:
    return TF.batch_norm(x, rm, rv, w, b, **kw)


@st.composite
def bilinears(draw: Any) -> Sample:
    lead = draw(shapes(min_dims=1, max_dims=2, min_side=1))
    i1, i2, o = (draw(st.integers(1, MAX_SIDE)) for _ in range(3))
    args = (draw(array(lead + (i1,))), draw(array(lead + (i2,))), draw(array((o, i1, i2))))
    if draw(st.booleans()):
        args += (draw(array((o,))),)
    return Sample(args, {})


@st.composite
def regression_pairs(draw: Any, reductions: tuple = ("mean", "sum", "none"), target: Any = VALUES) -> Sample:
    shape = draw(shapes(min_dims=1, min_side=1))
    return Sample((draw(array(shape)), draw(array(shape, target))), {"reduction": draw(st.sampled_from(reductions))})


@st.composite
def cosine_embeddings(draw: Any) -> Sample:
    shape = draw(st.sampled_from([(3,), (2, 3), (4, 2)]))
    target = draw(hnp.arrays(np.int64, shape[:-1], elements=st.sampled_from([1, -1])))
    kw = {"margin": draw(st.sampled_from([0.0, 0.3])), "reduction": draw(st.sampled_from(["mean", "sum"]))}
    return Sample((draw(array(shape, AWAY_FROM_ZERO)), draw(array(shape, AWAY_FROM_ZERO)), target), kw)


@st.composite
def vector_pairs(draw: Any, keyword: str) -> Sample:
    """Two arrays that broadcast together (one may lack leading axes), and ``dim``/``eps`` or
    ``p``/``eps``/``keepdim``."""
    shape = draw(st.sampled_from([(3,), (2, 3), (4, 2), (2, 1, 3)]))
    other = draw(st.sampled_from([shape, shape[1:] or shape, (1,) * (len(shape) - 1) + shape[-1:]]))
    a, b = draw(array(shape, AWAY_FROM_ZERO)), draw(array(other, AWAY_FROM_ZERO))
    if keyword == "dim":
        kw = {"dim": draw(st.sampled_from([-1, 0] if len(shape) == 1 else [-1, 0, 1])),
              "eps": draw(st.sampled_from([1e-8, 0.5]))}  # fmt: skip
    else:
        kw = {"p": draw(st.sampled_from([2.0, 1.0, 3.0])), "keepdim": draw(st.booleans()),
              "eps": draw(st.sampled_from([1e-6, 0.0]))}  # fmt: skip
    return Sample((a, b), kw)


# (extremes off throughout: windows and reductions sum in another order than PyTorch, so
# 1e30 - 1e30 + x or inf - inf land differently; the finite draws hold ties, zeros and kinks)
NN_LAYERS: list[OpInfo] = [
    OpInfo("conv1d", lambda *a, **kw: F.conv1d(*a, **kw), lambda *a, **kw: TF.conv1d(*a, **kw), convs(1),
           ("conv1d",), composite=True, extremes=False),
    OpInfo("conv2d", lambda *a, **kw: F.conv2d(*a, **kw), lambda *a, **kw: TF.conv2d(*a, **kw), convs(2),
           ("conv2d",), composite=True, extremes=False),
    OpInfo("max_pool1d", lambda x, **kw: F.max_pool1d(x, **kw), lambda x, **kw: TF.max_pool1d(x, **kw), pools(1),
           ("max_pool1d",), composite=True, extremes=False),
    OpInfo("max_pool2d", lambda x, **kw: F.max_pool2d(x, **kw), lambda x, **kw: TF.max_pool2d(x, **kw), pools(2),
           ("max_pool2d",), composite=True, extremes=False),
    OpInfo("avg_pool2d", lambda x, **kw: F.avg_pool2d(x, **kw), lambda x, **kw: TF.avg_pool2d(x, **kw), avg_pools(),
           ("avg_pool2d",), composite=True, extremes=False),
    OpInfo("adaptive_avg_pool2d", lambda x, **kw: F.adaptive_avg_pool2d(x, **kw),
           lambda x, **kw: TF.adaptive_avg_pool2d(x, **kw), adaptive_pools(), ("adaptive_avg_pool2d",),
           composite=True, extremes=False),
    # (running statistics are not differentiated: grad_args=3 takes input, weight, bias)
    OpInfo("batch_norm", _batch_norm_ours, _batch_norm_theirs, batch_norms(), ("batch_norm",), composite=True,
           extremes=False, grad_args=3),
    OpInfo("bilinear", lambda *a: F.bilinear(*a), lambda *a: TF.bilinear(*a), bilinears(), ("bilinear",),
           composite=True, extremes=False),
    OpInfo("l1_loss", lambda a, b, **kw: F.l1_loss(a, b, **kw), lambda a, b, **kw: TF.l1_loss(a, b, **kw),
           regression_pairs(), ("l1_loss",), composite=True, extremes=False),
    OpInfo("smooth_l1_loss", lambda a, b, **kw: F.smooth_l1_loss(a, b, beta=0.5, **kw),
           lambda a, b, **kw: TF.smooth_l1_loss(a, b, beta=0.5, **kw), regression_pairs(), ("smooth_l1_loss",),
           composite=True, extremes=False),
    OpInfo("huber_loss", lambda a, b, **kw: F.huber_loss(a, b, delta=0.7, **kw),
           lambda a, b, **kw: TF.huber_loss(a, b, delta=0.7, **kw), regression_pairs(), ("huber_loss",),
           composite=True, extremes=False),
    # (positive targets: at a zero target the target's derivative is -inf, NaN in PyTorch)
    OpInfo("kl_div", lambda a, b, **kw: F.kl_div(a, b, **kw), lambda a, b, **kw: TF.kl_div(a, b, **kw),
           regression_pairs(("mean", "sum", "none", "batchmean"), POSITIVE), ("kl_div",), composite=True,
           extremes=False),
    OpInfo("kl_div_log_target", lambda a, b, **kw: F.kl_div(a, b, log_target=True, **kw),
           lambda a, b, **kw: TF.kl_div(a, b, log_target=True, **kw),
           regression_pairs(("mean", "sum", "none", "batchmean")), ("kl_div",), composite=True, extremes=False),
    OpInfo("cosine_embedding_loss", lambda a, b, t, **kw: F.cosine_embedding_loss(a, b, t, **kw),
           lambda a, b, t, **kw: TF.cosine_embedding_loss(a, b, t, **kw), cosine_embeddings(),
           ("cosine_embedding_loss",), composite=True, extremes=False),
    OpInfo("cosine_similarity", lambda a, b, **kw: F.cosine_similarity(a, b, **kw),
           lambda a, b, **kw: TF.cosine_similarity(a, b, **kw), vector_pairs("dim"), ("cosine_similarity",),
           composite=True, extremes=False),
    OpInfo("pairwise_distance", lambda a, b, **kw: F.pairwise_distance(a, b, **kw),
           lambda a, b, **kw: TF.pairwise_distance(a, b, **kw), vector_pairs("p"), ("pairwise_distance",),
           composite=True, extremes=False),
]  # fmt: skip
OPS += NN_LAYERS


# -- F.interpolate (tinygrad_attn/functional/resize.py) ----------------------------------
@st.composite
def interpolations(draw: Any) -> Sample:
    mode = draw(st.sampled_from(["nearest", "nearest-exact", "linear", "bilinear", "trilinear"]))
    nd = {"linear": 1, "bilinear": 2, "trilinear": 3}.get(mode, draw(st.integers(1, 2)))
    spatial = tuple(draw(st.integers(1, 3)) for _ in range(nd))
    kw: dict[str, Any] = {"mode": mode}
    if draw(st.booleans()):
        kw["size"] = tuple(draw(st.integers(1, 4)) for _ in range(nd))
    else:
        kw["scale_factor"] = draw(st.sampled_from([0.5, 1.5, 2.0]))
        spatial = tuple(max(n, 2) for n in spatial)  # (a 0.5 scale must leave a side)
    if mode in ("linear", "bilinear", "trilinear"):
        kw["align_corners"] = draw(st.booleans())
    return Sample((draw(array((draw(st.integers(1, 2)), 2) + spatial)),), kw)


# -- F.conv_transpose1d/2d (tinygrad_attn/functional/conv.py) -----------------------------
@st.composite
def conv_transposes(draw: Any, nd: int) -> Sample:
    """Input, weight and maybe bias of a grouped, strided, padded, dilated transposed
    convolution, with an output_padding each stride or dilation allows."""
    groups, cg, og = draw(st.integers(1, 2)), draw(st.integers(1, 2)), draw(st.integers(1, 2))
    kernel = tuple(draw(st.integers(1, 3)) for _ in range(nd))
    stride, dilation = draw(st.integers(1, 2)), draw(st.integers(1, 2))
    padding = draw(st.integers(0, 1)) if dilation * (min(kernel) - 1) >= 1 else 0  # (an output left)
    outpad = draw(st.integers(0, max(stride, dilation) - 1))
    spatial = tuple(draw(st.integers(2, 3)) for _ in range(nd))
    args = (draw(array((draw(st.integers(1, 2)), groups * cg) + spatial)), draw(array((groups * cg, og) + kernel)))
    if draw(st.booleans()):
        args += (draw(array((groups * og,))),)
    kw = {"stride": stride, "padding": padding, "output_padding": outpad, "groups": groups, "dilation": dilation}
    return Sample(args, kw)


OPS += [
    OpInfo("conv_transpose1d", lambda *a, **kw: F.conv_transpose1d(*a, **kw),
           lambda *a, **kw: TF.conv_transpose1d(*a, **kw), conv_transposes(1), ("conv_transpose1d",), extremes=False),
    OpInfo("conv_transpose2d", lambda *a, **kw: F.conv_transpose2d(*a, **kw),
           lambda *a, **kw: TF.conv_transpose2d(*a, **kw), conv_transposes(2), ("conv_transpose2d",), extremes=False),
]  # fmt: skip


# -- F.max_unpool1d/2d (tinygrad_attn/functional/conv.py) ---------------------------------
@st.composite
def max_unpools(draw: Any, nd: int) -> Sample:
    """Pooled values and int64 indices as max_pool with kernel == stride records them: one
    position inside each output's window (windows do not overlap, so no two collide)."""
    k = draw(st.integers(1, 3))
    pooled = tuple(draw(st.integers(1, 3)) for _ in range(nd))
    lead = (draw(st.integers(1, 2)), draw(st.integers(1, 2)))
    offsets = draw(hnp.arrays(np.int64, lead + pooled + (nd,), elements=st.integers(0, k - 1)))
    full = tuple(p * k for p in pooled)
    coords = [np.arange(p).reshape((1, 1) + tuple(-1 if j == i else 1 for j in range(nd))) * k + offsets[..., i]
              for i, p in enumerate(pooled)]  # fmt: skip
    idx = np.ravel_multi_index(tuple(np.broadcast_arrays(*coords)), full).astype(np.int64)
    return Sample((draw(array(lead + pooled)), idx), {"kernel_size": k})


OPS += [
    OpInfo("max_unpool1d", lambda x, i, **kw: F.max_unpool1d(x, i, **kw),
           lambda x, i, **kw: TF.max_unpool1d(x, i, **kw), max_unpools(1), ("max_unpool1d",), extremes=False,
           grad_args=1),
    OpInfo("max_unpool2d", lambda x, i, **kw: F.max_unpool2d(x, i, **kw),
           lambda x, i, **kw: TF.max_unpool2d(x, i, **kw), max_unpools(2), ("max_unpool2d",), extremes=False,
           grad_args=1),
]  # fmt: skip


OPS += [
    OpInfo("interpolate", lambda x, **kw: F.interpolate(x, **kw), lambda x, **kw: TF.interpolate(x, **kw),
           interpolations(), ("interpolate",), extremes=False),
]  # fmt: skip
BY_NAME = {op.name: op for op in OPS}
assert len(BY_NAME) == len(OPS), "two OpInfo entries share a name"

# PyTorch's F.threshold (activations.py; inputs away from the step at 0.1)
OPS += [
    OpInfo("threshold", lambda x: F.threshold(x, 0.1, -2.0), lambda x: TF.threshold(x, 0.1, -2.0),
           unary(AWAY_FROM_ZERO), ("threshold",), composite=True),
]  # fmt: skip
BY_NAME = {op.name: op for op in OPS}


# Strided views (ops/movement.py Strided: diagonal of any two axes, unfold of any size and step)
@st.composite
def windows(draw: Any) -> Sample:
    """An array of 1+ axes (transposed or not), an axis of it, a window size and a step
    (windows overlapping, touching and apart)."""
    shape = draw(shapes(min_dims=1))
    nd = len(shape)
    flip = draw(st.booleans()) and nd >= 2
    seen = shape[:-2] + shape[:-3:-1] if flip else shape  # (the shape unfold sees)
    axis = draw(st.integers(-nd, nd - 1))
    size = draw(st.integers(0, seen[axis]))
    return Sample((draw(array(shape)),), {"axis": axis, "size": size, "step": draw(st.integers(1, 3)), "flip": flip})


def _windows_of(x: Any, axis: int, size: int, step: int, flip: bool) -> Any:
    return (x.mT if flip else x).unfold(axis, size, step)


OPS += [
    OpInfo("unfold_windows", _windows_of, _windows_of, windows(), ("Strided",)),
    OpInfo("diagonal_apart", lambda x, offset, dim1, dim2: x.diagonal(offset, dim1, dim2),
           lambda x, offset, dim1, dim2: x.diagonal(offset, dim1, dim2),
           planes().filter(lambda s: s.args[0].ndim >= 3), ("Strided",)),
]  # fmt: skip
BY_NAME = {op.name: op for op in OPS}
assert len(BY_NAME) == len(OPS), "two OpInfo entries share a name"

# PyTorch's remaining torch.nn.functional functions (their entries in tests/opinfo_nn.py)
from opinfo_nn import NN_FUNCTIONAL  # noqa: E402

OPS += NN_FUNCTIONAL


# -- PyTorch's further tensor functions and torch.linalg (tinygrad_attn/tensors/shape/shape_functions.py, products.py,
# statistics.py, special_functions.py, linalg.py; ops/gamma.py, ops/decompositions.py) ---------------------------
@st.composite
def several(draw: Any, min_dims: int = 0, max_n: int = 3) -> Sample:
    """One to ``max_n`` arrays of one shape."""
    shape = draw(shapes(min_dims=min_dims))
    n = draw(st.integers(1, max_n))
    return Sample(tuple(draw(array(shape)) for _ in range(n)), {})


@st.composite
def sections(draw: Any) -> Sample:
    """An array, an axis, and a number of sections or a list of cut indices (past the end among them)."""
    s = draw(along_axis(min_dims=1))
    n = s.args[0].shape[s.kwargs["axis"]]
    ios = draw(st.integers(1, 4) | st.lists(st.integers(0, n + 1), max_size=3).map(sorted))
    return s._replace(kwargs={**s.kwargs, "ios": ios})


@st.composite
def sorted_axis(draw: Any, elements: st.SearchStrategy = VALUES) -> Sample:
    """A non-empty array with ties (few distinct values) and an axis of it."""
    shape = draw(shapes(min_dims=1, min_side=1))
    nd = len(shape)
    return Sample((draw(array(shape, elements)),), {"dim": draw(st.integers(-nd, nd - 1))})


TIES = st.sampled_from([0.0, 1.0, -1.0, 2.0, 0.5])
WITH_NAN = st.one_of(VALUES, st.just(math.nan))


@st.composite
def quantiles(draw: Any, elements: st.SearchStrategy = VALUES) -> Sample:
    shape = draw(shapes(min_dims=1, min_side=1))
    nd = len(shape)
    q = draw(st.sampled_from([0.0, 0.25, 0.5, 0.9, 1.0]) | st.lists(st.floats(0, 1), min_size=1, max_size=3))
    kw = {"q": q, "dim": draw(st.none() | st.integers(-nd, nd - 1)), "keepdim": draw(st.booleans()),
          "interpolation": draw(st.sampled_from(["linear", "lower", "higher", "midpoint", "nearest"]))}  # fmt: skip
    return Sample((draw(array(shape, elements)),), kw)


def _q(q: Any, lib: Any) -> Any:
    return lib.tensor(q, dtype=lib.float64) if isinstance(q, list) else q


@st.composite
def square_matrices(draw: Any, kind: str = "invertible", max_n: int = 3) -> Sample:
    """Batches of square matrices: ``invertible`` (diagonally dominant), ``spd`` (symmetric
    positive-definite), ``separated`` (diagonal entries 8 apart, so a symmetric part has distinct
    eigenvalues), ``any``."""
    n = draw(st.integers(1, max_n))
    batch = draw(shapes(max_dims=2))
    x = draw(array(batch + (n, n), st.floats(-1, 1) if kind == "separated" else VALUES))
    if kind == "invertible":
        sign = np.where(np.arange(n) % 2, -1.0, 1.0)
        x = x + np.eye(n) * sign * (np.abs(x).sum(-1, keepdims=True) + 1.0)
    elif kind == "spd":
        x = x @ np.swapaxes(x, -1, -2) + n * np.eye(n)
    elif kind == "separated":
        x = x + np.diag(8.0 * np.arange(n))
    return Sample((x,), {})


def _distinct_magnitudes(a: np.ndarray) -> bool:
    """Whether each matrix of ``a`` has no two entries of one magnitude besides its symmetric pairs."""
    m = np.abs(a)[..., np.triu_indices(a.shape[-1])[0], np.triu_indices(a.shape[-1])[1]]
    return all(len(np.unique(row)) == row.size for row in m.reshape(-1, m.shape[-1]))


@st.composite
def rect_matrices(draw: Any, tall: bool | None = None) -> Sample:
    """Batches of full-rank matrices with well-separated singular values (``tall``: ``m >= n``)."""
    m, n = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    if tall is not None and (m >= n) != tall:
        m, n = n, m
    batch = draw(shapes(max_dims=1))
    x = draw(array(batch + (m, n), st.floats(-1, 1)))
    k = min(m, n)
    x[..., np.arange(k), np.arange(k)] += 4.0 + 8.0 * np.arange(k)
    return Sample((x,), {})


@st.composite
def index_puts(draw: Any) -> Sample:
    """An array, integer indices into its leading axes (repeats among them), values and ``accumulate``."""
    shape = draw(shapes(min_dims=1, min_side=1))
    k = draw(st.integers(1, len(shape)))
    n = draw(st.integers(1, 4))
    idx = tuple(np.array(draw(st.lists(st.integers(-s, s - 1), min_size=n, max_size=n))) for s in shape[:k])
    vals = draw(array((n,) + shape[k:]))
    return Sample((draw(array(shape)), vals), {"idx": idx, "accumulate": draw(st.booleans())})


def _index_put(lib: Any) -> Callable:
    def put(x: Any, v: Any, idx: tuple, accumulate: bool) -> Any:
        key = tuple(lib.tensor(i) if lib is torch else tga.tensor(i) for i in idx)
        return (x * 1.0).index_put(key, v, accumulate=accumulate)

    return put


def _both(fn: Callable[[Any], Callable]) -> tuple[Callable, Callable]:
    """``fn(tga)`` and ``fn(torch)``: one lambda over the library's namespace for both sides."""
    return fn(tga), fn(torch)


def _on(name: str, *a: Any, **kw: Any) -> tuple[Callable, Callable]:
    """``lib.name(x, *a, **kw)`` on each side."""
    return _both(lambda lib: lambda x: getattr(lib, name)(x, *a, **kw))


@st.composite
def tensordots(draw: Any) -> Sample:
    """``a``, ``b`` whose leading axes match ``a``'s last ``k``, and ``k``."""
    sa = draw(shapes(max_dims=3))
    k = draw(st.integers(0, len(sa)))
    sb = sa[len(sa) - k :] + draw(shapes(max_dims=3 - k))
    return Sample((draw(array(sa)), draw(array(sb))), {"k": k})


def _sym(x: Any) -> Any:
    return x + x.mT


def _reflector_scales(a: np.ndarray) -> np.ndarray:
    """``tau (..., 3)`` making each Householder reflector of ``a``'s columns orthogonal, ``2 / |v|^2``
    (``v``: a 1 on the diagonal, ``a`` below it), padded to 3 (the entries sliced to ``a``'s columns)."""
    m, n = a.shape[-2:]
    below = np.tril(a, -1)[..., :, : min(m, n)]
    tau = 2.0 / (1.0 + (below**2).sum(-2))
    return np.concatenate([tau, np.ones(a.shape[:-2] + (3 - tau.shape[-1],))], -1)


def _indefinite(x: np.ndarray) -> np.ndarray:
    """A matrix whose symmetric part (``_sym``) is invertible and indefinite: diagonal entries of
    alternating sign that outweigh their rows (entries of ``x`` are at most 3)."""
    n = x.shape[-1]
    return x + np.diag(np.where(np.arange(n) % 2, -1.0, 1.0) * (3.0 * n + 1.0))


TENSOR_FUNCTIONS = [
    # shape_functions.py
    OpInfo("atleast_3d", *_both(lambda lib: lambda *xs: lib.cat([t.reshape(-1) for t in lib.atleast_3d(*xs)] + [
        lib.atleast_1d(xs[0]).reshape(-1), lib.atleast_2d(xs[0]).reshape(-1)])), several()),
    OpInfo("hstack", *_both(lambda lib: lambda *xs: lib.hstack(xs)), several()),
    OpInfo("vstack", *_both(lambda lib: lambda *xs: lib.vstack(xs)), several()),
    OpInfo("row_stack", *_both(lambda lib: lambda *xs: lib.row_stack(xs)), several()),
    OpInfo("dstack", *_both(lambda lib: lambda *xs: lib.dstack(xs)), several()),
    OpInfo("column_stack", *_both(lambda lib: lambda *xs: lib.column_stack(xs)), several(max_n=2).filter(
        lambda s: s.args[0].ndim <= 2)),
    OpInfo("tensor_split", lambda x, axis, ios: tga.cat([p.reshape(-1) * (i + 1.0) for i, p in enumerate(
               x.tensor_split(ios, axis))]),
           lambda x, axis, ios: torch.cat([p.reshape(-1) * (i + 1.0) for i, p in enumerate(x.tensor_split(ios, axis))]),
           sections()),
    OpInfo("split_with_sizes", *_both(lambda lib: lambda x: lib.cat([p * 2.0 for p in x.reshape(-1).split_with_sizes(
        [1, x.numel() - 1])]) if lib is torch else tga.cat([p * 2.0 for p in x.reshape(-1).split_with_sizes(
        [1, x.numel() - 1])])), unary(min_dims=1, min_side=1)),
    OpInfo("rot90", lambda x, k: tga.rot90(x, k, (0, -1)), lambda x, k: torch.rot90(x, k, (0, -1)),
           _with(unary(min_dims=2), k=st.integers(-3, 4))),
    OpInfo("tile", lambda x, reps: x.tile(reps), lambda x, reps: x.tile(reps),
           _with(unary(max_dims=2), reps=st.lists(st.integers(0, 2), max_size=3).map(tuple))),
    OpInfo("ravel", *_on("ravel"), unary()),
    OpInfo("flipud", *_on("flipud"), unary(min_dims=1)),
    OpInfo("fliplr", *_on("fliplr"), unary(min_dims=2)),
    OpInfo("broadcast_tensors", *_both(lambda lib: lambda a, b: lib.broadcast_tensors(a, b)[0] * 2.0
                                        + lib.broadcast_tensors(a, b)[1]), binary()),
    OpInfo("take", *_both(lambda lib: lambda x, i: lib.take(x, i)),
           unary(min_dims=1, min_side=1).flatmap(lambda s: hnp.arrays(np.int64, st.integers(0, 2).map(
               lambda k: (k,)), elements=st.integers(-s.args[0].size, s.args[0].size - 1)).map(
               lambda i: Sample((s.args[0], i), {})))),
    OpInfo("take_along_dim", lambda x, index, dim: tga.take_along_dim(x, index, dim),
           lambda x, index, dim: torch.take_along_dim(x, index, dim), gathers().filter(lambda s: all(
               i == n or 1 in (i, n) for k, (i, n) in enumerate(zip(s.args[1].shape, s.args[0].shape))
               if k != s.kwargs["dim"] % s.args[0].ndim))),
    OpInfo("index_put", _index_put(tga), _index_put(torch), index_puts()),
    OpInfo("diag_embed", lambda x, offset: tga.diag_embed(x, offset, 0, -1),
           lambda x, offset: torch.diag_embed(x, offset, 0, -1), _with(unary(min_dims=1), offset=st.integers(-2, 2))),
    OpInfo("diagflat", lambda x, offset: x.diagflat(offset), lambda x, offset: x.diagflat(offset),
           _with(unary(), offset=st.integers(-2, 2))),
    OpInfo("block_diag", *_both(lambda lib: lambda a, b: lib.block_diag(a, b.reshape(-1), a.reshape(-1)[:1].sum())),
           st.tuples(array(shapes(max_dims=2, min_side=1)), array(shapes(max_dims=1, min_side=1))).map(
               lambda p: Sample(p, {}))),
    # (no empty 1-D block: PyTorch's gradient of block_diag misplaces the blocks after one)
    # (PyTorch's torch.vander fails its own in-place check in backward: its twin torch.linalg.vander, the
    # increasing order, is the oracle; the other order is a flip, checked by value in tests/tensor/test_more_ops.py)
    # (0 or away from it, as linalg_vander: PyTorch's second derivative of its cumulative product divides by x,
    # and at x = 5e-95 gives half of 2 u v, or 1e77, where ours is exact)
    OpInfo("vander", lambda x, n, inc: tga.vander(x, n, inc), lambda x, n, inc: torch.linalg.vander(x, N=n),
           _with(unary(st.one_of(AWAY_FROM_ZERO, st.just(0.0)), min_dims=1, max_dims=1, min_side=1),
                 n=st.none() | st.integers(1, 4), inc=st.just(True)).filter(
               lambda s: (s.kwargs["n"] or s.args[0].shape[0]) >= 2)),  # (PyTorch's N = 1 result, ones, has no graph)
    OpInfo("cartesian_prod", *_both(lambda lib: lambda a, b: lib.cartesian_prod(a.reshape(-1), b.reshape(-1))),
           binary()),
    OpInfo("combinations", lambda x, r, w: tga.combinations(x, r, w), lambda x, r, w: torch.combinations(x, r, w),
           _with(unary(min_dims=1, max_dims=1), r=st.integers(1, 3), w=st.booleans())),
    OpInfo("tril_indices", lambda x, r, c, k: tga.tril_indices(r, c, k), lambda x, r, c, k: torch.tril_indices(r, c, k),
           _with(unary(max_dims=0), r=st.integers(0, 4), c=st.integers(0, 4), k=st.integers(-3, 3)), grad=False),
    OpInfo("triu_indices", lambda x, r, c, k: tga.triu_indices(r, c, k), lambda x, r, c, k: torch.triu_indices(r, c, k),
           _with(unary(max_dims=0), r=st.integers(0, 4), c=st.integers(0, 4), k=st.integers(-3, 3)), grad=False),
    OpInfo("diff", lambda x, n, axis, pre: x.diff(n, axis, x.narrow(axis, 0, 1) if pre else None),
           lambda x, n, axis, pre: x.diff(n, axis, x.narrow(axis, 0, 1) if pre else None),
           along_axis(min_dims=1).flatmap(lambda s: st.tuples(st.integers(0, 3), st.booleans()).map(
               lambda p: s._replace(kwargs={**s.kwargs, "n": p[0], "pre": p[1] and s.args[0].shape[s.kwargs["axis"]] > 0})))),
    OpInfo("mH", lambda x: x.mH * 1.0, lambda x: x.mH * 1.0, unary(min_dims=2)),
    OpInfo("H", lambda x: x.H * 1.0, lambda x: x.H * 1.0, unary(min_dims=2, max_dims=2)),
    # products.py
    OpInfo("tensordot", lambda a, b, k: tga.tensordot(a, b, k), lambda a, b, k: torch.tensordot(a, b, k),
           tensordots()),
    OpInfo("tensordot_pairs", lambda a, b: tga.tensordot(a, b, ([0, -1], [1, 0])),
           lambda a, b: torch.tensordot(a, b, ([0, -1], [1, 0])),
           st.tuples(shapes(min_dims=2, max_dims=3)).flatmap(lambda p: st.tuples(
               array(p[0]), array((p[0][-1], p[0][0]) + p[0][1:-1]))).map(lambda t: Sample(t, {}))),
    OpInfo("kron", *_both(lambda lib: lambda a, b: lib.kron(a, b)),
           st.tuples(array(shapes(max_dims=2)), array(shapes(max_dims=3))).map(lambda p: Sample(p, {}))),
    OpInfo("inner", *_both(lambda lib: lambda a, b: lib.inner(a, b)),
           st.tuples(shapes(max_dims=2), shapes(max_dims=1), st.integers(0, 3)).flatmap(lambda p: st.tuples(
               array(p[0] + (p[2],)), array(p[1] + (p[2],)))).map(lambda t: Sample(t, {}))),
    OpInfo("vdot", *_both(lambda lib: lambda a, b: lib.vdot(a, b)), same_shape(2).filter(lambda s: s.args[0].ndim == 1)),
    OpInfo("mv", *_both(lambda lib: lambda a, b: lib.mv(a, b)), matmul_operands().filter(
        lambda s: s.args[0].ndim == 2 and s.args[1].ndim == 1)),
    OpInfo("addmv", *_both(lambda lib: lambda a, b: lib.addmv(a.sum(1), a, b, beta=0.5, alpha=2.0)),
           matmul_operands().filter(lambda s: s.args[0].ndim == 2 and s.args[1].ndim == 1), extremes=False),
    OpInfo("addr", *_both(lambda lib: lambda a, b: lib.addr(lib.outer(a, b) * 0.0 + 1.0, a, b, alpha=2.0)),
           binary().filter(lambda s: s.args[0].ndim == 1 and s.args[1].ndim == 1), extremes=False),
    OpInfo("cross", *_both(lambda lib: lambda a, b: lib.cross(a, b, dim=-1)),
           hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=2, max_side=3).flatmap(lambda s: st.tuples(
               array(s.input_shapes[0] + (3,)), array(s.input_shapes[1] + (3,)))).filter(
               lambda t: t[0].ndim == t[1].ndim).map(lambda t: Sample(t, {}))),
    OpInfo("cdist", lambda a, b, p: tga.cdist(a, b, p), lambda a, b, p: torch.cdist(a, b, p),
           st.tuples(shapes(min_dims=2, max_dims=3, min_side=1), st.integers(1, 3), st.sampled_from(
               [1.0, 2.0, 3.0, 0.0])).flatmap(lambda t: st.tuples(array(t[0], AWAY_FROM_ZERO), array(
               t[0][:-2] + (t[1], t[0][-1]), AWAY_FROM_ZERO), st.just(t[2]))).map(
               lambda t: Sample(t[:2], {"p": t[2]})), extremes=False, gradgrad=False,
           notes="distances near 0 are kinks; p=inf is a kink wherever two coordinates tie (tests/tensor/test_more_ops.py)"),
    OpInfo("dist", lambda a, b, p: tga.dist(a, b, p), lambda a, b, p: torch.dist(a, b, p),
           _with(binary(AWAY_FROM_ZERO, st.floats(5, 6)), p=st.sampled_from([1.0, 2.0, 3.0])), extremes=False),
    OpInfo("addcmul", *_both(lambda lib: lambda a, b: lib.addcmul(a, b, a * b, value=0.5)), binary()),
    OpInfo("addcdiv", *_both(lambda lib: lambda a, b: a.addcdiv(a, b, value=-2.0)), binary(VALUES, AWAY_FROM_ZERO)),
    # statistics.py
    OpInfo("median", lambda x, dim: x.median(dim).values, lambda x, dim: x.median(dim).values,
           sorted_axis(st.one_of(TIES, WITH_NAN))),
    OpInfo("median_indices", lambda x, dim: x.median(dim, True).indices, lambda x, dim: x.median(dim, True).indices,
           sorted_axis(st.one_of(TIES, WITH_NAN)), grad=False),
    # (distinct values where the gradient is checked: which of tied entries PyTorch's picks is not defined)
    OpInfo("median_all", lambda x, dim: tga.median(x), lambda x, dim: torch.median(x), sorted_axis(st.floats(-3, 3)).filter(
        lambda s: len(np.unique(s.args[0])) == s.args[0].size)),
    OpInfo("median_all_ties", lambda x, dim: tga.median(x), lambda x, dim: torch.median(x), sorted_axis(TIES), grad=False),
    OpInfo("nanmedian", lambda x, dim: tga.nanmedian(x, dim)[0], lambda x, dim: torch.nanmedian(x, dim)[0],
           sorted_axis(st.one_of(TIES, WITH_NAN))),
    OpInfo("nanmedian_indices", lambda x, dim: tga.nanmedian(x, dim)[1], lambda x, dim: torch.nanmedian(x, dim)[1],
           sorted_axis(st.one_of(TIES, WITH_NAN)), grad=False),
    OpInfo("kthvalue", lambda x, dim: x.kthvalue(1 + x.shape[dim] // 2, dim)[0],
           lambda x, dim: x.kthvalue(1 + x.shape[dim] // 2, dim)[0], sorted_axis(st.floats(-3, 3)).filter(
               lambda s: len(np.unique(s.args[0])) == s.args[0].size)),
    OpInfo("kthvalue_ties", lambda x, dim: x.kthvalue(1 + x.shape[dim] // 2, dim)[0],
           lambda x, dim: x.kthvalue(1 + x.shape[dim] // 2, dim)[0], sorted_axis(TIES), grad=False),
    OpInfo("kthvalue_indices", lambda x, dim: tga.kthvalue(x, 1, dim, True).indices,
           lambda x, dim: torch.kthvalue(x, 1, dim, True).indices, sorted_axis(st.floats(-3, 3)).filter(
               lambda s: len(np.unique(s.args[0])) == s.args[0].size), grad=False),  # (PyTorch's index among ties: its quickselect's)
    OpInfo("mode", lambda x, dim: x.mode(dim)[0], lambda x, dim: x.mode(dim)[0], sorted_axis(TIES)),
    OpInfo("mode_indices", lambda x, dim: tga.mode(x, dim).indices, lambda x, dim: torch.mode(x, dim).indices,
           sorted_axis(TIES), grad=False),
    OpInfo("quantile", lambda x, q, **kw: tga.quantile(x, _q(q, tga), **kw),
           lambda x, q, **kw: torch.quantile(x, _q(q, torch), **kw), quantiles(), extremes=False,
           notes="extremes off: PyTorch interpolates inf - inf to NaN where it lerps, as we do, but sorts -0.0 apart"),
    OpInfo("nanquantile", lambda x, q, **kw: tga.nanquantile(x, _q(q, tga), **kw),
           lambda x, q, **kw: torch.nanquantile(x, _q(q, torch), **kw), quantiles(WITH_NAN), extremes=False),
    OpInfo("aminmax", lambda x, axis: tga.aminmax(x, dim=axis).min * 2.0 + x.aminmax(dim=axis).max,
           lambda x, axis: torch.aminmax(x, dim=axis).min * 2.0 + x.aminmax(dim=axis).max,
           along_axis(min_dims=1).filter(lambda s: s.args[0].size > 0)),
    OpInfo("nansum", lambda x, axis, keepdims: tga.nansum(x, axis, keepdims),
           lambda x, axis, keepdims: torch.nansum(x, _dim(axis, x.ndim), keepdims), reduction(elements=WITH_NAN)),
    OpInfo("nanmean", lambda x, axis, keepdims: x.nanmean(axis, keepdims),
           lambda x, axis, keepdims: x.nanmean(_dim(axis, x.ndim), keepdims), reduction(elements=WITH_NAN).filter(
               lambda s: not np.isnan(s.args[0]).all(axis=s.kwargs["axis"]).any())),
    # (no slice all NaN: there PyTorch's gradient is 0 * inf, NaN, ours 0)
    OpInfo("count_nonzero", lambda x, axis: tga.count_nonzero(x, axis), lambda x, axis: torch.count_nonzero(x, axis),
           along_axis(), grad=False),
    OpInfo("cov", lambda x, c: tga.cov(x, correction=c), lambda x, c: torch.cov(x, correction=c),
           _with(unary(max_dims=2), c=st.integers(0, 1)), extremes=False),
    OpInfo("cov_weights", lambda x, a, f: tga.cov(x, fweights=f, aweights=a.abs() + 0.5),
           lambda x, a, f: torch.cov(x, fweights=f, aweights=a.abs() + 0.5),
           st.tuples(shapes(min_dims=2, max_dims=2, min_side=1)).flatmap(lambda p: st.tuples(
               array(p[0]), hnp.arrays(np.int64, (p[0][1],), elements=st.integers(1, 3)), array((p[0][1],)))).map(
               lambda t: Sample((t[0], t[2], t[1]), {})), extremes=False),
    OpInfo("corrcoef", *_both(lambda lib: lambda x: lib.corrcoef(x)), unary(min_dims=2, max_dims=2, min_side=2).filter(
        lambda s: (np.ptp(s.args[0], axis=1) > 0.1).all()), extremes=False, gradgrad=False,
           notes="the clip to [-1, 1] makes the second derivative at |r| = 1 a convention"),
    OpInfo("trapezoid", lambda y, x, axis: tga.trapezoid(y, x, dim=axis),
           lambda y, x, axis: torch.trapezoid(y, x, dim=axis),
           along_axis(min_dims=1).filter(lambda s: s.args[0].shape[s.kwargs["axis"]] > 0).flatmap(
               lambda s: array((s.args[0].shape[s.kwargs["axis"]],)).map(
               lambda x: Sample((s.args[0], x), s.kwargs)))),
    OpInfo("cumulative_trapezoid", lambda y, axis: tga.cumulative_trapezoid(y, dx=0.5, dim=axis),
           lambda y, axis: torch.cumulative_trapezoid(y, dx=0.5, dim=axis), along_axis(min_dims=1)),
    OpInfo("searchsorted", lambda s, v, right: tga.searchsorted(s.sort()[0], v, right=right),
           lambda s, v, right: torch.searchsorted(s.sort()[0], v, right=right),
           _with(binary(TIES, TIES).filter(lambda s: s.args[0].ndim == 1), right=st.booleans()), grad=False),
    OpInfo("searchsorted_batched", lambda s, v: tga.searchsorted(s.sort()[0], v, side="right"),
           lambda s, v: torch.searchsorted(s.sort()[0], v, side="right"),
           same_shape(2).filter(lambda s: s.args[0].ndim >= 1), grad=False),
    OpInfo("bucketize", lambda v, b, right: tga.bucketize(v, b.reshape(-1).sort()[0], right=right, out_int32=True),
           lambda v, b, right: torch.bucketize(v, b.reshape(-1).sort()[0], right=right, out_int32=True),
           _with(binary(TIES, TIES), right=st.booleans()), grad=False),
    OpInfo("bincount", lambda w, x, m: tga.bincount(tga.tensor(x), w if m % 2 else None, m),
           lambda w, x, m: torch.bincount(torch.tensor(x), w if m % 2 else None, m),
           st.integers(0, 5).flatmap(lambda n: st.tuples(hnp.arrays(np.int64, (n,), elements=st.integers(0, 4)),
                                                          array((n,)), st.integers(0, 7))).map(
               lambda t: Sample((t[1],), {"x": t[0], "m": t[2]})), grad=False),
    OpInfo("histc", lambda x, bins, lo, hi: x.histc(bins, lo, hi), lambda x, bins, lo, hi: x.histc(bins, lo, hi),
           _with(unary(elements=TIES | VALUES), bins=st.integers(1, 5), lo=st.sampled_from([0.0, -1.0]),
                 hi=st.sampled_from([0.0, 1.0, 2.0])), grad=False, extremes=False),
    OpInfo("unique", lambda x, dim: tga.cat([t.reshape(-1).double() for t in tga.unique(
               x, return_inverse=True, return_counts=True, dim=dim)]),
           lambda x, dim: torch.cat([t.reshape(-1).double() for t in torch.unique(
               x, return_inverse=True, return_counts=True, dim=dim)]),
           unary(TIES, min_dims=1).flatmap(lambda s: st.sampled_from([None, 0]).map(
               lambda d: s._replace(kwargs={"dim": d}))), grad=False),
    OpInfo("unique_consecutive", lambda x, dim: tga.cat([t.reshape(-1).double() for t in tga.unique_consecutive(
               x, return_inverse=True, return_counts=True, dim=dim)]),
           lambda x, dim: torch.cat([t.reshape(-1).double() for t in torch.unique_consecutive(
               x, return_inverse=True, return_counts=True, dim=dim)]),
           unary(TIES, min_dims=1, min_side=1).flatmap(lambda s: st.sampled_from([None, 0, -1]).map(
               lambda d: s._replace(kwargs={"dim": d}))), grad=False),
    OpInfo("isin", lambda a, b, invert: tga.isin(a, b, invert=invert), lambda a, b, invert: torch.isin(a, b, invert=invert),
           _with(binary(TIES, TIES), invert=st.booleans()), grad=False),
    # special_functions.py
    _unary("lgamma", lambda a: a.lgamma(), lambda a: a.lgamma(), st.floats(-4.9, 6).filter(lambda v: abs(v - round(v)) > 0.05),
           ("Lgamma",), atol=1e-12, rtol=1e-9, notes="PyTorch's trigamma (lgamma's second derivative) is good to "
           "5e-10; ours to 1e-15 (tests/tensor/test_special_functions.py, against SciPy)"),
    _unary("digamma", lambda a: tga.digamma(a), lambda a: torch.digamma(a),
           st.floats(-4.9, 6).filter(lambda v: abs(v - round(v)) > 0.05), ("Polygamma",), atol=1e-12, rtol=1e-9),
    OpInfo("polygamma", lambda x, n: x.polygamma(n), lambda x, n: x.polygamma(n),
           _with(unary(st.floats(0.2, 8.0)), n=st.integers(1, 3)), ("Polygamma",), extremes=False, rtol=1e-9,
           notes="PyTorch's polygamma of n >= 1 at negative arguments goes through the Hurwitz zeta function; ours "
                 "covers positive arguments"),
    OpInfo("mvlgamma", lambda x, p: tga.mvlgamma(x, p), lambda x, p: torch.mvlgamma(x, p),
           _with(unary(st.floats(1.6, 6.0)), p=st.integers(1, 3)), extremes=False),
    _unary("i0", lambda a: a.i0(), lambda a: a.i0(), covers=("I0",), rtol=1e-12),
    _unary("i0_wide", lambda a: tga.i0(a * 12.0), lambda a: torch.i0(a * 12.0), rtol=1e-12,
           notes="both sides of the switch between the power series and the asymptotic expansion (|x| = 20)"),
    _unary("special_i1", lambda a: tga.special_functions.i1(a * 8.0), lambda a: torch.special.i1(a * 8.0),
           covers=("I1",), rtol=1e-12),
    _unary("special_i0e", lambda a: tga.special_functions.i0e(a * 12.0), lambda a: torch.special.i0e(a * 12.0),
           covers=("I0e",), rtol=1e-12),
    _unary("special_i1e", lambda a: tga.special_functions.i1e(a * 12.0), lambda a: torch.special.i1e(a * 12.0),
           covers=("I1e",), rtol=1e-12),
    _unary("special_entr", lambda a: tga.special.entr(a), lambda a: torch.special.entr(a), POSITIVE, ("Entr",)),
    OpInfo("special_xlog1py", lambda a, b: tga.special.xlog1py(a, b), lambda a, b: torch.special.xlog1py(a, b),
           binary(VALUES, POSITIVE), ("Xlog1py",)),
    _unary("special_ndtr", lambda a: tga.special.ndtr(a), lambda a: torch.special.ndtr(a), atol=1e-15),
    _unary("special_log_ndtr", lambda a: tga.special.log_ndtr(a), lambda a: torch.special.log_ndtr(a),
           covers=("LogNdtr",), rtol=1e-12),
    _unary("special_ndtri", lambda a: tga.special.ndtri(a), lambda a: torch.special.ndtri(a),
           st.floats(0.02, 0.98), ("Ndtri",), extremes=False, rtol=1e-12),
    OpInfo("special_zeta", lambda q, s: tga.special.zeta(q.new_tensor(s), q),
           lambda q, s: torch.special.zeta(torch.tensor(s), q),
           binary(POSITIVE, st.floats(1.5, 6.0)).map(lambda smp: Sample((smp.args[0],), {"s": smp.args[1]})),
           ("Zeta",), rtol=1e-12, notes="the gradient in q only: PyTorch has none in x (test_special_more_torch.py)"),
    OpInfo("igamma", lambda x, a: tga.igamma(x.new_tensor(a), x), lambda x, a: torch.igamma(torch.tensor(a), x),
           binary(POSITIVE, st.floats(0.1, 40.0)).map(lambda s: Sample((s.args[0],), {"a": s.args[1]})),
           ("Igamma",), rtol=1e-9, atol=1e-12,
           notes="the gradient in x only: PyTorch has none in a (tests/ops/test_bessel_igamma.py checks it raises)"),
    OpInfo("igammac", lambda x, a: tga.igammac(x.new_tensor(a), x),
           lambda x, a: torch.igammac(torch.tensor(a), x),
           binary(POSITIVE, st.floats(0.1, 40.0)).map(lambda s: Sample((s.args[0],), {"a": s.args[1]})), rtol=1e-9,
           atol=1e-12),
    _unary("erfc", lambda a: a.erfc(), lambda a: a.erfc(), atol=1e-15),
    OpInfo("logit", lambda x, eps: tga.logit(x, eps), lambda x, eps: torch.logit(x, eps),
           _with(unary(st.floats(0.05, 0.95)), eps=st.sampled_from([None, 0.2])), extremes=False),
    OpInfo("logaddexp2", lambda a, b: a.logaddexp2(b), lambda a, b: a.logaddexp2(b), binary(), extremes=False),
    # (exponents >= 0: PyTorch's gradient for an integer exponent below 0 is 0, its 2**other taken in integers;
    # ours, 2**other, is checked against finite differences in tests/tensor/test_more_ops.py)
    OpInfo("ldexp", lambda a, b: tga.ldexp(a, b), lambda a, b: torch.ldexp(a, b),
           unary().flatmap(lambda s: hnp.arrays(np.int64, s.args[0].shape, elements=st.integers(0, 3)).map(
               lambda e: Sample(s.args + (e,), {}))), extremes=False),
    OpInfo("float_power", lambda a, b: tga.float_power(a, b), lambda a, b: torch.float_power(a, b),
           binary(POSITIVE, VALUES), extremes=False,
           covers=("float_power_",)),  # (its in-place twin: PyTorch's OpInfo runs it, tests/ops/test_torch_opinfo.py)
    OpInfo("fmax", lambda a, b: a.fmax(b), lambda a, b: a.fmax(b), binary(st.one_of(TIES, WITH_NAN), TIES)),
    OpInfo("fmin", lambda a, b: tga.fmin(a, b), lambda a, b: torch.fmin(a, b), binary(TIES, st.one_of(TIES, WITH_NAN))),
    OpInfo("renorm", lambda x, p, maxnorm: x.renorm(p, 0, maxnorm), lambda x, p, maxnorm: x.renorm(p, 0, maxnorm),
           _with(unary(AWAY_FROM_ZERO, min_dims=2), p=st.sampled_from([1.0, 2.0, 3.0]),
                 maxnorm=st.sampled_from([0.5, 2.0, 100.0])), extremes=False),
    OpInfo("heaviside", lambda a, b: a.heaviside(b), lambda a, b: a.heaviside(b), binary(TIES, VALUES), grad=False),
    OpInfo("nextafter", lambda a, b: tga.nextafter(a, b), lambda a, b: torch.nextafter(a, b), binary(), grad=False),
    OpInfo("frexp", lambda a: tga.frexp(a)[0] + tga.frexp(a)[1], lambda a: torch.frexp(a)[0] + torch.frexp(a)[1],
           unary(), grad=False),
    _unary("signbit", lambda a: a.signbit(), lambda a: a.signbit(), grad=False),
    OpInfo("gcd", lambda x, a, b: tga.gcd(tga.tensor(a), tga.tensor(b)), lambda x, a, b: torch.gcd(torch.tensor(a), torch.tensor(b)),
           hnp.arrays(np.int64, st.integers(0, 4).map(lambda k: (k,)), elements=st.integers(-12, 12)).map(
               lambda a: Sample((a[:0].astype(np.float64),), {"a": a, "b": a[::-1].copy()})), grad=False),
    OpInfo("lcm", lambda x, a, b: tga.lcm(tga.tensor(a), tga.tensor(b)), lambda x, a, b: torch.lcm(torch.tensor(a), torch.tensor(b)),
           hnp.arrays(np.int64, st.integers(0, 4).map(lambda k: (k,)), elements=st.integers(-12, 12)).map(
               lambda a: Sample((a[:0].astype(np.float64),), {"a": a, "b": a[::-1].copy()})), grad=False),
    _unary("sgn", lambda a: a.sgn(), lambda a: a.sgn()),
    _unary("positive", lambda a: tga.positive(a) * 1.0, lambda a: torch.positive(a) * 1.0),
    _unary("angle", lambda a: a.angle(), lambda a: a.angle()),
    # linalg.py and its primitives
    OpInfo("det", lambda x: tga.linalg.det(x), lambda x: torch.linalg.det(x), square_matrices(), ("Det", "Inv"),
           extremes=False),
    OpInfo("det_method", lambda x: x.det(), lambda x: x.det(), square_matrices(), extremes=False),
    OpInfo("slogdet", lambda x: tga.linalg.slogdet(x).logabsdet * tga.linalg.slogdet(x).sign,
           lambda x: torch.linalg.slogdet(x).logabsdet * torch.linalg.slogdet(x).sign, square_matrices(),
           ("LogAbsDet",), extremes=False),
    OpInfo("logdet", lambda x: tga.logdet(x), lambda x: torch.logdet(x), square_matrices(), extremes=False),
    OpInfo("inv", lambda x: tga.linalg.inv(x), lambda x: torch.linalg.inv(x), square_matrices(), extremes=False),
    OpInfo("inverse", lambda x: x.inverse(), lambda x: x.inverse(), square_matrices(), extremes=False),
    OpInfo("inv_ex", lambda x: tga.linalg.inv_ex(x).inverse, lambda x: torch.linalg.inv_ex(x).inverse,
           square_matrices(), extremes=False),
    OpInfo("solve", lambda a, b: tga.linalg.solve(a, b), lambda a, b: torch.linalg.solve(a, b),
           square_matrices().flatmap(lambda s: st.sampled_from([0, 1, 2]).flatmap(lambda k: array(
               s.args[0].shape[:-1] + ((k,) if k else ())).map(lambda b: Sample((s.args[0], b), {})))),
           ("Solve",), extremes=False),
    OpInfo("solve_right", lambda a, b: tga.linalg.solve(a, b, left=False), lambda a, b: torch.linalg.solve(a, b, left=False),
           square_matrices().flatmap(lambda s: array(s.args[0].shape[:-2] + (2,) + s.args[0].shape[-1:]).map(
               lambda b: Sample((s.args[0], b), {}))), extremes=False),
    OpInfo("solve_triangular", lambda a, b, upper, left, unit: tga.linalg.solve_triangular(
               a, b if left else b.mT, upper=upper, left=left, unitriangular=unit),
           lambda a, b, upper, left, unit: torch.linalg.solve_triangular(
               a, b if left else b.mT, upper=upper, left=left, unitriangular=unit),
           _with(square_matrices().flatmap(lambda s: array(s.args[0].shape[:-1] + (2,)).map(
               lambda b: Sample((s.args[0], b), {}))), upper=st.booleans(), left=st.booleans(), unit=st.booleans()),
           extremes=False),
    OpInfo("cholesky", lambda x: tga.linalg.cholesky(x), lambda x: torch.linalg.cholesky(x), square_matrices("spd"),
           ("Cholesky", "Tril"), extremes=False),
    OpInfo("cholesky_upper", lambda x: tga.linalg.cholesky_ex(x, upper=True).L,
           lambda x: torch.linalg.cholesky_ex(x, upper=True).L, square_matrices("spd"), extremes=False),
    OpInfo("eigvalsh", lambda x: tga.linalg.eigvalsh(_sym(x)), lambda x: torch.linalg.eigvalsh(_sym(x)),
           square_matrices("separated"), ("EighValues",), extremes=False),
    OpInfo("eigh", lambda x, uplo: tga.linalg.eigh(x, uplo).eigenvectors ** 2 + tga.linalg.eigh(x, uplo)[0].unsqueeze(-2),
           lambda x, uplo: torch.linalg.eigh(x, uplo).eigenvectors ** 2 + torch.linalg.eigh(x, uplo)[0].unsqueeze(-2),
           _with(square_matrices("separated").map(lambda s: Sample((s.args[0] + np.swapaxes(s.args[0], -1, -2),), {})),
                 uplo=st.sampled_from(["L", "U"])), ("EighVectors",), extremes=False, rtol=1e-6, atol=1e-8,
           notes="eigenvectors squared: their signs are a convention"),
    OpInfo("svdvals", lambda x: tga.linalg.svdvals(x), lambda x: torch.linalg.svdvals(x), rect_matrices(),
           extremes=False, rtol=1e-6, atol=1e-8),
    OpInfo("svd", lambda x: (lambda r: r.U ** 2 * 2.0 + r.S.unsqueeze(-2))(tga.linalg.svd(x, full_matrices=False)),
           lambda x: (lambda r: r.U ** 2 * 2.0 + r.S.unsqueeze(-2))(torch.linalg.svd(x, full_matrices=False)),
           rect_matrices(), extremes=False, rtol=1e-6, atol=1e-8, notes="U and Vh squared: their signs are a convention"),
    OpInfo("svd_vh", lambda x: tga.linalg.svd(x, full_matrices=False).Vh ** 2,
           lambda x: torch.linalg.svd(x, full_matrices=False).Vh ** 2, rect_matrices(), extremes=False, rtol=1e-6,
           atol=1e-8),
    OpInfo("qr", lambda x: (lambda r: r.Q * 2.0 + r.R.sum(-2, keepdim=True))(tga.linalg.qr(x)),
           lambda x: (lambda r: r.Q * 2.0 + r.R.sum(-2, keepdim=True))(torch.linalg.qr(x)),
           rect_matrices(tall=True), extremes=False, rtol=1e-6, atol=1e-8),
    OpInfo("pinv", lambda x: tga.linalg.pinv(x), lambda x: torch.linalg.pinv(x), rect_matrices(), extremes=False,
           rtol=1e-6, atol=1e-8),
    OpInfo("lstsq", lambda a, b: tga.linalg.lstsq(a, b).solution, lambda a, b: torch.linalg.lstsq(a, b).solution,
           rect_matrices(tall=True).flatmap(lambda s: array(s.args[0].shape[:-1] + (2,)).map(
               lambda b: Sample((s.args[0], b), {}))), extremes=False, rtol=1e-6, atol=1e-8),
    OpInfo("matrix_rank", lambda x: tga.linalg.matrix_rank(x), lambda x: torch.linalg.matrix_rank(x),
           unary(TIES, min_dims=2), grad=False),
    OpInfo("cond", lambda x, p: tga.linalg.cond(x, p), lambda x, p: torch.linalg.cond(x, p),
           _with(square_matrices().filter(lambda s: s.args[0].size > 0), p=st.sampled_from([None, -2])),
           extremes=False, rtol=1e-6),
    # (values only for the norms of A and inv(A): PyTorch's gradient there fails its own in-place check)
    OpInfo("cond_norms", lambda x, p: tga.linalg.cond(x, p), lambda x, p: torch.linalg.cond(x, p),
           _with(square_matrices().filter(lambda s: s.args[0].size > 0), p=st.sampled_from(["fro", 1, math.inf])),
           grad=False, extremes=False, rtol=1e-6),
    OpInfo("matrix_norm", lambda x, ord, keepdim: tga.linalg.matrix_norm(x, ord, keepdim=keepdim),
           lambda x, ord, keepdim: torch.linalg.matrix_norm(x, ord, keepdim=keepdim),
           _with(rect_matrices(), ord=st.sampled_from(["fro", "nuc", 2, -2, 1, -1, math.inf, -math.inf]),
                 keepdim=st.booleans()), extremes=False, rtol=1e-6),
    OpInfo("vector_norm", lambda x, ord, axis: tga.linalg.vector_norm(x, ord, axis),
           lambda x, ord, axis: torch.linalg.vector_norm(x, ord, axis),
           _with(along_axis(elements=AWAY_FROM_ZERO).filter(lambda s: s.args[0].size > 0),
                 ord=st.sampled_from([1, 2, 3, 0.5, 0, math.inf, -math.inf])),
           extremes=False),
    OpInfo("linalg_norm", lambda x, ord: tga.linalg.norm(x, ord), lambda x, ord: torch.linalg.norm(x, ord),
           _with(unary(AWAY_FROM_ZERO, min_dims=1, max_dims=2, min_side=1), ord=st.sampled_from([None, 1, math.inf])),
           extremes=False),
    OpInfo("matrix_power", lambda x, n: tga.linalg.matrix_power(x, n), lambda x, n: torch.linalg.matrix_power(x, n),
           _with(square_matrices(), n=st.integers(-2, 5)), extremes=False),
    OpInfo("matrix_exp", lambda x: x.matrix_exp(), lambda x: x.matrix_exp(), square_matrices("any"), extremes=False,
           rtol=1e-10, atol=1e-10),
    OpInfo("linalg_cross", lambda a, b: tga.linalg.cross(a, b), lambda a, b: torch.linalg.cross(a, b),
           same_shape(2).filter(lambda s: s.args[0].ndim >= 1 and s.args[0].shape[-1] == 3)),
    OpInfo("multi_dot", *_both(lambda lib: lambda a, b: lib.linalg.multi_dot([a, b.mT, a])),
           same_shape(2).filter(lambda s: s.args[0].ndim == 2), extremes=False),  # (inf * 0 depends on the order)
    OpInfo("vecdot", *_both(lambda lib: lambda a, b: lib.linalg.vecdot(a, b)), binary().filter(
        lambda s: s.args[0].ndim >= 1 and s.args[1].ndim >= 1 and s.args[0].shape[-1] == s.args[1].shape[-1])),
    OpInfo("linalg_diagonal", lambda x, offset: tga.linalg.diagonal(x, offset=offset),
           lambda x, offset: torch.linalg.diagonal(x, offset=offset), _with(unary(min_dims=2), offset=st.integers(-2, 2))),
    # the LU, LDL^T and Householder families (linalg.py, ops/factorizations.py): each tuple result folded into one
    # tensor; pivots compared through the factors they permute
    OpInfo("lu_factor", lambda x: tga.linalg.lu_factor(x).LU, lambda x: torch.linalg.lu_factor(x).LU,
           square_matrices(), extremes=False),
    OpInfo("lu_factor_rect", lambda x: tga.linalg.lu_factor_ex(x).LU + tga.linalg.lu_factor_ex(x).pivots.sum(),
           lambda x: torch.linalg.lu_factor_ex(x).LU + torch.linalg.lu_factor_ex(x).pivots.sum(), rect_matrices(),
           extremes=False),
    OpInfo("linalg_lu", *_both(lambda lib: lambda x: (lambda r: r.P.sum(-1, keepdim=True) * 3.0 + r.L @ r.U.sum(
        -1, keepdim=True) + r.U.sum(-2, keepdim=True).sum(-1, keepdim=True))(lib.linalg.lu(x))), rect_matrices(),
           extremes=False),
    OpInfo("lu_unpack", *_both(lambda lib: lambda x: (lambda r: r.P * 2.0 + r.L @ r.U)(lib.lu_unpack(
        *lib.linalg.lu_factor(x)))), square_matrices(), extremes=False),
    OpInfo("lu_solve", lambda a, b, left, adjoint: tga.linalg.lu_solve(*tga.linalg.lu_factor(a), b if left else b.mT,
                                                                       left=left, adjoint=adjoint),
           lambda a, b, left, adjoint: torch.linalg.lu_solve(*torch.linalg.lu_factor(a), b if left else b.mT,
                                                            left=left, adjoint=adjoint),
           _with(square_matrices().flatmap(lambda s: array(s.args[0].shape[:-1] + (2,)).map(
               lambda b: Sample((s.args[0], b), {}))), left=st.booleans(), adjoint=st.booleans()), extremes=False),
    OpInfo("torch_lu_solve", lambda a, b: tga.lu_solve(b, *tga.lu(a)), lambda a, b: torch.lu_solve(b, *torch.lu(a)),
           square_matrices().flatmap(lambda s: array(s.args[0].shape[:-1] + (1,)).map(
               lambda b: Sample((s.args[0], b), {}))), extremes=False),
    OpInfo("ldl", *_both(lambda lib: lambda x: (lambda r: r.LD + (r.pivots.sum(-1, keepdim=True) + r.info.unsqueeze(
        -1)).unsqueeze(-1))(lib.linalg.ldl_factor_ex(_sym(x)))),
           # (no two entries of one magnitude: Bunch-Kaufman's pivot among equal candidates is the LAPACK
           # build's choice, MKL's on PyTorch's side, and differs between CPUs)
           square_matrices("any", max_n=5).filter(lambda s: _distinct_magnitudes(_sym(s.args[0]))), grad=False,
           extremes=False),
    OpInfo("ldl_solve", lambda a, b: tga.linalg.ldl_solve(*tga.linalg.ldl_factor(_sym(a)), b),
           lambda a, b: torch.linalg.ldl_solve(*torch.linalg.ldl_factor(_sym(a)), b),
           square_matrices("any").flatmap(lambda s: array(s.args[0].shape[:-1] + (2,)).map(
               lambda b: Sample((_indefinite(s.args[0]), b), {}))), grad=False, extremes=False, rtol=1e-6, atol=1e-8),
    OpInfo("geqrf", lambda x: (lambda r: r.a + r.tau.sum(-1, keepdim=True).unsqueeze(-1))(tga.geqrf(x)),
           lambda x: (lambda r: r.a + r.tau.sum(-1, keepdim=True).unsqueeze(-1))(torch.geqrf(x)), rect_matrices(),
           grad=False, extremes=False),
    OpInfo("householder_product", lambda a, tau: tga.linalg.householder_product(a, tau[..., : a.shape[-1]]),
           lambda a, tau: torch.linalg.householder_product(a, tau[..., : a.shape[-1]]),
           rect_matrices(tall=True).flatmap(lambda s: array(s.args[0].shape[:-2] + (3,), st.floats(0.0, 2.0)).map(
               lambda t: Sample((s.args[0], t), {}))), extremes=False,
           notes="reflectors applied as products: an infinite entry meets a 0 of the identity (inf * 0), where "
                 "LAPACK's loops skip the zero"),
    OpInfo("ormqr", lambda a, tau, c, left, tr: tga.ormqr(a, tau[..., : a.shape[-1]], c if left else c.mT, left, tr),
           lambda a, tau, c, left, tr: torch.ormqr(a, tau[..., : a.shape[-1]], c if left else c.mT, left, tr),
           _with(rect_matrices(tall=True).flatmap(lambda s: array(s.args[0].shape[:-1] + (2,)).map(
               lambda c: Sample((s.args[0], _reflector_scales(s.args[0]), c), {}))), left=st.booleans(),
                 tr=st.booleans()), extremes=False,
           notes="tau of orthogonal reflectors (2 / |v|^2): PyTorch's gradient assumes Q orthogonal"),
    OpInfo("orgqr", lambda x: tga.orgqr(*tga.geqrf(x.detach())) + x, lambda x: torch.orgqr(*torch.geqrf(x.detach())) + x,
           rect_matrices(tall=True), extremes=False, notes="Q of geqrf's reflectors (geqrf has no gradient)"),
    OpInfo("triangular_solve", lambda a, b, upper, tr, unit: tga.triangular_solve(b, a, upper, tr, unit).solution,
           lambda a, b, upper, tr, unit: torch.triangular_solve(b, a, upper, tr, unit).solution,
           _with(square_matrices().flatmap(lambda s: array(s.args[0].shape[:-1] + (2,)).map(
               lambda b: Sample((s.args[0], b), {}))), upper=st.booleans(), tr=st.booleans(), unit=st.booleans()),
           extremes=False),
    OpInfo("cholesky_solve", lambda a, b, upper: tga.cholesky_solve(b, tga.linalg.cholesky(a, upper=upper), upper),
           lambda a, b, upper: torch.cholesky_solve(b, torch.linalg.cholesky(a, upper=upper), upper),
           _with(square_matrices("spd").flatmap(lambda s: array(s.args[0].shape[:-1] + (2,)).map(
               lambda b: Sample((s.args[0], b), {}))), upper=st.booleans()), extremes=False),
    OpInfo("cholesky_solve_factor", lambda f, b: tga.cholesky_solve(b, f), lambda f, b: torch.cholesky_solve(b, f),
           square_matrices().flatmap(lambda s: array(s.args[0].shape[:-1] + (2,)).map(
               lambda b: Sample((np.tril(s.args[0]), b), {}))), extremes=False,
           notes="a factor given directly: the gradient reaches its upper triangle too, as PyTorch's"),
    OpInfo("cholesky_inverse", lambda f, upper: tga.cholesky_inverse(f.triu() if upper else f.tril(), upper),
           lambda f, upper: torch.cholesky_inverse(f.triu() if upper else f.tril(), upper),
           _with(square_matrices(), upper=st.booleans()), extremes=False),
    OpInfo("torch_svd", lambda x, some: (lambda r: r.U ** 2 * 2.0 + r.S.sum(-1, keepdim=True).unsqueeze(-1))(
        tga.svd(x, some)) if some or x.shape[-1] >= x.shape[-2] else tga.svd(x, some).S,
           lambda x, some: (lambda r: r.U ** 2 * 2.0 + r.S.sum(-1, keepdim=True).unsqueeze(-1))(
               torch.svd(x, some)) if some or x.shape[-1] >= x.shape[-2] else torch.svd(x, some).S,
           _with(rect_matrices(), some=st.booleans()), extremes=False, rtol=1e-6, atol=1e-8,
           notes="U squared: its signs are a convention"),
    OpInfo("torch_svd_v", lambda x: tga.svd(x).V ** 2 + tga.svd(x, compute_uv=False).V.sum(),
           lambda x: torch.svd(x).V ** 2 + torch.svd(x, compute_uv=False).V.sum(), rect_matrices(), extremes=False,
           rtol=1e-6, atol=1e-8),
    OpInfo("torch_qr", lambda x, some: (lambda r: r.Q * 2.0 + r.R.sum(-2, keepdim=True).sum(-1, keepdim=True))(
        tga.qr(x, some)), lambda x, some: (lambda r: r.Q * 2.0 + r.R.sum(-2, keepdim=True).sum(-1, keepdim=True))(
        torch.qr(x, some)), _with(rect_matrices(), some=st.just(True)), extremes=False, rtol=1e-6, atol=1e-8),
    OpInfo("tensorinv", lambda x: tga.linalg.tensorinv(x.reshape(x.shape[-1], 1, x.shape[-1]), 1),
           lambda x: torch.linalg.tensorinv(x.reshape(x.shape[-1], 1, x.shape[-1]), 1),
           square_matrices().filter(lambda s: s.args[0].ndim == 2), extremes=False),
    OpInfo("tensorsolve", lambda a, b: tga.linalg.tensorsolve(a, b), lambda a, b: torch.linalg.tensorsolve(a, b),
           square_matrices().filter(lambda s: s.args[0].ndim == 2).flatmap(lambda s: array(s.args[0].shape[:1]).map(
               lambda b: Sample((s.args[0], b), {}))), extremes=False),
    OpInfo("ger", *_both(lambda lib: lambda a, b: lib.ger(a, b)), binary().filter(
        lambda s: s.args[0].ndim == 1 and s.args[1].ndim == 1)),
    OpInfo("linalg_vander", lambda x, n: tga.linalg.vander(x, N=n), lambda x, n: torch.linalg.vander(x, N=n),
           _with(unary(AWAY_FROM_ZERO, min_dims=1), n=st.none() | st.integers(2, 4)).filter(
               lambda s: (s.kwargs["n"] or s.args[0].shape[-1]) > 1), extremes=False,
           notes="away from 0: PyTorch's powers are a cumulative product, whose second derivative divides by x"),
]  # fmt: skip
OPS += TENSOR_FUNCTIONS


# -- PyTorch's tensor functions written later: the *_scatter, unsafe splits, put, index_reduce, addbmm, gradient,
# histogram, fill and torch's top-level native_*_norm (shape_functions.py, math_functions.py, products.py,
# statistics.py, creation.py, functional_norm.py) -----------------------------------------------------------------
@st.composite
def view_scatters(draw: Any, kind: str) -> Sample:
    """An array, the arguments of one of its views (``kind``: diagonal, select or slice) and a source of
    that view's shape."""
    if kind == "diagonal":
        s = draw(planes())
        kw = s.kwargs
        view = np.diagonal(s.args[0], kw["offset"], kw["dim1"], kw["dim2"])
    elif kind == "select":
        shape = draw(shapes(min_dims=1, min_side=1))
        d = draw(st.integers(-len(shape), len(shape) - 1))
        s = Sample((draw(array(shape)),), {"dim": d, "index": draw(st.integers(-shape[d], shape[d] - 1))})
        view = np.take(s.args[0], s.kwargs["index"], axis=d)
    else:
        shape = draw(shapes(min_dims=1))
        d = draw(st.integers(-len(shape), len(shape) - 1))
        start, end = draw(st.none() | st.integers(-4, 4)), draw(st.none() | st.integers(-4, 4))
        s = Sample((draw(array(shape)),), {"dim": d, "start": start, "end": end, "step": draw(st.integers(1, 2))})
        view = s.args[0][(slice(None),) * (d % len(shape)) + (slice(start, end, s.kwargs["step"]),)]
    return Sample((s.args[0], draw(array(view.shape))), s.kwargs)


@st.composite
def puts(draw: Any) -> Sample:
    """An array, flat positions in it (negative ones among them; repeats only with ``accumulate``) and a source."""
    shape = draw(shapes(min_side=1))
    n = int(np.prod(shape))
    acc = draw(st.booleans())
    pos = draw(st.lists(st.integers(-n, n - 1), max_size=4, unique_by=None if acc else (lambda i: i % n)))
    return Sample((draw(array(shape)), draw(array((len(pos),)))), {"index": np.array(pos, dtype=np.int64),
                                                                   "accumulate": acc})  # fmt: skip


@st.composite
def batch_products(draw: Any) -> Sample:
    """``input (n, p)`` (or a shape broadcasting to it), ``batch1 (b, n, m)`` and ``batch2 (b, m, p)``."""
    b, n, m, p = (draw(st.integers(0 if k == 0 else 1, 3)) for k in range(4))
    ishape = draw(st.sampled_from([(n, p), (1, p), (p,), ()]))
    return Sample((draw(array(ishape)), draw(array((b, n, m))), draw(array((b, m, p)))), {})


@st.composite
def gradients(draw: Any) -> Sample:
    """An array of 2+ points along each axis and ``gradient``'s keywords (``coords``: use increasing
    coordinates along the first axis asked for instead of a number)."""
    edge = draw(st.integers(1, 2))
    shape = draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=edge + 1, max_side=4))
    nd = len(shape)
    dim = draw(st.none() | st.integers(-nd, nd - 1))
    first = 0 if dim is None else dim % nd
    steps = draw(array((shape[first],), st.floats(0.3, 2.0)))
    return Sample((draw(array(shape)), steps), {"dim": dim, "edge_order": edge, "coords": draw(st.booleans()),
                                                "h": draw(st.sampled_from([1, 0.5, 2.0]))})  # fmt: skip


def _gradient(lib: Any) -> Callable:
    def run(x: Any, steps: Any, dim: Any, edge_order: int, coords: bool, h: Any) -> Any:
        axes = range(x.ndim) if dim is None else [dim]
        if coords:
            spacing = [steps.cumsum(0)] + [h] * (len(axes) - 1) if dim is None else [steps.cumsum(0)]
            if dim is None and x.ndim > 1:  # (one kind per call: coordinates for every axis then)
                spacing = [x.new_ones(x.shape[k]).cumsum(0) * 0.5 for k in axes]
                spacing[0] = steps.cumsum(0)
        else:
            spacing = h
        return lib.cat([g.reshape(-1) for g in lib.gradient(x, spacing=spacing, dim=dim, edge_order=edge_order)])

    return run


@st.composite
def group_norms(draw: Any) -> Sample:
    """``(N, C, *)`` with ``C`` a multiple of the groups, and a weight and bias per channel."""
    g, per, n = draw(st.integers(1, 2)), draw(st.integers(1, 2)), draw(st.integers(1, 2))
    rest = draw(hnp.array_shapes(min_dims=0, max_dims=2, min_side=1, max_side=3))
    c = g * per
    if n * per * int(np.prod(rest)) == 1:  # (PyTorch's: more than one value per group)
        n += 1
    return Sample((draw(array((n, c) + rest)), draw(array((c,))), draw(array((c,)))), {"groups": g})


def _native_group_norm(lib: Any) -> Callable:
    def run(x: Any, w: Any, b: Any, groups: int) -> Any:
        n, c = x.shape[:2]
        out, mean, rstd = lib.native_group_norm(x, w, b, n, c, x[0, 0].numel(), groups, 1e-5)
        return lib.cat([out.reshape(-1), mean.reshape(-1), rstd.reshape(-1)])

    return run


def _native_layer_norm(lib: Any) -> Callable:
    def run(x: Any, w: Any, b: Any, groups: int) -> Any:
        out, mean, rstd = lib.native_layer_norm(x, x.shape[1:], w.reshape(-1).sum() + x[0] * 0, None, 1e-5)
        return out + mean * rstd  # (mean and rstd without a graph, as PyTorch's)

    return run


def _native_batch_norm(lib: Any) -> Callable:
    def run(x: Any, w: Any, b: Any, groups: int) -> Any:
        rm, rv = x.new_zeros(x.shape[1]), x.new_ones(x.shape[1])
        out, mean, invstd = lib.native_batch_norm(x, w, b, rm, rv, True, 0.3, 1e-5)
        return lib.cat([out.reshape(-1), mean * invstd, rm * 2.0 + rv])

    return run


TENSOR_MEMBERS = [
    OpInfo("diagonal_scatter", lambda x, src, **kw: tga.diagonal_scatter(x, src, **kw),
           lambda x, src, **kw: torch.diagonal_scatter(x, src, **kw), view_scatters("diagonal")),
    OpInfo("select_scatter", lambda x, src, dim, index: x.select_scatter(src, dim, index),
           lambda x, src, dim, index: x.select_scatter(src, dim, index), view_scatters("select")),
    OpInfo("slice_scatter", lambda x, src, **kw: tga.slice_scatter(x, src, **kw),
           lambda x, src, **kw: torch.slice_scatter(x, src, **kw), view_scatters("slice")),
    OpInfo("unsafe_split", *_both(lambda lib: lambda x, axis, size: lib.cat([p.reshape(-1) * (i + 1.0) for i, p in
                                   enumerate(lib.unsafe_split(x, size, axis))])),
           _with(along_axis(min_dims=1), size=st.integers(1, 3))),
    OpInfo("unsafe_chunk", *_both(lambda lib: lambda x, axis, n: lib.cat([p.reshape(-1) * (i + 1.0) for i, p in
                                   enumerate(x.unsafe_chunk(n, axis))])),
           _with(along_axis(min_dims=1), n=st.integers(1, 3))),
    OpInfo("unsafe_split_with_sizes", *_both(lambda lib: lambda x, axis: lib.cat([p.reshape(-1) * (i + 1.0) for i, p
                                               in enumerate(x.unsafe_split_with_sizes(
                                                   [x.shape[axis] // 2, x.shape[axis] - x.shape[axis] // 2], axis))])),
           along_axis(min_dims=1)),
    OpInfo("narrow_copy", *_both(lambda lib: lambda x, axis: lib.narrow_copy(x, axis, x.shape[axis] // 3,
                                                                          x.shape[axis] // 2)),
           along_axis(min_dims=1)),
    OpInfo("put", lambda x, src, index, accumulate: x.put(tga.tensor(index), src, accumulate),
           lambda x, src, index, accumulate: x.put(torch.tensor(index), src, accumulate), puts()),
    OpInfo("index_reduce", lambda x, src, index, dim, reduce, include_self: x.index_reduce(
               dim, tga.tensor(index), src, reduce, include_self=include_self),
           lambda x, src, index, dim, reduce, include_self: x.index_reduce(
               dim, torch.tensor(index), src, reduce, include_self=include_self),
           _with(index_lines(), reduce=st.sampled_from(["prod", "mean", "amax", "amin"]), include_self=st.booleans()).filter(
               lambda s: not any(((np.abs(a) < 1e-3) & (a != 0)).any() for a in s.args[:2])),
           extremes=False),  # (no tiny values: PyTorch's prod backward divides by the product, 1e-172 ** 2 underflows)
    OpInfo("addbmm", *_both(lambda lib: lambda a, b, c: lib.addbmm(a, b, c, beta=0.5, alpha=2.0)), batch_products(),
           extremes=False),  # (inf * 0 depends on the order of the sum)
    OpInfo("ger_method", *_both(lambda lib: lambda a, b: a.ger(b)),
           binary().filter(lambda s: s.args[0].ndim == 1 and s.args[1].ndim == 1)),
    OpInfo("gradient", _gradient(tga), _gradient(torch), gradients(), grad_args=1, extremes=False),
    OpInfo("fill", *_both(lambda lib: lambda x, v: lib.fill(x, v.reshape(-1)[:1].sum())), binary()),
    OpInfo("group_norm_torch", *_both(lambda lib: lambda x, w, b, groups: lib.group_norm(x, groups, w, b, 1e-5, False)),
           group_norms(), extremes=False),
    OpInfo("native_group_norm", _native_group_norm(tga), _native_group_norm(torch), group_norms(), extremes=False),
    OpInfo("native_layer_norm", _native_layer_norm(tga), _native_layer_norm(torch), group_norms(), extremes=False),
    OpInfo("native_batch_norm", _native_batch_norm(tga), _native_batch_norm(torch),
           group_norms().filter(lambda s: s.args[0].size > s.args[0].shape[1]), extremes=False),
    OpInfo("constant_pad_nd", *_both(lambda lib: lambda x, p: lib.constant_pad_nd(x, p, -0.5)),
           unary(min_dims=1).flatmap(lambda s: st.lists(st.integers(0, 2), min_size=2, max_size=2).map(
               lambda p: s._replace(kwargs={"p": p})))),
    OpInfo("hardshrink_method", *_both(lambda lib: lambda x: x.hardshrink(0.4)), unary(), extremes=False),
    # no gradient
    OpInfo("histogram", lambda x, w, bins, rng: tga.cat(list(x.histogram(bins, range=rng, weight=w * 0 + 1.5))),
           lambda x, w, bins, rng: torch.cat(list(x.histogram(bins, range=rng, weight=w * 0 + 1.5))),
           _with(same_shape(2), bins=st.integers(1, 4), rng=st.none() | st.just((-1.0, 1.0))), grad=False,
           extremes=False),
    OpInfo("histogram_density", lambda x, e: tga.histogram(x, e.reshape(-1).sort()[0], density=True)[0],
           lambda x, e: torch.histogram(x, e.reshape(-1).sort()[0], density=True)[0],
           binary(TIES, VALUES).filter(lambda s: len(np.unique(s.args[1])) == s.args[1].size >= 2), grad=False,
           extremes=False),
    OpInfo("histogramdd", lambda x, bins: tga.cat([t.reshape(-1) for t in (lambda r: [r[0], *r[1]])(
               tga.histogramdd(x, bins))]),
           lambda x, bins: torch.cat([t.reshape(-1) for t in (lambda r: [r[0], *r[1]])(torch.histogramdd(x, bins))]),
           _with(unary(min_dims=2, max_dims=2, min_side=1), bins=st.integers(1, 3)), grad=False, extremes=False),
    OpInfo("nonzero_static", *_both(lambda lib: lambda x, size: lib.nonzero_static(x, size=size, fill_value=-7)),
           _with(unary(TIES), size=st.integers(0, 5)), grad=False),
    OpInfo("isposinf", *_both(lambda lib: lambda x: lib.isposinf(x) ^ x.isneginf() | x.isreal()), unary(), grad=False),
    OpInfo("unravel_index", *_both(lambda lib: lambda x, shape: lib.stack(
               lib.unravel_index((x * 7).long(), shape) if shape else [(x * 7).long()])),
           _with(unary(), shape=st.lists(st.integers(1, 4), min_size=1, max_size=3).map(tuple)), grad=False,
           extremes=False),
    OpInfo("logspace", *_both(lambda lib: lambda x, n, base: lib.logspace(-2.0, 1.5, n, base, dtype=lib.float64, device=x.device)
                               + x.sum() * 0),
           _with(unary(max_dims=0), n=st.integers(0, 5), base=st.sampled_from([10.0, 2.0, 0.5])), grad=False),
]  # fmt: skip
OPS += TENSOR_MEMBERS


# -- torch.X names of the torch namespace computed anew (not F's or a method's spelling) -------
@st.composite
def recurrent_cells(draw: Any, gates: int) -> Sample:
    """``input (B, in)``, ``hx (B, H)``, ``w_ih (gates*H, in)``, ``w_hh (gates*H, H)``, two biases
    and, for the LSTM (4 gates), the cell state ``(B, H)`` last."""
    b, n_in, h = draw(st.integers(1, 3)), draw(st.integers(1, 3)), draw(st.integers(1, 3))
    small = st.floats(-1.0, 1.0)
    args = [draw(array(s, small)) for s in ((b, n_in), (b, h), (gates * h, n_in), (gates * h, h), (gates * h,),
                                             (gates * h,))]  # fmt: skip
    if gates == 4:
        args.append(draw(array((b, h), small)))
    return Sample(tuple(args), {})


def _cell(name: str) -> tuple[Callable, Callable]:
    def on(lib: Any) -> Callable:
        def run(x: Any, h: Any, w_ih: Any, w_hh: Any, b_ih: Any, b_hh: Any, c: Any = None) -> Any:
            if c is None:
                return getattr(lib, name)(x, h, w_ih, w_hh, b_ih, b_hh)
            h2, c2 = lib.lstm_cell(x, (h, c), w_ih, w_hh, b_ih, b_hh)
            return lib.cat([h2.reshape(-1), 2.0 * c2.reshape(-1)])

        return run

    return _both(on)


def _singular_values_apart(sample: Sample) -> bool:
    s = np.linalg.svd(sample.args[0], compute_uv=False)
    return bool(s.min() > 0.1 and (s.shape[-1] < 2 or np.diff(-s, axis=-1).min() > 0.1))


@st.composite
def _small_matrices(draw: Any) -> Sample:
    m, n = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    return Sample((draw(array(draw(shapes(max_dims=1, min_side=1)) + (m, n), st.floats(-2.0, 2.0))),), {})


def distinct_singular_values() -> st.SearchStrategy:
    """A matrix (or a batch) whose singular values are apart from each other and from zero, where
    the nuclear norm is differentiable twice."""
    return _small_matrices().filter(_singular_values_apart)


@st.composite
def convolutions(draw: Any) -> Sample:
    """``input (N, C, *spatial)``, ``weight`` and ``bias`` of one to three spatial dims, and
    ``torch.convolution``'s stride, padding, dilation and (for the transposed one) output padding."""
    nd, transposed = draw(st.integers(1, 3)), draw(st.booleans())
    n, c, o = draw(st.integers(1, 2)), draw(st.integers(1, 2)), draw(st.integers(1, 2))
    k = tuple(draw(st.integers(1, 2)) for _ in range(nd))
    spatial = tuple(draw(st.integers(2, 4)) for _ in range(nd))
    stride = [draw(st.integers(1, 2)) for _ in range(nd)]
    w_shape = (c, o) + k if transposed else (o, c) + k
    out_pad = [draw(st.integers(0, s - 1)) for s in stride] if transposed else [0] * nd
    small = st.floats(-2.0, 2.0)
    x, w, b = draw(array((n, c) + spatial, small)), draw(array(w_shape, small)), draw(array((o,), small))
    return Sample((x, w, b), {"stride": stride, "transposed": transposed, "output_padding": out_pad})


@st.composite
def grid_samples(draw: Any) -> Sample:
    """``input (N, C, H, W)``, a ``grid (N, h, w, 2)`` inside [-1, 1] and away from the sampling
    grid's kinks, and ATen's padding mode (0, 1, 2) and ``align_corners``."""
    n, c = draw(st.integers(1, 2)), draw(st.integers(1, 2))
    x = draw(array((n, c, draw(st.integers(2, 4)), draw(st.integers(2, 4))), st.floats(-2.0, 2.0)))
    grid = draw(array((n, draw(st.integers(1, 3)), draw(st.integers(1, 3)), 2), st.floats(-0.95, 0.95)))
    return Sample((x, grid), {"padding": draw(st.integers(0, 2)), "align_corners": draw(st.booleans())})


def _eval_dropout(name: str) -> tuple[Callable, Callable]:
    """ATen's dropout ``name`` in evaluation (the identity), on a copy for the in-place ones."""
    if name == "native_dropout":
        return _both(lambda lib: lambda x: lib.native_dropout(x, 0.3, False)[0])
    if name.endswith("_"):
        return _both(lambda lib: lambda x: getattr(lib, name)(x.clone(), 0.3, False))
    return _both(lambda lib: lambda x: getattr(lib, name)(x, 0.3, False))


TORCH_NAMESPACE = [
    OpInfo("norm_except_dim", *_both(lambda lib: lambda x, dim, p: lib.norm_except_dim(x, p, dim)),
           unary(AWAY_FROM_ZERO, min_dims=1, min_side=1).flatmap(lambda s: st.builds(
               lambda d, p: s._replace(kwargs={"dim": d, "p": p}), st.integers(-1, s.args[0].ndim - 1),
               st.sampled_from([2, 3]))),
           extremes=False),  # (a norm's gradient at zero is a choice of subgradient: nonzero inputs only)
    OpInfo("frobenius_norm", *_both(lambda lib: lambda x, keepdim: lib.frobenius_norm(x, [0, -1], keepdim)),
           _with(unary(AWAY_FROM_ZERO, min_dims=2, min_side=1), keepdim=st.booleans()),
           extremes=False),  # (as norm_except_dim: away from the kink at zero)
    OpInfo("nuclear_norm", *_both(lambda lib: lambda x: lib.nuclear_norm(x, [-2, -1])), distinct_singular_values(),
           extremes=False),  # (the SVD's gradient needs distinct, nonzero singular values)
    OpInfo("chain_matmul", *_both(lambda lib: lambda a, b: lib.chain_matmul(a, b.mT, a)),
           binary().filter(lambda s: s.args[0].ndim == 2 and s.args[0].shape == s.args[1].shape), extremes=False),
    OpInfo("rnn_tanh_cell", *_cell("rnn_tanh_cell"), recurrent_cells(1), extremes=False),
    OpInfo("rnn_relu_cell", *_cell("rnn_relu_cell"), recurrent_cells(1), extremes=False),
    OpInfo("gru_cell", *_cell("gru_cell"), recurrent_cells(3), extremes=False),
    OpInfo("lstm_cell", *_cell("lstm_cell"), recurrent_cells(4), extremes=False),
    OpInfo("transpose_copy", *_both(lambda lib: lambda x: lib.transpose_copy(x, 0, -1)), unary(min_dims=1)),
    OpInfo("permute_copy", *_both(lambda lib: lambda x: lib.permute_copy(x, list(range(x.ndim))[::-1])), unary()),
    OpInfo("unfold_copy", *_both(lambda lib: lambda x, axis: lib.unfold_copy(x, axis, 1, 1)),
           along_axis(min_dims=1).filter(lambda s: s.args[0].shape[s.kwargs["axis"]] > 0)),
    OpInfo("slice_copy", *_both(lambda lib: lambda x, axis: lib.slice_copy(x, axis, 1, None, 2)), along_axis(min_dims=1)),
    OpInfo("view_copy", *_both(lambda lib: lambda x: lib.view_copy(x, [-1])), unary()),
    OpInfo("select_copy", *_both(lambda lib: lambda x, axis: lib.select_copy(x, axis, -1)),
           along_axis(min_dims=1).filter(lambda s: s.args[0].shape[s.kwargs["axis"]] > 0)),
    OpInfo("split_copy", *_both(lambda lib: lambda x, axis: lib.cat([p.reshape(-1) * (i + 1.0) for i, p in enumerate(
               lib.split_copy(x, 2, axis))])), along_axis(min_dims=1)),
    OpInfo("detach_copy", *_both(lambda lib: lambda x: lib.detach_copy(x)), unary(),
           grad=False),  # (PyTorch's raises at backward: it has no derivative of detach_copy)
    OpInfo("convolution", *_both(lambda lib: lambda x, w, b, stride, transposed, output_padding: lib.convolution(
               x, w, b, stride, [0] * len(stride), [1] * len(stride), transposed, output_padding, 1)),
           convolutions(), extremes=False),
    OpInfo("grid_sampler", *_both(lambda lib: lambda x, g, padding, align_corners: lib.grid_sampler(
               x, g, 0, padding, align_corners)), grid_samples(), extremes=False,
           gradgrad=False),  # (PyTorch has no second derivative of grid_sampler_2d)
    OpInfo("affine_grid_generator", *_both(lambda lib: lambda t, align_corners: lib.affine_grid_generator(
               t, [t.shape[0], 1, 3, 2], align_corners)),
           _with(array(st.integers(1, 2).map(lambda n: (n, 2, 3))).map(lambda a: Sample((a,), {})),
                 align_corners=st.booleans())),
]  # fmt: skip
TORCH_NAMESPACE += [OpInfo(name, *_eval_dropout(name), unary()) for name in (
    "feature_dropout", "native_dropout", "dropout_", "alpha_dropout_", "feature_dropout_", "feature_alpha_dropout_")]  # fmt: skip
OPS += TORCH_NAMESPACE
BY_NAME = {op.name: op for op in OPS}
assert len(BY_NAME) == len(OPS), "two OpInfo entries share a name"
