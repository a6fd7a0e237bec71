"""Loss modules (``tinygrad_attn.nn``): PyTorch's constructor arguments and defaults, its
state dicts, and its values and gradients for the same arguments.

L1, smooth L1, Huber, KL divergence and cosine embedding losses against PyTorch (float64,
values and gradients, every reduction), as functions and as modules; fused-free composites
hold under decompose and pass finite differences on every CPU namespace."""

from __future__ import annotations

import inspect
import warnings

import numpy as np
import pytest
from helpers import close
from torch_oracle import needs_torch, torch_or_absent

import tinygrad_attn as tga
import tinygrad_attn.functional as F
from tinygrad_attn import Tensor, nn

# PyTorch is an optional oracle: the tests that need it carry ``needs_torch`` and skip without it,
# the others still run.
torch = torch_or_absent()


NAMES = ["CrossEntropyLoss", "NLLLoss", "MSELoss", "BCELoss", "BCEWithLogitsLoss"]


@pytest.mark.parametrize("name", NAMES)
def test_constructor_and_forward_signatures_are_torchs(name):
    torch = pytest.importorskip("torch")

    def params(fn):
        return [(p.name, p.default) for p in inspect.signature(fn).parameters.values()]

    ours, theirs = getattr(nn, name), getattr(torch.nn, name)
    assert params(ours.__init__) == params(theirs.__init__)
    assert params(ours.forward) == params(theirs.forward)


def _inputs(name, rng, shape=(4, 3)):
    x = rng.standard_normal(shape)
    if name in ("CrossEntropyLoss", "NLLLoss"):
        t = rng.integers(0, shape[1], shape[:1] + shape[2:])
        t.reshape(-1)[0] = -100
        return (x if name == "CrossEntropyLoss" else x - np.log(np.exp(x).sum(1, keepdims=True))), t
    if name == "BCELoss":
        return 1 / (1 + np.exp(-x)), rng.uniform(0, 1, shape)
    return x, rng.uniform(0, 1, shape)


CONFIGS = [
    ("CrossEntropyLoss", {}),
    ("CrossEntropyLoss", {"weight": [0.5, 2.0, 1.0], "reduction": "sum"}),
    ("CrossEntropyLoss", {"ignore_index": 1, "label_smoothing": 0.2, "reduction": "none"}),
    ("CrossEntropyLoss", {"weight": [0.5, 2.0, 1.0], "label_smoothing": 0.1}),
    ("NLLLoss", {}),
    ("NLLLoss", {"weight": [0.5, 2.0, 1.0], "reduction": "none"}),
    ("NLLLoss", {"size_average": False}),
    ("MSELoss", {}),
    ("MSELoss", {"reduction": "sum"}),
    ("MSELoss", {"reduce": False}),
    ("BCELoss", {"weight": [1.0, 0.2, 3.0]}),
    ("BCELoss", {"reduction": "none"}),
    ("BCEWithLogitsLoss", {"pos_weight": [2.0, 0.5, 1.0]}),
    ("BCEWithLogitsLoss", {"weight": [1.0, 0.2, 3.0], "pos_weight": [2.0, 0.5, 1.0], "reduction": "sum"}),
]


@pytest.mark.filterwarnings("ignore:size_average and reduce args will be deprecated")  # PyTorch's own
@pytest.mark.parametrize("name,kw", CONFIGS, ids=[f"{n}-{i}" for i, (n, _) in enumerate(CONFIGS)])
def test_modules_match_torch(name, kw, device):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    shape = (2, 3, 2) if name in ("CrossEntropyLoss", "NLLLoss") else (4, 3)
    x, t = _inputs(name, rng, shape)
    if name == "CrossEntropyLoss" and kw.get("ignore_index") == 1:
        t.reshape(-1)[0] = 1
    tensors = {k: np.asarray(v, dtype=np.float64) for k, v in kw.items() if k in ("weight", "pos_weight")}
    ours = getattr(nn, name)(**{**kw, **{k: Tensor(v) for k, v in tensors.items()}}).to(device)
    theirs = getattr(torch.nn, name)(**{**kw, **{k: torch.tensor(v) for k, v in tensors.items()}})
    xt = torch.tensor(x, requires_grad=True)
    want = theirs(xt, torch.tensor(t))
    w = rng.standard_normal(tuple(want.shape))
    (want_g,) = torch.autograd.grad((want * torch.tensor(w)).sum(), xt)
    xs = Tensor(x, device=device, requires_grad=True)
    got = ours(xs, Tensor(t, device=device))
    close(got, want.detach().numpy(), atol=1e-12, rtol=1e-10)
    (g,) = tga.grad((got * Tensor(w, device=device)).sum(), xs)
    close(g, want_g.detach().numpy(), atol=1e-12, rtol=1e-10)
    assert ours.reduction == theirs.reduction


