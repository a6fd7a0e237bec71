"""PyTorch's ``nn.CosineSimilarity`` and ``nn.PairwiseDistance``: the functions of
``tinygrad_attn.functional_distance`` as modules."""

from __future__ import annotations

from .. import functional as F
from ..tensors._tensor import Tensor
from .module import Module


class CosineSimilarity(Module):
    """:func:`tinygrad_attn.functional.cosine_similarity` along ``dim``: ``sim(x1, x2)``."""

    def __init__(self, dim: int = 1, eps: float = 1e-8) -> None:
        super().__init__()
        self.dim, self.eps = dim, eps

    def forward(self, x1: Tensor, x2: Tensor) -> Tensor:
        return F.cosine_similarity(x1, x2, self.dim, self.eps)


class PairwiseDistance(Module):
    """:func:`tinygrad_attn.functional.pairwise_distance`: ``dist(x1, x2)``."""

    def __init__(self, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False) -> None:
        super().__init__()
        self.norm, self.eps, self.keepdim = p, eps, keepdim

    def forward(self, x1: Tensor, x2: Tensor) -> Tensor:
        return F.pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)
