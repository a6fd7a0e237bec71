"""How many threads the array library's math (BLAS: matmul, einsum) uses in this process.

>>> tga.set_num_threads(1)  # doctest: +SKIP
>>> tga.get_num_threads()  # doctest: +SKIP
1

The names are PyTorch's. They act on every BLAS library loaded in the process
(OpenBLAS, MKL, BLIS, ...) through ``threadpoolctl``, so they also change the threads
of plain NumPy code in the same process, as ``torch.set_num_threads`` does for PyTorch.

The default is left as the BLAS library chose it (one thread per core). Measured on a
2-core machine (a GPT of 106k parameters, one training step): 5.9 ms on one thread and
6.4 ms on two when the machine is otherwise idle, but 6.0 ms and 14.7 ms while another
program keeps one core busy; a GPT of 413k parameters takes 45 ms on one thread, 37 ms
on two when idle, 76 ms on two when the other core is busy. So: small models, or
cores shared with other programs, ``set_num_threads(1)``; larger models on idle cores
keep the default.

``threadpoolctl`` is a core dependency rather than an extra: it is one pure-Python file
with no dependencies of its own, and NumPy offers no other way to change the threads of
its BLAS library once it is loaded (the ``OMP_NUM_THREADS`` family works only before).
"""

from __future__ import annotations

from typing import Any

_controller: Any = None


def _threadpool_controller() -> Any:
    global _controller
    if _controller is None:
        from threadpoolctl import ThreadpoolController  # noqa: PLC0415 - loaded on first use

        _controller = ThreadpoolController()
    return _controller


def _blas_pools() -> list[Any]:
    import numpy as np  # noqa: F401, PLC0415 - loads the BLAS library the pools belong to

    return [lib for lib in _threadpool_controller().lib_controllers if lib.user_api == "blas"]


def set_num_threads(n: int) -> None:
    """Use ``n`` threads (at least 1) for the BLAS math of this process, from now on.

    Raises ``ValueError`` for ``n < 1`` and ``RuntimeError`` when no BLAS library with a
    thread pool is loaded (NumPy built without one).
    """
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"set_num_threads: the number of threads must be an int >= 1, got {n!r}")
    pools = _blas_pools()
    if not pools:
        raise RuntimeError(
            "set_num_threads: no BLAS library with a thread pool is loaded in this process "
            "(threadpoolctl finds none); the environment variable OMP_NUM_THREADS is the remaining way"
        )
    for lib in pools:
        lib.set_num_threads(n)


def get_num_threads() -> int:
    """The threads the BLAS math of this process uses (1 where there is no thread pool)."""
    pools = _blas_pools()
    return max((lib.num_threads for lib in pools), default=1)


# PyTorch's second pool, for running independent ops at once (``torch.jit.fork``): ops here run one
# after another on the calling thread, so only its size is kept, set once as PyTorch allows.
_interop = {"threads": None, "set": False}


def get_num_interop_threads() -> int:
    """The size of the inter-op thread pool: PyTorch's default, one per core, or what was set."""
    import os  # noqa: PLC0415

    return _interop["threads"] or os.cpu_count() or 1


def set_num_interop_threads(n: int) -> None:
    """Set the inter-op pool's size, once per process and before any use, as PyTorch's (a second
    call raises its RuntimeError)."""
    if isinstance(n, bool) or not isinstance(n, int):
        raise RuntimeError(f"set_num_interop_threads expects an int, but got {type(n).__name__}")
    if n < 1:
        raise RuntimeError("set_num_interop_threads expects a positive integer")
    if _interop["set"]:
        raise RuntimeError(
            "Error: cannot set number of interop threads after parallel work has started or "
            "set_num_interop_threads called"
        )
    _interop.update(threads=n, set=True)


def init_num_threads() -> None:
    """Ready this thread for parallel work (PyTorch's OpenMP set-up; the BLAS pools need none)."""
