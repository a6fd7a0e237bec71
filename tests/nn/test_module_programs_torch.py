"""Programs written against PyTorch's ``nn.Module`` API, run with ``torch`` bound to PyTorch
and to tinygrad_attn (tests/differential.py), observe the same: state dict keys, order and type,
``load_state_dict``'s errors and result, the order of ``named_parameters``/``named_buffers``/
``named_modules``/``children``, non-persistent buffers, the errors of ``register_buffer``/
``register_parameter``, ``apply``, train/eval, casts, ``zero_grad``, shared parameters, the
containers' indexing, slicing, ``append``/``insert``/``del``/``pop``, forward (pre-)hooks and
reprs."""

from __future__ import annotations

import pytest

from tests.differential import assert_same_as_torch

torch = pytest.importorskip("torch")

MODEL = """
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(3, 4)
        self.bn = nn.BatchNorm1d(4)
        self.seq = nn.Sequential(nn.ReLU(), nn.Linear(4, 2))
        self.register_buffer('scale', torch.ones(2))
        self.register_buffer('tmp', torch.zeros(1), persistent=False)
        self.alpha = nn.Parameter(torch.tensor(0.5))
    def forward(self, x):
        return self.seq(self.bn(self.fc1(x))) * self.scale * self.alpha
torch.manual_seed(0)
m = Net()
"""

