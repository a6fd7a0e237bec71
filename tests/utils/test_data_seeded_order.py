"""The same seed gives PyTorch's order: the shuffled batches, every random sampler (with and
without replacement, with a generator and from the global one), ``random_split``, and the
workers' seeds and draws, each against PyTorch's for several seeds and sizes."""

from __future__ import annotations

import random

import numpy as np
import pytest
from data_oracle import batches

import tinygrad_attn as tga
from tinygrad_attn.utils import data

torch = pytest.importorskip("torch")
import torch.utils.data as tdata  # noqa: E402

SEEDS = [0, 1, 2024]
TIMEOUT = 30


def _with_seed(seed: int, lib, mod, make, use_generator: bool):
    """``make(mod, generator)`` iterated after seeding ``lib``'s global generator; with
    ``use_generator`` a generator seeded with ``seed`` is passed, and the global one is seeded
    with another number, which then must not matter."""
    lib.manual_seed(seed + 1000 if use_generator else seed)
    g = lib.Generator().manual_seed(seed) if use_generator else None
    return make(mod, g)


def _assert_same(make, seed, use_generator, passes=2):
    """Equal results for ours and PyTorch's, over ``passes`` passes (each pass draws anew)."""
    ours = _with_seed(seed, tga, data, make, use_generator)
    theirs = _with_seed(seed, torch, tdata, make, use_generator)
    for _ in range(passes):
        assert batches(ours) == batches(theirs)


SAMPLERS = {
    "random": lambda d, g, n: d.RandomSampler(range(n), generator=g),
    "random_fewer": lambda d, g, n: d.RandomSampler(range(n), num_samples=max(1, n // 3), generator=g),
    "random_more": lambda d, g, n: d.RandomSampler(range(n), num_samples=2 * n + 3, generator=g),
    "replacement": lambda d, g, n: d.RandomSampler(range(n), replacement=True, generator=g),
    "replacement_many": lambda d, g, n: d.RandomSampler(range(n), replacement=True, num_samples=70, generator=g),
    "subset": lambda d, g, n: d.SubsetRandomSampler(list(range(100, 100 + 2 * n, 2)), generator=g),
    "weighted": lambda d, g, n: d.WeightedRandomSampler(np.linspace(0.5, 3.0, n), 2 * n, generator=g),
    "weighted_unique": lambda d, g, n: d.WeightedRandomSampler(
        np.linspace(0.5, 3.0, n).tolist(), n - 1, replacement=False, generator=g
    ),
}


@pytest.mark.parametrize("use_generator", [False, True])
@pytest.mark.parametrize("n", [5, 33])
@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("name", SAMPLERS)
def test_samplers_draw_pytorchs_keys(name, seed, n, use_generator):
    _assert_same(lambda d, g: SAMPLERS[name](d, g, n), seed, use_generator)


@pytest.mark.parametrize("use_generator", [False, True])
@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("n,lengths", [(10, [3, 7]), (17, [0.5, 0.3, 0.2]), (9, [0.25, 0.25, 0.25, 0.25])])
def test_random_split_is_pytorchs(n, lengths, seed, use_generator):
    def make(d, g):
        splits = d.random_split(range(n), lengths, **({"generator": g} if g is not None else {}))
        return [[s.indices for s in splits]]

    _assert_same(make, seed, use_generator, passes=1)


def _xy(lib, n):
    rng = np.random.default_rng(n)
    return lib.tensor(rng.normal(size=(n, 2)).astype("float32")), lib.tensor(np.arange(n))


@pytest.mark.parametrize("use_generator", [False, True])
@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("n,batch_size,drop_last", [(10, 3, False), (10, 3, True), (16, 4, False), (7, 1, False)])
def test_shuffled_batches_are_pytorchs(n, batch_size, drop_last, seed, use_generator):
    def make(d, g):
        lib = tga if d is data else torch
        return d.DataLoader(d.TensorDataset(*_xy(lib, n)), batch_size=batch_size, shuffle=True, drop_last=drop_last,
                            generator=g)  # fmt: skip

    _assert_same(make, seed, use_generator, passes=3)


def test_the_loader_draws_its_base_seed_before_the_sampler():
    """Only the draws' order tells the two apart: the base seed first, then the sampler's seed."""
    for lib, d in ((tga, data), (torch, tdata)):
        lib.manual_seed(5)
        list(d.DataLoader(range(6), shuffle=True))
        after = lib.empty((), dtype=lib.int64).random_().item()
        lib.manual_seed(5)
        lib.empty((), dtype=lib.int64).random_()
        lib.empty((), dtype=lib.int64).random_()
        assert lib.empty((), dtype=lib.int64).random_().item() == after


class _Draws:
    """Each sample: the worker's seed and a draw of each generator a worker seeds."""

    mod = data
    lib = tga

    def __getitem__(self, i):
        info = self.mod.get_worker_info()
        return {"i": i, "seed": info.seed, "random": random.random(), "numpy": float(np.random.rand()),
                "tensor": self.lib.rand(2)}  # fmt: skip

    def __len__(self):
        return 8


class Draws(_Draws, data.Dataset):
    pass


class TorchDraws(_Draws, tdata.Dataset):
    mod = tdata
    lib = torch


@pytest.mark.parametrize("use_generator", [False, True])
@pytest.mark.parametrize("seed", [0, 7])
def test_workers_seeds_and_draws_are_pytorchs(seed, use_generator):
    def make(d, g):
        ds = Draws() if d is data else TorchDraws()
        return d.DataLoader(ds, batch_size=3, shuffle=True, num_workers=2, generator=g, timeout=TIMEOUT)

    _assert_same(make, seed, use_generator, passes=1)


@pytest.mark.parametrize("shuffle,drop_last", [(True, False), (False, False), (True, True), (False, True)])
@pytest.mark.parametrize("n,replicas", [(10, 1), (10, 3), (11, 4), (2, 5), (0, 2)])
def test_distributed_sampler_is_pytorchs(n, replicas, shuffle, drop_last):
    for rank in range(replicas):
        kw = {"num_replicas": replicas, "rank": rank, "shuffle": shuffle, "drop_last": drop_last, "seed": n}
        ours, theirs = data.DistributedSampler(range(n), **kw), tdata.DistributedSampler(range(n), **kw)
        for epoch in (0, 1):
            ours.set_epoch(epoch)
            theirs.set_epoch(epoch)
            assert list(ours) == list(theirs) and len(ours) == len(theirs)


@pytest.mark.parametrize("rank", [-1, 3])
def test_distributed_sampler_checks_the_rank(rank):
    with pytest.raises(ValueError, match="Invalid rank"):
        tdata.DistributedSampler(range(4), num_replicas=3, rank=rank)
    with pytest.raises(ValueError, match="Invalid rank"):
        data.DistributedSampler(range(4), num_replicas=3, rank=rank)
