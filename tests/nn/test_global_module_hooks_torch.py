"""The hooks of every module (``torch.nn.modules.module.register_module_*_hook``), run by both
libraries on one program and compared: what each hook saw, in order, what it changed, and the
values and gradients after; and a compiled step traced again when one is added or removed."""

import importlib
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import tinygrad_attn as tga  # noqa: E402


def _program(lib, with_kwargs):
    mm = importlib.import_module(lib.__name__ + ".nn.modules.module")
    lib.manual_seed(0)
    log, regs = [], []

    def post(m, a, *rest):
        out = rest[-1]
        log.append(("post", type(m).__name__, len(rest)))
        return out * 2 if type(m).__name__ == "ReLU" else None

    handles = [
        mm.register_module_forward_pre_hook(lambda m, a: log.append(("pre", type(m).__name__, len(a)))),
        mm.register_module_forward_hook(post, with_kwargs=with_kwargs),
        mm.register_module_full_backward_hook(lambda m, gi, go: log.append(("bw", type(m).__name__, len(gi), len(go)))),
        mm.register_module_full_backward_pre_hook(lambda m, go: log.append(("bwpre", type(m).__name__, len(go)))),
        mm.register_module_parameter_registration_hook(lambda m, n, p: regs.append(n)),
        mm.register_module_module_registration_hook(lambda m, n, s: regs.append("module " + n)),
        mm.register_module_buffer_registration_hook(lambda m, n, b: regs.append("buffer " + n)),
    ]
    try:
        net = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.ReLU(), lib.nn.Linear(4, 2), lib.nn.BatchNorm1d(2))
        x = lib.tensor(np.arange(6.0).reshape(2, 3), dtype=lib.float32, requires_grad=True)
        y = net(x).sum()
        y.backward()
    finally:
        for h in handles:
            h.remove()
    after = net(x).detach().numpy()
    return log, regs, float(y.detach()), x.grad.detach().numpy(), after


@pytest.mark.parametrize("with_kwargs", [False, True])
def test_the_hooks_of_every_module_as_pytorch(with_kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want, got = _program(torch, with_kwargs), _program(tga, with_kwargs)
    assert got[0] == want[0]
    assert got[1] == want[1]
    np.testing.assert_allclose(got[2], want[2], rtol=1e-6)
    np.testing.assert_allclose(got[3], want[3], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got[4], want[4], rtol=1e-5, atol=1e-6)


def test_a_global_hook_added_between_compiled_calls_is_not_replayed_away():
    mm = tga.nn.modules.module
    tga.manual_seed(0)
    net = tga.nn.Sequential(tga.nn.Linear(3, 4), tga.nn.ReLU())
    step = tga.compile(lambda x: net(x).sum())
    x = tga.ones(2, 3)
    plain = float(step(x))
    assert float(step(x)) == plain  # (a replay)
    h = mm.register_module_forward_hook(lambda m, a, o: o * 3 if isinstance(m, tga.nn.ReLU) else None)
    try:
        assert float(step(x)) == pytest.approx(3 * plain)
        assert float(step(x)) == pytest.approx(3 * plain)
    finally:
        h.remove()
    assert float(step(x)) == pytest.approx(plain)
