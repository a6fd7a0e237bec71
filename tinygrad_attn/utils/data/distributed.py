"""``DistributedSampler``, as PyTorch's: replica ``rank`` of ``num_replicas`` reads every
``num_replicas``-th key of one order shared by all replicas (a permutation seeded with
``seed + epoch``, or ``0, 1, ...``), padded by repeating keys (or trimmed, ``drop_last``) so
each replica gets the same number.

>>> sampler = DistributedSampler(ds, num_replicas=4, rank=1, seed=0)  # doctest: +SKIP
>>> sampler.set_epoch(epoch)  # a new order each epoch  # doctest: +SKIP
"""

from __future__ import annotations

import importlib
import math
from collections.abc import Iterator
from typing import Any

from . import _random
from .sampler import Sampler


def _process_group(what: str) -> int:
    """The world size or rank of the default process group (``tga.distributed``), where the
    library has one initialised."""
    try:
        dist: Any = importlib.import_module("tinygrad_attn.distributed")
    except ImportError:
        dist = None
    if dist is None or not dist.is_available():
        raise RuntimeError("Requires distributed package to be available")
    return dist.get_world_size() if what == "world_size" else dist.get_rank()


class DistributedSampler(Sampler[int]):
    """The keys of replica ``rank`` among ``num_replicas`` (default: the process group's)."""

    def __init__(self, dataset: Any, num_replicas: int | None = None, rank: int | None = None, shuffle: bool = True,
                 seed: int = 0, drop_last: bool = False) -> None:  # fmt: skip
        if num_replicas is None:
            num_replicas = _process_group("world_size")
        if rank is None:
            rank = _process_group("rank")
        if rank >= num_replicas or rank < 0:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval [0, {num_replicas - 1}]")
        self.dataset = dataset
        self.num_replicas = num_replicas
        self.rank = rank
        self.epoch = 0
        self.drop_last = drop_last
        n = len(dataset)
        if drop_last and n % num_replicas:
            self.num_samples = math.ceil((n - num_replicas) / num_replicas)
        else:
            self.num_samples = math.ceil(n / num_replicas)
        self.total_size = self.num_samples * num_replicas
        self.shuffle = shuffle
        self.seed = seed

    def __iter__(self) -> Iterator[int]:
        n = len(self.dataset)
        keys = _random.randperm(n, _random.new_generator(self.seed + self.epoch)) if self.shuffle else list(range(n))
        if self.drop_last:
            keys = keys[: self.total_size]
        else:  # the first keys again (as often as needed) until every replica has as many
            pad = self.total_size - n
            keys += (keys * math.ceil(pad / n))[:pad] if pad > n else keys[:pad]
        return iter(keys[self.rank : self.total_size : self.num_replicas])

    def __len__(self) -> int:
        return self.num_samples

    def set_epoch(self, epoch: int) -> None:
        """Use the order of ``epoch`` (with ``shuffle``, a different one each epoch)."""
        self.epoch = epoch
