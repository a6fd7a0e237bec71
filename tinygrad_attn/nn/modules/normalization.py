"""``torch.nn.modules.normalization``: PyTorch's path to its normalisation layers, here the classes of
:mod:`tinygrad_attn.nn` (the same objects)."""

from ..layers import LayerNorm, RMSNorm

__all__ = ["LayerNorm", "RMSNorm"]
