"""An encoder-decoder Transformer after Harvard NLP's *The Annotated Transformer*, re-written.

What it exercises: ``clones`` by ``copy.deepcopy`` into an ``nn.ModuleList``, a hand-made
LayerNorm (``a_2``, ``b_2``, ``std(-1, keepdim=True)``), residual sublayers, an
``attention`` function with ``masked_fill(mask == 0, -1e9)`` and ``scores.softmax(dim=-1)``,
multi-head attention through four cloned linears and ``del query``, the sinusoid table as
a buffer written with step slices, ``subsequent_mask`` by ``torch.triu(...).type(torch.uint8)
== 0``, ``nn.init.xavier_uniform_`` on every matrix, label smoothing with ``x.data.clone()``,
``fill_``, ``scatter_``, ``torch.nonzero`` and ``index_fill_`` into ``nn.KLDivLoss(reduction=
"sum")``, ``Adam(betas=(0.9, 0.98), eps=1e-9)`` with the warm-up ``rate`` in a ``LambdaLR``,
``zero_grad(set_to_none=True)``, and greedy decoding.
"""

from __future__ import annotations

import copy
import math
from types import SimpleNamespace


def data(rng):
    src = rng.integers(1, 11, size=(2, 6))
    src[:, 0] = 1
    tgt = src.copy()
    tgt[1, -1] = 0  # one padded position
    return {"src": src, "tgt": tgt}


