"""Every optimizer of torch.optim against PyTorch: for a generated grid of each one's
options, in float32 and float64, the same parameters after the same gradients; state dicts
with PyTorch's layout, that round-trip and cross-load both ways; PyTorch's argument errors;
LBFGS's trajectory with and without its line search."""

from __future__ import annotations

import inspect
import itertools

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import tinygrad_attn as tga  # noqa: E402
from tinygrad_attn import Tensor, optim  # noqa: E402
from tinygrad_attn.models import Parameter  # noqa: E402

SHAPES = [(3, 4), (5,), ()]
STEPS = 8


def _grid(**axes):
    """Every combination of the axes' values, as keyword dicts."""
    keys = list(axes)
    return [dict(zip(keys, vals)) for vals in itertools.product(*(axes[k] for k in keys))]


B = [False, True]
GRIDS = {
    "SGD": [
        kw
        for kw in _grid(
            lr=[0.1],
            momentum=[0.0, 0.9],
            dampening=[0.0, 0.3],
            nesterov=B,
            weight_decay=[0.0, 0.1],
            maximize=B,
            foreach=[None, False],
        )  # fmt: skip
        if not kw["nesterov"] or (kw["momentum"] > 0 and kw["dampening"] == 0)
    ],
    "Adam": _grid(
        lr=[0.05], amsgrad=B, weight_decay=[0.0, 0.1], maximize=B, decoupled_weight_decay=B, foreach=[None, False]
    ),  # fmt: skip
    "AdamW": _grid(lr=[0.05], betas=[(0.9, 0.999), (0.5, 0.8)], amsgrad=B, weight_decay=[0.0, 0.2], maximize=B),
    "RMSprop": _grid(
        lr=[0.01], alpha=[0.99, 0.5], momentum=[0.0, 0.9], centered=B, weight_decay=[0.0, 0.1], maximize=B
    ),  # fmt: skip
    "Adagrad": _grid(
        lr=[0.1],
        lr_decay=[0.0, 0.1],
        initial_accumulator_value=[0.0, 0.5],
        weight_decay=[0.0, 0.1],
        eps=[1e-10, 1e-3],
        maximize=B,
    ),  # fmt: skip
    "Adadelta": _grid(lr=[1.0, 0.5], rho=[0.9, 0.5], eps=[1e-6, 1e-2], weight_decay=[0.0, 0.1], maximize=B),
    "Adamax": _grid(
        lr=[0.02], betas=[(0.9, 0.999), (0.5, 0.8)], eps=[1e-8, 0.1], weight_decay=[0.0, 0.1], maximize=B
    ),  # fmt: skip
    "NAdam": _grid(
        lr=[0.02],
        betas=[(0.9, 0.999), (0.5, 0.8)],
        weight_decay=[0.0, 0.1],
        decoupled_weight_decay=B,
        momentum_decay=[4e-3, 0.2],
        maximize=B,
    ),  # fmt: skip
    # (b2 = 0.9: the rectified step starts within the steps run, so both of RAdam's branches run)
    "RAdam": _grid(
        lr=[0.02], betas=[(0.9, 0.999), (0.8, 0.9)], weight_decay=[0.0, 0.1], decoupled_weight_decay=B, maximize=B
    ),  # fmt: skip
    # (t0 = 3: the average starts moving (mu < 1) within the steps run)
    "ASGD": _grid(
        lr=[0.05], lambd=[1e-4, 0.2], alpha=[0.75, 0.5], t0=[1e6, 3.0], weight_decay=[0.0, 0.1], maximize=B
    ),  # fmt: skip
    "Rprop": _grid(
        lr=[0.01, 0.2], etas=[(0.5, 1.2), (0.3, 1.6)], step_sizes=[(1e-6, 50), (1e-3, 0.05)], maximize=B
    ),  # fmt: skip
}
CASES = [(name, kw) for name, grid in GRIDS.items() for kw in grid]
IDS = [f"{name}-" + ",".join(f"{k}={v}" for k, v in kw.items()) for name, kw in CASES]
TOL = {np.float32: dict(rtol=2e-5, atol=2e-6), np.float64: dict(rtol=1e-11, atol=1e-13)}


