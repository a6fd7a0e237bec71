"""The rest of PyTorch's ``nn.Module`` API, run as PyTorch programs with ``torch`` bound to PyTorch and
to tinygrad_attn (tests/differential.py): ``cpu type _apply to_empty share_memory register_module
set_submodule compile``, extra state, ``state_dict``/``load_state_dict`` through
``_save_to_state_dict``/``_load_from_state_dict`` (with ``_metadata`` and ``_version``), the
state-dict hooks and their order, and the backward hooks (full, pre, deprecated) with their
gradients, their order and PyTorch's errors."""

from __future__ import annotations

import numpy as np
import pytest

import tinygrad_attn as tga
from tests.differential import assert_same_as_torch
from tinygrad_attn.nn import module as module_py
from tinygrad_attn.symbolic.compile import Compiled

torch = pytest.importorskip("torch")

NET = """
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 4)
        self.seq = nn.Sequential(nn.Tanh(), nn.Linear(4, 2))
        self.register_buffer('scale', torch.ones(2))
        self.register_buffer('count', torch.zeros(1, dtype=torch.int64))
        self.register_buffer('tmp', torch.zeros(1), persistent=False)
    def forward(self, x):
        return self.seq(self.fc(x)) * self.scale
torch.manual_seed(0)
m = Net()
x = torch.randn(5, 3)
"""

# A module that keeps its state-dict layout backward compatible: version 2 renamed "old_w" to "w".
VERSIONED = """
class V(nn.Module):
    _version = 2
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.zeros(2))
    def _load_from_state_dict(self, sd, prefix, meta, strict, missing, unexpected, errors):
        version = meta.get("version", None)
        R(prefix, version)
        if (version is None or version < 2) and prefix + "old_w" in sd:
            sd[prefix + "w"] = sd.pop(prefix + "old_w")
        super()._load_from_state_dict(sd, prefix, meta, strict, missing, unexpected, errors)
outer = nn.Sequential(nn.Linear(2, 2), V())
"""

EXTRA = """
class E(nn.Linear):
    def __init__(self):
        super().__init__(2, 2)
        self.k = 3
    def get_extra_state(self):
        return {"k": self.k}
    def set_extra_state(self, state):
        self.k = state["k"]
e = nn.Sequential(E())
"""

