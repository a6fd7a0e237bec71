"""PyTorch's spellings of Tensor methods (``x.add x.div(rounding_mode=) x.eq x.clamp
x.new_zeros x.sin x // y x % y ...``): each one function, installed on :class:`Tensor` by
the package's ``install_methods`` and, where PyTorch has the free function, ``tga.`` too.
"""

from __future__ import annotations

import numbers
import weakref
from typing import Any

import numpy as np

from ... import ops
from ...engine import layout as _memory
from ...engine.arguments import missing
from ...engine.composite import recorded_as
from ...engine.declare import LOW_PRECISION, public
from ...engine.forward_grads import differentiated
from ...engine.layout import channels_last, channels_last_3d, contiguous_format, memory_format, preserve_format
from ...engine.switches import tracing
from ...engine.warn import warn as _user_warn
from ...functional.checks import tensor_operand
from ...ops.alias import NoDerivative
from ...ops.compare import IntFloorDivide, IntRemainder
from ...ops.saved import saved_for_backward, with_gradient_of
from .. import dtypes as _dtypes
from .._tensor import InvalidArgumentError, Tensor, _add, is_tensor_class, where
from ..dtypes import UnsupportedDtypeError
from ..promotion import _FLOATS, _as_float, _promoted, _promoted_div, other_and_alpha
from ..shape import dims

__all__ = ["strided", "layout", "memory_format", "contiguous_format", "preserve_format", "channels_last",
           "channels_last_3d"]  # (objects, not functions: the functions are declared @public)  # fmt: skip


def _floor_quotient(a: Any, b: Any, op: str) -> tuple[Any, Any, Tensor]:
    """The operands of ``//`` and ``%`` promoted, and the one that is a tensor; bools have
    neither (PyTorch's "div_floor" / "remainder" not implemented for 'Bool')."""
    a, b = _promoted(a, b)
    like = a if isinstance(a, Tensor) else b
    if like.dtype.kind == "b":
        raise UnsupportedDtypeError(f'"{op}" not implemented for \'Bool\' (bool tensor of shape {tuple(like.shape)}); '
                                    "convert with .long() first")  # fmt: skip
    return a, b, like


def _float_operand(x: Any, like: Tensor) -> Tensor:
    """``x`` detached, as a tensor of ``like``'s dtype and device (a number 0-d)."""
    if isinstance(x, Tensor):
        return x.detach()
    return Tensor.full((), x, dtype=like.dtype, device=like._dev)


def _modulo(a: Tensor, b: Tensor) -> Tensor:
    """``a mod b`` with the sign of ``b`` from the exact ``fmod`` (PyTorch's and Python's rule for
    floats, not ``a - floor(a / b) * b``, which loses the remainder of a huge quotient)."""
    m = ops.Fmod.apply(a, b)
    return where((m != 0) & ((b < 0) != (m < 0)), m + b, m)


def _float_floor_quotient(a: Tensor, b: Tensor) -> Tensor:
    """``floor(a / b)`` of floats as PyTorch (and Python) round it: ``(a - fmod(a, b)) / b``, one less
    where the remainder's sign is not ``b``'s, then to the nearest integer (the division of the exact
    multiple may miss it by an ulp); a signed zero from ``a / b``; ``a / b`` where ``b`` is 0."""
    m = ops.Fmod.apply(a, b)
    d = (a - m) / b
    d = where((m != 0) & ((b < 0) != (m < 0)), d - 1.0, d)
    f = ops.Floor.apply(d)
    f = where(d - f > 0.5, f + 1.0, f)
    q = a / b
    return where(b == 0, q, where(d != 0, f, where(q.signbit(), -0.0, 0.0).astype(d.dtype)))


def _floor_of_quotient(a: Any, b: Any, like: Tensor) -> Tensor:
    """:func:`_float_floor_quotient` of the operands (numbers or tensors; ``like`` the tensor among them), each step
    in their dtype, as PyTorch's ``div_floor`` kernel; but a float16 or bfloat16 tensor and a number divisor in
    float32, the number read at float32 (the kernel's "opmath" scalar), rounded once: checked against PyTorch,
    equal in every entry (in the dtype's steps a quotient just below an integer rounds up to it before its floor)."""
    if like.dtype not in LOW_PRECISION or isinstance(b, Tensor):
        return _float_floor_quotient(_float_operand(a, like), _float_operand(b, like))
    wide = like.detach().float()
    return _float_floor_quotient(_float_operand(a, wide).float(), _float_operand(b, wide)).astype(like.dtype)


