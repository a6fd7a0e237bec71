"""Recurrent workloads against PyTorch eager: the layers, the cells in a Python loop, and a
seq2seq-with-attention training step over GRUs.

Everything in float32, one thread for both libraries (``torch.set_num_threads(1)``,
``tga.set_num_threads(1)``), timed round robin in one process (``common.interleave``),
median of several rounds; the figure is the ratio ours / PyTorch. The LSTM also has a
hand-written NumPy forward + backward, a floor for any NumPy-based engine.

    python benchmarks/run.py --only rnn
    python benchmarks/rnn.py --quick
"""

from __future__ import annotations

import argparse
from types import SimpleNamespace

import numpy as np
import tinygrad_attn.nn.functional as tga_F
from common import interleave, torch_or_none

import tinygrad_attn as tga
from tinygrad_attn import nn as tga_nn

#: (layer, seq, batch, hidden, num_layers): input size = hidden. The issue's figure first.
LAYER_SIZES = [
    ("LSTM", 7, 3, 16, 2),
    ("LSTM", 10, 2, 16, 1),
    ("LSTM", 20, 16, 64, 1),
    ("LSTM", 50, 32, 256, 1),
    ("GRU", 7, 3, 16, 2),
    ("GRU", 10, 2, 16, 1),
    ("GRU", 20, 16, 64, 1),
    ("GRU", 50, 32, 256, 1),
]
#: (cell, seq, batch, hidden)
CELL_SIZES = [("LSTMCell", 20, 8, 32), ("GRUCell", 20, 8, 32), ("GRUCell", 50, 32, 128)]
#: The tutorial's seq2seq: (src vocab, tgt vocab, emb, enc hidden, dec hidden, src len, tgt len, batch)
SEQ2SEQ = (40, 40, 32, 64, 64, 12, 12, 16)


def _threads(torch) -> None:
    torch.set_num_threads(1)
    tga.set_num_threads(1)


# -- the layers ------------------------------------------------------------------------------
def layer_step(lib, nn, kind, seq, batch, hidden, layers):
    """Forward + backward of ``nn.<kind>`` over ``(seq, batch, hidden)``, in ``lib`` (torch or tga)."""
    lib.manual_seed(0)
    m = getattr(nn, kind)(hidden, hidden, num_layers=layers)
    x = lib.tensor(np.random.default_rng(0).standard_normal((seq, batch, hidden)).astype(np.float32),
                   requires_grad=True)  # fmt: skip

    def step():
        m.zero_grad()
        x.grad = None
        out, _ = m(x)
        out.sum().backward()

    return step


