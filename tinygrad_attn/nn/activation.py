"""Activation layers with PyTorch's names and constructor arguments.

Each wraps one function of :mod:`tinygrad_attn.functional`, so ``nn.ReLU()(x)`` and
``F.relu(x)`` are the same op.

>>> from tinygrad_attn import nn
>>> nn.Softmax(dim=-1)(Tensor([[1.0, 1.0]])).tolist()
[[0.5, 0.5]]
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import functional as F
from ..engine.switches import no_grad
from ..engine.warn import warn as _user_warn
from ..tensors._tensor import Tensor
from .layers import _float_dtype
from .module import Module, Parameter


class ReLU(Module):
    """``max(x, 0)``; ``inplace=True`` writes it into the input, as PyTorch's does."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.relu(input, inplace=self.inplace)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class GELU(Module):
    """Gaussian error linear unit; ``approximate="tanh"`` for the tanh form of GPT-2."""

    def __init__(self, approximate: str = "none") -> None:
        super().__init__()
        if approximate not in ("none", "tanh"):
            raise ValueError(f"GELU: approximate must be 'none' or 'tanh', got {approximate!r}")
        self.approximate = approximate

    def forward(self, input: Tensor) -> Tensor:
        return F.gelu(input, approximate=self.approximate)

    def extra_repr(self) -> str:
        return f"approximate={self.approximate!r}"


class Tanh(Module):
    def forward(self, input: Tensor) -> Tensor:
        return F.tanh(input)


class Sigmoid(Module):
    def forward(self, input: Tensor) -> Tensor:
        return F.sigmoid(input)


def _legacy_dim(x: Tensor) -> int:
    # PyTorch's rule when no dim is given: the first axis for 0-, 1- and 3-D inputs
    # (an unbatched vector or image), the second otherwise (batched).
    return 0 if x.ndim in (0, 1, 3) else 1


