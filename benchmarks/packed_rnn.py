"""Recurrent layers over packed batches (sequences of different lengths): the cost of the
lengths mask against the same layer over the padded batch, and against PyTorch's packed
layer. Forward + backward, float32, one thread for both libraries, timed round robin in one
process (``common.interleave``), median of the rounds.

    python benchmarks/packed_rnn.py [--quick]
"""

from __future__ import annotations

import argparse

import numpy as np
from common import interleave, torch_or_none

import tinygrad_attn as tga
from tinygrad_attn import nn
from tinygrad_attn.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

#: (layer, seq, batch, hidden, bidirectional): input size = hidden
SIZES = [("GRU", 20, 16, 64, False), ("GRU", 50, 32, 64, True), ("LSTM", 20, 16, 64, False), ("LSTM", 50, 32, 64, True)]


def main(quick: bool = False) -> dict[tuple, dict[str, float]]:
    torch = torch_or_none()
    tga.set_num_threads(1)
    if torch is not None:
        torch.set_num_threads(1)
    rng = np.random.default_rng(0)
    table = {}
    for kind, t_len, batch, hidden, bidir in SIZES[:1] if quick else SIZES:
        lengths = sorted(rng.integers(max(1, t_len // 5), t_len + 1, batch).tolist(), reverse=True)
        lengths[0] = t_len
        a = rng.standard_normal((t_len, batch, hidden)).astype(np.float32)
        ours = getattr(nn, kind)(hidden, hidden, bidirectional=bidir)
        x = tga.Tensor(a, requires_grad=True)

        def padded(m=ours, x=x):
            out, _ = m(x)
            out.sum().backward()

        def packed(m=ours, x=x, lengths=lengths):
            out, _ = m(pack_padded_sequence(x, lengths))
            pad_packed_sequence(out)[0].sum().backward()

        contenders = {"padded": padded, "packed": packed}
        if torch is not None:
            theirs = getattr(torch.nn, kind)(hidden, hidden, bidirectional=bidir)
            tx = torch.tensor(a, requires_grad=True)

            def torch_packed(m=theirs, x=tx, lengths=lengths, tr=torch.nn.utils.rnn):
                out, _ = m(tr.pack_padded_sequence(x, lengths))
                tr.pad_packed_sequence(out)[0].sum().backward()

            contenders["torch packed"] = torch_packed
        times = interleave(contenders, rounds=3 if quick else 11)
        key = (kind, t_len, batch, hidden, bidir)
        table[key] = times
        line = f"{kind} T={t_len} B={batch} H={hidden} bi={int(bidir)}: packed {times['packed'] * 1e3:.1f} ms, "
        line += f"packed / padded {times['packed'] / times['padded']:.2f}"
        if "torch packed" in times:
            line += f", packed / PyTorch packed {times['packed'] / times['torch packed']:.2f}"
        print(line)
    return table


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="one size, three rounds")
    main(p.parse_args().quick)
