"""One training step of a small GPT: forward, cross-entropy, backward, AdamW.

2 layers, d_model 128, 4 heads, context 64, batch 16, vocabulary 64, float32. There is
no hand-written NumPy baseline for this workload yet: the figure is ours (median seconds
per step), and, when ``import torch`` works, the same architecture in PyTorch eager
(pre-norm encoder layers with GELU, causal, tied head, AdamW) as a reference, both timed
round robin with the same pauses as the other benchmarks.

    python benchmarks/run.py --only gpt
"""

from __future__ import annotations

import numpy as np
from common import interleave, ms, torch_or_none

import tinygrad_attn as tga
from tinygrad_attn import Tensor

VOCAB, D_MODEL, HEADS, LAYERS, CONTEXT, BATCH = 64, 128, 4, 2, 64, 16


def parts():
    """``(GPT, AdamW)`` if both exist yet, else None."""
    from tinygrad_attn import models  # noqa: PLC0415

    gpt_cls = getattr(models, "GPT", None)
    try:
        from tinygrad_attn.optim import AdamW  # noqa: PLC0415
    except ImportError:
        return None
    return None if gpt_cls is None else (gpt_cls, AdamW)


def setup():
    gpt_cls, adamw = parts()
    tga.manual_seed(0)
    model = gpt_cls(VOCAB, D_MODEL, HEADS, LAYERS, CONTEXT)
    opt = adamw(model.parameters(), lr=3e-4)
    rng = np.random.default_rng(0)
    ids = rng.integers(0, VOCAB, (BATCH, CONTEXT + 1))
    x, y = Tensor(ids[:, :-1]), Tensor(ids[:, 1:])

    def step():
        logits = model(x)  # (B, T, vocab)
        loss = tga.functional.cross_entropy(logits, y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss

    return step


def torch_setup():
    """The same model and step in PyTorch eager (its own initialisation: only time is compared)."""
    torch = torch_or_none()
    nn = torch.nn
    torch.manual_seed(0)

    class TorchGPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.tok_emb, self.pos_emb = nn.Embedding(VOCAB, D_MODEL), nn.Embedding(CONTEXT, D_MODEL)
            self.blocks = nn.ModuleList(
                nn.TransformerEncoderLayer(
                    D_MODEL, HEADS, 4 * D_MODEL, dropout=0.0, activation="gelu", batch_first=True, norm_first=True
                )  # fmt: skip
                for _ in range(LAYERS)
            )
            self.ln_f = nn.LayerNorm(D_MODEL)
            self.head = nn.Linear(D_MODEL, VOCAB, bias=False)
            self.head.weight = self.tok_emb.weight
            self.register_buffer("mask", nn.Transformer.generate_square_subsequent_mask(CONTEXT))

        def forward(self, ids):
            h = self.tok_emb(ids) + self.pos_emb(torch.arange(ids.shape[1]))
            for blk in self.blocks:
                h = blk(h, src_mask=self.mask, is_causal=True)
            return self.head(self.ln_f(h))

    model = TorchGPT()
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4)
    rng = np.random.default_rng(0)
    ids = torch.tensor(rng.integers(0, VOCAB, (BATCH, CONTEXT + 1)))
    x, y = ids[:, :-1], ids[:, 1:]

    def step():
        loss = torch.nn.functional.cross_entropy(model(x).reshape(-1, VOCAB), y.reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss

    return step


def main(quick: bool = False) -> dict[str, float] | None:
    if parts() is None:
        print("  (GPT or AdamW does not exist yet in tinygrad_attn: skipped)")
        return None
    contenders = {"ours": setup(), "compiled": tga.compile(setup())}  # two models, same initialisation
    if torch_or_none() is not None:
        contenders["torch"] = torch_setup()
    med = interleave(contenders, rounds=5 if quick else 15, warm=2)
    print(f"  ours (no NumPy baseline yet): {ms(med['ours'])} per training step")
    print(f"  ours, tga.compile replay:     {ms(med['compiled'])} per training step "
          f"(eager / compiled {med['ours'] / med['compiled']:.2f}x; target: at least 1.5x)")  # fmt: skip
    if "torch" in med:
        print(f"  PyTorch eager, same model:    {ms(med['torch'])} per training step "
              f"(ours / torch {med['ours'] / med['torch']:.2f}x)")  # fmt: skip
    return med


if __name__ == "__main__":
    main()
