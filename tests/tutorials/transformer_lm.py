"""A word-level language model on ``nn.TransformerEncoder``, after PyTorch's tutorial
*Language Modeling with nn.Transformer and torchtext*, re-written.

What it exercises: a sequence-first ``PositionalEncoding`` buffer ``(max_len, 1, d_model)``
filled through ``pe[:, 0, 0::2] = ...``, ``nn.TransformerEncoderLayer`` stacked by
``nn.TransformerEncoder``, a float causal mask from ``torch.triu(torch.ones(sz, sz) *
float("-inf"), diagonal=1)``, ``init_weights`` through ``.data.uniform_`` and
``.data.zero_()``, ``embedding(src) * math.sqrt(d_model)``, ``output.view(-1, ntokens)``
into ``nn.CrossEntropyLoss``, SGD at ``lr=5.0`` with ``StepLR(1.0, gamma=0.95)`` and
``clip_grad_norm_(model.parameters(), 0.5)``.
"""

from __future__ import annotations

import math
from types import SimpleNamespace


def data(rng):
    seq = rng.integers(0, 12, size=(7, 2))  # (seq_len, batch), as the tutorial's batchify gives
    return {"data": seq[:-1], "targets": seq[1:].reshape(-1)}


def tutorial(torch, nn, F):
    class PositionalEncoding(nn.Module):
        def __init__(self, d_model, dropout=0.1, max_len=5000):
            super().__init__()
            self.dropout = nn.Dropout(p=dropout)
            position = torch.arange(max_len).unsqueeze(1)
            div_term = torch.exp(torch.arange(0, d_model, 2) * (-math.log(10000.0) / d_model))
            pe = torch.zeros(max_len, 1, d_model)
            pe[:, 0, 0::2] = torch.sin(position * div_term)
            pe[:, 0, 1::2] = torch.cos(position * div_term)
            self.register_buffer("pe", pe)

        def forward(self, x):
            x = x + self.pe[: x.size(0)]  # x: (seq_len, batch, d_model)
            return self.dropout(x)

    class TransformerModel(nn.Module):
        def __init__(self, ntoken, d_model, nhead, d_hid, nlayers, dropout=0.5):
            super().__init__()
            self.model_type = "Transformer"
            self.pos_encoder = PositionalEncoding(d_model, dropout)
            encoder_layers = nn.TransformerEncoderLayer(d_model, nhead, d_hid, dropout)
            self.transformer_encoder = nn.TransformerEncoder(encoder_layers, nlayers)
            self.embedding = nn.Embedding(ntoken, d_model)
            self.d_model = d_model
            self.linear = nn.Linear(d_model, ntoken)
            self.init_weights()

        def init_weights(self):
            initrange = 0.1
            self.embedding.weight.data.uniform_(-initrange, initrange)
            self.linear.bias.data.zero_()
            self.linear.weight.data.uniform_(-initrange, initrange)

        def forward(self, src, src_mask=None):
            src = self.embedding(src) * math.sqrt(self.d_model)
            src = self.pos_encoder(src)
            output = self.transformer_encoder(src, src_mask)
            return self.linear(output)

    def generate_square_subsequent_mask(sz):
        """-inf above the diagonal, 0 on and below it."""
        return torch.triu(torch.ones(sz, sz) * float("-inf"), diagonal=1)

    ntokens = 12
    criterion = nn.CrossEntropyLoss()

    def model():
        return TransformerModel(ntokens, d_model=8, nhead=2, d_hid=16, nlayers=2, dropout=0.0)

    def optimizer(model):
        opt = torch.optim.SGD(model.parameters(), lr=5.0)
        return opt, torch.optim.lr_scheduler.StepLR(opt, 1.0, gamma=0.95)

    def forward(model, batch):
        data, targets = batch["data"], batch["targets"]
        src_mask = generate_square_subsequent_mask(data.size(0)).double()
        output = model(data, src_mask)
        output_flat = output.view(-1, ntokens)
        return {"output": output}, criterion(output_flat, targets)

    def update(model, state):
        opt, scheduler = state
        torch.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
        opt.step()
        opt.zero_grad()
        scheduler.step()

    return SimpleNamespace(model=model, optimizer=optimizer, forward=forward, update=update)
