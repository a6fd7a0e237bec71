"""A mixture of ``K`` components of one family, as ``torch.distributions.MixtureSameFamily``
(mixture density networks, Gaussian mixture models)."""

from __future__ import annotations

from typing import Any

from ..engine.switches import no_grad
from ..tensors._tensor import Tensor
from . import constraints
from .categorical import Categorical
from .distribution import Distribution


class MixtureSameFamily(Distribution):
    """``MixtureSameFamily(mixture_distribution, component_distribution)``: the mixture weights are
    a ``Categorical`` over the last batch axis (``K``) of the component distribution.

    >>> mix = Categorical(tga.ones(2))  # doctest: +SKIP
    >>> gmm = MixtureSameFamily(mix, Normal(tga.tensor([-1.0, 1.0]), tga.ones(2)))  # doctest: +SKIP
    """

    arg_constraints: dict = {}
    has_rsample = False

    def __init__(
        self, mixture_distribution: Categorical, component_distribution: Distribution, validate_args: bool | None = None
    ) -> None:
        if not isinstance(mixture_distribution, Categorical):
            raise ValueError(
                "MixtureSameFamily: the mixture distribution must be a Categorical, got "
                f"{type(mixture_distribution).__name__}"
            )
        if not isinstance(component_distribution, Distribution):
            raise ValueError(
                "MixtureSameFamily: the component distribution must be a Distribution, got "
                f"{type(component_distribution).__name__}"
            )
        self._mixture_distribution = mixture_distribution
        self._component_distribution = component_distribution
        mix_batch = tuple(mixture_distribution.batch_shape)
        comp_batch = tuple(component_distribution.batch_shape)
        if not comp_batch:
            raise ValueError("MixtureSameFamily: the component distribution needs a batch axis of K components")
        cdbs = comp_batch[:-1]
        for size1, size2 in zip(reversed(mix_batch), reversed(cdbs)):
            if size1 != 1 and size2 != 1 and size1 != size2:
                raise ValueError(
                    f"MixtureSameFamily: the mixture's batch shape {mix_batch} does not broadcast with the "
                    f"component's batch shape without its last axis {cdbs}"
                )
        km = mixture_distribution.logits.shape[-1]
        kc = comp_batch[-1]
        if km != kc:
            raise ValueError(
                f"MixtureSameFamily: the mixture has {km} categories but the component distribution has {kc} "
                "components (its last batch axis)"
            )
        self._num_component = km
        self._event_ndims = len(component_distribution.event_shape)
        super().__init__(cdbs, component_distribution.event_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> MixtureSameFamily:
        new = self._get_checked_instance(MixtureSameFamily, _instance)
        batch_shape = tuple(batch_shape)
        new._component_distribution = self._component_distribution.expand(batch_shape + (self._num_component,))
        new._mixture_distribution = self._mixture_distribution.expand(batch_shape)
        new._num_component = self._num_component
        new._event_ndims = self._event_ndims
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property
    def support(self) -> constraints.Constraint:
        return self._component_distribution.support

    @property
    def mixture_distribution(self) -> Categorical:
        return self._mixture_distribution

    @property
    def component_distribution(self) -> Distribution:
        return self._component_distribution

    def _weights(self) -> Tensor:
        """The mixture probabilities with an axis of 1 for each event axis after ``K``."""
        probs = self._mixture_distribution.probs
        return probs.reshape(tuple(probs.shape) + (1,) * self._event_ndims)

    @property
    def mean(self) -> Tensor:
        return (self._weights() * self._component_distribution.mean).sum(-1 - self._event_ndims)

    @property
    def variance(self) -> Tensor:
        axis = -1 - self._event_ndims
        w = self._weights()
        comp_mean = self._component_distribution.mean
        within = (w * self._component_distribution.variance).sum(axis)
        between = (w * (comp_mean - self.mean.unsqueeze(axis)).pow(2)).sum(axis)
        return within + between

    def _pad(self, x: Tensor) -> Tensor:
        """``x`` with an axis for the ``K`` components before its event axes."""
        return x.unsqueeze(-1 - self._event_ndims)

    def cdf(self, x: Any) -> Tensor:
        cdf_x = self._component_distribution.cdf(self._pad(x))
        return (cdf_x * self._mixture_distribution.probs).sum(-1)

    def log_prob(self, x: Any) -> Tensor:
        if self._validate_args:
            self._validate_sample(x)
        log_prob_x = self._component_distribution.log_prob(self._pad(x))
        log_mix = self._mixture_distribution.logits.log_softmax(-1)
        return (log_prob_x + log_mix).logsumexp(-1)

    def sample(self, sample_shape: Any = ()) -> Tensor:
        # the component index first, then a draw of every component, as PyTorch draws them
        with no_grad():
            idx = self._mixture_distribution.sample(sample_shape)
            comp = self._component_distribution.sample(sample_shape)
            at = len(tuple(idx.shape))
            event = tuple(self.event_shape)
            idx = idx.reshape(tuple(idx.shape) + (1,) * (len(event) + 1))
            idx = idx.expand(tuple(idx.shape[: at + 1]) + event)
            return comp.gather(at, idx).squeeze(at)

    def __repr__(self) -> str:
        return f"MixtureSameFamily(\n  {self._mixture_distribution},\n  {self._component_distribution})"
