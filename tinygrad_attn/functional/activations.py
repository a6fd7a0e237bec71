"""PyTorch's remaining activation functions (``F.celu``, ``F.hardswish``, ...), each a
composite of primitives; :mod:`tinygrad_attn.functional` exports them, and
:mod:`tinygrad_attn.nn.activation` wraps each in a module.

Kinks follow PyTorch's gradients: ``hardtanh`` and ``hardsigmoid`` pass none at their
bounds; ``hardswish``'s slope at ``-3`` is ``-1/2`` and at ``3`` is ``3/2`` (its inner
formula's, as PyTorch's backward computes it).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..engine.composite import composite
from ..engine.declare import accepts, check_dtype, public
from ..engine.layout import row_major_result
from ..ops.saved import ZeroDerivative, saved_for_backward
from ..random import draw
from ..tensors._tensor import Tensor, where
from ..tensors.dtypes import UnsupportedDtypeError
from ..tensors.mutation.inplace import apply_inplace
from ..tensors.shape import dims
from .checks import implicit_dim, same_dtype
from .checks import tensor_arg as _tensor

# SELU's constants (Klambauer et al., 2017), as PyTorch spells them
_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def _float(x: Any, op: str) -> Tensor:
    x = _tensor(x, op)
    if x.dtype.kind not in "fc":
        raise UnsupportedDtypeError(
            f"{op}: not defined for {x.dtype} tensors (PyTorch's neither); convert with .float()"
        )
    return x


def _softplus_stable(z: Tensor) -> Tensor:
    """``log(1 + exp(z))`` as ``max(z, 0) + log(1 + exp(-|z|))``: nothing overflows. ``-|z|``
    is spelled as a ``where`` on ``z > 0``, not ``abs``: the derivative of ``abs`` at 0 is 0,
    which would make the second derivative there 0 instead of the true 1/4; this way the
    slope at 0 is the true 1/2 and the curvature the true 1/4. ``log1p``: far out on the
    negative side ``1 + exp(z)`` rounds to 1 (softplus(-31) was 0 in float32, PyTorch's 2e-14)."""
    pos = z > 0
    return where(pos, z, 0.0) + where(pos, -z, z).exp().log1p()


def _expm1_negative(x: Tensor) -> Tensor:
    """``expm1(x)`` where ``x <= 0`` matters: the ELU family's negative side. The positive side
    is replaced by 0, so that no overflowing ``exp`` is made and hidden by a ``where``. At 0
    itself it is ``x`` (expm1's tangent there): the slope is expm1's, 1, and the second
    derivative 0, as PyTorch's, whose ``elu_double_backward`` counts only ``x < 0``; -0.0 stays
    -0.0. (NaN: the caller gives it the positive side's gradient, as PyTorch's.)"""
    from .. import ops  # noqa: PLC0415 - ops is loaded by then

    below = x < 0
    return where(below, ops.Expm1.apply(where(below, x, 0.0)), x)


@public(function=True, functional=True)
@composite("celu")
def celu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:  # noqa: A002 - PyTorch's names
    """``x`` where positive, ``alpha * (exp(x / alpha) - 1)`` elsewhere."""
    x = _float(input, "celu")
    if inplace:
        return _in_place(x, "celu", celu, alpha=alpha)
    if alpha == 0:
        raise RuntimeError("celu: alpha must not be 0 (it divides the input)")
    return saved_for_backward(where(x <= 0, _expm1_negative(x * (1.0 / alpha)) * alpha, x), x)  # (as PyTorch's)


@public(function=False, functional=True)
@composite("selu")
def selu(input: Tensor, inplace: bool = False) -> Tensor:  # noqa: A002
    """``scale * elu(x, alpha)`` with the self-normalising constants."""
    x = _float(input, "selu")
    if inplace:
        return _in_place(x, "selu", selu)
    out = where(x <= 0, _expm1_negative(x) * (_SELU_ALPHA * _SELU_SCALE), x * _SELU_SCALE)
    return saved_for_backward(out, x)  # (as PyTorch's, it keeps x)


@public(function=False, functional=True)
@composite("hardtanh")
def hardtanh(input: Tensor, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False) -> Tensor:  # noqa: A002
    """``x`` clipped to ``[min_val, max_val]``; no gradient at or beyond the bounds."""
    x = _tensor(input, "hardtanh")
    if min_val > max_val:
        raise ValueError(f"hardtanh: min_val ({min_val}) must not exceed max_val ({max_val})")
    if inplace:
        return _in_place(x, "hardtanh", hardtanh, min_val=min_val, max_val=max_val)
    if x.dtype.kind == "b":
        raise RuntimeError(f"Bool inputs not supported for hardtanh (shape {tuple(x.shape)}); convert with .long()")
    if x.dtype.kind in "iu":  # (an integer tensor stays one, its bounds as integers: PyTorch's hardtanh and relu6)
        min_val, max_val = int(min_val), int(max_val)
        if x.dtype.kind == "u" and min(min_val, max_val) < 0:
            raise RuntimeError(f"cannot do hardtanh on an unsigned type with negative limits "
                               f"(min_val {min_val}, max_val {max_val}, dtype {x.dtype})")  # fmt: skip
        min_val, max_val = (_integer_scalar("hardtanh", v, x.dtype) for v in (min_val, max_val))
    out = where(x <= min_val, min_val, where(x >= max_val, max_val, x))
    return saved_for_backward(out, x, piecewise=True)  # (as PyTorch's, it keeps x)


@public(function=False, functional=True)
def relu6(input: Tensor, inplace: bool = False) -> Tensor:  # noqa: A002
    """``min(max(x, 0), 6)`` (PyTorch's ``hardtanh(x, 0, 6)``)."""
    return hardtanh(input, 0.0, 6.0, inplace)


@public(function=False, functional=True)
@composite("hardsigmoid")
def hardsigmoid(input: Tensor, inplace: bool = False) -> Tensor:  # noqa: A002
    """``relu6(x + 3) / 6``: 0 below -3, 1 above 3, a line between."""
    x = _float(input, "hardsigmoid")
    if inplace:
        return _in_place(x, "hardsigmoid", hardsigmoid)
    out = where(x <= -3.0, 0.0, where(x >= 3.0, 1.0, x * (1.0 / 6.0) + 0.5))
    out = where(x == x, out, x.detach())  # (NaN: its value, and no gradient, as PyTorch's)
    return saved_for_backward(out, x, piecewise=True)  # (as PyTorch's, it keeps x)


@public(function=False, functional=True)
@composite("hardswish")
def hardswish(input: Tensor, inplace: bool = False) -> Tensor:  # noqa: A002
    """``x * relu6(x + 3) / 6``."""
    x = _float(input, "hardswish")
    if inplace:
        return _in_place(x, "hardswish", hardswish)
    # PyTorch's pieces and kinks: x * 0 up to -3 (-0.0 there, NaN at -inf; gradient 0 at -3), the
    # parabola on (-3, 3), x from 3 on (gradient 1 at 3); the parabola reads x clamped, so that an
    # infinite x gives no NaN through the branch not taken
    mid = x.clamp(-3.0, 3.0)
    return where(x <= -3.0, x * 0.0, where(x < 3.0, mid * (mid + 3.0) * (1.0 / 6.0), x))


@public(function=False, functional=True)
@composite("logsigmoid")
def logsigmoid(input: Tensor) -> Tensor:  # noqa: A002
    """``log(sigmoid(x)) = -softplus(-x)``, without overflow."""
    x = _float(input, "logsigmoid")
    return saved_for_backward(-_softplus_stable(-x), x)  # (as PyTorch's, it keeps x)


@public(function=False, functional=True)
@composite("mish")
def mish(input: Tensor, inplace: bool = False) -> Tensor:  # noqa: A002
    """``x * tanh(softplus(x))``."""
    x = _float(input, "mish")
    if inplace:
        return _in_place(x, "mish", mish)
    return x * _softplus_stable(x).tanh()


@public(function=False, functional=True)
@composite("softsign")
def softsign(input: Tensor) -> Tensor:  # noqa: A002
    """``x / (1 + |x|)``; integers divide into float32, as PyTorch's (a composite of ``/``: ``|x| + 1`` is
    taken in the input's dtype, so int8's 127 wraps to -128 there, as in PyTorch)."""
    x = _tensor(input, "softsign")
    if x.dtype.kind == "b":
        raise UnsupportedDtypeError(
            f"softsign: not defined for bool tensors (shape {tuple(x.shape)}); convert with .float()"
        )
    return x / (x.abs() + 1)


@public(function=False, functional=True)
def softmin(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype: Any = None) -> Tensor:  # noqa: A002
    """``softmax(-x)`` along ``dim`` (without ``dim``, PyTorch's legacy choice of axis)."""
    x = _tensor(input, "softmin")
    check_dtype("softmin", x, "numeric")
    x = -x  # (in the input's dtype, before the cast to ``dtype``, as PyTorch's: an unsigned input wraps)
    if dtype is not None:
        x = x.astype(dtype)
    if dim is None:
        dim = implicit_dim(x.ndim, "softmin")
    return x.softmax(dims.one(x.shape, dim, "softmin"))  # (Tensor.softmax is F.softmax)


@public(function=True, functional=True)
@accepts(("uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64"))
@composite("threshold")
def threshold(input: Tensor, threshold: float, value: float, inplace: bool = False) -> Tensor:  # noqa: A002
    """``x`` where ``x > threshold``, ``value`` elsewhere (``inplace=True``: written into ``x``)."""
    x = _tensor(input, "threshold")
    if inplace:
        return _in_place(x, "threshold", globals()["threshold"], threshold=threshold, value=value)
    # (NaN stays NaN: only x <= threshold is replaced, as PyTorch's; the result has x's dtype, an
    # integer tensor's value cut to an integer as PyTorch casts it)
    if x.dtype.kind in "iu":
        threshold, value = (_integer_scalar("threshold", v, x.dtype) for v in (threshold, value))
    return saved_for_backward(where(x <= threshold, value, x), x, piecewise=True)  # (as PyTorch's, it keeps x)


def _integer_scalar(op: str, v: Any, dtype: Any) -> int:
    """``v`` as PyTorch's integer kernel of ``dtype`` takes a number: cut toward zero, a negative integer
    wrapped into an unsigned dtype (-1 is 255 in uint8, -1.5 does not fit); a RuntimeError where it does not fit."""
    info = np.iinfo(dtype)
    f = float(v)
    wraps = info.min == 0 and isinstance(v, int | np.integer)  # (as far below zero as the largest value above)
    low = -info.max if wraps else info.min
    if not (math.isfinite(f) and low <= f <= info.max):
        raise RuntimeError(f"{op}: value {v!r} cannot be converted to type {dtype} without overflow")
    return int(f) % (info.max + 1) if info.min == 0 else int(f)


@public(function=False, functional=True)
def glu(input: Tensor, dim: int = -1) -> Tensor:  # noqa: A002
    """The gated linear unit: ``input`` split in two halves ``a, b`` along ``dim``, ``a * sigmoid(b)``."""
    x = _float(input, "glu")
    if x.ndim == 0:
        raise RuntimeError("glu: does not support scalars (0-dimensional tensors)")
    n = x.shape[dims.one(x.shape, dim, "glu")]
    if n % 2:
        raise RuntimeError(
            f"glu: halving dimension must be even, but dimension {dim} of shape {tuple(x.shape)} is size {n}"
        )
    a, b = x.split(n // 2, dim)
    return a * b.sigmoid()


def _in_place(x: Tensor, name: str, fn: Any, **kw: Any) -> Tensor:
    """PyTorch's ``inplace=True``: ``fn(x, **kw)`` written into ``x``'s own memory and
    ``x`` returned, through the one in-place mechanism (``inplace.apply_inplace``: the
    version bump, the rebased history, the refusal for a leaf that requires grad). Here,
    not in functional.py (whose activations use it too): functional imports this module."""
    return apply_inplace(x, name + "_", lambda t: fn(t, **kw))


# -- shrinkage, learned and randomised slopes, and the in-place spellings -------------------


@public(function=True, method=True, functional=True)
@composite("hardshrink")
def hardshrink(input: Tensor, lambd: float = 0.5) -> Tensor:  # noqa: A002
    """``x`` where ``|x| > lambd``, 0 elsewhere (no gradient at ``±lambd``, as PyTorch's)."""
    x = _float(input, "hardshrink")
    # (a NaN is not within lambd: it passes, with its gradient, as PyTorch's; it keeps x, as PyTorch's)
    return saved_for_backward(where(x.abs() <= lambd, 0.0, x), x)


@public(function=False, functional=True)
@composite("softshrink")
def softshrink(input: Tensor, lambd: float = 0.5) -> Tensor:  # noqa: A002
    """``x`` moved ``lambd`` towards 0, and 0 within ``[-lambd, lambd]``."""
    x = _float(input, "softshrink")
    if lambd < 0:
        raise RuntimeError(f"softshrink: lambda must be greater or equal to 0, but found to be {lambd}.")
    # (a NaN is not within lambd: NaN out, its gradient passed, as PyTorch's)
    return saved_for_backward(where(x.abs() <= lambd, 0.0, x - lambd * x.sign().detach()), x)


@public(function=False, functional=True)
@composite("tanhshrink")
def tanhshrink(input: Tensor) -> Tensor:  # noqa: A002
    """``x - tanh(x)``."""
    x = _tensor(input, "tanhshrink")
    check_dtype("tanhshrink", x, "not_bool")  # (an integer's is a float, as PyTorch's x - tanh(x))
    return x - x.tanh()


@public(function=True, method=True, functional=True)
@composite("prelu")
def prelu(input: Tensor, weight: Tensor) -> Tensor:  # noqa: A002
    """``x`` where positive, ``weight * x`` elsewhere; ``weight`` one slope, or one per channel
    (axis 1): PyTorch's ``F.prelu``."""
    x, w = _float(input, "prelu"), _tensor(weight, "prelu")
    same_dtype("prelu", x, ("weight", w))  # (PyTorch's prelu promotes none)
    given = w
    if w.ndim > 1:
        raise RuntimeError(f"prelu: weight must be a scalar or 1-D, got shape {tuple(w.shape)}")
    n = w.numel()
    if n != 1:
        c = x.shape[1] if x.ndim >= 2 else 1  # (PyTorch's count: a vector has one channel)
        if c != n:
            raise RuntimeError(
                f"prelu: mismatch of parameter numbers and input channel size. Found parameter numbers = {n} and "
                f"channel size = {c} (input of shape {tuple(x.shape)})."
            )
        w = w.reshape((n,) + (1,) * (x.ndim - 2))
    elif w.ndim:
        w = w.reshape(())
    # PyTorch's kernel: x > 0 the identity, else (0, -0.0, NaN) the slope w. Its second derivatives
    # count only x < 0 (and NaN), and its weight's gradient is 0 where x > 0 (also at x = inf, where
    # a where's masked w * x would give 0 * inf): the slope's side is split into x < 0 (and NaN),
    # where w * x is differentiated in both, and x == 0, where w is a constant with x's slope.
    # (Each piece reads x through a where of its own: an infinite w's 0 * inf stays in the masked side.)
    negative = where(x >= 0, 0.0, x)
    at_zero = where(x == 0, x, 0.0)
    slope_at_zero = ZeroDerivative.apply(w.detach(), w) if w.requires_grad else w
    out = where(x > 0, x, where(x == 0, at_zero * slope_at_zero, w * negative))
    return saved_for_backward(out, x, given)  # (as PyTorch's, it keeps both)


_RRELU_DEFAULTS = (1.0 / 8.0, 1.0 / 3.0)


@public(function=True, functional=True)
@composite("rrelu")
def rrelu(input: Tensor, lower: float = _RRELU_DEFAULTS[0], upper: float = _RRELU_DEFAULTS[1],  # noqa: A002
          training: bool = False, inplace: bool = False) -> Tensor:  # fmt: skip
    """Randomised leaky ReLU: negative ``x`` times a slope drawn uniformly from ``[lower,
    upper]`` for each element while training, times the mean slope otherwise."""
    x = _float(input, "rrelu")
    if lower > upper:
        raise RuntimeError(f"rrelu: Lower bound should be less than or equal to the upper bound (lower={lower}, "
                           f"upper={upper})")  # fmt: skip
    if inplace:
        return _in_place(x, "rrelu", rrelu, lower=lower, upper=upper, training=training)
    if not training:  # (PyTorch's leaky_relu, which keeps x)
        return row_major_result(saved_for_backward(where(x > 0, x, x * ((lower + upper) / 2.0)), x))
    check_dtype("rrelu_with_noise_out_cpu", x, "no_float16")  # (the noise kernel has bfloat16, not float16)
    slope = draw("rrelu", x.shape, x.dtype, x.detach(), p=(lower, upper))
    return where(x > 0, x, x * slope)


@public(function=True, functional=True)
def rrelu_(input: Tensor, lower: float = _RRELU_DEFAULTS[0], upper: float = _RRELU_DEFAULTS[1],  # noqa: A002
           training: bool = False) -> Tensor:  # fmt: skip
    """``rrelu(..., inplace=True)``."""
    return rrelu(input, lower, upper, training, inplace=True)


@public(function=False, functional=True)
def relu_(input: Tensor) -> Tensor:  # noqa: A002
    """``relu`` written into ``input``."""
    return _in_place(_tensor(input, "relu_"), "relu", lambda t: t.relu())


@public(function=True, functional=True)
def celu_(input: Tensor, alpha: float = 1.0) -> Tensor:  # noqa: A002
    """``celu`` written into ``input``."""
    return celu(input, alpha, inplace=True)


@public(function=True, functional=True)
def selu_(input: Tensor) -> Tensor:  # noqa: A002
    """``selu`` written into ``input``."""
    return selu(input, inplace=True)


@public(function=False, functional=True)
def hardtanh_(input: Tensor, min_val: float = -1.0, max_val: float = 1.0) -> Tensor:  # noqa: A002
    """``hardtanh`` written into ``input``. PyTorch's in-place kernel has no check of the bounds: with
    ``min_val > max_val`` every entry becomes ``max_val``, with no gradient."""
    if min_val > max_val:
        min_val = max_val
    return hardtanh(input, min_val, max_val, inplace=True)


@public(function=True, functional=True)
def threshold_(input: Tensor, threshold: float, value: float) -> Tensor:  # noqa: A002
    """``threshold`` written into ``input``."""
    return globals()["threshold"](input, threshold, value, inplace=True)
