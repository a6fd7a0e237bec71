"""PyTorch's ``torch.utils``: the data loading tools (``tga.utils.data``), ``checkpoint``
(:mod:`.checkpoint`, loaded with the package as PyTorch's is) and ``tensorboard``
(:mod:`.tensorboard`, imported by name, as PyTorch's is: it needs the tensorboard package).

>>> from tinygrad_attn.utils.data import DataLoader, TensorDataset  # doctest: +SKIP
"""

from . import checkpoint, data

__all__ = ["checkpoint", "data"]
