"""Machine translation in miniature: dates written the many ways people write them, to ISO.

    python examples/translate_dates.py [--quick] [--attention {additive,general}] [--device cuda] [--out DIR]

"3rd of March 2021", "03/03/21" and "March 3, 2021" all become "2021-03-03". A GRU encoder
reads the characters; a GRU decoder writes the answer one character at a time and, at each
step, *attends*: it scores every encoder state against its own state, turns the scores into
weights with softmax, and reads the weighted sum (the context). ``--attention additive`` is
Bahdanau et al. (2015), ``v . tanh(W s + U h)``, scored with the previous decoder state;
``--attention general`` is Luong et al. (2015), ``s . W h``, scored with the current one.
The alignment matrix it learns (which input characters each output character read) is the
picture this example draws. Numeric dates are day first (03/04/21 is the 3rd of April), and
two-digit years mean 1950-2049.
"""

import datetime
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
from tinygrad_attn.models import Seq2Seq
from tinygrad_attn.optim import Adam, clip_grad_norm_

args = parse_args(
    __doc__,
    "a few seconds: a tiny model, few steps",
    add=lambda p: p.add_argument("--attention", choices=["additive", "general"], default="additive"),
)

STEPS, BATCH, HIDDEN, LR = (200, 64, 32, 1e-2) if args.quick else (800, 64, 64, 5e-3)

# -- data: a seeded generator of human-written dates -----------------------------------------
MONTHS = "January February March April May June July August September October November December".split()
rng = np.random.default_rng(args.seed)


def ordinal(d):
    return f"{d}{'th' if 11 <= d <= 13 else {1: 'st', 2: 'nd', 3: 'rd'}.get(d % 10, 'th')}"


FORMATS = [
    lambda d: f"{ordinal(d.day)} of {MONTHS[d.month - 1]} {d.year}",  # 3rd of March 2021
    lambda d: f"{d.day:02d}/{d.month:02d}/{d.year % 100:02d}",  # 03/03/21
    lambda d: f"{MONTHS[d.month - 1]} {d.day}, {d.year}",  # March 3, 2021
    lambda d: f"{d.day} {MONTHS[d.month - 1]} {d.year}",  # 3 March 2021
    lambda d: f"{d.day} {MONTHS[d.month - 1][:3]} {d.year % 100:02d}",  # 3 Mar 21
    lambda d: f"{MONTHS[d.month - 1][:3].lower()} {ordinal(d.day)} {d.year}",  # mar 3rd 2021
    lambda d: f"{d.day}.{d.month}.{d.year}",  # 3.3.2021
    lambda d: f"the {ordinal(d.day)} of {MONTHS[d.month - 1].lower()}, {d.year}",  # the 3rd of march, 2021
    lambda d: f"{d.day}-{MONTHS[d.month - 1][:3].upper()}-{d.year}",  # 3-MAR-2021
]
FIRST, N_DAYS = datetime.date(1950, 1, 1), (datetime.date(2049, 12, 31) - datetime.date(1950, 1, 1)).days + 1
all_days = rng.permutation(N_DAYS)
test_days, train_days = all_days[:1000], all_days[1000:]  # held-out dates never appear in training


def make(days):
    dates = [FIRST + datetime.timedelta(days=int(d)) for d in days]
    return [FORMATS[rng.integers(len(FORMATS))](d) for d in dates], [d.isoformat() for d in dates]


test_texts, test_isos = make(test_days)

# characters, by id: every character any format can write (0 pads the shorter inputs)
SRC_CHARS = {c for m in range(1, 13) for day in (1, 2, 3, 28) for f in FORMATS for c in f(datetime.date(2000, m, day))}
SRC = {c: i + 1 for i, c in enumerate(sorted(SRC_CHARS | set("0123456789")))}
TGT_CHARS = "0123456789-^"  # "^" starts the answer
TGT = {c: i for i, c in enumerate(TGT_CHARS)}
OUT_LEN = 10


def encode_src(texts):
    ids = np.zeros((len(texts), max(map(len, texts))), np.int64)
    for i, t in enumerate(texts):
        ids[i, : len(t)] = [SRC[c] for c in t]
    return ids


