"""``DataLoader``, as PyTorch's: batches from a dataset through a sampler and a collate
function, in the main process (``num_workers=0``) or in worker processes.

With workers, the main process draws the keys and hands them round-robin to the workers
(``prefetch_factor`` tasks each in flight), and returns the results in the order the keys
were drawn (``in_order=True``), so the batches are those of ``num_workers=0``. The loader's
random draws are PyTorch's, in PyTorch's order: each iterator first draws the workers'
``base_seed`` from ``generator``, then the sampler draws on the first batch.

>>> loader = DataLoader(TensorDataset(x, y), batch_size=32, shuffle=True)  # doctest: +SKIP
>>> for xb, yb in loader:  # doctest: +SKIP
...     loss = F.cross_entropy(model(xb), yb)
"""

from __future__ import annotations

import itertools
import math
import multiprocessing
import os
import queue
import sys
from collections.abc import Callable, Iterable
from typing import Any

from ...engine.warn import warn as _user_warn
from . import _random, worker
from .collate import default_collate, default_convert
from .dataset import Dataset, IterableDataset
from .fetch import create_fetcher
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler, _InfiniteConstantSampler

#: attributes fixed once the loader is built (PyTorch's list)
_FROZEN = ("batch_size", "batch_sampler", "sampler", "drop_last", "dataset", "persistent_workers")


