"""Reductions and scans, each written once: the ``tga.`` free function *is* the Tensor
method (``x.var`` and ``tga.var`` are one function object, installed on :class:`Tensor`
by the package's ``install_methods``).

Axes are read by the one rule of :mod:`tinygrad_attn.tensors.shape.dims`: PyTorch's ``dim=``/``keepdim=``
or NumPy's ``axis=``/``keepdims=``; where the two mean different things (``max min var
std``), NumPy's meaning only with NumPy's keywords. Composites (``mean var logsumexp prod
cumprod norm``) are written in primitives; ``tga.decompose()`` shows them grouped.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

from ... import ops
from ...engine.arguments import refuse
from ...engine.composite import composite, recorded_as
from ...engine.declare import public
from ...engine.forward_grads import differentiated
from ...engine.switches import is_grad_enabled
from ...engine.warn import warn as _user_warn
from ...functional.checks import written_to_out
from ...ops.compare import AllTrue, AnyTrue
from ...ops.saved import NoGradient, saved_for_backward, with_gradient_of
from .. import return_types
from .._tensor import InvalidArgumentError, Tensor, where
from ..dtypes import UnsupportedDtypeError, accumulate_dtype, get_default_dtype, scalar_type_name, torch_dtype
from ..shape import dims

__all__ = ["ValuesIndices",]  # fmt: skip

_builtin_sum = sum  # (this module's sum, max, min, all, any are PyTorch's)


class ValuesIndices(NamedTuple):
    """What PyTorch's ``max(dim=)``, ``min(dim=)``, ``sort`` and ``topk`` return: each op's
    own subclass (:func:`values_indices`), named and printed as PyTorch's ``torch.return_types.max``."""

    values: Tensor
    indices: Tensor

    def __repr__(self) -> str:
        return f"torch.return_types.{type(self).__name__}(\nvalues={self.values!r},\nindices={self.indices!r})"


_RETURN_TYPES: dict[str, type] = {}


def values_indices(op: str, values: Tensor, indices: Tensor) -> ValuesIndices:
    """``(values, indices)`` as the class named for ``op`` (``type(x.max(0)).__name__ == "max"``)."""
    cls = _RETURN_TYPES.get(op)
    if cls is None:
        cls = _RETURN_TYPES[op] = type(op, (ValuesIndices,), {"__slots__": (), "__reduce__": _reduce_values_indices})
        return_types.register(cls)  # (tga.return_types.max, as torch.return_types.max)
    return cls(values, indices)


def _reduce_values_indices(self: ValuesIndices) -> tuple:
    return (values_indices, (type(self).__name__, self.values, self.indices))


def _reduced_count(x: Tensor, axis: Any) -> int:
    axes = dims.axes(x.shape, axis, "mean")
    return x.numel() if axes is None else math.prod(x.shape[a] for a in axes)


def _work_dtype(acc: np.dtype) -> np.dtype:
    """The dtype a reduction producing ``acc`` runs in: float16 sums and moments run
    in float32 and are rounded once at the end, as PyTorch's CPU kernels do (a float16 running
    sum drifts by whole units over a thousand terms)."""
    return np.dtype(np.float32) if acc == np.float16 else acc


#: ``logsumexp``'s ``dim`` left out: PyTorch's TypeError (as None is; NumPy's ``axis=None`` is every axis)
_NO_DIM: Any = type("_NoDim", (), {"__repr__": lambda self: "<required>"})()


def differentiable_dtype(input: Tensor, acc: np.dtype) -> np.dtype:
    """``acc``, a reduction's ``dtype=``, where a gradient can flow through it: PyTorch refuses
    to record an integer result of an input that requires grad (``x.sum(dtype=torch.int32)``)."""
    if acc.kind not in "fc" and isinstance(input, Tensor) and input.requires_grad and is_grad_enabled():
        raise RuntimeError(f"Autograd not support dtype: {scalar_type_name(acc)} (a {input.dtype} input that "
                           "requires grad reduced into an integer dtype; detach it or pick a floating dtype)")  # fmt: skip
    return acc


# -- sums and means ----------------------------------------------------------------------
@public(method=True)
def sum(input: Tensor, dim: Any = None, keepdim: bool = False, *, dtype: Any = None, axis: Any = None,  # noqa: A001, A002
        keepdims: bool | None = None) -> Tensor:  # fmt: skip
    """The sum over ``dim`` (``axis``; all elements when None); ``dtype`` sums in that dtype,
    bools and integers sum in int64 (as PyTorch's)."""
    acc = differentiable_dtype(input, accumulate_dtype(input.dtype, dtype))
    if input.dtype != (work := _work_dtype(acc)):
        input = input.astype(work)  # noqa: A001
    if axis is not None or keepdims is not None:
        dim, keepdim = dims.alias(axis, dim, "sum"), dims.keep(keepdim, keepdims)
    dim = dims.all_if_empty(dim)
    out = ops.Sum.apply(input, args=(None if dim is None else dims.axes(input.shape, dim, "sum"), bool(keepdim)))
    return out if out.dtype == acc else out.astype(acc)  # (NumPy sums narrow integers wider)


