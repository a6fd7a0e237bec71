"""Self-attention from scratch, in four steps, on one sentence.

    python examples/self_attention_from_scratch.py [--quick] [--device cuda] [--out DIR]

"Bark is very cute and he is a dog." Who is "he"? Self-attention lets every word look at
every other word and take in what it finds, weighted by how relevant it is.

1. No trained weights. Score each pair of words by the dot product of their embeddings,
   turn each row of scores into weights with softmax (each row sums to 1), and replace each
   word by the weighted sum of all the embeddings.
2. Trainable query, key and value matrices. The word asking (query), the word being looked
   at (key) and what is taken from it (value) each get their own learned view of the
   embedding. We train the query and key matrices a little so that "he" looks at "Bark".
3. Scaled: scores divided by sqrt(d_k), so softmax stays soft as d_k grows.
4. Multi-head: several attentions side by side, each with its own matrices, each free to
   look for something else; their outputs are concatenated and mixed by one more matrix.

Each step prints the attention weights of "he" and writes the graph of its computation.
"""

import math
import os

import numpy as np
from common import draw, parse_args  # examples/common.py: the flags every example takes
from tqdm import tqdm

import tinygrad_attn as tga
from tinygrad_attn import Tensor
from tinygrad_attn.optim import Adam

args = parse_args(__doc__, "a few seconds: fewer training steps")

words = "Bark is very cute and he is a dog".split()
HE, BARK = words.index("he"), words.index("Bark")
# Hand-made embeddings, one feature per column, so the numbers can be read:
#            animal  name  verb  describes  function-word
table = {
    "Bark": [1.0, 1.0, 0.0, 0.0, 0.0],
    "is": [0.0, 0.0, 1.0, 0.0, 0.3],
    "very": [0.0, 0.0, 0.0, 1.0, 0.3],
    "cute": [0.2, 0.0, 0.0, 1.0, 0.0],
    "and": [0.0, 0.0, 0.0, 0.0, 1.0],
    "he": [1.0, 0.5, 0.0, 0.0, 0.3],
    "a": [0.0, 0.0, 0.0, 0.0, 1.0],
    "dog": [1.0, 0.0, 0.0, 0.3, 0.0],
}
embeddings = 2.0 * np.array([table[w] for w in words], np.float32)  # doubled: a sharper softmax
x = Tensor(embeddings, name="embeddings", device=args.device)  # (T, d) = (9, 5)
T, D = x.shape


def show(title, weights):
    """Print the weights of "he" over the sentence, largest first."""
    row = weights.detach().numpy()[HE]
    order = np.argsort(-row)
    print(f"{title}: 'he' attends to " + ", ".join(f"{words[i]} {row[i]:.2f}" for i in order[:4]) + ", ...")
    return row


# -- 1. no trained weights: softmax(X X^T) X ------------------------------------------------------
print("1. no trained weights")
with tga.decompose():  # softmax drawn as its primitive ops
    scores = x @ x.T  # (T, T): how similar each pair of words is
    weights = scores.softmax(-1)  # each row sums to 1
    y = weights @ x  # (T, d): each word becomes a blend of the words it attends to
y.name = "output"
np.set_printoptions(precision=2, suppress=True, linewidth=120)
print("   weight matrix (row = the word attending, column = the word attended to):")
print("   " + " ".join(f"{w:>5}" for w in words))
for w, row in zip(words, weights.detach().numpy()):
    print(f"   {' '.join(f'{v:5.2f}' for v in row)}   <- {w}")
print(f"   every row sums to 1: {np.allclose(weights.detach().numpy().sum(-1), 1.0)}")
show("   softmax of similarities", weights)
print(f"   the new 'he' = weighted sum of embeddings = {y.detach().numpy()[HE]}")
draw(y, os.path.join(args.out, "stage1_no_weights.svg"))