@pytest.fixture(params=[np.float32, np.float64], ids=["float32", "float64"])
def dtype(request):
    """The parameters' dtype; both libraries' default dtype follows it, so the 0-d state kept
    in the default dtype (the step, NAdam's mu_product, ASGD's eta) has the precision of our
    Python numbers in float64, and the state dicts give it in that dtype."""
    old, ours = torch.get_default_dtype(), tga.get_default_dtype()
    torch.set_default_dtype(torch.float64 if request.param == np.float64 else torch.float32)
    tga.set_default_dtype(tga.float64 if request.param == np.float64 else tga.float32)
    yield request.param
    torch.set_default_dtype(old)
    tga.set_default_dtype(ours)


def _groups(params, kw):
    """Two param groups, the second with half the first's lr and the other maximize."""
    return [{"params": params[:2]}, {"params": params[2:], "lr": kw["lr"] * 0.5, "maximize": not kw.get("maximize")}]


class _Pair:
    """One optimizer of ours and PyTorch's, over parameters with the same values."""

    def __init__(self, name, kw, p0, torch_sd=None, our_sd=None):
        self.ours = [Parameter(p.copy()) for p in p0]
        self.theirs = [torch.tensor(p.copy(), requires_grad=True) for p in p0]
        self.o = getattr(optim, name)(_groups(self.ours, kw), **kw)
        self.t = getattr(torch.optim, name)(_groups(self.theirs, kw), **kw)
        if our_sd is not None:
            self.o.load_state_dict(our_sd)
        if torch_sd is not None:
            self.t.load_state_dict(torch_sd)

    def step(self, grads):
        for a, b, g in zip(self.ours, self.theirs, grads):
            a.grad, b.grad = Tensor(g), torch.tensor(g)
        self.o.step()
        self.t.step()

    def check(self, tol):
        for a, b in zip(self.ours, self.theirs):
            assert a.detach().numpy().dtype == b.detach().numpy().dtype
            np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), **tol)


def _grads(rng, dtype, n):
    return [[rng.standard_normal(s).astype(dtype) for s in SHAPES] for _ in range(n)]


def _to_numpy(v):
    if torch.is_tensor(v):
        return v.detach().numpy()
    if isinstance(v, Tensor):
        return v.detach().numpy()
    return v


def _sd_as(sd, convert):
    return {
        "state": {i: {k: convert(v) for k, v in st.items()} for i, st in sd["state"].items()},
        "param_groups": [dict(g) for g in sd["param_groups"]],
    }


def _ours_to_torch(v):
    return torch.tensor(v.detach().numpy()) if isinstance(v, Tensor) else v


@pytest.mark.parametrize("name,kw", CASES, ids=IDS)
def test_steps_and_state_dicts_match_torch(name, kw, dtype):
    rng = np.random.default_rng(len(IDS[CASES.index((name, kw))]))
    tol = TOL[dtype]
    p0 = [rng.standard_normal(s).astype(dtype) for s in SHAPES]
    pair = _Pair(name, kw, p0)
    for grads in _grads(rng, dtype, STEPS):
        pair.step(grads)
        pair.check(tol)
    # The layout is PyTorch's: the same groups with the same options, the same state names and values.
    osd, tsd = pair.o.state_dict(), pair.t.state_dict()
    assert len(osd["param_groups"]) == len(tsd["param_groups"])
    for og, tg in zip(osd["param_groups"], tsd["param_groups"]):
        assert set(og) == set(tg)
        for k, v in tg.items():
            assert og[k] == v or og[k] == pytest.approx(v), k
    assert sorted(osd["state"]) == sorted(tsd["state"])
    for i, tst in tsd["state"].items():
        assert set(osd["state"][i]) == set(tst), i
        for k, v in tst.items():
            ov = _to_numpy(osd["state"][i][k])
            assert np.shape(ov) == tuple(v.shape), (i, k)
            np.testing.assert_allclose(ov, v.detach().numpy(), **tol, err_msg=f"state[{i}][{k!r}]")
    # Our state dict loads into our optimizer and into PyTorch's, PyTorch's into ours, and
    # all continue as the originals.
    values = [p.detach().numpy().copy() for p in pair.ours]
    ours_from_ours = _Pair(name, dict(kw, lr=kw["lr"] * 3), values, our_sd=_sd_as(osd, lambda v: v))
    cross = _Pair(name, dict(kw, lr=kw["lr"] * 3), values, torch_sd=_sd_as(osd, _ours_to_torch),
                  our_sd=_sd_as(tsd, _to_numpy))  # fmt: skip
    for grads in _grads(rng, dtype, 3):
        pair.step(grads)
        ours_from_ours.step(grads)
        cross.step(grads)
        for a, b in zip(ours_from_ours.ours, pair.ours):
            np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())
        for a, b in zip(cross.ours, pair.theirs):
            np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), **tol)
        for a, b in zip(cross.theirs, pair.ours):
            np.testing.assert_allclose(b.detach().numpy(), a.detach().numpy(), **tol)


