"""The guard's compiled check (``guard._Plan``) sees every change a user makes once it is warm.

A compiled step first makes again the reads of the last key's walk and returns the last key
when each finds what the walk found. These tests let that check hold for several replays
first (asserting it did), then make each kind of change a user makes between calls, and
compare ten steps with eager: the values and places of ``test_compile_user_changes``'s
generator, and the changes the generator has no place for (grad mode, hooks,
``requires_grad``, the optimizer's settings, param groups and identity, the loss module, a
container's length, a method or a function's code replaced).
"""

from __future__ import annotations

import types
import warnings

import numpy as np
import pytest
from test_compile_user_changes import KINDS, PLACES, _host, _model, _same, _state, _xy

import tinygrad_attn as tga
from tinygrad_attn import Tensor, nn
from tinygrad_attn.symbolic.compile import Compiled
from tinygrad_attn.symbolic.guard import Guard

CALLS = 10
WARM = 5  # replays before the first change (the check holds at the later ones)


def _call(run, *args):
    """A call's result, or the exception's class (eager and compiled must raise alike)."""
    try:
        return run(*args)
    except (RuntimeError, TypeError, ValueError) as e:  # (TraceError is a RuntimeError)
        return ("raised", type(e).__name__)


def compare(build, label, refused=False):
    """``build()`` -> ``(step, calls, modules)`` as in ``test_compile_user_changes.compare``;
    ``calls(run, warm)`` calls ``warm(run)`` just before its first change. With ``refused``
    the compiled step must refuse the change with a ``TraceError`` (``calls`` stops there)."""
    results = []
    for compiled in (False, True):
        tga.manual_seed(0)
        np.random.seed(0)
        step, calls, modules = build()
        run = tga.compile(step, cache_limit=64) if compiled else step
        hits: list[int] = []

        def warm(run, hits=hits):
            if isinstance(run, Compiled):
                hits.append(run.guard._hits)

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            seen = calls(run, warm)
        results.append((_host(seen), _state(modules)))
        if compiled:
            assert any(p is not None for p in run.programs.values()), f"{label}: nothing was traced to replay"
            assert hits and hits[0] >= 2, f"{label}: the guard's check did not hold before the change ({hits})"
    if refused:  # (what ran before the change agrees; the change itself is refused, naming the line)
        (eager, _), (compiled, _) = results
        assert compiled[-1] == ("raised", "TraceError") and len(compiled) == len(eager), (label, compiled[-1])
        _same(eager[:-1], compiled[:-1], label)
        return
    _same(results[0], results[1], label)


@pytest.mark.parametrize("place", list(PLACES))
@pytest.mark.parametrize("kind", list(KINDS))
def test_a_value_changed_after_the_check_is_warm(kind, place):
    def build():
        values = KINDS[kind]()
        step, set_value, call, modules = PLACES[place](values[0])
        changes = {WARM: values[1], WARM + 2: values[2], WARM + 4: values[0]}

        def calls(run, warm):
            seen = []
            for i in range(CALLS):
                if i in changes:
                    if i == WARM:
                        warm(run)
                    set_value(changes[i])
                seen.append(call(run, *_xy(i)))
            return seen

        return step, calls, modules

    compare(build, f"{kind} in {place}")


# -- the changes the generator has no place for --------------------------------------------


def _world(momentum=0.0):
    m = _model()
    w = {"opt": tga.optim.SGD(m.parameters(), lr=0.1, momentum=momentum), "loss": nn.MSELoss(), "extra": []}

    def step(x, y):
        out = m(x)
        for e in w["extra"]:
            out = out + e
        loss = w["loss"](out, y)
        w["opt"].zero_grad()
        loss.backward()
        w["opt"].step()
        return loss

    return m, w, step


def _no_grad_call(m, w, i, run, x, y):
    with tga.no_grad():
        return _call(run, x, y)


def _hook_on_weight(m, w, i, run, x, y):
    h = m.weight.register_hook(lambda g: g * 3.0)
    try:
        return _call(run, x, y)
    finally:
        h.remove()


def _global_forward_hook(m, w, i, run, x, y):
    h = nn.modules.module.register_module_forward_hook(lambda mod, args, out: out * 2.0)
    try:
        return _call(run, x, y)
    finally:
        h.remove()


def _module_forward_hook(m, w, i, run, x, y):
    h = m.register_forward_hook(lambda mod, args, out: out + 1.0)
    try:
        return _call(run, x, y)
    finally:
        h.remove()


def _set(fn):
    """A change made before the call (and kept), then the call."""

    def change(m, w, i, run, x, y):
        fn(m, w, i)
        return _call(run, x, y)

    change.__name__ = fn.__name__
    return change


def _freeze_bias(m, w, i):
    m.bias.requires_grad_(i % 2 == 0)


def _lr_each_call(m, w, i):
    w["opt"].param_groups[0]["lr"] = 0.05 * (i % 3)  # (zero at some calls: the update's ops change)


def _momentum_on(m, w, i):
    w["opt"].param_groups[0]["momentum"] = 0.9


def _weight_decay_on(m, w, i):
    w["opt"].param_groups[0]["weight_decay"] = 0.01


def _nesterov_on(m, w, i):
    g = w["opt"].param_groups[0]
    g["momentum"], g["nesterov"] = 0.9, True


def _param_group_added(m, w, i):
    if i == WARM:
        t = Tensor(np.zeros(2), requires_grad=True)
        w["extra"].append(t)
        w["opt"].add_param_group({"params": [t], "lr": 0.2})


