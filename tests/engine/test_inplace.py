"""In-place ops, item assignment and versions: values, identity, no_grad updates, recorded
gradients (finite differences, every CPU device, second order), the version error, and
PyTorch as the oracle."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import close, examples, rand
from hypothesis import example, given, settings
from hypothesis import strategies as st

import tinygrad_attn as tga
import tinygrad_attn.engine as engine
from tinygrad_attn import Tensor

# name -> (in-place call, the same written out of place); ``o`` is a second operand
INPLACE = {
    "add_": (lambda x, o: x.add_(o), lambda x, o: x + o),
    "add_ alpha": (lambda x, o: x.add_(o, alpha=0.5), lambda x, o: x + o * 0.5),
    "sub_": (lambda x, o: x.sub_(o), lambda x, o: x - o),
    "mul_": (lambda x, o: x.mul_(o), lambda x, o: x * o),
    "div_": (lambda x, o: x.div_(o), lambda x, o: x / o),
    "iadd": (lambda x, o: x.__iadd__(o), lambda x, o: x + o),
    "isub": (lambda x, o: x.__isub__(o), lambda x, o: x - o),
    "imul": (lambda x, o: x.__imul__(o), lambda x, o: x * o),
    "itruediv": (lambda x, o: x.__itruediv__(o), lambda x, o: x / o),
    "fill_": (lambda x, o: x.fill_(o.sum()), lambda x, o: o.sum() + x * 0),
    "copy_": (lambda x, o: x.copy_(o), lambda x, o: o + x * 0),
    "masked_fill_": (lambda x, o: x.masked_fill_(x > 0, o.sum()), lambda x, o: tga.where(x > 0, o.sum(), x)),
    "clamp_": (lambda x, o: x.clamp_(-0.5, 0.5), lambda x, o: x.clip(-0.5, 0.5)),
    "setitem basic": (lambda x, o: x.__setitem__((slice(None), 1), o[:, 0]) or x, None),
    "setitem index": (lambda x, o: x.__setitem__(([0, 2, 2], [1, 0, 2]), o[0]) or x, None),
    "setitem mask": (lambda x, o: x.__setitem__(x > 0.3, o.sum()) or x, None),
}


def _ref_setitem(name, x, o):
    h = x.detach().numpy().copy()
    if name == "setitem basic":
        h[:, 1] = o.detach().numpy()[:, 0]
    elif name == "setitem index":
        h[[0, 2, 2], [1, 0, 2]] = o.detach().numpy()[0]
    else:
        h[h > 0.3] = o.detach().numpy().sum()
    return h


def _pair(rng, device, requires_grad=False):
    x = Tensor(rng.uniform(0.5, 1.5, (3, 3)) * rng.choice([-1, 1], (3, 3)), device=device, requires_grad=requires_grad)
    o = Tensor(rng.uniform(0.5, 1.5, (3, 3)), device=device, requires_grad=requires_grad)
    return x, o


@pytest.mark.parametrize("name", list(INPLACE))
def test_inplace_ops_change_the_same_array(name, device, rng):
    inplace, outplace = INPLACE[name]
    x, o = _pair(rng, device)
    expect = _ref_setitem(name, x, o) if outplace is None else outplace(x, o).detach().numpy()
    arr, v0 = x._data, x._version
    out = inplace(x, o)
    assert out is x and x._data is arr  # the same tensor, the same array
    close(x, expect, atol=1e-12)
    assert x._version > v0


def test_a_view_and_a_detached_tensor_see_the_change_and_share_the_version(rng):
    x = Tensor(np.zeros((3, 4)))
    view, flat, det = x[1], x.reshape(12), x.detach()
    x.add_(1.0)
    x[1, 2] = 5.0
    assert view.tolist() == [1.0, 1.0, 5.0, 1.0]
    assert flat.detach().numpy()[6] == 5.0 and det.detach().numpy()[1, 2] == 5.0
    assert x._version == view._version == flat._version == det._version == 2
    view.mul_(2.0)  # through a view: the base changes too
    close(x[1], [2.0, 2.0, 10.0, 2.0])
    assert x._version == 3


def test_no_grad_update_of_a_leaf_that_requires_grad(device, rng):
    w = rand(rng, 4, device=device)
    (w * w).sum().backward()
    before = w.detach().numpy().copy()  # (numpy() shares w's memory, as PyTorch's)
    with tga.no_grad():
        w -= 0.1 * w.grad
        w.mul_(2.0)
        w[0] = 3.0
    assert w.requires_grad and w.is_leaf and w.grad_fn is None
    expect = (before - 0.1 * 2 * before) * 2
    expect[0] = 3.0
    close(w, expect)
    w.grad = None  # resetting .grad keeps working
    (w * 1.0).sum().backward()
    close(w.grad, np.ones(4))


@pytest.mark.parametrize("op", [lambda w: w.add_(1.0), lambda w: w.__iadd__(1.0), lambda w: w.__setitem__(0, 1.0),
                                lambda w: w.zero_(), lambda w: w.clamp_(0, 1)])  # fmt: skip
def test_inplace_on_a_leaf_that_requires_grad_outside_no_grad_raises(op, rng):
    w = rand(rng, 3)
    before = w.detach().numpy()
    with pytest.raises(RuntimeError, match="leaf tensor that requires grad.*no_grad"):
        op(w)
    close(w, before)  # nothing was written


@pytest.mark.parametrize("name", list(INPLACE))
def test_recorded_inplace_ops_match_finite_differences(name, device, rng):
    inplace, _ = INPLACE[name]

    def f(a, b):
        y = a * 1.0  # a non-leaf with a graph: the in-place op rebases it
        z = y.tanh() * b  # an op that saw y before the change (it reads its own output)
        inplace(y, b)
        return y * a + z

    x, o = _pair(rng, device)
    assert tga.gradcheck(f, x, o)


@pytest.mark.parametrize("name", list(INPLACE))
def test_recorded_inplace_ops_second_order(name, device, rng):
    inplace, _ = INPLACE[name]

    def f(a, b):
        y = a * a
        inplace(y, b * b)
        return (y * a).sum()

    def df(a, b):
        return tga.grad(f(a, b), [a, b], create_graph=True, allow_unused=True)[0]

    x, o = _pair(rng, device)
    assert tga.gradcheck(df, x, o)


def test_seq2seq_outputs_buffer_sends_gradients_to_every_step(device, rng):
    T, B, V = 4, 2, 3
    outputs = Tensor.zeros(T, B, V, device=device, dtype=np.float64)
    steps = [rand(rng, B, V, device=device) for _ in range(T)]
    for t in range(T):
        outputs[t] = steps[t].tanh()
    assert outputs.requires_grad and outputs.grad_fn is not None
    (outputs * outputs).sum().backward()
    for s in steps:
        th = np.tanh(s.detach().numpy())
        close(s.grad, 2 * th * (1 - th**2), atol=1e-12)


def test_plain_buffer_item_add_with_a_value_that_requires_grad(device, rng):
    buf = Tensor(np.ones((3, 2)), device=device)
    v = rand(rng, 2, device=device)
    buf[1] += v * v  # Python: tmp = buf[1]; tmp += ...; buf[1] = tmp
    close(buf[1], 1 + v.detach().numpy() ** 2)
    (buf * 3.0).sum().backward()
    close(v.grad, 6 * v.detach().numpy(), atol=1e-12)


def test_item_add_on_a_tensor_with_a_graph(device, rng):
    a = rand(rng, 3, 2, device=device)
    y = a * 2.0
    y[:, 1] += a[:, 0]
    y.sum().backward()
    close(a.grad, np.array([[3.0, 2.0]] * 3))


def test_ops_recorded_before_a_change_get_the_gradient_of_the_old_value(device, rng):
    a = rand(rng, 3, device=device)
    y = a * 1.0
    z = y * 3.0  # saw y before the change
    y.mul_(2.0)
    y.add_(a)
    (z.sum() + y.sum()).backward()
    close(a.grad, np.full(3, 3.0 + 2.0 + 1.0))


def test_a_buffer_read_before_a_recorded_write_sends_no_gradient_through_it(rng):
    buf = Tensor(np.ones(3))
    w = rand(rng, 3)
    z = buf + w  # buf does not require grad here
    buf[0] = w[0] * 5.0  # now it does
    (z.sum() + buf.sum()).backward()
    close(w.grad, [1.0 + 5.0, 1.0, 1.0])


def test_changing_a_value_backward_needs_raises_naming_op_shape_and_versions(device, rng):
    a = rand(rng, 2, 3, device=device)
    y = a * 1.0
    z = (y * a).sum()  # mul reads y for a's gradient
    y.add_(1.0)
    y.add_(1.0)
    with pytest.raises(RuntimeError, match=r"'mul'.*shape \(2, 3\).*saved at version 0 and is now at version 2"):
        z.backward()


def test_changing_an_output_that_backward_reads_raises(rng):
    a = rand(rng, 3)
    b = Tensor(np.ones(3))
    y = a.exp()
    w = y * b  # b's gradient would read y; a's reads b
    d = y.detach()
    d.mul_(2.0)  # same memory, same version
    with pytest.raises(RuntimeError, match="'exp'.*output"):
        (w.sum() + y.sum()).backward()


def test_changes_the_graph_does_not_read_are_fine(rng):
    a = rand(rng, 3)
    y = a + 1.0  # add reads no values
    h = y.reshape(3, 1)  # nor does a reshape
    a_detached = a.detach()
    with tga.no_grad():
        a_detached.mul_(2.0)
    (y.sum() + h.sum()).backward()
    close(a.grad, np.full(3, 2.0))


def test_data_is_the_untracked_escape_hatch(rng):
    a = rand(rng, 3)
    y = a * a
    a.data[...] = 7.0  # not seen: no error, the gradient reads the new values
    assert a._version == 0
    y.sum().backward()
    close(a.grad, np.full(3, 14.0))


def test_inplace_errors_name_the_op_and_what_to_do(rng):
    x = Tensor(np.ones((2, 3)))
    with pytest.raises(RuntimeError, match=r"add_.*shape \(3, 2, 3\).*\(2, 3\)"):
        x.add_(Tensor(np.ones((3, 2, 3))))
    i = Tensor(np.arange(3)).astype(np.int64)
    with pytest.raises(RuntimeError, match="mul_.*float.*int64"):
        i.mul_(0.5)
    e = Tensor(np.ones(3)).expand(2, 3)
    with pytest.raises(RuntimeError, match="expanded"):
        e.add_(1.0)
    with pytest.raises(IndexError, match="setitem.*out of bounds"):
        x[5] = 1.0
    a = rand(rng, 2, 3)
    v = (a * 1.0)[None].expand(2, 2, 3)  # (a reshape or permute view writes through: see below)
    with pytest.raises(RuntimeError, match="view.*x\\[idx\\] = value"):
        v.add_(a[0])
    with pytest.raises(ValueError, match="at least one"):
        x.clamp_()


def test_setitem_with_every_kind_of_key_matches_numpy(device, rng):
    keys = [0, -1, (1, 2), slice(1, None), (Ellipsis, 0), (None, 1), [0, 2], np.array([2, 0]),
            ([0, 1], [2, 2]), (slice(None), [1, 0]), np.array([True, False, True]),
            np.arange(12).reshape(3, 4) % 3 == 0]  # fmt: skip
    for key in keys:
        h = rng.standard_normal((3, 4))
        x = Tensor(h, device=device)
        target = h[key]
        val = rng.standard_normal(np.shape(target))
        h[key] = val
        x[key] = Tensor(val, device=device)
        close(x, h)
        x[key] = 1.5  # a number
        h[key] = 1.5
        close(x, h)
    x = Tensor(np.zeros((3, 4)), device=device)
    x[Tensor(np.array([1, 2]), device=device).astype(np.int64)] = Tensor(np.arange(4.0), device=device)
    close(x[1:], np.tile(np.arange(4.0), (2, 1)))


# (distinct positions: where one is written twice, the overwritten value gets PyTorch's
# gradient, not the derivative; see test_duplicate_indices_keep_the_last_write...)
@pytest.mark.parametrize("key", [1, (slice(0, 2), 1), [0, 2], ([0, 1, 2], [1, 1, 3]), "mask"])
def test_recorded_setitem_gradients(key, device, rng):
    def f(a, b):
        y = a * 2.0
        k = (y > 0).detach() if key == "mask" else key
        n = int((y > 0).detach().numpy().sum()) if key == "mask" else None
        shape = (n,) if key == "mask" else np.shape(np.zeros((3, 4))[key])
        y[k] = (b.reshape(-1)[: int(np.prod(shape))]).reshape(shape) * b.sum()
        return y * a

    a = Tensor(rng.standard_normal((3, 4)), device=device)
    b = Tensor(rng.standard_normal((3, 4)), device=device)
    assert tga.gradcheck(f, a, b)


def test_duplicate_indices_keep_the_last_write_and_pytorchs_gradient(rng):
    x = Tensor(np.zeros(3))
    v = rand(rng, 3)
    y = x * 1.0
    y[[1, 1, 2]] = v
    close(y, [0.0, v.detach().numpy()[1], v.detach().numpy()[2]])
    y.sum().backward()
    # As PyTorch's index_put_: every value gets the gradient at its position, also the one
    # written first and overwritten (whose derivative would be 0)
    close(v.grad, [1.0, 1.0, 1.0])


def test_optimizers_and_modules_zero_grad_still_work(rng):
    from tinygrad_attn.nn import Linear
    from tinygrad_attn.optim import SGD

    lin = Linear(3, 2)
    opt = SGD(lin.parameters(), lr=0.1)
    x = Tensor(rng.standard_normal((4, 3)).astype(np.float32))
    for _ in range(3):
        opt.zero_grad()
        lin(x).sum().backward()
        opt.step()
    lin.zero_grad()
    assert all(p.grad is None or not np.any(p.grad.detach().numpy()) for p in lin.parameters())
    assert all(p.requires_grad and p.is_leaf for p in lin.parameters())


def test_large_arrays_through_inplace_ops_and_the_release_tricks(rng):
    n = engine.function.FREE_MIN_SIZE * 2
    a = Tensor(rng.standard_normal(n) * 0.1, requires_grad=True)
    G = Tensor(np.ones(n))
    g_host = G.detach().numpy()
    y = (a * 2.0).exp() * 1.0
    y.add_(1.0)
    y[: n // 2] = a[: n // 2] * 3.0
    y = y.tanh() * 1.0
    y.backward(G)
    ea = np.exp(2 * a.detach().numpy())
    inner = np.where(np.arange(n) < n // 2, 3 * a.detach().numpy(), ea + 1)
    dt = 1 - np.tanh(inner) ** 2
    close(a.grad, np.where(np.arange(n) < n // 2, 3 * dt, 2 * ea * dt), atol=1e-10)
    close(G, g_host)  # the caller's gradient was not written over


# -- PyTorch as the oracle --------------------------------------------------------
def test_a_chain_of_inplace_ops_matches_pytorch(rng):
    torch = pytest.importorskip("torch")
    ha, hb = rng.standard_normal((4, 3)), rng.standard_normal((4, 3))
    mask = ha > 0

    def program(lib, a, b, m, idx):
        y = a * 1.0
        z = y.tanh() * b
        y.add_(b, alpha=2.0)
        y.mul_(b)
        y.div_(b * b + 1.0)
        y.sub_(0.5)
        y.clamp_(-1.0, 1.5)
        y.masked_fill_(m, 0.25)
        y[1] = b[2] * 3.0
        y[idx, 1] = b[0, :2]
        y += a
        y *= 2.0
        return (y * z).sum() + (y * y).sum()

    a, b = Tensor(ha, requires_grad=True), Tensor(hb, requires_grad=True)
    program(tga, a, b, Tensor(mask), [0, 3]).backward()
    ta = torch.tensor(ha, requires_grad=True)
    tb = torch.tensor(hb, requires_grad=True)
    program(torch, ta, tb, torch.tensor(mask), [0, 3]).backward()
    close(a.grad, ta.grad.detach().numpy(), atol=1e-10)
    close(b.grad, tb.grad.detach().numpy(), atol=1e-10)


def test_version_counts_match_pytorch(rng):
    torch = pytest.importorskip("torch")

    def program(x):
        v = x[0]
        x.add_(1.0)
        v.mul_(2.0)
        x[1] = 3.0
        x.zero_()
        return v

    x = Tensor(np.zeros((2, 3)))
    tx = torch.zeros(2, 3, dtype=torch.float64)
    v, tv = program(x), program(tx)
    assert x._version == tx._version and v._version == tv._version


def test_stores_and_adds_keep_no_copy_of_the_old_values(monkeypatch, rng):
    # Their backward reads nothing of the tensor they change: the node for its old value
    # shares its array instead of keeping a copy (one copy per store: the store's own result).
    T = 5
    outputs = Tensor.zeros(T, 3, dtype=np.float64)
    steps = [rand(rng, 3) for _ in range(T)]
    ops_ = outputs._dev.ops
    copies = []
    real = ops_.copy
    monkeypatch.setattr(ops_, "copy", lambda x: copies.append(tuple(x.shape)) or real(x))
    for t in range(T):
        outputs[t] = steps[t] * 2.0
    outputs += 1.0
    assert copies == [(T, 3)] * T
    y = steps[0] * 1.0
    y *= steps[1]  # a product's backward reads the old value: that one is kept
    assert copies[-1] == (3,)
    (outputs.sum() + y.sum()).backward()
    close(steps[2].grad, np.full(3, 2.0))
    close(steps[0].grad, 2.0 + steps[1].detach().numpy())


@pytest.mark.parametrize("op", [lambda y: y.add_(1.0), lambda y: y.__imul__(2.0), lambda y: y.__setitem__(0, 0.0)])
def test_changing_the_output_of_an_op_that_reads_it_raises_as_in_pytorch(op, rng):
    a = rand(rng, 3)
    y = a.exp()
    op(y)
    with pytest.raises(RuntimeError, match=r"'exp'.*output.*version 0.*version 1"):
        y.sum().backward()


def test_inplace_ops_through_a_slice_match_pytorch(rng):
    torch = pytest.importorskip("torch")
    ha, hb = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))

    def program(a, b):
        y = a * 1.0
        before = y[0] * 2.0  # used the row before the changes
        y[0].mul_(b[0])
        y[1].add_(b[1] * b[1])
        y[2][1:3] = b[2, :2] * 3.0  # a store through a slice of a slice
        v = y[1]
        v += a[0]
        return (y * y).sum() + (before * b[0]).sum() + (v * b[2]).sum()

    a, b = Tensor(ha, requires_grad=True), Tensor(hb, requires_grad=True)
    out = program(a, b)
    out.backward()
    ta, tb = torch.tensor(ha, requires_grad=True), torch.tensor(hb, requires_grad=True)
    tout = program(ta, tb)
    tout.backward()
    close(out, tout.item(), atol=1e-10)
    close(a.grad, ta.grad.detach().numpy(), atol=1e-10)
    close(b.grad, tb.grad.detach().numpy(), atol=1e-10)


def test_inplace_through_a_slice_of_a_leaf_that_requires_grad_raises(rng):
    w = rand(rng, 2, 3)
    with pytest.raises(RuntimeError, match="leaf tensor that requires grad"):
        w[0].add_(1.0)


@pytest.mark.parametrize("name", ["add_", "mul_", "setitem basic", "clamp_"])
def test_inplace_through_a_slice_matches_finite_differences(name, device, rng):
    inplace, _ = INPLACE[name]

    def f(a, b):
        y = (a * 1.0).reshape(2, 3, 3)
        inplace(y[1], b)
        return y * y

    x, o = _pair(rng, device)
    assert tga.gradcheck(lambda a, b: f(a.reshape(1, 3, 3).expand(2, 3, 3) * 1.0, b), x, o)


# -- views taken before their base changed in place ---------------------------------
# name -> a view of a (2, 3) tensor, written the same for tinygrad_attn and PyTorch
VIEWS = {
    "slice": lambda x: x[0],
    "slice range": lambda x: x[:, 1:],
    "reshape": lambda x: x.reshape(6),
    "view": lambda x: x.view(3, 2),
    "permute": lambda x: x.permute(1, 0),
    "transpose": lambda x: x.transpose(0, 1),
    "mT": lambda x: x.mT,
    "T": lambda x: x.T,
    "expand": lambda x: x[0:1].expand(4, 3),
    "new axis": lambda x: x[None, 1],
    "slice of a slice": lambda x: x[1][::2],
    "reshape of a transpose (a copy)": lambda x: x.T.reshape(6),
    "slice of a transpose": lambda x: x.T[1:],
}


def _stale_view_program(view):
    def f(a, b):
        x = a * 1.0
        y = view(x)
        before = (y * 2.0).sum()  # used before the change: the old values
        x.mul_(b)  # y shows the new values (unless the view is a copy)
        return (y * y).sum() + before + (x * 0.5).sum()

    return f


@pytest.mark.parametrize("name", list(VIEWS))
def test_a_view_used_after_its_base_changed_matches_pytorch(name, rng):
    torch = pytest.importorskip("torch")
    ha, hb = rng.standard_normal((2, 3)), rng.standard_normal((2, 3))
    f = _stale_view_program(VIEWS[name])
    a, b = Tensor(ha, requires_grad=True), Tensor(hb, requires_grad=True)
    out = f(a, b)
    out.backward()
    ta, tb = torch.tensor(ha, requires_grad=True), torch.tensor(hb, requires_grad=True)
    tout = f(ta, tb)
    tout.backward()
    close(out, tout.item(), atol=1e-10)
    close(a.grad, ta.grad.detach().numpy(), atol=1e-10)
    close(b.grad, tb.grad.detach().numpy(), atol=1e-10)


@pytest.mark.parametrize("name", list(VIEWS))
def test_a_view_used_after_its_base_changed_matches_finite_differences(name, device, rng):
    a = Tensor(rng.standard_normal((2, 3)), device=device)
    b = Tensor(rng.standard_normal((2, 3)), device=device)
    assert tga.gradcheck(_stale_view_program(VIEWS[name]), a, b)


@pytest.mark.parametrize("name", ["slice", "transpose", "expand", "slice of a slice"])
def test_a_view_used_after_its_base_changed_second_order(name, device, rng):
    f = _stale_view_program(VIEWS[name])

    def df(a, b):
        return tga.grad(f(a, b), [a, b], create_graph=True)[0]

    a = Tensor(rng.standard_normal((2, 3)), device=device)
    b = Tensor(rng.standard_normal((2, 3)), device=device)
    assert tga.gradcheck(df, a, b)


def test_the_example_of_the_stale_view(rng):
    leaf = rand(rng, 2, 3)
    x = leaf.clone()
    y = x[0]
    x.mul_(2)
    (y * 3).sum().backward()  # y is 2 * leaf[0] now: d/dleaf[0] = 6, as PyTorch
    close(leaf.grad, [[6.0] * 3, [0.0] * 3])


def test_a_stale_view_as_the_root_of_backward_and_of_grad(rng):
    a = rand(rng, 2, 3)
    x = a * 1.0
    y = x[1]
    x.mul_(3.0)
    y.backward(Tensor(np.ones(3)))
    close(a.grad, [[0.0] * 3, [3.0] * 3])
    x2 = a * 1.0
    s = x2.sum(0)  # not a view: keeps the old values' history
    y2 = x2.reshape(6)[2:3]  # a view of a view
    x2.mul_(5.0)
    (g,) = tga.grad(y2, a, Tensor(np.ones(1)), retain_graph=True)
    close(g, [[0.0, 0.0, 5.0], [0.0, 0.0, 0.0]])
    (g,) = tga.grad(s.sum(), a)
    close(g, np.ones((2, 3)))


def test_a_view_changed_several_times_through_its_base_and_itself_matches_pytorch(rng):
    torch = pytest.importorskip("torch")
    ha, hb = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))

    def program(a, b):
        x = a * 1.0
        row, col = x[1], x[:, 2]
        t = x.T
        terms = [(row * 2.0).sum()]  # (a product with b would save row: changing it then raises)
        x.add_(b)
        terms.append((col.exp()).sum())
        row.mul_(2.0)  # written through x: col and t see it
        row.mul_(b[2])  # a second write through the same slice
        terms.append((t.tanh() * b.T).sum())
        x[2] = b[1] * 3.0
        terms.append((col * col).sum() + (row.exp()).sum() + (t[1:] * 1.5).sum())
        return sum(terms) + (x * x).sum()

    a, b = Tensor(ha, requires_grad=True), Tensor(hb, requires_grad=True)
    out = program(a, b)
    out.backward()
    ta, tb = torch.tensor(ha, requires_grad=True), torch.tensor(hb, requires_grad=True)
    tout = program(ta, tb)
    tout.backward()
    close(out, tout.item(), atol=1e-10)
    close(a.grad, ta.grad.detach().numpy(), atol=1e-10)
    close(b.grad, tb.grad.detach().numpy(), atol=1e-10)


@pytest.mark.parametrize("name", ["slice", "slice of a slice", "reshape", "view", "permute", "transpose", "mT", "T",
                                  "slice of a transpose", "reshape of a transpose (a copy)"])  # fmt: skip
def test_a_view_changed_in_place_then_its_base_used_matches_pytorch(name, rng):
    torch = pytest.importorskip("torch")
    ha, hb = rng.standard_normal((2, 3)), rng.standard_normal((2, 3))

    def program(a, b):
        x = a * 1.0
        y = VIEWS[name](x)
        before = (x * 2.0).sum()
        y.mul_(3.0)  # written through to x (unless the view is a copy)
        y.mul_(y.detach() * 0.0 + b.reshape(-1)[: y.numel()].reshape(y.shape))  # a second write, reading y
        return (x * x).sum() + before + (y.exp() * 0.1).sum()

    a, b = Tensor(ha, requires_grad=True), Tensor(hb, requires_grad=True)
    out = program(a, b)
    out.backward()
    ta, tb = torch.tensor(ha, requires_grad=True), torch.tensor(hb, requires_grad=True)
    tout = program(ta, tb)
    tout.backward()
    close(out, tout.item(), atol=1e-10)
    close(a.grad, ta.grad.detach().numpy(), atol=1e-10)
    close(b.grad, tb.grad.detach().numpy(), atol=1e-10)


@pytest.mark.parametrize("name", ["slice", "transpose", "reshape", "slice of a transpose"])
def test_a_view_changed_in_place_then_its_base_used_matches_finite_differences(name, device, rng):
    def f(a, b):
        x = a * 1.0
        y = VIEWS[name](x)
        y.mul_(b.reshape(-1)[: y.numel()].reshape(y.shape))
        return x * x

    a = Tensor(rng.standard_normal((2, 3)), device=device)
    b = Tensor(rng.standard_normal((2, 3)), device=device)
    assert tga.gradcheck(f, a, b)


def test_an_expanded_view_changed_in_place_raises(device, rng):
    a = rand(rng, 2, 3, device=device)
    x = a * 1.0
    with pytest.raises(RuntimeError, match=r"mul_.*view.*x\[idx\] = value"):
        x[0:1].expand(2, 3).mul_(2.0)
    close(x, a.detach().numpy())  # nothing was written


def test_replaying_a_view_costs_nothing_to_tensors_made_after_the_change(rng):
    a = rand(rng, 2, 3)
    x = a * 1.0
    x.add_(1.0)
    y = x[0]  # taken after the change: no replay
    node = y.grad_fn
    (y * 2.0).sum().backward()
    assert y.grad_fn is node
    close(a.grad, [[2.0] * 3, [0.0] * 3])


# A random program: views taken of a tensor and of its views, in-place changes of the
# tensor and of its slices, and uses, in any order. Each step is (what, which, k): which
# tensor of the pool (modulo its size), and a small number the step reads as it likes.
_VIEW_STEPS = {  # name -> (applies to shape, take the view, an in-place change through it is written)
    "row": (lambda s: len(s) >= 1, lambda t, k: t[k % t.shape[0]], True),
    "tail": (lambda s: len(s) >= 1 and s[0] >= 2, lambda t, k: t[1:], True),
    "every other": (lambda s: len(s) >= 1 and s[-1] >= 2, lambda t, k: t[..., ::2], True),
    "transpose": (lambda s: len(s) == 2, lambda t, k: t.transpose(0, 1), True),
    "flat": (lambda s: True, lambda t, k: t.reshape(-1), True),
    "expand": (lambda s: True, lambda t, k: t[None].expand(2, *t.shape), False),
}
_CHANGES = ["mul_", "add_", "setitem", "clamp_"]


def _run_view_program(lib, steps, a, b):
    x = a * 1.0
    pool = [(x, True)]  # (tensor, whether it can be changed in place: no expanded view on the way)
    terms = []
    for what, which, k in steps:
        t, writable = pool[which % len(pool)]
        if what in _VIEW_STEPS:
            applies, take, can_write = _VIEW_STEPS[what]
            if applies(tuple(t.shape)):
                pool.append((take(t, k), writable and can_write))
        elif what == "use":  # exp saves its own output only: nothing a later change breaks
            terms.append((t * (k + 1) * 0.25).exp().sum() * 0.1)
        elif writable and t.numel() > 0:  # a change of x, of a view of it, or of a copy
            if what == "mul_":
                t.mul_(1.5 - 0.25 * k)
            elif what == "add_":
                t.add_(b[k % 2, k % 3] * 0.5)
            elif what == "setitem" and t.ndim >= 1:
                t[k % t.shape[0]] = b[1, k % 3] * (k - 2.0)
            elif what == "clamp_":
                t.clamp_(-0.5 - 0.1 * k, 0.7)
    for t, _ in pool:  # every view used once more at the end
        terms.append((t * 0.5).exp().sum() * 0.1)
    return sum(terms) + (x * x).sum() + (b * 0.5).sum()


@settings(max_examples=examples(100), deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from([*_VIEW_STEPS, *_CHANGES, "use", "use"]), st.integers(0, 5), st.integers(0, 4)),
        min_size=1,
        max_size=20,
    ),
)
@example(steps=[("row", 0, 0), ("row", 0, 0), ("row", 1, 0), ("expand", 3, 0)])  # (a 0-d gradient plus a slice's)
def test_random_views_changes_and_uses_match_pytorch(steps):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(len(steps))
    ha, hb = rng.uniform(-1, 1, (3, 4)), rng.uniform(-1, 1, (3, 4))
    ta, tb = torch.tensor(ha, requires_grad=True), torch.tensor(hb, requires_grad=True)
    tout = _run_view_program(torch, steps, ta, tb)
    tout.backward()
    a, b = Tensor(ha, requires_grad=True), Tensor(hb, requires_grad=True)
    out = _run_view_program(tga, steps, a, b)
    out.backward()
    close(out, tout.item(), atol=1e-9)
    close(a.grad, ta.grad.detach().numpy(), atol=1e-9)
    close(b.grad, tb.grad.detach().numpy(), atol=1e-9)
