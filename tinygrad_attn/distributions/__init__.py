"""``tga.distributions``: probability distributions with sampling, reparameterised sampling,
log-densities, entropies and KL divergences, as ``torch.distributions``.

>>> d = tga.distributions.Normal(tga.zeros(3), tga.ones(3))  # doctest: +SKIP
>>> d.rsample().sum().backward()  # gradients reach loc and scale  # doctest: +SKIP
"""

from . import constraints, transforms
from .bernoulli import Bernoulli
from .categorical import Categorical, OneHotCategorical, OneHotCategoricalStraightThrough
from .distribution import Distribution
from .exponential import Exponential, Laplace
from .independent import Independent
from .kl import kl_divergence, register_kl
from .log_normal import LogNormal
from .mixture_same_family import MixtureSameFamily
from .multivariate_normal import MultivariateNormal
from .normal import Normal
from .transformed_distribution import TransformedDistribution
from .transforms import (
    AffineTransform,
    ComposeTransform,
    ExpTransform,
    PowerTransform,
    SigmoidTransform,
    SoftplusTransform,
    TanhTransform,
    Transform,
)
from .uniform import Uniform

__all__ = [
    "Bernoulli", "Categorical", "Distribution", "Exponential", "Independent", "Laplace", "LogNormal", "MixtureSameFamily", "MultivariateNormal", "Normal", "OneHotCategorical",
    "OneHotCategoricalStraightThrough", "TransformedDistribution", "Uniform", "constraints", "kl_divergence", "register_kl",
    "transforms", "AffineTransform", "ComposeTransform", "ExpTransform", "PowerTransform", "SigmoidTransform",
    "SoftplusTransform", "TanhTransform", "Transform",
]  # fmt: skip
