"""Attention modules written the way PyTorch tutorials write them.

Each module is written once, against whichever library is passed in as ``torch``, ``nn``
and ``F``: PyTorch itself, or ``tinygrad_attn`` with only the imports changed

    import tinygrad_attn as torch
    from tinygrad_attn import nn
    import tinygrad_attn.nn.functional as F

so a test can build the same module in both and hold the numbers equal.
"""

from __future__ import annotations

import math
from types import SimpleNamespace


def tutorial_modules(torch, nn, F) -> SimpleNamespace:  # noqa: C901 - one class per tutorial
    class SelfAttention(nn.Module):
        """Scaled dot-product self-attention with separate query, key and value layers."""

        def __init__(self, d_in, d_out):
            super().__init__()
            self.W_query = nn.Linear(d_in, d_out, bias=False)
            self.W_key = nn.Linear(d_in, d_out, bias=False)
            self.W_value = nn.Linear(d_in, d_out, bias=False)
            self.softmax = nn.Softmax(dim=2)

        def forward(self, x):
            queries, keys, values = self.W_query(x), self.W_key(x), self.W_value(x)
            scores = torch.bmm(queries, keys.transpose(1, 2)) / math.sqrt(keys.size(-1))
            weights = self.softmax(scores)
            return torch.bmm(weights, values)

    class CausalSelfAttention(nn.Module):
        """Multi-head causal self-attention as GPT tutorials write it: one fused projection."""

        def __init__(self, d_model, n_head, context):
            super().__init__()
            self.n_head = n_head
            self.c_attn = nn.Linear(d_model, 3 * d_model)
            self.c_proj = nn.Linear(d_model, d_model)
            self.register_buffer("mask", torch.tril(torch.ones(context, context)).view(1, 1, context, context))

        def forward(self, x):
            B, T, C = x.size()
            q, k, v = self.c_attn(x).split(C, dim=2)
            q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
            k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
            v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
            att = att.masked_fill(self.mask[:, :, :T, :T] == 0, float("-inf"))
            att = F.softmax(att, dim=-1)
            y = (att @ v).transpose(1, 2).contiguous().view(B, T, C)
            return self.c_proj(y)

    class BahdanauAttention(nn.Module):
        """Additive attention of a decoder state over the encoder's outputs (seq-first)."""

        def __init__(self, enc_hid_dim, dec_hid_dim):
            super().__init__()
            self.attn = nn.Linear((enc_hid_dim * 2) + dec_hid_dim, dec_hid_dim)
            self.v = nn.Linear(dec_hid_dim, 1, bias=False)

        def forward(self, hidden, encoder_outputs):
            src_len = encoder_outputs.shape[0]
            hidden = hidden.unsqueeze(1).repeat(1, src_len, 1)
            encoder_outputs = encoder_outputs.permute(1, 0, 2)
            energy = torch.tanh(self.attn(torch.cat((hidden, encoder_outputs), dim=2)))
            attention = self.v(energy).squeeze(2)
            return F.softmax(attention, dim=1)

    class DotProductAttention(nn.Module):
        """Luong's dot score with a padding mask; returns the context and the weights."""

        def forward(self, query, keys, values, mask=None):
            score = torch.bmm(keys, query.unsqueeze(2)).squeeze(2)
            score = score.view(-1, keys.size(1))
            if mask is not None:
                score = score.masked_fill(mask == 0, -1e10)
            attn = F.softmax(score, dim=1)
            context = torch.bmm(attn.unsqueeze(1), values).squeeze(1)
            return context, attn

    class Encoder(nn.Module):
        """A bidirectional-GRU encoder whose final states make the decoder's first state."""

        def __init__(self, input_dim, emb_dim, enc_hid_dim, dec_hid_dim, dropout):
            super().__init__()
            self.embedding = nn.Embedding(input_dim, emb_dim)
            self.rnn = nn.GRU(emb_dim, enc_hid_dim, bidirectional=True)
            self.fc = nn.Linear(enc_hid_dim * 2, dec_hid_dim)
            self.dropout = nn.Dropout(dropout)

        def forward(self, src):
            embedded = self.dropout(self.embedding(src))
            outputs, hidden = self.rnn(embedded)
            hidden = torch.tanh(self.fc(torch.cat((hidden[-2, :, :], hidden[-1, :, :]), dim=1)))
            return outputs, hidden

    class Decoder(nn.Module):
        """One step of an attention decoder; writes its outputs into a preallocated tensor."""

        def __init__(self, output_dim, emb_dim, enc_hid_dim, dec_hid_dim):
            super().__init__()
            self.output_dim = output_dim
            self.attention = BahdanauAttention(enc_hid_dim, dec_hid_dim)
            self.embedding = nn.Embedding(output_dim, emb_dim)
            self.rnn = nn.GRU((enc_hid_dim * 2) + emb_dim, dec_hid_dim)
            self.fc_out = nn.Linear((enc_hid_dim * 2) + dec_hid_dim + emb_dim, output_dim)

        def forward(self, input, hidden, encoder_outputs):
            input = input.unsqueeze(0)
            embedded = self.embedding(input)
            a = self.attention(hidden, encoder_outputs).unsqueeze(1)
            encoder_outputs = encoder_outputs.permute(1, 0, 2)
            weighted = torch.bmm(a, encoder_outputs).permute(1, 0, 2)
            output, hidden = self.rnn(torch.cat((embedded, weighted), dim=2), hidden.unsqueeze(0))
            prediction = self.fc_out(torch.cat((output.squeeze(0), weighted.squeeze(0), embedded.squeeze(0)), dim=1))
            return prediction, hidden.squeeze(0)

    class Seq2Seq(nn.Module):
        def __init__(self, encoder, decoder):
            super().__init__()
            self.encoder = encoder
            self.decoder = decoder

        def forward(self, src, trg):
            trg_len, batch_size = trg.shape
            outputs = torch.zeros(trg_len, batch_size, self.decoder.output_dim)
            encoder_outputs, hidden = self.encoder(src)
            input = trg[0, :]
            for t in range(1, trg_len):
                output, hidden = self.decoder(input, hidden, encoder_outputs)
                outputs[t] = output
                input = trg[t]  # teacher forcing, always
            return outputs

    return SimpleNamespace(
        SelfAttention=SelfAttention,
        CausalSelfAttention=CausalSelfAttention,
        BahdanauAttention=BahdanauAttention,
        DotProductAttention=DotProductAttention,
        Encoder=Encoder,
        Decoder=Decoder,
        Seq2Seq=Seq2Seq,
    )
