"""Per-op overhead: forward + backward of a chain of 200 small elementwise ops.

The chain runs on a (16, 16) float32 tensor, so the arithmetic is almost free and what
is measured is the engine's own cost per op: recording the graph, walking it back.
The same chain is written by hand in NumPy, with its manual backward, and both are
timed round robin in this one process.

    python benchmarks/overhead.py

It then times the forward of a 200k-op chain with the cyclic collector on (``long_chain``).
"""

from __future__ import annotations

import gc

import numpy as np
from common import CLOCK, interleave

import tinygrad_attn as tga
from tinygrad_attn import Tensor

N_OPS = 200
SHAPE = (16, 16)
ROUNDS = 31
INNER = 20  # calls per timed sample


def chain_ours(x: Tensor) -> Tensor:
    """``N_OPS`` ops: multiply and add a constant, tanh, exp, in turn."""
    h = x
    for _ in range(N_OPS // 4):
        h = ((h * 0.9 + 0.1).tanh()).exp()
    return h


def chain_numpy(x: np.ndarray, gy: np.ndarray) -> np.ndarray:
    """The same chain with its manual backward; returns the gradient of x."""
    outs = []  # what each op's backward needs
    h = x
    for _ in range(N_OPS // 4):
        h = h * 0.9
        h = h + 0.1
        h = np.tanh(h)
        outs.append(h)
        h = np.exp(h)
        outs.append(h)
    g = gy
    for i in range(len(outs) - 1, -1, -2):
        g = g * outs[i]  # exp
        g = g * (1.0 - outs[i - 1] * outs[i - 1])  # tanh
        g = g * 0.9  # the add passes g through unchanged
    return g


def contenders():
    rng = np.random.default_rng(0)
    xa = rng.standard_normal(SHAPE).astype(np.float32)
    gya = np.ones(SHAPE, np.float32)
    x = Tensor(xa, requires_grad=True)
    gy = Tensor(gya)

    def ours():
        x.grad = None
        chain_ours(x).backward(gy)

    def base():
        return chain_numpy(xa, gya)

    run = tga.compile(lambda: chain_ours(x).backward(gy))

    def compiled():  # the same chain, traced once, then replayed as straight-line array calls
        x.grad = None
        run()

    for fn in (ours, compiled, compiled):  # (compiled twice: the first call traces, the second replays)
        fn()
        if not np.allclose(x.grad.detach().numpy(), base(), rtol=1e-4, atol=1e-6):
            raise AssertionError("overhead: the chains disagree")
    return {"numpy": base, "ours": ours, "compiled": compiled}


# -- a long graph: the collector's share -------------------------------------------------
LONG_OPS = 200_000


def long_chain(n_ops: int = LONG_OPS, rounds: int = 3) -> dict[str, float]:
    """Seconds of the forward of an ``n_ops`` chain on a (4,) float32 tensor, collector on.

    ``interleave`` turns the collector off while it times; here it stays on, as users run,
    so what it costs shows. Three ways, alternating, best of ``rounds``: the engine as it
    is ("now": full collections wait while the graph lives, see
    ``tinygrad_attn.engine.function.GC_LONG_GRAPH``), the same with that switched off
    (``GC_DEFER = False``: "before", the collector as Python sets it), and the collector
    off (the floor).
    """
    x = Tensor(np.random.default_rng(0).random(4).astype(np.float32), requires_grad=True)
    clock = CLOCK["fn"]
    times: dict[str, list[float]] = {"now": [], "before": [], "collector off": []}
    for _ in range(rounds):
        for name, ts in times.items():
            gc.collect()
            if name == "before":
                tga.engine.function.GC_DEFER = False
            if name == "collector off":
                gc.disable()
            try:
                t0 = clock()
                h = x
                for _ in range(n_ops // 4):
                    h = ((h * 0.9 + 0.1).tanh()).exp()
                ts.append(clock() - t0)
                del h
            finally:
                tga.engine.function.GC_DEFER = True
                gc.enable()
    best = {k: min(v) for k, v in times.items()}
    print(f"  chain of {n_ops} ops on (4,) float32, forward only, collector on, best of {rounds}")
    for k, v in best.items():
        print(f"  {k + ':':31s}{v:6.2f} s")
    print(f"  now / before:                  {best['now'] / best['before']:6.2f}x   (target: at most 0.6)")
    return best


def main(rounds: int = ROUNDS, long_rounds: int | None = None) -> dict[str, float]:
    """The per-op chain, then the long chain (``long_rounds``: 3, or 1 when ``rounds`` is
    below the default, as ``run.py --quick`` asks; 0: skip it)."""
    if long_rounds is None:
        long_rounds = 3 if rounds >= ROUNDS else 1
    med = interleave(contenders(), rounds, warm=3, inner=INNER)
    us = {k: v / N_OPS * 1e6 for k, v in med.items()}
    print(f"  chain of {N_OPS} elementwise ops on {SHAPE} float32, forward + backward")
    print(f"  numpy (hand-written backward): {us['numpy']:6.2f} us per op")
    print(f"  ours:                          {us['ours']:6.2f} us per op   (target: at most 2.5)")
    print(f"  ratio ours / numpy:            {us['ours'] / us['numpy']:6.2f}x")
    print(f"  compiled (tga.compile replay): {us['compiled']:6.2f} us per op   "
          f"({us['compiled'] / us['numpy']:.2f}x numpy; target: at most 1.3x)")  # fmt: skip
    print(f"  engine cost above numpy:       {us['ours'] - us['numpy']:6.2f} us per op")
    if long_rounds:
        long_chain(rounds=long_rounds)
    return us


if __name__ == "__main__":
    main()
