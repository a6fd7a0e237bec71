"""PyTorch's ``inplace=True`` on activations and dropout (functions and modules), the
``out=``/``dtype=`` and ``weight=`` parameters taken from PyTorch's signatures, and the
``saved`` node (``ops/saved.py``) that makes composites keep what PyTorch's ops keep."""

from __future__ import annotations

import numpy as np
import pytest

import tinygrad_attn as tga
import tinygrad_attn.functional as F
from tinygrad_attn import Tensor, nn

# (name, our call, PyTorch's call): each writes into its input with inplace=True
ACTIVATIONS = {
    "relu": (lambda f, x, **k: f.relu(x, **k)),
    "elu": (lambda f, x, **k: f.elu(x, 0.7, **k)),
    "leaky_relu": (lambda f, x, **k: f.leaky_relu(x, 0.2, **k)),
    "silu": (lambda f, x, **k: f.silu(x, **k)),
    "celu": (lambda f, x, **k: f.celu(x, 0.5, **k)),
    "selu": (lambda f, x, **k: f.selu(x, **k)),
    "hardtanh": (lambda f, x, **k: f.hardtanh(x, -0.5, 0.5, **k)),
    "relu6": (lambda f, x, **k: f.relu6(x * 4.0, **k)),
    "hardsigmoid": (lambda f, x, **k: f.hardsigmoid(x * 4.0, **k)),
    "hardswish": (lambda f, x, **k: f.hardswish(x * 4.0, **k)),
    "mish": (lambda f, x, **k: f.mish(x, **k)),
    "threshold": (lambda f, x, **k: f.threshold(x, 0.1, -2.0, **k)),
}

A = np.array([[-1.3, -0.4, 0.25, 1.7], [0.6, -2.2, 3.1, -0.05]])  # (away from every kink)


@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
def test_inplace_writes_the_input_and_differentiates_as_pytorch(name):
    torch = pytest.importorskip("torch")
    call = ACTIVATIONS[name]
    x = Tensor(A.copy(), requires_grad=True)
    h = x * 1.0  # (relu6 and the hard ones scale first: their own input is a new non-leaf)
    out = call(F, h, inplace=True)
    tx = torch.tensor(A.copy(), requires_grad=True)
    th = tx * 1.0
    tout = call(torch.nn.functional, th, inplace=True)
    np.testing.assert_allclose(out.detach().numpy(), tout.detach().numpy(), rtol=1e-12, atol=1e-12)
    if name not in ("relu6", "hardsigmoid", "hardswish"):  # (those wrote into the scaled copy)
        assert out is h
        np.testing.assert_allclose(h.detach().numpy(), th.detach().numpy(), rtol=1e-12, atol=1e-12)
    (out * out).sum().backward()
    (tout * tout).sum().backward()
    # (rtol: PyTorch's hardsigmoid backward uses a float32 1/6, even in float64)
    np.testing.assert_allclose(x.grad.detach().numpy(), tx.grad.detach().numpy(), rtol=1e-7, atol=1e-12)


@pytest.mark.parametrize("name", ["relu", "elu", "hardtanh", "threshold"])
def test_inplace_on_a_leaf_that_requires_grad_raises_as_pytorch(name):
    with pytest.raises(RuntimeError, match="leaf"):
        ACTIVATIONS[name](F, Tensor(A.copy(), requires_grad=True), inplace=True)


@pytest.mark.parametrize("name", ["relu", "elu", "leaky_relu", "hardtanh", "celu"])
def test_inplace_gradient_is_exact(device, name):
    call = ACTIVATIONS[name]
    x = Tensor(A.copy(), device=device)
    assert tga.gradcheck(lambda t: call(F, t * 1.0, inplace=True) * 2.0, x)
    with tga.decompose():
        assert tga.gradcheck(lambda t: call(F, t * 1.0, inplace=True) * 2.0, x)


def test_inplace_result_changed_again_raises_where_pytorch_raises():
    torch = pytest.importorskip("torch")
    results = []
    for m, f in ((tga, F), (torch, torch.nn.functional)):
        x = m.tensor(A.copy(), requires_grad=True)
        h = f.elu(x * 1.0, inplace=True)
        y = h.exp()  # reads its output
        y.mul_(2.0)
        try:
            y.sum().backward()
            results.append("ok")
        except RuntimeError:
            results.append("raises")
    assert results == ["raises", "raises"]


