"""``tensor[key]`` with NumPy's rules, built from two primitives: Slice and Gather.

Basic parts of the key (ints, slices, ``...``, ``None``) become one ``Slice`` and a
reshape; integer index arrays (lists, NumPy arrays, tensors) become one ``Gather`` over
the merged indexed axes; a boolean mask becomes the gather of its true positions.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ... import ops
from ...engine.declare import public
from ...engine.function import _NUMPY_SCALARS, FreedArray, Function, InvalidArgumentError, _as_ndarray
from ...engine.switches import _State, check_host_read, tracing
from ...engine.versions import bump_version, continue_version
from ...engine.warn import warn
from .._tensor import Tensor, legacy_type_name, where
from ..dtypes import fill_value_in
from ..mutation.inplace import (
    apply_inplace,
    deprecated_expanded_write,
    expanded_alias,
    refuse_internal_overlap,
    refuse_partial_overlap,
)


def _is_index_array(k: Any) -> bool:
    if isinstance(k, np.generic):
        return False
    return isinstance(k, (Tensor, list, np.ndarray)) or (hasattr(k, "shape") and hasattr(k, "dtype"))


def _expand_ellipsis(key: tuple, ndim: int) -> tuple:
    used = sum(1 for k in key if k is not None and k is not Ellipsis and not _is_bool_array(k))
    used += sum(_bool_ndim(k) for k in key if _is_bool_array(k))
    n_ell = sum(1 for k in key if k is Ellipsis)
    if n_ell > 1:
        raise IndexError("getitem: an index can have only one ellipsis ('...')")
    if used > ndim:
        raise IndexError(f"getitem: too many indices ({used}) for a tensor of {ndim} dimensions")
    if n_ell == 0:
        return key + (slice(None),) * (ndim - used)
    # (by identity: ``key.index`` compares with ==, which index arrays answer elementwise)
    i = next(j for j, k in enumerate(key) if k is Ellipsis)
    return key[:i] + (slice(None),) * (ndim - used) + key[i + 1 :]


def _is_bool_array(k: Any) -> bool:
    if isinstance(k, Tensor):
        return k.dtype == np.bool_
    if isinstance(k, (np.ndarray, list)):
        return np.asarray(k).dtype == np.bool_
    return False


def _bool_ndim(k: Any) -> int:
    return k.ndim if isinstance(k, Tensor) else np.asarray(k).ndim


def host_integers(ids: Any, op: str, what: str = "ids") -> np.ndarray:
    """``ids`` (a tensor, array or list) as a host int64 array, or a clear error.

    Float tensors that hold whole numbers are accepted, since lists become float32. Meta ids have
    no values to check: zeros of their shape (what is made from them is meta too).
    """
    if isinstance(ids, Tensor) and ids._dev.meta:
        if ids.dtype.kind not in "iuf":
            raise TypeError(f"{op}: {what} must be integers, got {ids.dtype}")
        return np.broadcast_to(np.zeros((), np.int64), tuple(ids.shape))
    host = ids.detach().numpy() if isinstance(ids, Tensor) else np.asarray(ids)
    if host.dtype.kind == "f":
        if not np.all(host == np.round(host)):
            raise TypeError(f"{op}: {what} must be integers")
        return host.astype(np.int64)
    if host.dtype.kind not in "iu":
        raise TypeError(f"{op}: {what} must be integers, got {host.dtype}")
    return host.astype(np.int64, copy=False)


def _index_array(k: Any, x: Tensor, size: int) -> Any:
    """An int64 backend array on ``x``'s device, negatives wrapped, range checked."""
    if isinstance(k, Tensor):
        if k._dev is not x._dev:
            raise RuntimeError(f"getitem: index tensor on {k.device} for a tensor on {x.device}")
        idx = k
    else:
        idx = Tensor(np.asarray(k), device=x._dev)
    if idx.dtype.kind == "f":  # (a list of floats: PyTorch reads each number as an int, cut toward zero)
        idx = idx.trunc().astype(np.int64)
    elif idx.dtype.kind not in "iu":
        raise IndexError(f"getitem: index arrays must be integers, got {idx.dtype}")
    ns = x._dev.ops
    a = idx._data
    if a.dtype != x._dev.dtype(np.int64):
        a = ns.astype(a, x._dev.dtype(np.int64))
    if math.prod(a.shape):
        lo, hi = int(ns.min(a)), int(ns.max(a))
        if lo < -size or hi >= size:
            bad = hi if hi >= size else lo
            raise IndexError(
                f"getitem: index {bad} is out of bounds for an axis of size {size} (shape {tuple(x.shape)})"
            )
        if lo < 0:
            a = ns.where(a < 0, a + size, a)
    return a


