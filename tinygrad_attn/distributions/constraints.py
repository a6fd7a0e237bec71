"""Where a distribution's parameters and values may lie, as ``torch.distributions.constraints``:
each constraint's ``check(value)`` is a boolean tensor (over the batch: an event of
``event_dim`` axes is one entry)."""

from __future__ import annotations

from typing import Any

from ..tensors._tensor import Tensor


class Constraint:
    """A region of values. ``is_discrete``: a region of integers; ``event_dim``: how many of a
    value's last axes make one event."""

    is_discrete = False
    event_dim = 0

    def check(self, value: Tensor) -> Tensor:
        raise NotImplementedError

    def __repr__(self) -> str:
        return self.__class__.__name__[1:] + "()"


class _Dependent(Constraint):
    """A constraint that depends on other parameters: it cannot be checked on its own. Its
    ``is_discrete`` and ``event_dim`` are those given; one not given cannot be read
    (``NotImplementedError``, as PyTorch's)."""

    def __init__(self, *, is_discrete: Any = NotImplemented, event_dim: Any = NotImplemented) -> None:
        self._is_discrete, self._event_dim = is_discrete, event_dim

    @property
    def is_discrete(self) -> bool:  # type: ignore[override]
        if self._is_discrete is NotImplemented:
            raise NotImplementedError(".is_discrete cannot be determined statically")
        return self._is_discrete

    @property
    def event_dim(self) -> int:  # type: ignore[override]
        if self._event_dim is NotImplemented:
            raise NotImplementedError(".event_dim cannot be determined statically")
        return self._event_dim

    def __call__(self, *, is_discrete: Any = NotImplemented, event_dim: Any = NotImplemented) -> _Dependent:
        """``constraints.dependent(is_discrete=True, event_dim=1)``: the settings not given are this one's."""
        if is_discrete is NotImplemented:
            is_discrete = self._is_discrete
        if event_dim is NotImplemented:
            event_dim = self._event_dim
        return _Dependent(is_discrete=is_discrete, event_dim=event_dim)

    def check(self, x: Tensor) -> Tensor:
        raise ValueError("Cannot determine validity of dependent constraint")


def is_dependent(constraint: Any) -> bool:
    return isinstance(constraint, _Dependent)


class _DependentProperty(property, _Dependent):
    """A property of a distribution that is its support, computed from its parameters
    (``Uniform``'s interval)."""

    def __init__(self, fn: Any = None, *, is_discrete: Any = NotImplemented, event_dim: Any = NotImplemented) -> None:
        property.__init__(self, fn)
        _Dependent.__init__(self, is_discrete=is_discrete, event_dim=event_dim)

    def __call__(self, fn: Any) -> _DependentProperty:
        return _DependentProperty(fn, is_discrete=self._is_discrete, event_dim=self._event_dim)


class _Boolean(Constraint):
    is_discrete = True

    def check(self, value: Tensor) -> Tensor:
        return (value == 0) | (value == 1)


class _OneHot(Constraint):
    is_discrete = True
    event_dim = 1

    def check(self, value: Tensor) -> Tensor:
        return ((value == 0) | (value == 1)).all(-1) & (value.sum(-1) == 1)


class _IntegerInterval(Constraint):
    is_discrete = True

    def __init__(self, lower_bound: Any, upper_bound: Any) -> None:
        self.lower_bound, self.upper_bound = lower_bound, upper_bound

    def check(self, value: Tensor) -> Tensor:
        return (value % 1 == 0) & (self.lower_bound <= value) & (value <= self.upper_bound)

    def __repr__(self) -> str:
        return f"IntegerInterval(lower_bound={self.lower_bound}, upper_bound={self.upper_bound})"


class _IntegerGreaterThan(Constraint):
    is_discrete = True

    def __init__(self, lower_bound: Any) -> None:
        self.lower_bound = lower_bound

    def check(self, value: Tensor) -> Tensor:
        return (value % 1 == 0) & (value >= self.lower_bound)

    def __repr__(self) -> str:
        return f"IntegerGreaterThan(lower_bound={self.lower_bound})"


class _Real(Constraint):
    def check(self, value: Tensor) -> Tensor:
        return value == value  # False only for NaN


class _GreaterThan(Constraint):
    def __init__(self, lower_bound: Any) -> None:
        self.lower_bound = lower_bound

    def check(self, value: Tensor) -> Tensor:
        return self.lower_bound < value

    def __repr__(self) -> str:
        return f"GreaterThan(lower_bound={self.lower_bound})"


class _GreaterThanEq(_GreaterThan):
    def check(self, value: Tensor) -> Tensor:
        return self.lower_bound <= value

    def __repr__(self) -> str:
        return f"GreaterThanEq(lower_bound={self.lower_bound})"