def _floor_divide(a: Any, b: Any) -> Tensor:
    """Python's (and PyTorch's) ``//``: rounds toward minus infinity; integers stay integers.
    As PyTorch's ``floor_divide`` it has no derivative: its backward raises (the zero
    gradient is ``div(a, b, rounding_mode="floor")``'s)."""
    a, b, like = _floor_quotient(a, b, "floor_divide")
    if like.dtype.kind in "fc":
        q = _memory.pointwise_result(_floor_of_quotient(a, b, like), a, b)
        given = [x for x in (a, b) if isinstance(x, Tensor) and differentiated(x)]
        return NoDerivative.apply(_zero_gradient_of(q, *given), args="floor_divide") if given else q
    return IntFloorDivide.apply(a, b)


def _remainder(a: Any, b: Any) -> Tensor:
    """Python's (and PyTorch's) ``%``: the sign of the divisor, from the exact ``fmod``; its gradient is
    ``g`` for ``a`` and ``-g * floor(a / b)`` for ``b``, as PyTorch's."""
    a, b, like = _floor_quotient(a, b, "remainder")
    if like.dtype.kind in "fc":
        ad, bd = _float_operand(a, like), _float_operand(b, like)
        out = _modulo(ad, bd)
        if not any(isinstance(x, Tensor) and differentiated(x) for x in (a, b)):
            return out
        out = with_gradient_of(out, a - _float_floor_quotient(ad, bd) * b)  # (its value unused: the gradient's)
        return saved_for_backward(out, a, b) if isinstance(a, Tensor) and isinstance(b, Tensor) else out
    return IntRemainder.apply(a, b)


@public(function=False, method=True)
def dim(self) -> int:
    return self.ndim


@public(function=False, method=True)
def nelement(self) -> int:
    return self.numel()


@public(method=True)
def is_floating_point(self) -> bool:
    """Whether the dtype is a real floating one (a complex dtype is not, as PyTorch's)."""
    return self.dtype.kind == "f"


@public(method=True)
def is_complex(self) -> bool:
    """Whether the dtype is complex (``complex64``, ``complex128``)."""
    return self.dtype.kind == "c"


@public(function=False, method=True)
def element_size(self) -> int:
    return self.dtype.itemsize


def _itemsize(self) -> int:
    return self.dtype.itemsize


def _nbytes(self) -> int:
    return self.dtype.itemsize * self.numel()


public(property(_itemsize), name="itemsize", function=False, method=True)  # (PyTorch's properties, in bytes)
public(property(_nbytes), name="nbytes", function=False, method=True)


@public(method=True)
def clone(self, *, memory_format: Any = preserve_format) -> Tensor:
    """A copy with its own array; gradients flow back through it. Laid out as PyTorch's: in
    ``memory_format`` (``preserve_format``: a dense input's strides, another's order of dims)."""
    if differentiated(self):  # (+ -0.0 changes no value, -0.0 included: + 0 would make it +0.0)
        out = _add(self, -0.0)
    elif tracing():  # (an op, a copy made again at each replay: not the traced call's values)
        out = ops.Cast.apply(self, args=self._dev.dtype(self.dtype))
    else:
        return self._result_class()._wrap(_memory.copy_as(self._dev, self._data, memory_format), self._dev)
    return _memory.relaid(out, _memory.strides_for(self.shape, self.stride(), memory_format))


@public(function=False, method=True)
def type_as(self, other: Tensor) -> Tensor:
    return self.astype(tensor_operand(other, "type_as", "other", 1).dtype)


@public(function=False, method=True)
def new_tensor(self, data: Any, *, dtype: Any = None, device: Any = None, requires_grad: bool = False,
               layout: Any = None, pin_memory: bool = False) -> Tensor:  # fmt: skip
    """A new leaf holding a copy of ``data``, of this tensor's dtype and device unless given."""
    if is_tensor_class(data):  # (read as torch.tensor reads data, not as the legacy constructor: PyTorch's TypeError)
        raise TypeError(f"new_tensor(): {data.__name__} is a tensor class, not data; pass a tensor, a list or an array")
    if isinstance(data, Tensor) and tracing() and data._dev is self._dev and device is None:  # (an op at each replay)
        return _new(data.detach().clone().astype(dtype or self.dtype), requires_grad)
    return _new(Tensor(data, dtype=dtype or self.dtype, device=device or self._dev), requires_grad)


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
def new_full(self, size: tuple[int, ...], fill_value: Any, dtype: Any = None, device: Any = None,
             requires_grad: bool = False) -> Tensor:  # fmt: skip
    return _new(Tensor.full(size, fill_value, dtype=dtype or self.dtype, device=device or self._dev), requires_grad)


