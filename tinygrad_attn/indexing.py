"""``tensor[key]`` with NumPy's rules, built from two primitives: Slice and Gather.

Basic parts of the key (ints, slices, ``...``, ``None``) become one ``Slice`` and a
reshape; integer index arrays (lists, NumPy arrays, tensors) become one ``Gather`` over
the merged indexed axes; a boolean mask becomes the gather of its true positions.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from . import ops
from ._tensor import Tensor


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

    Float tensors that hold whole numbers are accepted, since lists become float32.
    """
    host = ids.numpy() if isinstance(ids, Tensor) else np.asarray(ids)
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
    if idx.dtype.kind == "f":  # float tensors (the default for lists) that hold integers
        host = idx.numpy()
        if not np.all(host == np.round(host)):
            raise IndexError("getitem: index arrays must hold integers")
        idx = idx.astype(np.int64)
    elif idx.dtype.kind not in "iu":
        raise IndexError(f"getitem: index arrays must be integers, got {idx.dtype}")
    xp = x._dev.ops
    a = idx.data
    if a.dtype != x._dev.dtype(np.int64):
        a = xp.astype(a, x._dev.dtype(np.int64))
    if math.prod(a.shape):
        lo, hi = int(xp.min(a)), int(xp.max(a))
        if lo < -size or hi >= size:
            bad = hi if hi >= size else lo
            raise IndexError(f"getitem: index {bad} is out of range for an axis of size {size} (shape {x.shape})")
        if lo < 0:
            a = xp.where(a < 0, a + size, a)
    return a


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
                    f"{axis + len(shape) - 1} of shape {covered} it indexes (tensor of shape {x.shape})"
                )
            axis += len(shape)
        else:
            axis += 1


def getitem(x: Tensor, key: Any) -> Tensor:
    if not isinstance(key, tuple):
        key = (key,)
    if any(_is_bool_array(k) for k in key):
        _check_bool_masks(x, key)
    key = tuple(_bool_to_int(k, x) if _is_bool_array(k) else k for k in key)
    key = tuple(k for part in key for k in (part if isinstance(part, _Split) else (part,)))
    key = _expand_ellipsis(key, x.ndim)
    if not any(_is_index_array(k) for k in key):
        return _basic(x, key)
    return _advanced(x, key)


class _Split(tuple):
    """A boolean mask turned into one index array per axis it covers."""


def _bool_to_int(k: Any, x: Tensor) -> _Split:
    mask = k.numpy() if isinstance(k, Tensor) else np.asarray(k)
    return _Split(np.nonzero(mask))


def _basic(x: Tensor, key: tuple) -> Tensor:
    """Ints, slices and ``None``: one Slice, then a reshape for the new axes."""
    plain = tuple(k for k in key if k is not None)
    for k, s in zip([k for k in plain], x.shape):
        if isinstance(k, (int, np.integer)) and not -s <= k < s:
            raise IndexError(f"getitem: index {k} is out of range for an axis of size {s} (shape {x.shape})")
    if all(isinstance(k, slice) and k == slice(None) for k in plain):
        out = x
    else:
        plain = tuple(
            int(k) if isinstance(k, (int, np.integer)) else _in_bounds(k, s) if isinstance(k, slice) else k
            for k, s in zip(plain, x.shape)
        )
        out = ops.Slice.apply(x, args=plain)
    if len(plain) != len(key):  # ``None`` entries: new axes of size 1
        it = iter(out.shape)
        shape = []
        for k in key:
            if k is None:
                shape.append(1)
            elif isinstance(k, slice):
                shape.append(next(it))
        out = out.reshape(tuple(shape))
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
    if any(k is None for k in key):
        raise IndexError("getitem: None cannot be mixed with index arrays; index first, then unsqueeze")
    adv = [i for i, k in enumerate(key) if not isinstance(k, slice)]
    # First the slices, with full slices on the indexed axes.
    out = _basic(x, tuple(slice(None) if i in adv else k for i, k in enumerate(key)))
    idx = [_index_array(key[i], out, out.shape[i]) for i in adv]
    xp = out._dev.ops
    shapes = [tuple(a.shape) for a in idx]
    try:
        bshape = np.broadcast_shapes(*shapes)
    except ValueError as e:
        raise IndexError(f"getitem: index arrays of shapes {shapes} do not broadcast together") from e
    idx = [xp.broadcast_to(a, bshape) for a in idx]
    consecutive = adv == list(range(adv[0], adv[0] + len(adv)))
    if not consecutive:  # NumPy puts the indexed axes first in this case
        rest = [i for i in range(out.ndim) if i not in adv]
        out = out.permute(*adv, *rest)
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