class _LessThan(Constraint):
    def __init__(self, upper_bound: Any) -> None:
        self.upper_bound = upper_bound

    def check(self, value: Tensor) -> Tensor:
        return value < self.upper_bound

    def __repr__(self) -> str:
        return f"LessThan(upper_bound={self.upper_bound})"


class _Interval(Constraint):
    def __init__(self, lower_bound: Any, upper_bound: Any) -> None:
        self.lower_bound, self.upper_bound = lower_bound, upper_bound

    def check(self, value: Tensor) -> Tensor:
        return (self.lower_bound <= value) & (value <= self.upper_bound)

    def __repr__(self) -> str:
        return f"Interval(lower_bound={self.lower_bound}, upper_bound={self.upper_bound})"


class _HalfOpenInterval(_Interval):
    def check(self, value: Tensor) -> Tensor:
        return (self.lower_bound <= value) & (value < self.upper_bound)

    def __repr__(self) -> str:
        return f"HalfOpenInterval(lower_bound={self.lower_bound}, upper_bound={self.upper_bound})"


class _IndependentConstraint(Constraint):
    """``base`` for each entry, the last ``reinterpreted_batch_ndims`` axes making one event."""

    def __init__(self, base_constraint: Constraint, reinterpreted_batch_ndims: int) -> None:
        self.base_constraint, self.reinterpreted_batch_ndims = base_constraint, reinterpreted_batch_ndims

    @property
    def is_discrete(self) -> bool:  # type: ignore[override]
        return self.base_constraint.is_discrete

    @property
    def event_dim(self) -> int:  # type: ignore[override]
        return self.base_constraint.event_dim + self.reinterpreted_batch_ndims

    def check(self, value: Tensor) -> Tensor:
        result = self.base_constraint.check(value)
        n = self.reinterpreted_batch_ndims
        return result.reshape(*result.shape[: result.ndim - n], -1).all(-1) if n else result

    def __repr__(self) -> str:
        return f"IndependentConstraint({self.base_constraint!r}, {self.reinterpreted_batch_ndims})"


class _Simplex(Constraint):
    event_dim = 1

    def check(self, value: Tensor) -> Tensor:
        return (value >= 0).all(-1) & ((value.sum(-1) - 1).abs() < 1e-6)


class _LowerCholesky(Constraint):
    event_dim = 2

    def check(self, value: Tensor) -> Tensor:
        lower = (value.tril() == value).reshape(*value.shape[:-2], -1).all(-1)
        positive = (value.diagonal(0, -2, -1) > 0).all(-1)
        return lower & positive


class _PositiveDefinite(Constraint):
    event_dim = 2

    def check(self, value: Tensor) -> Tensor:
        import numpy as np  # noqa: PLC0415 - (a host check of eigenvalues, as PyTorch's cholesky_ex)

        arr = np.asarray(value.detach().numpy(), dtype=np.float64)
        symmetric = np.all(np.isclose(arr, np.swapaxes(arr, -1, -2), atol=1e-6), axis=(-1, -2))
        try:
            positive = np.all(np.linalg.eigvalsh(arr) > 0, axis=-1)
        except np.linalg.LinAlgError:
            positive = np.zeros(arr.shape[:-2], dtype=bool)
        return Tensor(np.asarray(symmetric & positive), device=value.device)


class _LowerTriangular(Constraint):
    event_dim = 2

    def check(self, value: Tensor) -> Tensor:
        return (value.tril() == value).reshape(*value.shape[:-2], -1).all(-1)


class _CorrCholesky(Constraint):
    """Lower Cholesky factors of correlation matrices: rows of unit norm, positive diagonal."""

    event_dim = 2

    def check(self, value: Tensor) -> Tensor:
        tol = 10 * _eps(value) * value.shape[-1]
        unit = ((value.pow(2).sum(-1).sqrt() - 1).abs() <= tol).all(-1)
        return _LowerCholesky().check(value) & unit


class _Square(Constraint):
    event_dim = 2

    def check(self, value: Tensor) -> Tensor:
        from ..tensors.factories import creation  # noqa: PLC0415 - (constraints load before the factories)

        return creation.full(tuple(value.shape[:-2]), value.shape[-2] == value.shape[-1], dtype=bool)


class _Symmetric(_Square):
    def check(self, value: Tensor) -> Tensor:
        square = super().check(value)
        if not bool(square.all()):
            return square
        return ((value - value.mT).abs() <= 1e-6).reshape(*value.shape[:-2], -1).all(-1)


class _PositiveSemidefinite(_Symmetric):
    def check(self, value: Tensor) -> Tensor:
        import numpy as np  # noqa: PLC0415 - (a host check of eigenvalues)

        arr = np.asarray(value.detach().numpy(), dtype=np.float64)
        return Tensor(np.asarray(np.all(np.linalg.eigvalsh(arr) >= 0, axis=-1)), device=value.device) & super().check(
            value
        )