class DataLoader:
    """Iterate over ``dataset`` in batches of ``batch_size`` (``None``: samples one by one,
    converted by ``default_convert``). Arguments and their conflicts are PyTorch's:
    ``shuffle`` or ``sampler``; ``batch_sampler`` excludes ``batch_size``, ``shuffle``,
    ``sampler`` and ``drop_last``; an :class:`IterableDataset` takes no sampler."""

    def __init__(self, dataset: Dataset, batch_size: int | None = 1, shuffle: bool | None = None,
                 sampler: Sampler | Iterable | None = None, batch_sampler: Sampler | Iterable | None = None,
                 num_workers: int = 0, collate_fn: Callable | None = None, pin_memory: bool = False,
                 drop_last: bool = False, timeout: float = 0, worker_init_fn: Callable | None = None,
                 multiprocessing_context: Any = None, generator: Any = None, *, prefetch_factor: int | None = None,
                 persistent_workers: bool = False, pin_memory_device: str = "", in_order: bool = True) -> None:  # fmt: skip
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 to disable multiprocessing.")
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError(
                "prefetch_factor option could only be specified in multiprocessing. let num_workers > 0 to enable "
                "multiprocessing, otherwise set prefetch_factor to None."
            )
        if num_workers > 0 and prefetch_factor is None:
            prefetch_factor = 2
        elif prefetch_factor is not None and prefetch_factor < 0:
            raise ValueError("prefetch_factor option should be non-negative")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")

        self._iterable = isinstance(dataset, IterableDataset)
        if self._iterable:
            # a stream has no keys to choose among: only its batch size is the loader's
            if shuffle not in (False, None):
                raise ValueError(
                    f"DataLoader with IterableDataset: expected unspecified shuffle option, but got shuffle={shuffle}"
                )
            if sampler is not None:
                raise ValueError(
                    f"DataLoader with IterableDataset: expected unspecified sampler option, but got sampler={sampler}"
                )
            if batch_sampler is not None:
                raise ValueError(
                    "DataLoader with IterableDataset: expected unspecified batch_sampler option, "
                    f"but got batch_sampler={batch_sampler}"
                )
        else:
            shuffle = bool(shuffle)
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError(
                    "batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, and drop_last"
                )
            batch_size, drop_last = None, False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually exclusive with drop_last")

        if sampler is None:
            if self._iterable:
                sampler = _InfiniteConstantSampler()
            elif shuffle:
                sampler = RandomSampler(dataset, generator=generator)  # type: ignore[arg-type]
            else:
                sampler = SequentialSampler(dataset)  # type: ignore[arg-type]
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)

        self.dataset = dataset
        self.num_workers = num_workers
        self.multiprocessing_context = multiprocessing_context
        self.prefetch_factor = prefetch_factor
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.in_order = in_order
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.generator = generator
        self.collate_fn = collate_fn or (default_collate if batch_sampler is not None else default_convert)
        self.persistent_workers = persistent_workers
        self._len_called: int | None = None  # len() of an iterable dataset, to warn when it runs longer
        self._iterator: _MultiProcessIter | None = None
        self._initialized = True
        self.check_worker_number_rationality()

    def check_worker_number_rationality(self) -> None:
        """Warn when the loader would start more workers than the process may use cores."""
        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
        if cores and self.num_workers > cores:
            _user_warn(
                f"This DataLoader will create {self.num_workers} worker processes in total. Our suggested max number "
                f"of worker in current system is {cores}, which is smaller than what this DataLoader is going to "
                "create. Please be aware that excessive worker creation might get DataLoader running slow or even "
                "freeze, lower the worker number to avoid potential slowness/freeze if necessary.",
            )

    @property
    def multiprocessing_context(self) -> Any:
        """How worker processes start: ``None`` (the platform's default), or a
        ``multiprocessing`` context or the name of its start method (``"fork"``, ``"spawn"``, ...)."""
        return self.__multiprocessing_context

    @multiprocessing_context.setter
    def multiprocessing_context(self, ctx: Any) -> None:
        if ctx is not None:
            if self.num_workers == 0:
                raise ValueError(
                    "multiprocessing_context can only be used with multi-process loading (num_workers > 0), "
                    f"but got num_workers={self.num_workers}"
                )
            if isinstance(ctx, str):
                methods = multiprocessing.get_all_start_methods()
                if ctx not in methods:
                    raise ValueError(
                        f"multiprocessing_context option should specify a valid start method in {methods!r}, "
                        f"but got multiprocessing_context={ctx!r}"
                    )
                ctx = multiprocessing.get_context(ctx)
            if not isinstance(ctx, multiprocessing.context.BaseContext):
                raise TypeError(
                    "multiprocessing_context option should be a valid context object or a string specifying the "
                    f"start method, but got multiprocessing_context={ctx}"
                )
        self.__multiprocessing_context = ctx

    def __setattr__(self, attr: str, val: Any) -> None:
        if attr in _FROZEN and self.__dict__.get("_initialized"):
            raise ValueError(f"{attr} attribute should not be set after {type(self).__name__} is initialized")
        super().__setattr__(attr, val)

    @property
    def _auto_collation(self) -> bool:
        return self.batch_sampler is not None

    @property
    def _index_sampler(self) -> Any:
        return self.batch_sampler if self._auto_collation else self.sampler

    def __iter__(self) -> _BaseIter:
        if self.num_workers == 0:
            return _SingleProcessIter(self)
        self.check_worker_number_rationality()
        if not self.persistent_workers:
            return _MultiProcessIter(self)
        # persistent workers live as long as the loader: a new epoch resets the same iterator
        if self._iterator is None:
            self._iterator = _MultiProcessIter(self)
        else:
            self._iterator._reset(self)
        return self._iterator

    def __len__(self) -> int:
        if not self._iterable:
            return len(self._index_sampler)
        n = self._len_called = len(self.dataset)  # type: ignore[arg-type]
        if self.batch_size is None:
            return n
        return n // self.batch_size if self.drop_last else math.ceil(n / self.batch_size)


