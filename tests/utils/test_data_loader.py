"""``DataLoader`` in the main process against PyTorch's: the same batches (values, dtypes,
collated structure) and lengths for each kind of dataset and batching option, PyTorch's
argument errors, iterable datasets, a progress bar, and a training loop over a loader."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from data_oracle import batches, plain

import tinygrad_attn as tga
from tinygrad_attn.utils import data

torch = pytest.importorskip("torch")
import torch.utils.data as tdata  # noqa: E402


def _samples(kind: str, n: int, lib):
    """A dataset of ``n`` samples of one kind, built with ``lib`` (``tga`` or ``torch``)."""
    rng = np.random.default_rng(n)
    x = rng.normal(size=(n, 2, 3)).astype("float32")
    y = rng.integers(0, 5, size=n)
    if kind == "tensors":
        mod = data if lib is tga else tdata
        return mod.TensorDataset(lib.tensor(x), lib.tensor(y))
    if kind == "numpy":
        return [(x[i], y[i], float(y[i]) / 2) for i in range(n)]
    if kind == "dicts":
        return [{"x": lib.tensor(x[i]), "label": int(y[i]), "name": f"item{i}", "ok": bool(y[i] % 2)} for i in range(n)]
    if kind == "nested":
        return [[(x[i][0], [np.int32(y[i]), b"raw"]), {"w": np.float64(i)}] for i in range(n)]
    if kind == "strings":
        return [f"s{i}" for i in range(n)]
    raise ValueError(kind)


KINDS = ["tensors", "numpy", "dicts", "nested", "strings"]
OPTIONS = list(itertools.product(KINDS, [7, 8], [None, 1, 3, 4], [False, True]))


@pytest.mark.parametrize("kind,n,batch_size,drop_last", OPTIONS)
def test_batches_are_pytorchs(kind, n, batch_size, drop_last):
    if batch_size is None and drop_last:
        return  # (an error; tested below)
    ours = data.DataLoader(_samples(kind, n, tga), batch_size=batch_size, drop_last=drop_last)
    theirs = tdata.DataLoader(_samples(kind, n, torch), batch_size=batch_size, drop_last=drop_last)
    assert len(ours) == len(theirs)
    assert batches(ours) == batches(theirs)
    assert batches(ours) == batches(ours)  # a loader is iterated again from the start


@pytest.mark.parametrize("kind", ["tensors", "dicts"])
def test_given_samplers_and_collate_fn(kind):
    keys, batch_keys = [5, 0, 3, 3, 1], [[2, 6], [0], [1, 1, 4]]

    def both(**kw):
        return (data.DataLoader(_samples(kind, 7, tga), **kw), tdata.DataLoader(_samples(kind, 7, torch), **kw))

    for ours, theirs in [both(sampler=keys, batch_size=2), both(batch_sampler=batch_keys),
                         both(sampler=keys, batch_size=None), both(batch_size=3, collate_fn=lambda b: b)]:  # fmt: skip
        assert len(ours) == len(theirs)
        assert batches(ours) == batches(theirs)
    ours = data.DataLoader(range(5), sampler=data.SequentialSampler(range(5)), batch_size=2)
    assert batches(ours) == batches(tdata.DataLoader(range(5), sampler=tdata.SequentialSampler(range(5)), batch_size=2))


class _Count:
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        return iter(range(self.n))

    def __len__(self):
        return self.n


class Count(_Count, data.IterableDataset):
    pass


class TorchCount(_Count, tdata.IterableDataset):
    pass


@pytest.mark.parametrize("n,batch_size,drop_last", itertools.product([0, 5, 6], [None, 2, 3], [False, True]))
def test_iterable_dataset(n, batch_size, drop_last):
    if batch_size is None and drop_last:
        return
    ours = data.DataLoader(Count(n), batch_size=batch_size, drop_last=drop_last)
    theirs = tdata.DataLoader(TorchCount(n), batch_size=batch_size, drop_last=drop_last)
    assert len(ours) == len(theirs)
    assert batches(ours) == batches(theirs)


def test_an_iterable_dataset_longer_than_its_len_warns():
    class Liar(Count):
        def __len__(self):
            return 2

    loader = data.DataLoader(Liar(4), batch_size=None)
    len(loader)
    with pytest.warns(UserWarning, match="was reported to be 2"):
        list(loader)


def _conflicts():
    """Argument sets PyTorch refuses (with which dataset: map-style or iterable)."""
    yield "map", {"batch_sampler": [[0]], "batch_size": 2}
    yield "map", {"batch_sampler": [[0]], "shuffle": True}
    yield "map", {"batch_sampler": [[0]], "sampler": [0]}
    yield "map", {"batch_sampler": [[0]], "drop_last": True}
    yield "map", {"sampler": [0], "shuffle": True}
    yield "map", {"batch_size": None, "drop_last": True}
    yield "map", {"num_workers": -1}
    yield "map", {"timeout": -1}
    yield "map", {"prefetch_factor": 2}
    yield "map", {"num_workers": 1, "prefetch_factor": -1}
    yield "map", {"persistent_workers": True}
    yield "map", {"multiprocessing_context": "fork"}
    yield "map", {"num_workers": 1, "multiprocessing_context": "teleport"}
    yield "map", {"num_workers": 1, "multiprocessing_context": 3}
    yield "iterable", {"shuffle": True}
    yield "iterable", {"sampler": [0]}
    yield "iterable", {"batch_sampler": [[0]]}


@pytest.mark.parametrize("kind,kwargs", list(_conflicts()))
def test_argument_conflicts_raise_pytorchs_error(kind, kwargs):
    with pytest.raises(Exception) as theirs:
        tdata.DataLoader(TorchCount(3) if kind == "iterable" else list(range(3)), **kwargs)
    with pytest.raises(theirs.type) as ours:
        data.DataLoader(Count(3) if kind == "iterable" else list(range(3)), **kwargs)
    assert str(ours.value)[:30] == str(theirs.value)[:30]  # the option named first


@pytest.mark.parametrize(
    "attr", ["batch_size", "batch_sampler", "sampler", "drop_last", "dataset", "persistent_workers"]
)
def test_fixed_attributes_cannot_be_set(attr):
    loader = data.DataLoader(list(range(3)))
    with pytest.raises(ValueError, match=f"{attr} attribute should not be set"):
        setattr(loader, attr, None)
    loader.num_workers = 0  # the others can


def test_defaults_are_pytorchs():
    ours, theirs = data.DataLoader(list(range(3))), tdata.DataLoader(list(range(3)))
    for name in ["batch_size", "drop_last", "num_workers", "timeout", "prefetch_factor", "persistent_workers",
                 "in_order", "pin_memory"]:  # fmt: skip
        assert getattr(ours, name) == getattr(theirs, name), name
    assert type(ours.sampler).__name__ == type(theirs.sampler).__name__
    assert type(data.DataLoader([1], shuffle=True).sampler) is data.RandomSampler
    assert data.DataLoader([1], batch_size=None).collate_fn is data.default_convert


def test_a_timeout_needs_workers():
    for mod in (tdata, data):
        with pytest.raises(AssertionError, match="requires timeout == 0"):
            iter(mod.DataLoader([1, 2], timeout=1))


def test_pin_memory_without_an_accelerator_warns_and_loads():
    loader = data.DataLoader(list(range(4)), batch_size=2, pin_memory=True)
    with pytest.warns(UserWarning, match="pin_memory"):
        assert batches(loader) == batches(tdata.DataLoader(list(range(4)), batch_size=2))


def test_a_progress_bar_reads_the_length():
    tqdm = pytest.importorskip("tqdm")
    loader = data.DataLoader(list(range(10)), batch_size=3)
    bar = tqdm.tqdm(loader, disable=False, file=open("/dev/null", "w"))  # noqa: SIM115
    assert bar.total == 4 and len(list(bar)) == 4


def test_training_over_a_loader_is_pytorchs():
    """A linear regression trained with SGD over the same batches: the same weights."""
    rng = np.random.default_rng(0)
    x = rng.normal(size=(40, 3))
    y = x @ np.array([1.5, -2.0, 0.5]) + 0.3 + 0.01 * rng.normal(size=40)
    order = rng.permutation(40).tolist()  # one shuffled order, given to both loaders

    def train(lib, d, nn, optim):
        loader = d.DataLoader(d.TensorDataset(lib.tensor(x), lib.tensor(y)), batch_size=8, sampler=order)
        model = nn.Linear(3, 1).double()
        with lib.no_grad():
            model.weight.copy_(lib.tensor([[0.1, 0.2, 0.3]]))
            model.bias.fill_(0.0)
        opt = optim.SGD(model.parameters(), lr=0.1)
        losses = []
        for _ in range(5):
            for xb, yb in loader:
                loss = ((model(xb).squeeze(1) - yb) ** 2).mean()
                opt.zero_grad()
                loss.backward()
                opt.step()
                losses.append(loss.item())
        return np.concatenate([model.weight.detach().numpy().ravel(), model.bias.detach().numpy()]), losses

    ours, our_losses = train(tga, data, tga.nn, tga.optim)
    theirs, their_losses = train(torch, tdata, torch.nn, torch.optim)
    np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(our_losses, their_losses, rtol=1e-10)
    assert our_losses[-1] < 0.01 < our_losses[0]


def test_plain_tells_dtypes_and_containers_apart():
    # (the comparisons above are only as strict as this helper)
    assert plain(tga.tensor([1.0])) != plain(tga.tensor([1.0], dtype=tga.float64))
    assert plain([tga.tensor(1)]) != plain((tga.tensor(1),))
    assert plain(torch.tensor([1, 2])) == plain(tga.tensor([1, 2]))
