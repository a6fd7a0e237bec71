"""The log-normal distribution, as ``torch.distributions.LogNormal``: ``exp`` of a normal draw."""

from __future__ import annotations

from typing import Any

from ..tensors._tensor import Tensor
from . import constraints
from .distribution import Distribution
from .normal import Normal


class LogNormal(Distribution):
    """``LogNormal(loc, scale)``: ``Y = exp(X)`` with ``X ~ Normal(loc, scale)``. Its draws are the
    normal's draws exponentiated, so one seed gives PyTorch's samples.

    >>> LogNormal(0.0, 1.0).log_prob(Tensor(1.0))  # -0.9189, the normal's density at 0
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, loc: Any, scale: Any, validate_args: bool | None = None) -> None:
        self.base_dist = Normal(loc, scale, validate_args=validate_args)
        super().__init__(self.base_dist.batch_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> LogNormal:
        new = self._get_checked_instance(LogNormal, _instance)
        new.base_dist = self.base_dist.expand(batch_shape)
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def loc(self) -> Tensor:
        return self.base_dist.loc

    @property
    def scale(self) -> Tensor:
        return self.base_dist.scale

    @property
    def mean(self) -> Tensor:
        return (self.loc + self.scale.pow(2) / 2).exp()

    @property
    def mode(self) -> Tensor:
        return (self.loc - self.scale.square()).exp()

    @property
    def variance(self) -> Tensor:
        var = self.scale.pow(2)
        return var.expm1() * (2 * self.loc + var).exp()

    def sample(self, sample_shape: Any = ()) -> Tensor:
        return self.base_dist.sample(sample_shape).exp()

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        return self.base_dist.rsample(sample_shape).exp()

    def log_prob(self, value: Any) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        x = value.log()
        # the change of variables y = exp(x): log p(y) = log p_X(x) - log|dy/dx| = log p_X(x) - x
        return self.base_dist.log_prob(x) - x

    def cdf(self, value: Any) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return self.base_dist.cdf(value.log())

    def icdf(self, value: Any) -> Tensor:
        return self.base_dist.icdf(value).exp()

    def entropy(self) -> Tensor:
        return self.base_dist.entropy() + self.loc
