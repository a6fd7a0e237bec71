"""Four ways to score a query against a key, and why the dot product is divided by sqrt(d).

    python examples/similarity_functions.py [--quick] [--device cuda] [--out DIR]

Attention turns scores into weights with softmax. Where the scores come from is a choice:

- dot:         q . k                         (Luong's "dot")
- scaled dot:  q . k / sqrt(d)               (Vaswani et al., the Transformer)
- general:     q . W k                       (Luong's "general", W learned)
- additive:    v . tanh(W_q q + W_k k)       (Bahdanau's "concat", a small learned MLP)

We compute all four on the same queries and keys and draw their weights side by side. Then
the reason for sqrt(d): for random q and k with unit-variance entries, q . k has variance d,
so as d grows the unscaled scores spread out, softmax puts (almost) all weight on one key,
its entropy falls to zero, and its gradient vanishes. Dividing by sqrt(d) keeps the variance
at 1 for every d.
"""

import math
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
from common import parse_args  # examples/common.py: the flags every example takes
from tqdm import tqdm

import tinygrad_attn as tga
from tinygrad_attn import Tensor
from tinygrad_attn.models import AdditiveAttention, DotAttention, GeneralAttention

args = parse_args(__doc__, "a few seconds: fewer dimensions and samples")

# -- 1. the same 6 queries and 8 keys, four score functions -------------------------------------
D, TQ, TK = 16, 6, 8
q = Tensor.randn(1, TQ, D)  # (B, Tq, d)
k = Tensor.randn(1, TK, D)  # (B, Tk, d)
v = Tensor.randn(1, TK, D)
scorers = {
    "dot  q.k": DotAttention(scaled=False),
    "scaled  q.k/sqrt(d)": DotAttention(scaled=True),
    "general  q.Wk": GeneralAttention(D, D),
    "additive  v.tanh(Wq+Uk)": AdditiveAttention(D, D, hidden_dim=32),
}
weights = {}
with tga.no_grad():
    for name, att in scorers.items():
        att.to(args.device)
        _, w = att(q, k, v)  # (1, Tq, Tk), each row sums to 1
        weights[name] = w.detach().numpy()[0]

print("the weights of query 0 under each score function (each row sums to 1):")
for name, w in weights.items():
    print(f"  {name:<26} {np.array2string(w[0], precision=2, suppress_small=True)}  sum={w[0].sum():.3f}")

fig, axes = plt.subplots(1, 4, figsize=(15, 3.6))
for ax, (name, w) in zip(axes, weights.items()):
    im = ax.imshow(w, cmap="viridis", vmin=0, vmax=1)
    ax.set_title(name, fontsize=10)
    ax.set_xlabel("key")
    ax.set_ylabel("query")
fig.colorbar(im, ax=axes, shrink=0.8, label="weight")
fig.suptitle(f"the same queries and keys (d={D}), four score functions (untrained W are random)")
path = os.path.join(args.out, "similarity_weights.png")
fig.savefig(path, dpi=120, bbox_inches="tight")
print(f"wrote {path}")

# -- 2. why sqrt(d): the entropy of softmax(q . k) as d grows --------------------------------------
dims = [2, 8, 32, 128, 512] if args.quick else [2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048]
n_queries, n_keys = (64, 32) if args.quick else (256, 32)
max_entropy = math.log(n_keys)


def entropy(w):
    return -(w * (w + 1e-30).log()).sum(-1).mean().item()  # nats, averaged over queries


rows = []
for d in tqdm(dims, desc="dimensions"):
    qd, kd = Tensor.randn(n_queries, d), Tensor.randn(n_keys, d)  # unit-variance entries
    scores = (qd @ kd.T).detach().numpy()  # (n_queries, n_keys), variance d
    probe = Tensor.randn(n_queries, n_keys)
    row = {"d": d, "score std": float(scores.std())}
    for name, scale in (("unscaled", 1.0), ("scaled", 1 / math.sqrt(d))):
        s = Tensor(scores * scale, requires_grad=True)
        w = s.softmax(-1)
        # how much a small change of the scores still moves the weights: d sum(w * probe) / d s
        (g,) = tga.grad((w * probe).sum(), [s])
        row[name] = (entropy(w), float(w.amax(-1).mean().item()), float(np.abs(g.detach().numpy()).mean()))
    rows.append(row)

print(f"\nsoftmax over {n_keys} random keys (uniform weights would have entropy {max_entropy:.2f} nats):")
print(f"{'d':>6} {'std(q.k)':>9} | {'unscaled: entropy':>17} {'max w':>6} {'|grad|':>8} | "
      f"{'scaled: entropy':>15} {'max w':>6} {'|grad|':>8}")  # fmt: skip
for r in rows:
    (eu, mu, gu), (es, ms, gs) = r["unscaled"], r["scaled"]
    print(f"{r['d']:>6} {r['score std']:>9.2f} | {eu:>17.3f} {mu:>6.2f} {gu:>8.1e} | {es:>15.3f} {ms:>6.2f} {gs:>8.1e}")
print("unscaled, the weights collapse onto one key and the gradient through softmax vanishes;")
print("scaled by 1/sqrt(d), the entropy and the gradient stay the same for every d.")

fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 3.8))
ds = [r["d"] for r in rows]
for name, style in (("unscaled", "o-"), ("scaled", "s-")):
    ax1.plot(ds, [r[name][0] for r in rows], style, label=f"{name}")
    ax2.plot(ds, [r[name][2] for r in rows], style, label=f"{name}")
ax1.axhline(max_entropy, color="grey", ls=":", label="uniform")
ax1.set_ylabel("entropy of the weights (nats)")
ax2.set_ylabel("mean |gradient| through softmax")
ax2.set_yscale("log")
for ax in (ax1, ax2):
    ax.set_xscale("log", base=2)
    ax.set_xlabel("dimension d")
    ax.legend()
fig.suptitle("softmax(q . k) saturates as d grows; softmax(q . k / sqrt(d)) does not")
fig.tight_layout()
path = os.path.join(args.out, "similarity_entropy.png")
fig.savefig(path, dpi=120)
print(f"wrote {path}")
last = rows[-1]
print(f"RESULT d={last['d']} entropy_unscaled={last['unscaled'][0]:.3f} entropy_scaled={last['scaled'][0]:.3f} "
      f"max_entropy={max_entropy:.3f}")  # fmt: skip
