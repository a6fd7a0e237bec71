"""``torch.nn.modules.linear``: PyTorch's path to its linear layers, here the classes of
:mod:`tinygrad_attn.nn` (the same objects)."""

from ..layers import Bilinear, Identity, LazyLinear, Linear

__all__ = ["Bilinear", "Identity", "LazyLinear", "Linear"]