def lstm_numpy(seq, batch, hidden):
    """One LSTM layer forward and backward by hand in NumPy (PyTorch's gate order i, f, g, o)."""
    rng = np.random.default_rng(0)
    k = 1 / np.sqrt(hidden)
    w_ih, w_hh = (rng.uniform(-k, k, (4 * hidden, hidden)).astype(np.float32) for _ in range(2))
    b = rng.uniform(-k, k, 4 * hidden).astype(np.float32)
    x = rng.standard_normal((seq, batch, hidden)).astype(np.float32)
    n = hidden

    def step():
        gi = (x.reshape(-1, hidden) @ w_ih.T + b).reshape(seq, batch, 4 * n)
        gates = np.empty_like(gi)
        hs, cs, tcs = (np.empty((seq, batch, n), np.float32) for _ in range(3))
        h = c = np.zeros((batch, n), np.float32)
        for t in range(seq):
            a = gi[t] + h @ w_hh.T
            u = np.empty_like(a)
            u[:, : 2 * n] = 1 / (1 + np.exp(-a[:, : 2 * n]))
            u[:, 2 * n : 3 * n] = np.tanh(a[:, 2 * n : 3 * n])
            u[:, 3 * n :] = 1 / (1 + np.exp(-a[:, 3 * n :]))
            c = u[:, n : 2 * n] * c + u[:, :n] * u[:, 2 * n : 3 * n]
            tcs[t] = np.tanh(c)
            h = u[:, 3 * n :] * tcs[t]
            gates[t], hs[t], cs[t] = u, h, c
        d = np.empty_like(gi)
        dh = np.zeros((batch, n), np.float32)
        dc = np.zeros((batch, n), np.float32)
        for t in reversed(range(seq)):
            u = gates[t]
            i, f, g, o = u[:, :n], u[:, n : 2 * n], u[:, 2 * n : 3 * n], u[:, 3 * n :]
            gh = 1.0 + dh
            dc = dc + gh * o * (1 - tcs[t] ** 2)
            c_prev = cs[t - 1] if t else np.zeros_like(dc)
            d[t, :, :n] = dc * g * i * (1 - i)
            d[t, :, n : 2 * n] = dc * c_prev * f * (1 - f)
            d[t, :, 2 * n : 3 * n] = dc * i * (1 - g * g)
            d[t, :, 3 * n :] = gh * tcs[t] * o * (1 - o)
            dc = dc * f
            dh = d[t] @ w_hh
        d2 = d.reshape(-1, 4 * n)
        h_prev = np.concatenate([np.zeros((1, batch, n), np.float32), hs[:-1]]).reshape(-1, n)
        return d2 @ w_ih, d2.T @ x.reshape(-1, hidden), d2.T @ h_prev, d2.sum(0)

    return step


def lstm_gemm_contenders(torch, seq, batch, hidden):
    """The matrix products of one LSTM layer's forward + backward alone, at its shapes, in
    NumPy (OpenBLAS) and in PyTorch: the projection of every step's input, a step's product
    with ``W_hh`` forward and backward (``seq`` times each), and the three products of the
    weights' and the input's gradients. What no implementation of the layer on either
    library can go under."""
    rng = np.random.default_rng(0)
    n = 4 * hidden
    x, w_ih, w_hh, h = (rng.standard_normal(s).astype(np.float32)
                        for s in ((seq * batch, hidden), (n, hidden), (n, hidden), (batch, hidden)))  # fmt: skip
    d = rng.standard_normal((batch, n)).astype(np.float32)
    d_all = rng.standard_normal((seq * batch, n)).astype(np.float32)

    def make(lib_matmul, *arrays):
        x, w_ih, w_hh, h, d, d_all = arrays

        def step():
            lib_matmul(x, w_ih.T)  # every step's input projection
            for _ in range(seq):
                lib_matmul(h, w_hh.T)  # forward step
            for _ in range(seq):
                lib_matmul(d, w_hh)  # backward step
            lib_matmul(d_all, w_ih)  # dL/dx
            lib_matmul(d_all.T, x)  # dL/dW_ih
            lib_matmul(d_all.T, x)  # dL/dW_hh (the states have x's shape here)

        return step

    arrays = (x, w_ih, w_hh, h, d, d_all)
    return {"ours": make(np.matmul, *arrays), "torch": make(torch.matmul, *[torch.from_numpy(a) for a in arrays])}


# -- the cells in a Python loop ----------------------------------------------------------------
def cell_loop(lib, nn, kind, seq, batch, hidden):
    """``seq`` calls of ``nn.<kind>``, one per step as tutorials write them, then backward."""
    lib.manual_seed(0)
    cell = getattr(nn, kind)(hidden, hidden)
    x = lib.tensor(np.random.default_rng(0).standard_normal((seq, batch, hidden)).astype(np.float32),
                   requires_grad=True)  # fmt: skip

    def step():
        cell.zero_grad()
        x.grad = None
        state, total = None, 0.0
        for t in range(seq):
            state = cell(x[t], state)
            total = total + (state[0] if kind == "LSTMCell" else state).sum()
        total.backward()

    return step


