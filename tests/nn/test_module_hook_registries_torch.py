"""A module's hook registries are PyTorch's, for the code that reads or clears them
(``model._forward_hooks.clear()``, ``len(m._forward_pre_hooks)``): each registry exists on every
module, maps a handle's id to the hook, and the ``_with_kwargs`` / ``_always_called`` registries
hold the ids registered so; ``always_call`` hooks run when ``forward`` raises. Each program runs
under both libraries and prints the same."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

import tinygrad_attn as tga  # noqa: E402

PROGRAMS = {
    "pre-hook registries": """
m = nn.Linear(2, 2)
h = m.register_forward_pre_hook(lambda mod, a, k: None, with_kwargs=True)
m.register_forward_pre_hook(lambda mod, a: None)
out = [len(m._forward_pre_hooks), list(m._forward_pre_hooks_with_kwargs.values())]
h.remove()
out += [len(m._forward_pre_hooks), len(m._forward_pre_hooks_with_kwargs)]
""",
    "forward-hook registries": """
m = nn.Linear(2, 2)
h = m.register_forward_hook(lambda mod, a, o: None, always_call=True)
m.register_forward_hook(lambda mod, a, k, o: None, with_kwargs=True)
out = [len(m._forward_hooks), len(m._forward_hooks_always_called), len(m._forward_hooks_with_kwargs)]
h.remove()
out += [len(m._forward_hooks), len(m._forward_hooks_always_called)]
""",
    "registries of a module without hooks": """
m = nn.Linear(2, 2)
out = [len(getattr(m, n)) for n in ("_forward_hooks", "_forward_pre_hooks", "_backward_hooks", "_backward_pre_hooks",
       "_state_dict_hooks", "_state_dict_pre_hooks", "_load_state_dict_pre_hooks", "_load_state_dict_post_hooks",
       "_forward_hooks_with_kwargs", "_forward_hooks_always_called", "_forward_pre_hooks_with_kwargs")]
out.append(m._is_full_backward_hook)
""",
    "clear the registry": """
m = nn.Linear(2, 2); calls = []
m.register_forward_hook(lambda mod, a, o: calls.append(1))
m._forward_hooks.clear(); m(torch.ones(2))
out = [calls, len(m._forward_hooks)]
""",
    "always_call on an error": """
log = []
class Bad(nn.Module):
    def forward(self, x):
        raise ValueError("boom")
m = Bad()
m.register_forward_hook(lambda mod, a, o: log.append(("always", o)), always_call=True)
m.register_forward_hook(lambda mod, a, o: log.append("plain"))
try:
    m(torch.ones(1))
except ValueError as e:
    log.append(str(e))
out = log
""",
    "feature extraction": """
m = nn.Sequential(nn.Linear(2, 3), nn.ReLU()); feats = {}
hs = [mod.register_forward_hook(lambda mod, a, o, n=n: feats.__setitem__(n, tuple(o.shape))) for n, mod in m.named_modules()]
m(torch.ones(4, 2))
for h in hs:
    h.remove()
out = [sorted(feats.items()), [len(x._forward_hooks) for x in m.modules()]]
""",
    "unknown attribute": """
try:
    nn.Linear(2, 2).nothing
except AttributeError as e:
    out = str(e)
""",
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_hook_registries_as_pytorch(name):
    outs = []
    for lib in (torch, tga):
        env = {"torch": lib, "nn": lib.nn}
        exec(PROGRAMS[name], env)
        outs.append(env["out"])
    assert outs[1] == outs[0]