PROGRAMS = {
    # -- cpu, type, _apply, to_empty, share_memory, bfloat16 --------------------------------
    "cpu": NET + "w = m.fc.weight; r = m.cpu(); R(r is m, m.fc.weight is w, m(x))",
    "type_float64": NET + "m.type(torch.float64); R({k: v.dtype for k, v in m.state_dict().items()}, m(x.double()))",
    "type_float16": NET + "w = m.fc.weight; m.type(torch.float16); R(m.fc.weight is w, m.count.dtype, m.tmp.dtype)",
    "type_int": NET + "m.type(torch.int32)",
    "type_int_frozen": NET + "m.requires_grad_(False); m.type(torch.int32); R({k: v.dtype for k, v in m.state_dict().items()})",
    "type_name": NET + "m.type('torch.DoubleTensor'); R(m.fc.weight.dtype, m.count.dtype)",
    "apply_fn": NET + """
m(x).sum().backward()
w, s = m.fc.weight, m.scale
r = m._apply(lambda t: t * 2)
R(r is m, m.fc.weight is w, m.scale is s, m.fc.weight, m.fc.weight.grad, m.scale, m.count, m.tmp)
""",
    "apply_no_recurse": NET + "m._apply(lambda t: t + 1, recurse=False); R(m.scale, m.fc.bias)",
    "apply_overridden_by_cpu_and_type": """
class Cached(nn.Linear):
    def _apply(self, fn, recurse=True):
        R("apply", type(self).__name__)
        out = super()._apply(fn, recurse)
        self.cache = fn(torch.ones(2))
        return out
m = nn.Sequential(Cached(2, 3))
m.cpu(); m.type(torch.float64); R(m[0].cache.dtype)
""",
    "apply_overridden_by_to_and_casts": """
class Rotary(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(2, 2)
        self.cache = torch.arange(4.0)  # (neither parameter nor buffer: the override moves it)
    def _apply(self, fn, recurse=True):
        self.cache = fn(self.cache)
        return super()._apply(fn, recurse)
m = nn.Sequential(Rotary(), nn.Tanh())
m.to(torch.float64); R(m[0].cache.dtype, m[0].fc.weight.dtype)
m.float(); R(m[0].cache.dtype); m.half(); R(m[0].cache.dtype, m[0].fc.bias.dtype)
m.to("cpu", torch.float32); R(m[0].cache, m[0].fc.weight.dtype)
m.double(); m.to(torch.ones(1)); R(m[0].cache.dtype)
""",
    "to_empty": NET + """
w = m.fc.weight
r = m.to_empty(device="cpu")
R(r is m, m.fc.weight is w, m.fc.weight.shape, m.fc.weight.dtype, m.count.dtype, m.count.shape, m.fc.weight.requires_grad)
""",
    "to_empty_positional": NET + "m.to_empty('cpu')",
    "share_memory": NET + "r = m.share_memory(); R(r is m, m(x))",
    "bfloat16_nothing_to_cast": "m = nn.Sequential(nn.ReLU(), nn.Tanh()); R(m.bfloat16() is m)",
    # -- names ------------------------------------------------------------------------------
    "get_name": NET + "R(m._get_name(), m.seq._get_name(), m.seq[1]._get_name())",
    "register_module": NET + "m.register_module('head', nn.Linear(2, 1)); R([n for n, _ in m.named_modules()])",
    "register_module_none": "m = nn.Module(); m.register_module('gone', None); R(list(m.state_dict()), m.gone)",
    "register_module_dot": NET + "m.register_module('a.b', nn.ReLU())",
    "register_module_empty": NET + "m.register_module('', nn.ReLU())",
    "register_module_taken": NET + "m.register_module('scale', nn.ReLU())",
    "register_module_not_module": NET + "m.register_module('z', 3)",
    "register_module_not_str": NET + "m.register_module(3, nn.ReLU())",
    "add_module_checks_too": NET + "m.add_module('a.b', nn.ReLU())",
    "set_submodule_replace": NET + "m.set_submodule('seq.0', nn.ReLU()); R(repr(m), m(x))",
    "set_submodule_new": NET + "m.set_submodule('seq.extra', nn.ReLU()); R([n for n, _ in m.named_modules()])",
    "set_submodule_strict_missing": NET + "m.set_submodule('seq.extra', nn.ReLU(), strict=True)",
    "set_submodule_strict_present": NET + "m.set_submodule('fc', nn.Linear(3, 4), strict=True); R(m(x).shape)",
    "set_submodule_empty": NET + "m.set_submodule('', nn.ReLU())",
    "set_submodule_not_module": NET + "m.set_submodule('fc', 3)",
    "set_submodule_over_attribute": NET + "m.set_submodule('scale', nn.ReLU())",
    "set_submodule_no_parent": NET + "m.set_submodule('nope.fc', nn.ReLU())",
    "class_flags": "R(nn.Module._version, nn.Module.dump_patches, nn.Module.call_super_init, nn.Linear(1, 1)._version)",
    # -- compile ----------------------------------------------------------------------------
    "compile": NET + """
want = m(x)
r = m.compile(backend="eager")
R(r, m(x), m(x), want)
with torch.no_grad():
    m.fc.weight.mul_(2)
R(m(x))
""",
    "compile_keeps_hooks": NET + "m.compile(backend='eager'); m.register_forward_hook(lambda mod, a, out: out * 0); R(m(x))",
    # -- extra state ------------------------------------------------------------------------
    "extra_state_saved": EXTRA + "R(list(e.state_dict()), e.state_dict()['0._extra_state'])",
    "extra_state_loaded": EXTRA + "sd = e.state_dict(); sd['0._extra_state'] = {'k': 7}; R(e.load_state_dict(sd), e[0].k)",
    "extra_state_missing": EXTRA + "sd = e.state_dict(); del sd['0._extra_state']; e.load_state_dict(sd)",
    "extra_state_missing_non_strict": EXTRA + """
sd = e.state_dict(); del sd['0._extra_state']; r = e.load_state_dict(sd, strict=False); R(r.missing_keys, e[0].k)
""",
    "extra_state_unexpected": "m = nn.Linear(2, 2); sd = m.state_dict(); sd['_extra_state'] = 1; m.load_state_dict(sd)",
    "extra_state_base_raises": "nn.Linear(2, 2).get_extra_state()",
    # -- state_dict and load_state_dict through their per-module halves --------------------
    "metadata": NET + "sd = m.state_dict(); R(type(sd).__name__, dict(sd._metadata))",
    "metadata_prefix": NET + "sd = m.state_dict(prefix='top.'); R(list(sd), list(sd._metadata))",
    "metadata_destination": NET + "d = {}; r = m.state_dict(destination=d); R(r is d, list(d))",
    "state_dict_positional": NET + "d = {}; r = m.state_dict(d, 'p.'); R(r is d, list(d))",
    "versioned_new": VERSIONED + "sd = outer.state_dict(); R(dict(sd._metadata)); R(outer.load_state_dict(sd))",
    "versioned_old_checkpoint": VERSIONED + """
sd = outer.state_dict(); sd["1.old_w"] = torch.ones(2); del sd["1.w"]; sd._metadata["1"] = {"version": 1}
R(outer.load_state_dict(sd), outer[1].w)
""",
    "versioned_no_metadata": VERSIONED + """
sd = dict(outer.state_dict()); sd["1.old_w"] = torch.full((2,), 3.0); del sd["1.w"]
R(outer.load_state_dict(sd), outer[1].w)
""",
    "save_to_state_dict_overridden": """
class Half(nn.Linear):
    def _save_to_state_dict(self, destination, prefix, keep_vars):
        super()._save_to_state_dict(destination, prefix, keep_vars)
        destination[prefix + "weight"] = destination[prefix + "weight"] * 0.5
torch.manual_seed(0)
m = nn.Sequential(Half(2, 2)); R(m.state_dict())
""",
    "load_errors_listed": NET + """
sd = m.state_dict(); del sd["fc.bias"]; sd["seq.1.junk"] = torch.ones(1); sd["junk"] = torch.ones(1)
sd["seq.1.weight"] = torch.ones(3, 3)
try:
    m.load_state_dict(sd)
except RuntimeError as e:
    R(str(e).splitlines()[0].split(" (")[0].split(":")[0])
R(m.load_state_dict({k: v for k, v in sd.items() if k != "seq.1.weight"}, strict=False))
""",
    "load_not_a_mapping": NET + "m.load_state_dict([1, 2])",
    "load_non_tensor_entry": NET + "sd = m.state_dict(); sd['scale'] = 'x'; m.load_state_dict(sd)",
    "load_assign": NET + """
sd = {k: v.clone() for k, v in m.state_dict().items()}
m.load_state_dict(sd, assign=True)
with torch.no_grad():
    sd["fc.bias"].fill_(5.0)
R(m.fc.bias)
""",
    # -- state-dict hooks, their signatures and order ----------------------------------------
    "state_dict_hooks": NET + """
log = []
m.register_state_dict_pre_hook(lambda mod, prefix, keep_vars: log.append(("pre", type(mod).__name__, prefix, keep_vars)))
m.seq.register_state_dict_pre_hook(lambda mod, prefix, keep_vars: log.append(("pre-seq", prefix)))
m.seq.register_state_dict_post_hook(lambda mod, sd, prefix, meta: log.append(("post-seq", prefix, list(sd), meta)))
h = m.register_state_dict_post_hook(lambda mod, sd, prefix, meta: log.append(("post", prefix, len(sd), meta)))
sd = m.state_dict(keep_vars=True); R(log, list(sd))
h.remove(); log.clear(); m.state_dict(); R(log)
""",
    "state_dict_post_hook_edits_in_place": NET + """
def drop(mod, sd, prefix, meta):
    del sd[prefix + "scale"]
m.register_state_dict_post_hook(drop); R(list(m.state_dict()))
""",
    "state_dict_post_hook_must_return_none": NET + "m.register_state_dict_post_hook(lambda *a: {}); m.state_dict()",
    "private_state_dict_hook_replaces": NET + """
m._register_state_dict_hook(lambda mod, sd, prefix, meta: {"only": torch.ones(1)}); R(m.state_dict())
""",
    "load_state_dict_hooks": NET + """
log = []
def pre(mod, sd, prefix, meta, strict, missing, unexpected, errors):
    log.append(("pre", type(mod).__name__, prefix, sorted(sd), meta, strict))
    if prefix + "renamed" in sd:
        sd[prefix + "weight"] = sd.pop(prefix + "renamed")
m.register_load_state_dict_pre_hook(pre)
m.fc.register_load_state_dict_pre_hook(pre)
m.fc.register_load_state_dict_post_hook(lambda mod, keys: log.append(("post-fc", list(keys.missing_keys))))
m.register_load_state_dict_post_hook(lambda mod, keys: log.append(("post", list(keys.missing_keys), list(keys.unexpected_keys))))
m._register_load_state_dict_pre_hook(lambda sd, prefix, *rest: log.append(("old-style", prefix)))
sd = m.state_dict(); sd["fc.renamed"] = sd.pop("fc.weight"); sd["fc.renamed"] = sd["fc.renamed"] + 1
R(m.load_state_dict(sd), log, m.fc.weight)
""",
    "load_post_hook_clears_missing": NET + """
def forgive(mod, keys):
    keys.missing_keys.clear()
m.register_load_state_dict_post_hook(forgive)
sd = m.state_dict(); del sd["scale"]; sd["fc.bias"] = sd["fc.bias"] + 1
R(m.load_state_dict(sd), m.fc.bias)
""",
    "load_post_hook_must_return_none": NET + "m.register_load_state_dict_post_hook(lambda mod, k: 1); m.load_state_dict(m.state_dict())",
}  # fmt: skip