def encode_tgt(isos):
    return np.array([[TGT[c] for c in s] for s in isos])


# -- the model: tinygrad_attn.models.Seq2Seq, a GRU encoder-decoder with attention ---------------
# One decoder step, given the previous character y and decoder state s:
#   additive (Bahdanau): c = attend(s, encoder states); s' = GRU([emb(y); c], s); logits = out([s'; c; emb(y)])
#   general (Luong):     s' = GRU(emb(y), s); c = attend(s', encoder states); logits = out(tanh(W [c; s']))
model = Seq2Seq(len(SRC) + 1, len(TGT_CHARS), emb_dim=32, hidden_size=HIDDEN, attention=args.attention, pad_id=0)
model.to(args.device)
opt = Adam(model.parameters(), lr=LR)
name = "Bahdanau (additive)" if args.attention == "additive" else "Luong (general)"
print(f"{name} attention; {sum(p.numel() for p in model.parameters())} parameters, {STEPS} steps")
for f in FORMATS[:3]:
    print(f"  e.g. {f(datetime.date(2021, 3, 3))!r:>22} -> '2021-03-03'")

start = time.perf_counter()
bar = tqdm(range(STEPS), desc="train", mininterval=1.0)
for step in bar:
    texts, isos = make(rng.choice(train_days, BATCH))
    tgt = encode_tgt(isos)
    tgt_in = np.concatenate([np.full((BATCH, 1), TGT["^"]), tgt[:, :-1]], axis=1)
    logits = model(encode_src(texts), tgt_in)  # teacher forcing: it reads the true previous character
    loss = F.cross_entropy(logits, Tensor(tgt, device=args.device))
    opt.lr = LR * (0.1 ** (step / STEPS))  # decay tenfold over the run
    opt.zero_grad()
    loss.backward()
    clip_grad_norm_(model.parameters(), 1.0)  # recurrent nets: keep a rare huge gradient from undoing progress
    opt.step()
    if step % 25 == 0:
        bar.set_postfix(loss=f"{loss.item():.3f}")
train_time = time.perf_counter() - start

model.eval()
ids, weights = model.decode(encode_src(test_texts), OUT_LEN, bos_id=TGT["^"], return_attention=True)
pred = ["".join(TGT_CHARS[i] for i in row) for row in ids.detach().numpy()]
weights = weights.detach().numpy()  # (N, 10, T): one row of weights over the input per output character
acc = float(np.mean([p == t for p, t in zip(pred, test_isos)]))
char_acc = float(np.mean([a == b for p, t in zip(pred, test_isos) for a, b in zip(p, t)]))
print(
    f"training took {train_time:.1f}s; exact matches on {len(test_texts)} held-out dates: {acc:.1%} "
    f"(characters right: {char_acc:.1%})"
)
for text, p, t in list(zip(test_texts, pred, test_isos))[:6]:
    print(f"  {text!r:>30} -> {p}  {'ok' if p == t else f'wrong (is {t})'}")

# the alignment matrices of three test dates: rows are output characters, columns input ones
picks = [i for i in range(len(test_texts)) if len(test_texts[i]) > 12][:3]
fig, axes = plt.subplots(1, 3, figsize=(15, 4), layout="constrained")
for ax, i in zip(axes, picks):
    n = len(test_texts[i])
    ax.imshow(weights[i, :, :n], cmap="Greys", vmin=0, vmax=1, aspect="auto")
    ax.set_xticks(range(n), list(test_texts[i]))
    ax.set_yticks(range(OUT_LEN), list(pred[i]))
    ax.set_title(f"{test_texts[i]} -> {pred[i]}", fontsize=9)
fig.suptitle(f"{name} attention: which input characters each output character reads")
path = os.path.join(args.out, f"dates_alignment_{args.attention}.png")
fig.savefig(path, dpi=120)
print(f"wrote {path}")
print(f"RESULT accuracy={acc:.3f} char_accuracy={char_acc:.3f} seconds={train_time:.1f}")
