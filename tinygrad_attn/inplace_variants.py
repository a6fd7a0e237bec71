"""PyTorch's in-place variants (``x.exp_()``, ``x.clamp_min_(0)``, ``x.index_fill_(...)``)
and random fills (``w.uniform_(-r, r)``), installed on :class:`Tensor` from the tables below.

Every variant is the out-of-place method of the same name written into the tensor through
:func:`tinygrad_attn.inplace.apply_inplace`, the one in-place mechanism: the version
bump, the rebased history when gradients are recorded, the checks (a leaf that requires
grad, a view, a result that cannot be cast back to the tensor's dtype) are all there.
The random fills draw from the library's one generator (:mod:`tinygrad_attn.random`), on
the host, so a seed gives the same numbers on every device.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ._tensor import Tensor, where
from .inplace import apply_inplace
from .random import host_generator

#: ``name_`` for each of these is ``name`` computed and written in place.
INPLACE_OF = (
    # elementwise, one operand
    "relu", "exp", "log", "sqrt", "tanh", "sigmoid", "abs", "absolute", "neg", "negative", "sin", "cos", "tan",
    "floor", "ceil", "round", "sign", "trunc", "fix", "frac", "exp2", "expm1", "log1p", "log2", "log10", "asin",
    "acos", "atan", "asinh", "acosh", "atanh", "arcsin", "arccos", "arctan", "arcsinh", "arccosh", "arctanh",
    "sinh", "cosh", "rsqrt", "reciprocal", "square", "erf", "erfinv", "deg2rad", "rad2deg", "logical_not",
    # elementwise with operands
    "pow", "clamp_min", "clamp_max", "fmod", "remainder", "lerp", "atan2", "arctan2", "hypot", "copysign", "xlogy",
    "logical_and", "logical_or", "logical_xor", "floor_divide", "eq", "ne", "lt", "le", "gt", "ge",
    "true_divide", "multiply", "subtract", "divide", "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not",
    "bitwise_left_shift", "bitwise_right_shift",
    # selections and triangles
    "scatter", "scatter_add", "scatter_reduce", "index_fill", "index_add", "index_copy", "masked_scatter",
    "tril", "triu",
)  # fmt: skip


def _variant(name: str) -> Callable[..., Tensor]:
    def method(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
        # Tensor arguments are operands (a gradient may flow to them); the rest are constants.
        return apply_inplace(self, name + "_", lambda x, *a: getattr(x, name)(*a, **kwargs), *args)

    method.__name__ = method.__qualname__ = name + "_"
    method.__doc__ = f"``{name}`` written into this tensor, in place (as ``torch.Tensor.{name}_``)."
    return method


def fill_diagonal_(self: Tensor, fill_value: Any, wrap: bool = False) -> Tensor:
    """The main diagonal (of a 2-D tensor, or of a tensor whose sides are all equal)
    becomes ``fill_value``, in place; ``wrap`` restarts it below a tall matrix's square."""
    if self.ndim < 2:
        raise RuntimeError(f"fill_diagonal_: needs at least 2 dimensions, got shape {self.shape}")
    if self.ndim > 2 and len(set(self.shape)) != 1:
        raise RuntimeError(f"fill_diagonal_: all dimensions must have one length, got shape {self.shape}")
    n = self.numel()
    if self.ndim == 2:
        rows, cols = self.shape
        step = cols + 1
        end = n if wrap else min(rows, cols) * cols
    else:
        side = self.shape[0]
        step = sum(side**k for k in range(self.ndim))
        end = n
    mask = np.zeros(n, dtype=bool)
    mask[0:end:step] = True
    m = Tensor(mask.reshape(self.shape), device=self._dev)
    return self.masked_fill_(m, fill_value)


# -- random fills --------------------------------------------------------------------------
def _fill_with(t: Tensor, name: str, draws: np.ndarray) -> Tensor:
    v = Tensor(np.asarray(draws).astype(t.dtype, copy=False), device=t._dev)
    return apply_inplace(t, name, lambda x, s: where(True, s, x), v, reads_old=False)


def _float_only(t: Tensor, name: str) -> None:
    if t.dtype.kind not in "fc":
        raise RuntimeError(f"{name}: needs a floating-point tensor, got {t.dtype} (PyTorch's neither)")