@composite("mean")
def _mean(x: Tensor, axis: Any = None, keepdims: bool = False) -> Tensor:
    n = _reduced_count(x, axis)  # (divided, as PyTorch's sum(...).div_(n): times 1/n rounds otherwise)
    return x.sum(axis, keepdims) / n if n > 0 else x.sum(axis, keepdims) * math.inf


@public(method=True)
def mean(input: Tensor, dim: Any = None, keepdim: bool = False, *, dtype: Any = None, axis: Any = None,  # noqa: A002
         keepdims: bool | None = None) -> Tensor:  # fmt: skip
    """The mean over ``dim`` (``axis``); all elements when None. Bool and integer tensors
    need ``dtype=`` (PyTorch's RuntimeError: it cannot infer a float dtype for them)."""
    if dtype is not None:
        if np.dtype(dtype).kind not in "fc":
            raise RuntimeError(f"mean(): could not infer output dtype. Optional dtype must be either a floating point "
                               f"or complex dtype. Got: {scalar_type_name(dtype)}")  # fmt: skip
        input = input.astype(dtype)  # noqa: A001
    elif input.dtype.kind not in "fc":
        raise RuntimeError(f"mean(): could not infer output dtype. Input dtype must be either a floating point or "
                           f"complex dtype. Got: {scalar_type_name(input.dtype)} (shape {tuple(input.shape)}); "
                           "pass dtype= or convert with .float()")  # fmt: skip
    if axis is not None or keepdims is not None:
        dim, keepdim = dims.alias(axis, dim, "mean"), dims.keep(keepdim, keepdims)
    dim = dims.all_if_empty(dim)
    dims.axes(input.shape, dim, "mean")
    return _mean(input, dim, bool(keepdim))  # (float16 in float32: engine.composite.HALF_IN_FLOAT32)


@composite("var")
def _var(x: Tensor, axis: Any = None, keepdims: bool = False, correction: float = 0) -> Tensor:
    if x.dtype.kind == "c":  # (E|z - mean|^2: the spreads of the two parts added, a real result as PyTorch's)
        return _var(x.real, axis, keepdims, correction) + _var(x.imag, axis, keepdims, correction)
    d = x - x.mean(axis, keepdims=True)
    n = _reduced_count(x, axis) - correction
    if n > 0:
        return (d * d).sum(axis, keepdims) / n
    # No degrees of freedom left: inf, or NaN where the spread is 0 (0 * inf), as PyTorch's, with its warning
    _user_warn(
        f"var(): degrees of freedom is <= 0 (correction {correction} for {_reduced_count(x, axis)} elements)",
        UserWarning,
    )
    with np.errstate(invalid="ignore"):
        value = (d * d).sum(axis, keepdims).detach() * math.inf
    if not differentiated(x):
        return value
    # Its gradient is PyTorch's formula 2 (x - mean) / (N - correction), whose divisor is not
    # clamped: finite for a negative one, +-inf for 0 (NaN where x is the mean). As the slope of
    # sum(d0 (2 (x - m) - d0)) / n with the mean m and the spread d0 held constant: the slope
    # of (d * d).sum() / n would also pass through the mean (inf - inf = NaN)
    m = x.mean(axis, keepdims=True).detach()
    d0 = d.detach()
    with np.errstate(invalid="ignore", divide="ignore"):
        if axis is None:  # (over every entry, PyTorch's divisor is clamped to 0: +inf, NaN at the mean, unsigned)
            surrogate = ((x - m) * where(d0 == 0, math.nan, math.inf)).sum(axis, keepdims)
        elif _reduced_count(x, axis) == 1:  # (one entry: x is its mean, every derivative 0 * inf = NaN, as PyTorch's)
            surrogate = (d * d).sum(axis, keepdims) * (1.0 / n if n else math.inf)
        else:  # (PyTorch's formula as an op: recorded, its second derivative is PyTorch's too)
            return ops.VarianceWithoutFreedom.apply(x, args=(tuple(dims.axes(x.shape, axis, "var")), keepdims, n))
    return with_gradient_of(value, surrogate)