def _param_group_edited(m, w, i):
    if i == WARM:
        g = w["opt"].param_groups[0]
        g["params"] = [m.weight]  # (the bias left out of the update)


def _optimizer_recreated(m, w, i):
    w["opt"] = tga.optim.SGD(m.parameters(), lr=0.05, momentum=0.5)


def _optimizer_class_swapped(m, w, i):
    if i == WARM:
        w["opt"] = tga.optim.Adam(m.parameters(), lr=0.01)


def _loss_module_swapped(m, w, i):
    w["loss"] = nn.L1Loss() if i % 2 else nn.MSELoss()


def _list_appended(m, w, i):
    w["extra"].append(Tensor(np.full(2, 0.1 * i)))


def _list_item_replaced(m, w, i):
    if not w["extra"]:
        w["extra"].append(None)
    w["extra"][0] = Tensor(np.full(2, 0.1 * i))


def _dict_key_added(m, w, i):
    w[f"unused{i}"] = i


def _attribute_tensor_reshaped(m, w, i):
    if i == WARM:  # (the same Parameter object, its array replaced by one of another shape)
        with tga.no_grad():
            m.bias.data = Tensor(np.zeros((3, 2)))


def _forward_replaced_on_class(m, w, i):
    if i == WARM:
        cls = type("Linear2", (type(m),), {"forward": lambda self, x: nn.Linear.forward(self, x) * 0.5})
        m.__class__ = cls


def _loss_code_replaced(m, w, i):
    if i == WARM:
        w["loss"] = types.FunctionType(_l1.__code__, globals())
    elif i == WARM + 2:
        w["loss"].__code__ = _l2.__code__


def _l1(out, y):
    return (out - y).abs().mean()


def _l2(out, y):
    return ((out - y) ** 2).sum()


def _default_dtype_changed(m, w, i):
    if i == WARM:
        tga.set_default_dtype(tga.float64)
    elif i == WARM + 2:
        tga.set_default_dtype(tga.float32)


CHANGES = [_no_grad_call, _hook_on_weight, _global_forward_hook, _module_forward_hook]
CHANGES += [_set(f) for f in (_freeze_bias, _lr_each_call, _momentum_on, _weight_decay_on, _nesterov_on,
                              _param_group_added, _param_group_edited, _optimizer_recreated,
                              _optimizer_class_swapped, _loss_module_swapped, _list_appended, _list_item_replaced,
                              _dict_key_added, _attribute_tensor_reshaped, _forward_replaced_on_class,
                              _loss_code_replaced, _default_dtype_changed)]  # fmt: skip


#: Changes a replay cannot repeat: the trace refuses them (a hook called in a backward pass).
REFUSED = {_hook_on_weight}


@pytest.mark.parametrize("change", CHANGES, ids=lambda c: c.__name__.strip("_"))
def test_a_change_after_the_check_is_warm(change):
    def build():
        m, w, step = _world()

        def calls(run, warm):
            seen = []
            try:
                for i in range(CALLS):
                    x, y = _xy(i)
                    if i < WARM:
                        seen.append(_call(run, x, y))
                        continue
                    if i == WARM:
                        warm(run)
                    seen.append(change(m, w, i, run, x, y))
                    if change in REFUSED:
                        break
            finally:
                tga.set_default_dtype(tga.float32)
            return seen

        return step, calls, [m]

    compare(build, change.__name__, refused=change in REFUSED)


def test_the_check_returns_the_same_key_and_sees_each_change():
    coef = [1.0, {"t": Tensor(np.ones(2))}]

    def f(x):
        return x * coef[0] + coef[1]["t"]

    g = Guard()
    k = g.key(f)
    assert g.key(f) is k and g._hits == 1  # (unchanged: the check held, the same tuple)
    coef[0] = 2.0
    k2 = g.key(f)
    assert k2 != k and g._hits == 0
    coef[1]["t"] = Tensor(np.ones(3))
    k3 = g.key(f)
    assert k3 != k2
    coef[1]["t"].requires_grad_(True)
    k4 = g.key(f)
    assert k4 != k3 and g.key(f) == k4
    coef[1]["t"].requires_grad_(False)
    assert g.key(f) == k3
    f.__code__ = (lambda x: x * coef[0]).__code__
    assert g.key(f) != k3


def test_a_check_that_never_holds_backs_off():
    # A tuple re-created equal at every call (the walk's key is the same; the check compares it
    # by identity and fails): the plans are built more and more rarely, the keys stay right.
    box = [None]

    def f(x):
        return x * box[0][0]

    g = Guard()
    keys, built = [], 0
    for _ in range(300):
        box[0] = tuple([1.5, "a"])  # (equal, a new object each time)
        had = g._check
        keys.append(g.key(f))
        built += g._check is not None and g._check is not had
    assert len(set(keys)) == 1
    assert built < 20, built


@pytest.mark.parametrize("value", [1.5, 3, np.float32(0.5), np.int64(2)])
def test_a_number_computed_again_equal_holds_the_check(value):
    box = [value]

    def f(x):
        return x * box[0]

    g = Guard()
    k = g.key(f)
    for _ in range(3):
        box[0] = type(value)(str(value) if isinstance(value, float) else value)  # (a new object, equal)
        assert g.key(f) is k
    box[0] = value * 2
    assert g.key(f) != k
    box[0] = float(value) if not isinstance(value, float) else int(value * 2)  # (equal value, another type)
    assert g.key(f) != k
