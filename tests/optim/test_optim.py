"""Optimizers against hand-written NumPy references of their update rules, on every device;
state that follows the parameters' device; schedules; gradient clipping."""

from __future__ import annotations

import math

import numpy as np
import pytest

import tinygrad_attn as tga
from tinygrad_attn import Tensor
from tinygrad_attn.models import Linear, Parameter
from tinygrad_attn.optim import SGD, Adam, AdamW, LambdaLR, NoamSchedule, clip_grad_norm_, noam_rate

STEPS = 5


# -- NumPy references, written from the update rules (PyTorch's documentation) ------------
def ref_sgd(p, grad_fn, steps, lr, momentum=0.0, weight_decay=0.0, dampening=0.0, nesterov=False):
    buf = None
    for _ in range(steps):
        d = grad_fn(p) + weight_decay * p
        if momentum:
            buf = d.copy() if buf is None else momentum * buf + (1 - dampening) * d
            d = d + momentum * buf if nesterov else buf
        p = p - lr * d
    return p


def ref_adam(p, grad_fn, steps, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0, decoupled=False):
    b1, b2 = betas
    m = v = np.zeros_like(p)
    for t in range(1, steps + 1):
        g = grad_fn(p)
        if decoupled:
            p = p * (1 - lr * weight_decay)
        else:
            g = g + weight_decay * p
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        m_hat, v_hat = m / (1 - b1**t), v / (1 - b2**t)
        p = p - lr * m_hat / (np.sqrt(v_hat) + eps)
    return p


# A loss with a known gradient: f(p) = sum(a p^2) / 2 + sum(b p), f'(p) = a p + b.
def _problem(rng, shape=(3, 4)):
    a = rng.uniform(0.5, 2.0, shape)
    b = rng.standard_normal(shape)
    return a, b, (lambda p: a * p + b)


def _run(opt_cls, kwargs, p0, a, b, device, steps=STEPS):
    p = Parameter(p0.copy(), device=device)
    ta, tb = Tensor(a, device=device), Tensor(b, device=device)
    opt = opt_cls([p], **kwargs)
    for _ in range(steps):
        opt.zero_grad()
        ((ta * p * p).sum() * 0.5 + (tb * p).sum()).backward()
        opt.step()
    return p, opt


SGD_CASES = [
    dict(lr=0.1),
    dict(lr=0.05, momentum=0.9),
    dict(lr=0.05, momentum=0.9, weight_decay=0.1),
    dict(lr=0.05, momentum=0.8, dampening=0.3),
    dict(lr=0.05, momentum=0.9, nesterov=True),
]


@pytest.mark.parametrize("kw", SGD_CASES, ids=lambda kw: ",".join(f"{k}={v}" for k, v in kw.items()))
def test_sgd_matches_reference(rng, device, kw):
    a, b, grad = _problem(rng)
    p0 = rng.standard_normal(a.shape)
    p, _ = _run(SGD, kw, p0, a, b, device)
    np.testing.assert_allclose(p.detach().numpy(), ref_sgd(p0, grad, STEPS, **kw), rtol=1e-6, atol=1e-6)
    assert p.device == tga.get_device(device).name


ADAM_CASES = [
    dict(lr=0.01),
    dict(lr=0.02, betas=(0.8, 0.99), eps=1e-6),
    dict(lr=0.01, weight_decay=0.1),
]


@pytest.mark.parametrize("kw", ADAM_CASES, ids=lambda kw: ",".join(f"{k}={v}" for k, v in kw.items()))
def test_adam_matches_reference(rng, device, kw):
    a, b, grad = _problem(rng)
    p0 = rng.standard_normal(a.shape)
    p, opt = _run(Adam, kw, p0, a, b, device)
    np.testing.assert_allclose(p.detach().numpy(), ref_adam(p0, grad, STEPS, **kw), rtol=1e-6, atol=1e-6)
    st = opt.state[p]
    assert st["step"] == STEPS
    assert st["exp_avg"].device == st["exp_avg_sq"].device == p.device  # state on the parameter's device


@pytest.mark.parametrize("kw", [dict(lr=0.01), dict(lr=0.01, weight_decay=0.5), dict(lr=0.03, weight_decay=0.0)])
def test_adamw_matches_reference(rng, device, kw):
    a, b, grad = _problem(rng)
    p0 = rng.standard_normal(a.shape)
    p, _ = _run(AdamW, kw, p0, a, b, device)
    wd = kw.get("weight_decay", 0.01)  # AdamW's default
    ref = ref_adam(p0, grad, STEPS, lr=kw["lr"], weight_decay=wd, decoupled=True)
    np.testing.assert_allclose(p.detach().numpy(), ref, rtol=1e-6, atol=1e-6)


