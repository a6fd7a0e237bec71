"""Every schedule of torch.optim.lr_scheduler against PyTorch, for generated arguments: the
rates (and the cycled momentum) of 40 steps, chained and sequential schedules, state dicts
that resume mid-way as PyTorch's do whether the schedule is built before or after the
optimizer's state is loaded, ``last_epoch`` resumes, ``step(epoch)``, and the argument errors' classes."""

from __future__ import annotations

import contextlib
import random
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from tinygrad_attn import Tensor, optim  # noqa: E402
from tinygrad_attn.models import Parameter  # noqa: E402

STEPS = 40


def _rand_cases(seed: int, n: int) -> list[tuple[str, object]]:
    """``n`` generated argument sets for each schedule, as (name, build(lr_scheduler, opt))."""
    r = random.Random(seed)
    cases = []

    def add(name, make):
        cases.append((name, make))

    for _ in range(n):
        step, gamma = r.randint(1, 7), round(r.uniform(0.2, 0.95), 3)
        add("StepLR", lambda m, o, a=(step, gamma): m.StepLR(o, step_size=a[0], gamma=a[1]))
        ms = sorted(r.sample(range(1, 30), 3)) + [r.randint(1, 30)]  # (a milestone may repeat)
        add("MultiStepLR", lambda m, o, a=(ms, gamma): m.MultiStepLR(o, milestones=a[0], gamma=a[1]))
        f, it = round(r.uniform(0.05, 1.0), 3), r.randint(0, 12)
        add("ConstantLR", lambda m, o, a=(f, it): m.ConstantLR(o, factor=a[0], total_iters=a[1]))
        s, end, it2 = round(r.uniform(0.05, 1.0), 3), round(r.uniform(0.0, 1.0), 3), r.randint(1, 15)
        add(
            "LinearLR",
            lambda m, o, a=(s, end, it2): m.LinearLR(o, start_factor=a[0], end_factor=a[1], total_iters=a[2]),
        )
        add("ExponentialLR", lambda m, o, g=gamma: m.ExponentialLR(o, gamma=g))
        pw, it3 = round(r.uniform(0.5, 3.0), 3), r.randint(1, 30)
        add("PolynomialLR", lambda m, o, a=(it3, pw): m.PolynomialLR(o, total_iters=a[0], power=a[1]))
        tm, em = r.randint(1, 15), round(r.uniform(0.0, 0.05), 4)
        add("CosineAnnealingLR", lambda m, o, a=(tm, em): m.CosineAnnealingLR(o, T_max=a[0], eta_min=a[1]))
        t0, tmul = r.randint(1, 8), r.randint(1, 3)
        add("CosineAnnealingWarmRestarts",
            lambda m, o, a=(t0, tmul, em): m.CosineAnnealingWarmRestarts(o, T_0=a[0], T_mult=a[1], eta_min=a[2]))  # fmt: skip
        k = round(r.uniform(0.8, 0.99), 3)
        add("LambdaLR", lambda m, o, k=k: m.LambdaLR(o, [lambda e: k**e, lambda e: 1.0 / (1 + e)]))
        add("MultiplicativeLR", lambda m, o, k=k: m.MultiplicativeLR(o, lambda e: k + 0.01 * (e % 3)))
        mode = r.choice(["triangular", "triangular2", "exp_range"])
        up, down = r.randint(1, 8), r.choice([None, r.randint(1, 8)])
        add("CyclicLR",
            lambda m, o, a=(mode, up, down, k): m.CyclicLR(o, base_lr=[0.01, 0.02], max_lr=0.3, step_size_up=a[1],
                                                        step_size_down=a[2], mode=a[0], gamma=a[3],
                                                        base_momentum=0.7, max_momentum=0.95))  # fmt: skip
        pct, three, strat = round(r.uniform(0.1, 0.6), 3), r.random() < 0.5, r.choice(["cos", "linear"])
        add("OneCycleLR",
            lambda m, o, a=(pct, three, strat): m.OneCycleLR(o, max_lr=[0.5, 1.0], total_steps=STEPS + 5,
                                                          pct_start=a[0], three_phase=a[1], anneal_strategy=a[2],
                                                          div_factor=10.0, final_div_factor=100.0))  # fmt: skip
        add("SequentialLR",
            lambda m, o, a=(s, it2, gamma, tm): m.SequentialLR(
                o, [m.LinearLR(o, start_factor=a[0], total_iters=a[1]), m.ExponentialLR(o, gamma=a[2]),
                    m.CosineAnnealingLR(o, T_max=a[3])], milestones=[a[1], a[1] + 7]))  # fmt: skip
        add("ChainedScheduler",
            lambda m, o, a=(f, it, gamma, step): m.ChainedScheduler(
                [m.ConstantLR(o, factor=a[0], total_iters=a[1]), m.StepLR(o, step_size=a[3], gamma=a[2])]))  # fmt: skip
    return cases


