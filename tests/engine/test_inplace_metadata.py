"""In-place methods that change only a tensor's shape and strides (``t_ transpose_
swapaxes_ swapdims_ squeeze_ unsqueeze_ resize_``, and ``detach_``): the tensor object
keeps its identity and memory, its version is bumped, and autograd behaves as PyTorch's
(a leaf that requires grad raises, a non-leaf's history is rebased). Also: every in-place
method of ``torch.Tensor`` whose out-of-place op exists here exists here too."""

from __future__ import annotations

import numpy as np
import pytest

import tinygrad_attn as tga
from tinygrad_attn import Tensor

# (method, args, input shape)
CASES = [
    ("t_", (), (2, 3)),
    ("t_", (), (4,)),
    ("transpose_", (0, 2), (2, 3, 4)),
    ("swapaxes_", (1, -1), (2, 3, 4)),
    ("swapdims_", (0, 1), (2, 3)),
    ("squeeze_", (), (2, 1, 3, 1)),
    ("squeeze_", (1,), (2, 1, 3, 1)),
    ("squeeze_", (0,), (2, 1, 3)),  # not of length 1: unchanged, as PyTorch
    ("unsqueeze_", (1,), (2, 3)),
    ("unsqueeze_", (-1,), (2, 3)),
]
IDS = [f"{n}{a}{s}" for n, a, s in CASES]


@pytest.mark.parametrize(("name", "args", "shape"), CASES, ids=IDS)
def test_shape_values_identity_and_version_as_pytorch(name, args, shape, device):
    torch = pytest.importorskip("torch")
    a = np.arange(np.prod(shape), dtype=np.float64).reshape(shape)
    x = Tensor(a, device=device)
    tx = torch.tensor(a)
    v0, tv0 = x._version, tx._version
    out = getattr(x, name)(*args)
    tout = getattr(tx, name)(*args)
    assert out is x and tout is tx
    assert tuple(x.shape) == tuple(tx.shape)
    np.testing.assert_array_equal(x.detach().numpy(), tx.detach().numpy())
    assert x._version - v0 == tx._version - tv0 == 1


def test_the_memory_stays_shared_with_views_taken_before():
    x = Tensor(np.arange(6.0).reshape(2, 3))
    row = x[0]
    x.t_()
    x[0, 1] = 100.0  # was x[1, 0] before the transpose
    assert x.shape == (3, 2)
    np.testing.assert_array_equal(row.detach().numpy(), [0.0, 1.0, 2.0])
    np.testing.assert_array_equal(x.detach().numpy()[:, 1], [100.0, 4.0, 5.0])


