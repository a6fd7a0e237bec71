"""PyTorch's functions that arrange tensors: stacking and splitting (``hstack vstack dstack
column_stack tensor_split``), the ``atleast_*d`` promotions, rotations and flips, tiling,
broadcasting helpers, picks by index (``take take_along_dim index_put``), the structured
matrices (``diag_embed diagflat block_diag vander``), the index grids (``tril_indices``,
``cartesian_prod``, ``combinations``) and differences (``diff``).

Each is a ``tga.`` free function and, where PyTorch has one, a :class:`Tensor` method
(the table :data:`METHODS`). All are composites of the views, ``cat`` and the gather and
scatter ops, so each has gradients of every order on every device.
"""

from __future__ import annotations

import builtins
import itertools
from collections.abc import Sequence
from typing import Any

import numpy as np

from ...engine.arguments import _is_int, is_int_sequence
from ...engine.barebones import unchecked
from ...engine.declare import public
from ...engine.layout import pointwise_result
from ...functional.checks import broadcast_of
from ...functional.checks import tensor_arg as _tensor
from ...ops.saved import saved_for_backward
from ...runtime.meta_stand_ins import refuse_without_kernel, stand_in
from .._tensor import Size, Tensor, cat, stack, where
from ..dtypes import UnsupportedDtypeError, scalar_type_name
from . import dims
from .dims import int_list as _int_list


def _tensors(tensors: Any, op: str) -> list[Tensor]:
    if isinstance(tensors, Tensor):
        return [tensors]
    out = list(tensors)
    if not out:
        raise RuntimeError(f"{op}: expects a non-empty sequence of tensors")
    return [_tensor(t, op) for t in out]


# -- promotions and stacking ----------------------------------------------------------
def _promoted(n: int, ts: Sequence[Tensor], op: str) -> list[Tensor]:
    """Each tensor with at least ``n`` dimensions: 0-d -> ``(1,) * n``; 1-D ``(k,)`` -> ``(1, k)``
    (``n = 2``) or ``(1, k, 1)`` (``n = 3``); 2-D ``(a, b)`` -> ``(a, b, 1)``."""
    out = []
    for t in ts:
        t = _tensor(t, op)
        # (PyTorch's steps: a 0-d tensor reshaped, ViewBackward0; others unsqueezed, UnsqueezeBackward0 each)
        if t.ndim == 0 and n:
            t = t.reshape((1,) * n)
        elif t.ndim < n:
            if t.ndim == 1:
                t = t.unsqueeze(0)
            if n == 3:
                t = t.unsqueeze(-1)
        out.append(t)
    return out


def _atleast(n: int, op: str, tensors: tuple) -> Any:
    # one tensor gives a tensor; several (or one sequence of them) a tuple
    if len(tensors) == 1 and isinstance(tensors[0], Tensor):
        return _promoted(n, tensors, op)[0]
    seq = tensors[0] if len(tensors) == 1 else tensors
    return tuple(_promoted(n, seq, op))


@public
def atleast_1d(*tensors: Any) -> Any:
    """Each tensor with at least 1 dimension (a 0-d one becomes ``(1,)``)."""
    return _atleast(1, "atleast_1d", tensors)


@public
def atleast_2d(*tensors: Any) -> Any:
    """Each tensor with at least 2 dimensions (``(k,)`` becomes ``(1, k)``)."""
    return _atleast(2, "atleast_2d", tensors)


@public
def atleast_3d(*tensors: Any) -> Any:
    """Each tensor with at least 3 dimensions (``(k,)`` becomes ``(1, k, 1)``, ``(a, b)`` ``(a, b, 1)``)."""
    return _atleast(3, "atleast_3d", tensors)


@public
def hstack(tensors: Sequence[Tensor]) -> Tensor:
    """Concatenation along the columns: dimension 1, or 0 for 1-D tensors."""
    ts = _promoted(1, _tensors(tensors, "hstack"), "hstack")
    return cat(ts, 0 if ts[0].ndim == 1 else 1)


@public(aliases=("row_stack",))
def vstack(tensors: Sequence[Tensor]) -> Tensor:
    """Concatenation along the rows (dimension 0) of the tensors made at least 2-D."""
    return cat(_promoted(2, _tensors(tensors, "vstack"), "vstack"), 0)


row_stack = vstack


@public
def dstack(tensors: Sequence[Tensor]) -> Tensor:
    """Concatenation along dimension 2 of the tensors made at least 3-D."""
    return cat(_promoted(3, _tensors(tensors, "dstack"), "dstack"), 2)


@public
def column_stack(tensors: Sequence[Tensor]) -> Tensor:
    """The tensors as columns: 0-d and 1-D ones become ``(n, 1)``, then concatenated along dimension 1."""
    ts = [t.reshape(t.numel(), 1) if t.ndim <= 1 else t for t in _tensors(tensors, "column_stack")]
    return cat(ts, 1)