def tutorial(torch, nn, F):
    class EncoderDecoder(nn.Module):
        def __init__(self, encoder, decoder, src_embed, tgt_embed, generator):
            super().__init__()
            self.encoder = encoder
            self.decoder = decoder
            self.src_embed = src_embed
            self.tgt_embed = tgt_embed
            self.generator = generator

        def forward(self, src, tgt, src_mask, tgt_mask):
            return self.decode(self.encode(src, src_mask), src_mask, tgt, tgt_mask)

        def encode(self, src, src_mask):
            return self.encoder(self.src_embed(src), src_mask)

        def decode(self, memory, src_mask, tgt, tgt_mask):
            return self.decoder(self.tgt_embed(tgt), memory, src_mask, tgt_mask)

    class Generator(nn.Module):
        def __init__(self, d_model, vocab):
            super().__init__()
            self.proj = nn.Linear(d_model, vocab)

        def forward(self, x):
            return F.log_softmax(self.proj(x), dim=-1)

    def clones(module, N):
        return nn.ModuleList([copy.deepcopy(module) for _ in range(N)])

    class LayerNorm(nn.Module):
        def __init__(self, features, eps=1e-6):
            super().__init__()
            self.a_2 = nn.Parameter(torch.ones(features))
            self.b_2 = nn.Parameter(torch.zeros(features))
            self.eps = eps

        def forward(self, x):
            mean = x.mean(-1, keepdim=True)
            std = x.std(-1, keepdim=True)
            return self.a_2 * (x - mean) / (std + self.eps) + self.b_2

    class Encoder(nn.Module):
        def __init__(self, layer, N):
            super().__init__()
            self.layers = clones(layer, N)
            self.norm = LayerNorm(layer.size)

        def forward(self, x, mask):
            for layer in self.layers:
                x = layer(x, mask)
            return self.norm(x)

    class SublayerConnection(nn.Module):
        """A residual around a sublayer that sees the normalised input."""

        def __init__(self, size, dropout):
            super().__init__()
            self.norm = LayerNorm(size)
            self.dropout = nn.Dropout(dropout)

        def forward(self, x, sublayer):
            return x + self.dropout(sublayer(self.norm(x)))

    class EncoderLayer(nn.Module):
        def __init__(self, size, self_attn, feed_forward, dropout):
            super().__init__()
            self.self_attn = self_attn
            self.feed_forward = feed_forward
            self.sublayer = clones(SublayerConnection(size, dropout), 2)
            self.size = size

        def forward(self, x, mask):
            x = self.sublayer[0](x, lambda x: self.self_attn(x, x, x, mask))
            return self.sublayer[1](x, self.feed_forward)

    class Decoder(nn.Module):
        def __init__(self, layer, N):
            super().__init__()
            self.layers = clones(layer, N)
            self.norm = LayerNorm(layer.size)

        def forward(self, x, memory, src_mask, tgt_mask):
            for layer in self.layers:
                x = layer(x, memory, src_mask, tgt_mask)
            return self.norm(x)

    class DecoderLayer(nn.Module):
        def __init__(self, size, self_attn, src_attn, feed_forward, dropout):
            super().__init__()
            self.size = size
            self.self_attn = self_attn
            self.src_attn = src_attn
            self.feed_forward = feed_forward
            self.sublayer = clones(SublayerConnection(size, dropout), 3)

        def forward(self, x, memory, src_mask, tgt_mask):
            m = memory
            x = self.sublayer[0](x, lambda x: self.self_attn(x, x, x, tgt_mask))
            x = self.sublayer[1](x, lambda x: self.src_attn(x, m, m, src_mask))
            return self.sublayer[2](x, self.feed_forward)

    def subsequent_mask(size):
        attn_shape = (1, size, size)
        above = torch.triu(torch.ones(attn_shape), diagonal=1).type(torch.uint8)
        return above == 0

    def attention(query, key, value, mask=None, dropout=None):
        d_k = query.size(-1)
        scores = torch.matmul(query, key.transpose(-2, -1)) / math.sqrt(d_k)
        if mask is not None:
            scores = scores.masked_fill(mask == 0, -1e9)
        p_attn = scores.softmax(dim=-1)
        if dropout is not None:
            p_attn = dropout(p_attn)
        return torch.matmul(p_attn, value), p_attn

    class MultiHeadedAttention(nn.Module):
        def __init__(self, h, d_model, dropout=0.1):
            super().__init__()
            assert d_model % h == 0
            self.d_k = d_model // h
            self.h = h
            self.linears = clones(nn.Linear(d_model, d_model), 4)
            self.attn = None
            self.dropout = nn.Dropout(p=dropout)

        def forward(self, query, key, value, mask=None):
            if mask is not None:
                mask = mask.unsqueeze(1)  # the same mask for every head
            nbatches = query.size(0)
            query, key, value = [
                lin(x).view(nbatches, -1, self.h, self.d_k).transpose(1, 2)
                for lin, x in zip(self.linears, (query, key, value))
            ]
            x, self.attn = attention(query, key, value, mask=mask, dropout=self.dropout)
            x = x.transpose(1, 2).contiguous().view(nbatches, -1, self.h * self.d_k)
            del query
            del key
            del value
            return self.linears[-1](x)

    class PositionwiseFeedForward(nn.Module):
        def __init__(self, d_model, d_ff, dropout=0.1):
            super().__init__()
            self.w_1 = nn.Linear(d_model, d_ff)
            self.w_2 = nn.Linear(d_ff, d_model)
            self.dropout = nn.Dropout(dropout)

        def forward(self, x):
            return self.w_2(self.dropout(self.w_1(x).relu()))

    class Embeddings(nn.Module):
        def __init__(self, d_model, vocab):
            super().__init__()
            self.lut = nn.Embedding(vocab, d_model)
            self.d_model = d_model

        def forward(self, x):
            return self.lut(x) * math.sqrt(self.d_model)

    class PositionalEncoding(nn.Module):
        def __init__(self, d_model, dropout, max_len=5000):
            super().__init__()
            self.dropout = nn.Dropout(p=dropout)
            pe = torch.zeros(max_len, d_model)
            position = torch.arange(0, max_len).unsqueeze(1)
            div_term = torch.exp(torch.arange(0, d_model, 2) * -(math.log(10000.0) / d_model))
            pe[:, 0::2] = torch.sin(position * div_term)
            pe[:, 1::2] = torch.cos(position * div_term)
            pe = pe.unsqueeze(0)
            self.register_buffer("pe", pe)

        def forward(self, x):
            x = x + self.pe[:, : x.size(1)].requires_grad_(False)
            return self.dropout(x)

    def make_model(src_vocab, tgt_vocab, N=6, d_model=512, d_ff=2048, h=8, dropout=0.1):
        c = copy.deepcopy
        attn = MultiHeadedAttention(h, d_model)
        ff = PositionwiseFeedForward(d_model, d_ff, dropout)
        position = PositionalEncoding(d_model, dropout)
        model = EncoderDecoder(
            Encoder(EncoderLayer(d_model, c(attn), c(ff), dropout), N),
            Decoder(DecoderLayer(d_model, c(attn), c(attn), c(ff), dropout), N),
            nn.Sequential(Embeddings(d_model, src_vocab), c(position)),
            nn.Sequential(Embeddings(d_model, tgt_vocab), c(position)),
            Generator(d_model, tgt_vocab),
        )
        for p in model.parameters():  # Glorot / fan_avg
            if p.dim() > 1:
                nn.init.xavier_uniform_(p)
        return model

    class Batch:
        def __init__(self, src, tgt=None, pad=2):
            self.src = src
            self.src_mask = (src != pad).unsqueeze(-2)
            if tgt is not None:
                self.tgt = tgt[:, :-1]
                self.tgt_y = tgt[:, 1:]
                self.tgt_mask = self.make_std_mask(self.tgt, pad)
                self.ntokens = (self.tgt_y != pad).data.sum()

        @staticmethod
        def make_std_mask(tgt, pad):
            tgt_mask = (tgt != pad).unsqueeze(-2)
            return tgt_mask & subsequent_mask(tgt.size(-1)).type_as(tgt_mask.data)

    class LabelSmoothing(nn.Module):
        def __init__(self, size, padding_idx, smoothing=0.0):
            super().__init__()
            self.criterion = nn.KLDivLoss(reduction="sum")
            self.padding_idx = padding_idx
            self.confidence = 1.0 - smoothing
            self.smoothing = smoothing
            self.size = size
            self.true_dist = None

        def forward(self, x, target):
            assert x.size(1) == self.size
            true_dist = x.data.clone()
            true_dist.fill_(self.smoothing / (self.size - 2))
            true_dist.scatter_(1, target.data.unsqueeze(1), self.confidence)
            true_dist[:, self.padding_idx] = 0
            mask = torch.nonzero(target.data == self.padding_idx)
            if mask.dim() > 0:
                true_dist.index_fill_(0, mask.squeeze(), 0.0)
            self.true_dist = true_dist
            return self.criterion(x, true_dist.clone().detach())

    class SimpleLossCompute:
        def __init__(self, generator, criterion):
            self.generator = generator
            self.criterion = criterion

        def __call__(self, x, y, norm):
            x = self.generator(x)
            sloss = self.criterion(x.contiguous().view(-1, x.size(-1)), y.contiguous().view(-1)) / norm
            return sloss.data * norm, sloss

    def rate(step, model_size, factor, warmup):
        if step == 0:  # LambdaLR starts at step 0: avoid 0 ** -0.5
            step = 1
        return factor * (model_size ** (-0.5) * min(step ** (-0.5), step * warmup ** (-1.5)))

    def greedy_decode(model, src, src_mask, max_len, start_symbol):
        memory = model.encode(src, src_mask)
        ys = torch.zeros(1, 1).fill_(start_symbol).type_as(src.data)
        for _ in range(max_len - 1):
            out = model.decode(memory, src_mask, ys, subsequent_mask(ys.size(1)).type_as(src.data))
            prob = model.generator(out[:, -1])
            _, next_word = torch.max(prob, dim=1)
            next_word = next_word.data[0]
            ys = torch.cat([ys, torch.zeros(1, 1).type_as(src.data).fill_(next_word)], dim=1)
        return ys

    V, D = 11, 16

    def model():
        m = make_model(V, V, N=2, d_model=D, d_ff=32, h=2, dropout=0.0)
        for layer in m.modules():  # the attention keeps its own default of 0.1: two generators cannot agree
            if isinstance(layer, nn.Dropout):
                layer.p = 0.0
        return m

    def optimizer(model):
        opt = torch.optim.Adam(model.parameters(), lr=0.5, betas=(0.9, 0.98), eps=1e-9)
        sched = torch.optim.lr_scheduler.LambdaLR(opt, lr_lambda=lambda step: rate(step, D, factor=1.0, warmup=400))
        return SimpleNamespace(opt=opt, sched=sched)

    def forward(model, batch):
        b = Batch(batch["src"], batch["tgt"], pad=0)
        out = model.forward(b.src, b.tgt, b.src_mask, b.tgt_mask)
        loss_compute = SimpleLossCompute(model.generator, LabelSmoothing(V, padding_idx=0, smoothing=0.1))
        total, loss_node = loss_compute(out, b.tgt_y, b.ntokens)
        return {"out": out, "total": total}, loss_node

    def update(model, state):
        state.opt.step()
        state.opt.zero_grad(set_to_none=True)
        state.sched.step()

    return SimpleNamespace(
        LabelSmoothing=LabelSmoothing, greedy_decode=greedy_decode, subsequent_mask=subsequent_mask,
        model=model, optimizer=optimizer, forward=forward, update=update,
    )  # fmt: skip
