"""Distributions on the simplex and the unit interval made from gamma draws, as
``torch.distributions.Dirichlet`` and ``Beta``: samples are PyTorch's for a seed, and so is the
reparameterised gradient (its ``_dirichlet_grad``)."""

from __future__ import annotations

import numbers
from typing import Any

from ..functional import one_hot
from ..tensors._tensor import Tensor, where
from ..tensors.shape.shape_functions import stack
from . import constraints
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .sampling import dirichlet
from .utils import broadcast_all


class Dirichlet(ExponentialFamily):
    """``Dirichlet(concentration)`` over the last axis of ``concentration``."""

    arg_constraints = {"concentration": constraints.independent(constraints.positive, 1)}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, concentration: Tensor, validate_args: bool | None = None) -> None:
        if concentration.dim() < 1:
            raise ValueError("`concentration` parameter must be at least one-dimensional.")
        self.concentration = concentration
        shape = tuple(concentration.shape)
        super().__init__(shape[:-1], shape[-1:], validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Dirichlet:
        new = self._get_checked_instance(Dirichlet, _instance)
        new.concentration = self.concentration.expand((*tuple(batch_shape), *tuple(self.event_shape)))
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        shape = tuple(self._extended_shape(sample_shape))
        return dirichlet(self.concentration.expand(shape))

    def log_prob(self, value: Any) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        c = self.concentration
        return (c - 1.0).xlogy(value).sum(-1) + c.sum(-1).lgamma() - c.lgamma().sum(-1)

    @property
    def mean(self) -> Tensor:
        return self.concentration / self.concentration.sum(-1, True)

    @property
    def mode(self) -> Tensor:
        cm1 = (self.concentration - 1).clamp(min=0.0)
        total = cm1.sum(-1, True)
        mode = cm1 / where(total == 0, float("nan"), total)  # (0 / 0 as NaN, without a warning)
        # (every concentration below 1: the density is largest at a vertex, the largest entry's)
        corner = one_hot(mode.argmax(-1), cm1.shape[-1]).to(mode.dtype)
        return where((self.concentration < 1).all(-1, keepdim=True), corner, mode)

    @property
    def variance(self) -> Tensor:
        c = self.concentration
        total = c.sum(-1, True)
        return c * (total - c) / (total.pow(2) * (total + 1))

    def entropy(self) -> Tensor:
        c = self.concentration
        k = c.shape[-1]
        a0 = c.sum(-1)
        return c.lgamma().sum(-1) - a0.lgamma() - (k - a0) * a0.digamma() - ((c - 1.0) * c.digamma()).sum(-1)

    @property
    def _natural_params(self) -> tuple[Tensor]:
        return (self.concentration,)

    def _log_normalizer(self, x: Tensor) -> Tensor:
        return x.lgamma().sum(-1) - x.sum(-1).lgamma()


class Beta(ExponentialFamily):
    """``Beta(concentration1, concentration0)``: a two-entry Dirichlet's first entry."""

    arg_constraints = {"concentration1": constraints.positive, "concentration0": constraints.positive}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, concentration1: Any, concentration0: Any, validate_args: bool | None = None) -> None:
        if isinstance(concentration1, numbers.Real) and isinstance(concentration0, numbers.Real):
            from ..tensors.factories import creation  # noqa: PLC0415

            pair = creation.tensor([float(concentration1), float(concentration0)])
        else:
            c1, c0 = broadcast_all(concentration1, concentration0)
            pair = stack([c1, c0], -1)
        self._dirichlet = Dirichlet(pair, validate_args=validate_args)
        super().__init__(self._dirichlet._batch_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Beta:
        new = self._get_checked_instance(Beta, _instance)
        new._dirichlet = self._dirichlet.expand(batch_shape)
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self) -> Tensor:
        return self.concentration1 / (self.concentration1 + self.concentration0)

    @property
    def mode(self) -> Tensor:
        return self._dirichlet.mode[..., 0]

    @property
    def variance(self) -> Tensor:
        total = self.concentration1 + self.concentration0
        return self.concentration1 * self.concentration0 / (total.pow(2) * (total + 1))

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        return self._dirichlet.rsample(sample_shape).select(-1, 0)

    def log_prob(self, value: Any) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        value, c1 = broadcast_all(value, self.concentration1)
        return self._dirichlet.log_prob(stack([value, 1.0 - value], -1))

    def entropy(self) -> Tensor:
        return self._dirichlet.entropy()

    @property
    def concentration1(self) -> Tensor:
        return self._dirichlet.concentration[..., 0]

    @property
    def concentration0(self) -> Tensor:
        return self._dirichlet.concentration[..., 1]

    @property
    def _natural_params(self) -> tuple[Tensor, Tensor]:
        return self.concentration1, self.concentration0

    def _log_normalizer(self, x: Tensor, y: Tensor) -> Tensor:
        return x.lgamma() + y.lgamma() - (x + y).lgamma()