def _new(t: Tensor, requires_grad: bool) -> Tensor:
    """``t`` as the ``new_*`` methods return it: a leaf, requiring grad when asked (PyTorch's keyword)."""
    return t.requires_grad_(True) if requires_grad else t


@public(method=True)
def add(self, other: Any, *more: Any, alpha: Any = 1) -> Tensor:
    """``self + alpha * other`` (``torch.add``; ``self`` may be a number; ``x.add(2, 3)`` and the
    deprecated ``x.add(alpha, other)`` take ``alpha`` by position, as PyTorch's)."""
    other, alpha = other_and_alpha("add", other, more, alpha, deprecated=True)
    return self + (other if alpha == 1 and alpha.__class__ is int else _scaled(self, other, alpha, "add"))


@public(method=True)
def sub(self, other: Any, *more: Any, alpha: Any = 1) -> Tensor:
    """``self - alpha * other`` (``torch.sub``; ``self`` may be a number; ``alpha`` by position as in :func:`add`)."""
    other, alpha = other_and_alpha("sub", other, more, alpha, deprecated=True)
    return self - (other if alpha == 1 and alpha.__class__ is int else _scaled(self, other, alpha, "sub"))


@public(method=True, inplace=True)
def subtract(self, other: Any, *more: Any, alpha: Any = 1) -> Tensor:
    """:func:`sub`, without its deprecated ``subtract(alpha, other)`` order (PyTorch has none)."""
    other, alpha = other_and_alpha("subtract", other, more, alpha, deprecated=False)
    return sub(self, other, alpha=alpha)


def _scaled(a: Any, b: Any, alpha: Any, op: str) -> Any:
    """``alpha * b`` as PyTorch's ``add``/``sub`` scale it: in the result's dtype (``alpha`` takes
    no part in the promotion), a float ``alpha`` only for a float result, a bool one only for bool."""
    dt = _dtypes.result_type(a, b)
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
    if rounding_mode in ("floor", "trunc") and _dtypes.result_type(self, other).kind == "c":  # (PyTorch's: no kernel)
        raise UnsupportedDtypeError(f'"div_{rounding_mode}_cpu" not implemented for complex operands: {rounding_mode} '
                                    "rounding is not defined for complex numbers")  # fmt: skip
    # (PyTorch's one node of the rounding overload, DivBackward2; a number divisor is its tensor without history)
    with recorded_as("div", self, other if isinstance(other, Tensor) else None, overload=2):
        return _rounded_quotient(self, other, rounding_mode)


def _rounded_quotient(self: Tensor, other: Any, rounding_mode: str) -> Tensor:
    """:func:`div`'s quotient rounded by ``rounding_mode``."""
    if rounding_mode == "floor":  # (differentiable, where ``//`` is not: a zero gradient, as PyTorch's)
        a, b, like = _floor_quotient(self, self._operand(other), "div")
        if like.dtype.kind not in "fc":
            return IntFloorDivide.apply(a, b)
        return _zero_gradient_of(_floor_of_quotient(a, b, like), a, b)
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

    given = [x for x in of if isinstance(x, Tensor) and differentiated(x)]
    return ZeroDerivative.apply(q, *given) if given else q


@public(method=True, inplace=True)
def pow(input: Any, exponent: Tensor | float) -> Tensor:  # noqa: A002 - torch.pow's names
    """``input ** exponent`` (``torch.pow`` takes a number ``input`` too)."""
    return (
        input**exponent if isinstance(input, Tensor) else tensor_operand(exponent, "pow", "exponent", 2).__rpow__(input)
    )


@public(method=True, inplace_function=True, aliases=("negative",))
def neg(self) -> Tensor:
    return -tensor_operand(self, "neg")  # (tga.neg(3) is PyTorch's TypeError, not -3)


@public(method=True, inplace_function=True)
def square(self) -> Tensor:
    if self.dtype.kind == "b":  # (PyTorch squares a bool tensor as int64: bool * bool would stay bool)
        return self.long() * self.long()
    return self * self


