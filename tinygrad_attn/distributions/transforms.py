"""Invertible maps between regions of values, as ``torch.distributions.transforms``: a
``TransformedDistribution`` draws from its base distribution and maps the draws through them, and
corrects the base's log-density by each map's log-Jacobian (flows, squashed Gaussian policies).

>>> t = AffineTransform(loc=1.0, scale=2.0)  # doctest: +SKIP
>>> t(tga.tensor(0.5)), t.inv(tga.tensor(2.0))  # 2.0 and 0.5
"""

from __future__ import annotations

import math
from typing import Any

from ..functional import softplus
from ..tensors._tensor import Tensor
from ..tensors.dtypes import finfo
from ..tensors.factories import creation as _creation
from . import constraints
from .utils import broadcast_all, sum_rightmost


class Transform:
    """A map ``y = t(x)`` from ``domain`` to ``codomain``; ``inv`` is its inverse,
    ``log_abs_det_jacobian(x, y)`` the log of ``|dy/dx|`` (summed over the event axes)."""

    domain: constraints.Constraint = constraints.real
    codomain: constraints.Constraint = constraints.real
    bijective = False

    def __init__(self, cache_size: int = 0) -> None:
        if cache_size not in (0, 1):
            raise ValueError(f"cache_size must be 0 or 1, got {cache_size}")
        self._cache_size = cache_size
        self._inv: Transform | None = None

    @property
    def event_dim(self) -> int:
        if self.domain.event_dim == self.codomain.event_dim:
            return self.domain.event_dim
        raise ValueError("Please use either .domain.event_dim or .codomain.event_dim")

    @property
    def inv(self) -> Transform:
        if self._inv is None:
            self._inv = _InverseTransform(self)
        return self._inv

    @property
    def sign(self) -> int:
        """``+1`` where the map increases, ``-1`` where it decreases."""
        raise NotImplementedError

    def with_cache(self, cache_size: int = 1) -> Transform:
        return self

    def __eq__(self, other: object) -> bool:
        return self is other

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)

    __hash__ = object.__hash__

    def __call__(self, x: Any) -> Tensor:
        return self._call(x)

    def _call(self, x: Tensor) -> Tensor:
        raise NotImplementedError

    def _inverse(self, y: Tensor) -> Tensor:
        raise NotImplementedError

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        raise NotImplementedError

    def forward_shape(self, shape: Any) -> Any:
        return shape

    def inverse_shape(self, shape: Any) -> Any:
        return shape

    def __repr__(self) -> str:
        return self.__class__.__name__ + "()"


class _InverseTransform(Transform):
    """The inverse of a transform: ``t.inv``."""

    def __init__(self, transform: Transform) -> None:
        super().__init__()
        self._inv = transform

    @property
    def domain(self) -> constraints.Constraint:  # type: ignore[override]
        return self._inv.codomain

    @property
    def codomain(self) -> constraints.Constraint:  # type: ignore[override]
        return self._inv.domain

    @property
    def bijective(self) -> bool:  # type: ignore[override]
        return self._inv.bijective

    @property
    def sign(self) -> int:
        return self._inv.sign

    @property
    def inv(self) -> Transform:
        return self._inv

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _InverseTransform) and self._inv == other._inv

    __hash__ = object.__hash__

    def __call__(self, x: Any) -> Tensor:
        return self._inv._inverse(x)

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        return -self._inv.log_abs_det_jacobian(y, x)

    def __repr__(self) -> str:
        return f"_InverseTransform({self._inv!r})"