# -- a seq2seq-with-attention training step (the PyTorch tutorial's model, written once) ---------
def tutorial_seq2seq(torch, nn, F) -> SimpleNamespace:
    """Bahdanau attention over a bidirectional GRU encoder, as in the PyTorch seq2seq
    tutorials; ``torch`` is PyTorch or tinygrad_attn."""

    class Attention(nn.Module):
        def __init__(self, enc_hid, dec_hid):
            super().__init__()
            self.attn = nn.Linear(enc_hid * 2 + dec_hid, dec_hid)
            self.v = nn.Linear(dec_hid, 1, bias=False)

        def forward(self, hidden, enc_out):
            src_len = enc_out.shape[0]
            hidden = hidden.unsqueeze(1).repeat(1, src_len, 1)
            enc_out = enc_out.permute(1, 0, 2)
            energy = torch.tanh(self.attn(torch.cat((hidden, enc_out), dim=2)))
            return F.softmax(self.v(energy).squeeze(2), dim=1)

    class Encoder(nn.Module):
        def __init__(self, vocab, emb, enc_hid, dec_hid):
            super().__init__()
            self.embedding = nn.Embedding(vocab, emb)
            self.rnn = nn.GRU(emb, enc_hid, bidirectional=True)
            self.fc = nn.Linear(enc_hid * 2, dec_hid)

        def forward(self, src):
            outputs, hidden = self.rnn(self.embedding(src))
            return outputs, torch.tanh(self.fc(torch.cat((hidden[-2, :, :], hidden[-1, :, :]), dim=1)))

    class Decoder(nn.Module):
        def __init__(self, vocab, emb, enc_hid, dec_hid):
            super().__init__()
            self.vocab = vocab
            self.attention = Attention(enc_hid, dec_hid)
            self.embedding = nn.Embedding(vocab, emb)
            self.rnn = nn.GRU(enc_hid * 2 + emb, dec_hid)
            self.fc_out = nn.Linear(enc_hid * 2 + dec_hid + emb, vocab)

        def forward(self, input, hidden, enc_out):
            embedded = self.embedding(input.unsqueeze(0))
            a = self.attention(hidden, enc_out).unsqueeze(1)
            weighted = torch.bmm(a, enc_out.permute(1, 0, 2)).permute(1, 0, 2)
            output, hidden = self.rnn(torch.cat((embedded, weighted), dim=2), hidden.unsqueeze(0))
            pred = self.fc_out(torch.cat((output.squeeze(0), weighted.squeeze(0), embedded.squeeze(0)), dim=1))
            return pred, hidden.squeeze(0)

    class Seq2Seq(nn.Module):
        def __init__(self, src_vocab, tgt_vocab, emb, enc_hid, dec_hid):
            super().__init__()
            self.encoder = Encoder(src_vocab, emb, enc_hid, dec_hid)
            self.decoder = Decoder(tgt_vocab, emb, enc_hid, dec_hid)

        def forward(self, src, trg):
            enc_out, hidden = self.encoder(src)
            input, preds = trg[0, :], []
            for t in range(1, trg.shape[0]):
                pred, hidden = self.decoder(input, hidden, enc_out)
                preds.append(pred)
                input = trg[t]  # teacher forcing
            return torch.stack(preds)

    return SimpleNamespace(Seq2Seq=Seq2Seq)


def seq2seq_step(lib, nn, F, optim):
    """One training step (forward, cross-entropy, backward, Adam) of the tutorial's model."""
    src_v, tgt_v, emb, enc_hid, dec_hid, src_len, tgt_len, batch = SEQ2SEQ
    lib.manual_seed(0)
    model = tutorial_seq2seq(lib, nn, F).Seq2Seq(src_v, tgt_v, emb, enc_hid, dec_hid)
    opt = optim.Adam(model.parameters(), lr=1e-3)
    rng = np.random.default_rng(0)
    src = lib.tensor(rng.integers(0, src_v, (src_len, batch)))
    trg = lib.tensor(rng.integers(0, tgt_v, (tgt_len, batch)))
    target = trg[1:].reshape(-1)

    def step():
        out = model(src, trg)  # (tgt_len - 1, B, V)
        loss = F.cross_entropy(out.reshape(-1, tgt_v), target)
        opt.zero_grad()
        loss.backward()
        opt.step()

    return step


