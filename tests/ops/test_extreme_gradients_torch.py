"""Gradients of products, scans and log-sum-exps at ±inf, ±0 and NaN against PyTorch's, first and
second order, in float64 and float32.

PyTorch's backward formulas of these ops divide by the input (``result / x``), take logs of the
gradient or mask by zeros, so at those points their values are not the derivatives of the forward:
each op here must give PyTorch's values, and its recorded gradient (``create_graph=True``) must be
differentiated as PyTorch's is. Inputs are drawn from a seeded generator over the special values.
"""

from __future__ import annotations

import random

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import tinygrad_attn as tga  # noqa: E402

SPECIAL = [0.0, -0.0, float("inf"), -float("inf"), float("nan"), 2.5, -0.5, 0.25, 3.0]

#: name -> f(lib, x) of one tensor (2-D, shape (3, 4))
OPS = {
    "prod": lambda lib, x: x.prod(),
    "prod_dim0": lambda lib, x: x.prod(0),
    "prod_dim1_keepdim": lambda lib, x: x.prod(1, keepdim=True),
    "cumprod0": lambda lib, x: x.cumprod(0),
    "cumprod1": lambda lib, x: x.cumprod(1),
    "logcumsumexp0": lambda lib, x: x.logcumsumexp(0),
    "logcumsumexp1": lambda lib, x: x.logcumsumexp(1),
    "cummax": lambda lib, x: x.cummax(1)[0],
    "cummin": lambda lib, x: x.cummin(0)[0],
    "logsumexp": lambda lib, x: x.logsumexp(1),
    "logaddexp": lambda lib, x: lib.logaddexp(x, x.flip(0)),
    "softmax": lambda lib, x: x.softmax(1),
    "log_softmax": lambda lib, x: x.log_softmax(0),
}


def _draw(seed: int) -> list[float]:
    r = random.Random(seed)
    return [r.choice(SPECIAL) if r.random() < 0.6 else round(r.uniform(-2, 2), 2) for _ in range(12)]


def _grads(lib, op, values, dtype):
    x = lib.tensor(values, dtype=dtype).reshape(3, 4).requires_grad_()
    y = op(lib, x)
    w = lib.tensor(np.linspace(0.5, 1.5, y.numel()).reshape(tuple(y.shape)).tolist(), dtype=dtype)
    (g,) = lib.autograd.grad((y * w).sum(), x, create_graph=True)
    gg = None
    if g.requires_grad:
        (gg,) = lib.autograd.grad((g * w.reshape(-1)[0]).sum(), x, allow_unused=True)
    return [y.detach().numpy(), g.detach().numpy(), None if gg is None else gg.numpy()]


def _same(a, b, dtype) -> bool:
    if a is None or b is None:  # (no second derivative: an unused input reads as zeros)
        return np.allclose(np.nan_to_num(a if a is not None else 0.0), np.nan_to_num(b if b is not None else 0.0))
    tol = 1e-9 if dtype == "float64" else 1e-4
    return a.shape == b.shape and np.allclose(a, b, rtol=tol, atol=tol, equal_nan=True)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name", sorted(OPS))
def test_gradients_at_extremes_as_in_torch(name, dtype):
    op = OPS[name]
    bad = []
    for seed in range(40):
        values = _draw(seed)
        theirs = _grads(torch, op, values, getattr(torch, dtype))
        ours = _grads(tga, op, values, getattr(tga, dtype))
        for what, a, b in zip(("value", "gradient", "second derivative"), theirs, ours):
            if not _same(a, b, dtype):
                bad.append(f"{what} at {values}: PyTorch {a}, ours {b}")
    assert not bad, f"{len(bad)} differences; first: {bad[0]}"


def _moments(lib, fn, n, correction, dim, dtype):
    x = lib.tensor(np.linspace(-1, 2, 2 * n).reshape(2, n).tolist(), dtype=getattr(lib, dtype), requires_grad=True)
    y = getattr(lib, fn)(x, dim=dim, correction=correction)
    y = y[0] + y[1] if isinstance(y, tuple) else y
    (g,) = lib.autograd.grad(y.sum(), x, create_graph=True)
    gg = None
    if g.requires_grad:
        w = lib.tensor(np.linspace(0.5, 1, 2 * n).reshape(2, n).tolist(), dtype=getattr(lib, dtype))
        (gg,) = lib.autograd.grad((g * w).sum(), x, allow_unused=True)
    return [y.detach().numpy(), g.detach().numpy(), None if gg is None else gg.numpy()], g.requires_grad


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("fn", ["var", "std", "var_mean", "std_mean"])
def test_moments_without_degrees_of_freedom_as_in_torch(fn, dtype):
    """``correction >= N``: PyTorch's value is inf (NaN at zero spread), its gradient the unclamped
    ``2 (x - mean) / (N - correction)`` and, over a dim, a recorded gradient whose derivative is
    that formula's; over every entry its gradient has no graph."""
    bad = []
    for n in (1, 2, 3, 4):
        for correction in (n, n + 1, n + 0.5, n - 0.5):
            for dim in (None, 1, 0):
                theirs, their_graph = _moments(torch, fn, n, correction, dim, dtype)
                ours, our_graph = _moments(tga, fn, n, correction, dim, dtype)
                case = f"{fn}(N={n}, correction={correction}, dim={dim})"
                if their_graph != our_graph:
                    bad.append(f"{case}: gradient requires grad: PyTorch {their_graph}, ours {our_graph}")
                for what, a, b in zip(("value", "gradient", "second derivative"), theirs, ours):
                    tol = 1e-9 if dtype == "float64" else 1e-5
                    if (a is None) != (b is None) or (
                        a is not None and not np.allclose(a, b, rtol=tol, atol=tol, equal_nan=True)
                    ):
                        bad.append(f"{case} {what}: PyTorch {a}, ours {b}")
    assert not bad, f"{len(bad)} differences; first: {bad[0]}"
