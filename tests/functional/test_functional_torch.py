"""PyTorch's functional API (``import tinygrad_attn.nn.functional as F``): the functions
PyTorch code calls, held against finite differences on every CPU device (first order and
through ``create_graph=True``, fused and decomposed) and against PyTorch itself in float64."""

from __future__ import annotations

import math

import numpy as np
import pytest
import tinygrad_attn.nn.functional as F
from helpers import close, rand

import tinygrad_attn as tga
from tinygrad_attn import Tensor

FORMS = [False, True]  # decomposed?
FORM_IDS = ["fused", "decomposed"]


def _ints(seed, high, *shape, ignore=None, at=()):
    t = np.random.default_rng(seed).integers(0, high, shape)
    for i in at:
        t.reshape(-1)[i] = ignore
    return t


def _probs(seed, *shape, axis=-1):
    e = np.exp(np.random.default_rng(seed).standard_normal(shape))
    return e / e.sum(axis, keepdims=True)


def _in(rng, *shape, device="cpu", low=0.0, high=1.0):
    return Tensor(rng.uniform(low, high, shape), device=device, requires_grad=True)


# name -> (function of the differentiable inputs, makers of those inputs from (rng, device))
W3 = np.array([0.5, 2.0, 1.5])
CASES = {
    "cross_entropy_mean": (
        lambda x: F.cross_entropy(x, Tensor(_ints(1, 3, 5), device=x.device)),
        [lambda r, d: rand(r, 5, 3, device=d)],
    ),
    "cross_entropy_weight_ignore_smooth": (
        lambda x: F.cross_entropy(
            x,
            Tensor(_ints(2, 3, 6, ignore=-100, at=(1,)), device=x.device),
            weight=Tensor(W3, device=x.device),
            label_smoothing=0.2,
        ),
        [lambda r, d: rand(r, 6, 3, device=d)],
    ),
    "cross_entropy_axis1_none": (
        lambda x: F.cross_entropy(x, Tensor(_ints(3, 3, 2, 2), device=x.device), reduction="none"),
        [lambda r, d: rand(r, 2, 3, 2, device=d)],
    ),
    "cross_entropy_sum_smooth": (
        lambda x: F.cross_entropy(x, Tensor(_ints(4, 3, 4), device=x.device), reduction="sum", label_smoothing=0.1),
        [lambda r, d: rand(r, 4, 3, device=d)],
    ),
    "cross_entropy_probs": (  # the target's gradient too
        lambda x, p: F.cross_entropy(x, p, weight=Tensor(W3, device=x.device), label_smoothing=0.1),
        [
            lambda r, d: rand(r, 2, 3, 2, device=d),
            lambda r, d: Tensor(_probs(5, 2, 3, 2, axis=1), device=d, requires_grad=True),
        ],
    ),
    "nll_loss_weight": (
        lambda x: F.nll_loss(
            x,
            Tensor(_ints(6, 3, 5, ignore=1, at=(0,)), device=x.device),
            weight=Tensor(W3, device=x.device),
            ignore_index=1,
        ),
        [lambda r, d: rand(r, 5, 3, device=d)],
    ),
    "binary_cross_entropy": (
        lambda x, y: F.binary_cross_entropy(x, y, weight=Tensor(np.array([1.0, 0.5, 2.0]), device=x.device)),
        [lambda r, d: _in(r, 2, 3, device=d, low=0.05, high=0.95), lambda r, d: _in(r, 2, 3, device=d)],
    ),
    "bce_with_logits_pos_weight": (
        lambda x, y: F.binary_cross_entropy_with_logits(
            x, y, pos_weight=Tensor(np.array([3.0, 0.5, 1.0]), device=x.device)
        ),
        [lambda r, d: rand(r, 2, 3, device=d), lambda r, d: _in(r, 2, 3, device=d)],
    ),
    "leaky_relu": (lambda x: F.leaky_relu(x, 0.2), [lambda r, d: rand(r, 3, 4, device=d, low=0.01)]),
    "silu": (lambda x: F.silu(x), [lambda r, d: rand(r, 3, 4, device=d)]),
    "elu": (lambda x: F.elu(x, alpha=1.5), [lambda r, d: rand(r, 3, 4, device=d, low=0.01)]),
    "softplus": (lambda x: F.softplus(x * 4.0, beta=2.0, threshold=5.0), [lambda r, d: rand(r, 3, 4, device=d)]),
    "normalize_p2": (lambda x: F.normalize(x), [lambda r, d: rand(r, 3, 4, device=d)]),
    "normalize_p3_dim0": (lambda x: F.normalize(x, p=3, dim=0), [lambda r, d: rand(r, 3, 4, device=d, low=0.1)]),
    "normalize_inf": (lambda x: F.normalize(x, p=math.inf, dim=-1), [lambda r, d: rand(r, 3, 4, device=d)]),
    "embedding": (  # (the padding row's gradient is 0 on purpose: held against PyTorch below)
        lambda w: F.embedding(Tensor(np.array([[0, 3], [3, 1]]), device=w.device), w, padding_idx=2),
        [lambda r, d: rand(r, 4, 2, device=d)],
    ),
    "nll_loss_axis1_none": (
        lambda x: F.nll_loss(x, Tensor(_ints(7, 3, 2, 2), device=x.device), reduction="none"),
        [lambda r, d: rand(r, 2, 3, 2, device=d)],
    ),
    "binary_cross_entropy_sum": (
        lambda x: F.binary_cross_entropy(x, Tensor(np.array([[0.0, 1.0, 0.3]]), device=x.device), reduction="sum"),
        [lambda r, d: _in(r, 1, 3, device=d, low=0.05, high=0.95)],
    ),
    "bce_with_logits_none": (
        lambda x: F.binary_cross_entropy_with_logits(
            x, Tensor(np.array([[0.0, 1.0, 0.3]]), device=x.device), reduction="none"
        ),
        [lambda r, d: rand(r, 1, 3, device=d)],
    ),
    "pad_constant": (lambda x: F.pad(x, (1, -1, 2, 0), value=0.5), [lambda r, d: rand(r, 2, 3, 4, device=d)]),
    "pad_reflect": (lambda x: F.pad(x, (2, 1), mode="reflect"), [lambda r, d: rand(r, 2, 4, device=d)]),
    "pad_replicate": (lambda x: F.pad(x, (1, 2, 1, 0), mode="replicate"), [lambda r, d: rand(r, 1, 2, 3, device=d)]),
    "pad_circular": (lambda x: F.pad(x, (-1, 2), mode="circular"), [lambda r, d: rand(r, 2, 4, device=d)]),
    "softmax_dim": (lambda x: F.softmax(x, dim=0), [lambda r, d: rand(r, 3, 4, device=d)]),
    "log_softmax_dim": (lambda x: F.log_softmax(x, dim=1), [lambda r, d: rand(r, 3, 4, device=d)]),
}