def _traced_index(k: Tensor, x: Tensor, size: int) -> Tensor:
    """A tensor index while tracing: an int64 tensor, negatives wrapped by ops, so that a
    replay reads the index of that call (no host read: no range check but the gather's own)."""
    if k._dev is not x._dev:
        raise RuntimeError(f"getitem: index tensor on {k.device} for a tensor on {x.device}")
    if k.dtype.kind not in "iuf":
        raise IndexError(f"getitem: index arrays must be integers, got {k.dtype}")
    idx = k if k.dtype == np.int64 else k.detach().astype(np.int64)  # (float tensors holding integers)
    return where(idx < 0, idx + size, idx)


def _check_bool_masks(x: Tensor, key: tuple) -> None:
    """Each boolean mask must have the shape of the axes it covers, as in NumPy and
    PyTorch (a shorter one would silently select from a prefix)."""
    used = sum(_bool_ndim(k) if _is_bool_array(k) else 1 for k in key if k is not None and k is not Ellipsis)
    axis = 0
    for k in key:
        if k is None:
            continue
        if k is Ellipsis:
            axis += max(x.ndim - used, 0)
        elif _is_bool_array(k):
            shape = tuple(k.shape) if isinstance(k, Tensor) else np.shape(k)
            covered = x.shape[axis : axis + len(shape)]
            if covered != shape:
                raise IndexError(
                    f"getitem: a boolean index of shape {shape} does not match the axes {axis}.."
                    f"{axis + len(shape) - 1} of shape {covered} it indexes (tensor of shape {tuple(x.shape)})"
                )
            axis += len(shape)
        else:
            axis += 1


def _scalar_index(k: Any) -> Any:
    """A 0-d integer tensor as the int it holds, as PyTorch reads it (``x[t]`` is then a
    view, like ``x[1]``); kept a tensor while tracing, where it is an input of the program."""
    if k.__class__ is Tensor and k.ndim == 0 and k.dtype.kind in "iu" and not tracing():
        return int(k.item())
    if k.__class__ is np.ndarray and k.ndim == 0 and k.dtype.kind in "iu":  # (PyTorch reads it as an int too)
        return int(k)
    return k


def refuse_negative_steps(key: Any, x: Tensor | None = None) -> None:
    """PyTorch's ValueError for a slice of negative step in a key (``x[::-1]``: use ``x.flip(0)``);
    with ``x``, an index out of range in the key is reported first, as PyTorch's IndexError."""
    for k in key if isinstance(key, tuple) else (key,):
        if k.__class__ is slice and k.step is not None and not isinstance(k.step, Tensor) and k.step < 0:
            if x is not None:
                _ints_in_range_before(x, key, k)
            raise ValueError(f"step must be greater than zero (got {k}); reverse a tensor with .flip(dims)")


def _ints_in_range_before(x: Tensor, key: Any, stop: slice) -> None:
    """PyTorch's IndexError for an int index out of range that comes before the slice ``stop`` in
    ``key`` (PyTorch reads the ints and slices of a key in order, the index arrays after them)."""
    axis = 0
    for k in key if isinstance(key, tuple) else (key,):
        if k is stop or k is Ellipsis:
            return
        if k is None:
            continue
        if isinstance(k, (int, np.integer)) and not isinstance(k, bool) and axis < x.ndim:
            n = x.shape[axis]
            if not -n <= k < n:
                raise IndexError(f"index {k} is out of bounds for dimension {axis} with size {n}")
        axis += _bool_ndim(k) if _is_bool_array(k) else 1


_SEQUENCE_AS_TUPLE_WARNING = (
    "Using a non-tuple sequence for multidimensional indexing is deprecated and will be changed in pytorch 2.9; "
    "use x[tuple(seq)] instead of x[seq]. In pytorch 2.9 this will be interpreted as tensor index, "
    "x[torch.tensor(seq)], which will result either in an error or a different result"
)


