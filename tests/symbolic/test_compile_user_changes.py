"""Changes a user makes between the calls of a compiled step, tried as a new user would.

Each scenario runs a training (or inference) step ten times eagerly and ten times through
``tga.compile`` from the same start, making the same changes between calls; the losses,
returned values, parameters, gradients and side effects must agree, or the compiled step
must raise :class:`tga.TraceError` naming the line. A generator crosses each kind of value
(a number, a flag, a mode string, a function, a tensor, a module, a NumPy scalar) with each
place it may live (a closure, a global, a module attribute, a config object, an argument, a
trainer's attribute, a class attribute); hand-written scenarios cover the optimizer, the
module tree, randomness, side effects and the arguments' shapes and kinds.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import types
import warnings
from collections import namedtuple

import numpy as np
import pytest

import tinygrad_attn as tga
import tinygrad_attn.functional as F
from tinygrad_attn import Tensor, nn
from tinygrad_attn.symbolic.compile import Compiled

CALLS = 10


def _model(n_in=4, n_out=2, seed=0):
    tga.manual_seed(seed)
    m = nn.Linear(n_in, n_out)
    for p in m.parameters():
        p._data = p._data.astype(np.float64)
    return m


def _xy(i, n=3, n_in=4, n_out=2):
    rng = np.random.default_rng(100 + i)
    return Tensor(rng.standard_normal((n, n_in))), Tensor(rng.standard_normal((n, n_out)))


def _host(v):
    if isinstance(v, Tensor):
        return v.detach().numpy().copy()
    if isinstance(v, np.ndarray):
        return v.copy()
    if isinstance(v, (list, tuple)):
        return type(v)(_host(x) for x in v) if type(v) in (list, tuple) else tuple(_host(x) for x in v)
    if isinstance(v, dict):
        return {k: _host(x) for k, x in v.items()}
    return v


def _flat(v):
    if isinstance(v, (list, tuple)):
        return [x for item in v for x in _flat(item)]
    if isinstance(v, dict):
        return [("key", k) for k in v] + [x for item in v.values() for x in _flat(item)]
    return [v]


def _same(eager, compiled, label):
    e, c = _flat(eager), _flat(compiled)
    assert len(e) == len(c), (label, e, c)
    for a, b in zip(e, c):
        if isinstance(a, tuple) or a is None or isinstance(a, str):
            assert a == b, (label, a, b)
        elif isinstance(a, np.ndarray) and a.dtype.kind not in "fc":
            np.testing.assert_array_equal(b, a, err_msg=label)
        else:
            if isinstance(a, np.ndarray):
                assert a.dtype == b.dtype, (label, a.dtype, b.dtype)
            assert type(a) is type(b) or isinstance(a, (np.ndarray, np.generic)), (label, type(a), type(b))
            np.testing.assert_allclose(np.asarray(b), np.asarray(a), rtol=1e-9, atol=1e-12, err_msg=label)


def _state(modules):
    out = []
    for m in modules:
        for p in m.parameters():
            out.append(p.detach().numpy().copy())
            out.append(None if p.grad is None else p.grad.detach().numpy().copy())
        for b in m.buffers():
            out.append(b.detach().numpy().copy())
    return out


def compare(build, label="", replays=True):
    """``build()`` -> ``(step, calls, modules)``: ``calls(run)`` makes the ten calls (and the
    changes between them) and returns what it saw; ``modules`` are checked at the end. The
    compiled run must agree with the eager one; with ``replays`` some call must replay."""
    results = []
    for compiled in (False, True):
        tga.manual_seed(0)
        np.random.seed(0)
        step, calls, modules = build()
        run = tga.compile(step, cache_limit=64) if compiled else step
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            seen = calls(run)
        results.append((_host(seen), _state(modules)))
        if compiled and replays:
            assert any(p is not None for p in run.programs.values()), f"{label}: nothing was traced to replay"
    _same(results[0], results[1], label)


# -- the generated matrix: each kind of value x each place it lives ------------------------


def _use(v, out):
    """How a step uses a value of each kind."""
    if isinstance(v, bool):
        return out * 2.0 if v else out
    if isinstance(v, str):
        return {"tanh": tga.tanh, "relu": F.relu, "sigmoid": tga.sigmoid}[v](out)
    if isinstance(v, Tensor):
        return out + v
    if isinstance(v, (int, float, np.generic)):
        return out * v
    if isinstance(v, list):
        return out * v[0] + v[1]
    if isinstance(v, dict):
        return out * v["a"]
    if isinstance(v, np.ndarray):  # (float32: a Python number read from it; float64: a tensor of it)
        return out * float(v[5]) if v.dtype == np.float32 else out * tga.tensor(v[:2])
    if isinstance(v, set):
        return F.relu(out) if "relu" in v else out
    if isinstance(v, types.SimpleNamespace):
        return out * v.a
    return v(out)


def _half(x):
    return x * 0.5


def _cube(x):
    return x * x * x


#: Per kind, the values it takes: the first at the start, then at calls 3, 6 (and back at 8).
KINDS = {
    "float": lambda: [1.0, 0.5, 2.0],
    "int": lambda: [1, 3, 2],
    "bool": lambda: [False, True, False],
    "str": lambda: ["tanh", "relu", "sigmoid"],
    "function": lambda: [_half, _cube, tga.tanh],
    "lambda": lambda: [lambda o: o * 0.5, lambda o: o * 3.0, lambda o: o - 1.0],
    "tensor": lambda: [Tensor(np.zeros(2)), Tensor(np.full(2, 0.5)), Tensor(np.array([1.0, -1.0]))],
    "module": lambda: [nn.Tanh(), nn.Sigmoid(), nn.ReLU()],
    "numpy scalar": lambda: [np.float64(1.0), np.float64(0.25), np.float32(3.0)],
    "numpy int": lambda: [np.int64(1), np.int64(2), np.int32(4)],
}

_GLOBAL_SLOT = None  # a global a step names (set by the "global" place)


@dataclasses.dataclass
class _Config:
    v: object = None


_Pair = namedtuple("_Pair", ["v", "unused"])
_GLOBAL_CFG = types.SimpleNamespace(v=None)  # a config object in a global
_SETTINGS = types.ModuleType("settings")  # a user's settings module (``import settings``)
_SETTINGS.__file__ = __file__.replace("test_compile_user_changes", "settings")


class _Holder(nn.Module):
    def __init__(self, v) -> None:
        super().__init__()
        self.lin = _model()
        self.v = v

    def forward(self, x):
        return _use(self.v, self.lin(x))


class _Trainer:
    def __init__(self, v) -> None:
        self.model = _model()
        self.opt = tga.optim.SGD(self.model.parameters(), lr=0.1)
        self.v = v

    def step(self, x, y):
        loss = ((_use(self.v, self.model(x)) - y) ** 2).mean()
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        return loss


class _ClassLevel:
    v: object = None  # a class attribute the step reads through ``self``

    def __init__(self) -> None:
        self.model = _model()
        self.opt = tga.optim.SGD(self.model.parameters(), lr=0.1)

    def step(self, x, y):
        loss = ((_use(self.v, self.model(x)) - y) ** 2).mean()
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        return loss


def _train(model, opt, v, x, y):
    loss = ((_use(v, model(x)) - y) ** 2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    return loss


def _places():
    """Each place: ``make(v0)`` -> ``(step, set_value, call, modules)``."""

    def closure_cell(v0):
        m = _model()
        opt = tga.optim.SGD(m.parameters(), lr=0.1)
        v = v0

        def step(x, y):
            return _train(m, opt, v, x, y)

        def set_value(new):
            nonlocal v
            v = new

        return step, set_value, lambda run, x, y: run(x, y), [m]

    def closure_list(v0):
        m = _model()
        opt = tga.optim.SGD(m.parameters(), lr=0.1)
        box = [v0]
        return (
            (lambda x, y: _train(m, opt, box[0], x, y)),
            (lambda new: box.__setitem__(0, new)),
            (lambda run, x, y: run(x, y)),
            [m],
        )

    def nested_dict(v0):
        m = _model()
        opt = tga.optim.SGD(m.parameters(), lr=0.1)
        cfg = {"a": {"b": [{"v": v0}]}}
        return (
            (lambda x, y: _train(m, opt, cfg["a"]["b"][0]["v"], x, y)),
            (lambda new: cfg["a"]["b"][0].__setitem__("v", new)),
            (lambda run, x, y: run(x, y)),
            [m],
        )

    def global_name(v0):
        global _GLOBAL_SLOT
        _GLOBAL_SLOT = v0
        m = _model()
        opt = tga.optim.SGD(m.parameters(), lr=0.1)

        def set_value(new):
            global _GLOBAL_SLOT
            _GLOBAL_SLOT = new

        return (lambda x, y: _train(m, opt, _GLOBAL_SLOT, x, y)), set_value, (lambda run, x, y: run(x, y)), [m]

    def module_attribute(v0):
        h = _Holder(v0)
        opt = tga.optim.SGD(h.parameters(), lr=0.1)

        def step(x, y):
            loss = ((h(x) - y) ** 2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            return loss

        return step, (lambda new: setattr(h, "v", new)), (lambda run, x, y: run(x, y)), [h]

    def dataclass_config(v0):
        m = _model()
        opt = tga.optim.SGD(m.parameters(), lr=0.1)
        cfg = _Config(v0)
        return (
            (lambda x, y: _train(m, opt, cfg.v, x, y)),
            (lambda new: setattr(cfg, "v", new)),
            (lambda run, x, y: run(x, y)),
            [m],
        )

    def namespace_config(v0):
        m = _model()
        opt = tga.optim.SGD(m.parameters(), lr=0.1)
        cfg = types.SimpleNamespace(inner=types.SimpleNamespace(v=v0))
        return (
            (lambda x, y: _train(m, opt, cfg.inner.v, x, y)),
            (lambda new: setattr(cfg.inner, "v", new)),
            (lambda run, x, y: run(x, y)),
            [m],
        )

    def positional_argument(v0):
        m = _model()
        opt = tga.optim.SGD(m.parameters(), lr=0.1)
        box = [v0]
        return (
            (lambda x, y, v: _train(m, opt, v, x, y)),
            (lambda new: box.__setitem__(0, new)),
            (lambda run, x, y: run(x, y, box[0])),
            [m],
        )

    def keyword_argument(v0):
        m = _model()
        opt = tga.optim.SGD(m.parameters(), lr=0.1)
        box = [v0]

        def step(x, y, *, v=None):
            return _train(m, opt, v, x, y)

        return step, (lambda new: box.__setitem__(0, new)), (lambda run, x, y: run(x, y, v=box[0])), [m]

    def namedtuple_argument(v0):
        m = _model()
        opt = tga.optim.SGD(m.parameters(), lr=0.1)
        box = [_Pair(v0, 0)]
        return (
            (lambda x, y, p: _train(m, opt, p.v, x, y)),
            (lambda new: box.__setitem__(0, _Pair(new, 0))),
            (lambda run, x, y: run(x, y, box[0])),
            [m],
        )

    def trainer_attribute(v0):
        t = _Trainer(v0)
        return t.step, (lambda new: setattr(t, "v", new)), (lambda run, x, y: run(x, y)), [t.model]

    def class_attribute(v0):
        def plain(v):  # (a function in a class is a method: kept plain as a user writes it)
            return staticmethod(v) if isinstance(v, types.FunctionType) else v

        cls = type("Trainer", (_ClassLevel,), {"v": plain(v0)})
        t = cls()
        return t.step, (lambda new: setattr(cls, "v", plain(new))), (lambda run, x, y: run(x, y)), [t.model]

    def default_argument(v0):
        m = _model()
        opt = tga.optim.SGD(m.parameters(), lr=0.1)

        def step(x, y, v=v0):
            return _train(m, opt, v, x, y)

        def set_value(new):
            step.__defaults__ = (new,)

        return step, set_value, (lambda run, x, y: run(x, y)), [m]

    def partial_argument(v0):
        m = _model()
        opt = tga.optim.SGD(m.parameters(), lr=0.1)
        part = functools.partial(_train, m, opt, v0)

        def set_value(new):
            nonlocal part
            part = functools.partial(_train, m, opt, new)

        return (lambda x, y: part(x, y)), set_value, (lambda run, x, y: run(x, y)), [m]

    def global_object_attribute(v0):
        _GLOBAL_CFG.v = v0
        m = _model()
        opt = tga.optim.SGD(m.parameters(), lr=0.1)
        return (
            (lambda x, y: _train(m, opt, _GLOBAL_CFG.v, x, y)),
            (lambda new: setattr(_GLOBAL_CFG, "v", new)),
            (lambda run, x, y: run(x, y)),
            [m],
        )

    def python_module_attribute(v0):
        _SETTINGS.v = v0
        m = _model()
        opt = tga.optim.SGD(m.parameters(), lr=0.1)
        return (
            (lambda x, y: _train(m, opt, _SETTINGS.v, x, y)),
            (lambda new: setattr(_SETTINGS, "v", new)),
            (lambda run, x, y: run(x, y)),
            [m],
        )

    def module_dict_attribute(v0):
        h = _Holder(None)
        h.cfg = {"v": v0}
        h.forward = types.MethodType(lambda self, x: _use(self.cfg["v"], self.lin(x)), h)
        opt = tga.optim.SGD(h.parameters(), lr=0.1)
        return (
            (lambda x, y: _train(h, opt, 1.0, x, y)),
            (lambda new: h.cfg.__setitem__("v", new)),
            (lambda run, x, y: run(x, y)),
            [h],
        )

    def submodule_attribute(v0):
        net = nn.Sequential(_Holder(v0), nn.Identity())
        opt = tga.optim.SGD(net.parameters(), lr=0.1)
        return (
            (lambda x, y: _train(net, opt, 1.0, x, y)),
            (lambda new: setattr(net[0], "v", new)),
            (lambda run, x, y: run(x, y)),
            [net],
        )

    def param_group_key(v0):
        m = _model()
        opt = tga.optim.SGD(m.parameters(), lr=0.1)
        opt.param_groups[0]["v"] = v0
        return (
            (lambda x, y: _train(m, opt, opt.param_groups[0]["v"], x, y)),
            (lambda new: opt.param_groups[0].__setitem__("v", new)),
            (lambda run, x, y: run(x, y)),
            [m],
        )

    def helper_closure(v0):
        m = _model()
        opt = tga.optim.SGD(m.parameters(), lr=0.1)
        v = v0

        def helper(out):
            return _use(v, out)

        def step(x, y):
            loss = ((helper(m(x)) - y) ** 2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            return loss

        def set_value(new):
            nonlocal v
            v = new

        return step, set_value, (lambda run, x, y: run(x, y)), [m]

    def inner_compiled_closure(v0):
        m = _model()
        opt = tga.optim.SGD(m.parameters(), lr=0.1)
        box = [v0]
        head = tga.compile(lambda out: _use(box[0], out))
        return (
            (lambda x, y: _train(m, opt, head, x, y)),
            (lambda new: box.__setitem__(0, new)),
            (lambda run, x, y: run(x, y)),
            [m],
        )

    def function_attribute(v0):
        m = _model()
        opt = tga.optim.SGD(m.parameters(), lr=0.1)

        def step(x, y):
            return _train(m, opt, step.v, x, y)

        step.v = v0
        return step, (lambda new: setattr(step, "v", new)), (lambda run, x, y: run(x, y)), [m]

    def decorated_function(v0):
        m = _model()
        opt = tga.optim.SGD(m.parameters(), lr=0.1)
        box = [v0]

        def logged(fn):
            @functools.wraps(fn)
            def wrapper(*a):
                return fn(*a)

            return wrapper

        @logged
        def step(x, y):
            return _train(m, opt, box[0], x, y)

        return step, (lambda new: box.__setitem__(0, new)), (lambda run, x, y: run(x, y)), [m]

    return {f.__name__: f for f in (closure_cell, closure_list, nested_dict, global_name, module_attribute,
                                    dataclass_config, namespace_config, positional_argument, keyword_argument,
                                    namedtuple_argument, trainer_attribute, class_attribute, default_argument,
                                    partial_argument, global_object_attribute, python_module_attribute,
                                    module_dict_attribute, submodule_attribute, param_group_key, helper_closure,
                                    inner_compiled_closure, function_attribute, decorated_function)}  # fmt: skip


PLACES = _places()


@pytest.mark.parametrize("place", list(PLACES))
@pytest.mark.parametrize("kind", list(KINDS))
def test_a_value_changed_between_calls(kind, place):
    def build():
        values = KINDS[kind]()
        step, set_value, call, modules = PLACES[place](values[0])
        plan = {3: values[1], 6: values[2], 8: values[0]}

        def calls(run):
            seen = []
            for i in range(CALLS):
                if i in plan:
                    set_value(plan[i])
                seen.append(call(run, *_xy(i)))
            return seen

        return step, calls, modules

    compare(build, f"{kind} in {place}")


# -- hand-written scenarios: the optimizer, the module tree, randomness, side effects, arguments --

SCENARIOS = {}


def scenario(fn):
    SCENARIOS[fn.__name__] = fn
    return fn


def _sgd_world(opt_cls=None, model=None, **opt_kw):
    m = model if model is not None else _model()
    opt = (opt_cls or tga.optim.SGD)(m.parameters(), **({"lr": 0.1} | opt_kw))

    def step(x, y):
        loss = ((m(x) - y) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss

    return m, opt, step


def _ten(run, before=None, args=None):
    seen = []
    for i in range(CALLS):
        if before is not None:
            before(i)
        seen.append(run(*(args(i) if args is not None else _xy(i))))
    return seen


@scenario
def lr_in_param_groups():
    m, opt, step = _sgd_world()
    return step, lambda run: _ten(run, lambda i: opt.param_groups[0].__setitem__("lr", 0.1 / (i + 1))), [m]


@pytest.mark.parametrize("inside", [False, True])
@pytest.mark.parametrize("sched", ["StepLR", "ExponentialLR", "LambdaLR", "CosineAnnealingLR", "MultiStepLR"])
def test_an_lr_scheduler_stepped_between_or_inside_calls(sched, inside):
    def make(opt):
        S = tga.optim.lr_scheduler
        return {"StepLR": lambda: S.StepLR(opt, step_size=2, gamma=0.5),
                "ExponentialLR": lambda: S.ExponentialLR(opt, gamma=0.7),
                "LambdaLR": lambda: S.LambdaLR(opt, lambda e: 1.0 / (1 + e)),
                "CosineAnnealingLR": lambda: S.CosineAnnealingLR(opt, T_max=5),
                "MultiStepLR": lambda: S.MultiStepLR(opt, milestones=[2, 5], gamma=0.3)}[sched]()  # fmt: skip

    def build():
        m = _model()
        opt = tga.optim.Adam(m.parameters(), lr=0.1)
        sch = make(opt)

        def step(x, y):
            loss = ((m(x) - y) ** 2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            if inside:
                sch.step()
            return loss

        def calls(run):
            return _ten(run, None if inside else (lambda i: sch.step() if i else None)), opt.param_groups[0]["lr"]

        return step, calls, [m]

    compare(build, f"{sched} inside={inside}")


@pytest.mark.parametrize(("opt_name", "key", "values"), [
    ("SGD", "weight_decay", [0.0, 0.1, 0.0, 0.3]),
    ("SGD", "momentum", [0.0, 0.9, 0.5, 0.0]),
    ("SGD", "nesterov", [False, True, False, True]),
    ("SGD", "dampening", [0.0, 0.5, 0.0, 0.1]),
    ("Adam", "betas", [(0.9, 0.999), (0.5, 0.9), (0.0, 0.99), (0.9, 0.999)]),
    ("Adam", "weight_decay", [0.0, 0.01, 0.0, 0.1]),
    ("Adam", "amsgrad", [False, True, False, True]),
    ("Adam", "eps", [1e-8, 1e-3, 0.0, 1e-8]),
    ("AdamW", "weight_decay", [0.01, 0.0, 0.5, 0.01]),
    ("RMSprop", "alpha", [0.99, 0.5, 0.9, 0.99]),
    ("RMSprop", "centered", [False, True, False, True]),
    ("Adagrad", "lr_decay", [0.0, 0.1, 0.0, 0.5]),
])  # fmt: skip
def test_an_optimizer_setting_changed_between_calls(opt_name, key, values):
    def build():
        kw = {"momentum": 0.9} if key in ("nesterov", "dampening") else {}
        m, opt, step = _sgd_world(getattr(tga.optim, opt_name), **kw)
        opt.param_groups[0][key] = values[0]
        plan = {3: values[1], 6: values[2], 8: values[3]}
        return step, lambda run: _ten(run, lambda i: i in plan and opt.param_groups[0].__setitem__(key, plan[i])), [m]

    compare(build, f"{opt_name} {key}")


@pytest.mark.parametrize("where", ["inside", "outside"])
@pytest.mark.parametrize("set_to_none", [True, False, "alternating"])
def test_zero_grad_variants(where, set_to_none):
    def build():
        m = _model()
        opt = tga.optim.SGD(m.parameters(), lr=0.1, momentum=0.5)
        flag = [set_to_none if set_to_none != "alternating" else True]

        def step(x, y):
            if where == "inside":
                opt.zero_grad(set_to_none=flag[0])
            loss = ((m(x) - y) ** 2).mean()
            loss.backward()
            opt.step()
            return loss

        def before(i):
            if set_to_none == "alternating":
                flag[0] = i % 2 == 0
            if where == "outside":
                opt.zero_grad(set_to_none=flag[0])

        return step, lambda run: _ten(run, before), [m]

    compare(build, f"zero_grad {where} {set_to_none}")


class _DropNet(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin1 = _model(4, 6)
        self.bn = nn.BatchNorm1d(6)
        self.drop = nn.Dropout(0.5)
        self.lin2 = _model(6, 2, seed=1)
        for b in self.bn.parameters():
            b._data = b._data.astype(np.float64)
        for name in ("running_mean", "running_var"):
            getattr(self.bn, name)._data = getattr(self.bn, name)._data.astype(np.float64)

    def forward(self, x):
        return self.lin2(self.drop(F.relu(self.bn(self.lin1(x)))))


@scenario
def train_eval_toggled_dropout_batchnorm():
    net = _DropNet()
    _, opt, step = _sgd_world(model=net)
    return step, lambda run: _ten(run, lambda i: net.train(i % 3 != 2)), [net]


@scenario
def eval_step_with_no_grad_between_train_steps():
    net = _DropNet()
    _, opt, step = _sgd_world(model=net)

    def evaluate(x):
        with tga.no_grad():
            return net(x)

    def calls(run):
        ev = tga.compile(evaluate) if isinstance(run, Compiled) else evaluate
        seen = []
        for i in range(CALLS):
            net.train()
            seen.append(run(*_xy(i)))
            net.eval()
            seen.append(ev(_xy(i)[0]))
        return seen

    return step, calls, [net]


@scenario
def dropout_masks_differ_per_call_and_follow_manual_seed():
    m = _model()
    drop = nn.Dropout(0.5)
    opt = tga.optim.SGD(m.parameters(), lr=0.1)

    def step(x, y):
        out = drop(m(x))
        loss = ((out - y) ** 2).mean() + (tga.randn_like(y) * 0.01).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss, out.detach(), tga.rand(3)

    def before(i):
        if i in (4, 7):
            tga.manual_seed(123)

    return step, lambda run: _ten(run, before), [m]


@scenario
def freezing_a_layer_with_requires_grad():
    net = nn.Sequential(_model(4, 3), nn.Tanh(), _model(3, 2, seed=1))
    _, opt, step = _sgd_world(model=net)

    def before(i):
        if i in (3, 6, 8):
            for p in net[0].parameters():
                p.requires_grad_(not p.requires_grad)

    return step, lambda run: _ten(run, before), [net]


@pytest.mark.parametrize("how", ["data_assigned", "data_copy_", "no_grad_mul_", "data_mul_", "copy_no_grad",
                                 "load_state_dict", "param_replaced"])  # fmt: skip
def test_parameter_values_changed_between_calls(how):
    def build():
        m, opt, step = _sgd_world(tga.optim.Adam)

        def before(i):
            if i not in (3, 7):
                return
            w = m.weight
            if how == "data_assigned":
                w.data = Tensor(np.full(w.shape, 0.1))
            elif how == "data_copy_":
                w.data.copy_(Tensor(np.full(w.shape, -0.2)))
            elif how == "no_grad_mul_":
                with tga.no_grad():
                    w.mul_(0)
            elif how == "data_mul_":
                w.data.mul_(0.5)
            elif how == "copy_no_grad":
                with tga.no_grad():
                    w.copy_(Tensor(np.ones(w.shape)))
            elif how == "load_state_dict":
                m.load_state_dict({k: Tensor(np.full(v.shape, 0.3)) for k, v in m.state_dict().items()})
            elif how == "param_replaced":
                m.weight = nn.Parameter(Tensor(np.full(w.shape, 0.05)))
                opt.param_groups[0]["params"][0] = m.weight

        return step, lambda run: _ten(run, before), [m]

    compare(build, how)


class _Extra(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = _model()

    def forward(self, x):
        out = self.lin(x)
        for name in ("extra", "bias2"):
            if hasattr(self, name):
                out = out * getattr(self, name) if name == "extra" else out + getattr(self, name)
        return out


@pytest.mark.parametrize("how", ["parameter_added_removed", "submodule_appended", "layer_replaced",
                                 "buffer_added", "plain_attribute_deleted"])  # fmt: skip
def test_the_module_tree_changed_between_calls(how):
    def build():
        if how == "submodule_appended":
            net = nn.Sequential(_model(4, 2))
        elif how == "layer_replaced":
            net = nn.Sequential(_model(4, 2), nn.Tanh())
        else:
            net = _Extra()
        opt = tga.optim.SGD(net.parameters(), lr=0.1)

        def step(x, y):
            loss = ((net(x) - y) ** 2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            return loss

        def before(i):
            if how == "parameter_added_removed":
                if i == 3:
                    net.extra = nn.Parameter(Tensor(np.full(2, 1.5)))
                    opt.add_param_group({"params": [net.extra]})
                if i == 6:
                    del net.extra
                    opt.param_groups.pop()
            elif how == "submodule_appended" and i in (3, 6):
                net.append(nn.Tanh() if i == 3 else nn.Sigmoid())
            elif how == "layer_replaced" and i in (3, 6):
                net[1] = nn.Sigmoid() if i == 3 else nn.ReLU()
            elif how == "buffer_added" and i == 3:
                net.register_buffer("bias2", Tensor(np.full(2, 0.25)))
            elif how == "plain_attribute_deleted":
                if i == 2:
                    net.bias2 = Tensor(np.full(2, -0.5))
                if i == 5:
                    del net.bias2

        return step, lambda run: _ten(run, before), [net]

    compare(build, how)


@scenario
def tensor_hook_registered_then_removed():
    m, opt, step = _sgd_world()
    handle = [None]

    def before(i):
        if i == 3:
            handle[0] = m.weight.register_hook(lambda g: g * 0.0)
        if i == 6:
            handle[0].remove()

    return step, lambda run: _ten(run, before), [m]


@scenario
def optimizer_step_hook_registered_between_calls():
    m, opt, step = _sgd_world()
    count = [0]
    handle = [None]

    def hook(o, args, kwargs):
        count[0] += 1

    def before(i):
        if i == 3:
            handle[0] = opt.register_step_post_hook(hook)
        if i == 6:
            handle[0].remove()

    return step, lambda run: (_ten(run, before), count[0]), [m]


@pytest.mark.parametrize("source", ["python_random", "numpy_global", "numpy_generator", "numpy_tensor"])
def test_host_randomness_inside_the_step(source):
    import random

    def build():
        random.seed(0)
        np.random.seed(0)
        gen = np.random.default_rng(0)
        m, opt, _ = _sgd_world()

        def step(x, y):
            if source == "python_random":
                c = random.random()
            elif source == "numpy_global":
                c = float(np.random.rand())
            elif source == "numpy_generator":
                c = gen.standard_normal()
            else:
                c = Tensor(np.random.rand(2))
            loss = ((m(x) * c - y) ** 2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            return loss

        return step, _ten, [m]

    compare(build, source, replays=False)


@scenario
def print_inside_the_step(capsys=None):
    m, opt, step0 = _sgd_world()
    lines = []

    def step(x, y):
        loss = step0(x, y)
        print("step done", file=_Sink(lines))
        return loss

    return step, lambda run: (_ten(run), len(lines)), [m]


class _Sink:
    def __init__(self, lines) -> None:
        self.lines = lines

    def write(self, s):
        if s.strip():
            self.lines.append(s)

    def flush(self):
        pass


def test_print_to_stdout_inside_the_step_prints_at_every_call(capsys):
    m, opt, step0 = _sgd_world()

    def step(x, y):
        loss = step0(x, y)
        print("one step")
        return loss

    run = tga.compile(step)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for i in range(CALLS):
            run(*_xy(i))
    assert capsys.readouterr().out.count("one step") == CALLS


@scenario
def iterator_argument_consumed_inside():
    m, opt, _ = _sgd_world()

    def step(x, y, scales):
        loss = ((m(x) * next(scales) - y) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss

    def calls(run):
        it = iter([0.5, 1.0, 2.0, 3.0, 0.1, 0.2, 0.3, 0.4, 0.6, 0.7])
        return [run(*_xy(i), it) for i in range(CALLS)]

    return step, calls, [m]


@scenario
def generator_in_closure_consumed_inside():
    m, opt, _ = _sgd_world()

    def scales():
        k = 1.0
        while True:
            yield k
            k *= 0.5

    gen = scales()

    def step(x, y):
        loss = ((m(x) * next(gen) - y) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss

    return step, _ten, [m]


@scenario
def keyword_present_then_absent():
    m, opt, _ = _sgd_world()

    def step(x, y, scale=1.0, mask=None):
        out = m(x) * scale
        if mask is not None:
            out = out * mask
        loss = ((out - y) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss

    def calls(run):
        seen = []
        for i in range(CALLS):
            x, y = _xy(i)
            kw = [{}, {"scale": 2.0}, {"mask": Tensor(np.array([1.0, 0.0]))}, {"mask": None, "scale": 0.5}][i % 4]
            seen.append(run(x, y, **kw))
        return seen

    return step, calls, [m]


@scenario
def batch_size_dtype_and_shape_change():
    m, opt, step = _sgd_world()

    def args(i):
        return _xy(i, n=[3, 5, 1, 3][i % 4])

    return step, lambda run: _ten(run, None, args), [m]


@scenario
def int_argument_used_as_a_shape():
    m, opt, _ = _sgd_world()

    def step(x, y, n):
        loss = ((m(x.reshape(n, -1)[:, :4]) - y[:n]) ** 2).mean() + tga.zeros(n).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss

    def args(i):
        x, y = _xy(i, n=4)
        return x, y, [4, 2, 4, 1][i % 4] if i % 4 != 1 else 4

    return step, lambda run: _ten(run, None, args), [m]


@scenario
def string_mode_argument():
    m, opt, _ = _sgd_world()

    def step(x, y, mode):
        out = m(x)
        if mode == "train":
            loss = ((out - y) ** 2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            return loss
        return out.detach()

    return step, lambda run: _ten(run, None, lambda i: (*_xy(i), ["train", "eval", "train"][i % 3])), [m]


@scenario
def tensor_argument_is_a_view_of_another():
    m, opt, step = _sgd_world()
    base = Tensor(np.random.default_rng(1).standard_normal((6, 4)))

    def args(i):
        with tga.no_grad():
            base.mul_(0.9).add_(0.1)
        _, y = _xy(i)
        return [base[1:4], base[::2], base.T.T[:3]][i % 3], y

    return step, lambda run: _ten(run, None, args), [m]


@scenario
def returning_python_numbers_lists_and_dicts():
    m, opt, _ = _sgd_world()

    def step(x, y):
        out = m(x)
        loss = ((out - y) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        return {"loss": loss, "parts": [out, loss * 2], "n": 3, "name": "mse", "pair": (loss.detach(), None)}

    return step, _ten, [m]


@scenario
def accumulating_losses_into_a_global_list():
    m, opt, step0 = _sgd_world()
    history = []

    def step(x, y):
        loss = step0(x, y)
        history.append(loss.detach())
        return loss

    return step, lambda run: (_ten(run), history), [m]


@scenario
def gradient_accumulation_across_calls():
    m = _model()
    opt = tga.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)

    def step(x, y):
        loss = ((m(x) - y) ** 2).mean() / 2
        loss.backward()
        return loss

    def calls(run):
        seen = []
        for i in range(CALLS):
            seen.append(run(*_xy(i)))
            if i % 2 == 1:
                opt.step()
                opt.zero_grad()
        return seen

    return step, calls, [m]


@scenario
def a_step_calling_another_compiled_function():
    m, opt, _ = _sgd_world()
    loss_fn = tga.compile(lambda out, y: ((out - y) ** 2).mean())
    scale = [1.0]

    def step(x, y):
        loss = loss_fn(m(x) * scale[0], y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss, loss_fn(m(x), y)

    return step, lambda run: _ten(run, lambda i: scale.__setitem__(0, 1.0 + (i > 4))), [m]


@scenario
def mixing_compile_and_jit_trace():
    m, opt, _ = _sgd_world()
    x0 = _xy(0)[1]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        head = tga.jit.trace(lambda a: tga.tanh(a) * 2.0, x0)

    def step(x, y):
        loss = ((m(x) - head(y)) ** 2).mean()  # (a traced program has no backward: on the target)
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss

    return step, _ten, [m]


@scenario
def an_exception_inside_the_step():
    m, opt, _ = _sgd_world()
    bad = [False]

    def step(x, y):
        loss = ((m(x) - y) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        if bad[0]:
            raise ValueError("bad batch")
        opt.step()
        return loss

    def calls(run):
        seen = []
        for i in range(CALLS):
            bad[0] = i in (0, 4, 5)
            try:
                seen.append(run(*_xy(i)))
            except ValueError as e:
                seen.append(str(e))
        return seen

    return step, calls, [m]


@scenario
def default_dtype_changed_between_calls():
    m, opt, _ = _sgd_world()

    def step(x, y):
        c = tga.tensor(0.1)
        loss = ((m(x) - y) ** 2).mean() + tga.ones(2).sum() * c
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss, c, tga.zeros(3)

    def before(i):
        tga.set_default_dtype(tga.float64 if i in (3, 4, 5) else tga.float32)

    def calls(run):
        try:
            return _ten(run, before)
        finally:
            tga.set_default_dtype(tga.float32)

    return step, calls, [m]


@scenario
def set_grad_enabled_inside_the_step():
    m, opt, _ = _sgd_world()
    flag = [True]

    def step(x, y):
        with tga.set_grad_enabled(flag[0]):
            out = m(x)
        loss = ((out - y) ** 2).mean()
        if loss.requires_grad:
            opt.zero_grad()
            loss.backward()
            opt.step()
        return loss

    return step, lambda run: _ten(run, lambda i: flag.__setitem__(0, i % 3 != 1)), [m]


@scenario
def ema_target_updated_under_no_grad_inside():
    m, opt, step0 = _sgd_world()
    target = _model(seed=3)
    decay = [0.9]

    def step(x, y):
        loss = step0(x, y)
        with tga.no_grad():
            for t, p in zip(target.parameters(), m.parameters()):
                t.mul_(decay[0]).add_(p * (1 - decay[0]))
        return loss, target(x)

    return step, lambda run: _ten(run, lambda i: decay.__setitem__(0, 0.5 if i > 5 else 0.9)), [m, target]


@scenario
def python_counter_inside_the_step_for_warmup():
    m, opt, _ = _sgd_world()
    count = [0]

    def step(x, y):
        count[0] += 1
        loss = ((m(x) - y) ** 2).mean() * min(1.0, count[0] / 4)
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss

    return step, lambda run: (_ten(run), count[0]), [m]


@scenario
def model_dtype_changed_between_calls():
    m, opt, step = _sgd_world()

    def args(i):
        x, y = _xy(i)
        if i == 5:
            m.to(tga.float32)
        if i >= 5:
            return Tensor(x.detach().numpy().astype(np.float32)), Tensor(y.detach().numpy().astype(np.float32))
        return x, y

    return step, lambda run: _ten(run, None, args), [m]


@scenario
def loss_item_returned():
    m, opt, _ = _sgd_world()

    def step(x, y):
        loss = ((m(x) - y) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss.item()

    return step, _ten, [m]


@scenario
def bound_method_decorated_with_compile():
    class Trainer:
        def __init__(self) -> None:
            self.model = _model()
            self.opt = tga.optim.SGD(self.model.parameters(), lr=0.1)
            self.scale = 1.0

        def step(self, x, y):
            loss = ((self.model(x) * self.scale - y) ** 2).mean()
            self.opt.zero_grad()
            loss.backward()
            self.opt.step()
            return loss

    t = Trainer()

    def calls(run):
        seen = []
        for i in range(CALLS):
            if i == 4:
                t.scale = 0.5
            if i == 7:
                t.model = _model(seed=5)
                t.opt = tga.optim.SGD(t.model.parameters(), lr=0.2)
            seen.append(run(*_xy(i)))
        seen += [p for p in t.model.parameters()]
        return seen

    return t.step, calls, []


@scenario
def a_numpy_argument_and_numpy_results():
    m, opt, _ = _sgd_world()

    def step(x, y):
        loss = ((m(Tensor(x)) - Tensor(y)) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss, x

    return step, lambda run: _ten(run, None, lambda i: tuple(t.detach().numpy() for t in _xy(i))), [m]


@scenario
def optimizer_state_cleared_or_loaded():
    m, opt, step = _sgd_world(tga.optim.Adam)
    saved = {}

    def before(i):
        if i == 2:
            saved["sd"] = {"state": {k: dict(v) for k, v in opt.state_dict()["state"].items()}}
            saved["sd"] = opt.state_dict()
        if i == 4:
            opt.state.clear()
        if i == 7:
            opt.load_state_dict(saved["sd"])

    return step, lambda run: _ten(run, before), [m]


@scenario
def module_settings_changed_as_attributes():
    net = _DropNet()
    loss_fn = nn.MSELoss()
    opt = tga.optim.SGD(net.parameters(), lr=0.1)

    def step(x, y):
        loss = loss_fn(net(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss

    def before(i):
        if i == 2:
            net.drop.p = 0.0
        if i == 4:
            loss_fn.reduction = "sum"
        if i == 6:
            net.bn.momentum = 0.5
        if i == 8:
            net.bn.eps = 0.1

    return step, lambda run: _ten(run, before), [net]


@scenario
def manual_sgd_with_a_global_learning_rate():
    m = _model()

    def step(x, y):
        loss = ((m(x) - y) ** 2).mean()
        grads = tga.autograd.grad(loss, list(m.parameters()))
        with tga.no_grad():
            for p, g in zip(m.parameters(), grads):
                p.sub_(_LR[0] * g)
        return loss

    def before(i):
        _LR[0] = 0.1 / (1 + i // 3)

    return step, lambda run: _ten(run, before), [m]


_LR = [0.1]


@scenario
def manual_update_through_data_and_grad_zero():
    m = _model()
    lr = [0.1]

    def step(x, y):
        loss = ((m(x) - y) ** 2).mean()
        loss.backward()
        for p in m.parameters():
            p.data -= lr[0] * p.grad
            p.grad.zero_()
        return loss

    return step, lambda run: _ten(run, lambda i: lr.__setitem__(0, 0.05 if i > 4 else 0.1)), [m]


@scenario
def input_gradients_for_an_adversarial_step():
    m = _model()

    def step(x, y):
        x.requires_grad_(True)
        loss = ((m(x) - y) ** 2).mean()
        loss.backward()
        x_adv = (x + 0.1 * x.grad.sign()).detach()
        return loss, x_adv, x.grad

    return step, _ten, [m]


@scenario
def step_mutates_its_argument_and_a_closure_tensor():
    m, opt, step0 = _sgd_world()
    count = Tensor(np.zeros(()))
    seen_x = []

    def step(x, y):
        loss = step0(x, y)
        with tga.no_grad():
            x.mul_(2.0)
            count.add_(1.0)
        return loss

    def calls(run):
        out = []
        for i in range(CALLS):
            x, y = _xy(i)
            out.append(run(x, y))
            seen_x.append(x.detach().numpy().copy())
        return out, seen_x, count

    return step, calls, [m]


@scenario
def step_stores_its_output_on_the_model():
    m, opt, step0 = _sgd_world()

    def step(x, y):
        loss = step0(x, y)
        m.last = loss.detach()
        return loss

    return step, lambda run: (_ten(run), m.last), [m]


@scenario
def manual_seed_inside_the_step():
    m = _model()
    drop = nn.Dropout(0.3)
    opt = tga.optim.SGD(m.parameters(), lr=0.1)

    def step(x, y):
        tga.manual_seed(7)
        loss = ((drop(m(x)) - y) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss, tga.rand(2)

    return step, lambda run: (_ten(run), tga.rand(2)), [m]


@scenario
def optimizer_step_with_a_closure():
    m = _model()
    opt = tga.optim.SGD(m.parameters(), lr=0.1, momentum=0.5)

    def step(x, y):
        def closure():
            opt.zero_grad()
            loss = ((m(x) - y) ** 2).mean()
            loss.backward()
            return loss

        return opt.step(closure)

    return step, _ten, [m]


@scenario
def backward_twice_with_retain_graph():
    m, opt, _ = _sgd_world()

    def step(x, y):
        out = m(x)
        l1 = ((out - y) ** 2).mean()
        l2 = out.abs().mean()
        opt.zero_grad()
        l1.backward(retain_graph=True)
        l2.backward()
        opt.step()
        return l1 + l2

    return step, _ten, [m]


@scenario
def retain_grad_on_an_intermediate():
    m, opt, _ = _sgd_world()

    def step(x, y):
        h = m(x)
        h.retain_grad()
        loss = ((h - y) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss, h.grad

    return step, _ten, [m]


@scenario
def weights_tied_between_calls():
    net = nn.Sequential(_model(4, 4), nn.Tanh(), _model(4, 4, seed=1), _model(4, 2, seed=2))
    opt = tga.optim.SGD(net.parameters(), lr=0.1)

    def step(x, y):
        loss = ((net(x) - y) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss

    def before(i):
        if i == 4:
            net[2].weight = net[0].weight

    return step, lambda run: _ten(run, before), [net]


@scenario
def weights_reinitialised_between_calls():
    m, opt, step = _sgd_world(tga.optim.Adam)

    def before(i):
        if i in (3, 7):
            tga.manual_seed(i)
            nn.init.normal_(m.weight)
            nn.init.zeros_(m.bias)

    return step, lambda run: _ten(run, before), [m]


@scenario
def grad_scaler_training_step():
    m = _model()
    opt = tga.optim.SGD(m.parameters(), lr=0.1)
    scaler = tga.amp.GradScaler("cpu", init_scale=4.0, growth_interval=3)

    def step(x, y):
        loss = ((m(x) - y) ** 2).mean()
        opt.zero_grad()
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        return loss

    return step, lambda run: (_ten(run), scaler.get_scale(), scaler.state_dict()), [m]


@scenario
def compiled_module_called_with_changing_attributes():
    h = _Holder(1.0)

    def calls(run):
        seen = []
        for i in range(CALLS):
            if i in (3, 6):
                h.v = [0.5, 2.0][i // 6]
            with tga.no_grad():
                seen.append(run(_xy(i)[0]))
        return seen

    return h, calls, [h]


@scenario
def global_grad_mode_changed_between_calls():
    m, opt, _ = _sgd_world()

    def step(x, y):
        out = m(x)
        loss = ((out - y) ** 2).mean()
        if loss.requires_grad:
            opt.zero_grad()
            loss.backward()
            opt.step()
        return loss

    def calls(run):
        seen = []
        for i in range(CALLS):
            tga.set_grad_enabled(i % 4 != 3)
            try:
                seen.append(run(*_xy(i)))
            finally:
                tga.set_grad_enabled(True)
        return seen

    return step, calls, [m]


@scenario
def list_of_tensors_argument_of_changing_length():
    m, opt, _ = _sgd_world()

    def step(xs, y):
        loss = sum(((m(x) - y) ** 2).mean() for x in xs)
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss

    def args(i):
        x, y = _xy(i)
        return [x * (k + 1) for k in range(1 + i % 3)], y

    return step, lambda run: _ten(run, None, args), [m]


@scenario
def dict_argument_with_changing_keys():
    m, opt, _ = _sgd_world()

    def step(batch):
        loss = ((m(batch["x"]) - batch["y"]) ** 2).mean()
        if "w" in batch:
            loss = loss * batch["w"]
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss

    def args(i):
        x, y = _xy(i)
        return ({"x": x, "y": y} if i % 2 else {"y": y, "x": x, "w": 0.5},)

    return step, lambda run: _ten(run, None, args), [m]


@scenario
def the_same_tensor_passed_twice_then_two():
    m, opt, _ = _sgd_world()

    def step(a, b, y):
        loss = ((m(a) + m(b) - y) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss

    def args(i):
        x, y = _xy(i)
        return (x, x, y) if i % 2 else (x, x * 1.0, y)

    return step, lambda run: _ten(run, None, args), [m]


@scenario
def a_parameter_passed_as_an_argument():
    m, opt, _ = _sgd_world()

    def step(x, y, w):
        loss = ((x @ w.T - y) ** 2).mean() + ((m(x) - y) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss

    return step, lambda run: _ten(run, None, lambda i: (*_xy(i), m.weight)), [m]


@scenario
def post_accumulate_grad_hook_registered_between_calls():
    m, opt, step = _sgd_world()
    seen = []
    handle = [None]

    def before(i):
        if i == 2:
            handle[0] = m.weight.register_post_accumulate_grad_hook(
                lambda p: seen.append(p.grad.detach().numpy().copy())
            )
        if i == 6:
            handle[0].remove()

    return step, lambda run: (_ten(run, before), seen), [m]


@scenario
def forward_replaced_on_the_instance_and_on_the_class():
    class Net(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.lin = _model()

        def forward(self, x):
            return self.lin(x)

    net = Net()
    _, opt, step = _sgd_world(model=net)

    def before(i):
        if i == 3:
            net.forward = lambda x: net.lin(x) * 2.0
        if i == 5:
            del net.forward
        if i == 7:
            Net.forward = lambda self, x: tga.tanh(self.lin(x))

    return step, lambda run: _ten(run, before), [net]


@scenario
def in_place_write_into_a_view_argument():
    m, opt, step0 = _sgd_world()
    base = Tensor(np.zeros((6, 4)))

    def step(x, y):
        loss = step0(x, y)
        with tga.no_grad():
            x[0] = loss
        return loss

    def calls(run):
        out = []
        for i in range(CALLS):
            x, y = _xy(i)
            with tga.no_grad():
                base[1:4] = x
            out.append(run(base[1:4], y))
            out.append(base.detach().numpy().copy())
        return out

    return step, calls, [m]


def _decorated_run(compiled):
    global _DECORATED
    m, opt, _ = _sgd_world()

    def step(x, y):
        loss = ((m(x) * _DECORATED.scale - y) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss

    _DECORATED = run = tga.compile(step) if compiled else step
    run.scale = 1.0
    losses = []
    for i in range(CALLS):
        if i in (3, 6):
            run.scale = 0.5 * i
        losses.append(run(*_xy(i)).detach().numpy())
    return losses


def test_an_attribute_of_the_compiled_function_itself():
    """``@tga.compile`` then ``step.scale = ...``: the attribute is on the compiled object,
    which the step's code names as a global."""
    np.testing.assert_allclose(_decorated_run(True), _decorated_run(False), rtol=1e-9)


