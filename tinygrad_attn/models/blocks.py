"""The library's own batch-first attention and transformer blocks.

The layers of the contract (API.md, "Models") under names that cannot be mistaken for PyTorch's:
inputs are always ``(B, T, d_model)`` and a boolean mask means what it says, ``True`` =
may attend. (PyTorch's ``nn.MultiheadAttention`` and ``nn.Transformer*``, in
:mod:`tinygrad_attn.nn`, take sequence-first inputs unless ``batch_first`` and read
``True`` as may NOT attend.)

Here, the contract name (an alias in :mod:`tinygrad_attn.models`), and the
PyTorch class of the same role in ``nn``:

- :class:`BatchFirstAttention`: ``models.MultiHeadAttention``; ``nn.MultiheadAttention``
- :class:`EncoderBlock`: ``models.TransformerEncoderLayer``; ``nn.TransformerEncoderLayer``
- :class:`DecoderBlock`: ``models.TransformerDecoderLayer``; ``nn.TransformerDecoderLayer``
- :class:`EncoderStack`: ``models.TransformerEncoder``; ``nn.TransformerEncoder``
- :class:`DecoderStack`: ``models.TransformerDecoder``; ``nn.TransformerDecoder``
- :class:`EncoderDecoder`: ``models.Transformer``; ``nn.Transformer`` (PyTorch's conventions)

Children are named as PyTorch's layers name them (``self_attn``, ``linear1``, ``norm1``,
``dropout1``, ...; the decoder's cross-attention is ``cross_attn``), so state dicts line up
name for name (:mod:`tinygrad_attn.nn.torch_bridge` converts the attention's layout).
``norm_first=False`` is the paper's post-norm block, ``norm_first=True`` the pre-norm block
of GPT-2 and ViT.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from ..engine.spellings import keeps_old_spellings
from ..engine.switches import no_grad
from ..nn.attention import _as_mask, attend_heads
from ..nn.layers import Embedding, LayerNorm, Linear, PositionalEncoding
from ..nn.module import Module, ModuleList
from ..nn.transformer import _DecoderLayerBase, _EncoderLayerBase
from ..tensors._tensor import Tensor

__all__ = [
    "BatchFirstAttention",
    "EncoderBlock",
    "DecoderBlock",
    "EncoderStack",
    "DecoderStack",
    "EncoderDecoder",
    "padding_mask",
]


class BatchFirstAttention(Module):
    """Multi-head attention, batch first: project, split into heads, attend, merge, project.

    ``query`` ``(B, Tq, d_model)``, ``key`` ``(B, Tk, kdim)``, ``value`` ``(B, Tk, vdim)``;
    ``key`` and ``value`` default to ``query`` (self-attention). ``allow`` is boolean
    (True = may attend) or float (added to the scores), broadcastable to
    ``(B, n_heads, Tq, Tk)``; a 3-D mask ``(B, Tq, Tk)`` is applied to every head.
    ``mask=`` is its older name (``engine/spellings.py``).
    (PyTorch's ``nn.MultiheadAttention`` reads a boolean mask the other way round.)
    ``models.MultiHeadAttention`` is this class under its contract name.

    >>> mha = BatchFirstAttention(8, 2)
    >>> x = Tensor.randn(1, 5, 8)
    >>> out, w = mha(x, is_causal=True, need_weights=True)
    >>> out.shape, w.shape
    ((1, 5, 8), (1, 2, 5, 5))
    """

    def __init__(self, d_model: int, n_heads: int, bias: bool = True, dropout: float = 0.0,
                 kdim: int | None = None, vdim: int | None = None) -> None:  # fmt: skip
        super().__init__()
        if d_model % n_heads:
            raise ValueError(f"BatchFirstAttention: d_model {d_model} is not divisible by n_heads {n_heads}")
        self.d_model, self.n_heads, self.head_dim = d_model, n_heads, d_model // n_heads
        self.kdim = kdim if kdim is not None else d_model
        self.vdim = vdim if vdim is not None else d_model
        self.dropout = dropout
        self.q_proj = Linear(d_model, d_model, bias=bias)
        self.k_proj = Linear(self.kdim, d_model, bias=bias)
        self.v_proj = Linear(self.vdim, d_model, bias=bias)
        self.out_proj = Linear(d_model, d_model, bias=bias)

    @keeps_old_spellings
    def forward(self, query: Tensor, key: Tensor | None = None, value: Tensor | None = None, allow: Any = None,
                is_causal: bool = False, need_weights: bool = False, cache: dict | None = None) -> Any:  # fmt: skip
        """The output ``(B, Tq, d_model)``, or ``(output, weights)`` with ``need_weights``.

        ``allow`` (``mask=``, its older name, still works): True = may attend. ``cache`` (a
        dict, self-attention only): the keys and values of earlier calls are kept in it and
        attended to as well, so a decoder can feed one new token at a time."""
        if cache is not None and any(t is not None and t is not query for t in (key, value)):
            raise ValueError("BatchFirstAttention: a cache is for self-attention; pass no key or value with it")
        key = query if key is None else key
        value = key if value is None else value
        self._check(query, key, value)
        # Three products, not one over the stacked weights: even with the slices'
        # gradients added in place, the stacked form measured 5 to 15% slower at tiny and
        # small sizes (five more nodes) and within noise at medium and large.
        q, k, v = self.q_proj(query), self.k_proj(key), self.v_proj(value)  # (B, T, d_model)
        if allow is not None:
            allow = _as_mask(allow, query, "BatchFirstAttention")
            if allow.ndim == 3:  # (B, Tq, Tk): the same mask for every head
                allow = allow.unsqueeze(1)
        p = self.dropout if self.training else 0.0
        out, weights = attend_heads(q, k, v, self.n_heads, allow, is_causal, p, need_weights, cache)
        out = self.out_proj(out)  # (B, Tq, d_model)
        return (out, weights) if need_weights else out

    def _check(self, query: Tensor, key: Tensor, value: Tensor) -> None:
        ok = (
            query.ndim == key.ndim == value.ndim == 3
            and query.shape[-1] == self.d_model
            and key.shape[-1] == self.kdim
            and value.shape[-1] == self.vdim
            and key.shape[:2] == value.shape[:2]
            and query.shape[0] == key.shape[0]
        )
        if not ok:
            raise ValueError(
                f"BatchFirstAttention(d_model={self.d_model}, kdim={self.kdim}, vdim={self.vdim}): got query "
                f"{tuple(query.shape)}, key {tuple(key.shape)}, value {tuple(value.shape)}; need (B, Tq, {self.d_model}), "
                f"(B, Tk, {self.kdim}), (B, Tk, {self.vdim})"
            )

    def extra_repr(self) -> str:
        return f"d_model={self.d_model}, n_heads={self.n_heads}, dropout={self.dropout}"


class EncoderBlock(_EncoderLayerBase):
    """Self-attention then a feed-forward block, each with a residual connection and a norm.

    ``x`` ``(B, T, d_model)`` -> ``(B, T, d_model)``; ``mask`` as in
    :class:`BatchFirstAttention` (True = may attend), ``is_causal`` for a decoder-only model.
    ``models.TransformerEncoderLayer`` is this class under its contract name;
    ``tinygrad_attn.nn.TransformerEncoderLayer`` is PyTorch's layer.

    >>> layer = EncoderBlock(16, 4, 32)
    >>> layer(Tensor.randn(2, 5, 16)).shape
    (2, 5, 16)
    """

    def __init__(self, d_model: int, n_heads: int, d_ff: int, dropout: float = 0.0, norm_first: bool = False,
                 activation: str | Callable[[Tensor], Tensor] = "relu", layer_norm_eps: float = 1e-5) -> None:  # fmt: skip
        super().__init__()
        attn = BatchFirstAttention(d_model, n_heads, dropout=dropout)
        self._build(attn, d_model, d_ff, dropout, norm_first, activation, layer_norm_eps)

    def forward(self, x: Tensor, mask: Any = None, is_causal: bool = False, cache: dict | None = None) -> Tensor:
        """``cache``: see :class:`BatchFirstAttention` (feed a decoder one token at a time)."""
        return self._layer(x, lambda y: self.self_attn(y, allow=mask, is_causal=is_causal, cache=cache))


class DecoderBlock(_DecoderLayerBase):
    """Causal self-attention, cross-attention over ``memory``, then a feed-forward block.

    ``x`` ``(B, Tt, d_model)``, ``memory`` ``(B, Ts, d_model)`` (the encoder's output);
    ``mask`` applies to the self-attention (``is_causal=True`` adds the causal mask),
    ``memory_mask`` to the cross-attention (e.g. the source padding, ``(B, 1, 1, Ts)``).
    ``models.TransformerDecoderLayer`` is this class under its contract name;
    ``tinygrad_attn.nn.TransformerDecoderLayer`` is PyTorch's layer.
    """

    def __init__(self, d_model: int, n_heads: int, d_ff: int, dropout: float = 0.0, norm_first: bool = False,
                 activation: str | Callable[[Tensor], Tensor] = "relu", layer_norm_eps: float = 1e-5) -> None:  # fmt: skip
        super().__init__()
        self_attn = BatchFirstAttention(d_model, n_heads, dropout=dropout)
        cross_attn = BatchFirstAttention(d_model, n_heads, dropout=dropout)
        self._build(self_attn, cross_attn, d_model, d_ff, dropout, norm_first, activation, layer_norm_eps)

    def forward(self, x: Tensor, memory: Tensor, mask: Any = None, memory_mask: Any = None,
                is_causal: bool = False) -> Tensor:  # fmt: skip
        return self._layer(
            x,
            lambda y: self.self_attn(y, allow=mask, is_causal=is_causal),
            lambda y: self.cross_attn(y, memory, memory, allow=memory_mask),
        )


class EncoderStack(Module):
    """``n_layers`` encoder blocks (:class:`EncoderBlock`; ``layers.0``, ...) and a final ``norm``, as in PyTorch.

    ``models.TransformerEncoder`` is this class under its contract name.
    """

    def __init__(self, d_model: int, n_heads: int, d_ff: int, n_layers: int, dropout: float = 0.0,
                 norm_first: bool = False, activation: str | Callable[[Tensor], Tensor] = "relu") -> None:  # fmt: skip
        super().__init__()
        self.layers = ModuleList(
            EncoderBlock(d_model, n_heads, d_ff, dropout, norm_first, activation) for _ in range(n_layers)
        )
        self.norm = LayerNorm(d_model)

    def forward(self, x: Tensor, mask: Any = None, is_causal: bool = False) -> Tensor:
        for layer in self.layers:
            x = layer(x, mask=mask, is_causal=is_causal)
        return self.norm(x)


class DecoderStack(Module):
    """``n_layers`` decoder blocks (:class:`DecoderBlock`; ``layers.0``, ...) and a final ``norm``, as in PyTorch.

    ``models.TransformerDecoder`` is this class under its contract name.
    """

    def __init__(self, d_model: int, n_heads: int, d_ff: int, n_layers: int, dropout: float = 0.0,
                 norm_first: bool = False, activation: str | Callable[[Tensor], Tensor] = "relu") -> None:  # fmt: skip
        super().__init__()
        self.layers = ModuleList(
            DecoderBlock(d_model, n_heads, d_ff, dropout, norm_first, activation) for _ in range(n_layers)
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
        host, dev = ids.detach().numpy(), ids._dev
    else:
        host, dev = np.asarray(ids), None
    if host.ndim != 2:
        raise ValueError(f"padding_mask: ids must be (B, T), got shape {tuple(host.shape)}")
    return Tensor((host != pad_id)[:, None, None, :], device=dev)


class EncoderDecoder(Module):
    """The encoder-decoder transformer of "Attention Is All You Need", batch first.

    ``models.Transformer`` is this class under its contract name.

    With ``src_vocab``/``tgt_vocab`` it takes token ids ``(B, T)``: embeddings scaled by
    ``sqrt(d_model)`` plus sinusoidal positions (``src_embed``, ``tgt_embed``, ``pos``)
    and returns logits ``(B, Tt, tgt_vocab)`` from ``generator``. Without a vocabulary a
    side takes features ``(B, T, d_model)`` as they are (no positions added, as in
    PyTorch's ``nn.Transformer``) and the output is ``(B, Tt, d_model)``.

    Masks: ``src_mask`` (e.g. :func:`padding_mask`) applies to the encoder's
    self-attention and to the decoder's cross-attention; the decoder's self-attention is
    always causal, and ``tgt_mask`` (e.g. the target padding) is combined with it. With
    ``pad_id`` set, the padding masks of id inputs are built when not given.

    >>> model = EncoderDecoder(16, 2, 1, 1, 32, src_vocab=10, tgt_vocab=12, max_len=20)
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
        self.encoder = EncoderStack(d_model, n_heads, d_ff, n_encoder_layers, dropout, norm_first, activation)
        self.decoder = DecoderStack(d_model, n_heads, d_ff, n_decoder_layers, dropout, norm_first, activation)
        if tgt_vocab is not None:
            self.generator = Linear(d_model, tgt_vocab)

    def _embed(self, x: Any, side: str) -> Tensor:
        emb = getattr(self, f"{side}_embed", None)
        if emb is None:
            if not isinstance(x, Tensor) or x.ndim != 3 or x.shape[-1] != self.d_model:
                shape = getattr(x, "shape", None)
                raise ValueError(f"EncoderDecoder: {side} must be features (B, T, {self.d_model}) when the model has "
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
            raise ValueError("EncoderDecoder.greedy_decode: the model has no tgt_vocab, so no tokens to choose from")
        src_mask = self._pad(src, "src", src_mask)
        memory = self.encode(src, src_mask)  # (B, Ts, d_model)
        out = np.full((memory.shape[0], 1), bos_id, dtype=np.int64)
        was_training = self.training
        self.eval()
        try:
            for _ in range(max_len):
                logits = self.decode(out, memory, memory_mask=src_mask)  # (B, t, V)
                nxt = logits[:, -1].argmax(-1).detach().numpy().astype(np.int64)
                out = np.concatenate([out, nxt[:, None]], 1)
        finally:
            self.train(was_training)
        return Tensor(out[:, 1:], device=memory.device)