CASES = _rand_cases(0, 3)
IDS = [f"{name}-{i // 15}" for i, (name, _) in enumerate(CASES)]


def _opt(lib, kind="SGD"):
    """Two param groups (lr 0.1 and 0.5) of SGD with momentum, or of Adam (CyclicLR and
    OneCycleLR cycle its first beta)."""
    if lib is torch:
        ps = [torch.zeros(2, requires_grad=True), torch.zeros(1, requires_grad=True)]
        mod = torch.optim
    else:
        ps, mod = [Parameter(np.zeros(2)), Parameter(np.zeros(1))], optim
    groups = [{"params": ps[:1]}, {"params": ps[1:], "lr": 0.5}]
    opt = mod.SGD(groups, lr=0.1, momentum=0.9) if kind == "SGD" else mod.Adam(groups, lr=0.1)
    return ps, opt


def _train_step(lib, ps, opt):
    for p in ps:
        p.grad = torch.ones_like(p) if lib is torch else Tensor(np.ones(p.shape))
    opt.step()


def _same(o_opt, t_opt, o_sched, t_sched):
    assert o_sched.get_last_lr() == pytest.approx(t_sched.get_last_lr(), rel=1e-12, abs=1e-15)
    for og, tg in zip(o_opt.param_groups, t_opt.param_groups):
        assert og["lr"] == pytest.approx(tg["lr"], rel=1e-12, abs=1e-15)
        for k in ("momentum", "betas"):
            if k in tg:
                assert og[k] == pytest.approx(tg[k], rel=1e-12), k


@contextlib.contextmanager
def _quiet():
    """PyTorch warns where a schedule steps before its optimizer; both sides run alike."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


@pytest.mark.parametrize("kind", ["SGD", "Adam"])
@pytest.mark.parametrize("name,make", CASES, ids=IDS)
def test_rates_match_torch_for_40_steps(name, make, kind):
    (tps, topt), (ops, oopt) = _opt(torch, kind), _opt(None, kind)
    with _quiet():
        ts, os_ = make(torch.optim.lr_scheduler, topt), make(optim.lr_scheduler, oopt)
        for _ in range(STEPS):
            _same(oopt, topt, os_, ts)
            _train_step(torch, tps, topt)
            _train_step(None, ops, oopt)
            ts.step()
            os_.step()
    _same(oopt, topt, os_, ts)
    for a, b in zip(ops, tps):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-6)


def _state_keys(sd):
    # (flags PyTorch sets on the instance while it steps; not state)
    return set(sd) - {"_get_lr_called_within_step", "_is_initial", "_scale_fn_ref"}


@pytest.mark.parametrize("order", ["schedule-first", "optimizer-first"])
@pytest.mark.parametrize("name,make", CASES[:15], ids=IDS[:15])
def test_state_dicts_resume_mid_way_in_either_order(name, make, order):
    (tps, topt), (ops, oopt) = _opt(torch), _opt(None)
    with _quiet():
        ts, os_ = make(torch.optim.lr_scheduler, topt), make(optim.lr_scheduler, oopt)
        for _ in range(13):
            _train_step(torch, tps, topt)
            _train_step(None, ops, oopt)
            ts.step()
            os_.step()
        tsd, osd = ts.state_dict(), os_.state_dict()
        assert _state_keys(osd) == _state_keys(tsd)
        for k in ("last_epoch", "base_lrs", "_last_lr", "_step_count"):
            if k in tsd:
                assert osd[k] == pytest.approx(tsd[k]), k

        def resume(lib, sched_mod, opt_sd, sched_sd):
            ps, opt = _opt(lib)
            for g in opt.param_groups:
                g["lr"] = 7.0  # (what the optimizer had before loading)
            if order == "schedule-first":  # PyTorch's advice: build the schedule, then load both
                sched = make(sched_mod, opt)
                opt.load_state_dict(opt_sd)
            else:  # the optimizer's state (with initial_lr) first; the schedule's construction step then
                # changes the rates it loaded, and loading the schedule's state leaves them (PyTorch's way)
                opt.load_state_dict(opt_sd)
                sched = make(sched_mod, opt)
            sched.load_state_dict(sched_sd)
            return ps, opt, sched

        tps, topt, ts = resume(torch, torch.optim.lr_scheduler, topt.state_dict(), tsd)
        ps, opt, sched = resume(None, optim.lr_scheduler, oopt.state_dict(), osd)
        for _ in range(STEPS - 13):
            _same(opt, topt, sched, ts)
            _train_step(torch, tps, topt)
            _train_step(None, ps, opt)
            ts.step()
            sched.step()


RESUMABLE = [c for c in CASES[:15] if c[0] not in ("SequentialLR", "ChainedScheduler")]


@pytest.mark.parametrize("name,make", RESUMABLE, ids=[f"{n}" for n, _ in RESUMABLE])
def test_last_epoch_resumes_as_torch(name, make):
    """A schedule built with ``last_epoch=k`` over an optimizer whose state was loaded."""
    runs = []
    for lib, mod in ((torch, torch.optim.lr_scheduler), (None, optim.lr_scheduler)):
        ps, opt = _opt(lib)
        with _quiet():
            s = make(mod, opt)
            for _ in range(9):
                _train_step(lib, ps, opt)
                s.step()
            sd = opt.state_dict()
            ps2, opt2 = _opt(lib)
            opt2.load_state_dict(sd)
            s2 = _with_last_epoch(mod, make, opt2, 9)
            lrs = []
            for _ in range(12):
                lrs.append([g["lr"] for g in opt2.param_groups])
                _train_step(lib, ps2, opt2)
                s2.step()
        runs.append(lrs)
    np.testing.assert_allclose(runs[1], runs[0], rtol=1e-12, atol=1e-15)


def _with_last_epoch(mod, make, opt, last_epoch):
    """``make``'s schedule built with ``last_epoch`` (its class called again with it)."""

    class _Resume:
        def __getattr__(self, name):
            cls = getattr(mod, name)
            return lambda *a, **k: cls(*a, **k, last_epoch=last_epoch)

    return make(_Resume(), opt)


