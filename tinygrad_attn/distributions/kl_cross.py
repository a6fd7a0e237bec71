"""The KL divergences PyTorch registers between different families (importing this module
registers them): closed forms where ``q``'s support holds ``p``'s, infinity where it does not."""

from __future__ import annotations

import math
from typing import Any

from ..tensors._tensor import Tensor, where
from .bernoulli import Bernoulli
from .beta import Beta
from .continuous_bernoulli import ContinuousBernoulli
from .counts import Binomial, Poisson
from .exponential import Exponential, Laplace
from .gamma import Gamma
from .kl import register_kl
from .normal import Normal
from .transformed_families import Gumbel, Pareto
from .uniform import Uniform

_EULER_GAMMA = 0.57721566490153286060
_INF = math.inf


def _infinite_like(t: Tensor) -> Tensor:
    return t.new_full(tuple(t.shape), _INF)


def _x_log_x(t: Tensor) -> Tensor:
    return t * t.log()


def _register_infinite(pairs: list[tuple[type, type]], param: str) -> None:
    """``q``'s support does not hold ``p``'s: the divergence is infinite (shaped as ``p``'s ``param``)."""
    for p_cls, q_cls in pairs:
        register_kl(p_cls, q_cls)(lambda p, q: _infinite_like(getattr(p, param)))


_register_infinite([(Beta, Pareto)], "concentration1")
_register_infinite([(ContinuousBernoulli, Pareto)], "probs")
_register_infinite([(Exponential, Beta), (Exponential, ContinuousBernoulli), (Exponential, Pareto),
                    (Exponential, Uniform)], "rate")  # fmt: skip
_register_infinite([(Gamma, Beta), (Gamma, ContinuousBernoulli), (Gamma, Pareto), (Gamma, Uniform)], "concentration")
_register_infinite([(Gumbel, Beta), (Gumbel, ContinuousBernoulli), (Gumbel, Exponential), (Gumbel, Gamma),
                    (Gumbel, Pareto), (Gumbel, Uniform)], "loc")  # fmt: skip
_register_infinite([(Laplace, Beta), (Laplace, ContinuousBernoulli), (Laplace, Exponential), (Laplace, Gamma),
                    (Laplace, Pareto), (Laplace, Uniform)], "loc")  # fmt: skip
_register_infinite([(Normal, Beta), (Normal, ContinuousBernoulli), (Normal, Exponential), (Normal, Gamma),
                    (Normal, Pareto), (Normal, Uniform)], "loc")  # fmt: skip
_register_infinite([(Pareto, Beta), (Pareto, ContinuousBernoulli), (Pareto, Uniform)], "scale")
_register_infinite([(Poisson, Bernoulli), (Poisson, Binomial)], "rate")


@register_kl(ContinuousBernoulli, ContinuousBernoulli)
def _kl_cb_cb(p: ContinuousBernoulli, q: ContinuousBernoulli) -> Tensor:
    t1 = p.mean * (p.logits - q.logits)
    t2 = p._cont_bern_log_norm() + (-p.probs).log1p()
    t3 = -q._cont_bern_log_norm() - (-q.probs).log1p()
    return t1 + t2 + t3


@register_kl(Bernoulli, Poisson)
def _kl_bernoulli_poisson(p: Bernoulli, q: Poisson) -> Tensor:
    return -p.entropy() - (p.probs * q.rate.log() - q.rate)


@register_kl(Beta, ContinuousBernoulli)
def _kl_beta_cb(p: Beta, q: ContinuousBernoulli) -> Tensor:
    return -p.entropy() - p.mean * q.logits - (-q.probs).log1p() - q._cont_bern_log_norm()


@register_kl(Beta, Exponential)
def _kl_beta_exponential(p: Beta, q: Exponential) -> Tensor:
    return -p.entropy() - q.rate.log() + q.rate * (p.concentration1 / (p.concentration1 + p.concentration0))


@register_kl(Beta, Gamma)
def _kl_beta_gamma(p: Beta, q: Gamma) -> Tensor:
    total = p.concentration1 + p.concentration0
    t2 = q.concentration.lgamma() - q.concentration * q.rate.log()
    t3 = (q.concentration - 1) * (p.concentration1.digamma() - total.digamma())
    return -p.entropy() + t2 - t3 + q.rate * p.concentration1 / total


