"""An encoder-decoder Transformer "from scratch" with ``torch.einsum``, after the widely
copied video tutorial by Aladdin Persson (*Pytorch Transformers from Scratch*), re-written.

What it exercises: per-head ``nn.Linear`` projections after ``reshape(N, len, heads,
head_dim)``, attention energies by ``torch.einsum("nqhd,nkhd->nhqk", ...)``,
``masked_fill(mask == 0, float("-1e20"))``, ``torch.softmax(energy / (embed_size **
(1 / 2)), dim=3)``, the weighted sum by ``einsum("nhql,nlhd->nqhd")``, learned position
embeddings of ``torch.arange(0, seq_length).expand(N, seq_length).to(self.device)``, a
padding mask ``(src != pad).unsqueeze(1).unsqueeze(2)``, a causal mask
``torch.tril(torch.ones((T, T))).expand(N, 1, T, T)``, ``model.to(device)`` with a
``torch.device``, and Adam on a cross-entropy with ``ignore_index``.
"""

from __future__ import annotations

from types import SimpleNamespace


def data(rng):
    x = rng.integers(1, 9, size=(2, 7))
    x[1, -2:] = 0  # padding
    trg = rng.integers(1, 9, size=(2, 6))
    return {"x": x, "trg": trg}


def tutorial(torch, nn, F):
    class SelfAttention(nn.Module):
        def __init__(self, embed_size, heads):
            super().__init__()
            self.embed_size = embed_size
            self.heads = heads
            self.head_dim = embed_size // heads
            assert self.head_dim * heads == embed_size, "the embedding size must be divisible by the heads"
            self.values = nn.Linear(self.head_dim, self.head_dim, bias=False)
            self.keys = nn.Linear(self.head_dim, self.head_dim, bias=False)
            self.queries = nn.Linear(self.head_dim, self.head_dim, bias=False)
            self.fc_out = nn.Linear(heads * self.head_dim, embed_size)

        def forward(self, values, keys, query, mask):
            N = query.shape[0]
            value_len, key_len, query_len = values.shape[1], keys.shape[1], query.shape[1]
            values = self.values(values.reshape(N, value_len, self.heads, self.head_dim))
            keys = self.keys(keys.reshape(N, key_len, self.heads, self.head_dim))
            queries = self.queries(query.reshape(N, query_len, self.heads, self.head_dim))
            energy = torch.einsum("nqhd,nkhd->nhqk", [queries, keys])  # (N, heads, query_len, key_len)
            if mask is not None:
                energy = energy.masked_fill(mask == 0, float("-1e20"))
            attention = torch.softmax(energy / (self.embed_size ** (1 / 2)), dim=3)
            out = torch.einsum("nhql,nlhd->nqhd", [attention, values]).reshape(N, query_len, self.heads * self.head_dim)
            return self.fc_out(out)

    class TransformerBlock(nn.Module):
        def __init__(self, embed_size, heads, dropout, forward_expansion):
            super().__init__()
            self.attention = SelfAttention(embed_size, heads)
            self.norm1 = nn.LayerNorm(embed_size)
            self.norm2 = nn.LayerNorm(embed_size)
            self.feed_forward = nn.Sequential(
                nn.Linear(embed_size, forward_expansion * embed_size),
                nn.ReLU(),
                nn.Linear(forward_expansion * embed_size, embed_size),
            )
            self.dropout = nn.Dropout(dropout)

        def forward(self, value, key, query, mask):
            attention = self.attention(value, key, query, mask)
            x = self.dropout(self.norm1(attention + query))  # post-norm, as the original
            forward = self.feed_forward(x)
            return self.dropout(self.norm2(forward + x))

    class Encoder(nn.Module):
        def __init__(
            self, src_vocab_size, embed_size, num_layers, heads, device, forward_expansion, dropout, max_length
        ):
            super().__init__()
            self.embed_size = embed_size
            self.device = device
            self.word_embedding = nn.Embedding(src_vocab_size, embed_size)
            self.position_embedding = nn.Embedding(max_length, embed_size)
            self.layers = nn.ModuleList(
                [TransformerBlock(embed_size, heads, dropout, forward_expansion) for _ in range(num_layers)]
            )
            self.dropout = nn.Dropout(dropout)

        def forward(self, x, mask):
            N, seq_length = x.shape
            positions = torch.arange(0, seq_length).expand(N, seq_length).to(self.device)
            out = self.dropout(self.word_embedding(x) + self.position_embedding(positions))
            for layer in self.layers:
                out = layer(out, out, out, mask)
            return out

    class DecoderBlock(nn.Module):
        def __init__(self, embed_size, heads, forward_expansion, dropout, device):
            super().__init__()
            self.norm = nn.LayerNorm(embed_size)
            self.attention = SelfAttention(embed_size, heads)
            self.transformer_block = TransformerBlock(embed_size, heads, dropout, forward_expansion)
            self.dropout = nn.Dropout(dropout)

        def forward(self, x, value, key, src_mask, trg_mask):
            attention = self.attention(x, x, x, trg_mask)
            query = self.dropout(self.norm(attention + x))
            return self.transformer_block(value, key, query, src_mask)

    class Decoder(nn.Module):
        def __init__(
            self, trg_vocab_size, embed_size, num_layers, heads, forward_expansion, dropout, device, max_length
        ):
            super().__init__()
            self.device = device
            self.word_embedding = nn.Embedding(trg_vocab_size, embed_size)
            self.position_embedding = nn.Embedding(max_length, embed_size)
            self.layers = nn.ModuleList(
                [DecoderBlock(embed_size, heads, forward_expansion, dropout, device) for _ in range(num_layers)]
            )
            self.fc_out = nn.Linear(embed_size, trg_vocab_size)
            self.dropout = nn.Dropout(dropout)

        def forward(self, x, enc_out, src_mask, trg_mask):
            N, seq_length = x.shape
            positions = torch.arange(0, seq_length).expand(N, seq_length).to(self.device)
            x = self.dropout(self.word_embedding(x) + self.position_embedding(positions))
            for layer in self.layers:
                x = layer(x, enc_out, enc_out, src_mask, trg_mask)
            return self.fc_out(x)

    class Transformer(nn.Module):
        def __init__(self, src_vocab_size, trg_vocab_size, src_pad_idx, trg_pad_idx, embed_size=16, num_layers=2,
                     forward_expansion=2, heads=2, dropout=0.0, device="cpu", max_length=20):  # fmt: skip
            super().__init__()
            self.encoder = Encoder(
                src_vocab_size, embed_size, num_layers, heads, device, forward_expansion, dropout, max_length
            )
            self.decoder = Decoder(
                trg_vocab_size, embed_size, num_layers, heads, forward_expansion, dropout, device, max_length
            )
            self.src_pad_idx = src_pad_idx
            self.trg_pad_idx = trg_pad_idx
            self.device = device

        def make_src_mask(self, src):
            src_mask = (src != self.src_pad_idx).unsqueeze(1).unsqueeze(2)  # (N, 1, 1, src_len)
            return src_mask.to(self.device)

        def make_trg_mask(self, trg):
            N, trg_len = trg.shape
            trg_mask = torch.tril(torch.ones((trg_len, trg_len))).expand(N, 1, trg_len, trg_len)
            return trg_mask.to(self.device)

        def forward(self, src, trg):
            src_mask = self.make_src_mask(src)
            trg_mask = self.make_trg_mask(trg)
            enc_src = self.encoder(src, src_mask)
            return self.decoder(trg, enc_src, src_mask, trg_mask)

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    criterion = nn.CrossEntropyLoss(ignore_index=0)

    def model():
        return Transformer(10, 10, 0, 0, device=device).to(device)

    def optimizer(model):
        return torch.optim.Adam(model.parameters(), lr=3e-3)

    def forward(model, batch):
        x, trg = batch["x"].to(device), batch["trg"].to(device)
        out = model(x, trg[:, :-1])
        loss = criterion(out.reshape(-1, out.shape[2]), trg[:, 1:].reshape(-1))
        return {"out": out}, loss

    def update(model, opt):
        opt.step()
        opt.zero_grad()

    return SimpleNamespace(model=model, optimizer=optimizer, forward=forward, update=update)