class ComposeTransform(Transform):
    """``parts`` applied one after the other (the first first)."""

    def __init__(self, parts: list[Transform], cache_size: int = 0) -> None:
        super().__init__(cache_size)
        self.parts = list(parts)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ComposeTransform) and self.parts == other.parts

    __hash__ = object.__hash__

    @property
    def domain(self) -> constraints.Constraint:  # type: ignore[override]
        if not self.parts:
            return constraints.real
        domain = self.parts[0].domain
        # the event axes the later parts need before the first part sees them
        event_dim = self.parts[-1].codomain.event_dim
        for part in reversed(self.parts):
            event_dim += part.domain.event_dim - part.codomain.event_dim
            event_dim = max(event_dim, part.domain.event_dim)
        if event_dim > domain.event_dim:
            domain = constraints.independent(domain, event_dim - domain.event_dim)
        return domain

    @property
    def codomain(self) -> constraints.Constraint:  # type: ignore[override]
        if not self.parts:
            return constraints.real
        codomain = self.parts[-1].codomain
        event_dim = self.parts[0].domain.event_dim
        for part in self.parts:
            event_dim += part.codomain.event_dim - part.domain.event_dim
            event_dim = max(event_dim, part.codomain.event_dim)
        if event_dim > codomain.event_dim:
            codomain = constraints.independent(codomain, event_dim - codomain.event_dim)
        return codomain

    @property
    def bijective(self) -> bool:  # type: ignore[override]
        return all(p.bijective for p in self.parts)

    @property
    def sign(self) -> int:
        sign = 1
        for p in self.parts:
            sign = sign * p.sign
        return sign

    @property
    def inv(self) -> Transform:
        if self._inv is None:
            self._inv = ComposeTransform([p.inv for p in reversed(self.parts)])
            self._inv._inv = self
        return self._inv

    def __call__(self, x: Any) -> Tensor:
        for part in self.parts:
            x = part(x)
        return x

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        if not self.parts:
            return _creation.zeros_like(x)
        terms = []
        event_dim = self.domain.event_dim
        for part in self.parts[:-1]:
            x_next = part(x)
            terms.append(sum_rightmost(part.log_abs_det_jacobian(x, x_next), event_dim - part.domain.event_dim))
            event_dim += part.codomain.event_dim - part.domain.event_dim
            x = x_next
        last = self.parts[-1]
        terms.append(sum_rightmost(last.log_abs_det_jacobian(x, y), event_dim - last.domain.event_dim))
        total = terms[0]
        for term in terms[1:]:
            total = total + term
        return total

    def forward_shape(self, shape: Any) -> Any:
        for part in self.parts:
            shape = part.forward_shape(shape)
        return shape

    def inverse_shape(self, shape: Any) -> Any:
        for part in reversed(self.parts):
            shape = part.inverse_shape(shape)
        return shape

    def __repr__(self) -> str:
        return self.__class__.__name__ + "(\n    " + ",\n    ".join(repr(p) for p in self.parts) + "\n)"


class ExpTransform(Transform):
    """``y = exp(x)``."""

    domain = constraints.real
    codomain = constraints.positive
    bijective = True
    sign = 1  # type: ignore[assignment]

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ExpTransform)

    __hash__ = object.__hash__

    def _call(self, x: Tensor) -> Tensor:
        return x.exp()

    def _inverse(self, y: Tensor) -> Tensor:
        return y.log()

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        return x


class PowerTransform(Transform):
    """``y = x ** exponent`` on positive values."""

    domain = constraints.positive
    codomain = constraints.positive
    bijective = True

    def __init__(self, exponent: Any, cache_size: int = 0) -> None:
        super().__init__(cache_size)
        (self.exponent,) = broadcast_all(exponent)

    @property
    def sign(self) -> Any:
        return self.exponent.sign()

    def __eq__(self, other: object) -> bool:
        return isinstance(other, PowerTransform) and bool(self.exponent.eq(other.exponent).all())

    __hash__ = object.__hash__

    def _call(self, x: Tensor) -> Tensor:
        return x.pow(self.exponent)

    def _inverse(self, y: Tensor) -> Tensor:
        return y.pow(1 / self.exponent)

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        return (self.exponent * y / x).abs().log()


class SigmoidTransform(Transform):
    """``y = sigmoid(x)``, kept strictly inside (0, 1)."""

    domain = constraints.real
    codomain = constraints.unit_interval
    bijective = True
    sign = 1  # type: ignore[assignment]

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SigmoidTransform)

    __hash__ = object.__hash__

    def _call(self, x: Tensor) -> Tensor:
        info = finfo(x.dtype)
        return x.sigmoid().clamp(min=info.tiny, max=1.0 - info.eps)

    def _inverse(self, y: Tensor) -> Tensor:
        info = finfo(y.dtype)
        y = y.clamp(min=info.tiny, max=1.0 - info.eps)
        return y.log() - (-y).log1p()

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        return -softplus(-x) - softplus(x)


