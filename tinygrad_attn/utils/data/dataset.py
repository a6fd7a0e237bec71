"""Datasets, as PyTorch's ``torch.utils.data``: the map-style :class:`Dataset` (``ds[i]``,
``len(ds)``), the iterable-style :class:`IterableDataset` (``iter(ds)``), and the ways to
build one from others (tensors, subsets, concatenation, chaining, stacking, ``random_split``).

>>> ds = TensorDataset(tga.arange(6.0).reshape(3, 2), tga.tensor([0, 1, 0]))  # doctest: +SKIP
>>> ds[1]  # doctest: +SKIP
(Tensor([2., 3.]), Tensor(1))
"""

from __future__ import annotations

import bisect
import itertools
import math
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, Generic, TypeVar

from ...engine.warn import warn as _user_warn
from ...random import default_generator
from . import _random

T_co = TypeVar("T_co", covariant=True)
T = TypeVar("T")


class Dataset(Generic[T_co]):
    """A map from keys (indices) to samples: subclasses define ``__getitem__`` and usually
    ``__len__``; ``__getitems__(indices)``, when defined, fetches a whole batch at once.
    ``a + b`` concatenates (:class:`ConcatDataset`)."""

    def __getitem__(self, index: Any) -> T_co:
        raise NotImplementedError("Subclasses of Dataset should implement __getitem__.")

    def __add__(self, other: Dataset[T_co]) -> ConcatDataset[T_co]:
        return ConcatDataset([self, other])


class IterableDataset(Dataset[T_co]):
    """A stream of samples: subclasses define ``__iter__``. With ``num_workers > 0`` each
    worker iterates its own copy; ``get_worker_info()`` inside ``__iter__`` tells a copy
    which share is its own. ``a + b`` chains (:class:`ChainDataset`)."""

    def __iter__(self) -> Iterator[T_co]:
        raise NotImplementedError("Subclasses of IterableDataset should implement __iter__.")

    def __add__(self, other: Dataset[T_co]) -> ChainDataset:  # type: ignore[override]
        return ChainDataset([self, other])


class TensorDataset(Dataset):
    """Samples are the rows of each tensor along the first dimension, as a tuple."""

    def __init__(self, *tensors: Any) -> None:
        if tensors and any(t.shape[0] != tensors[0].shape[0] for t in tensors):
            sizes = [t.shape[0] for t in tensors]
            raise AssertionError(f"Size mismatch between tensors: first dimensions {sizes}")
        self.tensors = tensors

    def __getitem__(self, index: Any) -> tuple:
        return tuple(t[index] for t in self.tensors)

    def __len__(self) -> int:
        return self.tensors[0].shape[0]


class StackDataset(Dataset):
    """Samples of several datasets of one length side by side: a tuple (positional datasets)
    or a dict (keyword datasets)."""

    def __init__(self, *args: Dataset, **kwargs: Dataset) -> None:
        if args and kwargs:
            raise ValueError(
                "Supported either ``tuple``- (via ``args``) or ``dict``- (via ``kwargs``) like input/output, "
                "but both types are given."
            )
        if not args and not kwargs:
            raise ValueError("At least one dataset should be passed")
        parts = list(args or kwargs.values())
        self._length = len(parts[0])
        if any(len(d) != self._length for d in parts):
            raise ValueError("Size mismatch between datasets")
        self.datasets: tuple | dict = args or kwargs

    def __getitem__(self, index: Any) -> tuple | dict:
        if isinstance(self.datasets, dict):
            return {k: d[index] for k, d in self.datasets.items()}
        return tuple(d[index] for d in self.datasets)

    def __getitems__(self, indices: list) -> list:
        named = isinstance(self.datasets, dict)
        keys = list(self.datasets) if named else range(len(self.datasets))
        columns = [_fetch_many(self.datasets[k], indices) for k in keys]
        if named:
            return [dict(zip(keys, row, strict=True)) for row in zip(*columns, strict=True)]
        return [tuple(row) for row in zip(*columns, strict=True)]

    def __len__(self) -> int:
        return self._length


def _fetch_many(dataset: Any, indices: list) -> list:
    """``dataset``'s samples at ``indices``, through its ``__getitems__`` where it has one."""
    getitems = getattr(dataset, "__getitems__", None)
    if not callable(getitems):
        return [dataset[i] for i in indices]
    items = getitems(indices)
    if len(items) != len(indices):
        raise ValueError(f"Nested dataset's output size mismatch. Expected {len(indices)}, got {len(items)}")
    return items