class _BaseIter:
    def __init__(self, loader: DataLoader) -> None:
        self._dataset = loader.dataset
        self._iterable = loader._iterable
        self._auto_collation = loader._auto_collation
        self._drop_last = loader.drop_last
        self._index_sampler = loader._index_sampler
        self._num_workers = loader.num_workers
        self._timeout = loader.timeout
        self._collate_fn = loader.collate_fn
        self._len_called = loader._len_called
        if loader.pin_memory:
            _user_warn(
                "'pin_memory' argument is set as true but no accelerator is found, "
                "then device pinned memory won't be used.",
            )
        self._sampler_iter = iter(self._index_sampler)
        self._base_seed = _random.random_seed(loader.generator)
        self._num_yielded = 0

    def __iter__(self) -> _BaseIter:
        return self

    def _reset(self, loader: DataLoader) -> None:
        self._sampler_iter = iter(self._index_sampler)
        self._num_yielded = 0
        self._len_called = loader._len_called

    def _next_data(self) -> Any:
        raise NotImplementedError

    def __next__(self) -> Any:
        data = self._next_data()
        self._num_yielded += 1
        if self._iterable and self._len_called is not None and self._num_yielded > self._len_called:
            msg = (
                f"Length of IterableDataset {self._dataset} was reported to be {self._len_called} (when accessing "
                f"len(dataloader)), but {self._num_yielded} samples have been fetched. "
            )
            if self._num_workers > 0:
                msg += "With workers, configure each worker's copy of the dataset (get_worker_info())."
            _user_warn(msg)
        return data

    def __len__(self) -> int:
        return len(self._index_sampler)

    def __getstate__(self) -> Any:
        raise NotImplementedError(f"{type(self).__name__} cannot be pickled")


class _SingleProcessIter(_BaseIter):
    def __init__(self, loader: DataLoader) -> None:
        super().__init__(loader)
        if self._timeout != 0:  # (nothing to wait for in the main process; PyTorch refuses it here too)
            raise AssertionError("_SingleProcessDataLoaderIter requires timeout == 0")
        self._fetcher = create_fetcher(
            self._iterable, self._dataset, self._auto_collation, self._collate_fn, self._drop_last
        )

    def _next_data(self) -> Any:
        key = next(self._sampler_iter)
        return self._fetcher.fetch(key)


