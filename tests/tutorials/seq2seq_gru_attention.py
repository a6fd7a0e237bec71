"""Translation with a GRU encoder and a Bahdanau-attention decoder, after PyTorch's tutorial
*NLP From Scratch: Translation with a Sequence to Sequence Network and Attention*, re-written.

What it exercises: ``device = torch.device("cuda" if torch.cuda.is_available() else "cpu")``
used for every tensor the model makes, ``batch_first`` GRUs, additive attention with
``Wa``/``Ua``/``Va`` and ``torch.bmm``, a decoder that starts from
``torch.empty(b, 1, dtype=torch.long, device=device).fill_(SOS_token)`` and loops for
``MAX_LENGTH`` steps with teacher forcing (``target[:, i].unsqueeze(1)``) or greedy
``topk(1)`` and ``.detach()``, ``torch.cat`` of the steps, ``F.log_softmax``, ``nn.NLLLoss``,
and two Adam optimizers, one per network.
"""

from __future__ import annotations

from types import SimpleNamespace

SOS_token = 0
MAX_LENGTH = 5


def data(rng):
    return {"input": rng.integers(2, 9, size=(3, MAX_LENGTH)), "target": rng.integers(2, 7, size=(3, MAX_LENGTH))}


def tutorial(torch, nn, F):
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

    class EncoderRNN(nn.Module):
        def __init__(self, input_size, hidden_size, dropout_p=0.1):
            super().__init__()
            self.hidden_size = hidden_size
            self.embedding = nn.Embedding(input_size, hidden_size)
            self.gru = nn.GRU(hidden_size, hidden_size, batch_first=True)
            self.dropout = nn.Dropout(dropout_p)

        def forward(self, input):
            embedded = self.dropout(self.embedding(input))
            output, hidden = self.gru(embedded)
            return output, hidden

    class BahdanauAttention(nn.Module):
        def __init__(self, hidden_size):
            super().__init__()
            self.Wa = nn.Linear(hidden_size, hidden_size)
            self.Ua = nn.Linear(hidden_size, hidden_size)
            self.Va = nn.Linear(hidden_size, 1)

        def forward(self, query, keys):
            scores = self.Va(torch.tanh(self.Wa(query) + self.Ua(keys)))  # (B, T, 1)
            scores = scores.squeeze(2).unsqueeze(1)  # (B, 1, T)
            weights = F.softmax(scores, dim=-1)
            context = torch.bmm(weights, keys)
            return context, weights

    class AttnDecoderRNN(nn.Module):
        def __init__(self, hidden_size, output_size, dropout_p=0.1):
            super().__init__()
            self.embedding = nn.Embedding(output_size, hidden_size)
            self.attention = BahdanauAttention(hidden_size)
            self.gru = nn.GRU(2 * hidden_size, hidden_size, batch_first=True)
            self.out = nn.Linear(hidden_size, output_size)
            self.dropout = nn.Dropout(dropout_p)

        def forward(self, encoder_outputs, encoder_hidden, target_tensor=None):
            batch_size = encoder_outputs.size(0)
            decoder_input = torch.empty(batch_size, 1, dtype=torch.long, device=device).fill_(SOS_token)
            decoder_hidden = encoder_hidden
            decoder_outputs = []
            attentions = []
            for i in range(MAX_LENGTH):
                decoder_output, decoder_hidden, attn_weights = self.forward_step(
                    decoder_input, decoder_hidden, encoder_outputs
                )
                decoder_outputs.append(decoder_output)
                attentions.append(attn_weights)
                if target_tensor is not None:  # teacher forcing: the true token is the next input
                    decoder_input = target_tensor[:, i].unsqueeze(1)
                else:  # its own guess, cut from the graph
                    _, topi = decoder_output.topk(1)
                    decoder_input = topi.squeeze(-1).detach()
            decoder_outputs = torch.cat(decoder_outputs, dim=1)
            decoder_outputs = F.log_softmax(decoder_outputs, dim=-1)
            attentions = torch.cat(attentions, dim=1)
            return decoder_outputs, decoder_hidden, attentions

        def forward_step(self, input, hidden, encoder_outputs):
            embedded = self.dropout(self.embedding(input))
            query = hidden.permute(1, 0, 2)
            context, attn_weights = self.attention(query, encoder_outputs)
            input_gru = torch.cat((embedded, context), dim=2)
            output, hidden = self.gru(input_gru, hidden)
            output = self.out(output)
            return output, hidden, attn_weights

    hidden_size, in_words, out_words = 8, 9, 7
    criterion = nn.NLLLoss()

    def model():
        encoder = EncoderRNN(in_words, hidden_size, dropout_p=0.0).to(device)
        decoder = AttnDecoderRNN(hidden_size, out_words, dropout_p=0.0).to(device)
        return nn.ModuleDict({"encoder": encoder, "decoder": decoder})  # (the harness holds both as one)

    def optimizer(model, learning_rate=0.01):
        encoder_optimizer = torch.optim.Adam(model["encoder"].parameters(), lr=learning_rate)
        decoder_optimizer = torch.optim.Adam(model["decoder"].parameters(), lr=learning_rate)
        return encoder_optimizer, decoder_optimizer

    def forward(model, batch):
        input_tensor, target_tensor = batch["input"].to(device), batch["target"].to(device)
        encoder_outputs, encoder_hidden = model["encoder"](input_tensor)
        decoder_outputs, _, attentions = model["decoder"](encoder_outputs, encoder_hidden, target_tensor)
        loss = criterion(decoder_outputs.view(-1, decoder_outputs.size(-1)), target_tensor.view(-1))
        return {"decoder_outputs": decoder_outputs, "attentions": attentions}, loss

    def update(model, optimizers):
        encoder_optimizer, decoder_optimizer = optimizers
        encoder_optimizer.step()
        decoder_optimizer.step()
        encoder_optimizer.zero_grad()
        decoder_optimizer.zero_grad()

    return SimpleNamespace(device=device, model=model, optimizer=optimizer, forward=forward, update=update)
