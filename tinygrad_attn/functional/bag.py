"""PyTorch's ``F.embedding_bag``: the sum, mean or max of each bag of embedding rows,
written from the embedding lookup, an index gather into a padded ``(bags, longest, dim)``
block and a masked reduction, so the weight's gradient is autograd's scatter-add.
``tinygrad_attn.functional`` re-exports it.

>>> F.embedding_bag(ids, weight, offsets, mode="sum")  # doctest: +SKIP  (ids: (M,), offsets: (B,))
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..engine.composite import composite
from ..engine.declare import accepts, public
from ..engine.forward_grads import refuse_tangents
from ..engine.switches import no_grad
from ..ops.saved import with_gradient_of
from ..tensors._tensor import InvalidArgumentError, Tensor, UnsupportedModeError, where
from ..tensors.index.indexing import host_integers
from .checks import same_dtype

_MODES = ("sum", "mean", "max")


def _bags(op: str, ids: np.ndarray, offsets: Any, include_last_offset: bool) -> tuple[np.ndarray, np.ndarray]:
    """Each bag's (start, end) in the flat ids: rows of a 2-D input, or the runs ``offsets`` mark."""
    if ids.ndim == 2:
        if offsets is not None:
            raise ValueError(
                "if input is 2D, then offsets has to be None, as input is treated is a mini-batch of fixed length "
                f"sequences. However, found offsets of type {type(offsets)}"
            )
        b, length = ids.shape
        starts = np.arange(b) * length
        return starts, starts + length
    if ids.ndim != 1:
        raise ValueError(f"{op}: input has to be 1D or 2D Tensor, but got Tensor of dimension {ids.ndim}")
    if offsets is None:
        raise ValueError("offsets has to be a 1D Tensor but got None")
    off = host_integers(offsets, op, "offsets")
    if off.ndim != 1:
        raise ValueError(f"offsets has to be a 1D Tensor, but got Tensor of dimension {off.ndim}")
    if include_last_offset:
        return off[:-1], off[1:]
    return off, np.append(off[1:], ids.size)


