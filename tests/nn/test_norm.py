"""BatchNorm1d/2d and F.batch_norm against PyTorch in float64: outputs, gradients, running
statistics over several steps in train and eval, momentum=None, no affine, no tracking,
state dict layout; finite differences on every CPU namespace."""

from __future__ import annotations

import numpy as np
import pytest
from torch_oracle import load_torch

import tinygrad_attn as tga
import tinygrad_attn.functional as F
from tinygrad_attn import Tensor, nn

torch = pytest.importorskip("torch")

CASES = [
    (lambda: nn.BatchNorm1d(3), lambda: torch.nn.BatchNorm1d(3), (5, 3)),
    (lambda: nn.BatchNorm1d(3, momentum=None), lambda: torch.nn.BatchNorm1d(3, momentum=None), (4, 3, 6)),
    (lambda: nn.BatchNorm2d(2, eps=1e-3, momentum=0.3), lambda: torch.nn.BatchNorm2d(2, eps=1e-3, momentum=0.3),
     (3, 2, 4, 5)),
    (lambda: nn.BatchNorm2d(2, affine=False), lambda: torch.nn.BatchNorm2d(2, affine=False), (2, 2, 3, 3)),
    (lambda: nn.BatchNorm1d(4, track_running_stats=False), lambda: torch.nn.BatchNorm1d(4, track_running_stats=False),
     (6, 4)),
]  # fmt: skip


@pytest.mark.parametrize("i", range(len(CASES)))
def test_train_then_eval_matches_torch(i, rng):
    make_o, make_t, shape = CASES[i]
    theirs = make_t()
    with torch.no_grad():  # weights and statistics away from their initial values
        for p in theirs.parameters():
            p.copy_(torch.tensor(rng.standard_normal(tuple(p.shape))))
    ours = load_torch(make_o(), theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    for step in range(3):
        for mode in ("train", "eval") if step == 2 else ("train",):
            ours.train(mode == "train")
            theirs.train(mode == "train")
            a = rng.standard_normal(shape) * 2 + 1
            x, xt = Tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
            y, yt = ours(x), theirs(xt)
            np.testing.assert_allclose(y.detach().numpy(), yt.detach().numpy(), rtol=1e-10, atol=1e-12)
            w = rng.standard_normal(shape)
            (y * Tensor(w)).sum().backward()
            (yt * torch.tensor(w)).sum().backward()
            np.testing.assert_allclose(x.grad.detach().numpy(), xt.grad.detach().numpy(), rtol=1e-9, atol=1e-12)
            for (n, p), (_, q) in zip(ours.named_parameters(), theirs.named_parameters()):
                np.testing.assert_allclose(
                    p.grad.detach().numpy(), q.grad.detach().numpy(), rtol=1e-9, atol=1e-12, err_msg=n
                )
                p.grad, q.grad = None, None
            for (n, b), (_, c) in zip(ours.named_buffers(), theirs.named_buffers()):
                np.testing.assert_allclose(b.detach().numpy(), c.detach().numpy(), rtol=1e-12, err_msg=n)


def test_buffers_and_parameters_are_pytorchs():
    ours, theirs = nn.BatchNorm2d(3), torch.nn.BatchNorm2d(3)
    assert [n for n, _ in ours.named_parameters()] == ["weight", "bias"]
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert ours.num_batches_tracked.dtype == np.int64 and ours.num_batches_tracked.shape == ()
    assert repr(ours) == repr(theirs)
    ours(Tensor.randn(2, 3, 2, 2))
    assert int(ours.num_batches_tracked) == 1
    ours.eval()
    ours(Tensor.randn(2, 3, 2, 2))
    assert int(ours.num_batches_tracked) == 1


@pytest.mark.parametrize("decomposed", [False, True])
def test_gradcheck_training_and_eval(device, rng, decomposed):
    x = Tensor(rng.standard_normal((4, 3, 2)), device=device)
    w = Tensor(rng.standard_normal(3), device=device)
    b = Tensor(rng.standard_normal(3), device=device)
    rm, rv = Tensor(rng.standard_normal(3), device=device), Tensor(rng.random(3) + 0.5, device=device)
    with tga.decompose() if decomposed else tga.enable_grad():
        assert tga.gradcheck(lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True), x, w, b)
        assert tga.gradcheck(lambda x, w, b: F.batch_norm(x, rm, rv, w, b, training=False), x, w, b)


def test_errors():
    with pytest.raises(ValueError, match=r"BatchNorm2d: expected 4D input \(got 3D input\)"):
        nn.BatchNorm2d(2)(Tensor.zeros(2, 2, 3))
    with pytest.raises(ValueError, match="more than 1 value per channel"):
        nn.BatchNorm1d(2)(Tensor.zeros(1, 2))
    with pytest.raises(ValueError, match=r"running_mean must be a tensor of shape \(2,\)"):
        F.batch_norm(Tensor.zeros(3, 2), Tensor.zeros(3), Tensor.ones(2))
