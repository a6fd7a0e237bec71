"""Compiled CPU loops (numba, an optional extra: ``pip install tinygrad_attn[jit]``) for the
places where NumPy's one pass over memory per call costs most.

An Adam step over a flat bucket is 13 NumPy calls, each reading and writing the whole
bucket; as one loop it reads each number once (figures in benchmarks/README.md, "Compiled
CPU loops"). SGD's step is one loop per parameter too, reading the parameter and its
gradient where they are: a small model's step is mostly the cost of the calls, and this is
one call per parameter instead of a gathering pass and a few calls per bucket. An LSTM step on tutorial sizes is a dozen calls on a few hundred numbers each, where the call costs more than the arithmetic; with a loop for the
arithmetic between NumPy's vectorised exp and tanh, a step forward is six calls instead of
twelve, and a step backward two (the loop, the product) instead of nine and a third of the
passes over all steps before them. GELU's float32 forward is two loops around NumPy's exp
instead of 19 passes, its backward one loop instead of four; layer norm one loop over the
rows each way. A softmax over the last axis is two loops around NumPy's exp instead of
five passes and two temporaries, its backward one loop instead of three passes.

Each kernel is written here once, as plain Python over arrays, and compiled by numba the
first time it is asked for (about a second each, then cached on disk beside this file or
in numba's cache directory). The NumPy code that calls it keeps its own formula as the
fallback: without numba, with ``TINYGRAD_ATTN_JIT=0`` in the environment, or with
``ENABLED = False`` here. The kernels do the fallback's float operations in the same order
(no ``fastmath``: no reassociation and no fused multiply-add), so Adam, the LSTM and GELU
give the same numbers bit for bit (their ``exp`` and ``tanh`` stay NumPy's: the C
library's, which a loop would call, are not vectorised). Layer norm's and softmax's row sums
are the exception: summed in float64 in an order of the compiler's (``reassoc``, vectorised), equal
to the NumPy code's to rounding. The tests hold each pair equal.

``error_model="numpy"`` matters: numba's default (Python's) checks every division for a
zero divisor, which keeps the loop from being vectorised.

>>> kernel("adam") is None or callable(kernel("adam"))
True
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import numpy as np

#: The environment variable that switches the kernels off (``0``, ``false``, ``no``, ``off``).
ENV = "TINYGRAD_ATTN_JIT"
#: Whether the kernels are used where numba is installed; tests switch it off to run the fallback.
ENABLED = os.environ.get(ENV, "1").strip().lower() not in ("0", "false", "no", "off")

_compiled: dict[str, Any] = {}
_numba: Any = None  # the module, imported at the first request; False where it is missing


def available() -> bool:
    """Whether numba can be imported (whatever :data:`ENABLED` says)."""
    global _numba
    if _numba is None:
        try:
            import numba  # noqa: PLC0415 - optional, and slow to import: only when first asked

            _numba = numba
        except ImportError:
            _numba = False
    return _numba is not False


def kernel(name: str) -> Callable[..., Any] | None:
    """The compiled kernel ``name`` (a key of ``_SOURCES``: ``"adam"``, ``"lstm_forward"``,
    ...), or None where it cannot or may not be used (then the caller runs its NumPy formula)."""
    if not ENABLED:
        return None
    fn = _compiled.get(name)
    if fn is None:
        if not available():
            return None
        options = {"nogil": True, "error_model": "numpy", **_OPTIONS.get(name, {})}
        try:
            fn = _numba.njit(cache=True, **options)(_SOURCES[name])
        except RuntimeError:  # numba finds no writable cache directory: compiled for this process only
            fn = _numba.njit(cache=False, **options)(_SOURCES[name])
        _compiled[name] = fn
    return fn


def float_arrays(*arrays: Any) -> bool:
    """Whether every array is a C-contiguous float32 or float64 NumPy array of one dtype: what
    the kernels are compiled for."""
    dtype = arrays[0].dtype
    return dtype in (np.float32, np.float64) and all(
        type(a) is np.ndarray and a.dtype == dtype and a.flags.c_contiguous for a in arrays
    )


# -- the kernels, as numba compiles them ----------------------------------------------------
def _adam(w, g, m, v, vmax, at, s, coupled, amsgrad):  # pragma: no cover - compiled
    """One Adam/AdamW step for one parameter ``w`` (C-contiguous, any shape, written in
    place), ``g`` its gradient of the same layout, whose state is ``[at, at + g.size)`` of
    the flat state arrays (the formulas of ``Adam._flat_update``): ``m``, ``v`` and
    ``vmax`` in place. ``s``: ``b1, b2, 1 - b1, 1 -
    b2``, AdamW's factor on the parameters (1 otherwise), the weight decay, ``eps c2`` and
    the step size, in the arrays' dtype (one array: each scalar argument costs the call about
    0.1 us); ``coupled``: Adam's L2 term joins the gradient."""
    b1, b2, omb1, omb2, decay, wd, eps_c2, step_size = s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7]
    wf, gf = w.reshape(-1), g.reshape(-1)  # (flat views, new names: numba types each name once)
    n = gf.shape[0]
    # (views of the slice, indexed from 0 by the loop: an index `at + i` could be negative
    # for all the compiler knows, and its wraparound check keeps the loop scalar)
    m, v, vmax = m[at : at + n], v[at : at + n], vmax[at : at + n]
    for i in range(n):
        gi = gf[i]
        wi = wf[i]
        if coupled:
            gi = gi + wi * wd
        mi = m[i] * b1 + gi * omb1
        vi = v[i] * b2 + (gi * gi) * omb2
        m[i] = mi
        v[i] = vi
        if amsgrad:  # np.maximum's rule: a NaN on either side wins
            vm = vmax[i]
            if not (vm != vm or vm > vi):
                vm = vi
            vmax[i] = vm
            vi = vm
        wf[i] = wi * decay - (mi / (np.sqrt(vi) + eps_c2)) * step_size