@pytest.mark.parametrize("name", list(GRIDS) + ["LBFGS"])
def test_defaults_and_options_are_pytorchs(name):
    p, q = Parameter(np.zeros(2)), torch.zeros(2, requires_grad=True)
    ours, theirs = getattr(optim, name)([p]), getattr(torch.optim, name)([q])
    assert ours.defaults == theirs.defaults
    og, tg = ours.param_groups[0], theirs.param_groups[0]
    assert {k: v for k, v in og.items() if k != "params"} == {k: v for k, v in tg.items() if k != "params"}
    # and print as PyTorch's (programs print optimizer.state_dict(): `'weight_decay': 0`, not `0.0`)
    assert repr(ours.defaults) == repr(theirs.defaults)
    assert repr(ours.state_dict()["param_groups"]) == repr(theirs.state_dict()["param_groups"])
    signature = inspect.signature(getattr(optim, name)).parameters
    for key, param in inspect.signature(getattr(torch.optim, name)).parameters.items():
        assert repr(signature[key].default) == repr(param.default), (name, key)
    # the state PyTorch makes at construction (Adagrad's), and none elsewhere
    assert sorted(ours.state_dict()["state"]) == sorted(theirs.state_dict()["state"])
    other, tother = Parameter(np.zeros(1)), torch.zeros(1)
    assert ours.state[other] == {} == theirs.state[tother]  # (a mapping that makes an empty entry)


BAD = {
    "lr": -1.0,
    "eps": -1e-3,
    "weight_decay": -0.1,
    "momentum": -0.5,
    "betas": (1.0, 0.9),
    "rho": 1.5,
    "alpha": -0.1,
    "lr_decay": -0.1,
    "initial_accumulator_value": -1.0,
    "momentum_decay": -0.1,
    "etas": (1.5, 1.2),
}


def _bad_cases():
    cases = []
    for name in list(GRIDS) + ["LBFGS"]:
        params = inspect.signature(getattr(torch.optim, name)).parameters
        cases += [(name, {k: v}) for k, v in BAD.items() if k in params]
    cases.append(("SGD", dict(momentum=0.0, nesterov=True)))
    cases.append(("SGD", dict(momentum=0.9, dampening=0.1, nesterov=True)))
    return cases


@pytest.mark.parametrize("name,kw", _bad_cases(), ids=lambda v: v if isinstance(v, str) else str(v))
def test_bad_arguments_raise_pytorchs_errors(name, kw):
    try:
        getattr(torch.optim, name)([torch.zeros(2, requires_grad=True)], **kw)
    except Exception as e:  # noqa: BLE001 - the class PyTorch raises is what is compared
        theirs = e
    else:  # PyTorch accepts it: so do we
        getattr(optim, name)([Parameter(np.zeros(2))], **kw)
        return
    with pytest.raises(type(theirs)) as ours:
        getattr(optim, name)([Parameter(np.zeros(2))], **kw)
    assert str(ours.value).startswith(f"{name}: ") and str(theirs) in str(ours.value)


def test_lbfgs_refuses_groups_and_other_line_searches():
    groups = [{"params": [Parameter(np.zeros(1))]}, {"params": [Parameter(np.zeros(1))]}]
    with pytest.raises(ValueError, match="per-parameter options"):
        optim.LBFGS(groups)
    opt = optim.LBFGS([Parameter(np.zeros(1))], line_search_fn="armijo")
    with pytest.raises(RuntimeError, match="only 'strong_wolfe' is supported"):
        opt.step(lambda: Tensor(np.float64(1.0)))


