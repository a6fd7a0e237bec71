"""Fused implementations of composite ops: one node, fewer passes over memory.

These are not primitives. Each is the fast path of a composite defined in
:mod:`tinygrad_attn.functional` from primitives; ``recompute`` calls that definition, and
the tests hold the two equal in value and gradient. Backward formulas are derived by
hand and run on raw arrays; higher orders go through the definition (see
``FusedFunction``).
"""

from __future__ import annotations

import functools
import math

import numpy as np

from ..engine.composite import FusedFunction
from ..engine.function import may_overwrite, rounded_to
from ..engine.layout import row_major_array
from . import cpu_kernels
from .alias import NoDerivative
from .elementwise import HyperbolicTangentBackward, blockwise, erf_array
from .linalg import batch_times_matrix, rows_shape
from .saved import depends_on

_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
_INV_SQRT_2 = 1.0 / math.sqrt(2.0)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)


def softmax_array(ns, x, axis):
    x = row_major_array(x)  # (PyTorch's softmax is row-major whatever its input's layout)
    k = ns.kernels
    if k is not None and axis in (-1, x.ndim - 1) and k.supports(x):  # CUDA: one kernel, one pass
        return k.softmax(x)
    if _numpy(ns) and x.ndim and x.size and axis in (-1, x.ndim - 1) and cpu_kernels.float_arrays(x):
        shift, scale = cpu_kernels.kernel("softmax_shift"), cpu_kernels.kernel("softmax_scale")
        if shift is not None:  # three passes over the rows instead of five, no temporaries
            e = np.empty_like(x)
            rows = e.reshape(-1, x.shape[-1])
            shift(x.reshape(rows.shape), rows)
            np.exp(rows, out=rows)  # (NumPy's exp: vectorised, where a compiled loop calls the C library's)
            scale(rows)
            return e
    e = ns.exp_inplace(x - ns.max(x, axis=axis, keepdims=True))
    e /= ns.sum(e, axis=axis, keepdims=True)
    return e


def softmax_backward_array(ns, g, y, axis, overwrite=False):
    """``y * (g - sum(g * y))``; with ``overwrite``, written over ``g``. Float16 computes in
    float32, rounded once (PyTorch's CPU kernel)."""
    if y.dtype == np.float16:
        f32 = np.float32
        return ns.astype(softmax_backward_array(ns, ns.astype(g, f32), ns.astype(y, f32), axis), np.float16)
    k = ns.kernels
    if k is not None and axis in (-1, y.ndim - 1) and k.supports(y):
        return k.softmax_backward(g, y)
    last = axis in (-1, y.ndim - 1)
    if last and _numpy(ns) and y.ndim and y.size and g.shape == y.shape and cpu_kernels.float_arrays(g, y):
        step = cpu_kernels.kernel("softmax_backward")
        if step is not None:  # one compiled loop over the rows: two passes, no temporary
            gx = g if overwrite else np.empty_like(g)
            n = y.shape[-1]
            step(g.reshape(-1, n), y.reshape(-1, n), gx.reshape(-1, n))
            return gx
    r = _rowsum_of_product(ns, g, y) if last else ns.sum(g * y, axis=axis, keepdims=True)
    if overwrite:
        g -= r
        gx = g
    else:
        gx = g - r
    gx *= y
    return gx


class SoftmaxAlongDim(FusedFunction):
    """Its backward reads only the output, so the input's values can go once computed
    (``keep = ()``); higher orders differentiate ``out * (g - sum(g * out))`` through
    the output, which is itself differentiable, instead of recomputing from the input."""

    __slots__ = ()
    name = "softmax"
    keep = ()

    def forward(self, ns, x):
        return softmax_array(ns, x, self.args)

    def backward(self, g, ns, inputs, out):
        if ns.recording:
            if ns.records_fused:  # a trace: one record of backward_arrays
                return ns.fused_backward(self, g, inputs, out)
            # create_graph: differentiable through the output (no recompute from the input); float16 in float32
            half = out.dtype == np.float16
            o, g = (out.astype(np.float32), g.astype(np.float32)) if half else (out, g)
            gx = o * (g - (g * o).sum(self.args, keepdims=True))
            return (gx.astype(np.float16) if half else gx,)
        return (softmax_backward_array(ns, g, out, self.args, may_overwrite(g)),)

    def backward_arrays(self, g, ns, inputs, out):
        # (g may be held elsewhere in a replayed program: a new array, never written over g)
        return (softmax_backward_array(ns, g, out, self.args),)

    def recompute(self, x):
        return self.definition(x, self.args)