_DECORATED = None


@scenario
def a_vae_step_with_a_distribution_made_inside():
    enc, dec = _model(4, 4), _model(2, 4, seed=1)
    opt = tga.optim.Adam([*enc.parameters(), *dec.parameters()], lr=0.01)

    def step(x, y):
        h = enc(x)
        mu, log_sigma = h[:, :2], h[:, 2:]
        q = tga.distributions.Normal(mu, log_sigma.exp())
        z = q.rsample()
        prior = tga.distributions.Normal(tga.zeros_like(mu), tga.ones_like(mu))
        kl = tga.distributions.kl_divergence(q, prior).sum(-1).mean()
        loss = ((dec(z) - x) ** 2).mean() + kl - q.log_prob(z).mean() * 0.0
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss, kl

    return step, _ten, [enc, dec]


@scenario
def a_prior_distribution_held_across_calls():
    m, opt, _ = _sgd_world()
    prior = tga.distributions.Normal(Tensor(np.zeros(2)), Tensor(np.ones(2)))
    box = [prior]

    def step(x, y):
        loss = -box[0].log_prob(m(x)).mean() + ((m(x) - y) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss

    def before(i):
        if i == 2:
            with tga.no_grad():
                box[0].loc.add_(0.5)
        if i == 4:
            box[0].loc = Tensor(np.full(2, -1.0))
        if i == 6:
            box[0].scale = Tensor(np.full(2, 2.0))
        if i == 8:
            box[0] = tga.distributions.Normal(Tensor(np.ones(2)), Tensor(np.full(2, 0.5)))

    return step, lambda run: _ten(run, before), [m]


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_a_user_scenario(name):
    try:
        compare(SCENARIOS[name], name, replays=name not in _MAY_RUN_EAGERLY)
    except tga.TraceError as e:  # (allowed only where the message names the user's line)
        assert "test_compile_user_changes.py" in str(e), str(e)
        assert name in _MAY_RAISE, f"{name}: {e}"


#: Scenarios whose compiled step may end up eager at every call (correct, nothing to replay).
_MAY_RUN_EAGERLY = {"iterator_argument_consumed_inside", "generator_in_closure_consumed_inside",
                    "python_counter_inside_the_step_for_warmup", "accumulating_losses_into_a_global_list",
                    "print_inside_the_step", "an_exception_inside_the_step", "loss_item_returned",
                    "a_numpy_argument_and_numpy_results", "mixing_compile_and_jit_trace",
                    "step_stores_its_output_on_the_model", "input_gradients_for_an_adversarial_step",
                    "manual_seed_inside_the_step", "grad_scaler_training_step"}  # fmt: skip
#: Scenarios where a TraceError naming the line is the promised answer.
_MAY_RAISE = {"tensor_hook_registered_then_removed", "loss_item_returned"}


def _set_numbers(arr, c):
    arr[:] = c


#: Mutable values changed in place (no new object): ``(make, change(v, c))``, changed at calls 3, 6, 8.
MUTABLE_KINDS = {
    "list of numbers": (lambda: [1.0, 0.0], lambda v, c: v.__setitem__(0, c)),
    "dict of numbers": (lambda: {"a": 1.0}, lambda v, c: v.__setitem__("a", c)),
    "small numpy array": (lambda: np.array([1.0, 0.5]), _set_numbers),
    "large numpy array": (lambda: np.ones(4096), _set_numbers),
    "large numpy array read as a number": (lambda: np.ones(4096, dtype=np.float32), _set_numbers),
    "set of flags": (lambda: set(), lambda v, c: v.add("relu") if c > 1 else v.discard("relu")),
    "namespace": (lambda: types.SimpleNamespace(a=1.0), lambda v, c: setattr(v, "a", c)),
    "tensor": (lambda: Tensor(np.ones(2)), lambda v, c: v.fill_(c)),
}


@pytest.mark.parametrize("place", [p for p in PLACES if p not in ("class_attribute",)])
@pytest.mark.parametrize("kind", list(MUTABLE_KINDS))
def test_a_value_changed_in_place_between_calls(kind, place):
    def build():
        make, change = MUTABLE_KINDS[kind]
        v = make()
        step, _, call, modules = PLACES[place](v)
        plan = {3: 2.0, 6: 0.5, 8: 1.0}

        def calls(run):
            seen = []
            for i in range(CALLS):
                if i in plan:
                    change(v, plan[i])
                seen.append(call(run, *_xy(i)))
            return seen

        return step, calls, modules

    # (a NumPy argument read in Python, not as a tensor, runs eagerly: nothing to replay)
    compare(build, f"{kind} in {place}", replays=not ("numpy" in kind and "argument" in place))


# -- every public function of one or two tensors, inside a compiled function -----------------

#: Functions whose result is a random draw (two eager calls differ too), or that set global state.
_NOT_PURE = {"rand_like", "randn_like", "randint_like", "bernoulli", "normal", "poisson", "multinomial", "compile",
             "manual_seed", "seed", "set_default_dtype", "set_printoptions", "load", "save", "set_grad_enabled",
             "use_deterministic_algorithms", "set_default_device", "set_num_threads", "set_rng_state",
             "set_flush_denormal", "empty_like", "empty"}  # fmt: skip


def _values(i, shape=(3, 4)):
    a = np.random.default_rng(10 + i).standard_normal(shape) * (i + 1)
    if shape == (3, 4):  # (masks and checks of special values change too)
        a[0, 0] = [np.nan, np.inf, -0.0, 2.0][i % 4]
    return a


def _close(got, want, msg):
    """Equal, floats to rounding (a replay's fused loops round as they do, not as eager's ops)."""
    assert got.dtype == want.dtype, msg
    g, w = (t.float() if t.dtype == tga.bfloat16 else t for t in (got, want))  # (numpy() has no bfloat16)
    g, w = g.detach().numpy(), w.detach().numpy()
    if w.dtype.kind in "fc":
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=0, equal_nan=True, err_msg=msg)
    else:
        np.testing.assert_array_equal(g, w, err_msg=msg)