def test_weights_are_buffers_as_in_torch():
    torch = pytest.importorskip("torch")
    for name, kw in [("CrossEntropyLoss", {"weight": [1.0, 2.0]}), ("NLLLoss", {}), ("MSELoss", {}),
                     ("BCEWithLogitsLoss", {"weight": [1.0, 3.0], "pos_weight": [2.0, 0.5]})]:  # fmt: skip
        theirs = getattr(torch.nn, name)(**{k: torch.tensor(v) for k, v in kw.items()})
        ours = getattr(nn, name)(**kw)
        sd = {k: v.detach().numpy() for k, v in theirs.state_dict().items()}
        assert list(ours.state_dict()) == list(sd)
        ours.load_state_dict({k: v * 3 for k, v in sd.items()})
        for k, v in sd.items():
            close(getattr(ours, k), v * 3)
        assert list(ours.parameters()) == []


def test_weight_moves_with_the_module(device):
    loss = nn.CrossEntropyLoss(weight=np.array([1.0, 2.0, 3.0])).to(device)
    assert loss.weight.device == Tensor([0.0], device=device).device
    x = Tensor(np.zeros((2, 3), np.float32), device=device)
    close(loss(x, Tensor(np.array([0, 2]), device=device)), np.log(3.0), atol=1e-6)


def test_bad_reduction_is_refused_at_construction():
    with pytest.raises(ValueError, match="CrossEntropyLoss: reduction must be 'mean', 'sum' or 'none'"):
        nn.CrossEntropyLoss(reduction="avg")


def test_a_training_step_with_a_loss_module(rng):
    model = nn.Linear(3, 2)
    opt = tga.optim.SGD(model.parameters(), lr=0.5)
    x = Tensor(rng.standard_normal((16, 3)).astype(np.float32))
    y = (x.detach().numpy()[:, 0] > 0).astype(np.int64)
    crit = nn.CrossEntropyLoss()
    first = None
    for _ in range(20):
        loss = crit(model(x), y)
        first = loss.item() if first is None else first
        opt.zero_grad()
        loss.backward()
        opt.step()
    assert loss.item() < 0.5 * first


# -- L1, smooth L1, Huber, KL divergence and cosine embedding losses against PyTorch ---------------

TF = torch.nn.functional


def _log_probs(rng, shape):
    z = rng.standard_normal(shape)
    return z - np.log(np.exp(z).sum(-1, keepdims=True))


def _probs(rng, shape, zeros=True):
    p = np.exp(_log_probs(rng, shape))
    if zeros:  # exact zeros in the target: 0 log 0 = 0, as label smoothing produces
        p[..., 0] = 0.0
        p /= p.sum(-1, keepdims=True)
    return p