def log_sum_exp_of_shifted(ns, z, axis, rows):
    """``log(sum(exp(z)))`` along ``axis`` (kept) of ``z``, the input less its max, as PyTorch's
    CPU log_softmax computes it. ``rows``: the axis is the innermost that is not 1 (PyTorch's
    ``_vec_log_softmax_lastdim``), whose kernel keeps each row's sum and its log in buffers of the
    input's dtype: for a float16 or bfloat16 input computed in float32 here (``rounded_to``), both are
    rounded to it, as there (checked against PyTorch: equal in every entry, where rounded once they
    were up to 100 float16 units apart near 0). Its kernel along another axis keeps float32."""
    s = ns.sum(ns.exp(z), axis=axis, keepdims=True)
    low = rounded_to() if rows else None
    if low is None:
        return ns.log(s)
    return ns.astype(ns.astype(ns.log(ns.astype(ns.astype(s, low), s.dtype)), low), s.dtype)


class LogSoftmaxAlongDim(FusedFunction):
    """Its backward reads only the output, as PyTorch's (``keep = ()``); higher orders
    differentiate ``g - exp(out) * sum(g)`` through the output."""

    __slots__ = ()
    name = "log_softmax"
    keep = ()

    def backward(self, g, ns, inputs, out):
        if ns.recording:
            if ns.records_fused:  # a trace: one record of backward_arrays
                return ns.fused_backward(self, g, inputs, out)
            # create_graph: differentiable through the output (no recompute from the input); float16 in float32
            half = out.dtype == np.float16
            o, g = (out.astype(np.float32), g.astype(np.float32)) if half else (out, g)
            gx = g - o.exp() * g.sum(self.args, keepdims=True)
            return (gx.astype(np.float16) if half else gx,)
        return self.backward_arrays(g, ns, inputs, out)

    def forward(self, ns, x):
        x = row_major_array(x)  # (PyTorch's log_softmax is row-major whatever its input's layout)
        z = x - ns.max(x, axis=self.args, keepdims=True)
        z -= log_sum_exp_of_shifted(ns, z, self.args, math.prod(x.shape[self.args % x.ndim + 1 :]) == 1)
        return z

    def backward_arrays(self, g, ns, inputs, out):
        if out.dtype == np.float16:  # (in float32, rounded once: PyTorch's CPU kernel)
            g32, out32 = ns.astype(g, np.float32), ns.astype(out, np.float32)
            return (ns.astype(g32 - ns.exp(out32) * ns.sum(g32, axis=self.args, keepdims=True), np.float16),)
        return (g - ns.exp(out) * ns.sum(g, axis=self.args, keepdims=True),)

    def recompute(self, x):
        return self.definition(x, self.args)


#: What masked positions are set to before a masked softmax: exp() of it is 0 in float32 and
#: float64, yet subtracting the row max from it cannot overflow (as -inf or -max would), and a
#: row that allows nothing is uniform (then zeroed) instead of NaN.
MASKED_FILL = -1e9


class MaskedSoftmax(SoftmaxAlongDim):
    """Softmax along ``axis`` (``args``) over the positions ``allowed`` (bool) holds True,
    zeros at the others and in a row that allows none: ``where(allowed, softmax(where(allowed,
    x, MASKED_FILL)), 0)`` in one node, as attention over padded keys computes it; inputs
    ``(x, allowed)``. Its output is zero where not allowed, so softmax's backward through
    the output, ``y * (g - sum(g * y))``, is already zero there: the backward is
    :class:`SoftmaxAlongDim`'s (reading the output only), with no gradient for the mask. A softmax
    (``isinstance``), so what looks for attention weights finds its output."""

    __slots__ = ()
    name = "masked_softmax"

    def forward(self, ns, x, allowed):
        y = super().forward(ns, ns.where(allowed, x, ns.scalar(MASKED_FILL, x)))
        return ns.where(allowed, y, ns.scalar(0.0, y))

    def backward(self, g, ns, inputs, out):
        if ns.recording and ns.records_fused:  # a trace: one record of backward_arrays
            return ns.fused_backward(self, g, inputs, out)
        return (*super().backward(g, ns, inputs, out), None)

    def backward_arrays(self, g, ns, inputs, out):
        return (*super().backward_arrays(g, ns, inputs, out), None)

    def recompute(self, x, allowed):
        return self.definition(x, allowed, self.args)


