"""An encoder-decoder Transformer learns to sort digits.

    python examples/transformer_sort.py [--quick] [--device cuda] [--out DIR]

"Attention Is All You Need" in miniature: sinusoidal positional encoding, an encoder, a
decoder with a causal mask (no peeking at later outputs) and cross-attention to the encoder,
a warm-up ("Noam") learning-rate schedule and label smoothing. The model reads ``7 3 9 0 3 ...`` and writes ``0 3 3 7 9 ...``
one token at a time (greedy decoding); we report the share of held-out sequences it sorts
exactly and draw the decoder's cross-attention: each output digit looks at where it came from.
"""

import math
import os
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")  # many small matrices: one BLAS thread is faster

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
from common import parse_args  # examples/common.py: the flags every example takes
from tqdm import tqdm

import tinygrad_attn as tga
import tinygrad_attn.functional as F
from tinygrad_attn import Tensor
from tinygrad_attn.models import EncoderDecoder
from tinygrad_attn.optim import Adam, NoamSchedule

args = parse_args(__doc__, "a few seconds: a tiny model, few steps")

LENGTH, DIGITS = 8, 10
BOS = DIGITS  # the decoder starts from this token
STEPS, BATCH, D_MODEL, N_LAYERS = (300, 32, 32, 1) if args.quick else (2000, 64, 64, 2)
N_HEADS, D_FF, WARMUP, SMOOTHING = 4, 4 * D_MODEL, 100 if args.quick else 200, 0.1

# -- data: random digit strings; held-out ones never appear in training -------------------
rng = np.random.default_rng(args.seed)
test_x = rng.integers(0, DIGITS, (500, LENGTH))
held_out = {tuple(r) for r in test_x}


def batch(n):
    x = rng.integers(0, DIGITS, (n, LENGTH))
    keep = np.array([tuple(r) not in held_out for r in x])
    x = x[keep]
    return x, np.sort(x, axis=1)


# -- the model: tinygrad_attn.models.EncoderDecoder, the paper's post-norm encoder-decoder ----------
# src ids -> embeddings * sqrt(d) + sinusoidal positions -> encoder (self-attention, feed-forward)
# -> memory; tgt ids -> decoder (causal self-attention, cross-attention to memory, feed-forward) -> logits
model = EncoderDecoder(D_MODEL, N_HEADS, N_LAYERS, N_LAYERS, D_FF, dropout=0.0, src_vocab=DIGITS,
                       tgt_vocab=DIGITS + 1, max_len=LENGTH + 1).to(args.device)  # fmt: skip
opt = Adam(model.parameters(), betas=(0.9, 0.98), eps=1e-9)
schedule = NoamSchedule(opt, d_model=D_MODEL, warmup=WARMUP)  # lr rises for WARMUP steps, then decays as 1/sqrt(step)


@tga.no_grad()
def greedy(src):
    """Write the answer one digit at a time, each time feeding back what was written."""
    memory = model.encode(src)
    out = np.full((len(src), 1), BOS)
    for _ in range(LENGTH):
        logits = model.decode(out, memory)  # (B, t, DIGITS + 1)
        out = np.concatenate([out, logits[:, -1].argmax(-1).detach().numpy()[:, None]], axis=1)
    return out[:, 1:]


@tga.no_grad()
def cross_attention(src, tgt_in):
    """Open up the last decoder layer to read its cross-attention weights (B, H, T_out, T_in)."""
    memory = model.encode(src)
    y = model.pos(model.tgt_embed(tgt_in) * math.sqrt(D_MODEL))
    *first, last = model.decoder.layers
    for layer in first:
        y = layer(y, memory, is_causal=True)
    y = last.norm1(y + last.self_attn(y, is_causal=True))
    return last.cross_attn(y, memory, memory, need_weights=True)[1].detach().numpy()


print(f"sorting {LENGTH} digits; {sum(p.numel() for p in model.parameters())} parameters, {STEPS} steps")
start = time.perf_counter()
bar = tqdm(range(1, STEPS + 1), desc="train", mininterval=1.0)
for step in bar:
    src, tgt = batch(BATCH)
    tgt_in = np.concatenate([np.full((len(src), 1), BOS), tgt[:, :-1]], axis=1)  # teacher forcing
    logits = model(src, tgt_in)
    loss = F.cross_entropy(logits, Tensor(tgt, device=args.device), label_smoothing=SMOOTHING)
    opt.zero_grad()
    loss.backward()
    opt.step()
    schedule.step()
    if step % 50 == 0:
        bar.set_postfix(loss=f"{loss.item():.3f}", lr=f"{opt.lr:.2e}")
train_time = time.perf_counter() - start

model.eval()
pred = greedy(test_x)
target = np.sort(test_x, axis=1)
acc = float((pred == target).all(1).mean())
print(f"training took {train_time:.1f}s; held-out sequences sorted exactly: {acc:.1%}")
for i in range(3):
    print(f"  {' '.join(map(str, test_x[i]))}  ->  {' '.join(map(str, pred[i]))}")

# the cross-attention of the last decoder layer, averaged over heads, for one example
weights = cross_attention(test_x[:1], np.concatenate([[[BOS]], pred[:1, :-1]], axis=1))
fig, ax = plt.subplots(figsize=(4.5, 4))
ax.imshow(weights[0].mean(0), cmap="viridis")
ax.set_xticks(range(LENGTH), [str(d) for d in test_x[0]])
ax.set_yticks(range(LENGTH), [str(d) for d in pred[0]])
ax.set_xlabel("input digit")
ax.set_ylabel("output digit")
ax.set_title("decoder cross-attention")
fig.tight_layout()
fig.savefig(os.path.join(args.out, "sort_cross_attention.png"), dpi=120)
print(f"wrote {os.path.join(args.out, 'sort_cross_attention.png')}")
print(f"RESULT accuracy={acc:.3f} seconds={train_time:.1f}")