# name -> (ours, theirs, make arrays (the first ones differentiated), number differentiated)
CASES = {
    "l1": (F.l1_loss, TF.l1_loss, lambda r: [r.standard_normal((3, 4)), r.standard_normal((3, 4))], 2, {}),
    "l1_weight": (
        F.l1_loss,
        TF.l1_loss,
        lambda r: [r.standard_normal((3, 4)), r.standard_normal((3, 4))],
        2,
        {"weight": np.linspace(0.5, 2, 12).reshape(3, 4)},
    ),  # fmt: skip
    "smooth_l1": (
        F.smooth_l1_loss,
        TF.smooth_l1_loss,
        lambda r: [r.standard_normal((5, 3)) * 2, r.standard_normal((5, 3))],
        2,
        {"beta": 0.7},
    ),  # fmt: skip
    "smooth_l1_beta0": (
        F.smooth_l1_loss,
        TF.smooth_l1_loss,
        lambda r: [r.standard_normal((4,)), r.standard_normal((4,))],
        2,
        {"beta": 0.0},
    ),  # fmt: skip
    "huber": (
        F.huber_loss,
        TF.huber_loss,
        lambda r: [r.standard_normal((5, 3)) * 2, r.standard_normal((5, 3))],
        2,
        {"delta": 1.5},
    ),  # fmt: skip
    # (zeros in the target: its derivative there is -inf, NaN in PyTorch; only the input's is compared)
    "huber_weight": (
        F.huber_loss,
        TF.huber_loss,
        lambda r: [r.standard_normal((2, 3)) * 2, r.standard_normal((2, 3))],
        2,
        {"weight": np.linspace(0.5, 2, 6).reshape(2, 3)},
    ),  # fmt: skip
    "kl_div": (F.kl_div, TF.kl_div, lambda r: [_log_probs(r, (4, 5)), _probs(r, (4, 5))], 1, {}),
    "kl_div_positive_target": (
        F.kl_div,
        TF.kl_div,
        lambda r: [_log_probs(r, (4, 5)), _probs(r, (4, 5), zeros=False)],
        2,
        {},
    ),  # fmt: skip
    "kl_div_log_target": (
        F.kl_div,
        TF.kl_div,
        lambda r: [_log_probs(r, (4, 5)), _log_probs(r, (4, 5))],
        2,
        {"log_target": True},
    ),  # fmt: skip
    "cosine_embedding": (
        F.cosine_embedding_loss,
        TF.cosine_embedding_loss,
        lambda r: [r.standard_normal((6, 4)), r.standard_normal((6, 4)), np.array([1, -1, 1, -1, -1, 1])],
        2,
        {"margin": 0.1},
    ),  # fmt: skip
    "cosine_embedding_1d": (
        F.cosine_embedding_loss,
        TF.cosine_embedding_loss,
        lambda r: [r.standard_normal(4), r.standard_normal(4), np.array(-1)],
        2,
        {},
    ),  # fmt: skip
}


def _reductions(name):
    return ["mean", "sum", "none"] + (["batchmean"] if name.startswith("kl_div") else [])


@needs_torch
@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_torch(name, rng):
    ours, theirs, make, ndiff, kw = CASES[name]
    arrays = make(rng)
    for reduction in _reductions(name):
        if reduction == "none" and name == "cosine_embedding_1d":
            continue
        xs = [Tensor(a, requires_grad=i < ndiff) for i, a in enumerate(arrays)]
        ts = [torch.tensor(a, requires_grad=i < ndiff) for i, a in enumerate(arrays)]
        kw_o = {k: Tensor(v) if isinstance(v, np.ndarray) else v for k, v in kw.items()}
        kw_t = {k: torch.tensor(v) if isinstance(v, np.ndarray) else v for k, v in kw.items()}
        for decomposed in (False, True):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # (kl_div's "mean" warns, on both sides)
                with tga.decompose() if decomposed else tga.enable_grad():
                    y = ours(*xs, reduction=reduction, **kw_o)
                yt = theirs(*ts, reduction=reduction, **kw_t)
            np.testing.assert_allclose(y.detach().numpy(), yt.detach().numpy(), rtol=1e-12, atol=1e-14)
            w = rng.standard_normal(y.shape)
            gs = tga.grad((y * Tensor(w)).sum(), xs[:ndiff])
            gts = torch.autograd.grad((yt * torch.tensor(w)).sum(), ts[:ndiff])
            for g, gt in zip(gs, gts):
                np.testing.assert_allclose(g.detach().numpy(), gt.detach().numpy(), rtol=1e-10, atol=1e-12)