def test_step_with_epochs_uses_the_closed_forms_as_torch():
    for name, kw in [("StepLR", dict(step_size=3, gamma=0.5)), ("MultiStepLR", dict(milestones=[2, 5, 5])),
                     ("ConstantLR", dict(factor=0.5, total_iters=4)), ("LinearLR", dict(total_iters=6)),
                     ("ExponentialLR", dict(gamma=0.9)), ("PolynomialLR", dict(total_iters=8, power=2.0)),
                     ("CosineAnnealingLR", dict(T_max=7)), ("CosineAnnealingWarmRestarts", dict(T_0=3, T_mult=2)),
                     ("LambdaLR", dict(lr_lambda=lambda e: 0.9**e))]:  # fmt: skip
        (_, topt), (_, oopt) = _opt(torch), _opt(None)
        ts = getattr(torch.optim.lr_scheduler, name)(topt, **kw)
        os_ = getattr(optim.lr_scheduler, name)(oopt, **kw)
        for epoch in [4, 1, 9, 9, 0, 15, 2.5] if name == "CosineAnnealingWarmRestarts" else [4, 1, 9, 9, 0, 15, 3]:
            with warnings.catch_warnings(record=True) as theirs:
                warnings.simplefilter("always")
                ts.step(epoch)
            with warnings.catch_warnings(record=True) as ours:
                warnings.simplefilter("always")
                os_.step(epoch)
            deprecated = [w for w in theirs if "epoch parameter" in str(w.message)]
            assert len([w for w in ours if "epoch parameter" in str(w.message)]) == len(deprecated), name
            _same(oopt, topt, os_, ts)


def _metrics(seed, n=STEPS):
    r = random.Random(seed)
    v, out = 1.0, []
    for _ in range(n):
        if r.random() < 0.4:
            v *= r.uniform(0.9, 1.0)  # an improvement, often too small for the threshold
        out.append(v + r.uniform(-0.01, 0.01) * (r.random() < 0.3))
    return out


