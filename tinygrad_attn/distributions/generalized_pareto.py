"""The generalised Pareto distribution, as ``torch.distributions.GeneralizedPareto``:
``loc + scale * ((1 - U) ** -c - 1) / c`` (``loc - scale * log(1 - U)`` at ``c = 0``)."""

from __future__ import annotations

import math
from typing import Any

from ..tensors._tensor import Tensor, where
from ..tensors.factories import creation as _creation
from . import constraints
from .distribution import EMPTY_SHAPE, Distribution
from .utils import broadcast_all


class GeneralizedPareto(Distribution):
    """``GeneralizedPareto(loc, scale, concentration)``: PyTorch's samples for a seed (its inverse cdf of uniforms)."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive, "concentration": constraints.real}
    has_rsample = True

    def __init__(self, loc: Any, scale: Any, concentration: Any, validate_args: bool | None = None) -> None:
        self.loc, self.scale, self.concentration = broadcast_all(loc, scale, concentration)
        super().__init__(self.loc.shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> GeneralizedPareto:
        return self._expanded(GeneralizedPareto, batch_shape, ("loc", "scale", "concentration"), _instance)

    def _zero_and_safe(self) -> tuple[Tensor, Tensor]:
        c = self.concentration
        eq_zero = (c - 0.0).abs() <= 1e-8  # (isclose to 0 with PyTorch's default tolerances)
        return eq_zero, where(eq_zero, 1.0, c)

    def rsample(self, sample_shape: Any = EMPTY_SHAPE) -> Tensor:
        shape = tuple(self._extended_shape(sample_shape))
        return self.icdf(_creation.rand(tuple(shape), dtype=self.loc.dtype, device=self.loc.device))

    def _z(self, x: Tensor) -> Tensor:
        return (x - self.loc) / self.scale

    def log_prob(self, value: Any) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        z = self._z(value)
        eq_zero, safe = self._zero_and_safe()
        y = 1 / safe + 1
        nonzero = where(y == 0, y, y * (safe * z).log1p())
        return -self.scale.log() - where(eq_zero, z, nonzero)

    def log_survival_function(self, value: Any) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        z = self._z(value)
        eq_zero, safe = self._zero_and_safe()
        return where(eq_zero, -z, -(safe * z).log1p() / safe)

    def log_cdf(self, value: Any) -> Tensor:
        return (-self.log_survival_function(value).exp()).log1p()

    def cdf(self, value: Any) -> Tensor:
        return self.log_cdf(value).exp()

    def icdf(self, value: Any) -> Tensor:
        eq_zero, safe = self._zero_and_safe()
        logu = (-value).log1p()
        return where(eq_zero, self.loc - self.scale * logu, self.loc + self.scale / safe * (-safe * logu).expm1())

    @property
    def mean(self) -> Tensor:
        c = self.concentration
        valid = c < 1
        return where(valid, self.loc + self.scale / (1 - where(valid, c, 0.5)), math.nan)

    @property
    def variance(self) -> Tensor:
        c = self.concentration
        valid = c < 0.5
        safe = where(valid, c, 0.25)
        return where(valid, self.scale.pow(2) / ((1 - safe).pow(2) * (1 - 2 * safe)), math.nan)

    def entropy(self) -> Tensor:
        return (self.scale.log() + self.concentration + 1).expand(tuple(self._batch_shape))

    @property
    def mode(self) -> Tensor:
        return self.loc

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self) -> constraints.Constraint:
        c = self.concentration
        upper = where(c < 0, self.loc - self.scale / where(c < 0, c, -1.0), math.inf)
        return constraints.interval(self.loc, upper)