PROGRAMS = {
    "sd_keys": MODEL
    + """
R(list(m.state_dict().keys()))
""",
    "sd_types": MODEL
    + """
sd = m.state_dict(); R(type(sd).__name__, [v.requires_grad for v in sd.values()], sd["bn.num_batches_tracked"])
""",
    "named_params": MODEL
    + """
R([n for n, _ in m.named_parameters()], [n for n, _ in m.named_buffers()], [n for n, _ in m.named_modules()], [n for n, _ in m.named_children()])
""",
    "named_params_prefix": MODEL
    + """
R([n for n, _ in m.named_parameters(prefix="a", recurse=False)], [n for n, _ in m.named_modules(prefix="z")])
""",
    "load_strict_missing": MODEL
    + """
sd = m.state_dict(); del sd["fc1.weight"]; m.load_state_dict(sd)
""",
    "load_strict_unexpected": MODEL
    + """
sd = m.state_dict(); sd["junk"] = torch.ones(1); m.load_state_dict(sd)
""",
    "load_nonstrict": MODEL
    + """
sd = m.state_dict(); del sd["fc1.weight"]; sd["junk"] = torch.ones(1)
r = m.load_state_dict(sd, strict=False); R(r.missing_keys, r.unexpected_keys, type(r).__name__, list(r))
""",
    "load_ok_result": MODEL
    + """
r = m.load_state_dict(m.state_dict()); R(r.missing_keys, r.unexpected_keys, str(r))
""",
    "load_shape_mismatch": MODEL
    + """
sd = m.state_dict(); sd["fc1.weight"] = torch.ones(2, 2); m.load_state_dict(sd)
""",
    "load_copies": MODEL
    + """
sd = {k: v.clone() for k, v in m.state_dict().items()}; sd["fc1.bias"].fill_(3.); m.load_state_dict(sd); sd["fc1.bias"].fill_(4.); R(m.fc1.bias)
""",
    "sd_shares": MODEL
    + """
sd = m.state_dict(); sd["fc1.bias"].fill_(3.); R(m.fc1.bias)
""",
    "train_eval": MODEL
    + """
m.eval(); R(m.training, m.bn.training, m.seq[0].training); m.train(); R(m.bn.training); m.seq.train(False); R(m.training, m.seq[1].training)
""",
    "apply": MODEL
    + """
names = []
r = m.apply(lambda mod: names.append(type(mod).__name__)); R(names, r is m)
""",
    "to_double": MODEL
    + """
m.double(); R([p.dtype for p in m.parameters()], m.scale.dtype, m.bn.num_batches_tracked.dtype)
""",
    "to_half": MODEL
    + """
m.half(); R([p.dtype for p in m.parameters()], m.bn.running_mean.dtype)
""",
    "to_dtype": MODEL
    + """
r = m.to(torch.float64); R(r is m, m.fc1.weight.dtype, m.tmp.dtype); m.to(dtype=torch.float16); R(m.alpha.dtype)
""",
    "zero_grad": MODEL
    + """
out = m(torch.randn(5, 3)).sum(); out.backward()
R([p.grad is None for p in m.parameters()]); m.zero_grad(); R([p.grad is None for p in m.parameters()])
out = m(torch.randn(5, 3)).sum(); out.backward(); m.zero_grad(set_to_none=False); R([p.grad for p in m.parameters()])
""",
    "repr": MODEL
    + """
R(repr(m))
""",
    "param_repr": MODEL
    + """
R(repr(m.alpha), str(m.alpha))
""",
    "extra_repr": MODEL
    + """
R(repr(nn.Linear(2, 3, bias=False)), repr(nn.Conv2d(1, 2, 3)), repr(nn.Dropout(0.2)), repr(nn.LayerNorm(4)), repr(nn.Embedding(10, 3)))
""",
    "shared_params": """
class S(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(2, 2); self.b = self.a; self.w = self.a.weight
s = S()
R([n for n, _ in s.named_parameters()], len(list(s.parameters())), list(s.state_dict().keys()), [n for n, _ in s.named_modules()], [n for n, _ in s.named_parameters(remove_duplicate=False)])
""",
    "register_errors": """
m = nn.Module()
try: m.register_buffer('a.b', torch.ones(1))
except Exception as e: R(type(e))
try: m.register_buffer('x', 3)
except Exception as e: R(type(e))
try: m.register_parameter('p', torch.ones(1))
except Exception as e: R(type(e))
try: m.register_buffer('', torch.ones(1))
except Exception as e: R(type(e))
m.x = 5
try: m.register_buffer('x', torch.ones(1))
except Exception as e: R(type(e))
m.register_parameter('q', None); R(list(m.state_dict()), m.q)
m.register_buffer('bb', None); R(list(m.state_dict()), m.bb)
""",
    "register_before_init": """
class B(nn.Module):
    def __init__(self):
        self.w = nn.Parameter(torch.ones(1))
        super().__init__()
B()
""",
    "param_assign_tensor": """
l = nn.Linear(2, 2)
l.weight = torch.ones(2, 2)
""",
    "setattr_overwrite": """
l = nn.Linear(2, 2)
l.weight = nn.Parameter(torch.ones(2, 2)); R([n for n, _ in l.named_parameters()])
l.bias = None; R([n for n, _ in l.named_parameters()], list(l.state_dict()))
""",
    "delattr": """
l = nn.Linear(2, 2)
del l.bias; R([n for n, _ in l.named_parameters()], hasattr(l, 'bias'))
""",
    "modulelist": """
ml = nn.ModuleList([nn.Linear(1, 1), nn.ReLU()])
ml.append(nn.Tanh()); ml.insert(1, nn.Sigmoid()); ml.extend([nn.Identity()])
R(len(ml), [type(x).__name__ for x in ml], type(ml[1:3]).__name__, len(ml[1:3]), type(ml[-1]).__name__)
del ml[0]; R(len(ml), [n for n, _ in ml.named_children()])
ml[0] = nn.ELU(); R(repr(ml))
R(type(ml + nn.ModuleList([nn.ReLU()])).__name__)
""",
    "modulelist_idx_err": """
ml = nn.ModuleList([nn.ReLU()])
ml[3]
""",
    "moduledict": """
md = nn.ModuleDict({'b': nn.ReLU(), 'a': nn.Tanh()})
md['c'] = nn.Identity(); R(list(md.keys()), len(md), 'a' in md, [type(v).__name__ for v in md.values()])
p = md.pop('b'); R(type(p).__name__, list(md)); md.update({'z': nn.ReLU()}); R(list(md.items())[-1][0], repr(md))
""",
    "sequential": """
s = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1))
R(type(s[0:2]).__name__, len(s[0:2]), type(s[-1]).__name__, [n for n, _ in s[1:].named_children()], len(s))
s.append(nn.Sigmoid()); R(len(s)); del s[1]; R([n for n, _ in s.named_children()])
s.insert(0, nn.Identity()); R([n for n, _ in s.named_children()])
R(repr(s))
""",
    "sequential_odict": """
from collections import OrderedDict
s = nn.Sequential(OrderedDict([('fc', nn.Linear(2, 3)), ('act', nn.ReLU())]))
R(list(s.state_dict().keys()), type(s.fc).__name__, type(s[1]).__name__, repr(s))
""",
    "parameterlist": """
pl = nn.ParameterList([nn.Parameter(torch.ones(2)), nn.Parameter(torch.zeros(3))])
m = nn.Module(); m.pl = pl; R(list(m.state_dict()), len(pl)); pl.append(nn.Parameter(torch.ones(1))); R(len(list(m.parameters())))
pd = nn.ParameterDict({'a': nn.Parameter(torch.ones(1))}); m.pd = pd; R(list(m.state_dict()))
""",
    "buffers_state": """
m = nn.BatchNorm1d(2)
R(list(m.state_dict()), [n for n, _ in m.named_buffers()], m.num_batches_tracked)
m(torch.randn(4, 2)); R(m.num_batches_tracked)
""",
    "modules_iter": """
m = nn.Sequential(nn.Linear(1, 1), nn.Sequential(nn.ReLU(), nn.Linear(1, 1)))
R([type(x).__name__ for x in m.modules()], [type(x).__name__ for x in m.children()], m.get_submodule('1.1').in_features, m.get_parameter('1.1.weight').shape)
""",
    "requires_grad_module": """
m = nn.Linear(2, 2); r = m.requires_grad_(False); R(r is m, [p.requires_grad for p in m.parameters()])
""",
    "forward_hooks": """
m = nn.Linear(2, 2); seen = []
h = m.register_forward_hook(lambda mod, inp, out: out * 0)
h2 = m.register_forward_pre_hook(lambda mod, inp: (inp[0] * 2,))
R(m(torch.ones(1, 2))); h.remove(); h2.remove(); R(m(torch.zeros(1, 2)) .shape)
""",
    "copy_deepcopy_module": """
m = nn.Linear(2, 2); m2 = copy.deepcopy(m)
R(m2.weight.data_ptr() != m.weight.data_ptr(), bool((m2.weight == m.weight).all()), type(m2.weight).__name__, m2.weight.requires_grad)
""",
    "num_params": """
m = nn.Linear(3, 4)
R(sum(p.numel() for p in m.parameters()), sum(p.numel() for p in m.parameters() if p.requires_grad))
""",
    "state_dict_keep_vars": """
m = nn.Linear(2, 2)
R(type(m.state_dict(keep_vars=True)['weight']).__name__, m.state_dict()['weight'].requires_grad)
""",
    "state_dict_prefix": """
m = nn.Linear(2, 2)
R(list(m.state_dict(prefix='x.').keys()))
""",
    "getattr_missing": """
m = nn.Linear(2, 2)
m.nothing
""",
    "train_arg_err": """
m = nn.Linear(2, 2)
m.train('yes')
""",
    "module_call_kwargs": """
class K(nn.Module):
    def forward(self, x, *, s=1): return x * s
R(K()(torch.ones(2), s=3))
""",
}


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_module_program_observes_what_pytorch_does(name: str) -> None:
    assert_same_as_torch(PROGRAMS[name], torch)