def _make(name, rng, device):
    fn, makers = CASES[name]
    return fn, [m(rng, device) for m in makers]


def _ctx(decomposed):
    return tga.decompose() if decomposed else tga.enable_grad()


@pytest.mark.parametrize("decomposed", FORMS, ids=FORM_IDS)
@pytest.mark.parametrize("name", sorted(CASES))
def test_gradcheck_first_order(name, decomposed, device, rng):
    fn, xs = _make(name, rng, device)
    with _ctx(decomposed):
        assert tga.gradcheck(fn, *xs)


@pytest.mark.parametrize("decomposed", FORMS, ids=FORM_IDS)
@pytest.mark.parametrize("name", sorted(CASES))
def test_gradcheck_through_create_graph(name, decomposed, device, rng):
    fn, xs = _make(name, rng, device)

    def grad_norm(*ys):  # differentiable only if the first backward recorded its graph
        out = fn(*ys)
        gs = tga.grad((out * out).sum(), list(ys), create_graph=True)
        return sum((g * g).sum() for g in gs)

    with _ctx(decomposed):
        assert tga.gradcheck(grad_norm, *xs)


@pytest.mark.parametrize("name", sorted(CASES))
def test_fused_equals_decomposed(name, rng):
    fn, xs = _make(name, rng, "cpu")
    out = fn(*xs)
    g = tga.grad((out * out).sum(), xs)
    with tga.decompose():
        ref = fn(*xs)
        gr = tga.grad((ref * ref).sum(), xs)
    close(out, ref.detach().numpy(), atol=1e-12, rtol=1e-10)
    for a, b in zip(g, gr):
        close(a, b.detach().numpy(), atol=1e-12, rtol=1e-10)


