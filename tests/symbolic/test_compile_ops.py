"""The ops a trace records where eager bakes values in: ``Take``/``PutAdd`` (a gather and
its adjoint with the index as an input), ``Put`` (``x[idx] = v``, the last of repeated
writes kept) and ``Draw`` (random numbers drawn when the op runs), checked on every CPU
device."""

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
    close(_take(x, device, axis), np.take(x.detach().numpy(), INDEX, axis=axis), atol=0, rtol=0)
    assert tga.gradcheck(lambda t: _take(t, device, axis), x)


def test_take_second_order(device, rng):
    x = rand(rng, 3, 3, device=device)
    w = Tensor(rng.standard_normal((3, 2, 3)), device=device)

    def grad_of(t, create_graph=True):
        (g,) = tga.grad((_take(t, device) ** 2 * w).sum(), t, create_graph=create_graph)
        return g

    close(grad_of(x), grad_of(x, create_graph=False).detach().numpy(), atol=1e-12, rtol=1e-10)
    assert tga.gradcheck(grad_of, x)


def test_put_add_is_the_adjoint_of_take(device, rng):
    g = rand(rng, 3, 2, 3, device=device)
    out = ops.PutAdd.apply(g, Tensor(INDEX, device=device), args=((3, 3), 0))
    expect = np.zeros((3, 3))
    np.add.at(expect, INDEX, g.detach().numpy())
    close(out, expect, atol=1e-12, rtol=1e-12)
    assert tga.gradcheck(lambda t: ops.PutAdd.apply(t, Tensor(INDEX, device=device), args=((3, 3), 0)), g)


def test_draw_follows_the_generator_on_every_device(device):
    like = Tensor(np.zeros(()), device=device)
    tga.manual_seed(7)
    a = draw("standard_normal", (4,), np.float64, like).detach().numpy()
    m = draw("dropout", (1000,), np.float64, like, 0.25).detach().numpy()
    tga.manual_seed(7)
    np.testing.assert_array_equal(a, tga.randn(4, dtype=tga.float64).detach().numpy())
    assert set(np.unique(m).tolist()) == {0.0, 1 / 0.75} and abs((m == 0).mean() - 0.25) < 0.05
    assert not draw("random", (3,), np.float64, like).requires_grad


# -- Put: x[idx] = v with the index an input, the last of repeated writes kept ----------
PUT_INDEX = np.array([4, 1, 4, 0, 1])  # positions 4 and 1 written twice: the later write stays


def _put(x, v, device, index=PUT_INDEX):
    return ops.Put.apply(x, v, Tensor(index, device=device))


def test_put_keeps_the_last_write_as_numpy_stores(device, rng):
    x, v = rand(rng, 6, device=device), rand(rng, 5, device=device)
    expect = x.detach().numpy().copy()
    expect[PUT_INDEX] = v.detach().numpy()  # (NumPy: the last write to a position stays)
    close(_put(x, v, device), expect, atol=0, rtol=0)
    expect = x.detach().numpy().copy()
    expect[PUT_INDEX] = 2.5
    close(_put(x, 2.5, device), expect, atol=0, rtol=0)


def test_put_gradient_is_pytorchs_index_put(device, rng):
    torch = pytest.importorskip("torch")
    x, v = rand(rng, 6, device=device), rand(rng, 5, device=device)
    w = rng.standard_normal(6)
    (_put(x, v, device) * Tensor(w, device=device)).sum().backward()
    tx, tv = torch.tensor(x.detach().numpy(), requires_grad=True), torch.tensor(v.detach().numpy(), requires_grad=True)
    (tx.index_put((torch.tensor(PUT_INDEX),), tv) * torch.tensor(w)).sum().backward()
    close(x.grad, tx.grad.detach().numpy(), atol=0, rtol=0)  # zero where written
    close(v.grad, tv.grad.detach().numpy(), atol=0, rtol=0)  # gathered, for every write


def test_put_gradcheck_first_and_second_order(device, rng):
    # Distinct positions: with a repeated one, the value written first and overwritten gets
    # PyTorch's gathered gradient (above), where finite differences see no effect.
    index = np.array([4, 1, 0, 2])
    x, v = rand(rng, 6, device=device), rand(rng, 4, device=device)
    assert tga.gradcheck(lambda a, b: _put(a, b, device, index), x, v)
    w = Tensor(rng.standard_normal(6), device=device)

    def grads(a, b, create_graph=True):
        return tga.grad((_put(a, b, device, index) ** 2 * w).sum(), (a, b), create_graph=create_graph)

    for got, want in zip(grads(x, v), grads(x, v, create_graph=False)):
        close(got, want.detach().numpy(), atol=1e-12, rtol=1e-10)
    assert tga.gradcheck(lambda a, b: sum((g * g).sum() for g in grads(a, b)), x, v)


def test_setitem_with_a_repeated_index_replays_as_eager():
    # Eager keeps the last of repeated writes (NumPy's and PyTorch's CPU rule); a replay,
    # where the index is an input of the program, must too: values and gradients bit for bit.
    rng = np.random.default_rng(5)
    x0, v0, w = rng.standard_normal((5, 3)), rng.standard_normal((4, 3)), rng.standard_normal((5, 3))

    def make():
        x = Tensor(x0.copy(), requires_grad=True)
        v = Tensor(v0.copy(), requires_grad=True)

        def step(idx):
            x.grad = v.grad = None
            h = x * 1.0
            h[idx] = v * 2.0
            h[idx[:2]] += 1.0  # a read of the written rows, then a write again
            loss = (h * h * Tensor(w)).sum()
            loss.backward()
            return h.detach(), loss

        return step, x, v

    calls = [[1, 3, 1, 0], [2, 2, 2, 2], [0, 1, 2, 3], [4, 0, 4, 0], [3, 3, 1, 1]]
    results = []
    for compiled in (False, True):
        step, x, v = make()
        run = tga.compile(step) if compiled else step
        got = []
        for idx in calls:
            h, loss = run(Tensor(np.array(idx)))
            got.append((h.detach().numpy(), loss.detach().numpy(), x.grad.detach().numpy(), v.grad.detach().numpy()))
        if compiled:
            assert len(run.programs) == 1 and "put" in run.program.code
        results.append(got)
    for call, (eager, replayed) in enumerate(zip(*results)):
        for what, a, b in zip(("h", "loss", "x.grad", "v.grad"), eager, replayed):
            np.testing.assert_array_equal(b, a, err_msg=f"call {call} ({calls[call]}): {what}")
    h = results[0][0][0]  # the first call, [1, 3, 1, 0]: row 1 from its last write, rows 1 and 3 then + 1
    np.testing.assert_array_equal(h[[1, 3, 0]], 2.0 * v0[[2, 1, 3]] + [[1.0], [1.0], [0.0]])
