"""``torch.nn.modules.sparse``: PyTorch's path to its embeddings, here the classes of
:mod:`tinygrad_attn.nn` (the same objects)."""

from ..layers import Embedding

__all__ = ["Embedding"]