# -- against PyTorch, float64 ----------------------------------------------------------
def _against_torch(ours, theirs, arrays, device, grad_of=None, atol=1e-10):
    """Run ``ours`` on tinygrad_attn tensors and ``theirs`` on torch tensors made from the
    same arrays; compare the values and the gradients of ``arrays[i]`` for ``i`` in
    ``grad_of`` (default: every floating array), fused and decomposed."""
    torch = pytest.importorskip("torch")
    grad_of = [i for i, a in enumerate(arrays) if a.dtype.kind == "f"] if grad_of is None else grad_of
    ts = [torch.tensor(a, requires_grad=i in grad_of) for i, a in enumerate(arrays)]
    ref = theirs(*ts)
    w = np.random.default_rng(7).standard_normal(tuple(ref.shape))
    ref_grads = torch.autograd.grad((ref * torch.tensor(w)).sum(), [ts[i] for i in grad_of]) if grad_of else []
    for decomposed in FORMS:
        with _ctx(decomposed):
            xs = [Tensor(a, device=device, requires_grad=i in grad_of) for i, a in enumerate(arrays)]
            got = ours(*xs)
            close(got, ref.detach().numpy(), atol=atol, rtol=1e-9)
            if grad_of:
                gs = tga.grad((got * Tensor(w, device=device)).sum(), [xs[i] for i in grad_of])
                for a, b in zip(gs, ref_grads):
                    close(a, b.detach().numpy(), atol=atol, rtol=1e-9)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize(
    "kw",
    [{}, {"weight": W3}, {"ignore_index": 2}, {"label_smoothing": 0.3}, {"weight": W3, "label_smoothing": 0.2}],
    ids=["plain", "weight", "ignore_index", "smoothing", "weight_smoothing"],
)
@pytest.mark.parametrize("shape", [(6, 3), (2, 3, 4, 2), (3,)], ids=["NC", "NCHW", "C"])
def test_cross_entropy_and_nll_loss_match_torch(shape, kw, reduction, device):
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(0).standard_normal(shape)
    ignored = kw.get("ignore_index", -100)
    t = _ints(
        1, 3, *(shape[:1] + shape[2:] if len(shape) > 1 else ()), ignore=ignored, at=(0,) if len(shape) > 1 else ()
    )
    weight = kw.get("weight")
    rest = {k: v for k, v in kw.items() if k != "weight"}

    def ours(x, t, *w):
        return F.cross_entropy(x, t, *w, reduction=reduction, **rest)

    def theirs(x, t, *w):
        return torch.nn.functional.cross_entropy(x, t, *w, reduction=reduction, **rest)

    arrays = [x, t] + ([weight] if weight is not None else [])
    _against_torch(ours, theirs, arrays, device, grad_of=[0])
    if "label_smoothing" not in kw:
        lp = torch.log_softmax(torch.tensor(x), 1 if len(shape) > 1 else 0).detach().numpy()
        _against_torch(
            lambda x, t, *w: F.nll_loss(x, t, *w, reduction=reduction, **rest),
            lambda x, t, *w: torch.nn.functional.nll_loss(x, t, *w, reduction=reduction, **rest),
            [lp, t] + arrays[2:],
            device,
            grad_of=[0],
        )


@pytest.mark.parametrize("fn, smoothing", [("nll_loss", 0.0), ("cross_entropy", 0.0), ("cross_entropy", 0.2)])
@pytest.mark.parametrize("weight", [[0.0, 0.0, 0.0], [0.0, 0.0, 1.0], [1.0, 0.0, 1.0], [0.5, 2.0, 0.0]])
@pytest.mark.parametrize("ignore_index", [-100, 0, 1])
def test_a_zero_total_weight_is_pytorchs_nan(fn, smoothing, weight, ignore_index):
    """Every counted item's class weight 0 (or every item ignored): ``"mean"`` divides 0 by 0, a NaN
    loss whose gradient is NaN at each counted item and 0 at the ignored ones, as PyTorch's; with no
    runtime warning (the suite makes one an error)."""
    torch = pytest.importorskip("torch")
    x, t = np.random.default_rng(0).standard_normal((4, 3)), np.array([0, 1, 2, 1])
    got, want = [], []
    for m, out in ((tga, got), (torch, want)):
        xt = m.tensor(x, requires_grad=True)
        kw = {"label_smoothing": smoothing} if smoothing else {}
        for reduction in ("mean", "sum", "none"):
            loss = getattr(m.nn.functional, fn)(xt, m.tensor(t), m.tensor(weight, dtype=m.float64),
                                                ignore_index=ignore_index, reduction=reduction, **kw)  # fmt: skip
            (g,) = m.autograd.grad(loss, xt, m.ones_like(loss))
            out += [loss.detach().numpy(), g.detach().numpy()]
    for o, w in zip(got, want):
        np.testing.assert_allclose(o, w, rtol=1e-12, atol=1e-15, equal_nan=True)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("kw", [{}, {"weight": W3}, {"label_smoothing": 0.25}], ids=["plain", "weight", "smooth"])
