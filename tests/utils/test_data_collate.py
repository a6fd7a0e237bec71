"""``default_collate`` and ``default_convert`` against PyTorch's: the same structure, dtypes
and values for every kind of sample, and PyTorch's errors for batches they cannot collate."""

from __future__ import annotations

import collections
import itertools

import numpy as np
import pytest
from data_oracle import plain

import tinygrad_attn as tga
from tinygrad_attn.utils.data import default_collate, default_convert

torch = pytest.importorskip("torch")
from torch.utils.data import default_collate as torch_collate  # noqa: E402
from torch.utils.data import default_convert as torch_convert  # noqa: E402

Point = collections.namedtuple("Point", ["x", "y"])
NUMPY_DTYPES = ["float32", "float64", "float16", "int64", "int32", "int16", "int8", "uint8", "bool"]


def _leaf(kind: str, i: int, rng: np.random.Generator, to_tensor):
    """Sample ``i`` of one leaf kind; ``to_tensor`` makes the library's tensors."""
    if kind.startswith("tensor_"):
        return to_tensor(rng.normal(size=(2, 3)).astype(kind.removeprefix("tensor_")))
    if kind.startswith("ndarray_"):
        return (rng.normal(size=(3,)) * 5).astype(kind.removeprefix("ndarray_"))
    if kind.startswith("npscalar_"):
        return np.dtype(kind.removeprefix("npscalar_")).type(i * 3 % 5)
    return {"int": i * 7 - 3, "float": i / 4 - 1.5, "bool": i % 2 == 0, "str": f"s{i}", "bytes": b"b%d" % i}[kind]


LEAVES = (
    [f"tensor_{d}" for d in ("float32", "float64", "int64")]
    + [f"ndarray_{d}" for d in NUMPY_DTYPES]
    + [f"npscalar_{d}" for d in NUMPY_DTYPES]
    + ["int", "float", "bool", "str", "bytes"]
)


def _containers(leaf):
    """Each container kind around a leaf maker (a function of the sample index)."""
    yield "leaf", leaf
    yield "tuple", lambda i: (leaf(i), leaf(i + 1))
    yield "list", lambda i: [leaf(i), leaf(i + 2), leaf(i + 3)]
    yield "dict", lambda i: {"a": leaf(i), "b": [leaf(i + 1), {"c": leaf(i + 2)}]}
    yield "namedtuple", lambda i: Point(leaf(i), (leaf(i + 1), "tag"))


def _batch(kind: str, container: str, size: int, to_tensor):
    rng = np.random.default_rng(len(kind) * 31 + size)
    makers = dict(_containers(lambda i: _leaf(kind, i, rng, to_tensor)))
    return [makers[container](i) for i in range(size)]


CASES = list(itertools.product(LEAVES, ["leaf", "tuple", "list", "dict", "namedtuple"], [1, 3]))


@pytest.mark.parametrize("kind,container,size", CASES)
def test_default_collate_is_pytorchs(kind, container, size):
    ours = default_collate(_batch(kind, container, size, tga.tensor))
    theirs = torch_collate(_batch(kind, container, size, torch.tensor))
    assert plain(ours) == plain(theirs)


@pytest.mark.parametrize("kind,container", [(k, c) for k, c, s in CASES if s == 3])
def test_default_convert_is_pytorchs(kind, container):
    ours = [default_convert(s) for s in _batch(kind, container, 3, tga.tensor)]
    theirs = [torch_convert(s) for s in _batch(kind, container, 3, torch.tensor)]
    assert plain(ours) == plain(theirs)


def test_collated_tensors_keep_gradients_apart():
    a, b = tga.ones(2, requires_grad=True), tga.zeros(2, requires_grad=True)
    out = default_collate([a, b])
    (out * tga.tensor([[1.0, 2.0], [3.0, 4.0]])).sum().backward()
    assert a.grad.tolist() == [1.0, 2.0] and b.grad.tolist() == [3.0, 4.0]


RAGGED = [
    ("tensors of two shapes", lambda t: [t(np.zeros(2)), t(np.zeros(3))]),
    ("arrays of two shapes", lambda t: [np.zeros(2), np.zeros(3)]),
    ("lists of two lengths", lambda t: [[1, 2], [1, 2, 3]]),
    ("tuples of two lengths", lambda t: [(1.0, 2.0), (1.0,)]),
    ("string arrays", lambda t: [np.array(["a"]), np.array(["b"])]),
    ("objects", lambda t: [object(), object()]),
    ("None", lambda t: [None, None]),
]


@pytest.mark.parametrize("name,make", RAGGED, ids=[r[0] for r in RAGGED])
def test_uncollatable_batches_raise_pytorchs_error(name, make):
    with pytest.raises(Exception) as theirs:
        torch_collate(make(torch.tensor))
    with pytest.raises(theirs.type) as ours:
        default_collate(make(tga.tensor))
    if theirs.type is TypeError:  # the message names the type found
        assert str(ours.value).split(";")[0] == str(theirs.value).split(";")[0]
