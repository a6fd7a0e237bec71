"""torch.optim.Muon and torch.optim.swa_utils against PyTorch: a tiny model trained with the
same data under both, for every combination of Muon's options, in float32 and float64 (the
parameters after each step, the state dict's layout); Muon's refusals; AveragedModel with the
running mean, EMA (avg_fn and multi_avg_fn) and use_buffers; SWALR's rates for each anneal;
update_bn through a DataLoader."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import tinygrad_attn as tga  # noqa: E402
from tinygrad_attn.optim import swa_utils  # noqa: E402

STEPS = 5
TOL = {"float32": dict(rtol=1e-5, atol=1e-6), "float64": dict(rtol=1e-12, atol=1e-14)}


def _grid(**axes):
    keys = list(axes)
    return [dict(zip(keys, vals)) for vals in itertools.product(*(axes[k] for k in keys))]


MUON_GRID = _grid(
    lr=[0.02],
    weight_decay=[0.0, 0.1],
    momentum=[0.95, 0.3],
    nesterov=[True, False],
    ns_steps=[5, 2],
    adjust_lr_fn=[None, "original", "match_rms_adamw"],
)  # fmt: skip
MUON_GRID += [dict(lr=0.01, ns_coefficients=(2.0, -1.5, 0.5), eps=1e-3), dict(lr=0.01, ns_steps=0)]


def _mlp(lib, dtype, seed=0):
    """Two bias-free linear layers (every parameter a matrix: one tall, one wide)."""
    rng = np.random.default_rng(seed)
    dt = getattr(lib, dtype)
    model = lib.nn.Sequential(lib.nn.Linear(3, 6, bias=False), lib.nn.Tanh(), lib.nn.Linear(6, 2, bias=False))
    with lib.no_grad():
        for p in model.parameters():
            p.copy_(lib.tensor(rng.standard_normal(tuple(p.shape))))
    return model.to(dt)


def _data(lib, dtype, step):
    rng = np.random.default_rng(100 + step)
    dt = getattr(lib, dtype)
    return lib.tensor(rng.standard_normal((8, 3)), dtype=dt), lib.tensor(rng.standard_normal((8, 2)), dtype=dt)


def _train(lib, dtype, make_opt):
    model = _mlp(lib, dtype)
    opt = make_opt(lib, model)
    trail = []
    for step in range(STEPS):
        x, y = _data(lib, dtype, step)
        opt.zero_grad()
        ((model(x) - y) ** 2).mean().backward()
        opt.step()
        trail.append([p.detach().numpy().copy() for p in model.parameters()])
    return trail, opt


def _close(ours, theirs, dtype, what):
    for i, (a, b) in enumerate(zip(ours, theirs, strict=True)):
        for j, (pa, pb) in enumerate(zip(a, b, strict=True)):
            assert pa.dtype == pb.dtype, (what, i, j)
            np.testing.assert_allclose(pa, pb, **TOL[dtype], err_msg=f"{what}: step {i}, parameter {j}")


def _layout(sd):
    """A state dict's structure: its keys, each state entry's names/shapes, the groups' keys."""
    state = {k: {n: tuple(v.shape) for n, v in s.items()} for k, s in sd["state"].items()}
    groups = [(sorted(g), g["params"]) for g in sd["param_groups"]]
    return state, groups


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("kw", MUON_GRID, ids=lambda kw: ",".join(f"{k}={v}" for k, v in kw.items()))
def test_muon_trains_as_pytorch(kw, dtype):
    ours, opt = _train(tga, dtype, lambda lib, m: lib.optim.Muon(m.parameters(), **kw))
    theirs, topt = _train(torch, dtype, lambda lib, m: lib.optim.Muon(m.parameters(), **kw))
    _close(ours, theirs, dtype, f"Muon({kw})")
    sd, tsd = opt.state_dict(), topt.state_dict()
    assert _layout(sd) == _layout(tsd)
    assert [{k: v for k, v in g.items()} for g in sd["param_groups"]] == tsd["param_groups"]


def test_muon_newton_schulz_is_pytorchs_bfloat16():
    from torch.optim._muon import _zeropower_via_newtonschulz

    from tinygrad_attn.optim.muon import NS_COEFFICIENTS, newton_schulz

    rng = np.random.default_rng(1)
    for shape in [(4, 3), (3, 5), (8, 8), (16, 5), (1, 7)]:
        g = rng.standard_normal(shape).astype(np.float32)
        want = _zeropower_via_newtonschulz(torch.tensor(g), NS_COEFFICIENTS, 5, 1e-7).float().numpy()
        np.testing.assert_array_equal(newton_schulz(np, g, NS_COEFFICIENTS, 5, 1e-7), want, err_msg=str(shape))