def test_adam_and_adamw_differ_with_weight_decay(rng):
    a, b, _ = _problem(rng)
    p0 = rng.standard_normal(a.shape)
    pa, _ = _run(Adam, dict(lr=0.01, weight_decay=0.5), p0, a, b, "cpu")
    pw, _ = _run(AdamW, dict(lr=0.01, weight_decay=0.5), p0, a, b, "cpu")
    assert np.abs(pa.detach().numpy() - pw.detach().numpy()).max() > 1e-4


@pytest.mark.parametrize("opt_cls", [SGD, Adam, AdamW])
def test_float32_parameters_stay_float32(rng, device, opt_cls):
    lin = Linear(3, 2).to(device)
    opt = opt_cls(lin.parameters(), lr=0.1, **({"momentum": 0.9} if opt_cls is SGD else {}))
    for _ in range(2):
        lin(Tensor(rng.standard_normal((4, 3)).astype(np.float32), device=device)).sum().backward()
        opt.step()
        opt.zero_grad()
    assert all(p.dtype == np.float32 and p.grad is None for p in lin.parameters())
    assert all(t.dtype == np.float32 for st in opt.state.values() for t in st.values() if isinstance(t, Tensor))


@pytest.mark.parametrize("opt_cls, ref", [(SGD, ref_sgd), (Adam, ref_adam)])
def test_zero_dim_parameter(device, opt_cls, ref):
    p = Parameter(np.array(1.5), device=device)
    opt = opt_cls([p], lr=0.1)
    for _ in range(3):
        (p * p).backward()  # d/dp p^2 = 2p
        opt.step()
        opt.zero_grad()
    assert p.shape == () and type(p._data) is type(Tensor(np.zeros(1), device=device)._data)  # an array, not a scalar
    np.testing.assert_allclose(p.detach().numpy(), ref(np.array(1.5), lambda q: 2 * q, 3, lr=0.1), rtol=1e-12)


@pytest.mark.parametrize("src, dst", [("cpu", "array_api_strict:device1"), ("array_api_strict:device1", "cpu")])
def test_state_follows_module_to(rng, src, dst):
    a, b, grad = _problem(rng, (2, 3))
    p0 = rng.standard_normal((2, 3))
    lin = Linear(3, 2, bias=False).to(src).double()
    lin.weight.data = lin.weight._dev.asarray(p0.copy())  # (its own memory: the steps write it in place)
    opt = Adam(lin.parameters(), lr=0.05)
    for step in range(4):
        if step == 2:
            lin.to(dst)
        w = lin.weight
        ta, tb = Tensor(a, device=w.device), Tensor(b, device=w.device)
        ((ta * w * w).sum() * 0.5 + (tb * w).sum()).backward()
        opt.step()
        opt.zero_grad()
        st = opt.state[w]
        where = tga.get_device(src if step < 2 else dst).name
        assert st["exp_avg"].device == st["exp_avg_sq"].device == w.device == where
    np.testing.assert_allclose(lin.weight.detach().numpy(), ref_adam(p0, grad, 4, lr=0.05), rtol=1e-6, atol=1e-6)


def test_param_groups_have_their_own_hyperparameters(rng):
    p1 = Parameter(np.ones(2))
    p2 = Parameter(np.ones(2))
    opt = SGD([{"params": [p1]}, {"params": [p2], "lr": 0.5}], lr=0.1)
    p1.grad = Tensor(np.ones(2))
    p2.grad = Tensor(np.ones(2))
    opt.step()
    np.testing.assert_allclose(p1.detach().numpy(), [0.9, 0.9])
    np.testing.assert_allclose(p2.detach().numpy(), [0.5, 0.5])
    opt.zero_grad()
    assert p1.grad is None and p2.grad is None


def test_lr_property_sets_every_group():
    p1, p2 = Parameter(np.ones(1)), Parameter(np.ones(1))
    opt = SGD([{"params": [p1]}, {"params": [p2], "lr": 0.5}], lr=0.1)
    assert opt.lr == 0.1
    opt.lr = 0.25
    assert [g["lr"] for g in opt.param_groups] == [0.25, 0.25]
    p1.grad, p2.grad = Tensor(np.ones(1)), Tensor(np.ones(1))
    opt.step()
    np.testing.assert_allclose([p1.item(), p2.item()], [0.75, 0.75])


