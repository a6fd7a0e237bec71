"""Fetchers: how one key from the sampler becomes one collated value, in the main process
or in a worker. A map-style dataset is read at the keys (a whole batch through
``__getitems__`` where the dataset has it); an iterable one is read by ``next`` on one
iterator, the keys only counting the samples of a batch."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


class MapFetcher:
    def __init__(self, dataset: Any, auto_collation: bool, collate_fn: Callable, drop_last: bool) -> None:
        self.dataset, self.auto_collation, self.collate_fn = dataset, auto_collation, collate_fn

    def fetch(self, key: Any) -> Any:
        if not self.auto_collation:
            return self.collate_fn(self.dataset[key])
        getitems = getattr(self.dataset, "__getitems__", None)
        samples = getitems(key) if getitems else [self.dataset[i] for i in key]
        return self.collate_fn(samples)


class IterableFetcher:
    def __init__(self, dataset: Any, auto_collation: bool, collate_fn: Callable, drop_last: bool) -> None:
        self.auto_collation, self.collate_fn, self.drop_last = auto_collation, collate_fn, drop_last
        self.samples = iter(dataset)
        self.ended = False

    def fetch(self, key: Any) -> Any:
        """Raises ``StopIteration`` when the stream has no (full, with ``drop_last``) batch left."""
        if self.ended:
            raise StopIteration
        if not self.auto_collation:
            return self.collate_fn(next(self.samples))
        batch = []
        for _ in key:
            try:
                batch.append(next(self.samples))
            except StopIteration:
                self.ended = True
                break
        if not batch or (self.drop_last and len(batch) < len(key)):
            raise StopIteration
        return self.collate_fn(batch)


def create_fetcher(iterable: bool, dataset: Any, auto_collation: bool, collate_fn: Callable, drop_last: bool) -> Any:
    kind = IterableFetcher if iterable else MapFetcher
    return kind(dataset, auto_collation, collate_fn, drop_last)
