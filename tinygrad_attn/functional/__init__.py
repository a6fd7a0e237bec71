"""Neural-net functions, each written once from primitive ops.

Every function here that ``tga.decompose()`` names is a *composite*: its body is its
definition in primitives, and ``tinygrad_attn.ops.fused`` may hold a one-node fast path
that the tests keep equal to it. Inside ``tga.decompose()`` the body always runs, in a
scope named after the function, so graph pictures show each primitive grouped under it.

A function of ``F`` is declared once, beside its definition, with
``@public(functional=True)`` (``function=False`` when ``tga.`` has no such name); this
module and every module of this package are imported, and ``F`` and its ``__all__`` are made
from those declarations at the end of this file.
"""

from __future__ import annotations

import functools
import math
import numbers
from typing import Any

import numpy as np

from ..engine import declare as _declare
from ..engine.arguments import missing, refuse
from ..engine.composite import composite, recorded_as
from ..engine.declare import accepts, check_dtype, public
from ..engine.forward_grads import differentiated, refuse_tangents
from ..engine.layout import result_in_format_of, row_major_result
from ..engine.overrides import dispatching as _dispatching
from ..engine.spellings import keeps_old_spellings
from ..engine.switches import _State, scope, tracing
from ..engine.versions import _memory_root
from ..engine.warn import warn as _user_warn
from ..ops import fused
from ..ops.array_function import array_function
from ..ops.elementwise import BinaryCrossEntropyWithLogitsEdge
from ..ops.index import Take as _Take  # (embedding while tracing)
from ..ops.saved import BinaryCrossEntropyEdge, saved_for_backward
from ..random import draw, memory_order
from ..runtime.meta_stand_ins import stand_in
from ..tensors import dtypes as _dtypes
from ..tensors._tensor import InvalidArgumentError, Tensor, UnsupportedModeError, mask_dtype, where
from ..tensors.dtypes import OperandDtypeError, finfo
from ..tensors.index.indexing import host_integers
from ..tensors.mutation.inplace import cast_error
from ..tensors.shape import dims
from .activations import _expm1_negative, _in_place, _softplus_stable
from .checks import (
    _as_operand,
    _broadcast_to_input,
    _computed_together,
    _float,
    _pad_constant,
    _reduce,
    _reduction,
    _same_shape,
    implicit_dim,
    not_differentiable,
    same_dtype,
    tensor_arg,
    written_to_out,
)


def _axis(x: Tensor, axis: int, op: str) -> int:
    return dims.one(x.shape, axis, op)  # (a 0-d tensor takes 0 and -1, as in PyTorch)


def _degenerate(x: Tensor, axis: int, op: str) -> bool:
    """Whether softmax-like ``op`` over ``axis`` needs no reduction: a 0-d tensor (one
    element: the row is itself) or an empty tensor (nothing to normalise; the max of an
    empty axis would fail)."""
    _axis(x, axis, op)
    return x.ndim == 0 or x.numel() == 0


def _degenerate_result(x: Tensor, lone: Tensor) -> Tensor:
    """A softmax-like op's result where :func:`_degenerate`: ``lone`` (written from ``x - x``, so an
    infinite or NaN element gives NaN, and so does its gradient, as PyTorch's formula on such a result)
    for a 0-d ``x``; for an empty one, its gradient a function of ``x`` under ``create_graph=True``,
    as PyTorch's. Its result is kept, as the fused op's and PyTorch's: changing it in place raises."""
    if x.ndim == 0:
        return saved_for_backward(lone, output=True)
    return saved_for_backward(x * 0.0, x, piecewise=True)


# -- softmax family ----------------------------------------------------------------
def _dim(x: Tensor, axis: int | None, dim: int | None, op: str, *, warn: bool = True) -> int:
    """PyTorch's ``dim=`` and NumPy's ``axis=`` name the same thing; with neither, PyTorch's
    legacy choice, with its warning unless ``warn`` is False (see :func:`implicit_dim`)."""
    d = dims.alias(axis, dim, op)
    return implicit_dim(x.ndim, op, warn=warn) if d is None else d


def _softmax_fused(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype: Any = None, *,
                   axis: int | None = None) -> Tensor | None:  # fmt: skip
    x = input if dtype is None else input.astype(dtype)
    _float(x, "softmax")
    implicit = dim is None and axis is None
    axis = _dim(x, axis, dim, "softmax", warn=False)
    if _degenerate(x, axis, "softmax"):
        return None  # the definition handles it (and warns of an implicit dim)
    if implicit:
        implicit_dim(x.ndim, "softmax")
    return fused.SoftmaxAlongDim.apply(x, args=_axis(x, axis, "softmax"))


@public(function=False, functional=True)
@composite("softmax", _softmax_fused)
def softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype: Any = None, *,
            axis: int | None = None) -> Tensor:  # fmt: skip
    """``exp(x) / sum(exp(x))`` along ``axis`` (or PyTorch's ``dim``; without either, PyTorch's legacy axis),
    shifted by the max so it never overflows; ``dtype`` casts ``input`` first, as in PyTorch."""
    x = input if dtype is None else input.astype(dtype)
    axis = _dim(x, axis, dim, "softmax")
    if _degenerate(x, axis, "softmax"):  # 1 for a lone element (0-d), nothing for an empty tensor
        return _degenerate_result(x, (x - x).exp())
    e = (x - x.max(axis, keepdims=True)).exp()
    return e / e.sum(axis, keepdims=True)


def _log_softmax_fused(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype: Any = None, *,
                       axis: int | None = None) -> Tensor | None:  # fmt: skip
    x = input if dtype is None else input.astype(dtype)
    _float(x, "log_softmax")
    implicit = dim is None and axis is None
    axis = _dim(x, axis, dim, "log_softmax", warn=False)
    if _degenerate(x, axis, "log_softmax"):
        return None  # the definition handles it (and warns of an implicit dim)
    if implicit:
        implicit_dim(x.ndim, "log_softmax")
    return fused.LogSoftmaxAlongDim.apply(x, args=_axis(x, axis, "log_softmax"))


@public(function=False, functional=True)
@composite("log_softmax", _log_softmax_fused)
def log_softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype: Any = None, *,
                axis: int | None = None) -> Tensor:  # fmt: skip
    """``x - logsumexp(x)`` along ``axis`` (or PyTorch's ``dim``; without either, PyTorch's legacy axis);
    ``dtype`` casts ``input`` first, as in PyTorch."""
    x = input if dtype is None else input.astype(dtype)
    axis = _dim(x, axis, dim, "log_softmax")
    if _degenerate(x, axis, "log_softmax"):  # log 1 = 0 for a lone element (0-d); empty stays empty
        return _degenerate_result(x, (x - x) - (x - x).exp().log())
    z = x - x.max(axis, keepdims=True)
    return z - z.exp().sum(axis, keepdims=True).log()


#: ``dim`` left out of ``torch.softmax`` / ``x.softmax`` (``F.softmax``'s may be: PyTorch's legacy axis)
_NO_DIM: Any = object()


def _aten_dim(op: str, dim: Any, dtype: Any, axis: Any) -> None:
    """PyTorch's errors of ``torch.softmax(input, dim, dtype=None)``, whose ``dim`` is required and whose
    ``dtype`` is a dtype (``F.softmax``'s third argument is a stack level)."""
    if dim is _NO_DIM and axis is None:
        raise missing(op, "dim")
    if dtype is not None and isinstance(dtype, (numbers.Number, Tensor, list, tuple, np.ndarray)):
        raise TypeError(f"{op}(): argument 'dtype' must be torch.dtype, not {type(dtype).__name__}")


@public(method=True, special=("softmax",), name="softmax")
def _softmax_aten(input: Tensor, dim: int = _NO_DIM, dtype: Any = None, *, axis: int | None = None) -> Tensor:  # noqa: A002
    """``torch.softmax`` and ``x.softmax``: :func:`softmax` with ``dim`` required, as PyTorch's."""
    _aten_dim("softmax", dim, dtype, axis)
    return softmax(input, None if dim is _NO_DIM else dim, dtype=dtype, axis=axis)


@public(method=True, special=("log_softmax",), name="log_softmax")
def _log_softmax_aten(input: Tensor, dim: int = _NO_DIM, dtype: Any = None, *, axis: int | None = None) -> Tensor:  # noqa: A002
    """``torch.log_softmax`` and ``x.log_softmax``: :func:`log_softmax` with ``dim`` required, as PyTorch's."""
    _aten_dim("log_softmax", dim, dtype, axis)
    return log_softmax(input, None if dim is _NO_DIM else dim, dtype=dtype, axis=axis)


def _masked_softmax_fused(x: Tensor, mask: Any, dim: int = -1) -> Tensor | None:
    _float(x, "masked_softmax")
    mask = _softmax_mask(x, mask)
    if np.broadcast_shapes(x.shape, mask.shape) != x.shape or _degenerate(x, dim, "masked_softmax"):
        return None  # (a mask that broadcasts x, a 0-d or empty x: the definition handles it)
    return fused.MaskedSoftmax.apply(x, mask, args=_axis(x, dim, "masked_softmax"))


def _softmax_mask(x: Tensor, mask: Any) -> Tensor:
    mask = mask if isinstance(mask, Tensor) else Tensor(np.asarray(mask), device=x.device)
    if mask.dtype != np.bool_:
        raise TypeError(f"masked_softmax: mask must be bool (True where allowed), got {mask.dtype}")
    try:
        np.broadcast_shapes(x.shape, mask.shape)
    except ValueError:
        raise ValueError(
            f"masked_softmax: mask {tuple(mask.shape)} does not broadcast with input {tuple(x.shape)}"
        ) from None
    return mask


@public(function=False, functional=True)
@composite("masked_softmax", _masked_softmax_fused)
def masked_softmax(x: Tensor, mask: Any, dim: int = -1) -> Tensor:
    """Softmax along ``dim`` over the positions where ``mask`` (bool, broadcastable with
    ``x``) is True, 0 at the others, and 0 in a whole row where none is (a query with no
    key to attend gets no weight, not NaN): attention's weights over padded keys.

    >>> masked_softmax(Tensor([[1.0, 2.0, 3.0]]), Tensor([[True, True, False]])).numpy().round(3)
    array([[0.269, 0.731, 0.   ]])
    """
    mask = _softmax_mask(x, mask)
    return where(mask, softmax(where(mask, x, fused.MASKED_FILL), dim), 0.0)


