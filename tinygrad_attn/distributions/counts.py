"""Distributions of counts, as ``torch.distributions.Poisson``, ``Binomial``, ``NegativeBinomial``,
``Geometric`` and ``Multinomial``: samples are PyTorch's for a seed (its Poisson and binomial
kernels' algorithms on our generator's draws)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..engine.switches import no_grad
from ..functional import binary_cross_entropy_with_logits, logsigmoid
from ..tensors._tensor import Tensor, where
from ..tensors.dtypes import finfo
from ..tensors.factories import creation as _creation
from . import constraints
from .bernoulli import one_of
from .categorical import Categorical
from .distribution import EMPTY_SHAPE, Distribution, all_true
from .exp_family import ExponentialFamily
from .gamma import Gamma
from .sampling import binomial, poisson
from .utils import broadcast_all, expand_probs_or_logits, lazy_property, logits_to_probs, probs_to_logits


class Poisson(ExponentialFamily):
    """``Poisson(rate)``: ``P(k) = rate**k exp(-rate) / k!``."""

    arg_constraints = {"rate": constraints.nonnegative}
    support = constraints.nonnegative_integer

    def __init__(self, rate: Any, validate_args: bool | None = None) -> None:
        (self.rate,) = broadcast_all(rate)
        super().__init__(self.rate.shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Poisson:
        return self._expanded(Poisson, batch_shape, ("rate",), _instance)

    @property
    def mean(self) -> Tensor:
        return self.rate

    @property
    def mode(self) -> Tensor:
        return self.rate.floor()

    @property
    def variance(self) -> Tensor:
        return self.rate

    def sample(self, sample_shape: Any = EMPTY_SHAPE) -> Tensor:
        shape = tuple(self._extended_shape(sample_shape))
        with no_grad():
            return poisson(self.rate.expand(shape))

    def log_prob(self, value: Any) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        rate, value = broadcast_all(self.rate, value)
        return value.xlogy(rate) - rate - (value + 1).lgamma()

    @property
    def _natural_params(self) -> tuple[Tensor]:
        return (self.rate.log(),)

    def _log_normalizer(self, x: Tensor) -> Tensor:
        return x.exp()


class _ProbsOrLogits(Distribution):
    """A family given by ``probs`` or ``logits`` (one of them), the other computed when asked."""

    _binary = True

    @lazy_property
    def logits(self) -> Tensor:
        return probs_to_logits(self.probs, is_binary=self._binary)

    @lazy_property
    def probs(self) -> Tensor:
        return logits_to_probs(self.logits, is_binary=self._binary)

    @property
    def param_shape(self) -> Any:
        return self._param.size()


def _clamp_by_zero(x: Tensor) -> Tensor:
    # (x where positive, else 0; its gradient at 0 is 1/2, as PyTorch's)
    return (x.clamp(min=0) + x - x.clamp(max=0)) / 2


class _CountAndProbs(_ProbsOrLogits):
    """A count of trials and the probability (or logit) of success of each, broadcast together:
    Binomial's and NegativeBinomial's parameters (the count in the probabilities' dtype)."""

    def __init__(self, total_count: Any, probs: Any = None, logits: Any = None,
                 validate_args: bool | None = None) -> None:  # fmt: skip
        one_of(probs, logits)
        if probs is not None:
            self.total_count, self.probs = broadcast_all(total_count, probs)
            self.total_count = self.total_count.type_as(self.probs)
        else:
            self.total_count, self.logits = broadcast_all(total_count, logits)
            self.total_count = self.total_count.type_as(self.logits)
        self._param = self.probs if probs is not None else self.logits
        super().__init__(self._param.shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Any:
        family = next(k for k in type(self).__mro__ if k.__module__ == __name__ and k.__name__[0] != "_")
        new = self._get_checked_instance(
            family, _instance
        )  # (a user's subclass with its own __init__: PyTorch's error)
        shape = tuple(batch_shape)
        new.total_count = self.total_count.expand(shape)
        expand_probs_or_logits(self, new, shape)
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new


class Binomial(_CountAndProbs):
    """``Binomial(total_count=1, probs=None, logits=None)``: successes in ``total_count`` trials."""

    arg_constraints = {"total_count": constraints.nonnegative_integer, "probs": constraints.unit_interval,
                       "logits": constraints.real}  # fmt: skip
    has_enumerate_support = True

    def __init__(self, total_count: Any = 1, probs: Any = None, logits: Any = None,
                 validate_args: bool | None = None) -> None:  # fmt: skip
        super().__init__(total_count, probs, logits, validate_args)

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self) -> constraints.Constraint:
        return constraints.integer_interval(0, self.total_count)

    @property
    def mean(self) -> Tensor:
        return self.total_count * self.probs

    @property
    def mode(self) -> Tensor:
        return ((self.total_count + 1) * self.probs).floor().clamp(max=self.total_count)

    @property
    def variance(self) -> Tensor:
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape: Any = EMPTY_SHAPE) -> Tensor:
        shape = tuple(self._extended_shape(sample_shape))
        with no_grad():
            return binomial(self.total_count.expand(shape), self.probs.expand(shape))

    def log_prob(self, value: Any) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        n, logits = self.total_count, self.logits
        log_factorial_n = (n + 1).lgamma()
        log_factorial_k = (value + 1).lgamma()
        log_factorial_nmk = (n - value + 1).lgamma()
        normalize = n * _clamp_by_zero(logits) + n * (-logits.abs()).exp().log1p() - log_factorial_n
        return value * logits - log_factorial_k - log_factorial_nmk - normalize

    def _homogeneous_count(self, what: str) -> int:
        count = int(self.total_count.max())
        if not int(self.total_count.min()) == count:
            raise NotImplementedError(f"Inhomogeneous total count not supported by `{what}`.")
        return count

    def entropy(self) -> Tensor:
        self._homogeneous_count("entropy")
        log_prob = self.log_prob(self.enumerate_support(False))
        return -(log_prob.exp() * log_prob).sum(0)

    def enumerate_support(self, expand: bool = True) -> Tensor:
        count = self._homogeneous_count("enumerate_support")
        values = _creation.arange(1 + count, dtype=self._param.dtype, device=self._param.device)
        values = values.reshape(-1, *(1,) * len(self._batch_shape))
        return values.expand(-1, *self._batch_shape) if expand else values


