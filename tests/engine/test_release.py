"""Values the graph no longer needs go early; gradients the pass holds alone are reused.

- As an op records a large output, the ops before it drop the input arrays their
  backward does not read (``keep``), and an intermediate that only the graph holds, and
  whose values no step reads, gives them back (``engine.function._release_unread``).
- A backward step may write its result over the gradient it received when nothing else
  can see that array (``engine.function.may_overwrite``): softmax, a mask, a scale.

Both work only on arrays of at least ``FREE_MIN_SIZE`` elements; the fixture
``release_all`` lowers it to 1 so that small tests reach every branch. Both need exact
reference counts (``_CAN_COUNT_REFS``); without them nothing is released or reused, and
the tests check that instead.
"""

from __future__ import annotations

import math
import tracemalloc

import numpy as np
import pytest
from helpers import close, rand

import tinygrad_attn as tga
import tinygrad_attn.engine as engine
from tinygrad_attn import Tensor
from tinygrad_attn.engine.function import FreedArray

COUNTS = engine.switches._CAN_COUNT_REFS


@pytest.fixture
def release_all(monkeypatch):
    monkeypatch.setattr(engine.function, "FREE_MIN_SIZE", 1)


def _neither(monkeypatch):
    """Turn both mechanisms off (as where reference counts are not exact)."""
    monkeypatch.setattr(engine.switches, "_CAN_COUNT_REFS", False)
    monkeypatch.setattr(engine.switches._State, "releasing", False)


def _attention(p, blocked, h):
    """The user-written form, as in benchmarks/attention.py; returns (s, w, y)."""
    x = p["x"]
    b, t, d = x.shape
    dh = d // h

    def heads(m):
        return m.reshape(b, t, h, dh).permute(0, 2, 1, 3)

    q = heads(x @ p["Wq"].mT)
    k = heads(x @ p["Wk"].mT)
    v = heads(x @ p["Wv"].mT)
    s = (q @ k.mT) * (1.0 / math.sqrt(dh))
    w = s.masked_fill(blocked, -math.inf).softmax(-1)
    y = (w @ v).permute(0, 2, 1, 3).reshape(b, t, d) @ p["Wo"].mT
    return s, w, y


def _params(rng, b=2, t=6, d=8, device="cpu", dtype=np.float64):
    p = {"x": rand(rng, b, t, d, device=device, dtype=dtype)}
    for n in ("Wq", "Wk", "Wv", "Wo"):
        p[n] = rand(rng, d, d, device=device, dtype=dtype)
    blocked = Tensor(~np.tri(t, t, 0, dtype=bool), device=device)
    return p, blocked


# -- values released before backward ---------------------------------------------------------
def test_attention_scores_go_once_nothing_reads_them(release_all, rng):
    p, blocked = _params(rng)
    s, w, y = _attention(p, blocked, h=2)
    masked = w.grad_fn.inputs[0]
    scores = s.grad_fn.inputs[0]  # q @ k.mT, scaled into s
    assert isinstance(masked._data, FreedArray) == COUNTS  # softmax reads its output only
    assert isinstance(scores._data, FreedArray) == COUNTS  # a scale by a number reads nothing
    for held in (s, w, p["x"]):  # what the user holds keeps its values
        assert not isinstance(held._data, FreedArray)
    if COUNTS:
        assert "before backward" in repr(masked)
        with pytest.raises(RuntimeError, match="freed before backward"):
            masked.detach().numpy()
        assert masked.shape == (2, 2, 6, 6)  # the graph still has its shape for pictures


def test_gradients_are_the_same_with_and_without_releasing(release_all, monkeypatch, rng):
    p, blocked = _params(rng, dtype=np.float32)
    gy = Tensor(rng.standard_normal((2, 6, 8)).astype(np.float32))
    _, _, y = _attention(p, blocked, h=2)
    got = tga.grad(y, list(p.values()), gy)
    _neither(monkeypatch)
    _, _, y = _attention(p, blocked, h=2)
    want = tga.grad(y, list(p.values()), gy)
    for a, b in zip(got, want):
        np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())  # the same arithmetic, in place or not