@pytest.mark.parametrize("shape", [(4, 3), (2, 3, 2, 2)], ids=["NC", "NCHW"])
def test_cross_entropy_probability_targets_match_torch(shape, kw, reduction, device):
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(0).standard_normal(shape)
    p = _probs(1, *shape, axis=1)
    weight = kw.get("weight")
    rest = {k: v for k, v in kw.items() if k != "weight"}
    arrays = [x, p] + ([weight] if weight is not None else [])
    _against_torch(
        lambda x, p, *w: F.cross_entropy(x, p, *w, reduction=reduction, **rest),
        lambda x, p, *w: torch.nn.functional.cross_entropy(x, p, *w, reduction=reduction, **rest),
        arrays,
        device,
        grad_of=[0, 1],
    )


def test_cross_entropy_with_every_target_ignored_is_nan_as_torch(device):
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(0).standard_normal((3, 4))
    t = np.full(3, -100)
    for kw in ({}, {"weight": np.ones(4)}, {"label_smoothing": 0.1}):
        want = torch.nn.functional.cross_entropy(
            torch.tensor(x),
            torch.tensor(t),
            **{k: torch.tensor(v) if isinstance(v, np.ndarray) else v for k, v in kw.items()},
        )
        assert math.isnan(want.item())
        for decomposed in FORMS:
            with _ctx(decomposed):
                got = F.cross_entropy(Tensor(x, device=device), Tensor(t, device=device), **kw)
                assert math.isnan(got.item()), (kw, decomposed)
                total = F.cross_entropy(Tensor(x, device=device), Tensor(t, device=device), reduction="sum", **kw)
                assert total.item() == 0.0


def test_cross_entropy_layouts_class_last_and_pytorch(rng):
    x = rand(rng, 2, 4, 3)  # (B, T, C) here, or PyTorch's (N, C=4, d=3)
    t_last = _ints(0, 3, 2, 4)
    t_axis1 = _ints(1, 4, 2, 3)
    per_item = F.cross_entropy(x, t_last, reduction="none")
    assert per_item.shape == (2, 4)
    moved = x.permute(0, 2, 1)  # (N, d, C): the same loss with classes last
    close(
        F.cross_entropy(x, t_axis1, reduction="none"),
        F.cross_entropy(moved, t_axis1, reduction="none").detach().numpy(),
    )
    # (N, C, C): both layouts fit; classes on axis 1 (PyTorch's) unless class_axis says otherwise
    sq = rand(rng, 2, 3, 3)
    t = _ints(2, 3, 2, 3)
    close(F.cross_entropy(sq, t, class_axis=-1), F.cross_entropy(sq.reshape(6, 3), t.reshape(6)).detach().numpy())
    close(F.cross_entropy(sq, t), F.cross_entropy(sq.permute(0, 2, 1), t, class_axis=-1).detach().numpy())
    torch = pytest.importorskip("torch")
    want = torch.nn.functional.cross_entropy(torch.tensor(sq.detach().numpy()), torch.tensor(np.asarray(t)))
    close(F.cross_entropy(sq, t), want.item())
    with pytest.raises(ValueError, match=r"targets of shape \(2, 4\).*\(2, 3\)"):
        F.cross_entropy(x, _ints(0, 3, 4, 2))


def test_cross_entropy_keeps_its_earlier_positional_form(rng):
    """(logits, targets, ignore_index, label_smoothing) was the order before PyTorch's."""
    x = rand(rng, 5, 3)
    t = _ints(0, 3, 5)
    t[1] = 2
    close(F.cross_entropy(x, t, 2, 0.1), F.cross_entropy(x, t, ignore_index=2, label_smoothing=0.1).detach().numpy())
    close(F.cross_entropy(x, t, None, 0.0), F.cross_entropy(x, t).detach().numpy())
    bad = t.copy()
    bad[0] = -100
    with pytest.raises(IndexError, match="out of range"):
        F.cross_entropy(x, bad, ignore_index=None)  # None: nothing ignored, as before
    close(F.cross_entropy(x, bad), F.cross_entropy(x[1:], bad[1:]).detach().numpy())  # PyTorch's default -100