@public(method=True, inplace_function=True)
def reciprocal(self) -> Tensor:
    return ops.Div.apply(*_promoted_div(1.0, tensor_operand(self, "reciprocal")))


@public(method=True, inplace_function=True)
def rsqrt(self) -> Tensor:
    return self.sqrt().reciprocal()


@public(method=True)
def matmul(input: Tensor, other: Any) -> Tensor:  # noqa: A002 - torch.matmul's names
    """The matrix product, as ``numpy.matmul``: 1-D operands and broadcast batches."""
    return input @ other


@public(method=True, inplace=True)
def floor_divide(self, other: Any) -> Tensor:
    """``self // other`` (``torch.floor_divide``): floor of the quotient, without a derivative;
    ``self`` may be a number (``torch.floor_divide(2, t)``, as PyTorch's)."""
    if not isinstance(self, Tensor):
        o = tensor_operand(other, "floor_divide", "other", 2)
        return _floor_divide(o._operand(self), o)
    return _floor_divide(self, self._operand(other))


@public(function=False, method=True)
def __floordiv__(self, other: Any) -> Tensor:
    return _floor_divide(self, self._operand(other))


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
    return tensor_operand(self, "eq") == _comparand(other, "eq")


@public(method=True, inplace=True, aliases=("not_equal",))
def ne(self, other: Any) -> Tensor:
    return tensor_operand(self, "ne") != _comparand(other, "ne")


def _comparand(other: Any, op: str) -> Any:
    """``other`` where it is a tensor or a number: ``x == None`` is Python's False, but
    ``torch.eq(x, None)`` PyTorch's TypeError, as for a list or a string."""
    if other is None or isinstance(other, (list, tuple, str, bytes)):
        raise TypeError(f"{op}(): argument 'other' (position 1) must be Tensor or Number, not {type(other).__name__}")
    return other


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
def rsub(self, other: Any, *more: Any, alpha: Any = 1) -> Tensor:
    """``other - alpha * self`` (``torch.rsub``; no Tensor method, as in PyTorch); ``alpha`` by position
    only after a number (PyTorch's ``rsub(Tensor input, Number other, Number alpha)``)."""
    other, alpha = other_and_alpha("rsub", other, more, alpha, deprecated=False)
    return sub(other, tensor_operand(self, "rsub"), alpha=alpha)


@public(method=True)
@public(name="__pos__", function=False, method=True)
def positive(self) -> Tensor:
    """``+self``: the tensor itself; PyTorch refuses it for bool tensors."""
    if self.dtype.kind == "b":
        raise RuntimeError(f"The `+` operator, on a bool tensor is not supported (shape {tuple(self.shape)}).")
    return self


# PyTorch's second names of the same functions (``x.greater is x.gt``, ``tga.multiply is tga.mul``)
greater, less, greater_equal, less_equal, not_equal = gt, lt, ge, le, ne
multiply, divide, true_divide, negative = mul, div, div, neg


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
        raise NotImplementedError(f"\"{op}\" not implemented for 'Bool' (shape {tuple(x.shape)}); convert with .long()")
    return x.dtype.kind in "fc"


