"""``torch.nn.modules.distance``: PyTorch's path to its distances, here the classes of
:mod:`tinygrad_attn.nn` (the same objects)."""

from ..distance import CosineSimilarity, PairwiseDistance

__all__ = ["PairwiseDistance", "CosineSimilarity"]
