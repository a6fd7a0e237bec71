"""Second derivatives of the losses whose PyTorch counterparts have none (the OpInfo table
checks their values and first derivatives against PyTorch), against finite differences of
the first derivative; and ``ctc_loss`` through a ``log_softmax``: the gradient of the logits
equals both PyTorch's and finite differences."""

from __future__ import annotations

import numpy as np
import pytest

import tinygrad_attn as tga
import tinygrad_attn.functional as F
from tinygrad_attn import Tensor


def _first_derivative(loss):
    """x -> <grad_x loss(x), u> as a function finite differences can differentiate again."""

    def fn(x):
        g = tga.grad(loss(x), [x], create_graph=True)[0]
        u = Tensor(np.random.default_rng(7).standard_normal(x.shape))
        return (g * u).sum()

    return fn


def test_multi_margin_second_derivative(rng):  # (p=2: with p=1 the first derivative is piecewise constant)
    x = rng.standard_normal((3, 4)) * 3.0
    t = Tensor(np.array([0, 3, 1]))
    w = Tensor(rng.random(4) + 0.5)
    assert tga.gradcheck(_first_derivative(lambda x: F.multi_margin_loss(x, t, p=2, margin=0.5, weight=w)), x)


def test_multilabel_margin_second_derivative(rng):
    x = rng.standard_normal((2, 4)) * 3.0
    t = Tensor(np.array([[3, 0, -1, 1], [1, 1, 2, -1]]))
    assert tga.gradcheck(_first_derivative(lambda x: F.multilabel_margin_loss(x, t, reduction="sum") ** 2), x)


def _ctc_case(rng):
    t_max, n, c = 6, 3, 4
    logits = rng.standard_normal((t_max, n, c))
    targets = np.array([[1, 1, 2], [3, 0, 0], [2, 3, 0]])
    return logits, targets, np.array([6, 4, 5]), np.array([3, 1, 2])


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_ctc_loss_through_log_softmax_matches_torch_and_finite_differences(reduction, rng):
    torch = pytest.importorskip("torch")
    logits, targets, il, tl = _ctc_case(rng)

    def ours(z):
        out = F.ctc_loss(F.log_softmax(z, 2), Tensor(targets), Tensor(il), Tensor(tl), reduction=reduction)
        return out if reduction != "none" else out.sum()

    assert tga.gradcheck(ours, logits)
    assert tga.gradcheck(_first_derivative(ours), logits)  # (second order: ours, which PyTorch lacks)
    z = Tensor(logits, requires_grad=True)
    ours(z).backward()
    zt = torch.tensor(logits, requires_grad=True)
    out = torch.nn.functional.ctc_loss(zt.log_softmax(2), torch.tensor(targets), torch.tensor(il), torch.tensor(tl),
                                       reduction=reduction)  # fmt: skip
    (out if reduction != "none" else out.sum()).backward()
    np.testing.assert_allclose(z.grad.detach().numpy(), zt.grad.detach().numpy(), atol=1e-10)


def test_ctc_loss_impossible_alignment_is_inf_or_zero(rng):
    logits, targets, _, tl = _ctc_case(rng)
    lp = F.log_softmax(Tensor(logits, requires_grad=True), 2)
    il = Tensor(np.array([3, 4, 5]))  # (the first target, 1 1 2, needs 4 frames)
    assert np.isinf(F.ctc_loss(lp, Tensor(targets), il, Tensor(tl), reduction="none").detach().numpy()[0])
    loss = F.ctc_loss(lp, Tensor(targets), il, Tensor(tl), reduction="none", zero_infinity=True)
    assert loss.detach().numpy()[0] == 0.0 and np.isfinite(loss.detach().numpy()).all()
