"""Layers: values against NumPy, PyTorch's layouts and inits, and float64 gradient checks of
every layer (input and every parameter) on every device.

Flatten, Unflatten, LazyLinear and Bilinear against PyTorch (shapes, values, gradients,
parameter layout); F.bilinear's gradients by finite differences on every CPU namespace."""

from __future__ import annotations

import math

import numpy as np
import pytest
from helpers import rand
from torch_oracle import assert_matches_torch, needs_torch, torch_or_absent

import tinygrad_attn as tga
import tinygrad_attn.functional as F
from tinygrad_attn import Tensor, nn
from tinygrad_attn.models import (
    Dropout,
    Embedding,
    FeedForward,
    LayerNorm,
    Linear,
    PositionalEncoding,
    Sequential,
    functional_call,
)

# PyTorch is an optional oracle: the tests that need it carry ``needs_torch`` and skip without it,
# the others still run.
torch = torch_or_absent()


def gradcheck_layer(m, x, *, reseed=False):
    """Gradient-check ``m(x)`` in float64 with respect to ``x`` and every parameter."""
    m.double()
    names = [n for n, _ in m.named_parameters()]
    params = [p.detach() for p in m.parameters()]

    def fn(x, *ps):
        if reseed:  # the same dropout mask at every evaluation
            tga.manual_seed(7)
        return functional_call(m, dict(zip(names, ps)), x)

    return tga.gradcheck(fn, x, *params)


def np_linear(x, m):
    y = x @ m.weight.detach().numpy().T
    return y + m.bias.detach().numpy() if m.bias is not None else y


# -- Linear ---------------------------------------------------------------------------
def test_linear_layout_and_values(rng, device):
    m = Linear(3, 2).to(device)
    assert m.weight.shape == (2, 3) and m.bias.shape == (2,)
    x = rand(rng, 4, 3, device=device, dtype=np.float32)
    np.testing.assert_allclose(m(x).detach().numpy(), np_linear(x.detach().numpy(), m), rtol=1e-6, atol=1e-6)
    with pytest.raises(ValueError, match=r"Linear\(3, 2\).*\(4, 5\)"):
        m(Tensor(np.zeros((4, 5), np.float32), device=device))


def test_linear_init_is_pytorch_uniform():
    m = Linear(100, 200)
    bound = 1 / math.sqrt(100)
    w, b = m.weight.detach().numpy().ravel(), m.bias.detach().numpy()
    assert np.abs(w).max() <= bound and np.abs(b).max() <= bound
    # U(-a, a): extremes near ±a, mean 0 (sd a/sqrt(3n)), variance a^2/3.
    assert w.min() < -0.99 * bound and w.max() > 0.99 * bound
    assert abs(w.mean()) < 4 * bound / math.sqrt(3 * w.size)
    assert abs(w.var() / (bound**2 / 3) - 1) < 0.05
    assert b.min() < -0.9 * bound and b.max() > 0.9 * bound


def test_linear_gradcheck(rng, device):
    assert gradcheck_layer(Linear(3, 2).to(device), rand(rng, 2, 3, device=device))
    assert gradcheck_layer(Linear(3, 2, bias=False).to(device), rand(rng, 2, 2, 3, device=device))


# -- Embedding --------------------------------------------------------------------------
def test_embedding_lookup_and_range_checks(device):
    m = Embedding(5, 3).to(device)
    ids = np.array([[0, 4], [2, 2]])
    np.testing.assert_array_equal(m(ids).detach().numpy(), m.weight.detach().numpy()[ids])
    np.testing.assert_array_equal(m(Tensor(ids, device=device)).detach().numpy(), m.weight.detach().numpy()[ids])
    with pytest.raises(IndexError, match=r"id 5 is out of range \[0, 5\)"):
        m(np.array([1, 5]))
    with pytest.raises(IndexError, match="id -1"):
        m(np.array([-1, 0]))
    with pytest.raises(TypeError, match="integers"):
        m(np.array([0.5]))