class AdditiveScore(FusedFunction):
    """Bahdanau's score of every (query, key) pair, ``v . tanh(q_i + k_j)``: inputs ``q``
    ``(..., Tq, h)`` and ``k`` ``(..., Tk, h)`` (projected already) and ``v`` (``h``
    weights, any shape), output ``(..., Tq, Tk)``, in one node where the primitive form is
    an add, a tanh, a product and a reshape (and four ops more in its backward). The
    ``tanh`` it computes is kept (``ctx``) for the backward."""

    __slots__ = ()
    name = "additive_score"
    reads_output = False

    def forward(self, ns, q, k, v):
        t = ns.tanh(ns.expand_dims(q, axis=-2) + ns.expand_dims(k, axis=-3))  # (..., Tq, Tk, h)
        self.ctx = t
        return ns.matmul(t, ns.reshape(v, (-1,)))

    def backward_arrays(self, g, ns, inputs, out):
        v = inputs[2]
        t = self.ctx
        ge = ns.expand_dims(g, axis=-1)  # (..., Tq, Tk, 1)
        gv = ns.sum(ns.reshape(ge * t, (-1, t.shape[-1])), axis=0)
        gpre = ns.apply(HyperbolicTangentBackward, ge * ns.reshape(v, (-1,)), t)  # d/d (q_i + k_j), through tanh's rule
        return ns.sum(gpre, axis=-2), ns.sum(gpre, axis=-3), ns.reshape(gv, v.shape)

    def recompute(self, q, k, v):
        return self.definition(q, k, v)


class Affine(FusedFunction):
    """``x @ weight.mT + bias`` in one node; ``bias`` may be None.

    The leading axes of ``x`` go into one 2-D product (BLAS runs one large product faster
    than a batch of small ones), and the bias is added in place to the product's fresh
    array instead of into a new one.
    """

    __slots__ = ()
    operands = ("input", "weight", "bias")  # pictures label which input is which
    name = "linear"
    reads_output = False

    def keeps_input(self, i: int) -> bool:
        # As PyTorch's: the input when the weight needs a gradient, the weight when the
        # input does, never the bias (so ``h = lin(x); h += x`` works)
        return i < 2 and getattr(self.inputs[1 - i], "requires_grad", False)

    def forward(self, ns, x, w, b):
        wt = ns.matrix_transpose(w)
        y = batch_times_matrix(ns, x, wt)  # a fresh array
        if b is not None:
            if b.dtype == y.dtype:
                y += b
            else:  # (promotes, as x @ w.mT + b would)
                y = y + b
        return y

    def backward_arrays(self, g, ns, inputs, out):
        x, w, b = inputs
        gx = batch_times_matrix(ns, g, w)
        g2 = ns.reshape(g, rows_shape(g))  # (rows, out)
        gw = ns.matmul(ns.matrix_transpose(g2), ns.reshape(x, rows_shape(x)))
        if b is None:
            return gx, gw, None
        ones = _ones_for_sums(ns, g2, g2.shape[0])  # the bias's gradient: column sums, as a product
        return gx, gw, (ns.sum(g2, axis=0) if ones is None else ns.matmul(ones, g2))

    def recompute(self, x, w, b):
        return self.definition(x, w, b)


def _numpy(ns):
    """Whether ``ns`` is a NumPy device's namespace (its functions take ``out=``; NumPy
    views and fancy stores work), not array_api_strict's, CuPy's or a stand-in's."""
    return getattr(getattr(ns, "device", None), "xp", None) is np


def _ones_for_sums(ns, x, n):
    """A vector of ``n`` ones to sum ``x``'s rows with as a matrix product, or None where
    a sum should be used instead. NumPy sums along a short last axis (layer norm's 128)
    a row at a time, three times slower than BLAS's product with ones; float32 and
    float64 only (BLAS has no other float)."""
    if str(x.dtype).rsplit(".", 1)[-1] not in ("float32", "float64"):  # (NumPy's or array_api_strict's)
        return None
    key = (ns.device, n, x.dtype)
    ones = _ONES.get(key)
    if ones is None:  # made once per size: only ever read
        if len(_ONES) > 256:
            _ONES.clear()
        ones = _ONES[key] = ns.full((n,), 1.0, dtype=x.dtype, **_dev_kw(ns))
    return ones


_ONES: dict = {}


