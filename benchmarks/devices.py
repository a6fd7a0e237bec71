"""The same attention code on two devices: the GPU table of the speed issue.

    python benchmarks/devices.py --device cuda                 # medium and large, GPU vs CPU
    python benchmarks/devices.py --device cuda --sizes large
    python benchmarks/devices.py --device array_api_strict --quick   # the code path, anywhere

Causal multi-head self-attention, forward + backward, float32, as the
``BatchFirstAttention`` module and as the form written from Tensor ops, built once per
device from the same weights. Outputs are checked to agree first. A GPU call is timed to
its end (the stream is synchronised before the clock is read), after warm-up calls that
also compile the CUDA kernels.
"""

from __future__ import annotations

import argparse
import math
import statistics
import time

import numpy as np
from attention import SIZES, make_inputs, module_class

import tinygrad_attn as tga
from tinygrad_attn import Tensor


def synchronize(device: str) -> None:
    """Wait until the device has finished what it was given (a no-op on CPU backends)."""
    xp = tga.get_device(device).xp
    if hasattr(xp, "cuda"):  # CuPy
        xp.cuda.get_current_stream().synchronize()


def setups(a: dict[str, np.ndarray], h: int, device: str) -> dict:
    """One forward + backward step of each form, on ``device``; each returns y (host)."""
    b, t, d = a["x"].shape
    dh = d // h
    p = {n: Tensor(v, requires_grad=n != "gy", device=device) for n, v in a.items()}
    blocked = Tensor(~np.tri(t, t, 0, dtype=bool), device=device)
    mha = module_class()(d, h).to(device)
    for n, lin in zip("qkvo", (mha.q_proj, mha.k_proj, mha.v_proj, mha.out_proj)):
        lin.load_state_dict({"weight": a[f"W{n}"], "bias": a[f"b{n}"]})

    def user():
        x = p["x"]

        def heads(m):  # (B, T, D) -> (B, H, T, dh)
            return m.reshape(b, t, h, dh).permute(0, 2, 1, 3)

        q, k, v = (heads(x @ p[f"W{n}"].mT + p[f"b{n}"]) for n in "qkv")
        w = ((q @ k.mT) * (1.0 / math.sqrt(dh))).masked_fill(blocked, -math.inf).softmax(-1)  # (B, H, T, T)
        y = (w @ v).permute(0, 2, 1, 3).reshape(b, t, d) @ p["Wo"].mT + p["bo"]
        y.backward(p["gy"])
        return y

    def module():
        y = mha(p["x"], is_causal=True)
        y.backward(p["gy"])
        return y

    return {"user": user, "module": module}


def median_seconds(fn, device: str, rounds: int, warm: int = 3) -> float:
    for _ in range(warm):
        fn()
    synchronize(device)
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        fn()
        synchronize(device)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--device", default="cuda", help="the device to compare with the CPU")
    ap.add_argument("--sizes", nargs="+", choices=tuple(SIZES), default=["medium", "large"])
    ap.add_argument("--quick", action="store_true", help="tiny sizes and few rounds: checks the code path")
    args = ap.parse_args(argv)
    sizes = ["tiny"] if args.quick else args.sizes
    rounds = 3 if args.quick else 10
    print(f"tinygrad_attn {tga.__version__}; CPU vs {args.device}; forward + backward, float32, median of {rounds}")
    print(f"  {'size':7s} {'form':7s} {'cpu':>11s} {args.device:>11s} {'speed-up':>9s}")
    table = {}
    for size in sizes:
        b, t, d, h = SIZES[size]
        a = make_inputs(b, t, d)
        here, there = setups(a, h, "cpu"), setups(a, h, args.device)
        for form in ("user", "module"):
            ref, got = here[form]().detach().numpy(), there[form]().detach().numpy()
            if not np.allclose(ref, got, rtol=1e-3, atol=1e-4):
                raise AssertionError(f"{form} at {size}: {args.device} disagrees with cpu")
            tc = median_seconds(here[form], "cpu", rounds)
            td = median_seconds(there[form], args.device, rounds)
            table[(size, form)] = (tc, td)
            print(f"  {size:7s} {form:7s} {tc * 1e3:9.2f}ms {td * 1e3:9.2f}ms {tc / td:8.2f}x")
    return table


if __name__ == "__main__":
    main()
