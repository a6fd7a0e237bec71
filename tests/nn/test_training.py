"""A small CNN written the way PyTorch tutorials write one (nn.init in the constructor, a
patch embedding, BatchNorm, pooling, label smoothing through KLDivLoss, gradient clipping,
a hand-written _LRScheduler subclass), run with only its imports changed and held to
PyTorch in float64: same weights via the state dict, then losses, gradients, parameters
and running statistics after every optimizer step."""

from __future__ import annotations

import numpy as np
import pytest

import tinygrad_attn as tga

torch = pytest.importorskip("torch")


def build(lib):
    """The same model source for both libraries: ``lib`` is ``torch`` or ``tinygrad_attn``."""
    nn, F = lib.nn, lib.nn.functional

    class SmallCNN(nn.Module):
        def __init__(self, classes=4):
            super().__init__()
            self.patch = nn.Conv2d(3, 8, kernel_size=2, stride=2)  # a ViT-style patch embedding
            self.conv = nn.Conv2d(8, 8, 3, padding="same", groups=2, bias=False)
            self.bn = nn.BatchNorm2d(8)
            self.pool = nn.MaxPool2d(2)
            self.avg = nn.AdaptiveAvgPool2d((1, 1))
            self.flat = nn.Flatten()
            self.head = nn.Linear(8, classes)
            self.pair = nn.Bilinear(8, 8, classes)
            for m in self.modules():
                if isinstance(m, nn.Conv2d):
                    nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
                    if m.bias is not None:
                        nn.init.zeros_(m.bias)
                elif isinstance(m, nn.BatchNorm2d):
                    nn.init.constant_(m.weight, 1)
                    nn.init.constant_(m.bias, 0)
                elif isinstance(m, nn.Linear):
                    nn.init.trunc_normal_(m.weight, std=0.02)

        def forward(self, x):
            h = F.relu(self.bn(self.conv(self.patch(x))))
            h = self.flat(self.avg(self.pool(h)))
            return F.log_softmax(self.head(h) + self.pair(h, h), dim=-1)

    class Warmup(lib.optim.lr_scheduler._LRScheduler):
        def __init__(self, optimizer, warmup, last_epoch=-1):
            self.warmup = warmup
            super().__init__(optimizer, last_epoch)

        def get_lr(self):
            return [base * min(1.0, (self.last_epoch + 1) / self.warmup) for base in self.base_lrs]

    return SmallCNN, Warmup


def _smoothed(y, classes, eps=0.1):
    t = np.full((len(y), classes), eps / (classes - 1))
    t[np.arange(len(y)), y] = 1 - eps
    return t


@pytest.mark.slow
def test_tutorial_style_cnn_trains_as_in_pytorch():
    rng = np.random.default_rng(0)
    CnnO, WarmupO = build(tga)
    CnnT, WarmupT = build(torch)
    torch.manual_seed(0)
    theirs = CnnT().double()
    ours = CnnO().double()
    ours.load_state_dict({k: v.detach().numpy() for k, v in theirs.state_dict().items()})
    assert list(ours.state_dict()) == list(theirs.state_dict())
    opt_o = tga.optim.Adam(ours.parameters(), lr=1e-2)
    opt_t = torch.optim.Adam(theirs.parameters(), lr=1e-2)
    sched_o, sched_t = WarmupO(opt_o, 3), WarmupT(opt_t, 3)
    crit_o, crit_t = tga.nn.KLDivLoss(reduction="batchmean"), torch.nn.KLDivLoss(reduction="batchmean")
    for step in range(4):
        x = rng.standard_normal((6, 3, 8, 8))
        target = _smoothed(rng.integers(0, 4, 6), 4)
        loss_o = crit_o(ours(tga.Tensor(x)), tga.Tensor(target))
        loss_t = crit_t(theirs(torch.tensor(x)), torch.tensor(target))
        np.testing.assert_allclose(loss_o.detach().numpy(), loss_t.detach().numpy(), rtol=1e-10)
        opt_o.zero_grad()
        opt_t.zero_grad()
        loss_o.backward()
        loss_t.backward()
        total_o = tga.nn.utils.clip_grad_norm_(ours.parameters(), 0.05)
        total_t = torch.nn.utils.clip_grad_norm_(theirs.parameters(), 0.05)
        np.testing.assert_allclose(total_o.detach().numpy(), total_t.detach().numpy(), rtol=1e-10)
        for (n, p), (_, q) in zip(ours.named_parameters(), theirs.named_parameters()):
            np.testing.assert_allclose(
                p.grad.detach().numpy(), q.grad.detach().numpy(), rtol=1e-8, atol=1e-12, err_msg=f"{n} @{step}"
            )
        opt_o.step()
        opt_t.step()
        sched_o.step()
        sched_t.step()
        assert sched_o.get_last_lr() == pytest.approx(sched_t.get_last_lr())
    for (n, a), (_, b) in zip(ours.state_dict().items(), theirs.state_dict().items()):
        a = a.detach().numpy() if isinstance(a, tga.Tensor) else np.asarray(a)
        np.testing.assert_allclose(a, b.detach().numpy(), rtol=1e-8, atol=1e-12, err_msg=n)
    ours.eval()
    theirs.eval()
    x = rng.standard_normal((2, 3, 8, 8))
    np.testing.assert_allclose(
        ours(tga.Tensor(x)).detach().numpy(), theirs(torch.tensor(x)).detach().numpy(), rtol=1e-9
    )