def sequence_as_tuple(key: Any) -> Any:
    """PyTorch's (and old NumPy's) reading of a list key: a list of fewer than 32 entries holding a
    tensor, a sequence, a slice, ``...`` or ``None`` is a tuple of indices (``x[[t0, t1]]`` is
    ``x[t0, t1]``, ``x[[[0, 1], [1, 2]]]`` is ``x[[0, 1], [1, 2]]``), with PyTorch's deprecation
    warning; any other list is one index array."""
    if key.__class__ is not list or len(key) >= 32:
        return key
    for k in key:
        if isinstance(k, (Tensor, list, tuple, np.ndarray, slice)) or k is None or k is Ellipsis:
            warn(_SEQUENCE_AS_TUPLE_WARNING, UserWarning)
            return tuple(key)
    return key


_BYTE_MASK_WARNING = "indexing with dtype torch.uint8 is now deprecated, please use a dtype torch.bool instead."


def tensor_keys(key: Any, *, number_value: bool = False) -> Any:
    """PyTorch's reading of tensor and array keys by dtype: a uint8 one is a mask (its
    deprecation warning), as a bool one; a tensor of another dtype than int64, int32, uint8
    or bool is its ``IndexError`` (an array of integers or floats is read as a list).
    ``number_value``: a number is written (``x[mask] = 0``), PyTorch's ``masked_fill_``,
    which refuses a uint8 mask."""
    parts = key if isinstance(key, tuple) else (key,)
    for k in parts:
        if isinstance(k, np.bool_):  # (PyTorch's parser takes Python's bool, not NumPy's)
            raise IndexError("only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables are "
                             "valid indices (got numpy.bool)")  # fmt: skip
    if not any(
        k.__class__ is list or (isinstance(k, (Tensor, np.ndarray)) and k.dtype not in _PLAIN_KEYS) for k in parts
    ):
        return key
    out = []
    for k in parts:
        if k.__class__ is list:
            as_array = np.asarray(k)
            k = as_array if as_array.dtype.kind == "f" else k
        dt = getattr(k, "dtype", None)
        if isinstance(k, np.ndarray) and dt.kind == "f":  # (read as a list of numbers: cut toward zero)
            k = np.trunc(k).astype(np.int64)
        elif isinstance(k, Tensor) and k.ndim == 0 and dt.kind in "iu" and dt != np.uint8:
            pass  # (a 0-d integer tensor is an int, by its __index__)
        elif isinstance(k, (Tensor, np.ndarray)) and dt == np.uint8:
            if number_value and k.ndim:  # (a 0-d one is a bool among the keys, not a mask to fill)
                raise RuntimeError("masked_fill_ only supports boolean masks, but got mask with dtype unsigned char "
                                   f"(a uint8 key of shape {tuple(k.shape)}: write it as a bool mask, key != 0)")  # fmt: skip
            warn(_BYTE_MASK_WARNING, UserWarning)
            k = k != 0
        elif isinstance(k, Tensor) and dt not in _PLAIN_KEYS:
            raise IndexError(f"tensors used as indices must be long, int, byte or bool tensors (got {dt} of shape "
                             f"{tuple(k.shape)}; convert with .long())")  # fmt: skip
        out.append(k)
    return tuple(out) if isinstance(key, tuple) else out[0]


_PLAIN_KEYS = frozenset({np.dtype(np.int64), np.dtype(np.int32), np.dtype(np.bool_)})


@public(name="__getitem__", function=False, method=True)
def getitem(x: Tensor, key: Any) -> Tensor:
    """``x[key]``: basic keys give views (slices, ints, ``None``, ``...``), tensor and list keys
    gather; a negative step is PyTorch's ValueError."""
    key = tensor_keys(sequence_as_tuple(key))
    refuse_negative_steps(key, x)
    return any_step_getitem(x, key)


