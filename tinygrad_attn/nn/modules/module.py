"""``torch.nn.modules.module``: PyTorch's path to its the module base class, here the classes of
:mod:`tinygrad_attn.nn` (the same objects)."""

from ..module import Module

__all__ = ["Module"]
