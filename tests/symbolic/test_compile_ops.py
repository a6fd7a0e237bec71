"""The ops a trace records where eager bakes values in: ``Take``/``PutAdd`` (a gather and
its adjoint with the index as an input) and ``Draw`` (random numbers drawn when the op
runs), checked on every CPU device."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import close, rand

import tinygrad_attn as tga
from tinygrad_attn import Tensor, ops
from tinygrad_attn.random import draw

INDEX = np.array([[2, 0], [1, 2], [2, 2]])  # repeats: the gradient adds up


def _take(x, device, axis=0):
    return ops.Take.apply(x, Tensor(INDEX, device=device), args=axis)


@pytest.mark.parametrize("axis", [0, 1])
def test_take_values_and_gradient(axis, device, rng):
    x = rand(rng, 3, 3, device=device)
    close(_take(x, device, axis), np.take(x.numpy(), INDEX, axis=axis), atol=0, rtol=0)
    assert tga.gradcheck(lambda t: _take(t, device, axis), x)


def test_take_second_order(device, rng):
    x = rand(rng, 3, 3, device=device)
    w = Tensor(rng.standard_normal((3, 2, 3)), device=device)

    def grad_of(t, create_graph=True):
        (g,) = tga.grad((_take(t, device) ** 2 * w).sum(), t, create_graph=create_graph)
        return g

    close(grad_of(x), grad_of(x, create_graph=False).numpy(), atol=1e-12, rtol=1e-10)
    assert tga.gradcheck(grad_of, x)


def test_put_add_is_the_adjoint_of_take(device, rng):
    g = rand(rng, 3, 2, 3, device=device)
    out = ops.PutAdd.apply(g, Tensor(INDEX, device=device), args=((3, 3), 0))
    expect = np.zeros((3, 3))
    np.add.at(expect, INDEX, g.numpy())
    close(out, expect, atol=1e-12, rtol=1e-12)
    assert tga.gradcheck(lambda t: ops.PutAdd.apply(t, Tensor(INDEX, device=device), args=((3, 3), 0)), g)


def test_draw_follows_the_generator_on_every_device(device):
    like = Tensor(np.zeros(()), device=device)
    tga.manual_seed(7)
    a = draw("standard_normal", (4,), np.float64, like).numpy()
    m = draw("dropout", (1000,), np.float64, like, 0.25).numpy()
    tga.manual_seed(7)
    np.testing.assert_array_equal(a, np.random.default_rng(7).standard_normal(4))
    assert set(np.unique(m).tolist()) == {0.0, 1 / 0.75} and abs((m == 0).mean() - 0.25) < 0.05
    assert not draw("random", (3,), np.float64, like).requires_grad