def any_step_getitem(x: Tensor, key: Any) -> Tensor:
    """:func:`getitem` that also takes negative steps (NumPy's meaning), for the package's own
    reversals (``flip``)."""
    key = tuple(map(_scalar_index, key)) if isinstance(key, tuple) else (_scalar_index(key),)
    k0 = key[0] if len(key) == 1 else None
    if k0.__class__ is bool or (x.ndim and _is_bool_array(k0) and _bool_ndim(k0) == 0):
        # x[True]: x under a new axis of 1, x[False] of 0; an index op (new memory), as PyTorch's
        keep = bool(k0.item() if isinstance(k0, Tensor) else k0)
        return getitem(x.unsqueeze(0), np.zeros(1 if keep else 0, dtype=np.int64))
    if x.ndim == 0 and len(key) == 1 and _is_bool_array(key[0]) and key[0].ndim == 0:
        # x[x > 0] of a 0-d x: one element or none, as PyTorch (NumPy has no nonzero of 0-d)
        m = key[0]
        return getitem(x.reshape(1), m.reshape(1) if isinstance(m, Tensor) else np.reshape(m, (1,)))
    if len(key) > 1 and any(_is_scalar_bool(k) for k in key):
        return any_step_getitem(*_scalar_bools_unsqueezed(x, key))
    if any(_is_bool_array(k) for k in key):
        _check_bool_masks(x, key)
    key = tuple(_bool_to_int(k, x) if _is_bool_array(k) else k for k in key)
    key = tuple(k for part in key for k in (part if isinstance(part, _Split) else (part,)))
    key = _expand_ellipsis(key, x.ndim)
    if not any(_is_index_array(k) for k in key):
        return _basic(x, key)
    out = _advanced(x, key)
    order = _torch_order(key)
    return out if order is None else out.permute(order)


def _is_int(k: Any) -> bool:
    return isinstance(k, (int, np.integer)) and not isinstance(k, (bool, np.bool_))


def _is_scalar_bool(k: Any) -> bool:
    return k.__class__ is bool or (_is_bool_array(k) and _bool_ndim(k) == 0)


def _scalar_bools_unsqueezed(x: Tensor, key: tuple) -> tuple[Tensor, tuple]:
    """PyTorch's reading of a bool (or 0-d bool tensor) among other keys (``x[True, None]``,
    ``x[idx, mask_0d]``): a new axis of 1 where it stands, indexed by ``[0]`` (True) or ``[]``
    (False) beside the key's other index arrays. The tensor with those axes, and the key that
    indexes them."""
    axes: list[Any] = []  # (the first pass: a new axis at each scalar bool, every other axis kept)
    for k in key:
        if _is_scalar_bool(k):
            axes.append(None)
        elif k is Ellipsis:
            axes.append(Ellipsis)
        elif k is not None:
            axes.extend([slice(None)] * (_bool_ndim(k) if _is_bool_array(k) else 1))
    keep = lambda k: bool(k.item() if isinstance(k, Tensor) else k)  # noqa: E731
    rest = tuple(np.zeros(int(keep(k)), np.int64) if _is_scalar_bool(k) else k for k in key)
    return any_step_getitem(x, tuple(axes)), rest


def _block_start(entries: list[str]) -> int:
    """Where the broadcast dims of the index arrays (``"a"``) go among the other result dims
    (``"d"``: slices and ``None``): in place when the arrays are next to each other, else first."""
    at = [i for i, e in enumerate(entries) if e == "a"]
    if at[-1] - at[0] + 1 != len(at):
        return 0
    return entries[: at[0]].count("d")


def _torch_order(key: tuple) -> list[int] | None:
    """The axes of NumPy's result of ``key`` in PyTorch's order, or None where they agree.

    PyTorch applies an int index as a select before the index arrays (``x[0, :, idx]`` is
    ``x[0][:, idx]``), so only the arrays decide where their dims go; NumPy counts the int
    among the arrays (a key of ints and arrays around a slice puts the array dims first).
    """
    if not any(_is_int(k) for k in key):
        return None
    kind = ["a" if _is_index_array(k) else "i" if _is_int(k) else "d" for k in key]
    numpy_at = _block_start(["a" if e in "ai" else e for e in kind])
    torch_at = _block_start([e for e in kind if e != "i"])
    if numpy_at == torch_at:
        return None
    n_other = kind.count("d")
    n_block = np.broadcast_shapes(*(np.shape(k) if not isinstance(k, Tensor) else k.shape
                                    for k in key if _is_index_array(k) or _is_int(k))).__len__()  # fmt: skip
    other = [i if i < numpy_at else i + n_block for i in range(n_other)]
    block = list(range(numpy_at, numpy_at + n_block))
    return other[:torch_at] + block + other[torch_at:]


class _Split(tuple):
    """A boolean mask turned into one index array per axis it covers."""


def _bool_to_int(k: Any, x: Tensor) -> _Split:
    if isinstance(k, Tensor):
        check_host_read(k, "nonzero")  # (a meta mask has no values: PyTorch's NotImplementedError)
    mask = k.detach().numpy() if isinstance(k, Tensor) else np.asarray(k)
    return _Split(np.nonzero(mask))


