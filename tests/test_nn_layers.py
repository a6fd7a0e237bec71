"""Flatten, Unflatten, LazyLinear and Bilinear against PyTorch (shapes, values, gradients,
parameter layout); F.bilinear's gradients by finite differences on every CPU namespace."""

from __future__ import annotations

import numpy as np
import pytest
from torch_oracle import assert_matches_torch

import tinygrad_attn as tga
import tinygrad_attn.functional as F
from tinygrad_attn import Tensor, nn

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("start,end", [(1, -1), (0, -1), (1, 2), (-2, -1)])
def test_flatten_is_pytorchs(start, end, rng):
    a = rng.standard_normal((2, 3, 4, 2))
    assert nn.Flatten(start, end)(Tensor(a)).shape == tuple(torch.nn.Flatten(start, end)(torch.tensor(a)).shape)
    assert repr(nn.Flatten()) == repr(torch.nn.Flatten())


@pytest.mark.parametrize("dim,sizes", [(1, (3, 4)), (-1, (2, -1)), (0, (1, 2))])
def test_unflatten_is_pytorchs(dim, sizes, rng):
    a = rng.standard_normal((2, 12, 4))
    want = torch.nn.Unflatten(dim, sizes)(torch.tensor(a)).numpy()
    np.testing.assert_array_equal(nn.Unflatten(dim, sizes)(Tensor(a)).numpy(), want)
    with pytest.raises(ValueError, match="Unflatten: sizes"):
        nn.Unflatten(1, (5, 5))(Tensor(a))


def test_lazy_linear_takes_in_features_from_its_first_input(rng):
    lazy = nn.LazyLinear(3)
    assert lazy.weight.shape == (3, 0) and lazy.bias.shape == (0,)
    params = list(lazy.parameters())
    opt = tga.optim.SGD(lazy.parameters(), lr=0.1)  # built before the first input, as PyTorch allows
    y = lazy(Tensor(rng.standard_normal((2, 5)).astype(np.float32)))
    assert y.shape == (2, 3) and type(lazy) is nn.Linear and lazy.in_features == 5
    assert lazy.weight is params[0] and lazy.weight.shape == (3, 5) and lazy.bias.shape == (3,)
    assert np.abs(lazy.weight.numpy()).max() <= 1 / np.sqrt(5)
    y.sum().backward()
    before = lazy.weight.numpy().copy()
    opt.step()
    assert not np.array_equal(before, lazy.weight.numpy())
    opt.zero_grad()
    theirs = torch.nn.Linear(5, 3)
    assert_matches_torch(lazy, theirs, lazy, theirs, [rng.standard_normal((4, 5))])


def test_bilinear_matches_torch(rng):
    ours, theirs = nn.Bilinear(3, 4, 2), torch.nn.Bilinear(3, 4, 2)
    assert [(n, p.shape) for n, p in ours.named_parameters()] == [
        (n, tuple(p.shape)) for n, p in theirs.named_parameters()
    ]
    assert repr(ours) == repr(theirs)
    assert_matches_torch(ours, theirs, ours, theirs, [rng.standard_normal((2, 5, 3)), rng.standard_normal((2, 5, 4))])
    assert np.abs(nn.Bilinear(9, 2, 50).weight.numpy()).max() <= 1 / 3


@pytest.mark.parametrize("decomposed", [False, True])
def test_bilinear_gradcheck(device, rng, decomposed):
    x1, x2 = Tensor(rng.standard_normal((3, 2)), device=device), Tensor(rng.standard_normal((3, 4)), device=device)
    w, b = Tensor(rng.standard_normal((5, 2, 4)), device=device), Tensor(rng.standard_normal(5), device=device)
    with tga.decompose() if decomposed else tga.enable_grad():
        assert tga.gradcheck(F.bilinear, x1, x2, w, b)


def test_bilinear_shape_errors():
    with pytest.raises(ValueError, match=r"bilinear: input1 \(3, 2\), input2 \(3, 5\) and weight \(5, 2, 4\)"):
        F.bilinear(Tensor.zeros(3, 2), Tensor.zeros(3, 5), Tensor.zeros(5, 2, 4))