def test_muon_state_dict_round_trip_and_param_groups():
    def make(lib, m):
        ps = list(m.parameters())
        return lib.optim.Muon([{"params": [ps[0]], "lr": 0.05}, {"params": [ps[1]], "adjust_lr_fn": "match_rms_adamw"}])

    ours, opt = _train(tga, "float64", make)
    theirs, topt = _train(torch, "float64", make)
    _close(ours, theirs, "float64", "Muon param groups")
    # PyTorch's state dict loads here, and the next step continues as PyTorch's
    model = _mlp(tga, "float64")
    with tga.no_grad():
        for p, v in zip(model.parameters(), ours[-1], strict=True):
            p.copy_(tga.tensor(v))
    opt2 = make(tga, model)
    sd = topt.state_dict()
    opt2.load_state_dict({"state": {k: {n: tga.tensor(v.numpy()) for n, v in s.items()} for k, s in sd["state"].items()},
                          "param_groups": sd["param_groups"]})  # fmt: skip
    assert _layout(opt2.state_dict()) == _layout(sd)


@pytest.mark.parametrize(
    "call",
    [
        lambda lib: lib.optim.Muon([lib.zeros(3, requires_grad=True)]),
        lambda lib: lib.optim.Muon([lib.zeros(2, 3, 4, requires_grad=True)]),
        lambda lib: lib.optim.Muon([lib.zeros(2, 3, requires_grad=True)], lr=-1.0),
        lambda lib: lib.optim.Muon([lib.zeros(2, 3, requires_grad=True)], momentum=-0.5),
        lambda lib: lib.optim.Muon([lib.zeros(2, 3, requires_grad=True)], weight_decay=-0.1),
        lambda lib: lib.optim.Muon([lib.zeros(2, 3, requires_grad=True)], adjust_lr_fn="other"),
    ],
)
def test_muon_refusals_are_pytorchs(call):
    with pytest.raises(Exception) as theirs:
        call(torch)
    with pytest.raises(type(theirs.value)) as ours:
        call(tga)
    assert str(ours.value).replace("tinygrad_attn", "torch") == str(theirs.value)


def test_muon_too_many_ns_steps_is_refused_at_step():
    for lib in (torch, tga):
        p = lib.ones(2, 3, requires_grad=True)
        opt = lib.optim.Muon([p], ns_steps=100)
        p.sum().backward()
        with pytest.raises(ValueError, match="Number of steps must be less than 100"):
            opt.step()


# -- swa_utils -------------------------------------------------------------------------------


def _bn_model(lib, seed=0):
    rng = np.random.default_rng(seed)
    model = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.BatchNorm1d(4), lib.nn.ReLU(), lib.nn.Linear(4, 2))
    with lib.no_grad():
        for p in model.parameters():
            p.copy_(lib.tensor(rng.standard_normal(tuple(p.shape)), dtype=lib.float32))
    return model


AVERAGERS = {
    "swa": dict(),
    "ema_avg_fn": dict(avg_fn="ema"),
    "ema_multi": dict(multi_avg_fn="ema"),
    "swa_avg_fn": dict(avg_fn="swa"),
    "swa_multi": dict(multi_avg_fn="swa"),
}


@pytest.mark.parametrize("use_buffers", [False, True])
@pytest.mark.parametrize("name", list(AVERAGERS))
def test_averaged_model_as_pytorch(name, use_buffers):
    def run(lib):
        su = lib.optim.swa_utils
        kw = {}
        for k, v in AVERAGERS[name].items():
            if k == "avg_fn":
                kw[k] = su.get_ema_avg_fn(0.9) if v == "ema" else su.get_swa_avg_fn()
            else:
                kw[k] = su.get_ema_multi_avg_fn(0.8) if v == "ema" else su.get_swa_multi_avg_fn()
        model = _bn_model(lib)
        avg = su.AveragedModel(model, use_buffers=use_buffers, **kw)
        opt = lib.optim.SGD(model.parameters(), lr=0.1, momentum=0.5)
        for step in range(4):
            rng = np.random.default_rng(step)
            x = lib.tensor(rng.standard_normal((6, 3)), dtype=lib.float32)
            opt.zero_grad()
            model(x).square().mean().backward()
            opt.step()
            avg.update_parameters(model)
        avg.eval()
        out = avg(lib.tensor(np.random.default_rng(9).standard_normal((5, 3)), dtype=lib.float32))
        sd = avg.state_dict()
        return {k: v.numpy() for k, v in sd.items()}, out.detach().numpy()

    try:
        theirs, tout = run(torch)
    except RuntimeError as e:  # (the running mean of an integer buffer: PyTorch's addcdiv refuses integers)
        with pytest.raises(RuntimeError, match="Integer division with addcdiv is no longer supported"):
            run(tga)
        assert "Integer division" in str(e)
        return
    ours, out = run(tga)
    assert list(ours) == list(theirs)
    for k in theirs:
        assert ours[k].dtype == theirs[k].dtype, k
        np.testing.assert_allclose(ours[k], theirs[k], rtol=1e-5, atol=1e-6, err_msg=k)
    np.testing.assert_allclose(out, tout, rtol=1e-5, atol=1e-6)


