"""The multivariate normal distribution, as ``torch.distributions.MultivariateNormal``: given by
its covariance, its precision or the lower Cholesky factor of its covariance (``scale_tril``)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import linalg
from ..tensors._tensor import Tensor
from . import constraints
from .distribution import EMPTY_SHAPE, Distribution
from .normal import standard_normal
from .utils import lazy_property


def batch_mahalanobis(scale_tril: Tensor, x: Tensor) -> Tensor:
    """``x^T (L L^T)^-1 x`` over ``x``'s last axis, batches of ``L`` and ``x`` broadcast."""
    n = x.shape[-1]
    batch = tuple(np.broadcast_shapes(tuple(scale_tril.shape[:-2]), tuple(x.shape[:-1])))
    solved = linalg.solve_triangular(scale_tril.expand(*batch, n, n), x.expand(*batch, n).unsqueeze(-1), upper=False)
    return solved.pow(2).sum((-2, -1))


def _half_log_det(scale_tril: Tensor) -> Tensor:
    return scale_tril.diagonal(0, -2, -1).log().sum(-1)


def _precision_to_scale_tril(precision: Tensor) -> Tensor:
    # L with L L^T = P^-1, through the Cholesky factor of P with its axes reversed (as PyTorch's)
    lf = linalg.cholesky(precision.flip((-2, -1)))
    l_inv = lf.flip((-2, -1)).mT
    eye = Tensor(np.eye(precision.shape[-1], dtype=precision.dtype), device=precision.device)
    return linalg.solve_triangular(l_inv, eye.expand(tuple(l_inv.shape)), upper=False)


class MultivariateNormal(Distribution):
    """``MultivariateNormal(loc, covariance_matrix=...)`` (or ``precision_matrix=``, ``scale_tril=``):
    events of ``loc``'s last axis, batches of ``loc`` and the matrix broadcast."""

    arg_constraints = {
        "loc": constraints.real_vector,
        "covariance_matrix": constraints.positive_definite,
        "precision_matrix": constraints.positive_definite,
        "scale_tril": constraints.lower_cholesky,
    }
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc: Tensor, covariance_matrix: Tensor | None = None, precision_matrix: Tensor | None = None,
                 scale_tril: Tensor | None = None, validate_args: bool | None = None) -> None:  # fmt: skip
        if loc.ndim < 1:
            raise ValueError("loc must be at least one-dimensional.")
        given = [m for m in (covariance_matrix, precision_matrix, scale_tril) if m is not None]
        if len(given) != 1:
            raise ValueError("Exactly one of covariance_matrix or precision_matrix or scale_tril may be specified.")
        matrix = given[0]
        if matrix.ndim < 2:
            name = "scale_tril" if scale_tril is not None else "covariance_matrix" if covariance_matrix is not None \
                else "precision_matrix"  # fmt: skip
            raise ValueError(f"{name} matrix must be at least two-dimensional, with optional leading batch dimensions")
        batch = tuple(np.broadcast_shapes(tuple(matrix.shape[:-2]), tuple(loc.shape[:-1])))
        n = loc.shape[-1]
        if scale_tril is not None:
            self.scale_tril = scale_tril.expand(*batch, n, n)
        elif covariance_matrix is not None:
            self.covariance_matrix = covariance_matrix.expand(*batch, n, n)
        else:
            self.precision_matrix = precision_matrix.expand(*batch, n, n)
        self.loc = loc.expand(*batch, n)
        super().__init__(batch, (n,), validate_args=validate_args)
        if scale_tril is not None:
            self._unbroadcasted_scale_tril = scale_tril
        elif covariance_matrix is not None:
            self._unbroadcasted_scale_tril = linalg.cholesky(covariance_matrix)
        else:
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(precision_matrix)

    def expand(self, batch_shape: Any, _instance: Any = None) -> MultivariateNormal:
        new = self._get_checked_instance(MultivariateNormal, _instance)
        shape = tuple(batch_shape) + tuple(self.event_shape)
        cov_shape = shape + tuple(self.event_shape)
        new.loc = self.loc.expand(tuple(shape))
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                setattr(new, name, self.__dict__[name].expand(tuple(cov_shape)))
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @lazy_property
    def scale_tril(self) -> Tensor:
        return self._unbroadcasted_scale_tril.expand((*self._batch_shape, *self._event_shape, *self._event_shape))

    @lazy_property
    def covariance_matrix(self) -> Tensor:
        lower = self._unbroadcasted_scale_tril
        return (lower @ lower.mT).expand((*self._batch_shape, *self._event_shape, *self._event_shape))

    @lazy_property
    def precision_matrix(self) -> Tensor:
        lower = self._unbroadcasted_scale_tril
        return linalg.inv(lower @ lower.mT).expand((*self._batch_shape, *self._event_shape, *self._event_shape))

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def variance(self) -> Tensor:
        return self._unbroadcasted_scale_tril.pow(2).sum(-1).expand((*self._batch_shape, *self._event_shape))

    def rsample(self, sample_shape: Any = EMPTY_SHAPE) -> Tensor:
        eps = standard_normal(tuple(self._extended_shape(sample_shape)), self.loc)
        return self.loc + (self._unbroadcasted_scale_tril @ eps.unsqueeze(-1)).squeeze(-1)

    def log_prob(self, value: Any) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        m = batch_mahalanobis(self._unbroadcasted_scale_tril, value - self.loc)
        n = self._event_shape[0]
        return -0.5 * (n * math.log(2 * math.pi) + m) - _half_log_det(self._unbroadcasted_scale_tril)

    def entropy(self) -> Tensor:
        n = self._event_shape[0]
        h = 0.5 * n * (1.0 + math.log(2 * math.pi)) + _half_log_det(self._unbroadcasted_scale_tril)
        return h.expand(tuple(self._batch_shape)) if self._batch_shape else h


def kl_multivariate_normal(p: MultivariateNormal, q: MultivariateNormal) -> Tensor:
    """``KL(p || q)`` of two multivariate normals of one event size."""
    if p.event_shape != q.event_shape:
        raise ValueError(
            "KL-divergence between two Multivariate Normals with different event shapes cannot be computed"
        )
    n = p.event_shape[0]
    lp, lq = p._unbroadcasted_scale_tril, q._unbroadcasted_scale_tril
    half_term1 = _half_log_det(lq) - _half_log_det(lp)
    batch = tuple(np.broadcast_shapes(tuple(lq.shape[:-2]), tuple(lp.shape[:-2])))
    solved = linalg.solve_triangular(lq.expand(*batch, n, n), lp.expand(*batch, n, n), upper=False)
    term2 = solved.pow(2).sum((-2, -1))
    term3 = batch_mahalanobis(lq, q.loc - p.loc)
    return half_term1 + 0.5 * (term2 + term3 - n)