_NAMESPACES = {"tga": tga, "F": F, "linalg": tga.linalg, "special": tga.special}
_SHAPES = ((3, 4), (4, 4), (2, 3, 4, 4))  # (the first each function takes: matrices, images)


def _public_functions():
    for space, mod in _NAMESPACES.items():
        for name in sorted(n for n in dir(mod) if not n.startswith("_") and n not in _NOT_PURE):
            f = getattr(mod, name)
            if "dropout" in name or name in ("rrelu", "gumbel_softmax") or not callable(f):
                continue
            if isinstance(f, type) or isinstance(f, types.ModuleType):
                continue
            found = _first_call(f)
            if found is not None:
                yield (space, name, *found)


def _first_call(f):
    """``(arity, shape)`` of the first call of ``f`` on 1 or 2 tensors that returns a tensor."""
    for shape in _SHAPES:
        for arity in (1, 2):
            try:
                with np.errstate(all="ignore"), warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    out = f(*[Tensor(_values(0, shape)) for _ in range(arity)])
            except Exception:  # noqa: BLE001 - not a function of this many tensors of this shape
                continue
            return (arity, shape) if isinstance(out, Tensor) else None
    return None


@pytest.mark.parametrize(("space", "name", "arity", "shape"), list(_public_functions()))
def test_a_public_function_of_arguments_is_computed_again_at_each_replay(space, name, arity, shape):
    """A function computed on the arguments' arrays outside an op would be a constant of the
    program: the traced call's mask (``isnan``), check (``all``) or copy (``clone``) at every
    replay. Each must agree with eager on new values, or raise a TraceError naming the line."""
    f = getattr(_NAMESPACES[space], name)

    def step(*a):
        return f(*a)

    run = tga.compile(step)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for i in range(4):
            a = [Tensor(_values(i, shape)) for _ in range(arity)]
            want = f(*a)
            try:
                got = run(*a)
            except tga.TraceError as e:
                assert "test_compile_user_changes.py" in str(e), str(e)
                return
            assert got.shape == want.shape and got.dtype == want.dtype, (name, i)
            _close(got, want, f"{name} call {i}")