def _basic(x: Tensor, key: tuple) -> Tensor:
    """Ints, slices and ``None``: one Slice, then a reshape for the new axes."""
    plain = tuple(k for k in key if k is not None)
    for k, s in zip([k for k in plain], x.shape):
        if isinstance(k, (int, np.integer)) and not -s <= k < s:
            raise IndexError(f"getitem: index {k} is out of bounds for an axis of size {s} (shape {tuple(x.shape)})")
    if all(isinstance(k, slice) and k == slice(None) for k in plain):
        # (x[:] and x[...] are new views, as PyTorch's: not x; x[None] is the unsqueeze's view alone, as PyTorch's)
        out = x if len(plain) != len(key) else ops.Slice.apply(x, args=(Ellipsis,))
    else:
        plain = tuple(
            int(k) if isinstance(k, (int, np.integer)) else _in_bounds(k, s) if isinstance(k, slice) else k
            for k, s in zip(plain, x.shape)
        )
        args = plain
        if len(plain) == x.ndim and all(isinstance(k, int) for k in plain):
            # One element: ``a[i, j]`` would give a NumPy scalar, a copy; ``a[i, j, ...]`` is a
            # 0-d view of the same memory, as every other basic key gives (and PyTorch's x[i, j]).
            args = (*plain, Ellipsis)
        out = ops.Slice.apply(x, args=args)
    if len(plain) != len(key):  # ``None`` entries: new axes of size 1
        it = iter(out.shape)
        shape, new = [], []
        for k in key:
            if k is None:
                new.append(len(shape))
                shape.append(1)
            elif isinstance(k, slice):
                shape.append(next(it))
        out = ops.movement.Unsqueeze.apply(out, args=(tuple(shape), tuple(new)))
    return out


def _in_bounds(k: slice, size: int) -> slice:
    """``k`` with its start and stop clipped to the axis, as NumPy reads them: the array API
    leaves out-of-bounds starts and stops unspecified (array_api_strict rejects them)."""
    if (k.start is None or 0 <= k.start <= size) and (k.stop is None or 0 <= k.stop <= size):
        return k  # (the common case, kept as written)
    start, stop, step = k.indices(size)
    if step < 0 and stop < 0:  # "before the first element", which -1 would not mean
        stop = None
    if step < 0 and start < 0:  # an empty axis
        return slice(0, 0, 1)
    return slice(start, stop, step)


def _advanced(x: Tensor, key: tuple) -> Tensor:
    """Integer arrays (and ints among them) on some axes, slices on the others."""
    if any(k is None for k in key):  # a new axis of size 1 where each None stands, then index as usual
        sizes = iter(x.shape)
        shape = tuple(1 if k is None else next(sizes) for k in key)
        x = ops.movement.Unsqueeze.apply(x, args=(shape, tuple(i for i, k in enumerate(key) if k is None)))
        key = tuple(slice(None) if k is None else k for k in key)
    adv = [i for i, k in enumerate(key) if not isinstance(k, slice)]
    # First the slices, with full slices on the indexed axes.
    out = _basic(x, tuple(slice(None) if i in adv else k for i, k in enumerate(key)))
    if tracing() and any(isinstance(key[i], Tensor) for i in adv):
        return _advanced_traced(out, key, adv)
    idx = [_index_array(key[i], out, out.shape[i]) for i in adv]
    ns = out._dev.ops
    shapes = [tuple(a.shape) for a in idx]
    try:
        bshape = np.broadcast_shapes(*shapes)
    except ValueError as e:
        raise IndexError(f"getitem: index arrays of shapes {shapes} do not broadcast together") from e
    idx = [ns.broadcast_to(a, bshape) for a in idx]
    consecutive = adv == list(range(adv[0], adv[0] + len(adv)))
    if not consecutive:  # NumPy puts the indexed axes first in this case
        rest = [i for i in range(out.ndim) if i not in adv]
        out = out.permute((*adv, *rest))
        adv = list(range(len(adv)))
    p = adv[0]
    if len(adv) > 1:  # merge the indexed axes into one, with a row-major linear index
        sizes = [out.shape[i] for i in adv]
        linear = idx[0]
        for a, s in zip(idx[1:], sizes[1:]):
            linear = linear * s + a
        out = out.reshape(out.shape[:p] + (math.prod(sizes),) + out.shape[p + len(adv) :])
        index = linear
    else:
        index = idx[0]
    return ops.Gather.apply(out, args=(p, index))


