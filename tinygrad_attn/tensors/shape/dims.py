"""The one rule for naming axes: ``dim``/``axis``, ``keepdim``/``keepdims``.

Every method and free function that takes an axis reads it here, so a spelling means
the same thing everywhere and the same mistake gets the same error:

- PyTorch's ``dim=``/``keepdim=`` and NumPy's ``axis=``/``keepdims=`` are aliases; giving
  both ``dim`` and ``axis`` for different axes is a ``TypeError`` naming the op (the same
  axis twice is read as that axis, by the method, the free function and ``F.`` alike).
- Where PyTorch and NumPy *mean* different things (``max min var std squeeze sort``),
  NumPy's meaning holds only when NumPy's keywords are used (:func:`spelling`); a
  positional axis is PyTorch's.
- An axis out of range is a :class:`DimensionError` (PyTorch's ``IndexError``, NumPy's
  ``ValueError``) naming the op, the axis and the shape; a 0-d tensor takes 0 and -1.

This module imports nothing of the package: it works on shapes, not tensors.
"""

from __future__ import annotations

import operator
from typing import Any, NamedTuple

__all__ = [
    "DimSpelling",
    "DimensionError",
    "AxisRuleError",
    "spelling",
    "alias",
    "required",
    "NOT_GIVEN",
    "given",
    "keep",
    "as_int",
    "int_list",
    "axes",
    "one",
    "new_axis",
]


class DimensionError(IndexError, ValueError):
    """An axis out of range. PyTorch raises ``IndexError`` for it, NumPy a ``ValueError``;
    this is both, so code written for either catches it."""


class AxisRuleError(DimensionError, RuntimeError):
    """An axis the rules refuse though it is in range: one named twice where each may appear
    once, or an axis of a tensor that has none (``split`` of a 0-d tensor). PyTorch raises
    ``RuntimeError`` for most of these and ``IndexError`` for some (``select``); this is both."""


class DimSpelling(NamedTuple):
    """How a call named the axes of an op whose meaning differs between PyTorch and NumPy."""

    dim: Any  # the axis or axes (None: all)
    keepdim: bool
    numpy: bool  # NumPy's meaning (NumPy's keywords were used); otherwise PyTorch's


def _both(op: str, axis: Any, dim: Any) -> TypeError:
    return TypeError(f"{op}: got both axis={axis!r} and dim={dim!r}; pass one of them")


def spelling(op: str, dim: Any = None, keepdim: Any = None, *, axis: Any = None, keepdims: Any = None,
             ddof: Any = None) -> DimSpelling:  # fmt: skip
    """The rule for ``max min var std squeeze sort ...`` (method and free function):
    NumPy's meaning only with NumPy's keywords (``axis=``, ``keepdims=``, ``ddof=``); a
    positional axis or PyTorch's ``dim=``/``keepdim=`` give PyTorch's meaning. Here the
    two keywords mean different results, so ``dim`` and ``axis`` together are refused."""
    if dim is not None and axis is not None:
        raise _both(op, axis, dim)
    numpy = axis is not None or keepdims is not None or ddof is not None
    return DimSpelling(dim if axis is None else axis, keep(keepdim, keepdims), numpy)


def alias(axis: Any, dim: Any, op: str) -> Any:
    """PyTorch's ``dim`` or NumPy's ``axis``, for ops where both mean the same (``sum``)."""
    if dim is None:
        return axis
    if axis is not None and axis != dim:  # (the same axis under both names is one axis: accepted)
        raise _both(op, axis, dim)
    return dim


class _NotGiven:
    """The default of a ``dim`` that PyTorch's schema types ``int`` and that may be left out
    (``x.max()``, ``x.max(0)``): a ``None`` passed for it is a mistake (PyTorch's ``TypeError``)."""

    def __repr__(self) -> str:
        return "<every axis>"


NOT_GIVEN: Any = _NotGiven()


def given(op: str, dim: Any, numpy: bool = False) -> Any:
    """``dim`` as the op reads it: None where it was left out; an explicit None raises PyTorch's
    ``TypeError`` (``x.max(None)``: its schemas have ``max(Tensor)`` and ``max(Tensor, int dim)``),
    unless the call is NumPy's (``numpy``: it used ``axis=`` or ``keepdims=``, where None is every axis)."""
    if dim is NOT_GIVEN:
        return None
    if dim is None and not numpy:
        raise TypeError(f"{op}(): argument 'dim' must be int, not NoneType (leave it out to use every element)")
    return dim


def required(axis: Any, dim: Any, op: str) -> Any:
    """``dim`` or its alias ``axis`` (PyTorch takes either), one of which must be given."""
    d = alias(axis, dim, op)
    if d is None:
        raise TypeError(f"{op}: missing the dim to run along (dim=)")
    return d


def keep(keepdim: Any, keepdims: Any = None) -> bool:
    """``keepdim`` (PyTorch) or ``keepdims`` (NumPy): either keeps the reduced axes."""
    return bool(keepdims) or bool(keepdim)