@pytest.mark.parametrize(("name", "args", "shape"), CASES, ids=IDS)
def test_a_leaf_that_requires_grad_raises_as_pytorch(name, args, shape):
    torch = pytest.importorskip("torch")
    tx = torch.zeros(shape, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf"):
        getattr(tx, name)(*args)
    x = Tensor.zeros(*shape, requires_grad=True)
    with pytest.raises(RuntimeError, match=f"{name}.*leaf"):
        getattr(x, name)(*args)
    with tga.no_grad():  # the optimizer-step way: allowed, as in PyTorch
        getattr(x, name)(*args)
    assert tuple(x.shape) == tuple(getattr(torch.zeros(shape), name)(*args).shape)


def _chain(lib, name, args, a, w, before, after):
    """A graph where the tensor changed in place was read before the change and after."""
    x = lib.tensor(a, requires_grad=True)
    y = x * 2.0
    early = ((y + 1.0) * lib.tensor(a)).sum() if before else 0.0  # reads y in its old layout (keeps nothing)
    getattr(y, name)(*args)
    z = y.exp() * lib.tensor(w) if after else y
    return x, early + (z * z).sum()


@pytest.mark.parametrize("before", [False, True])
@pytest.mark.parametrize(("name", "args", "shape"), CASES, ids=IDS)
def test_a_non_leaf_is_rebased_gradients_as_pytorch(name, args, shape, before, device):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    a = rng.standard_normal(shape)
    w = rng.standard_normal(getattr(torch.zeros(shape), name)(*args).shape)

    class Lib:
        @staticmethod
        def tensor(v, requires_grad=False):
            return Tensor(v, device=device, requires_grad=requires_grad)

    x, loss = _chain(Lib, name, args, a, w, before, True)
    tx, tloss = _chain(torch, name, args, a, w, before, True)
    loss.backward()
    tloss.backward()
    np.testing.assert_allclose(loss.item(), tloss.item(), rtol=1e-12)
    np.testing.assert_allclose(x.grad.detach().numpy(), tx.grad.detach().numpy(), rtol=1e-12)


@pytest.mark.parametrize(("name", "args", "shape"), CASES[:6], ids=IDS[:6])
def test_gradcheck_through_the_change(name, args, shape, device):
    rng = np.random.default_rng(1)
    a = Tensor(rng.standard_normal(shape), device=device)

    def f(x):
        y = x * 1.5
        getattr(y, name)(*args)
        return (y.tanh() * y).sum()

    assert tga.gradcheck(f, a)


def test_create_graph_through_the_change():
    torch = pytest.importorskip("torch")
    a = np.random.default_rng(2).standard_normal((2, 3))
    grads = []
    for lib in (tga, torch):
        x = lib.tensor(a, requires_grad=True)
        y = x * x
        y.t_()
        (g,) = (
            lib.autograd.grad(y.sin().sum(), x, create_graph=True)
            if lib is torch
            else tga.grad(y.sin().sum(), x, create_graph=True)
        )
        (gg,) = torch.autograd.grad(g.sum(), x) if lib is torch else tga.grad(g.sum(), x)
        grads.append((g.detach().numpy(), gg.detach().numpy()))
    np.testing.assert_allclose(grads[0][0], grads[1][0], rtol=1e-12)
    np.testing.assert_allclose(grads[0][1], grads[1][1], rtol=1e-12)


def test_a_view_taken_before_follows_later_writes_with_its_gradient():
    torch = pytest.importorskip("torch")
    a = np.random.default_rng(3).standard_normal((2, 3))
    res = []
    for lib in (tga, torch):
        x = lib.tensor(a, requires_grad=True)
        y = x * 2.0
        row = y[0]  # (3,), taken before the transpose
        y.t_()
        y.mul_(3.0)  # the row shows the change: the same memory
        loss = (row * row).sum() + y.sum()
        loss.backward()
        res.append((row.detach().numpy().copy(), x.grad.detach().numpy().copy()))
    np.testing.assert_allclose(res[0][0], res[1][0], rtol=1e-12)
    np.testing.assert_allclose(res[0][1], res[1][1], rtol=1e-12)


def test_a_saved_value_changed_by_the_metadata_op_raises_as_pytorch():
    torch = pytest.importorskip("torch")
    for lib in (torch, tga):
        x = lib.tensor(np.ones((2, 3)), requires_grad=True)
        y = x.exp()  # keeps its output
        y.t_()  # a new version of that output, as in PyTorch
        with pytest.raises(RuntimeError, match="version"):
            y.sum().backward()
        y = x * 2.0
        early = (y * y).sum()  # keeps its inputs
        y.squeeze_()
        with pytest.raises(RuntimeError, match="version"):
            early.backward()


def test_t_of_three_dimensions_raises_as_pytorch():
    torch = pytest.importorskip("torch")
    with pytest.raises(RuntimeError):
        torch.zeros(2, 2, 2).t_()
    with pytest.raises(RuntimeError, match="t_.*2, 2, 2"):
        Tensor.zeros(2, 2, 2).t_()


# -- resize_ ----------------------------------------------------------------------------------
@pytest.mark.parametrize("new", [(2, 2), (3, 2), (6,), (2, 1, 3), (0,)])
def test_resize_within_the_memory_as_pytorch(new, device):
    torch = pytest.importorskip("torch")
    a = np.arange(6.0).reshape(2, 3)
    x, tx = Tensor(a, device=device), torch.tensor(a)
    v0, tv0 = x._version, tx._version
    assert x.resize_(*new) is x
    tx.resize_(*new)
    assert tuple(x.shape) == tuple(tx.shape)
    np.testing.assert_array_equal(x.detach().numpy(), tx.detach().numpy())
    assert x._version - v0 == tx._version - tv0


def test_resize_shares_the_memory_when_it_shrinks_and_keeps_values_when_it_grows():
    x = Tensor(np.arange(6.0))
    alias = x[1:]
    x.resize_(2, 2)
    x[1, 1] = -1.0
    assert alias.tolist()[2] == -1.0  # the same memory
    x.resize_((3, 3))  # a tuple, as PyTorch also takes
    np.testing.assert_array_equal(x.detach().numpy().ravel()[:4], [0.0, 1.0, 2.0, -1.0])
    assert x.shape == (3, 3)


def test_resize_grows_within_its_memory_and_not_memory_shared_with_numpy_as_pytorch():
    torch = pytest.importorskip("torch")
    for lib in (torch, tga):
        x = lib.tensor([1.0, 2.0, 3.0, 4.0])
        x.resize_(2)
        assert x.resize_(4).tolist() == [1.0, 2.0, 3.0, 4.0]  # (the memory it shrank within)
        x.numpy()
        with pytest.raises(RuntimeError, match="Trying to resize storage that is not resizable"):
            x.resize_(5)
        assert x.resize_(3).tolist() == [1.0, 2.0, 3.0]  # (shrinking is allowed)
        with pytest.raises(RuntimeError, match="Trying to resize storage that is not resizable"):
            lib.from_numpy(np.zeros(2)).resize_(3)


def test_resize_of_a_tensor_that_requires_grad_raises_as_pytorch():
    torch = pytest.importorskip("torch")
    for lib in (torch, tga):
        x = lib.zeros(2, 3, requires_grad=True)
        with pytest.raises(RuntimeError, match="cannot resize variables that require grad"):
            x.resize_(3, 2)
        with pytest.raises(RuntimeError, match="cannot resize variables that require grad"):
            (x * 2).resize_(3, 2)
        with lib.no_grad(), pytest.raises(RuntimeError, match="cannot resize variables that require grad"):
            x.resize_(3, 2)


# -- detach_ ----------------------------------------------------------------------------------
def test_detach_in_place_makes_a_leaf_as_pytorch():
    torch = pytest.importorskip("torch")
    for lib in (torch, tga):
        x = lib.ones(2, 3, requires_grad=True)
        y = x * 2
        assert y.detach_() is y
        assert y.is_leaf and not y.requires_grad and y.grad_fn is None
        with pytest.raises(RuntimeError):  # a view cannot be detached in place
            (x * 2)[0].detach_()


def test_ops_that_read_a_tensor_before_its_detach_still_send_their_gradient_as_pytorch():
    torch = pytest.importorskip("torch")
    a = np.random.default_rng(6).standard_normal((2, 3))
    grads = []
    for lib in (tga, torch):
        x = lib.tensor(a, requires_grad=True)
        h = x.sin() * 2.0
        before = (h.exp() * 2.0).sum()  # reads h with its history (exp keeps its output, not h)
        h.detach_()
        after = (h * x).sum()  # reads h as a constant
        (before + after).backward()
        grads.append(x.grad.detach().numpy().copy())
        # truncated backpropagation through time: detach the state after the backward
        y = x * 3.0
        (y * y).sum().backward()
        assert y.detach_() is y and y.grad_fn is None
        (y * x).sum().backward()
        grads.append(x.grad.detach().numpy().copy())
    np.testing.assert_allclose(grads[0], grads[2], rtol=1e-12)
    np.testing.assert_allclose(grads[1], grads[3], rtol=1e-12)


def test_an_op_that_kept_a_tensor_detached_in_place_raises_as_pytorch():
    torch = pytest.importorskip("torch")
    for lib in (torch, tga):
        x = lib.tensor(np.ones((2, 3)), requires_grad=True)
        h = x * 2.0
        loss = h.sin().sum()  # keeps h
        h.detach_()
        with pytest.raises(RuntimeError, match="detach"):
            loss.backward()


# -- the whole family -------------------------------------------------------------------------
# In-place methods of torch.Tensor deliberately absent here, one reason each.
EXCLUDED = {
    "resize_as_sparse_": "sparse tensors do not exist here",
    "sparse_resize_": "sparse tensors do not exist here",
    "sparse_resize_and_clear_": "sparse tensors do not exist here",
}


def _inplace_names(torch):
    return sorted(n for n in dir(torch.Tensor) if n.endswith("_") and not n.startswith("_"))


def test_every_inplace_method_of_torch_whose_op_we_have_exists():
    torch = pytest.importorskip("torch")
    missing = []
    for name in _inplace_names(torch):
        base = name[:-1]
        if name in EXCLUDED:
            continue
        if (hasattr(Tensor, base) or hasattr(tga, base)) and not hasattr(Tensor, name):
            missing.append(name)
    assert not missing, f"in-place methods of torch.Tensor missing here: {missing}"


def test_the_metadata_family_exists():
    for name in ("t_", "transpose_", "swapaxes_", "swapdims_", "squeeze_", "unsqueeze_", "resize_", "detach_"):
        assert callable(getattr(Tensor, name)), name


def test_every_exclusion_is_still_a_torch_method_and_missing_here():
    torch = pytest.importorskip("torch")
    names = set(_inplace_names(torch))
    for name in EXCLUDED:
        assert name in names, f"{name} is no longer a method of torch.Tensor: drop it from EXCLUDED"
        assert not hasattr(Tensor, name), f"{name} exists now: drop it from EXCLUDED"


def test_cumsum_and_cumprod_in_place_as_pytorch(device):
    torch = pytest.importorskip("torch")
    a = np.arange(1.0, 7.0).reshape(2, 3)
    for name in ("cumsum_", "cumprod_"):
        x, tx = Tensor(a, device=device), torch.tensor(a)
        assert getattr(x, name)(1) is x
        getattr(tx, name)(1)
        np.testing.assert_array_equal(x.detach().numpy(), tx.detach().numpy())


def test_the_backward_graph_draws_the_view_not_the_change():
    x = Tensor(np.ones((2, 3)), requires_grad=True)
    y = x * 2.0
    y.t_()
    src = tga.viz.draw_graph((y * y).sum(), backward=True).source
    assert "t backward" in src and "t_ backward" not in src


def test_a_view_changed_in_place_follows_its_base_as_pytorch():
    torch = pytest.importorskip("torch")
    a = np.random.default_rng(4).standard_normal((3, 4))
    w = np.random.default_rng(5).standard_normal((4, 2))
    res = []
    for lib in (tga, torch):
        x = lib.tensor(a, requires_grad=True)
        base = x * 2.0
        v = base[0:2]  # a view of base, (2, 4)
        v.t_()  # still a view of base, now (4, 2)
        v.mul_(-1.0)  # written through to base
        base.mul_(3.0)  # and the view shows this change
        loss = (v * lib.tensor(w)).sum() + (base * base).sum()
        loss.backward()
        res.append((v.detach().numpy().copy(), base.detach().numpy().copy(), x.grad.detach().numpy().copy()))
    for ours, theirs in zip(*res):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12)
