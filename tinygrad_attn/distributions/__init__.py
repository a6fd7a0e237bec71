"""``tga.distributions``: probability distributions with sampling, reparameterised sampling,
log-densities, entropies and KL divergences, as ``torch.distributions``.

>>> d = tga.distributions.Normal(tga.zeros(3), tga.ones(3))  # doctest: +SKIP
>>> d.rsample().sum().backward()  # gradients reach loc and scale  # doctest: +SKIP
"""

from . import constraints
from .bernoulli import Bernoulli
from .categorical import Categorical, OneHotCategorical, OneHotCategoricalStraightThrough
from .distribution import Distribution
from .exponential import Exponential, Laplace
from .independent import Independent
from .kl import kl_divergence, register_kl
from .multivariate_normal import MultivariateNormal
from .normal import Normal
from .uniform import Uniform

# isort: split
import sys as _sys

# the rest of torch.distributions: the gamma, beta, count, relaxed and transformed families
from . import constraint_registry, transforms
from .beta import Beta, Dirichlet
from .constraint_registry import biject_to, transform_to
from .continuous_bernoulli import ContinuousBernoulli
from .counts import Binomial, Geometric, Multinomial, NegativeBinomial, Poisson
from .exp_family import ExponentialFamily
from .gamma import Chi2, Gamma, InverseGamma
from .generalized_pareto import GeneralizedPareto
from .kl_cross import _kl_cb_cb  # noqa: F401 - (importing registers the KL divergences across families)
from .kl_families import _kl_beta_beta  # noqa: F401 - (importing registers the families' KL divergences)
from .lkj_cholesky import LKJCholesky
from .lowrank_multivariate_normal import LowRankMultivariateNormal
from .mixture_same_family import MixtureSameFamily
from .relaxed import ExpRelaxedCategorical, LogitRelaxedBernoulli, RelaxedBernoulli, RelaxedOneHotCategorical
from .student_t import FisherSnedecor, StudentT
from .transformed_distribution import TransformedDistribution
from .transformed_families import (
    Cauchy,
    Gumbel,
    HalfCauchy,
    HalfNormal,
    Kumaraswamy,
    LogisticNormal,
    LogNormal,
    Pareto,
    Weibull,
)
from .transforms import *  # noqa: F403 - (PyTorch exports its transforms from torch.distributions too)
from .von_mises import VonMises
from .wishart import Wishart

# PyTorch's submodule paths (``torch.distributions.log_normal``, ...) where our module has another name
_PYTORCH_MODULES = {
    "binomial": "counts", "cauchy": "transformed_families", "chi2": "gamma", "dirichlet": "beta",
    "fishersnedecor": "student_t", "geometric": "counts", "gumbel": "transformed_families",
    "half_cauchy": "transformed_families", "half_normal": "transformed_families", "inverse_gamma": "gamma",
    "kumaraswamy": "transformed_families", "laplace": "exponential", "log_normal": "transformed_families",
    "logistic_normal": "transformed_families", "multinomial": "counts", "negative_binomial": "counts",
    "one_hot_categorical": "categorical", "pareto": "transformed_families", "poisson": "counts",
    "relaxed_bernoulli": "relaxed", "relaxed_categorical": "relaxed", "studentT": "student_t",
    "weibull": "transformed_families",
}  # fmt: skip
for _name, _ours in _PYTORCH_MODULES.items():
    _sys.modules[f"{__name__}.{_name}"] = _sys.modules[f"{__name__}.{_ours}"]
    globals()[_name] = _sys.modules[f"{__name__}.{_ours}"]


__all__ = [
    "Bernoulli", "Categorical", "Distribution", "Exponential", "Independent", "Laplace", "MultivariateNormal", "Normal", "OneHotCategorical",
    "OneHotCategoricalStraightThrough", "Uniform", "constraints", "kl_divergence", "register_kl",
    "Beta", "Binomial", "Cauchy", "Chi2", "Dirichlet", "ExpRelaxedCategorical", "FisherSnedecor", "Gamma", "Geometric",
    "Gumbel", "HalfCauchy", "HalfNormal", "InverseGamma", "Kumaraswamy", "LogNormal", "LogisticNormal",
    "LogitRelaxedBernoulli", "Multinomial", "NegativeBinomial", "Pareto", "Poisson", "RelaxedBernoulli",
    "RelaxedOneHotCategorical", "StudentT", "TransformedDistribution", "Weibull", "biject_to", "constraint_registry",
    "transform_to", "transforms", "ContinuousBernoulli", "GeneralizedPareto", "VonMises", "LowRankMultivariateNormal",
    "ExponentialFamily", "MixtureSameFamily", "LKJCholesky", "Wishart", *transforms.__all__,
]  # fmt: skip