def _lstm_forward(u, c, c_new):  # pragma: no cover - compiled
    """The middle of one LSTM step (``LSTMRecurrence.forward``'s NumPy loop, the same formulas) between
    NumPy's calls, whose float32 ``exp`` and ``tanh`` are vectorised where the C library's,
    which a loop calls, are not: ``u`` ``(4, B, H)`` holds ``exp(-a)`` of the four gates
    (``exp(-2a)`` for the cell gate) and becomes the gates i, f, g, o (``1 / (1 + u)``, the
    cell gate ``2 s - 1``); ``c_new = f c + i g``."""
    n_b, n_h = c.shape
    one = u.dtype.type(1)
    two = u.dtype.type(2)
    for b in range(n_b):
        for j in range(n_h):
            i_g = one / (u[0, b, j] + one)
            f_g = one / (u[1, b, j] + one)
            g_g = one / (u[2, b, j] + one) * two - one
            u[0, b, j] = i_g
            u[1, b, j] = f_g
            u[2, b, j] = g_g
            u[3, b, j] = one / (u[3, b, j] + one)
            c_new[b, j] = f_g * c[b, j] + i_g * g_g


def _lstm_backward(u, tc, c_prev, has_prev, g_h, g_c, dh, start, dc_next, d_row):  # pragma: no cover - compiled
    """One step of ``LSTMRecurrence.backward_arrays``'s loop, from the step's gates ``u`` ``(4, B, H)``,
    ``tanh(c)`` and the previous cell state (``has_prev`` False: none, its gate f gets no
    gradient): with ``gt = g_h + dh`` and ``dc = gt o (1 - tanh(c)^2) + g_c + dc_next``
    (neither ``dh`` nor ``dc_next`` at the ``start``, the backward's first step), writes the
    gates' gradients into ``d_row`` ``(B, 4H)`` and ``dc f`` into ``dc_next``."""
    n_b, n_h = tc.shape
    one = u.dtype.type(1)
    for b in range(n_b):
        for j in range(n_h):
            i_g = u[0, b, j]
            f_g = u[1, b, j]
            g_g = u[2, b, j]
            o_g = u[3, b, j]
            t = tc[b, j]
            gt = g_h[b, j] if start else g_h[b, j] + dh[b, j]
            dc = gt * ((one - t * t) * o_g) + g_c[b, j]
            if not start:
                dc = dc + dc_next[b, j]
            d_row[b, j] = ((i_g - i_g * i_g) * g_g) * dc
            d_row[b, n_h + j] = ((f_g - f_g * f_g) * c_prev[b, j]) * dc if has_prev else u.dtype.type(0)
            d_row[b, 2 * n_h + j] = ((one - g_g * g_g) * i_g) * dc
            d_row[b, 3 * n_h + j] = ((o_g - o_g * o_g) * t) * gt
            dc_next[b, j] = dc * f_g


