"""The base of every distribution, as ``torch.distributions.Distribution``: batch and event
shapes, argument and sample validation, ``sample`` as ``rsample`` without gradient."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..engine.switches import no_grad, tracing
from ..engine.warn import warn as _user_warn
from ..tensors._tensor import Size, Tensor
from . import constraints
from .utils import lazy_property


def all_true(ok: Any) -> bool:
    """Whether every entry of the check ``ok`` holds (argument and sample validation). Inside a
    trace (``tga.compile``) the traced call's values are checked without a Python decision in
    the program: a replay does not validate again (the numbers are the program's inputs)."""
    if tracing():
        return bool(np.asarray(ok._dev.to_host(ok._data)).all())
    return bool(ok.all())


#: PyTorch's default ``sample_shape`` (and shapes of a distribution): ``torch.Size([])``
EMPTY_SHAPE = Size()


class Distribution:
    """A batch of distributions of shape ``batch_shape``, each drawing events of shape
    ``event_shape``. Subclasses give ``arg_constraints``, ``support``, ``rsample`` (or
    ``sample``), ``log_prob``, ``mean``, ``variance``, ``entropy``, ..."""

    has_rsample = False
    has_enumerate_support = False
    _validate_args = __debug__

    @staticmethod
    def set_default_validate_args(value: bool) -> None:
        """Validation of arguments and samples on (the default, as Python's ``assert``) or off."""
        if value not in (True, False):
            raise ValueError(f"set_default_validate_args: expected True or False, got {value!r}")
        Distribution._validate_args = value

    def __init__(
        self, batch_shape: Any = EMPTY_SHAPE, event_shape: Any = EMPTY_SHAPE, validate_args: bool | None = None
    ) -> None:
        self._batch_shape, self._event_shape = Size(batch_shape), Size(event_shape)
        if validate_args is not None:
            self._validate_args = validate_args
        if not self._validate_args:
            return
        try:
            arg_constraints = self.arg_constraints
        except NotImplementedError:
            arg_constraints = {}
            _user_warn(f"{type(self)} does not define `arg_constraints`: set them, or pass validate_args=False")  # fmt: skip
        for param, constraint in arg_constraints.items():
            if constraints.is_dependent(constraint):
                continue
            if param not in self.__dict__ and isinstance(getattr(type(self), param, None), lazy_property):
                continue  # (not computed yet: it follows from a checked argument)
            value = getattr(self, param)
            if not all_true(constraint.check(value)):
                raise ValueError(
                    f"Expected parameter {param} ({type(value).__name__} of shape {tuple(value.shape)}) of distribution "
                    f"{self!r} to satisfy the constraint {constraint!r}, but found invalid values:\n{value}"
                )

    def expand(self, batch_shape: Any, _instance: Any = None) -> Distribution:
        raise NotImplementedError

    @property
    def batch_shape(self) -> Size:
        return self._batch_shape

    @property
    def event_shape(self) -> Size:
        return self._event_shape

    @property
    def arg_constraints(self) -> dict[str, constraints.Constraint]:
        raise NotImplementedError

    @property
    def support(self) -> constraints.Constraint:
        raise NotImplementedError

    @property
    def mean(self) -> Tensor:
        raise NotImplementedError

    @property
    def mode(self) -> Tensor:
        raise NotImplementedError(f"{self.__class__} does not implement mode")

    @property
    def variance(self) -> Tensor:
        raise NotImplementedError

    @property
    def stddev(self) -> Tensor:
        return self.variance.sqrt()

    def sample(self, sample_shape: Any = EMPTY_SHAPE) -> Tensor:
        """A draw of shape ``sample_shape + batch_shape + event_shape``, without gradient."""
        with no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape: Any = EMPTY_SHAPE) -> Tensor:
        """A reparameterised draw: differentiable with respect to the parameters."""
        raise NotImplementedError

    def sample_n(self, n: int) -> Tensor:
        _user_warn("`sample_n(n)` will be deprecated. Use `sample((n,))` instead.", FutureWarning)
        return self.sample((n,))

    def log_prob(self, value: Tensor) -> Tensor:
        raise NotImplementedError

    def cdf(self, value: Tensor) -> Tensor:
        raise NotImplementedError

    def icdf(self, value: Tensor) -> Tensor:
        raise NotImplementedError

    def enumerate_support(self, expand: bool = True) -> Tensor:
        raise NotImplementedError

    def entropy(self) -> Tensor:
        raise NotImplementedError

    def perplexity(self) -> Tensor:
        return self.entropy().exp()

    def _extended_shape(self, sample_shape: Any = EMPTY_SHAPE) -> Size:
        return Size(tuple(Size(sample_shape)) + tuple(self._batch_shape) + tuple(self._event_shape))

    def _validate_sample(self, value: Tensor) -> None:
        """``value``'s last axes must be the event shape and broadcast with the batch shape,
        and it must lie in the support."""
        if not isinstance(value, Tensor):
            raise ValueError("The value argument to log_prob must be a Tensor")
        start = value.ndim - len(self._event_shape)
        if tuple(value.shape[start:]) != tuple(self._event_shape):
            raise ValueError(
                f"The right-most size of value must match event_shape: {tuple(value.shape)} vs {self._event_shape}."
            )
        expected = tuple(self._batch_shape) + tuple(self._event_shape)
        for i, j in zip(reversed(tuple(value.shape)), reversed(expected)):
            if i != 1 and j != 1 and i != j:
                raise ValueError(
                    f"Value is not broadcastable with batch_shape+event_shape: {tuple(value.shape)} vs {expected}."
                )
        try:
            support = self.support
        except NotImplementedError:
            _user_warn(f"{self.__class__} does not define `support`: pass validate_args=False")
            return
        if not all_true(support.check(value)):
            raise ValueError(
                f"Expected value argument ({type(value).__name__} of shape {tuple(value.shape)}) to be within the "
                f"support ({support!r}) of the distribution {self!r}, but found invalid values:\n{value}"
            )

    def _expanded(self, cls: type, batch_shape: Any, names: tuple[str, ...], _instance: Any = None) -> Any:
        """A copy of this distribution over ``batch_shape``, its parameters ``names`` expanded to it
        (no new memory, no new validation: PyTorch's ``expand`` of a distribution with tensor parameters)."""
        new = self._get_checked_instance(cls, _instance)
        for name in names:
            setattr(new, name, getattr(self, name).expand(tuple(batch_shape)))
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _get_checked_instance(self, cls: type, _instance: Any = None) -> Any:
        if _instance is None and type(self).__init__ != cls.__init__:
            raise NotImplementedError(
                f"Subclass {self.__class__.__name__} of {cls.__name__} that defines a custom __init__ method "
                "must also define a custom .expand() method."
            )
        return self.__new__(type(self)) if _instance is None else _instance

    def __repr__(self) -> str:
        names = [k for k in self.arg_constraints if k in self.__dict__]
        args = ", ".join(
            f"{p}: {self.__dict__[p] if self.__dict__[p].numel() == 1 else self.__dict__[p].size()}" for p in names
        )
        return f"{self.__class__.__name__}({args})"