def _check_additive(query: Tensor, keys: Tensor, v: Tensor) -> None:
    for t, what in ((query, "query"), (keys, "keys"), (v, "v")):
        if not isinstance(t, Tensor):
            raise TypeError(f"additive_score: {what} must be a Tensor, got {type(t).__name__}")
        _float(t, "additive_score")
    h = query.shape[-1] if query.ndim else None
    ok = query.ndim >= 2 and keys.ndim >= 2 and keys.shape[-1] == h and math.prod(v.shape) == h
    try:
        np.broadcast_shapes(query.shape[:-2], keys.shape[:-2])
    except ValueError:
        ok = False
    if not ok:
        raise ValueError(
            f"additive_score: query {tuple(query.shape)}, keys {tuple(keys.shape)} and v {tuple(v.shape)} do not fit; need "
            "query (..., Tq, h), keys (..., Tk, h) with broadcastable leading axes, and h weights in v"
        )


def _additive_score_fused(query: Tensor, keys: Tensor, v: Tensor) -> Tensor:
    _check_additive(query, keys, v)
    return fused.AdditiveScore.apply(query, keys, v)


@public(function=False, functional=True)
@composite("additive_score", _additive_score_fused)
def additive_score(query: Tensor, keys: Tensor, v: Tensor) -> Tensor:
    """Bahdanau's score ``v . tanh(q_i + k_j)`` of every pair of ``query`` ``(..., Tq, h)``
    and ``keys`` ``(..., Tk, h)``, both projected already (``W q``, ``U k``); ``v`` holds
    ``h`` weights (``(h,)``, or a ``Linear(h, 1)``'s ``(1, h)`` weight). Returns ``(..., Tq,
    Tk)``, in one node.

    >>> additive_score(Tensor.ones(1, 2, 3), Tensor.zeros(1, 4, 3), Tensor.ones(3)).shape
    (1, 2, 4)
    """
    _check_additive(query, keys, v)
    return (query.unsqueeze(-2) + keys.unsqueeze(-3)).tanh() @ v.reshape(-1)


# -- linear maps -------------------------------------------------------------------------
def _check_linear(x: Tensor, weight: Tensor, bias: Tensor | None) -> None:
    for t, what in ((x, "input"), (weight, "weight")):
        if not isinstance(t, Tensor):
            raise TypeError(f"linear: {what} must be a Tensor, got {type(t).__name__}; make one with tga.tensor(...)")
    ok = weight.ndim == 2 and x.ndim >= 1 and x.shape[-1] == weight.shape[1]
    if not ok or (bias is not None and bias.shape != (weight.shape[0],)):
        raise InvalidArgumentError(
            f"linear: input {tuple(x.shape)}, weight {tuple(weight.shape)} and bias {None if bias is None else bias.shape} "
            "do not fit; need input (..., in), weight (out, in), bias (out,)"
        )
    if x.dtype != weight.dtype or (bias is not None and bias.dtype != weight.dtype):  # (PyTorch promotes none)
        raise RuntimeError(
            f"linear: input, weight and bias must have the same dtype, but got {x.dtype}, {weight.dtype} and "
            f"{None if bias is None else bias.dtype}; convert the input with .to(weight.dtype)"
        )