class Softmax(Module):
    """``softmax`` along ``dim``; without ``dim``, PyTorch's legacy choice of axis."""

    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: Tensor) -> Tensor:
        return F.softmax(input, _legacy_dim(input) if self.dim is None else self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class LogSoftmax(Softmax):
    """``log_softmax`` along ``dim``; without ``dim``, PyTorch's legacy choice of axis."""

    def forward(self, input: Tensor) -> Tensor:
        return F.log_softmax(input, _legacy_dim(input) if self.dim is None else self.dim)


# -- PyTorch's further activation modules: each one function of F, PyTorch's arguments --------
class _Elementwise(Module):
    """An activation with settings (PyTorch's, in its order, named in ``_settings``);
    ``inplace=True`` writes the result into the input."""

    _fn: str = ""  # the function of F it applies

    _settings: tuple[str, ...] = ()  # the attributes passed to it by keyword, in PyTorch's order

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        kw = {k: getattr(self, k) for k in self._settings}
        if self.inplace:  # (only when asked: not every function takes it)
            kw["inplace"] = True
        return getattr(F, self._fn)(input, **kw)

    #: whether PyTorch's repr shows ``inplace=True`` (Hardswish's and Hardsigmoid's do not)
    _inplace_in_repr = True

    def extra_repr(self) -> str:
        parts = [f"{k}={getattr(self, k)}" for k in self._settings]
        return ", ".join(parts + (["inplace=True"] if self.inplace and self._inplace_in_repr else []))


class CELU(_Elementwise):
    """``F.celu``: ``x`` above 0, ``alpha * (exp(x / alpha) - 1)`` below."""

    _fn, _settings = "celu", ("alpha",)

    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        super().__init__(inplace)
        self.alpha = alpha


class SELU(_Elementwise):
    """``F.selu``: the self-normalising scaled ELU."""

    _fn = "selu"

    def __init__(self, inplace: bool = False) -> None:  # (its own: errors name the class, as PyTorch's)
        super().__init__(inplace)


class ReLU6(_Elementwise):
    """``F.relu6``: ``min(max(x, 0), 6)``."""

    _fn = "relu6"

    def __init__(self, inplace: bool = False) -> None:  # (its own: errors name the class, as PyTorch's)
        super().__init__(inplace)


class Hardswish(_Elementwise):
    """``F.hardswish``: ``x * relu6(x + 3) / 6``."""

    _fn, _inplace_in_repr = "hardswish", False  # (PyTorch's repr shows no inplace)

    def __init__(self, inplace: bool = False) -> None:  # (its own: errors name the class, as PyTorch's)
        super().__init__(inplace)


class Hardsigmoid(_Elementwise):
    """``F.hardsigmoid``: ``relu6(x + 3) / 6``."""

    _fn, _inplace_in_repr = "hardsigmoid", False  # (PyTorch's repr shows no inplace)

    def __init__(self, inplace: bool = False) -> None:  # (its own: errors name the class, as PyTorch's)
        super().__init__(inplace)


class Hardtanh(_Elementwise):
    """``F.hardtanh``: ``x`` clipped to ``[min_val, max_val]`` (``min_value``/``max_value``:
    PyTorch's deprecated names of the two, which it warns about and takes)."""

    _fn, _settings = "hardtanh", ("min_val", "max_val")

    def __init__(self, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False,
                 min_value: float | None = None, max_value: float | None = None) -> None:  # fmt: skip
        super().__init__(inplace)
        if min_value is not None:
            _user_warn("keyword argument `min_value` is deprecated and renamed to `min_val`", FutureWarning)
            min_val = min_value
        if max_value is not None:
            _user_warn("keyword argument `max_value` is deprecated and renamed to `max_val`", FutureWarning)
            max_val = max_value
        if max_val <= min_val:
            raise AssertionError(f"Hardtanh: max_val ({max_val}) must be greater than min_val ({min_val})")
        self.min_val, self.max_val = min_val, max_val


class Mish(_Elementwise):
    """``F.mish``: ``x * tanh(softplus(x))``."""

    _fn = "mish"

    def __init__(self, inplace: bool = False) -> None:  # (its own: errors name the class, as PyTorch's)
        super().__init__(inplace)


class SiLU(_Elementwise):
    """``F.silu``: ``x * sigmoid(x)``."""

    _fn = "silu"

    def __init__(self, inplace: bool = False) -> None:  # (its own: errors name the class, as PyTorch's)
        super().__init__(inplace)


class ELU(_Elementwise):
    """``F.elu``: ``x`` above 0, ``alpha * (exp(x) - 1)`` below."""

    _fn, _settings = "elu", ("alpha",)

    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        super().__init__(inplace)
        self.alpha = alpha


class LeakyReLU(_Elementwise):
    """``F.leaky_relu``: ``negative_slope * x`` below 0."""

    _fn, _settings = "leaky_relu", ("negative_slope",)

    def __init__(self, negative_slope: float = 0.01, inplace: bool = False) -> None:
        super().__init__(inplace)
        self.negative_slope = negative_slope


class Threshold(_Elementwise):
    """``F.threshold``: ``x`` above ``threshold``, ``value`` elsewhere."""

    _fn, _settings = "threshold", ("threshold", "value")

    def __init__(self, threshold: float, value: float, inplace: bool = False) -> None:
        super().__init__(inplace)
        self.threshold, self.value = threshold, value


class LogSigmoid(Module):
    """``F.logsigmoid``: ``log(sigmoid(x))``."""

    def forward(self, input: Tensor) -> Tensor:
        return F.logsigmoid(input)


class Softsign(Module):
    """``F.softsign``: ``x / (1 + |x|)``."""

    def forward(self, input: Tensor) -> Tensor:
        return F.softsign(input)


class GLU(Module):
    """``F.glu`` along ``dim``: the first half of the input times the sigmoid of the second."""

    def __init__(self, dim: int = -1) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: Tensor) -> Tensor:
        return F.glu(input, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class Softplus(Module):
    """``F.softplus``: ``log(1 + exp(beta x)) / beta``, linear past ``threshold``."""

    def __init__(self, beta: float = 1.0, threshold: float = 20.0) -> None:
        super().__init__()
        self.beta, self.threshold = beta, threshold

    def forward(self, input: Tensor) -> Tensor:
        return F.softplus(input, self.beta, self.threshold)

    def extra_repr(self) -> str:
        return f"beta={self.beta}, threshold={self.threshold}"


class Softmin(Softmax):
    """``F.softmin`` along ``dim``; without ``dim``, PyTorch's legacy choice of axis."""

    def forward(self, input: Tensor) -> Tensor:
        return F.softmin(input, _legacy_dim(input) if self.dim is None else self.dim)


class _Shrink(Module):
    def __init__(self, lambd: float = 0.5) -> None:
        super().__init__()
        self.lambd = lambd

    def extra_repr(self) -> str:
        return f"{self.lambd}"


class Hardshrink(_Shrink):
    """``F.hardshrink``: ``x`` where ``|x| > lambd``, 0 elsewhere."""

    def forward(self, input: Tensor) -> Tensor:
        return F.hardshrink(input, self.lambd)


class Softshrink(_Shrink):
    """``F.softshrink``: ``x`` moved ``lambd`` towards 0, 0 within ``[-lambd, lambd]``."""

    def forward(self, input: Tensor) -> Tensor:
        return F.softshrink(input, self.lambd)


class Tanhshrink(Module):
    """``x - tanh(x)``."""

    def forward(self, input: Tensor) -> Tensor:
        return F.tanhshrink(input)


class Softmax2d(Module):
    """Softmax over the channels of ``(N, C, H, W)`` or ``(C, H, W)`` (axis -3)."""

    def forward(self, input: Tensor) -> Tensor:
        if input.ndim not in (3, 4):
            raise ValueError(f"Softmax2d: expected input to be 3D or 4D, got {input.ndim}D instead")
        return F.softmax(input, -3)


class PReLU(Module):
    """``F.prelu`` with a learned slope, one (``num_parameters=1``) or one per channel, starting
    at ``init``: PyTorch's ``nn.PReLU(num_parameters=1, init=0.25, device=None, dtype=None)``."""

    def __init__(self, num_parameters: int = 1, init: float = 0.25, device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        self.num_parameters, self.init = num_parameters, init
        self.weight = Parameter(np.full(num_parameters, init, _float_dtype(dtype)), device=device)

    def reset_parameters(self) -> None:
        with no_grad():
            self.weight.fill_(self.init)

    def forward(self, input: Tensor) -> Tensor:
        return F.prelu(input, self.weight)

    def extra_repr(self) -> str:
        return f"num_parameters={self.num_parameters}"


class RReLU(Module):
    """``F.rrelu``: negative inputs times a random slope in ``[lower, upper]`` while
    training, times the mean slope in eval mode."""

    def __init__(self, lower: float = 1.0 / 8, upper: float = 1.0 / 3, inplace: bool = False) -> None:
        super().__init__()
        self.lower, self.upper, self.inplace = lower, upper, inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self) -> str:
        return f"lower={self.lower}, upper={self.upper}" + (", inplace=True" if self.inplace else "")