def test_loss_argument_errors(rng):
    x = rand(rng, 4, 3)
    with pytest.raises(ValueError, match="reduction must be"):
        F.cross_entropy(x, _ints(0, 3, 4), reduction="avg")
    with pytest.raises(ValueError, match=r"weight has shape \(2,\)"):
        F.cross_entropy(x, _ints(0, 3, 4), weight=np.ones(2))
    with pytest.raises(ValueError, match="ignore_index applies to class-index targets"):
        F.cross_entropy(x, _probs(0, 4, 3), ignore_index=1)
    with pytest.raises(TypeError, match="class indices"):
        F.nll_loss(x, _probs(0, 4, 3))
    with pytest.raises(ValueError, match="input's shape"):
        F.binary_cross_entropy_with_logits(x, np.zeros((4, 1)))
    # the deprecated pair still says which reduction
    close(F.mse_loss(x, 0.0, size_average=False), (x * x).sum().detach().numpy())
    assert F.mse_loss(x, 0.0, reduce=False).shape == (4, 3)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_binary_cross_entropies_match_torch(reduction, device):
    torch = pytest.importorskip("torch")
    tf = torch.nn.functional
    r = np.random.default_rng(0)
    p = r.uniform(0.02, 0.98, (3, 4))
    y = r.uniform(0, 1, (3, 4))
    w = r.uniform(0.5, 2, (4,))
    _against_torch(
        lambda p, y: F.binary_cross_entropy(p, y, reduction=reduction),
        lambda p, y: tf.binary_cross_entropy(p, y, reduction=reduction),
        [p, y],
        device,
    )
    _against_torch(
        lambda p, y, w: F.binary_cross_entropy(p, y, w, reduction=reduction),
        lambda p, y, w: tf.binary_cross_entropy(p, y, w, reduction=reduction),
        [p, y, w],
        device,
        grad_of=[0, 1],
    )
    x = r.standard_normal((3, 4)) * 5
    x[0, :2] = [800.0, -800.0]  # exp would overflow: the stable form has no trouble
    pw = r.uniform(0.5, 3, (4,))
    _against_torch(
        lambda x, y, w, pw: F.binary_cross_entropy_with_logits(x, y, w, reduction=reduction, pos_weight=pw),
        lambda x, y, w, pw: tf.binary_cross_entropy_with_logits(x, y, w, reduction=reduction, pos_weight=pw),
        [x, y, w, pw],
        device,
        grad_of=[0, 1],
    )
    _against_torch(
        lambda x, y: F.binary_cross_entropy_with_logits(x, y, reduction=reduction),
        lambda x, y: tf.binary_cross_entropy_with_logits(x, y, reduction=reduction),
        [x, y],
        device,
    )


def test_binary_cross_entropy_clamps_its_log_at_minus_100_as_torch():
    torch = pytest.importorskip("torch")
    p = np.array([0.0, 1.0, 0.0, 1.0, 1e-50])
    y = np.array([1.0, 0.0, 0.0, 1.0, 1.0])
    want = torch.nn.functional.binary_cross_entropy(torch.tensor(p), torch.tensor(y), reduction="none").detach().numpy()
    for decomposed in FORMS:
        with _ctx(decomposed):
            got = F.binary_cross_entropy(Tensor(p), Tensor(y), reduction="none")
            close(got, want, atol=0, rtol=1e-12)
            assert np.isfinite(got.detach().numpy()).all()


@pytest.mark.parametrize(
    "name,ours,theirs",
    [
        ("leaky_relu", lambda x: F.leaky_relu(x), lambda t, x: t.nn.functional.leaky_relu(x)),
        ("leaky_relu_0.3", lambda x: F.leaky_relu(x, 0.3), lambda t, x: t.nn.functional.leaky_relu(x, 0.3)),
        ("silu", F.silu, lambda t, x: t.nn.functional.silu(x)),
        ("elu", lambda x: F.elu(x, 0.7), lambda t, x: t.nn.functional.elu(x, 0.7)),
        ("softplus", F.softplus, lambda t, x: t.nn.functional.softplus(x)),
        (
            "softplus_beta",
            lambda x: F.softplus(x, beta=3, threshold=4),
            lambda t, x: t.nn.functional.softplus(x, beta=3, threshold=4),
        ),
        ("normalize", F.normalize, lambda t, x: t.nn.functional.normalize(x)),
        ("normalize_p1_dim0", lambda x: F.normalize(x, 1, 0), lambda t, x: t.nn.functional.normalize(x, 1, 0)),
        ("normalize_p3", lambda x: F.normalize(x, 3.0, -1), lambda t, x: t.nn.functional.normalize(x, 3.0, -1)),
        ("normalize_inf", lambda x: F.normalize(x, math.inf), lambda t, x: t.nn.functional.normalize(x, math.inf)),
        ("softmax_dim", lambda x: F.softmax(x, dim=0), lambda t, x: t.softmax(x, dim=0)),
        ("log_softmax_dim", lambda x: F.log_softmax(x, dim=1), lambda t, x: t.log_softmax(x, dim=1)),
    ],
)
def test_activations_match_torch(name, ours, theirs, device):
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(0).standard_normal((4, 5)) * 4
    x[0, :3] = [0.0, 50.0, -50.0]  # the kink (PyTorch's one-sided slopes) and the far ends
    x[1] = 0.0  # a zero row for normalize
    _against_torch(ours, lambda x: theirs(torch, x), [x], device)


