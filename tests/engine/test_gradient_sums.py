"""Gradients a tensor gets from several consumers, when they are recorded (``create_graph``,
a trace), are summed by one ``AddN`` op (two by ``Add``): values bit for bit those of the pairwise sums an
ordinary backward makes, differentiable again, and at most ``_MAX_TERMS`` held at once."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import close, rand

import tinygrad_attn as tga
from tinygrad_attn import Tensor, ops
from tinygrad_attn.engine import backward as engine_backward


@pytest.mark.parametrize("n", [2, 3, 7])
def test_add_n_sums_left_to_right_as_add(device, rng, n):
    xs = [Tensor(rng.standard_normal((3, 5)).astype(np.float32), device=device) for _ in range(n)]
    want = xs[0]._data + xs[1]._data
    for x in xs[2:]:
        want = want + x._data
    got = ops.AddN.apply(*xs)
    np.testing.assert_array_equal(got.detach().numpy(), np.asarray(Tensor._wrap(want, xs[0]._dev).detach().numpy()))
    assert got.dtype == np.float32 and got.shape == (3, 5)


def test_add_n_broadcasts_and_promotes_as_add(device, rng):
    a = Tensor(rng.standard_normal((2, 3)).astype(np.float32), device=device)
    b = Tensor(rng.standard_normal((3,)), device=device)  # float64: promotes
    c = Tensor(rng.standard_normal((4, 1, 1)).astype(np.float32), device=device)  # broadcasts the sum
    got = ops.AddN.apply(a, b, c)
    want = (a + b) + c
    assert got.shape == want.shape == (4, 2, 3) and got.dtype == want.dtype == np.float64
    np.testing.assert_array_equal(got.detach().numpy(), want.detach().numpy())


def test_add_n_gradcheck_first_and_second_order(device, rng):
    a, b, c = (rand(rng, 2, 3, device=device) for _ in range(3))
    assert tga.gradcheck(lambda x, y, z: ops.AddN.apply(x, y, z) ** 2, a, b, c)
    w = rand(rng, 3, device=device, requires_grad=False)

    def grads(x, y, z):
        return tga.grad((ops.AddN.apply(x * y, y, z * x) ** 3 * w).sum(), (x, y, z), create_graph=True)

    assert tga.gradcheck(lambda x, y, z: sum((g * g).sum() for g in grads(x, y, z)), a, b, c)


def _uses(x, k):
    """x read by ``k`` consumers, each scaling it differently."""
    return sum(((x * float(i + 1)).tanh()).sum() for i in range(k))


def test_create_graph_sums_a_tensors_gradients_in_one_node(rng):
    x0 = rng.standard_normal((4, 3)).astype(np.float32)
    x = Tensor(x0, requires_grad=True)
    _uses(x, 5).backward()
    eager = x.grad.detach().numpy()
    x = Tensor(x0, requires_grad=True)
    (g,) = tga.grad(_uses(x, 5), x, create_graph=True)
    np.testing.assert_array_equal(g.detach().numpy(), eager)  # the same sums, in the same order
    assert isinstance(g._ctx, ops.AddN) and len(g._ctx.inputs) == 5
    (g2,) = tga.grad(_uses(x, 2), x, create_graph=True)
    assert isinstance(g2._ctx, ops.Add)  # two: the plain add, as a program reads best
    # and differentiable again: the gradient of sum(g^2) against finite differences
    assert tga.gradcheck(lambda t: (tga.grad(_uses(t, 5), t, create_graph=True)[0] ** 2).sum(), Tensor(x0))


def test_at_most_max_terms_wait_for_their_sum(rng):
    k = 2 * engine_backward._MAX_TERMS + 3
    x0 = rng.standard_normal((2, 3))
    x = Tensor(x0, requires_grad=True)
    _uses(x, k).backward()
    eager = x.grad.detach().numpy()
    x = Tensor(x0, requires_grad=True)
    (g,) = tga.grad(_uses(x, k), x, create_graph=True)
    np.testing.assert_array_equal(g.detach().numpy(), eager)
    sizes, stack = [], [g._ctx]
    while stack:
        fn = stack.pop()
        if isinstance(fn, ops.AddN):
            sizes.append(len(fn.inputs))
            stack += [t._ctx for t in fn.inputs if t._ctx is not None]
    # folded every _MAX_TERMS terms (the fold's sum being the first term of the next): 3 nodes for k
    assert max(sizes) <= engine_backward._MAX_TERMS and len(sizes) == 3, sizes
    assert sum(sizes) - (len(sizes) - 1) == k


def test_a_traced_loop_sums_a_weights_gradients_in_one_line(rng):
    w0 = rng.standard_normal((3, 3)).astype(np.float32)
    x0 = rng.standard_normal((2, 3)).astype(np.float32)

    def step(w, x):
        h = x
        for _ in range(10):  # an unrolled loop reading w at each step
            h = (h @ w).tanh()
        h.sum().backward()
        return w.grad

    w = Tensor(w0, requires_grad=True)
    eager = step(w, Tensor(x0)).detach().numpy()
    w = Tensor(w0, requires_grad=True)
    prog = tga.jit.trace(step, w, Tensor(x0))
    sums = [op for op in prog.ops if op.op in ("add", "add_n") and op.section == "backward"]
    assert [len(op.inputs) for op in sums if op.outputs[0].shape == (3, 3)] == [10], prog.code
    w = Tensor(w0, requires_grad=True)
    got = prog(w, Tensor(x0))
    np.testing.assert_array_equal(got.detach().numpy(), eager)


def test_an_ordinary_backward_still_adds_in_place(rng):
    # Arrays (no create_graph): no AddN node is made, the pass adds into one array it owns.
    calls = []
    orig = ops.AddN.forward

    def spy(self, ns, *arrays):
        calls.append(len(arrays))
        return orig(self, ns, *arrays)

    ops.AddN.forward = spy
    try:
        x = rand(rng, 3, 2)
        _uses(x, 6).backward()
    finally:
        ops.AddN.forward = orig
    assert calls == []
    close(
        x.grad, sum(float(i + 1) * (1 - np.tanh(float(i + 1) * x.detach().numpy()) ** 2) for i in range(6)), atol=1e-12
    )
