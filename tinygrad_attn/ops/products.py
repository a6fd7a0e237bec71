"""Products and log-sum-exp scans whose gradient is PyTorch's own formula, not the derivative of
the forward: ``prod``, ``cumprod`` and ``logcumsumexp``.

The two agree at finite non-zero points; they part at ±inf, NaN and (for the scans) zeros, where
PyTorch divides by the input (``result / x`` is NaN at an infinite entry) or takes the log of
the gradient. The formulas are written in tensor ops
(:mod:`tinygrad_attn.tensors.reduce.product_gradients`), so that a recorded gradient
(``create_graph=True``) is differentiated as PyTorch differentiates its backward.
"""

from __future__ import annotations

import numpy as np

from ..engine import function as _function
from ..engine.function import Function
from ..engine.switches import no_grad
from .scan import accumulated


def _scan(ns, name: str, a, axis: int):
    """The array namespace's running product (``cumulative_prod`` in the 2024 array API)."""
    raw = ns.device.xp
    fn = getattr(raw, "cumulative_prod", None) or getattr(raw, name)
    return fn(a, axis=axis, dtype=a.dtype)


def _in_tensor_ops(formula, g, ns, x, out, *args):
    """``formula(g, x, out, *args, recording)`` on tensors: recorded when the pass records,
    otherwise on wrapped arrays without a graph (its arrays returned)."""
    if ns.recording:
        return formula(g, x, out, *args, True)
    wrap = _function.Tensor._wrap
    with no_grad(), np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        return formula(wrap(g, ns.device), wrap(x, ns.device), wrap(out, ns.device), *args, False)._data


class Prod(Function):
    """The product over ``axis`` (None: every element), ``args = (axis, keepdims)``; the gradient
    is ``g * result / x`` where ``x`` holds no zero, the products of the other entries otherwise."""

    __slots__ = ()
    name = "prod"
    keep = (0,)

    def forward(self, ns, a):
        axis, keepdims = self.args
        with np.errstate(over="ignore", invalid="ignore"):
            return ns.device.xp.prod(a, axis=axis, keepdims=keepdims, dtype=a.dtype)

    def backward(self, g, ns, inputs, out):
        from ..tensors.reduce.product_gradients import prod_gradient  # noqa: PLC0415 - built on the ops

        return (_in_tensor_ops(prod_gradient, g, ns, inputs[0], out, *self.args),)


class Cumprod(Function):
    """Running products along ``axis`` (``args``); the gradient is PyTorch's: a reversed running
    sum of ``g * result`` divided by ``x`` where ``x`` holds no zero."""

    __slots__ = ()
    name = "cumprod"
    keep = (0,)

    def forward(self, ns, a):
        if a.ndim == 0:  # (dim 0 of a 0-d tensor: a copy of itself)
            return a * 1
        with np.errstate(over="ignore", invalid="ignore"):
            return accumulated(ns, a, lambda x: _scan(ns, "cumprod", x, self.args))

    def backward(self, g, ns, inputs, out):
        from ..tensors.reduce.product_gradients import cumprod_gradient  # noqa: PLC0415 - built on the ops

        return (_in_tensor_ops(cumprod_gradient, g, ns, inputs[0], out, self.args),)


def _logaddexp(xp, a, b):
    """The larger plus ``log1p(exp(smaller - larger))``; two equal infinities give themselves
    (their difference would be NaN); a NaN on either side gives NaN."""
    hi, lo = xp.maximum(a, b), xp.minimum(a, b)
    out = hi + xp.log1p(xp.exp(lo - hi))
    return xp.where((a == b) & xp.isinf(a), a, out)


def _complex_logcumsumexp(xp, a, axis):
    """PyTorch's complex scan, one entry after the other: each running value ``c`` and the next
    entry ``x`` make ``max + log1p(exp(min - max))`` (``min``/``max`` by real part), so that the
    imaginary part keeps the branch of the larger term (a parallel scan would wrap it elsewhere)."""
    a = xp.moveaxis(a, axis, 0)
    out = xp.empty_like(a)
    c = xp.full(a.shape[1:], complex(-np.inf, 0.0), dtype=a.dtype)
    with np.errstate(all="ignore"):
        for i in range(a.shape[0]):
            x = a[i]
            x_low = x.real < c.real
            lo, hi = xp.where(x_low, x, c), xp.where(x_low, c, x)
            both_inf = xp.isinf(lo.real) & (lo.real == hi.real)
            step = hi + xp.log1p(xp.exp(lo - hi))
            step = xp.where(both_inf, xp.where(lo.real < 0, lo, xp.log(xp.exp(lo) + xp.exp(hi))), step)
            # (a NaN on either side, in either part, gives NaN in both parts, as PyTorch's)
            c = xp.where(xp.isnan(c) | xp.isnan(x), complex(np.nan, np.nan), step)
            out[i] = c
    return xp.moveaxis(out, 0, axis)


class Logcumsumexp(Function):
    """``log(cumsum(exp(x)))`` along ``axis`` (``args``) by doubling steps, each a log-add-exp with
    the entries ``s`` places before; the gradient is PyTorch's (through logs of ``|g|``)."""

    __slots__ = ()
    name = "logcumsumexp"
    keep = (0,)

    def forward(self, ns, a):
        if a.ndim == 0:  # (dim 0 of a 0-d tensor: a copy of itself)
            return a * 1
        return accumulated(ns, a, lambda x: self._scan(ns, x))

    def _scan(self, ns, a):
        xp = ns.device.xp
        axis = self.args
        if ns.device.np_dtype(a.dtype).kind == "c":  # (a backend dtype: the array API has no .kind)
            return _complex_logcumsumexp(xp, a, axis)
        n = a.shape[axis]
        lead = (slice(None),) * axis
        s = 1
        dev = ns.device._array_device
        on_device = {"device": dev} if dev is not None else {}
        with np.errstate(invalid="ignore", over="ignore"):
            while s < n:
                pad = ns.full(a.shape[:axis] + (s,) + a.shape[axis + 1 :], -np.inf, dtype=a.dtype, **on_device)
                a = _logaddexp(xp, a, ns.concat([pad, a[lead + (slice(0, n - s), ...)]], axis=axis))
                s *= 2
        return a if s > 1 else a * 1

    def forward_derivative(self, inputs, tangents, out):
        """PyTorch's forward formula (its backward one passes through logs of ``|g|``, undefined at 0):
        ``cumsum(t e) / cumsum(e)`` with ``e = exp(x - amax(x))`` along the axis."""
        x, t = inputs[0], tangents[0]
        if x.ndim == 0:
            return t * 1
        e = (x - x.amax(self.args, keepdim=True)).exp()
        return (t * e).cumsum(self.args) / e.cumsum(self.args)

    def backward(self, g, ns, inputs, out):
        from ..tensors.reduce.product_gradients import logcumsumexp_gradient  # noqa: PLC0415 - built on the ops

        return (_in_tensor_ops(logcumsumexp_gradient, g, ns, inputs[0], out, self.args),)