# -- splitting -------------------------------------------------------------------------
@public(method=True)
def tensor_split(input: Tensor, indices_or_sections: Tensor | Sequence[int], dim: int = 0) -> tuple[Tensor, ...]:  # noqa: A002
    """``input`` split along ``dim`` into ``n`` nearly equal parts (the first ``size % n`` one longer),
    or at each index of a list of indices (views, as PyTorch's)."""
    x = _tensor(input, "tensor_split")
    d = dims.one(x.shape, dim, "tensor_split", scalar_ok=False)
    n = x.shape[d]
    ios = indices_or_sections
    if isinstance(ios, Tensor):
        if ios.ndim > 1 or ios.dtype.kind not in "iu":
            raise RuntimeError("tensor_split: indices_or_sections as a tensor must be a 0-d or 1-D integer tensor")
        ios = ios.item() if ios.ndim == 0 else [int(v) for v in ios.tolist()]
    if isinstance(ios, (int, np.integer)):
        k = int(ios)
        if k <= 0:
            raise RuntimeError(f"tensor_split: number of sections must be larger than 0, got {k}")
        q, r = divmod(n, k)
        cuts = list(itertools.accumulate([q + 1] * r + [q] * (k - r)))[:-1]
    else:
        cuts = [int(i) for i in ios]
    bounds = [0, *cuts, n]
    lead = (slice(None),) * d
    # (each piece is x[a:b] as Python reads it: a negative index counts from the end, as PyTorch's)
    return tuple(x[lead + (slice(a, b),)] for a, b in zip(bounds[:-1], bounds[1:]))


def _sections(op: str, ios: Any) -> None:
    """PyTorch's two overloads, read before the input's rank: an int of sections, or a list of int indices;
    never a float, a string, None, a bool or a tensor of several entries (``TypeError``)."""
    if not (is_int_sequence(ios) if isinstance(ios, (list, tuple)) else _is_int(ios)):
        raise TypeError(f"{op}(): indices_or_sections must be an int or a list of ints, got {type(ios).__name__}")


def _split_on(op: str, d: int, x: Tensor, ios: Any) -> tuple[Tensor, ...]:
    if isinstance(ios, str) or not isinstance(ios, (int, np.integer, Sequence, Tensor)):
        raise TypeError(f"torch.{op}: indices_or_sections must be an int or a sequence of ints, got {ios!r}")
    if isinstance(ios, (int, np.integer)) and (int(ios) == 0 or x.shape[d] % int(ios)):
        raise RuntimeError(f"torch.{op} attempted to split along dimension {d}, but the size of the dimension "
                           f"{x.shape[d]} is not divisible by the split_size {ios}!")  # fmt: skip
    return tensor_split(x, ios, d)


@public(method=True)
def hsplit(input: Tensor, indices_or_sections: Any, *more: int) -> tuple[Tensor, ...]:  # noqa: A002
    """:func:`tensor_split` along the columns (dimension 1, or 0 of a 1-D tensor), into equal parts
    (``x.hsplit(1, 2)``: the indices as varargs, as PyTorch's)."""
    _sections("hsplit", indices_or_sections)
    indices_or_sections = dims.int_list(indices_or_sections, more, "hsplit")
    x = _tensor(input, "hsplit")
    if x.ndim == 0:
        raise RuntimeError(
            "torch.hsplit requires a tensor with at least 1 dimension, but got a tensor with 0 dimensions!"
        )
    return _split_on("hsplit", 0 if x.ndim == 1 else 1, x, indices_or_sections)


@public(method=True)
def vsplit(input: Tensor, indices_or_sections: Any, *more: int) -> tuple[Tensor, ...]:  # noqa: A002
    """:func:`tensor_split` along dimension 0 of a tensor of 2 or more dimensions (indices as varargs too)."""
    _sections("vsplit", indices_or_sections)
    indices_or_sections = dims.int_list(indices_or_sections, more, "vsplit")
    x = _tensor(input, "vsplit")
    if x.ndim < 2:
        raise RuntimeError(f"torch.vsplit requires a tensor with at least 2 dimension, but got a tensor with {x.ndim} dimensions!")  # fmt: skip
    return _split_on("vsplit", 0, x, indices_or_sections)


@public(method=True)
def dsplit(input: Tensor, indices_or_sections: Any, *more: int) -> tuple[Tensor, ...]:  # noqa: A002
    """:func:`tensor_split` along dimension 2 of a tensor of 3 or more dimensions (indices as varargs too)."""
    _sections("dsplit", indices_or_sections)
    indices_or_sections = dims.int_list(indices_or_sections, more, "dsplit")
    x = _tensor(input, "dsplit")
    if x.ndim < 3:
        raise RuntimeError(f"torch.dsplit requires a tensor with at least 3 dimension, but got a tensor with {x.ndim} dimensions!")  # fmt: skip
    return _split_on("dsplit", 2, x, indices_or_sections)