def test_softmax_takes_axis_or_dim_but_not_both_disagreeing(rng):
    x = rand(rng, 3, 4)
    close(F.softmax(x, dim=0), F.softmax(x, 0).detach().numpy())
    close(F.softmax(x, axis=0, dim=0), F.softmax(x, 0).detach().numpy())
    with pytest.raises(TypeError, match="axis=0 and dim=1"):
        F.log_softmax(x, axis=0, dim=1)
    for decomposed in FORMS:
        with _ctx(decomposed):
            y = F.log_softmax(x.astype(np.float32), dim=-1, dtype=np.float64)  # PyTorch's dtype= casts first
            assert y.dtype == np.float64
            close(y, F.log_softmax(x, -1).detach().numpy(), atol=1e-6)
            assert F.softmax(x, dim=0, dtype=np.float32).dtype == np.float32


def test_one_hot_matches_torch(device):
    torch = pytest.importorskip("torch")
    t = np.array([[0, 3], [1, 1]])
    for n in (-1, 5):
        got = F.one_hot(Tensor(t, device=device), n)
        want = torch.nn.functional.one_hot(torch.tensor(t), n).detach().numpy()
        assert got.dtype == np.int64 and got.shape == want.shape
        np.testing.assert_array_equal(got.detach().numpy(), want)
    with pytest.raises(ValueError, match=r"class index 3 is out of range \[0, 3\)"):
        F.one_hot(Tensor(t, device=device), 3)


def test_embedding_matches_torch(device):
    torch = pytest.importorskip("torch")
    w = np.random.default_rng(0).standard_normal((5, 3))
    ids = np.array([[0, 4, 4], [2, 0, 1]])
    for pad in (None, 4, -1):
        _against_torch(
            lambda w, i, p=pad: F.embedding(i, w, padding_idx=p),
            lambda w, i, p=pad: torch.nn.functional.embedding(i, w, padding_idx=p),
            [w, ids],
            device,
        )
    as_list = F.embedding([[0.0, 4.0]], Tensor(w, device=device), padding_idx=4)  # whole floats, as lists become
    close(as_list, w[[[0, 4]]])
    with pytest.raises(IndexError, match="index 5 is out of range for a weight of 5 rows"):
        F.embedding(np.array([5]), Tensor(w, device=device))


@pytest.mark.parametrize("mode", ["constant", "reflect", "replicate", "circular"])
@pytest.mark.parametrize("pads", [(1, 2), (2, 0, 1, 1), (-1, 2, 1, -1), (0, 0, 0, 1, 1, 0)])
def test_pad_matches_torch(mode, pads, device):
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(0).standard_normal((2, 3, 4))
    if mode != "constant" and len(pads) == 6:
        pads = pads[:4]  # PyTorch pads at most the last two axes of a 3-D tensor in these modes
    kw = {"value": 1.5} if mode == "constant" else {}
    _against_torch(
        lambda x: F.pad(x, pads, mode=mode, **kw),
        lambda x: torch.nn.functional.pad(x, pads, mode=mode, **kw),
        [x],
        device,
    )


def test_pad_errors(rng):
    x = rand(rng, 2, 3)
    with pytest.raises(ValueError, match="pairs"):
        F.pad(x, (1, 1, 1))
    with pytest.raises(ValueError, match="at most 2 axes"):
        F.pad(x, (1,) * 6)
    with pytest.raises(ValueError, match="reflect needs padding below the axis size 3"):
        F.pad(x, (3, 0), mode="reflect")
    with pytest.raises(ValueError, match="mode must be one of"):
        F.pad(x, (1, 1), mode="wrap")


