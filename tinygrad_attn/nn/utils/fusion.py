"""PyTorch's ``torch.nn.utils.fusion``: an eval-mode batch norm folded into the convolution or
linear layer before it (one layer computing both), for inference.

>>> fused = nn.utils.fuse_conv_bn_eval(conv.eval(), bn.eval())  # doctest: +SKIP
"""

from __future__ import annotations

import copy

from ...engine.switches import no_grad
from ...tensors._tensor import Tensor
from ..module import Module, Parameter

__all__ = ["fuse_conv_bn_eval", "fuse_conv_bn_weights", "fuse_linear_bn_eval", "fuse_linear_bn_weights"]


def _bn_scale(bn_rv: Tensor, bn_eps: float, bn_w: Tensor | None) -> Tensor:
    scale = (bn_rv + bn_eps).rsqrt()
    return scale if bn_w is None else scale * bn_w


def fuse_conv_bn_weights(conv_w: Tensor, conv_b: Tensor | None, bn_rm: Tensor, bn_rv: Tensor, bn_eps: float,
                         bn_w: Tensor | None, bn_b: Tensor | None,
                         transpose: bool = False) -> tuple[Parameter, Parameter]:  # fmt: skip
    """The weight and bias of ``bn(conv(x))`` as one convolution: each output channel's weight
    times ``bn_w / sqrt(bn_rv + eps)``, the bias moved and scaled likewise."""
    with no_grad():
        scale = _bn_scale(bn_rv, bn_eps, bn_w)
        shape = (1, -1) if transpose else (-1, 1)
        w = conv_w * scale.reshape(shape + (1,) * (conv_w.ndim - 2)).astype(conv_w.dtype)
        b = (conv_b if conv_b is not None else bn_rm * 0.0) - bn_rm
        b = b * scale + (bn_b if bn_b is not None else 0.0)
    # (a missing bias is PyTorch's zeros, which require no grad: neither does the fused bias)
    b_grad = conv_b is not None and conv_b.requires_grad
    return Parameter(w, conv_w.requires_grad), Parameter(b.astype(conv_w.dtype), b_grad)


def fuse_conv_bn_eval(conv: Module, bn: Module, transpose: bool = False) -> Module:
    """A copy of ``conv`` (eval mode) whose weight and bias include ``bn`` (eval mode)."""
    if conv.training or bn.training:
        raise AssertionError("Fusion only for eval!")
    fused = copy.deepcopy(conv)
    if bn.running_mean is None or bn.running_var is None:
        raise AssertionError("bn.running_mean and bn.running_var must be set")
    fused.weight, fused.bias = fuse_conv_bn_weights(fused.weight, fused.bias, bn.running_mean, bn.running_var, bn.eps,
                                                    bn.weight, bn.bias, transpose)  # fmt: skip
    return fused


def fuse_linear_bn_weights(linear_w: Tensor, linear_b: Tensor | None, bn_rm: Tensor, bn_rv: Tensor, bn_eps: float,
                           bn_w: Tensor, bn_b: Tensor) -> tuple[Parameter, Parameter]:  # fmt: skip
    """The weight and bias of ``bn(linear(x))`` as one linear layer."""
    with no_grad():
        scale = _bn_scale(bn_rv, bn_eps, bn_w)
        w = linear_w * scale.unsqueeze(-1)
        b = (linear_b if linear_b is not None else bn_rm * 0.0) - bn_rm
        b = b * scale + bn_b
    return Parameter(w, linear_w.requires_grad), Parameter(b, linear_b is not None and linear_b.requires_grad)


def fuse_linear_bn_eval(linear: Module, bn: Module) -> Module:
    """A copy of ``linear`` (eval mode) whose weight and bias include ``bn`` (eval mode)."""
    if linear.training or bn.training:
        raise AssertionError("Fusion only for eval!")
    if not (linear.out_features == bn.num_features or bn.num_features == 1):
        raise AssertionError("To fuse, linear.out_features must equal bn.num_features or bn.num_features must equal 1")
    fused = copy.deepcopy(linear)
    fused.weight, fused.bias = fuse_linear_bn_weights(fused.weight, fused.bias, bn.running_mean, bn.running_var,
                                                      bn.eps, bn.weight, bn.bias)  # fmt: skip
    return fused