def test_parameters_without_grad_are_left_alone():
    p, q = Parameter(np.ones(2)), Parameter(np.ones(2))
    opt = Adam([p, q], lr=0.1)
    p.grad = Tensor(np.ones(2))
    opt.step()
    np.testing.assert_array_equal(q.detach().numpy(), [1.0, 1.0])
    assert q not in opt.state and p in opt.state


def test_step_records_no_graph():
    p = Parameter(np.ones(2))
    p.grad = Tensor(np.ones(2))
    SGD([p], lr=0.1).step()
    assert p.is_leaf and p.requires_grad


def test_bad_arguments_are_named():
    p = Parameter(np.ones(2))
    with pytest.raises(ValueError, match="empty parameter list"):
        SGD([], lr=0.1)
    with pytest.raises(ValueError, match="Adam: Invalid learning rate: -1.0"):
        Adam([p], lr=-1.0)
    with pytest.raises(ValueError, match="Invalid beta parameter at index 1"):
        Adam([p], betas=(0.9, 1.0))
    with pytest.raises(ValueError, match="more than one parameter group"):
        SGD([{"params": [p]}, {"params": [p]}], lr=0.1)
    with pytest.raises(TypeError, match="parameter 1 is a int"):
        SGD([p, 3], lr=0.1)


# -- schedules -------------------------------------------------------------------------------
def test_noam_rate_is_the_papers_formula():
    # lr = d^-0.5 * min(step^-0.5, step * warmup^-1.5), at d=512, warmup=4000 (section 5.3)
    assert noam_rate(1, 512, 4000) == pytest.approx(512**-0.5 * 4000**-1.5)
    assert noam_rate(4000, 512, 4000) == pytest.approx(1 / math.sqrt(512 * 4000))  # the peak, 6.99e-4
    assert noam_rate(16000, 512, 4000, factor=2.0) == pytest.approx(2 / math.sqrt(512 * 16000))
    rates = [noam_rate(s, 512, 4000) for s in range(1, 12000, 50)]
    peak = int(np.argmax(rates))
    assert all(np.diff(rates[: peak + 1]) > 0) and all(np.diff(rates[peak:]) < 0)
    assert abs(peak * 50 + 1 - 4000) <= 50


def test_noam_schedule_drives_the_optimizer():
    p = Parameter(np.zeros(1))
    opt = SGD([p], lr=123.0)  # overwritten by the schedule
    sched = NoamSchedule(opt, d_model=16, warmup=3, factor=10.0)
    used = []
    for _ in range(5):
        used.append(opt.param_groups[0]["lr"])
        p.grad = Tensor(np.ones(1))
        opt.step()
        sched.step()
    expect = [10.0 * 16**-0.5 * min(k**-0.5, k * 3**-1.5) for k in range(1, 6)]
    np.testing.assert_allclose(used, expect, rtol=1e-12)
    np.testing.assert_allclose(p.detach().numpy(), [-sum(expect)], rtol=1e-12)
    assert sched.get_last_lr() == [opt.param_groups[0]["lr"]]


@pytest.mark.filterwarnings("ignore:.*before optimizer.step")  # (the test steps only the schedule)
def test_lambda_lr_scales_the_initial_lr():
    p = Parameter(np.zeros(1))
    opt = Adam([{"params": [p]}], lr=0.2)
    sched = LambdaLR(opt, lambda s: 0.5**s)
    assert opt.param_groups[0]["lr"] == 0.2
    sched.step()
    sched.step()
    assert opt.param_groups[0]["lr"] == pytest.approx(0.05)


# -- gradient clipping -------------------------------------------------------------------------
def test_clip_grad_norm(rng, device):
    ps = [Parameter(np.zeros(s), device=device) for s in ((3, 2), (4,))]
    gs = [rng.standard_normal(p.shape) for p in ps]
    for p, g in zip(ps, gs):
        p.grad = Tensor(g, device=device)
    total = math.sqrt(sum((g**2).sum() for g in gs))
    assert float(clip_grad_norm_(ps, 100.0)) == pytest.approx(total)  # (a 0-d tensor, as PyTorch's)
    for p, g in zip(ps, gs):  # under the limit: untouched
        np.testing.assert_allclose(p.grad.detach().numpy(), g)
    assert float(clip_grad_norm_(ps, 0.5)) == pytest.approx(total)
    for p, g in zip(ps, gs):  # over: all scaled by one factor to norm 0.5
        np.testing.assert_allclose(p.grad.detach().numpy(), g * 0.5 / (total + 1e-6), rtol=1e-9)
        assert p.grad.device == p.device
    assert math.sqrt(sum((p.grad.detach().numpy() ** 2).sum() for p in ps)) == pytest.approx(0.5, rel=1e-5)