class TanhTransform(Transform):
    """``y = tanh(x)`` (the squashing of a Gaussian policy's actions)."""

    domain = constraints.real
    codomain = constraints.interval(-1.0, 1.0)
    bijective = True
    sign = 1  # type: ignore[assignment]

    def __eq__(self, other: object) -> bool:
        return isinstance(other, TanhTransform)

    __hash__ = object.__hash__

    def _call(self, x: Tensor) -> Tensor:
        return x.tanh()

    def _inverse(self, y: Tensor) -> Tensor:
        return y.atanh()

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        # log(1 - tanh(x)^2) written without the cancellation of 1 - y^2 near |y| = 1
        return 2.0 * (math.log(2.0) - x - softplus(-2.0 * x))


class SoftplusTransform(Transform):
    """``y = log(1 + exp(x))``."""

    domain = constraints.real
    codomain = constraints.positive
    bijective = True
    sign = 1  # type: ignore[assignment]

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SoftplusTransform)

    __hash__ = object.__hash__

    def _call(self, x: Tensor) -> Tensor:
        return softplus(x)

    def _inverse(self, y: Tensor) -> Tensor:
        return (-(-y).expm1()).log() + y

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        return -softplus(-x)


class AffineTransform(Transform):
    """``y = loc + scale * x``; ``event_dim`` axes of each value make one event."""

    bijective = True

    def __init__(self, loc: Any, scale: Any, event_dim: int = 0, cache_size: int = 0) -> None:
        super().__init__(cache_size)
        self.loc, self.scale = loc, scale
        self._event_dim = event_dim

    @property
    def event_dim(self) -> int:
        return self._event_dim

    @property
    def domain(self) -> constraints.Constraint:  # type: ignore[override]
        return constraints.real if self._event_dim == 0 else constraints.independent(constraints.real, self._event_dim)

    @property
    def codomain(self) -> constraints.Constraint:  # type: ignore[override]
        return self.domain

    @property
    def sign(self) -> Any:
        if isinstance(self.scale, (int, float)):
            return 1 if self.scale > 0 else -1 if self.scale < 0 else 0
        return self.scale.sign()

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, AffineTransform):
            return False

        def same(a: Any, b: Any) -> bool:
            if isinstance(a, (int, float)) and isinstance(b, (int, float)):
                return a == b
            return bool((a == b).all()) if isinstance(a, Tensor) else bool((b == a).all())

        return same(self.loc, other.loc) and same(self.scale, other.scale)

    __hash__ = object.__hash__

    def _call(self, x: Tensor) -> Tensor:
        return self.loc + self.scale * x

    def _inverse(self, y: Tensor) -> Tensor:
        return (y - self.loc) / self.scale

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        if isinstance(self.scale, (int, float)):
            result = _creation.full_like(x, math.log(abs(self.scale)))
        else:
            result = self.scale.abs().log()
        shape = tuple(x.shape)
        if self._event_dim:
            result = result.reshape(tuple(result.shape)[: result.ndim - self._event_dim] + (-1,)).sum(-1)
            shape = shape[: len(shape) - self._event_dim]
        return result.expand(shape)

    def forward_shape(self, shape: Any) -> Any:
        return _broadcast_shapes(
            tuple(shape), tuple(getattr(self.loc, "shape", ())), tuple(getattr(self.scale, "shape", ()))
        )

    def inverse_shape(self, shape: Any) -> Any:
        return self.forward_shape(shape)


def _broadcast_shapes(*shapes: tuple) -> tuple:
    n = max(len(s) for s in shapes)
    out = []
    for sizes in zip(*((1,) * (n - len(s)) + s for s in shapes)):
        big = [d for d in sizes if d != 1]
        if len(set(big)) > 1:
            raise ValueError(f"shapes {shapes} do not broadcast")
        out.append(big[0] if big else 1)
    return tuple(out)


__all__ = [
    "AffineTransform", "ComposeTransform", "ExpTransform", "PowerTransform", "SigmoidTransform", "SoftplusTransform",
    "TanhTransform", "Transform",
]  # fmt: skip
