"""Similarities and distances between vectors with PyTorch's signatures: ``F.cosine_similarity``,
``F.pairwise_distance`` and ``F.pdist`` (also ``tga.cosine_similarity``, ``tga.pairwise_distance`` and the
modules ``nn.CosineSimilarity``, ``nn.PairwiseDistance``), written from primitive ops.

``tinygrad_attn.functional`` re-exports every public name.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..engine.declare import check_dtype, low_precision, public
from ..engine.forward_grads import refuse_tangents
from ..engine.switches import no_grad
from ..ops.saved import saved_for_backward
from ..tensors._tensor import InvalidArgumentError, Tensor, where
from ..tensors.dtypes import UnsupportedDtypeError
from .checks import tensor_arg


def _operands(op: str, x1: Any, x2: Any) -> tuple[Tensor, Tensor, tuple[int, ...]]:
    """``x1``, ``x2`` checked to be tensors that broadcast together, and their common shape."""
    x1, x2 = tensor_arg(x1, op), tensor_arg(x2, op)
    try:
        return x1, x2, np.broadcast_shapes(tuple(x1.shape), tuple(x2.shape))
    except ValueError:
        raise InvalidArgumentError(
            f"{op}: x1 {tuple(x1.shape)} and x2 {tuple(x2.shape)} do not broadcast together"
        ) from None


@public(functional=True)
def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-8) -> Tensor:
    """The cosine of the angle between ``x1`` and ``x2`` along ``dim`` (broadcast together),
    as PyTorch computes it: each divided by its norm clamped to at least ``eps``, then the dot
    product (the clamp, as PyTorch's, changes values and not gradients).

    >>> F.cosine_similarity(tga.tensor([[1.0, 0.0]]), tga.tensor([[1.0, 1.0]]))  # doctest: +SKIP
    Tensor([0.7071])
    """
    x1, x2, shape = _operands("cosine_similarity", x1, x2)
    if x1.dtype.kind != "f" and x2.dtype.kind != "f":
        raise UnsupportedDtypeError(f"cosine_similarity: expected common dtype to be floating point, got {x1.dtype} "
                                    f"and {x2.dtype}")  # fmt: skip
    if x1.dtype.kind not in "fc" or x2.dtype.kind not in "fc":  # (as PyTorch: an integer takes the other's dtype)
        common = x1.dtype if x1.dtype.kind in "fc" else x2.dtype
        x1, x2 = (x if x.dtype.kind in "fc" else x.astype(common) for x in (x1, x2))
    x1, x2 = x1.broadcast_to(shape), x2.broadcast_to(shape)
    n1 = _clamped(x1.norm(dim=dim, keepdim=True), eps)
    n2 = _clamped(x2.norm(dim=dim, keepdim=True), eps)
    return ((x1 / n1) * (x2 / n2)).sum(dim)


def _clamped(n: Tensor, eps: float) -> Tensor:
    """``n`` at least ``eps`` in value, with ``n``'s gradient (PyTorch clamps the norm in place
    under ``no_grad``)."""
    with no_grad():
        lift = n.clamp_min(eps) - n
    return n + lift


@public(functional=True)
def pairwise_distance(x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False) -> Tensor:
    """The ``p``-norm of ``x1 - x2 + eps`` along the last axis (broadcast together), as PyTorch's.

    >>> F.pairwise_distance(tga.tensor([[0.0, 0.0]]), tga.tensor([[3.0, 4.0]]))  # doctest: +SKIP
    Tensor([5.0000])
    """
    x1, x2, _ = _operands("pairwise_distance", x1, x2)
    return (x1 - x2 + eps).norm(p=p, dim=-1, keepdim=keepdim)


def _pnorm(d: Tensor, p: float) -> Tensor:
    """The ``p``-norm over the last axis whose gradient is 0 where the norm is 0 (PyTorch's convention)."""
    if p == float("inf"):
        return d.abs().amax(-1) if d.shape[-1] else d.abs().sum(-1)
    a = d.abs()
    if p == 1:
        return a.sum(-1)
    if p < 1:  # |d|**p has an infinite slope at 0; PyTorch's gradient there is 0
        flat = a == 0
        s = where(flat, 0.0, where(flat, 1.0, a) ** p).sum(-1)
    else:
        s = (a**p).sum(-1)
    zero = s == 0
    safe = where(zero, 1.0, s)
    return where(zero, 0.0, safe ** (1.0 / p))


@public(function=True, functional=True)
def pdist(input: Tensor, p: float = 2.0) -> Tensor:
    """The ``p``-norm distance between every pair of rows ``i < j`` of ``input`` ``(N, M)``: a
    ``(N * (N - 1) / 2,)`` tensor in row-major order of the pairs, as PyTorch's ``F.pdist``
    (the upper triangle of ``cdist(input, input, p)``; a zero distance has gradient 0).

    >>> F.pdist(tga.tensor([[0.0, 0.0], [3.0, 4.0], [0.0, 1.0]]))  # doctest: +SKIP
    Tensor([5.0000, 1.0000, 4.2426])
    """
    refuse_tangents("_pdist_forward", input)
    x = tensor_arg(input, "pdist")
    if x.ndim != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {x.ndim}D")
    if x.dtype.kind != "f":
        raise RuntimeError("pdist only supports floating-point dtypes")
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    if low_precision(x) and x.shape[0] > 1 and x.shape[1]:  # (PyTorch's kernel, run where a pair has coordinates)
        check_dtype("pdist", x, "float3264")
    i, j = np.triu_indices(x.shape[0], 1)
    dev = x._dev
    diff = x.index_select(0, Tensor._wrap(dev.asarray(i), dev)) - x.index_select(0, Tensor._wrap(dev.asarray(j), dev))
    out = diff.abs().sign().sum(-1) if p == 0 else _pnorm(diff, float(p))  # (pairs, M) -> (pairs,)
    return saved_for_backward(out, x, output=True)  # (what PyTorch's keeps: the input and the distances)