def test_clip_grad_norm_inf_and_empty():
    p = Parameter(np.zeros(3))
    assert clip_grad_norm_([p], 1.0) == 0.0
    p.grad = Tensor(np.array([1.0, -4.0, 2.0]))
    assert clip_grad_norm_(p, 2.0, norm_type=math.inf) == 4.0
    np.testing.assert_allclose(p.grad.detach().numpy(), np.array([1.0, -4.0, 2.0]) * 2.0 / (4.0 + 1e-6))
    p.grad = Tensor(np.array([np.inf, 0.0, 0.0]))
    with pytest.raises(RuntimeError, match="total norm"):
        clip_grad_norm_(p, 1.0, error_if_nonfinite=True)


# -- against torch.optim, and state dicts laid out as PyTorch's ------------------------------
TORCH_CASES = [
    ("SGD", dict(lr=0.1)),
    ("SGD", dict(lr=0.05, momentum=0.9, dampening=0.2, weight_decay=0.1)),
    ("SGD", dict(lr=0.05, momentum=0.9, nesterov=True, weight_decay=0.01)),
    ("Adam", dict(lr=0.05, betas=(0.8, 0.9), weight_decay=0.1)),
    ("Adam", dict(lr=0.05, amsgrad=True)),
    ("AdamW", dict(lr=0.05, weight_decay=0.2)),
    ("AdamW", dict(lr=0.05, weight_decay=0.2, amsgrad=True)),
]
_OURS = {"SGD": SGD, "Adam": Adam, "AdamW": AdamW}


def _two_groups(make, cls, kw, params):
    """Two param groups, the second with its own lr (and no weight decay)."""
    return make[cls]([{"params": params[:1]}, {"params": params[1:], "lr": kw["lr"] * 2, "weight_decay": 0.0}], **kw)


def _torch_loss(torch, ps, xs):
    return sum(((x * p) ** 2).sum() + (x * p).sum() for p, x in zip(ps, xs))


@pytest.mark.parametrize("name,kw", TORCH_CASES, ids=lambda v: v if isinstance(v, str) else ",".join(map(str, v)))
def test_matches_torch_optim_with_groups_and_continues_from_its_state_dict(rng, name, kw):
    torch = pytest.importorskip("torch")
    shapes = [(3, 4), (5,)]
    p0 = [rng.standard_normal(s) for s in shapes]
    xs = [rng.standard_normal(s) for s in shapes]
    tp = [torch.tensor(p, requires_grad=True) for p in p0]
    tx = [torch.tensor(x) for x in xs]
    ours = [Parameter(p.copy()) for p in p0]
    ox = [Tensor(x) for x in xs]
    topt = _two_groups(vars(torch.optim), name, kw, tp)
    oopt = _two_groups(_OURS, name, kw, ours)

    def steps(n, opt, ps, xs, loss):
        for _ in range(n):
            opt.zero_grad()
            loss(ps, xs).backward()
            opt.step()

    steps(4, topt, tp, tx, lambda ps, xs: _torch_loss(torch, ps, xs))
    steps(4, oopt, ours, ox, lambda ps, xs: _torch_loss(None, ps, xs))
    for a, b in zip(ours, tp):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-12, atol=1e-12)
    # The layout is PyTorch's: same groups (params by index), same state names, same values.
    ts, os_ = topt.state_dict(), oopt.state_dict()
    assert [g["params"] for g in os_["param_groups"]] == [g["params"] for g in ts["param_groups"]] == [[0], [1]]
    # (momentum-free SGD keeps no state; some PyTorch versions list {"momentum_buffer": None})
    kept = sorted(i for i, st in ts["state"].items() if any(v is not None for v in st.values()))
    assert sorted(os_["state"]) == kept == ([] if name == "SGD" and "momentum" not in kw else [0, 1])
    for i in kept:
        assert set(ts["state"][i]) == set(os_["state"][i])
        for k, v in ts["state"][i].items():
            ov = os_["state"][i][k]
            if v is None:
                assert ov is None
                continue
            np.testing.assert_allclose(
                ov.detach().numpy() if isinstance(ov, Tensor) else ov, v.detach().numpy(), rtol=1e-12
            )
    for tg, og in zip(ts["param_groups"], os_["param_groups"]):
        for k in og:
            if k != "params":
                assert og[k] == pytest.approx(tg[k]), k
    # PyTorch's state dict (arrays as NumPy) loads into a fresh optimizer over fresh parameters,
    # and both continue identically.
    as_numpy = {
        "state": {i: {k: (v.detach().numpy() if torch.is_tensor(v) else v) for k, v in st.items()}
                  for i, st in ts["state"].items()},
        "param_groups": [dict(g) for g in ts["param_groups"]],
    }  # fmt: skip
    fresh = [Parameter(b.detach().numpy().copy()) for b in tp]
    fopt = _two_groups(_OURS, name, dict(kw, lr=123.0), fresh)  # hyperparameters come from the dict
    fopt.load_state_dict(as_numpy)
    assert [g["lr"] for g in fopt.param_groups] == [kw["lr"], kw["lr"] * 2]
    steps(3, topt, tp, tx, lambda ps, xs: _torch_loss(torch, ps, xs))
    steps(3, fopt, fresh, ox, lambda ps, xs: _torch_loss(None, ps, xs))
    for a, b in zip(fresh, tp):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-12, atol=1e-12)


