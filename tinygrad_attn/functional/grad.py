"""PyTorch's ``torch.nn.functional.grad`` (also ``torch.nn.grad``, the same module): the gradients of a convolution
with respect to its input and to its weight, given the gradient of its output.

Each is the vector-Jacobian product of ``F.conv{1,2,3}d`` taken by the autograd engine, with the
graph kept, so the result is differentiable in ``weight`` (or ``input``) and ``grad_output`` in
turn. A convolution is linear in each argument, so the point at which the product is taken
(zeros) does not change it.

>>> import tinygrad_attn as tga
>>> w = tga.randn(4, 3, 3, 3); g = tga.randn(1, 4, 6, 6)
>>> tuple(tga.nn.grad.conv2d_input((1, 3, 8, 8), w, g).shape)
(1, 3, 8, 8)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ..autograd import grad as _vjp
from ..engine.switches import enable_grad
from ..tensors._tensor import Tensor
from .conv import conv1d, conv2d, conv3d

_Size = Sequence[int]
_Arg = int | Sequence[int]


def _input_gradient(conv: Callable[..., Tensor], input_size: _Size, weight: Tensor, grad_output: Tensor,
                    stride: _Arg, padding: Any, dilation: _Arg, groups: int) -> Tensor:  # fmt: skip
    with enable_grad():
        x = Tensor.zeros(tuple(input_size), dtype=weight.dtype, device=weight.device, requires_grad=True)
        out = conv(x, weight, None, stride, padding, dilation, groups)
        (g,) = _vjp(out, x, grad_output, create_graph=True)
    return g


def _weight_gradient(conv: Callable[..., Tensor], input: Tensor, weight_size: _Size, grad_output: Tensor,  # noqa: A002
                     stride: _Arg, padding: Any, dilation: _Arg, groups: int) -> Tensor:  # fmt: skip
    with enable_grad():
        w = Tensor.zeros(tuple(weight_size), dtype=input.dtype, device=input.device, requires_grad=True)
        out = conv(input, w, None, stride, padding, dilation, groups)
        (g,) = _vjp(out, w, grad_output, create_graph=True)
    return g


def conv1d_input(input_size: _Size, weight: Tensor, grad_output: Tensor, stride: _Arg = 1, padding: Any = 0,
                 dilation: _Arg = 1, groups: int = 1) -> Tensor:  # fmt: skip
    """The gradient of ``conv1d`` with respect to an input of ``input_size``, given ``grad_output``."""
    return _input_gradient(conv1d, input_size, weight, grad_output, stride, padding, dilation, groups)


def conv1d_weight(input: Tensor, weight_size: _Size, grad_output: Tensor, stride: _Arg = 1, padding: Any = 0,  # noqa: A002
                  dilation: _Arg = 1, groups: int = 1) -> Tensor:  # fmt: skip
    """The gradient of ``conv1d`` with respect to a weight of ``weight_size``, given ``grad_output``."""
    return _weight_gradient(conv1d, input, weight_size, grad_output, stride, padding, dilation, groups)


def conv2d_input(input_size: _Size, weight: Tensor, grad_output: Tensor, stride: _Arg = 1, padding: Any = 0,
                 dilation: _Arg = 1, groups: int = 1) -> Tensor:  # fmt: skip
    """The gradient of ``conv2d`` with respect to an input of ``input_size``, given ``grad_output``."""
    return _input_gradient(conv2d, input_size, weight, grad_output, stride, padding, dilation, groups)


def conv2d_weight(input: Tensor, weight_size: _Size, grad_output: Tensor, stride: _Arg = 1, padding: Any = 0,  # noqa: A002
                  dilation: _Arg = 1, groups: int = 1) -> Tensor:  # fmt: skip
    """The gradient of ``conv2d`` with respect to a weight of ``weight_size``, given ``grad_output``."""
    return _weight_gradient(conv2d, input, weight_size, grad_output, stride, padding, dilation, groups)


def conv3d_input(input_size: _Size, weight: Tensor, grad_output: Tensor, stride: _Arg = 1, padding: Any = 0,
                 dilation: _Arg = 1, groups: int = 1) -> Tensor:  # fmt: skip
    """The gradient of ``conv3d`` with respect to an input of ``input_size``, given ``grad_output``."""
    return _input_gradient(conv3d, input_size, weight, grad_output, stride, padding, dilation, groups)


def conv3d_weight(input: Tensor, weight_size: _Size, grad_output: Tensor, stride: _Arg = 1, padding: Any = 0,  # noqa: A002
                  dilation: _Arg = 1, groups: int = 1) -> Tensor:  # fmt: skip
    """The gradient of ``conv3d`` with respect to a weight of ``weight_size``, given ``grad_output``."""
    return _weight_gradient(conv3d, input, weight_size, grad_output, stride, padding, dilation, groups)
