"""Learning-rate schedules against torch.optim.lr_scheduler: the rates of every step, two
param groups, get_last_lr(), and state dicts that resume a schedule mid-way."""

from __future__ import annotations

import numpy as np
import pytest

from tinygrad_attn import Tensor
from tinygrad_attn.models import Parameter
from tinygrad_attn.optim import SGD, lr_scheduler

STEPS = 10
CASES = [
    ("StepLR", dict(step_size=3, gamma=0.5)),
    ("MultiStepLR", dict(milestones=[2, 5, 6], gamma=0.3)),
    ("ExponentialLR", dict(gamma=0.9)),
    ("CosineAnnealingLR", dict(T_max=6, eta_min=0.01)),
    ("CosineAnnealingLR", dict(T_max=4)),  # past T_max the cosine comes back up, as in PyTorch
    ("LinearLR", dict(start_factor=0.25, end_factor=0.9, total_iters=4)),
    ("LinearLR", dict()),
    ("OneCycleLR", dict(max_lr=[1.0, 2.0], total_steps=STEPS + 1)),
    ("OneCycleLR", dict(max_lr=0.5, epochs=2, steps_per_epoch=6, anneal_strategy="linear", three_phase=True)),
    ("LambdaLR", dict(lr_lambda=lambda e: 1.0 / (1 + e))),
    ("LambdaLR", dict(lr_lambda=[lambda e: 0.5**e, lambda e: 1.0 + e])),
]


def _pair(name, kw):
    torch = pytest.importorskip("torch")
    tp = [
        torch.zeros(2, dtype=torch.float64, requires_grad=True),
        torch.zeros(1, dtype=torch.float64, requires_grad=True),
    ]
    topt = torch.optim.SGD([{"params": tp[:1]}, {"params": tp[1:], "lr": 0.5}], lr=0.1, momentum=0.9)
    ours = [Parameter(np.zeros(2)), Parameter(np.zeros(1))]
    oopt = SGD([{"params": ours[:1]}, {"params": ours[1:], "lr": 0.5}], lr=0.1, momentum=0.9)
    tsched = getattr(torch.optim.lr_scheduler, name)(topt, **kw)
    osched = getattr(lr_scheduler, name)(oopt, **kw)
    return torch, (tp, topt, tsched), (ours, oopt, osched)


def _step(ps, opt, sched):
    for p in ps:
        p.grad = Tensor(np.ones(p.shape)) if isinstance(p, Tensor) else p.new_ones(p.shape)
    opt.step()
    sched.step()


@pytest.mark.parametrize("name,kw", CASES, ids=lambda v: v if isinstance(v, str) else ",".join(map(str, v)))
@pytest.mark.slow  # (over a third of a second, or a new interpreter: not in the fast loop)
def test_rates_match_torch_step_by_step(name, kw):
    torch, t, o = _pair(name, kw)
    for _ in range(STEPS):
        assert o[2].get_last_lr() == pytest.approx(t[2].get_last_lr(), rel=1e-12, abs=1e-15)
        for og, tg in zip(o[1].param_groups, t[1].param_groups):
            assert og["lr"] == pytest.approx(tg["lr"], rel=1e-12)
            assert og["momentum"] == pytest.approx(tg["momentum"], rel=1e-12)  # OneCycleLR cycles it
        _step(*t)
        _step(*o)
    assert o[2].last_epoch == t[2].last_epoch == STEPS
    np.testing.assert_allclose(o[0][0].detach().numpy(), t[0][0].detach().numpy(), rtol=1e-12)


@pytest.mark.parametrize(
    "name,kw",
    [c for c in CASES if c[0] != "LambdaLR"],
    ids=lambda v: v if isinstance(v, str) else ",".join(map(str, v)),
)
def test_state_dict_matches_torch_and_resumes(name, kw):
    torch, t, o = _pair(name, kw)
    for _ in range(3):
        _step(*t)
        _step(*o)
    tsd, osd = t[2].state_dict(), o[2].state_dict()
    for k, v in osd.items():
        if k in tsd:
            assert v == tsd[k] or v == pytest.approx(tsd[k]), k
    assert {"last_epoch", "base_lrs", "_last_lr"} <= set(osd) and osd["last_epoch"] == 3
    # A fresh optimizer and schedule, loaded from the state dicts (PyTorch's order: build the
    # schedule, then load both), continue the same rates.
    ps = [Parameter(np.zeros(2)), Parameter(np.zeros(1))]
    opt = SGD([{"params": ps[:1]}, {"params": ps[1:]}], lr=7.0, momentum=0.9)
    sched = getattr(lr_scheduler, name)(opt, **kw)
    opt.load_state_dict(o[1].state_dict())
    sched.load_state_dict(osd)
    for _ in range(4):
        _step(*t)
        _step(ps, opt, sched)
        assert sched.get_last_lr() == pytest.approx(t[2].get_last_lr(), rel=1e-12)


