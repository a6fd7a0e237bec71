"""The dtype a loss computes and returns in, for every pair of float dtypes of input and
target, as PyTorch's: most promote both (a float64 target makes a float32 input's loss
float64), the Huber, soft-margin and hinge losses keep the input's, the logits' binary cross
entropy takes the target's, and ``binary_cross_entropy`` refuses a mismatch. Values equal to
the rounding of the lower dtype, and each input's gradient in its own dtype."""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import tinygrad_attn as tga  # noqa: E402

LOSSES = {
    "mse_loss": lambda F, a, b: F.mse_loss(a, b),
    "l1_loss": lambda F, a, b: F.l1_loss(a, b),
    "l1_loss none": lambda F, a, b: F.l1_loss(a, b, reduction="none"),
    "smooth_l1_loss": lambda F, a, b: F.smooth_l1_loss(a, b, beta=0.5),
    "huber_loss": lambda F, a, b: F.huber_loss(a, b),
    "kl_div": lambda F, a, b: F.kl_div(a, b, reduction="batchmean"),
    "kl_div log_target": lambda F, a, b: F.kl_div(a, b.log(), reduction="sum", log_target=True),
    "binary_cross_entropy_with_logits": lambda F, a, b: F.binary_cross_entropy_with_logits(a, b),
    "binary_cross_entropy": lambda F, a, b: F.binary_cross_entropy(a.sigmoid(), b),
    "soft_margin_loss": lambda F, a, b: F.soft_margin_loss(a, (b - 0.5).sign()),
    "hinge_embedding_loss": lambda F, a, b: F.hinge_embedding_loss(a, (b - 0.5).sign()),
    "poisson_nll_loss": lambda F, a, b: F.poisson_nll_loss(a, b),
    "gaussian_nll_loss": lambda F, a, b: F.gaussian_nll_loss(a, b, b + 1),
    "cross_entropy probabilities": lambda F, a, b: F.cross_entropy(a, b),
    "cross_entropy smoothed": lambda F, a, b: F.cross_entropy(a, b, label_smoothing=0.1),
    "multilabel_soft_margin_loss": lambda F, a, b: F.multilabel_soft_margin_loss(a, b),
    "margin_ranking_loss": lambda F, a, b: F.margin_ranking_loss(a, b, b),
    "cosine_embedding_loss": lambda F, a, b: F.cosine_embedding_loss(a, b, b[:, 0].sign()),
}
FLOATS = ["float16", "float32", "float64"]
# PyTorch's Huber loss of mixed dtypes has a forward but a backward that raises (its kernel's
# dtype check): ours differentiates it, so only the forward is compared
FORWARD_ONLY = {"huber_loss"}
TOLERANCE = {"float16": 2e-3, "float32": 1e-5, "float64": 1e-10}


def _run(m, name, da, db):
    x = np.random.default_rng(0).standard_normal((3, 4))
    y = np.random.default_rng(1).random((3, 4)) * 0.9 + 0.05  # (probabilities, rates and variances alike)
    a = m.tensor(x).to(getattr(m, da)).requires_grad_()
    b = m.tensor(y).to(getattr(m, db))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            out = LOSSES[name](m.nn.functional, a, b)
        except RuntimeError:
            return "raises"
    dt = lambda t: str(t.dtype).removeprefix("torch.")  # noqa: E731
    if name in FORWARD_ONLY and da != db:
        return dt(out), np.asarray(out.detach().numpy(), np.float64), dt(a), np.zeros(())
    out.sum().backward()
    return (
        dt(out),
        np.asarray(out.detach().numpy(), np.float64),
        dt(a.grad),
        np.asarray(a.grad.detach().numpy(), np.float64),
    )


@pytest.mark.parametrize("da,db", list(itertools.product(FLOATS, FLOATS)))
@pytest.mark.parametrize("name", LOSSES)
def test_a_losss_dtype_is_pytorchs(name, da, db):
    want, got = _run(torch, name, da, db), _run(tga, name, da, db)
    if want == "raises" or got == "raises":
        assert got == want
        return
    assert (got[0], got[2]) == (want[0], want[2])
    tol = max(TOLERANCE[da], TOLERANCE[db])
    np.testing.assert_allclose(got[1], want[1], rtol=tol, atol=tol)
    np.testing.assert_allclose(got[3], want[3], rtol=tol, atol=tol)