@public(method=True)
def var(input: Tensor, dim: int | Sequence[int] | bool | None = None, unbiased: bool | None = None, keepdim: bool = False, *,  # noqa: A002
        correction: Any = None, axis: Any = None, keepdims: bool | None = None, ddof: int | None = None) -> Tensor:  # fmt: skip
    """PyTorch's ``var``, method and free function: unbiased (``correction=1``) unless told
    otherwise (``x.var(0, True)`` is ``unbiased=True``, ``x.var(False)`` the population
    variance); with NumPy's keywords (``axis=``, ``keepdims=``, ``ddof=``) NumPy's
    population variance, as ``numpy.var``."""
    v = _variance("var", input, dim, unbiased, keepdim, correction, axis, keepdims, ddof)
    return saved_for_backward(_rounded_to(v, input.dtype), input)  # (PyTorch's keeps the input)


def _variance(op: str, x: Tensor, dim: Any, unbiased: Any, keepdim: bool, correction: Any, axis: Any,
              keepdims: Any, ddof: Any) -> Tensor:  # fmt: skip
    if isinstance(dim, bool):  # PyTorch's var(unbiased) overload
        dim, unbiased = None, dim
    sp = dims.spelling(op, dim, keepdim, axis=axis, keepdims=keepdims, ddof=ddof)
    given = [c for c in (correction, ddof, unbiased) if c is not None]
    if len(given) > 1:
        raise TypeError(f"{op}: pass correction= or unbiased= (or NumPy's ddof=), not several")
    if x.dtype.kind not in "fc":  # (after the arguments' types, as PyTorch's parser reads them first)
        raise RuntimeError(f"{op}: std and var only support floating point and complex dtypes, got "
                           f"{x.dtype} (shape {tuple(x.shape)}); convert with .float()")  # fmt: skip
    if correction is not None or ddof is not None:
        c = correction if correction is not None else ddof
        c = int(c) if float(c).is_integer() else float(c)  # (PyTorch takes a fractional correction as it is)
    elif unbiased is not None:
        c = 1 if unbiased else 0
    else:
        c = 0 if sp.numpy else 1
    dim = dims.all_if_empty(sp.dim)
    dims.axes(x.shape, dim, op)
    return _var(x if x.dtype == (work := _work_dtype(x.dtype)) else x.astype(work), dim, sp.keepdim, c)


def _rounded_to(v: Tensor, dtype: np.dtype) -> Tensor:
    """A spread in the dtype of its input (of a complex input's parts: a spread is real)."""
    if np.dtype(dtype).kind == "c":
        dtype = torch_dtype(dtype).to_real()
    return v if v.dtype == dtype else v.astype(dtype)


def sqrt_of_variance(v: Tensor) -> Tensor:
    """``sqrt(v)`` for a standard deviation: where the spread is 0 its gradient is 0, as
    PyTorch's ``std`` (not ``0 * 1/(2 * 0)`` = NaN: sqrt's slope at 0 is infinite)."""
    zero = v == 0
    return where(zero, 0.0, where(zero, 1.0, v).sqrt())


@public(method=True)
def std(input: Tensor, dim: int | Sequence[int] | bool | None = None, unbiased: bool | None = None, keepdim: bool = False, *,  # noqa: A002
        correction: Any = None, axis: Any = None, keepdims: bool | None = None, ddof: int | None = None) -> Tensor:  # fmt: skip
    """The square root of :func:`var` (the same defaults); its gradient where the spread is 0 is 0."""
    v = saved_for_backward(_variance("std", input, dim, unbiased, keepdim, correction, axis, keepdims, ddof), input)
    return saved_for_backward(
        _rounded_to(sqrt_of_variance(v), input.dtype), output=True
    )  # (PyTorch's keeps the input and the result)


@composite("logsumexp")
def _logsumexp(x: Tensor, axis: Any = None, keepdims: bool = False) -> Tensor:
    axes = dims.axes(x.shape, axis, "logsumexp")
    if x.dtype.kind == "c" and _reduced_count(x, axis) > 0:  # (shifted by the largest real part, held constant)
        m = x.real.detach().amax(axes, keepdim=True)
        m = where(m.abs() == math.inf, m.new_zeros(()), m)
        out = (x - m).exp().sum(axes, keepdims).log()
        return out + (m if keepdims else m.sum(axes))
    if _reduced_count(x, axis) == 0:  # log(0) = -inf, as PyTorch; there is no max to shift by
        return x.exp().sum(axes, keepdims).log()
    # A constant shift keeps exp from overflowing; an infinite max shifts by 0 instead, so
    # that logsumexp([inf, 0]) is inf and of [-inf, -inf] is -inf (not inf - inf = NaN).
    m = x.max(axes, keepdims=True).detach()
    m = where(m.abs() == math.inf, 0.0, m)
    out = (x - m).exp().sum(axes, keepdims=True).log() + m
    return out if keepdims else out.squeeze(axes if axes is not None else tuple(range(x.ndim)))


