"""A tour of tinygrad_attn in one short script: build, check, train and draw attention.

    python examples/tour.py [--quick] [--device cuda] [--out DIR]

1. Build multi-head attention from primitive tensor ops: matmul, reshape, transpose, softmax.
2. Check its gradients: against finite differences in float64 (``tga.gradcheck``), and
   against the library's ``BatchFirstAttention`` module given the same weights.
3. Train it a little on a toy task, and watch the loss fall.
4. Draw its forward and backward graphs: ``tour_forward.svg`` and ``tour_backward.svg``.
"""

import math
import os

import numpy as np
from common import draw, parse_args  # examples/common.py: the flags every example takes
from tqdm import tqdm

import tinygrad_attn as tga
import tinygrad_attn.functional as F
from tinygrad_attn import Tensor
from tinygrad_attn.models import BatchFirstAttention, Parameter
from tinygrad_attn.optim import Adam

args = parse_args(__doc__, "a few seconds: fewer training steps")


# -- 1. multi-head attention from primitives ------------------------------------------------------
def multi_head_attention(x, Wq, Wk, Wv, Wo, n_heads):
    """x (B, T, d) -> (B, T, d). Each head attends in its own d/n_heads-dimensional subspace."""
    B, T, d = x.shape
    hd = d // n_heads

    def heads(t):  # (B, T, d) -> (B, n_heads, T, hd)
        return t.reshape(B, T, n_heads, hd).transpose(1, 2)

    q, k, v = heads(x @ Wq), heads(x @ Wk), heads(x @ Wv)
    weights = (q @ k.mT / math.sqrt(hd)).softmax(-1)  # (B, n_heads, T, T), rows sum to 1
    out = (weights @ v).transpose(1, 2).reshape(B, T, d)  # heads side by side again
    return out @ Wo


def params(d, rng):
    """W_q, W_k, W_v and W_o: (d, d), random with variance 1/d, so x @ W keeps the scale of x."""
    weights = []
    for name in ("W_q", "W_k", "W_v", "W_o"):
        w = rng.standard_normal((d, d)) / math.sqrt(d)
        weights.append(Tensor(w, dtype=np.float32, requires_grad=True, name=name, device=args.device))
    return weights


rng = np.random.default_rng(args.seed)

# -- 2. check the gradients --------------------------------------------------------------------------
x = Tensor(rng.standard_normal((2, 3, 4)), dtype=np.float32, device=args.device)
W = params(4, rng)
ok = tga.gradcheck(lambda x, *W: multi_head_attention(x, *W, n_heads=2), x, *W)  # float64 finite differences
print(f"gradcheck (float64, finite differences) of every input and weight: {'passed' if ok else 'FAILED'}")

mha = BatchFirstAttention(4, 2, bias=False).to(args.device)  # the library's module, given our weights
for proj, w in zip((mha.q_proj, mha.k_proj, mha.v_proj, mha.out_proj), W):
    proj.weight = Parameter(w.detach().mT)  # Linear stores (out, in): y = x @ weight.T
xs = [Tensor(x.detach().numpy(), requires_grad=True, device=args.device) for _ in range(2)]
ours, theirs = multi_head_attention(xs[0], *W, n_heads=2), mha(xs[1])
(ours * ours).sum().backward()
(theirs * theirs).sum().backward()
out_diff = np.abs(ours.detach().numpy() - theirs.detach().numpy()).max()
grad_diff = np.abs(xs[0].grad.detach().numpy() - xs[1].grad.detach().numpy()).max()
diff = float(max(out_diff, grad_diff))
print(f"against BatchFirstAttention (fused attention): outputs and input gradients agree to {diff:.1e}")

# -- 3. train on a toy task: each token gathers the values of the tokens that share its key ----------
# A token is [one-hot key (4) | value (4)]; its target is the mean value over tokens with its key.
# Attention can do this exactly: match keys by query . key, then average the values.
B, T, D, N_KEYS = 32, 8, 8, 4


def toy_batch():
    keys = rng.integers(0, N_KEYS, (B, T))
    values = rng.standard_normal((B, T, D - N_KEYS))
    same = (keys[:, :, None] == keys[:, None, :]).astype(np.float64)  # (B, T, T)
    target = np.concatenate([np.zeros((B, T, N_KEYS)), same @ values / same.sum(-1, keepdims=True)], -1)
    x = np.concatenate([np.eye(N_KEYS)[keys], values], -1)  # (B, T, D)
    return (Tensor(a, dtype=np.float32, device=args.device) for a in (x, target))


W = params(D, rng)
opt = Adam(W, lr=0.02)
steps = 60 if args.quick else 300
losses = []
bar = tqdm(range(steps), desc="train", mininterval=1.0)
for step in bar:
    xb, yb = toy_batch()
    loss = F.mse_loss(multi_head_attention(xb, *W, n_heads=2), yb)
    opt.zero_grad()
    loss.backward()
    opt.step()
    losses.append(loss.item())
    if step % (steps // 5) == 0 or step == steps - 1:
        tqdm.write(f"step {step:4d}  loss {loss.item():.4f}")
print(f"loss fell from {losses[0]:.3f} to {np.mean(losses[-10:]):.4f} (the mean of the last 10 steps)")

# -- 4. the forward and backward graphs --------------------------------------------------------------
x = Tensor(rng.standard_normal((1, 3, 4)), dtype=np.float32, requires_grad=True, name="x", device=args.device)
with tga.decompose():  # softmax as its primitive ops
    loss = (multi_head_attention(x, *params(4, rng), n_heads=2) ** 2).mean()
loss.name = "loss"
for name, kw in (("tour_forward.svg", {}), ("tour_backward.svg", {"backward": True})):
    print(f"wrote {draw(loss, os.path.join(args.out, name), **kw)}")
loss_end = np.mean(losses[-10:])
print(f"RESULT gradcheck={int(ok)} max_diff_vs_module={diff:.2e} loss_start={losses[0]:.4f} loss_end={loss_end:.4f}")