# -- 2. trainable query, key and value matrices ---------------------------------------------------
print("2. trainable query, key and value matrices (d_k = 4)")
D_K = 4
rng = np.random.default_rng(args.seed)


def matrix(rows, cols, name):
    """A learnable matrix, random with variance 1/rows, so x @ W keeps the scale of x."""
    w = rng.standard_normal((rows, cols)) / math.sqrt(rows)
    return Tensor(w, dtype=np.float32, requires_grad=True, name=name, device=args.device)


Wq, Wk, Wv = matrix(D, D_K, "W_query"), matrix(D, D_K, "W_key"), matrix(D, D_K, "W_value")


def attention(x, Wq, Wk, Wv, scale=1.0):
    q, k, v = x @ Wq, x @ Wk, x @ Wv  # (T, d_k) each: three views of every word
    w = ((q @ k.T) * scale).softmax(-1)  # (T, T)
    return w @ v, w


y, w = attention(x, Wq, Wk, Wv)
before = show("   random matrices", w)[BARK]
draw(y, os.path.join(args.out, "stage2_query_key_value.svg"))
# Train Wq and Wk so that "he" puts its weight on "Bark" (what a coreference model learns).
opt = Adam([Wq, Wk], lr=0.05)
for _ in tqdm(range(10 if args.quick else 40), desc="teach 'he' to find 'Bark'"):
    _, w = attention(x, Wq, Wk, Wv)
    loss = -w[HE, BARK].log()
    opt.zero_grad()
    loss.backward()
    opt.step()
_, w = attention(x, Wq, Wk, Wv)
after = show("   trained", w)[BARK]
print(f"   weight of he -> Bark: {before:.2f} before training, {after:.2f} after")

# -- 3. scaled: divide the scores by sqrt(d_k) ------------------------------------------------------
print("3. scaled dot-product attention, softmax(q k^T / sqrt(d_k)) v")
Wq64, Wk64, Wv64 = (matrix(D, 64, n) for n in ("W_query", "W_key", "W_value"))
_, w_raw = attention(x, Wq64, Wk64, Wv64)
y, w_scaled = attention(x, Wq64, Wk64, Wv64, scale=1 / math.sqrt(64))
show("   d_k = 64, unscaled", w_raw)
show("   d_k = 64, scaled  ", w_scaled)


def entropy(w):
    return float(-(w * (w + 1e-30).log()).sum(-1).mean().item())


print(f"   entropy of the weights: unscaled {entropy(w_raw):.2f}, scaled {entropy(w_scaled):.2f} nats "
      f"(uniform: {math.log(T):.2f}); q.k sums d_k products, so unscaled scores grow with d_k")  # fmt: skip
draw(y, os.path.join(args.out, "stage3_scaled.svg"))

# -- 4. multi-head: several attentions, concatenated and mixed -----------------------------------------
H = 2
print(f"4. multi-head attention, {H} heads of d_k = {D_K}")
heads = [[matrix(D, D_K, f"W_{n}{h}") for n in ("query", "key", "value")] for h in range(H)]
Wo = matrix(H * D_K, D, "W_out")
outs = []
for h, (q_w, k_w, v_w) in enumerate(heads):
    out_h, w_h = attention(x, q_w, k_w, v_w, scale=1 / math.sqrt(D_K))
    show(f"   head {h}", w_h)
    outs.append(out_h)
y = tga.cat(outs, axis=-1) @ Wo  # (T, H * d_k) -> (T, d)
y.name = "output"
print(f"   output shape {y.shape}: one vector per word again, now mixing {H} ways of looking")
last = draw(y, os.path.join(args.out, "stage4_multi_head.svg"))
print(f"wrote the graph of each stage to {args.out}/stage*{os.path.splitext(last)[1]}")
print(f"RESULT row_sums_to_one={int(np.allclose(weights.detach().numpy().sum(-1), 1.0))} he_to_bark_before={before:.3f} "
      f"he_to_bark_after={after:.3f}")  # fmt: skip
