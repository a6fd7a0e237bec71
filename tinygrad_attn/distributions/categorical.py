"""Categorical distributions over ``K`` events (the last axis of ``probs``/``logits``), as
``torch.distributions.Categorical``, ``OneHotCategorical`` and ``OneHotCategoricalStraightThrough``."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..engine.switches import no_grad
from ..functional import one_hot
from ..tensors._tensor import Tensor
from ..tensors.dtypes import finfo
from ..tensors.factories import creation as _creation
from . import constraints
from .bernoulli import one_of
from .distribution import EMPTY_SHAPE, Distribution
from .utils import expand_probs_or_logits, lazy_property, logits_to_probs, probs_to_logits


class Categorical(Distribution):
    """``Categorical(probs)`` or ``Categorical(logits=...)``: draws the index of one of ``K``
    events; ``probs`` are normalised along the last axis, ``logits`` may be unnormalised."""

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.independent(constraints.real, 1)}
    has_enumerate_support = True

    def __init__(self, probs: Any = None, logits: Any = None, validate_args: bool | None = None) -> None:
        one_of(probs, logits)
        if probs is not None:
            if probs.ndim < 1:
                raise ValueError("`probs` parameter must be at least one-dimensional.")
            self.probs = probs / probs.sum(-1, keepdim=True)
        else:
            if logits.ndim < 1:
                raise ValueError("`logits` parameter must be at least one-dimensional.")
            self.logits = logits - logits.logsumexp(-1, keepdim=True)
        self._param = self.probs if probs is not None else self.logits
        self._num_events = self._param.shape[-1]
        batch_shape = self._param.shape[:-1] if self._param.ndim > 1 else ()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Categorical:
        new = self._get_checked_instance(Categorical, _instance)
        shape = (*tuple(batch_shape), self._num_events)
        expand_probs_or_logits(self, new, shape)
        new._num_events = self._num_events
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self) -> constraints.Constraint:
        return constraints.integer_interval(0, self._num_events - 1)

    @lazy_property
    def logits(self) -> Tensor:
        return probs_to_logits(self.probs)

    @lazy_property
    def probs(self) -> Tensor:
        return logits_to_probs(self.logits)

    @property
    def param_shape(self) -> Any:
        return self._param.size()

    @property
    def mean(self) -> Tensor:
        return _creation.full(tuple(self._extended_shape()), math.nan, dtype=self.probs.dtype, device=self.probs.device)

    @property
    def mode(self) -> Tensor:
        return self.probs.argmax(-1)

    @property
    def variance(self) -> Tensor:
        return _creation.full(tuple(self._extended_shape()), math.nan, dtype=self.probs.dtype, device=self.probs.device)

    def sample(self, sample_shape: Any = EMPTY_SHAPE) -> Tensor:
        shape = tuple(self._extended_shape(sample_shape))
        n = math.prod(tuple(sample_shape) if not isinstance(sample_shape, int) else (sample_shape,))
        with no_grad():
            probs_2d = self.probs.reshape(-1, self._num_events)
            samples_2d = _creation.multinomial(probs_2d, n, True).T  # (as PyTorch draws them)
            return samples_2d.reshape(shape)

    def log_prob(self, value: Any) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        value = value.long().unsqueeze(-1)
        shape = tuple(_broadcast_shape(value.shape, self.logits.shape))
        value = value.expand(*shape[:-1], 1)
        log_pmf = self.logits.expand(shape)
        return log_pmf.gather(-1, value).squeeze(-1)

    def entropy(self) -> Tensor:
        logits = self.logits.clamp(min=finfo(self.logits.dtype).min)
        return -(logits * self.probs).sum(-1)

    def enumerate_support(self, expand: bool = True) -> Tensor:
        values = _creation.arange(self._num_events, device=self._param.device)  # (int64)
        values = values.reshape(-1, *(1,) * len(self._batch_shape))
        return values.expand(-1, *self._batch_shape) if expand else values


def _broadcast_shape(a: tuple, b: tuple) -> tuple:
    return np.broadcast_shapes(tuple(a), tuple(b))


class OneHotCategorical(Distribution):
    """A categorical draw as a one-hot vector of ``K`` entries (the event axis)."""

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.independent(constraints.real, 1)}
    support = constraints.one_hot
    has_enumerate_support = True

    def __init__(self, probs: Any = None, logits: Any = None, validate_args: bool | None = None) -> None:
        self._categorical = Categorical(probs, logits)
        param = self._categorical._param
        super().__init__(self._categorical.batch_shape, param.shape[-1:], validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> OneHotCategorical:
        new = self._get_checked_instance(OneHotCategorical, _instance)
        new._categorical = self._categorical.expand(batch_shape)
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def _param(self) -> Tensor:
        return self._categorical._param

    @property
    def probs(self) -> Tensor:
        return self._categorical.probs

    @property
    def logits(self) -> Tensor:
        return self._categorical.logits

    @property
    def mean(self) -> Tensor:
        return self._categorical.probs

    @property
    def mode(self) -> Tensor:
        probs = self._categorical.probs
        return one_hot(probs.argmax(-1), probs.shape[-1]).type_as(probs)

    @property
    def variance(self) -> Tensor:
        return self._categorical.probs * (1 - self._categorical.probs)

    @property
    def param_shape(self) -> Any:
        return self._categorical.param_shape

    def sample(self, sample_shape: Any = EMPTY_SHAPE) -> Tensor:
        probs = self._categorical.probs
        indices = self._categorical.sample(sample_shape)
        return one_hot(indices, probs.shape[-1]).type_as(probs)

    def log_prob(self, value: Any) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return self._categorical.log_prob(value.max(-1)[1])

    def entropy(self) -> Tensor:
        return self._categorical.entropy()

    def enumerate_support(self, expand: bool = True) -> Tensor:
        n = self.event_shape[0]
        values = _creation.eye(n, dtype=self._param.dtype, device=self._param.device)
        values = values.reshape(n, *(1,) * len(self.batch_shape), n)
        return values.expand(n, *self.batch_shape, n) if expand else values


class OneHotCategoricalStraightThrough(OneHotCategorical):
    """A one-hot draw whose gradient is that of the probabilities (the straight-through estimator)."""

    has_rsample = True

    def rsample(self, sample_shape: Any = EMPTY_SHAPE) -> Tensor:
        samples = self.sample(sample_shape)
        probs = self._categorical.probs
        return samples + (probs - probs.detach())


__all__ = ["Categorical", "OneHotCategorical", "OneHotCategoricalStraightThrough"]
