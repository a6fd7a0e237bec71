"""The datasets, samplers and ``random_split`` against PyTorch's: what they hold, their
lengths, the keys they yield (the orders that need no generator), and their errors."""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest
from data_oracle import plain

import tinygrad_attn as tga
from tinygrad_attn.utils import data

torch = pytest.importorskip("torch")
import torch.utils.data as tdata  # noqa: E402


def _tensors(lib, n=7):
    rng = np.random.default_rng(n)
    return lib.tensor(rng.normal(size=(n, 3)).astype("float32")), lib.tensor(np.arange(n) % 3)


class Squares(data.Dataset):
    def __init__(self, n):
        self.n = n

    def __getitem__(self, i):
        if not 0 <= i < self.n:
            raise IndexError(i)
        return i * i

    def __len__(self):
        return self.n


class _Items:
    def __init__(self, items):
        self.items = items

    def __iter__(self):
        return iter(self.items)

    def __len__(self):
        return len(self.items)


class Stream(_Items, data.IterableDataset):
    pass


class TorchStream(_Items, tdata.IterableDataset):
    pass


def _both(make):
    """``make`` applied to our module and to PyTorch's (a dataset built the same way by each)."""
    return make(tga, data), make(torch, tdata)


@pytest.mark.parametrize("n", [1, 5])
def test_tensor_dataset(n):
    ours, theirs = _both(lambda lib, d: d.TensorDataset(*_tensors(lib, n)))
    assert len(ours) == len(theirs) == n
    for i in [*range(n), -1]:
        assert plain(ours[i]) == plain(theirs[i])
    assert plain(ours[[0, n - 1]]) == plain(theirs[[0, n - 1]])


def test_tensor_dataset_needs_one_length():
    with pytest.raises(AssertionError):
        tdata.TensorDataset(torch.zeros(3), torch.zeros(4))
    with pytest.raises(AssertionError, match="Size mismatch"):
        data.TensorDataset(tga.zeros(3), tga.zeros(4))


@pytest.mark.parametrize("sizes", [[3], [2, 0, 4], [1, 1, 1, 5]])
def test_concat_dataset(sizes):
    ours = data.ConcatDataset([Squares(k) for k in sizes])
    theirs = tdata.ConcatDataset([Squares(k) for k in sizes])
    assert ours.cumulative_sizes == theirs.cumulative_sizes
    assert len(ours) == len(theirs)
    for i in range(-len(ours), len(ours)):
        assert ours[i] == theirs[i]
    for bad in (len(ours), -len(ours) - 1):
        with pytest.raises(Exception) as t:
            theirs[bad]
        with pytest.raises(t.type):
            ours[bad]
    assert (Squares(2) + Squares(3))[4] == 4 and isinstance(Squares(2) + Squares(3), data.ConcatDataset)


@pytest.mark.parametrize("streams", [0, 1])
def test_concat_dataset_errors(streams):
    with pytest.raises(AssertionError):
        tdata.ConcatDataset([TorchStream([1])] * streams)
    with pytest.raises(AssertionError):
        data.ConcatDataset([Stream([1])] * streams)


def test_chain_dataset():
    ours = data.ChainDataset([Stream([1, 2]), Stream([]), Stream([3])])
    assert list(ours) == list(tdata.ChainDataset([TorchStream([1, 2]), TorchStream([]), TorchStream([3])])) == [1, 2, 3]
    assert len(ours) == 3
    assert list(Stream([1]) + Stream([2])) == [1, 2]
    with pytest.raises(AssertionError):
        list(data.ChainDataset([Squares(2)]))


@pytest.mark.parametrize("indices", [[], [4, 0, 2], list(range(6))[::-1]])
def test_subset(indices):
    ours, theirs = data.Subset(Squares(6), indices), tdata.Subset(Squares(6), indices)
    assert len(ours) == len(theirs)
    assert [ours[i] for i in range(len(ours))] == [theirs[i] for i in range(len(theirs))]
    assert ours.__getitems__(list(range(len(ours)))) == theirs.__getitems__(list(range(len(theirs))))