@public(method=True, special=("logsumexp",))
def logsumexp(input: Tensor, dim: Any = _NO_DIM, keepdim: bool = False, *, axis: Any = None,  # noqa: A002
              keepdims: bool | None = None) -> Tensor:  # fmt: skip
    """``log(sum(exp(x)))`` over ``dim`` (required, as PyTorch's; ``()`` is every axis), computed without overflow."""
    if dim is _NO_DIM or dim is None:  # (NumPy's axis=None, every axis, is still taken)
        if axis is None and keepdims is None:
            raise TypeError('logsumexp() missing 1 required positional arguments: "dim" (give the dims to reduce; '
                            "() for every axis)")  # fmt: skip
        dim = None
    if isinstance(dim, (list, tuple)) and not dim and not keepdim and input.ndim:
        # (PyTorch's: every axis reduced into an output of no axes, which its kernel refuses)
        raise RuntimeError(f"logsumexp: output with shape [] doesn't match the broadcast shape {list(input.shape)} "
                           "(an empty dim list reduces every axis; give keepdim=True or the dims)")  # fmt: skip
    d = dims.all_if_empty(dims.alias(axis, dim, "logsumexp"))
    dims.axes(input.shape, d, "logsumexp")
    x = input.astype(get_default_dtype()) if input.dtype.kind in "biu" else input  # (PyTorch's: ints to the float)
    out = _logsumexp(x, d, dims.keep(keepdim, keepdims))
    return saved_for_backward(out, input, output=True)  # (PyTorch's keeps both: the version check follows)


# -- extremes ----------------------------------------------------------------------------
def _one_dim(x: Tensor, dim: Any, op: str) -> int:
    return dims.one(x.shape, dim, op, scalar_ok=False)


def _pick(x: Tensor, dim: Any, keepdim: bool, axis: Any, keepdims: Any, op: str) -> Any:
    """``max``/``min`` by the rule of :func:`dims.spelling`: a positional ``dim`` gives
    PyTorch's ``(values, indices)``, NumPy's ``axis=`` the values."""
    if isinstance(dim, Tensor):  # max(a, b): elementwise, as in torch
        return x.maximum(dim) if op == "max" else x.minimum(dim)
    extreme = ops.Max if op == "max" else ops.Min
    sp = dims.spelling(op, dim, keepdim, axis=axis, keepdims=keepdims)
    if sp.numpy or sp.dim is None or not isinstance(sp.dim, (int, np.integer)):  # values only
        if not sp.numpy and sp.dim is not None:
            raise TypeError(f"{op}: dim must be one int, got {sp.dim!r}; use amax/amin for several dims")
        return extreme.apply(x, args=(dims.axes(x.shape, sp.dim, op), sp.keepdim))
    if x.ndim == 0:  # dim 0 or -1 of a 0-d tensor: itself and index 0, as in PyTorch
        dims.axes(x.shape, sp.dim, op)
        with recorded_as(op, x):  # (PyTorch's one node: MaxBackward0, MinBackward0)
            values = x.clone()
        return values_indices(op, values, Tensor._wrap(x._dev.ops.zeros_like(x._data), x._dev).long())
    d = _one_dim(x, sp.dim, op)
    if x.shape[d] == 0:
        _empty_reduction(x.shape, (d,), op)
    with recorded_as(op, x):
        idx = ops.ArgExtreme.apply(x, args=(d, op))  # (the axis kept, length 1)
        values = ops.GatherAlong.apply(x, idx, args=(d, x.shape))
        if not sp.keepdim:
            values, idx = values.squeeze(d), idx.squeeze(d)
    return values_indices(op, values, idx)


def _dim_if_keepdim(dim: Any, keepdim: Any, op: str) -> Any:
    """``max(x, t, True)``: a one-element integer tensor followed by ``keepdim`` is a dim (PyTorch's
    ``max(input, dim, keepdim)``, the only overload taking three); alone it is the other operand.
    A bool is neither (PyTorch's parser takes no bool for an int): its ``TypeError``."""
    if isinstance(dim, (bool, np.bool_)):
        refuse(op, "dim", 2, "int", dim)
    if isinstance(dim, Tensor) and keepdim is not None and dim.numel() == 1 and not dim.is_floating_point():
        return int(dim.item())
    return dim


