"""Worker processes, as PyTorch's: each worker seeds Python's ``random`` and the library's
generator with ``base_seed + worker_id`` and NumPy's legacy generator with a
``SeedSequence`` of both, runs ``worker_init_fn(worker_id)``, then fetches the keys its
queue brings and puts ``(task, value)`` on the shared result queue. An exception there
travels as an :class:`ExceptionWrapper`, re-raised in the main process with its class and
the worker's traceback.

>>> def __iter__(self):  # an IterableDataset sharing its stream among workers  # doctest: +SKIP
...     info = get_worker_info()
...     return iter(self.items[info.id :: info.num_workers] if info else self.items)
"""

from __future__ import annotations

import os
import queue
import random
import sys
import traceback
from dataclasses import dataclass
from typing import Any

import numpy as np

from ... import random as library_random
from ...runtime import threads
from .fetch import create_fetcher

#: seconds between the main process's checks that its workers are still alive (PyTorch's interval)
STATUS_CHECK_INTERVAL = 5.0
#: seconds between an idle worker's checks that it is still wanted: the main process may be
#: gone, or ending the workers from a garbage collection that has already stopped the
#: thread that would deliver its ``None`` to them
IDLE_CHECK_INTERVAL = 0.1


@dataclass
class WorkerInfo:
    """What a worker knows of itself: ``id``, ``num_workers``, ``seed`` and its own copy
    of the ``dataset``."""

    id: int
    num_workers: int
    seed: int
    dataset: Any


_worker_info: WorkerInfo | None = None


def get_worker_info() -> WorkerInfo | None:
    """The calling worker's :class:`WorkerInfo`; ``None`` in the main process."""
    return _worker_info


@dataclass(frozen=True)
class IterableEnd:
    """Sent by a worker whose copy of an iterable dataset has no batch left."""

    worker_id: int


@dataclass(frozen=True)
class ResumeIteration:
    """Sent to persistent workers at a new epoch: start the dataset again."""


class KeyErrorMessage(str):
    """A ``KeyError``'s message printed as it is (``KeyError`` would show its ``repr``)."""

    def __repr__(self) -> str:
        return self


class ExceptionWrapper:
    """An exception caught in a worker, carried to the main process and raised there."""

    def __init__(self, where: str) -> None:
        exc_type, exc, tb = sys.exc_info()
        self.exc_type = exc_type
        self.exc_msg = "".join(traceback.format_exception(exc_type, exc, tb))
        self.where = where

    def reraise(self) -> None:
        msg = f"Caught {self.exc_type.__name__} {self.where}.\nOriginal {self.exc_msg}"
        if self.exc_type is KeyError:
            msg = KeyErrorMessage(msg)
        try:
            exc = self.exc_type(msg)
        except Exception:
            raise RuntimeError(msg) from None  # a class that will not take one message
        raise exc


def numpy_seed(base_seed: int, worker_id: int) -> list[int]:
    """The four words NumPy's legacy generator is seeded with in worker ``worker_id``."""
    words = [worker_id, base_seed & 0xFFFF_FFFF, base_seed >> 32, 0]
    return np.random.SeedSequence(words).generate_state(4).tolist()


def _seed_worker(base_seed: int, worker_id: int) -> int:
    seed = base_seed + worker_id
    random.seed(seed)
    library_random.manual_seed(seed)
    np.random.seed(numpy_seed(base_seed, worker_id))
    return seed


def worker_loop(iterable: bool, dataset: Any, index_queue: Any, data_queue: Any, done_event: Any,
                auto_collation: bool, collate_fn: Any, drop_last: bool, base_seed: int, init_fn: Any,
                worker_id: int, num_workers: int) -> None:  # fmt: skip
    """The body of worker process ``worker_id``: ``None`` on its queue ends it."""
    global _worker_info
    try:
        try:  # the workers share the cores with the main process: one BLAS thread each, as PyTorch's
            threads.set_num_threads(1)
        except (ImportError, RuntimeError):  # no threadpoolctl, or a NumPy without a BLAS thread pool
            pass
        seed = _seed_worker(base_seed, worker_id)
        _worker_info = WorkerInfo(id=worker_id, num_workers=num_workers, seed=seed, dataset=dataset)
        where = f"in DataLoader worker process {worker_id}"
        init_error = None
        try:
            if init_fn is not None:
                init_fn(worker_id)
            fetcher = create_fetcher(iterable, dataset, auto_collation, collate_fn, drop_last)
        except Exception:
            init_error = ExceptionWrapper(where)
        ended = False
        parent = os.getppid()
        while os.getppid() == parent:  # the main process is gone: stop
            try:
                task = index_queue.get(timeout=IDLE_CHECK_INTERVAL)
            except queue.Empty:
                if done_event.is_set():
                    break
                continue
            if isinstance(task, ResumeIteration):
                data_queue.put((task, None))
                ended = False
                fetcher = create_fetcher(iterable, dataset, auto_collation, collate_fn, drop_last)
                continue
            if task is None:
                break
            if done_event.is_set() or ended:
                continue
            idx, key = task
            if init_error is not None:
                data, init_error = init_error, None
            else:
                try:
                    data = fetcher.fetch(key)
                except StopIteration:
                    if not iterable:
                        data = ExceptionWrapper(where)
                    else:
                        data, ended = IterableEnd(worker_id), True
                except Exception:
                    data = ExceptionWrapper(where)
            data_queue.put((idx, data))
            del data, key, task
    except KeyboardInterrupt:
        pass
    if done_event.is_set():
        data_queue.cancel_join_thread()
        data_queue.close()