def _advanced_traced(out: Tensor, key: tuple, adv: list[int]) -> Tensor:
    """:func:`_advanced` with the indices as tensors and every step an op, so a traced
    program reads tensor indices at each replay (``W[ids]``, ``logits[arange, y]``)."""
    idx = [
        _traced_index(key[i], out, out.shape[i]) if isinstance(key[i], Tensor)
        else Tensor._wrap(_index_array(key[i], out, out.shape[i]), out._dev)
        for i in adv
    ]  # fmt: skip
    try:
        bshape = np.broadcast_shapes(*[tuple(a.shape) for a in idx])
    except ValueError as e:
        raise IndexError(f"getitem: index arrays of shapes {[a.shape for a in idx]} do not broadcast together") from e
    idx = [a if a.shape == bshape else a.expand(bshape) for a in idx]
    if adv != list(range(adv[0], adv[0] + len(adv))):  # NumPy puts the indexed axes first in this case
        out = out.permute(*adv, *[i for i in range(out.ndim) if i not in adv])
        adv = list(range(len(adv)))
    p = adv[0]
    index = idx[0]
    if len(adv) > 1:  # merge the indexed axes into one, with a row-major linear index
        sizes = [out.shape[i] for i in adv]
        for a, s in zip(idx[1:], sizes[1:]):
            index = index * s + a
        out = out.reshape(out.shape[:p] + (math.prod(sizes),) + out.shape[p + len(adv) :])
    return ops.Take.apply(out, index, args=p)


# -- item assignment ---------------------------------------------------------------
@public(name="__setitem__", function=False, method=True)
def setitem(x: Tensor, key: Any, value: Any) -> None:
    """``x[key] = value``: ``value`` (a number or anything broadcastable to ``x[key]``'s
    shape) written into ``x``'s array, for any key ``x[key]`` takes.

    Where a gradient is wanted it is recorded as an in-place op (see
    :func:`apply_inplace`): basic keys through :class:`SetSlice`, index arrays and
    masks through ``ops.Put`` (a position written twice keeps the last write, as NumPy).
    """
    key = tensor_keys(sequence_as_tuple(key), number_value=not isinstance(value, Tensor))
    refuse_negative_steps(key)
    if isinstance(value, Tensor):
        if value._dev is not x._dev:
            raise RuntimeError(
                f"setitem: value on {value.device} for a tensor on {x.device}; move it with .to('{x.device}')"
            )
    elif isinstance(value, (bool, int, float, complex, np.integer)):  # (np.float64 is a float)
        if isinstance(value, np.generic):
            value = value.item()
        value = fill_value_in("setitem", value, x.dtype)  # (PyTorch checks the value before the key)
    else:  # a list, an array, a NumPy float32: PyTorch takes a tensor or a Python number only
        kind = type(value)
        name = kind.__name__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__name__}"
        raise TypeError(f"can't assign a {name} to a {legacy_type_name(x)}: write x[...] = torch.tensor(value)")
    parts = tuple(map(_scalar_index, key)) if isinstance(key, tuple) else (_scalar_index(key),)
    if any(_is_scalar_bool(p) for p in parts):
        # (a bool, or a 0-d bool tensor, is a new axis of 1 taken whole or not at all, as in getitem: x[True] = v
        # writes everywhere, x[False] = v nowhere)
        if not all(bool(p.item() if isinstance(p, Tensor) else p) for p in parts if _is_scalar_bool(p)):
            return
        parts = tuple(None if _is_scalar_bool(p) else p for p in parts)
    key = parts  # (0-d integer tensors read as ints, as in getitem)
    basic = not any(_is_index_array(p) or _is_bool_array(p) for p in parts)
    if not basic and isinstance(value, Tensor) and value.dtype != x.dtype:
        getitem(x.detach(), parts)  # (PyTorch checks the key first: its IndexError before the dtypes')
        _index_put_dtypes(x, parts, value)
    wants = _State.grad_enabled and (x.requires_grad or (isinstance(value, Tensor) and value.requires_grad))
    if basic and isinstance(value, Tensor) and any(p is None for p in parts):
        # x[:, None] += 1: the value has the view's new axes of length 1, the store has not
        view_shape = getitem(x.detach(), parts).shape
        value = value.expand(view_shape).reshape(getitem(x.detach(), tuple(p for p in parts if p is not None)).shape)
    if basic:
        plain = _basic_setitem_key(x, parts)
        if isinstance(value, Tensor) and x._data.__class__ is np.ndarray:  # (x[1:] = x[:-1]: PyTorch's error)
            dest = x._data[plain]
            if dest.shape == value.shape:  # (a broadcast value PyTorch lets pass)
                refuse_partial_overlap(dest, value._data, "setitem")
        if not wants:  # nothing to record: a plain store, on every backend
            _store(x, plain, value)
            return
        store = lambda old, v: SetSlice.apply(old, _cast_like(v, old), args=plain)  # noqa: E731
        apply_inplace(x, "setitem", store, value, reads_old=False)
        return
    if tracing() and any(isinstance(p, Tensor) for p in parts):
        _setitem_put(x, key, value)  # the index an input of the program: no host read
        return
    if not wants and x._dev.xp is np and not x._dev.meta:  # NumPy stores fancy keys itself (a meta key: no values)
        host_key = tuple(p.detach().numpy() if isinstance(p, Tensor) else p for p in parts)
        order = None if any(_is_bool_array(p) for p in parts) else _torch_order(_expand_ellipsis(parts, x.ndim))
        if order is not None and isinstance(value, Tensor):  # the value in PyTorch's layout of x[key], NumPy's store
            value = value.expand(getitem(x.detach(), parts).shape).permute([order.index(i) for i in range(len(order))])
        try:
            _store(x, host_key, value)
            return
        except IndexError as e:
            raise IndexError(f"setitem: {e} (tensor of shape {tuple(x.shape)})") from e
    _setitem_put(x, key, value)


