"""Strided views: ``diagonal`` of any two axes and ``unfold`` share their input's memory, as
PyTorch's do (``ops.movement.Strided``).

Checked against PyTorch 2.13: values, memory sharing both ways (a write through the view
reaches the input, a write into the input shows in the view), gradients (finite
differences, first and second order, on every CPU device), in-place changes of the view
before backward, the version check of a view saved for backward, and a traced program.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from helpers import rand, shares_memory, torch_shares_memory

import tinygrad_attn as tga
from tinygrad_attn import Tensor, ops
from tinygrad_attn.viz.graph import forward_graph

torch = pytest.importorskip("torch")

A = np.arange(1.0, 61.0).reshape(3, 4, 5)

# every ordered pair of axes of a 3-D tensor, apart (0 and 2) or next to each other
PAIRS = [(a, b) for a, b in itertools.permutations(range(3), 2)] + [(0, -1), (-1, -3)]
OFFSETS = [0, 1, -1, 3, -2, 9, -9]  # (9 and -9: past every side, an empty diagonal)
# (dimension, size, step): windows overlapping (step < size), touching (==) and apart (>)
WINDOWS = [(0, 2, 1), (1, 3, 1), (2, 2, 2), (2, 1, 3), (1, 3, 3), (-1, 3, 1), (1, 0, 2), (0, 1, 1), (2, 3, 2)]
# the input as given, transposed, and a view of a view (memory in another order)
LAYOUTS = {
    "plain": lambda x: x,
    "permuted": lambda x: x.permute(2, 0, 1),
    "transposed_slice": lambda x: x.transpose(0, 2)[1:],
}


def _pair(layout: str):
    """Our tensor and PyTorch's, each in ``layout``, with their bases."""
    x, tx = Tensor(A.copy()), torch.from_numpy(A.copy())
    f = LAYOUTS[layout]
    return x, tx, f(x), f(tx)


def _diag(offset, d1, d2):
    return lambda t: t.diagonal(offset, d1, d2)


def _unfold(d, size, step):
    return lambda t: t.unfold(d, size, step)


VIEWS = {f"diagonal_{o}_{a}_{b}": _diag(o, a, b) for (a, b) in PAIRS for o in OFFSETS}
VIEWS |= {f"unfold_{d}_{s}_{p}": _unfold(d, s, p) for (d, s, p) in WINDOWS}


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
@pytest.mark.parametrize("name", sorted(VIEWS))
def test_values_and_memory_as_pytorchs(name, layout):
    f = VIEWS[name]
    x, tx, v, tv = _pair(layout)
    r, tr = f(v), f(tv)
    assert tuple(r.shape) == tuple(tr.shape)
    np.testing.assert_array_equal(r.detach().numpy(), tr.detach().numpy())
    assert shares_memory(r, x) == torch_shares_memory(tr, tx)
    assert r.numel() == 0 or shares_memory(r, x)  # a view wherever it has elements
    # a change of the input shows in the view
    x.mul_(-2.0)
    tx.mul_(-2.0)
    np.testing.assert_array_equal(r.detach().numpy(), tr.detach().numpy())


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
@pytest.mark.parametrize("name", sorted(VIEWS))
def test_a_write_through_the_view_reaches_the_input(name, layout):
    f = VIEWS[name]
    x, tx, v, tv = _pair(layout)
    r, tr = f(v), f(tv)
    if getattr(r, "_base", None).overlaps:  # (raises: see the overlap test below)
        return
    r.add_(1000.0)
    tr.add_(1000.0)
    np.testing.assert_array_equal(x.detach().numpy(), tx.detach().numpy())
    r[..., :1] = -7.0
    tr[..., :1] = -7.0
    np.testing.assert_array_equal(x.detach().numpy(), tx.detach().numpy())


