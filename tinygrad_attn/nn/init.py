"""Weight initialisations with the names, signatures and formulas of ``torch.nn.init``.

Each function fills a tensor in place (under no_grad, so a parameter that requires grad
can be filled) and returns it. The numbers are drawn on the host from the library's one
generator (:func:`tinygrad_attn.manual_seed` makes them repeatable) or from ``generator``
(a :class:`tinygrad_attn.Generator`), then written into the tensor on its own device. The
numbers are PyTorch's for the same seed: the same draws in the same order.

>>> nn.init.xavier_uniform_(layer.weight)  # doctest: +SKIP
>>> nn.init.kaiming_normal_(conv.weight, mode="fan_out", nonlinearity="relu")  # doctest: +SKIP
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..engine.switches import no_grad
from ..engine.warn import warn as _user_warn
from ..random import Generator, generator_for
from ..random import transforms as rt
from ..tensors._tensor import Tensor, where
from ..tensors.factories.creation import empty_like

__all__ = [
    "calculate_gain",
    "uniform_",
    "normal_",
    "trunc_normal_",
    "constant_",
    "ones_",
    "zeros_",
    "eye_",
    "dirac_",
    "xavier_uniform_",
    "xavier_normal_",
    "kaiming_uniform_",
    "kaiming_normal_",
    "orthogonal_",
    "sparse_",
]

_LINEAR_GAIN_ONE = ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
                    "conv_transpose3d", "sigmoid")  # fmt: skip


def calculate_gain(nonlinearity: str, param: float | None = None) -> float:
    """The recommended gain for ``nonlinearity`` (PyTorch's table).

    >>> calculate_gain("leaky_relu", 0.2)  # doctest: +SKIP
    1.3867504905630728
    """
    if nonlinearity in _LINEAR_GAIN_ONE:
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            slope = 0.01
        elif isinstance(param, (int, float)) and not isinstance(param, bool):
            slope = param
        else:
            raise ValueError(f"calculate_gain: negative_slope {param} is not a valid number")
        return math.sqrt(2.0 / (1 + slope**2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"calculate_gain: unsupported nonlinearity {nonlinearity!r}")


def _calculate_fan_in_and_fan_out(tensor: Any) -> tuple[int, int]:
    """``(fan_in, fan_out)``: ``shape[1]`` and ``shape[0]`` times the receptive field (the
    product of the remaining axes), as PyTorch computes them."""
    shape = tuple(tensor.shape)
    if len(shape) < 2:
        raise ValueError(
            f"nn.init: fan in and fan out can not be computed for a tensor with fewer than 2 dimensions (shape {shape})"
        )
    receptive = math.prod(shape[2:])
    return shape[1] * receptive, shape[0] * receptive


def _calculate_correct_fan(tensor: Any, mode: str) -> int:
    mode = mode.lower()
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"nn.init: mode {mode!r} not supported, please use one of 'fan_in', 'fan_out'")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def _gen(generator: Any) -> Generator:
    return generator_for(generator, "nn.init")


def _dtype(tensor: Any) -> np.dtype:
    """The dtype draws are made in: the tensor's (a float), as PyTorch fills it."""
    dt = np.dtype(tensor.dtype)
    return dt if dt.kind == "f" else np.dtype(np.float64)


def _write(tensor: Any, values: Any) -> Any:
    """Write host ``values`` into ``tensor`` in place (a Tensor, or a raw backend array)."""
    if isinstance(tensor, Tensor):
        with no_grad():
            tensor.copy_(np.broadcast_to(np.asarray(values, dtype=np.float64), tuple(tensor.shape)))
        return tensor
    if isinstance(tensor, np.ndarray):
        tensor[...] = values
        return tensor
    raise TypeError(f"nn.init: expected a Tensor, got {type(tensor).__name__}")


def _shape(tensor: Any) -> tuple[int, ...]:
    return tuple(tensor.shape)


def _draws(tensor: Any, maker: str, gen: Generator, dt: np.dtype, *params: float) -> np.ndarray:
    """``rt.<maker>`` draws for ``tensor`` in its memory order, as PyTorch's in-place fill
    (``tensor.normal_()``) walks it, normals of a tensor that is not contiguous one at a time."""
    strides = tensor.stride() if isinstance(tensor, Tensor) else tuple(s // tensor.itemsize for s in tensor.strides)
    return rt.fill_draws(gen, maker, _shape(tensor), strides, dt, *params)


def uniform_(tensor: Tensor, a: float = 0.0, b: float = 1.0, generator: Any = None) -> Tensor:
    """Fill with draws from U(a, b)."""
    if isinstance(tensor, Tensor):  # (PyTorch's: the tensor's own fill, in its memory order; complex by parts)
        with no_grad():
            return tensor.uniform_(a, b, generator=generator)
    return _write(tensor, _draws(tensor, "uniform", _gen(generator), _dtype(tensor), a, b))


def normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, generator: Any = None) -> Tensor:
    """Fill with draws from N(mean, std²)."""
    if isinstance(tensor, Tensor):
        with no_grad():
            return tensor.normal_(mean, std, generator=generator)
    return _write(tensor, _draws(tensor, "normal", _gen(generator), _dtype(tensor), mean, std))


def trunc_normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, a: float = -2.0, b: float = 2.0,
                  generator: Any = None) -> Tensor:  # fmt: skip
    """Fill with draws from N(mean, std²) truncated to ``[a, b]`` (absolute bounds, as in PyTorch).

    PyTorch's two rejection samplers, with its draws: where most of the normal's mass is
    inside (over 0.3), normal draws redrawn where outside; else uniform candidates in
    ``[a, b]`` accepted with the normal's density relative to its peak there.
    """
    if not a < b:
        raise ValueError(f"trunc_normal_: need a < b, got a={a}, b={b}")
    if mean < a - 2 * std or mean > b + 2 * std:
        _user_warn("mean is more than 2 std from [a, b] in nn.init.trunc_normal_. "
                      "The distribution of values may be incorrect.")  # fmt: skip
    t = tensor if isinstance(tensor, Tensor) else Tensor(np.asarray(tensor))
    if t._dev.meta:  # (no values to draw, nor to test against the bounds: PyTorch's meta fills are no-ops)
        return t

    def cdf(x: float) -> float:
        return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0

    with no_grad():  # (PyTorch's in-place chain: each redraw into an empty_like, as its layouts go)
        if cdf((b - mean) / std) - cdf((a - mean) / std) > 0.3:
            lo, hi = (t.new_tensor(v).item() for v in (a, b))  # (the bounds in the tensor's dtype)
            result = t.normal_(mean, std, generator=generator)
            while bool(((result < lo) | (result > hi)).any()):
                outside = (result < lo) | (result > hi)
                result = where(outside, empty_like(result).normal_(mean, std, generator=generator), result)
        else:
            mode = max(a, min(mean, b))
            log_peak = -0.5 * ((mode - mean) / std) ** 2

            def rejected(cand: Tensor, accept: Tensor) -> Tensor:
                log_pdf = ((cand - mean) / std) ** 2 * -0.5 - log_peak
                return accept.uniform_(generator=generator).log_() > log_pdf

            accept = empty_like(t)
            result = t.uniform_(a, b, generator=generator)
            pending = rejected(result.clone(), accept)
            cand = empty_like(t)
            while bool(pending.any()):
                cand.uniform_(a, b, generator=generator)
                result = where(pending, cand, result)
                pending = where(pending, rejected(cand, accept), pending)
        if result is not t:
            t.copy_(result)
    return _write(tensor, t.numpy()) if t is not tensor else tensor


