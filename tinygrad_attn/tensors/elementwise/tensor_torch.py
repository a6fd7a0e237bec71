"""PyTorch's spellings of Tensor methods (``x.add x.div(rounding_mode=) x.eq x.clamp
x.new_zeros x.sin x // y x % y ...``): each one function, installed on :class:`Tensor` by
the package's ``install_methods`` and, where PyTorch has the free function, ``tga.`` too.
"""

from __future__ import annotations

from typing import Any

from ... import ops
from ...functional.checks import tensor_operand
from ...ops.alias import NoDerivative
from ...ops.compare import IntFloorDivide, IntRemainder
from ...ops.saved import saved_for_backward
from .._tensor import InvalidArgumentError, Tensor, _add, where
from ..dtypes import UnsupportedDtypeError, result_type
from ..promotion import _FLOATS, _as_float, _promoted

__all__ = ["sign", "sin", "cos", "floor", "ceil", "square", "neg", "rsqrt", "reciprocal", "add", "sub", "mul", "div",
           "true_divide", "eq", "ne", "lt", "le", "gt", "ge", "greater", "less", "greater_equal", "less_equal",
           "not_equal", "multiply", "divide", "subtract", "floor_divide", "rsub", "negative", "positive"]  # fmt: skip
from ...engine.declare import public


def _floor_quotient(a: Any, b: Any, op: str) -> tuple[Any, Any, Tensor]:
    """The operands of ``//`` and ``%`` promoted, and the one that is a tensor; bools have
    neither (PyTorch's "div_floor" / "remainder" not implemented for 'Bool')."""
    a, b = _promoted(a, b)
    like = a if isinstance(a, Tensor) else b
    if like.dtype.kind == "b":
        raise UnsupportedDtypeError(f'"{op}" not implemented for \'Bool\' (bool tensor of shape {like.shape}); '
                                    "convert with .long() first")  # fmt: skip
    return a, b, like


def _floor_divide(a: Any, b: Any) -> Tensor:
    """Python's (and PyTorch's) ``//``: rounds toward minus infinity; integers stay integers.
    As PyTorch's ``floor_divide`` it has no derivative: its backward raises (the zero
    gradient is ``div(a, b, rounding_mode="floor")``'s)."""
    a, b, like = _floor_quotient(a, b, "floor_divide")
    if like.dtype.kind in "fc":
        q = ops.Floor.apply(a / b)
        return NoDerivative.apply(q, args="floor_divide") if q.requires_grad else q
    return IntFloorDivide.apply(a, b)


def _remainder(a: Any, b: Any) -> Tensor:
    """Python's (and PyTorch's) ``%``: the sign of the divisor; ``a - floor(a / b) * b``."""
    a, b, like = _floor_quotient(a, b, "remainder")
    if like.dtype.kind in "fc":
        out = a - ops.Floor.apply(a / b).detach() * b
        return saved_for_backward(out, a, b) if isinstance(a, Tensor) and isinstance(b, Tensor) else out
    return IntRemainder.apply(a, b)


@public(function=False, method=True)
def dim(self) -> int:
    return self.ndim


@public(function=False, method=True)
def nelement(self) -> int:
    return self.numel()


@public(function=False, method=True)
def is_floating_point(self) -> bool:
    return self.dtype.kind in "fc"


@public(function=False, method=True)
def element_size(self) -> int:
    return self.dtype.itemsize


@public(function=False, method=True)
def clone(self) -> Tensor:
    """A copy with its own array; gradients flow back through it."""
    if self.requires_grad:  # (+ -0.0 changes no value, -0.0 included: + 0 would make it +0.0)
        return _add(self, -0.0)
    return Tensor._wrap(self._dev.copy(self._data), self._dev)


@public(function=False, method=True)
def type_as(self, other: Tensor) -> Tensor:
    return self.astype(other.dtype)


@public(function=False, method=True)
def new_tensor(self, data: Any, dtype: Any = None) -> Tensor:
    return Tensor(data, dtype=dtype or self.dtype, device=self._dev)