@public(method=True)
def max(input: Tensor, dim: int | Tensor | None = dims.NOT_GIVEN, keepdim: bool | None = None, *, axis: Any = None,  # noqa: A001, A002
        keepdims: bool | None = None) -> Any:  # fmt: skip
    """``max(x)``: the largest value; ``max(x, dim)``: PyTorch's ``(values, indices)``;
    ``max(x, axis=...)``: the values alone (NumPy's); ``max(a, b)``: the elementwise maximum."""
    dim = dims.given("max", _dim_if_keepdim(dim, keepdim, "max"), numpy=axis is not None or keepdims is not None)
    _keepdim_needs_dim("max", dim, axis, keepdim)
    if dim is None and axis is None and keepdims is None:  # (the common whole-tensor max, directly)
        return ops.Max.apply(input, args=(None, bool(keepdim)))
    return _pick(input, dim, keepdim, axis, keepdims, "max")


@public(method=True)
def min(input: Tensor, dim: int | Tensor | None = dims.NOT_GIVEN, keepdim: bool | None = None, *, axis: Any = None,  # noqa: A001, A002
        keepdims: bool | None = None) -> Any:  # fmt: skip
    """As :func:`max`, for the smallest."""
    dim = dims.given("min", _dim_if_keepdim(dim, keepdim, "min"), numpy=axis is not None or keepdims is not None)
    _keepdim_needs_dim("min", dim, axis, keepdim)
    if dim is None and axis is None and keepdims is None:
        return ops.Min.apply(input, args=(None, bool(keepdim)))
    return _pick(input, dim, keepdim, axis, keepdims, "min")


def _empty_reduction(shape: tuple, axes: Any, op: str) -> None:
    """PyTorch's errors for a max or min with nothing to pick from (called for empty tensors only):
    ``RuntimeError`` without dims, ``IndexError`` naming an empty reduced dim."""
    if axes is None:
        raise RuntimeError(f"{op}(): Expected reduction dim to be specified for input.numel() == 0 (shape {shape}).")
    for a in axes:
        if shape[a] == 0:
            raise IndexError(f"{op}(): Expected reduction dim {a} to have non-zero size (shape {shape}).")


@public(method=True)
def amax(input: Tensor, dim: Any = (), keepdim: bool = False) -> Tensor:  # noqa: A002
    """The largest values over ``dim`` (all when empty; no indices)."""
    axes = dims.axes(input.shape, dims.all_if_empty(dim), "amax")
    if 0 in input.shape:
        _empty_reduction(input.shape, axes, "amax")
    # (every axis named, not None: PyTorch's amax() is its MaxBackward's amax, not max()'s)
    return ops.Max.apply(input, args=(tuple(range(input.ndim)) if axes is None else axes, bool(keepdim)))


@public(method=True)
def amin(input: Tensor, dim: Any = (), keepdim: bool = False) -> Tensor:  # noqa: A002
    """The smallest values over ``dim`` (all when empty; no indices)."""
    axes = dims.axes(input.shape, dims.all_if_empty(dim), "amin")
    if 0 in input.shape:
        _empty_reduction(input.shape, axes, "amin")
    # (every axis named, not None: PyTorch's amin() is its MinBackward's amin, not min()'s)
    return ops.Min.apply(input, args=(tuple(range(input.ndim)) if axes is None else axes, bool(keepdim)))


def _keepdim_needs_dim(op: str, dim: Any, axis: Any, keepdim: Any) -> None:
    """PyTorch's whole-tensor ``max``/``min``/``median`` take no ``keepdim`` (a TypeError; None: not given)."""
    if keepdim is not None and dim is None and axis is None:
        raise TypeError(f"{op}() received an invalid combination of arguments - got keepdim without dim: "
                        f"use {op}(dim, keepdim=True) or amax/amin(keepdim=True)")  # fmt: skip