class LayerNormalization(FusedFunction):
    """Normalise over the last axis, then scale and shift; weight and bias may be None."""

    __slots__ = ()
    name = "layer_norm"
    keep = (0, 1, 2)  # the input, weight and bias (and the statistics, in ctx), as PyTorch's
    reads_output = False

    def forward(self, ns, x, w, b):
        eps = self.args
        n = x.shape[-1]
        if _numpy(ns) and x.ndim and x.size and cpu_kernels.float_arrays(*(a for a in (x, w, b) if a is not None)):
            step = cpu_kernels.kernel("layer_norm_forward")
            if step is not None:  # one compiled loop over the rows
                rows = x.reshape(-1, n)
                xhat, y = np.empty_like(rows), np.empty_like(rows)
                rstd = np.empty((rows.shape[0], 1), x.dtype)
                step(rows, w if w is not None else rows[0], b if b is not None else rows[0], w is not None,
                     b is not None, float(eps), xhat, rstd.reshape(-1), y)  # fmt: skip
                self.ctx = (xhat.reshape(x.shape), rstd.reshape(x.shape[:-1] + (1,)))
                return y.reshape(x.shape)
        ones = _ones_for_sums(ns, x, n)
        if ones is None:
            mu = ns.sum(x, axis=-1, keepdims=True) / n
        else:  # row sums as a product with ones (see _ones_for_sums)
            mu = ns.expand_dims(ns.matmul(x, ones), axis=-1) / n
        xc = x - mu
        sq = xc * xc
        var = ns.sum(sq, axis=-1, keepdims=True) if ones is None else ns.expand_dims(ns.matmul(sq, ones), axis=-1)
        rstd = 1.0 / ns.sqrt(var / n + eps)
        xc *= rstd  # now x-hat
        self.ctx = (xc, rstd)
        y = xc * w if w is not None else xc + 0.0
        if b is not None:
            y += b
        return y

    def backward_arrays(self, g, ns, inputs, out):
        x, w, b = inputs
        xhat, rstd = self.ctx
        n = x.shape[-1]
        if (_numpy(ns) and x.ndim > 1 and x.size and g.shape == x.shape
                and cpu_kernels.float_arrays(*(a for a in (g, xhat, rstd, w) if a is not None))):  # fmt: skip
            step = cpu_kernels.kernel("layer_norm_backward")
            if step is not None:  # one compiled loop over the rows, the affine gradients summed in it
                rows = g.reshape(-1, n)
                gx = np.empty_like(rows)
                gw, gb = np.empty(n, np.float64), np.empty(n, np.float64)
                step(rows, xhat.reshape(-1, n), rstd.reshape(-1), w if w is not None else rows[0], w is not None, gx,
                     gw, gb)  # fmt: skip
                return (gx.reshape(x.shape), gw.astype(x.dtype) if w is not None else None,
                        gb.astype(x.dtype) if b is not None else None)  # fmt: skip
        if w is None:
            gx = g - ns.sum(g, axis=-1, keepdims=True) / n
            gx -= xhat * (ns.sum(g * xhat, axis=-1, keepdims=True) / n)
            gx *= rstd
            return gx, None, (g if b is not None else None)
        # With a weight, the two row sums of gx_hat = g * w are products with w (one pass
        # each, no temporary): sum(g w) = g @ w, and sum(g w xhat) = (g xhat) @ w, where
        # g xhat is the weight's gradient anyway (35% off this backward at (1024, 128)).
        gw = g * xhat
        gx = g * w
        gx -= ns.expand_dims(ns.matmul(g, w), axis=-1) / n
        gx -= xhat * (ns.expand_dims(ns.matmul(gw, w), axis=-1) / n)
        gx *= rstd
        gb = g if b is not None else None
        if g.ndim > 1 and _ones_for_sums(ns, g, 1) is not None:  # (weight and bias are (n,): _check_affine)
            # The weight's and bias's gradients summed over the rows here, as products
            # with ones, rather than by the engine's sum over the leading axes.
            rows = ns.full((math.prod(g.shape[:-1]),), 1.0, dtype=g.dtype, **_dev_kw(ns))
            gw = ns.matmul(rows, ns.reshape(gw, (-1, n)))
            if b is not None:
                gb = ns.matmul(rows, ns.reshape(g, (-1, n)))
        return gx, gw, gb

    def recompute(self, x, w, b):
        return self.definition(x, w, b, self.args)

    def _backward_by_reference(self, g, ns, inputs):
        # (PyTorch's backward is one op of the input, weight and bias, native_layer_norm_backward: recorded,
        # every gradient requires grad where one of them does, the bias's too; see SavedJoint)
        return super()._backward_by_reference(depends_on(g, ns, *self.inputs, undefined=True), ns, inputs)


def _gelu_exact(ns, x):
    """GELU and the normal CDF (which backward needs too: erf is the costly part)."""
    cdf = erf_array(ns, x * _INV_SQRT_2)
    cdf += 1.0
    cdf *= 0.5
    return x * cdf, cdf


def _gelu_exact_grad(ns, x, cdf, g):
    """``g * (cdf + x * pdf)``."""
    pdf = ns.exp(-0.5 * x * x)
    pdf *= x
    pdf *= _INV_SQRT_2PI  # now x * pdf
    pdf += cdf
    pdf *= g
    return pdf


# float32 GELU: erfc(|z|) = t P(t) exp(-z^2), t = 1 / (1 + p |z|) (Abramowitz and Stegun
# 7.1.26, absolute error below 1.5e-7: the formula of PyTorch's own vectorized float32
# erf). NumPy's float32 exp is the costliest pass by far (about 25 multiplications' worth
# on a CPU without AVX-512), and exp(-z^2) = exp(-x^2 / 2) is also what backward needs,
# so the forward keeps it: backward is then four cheap passes with no exp.
_AS_INV_P = 1.0 / (0.3275911 * _INV_SQRT_2)  # 1 / p, on |x| rather than |z| = |x| / sqrt(2)
# The coefficients of P, highest power first, halved: h = t P(t) exp(-z^2) / 2 = erfc(|z|) / 2.
_AS_HALF = tuple(0.5 * c for c in (1.061405429, -1.453152027, 1.421413741, -0.284496736, 0.254829592))


