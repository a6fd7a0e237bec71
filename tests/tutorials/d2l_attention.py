"""Attention scoring functions and multi-head attention after *Dive into Deep Learning*
(d2l.ai, chapter "Attention Mechanisms and Transformers"), re-written.

What it exercises: ``sequence_mask`` writing ``X[~mask] = value`` into scores, ``masked_softmax``
with 1-D ``valid_lens`` (``torch.repeat_interleave``) or 2-D ones (``reshape(-1)``),
additive attention with ``nn.LazyLinear`` and broadcasting by ``unsqueeze``, scaled
dot-product attention with ``torch.bmm``, multi-head attention by ``transpose_qkv`` /
``transpose_output`` and ``valid_lens`` repeated per head, and a plain SGD loop.
"""

from __future__ import annotations

import math
from types import SimpleNamespace


def data(rng):
    return {
        "queries": rng.standard_normal((2, 4, 8)),
        "keys": rng.standard_normal((2, 6, 8)),
        "valid_lens": [3, 2],
        "target": rng.standard_normal((2, 4, 8)),
    }


def tutorial(torch, nn, F):
    def sequence_mask(X, valid_len, value=0):
        maxlen = X.size(1)
        mask = torch.arange((maxlen), dtype=torch.float32, device=X.device)[None, :] < valid_len[:, None]
        X[~mask] = value
        return X

    def masked_softmax(X, valid_lens):
        """Softmax over the last axis, with entries past each valid length masked out."""
        if valid_lens is None:
            return nn.functional.softmax(X, dim=-1)
        shape = X.shape
        if valid_lens.dim() == 1:
            valid_lens = torch.repeat_interleave(valid_lens, shape[1])
        else:
            valid_lens = valid_lens.reshape(-1)
        # a large negative number, whose exponential is 0
        X = sequence_mask(X.reshape(-1, shape[-1]), valid_lens, value=-1e6)
        return nn.functional.softmax(X.reshape(shape), dim=-1)

    class AdditiveAttention(nn.Module):
        def __init__(self, num_hiddens, dropout):
            super().__init__()
            self.W_k = nn.LazyLinear(num_hiddens, bias=False)
            self.W_q = nn.LazyLinear(num_hiddens, bias=False)
            self.w_v = nn.LazyLinear(1, bias=False)
            self.dropout = nn.Dropout(dropout)

        def forward(self, queries, keys, values, valid_lens):
            queries, keys = self.W_q(queries), self.W_k(keys)
            # (batch, queries, 1, h) + (batch, 1, keys, h): every pair
            features = queries.unsqueeze(2) + keys.unsqueeze(1)
            features = torch.tanh(features)
            scores = self.w_v(features).squeeze(-1)
            self.attention_weights = masked_softmax(scores, valid_lens)
            return torch.bmm(self.dropout(self.attention_weights), values)

    class DotProductAttention(nn.Module):
        def __init__(self, dropout):
            super().__init__()
            self.dropout = nn.Dropout(dropout)

        def forward(self, queries, keys, values, valid_lens=None):
            d = queries.shape[-1]
            scores = torch.bmm(queries, keys.transpose(1, 2)) / math.sqrt(d)
            self.attention_weights = masked_softmax(scores, valid_lens)
            return torch.bmm(self.dropout(self.attention_weights), values)

    class MultiHeadAttention(nn.Module):
        def __init__(self, num_hiddens, num_heads, dropout, bias=False):
            super().__init__()
            self.num_heads = num_heads
            self.attention = DotProductAttention(dropout)
            self.W_q = nn.LazyLinear(num_hiddens, bias=bias)
            self.W_k = nn.LazyLinear(num_hiddens, bias=bias)
            self.W_v = nn.LazyLinear(num_hiddens, bias=bias)
            self.W_o = nn.LazyLinear(num_hiddens, bias=bias)

        def forward(self, queries, keys, values, valid_lens):
            queries = self.transpose_qkv(self.W_q(queries))
            keys = self.transpose_qkv(self.W_k(keys))
            values = self.transpose_qkv(self.W_v(values))
            if valid_lens is not None:  # each head sees the same lengths
                valid_lens = torch.repeat_interleave(valid_lens, repeats=self.num_heads, dim=0)
            output = self.attention(queries, keys, values, valid_lens)
            return self.W_o(self.transpose_output(output))

        def transpose_qkv(self, X):
            X = X.reshape(X.shape[0], X.shape[1], self.num_heads, -1)
            X = X.permute(0, 2, 1, 3)
            return X.reshape(-1, X.shape[2], X.shape[3])

        def transpose_output(self, X):
            X = X.reshape(-1, self.num_heads, X.shape[1], X.shape[2])
            X = X.permute(0, 2, 1, 3)
            return X.reshape(X.shape[0], X.shape[1], -1)

    class Model(nn.Module):
        """Additive attention then multi-head attention over the same keys."""

        def __init__(self):
            super().__init__()
            self.additive = AdditiveAttention(8, 0.0)
            self.mha = MultiHeadAttention(8, 2, 0.0)

        def forward(self, queries, keys, valid_lens):
            context = self.additive(queries, keys, keys, valid_lens)
            return self.mha(context, keys, keys, valid_lens)

    loss_fn = nn.MSELoss()

    def model():
        return Model()

    def optimizer(model):
        return torch.optim.SGD(model.parameters(), lr=0.1)

    def forward(model, batch):
        out = model(batch["queries"], batch["keys"], batch["valid_lens"])
        return {"out": out, "weights": model.mha.attention.attention_weights}, loss_fn(out, batch["target"])

    def update(model, opt):
        opt.step()
        opt.zero_grad()

    return SimpleNamespace(
        masked_softmax=masked_softmax, sequence_mask=sequence_mask, model=model, optimizer=optimizer,
        forward=forward, update=update,
    )  # fmt: skip


def materialize(ns, model, batch):
    """Lazy layers take their input sizes from a first forward pass."""
    ns.forward(model, batch)