def _arg_reduce(x: Tensor, op: str, axis: Any, keepdims: bool) -> Tensor:
    """``argmax``/``argmin``: each its own reduction (argmin is not argmax(-x), which
    overflows at an integer minimum and is undefined for bool); a 0-d tensor's one element
    is at index 0. An op (``ArgExtreme``), so a traced program recomputes it. ``dim`` is one
    int or None, as PyTorch's (a tuple raises its TypeError); ``keepdim`` without a dim keeps
    every axis, with length 1."""
    if axis is not None and not isinstance(axis, (int, np.integer)) and not hasattr(axis, "__index__"):
        raise TypeError(f"{op}(): argument 'dim' must be int, not {type(axis).__name__}")
    axes = dims.axes(x.shape, axis, op)
    if x.dtype.kind == "b":
        raise RuntimeError(f"{op}(): does not support bool input (shape {tuple(x.shape)}); convert with .long()")
    if axes == ():
        return Tensor._wrap(x._dev.asarray(np.zeros((), np.int64)), x._dev)
    if x.numel() == 0 and (axes is None or x.shape[axes[0]] == 0):
        why = f"{op}: cannot take the {op} over an empty axis (shape {tuple(x.shape)}, axis {axis})"
        if axes is None:  # (PyTorch's argmax and argmin raise an IndexError here, max and min a RuntimeError)
            raise dims.DimensionError(f"{why}: Expected reduction dim to be specified for input.numel() == 0")
        raise dims.DimensionError(f"{why}: Expected reduction dim to have non-zero size")
    pick = op[3:]
    if axes is None:
        return ops.ArgExtreme.apply(x.detach().reshape(-1), args=(0, pick)).reshape((1,) * x.ndim if keepdims else ())
    a = axes[0]
    out = ops.ArgExtreme.apply(x, args=(a, pick))  # the axis kept, length 1
    return out if keepdims else out.reshape(out.shape[:a] + out.shape[a + 1 :])


@public(method=True)
def argmax(input: Tensor, dim: Any = None, keepdim: bool = False, *, axis: Any = None,  # noqa: A002
           keepdims: bool | None = None) -> Tensor:  # fmt: skip
    """The index of the largest value over ``dim`` (of the flattened tensor when None)."""
    return _arg_reduce(input, "argmax", dims.alias(axis, dim, "argmax"), dims.keep(keepdim, keepdims))


@public(method=True)
def argmin(input: Tensor, dim: Any = None, keepdim: bool = False, *, axis: Any = None,  # noqa: A002
           keepdims: bool | None = None) -> Tensor:  # fmt: skip
    """The index of the smallest value over ``dim`` (of the flattened tensor when None)."""
    return _arg_reduce(input, "argmin", dims.alias(axis, dim, "argmin"), dims.keep(keepdim, keepdims))


@public(method=True)
def all(input: Tensor, dim: Any = None, keepdim: bool = False, *, axis: Any = None,  # noqa: A001, A002
        keepdims: bool | None = None) -> Tensor:  # fmt: skip
    """Whether every element is true (over ``dim`` when given)."""
    axes = dims.axes(input.shape, dims.alias(axis, dim, "all"), "all")
    out = AllTrue.apply(input, args=(axes, dims.keep(keepdim, keepdims)))  # (an op: a traced program computes it again)
    return out.astype(input.dtype) if input.dtype == np.uint8 else out  # (PyTorch's all of uint8 is uint8)


@public(method=True)
def any(input: Tensor, dim: Any = None, keepdim: bool = False, *, axis: Any = None,  # noqa: A001, A002
        keepdims: bool | None = None) -> Tensor:  # fmt: skip
    """Whether any element is true (over ``dim`` when given)."""
    axes = dims.axes(input.shape, dims.alias(axis, dim, "any"), "any")
    out = AnyTrue.apply(input, args=(axes, dims.keep(keepdim, keepdims)))  # (an op: a traced program computes it again)
    return out.astype(input.dtype) if input.dtype == np.uint8 else out  # (PyTorch's any of uint8 is uint8)


# -- products and scans --------------------------------------------------------------------
def _new_memory(out: Tensor, x: Tensor) -> Tensor:
    """``out``, or a copy of it (on the graph) when the cheap path made a view of ``x``:
    for ops whose PyTorch result is always new memory (flip, roll, repeat, pad, prod,
    cumsum, ...), so that changing the result in place never changes ``x``."""
    from ...engine.versions import _memory_root  # noqa: PLC0415 - (the engine's memory identity)

    if _memory_root(out._data) is _memory_root(x._data):
        return out.clone()
    return out


@composite("prod")
def _prod(x: Tensor, dim: Any = None, keepdim: bool = False) -> Tensor:
    """The product over ``dim`` (all elements when None): one op whose gradient is PyTorch's
    (:mod:`~tinygrad_attn.tensors.reduce.product_gradients`)."""
    if dim is None:
        return ops.Prod.apply(x, args=(None, bool(keepdim)))
    if x.ndim == 0:  # dim 0 (or -1) of a 0-d tensor: a copy of itself, as in PyTorch
        dims.axes(x.shape, dim, "prod")
        return ops.Prod.apply(x, args=(None, False))
    return ops.Prod.apply(x, args=((_one_dim(x, dim, "prod"),), bool(keepdim)))


