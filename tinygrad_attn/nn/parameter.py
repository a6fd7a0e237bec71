"""``torch.nn.parameter``: PyTorch's path to :class:`Parameter` (the class of
:mod:`tinygrad_attn.nn.module`, the same object), so ``from torch.nn.parameter import Parameter``
works as written."""

from .module import Parameter

__all__ = ["Parameter"]