@needs_torch
@pytest.mark.parametrize("name", ["smooth_l1", "huber", "kl_div_positive_target", "kl_div_log_target",
                                  "cosine_embedding"])  # fmt: skip
def test_gradcheck(name, device, rng):
    ours, _, make, ndiff, kw = CASES[name]
    arrays = make(rng)
    rest = [Tensor(a, device=device) for a in arrays[ndiff:]]
    xs = [Tensor(a, device=device) for a in arrays[:ndiff]]
    reduction = "batchmean" if name.startswith("kl_div") else "sum"
    assert tga.gradcheck(lambda *a: ours(*a, *rest, reduction=reduction, **kw), *xs)


@needs_torch
def test_kl_div_mean_warns_as_pytorch(rng):
    x, t = Tensor(_log_probs(rng, (2, 3))), Tensor(_probs(rng, (2, 3)))
    with pytest.warns(UserWarning, match="batchmean"):
        F.kl_div(x, t)


MODULES = [
    (lambda: nn.L1Loss(), lambda: torch.nn.L1Loss(), "pair"),
    (lambda: nn.L1Loss(reduction="sum"), lambda: torch.nn.L1Loss(reduction="sum"), "pair"),
    (lambda: nn.SmoothL1Loss(beta=0.5), lambda: torch.nn.SmoothL1Loss(beta=0.5), "pair"),
    (lambda: nn.HuberLoss(reduction="none", delta=0.3), lambda: torch.nn.HuberLoss(reduction="none", delta=0.3), "pair"),
    (lambda: nn.KLDivLoss(reduction="batchmean"), lambda: torch.nn.KLDivLoss(reduction="batchmean"), "kl"),
    (lambda: nn.KLDivLoss(reduction="sum", log_target=True), lambda: torch.nn.KLDivLoss(reduction="sum", log_target=True),
     "kl_log"),
    (lambda: nn.CosineEmbeddingLoss(margin=0.2), lambda: torch.nn.CosineEmbeddingLoss(margin=0.2), "cos"),
]  # fmt: skip


@needs_torch
@pytest.mark.parametrize("i", range(len(MODULES)))
def test_further_loss_modules_match_torch(i, rng):
    make_o, make_t, kind = MODULES[i]
    ours, theirs = make_o(), make_t()
    if kind == "pair":
        arrays = [rng.standard_normal((3, 4)), rng.standard_normal((3, 4))]
    elif kind.startswith("kl"):
        arrays = [_log_probs(rng, (3, 4)), _log_probs(rng, (3, 4)) if kind == "kl_log" else _probs(rng, (3, 4))]
    else:
        arrays = [rng.standard_normal((3, 4)), rng.standard_normal((3, 4)), np.array([1, -1, -1])]
    y = ours(*[Tensor(a) for a in arrays])
    yt = theirs(*[torch.tensor(a) for a in arrays])
    np.testing.assert_allclose(y.detach().numpy(), yt.detach().numpy(), rtol=1e-12)
    assert ours.reduction == theirs.reduction


@needs_torch
def test_bad_arguments():
    a = Tensor(np.zeros((2, 3)))
    with pytest.warns(UserWarning, match=r"l1_loss: Using a target size \(\(3,\)\)"):  # (broadcast, as PyTorch)
        F.l1_loss(a, np.zeros(3))
    with pytest.raises(ValueError, match=r"l1_loss: weight of shape \(3,\) must have the input's shape"):
        F.l1_loss(a, a, weight=np.ones(3))
    with pytest.raises(ValueError, match="kl_div: reduction must be"):
        F.kl_div(a, a, reduction="batch")
    with pytest.raises(ValueError, match="huber_loss: delta must be positive"):
        F.huber_loss(a, a, delta=0.0)
    with pytest.raises(ValueError, match=r"cosine_embedding_loss: target has shape \(3,\), expected \(2,\)"):
        F.cosine_embedding_loss(a, a, Tensor(np.ones(3)))