_RANDOM_METHODS = {"dropout", "rand", "randn", "bernoulli", "bernoulli_", "normal_", "uniform_", "random_",
                   "exponential_", "geometric_", "cauchy_", "log_normal_", "rand_like", "randn_like"}  # fmt: skip
_NOT_A_STEP = {"register_hook", "backward", "retain_grad", "share_memory_", "requires_grad_", "pin_memory",
               "from_dlpack"}  # fmt: skip
# (a result of another layout: tga.compile traces programs of dense tensors only)
_NOT_A_STEP |= {"to_sparse"}


def _tensor_methods():
    for name in sorted(dir(Tensor)):
        if name.startswith("__") or name in _RANDOM_METHODS or name in _NOT_A_STEP:
            continue
        try:
            attr = getattr(Tensor, name)
        except Exception:  # noqa: BLE001 - a property that needs an instance
            continue
        if not callable(attr) or isinstance(attr, type):
            continue
        for arity in (0, 1):
            try:
                with np.errstate(all="ignore"), warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    out = getattr(Tensor(_values(0)), name)(*[Tensor(_values(0)) for _ in range(arity)])
            except Exception:  # noqa: BLE001 - not a method of this many tensors
                continue
            if isinstance(out, Tensor):
                yield name, arity
            break


@pytest.mark.parametrize(("name", "arity"), list(_tensor_methods()))
def test_a_tensor_method_on_arguments_is_computed_again_at_each_replay(name, arity):
    """As above for each method (in-place ones too: the argument afterwards is compared)."""

    def step(x, *a):
        r = getattr(x, name)(*a)
        return r * 1.0 if r.dtype.kind in "fc" else r  # (a result of its own, not the argument)

    run = tga.compile(step)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for i in range(4):
            a = [Tensor(_values(i)) for _ in range(arity)]
            x_eager, x_compiled = Tensor(_values(i)), Tensor(_values(i))
            want = step(x_eager, *a)
            try:
                got = run(x_compiled, *a)
            except tga.TraceError as e:
                assert "test_compile_user_changes.py" in str(e), str(e)
                return
            assert got.shape == want.shape and got.dtype == want.dtype, (name, i)
            _close(got, want, f"{name} call {i}")
            _close(x_compiled, x_eager, f"{name} call {i}: x")


