"""The Bernoulli distribution, as ``torch.distributions.Bernoulli``."""

from __future__ import annotations

from typing import Any

from ..engine.switches import no_grad
from ..functional import binary_cross_entropy_with_logits
from ..tensors._tensor import Tensor
from ..tensors.factories import creation as _creation
from . import constraints
from .distribution import EMPTY_SHAPE, Distribution
from .exp_family import ExponentialFamily
from .utils import broadcast_all, expand_probs_or_logits, lazy_property, logits_to_probs, probs_to_logits


def one_of(probs: Any, logits: Any) -> None:
    if (probs is None) == (logits is None):
        raise ValueError("Either `probs` or `logits` must be specified, but not both.")


class Bernoulli(ExponentialFamily):
    """``Bernoulli(probs)`` or ``Bernoulli(logits=...)``: 1 with probability ``probs``, else 0."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.boolean
    has_enumerate_support = True
    _mean_carrier_measure = 0

    def __init__(self, probs: Any = None, logits: Any = None, validate_args: bool | None = None) -> None:
        one_of(probs, logits)
        given = probs if probs is not None else logits
        (param,) = broadcast_all(given)
        if probs is not None:
            self.probs = param
        else:
            self.logits = param
        self._param = param
        super().__init__(param.shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Bernoulli:
        new = self._get_checked_instance(Bernoulli, _instance)
        shape = tuple(batch_shape)
        expand_probs_or_logits(self, new, shape)
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self) -> Tensor:
        return self.probs

    @property
    def mode(self) -> Tensor:
        mode = (self.probs >= 0.5).type_as(self.probs)
        return mode.masked_fill(self.probs == 0.5, float("nan"))

    @property
    def variance(self) -> Tensor:
        return self.probs * (1 - self.probs)

    @lazy_property
    def logits(self) -> Tensor:
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self) -> Tensor:
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def param_shape(self) -> Any:
        return self._param.size()

    def sample(self, sample_shape: Any = EMPTY_SHAPE) -> Tensor:
        shape = tuple(self._extended_shape(sample_shape))
        with no_grad():
            return _creation.bernoulli(self.probs.expand(shape))

    def log_prob(self, value: Any) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return -binary_cross_entropy_with_logits(logits, value, reduction="none")

    def entropy(self) -> Tensor:
        return binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none")

    def enumerate_support(self, expand: bool = True) -> Tensor:
        values = _creation.arange(2, dtype=self._param.dtype, device=self._param.device)
        values = values.reshape(-1, *(1,) * len(self._batch_shape))
        return values.expand(-1, *self._batch_shape) if expand else values

    @property
    def _natural_params(self) -> tuple[Tensor]:
        return (self.logits,)

    def _log_normalizer(self, x: Tensor) -> Tensor:
        return x.exp().log1p()
