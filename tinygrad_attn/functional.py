"""Neural-net functions, each written once from primitive ops.

Every function here that ``tga.decompose()`` names is a *composite*: its body is its
definition in primitives, and ``tinygrad_attn.ops.fused`` may hold a one-node fast path
that the tests keep equal to it. Inside ``tga.decompose()`` the body always runs, in a
scope named after the function, so graph pictures show each primitive grouped under it.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np

from ._tensor import Tensor, where
from .autograd import _State, composite, scope
from .indexing import host_integers
from .ops import fused
from .random import host_generator

__all__ = [
    "linear",
    "softmax",
    "log_softmax",
    "layer_norm",
    "gelu",
    "dropout",
    "cross_entropy",
    "mse_loss",
    "scaled_dot_product_attention",
    "causal_mask",
    "relu",
    "sigmoid",
    "tanh",
    "where",
]


def _axis(x: Tensor, axis: int, op: str) -> int:
    if not -x.ndim <= axis < max(x.ndim, 1):
        raise ValueError(f"{op}: axis {axis} is out of range for a tensor of shape {x.shape}")
    return axis % max(x.ndim, 1)


def _float(x: Tensor, op: str) -> None:
    if x.dtype.kind != "f":
        raise TypeError(f"{op}: needs a floating-point tensor, got {x.dtype}; convert with .astype('float32')")


# -- softmax family ----------------------------------------------------------------
def _softmax_fused(x: Tensor, axis: int = -1) -> Tensor:
    _float(x, "softmax")
    return fused.Softmax.apply(x, args=_axis(x, axis, "softmax"))


@composite("softmax", _softmax_fused)
def softmax(x: Tensor, axis: int = -1) -> Tensor:
    """``exp(x) / sum(exp(x))`` along ``axis``, shifted by the max so it never overflows."""
    e = (x - x.max(axis, keepdims=True)).exp()
    return e / e.sum(axis, keepdims=True)


def _log_softmax_fused(x: Tensor, axis: int = -1) -> Tensor:
    _float(x, "log_softmax")
    return fused.LogSoftmax.apply(x, args=_axis(x, axis, "log_softmax"))


@composite("log_softmax", _log_softmax_fused)
def log_softmax(x: Tensor, axis: int = -1) -> Tensor:
    """``x - logsumexp(x)`` along ``axis``."""
    z = x - x.max(axis, keepdims=True)
    return z - z.exp().sum(axis, keepdims=True).log()


# -- linear maps -------------------------------------------------------------------------
def _check_linear(x: Tensor, weight: Tensor, bias: Tensor | None) -> None:
    ok = weight.ndim == 2 and x.ndim >= 1 and x.shape[-1] == weight.shape[1]
    if not ok or (bias is not None and bias.shape != (weight.shape[0],)):
        raise ValueError(
            f"linear: input {x.shape}, weight {weight.shape} and bias {None if bias is None else bias.shape} "
            "do not fit; need input (..., in), weight (out, in), bias (out,)"
        )


def _linear_fused(x: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    _check_linear(x, weight, bias)
    return fused.Linear.apply(x, weight, bias)


@composite("linear", _linear_fused)
def linear(x: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """``x @ weight.mT + bias``, with ``weight`` of shape ``(out, in)`` as in PyTorch.

    >>> F.linear(x, w, b)  # doctest: +SKIP  (x: (B, T, in), w: (out, in), b: (out,))
    """
    _check_linear(x, weight, bias)
    y = x @ weight.mT
    return y + bias if bias is not None else y


# -- normalisation and activations -----------------------------------------------------
def _check_affine(x: Tensor, t: Tensor | None, what: str) -> None:
    if t is not None and t.shape != (x.shape[-1],):
        raise ValueError(f"layer_norm: {what} has shape {t.shape}, expected ({x.shape[-1]},) for input {x.shape}")


def _layer_norm_fused(x: Tensor, weight: Tensor | None = None, bias: Tensor | None = None,
                      eps: float = 1e-5) -> Tensor:  # fmt: skip
    _float(x, "layer_norm")
    _check_affine(x, weight, "weight")
    _check_affine(x, bias, "bias")
    return fused.LayerNorm.apply(x, weight, bias, args=float(eps))


@composite("layer_norm", _layer_norm_fused)
def layer_norm(x: Tensor, weight: Tensor | None = None, bias: Tensor | None = None, eps: float = 1e-5) -> Tensor:
    """Normalise the last axis to mean 0 and variance 1, then ``* weight + bias``."""
    _check_affine(x, weight, "weight")
    _check_affine(x, bias, "bias")
    xc = x - x.mean(-1, keepdims=True)
    y = xc / ((xc * xc).mean(-1, keepdims=True) + eps).sqrt()
    if weight is not None:
        y = y * weight
    if bias is not None:
        y = y + bias
    return y


def _gelu_fused(x: Tensor, approximate: str = "none") -> Tensor:
    _float(x, "gelu")
    if approximate not in ("none", "tanh"):
        raise ValueError(f"gelu: approximate must be 'none' or 'tanh', got {approximate!r}")
    return fused.Gelu.apply(x, args=approximate)


@composite("gelu", _gelu_fused)
def gelu(x: Tensor, approximate: str = "none") -> Tensor:
    """``x * Phi(x)``, Phi the normal CDF (``approximate="tanh"``: the GPT-2 formula)."""
    if approximate == "tanh":
        return 0.5 * x * (1.0 + (math.sqrt(2.0 / math.pi) * (x + 0.044715 * x * x * x)).tanh())
    if approximate != "none":
        raise ValueError(f"gelu: approximate must be 'none' or 'tanh', got {approximate!r}")
    return 0.5 * x * (1.0 + (x * (1.0 / math.sqrt(2.0))).erf())


def relu(x: Tensor) -> Tensor:
    return x.relu()


def sigmoid(x: Tensor) -> Tensor:
    return x.sigmoid()


def tanh(x: Tensor) -> Tensor:
    return x.tanh()


@composite("dropout")
def dropout(x: Tensor, p: float = 0.5, training: bool = True) -> Tensor:
    """Zero each element with probability ``p`` and scale the rest by ``1/(1-p)``.

    The mask is drawn on the host from the seeded generator, so it is the same on
    every device for the same seed.
    """
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout: p must be in [0, 1], got {p}")
    if not training or p == 0.0:
        return x
    if p == 1.0:
        return x * 0.0
    keep = host_generator().random(x.shape) >= p
    scale = Tensor._wrap(x._dev.asarray(keep / (1.0 - p), dtype=x.dtype), x._dev)
    return x * scale


# -- losses -------------------------------------------------------------------------
def _targets_and_keep(logits: Tensor, targets: Any, ignore_index: int | None) -> tuple[Tensor, Tensor, Any]:
    """Flatten to ``(M, C)`` / ``(M,)``; check the targets; mark the items that count."""
    if not isinstance(targets, Tensor):
        targets = Tensor(np.asarray(targets), device=logits._dev)
    if targets._dev is not logits._dev:
        raise RuntimeError(f"cross_entropy: logits on {logits.device}, targets on {targets.device}")
    if logits.ndim < 1 or targets.shape != logits.shape[:-1]:
        raise ValueError(
            f"cross_entropy: logits of shape {logits.shape} (..., classes) need targets of shape "
            f"{logits.shape[:-1]}, got {targets.shape}"
        )
    host = host_integers(targets, "cross_entropy", "targets (class indices)")
    c = logits.shape[-1]
    keep = np.ones(host.shape, dtype=bool) if ignore_index is None else host != ignore_index
    bad = keep & ((host < 0) | (host >= c))
    if bad.any():
        raise IndexError(f"cross_entropy: target {host[bad][0]} is out of range for {c} classes")
    host = np.where(keep, host, 0).reshape(-1).astype(np.int64)
    dev = logits._dev
    t = Tensor._wrap(dev.asarray(host), dev)
    keep_arr = dev.asarray(keep.reshape(-1), dtype=logits.dtype)
    return logits.reshape(-1, c), t, (keep_arr, int(keep.sum()))


def cross_entropy(logits: Tensor, targets: Any, ignore_index: int | None = None,
                  label_smoothing: float = 0.0) -> Tensor:  # fmt: skip
    """Mean negative log-likelihood of integer ``targets`` under ``softmax(logits)``.

    ``logits`` is ``(..., C)`` (classes on the last axis) and ``targets`` ``(...)``.
    Items whose target is ``ignore_index`` do not count; ``label_smoothing`` mixes the
    one-hot target with the uniform distribution, as in "Attention Is All You Need".
    """
    _float(logits, "cross_entropy")
    if not 0.0 <= label_smoothing <= 1.0:
        raise ValueError(f"cross_entropy: label_smoothing must be in [0, 1], got {label_smoothing}")
    flat, t, (keep, n_kept) = _targets_and_keep(logits, targets, ignore_index)
    n = float(n_kept) if n_kept else float("nan")  # PyTorch's answer when nothing counts
    if _State.decompose:
        with scope("cross_entropy"):
            return _cross_entropy_reference(flat, t, keep, n, float(label_smoothing))
    return fused.CrossEntropy.apply(flat, t, args=(keep, n, float(label_smoothing)))


def _cross_entropy_reference(logits: Tensor, targets: Tensor, keep: Any, n_kept: float, eps: float) -> Tensor:
    """The definition: ``-(1-eps) log p[target] - eps mean(log p)``, averaged over kept items."""
    m, c = logits.shape
    logp = log_softmax(logits, -1)  # (M, C)
    picked = logp.reshape(-1)[Tensor.arange(m, dtype=np.int64, device=logits._dev) * c + targets]  # (M,)
    loss_i = -(1.0 - eps) * picked
    if eps:
        loss_i = loss_i - eps * logp.mean(-1)
    keep_t = Tensor._wrap(keep, logits._dev)
    return (loss_i * keep_t).sum() / n_kept


@composite("mse_loss")
def mse_loss(a: Tensor, b: Any) -> Tensor:
    """Mean of the squared differences."""
    d = a - b
    return (d * d).mean()


# -- attention ---------------------------------------------------------------------
def causal_mask(tq: int, tk: int, device: Any = None) -> Tensor:
    """Boolean ``(tq, tk)`` mask, True where query ``i`` may attend key ``j <= i``."""
    return Tensor(np.tri(tq, tk, 0, dtype=bool), device=device)


@functools.lru_cache(maxsize=16)
def _causal_bias(tq: int, tk: int, dtype: np.dtype, dev: Any) -> Any:
    """The additive causal mask ``(tq, tk)``: 0 where ``j <= i``, -inf above. Cached, as a
    model asks for the same one at every layer and step; ops only ever read it."""
    return dev.asarray(np.where(np.tri(tq, tk, 0, dtype=bool), 0.0, -np.inf).astype(dtype))


def _mask_arrays(q: Tensor, k: Tensor, mask: Any, is_causal: bool) -> tuple[Any, Any, Tensor | None]:
    """Turn ``mask`` and ``is_causal`` into an additive bias array, a row mask, or a float
    mask tensor that needs its gradient (then the bias stays a tensor)."""
    tq, tk = q.shape[-2], k.shape[-2]
    dev = q._dev
    if mask is None and is_causal and tk > 0:  # every query sees key 0: no empty rows
        return _causal_bias(tq, tk, q.dtype, dev), None, None
    xp = dev.ops
    # The mask arithmetic runs on the queries' device: no copy to the host per call.
    allowed = dev.asarray(np.tri(tq, tk, 0, dtype=bool)) if is_causal else None  # (tq, tk)
    bias_t = None
    if mask is not None:
        if not isinstance(mask, Tensor):
            mask = Tensor(np.asarray(mask), device=dev)
        if mask._dev is not dev:
            raise RuntimeError(f"scaled_dot_product_attention: mask on {mask.device}, queries on {q.device}")
        try:
            np.broadcast_shapes(mask.shape, q.shape[:-2] + (tq, tk))
        except ValueError:
            raise ValueError(
                f"scaled_dot_product_attention: mask of shape {mask.shape} does not broadcast to the "
                f"scores' shape {q.shape[:-2] + (tq, tk)}"
            ) from None
        if mask.dtype == np.bool_:
            allowed = mask.data if allowed is None else (mask.data & allowed)
        elif mask.requires_grad:
            bias_t = mask
        else:  # a float mask is added; its -inf entries mean "may not attend"
            fm = mask.data if mask.dtype == q.dtype else xp.astype(mask.data, q.data.dtype)
            allowed_f = fm > -math.inf
            if allowed is not None:
                allowed_f = allowed_f & allowed
            return _bias_from_allowed(xp, allowed_f, xp.where(allowed_f, fm, -math.inf))
    if allowed is None:
        return None, None, bias_t
    zeros = xp.zeros(tuple(allowed.shape), q.data.dtype)
    bias, row_any, _ = _bias_from_allowed(xp, allowed, xp.where(allowed, zeros, zeros - math.inf))
    return bias, row_any, bias_t


def _bias_from_allowed(xp: Any, allowed: Any, bias: Any) -> tuple[Any, Any, None]:
    """Zero the bias of rows with no key to attend (their softmax would be 0/0), and mark
    those rows, unless there are none."""
    rows = xp.any(allowed, axis=-1, keepdims=True)  # (..., Tq, 1)
    if bool(xp.all(rows)):
        return bias, None, None
    return xp.where(rows, bias, xp.zeros_like(bias)), rows, None


def scaled_dot_product_attention(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    mask: Any = None,
    is_causal: bool = False,
    scale: float | None = None,
    dropout_p: float = 0.0,
    return_weights: bool = False,
) -> Any:
    """``softmax(q @ k.mT * scale + mask) @ v``, the attention of "Attention Is All You Need".

    q ``(..., Tq, d)``, k ``(..., Tk, d)``, v ``(..., Tk, dv)`` -> ``(..., Tq, dv)``.
    A boolean ``mask`` (broadcastable to ``(..., Tq, Tk)``) is True where a query may
    attend; a float mask is added to the scores. A query with nothing to attend gets
    zeros, never NaN. ``return_weights=True`` also returns the ``(..., Tq, Tk)`` weights.
    """
    for t, n in ((q, "q"), (k, "k"), (v, "v")):
        if not isinstance(t, Tensor) or t.ndim < 2:
            raise ValueError(f"scaled_dot_product_attention: {n} must be a tensor of at least 2 dimensions")
    if q.shape[-1] != k.shape[-1] or k.shape[-2] != v.shape[-2]:
        raise ValueError(
            f"scaled_dot_product_attention: q {q.shape}, k {k.shape}, v {v.shape} do not fit: need "
            "q (..., Tq, d), k (..., Tk, d), v (..., Tk, dv)"
        )
    scale = 1.0 / math.sqrt(q.shape[-1]) if scale is None else float(scale)
    bias, row_any, bias_t = _mask_arrays(q, k, mask, is_causal)
    if not _State.decompose and bias_t is None and not return_weights and dropout_p == 0.0:
        causal = is_causal and mask is None
        return fused.Attention.apply(q, k, v, args=(scale, bias, row_any, causal))
    with scope("attention"):
        if bias_t is not None:
            bias = bias_t if bias is None else bias_t + Tensor._wrap(bias, q._dev)
        out, w = _attention_reference(q, k, v, scale, bias, row_any, dropout_p, weights=True)
    return (out, w) if return_weights else out


def _attention_reference(q: Tensor, k: Tensor, v: Tensor, scale: float, bias: Any, row_any: Any,
                         dropout_p: float = 0.0, weights: bool = False) -> Any:  # fmt: skip
    """The definition in primitives: scores, mask, softmax, (dropout), weighted sum."""
    s = (q @ k.mT) * scale  # (..., Tq, Tk)
    if bias is not None:
        s = s + (bias if isinstance(bias, Tensor) else Tensor._wrap(bias, q._dev))
    w = softmax(s, -1)
    if row_any is not None:
        w = where(Tensor._wrap(row_any, q._dev), w, 0.0)
    if dropout_p:
        w = dropout(w, dropout_p, True)
    out = w @ v  # (..., Tq, dv)
    return (out, w) if weights else out
