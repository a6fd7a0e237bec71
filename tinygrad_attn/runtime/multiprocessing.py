"""``torch.multiprocessing``: Python's :mod:`multiprocessing` under PyTorch's path, with
PyTorch's ``spawn``/``start_processes`` and sharing-strategy functions.

A tensor sent to another process is pickled (its values copied): NumPy memory has no
shared-memory handle to pass, so the ``file_descriptor``/``file_system`` strategies are names
only. ``spawn(fn, args, nprocs)`` calls ``fn(i, *args)`` in ``nprocs`` processes, as PyTorch's,
and raises :class:`ProcessRaisedException` with the child's traceback when one fails.

>>> import tinygrad_attn.multiprocessing as mp
>>> mp.get_sharing_strategy() in mp.get_all_sharing_strategies()
True
"""

from __future__ import annotations

import multiprocessing
import traceback
from multiprocessing import *  # noqa: F403 - PyTorch's module re-exports all of Python's
from typing import Any

__all__ = [*multiprocessing.__all__, "spawn", "start_processes", "ProcessContext", "ProcessRaisedException",
           "ProcessExitedException", "set_sharing_strategy", "get_sharing_strategy",
           "get_all_sharing_strategies"]  # fmt: skip

_STRATEGIES = ("file_descriptor", "file_system")
_strategy = ["file_descriptor"]


def get_all_sharing_strategies() -> set[str]:
    return set(_STRATEGIES)


def get_sharing_strategy() -> str:
    return _strategy[0]


def set_sharing_strategy(new_strategy: str) -> None:
    if new_strategy not in _STRATEGIES:
        raise AssertionError(f"set_sharing_strategy: {new_strategy!r} is not one of {sorted(_STRATEGIES)}")
    _strategy[0] = new_strategy


class ProcessException(Exception):  # noqa: N818 - PyTorch's names
    def __init__(self, msg: str, error_index: int, pid: int) -> None:
        super().__init__(msg)
        self.msg, self.error_index, self.pid = msg, error_index, pid

    def __reduce__(self) -> Any:
        return type(self), (self.msg, self.error_index, self.pid)


class ProcessRaisedException(ProcessException):
    """A spawned process raised: the message holds its traceback."""


class ProcessExitedException(ProcessException):
    """A spawned process exited with a non-zero code (a signal or ``sys.exit``)."""

    def __init__(self, msg: str, error_index: int, error_pid: int, exit_code: int, signal_name: str | None = None):
        super().__init__(msg, error_index, error_pid)
        self.exit_code, self.signal_name = exit_code, signal_name

    def __reduce__(self) -> Any:
        return type(self), (self.msg, self.error_index, self.pid, self.exit_code, self.signal_name)


def _wrap(fn: Any, i: int, args: tuple, errors: Any) -> None:
    try:
        fn(i, *args)
    except KeyboardInterrupt:
        pass
    except Exception:  # noqa: BLE001 - sent to the parent, which raises it
        errors.put(traceback.format_exc())
        raise SystemExit(1) from None


class ProcessContext:
    """The processes ``start_processes`` started; ``join()`` waits for them, raising the
    first failure (PyTorch's class)."""

    def __init__(self, processes: list[Any], error_queues: list[Any]) -> None:
        self.processes, self.error_queues = processes, error_queues

    def pids(self) -> list[int]:
        return [p.pid for p in self.processes]

    def join(self, timeout: float | None = None) -> bool:
        for p in self.processes:
            p.join(timeout)
        for i, (p, q) in enumerate(zip(self.processes, self.error_queues)):
            if p.exitcode not in (0, None):
                for other in self.processes:
                    if other.is_alive():
                        other.terminate()
                if not q.empty():
                    raise ProcessRaisedException(f"\n\n-- Process {i} terminated with the following error:\n{q.get()}",
                                                 i, p.pid)  # fmt: skip
                raise ProcessExitedException(f"process {i} terminated with exit code {p.exitcode}", i, p.pid,
                                             p.exitcode)  # fmt: skip
        return all(p.exitcode is not None for p in self.processes)


def start_processes(fn: Any, args: tuple = (), nprocs: int = 1, join: bool = True, daemon: bool = False,
                    start_method: str = "spawn") -> ProcessContext | None:  # fmt: skip
    """Run ``fn(i, *args)`` for ``i`` in ``range(nprocs)``, each in a process of ``start_method``."""
    ctx = multiprocessing.get_context(start_method)
    processes, queues = [], []
    for i in range(nprocs):
        q = ctx.SimpleQueue()
        p = ctx.Process(target=_wrap, args=(fn, i, args, q), daemon=daemon)
        p.start()
        processes.append(p)
        queues.append(q)
    context = ProcessContext(processes, queues)
    if not join:
        return context
    while not context.join():
        pass
    return None


def spawn(fn: Any, args: tuple = (), nprocs: int = 1, join: bool = True, daemon: bool = False,
          start_method: str = "spawn") -> ProcessContext | None:  # fmt: skip
    """:func:`start_processes` (PyTorch's ``torch.multiprocessing.spawn``)."""
    return start_processes(fn, args, nprocs, join, daemon, start_method)