def all_if_empty(dim: Any) -> Any:
    """A reduction's ``dim``, with PyTorch's reading of an empty list or tuple: every axis
    (``x.sum(dim=[])`` is ``x.sum()``; other ops read ``()`` as no axis at all)."""
    return None if isinstance(dim, (list, tuple)) and not dim else dim


def as_int(v: Any) -> Any:
    """A 0-d integer tensor or a NumPy integer as a Python int, as PyTorch's parser reads one
    where an int goes (``x.sum(torch.tensor(0))``, ``x.topk(k)``); anything else as given."""
    if isinstance(v, int) or getattr(v, "ndim", None) != 0 or not hasattr(v, "__index__"):
        return v
    try:
        return operator.index(v)
    except TypeError:  # (a float tensor: the caller's own error names it)
        return v


def int_list(first: Any, more: tuple, op: str = "") -> Any:
    """The ints of a method that takes them as varargs or as one list (``x.tile(2, 1)`` is
    ``x.tile((2, 1))``, PyTorch's reading of an int-list argument); one int stays one int. Given one by
    one, each must be an int (a NumPy integer, a one-element integer tensor): anything else, a tensor of
    several elements among them, is PyTorch's ``TypeError`` before any shape is read."""
    if not more:
        if isinstance(first, (list, tuple)) and first and type(first[0]).__name__ in ("bool", "bool_"):
            # (PyTorch's parser reads a list as ints by its first element: a bool there is refused)
            raise TypeError(f"{op or 'int list'}(): argument 'dims' (position 1) must be tuple of ints, but found "
                            f"element of type bool at pos 0")  # fmt: skip
        return as_int(first)
    found = tuple(as_int(v) for v in (first, *more))
    for at, v in enumerate(found):
        if type(v) is not int:  # (what as_int leaves as it is: a float, a tensor of several entries, a string)
            raise TypeError(
                f'{op or "int list"}(): argument failed to unpack the object at pos {at + 1} with error "type must be tuple of ints, but '
                f'got {type(v).__name__}" (the ints one by one: {found!r})'
            )
    return found


def axes(shape: tuple, axis: Any, op: str, *, distinct: bool = True) -> tuple[int, ...] | None:
    """``axis`` (an int, a sequence of ints, or None for all) checked against ``shape`` and
    made non-negative. A 0-d tensor takes 0 and -1 (the reduction over no axes: ``()``).
    An axis named twice is an error unless ``distinct`` is False (``transpose(0, 0)``,
    ``flatten(1, 1)`` and ``roll`` over one axis twice are PyTorch's too)."""
    if axis is None:
        return None
    nd = len(shape)
    axis = as_int(axis)
    if isinstance(axis, int):
        given: tuple = (axis,)
    elif hasattr(axis, "__index__") and getattr(axis, "ndim", 0) == 0:  # (a NumPy integer, a 0-d integer tensor)
        given = (operator.index(axis),)
    else:
        try:
            given = tuple(map(operator.index, axis))
        except TypeError:
            raise TypeError(f"{op}: dim must be an int or a sequence of ints, got {axis!r}") from None
    if nd == 0:  # PyTorch takes axis 0 and -1 of a 0-d tensor: the reduction over no axes
        for a in given:
            if a not in (0, -1):
                raise DimensionError(f"{op}: axis {a} is out of range for a 0-d tensor (use 0, -1 or None)")
        if distinct and len(given) > 1:  # (0 and -1 are one axis, as PyTorch wraps them: dim=(0, -1) names it twice)
            raise AxisRuleError(f"{op}: dim 0 appears multiple times in the list of dims {axis!r} (a 0-d tensor)")
        return ()
    out = []
    for a in given:
        if not -nd <= a < nd:
            raise DimensionError(f"{op}: axis {a} is out of range for a tensor of shape {tuple(shape)}")
        out.append(a % nd)
    if distinct and len(set(out)) != len(out):
        twice = next(a for a in out if out.count(a) > 1)
        raise AxisRuleError(f"{op}: axis {twice} appears more than once in {axis!r} (shape {tuple(shape)})")
    return tuple(out)


def one(shape: tuple, dim: Any, op: str, *, scalar_ok: bool = True) -> int:
    """One axis, checked against ``shape`` and made non-negative. A 0-d tensor's axis 0
    (or -1) is 0 where ``scalar_ok``; otherwise a 0-d tensor has no axis."""
    if isinstance(dim, bool) or not isinstance(dim, int):
        try:
            dim = operator.index(dim)
        except TypeError:
            raise TypeError(f"{op}: dim must be one int, got {dim!r}") from None
    if not shape:
        if not scalar_ok:
            raise AxisRuleError(f"{op}: axis {dim} is out of range for a 0-d tensor (it has no axes); reshape it first")
        axes(shape, dim, op)
        return 0
    return axes(shape, dim, op)[0]


def new_axis(shape: tuple, dim: Any, op: str) -> int:
    """The position of a new axis (``unsqueeze``, ``stack``): ``-(nd+1) <= dim <= nd``."""
    nd = len(shape) + 1
    if not -nd <= dim < nd:
        raise DimensionError(f"{op}: axis {dim} is out of range for a result of {nd} dimensions")
    return dim % nd