#: 1/p and P's halved coefficients as float32, as NumPy rounds the Python floats above for a
#: float32 pass (what the compiled loop of ``cpu_kernels`` reads)
_AS_CONSTANTS = np.array((_AS_INV_P,) + _AS_HALF, np.float32)


def _gelu_f32(ns, x):
    """float32 GELU, its normal CDF and ``exp(-x^2 / 2)``, the last two for backward.

    With NumPy (see :func:`_gelu_f32_numpy`) each pass writes into the outputs or one
    scratch block; other namespaces run the same arithmetic in the same order, so the
    values are the same."""
    if _numpy(ns):
        return _gelu_f32_numpy(x, ns.cache_block)
    return blockwise(ns, functools.partial(_gelu_f32_block, ns), x)


def _gelu_f32_block(ns, x):
    a = ns.abs(x)
    e = ns.exp((a * -0.5) * a)
    t = _AS_INV_P / (a + _AS_INV_P)  # 1 / (1 + p |z|), 1 exactly at 0
    h = t * _AS_HALF[0]
    for c in _AS_HALF[1:]:
        h = (h + c) * t
    cdf = ns.copysign(0.5 - h * e, x) + 0.5
    return x * cdf, cdf, e


def _gelu_f32_numpy(x, block):
    """:func:`_gelu_f32_block` with NumPy, ``block`` elements at a time (None: at once),
    each pass written with ``out=`` straight into the three outputs or one scratch
    array (no temporaries, no copies of block results), and the sign of the CDF's odd
    part set with integer passes (NumPy's copysign costs about five multiplications)."""
    shape = x.shape
    xf = np.ascontiguousarray(x).reshape(-1)
    size = xf.size
    y, cdf, e = np.empty(size, np.float32), np.empty(size, np.float32), np.empty(size, np.float32)
    block = size if block is None or size <= 2 * block else block
    square, rest = cpu_kernels.kernel("gelu_square"), cpu_kernels.kernel("gelu_rest")
    if square is not None and rest is not None:  # the passes around the exp as two compiled loops
        for i in range(0, size, block or 1):
            j = min(i + block, size)
            square(xf[i:j], e[i:j])
            np.exp(e[i:j], e[i:j])
            rest(xf[i:j], e[i:j], y[i:j], cdf[i:j], _AS_CONSTANTS)
        return y.reshape(shape), cdf.reshape(shape), e.reshape(shape)
    scratch = np.empty(min(block, size), np.float32)
    mul, add = np.multiply, np.add
    for i in range(0, size, block or 1):
        j = min(i + block, size)
        xb, yb, cb, eb, t = xf[i:j], y[i:j], cdf[i:j], e[i:j], scratch[: j - i]
        np.abs(xb, t)
        mul(t, -0.5, eb)
        mul(eb, t, eb)
        np.exp(eb, eb)  # exp(-x^2 / 2)
        add(t, _AS_INV_P, t)
        np.divide(_AS_INV_P, t, t)  # 1 / (1 + p |z|)
        mul(t, _AS_HALF[0], cb)
        for c in _AS_HALF[1:]:
            add(cb, c, cb)
            mul(cb, t, cb)
        mul(cb, eb, cb)  # erfc(|z|) / 2
        np.subtract(0.5, cb, cb)  # erf(|z|) / 2
        # copysign(cdf, x) by the sign bit: an OR, as erf(|z|) / 2 has none to clear (its
        # approximation is at least +0: erfc(|z|) / 2 is at most 1/2, reached at x = 0)
        bits, sign = cb.view(np.uint32), t.view(np.uint32)
        np.bitwise_or(bits, np.bitwise_and(xb.view(np.uint32), 0x80000000, sign), bits)
        add(cb, 0.5, cb)
        mul(xb, cb, yb)
    return y.reshape(shape), cdf.reshape(shape), e.reshape(shape)


_F32_INV_SQRT_2PI = np.float32(_INV_SQRT_2PI)


def _gelu_f32_grad(ns, x, cdf, e, g):
    """``g * (cdf + x * pdf)`` with ``pdf = exp(-x^2 / 2) / sqrt(2 pi)`` from the forward."""
    d = x * e
    d *= _INV_SQRT_2PI
    d += cdf
    d *= g
    return d