def _index_put_dtypes(x: Tensor, parts: tuple, value: Tensor) -> None:
    """PyTorch's rule for a tensor written through index arrays or masks: of ``x``'s dtype
    (its RuntimeError; basic keys cast, as ``copy_``), but a one-element value under a mask,
    which PyTorch writes as ``masked_fill`` does, in any dtype."""
    masks = [p for p in parts if _is_bool_array(p)]
    others_basic = not any(_is_index_array(p) for p in parts if not _is_bool_array(p))
    if value.numel() == 1 and len(masks) == 1 and others_basic:  # (one mask and basic keys: PyTorch's masked_fill)
        fill_value_in("setitem", value.item(), x.dtype)  # (its number: PyTorch's overflow check)
        return
    raise RuntimeError(
        f"Index put requires the source and destination dtypes match, got {x.dtype} for the destination and "
        f"{value.dtype} for the source (x[key] = value with an index tensor, shapes {tuple(x.shape)} and {tuple(value.shape)}); "
        f"convert the value with .to({x.dtype})"
    )


def _basic_setitem_key(x: Tensor, parts: tuple) -> tuple:
    """Ints, slices and ``...`` checked against ``x``'s shape; ``None`` (new axes of size 1)
    changes nothing a store writes and is dropped."""
    key = _expand_ellipsis(parts, x.ndim)
    plain = tuple(k for k in key if k is not None)
    for k, s in zip(plain, x.shape):
        if isinstance(k, (int, np.integer)) and not -s <= k < s:
            raise IndexError(f"setitem: index {k} is out of bounds for an axis of size {s} (shape {tuple(x.shape)})")
        if not isinstance(k, (int, np.integer, slice)):
            raise IndexError(f"setitem: cannot index with {type(k).__name__} (tensor of shape {tuple(x.shape)})")
    return tuple(int(k) if isinstance(k, (int, np.integer)) else k for k in plain)


