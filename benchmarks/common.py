"""Timing and memory helpers shared by the benchmarks.

Contenders are timed round robin in one process. OpenBLAS keeps a worker thread
spinning for about 100 ms after a multi-threaded call, and whatever runs inside that
window gets one core; so before each timed call we pause, then make untimed warm-up
calls, and only then time one call.
"""

from __future__ import annotations

import gc
import statistics
import time
import tracemalloc
from collections.abc import Callable

PAUSE_S = 0.15

#: The clock every benchmark reads: wall time, or (``run.py --clock cpu``) this process's
#: CPU time, which other programs on a shared machine disturb less. CPU time adds up the
#: time of all threads, so it is comparable only with one BLAS thread.
CLOCK = {"fn": time.perf_counter}


def interleave(
    contenders: dict[str, Callable[[], object]], rounds: int, warm: int = 2, inner: int = 1
) -> dict[str, float]:
    """Median seconds per call of each contender, timed round robin.

    Each sample times ``inner`` calls back to back (for calls of microseconds, where one
    call is too short to time alone).
    """
    clock = CLOCK["fn"]
    times: dict[str, list[float]] = {name: [] for name in contenders}
    for _ in range(rounds):
        for name, fn in contenders.items():
            time.sleep(PAUSE_S)
            gc.collect()  # here, not between warm-up and timing: a collection evicts the caches
            for _ in range(warm):
                fn()
            gc.disable()
            t0 = clock()
            for _ in range(inner):
                fn()
            times[name].append((clock() - t0) / inner)
            gc.enable()
    return {name: statistics.median(ts) for name, ts in times.items()}


def peak_bytes(fn: Callable[[], object]) -> int:
    """Peak traced allocation of one call (NumPy reports its buffers to tracemalloc).

    The result of the call is dropped inside the measurement, so what it returns
    (gradients) counts at the peak, as it should.
    """
    fn()  # caches, lazily built constants
    gc.collect()
    tracemalloc.start()
    try:
        fn()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak


def ms(s: float) -> str:
    return f"{s * 1e3:9.3f} ms"


def mib(n: int) -> str:
    return f"{n / 2**20:8.1f} MiB"


def jax_or_none():
    """JAX if it imports (installed by hand: ``pip install jax``), else None. Runs on the CPU
    here, in float32, as the other contenders."""
    try:
        import jax  # noqa: PLC0415 - optional contender
    except ImportError:
        return None
    jax.config.update("jax_platforms", "cpu")
    return jax


def torch_or_none():
    """PyTorch if it imports (the ``bench`` extra), else None."""
    try:
        import torch  # noqa: PLC0415 - optional contender
    except ImportError:
        return None
    return torch
