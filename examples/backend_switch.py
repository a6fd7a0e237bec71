"""One model, every device: the same outputs and gradients, and how long each takes.

    python examples/backend_switch.py [--quick] [--device cuda] [--out DIR]

The engine never calls NumPy directly for array math: each op asks the tensor's device for
its array namespace. So one Transformer layer runs unchanged on ``"cpu"`` (NumPy), on
``"cuda"`` (CuPy) where a GPU is present, and on ``"array_api_strict"``, the reference
implementation of the Python array API standard, which refuses anything non-standard. It
is slow and exists only to prove portability: if the model runs there, it uses the standard
alone. We copy one set of weights to every device, run forward and backward, and compare.
"""

import os
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")  # small matrices: one BLAS thread is faster

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
from common import parse_args  # examples/common.py: the flags every example takes
from tqdm import tqdm

import tinygrad_attn as tga
from tinygrad_attn import Tensor
from tinygrad_attn.models import EncoderBlock

args = parse_args(
    __doc__,
    "a few seconds: a small layer, few repeats",
    device=None,
    device_help="also run on this device (every available one runs anyway)",
)

B, T, D, H, REPEATS = (4, 16, 32, 4, 3) if args.quick else (16, 64, 128, 8, 10)
devices = list(tga.devices())  # "cpu", and "cuda:0" ... where CuPy sees a GPU
if args.device and tga.get_device(args.device).name not in devices:
    devices.append(tga.get_device(args.device).name)
if tga.is_available("array_api_strict"):
    devices.append("array_api_strict")
print(f"devices: {', '.join(devices)}; an EncoderBlock(d_model={D}, n_heads={H}) on ({B}, {T}, {D})")

reference = EncoderBlock(D, H, d_ff=4 * D)  # the weights every device gets a copy of
weights = reference.state_dict()
x_host = np.random.default_rng(args.seed).standard_normal((B, T, D)).astype(np.float32)
mask_host = np.tril(np.ones((T, T), bool))  # causal: True where a position may attend


def run(device):
    """Forward and backward on ``device``: the output, every gradient (on the host), and the time."""
    layer = EncoderBlock(D, H, d_ff=4 * D).to(device)
    layer.load_state_dict(weights)
    x = Tensor(x_host, device=device, requires_grad=True)
    mask = Tensor(mask_host, device=device)
    times = []
    for _ in range(REPEATS + 1):  # the first run warms up (CuPy compiles its kernels then)
        layer.zero_grad()
        x.grad = None
        start = time.perf_counter()
        out = layer(x, mask=mask)
        (out * out).mean().backward()
        out.detach().numpy()  # wait for the device to finish
        times.append(time.perf_counter() - start)
    grads = {"x": x.grad.detach().numpy(), **{n: p.grad.detach().numpy() for n, p in layer.named_parameters()}}
    return out.detach().numpy(), grads, float(np.median(times[1:]))


results = {d: run(d) for d in tqdm(devices, desc="devices")}
ref_out, ref_grads, _ = results["cpu"]
print(f"\n{'device':<20} {'forward+backward':>17} {'max |out - cpu|':>16} {'max |grad - cpu|':>17}")
worst = 0.0
for d, (out, grads, seconds) in results.items():
    d_out = float(np.abs(out - ref_out).max())
    d_grad = max(float(np.abs(g - ref_grads[n]).max()) for n, g in grads.items())
    worst = max(worst, d_out, d_grad)
    print(f"{d:<20} {seconds * 1e3:>14.1f} ms {d_out:>16.2e} {d_grad:>17.2e}")
if worst == 0.0:
    print("every device agrees with the CPU bit for bit (array_api_strict computes with NumPy underneath)")
else:
    print(f"every device agrees with the CPU to {worst:.1e} (float32 rounding: sums run in other orders)")

fig, ax = plt.subplots(figsize=(5, 3))
ms = [r[2] * 1e3 for r in results.values()]
bars = ax.barh(list(results), ms)
# A linear axis from zero: bar lengths compare as the times do (a log axis made small
# differences look large). Each bar is labelled with its time as a multiple of the CPU's.
cpu_ms = results["cpu"][2] * 1e3
ax.bar_label(bars, labels=[f"{t / cpu_ms:.1f}× cpu" for t in ms], padding=3)
ax.set_xlim(0, max(ms) * 1.45)
ax.set_xlabel("forward + backward (ms)")
ax.set_title("the same layer on each device")
fig.tight_layout()
path = os.path.join(args.out, "backend_times.png")
fig.savefig(path, dpi=120)
print(f"wrote {path}")
print(f"RESULT devices={len(results)} max_diff={worst:.3e}")
