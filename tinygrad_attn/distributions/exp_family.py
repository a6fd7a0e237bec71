"""Exponential families, as ``torch.distributions.ExponentialFamily``: densities
``exp(<t(x), theta> - F(theta) + k(x))``; a subclass gives ``_natural_params`` (theta),
``_log_normalizer`` (F) and ``_mean_carrier_measure`` (E[k(x)]), and its entropy follows from
the Bregman divergence of F (its gradient computed by autograd)."""

from __future__ import annotations

from typing import Any

from ..autograd import grad
from ..tensors._tensor import Tensor
from .distribution import Distribution


class ExponentialFamily(Distribution):
    """The base of exponential families: ``entropy`` as ``F(theta) - <theta, grad F(theta)> - E[k(x)]``."""

    @property
    def _natural_params(self) -> tuple[Tensor, ...]:
        raise NotImplementedError

    def _log_normalizer(self, *natural_params: Tensor) -> Tensor:
        raise NotImplementedError

    @property
    def _mean_carrier_measure(self) -> float:
        raise NotImplementedError

    def entropy(self) -> Tensor:
        result: Any = -self._mean_carrier_measure
        params = [p.detach().requires_grad_() for p in self._natural_params]
        lg_normal = self._log_normalizer(*params)
        gradients = grad(lg_normal.sum(), params, create_graph=True)
        result = result + lg_normal
        for p, g in zip(params, gradients):
            result = result - (p * g).reshape(*self._batch_shape, -1).sum(-1)
        return result