def test_state_dict_round_trips_into_an_optimizer_on_another_device(rng, device):
    p0 = rng.standard_normal((2, 3))
    grads = [rng.standard_normal((2, 3)) for _ in range(4)]
    a = Parameter(p0.copy())
    b = Parameter(p0.copy(), device=device)
    oa, ob = Adam([a], lr=0.1), Adam([b], lr=0.7)
    for g in grads[:2]:
        a.grad = Tensor(g)
        oa.step()
    b.data = b._dev.asarray(a.detach().numpy())
    ob.load_state_dict(oa.state_dict())
    st = ob.state[b]
    assert st["step"] == 2 and st["exp_avg"].device == b.device and st["exp_avg"] is not oa.state[a]["exp_avg"]
    for g in grads[2:]:
        a.grad, b.grad = Tensor(g), Tensor(g, device=device)
        oa.step()
        ob.step()
    np.testing.assert_allclose(b.detach().numpy(), a.detach().numpy(), rtol=1e-12)


def test_state_dict_that_does_not_fit_is_refused_and_changes_nothing():
    p, q = Parameter(np.ones(2)), Parameter(np.ones(3))
    opt = SGD([p, q], lr=0.1, momentum=0.9)
    p.grad, q.grad = Tensor(np.ones(2)), Tensor(np.ones(3))
    opt.step()
    good = opt.state_dict()
    other = SGD([Parameter(np.ones(2))], lr=0.1, momentum=0.9)
    with pytest.raises(ValueError, match=r"param group 0 has 2 parameter\(s\) in the state dict but 1 here"):
        other.load_state_dict(good)
    bad = {"state": {0: good["state"][0], 1: {"momentum_buffer": np.ones(4)}},
           "param_groups": [dict(good["param_groups"][0], lr=5.0)]}  # fmt: skip
    fresh = SGD([Parameter(np.ones(2)), Parameter(np.ones(3))], lr=0.1, momentum=0.9)
    with pytest.raises(ValueError, match=r"state\[1\]\['momentum_buffer'\] has shape \(4,\).*\(3,\)"):
        fresh.load_state_dict(bad)
    assert fresh.lr == 0.1 and not fresh.state
    three_groups = {"state": {}, "param_groups": [{"params": [0]}, {"params": [1]}, {"params": [2]}]}
    with pytest.raises(ValueError, match="the state dict has 3 param group"):
        SGD([{"params": [p]}, {"params": [q]}], lr=0.1).load_state_dict(three_groups)


def test_add_param_group_then_state_dict_numbers_across_groups():
    p, q, r = (Parameter(np.ones(1)) for _ in range(3))
    opt = Adam([p, q], lr=0.1)
    opt.add_param_group({"params": r, "lr": 0.01})
    sd = opt.state_dict()
    assert [g["params"] for g in sd["param_groups"]] == [[0, 1], [2]]
    assert sd["param_groups"][1]["lr"] == 0.01 and sd["param_groups"][1]["betas"] == (0.9, 0.999)


