"""What one replay of ``tga.compile`` costs beyond its arithmetic, and the tiny attention step.

1. A step with one op (``x * 2.0`` on a (4,) float32 tensor): microseconds per call of the
   NumPy expression, the eager step, the compiled step (guard, key, replay) and the guard's
   fingerprint alone (``Compiled.guard.key``).
2. The causal multi-head attention step of ``attention.py`` (forward + backward) at tiny
   (and, with ``--sizes``, larger) size: hand-written NumPy, the user form eager, compiled
   with the fused groups running (numba loops) and compiled with them off
   (``cpu_kernels.ENABLED = False`` while traced: one NumPy call per op), and ``jax.jit``
   where ``import jax`` works. The target: compiled at least 1.5x faster than eager at tiny.

3. With ``--step``, the training step: the same forward, the weights' gradients and an SGD
   update, by hand in NumPy, under ``tga.compile`` and under ``jax.jit``.

    cd benchmarks && OMP_NUM_THREADS=1 PYTHONPATH=.. python replay.py [--cpu-time] [--step] [--sizes tiny small medium]

4. With ``--phases``, only where the compiled training step's time goes at the first size
   (``step_phases``): the guard's key, the program without its update, the update, the rest.

It prints the load average and which OpenBLAS kernels NumPy's products run: on a CPU with
AVX-512 an environment may pin older ones (``OPENBLAS_CORETYPE=Haswell``), which halves the
speed of every matrix product here, and not ``jax.jit``'s.

``--cpu-time`` times with this process's CPU time (``time.process_time``), which other work on
a shared machine disturbs far less than wall-clock time.

Medians of interleaved rounds (``common.interleave``); nothing here is asserted by a test.
"""

from __future__ import annotations

import os
import statistics
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


LR = 1e-6  # (tiny: the weights barely move over the timed steps, whose loss y . gy has no minimum)


def step_numpy(a: dict[str, np.ndarray], h: int):
    """A training step by hand: the weights' gradients (``attention.mha_numpy``, none for the
    input), then SGD on each weight in place."""
    w = {n: a[n].copy() for n in attention.WEIGHTS}
    arrs = {**a, **w}

    def step():
        g = attention.mha_numpy(arrs, h, input_grad=False)
        for n in attention.WEIGHTS:
            w[n] -= np.float32(LR) * g[n]

    step.weights = w  # (for the test that holds the steps equal)
    return step


def step_compiled(a: dict[str, np.ndarray], h: int):
    """The user form as a training step under ``tga.compile``: ``zero_grad``, forward,
    ``backward``, ``SGD.step``."""
    p = {n: Tensor(a[n].copy(), requires_grad=True) for n in attention.WEIGHTS}
    t = a["x"].shape[1]
    blocked = Tensor(~np.tri(t, t, 0, dtype=bool))
    opt = tga.optim.SGD(list(p.values()), lr=LR)

    @tga.compile
    def step(x, gy):
        opt.zero_grad()
        attention.user_forward(p, x, blocked, h).backward(gy)
        opt.step()

    x, gy = Tensor(a["x"]), Tensor(a["gy"])

    def run():
        step(x, gy)

    run.weights, run.compiled = p, step
    return run


def step_jax(a: dict[str, np.ndarray], h: int):
    """The same step under ``jax.jit``: the weights' gradients by ``jax.vjp`` and the SGD
    update in one compiled function; the new weights are fed to the next call."""
    jax = jax_or_none()
    jnp = jax.numpy

    @jax.jit
    def step(p, x, gy):
        _, pull = jax.vjp(lambda q: attention.jax_forward(q, x, h), p)
        g = pull(gy)[0]
        return {n: p[n] - LR * g[n] for n in p}

    state = {"p": {n: jnp.asarray(a[n]) for n in attention.WEIGHTS}}
    x, gy = jnp.asarray(a["x"]), jnp.asarray(a["gy"])

    def run():
        state["p"] = step(state["p"], x, gy)
        jax.block_until_ready(state["p"])

    return run


