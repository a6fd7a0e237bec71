"""A distribution whose draws are a base distribution's draws mapped through transforms, as
``torch.distributions.TransformedDistribution`` (normalizing flows, ``tanh``-squashed Gaussian
policies, a ``LogNormal`` written by hand).

>>> d = TransformedDistribution(Normal(0.0, 1.0), [TanhTransform()])  # doctest: +SKIP
>>> a = d.rsample()  # in (-1, 1), differentiable in the normal's parameters  # doctest: +SKIP
"""

from __future__ import annotations

from typing import Any

from ..engine.switches import no_grad
from ..tensors._tensor import Tensor
from . import constraints
from .distribution import Distribution
from .independent import Independent
from .transforms import ComposeTransform, Transform
from .utils import sum_rightmost


class TransformedDistribution(Distribution):
    """``TransformedDistribution(base_distribution, transforms)``: ``Y = t_n(...t_1(X))`` with
    ``X`` drawn from the base; ``log_prob(y)`` is the base's at the inverse image minus the
    transforms' log-Jacobians."""

    arg_constraints: dict = {}

    def __init__(self, base_distribution: Distribution, transforms: Any, validate_args: bool | None = None) -> None:
        if isinstance(transforms, Transform):
            self.transforms = [transforms]
        elif isinstance(transforms, list):
            if not all(isinstance(t, Transform) for t in transforms):
                raise ValueError("transforms must be a Transform or a list of Transforms")
            self.transforms = transforms
        else:
            raise ValueError(f"transforms must be a Transform or list, but was {transforms}")
        base_shape = tuple(base_distribution.batch_shape) + tuple(base_distribution.event_shape)
        base_event_dim = len(base_distribution.event_shape)
        transform = ComposeTransform(self.transforms)
        if len(base_shape) < transform.domain.event_dim:
            raise ValueError(
                f"base_distribution needs at least {transform.domain.event_dim} dimensions, but got {base_shape}"
            )
        forward_shape = tuple(transform.forward_shape(base_shape))
        expanded_base_shape = tuple(transform.inverse_shape(forward_shape))
        if base_shape != expanded_base_shape:
            base_batch = expanded_base_shape[: len(expanded_base_shape) - base_event_dim]
            base_distribution = base_distribution.expand(base_batch)
        reinterpreted = transform.domain.event_dim - base_event_dim
        if reinterpreted > 0:
            base_distribution = Independent(base_distribution, reinterpreted)
        self.base_dist = base_distribution
        event_dim = transform.codomain.event_dim + max(base_event_dim - transform.domain.event_dim, 0)
        cut = len(forward_shape) - event_dim
        super().__init__(forward_shape[:cut], forward_shape[cut:], validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> TransformedDistribution:
        new = self._get_checked_instance(TransformedDistribution, _instance)
        batch_shape = tuple(batch_shape)
        shape = batch_shape + tuple(self.event_shape)
        for t in reversed(self.transforms):
            shape = tuple(t.inverse_shape(shape))
        base_batch = shape[: len(shape) - len(self.base_dist.event_shape)]
        new.base_dist = self.base_dist.expand(base_batch)
        new.transforms = self.transforms
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property
    def support(self) -> constraints.Constraint:
        if not self.transforms:
            return self.base_dist.support
        support = self.transforms[-1].codomain
        if len(self.event_shape) > support.event_dim:
            support = constraints.independent(support, len(self.event_shape) - support.event_dim)
        return support

    @property
    def has_rsample(self) -> bool:  # type: ignore[override]
        return self.base_dist.has_rsample

    def sample(self, sample_shape: Any = ()) -> Tensor:
        with no_grad():
            x = self.base_dist.sample(sample_shape)
            for t in self.transforms:
                x = t(x)
            return x

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        x = self.base_dist.rsample(sample_shape)
        for t in self.transforms:
            x = t(x)
        return x

    def log_prob(self, value: Any) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        event_dim = len(self.event_shape)
        log_prob: Any = 0.0
        y = value
        for t in reversed(self.transforms):
            x = t.inv(y)
            event_dim += t.domain.event_dim - t.codomain.event_dim
            log_prob = log_prob - sum_rightmost(t.log_abs_det_jacobian(x, y), event_dim - t.domain.event_dim)
            y = x
        return log_prob + sum_rightmost(self.base_dist.log_prob(y), event_dim - len(self.base_dist.event_shape))

    def _monotone_sign(self) -> Any:
        sign = 1
        for t in self.transforms:
            sign = sign * t.sign
        if isinstance(sign, int) and sign == 1:
            return 1
        return sign

    def cdf(self, value: Any) -> Tensor:
        for t in reversed(self.transforms):
            value = t.inv(value)
        if self._validate_args:
            self.base_dist._validate_sample(value)
        value = self.base_dist.cdf(value)
        sign = self._monotone_sign()
        return value if isinstance(sign, int) and sign == 1 else sign * (value - 0.5) + 0.5

    def icdf(self, value: Any) -> Tensor:
        sign = self._monotone_sign()
        value = value if isinstance(sign, int) and sign == 1 else sign * (value - 0.5) + 0.5
        value = self.base_dist.icdf(value)
        for t in self.transforms:
            value = t(value)
        return value