BACKWARD = """
class Two(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 3)
    def forward(self, a, k, b):
        return self.fc(a) * b.sum(), self.fc(b) * k
torch.manual_seed(0)
m = Two()
a = torch.randn(2, 3, requires_grad=True)
b = torch.randn(2, 3)
log = []
def show(gs):
    return [None if g is None else g for g in gs]
"""

BACKWARD_PROGRAMS = {
    "full_hook_linear": """
torch.manual_seed(0)
m = nn.Linear(3, 2); log = []
m.register_full_backward_hook(lambda mod, gi, go: log.append((type(mod).__name__, gi, go)))
x = torch.randn(4, 3, requires_grad=True)
m(x).pow(2).sum().backward(); R(log, x.grad)
""",
    "full_hook_input_without_grad": """
torch.manual_seed(0)
m = nn.Linear(3, 2); log = []
m.register_full_backward_hook(lambda mod, gi, go: log.append((gi, go)))
m(torch.randn(4, 3)).sum().backward(); R(log, m.weight.grad)
""",
    "full_hook_several_inputs_outputs": BACKWARD + """
m.register_full_backward_hook(lambda mod, gi, go: log.append(("full", show(gi), show(go))))
m.register_full_backward_pre_hook(lambda mod, go: log.append(("pre", show(go))))
x, y = m(a, 2.0, b); x.sum().backward(); R(log, a.grad)
log.clear(); b.requires_grad_(True)
x, y = m(a, 2.0, b); (x.sum() + y.pow(2).sum()).backward(); R(log, a.grad, b.grad)
""",
    "full_hook_replaces_grad_input": BACKWARD + """
def double(mod, gi, go):
    return tuple(None if g is None else g * 2 for g in gi)
m.register_full_backward_hook(double)
x, y = m(a, 2.0, b); x.sum().backward(); R(a.grad, m.fc.weight.grad)
""",
    "pre_hook_replaces_grad_output": BACKWARD + """
m.register_full_backward_pre_hook(lambda mod, go: (go[0] * 3, go[1]))
m.register_full_backward_hook(lambda mod, gi, go: log.append(show(go)))
x, y = m(a, 2.0, b); x.sum().backward(); R(a.grad, m.fc.weight.grad, log)
""",
    "hooks_order_prepend_remove": BACKWARD + """
h1 = m.register_full_backward_hook(lambda mod, gi, go: log.append(1))
m.register_full_backward_hook(lambda mod, gi, go: log.append(2))
m.register_full_backward_hook(lambda mod, gi, go: log.append(0), prepend=True)
m.register_full_backward_pre_hook(lambda mod, go: log.append("p1"))
m.register_full_backward_pre_hook(lambda mod, go: log.append("p0"), prepend=True)
x, y = m(a, 2.0, b); x.sum().backward(); R(log)
h1.remove(); log.clear(); x, y = m(a, 2.0, b); x.sum().backward(); R(log)
""",
    "fires_once_per_call": BACKWARD + """
m.register_full_backward_hook(lambda mod, gi, go: log.append(show(gi)))
x1, _ = m(a, 1.0, b); x2, _ = m(a * 2, 1.0, b)
(x1.sum() + x2.sum() + x1.pow(2).sum()).backward(); R(log, a.grad)
""",
    "nested_modules_order": """
torch.manual_seed(0)
inner = nn.Linear(3, 3); outer = nn.Sequential(inner, nn.Tanh(), nn.Linear(3, 1)); log = []
for name, mod in outer.named_modules():
    mod.register_full_backward_pre_hook(lambda mod, go, name=name: log.append(("pre", name)))
    mod.register_full_backward_hook(lambda mod, gi, go, name=name: log.append(("full", name, gi)))
x = torch.randn(2, 3, requires_grad=True)
outer(x).sum().backward(); R(log, x.grad)
""",
    "no_grad_call_runs_no_hook": """
m = nn.Linear(2, 2); log = []
m.register_full_backward_hook(lambda *a: log.append(1))
with torch.no_grad():
    y = m(torch.ones(1, 2))
R(y.requires_grad, log)
""",
    "create_graph_through_hook": """
torch.manual_seed(0)
m = nn.Sequential(nn.Linear(3, 3), nn.Tanh())
m.register_full_backward_hook(lambda mod, gi, go: (gi[0] * 2,))
x = torch.randn(2, 3, requires_grad=True)
g, = torch.autograd.grad(m(x).pow(3).sum(), x, create_graph=True)
g.sum().backward(); R(g, x.grad)
""",
    "in_place_module": """
m = nn.ReLU(inplace=True)
m.register_full_backward_hook(lambda *a: None)
x = torch.randn(3, requires_grad=True)
m(x * 1)
""",
    "both_kinds_refused": "m = nn.Linear(2, 2); m.register_full_backward_hook(lambda *a: None); m.register_backward_hook(lambda *a: None)",
    "both_kinds_refused_other_way": "m = nn.Linear(2, 2); m.register_backward_hook(lambda *a: None); m.register_full_backward_hook(lambda *a: None)",
    "wrong_number_of_grad_input": BACKWARD + """
m.register_full_backward_hook(lambda mod, gi, go: (gi[0],))
x, y = m(a, 2.0, b); x.sum().backward()
""",
    "wrong_number_of_grad_output": BACKWARD + """
m.register_full_backward_pre_hook(lambda mod, go: (go[0],))
x, y = m(a, 2.0, b); x.sum().backward()
""",
    "no_input_grad_hook_must_return_none": """
m = nn.Linear(2, 2); m.register_full_backward_hook(lambda mod, gi, go: (torch.ones(1, 2),))
m(torch.ones(1, 2)).sum().backward()
""",
    "deprecated_hook_on_one_op": """
m = nn.Tanh(); log = []
m.register_backward_hook(lambda mod, gi, go: log.append((gi, go)))
x = torch.linspace(-1, 1, 4, requires_grad=True)
m(x).sum().backward(); R(log, x.grad)
""",
}  # fmt: skip


