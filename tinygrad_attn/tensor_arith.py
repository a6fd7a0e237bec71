"""Tensor comparisons, logical operators and elementwise selections (``< == & | ~
maximum minimum clip masked_fill sigmoid relu erf``), each one function installed on
:class:`Tensor` by the package's ``install_methods``. Comparisons give booleans and no
gradient; dtypes follow PyTorch's promotion (:mod:`tinygrad_attn.promotion`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import ops
from ._tensor import InvalidArgumentError, Tensor, where
from .dtypes import UnsupportedDtypeError, scalar_type_name
from .ops.compare import Equal, Greater, GreaterEqual, Less, LessEqual, LogicalAnd, LogicalNot, LogicalOr, NotEqual
from .ops.saved import saved_for_backward
from .promotion import (
    _FLOATS,
    _as_float,
    _kind,
    _number_for,
    _ordered_operands,
    _promote_for_scalar,
    _promoted,
    bitwise_operands,
    mask_dtype,
)

__all__: list[str] = []  # (the free functions of these names are in tensor_functions.py and functional.py)


def __lt__(self, other: Any) -> Tensor:
    return Less.apply(*_ordered_operands(self, self._operand(other)))


def __le__(self, other: Any) -> Tensor:
    return LessEqual.apply(*_ordered_operands(self, self._operand(other)))


def __gt__(self, other: Any) -> Tensor:
    return Greater.apply(*_ordered_operands(self, self._operand(other)))


def __ge__(self, other: Any) -> Tensor:
    return GreaterEqual.apply(*_ordered_operands(self, self._operand(other)))


def __eq__(self, other: Any) -> Any:  # type: ignore[override]
    if other is None:
        return False
    other = self._operand(other)
    a = _promote_for_scalar(self, other)
    return Equal.apply(a, _number_for(a, other))


def __ne__(self, other: Any) -> Any:  # type: ignore[override]
    if other is None:
        return True
    other = self._operand(other)
    a = _promote_for_scalar(self, other)
    return NotEqual.apply(a, _number_for(a, other))


def __invert__(self) -> Tensor:
    if _kind(self) not in "biu":
        raise UnsupportedDtypeError(f'"bitwise_not" not implemented for {scalar_type_name(self.dtype)!r} (~ of a '
                                    f"{self.dtype} tensor of shape {self.shape}); it takes integer or bool tensors")  # fmt: skip
    return LogicalNot.apply(self)


def _bitwise(op: Any, name: str) -> Any:
    def method(self: Tensor, other: Any) -> Tensor:
        o = self._operand(other)
        # (two bool tensors, a mask and a mask, as they are; otherwise PyTorch's promotion, floats refused)
        if _kind(self) != "b" or not (o.__class__ is bool or isinstance(o, Tensor) and _kind(o) == "b"):
            self, o = bitwise_operands(self, o, name)
        return op.apply(self, o)

    return method


__and__ = _bitwise(LogicalAnd, "bitwise_and")
__or__ = _bitwise(LogicalOr, "bitwise_or")


def sigmoid(self) -> Tensor:
    return ops.Sigmoid.apply(self if self._data.dtype.__class__ in _FLOATS else _as_float(self))


def relu(self) -> Tensor:
    return ops.Relu.apply(self)


def erf(self) -> Tensor:
    return ops.Erf.apply(self if self._data.dtype.__class__ in _FLOATS else _as_float(self))


def maximum(self, other: Any) -> Tensor:
    a, other = _promoted(self, self._operand(other))
    return ops.Maximum.apply(a, _number_for(a, other))


def minimum(self, other: Any) -> Tensor:
    a, other = _promoted(self, self._operand(other))
    return ops.Minimum.apply(a, _number_for(a, other))


def clip(self, lo: Any = None, hi: Any = None) -> Tensor:
    """``lo`` below ``lo``, ``hi`` above ``hi``. The gradient is 1 on the whole closed
    interval, bounds included, as PyTorch's ``clamp`` (not the 1/2 that maximum and
    minimum give ties)."""
    if lo is None and hi is None:
        raise InvalidArgumentError("clip: give at least one of min and max (both are None)")
    out = _promote_for_scalar(_promote_for_scalar(self, lo), hi)
    if lo is not None:
        out = where(out < lo, lo, out)
    if hi is not None:
        out = where(out > hi, hi, out)
    return saved_for_backward(out, self, lo, hi)  # (PyTorch's clamp keeps them: the version check follows)


def masked_fill(self, mask: Any, value: float) -> Tensor:
    """``value`` where the boolean ``mask`` is True, this tensor elsewhere."""
    kind = mask_dtype(mask)
    if kind != np.bool_:  # as PyTorch: a float or 0/1 mask does not say which entries to fill
        raise TypeError(
            f"masked_fill: mask must be boolean (True = fill with {value}), got {kind} for a tensor of shape "
            f"{self.shape}; for a 0/1 mask pass (mask != 0)"
        )
    if isinstance(value, (bool, int, float, np.generic)):  # a number takes this tensor's dtype, as in PyTorch
        value = self.dtype.type(value).item()
    return where(mask, value, self)


#: the Tensor methods of this module (``install_methods`` puts them on Tensor)
METHODS = {n: globals()[n] for n in ("__lt__", "__le__", "__gt__", "__ge__", "__eq__", "__ne__", "__invert__",
                                     "__and__", "__or__", "sigmoid", "relu", "erf", "maximum", "minimum", "clip",
                                     "masked_fill")}  # fmt: skip
