"""A mixture of distributions of one family, as ``torch.distributions.MixtureSameFamily``: the
last batch axis of ``component_distribution`` holds the ``K`` components, weighted by a
``Categorical`` over ``K``.

>>> mix = Categorical(tga.ones(5))  # doctest: +SKIP
>>> gmm = MixtureSameFamily(mix, Normal(tga.randn(5), tga.rand(5) + 0.1))  # doctest: +SKIP
"""

from __future__ import annotations

from typing import Any

from ..engine.switches import no_grad
from ..tensors._tensor import Tensor
from . import constraints
from .categorical import Categorical
from .constraints import MixtureSameFamilyConstraint
from .distribution import EMPTY_SHAPE, Distribution


class MixtureSameFamily(Distribution):
    """``MixtureSameFamily(mixture_distribution, component_distribution)``."""

    arg_constraints: dict[str, constraints.Constraint] = {}
    has_rsample = False

    def __init__(self, mixture_distribution: Categorical, component_distribution: Distribution,
                 validate_args: bool | None = None) -> None:  # fmt: skip
        self._mixture_distribution = mixture_distribution
        self._component_distribution = component_distribution
        if not isinstance(mixture_distribution, Categorical):
            raise ValueError(" The Mixture distribution needs to be an  instance of torch.distributions.Categorical")
        if not isinstance(component_distribution, Distribution):
            raise ValueError("The Component distribution needs to be an instance of torch.distributions.Distribution")
        mdbs = tuple(mixture_distribution.batch_shape)
        cdbs = tuple(component_distribution.batch_shape)[:-1]
        for a, b in zip(reversed(mdbs), reversed(cdbs)):
            if a != 1 and b != 1 and a != b:
                raise ValueError(f"`mixture_distribution.batch_shape` ({mdbs}) is not compatible with "
                                 f"`component_distribution.batch_shape`({cdbs})")  # fmt: skip
        km = mixture_distribution.logits.shape[-1]
        kc = component_distribution.batch_shape[-1]
        if km != kc:
            raise ValueError(
                f"`mixture_distribution component` ({km}) does not equal `component_distribution.batch_shape[-1]` ({kc})"
            )
        self._num_component = km
        event_shape = component_distribution.event_shape
        self._event_ndims = len(event_shape)
        super().__init__(cdbs, event_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> MixtureSameFamily:
        new = self._get_checked_instance(MixtureSameFamily, _instance)
        batch_shape = tuple(batch_shape)
        new._component_distribution = self._component_distribution.expand((*batch_shape, self._num_component))
        new._mixture_distribution = self._mixture_distribution.expand(batch_shape)
        new._num_component, new._event_ndims = self._num_component, self._event_ndims
        Distribution.__init__(new, batch_shape, new._component_distribution.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property
    def support(self) -> constraints.Constraint:
        return MixtureSameFamilyConstraint(self._component_distribution.support)

    @property
    def mixture_distribution(self) -> Categorical:
        return self._mixture_distribution

    @property
    def component_distribution(self) -> Distribution:
        return self._component_distribution

    @property
    def mean(self) -> Tensor:
        probs = self._pad_mixture_dimensions(self.mixture_distribution.probs)
        return (probs * self.component_distribution.mean).sum(-1 - self._event_ndims)  # (B, E)

    @property
    def variance(self) -> Tensor:
        probs = self._pad_mixture_dimensions(self.mixture_distribution.probs)
        mean_cond_var = (probs * self.component_distribution.variance).sum(-1 - self._event_ndims)
        spread = (self.component_distribution.mean - self._pad(self.mean)).pow(2.0)
        return mean_cond_var + (probs * spread).sum(-1 - self._event_ndims)

    def cdf(self, x: Any) -> Tensor:
        cdf_x = self.component_distribution.cdf(self._pad(x))
        return (cdf_x * self.mixture_distribution.probs).sum(-1)

    def log_prob(self, x: Any) -> Tensor:
        if self._validate_args:
            self._validate_sample(x)
        log_prob_x = self.component_distribution.log_prob(self._pad(x))  # (S, B, K)
        log_mix_prob = self.mixture_distribution.logits.log_softmax(-1)  # (B, K)
        return (log_prob_x + log_mix_prob).logsumexp(-1)  # (S, B)

    def sample(self, sample_shape: Any = EMPTY_SHAPE) -> Tensor:
        """The mixture's draw picks a component; the components are all drawn (in that order, as PyTorch's)."""
        sample_shape = tuple(sample_shape)
        with no_grad():
            gather_dim = len(sample_shape) + len(self.batch_shape)
            es = tuple(self.event_shape)
            mix_sample = self.mixture_distribution.sample(sample_shape)
            comp_samples = self.component_distribution.sample(sample_shape)
            index = mix_sample.reshape(*mix_sample.shape, *([1] * (len(es) + 1)))
            index = index.repeat(*([1] * mix_sample.dim()), 1, *es)
            return comp_samples.gather(gather_dim, index).squeeze(gather_dim)

    def _pad(self, x: Tensor) -> Tensor:
        return x.unsqueeze(-1 - self._event_ndims)

    def _pad_mixture_dimensions(self, x: Tensor) -> Tensor:
        dist_batch_ndims = len(self.batch_shape)
        cat_batch_ndims = len(self.mixture_distribution.batch_shape)
        pad_ndims = 0 if cat_batch_ndims == 1 else dist_batch_ndims - cat_batch_ndims
        xs = tuple(x.shape)
        return x.reshape(*xs[:-1], *([1] * pad_ndims), *xs[-1:], *([1] * self._event_ndims))

    def __repr__(self) -> str:
        return f"MixtureSameFamily(\n  {self.mixture_distribution},\n  {self.component_distribution})"
