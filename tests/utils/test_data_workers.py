"""``DataLoader(num_workers=2)`` against PyTorch's: the same batches in the same order
(map-style and iterable datasets, in and out of order, persistent workers), each worker's
``get_worker_info()``, seeds and ``worker_init_fn``, and errors raised in a worker re-raised
in the main process naming it. Datasets are small and every loader has a timeout, so a
hang fails quickly."""

from __future__ import annotations

import os
import random
import time

import numpy as np
import pytest
from data_oracle import batches

import tinygrad_attn as tga
from tinygrad_attn.utils import data
from tinygrad_attn.utils.data import worker

torch = pytest.importorskip("torch")
import torch.utils.data as tdata  # noqa: E402

# (each test starts worker processes: seconds, the full suite's; CI runs it)
pytestmark = pytest.mark.slow

TIMEOUT = 30  # seconds: far above what a batch takes, and a hang still fails


def _info(lib_data):
    info = lib_data.get_worker_info()
    return (-1, 0, 0) if info is None else (info.id, info.num_workers, info.seed)


class _Rows:
    """Sample ``i``: a row of numbers and the id of the worker that read it."""

    mod = data

    def __init__(self, n):
        self.n = n

    def __getitem__(self, i):
        return {"x": np.arange(3.0) + i, "i": i, "worker": _info(self.mod)[0]}

    def __len__(self):
        return self.n


class Rows(_Rows, data.Dataset):
    pass


class TorchRows(_Rows, tdata.Dataset):
    mod = tdata


def _loaders(ours_ds, theirs_ds, **kw):
    kw.setdefault("timeout", TIMEOUT)
    return data.DataLoader(ours_ds, **kw), tdata.DataLoader(theirs_ds, **kw)


@pytest.mark.parametrize("batch_size,drop_last", [(3, False), (3, True), (None, False)])
def test_map_dataset_batches_and_workers_are_pytorchs(batch_size, drop_last):
    ours, theirs = _loaders(Rows(11), TorchRows(11), batch_size=batch_size, drop_last=drop_last, num_workers=2)
    assert len(ours) == len(theirs)
    got = batches(ours)
    assert got == batches(theirs)
    # the same batches as in the main process, but read by the workers in turn
    single = batches(data.DataLoader(Rows(11), batch_size=batch_size, drop_last=drop_last))
    assert got != single and len(got) == len(single)


def test_out_of_order_and_persistent_workers():
    rows = [np.arange(3.0) + i for i in range(9)]
    ours = data.DataLoader(rows, batch_size=2, num_workers=2, in_order=False, timeout=TIMEOUT)
    want = batches(tdata.DataLoader(rows, batch_size=2))
    # out of order, the batches are the same, but which worker reads which one depends on timing
    assert sorted(map(repr, batches(ours))) == sorted(map(repr, want))
    ours = data.DataLoader(Rows(9), batch_size=2, num_workers=2, persistent_workers=True, timeout=TIMEOUT)
    want = batches(tdata.DataLoader(TorchRows(9), batch_size=2, num_workers=2, timeout=TIMEOUT))
    first, second = batches(ours), batches(ours)
    assert first == second == want


class _Shards:
    """An iterable dataset whose workers read the items ``id, id + num_workers, ...``, or all
    of them (each worker its copy) when ``shard`` is off; worker 0's share is the longer."""

    mod = data

    def __init__(self, n, shard):
        self.n, self.shard = n, shard

    def __iter__(self):
        wid, nw, _ = _info(self.mod)
        items = range(self.n) if not self.shard or wid < 0 else range(wid, self.n, nw)
        return iter([(i, wid) for i in items])


class Shards(_Shards, data.IterableDataset):
    pass


class TorchShards(_Shards, tdata.IterableDataset):
    mod = tdata


@pytest.mark.parametrize("shard", [True, False])
@pytest.mark.parametrize("batch_size,drop_last", [(2, False), (2, True), (None, False)])
def test_iterable_dataset_with_workers_is_pytorchs(shard, batch_size, drop_last):
    ours, theirs = _loaders(Shards(7, shard), TorchShards(7, shard), batch_size=batch_size, drop_last=drop_last,
                            num_workers=2)  # fmt: skip
    assert batches(ours) == batches(theirs)


def test_persistent_workers_restart_an_iterable_dataset():
    ours, theirs = _loaders(Shards(5, True), TorchShards(5, True), batch_size=2, num_workers=2,
                            persistent_workers=True)  # fmt: skip
    want = batches(theirs)
    assert batches(ours) == batches(ours) == want == batches(theirs)


class _Seeds:
    """Sample: the worker's info, and a draw of each generator it was seeded with."""

    mod = data

    def __getitem__(self, i):
        return {"info": _info(self.mod), "random": random.random(), "numpy": np.random.rand()}

    def __len__(self):
        return 6


class Seeds(_Seeds, data.Dataset):
    pass


class TorchSeeds(_Seeds, tdata.Dataset):
    mod = tdata


def test_worker_seeds_are_base_seed_plus_id():
    loader = data.DataLoader(Seeds(), batch_size=None, num_workers=2, timeout=TIMEOUT)
    samples = list(loader)
    ids = [s["info"][0] for s in samples]
    seeds = [s["info"][2] for s in samples]
    assert ids == [0, 1] * 3 and all(s["info"][1] == 2 for s in samples)
    base = seeds[0]
    assert seeds == [base + i for i in ids]
    for wid in (0, 1):  # each worker's first draws: Python's and NumPy's generators seeded as PyTorch's seeds them
        np.random.seed(worker.numpy_seed(base, wid))
        assert samples[wid]["random"] == random.Random(base + wid).random()
        assert samples[wid]["numpy"] == np.random.rand()


