"""The transformer layer's body, shared by PyTorch's layers and the library's blocks.

:class:`_EncoderLayerBase` and :class:`_DecoderLayerBase` hold the children, named as
PyTorch's ``nn.TransformerEncoderLayer`` / ``DecoderLayer`` name them (``self_attn``,
``linear1``, ``norm1``, ``dropout1``, ...), and the residual/norm/feed-forward wiring;
``norm_first=False`` is the paper's post-norm layer, ``norm_first=True`` the pre-norm
layer of GPT-2 and ViT. Two families build on them, differing only in their attention
and signatures: PyTorch's ``nn.TransformerEncoderLayer`` and friends
(:mod:`tinygrad_attn.nn.torch_transformer`, masks True = may NOT attend) and the
library's batch-first ``EncoderBlock``/``DecoderBlock`` (:mod:`tinygrad_attn.models.blocks`,
masks True = may attend).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..tensors._tensor import Tensor
from .layers import Dropout, LayerNorm, Linear, named_activation
from .module import Module


def _activation(activation: str | Callable[[Tensor], Tensor], owner: str) -> Callable[[Tensor], Tensor]:
    """A layer's activation: a callable as given, a name as ``F``'s function of it (``layers.named_activation``)."""
    return activation if callable(activation) else named_activation(activation, owner)


class _EncoderLayerBase(Module):
    """The encoder layer's body, whatever the attention's conventions: self-attention then a
    feed-forward block, each with a residual connection, a norm (after, or before with
    ``norm_first``) and dropout. A subclass builds it with :meth:`_build` and calls
    :meth:`_layer` with its self-attention as a function of the (normed) input."""

    def _build(self, self_attn: Module, d_model: int, d_ff: int, dropout: float, norm_first: bool,
               activation: str | Callable[[Tensor], Tensor], layer_norm_eps: float, bias: bool = True,
               dtype: Any = None) -> None:  # fmt: skip
        self.self_attn = self_attn  # children in PyTorch's order, so state dicts list as its do
        self.linear1 = Linear(d_model, d_ff, bias=bias, dtype=dtype)  # (drawn in the dtype, as PyTorch's)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(d_ff, d_model, bias=bias, dtype=dtype)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        self.activation = _activation(activation, type(self).__name__)

    def _layer(self, x: Tensor, attend: Callable[[Tensor], Tensor]) -> Tensor:
        if self.norm_first:
            x = x + self.dropout1(attend(self.norm1(x)))
            return x + self._ff(self.norm2(x))
        x = self.norm1(x + self.dropout1(attend(x)))
        return self.norm2(x + self._ff(x))

    def _ff(self, x: Tensor) -> Tensor:
        return self.dropout2(self.linear2(self.dropout(self.activation(self.linear1(x)))))  # (..., d_ff) inside


class _DecoderLayerBase(Module):
    """The decoder layer's body, whatever the attention's conventions: self-attention,
    cross-attention over the memory, then a feed-forward block, each with a residual
    connection, a norm and dropout. The cross-attention child's name is the subclass's
    ``_cross`` (``cross_attn`` here, ``multihead_attn`` in PyTorch)."""

    _cross = "cross_attn"

    def _build(self, self_attn: Module, cross_attn: Module, d_model: int, d_ff: int, dropout: float,
               norm_first: bool, activation: str | Callable[[Tensor], Tensor], layer_norm_eps: float,
               bias: bool = True, dtype: Any = None) -> None:  # fmt: skip
        self.self_attn = self_attn  # children in PyTorch's order, so state dicts list as its do
        setattr(self, self._cross, cross_attn)
        self.linear1 = Linear(d_model, d_ff, bias=bias, dtype=dtype)  # (drawn in the dtype, as PyTorch's)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(d_ff, d_model, bias=bias, dtype=dtype)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias)
        self.norm3 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        self.dropout3 = Dropout(dropout)
        self.activation = _activation(activation, type(self).__name__)

    def _layer(self, x: Tensor, self_attend: Callable[[Tensor], Tensor],
               cross_attend: Callable[[Tensor], Tensor]) -> Tensor:  # fmt: skip
        if self.norm_first:
            x = x + self.dropout1(self_attend(self.norm1(x)))
            x = x + self.dropout2(cross_attend(self.norm2(x)))
            return x + self._ff(self.norm3(x))
        x = self.norm1(x + self.dropout1(self_attend(x)))
        x = self.norm2(x + self.dropout2(cross_attend(x)))
        return self.norm3(x + self._ff(x))

    def _ff(self, x: Tensor) -> Tensor:
        return self.dropout3(self.linear2(self.dropout(self.activation(self.linear1(x)))))  # (..., d_ff) inside
