"""The Kullback-Leibler divergence between two distributions, as ``torch.distributions.kl``:
:func:`register_kl` adds a formula for a pair of classes, :func:`kl_divergence` finds the most
specific one registered for the two distributions' classes."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from ..engine.warn import warn as _user_warn
from ..functional import softplus
from ..tensors._tensor import Tensor, where
from .bernoulli import Bernoulli
from .categorical import Categorical, OneHotCategorical
from .distribution import Distribution
from .exponential import Exponential, Laplace
from .independent import Independent
from .multivariate_normal import MultivariateNormal, kl_multivariate_normal
from .normal import Normal
from .uniform import Uniform
from .utils import sum_rightmost

_KL_REGISTRY: dict[tuple[type, type], Callable[[Any, Any], Tensor]] = {}
_KL_MEMO: dict[tuple[type, type], Callable[[Any, Any], Tensor] | None] = {}


def register_kl(type_p: type, type_q: type) -> Callable:
    """A decorator registering ``fn(p, q)`` as the KL divergence of instances of ``type_p`` and ``type_q``.

    >>> @register_kl(Normal, Normal)  # doctest: +SKIP
    ... def kl_normal_normal(p, q): ...
    """
    if not (isinstance(type_p, type) and issubclass(type_p, Distribution)):
        raise TypeError(f"Expected type_p to be a Distribution subclass but got {type_p}")
    if not (isinstance(type_q, type) and issubclass(type_q, Distribution)):
        raise TypeError(f"Expected type_q to be a Distribution subclass but got {type_q}")

    def decorator(fn: Callable) -> Callable:
        _KL_REGISTRY[type_p, type_q] = fn
        _KL_MEMO.clear()
        return fn

    return decorator


def _dispatch(type_p: type, type_q: type) -> Callable | None:
    """The registered pair nearest the two classes (by their method resolution orders)."""
    matches = [(p, q) for p, q in _KL_REGISTRY if issubclass(type_p, p) and issubclass(type_q, q)]
    if not matches:
        return None
    rank = {m: (type_p.__mro__.index(m[0]), type_q.__mro__.index(m[1])) for m in matches}
    left = min(matches, key=lambda m: rank[m])
    right = min(matches, key=lambda m: rank[m][::-1])
    if _KL_REGISTRY[left] is not _KL_REGISTRY[right]:
        _user_warn(
            f"Ambiguous kl_divergence({type_p.__name__}, {type_q.__name__}). Please register_kl"
            f"({left[0].__name__}, {right[1].__name__})",
            RuntimeWarning,
        )
    return _KL_REGISTRY[left]


def kl_divergence(p: Distribution, q: Distribution) -> Tensor:
    """``KL(p || q)``, batched over the distributions' batch shape.

    >>> kl_divergence(Normal(0.0, 1.0), Normal(1.0, 2.0))  # doctest: +SKIP
    """
    key = (type(p), type(q))
    if key not in _KL_MEMO:
        _KL_MEMO[key] = _dispatch(*key)
    fn = _KL_MEMO[key]
    if fn is None:
        raise NotImplementedError(f"No KL(p || q) is implemented for p type {type(p).__name__} and q type "
                                  f"{type(q).__name__}")  # fmt: skip
    return fn(p, q)


def _infinite_where(mask: Any, value: Tensor) -> Tensor:
    return where(mask, math.inf, value)


@register_kl(Normal, Normal)
def _kl_normal_normal(p: Normal, q: Normal) -> Tensor:
    var_ratio = (p.scale / q.scale).pow(2)
    t1 = ((p.loc - q.loc) / q.scale).pow(2)
    return 0.5 * (var_ratio + t1 - 1 - var_ratio.log())


@register_kl(Bernoulli, Bernoulli)
def _kl_bernoulli_bernoulli(p: Bernoulli, q: Bernoulli) -> Tensor:
    t1 = p.probs * (softplus(-q.logits) - softplus(-p.logits))
    t1 = where(p.probs == 0, 0.0, _infinite_where(q.probs == 0, t1))
    t2 = (1 - p.probs) * (softplus(q.logits) - softplus(p.logits))
    t2 = where(p.probs == 1, 0.0, _infinite_where(q.probs == 1, t2))
    return t1 + t2


@register_kl(Categorical, Categorical)
def _kl_categorical_categorical(p: Categorical, q: Categorical) -> Tensor:
    t = p.probs * (p.logits - q.logits)
    t = where((p.probs == 0).expand_as(t), 0.0, _infinite_where((q.probs == 0).expand_as(t), t))
    return t.sum(-1)


@register_kl(OneHotCategorical, OneHotCategorical)
def _kl_onehotcategorical_onehotcategorical(p: OneHotCategorical, q: OneHotCategorical) -> Tensor:
    return _kl_categorical_categorical(p._categorical, q._categorical)


@register_kl(Uniform, Uniform)
def _kl_uniform_uniform(p: Uniform, q: Uniform) -> Tensor:
    result = ((q.high - q.low) / (p.high - p.low)).log()
    return _infinite_where((q.low > p.low) | (q.high < p.high), result)


@register_kl(Exponential, Exponential)
def _kl_exponential_exponential(p: Exponential, q: Exponential) -> Tensor:
    rate_ratio = q.rate / p.rate
    return -rate_ratio.log() + rate_ratio - 1


@register_kl(Laplace, Laplace)
def _kl_laplace_laplace(p: Laplace, q: Laplace) -> Tensor:
    scale_ratio = p.scale / q.scale
    loc_abs_diff = (p.loc - q.loc).abs()
    t1 = -scale_ratio.log()
    t2 = loc_abs_diff / q.scale
    t3 = scale_ratio * (-loc_abs_diff / p.scale).exp()
    return t1 + t2 + t3 - 1


@register_kl(Independent, Independent)
def _kl_independent_independent(p: Independent, q: Independent) -> Tensor:
    if p.reinterpreted_batch_ndims != q.reinterpreted_batch_ndims:
        raise NotImplementedError
    return sum_rightmost(kl_divergence(p.base_dist, q.base_dist), p.reinterpreted_batch_ndims)


register_kl(MultivariateNormal, MultivariateNormal)(kl_multivariate_normal)