# -- PyTorch's attributes and legacy helpers of a tensor -------------------------------------
class layout:  # noqa: N801 - PyTorch's name (``torch.layout``)
    """How a tensor's elements lie in memory: :data:`strided` (dense), or ``tga.sparse_coo`` for a
    sparse COO tensor (``tensors/sparse.py``)."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __repr__(self) -> str:
        return f"torch.{self._name}"  # (as a dtype prints: a printed program reads as PyTorch's)


#: the layout of dense tensors (``torch.strided``)
strided = layout("strided")


@public(function=False, method=True)
def is_contiguous(self, *, memory_format: Any = contiguous_format) -> bool:
    """Whether the elements lie in ``memory_format``'s order in memory with no gaps (row-major by
    default: ``x.T`` of a matrix is not; ``channels_last``: ``(N, H, W, C)`` order of a 4-d tensor)."""
    a = _host_array(self)  # (an array without strides, array_api_strict's, reads as row-major there)
    return _memory.is_contiguous_as(a.shape, _memory.strides_of(a), memory_format)


def _host_array(t: Tensor) -> Any:
    d = t._data
    return getattr(d, "_array", d)  # (array_api_strict wraps a NumPy array)


def _address(a: Any) -> int:
    iface = getattr(a, "__array_interface__", None)
    return int(iface["data"][0]) if iface is not None else int(a.data.ptr)  # (CuPy: its device pointer)


@public(function=False, method=True)
def stride(self, dim: Any = None) -> Any:
    """The step in elements between neighbours along each dim (of ``dim`` alone when given),
    as PyTorch's: a view shares its base's memory and has the base's steps (``x.t().stride()``
    is ``x.stride()`` reversed; an expanded dim has step 0).

    >>> tga.zeros(2, 3).stride(), tga.zeros(2, 3).t().stride()
    ((3, 1), (1, 3))
    """
    steps = _memory.strides_of(_host_array(self))
    return steps if dim is None else steps[dims.one(self.shape, dim, "stride", scalar_ok=False)]


@public(function=False, method=True)
def storage_offset(self) -> int:
    """Where this tensor's first element lies in its memory, in elements from the start of the
    array it views (0 for a tensor that owns its memory; ``x[1:].storage_offset()`` is 1 for a vector)."""
    a = _host_array(self)
    return (_address(a) - _address(memory_root(self))) // a.itemsize


def memory_root(t: Tensor) -> Any:
    """The array that owns the memory ``t`` views (its own array where it owns it), host side of an
    ``array_api_strict`` wrapper: what ``storage_offset`` counts from and a storage object shows."""
    return _memory.memory_root(_host_array(t))


@public(function=False, method=True)
def data_ptr(self) -> int:
    """The address of the first element (equal for a tensor and a view that starts where it does; 0 for a
    meta tensor, which has no memory, as PyTorch's)."""
    return 0 if self._dev.meta else _address(_host_array(self))


@public(method=True)
def is_distributed(self) -> bool:
    """False: no tensor here is spread over processes."""
    tensor_operand(self, "is_distributed")
    return False


@public(method=True)
def is_nonzero(self) -> bool:
    """The truth of a one-element tensor; PyTorch's RuntimeError for none or several."""
    n = self.numel()
    if n != 1:
        raise RuntimeError(f"Boolean value of Tensor with {'no values' if n == 0 else 'more than one value'} is "
                           f"ambiguous (is_nonzero of a tensor of shape {tuple(self.shape)})")  # fmt: skip
    return bool(self._item("is_nonzero"))


@public(method=True)
def is_same_size(self, other: Tensor) -> bool:
    """Whether ``other`` has this tensor's shape."""
    tensor_operand(other, "is_same_size", "other", 1)
    return tuple(self.shape) == tuple(other.shape)


@public(method=True)
def is_signed(self) -> bool:
    """Whether the dtype holds negative numbers (floats and ``int*``; not ``uint*`` nor bool)."""
    return self.dtype.kind in "fci"


@public(function=False, method=True)
def ndimension(self) -> int:
    return self.ndim


@public(function=False, method=True)
def new(self, *args: Any, device: Any = None) -> Tensor:
    """PyTorch's legacy constructor in this tensor's dtype: ``x.new()`` is empty, ``x.new(2, 3)``
    (or a ``Size``) zeros of that shape, ``x.new([1, 2])`` those values, ``x.new(t)`` ``t``'s
    data when it has this dtype (PyTorch's TypeError otherwise)."""
    from .._tensor import Size  # noqa: PLC0415

    dev = device or self._dev
    if not args:
        return Tensor.zeros(0, dtype=self.dtype, device=dev)
    if len(args) == 1 and isinstance(args[0], Tensor):
        if args[0].dtype != self.dtype:
            raise TypeError(f"new: expected a tensor of dtype {self.dtype}, got {args[0].dtype}")
        return args[0].detach()
    sizes = all(isinstance(a, (int, np.integer)) for a in args) and (len(args) > 1 or not isinstance(args[0], bool))
    if sizes:  # (NumPy integers and, among several, bools are sizes too, as PyTorch reads them)
        return Tensor.zeros(*(int(a) for a in args), dtype=self.dtype, device=dev)
    if len(args) == 1 and isinstance(args[0], Size):
        return Tensor.zeros(*args, dtype=self.dtype, device=dev)
    if len(args) == 1 and (args[0] is None or isinstance(args[0], (numbers.Number, np.generic))):  # (not data)
        raise TypeError(f"new(): data must be a sequence (got {type(args[0]).__name__}); x.new([v]) holds one value")
    if len(args) == 1:
        return Tensor(args[0], dtype=self.dtype, device=dev)
    raise TypeError(f"new: expected sizes (ints), a Size, data or a tensor, got {args!r}")


@public(function=False, method=True)
def resize(self, *sizes: Any) -> Tensor:
    """``self`` with shape ``sizes``, which must hold as many elements (PyTorch's deprecated
    out-of-place ``resize``: a reshape that differentiates). The sizes are given one by one: PyTorch's
    reads a tuple as one size (and refuses it), and no sizes as a 0-d shape, which it cannot view a
    one-element tensor as."""
    shape = tuple(sizes)
    _user_warn("non-inplace resize is deprecated")
    if not sizes and self.numel() == 1:
        raise TypeError("resize: no sizes given (PyTorch's resize views a one-element tensor as view(), which "
                        "takes a dtype or a size); pass the sizes one by one: x.resize(1)")  # fmt: skip
    if any(not isinstance(s, (int, np.integer, Tensor)) for s in shape):
        raise RuntimeError(f"resize: sizes are given one by one (x.resize(2, 3)), as PyTorch's; got {sizes}")
    n = 1
    for s in shape:
        n *= int(s)
    if n != self.numel():
        raise RuntimeError(
            f"requested resize to {'x'.join(map(str, shape))} ({n} elements in total), but the given tensor has a "
            f"size of {'x'.join(map(str, self.shape))} ({self.numel()} elements). autograd's resize can only change "
            "the shape of a given tensor, while preserving the number of elements."
        )
    return self.reshape(shape)  # (PyTorch's result shares the memory too)


@public(function=False, method=True)
def resize_as(self, tensor: Tensor) -> Tensor:
    """:func:`resize` to ``tensor``'s shape."""
    return resize(self, *tensor.shape)


@public(method=True)
def resize_as_(self, the_template: Tensor, *, memory_format: Any = None) -> Tensor:
    """``resize_`` to ``the_template``'s shape, in place."""
    return self.resize_(tuple(the_template.shape))


def _map_elementwise(self: Tensor, op: str, fn: Any, *others: Tensor) -> Tensor:
    """``self[i] = fn(self[i], other[i], ...)`` for each element, on the host, as PyTorch's
    CPU-only ``apply_``/``map_``/``map2_``; the results are cast to this tensor's dtype."""
    import numpy as np  # noqa: PLC0415 - (host-only: a Python callable per element)

    if self.requires_grad or any(o.requires_grad for o in others):
        raise RuntimeError(f"Can't call {op}() on Variable that requires grad. Use var.detach().{op}() instead.")
    if self.device.type != "cpu":
        raise TypeError(f"{op}() is only implemented on CPU tensors (this one is on {self.device})")
    operands = []
    for name, o in zip(("other",) if len(others) == 1 else ("x", "y"), others):
        if o.dtype != self.dtype:  # (PyTorch's: one dtype for all, no promotion)
            raise TypeError(f"{op}: expected a {self.dtype} tensor for '{name}' (got {o.dtype})")
        try:
            operands.append(np.broadcast_to(o.detach().numpy(), tuple(self.shape)))
        except ValueError:
            raise RuntimeError(
                f"{op}: the expanded size of the tensor must match the existing size: shape {tuple(o.shape)} does not "
                f"broadcast to {tuple(self.shape)}"
            ) from None
    values = self.detach().numpy().copy()
    flat, rest = values.reshape(-1), [a.reshape(-1) for a in operands]
    for i in range(flat.shape[0]):
        flat[i] = fn(flat[i].item(), *(r[i].item() for r in rest))
    from ..mutation.inplace import apply_inplace  # noqa: PLC0415 - (the one in-place mechanism)

    v = Tensor(values, dtype=self.dtype, device=self._dev)
    return apply_inplace(self, op, lambda x, s: where(True, s, x), v, reads_old=False)


@public(function=False, method=True)
def apply_(self, callable: Any) -> Tensor:  # noqa: A002 - PyTorch's name
    """Each element replaced by ``callable(element)``, in place (a Python call per element)."""
    return _map_elementwise(self, "apply_", callable)


@public(function=False, method=True)
def map_(self, tensor: Tensor, callable: Any) -> Tensor:  # noqa: A002
    """Each element replaced by ``callable(element, tensor's element)``, in place (``tensor`` broadcast)."""
    return _map_elementwise(self, "map_", callable, tensor)


@public(function=False, method=True)
def map2_(self, x: Tensor, y: Tensor, callable: Any) -> Tensor:  # noqa: A002
    """Each element replaced by ``callable(element, x's, y's)``, in place (``x`` and ``y`` broadcast)."""
    return _map_elementwise(self, "map2_", callable, x, y)


def _is_cpu(self) -> bool:
    return self.device.type == "cpu"


def _layout(self) -> layout:
    return strided


def _output_nr(self) -> int:
    """Which output of its graph node this tensor is: always 0 (every node here makes one tensor)."""
    return 0


def _retains_grad(self) -> bool:
    """Whether this non-leaf tensor called ``retain_grad()`` (a leaf: False, as PyTorch's)."""
    from ...engine.switches import _State  # noqa: PLC0415

    ref = _State.retained.get(id(self)) if _State.retained else None
    return self._ctx is not None and ref is not None and ref() is self


def _grad_dtype(self) -> Any:
    """The dtype of this leaf's ``.grad``: its own (PyTorch's default)."""
    if self._ctx is not None:
        raise RuntimeError("grad_dtype can only be accessed on leaf tensors.")
    return self.dtype


def _set_grad_dtype(self, dtype: Any) -> None:
    if self._ctx is not None:
        raise RuntimeError("grad_dtype can only be set on leaf tensors.")
    if dtype is None or dtype != self.dtype:
        raise NotImplementedError(
            f"grad_dtype: a gradient in another dtype than the tensor's ({self.dtype}) is not supported, got {dtype}"
        )


@public(function=False, method=True)
def bfloat16(self, *, memory_format: Any = None) -> Tensor:
    """PyTorch's conversion to bfloat16 (rounded to nearest even), on the CPU: NumPy's bfloat16 is the
    ``ml_dtypes`` package's (``pip install tinygrad_attn[bfloat16]``); without it a ``TypeError`` says so."""
    if memory_format is None:
        return self.astype(_dtypes.bfloat16)
    return self.to(_dtypes.bfloat16, memory_format=memory_format)


@public(function=False, method=True)
def register_post_accumulate_grad_hook(self, hook: Any) -> Any:
    """Call ``hook(self)`` each time a backward pass has added into this leaf's ``.grad``
    (an optimizer step per parameter, as PyTorch's). Returns a handle whose ``remove()``
    takes the hook away."""
    from ...engine.switches import _State  # noqa: PLC0415
    from .._tensor import _HookHandle  # noqa: PLC0415

    if not self.requires_grad:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    if self._ctx is not None:
        raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf tensors")
    registry, key = _State.post_accumulate_hooks, id(self)
    hooks = registry.get(key)
    if hooks is None or hooks[0]() is not self:

        def forget(ref: weakref.ref, registry: dict = registry, key: int = key) -> None:
            # (the entry goes with its tensor: a later tensor with the same id did not ask)
            e = registry.get(key)
            if e is not None and e[0] is ref:
                del registry[key]

        hooks = registry[key] = (weakref.ref(self, forget), [])
    hooks[1].append(hook)
    return _HookHandle(hooks[1], hook)


public(property(_retains_grad), name="retains_grad", function=False, method=True)
public(property(_grad_dtype, _set_grad_dtype), name="grad_dtype", function=False, method=True)
public(property(_is_cpu), name="is_cpu", function=False, method=True)
public(property(_layout), name="layout", function=False, method=True)
public(property(_output_nr), name="output_nr", function=False, method=True)


#: an operand of ``result_type`` left out
_NO_OPERAND: Any = object()


@public(name="result_type")
def torch_result_type(tensor: Any = _NO_OPERAND, other: Tensor | float = _NO_OPERAND, *more: Any) -> Any:
    """``torch.result_type(tensor, other)``: the dtype of an elementwise op of the two (each a tensor
    or a number), by PyTorch's rules (:func:`dtypes.result_type`, which takes any number of operands).

    >>> import tinygrad_attn as tga
    >>> tga.result_type(tga.ones(2, dtype=tga.int32), 2.5)
    torch.float32
    """
    if more:
        raise TypeError(f"result_type() takes 2 positional arguments but {2 + len(more)} were given")
    if tensor is _NO_OPERAND or other is _NO_OPERAND:
        raise missing("result_type", "tensor" if tensor is _NO_OPERAND else "other")
    if not isinstance(tensor, (Tensor, numbers.Number, np.number, np.bool_)):
        raise TypeError(f"result_type(): argument 'tensor' (position 1) must be Tensor, not {type(tensor).__name__}")
    return _dtypes.result_type(tensor, other)
