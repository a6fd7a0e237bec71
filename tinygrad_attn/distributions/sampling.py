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
        x = _like(rt.dirichlet(host_generator(), _host(alpha)), alpha)
        ctx.save_for_backward(alpha, x)
        return x

    @staticmethod
    @once_differentiable
    def backward(ctx: Any, grad: Tensor) -> Tensor:
        alpha, x = ctx.saved_tensors
        a, xs = _host(alpha), _host(x)
        total = np.broadcast_to(a.sum(-1, keepdims=True), a.shape).astype(a.dtype)
        dx = _like(rt.dirichlet_grad(xs, a, total), x)
        # (each entry's derivative through its Beta marginal, the normalisation's share taken off)
        return dx * (grad - (x * grad).sum(-1, keepdim=True))


def dirichlet(alpha: Tensor) -> Tensor:
    """Dirichlet draws over the last axis of ``alpha`` (gamma draws normalised), differentiable in
    ``alpha``: PyTorch's numbers for a seed, and its derivative (``torch._dirichlet_grad``)."""
    return _Dirichlet.apply(alpha)


def poisson(rate: Tensor) -> Tensor:
    """Poisson counts of ``rate``: PyTorch's numbers for a seed."""
    return _like(rt.poisson(host_generator(), _host(rate)), rate)


def binomial(count: Tensor, prob: Tensor) -> Tensor:
    """Binomial counts of ``count`` trials of probability ``prob``: PyTorch's numbers for a seed."""
    return _like(rt.binomial(host_generator(), _host(count), _host(prob)), prob)