def test_subset_subclass_overriding_getitem_alone_is_refused():
    class Doubled(data.Subset):
        def __getitem__(self, i):
            return 2 * super().__getitem__(i)

    with pytest.raises(NotImplementedError, match="__getitems__"):
        Doubled(Squares(3), [0, 1])


@pytest.mark.parametrize("named", [False, True])
def test_stack_dataset(named):
    def make(lib, d):
        x, y = _tensors(lib, 4)
        parts = [d.TensorDataset(x), Squares(4), d.Subset(Squares(9), [8, 1, 2, 3])]
        return d.StackDataset(**dict(zip("abc", parts))) if named else d.StackDataset(*parts)

    ours, theirs = _both(make)
    assert len(ours) == len(theirs) == 4
    assert [plain(ours[i]) for i in range(4)] == [plain(theirs[i]) for i in range(4)]
    assert plain(ours.__getitems__([3, 0])) == plain(theirs.__getitems__([3, 0]))


@pytest.mark.parametrize("args,kwargs", [([], {}), ([Squares(2)], {"a": Squares(2)}), ([Squares(2), Squares(3)], {})])
def test_stack_dataset_errors(args, kwargs):
    with pytest.raises(ValueError):
        tdata.StackDataset(*args, **kwargs)
    with pytest.raises(ValueError):
        data.StackDataset(*args, **kwargs)


SPLITS = [(10, [3, 7]), (10, [0.5, 0.5]), (10, [0.33, 0.33, 0.34]), (7, [0.1, 0.2, 0.7]), (3, [0.25, 0.25, 0.25, 0.25]),
          (11, [1.0]), (5, [0, 5])]  # fmt: skip


@pytest.mark.parametrize("n,lengths", SPLITS)
def test_random_split_sizes_and_partition(n, lengths):
    with warnings.catch_warnings(record=True) as theirs_warned:
        warnings.simplefilter("always")
        theirs = tdata.random_split(range(n), lengths)
    with warnings.catch_warnings(record=True) as ours_warned:
        warnings.simplefilter("always")
        ours = data.random_split(range(n), lengths)
    assert [len(s) for s in ours] == [len(s) for s in theirs]
    assert len(ours_warned) == len(theirs_warned)
    assert sorted(i for s in ours for i in s.indices) == list(range(n))


@pytest.mark.parametrize("lengths", [[3, 3], [0.5, 0.6], [1.2, -0.2], [11]])
def test_random_split_errors(lengths):
    with pytest.raises(ValueError):
        tdata.random_split(range(10), lengths)
    with pytest.raises(ValueError):
        data.random_split(range(10), lengths)


@pytest.mark.parametrize("n,batch_size,drop_last", itertools.product([0, 1, 7, 8], [1, 3, 8], [False, True]))
def test_sequential_and_batch_samplers(n, batch_size, drop_last):
    ours = data.BatchSampler(data.SequentialSampler(range(n)), batch_size, drop_last)
    theirs = tdata.BatchSampler(tdata.SequentialSampler(range(n)), batch_size, drop_last)
    assert list(ours) == list(theirs) and len(ours) == len(theirs)
    assert list(data.BatchSampler(range(n), batch_size, drop_last)) == list(theirs)


@pytest.mark.parametrize("kwargs", [{"batch_size": 0}, {"batch_size": True}, {"batch_size": 2.0}, {"drop_last": 1}])
def test_batch_sampler_errors(kwargs):
    kwargs = {"batch_size": 2, "drop_last": False} | kwargs
    with pytest.raises(ValueError):
        tdata.BatchSampler(range(3), **kwargs)
    with pytest.raises(ValueError):
        data.BatchSampler(range(3), **kwargs)


