"""The optimizer's state-dict hooks and ``profile_hook_step``, as PyTorch programs run with ``torch``
bound to PyTorch and to tinygrad_attn (tests/differential.py): their signatures, their order
(``prepend``), what a returned value replaces, and removal by handle."""

from __future__ import annotations

import pytest

from tests.differential import assert_same_as_torch

torch = pytest.importorskip("torch")

SETUP = """
torch.manual_seed(0)
m = nn.Linear(3, 2)
opt = torch.optim.{cls}(m.parameters(), lr=0.1)
m(torch.randn(4, 3)).sum().backward()
opt.step()
log = []
"""

PROGRAMS = {
    "state_dict_pre_and_post": """
opt.register_state_dict_pre_hook(lambda o: log.append(("pre", type(o).__name__)))
opt.register_state_dict_pre_hook(lambda o: log.append("pre-first"), prepend=True)
def post(o, sd):
    log.append(("post", sorted(sd), sorted(sd["state"])))
    sd["param_groups"][0]["note"] = "tagged"
opt.register_state_dict_post_hook(post)
sd = opt.state_dict(); R(log, sd["param_groups"][0]["note"])
""",
    "state_dict_post_replaces": """
opt.register_state_dict_post_hook(lambda o, sd: {"state": {}, "param_groups": sd["param_groups"]})
R(opt.state_dict()["state"])
""",
    "state_dict_hook_removed": """
h = opt.register_state_dict_pre_hook(lambda o: log.append(1)); opt.state_dict(); h.remove(); opt.state_dict(); R(log)
""",
    "load_pre_replaces_and_post_runs": """
sd = opt.state_dict()
def pre(o, given):
    log.append(("pre", given is sd, sorted(given)))
    given["param_groups"] = [dict(g, lr=0.5) for g in given["param_groups"]]
opt.register_load_state_dict_pre_hook(pre)
opt.register_load_state_dict_pre_hook(lambda o, given: log.append("pre-first"), prepend=True)
opt.register_load_state_dict_post_hook(lambda o: log.append(("post", o.param_groups[0]["lr"])))
opt.load_state_dict(sd); R(log, opt.param_groups[0]["lr"], sd["param_groups"][0]["lr"])
""",
    "load_pre_returns_new_dict": """
sd = opt.state_dict()
opt.register_load_state_dict_pre_hook(lambda o, given: {"state": {}, "param_groups": [dict(given["param_groups"][0], lr=0.25)]})
opt.load_state_dict(sd); R(opt.param_groups[0]["lr"], len(opt.state))
""",
    "load_post_prepend": """
opt.register_load_state_dict_post_hook(lambda o: log.append(2))
opt.register_load_state_dict_post_hook(lambda o: log.append(1), prepend=True)
opt.load_state_dict(opt.state_dict()); R(log)
""",
    "profile_hook_step": """
class Halver(torch.optim.Optimizer):
    def __init__(self, params):
        super().__init__(params, {"lr": 0.5})
    @torch.optim.Optimizer.profile_hook_step
    def custom(self, scale=1.0):
        for g in self.param_groups:
            for p in g["params"]:
                with torch.no_grad():
                    p.mul_(g["lr"] * scale)
        return scale
h = Halver([m.bias])
h.register_step_pre_hook(lambda o, args, kwargs: (args, {"scale": 2.0}))
h.register_step_post_hook(lambda o, args, kwargs: log.append(("post", kwargs)))
R(h.custom(), m.bias, log)
""",
    "profile_hook_step_bad_pre_result": """
class Plain(torch.optim.Optimizer):
    @torch.optim.Optimizer.profile_hook_step
    def custom(self):
        return 1
o = Plain([m.bias], {"lr": 0.1})
o.register_step_pre_hook(lambda o, args, kwargs: 3)
o.custom()
""",
    "hook_types": "R(callable(torch.optim.Optimizer.OptimizerPreHook), callable(torch.optim.Optimizer.OptimizerPostHook))",
}  # fmt: skip


@pytest.mark.parametrize("cls", ["SGD", "Adam", "AdamW", "RMSprop"])
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_optimizer_hooks_as_pytorch(name: str, cls: str) -> None:
    assert_same_as_torch(SETUP.format(cls=cls) + PROGRAMS[name], torch)