# -- each loss a user trains with, inside a compiled step ----------------------------------------


def _targets(i, kind):
    rng = np.random.default_rng(300 + i)
    if kind == "class":
        return Tensor(rng.integers(0, 2, 3))
    if kind == "prob":
        return Tensor(rng.random((3, 2)))
    if kind == "sign":
        return Tensor(np.where(rng.random(3) < 0.5, -1.0, 1.0))
    return Tensor(rng.standard_normal((3, 2)))


LOSSES = {
    "mse": (lambda o, t: F.mse_loss(o, t), "real"),
    "l1": (lambda o, t: F.l1_loss(o, t), "real"),
    "smooth_l1": (lambda o, t: F.smooth_l1_loss(o, t, beta=0.5), "real"),
    "huber": (lambda o, t: F.huber_loss(o, t, delta=0.7), "real"),
    "cross_entropy": (lambda o, t: F.cross_entropy(o, t), "class"),
    "cross_entropy_smoothing": (lambda o, t: F.cross_entropy(o, t, label_smoothing=0.1), "class"),
    "cross_entropy_ignore": (lambda o, t: F.cross_entropy(o, t, ignore_index=1), "class"),
    "nll": (lambda o, t: F.nll_loss(F.log_softmax(o, -1), t), "class"),
    "bce": (lambda o, t: F.binary_cross_entropy(tga.sigmoid(o), t), "prob"),
    "bce_logits": (lambda o, t: F.binary_cross_entropy_with_logits(o, t), "prob"),
    "kl_div": (lambda o, t: F.kl_div(F.log_softmax(o, -1), F.softmax(t, -1), reduction="batchmean"), "real"),
    "gaussian_nll": (lambda o, t: F.gaussian_nll_loss(o, t, o.detach() ** 2 + 0.5), "real"),
    "cosine_embedding": (lambda o, t: F.cosine_embedding_loss(o, o.flip(0), t), "sign"),
    "margin_ranking": (lambda o, t: F.margin_ranking_loss(o[:, 0], o[:, 1], t), "sign"),
    "soft_margin": (lambda o, t: F.soft_margin_loss(o[:, 0], t), "sign"),
}