def _store(x: Tensor, key: tuple, value: Any) -> None:
    """``x._data[key] = value`` unrecorded, with the version bumped."""
    if x._data.__class__ is FreedArray:
        raise RuntimeError(f"setitem: the values of this tensor (shape {tuple(x.shape)}) were freed {x._data.when}")
    if _State.hook is not None:  # a symbolic trace writes into the same buffer
        _State.hook.write(x, key, value)
    v = value
    if isinstance(value, Tensor):
        v = value._data
        if value.dtype != x.dtype:
            v = x._dev.ops.astype(v, x._data.dtype)
    try:
        x._data[key] = v
    except ValueError as e:  # (PyTorch's RuntimeError; a ValueError, as NumPy's)
        if _store_expanded(x, key, v):
            return
        lead = len(getattr(v, "shape", ())) - x._data[key].ndim
        if 0 < lead and all(n == 1 for n in v.shape[:lead]):  # (PyTorch drops a value's leading 1s: x[0] = t[None])
            try:
                x._data[key] = v.reshape(v.shape[lead:])
            except ValueError:
                pass
            else:
                if x._tracks_versions:
                    bump_version(x._data)
                return
        raise InvalidArgumentError(f"setitem: cannot write a value of shape {_shape_of(value)} into x[...] of a "
                                   f"tensor of shape {tuple(x.shape)}: {e}") from e  # fmt: skip
    if x._tracks_versions:  # (not through ``.data``: PyTorch's untracked escape hatch)
        bump_version(x._data)


def _store_expanded(x: Tensor, key: tuple, v: Any) -> bool:
    """``x[key] = v`` where ``x`` is an expanded tensor, as PyTorch's: through index arrays or a
    mask (its ``index_put_``/``masked_fill_``) into the memory the expansion repeats, with its
    deprecation warning; through basic keys (its ``copy_``) only where ``x[key]`` repeats no
    element. False where ``x`` is not expanded."""
    alias = expanded_alias(x._data)
    if alias is None:
        return False
    masks = [k for k in key if isinstance(k, np.ndarray) and k.dtype == np.bool_]
    if any(isinstance(k, np.ndarray) for k in key):
        deprecated_expanded_write("masked_fill_" if masks else "index_put_")
    else:
        refuse_internal_overlap(x._data[key], "setitem")
    alias[key] = v
    if x._tracks_versions:
        bump_version(x._data)
    return True


def _cast_like(v: Any, x: Tensor) -> Any:
    """``v`` in ``x``'s dtype, so its gradient comes back in its own (through the cast)."""
    return v.astype(x.dtype) if isinstance(v, Tensor) and v.dtype != x.dtype else v


def _shape_of(value: Any) -> tuple:
    return tuple(value.shape) if isinstance(value, Tensor) else ()


class SetSlice(Function):
    """``x`` with ``v`` written at the basic key ``args`` (ints, slices): a new array. The
    gradient of ``x`` is ``g`` with zeros there; that of ``v`` is ``g[key]``."""

    __slots__ = ()
    name = "setitem"
    keep = ()
    reads_output = False

    def forward(self, ns, x, v):
        out = ns.copy(x)
        if hasattr(v, "dtype") and v.dtype != x.dtype:
            v = ns.astype(v, x.dtype)
        out[self.args] = v
        return out

    def backward(self, g, ns, inputs, out):
        key = self.args
        if ns.recording:  # a recorded gradient (create_graph)
            return SetSlice.apply(g, 0.0, args=key), g[key]
        gx = ns.copy(g)
        if gx.__class__ in _NUMPY_SCALARS:  # (a 0-d gradient NumPy gave as a scalar)
            gx = _as_ndarray(gx)
        gx[key] = 0
        return gx, ns.copy(g[key])


def _setitem_put(x: Tensor, key: Any, value: Any) -> None:
    """``x[key] = value`` for a key with index arrays or masks: one :class:`ops.Put` of the
    values at the positions ``x[key]`` shows in ``x`` flattened. The positions are ops on
    the index (``arange(n)[key]``), so a traced program writes where each call's index says
    and keeps the last of repeated writes, as eager does."""
    dev, n = x._dev, x.numel()
    pos = Tensor.arange(n, dtype=np.int64, device=dev).reshape(x.shape)[key]
    flat, shape = pos.reshape(-1), tuple(pos.shape)
    index = [p for p in (key if isinstance(key, tuple) else (key,)) if isinstance(p, Tensor)]
    if len(index) == 1 and index[0].ndim and _State.grad_enabled:
        # The positions stand for the index tensor the backward keeps (PyTorch's IndexPutBackward saves
        # the index; a 0-d mask it reads as a new axis, and keeps nothing): they share its version, so
        # changing the index in place before the backward raises.
        continue_version(flat._data, index[0]._data)

    def store(old: Tensor, v: Any) -> Tensor:
        vals = _cast_like(v, old).expand(shape).reshape(-1) if isinstance(v, Tensor) else v
        return ops.Put.apply(old.reshape(-1), vals, flat).reshape(old.shape)

    apply_inplace(x, "setitem", store, value, reads_old=False)
