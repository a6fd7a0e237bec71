"""Finite-difference check of analytic gradients, in float64."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..engine.backward import grad
from ..tensors._tensor import Tensor


class GradcheckError(RuntimeError):
    """Analytic and finite-difference gradients disagree."""


def _as_float64(x: Any) -> Any:
    if isinstance(x, Tensor) and x.dtype.kind == "f":
        return Tensor(x.detach().astype(np.float64), requires_grad=True)
    if isinstance(x, np.ndarray) and x.dtype.kind == "f":
        return Tensor(x.astype(np.float64), requires_grad=True)
    return x


def gradcheck(fn: Callable[..., Tensor], *inputs: Any, eps: float = 1e-6, atol: float = 1e-5,
              rtol: float = 1e-3) -> bool:  # fmt: skip
    """Compare the gradients of ``fn(*inputs)`` with central finite differences.

    Floating-point inputs are converted to float64 tensors that require grad (other
    inputs pass through). A non-scalar output is reduced with fixed random weights, so
    every output element is checked. Returns True, or raises :class:`GradcheckError`
    naming the worst element.

    >>> tga.gradcheck(lambda x: (x * x).sum(), Tensor([1.0, 2.0]))  # doctest: +SKIP
    True
    """
    xs = [_as_float64(x) for x in inputs]
    diff = [i for i, x in enumerate(xs) if isinstance(x, Tensor) and x.requires_grad]
    if not diff:
        raise GradcheckError("gradcheck: no floating-point input to check")
    out = fn(*xs)
    if not isinstance(out, Tensor):
        raise GradcheckError(f"gradcheck: fn must return a Tensor, got {type(out).__name__}")
    weights = np.random.default_rng(12345).standard_normal(out.shape)
    w = Tensor(weights, dtype=out.dtype, device=out.device)

    def scalar_of(o: Tensor) -> float:
        return float(np.sum(o.numpy().astype(np.float64) * weights))

    if not out.requires_grad:
        raise GradcheckError("gradcheck: the output does not depend on any input that requires grad")
    analytic = grad((out * w).sum(), [xs[i] for i in diff], allow_unused=True)
    worst = None  # (excess, input index, element, analytic, numeric)
    for i, a in zip(diff, analytic):
        x = xs[i]
        host = x.numpy().astype(np.float64)
        a_host = np.zeros_like(host) if a is None else a.numpy().astype(np.float64)
        num = np.zeros_like(host)
        flat = host.reshape(-1)
        # Not under no_grad: fn may itself differentiate (a check of second derivatives).
        for j in range(flat.size):
            orig = flat[j]
            vals = []
            for step in (eps, -eps):
                flat[j] = orig + step
                args = list(xs)
                args[i] = Tensor(host, device=x.device, requires_grad=True)
                vals.append(scalar_of(fn(*args)))
            flat[j] = orig
            num.reshape(-1)[j] = (vals[0] - vals[1]) / (2 * eps)
        err = np.abs(a_host - num) - (atol + rtol * np.abs(num))
        if err.size and (np.isnan(err).any() or err.max() > 0):
            j = int(np.nanargmax(np.where(np.isnan(err), np.inf, err)))
            idx = np.unravel_index(j, host.shape)
            cand = (float(err.reshape(-1)[j]), i, idx, a_host.reshape(-1)[j], num.reshape(-1)[j])
            if worst is None or not cand[0] <= worst[0]:
                worst = cand
    if worst is not None:
        _, i, idx, a_v, n_v = worst
        raise GradcheckError(
            f"gradcheck: gradients disagree; worst at input {i}, element {tuple(int(k) for k in idx)}: "
            f"analytic {a_v:.8g}, numeric {n_v:.8g} (atol={atol}, rtol={rtol})"
        )
    return True
