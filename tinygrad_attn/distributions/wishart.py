"""The Wishart distribution over positive-definite matrices, as ``torch.distributions.Wishart``:
``rsample`` by Bartlett's decomposition (chi-squared diagonal, normal entries below it: PyTorch's
draws for a seed), differentiable in the scale and, through the chi-squared draws, in ``df``."""

from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np

from .. import linalg
from ..engine.warn import warn as _user_warn
from ..tensors._tensor import Tensor, where
from ..tensors.dtypes import finfo
from ..tensors.factories import creation as _creation
from . import constraints
from .distribution import EMPTY_SHAPE, Distribution, all_true
from .exp_family import ExponentialFamily
from .gamma import Chi2
from .multivariate_normal import _precision_to_scale_tril
from .transforms import _vec_to_tril_matrix
from .utils import lazy_property

_LOG_2 = math.log(2)


def _mvdigamma(x: Tensor, p: int) -> Tensor:
    """The multivariate digamma function: ``sum_i digamma(x - i / 2)`` for ``i < p``."""
    if not all_true(x > (p - 1) / 2):
        raise ValueError("Wrong domain for multivariate digamma function.")
    steps = _creation.arange(p, dtype=x.dtype, device=x.device) / 2
    return (x.unsqueeze(-1) - steps).digamma().sum(-1)


