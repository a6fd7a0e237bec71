"""What one replay of ``tga.compile`` costs beyond its arithmetic, and the tiny attention step.

1. A step with one op (``x * 2.0`` on a (4,) float32 tensor): microseconds per call of the
   NumPy expression, the eager step, the compiled step (guard, key, replay) and the guard's
   fingerprint alone (``Compiled.guard.key``).
2. The causal multi-head attention step of ``attention.py`` (forward + backward) at tiny
   (and, with ``--sizes``, larger) size: hand-written NumPy, the user form eager, compiled
   with the fused groups running (numba loops) and compiled with them off
   (``cpu_kernels.ENABLED = False`` while traced: one NumPy call per op), and ``jax.jit``
   where ``import jax`` works. The target: compiled at least 1.5x faster than eager at tiny.

    cd benchmarks && OMP_NUM_THREADS=1 PYTHONPATH=.. python replay.py [--cpu-time] [--sizes tiny small medium]

``--cpu-time`` times with this process's CPU time (``time.process_time``), which other work on
a shared machine disturbs far less than wall-clock time.

Medians of interleaved rounds (``common.interleave``); nothing here is asserted by a test.
"""

from __future__ import annotations

import sys
import time

import attention
import numpy as np
from common import CLOCK, interleave, jax_or_none

import tinygrad_attn as tga
from tinygrad_attn import Tensor
from tinygrad_attn.ops import cpu_kernels


def one_op(rounds: int = 31, inner: int = 2000) -> dict[str, float]:
    xa = np.arange(4, dtype=np.float32)
    x = Tensor(xa)

    def step(x):
        return x * 2.0

    run = tga.compile(step)
    run(x), run(x)  # (traced, then replayed once)
    assert run.program is not None
    guard = run.guard
    med = interleave(
        {
            "numpy": lambda: xa * np.float32(2.0),
            "eager": lambda: step(x),
            "compiled": lambda: run(x),
            "guard alone": lambda: guard.key(step, []),
        },
        rounds,
        warm=2,
        inner=inner,
    )
    us = {k: v * 1e6 for k, v in med.items()}
    print("  a step with one op, (4,) float32, per call:")
    for k, v in us.items():
        print(f"    {k + ':':14s}{v:7.2f} us")
    print(f"    replay overhead above numpy: {us['compiled'] - us['numpy']:.2f} us")
    return us


def mha(sizes=("tiny",), rounds: int | None = None) -> dict[str, dict[str, float]]:
    out = {}
    print("  causal MHA forward + backward, float32, median per step (ratio to numpy):")
    for size in sizes:
        b, t, d, h = attention.SIZES[size]
        a = attention.make_inputs(b, t, d)
        cs = {"numpy": lambda a=a, h=h: attention.mha_numpy(a, h), "eager": attention.user_setup(a, h)}
        cs["compiled"] = attention.compiled_setup(a, h)
        cs["compiled"](), cs["compiled"]()
        cpu_kernels.ENABLED, was = False, cpu_kernels.ENABLED
        try:
            cs["unfused"] = attention.compiled_setup(a, h)
            cs["unfused"](), cs["unfused"]()
        finally:
            cpu_kernels.ENABLED = was
        if jax_or_none() is not None:
            cs["jax.jit"] = attention.jax_setup(a, h)
            cs["jax.jit"]()
        med = interleave(cs, rounds or attention.ROUNDS[size], warm=2, inner=attention.INNER[size])
        out[size] = med
        for name, tm in med.items():
            print(f"    {size:7s} {name:9s} {tm * 1e3:9.3f} ms  {tm / med['numpy']:6.2f}x")
        print(f"    {size:7s} eager / compiled: {med['eager'] / med['compiled']:.2f}x")
    return out


if __name__ == "__main__":
    sizes = ("tiny",)
    if "--cpu-time" in sys.argv:
        CLOCK["fn"] = time.process_time
    if "--sizes" in sys.argv:
        sizes = tuple(sys.argv[sys.argv.index("--sizes") + 1 :])
    tga.manual_seed(0)
    one_op()
    mha(sizes)
