"""The multivariate normal with a low-rank-plus-diagonal covariance ``W W^T + diag(D)``, as
``torch.distributions.LowRankMultivariateNormal``: log-densities through the capacitance
matrix ``I + W^T D^-1 W`` (Woodbury's identity and the matrix determinant lemma), never the
full covariance."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import linalg
from ..tensors._tensor import Tensor
from ..tensors.factories import creation as _creation
from . import constraints
from .distribution import EMPTY_SHAPE, Distribution
from .multivariate_normal import batch_mahalanobis
from .normal import standard_normal
from .utils import lazy_property


def _plus_identity(k: Tensor) -> Tensor:
    return k + _creation.eye(k.shape[-1], dtype=k.dtype, device=k.device)


def _capacitance_tril(w: Tensor, d: Tensor) -> Tensor:
    """The Cholesky factor of ``I + W^T D^-1 W`` (rank x rank)."""
    return linalg.cholesky(_plus_identity((w.mT / d.unsqueeze(-2)) @ w))


def _lowrank_logdet(w: Tensor, d: Tensor, cap_tril: Tensor) -> Tensor:
    return 2 * cap_tril.diagonal(0, -2, -1).log().sum(-1) + d.log().sum(-1)


def _lowrank_mahalanobis(w: Tensor, d: Tensor, x: Tensor, cap_tril: Tensor) -> Tensor:
    wt_dinv_x = ((w.mT / d.unsqueeze(-2)) @ x.unsqueeze(-1)).squeeze(-1)
    return (x.pow(2) / d).sum(-1) - batch_mahalanobis(cap_tril, wt_dinv_x)


class LowRankMultivariateNormal(Distribution):
    """``LowRankMultivariateNormal(loc, cov_factor, cov_diag)``: covariance ``cov_factor @ cov_factor.mT + diag(cov_diag)``.

    >>> LowRankMultivariateNormal(tga.zeros(2), tga.tensor([[1.0], [0.0]]), tga.ones(2))  # doctest: +SKIP
    """

    arg_constraints = {"loc": constraints.real_vector, "cov_factor": constraints.independent(constraints.real, 2),
                       "cov_diag": constraints.independent(constraints.positive, 1)}  # fmt: skip
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc: Tensor, cov_factor: Tensor, cov_diag: Tensor, validate_args: bool | None = None) -> None:
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        event_shape = tuple(loc.shape[-1:])
        if cov_factor.dim() < 2:
            raise ValueError("cov_factor must be at least two-dimensional, with optional leading batch dimensions")
        if tuple(cov_factor.shape[-2:-1]) != event_shape:
            raise ValueError(f"cov_factor must be a batch of matrices with shape {event_shape[0]} x m")
        if tuple(cov_diag.shape[-1:]) != event_shape:
            raise ValueError(f"cov_diag must be a batch of vectors with shape {event_shape}")
        try:
            shape = np.broadcast_shapes(tuple(loc.shape) + (1,), tuple(cov_factor.shape), tuple(cov_diag.shape) + (1,))
        except ValueError as e:
            raise ValueError(f"Incompatible batch shapes: loc {tuple(loc.shape)}, cov_factor "
                             f"{tuple(cov_factor.shape)}, cov_diag {tuple(cov_diag.shape)}") from e  # fmt: skip
        self.loc = loc.unsqueeze(-1).expand(tuple(shape))[..., 0]
        self.cov_factor = cov_factor.expand(tuple(shape))
        self.cov_diag = cov_diag.unsqueeze(-1).expand(tuple(shape))[..., 0]
        self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag = cov_factor, cov_diag
        self._capacitance_tril = _capacitance_tril(cov_factor, cov_diag)
        super().__init__(tuple(self.loc.shape[:-1]), event_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> LowRankMultivariateNormal:
        new = self._get_checked_instance(LowRankMultivariateNormal, _instance)
        loc_shape = (*tuple(batch_shape), *self.event_shape)
        new.loc, new.cov_diag = self.loc.expand(tuple(loc_shape)), self.cov_diag.expand(tuple(loc_shape))
        new.cov_factor = self.cov_factor.expand(*loc_shape, self.cov_factor.shape[-1])
        new._unbroadcasted_cov_factor = self._unbroadcasted_cov_factor
        new._unbroadcasted_cov_diag = self._unbroadcasted_cov_diag
        new._capacitance_tril = self._capacitance_tril
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def mode(self) -> Tensor:
        return self.loc

    @lazy_property
    def variance(self) -> Tensor:  # type: ignore[override]
        var = self._unbroadcasted_cov_factor.pow(2).sum(-1) + self._unbroadcasted_cov_diag
        return var.expand((*self._batch_shape, *self._event_shape))

    @lazy_property
    def scale_tril(self) -> Tensor:
        sqrt_d = self._unbroadcasted_cov_diag.sqrt().unsqueeze(-1)
        scaled = self._unbroadcasted_cov_factor / sqrt_d
        tril = sqrt_d * linalg.cholesky(_plus_identity(scaled @ scaled.mT))
        return tril.expand((*self._batch_shape, *self._event_shape, *self._event_shape))

    @lazy_property
    def covariance_matrix(self) -> Tensor:
        w = self._unbroadcasted_cov_factor
        cov = w @ w.mT + self._unbroadcasted_cov_diag.diag_embed()
        return cov.expand((*self._batch_shape, *self._event_shape, *self._event_shape))

    @lazy_property
    def precision_matrix(self) -> Tensor:
        wt_dinv = self._unbroadcasted_cov_factor.mT / self._unbroadcasted_cov_diag.unsqueeze(-2)
        a = linalg.solve_triangular(self._capacitance_tril, wt_dinv, upper=False)
        precision = self._unbroadcasted_cov_diag.reciprocal().diag_embed() - a.mT @ a
        return precision.expand((*self._batch_shape, *self._event_shape, *self._event_shape))

    def rsample(self, sample_shape: Any = EMPTY_SHAPE) -> Tensor:
        shape = tuple(self._extended_shape(sample_shape))
        eps_w = standard_normal((*shape[:-1], self.cov_factor.shape[-1]), self.loc)
        eps_d = standard_normal(shape, self.loc)
        return (self.loc + (self._unbroadcasted_cov_factor @ eps_w.unsqueeze(-1)).squeeze(-1)
                + self._unbroadcasted_cov_diag.sqrt() * eps_d)  # fmt: skip

    def log_prob(self, value: Any) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        w, d, cap = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag, self._capacitance_tril
        m = _lowrank_mahalanobis(w, d, value - self.loc, cap)
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + _lowrank_logdet(w, d, cap) + m)

    def entropy(self) -> Tensor:
        log_det = _lowrank_logdet(self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag, self._capacitance_tril)
        h = 0.5 * (self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + log_det)
        return h if len(self._batch_shape) == 0 else h.expand(tuple(self._batch_shape))


def _trace_xxt(x: Tensor) -> Tensor:
    """``trace(X X^T)`` over the last two axes, summed over the batch axes ``x`` has beyond them."""
    return x.pow(2).sum((-2, -1))


def _same_events(p: Distribution, q: Distribution) -> None:
    if p.event_shape != q.event_shape:
        raise ValueError(
            "KL-divergence between two (Low Rank) Multivariate Normals with different event shapes cannot be computed"
        )


def _woodbury_factor(q: LowRankMultivariateNormal) -> Tensor:
    wt_dinv = q._unbroadcasted_cov_factor.mT / q._unbroadcasted_cov_diag.unsqueeze(-2)
    return linalg.solve_triangular(q._capacitance_tril, wt_dinv, upper=False)


def kl_lowrank_lowrank(p: LowRankMultivariateNormal, q: LowRankMultivariateNormal) -> Tensor:
    _same_events(p, q)
    qw, qd, qc = q._unbroadcasted_cov_factor, q._unbroadcasted_cov_diag, q._capacitance_tril
    pw, pd = p._unbroadcasted_cov_factor, p._unbroadcasted_cov_diag
    term1 = _lowrank_logdet(qw, qd, qc) - _lowrank_logdet(pw, pd, p._capacitance_tril)
    term3 = _lowrank_mahalanobis(qw, qd, q.loc - p.loc, qc)
    a = _woodbury_factor(q)
    term2 = ((pd / qd).sum(-1) + _trace_xxt(pw * qd.rsqrt().unsqueeze(-1)) - _trace_xxt(a * pd.sqrt().unsqueeze(-2))
             - _trace_xxt(a @ pw))  # fmt: skip
    return 0.5 * (term1 + term2 + term3 - p.event_shape[0])


def kl_mvn_lowrank(p: Any, q: LowRankMultivariateNormal) -> Tensor:
    _same_events(p, q)
    qw, qd, qc = q._unbroadcasted_cov_factor, q._unbroadcasted_cov_diag, q._capacitance_tril
    lp = p._unbroadcasted_scale_tril
    term1 = _lowrank_logdet(qw, qd, qc) - 2 * lp.diagonal(0, -2, -1).log().sum(-1)
    term3 = _lowrank_mahalanobis(qw, qd, q.loc - p.loc, qc)
    a = _woodbury_factor(q)
    term2 = _trace_xxt(lp * qd.rsqrt().unsqueeze(-1)) - _trace_xxt(a @ lp)
    return 0.5 * (term1 + term2 + term3 - p.event_shape[0])


def kl_lowrank_mvn(p: LowRankMultivariateNormal, q: Any) -> Tensor:
    _same_events(p, q)
    lq = q._unbroadcasted_scale_tril
    pw, pd = p._unbroadcasted_cov_factor, p._unbroadcasted_cov_diag
    term1 = 2 * lq.diagonal(0, -2, -1).log().sum(-1) - _lowrank_logdet(pw, pd, p._capacitance_tril)
    term3 = batch_mahalanobis(lq, q.loc - p.loc)
    n = p.event_shape[0]
    batch = tuple(np.broadcast_shapes(tuple(lq.shape[:-2]), tuple(pw.shape[:-2]), tuple(pd.shape[:-1])))
    lq_b = lq.expand(*batch, n, n)
    term21 = _trace_xxt(linalg.solve_triangular(lq_b, pw.expand(*batch, n, pw.shape[-1]), upper=False))
    term22 = _trace_xxt(linalg.solve_triangular(lq_b, pd.sqrt().diag_embed().expand(*batch, n, n), upper=False))
    return 0.5 * (term1 + term21 + term22 + term3 - n)