def _gelu_square(x, e):  # pragma: no cover - compiled
    """``e = (|x| * -1/2) * |x|``: the argument of the float32 GELU's ``exp`` (``ops.fused``)."""
    half = e.dtype.type(-0.5)
    for i in range(x.shape[0]):
        a = abs(x[i])
        e[i] = (a * half) * a


def _gelu_rest(x, e, y, cdf, c):  # pragma: no cover - compiled
    """The float32 GELU after NumPy's ``exp`` wrote ``exp(-x^2 / 2)`` into ``e`` (the
    formulas of ``ops.fused._gelu_f32_numpy``, same order): the normal CDF by Abramowitz and
    Stegun's erf into ``cdf``, ``x cdf`` into ``y``. ``c``: 1/p, then P's halved
    coefficients, highest power first."""
    inv_p = c[0]
    half = c.dtype.type(0.5)
    for i in range(x.shape[0]):
        xi = x[i]
        t = inv_p / (abs(xi) + inv_p)
        h = t * c[1]
        for k in range(2, 6):
            h = (h + c[k]) * t
        h = half - h * e[i]
        h = np.copysign(h, xi) + half
        cdf[i] = h
        y[i] = xi * h


def _gelu_backward(x, cdf, e, g, d, inv_sqrt_2pi):  # pragma: no cover - compiled
    """``d = ((x e) / sqrt(2 pi) + cdf) g``: the float32 GELU's gradient from what its
    forward kept (``ops.fused._gelu_f32_grad``, same order)."""
    for i in range(x.shape[0]):
        d[i] = ((x[i] * e[i]) * inv_sqrt_2pi + cdf[i]) * g[i]


def _layer_norm_forward(x, w, b, has_w, has_b, eps, xhat, rstd, y):  # pragma: no cover - compiled
    """Layer norm over the rows of ``x`` ``(R, n)`` (``ops.fused.LayerNormalization``): ``xhat``,
    ``rstd`` ``(R,)`` (kept for backward) and ``y = xhat w + b``. The row statistics are
    summed in float64, in an order of the compiler's (``reassoc``: the sums vectorised)."""
    n_rows, n = x.shape
    for r in range(n_rows):
        s = 0.0
        for j in range(n):
            s += x[r, j]
        mu = s / n
        s = 0.0
        for j in range(n):
            d = x[r, j] - mu
            s += d * d
        inv = 1.0 / np.sqrt(s / n + eps)
        rstd[r] = inv
        for j in range(n):
            xhat[r, j] = (x[r, j] - mu) * inv
            v = xhat[r, j]  # (read back in the arrays' dtype: y from xhat as kept, as the NumPy code's)
            if has_w:
                v = v * w[j]
            if has_b:
                v = v + b[j]
            y[r, j] = v


def _layer_norm_backward(g, xhat, rstd, w, has_w, gx, gw, gb):  # pragma: no cover - compiled
    """Layer norm's backward over rows (``ops.fused.LayerNormalization.backward_arrays``): with
    ``gh = g w``, ``gx = (gh - mean(gh) - xhat mean(gh xhat)) rstd``; the weight's and the
    bias's gradients, ``sum_rows(g xhat)`` and ``sum_rows(g)``, into ``gw`` and ``gb`` (float64)."""
    n_rows, n = g.shape
    for j in range(n):
        gw[j] = 0.0
        gb[j] = 0.0
    for r in range(n_rows):
        a = 0.0
        c = 0.0
        for j in range(n):
            gh = g[r, j] * w[j] if has_w else g[r, j]
            a += gh
            c += gh * xhat[r, j]
        a /= n
        c /= n
        inv = rstd[r]
        for j in range(n):
            gj = g[r, j]
            gh = gj * w[j] if has_w else gj
            gx[r, j] = (gh - a - xhat[r, j] * c) * inv
            gw[j] += gj * xhat[r, j]
            gb[j] += gj


def _softmax_shift(x, z):  # pragma: no cover - compiled
    """Softmax's first pass over the rows of ``x`` ``(R, n)`` (``ops.fused.softmax_array``):
    ``z = x - max(row)``, ready for NumPy's vectorised ``exp`` in place. A NaN in a row
    makes the whole row NaN through ``exp`` and the sum, as ``np.max``'s would."""
    n_rows, n = x.shape
    for r in range(n_rows):
        m = x[r, 0]
        for j in range(1, n):
            v = x[r, j]
            if v > m:
                m = v
        for j in range(n):
            z[r, j] = x[r, j] - m