@public(method=True)
def split_with_sizes(input: Tensor, split_sizes: tuple[int, ...], dim: int = 0) -> tuple[Tensor, ...]:  # noqa: A002
    """``input`` in pieces of the given sizes along ``dim`` (they must add up to its length)."""
    from ..tensor_functions import split  # noqa: PLC0415

    return split(_tensor(input, "split_with_sizes"), list(split_sizes), dim)


def _unmarked(x: Tensor, d: int, pieces: Sequence[Tensor]) -> tuple[Tensor, ...]:
    """The same pieces of ``x`` along ``d`` as plain slices, not marked as one split's outputs:
    PyTorch's ``unsafe_*`` splits, whose pieces may each be changed in place."""
    lead, start, out = (slice(None),) * d, 0, []
    for p in pieces:
        n = p.shape[d] if p.ndim else 1
        out.append(x[lead + (slice(start, start + n),)])
        start += n
    return tuple(out)


@public(method=True)
def unsafe_split(input: Tensor, split_size: int, dim: int = 0) -> tuple[Tensor, ...]:  # noqa: A002
    """:func:`split` whose pieces may be changed in place (``torch.unsafe_split``)."""
    from ..tensor_functions import split  # noqa: PLC0415

    x = _tensor(input, "unsafe_split")
    d = dims.one(x.shape, dim, "unsafe_split", scalar_ok=False)
    return _unmarked(x, d, split(x, split_size, d))


@public(method=True)
def unsafe_split_with_sizes(input: Tensor, split_sizes: tuple[int, ...], dim: int = 0) -> tuple[Tensor, ...]:  # noqa: A002
    """:func:`split_with_sizes` whose pieces may be changed in place."""
    x = _tensor(input, "unsafe_split_with_sizes")
    d = dims.one(x.shape, dim, "unsafe_split_with_sizes", scalar_ok=False)
    return _unmarked(x, d, split_with_sizes(x, split_sizes, d))


@public(method=True)
def unsafe_chunk(input: Tensor, chunks: int, dim: int = 0) -> tuple[Tensor, ...]:  # noqa: A002
    """``chunk`` whose pieces may be changed in place (``torch.unsafe_chunk``)."""
    from ..tensor_functions import chunk  # noqa: PLC0415

    x = _tensor(input, "unsafe_chunk")
    d = dims.one(x.shape, dim, "unsafe_chunk", scalar_ok=False)
    return _unmarked(x, d, chunk(x, chunks, d))


@public(method=True)
def narrow_copy(input: Tensor, dim: int, start: int, length: int) -> Tensor:  # noqa: A002
    """``input.narrow(dim, start, length)`` in memory of its own (not a view)."""
    x = _tensor(input, "narrow_copy")
    if isinstance(dim, int) and dim >= builtins.max(x.ndim, 1):  # (PyTorch's kernel checks this one itself)
        raise RuntimeError(f"narrow_copy: expected dim < {x.ndim}, got dim {dim} (shape {tuple(x.shape)})")
    return x.narrow(dim, start, length).clone()


# -- writing into a view's positions ---------------------------------------------------
def _scattered_into(op: str, input: Tensor, src: Any, view: Any) -> Tensor:  # noqa: A002
    """A copy of ``input`` with ``src`` written where ``view(input)`` would read: the view is taken
    of the grid of flat positions, so any view (a diagonal, a selection, a strided slice) works,
    and the gradient is ``index_put``'s (``src``'s the view of it; ``input``'s zero there)."""
    x, v = _tensor(input, op), _tensor(src, op)
    grid = Tensor(np.arange(x.numel(), dtype=np.int64).reshape(x.shape), device=x._dev)
    pos = view(grid)
    if tuple(v.shape) != tuple(pos.shape):
        raise RuntimeError(f"{op}: expected src to have a size equal to the slice of self. src size = "
                           f"{list(v.shape)}, slice size = {list(pos.shape)} (self {list(x.shape)})")  # fmt: skip
    v = v if v.dtype == x.dtype else v.astype(x.dtype)
    # (PyTorch writes these for every dtype, uint16, uint32 and uint64 too, which its index_put refuses)
    out = unchecked(index_put)(x.reshape(-1), (pos.reshape(-1),), v.reshape(-1)).reshape(x.shape)
    return pointwise_result(out, x)  # (PyTorch's: a copy of x in x's layout, written into)