class Wishart(ExponentialFamily):
    """``Wishart(df, covariance_matrix=None, precision_matrix=None, scale_tril=None)``: one of the three."""

    support = constraints.positive_definite
    has_rsample = True
    _mean_carrier_measure = 0

    @property
    def arg_constraints(self) -> dict[str, constraints.Constraint]:  # type: ignore[override]
        return {"covariance_matrix": constraints.positive_definite, "precision_matrix": constraints.positive_definite,
                "scale_tril": constraints.lower_cholesky,
                "df": constraints.greater_than(self.event_shape[-1] - 1)}  # fmt: skip

    def __init__(self, df: Any, covariance_matrix: Tensor | None = None, precision_matrix: Tensor | None = None,
                 scale_tril: Tensor | None = None, validate_args: bool | None = None) -> None:  # fmt: skip
        given = [p for p in (covariance_matrix, precision_matrix, scale_tril) if p is not None]
        if len(given) != 1:
            raise ValueError("Exactly one of covariance_matrix or precision_matrix or scale_tril may be specified.")
        param = given[0]
        if param.dim() < 2:
            raise ValueError("scale_tril must be at least two-dimensional, with optional leading batch dimensions")
        if isinstance(df, numbers.Number):
            batch_shape = tuple(param.shape[:-2])
            self.df = _creation.tensor(df, dtype=param.dtype, device=param.device)
        else:
            batch_shape = tuple(np.broadcast_shapes(tuple(param.shape[:-2]), tuple(df.shape)))
            self.df = df.expand(tuple(batch_shape))
        event_shape = tuple(param.shape[-2:])
        if bool((self.df <= event_shape[-1] - 1).any()):
            raise ValueError(f"Value of df={df} expected to be greater than ndim - 1 = {event_shape[-1] - 1}.")
        if scale_tril is not None:
            self.scale_tril = param.expand(*batch_shape, -1, -1)
        elif covariance_matrix is not None:
            self.covariance_matrix = param.expand(*batch_shape, -1, -1)
        else:
            self.precision_matrix = param.expand(*batch_shape, -1, -1)
        if bool((self.df < event_shape[-1]).any()):
            _user_warn("Low df values detected. Singular samples are highly likely to occur for ndim - 1 < df < ndim.")  # fmt: skip
        super().__init__(batch_shape, event_shape, validate_args=validate_args)
        self._batch_dims = [-(x + 1) for x in range(len(self._batch_shape))]
        if scale_tril is not None:
            self._unbroadcasted_scale_tril = scale_tril
        elif covariance_matrix is not None:
            self._unbroadcasted_scale_tril = linalg.cholesky(covariance_matrix)
        else:
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(precision_matrix)
        self._dist_chi2 = self._chi2(batch_shape)

    def _chi2(self, batch_shape: tuple) -> Chi2:
        p = self._event_shape[-1]
        steps = _creation.arange(
            p, dtype=self._unbroadcasted_scale_tril.dtype, device=self._unbroadcasted_scale_tril.device
        )
        return Chi2(df=self.df.unsqueeze(-1) - steps.expand(*batch_shape, -1))

    def expand(self, batch_shape: Any, _instance: Any = None) -> Wishart:
        new = self._get_checked_instance(Wishart, _instance)
        batch_shape = tuple(batch_shape)
        cov_shape = (*batch_shape, *self.event_shape)
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril.expand(tuple(cov_shape))
        new.df = self.df.expand(tuple(batch_shape))
        new._batch_dims = [-(x + 1) for x in range(len(batch_shape))]
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                setattr(new, name, getattr(self, name).expand(tuple(cov_shape)))
        new._event_shape = self._event_shape
        new._dist_chi2 = new._chi2(batch_shape)
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @lazy_property
    def scale_tril(self) -> Tensor:
        return self._unbroadcasted_scale_tril.expand((*self._batch_shape, *self._event_shape))

    @lazy_property
    def covariance_matrix(self) -> Tensor:
        lower = self._unbroadcasted_scale_tril
        return (lower @ lower.mT).expand((*self._batch_shape, *self._event_shape))

    @lazy_property
    def precision_matrix(self) -> Tensor:
        lower = self._unbroadcasted_scale_tril
        eye = _creation.eye(self._event_shape[-1], dtype=lower.dtype, device=lower.device)
        return eye.cholesky_solve(lower).expand((*self._batch_shape, *self._event_shape))

    @property
    def mean(self) -> Tensor:
        return self.df.reshape(*self._batch_shape, 1, 1) * self.covariance_matrix

    @property
    def mode(self) -> Tensor:
        factor = self.df - self.covariance_matrix.shape[-1] - 1
        factor = where(factor <= 0, float("nan"), factor)
        return factor.reshape(*self._batch_shape, 1, 1) * self.covariance_matrix

    @property
    def variance(self) -> Tensor:
        v = self.covariance_matrix
        d = v.diagonal(0, -2, -1)
        return self.df.reshape(*self._batch_shape, 1, 1) * (v.pow(2) + d.unsqueeze(-1) * d.unsqueeze(-2))

    def _bartlett_sampling(self, sample_shape: tuple) -> Tensor:
        p = self._event_shape[-1]
        chi = self._dist_chi2.rsample(sample_shape).sqrt()
        diag = chi.clamp(min=finfo(chi.dtype).eps).diag_embed()
        below = _creation.randn(*sample_shape, *self._batch_shape, p * (p - 1) // 2, dtype=diag.dtype,
                                device=diag.device)  # fmt: skip
        noise = diag + _vec_to_tril_matrix(below, diag=-1)
        chol = self._unbroadcasted_scale_tril @ noise
        return chol @ chol.mT

    def rsample(self, sample_shape: Any = EMPTY_SHAPE, max_try_correction: int | None = None) -> Tensor:
        """Bartlett draws, then PyTorch's correction rounds, in PyTorch's own steps: its first
        check flags the draws that are positive definite (not the singular ones), so every sample
        index holding one is drawn again, with PyTorch's warning "Singular sample detected."; the
        later rounds redraw the singular ones, up to ``max_try_correction`` times (10). The same
        numbers as PyTorch's for a seed, and, as PyTorch's, a corrected sample's backward raises
        (the flags its index assignment saved are changed in place after it)."""
        max_try_correction = 10 if max_try_correction is None else max_try_correction
        sample = self._bartlett_sampling(tuple(sample_shape))
        batch_dims = tuple(range(-len(self._batch_shape), 0))
        is_singular = self.support.check(sample)
        if self._batch_shape:
            is_singular = is_singular.amax(batch_dims)
        if is_singular.any():
            _user_warn("Singular sample detected.")
            for _ in range(max_try_correction):
                sample_new = self._bartlett_sampling(tuple(is_singular[is_singular].shape))
                sample[is_singular] = sample_new
                is_singular_new = ~self.support.check(sample_new)
                if self._batch_shape:
                    is_singular_new = is_singular_new.amax(batch_dims)
                is_singular[is_singular.clone()] = is_singular_new
                if not is_singular.any():
                    break
        return sample

    def _per_sample(self, check: Tensor) -> np.ndarray:
        """A check over ``sample_shape + batch_shape`` to one flag per sample index (any over the batch), on the host."""
        flags = np.asarray(check._dev.to_host(check._data)).astype(bool)
        flags = flags.reshape(-1, int(np.prod(tuple(self._batch_shape), dtype=np.int64)))
        return flags.any(-1)

    def log_prob(self, value: Any) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        nu, p = self.df, self._event_shape[-1]
        lower = self._unbroadcasted_scale_tril
        half_log_det = lower.diagonal(0, -2, -1).log().sum(-1)
        return (-nu * (p * _LOG_2 / 2 + half_log_det) - (nu / 2).mvlgamma(p)
                + (nu - p - 1) / 2 * linalg.slogdet(value).logabsdet
                - value.cholesky_solve(lower).diagonal(0, -2, -1).sum(-1) / 2)  # fmt: skip

    def entropy(self) -> Tensor:
        nu, p = self.df, self._event_shape[-1]
        half_log_det = self._unbroadcasted_scale_tril.diagonal(0, -2, -1).log().sum(-1)
        return ((p + 1) * (p * _LOG_2 / 2 + half_log_det) + (nu / 2).mvlgamma(p)
                - (nu - p - 1) / 2 * _mvdigamma(nu / 2, p) + nu * p / 2)  # fmt: skip

    @property
    def _natural_params(self) -> tuple[Tensor, Tensor]:
        nu, p = self.df, self._event_shape[-1]
        return -self.precision_matrix / 2, (nu - p - 1) / 2

    def _log_normalizer(self, x: Tensor, y: Tensor) -> Tensor:
        p = self._event_shape[-1]
        return (y + (p + 1) / 2) * (-linalg.slogdet(-2 * x).logabsdet + _LOG_2 * p) + (y + (p + 1) / 2).mvlgamma(p)