@pytest.mark.parametrize("grad", [False, True])
def test_an_in_place_change_of_overlapping_windows_raises_naming_the_op(grad):
    """PyTorch 2.13 changes each element of the base once per window it is in, in the order
    its kernel visits them (``x.unfold(0, 3, 1).add_(1)`` adds 1, 2 or 3): no single answer,
    so here it raises rather than differ silently. A window on its own can be changed."""
    x = Tensor(np.arange(8.0), requires_grad=grad)
    h = x * 1.0 if grad else x
    u = h.unfold(0, 3, 1)
    with pytest.raises(RuntimeError, match=r"add_: .*shape \(6, 3\).*unfold.*overlap"):
        u.add_(1.0)
    with pytest.raises(RuntimeError, match=r"unfold.*overlap"):
        u.zero_()
    np.testing.assert_array_equal(h.detach().numpy(), np.arange(8.0))  # unchanged
    apart = h.unfold(0, 3, 3)  # windows that do not overlap: changed as PyTorch changes them
    apart.mul_(2.0)
    np.testing.assert_array_equal(h.detach().numpy(), [0, 2, 4, 6, 8, 10, 6, 7])


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
@pytest.mark.parametrize("name", sorted(VIEWS))
def test_in_place_on_the_view_then_backward_as_pytorch(name, layout):
    f = VIEWS[name]
    x, tx = Tensor(A.copy(), requires_grad=True), torch.from_numpy(A.copy()).requires_grad_()
    h, th = LAYOUTS[layout](x * 0.5), LAYOUTS[layout](tx * 0.5)
    r, tr = f(h), f(th)
    if isinstance(r._ctx, ops.Strided) and r._ctx.overlaps:  # (raises: see above)
        return
    r.mul_(3.0)
    tr.mul_(3.0)
    w = np.linspace(-1.0, 1.0, h.numel()).reshape(tuple(h.shape))
    (h * h * Tensor(w)).sum().backward()
    (th * th * torch.from_numpy(w)).sum().backward()
    np.testing.assert_allclose(x.grad.detach().numpy(), tx.grad.detach().numpy(), rtol=1e-12)


@pytest.mark.parametrize(
    "f", [_diag(1, 0, 2), _diag(-1, 2, 0), _diag(0, 1, 2), _unfold(1, 2, 1), _unfold(2, 2, 2), _unfold(0, 1, 2)]
)
def test_gradients_first_and_second_order(device, rng, f):
    x = rand(rng, 3, 4, 5, device=device)
    assert tga.gradcheck(lambda t: f(t.transpose(0, 2)) * f(t.transpose(0, 2)).sin(), x)
    w = Tensor(rng.standard_normal(tuple(f(x.transpose(0, 2)).shape)), device=device)

    def first(t):  # the gradient, itself differentiable (create_graph=True)
        (g,) = tga.grad((f(t.transpose(0, 2)).sin() * w).sum(), t, create_graph=True)
        return g

    assert tga.gradcheck(first, x)


def test_overlapping_windows_sum_their_gradients_as_pytorchs():
    a = np.random.default_rng(1).standard_normal((4, 7))
    x, tx = Tensor(a, requires_grad=True), torch.from_numpy(a).requires_grad_()
    for t in (x, tx):
        u = t.T.unfold(0, 3, 1)  # (5, 4, 3): the middle rows in three windows each
        (u * u.cos()).sum().backward()
    np.testing.assert_allclose(x.grad.detach().numpy(), tx.grad.detach().numpy(), rtol=1e-12)


@pytest.mark.parametrize("f", [_diag(0, 0, 2), _diag(-1, 2, 0), _unfold(1, 2, 1), _unfold(2, 2, 3)])
def test_changing_the_base_after_a_saved_view_raises_at_backward_as_pytorch(f):
    errors = []
    for m, x in ((tga, Tensor(A.copy(), requires_grad=True)), (torch, torch.from_numpy(A.copy()).requires_grad_())):
        h = x * 1.0
        v = f(h)
        w = m.ones(tuple(v.shape), dtype=m.float64, requires_grad=True)
        y = (v * w).sum()  # the product keeps v for w's gradient
        h.mul_(2.0)
        with pytest.raises(RuntimeError) as e:
            y.backward()
        errors.append(str(e.value))
    assert "in-place" in errors[0] and "version" in errors[0]


@pytest.mark.parametrize("f", [_diag(1, 0, 2), _unfold(1, 2, 1)])
def test_a_view_used_after_its_base_changed_sees_the_new_values_and_gradient(f):
    x, tx = Tensor(A.copy(), requires_grad=True), torch.from_numpy(A.copy()).requires_grad_()
    for t in (x, tx):
        h = t * 1.0
        v = f(h)
        h.mul_(3.0)
        (v * v).sum().backward()
    np.testing.assert_allclose(x.grad.detach().numpy(), tx.grad.detach().numpy(), rtol=1e-12)