class _Multinomial(Constraint):
    """Counts of ``upper_bound`` trials at most, over the last axis."""

    is_discrete = True
    event_dim = 1

    def __init__(self, upper_bound: Any) -> None:
        self.upper_bound = upper_bound

    def check(self, x: Tensor) -> Tensor:
        return (x >= 0).all(-1) & (x.sum(-1) <= self.upper_bound)


class _Cat(Constraint):
    """``cseq[i]`` on the ``i``-th slice of ``lengths[i]`` entries along ``dim``."""

    def __init__(self, cseq: Any, dim: int = 0, lengths: Any = None) -> None:
        self.cseq, self.dim = list(cseq), dim
        self.lengths = [1] * len(self.cseq) if lengths is None else list(lengths)

    @property
    def is_discrete(self) -> bool:  # type: ignore[override]
        return any(c.is_discrete for c in self.cseq)

    @property
    def event_dim(self) -> int:  # type: ignore[override]
        return max(c.event_dim for c in self.cseq)

    def check(self, value: Tensor) -> Tensor:
        from ..tensors.shape.shape_functions import cat  # noqa: PLC0415

        parts, start = [], 0
        for constraint, length in zip(self.cseq, self.lengths):
            parts.append(constraint.check(value.narrow(self.dim, start, length)))
            start += length
        return cat(parts, self.dim)


class _Stack(Constraint):
    """``cseq[i]`` on the ``i``-th entry along ``dim``."""

    def __init__(self, cseq: Any, dim: int = 0) -> None:
        self.cseq, self.dim = list(cseq), dim

    @property
    def is_discrete(self) -> bool:  # type: ignore[override]
        return any(c.is_discrete for c in self.cseq)

    @property
    def event_dim(self) -> int:  # type: ignore[override]
        dim = max(c.event_dim for c in self.cseq)
        return dim + 1 if self.dim + dim < 0 else dim

    def check(self, value: Tensor) -> Tensor:
        from ..tensors.shape.shape_functions import stack  # noqa: PLC0415

        return stack([c.check(value.select(self.dim, i)) for i, c in enumerate(self.cseq)], self.dim)


class MixtureSameFamilyConstraint(Constraint):
    """The components' support, checked with the component axis put back: a value is valid
    when it lies in every component's support (as PyTorch checks it)."""

    def __init__(self, base_constraint: Constraint) -> None:
        if not isinstance(base_constraint, Constraint):
            raise TypeError(f"base_constraint must be a Constraint, got {type(base_constraint).__name__}")
        self.base_constraint = base_constraint

    @property
    def is_discrete(self) -> bool:  # type: ignore[override]
        return self.base_constraint.is_discrete

    @property
    def event_dim(self) -> int:  # type: ignore[override]
        return self.base_constraint.event_dim

    def check(self, value: Tensor) -> Tensor:
        if value.dim() < self.event_dim:
            raise ValueError(f"Expected value.dim() >= {self.event_dim} but got {value.dim()}")
        result = self.base_constraint.check(value.unsqueeze(-1 - self.event_dim))
        keep = value.dim() - self.event_dim
        return result.reshape(*result.shape[:keep], -1).all(-1)

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}({self.base_constraint!r})"


def _eps(value: Tensor) -> float:
    from ..tensors.dtypes import finfo  # noqa: PLC0415

    return finfo(value.dtype).eps


dependent = _Dependent()
dependent_property = _DependentProperty
independent = _IndependentConstraint
boolean = _Boolean()
one_hot = _OneHot()
nonnegative_integer = _IntegerGreaterThan(0)
positive_integer = _IntegerGreaterThan(1)
integer_interval = _IntegerInterval
real = _Real()
real_vector = _IndependentConstraint(real, 1)
positive = _GreaterThan(0.0)
nonnegative = _GreaterThanEq(0.0)
greater_than = _GreaterThan
greater_than_eq = _GreaterThanEq
less_than = _LessThan
unit_interval = _Interval(0.0, 1.0)
interval = _Interval
half_open_interval = _HalfOpenInterval
simplex = _Simplex()
lower_cholesky = _LowerCholesky()
positive_definite = _PositiveDefinite()

lower_triangular = _LowerTriangular()
corr_cholesky = _CorrCholesky()
square = _Square()
symmetric = _Symmetric()
positive_semidefinite = _PositiveSemidefinite()
multinomial = _Multinomial
cat = _Cat
stack = _Stack

__all__ = [
    "Constraint", "boolean", "dependent", "dependent_property", "greater_than", "greater_than_eq", "half_open_interval",
    "independent", "integer_interval", "interval", "is_dependent", "less_than", "lower_cholesky", "nonnegative",
    "nonnegative_integer", "one_hot", "positive", "positive_definite", "positive_integer", "real", "real_vector", "simplex",
    "unit_interval", "cat", "corr_cholesky", "lower_triangular", "multinomial", "positive_semidefinite", "square",
    "stack", "symmetric", "MixtureSameFamilyConstraint",
]  # fmt: skip
