"""From constraints to transforms, as ``torch.distributions.constraint_registry``:
``biject_to(c)`` is a bijection from the real numbers onto ``c`` (for reparameterising an
optimised parameter); ``transform_to(c)`` any transform onto ``c`` (not always a bijection).

>>> unconstrained = biject_to(constraints.positive).inv(scale)  # doctest: +SKIP
"""

from __future__ import annotations

import numbers
from collections.abc import Callable
from typing import Any

from . import constraints
from . import transforms as T

__all__ = ["ConstraintRegistry", "biject_to", "transform_to"]


class ConstraintRegistry:
    """Constraint classes (or instances, standing for their class) to functions making a transform."""

    def __init__(self) -> None:
        self._registry: dict[type, Callable] = {}

    def register(self, constraint: Any, factory: Callable | None = None) -> Any:
        if factory is None:
            return lambda factory: self.register(constraint, factory)
        if isinstance(constraint, constraints.Constraint):
            constraint = type(constraint)
        if not isinstance(constraint, type) or not issubclass(constraint, constraints.Constraint):
            raise TypeError(f"Expected constraint to be either a Constraint subclass or instance, but got {constraint}")
        self._registry[constraint] = factory
        return factory

    def __call__(self, constraint: constraints.Constraint) -> T.Transform:
        try:
            factory = self._registry[type(constraint)]
        except KeyError:
            raise NotImplementedError(f"Cannot transform {type(constraint).__name__} constraints") from None
        return factory(constraint)


biject_to = ConstraintRegistry()
transform_to = ConstraintRegistry()


@biject_to.register(constraints.real)
@transform_to.register(constraints.real)
def _transform_to_real(constraint: Any) -> T.Transform:
    return T.identity_transform


@biject_to.register(constraints.independent)
def _biject_to_independent(constraint: Any) -> T.Transform:
    base = biject_to(constraint.base_constraint)
    return T.IndependentTransform(base, constraint.reinterpreted_batch_ndims)


@transform_to.register(constraints.independent)
def _transform_to_independent(constraint: Any) -> T.Transform:
    base = transform_to(constraint.base_constraint)
    return T.IndependentTransform(base, constraint.reinterpreted_batch_ndims)


@biject_to.register(constraints.positive)
@biject_to.register(constraints.nonnegative)
@transform_to.register(constraints.positive)
@transform_to.register(constraints.nonnegative)
def _transform_to_positive(constraint: Any) -> T.Transform:
    return T.ExpTransform()


@biject_to.register(constraints.greater_than)
@biject_to.register(constraints.greater_than_eq)
@transform_to.register(constraints.greater_than)
@transform_to.register(constraints.greater_than_eq)
def _transform_to_greater_than(constraint: Any) -> T.Transform:
    return T.ComposeTransform([T.ExpTransform(), T.AffineTransform(constraint.lower_bound, 1)])


@biject_to.register(constraints.less_than)
@transform_to.register(constraints.less_than)
def _transform_to_less_than(constraint: Any) -> T.Transform:
    return T.ComposeTransform([T.ExpTransform(), T.AffineTransform(constraint.upper_bound, -1)])


@biject_to.register(constraints.interval)
@biject_to.register(constraints.half_open_interval)
@transform_to.register(constraints.interval)
@transform_to.register(constraints.half_open_interval)
def _transform_to_interval(constraint: Any) -> T.Transform:
    lower, upper = constraint.lower_bound, constraint.upper_bound
    if isinstance(lower, numbers.Number) and isinstance(upper, numbers.Number) and (lower, upper) == (0, 1):
        return T.SigmoidTransform()
    return T.ComposeTransform([T.SigmoidTransform(), T.AffineTransform(lower, upper - lower)])


@biject_to.register(constraints.simplex)
def _biject_to_simplex(constraint: Any) -> T.Transform:
    return T.StickBreakingTransform()


@transform_to.register(constraints.simplex)
def _transform_to_simplex(constraint: Any) -> T.Transform:
    return T.SoftmaxTransform()


@transform_to.register(constraints.lower_cholesky)
def _transform_to_lower_cholesky(constraint: Any) -> T.Transform:
    return T.LowerCholeskyTransform()


@transform_to.register(constraints.positive_definite)
@transform_to.register(constraints.positive_semidefinite)
def _transform_to_positive_definite(constraint: Any) -> T.Transform:
    return T.PositiveDefiniteTransform()


@biject_to.register(constraints.corr_cholesky)
@transform_to.register(constraints.corr_cholesky)
def _transform_to_corr_cholesky(constraint: Any) -> T.Transform:
    return T.CorrCholeskyTransform()


@biject_to.register(constraints.cat)
def _biject_to_cat(constraint: Any) -> T.Transform:
    return T.CatTransform([biject_to(c) for c in constraint.cseq], constraint.dim, constraint.lengths)


@transform_to.register(constraints.cat)
def _transform_to_cat(constraint: Any) -> T.Transform:
    return T.CatTransform([transform_to(c) for c in constraint.cseq], constraint.dim, constraint.lengths)


@biject_to.register(constraints.stack)
def _biject_to_stack(constraint: Any) -> T.Transform:
    return T.StackTransform([biject_to(c) for c in constraint.cseq], constraint.dim)


@transform_to.register(constraints.stack)
def _transform_to_stack(constraint: Any) -> T.Transform:
    return T.StackTransform([transform_to(c) for c in constraint.cseq], constraint.dim)
