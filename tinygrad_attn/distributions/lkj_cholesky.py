"""The LKJ distribution over Cholesky factors of correlation matrices, as
``torch.distributions.LKJCholesky``: density proportional to ``det(L L^T) ** (concentration - 1)``,
drawn by the onion method (Beta draws for each row's squared norm below the diagonal, a
direction on the sphere from normal draws); PyTorch's samples for a seed."""

from __future__ import annotations

import math
from typing import Any

from ..engine.switches import no_grad
from ..tensors._tensor import Tensor, where
from ..tensors.dtypes import finfo
from ..tensors.factories import creation as _creation
from ..tensors.shape.shape_functions import cat
from . import constraints
from .beta import Beta
from .distribution import EMPTY_SHAPE, Distribution
from .utils import broadcast_all


class LKJCholesky(Distribution):
    """``LKJCholesky(dim, concentration=1.0)``: ``dim x dim`` lower Cholesky factors of correlation matrices.

    >>> LKJCholesky(3, 0.5).sample()  # doctest: +SKIP
    """

    arg_constraints = {"concentration": constraints.positive}
    support = constraints.corr_cholesky

    def __init__(self, dim: int, concentration: Any = 1.0, validate_args: bool | None = None) -> None:
        if dim < 2:
            raise ValueError(f"Expected dim to be an integer greater than or equal to 2. Found dim={dim}.")
        self.dim = dim
        (self.concentration,) = broadcast_all(concentration)
        marginal = self.concentration + 0.5 * (dim - 2)
        offset = _creation.arange(dim - 1, dtype=self.concentration.dtype, device=self.concentration.device)
        offset = cat([offset.new_zeros((1,)), offset])
        self._beta = Beta(offset + 0.5, marginal.unsqueeze(-1) - 0.5 * offset)
        super().__init__(tuple(self.concentration.shape), (dim, dim), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> LKJCholesky:
        new = self._get_checked_instance(LKJCholesky, _instance)
        batch_shape = tuple(batch_shape)
        new.dim = self.dim
        new.concentration = self.concentration.expand(batch_shape)
        new._beta = self._beta.expand((*batch_shape, self.dim))
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def sample(self, sample_shape: Any = EMPTY_SHAPE) -> Tensor:
        with no_grad():
            y = self._beta.sample(sample_shape).unsqueeze(-1)
            shape = tuple(self._extended_shape(sample_shape))
            u = _creation.randn(tuple(shape), dtype=y.dtype, device=y.device).tril(-1)
            norm = u.norm(dim=-1, keepdim=True)
            # (the first row has no entries below the diagonal: it stays 0, without a 0 / 0)
            u_sphere = u / where(norm == 0, 1.0, norm)
            w = y.sqrt() * u_sphere
            diag = (1 - w.pow(2).sum(-1)).clamp(min=finfo(w.dtype).tiny).sqrt()
            return w + diag.diag_embed()

    def log_prob(self, value: Any) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        diag = value.diagonal(0, -1, -2)[..., 1:]
        order = _creation.arange(2, self.dim + 1, device=self.concentration.device)
        order = 2 * (self.concentration - 1).unsqueeze(-1) + self.dim - order
        unnormalized = (order * diag.log()).sum(-1)
        dm1 = self.dim - 1
        alpha = self.concentration + 0.5 * dm1
        normalize = 0.5 * dm1 * math.log(math.pi) + (alpha - 0.5).mvlgamma(dm1) - alpha.lgamma() * dm1
        return unnormalized - normalize