# (torch.compile takes seconds to start: the programs that call it run with the slow tests)
@pytest.mark.parametrize(
    "name", [pytest.param(n, marks=pytest.mark.slow) if n.startswith("compile") else n for n in sorted(PROGRAMS)]
)
def test_module_api_as_pytorch(name: str) -> None:
    assert_same_as_torch(PROGRAMS[name], torch)


@pytest.mark.parametrize("name", sorted(BACKWARD_PROGRAMS))
def test_backward_hooks_as_pytorch(name: str) -> None:
    assert_same_as_torch(BACKWARD_PROGRAMS[name], torch, warns=False)


def test_cuda_without_a_device_raises_pytorchs_error() -> None:
    if tga.cuda.is_available() or torch.cuda.is_available():
        pytest.skip("a CUDA device is present")
    for lib in (torch, tga):
        with pytest.raises(AssertionError, match="not compiled with CUDA"):
            lib.nn.Linear(2, 2).cuda()


def test_bfloat16_casts_the_floating_parameters() -> None:
    pytest.importorskip("ml_dtypes")
    tga.manual_seed(0)
    torch.manual_seed(0)
    ours, theirs = (
        tga.nn.Sequential(tga.nn.Linear(2, 2)).bfloat16(),
        torch.nn.Sequential(torch.nn.Linear(2, 2)).bfloat16(),
    )
    assert ours[0].weight.dtype is tga.bfloat16 and ours[0].weight.requires_grad
    assert ours[0].weight.tolist() == theirs[0].weight.tolist()


