"""Draws whose PyTorch kernel is its own algorithm, as differentiable functions of the
parameters: the standard gamma (``torch._standard_gamma``, its derivative PyTorch's
``_standard_gamma_grad``) and the Dirichlet (``torch._sample_dirichlet``); and Poisson and
binomial counts. The draws come from the default generator on the host, PyTorch's numbers for a seed."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..autograd.function import Function, once_differentiable
from ..random import host_generator
from ..random import transforms as rt
from ..tensors._tensor import Tensor


def _host(t: Tensor) -> np.ndarray:
    return np.asarray(t._dev.to_host(t.detach()._data))


def _like(arr: np.ndarray, t: Tensor) -> Tensor:
    return Tensor(np.array(arr, dtype=np.asarray(arr).dtype), device=t.device)


class _StandardGamma(Function):
    @staticmethod
    def forward(ctx: Any, alpha: Tensor) -> Tensor:
        x = _like(rt.standard_gamma(host_generator(), _host(alpha)), alpha)
        ctx.save_for_backward(alpha, x)
        return x

    @staticmethod
    @once_differentiable
    def backward(ctx: Any, grad: Tensor) -> Tensor:
        alpha, x = ctx.saved_tensors
        return grad * _like(rt.standard_gamma_grad(_host(alpha), _host(x)), x)


def standard_gamma(alpha: Tensor) -> Tensor:
    """Gamma(alpha, 1) draws, PyTorch's numbers for a seed, differentiable in ``alpha``."""
    return _StandardGamma.apply(alpha)


class _Dirichlet(Function):
    @staticmethod
    def forward(ctx: Any, alpha: Tensor) -> Tensor:
        a = _host(alpha)
        gen = host_generator()
        state = gen.get_state()
        x = rt.dirichlet(gen, a)
        # (the same draws again, kept in float64: the gradient is the gammas' own, through their normalisation)
        after = gen.get_state()
        gen.set_state(state)
        gammas = np.maximum(rt.standard_gamma(gen, a.astype(np.float64)), np.finfo(np.float64).tiny)
        gen.set_state(after)
        ctx.save_for_backward(alpha, _like(x, alpha), _like(gammas, alpha))
        return _like(x, alpha)

    @staticmethod
    @once_differentiable
    def backward(ctx: Any, grad: Tensor) -> Tensor:
        alpha, x, gammas = ctx.saved_tensors
        g = _host(gammas)
        dg = rt.standard_gamma_grad(_host(alpha).astype(np.float64), g) / g.sum(-1, keepdims=True)
        gx = _host(grad).astype(np.float64)
        out = dg * (gx - (gx * _host(x)).sum(-1, keepdims=True))
        return _like(out.astype(_host(alpha).dtype), alpha)


def dirichlet(alpha: Tensor) -> Tensor:
    """Dirichlet draws over the last axis of ``alpha``: PyTorch's numbers for a seed (gamma draws
    normalised); differentiable in ``alpha`` through the gamma draws' derivatives (an unbiased
    reparameterised gradient; PyTorch's own is another approximation of the same quantity)."""
    return _Dirichlet.apply(alpha)


def poisson(rate: Tensor) -> Tensor:
    """Poisson counts of ``rate``: PyTorch's numbers for a seed."""
    return _like(rt.poisson(host_generator(), _host(rate)), rate)


def binomial(count: Tensor, prob: Tensor) -> Tensor:
    """Binomial counts of ``count`` trials of probability ``prob``: PyTorch's numbers for a seed."""
    return _like(rt.binomial(host_generator(), _host(count), _host(prob)), prob)
