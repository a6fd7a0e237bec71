"""``torch.nn.modules.flatten``: PyTorch's path to its flattening and unflattening, here the classes of
:mod:`tinygrad_attn.nn` (the same objects)."""

from ..layers import Flatten, Unflatten

__all__ = ["Flatten", "Unflatten"]
