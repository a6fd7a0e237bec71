"""Comparisons, logical ops and integer division: boolean or integer results, no gradient.

Each is a non-differentiable op (``differentiable = False``): the engine records none of
them, and a traced program recomputes them from their inputs.
"""

from __future__ import annotations

from typing import Any

from ..engine.function import Function


def _compare(name: str, fn: Any, elementwise: str | None = None) -> type[Function]:
    def forward(self, ns, a, b=None):
        return fn(ns, a, b)

    return type(name, (Function,), {"__slots__": (), "differentiable": False, "forward": forward,
                                    "name": name.lower(), "elementwise": elementwise, "__module__": __name__,
                                    "laid_out_as": slice(0, None)})  # (each pointwise)  # fmt: skip


Less = _compare("Less", lambda ns, a, b: a < b, "{0} < {1}")
LessEqual = _compare("LessEqual", lambda ns, a, b: a <= b, "{0} <= {1}")
Greater = _compare("Greater", lambda ns, a, b: a > b, "{0} > {1}")
GreaterEqual = _compare("GreaterEqual", lambda ns, a, b: a >= b, "{0} >= {1}")
Equal = _compare("Equal", lambda ns, a, b: a == b, "{0} == {1}")
NotEqual = _compare("NotEqual", lambda ns, a, b: a != b, "{0} != {1}")
LogicalAnd = _compare("LogicalAnd", lambda ns, a, b: a & b)
LogicalOr = _compare("LogicalOr", lambda ns, a, b: a | b)
LogicalNot = _compare("LogicalNot", lambda ns, a, b: ~a)


# Tests of each element, and boolean reductions: ops like the comparisons, so that a traced
# program computes a mask or a check (``x.isnan()``, ``x.isfinite().all()``) again at each replay.
IsNan = _compare("IsNan", lambda ns, a, b: ns.device.xp.isnan(a))
IsInf = _compare("IsInf", lambda ns, a, b: ns.device.xp.isinf(a))
IsFinite = _compare("IsFinite", lambda ns, a, b: ns.isfinite(a))
SignBit = _compare("SignBit", lambda ns, a, b: ns.device.xp.signbit(a))
NextAfter = _compare(
    "NextAfter", lambda ns, a, b: ns.device.xp.nextafter(a, b)
)  # (its value; the gradient is composed)
Hypot = _compare("Hypot", lambda ns, a, b: ns.device.xp.hypot(a, b))  # (its value: hypot's gradient is composed)


class _BoolReduce(Function):
    """``any`` or ``all`` over the axes ``args[0]`` (None: every axis), keeping them when ``args[1]``."""

    __slots__ = ()
    differentiable = False

    def forward(self, ns: Any, a: Any) -> Any:
        axes, keepdims = self.args
        return getattr(ns, self.name)(a, axis=axes, keepdims=keepdims)


AnyTrue = type("AnyTrue", (_BoolReduce,), {"__slots__": (), "name": "any", "__module__": __name__})
AllTrue = type("AllTrue", (_BoolReduce,), {"__slots__": (), "name": "all", "__module__": __name__})


def _nonzero_divisor(ns: Any, b: Any, op: str) -> Any:
    """``b``, refused where an integer division would divide by zero: PyTorch's (CPU) error,
    where NumPy would warn and give 0."""
    zero = b == 0 if isinstance(b, int) else bool(ns.any(b == 0))
    if zero:
        raise RuntimeError(f"ZeroDivisionError ({op} of integers by zero)")
    return b


# (integers; floats divide and floor)
IntFloorDivide = _compare("FloorDivide", lambda ns, a, b: a // _nonzero_divisor(ns, b, "floor_divide"))
IntRemainder = _compare("Remainder", lambda ns, a, b: a % _nonzero_divisor(ns, b, "remainder"))