def test_one_cycle_cycles_adams_first_beta_as_torch():
    torch = pytest.importorskip("torch")
    from tinygrad_attn.optim import Adam

    tp = torch.zeros(2, dtype=torch.float64, requires_grad=True)
    p = Parameter(np.zeros(2))
    topt, oopt = torch.optim.Adam([tp], lr=0.1, betas=(0.9, 0.99)), Adam([p], lr=0.1, betas=(0.9, 0.99))
    ts = torch.optim.lr_scheduler.OneCycleLR(topt, max_lr=0.3, total_steps=6, base_momentum=0.8)
    os_ = lr_scheduler.OneCycleLR(oopt, max_lr=0.3, total_steps=6, base_momentum=0.8)
    for _ in range(6):
        assert oopt.param_groups[0]["betas"] == pytest.approx(topt.param_groups[0]["betas"], rel=1e-12)
        _step([tp], topt, ts)
        _step([p], oopt, os_)
    np.testing.assert_allclose(p.detach().numpy(), tp.detach().numpy(), rtol=1e-12)
    with pytest.raises(ValueError, match="more than total_steps=6"):
        os_.step()


@pytest.mark.filterwarnings("ignore:.*before optimizer.step")  # (the test steps only the schedule)
def test_lambda_state_dict_leaves_the_functions_out():
    p = Parameter(np.zeros(1))
    sched = lr_scheduler.LambdaLR(SGD([p], lr=1.0), lambda e: 0.5**e)
    sched.step()
    sd = sched.state_dict()
    # (PyTorch's layout: a function is left out as None, a callable object kept as its attributes)
    assert sd["lr_lambdas"] == [None] and sd["last_epoch"] == 1 and sd["_last_lr"] == [0.5]


def test_bad_arguments_are_named():
    opt = SGD([Parameter(np.zeros(1)), Parameter(np.zeros(1))], lr=1.0)
    with pytest.raises(ValueError, match="StepLR: step_size"):
        lr_scheduler.StepLR(opt, step_size=0)
    with pytest.raises(ValueError, match=r"LambdaLR: Expected 1 lr_lambdas, but got 2"):
        lr_scheduler.LambdaLR(opt, [lambda e: 1.0, lambda e: 1.0])
    with pytest.raises(TypeError, match="expected an Optimizer"):
        lr_scheduler.ExponentialLR(object(), gamma=0.5)
    with pytest.raises(KeyError, match="initial_lr"):
        lr_scheduler.ExponentialLR(SGD([Parameter(np.zeros(1))], lr=1.0), gamma=0.5, last_epoch=3)


# -- subclassing LRScheduler / _LRScheduler as PyTorch code does ------------------------------
def _warmup_class(base):
    class Warmup(base):
        """Linear warm-up then inverse square root, from last_epoch, base_lrs and the optimizer."""

        def __init__(self, optimizer, warmup, last_epoch=-1):
            self.warmup = warmup
            super().__init__(optimizer, last_epoch)

        def get_lr(self):
            step = max(self.last_epoch, 1)
            scale = min(step / self.warmup, (self.warmup / step) ** 0.5)
            return [base_lr * scale for base_lr in self.base_lrs]

    return Warmup


@pytest.mark.filterwarnings("ignore:.*before optimizer.step")  # (the test steps only the schedule)
@pytest.mark.parametrize("name", ["LRScheduler", "_LRScheduler"])
def test_a_subclass_defining_get_lr_runs_as_in_torch(name):
    torch = pytest.importorskip("torch")
    ours_cls = _warmup_class(getattr(lr_scheduler, name))
    theirs_cls = _warmup_class(getattr(torch.optim.lr_scheduler, name))
    groups = [{"params": [Parameter(np.zeros(2))], "lr": 1.0}, {"params": [Parameter(np.zeros(1))], "lr": 0.1}]
    opt = SGD(groups, lr=0.5)
    p = [torch.nn.Parameter(torch.zeros(2)), torch.nn.Parameter(torch.zeros(1))]
    topt = torch.optim.SGD([{"params": [p[0]], "lr": 1.0}, {"params": [p[1]], "lr": 0.1}])
    ours, theirs = ours_cls(opt, warmup=3), theirs_cls(topt, warmup=3)
    for _ in range(8):
        assert ours.get_last_lr() == pytest.approx(theirs.get_last_lr(), rel=1e-12)
        assert [g["lr"] for g in opt.param_groups] == pytest.approx([g["lr"] for g in topt.param_groups])
        topt.step()
        ours.step()
        theirs.step()
    state = ours.state_dict()
    assert state["last_epoch"] == theirs.state_dict()["last_epoch"] == 8
    assert state["base_lrs"] == theirs.state_dict()["base_lrs"]
    assert state["warmup"] == 3


@pytest.mark.filterwarnings("ignore:.*before optimizer.step")  # (the test steps only the schedule)
def test_step_with_an_epoch_sets_last_epoch_and_warns():
    opt = SGD([Parameter(np.zeros(1))], lr=1.0)
    sched = lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
    with pytest.warns(UserWarning, match="deprecated"):
        sched.step(5)
    assert sched.last_epoch == 5 and opt.param_groups[0]["lr"] == 0.25
