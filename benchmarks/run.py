"""All the CPU benchmarks, in one process: ``python benchmarks/run.py``.

    python benchmarks/run.py                      # everything (a few minutes)
    python benchmarks/run.py --quick              # fewer rounds
    python benchmarks/run.py --only overhead      # attention, memory, gpt, overhead, compile or rnn
    python benchmarks/run.py --threads 1 --clock cpu   # steadier on a shared machine

Each contender is timed round robin against a hand-written NumPy version of the same
computation; medians and their ratio are printed. See benchmarks/README.md.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time

PARTS = ("attention", "memory", "gpt", "overhead", "compile", "rnn")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="fewer rounds (rougher medians)")
    ap.add_argument("--only", choices=PARTS, action="append", help="run only these parts (repeatable)")
    ap.add_argument("--sizes", nargs="+", choices=("tiny", "small", "medium", "large"), help="attention sizes")
    ap.add_argument("--threads", type=int, help="BLAS (and PyTorch) threads; default: the libraries' own")
    ap.add_argument("--clock", choices=("wall", "cpu"), default="wall", help="cpu: this process's CPU time")
    a = ap.parse_args()
    if a.threads:  # before NumPy loads OpenBLAS, which reads these once
        for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
            os.environ[var] = str(a.threads)
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import attention  # noqa: PLC0415 - after the thread settings above
    import common  # noqa: PLC0415
    import gpt  # noqa: PLC0415
    import numpy as np  # noqa: PLC0415
    import overhead  # noqa: PLC0415
    import rnn  # noqa: PLC0415

    import tinygrad_attn as tga  # noqa: PLC0415

    if a.clock == "cpu":
        common.CLOCK["fn"] = time.process_time
    torch = common.torch_or_none()
    if torch is not None and a.threads:
        torch.set_num_threads(a.threads)
    parts = a.only or PARTS
    print(f"tinygrad_attn {tga.__version__}, NumPy {np.__version__}, Python {platform.python_version()}, "
          f"{os.cpu_count()} CPUs, torch {torch.__version__ if torch else 'not installed'}, "
          f"BLAS threads {a.threads or 'default'}, clock {a.clock}")  # fmt: skip
    from tinygrad_attn.ops import cpu_kernels  # noqa: PLC0415

    loops = "on (numba)" if cpu_kernels.ENABLED and cpu_kernels.available() else "off (NumPy code)"
    print(f"compiled CPU loops (the jit extra): {loops}")
    print(time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "load average", os.getloadavg())
    tga.manual_seed(0)
    if "attention" in parts:
        print("\n(a) causal multi-head self-attention, forward + backward, float32: median per call")
        attention.timing(tuple(a.sizes or attention.SIZES), quick=a.quick)
    if "memory" in parts:
        print("\n(d) peak traced memory of one forward + backward (tracemalloc)")
        attention.memory()
    if "gpt" in parts:
        print("\n(b) one training step of a 2-layer GPT (forward, backward, AdamW)")
        gpt.main(quick=a.quick)
    if "overhead" in parts:
        print("\n(c) per-op overhead")
        overhead.main(rounds=11 if a.quick else overhead.ROUNDS)
    if "compile" in parts:
        import compile as compile_bench  # noqa: PLC0415

        print("\n(e) tga.compile: trace cost and replay speed-up per training scenario")
        compile_bench.main(quick=a.quick)
    if "rnn" in parts:
        print("\n(f) recurrent layers, cells and a seq2seq training step against PyTorch, one thread, float32")
        rnn.main(quick=a.quick)
    print("\nload average at the end", os.getloadavg())


if __name__ == "__main__":
    main()