def _check_offsets(op: str, ids: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> None:
    """PyTorch's kernel's checks of the bags' offsets (after its Python's, and after ``max_norm``)."""
    if ids.ndim != 1 or not starts.size and not ends.size:
        return
    off = np.append(starts, ends[-1:])
    if off.size and off[0] != 0:
        raise InvalidArgumentError(f"{op}: offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to "
                                   f"start from position 0. However, got {off[0]}")  # fmt: skip
    if np.any(off > ids.size) or np.any(np.diff(off) < 0):
        raise InvalidArgumentError(f"{op}: offsets must be non-decreasing and at most the input's length {ids.size}")


@public(function=False, functional=True)
@accepts("floating", ("weight",))
@composite("embedding_bag")
def embedding_bag(input: Any, weight: Tensor, offsets: Any = None, max_norm: float | None = None,  # noqa: A002
                  norm_type: float = 2, scale_grad_by_freq: bool = False, mode: str = "mean", sparse: bool = False,
                  per_sample_weights: Tensor | None = None, include_last_offset: bool = False,
                  padding_idx: int | None = None) -> Tensor:  # fmt: skip
    """``(B, dim)``: for each bag of ids (a row of a 2-D ``input``, or a run of a 1-D one
    starting at each ``offsets``), the ``mode`` (``"sum"``, ``"mean"`` or ``"max"``) of its
    rows of ``weight (num, dim)``; ``per_sample_weights`` scales each id's row (``"sum"``
    only); ids equal to ``padding_idx`` are left out; an empty bag gives zeros. PyTorch's
    ``F.embedding_bag``; ``scale_grad_by_freq`` divides the gradient as PyTorch's CPU kernel does (see
    :func:`_frequency_divisors`). ``sparse=True`` (a sparse gradient) is not supported: no sparse layout here."""
    refuse_tangents("_embedding_bag", weight, per_sample_weights)
    op = "embedding_bag"
    if mode not in _MODES:
        raise ValueError(f"{op}: mode has to be one of sum, mean or max, got {mode!r}")
    if sparse:
        raise UnsupportedModeError(
            f"{op}: sparse=True (PyTorch's gradient is then a sparse_coo tensor, and sparse layouts are not supported "
            "here); use sparse=False, whose dense gradient holds the same values"
        )
    if scale_grad_by_freq and mode == "max":
        raise ValueError("max mode does not support scaling the gradient by the frequency")
    if not isinstance(weight, Tensor) or weight.ndim != 2:
        raise InvalidArgumentError(f"{op}: weight must be a 2-D (num_embeddings, embedding_dim) tensor")
    ids = host_integers(input, op, "input (indices)")
    if per_sample_weights is not None and tuple(per_sample_weights.shape) != ids.shape:
        raise ValueError(
            f"embedding_bag: If per_sample_weights ({tuple(per_sample_weights.shape)}) is not None, then it must "
            f"have the same shape as the input ({tuple(ids.shape)})"
        )
    starts, ends = _bags(op, ids, offsets, include_last_offset)
    flat = ids.reshape(-1)
    n, dim = weight.shape
    if padding_idx is not None:
        if not -n <= padding_idx < n:
            raise InvalidArgumentError(f"{op}: padding_idx {padding_idx} must be within [-{n}, {n})")
        padding_idx %= n
    b = starts.size
    longest = int((ends - starts).max()) if b else 0
    if flat.size and (flat.min() < 0 or flat.max() >= n):
        bad = flat.min() if flat.min() < 0 else flat.max()
        from ..tensors.tensor_functions import IndexRangeError  # noqa: PLC0415 - (imports this package)

        raise IndexRangeError(f"{op}: index {bad} is out of range for a weight of {n} rows")
    dev = weight._dev
    if max_norm is not None and flat.size:
        _renorm_rows(weight, np.unique(flat), float(max_norm), float(norm_type))
    # (PyTorch's Python renormalises the rows before it refuses the weights of a mode other than sum)
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(
            f"embedding_bag: per_sample_weights was not None. per_sample_weights is only supported for mode='sum' "
            f"(got mode='{mode}'). Please open a feature request on GitHub."
        )
    same_dtype(op, weight, ("per_sample_weights", per_sample_weights))  # (PyTorch's kernel promotes none)
    _check_offsets(op, ids, starts, ends)
    if b == 0 or longest == 0 or flat.size == 0:  # zeros, on the weight's graph (its gradient: zeros)
        zero = weight[:0].sum(0)
        if per_sample_weights is not None:
            zero = zero + per_sample_weights.reshape(-1)[:0].sum()
        return zero.expand(b, dim).contiguous()
    rows = weight.index_select(0, Tensor._wrap(dev.asarray(flat), dev))  # (M, dim)
    if scale_grad_by_freq and rows.requires_grad:
        scale = (1.0 / _frequency_divisors(flat)).astype(weight.dtype).reshape(-1, 1)
        rows = with_gradient_of(rows, rows * Tensor._wrap(dev.asarray(scale), dev))
    if per_sample_weights is not None:
        rows = rows * per_sample_weights.reshape(-1, 1)
    # (B, L): the flat position of each bag's l-th id, and whether it is one (not past the bag, not padding)
    where_ = starts.reshape(b, 1) + np.arange(longest).reshape(1, longest)
    valid = where_ < ends.reshape(b, 1)
    where_ = np.where(valid, where_, 0)
    if padding_idx is not None:
        valid &= flat[where_] != padding_idx
    block = rows.index_select(0, Tensor._wrap(dev.asarray(where_.reshape(-1)), dev)).reshape(b, longest, dim)
    mask = Tensor._wrap(dev.asarray(valid.reshape(b, longest, 1)), dev)
    count = valid.sum(1)
    if mode == "max":
        picked = where(mask, block, -math.inf)
        first = picked.argmax(1).unsqueeze(1)  # (B, 1, dim): the first maximum gets the gradient
        out = picked.gather(1, first).squeeze(1)
        return where(Tensor._wrap(dev.asarray(count.reshape(b, 1) > 0), dev), out, 0.0)
    out = where(mask, block, 0.0).sum(1)
    if mode == "mean":
        scale = (1.0 / np.maximum(count, 1)).astype(weight.dtype).reshape(b, 1)
        out = out * Tensor._wrap(dev.asarray(scale), dev)
    return out


def _frequency_divisors(flat: np.ndarray) -> np.ndarray:
    """What PyTorch's CPU ``embedding_bag`` divides each id's gradient by under ``scale_grad_by_freq``.

    Its backward walks the distinct ids in sorted order and divides the ``k``-th one's gradient by the
    count of ``sorted_ids[k]`` (the ``k``-th entry of the sorted ids, not the ``k``-th distinct id): for
    ids ``[1, 1, 3, 1, 4, 3]`` every row's gradient is divided by 3 (``counts[1]``), where
    ``F.embedding``'s would be divided by 3, 2 and 1. The numbers are PyTorch's, so this is that rule."""
    distinct, group, counts = np.unique(flat, return_inverse=True, return_counts=True)
    sorted_ids = np.sort(flat)
    divisor_of_group = counts[np.searchsorted(distinct, sorted_ids[: distinct.size])]
    return divisor_of_group[group.reshape(-1)].astype(np.float64)


def _renorm_rows(weight: Tensor, rows: np.ndarray, max_norm: float, norm_type: float) -> None:
    """PyTorch's ``max_norm``: each of ``rows`` whose ``norm_type``-norm exceeds ``max_norm``
    scaled down to it, in place, outside the graph."""
    idx = Tensor._wrap(weight._dev.asarray(rows), weight._dev)
    with no_grad():
        picked = weight.index_select(0, idx)
        norms = picked.norm(p=norm_type, dim=1, keepdim=True)
        scale = where(norms > max_norm, max_norm / (norms + 1e-7), 1.0)
        weight[idx] = picked * scale