# -- the flat update: a group's parameters and state as one array each ------------------------
FLAT_CASES = [
    (SGD, dict(lr=0.1)),
    (SGD, dict(lr=0.05, momentum=0.9, dampening=0.2, weight_decay=0.1)),
    (SGD, dict(lr=0.05, momentum=0.9, nesterov=True, weight_decay=0.01)),
    (Adam, dict(lr=0.05, betas=(0.8, 0.9), weight_decay=0.1)),
    (Adam, dict(lr=0.05, amsgrad=True)),
    (AdamW, dict(lr=0.05, weight_decay=0.2)),
    (AdamW, dict(lr=0.05, weight_decay=0.2, amsgrad=True)),
]
_FLAT_IDS = [f"{cls.__name__}-" + ",".join(f"{k}={v}" for k, v in kw.items()) for cls, kw in FLAT_CASES]
_SHAPES = [(3, 4), (5,), (), (2, 1, 3)]


def _scripted_run(cls, kw, device, dtype, foreach):
    """Steps through what users do between steps: a parameter without a gradient, one whose
    array is replaced, a group added, the state reloaded. Returns the parameters' values
    and the state dict after each step, as NumPy."""
    rng = np.random.default_rng(1)
    ps = [Parameter(rng.standard_normal(s).astype(dtype), device=device) for s in _SHAPES]
    extra = Parameter(rng.standard_normal((4,)).astype(dtype), device=device)
    xs = [Tensor(rng.standard_normal(s).astype(dtype), device=device) for s in _SHAPES + [(4,)]]
    groups = [{"params": ps[:3]}, {"params": ps[3:], "lr": kw["lr"] * 2, "weight_decay": 0.0}]
    opt = cls(groups, **kw, foreach=foreach)
    history = []
    for step in range(9):
        live = list(range(len(ps) + (1 if step >= 5 else 0)))
        if step == 2:
            live.remove(1)  # ps[1] gets no gradient this step
        if step == 4:  # a parameter's array replaced by assignment (as load_state_dict may)
            ps[0]._data = ps[0]._dev.asarray(np.full(_SHAPES[0], 0.25, dtype))
        if step == 5:
            opt.add_param_group({"params": [extra], "lr": kw["lr"] / 2})
        if step == 7:  # the state replaced by its own state dict
            opt.load_state_dict(opt.state_dict())
        opt.zero_grad()
        loss = None
        for i in live:
            p, x = (ps + [extra])[i], xs[i]
            term = ((x * p) ** 2).sum() + (x * p).sum()
            loss = term if loss is None else loss + term
        loss.backward()
        opt.step()
        sd = opt.state_dict()
        state = {
            (i, k): (v.detach().numpy().copy() if isinstance(v, Tensor) else v)
            for i, st in sd["state"].items()
            for k, v in st.items()
        }  # (copies: numpy() shares the memory the next step writes, as PyTorch's)
        history.append(([p.detach().numpy().copy() for p in ps + [extra]], state))
    return history


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("cls,kw", FLAT_CASES, ids=_FLAT_IDS)
def test_flat_update_gives_the_per_parameter_numbers(device, dtype, cls, kw):
    flat = _scripted_run(cls, kw, device, dtype, foreach=None)
    loop = _scripted_run(cls, kw, device, dtype, foreach=False)
    for step, ((fp, fs), (lp, ls)) in enumerate(zip(flat, loop)):
        for a, b in zip(fp, lp):
            assert a.dtype == b.dtype == dtype
            np.testing.assert_array_equal(a, b, err_msg=f"step {step}")
        assert fs.keys() == ls.keys(), step
        for k in fs:
            np.testing.assert_array_equal(fs[k], ls[k], err_msg=f"step {step}, state {k}")


def _flat_opt(cls=AdamW, **kw):
    ps = [Parameter(np.full(s, 1.0)) for s in _SHAPES]
    opt = cls(ps, lr=0.1, **kw)
    for p in ps:
        p.grad = Tensor(np.full(p.shape, 0.5))
    return ps, opt


def test_flat_update_writes_parameters_in_place_and_leaves_gradients_alone():
    ps, opt = _flat_opt()
    old = [p._data for p in ps]
    grads = [p.grad._data for p in ps]
    opt.step()
    opt.step()
    for p, o in zip(ps, old):  # each parameter keeps its own memory, as PyTorch's step writes it
        assert p._data is o and not np.array_equal(o, np.ones(o.shape))
    for p, g in zip(ps, grads):
        assert p.grad._data is g and g.flags.writeable
        np.testing.assert_array_equal(g, np.full(g.shape, 0.5))
        assert not np.shares_memory(g, p._data)
    g0 = ps[0].grad._data
    g0 += 1.0  # each .grad is its own array
    np.testing.assert_array_equal(ps[1].grad._data, np.full(_SHAPES[1], 0.5))


