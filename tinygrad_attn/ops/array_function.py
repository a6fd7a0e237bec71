"""Values an array function computes from its inputs' arrays, as an op without a gradient.

Some results are computed exactly on arrays beside the differentiable formula their gradient
comes from (``hypot``'s value scaled as C's, a NaN mask, a sign bit, a LAPACK factor), or
are masks and flags no gradient goes through (``isnan``, ``all``). Computed on ``t._data``
directly, such a value would be invisible to a trace, which would keep the traced call's
values as constants and replay them for every later input. Through this op it is a line of
the program, computed again from each replay's inputs.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..engine.function import Function

if TYPE_CHECKING:
    from ..tensors._tensor import Tensor


class ArrayFunction(Function):
    """``args(ns, *arrays)``: any array function of the inputs' arrays (``ns`` the device's op
    namespace), one array out, no gradient. Its name in programs and pictures is the
    function's (``functools.partial``'s: the wrapped function's)."""

    __slots__ = ()
    laid_out_as = slice(0, None)  # (laid out as a pointwise op of the inputs where its result has their shape)
    name = "array_function"
    differentiable = False
    keep = ()
    reads_output = False

    def forward(self, ns: Any, *xs: Any) -> Any:
        return self.args(ns, *xs)

    @property
    def op_name(self) -> str:
        f = self.args
        while isinstance(f, functools.partial):
            f = f.func
        return getattr(f, "__name__", "array_function").strip("_")


def array_function(fn: Callable[..., Any], *inputs: Tensor, **kw: Any) -> Tensor:
    """``fn(ns, *arrays, **kw)`` of the inputs' arrays as a tensor without gradient, recorded
    by a trace like any op.

    >>> nan_mask = array_function(lambda ns, a: ns.isnan(a), x)  # doctest: +SKIP
    """
    return ArrayFunction.apply(*inputs, args=functools.partial(fn, **kw) if kw else fn)