def constant_(tensor: Tensor, val: float) -> Tensor:
    """Fill with ``val``."""
    return _write(tensor, np.full(_shape(tensor), val, dtype=np.float64))


def ones_(tensor: Tensor) -> Tensor:
    """Fill with 1."""
    return constant_(tensor, 1.0)


def zeros_(tensor: Tensor) -> Tensor:
    """Fill with 0."""
    return constant_(tensor, 0.0)


def eye_(tensor: Tensor) -> Tensor:
    """The identity matrix, in a 2-D tensor (rectangular: ones on the main diagonal)."""
    if len(_shape(tensor)) != 2:
        raise ValueError(f"eye_: only tensors with 2 dimensions are supported, got shape {_shape(tensor)}")
    return _write(tensor, np.eye(*_shape(tensor)))


def dirac_(tensor: Tensor, groups: int = 1) -> Tensor:
    """The Dirac delta in a 3-, 4- or 5-D conv weight: each of the first ``min(out, in)``
    channels of each group passes its input channel through unchanged."""
    shape = _shape(tensor)
    if len(shape) not in (3, 4, 5):
        raise ValueError(f"dirac_: only tensors with 3, 4, or 5 dimensions are supported, got shape {shape}")
    if shape[0] % groups != 0:
        raise ValueError(f"dirac_: dim 0 ({shape[0]}) must be divisible by groups ({groups})")
    out_per_group = shape[0] // groups
    out = np.zeros(shape)
    centre = tuple(s // 2 for s in shape[2:])
    for g in range(groups):
        for d in range(min(out_per_group, shape[1])):
            out[(g * out_per_group + d, d) + centre] = 1
    return _write(tensor, out)


def xavier_uniform_(tensor: Tensor, gain: float = 1.0, generator: Any = None) -> Tensor:
    """U(-a, a) with ``a = gain * sqrt(6 / (fan_in + fan_out))`` (Glorot and Bengio, 2010)."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    a = math.sqrt(3.0) * std
    return uniform_(tensor, -a, a, generator)


def xavier_normal_(tensor: Tensor, gain: float = 1.0, generator: Any = None) -> Tensor:
    """N(0, std²) with ``std = gain * sqrt(2 / (fan_in + fan_out))``."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return normal_(tensor, 0.0, std, generator)


def _kaiming_std(tensor: Tensor, a: float, mode: str, nonlinearity: str) -> float | None:
    if 0 in _shape(tensor):
        _user_warn("Initializing zero-element tensors is a no-op")
        return None
    fan = _calculate_correct_fan(tensor, mode)
    return calculate_gain(nonlinearity, a) / math.sqrt(fan)


def kaiming_uniform_(tensor: Tensor, a: float = 0, mode: str = "fan_in", nonlinearity: str = "leaky_relu",
                     generator: Any = None) -> Tensor:  # fmt: skip
    """U(-bound, bound) with ``bound = gain * sqrt(3 / fan)`` (He et al., 2015); ``a`` is the
    negative slope of a leaky ReLU, ``mode`` picks the fan."""
    std = _kaiming_std(tensor, a, mode, nonlinearity)
    if std is None:
        return tensor
    bound = math.sqrt(3.0) * std
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor: Tensor, a: float = 0, mode: str = "fan_in", nonlinearity: str = "leaky_relu",
                    generator: Any = None) -> Tensor:  # fmt: skip
    """N(0, std²) with ``std = gain / sqrt(fan)`` (He et al., 2015)."""
    std = _kaiming_std(tensor, a, mode, nonlinearity)
    if std is None:
        return tensor
    return normal_(tensor, 0.0, std, generator)