@register_kl(Beta, Normal)
def _kl_beta_normal(p: Beta, q: Normal) -> Tensor:
    total = p.concentration1 + p.concentration0
    mean = p.concentration1 / total
    var_normal = q.scale.pow(2)
    t2 = 0.5 * (var_normal * 2 * math.pi).log()
    t3 = (mean * (1 - mean) / (total + 1) + mean.pow(2)) * 0.5
    return -p.entropy() + t2 + (t3 - q.loc * mean + q.loc.pow(2) * 0.5) / var_normal


@register_kl(Beta, Uniform)
def _kl_beta_uniform(p: Beta, q: Uniform) -> Tensor:
    result = -p.entropy() + (q.high - q.low).log()
    return where((q.low > 0) | (q.high < 1), _INF, result)


@register_kl(ContinuousBernoulli, Exponential)
def _kl_cb_exponential(p: ContinuousBernoulli, q: Exponential) -> Tensor:
    return -p.entropy() - q.rate.log() + q.rate * p.mean


@register_kl(ContinuousBernoulli, Normal)
def _kl_cb_normal(p: ContinuousBernoulli, q: Normal) -> Tensor:
    t2 = 0.5 * (math.log(2.0 * math.pi) + (q.loc / q.scale).pow(2)) + q.scale.log()
    t3 = (p.variance + p.mean.pow(2) - 2.0 * q.loc * p.mean) / (2.0 * q.scale.pow(2))
    return -p.entropy() + t2 + t3


@register_kl(ContinuousBernoulli, Uniform)
def _kl_cb_uniform(p: ContinuousBernoulli, q: Uniform) -> Tensor:
    result = -p.entropy() + (q.high - q.low).log()
    return where((q.low >= 0) | (q.high <= 1), _INF, result)


@register_kl(Exponential, Gumbel)
def _kl_exponential_gumbel(p: Exponential, q: Gumbel) -> Tensor:
    prod = p.rate * q.scale
    ratio = q.loc / q.scale
    return prod.log() - 1 - ratio + ratio.exp() * prod / (prod + 1) + prod.reciprocal()


@register_kl(Exponential, Normal)
def _kl_exponential_normal(p: Exponential, q: Normal) -> Tensor:
    var_normal = q.scale.pow(2)
    rate_sqr = p.rate.pow(2)
    t1 = 0.5 * (rate_sqr * var_normal * 2 * math.pi).log()
    return t1 - 1 + (rate_sqr.reciprocal() - q.loc / p.rate + q.loc.pow(2) * 0.5) / var_normal


@register_kl(Gamma, Gumbel)
def _kl_gamma_gumbel(p: Gamma, q: Gumbel) -> Tensor:
    prod = p.rate * q.scale
    ratio = q.loc / q.scale
    c = p.concentration
    t1 = (c - 1) * c.digamma() - c.lgamma() - c
    t2 = prod.log() + c / prod
    t3 = ratio.exp() * (1 + prod.reciprocal()).pow(-c) - ratio
    return t1 + t2 + t3


@register_kl(Gamma, Normal)
def _kl_gamma_normal(p: Gamma, q: Normal) -> Tensor:
    var_normal = q.scale.pow(2)
    beta_sqr = p.rate.pow(2)
    c = p.concentration
    t1 = 0.5 * (beta_sqr * var_normal * 2 * math.pi).log() - c - c.lgamma()
    t2 = 0.5 * (c.pow(2) + c) / beta_sqr
    t3 = q.loc * c / p.rate
    return t1 + (c - 1) * c.digamma() + (t2 - t3 + 0.5 * q.loc.pow(2)) / var_normal


@register_kl(Gumbel, Normal)
def _kl_gumbel_normal(p: Gumbel, q: Normal) -> Tensor:
    ratio = p.scale / q.scale
    t1 = (ratio / math.sqrt(2 * math.pi)).log()
    t2 = (math.pi * ratio * 0.5).pow(2) / 3
    t3 = ((p.loc + p.scale * _EULER_GAMMA - q.loc) / q.scale).pow(2) * 0.5
    return -t1 + t2 + t3 - (_EULER_GAMMA + 1)


@register_kl(Laplace, Normal)
def _kl_laplace_normal(p: Laplace, q: Normal) -> Tensor:
    var_normal = q.scale.pow(2)
    ratio = p.scale.pow(2) / var_normal
    t1 = 0.5 * (2 * ratio / math.pi).log()
    return -t1 + ratio + (0.5 * p.loc.pow(2) - p.loc * q.loc + 0.5 * q.loc.pow(2)) / var_normal - 1


