"""Tensor functions with PyTorch's names and signatures: ``tga.gather``, ``tga.sort``, ``tga.einsum``, ...

Each is also a :class:`Tensor` method where PyTorch has one (``x.gather(dim, index)``).
All are written once here from the primitives (``Gather``/``ScatterAdd`` for the index
ops, slices and ``Cat`` for flip and roll, a log-depth product tree for ``prod``,
``Matmul`` for ``einsum``), so each has gradients of every order on every device.
Indices (of ``sort``, ``argmax``, ``topk``) carry no gradient: the values are gathered
by them, so the gradient flows to the elements picked, as in PyTorch.

Where PyTorch and NumPy differ in result, the spelling decides: ``max(x, dim=1)`` gives
PyTorch's ``(values, indices)``, ``max(x, axis=1)`` NumPy's values; ``var(x)`` here is
PyTorch's unbiased variance, ``var(x, axis=...)`` NumPy's population variance.
"""

from __future__ import annotations

import builtins  # this module's max, min, sum, ... are PyTorch's; Python's are builtins.*
import functools
import inspect
import math
import string
from collections.abc import Sequence
from typing import Any

import numpy as np

from .. import ops
from ..engine.arguments import ABSENT, _is_ints, ints, refuse
from ..engine.barebones import flips_innermost, unchecked
from ..engine.barebones import message as barebones_message
from ..engine.composite import composite
from ..engine.declare import check_dtype, low_precision, public
from ..engine.layout import contiguous_format, pointwise_result, row_major_result
from ..functional.checks import MissingAxisError, same_dtype, tensor_operand
from ..ops.array_function import array_function
from ..ops.compare import IsFinite, IsInf, IsNan
from ..ops.saved import saved_for_backward
from ._tensor import InvalidArgumentError, Size, Tensor, cat, where
from .dtypes import OperandDtypeError, UnsupportedDtypeError, scalar_type_name
from .mutation.inplace import mark_multi_output_views
from .promotion import as_float, beta_first
from .reduce.tensor_reduce import (
    ValuesIndices,
    _new_memory,
    values_indices,
)
from .shape import dims as _dims

__all__ = ["Size", "ValuesIndices", "values_indices"]  # (the functions: each declared @public)  # fmt: skip


def number_as_vector(like_index: bool = False) -> Any:
    """For the indexing and sorting ops that PyTorch runs on a 0-d tensor along its axis 0
    (or -1): the op runs on the tensor as a 1-element vector (0-d index and source tensors
    likewise) and its results take the 0-d shape back (``gather``'s, with ``like_index``,
    its index's shape). Other ops keep the rule of :func:`_one_dim`: a 0-d tensor has no axis."""

    def wrap(op: Any) -> Any:
        signature = inspect.signature(op)

        @functools.wraps(op)
        def run(x: Any, *args: Any, **kwargs: Any) -> Any:
            if not isinstance(x, Tensor) or x.ndim:  # (the hot path: one check)
                return op(x, *args, **kwargs)
            bound = signature.bind(x, *args, **kwargs)
            bound.apply_defaults()
            given = dict(bound.arguments)
            _dims.one((), given["dim"], op.__name__)  # 0 or -1
            index = given.get("index")
            for name, value in given.items():  # (a fill ``value`` is a number, not a vector along the axis)
                if isinstance(value, Tensor) and value.ndim == 0 and name != "value":
                    given[name] = value.reshape(1)
            given["dim"] = 0
            out = op(**given)
            shape = tuple(getattr(index, "shape", ())) if like_index else ()
            if isinstance(out, tuple):
                return type(out)(*(o.reshape(shape) for o in out))
            return out.reshape(shape)

        return run

    return wrap


def _one_dim(x: Tensor, dim: Any, op: str) -> int:
    """One axis of a tensor that has axes (``gather``, ``sort``, ``split``, ...)."""
    return _dims.one(x.shape, dim, op, scalar_ok=False)


# -- index arrays ----------------------------------------------------------------
def _index_tensor(x: Tensor, index: Any, op: str, vector: bool = False) -> Tensor:
    """``index`` as an integer tensor on ``x``'s device (itself when it is one already, so a
    traced program knows where it came from); with ``vector``, one of at most one axis (``index_select``,
    ``index_add``: PyTorch checks that before the dtype, and raises ``IndexError``)."""
    if not isinstance(index, Tensor):
        index = Tensor(np.asarray(index), device=x._dev)
    if index._dev is not x._dev:
        raise RuntimeError(f"{op}: the index is on {index.device} and the tensor on {x.device}; move one with .to()")
    if vector and index.ndim > 1:
        raise _dims.DimensionError(f"{op}: the index must be 0-D or 1-D (a vector), got shape {tuple(index.shape)}")
    if index.dtype.kind not in "iu":
        raise OperandDtypeError(
            f"{op}: the index must be an integer tensor, not {index.dtype}; convert it with .long()"
        )
    check_index_dtype(op, index)
    return index


#: The ops whose CPU kernels take an int64 index only; the other index ops take int32 too.
_LONG_INDEX_ONLY = frozenset({"index_copy", "take", "take_along_dim", "put"})
_INT_INDEX = frozenset({np.dtype(np.int32), np.dtype(np.int64)})


def check_index_dtype(op: str, index: Tensor) -> None:
    """PyTorch's index dtypes: int64, or int32 where the kernel takes it (``gather``, ``scatter``,
    ``index_select``, ``index_add``...); uint8, int8 and int16 indices are its ``RuntimeError``."""
    dt = index.dtype
    if dt == np.int64 or (dt in _INT_INDEX and op not in _LONG_INDEX_ONLY):
        return
    name = scalar_type_name(dt)
    if op in _LONG_INDEX_ONLY:
        raise OperandDtypeError(f"{op}(): Expected a long tensor for index, but got {name} (shape "
                                f"{tuple(index.shape)}; convert it with .long())")  # fmt: skip
    raise OperandDtypeError(f"{op}(): Expected dtype int32/int64 for index, but got {name} (shape "
                            f"{tuple(index.shape)}; convert it with .long())")  # fmt: skip