@pytest.mark.parametrize(
    ("module", "torch_module"),
    [
        (lambda: nn.ReLU(inplace=True), "ReLU(inplace=True)"),
        (lambda: nn.ELU(0.5, True), "ELU(0.5, True)"),
        (lambda: nn.LeakyReLU(0.1, inplace=True), "LeakyReLU(0.1, inplace=True)"),
        (lambda: nn.Hardtanh(-0.5, 0.5, True), "Hardtanh(-0.5, 0.5, True)"),
        (lambda: nn.SiLU(inplace=True), "SiLU(inplace=True)"),
        (lambda: nn.Threshold(0.1, -2.0, True), "Threshold(0.1, -2.0, True)"),
    ],
)
def test_modules_with_inplace_change_their_input(module, torch_module):
    torch = pytest.importorskip("torch")
    h = Tensor(A.copy())
    out = module()(h)
    th = torch.tensor(A.copy())
    tout = eval("torch.nn." + torch_module)(th)  # noqa: S307 - a fixed expression of this test
    assert out is h
    np.testing.assert_allclose(h.detach().numpy(), th.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(out.detach().numpy(), tout.detach().numpy(), rtol=1e-12)


def test_modules_without_inplace_leave_their_input():
    h = Tensor(A.copy())
    nn.ReLU()(h)
    nn.ELU()(h)
    np.testing.assert_array_equal(h.detach().numpy(), A)


def test_dropout_inplace_zeroes_the_input_itself():
    h = Tensor(np.ones((4, 50)))
    out = F.dropout(h, 0.5, True, True)
    assert out is h
    vals = set(np.unique(h.detach().numpy()).tolist())
    assert vals <= {0.0, 2.0} and len(vals) == 2
    g = Tensor(np.ones((4, 50)))
    assert nn.Dropout(0.5, inplace=True)(g) is g
    e = Tensor(np.ones(3))
    assert F.dropout(e, 0.5, training=False, inplace=True) is e
    np.testing.assert_array_equal(e.detach().numpy(), np.ones(3))


# -- parameters taken from PyTorch's signatures ---------------------------------------
def test_mse_loss_weight_as_pytorch():
    torch = pytest.importorskip("torch")
    a, b, w = A, A[::-1].copy(), np.abs(A) + 0.5
    for reduction in ("mean", "sum", "none"):
        x = Tensor(a.copy(), requires_grad=True)
        got = F.mse_loss(x, Tensor(b), reduction=reduction, weight=Tensor(w))
        tx = torch.tensor(a.copy(), requires_grad=True)
        want = torch.nn.functional.mse_loss(tx, torch.tensor(b), reduction=reduction, weight=torch.tensor(w))
        np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-12)
        got.sum().backward()
        want.sum().backward()
        np.testing.assert_allclose(x.grad.detach().numpy(), tx.grad.detach().numpy(), rtol=1e-12)
    with pytest.raises(ValueError, match="weight"):
        F.mse_loss(Tensor(a), Tensor(b), weight=Tensor(np.ones(4)))


def test_norm_dtype_and_out():
    torch = pytest.importorskip("torch")
    x = Tensor(A.astype(np.float32))
    assert tga.norm(x, dtype=np.float64).dtype == np.float64
    assert x.norm(dtype=np.float64).dtype == np.float64
    out = Tensor(np.zeros(2))
    r = tga.norm(Tensor(A), 2, 1, out=out)
    assert r is out
    np.testing.assert_allclose(out.detach().numpy(), torch.norm(torch.tensor(A), 2, 1).detach().numpy(), rtol=1e-12)
    n = Tensor(np.zeros(A.shape))
    assert F.normalize(Tensor(A), out=n) is n
    np.testing.assert_allclose(
        n.detach().numpy(), torch.nn.functional.normalize(torch.tensor(A)).detach().numpy(), rtol=1e-12
    )
    with pytest.raises(RuntimeError, match="out="):
        tga.norm(Tensor(A, requires_grad=True), out=Tensor(np.zeros(())))
    with pytest.warns(UserWarning, match="resized"):  # (PyTorch's: an out of another shape is resized)
        assert tga.norm(Tensor(A), 2, 1, out=Tensor(np.zeros(3))).shape == (2,)


def test_norm_method_takes_pytorchs_positional_dtype():
    # x.norm and tga.norm are one function: PyTorch's method has dtype fifth, torch.norm out
    torch = pytest.importorskip("torch")
    x = Tensor(A.astype(np.float32))
    r = x.norm(2, 1, False, tga.float64)
    assert r.dtype == np.float64
    np.testing.assert_allclose(
        r.detach().numpy(), torch.tensor(A).norm(2, 1, False, torch.float64).detach().numpy(), rtol=1e-6
    )


