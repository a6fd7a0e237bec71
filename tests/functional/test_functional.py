"""Composite ops: fused and decomposed forms agree in value and gradient, and both pass
finite-difference checks, on every array namespace."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import close, rand

import tinygrad_attn as tga
import tinygrad_attn.functional as F
from tinygrad_attn import Tensor


def _targets(device, n=5, c=4, seed=0):
    t = np.random.default_rng(seed).integers(0, c, n)
    return Tensor(t, device=device)


COMPOSITES = {
    "linear": (lambda x, w, b: F.linear(x, w, b), [(2, 3, 4), (5, 4), (5,)]),
    "linear_2d_no_bias": (lambda x, w: F.linear(x, w), [(3, 4), (5, 4)]),
    "linear_1d": (lambda x, w, b: F.linear(x, w, b), [(4,), (5, 4), (5,)]),
    "softmax": (lambda x: x.softmax(-1), [(3, 5)]),
    "softmax_axis0": (lambda x: F.softmax(x, 0), [(3, 5)]),
    "log_softmax": (lambda x: x.log_softmax(-1), [(3, 5)]),
    "layer_norm": (lambda x, w, b: x.layer_norm(w, b), [(2, 3, 5), (5,), (5,)]),
    "layer_norm_plain": (lambda x: F.layer_norm(x, x.shape[-1:], eps=1e-3), [(4, 6)]),
    "gelu": (lambda x: x.gelu(), [(3, 4)]),
    "gelu_tanh": (lambda x: F.gelu(x, approximate="tanh"), [(3, 4)]),
    "mse_loss": (lambda a, b: F.mse_loss(a, b), [(3, 4), (3, 4)]),
    "var": (lambda x: x.var(1), [(3, 4)]),
    "logsumexp": (lambda x: x.logsumexp(-1), [(3, 4)]),
    "attention": (lambda q, k, v: F.scaled_dot_product_attention(q, k, v), [(2, 3, 4), (2, 5, 4), (2, 5, 3)]),
    "attention_causal": (
        lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True),
        [(1, 2, 4, 3), (1, 2, 4, 3), (1, 2, 4, 3)],
    ),
}


def _inputs(rng, shapes, device):
    return [rand(rng, *s, device=device) for s in shapes]


@pytest.mark.parametrize("name", sorted(COMPOSITES))
def test_fused_equals_decomposed(name, device, rng):
    f, shapes = COMPOSITES[name]
    xs = _inputs(rng, shapes, device)
    fused = f(*xs)
    gf = tga.grad((fused * fused).sum(), xs)
    with tga.decompose():
        ref = f(*xs)
        gr = tga.grad((ref * ref).sum(), xs)
    close(fused, ref.detach().numpy(), atol=1e-10, rtol=1e-9)
    for a, b in zip(gf, gr):
        close(a, b.detach().numpy(), atol=1e-9, rtol=1e-8)


@pytest.mark.parametrize("decomposed", [False, True], ids=["fused", "decomposed"])
@pytest.mark.parametrize("name", sorted(COMPOSITES))
def test_gradcheck(name, decomposed, device, rng):
    f, shapes = COMPOSITES[name]
    xs = _inputs(rng, shapes, device)
    if decomposed:
        with tga.decompose():
            assert tga.gradcheck(f, *xs)
    else:
        assert tga.gradcheck(f, *xs)


def test_decompose_records_primitives_in_a_scope(rng):
    x = rand(rng, 2, 3)
    assert x.softmax(-1).grad_fn.op_name == "softmax"
    with tga.decompose():
        y = x.softmax(-1)
    assert y.grad_fn.op_name == "div"
    assert y.grad_fn.scope.name == "softmax" and y.grad_fn.scope.kind == "composite"


def test_softmax_is_stable_and_sums_to_one(device):
    x = Tensor([[1000.0, 1000.0, -1000.0]], device=device)
    for ctx in (tga.no_grad(), tga.decompose()):
        with ctx:
            close(x.softmax(-1), [[0.5, 0.5, 0.0]])
    close(x.log_softmax(-1)[:, :2], [[np.log(0.5)] * 2], atol=1e-6)


def _ce_reference(logits, t, ignore_index=None, eps=0.0):
    z = logits - logits.max(-1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(-1, keepdims=True))
    c = logits.shape[-1]
    keep = np.ones(t.shape, bool) if ignore_index is None else t != ignore_index
    tt = np.where(keep, t, 0)
    nll = -np.take_along_axis(logp, tt[:, None], 1)[:, 0]
    loss = (1 - eps) * nll - eps * logp.sum(-1) / c
    return (loss * keep).sum() / keep.sum()


@pytest.mark.parametrize("ignore_index,eps", [(None, 0.0), (2, 0.0), (None, 0.1), (1, 0.2)])
def test_cross_entropy_matches_reference(ignore_index, eps, device, rng):
    logits = rand(rng, 6, 4, device=device)
    t = _targets(device, 6, 4, seed=3)
    got = F.cross_entropy(logits, t, ignore_index=ignore_index, label_smoothing=eps)
    close(got, _ce_reference(logits.detach().numpy(), t.detach().numpy(), ignore_index, eps), atol=1e-12)
    for decomposed in (False, True):
        if decomposed:
            with tga.decompose():
                assert tga.gradcheck(lambda x: F.cross_entropy(x, t, ignore_index, eps), logits)
        else:
            assert tga.gradcheck(lambda x: F.cross_entropy(x, t, ignore_index, eps), logits)


def test_cross_entropy_accepts_class_last_batches_and_checks_targets(rng):
    logits = rand(rng, 2, 3, 5)
    t = np.array([[0, 1, 4], [2, 2, 3]])
    close(
        F.cross_entropy(logits, Tensor(t)),
        _ce_reference(logits.detach().numpy().reshape(6, 5), t.reshape(6)),
        atol=1e-12,
    )
    with pytest.raises(IndexError, match="out of range"):
        F.cross_entropy(logits, Tensor(np.array([[0, 1, 5], [0, 0, 0]])))
    with pytest.raises(ValueError, match="targets of shape"):
        F.cross_entropy(logits, Tensor(np.zeros(6, dtype=np.int64)))


def test_dropout(rng):
    x = Tensor.ones(1000)
    y = F.dropout(x, 0.25, training=True)
    kept = y.detach().numpy() != 0
    assert 0.65 < kept.mean() < 0.85
    np.testing.assert_allclose(y.detach().numpy()[kept], 1 / 0.75)
    assert F.dropout(x, 0.5, training=False) is x
    tga.manual_seed(1)
    a = F.dropout(x, 0.5).detach().numpy()
    tga.manual_seed(1)
    b = F.dropout(Tensor.ones(1000, device="array_api_strict:device1"), 0.5).detach().numpy()
    np.testing.assert_array_equal(a, b)


def test_attention_causal_equals_explicit_mask(device, rng):
    q, k, v = (rand(rng, 2, 4, 3, device=device) for _ in range(3))
    mask = Tensor(np.tril(np.ones((4, 4), bool)), device=device)
    a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    b = F.scaled_dot_product_attention(q, k, v, mask=mask)
    close(a, b.detach().numpy())
    s = q.detach().numpy() @ k.detach().numpy().swapaxes(-1, -2) / np.sqrt(3)
    s = np.where(np.tril(np.ones((4, 4), bool)), s, -np.inf)
    w = np.exp(s - s.max(-1, keepdims=True))
    w /= w.sum(-1, keepdims=True)
    close(a, w @ v.detach().numpy(), atol=1e-12)


@pytest.mark.parametrize("decomposed", [False, True])
def test_attention_row_with_nothing_to_attend_is_zero_not_nan(decomposed, device, rng):
    q, k, v = (rand(rng, 3, 2, device=device) for _ in range(3))
    mask = Tensor(np.array([[True, False, False], [False, False, False], [True, True, True]]), device=device)
    ctx = tga.decompose() if decomposed else tga.no_grad()
    with ctx:
        out, w = F.scaled_dot_product_attention(q, k, v, mask=mask, return_weights=True)
    close(out[1], [0.0, 0.0])
    close(w[1], [0.0, 0.0, 0.0])
    assert np.isfinite(out.detach().numpy()).all()
    if decomposed:
        with tga.decompose():
            gs = tga.grad(F.scaled_dot_product_attention(q, k, v, mask=mask).sum(), [q, k, v])
    else:
        gs = tga.grad(F.scaled_dot_product_attention(q, k, v, mask=mask).sum(), [q, k, v])
    for g in gs:
        assert np.isfinite(g.detach().numpy()).all()
    assert tga.gradcheck(lambda a, b, c: F.scaled_dot_product_attention(a, b, c, mask=mask), q, k, v)


def test_attention_float_mask_is_added(rng):
    q, k, v = (rand(rng, 3, 2) for _ in range(3))
    m = rng.standard_normal((3, 3))
    got = F.scaled_dot_product_attention(q, k, v, mask=Tensor(m, dtype=np.float64), scale=1.0)
    s = q.detach().numpy() @ k.detach().numpy().T + m
    w = np.exp(s - s.max(-1, keepdims=True))
    w /= w.sum(-1, keepdims=True)
    close(got, w @ v.detach().numpy(), atol=1e-12)
    fm = Tensor(m, requires_grad=True)
    assert tga.gradcheck(lambda a, mm: F.scaled_dot_product_attention(a, k, v, mask=mm), q, fm)


# -- no silent wrong answer: empty rows, no keys, degenerate softmax axes ----------
_MASK_KINDS = ["bool", "float", "float_requires_grad", "causal_and_bool"]


def _attention_mask(kind, allowed, device):
    if kind in ("bool", "causal_and_bool"):
        return Tensor(allowed, device=device), kind == "causal_and_bool"
    m = Tensor(np.where(allowed, 0.25, -np.inf), device=device, requires_grad=kind == "float_requires_grad")
    return m, False


@pytest.mark.parametrize("decomposed", [False, True])
@pytest.mark.parametrize("kind", _MASK_KINDS)
def test_attention_fully_masked_row_gives_zeros_and_finite_gradients_for_every_mask_kind(kind, decomposed, device,
                                                                                          rng):  # fmt: skip
    q, k, v = rand(rng, 2, 3, 2, device=device), rand(rng, 2, 4, 2, device=device), rand(rng, 2, 4, 3, device=device)
    allowed = np.tril(np.ones((3, 4), bool))
    allowed[1] = False  # query 1 may attend nothing
    mask, causal = _attention_mask(kind, allowed, device)
    if causal:  # (a mask with is_causal: PyTorch's fused kernel, of 4-D operands of one head size, applies both)
        q, k, v = q[:, None], k[:, None], v[:, None, :, :2]
    inputs = [q, k, v] + ([mask] if mask.requires_grad else [])
    ctx = tga.decompose() if decomposed else tga.enable_grad()
    with ctx:
        out = F.scaled_dot_product_attention(q, k, v, mask=mask, is_causal=causal)
        grads = tga.grad((out * out).sum(), inputs)
    rows = out.reshape(2, 3, -1)
    close(rows[:, 1], np.zeros((2, rows.shape[-1])))
    for g in (out, *grads):
        assert np.isfinite(g.detach().numpy()).all()
    assert np.all(grads[0].detach().numpy().reshape(2, 3, 2)[:, 1] == 0)  # the empty row's query has no influence
    if mask.requires_grad:
        assert np.all(grads[3].detach().numpy()[1] == 0)
        with ctx:
            assert tga.gradcheck(lambda a, b, c, m: F.scaled_dot_product_attention(a, b, c, mask=m).sum(-1),
                                 q, k, v, Tensor(mask.detach().numpy(), device=device, requires_grad=True))  # fmt: skip


@pytest.mark.parametrize("decomposed", [False, True])
@pytest.mark.parametrize("kind", ["none", "causal"] + _MASK_KINDS)
def test_attention_with_no_keys_gives_zeros(kind, decomposed, device, rng):
    q, k, v = rand(rng, 2, 3, 4, device=device), rand(rng, 2, 0, 4, device=device), rand(rng, 2, 0, 5, device=device)
    mask, causal = (None, kind == "causal") if kind in ("none", "causal") else _attention_mask(
        kind, np.ones((3, 0), bool), device)  # fmt: skip
    ctx = tga.decompose() if decomposed else tga.enable_grad()
    with ctx:
        out, w = F.scaled_dot_product_attention(q, k, v, mask=mask, is_causal=causal, return_weights=True)
        assert out.shape == (2, 3, 5) and w.shape == (2, 3, 0)
        close(out, np.zeros((2, 3, 5)))
        out = F.scaled_dot_product_attention(q, k, v, mask=mask, is_causal=causal)
        close(out, np.zeros((2, 3, 5)))
        gq, gk, gv = tga.grad(out.sum(), [q, k, v])
    close(gq, np.zeros((2, 3, 4)))
    assert gk.shape == (2, 0, 4) and gv.shape == (2, 0, 5)


@pytest.mark.parametrize("decomposed", [False, True])
@pytest.mark.parametrize("shape, axis", [((2, 0), -1), ((0, 3), 0), ((0, 3), -1), ((), -1), ((), 0)])
def test_softmax_family_over_zero_size_and_0d(shape, axis, decomposed, device):
    x = Tensor(np.ones(shape) * 0.5, device=device, requires_grad=True)
    ctx = tga.decompose() if decomposed else tga.enable_grad()
    with ctx:
        s, ls = F.softmax(x, axis), F.log_softmax(x, axis)
        assert s.shape == shape and ls.shape == shape
        close(s, np.ones(shape))  # the softmax of one element is 1 (of none: nothing)
        close(ls, np.zeros(shape))
        (g,) = tga.grad((s + ls).sum(), [x])
    close(g, np.zeros(shape))


@pytest.mark.parametrize("decomposed", [False, True])
def test_cross_entropy_with_every_target_ignored_is_nan_with_zero_gradient(decomposed, device, rng):
    logits = rand(rng, 3, 4, device=device)
    ctx = tga.decompose() if decomposed else tga.enable_grad()
    with ctx:
        loss = F.cross_entropy(logits, Tensor(np.array([1, 1, 1]), device=device), ignore_index=1)
        (g,) = tga.grad(loss, [logits])
    assert np.isnan(loss.item())
    close(g, np.zeros((3, 4)))  # (PyTorch's too: no logit changes the loss)


def test_attention_shape_errors():
    with pytest.raises(ValueError, match="do not fit"):
        F.scaled_dot_product_attention(Tensor.zeros(2, 3), Tensor.zeros(2, 4), Tensor.zeros(2, 4))
    with pytest.raises(ValueError, match="mask of shape"):
        F.scaled_dot_product_attention(Tensor.zeros(2, 3), Tensor.zeros(4, 3), Tensor.zeros(4, 3),
                                       mask=Tensor(np.ones((3, 3), bool)))  # fmt: skip


def test_linear_checks_shapes_and_dtypes(rng):
    for x, w, b in [((2, 3), (5, 4), None), ((2, 4), (5, 4), (4,)), ((2, 4), (4,), None)]:
        with pytest.raises(ValueError, match=r"linear: input .* do not fit"):
            F.linear(Tensor.zeros(*x), Tensor.zeros(*w), None if b is None else Tensor.zeros(*b))
    x = rand(rng, 2, 3, 4, dtype=np.float32)
    w = rand(rng, 5, 4, dtype=np.float32)
    b = rand(rng, 5)  # float64: PyTorch's linear promotes none of them
    with pytest.raises(RuntimeError, match="linear: input, weight and bias must have the same dtype"):
        F.linear(x, w, b)
    with pytest.raises(RuntimeError, match="same dtype"):
        F.linear(x.double(), w)
    y = F.linear(x, w, b.float())
    assert y.dtype == np.float32 and y.shape == (2, 3, 5)
    close(y, x.detach().numpy() @ w.detach().numpy().T + b.detach().numpy(), atol=1e-5)


def test_a_linear_layer_is_one_node():
    from tinygrad_attn.models import Linear

    y = Linear(4, 3)(Tensor.zeros(2, 5, 4))
    assert y.grad_fn.op_name == "linear" and y.shape == (2, 5, 3)
    with tga.decompose():
        y = Linear(4, 3)(Tensor.zeros(2, 5, 4))
    assert y.grad_fn.op_name == "add"


NEW_COMPOSITES = {
    "leaky_relu": lambda x: F.leaky_relu(x),
    "silu": lambda x: F.silu(x),
    "elu": lambda x: F.elu(x),
    "softplus": lambda x: F.softplus(x),
    "normalize": lambda x: F.normalize(x),
    "binary_cross_entropy": lambda x: F.binary_cross_entropy(x.sigmoid(), np.ones(x.shape)),
    "binary_cross_entropy_with_logits": lambda x: F.binary_cross_entropy_with_logits(x, np.ones(x.shape)),
    "cross_entropy": lambda x: F.cross_entropy(x, np.array([0, 1]), weight=np.ones(3)),
    "nll_loss": lambda x: F.nll_loss(x, np.array([0, 2])),
    "mse_loss": lambda x: F.mse_loss(x, 1.0, reduction="sum"),
}


@pytest.mark.parametrize("name", sorted(NEW_COMPOSITES))
def test_pytorch_face_composites_draw_as_one_group(name, rng):
    """Under decompose, the last primitive of each sits in a scope named after the function."""
    x = rand(rng, 2, 3)
    with tga.decompose():
        y = NEW_COMPOSITES[name](x)
    scope = y.grad_fn.scope
    names = []
    while scope is not None:
        names.append(scope.name)
        scope = scope.parent
    assert name in names, (name, names)


def test_nn_functional_is_this_module_and_lists_pytorchs_names():
    import tinygrad_attn.nn.functional as nnf  # noqa: PLC0415 - the import itself is what is tested

    assert nnf is F
    for name in ("pad one_hot nll_loss binary_cross_entropy binary_cross_entropy_with_logits leaky_relu silu elu "
                 "softplus normalize embedding cross_entropy mse_loss softmax log_softmax").split():  # fmt: skip
        assert name in F.__all__ and callable(getattr(F, name))


def test_losses_keep_a_float32_input_float32(rng):
    x = rand(rng, 4, 3, dtype=np.float32)
    for loss in (
        F.cross_entropy(x, [0, 1, 2, 0], weight=np.ones(3)),
        F.cross_entropy(x, np.full((4, 3), 1 / 3)),
        F.binary_cross_entropy_with_logits(x, np.ones((4, 3)), pos_weight=np.ones(3)),
    ):
        assert loss.dtype == np.float32
