"""A Vision Transformer reads handwritten digits (scikit-learn's 8x8 ``load_digits``).

    python examples/vit_digits.py [--quick] [--device cuda] [--out DIR]

An image becomes a sentence: cut it into 2x2 patches (16 "words" of 4 pixels), embed each
with one linear map, add a learned position embedding, and put a learnable class token in
front. After a few Transformer encoder blocks, the class token's output is the prediction.
We report test accuracy and draw, over some test images, where the class token looks.
"""

import os
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")  # many small matrices: one BLAS thread is faster

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
from common import parse_args  # examples/common.py: the flags every example takes
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split
from tqdm import tqdm

import tinygrad_attn as tga
import tinygrad_attn.functional as F
from tinygrad_attn import Tensor
from tinygrad_attn.models import ViT
from tinygrad_attn.models.vit import patchify
from tinygrad_attn.optim import AdamW

args = parse_args(__doc__, "a few seconds: a tiny model, few steps")

IMAGE, PATCH = 8, 2
STEPS, BATCH, D_MODEL, N_LAYERS = (600, 64, 32, 1) if args.quick else (2000, 64, 64, 2)
N_HEADS, LR = 4, 2e-3

# -- data: 1797 images, values 0..16; a fixed stratified test split -------------------------
digits = load_digits()
images = (digits.images / 16.0).astype(np.float32)  # (N, 8, 8) in [0, 1]
x_train, x_test, y_train, y_test = train_test_split(images, digits.target, test_size=0.2, random_state=args.seed,
                                                    stratify=digits.target)  # fmt: skip
rng = np.random.default_rng(args.seed)


def shift(batch):
    """Augment: move each digit by up to one pixel, so the model cannot memorise positions."""
    out = np.zeros_like(batch)
    padded = np.pad(batch, ((0, 0), (1, 1), (1, 1)))
    for i, (dy, dx) in enumerate(rng.integers(0, 3, (len(batch), 2))):
        out[i] = padded[i, dy : dy + IMAGE, dx : dx + IMAGE]
    return out


# -- the model: tinygrad_attn.models.ViT ----------------------------------------------------------
# (B, 1, 8, 8) -> 16 patches of 2x2 -> Linear -> [class] token in front, + positions
# -> pre-norm encoder layers -> the class token's output -> Linear -> 10 logits
def as_tensor(imgs):
    return Tensor(imgs[:, None], device=args.device)  # (B, 1, 8, 8)


@tga.no_grad()
def class_token_attention(imgs):
    """Run the model by hand to the last layer and read its attention weights (B, H, 17, 17)."""
    x = model.patch_embed(patchify(as_tensor(imgs), PATCH))  # (B, 16, d)
    x = tga.cat([model.cls_token.expand(len(imgs), 1, D_MODEL), x], axis=1) + model.pos_embed  # (B, 17, d)
    *first, last = model.layers
    for layer in first:
        x = layer(x)
    return last.self_attn(last.norm1(x), need_weights=True)[1].detach().numpy()


model = ViT(IMAGE, PATCH, 1, 10, D_MODEL, N_HEADS, N_LAYERS).to(args.device)
opt = AdamW(model.parameters(), lr=LR, weight_decay=0.05)
print(f"{len(x_train)} training and {len(x_test)} test images; {sum(p.numel() for p in model.parameters())} "
      f"parameters, {STEPS} steps")  # fmt: skip

start = time.perf_counter()
bar = tqdm(range(STEPS), desc="train", mininterval=1.0)
for step in bar:
    idx = rng.integers(0, len(x_train), BATCH)
    opt.lr = LR * min(1.0, (step + 1) / 100) * 0.5 * (1 + np.cos(np.pi * step / STEPS))  # warm up, cosine decay
    logits = model(as_tensor(shift(x_train[idx])))
    loss = F.cross_entropy(logits, Tensor(y_train[idx], device=args.device), label_smoothing=0.1)
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step % 50 == 0:
        bar.set_postfix(loss=f"{loss.item():.3f}")
train_time = time.perf_counter() - start

model.eval()
with tga.no_grad():
    pred = model(as_tensor(x_test)).argmax(-1).detach().numpy()
acc = float((pred == y_test).mean())
print(f"training took {train_time:.1f}s; test accuracy {acc:.1%} ({int((pred == y_test).sum())}/{len(y_test)})")

# where the class token looks: its attention row in the last block, averaged over heads
cls_attn = class_token_attention(x_test[:8]).mean(1)[:, 0, 1:]  # (8, 16): the class row, patches only
grid = IMAGE // PATCH
fig, axes = plt.subplots(2, 8, figsize=(12, 3.4))
for j in range(8):
    img, att = x_test[j], np.kron(cls_attn[j].reshape(grid, grid), np.ones((PATCH, PATCH)))  # (8, 8)
    axes[0, j].imshow(img, cmap="gray_r")
    axes[0, j].set_title(f"pred {pred[j]} (true {y_test[j]})", fontsize=8)
    axes[1, j].imshow(att, cmap="magma")
    axes[1, j].contour(img, levels=[0.4], colors="cyan", linewidths=1)  # the digit's outline
for ax in axes.flat:
    ax.set_xticks([])
    ax.set_yticks([])
axes[0, 0].set_ylabel("image")
axes[1, 0].set_ylabel("[class] attends")
fig.tight_layout()
path = os.path.join(args.out, "vit_class_attention.png")
fig.savefig(path, dpi=120)
print(f"wrote {path}")
print(f"RESULT accuracy={acc:.3f} seconds={train_time:.1f}")
