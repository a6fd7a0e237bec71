"""The transformer of "Attention Is All You Need": encoder and decoder layers and stacks, and
the encoder-decoder model.

Children are named as PyTorch's ``nn.TransformerEncoderLayer`` / ``DecoderLayer`` name
them (``self_attn``, ``linear1``, ``norm1``, ``dropout1``, ...; the decoder's
cross-attention is ``cross_attn``), so state dicts line up name for name.
``norm_first=False`` is the paper's post-norm layer, ``norm_first=True`` the pre-norm
layer of GPT-2 and ViT.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from .._tensor import Tensor
from ..engine.switches import no_grad
from .attention import MultiHeadAttention
from .layers import Dropout, Embedding, LayerNorm, Linear, PositionalEncoding
from .module import Module, ModuleList

_ACTIVATIONS: dict[str, Callable[[Tensor], Tensor]] = {"relu": Tensor.relu, "gelu": Tensor.gelu}


def _activation(activation: str | Callable[[Tensor], Tensor], owner: str) -> Callable[[Tensor], Tensor]:
    if callable(activation):
        return activation
    if activation not in _ACTIVATIONS:
        raise ValueError(f"{owner}: activation must be one of {sorted(_ACTIVATIONS)} or a callable, got {activation!r}")
    return _ACTIVATIONS[activation]


class _EncoderLayerBase(Module):
    """The encoder layer's body, whatever the attention's conventions: self-attention then a
    feed-forward block, each with a residual connection, a norm (after, or before with
    ``norm_first``) and dropout. A subclass builds it with :meth:`_build` and calls
    :meth:`_layer` with its self-attention as a function of the (normed) input."""

    def _build(self, self_attn: Module, d_model: int, d_ff: int, dropout: float, norm_first: bool,
               activation: str | Callable[[Tensor], Tensor], layer_norm_eps: float, bias: bool = True) -> None:  # fmt: skip
        self.self_attn = self_attn  # children in PyTorch's order, so state dicts list as its do
        self.linear1 = Linear(d_model, d_ff, bias=bias)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(d_ff, d_model, bias=bias)
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

    def extra_repr(self) -> str:
        return f"norm_first={self.norm_first}"


class TransformerEncoderLayer(_EncoderLayerBase):
    """Self-attention then a feed-forward block, each with a residual connection and a norm.

    ``x`` ``(B, T, d_model)`` -> ``(B, T, d_model)``; ``mask`` as in
    :class:`MultiHeadAttention` (True = may attend), ``is_causal`` for a decoder-only model.
    (``tinygrad_attn.nn.TransformerEncoderLayer`` is the PyTorch-convention layer.)

    >>> layer = TransformerEncoderLayer(16, 4, 32)
    >>> layer(Tensor.randn(2, 5, 16)).shape
    (2, 5, 16)
    """

    def __init__(self, d_model: int, n_heads: int, d_ff: int, dropout: float = 0.0, norm_first: bool = False,
                 activation: str | Callable[[Tensor], Tensor] = "relu", layer_norm_eps: float = 1e-5) -> None:  # fmt: skip
        super().__init__()
        attn = MultiHeadAttention(d_model, n_heads, dropout=dropout)
        self._build(attn, d_model, d_ff, dropout, norm_first, activation, layer_norm_eps)

    def forward(self, x: Tensor, mask: Any = None, is_causal: bool = False, cache: dict | None = None) -> Tensor:
        """``cache``: see :class:`MultiHeadAttention` (feed a decoder one token at a time)."""
        return self._layer(x, lambda y: self.self_attn(y, mask=mask, is_causal=is_causal, cache=cache))


class _DecoderLayerBase(Module):
    """The decoder layer's body, whatever the attention's conventions: self-attention,
    cross-attention over the memory, then a feed-forward block, each with a residual
    connection, a norm and dropout. The cross-attention child's name is the subclass's
    ``_cross`` (``cross_attn`` here, ``multihead_attn`` in PyTorch)."""

    _cross = "cross_attn"

    def _build(self, self_attn: Module, cross_attn: Module, d_model: int, d_ff: int, dropout: float,
               norm_first: bool, activation: str | Callable[[Tensor], Tensor], layer_norm_eps: float,
               bias: bool = True) -> None:  # fmt: skip
        self.self_attn = self_attn  # children in PyTorch's order, so state dicts list as its do
        setattr(self, self._cross, cross_attn)
        self.linear1 = Linear(d_model, d_ff, bias=bias)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(d_ff, d_model, bias=bias)
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

    def extra_repr(self) -> str:
        return f"norm_first={self.norm_first}"


class TransformerDecoderLayer(_DecoderLayerBase):
    """Causal self-attention, cross-attention over ``memory``, then a feed-forward block.

    ``x`` ``(B, Tt, d_model)``, ``memory`` ``(B, Ts, d_model)`` (the encoder's output);
    ``mask`` applies to the self-attention (``is_causal=True`` adds the causal mask),
    ``memory_mask`` to the cross-attention (e.g. the source padding, ``(B, 1, 1, Ts)``).
    (``tinygrad_attn.nn.TransformerDecoderLayer`` is the PyTorch-convention layer.)
    """

    def __init__(self, d_model: int, n_heads: int, d_ff: int, dropout: float = 0.0, norm_first: bool = False,
                 activation: str | Callable[[Tensor], Tensor] = "relu", layer_norm_eps: float = 1e-5) -> None:  # fmt: skip
        super().__init__()
        self_attn = MultiHeadAttention(d_model, n_heads, dropout=dropout)
        cross_attn = MultiHeadAttention(d_model, n_heads, dropout=dropout)
        self._build(self_attn, cross_attn, d_model, d_ff, dropout, norm_first, activation, layer_norm_eps)

    def forward(self, x: Tensor, memory: Tensor, mask: Any = None, memory_mask: Any = None,
                is_causal: bool = False) -> Tensor:  # fmt: skip
        return self._layer(
            x,
            lambda y: self.self_attn(y, mask=mask, is_causal=is_causal),
            lambda y: self.cross_attn(y, memory, memory, mask=memory_mask),
        )


class TransformerEncoder(Module):
    """``n_layers`` encoder layers (``layers.0``, ...) and a final ``norm``, as in PyTorch."""

    def __init__(self, d_model: int, n_heads: int, d_ff: int, n_layers: int, dropout: float = 0.0,
                 norm_first: bool = False, activation: str | Callable[[Tensor], Tensor] = "relu") -> None:  # fmt: skip
        super().__init__()
        self.layers = ModuleList(
            TransformerEncoderLayer(d_model, n_heads, d_ff, dropout, norm_first, activation) for _ in range(n_layers)
        )
        self.norm = LayerNorm(d_model)

    def forward(self, x: Tensor, mask: Any = None, is_causal: bool = False) -> Tensor:
        for layer in self.layers:
            x = layer(x, mask=mask, is_causal=is_causal)
        return self.norm(x)


class TransformerDecoder(Module):
    """``n_layers`` decoder layers (``layers.0``, ...) and a final ``norm``, as in PyTorch."""

    def __init__(self, d_model: int, n_heads: int, d_ff: int, n_layers: int, dropout: float = 0.0,
                 norm_first: bool = False, activation: str | Callable[[Tensor], Tensor] = "relu") -> None:  # fmt: skip
        super().__init__()
        self.layers = ModuleList(
            TransformerDecoderLayer(d_model, n_heads, d_ff, dropout, norm_first, activation) for _ in range(n_layers)
        )
        self.norm = LayerNorm(d_model)

    def forward(self, x: Tensor, memory: Tensor, mask: Any = None, memory_mask: Any = None,
                is_causal: bool = True) -> Tensor:  # fmt: skip
        for layer in self.layers:
            x = layer(x, memory, mask=mask, memory_mask=memory_mask, is_causal=is_causal)
        return self.norm(x)


def padding_mask(ids: Any, pad_id: int) -> Tensor:
    """``(B, 1, 1, T)`` boolean mask of token ids ``(B, T)``: True where the token is not padding.

    It broadcasts over heads and queries, so it serves as ``mask`` of a self-attention
    over the ids or ``memory_mask`` of a cross-attention to them.

    >>> padding_mask(Tensor([[5, 3, 0]]), pad_id=0).numpy()[0, 0, 0].tolist()
    [True, True, False]
    """
    if isinstance(ids, Tensor):
        host, dev = ids.numpy(), ids._dev
    else:
        host, dev = np.asarray(ids), None
    if host.ndim != 2:
        raise ValueError(f"padding_mask: ids must be (B, T), got shape {host.shape}")
    return Tensor((host != pad_id)[:, None, None, :], device=dev)


class Transformer(Module):
    """The encoder-decoder transformer.

    With ``src_vocab``/``tgt_vocab`` it takes token ids ``(B, T)``: embeddings scaled by
    ``sqrt(d_model)`` plus sinusoidal positions (``src_embed``, ``tgt_embed``, ``pos``)
    and returns logits ``(B, Tt, tgt_vocab)`` from ``generator``. Without a vocabulary a
    side takes features ``(B, T, d_model)`` as they are (no positions added, as in
    PyTorch's ``nn.Transformer``) and the output is ``(B, Tt, d_model)``.

    Masks: ``src_mask`` (e.g. :func:`padding_mask`) applies to the encoder's
    self-attention and to the decoder's cross-attention; the decoder's self-attention is
    always causal, and ``tgt_mask`` (e.g. the target padding) is combined with it. With
    ``pad_id`` set, the padding masks of id inputs are built when not given.

    >>> model = Transformer(16, 2, 1, 1, 32, src_vocab=10, tgt_vocab=12, max_len=20)
    >>> model(Tensor([[1, 2, 3]]), Tensor([[4, 5]])).shape
    (1, 2, 12)
    """

    def __init__(self, d_model: int = 512, n_heads: int = 8, n_encoder_layers: int = 6, n_decoder_layers: int = 6,
                 d_ff: int = 2048, dropout: float = 0.1, src_vocab: int | None = None, tgt_vocab: int | None = None,
                 max_len: int = 512, norm_first: bool = False, activation: str | Callable[[Tensor], Tensor] = "relu",
                 pad_id: int | None = None) -> None:  # fmt: skip
        super().__init__()
        self.d_model, self.pad_id = d_model, pad_id
        if src_vocab is not None:
            self.src_embed = Embedding(src_vocab, d_model)
        if tgt_vocab is not None:
            self.tgt_embed = Embedding(tgt_vocab, d_model)
        if src_vocab is not None or tgt_vocab is not None:
            self.pos = PositionalEncoding(d_model, max_len, dropout)
        self.encoder = TransformerEncoder(d_model, n_heads, d_ff, n_encoder_layers, dropout, norm_first, activation)
        self.decoder = TransformerDecoder(d_model, n_heads, d_ff, n_decoder_layers, dropout, norm_first, activation)
        if tgt_vocab is not None:
            self.generator = Linear(d_model, tgt_vocab)

    def _embed(self, x: Any, side: str) -> Tensor:
        emb = getattr(self, f"{side}_embed", None)
        if emb is None:
            if not isinstance(x, Tensor) or x.ndim != 3 or x.shape[-1] != self.d_model:
                shape = getattr(x, "shape", None)
                raise ValueError(f"Transformer: {side} must be features (B, T, {self.d_model}) when the model has "
                                 f"no {side}_vocab, got shape {shape}")  # fmt: skip
            return x
        return self.pos(emb(x) * math.sqrt(self.d_model))  # (B, T, d_model)

    def _pad(self, ids: Any, side: str, given: Any) -> Any:
        if given is not None or self.pad_id is None or getattr(self, f"{side}_embed", None) is None:
            return given
        return padding_mask(ids, self.pad_id)

    def encode(self, src: Any, src_mask: Any = None) -> Tensor:
        """The encoder's output (the decoder's ``memory``), ``(B, Ts, d_model)``."""
        return self.encoder(self._embed(src, "src"), mask=self._pad(src, "src", src_mask))

    def decode(self, tgt: Any, memory: Tensor, tgt_mask: Any = None, memory_mask: Any = None) -> Tensor:
        """Causal decoding of ``tgt`` over ``memory``: logits ``(B, Tt, tgt_vocab)`` or features."""
        y = self.decoder(self._embed(tgt, "tgt"), memory, mask=self._pad(tgt, "tgt", tgt_mask),
                         memory_mask=memory_mask, is_causal=True)  # fmt: skip
        gen = getattr(self, "generator", None)
        return gen(y) if gen is not None else y

    def forward(self, src: Any, tgt: Any, src_mask: Any = None, tgt_mask: Any = None) -> Tensor:
        src_mask = self._pad(src, "src", src_mask)
        memory = self.encode(src, src_mask)
        return self.decode(tgt, memory, tgt_mask, memory_mask=src_mask)

    @no_grad()
    def greedy_decode(self, src: Any, max_len: int, bos_id: int, src_mask: Any = None) -> Tensor:
        """The most likely next token, ``max_len`` times: ids ``(B, max_len)`` (int64) after ``bos_id``.

        Needs ``tgt_vocab``. The source is encoded once; each step decodes the whole
        prefix again (no cache: simple, and the prefixes here are short).
        """
        if getattr(self, "generator", None) is None:
            raise ValueError("Transformer.greedy_decode: the model has no tgt_vocab, so no tokens to choose from")
        src_mask = self._pad(src, "src", src_mask)
        memory = self.encode(src, src_mask)  # (B, Ts, d_model)
        out = np.full((memory.shape[0], 1), bos_id, dtype=np.int64)
        was_training = self.training
        self.eval()
        try:
            for _ in range(max_len):
                logits = self.decode(out, memory, memory_mask=src_mask)  # (B, t, V)
                nxt = logits[:, -1].argmax(-1).numpy().astype(np.int64)
                out = np.concatenate([out, nxt[:, None]], 1)
        finally:
            self.train(was_training)
        return Tensor(out[:, 1:], device=memory.device)