def test_embedding_duplicates_accumulate_gradient(device):
    m = Embedding(4, 2).to(device)
    m(np.array([1, 3, 1, 1])).sum().backward()
    np.testing.assert_array_equal(m.weight.grad.detach().numpy(), [[0, 0], [3, 3], [0, 0], [1, 1]])


def test_embedding_gradcheck(device):
    m = Embedding(4, 3).to(device).double()
    ids = np.array([[0, 2, 2], [3, 0, 2]])
    assert tga.gradcheck(lambda w: functional_call(m, {"weight": w}, ids), m.weight.detach())


# -- LayerNorm ---------------------------------------------------------------------------
def test_layer_norm_values(rng, device):
    m = LayerNorm(4).to(device)
    m.weight.data = m.weight._dev.asarray(rng.standard_normal(4), dtype=np.float32)
    x = rand(rng, 2, 3, 4, device=device, dtype=np.float32)
    xn = x.detach().numpy()
    ref = (xn - xn.mean(-1, keepdims=True)) / np.sqrt(xn.var(-1, keepdims=True) + 1e-5)
    np.testing.assert_allclose(
        m(x).detach().numpy(), ref * m.weight.detach().numpy() + m.bias.detach().numpy(), rtol=1e-5, atol=1e-5
    )


def test_layer_norm_gradcheck(rng, device):
    m = LayerNorm(4).to(device)
    with tga.no_grad():  # non-trivial affine parameters
        for p in m.parameters():
            p.data = p._dev.asarray(rng.standard_normal(p.shape), dtype=np.float32)
    assert gradcheck_layer(m, rand(rng, 2, 4, device=device))


# -- Dropout ------------------------------------------------------------------------------
def test_dropout_is_identity_in_eval(rng, device):
    m = Dropout(0.5).to(device)
    x = rand(rng, 50, 20, device=device)
    y = m(x).detach().numpy()
    zeros = (y == 0).mean()
    assert 0.4 < zeros < 0.6
    kept = y != 0
    np.testing.assert_allclose(y[kept], 2.0 * x.detach().numpy()[kept])
    np.testing.assert_array_equal(m.eval()(x).detach().numpy(), x.detach().numpy())
    with pytest.raises(ValueError, match="p must be in"):
        Dropout(1.5)


def test_dropout_gradcheck(rng, device):
    assert gradcheck_layer(Dropout(0.3).to(device), rand(rng, 3, 4, device=device), reseed=True)


# -- Sequential --------------------------------------------------------------------------
def test_sequential_values_and_gradcheck(rng, device):
    m = Sequential(Linear(3, 4), LayerNorm(4), Dropout(0.5), Linear(4, 2)).to(device)
    m.eval()  # dropout off: the NumPy reference has none
    x = rand(rng, 2, 3, device=device, dtype=np.float32)
    h = np_linear(x.detach().numpy(), m[0])
    h = (h - h.mean(-1, keepdims=True)) / np.sqrt(h.var(-1, keepdims=True) + 1e-5)
    np.testing.assert_allclose(m(x).detach().numpy(), np_linear(h, m[3]), rtol=1e-5, atol=1e-5)
    m.train()
    assert gradcheck_layer(m, rand(rng, 2, 3, device=device), reseed=True)


# -- FeedForward ---------------------------------------------------------------------------
def _np_gelu(x):
    return 0.5 * x * (1 + np.vectorize(math.erf)(x / math.sqrt(2)))


@pytest.mark.parametrize(
    "activation, ref",
    [("relu", lambda h: np.maximum(h, 0)), ("gelu", _np_gelu), (lambda t: t.tanh(), np.tanh)],
    ids=["relu", "gelu", "callable"],
)
def test_feed_forward_values(rng, device, activation, ref):
    m = FeedForward(4, 6, activation=activation).to(device)
    assert [n for n, _ in m.named_children()] == ["linear1", "dropout", "linear2"]
    assert m.linear1.weight.shape == (6, 4) and m.linear2.weight.shape == (4, 6)
    x = rand(rng, 2, 3, 4, device=device, dtype=np.float32)
    expect = np_linear(ref(np_linear(x.detach().numpy(), m.linear1)), m.linear2)
    np.testing.assert_allclose(m(x).detach().numpy(), expect, rtol=1e-5, atol=1e-5)