class Gelu(FusedFunction):
    """GELU, exact (``args="none"``) or with the tanh approximation (``args="tanh"``)."""

    __slots__ = ()
    laid_out_as = slice(0, None)
    name = "gelu"
    reads_output = False

    def forward(self, ns, x):
        if self.args == "tanh":
            return 0.5 * x * (1.0 + ns.tanh(_SQRT_2_OVER_PI * (x + 0.044715 * x * x * x)))
        if ns.kernels is not None and ns.kernels.supports(x):
            return ns.kernels.gelu(x)
        if x.dtype == ns.device.dtype("float32"):
            y, cdf, e = _gelu_f32(ns, x)
            self.ctx = (cdf, e)
            return y
        y, self.ctx = blockwise(ns, functools.partial(_gelu_exact, ns), x)  # ctx: the normal CDF
        return y

    def backward_arrays(self, g, ns, inputs, out):
        (x,) = inputs
        if self.args == "tanh":
            t = ns.tanh(_SQRT_2_OVER_PI * (x + 0.044715 * x * x * x))
            dt = (1.0 - t * t) * (_SQRT_2_OVER_PI * (1.0 + 3 * 0.044715 * x * x))
            return (g * (0.5 * (1.0 + t) + 0.5 * x * dt),)
        if ns.kernels is not None and ns.kernels.supports(x):
            return (ns.kernels.gelu_backward(x, g),)
        if isinstance(self.ctx, tuple):  # float32: the CDF and exp(-x^2 / 2)
            if _numpy(ns):  # four streaming passes: no blocks (whose results would be copied)
                cdf, e = self.ctx
                step = cpu_kernels.kernel("gelu_backward")
                if step is not None and g.shape == x.shape and cpu_kernels.float_arrays(x, cdf, e, g):
                    d = np.empty(x.shape, np.float32)  # (one compiled loop for the four passes)
                    step(x.reshape(-1), cdf.reshape(-1), e.reshape(-1), g.reshape(-1), d.reshape(-1), _F32_INV_SQRT_2PI)
                    return (d,)
                return (_gelu_f32_grad(ns, x, *self.ctx, g),)
            return (blockwise(ns, functools.partial(_gelu_f32_grad, ns), x, *self.ctx, g),)
        return (blockwise(ns, functools.partial(_gelu_exact_grad, ns), x, self.ctx, g),)

    def recompute(self, x):
        return self.definition(x, approximate=self.args)


class CrossEntropy(FusedFunction):
    """Mean cross-entropy of ``logits (M, C)`` against integer ``targets (M,)``.

    ``args = (keep, n_kept, smoothing)``: ``keep`` is a 0/1 float array of the items
    that count (``ignore_index`` removed), ``n_kept`` their number.
    """

    __slots__ = ()
    name = "cross_entropy"
    keep = (1,)  # the targets; the log-probabilities are in ctx (the logits may change in place)
    reads_output = False

    def forward(self, ns, logits, targets):
        keep, n_kept, eps = self.args
        z = logits - ns.max(logits, axis=-1, keepdims=True)
        logp = z - log_sum_exp_of_shifted(ns, z, -1, True)  # (M, C)
        if (low := rounded_to()) is not None:  # (PyTorch's log_softmax writes them in the input's dtype)
            logp = ns.astype(ns.astype(logp, low), logp.dtype)
        picked = ns.reshape(ns.take_along_axis(logp, ns.reshape(targets, (-1, 1)), axis=1), (-1,))  # (M,)
        loss_i = -(1.0 - eps) * picked
        if eps:
            loss_i = loss_i - eps * ns.sum(logp, axis=-1) / logits.shape[-1]
        self.ctx = logp
        return ns.sum(loss_i * keep) / n_kept

    def backward_arrays(self, g, ns, inputs, out):
        logits, targets = inputs
        keep, n_kept, eps = self.args
        logp = self.ctx
        m, c = logp.shape
        grad = ns.exp(logp)  # softmax
        if eps:
            grad -= eps / c
        if _numpy(ns):  # one store per row (each row has one target), not a scatter into zeros
            grad[np.arange(m), ns.reshape(targets, (-1,))] -= 1.0 - eps
        else:
            flat = ns.reshape(targets, (-1,)) + ns.arange(0, m * c, c, dtype=targets.dtype, **_dev_kw(ns))
            delta = ns.device.index_add((m * c,), 0, flat, ns.full((m,), 1.0 - eps, dtype=logp.dtype,
                                                                   **_dev_kw(ns)))  # fmt: skip
            grad -= ns.reshape(delta, (m, c))
        if n_kept != n_kept:  # nothing counts: the loss is NaN but no logit changes it, so its gradient is 0
            return grad * 0.0, None  # (not g * 0: g may be NaN itself, from an op after the loss)
        # (a float16 g: PyTorch's nll_loss backward writes g / n in float16, which its log_softmax backward reads)
        grad *= ns.reshape(keep, (m, 1)) * ns.astype(g / n_kept, logp.dtype)
        return grad, None

    def recompute(self, logits, targets):
        keep, n_kept, eps = self.args
        return self.definition(logits, targets, keep, n_kept, eps)

    def forward_input(self, i, ns):
        # The log-probabilities for the logits: the loss depends on each row only up to a
        # shift, and they are the logits shifted, so every derivative there is the same.
        return self.ctx if i == 0 else None