@pytest.mark.parametrize("replacement,num_samples", [(False, None), (False, 3), (False, 13), (True, None), (True, 70)])
def test_random_sampler_draws_valid_keys(replacement, num_samples):
    n = 5
    sampler = data.RandomSampler(range(n), replacement=replacement, num_samples=num_samples)
    keys = list(sampler)
    assert len(keys) == len(sampler) == len(tdata.RandomSampler(range(n), replacement, num_samples))
    assert all(0 <= k < n for k in keys)
    if not replacement:  # whole permutations, then the start of one more
        for start in range(0, len(keys), n):
            chunk = keys[start : start + n]
            assert len(set(chunk)) == len(chunk)


@pytest.mark.parametrize("kwargs", [{"replacement": 1}, {"num_samples": 0}, {"num_samples": 2.5}])
def test_random_sampler_errors(kwargs):
    with pytest.raises(Exception) as theirs:
        tdata.RandomSampler(range(3), **kwargs)
    with pytest.raises(theirs.type):
        data.RandomSampler(range(3), **kwargs)


def test_subset_random_sampler_permutes_its_indices():
    keys = list(data.SubsetRandomSampler([9, 4, 7, 1]))
    assert sorted(keys) == [1, 4, 7, 9] and len(data.SubsetRandomSampler([9, 4, 7, 1])) == 4


@pytest.mark.parametrize("replacement", [True, False])
def test_weighted_random_sampler_never_draws_a_zero_weight(replacement):
    weights = [0.0, 1.0, 0.0, 3.0, 2.0]
    keys = list(data.WeightedRandomSampler(weights, 3, replacement=replacement))
    assert len(keys) == 3 and set(keys) <= {1, 3, 4}
    if not replacement:
        assert len(set(keys)) == 3


@pytest.mark.parametrize(
    "weights,num_samples,replacement",
    [([1.0, 2.0], 0, True), ([1.0, 2.0], True, True), ([1.0, 2.0], 2, "yes"), ([[1.0, 2.0]], 1, True)],
)
def test_weighted_random_sampler_errors(weights, num_samples, replacement):
    with pytest.raises(ValueError):
        tdata.WeightedRandomSampler(weights, num_samples, replacement)
    with pytest.raises(ValueError):
        data.WeightedRandomSampler(weights, num_samples, replacement)


def _generator(seed):
    return tga.Generator().manual_seed(seed)


SAMPLERS = {
    "random": lambda g: data.RandomSampler(range(20), generator=g),
    "random_replacement": lambda g: data.RandomSampler(range(20), replacement=True, num_samples=40, generator=g),
    "subset": lambda g: data.SubsetRandomSampler(list(range(0, 40, 2)), generator=g),
    "weighted": lambda g: data.WeightedRandomSampler(np.arange(1.0, 21.0), 15, generator=g),
    "weighted_unique": lambda g: data.WeightedRandomSampler(np.arange(1.0, 21.0), 15, replacement=False, generator=g),
    "split": lambda g: [s.indices for s in data.random_split(range(20), [0.5, 0.5], generator=g)],
}


@pytest.mark.parametrize("name", SAMPLERS)
def test_a_seeded_generator_repeats_its_order(name):
    def keys(seed):
        tga.manual_seed(seed + 100)  # the global generator must not matter
        return list(SAMPLERS[name](_generator(seed)))

    assert keys(3) == keys(3)
    assert keys(3) != keys(4)


def test_the_module_names_pytorchs_public_names():
    ours = set(data.__all__)
    missing = {n for n in tdata.__all__ if not n.startswith("_")} - ours
    # what is left out: the DataPipes (deprecated in PyTorch) and their helpers
    assert missing == {"DFIterDataPipe", "DataChunk", "IterDataPipe", "MapDataPipe", "argument_validation",
                       "functional_datapipe", "guaranteed_datapipes_determinism", "non_deterministic",
                       "runtime_validation", "runtime_validation_disabled"}  # fmt: skip
    assert all(hasattr(data, n) for n in ours)