def _check_replay(fn, x, rng):
    prog = tga.jit.trace(fn, x)
    new = Tensor(rng.standard_normal(x.shape), device=x.device, requires_grad=True)
    out = prog(new)
    got = new.grad.detach().numpy()
    new.grad = None
    ref = fn(new)
    ref.backward()
    np.testing.assert_allclose(out.detach().numpy(), ref.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(got, new.grad.detach().numpy(), rtol=1e-12)
    return prog


def test_a_traced_program_replays_the_views(device, rng):
    def fn(x):
        return (x.diagonal(1, 0, 2) ** 2).sum() + x.transpose(0, 1).unfold(0, 2, 1).sin().sum()

    prog = _check_replay(fn, rand(rng, 3, 4, 5, device=device), rng)
    src = str(prog)
    assert "diagonal" in src and "unfold" in src


def test_a_traced_write_through_a_diagonal_replays(rng):
    def fn(x):
        h = x * 1.0
        h.diagonal(0, 0, 2).mul_(2.0)
        return (h * h).sum()

    _check_replay(fn, rand(rng, 3, 4, 5), rng)


def test_the_graph_names_the_views():
    x = Tensor(A.copy(), requires_grad=True)
    y = x.diagonal(0, 0, 2).sum() + x.unfold(1, 2, 1).sum()
    nodes = {n.title: n.lines for n in forward_graph(y).nodes}
    assert nodes["diagonal"][1] == "dims 0, 2 from (0, 0, 0)"
    assert nodes["unfold"][1] == "dim 1, size 2, step 1"


def test_overlap_read_from_the_arguments_agrees_with_a_search_of_the_positions():
    """``Unfold.overlaps`` and ``Diagonal.overlaps`` (from the arguments) against the positions
    each view reads: two equal positions exactly where it says it overlaps."""
    for shape in [(7,), (3, 6), (5, 1, 4)]:
        for d, n in enumerate(shape):
            for size, step in itertools.product(range(n + 1), range(1, 5)):
                fn = Tensor(np.zeros(shape)).unfold(d, size, step)._base
                pos = fn.positions(shape)
                assert fn.overlaps == (np.unique(pos).size < pos.size), (shape, d, size, step)
                last = pos[..., 0] if pos.size else pos
                assert fn.last_axis_apart and np.unique(last).size == last.size
    for (a, b), o in itertools.product(itertools.permutations(range(3), 2), range(-3, 4)):
        fn = Tensor(np.zeros((3, 4, 2))).diagonal(o, a, b)._base
        pos = fn.positions((3, 4, 2))
        assert not fn.overlaps and np.unique(pos).size == pos.size


@pytest.mark.parametrize(
    "change",
    [
        lambda u: u[0].mul_(2.0),
        lambda u: u[..., 0].add_(10.0),  # entry 0 of every window: distinct elements
        lambda u: u[2, 1:].mul_(-1.0),
        lambda u: (u[3].mul_(2.0), u[0].add_(1.0)),
    ],
)
def test_a_window_of_overlapping_windows_changes_in_place_as_pytorch(change):
    a = np.arange(1.0, 17.0).reshape(2, 8)
    x, tx = Tensor(a.copy(), requires_grad=True), torch.from_numpy(a.copy()).requires_grad_()
    values = []
    for t in (x, tx):
        h = t * 1.0
        u = h.T.unfold(0, 3, 1)  # (6, 2, 3): windows one apart
        change(u)
        (h * h * h).sum().backward()
        values.append(h.detach().numpy())
    np.testing.assert_array_equal(values[0], values[1])
    np.testing.assert_allclose(x.grad.detach().numpy(), tx.grad.detach().numpy(), rtol=1e-12)


def test_two_overlapping_windows_changed_at_once_raise():
    h = Tensor(np.arange(8.0), requires_grad=True) * 1.0
    u = h.unfold(0, 3, 1)
    with pytest.raises(RuntimeError, match=r"mul_: .*unfold.*overlap"):
        u[0:2].mul_(2.0)


def test_without_grad_a_window_changes_and_two_overlapping_ones_raise():
    x, tx = Tensor(np.arange(8.0)), torch.arange(8.0, dtype=torch.float64)
    for t in (x, tx):
        u = t.unfold(0, 3, 1)
        u[2].mul_(10.0)
        u[..., 1].add_(0.5)
    np.testing.assert_array_equal(x.detach().numpy(), tx.detach().numpy())
    with pytest.raises(RuntimeError, match=r"add_: .*unfold.*overlap"):
        x.unfold(0, 3, 1)[1:3].add_(1.0)