def _dev_kw(ns):
    dev = ns.device._array_device
    return {"device": dev} if dev is not None else {}


def _softmax_rows_inplace(ns, s, row_any=None):
    """Softmax over the last axis of ``s`` (overwritten: the caller's own array); rows
    where ``row_any`` is False come out zero."""
    k = ns.kernels
    if k is not None and k.supports(s):  # CUDA: one kernel, one pass
        w = k.softmax(s)
        return w if row_any is None else ns.where(row_any, w, 0.0)
    s -= ns.max(s, axis=-1, keepdims=True)
    w = ns.exp_inplace(s)
    inv = 1.0 / _sum_last(ns, w)  # (..., rows, 1)
    if row_any is not None:
        inv = ns.where(row_any, inv, 0.0)
    w *= inv
    return w


#: Temporaries of row-wise reductions stay below this many elements (1 MiB of float32).
_CHUNK_ELEMENTS = 1 << 18


def _rowsum_of_product(ns, a, b):
    """``sum(a * b, axis=-1, keepdims=True)`` a slab of rows at a time, so the product
    never needs a temporary as large as ``a`` (the scores, in attention's backward)."""
    t = a.shape[-2] if a.ndim >= 2 else 1
    rows = max(1, _CHUNK_ELEMENTS * t // max(math.prod(a.shape), 1))
    if t <= rows:
        return ns.sum(a * b, axis=-1, keepdims=True)
    parts = [
        ns.sum(a[..., i : i + rows, :] * b[..., i : i + rows, :], axis=-1, keepdims=True) for i in range(0, t, rows)
    ]
    return ns.concat(parts, axis=-2)


def _sum_last(ns, a):
    """``sum(a, axis=-1, keepdims=True)``, as a product with ones where BLAS can (NumPy
    sums along a short last axis a row at a time: 6x slower for attention's 64 keys)."""
    ones = _ones_for_sums(ns, a, a.shape[-1]) if a.ndim >= 1 else None
    if ones is None:
        return ns.sum(a, axis=-1, keepdims=True)
    return ns.expand_dims(ns.matmul(a, ones), axis=-1)


#: Causal attention runs in blocks of this many query rows once there are at least two.
#: Smaller blocks skip more of the masked scores, but NumPy runs a batch of small
#: matrix products one BLAS call each, so below about 128 rows the calls cost more than
#: the skipped work saves (measured at T = 128 and 512, float32).
CAUSAL_BLOCK = 128


def causal_blocks(tq: int, tk: int) -> list[tuple[int, int, int]]:
    """``(r0, r1, n)`` per block of query rows ``r0:r1``, which see only keys ``:n``."""
    if tq < 2 * CAUSAL_BLOCK:
        return [(0, tq, tk)]
    return [(r0, min(r0 + CAUSAL_BLOCK, tq), min(r0 + CAUSAL_BLOCK, tq, tk)) for r0 in range(0, tq, CAUSAL_BLOCK)]


class Attention(FusedFunction):
    """``softmax(q @ k.mT * scale + bias) @ v`` in one node.

    ``args = (scale, bias, row_any, causal)``: ``bias`` is an additive array (0 or -inf
    where masked, or the user's float mask) or None; ``row_any`` is a 0/1 array marking
    query rows with at least one key to attend (None when all have one); ``causal`` says
    that ``bias`` is exactly the causal mask. ``ctx`` keeps the weights, the scaled
    queries and a copy of the keys: as PyTorch's, backward reads neither the output nor
    ``q`` and ``k`` themselves, so those may change in place before it (``keep = (2,)``).

    Fewer passes over the ``(Tq, Tk)`` scores than the definition makes: the scale goes
    on ``q`` and on the gradients of ``q`` and ``k`` (smaller arrays), and the softmax
    and its backward run in place. Causal attention goes in blocks of query rows, each
    scoring only the keys it may see: of the full ``(Tq, Tk)`` scores it computes and
    keeps (n + 1) / 2n for n blocks, five eighths at T = 512.
    """

    __slots__ = ()
    name = "attention"
    heads_axis = -3  # pictures say "H heads" of (B, H, T, d) operands
    keep = (2,)
    reads_output = False

    def blocks(self, tq: int, tk: int) -> list[tuple[int, int, int]]:
        return causal_blocks(tq, tk) if self.args[3] else [(0, tq, tk)]

    def forward(self, ns, q, k, v):
        scale, bias, row_any, causal = self.args
        ws, qs, outs = [], [], []
        for r0, r1, n in self.blocks(q.shape[-2], k.shape[-2]):
            qs.append(q[..., r0:r1, :] * scale)  # (..., r1 - r0, d)
            s = ns.matmul(qs[-1], ns.matrix_transpose(k[..., :n, :]))  # (..., r1 - r0, n)
            if causal:  # every row of the block sees all keys before r0: only the rest needs the mask
                s[..., r0:] += bias[r0:r1, r0:n]
            elif bias is not None:
                s += bias
            w = _softmax_rows_inplace(ns, s, row_any)
            ws.append(w)
            outs.append(ns.matmul(w, v[..., :n, :]))  # (..., r1 - r0, dv)
        self.ctx = (*ws, *qs, ns.copy(k))  # (flat: the pictures list each)
        return outs[0] if len(outs) == 1 else ns.concat(outs, axis=-2)  # (..., Tq, dv)

    def backward_arrays(self, g, ns, inputs, out):
        v = inputs[2]
        scale = self.args[0]
        mt = ns.matrix_transpose
        k = self.ctx[-1]
        blocks = self.blocks(g.shape[-2], k.shape[-2])
        ws, qs = self.ctx[: len(blocks)], self.ctx[len(blocks) : 2 * len(blocks)]
        gq, gk, gv = [], None, None
        for (r0, r1, n), w, q_b in zip(blocks, ws, qs):
            gb = g[..., r0:r1, :]  # (..., r1 - r0, dv)
            gs = ns.matmul(gb, mt(v[..., :n, :]))  # dW (..., r1 - r0, n)
            gs -= _rowsum_of_product(ns, gs, w)
            gs *= w  # the scores' gradient, less the scale
            gq_b = ns.matmul(gs, k[..., :n, :])
            gq_b *= scale
            gq.append(gq_b)
            gk_b, gv_b = ns.matmul(mt(gs), q_b), ns.matmul(mt(w), gb)  # (..., n, d), (..., n, dv): scaled
            if len(blocks) == 1:
                gk, gv = gk_b, gv_b
                break
            if gk is None:
                gk, gv = ns.zeros_like(k), ns.zeros_like(v)
            gk[..., :n, :] += gk_b
            gv[..., :n, :] += gv_b
        return (gq[0] if len(gq) == 1 else ns.concat(gq, axis=-2)), gk, gv

    def recompute(self, q, k, v):
        scale, bias, row_any, _ = self.args
        return self.definition(q, k, v, scale, bias, row_any)

    def _backward_by_reference(self, g, ns, inputs):
        # PyTorch's CPU attention of (B, H, T, d) operands is its flash kernel, whose backward has
        # no derivative: a gradient taken with create_graph may not be differentiated again
        # (other ranks run its decomposition, differentiable to any order, as this one's is).
        grads = super()._backward_by_reference(g, ns, inputs)
        if len(self.inputs[0].shape) != 4:
            return grads
        name = "aten::_scaled_dot_product_flash_attention_for_cpu_backward"
        return [NoDerivative.apply(x, args=name) if x is not None else None for x in grads]

    def forward_input(self, i, ns):
        # (what ctx keeps: the scaled queries by blocks of rows, and a copy of the keys)
        n = (len(self.ctx) - 1) // 2
        if i == 1:
            return self.ctx[-1]
        scale = self.args[0]
        if i != 0 or not scale:  # (scale 0: no derivative reads the queries)
            return None
        qs = self.ctx[n : 2 * n]
        return (qs[0] if n == 1 else ns.concat(qs, axis=-2)) / scale


# -- cross-entropy with the kept items as inputs: what a trace records (tinygrad_attn.symbolic) --
class CrossEntropyKept(CrossEntropy):
    """:class:`CrossEntropy` whose ``keep (M,)`` mask and ``n_kept`` (0-d) are inputs, not
    arguments: computed from the targets by ops, so a traced program reads them at each
    replay. ``args = smoothing``; inputs ``(logits, targets, keep, n_kept)``. The same
    arithmetic as :class:`CrossEntropy`, so a replay equals the eager step bit for bit."""

    __slots__ = ()
    name = "cross_entropy_kept"

    def forward(self, ns, logits, targets, keep, n_kept):
        self.args, args = (keep, n_kept, self.args), self.args
        try:
            return super().forward(ns, logits, targets)
        finally:
            self.args = args

    def backward_arrays(self, g, ns, inputs, out):
        logits, targets, keep, n_kept = inputs
        self.args, args = (keep, 1.0, self.args), self.args
        try:
            grad, _ = super().backward_arrays(g, ns, [logits, targets], out)
        finally:
            self.args = args
        # (nothing counts: the loss is NaN but no logit changes it, so its gradient is 0)
        grad *= ns.where(n_kept > 0, 1.0 / ns.where(n_kept > 0, n_kept, 1.0), 0.0)
        return grad, None, None, None

    def recompute(self, logits, targets, keep, n_kept):
        return self.definition(logits, targets, keep, n_kept, self.args)