def test_hooked_module_gradients_match_finite_differences() -> None:
    tga.manual_seed(0)
    m = tga.nn.Sequential(tga.nn.Linear(3, 2), tga.nn.Tanh()).double()
    m.register_full_backward_pre_hook(lambda mod, go: None)
    m.register_full_backward_hook(lambda mod, gi, go: None)
    x = tga.randn(4, 3, dtype=tga.float64, requires_grad=True)
    assert tga.autograd.gradcheck(lambda t: m(t), (x,))
    assert tga.autograd.gradgradcheck(lambda t: m(t), (x,))


@pytest.mark.parametrize(
    "change",
    [
        lambda m: m._apply(lambda t: t * 2),
        lambda m: m.to_empty(device="cpu") and m._apply(lambda t: t.fill_(0.5) if t.dtype.kind == "f" else t),
        lambda m: m.type(tga.float64),
        lambda m: m.set_submodule("1", tga.nn.Sigmoid()),
        lambda m: m.register_full_backward_hook(lambda mod, gi, go: (gi[0] * 0,)),
    ],
)
def test_compiled_step_sees_what_the_new_methods_change(change) -> None:
    """``tga.compile``'s guard re-reads a module tree only when ``nn.module._CHANGES`` moved."""
    tga.manual_seed(0)
    m = tga.nn.Sequential(tga.nn.Linear(3, 2), tga.nn.Tanh())
    m.register_buffer("shift", tga.ones(2))
    x = tga.randn(4, 3, requires_grad=True)

    def step(x):
        x.grad = None
        y = m(x) + m.shift
        y.sum().backward()
        return y, x.grad

    fast = tga.compile(step)
    fast(x)
    before = module_py._CHANGES[0]
    change(m)
    assert module_py._CHANGES[0] != before
    x = x.to(m[0].weight.dtype).detach().requires_grad_(True)
    got, got_grad = fast(x)
    want, want_grad = step(x)
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy())
    np.testing.assert_allclose(got_grad.detach().numpy(), want_grad.detach().numpy())