@public(method=True)
def diagonal_scatter(input: Tensor, src: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:  # noqa: A002
    """A copy of ``input`` whose diagonal ``input.diagonal(offset, dim1, dim2)`` is ``src``."""
    return _scattered_into("diagonal_scatter", input, src, lambda g: g.diagonal(offset, dim1, dim2))


@public(method=True)
def as_strided_scatter(input: Tensor, src: Tensor, size: Sequence[int], stride: Sequence[int],  # noqa: A002
                       storage_offset: int | None = None) -> Tensor:  # fmt: skip
    """A copy of ``input`` (in C order) whose view ``as_strided(size, stride, storage_offset)`` is
    ``src``, as PyTorch's: the view is taken of the copy's memory, from its start by default."""
    return _scattered_into("as_strided_scatter", input, src, lambda g: g.as_strided(size, stride, storage_offset))


@public(method=True)
def select_scatter(input: Tensor, src: Tensor, dim: int, index: int) -> Tensor:  # noqa: A002
    """A copy of ``input`` whose slice ``input.select(dim, index)`` is ``src``."""
    return _scattered_into("select_scatter", input, src, lambda g: g.select(dim, index))


@public(method=True)
def slice_scatter(input: Tensor, src: Tensor, dim: int = 0, start: int | None = None, end: int | None = None,  # noqa: A002
                  step: int = 1) -> Tensor:  # fmt: skip
    """A copy of ``input`` whose slice ``start:end:step`` along ``dim`` is ``src``."""
    x = _tensor(input, "slice_scatter")
    d = dims.one(x.shape, dim, "slice_scatter", scalar_ok=False)
    if step <= 0:
        raise RuntimeError(f"slice_scatter: slice step must be positive, got {step}")
    key = (slice(None),) * d + (slice(start, end, step),)
    return _scattered_into("slice_scatter", x, src, lambda g: g[key])


@public
def unravel_index(indices: Any, shape: Any) -> tuple[Tensor, ...]:
    """The coordinates in an array of ``shape`` of each flat (row-major) index, one int64 tensor per
    axis, as ``torch.unravel_index`` (which wraps indices outside the array around it)."""
    if not isinstance(indices, Tensor):
        raise TypeError(f"unravel_index: expected 'indices' to be a tensor, got {type(indices).__name__}")
    if indices.dtype.kind not in "iu":
        raise TypeError(f"expected 'indices' to be integer dtype, but got {indices.dtype}")
    if not isinstance(shape, (int, np.integer, Sequence)) or isinstance(shape, str):
        raise TypeError(
            f"unravel_index: expected 'shape' to be int or sequence of ints, but got {type(shape).__name__}"
        )
    dims_ = (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(int(s) for s in shape)
    if any(s < 0 for s in dims_):
        raise ValueError(f"'shape' cannot have negative values, but got {dims_}")
    if any(s == 0 for s in dims_):
        raise RuntimeError(f"unravel_index: shape {dims_} has a zero side (division by zero)")
    idx = indices.detach().long()
    out, stride = [], 1
    for s in reversed(dims_):
        out.append((idx // stride) % s)  # (floor division and modulo, as PyTorch's: negatives wrap)
        stride *= s
    return tuple(reversed(out))


# -- rotations, flips, tiles -----------------------------------------------------------
@public(method=True)
def rot90(input: Tensor, k: int = 1, dims: Sequence[int] = (0, 1)) -> Tensor:  # noqa: A002
    """``input`` rotated by ``k`` quarter turns in the plane of ``dims``, from the first axis toward the second."""
    x = _tensor(input, "rot90")
    if len(dims) != 2:
        raise RuntimeError(f"rot90: expected total rotation dims == 2, but got dims = {len(dims)}")
    if x.ndim < 2:
        raise RuntimeError(f"rot90: expected total dims >= 2, but got total dims = {x.ndim}")
    d0, d1 = (dims_one(x, d, "rot90") for d in dims)
    if d0 == d1:
        raise RuntimeError(f"rot90: expected rotation dims to be different, but got dim0 = {d0} and dim1 = {d1}")
    k %= 4
    if k == 1:
        return x.flip(d1).transpose(d0, d1)
    if k == 2:
        return x.flip(d0, d1)
    if k == 3:
        return x.flip(d0).transpose(d0, d1)
    return x.clone()


def dims_one(x: Tensor, d: int, op: str) -> int:
    return dims.one(x.shape, d, op, scalar_ok=False)


@public(method=True)
def flipud(input: Tensor) -> Tensor:  # noqa: A002
    """``input`` upside down (reversed along dimension 0)."""
    x = _tensor(input, "flipud")
    if x.ndim < 1:
        raise RuntimeError("flipud: input must be >= 1-d.")
    return x.flip(0)


@public(method=True)
def fliplr(input: Tensor) -> Tensor:  # noqa: A002
    """``input`` mirrored left to right (reversed along dimension 1)."""
    x = _tensor(input, "fliplr")
    if x.ndim < 2:
        raise RuntimeError("fliplr: input must be >= 2-d.")
    return x.flip(1)


@public(method=True)
def tile(input: Tensor, dims: Sequence[int], *more: int) -> Tensor:  # noqa: A002
    """``input`` repeated ``dims[i]`` times along each axis; a shorter ``dims`` is padded with ones in front
    (``x.tile(2, 1)``: varargs, as PyTorch's)."""
    dims = _int_list(dims, more, "tile")
    x = _tensor(input, "tile")
    reps = tuple(int(r) for r in ((dims,) if isinstance(dims, (int, np.integer)) else dims))
    if len(reps) < x.ndim:
        reps = (1,) * (x.ndim - len(reps)) + reps
    return x.reshape((1,) * (len(reps) - x.ndim) + x.shape).repeat(reps)


@public(method=True)
def ravel(input: Tensor) -> Tensor:  # noqa: A002
    """``input`` as a 1-D tensor (a view where it is contiguous)."""
    return _tensor(input, "ravel").reshape(-1)


@public
def expand_copy(input: Tensor, size: tuple[int, ...], *, implicit: bool = False) -> Tensor:  # noqa: A002
    """:meth:`Tensor.expand` as new memory."""
    return _tensor(input, "expand_copy").expand(size).clone()


@public(method=True)
def msort(input: Tensor) -> Tensor:  # noqa: A002
    """``input`` sorted along dimension 0 (the values of ``sort(input, 0)``)."""
    return _tensor(input, "msort").sort(0)[0]


@public(method=True)
def argwhere(input: Tensor) -> Tensor:  # noqa: A002
    """The indices of the non-zero entries, one row each (``nonzero(input)``)."""
    return _tensor(input, "argwhere").nonzero()


# -- broadcasting ----------------------------------------------------------------------
@public
def broadcast_shapes(*shapes: Any) -> Size:
    """The shape the given shapes broadcast to, read as PyTorch's reads them: an int is a 1-D shape,
    ``None`` no shape; anything but a sequence (a tensor, a float) is its ``RuntimeError``, a negative
    size its ``ValueError``, sizes that do not broadcast its ``RuntimeError``."""
    seqs = [(s,) if isinstance(s, (int, np.integer)) else s for s in shapes if s is not None]
    for s in seqs:
        if not isinstance(s, Sequence):
            raise RuntimeError(
                f"broadcast_shapes: Input shapes should be of type ints, a tuple of ints, or a list of ints, got {s}"
            )
    common: list[Any] = [1] * builtins.max((len(s) for s in seqs), default=0)
    for at, s in enumerate(seqs):
        for i in range(-1, -1 - len(s), -1):
            if s[i] == common[i]:
                continue
            if common[i] == 1:
                if s[i] < 0:
                    raise ValueError(
                        f"broadcast_shapes: Attempting to broadcast a dimension with negative length! ({s})"
                    )
                common[i] = s[i]
            if s[i] != 1 and common[i] != s[i]:
                raise RuntimeError(
                    f"broadcast_shapes: Attempting to broadcast a dimension of length {s[i]} at {i}! Mismatching "
                    f"argument at index {at} had {s}; but expected shape should be broadcastable to {common}"
                )
    for at, v in enumerate(common):
        if not _is_int(v):
            raise TypeError(f"broadcast_shapes: a size must be an int (item {at} of {common} is {type(v).__name__!r})")
    return Size(int(v) for v in common)


@public
def broadcast_tensors(*tensors: Tensor) -> tuple[Tensor, ...]:
    """The tensors expanded to their common shape (views)."""
    ts = [_tensor(t, "broadcast_tensors") for t in tensors]
    shape = broadcast_shapes(*(t.shape for t in ts))
    return tuple(t.expand(shape) for t in ts)


# -- picks by index --------------------------------------------------------------------
def _long_index(index: Any, x: Tensor, op: str) -> Tensor:
    idx = index if isinstance(index, Tensor) else Tensor(np.asarray(index, dtype=np.int64), device=x._dev)
    if idx.dtype.kind not in "iu":
        raise RuntimeError(f"{op}: expected an integer (Long) index tensor, got {idx.dtype}")
    from ..tensor_functions import check_index_dtype  # noqa: PLC0415 (it imports this module)

    check_index_dtype(op, idx)
    return idx


@public(method=True)
@stand_in()
def take(input: Tensor, index: Any) -> Tensor:  # noqa: A002
    """The entries of ``input`` read as a 1-D tensor at ``index`` (negative indices count from the end);
    the result has the index's shape."""
    x = _tensor(input, "take")
    idx = _long_index(index, x, "take")
    n = x.numel()
    flat = idx.reshape(-1)
    if flat.numel():
        lo, hi = int(flat.min().item()), int(flat.max().item())
        if lo < -n or hi >= n:
            raise IndexError(f"take: out of range: tried to access index {hi if hi >= n else lo} on a tensor of {n} elements.")  # fmt: skip
    flat = flat % builtins.max(n, 1)
    return x.reshape(-1).gather(0, flat).reshape(idx.shape)


@public(method=True)
def take_along_dim(input: Tensor, indices: Tensor, dim: int | None = None) -> Tensor:  # noqa: A002
    """The entries of ``input`` at ``indices`` along ``dim`` (``input`` and ``indices`` broadcast
    off ``dim``); without ``dim``, :func:`take` of the flattened tensor."""
    x = _tensor(input, "take_along_dim")
    if (
        dim is None and isinstance(indices, Tensor) and indices.numel() == 0
    ):  # (no entries taken: any dtype, as PyTorch's)
        return x.reshape(-1)[:0]
    idx = _long_index(indices, x, "take_along_dim")
    if dim is None:
        return x.reshape(-1).gather(0, idx.reshape(-1))
    d = dims.one(x.shape, dim, "take_along_dim", scalar_ok=False)
    if idx.ndim != x.ndim:
        raise RuntimeError(f"take_along_dim: input and indices should have the same number of dimensions, "
                           f"but got {x.ndim} dimensions for input, and {idx.ndim} dimensions for indices")  # fmt: skip
    xs, ishape = list(x.shape), list(idx.shape)
    xs[d] = ishape[d] = 1
    common = broadcast_of("take_along_dim", tuple(xs), tuple(ishape))
    xshape = common[:d] + (x.shape[d],) + common[d + 1 :]
    ishape2 = common[:d] + (idx.shape[d],) + common[d + 1 :]
    # along a dim PyTorch counts a negative index from the end, once (the flattened form does not)
    idx = where(idx < 0, idx + x.shape[d], idx)
    return x.expand(xshape).gather(d, idx.expand(ishape2))


@public(method=True, inplace_function=True)
def index_put(input: Tensor, indices: Sequence[Tensor], values: Any, accumulate: bool = False) -> Tensor:  # noqa: A002
    """A copy of ``input`` with ``values`` written at ``input[indices]`` (added there with ``accumulate``,
    repeated indices summing)."""
    x = _tensor(input, "index_put")
    if isinstance(values, Tensor) and values.dtype != x.dtype:  # (unlike x[key] = v, which casts)
        raise RuntimeError(f"Index put requires the source and destination dtypes match, got "
                           f"{scalar_type_name(x.dtype)} for the destination and {scalar_type_name(values.dtype)} "
                           "for the source.")  # fmt: skip
    # (index tensors may live on the CPU for a tensor elsewhere, as PyTorch allows)
    key = tuple(k.to(x.device) if isinstance(k, Tensor) and k._dev is not x._dev else k for k in indices)
    from ..index.indexing import tensor_keys  # noqa: PLC0415 (it imports this module)

    # (a 0-d value is PyTorch's masked_fill_, which takes no uint8 mask)
    key = tensor_keys(key, number_value=not isinstance(values, Tensor) or values.ndim == 0)
    v = values if isinstance(values, Tensor) else Tensor(np.asarray(values, dtype=x.dtype), device=x._dev)
    if not accumulate:
        out = x.clone()
        from ..index.indexing import setitem  # noqa: PLC0415 (it imports this module)

        unchecked(setitem)(out, key, v)  # (this op's own check is the one of these dtypes: scatters write any)
        return out
    # Accumulate: the flat positions the key selects, with the values scatter-added there (repeated
    # positions sum, as PyTorch's accumulate does)
    pos = Tensor(np.arange(x.numel(), dtype=np.int64).reshape(x.shape), device=x._dev)[key]
    vals = v.astype(x.dtype).expand(pos.shape).reshape(-1)
    return x.reshape(-1).scatter_add(0, pos.reshape(-1), vals).reshape(x.shape)


# -- structured matrices ---------------------------------------------------------------
@public(method=True)
def diag_embed(input: Tensor, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:  # noqa: A002
    """Matrices whose ``offset`` diagonal (in the plane ``dim1``, ``dim2`` of the result) holds
    ``input``'s last dimension, zeros elsewhere."""
    x = _tensor(input, "diag_embed")
    n = x.shape[-1] + builtins.abs(offset) if x.ndim else 1
    nd = x.ndim + 1
    d1, d2 = (dims.one((0,) * nd, d, "diag_embed") for d in (dim1, dim2))
    if d1 == d2:
        raise RuntimeError(f"diag_embed: diagonal dimensions cannot be identical {dim1}, {dim2}")
    eye = np.eye(n, k=offset, dtype=bool)
    rows, cols = np.nonzero(eye)
    # (..., m) -> (..., n, n): scatter the entries onto the chosen diagonal of the last two axes
    m = x.shape[-1] if x.ndim else 1
    xv = x.reshape(x.shape[:-1] + (m,)) if x.ndim else x.reshape(1)
    flat_pos = Tensor((rows * n + cols)[:m].astype(np.int64), device=x._dev)
    zeros = Tensor.zeros(xv.shape[:-1] + (n * n,), dtype=x.dtype, device=x._dev)
    idx = flat_pos.reshape((1,) * (xv.ndim - 1) + (m,)).expand(xv.shape)
    # (each position once, so written as scatter_add would add it; every dtype, as PyTorch's: its scatter
    # refuses uint16, uint32 and uint64, its diag_embed does not)
    out = unchecked(Tensor.scatter)(zeros, xv.ndim - 1, idx, xv).reshape(xv.shape[:-1] + (n, n))
    # the new axes sit last; move them to dim1 and dim2
    return out.movedim((nd - 2, nd - 1), (d1, d2)) if (d1, d2) != (nd - 2, nd - 1) else out


@public(method=True)
def diagflat(input: Tensor, offset: int = 0) -> Tensor:  # noqa: A002
    """The flattened ``input`` as the ``offset`` diagonal of a square matrix."""
    return diag_embed(_tensor(input, "diagflat").reshape(-1), offset)


@public
def block_diag(*tensors: Tensor) -> Tensor:
    """The tensors (0-d, 1-D as one row, 2-D) as blocks along the diagonal of one matrix, zeros elsewhere."""
    ts = [_tensor(t, "block_diag") for t in tensors]
    for i, t in enumerate(ts):
        if t.ndim > 2:
            raise RuntimeError(f"torch.block_diag: Input tensors must have 2 or fewer dimensions. Input {i} has {t.ndim} dimensions")  # fmt: skip
    if not ts:
        return Tensor.zeros((1, 0), dtype=np.float32)
    mats = [t.reshape(1, 1) if t.ndim == 0 else t.reshape(1, -1) if t.ndim == 1 else t for t in ts]
    from ..dtypes import result_type  # noqa: PLC0415

    dtype = result_type(*mats)
    cols = builtins.sum(m.shape[1] for m in mats)
    rows_out, left = [], 0
    for m in mats:
        r, c = m.shape
        parts = [Tensor.zeros((r, left), dtype=dtype, device=m._dev), m.astype(dtype),
                 Tensor.zeros((r, cols - left - c), dtype=dtype, device=m._dev)]  # fmt: skip
        rows_out.append(cat(parts, 1))
        left += c
    return cat(rows_out, 0)


@public
def vander(x: Tensor, N: int | None = None, increasing: bool = False) -> Tensor:  # noqa: N803 - PyTorch's name
    """The Vandermonde matrix of a 1-D ``x``: columns ``x**(N-1) ... x**0`` (``increasing``: the other way)."""
    x = _tensor(x, "vander")
    if x.ndim != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    n = x.shape[0] if N is None else int(N)
    if n < 0:
        raise RuntimeError("N must be non-negative.")
    if x.dtype.kind == "b":
        x = x.long()
    if n == 0:
        return Tensor.zeros((x.shape[0], 0), dtype=x.dtype, device=x._dev)
    # each power the previous times x: integer powers stay exact, and no gradient divides by x
    cols = [Tensor.ones((x.shape[0],), dtype=x.dtype, device=x._dev)]
    for _ in range(n - 1):
        cols.append(cols[-1] * x)
    out = stack(cols, 1)
    from ...ops.saved import saved_for_backward  # noqa: PLC0415

    return saved_for_backward(out if increasing else out.flip(1), x)  # (PyTorch's keeps x)


# -- index grids -----------------------------------------------------------------------
def _tri_indices(row: int, col: int, offset: int, lower: bool, dtype: Any, device: Any) -> Tensor:
    r, c = np.indices((row, col)) if row and col else (np.zeros((0,), np.int64), np.zeros((0,), np.int64))
    keep = (c - r <= offset) if lower else (c - r >= offset)
    out = np.stack([r[keep], c[keep]]).astype(np.int64)
    t = Tensor(out.reshape(2, -1), device=device)
    if dtype is None:
        return t
    if np.dtype(dtype) not in (np.int32, np.int64):  # (PyTorch's kernels: int32 and int64 alone)
        name = "tril_indices" if lower else "triu_indices"
        raise UnsupportedDtypeError(f'"{name}" not implemented for {scalar_type_name(dtype)!r}; it builds int32 or '
                                    "int64 indices")  # fmt: skip
    return t.astype(dtype)


@public
def tril_indices(row: int, col: int, offset: int = 0, *, dtype: Any = None, device: Any = None, **_: Any) -> Tensor:
    """The ``(2, n)`` indices of the lower triangle of a ``row x col`` matrix (below the ``offset`` diagonal),
    row by row."""
    return _tri_indices(row, col, offset, True, dtype, device)


@public
def triu_indices(row: int, col: int, offset: int = 0, *, dtype: Any = None, device: Any = None, **_: Any) -> Tensor:
    """The ``(2, n)`` indices of the upper triangle of a ``row x col`` matrix (above the ``offset`` diagonal)."""
    return _tri_indices(row, col, offset, False, dtype, device)


@public
def cartesian_prod(*tensors: Tensor) -> Tensor:
    """Every combination of one entry from each 1-D tensor, one row each (a 1-D tensor for one input)."""
    ts = [_tensor(t, "cartesian_prod") for t in tensors]
    if not ts:
        raise RuntimeError("cartesian_prod: expects a non-empty TensorList")
    for t in ts:
        if t.ndim != 1:
            raise RuntimeError(f"cartesian_prod: Expect a 1D vector, but got shape {list(t.shape)}")
    if len(ts) == 1:
        return ts[0]
    from ..elementwise.math_functions import meshgrid  # noqa: PLC0415

    grids = meshgrid(*ts, indexing="ij")
    return stack([g.reshape(-1) for g in grids], 1)


@public
def combinations(input: Tensor, r: int = 2, with_replacement: bool = False) -> Tensor:  # noqa: A002
    """Every combination of ``r`` entries of a 1-D tensor, in order, one row each (as ``itertools.combinations``)."""
    x = _tensor(input, "combinations")
    if x.ndim != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(x.shape)}")
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:  # (a new empty tensor, outside the graph, as PyTorch's)
        return x.detach()[:0].clone()
    refuse_without_kernel("aten::masked_select", x)  # (PyTorch's picks each column with it)
    pick = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    rows = np.array(list(pick(range(x.shape[0]), r)), dtype=np.int64).reshape(-1, r)
    # (PyTorch's picks each column with masked_select, which keeps its input: kept here too, so that
    # changing it in place before the backward raises as there)
    return saved_for_backward(x[Tensor(rows, device=x._dev)], x)


# -- differences -----------------------------------------------------------------------
@public(method=True)
def diff(input: Tensor, n: int = 1, dim: int = -1, prepend: Any = None, append: Any = None) -> Tensor:  # noqa: A002
    """The ``n``-th forward difference along ``dim`` (``out[i] = x[i + 1] - x[i]``), ``prepend`` and
    ``append`` joined to ``input`` first."""
    x = _tensor(input, "diff")
    if x.ndim == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"diff: order must be non-negative but got {n}")
    d = dims.one(x.shape, dim, "diff", scalar_ok=False)
    if n == 0:  # (no difference taken: prepend and append are not joined either; a copy, as PyTorch's)
        return x.clone()
    parts = [p for p in (prepend, x, append) if p is not None]
    if len(parts) > 1:
        parts = [p if p.ndim == x.ndim else p.reshape(x.shape[:d] + (1,) + x.shape[d + 1 :]).expand(
            x.shape[:d] + (1,) + x.shape[d + 1 :]) for p in (_tensor(q, "diff") for q in parts)]  # fmt: skip
        x = cat(parts, d)
    lead = (slice(None),) * d
    for _ in range(n):
        if x.shape[d] == 0:
            break
        a, b = x[lead + (slice(1, None),)], x[lead + (slice(None, -1),)]
        x = (a != b) if x.dtype == np.bool_ else a - b  # (bool: PyTorch's logical_xor)
    return x


# -- Tensor attributes -----------------------------------------------------------------
@public(name="H", function=False, method=True)
@property
def _H(self: Tensor) -> Tensor:  # noqa: N802 - PyTorch's name
    """The conjugate transpose of a matrix."""
    if self.ndim not in (0, 2):
        raise RuntimeError(f"tensor.H is only supported on matrices (2-D tensors). Got {self.ndim}-D tensor.")
    out = self.transpose(0, 1) if self.ndim == 2 else self
    return out.conj() if out.dtype.kind == "c" else out


@public(name="mH", function=False, method=True)
@property
def _mH(self: Tensor) -> Tensor:  # noqa: N802 - PyTorch's name
    """The conjugate transpose of the last two dimensions (``.mT`` of a real tensor)."""
    if self.ndim < 2:
        raise RuntimeError(f"tensor.mH is only supported on matrices or batches of matrices. Got {self.ndim}-D tensor.")
    return self.mT.conj() if self.dtype.kind == "c" else self.mT