class IndexRangeError(IndexError, RuntimeError):
    """An index past its dimension: PyTorch raises ``IndexError`` for it in ``index_select`` and
    ``RuntimeError`` in ``gather`` and ``scatter``; this is both."""


def _check_bounds(ns: Any, idx: Any, n: int, op: str, dim: int, shape: tuple) -> None:
    if idx.size == 0:
        return
    lo, hi = int(ns.min(idx)), int(ns.max(idx))
    if lo < 0 or hi >= n:
        bad = lo if lo < 0 else hi
        raise IndexRangeError(f"{op}: index {bad} is out of range for dimension {dim} of size {n} (shape {shape})")


def _index(x: Tensor, dim: int, index: Any, op: str) -> Tensor:
    """``index`` as an int64 tensor on ``x``'s device, checked as PyTorch's ``gather`` checks it:
    as many axes as ``x``, no larger than ``x`` off ``dim``, every entry inside ``dim``."""
    idx = _index_tensor(x, index, op)
    if idx.ndim != x.ndim:
        raise InvalidArgumentError(f"{op}: the index needs as many dimensions as the tensor ({x.ndim}), got {idx.ndim}")
    for d, (i, s) in enumerate(zip(idx.shape, x.shape)):
        if d != dim and i > s:
            raise InvalidArgumentError(
                f"{op}: index shape {tuple(idx.shape)} is larger than tensor shape {tuple(x.shape)} at dim {d}"
            )
    _check_bounds(x._dev.ops, idx._data, x.shape[dim], op, dim, x.shape)
    return idx


@public(method=True)
@number_as_vector(like_index=True)
def gather(x: Tensor, dim: int, index: Any) -> Tensor:
    """``out[i][j] = x[index[i][j]][j]`` (for ``dim=0``), as ``torch.gather``; differentiable in ``x``."""
    d = _one_dim(x, dim, "gather")
    if isinstance(index, Tensor) and index.numel() == 0:
        # PyTorch checks nothing of an empty index (not even its rank): the result is empty, of its shape
        return saved_for_backward(x.reshape(-1)[:0].reshape(tuple(index.shape)), x)
    out = ops.GatherAlong.apply(x, _index(x, d, index, "gather"), args=(d, x.shape))
    return saved_for_backward(out, x)  # (PyTorch's gather keeps its input; index_select, sort, max do not)


def _scattered(x: Tensor, dim: Any, index: Any, src: Any, op: str,
               keep: Tensor | None = None) -> tuple[Tensor, Tensor | None, int]:  # fmt: skip
    """The checked index and, for a tensor ``src``, its part the index covers summed into
    zeros of ``x``'s shape where the index points (only the entries ``keep`` marks, if given)."""
    d = _one_dim(x, dim, op)
    idx = _index(x, d, index, op)
    if not isinstance(src, Tensor):
        return idx, None, d
    if src.ndim != x.ndim or builtins.any(i > s for i, s in zip(idx.shape, src.shape)):
        raise InvalidArgumentError(
            f"{op}: src of shape {tuple(src.shape)} must cover the index's shape {tuple(idx.shape)}"
        )
    if src.shape != idx.shape:
        src = src[tuple(slice(0, i) for i in idx.shape)]
    if keep is not None:
        src = where(keep, src, 0)
    return idx, ops.ScatterAddAlong.apply(src, idx, args=(d, x.shape)), d


def _last_writes(x: Tensor, idx: Tensor, d: int) -> Tensor:
    """Which entries of ``idx`` are the last along ``d`` to point at their position: the
    write that stands when the index repeats one, in the order PyTorch's CPU kernel writes.
    A boolean tensor of ``idx``'s shape (no gradient: it depends on the index alone)."""
    return array_function(_last_writes_array, idx, d=d)  # (an op: a replay reads the new index)


def _last_writes_array(ns: Any, index: Any, d: int) -> Any:
    xp = ns.device.xp
    i = xp.moveaxis(index, d, -1)
    n = i.shape[-1]
    pos = xp.arange(n, device=i.device)
    later = pos[None, :] > pos[:, None]
    overwritten = xp.any((i[..., :, None] == i[..., None, :]) & later, axis=-1)
    return xp.moveaxis(xp.logical_not(overwritten), -1, d)


@public(method=True, inplace=True)
@number_as_vector()
def scatter(
    x: Tensor, dim: int, index: Any, src: Any = None, *, value: Any = None, reduce: str | None = None
) -> Tensor:
    """``x`` with ``out[index[i][j]][j] = src[i][j]`` (for ``dim=0``), as ``torch.scatter``.

    ``src`` may be a number (or ``value=``). Differentiable in ``x`` (zero where written)
    and in ``src``. Where the index repeats a position the last write along ``dim`` stands,
    as on PyTorch's CPU. ``reduce="add"`` or ``"multiply"`` combines each write with what
    is there instead (for a number ``src``, once per time the position is named).
    """
    if src is None and value is None:  # (PyTorch's overloads: an src tensor or a value number)
        raise TypeError(
            "scatter() received an invalid combination of arguments: give src (a tensor) or value (a number)"
        )
    src = value if src is None else src
    if reduce is not None:
        out = _scatter_reduce(x, dim, index, src, reduce)
        if out.dtype != x.dtype:  # (a number is written in the tensor's dtype, as PyTorch's: 2.5 into int64 is 2)
            out = out != 0 if x.dtype == np.bool_ else out.astype(x.dtype)
        return out
    if isinstance(src, Tensor) and src.dtype != x.dtype:
        raise InvalidArgumentError(
            f"scatter: src is {src.dtype} and the tensor {x.dtype}; they must match (convert src with .to(x.dtype))"
        )
    d = _one_dim(x, dim, "scatter")
    idx = _index(x, d, index, "scatter")
    idx, summed, d = _scattered(x, dim, idx, src, "scatter", _last_writes(x, idx, d))
    ones = Tensor.ones(idx.shape, device=x._dev)
    written = ops.ScatterAddAlong.apply(ones, idx, args=(d, x.shape)) > 0
    out = where(written, src if summed is None else summed, x)
    # (the one write that stands, summed as a number: a bool tensor's comes back as its bool, an integer
    # tensor's as its integer, 2.5 cut to 2, as PyTorch writes a number in the tensor's dtype)
    if out.dtype != x.dtype:
        out = out != 0 if x.dtype == np.bool_ else out.astype(x.dtype)
    return out