def test_softmax_takes_pytorchs_positions_and_numpys_axis():
    x = Tensor(A)
    want = F.softmax(x, -1).detach().numpy()
    np.testing.assert_allclose(F.softmax(x, dim=-1).detach().numpy(), want)
    np.testing.assert_allclose(F.softmax(x, axis=-1).detach().numpy(), want)
    np.testing.assert_allclose(F.softmax(x, -1, 3, np.float32).detach().numpy(), want.astype(np.float32), rtol=1e-6)
    np.testing.assert_allclose(
        F.log_softmax(x, 0, dtype=np.float64).detach().numpy(), np.log(F.softmax(x, 0).detach().numpy())
    )


def test_modulelist_of_none_is_empty():
    assert len(nn.ModuleList(None)) == 0 and len(nn.ModuleList()) == 0


# -- the saved node: gradients unchanged, and nothing recorded without a graph -----------
def test_saved_node_passes_the_gradient_and_keeps_no_graph_without_grad(device):
    x = Tensor(A.copy(), device=device)
    y = F.elu(x)
    assert y._ctx is None  # (no gradient wanted: no node, no kept tensor)
    assert tga.gradcheck(lambda t: F.elu(t) * t, x)
    assert tga.gradcheck(lambda t: t.clamp(-0.5, 0.5).sum() + t.logsumexp(1).sum() + t.prod(1).sum(), x)


# -- embedding: PyTorch's max_norm, scale_grad_by_freq, _weight, _freeze -------------------
def test_embedding_max_norm_and_scale_grad_by_freq_as_pytorch():
    torch = pytest.importorskip("torch")
    w0 = np.arange(1.0, 13.0).reshape(4, 3) / 3.0
    ids = np.array([[0, 2, 2], [3, 2, 0]])
    for kw in ({"max_norm": 1.5}, {"max_norm": 2.0, "norm_type": 1.0}, {"scale_grad_by_freq": True},
               {"max_norm": 1.0, "scale_grad_by_freq": True, "padding_idx": 3}):  # fmt: skip
        w, tw = Tensor(w0.copy(), requires_grad=True), torch.tensor(w0.copy(), requires_grad=True)
        with tga.no_grad():
            out = F.embedding(Tensor(ids), w, **kw)
        with torch.no_grad():
            tout = torch.nn.functional.embedding(torch.tensor(ids), tw, **kw)
        np.testing.assert_allclose(out.detach().numpy(), tout.detach().numpy(), rtol=1e-12)
        np.testing.assert_allclose(w.detach().numpy(), tw.detach().numpy(), rtol=1e-12)  # (renormed in place)
        out = F.embedding(Tensor(ids), w, **kw)
        tout = torch.nn.functional.embedding(torch.tensor(ids), tw, **kw)
        (out * out).sum().backward()
        (tout * tout).sum().backward()
        np.testing.assert_allclose(w.grad.detach().numpy(), tw.grad.detach().numpy(), rtol=1e-12)
    w, tw = Tensor(w0.copy(), requires_grad=True), torch.tensor(w0.copy(), requires_grad=True)
    (F.embedding(Tensor(ids), w, sparse=True) ** 2).sum().backward()
    (torch.nn.functional.embedding(torch.tensor(ids), tw, sparse=True) ** 2).sum().backward()
    assert w.grad.is_sparse and tw.grad.is_sparse  # (a sparse gradient, one row per id)
    np.testing.assert_allclose(w.grad.to_dense().numpy(), tw.grad.to_dense().numpy(), rtol=1e-12)


def test_embedding_module_takes_pytorchs_arguments():
    w0 = Tensor(np.arange(12.0).reshape(4, 3))
    e = nn.Embedding(num_embeddings=4, embedding_dim=3, _weight=w0, _freeze=True)
    assert not e.weight.requires_grad and e.num_embeddings == 4 and e.embedding_dim == 3
    np.testing.assert_array_equal(e(Tensor(np.array([1, 3]))).detach().numpy(), w0.detach().numpy()[[1, 3]])
    m = nn.Embedding(4, 3, max_norm=1.0)
    m(Tensor(np.array([0, 1])))
    assert np.all(np.linalg.norm(m.weight.detach().numpy()[:2], axis=1) <= 1.0 + 1e-6)