def test_compile_wraps_the_call_in_tga_compile() -> None:
    tga.manual_seed(0)
    m = tga.nn.Sequential(tga.nn.Linear(3, 2), tga.nn.Tanh())
    x = tga.randn(4, 3)
    want = m(x).detach().numpy()
    assert m.compile(fullgraph=True, mode="max-autotune") is None
    assert isinstance(m._compiled_call_impl, Compiled)
    for _ in range(3):
        np.testing.assert_allclose(m(x).detach().numpy(), want, rtol=1e-6)
    assert len(m._compiled_call_impl.programs) == 1  # (traced once, replayed after)
    eager = tga.nn.Linear(2, 2)
    eager.compile(disable=True)
    assert eager._compiled_call_impl is None
    with pytest.raises(TypeError, match=r"Linear\.compile: unexpected arguments.*'nonsense'"):
        eager.compile(nonsense=1)


def test_loading_into_a_lazy_module_asks_for_a_forward_first() -> None:
    m = tga.nn.LazyLinear(2)
    with pytest.raises(RuntimeError, match=r"'weight' is an uninitialized parameter .* run one forward"):
        m.load_state_dict(tga.nn.Linear(3, 2).state_dict())
    m(tga.ones(1, 3))
    src = tga.nn.Linear(3, 2)
    m.load_state_dict(src.state_dict())
    np.testing.assert_array_equal(m.weight.detach().numpy(), src.weight.detach().numpy())