def _scatter_reduce(x: Tensor, dim: int, index: Any, src: Any, reduce: str) -> Tensor:
    """``torch.scatter``'s ``reduce=``: each write added to (or multiplied into) the entry."""
    if reduce not in ("add", "multiply"):
        raise InvalidArgumentError(f"scatter: reduce must be 'add' or 'multiply', not {reduce!r}")
    if isinstance(src, Tensor):
        if reduce == "add":
            return scatter_add(x, dim, index, src)
        idx = _index_tensor(x, index, "scatter")
        if src.ndim != x.ndim or builtins.any(i > s for i, s in zip(idx.shape, src.shape)):
            raise InvalidArgumentError(
                f"scatter: src of shape {tuple(src.shape)} must cover the index's shape {tuple(idx.shape)}"
            )
        part = src[tuple(slice(0, i) for i in idx.shape)]  # (the entries the index names, as in scatter_add)
        return x.scatter_reduce(dim, idx, part, "prod", include_self=True)
    d = _one_dim(x, dim, "scatter")
    idx = _index(x, d, index, "scatter")
    counts = ops.ScatterAddAlong.apply(Tensor.ones(idx.shape, dtype=x.dtype, device=x._dev), idx, args=(d, x.shape))
    if reduce == "multiply":
        return x * src**counts  # (src ** 0 is 1, an inf or nan src included)
    # the number times its count where written, 0 elsewhere (never inf * 0)
    return x + where(counts > 0, Tensor.full(x.shape, src, dtype=x.dtype, device=x._dev), 0) * counts


@public(method=True, inplace=True)
@number_as_vector()
def scatter_add(x: Tensor, dim: int, index: Any, src: Tensor) -> Tensor:
    """``x`` with ``src[i][j]`` added at ``out[index[i][j]][j]`` (for ``dim=0``); repeats accumulate."""
    if isinstance(src, Tensor) and src.dtype != x.dtype:
        raise InvalidArgumentError(f"scatter_add(): Expected self.dtype to be equal to src.dtype, got {x.dtype} and "
                                   f"{src.dtype}")  # fmt: skip
    if low_precision(x) and isinstance(src, Tensor):  # (PyTorch's kernel sums x and the terms in float32, rounded once)
        return scatter_add(x.float(), dim, index, src.float()).astype(x.dtype)
    _, summed, _ = _scattered(x, dim, index, src, "scatter_add")
    if summed is None:
        raise TypeError("scatter_add: src must be a tensor")
    return x + summed


@public(method=True)
@number_as_vector()
def index_select(x: Tensor, dim: int, index: Any) -> Tensor:
    """The entries of ``x`` at the 1-D ``index`` along ``dim``."""
    d = _one_dim(x, dim, "index_select")
    idx = _index_tensor(x, index, "index_select", vector=True)
    if idx.ndim != 1:
        raise _dims.DimensionError(f"index_select: the index must be 1-D, got shape {tuple(idx.shape)}")
    _check_bounds(x._dev.ops, idx._data, x.shape[d], "index_select", d, x.shape)
    # The same index for every position off ``dim``: a gather whose index is an input (so
    # an index computed from the data is recomputed where a traced program replays).
    lined = idx.reshape(tuple(-1 if k == d else 1 for k in range(x.ndim)))
    full = lined.expand(x.shape[:d] + (idx.shape[0],) + x.shape[d + 1 :])
    return ops.GatherAlong.apply(x, full, args=(d, x.shape))


# -- sorting ---------------------------------------------------------------------
@public(method=True)
@number_as_vector()
def argsort(x: Tensor, dim: int = -1, descending: bool = False, stable: bool = False) -> Tensor:
    """The indices that sort ``x`` along ``dim``: with ``stable=True`` ties keep their order, else (on a
    CPU) they come in the order PyTorch's CPU sort leaves them (:mod:`tinygrad_attn.ops.tie_order`)."""
    return ops.Argsort.apply(x, args=(_one_dim(x, dim, "argsort"), bool(descending), bool(stable)))


@public(method=True)
@number_as_vector()
def sort(x: Tensor, dim: int = -1, descending: bool = False, stable: bool = False, *, axis: Any = None) -> Any:
    """``(values, indices)`` of ``x`` sorted along ``dim``; the values are differentiable.
    NumPy's ``axis=`` gives the values alone, as ``numpy.sort``."""
    sp = _dims.spelling("sort", None if axis is not None and dim == -1 else dim, axis=axis)  # (-1: the default)
    if x.ndim == 0:
        _dims.axes(x.shape, sp.dim, "sort")
        out = values_indices("sort", x.clone(), Tensor._wrap(x._dev.ops.zeros_like(x._data), x._dev).long())
    else:
        d = _one_dim(x, sp.dim, "sort")
        idx = argsort(x, dim=d, descending=descending, stable=stable)
        values = pointwise_result(ops.GatherAlong.apply(x, idx, args=(d, x.shape)), idx)  # (laid out as idx)
        out = values_indices("sort", values, idx)
    return out.values if sp.numpy else out


@public(method=True)
def topk(x: Tensor, k: int, dim: int = -1, largest: bool = True, sorted: bool = True) -> ValuesIndices:  # noqa: A002
    """The ``k`` largest (or smallest) entries along ``dim`` and their indices, largest first."""
    if isinstance(x, Tensor) and x.dtype == np.bool_:  # (PyTorch's RuntimeError, not a missing kernel's)
        raise RuntimeError(f"topk does not support bool dtypes on CPU (shape {tuple(x.shape)}); convert with .int()")
    k = _dims.as_int(k)
    if isinstance(x, Tensor) and x.ndim == 0 and k == 0:
        k = 1  # (PyTorch's topk of a 0-d tensor returns its one entry for k = 0 too)
    return _topk(x, k, dim, largest, sorted)


