"""A Luong-attention GRU decoder, after PyTorch's *Chatbot Tutorial*, re-written.

What it exercises: a bidirectional GRU encoder whose two directions are summed
(``outputs[:, :, :h] + outputs[:, :, h:]``), the three Luong scores ``dot``, ``general``
and ``concat`` (``self.v = nn.Parameter(torch.FloatTensor(hidden_size))``,
``hidden.expand(...)``, ``torch.sum(self.v * energy, dim=2)``), ``attn_energies.t()``,
``F.softmax(..., dim=1).unsqueeze(1)``, ``attn_weights.bmm(encoder_outputs.transpose(0,
1))``, a decoder started from ``torch.LongTensor([[SOS_token for _ in range(batch)]])``
and fed ``target_variable[t].view(1, -1)``, the masked loss ``-torch.log(torch.gather(inp,
1, target.view(-1, 1)).squeeze(1))`` reduced by ``masked_select(mask).mean()``, two
optimizers and ``nn.utils.clip_grad_norm_`` on each network.

One change: the tutorial packs the padded batch (``pack_padded_sequence``) before its
encoder; here every sentence has the full length, so the encoder runs on the padded
batch directly.
"""

from __future__ import annotations

from types import SimpleNamespace

SOS_token = 1


def data(rng):
    target = rng.integers(2, 9, size=(4, 3))
    mask = rng.random((4, 3)) < 0.8
    mask[0] = True
    return {"input": rng.integers(2, 9, size=(5, 3)), "target": target, "mask": mask}


