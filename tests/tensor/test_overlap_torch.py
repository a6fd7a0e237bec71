"""An in-place op whose operand shares part of the memory it writes (``x += x.t()``,
``x[1:] = x[:-1]``, ``x.add_(x[0])``) raises PyTorch's RuntimeError, as PyTorch's does, for
every pair of views of one tensor: where PyTorch runs, the values agree (where PyTorch leaves
the result to the order of its writes, nothing is compared)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import tinygrad_attn as tga

torch = pytest.importorskip("torch")

VIEWS = {
    "x": lambda x: x,
    "x.t()": lambda x: x.t(),
    "x[1:]": lambda x: x[1:],
    "x[:-1]": lambda x: x[:-1],
    "x[0]": lambda x: x[0],
    "x[1]": lambda x: x[1],
    "x[:, 0]": lambda x: x[:, 0],
    "x[:, 1:]": lambda x: x[:, 1:],
    "x.view(9)[:3]": lambda x: x.view(9)[:3],
    "x.view(9)[2:5]": lambda x: x.view(9)[2:5],
    "x.clone()": lambda x: x.clone(),
    "x.diagonal()": lambda x: x.diagonal(),
}
OPS = {
    "add_": lambda d, s: d.add_(s),
    "mul_": lambda d, s: d.mul_(s),
    "copy_": lambda d, s: d.copy_(s),
    "+=": lambda d, s: d.__iadd__(s),
    "d[...] = s": lambda d, s: d.__setitem__(Ellipsis, s),
}


def _run(lib, dest: str, src: str, op: str) -> object:
    x = lib.arange(9.0).reshape(3, 3)
    d, s = VIEWS[dest](x), VIEWS[src](x)
    try:
        OPS[op](d, s)
    except RuntimeError:
        return "RuntimeError"
    return x.tolist()


def _shares_part(dest: str, src: str) -> bool:
    x = tga.arange(9.0).reshape(3, 3)
    d, s = VIEWS[dest](x).detach().numpy(), VIEWS[src](x).detach().numpy()
    return False if d.shape == s.shape and d.strides == s.strides else bool(np.shares_memory(d, s))


def _fits(dest: str, src: str) -> bool:
    """Whether ``src``'s shape broadcasts to ``dest``'s (the pairs where only the overlap can fail)."""
    x = np.zeros((3, 3))
    d, s = VIEWS[dest](tga.tensor(x)).shape, VIEWS[src](tga.tensor(x)).shape
    try:
        return np.broadcast_shapes(d, s) == tuple(d)
    except ValueError:
        return False


@pytest.mark.parametrize("dest, src, op", [c for c in itertools.product(VIEWS, VIEWS, OPS) if _fits(*c[:2])], ids=str)
def test_in_place_from_overlapping_memory_as_pytorch(dest: str, src: str, op: str) -> None:
    theirs = _run(torch, dest, src, op)
    ours = _run(tga, dest, src, op)
    if theirs == "RuntimeError":
        assert ours == "RuntimeError"
    elif not _shares_part(dest, src) or dest == src:
        assert ours == theirs
