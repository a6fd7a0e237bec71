"""An int beside index arrays: PyTorch applies the int first (a select), NumPy counts it among
the arrays, so ``x[0, :, idx]`` is (3, 2, 5) in PyTorch and (2, 3, 5) in NumPy. Ours is
PyTorch's, for reading, writing and gradients."""

from __future__ import annotations

import numpy as np
import pytest

import tinygrad_attn as tga

torch = pytest.importorskip("torch")

I = [0, 2]
KEYS = [
    (0, slice(None), I),
    (slice(None), 0, slice(None), I),
    (1, slice(None), I, 1),
    (0, slice(None), None, I),
    (Ellipsis, I, 1),
    (1, Ellipsis, I),
    (0, None, I),
    (0, slice(None), I, slice(None)),
    # where NumPy and PyTorch agree (the int next to the array, or no int)
    (0, I),
    (I, slice(None), 0),
    (slice(None), I, None, I),
]


def _keys(key):
    ours = tuple(tga.tensor(k) if isinstance(k, list) else k for k in key)
    theirs = tuple(torch.tensor(k) if isinstance(k, list) else k for k in key)
    return ours, theirs


@pytest.mark.parametrize("key", KEYS, ids=str)
def test_reading_gives_pytorchs_layout_and_gradient(key):
    x = np.random.default_rng(0).standard_normal((6, 3, 4, 5))
    ours_key, torch_key = _keys(key)
    a = tga.tensor(x, requires_grad=True)
    b = torch.tensor(x, requires_grad=True)
    out, ref = a[ours_key], b[torch_key]
    assert out.shape == tuple(ref.shape)
    np.testing.assert_array_equal(out.detach().numpy(), ref.detach().numpy())
    w = np.random.default_rng(1).standard_normal(tuple(ref.shape))
    (out * tga.tensor(w)).sum().backward()
    (ref * torch.tensor(w)).sum().backward()
    np.testing.assert_allclose(a.grad.detach().numpy(), b.grad.detach().numpy(), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("key", KEYS, ids=str)
def test_writing_takes_the_value_in_pytorchs_layout(key):
    x = np.random.default_rng(2).standard_normal((6, 3, 4, 5))
    ours_key, torch_key = _keys(key)
    shape = tuple(torch.tensor(x)[torch_key].shape)
    v = np.random.default_rng(3).standard_normal(shape)
    # without gradients (NumPy's store) ...
    a, b = tga.tensor(x), torch.tensor(x)
    a[ours_key] = tga.tensor(v)
    b[torch_key] = torch.tensor(v)
    np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())
    # ... and recorded, with the gradients of the base and of the value
    xa, va = tga.tensor(x, requires_grad=True), tga.tensor(v, requires_grad=True)
    xb, vb = torch.tensor(x, requires_grad=True), torch.tensor(v, requires_grad=True)
    ya, yb = xa * 1.0, xb * 1.0
    ya[ours_key] = va * 2.0
    yb[torch_key] = vb * 2.0
    np.testing.assert_array_equal(ya.detach().numpy(), yb.detach().numpy())
    w = np.random.default_rng(4).standard_normal(x.shape)
    (ya * tga.tensor(w)).sum().backward()
    (yb * torch.tensor(w)).sum().backward()
    np.testing.assert_allclose(xa.grad.detach().numpy(), xb.grad.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(va.grad.detach().numpy(), vb.grad.detach().numpy(), rtol=1e-12)


def test_a_broadcast_value_is_read_in_pytorchs_layout():
    x = np.zeros((6, 3, 4, 5))
    v = np.arange(5.0)  # broadcast along (3, 2) of PyTorch's (3, 2, 5)
    a, b = tga.tensor(x), torch.tensor(x)
    a[0, :, tga.tensor(I)] = tga.tensor(v)
    b[0, :, torch.tensor(I)] = torch.tensor(v)
    np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())


def test_a_compiled_step_reads_the_same_layout():
    w = tga.tensor(np.random.default_rng(5).standard_normal((6, 3, 4)), requires_grad=True)
    step = tga.compile(lambda i: w[0, :, i].sum(0))
    for ids in ([0, 2], [1, 3], [3, 0]):
        ref = w.detach().numpy()[0][:, ids].sum(0)
        np.testing.assert_allclose(step(tga.tensor(ids)).detach().numpy(), ref)


def test_a_compiled_store_writes_the_same_layout():
    w = tga.zeros(6, 3, 4)

    def store(i, v):
        w[0, :, i] = v
        return w.sum()

    step = tga.compile(store)
    v = np.arange(6.0, dtype=np.float32).reshape(3, 2)
    for ids in ([0, 2], [1, 3], [3, 0]):
        w.zero_()
        step(tga.tensor(ids), tga.tensor(v))
        ref = np.zeros((3, 4), np.float32)
        ref[:, ids] = v
        np.testing.assert_array_equal(w.detach().numpy()[0], ref)