def test_flat_state_tensors_follow_the_steps():
    ps, opt = _flat_opt()
    opt.step()
    m = opt.state[ps[0]]["exp_avg"]
    held = opt.state_dict()["state"][0]["exp_avg"]
    opt.step()
    after_two = 0.9 * 0.05 + 0.1 * 0.5  # m after the second step
    np.testing.assert_allclose(m.detach().numpy(), np.full(_SHAPES[0], after_two))
    assert held is m  # as in PyTorch: the state dict holds the optimizer's own tensors


def test_flat_update_follows_a_parameter_written_in_place():
    ps, opt = _flat_opt(SGD)
    opt.step()
    ps[2]._data[...] = 7.0  # written through the parameter's view
    ps[3]._data = np.zeros(ps[3].shape)  # replaced
    opt.step()
    np.testing.assert_allclose(ps[2].detach().numpy(), 7.0 - 0.05)
    np.testing.assert_allclose(ps[3].detach().numpy(), np.full(_SHAPES[3], -0.05))
    np.testing.assert_allclose(ps[0].detach().numpy(), np.full(_SHAPES[0], 0.9))


def _host(v):
    return np.array(v.detach().numpy() if isinstance(v, Tensor) else v)


def test_flat_update_follows_module_load_state_dict(rng):
    lin = Linear(3, 2).double()
    opt = AdamW(lin.parameters(), lr=0.1, weight_decay=0.0)
    x = Tensor(rng.standard_normal((4, 3)))
    lin(x).sum().backward()
    opt.step()
    saved = {k: _host(v) for k, v in lin.state_dict().items()}
    opt.step()
    lin.load_state_dict(saved)
    opt.step()  # from the loaded values, not the optimizer's copy of the last ones
    for (k, v), before in zip(lin.state_dict().items(), saved.values()):
        assert np.all(np.abs(_host(v) - before) < 0.1 + 1e-9), k


@pytest.mark.parametrize("foreach", [None, False])
@pytest.mark.parametrize("cls", [SGD, Adam, AdamW])
def test_a_parameter_in_read_only_memory_is_given_new_memory(cls, foreach):
    # An expanded array cannot be written in place: the step gives the parameter new memory
    # (the steps' values as for a parameter of its own, the version counted on), and leaves
    # the array it showed alone.
    shown = np.broadcast_to(np.float64(1.0), (4,))
    p, q = Parameter(np.zeros(4)), Parameter(np.ones(4))
    p.data = shown
    opt = cls([p, q], lr=0.1, weight_decay=0.1, foreach=foreach)
    for step in range(3):
        p.grad, q.grad = Tensor(np.arange(4.0)), Tensor(np.arange(4.0))
        opt.step()
        np.testing.assert_array_equal(p.detach().numpy(), q.detach().numpy(), err_msg=f"step {step}")
    assert p._version == q._version and p._data.flags.writeable
    np.testing.assert_array_equal(shown, np.ones(4))


@pytest.mark.parametrize("foreach", [None, False])
@pytest.mark.parametrize("cls", [SGD, Adam, AdamW])
def test_a_non_contiguous_parameter_is_written_where_it_is(cls, foreach):
    base = np.ones((4, 3))
    p, q = Parameter(np.zeros((3, 4))), Parameter(np.ones((3, 4)))
    p.data = base.T  # a transposed view: no flat view of it exists
    opt = cls([p, q], lr=0.1, weight_decay=0.1, foreach=foreach)
    for step in range(3):
        g = np.arange(12.0).reshape(3, 4)
        p.grad, q.grad = Tensor(g), Tensor(g)
        opt.step()
        np.testing.assert_array_equal(p.detach().numpy(), q.detach().numpy(), err_msg=f"step {step}")
    assert np.shares_memory(p._data, base) and p._version == q._version
    np.testing.assert_array_equal(base.T, q.detach().numpy())


