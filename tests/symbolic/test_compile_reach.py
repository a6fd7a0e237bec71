"""``tga.compile``'s one guard: every Python value the step can reach is written down, so a
change of any of them between calls gives what eager gives. A generator draws, between the
calls of a training step, changes of each kind of reachable value, and the compiled step is
compared with eager on ten calls (losses, parameters)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import tinygrad_attn as tga
from tinygrad_attn import Tensor, nn
from tinygrad_attn.symbolic.guard import Guard


def _square(x):
    return x * x


def _quarter(x):
    return x * 0.25


SHAPE_FN = _square  # a global function the step calls (swapped by a change)


class _Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin1 = nn.Linear(4, 5)
        self.act = nn.Tanh()
        self.lin2 = nn.Linear(5, 2)
        self.scale = np.float64(1.0)  # a NumPy scalar attribute
        self.shift = Tensor(np.zeros(2))  # a plain tensor attribute, not a buffer
        self.weights = [1.0, 1.0]  # numbers in a list attribute

    def forward(self, x):
        h = self.act(self.lin1(x))
        return self.lin2(h) * self.scale * self.weights[1] + self.shift


def _world(seed):
    """A fresh model, loss, optimizer, closure state and the step reaching all of them."""
    tga.manual_seed(seed)
    model = _Net()
    for p in model.parameters():
        p._data = p._data.astype(np.float64)
    state = {
        "model": model,
        "loss": nn.MSELoss(),
        "opt": tga.optim.SGD(model.parameters(), lr=0.1),
        "coef": [1.0],
        "cfg": {"clip": {"max_norm": 10.0}, "deep": {"t": {"bias": Tensor(np.zeros(2))}}},
        "branch": [0],
    }

    def step(x, y):
        s = state
        out = s["model"](x) + s["cfg"]["deep"]["t"]["bias"]
        if s["branch"][0] % 2:
            out = out * 2.0
        loss = s["loss"](SHAPE_FN(out), y) * s["coef"][0]
        s["opt"].zero_grad()
        loss.backward()
        tga.nn.utils.clip_grad_norm_(s["model"].parameters(), max_norm=s["cfg"]["clip"]["max_norm"])
        s["opt"].step()
        return loss

    return step, state


def _changes():
    """Each a change of one kind of reachable value, made between two calls."""
    g = globals()

    def new_opt(s):
        s["opt"] = tga.optim.SGD(s["model"].parameters(), lr=0.05, momentum=0.5)

    return {
        "closure list number": lambda s: s["coef"].__setitem__(0, s["coef"][0] * 0.5),
        "config dict max_norm": lambda s: s["cfg"]["clip"].__setitem__("max_norm", 0.01),
        "numpy scalar attribute": lambda s: setattr(s["model"], "scale", np.float64(s["model"].scale * 1.5)),
        "global function": lambda s: g.__setitem__("SHAPE_FN", _quarter if g["SHAPE_FN"] is _square else _square),
        "submodule Tanh->Sigmoid": lambda s: setattr(
            s["model"], "act", nn.Sigmoid() if isinstance(s["model"].act, nn.Tanh) else nn.Tanh()
        ),
        "loss module MSE->L1": lambda s: s.__setitem__(
            "loss", nn.L1Loss() if isinstance(s["loss"], nn.MSELoss) else nn.MSELoss()
        ),
        "optimizer re-created": new_opt,
        "plain tensor attribute": lambda s: setattr(s["model"], "shift", Tensor(np.full(2, 0.3))),
        "tensor two levels deep": lambda s: s["cfg"]["deep"]["t"].__setitem__("bias", Tensor(np.full(2, -0.2))),
        "lr in param_groups": lambda s: s["opt"].param_groups[0].__setitem__("lr", 0.02),
        "number in a module list": lambda s: s["model"].weights.__setitem__(1, 0.7),
        "branch counter": lambda s: s["branch"].__setitem__(0, s["branch"][0] + 1),
        "training flag": lambda s: s["model"].train(not s["model"].training),
        "requires_grad": lambda s: s["model"].lin1.weight.requires_grad_(not s["model"].lin1.weight.requires_grad),
    }


def _run(compiled, plan, seed):
    g = globals()
    g["SHAPE_FN"] = _square
    step, state = _world(seed)
    run = tga.compile(step, cache_limit=64) if compiled else step
    rng = np.random.default_rng(seed)
    changes = _changes()
    out = []
    for i in range(10):
        for name in plan.get(i, ()):
            changes[name](state)
        x, y = rng.standard_normal((3, 4)), rng.standard_normal((3, 2))
        loss = run(Tensor(x), Tensor(y))
        out.append(loss.detach().numpy())
    out += [p.detach().numpy() for p in state["model"].parameters()]
    g["SHAPE_FN"] = _square
    return out, run


def _plans():
    """Change plans: each kind alone, then random mixes of kinds."""
    names = list(_changes())
    for name in names:
        yield name, {3: [name], 6: [name]}
    rng = np.random.default_rng(1)
    for k in range(6):
        plan = {i: list(rng.choice(names, size=int(rng.integers(1, 3)), replace=False)) for i in range(1, 10)
                if rng.random() < 0.6}  # fmt: skip
        yield f"mix{k}", plan


@pytest.mark.parametrize(("label", "plan"), list(_plans()), ids=[p[0] for p in _plans()])
def test_any_reachable_change_gives_eager_results(label, plan):
    eager, _ = _run(False, plan, 0)
    compiled, run = _run(True, plan, 0)
    assert any(p is not None for p in run.programs.values())  # (it did replay)
    for a, b in zip(eager, compiled):
        np.testing.assert_allclose(b, a, rtol=1e-9, atol=1e-12, err_msg=label)


def test_the_guard_writes_down_each_kind_of_value():
    step, state = _world(0)
    g = Guard()
    for name, change in _changes().items():
        if name == "lr in param_groups":  # (read live by the program: not written down, see above)
            continue
        before = g.key(step)
        assert g.key(step) == before, name  # (nothing changed: the same key)
        change(state)
        assert g.key(step) != before, name
    globals()["SHAPE_FN"] = _square


def test_a_counter_that_changes_every_call_ends_in_eager_with_a_warning_naming_it():
    w = Tensor(np.ones(3), requires_grad=True)
    calls = {"n": 0}

    def step(x):
        loss = (w * x).sum() * (calls["n"] + 1)
        return loss

    run = tga.compile(step, cache_limit=3)
    with pytest.warns(RuntimeWarning, match=r"calls\['n'\]"):
        for _ in range(6):
            calls["n"] += 1
            got = run(Tensor(np.arange(3.0)))
            np.testing.assert_allclose(got.detach().numpy(), 3.0 * (calls["n"] + 1))
    assert run._eager and len(run.programs) == 3


def test_unchanged_state_replays_one_program():
    step, _ = _world(0)
    run = tga.compile(step)
    rng = np.random.default_rng(0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for _ in range(5):
            run(Tensor(rng.standard_normal((3, 4))), Tensor(rng.standard_normal((3, 2))))
    assert len(run.programs) == 1 and run.program is not None


# -- grad mode, argument types, gradients of gradients ---------------------------------------
@pytest.mark.parametrize("mode", ["no_grad", "inference_mode"])
def test_a_step_under_no_grad_behaves_as_eagerly(mode):
    lin = nn.Linear(3, 1)
    opt = tga.optim.SGD(lin.parameters(), lr=0.1)

    def step(x):
        loss = lin(x).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss

    run = tga.compile(step)
    x = Tensor(np.ones((2, 3)), dtype=np.float32)  # (the layer's dtype: linear refuses a mix, as PyTorch's)
    run(x), run(x)  # (traced and replayed with grad on)
    before = [p.detach().numpy().copy() for p in lin.parameters()]
    for f in (step, run):
        with getattr(tga, mode)():
            with pytest.raises(RuntimeError):
                f(x)
    for p, b in zip(lin.parameters(), before):
        np.testing.assert_array_equal(p.detach().numpy(), b)

    def forward(x):
        return lin(x) * 2

    fwd = tga.compile(forward)
    with tga.no_grad():
        a, b = fwd(x), fwd(x)
    assert not a.requires_grad and not b.requires_grad
    np.testing.assert_allclose(b.detach().numpy(), (lin(x) * 2).detach().numpy())


def test_a_numpy_argument_stays_a_numpy_array():
    w = Tensor(np.ones(3), requires_grad=True)
    seen = []

    def step(x, c):
        seen.append(type(x))
        t = Tensor(x) * np.mean(c)  # (a NumPy computation on an argument: eager for this call)
        return (w * t).sum()

    v = Tensor(np.arange(3.0))

    def step2(x):
        return (v * tga.tensor(x, dtype=tga.float32)).sum() + (v * tga.from_numpy(x)).sum()

    run, run2 = tga.compile(step), tga.compile(step2)
    rng = np.random.default_rng(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _ in range(4):
            x, c = rng.standard_normal(3), rng.standard_normal(4)
            np.testing.assert_allclose(run(x, c).detach().numpy(), step(x, c).detach().numpy())
            np.testing.assert_allclose(run2(x).detach().numpy(), step2(x).detach().numpy(), rtol=1e-6)
    assert all(t is np.ndarray or issubclass(t, np.ndarray) for t in seen)
    assert run2.program is not None and len(run2.programs) == 1


def test_a_gradient_penalty_inside_the_step_replays_as_eager():
    def make():
        tga.manual_seed(0)
        lin = nn.Linear(3, 1)
        for p in lin.parameters():
            p._data = p._data.astype(np.float64)
        opt = tga.optim.SGD(lin.parameters(), lr=0.05)

        def step(x):
            x = x.detach().requires_grad_(True)
            out = lin(x).tanh().sum()
            (g,) = tga.autograd.grad(out, x, create_graph=True)
            loss = out + (g * g).sum()
            opt.zero_grad()
            loss.backward()
            opt.step()
            return loss

        return step, lin

    results = []
    for compiled in (False, True):
        step, lin = make()
        run = tga.compile(step) if compiled else step
        rng = np.random.default_rng(0)
        got = [run(Tensor(rng.standard_normal((2, 3)))).detach().numpy() for _ in range(5)]
        results.append(got + [p.detach().numpy() for p in lin.parameters()])
        if compiled:
            assert run.program is not None
    for a, b in zip(*results):
        np.testing.assert_allclose(b, a, rtol=1e-10)


def test_threads_replaying_one_compiled_function_get_their_own_results():
    import threading

    w = Tensor(np.arange(3.0))
    scale = [2.0]

    def f(x):
        return (w * x).sum() * scale[0]

    run = tga.compile(f)
    run(Tensor(np.ones(3))), run(Tensor(np.ones(3)))
    errors = []

    def worker(seed):
        rng = np.random.default_rng(seed)
        for _ in range(200):
            x = rng.standard_normal(3)
            got = run(Tensor(x)).detach().numpy()
            if not np.allclose(got, (np.arange(3.0) * x).sum() * 2.0):
                errors.append((seed, got))

    threads = [threading.Thread(target=worker, args=(s,)) for s in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and len(run.programs) == 1