class ConcatDataset(Dataset[T_co]):
    """Several map-style datasets one after the other; ``cumulative_sizes[i]`` is where the
    ``i``-th ends."""

    def __init__(self, datasets: Iterable[Dataset]) -> None:
        self.datasets = list(datasets)
        if not self.datasets:
            raise AssertionError("datasets should not be an empty iterable")
        if any(isinstance(d, IterableDataset) for d in self.datasets):
            raise AssertionError("ConcatDataset does not support IterableDataset")
        self.cumulative_sizes = self.cumsum(self.datasets)

    @staticmethod
    def cumsum(sequence: Iterable[Any]) -> list[int]:
        return list(itertools.accumulate(len(d) for d in sequence))

    def __len__(self) -> int:
        return self.cumulative_sizes[-1]

    def __getitem__(self, idx: int) -> T_co:
        if idx < 0:
            if -idx > len(self):
                raise ValueError("absolute value of index should not exceed dataset length")
            idx += len(self)
        which = bisect.bisect_right(self.cumulative_sizes, idx)
        start = self.cumulative_sizes[which - 1] if which else 0
        return self.datasets[which][idx - start]


class ChainDataset(IterableDataset):
    """Several iterable datasets one after the other, chained as they are iterated."""

    def __init__(self, datasets: Iterable[Dataset]) -> None:
        self.datasets = datasets

    def _checked(self) -> Iterator[IterableDataset]:
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset")
            yield d

    def __iter__(self) -> Iterator:
        for d in self._checked():
            yield from d

    def __len__(self) -> int:
        return sum(len(d) for d in self._checked())


class Subset(Dataset[T_co]):
    """The samples of ``dataset`` at ``indices``, in that order."""

    def __init__(self, dataset: Dataset[T_co], indices: Sequence[int]) -> None:
        if type(self).__getitem__ is not Subset.__getitem__ and type(self).__getitems__ is Subset.__getitems__:
            raise NotImplementedError(
                f"{type(self).__name__} overrides __getitem__ but not __getitems__: the DataLoader fetches batches "
                "through __getitems__, so override it too (def __getitems__(self, indices): "
                "return [self.__getitem__(i) for i in indices])"
            )
        self.dataset = dataset
        self.indices = indices

    def __getitem__(self, idx: Any) -> T_co:
        if isinstance(idx, list):
            return self.dataset[[self.indices[i] for i in idx]]
        return self.dataset[self.indices[idx]]

    def __getitems__(self, indices: list[int]) -> list[T_co]:
        return _fetch_many(self.dataset, [self.indices[i] for i in indices])

    def __len__(self) -> int:
        return len(self.indices)


def _split_lengths(n: int, lengths: Sequence[int | float]) -> list[int]:
    """Fractions summing to 1 become counts, floor each, the remainder handed out one by one
    from the first split on; counts are kept as given."""
    total = sum(lengths)
    if not (math.isclose(total, 1) and total <= 1):
        return list(lengths)  # type: ignore[arg-type]
    counts = []
    for i, frac in enumerate(lengths):
        if frac < 0 or frac > 1:
            raise ValueError(f"Fraction at index {i} is not between 0 and 1")
        counts.append(math.floor(n * frac))
    for i in range(n - sum(counts)):
        counts[i % len(counts)] += 1
    for i, c in enumerate(counts):
        if c == 0:
            _user_warn(f"Length of split at index {i} is 0. This might result in an empty dataset.")
    return counts


def random_split(dataset: Dataset[T], lengths: Sequence[int | float],
                 generator: Any = default_generator) -> list[Subset[T]]:  # fmt: skip
    """Split ``dataset`` into non-overlapping random subsets of the given ``lengths`` (counts,
    or fractions summing to 1), from one ``randperm`` of ``generator`` (default: the global one).

    >>> train, val = random_split(ds, [0.8, 0.2], generator=g)  # doctest: +SKIP
    """
    counts = _split_lengths(len(dataset), lengths)  # type: ignore[arg-type]
    if sum(counts) != len(dataset):  # type: ignore[arg-type]
        raise ValueError("Sum of input lengths does not equal the length of the input dataset!")
    order = _random.randperm(sum(counts), generator)
    ends = itertools.accumulate(counts)
    return [Subset(dataset, order[end - count : end]) for end, count in zip(ends, counts, strict=True)]