@public(function=False, method=True)
def new_zeros(self, *size: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    return _new(Tensor.zeros(*size, dtype=dtype or self.dtype, device=device or self._dev), requires_grad)


@public(function=False, method=True)
def new_ones(self, *size: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    return _new(Tensor.ones(*size, dtype=dtype or self.dtype, device=device or self._dev), requires_grad)


@public(function=False, method=True)
def new_empty(self, *size: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    """As :func:`new_zeros` (an uninitialised tensor would show whatever memory held before)."""
    return _new(Tensor.zeros(*size, dtype=dtype or self.dtype, device=device or self._dev), requires_grad)


@public(function=False, method=True)
def new_full(self, size: Any, fill_value: Any, dtype: Any = None, device: Any = None,
             requires_grad: bool = False) -> Tensor:  # fmt: skip
    return _new(Tensor.full(size, fill_value, dtype=dtype or self.dtype, device=device or self._dev), requires_grad)


def _new(t: Tensor, requires_grad: bool) -> Tensor:
    """``t`` as the ``new_*`` methods return it: a leaf, requiring grad when asked (PyTorch's keyword)."""
    return t.requires_grad_(True) if requires_grad else t


@public(method=True)
def add(self, other: Any, *, alpha: Any = 1) -> Tensor:
    """``self + alpha * other`` (``torch.add``; ``self`` may be a number)."""
    return self + (other if alpha == 1 and alpha.__class__ is int else _scaled(self, other, alpha, "add"))


@public(method=True)
@public(name="subtract", method=True, inplace=True)
def sub(self, other: Any, *, alpha: Any = 1) -> Tensor:
    """``self - alpha * other`` (``torch.sub``; ``self`` may be a number)."""
    return self - (other if alpha == 1 and alpha.__class__ is int else _scaled(self, other, alpha, "sub"))


def _scaled(a: Any, b: Any, alpha: Any, op: str) -> Any:
    """``alpha * b`` as PyTorch's ``add``/``sub`` scale it: in the result's dtype (``alpha`` takes
    no part in the promotion), a float ``alpha`` only for a float result, a bool one only for bool."""
    dt = result_type(a, b)
    if op == "sub" and any(x.__class__ is bool or isinstance(x, Tensor) and x.dtype.kind == "b" for x in (a, b)):
        return b  # (the subtraction itself refuses bools, with PyTorch's message)
    if isinstance(alpha, float) and dt.kind in "biu":
        raise RuntimeError(f"{op}: For integral input tensors, argument alpha must not be a floating point number "
                           f"(alpha={alpha}, result {dt})")  # fmt: skip
    if isinstance(alpha, bool) and dt.kind != "b":
        raise RuntimeError(f"{op}: Boolean alpha only supported for Boolean results (alpha={alpha}, result {dt})")
    if not isinstance(b, Tensor):  # a number: scaled in the result's kind (bool + 2 * True is bool)
        return bool(b * alpha) if dt.kind == "b" else int(b * alpha) if dt.kind in "iu" else b * alpha
    scaled = b.astype(dt) * alpha
    return scaled if scaled.dtype == dt else scaled.astype(dt)


@public(method=True)
@public(name="multiply", method=True, inplace=True)
def mul(self, other: Any) -> Tensor:
    return self * other


@public(method=True)
@public(name="divide", method=True, inplace=True, aliases=("true_divide",))
def div(self, other: Any, *, rounding_mode: str | None = None) -> Tensor:
    """``self / other``; ``rounding_mode="floor"`` or ``"trunc"`` rounds the quotient."""
    if rounding_mode is None:
        return self / other
    if rounding_mode == "floor":  # (differentiable, where ``//`` is not: a zero gradient, as PyTorch's)
        a, b, like = _floor_quotient(self, self._operand(other), "div")
        if like.dtype.kind not in "fc":
            return IntFloorDivide.apply(a, b)
        return _zero_gradient_of(ops.Floor.apply(_detached(a) / _detached(b)), a, b)
    if rounding_mode == "trunc":
        a, b = _promoted(self, self._operand(other))
        if (a if isinstance(a, Tensor) else b).dtype.kind in "biu":
            # integers stay integers, as in PyTorch: the floor quotient, one nearer zero
            # where the signs differ and the division is not exact
            q = a // b
            return where((q < 0) & (q * b != a), q + 1, q)
        q = _detached(a) / _detached(b)
        return _zero_gradient_of(ops.Sign.apply(q) * ops.Floor.apply(q.abs()), a, b)
    raise InvalidArgumentError(f"div: rounding_mode must be None, 'floor' or 'trunc', not {rounding_mode!r}")


def _detached(x: Any) -> Any:
    return x.detach() if isinstance(x, Tensor) else x


def _zero_gradient_of(q: Tensor, *of: Any) -> Tensor:
    """A rounded quotient as a function of ``of`` with derivative zero, as PyTorch's ``div``
    with a rounding mode: zeros, also where the divisor is 0 (not 0 * inf)."""
    from ...ops.saved import ZeroDerivative  # noqa: PLC0415 - (kept off the shared import lines)

    given = [x for x in of if isinstance(x, Tensor) and x.requires_grad]
    return ZeroDerivative.apply(q, *given) if given else q


@public(method=True, inplace=True)
def pow(input: Any, exponent: Any) -> Tensor:  # noqa: A002 - torch.pow's names
    """``input ** exponent`` (``torch.pow`` takes a number ``input`` too)."""
    return (
        input**exponent if isinstance(input, Tensor) else tensor_operand(exponent, "pow", "exponent", 2).__rpow__(input)
    )


@public(method=True, inplace_function=True, aliases=("negative",))
def neg(self) -> Tensor:
    return -self


@public(method=True, inplace_function=True)
def square(self) -> Tensor:
    if self.dtype.kind == "b":  # (PyTorch squares a bool tensor as int64: bool * bool would stay bool)
        return self.long() * self.long()
    return self * self


@public(method=True, inplace_function=True)
def reciprocal(self) -> Tensor:
    return 1.0 / self


@public(method=True, inplace_function=True)
def rsqrt(self) -> Tensor:
    return 1.0 / self.sqrt()


@public(method=True)
def matmul(input: Tensor, other: Any) -> Tensor:  # noqa: A002 - torch.matmul's names
    """The matrix product, as ``numpy.matmul``: 1-D operands and broadcast batches."""
    return input @ other


@public(method=True, inplace=True)
@public(name="__floordiv__", function=False, method=True)
def floor_divide(self, other: Any) -> Tensor:
    """``self // other`` (``torch.floor_divide``): floor of the quotient, without a derivative."""
    return _floor_divide(self, self._operand(other))


__floordiv__ = floor_divide


@public(function=False, method=True)
def __rfloordiv__(self, other: Any) -> Tensor:
    return _floor_divide(self._operand(other), self)


@public(function=False, method=True)
def __mod__(self, other: Any) -> Tensor:
    return _remainder(self, self._operand(other))


@public(function=False, method=True)
def __rmod__(self, other: Any) -> Tensor:
    return _remainder(self._operand(other), self)


@public(function=False, method=True)
def __abs__(self) -> Tensor:
    return self.abs()


@public(method=True, inplace=True)
def eq(self, other: Any) -> Tensor:
    return tensor_operand(self, "eq") == other


@public(method=True, inplace=True, aliases=("not_equal",))
def ne(self, other: Any) -> Tensor:
    return tensor_operand(self, "ne") != other


@public(method=True, inplace=True, aliases=("less",))
def lt(self, other: Any) -> Tensor:
    return tensor_operand(self, "lt") < other


@public(method=True, inplace=True, aliases=("less_equal",))
def le(self, other: Any) -> Tensor:
    return tensor_operand(self, "le") <= other


@public(method=True, inplace=True, aliases=("greater",))
def gt(self, other: Any) -> Tensor:
    return tensor_operand(self, "gt") > other


@public(method=True, inplace=True, aliases=("greater_equal",))
def ge(self, other: Any) -> Tensor:
    return tensor_operand(self, "ge") >= other


@public
def rsub(self, other: Any, *, alpha: Any = 1) -> Tensor:
    """``other - alpha * self`` (``torch.rsub``; no Tensor method, as in PyTorch)."""
    return sub(other, tensor_operand(self, "rsub"), alpha=alpha)


@public(method=True)
@public(name="__pos__", function=False, method=True)
def positive(self) -> Tensor:
    """``+self``: the tensor itself; PyTorch refuses it for bool tensors."""
    if self.dtype.kind == "b":
        raise RuntimeError(f"The `+` operator, on a bool tensor is not supported (shape {self.shape}).")
    return self


# PyTorch's second names of the same functions (``x.greater is x.gt``, ``tga.multiply is tga.mul``)
greater, less, greater_equal, less_equal, not_equal = gt, lt, ge, le, ne
multiply, divide, true_divide, subtract, negative = mul, div, div, sub, neg


@public(method=True, inplace=True)
def sign(self) -> Tensor:
    if self.dtype.kind == "b":  # (the sign of a bool is itself; NumPy has no sign of bools)
        return self.clone()
    return ops.Sign.apply(self)


@public(method=True, inplace_function=True)
def sin(self) -> Tensor:
    return ops.Sin.apply(self if self._data.dtype.__class__ in _FLOATS else _as_float(self))


@public(method=True, inplace_function=True)
def cos(self) -> Tensor:
    return ops.Cos.apply(self if self._data.dtype.__class__ in _FLOATS else _as_float(self))


@public(method=True, inplace_function=True)
def floor(self) -> Tensor:
    return ops.Floor.apply(self) if _rounded(self, "floor") else self.clone()


@public(method=True, inplace_function=True)
def ceil(self) -> Tensor:
    return ops.Ceil.apply(self) if _rounded(self, "ceil") else self.clone()


def _rounded(x: Tensor, op: str) -> bool:
    """Whether ``floor``/``ceil``/``round``/``trunc`` of ``x`` rounds anything: integers are
    already whole (a copy, as PyTorch's); bools have no such op in PyTorch."""
    if x.dtype.kind == "b":
        raise NotImplementedError(f"\"{op}\" not implemented for 'Bool' (shape {x.shape}); convert with .long()")
    return x.dtype.kind in "fc"
