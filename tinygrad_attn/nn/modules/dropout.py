"""``torch.nn.modules.dropout``: PyTorch's path to its dropout, here the classes of
:mod:`tinygrad_attn.nn` (the same objects)."""

from ..layers import Dropout

__all__ = ["Dropout"]
