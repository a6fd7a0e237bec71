"""The normal distribution, as ``torch.distributions.Normal``."""

from __future__ import annotations

import math
from typing import Any

from ..engine.switches import no_grad
from ..tensors._tensor import Tensor
from ..tensors.elementwise import math_functions as _math
from ..tensors.factories import creation as _creation
from . import constraints
from .distribution import EMPTY_SHAPE
from .exp_family import ExponentialFamily
from .utils import broadcast_all


def standard_normal(shape: tuple, like: Tensor) -> Tensor:
    """Standard normal draws in ``like``'s dtype and device, drawn as PyTorch's ``normal_`` draws them
    (``randn``'s stream is ``normal_``'s; inside a trace it is an op, drawing afresh at each replay)."""
    return _creation.randn(tuple(shape), dtype=like.dtype, device=like._dev)


class Normal(ExponentialFamily):
    """``Normal(loc, scale)``: mean ``loc``, standard deviation ``scale`` (broadcast together).

    >>> Normal(0.0, 1.0).log_prob(Tensor(0.0))  # -0.9189
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, loc: Any, scale: Any, validate_args: bool | None = None) -> None:
        self.loc, self.scale = broadcast_all(loc, scale)
        super().__init__(self.loc.shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Normal:
        return self._expanded(Normal, batch_shape, ("loc", "scale"), _instance)

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def stddev(self) -> Tensor:
        return self.scale

    @property
    def variance(self) -> Tensor:
        return self.stddev.pow(2)

    def sample(self, sample_shape: Any = EMPTY_SHAPE) -> Tensor:
        shape = tuple(self._extended_shape(sample_shape))
        with no_grad():
            return _math.normal(self.loc.expand(shape), self.scale.expand(shape))

    def rsample(self, sample_shape: Any = EMPTY_SHAPE) -> Tensor:
        eps = standard_normal(tuple(self._extended_shape(sample_shape)), self.loc)
        return self.loc + eps * self.scale

    def log_prob(self, value: Any) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        var = self.scale**2
        log_scale = self.scale.log()
        return -((value - self.loc) ** 2) / (2 * var) - log_scale - math.log(math.sqrt(2 * math.pi))

    def cdf(self, value: Any) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return 0.5 * (1 + ((value - self.loc) * self.scale.reciprocal() / math.sqrt(2)).erf())

    def icdf(self, value: Any) -> Tensor:
        return self.loc + self.scale * (2 * value - 1).erfinv() * math.sqrt(2)

    def entropy(self) -> Tensor:
        return 0.5 + 0.5 * math.log(2 * math.pi) + self.scale.log()

    @property
    def _natural_params(self) -> tuple[Tensor, Tensor]:
        return self.loc / self.scale.pow(2), -0.5 * self.scale.pow(2).reciprocal()

    def _log_normalizer(self, x: Tensor, y: Tensor) -> Tensor:
        return -0.25 * x.pow(2) / y + 0.5 * (-math.pi / y).log()