# -- the table -------------------------------------------------------------------------------
def main(quick: bool = False, match: str | None = None) -> list[tuple[str, float, float, float | None]]:
    """The table; ``match``: only the rows whose name contains it (``"T50 B32 H256"``)."""
    torch = torch_or_none()
    if torch is None:
        print("  (PyTorch is not installed: the recurrent benchmarks compare against it; skipped)")
        return []
    _threads(torch)
    rounds = 5 if quick else 9
    rows = []

    def report(name, contenders, inner):
        if match is not None and match not in name:
            return
        med = interleave(contenders, rounds=rounds, warm=2, inner=inner)
        np_s = med.get("numpy")
        rows.append((name, med["ours"], med["torch"], np_s))
        extra = f"   numpy {med['numpy'] * 1e3:8.3f} ms ({med['ours'] / med['numpy']:.2f}x)" if np_s else ""
        print(f"  {name:34s} ours {med['ours'] * 1e3:8.3f} ms   torch {med['torch'] * 1e3:8.3f} ms   "
              f"ours/torch {med['ours'] / med['torch']:5.2f}x{extra}", flush=True)  # fmt: skip

    print("  forward + backward of the layer (targets: ours/torch <= 1.2)")
    for kind, seq, batch, hidden, layers in LAYER_SIZES:
        c = {"ours": layer_step(tga, tga_nn, kind, seq, batch, hidden, layers),
             "torch": layer_step(torch, torch.nn, kind, seq, batch, hidden, layers)}  # fmt: skip
        if kind == "LSTM" and layers == 1:
            c["numpy"] = lstm_numpy(seq, batch, hidden)
        inner = 20 if seq * batch * hidden < 50_000 else 2
        report(f"nn.{kind} L{layers} T{seq} B{batch} H{hidden}", c, inner)
    print("  the LSTM's matrix products alone, NumPy (OpenBLAS) against PyTorch at the same shapes")
    for kind, seq, batch, hidden, layers in LAYER_SIZES:
        if kind == "LSTM" and layers == 1 and hidden >= 64:
            report(f"LSTM matmuls T{seq} B{batch} H{hidden}", lstm_gemm_contenders(torch, seq, batch, hidden), 2)
    print("  the cells in a Python loop, forward + backward (target: <= 1.5)")
    for kind, seq, batch, hidden in CELL_SIZES:
        c = {"ours": cell_loop(tga, tga_nn, kind, seq, batch, hidden),
             "torch": cell_loop(torch, torch.nn, kind, seq, batch, hidden)}  # fmt: skip
        report(f"nn.{kind} loop T{seq} B{batch} H{hidden}", c, 5)
    print("  seq2seq with Bahdanau attention over GRUs, one Adam training step (target: <= 1.3)")
    import torch.nn.functional as torch_F  # noqa: PLC0415 - optional contender

    c = {
        "ours": seq2seq_step(tga, tga_nn, tga_F, tga.optim),
        "torch": seq2seq_step(torch, torch.nn, torch_F, torch.optim),
    }
    src_v, tgt_v, emb, enc_hid, dec_hid, src_len, tgt_len, batch = SEQ2SEQ
    report(f"seq2seq Ts{src_len} Tt{tgt_len} B{batch} H{enc_hid}", c, 2)
    return rows


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="fewer rounds (rougher medians)")
    ap.add_argument("--match", help='only the rows whose name contains this, e.g. "LSTM L1 T50"')
    ap.add_argument("--clock", choices=("wall", "cpu"), default="wall", help="cpu: this process's CPU time")
    a = ap.parse_args()
    if a.clock == "cpu":
        import time  # noqa: PLC0415

        import common  # noqa: PLC0415

        common.CLOCK["fn"] = time.process_time
    main(quick=a.quick, match=a.match)