@number_as_vector()
def _topk(x: Tensor, k: int, dim: int = -1, largest: bool = True, sorted: bool = True) -> ValuesIndices:  # noqa: A002
    d = _one_dim(x, dim, "topk")
    if not 0 <= k <= x.shape[d]:
        raise InvalidArgumentError(
            f"topk: k={k} is out of range for dimension {d} of size {x.shape[d]} (shape {tuple(x.shape)})"
        )
    idx = ops.TopkIndices.apply(x, args=(d, k, bool(largest), bool(sorted)))
    return values_indices("topk", ops.GatherAlong.apply(x, idx, args=(d, x.shape)), idx)


_topk.__name__ = "topk"  # (the name its errors give)


# -- shape -----------------------------------------------------------------------
@public(method=True)
def flip(x: Tensor, *axes: Any, dims: Any = None) -> Tensor:
    """``x`` reversed along each of ``dims`` (``flip(x, (0, 1))``, ``x.flip(0, 1)``, ``x.flip(dims=[0])``)."""
    if dims is None:
        if not axes:  # (PyTorch's dims have no default: all of them would be NumPy's)
            raise TypeError('flip() missing 1 required positional arguments: "dims"')
        dims = tuple(axes[0]) if len(axes) == 1 and isinstance(axes[0], (tuple, list)) else axes
    axes = _dims.axes(x.shape, dims, "flip") or ()
    if len(set(axes)) != len(axes):
        raise InvalidArgumentError(f"flip: dims {tuple(dims)} name an axis more than once (shape {tuple(x.shape)})")
    if flips_innermost(x, axes):
        raise UnsupportedDtypeError(barebones_message("flip", scalar_type_name(x.dtype), x.dtype, tuple(x.shape)))
    from .index.indexing import any_step_getitem  # noqa: PLC0415 - (indexing imports this module's neighbours)

    return _new_memory(any_step_getitem(x, tuple(slice(None, None, -1) if i in axes else slice(None)
                                                 for i in range(x.ndim))), x)  # fmt: skip


@public(method=True)
def roll(x: Tensor, shifts: Sequence[int], dims: Any = None) -> Tensor:
    """Entries moved ``shifts`` places along ``dims``, wrapping around (flattened when None)."""
    for param, v in (("shifts", shifts), ("dims", dims)):  # (a bool or a leading one: PyTorch's TypeError)
        if isinstance(v, (bool, np.bool_)):
            refuse("roll", param, 1 if param == "shifts" else 2, "ints", v)
        if isinstance(v, (list, tuple)):
            ints("roll", param, (v,))
    if dims is None:
        return roll(x.reshape(-1), _dims.as_int(shifts), 0).reshape(x.shape)
    x0 = x
    shifts, dims = _dims.as_int(shifts), _dims.as_int(dims)
    shifts = (shifts,) if isinstance(shifts, int) else tuple(shifts)
    if not x.ndim:  # PyTorch: a 0-d tensor has no axis to roll along
        _dims.one(x.shape, dims if isinstance(dims, (int, np.integer)) else dims[0], "roll", scalar_ok=False)
    axes = _dims.axes(x.shape, dims, "roll", distinct=False)
    if len(shifts) != len(axes):
        raise InvalidArgumentError(f"roll: {len(shifts)} shifts for {len(axes)} dims; give one shift per dim")
    if not any(x.shape[d] and s % x.shape[d] for s, d in zip(shifts, axes)):  # (PyTorch's: a row-major copy)
        return x.clone(memory_format=contiguous_format)
    for s, d in zip(shifts, axes):
        n = x.shape[d]
        s = s % n if n else 0
        if s:
            lead = (slice(None),) * d
            x = cat([x[lead + (slice(n - s, n),)], x[lead + (slice(0, n - s),)]], d)
    return _new_memory(x, x0)


@public(function=False, method=True)
def repeat(x: Tensor, *sizes: Any) -> Tensor:
    """``x`` tiled ``sizes[i]`` times along each axis, as ``torch.Tensor.repeat`` (an
    expand of an interleaved new axis, then a reshape)."""
    if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)):
        sizes = tuple(sizes[0])
    sizes = tuple(int(s) for s in sizes)
    if len(sizes) < x.ndim:
        raise InvalidArgumentError(
            f"repeat: {len(sizes)} repeat counts for a tensor of {x.ndim} dimensions; give at least one per dim"
        )
    shape = (1,) * (len(sizes) - x.ndim) + x.shape
    inter = x.reshape(tuple(v for s in shape for v in (1, s)))  # (1, s0, 1, s1, ...)
    big = inter.expand(tuple(v for r, s in zip(sizes, shape) for v in (r, s)))  # (r0, s0, r1, s1, ...)
    return _new_memory(big.reshape(tuple(r * s for r, s in zip(sizes, shape))), x)


@public
def split(x: Tensor, split_size_or_sections: Any, dim: int = 0, *, axis: int | None = None) -> tuple[Tensor, ...]:
    """Pieces of ``split_size_or_sections`` along ``dim`` (the last may be smaller), or of
    each size in a list of sizes (PyTorch's ``int[]``: anything else is its ``TypeError``)."""
    if isinstance(split_size_or_sections, Tensor) and split_size_or_sections.numel() == 1:
        split_size_or_sections = int(
            split_size_or_sections
        )  # (a one-element tensor is a size, as Tensor.split reads it)
    if not _is_ints(split_size_or_sections):
        refuse("split_with_sizes", "split_sizes", 2, "ints", split_size_or_sections)
    d = _one_dim(x, _dims.alias(axis, None if dim == 0 and axis is not None else dim, "split"), "split")
    lead = (slice(None),) * d
    n = x.shape[d]
    if isinstance(split_size_or_sections, (int, np.integer)):
        step = int(split_size_or_sections)
        if step < 0 or step == 0 and n:  # (a size of 0 splits only an empty axis, into itself)
            raise InvalidArgumentError(f"split: the size must be positive (or 0 for an empty axis), got {step} "
                                       f"for dimension {d} of size {n}")  # fmt: skip
        bounds = [(i, builtins.min(i + step, n)) for i in range(0, n, step or 1)] or [(0, 0)]
    else:
        sizes = [int(s) for s in split_size_or_sections]
        if builtins.sum(sizes) != n:
            raise InvalidArgumentError(
                f"split: sizes {sizes} add up to {builtins.sum(sizes)}, not dimension {d}'s size {n}"
            )
        starts = np.cumsum([0] + sizes[:-1]).tolist()
        bounds = [(s, s + k) for s, k in zip(starts, sizes)]
        return _split_with_sizes(x, lead, bounds)
    return _split(x, lead, bounds)


