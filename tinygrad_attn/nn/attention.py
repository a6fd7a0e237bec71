"""Attention layers: PyTorch's multi-head attention and the score functions of the papers.

- :class:`MultiheadAttention`: PyTorch's ``nn.MultiheadAttention`` ("Attention Is All You
  Need", Vaswani et al., 2017), its arguments, layout and mask convention (True = may NOT
  attend). The library's batch-first attention (True = may attend) is
  :class:`tinygrad_attn.models.BatchFirstAttention`; both run :func:`attend_heads`.
- :class:`DotAttention`, :class:`GeneralAttention` (Luong et al., 2015) and
  :class:`AdditiveAttention` (Bahdanau et al., 2015): one score per (query, key),
  softmax over the keys, weighted sum of the values. Each returns
  ``(context, weights)``.

The score functions' masks are boolean with ``True`` meaning "may attend", or float and
added to the scores. A query with nothing to attend gets a zero context and zero weights,
never NaN.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import functional as F
from .. import random_transforms as rt
from .._tensor import Tensor, cat, where
from ..random import host_generator
from .init import xavier_normal_
from .layers import Linear, _float_dtype
from .module import Module, Parameter, _place


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
            raise ValueError("BatchFirstAttention: is_causal with a cache takes no mask")
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


def attend_heads(q: Tensor, k: Tensor, v: Tensor, n_heads: int, mask: Any = None, is_causal: bool = False,
                 dropout_p: float = 0.0, need_weights: bool = False,
                 cache: dict | None = None) -> tuple[Tensor, Tensor | None]:  # fmt: skip
    """The heads of multi-head attention, after the input projections and before the output one.

    ``q`` ``(B, Tq, E)``, ``k`` and ``v`` ``(B, Tk, E)`` (projected) are split into
    ``n_heads`` heads, attended with :func:`~tinygrad_attn.functional.scaled_dot_product_attention`
    (``mask`` True = may attend, or float and added, broadcastable to ``(B, H, Tq, Tk)``) and
    merged: returns ``(B, Tq, E)`` and the weights ``(B, H, Tq, Tk)`` (None unless
    ``need_weights``). Both the batch-first :class:`~tinygrad_attn.models.BatchFirstAttention`
    and PyTorch's :class:`MultiheadAttention` run this; ``cache`` as in the former.
    """
    b, tq, e = q.shape
    hd = e // n_heads

    def heads(x: Tensor) -> Tensor:
        return x.reshape(x.shape[0], x.shape[1], n_heads, hd).permute(0, 2, 1, 3)  # (B, H, T, hd)

    qh, kh, vh = heads(q), heads(k), heads(v)
    if cache is not None:
        kh, vh, mask, is_causal = _extend_cache(cache, kh, vh, mask, is_causal)
    res = F.scaled_dot_product_attention(qh, kh, vh, attn_mask=mask, dropout_p=dropout_p, is_causal=is_causal,
                                         return_weights=need_weights)  # fmt: skip
    out, weights = res if need_weights else (res, None)  # (B, H, Tq, hd), (B, H, Tq, Tk)
    return out.permute(0, 2, 1, 3).reshape(b, tq, e), weights  # (B, Tq, E)


def _xavier(shape: tuple[int, int], dtype: Any = None) -> Parameter:
    """Glorot and Bengio's uniform, PyTorch's ``init.xavier_uniform_`` (its bound, its draws)."""
    bound = math.sqrt(3.0) * math.sqrt(2.0 / float(shape[0] + shape[1]))
    return Parameter(rt.uniform(host_generator(), shape, _float_dtype(dtype), -bound, bound))


def _additive(mask: Tensor) -> Tensor:
    """A float mask as it is; a boolean one (True = not allowed, PyTorch's sense) as 0 / -inf."""
    if mask.dtype != np.bool_:
        return mask
    zero = Tensor.zeros(*mask.shape, device=mask.device)
    return where(mask, zero - math.inf, zero)


class MultiheadAttention(Module):
    """PyTorch's ``nn.MultiheadAttention``: its arguments, parameters, layout and masks.

    Sequence-first ``(L, N, E)`` inputs unless ``batch_first`` (then ``(N, L, E)``), or
    unbatched ``(L, E)``. Parameters ``in_proj_weight`` ``(3E, E)`` and ``in_proj_bias``
    ``(3E,)`` (q, k, v stacked), ``out_proj.weight``/``.bias``; with ``kdim``/``vdim``
    other than ``embed_dim``, ``q_proj_weight``, ``k_proj_weight``, ``v_proj_weight``
    instead of ``in_proj_weight``. ``add_bias_kv`` adds the learnt ``bias_k``/``bias_v`` ``(1, 1, E)``
    as one more key and value, ``add_zero_attn`` a zero key and value (both unmasked, as PyTorch's).
    So a PyTorch state dict loads as it is.

    ``forward(query, key, value, key_padding_mask, need_weights, attn_mask,
    average_attn_weights, is_causal)`` returns ``(output, weights)``; masks in PyTorch's
    sense: boolean True = may NOT attend, float = added to the scores. ``attn_mask`` is
    ``(L, S)`` or ``(N * num_heads, L, S)``, ``key_padding_mask`` ``(N, S)``. The weights
    are ``(N, L, S)``, averaged over the heads, or ``(N, num_heads, L, S)`` with
    ``average_attn_weights=False``. ``is_causal`` without ``attn_mask`` applies the causal
    mask (PyTorch asks for the mask too); with one, the mask is used as given.
    One difference: a query with every key masked gets zeros, where PyTorch gives NaN.

    The heads are computed by :func:`attend_heads`, as in the batch-first
    :class:`~tinygrad_attn.models.BatchFirstAttention` (whose boolean masks mean the opposite).

    >>> mha = MultiheadAttention(8, 2)
    >>> x = Tensor.randn(5, 1, 8)  # (L, N, E)
    >>> out, w = mha(x, x, x)
    >>> out.shape, w.shape
    ((5, 1, 8), (1, 5, 5))
    """

    def __init__(self, embed_dim: int, num_heads: int, dropout: float = 0.0, bias: bool = True,
                 add_bias_kv: bool = False, add_zero_attn: bool = False, kdim: int | None = None,
                 vdim: int | None = None, batch_first: bool = False, device: Any = None,
                 dtype: Any = None) -> None:  # fmt: skip
        super().__init__()
        if embed_dim % num_heads:
            raise ValueError(f"MultiheadAttention: embed_dim {embed_dim} is not divisible by num_heads {num_heads}")
        self.embed_dim, self.num_heads, self.head_dim = embed_dim, num_heads, embed_dim // num_heads
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self.dropout, self.batch_first = dropout, batch_first
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        # PyTorch's draws in its order: out_proj's Linear init first, then the input projections'
        # (its _reset_parameters); the parameters keep PyTorch's registration order
        out_proj = Linear(embed_dim, embed_dim, bias=bias, dtype=dtype)
        if self._qkv_same_embed_dim:
            self.in_proj_weight = _xavier((3 * embed_dim, embed_dim), dtype)
            self.q_proj_weight = self.k_proj_weight = self.v_proj_weight = None
        else:
            self.q_proj_weight = _xavier((embed_dim, embed_dim), dtype)
            self.k_proj_weight = _xavier((embed_dim, self.kdim), dtype)
            self.v_proj_weight = _xavier((embed_dim, self.vdim), dtype)
            self.in_proj_weight = None
        self.in_proj_bias = Parameter(np.zeros(3 * embed_dim, _float_dtype(dtype))) if bias else None
        self.out_proj = out_proj
        if bias:
            self.out_proj.bias._data = self.out_proj.bias._dev.ops.zeros_like(self.out_proj.bias._data)
        self.bias_k = self.bias_v = None
        if add_bias_kv:  # (1, 1, E) each, drawn after the projections, as PyTorch's
            self.bias_k = xavier_normal_(Parameter(np.zeros((1, 1, embed_dim), _float_dtype(dtype))))
            self.bias_v = xavier_normal_(Parameter(np.zeros((1, 1, embed_dim), _float_dtype(dtype))))
        self.add_zero_attn = add_zero_attn
        _place(self, device, dtype)

    def _project(self, query: Tensor, key: Tensor, value: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        e, b = self.embed_dim, self.in_proj_bias
        bq, bk, bv = (None, None, None) if b is None else (b[:e], b[e : 2 * e], b[2 * e :])
        if self.in_proj_weight is None:
            return (F.linear(query, self.q_proj_weight, bq), F.linear(key, self.k_proj_weight, bk),
                    F.linear(value, self.v_proj_weight, bv))  # fmt: skip
        w = self.in_proj_weight
        if query is key and key is value:  # self-attention: one product with the stacked weights
            q, k, v = F.linear(query, w, b).chunk(3, axis=-1)
            return q, k, v
        return F.linear(query, w[:e], bq), F.linear(key, w[e : 2 * e], bk), F.linear(value, w[2 * e :], bv)

    def _mask(self, attn_mask: Any, key_padding_mask: Any, n: int, tq: int, tk: int, like: Tensor) -> Tensor | None:
        """PyTorch's two masks as one mask in :func:`attend_heads`' sense, ``(N or 1, H or 1, L, S)``."""
        masks = []
        if attn_mask is not None:
            m = _as_mask(attn_mask, like, "MultiheadAttention")
            if m.shape == (tq, tk):
                pass
            elif m.shape == (n * self.num_heads, tq, tk):
                m = m.reshape(n, self.num_heads, tq, tk)
            else:
                raise ValueError(f"MultiheadAttention: attn_mask of shape {m.shape} must be (L, S) = {(tq, tk)} or "
                                 f"(N * num_heads, L, S) = {(n * self.num_heads, tq, tk)}")  # fmt: skip
            masks.append(m)
        if key_padding_mask is not None:
            m = _as_mask(key_padding_mask, like, "MultiheadAttention")
            if m.shape not in ((n, tk), (tk,)):
                raise ValueError(f"MultiheadAttention: key_padding_mask of shape {m.shape} must be (N, S) = "
                                 f"{(n, tk)}")  # fmt: skip
            masks.append(m.reshape(m.shape[0] if m.ndim == 2 else 1, 1, 1, tk))
        if not masks:
            return None
        if all(m.dtype == np.bool_ for m in masks):  # True = not allowed -> True = may attend
            return ~masks[0] if len(masks) == 1 else ~(masks[0] | masks[1])
        return masks[0] if len(masks) == 1 else _additive(masks[0]) + _additive(masks[1])

    def _extra_keys(self, k: Tensor, v: Tensor, mask: Tensor | None) -> tuple[Tensor, Tensor, Tensor | None]:
        """PyTorch's ``add_bias_kv`` (the learnt ``bias_k``/``bias_v`` as one more key and value) and
        ``add_zero_attn`` (a zero key and value after those); every query may attend to them."""
        n, e = k.shape[0], self.embed_dim
        extra = []
        if self.bias_k is not None:
            extra.append(
                (self.bias_k.reshape(1, 1, e).expand((n, 1, e)), self.bias_v.reshape(1, 1, e).expand((n, 1, e)))
            )
        if self.add_zero_attn:
            zero = k.new_zeros((n, 1, e))
            extra.append((zero, zero))
        if not extra:
            return k, v, mask
        k = cat([k, *(a for a, _ in extra)], 1)
        v = cat([v, *(b for _, b in extra)], 1)
        if mask is not None:  # (the new keys allowed: True in the boolean sense, 0 added in the float one)
            fill = Tensor.ones(*mask.shape[:-1], len(extra), dtype=mask.dtype, device=mask.device)
            mask = cat([mask, fill if mask.dtype == np.bool_ else fill * 0.0], -1)
        return k, v, mask

    def forward(self, query: Tensor, key: Tensor, value: Tensor, key_padding_mask: Any = None,
                need_weights: bool = True, attn_mask: Any = None, average_attn_weights: bool = True,
                is_causal: bool = False) -> tuple[Tensor, Tensor | None]:  # fmt: skip
        e = self.embed_dim
        unbatched = query.ndim == 2
        ok = (
            query.ndim == key.ndim == value.ndim
            and query.ndim in (2, 3)
            and query.shape[-1] == e
            and key.shape[-1] == self.kdim
            and value.shape[-1] == self.vdim
            and key.shape[:-1] == value.shape[:-1]
            and (unbatched or query.shape[1 - self.batch_first] == key.shape[1 - self.batch_first])
        )
        if not ok:
            layout = "(N, L, E)" if self.batch_first else "(L, N, E)"
            raise ValueError(f"MultiheadAttention(embed_dim={e}, kdim={self.kdim}, vdim={self.vdim}): got query "
                             f"{query.shape}, key {key.shape}, value {value.shape}; need {layout} inputs (or "
                             f"unbatched (L, E)) with E = {e}, {self.kdim}, {self.vdim}")  # fmt: skip

        def batch_major(x: Tensor) -> Tensor:  # (N, T, E) whatever the layout
            if unbatched:
                return x.unsqueeze(0)
            return x if self.batch_first else x.transpose(0, 1)

        same = query is key and key is value
        query, key, value = batch_major(query), batch_major(key), batch_major(value)
        if same:  # keep the one-product path for self-attention
            key = value = query
        q, k, v = self._project(query, key, value)  # (N, L, E), (N, S, E), (N, S, E)
        n, tq, tk = q.shape[0], q.shape[1], k.shape[1]
        mask = self._mask(attn_mask, key_padding_mask, n, tq, tk, q)
        k, v, mask = self._extra_keys(k, v, mask)  # (N, S', E): S' = S + 1 per learnt or zero key
        p = self.dropout if self.training else 0.0
        out, w = attend_heads(q, k, v, self.num_heads, mask, is_causal and attn_mask is None, p, need_weights)
        out = self.out_proj(out)  # (N, L, E)
        if unbatched:
            out = out.squeeze(0)
        elif not self.batch_first:
            out = out.transpose(0, 1)  # (L, N, E)
        if w is not None:
            if average_attn_weights:
                w = w.mean(axis=1)  # (N, L, S)
            if unbatched:
                w = w.squeeze(0)
        return out, w

    def extra_repr(self) -> str:
        return f"embed_dim={self.embed_dim}, num_heads={self.num_heads}, batch_first={self.batch_first}"


# -- the score functions of the papers -------------------------------------------------
class _ScoreAttention(Module):
    """Softmax over ``score(query, keys)``, then the weighted sum of ``values``.

    Subclasses define ``score(q (B, Tq, dq), k (B, Tk, dk)) -> (B, Tq, Tk)``. One whose
    score projects the keys (Bahdanau's ``U k``, Luong's ``W k``) splits it in two:
    ``prepare_keys(k)``, what the score reads of the keys, and ``score_prepared(q, pk)``,
    so a decoder that attends over the same keys at every step projects them once.
    """

    def score(self, q: Tensor, k: Tensor) -> Tensor:
        return self.score_prepared(q, self.prepare_keys(k))

    def prepare_keys(self, keys: Tensor) -> Tensor:
        """What :meth:`score_prepared` reads of ``keys`` ``(B, Tk, dk)``: the keys themselves here."""
        return keys

    def score_prepared(self, q: Tensor, pk: Tensor) -> Tensor:
        cls = type(self)
        if cls.score is not _ScoreAttention.score and cls.prepare_keys is _ScoreAttention.prepare_keys:
            return self.score(q, pk)  # a subclass that defines score alone: its keys need no preparing
        raise NotImplementedError(f"{cls.__name__}: define score(q, k), or prepare_keys and score_prepared")

    def _scores(self, query: Tensor, keys: Tensor, prepared_keys: Tensor | None) -> Tensor:
        """The scores ``(B, Tq, Tk)`` of a 3-D query, or ``(B, 1, Tk)`` of a 2-D one."""
        q = query.unsqueeze(1) if query.ndim == 2 else query  # (B, Tq, dq)
        return self.score(q, keys) if prepared_keys is None else self.score_prepared(q, prepared_keys)

    def forward(self, query: Tensor, keys: Tensor, values: Tensor, mask: Any = None,
                prepared_keys: Tensor | None = None) -> tuple[Tensor, Tensor]:  # fmt: skip
        """``query`` ``(B, dq)`` or ``(B, Tq, dq)``, ``keys`` ``(B, Tk, dk)``, ``values``
        ``(B, Tk, dv)``; ``mask`` broadcastable to ``(B, Tq, Tk)`` (a 2-D mask is read as
        ``(B, Tk)``, a key padding mask). Returns ``(context, weights)``: ``(B, dv)`` and
        ``(B, Tk)`` for a 2-D query, ``(B, Tq, dv)`` and ``(B, Tq, Tk)`` for a 3-D one.
        ``prepared_keys``: ``self.prepare_keys(keys)`` computed once for many calls (a decoder's
        steps over one source), used instead of computing it again.
        """
        name = type(self).__name__
        single = query.ndim == 2
        if query.ndim not in (2, 3) or keys.ndim != 3 or values.ndim != 3 or keys.shape[:2] != values.shape[:2]:
            raise ValueError(
                f"{name}: got query {query.shape}, keys {keys.shape}, values {values.shape}; need (B, dq) or "
                "(B, Tq, dq), (B, Tk, dk), (B, Tk, dv)"
            )
        s = self._scores(query, keys, prepared_keys)  # (B, Tq, Tk), Tq = 1 for a 2-D query
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
        # (B, Tq, Tk); a row with every key masked gets zeros
        w = s.softmax(-1) if allowed is None else F.masked_softmax(s, allowed, -1)
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

    def score_prepared(self, q: Tensor, k: Tensor) -> Tensor:
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

    def prepare_keys(self, keys: Tensor) -> Tensor:
        return self.key_proj(keys).mT  # (B, dq, Tk)

    def score_prepared(self, q: Tensor, pk: Tensor) -> Tensor:
        return q @ pk  # (B, Tq, dq) @ (B, dq, Tk)


class AdditiveAttention(_ScoreAttention):
    """Bahdanau's score ``v . tanh(W q + U k)``: ``query_proj`` is W, ``key_proj`` is U, ``v``
    a ``Linear(hidden_dim, 1)`` without bias."""

    def __init__(self, query_dim: int, key_dim: int, hidden_dim: int) -> None:
        super().__init__()
        self.query_proj = Linear(query_dim, hidden_dim, bias=False)
        self.key_proj = Linear(key_dim, hidden_dim, bias=False)
        self.v = Linear(hidden_dim, 1, bias=False)

    def prepare_keys(self, keys: Tensor) -> Tensor:
        return self.key_proj(keys)  # U k: (B, Tk, h)

    def score_prepared(self, q: Tensor, pk: Tensor) -> Tensor:
        return F.additive_score(self.query_proj(q), pk, self.v.weight)  # v . tanh(W q + U k): (B, Tq, Tk)
