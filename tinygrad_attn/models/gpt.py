"""GPT: a decoder-only transformer language model (Radford et al., 2018/2019), read top to
bottom as in nanoGPT: token and learned position embeddings, pre-norm causal blocks, a
final LayerNorm and a head that may share the token embedding's weights.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..engine.switches import no_grad
from ..nn.layers import Dropout, Embedding, LayerNorm, Linear
from ..nn.module import Module, ModuleList, Parameter
from ..random import host_generator
from ..random import transforms as rt
from ..tensors._tensor import Tensor
from .blocks import EncoderBlock


class GPT(Module):
    """``GPT(vocab_size, d_model, n_heads, n_layers, max_len)``: ids ``(B, T)`` -> logits ``(B, T, vocab)``.

    Each block is a pre-norm :class:`~tinygrad_attn.models.EncoderBlock` run with ``is_causal=True``
    and GELU. With ``tie_weights=True`` the head's weight *is* the token embedding (one
    parameter, named ``tok_emb.weight``). Embeddings start at N(0, 0.02) as in GPT-2.

    >>> model = GPT(vocab_size=11, d_model=16, n_heads=2, n_layers=1, max_len=8)
    >>> model(Tensor([[1, 2, 3]])).shape
    (1, 3, 11)
    """

    def __init__(self, vocab_size: int, d_model: int, n_heads: int, n_layers: int, max_len: int,
                 d_ff: int | None = None, dropout: float = 0.0, tie_weights: bool = True) -> None:  # fmt: skip
        super().__init__()
        self.vocab_size, self.max_len = vocab_size, max_len
        self.tok_emb = Embedding(vocab_size, d_model)
        self.pos_emb = Embedding(max_len, d_model)
        for emb in (self.tok_emb, self.pos_emb):
            emb.weight = Parameter(rt.normal(host_generator(), emb.weight.shape, np.float32, 0.0, 0.02))
        self.drop = Dropout(dropout)
        d_ff = 4 * d_model if d_ff is None else d_ff
        self.blocks = ModuleList(
            EncoderBlock(d_model, n_heads, d_ff, dropout, norm_first=True, activation="gelu") for _ in range(n_layers)
        )
        self.ln_f = LayerNorm(d_model)
        self.head = Linear(d_model, vocab_size, bias=False)
        if tie_weights:
            self.head.weight = self.tok_emb.weight

    def forward(self, ids: Any, cache: KVCache | None = None) -> Tensor:
        """Logits for ``ids``; with a ``cache`` (see :meth:`new_cache`) the ids continue the
        tokens of the earlier calls, whose keys and values the cache keeps."""
        ids = _ids(ids, self.tok_emb.weight)
        start = 0 if cache is None else cache.length
        if ids.ndim != 2 or start + ids.shape[1] > self.max_len:
            raise ValueError(
                f"GPT: ids must be (B, T) with T <= max_len {self.max_len}"
                + (f" - {start} tokens already in the cache" if start else "")
                + f", got shape {tuple(ids.shape)}"
            )
        t = ids.shape[1]
        pos = np.arange(start, start + t)
        x = self.drop(self.tok_emb(ids) + self.pos_emb(pos))  # (B, T, d) + (T, d)
        for i, block in enumerate(self.blocks):
            x = block(x, is_causal=True, cache=None if cache is None else cache.layers[i])
        if cache is not None:
            cache.length += t
        return self.head(self.ln_f(x))  # (B, T, vocab)

    def new_cache(self) -> KVCache:
        """An empty key/value cache for :meth:`forward`, one entry per block."""
        return KVCache(len(self.blocks))

    @no_grad()
    def generate(self, ids: Any, max_new_tokens: int, temperature: float = 1.0, top_k: int | None = None,
                 greedy: bool = False, use_cache: bool = True) -> Tensor:  # fmt: skip
        """Extend ``ids`` (``(B, T)`` or ``(T,)``) by ``max_new_tokens`` tokens, one at a time.

        ``greedy=True`` takes the most likely token; otherwise it samples from
        ``softmax(logits / temperature)``, restricted to the ``top_k`` most likely tokens
        when given, with the seeded generator (``tga.manual_seed`` makes it repeatable).
        Only the last ``max_len`` tokens are seen. With ``use_cache`` each step feeds only
        the new token and reuses the keys and values of the others (a KV cache), until the
        sequence outgrows ``max_len``; then each step recomputes the window. Returns the
        ids as an int64 tensor.
        """
        if not greedy and temperature <= 0:
            raise ValueError(f"GPT.generate: temperature must be > 0, got {temperature}; use greedy=True instead")
        if top_k is not None and top_k < 1:
            raise ValueError(f"GPT.generate: top_k must be >= 1, got {top_k}")
        host = ids.detach().numpy() if isinstance(ids, Tensor) else np.asarray(ids)
        single = host.ndim == 1
        seq = host.reshape(1, -1) if single else host
        seq = seq.astype(np.int64)
        was_training = self.training
        self.eval()
        cache = self.new_cache() if use_cache and 0 < seq.shape[1] <= self.max_len else None
        try:
            for step in range(max_new_tokens):
                if cache is not None and seq.shape[1] > self.max_len:
                    cache = None  # the window slides: every position changes
                if cache is None:
                    new = seq[:, -self.max_len :]
                else:
                    new = seq if step == 0 else seq[:, -1:]
                logits = self(new, cache)[:, -1].detach().numpy().astype(np.float64)  # (B, vocab)
                seq = np.concatenate([seq, _next_token(logits, temperature, top_k, greedy)[:, None]], 1)
        finally:
            self.train(was_training)
        out = seq[0] if single else seq
        return Tensor(out, device=self.tok_emb.weight.device)


class KVCache:
    """The keys and values a :class:`GPT` has computed, per block, and how many tokens
    they cover: ``model(ids, cache)`` continues where the last call stopped."""

    def __init__(self, n_layers: int) -> None:
        self.layers: list[dict] = [{} for _ in range(n_layers)]
        self.length = 0


def _ids(ids: Any, like: Tensor) -> Tensor:
    return ids if isinstance(ids, Tensor) else Tensor(np.asarray(ids), device=like._dev)


def _next_token(logits: np.ndarray, temperature: float, top_k: int | None, greedy: bool) -> np.ndarray:
    """One token per row of host ``logits`` ``(B, vocab)``: the argmax, or a seeded sample."""
    if greedy:
        return logits.argmax(-1)
    z = logits / temperature
    if top_k is not None and top_k < z.shape[-1]:
        kth = np.sort(z, -1)[:, -top_k][:, None]  # the k-th largest of each row
        z = np.where(z < kth, -np.inf, z)
    p = np.exp(z - z.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    return rt.multinomial(host_generator(), p, 1, True)[:, 0]  # (as torch.multinomial(probs, 1))
