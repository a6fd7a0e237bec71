"""Python's augmented assignments on a Tensor (``+= -= *= /= //= %= **= &= |= ^= <<= >>=``),
each in place as PyTorch's: the out-of-place operator's result, computed in the operands'
promoted dtype, is written into the tensor's own memory (its views, aliases and a module's
parameter see it; its version counter moves), cast back to the tensor's dtype, and refused
with PyTorch's ``RuntimeError`` where that cast would change its kind (``int_tensor /= 2``,
``int_tensor %= 2.5``: "result type Float can't be cast to the desired output type ...").

Recording follows :func:`tinygrad_attn.tensors.mutation.inplace.apply_inplace`, the path of every in-place op:
where the change cannot be recorded in place (an expanded view, a view without a graph of
another tensor's memory) Python gets a new tensor back, so ``x[i] += v`` still writes through
``x.__setitem__``.

``x @= w`` is not in place, as in PyTorch (its Tensor has no ``__imatmul__``): Python rebinds
``x`` to ``x @ w``, a new tensor.

>>> import tinygrad_attn as tga
>>> x = tga.tensor([1, 2, 3], dtype=tga.int32)
>>> x //= tga.tensor(2)
>>> x.tolist(), x.dtype
([0, 1, 1], dtype('int32'))
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...engine.declare import public
from .._tensor import Tensor
from ..dtypes import can_cast, result_type
from .inplace import apply_inplace, cast_error


# What each op's backward reads of the tensor's old value: nothing for + and - (never a copy),
# only where the other operand needs a gradient for * and /, always for the rest
def _never(o: Any) -> bool:
    return False


def _always(o: Any) -> bool:
    return True


def _augmented(
    dunder: str, symbol: str, name: str, reads_old: Callable[[Any], bool]
) -> Callable[[Tensor, Any], Tensor]:
    def method(self: Tensor, other: Any) -> Tensor:
        o = self._operand(other)  # (an operand PyTorch's operators refuse, an array: tensor_protocols' rule)
        # (PyTorch's order: the operands' dtype is checked against the tensor's before the op runs, so
        # ``int_tensor <<= 2.5`` is this RuntimeError, not the shift's missing float kernel)
        if not can_cast(dt := result_type(self, o), self.dtype):
            raise cast_error(name, dt, self)
        op = getattr(Tensor, dunder)  # (the op itself, not its operator rule: no NotImplemented in a record)
        return apply_inplace(
            self, name, getattr(op, "binary_operator_of", op), o, operator=True, reads_old=reads_old(o)
        )

    method.__name__ = method.__qualname__ = f"__i{dunder[2:]}"
    method.__doc__ = f"``self {symbol}= other``, in place (``Tensor.{name}``'s meaning)."
    return method


# the out-of-place operator, its symbol, the in-place op's name (in errors and traced programs), what it reads
_OPS = (
    ("__add__", "+", "add_", _never), ("__sub__", "-", "sub_", _never), ("__mul__", "*", "mul_", Tensor._needs_grad),
    ("__truediv__", "/", "div_", Tensor._needs_grad), ("__floordiv__", "//", "floor_divide_", _always),
    ("__mod__", "%", "remainder_", _always), ("__pow__", "**", "pow_", _always), ("__and__", "&", "bitwise_and_", _always),
    ("__or__", "|", "bitwise_or_", _always), ("__xor__", "^", "bitwise_xor_", _always),
    ("__lshift__", "<<", "bitwise_left_shift_", _always), ("__rshift__", ">>", "bitwise_right_shift_", _always),
)  # fmt: skip

for _op in _OPS:
    public(_augmented(*_op), name=f"__i{_op[0][2:]}", function=False, method=True)
