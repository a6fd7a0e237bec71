"""Tensor comparisons, logical operators and elementwise selections (``< == & | ~
maximum minimum clip masked_fill sigmoid relu erf``), each one function installed on
:class:`Tensor` by the package's ``install_methods``. Comparisons give booleans and no
gradient; dtypes follow PyTorch's promotion (:mod:`tinygrad_attn.tensors.promotion`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ... import ops
from ...engine.declare import check_dtype, public
from ...engine.forward_grads import differentiated
from ...engine.layout import relaid, row_major
from ...engine.switches import tracing
from ...ops.compare import Equal, Greater, GreaterEqual, Less, LessEqual, LogicalAnd, LogicalNot, LogicalOr, NotEqual
from ...ops.saved import saved_for_backward
from .._tensor import InvalidArgumentError, Tensor, where
from ..dtypes import OperandDtypeError, UnsupportedDtypeError, fill_value_in, scalar_type_name
from ..promotion import (
    _FLOATS,
    _as_float,
    _kind,
    _number_for,
    _ordered_operands,
    _promote_for_scalar,
    _promoted,
    bitwise_operands,
    mask_dtype,
    scalar_value,
)

__all__: list[str] = []  # (the free functions of these names are in tensor_functions.py and functional.py)


@public(function=False, method=True)
def __lt__(self, other: Any) -> Tensor:
    return Less.apply(*_ordered_operands(self, self._operand(other)))


@public(function=False, method=True)
def __le__(self, other: Any) -> Tensor:
    return LessEqual.apply(*_ordered_operands(self, self._operand(other)))


@public(function=False, method=True)
def __gt__(self, other: Any) -> Tensor:
    return Greater.apply(*_ordered_operands(self, self._operand(other)))


@public(function=False, method=True)
def __ge__(self, other: Any) -> Tensor:
    return GreaterEqual.apply(*_ordered_operands(self, self._operand(other)))


@public(function=False, method=True)
def __eq__(self, other: Any) -> Any:  # type: ignore[override]
    other = self._operand(other)
    if isinstance(other, Tensor):  # (two tensors compare in their promoted dtype: uint8 255 == tensor(-1))
        return Equal.apply(*_ordered_operands(self, other))
    a = _promote_for_scalar(self, other)
    return Equal.apply(a, _number_for(a, other))


@public(function=False, method=True)
def __ne__(self, other: Any) -> Any:  # type: ignore[override]
    other = self._operand(other)
    if isinstance(other, Tensor):
        return NotEqual.apply(*_ordered_operands(self, other))
    a = _promote_for_scalar(self, other)
    return NotEqual.apply(a, _number_for(a, other))


@public(function=False, method=True)
def __invert__(self) -> Tensor:
    if _kind(self) not in "biu":
        raise UnsupportedDtypeError(f'"bitwise_not" not implemented for {scalar_type_name(self.dtype)!r} (~ of a '
                                    f"{self.dtype} tensor of shape {tuple(self.shape)}); it takes integer or bool tensors")  # fmt: skip
    return LogicalNot.apply(self)


def _bitwise(op: Any, name: str) -> Any:
    def method(self: Tensor, other: Any) -> Tensor:
        o = self._operand(other)
        # (two bool tensors, a mask and a mask, as they are; otherwise PyTorch's promotion, floats refused)
        if _kind(self) != "b" or not (o.__class__ is bool or isinstance(o, Tensor) and _kind(o) == "b"):
            self, o = bitwise_operands(self, o, name)
        return op.apply(self, o)

    return method


__and__ = public(_bitwise(LogicalAnd, "bitwise_and"), name="__and__", function=False, method=True)
__or__ = public(_bitwise(LogicalOr, "bitwise_or"), name="__or__", function=False, method=True)


@public(method=True, inplace_function=True, special=("expit",))
def sigmoid(self) -> Tensor:
    return ops.Logistic.apply(self if self._data.dtype.__class__ in _FLOATS else _as_float(self))


@public(method=True, inplace_function=True)
def relu(self) -> Tensor:
    if self._data.dtype.__class__ in _FLOATS:
        return ops.Relu.apply(self)
    if self.dtype.kind == "b":
        raise RuntimeError(f"Boolean inputs not supported for relu (shape {tuple(self.shape)}); convert with .long()")
    return ops.Relu.apply(self).astype(self.dtype)  # (an integer tensor's relu keeps its dtype, as PyTorch's)


@public(method=True, inplace_function=True, special=("erf",))
def erf(self) -> Tensor:
    return ops.Erf.apply(self if self._data.dtype.__class__ in _FLOATS else _as_float(self))


@public(method=True)
def maximum(self, other: Any) -> Tensor:
    """The elementwise maximum of two tensors (PyTorch's takes no number: ``clamp_min`` does)."""
    if not isinstance(other, Tensor):
        raise TypeError(f"maximum(): argument 'other' (position 2) must be Tensor, not {type(other).__name__}")
    return _extreme(ops.Maximum, self, other)


@public(method=True)
def minimum(self, other: Any) -> Tensor:
    """The elementwise minimum of two tensors (PyTorch's takes no number: ``clamp_max`` does)."""
    if not isinstance(other, Tensor):
        raise TypeError(f"minimum(): argument 'other' (position 2) must be Tensor, not {type(other).__name__}")
    return _extreme(ops.Minimum, self, other)


def _clip_by_tensors(x: Tensor, lo: Any, hi: Any) -> Tensor:
    """``clamp`` with a tensor bound, in ``torch.result_type(x, lo, hi)``, its gradient
    routed as PyTorch's: to ``x`` where ``lo <= x <= hi``, to ``lo`` where ``x < lo < hi``,
    to ``hi`` where ``x > hi`` or ``hi < lo`` (the result is then ``hi``), and to none where
    ``x < lo == hi`` or ``x`` is NaN (the value is still ``lo``, and NaN)."""
    from ..promotion import promoted_operands  # noqa: PLC0415 - (kept off the shared import line)

    given = [x._operand(b) for b in (lo, hi) if b is not None]
    x, *bounds = promoted_operands(x, *given)
    lo = bounds.pop(0) if lo is not None else None
    hi = bounds.pop(0) if hi is not None else None
    if hi is None:
        out = where(x < lo, lo, where(x >= lo, x, x.detach()))
    elif lo is None:
        out = where(x > hi, hi, where(x <= hi, x, x.detach()))
    else:
        const = [b.detach() if isinstance(b, Tensor) else b for b in (x, lo)]
        rest = where((x >= lo) & (x <= hi), x, where(x != x, const[0], const[1]))
        out = where((x < lo) & (lo < hi), lo, where((x > hi) | (hi < lo), hi, rest))
    if out.dtype.kind not in "fc":
        return out
    # NaN in x or a bound: NaN, as PyTorch's kernel (a maximum, then a minimum, each NaN's), the
    # gradient where the comparisons above route it (hi's, where hi < lo beside a NaN x)
    nan = x != x
    for b in (lo, hi):
        if b is not None:
            nan = nan | (b != b)
    return where(nan, out + float("nan"), out)


def _extreme(op: Any, a: Tensor, b: Any) -> Tensor:
    """``maximum``/``minimum`` with a tensor or a number (the library's own uses take numbers)."""
    a, b = _promoted(a, a._operand(b))
    return op.apply(a, _number_for(a, b))


@public(inplace_function=True, method=True, aliases=("clip",), operands=("input", "min", "max"))
def clamp(input: Tensor, min: Tensor | float | None = None, max: Tensor | float | None = None) -> Tensor:  # noqa: A002 - torch.clamp's names
    """``input`` limited to ``[min, max]`` (either may be None; ``clip`` is its second name). The gradient is 1 on the whole closed
    interval, bounds included, as PyTorch's ``clamp`` (not the 1/2 that maximum and
    minimum give ties)."""
    if not isinstance(input, Tensor):  # (PyTorch's parser refuses it before it reads the bounds)
        raise TypeError(f"clamp(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    return clamped(input, min, max)


def _refuse_kernel_dtype(input: Any, min: Any, max: Any) -> None:
    """PyTorch's error where the clamp's result would be complex, or bool: its scalar kernels (``clamp_min_scalar``,
    ``clamp_max_scalar``, ``clamp_scalar``) and its two-tensor ``clamp`` have none for bool; one tensor
    bound alone is ``maximum``/``minimum``, which take bool."""
    from ..dtypes import result_type  # noqa: PLC0415 - (kept off the shared import line)

    bounds = [v for v in (min, max) if v is not None]
    if not isinstance(input, Tensor) or not bounds:
        return
    kind = np.dtype(result_type(input, *bounds)).kind
    if kind == "c":
        raise UnsupportedDtypeError(f"clamp is not supported for complex types (input {input.dtype}, min {min!r}, "
                                    f"max {max!r})")  # fmt: skip
    if kind != "b":
        return
    if all(isinstance(v, Tensor) for v in bounds):
        if len(bounds) == 2:
            check_dtype("clamp", input, "numeric")
    else:
        kernel = "clamp_scalar" if len(bounds) == 2 else "clamp_min_scalar" if max is None else "clamp_max_scalar"
        check_dtype(kernel, input, "numeric")


def clamped(input: Tensor, min: Any = None, max: Any = None) -> Tensor:  # noqa: A002 - torch.clamp's names
    """:func:`clamp`'s computation, for it and ``clamp_min``/``clamp_max``."""
    _refuse_kernel_dtype(input, min, max)
    if min is None and max is None:
        raise InvalidArgumentError("clamp: give at least one of min and max (both are None)")
    # (a NumPy scalar is the Python number it holds, as PyTorch's parser reads it: no float64 result)
    min, max = (scalar_value(v) if isinstance(v, np.generic) else v for v in (min, max))
    if any(isinstance(v, Tensor) for v in (min, max)) and any(isinstance(v, (int, float)) for v in (min, max)):
        # (beside a number bound, a 0-d tensor bound is read as the number it holds, as PyTorch's parser does)
        min, max = (v.item() if isinstance(v, Tensor) and v.ndim == 0 else v for v in (min, max))
    if (isinstance(min, Tensor) or isinstance(max, Tensor)) and not all(
        v is None or isinstance(v, Tensor) for v in (min, max)
    ):
        raise TypeError(f"clamp() received an invalid combination of arguments - got ({type(min).__name__}, "
                        f"{type(max).__name__}): min and max are both tensors or both numbers")  # fmt: skip
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        return saved_for_backward(_clip_by_tensors(input, min, max), input, min, max)
    out = _promote_for_scalar(_promote_for_scalar(input, min), max)
    if (
        out.dtype.kind in "iu"
    ):  # a bound is written as the integer dtype holds it (PyTorch's range check; -5 is uint8's 251)
        min, max = (None if v is None else fill_value_in("clamp", v, out.dtype) for v in (min, max))
    # (a NaN bound: NaN everywhere, with no gradient, as PyTorch's)
    if min is not None:
        out = where(out < min, min, out) if min == min else out * 0 + min
    if max is not None:
        out = where(out > max, max, out) if max == max else out * 0 + max
    if differentiated(input) and input.dtype.kind in "fc":  # NaN: its value, and no gradient, as PyTorch's
        out = where(out == out, out, out.detach())
    return saved_for_backward(out, input, min, max)  # (PyTorch's clamp keeps them: the version check follows)


@public(method=True)
def masked_fill(self, mask: Any, value: Tensor | float) -> Tensor:
    """``value`` where the boolean ``mask`` is True, this tensor elsewhere."""
    kind = mask_dtype(mask)
    if kind != np.bool_:  # as PyTorch: a float or 0/1 mask does not say which entries to fill
        raise OperandDtypeError(
            f"masked_fill: mask must be boolean (True = fill with {value}), got {kind} for a tensor of shape "
            f"{tuple(self.shape)}; for a 0/1 mask pass (mask != 0)"
        )
    if isinstance(value, Tensor) and value.ndim != 0:
        raise RuntimeError(f"masked_fill only supports a 0-dimensional value tensor, but got tensor with "
                           f"{value.ndim} dimension(s) (shape {tuple(value.shape)})")  # fmt: skip
    if isinstance(value, (bool, int, float, np.generic)):  # a number takes this tensor's dtype, as in PyTorch
        value = self.dtype.type(fill_value_in("masked_fill", value, self.dtype)).item()  # (-1 into uint8: 255)
    elif isinstance(value, Tensor) and self.dtype.kind in "iu" and not tracing():
        fill_value_in("masked_fill", value.item(), self.dtype)  # (its number, checked as PyTorch's: -0.5 into uint8)
    out = where(mask, value, self)
    out = out if out.dtype == self.dtype else out.astype(self.dtype)  # (a tensor value too: self's dtype)
    return relaid(out, row_major(out.shape))  # (PyTorch's: a row-major copy, filled)
