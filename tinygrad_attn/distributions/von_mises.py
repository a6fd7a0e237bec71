"""The von Mises distribution on the circle, as ``torch.distributions.VonMises``: its
normaliser ``log I0(kappa)`` is PyTorch's (the Abramowitz-Stegun polynomial approximations of
the modified Bessel functions), and its samples PyTorch's for a seed (Best and Fisher's
rejection sampler on float64 uniforms)."""

from __future__ import annotations

import math
from typing import Any

from ..engine.switches import no_grad
from ..tensors._tensor import Tensor, where
from ..tensors.factories import creation as _creation
from . import constraints
from .distribution import EMPTY_SHAPE, Distribution
from .utils import broadcast_all, lazy_property

# Abramowitz and Stegun 9.8.1-9.8.4: I0 and I1 below 3.75 (in (x / 3.75)**2), and above it
# (sqrt(x) exp(-x) I(x) in 3.75 / x); lowest power first
_BESSEL_SMALL = (
    (1.0, 3.5156229, 3.0899424, 1.2067492, 0.2659732, 0.360768e-1, 0.45813e-2),
    (0.5, 0.87890594, 0.51498869, 0.15084934, 0.2658733e-1, 0.301532e-2, 0.32411e-3),
)
_BESSEL_LARGE = (
    (0.39894228, 0.1328592e-1, 0.225319e-2, -0.157565e-2, 0.916281e-2, -0.2057706e-1, 0.2635537e-1, -0.1647633e-1,
     0.392377e-2),
    (0.39894228, -0.3988024e-1, -0.362018e-2, 0.163801e-2, -0.1031555e-1, 0.2282967e-1, -0.2895312e-1, 0.1787654e-1,
     -0.420059e-2),
)  # fmt: skip


def _horner(y: Tensor, coefficients: tuple[float, ...]) -> Tensor:
    result: Any = coefficients[-1]
    for c in reversed(coefficients[:-1]):
        result = c + y * result
    return result


def log_modified_bessel(x: Tensor, order: int = 0) -> Tensor:
    """``log(I_order(x))`` for ``x > 0`` and order 0 or 1 (the polynomial approximations)."""
    if order not in (0, 1):
        raise ValueError(f"log_modified_bessel: order must be 0 or 1, got {order}")
    small = _horner((x / 3.75).pow(2), _BESSEL_SMALL[order])
    if order == 1:
        small = x.abs() * small
    big = where(x < 3.75, 3.75, x)  # (the large-argument series only where it applies: no log of a negative)
    large = big - 0.5 * big.log() + _horner(3.75 / big, _BESSEL_LARGE[order]).log()
    return where(x < 3.75, small.log(), large)


class VonMises(Distribution):
    """``VonMises(loc, concentration)``: density ``exp(kappa cos(x - loc)) / (2 pi I0(kappa))``;
    ``mean`` and ``variance`` are the circular ones."""

    arg_constraints = {"loc": constraints.real, "concentration": constraints.positive}
    support = constraints.real
    has_rsample = False

    def __init__(self, loc: Any, concentration: Any, validate_args: bool | None = None) -> None:
        self.loc, self.concentration = broadcast_all(loc, concentration)
        super().__init__(self.loc.shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> VonMises:
        return self._expanded(VonMises, batch_shape, ("loc", "concentration"), _instance)

    def log_prob(self, value: Any) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        lp = self.concentration * (value - self.loc).cos()
        return lp - math.log(2 * math.pi) - log_modified_bessel(self.concentration, 0)

    @lazy_property
    def _proposal_r(self) -> Tensor:
        kappa = self.concentration.double()
        tau = 1 + (1 + 4 * kappa.pow(2)).sqrt()
        rho = (tau - (2 * tau).sqrt()) / (2 * kappa)
        return where(kappa < 1e-5, 1 / kappa + kappa, (1 + rho.pow(2)) / (2 * rho))

    def sample(self, sample_shape: Any = EMPTY_SHAPE) -> Tensor:
        """Best and Fisher's rejection sampler, in float64 whatever the dtype (small
        concentrations would hang in float32): three uniforms per element and round, until
        every element has accepted."""
        shape = tuple(self._extended_shape(sample_shape))
        with no_grad():
            loc, kappa, r = self.loc.double(), self.concentration.double(), self._proposal_r
            x = _creation.zeros(tuple(shape), dtype=loc.dtype, device=loc.device)
            done = _creation.zeros(tuple(shape), dtype=bool, device=loc.device)
            while not bool(done.all()):
                u1, u2, u3 = _creation.rand(3, *shape, dtype=loc.dtype, device=loc.device).unbind()
                z = (math.pi * u1).cos()
                f = (1 + r * z) / (r + z)
                c = kappa * (r - f)
                accept = ((c * (2 - c) - u2) > 0) | ((c / u2).log() + 1 - c >= 0)
                if bool(accept.any()):
                    x = where(accept, (u3 - 0.5).sign() * f.clamp(-1, 1).acos(), x)
                    done = done | accept
            return ((x + math.pi + loc) % (2 * math.pi) - math.pi).to(self.loc.dtype)

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def mode(self) -> Tensor:
        return self.loc

    @lazy_property
    def variance(self) -> Tensor:  # type: ignore[override]
        k = self.concentration
        return 1 - (log_modified_bessel(k, 1) - log_modified_bessel(k, 0)).exp()
