"""Sequence to sequence with LSTMs, after bentrevett/pytorch-seq2seq's first notebook
(*Sequence to Sequence Learning with Neural Networks*), re-written.

What it exercises: a multi-layer ``nn.LSTM`` encoder whose ``(hidden, cell)`` start the
decoder, a decoder fed one token at a time (``input.unsqueeze(0)``), a ``Seq2Seq`` that
preallocates ``outputs = torch.zeros(trg_len, batch, vocab).to(self.device)`` and writes
``outputs[t] = output``, teacher forcing drawn from ``random.random()``, ``argmax(1)``,
``model.apply(init_weights)`` with ``nn.init.uniform_(param.data, -0.08, 0.08)``,
``nn.CrossEntropyLoss(ignore_index=pad)`` on ``output[1:].view(-1, output_dim)``,
``clip_grad_norm_`` and Adam.
"""

from __future__ import annotations

import random
from types import SimpleNamespace

TRG_PAD_IDX = 1


def data(rng):
    src = rng.integers(2, 10, size=(6, 3))
    trg = rng.integers(2, 8, size=(5, 3))
    trg[-1, 0] = TRG_PAD_IDX
    return {"src": src, "trg": trg}


def tutorial(torch, nn, F):
    class Encoder(nn.Module):
        def __init__(self, input_dim, emb_dim, hid_dim, n_layers, dropout):
            super().__init__()
            self.hid_dim = hid_dim
            self.n_layers = n_layers
            self.embedding = nn.Embedding(input_dim, emb_dim)
            self.rnn = nn.LSTM(emb_dim, hid_dim, n_layers, dropout=dropout)
            self.dropout = nn.Dropout(dropout)

        def forward(self, src):
            embedded = self.dropout(self.embedding(src))  # [src len, batch, emb]
            outputs, (hidden, cell) = self.rnn(embedded)
            return hidden, cell

    class Decoder(nn.Module):
        def __init__(self, output_dim, emb_dim, hid_dim, n_layers, dropout):
            super().__init__()
            self.output_dim = output_dim
            self.hid_dim = hid_dim
            self.n_layers = n_layers
            self.embedding = nn.Embedding(output_dim, emb_dim)
            self.rnn = nn.LSTM(emb_dim, hid_dim, n_layers, dropout=dropout)
            self.fc_out = nn.Linear(hid_dim, output_dim)
            self.dropout = nn.Dropout(dropout)

        def forward(self, input, hidden, cell):
            input = input.unsqueeze(0)  # one time step: [1, batch]
            embedded = self.dropout(self.embedding(input))
            output, (hidden, cell) = self.rnn(embedded, (hidden, cell))
            prediction = self.fc_out(output.squeeze(0))
            return prediction, hidden, cell

    class Seq2Seq(nn.Module):
        def __init__(self, encoder, decoder, device):
            super().__init__()
            self.encoder = encoder
            self.decoder = decoder
            self.device = device
            assert encoder.hid_dim == decoder.hid_dim, "hidden sizes of encoder and decoder must match"
            assert encoder.n_layers == decoder.n_layers, "encoder and decoder need as many layers"

        def forward(self, src, trg, teacher_forcing_ratio=0.5):
            batch_size = trg.shape[1]
            trg_len = trg.shape[0]
            trg_vocab_size = self.decoder.output_dim
            outputs = torch.zeros(trg_len, batch_size, trg_vocab_size).to(self.device)
            hidden, cell = self.encoder(src)
            input = trg[0, :]
            for t in range(1, trg_len):
                output, hidden, cell = self.decoder(input, hidden, cell)
                outputs[t] = output
                teacher_force = random.random() < teacher_forcing_ratio
                top1 = output.argmax(1)
                input = trg[t] if teacher_force else top1
            return outputs

    def init_weights(m):
        for _name, param in m.named_parameters():
            nn.init.uniform_(param.data, -0.08, 0.08)

    device = torch.device("cpu")
    criterion = nn.CrossEntropyLoss(ignore_index=TRG_PAD_IDX)
    clip = 1

    def model():
        enc = Encoder(10, 4, 6, 2, 0.0)
        dec = Decoder(8, 4, 6, 2, 0.0)
        m = Seq2Seq(enc, dec, device).to(device)
        m.apply(init_weights)
        return m

    def optimizer(model):
        return torch.optim.Adam(model.parameters())

    def forward(model, batch):
        src, trg = batch["src"], batch["trg"]
        output = model(src, trg)
        output_dim = output.shape[-1]
        flat = output[1:].view(-1, output_dim)
        loss = criterion(flat, trg[1:].view(-1))
        return {"output": output}, loss

    def update(model, opt):
        torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
        opt.step()
        opt.zero_grad()

    return SimpleNamespace(model=model, optimizer=optimizer, forward=forward, update=update)