@pytest.mark.parametrize("loss", list(LOSSES))
def test_a_loss_in_a_compiled_training_step(loss):
    def build():
        m = _model()
        opt = tga.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)
        f, kind = LOSSES[loss]

        def step(x, t):
            value = f(m(x), t)
            opt.zero_grad()
            value.backward()
            opt.step()
            return value

        return step, lambda run: _ten(run, None, lambda i: (_xy(i)[0], _targets(i, kind))), [m]

    compare(build, loss)


_ITERATORS = {
    "list iterator": lambda: iter([0.5, 1.0, 2.0, 3.0, 0.1, 0.2, 0.3, 0.4, 0.6, 0.7]),
    "itertools.count": lambda: itertools.count(1),
    "map over a range": lambda: map(float, range(1, 20)),
    "generator expression": lambda: (k * 0.5 for k in range(1, 20)),
    "zip": lambda: zip(range(1, 20), range(2, 21)),
    "enumerate": lambda: enumerate([0.5] * 20),
}


@pytest.mark.parametrize("kind", list(_ITERATORS))
def test_an_iterator_in_reach_advanced_inside_the_step(kind):
    def build():
        m, opt, _ = _sgd_world()
        it = _ITERATORS[kind]()

        def step(x, y):
            a, b = next(it) if kind in ("zip", "enumerate") else (next(it), 0)
            loss = ((m(x) * a - y) ** 2).mean() + b
            opt.zero_grad()
            loss.backward()
            opt.step()
            return loss

        return step, _ten, [m]

    compare(build, kind, replays=False)