def test_averaged_model_refuses_both_fns_and_bad_decay():
    for lib in (torch, tga):
        su = lib.optim.swa_utils
        with pytest.raises(AssertionError, match="Only one of avg_fn and multi_avg_fn"):
            su.AveragedModel(lib.nn.Linear(2, 2), avg_fn=su.get_swa_avg_fn(), multi_avg_fn=su.get_swa_multi_avg_fn())
        for get in (su.get_ema_avg_fn, su.get_ema_multi_avg_fn):
            with pytest.raises(
                ValueError, match=r"Invalid decay value 1.5 provided. Please provide a value in \[0,1\]"
            ):
                get(1.5)


SWALR_CASES = _grid(
    swa_lr=[0.05, [0.05, 0.5]],
    anneal_epochs=[0, 1, 3, 10],
    anneal_strategy=["cos", "linear"],
)  # fmt: skip


@pytest.mark.parametrize("kw", SWALR_CASES, ids=lambda kw: ",".join(f"{k}={v}" for k, v in kw.items()))
def test_swalr_rates_as_pytorch(kw):
    def run(lib):
        a, b = lib.zeros(2, requires_grad=True), lib.zeros(2, requires_grad=True)
        opt = lib.optim.SGD([{"params": [a]}, {"params": [b], "lr": 0.3}], lr=1.0)
        sched = lib.optim.swa_utils.SWALR(opt, **kw)
        rates = [sched.get_last_lr()]
        for step in range(14):
            opt.step()
            sched.step()
            rates.append(sched.get_last_lr())
            if step == 6:  # (a change of rate between steps: the anneal continues from it)
                opt.param_groups[0]["lr"] *= 2
        sd = {k: v for k, v in sched.state_dict().items() if k not in ("_last_lr", "base_lrs")}
        return rates, [g["swa_lr"] for g in opt.param_groups], sorted(sd)

    ours, theirs = run(tga), run(torch)
    np.testing.assert_allclose(np.array(ours[0]), np.array(theirs[0]), rtol=1e-14, atol=0)
    assert ours[1] == theirs[1]
    assert set(theirs[2]) <= set(ours[2]) | {"_get_lr_called_within_step", "_is_initial"}


def test_swalr_refusals_and_state_dict():
    for lib in (torch, tga):
        opt = lib.optim.SGD([lib.zeros(2, requires_grad=True)], lr=1.0)
        with pytest.raises(ValueError, match="anneal_strategy must be one of 'cos' or 'linear', instead got exp"):
            lib.optim.swa_utils.SWALR(opt, 0.1, anneal_strategy="exp")
        with pytest.raises(ValueError, match="anneal_epochs must be equal or greater than 0, got -1"):
            lib.optim.swa_utils.SWALR(opt, 0.1, anneal_epochs=-1)
    opt = tga.optim.SGD([tga.zeros(2, requires_grad=True)], lr=1.0)
    sched = tga.optim.swa_utils.SWALR(opt, 0.1, anneal_epochs=4, anneal_strategy="linear")
    sd = sched.state_dict()
    assert "anneal_func" not in sd and sd["_anneal_strategy"] == "linear"
    other = tga.optim.swa_utils.SWALR(tga.optim.SGD([tga.zeros(2, requires_grad=True)], lr=1.0), 0.1)
    other.load_state_dict(sd)
    assert other.anneal_func(0.25) == 0.25


@pytest.mark.parametrize("pairs", [False, True])
def test_update_bn_through_a_dataloader(pairs):
    def run(lib):
        model = _bn_model(lib)
        rng = np.random.default_rng(5)
        xs = lib.tensor(rng.standard_normal((20, 3)), dtype=lib.float32)
        data = lib.utils.data.TensorDataset(xs, xs[:, :1]) if pairs else lib.utils.data.TensorDataset(xs)
        loader = lib.utils.data.DataLoader(data, batch_size=6)
        model.eval()
        bn = model[1]
        bn.momentum = 0.3
        lib.optim.swa_utils.update_bn(loader, model)
        assert not model.training and bn.momentum == 0.3
        return {k: v.numpy() for k, v in model.state_dict().items()}

    ours, theirs = run(tga), run(torch)
    assert list(ours) == list(theirs)
    for k in theirs:
        np.testing.assert_allclose(ours[k], theirs[k], rtol=1e-5, atol=1e-6, err_msg=k)


def test_update_bn_without_batchnorm_leaves_the_model():
    model = tga.nn.Linear(2, 2)
    before = model.weight.detach().numpy().copy()
    swa_utils.update_bn([tga.ones(1, 2)], model)
    np.testing.assert_array_equal(model.weight.detach().numpy(), before)