class NegativeBinomial(_CountAndProbs):
    """``NegativeBinomial(total_count, probs=None, logits=None)``: successes (of probability
    ``probs``) before ``total_count`` failures; drawn as ``Poisson(Gamma(total_count, exp(-logits)))``."""

    arg_constraints = {"total_count": constraints.greater_than_eq(0), "probs": constraints.half_open_interval(0.0, 1.0),
                       "logits": constraints.real}  # fmt: skip
    support = constraints.nonnegative_integer

    @property
    def mean(self) -> Tensor:
        return self.total_count * self.logits.exp()

    @property
    def mode(self) -> Tensor:
        return ((self.total_count - 1) * self.logits.exp()).floor().clamp(min=0.0)

    @property
    def variance(self) -> Tensor:
        return self.mean / (-self.logits).sigmoid()

    @lazy_property
    def _gamma(self) -> Gamma:
        return Gamma(self.total_count, (-self.logits).exp(), validate_args=False)

    def sample(self, sample_shape: Any = EMPTY_SHAPE) -> Tensor:
        with no_grad():
            return poisson(self._gamma.sample(sample_shape))

    def log_prob(self, value: Any) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        n = self.total_count
        unnormalized = n * logsigmoid(-self.logits) + value * logsigmoid(self.logits)
        normalization = -(n + value).lgamma() + (1.0 + value).lgamma() + n.lgamma()
        normalization = where(n + value == 0.0, 0.0, normalization)
        return unnormalized - normalization


