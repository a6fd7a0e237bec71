"""PyTorch's ``torch.utils``: the data loading tools (``tga.utils.data``).

>>> from tinygrad_attn.utils.data import DataLoader, TensorDataset  # doctest: +SKIP
"""

from . import data

__all__ = ["data"]