MODELS = {
    "TransformerEncoderLayer": lambda t: t.nn.TransformerEncoderLayer(16, 2),
    "TransformerDecoderLayer": lambda t: t.nn.TransformerDecoderLayer(16, 2, norm_first=True),
    "MultiheadAttention": lambda t: t.nn.MultiheadAttention(8, 2, batch_first=True),
    "TransformerEncoder": lambda t: t.nn.TransformerEncoder(
        t.nn.TransformerEncoderLayer(8, 2, 16), 3, enable_nested_tensor=False
    ),  # fmt: skip
    "Transformer": lambda t: t.nn.Transformer(16, 2, 1, 1, 32),
    "ModuleList of equal layers": lambda t: t.nn.ModuleList([t.nn.Linear(2, 2) for _ in range(4)]),
    "ModuleList of runs": lambda t: t.nn.ModuleList(
        [t.nn.Linear(2, 2), t.nn.Linear(2, 2), t.nn.ReLU(), t.nn.Sequential(t.nn.ReLU()), t.nn.Sequential(t.nn.ReLU())]
    ),
    "empty ModuleList": lambda t: t.nn.ModuleList(),
    "Sequential of equal layers": lambda t: t.nn.Sequential(*[t.nn.Linear(2, 2) for _ in range(3)]),
    "LayerNorm": lambda t: t.nn.LayerNorm([2, 3], elementwise_affine=False),
}


@pytest.mark.filterwarnings("ignore:enable_nested_tensor")
@pytest.mark.parametrize("name", list(MODELS))
def test_model_repr_is_pytorchs(name: str) -> None:
    import tinygrad_attn as tga  # noqa: PLC0415

    assert repr(MODELS[name](tga)) == repr(MODELS[name](torch))