def tutorial(torch, nn, F):
    class EncoderRNN(nn.Module):
        def __init__(self, hidden_size, embedding, n_layers=1, dropout=0):
            super().__init__()
            self.n_layers = n_layers
            self.hidden_size = hidden_size
            self.embedding = embedding
            self.gru = nn.GRU(
                hidden_size, hidden_size, n_layers, dropout=(0 if n_layers == 1 else dropout), bidirectional=True
            )

        def forward(self, input_seq, hidden=None):
            embedded = self.embedding(input_seq)
            outputs, hidden = self.gru(embedded, hidden)
            outputs = outputs[:, :, : self.hidden_size] + outputs[:, :, self.hidden_size :]  # both directions
            return outputs, hidden

    class Attn(nn.Module):
        def __init__(self, method, hidden_size):
            super().__init__()
            self.method = method
            if self.method not in ["dot", "general", "concat"]:
                raise ValueError(self.method, "is not an appropriate attention method.")
            self.hidden_size = hidden_size
            if self.method == "general":
                self.attn = nn.Linear(self.hidden_size, hidden_size)
            elif self.method == "concat":
                self.attn = nn.Linear(self.hidden_size * 2, hidden_size)
                self.v = nn.Parameter(torch.FloatTensor(hidden_size))

        def dot_score(self, hidden, encoder_output):
            return torch.sum(hidden * encoder_output, dim=2)

        def general_score(self, hidden, encoder_output):
            energy = self.attn(encoder_output)
            return torch.sum(hidden * energy, dim=2)

        def concat_score(self, hidden, encoder_output):
            energy = self.attn(torch.cat((hidden.expand(encoder_output.size(0), -1, -1), encoder_output), 2)).tanh()
            return torch.sum(self.v * energy, dim=2)

        def forward(self, hidden, encoder_outputs):
            if self.method == "general":
                attn_energies = self.general_score(hidden, encoder_outputs)
            elif self.method == "concat":
                attn_energies = self.concat_score(hidden, encoder_outputs)
            else:
                attn_energies = self.dot_score(hidden, encoder_outputs)
            attn_energies = attn_energies.t()  # (batch, max_length)
            return F.softmax(attn_energies, dim=1).unsqueeze(1)

    class LuongAttnDecoderRNN(nn.Module):
        def __init__(self, attn_model, embedding, hidden_size, output_size, n_layers=1, dropout=0.1):
            super().__init__()
            self.attn_model = attn_model
            self.hidden_size = hidden_size
            self.output_size = output_size
            self.n_layers = n_layers
            self.dropout = dropout
            self.embedding = embedding
            self.embedding_dropout = nn.Dropout(dropout)
            self.gru = nn.GRU(hidden_size, hidden_size, n_layers, dropout=(0 if n_layers == 1 else dropout))
            self.concat = nn.Linear(hidden_size * 2, hidden_size)
            self.out = nn.Linear(hidden_size, output_size)
            self.attn = Attn(attn_model, hidden_size)

        def forward(self, input_step, last_hidden, encoder_outputs):
            embedded = self.embedding_dropout(self.embedding(input_step))
            rnn_output, hidden = self.gru(embedded, last_hidden)
            attn_weights = self.attn(rnn_output, encoder_outputs)
            context = attn_weights.bmm(encoder_outputs.transpose(0, 1))  # (batch, 1, hidden)
            rnn_output = rnn_output.squeeze(0)
            context = context.squeeze(1)
            concat_input = torch.cat((rnn_output, context), 1)
            concat_output = torch.tanh(self.concat(concat_input))
            output = self.out(concat_output)
            output = F.softmax(output, dim=1)
            return output, hidden

    def maskNLLLoss(inp, target, mask):  # noqa: N802 - the tutorial's name
        nTotal = mask.sum()  # noqa: N806
        crossEntropy = -torch.log(torch.gather(inp, 1, target.view(-1, 1)).squeeze(1))  # noqa: N806
        loss = crossEntropy.masked_select(mask).mean()
        return loss, nTotal.item()

    class Chatbot(nn.Module):
        """The harness's one module: the tutorial keeps the two networks side by side."""

        def __init__(self, attn_model):
            super().__init__()
            embedding = nn.Embedding(9, 6)
            self.encoder = EncoderRNN(6, embedding, 2, 0.0)
            self.decoder = LuongAttnDecoderRNN(attn_model, embedding, 6, 9, 2, 0.0)

    device = torch.device("cpu")
    clip, learning_rate, decoder_learning_ratio = 50.0, 0.01, 5.0

    def model(attn_model="concat"):
        return Chatbot(attn_model).to(device)

    def optimizer(model):
        encoder_optimizer = torch.optim.Adam(model.encoder.parameters(), lr=learning_rate)
        decoder_optimizer = torch.optim.Adam(model.decoder.parameters(), lr=learning_rate * decoder_learning_ratio)
        return encoder_optimizer, decoder_optimizer

    def forward(model, batch):
        input_variable, target_variable, mask = batch["input"], batch["target"], batch["mask"]
        max_target_len, batch_size = target_variable.shape
        loss = 0
        print_losses = []
        encoder_outputs, encoder_hidden = model.encoder(input_variable)
        decoder_input = torch.LongTensor([[SOS_token for _ in range(batch_size)]])
        decoder_input = decoder_input.to(device)
        decoder_hidden = encoder_hidden[: model.decoder.n_layers]
        outputs = []
        for t in range(max_target_len):  # teacher forcing on every step
            decoder_output, decoder_hidden = model.decoder(decoder_input, decoder_hidden, encoder_outputs)
            decoder_input = target_variable[t].view(1, -1)
            mask_loss, nTotal = maskNLLLoss(decoder_output, target_variable[t], mask[t])  # noqa: N806
            loss += mask_loss
            print_losses.append(mask_loss.item() * nTotal)
            outputs.append(decoder_output)
        return {"outputs": torch.stack(outputs)}, loss

    def update(model, optimizers):
        encoder_optimizer, decoder_optimizer = optimizers
        _ = nn.utils.clip_grad_norm_(model.encoder.parameters(), clip)
        _ = nn.utils.clip_grad_norm_(model.decoder.parameters(), clip)
        encoder_optimizer.step()
        decoder_optimizer.step()
        encoder_optimizer.zero_grad()
        decoder_optimizer.zero_grad()

    return SimpleNamespace(model=model, optimizer=optimizer, forward=forward, update=update)
