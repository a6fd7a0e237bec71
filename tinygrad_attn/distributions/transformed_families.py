"""Families defined as a transformed base distribution, as PyTorch defines them (so their
samples are PyTorch's for a seed): ``LogNormal``, ``HalfNormal``, ``HalfCauchy``, ``Gumbel``,
``Weibull``, ``Pareto``, ``Kumaraswamy``, ``LogisticNormal``; and ``Cauchy``, HalfCauchy's base."""

from __future__ import annotations

import math
from typing import Any

from ..engine.switches import no_grad
from ..tensors._tensor import Tensor, where
from ..tensors.dtypes import finfo
from ..tensors.factories import creation as _creation
from . import constraints
from .distribution import EMPTY_SHAPE, Distribution
from .exponential import Exponential
from .normal import Normal
from .transformed_distribution import TransformedDistribution
from .transforms import AbsTransform, AffineTransform, ExpTransform, PowerTransform, StickBreakingTransform
from .uniform import Uniform
from .utils import broadcast_all

_EULER_GAMMA = 0.57721566490153286060


class Cauchy(Distribution):
    """``Cauchy(loc, scale)``: density ``1 / (pi scale (1 + ((x - loc) / scale)**2))``."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc: Any, scale: Any, validate_args: bool | None = None) -> None:
        self.loc, self.scale = broadcast_all(loc, scale)
        super().__init__(self.loc.shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Cauchy:
        return self._expanded(Cauchy, batch_shape, ("loc", "scale"), _instance)

    @property
    def mean(self) -> Tensor:
        return self.loc.new_full(tuple(self._extended_shape()), float("nan"))

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def variance(self) -> Tensor:
        return self.loc.new_full(tuple(self._extended_shape()), float("inf"))

    def rsample(self, sample_shape: Any = EMPTY_SHAPE) -> Tensor:
        shape = tuple(self._extended_shape(sample_shape))
        with no_grad():
            eps = self.loc.new_empty(shape).cauchy_()
        return self.loc + eps * self.scale

    def log_prob(self, value: Any) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return -math.log(math.pi) - self.scale.log() - ((value - self.loc) / self.scale).pow(2).log1p()

    def cdf(self, value: Any) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return ((value - self.loc) / self.scale).atan() / math.pi + 0.5

    def icdf(self, value: Any) -> Tensor:
        return (math.pi * (value - 0.5)).tan() * self.scale + self.loc

    def entropy(self) -> Tensor:
        return math.log(4 * math.pi) + self.scale.log()


class _Wrapped(TransformedDistribution):
    """A transformed family whose ``expand`` is its base's (its own ``__init__`` takes parameters)."""

    def expand(self, batch_shape: Any, _instance: Any = None) -> Any:
        new = self._get_checked_instance(type(self), _instance)
        return TransformedDistribution.expand(self, batch_shape, _instance=new)


