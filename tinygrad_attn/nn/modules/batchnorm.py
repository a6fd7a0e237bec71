"""``torch.nn.modules.batchnorm``: PyTorch's path to its batch normalisation, here the classes of
:mod:`tinygrad_attn.nn` (the same objects)."""

from ..normalization import BatchNorm1d, BatchNorm2d

__all__ = ["BatchNorm1d", "BatchNorm2d"]