def orthogonal_(tensor: Tensor, gain: float = 1, generator: Any = None) -> Tensor:
    """A (semi-)orthogonal matrix times ``gain``; axes after the first are flattened
    (Saxe et al., 2013): the Q of a Gaussian matrix's QR, signs fixed by R's diagonal."""
    shape = _shape(tensor)
    if len(shape) < 2:
        raise ValueError(f"orthogonal_: only tensors with 2 or more dimensions are supported, got shape {shape}")
    if 0 in shape:
        return tensor
    rows, cols = shape[0], math.prod(shape[1:])
    flat = rt.normal(_gen(generator), (rows, cols), _dtype(tensor), 0.0, 1.0)
    if rows < cols:
        flat = flat.T
    q, r = np.linalg.qr(flat)
    q = q * np.sign(np.diag(r))
    if rows < cols:
        q = q.T
    return _write(tensor, (gain * q).reshape(shape))


def sparse_(tensor: Tensor, sparsity: float, std: float = 0.01, generator: Any = None) -> Tensor:
    """A 2-D tensor of N(0, std²) draws with a fraction ``sparsity`` of each column zero."""
    shape = _shape(tensor)
    if len(shape) != 2:
        raise ValueError(f"sparse_: only tensors with 2 dimensions are supported, got shape {shape}")
    rows, cols = shape
    out = _draws(tensor, "normal", _gen(generator), _dtype(tensor), 0.0, std)
    zeros = int(math.ceil(sparsity * rows))
    for c in range(cols):  # (PyTorch's permutations come from the default generator, whatever ``generator`` is)
        out[rt.randperm(_gen(None), rows)[:zeros], c] = 0
    return _write(tensor, out)


# -- PyTorch's deprecated names without the underscore: each warns, then calls its successor -------------
def _deprecated(successor: Any) -> Any:
    new_name = successor.__name__
    old_name = new_name[:-1]

    def deprecated(*args: Any, **kwargs: Any) -> Any:
        _user_warn(f"`nn.init.{old_name}` is now deprecated in favor of `nn.init.{new_name}`.", FutureWarning)  # fmt: skip
        return successor(*args, **kwargs)

    deprecated.__name__ = deprecated.__qualname__ = old_name
    deprecated.__doc__ = f"Deprecated (as in PyTorch): use :func:`{new_name}`."
    return deprecated


uniform = _deprecated(uniform_)
normal = _deprecated(normal_)
constant = _deprecated(constant_)
eye = _deprecated(eye_)
dirac = _deprecated(dirac_)
xavier_uniform = _deprecated(xavier_uniform_)
xavier_normal = _deprecated(xavier_normal_)
kaiming_uniform = _deprecated(kaiming_uniform_)
kaiming_normal = _deprecated(kaiming_normal_)
orthogonal = _deprecated(orthogonal_)
sparse = _deprecated(sparse_)
