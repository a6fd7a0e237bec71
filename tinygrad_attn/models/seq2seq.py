"""An attention encoder-decoder of GRUs, as in Bahdanau et al. (2015) and Luong et al. (2015).

The encoder runs a :class:`GRUCell` over the embedded source; its states are the keys
and values of the attention, and its last state starts the decoder. One decoder step,
given the previous target token ``y`` and state ``s``:

- ``attention="additive"`` (Bahdanau): ``c = attend(s, states)`` with the *previous*
  state, ``s' = GRU([emb(y); c], s)``, logits ``= out([s'; c; emb(y)])``.
- ``attention="general"`` (Luong): ``s' = GRU(emb(y), s)`` first, ``c = attend(s', states)``
  with the *new* state, ``h~ = tanh(combine([c; s']))``, logits ``= out(h~)``.

``forward`` uses teacher forcing (the true previous token); ``decode`` is greedy.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..engine.switches import no_grad, tracing
from ..nn.attention import AdditiveAttention, GeneralAttention
from ..nn.layers import Embedding, Linear
from ..nn.module import Module
from ..nn.rnn import GRUCell, unroll
from ..tensors._tensor import Tensor, cat, stack


class Seq2Seq(Module):
    """``Seq2Seq(src_vocab, tgt_vocab, emb_dim, hidden_size, attention="additive")``.

    ``src`` ``(B, Ts)`` ids, ``tgt_in`` ``(B, Tt)`` ids (the target shifted right, starting
    with the begin token) -> logits ``(B, Tt, tgt_vocab)``. ``src_mask`` ``(B, Ts)`` is
    True at real tokens; with ``pad_id`` set it is built from ``src`` when not given.

    >>> model = Seq2Seq(src_vocab=10, tgt_vocab=10, emb_dim=8, hidden_size=16)
    >>> model(Tensor([[3, 4, 5]]), Tensor([[0, 5, 4]])).shape
    (1, 3, 10)
    """

    def __init__(self, src_vocab: int, tgt_vocab: int, emb_dim: int, hidden_size: int,
                 attention: str = "additive", attn_dim: int | None = None, pad_id: int | None = None) -> None:  # fmt: skip
        super().__init__()
        if attention not in ("additive", "general"):
            raise ValueError(f"Seq2Seq: attention must be 'additive' or 'general', got {attention!r}")
        self.kind, self.pad_id, self.hidden_size = attention, pad_id, hidden_size
        self.src_embed = Embedding(src_vocab, emb_dim)
        self.tgt_embed = Embedding(tgt_vocab, emb_dim)
        self.encoder = GRUCell(emb_dim, hidden_size)
        if attention == "additive":
            self.attention = AdditiveAttention(hidden_size, hidden_size, attn_dim or hidden_size)
            self.decoder = GRUCell(emb_dim + hidden_size, hidden_size)
            self.out = Linear(2 * hidden_size + emb_dim, tgt_vocab)
        else:
            self.attention = GeneralAttention(hidden_size, hidden_size)
            self.decoder = GRUCell(emb_dim, hidden_size)
            self.combine = Linear(2 * hidden_size, hidden_size)
            self.out = Linear(hidden_size, tgt_vocab)

    def encode(self, src: Any, src_mask: Any = None) -> tuple[Tensor, Tensor, Any]:
        """Encoder states ``(B, Ts, hidden)``, the decoder's first state ``(B, hidden)`` and the mask."""
        if tracing() and isinstance(src, Tensor):  # no host reads: the ids are an input
            return self._encode_traced(src, src_mask)
        if src_mask is None and self.pad_id is not None:
            host = src.detach().numpy() if isinstance(src, Tensor) else np.asarray(src)
            src_mask = host != self.pad_id
        states, last = unroll(self.encoder, self.src_embed(src))  # (B, Ts, h), (B, h)
        if src_mask is not None:  # start from the state at each sequence's last real token
            keep = src_mask.detach().numpy() if isinstance(src_mask, Tensor) else np.asarray(src_mask, bool)
            last = states[np.arange(keep.shape[0]), keep.sum(1) - 1]  # (B, h)
            src_mask = Tensor(keep, device=states.device)
        return states, last, src_mask

    def _encode_traced(self, src: Tensor, src_mask: Any) -> tuple[Tensor, Tensor, Any]:
        """:meth:`encode` in ops only (while tracing): the mask and last positions as tensors."""
        if src_mask is None and self.pad_id is not None:
            src_mask = src != self.pad_id
        states, last = unroll(self.encoder, self.src_embed(src))  # (B, Ts, h), (B, h)
        if src_mask is not None:
            keep = src_mask if isinstance(src_mask, Tensor) else Tensor(np.asarray(src_mask, bool))
            lens = keep.astype(np.int64).sum(1) - 1  # (B,)
            last = states[Tensor.arange(keep.shape[0], dtype=np.int64, device=states.device), lens]
            src_mask = keep
        return states, last, src_mask

    def step(self, y: Any, s: Tensor, states: Tensor, src_mask: Any = None,
             keys: Tensor | None = None) -> tuple[Tensor, Tensor, Tensor]:  # fmt: skip
        """One decoder step from previous tokens ``y`` ``(B,)``: logits ``(B, V)``, new state, weights
        ``(B, Ts)``. ``keys``: ``self.attention.prepare_keys(states)``, the projected keys, computed
        once per source by ``forward`` and ``decode`` (here when not given)."""
        parts, s, w = self._features(y, s, states, src_mask, keys)
        return self.out(_joined(parts)), s, w

    def _features(self, y: Any, s: Tensor, states: Tensor, src_mask: Any,
                  keys: Tensor | None) -> tuple[tuple[Tensor, ...], Tensor, Tensor]:  # fmt: skip
        """One decoder step up to the output layer: the parts of what ``out`` reads (joined on
        the last axis), the new state, the weights."""
        e = self.tgt_embed(y)  # (B, emb)
        if keys is None:
            keys = self.attention.prepare_keys(states)
        if self.kind == "additive":
            c, w = self.attention(s, states, states, mask=src_mask, prepared_keys=keys)  # (B, h), (B, Ts)
            s = self.decoder(cat([e, c], axis=-1), s)
            return (s, c, e), s, w
        s = self.decoder(e, s)
        c, w = self.attention(s, states, states, mask=src_mask, prepared_keys=keys)
        return (self.combine(cat([c, s], axis=-1)).tanh(),), s, w  # Luong's attentional state h~

    def forward(self, src: Any, tgt_in: Any, src_mask: Any = None,
                return_attention: bool = False) -> Tensor | tuple[Tensor, Tensor]:  # fmt: skip
        """Teacher-forced logits ``(B, Tt, V)`` (and the weights ``(B, Tt, Ts)`` when asked)."""
        states, s, src_mask = self.encode(src, src_mask)
        if tracing() and isinstance(tgt_in, Tensor):  # the ids stay an input of the program
            tgt = tgt_in
        else:
            tgt = tgt_in.detach().numpy() if isinstance(tgt_in, Tensor) else np.asarray(tgt_in)
        keys = self.attention.prepare_keys(states)  # (projected once: every step attends over them)
        steps, weights = [], []
        for t in range(tgt.shape[1]):
            parts, s, w = self._features(tgt[:, t], s, states, src_mask, keys)
            steps.append(parts)
            weights.append(w)
        # each part of every step stacked (B, Tt, ...), joined, and one product for every step
        features = _joined([stack(part, axis=1) for part in zip(*steps)])
        logits_t = self.out(features)  # (B, Tt, V)
        return (logits_t, stack(weights, axis=1)) if return_attention else logits_t

    @no_grad()
    def decode(self, src: Any, max_len: int, bos_id: int, src_mask: Any = None,
               return_attention: bool = False) -> Tensor | tuple[Tensor, Tensor]:  # fmt: skip
        """Greedy decoding: ``max_len`` ids ``(B, max_len)`` (int64) after ``bos_id``."""
        states, s, src_mask = self.encode(src, src_mask)
        y = np.full(states.shape[0], bos_id, dtype=np.int64)
        keys = self.attention.prepare_keys(states)
        ids, weights = [], []
        for _ in range(max_len):
            out, s, w = self.step(y, s, states, src_mask, keys)
            y = out.argmax(-1).detach().numpy().astype(np.int64)
            ids.append(y)
            weights.append(w)
        out_ids = Tensor(np.stack(ids, 1), device=states.device)
        return (out_ids, stack(weights, axis=1)) if return_attention else out_ids


def _joined(parts: Any) -> Tensor:
    """The parts joined on the last axis (a single part as it is: a cat of one would copy it)."""
    return parts[0] if len(parts) == 1 else cat(list(parts), axis=-1)
