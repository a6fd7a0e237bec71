"""``Tensor.register_hook`` against PyTorch: each hook gets the tensor's complete gradient, in
the order registered; a tensor returned replaces it (a leaf's before ``.grad``, a non-leaf's
before it flows on, and before ``retain_grad`` keeps it); ``remove()`` takes a hook away."""

from __future__ import annotations

import numpy as np
import pytest

import tinygrad_attn as tga

torch = pytest.importorskip("torch")


def _run(lib, create_graph=False):
    a = np.array([1.0, -2.0, 3.0])
    x = lib.tensor(a, requires_grad=True)
    seen = []
    y = x * x
    y.retain_grad()
    hy = y.register_hook(lambda g: seen.append(("y", np.array(g.detach().numpy()))))
    y.register_hook(lambda g: g * 10.0)  # flows on to x, and into y.grad
    x.register_hook(lambda g: seen.append(("x", np.array(g.detach().numpy()))))
    hx = x.register_hook(lambda g: g + 1.0)
    z = (y * lib.tensor(np.array([1.0, 2.0, 3.0]))).sum()
    z.backward(create_graph=create_graph)
    grads = [np.array(x.grad.detach().numpy()), np.array(y.grad.detach().numpy())]
    hy.remove()
    hx.remove()
    x.grad = None
    (x * x).sum().backward()  # x's first hook stays, the second is gone
    grads.append(np.array(x.grad.detach().numpy()))
    return seen, grads


@pytest.mark.parametrize("create_graph", [False, True])
def test_hooks_see_and_replace_gradients_as_pytorchs(create_graph):
    (s1, g1), (s2, g2) = _run(tga, create_graph), _run(torch, create_graph)
    assert [k for k, _ in s1] == [k for k, _ in s2]
    for (_, a), (_, b) in zip(s1, s2):
        np.testing.assert_allclose(a, b, rtol=1e-12)
    for a, b in zip(g1, g2):
        np.testing.assert_allclose(a, b, rtol=1e-12)


def test_hooks_apply_in_tga_grad_and_refuse_what_pytorch_refuses():
    x = tga.tensor(np.ones(3), requires_grad=True)
    x.register_hook(lambda g: g * 2.0)
    (gx,) = tga.grad((x * 3.0).sum(), x)
    np.testing.assert_array_equal(gx.detach().numpy(), np.full(3, 6.0))
    with pytest.raises(RuntimeError, match="doesn't require gradient"):
        tga.ones(2).register_hook(lambda g: g)
    y = tga.tensor(np.ones(3), requires_grad=True)
    y.register_hook(lambda g: tga.ones(2))
    with pytest.raises(RuntimeError, match=r"shape \(2,\)"):
        (y * 1.0).sum().backward()


def test_a_hook_inside_a_compiled_step_raises_instead_of_replaying_without_it():
    w = tga.nn.Parameter(np.ones(3))
    w.register_hook(lambda g: g * 0.5)

    def step(x):
        (w * x).sum().backward()
        return w.grad

    with pytest.raises(tga.TraceError, match="register_hook"):
        tga.compile(step)(tga.ones(3))