def _fresh_lambda(i):
    return eval(f"lambda o: o * {i % 3 + 1}.0")  # noqa: S307 - a new function object at each call, as a notebook makes


def _fresh_partial(i):
    return functools.partial(_scaled, i % 3 + 1.0)


def _scaled(c, o):
    return o * c


class _Act:  # (not a user's object by attributes: __slots__, guarded by identity)
    __slots__ = ("c",)

    def __init__(self, c) -> None:
        self.c = c

    def __call__(self, o):
        return o * self.c


_FRESH = {"lambda": _fresh_lambda, "partial": _fresh_partial, "slotted callable": lambda i: _Act(i % 3 + 1.0)}


@pytest.mark.parametrize("kind", list(_FRESH))
def test_a_new_object_made_at_every_call_never_takes_an_old_ones_key(kind):
    """A function made anew at each call (the old one freed) may get the old one's id: the key
    must not then match the old program."""

    def build():
        m, opt, _ = _sgd_world()
        cfg = {}

        def step(x, y):
            loss = ((cfg["f"](m(x)) - y) ** 2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            return loss

        def calls(run):
            seen = []
            for i in range(CALLS):
                cfg["f"] = _FRESH[kind](i)
                seen.append(run(*_xy(i)))
            return seen

        return step, calls, [m]

    compare(build, kind)


_WARNING_SCRIPT = """
import warnings, numpy as np, tinygrad_attn as tga
def step(x):
    warnings.warn("a deprecated argument", UserWarning, stacklevel=1)
    return x * 2.0
run = tga.compile(step)
for i in range(3):
    assert (run(tga.Tensor(np.full(2, float(i)))).detach().numpy() == 2.0 * i).all()
print([p is not None for p in run.programs.values()])
"""


def test_a_warning_shown_inside_the_step_is_not_a_print():
    """A warning the step triggers is shown once per place, eagerly too: the step still replays
    (a print, which eager repeats at every call, runs the step eagerly). In a process of its
    own: pytest records warnings instead of showing them on stderr."""
    import os  # noqa: PLC0415
    import subprocess  # noqa: PLC0415
    import sys  # noqa: PLC0415

    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = {**os.environ, "PYTHONPATH": root}
    done = subprocess.run([sys.executable, "-c", _WARNING_SCRIPT], capture_output=True, text=True, env=env,
                          timeout=120, check=True)  # fmt: skip
    assert done.stdout.strip() == "[True]", done.stdout + done.stderr
    assert "a deprecated argument" in done.stderr


@pytest.mark.parametrize("level", ["INFO", "DEBUG"])
def test_logging_inside_the_step_logs_at_every_call(level):
    """A record logged inside the step is output (its handler holds its own stream): eager
    logs it at every call, so the step runs eagerly; a record below the logger's level is
    not logged at all, and the step replays."""
    import logging  # noqa: PLC0415

    log = logging.getLogger("tinygrad_attn.tests.user_changes")
    seen = []

    class Keep(logging.Handler):
        def emit(self, record):
            seen.append(record.getMessage())

    handler = Keep()
    log.addHandler(handler)
    log.setLevel(logging.INFO)
    try:

        def step(x):
            log.log(getattr(logging, level), "one call")
            return x * 2.0

        run = tga.compile(step)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            for i in range(CALLS):
                np.testing.assert_array_equal(run(Tensor(np.full(2, float(i)))).detach().numpy(), np.full(2, 2.0 * i))
    finally:
        log.removeHandler(handler)
    assert len(seen) == (CALLS if level == "INFO" else 0)
    assert [p is not None for p in run.programs.values()] == [level == "DEBUG"]


# -- random draws inside a compiled step: drawn again at each replay, eager's numbers -------------
_DRAWS = {
    "uniform_": lambda x: x.uniform_(0.2, 0.7),
    "normal_": lambda x: x.normal_(1.0, 2.0),
    "bernoulli_": lambda x: x.bernoulli_(0.3),
    "random_ (bounds)": lambda x: x.random_(0, 10),
    "random_ (to)": lambda x: x.random_(7),
    "random_": lambda x: x.random_(),
    "exponential_": lambda x: x.exponential_(2.0),
    "geometric_": lambda x: x.geometric_(0.3),
    "log_normal_": lambda x: x.log_normal_(0.0, 0.5),
    "cauchy_": lambda x: x.cauchy_(0.0, 1.0),
    "rand_like": lambda x: tga.rand_like(x),
    "randn_like": lambda x: tga.randn_like(x),
    "rand": lambda x: tga.rand(*x.shape, dtype=x.dtype),
    "randn": lambda x: tga.randn(*x.shape, dtype=x.dtype),
    "dropout": lambda x: F.dropout(x + 1.0, 0.4),
    "a generator's uniform_": lambda x: x.uniform_(generator=_GEN),
}
_GEN = tga.Generator()


@pytest.mark.parametrize("dtype", [tga.float32, tga.float64])
@pytest.mark.parametrize("kind", list(_DRAWS))
def test_a_random_draw_in_a_compiled_step_draws_again_as_eager_does(kind, dtype):
    """A random fill or factory inside a compiled step is an op of the program: each replay
    draws new numbers, the same as eager calls from the same seed (a frozen draw would repeat
    the traced call's numbers; a refusal would fail the step)."""
    draw = _DRAWS[kind]

    def step(x, w):
        noise = draw(tga.empty_like(x))
        loss = (w * noise + x).sum()
        loss.backward()
        return noise

    def calls(fn):
        tga.manual_seed(3)
        _GEN.manual_seed(4)
        w = Tensor(np.ones((2, 5)), dtype=dtype, requires_grad=True)
        got = [fn(Tensor(np.full((2, 5), float(i)), dtype=dtype), w).detach().numpy() for i in range(4)]
        return got, w.grad.detach().numpy()

    run = tga.compile(step)
    (want, want_grad), (got, got_grad) = calls(step), calls(run)
    assert run.program is not None and None not in run.programs.values(), f"{kind}: not replayed"
    assert any(not np.array_equal(want[0], v) for v in want[1:]), "the draws do not change: a test of nothing"
    for i, (g, w) in enumerate(zip(got, want)):
        np.testing.assert_array_equal(g, w, err_msg=f"{kind}: call {i}")
    np.testing.assert_array_equal(got_grad, want_grad, err_msg=f"{kind}: the accumulated gradient")