def training_step(sizes=("tiny",), rounds: int | None = None) -> dict[str, dict[str, float]]:
    """Causal MHA training step (forward, backward of the weights, SGD update), float32."""
    out = {}
    print("  causal MHA training step (forward + backward + SGD update), float32, median (ratio to numpy):")
    for size in sizes:
        b, t, d, h = attention.SIZES[size]
        a = attention.make_inputs(b, t, d)
        cs = {"numpy": step_numpy(a, h), "compiled": step_compiled(a, h)}
        cs["compiled"](), cs["compiled"]()
        if jax_or_none() is not None:
            cs["jax.jit"] = step_jax(a, h)
            cs["jax.jit"]()
        med = interleave(cs, rounds or attention.ROUNDS[size], warm=2, inner=attention.INNER[size])
        out[size] = med
        for name, tm in med.items():
            print(f"    {size:7s} {name:9s} {tm * 1e3:9.3f} ms  {tm / med['numpy']:6.2f}x")
    return out


def step_phases(size: str = "tiny", calls: int = 3000) -> dict[str, float]:
    """Where a compiled training step's time goes: microseconds per call of the guard's key
    (``Compiled.guard.key``), the replayed program without its update, the optimizer's update
    (``Optimizer.foreach_update``, the line the program calls) and the rest of the call
    (argument key, cache lookup, ``Program.replay``): the medians over ``calls`` calls of the
    step, each part timed with ``time.perf_counter`` (CPU time costs a system call, about a
    microsecond, per reading); besides, with this process's CPU time, the step alone,
    unwrapped, and the hand-written NumPy step."""
    from tinygrad_attn.optim.optimizer import Optimizer  # noqa: PLC0415

    b, t, d, h = attention.SIZES[size]
    a = attention.make_inputs(b, t, d)
    run, hand = step_compiled(a, h), step_numpy(a, h)
    run(), run()
    compiled, clock = run.compiled, time.perf_counter

    def per_call(fn) -> float:
        for _ in range(calls // 10):
            fn()
        t0 = time.process_time()
        for _ in range(calls):
            fn()
        return (time.process_time() - t0) / calls * 1e6

    plain, by_hand = per_call(run), per_call(hand)
    now: dict[str, float] = {}
    prog, key, update = compiled.program, compiled.guard.key, Optimizer.foreach_update
    inner = prog._run

    def timed(name, fn):
        def wrapper(*args):
            t0 = clock()
            try:
                return fn(*args)
            finally:
                now[name] = clock() - t0

        return wrapper

    compiled.guard.key, prog._run = timed("guard", key), timed("program", inner)
    Optimizer.foreach_update = timed("update", update)
    rows = []
    try:
        for i in range(calls + calls // 10):
            t0 = clock()
            run()
            if i >= calls // 10:
                g, p, u = now["guard"], now["program"], now["update"]
                rows.append((g, p - u, u, clock() - t0 - g - p, clock() - t0))
    finally:
        compiled.guard.key, prog._run, Optimizer.foreach_update = key, inner, update
    # (medians of each call's parts: a call another process interrupted is left out)
    med = [statistics.median(col) * 1e6 for col in zip(*rows)]
    names = ("guard key", "program without the update", "optimizer update", "rest of the call", "step, wrapped")
    out = {**dict(zip(names, med)), "step, unwrapped (CPU time)": plain, "hand-written NumPy step (CPU time)": by_hand}
    print(f"  where a compiled {size} training step's time goes (us per call, {calls} calls):")
    for k, v in out.items():
        print(f"    {k + ':':36s}{v:7.1f}")
    return out


def blas_kernels() -> str:
    """Which OpenBLAS kernels NumPy's matrix products run (``OPENBLAS_CORETYPE`` overrides
    OpenBLAS's own choice for the CPU): the products are most of a medium step, and ``jax.jit``
    picks its own kernels for the CPU whatever this says."""
    from threadpoolctl import threadpool_info  # noqa: PLC0415 - (a dependency of the package)

    arch = ", ".join(sorted({str(i.get("architecture")) for i in threadpool_info() if i.get("user_api") == "blas"}))
    pinned = os.environ.get("OPENBLAS_CORETYPE")
    return f"{arch or 'unknown'}" + (f" (OPENBLAS_CORETYPE={pinned})" if pinned else " (OpenBLAS's own choice)")


if __name__ == "__main__":
    print("  load average", os.getloadavg(), "; BLAS kernels:", blas_kernels())
    sizes = ("tiny",)
    if "--cpu-time" in sys.argv:
        CLOCK["fn"] = time.process_time
    if "--sizes" in sys.argv:
        sizes = tuple(sys.argv[sys.argv.index("--sizes") + 1 :])
    tga.manual_seed(0)
    if "--phases" in sys.argv:  # the breakdown alone
        step_phases(sizes[0])
        sys.exit(0)
    one_op()
    mha(sizes)
    if "--step" in sys.argv:
        training_step(sizes)
