"""``torch.nn.modules.conv``: PyTorch's path to its convolutions, here the classes of
:mod:`tinygrad_attn.nn` (the same objects)."""

from ..conv import Conv1d, Conv2d, ConvTranspose1d, ConvTranspose2d

__all__ = ["Conv1d", "Conv2d", "ConvTranspose1d", "ConvTranspose2d"]