# -- step hooks, closures, zero_grad ---------------------------------------------------------
def test_step_takes_a_closure_and_runs_hooks_as_pytorch():
    log = []
    p = Parameter(np.ones(2))
    opt = optim.SGD([p], lr=0.1)
    h1 = opt.register_step_pre_hook(lambda o, a, k: log.append(("pre", o is opt)))
    opt.register_step_post_hook(lambda o, a, k: log.append(("post", float(p.detach().numpy()[0]))))

    def closure():
        opt.zero_grad()
        loss = (p * p).sum()
        loss.backward()
        return loss

    loss = opt.step(closure)
    assert float(loss.detach().numpy()) == 2.0 and log == [("pre", True), ("post", pytest.approx(0.8))]
    h1.remove()
    opt.step(closure)
    assert [k for k, _ in log] == ["pre", "post", "post"]
    opt.zero_grad(set_to_none=False)
    assert np.array_equal(p.grad.detach().numpy(), np.zeros(2))
    opt.zero_grad()
    assert p.grad is None


# -- LBFGS -----------------------------------------------------------------------------------
def _quadratic(lib, rng):
    a = rng.standard_normal((6, 6))
    h = a @ a.T + 0.5 * np.eye(6)
    b = rng.standard_normal(6)
    hh, bb = lib.tensor(h), lib.tensor(b)
    return [lambda w: 0.5 * (w * (hh @ w)).sum() - (bb * w).sum()], [rng.standard_normal(6)]


def _mlp(lib, rng):
    x, y = rng.standard_normal((16, 3)), rng.standard_normal((16, 1))
    xs, ys = lib.tensor(x), lib.tensor(y)

    def loss(w1, b1, w2, b2):
        return (((xs @ w1 + b1).tanh() @ w2 + b2 - ys) ** 2).mean()

    return [loss], [rng.standard_normal((3, 8)) * 0.5, np.zeros(8), rng.standard_normal((8, 1)) * 0.5, np.zeros(1)]


def _lbfgs_run(lib, problem, kw):
    """Three ``step(closure)`` calls of PyTorch's or our LBFGS: the losses evaluated, the
    parameters after each step, the state dict."""
    (loss_fn,), p0 = problem(lib, np.random.default_rng(3))
    make = (lambda v: torch.tensor(v, requires_grad=True)) if lib is torch else Parameter
    ps = [make(np.array(v, dtype=np.float64)) for v in p0]
    opt = (torch.optim if lib is torch else optim).LBFGS(ps, **kw)
    evals = []

    def closure():
        opt.zero_grad()
        loss = loss_fn(*ps)
        loss.backward()
        evals.append(float(loss.detach().numpy()))
        return loss

    trail = []
    for _ in range(3):
        opt.step(closure)
        trail.append([p.detach().numpy().copy() for p in ps])
    return evals, trail, opt.state_dict()


@pytest.mark.parametrize("problem", [_quadratic, _mlp])
@pytest.mark.parametrize(
    "kw",
    [dict(), dict(lr=0.5, max_iter=7, history_size=3), dict(line_search_fn="strong_wolfe"),
     dict(line_search_fn="strong_wolfe", history_size=2, max_iter=9, max_eval=12, tolerance_change=1e-12)],
    ids=["plain", "short-history", "strong-wolfe", "strong-wolfe-short"],
)  # fmt: skip
def test_lbfgs_follows_pytorchs_trajectory(problem, kw):
    runs = [_lbfgs_run(lib, problem, kw) for lib in (torch, tga)]
    (te, tt, tsd), (oe, ot, osd) = runs
    assert len(oe) == len(te)  # the same number of evaluations: the same decisions
    np.testing.assert_allclose(oe, te, rtol=1e-9, atol=1e-12)
    for a_step, b_step in zip(ot, tt):
        for a, b in zip(a_step, b_step):
            np.testing.assert_allclose(a, b, rtol=1e-8, atol=1e-10)
    tst, ost = tsd["state"][0], osd["state"][0]
    assert set(ost) == set(tst)
    assert ost["func_evals"] == tst["func_evals"] and ost["n_iter"] == tst["n_iter"]
    assert len(ost["old_dirs"]) == len(tst["old_dirs"])
    np.testing.assert_allclose(_to_numpy(ost["d"]), _to_numpy(tst["d"]), rtol=1e-7, atol=1e-10)