@pytest.mark.parametrize(
    "kw",
    [dict(), dict(mode="max", factor=0.5, patience=2), dict(threshold_mode="abs", threshold=0.01, patience=1),
     dict(patience=0, cooldown=2, min_lr=[0.01, 0.2]), dict(mode="max", threshold_mode="abs", min_lr=0.05, eps=1e-3,
                                                             patience=3, cooldown=1)],
    ids=["defaults", "max", "abs", "cooldown-minlrs", "max-abs"],
)  # fmt: skip
def test_reduce_on_plateau_matches_torch(kw):
    (tps, topt), (ops, oopt) = _opt(torch), _opt(None)
    ts = torch.optim.lr_scheduler.ReduceLROnPlateau(topt, **kw)
    os_ = optim.lr_scheduler.ReduceLROnPlateau(oopt, **kw)
    metrics = _metrics(1)
    for i, m in enumerate(metrics):
        _train_step(torch, tps, topt)
        _train_step(None, ops, oopt)
        ts.step(m)
        os_.step(Tensor(np.float64(m)) if i % 2 else m)  # (a 0-d tensor, as a loss is)
        _same(oopt, topt, os_, ts)
        if i == 20:  # resume from the state dict
            sd = os_.state_dict()
            assert _state_keys(sd) == _state_keys(ts.state_dict())
            os_ = optim.lr_scheduler.ReduceLROnPlateau(oopt, **kw)
            os_.load_state_dict(sd)


BAD = [
    ("ConstantLR", dict(factor=1.5)),
    ("LinearLR", dict(start_factor=0.0)),
    ("LinearLR", dict(end_factor=1.5)),
    ("CosineAnnealingWarmRestarts", dict(T_0=0)),
    ("CosineAnnealingWarmRestarts", dict(T_0=2.0)),
    ("CosineAnnealingWarmRestarts", dict(T_0=2, T_mult=0)),
    ("CosineAnnealingWarmRestarts", dict(T_0=2, eta_min="0")),
    ("OneCycleLR", dict(max_lr=1.0)),
    ("OneCycleLR", dict(max_lr=1.0, total_steps=0)),
    ("OneCycleLR", dict(max_lr=1.0, total_steps=10, pct_start=1.5)),
    ("OneCycleLR", dict(max_lr=1.0, total_steps=10, pct_start=0)),
    ("OneCycleLR", dict(max_lr=1.0, total_steps=10, anneal_strategy="exp")),
    ("OneCycleLR", dict(max_lr=[1.0, 2.0, 3.0], total_steps=10)),
    ("CyclicLR", dict(base_lr=0.1, max_lr=1.0, mode="square")),
    ("CyclicLR", dict(base_lr=[0.1], max_lr=1.0)),
    ("ReduceLROnPlateau", dict(factor=1.0)),
    ("ReduceLROnPlateau", dict(mode="up")),
    ("ReduceLROnPlateau", dict(threshold_mode="relative")),
    ("ReduceLROnPlateau", dict(min_lr=[0.1])),
    ("LambdaLR", dict(lr_lambda=[lambda e: 1.0])),
    ("MultiplicativeLR", dict(lr_lambda=3)),
]


@pytest.mark.parametrize("name,kw", BAD, ids=[f"{n}-{','.join(kw)}" for n, kw in BAD])
def test_bad_arguments_raise_torchs_classes(name, kw):
    (_, topt), (_, oopt) = _opt(torch), _opt(None)
    with pytest.raises(Exception) as theirs:
        getattr(torch.optim.lr_scheduler, name)(topt, **kw)
    with pytest.raises(type(theirs.value), match=name):
        getattr(optim.lr_scheduler, name)(oopt, **kw)


def test_composites_refuse_what_torch_refuses():
    (_, topt), (_, oopt) = _opt(torch), _opt(None)
    (_, topt2), (_, oopt2) = _opt(torch), _opt(None)
    for mod, o1, o2 in ((torch.optim.lr_scheduler, topt, topt2), (optim.lr_scheduler, oopt, oopt2)):
        a, b = mod.ExponentialLR(o1, 0.9), mod.ExponentialLR(o2, 0.9)
        with pytest.raises(ValueError):
            mod.SequentialLR(o1, [a, b], milestones=[3])
        with pytest.raises(ValueError):
            mod.SequentialLR(o1, [a], milestones=[3])
        with pytest.raises(ValueError):
            mod.ChainedScheduler([a, mod.ReduceLROnPlateau(o1)])
        with pytest.raises(ValueError):
            mod.ChainedScheduler([])


@pytest.mark.parametrize("optimizer_first", [True, False])
def test_stepping_the_schedule_first_warns_as_torch(optimizer_first):
    counts = []
    for lib, mod in ((torch, torch.optim.lr_scheduler), (None, optim.lr_scheduler)):
        ps, opt = _opt(lib)
        sched = mod.StepLR(opt, step_size=2)
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            for _ in range(3):
                if optimizer_first:
                    _train_step(lib, ps, opt)
                sched.step()
        counts.append(len([w for w in seen if "optimizer.step()" in str(w.message)]))
    assert counts[1] == counts[0] == (0 if optimizer_first else 1)