def test_numpy_seeds_are_pytorchs():
    from torch.utils.data._utils.worker import _generate_state  # noqa: PLC0415 - PyTorch's seeding, the oracle

    rng = np.random.default_rng(1)
    for base in [0, 1, 2**32 - 1, 2**32, 2**63 - 1, *rng.integers(0, 2**63 - 1, 20).tolist()]:
        for wid in range(4):
            assert worker.numpy_seed(base, wid) == _generate_state(base, wid)


def _init_fn(worker_id):
    os.environ["DATA_TEST_WORKER"] = f"init{worker_id}"


class EnvRows(data.Dataset):
    def __getitem__(self, i):
        return os.environ.get("DATA_TEST_WORKER", "none")

    def __len__(self):
        return 4


def test_worker_init_fn_runs_in_each_worker():
    loader = data.DataLoader(EnvRows(), batch_size=None, num_workers=2, worker_init_fn=_init_fn, timeout=TIMEOUT)
    assert list(loader) == ["init0", "init1", "init0", "init1"]
    assert "DATA_TEST_WORKER" not in os.environ and data.get_worker_info() is None


class NeedsTwoArguments(Exception):
    def __init__(self, a, b):
        super().__init__(a, b)


class _Failing:
    mod = data
    errors = {3: lambda: ValueError("bad sample 3"), 4: lambda: KeyError("missing"), 5: lambda: NeedsTwoArguments(1, 2)}

    def __init__(self, at):
        self.at = at

    def __getitem__(self, i):
        if i == self.at:
            raise self.errors[i]()
        return i

    def __len__(self):
        return 8


class Failing(_Failing, data.Dataset):
    pass


class TorchFailing(_Failing, tdata.Dataset):
    mod = tdata


@pytest.mark.parametrize("at", [3, 4, 5])
def test_a_workers_error_is_raised_in_the_main_process(at):
    ours, theirs = (iter(loader) for loader in _loaders(Failing(at), TorchFailing(at), batch_size=2, num_workers=2))
    with pytest.raises(Exception) as t:
        list(theirs)
    with pytest.raises(t.type) as o:
        list(ours)
    for it in (ours, theirs):  # now: the traceback keeps the iterators until a garbage collection
        it._shutdown_workers()
    assert f"in DataLoader worker process {at // 2 % 2}" in str(o.value) and "Traceback" in str(o.value)
    assert str(o.value).splitlines()[0] == str(t.value).splitlines()[0]


def test_an_error_in_worker_init_fn_is_raised():
    def init(worker_id):
        raise OSError(f"no file for worker {worker_id}")

    with pytest.raises(OSError, match="in DataLoader worker process 0"):
        list(data.DataLoader(Rows(4), batch_size=2, num_workers=2, worker_init_fn=init, timeout=TIMEOUT))


class Slow(data.Dataset):
    def __getitem__(self, i):
        time.sleep(1)
        return i

    def __len__(self):
        return 2


def test_timeout():
    it = iter(data.DataLoader(Slow(), num_workers=1, timeout=0.2))
    with pytest.raises(RuntimeError, match="DataLoader timed out after 0.2 seconds"):
        next(it)
    it._shutdown_workers()


class Dying(data.Dataset):
    def __getitem__(self, i):
        os._exit(1)

    def __len__(self):
        return 2


def test_a_worker_that_dies_is_reported(monkeypatch):
    monkeypatch.setattr(worker, "STATUS_CHECK_INTERVAL", 0.2)
    with pytest.raises(RuntimeError, match=r"DataLoader worker \(pid\(s\) \d+\) exited unexpectedly"):
        list(data.DataLoader(Dying(), num_workers=1))


def test_workers_are_ended_after_a_pass():
    it = iter(data.DataLoader(Rows(4), batch_size=2, num_workers=2, timeout=TIMEOUT))
    procs = list(it._workers)
    assert all(p.is_alive() for p in procs)
    list(it)
    assert not any(p.is_alive() for p in procs)


def test_tensors_come_back_from_workers():
    x = tga.arange(12.0).reshape(6, 2)
    ours = data.DataLoader(data.TensorDataset(x, tga.arange(6)), batch_size=4, num_workers=2, timeout=TIMEOUT)
    theirs = tdata.DataLoader(tdata.TensorDataset(torch.arange(12.0).reshape(6, 2), torch.arange(6)), batch_size=4,
                              num_workers=2, timeout=TIMEOUT)  # fmt: skip
    assert batches(ours) == batches(theirs)


@pytest.mark.parametrize("method", ["spawn", pytest.param("forkserver", marks=pytest.mark.slow)])
def test_workers_started_without_fork(method):
    """Workers that import the library afresh and receive the dataset pickled (PyTorch's
    default from Python 3.14 on)."""
    x = tga.arange(12.0).reshape(6, 2)
    ours = data.DataLoader(data.TensorDataset(x, tga.arange(6)), batch_size=4, num_workers=2, timeout=TIMEOUT,
                           multiprocessing_context=method)  # fmt: skip
    want = batches(data.DataLoader(data.TensorDataset(x, tga.arange(6)), batch_size=4))
    assert batches(ours) == want


def test_more_workers_than_cores_warns():
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    with pytest.warns(UserWarning, match=f"create {cores + 1} worker processes"):
        data.DataLoader([1], num_workers=cores + 1)
