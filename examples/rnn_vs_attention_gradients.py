"""How much gradient reaches each input position: a recurrent net against self-attention.

    python examples/rnn_vs_attention_gradients.py [--quick] [--device cuda] [--out DIR]

Take the last output of a sequence model and ask how strongly it depends on each input:
the norm of d y_T / d x_t for every position t. In a tanh RNN the path from x_t to y_T
passes through T - t steps of the recurrence, each multiplying by the recurrent weights and
by tanh' <= 1, so the gradient shrinks geometrically with the distance (Bengio et al., 1994):
the vanishing gradient. In self-attention every position is one step from every other, so
the first input gets as much gradient as the last, whatever the length. This is the reason
attention replaced recurrence for long sequences.
"""

import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
from common import parse_args  # examples/common.py: the flags every example takes
from tqdm import tqdm

import tinygrad_attn as tga
from tinygrad_attn import Tensor
from tinygrad_attn.models import BatchFirstAttention, RNNCell

args = parse_args(__doc__, "a few seconds: shorter sequences")

D, BATCH = 32, 16
LENGTHS = [5, 10, 20, 40] if args.quick else [5, 10, 20, 40, 80, 160, 320]
# float64 models and inputs, so tiny gradients do not underflow to zero as they would in float32
rnn = RNNCell(D, D).to(args.device).double()  # h_t = tanh(W_ih x_t + W_hh h_{t-1} + b), PyTorch's initialisation
attention = BatchFirstAttention(D, n_heads=4).to(args.device).double()


def run_rnn(x):
    h = None
    for t in range(x.shape[1]):
        h = rnn(x[:, t], h)  # (B, D)
    return h  # the last output


def run_attention(x):
    return attention(x)[:, -1]  # (B, D): the last position's output


def gradient_per_position(model, T):
    """The mean over a batch of |d (r . y_T) / d x_t| for t = 0..T-1 (r: a random direction).

    The models and inputs are float64, so tiny gradients do not underflow to zero as they
    would in float32 (below about 1e-38).
    """
    x = Tensor.randn(BATCH, T, D, dtype=np.float64, requires_grad=True)
    y = model(x)
    (g,) = tga.grad((y * Tensor.randn(*y.shape)).sum(), [x])  # (B, T, D)
    return np.linalg.norm(g.detach().numpy(), axis=-1).mean(0)  # (T,)


profiles = {}
for T in tqdm(LENGTHS, desc="sequence lengths"):
    profiles[T] = {"RNN": gradient_per_position(run_rnn, T), "attention": gradient_per_position(run_attention, T)}


def first_over_near(p):
    """Gradient at the first input over that at the one before last. (The last input is also
    attention's query, so it gets extra gradient of its own; compare two plain keys.)"""
    return p[0] / p[-2]


print("|d y_T / d x_t| at the first input over the input just before the last, as T grows:")
print(f"{'T':>5} {'tanh RNN':>12} {'self-attention':>16}")
for T, p in profiles.items():
    print(f"{T:>5} {first_over_near(p['RNN']):>12.2e} {first_over_near(p['attention']):>16.2f}")
T = LENGTHS[-1]
ratio = first_over_near(profiles[T]["RNN"])
print(f"at T={T} the RNN's first input gets {ratio:.1e} times the gradient of a near one;")
print("self-attention's first input gets about as much as any other: no decay with distance.")

fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4))
for name, label, style in (("RNN", "tanh RNN", "-"), ("attention", "self-attention", "--")):
    ax1.plot(np.arange(T) - (T - 1), profiles[T][name], style, label=label)
    ax2.plot(LENGTHS, [first_over_near(profiles[t][name]) for t in LENGTHS], "o" + style, label=label)
ax1.set_xlabel("input position t - T (0 = the last input)")
ax1.set_ylabel("|d y_T / d x_t|")
ax1.set_title(f"gradient reaching each input, T={T}")
ax2.set_xlabel("sequence length T")
ax2.set_ylabel("gradient at the first input / one before last")
ax2.set_title("over sequence length")
for ax in (ax1, ax2):
    ax.set_yscale("log")
    ax.legend()
fig.tight_layout()
path = os.path.join(args.out, "rnn_vs_attention_gradients.png")
fig.savefig(path, dpi=120)
print(f"wrote {path}")
rnn_ratio, att_ratio = first_over_near(profiles[T]["RNN"]), first_over_near(profiles[T]["attention"])
print(f"RESULT T={T} rnn_first_over_near={rnn_ratio:.3e} attention_first_over_near={att_ratio:.3f}")