def _pieces(x: Tensor, lead: tuple, bounds: Sequence[tuple[int, int]]) -> tuple[Tensor, ...]:
    """The views ``x[lead + (a:b,)]`` for each ``(a, b)`` of ``bounds``, outputs of one split."""
    return tuple(mark_multi_output_views([x[lead + (slice(a, b),)] for a, b in bounds], "Split"))


# (PyTorch's one node for all the pieces: split of a size, or of a list of sizes)
_split, _split_with_sizes = composite("split")(_pieces), composite("split_with_sizes")(_pieces)


@public(name="split", function=False, method=True)
def _split_method(self: Tensor, split_size: Any, dim: int = 0, *, axis: int | None = None) -> Any:
    """Pieces of ``split_size`` along ``dim`` (the last may be smaller), or with a list,
    one piece per size in it (``Tensor.split``: PyTorch names the size ``split_size`` there)."""
    return split(self, split_size, dim, axis=axis)


@public(method=True)
def chunk(input: Tensor, chunks: int, dim: int | None = None, *, axis: int | None = None) -> tuple[Tensor, ...]:  # noqa: A002
    """``chunks`` pieces along ``dim`` (0 by default; the last may be smaller), a tuple, as PyTorch's."""
    d = _dims.alias(axis, dim, "chunk")
    d, chunks = _one_dim(input, 0 if d is None else d, "chunk"), _dims.as_int(chunks)
    if not isinstance(chunks, (int, np.integer)) or chunks <= 0:
        raise InvalidArgumentError(
            f"chunk expects `chunks` to be greater than 0, got: {chunks} (shape {tuple(input.shape)})"
        )
    if not input.shape[d]:  # an empty axis: one empty piece, as PyTorch's
        return (input,)
    size = -(-input.shape[d] // chunks)
    lead = (slice(None),) * d
    return _split(input, lead, [(i, i + size) for i in range(0, input.shape[d], size)])


@public(method=True)
@composite("unbind")
def unbind(x: Tensor, dim: int = 0) -> tuple[Tensor, ...]:
    """The slices of ``x`` along ``dim``, that axis removed."""
    d = _one_dim(x, dim, "unbind")
    lead = (slice(None),) * d
    return tuple(mark_multi_output_views([x[lead + (i,)] for i in range(x.shape[d])], "Unbind"))


@public(aliases=("concatenate",))
def concat(tensors: Sequence[Tensor], dim: int = 0, *, axis: Any = None) -> Tensor:
    """Tensors joined along ``dim`` (the array API's name for :func:`cat`)."""
    return cat(tensors, dim if axis is None else axis)


@public(method=True)
def mm(a: Tensor, b: Tensor) -> Tensor:
    """The product of two matrices (2-D only, as ``torch.mm``)."""
    tensor_operand(a, "mm", "input", 0), tensor_operand(b, "mm", "mat2", 1)
    if a.ndim != 2 or b.ndim != 2:
        raise InvalidArgumentError(
            f"mm: needs two 2-D tensors, got shapes {tuple(a.shape)} and {tuple(b.shape)}; use matmul for batches"
        )
    return a @ b


@public(method=True)
def bmm(a: Tensor, b: Tensor) -> Tensor:
    """Batched product of ``(B, n, m)`` and ``(B, m, p)`` (3-D only, as ``torch.bmm``)."""
    tensor_operand(a, "bmm", "input", 0), tensor_operand(b, "bmm", "mat2", 1)
    if a.ndim != 3 or b.ndim != 3:
        raise (MissingAxisError if min(a.ndim, b.ndim) < 3 else InvalidArgumentError)(
            f"bmm: needs two 3-D tensors, got shapes {tuple(a.shape)} and {tuple(b.shape)}"
        )
    if a.shape[0] != b.shape[0]:
        raise InvalidArgumentError(f"bmm: batch sizes differ: {tuple(a.shape)} and {tuple(b.shape)}")
    return a @ b


@public(method=True, inplace=True)
def addmm(  # noqa: A002
    input: Tensor | float,
    mat1: Tensor | float,
    mat2: Tensor | float,
    *scalars_first: Any,
    beta: Any = 1,
    alpha: Any = 1,
) -> Tensor:
    """``beta * input + alpha * (mat1 @ mat2)``, ``input`` broadcast to the product's shape (and
    not read where ``beta`` is 0), as ``torch.addmm``: the bias-plus-product of GPT-2's ``Conv1D``."""
    input, mat1, mat2, beta, alpha = beta_first(
        "addmm", ("mat1", "mat2"), (input, mat1, mat2, *scalars_first), beta, alpha
    )
    prod = mm(mat1, mat2)
    same_dtype("addmm", prod, ("input", input))  # (PyTorch's kernel promotes none; the product's dtype first)
    return _plus_product("addmm", input, prod, beta, alpha)


@public(method=True, inplace=True)
def baddbmm(  # noqa: A002
    input: Tensor | float,
    batch1: Tensor | float,
    batch2: Tensor | float,
    *scalars_first: Any,
    beta: Any = 1,
    alpha: Any = 1,
) -> Tensor:
    """``beta * input + alpha * (batch1 @ batch2)`` over batches of matrices, as ``torch.baddbmm``
    (the scaled scores of some attention implementations: ``baddbmm(bias, q, k, alpha=1/sqrt(d))``)."""
    input, batch1, batch2, beta, alpha = beta_first(
        "baddbmm", ("batch1", "batch2"), (input, batch1, batch2, *scalars_first), beta, alpha
    )
    prod = bmm(batch1, batch2)
    same_dtype("baddbmm", prod, ("input", input))  # (PyTorch's kernel promotes none)
    return _plus_product("baddbmm", input, prod, beta, alpha)


def _plus_product(op: str, input: Any, prod: Tensor, beta: Any, alpha: Any) -> Tensor:  # noqa: A002
    shape = tuple(input.shape) if isinstance(input, Tensor) else ()
    try:
        fits = np.broadcast_shapes(shape, tuple(prod.shape)) == tuple(prod.shape)
    except ValueError:
        fits = False
    if not fits:
        raise RuntimeError(
            f"{op}: input of shape {shape} does not broadcast to the product's shape {tuple(prod.shape)}"
        )
    if prod.dtype.kind in "biu":  # (PyTorch's integer kernels take alpha and beta as the tensor's integers: 0.6 is 0)
        cut = bool if prod.dtype.kind == "b" else int
        alpha, beta = cut(alpha), cut(beta)
    scaled = prod if alpha == 1 else prod * alpha
    if beta == 0:  # (PyTorch ignores input then, NaN and inf included)
        return scaled
    return (input if beta == 1 else input * beta) + scaled


@public(method=True)
def dot(a: Tensor, b: Tensor) -> Tensor:
    """The inner product of two 1-D tensors."""
    tensor_operand(a, "dot", "input", 0), tensor_operand(b, "dot", "tensor", 1)
    if a.ndim != 1 or b.ndim != 1:
        raise InvalidArgumentError(f"dot: needs two 1-D tensors, got shapes {tuple(a.shape)} and {tuple(b.shape)}")
    return a @ b


def _sublist_equation(args: tuple) -> tuple[str, tuple]:
    """PyTorch's sublist form (operands each followed by a list of axis numbers 0-51 or
    ``...``, then the output's list, optional) as an equation and its operands."""

    def letters(sub: Any) -> str:
        if not isinstance(sub, (list, tuple)):
            raise TypeError(f"einsum(): a sublist must be a list of ints or Ellipsis, got {type(sub).__name__}")
        out = []
        for k in sub:
            if k is Ellipsis:
                out.append("...")
            elif isinstance(k, int) and 0 <= k < 52:
                out.append(string.ascii_letters[k])
            else:
                raise ValueError(
                    f"einsum(): subscript in subscript list is not within the valid range [0, 52), got {k!r}"
                )
        return "".join(out)

    operands, subs = args[0::2], args[1::2]
    tail = None
    if len(args) % 2:  # (the last one alone: the output's sublist)
        operands, tail = operands[:-1], args[-1]
    if tail is not None and isinstance(tail, Tensor) or len(subs) != len(operands):
        raise TypeError("einsum(): expected each operand followed by its sublist, then an optional output sublist")
    equation = ",".join(letters(s) for s in subs) + ("" if tail is None else "->" + letters(tail))
    return equation, tuple(operands)


def _parse_einsum(equation: str, operands: Sequence[Tensor]) -> tuple[list[str], str]:
    """The subscripts of each operand and of the output, ``...`` spelled out in letters
    the equation does not use (right-aligned, as broadcasting aligns axes)."""
    eq = equation.replace(" ", "")
    lhs, arrow, out = eq.partition("->")
    ins = lhs.split(",")
    if len(ins) != len(operands):
        raise InvalidArgumentError(f"einsum: {equation!r} names {len(ins)} operands, got {len(operands)}")
    spare = [c for c in string.ascii_letters if c not in eq]
    n_ell = builtins.max([t.ndim - len(s) + 3 for s, t in zip(ins, operands) if "..." in s], default=0)
    ell = "".join(spare[:n_ell])
    for i, (s, t) in enumerate(zip(ins, operands)):
        if s.count("...") > 1:
            raise InvalidArgumentError(f"einsum: subscripts {s!r} have more than one ellipsis (PyTorch allows one)")
        if "..." in s:
            k = t.ndim - len(s) + 3
            if k < 0:
                raise InvalidArgumentError(
                    f"einsum: subscripts {s!r} name more axes than the operand's shape {tuple(t.shape)} has"
                )
            s = ins[i] = s.replace("...", ell[n_ell - k :])
        if "." in s or len(s) != t.ndim:
            raise InvalidArgumentError(
                f"einsum: subscripts {s!r} name {len(s)} axes, the operand has shape {tuple(t.shape)}"
            )
    if arrow:
        out = out.replace("...", ell)
    else:  # implicit output: the broadcast axes, then the letters seen once, sorted
        letters = "".join(ins)
        out = ell + "".join(sorted(c for c in set(letters) if letters.count(c) == 1 and c not in ell))
    return ins, out


def _broadcast_shared(a: Tensor, sa: str, b: Tensor, sb: str) -> tuple[Tensor, Tensor]:
    """A letter of size 1 in one operand and n in the other is expanded to n (broadcasting)."""
    na, nb = dict(zip(sa, a.shape)), dict(zip(sb, b.shape))
    for c in sa:
        if c in sb and na[c] != nb[c]:
            if na[c] != 1 and nb[c] != 1:
                raise InvalidArgumentError(
                    f"einsum: subscript {c!r} has size {na[c]} in one operand and {nb[c]} in the other"
                )
            na[c] = nb[c] = builtins.max(na[c], nb[c])
    return a.expand(tuple(na[c] for c in sa)), b.expand(tuple(nb[c] for c in sb))


def _contract(a: Tensor, sa: str, b: Tensor, sb: str, keep: str) -> tuple[Tensor, str]:
    """``a`` and ``b`` multiplied, summed over the letters not in ``keep``, as one matmul:
    batch letters (both, kept), the free letters of each, and the contracted ones."""
    a, b = _broadcast_shared(a, sa, b, sb)
    batch = [c for c in sa if c in sb and c in keep]
    summed = [c for c in sa if c in sb and c not in keep]
    fa = [c for c in sa if c not in sb]
    fb = [c for c in sb if c not in sa]
    size = {**dict(zip(sa, a.shape)), **dict(zip(sb, b.shape))}
    if not summed and a.dtype != b.dtype:  # (PyTorch multiplies where nothing is summed: the dtypes promote)
        a, b = a.astype(np.result_type(a.dtype, b.dtype)), b.astype(np.result_type(a.dtype, b.dtype))
    pa = a.permute([sa.index(c) for c in batch + fa + summed])
    pb = b.permute([sb.index(c) for c in batch + summed + fb])
    nb = [size[c] for c in batch]
    ma, k, nb_free = math.prod(size[c] for c in fa), math.prod(size[c] for c in summed), math.prod(size[c] for c in fb)
    out = pa.reshape(*nb, ma, k) @ pb.reshape(*nb, k, nb_free)  # (batch..., free_a, free_b)
    return out.reshape((*nb, *(size[c] for c in fa), *(size[c] for c in fb))), "".join(batch + fa + fb)


@public
def einsum(equation: Any = None, *operands: Any) -> Tensor:
    """Einstein summation, as ``torch.einsum`` (``"bhqd,bhkd->bhqk"``), from matmuls.

    Operands are contracted left to right, each pair as one (batched) matmul after summing
    out the letters that no later operand or the output needs. ``...`` stands for the
    broadcast axes; a letter repeated within one operand takes its diagonal.
    """
    if not operands:
        raise ValueError(
            "einsum(): must specify the equation string and at least one operand, "
            "or at least one operand and its subscripts list"
        )
    if isinstance(equation, Tensor):  # PyTorch's sublist form: einsum(a, [0, 1], b, [1, 2], [0, 2])
        equation, operands = _sublist_equation((equation, *operands))
    elif not isinstance(equation, str):
        raise TypeError(f"einsum(): argument 'equation' must be str, not {type(equation).__name__}")
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    for i, t in enumerate(operands):
        if not isinstance(t, Tensor):
            raise TypeError(f"einsum(): operand {i} must be Tensor, not {type(t).__name__}")
    ins, out = _parse_einsum(equation, operands)
    operands = list(operands)
    for i, s in enumerate(ins):  # a letter repeated within one operand: its diagonal ("ii->i", "bii->bi")
        while len(set(s)) != len(s):
            c = next(c for c in s if s.count(c) > 1)
            a, b = s.index(c), s.index(c, s.index(c) + 1)
            if operands[i].shape[a] != operands[i].shape[b]:
                raise InvalidArgumentError(f"einsum: subscript {c!r} repeats over axes of sizes {operands[i].shape[a]} and "
                                 f"{operands[i].shape[b]} in operand {i} (shape {tuple(operands[i].shape)})")  # fmt: skip
            operands[i] = operands[i].diagonal(0, a, b)  # (the diagonal is the new last axis)
            s = ins[i] = s[:a] + s[a + 1 : b] + s[b + 1 :] + c
    cur, sc = operands[0], ins[0]
    for i in range(len(ins)):
        later = out + "".join(ins[i + 1 :])
        if i > 0:
            cur, sc = _contract(cur, sc, operands[i], ins[i], later)
        gone = [j for j, c in enumerate(sc) if c not in later]
        if gone:  # letters only this partial product has: sum them out now
            cur = cur.sum(tuple(gone))
            sc = "".join(c for c in sc if c in later)
    for c in out:
        if c not in sc:
            raise InvalidArgumentError(f"einsum: output subscript {c!r} is in no operand of {equation!r}")
    return cur.permute([sc.index(c) for c in out]) if len(out) > 1 else cur


@public(method=True, inplace_function=True, special=("round",))
def round(x: Tensor, *, decimals: int | None = None) -> Tensor:  # noqa: A001
    """Round half to even, as PyTorch (and NumPy) do; ``decimals`` places (floating tensors
    only, as PyTorch's ``round.decimals``; without it, integers come back as they are)."""
    from .elementwise.tensor_torch import _rounded  # noqa: PLC0415 - (the one rule for integer and bool inputs)

    if decimals is not None:
        check_dtype("round", x, "floating")

    if not _rounded(x, "round"):
        return x.clone()
    if decimals:
        scale = 10.0**decimals
        return ops.Round.apply(x * scale) / scale
    return ops.Round.apply(x)


def _tri(x: Tensor, k: int, lower: bool) -> Tensor:
    if x.ndim < 2:
        raise InvalidArgumentError(
            f"{'tril' if lower else 'triu'}: needs at least 2 dimensions, got shape {tuple(x.shape)}"
        )
    n, m = x.shape[-2:]
    keep = np.tri(n, m, k, dtype=bool) if lower else ~np.tri(n, m, k - 1, dtype=bool)
    zero = x.dtype.type(0).item()  # a zero of x's own kind: bool and int tensors stay so
    return where(Tensor(keep, device=x._dev), x, zero)


@public(method=True, inplace=True)
def tril(input: Tensor, diagonal: int = 0, *, k: int | None = None) -> Tensor:  # noqa: A002
    """The lower triangle of the last two axes; above ``diagonal`` (``k``) becomes 0."""
    return row_major_result(_tri(input, diagonal if k is None else k, True))


@public(method=True, inplace=True)
def triu(input: Tensor, diagonal: int = 0, *, k: int | None = None) -> Tensor:  # noqa: A002
    """The upper triangle of the last two axes; below ``diagonal`` (``k``) becomes 0."""
    return row_major_result(_tri(input, diagonal if k is None else k, False))


@public(function=False, method=True)
@public
def equal(a: Tensor, b: Tensor) -> bool:
    """Whether ``a`` and ``b`` have one shape and the same elements."""
    tensor_operand(a, "equal", "input", 0), tensor_operand(b, "equal", "other", 1)
    return a.shape == b.shape and bool(
        np.array_equal(a._read("equal"), b._read("equal"))
    )  # (not numpy(): bfloat16 has none)


@public(method=True)
def outer(a: Tensor, b: Tensor) -> Tensor:
    """The outer product of two 1-D tensors."""
    tensor_operand(a, "outer", "input", 0), tensor_operand(b, "outer", "vec2", 1)
    if a.ndim != 1 or b.ndim != 1:
        raise InvalidArgumentError(f"outer: needs two 1-D tensors, got shapes {tuple(a.shape)} and {tuple(b.shape)}")
    return a.reshape(-1, 1) * b.reshape(1, -1)


@public(method=True, inplace_function=True, special=("log1p",))
def log1p(x: Tensor) -> Tensor:
    """Elementwise ``log(1 + x)``, exact for tiny ``x`` (where ``1 + x`` rounds to 1)."""
    return ops.Log1p.apply(as_float(x))


@public(method=True, inplace_function=True, special=("expm1",))
def expm1(x: Tensor) -> Tensor:
    """Elementwise ``exp(x) - 1``, exact for tiny ``x``."""
    return ops.Expm1.apply(as_float(x))


def _elementwise_test(x: Tensor, name: str) -> Tensor:
    # (an op, not an array of the moment: a traced program computes the mask again at each replay)
    return {"isnan": IsNan, "isinf": IsInf, "isfinite": IsFinite}[name].apply(x)


@public(method=True)
def isnan(x: Tensor) -> Tensor:
    """Where ``x`` is NaN (a boolean tensor, no gradient)."""
    return _elementwise_test(x, "isnan")


@public(method=True)
def isinf(x: Tensor) -> Tensor:
    """Where ``x`` is infinite (a boolean tensor, no gradient)."""
    return _elementwise_test(x, "isinf")


@public(method=True)
def isfinite(x: Tensor) -> Tensor:
    """Where ``x`` is neither NaN nor infinite (a boolean tensor, no gradient)."""
    return _elementwise_test(x, "isfinite")


@public(function=False, method=True)
def repeat_interleave(
    x: Tensor, repeats: Tensor | int, dim: int | None = None, *, output_size: int | None = None
) -> Tensor:
    """Each entry repeated ``repeats`` times along ``dim`` (the flattened tensor when None):
    a gather by the index ``[0, 0, 1, 1, ...]``, so gradients sum over the copies. ``output_size``
    (PyTorch's hint of the result's length along ``dim``) must be that length when given."""
    if isinstance(repeats, (float, np.floating)):
        raise TypeError(f"repeat_interleave(): repeats must be an int or an integer tensor, not float {repeats}")
    if isinstance(repeats, Tensor) and repeats.dtype.kind not in "iu":  # (PyTorch has a kernel for integers only)
        raise NotImplementedError(
            f"repeat_interleave: repeats of dtype {repeats.dtype} are not supported; give integers"
        )
    if dim is None:
        x, dim = x.reshape(-1), 0
    d = _one_dim(x, dim, "repeat_interleave")
    if isinstance(repeats, Tensor) and (x._dev.meta or repeats._dev.meta):  # (no counts to read: the length given)
        if output_size is None:
            raise RuntimeError("cannot repeat_interleave a meta tensor without output_size")
        return unchecked(index_select)(x, d, Tensor.zeros(int(output_size), dtype=np.int64, device=x._dev))
    counts = repeats.detach().numpy() if isinstance(repeats, Tensor) else repeats
    if isinstance(repeats, Tensor) and repeats.ndim > 1:
        raise RuntimeError(
            f"repeat_interleave: repeats must be 0-dim or 1-dim tensor, got shape {tuple(repeats.shape)}"
        )
    if np.any(np.asarray(counts) < 0):
        raise RuntimeError(f"repeat_interleave: Repeats must be non-negative, got {counts}")
    index = np.repeat(np.arange(x.shape[d]), counts)
    if output_size is not None and int(output_size) != len(index):
        raise RuntimeError(
            f"repeat_interleave: output_size={output_size} but the repeats {counts} give {len(index)} entries"
        )
    # (every dtype, as PyTorch's: its index_select refuses uint16, uint32 and uint64, its repeat_interleave does not)
    return unchecked(index_select)(x, d, Tensor(index, device=x._dev))


@public(name="repeat_interleave")
def _repeat_interleave_function(
    input: Tensor,  # noqa: A002 - PyTorch's name
    repeats: Tensor | int = ABSENT,
    dim: int | None = None,
    *,
    output_size: int | None = None,
) -> Tensor:
    """``input.repeat_interleave(repeats, dim)``; with ``input`` alone, PyTorch's ``repeat_interleave(repeats)``:
    each index ``i`` of the 1-D integer tensor repeated ``input[i]`` times, in its dtype
    (``repeat_interleave(tensor([1, 2]))`` is ``tensor([0, 1, 1])``)."""
    if repeats is not ABSENT:
        return repeat_interleave(input, repeats, dim, output_size=output_size)
    counts = input
    if counts.dtype not in (np.int32, np.int64):  # (PyTorch's kernel is for its index dtypes only)
        raise UnsupportedDtypeError(
            f"\"repeat_interleave_cpu\" not implemented for '{scalar_type_name(counts.dtype)}' "
            f"(repeat_interleave(repeats): the repeats must be int32 or int64)"
        )
    if counts.ndim != 1:
        raise RuntimeError(f"repeat_interleave only accept 1D vector as repeat, got shape {tuple(counts.shape)}")
    n = counts.detach().numpy()
    if np.any(n < 0):
        raise RuntimeError(f"repeat_interleave: repeats can not be negative, got {n}")
    index = np.repeat(np.arange(len(n), dtype=n.dtype), n)
    if output_size is not None and int(output_size) != len(index):
        raise RuntimeError(
            f"repeat_interleave: output_size={output_size} but the repeats {n} give {len(index)} entries"
        )
    return Tensor(index, device=counts._dev)