# -- masks: bool or float, never an integer guess ------------------------------------------
def test_integer_attention_masks_are_refused(rng):
    q = rand(rng, 1, 3, 4)
    int_mask = np.tril(np.ones((3, 3), dtype=np.int64))
    for mask in (int_mask, Tensor(int_mask), int_mask.tolist()):
        with pytest.raises(TypeError, match=r"bool mask \(True = may attend\) or a float mask"):
            F.scaled_dot_product_attention(q, q, q, mask=mask)
    mha = tga.models.BatchFirstAttention(4, 2)
    with pytest.raises(TypeError, match="BatchFirstAttention: attention mask has dtype int64"):
        mha(q.float(), allow=int_mask)  # (its float32 weights take float32 inputs, as PyTorch's layers)
    with pytest.raises(TypeError, match="DotAttention: attention mask has dtype int64"):
        tga.nn.DotAttention()(q, q, q, mask=int_mask)
    # the meanings that stay: bool (True = may attend) and float (added to the scores)
    allowed = np.tril(np.ones((3, 3), bool))
    bias = np.where(allowed, 0.0, -np.inf)
    close(
        F.scaled_dot_product_attention(q, q, q, mask=bias),
        F.scaled_dot_product_attention(q, q, q, mask=allowed).detach().numpy(),
        atol=1e-12,
    )


def test_masked_fill_needs_a_bool_mask(rng):
    x = rand(rng, 2, 3)
    with pytest.raises(TypeError, match=r"masked_fill: mask must be boolean.*\(mask != 0\)"):
        x.masked_fill(Tensor(np.array([[0.0, 0.5, 0.0]] * 2)), 1.0)
    with pytest.raises(TypeError, match="got torch.int64"):
        x.masked_fill(Tensor(np.eye(2, 3, dtype=np.int64)), 1.0)
    m = np.array([[True, False, False], [False, False, True]])
    close(x.masked_fill(Tensor(m), 7.0), np.where(m, 7.0, x.detach().numpy()))
    # (PyTorch's mask is a tensor: a NumPy array or a list is its TypeError, as PyTorch raises it)
    for not_a_tensor in (m, m.tolist()):
        with pytest.raises(TypeError, match="argument 'mask' .* must be Tensor"):
            x.masked_fill(not_a_tensor, 7.0)


# -- third round: PyTorch's signatures of attention and layer_norm ----------------------
def test_sdpa_takes_pytorchs_positional_order_and_enable_gqa():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    q, k, v = (rng.standard_normal(s) for s in ((2, 4, 3, 5), (2, 2, 6, 5), (2, 2, 6, 5)))
    m = rng.random((3, 6)) > 0.3
    m[:, 0] = True
    tq, tk, tv, tm = (torch.tensor(a) for a in (q, k, v, m))
    TF = torch.nn.functional
    kk, vv = np.repeat(k, 2, axis=1), np.repeat(v, 2, axis=1)
    cases = [
        ((q, kk, vv, None, 0.0, True), (tq, torch.tensor(kk), torch.tensor(vv), None, 0.0, True)),  # causal
        ((q, kk, vv, m, 0.0, False), (tq, torch.tensor(kk), torch.tensor(vv), tm, 0.0, False)),
    ]
    for ours, theirs in cases:
        for kw in ({}, {"scale": 0.5}):
            got = F.scaled_dot_product_attention(*(Tensor(a) if isinstance(a, np.ndarray) else a for a in ours), **kw)
            want = TF.scaled_dot_product_attention(*theirs, **kw)
            np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), atol=1e-12)
    got = F.scaled_dot_product_attention(Tensor(q), Tensor(k), Tensor(v), attn_mask=Tensor(m), enable_gqa=True)
    want = TF.scaled_dot_product_attention(tq, tk, tv, attn_mask=tm, enable_gqa=True)
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), atol=1e-12)
    with pytest.raises(TypeError, match="both attn_mask= and mask="):
        F.scaled_dot_product_attention(Tensor(q), Tensor(kk), Tensor(vv), Tensor(m), mask=Tensor(m))


