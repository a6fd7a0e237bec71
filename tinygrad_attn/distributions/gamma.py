"""The gamma distribution and its relatives, as ``torch.distributions.Gamma``, ``Chi2`` and
``InverseGamma``. Samples are PyTorch's for a seed (its Marsaglia-Tsang sampler on our
generator), and ``rsample``'s derivative is PyTorch's (``_standard_gamma_grad``)."""

from __future__ import annotations

from typing import Any

from ..tensors._tensor import Tensor, where
from ..tensors.dtypes import finfo
from . import constraints
from .distribution import EMPTY_SHAPE
from .exp_family import ExponentialFamily
from .sampling import standard_gamma
from .transformed_distribution import TransformedDistribution
from .transforms import PowerTransform
from .utils import broadcast_all


class Gamma(ExponentialFamily):
    """``Gamma(concentration, rate)``: density ``rate**c x**(c-1) exp(-rate x) / Gamma(c)``.

    >>> Gamma(2.0, 1.0).mean  # doctest: +SKIP
    """

    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, concentration: Any, rate: Any, validate_args: bool | None = None) -> None:
        self.concentration, self.rate = broadcast_all(concentration, rate)
        super().__init__(self.concentration.shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Gamma:
        return self._expanded(Gamma, batch_shape, ("concentration", "rate"), _instance)

    @property
    def mean(self) -> Tensor:
        return self.concentration / self.rate

    @property
    def mode(self) -> Tensor:
        return ((self.concentration - 1) / self.rate).clamp(min=0)

    @property
    def variance(self) -> Tensor:
        return self.concentration / self.rate.pow(2)

    def rsample(self, sample_shape: Any = EMPTY_SHAPE) -> Tensor:
        shape = tuple(self._extended_shape(sample_shape))
        value = standard_gamma(self.concentration.expand(shape)) / self.rate.expand(shape)
        return value.clamp(min=finfo(value.dtype).tiny)

    def log_prob(self, value: Any) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        c, r = self.concentration, self.rate
        return c.xlogy(r) + (c - 1).xlogy(value) - r * value - c.lgamma()

    def entropy(self) -> Tensor:
        c = self.concentration
        return c - self.rate.log() + c.lgamma() + (1.0 - c) * c.digamma()

    def cdf(self, value: Any) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        from .. import special  # noqa: PLC0415 - (the package's special namespace, built after this module)

        return special.gammainc(self.concentration, self.rate * value)

    @property
    def _natural_params(self) -> tuple[Tensor, Tensor]:
        return self.concentration - 1, -self.rate

    def _log_normalizer(self, x: Tensor, y: Tensor) -> Tensor:
        return (x + 1).lgamma() + (x + 1) * (-y.reciprocal()).log()


class Chi2(Gamma):
    """``Chi2(df)``: ``Gamma(df / 2, 1 / 2)``."""

    arg_constraints = {"df": constraints.positive}

    def __init__(self, df: Any, validate_args: bool | None = None) -> None:
        (df,) = broadcast_all(df)
        super().__init__(0.5 * df, 0.5, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Chi2:
        new = self._get_checked_instance(Chi2, _instance)
        return super().expand(batch_shape, new)

    @property
    def df(self) -> Tensor:
        return self.concentration * 2


class InverseGamma(TransformedDistribution):
    """``InverseGamma(concentration, rate)``: ``1 / X`` for ``X ~ Gamma(concentration, rate)``."""

    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, concentration: Any, rate: Any, validate_args: bool | None = None) -> None:
        base = Gamma(concentration, rate, validate_args=validate_args)
        neg_one = -base.rate.new_ones(tuple(base.rate.shape))
        super().__init__(base, PowerTransform(neg_one), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> InverseGamma:
        new = self._get_checked_instance(InverseGamma, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def concentration(self) -> Tensor:
        return self.base_dist.concentration

    @property
    def rate(self) -> Tensor:
        return self.base_dist.rate

    @property
    def mean(self) -> Tensor:
        c = self.concentration
        return where(c > 1, self.rate / (c - 1), float("inf"))

    @property
    def mode(self) -> Tensor:
        return self.rate / (self.concentration + 1)

    @property
    def variance(self) -> Tensor:
        c = self.concentration
        return where(c > 2, self.rate.pow(2) / ((c - 1).pow(2) * (c - 2)), float("inf"))

    def entropy(self) -> Tensor:
        c = self.concentration
        return c + self.rate.log() + c.lgamma() - (1 + c) * c.digamma()
