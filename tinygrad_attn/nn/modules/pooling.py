"""``torch.nn.modules.pooling``: PyTorch's path to its pooling and unpooling, here the classes of
:mod:`tinygrad_attn.nn` (the same objects)."""

from ..pooling import AdaptiveAvgPool2d, AvgPool2d, MaxPool1d, MaxPool2d
from ..upsampling import MaxUnpool1d, MaxUnpool2d

__all__ = ["MaxPool1d", "MaxPool2d", "MaxUnpool1d", "MaxUnpool2d", "AvgPool2d", "AdaptiveAvgPool2d"]