@public(method=True)
def prod(
    input: Tensor, dim: Any = dims.NOT_GIVEN, keepdim: bool = False, *, dtype: Any = None, axis: Any = None
) -> Tensor:  # noqa: A002
    """The product over ``dim`` (all elements when None); exact with zeros. ``axis=`` is
    PyTorch's alias of ``dim``."""
    dim = dims.alias(axis, dims.given("prod", dim, numpy=axis is not None), "prod")
    if isinstance(dim, (list, tuple)) or (dim is None and keepdim):  # (PyTorch's prod takes one int dim or none)
        raise TypeError(f"prod(): argument 'dim' must be int, not {type(dim).__name__} (keepdim needs a dim)")
    acc = differentiable_dtype(input, accumulate_dtype(input.dtype, dtype))  # (bools and integers multiply in int64)
    x = input if input.dtype == acc else input.astype(acc)  # (wider running products: ops.scan.accumulated)
    return _prod(x, dim, keepdim)


@composite("cumprod")
def _cumprod(x: Tensor, dim: int) -> Tensor:
    """Running products along ``dim``: one op whose gradient is PyTorch's."""
    if x.ndim == 0:  # dim 0 (or -1) of a 0-d tensor: a copy of itself, as in PyTorch
        dims.axes(x.shape, dim, "cumprod")
        return ops.Cumprod.apply(x, args=0)
    return ops.Cumprod.apply(x, args=_one_dim(x, dim, "cumprod"))


def _refuse_bool_scan(op: str, acc: np.dtype) -> None:
    """PyTorch's error for a running sum or product computed in bool (``dtype=torch.bool``, or a
    bool ``out``): its CPU kernels have none."""
    if acc.kind == "b":
        raise UnsupportedDtypeError(f"\"{op}_out_cpu\" not implemented for 'Bool' ({op} with dtype torch.bool)")


@public(method=True, inplace=True, inplace_dtypes="numeric")
def cumprod(input: Tensor, dim: Any = None, *, dtype: Any = None, axis: Any = None) -> Tensor:  # noqa: A002
    """Running products along ``dim`` (``axis``)."""
    if isinstance(dim, (list, tuple)):
        raise TypeError(f"cumprod(): argument 'dim' (position 1) must be int, not {type(dim).__name__}")
    acc = differentiable_dtype(input, accumulate_dtype(input.dtype, dtype))
    _refuse_bool_scan("cumprod", acc)
    x = input if input.dtype == acc else input.astype(acc)  # (wider running products: ops.scan.accumulated)
    return _cumprod(x, dims.required(axis, dim, "cumprod"))


@public(method=True, inplace=True, inplace_dtypes="numeric")
def cumsum(input: Tensor, dim: Any = None, *, dtype: Any = None, axis: Any = None) -> Tensor:  # noqa: A002
    """Running sums along ``dim`` (``axis``)."""
    if isinstance(dim, (list, tuple)):
        raise TypeError(f"cumsum(): argument 'dim' (position 1) must be int, not {type(dim).__name__}")
    dim = dims.required(axis, dim, "cumsum")
    acc = differentiable_dtype(input, accumulate_dtype(input.dtype, dtype))  # (ints sum in int64; dtype= in that)
    _refuse_bool_scan("cumsum", acc)
    # (a float16 or float32 scan carries its running value wider: ops.scan.accumulated, PyTorch's acc_type)
    x = input if input.dtype == acc else input.astype(acc)
    if x.ndim == 0:  # dim 0 (or -1) of a 0-d tensor: a copy of itself, as in PyTorch
        dims.axes(x.shape, dim, "cumsum")
        return x.clone() if x.dtype == acc else x.astype(acc)
    out = ops.Cumsum.apply(x, args=_one_dim(x, dim, "cumsum"))
    return out if out.dtype == acc else out.astype(acc)


# linalg.matrix_norm, put here by linalg (which builds on this module) when it is imported: norm's 'nuc'
MATRIX_NORM: list = []