def test_attention_written_by_hand_matches_finite_differences_with_everything_released(release_all, rng):
    p, blocked = _params(rng, b=1, t=4, d=4)
    names = list(p)

    def f(*ts):
        return _attention(dict(zip(names, ts)), blocked, h=2)[2]

    assert tga.gradcheck(f, *p.values())


def test_uses_count_recorded_ops_exactly(rng):
    x = rand(rng, 3)
    h = x.tanh()
    with tga.no_grad():
        h * 5.0  # records nothing
    mask = h > 0.0  # has no gradient: records nothing
    assert not mask.requires_grad
    assert h._uses == 0  # so a reference count can be compared with it
    y = h * h
    assert h._uses == 2 and y._uses == 0


def test_what_the_user_holds_is_never_freed(release_all, rng):
    x = rand(rng, 3, 4)
    held = x @ x.mT  # the user holds the tensor
    t = x @ x.mT
    arr = t._data  # the user holds only the array
    dropped = x @ x.mT  # the user lets go
    ys = [u * 2.0 for u in (held, t, dropped)]
    del t, dropped
    [y * 1.0 for y in ys]  # each records a large output: the ops before release what they can
    freed = [isinstance(y.grad_fn.inputs[0]._data, FreedArray) for y in ys]
    assert freed == [False, False, COUNTS]
    np.testing.assert_array_equal(arr, x.detach().numpy() @ x.detach().numpy().T)


def test_an_array_a_step_reads_is_kept(release_all, rng):
    x, w = rand(rng, 5), rand(rng, 5)
    h = x @ x * 1.0 + x  # an intermediate both steps of `h * w` need
    out = (h * w).tanh() * 2.0  # h * w reads h for w's gradient
    out2 = out * 1.0
    mul = out.grad_fn.inputs[0].grad_fn.inputs[0].grad_fn  # h * w
    assert mul.saved[0] is not None and mul.saved[1] is not None  # both sides need a gradient
    assert not isinstance(mul.inputs[0]._data, FreedArray)
    out2.sum().backward()
    a, b = x.detach().numpy(), w.detach().numpy()
    hh = a @ a + a
    dt = 2 * (1 - np.tanh(hh * b) ** 2)
    close(w.grad, dt * hh)


def test_a_product_keeps_only_the_side_the_other_gradient_reads(release_all, rng):
    x = rand(rng, 4)
    mask = Tensor(rng.standard_normal(4))  # needs no gradient
    y = x.exp() * mask  # x.exp()'s values: read by nobody (mask needs no gradient)
    z = y * 1.0  # a recorded large output: y's node drops what it does not read
    assert y.grad_fn.saved[0] is None and y.grad_fn.saved[1] is not None
    z.sum().backward()
    close(x.grad, np.exp(x.detach().numpy()) * mask.detach().numpy())


def test_second_order_through_released_values(release_all, monkeypatch, rng):
    x = rand(rng, 3, 5)
    mask = Tensor(rng.standard_normal((3, 5)))

    def grad_of(t):
        h = (t @ t.mT @ t) * mask  # (t @ t.mT @ t): freed, mask needs no gradient
        s = (h * 0.5).softmax(-1)  # softmax's input: freed
        (g,) = tga.grad((s * s * 1.0).sum(), t, create_graph=True)
        return g

    assert tga.gradcheck(grad_of, x)
    (got,) = tga.grad(grad_of(x).sum(), x)
    _neither(monkeypatch)
    (want,) = tga.grad(grad_of(x).sum(), x)
    close(got, want.detach().numpy(), atol=1e-12, rtol=1e-12)