def _linear_fused(x: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    _check_linear(x, weight, bias)
    return fused.Affine.apply(x, weight, bias)


@public(function=False, functional=True)
@accepts("numeric")
@composite("linear", _linear_fused)
def linear(x: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """``x @ weight.mT + bias``, with ``weight`` of shape ``(out, in)`` as in PyTorch.

    >>> F.linear(x, w, b)  # doctest: +SKIP  (x: (B, T, in), w: (out, in), b: (out,))
    """
    _check_linear(x, weight, bias)
    y = x @ weight.mT
    return y + bias if bias is not None else y


# -- normalisation and activations -----------------------------------------------------
def _check_affine(x: Tensor, t: Tensor | None, what: str) -> None:
    if t is not None and t.shape != (x.shape[-1],):
        raise ValueError(
            f"layer_norm: {what} has shape {tuple(t.shape)}, expected ({x.shape[-1]},) for input {tuple(x.shape)}"
        )
    same_dtype("layer_norm", x, (what, t), float16_input=True)


def _layer_norm_fused(x: Tensor, weight: Tensor | None = None, bias: Tensor | None = None,
                      eps: float = 1e-5) -> Tensor:  # fmt: skip
    _float(x, "layer_norm")
    _check_affine(x, weight, "weight")
    _check_affine(x, bias, "bias")
    return fused.LayerNormalization.apply(x, weight, bias, args=float(eps))


@public(name="layer_norm", function=False, method=True)
@composite("layer_norm", _layer_norm_fused)
def _layer_norm_last(x: Tensor, weight: Tensor | None = None, bias: Tensor | None = None, eps: float = 1e-5) -> Tensor:
    """Normalise the last axis to mean 0 and variance 1, then ``* weight + bias``."""
    _check_affine(x, weight, "weight")
    _check_affine(x, bias, "bias")
    xc = x - x.mean(-1, keepdims=True)
    y = xc / ((xc * xc).mean(-1, keepdims=True) + eps).sqrt()
    if weight is not None:
        y = y * weight
    if bias is not None:
        y = y + bias
    return y if y.dtype == x.dtype else y.to(x.dtype)  # (float16 with float32 parameters: float16, as PyTorch's)


@public(function=True, functional=True)
def layer_norm(input: Tensor, normalized_shape: Any, weight: Tensor | None = None,  # noqa: A002
               bias: Tensor | None = None, eps: float = 1e-5) -> Tensor:  # fmt: skip
    """PyTorch's ``layer_norm``: normalise the trailing ``normalized_shape`` axes together to
    mean 0 and variance 1, then ``* weight + bias`` (each of ``normalized_shape``).

    ``normalized_shape`` is PyTorch's ``int[]``: a tensor there is its ``TypeError``. The last axis
    alone, with a weight and a bias of its size, is the method ``x.layer_norm(weight, bias, eps)``.
    """
    x = input
    shape = _trailing_shape("layer_norm", x, normalized_shape, weight=weight, bias=bias)
    if len(shape) == 1:
        return row_major_result(_layer_norm_last(x, weight, bias, eps))  # (PyTorch's: row-major, any input)
    n = math.prod(shape)  # several axes normalised together are one axis
    w = None if weight is None else weight.reshape(n)
    b = None if bias is None else bias.reshape(n)
    return row_major_result(_layer_norm_last(x.reshape(*x.shape[: x.ndim - len(shape)], n), w, b, eps).reshape(x.shape))


def _trailing_shape(op: str, x: Tensor, normalized_shape: Any, **params: Tensor | None) -> tuple[int, ...]:
    """``normalized_shape`` (an int or a sequence) as a tuple, checked to be the trailing dims of
    ``x`` and the shape of each of ``params`` given (a weight, a bias)."""
    shape = (int(normalized_shape),) if isinstance(normalized_shape, (int, np.integer)) else tuple(normalized_shape)
    if not shape or x.shape[x.ndim - len(shape) :] != shape or len(shape) > x.ndim:
        raise InvalidArgumentError(
            f"{op}: normalized_shape {shape} must be the trailing dims of the input, of shape {tuple(x.shape)}"
        )
    for what, t in params.items():
        if t is not None and tuple(t.shape) != shape:
            raise InvalidArgumentError(
                f"{op}: {what} has shape {tuple(t.shape)}, expected {shape} for input {tuple(x.shape)}"
            )
    return shape


@public(functional=True)
def rms_norm(input: Tensor, normalized_shape: tuple[int, ...], weight: Tensor | None = None,  # noqa: A002
             eps: float | None = None) -> Tensor:  # fmt: skip
    """PyTorch's ``rms_norm``: divide by the root mean square over the trailing
    ``normalized_shape`` axes (``+ eps`` under the root; ``eps=None``: the dtype's machine
    epsilon), then ``* weight``.

    >>> F.rms_norm(x, (x.shape[-1],))  # doctest: +SKIP
    """
    x = input
    _float(x, "rms_norm", complex_ok=True)  # (PyTorch's composite computes complex too: x * x, not |x|^2)
    shape = _trailing_shape("rms_norm", x, normalized_shape, weight=weight)
    if eps is None:  # (the machine epsilon of the dtype it computes in: float32 for a float16 input)
        eps = float(finfo(_dtypes.float32 if x.dtype.itemsize == 2 else x.dtype).eps)  # (float16, bfloat16)
    return _rms_norm(x, tuple(range(x.ndim - len(shape), x.ndim)), weight, float(eps))


@composite("rms_norm")
def _rms_norm(x: Tensor, dims: tuple[int, ...], weight: Tensor | None, eps: float) -> Tensor:
    # PyTorch's order: normalised in float32 for float16, rounded to the input's dtype, then times
    # the weight (of any float dtype) and rounded to the input's dtype again
    up = x.float() if x.dtype == np.float16 else x
    y = up * ((up * up).mean(dims, keepdim=True) + eps).rsqrt()
    y = y if y.dtype == x.dtype else y.to(x.dtype)
    if weight is not None:
        y = y * weight
        y = y if y.dtype == x.dtype else y.to(x.dtype)
    return y


def _gelu_fused(x: Tensor, *, approximate: str = "none") -> Tensor:
    _float(x, "gelu")
    if approximate not in ("none", "tanh"):
        raise InvalidArgumentError(f"gelu: approximate must be 'none' or 'tanh', got {approximate!r}")
    return fused.Gelu.apply(x, args=approximate)


@public(function=False, method=True, functional=True)
@composite("gelu", _gelu_fused)
def gelu(x: Tensor, *, approximate: str = "none") -> Tensor:
    """``x * Phi(x)``, Phi the normal CDF (``approximate="tanh"``: the GPT-2 formula)."""
    if approximate == "tanh":
        return 0.5 * x * (1.0 + (math.sqrt(2.0 / math.pi) * (x + 0.044715 * x * x * x)).tanh())
    if approximate != "none":
        raise InvalidArgumentError(f"gelu: approximate must be 'none' or 'tanh', got {approximate!r}")
    return 0.5 * x * (1.0 + (x * (1.0 / math.sqrt(2.0))).erf())


@public(function=False, functional=True)
def relu(input: Tensor, inplace: bool = False) -> Tensor:  # noqa: A002 - PyTorch's names
    """``max(x, 0)``; ``inplace=True`` writes it into ``input`` (see :func:`_in_place`)."""
    return _in_place(input, "relu", relu) if inplace else input.relu()


@public(function=False, functional=True)
def sigmoid(input: Tensor) -> Tensor:
    return input.sigmoid()


@public(function=False, functional=True)
def tanh(input: Tensor) -> Tensor:
    return input.tanh()


@public(function=False, method=True, functional=True)
@composite("dropout")
def dropout(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zero each element with probability ``p`` and scale the rest by ``1/(1-p)``
    (``inplace=True``: written into ``input``).

    The mask is drawn on the host from the seeded generator, so it is the same on
    every device for the same seed.
    """
    if not 0.0 <= p <= 1.0:  # (PyTorch's F.dropout: ValueError; its attention's dropout: RuntimeError)
        raise InvalidArgumentError(f"dropout: p must be in [0, 1], got {p}")
    if not training or p == 0.0:
        return input
    tensor_arg(input, "dropout")
    if input.dtype.kind not in "fc" and p < 1.0 and input.numel():  # (PyTorch's: the kept values are scaled, as floats)
        raise cast_error("dropout", np.dtype(np.float32), input)
    if inplace:
        return _in_place(input, "dropout", dropout, p=p, training=training)
    if p == 1.0:
        # (False: zeros in the input's own integer or bool dtype)
        return input * (0.0 if input.dtype.kind in "fc" else False)
    # (an op: a traced program draws at each replay; in input's memory order, as PyTorch's mask)
    order = memory_order(tuple(input.shape), input.stride())
    return input * draw("dropout", input.shape, input.dtype, input, p, order=order)


# -- losses -------------------------------------------------------------------------


def _classes_last(op: str, x: Tensor, target: Tensor, class_axis: int | None) -> tuple[Tensor, Tensor, bool]:
    """``x`` with its classes on the last axis (``target`` too, if it holds probabilities),
    and whether it holds probabilities.

    Class indices of shape ``x.shape[:-1]`` mean the classes are last (this library's
    layout, and PyTorch's for ``(N, C)``) when PyTorch's layout cannot read them. Any other
    target follows PyTorch: classes on axis 1 of ``(N, C, d1, ...)``, with indices
    ``(N, d1, ...)`` or probabilities of ``x``'s own shape; so does a shape that fits both
    (``(N, C, C)``), unless ``class_axis=-1``.
    """
    shape, ts = tuple(x.shape), tuple(target.shape)
    if x.ndim == 0:
        raise ValueError(f"{op}: input needs a class axis, got a scalar")
    probs = target.dtype.kind == "f" and ts == shape
    axis1 = shape[:1] + shape[2:] if x.ndim >= 2 else shape[:-1]
    if class_axis is None:  # (where a shape fits both layouts, PyTorch's decides: classes on axis 1)
        last = not probs and ts == shape[:-1] and (ts != axis1 or x.ndim <= 2)
    elif class_axis in (1, -1, x.ndim - 1):
        last = class_axis != 1 or x.ndim <= 2
    else:
        raise ValueError(f"{op}: class_axis must be 1 (PyTorch's layout) or -1 (classes last), got {class_axis}")
    want = shape if probs else shape[:-1] if last else axis1
    if ts != want:
        raise InvalidArgumentError(
            f"{op}: input of shape {shape} needs targets of shape {shape[:-1]} (class indices, classes last), "
            f"{axis1} (class indices, classes on axis 1 as in PyTorch's (N, C, d1, ...)) or {shape} "
            f"(class probabilities, floating point); got {ts}"
        )
    if not last and x.ndim > 2:
        perm = (0, *range(2, x.ndim), 1)
        x = x.permute(tuple(perm))
        if probs:
            target = target.permute(tuple(perm))
    return x, target, probs


_SCALAR_NAMES = {"int32": "Int", "int16": "Short", "int8": "Char", "bool": "Bool", "float16": "Half",
                 "float32": "Float", "float64": "Double", "bfloat16": "BFloat16", "uint16": "UInt16",
                 "uint32": "UInt32", "uint64": "UInt64"}  # fmt: skip


def _index_targets(op: str, x: Tensor, target: Tensor, ignore_index: int | None) -> tuple[Tensor, Any, int]:
    """Flat class indices ``(M,)`` (ignored ones set to 0), the 0/1 array of the items that
    count, and their number. The range check needs the indices on the host; while tracing
    the targets stay an input of the program instead, and the mask and count are tensors."""
    if isinstance(target, Tensor) and target.dtype not in (np.int64, np.uint8):  # (PyTorch's kernels take these)
        name = _SCALAR_NAMES.get(np.dtype(target.dtype).name, str(target.dtype))
        raise InvalidArgumentError(f"{op}: expected target dtype to be Long or Byte, but got {name} (class indices "
                                   f"of shape {tuple(target.shape)}; convert with .long())")  # fmt: skip
    if tracing() and isinstance(target, Tensor):
        t = target.detach().reshape(-1)
        t = t if t.dtype == np.int64 else t.astype(np.int64)
        if ignore_index is None:
            ones = Tensor.full((t.shape[0],), 1.0, dtype=x.dtype, device=x.device)
            return t, ones, ones.sum()
        kept = t != ignore_index  # (M,)
        keep_t = kept.astype(x.dtype)
        return where(kept, t, 0), keep_t, keep_t.sum()
    host = host_integers(target, op, "targets (class indices)")
    c = x.shape[-1]
    keep = np.ones(host.shape, dtype=bool) if ignore_index is None else host != ignore_index
    bad = keep & ((host < 0) | (host >= c))
    if bad.any():
        raise IndexError(
            f"{op}: target {host[bad][0]} is out of range for {c} classes (ignore_index is {ignore_index})"
        )
    dev = x._dev
    t = Tensor._wrap(dev.asarray(np.where(keep, host, 0).reshape(-1).astype(np.int64)), dev)
    return t, dev.asarray(keep.reshape(-1), dtype=x.dtype), int(keep.sum())


def _class_weight(op: str, weight: Any, x: Tensor) -> Tensor | None:
    if weight is None:
        return None
    if isinstance(weight, (numbers.Number, np.generic, str, bytes)):  # (PyTorch's parser: a Tensor; an array
        refuse(op, "weight", 2, "Tensor!", weight)  # or a list is this library's convenience, as targets are)
    same_dtype(op, x, ("weight", weight))  # (PyTorch's kernel takes a weight of the input's dtype only)
    weight = _as_operand(op, weight, x, "weight")
    if weight.shape != (x.shape[-1],):
        raise InvalidArgumentError(
            f"{op}: weight has shape {tuple(weight.shape)}; it needs one entry per class, ({x.shape[-1]},)"
        )
    return weight


def _nll_kernel(input: Tensor) -> str:  # noqa: A002
    """The name of PyTorch's kernel for class indices: ``(C,)`` and ``(N, C)`` inputs have
    one, ``(N, C, d1, ...)`` ones another."""
    return "nll_loss_forward" if input.ndim <= 2 else "nll_loss2d_forward"


def _array_target(op: str, target: Any) -> None:
    """Refuse a target that is no array (a number, None, a string) with PyTorch's ``TypeError`` (its
    class-index losses parse a Tensor; its binary cross-entropies read ``target.size()``, an ``AttributeError``).
    A NumPy array or a list is this library's convenience (its tutorials pass class indices so)."""
    if target is None or isinstance(target, (numbers.Number, np.generic, str, bytes)):
        refuse(op, "target", 1, "Tensor!", target)


@public(function=False, functional=True)
def cross_entropy(input: Tensor, target: Any, weight: Any = None, size_average: Any = None,  # noqa: A002
                  ignore_index: int | None = -100, reduce: Any = None, reduction: str = "mean",
                  label_smoothing: float = 0.0, *, class_axis: int | None = None) -> Tensor:  # fmt: skip
    """Negative log-likelihood of ``targets`` under ``softmax(logits)``, as PyTorch's.

    Targets are class indices, or class probabilities (floating point, the logits' shape).
    Class indices of shape ``logits.shape[:-1]`` mean classes on the last axis (``(..., C)``
    logits, this library's layout); otherwise the layout is PyTorch's: ``(N, C, d1, ...)``
    logits with ``(N, d1, ...)`` indices or probabilities of the logits' shape. Where a
    shape fits both (``(N, C, C)`` logits) the classes are on axis 1, as PyTorch's, unless
    ``class_axis=-1``.
    Items whose target is ``ignore_index`` (``None``: none) do not count; ``weight``
    (``(C,)``) weighs each class, and ``"mean"`` divides by the kept items' total weight
    (NaN when nothing counts, as PyTorch). ``label_smoothing`` mixes the target with the
    uniform distribution, as in "Attention Is All You Need". ``reduction="none"`` returns
    one loss per item, shaped as the indices.
    """
    logits, targets = input, target
    # Before PyTorch's argument order this was (logits, targets, ignore_index, label_smoothing):
    # an int in weight's place is still an ignore_index, a float in size_average's a smoothing.
    if isinstance(weight, (int, np.integer)) and not isinstance(weight, bool):
        weight, ignore_index = None, int(weight)
    if isinstance(size_average, float):
        size_average, label_smoothing = None, size_average
    op = "cross_entropy"
    _array_target(op, targets)
    _float(logits, op)
    reduction = _reduction(op, reduction, size_average, reduce)
    if not 0.0 <= label_smoothing <= 1.0:
        raise InvalidArgumentError(f"{op}: label_smoothing must be in [0, 1], got {label_smoothing}")
    eps = float(label_smoothing)
    if isinstance(targets, Tensor) and targets.dtype.kind == "f" and targets.dtype != logits.dtype:
        logits, targets = _computed_together(op, logits, targets)  # (probabilities: PyTorch's promoted dtype)
    x, targets, probs = _classes_last(op, logits, _as_operand(op, targets, logits), class_axis)
    if not probs:  # (class indices: PyTorch computes through its nll_loss kernels)
        not_differentiable(_nll_kernel(logits), weight=weight)
    weight = _class_weight(op, weight, x)
    c = x.shape[-1]
    # (classes moved from axis 1 of (N, C, d1, ...): PyTorch's log_softmax along a strided axis, whose float16
    # and bfloat16 sums stay float32, where the fused op's and a row's kernel round them: log-probabilities there)
    strided = x is not logits and math.prod(logits.shape[2:]) > 1 and _declare.low_precision(logits)
    if probs:
        if ignore_index is not None and ignore_index >= 0:  # (PyTorch's check: any negative index ignores nothing)
            raise InvalidArgumentError(
                f"{op}: ignore_index is not supported for floating point target: ignore_index applies to "
                f"class-index targets, not to probabilities (got {ignore_index})"
            )
        with scope(op):
            logp = _log_probabilities(logits, x, strided)  # (M, C)
            return _soft_reference(logp, targets.reshape(-1, c), weight, reduction, eps, x.shape[:-1])
    t, keep, n_kept = _index_targets(op, x, targets, ignore_index)
    flat = x.reshape(-1, c)  # (M, C)
    if strided:
        with scope(op):
            return _nll_reference(_log_probabilities(logits, x, strided), t, keep, n_kept, weight, reduction, eps,
                                  x.shape[:-1])  # fmt: skip
    if weight is None and reduction != "none" and not _State.decompose:
        if isinstance(keep, Tensor):  # traced: the mask and count are ops on the targets
            n_t = n_kept if reduction == "mean" else Tensor.full((), 1.0, dtype=x.dtype, device=x.device)
            return _cross_entropy_kept(flat, t, keep, n_t.astype(x.dtype), eps)
        n = (float(n_kept) if n_kept else float("nan")) if reduction == "mean" else 1.0
        return fused.CrossEntropy.apply(flat, t, args=(keep, n, eps))
    with scope(op):
        return _nll_reference(log_softmax(flat, -1), t, keep, n_kept, weight, reduction, eps, x.shape[:-1])


def _log_probabilities(logits: Tensor, x: Tensor, strided: bool) -> Tensor:
    """``log_softmax`` of ``x`` (``logits`` with its classes last) along its classes, as rows ``(M, C)``;
    ``strided``: computed along axis 1 of ``logits``, PyTorch's layout, then moved (its kernel there)."""
    c = x.shape[-1]
    if not strided:
        return log_softmax(x.reshape(-1, c), -1)
    return log_softmax(logits, 1).permute((0, *range(2, logits.ndim), 1)).reshape(-1, c)


def _cross_entropy_kept(logits: Tensor, targets: Tensor, keep: Tensor, n_kept: Tensor, eps: float) -> Tensor:
    """The cross-entropy a trace records: the kept items' mask ``(M,)`` and their count (0-d)
    are tensors computed from the targets, so a replay reads them (fused unless decomposing)."""
    if _State.decompose:
        return _cross_entropy_kept_reference(logits, targets, keep, n_kept, eps)
    return fused.CrossEntropyKept.apply(logits, targets, keep, n_kept, args=eps)


def _cross_entropy_kept_reference(logits: Tensor, targets: Tensor, keep: Tensor, n_kept: Tensor, eps: float) -> Tensor:
    total = _nll_reference(log_softmax(logits, -1), targets, keep, 0, None, "sum", eps, ())
    return total / where(n_kept != 0, n_kept, math.nan)  # (nothing kept: NaN, as PyTorch)


def _cross_entropy_reference(logits: Tensor, targets: Tensor, keep: Any, n_kept: float, eps: float) -> Tensor:
    """The fused op's definition: the summed loss of the kept items, divided by ``n_kept``."""
    total = _nll_reference(log_softmax(logits, -1), targets, keep, 0, None, "sum", eps, ())
    if n_kept != n_kept or not n_kept:  # nothing counts: NaN (0/0, as PyTorch), its gradient 0, not NaN
        # (a where, not total + nan: its gradient is 0 even where the incoming one is NaN)
        return where(Tensor(False, device=logits._dev), total, math.nan)
    return total / n_kept


def _nll_reference(logp: Tensor, t: Tensor, keep: Any, n_kept: int, weight: Tensor | None, reduction: str,
                   eps: float, shape: tuple) -> Tensor:  # fmt: skip
    """The definition on ``logp (M, C)``: item ``i`` costs ``-(1-eps) w[t] logp[t] - eps mean_c(w logp)``
    (0 if ignored); ``"mean"`` divides the sum by the kept items' total ``w[t]``."""
    m, c = logp.shape
    dev = logp._dev
    picked = logp.reshape(-1)[Tensor.arange(m, dtype=np.int64, device=dev) * c + t]  # (M,)
    keep_t = keep if isinstance(keep, Tensor) else Tensor._wrap(keep, dev)
    w_t = keep_t if weight is None else weight[t] * keep_t  # (M,)
    loss = picked * w_t * -(1.0 - eps)
    if eps:
        loss = loss - (logp if weight is None else logp * weight).mean(-1) * keep_t * eps
    if reduction == "none":
        return loss.reshape(shape)
    if reduction == "sum":
        return loss.sum()
    if weight is None and not isinstance(n_kept, Tensor):  # nothing kept: NaN (0/0, as PyTorch), gradient 0
        return loss.sum() / float(n_kept) if n_kept else loss.sum() + math.nan
    total = w_t.sum() if weight is not None else n_kept  # (traced: the count of kept items is a tensor)
    kept = total != 0
    # A zero total: the loss is NaN (0/0) and so is each counted item's gradient (PyTorch's -w[t] / 0), while
    # the ignored items' stay 0. The NaN is a constant's, not a 0/0 computed (no warning), and it scales the
    # unused side only where the total is 0 (elsewhere 1 / total: the where's zero gradient stays 0).
    scale = where(kept, 1.0 / where(kept, total, 1.0), math.nan)
    undefined = (where(keep_t != 0, loss, 0.0) * scale).sum()
    return where(kept, loss.sum() / where(kept, total, 1.0), undefined)


def _soft_reference(logp: Tensor, q: Tensor, weight: Tensor | None, reduction: str, eps: float,
                    shape: tuple) -> Tensor:  # fmt: skip
    """Probability targets ``q (M, C)``: item ``i`` costs ``-sum_c w q logp``; ``"mean"`` averages items."""
    if eps:
        q = q * (1.0 - eps) + eps / logp.shape[-1]
    lq = logp * q if weight is None else logp * q * weight  # (M, C)
    loss = -lq.sum(-1)  # (M,)
    return loss.reshape(shape) if reduction == "none" else _reduce(loss, reduction)


@public(function=False, functional=True)
def nll_loss(input: Tensor, target: Any, weight: Any = None, size_average: Any = None,
             ignore_index: int | None = -100, reduce: Any = None, reduction: str = "mean", *,
             class_axis: int | None = None) -> Tensor:  # fmt: skip
    """Negative log-likelihood of class indices ``target`` given log-probabilities ``input``.

    Layouts, ``weight``, ``ignore_index`` and ``reduction`` as in :func:`cross_entropy`
    (``cross_entropy(x, t)`` is ``nll_loss(log_softmax(x), t)``).
    """
    op = "nll_loss"
    _array_target(op, target)
    reduction = _reduction(op, reduction, size_average, reduce)
    x, target, probs = _classes_last(op, input, _as_operand(op, target, input), class_axis)
    _float(input, op)  # (after the sizes, as PyTorch's kernel checks them first)
    if probs:
        raise OperandDtypeError(f"{op}: takes class indices; for probability targets use cross_entropy")
    not_differentiable(_nll_kernel(input), weight=weight)
    weight = _class_weight(op, weight, x)
    t, keep, n_kept = _index_targets(op, x, target, ignore_index)
    with scope(op):
        out = _nll_reference(x.reshape(-1, x.shape[-1]), t, keep, n_kept, weight, reduction, 0.0, x.shape[:-1])
        # (what PyTorch's keeps; its gradient is constant, a function of them under create_graph=True)
        return saved_for_backward(out, input, target, weight, piecewise=True)


@public(function=False, functional=True)
@accepts("floating", ("input", "target"))
@composite("mse_loss")
def mse_loss(input: Tensor, target: Any, size_average: Any = None, reduce: Any = None,  # noqa: A002
             reduction: str = "mean", weight: Any = None) -> Tensor:  # fmt: skip
    """The squared differences, averaged (``reduction="mean"``), summed, or each (``"none"``);
    ``weight`` (the input's shape) multiplies each, and ``"mean"`` then divides by its sum, as PyTorch's."""
    reduction = _reduction("mse_loss", reduction, size_average, reduce)
    if isinstance(target, Tensor) and target.shape != input.shape:  # (PyTorch's warning of a likely mistake)
        _user_warn(
            f"mse_loss: Using a target size ({tuple(target.shape)}) that is different to the input size "
            f"({tuple(input.shape)}). This will likely lead to incorrect results due to broadcasting. Please ensure "
            "they have the same size.",
            UserWarning,
        )
    if isinstance(target, Tensor):  # (PyTorch's kernel promotes both, bool too: a mask is a 0/1 target)
        input, target = _computed_together("mse_loss", input, target)  # noqa: A001
    d = input - target
    if weight is not None:
        weight = _as_operand("mse_loss", weight, input, "weight")
        if weight.shape != input.shape:
            raise ValueError(
                f"mse_loss: weight of shape {tuple(weight.shape)} must have the input's shape {tuple(input.shape)}"
            )
        loss = d * d * weight
        return loss.sum() / weight.sum() if reduction == "mean" else _reduce(loss, reduction)
    return saved_for_backward(_reduce(d * d, reduction), input, target)  # (what PyTorch's keeps)


# -- attention ---------------------------------------------------------------------
@public(function=False, functional=True)
def causal_mask(tq: int, tk: int, device: Any = None) -> Tensor:
    """Boolean ``(tq, tk)`` mask, True where query ``i`` may attend key ``j <= i``."""
    return Tensor(np.tri(tq, tk, 0, dtype=bool), device=device)


@functools.lru_cache(maxsize=16)
def _causal_bias(tq: int, tk: int, dtype: np.dtype, dev: Any) -> Any:
    """The additive causal mask ``(tq, tk)``: 0 where ``j <= i``, -inf above. Cached, as a
    model asks for the same one at every layer and step; ops only ever read it."""
    return dev.asarray(np.where(np.tri(tq, tk, 0, dtype=bool), 0.0, -np.inf).astype(dtype))


def _fused_kernel_takes(q: Tensor, k: Tensor, v: Tensor, mask: Any, dropout_p: float, enable_gqa: bool) -> bool:
    """Whether PyTorch's CPU dispatch of ``scaled_dot_product_attention`` picks its fused (flash)
    kernel, which applies an ``attn_mask`` and ``is_causal`` together; the other, its math
    kernel, refuses the two together. The fused one takes 4-D ``(B, H, T, d)`` operands of one
    batch, heads (or grouped heads under ``enable_gqa``) and head size, a last dim of stride 1,
    no dropout, and a mask not requiring grad, 2-D or ``(B or 1, H or 1, ...)``, whose last two
    dims are ``Tq`` or 1 and ``Tk`` or 1; unless ``torch.backends.cuda.enable_flash_sdp(False)``."""
    from ..backends import cuda as _cuda_flags  # (functional is imported before the backends)

    if not _cuda_flags.flash_sdp_enabled() or dropout_p > 0.0 or q.ndim != 4 or k.ndim != 4 or v.ndim != 4:
        return False
    # (in PyTorch's order of its checks: a 1-D mask's IndexError comes after the shapes', before the strides')
    (b, hq, tq, d), (_, hk, tk, _) = q.shape, k.shape
    if not (k.shape[0] == v.shape[0] == b and v.shape[1] == hk) or (
        hk != hq and not (enable_gqa and hk and hq % hk == 0)
    ):
        return False
    if isinstance(mask, Tensor):
        if mask.requires_grad:
            return False
        if mask.ndim < 2:  # (PyTorch's reads its size(-2))
            raise IndexError(
                f"scaled_dot_product_attention: Dimension out of range (expected to be in range of [-1, 0], but got "
                f"-2): attn_mask of shape {tuple(mask.shape)}"
            )
        if mask.ndim not in (2, 4) or mask.shape[-2] not in (tq, 1) or mask.shape[-1] not in (tk, 1):
            return False
        if mask.ndim == 4 and (mask.shape[0] not in (b, 1) or mask.shape[1] not in (hq, 1)):
            return False
    return k.shape[-1] == v.shape[-1] == d and all(x.stride()[-1] == 1 for x in (q, k, v))


def _mask_arrays(q: Tensor, k: Tensor, mask: Any, is_causal: bool) -> tuple[Any, Any, Tensor | None]:
    """Turn ``mask`` and ``is_causal`` into an additive bias array, a row mask, or a float
    mask tensor that needs its gradient (then the bias stays a tensor)."""
    tq, tk = q.shape[-2], k.shape[-2]
    dev = q._dev
    if mask is None and is_causal and tk > 0:  # every query sees key 0: no empty rows
        return _causal_bias(tq, tk, q.dtype, dev), None, None
    ns = dev.ops
    # The mask arithmetic runs on the queries' device: no copy to the host per call.
    allowed = dev.asarray(np.tri(tq, tk, 0, dtype=bool)) if is_causal else None  # (tq, tk)
    bias_t = None
    if mask is not None:
        if not isinstance(mask, Tensor):
            mask = Tensor(np.asarray(mask), device=dev)
        if mask._dev is not dev:
            raise RuntimeError(f"scaled_dot_product_attention: mask on {mask.device}, queries on {q.device}")
        try:
            np.broadcast_shapes(mask.shape, q.shape[:-2] + (tq, tk))
        except ValueError:
            raise InvalidArgumentError(
                f"scaled_dot_product_attention: mask of shape {tuple(mask.shape)} does not broadcast to the "
                f"scores' shape {q.shape[:-2] + (tq, tk)}"
            ) from None
        if mask.dtype == np.bool_:
            allowed = mask._data if allowed is None else (mask._data & allowed)
        elif mask.requires_grad:  # stays a tensor (its gradient is wanted); its -inf entries still mask
            bias_t = mask
            allowed_t = mask._data > -math.inf
            allowed = allowed_t if allowed is None else (allowed_t & allowed)
        else:  # a float mask is added; its -inf entries mean "may not attend"
            fm = mask._data if mask.dtype == q.dtype else ns.astype(mask._data, q._data.dtype)
            allowed_f = fm > -math.inf
            if allowed is not None:
                allowed_f = allowed_f & allowed
            return _bias_from_allowed(ns, allowed_f, ns.where(allowed_f, fm, -math.inf))
    if allowed is None:
        return None, None, bias_t
    zeros = ns.zeros(tuple(allowed.shape), q._data.dtype)
    bias, row_any, _ = _bias_from_allowed(ns, allowed, ns.where(allowed, zeros, zeros - math.inf))
    return bias, row_any, bias_t


def _traced_mask(q: Tensor, k: Tensor, mask: Tensor, is_causal: bool) -> tuple[Any, Any, Tensor | None]:
    """:func:`_mask_arrays` for a trace: the bias and the empty-row mask as ops of ``mask``
    (``ops.array_function``), the row mask always there (all true where every row has a key:
    which rows are empty depends on the mask's values, which change between replays)."""
    bias, _, bias_t = _mask_arrays(q, k, mask, is_causal)  # (its checks and errors, and whether a bias)
    if bias_t is not None and bias is None:
        return None, None, bias_t

    wanted = mask.requires_grad  # (a mask with a gradient: its values are added as a tensor, not in the bias)

    def like_mask(m: Any) -> Tensor:
        t = Tensor._wrap(m, q._dev)
        t.requires_grad = wanted
        return t

    def attention_bias(ns: Any, m: Any) -> Any:
        b, _, _ = _mask_arrays(q, k, like_mask(m), is_causal)
        return b

    def attention_rows(ns: Any, m: Any) -> Any:
        b, rows, _ = _mask_arrays(q, k, like_mask(m), is_causal)
        if rows is None:  # (every row has a key: all true, in the shape the row mask has)
            rows = ns.zeros(tuple(b.shape[:-1]) + (1,), b.dtype) == 0
        return rows

    src = mask.detach()
    return array_function(attention_bias, src), array_function(attention_rows, src), bias_t


def _as_tensor(a: Any, like: Tensor) -> Tensor:
    return a if isinstance(a, Tensor) else Tensor._wrap(a, like._dev)


def _bias_from_allowed(ns: Any, allowed: Any, bias: Any) -> tuple[Any, Any, None]:
    """Zero the bias of rows with no key to attend (their softmax would be 0/0), and mark
    those rows, unless there are none."""
    rows = ns.any(allowed, axis=-1, keepdims=True)  # (..., Tq, 1)
    if bool(ns.all(rows)):
        return bias, None, None
    return ns.where(rows, bias, ns.zeros_like(bias)), rows, None


@public(function=False, functional=True)
@keeps_old_spellings
@accepts("floating")
def scaled_dot_product_attention(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    attn_mask: Any = None,
    dropout_p: float = 0.0,
    is_causal: bool = False,
    *,  # (PyTorch takes scale and enable_gqa by keyword only)
    scale: float | None = None,
    enable_gqa: bool = False,
    return_weights: bool = False,
) -> Any:
    """``softmax(q @ k.mT * scale + mask) @ v``, the attention of "Attention Is All You Need",
    with PyTorch's parameters in PyTorch's order.

    query ``(..., Hq, Tq, d)``, key ``(..., H, Tk, d)``, value ``(..., H, Tk, dv)`` ->
    ``(..., Hq, Tq, dv)``. A boolean ``attn_mask`` (broadcastable to ``(..., Tq, Tk)``) is
    True where a query may attend; a float mask is added to the scores. A query with
    nothing to attend gets zeros, never NaN. ``scale`` defaults to ``1/sqrt(d)``. ``enable_gqa=True``: each of the ``H`` key and
    value heads serves ``Hq // H`` query heads (grouped-query attention). The library's
    extras: ``mask=`` (its older name of ``attn_mask``) and ``return_weights=True``,
    which also returns the ``(..., Tq, Tk)`` weights.
    """
    q, k, v, mask = query, key, value, attn_mask
    for t, n in ((q, "query"), (k, "key"), (v, "value")):
        if not isinstance(t, Tensor) or t.ndim < 2:
            raise ValueError(f"scaled_dot_product_attention: {n} must be a tensor of at least 2 dimensions")
    if q.ndim == k.ndim == v.ndim == 4:  # (PyTorch's CPU flash kernel, which it picks for 4-d inputs)
        refuse_tangents("_scaled_dot_product_flash_attention_for_cpu", q, k, v)
    if enable_gqa and q.ndim >= 3 and k.ndim >= 3 and k.shape[-3] != q.shape[-3]:
        hq, hk = q.shape[-3], k.shape[-3]
        if hk == 0 or hq % hk or v.ndim < 3 or v.shape[-3] != hk:
            raise InvalidArgumentError(
                f"scaled_dot_product_attention: enable_gqa needs the query heads ({hq}) to be a multiple of the "
                f"key and value heads; got query {tuple(q.shape)}, key {tuple(k.shape)}, value {tuple(v.shape)}"
            )
        k = k.repeat_interleave(hq // hk, -3)  # (..., Hq, Tk, d): each key head serves a group
        v = v.repeat_interleave(hq // hk, -3)
    if q.shape[-1] != k.shape[-1] or k.shape[-2] != v.shape[-2]:
        raise InvalidArgumentError(
            f"scaled_dot_product_attention: query {tuple(q.shape)}, key {tuple(k.shape)}, value {tuple(v.shape)} do not fit: need "
            "query (..., Tq, d), key (..., Tk, d), value (..., Tk, dv)"
        )
    same_dtype("scaled_dot_product_attention", q, ("key", k), ("value", v))
    if mask is not None:
        check_mask_dtype("scaled_dot_product_attention", mask)
        if isinstance(mask, Tensor) and mask.dtype.kind == "f" and mask.dtype not in (q.dtype, np.float32):
            raise RuntimeError(  # (PyTorch's: a float mask is float32 or the query's dtype)
                f"scaled_dot_product_attention: expected attn_mask dtype to be bool or float32 or to match the "
                f"query's dtype {q.dtype}, but got {mask.dtype}"
            )
    if is_causal and mask is not None and k.shape[-2] and math.prod(q.shape[:-1]) and v.shape[-1]:
        if not _fused_kernel_takes(query, key, value, mask, dropout_p, enable_gqa):  # (PyTorch's math kernel's check)
            raise RuntimeError(
                "scaled_dot_product_attention: Explicit attn_mask should not be set when is_causal=True (query "
                f"{tuple(query.shape)}, key {tuple(key.shape)}, value {tuple(value.shape)}, attn_mask "
                f"{tuple(getattr(mask, 'shape', ()))}): give the causal triangle in the mask, or one of the two"
            )
    if isinstance(mask, Tensor) and mask.ndim < 2:  # (PyTorch reads the mask's dim -2: its IndexError)
        raise IndexError(
            f"Dimension specified as -2 but tensor has no dimensions (scaled_dot_product_attention: attn_mask of "
            f"shape {tuple(mask.shape)}; a mask is (..., Tq, Tk))"
            if mask.ndim == 0
            else "Dimension out of range (expected to be in range of [-1, 0], but got -2) "
            f"(scaled_dot_product_attention: attn_mask of shape {tuple(mask.shape)}; a mask is (..., Tq, Tk))"
        )
    if scale is None:  # (queries of no features: every score 0, whatever the scale)
        scale = 1.0 / math.sqrt(q.shape[-1]) if q.shape[-1] else 1.0
    scale = float(scale)
    if tracing() and isinstance(mask, Tensor):
        # The mask is a value of the traced program: its bias and empty-row mask become ops
        # (computed again from each replay's mask), and the attention its ops.
        bias, row_any, bias_t = _traced_mask(q, k, mask, is_causal)
    else:
        bias, row_any, bias_t = _mask_arrays(q, k, mask, is_causal)
    if k.shape[-2] == 0:  # no keys: no query has anything to attend, so all get zeros
        w = (q * scale) @ k.mT  # (..., Tq, 0)
        if bias_t is not None:  # (so the mask, empty too, has its gradient)
            w = w + bias_t
        out = w @ v  # (..., Tq, dv), zeros (an empty sum), differentiable in q
        return (out, w) if return_weights else out
    if (
        not _State.decompose
        and bias_t is None
        and not return_weights
        and dropout_p == 0.0
        and not (isinstance(bias, Tensor) or isinstance(row_any, Tensor))
    ):
        causal = is_causal and mask is None
        return fused.Attention.apply(q, k, v, args=(scale, bias, row_any, causal))
    with scope("attention"):
        if bias_t is not None:
            bias = bias_t if bias is None else bias_t + _as_tensor(bias, q)
            if row_any is not None:  # a row with no key: a finite bias, so its (zeroed) softmax and
                bias = where(_as_tensor(row_any, q), bias, 0.0)  # its gradients have no NaN
        out, w = _attention_reference(q, k, v, scale, bias, row_any, dropout_p, weights=True)
    return (out, w) if return_weights else out


def _attention_reference(q: Tensor, k: Tensor, v: Tensor, scale: float, bias: Any, row_any: Any,
                         dropout_p: float = 0.0, weights: bool = False) -> Any:  # fmt: skip
    """The definition in primitives: scores, mask, softmax, (dropout), weighted sum."""
    # (scaled before the product, as PyTorch's: so q and k themselves are not kept for backward)
    root = math.sqrt(scale) if scale > 0 else None
    s = (q * root) @ (k * root).mT if root is not None else (q @ k.mT) * scale  # (..., Tq, Tk)
    if bias is not None:
        s = s + _as_tensor(bias, q)
    w = softmax(s, -1)
    if row_any is not None:
        w = where(_as_tensor(row_any, q), w, 0.0)
    if dropout_p:
        w = dropout(w, dropout_p, True)
    out = w @ v  # (..., Tq, dv)
    return (out, w) if weights else out


# -- PyTorch's functional API: activations --------------------------------------------
@public(function=False, functional=True)
@accepts("floating")
@composite("leaky_relu")
def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    """``input`` where positive, ``negative_slope * input`` elsewhere (``inplace=True``: written into ``input``)."""
    if inplace:
        return _in_place(input, "leaky_relu", leaky_relu, negative_slope=negative_slope)
    # (as PyTorch's, it keeps the input)
    return saved_for_backward(where(input > 0, input, input * negative_slope), input, piecewise=True)


@public(function=False, functional=True)
@accepts("floating")
@composite("silu")
def silu(input: Tensor, inplace: bool = False) -> Tensor:
    """``input * sigmoid(input)`` (also called swish; ``inplace=True``: written into ``input``)."""
    if inplace:
        return _in_place(input, "silu", silu)
    return input * input.sigmoid()


@public(function=False, functional=True)
@accepts("floating")
@composite("elu")
def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """``input`` where positive, ``alpha * (exp(input) - 1)`` elsewhere (``inplace=True``: written into ``input``)."""
    if inplace:
        return _in_place(input, "elu", elu, alpha=alpha)
    # (expm1, as PyTorch's: exp(input) - 1 would round a tiny input's result to 0; NaN takes the positive side's gradient)
    # (as PyTorch's, it keeps the input)
    return saved_for_backward(where(input <= 0, _expm1_negative(input) * alpha, input), input)


@public(function=False, functional=True)
@accepts("floating")
@composite("softplus")
def softplus(x: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    """``log(1 + exp(beta x)) / beta``, and ``x`` itself where ``beta x > threshold`` (as PyTorch)."""
    bx = x * beta if beta != 1 else x
    sp = _softplus_stable(bx)
    if beta != 1:
        sp = sp / beta
    return saved_for_backward(where(bx > threshold, x, sp), x)  # (as PyTorch's, it keeps x)


@public(function=False, functional=True)
def normalize(input: Tensor, p: float | None = 2.0, dim: int = 1, eps: float = 1e-12, out: Any = None) -> Tensor:  # noqa: A002
    """``x / max(||x||_p, eps)`` along ``dim`` (PyTorch's default: axis 1); any ``p``:
    ``inf``, ``-inf``, 0 (the count of non-zeros) and negative ones too, as PyTorch; ``None``
    is 2, as ``Tensor.norm``'s; ``out`` receives the result (see :func:`written_to_out`)."""
    if p is None:
        p = 2.0
    _float(input, "normalize", complex_ok=True)  # (PyTorch's vector norm refuses other dtypes; of complex: real)
    return written_to_out(_normalize(input, p, dim, eps), out, "normalize")


@composite("normalize")
def _normalize(x: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12) -> Tensor:
    dim = _axis(x, dim, "normalize")
    # (PyTorch's: the one vector norm, every p, clamped: its gradients at a zero row are the norm's)
    norm = x.norm(p, dim, keepdim=True).clamp_min(eps)
    return x / norm


# -- PyTorch's functional API: binary losses ----------------------------------------


def _clamped_log(x: Tensor) -> Tensor:
    """``log(x)`` clamped below at -100, as PyTorch's binary_cross_entropy does (a sure
    mistake costs 100, not inf); a 0 is never handed to ``log``, so NumPy does not warn."""
    pos = x > 0
    return where(pos, where(pos, x, 1.0).log(), -100.0).clamp_min(-100.0)


@public(function=False, functional=True)
@composite("binary_cross_entropy")
@stand_in()
def binary_cross_entropy(input: Tensor, target: Any, weight: Any = None, size_average: Any = None,
                         reduce: Any = None, reduction: str = "mean") -> Tensor:  # fmt: skip
    """``-w (y log x + (1 - y) log(1 - x))`` for probabilities ``x``, each log clamped at -100."""
    op = "binary_cross_entropy"
    _array_target(op, target)
    reduction = _reduction(op, reduction, size_average, reduce)
    if isinstance(target, Tensor):  # (PyTorch's Python compares the sizes first, then its kernel the dtypes)
        _same_shape(op, input, target)
    _float(input, op)
    if weight is not None and not isinstance(weight, Tensor):  # (PyTorch reads it after the sizes, before the dtypes)
        refuse(op, "weight", 2, "Tensor!", weight)
    if isinstance(target, Tensor) and target.dtype != input.dtype:  # (PyTorch's kernel takes one dtype)
        raise RuntimeError(f"{op}: Found dtype {target.dtype} but expected {input.dtype} (the target's dtype must "
                           f"be the input's); convert with target.to(input.dtype)")  # fmt: skip
    target = _as_operand(op, target, input)
    _same_shape(op, input, target)
    not_differentiable(op, weight=weight)
    # (PyTorch checks it: a logit here is a likely mistake; a traced program reads no values)
    if not tracing() and bool((~((input >= 0) & (input <= 1))).any()):
        raise RuntimeError(f"{op}: all elements of input should be between 0 and 1 (shape {tuple(input.shape)}); "
                           "for logits use binary_cross_entropy_with_logits")  # fmt: skip
    if not tracing() and bool((~((target >= 0) & (target <= 1))).any()):
        raise RuntimeError(f"{op}: all elements of target should be between 0 and 1 (shape {tuple(target.shape)}); "
                           "a target is a probability")  # fmt: skip
    loss = _certain_probabilities(lambda x: -(target * _clamped_log(x) + (1.0 - target) * _clamped_log(1.0 - x)),
                                  input, target)  # fmt: skip
    if weight is not None:
        weight = _as_operand(op, weight, input, "weight")
        _broadcast_to_input(op, input, weight, "weight")
        loss = loss * weight
    return saved_for_backward(_reduce(loss, reduction), input, target, weight)  # (what PyTorch's keeps)


def _certain_probabilities(loss: Any, x: Tensor, t: Tensor) -> Tensor:
    """``loss(x)`` (binary cross-entropy of probabilities ``x`` and targets ``t``), with PyTorch's gradients
    where ``x`` is 0 or 1, which its formulas give and the clamped logs do not: ``(x - t) / max(x (1 - x),
    1e-12)`` for ``x`` (the denominator clamped) and ``log1p(-x) - log(x)``, infinite, for ``t``, and
    their derivatives PyTorch's double backward (:class:`~tinygrad_attn.ops.saved.BinaryCrossEntropyEdge`).
    Within (0, 1) they are the clamped definition's own, which reads 0.5 at the edges instead (its
    gradients there, zero times infinite second derivatives, would be NaN, not masked)."""
    from ..engine.switches import no_grad  # noqa: PLC0415 - (as in _embedding_pytorch_options)

    if not (differentiated(x) or differentiated(t)):
        return loss(x)
    edge = (x <= 0) | (x >= 1)
    with no_grad():
        value = loss(x)
    return where(edge, BinaryCrossEntropyEdge.apply(value, x, t), loss(where(edge, 0.5, x)))


@public(function=False, functional=True)
@composite("binary_cross_entropy_with_logits")
def binary_cross_entropy_with_logits(input: Tensor, target: Any, weight: Any = None, size_average: Any = None,
                                     reduce: Any = None, reduction: str = "mean",
                                     pos_weight: Any = None) -> Tensor:  # fmt: skip
    """``binary_cross_entropy(sigmoid(x), y)`` without its overflow: ``(1 - y) x + (1 + (p - 1) y)
    softplus(-x)``, ``p`` the ``pos_weight`` of the positive term (broadcast over the last axis)."""
    op = "binary_cross_entropy_with_logits"
    _array_target(op, target)
    reduction = _reduction(op, reduction, size_average, reduce)
    if isinstance(target, Tensor):  # (PyTorch's Python compares the sizes first, then its kernel the dtypes)
        _same_shape(op, input, target)
    _float(input, op)
    if isinstance(target, Tensor) and target.dtype.kind == "f" and target.dtype != input.dtype:
        input = input.astype(target.dtype)  # noqa: A001 - (PyTorch's computes in the target's dtype)
    integer = isinstance(target, Tensor) and target.dtype.kind in "iu"  # (a list is this library's convenience)
    target = _as_operand(op, target, input)
    _same_shape(op, input, target)
    if integer:  # (PyTorch's kernel writes 1 - target into the target's dtype)
        raise cast_error(op, input.dtype, target)
    if weight is not None and not isinstance(weight, Tensor):  # (PyTorch reads them after the sizes)
        refuse(op, "weight", 3, "Tensor!", weight)
    if isinstance(pos_weight, (numbers.Number, np.generic, str, bytes)):  # (an array or a list is this library's
        refuse(op, "pos_weight", 4, "Tensor!", pos_weight)  # convenience, as a class weight is; a number is no tensor)
    not_differentiable(op, weight=weight, pos_weight=pos_weight)
    sp = _softplus_stable(-input)
    if pos_weight is not None:
        pos_weight = _as_operand(op, pos_weight, input, "pos_weight")
        _broadcast_to_input(op, input, pos_weight, "pos_weight")
        sp = sp * ((pos_weight - 1) * target + 1.0)
    loss = (1.0 - target) * input + sp
    if pos_weight is None and (differentiated(input) or differentiated(target)):  # (PyTorch's backward formula's steps)
        loss = BinaryCrossEntropyWithLogitsEdge.apply(loss.detach(), input, target)
    if weight is not None:
        weight = _as_operand(op, weight, input, "weight")
        _broadcast_to_input(op, input, weight, "weight")
        loss = loss * weight
    return saved_for_backward(_reduce(loss, reduction), input, target, weight)  # (what PyTorch's keeps)


# -- PyTorch's functional API: lookups and shapes -------------------------------------
@public(function=False, functional=True)
def one_hot(tensor: Tensor, num_classes: int = -1) -> Tensor:
    """Class indices ``(...)`` -> int64 ``(..., num_classes)`` with a 1 at each index
    (``num_classes=-1``: one more than the largest index). Not differentiable."""
    if isinstance(tensor, Tensor) and tensor.dtype != np.int64:  # (PyTorch's RuntimeError, not a dtype dispatch)
        raise OperandDtypeError(f"one_hot is only applicable to index tensor of type LongTensor (got {tensor.dtype} "
                                f"of shape {tuple(tensor.shape)}; convert with .long())")  # fmt: skip
    if isinstance(tensor, Tensor) and tensor._dev.meta and num_classes == -1:  # (the largest index: no values)
        tensor.max()._item("one_hot")
    if tracing() and isinstance(tensor, Tensor) and num_classes != -1:
        host = None  # while tracing: the ids stay an input of the program (no host read, no range check)
    else:
        host = host_integers(tensor, "one_hot", "tensor (class indices)")
    if host is None:
        pass
    elif num_classes == -1:
        if host.size == 0:
            raise InvalidArgumentError("one_hot: cannot infer num_classes from an empty tensor; pass num_classes")
        num_classes = int(host.max()) + 1
    if host is not None and host.size and (host.min() < 0 or host.max() >= num_classes):
        bad = host.min() if host.min() < 0 else host.max()
        raise InvalidArgumentError(f"one_hot: class index {bad} is out of range [0, {num_classes})")
    t = tensor if isinstance(tensor, Tensor) else Tensor(host)
    ids = t if t.dtype == np.int64 else t.astype(np.int64)
    hit = ids.unsqueeze(-1) == Tensor.arange(num_classes, dtype=np.int64, device=t.device)  # (..., C)
    return hit.astype(np.int64)


@public(function=False, functional=True)
def embedding(input: Any, weight: Tensor, padding_idx: int | None = None, max_norm: float | None = None,  # noqa: A002
              norm_type: float = 2.0, scale_grad_by_freq: bool = False, sparse: bool = False) -> Tensor:  # fmt: skip
    """The rows of ``weight (num, dim)`` picked by integer ``input (...)`` -> ``(..., dim)``.

    The row ``padding_idx`` is looked up as any other but gets no gradient, as in PyTorch;
    ``max_norm`` first scales each looked-up row of ``weight`` whose ``norm_type``-norm
    exceeds it down to it, in place; ``scale_grad_by_freq`` divides each row's gradient by
    how often the batch names it. ``sparse=True``: the gradient of ``weight`` is a sparse COO tensor
    (one row per id, as PyTorch's).

    Ids must lie in ``[0, num)``: a negative id is out of range, as in PyTorch (eager raises
    ``IndexError``; ``weight[ids]``, indexing, reads it from the end). Inside ``tga.jit.trace`` or
    ``tga.compile`` the ids are an input of the program and a replay does not check them.
    """
    if isinstance(input, Tensor) and input.dtype not in (np.int64, np.int32):
        name = _SCALAR_NAMES.get(np.dtype(input.dtype).name, str(input.dtype))
        raise InvalidArgumentError(f"embedding: Expected tensor for argument #1 'indices' to have one of the following "
                                   f"scalar types: Long, Int; but got {name} ids of shape {tuple(input.shape)}")  # fmt: skip
    if max_norm is not None or scale_grad_by_freq:
        return _embedding_pytorch_options(input, weight, padding_idx, max_norm, norm_type, scale_grad_by_freq)
    if weight.ndim != 2:
        raise InvalidArgumentError(
            f"embedding: weight must be (num_embeddings, embedding_dim), got shape {tuple(weight.shape)}"
        )
    n = weight.shape[0]
    if tracing() and isinstance(input, Tensor):
        # While tracing the ids are an input of the program: no host read, one Take op. No ops
        # wrap negative ids (as W[ids] does): a negative id is out of range, as in PyTorch's
        # embedding, which raises for it; a replay does not check the range (NumPy reads a
        # negative id from the end, as its take does), eager raises IndexError.
        ids = _as_operand("embedding", input, weight, "input")
        if ids.dtype.kind not in "iuf":
            raise IndexError(f"embedding: ids must be integers, got {ids.dtype}")
        if ids.dtype != np.int64:  # (float tensors holding integers, as W[ids] takes them)
            ids = ids.detach().astype(np.int64)
        out = _Take.apply(weight, ids, args=0)  # (..., dim)
        if padding_idx is None:
            return out
        return where((ids == padding_idx % n).unsqueeze(-1), out.detach(), out)
    host = host_integers(input, "embedding", "input (indices)")
    if host.size and (host.min() < 0 or host.max() >= n):
        bad = host.min() if host.min() < 0 else host.max()
        raise IndexError(f"embedding: index {bad} is out of range for a weight of {n} rows")
    if sparse and weight.requires_grad:
        if max_norm is not None or scale_grad_by_freq:
            raise UnsupportedModeError(
                "embedding: sparse=True with max_norm or scale_grad_by_freq is not supported here"
            )
        if padding_idx is not None and not -n <= padding_idx < n:
            raise ValueError(f"embedding: padding_idx {padding_idx} is out of range for a weight of {n} rows")
        from ..tensors.sparse import embedding_grad  # noqa: PLC0415 - (the sparse module imports functional's users)

        return embedding_grad(weight, weight._dev.asarray(host.astype(np.int64)), padding_idx)
    if isinstance(input, Tensor) and input.dtype.kind in "iu":
        ids = _as_operand("embedding", input, weight, "input")
    else:  # lists and float tensors of whole numbers: the checked host copy
        ids = Tensor(host, device=weight.device)
    # (..., dim); repeated ids accumulate gradient. A lookup is new memory, as PyTorch's: one
    # 0-d id gathers a row of one (weight[id] would be a view of it)
    out = weight[ids] if ids.ndim else weight[ids.reshape(1)].reshape(weight.shape[1:])
    if padding_idx is None:
        return out
    if not -n <= padding_idx < n:
        raise ValueError(f"embedding: padding_idx {padding_idx} is out of range for a weight of {n} rows")
    is_pad = (ids == padding_idx % n).unsqueeze(-1)  # (..., 1)
    return where(is_pad, out.detach(), out)


def _embedding_pytorch_options(ids: Any, weight: Tensor, padding_idx: int | None, max_norm: float | None,
                               norm_type: float, scale_grad_by_freq: bool) -> Tensor:  # fmt: skip
    """``embedding`` with PyTorch's ``max_norm`` and ``scale_grad_by_freq`` (read on the host)."""
    from ..engine.switches import no_grad  # noqa: PLC0415 - (a local name: this module's own no_grad is absent)

    if weight.ndim != 2:
        raise InvalidArgumentError(
            f"embedding: weight must be (num_embeddings, embedding_dim), got shape {tuple(weight.shape)}"
        )
    host = host_integers(ids, "embedding", "input (indices)")
    if max_norm is not None and host.size:
        with no_grad():  # (as PyTorch's embedding_renorm_: the weight itself, outside the graph)
            rows = np.unique(host)
            if rows.min() >= 0 and rows.max() < weight.shape[0]:
                sel = weight[rows]
                norms = sel.norm(norm_type, 1, keepdim=True)
                weight[rows] = sel * where(norms > max_norm, max_norm / (norms + 1e-7), 1.0)
    out = embedding(ids, weight, padding_idx)
    if scale_grad_by_freq and host.size:
        _, inverse, counts = np.unique(host.reshape(-1), return_inverse=True, return_counts=True)
        scale = Tensor((1.0 / counts[inverse]).reshape(host.shape + (1,)).astype(out.dtype), device=weight.device)
        out = out.detach() + (out - out.detach()) * scale  # (the value unchanged; the gradient divided by the count)
    return out


_PAD_MODES = ("constant", "reflect", "replicate", "circular")
_PAD_NODES = {"reflect": "reflection", "replicate": "replication"}  # (PyTorch's ops: reflection_pad1d, ...)


@public(function=False, functional=True)
def pad(input: Tensor, pad: tuple[int, ...], mode: str = "constant", value: float | None = None) -> Tensor:
    """Pad (or, with negative amounts, crop) the last axes, PyTorch's way.

    ``pad`` is ``(left, right)`` for the last axis, then ``(left, right)`` for the one
    before, and so on. ``mode``: ``"constant"`` (fill with ``value``, default 0),
    ``"reflect"`` (mirror without repeating the edge), ``"replicate"`` (repeat the edge)
    or ``"circular"`` (wrap around).
    """
    pad = tuple(int(p) for p in pad)
    if len(pad) % 2 or len(pad) // 2 > input.ndim:  # (PyTorch's RuntimeError; a ValueError as the library's was)
        raise InvalidArgumentError(
            f"pad: needs (left, right) pairs for at most {input.ndim} axes of a tensor of shape {tuple(input.shape)}, got {pad}"
        )
    if mode not in _PAD_MODES:
        raise UnsupportedModeError(f"pad: mode must be one of {_PAD_MODES}, got {mode!r}")
    if mode != "constant" and value:
        raise ValueError(f"pad: value applies to mode 'constant' only, not {mode!r}")
    if mode != "constant" and not (len(pad) in (2, 4, 6) and input.ndim in (len(pad) // 2 + 1, len(pad) // 2 + 2)):
        raise NotImplementedError(  # (PyTorch's kernels: the last 1, 2 or 3 axes of a 1 or 2 times batched input)
            f"pad: Padding size {len(pad)} is not supported for {input.ndim}D input tensor ({mode} pads the last 1, 2 or "
            f"3 axes of a 2D-3D, 3D-4D or 4D-5D tensor; the tensor has shape {tuple(input.shape)})"
        )
    if mode in ("reflect", "replicate"):  # (PyTorch has no bool kernel for these; 'circular' copies)
        check_dtype(f"{mode}_pad", input, "numeric")
    if mode == "circular":  # (PyTorch writes it from slices and copies: its steps show, as ours)
        return _pad_steps(input, pad, mode, value)
    # (PyTorch's one node: ConstantPadNdBackward0, ReflectionPad1DBackward0, ReplicationPad2DBackward0, ...)
    name = "constant_pad_nd" if mode == "constant" else f"{_PAD_NODES[mode]}_pad{len(pad) // 2}d"
    with recorded_as(name, input):
        return _pad_steps(input, pad, mode, value)


def _pad_steps(x: Tensor, pad: tuple[int, ...], mode: str, value: float | None) -> Tensor:
    x0 = x
    for i in range(len(pad) // 2):
        axis, lo, hi = x.ndim - 1 - i, pad[2 * i], pad[2 * i + 1]
        n = x.shape[axis]
        if n + lo + hi < 0:
            raise InvalidArgumentError(
                f"pad: cropping {-lo} and {-hi} from axis {axis} of size {n} leaves a negative size"
            )
        if lo == hi == 0:
            continue
        if mode == "constant":
            x = _pad_constant(x, axis, lo, hi, 0.0 if value is None else value)
            continue
        pos = np.arange(-lo, n + hi)  # the source position of each output position
        if mode == "reflect":
            if max(lo, hi) >= n:
                raise InvalidArgumentError(f"pad: reflect needs padding below the axis size {n}, got ({lo}, {hi})")
            pos = np.abs(pos)
            pos = np.where(pos >= n, 2 * (n - 1) - pos, pos)
        elif mode == "replicate":
            if n == 0:
                raise InvalidArgumentError(f"pad: replicate needs a non-empty axis {axis}")
            pos = np.clip(pos, 0, n - 1)
        else:  # PyTorch crops first, then wraps what is left
            m, start = n + min(lo, 0) + min(hi, 0), max(-lo, 0)
            if max(lo, hi) > m:
                raise InvalidArgumentError(
                    f"pad: circular padding ({lo}, {hi}) wraps around the axis of size {m} more than once"
                )
            pos = start + np.arange(-max(lo, 0), m + max(hi, 0)) % m
        x = x[(slice(None),) * axis + (Tensor(pos.astype(np.int64), device=x.device),)]
    # PyTorch's pad always returns new memory (a zero or a cropping pad is no view)
    out = x.clone() if _memory_root(x._data) is _memory_root(x0._data) else x
    return result_in_format_of(out, x0) if mode == "constant" else out  # (PyTorch's constant pad keeps the format)


@public
def constant_pad_nd(input: Tensor, pad: tuple[int, ...], value: Any = 0) -> Tensor:  # noqa: A002
    """:func:`pad` with a constant (``torch.constant_pad_nd``, torch's top-level name; not in ``F``)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"constant_pad_nd: expected a Tensor as input, got {type(input).__name__}")
    return _padded(input, pad, "constant", value)


_padded = pad  # (constant_pad_nd's parameter is named pad, as PyTorch's)


# -- attention masks ---------------------------------------------------------------------
class MaskDtypeError(TypeError, RuntimeError, AssertionError):
    """An attention mask neither boolean nor floating point: PyTorch's ``scaled_dot_product_attention``
    raises RuntimeError, its ``MultiheadAttention`` AssertionError; a TypeError too, this library's
    class for an argument of the wrong type."""


def check_mask_dtype(op: str, mask: Any) -> None:
    """Raise unless ``mask`` is boolean (True = may attend) or floating point (added to the
    scores). An integer mask means neither for sure (a ``tril`` of ones was once silently
    added to the scores), so it is refused rather than guessed at."""
    kind = mask_dtype(mask)
    if kind.kind not in "bf":
        raise MaskDtypeError(
            f"{op}: attention mask has dtype {kind}; give a bool mask (True = may attend) or a float mask "
            "(added to the scores: 0 = may attend, -inf = may not); for a 0/1 mask pass (mask != 0)"
        )


@public(function=False, functional=True)
def elu_(input: Tensor, alpha: float = 1.0, scale: float = 1.0, input_scale: float = 1.0) -> Tensor:  # noqa: A002 - PyTorch's names
    """``elu`` written into ``input``; with PyTorch's kernel's ``scale`` and ``input_scale`` (``scale * x``
    where positive, ``scale * alpha * (exp(input_scale * x) - 1)`` elsewhere)."""
    if scale == 1 and input_scale == 1:
        return elu(input, alpha, inplace=True)
    y = where(input > 0, input * scale, (input * input_scale).expm1() * (alpha * scale))
    return input.copy_(y)


@public(function=False, functional=True)
def leaky_relu_(input: Tensor, negative_slope: float = 0.01) -> Tensor:  # noqa: A002
    """``leaky_relu`` written into ``input``."""
    return leaky_relu(input, negative_slope, inplace=True)


# -- each fused op's definition in tensor ops (what it recomputes for gradients of higher
# order), handed down to the op, which imports nothing above it
fused.SoftmaxAlongDim.definition = staticmethod(softmax)
fused.LogSoftmaxAlongDim.definition = staticmethod(log_softmax)
fused.MaskedSoftmax.definition = staticmethod(masked_softmax)
fused.AdditiveScore.definition = staticmethod(additive_score)
fused.Affine.definition = staticmethod(linear)
fused.LayerNormalization.definition = staticmethod(_layer_norm_last)
fused.Gelu.definition = staticmethod(gelu)
fused.CrossEntropy.definition = staticmethod(_cross_entropy_reference)
fused.Attention.definition = staticmethod(_attention_reference)
fused.CrossEntropyKept.definition = staticmethod(_cross_entropy_kept_reference)


# -- PyTorch's linear_cross_entropy and functional multi-head attention
@public(function=False, functional=True)
def linear_cross_entropy(input: Tensor, linear_weight: Tensor, target: Tensor, *, linear_bias: Tensor | None = None,
                         weight: Tensor | None = None, reduction: str = "mean", ignore_index: int | None = None,
                         label_smoothing: float = 0.0, options: Any = None) -> Tensor:  # fmt: skip
    """PyTorch's ``F.linear_cross_entropy``: ``cross_entropy(linear(input, linear_weight,
    linear_bias), target, ...)`` with ``input`` ``(in_features,)`` or ``(N, in_features)`` and
    ``linear_weight`` ``(C, in_features)``, or ``(C, d_1, ..., d_K, in_features)`` for a
    K-dimensional loss (logits ``(N, C, d_1, ..., d_K)``). ``ignore_index=None`` means -100
    for class indices and is refused with class probabilities, as PyTorch's.

    ``options`` (a :class:`~tinygrad_attn.nn.LinearCrossEntropyOptions`) chooses PyTorch's
    chunked computation, which saves memory and gives the same values; here the logits are
    always formed whole, so ``options`` changes nothing.

    >>> F.linear_cross_entropy(tga.randn(4, 8), tga.randn(10, 8), tga.tensor([1, 0, 9, 3]))  # doctest: +SKIP
    """
    op = "linear_cross_entropy"
    for t, what in ((input, "input"), (linear_weight, "linear_weight"), (target, "target")):
        if not isinstance(t, Tensor):
            raise TypeError(f"{op}: {what} must be a Tensor, got {type(t).__name__}")
    if input.ndim < 1 or input.ndim > 2:
        raise RuntimeError(f"expected input with dimensionality 1 or 2, got {input.ndim}")
    if options is not None and getattr(options, "acc_dtype", None) is None and input.dtype.kind != "f":
        # (PyTorch's chunked path accumulates in the input's dtype when given none, and checks it first)
        raise ValueError(f"{op}: acc_dtype must be one of {{None, float16, bfloat16, float32, float64}}, got "
                         f"{input.dtype} (the input's, picked automatically); pass a floating-point input")  # fmt: skip
    if linear_weight.ndim < 2:
        raise RuntimeError(f"expected linear_weight with dimensionality at least 2, got {linear_weight.ndim}")
    batches, in_features = tuple(input.shape[:-1]), input.shape[-1]
    if in_features != linear_weight.shape[-1]:
        raise RuntimeError("expected equal input and linear_weight last dimensions (in_features), got "
                           f"{in_features} and {linear_weight.shape[-1]}, respectively")  # fmt: skip
    classes, out_features = linear_weight.shape[0], tuple(linear_weight.shape[1:-1])
    if linear_bias is not None and tuple(linear_bias.shape) != (classes, *out_features):
        raise RuntimeError(f"expected linear_bias shape {(classes, *out_features)}, got {tuple(linear_bias.shape)}")
    if out_features and not batches:
        raise RuntimeError(f"K-dimensional loss defined by linear_weight shape {tuple(linear_weight.shape)} requires "
                           f"batched input, (N, {in_features}), got unbatched input with shape "
                           f"{tuple(input.shape)}")  # fmt: skip
    logits_shape = (*batches, classes, *out_features)
    if tuple(target.shape) == logits_shape and ignore_index is not None:  # (PyTorch's test for probabilities)
        raise RuntimeError("ignore_index cannot be specified when target contains probabilities")
    n = classes * math.prod(out_features)
    logits = linear(input, linear_weight.reshape(n, in_features),
                    None if linear_bias is None else linear_bias.reshape(n))  # fmt: skip
    chunked = options is not None and reduction in ("mean", "sum", "none") and not label_smoothing
    if chunked and not out_features and target.dtype == np.int64 and _declare.low_precision(logits):
        # (PyTorch's chunked path: its own log-sum-exp of float16 and bfloat16 logits, its sums in float32 and
        # the loss rounded once, not log_softmax's kernel, which rounds a row's sum to the dtype)
        return cross_entropy(logits.float(), target, weight if weight is None else weight.float(), reduction=reduction,
                             ignore_index=-100 if ignore_index is None else ignore_index).astype(logits.dtype)  # fmt: skip
    return cross_entropy(logits.reshape(logits_shape), target, weight, reduction=reduction,
                         ignore_index=-100 if ignore_index is None else ignore_index,
                         label_smoothing=label_smoothing)  # fmt: skip


@public(function=False, functional=True)
def multi_head_attention_forward(
    query: Tensor, key: Tensor, value: Tensor, embed_dim_to_check: int, num_heads: int,
    in_proj_weight: Tensor | None, in_proj_bias: Tensor | None, bias_k: Tensor | None, bias_v: Tensor | None,
    add_zero_attn: bool, dropout_p: float, out_proj_weight: Tensor, out_proj_bias: Tensor | None,
    training: bool = True, key_padding_mask: Tensor | None = None, need_weights: bool = True,
    attn_mask: Tensor | None = None, use_separate_proj_weight: bool = False, q_proj_weight: Tensor | None = None,
    k_proj_weight: Tensor | None = None, v_proj_weight: Tensor | None = None, static_k: Tensor | None = None,
    static_v: Tensor | None = None, average_attn_weights: bool = True, is_causal: bool = False,
) -> tuple[Tensor, Tensor | None]:  # fmt: skip
    """PyTorch's ``F.multi_head_attention_forward``: ``nn.MultiheadAttention``'s computation
    with its weights passed in. It is :func:`tinygrad_attn.nn.attention.multi_head_attention_forward`,
    handed down as ``multi_head_attention_forward.implementation`` by ``nn/attention.py`` (which
    imports this module), so the layer and this function are one implementation; called before
    ``tga.nn`` is loaded, it loads it."""
    args = dict(locals())
    if not hasattr(multi_head_attention_forward, "implementation"):
        import importlib  # noqa: PLC0415 - (by name: nn builds on this module, not the other way)

        importlib.import_module(f"{__package__.rpartition('.')[0]}.nn.attention")
    return multi_head_attention_forward.implementation(**args)  # type: ignore[attr-defined]


# -- the namespace: every function declared ``@public(functional=True)`` beside its definition,
# here, in a module of this package (each imported below) or elsewhere (``where``: the Tensor's)
def _import_modules() -> None:
    """Every module of this package, so that each one's declarations are made."""
    import importlib  # noqa: PLC0415
    import pkgutil  # noqa: PLC0415

    for info in pkgutil.iter_modules(__path__):
        importlib.import_module(f"{__name__}.{info.name}")


_import_modules()
# (each behind the __torch_function__ check, engine.overrides)
globals().update({n: _dispatching(d.fn, f"nn.functional.{n}") for n, d in _declare.FUNCTIONAL.items()})
__all__ = list(_declare.FUNCTIONAL)
