"""L1, smooth L1, Huber, KL divergence and cosine embedding losses against PyTorch (float64,
values and gradients, every reduction), as functions and as modules; fused-free composites
hold under decompose and pass finite differences on every CPU namespace."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import tinygrad_attn as tga
import tinygrad_attn.functional as F
from tinygrad_attn import Tensor, nn

torch = pytest.importorskip("torch")
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
            np.testing.assert_allclose(y.numpy(), yt.detach().numpy(), rtol=1e-12, atol=1e-14)
            w = rng.standard_normal(y.shape)
            gs = tga.grad((y * Tensor(w)).sum(), xs[:ndiff])
            gts = torch.autograd.grad((yt * torch.tensor(w)).sum(), ts[:ndiff])
            for g, gt in zip(gs, gts):
                np.testing.assert_allclose(g.numpy(), gt.numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", ["smooth_l1", "huber", "kl_div_positive_target", "kl_div_log_target",
                                  "cosine_embedding"])  # fmt: skip
def test_gradcheck(name, device, rng):
    ours, _, make, ndiff, kw = CASES[name]
    arrays = make(rng)
    rest = [Tensor(a, device=device) for a in arrays[ndiff:]]
    xs = [Tensor(a, device=device) for a in arrays[:ndiff]]
    reduction = "batchmean" if name.startswith("kl_div") else "sum"
    assert tga.gradcheck(lambda *a: ours(*a, *rest, reduction=reduction, **kw), *xs)


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


@pytest.mark.parametrize("i", range(len(MODULES)))
def test_modules_match_torch(i, rng):
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
    np.testing.assert_allclose(y.numpy(), yt.numpy(), rtol=1e-12)
    assert ours.reduction == theirs.reduction


def test_bad_arguments():
    a = Tensor(np.zeros((2, 3)))
    with pytest.raises(ValueError, match=r"l1_loss: target of shape \(3,\)"):
        F.l1_loss(a, np.zeros(3))
    with pytest.raises(ValueError, match=r"l1_loss: weight of shape \(3,\) must have the input's shape"):
        F.l1_loss(a, a, weight=np.ones(3))
    with pytest.raises(ValueError, match="kl_div: reduction must be"):
        F.kl_div(a, a, reduction="batch")
    with pytest.raises(ValueError, match="huber_loss: delta must be positive"):
        F.huber_loss(a, a, delta=0.0)
    with pytest.raises(ValueError, match=r"cosine_embedding_loss: target has shape \(3,\), expected \(2,\)"):
        F.cosine_embedding_loss(a, a, np.ones(3))