def test_lbfgs_state_dict_round_trips_and_continues():
    rng = np.random.default_rng(5)
    (loss_fn,), p0 = _quadratic(tga, rng)
    runs = []
    for n_first in (2, None):
        p = Parameter(p0[0].copy())
        opt = optim.LBFGS([p], max_iter=3, history_size=4)

        def closure(opt=opt, p=p):
            opt.zero_grad()
            loss = loss_fn(p)
            loss.backward()
            return loss

        for _ in range(2):
            opt.step(closure)
        if n_first is not None:  # a fresh optimizer from the state dict takes over
            sd = opt.state_dict()
            p = Parameter(p.detach().numpy().copy())
            opt = optim.LBFGS([p], max_iter=3, history_size=4)
            opt.load_state_dict(sd)
        for _ in range(2):
            opt.step(lambda opt=opt, p=p: (opt.zero_grad(), loss_fn(p).backward(), loss_fn(p))[2])
        runs.append(p.detach().numpy())
    np.testing.assert_array_equal(runs[0], runs[1])


def test_named_parameters_give_param_names_as_pytorch():
    tm = torch.nn.Linear(3, 2).double()
    om = tga.nn.Linear(3, 2).double()
    om.load_state_dict({k: v.detach().numpy() for k, v in tm.state_dict().items()})
    topt = torch.optim.Adam(tm.named_parameters(), lr=0.1)
    oopt = optim.Adam(om.named_parameters(), lr=0.1)
    x = np.ones((4, 3))
    tm(torch.tensor(x)).sum().backward()
    om(Tensor(x)).sum().backward()
    topt.step()
    oopt.step()
    tsd, osd = topt.state_dict(), oopt.state_dict()
    assert osd["param_groups"][0]["param_names"] == tsd["param_groups"][0]["param_names"] == ["weight", "bias"]
    assert list(osd["param_groups"][0]) == list(tsd["param_groups"][0])
    with pytest.raises(ValueError, match="with/without names"):
        oopt.add_param_group({"params": [Parameter(np.zeros(1))]})
    np.testing.assert_allclose(om.weight.detach().numpy(), tm.weight.detach().numpy(), rtol=1e-12)


@pytest.mark.parametrize("search", [None, "strong_wolfe"])
def test_lbfgs_continues_from_pytorchs_state_dict(search):
    kw = dict(max_iter=4, history_size=3, line_search_fn=search)
    (t_loss,), p0 = _mlp(torch, np.random.default_rng(4))
    (o_loss,), _ = _mlp(tga, np.random.default_rng(4))
    tp = [torch.tensor(v, requires_grad=True) for v in p0]
    topt = torch.optim.LBFGS(tp, **kw)

    def t_closure():
        topt.zero_grad()
        loss = t_loss(*tp)
        loss.backward()
        return loss

    for _ in range(2):
        topt.step(t_closure)
    sd = topt.state_dict()
    as_numpy = {
        "state": {i: {k: ([_to_numpy(x) for x in v] if isinstance(v, list) else _to_numpy(v)) for k, v in st.items()}
                  for i, st in sd["state"].items()},
        "param_groups": [dict(g) for g in sd["param_groups"]],
    }  # fmt: skip
    op = [Parameter(p.detach().numpy().copy()) for p in tp]
    oopt = optim.LBFGS(op, **kw)
    oopt.load_state_dict(as_numpy)

    def o_closure():
        oopt.zero_grad()
        loss = o_loss(*op)
        loss.backward()
        return loss

    for _ in range(2):
        topt.step(t_closure)
        oopt.step(o_closure)
        for a, b in zip(op, tp):
            np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-8, atol=1e-10)


def test_a_state_dict_without_newer_options_takes_the_defaults():
    p = Parameter(np.ones(2))
    opt = optim.RMSprop([p], lr=0.1, momentum=0.5)
    p.grad = Tensor(np.ones(2))
    opt.step()
    sd = opt.state_dict()
    for k in ("centered", "maximize", "capturable", "differentiable", "foreach"):
        del sd["param_groups"][0][k]
    fresh = optim.RMSprop([Parameter(np.ones(2))], lr=0.3)
    fresh.load_state_dict(sd)
    assert fresh.param_groups[0]["centered"] is False and fresh.param_groups[0]["lr"] == 0.1
    fresh.param_groups[0]["params"][0].grad = Tensor(np.ones(2))
    fresh.step()
