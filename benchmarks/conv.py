"""Convolution and pooling, forward and backward: the fused im2col path against the
primitive definition (``tga.decompose()``) and PyTorch on the CPU (where installed).

    python benchmarks/conv.py            # float32, one BLAS thread
    python benchmarks/conv.py --quick    # small shapes, few rounds

Cases: a 3x3 convolution with padding, a ViT patch embedding (stride == kernel: the
reshape/permute path) and a 2x2 max pool. Each time is one forward and one backward.
"""

from __future__ import annotations

import argparse
import os
import sys

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402
from common import interleave  # noqa: E402

import tinygrad_attn as tga  # noqa: E402
import tinygrad_attn.functional as F  # noqa: E402
from tinygrad_attn import Tensor  # noqa: E402


def _cases(quick: bool) -> dict[str, tuple]:
    s = 2 if quick else 1
    return {
        "conv3x3 pad1 (8,16,32,32)->32": ((8 // s, 16, 32 // s, 32 // s), (32, 16, 3, 3), {"padding": 1}),
        "patch16 (8,3,224,224)->192": ((8 // s, 3, 224 // s, 224 // s), (192, 3, 16, 16), {"stride": 16}),
        "max_pool2d 2x2 (8,32,64,64)": ((8 // s, 32, 64 // s, 64 // s), None, {"kernel_size": 2}),
    }


def _ours(xa, wa, kw, decomposed):
    x = Tensor(xa, requires_grad=True)
    w = None if wa is None else Tensor(wa, requires_grad=True)

    def run():
        if decomposed:
            with tga.decompose():
                y = F.conv2d(x, w, **kw) if w is not None else F.max_pool2d(x, **kw)
        else:
            y = F.conv2d(x, w, **kw) if w is not None else F.max_pool2d(x, **kw)
        y.sum().backward()
        x.grad = None
        if w is not None:
            w.grad = None

    return run


def _torch(xa, wa, kw):
    import torch  # noqa: PLC0415 - optional: the comparison is skipped without it

    torch.set_num_threads(1)
    x = torch.tensor(xa, requires_grad=True)
    w = None if wa is None else torch.tensor(wa, requires_grad=True)

    def run():
        y = torch.nn.functional.conv2d(x, w, **kw) if w is not None else torch.nn.functional.max_pool2d(x, **kw)
        y.sum().backward()
        x.grad = None
        if w is not None:
            w.grad = None

    return run


def main(argv: list[str] | None = None) -> dict[str, dict[str, float]]:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--rounds", type=int, default=7)
    args = ap.parse_args(argv)
    rng = np.random.default_rng(0)
    table = {}
    print(f"{'case':34} {'fused ms':>9} {'decomposed ms':>14} {'torch ms':>9}")
    for name, (xs, ws, kw) in _cases(args.quick).items():
        xa = rng.standard_normal(xs).astype(np.float32)
        wa = None if ws is None else (rng.standard_normal(ws) * 0.05).astype(np.float32)
        contenders = {"fused": _ours(xa, wa, kw, False), "decomposed": _ours(xa, wa, kw, True)}
        try:
            contenders["torch"] = _torch(xa, wa, kw)
        except ImportError:
            pass
        t = interleave(contenders, 2 if args.quick else args.rounds, warm=1)
        table[name] = t
        torch_ms = f"{t['torch'] * 1e3:9.2f}" if "torch" in t else f"{'-':>9}"
        print(f"{name:34} {t['fused'] * 1e3:9.2f} {t['decomposed'] * 1e3:14.2f} {torch_ms}")
    return table


if __name__ == "__main__":
    sys.exit(main() and 0)
