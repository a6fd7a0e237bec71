"""PyTorch's ``meta`` device: tensors with a shape, a dtype, strides, ``requires_grad`` and a
graph, and no values. Models are built on it without memory (``with tga.device("meta"):
model = Net()``), then given memory (``model.to_empty(device="cpu")``,
``load_state_dict(sd, assign=True)``); a forward pass of meta inputs tells the shapes.

A meta tensor's array is a :class:`MetaArray`: a NumPy array of the tensor's shape and dtype
whose steps are all zero (one element of memory, whatever the shape), carrying the strides
the tensor has (``meta_strides``, PyTorch's CPU strides, which are its meta strides). Ops run
in ``Function.apply`` as on the CPU, on these arrays, and :func:`forward` hands back a
placeholder of the result's shape, dtype and strides; writes into a placeholder land in its
one element, so an in-place op changes metadata only. A view op (``view = True``) runs on a
*probe*: an array of the input's strides over one element of memory, which a view reads
nothing of, so that NumPy works out the view's strides as it does for real memory.

What needs values refuses, as PyTorch's: copying out (``.cpu()``, ``.tolist()``, ``nonzero``,
boolean masks, ``unique``: ``NotImplementedError``), ``.item()`` (``RuntimeError``).

An op computed from its inputs' values whose result's metadata does not depend on them (a
factorisation that checks for singularity, a sort on the host, a range check with ``item()``) runs
on stand-ins instead (:mod:`.meta_stand_ins`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.lib.stride_tricks import as_strided

from ..engine.layout import dense_order, dense_strides, is_non_overlapping_and_dense, row_major

#: PyTorch's message where values of a meta tensor are asked for (``.cpu()``, ``.tolist()``)
NO_DATA = "Cannot copy out of meta tensor; no data!"
#: PyTorch's message of ``.item()`` (and ``bool``, ``float``, ``int``) of a meta tensor
NO_ITEM = "Tensor.item() cannot be called on meta tensors"


class MetaArray(np.ndarray):
    """The array of a meta tensor: zero steps over one element, ``meta_strides`` the tensor's
    strides in elements. An array NumPy derives from one (a ufunc's result) has no
    ``meta_strides`` of its own (None): its real steps are its layout."""

    meta_strides: tuple[int, ...] | None = None

    def __array_finalize__(self, obj: Any) -> None:
        self.meta_strides = None


def placeholder(shape: Sequence[int], dtype: Any, strides: Sequence[int] | None = None) -> MetaArray:
    """A meta array of ``shape`` and ``dtype`` with the tensor strides ``strides`` (row-major
    without them). It holds one element whatever the shape."""
    shape = tuple(int(n) for n in shape)
    one = np.zeros(1, dtype=dtype)
    a = as_strided(one, shape, (0,) * len(shape), writeable=True).view(MetaArray)
    a.meta_strides = row_major(shape) if strides is None else tuple(int(s) for s in strides)
    return a


def is_meta_array(a: Any) -> bool:
    return a.__class__ is MetaArray and a.meta_strides is not None


def _tensor_strides(a: Any) -> tuple[int, ...]:
    """The strides in elements of an array (a meta one's: its ``meta_strides``)."""
    if a.__class__ is MetaArray and a.meta_strides is not None:
        return a.meta_strides
    if a.size == 0 or not hasattr(a, "strides"):
        return row_major(a.shape)
    return tuple(int(s) // a.itemsize for s in a.strides)


def _probe(a: Any) -> np.ndarray:
    """An array of ``a``'s shape, dtype and (tensor) strides over one element of memory: a view
    op run on it reads nothing, and its result's steps are the view's strides."""
    item = a.dtype.itemsize
    return as_strided(np.zeros(1, dtype=a.dtype), a.shape, tuple(s * item for s in _tensor_strides(a)))


def _resolved_shape(a: Any, shape: Any) -> tuple[int, ...]:
    return np.broadcast_to(np.zeros((), a.dtype), a.shape).reshape(shape).shape


def reshape(x: Any, /, shape: Any, *, copy: bool | None = None) -> Any:
    """The meta namespace's reshape: a view where the strides allow one (NumPy decides without
    reading), else a new row-major placeholder (a copy, which reads nothing either)."""
    try:
        return np.reshape(x, shape, copy=False)
    except ValueError:
        if copy is False:
            raise
        return placeholder(_resolved_shape(x, shape), x.dtype)


def matmul(a: Any, b: Any, /) -> Any:
    """The meta namespace's matrix product: a placeholder of the product's shape and dtype, NumPy's
    errors for operands that do not fit (the product itself would cost its full work on the zeros)."""
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError("matmul: Input operand does not have enough dimensions")
    ma = a.shape if a.ndim > 1 else (1, *a.shape)
    mb = b.shape if b.ndim > 1 else (*b.shape, 1)
    if ma[-1] != mb[-2]:
        raise ValueError(f"matmul: Input operand 1 has a mismatch in its core dimension 0 (size {mb[-2]} is "
                         f"different from {ma[-1]})")  # fmt: skip
    batch = np.broadcast_shapes(ma[:-2], mb[:-2])
    shape = (*batch, *ma[-2:-1][: a.ndim > 1], *mb[-1:][: b.ndim > 1])
    return placeholder(shape, np.result_type(a.dtype, b.dtype))


def reduction(reduce: Any) -> Any:
    """The meta namespace's ``reduce`` (sum, max, ...): the result's dtype from one element, its shape
    from the axes (the reduction itself would walk every element of the zeros)."""

    def reduced(x: Any, /, *, axis: Any = None, dtype: Any = None, keepdims: bool = False) -> Any:
        if 0 in x.shape:  # (an empty reduction: NumPy's answer, or its error, at no cost)
            return reduce(x, axis=axis, dtype=dtype, keepdims=keepdims)
        one = reduce(np.zeros((1,) * x.ndim, x.dtype), axis=axis, dtype=dtype, keepdims=keepdims)
        axes = range(x.ndim) if axis is None else [a % x.ndim for a in ((axis,) if np.ndim(axis) == 0 else axis)]
        shape = tuple(n if i not in axes else 1 for i, n in enumerate(x.shape)) if keepdims else tuple(
            n for i, n in enumerate(x.shape) if i not in axes)  # fmt: skip
        return placeholder(shape, np.asarray(one).dtype)

    return reduced


def _pointwise_strides(shape: tuple[int, ...], operands: Sequence[Any]) -> tuple[int, ...]:
    """The strides of a pointwise result of ``operands``, as PyTorch's TensorIterator gives them
    (engine.layout.of_operands, on strides alone)."""
    arrays = [a for a in operands if getattr(a, "ndim", 0)]
    strides = []
    for a in arrays:
        pad = len(shape) - a.ndim
        if pad < 0:
            return row_major(shape)
        st = _tensor_strides(a)
        strides.append((0,) * pad + tuple(0 if n == 1 and shape[pad + i] != 1 else abs(st[i])
                                          for i, n in enumerate(a.shape)))  # fmt: skip
    return dense_strides(shape, dense_order(shape, strides))


def forward(fn: Any, ns: Any, datas: Sequence[Any]) -> MetaArray:
    """Op ``fn``'s result on meta arrays ``datas``: a placeholder of its shape, dtype and strides."""
    cls = type(fn)
    refusal = getattr(cls, "meta_refusal", None)
    if refusal is not None:
        raise refusal[0](refusal[1])
    first = datas[0] if datas else None
    if cls.view and isinstance(first, np.ndarray):
        out = fn.forward(ns, _probe(first), *datas[1:])
        strides = _tensor_strides(out)
    elif cls.elementwise is not None:  # (pointwise: its dtype from one element of each operand, its shape broadcast)
        shape = np.broadcast_shapes(*(a.shape for a in datas if hasattr(a, "shape")))
        one = fn.forward(ns, *(np.zeros((1,) * a.ndim, a.dtype) if hasattr(a, "shape") else a for a in datas))
        out = np.broadcast_to(np.asarray(one), shape)
        strides = _pointwise_strides(shape, datas) if len(shape) > 1 else row_major(shape)
    else:
        out = fn.forward(ns, *datas)
        if is_meta_array(out):
            return out
        out = np.asarray(out) if not hasattr(out, "shape") else out
        shape = tuple(out.shape)
        if cls.laid_out_as is not None and len(shape) > 1:
            strides = _pointwise_strides(shape, datas[cls.laid_out_as])
        else:
            strides = _tensor_strides(out)
            if not is_non_overlapping_and_dense(shape, strides) or any(s < 0 for s in strides):
                strides = row_major(shape)
    return placeholder(out.shape, out.dtype, strides)