def test_layer_norm_takes_normalized_shape_as_pytorch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    x, w, b = rng.standard_normal((2, 3, 4)), rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
    TF = torch.nn.functional
    tx, tw, tb = (torch.tensor(a) for a in (x, w, b))
    np.testing.assert_allclose(
        F.layer_norm(Tensor(x), (4,)).detach().numpy(), TF.layer_norm(tx, (4,)).detach().numpy(), atol=1e-12
    )
    got = F.layer_norm(Tensor(x), (3, 4), Tensor(w), Tensor(b), 1e-3)
    np.testing.assert_allclose(
        got.detach().numpy(), TF.layer_norm(tx, (3, 4), tw, tb, 1e-3).detach().numpy(), atol=1e-12
    )
    with pytest.raises(RuntimeError, match="normalized_shape"):
        F.layer_norm(Tensor(x), (5,))
    xt = Tensor(x, requires_grad=True)
    assert tga.gradcheck(lambda a, ww: F.layer_norm(a, (3, 4), ww), xt, Tensor(w, requires_grad=True))


ZERO_SLICE_CALLS = {
    **{f"lp_pool{nd}d p={p}": (lambda m, x, nd=nd, p=p: getattr(m.nn.functional, f"lp_pool{nd}d")(x, p, 2), nd)
       for nd in (1, 2, 3) for p in (1.0, 2.0, 3.0)},
    **{f"renorm p={p}": (lambda m, x, p=p: m.renorm(x, p, 1, 0.5), 1) for p in (1.0, 2.0, 3.0, math.inf)},
}  # fmt: skip


@pytest.mark.parametrize("name", ZERO_SLICE_CALLS)
def test_a_zero_window_or_slice_passes_pytorchs_gradient(name):
    """An all-zero pooling window (``lp_pool``) or slice (``renorm``) beside nonzero ones: the
    root's infinite slope at 0 must not reach the gradient (PyTorch's there: 0, or the identity's)."""
    torch = pytest.importorskip("torch")
    call, nd = ZERO_SLICE_CALLS[name]
    x = np.abs(np.random.default_rng(1).standard_normal((1, 2) + (4,) * nd))
    x[:, 0] = 0.0  # (channel 0: every window zero)
    got, want = [], []
    for m, out in ((tga, got), (torch, want)):
        xt = m.tensor(x, requires_grad=True)
        y = call(m, xt)
        (g,) = m.autograd.grad(y, xt, m.tensor(np.linspace(-1.0, 2.0, y.numel()).reshape(tuple(y.shape))))
        out += [y.detach().numpy(), g.detach().numpy()]
    for o, w in zip(got, want):
        np.testing.assert_allclose(o, w, rtol=1e-10, atol=1e-12)


ZERO_NORM_CALLS = {
    "norm": lambda m, x: m.norm(x, dim=1),
    "linalg.vector_norm": lambda m, x: m.linalg.vector_norm(x, dim=1),
    "linalg.norm fro": lambda m, x: m.linalg.norm(x.reshape(2, 2, 2), "fro", dim=(1, 2)),
    "normalize": lambda m, x: m.nn.functional.normalize(x, dim=1),
    "cosine_similarity": lambda m, x: m.nn.functional.cosine_similarity(x, x.flip(0) * 2.0, dim=1),
    **{f"renorm p={p}": (lambda m, x, p=p: m.renorm(x, p, 0, 0.5)) for p in (0.5, 1.0, 1.5, 2.0, 3.0, math.inf)},
}


@pytest.mark.parametrize("name", ZERO_NORM_CALLS)
def test_a_zero_vector_has_pytorchs_first_and_second_derivatives(name):
    """Norms at a zero vector beside nonzero ones (renorm: a zero slice): the gradient PyTorch's gives
    there, and the second derivative its formulas give, NaN (its norm_backward's masked 0 / 0), not the limit."""
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(2).standard_normal((2, 4))
    x[0] = 0.0
    got, want = [], []
    for m, out in ((tga, got), (torch, want)):
        xt = m.tensor(x, requires_grad=True)
        y = ZERO_NORM_CALLS[name](m, xt)
        (g,) = m.autograd.grad(y, xt, m.tensor(np.linspace(-1.0, 2.0, y.numel()).reshape(tuple(y.shape))),
                               create_graph=True)  # fmt: skip
        with np.errstate(divide="ignore", invalid="ignore"):  # (the second pass divides 0 by 0 as PyTorch's)
            (gg,) = m.autograd.grad((g * m.tensor(np.cos(np.arange(8.0)).reshape(2, 4))).sum(), xt)
        out += [y.detach().numpy(), g.detach().numpy(), gg.detach().numpy()]
    for o, w in zip(got, want):
        np.testing.assert_allclose(o, w, rtol=1e-10, atol=1e-12, equal_nan=True)
