"""Finite-difference check of analytic gradients, in float64."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..engine.backward import grad
from ..tensors._tensor import Tensor, cat


class GradcheckError(RuntimeError):
    """Analytic and finite-difference gradients disagree."""


def _as_float64(x: Any) -> Any:
    if isinstance(x, Tensor) and x.dtype.kind == "f":
        return Tensor(x.detach().astype(np.float64), requires_grad=True)
    if isinstance(x, np.ndarray) and x.dtype.kind == "f":
        return Tensor(x.astype(np.float64), requires_grad=True)
    return x


def _inputs(inputs: tuple) -> tuple:
    # PyTorch's form passes one tensor or one tuple of them; the contract's, each input positionally
    return tuple(inputs[0]) if len(inputs) == 1 and isinstance(inputs[0], (tuple, list)) else inputs


def _weighted(out: Any) -> Tensor:
    """The outputs as one vector (a tuple of outputs is checked output by output, as PyTorch's)."""
    outs = list(out) if isinstance(out, (tuple, list)) else [out]
    if not outs or not all(isinstance(o, Tensor) for o in outs):
        raise GradcheckError(f"gradcheck: fn must return a Tensor or a tuple of them, got {type(out).__name__}")
    return outs[0].reshape(-1) if len(outs) == 1 else cat([o.reshape(-1) for o in outs])


def gradcheck(func: Callable[..., Any], *inputs: Any, eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-3,
              raise_exception: bool = True, nondet_tol: float = 0.0, check_undefined_grad: bool = True,
              check_grad_dtypes: bool = False, check_batched_grad: bool = False,
              check_batched_forward_grad: bool = False, check_forward_ad: bool = False,
              check_backward_ad: bool = True, fast_mode: bool = False, masked: bool | None = None) -> bool:  # fmt: skip
    """Compare the gradients of ``func(*inputs)`` with central finite differences, as
    ``torch.autograd.gradcheck(func, inputs)`` (``inputs`` one tensor or a tuple; the
    inputs may also follow ``func`` one by one).

    Floating-point inputs are converted to float64 tensors that require grad (other
    inputs pass through). The outputs (a tensor or a tuple) are reduced with fixed random
    weights, so every output element is checked. Returns True, or raises
    :class:`GradcheckError` naming the worst element (returns False with
    ``raise_exception=False``). PyTorch's other options (``fast_mode``, ``nondet_tol``,
    ``check_*``) are accepted: every check here is the full, deterministic one.

    >>> tga.autograd.gradcheck(lambda x: (x * x).sum(), (Tensor([1.0, 2.0]),))  # doctest: +SKIP
    True
    """
    try:
        return _check(func, _inputs(inputs), eps, atol, rtol)
    except GradcheckError:
        if raise_exception:
            raise
        return False


def gradgradcheck(func: Callable[..., Any], inputs: Any, grad_outputs: Any = None, *, eps: float = 1e-6,
                  atol: float = 1e-5, rtol: float = 1e-3, gen_non_contig_grad_outputs: bool = False,
                  raise_exception: bool = True, nondet_tol: float = 0.0, check_undefined_grad: bool = True,
                  check_grad_dtypes: bool = False, check_batched_grad: bool = False, check_fwd_over_rev: bool = False,
                  check_rev_over_rev: bool = True, fast_mode: bool = False, masked: bool = False) -> bool:  # fmt: skip
    """Check second derivatives, as ``torch.autograd.gradgradcheck``: the gradient of ``func``'s
    outputs (weighted by ``grad_outputs``, random when None) with respect to the inputs,
    built with ``create_graph=True``, is itself checked by :func:`gradcheck`."""
    xs = _inputs(inputs if isinstance(inputs, (tuple, list)) else (inputs,))
    probe = _weighted(func(*[_as_float64(x) for x in xs]))
    if grad_outputs is None:
        cotangent = Tensor(np.random.default_rng(54321).standard_normal(probe.shape), dtype=np.float64)
    else:
        gs = list(grad_outputs) if isinstance(grad_outputs, (tuple, list)) else [grad_outputs]
        cotangent = Tensor(np.concatenate([np.asarray(g.detach().numpy(), np.float64).reshape(-1) for g in gs]))

    def first_derivatives(*args: Any) -> Any:
        wrt = [a for a in args if isinstance(a, Tensor) and a.requires_grad]
        out = (_weighted(func(*args)) * cotangent).sum()
        gs = grad(out, wrt, create_graph=True, allow_unused=True)
        return tuple(g if g is not None else w * 0 for g, w in zip(gs, wrt))

    # (PyTorch's further options choose among its checks: every check here is the full, deterministic one)
    return gradcheck(first_derivatives, tuple(xs), eps=eps, atol=atol, rtol=rtol, raise_exception=raise_exception)


def _check(fn: Callable[..., Any], inputs: tuple, eps: float, atol: float, rtol: float) -> bool:
    xs = [_as_float64(x) for x in inputs]
    diff = [i for i, x in enumerate(xs) if isinstance(x, Tensor) and x.requires_grad]
    if not diff:
        raise GradcheckError("gradcheck: no floating-point input to check")
    out = _weighted(fn(*xs))
    weights = np.random.default_rng(12345).standard_normal(out.shape)
    w = Tensor(weights, dtype=out.dtype, device=out.device)

    def scalar_of(o: Tensor) -> float:
        return float(np.sum(o.detach().numpy().astype(np.float64) * weights))

    if not out.requires_grad:
        raise GradcheckError("gradcheck: the output does not depend on any input that requires grad")
    analytic = grad((out * w).sum(), [xs[i] for i in diff], allow_unused=True)
    worst = None  # (excess, input index, element, analytic, numeric)
    for i, a in zip(diff, analytic):
        x = xs[i]
        host = x.detach().numpy().astype(np.float64)
        a_host = np.zeros_like(host) if a is None else a.detach().numpy().astype(np.float64)
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
                vals.append(scalar_of(_weighted(fn(*args))))
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