def uniform_(self: Tensor, a: float = 0.0, b: float = 1.0, *, generator: Any = None) -> Tensor:
    """Uniform draws from ``[a, b)``, in place."""
    _float_only(self, "uniform_")
    if a > b:
        raise RuntimeError(f"uniform_: expects from <= to, got from={a} > to={b}")
    return _fill_with(self, "uniform_", host_generator().uniform(a, b, self.shape))


def normal_(self: Tensor, mean: float = 0.0, std: float = 1.0, *, generator: Any = None) -> Tensor:
    """Normal draws of ``mean`` and ``std``, in place."""
    _float_only(self, "normal_")
    if std < 0:
        raise RuntimeError(f"normal_: expects std >= 0.0, got std={std}")
    return _fill_with(self, "normal_", host_generator().standard_normal(self.shape) * std + mean)


def bernoulli_(self: Tensor, p: Any = 0.5, *, generator: Any = None) -> Tensor:
    """1 with probability ``p`` (a number or a tensor broadcast to this one), else 0, in place."""
    prob = p.numpy() if isinstance(p, Tensor) else p
    if np.any((np.asarray(prob) < 0) | (np.asarray(prob) > 1)):
        raise RuntimeError("bernoulli_: expects 0 <= p <= 1")
    return _fill_with(self, "bernoulli_", host_generator().random(self.shape) < prob)


def random_(self: Tensor, from_: int = 0, to: int | None = None, *, generator: Any = None) -> Tensor:
    """Integers from ``[from_, to)`` in place; ``random_(to)`` is ``[0, to)``; without
    bounds, PyTorch's: ``[0, 2**mantissa]`` for floats, the dtype's range for integers."""
    if to is None and from_ != 0:  # random_(to)
        from_, to = 0, from_
    if to is None:
        dt = self.dtype
        to = 2 ** (np.finfo(dt).nmant + 1) + 1 if dt.kind == "f" else (2 if dt.kind == "b" else int(np.iinfo(dt).max))
    if from_ >= to:
        raise RuntimeError(f"random_: expects from < to, got from={from_} >= to={to}")
    return _fill_with(self, "random_", host_generator().integers(from_, to, self.shape))


def exponential_(self: Tensor, lambd: float = 1.0, *, generator: Any = None) -> Tensor:
    """Exponential draws of rate ``lambd``, in place."""
    _float_only(self, "exponential_")
    if lambd <= 0:
        raise RuntimeError(f"exponential_: expects lambd > 0.0, got {lambd}")
    return _fill_with(self, "exponential_", host_generator().exponential(1.0 / lambd, self.shape))


def geometric_(self: Tensor, p: float, *, generator: Any = None) -> Tensor:
    """Geometric draws (trials to the first success, from 1) of success probability ``p``, in place."""
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_: expects p in (0, 1), got p={p}")
    return _fill_with(self, "geometric_", host_generator().geometric(p, self.shape))


def log_normal_(self: Tensor, mean: float = 1.0, std: float = 2.0, *, generator: Any = None) -> Tensor:
    """``exp`` of normal draws of ``mean`` and ``std``, in place."""
    _float_only(self, "log_normal_")
    if std <= 0:
        raise RuntimeError(f"log_normal_: expects std > 0.0, got std={std}")
    return _fill_with(self, "log_normal_", host_generator().lognormal(mean, std, self.shape))


def cauchy_(self: Tensor, median: float = 0.0, sigma: float = 1.0, *, generator: Any = None) -> Tensor:
    """Cauchy draws of ``median`` and scale ``sigma``, in place."""
    _float_only(self, "cauchy_")
    if sigma <= 0:
        raise RuntimeError(f"cauchy_: expects sigma > 0.0, got sigma={sigma}")
    return _fill_with(self, "cauchy_", median + sigma * host_generator().standard_cauchy(self.shape))


RANDOM_FILLS = (uniform_, normal_, bernoulli_, random_, exponential_, geometric_, log_normal_, cauchy_)


def install(cls: type) -> None:
    """Give ``cls`` every variant of :data:`INPLACE_OF` whose out-of-place method it has,
    ``fill_diagonal_`` and the random fills; a method the class defines itself stays."""
    for name in INPLACE_OF:
        if hasattr(cls, name) and name + "_" not in cls.__dict__:
            setattr(cls, name + "_", _variant(name))
    for fn in (fill_diagonal_, *RANDOM_FILLS):
        if fn.__name__ not in cls.__dict__:
            setattr(cls, fn.__name__, fn)