class _MultiProcessIter(_BaseIter):
    """Tasks are numbered as sent; ``_task_info[i]`` is ``(worker,)`` while task ``i`` is out
    and ``(worker, value)`` once it came back early; ``_rcvd_idx`` is the next to return."""

    def __init__(self, loader: DataLoader) -> None:
        super().__init__(loader)
        self._prefetch_factor = loader.prefetch_factor
        self._in_order = loader.in_order
        self._persistent = loader.persistent_workers
        ctx = loader.multiprocessing_context or multiprocessing.get_context()
        self._result_queue = ctx.Queue()
        self._done_event = ctx.Event()
        self._shutdown = False
        self._index_queues = []
        self._workers = []
        for i in range(self._num_workers):
            index_queue = ctx.Queue()
            index_queue.cancel_join_thread()
            args = (self._iterable, self._dataset, index_queue, self._result_queue, self._done_event,
                    self._auto_collation, self._collate_fn, self._drop_last, self._base_seed,
                    loader.worker_init_fn, i, self._num_workers)  # fmt: skip
            w = ctx.Process(target=worker.worker_loop, args=args, daemon=True)
            w.start()
            self._index_queues.append(index_queue)
            self._workers.append(w)
        self._reset(loader, first_iter=True)

    def _reset(self, loader: DataLoader, first_iter: bool = False) -> None:
        super()._reset(loader)
        self._send_idx = 0
        self._rcvd_idx = 0
        self._task_info: dict[int, tuple] = {}
        self._tasks_outstanding = 0
        self._workers_status = [True] * self._num_workers
        self._workers_num_tasks = [0] * self._num_workers
        self._worker_cycle = itertools.cycle(range(self._num_workers))
        if not first_iter:  # persistent workers: restart each one's dataset, and wait until all have
            for q in self._index_queues:
                q.put(worker.ResumeIteration())
            waiting = self._num_workers
            while waiting:
                idx, _ = self._get_data()
                waiting -= isinstance(idx, worker.ResumeIteration)
        for _ in range(self._prefetch_factor * self._num_workers):
            self._try_put_index()

    def _try_get_data(self, timeout: float | None = None) -> tuple[bool, Any]:
        """``(True, result)``, or ``(False, None)`` after ``timeout`` seconds (default: the
        status check interval) with every worker still alive."""
        try:
            return True, self._result_queue.get(timeout=timeout or worker.STATUS_CHECK_INTERVAL)
        except queue.Empty as e:
            dead = [w for i, w in enumerate(self._workers) if self._workers_status[i] and not w.is_alive()]
            for i, w in enumerate(self._workers):
                if w in dead:
                    self._mark_worker_as_unavailable(i)
            if dead:
                pids = ", ".join(str(w.pid) for w in dead)
                raise RuntimeError(f"DataLoader worker (pid(s) {pids}) exited unexpectedly") from e
            return False, None

    def _get_data(self) -> Any:
        if self._timeout > 0:
            ok, data = self._try_get_data(self._timeout)
            if not ok:
                raise RuntimeError(f"DataLoader timed out after {self._timeout} seconds")
            return data
        while True:
            ok, data = self._try_get_data()
            if ok:
                return data

    def _next_data(self) -> Any:
        while True:
            # skip the tasks of workers that ended (an iterable dataset's) before answering them
            while self._rcvd_idx < self._send_idx:
                info = self._task_info.get(self._rcvd_idx)
                if info and (len(info) == 2 or self._workers_status[info[0]]):
                    break
                self._task_info.pop(self._rcvd_idx, None)
                self._rcvd_idx += 1
            else:
                if not self._persistent:
                    self._shutdown_workers()
                raise StopIteration
            if len(self._task_info[self._rcvd_idx]) == 2:  # it came back while an earlier one was awaited
                worker_id, data = self._task_info.pop(self._rcvd_idx)
                self._rcvd_idx += 1
                return self._process_data(data, worker_id)
            idx, data = self._get_data()
            self._tasks_outstanding -= 1
            if isinstance(data, worker.IterableEnd):
                if self._persistent:
                    self._workers_status[data.worker_id] = False
                else:
                    self._mark_worker_as_unavailable(data.worker_id)
                self._try_put_index()
                continue
            if idx == self._rcvd_idx or not self._in_order:
                worker_id = self._task_info.pop(idx)[0]
                if idx == self._rcvd_idx:
                    self._rcvd_idx += 1
                return self._process_data(data, worker_id)
            self._task_info[idx] += (data,)

    def _try_put_index(self) -> None:
        max_tasks = self._prefetch_factor * self._num_workers
        try:
            key = next(self._sampler_iter)
        except StopIteration:
            return
        for _ in range(self._num_workers):  # the next active worker, if any
            w = next(self._worker_cycle)
            if self._workers_status[w] and (
                self._in_order or self._workers_num_tasks[w] < max_tasks // sum(self._workers_status)
            ):
                break
        else:
            return
        self._index_queues[w].put((self._send_idx, key))
        self._task_info[self._send_idx] = (w,)
        self._workers_num_tasks[w] += 1
        self._tasks_outstanding += 1
        self._send_idx += 1

    def _process_data(self, data: Any, worker_id: int) -> Any:
        self._workers_num_tasks[worker_id] -= 1
        self._try_put_index()
        if isinstance(data, worker.ExceptionWrapper):
            data.reraise()
        return data

    def _mark_worker_as_unavailable(self, worker_id: int) -> None:
        # the worker leaves its loop when it reads None; it is joined at shutdown
        self._index_queues[worker_id].put(None)
        self._workers_status[worker_id] = False

    def _shutdown_workers(self) -> None:
        if self._shutdown or not hasattr(self, "_workers"):
            return
        self._shutdown = True
        try:
            self._done_event.set()
            if not hasattr(self, "_workers_status"):  # a worker failed to start
                self._workers_status = [True] * len(self._workers)
            for i in range(len(self._workers)):
                if self._persistent or self._workers_status[i]:
                    self._mark_worker_as_unavailable(i)
            for w in self._workers:
                w.join(timeout=worker.STATUS_CHECK_INTERVAL)
            for q in self._index_queues:
                q.cancel_join_thread()
                q.close()
        finally:
            for w in self._workers:
                if w.is_alive():
                    w.terminate()
                    w.join(timeout=worker.STATUS_CHECK_INTERVAL)

    def __del__(self) -> None:
        if not sys.is_finalizing():  # (at exit, multiprocessing ends its daemon workers itself)
            self._shutdown_workers()