def _softmax_scale(e):  # pragma: no cover - compiled
    """Softmax's last pass: each row of ``e`` ``(R, n)`` (the exponentials) divided by its
    sum, in place. The sum in float64, in an order of the compiler's (``reassoc``)."""
    n_rows, n = e.shape
    for r in range(n_rows):
        s = 0.0
        for j in range(n):
            s += e[r, j]
        for j in range(n):
            e[r, j] = e[r, j] / s


def _softmax_backward(g, y, out):  # pragma: no cover - compiled
    """Softmax's backward over rows (``ops.fused.softmax_backward_array``): ``out = (g -
    sum(g y)) y``; ``out`` may be ``g``. The row sum in float64 (``reassoc``), rounded to the
    arrays' dtype before the subtraction, as the NumPy code subtracts its sum."""
    n_rows, n = g.shape
    for r in range(n_rows):
        s = 0.0
        for j in range(n):
            s += g[r, j] * y[r, j]
        c = g.dtype.type(s)
        for j in range(n):
            out[r, j] = (g[r, j] - c) * y[r, j]


def _swap_forward(out, picks):  # pragma: no cover - compiled
    """``randperm``'s shuffle (``random_transforms.randperm``): place ``i`` swaps with ``picks[i]``, in order."""
    for i in range(picks.shape[0]):
        z = picks[i]
        t = out[i]
        out[i] = out[z]
        out[z] = t


def _sgd(w, g, buf, at, s):  # pragma: no cover - compiled
    """One SGD step for one parameter ``w`` (C-contiguous, any shape, written in place), ``g``
    its gradient of the same layout, whose momentum buffer is ``[at, at + g.size)`` of the
    flat ``buf`` (the formulas of ``SGD._update``, in its order): ``d = g + wd w``, with
    momentum ``buf = mu buf + (1 - dampening) d`` (``buf = d`` at the first step) and ``d =
    buf`` or (Nesterov) ``d + mu buf``; then ``w - lr d``. ``s``, in the arrays' dtype:
    ``lr, wd, mu, 1 - dampening`` and four switches, 0 or 1: weight decay, momentum, the
    first step, Nesterov (in the array: each argument costs the call about 0.05 us)."""
    lr, wd, mu, damp = s[0], s[1], s[2], s[3]
    decay, momentum, first, nesterov = s[4] != 0, s[5] != 0, s[6] != 0, s[7] != 0
    wf, gf = w.reshape(-1), g.reshape(-1)  # (new names: numba types each name once)
    n = gf.shape[0]
    b = buf[at : at + n]
    for i in range(n):
        wi = wf[i]
        d = gf[i]
        if decay:
            d = d + wd * wi
        if momentum:
            if first:
                bi = d
            else:
                bi = mu * b[i] + damp * d
            b[i] = bi
            if nesterov:
                d = d + mu * bi
            else:
                d = bi
        wf[i] = wi - lr * d


def _sgd_plain(w, g, s):  # pragma: no cover - compiled
    """``_sgd`` without momentum or weight decay, ``w - lr g`` (``s[0]``: ``lr``): two
    arguments fewer for the call to convert, in the commonest step."""
    lr = s[0]
    wf, gf = w.reshape(-1), g.reshape(-1)
    for i in range(gf.shape[0]):
        wf[i] = wf[i] - lr * gf[i]


#: numba options beyond the common ones, by kernel: layer norm's row sums may be reassociated
#: (vectorised; its results equal the NumPy code's to rounding, not bit for bit)
_OPTIONS: dict[str, dict[str, Any]] = {
    "layer_norm_forward": {"fastmath": {"reassoc"}},
    "layer_norm_backward": {"fastmath": {"reassoc"}},
    "softmax_scale": {"fastmath": {"reassoc"}},
    "softmax_backward": {"fastmath": {"reassoc"}},
}

_SOURCES: dict[str, Callable[..., Any]] = {
    "layer_norm_forward": _layer_norm_forward,
    "layer_norm_backward": _layer_norm_backward,
    "gelu_square": _gelu_square,
    "gelu_rest": _gelu_rest,
    "gelu_backward": _gelu_backward,
    "adam": _adam,
    "sgd": _sgd,
    "sgd_plain": _sgd_plain,
    "lstm_forward": _lstm_forward,
    "lstm_backward": _lstm_backward,
    "swap_forward": _swap_forward,
    "softmax_shift": _softmax_shift,
    "softmax_scale": _softmax_scale,
    "softmax_backward": _softmax_backward,
}
