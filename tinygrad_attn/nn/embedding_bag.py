"""PyTorch's ``nn.EmbeddingBag``: a table of vectors whose bags of ids are summed, averaged
or max-pooled in one step (``F.embedding_bag``), for bag-of-words and recommendation models."""

from __future__ import annotations

from typing import Any

from .. import functional as F
from ..random import transforms as rt
from ..tensors._tensor import Tensor
from .layers import _float_dtype, init_draws
from .module import Module, Parameter


class EmbeddingBag(Module):
    """``forward(input, offsets=None, per_sample_weights=None)`` -> ``(B, embedding_dim)``;
    weight ``(num_embeddings, embedding_dim)`` drawn from N(0, 1), the ``padding_idx`` row 0.

    PyTorch's ``nn.EmbeddingBag(num_embeddings, embedding_dim, max_norm=None, norm_type=2.0,
    scale_grad_by_freq=False, mode="mean", sparse=False, _weight=None,
    include_last_offset=False, padding_idx=None)``.
    """

    def __init__(self, num_embeddings: int, embedding_dim: int, max_norm: float | None = None,
                 norm_type: float = 2.0, scale_grad_by_freq: bool = False, mode: str = "mean", sparse: bool = False,
                 _weight: Tensor | None = None, include_last_offset: bool = False, padding_idx: int | None = None,
                 device: Any = None, dtype: Any = None) -> None:  # fmt: skip
        super().__init__()
        num, dim = num_embeddings, embedding_dim
        self.num_embeddings, self.embedding_dim = num, dim
        self.max_norm, self.norm_type, self.scale_grad_by_freq = max_norm, norm_type, scale_grad_by_freq
        self.mode, self.sparse, self.include_last_offset = mode, sparse, include_last_offset
        if padding_idx is not None:
            if not -num <= padding_idx < num:
                raise AssertionError("padding_idx must be within num_embeddings")
            padding_idx %= num
        self.padding_idx = padding_idx
        if _weight is not None:
            if tuple(_weight.shape) != (num, dim):
                raise AssertionError("Shape of weight does not match num_embeddings and embedding_dim")
            self.weight = Parameter(_weight, device=device)
        else:
            table = init_draws(rt.normal, (num, dim), _float_dtype(dtype), device)  # (init.normal_, PyTorch's draws)
            if padding_idx is not None:
                table[padding_idx] = 0
            self.weight = Parameter(table, device=device)

    @classmethod
    def from_pretrained(cls, embeddings: Tensor, freeze: bool = True, max_norm: float | None = None,
                        norm_type: float = 2.0, scale_grad_by_freq: bool = False, mode: str = "mean",
                        sparse: bool = False, include_last_offset: bool = False,
                        padding_idx: int | None = None) -> EmbeddingBag:  # fmt: skip
        """A bag embedding whose table is the 2-D ``embeddings`` (its memory), frozen unless ``freeze=False``."""
        if not isinstance(embeddings, Tensor) or embeddings.ndim != 2:
            raise ValueError("Embeddings parameter is expected to be 2-dimensional")
        rows, cols = embeddings.shape
        bag = cls(rows, cols, max_norm, norm_type, scale_grad_by_freq, mode, sparse, embeddings, include_last_offset,
                  padding_idx)  # fmt: skip
        bag.weight.requires_grad = not freeze
        return bag

    def forward(self, input: Any, offsets: Any = None, per_sample_weights: Tensor | None = None) -> Tensor:
        return F.embedding_bag(input, self.weight, offsets, self.max_norm, self.norm_type, self.scale_grad_by_freq,
                               self.mode, self.sparse, per_sample_weights, self.include_last_offset,
                               self.padding_idx)  # fmt: skip

    def extra_repr(self) -> str:
        s = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.max_norm is not None:
            s += f", max_norm={self.max_norm!r}"
        if self.norm_type != 2:
            s += f", norm_type={self.norm_type!r}"
        if self.scale_grad_by_freq:
            s += f", scale_grad_by_freq={self.scale_grad_by_freq!r}"
        s += f", mode={self.mode!r}"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx!r}"
        return s