@public(method=True)
def norm(input: Tensor, p: Any = "fro", dim: Any = None, keepdim: bool = False, out: Any = None,  # noqa: A002
         dtype: Any = None) -> Tensor:  # fmt: skip
    """The vector p-norm over ``dim`` (all elements when None): ``"fro"``/2, 1, ``inf``,
    ``-inf``, 0 (the count of non-zeros) or any other positive ``p``; ``dtype`` casts the
    input first, ``out`` receives the result (see :func:`functional_checks.written_to_out`).

    One function is both ``tga.norm`` (``torch.norm``'s ``out, dtype``) and the method, whose
    PyTorch signature has ``dtype`` fifth: a dtype given there is read as ``dtype``."""
    if out is not None and dtype is None and not isinstance(out, Tensor):
        out, dtype = None, out  # (x.norm(p, dim, keepdim, dtype), as PyTorch's method)
    if isinstance(p, Tensor) and p.ndim == 0:  # (a 0-d tensor is a number to PyTorch's parser)
        p = p.item()
    if not (p is None or isinstance(p, (str, int, float, np.number))):  # (x.norm((0,)): a dim given as p)
        raise TypeError(f"norm(): argument 'p' must be a number or a string, not {type(p).__name__}; "
                        "give the dims as dim=")  # fmt: skip
    dim = dims.all_if_empty(dim)
    if dtype is not None and torch_dtype(dtype).kind not in "fc":
        raise RuntimeError(f"linalg.vector_norm: dtype should be floating point or complex, but got "
                           f"{scalar_type_name(torch_dtype(dtype))}")  # fmt: skip
    if input.dtype.kind not in "fc":  # (dtype= does not make an integer input a norm's)
        raise RuntimeError(f"linalg.vector_norm: Expected a floating point or complex tensor as input. Got "
                           f"{scalar_type_name(input.dtype)} (shape {tuple(input.shape)}); convert with .float()")  # fmt: skip
    if p == "nuc":  # (the sum of singular values of the matrices in the plane dim: linalg.matrix_norm's)
        if dim is None and input.ndim != 2:
            raise RuntimeError(f"linalg.matrix_norm: The input tensor A must have at least 2 dimensions (norm 'nuc' "
                               f"without dim needs a matrix, got shape {tuple(input.shape)})")  # fmt: skip
        r = MATRIX_NORM[0](input, "nuc", (-2, -1) if dim is None else tuple(dim), keepdim, dtype=dtype)
        return written_to_out(r, out, "norm")
    r = _norm(input if dtype is None else input.astype(dtype), p, dim, keepdim)  # (float16 in float32: composite)
    return written_to_out(r, out, "norm")


# (PyTorch's nuclear norm has no float16 kernel: computed in float32 it would answer where PyTorch raises)
def _nuclear(args: tuple, kw: dict) -> bool:
    return (kw.get("p") if "p" in kw else args[1] if len(args) > 1 else None) == "nuc"


_f: Any = norm
while _f is not None:  # (every layer the declaration wrapped it in: the float16 rule reads its own)
    _f.keeps_half = _nuclear
    _f = getattr(_f, "__wrapped__", None)


def norm2(x: Tensor, dim: Any, keepdim: bool) -> Tensor:
    """The 2-norm of real ``x`` over ``dim`` (all axes when None) with PyTorch's gradient (0 where
    the norm is 0) and second derivative (NaN there); complex entries through their magnitudes."""
    if x.dtype.kind == "c":
        return sqrt_of_variance((x.abs() * x.abs()).sum(dim, keepdim))
    axes = dims.axes(x.shape, dim, "norm")
    return ops.Norm2.apply(x, args=(None if axes is None else tuple(axes), bool(keepdim)))


def power_norm(a: Tensor, p: float, dim: Any, keepdim: bool) -> Tensor:
    """``sum(a**p) ** (1/p)`` of magnitudes ``a`` over ``dim``, with PyTorch's gradient: 0 at the zero
    entries (not ``p``'s infinite or undefined slope there times 0) and where the norm is 0. A zero
    entry with ``p < 0`` adds ``inf`` (the norm is 0), a constant."""
    nil = a == 0
    safe = where(nil, 1.0, a)
    s = where(nil, 0.0 if p > 0 else math.inf, safe**p).sum(dim, keepdim)
    if p < 0:
        return s ** (1.0 / p)
    zero = s == 0
    return where(zero, 0.0, where(zero, 1.0, s) ** (1.0 / p))


@composite("norm")
def _norm(x: Tensor, p: Any = "fro", dim: Any = None, keepdim: bool = False) -> Tensor:
    dims.axes(x.shape, dim, "norm")
    if p in ("fro", 2, 2.0, None):
        r = norm2(x, dim, keepdim)
    elif p == 1:
        r = x.abs().sum(dim, keepdim)
    elif p == math.inf:
        r = x.abs().amax(() if dim is None else dim, keepdim)
    elif p == -math.inf:
        r = x.abs().amin(() if dim is None else dim, keepdim)
    elif p == 0:  # (the count of non-zeros: in the graph, with no gradient at all, as PyTorch's)
        r = x.detach().abs().sign().sum(dim, keepdim)
        r = NoGradient.apply(r, x) if differentiated(x) else r
    elif isinstance(p, str):
        raise InvalidArgumentError(f"norm: p={p!r} is not supported; use 'fro', 'nuc' or a number")
    else:
        r = power_norm(x.abs(), p, dim, keepdim)
    # PyTorch's norm keeps its input and its result for every p: changing either in place
    # before the backward raises, as there
    return saved_for_backward(r, x, output=True)
