"""Attention and a small GPT as *Build a Large Language Model (From Scratch)* writes them
(rasbt/LLMs-from-scratch, chapters 3 to 5), re-written.

What it exercises: a ``register_buffer("mask", torch.triu(torch.ones(T, T), diagonal=1))``
applied in place by ``attn_scores.masked_fill_(mask_bool, -torch.inf)`` on the scores of
``queries @ keys.transpose(2, 3)``, softmax of ``attn_scores / keys.shape[-1] ** 0.5``, a
hand-made LayerNorm with ``var(dim=-1, keepdim=True, unbiased=False)``, the tanh GELU with
``torch.sqrt(torch.tensor(2.0 / torch.pi))``, ``nn.Sequential(*[...])`` of blocks, the loss
as ``F.cross_entropy(logits.flatten(0, 1), target.flatten())``, AdamW with
``weight_decay=0.1``, and greedy ``generate_text_simple`` with ``torch.argmax(...,
keepdim=True)``.
"""

from __future__ import annotations

from types import SimpleNamespace


def data(rng):
    ids = rng.integers(0, 17, size=(2, 7))
    return {"input": ids[:, :-1], "target": ids[:, 1:]}


def tutorial(torch, nn, F):
    class MultiHeadAttention(nn.Module):
        def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
            super().__init__()
            assert d_out % num_heads == 0, "d_out must be divisible by num_heads"
            self.d_out = d_out
            self.num_heads = num_heads
            self.head_dim = d_out // num_heads
            self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
            self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
            self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
            self.out_proj = nn.Linear(d_out, d_out)
            self.dropout = nn.Dropout(dropout)
            self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length), diagonal=1))

        def forward(self, x):
            b, num_tokens, d_in = x.shape
            keys = self.W_key(x).view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
            queries = self.W_query(x).view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
            values = self.W_value(x).view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
            attn_scores = queries @ keys.transpose(2, 3)  # (b, heads, tokens, tokens)
            mask_bool = self.mask.bool()[:num_tokens, :num_tokens]
            attn_scores.masked_fill_(mask_bool, -torch.inf)
            attn_weights = torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1)
            attn_weights = self.dropout(attn_weights)
            context_vec = (attn_weights @ values).transpose(1, 2)
            context_vec = context_vec.contiguous().view(b, num_tokens, self.d_out)
            return self.out_proj(context_vec)

    class LayerNorm(nn.Module):
        def __init__(self, emb_dim):
            super().__init__()
            self.eps = 1e-5
            self.scale = nn.Parameter(torch.ones(emb_dim))
            self.shift = nn.Parameter(torch.zeros(emb_dim))

        def forward(self, x):
            mean = x.mean(dim=-1, keepdim=True)
            var = x.var(dim=-1, keepdim=True, unbiased=False)
            norm_x = (x - mean) / torch.sqrt(var + self.eps)
            return self.scale * norm_x + self.shift

    class GELU(nn.Module):
        def forward(self, x):
            return (
                0.5 * x * (1 + torch.tanh(torch.sqrt(torch.tensor(2.0 / torch.pi)) * (x + 0.044715 * torch.pow(x, 3))))
            )

    class FeedForward(nn.Module):
        def __init__(self, cfg):
            super().__init__()
            self.layers = nn.Sequential(
                nn.Linear(cfg["emb_dim"], 4 * cfg["emb_dim"]), GELU(), nn.Linear(4 * cfg["emb_dim"], cfg["emb_dim"])
            )

        def forward(self, x):
            return self.layers(x)

    class TransformerBlock(nn.Module):
        def __init__(self, cfg):
            super().__init__()
            self.att = MultiHeadAttention(
                d_in=cfg["emb_dim"], d_out=cfg["emb_dim"], context_length=cfg["context_length"],
                num_heads=cfg["n_heads"], dropout=cfg["drop_rate"], qkv_bias=cfg["qkv_bias"],
            )  # fmt: skip
            self.ff = FeedForward(cfg)
            self.norm1 = LayerNorm(cfg["emb_dim"])
            self.norm2 = LayerNorm(cfg["emb_dim"])
            self.drop_shortcut = nn.Dropout(cfg["drop_rate"])

        def forward(self, x):
            shortcut = x
            x = self.drop_shortcut(self.att(self.norm1(x)))
            x = x + shortcut
            shortcut = x
            x = self.drop_shortcut(self.ff(self.norm2(x)))
            return x + shortcut

    class GPTModel(nn.Module):
        def __init__(self, cfg):
            super().__init__()
            self.tok_emb = nn.Embedding(cfg["vocab_size"], cfg["emb_dim"])
            self.pos_emb = nn.Embedding(cfg["context_length"], cfg["emb_dim"])
            self.drop_emb = nn.Dropout(cfg["drop_rate"])
            self.trf_blocks = nn.Sequential(*[TransformerBlock(cfg) for _ in range(cfg["n_layers"])])
            self.final_norm = LayerNorm(cfg["emb_dim"])
            self.out_head = nn.Linear(cfg["emb_dim"], cfg["vocab_size"], bias=False)

        def forward(self, in_idx):
            batch_size, seq_len = in_idx.shape
            tok_embeds = self.tok_emb(in_idx)
            pos_embeds = self.pos_emb(torch.arange(seq_len, device=in_idx.device))
            x = self.drop_emb(tok_embeds + pos_embeds)
            x = self.trf_blocks(x)
            x = self.final_norm(x)
            return self.out_head(x)

    def generate_text_simple(model, idx, max_new_tokens, context_size):
        for _ in range(max_new_tokens):
            idx_cond = idx[:, -context_size:]
            with torch.no_grad():
                logits = model(idx_cond)
            logits = logits[:, -1, :]
            probas = torch.softmax(logits, dim=-1)
            idx_next = torch.argmax(probas, dim=-1, keepdim=True)
            idx = torch.cat((idx, idx_next), dim=1)
        return idx

    def calc_loss_batch(input_batch, target_batch, model, device):
        input_batch, target_batch = input_batch.to(device), target_batch.to(device)
        logits = model(input_batch)
        return logits, F.cross_entropy(logits.flatten(0, 1), target_batch.flatten())

    cfg = {"vocab_size": 17, "context_length": 8, "emb_dim": 8, "n_heads": 2, "n_layers": 2, "drop_rate": 0.0,
           "qkv_bias": False}  # fmt: skip
    device = torch.device("cpu")

    def model():
        return GPTModel(cfg).to(device)

    def optimizer(model):
        return torch.optim.AdamW(model.parameters(), lr=0.0004, weight_decay=0.1)

    def forward(model, batch):
        logits, loss = calc_loss_batch(batch["input"], batch["target"], model, device)
        return {"logits": logits}, loss

    def update(model, opt):
        opt.step()
        opt.zero_grad()

    return SimpleNamespace(
        generate_text_simple=generate_text_simple, model=model, optimizer=optimizer, forward=forward, update=update
    )