# -- the optimizers of torch.optim beyond SGD and Adam, on every device -----------------------
MORE = [
    ("RMSprop", dict(lr=0.01, momentum=0.9, centered=True, weight_decay=0.1, maximize=True)),
    ("Adagrad", dict(lr=0.1, lr_decay=0.1, initial_accumulator_value=0.2, weight_decay=0.1)),
    ("Adadelta", dict(lr=0.5, rho=0.8, weight_decay=0.1)),
    ("Adamax", dict(lr=0.02, weight_decay=0.1, maximize=True)),
    ("NAdam", dict(lr=0.02, weight_decay=0.1, decoupled_weight_decay=True)),
    ("RAdam", dict(lr=0.02, betas=(0.8, 0.9), weight_decay=0.1)),
    ("ASGD", dict(lr=0.05, lambd=0.1, t0=2.0, weight_decay=0.1)),
    ("Rprop", dict(lr=0.05, step_sizes=(1e-3, 0.2), maximize=True)),
]


@pytest.mark.parametrize("name,kw", MORE, ids=[n for n, _ in MORE])
def test_more_optimizers_give_the_same_numbers_on_every_device(rng, device, name, kw):
    p0 = rng.standard_normal((3, 4))
    grads = [rng.standard_normal((3, 4)) for _ in range(6)]
    out = []
    for dev in ("cpu", device):
        p = Parameter(p0.copy(), device=dev)
        opt = getattr(tga.optim, name)([p], **kw)
        for g in grads:
            p.grad = Tensor(g, device=dev)
            opt.step()
        assert p.device == tga.get_device(dev).name
        assert all(v.device == p.device for v in opt.state[p].values() if isinstance(v, Tensor))
        out.append(p.detach().numpy())
    np.testing.assert_allclose(out[1], out[0], rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("search", [None, "strong_wolfe"])
def test_lbfgs_gives_the_same_numbers_on_every_device(rng, device, search):
    a, b, _ = _problem(rng)
    p0 = rng.standard_normal(a.shape)
    out = []
    for dev in ("cpu", device):
        p, q = Parameter(p0.copy(), device=dev), Parameter(np.ones(2), device=dev)  # (q: never a gradient)
        ta, tb = Tensor(a, device=dev), Tensor(b, device=dev)
        opt = tga.optim.LBFGS([p, q], max_iter=5, history_size=3, line_search_fn=search)

        def closure(opt=opt, p=p, ta=ta, tb=tb):
            opt.zero_grad()
            loss = (ta * p * p).sum() * 0.5 + (tb * p).sum()
            loss.backward()
            return loss

        for _ in range(2):
            opt.step(closure)
        assert opt.state[p]["d"].device == p.device
        out.append((p.detach().numpy(), q.detach().numpy()))
    np.testing.assert_allclose(out[1][0], out[0][0], rtol=1e-10, atol=1e-12)
    np.testing.assert_array_equal(out[1][1], np.ones(2))


@pytest.mark.parametrize("name,kw", MORE + [("SGD", dict(lr=0.1, momentum=0.9, maximize=True)),
                                           ("Adam", dict(lr=0.01, maximize=True))],
                         ids=[n for n, _ in MORE] + ["SGD-maximize", "Adam-maximize"])  # fmt: skip
def test_a_compiled_training_step_gives_the_eager_numbers(name, kw):
    """The update inside ``tga.compile`` (recorded as one call of ``step()`` where the
    optimizer has no traced form, and replayed), with a schedule changing lr between steps."""
    results = []
    for compiled in (False, True):
        tga.manual_seed(0)
        model = tga.nn.Sequential(tga.nn.Linear(4, 8), tga.nn.Tanh(), tga.nn.Linear(8, 3))
        opt = getattr(tga.optim, name)(model.parameters(), **kw)
        sched = tga.optim.lr_scheduler.ExponentialLR(opt, gamma=0.9)

        def step(x, y, opt=opt, model=model):
            opt.zero_grad()
            loss = ((model(x) - y) ** 2).mean()
            loss.backward()
            opt.step()
            return loss

        run = tga.compile(step) if compiled else step
        losses = []
        for i in range(6):
            r = np.random.default_rng(i)
            x, y = r.standard_normal((5, 4)).astype(np.float32), r.standard_normal((5, 3)).astype(np.float32)
            losses.append(float(run(Tensor(x), Tensor(y)).detach().numpy()))
            sched.step()
        results.append((losses, [p.detach().numpy().copy() for p in model.parameters()]))
    (l0, p0), (l1, p1) = results
    np.testing.assert_allclose(l1, l0, rtol=1e-5, atol=1e-6)
    for a, b in zip(p0, p1):
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-6)