@register_kl(Normal, Laplace)
def _kl_normal_laplace(p: Normal, q: Laplace) -> Tensor:
    diff = p.loc - q.loc
    diff_ratio = diff / p.scale
    t1 = (p.scale / q.scale).log()
    t2 = math.sqrt(2 / math.pi) * p.scale * (-0.5 * diff_ratio.pow(2)).exp()
    t3 = diff * (math.sqrt(0.5) * diff_ratio).erf()
    return -t1 + (t2 + t3) / q.scale - (0.5 * (1 + math.log(0.5 * math.pi)))


def _alpha_above(p: Pareto, bound: float) -> tuple[Any, Tensor]:
    """``p.alpha`` where above ``bound``, a harmless stand-in elsewhere (those entries are infinite)."""
    bad = p.alpha <= bound
    return bad, where(bad, bound + 1.0, p.alpha)


@register_kl(Pareto, Exponential)
def _kl_pareto_exponential(p: Pareto, q: Exponential) -> Tensor:
    bad, alpha = _alpha_above(p, 1)
    prod = p.scale * q.rate
    result = (alpha / prod).log() - alpha.reciprocal() + alpha * prod / (alpha - 1) - 1
    return where(bad, _INF, result)


@register_kl(Pareto, Gamma)
def _kl_pareto_gamma(p: Pareto, q: Gamma) -> Tensor:
    bad, alpha = _alpha_above(p, 1)
    common = p.scale.log() + alpha.reciprocal()
    t1 = alpha.log() - common
    t2 = q.concentration.lgamma() - q.concentration * q.rate.log()
    t3 = (1 - q.concentration) * common
    t4 = q.rate * alpha * p.scale / (alpha - 1)
    return where(bad, _INF, t1 + t2 + t3 + t4 - 1)


@register_kl(Pareto, Normal)
def _kl_pareto_normal(p: Pareto, q: Normal) -> Tensor:
    bad, alpha = _alpha_above(p, 2)
    var_normal = 2 * q.scale.pow(2)
    common = p.scale / (alpha - 1)
    t1 = (math.sqrt(2 * math.pi) * q.scale * alpha / p.scale).log()
    t3 = alpha * common.pow(2) / (alpha - 2)
    t4 = (alpha * common - q.loc).pow(2)
    return where(bad, _INF, t1 - alpha.reciprocal() + (t3 + t4) / var_normal - 1)


@register_kl(Uniform, ContinuousBernoulli)
def _kl_uniform_cb(p: Uniform, q: ContinuousBernoulli) -> Tensor:
    result = -p.entropy() - p.mean * q.logits - (-q.probs).log1p() - q._cont_bern_log_norm()
    return where((p.high >= 1) | (p.low <= 0), _INF, result)


@register_kl(Uniform, Exponential)
def _kl_uniform_exponential(p: Uniform, q: Exponential) -> Tensor:
    result = q.rate * (p.high + p.low) / 2 - ((p.high - p.low) * q.rate).log()
    return where(p.low < 0, _INF, result)


@register_kl(Uniform, Gamma)
def _kl_uniform_gamma(p: Uniform, q: Gamma) -> Tensor:
    width = p.high - p.low
    t2 = q.concentration.lgamma() - q.concentration * q.rate.log()
    t3 = (1 - q.concentration) * (_x_log_x(p.high) - _x_log_x(p.low) - width) / width
    t4 = q.rate * (p.high + p.low) / 2
    return where(p.low < 0, _INF, -width.log() + t2 + t3 + t4)


@register_kl(Uniform, Gumbel)
def _kl_uniform_gumbel(p: Uniform, q: Gumbel) -> Tensor:
    common = q.scale / (p.high - p.low)
    high_diff = (p.high - q.loc) / q.scale
    low_diff = (p.low - q.loc) / q.scale
    t1 = common.log() + 0.5 * (high_diff + low_diff)
    return t1 - common * ((-high_diff).exp() - (-low_diff).exp())


@register_kl(Uniform, Normal)
def _kl_uniform_normal(p: Uniform, q: Normal) -> Tensor:
    width = p.high - p.low
    t1 = (math.sqrt(math.pi * 2) * q.scale / width).log()
    t3 = ((p.high + p.low - 2 * q.loc) / 2).pow(2)
    return t1 + 0.5 * (width.pow(2) / 12 + t3) / q.scale.pow(2)


@register_kl(Uniform, Pareto)
def _kl_uniform_pareto(p: Uniform, q: Pareto) -> Tensor:
    width = p.high - p.low
    t1 = (q.alpha * q.scale.pow(q.alpha) * width).log()
    t2 = (_x_log_x(p.high) - _x_log_x(p.low) - width) / width
    return where(p.low < q.scale, _INF, t2 * (q.alpha + 1) - t1)