class LogNormal(_Wrapped):
    """``LogNormal(loc, scale)``: ``exp(X)`` for ``X ~ Normal(loc, scale)``."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, loc: Any, scale: Any, validate_args: bool | None = None) -> None:
        super().__init__(Normal(loc, scale, validate_args=validate_args), ExpTransform(), validate_args=validate_args)

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
        return (self.loc - self.scale.pow(2)).exp()

    @property
    def variance(self) -> Tensor:
        s2 = self.scale.pow(2)
        return s2.expm1() * (2 * self.loc + s2).exp()

    def entropy(self) -> Tensor:
        return self.base_dist.entropy() + self.loc


class _Folded(_Wrapped):
    """``|X|`` for ``X`` of a distribution symmetric about 0 with a ``scale`` (HalfNormal's and
    HalfCauchy's one definition): the density doubled on ``x >= 0``, the cdf ``2 F(x) - 1``."""

    arg_constraints = {"scale": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    @property
    def scale(self) -> Tensor:
        return self.base_dist.scale

    @property
    def mode(self) -> Tensor:
        return _creation.zeros_like(self.scale)  # (a constant: no gradient, as PyTorch's)

    def log_prob(self, value: Any) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        lp = self.base_dist.log_prob(value) + math.log(2)
        return where(value >= 0, lp, -math.inf)

    def cdf(self, value: Any) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return 2 * self.base_dist.cdf(value) - 1

    def icdf(self, prob: Any) -> Tensor:
        return self.base_dist.icdf((prob + 1) / 2)

    def entropy(self) -> Tensor:
        return self.base_dist.entropy() - math.log(2)


class HalfNormal(_Folded):
    """``HalfNormal(scale)``: ``|X|`` for ``X ~ Normal(0, scale)``."""

    def __init__(self, scale: Any, validate_args: bool | None = None) -> None:
        super().__init__(Normal(0, scale, validate_args=False), AbsTransform(), validate_args=validate_args)

    @property
    def mean(self) -> Tensor:
        return self.scale * math.sqrt(2 / math.pi)

    @property
    def variance(self) -> Tensor:
        return self.scale.pow(2) * (1 - 2 / math.pi)


class HalfCauchy(_Folded):
    """``HalfCauchy(scale)``: ``|X|`` for ``X ~ Cauchy(0, scale)``."""

    def __init__(self, scale: Any, validate_args: bool | None = None) -> None:
        super().__init__(Cauchy(0, scale, validate_args=False), AbsTransform(), validate_args=validate_args)

    @property
    def mean(self) -> Tensor:
        return self.scale.new_full(tuple(self._extended_shape()), math.inf)

    @property
    def variance(self) -> Tensor:
        return self.base_dist.variance


class Gumbel(_Wrapped):
    """``Gumbel(loc, scale)``: ``loc - scale * log(-log(U))`` for ``U`` uniform."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real

    def __init__(self, loc: Any, scale: Any, validate_args: bool | None = None) -> None:
        self.loc, self.scale = broadcast_all(loc, scale)
        info = finfo(self.loc.dtype)
        base = Uniform(self.loc.new_full(tuple(self.loc.shape), info.tiny),
                       self.loc.new_full(tuple(self.loc.shape), 1 - info.eps), validate_args=validate_args)  # fmt: skip
        transforms = [ExpTransform().inv, AffineTransform(0, -self.scale.new_ones(tuple(self.scale.shape))),
                      ExpTransform().inv, AffineTransform(self.loc, -self.scale)]  # fmt: skip
        super().__init__(base, transforms, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Gumbel:
        new = super().expand(batch_shape, _instance)
        new.loc, new.scale = self.loc.expand(tuple(batch_shape)), self.scale.expand(tuple(batch_shape))
        return new

    def log_prob(self, value: Any) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        z = (self.loc - value) / self.scale
        return (z - z.exp()) - self.scale.log()

    @property
    def mean(self) -> Tensor:
        return self.loc + self.scale * _EULER_GAMMA

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def stddev(self) -> Tensor:
        return (math.pi / math.sqrt(6)) * self.scale

    @property
    def variance(self) -> Tensor:
        return self.stddev.pow(2)

    def entropy(self) -> Tensor:
        return self.scale.log() + (1 + _EULER_GAMMA)


class Weibull(_Wrapped):
    """``Weibull(scale, concentration)``: ``scale * E ** (1 / concentration)`` for ``E ~ Exponential(1)``."""

    arg_constraints = {"scale": constraints.positive, "concentration": constraints.positive}
    support = constraints.positive

    def __init__(self, scale: Any, concentration: Any, validate_args: bool | None = None) -> None:
        self.scale, self.concentration = broadcast_all(scale, concentration)
        c = self.concentration
        self.concentration_reciprocal = where(
            c == 0, float("inf"), 1 / where(c == 0, 1.0, c)
        )  # (1 / 0 without a warning)
        base = Exponential(self.scale.new_ones(tuple(self.scale.shape)), validate_args=validate_args)
        transforms = [PowerTransform(exponent=self.concentration_reciprocal), AffineTransform(loc=0, scale=self.scale)]
        super().__init__(base, transforms, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Weibull:
        new = self._get_checked_instance(Weibull, _instance)
        shape = tuple(batch_shape)
        new.scale, new.concentration = self.scale.expand(shape), self.concentration.expand(shape)
        new.concentration_reciprocal = new.concentration.reciprocal()
        base = self.base_dist.expand(shape)
        transforms = [PowerTransform(exponent=new.concentration_reciprocal), AffineTransform(loc=0, scale=new.scale)]
        TransformedDistribution.__init__(new, base, transforms, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self) -> Tensor:
        return self.scale * (1 + self.concentration_reciprocal).lgamma().exp()

    @property
    def mode(self) -> Tensor:
        c = self.concentration
        return self.scale * ((c - 1) / c) ** c.reciprocal()

    @property
    def variance(self) -> Tensor:
        r = self.concentration_reciprocal
        return self.scale.pow(2) * ((1 + 2 * r).lgamma().exp() - (2 * (1 + r).lgamma()).exp())

    def entropy(self) -> Tensor:
        return (
            _EULER_GAMMA * (1 - self.concentration_reciprocal) + (self.scale * self.concentration_reciprocal).log() + 1
        )


class Pareto(_Wrapped):
    """``Pareto(scale, alpha)``: ``scale * exp(E)`` for ``E ~ Exponential(alpha)``."""

    arg_constraints = {"alpha": constraints.positive, "scale": constraints.positive}

    def __init__(self, scale: Any, alpha: Any, validate_args: bool | None = None) -> None:
        self.scale, self.alpha = broadcast_all(scale, alpha)
        base = Exponential(self.alpha, validate_args=validate_args)
        super().__init__(base, [ExpTransform(), AffineTransform(loc=0, scale=self.scale)], validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Pareto:
        new = self._get_checked_instance(Pareto, _instance)
        new.scale, new.alpha = self.scale.expand(tuple(batch_shape)), self.alpha.expand(tuple(batch_shape))
        return TransformedDistribution.expand(self, batch_shape, _instance=new)

    @property
    def mean(self) -> Tensor:
        a = self.alpha.clamp(min=1)
        return a * self.scale / (a - 1)

    @property
    def mode(self) -> Tensor:
        return self.scale

    @property
    def variance(self) -> Tensor:
        a = self.alpha.clamp(min=2)
        return self.scale.pow(2) * a / ((a - 1).pow(2) * (a - 2))

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self) -> constraints.Constraint:
        return constraints.greater_than_eq(self.scale)

    def entropy(self) -> Tensor:
        return (self.scale / self.alpha).log() + (1 + self.alpha.reciprocal())


def _kumaraswamy_moment(a: Tensor, b: Tensor, n: int) -> Tensor:
    arg1 = 1 + n / a
    return b * (arg1.lgamma() + b.lgamma() - (arg1 + b).lgamma()).exp()


class Kumaraswamy(_Wrapped):
    """``Kumaraswamy(concentration1, concentration0)``: ``(1 - U ** (1 / c0)) ** (1 / c1)`` for ``U`` uniform."""

    arg_constraints = {"concentration1": constraints.positive, "concentration0": constraints.positive}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, concentration1: Any, concentration0: Any, validate_args: bool | None = None) -> None:
        self.concentration1, self.concentration0 = broadcast_all(concentration1, concentration0)
        c0 = self.concentration0
        base = Uniform(c0.new_full(tuple(c0.shape), 0), c0.new_full(tuple(c0.shape), 1), validate_args=validate_args)
        transforms = [PowerTransform(exponent=c0.reciprocal()), AffineTransform(loc=1.0, scale=-1.0),
                      PowerTransform(exponent=self.concentration1.reciprocal())]  # fmt: skip
        super().__init__(base, transforms, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Kumaraswamy:
        new = self._get_checked_instance(Kumaraswamy, _instance)
        new.concentration1 = self.concentration1.expand(tuple(batch_shape))
        new.concentration0 = self.concentration0.expand(tuple(batch_shape))
        return TransformedDistribution.expand(self, batch_shape, _instance=new)

    @property
    def mean(self) -> Tensor:
        return _kumaraswamy_moment(self.concentration1, self.concentration0, 1)

    @property
    def mode(self) -> Tensor:
        c1, c0 = self.concentration1, self.concentration0
        # (NaN where the logarithms' arguments are below -1, as PyTorch's, without a floating-point warning)
        nan = float("nan")
        log_mode = c0.reciprocal() * where(c0 > 1, nan, -c0).log1p() - where(c0 * c1 > 1, nan, -c0 * c1).log1p()
        return where((c0 < 1) | (c1 < 1), float("nan"), log_mode).exp()

    @property
    def variance(self) -> Tensor:
        c1, c0 = self.concentration1, self.concentration0
        return _kumaraswamy_moment(c1, c0, 2) - self.mean.pow(2)

    def entropy(self) -> Tensor:
        c1, c0 = self.concentration1, self.concentration0
        t1 = 1 - c1.reciprocal()
        t0 = 1 - c0.reciprocal()
        h0 = (c0 + 1).digamma() + _EULER_GAMMA
        return t0 + t1 * h0 - c1.log() - c0.log()


class LogisticNormal(_Wrapped):
    """``LogisticNormal(loc, scale)``: the stick-breaking map of ``Normal(loc, scale)`` draws onto the simplex."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, loc: Any, scale: Any, validate_args: bool | None = None) -> None:
        base: Any = Normal(loc, scale, validate_args=validate_args)
        if not base.batch_shape:
            base = base.expand([1])
        super().__init__(base, StickBreakingTransform(), validate_args=validate_args)

    @property
    def loc(self) -> Tensor:
        return self.base_dist.base_dist.loc

    @property
    def scale(self) -> Tensor:
        return self.base_dist.base_dist.scale
