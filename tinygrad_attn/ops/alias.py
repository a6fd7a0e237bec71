"""Ops that pass a value on under a new node: a stand-in, a copy, and the node an in-place
change leaves on the tensor it changed."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..engine.function import Function


class Alias(Function):
    """The same array under a new node (a stand-in; see ``FusedFunction._backward_by_reference``).

    Not declared a ``view``: the engine replays and writes through only the views that
    show part or a rearrangement of their input (slice, reshape, permute, expand)."""

    __slots__ = ()
    name = "alias"
    keep = ()
    reads_output = False
    reads_values = False

    def forward(self, ns: Any, x: Any) -> Any:
        return x

    def backward(self, g: Any, ns: Any, inputs: Sequence[Any], out: Any) -> Sequence[Any]:
        return (g,)


class Copy(Alias):
    """The same values in a new array."""

    __slots__ = ()
    name = "copy"

    def forward(self, ns: Any, x: Any) -> Any:
        return ns.copy(x)


class InPlace(Alias):
    """The node an in-place op leaves on the tensor it changed: its value is the result of
    the op (the input), passed on as an alias does, recorded from the tensor's previous node
    (``previous``). Ops recorded before the change still take their gradient to ``previous``."""

    __slots__ = ("previous",)
    name = "inplace"
    rebases = True

    @property
    def op_name(self) -> str:
        return self.args


class Restride(InPlace):
    """The node a metadata-changing in-place op (``t_ transpose_ squeeze_ unsqueeze_``)
    leaves: the same memory shown with another shape. It ``rebases`` as :class:`InPlace`
    does (``previous`` is the tensor in its old layout); ``undo`` maps a tensor of the new
    layout back to the old one, so that a view taken before the change replays right."""

    __slots__ = ("undo",)
    name = "restride"


class NoDerivative(Alias):
    """The value of an op that PyTorch gives no derivative (``floor_divide``, whose zero gradient
    is ``div(rounding_mode="floor")``'s): its backward raises PyTorch's ``RuntimeError``, naming
    the op (``args``), as the backward of PyTorch's ``NotImplemented`` node does."""

    __slots__ = ()
    name = "no_derivative"

    def backward(self, g: Any, ns: Any, inputs: Sequence[Any], out: Any) -> Sequence[Any]:
        raise RuntimeError(f"the derivative for {self.args} is not implemented (as in PyTorch)")


class RefusedDerivative(Alias):
    """The value of an op whose derivative PyTorch refuses for the arguments it was given (``linalg.qr``'s
    ``R`` with ``mode='r'``, which computes no ``Q``): its backward raises PyTorch's ``RuntimeError``
    with the message ``args``."""

    __slots__ = ()
    name = "refused_derivative"
    conjugate_backward = False

    def backward(self, g: Any, ns: Any, inputs: Sequence[Any], out: Any) -> Sequence[Any]:
        raise RuntimeError(self.args)
