"""The namespace of tensor ops that a backward pass with ``create_graph=True`` hands to each
op's ``backward``: the same function names as a device's array namespace (``exp``,
``sum``, ``where``, ...), each recording an op, so the gradient is itself differentiable.

Built from the op classes; the few functions whose arguments need the Tensor class's own
normalisation (axes, shapes, dtype promotion) call its methods on the class the engine
knows by registration (``engine.function.Tensor``), and ``where`` and ``stack`` are given
by the module that defines them (``tinygrad_attn.tensors._tensor``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..engine import function as _function
from ..engine.switches import _State
from ..runtime.backend import device_of_array
from .alias import Alias, Copy
from .elementwise import Abs, Add, AddN, Exp, HyperbolicTangent, Log, Sqrt
from .index import Gather, ScatterAdd
from .linalg import Matmul
from .movement import MatrixTranspose, SliceGrad
from .rounding import Sign


def _apply(cls: type, *inputs: Any, args: Any = None) -> Any:
    return cls.apply(*inputs, args=args)


class TensorNamespace:
    """The array-namespace functions backward formulas use, as tensor ops."""

    #: Gradients are recorded (an array namespace says False): an op whose backward has a
    #: faster array path (a fused op, a lazy slice gradient) takes the recorded one.
    recording = True
    #: A fused op whose recorded gradient has a formula of its own (softmax: through its
    #: output) uses it here; a trace's namespace says True: one record of its array backward.
    records_fused = False

    def __init__(self, where: Callable[..., Any], stack: Callable[..., Any]) -> None:
        self.where = where
        self._stack = stack

    # -- one op each ------------------------------------------------------------------
    exp = staticmethod(Exp.apply)
    log = staticmethod(Log.apply)
    sqrt = staticmethod(Sqrt.apply)
    tanh = staticmethod(HyperbolicTangent.apply)
    abs = staticmethod(Abs.apply)
    matmul = staticmethod(Matmul.apply)
    copy = staticmethod(Copy.apply)
    alias = staticmethod(Alias.apply)
    #: ``a + b`` of two gradients of one dtype: the backward pass sums with it.
    add = staticmethod(Add.apply)
    #: ``a0 + a1 + ...``, the gradients one tensor gets from several consumers: one node.
    add_n = staticmethod(AddN.apply)
    #: ``ns.apply(Op, *inputs, args=...)``: the op itself (an array namespace runs its forward).
    apply = staticmethod(_apply)

    @staticmethod
    def matrix_transpose(x: Any) -> Any:
        nd = x._data.ndim
        return MatrixTranspose.apply(x, args=(*range(nd - 2), nd - 1, nd - 2))

    @staticmethod
    def slice_grad(g: Any, shape: Any, key: Any) -> Any:
        return SliceGrad.apply(g, args=(shape, key))

    @staticmethod
    def gather(x: Any, axis: int, index: Any) -> Any:
        return Gather.apply(x, args=(axis, index))

    @staticmethod
    def scatter_add(g: Any, shape: Any, axis: int, index: Any) -> Any:
        return ScatterAdd.apply(g, args=(shape, axis, index))

    # -- through the Tensor class's argument handling -----------------------------------
    @staticmethod
    def const(x: Any) -> Any:
        T = _function.Tensor
        return x if isinstance(x, T) else T._wrap(x, device_of_array(x))

    @staticmethod
    def scalar(value: Any, like: Any) -> Any:
        return value

    @staticmethod
    def values(x: Any) -> Any:
        """The array of ``x`` (a tensor): what a recorded graph takes as a constant."""
        return x._data

    device_of = staticmethod(device_of_array)

    @staticmethod
    def sign(x: Any) -> Any:
        # (an op of zero derivative, not a mask: PyTorch's sgn(x) in a recorded gradient requires grad where x does)
        return Sign.apply(x)

    @staticmethod
    def astype(x: Any, dtype: Any) -> Any:
        return x.astype(dtype if isinstance(dtype, np.dtype) else x._dev.np_dtype(dtype))

    @staticmethod
    def sum(x: Any, axis: Any = None, keepdims: bool = False) -> Any:
        return x.sum(axis, keepdims)

    # (a gradient reshaped, broadcast or permuted to what it is already stays itself: Tensor.reshape
    # makes a new view even then, as PyTorch's, which a trace or create_graph would record as an op)
    @staticmethod
    def reshape(x: Any, shape: Any) -> Any:
        return x if tuple(x.shape) == tuple(shape) else x.reshape(shape)

    @staticmethod
    def broadcast_to(x: Any, shape: Any) -> Any:
        return x if tuple(x.shape) == tuple(shape) else x.expand(shape)

    @staticmethod
    def permute_dims(x: Any, axes: Any) -> Any:
        return x if tuple(axes) == tuple(range(len(axes))) else x.permute(axes)

    @staticmethod
    def zeros_like(x: Any) -> Any:
        t = _function.Tensor._wrap(x._dev.ops.zeros_like(x._data), x._dev)
        if _State.hook is not None:  # made inside a traced function (see Tracer.write)
            _State.hook.made(t)
        return t

    def stack(self, xs: Sequence[Any], axis: int) -> Any:
        return self._stack(xs, axis)

    def fused_backward(self, fn: Any, g: Any, inputs: Sequence[Any], out: Any) -> Sequence[Any]:
        """A fused op's recorded gradient: its primitive definition differentiated (so of any
        order); a tracer's namespace records one call of its array backward instead."""
        return fn._backward_by_reference(g, self, inputs)
