"""What kind of gradient each op hands back, against PyTorch: its dtype (a float32 leaf's
gradient is float32 whatever float64 it met, in ``.grad`` too) over every op that takes
two tensors and every pair of float dtypes and operand ranks; and, under
``create_graph=True``, whether it requires grad (a gradient that is a step function of
the input, as ``relu``'s, does: a gradient penalty's ``backward()`` then runs).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import tinygrad_attn as tga

torch = pytest.importorskip("torch")

FLOATS = ["float16", "float32", "float64"]


def _two(m):
    """Ops of two tensors, each ``(a, b) -> tensor``, differentiable in both (or in ``a``)."""
    F = m.nn.functional
    return {
        "add": lambda a, b: a + b,
        "sub": lambda a, b: a - b,
        "mul": lambda a, b: a * b,
        "div": lambda a, b: a / b,
        "pow": lambda a, b: a.abs() ** b,
        "where": lambda a, b: m.where(a > 0.5, a, b),
        "clamp": lambda a, b: a.clamp(b, b + 1.0),
        "clamp_min": lambda a, b: a.clamp(min=b),
        "cat": lambda a, b: m.cat([a.reshape(-1), b.reshape(-1)]),
        "stack": lambda a, b: m.stack([a, b.expand(a.shape)]),
        "maximum": lambda a, b: m.maximum(a, b),
        "minimum": lambda a, b: m.minimum(a, b),
        "atan2": lambda a, b: m.atan2(a, b),
        "hypot": lambda a, b: m.hypot(a, b),
        "xlogy": lambda a, b: m.xlogy(a, b.abs() + 1.0),
        "copysign": lambda a, b: m.copysign(a, b),
        "fmod": lambda a, b: m.fmod(a, b.abs() + 1.0),
        "lerp": lambda a, b: m.lerp(a, b.expand(a.shape), 0.25),
        "mse": lambda a, b: F.mse_loss(a, b.expand(a.shape)),
        "fill_": lambda a, b: (a * 1.0).fill_(b.reshape(-1)[0]),
        "masked_fill_": lambda a, b: (a * 1.0).masked_fill_(a.detach() > 0.5, b.reshape(-1)[0]),
    }


def _cases():
    for name in _two(tga):
        for d1 in FLOATS:
            for d2 in FLOATS:
                for rank in ("tensor", "0-d"):
                    yield name, d1, d2, rank


def _leaves(m, d1: str, d2: str, rank: str):
    a = np.array([0.25, 0.75, 1.5, 2.0]).astype(d1)
    b = (np.array([0.5, 1.25, 0.75, 1.0]) if rank == "tensor" else np.array(0.5)).astype(d2)
    return m.tensor(a, requires_grad=True), m.tensor(b, requires_grad=True)


@pytest.mark.parametrize("name, d1, d2, rank", list(_cases()))
def test_a_gradient_has_its_leafs_dtype(name, d1, d2, rank):
    ta, tb = _leaves(torch, d1, d2, rank)
    xa, xb = _leaves(tga, d1, d2, rank)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            out_t = _two(torch)[name](ta, tb)
        except (RuntimeError, TypeError):
            out_t = None
        if out_t is None:
            with pytest.raises((RuntimeError, TypeError)):
                _two(tga)[name](xa, xb)
            return
        out_t.float().sum().backward()
        out = _two(tga)[name](xa, xb)
        out.float().sum().backward()
    assert str(out.dtype) == str(out_t.dtype), f"{name}: result {out.dtype}, PyTorch's {out_t.dtype}"
    for x, t, which in ((xa, ta, "a"), (xb, tb, "b")):
        if t.grad is None or not t.grad.any():  # (no gradient and zeros are one: copysign's other)
            assert x.grad is None or not np.any(x.grad.detach().numpy()), (
                f"{name}: {which} gets a gradient, PyTorch's none"
            )
            continue
        assert x.grad is not None, f"{name}: {which} gets no gradient"
        assert x.grad.dtype == x.dtype, f"{name}: {which}'s .grad is {x.grad.dtype}, the leaf {x.dtype}"
        tol = 1e-2 if "float16" in (d1, d2) else 1e-5
        np.testing.assert_allclose(
            x.grad.detach().numpy().astype(np.float64), t.grad.double().detach().numpy(), rtol=tol, atol=tol
        )


def _graphs(m):
    F = m.nn.functional
    zeros = m.zeros(2, 3)
    return {
        "relu": lambda x: x.relu(),
        "abs": lambda x: x.abs(),
        "clamp": lambda x: x.clamp(-0.5, 1.0),
        "sign": lambda x: x.sign(),
        "floor": lambda x: x.floor(),
        "max": lambda x: x.max(),
        "amax": lambda x: x.amax(1),
        "where": lambda x: m.where(x > 0, x, 0.0),
        "masked_fill": lambda x: x.masked_fill(x > 1, 0.0),
        "leaky_relu": lambda x: F.leaky_relu(x, 0.1),
        "hardtanh": lambda x: F.hardtanh(x),
        "relu6": lambda x: F.relu6(x),
        "hardsigmoid": lambda x: F.hardsigmoid(x),
        "threshold": lambda x: F.threshold(x, 0.2, 0.0),
        "l1_loss": lambda x: F.l1_loss(x, zeros),
        "smooth_l1_loss": lambda x: F.smooth_l1_loss(x, zeros),
        "huber_loss": lambda x: F.huber_loss(x, zeros),
        "norm1": lambda x: x.norm(1),
        "sort": lambda x: x.sort(1)[0],
        "cat": lambda x: m.cat([x, x]),
        "cumsum": lambda x: x.cumsum(1),
        "mul_const": lambda x: x * 3,
        "square": lambda x: x * x,
        "cross_entropy": lambda x: F.cross_entropy(x, m.tensor([0, 2])),
    }


@pytest.mark.parametrize("name", list(_graphs(tga)))
def test_a_recorded_gradient_requires_grad_where_pytorchs_does(name):
    data = [[-1.0, 0.5, 2.0], [3.0, -0.2, 0.1]]
    t = torch.tensor(data, requires_grad=True)
    x = tga.tensor(data, requires_grad=True)
    (g_t,) = torch.autograd.grad(_graphs(torch)[name](t).sum(), t, create_graph=True)
    (g,) = tga.autograd.grad(_graphs(tga)[name](x).sum(), x, create_graph=True)
    assert g.requires_grad == g_t.requires_grad, (
        f"{name}: requires_grad {g.requires_grad}, PyTorch's {g_t.requires_grad}"
    )
    np.testing.assert_allclose(g.detach().numpy(), g_t.detach().numpy(), rtol=1e-6, atol=1e-7)
    if g_t.requires_grad:  # a gradient penalty: runs, and gives what PyTorch's gives (where it has one)
        try:
            ((g_t * g_t).sum()).backward()
        except RuntimeError:  # (PyTorch's hardsigmoid_backward has no derivative)
            return
        ((g * g).sum()).backward()
        want = np.zeros(t.shape) if t.grad._is_zerotensor() else t.grad.detach().numpy()
        np.testing.assert_allclose(x.grad.detach().numpy(), want, rtol=1e-6, atol=1e-7)
