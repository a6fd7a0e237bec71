"""Programs written for PyTorch's autograd, run with ``torch`` bound to PyTorch and to
tinygrad_attn (tests/differential.py), observe the same: gradient hooks (a hook's return replaces
the gradient), ``retain_grad``, accumulation across backward calls, the errors of a second
backward, of a non-scalar backward and of in-place changes to leaves and to saved tensors, the
warning of a non-leaf's ``.grad``, ``.grad`` assignment checks, ``autograd.grad`` with
``allow_unused``/``materialize_grads``, and grad mode switched by ``no_grad``/``enable_grad``/
``set_grad_enabled``/``inference_mode`` as blocks, decorators (with and without parentheses) and
around generators."""

from __future__ import annotations

import warnings

import pytest

from tests.differential import assert_same_as_torch

torch = pytest.importorskip("torch")

PROGRAMS = {
    "hook_replace": """
x = torch.tensor([1., 2., 3.], requires_grad=True)
h = x.register_hook(lambda g: g * 2)
(x * x).sum().backward(); R(x.grad)
h.remove(); x.grad = None
(x * x).sum().backward(); R(x.grad)
""",
    "hook_nonleaf": """
x = torch.tensor([1., 2., 3.], requires_grad=True)
y = x * 2
y.register_hook(lambda g: g + 1)
y.sum().backward(); R(x.grad, y.grad)
""",
    "hook_none_return": """
x = torch.tensor([1., 2.], requires_grad=True)
seen = []
x.register_hook(lambda g: seen.append(g.clone()))
(x**3).sum().backward(); R(x.grad, seen)
""",
    "hook_on_nograd": """
x = torch.tensor([1., 2.])
x.register_hook(lambda g: g)
""",
    "retain_grad": """
x = torch.tensor([1., 2., 3.], requires_grad=True)
y = x * 3; y.retain_grad(); z = y * y
z.sum().backward(); R(y.grad, x.grad, y.is_leaf, y.retains_grad, x.retains_grad, z.retains_grad)
""",
    "accumulate": """
x = torch.tensor([1., 2., 3.], requires_grad=True)
(x * x).sum().backward(); (x * 3).sum().backward(); R(x.grad)
""",
    "retain_graph_err": """
x = torch.tensor([1., 2., 3.], requires_grad=True)
y = (x.exp()).sum(); y.backward(); y.backward()
""",
    "retain_graph_ok": """
x = torch.tensor([1., 2., 3.], requires_grad=True)
y = (x.exp()).sum(); y.backward(retain_graph=True); y.backward(); R(x.grad)
""",
    "retain_graph_simple_add": """
x = torch.tensor([1., 2., 3.], requires_grad=True)
y = (x * 2).sum(); y.backward(); y.backward(); R(x.grad)
""",
    "nonscalar_backward": """
x = torch.tensor([1., 2., 3.], requires_grad=True)
(x * 2).backward()
""",
    "nonscalar_backward_grad": """
x = torch.tensor([1., 2., 3.], requires_grad=True)
(x * 2).backward(torch.ones(3)); R(x.grad)
""",
    "backward_wrong_shape": """
x = torch.tensor([1., 2., 3.], requires_grad=True)
(x * 2).backward(torch.ones(2))
""",
    "backward_no_grad": """
x = torch.tensor([1., 2., 3.])
(x * 2).sum().backward()
""",
    "nonleaf_grad": """
x = torch.tensor([1., 2., 3.], requires_grad=True)
y = x * 2
y.sum().backward(); R(y.grad)
""",
    "requires_grad_nonleaf": """
x = torch.tensor([1., 2., 3.], requires_grad=True)
y = x * 2
y.requires_grad_(False)
""",
    "requires_grad_nonleaf_true": """
x = torch.tensor([1., 2., 3.], requires_grad=True)
y = x * 2
y.requires_grad_(True); R(y.requires_grad)
""",
    "requires_grad_int": """
x = torch.tensor([1, 2, 3])
x.requires_grad_()
""",
    "requires_grad_int_ctor": """
x = torch.tensor([1, 2, 3], requires_grad=True)
""",
    "detach_share": """
x = torch.tensor([1., 2., 3.], requires_grad=True)
d = x.detach(); d[0] = 10.; R(x, d.requires_grad, d.is_leaf)
""",
    "detach_inplace": """
x = torch.tensor([1., 2., 3.], requires_grad=True)
y = x * 2
y.detach_(); R(y.requires_grad, y.is_leaf, y.grad_fn)
""",
    "detach_view_inplace": """
x = torch.tensor([1., 2., 3.], requires_grad=True)
y = x[:2]
y.detach_()
""",
    "inplace_leaf": """
x = torch.tensor([1., 2., 3.], requires_grad=True)
x.add_(1)
""",
    "inplace_leaf_setitem": """
x = torch.tensor([1., 2., 3.], requires_grad=True)
x[0] = 5
""",
    "inplace_leaf_nograd": """
x = torch.tensor([1., 2., 3.], requires_grad=True)
with torch.no_grad():
    x.add_(1); x[0] = 7
R(x, x.requires_grad, x.is_leaf)
""",
    "inplace_saved": """
x = torch.tensor([1., 2., 3.], requires_grad=True)
y = x * 1
z = y.exp()
y.add_(1)
z.sum().backward()
""",
    "inplace_saved_sigmoid": """
x = torch.tensor([1., 2., 3.], requires_grad=True)
y = x.sigmoid()
y.mul_(2)
y.sum().backward()
""",
    "inplace_notsaved": """
x = torch.tensor([1., 2., 3.], requires_grad=True)
y = x * 1
z = y + 2
y.add_(1)
z.sum().backward(); R(x.grad, y._version)
""",
    "version": """
x = torch.tensor([1., 2., 3.])
R(x._version); x.add_(1); R(x._version); x[0] = 1; R(x._version); x += 1; R(x._version)
v = x[1:]; v.mul_(2); R(x._version, v._version)
""",
    "autograd_grad_unused": """
x = torch.tensor([1., 2.], requires_grad=True); y = torch.tensor([3.], requires_grad=True)
torch.autograd.grad((x*2).sum(), [x, y])
""",
    "autograd_grad_allow_unused": """
x = torch.tensor([1., 2.], requires_grad=True); y = torch.tensor([3.], requires_grad=True)
R(torch.autograd.grad((x*2).sum(), [x, y], allow_unused=True))
""",
    "autograd_grad_materialize": """
x = torch.tensor([1., 2.], requires_grad=True); y = torch.tensor([3.], requires_grad=True)
R(torch.autograd.grad((x*2).sum(), [x, y], materialize_grads=True))
""",
    "autograd_grad_materialize_no_allow": """
x = torch.tensor([1., 2.], requires_grad=True); y = torch.tensor([3.], requires_grad=True)
R(torch.autograd.grad((x*2).sum(), [x, y], allow_unused=False, materialize_grads=True))
""",
    "autograd_grad_single": """
x = torch.tensor([1., 2.], requires_grad=True)
g = torch.autograd.grad((x*x).sum(), x); R(type(g), g, x.grad)
""",
    "autograd_grad_create": """
x = torch.tensor([1., 2.], requires_grad=True)
g, = torch.autograd.grad((x**3).sum(), x, create_graph=True); R(g.requires_grad); g.sum().backward(); R(x.grad)
""",
    "autograd_grad_nonscalar": """
x = torch.tensor([1., 2.], requires_grad=True)
torch.autograd.grad(x*2, x)
""",
    "autograd_grad_outputs": """
x = torch.tensor([1., 2.], requires_grad=True)
R(torch.autograd.grad(x*2, x, grad_outputs=torch.tensor([1., 3.])))
""",
    "autograd_grad_no_req": """
x = torch.tensor([1., 2.])
torch.autograd.grad((x*2).sum(), x)
""",
    "autograd_backward_fn": """
x = torch.tensor([1., 2.], requires_grad=True)
torch.autograd.backward([(x*2).sum(), (x*x).sum()]); R(x.grad)
""",
    "backward_inputs": """
x = torch.tensor([1., 2.], requires_grad=True); y = torch.tensor([3., 4.], requires_grad=True)
(x*y).sum().backward(inputs=[x]); R(x.grad, y.grad)
""",
    "no_grad_nest": """
x = torch.tensor([1.], requires_grad=True)
with torch.no_grad():
    a = x * 2
    with torch.enable_grad():
        b = x * 2
    c_ = x * 2
with torch.set_grad_enabled(False):
    d = x * 2
torch.set_grad_enabled(False); e = x * 2; R(torch.is_grad_enabled()); torch.set_grad_enabled(True)
R(a.requires_grad, b.requires_grad, c_.requires_grad, d.requires_grad, e.requires_grad, torch.is_grad_enabled())
""",
    "no_grad_deco": """
x = torch.tensor([1.], requires_grad=True)
@torch.no_grad()
def f(t): return t * 2
@torch.no_grad
def f2(t): return t * 2
@torch.enable_grad()
def g(t): return t * 2
with torch.no_grad():
    r = g(x)
R(f(x).requires_grad, f2(x).requires_grad, r.requires_grad)
""",
    "no_grad_generator": """
x = torch.tensor([1.], requires_grad=True)
@torch.no_grad()
def gen():
    yield x * 2
    yield x * 3
R([t.requires_grad for t in gen()])
""",
    "grad_set_wrong_shape": """
x = torch.tensor([1., 2.], requires_grad=True)
x.grad = torch.ones(3)
""",
    "grad_set": """
x = torch.tensor([1., 2.], requires_grad=True)
x.grad = torch.ones(2); (x*2).sum().backward(); R(x.grad)
""",
    "grad_set_dtype": """
x = torch.tensor([1., 2.], requires_grad=True)
x.grad = torch.ones(2, dtype=torch.float64)
""",
    "int_grad": """
x = torch.tensor([1., 2.], requires_grad=True)
y = (x * 2).long(); R(y.requires_grad, y.grad_fn)
""",
    "argmax_grad": """
x = torch.tensor([1., 2.], requires_grad=True)
R(x.argmax().requires_grad, (x > 1).requires_grad)
""",
    "double_backward_leaf_zero": """
x = torch.tensor([1., 2.], requires_grad=True)
y = (x * x).sum(); y.backward(); x.grad.zero_(); (x*x).sum().backward(); R(x.grad)
""",
    "leaf_grad_after_no_create": """
x = torch.tensor([1., 2.], requires_grad=True)
(x ** 3).sum().backward(); R(x.grad.requires_grad, x.grad.is_leaf, x.grad.grad_fn)
""",
    "scalar_backward_float": """
x = torch.tensor(2., requires_grad=True)
y = x * x; y.backward(torch.tensor(3.)); R(x.grad)
""",
    "hook_handle_remove_twice": """
x = torch.tensor([1.], requires_grad=True)
h = x.register_hook(lambda g: g*2); h.remove(); h.remove(); (x*1).sum().backward(); R(x.grad)
""",
    "post_acc_hook": """
x = torch.tensor([1., 2.], requires_grad=True)
seen = []
x.register_post_accumulate_grad_hook(lambda p: seen.append(p.grad.clone()))
(x * 3).sum().backward(); R(seen)
""",
    "hook_wrong_shape": """
x = torch.tensor([1., 2.], requires_grad=True)
x.register_hook(lambda g: torch.ones(3))
(x * 3).sum().backward()
""",
    "numpy_nonleaf": """
x = torch.tensor([1., 2.], requires_grad=True)
R(x.detach().numpy().tolist(), x.tolist(), x.sum().item())
""",
    "grad_of_view": """
x = torch.tensor([[1., 2.], [3., 4.]], requires_grad=True)
y = x.t(); y.retain_grad(); (y * torch.tensor([[1., 2.], [3., 4.]])).sum().backward(); R(x.grad, y.grad)
""",
    "inplace_view_of_leaf": """
x = torch.tensor([1., 2., 3.], requires_grad=True)
v = x[1:]
v.mul_(3)
""",
    "detach_grad_ver": """
x = torch.tensor([1., 2., 3.], requires_grad=True)
y = x.exp()
y.detach().zero_()
y.sum().backward()
""",
    "set_detect": """
with torch.autograd.set_detect_anomaly(True):
    x = torch.tensor([1.], requires_grad=True); (x*2).sum().backward()
R(x.grad)
""",
    "is_leaf": """
a = torch.rand(3, requires_grad=True); b = torch.rand(3, requires_grad=True).cuda() if False else a * 1
c_ = torch.rand(3) + 2; d = torch.rand(3, requires_grad=True) + 2; e = d.detach()
R(a.is_leaf, b.is_leaf, c_.is_leaf, d.is_leaf, e.is_leaf)
""",
    "grad_requires_grad_create": """
x = torch.tensor([1., 2.], requires_grad=True)
(x ** 3).sum().backward(create_graph=True); R(x.grad.requires_grad, x.grad)
""",
    "next_functions": """
def name(node):
    return None if node is None else repr(node).split(" object at ")[0].lstrip("<")
x = torch.tensor([1., 2.], requires_grad=True); w = torch.tensor([3., 4.])
y = ((x * w).exp() + x).sum()
f = y.grad_fn
R(name(f), [name(n) for n, _ in f.next_functions])
add = f.next_functions[0][0]
R([name(n) for n, _ in add.next_functions], [i for _, i in add.next_functions])
leaf = add.next_functions[1][0]
R(leaf.variable is x, leaf.next_functions)
""",
}


# PyTorch gives these warnings once per process (its C++ TORCH_WARN_ONCE): compared here in
# values only, and the warning checked on its own below
WARN_ONCE = {"grad_requires_grad_create"}


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_autograd_program_observes_what_pytorch_does(name: str) -> None:
    assert_same_as_torch(PROGRAMS[name], torch, warns=name not in WARN_ONCE)


def test_backward_with_create_graph_warns_of_the_cycle_through_grad() -> None:
    import tinygrad_attn as tga  # noqa: PLC0415

    x = tga.tensor([1.0, 2.0], requires_grad=True)
    with pytest.warns(UserWarning, match="create_graph=True will create a reference cycle"):
        (x**3).sum().backward(create_graph=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        (x**3).sum().backward(create_graph=True, inputs=[x])  # (inputs named: no .grad of a leaf holds a graph)
        tga.autograd.grad((x**3).sum(), x, create_graph=True)
