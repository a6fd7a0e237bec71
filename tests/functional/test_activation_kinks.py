"""Piecewise activations at their kinks and at infinities: PyTorch's value and gradient there
(the fast loop's fewer random draws found hardswish giving 0 at -inf and gradient 1.5 at 3)."""

from __future__ import annotations

import contextlib
import warnings

import numpy as np
import pytest

import tinygrad_attn as tga
import tinygrad_attn.functional as F

torch = pytest.importorskip("torch")
TF = torch.nn.functional

POINTS = np.array([-np.inf, -5.0, -3.0, -1e-300, 0.0, 2.0, 3.0, 6.0, 7.0, np.inf])
ACTIVATIONS = ["hardswish", "hardsigmoid", "relu6", "hardtanh", "relu", "leaky_relu", "elu"]


@pytest.mark.parametrize("decomposed", [False, True], ids=["fused", "decomposed"])
@pytest.mark.parametrize("name", ACTIVATIONS)
def test_kinks_and_infinities_as_pytorch(name, decomposed):
    a = tga.tensor(POINTS, requires_grad=True)
    b = torch.tensor(POINTS, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # (inf * 0 in the piece that gives PyTorch's NaN)
        with tga.decompose() if decomposed else contextlib.nullcontext():
            ours = getattr(F, name)(a)
            ours.sum().backward()
    theirs = getattr(TF, name)(b)
    theirs.sum().backward()
    # (to the last bits: x * (x + 3) / 6 and PyTorch's x * (x + 3) * (1 / 6) may round apart)
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-14, atol=0)
    # (PyTorch's hardsigmoid backward multiplies by 1/6 rounded to float32, even in float64)
    rtol = 1e-7 if name == "hardsigmoid" else 1e-14
    np.testing.assert_allclose(a.grad.detach().numpy(), b.grad.detach().numpy(), rtol=rtol, atol=0)


# (name, keyword arguments): the ELU family's and PReLU's second derivatives at 0 are PyTorch's
# double-backward formulas', which count only x < 0 (not the negative side's curvature, which
# the first derivative there takes); and every other activation's at its kinks, infinities and NaN
SMOOTH_SIDE = [("elu", {"alpha": a}) for a in (1.0, 0.5, 2.0)] + [("celu", {"alpha": a}) for a in (1.0, 0.5, 3.0)]
SMOOTH_SIDE += [("selu", {}), ("prelu", {"weight": 0.25}), ("prelu", {"weight": -1.5}), ("prelu", {"weight": np.inf})]
SMOOTH_SIDE += [(name + "_", kw) for name, kw in SMOOTH_SIDE if name != "prelu"]  # (the in-place twins)
# every other activation with a second derivative in PyTorch (hardsigmoid's backward has none there)
SMOOTH_SIDE += [(name, {}) for name in ("relu", "relu6", "hardtanh", "leaky_relu", "hardswish", "softplus", "gelu",
                                        "silu", "mish", "tanhshrink", "softsign", "logsigmoid", "hardshrink",
                                        "softshrink", "sigmoid", "tanh", "rrelu")]  # fmt: skip
SMOOTH_SIDE += [("threshold", {"threshold": 0.5, "value": -1.0})]
SECOND_POINTS = np.array([-np.inf, -2.0, -1e-300, -0.0, 0.0, 1e-300, 1.5, np.inf, np.nan])


def _first_and_second(module, fn, x, kw, inplace):
    """Value, gradient and second-order gradients (of x and of prelu's weight) of ``fn`` at x."""
    leaf = module.tensor(x, dtype=module.float64, requires_grad=True)
    args = [leaf.clone() * 1.0 if inplace else leaf]
    wrt = [leaf]
    if "weight" in kw:
        w = module.tensor([kw["weight"]], dtype=module.float64, requires_grad=True)
        args.append(w)
        wrt.append(w)
    kw = {k: v for k, v in kw.items() if k != "weight"}
    out = fn(*args, **kw)
    cot = module.tensor(np.linspace(0.5, 2.0, x.size), dtype=module.float64)
    grads = module.autograd.grad(out, wrt, cot, create_graph=True)
    s = sum((g * (i + 2.0)).sum() for i, g in enumerate(grads))
    seconds = module.autograd.grad(s, wrt, allow_unused=True) if s.requires_grad else [None] * len(wrt)
    seconds = [np.zeros(t.shape) if g is None else g.detach().numpy() for g, t in zip(seconds, wrt)]
    return [out.detach().numpy()] + [g.detach().numpy() for g in grads] + seconds


@pytest.mark.parametrize("name, kw", SMOOTH_SIDE, ids=[f"{n}-{kw}" for n, kw in SMOOTH_SIDE])
def test_second_derivative_at_kinks_as_pytorch(name, kw):
    inplace = name.endswith("_")
    ours_fn, theirs_fn = getattr(F, name), getattr(TF, name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        ours = _first_and_second(tga, ours_fn, SECOND_POINTS, kw, inplace)
    theirs = _first_and_second(torch, theirs_fn, SECOND_POINTS, kw, inplace)
    for what, o, t in zip(["value", "gradient", "second"] if "weight" not in kw else
                          ["value", "gradient", "weight gradient", "second", "weight second"], ours, theirs):  # fmt: skip
        np.testing.assert_allclose(o, t, rtol=1e-12, atol=0, equal_nan=True, err_msg=f"{name}{kw}: {what}")


@pytest.mark.parametrize("after", ["sqrt", "log", "pow_half"])
def test_relu_drops_an_infinite_gradient_where_it_is_off(after, device):
    """PyTorch's threshold_backward selects, it does not multiply: sqrt(relu(x)) at x <= 0 gets 0, not
    0 * inf = NaN (each device's path: NumPy's product with its check, the others' where)."""
    points = np.array([-1.0, -0.0, 0.0, 2.0, np.inf, -np.inf, np.nan])
    then = {"sqrt": lambda m, y: m.sqrt(y), "log": lambda m, y: m.log(y), "pow_half": lambda m, y: y**0.5}[after]
    got, want = [], []
    for m, out, dev in ((tga, got, device), (torch, want, None)):
        x = m.tensor(points, requires_grad=True) if dev is None else tga.tensor(points, requires_grad=True, device=dev)
        with np.errstate(all="ignore"):
            y = then(m, m.relu(x))
            (g,) = m.autograd.grad(y, x, m.ones_like(y), create_graph=True)
            (h,) = m.autograd.grad(g.sum(), x)
        out += [g.detach().numpy(), h.detach().numpy()]
    for o, w in zip(got, want):
        np.testing.assert_allclose(o, w, equal_nan=True)