@pytest.mark.parametrize("seed", range(4))
def test_random_graphs_match_finite_differences_with_everything_released(release_all, seed):
    pick = np.random.default_rng(seed)
    blocked = Tensor(pick.random((3, 3)) < 0.3)
    unary = [
        lambda a: a.tanh(),
        lambda a: a * 0.7,
        lambda a: a.exp() * 0.1,
        lambda a: -a,
        lambda a: a.masked_fill(blocked, 0.0),
        lambda a: a.softmax(-1),
        lambda a: a.mT,
        lambda a: a.reshape(9).reshape(3, 3) / 2.0,
    ]
    binary = [
        lambda a, b: a * b,
        lambda a, b: a + b,
        lambda a, b: a - b * 0.5,
        lambda a, b: a @ b,
        lambda a, b: a / (b * b + 1.0),
    ]
    plan = [
        (int(pick.integers(2)), int(pick.integers(40)), [int(pick.integers(10**6)) for _ in range(2)])
        for _ in range(20)
    ]

    def f(x, w):
        nodes = [x, w, x * w]
        for kind, op, (i, j) in plan:
            a, b = nodes[i % len(nodes)], nodes[j % len(nodes)]
            nodes.append(unary[op % len(unary)](a) if kind == 0 else binary[op % len(binary)](a, b))
        return (nodes[-1] + nodes[-4] * nodes[len(nodes) // 2]).sum()

    x = Tensor(pick.standard_normal((3, 3)) * 0.5)
    w = Tensor(pick.standard_normal((3, 3)) * 0.5)
    assert tga.gradcheck(f, x, w)


@pytest.mark.parametrize("seed", range(8))
def test_random_programs_give_the_same_gradients_with_and_without_releasing(release_all, monkeypatch, seed):
    """Random programs over matrices, some intermediates held, some retained, some used
    twice: every gradient bit for bit the same as with both mechanisms off."""
    pick = np.random.default_rng(seed)
    blocked = Tensor(~np.tri(4, 4, 0, dtype=bool))
    steps = [
        lambda a, b: a @ b.mT,
        lambda a, b: (a * 0.5).masked_fill(blocked, -math.inf).softmax(-1) @ b,
        lambda a, b: a * b + a,
        lambda a, b: (a - b * 2.0).tanh(),
        lambda a, b: a.mT.reshape(16).reshape(4, 4) / 3.0,
        lambda a, b: -a + b.exp() * 0.1,
    ]
    plan = [(int(pick.integers(len(steps))), int(pick.integers(99)), int(pick.integers(99)), int(pick.integers(4)))
            for _ in range(16)]  # fmt: skip
    x0, w0 = pick.standard_normal((4, 4)), pick.standard_normal((4, 4))

    def run():
        x, w = Tensor(x0, requires_grad=True), Tensor(w0, requires_grad=True)
        nodes, held, retained = [x, w], [], []
        for k, i, j, keep in plan:
            out = steps[k](nodes[i % len(nodes)], nodes[j % len(nodes)])
            if keep == 0:
                held.append(out)  # the user holds it
            elif keep == 1:
                out.retain_grad()
                retained.append(out)
            nodes.append(out)
        loss = (nodes[-1] * nodes[-2]).sum() + nodes[len(nodes) // 2].sum()
        loss.backward()
        return [x.grad.detach().numpy(), w.grad.detach().numpy()] + [
            r.grad.detach().numpy() for r in retained if r.grad is not None
        ]

    got = run()
    _neither(monkeypatch)
    want = run()
    assert len(got) == len(want)
    for a, b in zip(got, want):
        np.testing.assert_array_equal(a, b)


# -- gradients written over in place -----------------------------------------------------------
def test_a_gradient_someone_else_holds_is_never_written_over(release_all, rng):
    x = rand(rng, 4, 6)
    gy = rng.standard_normal((4, 6))
    g = Tensor(gy.copy())
    blocked = Tensor(rng.random((4, 6)) < 0.5)
    h = x * 2.0
    h.retain_grad()
    y = (h.masked_fill(blocked, 0.0) * 3.0).softmax(-1)
    y.backward(g)
    np.testing.assert_array_equal(g.detach().numpy(), gy)  # the caller's gradient is untouched
    sm = np.exp(3 * np.where(blocked.detach().numpy(), 0, 2 * x.detach().numpy()))
    sm /= sm.sum(-1, keepdims=True)
    gs = sm * (gy - (gy * sm).sum(-1, keepdims=True)) * 3.0
    gh = np.where(blocked.detach().numpy(), 0.0, gs)
    close(h.grad, gh, atol=1e-12)  # the retained gradient was not overwritten by x's step
    close(x.grad, 2 * gh, atol=1e-12)


def test_a_view_of_a_gradient_another_step_still_needs_is_never_written_over(release_all, rng):
    x = rand(rng, 4, 4)
    g = rng.standard_normal((4, 4))
    y = x * 3.0 + (x * 2.0).mT  # the add hands one array to both sides; .mT's step returns a view of it
    y.backward(Tensor(g * 1.0))  # (a temporary: the pass alone holds the root gradient)
    close(x.grad, 3 * g + 2 * g.T, atol=1e-12)


def test_backward_overwrites_gradients_only_it_holds(release_all, monkeypatch, rng):
    from tinygrad_attn.ops import elementwise, fused

    x = rand(rng, 3, 4)
    seen = []

    def spy(cls):
        real = cls.backward

        def backward(self, g, ns, inputs, out):
            allowed = engine.function.may_overwrite(g)
            gs = real(self, g, ns, inputs, out)
            seen.append((cls.op_name_of(), allowed, any(gi is g for gi in gs)))
            return gs

        monkeypatch.setattr(cls, "backward", backward)

    spy(fused.SoftmaxAlongDim)
    spy(elementwise.Mul)
    ((x @ x.mT * 2.0).softmax(-1) @ x).sum().backward()
    # softmax's step, then the scale's: both got fresh arrays, and wrote over them
    assert seen == [("softmax", COUNTS, COUNTS), ("mul", COUNTS, COUNTS)]
    seen.clear()
    y = (x * 2.0).softmax(-1)
    y.backward(Tensor(np.ones((3, 4))))  # the caller's gradient: never
    assert seen == [("softmax", False, False), ("mul", COUNTS, COUNTS)]


def test_peak_memory_falls(monkeypatch, rng):
    b, t, d, h = 2, 128, 64, 2  # the scores and the heads' outputs: FREE_MIN_SIZE elements or more
    assert b * h * t * (d // h) >= engine.function.FREE_MIN_SIZE
    p, blocked = _params(rng, b=b, t=t, d=d, dtype=np.float32)

    def peak():
        tracemalloc.start()
        try:
            _, _, y = _attention(p, blocked, h=h)
            y.sum().backward()
            return tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()

    with_both = peak()
    _neither(monkeypatch)
    without = peak()
    scores = b * h * t * t * 4
    if COUNTS:  # the scores and the masked scores go as soon as they are read; backward makes fewer
        assert with_both <= without - 2 * scores
    else:
        assert with_both == without


def test_fill_where_on_every_device(device, rng):
    ops = tga.get_device(device).ops
    g = Tensor(rng.standard_normal((3, 4)), device=device)._data
    cond = Tensor(rng.random((1, 4)) < 0.5, device=device)._data
    want = np.where(np.asarray(Tensor._wrap(cond, tga.get_device(device)).detach().numpy()), 0.0,
                    Tensor._wrap(g, tga.get_device(device)).detach().numpy())  # fmt: skip
    got = ops.fill_where(g, cond, 0.0)
    np.testing.assert_array_equal(Tensor._wrap(got, tga.get_device(device)).detach().numpy(), want)