def test_feed_forward_rejects_unknown_activation():
    with pytest.raises(ValueError, match="'swish'"):
        FeedForward(4, 8, activation="swish")


@pytest.mark.parametrize("activation", ["relu", "gelu"])
def test_feed_forward_gradcheck(rng, device, activation):
    m = FeedForward(3, 4, activation=activation, dropout=0.25).to(device)
    assert gradcheck_layer(m, rand(rng, 2, 3, device=device), reseed=True)


def test_feed_forward_dropout_off_in_eval(rng):
    m = FeedForward(4, 32, dropout=0.9)
    x = rand(rng, 3, 4, dtype=np.float32)
    a = m.eval()(x).detach().numpy()
    np.testing.assert_array_equal(a, m(x).detach().numpy())
    assert not np.allclose(m.train()(x).detach().numpy(), a)


# -- PositionalEncoding ---------------------------------------------------------------------
def test_positional_encoding_table_is_the_papers():
    d = 6
    m = PositionalEncoding(d, max_len=50)
    pe = m.pe.detach().numpy()
    assert pe.shape == (50, d)
    for pos in (0, 1, 17, 49):
        for i in range(d // 2):
            angle = pos / 10000 ** (2 * i / d)
            assert pe[pos, 2 * i] == pytest.approx(math.sin(angle), abs=1e-6)
            assert pe[pos, 2 * i + 1] == pytest.approx(math.cos(angle), abs=1e-6)
    odd = PositionalEncoding(5, max_len=10).pe.detach().numpy()
    assert odd[3, 4] == pytest.approx(math.sin(3 / 10000 ** (4 / 5)), abs=1e-6)


def test_positional_encoding_adds_pe_and_is_not_saved(rng, device):
    m = PositionalEncoding(4, max_len=20).to(device)
    assert m.pe.device == tga.get_device(device).name
    assert m.state_dict() == {}  # a non-persistent buffer
    x = rand(rng, 2, 7, 4, device=device, dtype=np.float32)
    np.testing.assert_allclose(
        m(x).detach().numpy(), x.detach().numpy() + m.pe.detach().numpy()[:7], rtol=1e-6, atol=1e-6
    )
    with pytest.raises(ValueError, match=r"\(2, 21, 4\)"):
        m(Tensor(np.zeros((2, 21, 4), np.float32), device=device))
    with pytest.raises(ValueError, match=r"\(2, 3, 5\)"):
        m(Tensor(np.zeros((2, 3, 5), np.float32), device=device))


def test_positional_encoding_dropout_only_in_training(rng):
    m = PositionalEncoding(8, max_len=10, dropout=0.5)
    x = rand(rng, 2, 10, 8, dtype=np.float32)
    assert (m(x).detach().numpy() == 0).mean() > 0.3
    np.testing.assert_allclose(m.eval()(x).detach().numpy(), x.detach().numpy() + m.pe.detach().numpy()[:10], rtol=1e-6)


def test_positional_encoding_gradcheck(rng, device):
    assert gradcheck_layer(PositionalEncoding(4, max_len=8).to(device), rand(rng, 2, 3, 4, device=device))
    m = PositionalEncoding(4, max_len=8, dropout=0.5).to(device)
    assert gradcheck_layer(m, rand(rng, 1, 3, 4, device=device), reseed=True)


# -- Flatten, Unflatten, LazyLinear and Bilinear against PyTorch -----------------------------------


@needs_torch
@pytest.mark.parametrize("start,end", [(1, -1), (0, -1), (1, 2), (-2, -1)])
def test_flatten_is_pytorchs(start, end, rng):
    a = rng.standard_normal((2, 3, 4, 2))
    assert nn.Flatten(start, end)(Tensor(a)).shape == tuple(torch.nn.Flatten(start, end)(torch.tensor(a)).shape)
    assert repr(nn.Flatten()) == repr(torch.nn.Flatten())


@needs_torch
@pytest.mark.parametrize("dim,sizes", [(1, (3, 4)), (-1, (2, -1)), (0, (1, 2))])
def test_unflatten_is_pytorchs(dim, sizes, rng):
    a = rng.standard_normal((2, 12, 4))
    want = torch.nn.Unflatten(dim, sizes)(torch.tensor(a)).detach().numpy()
    np.testing.assert_array_equal(nn.Unflatten(dim, sizes)(Tensor(a)).detach().numpy(), want)
    with pytest.raises(RuntimeError):  # PyTorch's class for sizes that do not multiply to the axis
        torch.nn.Unflatten(1, (5, 5))(torch.tensor(a))
    with pytest.raises(RuntimeError, match="unflatten: sizes"):
        nn.Unflatten(1, (5, 5))(Tensor(a))


@needs_torch
def test_lazy_linear_takes_in_features_from_its_first_input(rng):
    lazy = nn.LazyLinear(3)
    assert isinstance(lazy.weight, nn.UninitializedParameter) and isinstance(lazy.bias, nn.UninitializedParameter)
    with pytest.raises(RuntimeError, match="uninitialized parameter"):
        lazy.weight.shape  # noqa: B018 - as PyTorch's, a placeholder has no shape
    params = list(lazy.parameters())
    opt = tga.optim.SGD(lazy.parameters(), lr=0.1)  # built before the first input, as PyTorch allows
    y = lazy(Tensor(rng.standard_normal((2, 5)).astype(np.float32)))
    assert y.shape == (2, 3) and type(lazy) is nn.Linear and lazy.in_features == 5
    assert lazy.weight is params[0] and lazy.weight.shape == (3, 5) and lazy.bias.shape == (3,)
    assert np.abs(lazy.weight.detach().numpy()).max() <= 1 / np.sqrt(5)
    y.sum().backward()
    before = lazy.weight.detach().numpy().copy()
    opt.step()
    assert not np.array_equal(before, lazy.weight.detach().numpy())
    opt.zero_grad()
    theirs = torch.nn.Linear(5, 3)
    assert_matches_torch(lazy, theirs, lazy, theirs, [rng.standard_normal((4, 5))])


@needs_torch
def test_bilinear_matches_torch(rng):
    ours, theirs = nn.Bilinear(3, 4, 2), torch.nn.Bilinear(3, 4, 2)
    assert [(n, p.shape) for n, p in ours.named_parameters()] == [
        (n, tuple(p.shape)) for n, p in theirs.named_parameters()
    ]
    assert repr(ours) == repr(theirs)
    assert_matches_torch(ours, theirs, ours, theirs, [rng.standard_normal((2, 5, 3)), rng.standard_normal((2, 5, 4))])
    assert np.abs(nn.Bilinear(9, 2, 50).weight.detach().numpy()).max() <= 1 / 3


@needs_torch
@pytest.mark.parametrize("decomposed", [False, True])
def test_bilinear_gradcheck(device, rng, decomposed):
    x1, x2 = Tensor(rng.standard_normal((3, 2)), device=device), Tensor(rng.standard_normal((3, 4)), device=device)
    w, b = Tensor(rng.standard_normal((5, 2, 4)), device=device), Tensor(rng.standard_normal(5), device=device)
    with tga.decompose() if decomposed else tga.enable_grad():
        assert tga.gradcheck(F.bilinear, x1, x2, w, b)


@needs_torch
def test_bilinear_shape_errors():
    with pytest.raises(ValueError, match=r"bilinear: input1 \(3, 2\), input2 \(3, 5\) and weight \(5, 2, 4\)"):
        F.bilinear(Tensor.zeros(3, 2), Tensor.zeros(3, 5), Tensor.zeros(5, 2, 4))
