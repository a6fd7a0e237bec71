"""Neural machine translation by jointly learning to align and translate, after
bentrevett/pytorch-seq2seq's third notebook, re-written.

What it exercises: a bidirectional ``nn.GRU`` encoder whose last forward and backward
states (``hidden[-2, :, :]``, ``hidden[-1, :, :]``) are joined by ``torch.cat`` and squashed
by ``torch.tanh(self.fc(...))``, additive attention over the sequence-first encoder
outputs (``hidden.unsqueeze(1).repeat(1, src_len, 1)``, ``permute(1, 0, 2)``), a decoder
step that mixes ``torch.bmm(a, encoder_outputs)`` into the GRU input and the prediction,
``outputs = torch.zeros(...).to(self.device)`` written at ``outputs[t]``, teacher forcing
from ``random.random()``, ``init_weights`` choosing ``nn.init.normal_(param.data, mean=0,
std=0.01)`` or ``nn.init.constant_(param.data, 0)`` by the parameter's name, Adam,
``nn.CrossEntropyLoss(ignore_index=pad)`` and ``clip_grad_norm_``.
"""

from __future__ import annotations

import random
from types import SimpleNamespace

TRG_PAD_IDX = 0


def data(rng):
    src = rng.integers(1, 9, size=(5, 2))
    trg = rng.integers(1, 8, size=(4, 2))
    trg[-1, 1] = TRG_PAD_IDX
    return {"src": src, "trg": trg}


def tutorial(torch, nn, F):
    class Encoder(nn.Module):
        def __init__(self, input_dim, emb_dim, enc_hid_dim, dec_hid_dim, dropout):
            super().__init__()
            self.embedding = nn.Embedding(input_dim, emb_dim)
            self.rnn = nn.GRU(emb_dim, enc_hid_dim, bidirectional=True)
            self.fc = nn.Linear(enc_hid_dim * 2, dec_hid_dim)
            self.dropout = nn.Dropout(dropout)

        def forward(self, src):
            embedded = self.dropout(self.embedding(src))  # [src len, batch, emb]
            outputs, hidden = self.rnn(embedded)
            # the last state of each direction, joined, starts the decoder
            hidden = torch.tanh(self.fc(torch.cat((hidden[-2, :, :], hidden[-1, :, :]), dim=1)))
            return outputs, hidden

    class Attention(nn.Module):
        def __init__(self, enc_hid_dim, dec_hid_dim):
            super().__init__()
            self.attn = nn.Linear((enc_hid_dim * 2) + dec_hid_dim, dec_hid_dim)
            self.v = nn.Linear(dec_hid_dim, 1, bias=False)

        def forward(self, hidden, encoder_outputs):
            batch_size = encoder_outputs.shape[1]
            src_len = encoder_outputs.shape[0]
            hidden = hidden.unsqueeze(1).repeat(1, src_len, 1)  # [batch, src len, dec hid]
            encoder_outputs = encoder_outputs.permute(1, 0, 2)
            energy = torch.tanh(self.attn(torch.cat((hidden, encoder_outputs), dim=2)))
            attention = self.v(energy).squeeze(2)
            assert attention.shape == (batch_size, src_len)
            return F.softmax(attention, dim=1)

    class Decoder(nn.Module):
        def __init__(self, output_dim, emb_dim, enc_hid_dim, dec_hid_dim, dropout, attention):
            super().__init__()
            self.output_dim = output_dim
            self.attention = attention
            self.embedding = nn.Embedding(output_dim, emb_dim)
            self.rnn = nn.GRU((enc_hid_dim * 2) + emb_dim, dec_hid_dim)
            self.fc_out = nn.Linear((enc_hid_dim * 2) + dec_hid_dim + emb_dim, output_dim)
            self.dropout = nn.Dropout(dropout)

        def forward(self, input, hidden, encoder_outputs):
            input = input.unsqueeze(0)
            embedded = self.dropout(self.embedding(input))
            a = self.attention(hidden, encoder_outputs).unsqueeze(1)  # [batch, 1, src len]
            encoder_outputs = encoder_outputs.permute(1, 0, 2)
            weighted = torch.bmm(a, encoder_outputs).permute(1, 0, 2)
            rnn_input = torch.cat((embedded, weighted), dim=2)
            output, hidden = self.rnn(rnn_input, hidden.unsqueeze(0))
            assert (output == hidden).all()  # one layer, one step: the output is the state
            embedded, output, weighted = embedded.squeeze(0), output.squeeze(0), weighted.squeeze(0)
            prediction = self.fc_out(torch.cat((output, weighted, embedded), dim=1))
            return prediction, hidden.squeeze(0)

    class Seq2Seq(nn.Module):
        def __init__(self, encoder, decoder, device):
            super().__init__()
            self.encoder = encoder
            self.decoder = decoder
            self.device = device

        def forward(self, src, trg, teacher_forcing_ratio=0.5):
            batch_size = src.shape[1]
            trg_len = trg.shape[0]
            trg_vocab_size = self.decoder.output_dim
            outputs = torch.zeros(trg_len, batch_size, trg_vocab_size).to(self.device)
            encoder_outputs, hidden = self.encoder(src)
            input = trg[0, :]
            for t in range(1, trg_len):
                output, hidden = self.decoder(input, hidden, encoder_outputs)
                outputs[t] = output
                teacher_force = random.random() < teacher_forcing_ratio
                top1 = output.argmax(1)
                input = trg[t] if teacher_force else top1
            return outputs

    def init_weights(m):
        for name, param in m.named_parameters():
            if "weight" in name:
                nn.init.normal_(param.data, mean=0, std=0.01)
            else:
                nn.init.constant_(param.data, 0)

    def count_parameters(model):
        return sum(p.numel() for p in model.parameters() if p.requires_grad)

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    criterion = nn.CrossEntropyLoss(ignore_index=TRG_PAD_IDX)

    def model():
        attn = Attention(5, 6)
        enc = Encoder(9, 4, 5, 6, 0.0)
        dec = Decoder(8, 4, 5, 6, 0.0, attn)
        m = Seq2Seq(enc, dec, device).to(device)
        m.apply(init_weights)
        return m

    def optimizer(model):
        return torch.optim.Adam(model.parameters())

    def forward(model, batch):
        src, trg = batch["src"], batch["trg"]
        output = model(src, trg)
        output_dim = output.shape[-1]
        loss = criterion(output[1:].view(-1, output_dim), trg[1:].view(-1))
        return {"output": output}, loss

    def update(model, opt):
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1)
        opt.step()
        opt.zero_grad()

    return SimpleNamespace(count_parameters=count_parameters, model=model, optimizer=optimizer, forward=forward,
                           update=update)  # fmt: skip