class Geometric(_ProbsOrLogits):
    """``Geometric(probs=None, logits=None)``: failures before the first success."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, probs: Any = None, logits: Any = None, validate_args: bool | None = None) -> None:
        one_of(probs, logits)
        if probs is not None:
            (self.probs,) = broadcast_all(probs)
        else:
            (self.logits,) = broadcast_all(logits)
        self._param = self.probs if probs is not None else self.logits
        super().__init__(self._param.shape, validate_args=validate_args)
        if self._validate_args and probs is not None and not all_true(self.probs > 0):
            raise ValueError(
                f"Expected parameter probs ({type(self.probs).__name__} of shape {tuple(self.probs.shape)}) of "
                f"distribution {self!r} to satisfy the constraint {constraints.unit_interval!r}, but found invalid "
                f"values:\n{self.probs}"
            )

    def expand(self, batch_shape: Any, _instance: Any = None) -> Geometric:
        new = self._get_checked_instance(Geometric, _instance)
        expand_probs_or_logits(self, new, tuple(batch_shape))
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self) -> Tensor:
        return 1.0 / self.probs - 1.0

    @property
    def mode(self) -> Tensor:
        return _creation.zeros_like(self.probs)  # (a constant: no gradient, as PyTorch's)

    @property
    def variance(self) -> Tensor:
        return (1.0 / self.probs - 1.0) / self.probs

    def sample(self, sample_shape: Any = EMPTY_SHAPE) -> Tensor:
        shape = tuple(self._extended_shape(sample_shape))
        tiny = finfo(self.probs.dtype).tiny
        with no_grad():
            u = self.probs.new_empty(shape).uniform_(tiny, 1)
            return (u.log() / (-self.probs).log1p()).floor()

    def log_prob(self, value: Any) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        value, probs = broadcast_all(value, self.probs)
        probs = where((probs == 1) & (value == 0), 0.0, probs)
        return value * (-probs).log1p() + self.probs.log()

    def entropy(self) -> Tensor:
        return binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none") / self.probs


class Multinomial(Distribution):
    """``Multinomial(total_count=1, probs=None, logits=None)``: counts of each of ``K`` categories
    in ``total_count`` categorical draws (PyTorch's draws for a seed)."""

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.independent(constraints.real, 1)}

    def __init__(self, total_count: int = 1, probs: Any = None, logits: Any = None,
                 validate_args: bool | None = None) -> None:  # fmt: skip
        if not isinstance(total_count, int):
            raise NotImplementedError("inhomogeneous total_count is not supported")
        self.total_count = total_count
        self._categorical = Categorical(probs=probs, logits=logits)
        self._binomial = Binomial(total_count=total_count, probs=self.probs)
        batch_shape = self._categorical.batch_shape
        event_shape = self._categorical.param_shape[-1:]
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Multinomial:
        new = self._get_checked_instance(Multinomial, _instance)
        new.total_count = self.total_count
        new._categorical = self._categorical.expand(batch_shape)
        new._binomial = Binomial(total_count=self.total_count, probs=new._categorical.probs, validate_args=False)
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property(is_discrete=True, event_dim=1)
    def support(self) -> constraints.Constraint:
        return constraints.multinomial(self.total_count)

    @property
    def mean(self) -> Tensor:
        return self.probs * self.total_count

    @property
    def variance(self) -> Tensor:
        return self.total_count * self.probs * (1 - self.probs)

    @property
    def logits(self) -> Tensor:
        return self._categorical.logits

    @property
    def probs(self) -> Tensor:
        return self._categorical.probs

    @property
    def param_shape(self) -> Any:
        return self._categorical.param_shape

    def sample(self, sample_shape: Any = EMPTY_SHAPE) -> Tensor:
        sample_shape = tuple(sample_shape)
        with no_grad():
            draws = self._categorical.sample((self.total_count, *sample_shape))
            order = [*range(1, draws.dim()), 0]
            draws = draws.permute(tuple(order))  # (sample, batch, total_count)
            counts = _creation.zeros(*self._extended_shape(sample_shape), dtype=draws.dtype, device=draws.device)
            counts = counts.scatter_add(-1, draws, draws.new_ones(tuple(draws.shape)))
            return counts.type_as(self.probs)

    def entropy(self) -> Tensor:
        n = self.total_count
        # (PyTorch takes log(n!) of an integer tensor: a float32 number, whatever the probabilities' dtype)
        term1 = n * self._categorical.entropy() - float(np.float32(math.lgamma(n + 1)))
        support = self._binomial.enumerate_support(expand=False)[1:]
        binomial_probs = self._binomial.log_prob(support).exp()
        weights = (support + 1).lgamma()
        return term1 + (binomial_probs * weights).sum(0).sum(-1)

    def log_prob(self, value: Any) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        log_factorial_n = (value.sum(-1) + 1).lgamma()
        log_factorial_xs = (value + 1).lgamma().sum(-1)
        logits = where((value == 0) & (logits == -math.inf), 0.0, logits)
        return log_factorial_n - log_factorial_xs + (logits * value).sum(-1)
