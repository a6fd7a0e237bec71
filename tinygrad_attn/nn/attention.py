"""Attention layers: multi-head attention and the score functions of the papers.

- :class:`MultiHeadAttention`: "Attention Is All You Need" (Vaswani et al., 2017),
  projections named as in PyTorch's ``nn.MultiheadAttention`` split layout.
- :class:`DotAttention`, :class:`GeneralAttention` (Luong et al., 2015) and
  :class:`AdditiveAttention` (Bahdanau et al., 2015): one score per (query, key),
  softmax over the keys, weighted sum of the values. Each returns
  ``(context, weights)``.

Masks are boolean with ``True`` meaning "may attend", or float and added to the scores.
A query with nothing to attend gets a zero context and zero weights, never NaN.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import functional as F
from .._tensor import Tensor, cat, where
from .layers import Linear
from .module import Module

# Masked scores are set to this before the softmax: exp() of it is 0 in float32 and
# float64, yet subtracting the row max from it cannot overflow (as -inf or -max would).
_MASKED = -1e9


def _extend_cache(cache: dict, k: Tensor, v: Tensor, mask: Any, is_causal: bool) -> tuple:
    """Keys and values of the earlier calls, then this call's, stored back in ``cache``.

    Causal attention then lines each new query up with its own position: query ``i`` of
    ``Tq`` new ones sits at ``Tk - Tq + i`` and may see the keys up to there.
    """
    tq = k.shape[2]  # this call's tokens
    if "k" in cache:
        k, v = cat([cache["k"], k], axis=2), cat([cache["v"], v], axis=2)
    cache["k"], cache["v"] = k, v
    tk = k.shape[2]
    if is_causal and tk > tq:
        if mask is not None:
            raise ValueError("MultiHeadAttention: is_causal with a cache takes no mask")
        mask = None if tq == 1 else Tensor(np.tri(tq, tk, tk - tq, dtype=bool), device=k.device)
        is_causal = False
    return k, v, mask, is_causal


def _as_mask(mask: Any, like: Tensor, op: str) -> Tensor:
    """``mask`` as a tensor on ``like``'s device (arrays and lists are copied there); a
    mask neither bool nor float raises, naming ``op``."""
    F.check_mask_dtype(op, mask)
    if isinstance(mask, Tensor):
        return mask
    return Tensor(np.asarray(mask), device=like._dev)


class MultiHeadAttention(Module):
    """Multi-head attention: project, split into heads, attend, merge, project.

    ``query`` ``(B, Tq, d_model)``, ``key`` ``(B, Tk, kdim)``, ``value`` ``(B, Tk, vdim)``;
    ``key`` and ``value`` default to ``query`` (self-attention). ``mask`` is boolean
    (True = may attend) or float (added to the scores), broadcastable to
    ``(B, n_heads, Tq, Tk)``; a 3-D mask ``(B, Tq, Tk)`` is applied to every head.

    >>> mha = MultiHeadAttention(8, 2)
    >>> x = Tensor.randn(1, 5, 8)
    >>> out, w = mha(x, is_causal=True, need_weights=True)
    >>> out.shape, w.shape
    ((1, 5, 8), (1, 2, 5, 5))
    """

    def __init__(self, d_model: int, n_heads: int, bias: bool = True, dropout: float = 0.0,
                 kdim: int | None = None, vdim: int | None = None) -> None:  # fmt: skip
        super().__init__()
        if d_model % n_heads:
            raise ValueError(f"MultiHeadAttention: d_model {d_model} is not divisible by n_heads {n_heads}")
        self.d_model, self.n_heads, self.head_dim = d_model, n_heads, d_model // n_heads
        self.kdim = kdim if kdim is not None else d_model
        self.vdim = vdim if vdim is not None else d_model
        self.dropout = dropout
        self.q_proj = Linear(d_model, d_model, bias=bias)
        self.k_proj = Linear(self.kdim, d_model, bias=bias)
        self.v_proj = Linear(self.vdim, d_model, bias=bias)
        self.out_proj = Linear(d_model, d_model, bias=bias)

    def forward(self, query: Tensor, key: Tensor | None = None, value: Tensor | None = None, mask: Any = None,
                is_causal: bool = False, need_weights: bool = False, cache: dict | None = None) -> Any:  # fmt: skip
        """``cache`` (a dict, self-attention only): the keys and values of earlier calls are
        kept in it and attended to as well, so a decoder can feed one new token at a time."""
        if cache is not None and any(t is not None and t is not query for t in (key, value)):
            raise ValueError("MultiHeadAttention: a cache is for self-attention; pass no key or value with it")
        key = query if key is None else key
        value = key if value is None else value
        self._check(query, key, value)
        b, tq = query.shape[0], query.shape[1]
        # Three products, not one over the stacked weights: even with the slices'
        # gradients added in place, the stacked form measured 5 to 15% slower at tiny and
        # small sizes (five more nodes) and within noise at medium and large.
        q = self._heads(self.q_proj(query))  # (B, H, Tq, hd)
        k = self._heads(self.k_proj(key))  # (B, H, Tk, hd)
        v = self._heads(self.v_proj(value))  # (B, H, Tk, hd)
        if cache is not None:
            k, v, mask, is_causal = _extend_cache(cache, k, v, mask, is_causal)
        if mask is not None:
            mask = _as_mask(mask, query, "MultiHeadAttention")
            if mask.ndim == 3:  # (B, Tq, Tk): the same mask for every head
                mask = mask.unsqueeze(1)
        p = self.dropout if self.training else 0.0
        res = F.scaled_dot_product_attention(q, k, v, mask=mask, is_causal=is_causal, dropout_p=p,
                                             return_weights=need_weights)  # fmt: skip
        out, weights = res if need_weights else (res, None)  # (B, H, Tq, hd), (B, H, Tq, Tk)
        out = out.permute(0, 2, 1, 3).reshape(b, tq, self.d_model)  # (B, Tq, d_model)
        out = self.out_proj(out)
        return (out, weights) if need_weights else out

    def _check(self, query: Tensor, key: Tensor, value: Tensor) -> None:
        ok = (
            query.ndim == key.ndim == value.ndim == 3
            and query.shape[-1] == self.d_model
            and key.shape[-1] == self.kdim
            and value.shape[-1] == self.vdim
            and key.shape[:2] == value.shape[:2]
            and query.shape[0] == key.shape[0]
        )
        if not ok:
            raise ValueError(
                f"MultiHeadAttention(d_model={self.d_model}, kdim={self.kdim}, vdim={self.vdim}): got query "
                f"{query.shape}, key {key.shape}, value {value.shape}; need (B, Tq, {self.d_model}), "
                f"(B, Tk, {self.kdim}), (B, Tk, {self.vdim})"
            )

    def _heads(self, x: Tensor) -> Tensor:
        b, t, _ = x.shape
        return x.reshape(b, t, self.n_heads, self.head_dim).permute(0, 2, 1, 3)  # (B, H, T, hd)

    def extra_repr(self) -> str:
        return f"d_model={self.d_model}, n_heads={self.n_heads}, dropout={self.dropout}"


# -- the score functions of the papers -------------------------------------------------
class _ScoreAttention(Module):
    """Softmax over ``score(query, keys)``, then the weighted sum of ``values``.

    Subclasses define ``score(q (B, Tq, dq), k (B, Tk, dk)) -> (B, Tq, Tk)``.
    """

    def score(self, q: Tensor, k: Tensor) -> Tensor:  # pragma: no cover - abstract
        raise NotImplementedError

    def forward(self, query: Tensor, keys: Tensor, values: Tensor, mask: Any = None) -> tuple[Tensor, Tensor]:
        """``query`` ``(B, dq)`` or ``(B, Tq, dq)``, ``keys`` ``(B, Tk, dk)``, ``values``
        ``(B, Tk, dv)``; ``mask`` broadcastable to ``(B, Tq, Tk)`` (a 2-D mask is read as
        ``(B, Tk)``, a key padding mask). Returns ``(context, weights)``: ``(B, dv)`` and
        ``(B, Tk)`` for a 2-D query, ``(B, Tq, dv)`` and ``(B, Tq, Tk)`` for a 3-D one.
        """
        name = type(self).__name__
        single = query.ndim == 2
        if single:
            query = query.unsqueeze(1)  # (B, 1, dq)
        if query.ndim != 3 or keys.ndim != 3 or values.ndim != 3 or keys.shape[:2] != values.shape[:2]:
            raise ValueError(
                f"{name}: got query {query.shape if not single else (query.shape[0], query.shape[2])}, keys "
                f"{keys.shape}, values {values.shape}; need (B, dq) or (B, Tq, dq), (B, Tk, dk), (B, Tk, dv)"
            )
        s = self.score(query, keys)  # (B, Tq, Tk)
        allowed = None
        if mask is not None:
            mask = _as_mask(mask, s, name)
            if mask.ndim == 2:  # (B, Tk)
                mask = mask.unsqueeze(1)
            try:
                np.broadcast_shapes(mask.shape, s.shape)
            except ValueError:
                raise ValueError(f"{name}: mask of shape {mask.shape} does not broadcast to scores {s.shape}") from None
            if mask.dtype == np.bool_:
                allowed = mask
            else:  # a float mask is added; its -inf entries mean "may not attend"
                allowed = mask > -math.inf
                s = s + mask
            s = where(allowed, s, _MASKED)
        w = s.softmax(-1)  # (B, Tq, Tk)
        if allowed is not None:  # a row with every key masked is uniform above: make it zeros
            w = where(allowed, w, 0.0)
        context = w @ values  # (B, Tq, dv)
        if single:
            return context.squeeze(1), w.squeeze(1)
        return context, w


class DotAttention(_ScoreAttention):
    """``score = q . k`` (divided by ``sqrt(d)`` when ``scaled``); no parameters.

    >>> ctx, w = DotAttention()(Tensor.randn(2, 4), Tensor.randn(2, 5, 4), Tensor.randn(2, 5, 3))
    >>> ctx.shape, w.shape
    ((2, 3), (2, 5))
    """

    def __init__(self, scaled: bool = True) -> None:
        super().__init__()
        self.scaled = scaled

    def score(self, q: Tensor, k: Tensor) -> Tensor:
        if q.shape[-1] != k.shape[-1]:
            raise ValueError(f"DotAttention: query size {q.shape[-1]} and key size {k.shape[-1]} differ")
        s = q @ k.mT  # (B, Tq, Tk)
        return s * (1.0 / math.sqrt(q.shape[-1])) if self.scaled else s

    def extra_repr(self) -> str:
        return f"scaled={self.scaled}"


class GeneralAttention(_ScoreAttention):
    """Luong's "general" score ``q . W k``; ``W`` is ``key_proj.weight`` ``(query_dim, key_dim)``."""

    def __init__(self, query_dim: int, key_dim: int) -> None:
        super().__init__()
        self.key_proj = Linear(key_dim, query_dim, bias=False)

    def score(self, q: Tensor, k: Tensor) -> Tensor:
        return q @ self.key_proj(k).mT  # (B, Tq, dq) @ (B, dq, Tk)


class AdditiveAttention(_ScoreAttention):
    """Bahdanau's score ``v . tanh(W q + U k)``: ``query_proj`` is W, ``key_proj`` is U, ``v``
    a ``Linear(hidden_dim, 1)`` without bias."""

    def __init__(self, query_dim: int, key_dim: int, hidden_dim: int) -> None:
        super().__init__()
        self.query_proj = Linear(query_dim, hidden_dim, bias=False)
        self.key_proj = Linear(key_dim, hidden_dim, bias=False)
        self.v = Linear(hidden_dim, 1, bias=False)

    def score(self, q: Tensor, k: Tensor) -> Tensor:
        wq = self.query_proj(q).unsqueeze(2)  # (B, Tq, 1, h)
        uk = self.key_proj(k).unsqueeze(1)  # (B, 1, Tk, h)
        return self.v((wq + uk).tanh()).squeeze(-1)  # (B, Tq, Tk)
