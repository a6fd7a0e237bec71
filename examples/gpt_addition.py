"""A decoder-only GPT learns to add from text such as ``123+045=8610``.

    python examples/gpt_addition.py [--quick] [--device cuda] [--out DIR]

The model only ever predicts the next character. It sees sums written as text and learns,
from examples alone, to carry. Two tricks make this learnable in a minute. The answer is
written with its digits *reversed* (123+45=168 is stored as ``...=8610``), so the digits come
out in the order a person adds them: ones first, then tens with the carry. And every number
is zero-padded to a fixed width, so the ones digits always sit at the same positions and
attention can find them by position alone. We report exact-match accuracy on sums never
seen in training and print a few samples, written back the human way.
"""

import os
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")  # many small matrices: one BLAS thread is faster

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
from common import parse_args  # examples/common.py: the flags every example takes
from tqdm import tqdm

import tinygrad_attn.functional as F
from tinygrad_attn import Tensor
from tinygrad_attn.models import GPT
from tinygrad_attn.optim import AdamW

args = parse_args(__doc__, "a few seconds: a tiny model, few steps")

DIGITS = 2 if args.quick else 3  # operands up to 99 (quick) or 999
STEPS, BATCH, D_MODEL, N_LAYERS = (600, 64, 48, 2) if args.quick else (1600, 64, 64, 2)
N_HEADS, LR = 4, 3e-3

# -- data: "123+045=" then the sum, reversed and padded: "8610" -------------------------------
VOCAB = "0123456789+="
STOI = {c: i for i, c in enumerate(VOCAB)}
PROMPT_LEN, ANSWER_LEN = 2 * DIGITS + 2, DIGITS + 1
rng = np.random.default_rng(args.seed)


def operand(n):
    """Short and long numbers alike: first a digit count, then a number of that length."""
    width = rng.integers(1, DIGITS + 1, n)
    return rng.integers(np.where(width == 1, 0, 10 ** (width - 1)), 10**width)


test_pairs = sorted({(int(a), int(b)) for a, b in zip(operand(1200), operand(1200))})[:1000]
held_out = set(test_pairs)


def encode(a, b):
    return f"{a:0{DIGITS}d}+{b:0{DIGITS}d}=" + f"{a + b:0{ANSWER_LEN}d}"[::-1]


def batch(n):
    pairs = [(int(a), int(b)) for a, b in zip(operand(n), operand(n))]
    ids = np.array([[STOI[c] for c in encode(a, b)] for a, b in pairs if (a, b) not in held_out])
    return ids[:, :-1], ids[:, PROMPT_LEN:]  # inputs, and the answer digits they must predict


# -- the model: tinygrad_attn.models.GPT (token + position embeddings, pre-norm causal blocks) ---
model = GPT(len(VOCAB), D_MODEL, N_HEADS, N_LAYERS, PROMPT_LEN + ANSWER_LEN, tie_weights=False).to(args.device)
opt = AdamW(model.parameters(), lr=LR, weight_decay=0.01)


def evaluate(pairs):
    """Greedy decoding of every prompt at once (they all have one length); exact matches."""
    prompts = np.array([[STOI[c] for c in encode(a, b)[:PROMPT_LEN]] for a, b in pairs])
    out = model.generate(prompts, ANSWER_LEN, greedy=True).detach().numpy()[:, PROMPT_LEN:]
    got = [int("".join(VOCAB[i] for i in row)[::-1]) for row in out]  # un-reverse the digits
    samples = [(a, b, g) for (a, b), g in zip(pairs, got)]
    return float(np.mean([g == a + b for a, b, g in samples])), samples


print(f"{DIGITS}-digit addition; {sum(p.numel() for p in model.parameters())} parameters, {STEPS} steps")
a, b = (123, 45) if DIGITS == 3 else (12, 5)
print(f"training text: {a}+{b}={a + b} is written {encode(a, b)!r}")
start, losses = time.perf_counter(), []
bar = tqdm(range(STEPS), desc="train", mininterval=1.0)
for step in bar:
    ids, targets = batch(BATCH)
    opt.lr = LR * min(1.0, (step + 1) / 100) * 0.5 * (1 + np.cos(np.pi * step / STEPS))  # warm up, cosine decay
    logits = model(ids)[:, PROMPT_LEN - 1 :]  # learn the answer only: the question is random
    loss = F.cross_entropy(logits, Tensor(targets, device=args.device))
    opt.zero_grad()
    loss.backward()
    opt.step()
    losses.append(loss.item())
    if step % 50 == 0:
        bar.set_postfix(loss=f"{np.mean(losses[-50:]):.3f}")
train_time = time.perf_counter() - start

model.eval()
acc, samples = evaluate(test_pairs)
print(f"training took {train_time:.1f}s; held-out sums answered exactly: {acc:.1%}")
for a, b, got in samples[:: max(1, len(samples) // 8)][:8]:
    print(f"  {a}+{b}={got}  {'ok' if got == a + b else f'wrong (is {a + b})'}")

fig, ax = plt.subplots(figsize=(5, 3))
ax.plot(np.convolve(losses, np.ones(20) / 20, mode="valid"))
ax.set_xlabel("step")
ax.set_ylabel("loss on the answer digits")
ax.set_yscale("log")
ax.set_title(f"GPT learns {DIGITS}-digit addition")
fig.tight_layout()
path = os.path.join(args.out, "gpt_addition_loss.png")
fig.savefig(path, dpi=120)
print(f"wrote {path}")
print(f"RESULT accuracy={acc:.3f} seconds={train_time:.1f}")
