"""Changes a user makes to a model and its optimizer between calls of a compiled training step
(a hook registered, a parameter frozen, a setting of a param group turned on, a scheduler, a
state dict loaded): ten steps compiled equal ten eager steps, losses and parameters.

Each scenario is a function ``(model, optimizer, call index, state)`` run before each call.
"""

import copy
import warnings

import numpy as np
import pytest

import tinygrad_attn as tga

nn = tga.nn


OPTIMIZERS = {
    "SGD": lambda ps: tga.optim.SGD(ps, lr=0.1, momentum=0.9),
    "Adam": lambda ps: tga.optim.Adam(ps, lr=0.01),
    "AdamW": lambda ps: tga.optim.AdamW(ps, lr=0.01, amsgrad=True),
    "RMSprop": lambda ps: tga.optim.RMSprop(ps, lr=0.01, momentum=0.5),
}


def build(optimizer="SGD"):
    tga.manual_seed(0)
    m = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
    opt = OPTIMIZERS[optimizer](m.parameters())
    return m, opt


def data(i):
    r = np.random.default_rng(i)
    x, y = r.standard_normal((5, 4)), r.standard_normal((5, 2))
    return tga.tensor(x, dtype=tga.float32), tga.tensor(y, dtype=tga.float32)


scen = {}


def sc(f):
    scen[f.__name__] = f
    return f


@sc
def forward_hook_added(m, opt, i, state):
    if i == 4:
        m[1].register_forward_hook(lambda mod, inp, out: out * 2)


@sc
def forward_pre_hook_added(m, opt, i, state):
    if i == 4:
        m[0].register_forward_pre_hook(lambda mod, inp: (inp[0] * 0.5,))


@sc
def param_frozen(m, opt, i, state):
    if i == 4:
        m[0].weight.requires_grad_(False)


@sc
def weight_decay_on(m, opt, i, state):
    if i == 4:
        opt.param_groups[0]["weight_decay"] = 0.1


@sc
def nesterov_on(m, opt, i, state):
    if i == 4:
        opt.param_groups[0]["nesterov"] = True


@sc
def module_eval(m, opt, i, state):
    if i == 4:
        m.eval()


@sc
def relu_inplace_flag(m, opt, i, state):
    if i == 4:
        m[1].inplace = True


@sc
def scheduler(m, opt, i, state):
    if i == 0:
        state["s"] = tga.optim.lr_scheduler.StepLR(opt, 1, 0.5)
    else:
        state["s"].step()


@sc
def weight_data_replaced(m, opt, i, state):
    if i == 4:
        m[0].weight.data = m[0].weight.data * 0 + 0.01


@sc
def weight_inplace_init(m, opt, i, state):
    if i == 4:
        nn.init.constant_(m[0].weight, 0.02)


@sc
def bias_removed(m, opt, i, state):
    if i == 4:
        m[2].bias = None


@sc
def add_param_group(m, opt, i, state):
    if i == 4:
        state["extra"] = nn.Parameter(tga.ones(2))
        opt.add_param_group({"params": [state["extra"]], "lr": 0.5})


@sc
def hook_removed(m, opt, i, state):
    if i == 2:
        state["h"] = m[1].register_forward_hook(lambda mod, inp, out: out * 2)
    if i == 5:
        state["h"].remove()


@sc
def optimizer_hook_added(m, opt, i, state):
    if i == 4:
        opt.register_step_post_hook(lambda o, a, k: [p.data.mul_(0.5) for p in m[0].parameters()])


@sc
def momentum_from_zero(m, opt, i, state):
    if i == 0:
        opt.param_groups[0]["momentum"] = 0.0
    if i == 4:
        opt.param_groups[0]["momentum"] = 0.5


@sc
def betas_changed(m, opt, i, state):
    if i == 4:
        opt.param_groups[0]["betas"] = (0.0, 0.5)


@sc
def amsgrad_toggled(m, opt, i, state):
    if i == 4:
        opt.param_groups[0]["amsgrad"] = not opt.param_groups[0].get("amsgrad", False)


@sc
def dampening_changed(m, opt, i, state):
    if i == 4:
        opt.param_groups[0]["dampening"] = 0.3


@sc
def maximize_on(m, opt, i, state):
    if i == 4:
        opt.param_groups[0]["maximize"] = True


@sc
def submodule_swapped(m, opt, i, state):
    if i == 4:
        m[1] = nn.Tanh()


@sc
def parameters_swapped_in_optimizer(m, opt, i, state):
    if i == 4:
        opt.param_groups[0]["params"] = list(m[2].parameters())


@sc
def lr_zero(m, opt, i, state):
    if i == 4:
        opt.param_groups[0]["lr"] = 0.0


@sc
def momentum_zero(m, opt, i, state):
    if i == 4:
        opt.param_groups[0]["momentum"] = 0.0


@sc
def state_reset(m, opt, i, state):
    if i == 4:
        opt.state.clear()


@sc
def load_state_dict_mid(m, opt, i, state):
    if i == 2:
        state["sd"] = copy.deepcopy(m.state_dict())
    if i == 6:
        m.load_state_dict(state["sd"])


@sc
def opt_load_state(m, opt, i, state):
    if i == 2:
        state["osd"] = copy.deepcopy(opt.state_dict())
    if i == 6:
        opt.load_state_dict(state["osd"])


@sc
def zero_grad_none_false(m, opt, i, state):
    state["set_to_none"] = i < 4


def step_factory(m, opt, state):
    def step(x, y):
        opt.zero_grad(set_to_none=state.get("set_to_none", True))
        out = m(x)
        extra = state.get("extra")
        loss = ((out - y) ** 2).mean()
        if extra is not None:
            loss = loss + (extra * extra).sum() * 0.1
        loss.backward()
        opt.step()
        return loss

    return step


def run(change, compiled, optimizer):
    m, opt = build(optimizer)
    state = {}
    step = step_factory(m, opt, state)
    if compiled:
        step = tga.compile(step)
    out = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for i in range(10):
            change(m, opt, i, state)
            try:
                out.append(float(step(*data(i))))
            except Exception as e:  # noqa: BLE001 - compared: the same error eagerly
                out.append(f"{type(e).__name__}: {e}")
    return out, [p.detach().numpy().copy() for p in m.parameters()]


@pytest.mark.parametrize("optimizer", list(OPTIMIZERS))
@pytest.mark.parametrize("name", list(scen))
def test_a_change_between_calls_replays_as_eager(name, optimizer):
    (want, want_p), (got, got_p) = run(scen[name], False, optimizer), run(scen[name], True, optimizer)
    assert len(want) == len(got)
    for i, (a, b) in enumerate(zip(want, got)):
        if isinstance(a, str) or isinstance(b, str):
            assert a == b, (name, i)
        else:
            np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-7, err_msg=f"{name}: loss of call {i}")
    for a, b in zip(want_p, got_p):
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-7, err_msg=f"{name}: parameters after the calls")
