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
from ..engine.switches import is_grad_enabled
from ..random import transforms as rt
from ..tensors._tensor import InvalidArgumentError, Tensor, cat, where
from .layers import Linear, NonDynamicallyQuantizableLinear, _float_dtype, init_draws
from .module import Module, Parameter, _place


class _InputShapeError(ValueError, AssertionError):
    """Inputs or a padding mask of the wrong shape, or heads that do not divide the width:
    PyTorch's attention checks them with assertions (AssertionError); a ValueError too, this
    library's class for a bad argument."""


class _MaskShapeError(ValueError, RuntimeError):
    """An ``attn_mask`` of the wrong shape: PyTorch raises RuntimeError."""


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
                 dropout_p: float = 0.0, need_weights: bool = False, cache: dict | None = None,
                 empty_rows_nan: bool = False, time_major: bool = False) -> tuple[Tensor, Tensor | None]:  # fmt: skip
    """The heads of multi-head attention, after the input projections and before the output one.

    ``q`` ``(B, Tq, E)``, ``k`` and ``v`` ``(B, Tk, E)`` (projected) are split into
    ``n_heads`` heads, attended with :func:`~tinygrad_attn.functional.scaled_dot_product_attention`
    (``mask`` True = may attend, or float and added, broadcastable to ``(B, H, Tq, Tk)``) and
    merged: returns ``(B, Tq, E)`` and the weights ``(B, H, Tq, Tk)`` (None unless
    ``need_weights``). Both the batch-first :class:`~tinygrad_attn.models.BatchFirstAttention`
    and PyTorch's :class:`MultiheadAttention` run this; ``cache`` as in the former.
    ``empty_rows_nan``: the softmax written out, as PyTorch's ``MultiheadAttention`` computes its
    weights (and its inference fast path everything): a query with every key masked gets NaN
    weights and a NaN context, where ``scaled_dot_product_attention`` gives zeros.
    ``time_major``: the heads merged into ``(Tq, B, E)`` instead, PyTorch's ``MultiheadAttention``'s layout.
    """
    b, tq, e = q.shape
    hd = e // n_heads

    def merged(out: Tensor) -> Tensor:  # (B, H, Tq, hd) -> (B, Tq, E) or (Tq, B, E)
        return out.permute(2, 0, 1, 3).reshape(tq, b, e) if time_major else out.permute(0, 2, 1, 3).reshape(b, tq, e)

    def heads(x: Tensor) -> Tensor:
        return x.reshape(x.shape[0], x.shape[1], n_heads, hd).permute(0, 2, 1, 3)  # (B, H, T, hd)

    qh, kh, vh = heads(q), heads(k), heads(v)
    if cache is not None:
        kh, vh, mask, is_causal = _extend_cache(cache, kh, vh, mask, is_causal)
    if empty_rows_nan:
        out, weights = F._attention_reference(qh, kh, vh, 1.0 / math.sqrt(hd) if hd else 1.0,
                                              _bias_of(mask, is_causal, qh, kh), None, dropout_p, weights=True)  # fmt: skip
        return merged(out), weights if need_weights else None
    if mask is not None and (mask.ndim if isinstance(mask, Tensor) else np.ndim(mask)) < 2:
        # (a mask of the keys alone, which broadcasts here; PyTorch's scaled_dot_product_attention reads (..., Tq, Tk))
        mask = _as_mask(mask, qh, "scaled_dot_product_attention")
        mask = mask.reshape((1,) * (2 - mask.ndim) + tuple(mask.shape))
    if is_causal and mask is not None:  # (scaled_dot_product_attention takes one of them: the triangle joins the mask)
        mask = _as_mask(mask, qh, "scaled_dot_product_attention")
        tri = Tensor(np.tri(qh.shape[-2], kh.shape[-2], 0, dtype=bool), device=qh.device)
        mask, is_causal = (mask & tri if mask.dtype == np.bool_ else _bias_of(tri, False, qh, kh) + mask), False
    res = F.scaled_dot_product_attention(qh, kh, vh, attn_mask=mask, dropout_p=dropout_p, is_causal=is_causal,
                                         return_weights=need_weights)  # fmt: skip
    out, weights = res if need_weights else (res, None)  # (B, H, Tq, hd), (B, H, Tq, Tk)
    return merged(out), weights


def _bias_of(mask: Any, is_causal: bool, q: Tensor, k: Tensor) -> Tensor | None:
    """``mask`` (True = may attend, or float and added) and ``is_causal`` as one additive bias,
    -inf where a query may not attend, in the queries' dtype."""
    tq, tk = q.shape[-2], k.shape[-2]
    if is_causal:
        tri = Tensor(np.tri(tq, tk, 0, dtype=bool), device=q.device)
        mask = tri if mask is None else (mask & tri if mask.dtype == np.bool_ else _bias_of(tri, False, q, k) + mask)
    if mask is None or mask.dtype != np.bool_:
        return mask
    zero = Tensor.zeros(mask.shape, dtype=q.dtype, device=q.device)
    return where(mask, zero, zero - math.inf)


def _xavier(shape: tuple[int, int], dtype: Any = None) -> Parameter:
    """Glorot and Bengio's uniform, PyTorch's ``init.xavier_uniform_`` (its bound, its draws)."""
    bound = math.sqrt(3.0) * math.sqrt(2.0 / float(shape[0] + shape[1]))
    return Parameter(init_draws(rt.uniform, shape, _float_dtype(dtype), None, -bound, bound))


def _additive(mask: Tensor, dtype: Any) -> Tensor:
    """A float mask as it is; a boolean one (True = not allowed, PyTorch's sense) as 0 / -inf in ``dtype``."""
    if mask.dtype != np.bool_:
        return mask
    zero = Tensor.zeros(mask.shape, dtype=dtype, device=mask.device)
    return where(mask, zero - math.inf, zero)


def _batch_major(x: Tensor, unbatched: bool, batch_first: bool) -> Tensor:
    """``(N, T, E)`` whatever the layout (sequence-first, batch-first or unbatched)."""
    if unbatched:
        return x.unsqueeze(0)
    return x if batch_first else x.transpose(0, 1)


def _from_sequence_first(x: Tensor, unbatched: bool, batch_first: bool) -> Tensor:
    """The caller's layout of a sequence-first ``(L, N, E)`` result: a batch-first one is its
    transposed view, as PyTorch's is (so what reads memory order, a dropout mask, reads as PyTorch's)."""
    if unbatched:
        return x.squeeze(1)
    return x.transpose(0, 1) if batch_first else x


def _project(query: Tensor, key: Tensor, value: Tensor, e: int, in_proj_weight: Tensor | None,
             in_proj_bias: Tensor | None, separate: tuple) -> tuple[Tensor, Tensor, Tensor]:  # fmt: skip
    """The input projections: one stacked ``(3E, E)`` weight, or ``q``/``k``/``v`` ones."""
    b = in_proj_bias
    bq, bk, bv = (None, None, None) if b is None else (b[:e], b[e : 2 * e], b[2 * e :])
    if in_proj_weight is None:
        wq, wk, wv = separate
        return F.linear(query, wq, bq), F.linear(key, wk, bk), F.linear(value, wv, bv)
    w = in_proj_weight
    if query is key and key is value:  # self-attention: one product with the stacked weights
        q, k, v = F.linear(query, w, b).chunk(3, axis=-1)
        return q, k, v
    return F.linear(query, w[:e], bq), F.linear(key, w[e : 2 * e], bk), F.linear(value, w[2 * e :], bv)


def _masks(op: str, attn_mask: Any, key_padding_mask: Any, n: int, heads: int, tq: int, tk: int,
           like: Tensor) -> Tensor | None:  # fmt: skip
    """PyTorch's two masks as one mask in :func:`attend_heads`' sense, ``(N or 1, H or 1, L, S)``."""
    masks = []
    if attn_mask is not None:
        m = _as_mask(attn_mask, like, op)
        if m.shape == (tq, tk):
            pass
        elif m.shape == (n * heads, tq, tk):
            m = m.reshape(n, heads, tq, tk)
        else:
            raise _MaskShapeError(f"{op}: attn_mask of shape {tuple(m.shape)} must be (L, S) = {(tq, tk)} or "
                             f"(N * num_heads, L, S) = {(n * heads, tq, tk)}")  # fmt: skip
        masks.append(m)
    if key_padding_mask is not None:
        m = _as_mask(key_padding_mask, like, op)
        if m.shape not in ((n, tk), (tk,)):
            raise _InputShapeError(f"{op}: key_padding_mask of shape {tuple(m.shape)} must be (N, S) = {(n, tk)}")
        masks.append(m.reshape(m.shape[0] if m.ndim == 2 else 1, 1, 1, tk))
    if not masks:
        return None
    if all(m.dtype == np.bool_ for m in masks):  # True = not allowed -> True = may attend
        return ~masks[0] if len(masks) == 1 else ~(masks[0] | masks[1])
    if len(masks) == 1:
        return masks[0]
    dtype = next(m.dtype for m in masks if m.dtype != np.bool_)  # (PyTorch's: the bool one in the float one's dtype)
    return _additive(masks[0], dtype) + _additive(masks[1], dtype)


def _attend_one_more(k: Tensor, v: Tensor, mask: Tensor | None, k_row: Tensor, v_row: Tensor) -> tuple:
    """``k_row``/``v_row`` ``(N, 1, E)`` appended to the keys and values, and a mask column that
    lets every query attend them (``add_bias_kv``, ``add_zero_attn``)."""
    k, v = cat([k, k_row], axis=1), cat([v, v_row], axis=1)
    if mask is not None:
        extra = Tensor.ones(*mask.shape[:-1], 1, dtype=mask.dtype, device=mask.device)
        mask = cat([mask, extra if mask.dtype == np.bool_ else extra * 0], axis=-1)
    return k, v, mask


def _attention(op: str, query: Tensor, key: Tensor, value: Tensor, num_heads: int, in_proj_weight: Tensor | None,
               in_proj_bias: Tensor | None, separate: tuple, bias_k: Tensor | None, bias_v: Tensor | None,
               add_zero_attn: bool, dropout_p: float, out_proj_weight: Tensor, out_proj_bias: Tensor | None,
               key_padding_mask: Any, need_weights: bool, attn_mask: Any, average_attn_weights: bool,
               is_causal: bool, static_k: Tensor | None = None, static_v: Tensor | None = None,
               fast_path: bool = False) -> tuple[Tensor, Tensor | None]:  # fmt: skip
    """PyTorch's multi-head attention on batch-major ``(N, L, E)`` query and ``(N, S, kdim)``,
    ``(N, S, vdim)`` key and value: the one computation of both :class:`MultiheadAttention`
    and :func:`multi_head_attention_forward`. Returns the output sequence-first, ``(L, N, E)``
    (PyTorch's layout, which a batch-first module returns transposed), and the weights (None
    unless ``need_weights``; ``(N, L, S')`` averaged over the heads, else ``(N, H, L, S')``,
    ``S'`` counting the appended bias and zero positions). With the weights, or on PyTorch's
    inference ``fast_path``, a query with every key masked gets NaN, as PyTorch's softmax
    written out gives; otherwise zeros, as its ``scaled_dot_product_attention``."""
    e = query.shape[-1]
    q, k, v = _project(query, key, value, e, in_proj_weight, in_proj_bias, separate)  # (N, L, E), (N, S, E) x 2
    n, tq, tk = q.shape[0], q.shape[1], k.shape[1]
    mask = _masks(op, attn_mask, key_padding_mask, n, num_heads, tq, tk, q)
    if bias_k is not None and bias_v is not None:
        k, v, mask = _attend_one_more(k, v, mask, bias_k.reshape(1, 1, e).expand((n, 1, e)),
                                      bias_v.reshape(1, 1, e).expand((n, 1, e)))  # fmt: skip
    hd = e // num_heads
    for static, what in ((static_k, "static_k"), (static_v, "static_v")):
        if static is not None and (static.ndim != 3 or static.shape[0] != n * num_heads or static.shape[2] != hd):
            raise ValueError(f"{op}: expecting {what} of shape ({n * num_heads}, S, {hd}), got {tuple(static.shape)}")
    if static_k is not None:  # (N * H, S, hd) -> (N, S, E), the layout attend_heads splits
        k = static_k.reshape(n, num_heads, static_k.shape[1], hd).permute(0, 2, 1, 3).reshape(n, -1, e)
    if static_v is not None:
        v = static_v.reshape(n, num_heads, static_v.shape[1], hd).permute(0, 2, 1, 3).reshape(n, -1, e)
    if add_zero_attn:
        zeros = Tensor.zeros(n, 1, e, dtype=k.dtype, device=k.device)
        k, v, mask = _attend_one_more(k, v, mask, zeros, zeros)
    out, w = attend_heads(q, k, v, num_heads, mask, is_causal, dropout_p, need_weights,
                          empty_rows_nan=need_weights or fast_path, time_major=not fast_path)  # fmt: skip
    out = F.linear(out, out_proj_weight, out_proj_bias)  # (L, N, E), as PyTorch's
    if fast_path:  # (PyTorch's inference kernel computes batch-first: (N, L, E) in memory)
        out = out.transpose(0, 1)
    if w is not None and average_attn_weights:
        w = w.mean(axis=1)  # (N, L, S')
    return out, w


def multi_head_attention_forward(
    query: Tensor, key: Tensor, value: Tensor, embed_dim_to_check: int, num_heads: int,
    in_proj_weight: Tensor | None, in_proj_bias: Tensor | None, bias_k: Tensor | None, bias_v: Tensor | None,
    add_zero_attn: bool, dropout_p: float, out_proj_weight: Tensor, out_proj_bias: Tensor | None,
    training: bool = True, key_padding_mask: Tensor | None = None, need_weights: bool = True,
    attn_mask: Tensor | None = None, use_separate_proj_weight: bool = False, q_proj_weight: Tensor | None = None,
    k_proj_weight: Tensor | None = None, v_proj_weight: Tensor | None = None, static_k: Tensor | None = None,
    static_v: Tensor | None = None, average_attn_weights: bool = True, is_causal: bool = False,
) -> tuple[Tensor, Tensor | None]:  # fmt: skip
    """PyTorch's ``F.multi_head_attention_forward``: :class:`MultiheadAttention`'s computation
    with its weights passed in. ``query`` ``(L, N, E)``, ``key``/``value`` ``(S, N, E_k)``/``(S,
    N, E_v)`` (sequence-first), or unbatched ``(L, E)``; masks in PyTorch's sense (boolean True =
    may NOT attend, float added); ``static_k``/``static_v`` ``(N * num_heads, S, E / num_heads)``
    replace the projected keys/values. Returns ``(attn_output, attn_weights)``.
    """
    op = "multi_head_attention_forward"
    unbatched = query.ndim == 2
    if query.ndim not in (2, 3) or key.ndim != query.ndim or value.ndim != query.ndim:
        raise AssertionError(f"{op}: query, key and value must all be 3-D (L, N, E) or all 2-D (L, E), got "
                             f"{tuple(query.shape)}, {tuple(key.shape)}, {tuple(value.shape)}")  # fmt: skip
    e = query.shape[-1]
    if e != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, but got {e}")
    if e % num_heads:
        raise AssertionError(f"embed_dim {e} not divisible by num_heads {num_heads}")
    if use_separate_proj_weight:
        if key.shape[:-1] != value.shape[:-1]:
            raise AssertionError(f"key's sequence and batch dims {tuple(key.shape[:-1])} do not match value's "
                                 f"{tuple(value.shape[:-1])}")  # fmt: skip
    elif key.shape != value.shape:
        raise AssertionError(f"key shape {tuple(key.shape)} does not match value shape {tuple(value.shape)}")
    if is_causal and attn_mask is None:
        raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the Transformer module "
                           "method `generate_square_subsequent_mask` to create this mask.")  # fmt: skip
    if (bias_k is None) != (bias_v is None):
        raise AssertionError(f"{op}: bias_k and bias_v go together")
    if (bias_k is not None) and (static_k is not None or static_v is not None):
        raise AssertionError("bias cannot be added to static key/value.")
    # (PyTorch's: without a padding mask or weights the hint replaces the mask, as sdpa's is_causal)
    causal = is_causal and key_padding_mask is None and not need_weights
    same = query is key and key is value
    query, key, value = (_batch_major(x, unbatched, False) for x in (query, key, value))
    if same:
        key = value = query
    out, w = _attention(
        op, query, key, value, num_heads, None if use_separate_proj_weight else in_proj_weight, in_proj_bias,
        (q_proj_weight, k_proj_weight, v_proj_weight), bias_k, bias_v, add_zero_attn,
        dropout_p if training else 0.0, out_proj_weight, out_proj_bias, key_padding_mask, need_weights,
        None if causal else attn_mask, average_attn_weights, causal, static_k, static_v,
    )  # fmt: skip
    if w is not None and unbatched:
        w = w.squeeze(0)
    return _from_sequence_first(out, unbatched, False), w


class MultiheadAttention(Module):
    """PyTorch's ``nn.MultiheadAttention``: its arguments, parameters, layout and masks.

    Sequence-first ``(L, N, E)`` inputs unless ``batch_first`` (then ``(N, L, E)``), or
    unbatched ``(L, E)``. Parameters ``in_proj_weight`` ``(3E, E)`` and ``in_proj_bias``
    ``(3E,)`` (q, k, v stacked), ``out_proj.weight``/``.bias``; with ``kdim``/``vdim``
    other than ``embed_dim``, ``q_proj_weight``, ``k_proj_weight``, ``v_proj_weight``
    instead of ``in_proj_weight``; with ``add_bias_kv``, ``bias_k`` and ``bias_v`` ``(1, 1, E)``
    appended to the keys and values (``add_zero_attn`` appends zeros after them, as PyTorch's).
    So a PyTorch state dict loads as it is. :func:`multi_head_attention_forward` is the same
    computation with the weights passed in (PyTorch's ``F.multi_head_attention_forward``).

    ``forward(query, key, value, key_padding_mask, need_weights, attn_mask,
    average_attn_weights, is_causal)`` returns ``(output, weights)``; masks in PyTorch's
    sense: boolean True = may NOT attend, float = added to the scores. ``attn_mask`` is
    ``(L, S)`` or ``(N * num_heads, L, S)``, ``key_padding_mask`` ``(N, S)``. The weights
    are ``(N, L, S)``, averaged over the heads, or ``(N, num_heads, L, S)`` with
    ``average_attn_weights=False``. ``is_causal`` needs ``attn_mask`` (PyTorch's
    RuntimeError); without ``key_padding_mask`` and weights it replaces the mask by the causal
    one, as PyTorch's. A query with every key masked gets NaN where PyTorch's does (with the
    weights, and on PyTorch's inference fast path), zeros elsewhere (its
    ``scaled_dot_product_attention``).

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
            raise _InputShapeError(
                f"MultiheadAttention: embed_dim {embed_dim} is not divisible by num_heads {num_heads}"
            )
        self.embed_dim, self.num_heads, self.head_dim = embed_dim, num_heads, embed_dim // num_heads
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self.dropout, self.batch_first = dropout, batch_first
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        # PyTorch's draws in its order: out_proj's Linear init first, then the input projections'
        # and bias_k, bias_v's (its _reset_parameters); the parameters keep PyTorch's registration order
        out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias, dtype=dtype)
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
        if add_bias_kv:  # (1, 1, E) each, Glorot-normal, appended to the keys and values
            from . import init  # noqa: PLC0415 - init imports nothing of this module, but only this branch needs it

            self.bias_k = init.xavier_normal_(Parameter(np.zeros((1, 1, embed_dim), _float_dtype(dtype))))
            self.bias_v = init.xavier_normal_(Parameter(np.zeros((1, 1, embed_dim), _float_dtype(dtype))))
        self.add_zero_attn = add_zero_attn
        _place(self, device, dtype)

    def _fast_path(self, query: Tensor, key: Tensor, value: Tensor, attn_mask: Any, key_padding_mask: Any) -> bool:
        """Whether PyTorch's call takes its inference fast path (a fused kernel whose masked rows are
        NaN, and which reads no ``is_causal``): self-attention of a batch-first layer in eval mode,
        with an even number of heads, biases, no extra keys, boolean masks, and nothing that
        records a gradient."""
        tensors = (query, self.in_proj_weight, self.in_proj_bias, self.out_proj.weight, self.out_proj.bias)
        float_mask = any(isinstance(m, Tensor) and m.is_floating_point() for m in (attn_mask, key_padding_mask))
        float_mask = float_mask and not self.__dict__.get("_masks_of_any_kind", False)  # (set by an encoder layer)
        return (
            not float_mask and query.ndim == 3 and query is key and key is value and not self.training
            and self.batch_first and self.num_heads % 2 == 0 and self.in_proj_weight is not None
            and self.in_proj_bias is not None and query.dtype == self.in_proj_weight.dtype
            and self.bias_k is None and not self.add_zero_attn and self._qkv_same_embed_dim
            and not (is_grad_enabled() and any(t is not None and t.requires_grad for t in tensors))
        )  # fmt: skip

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
        )
        if ok and not unbatched and query.shape[1 - self.batch_first] != key.shape[1 - self.batch_first]:
            # (PyTorch's assertions pass, and its reshape of the keys into the query's batch and heads refuses)
            raise InvalidArgumentError(
                f"MultiheadAttention: query of shape {tuple(query.shape)} and key of shape {tuple(key.shape)} have "
                f"different batch sizes (batch_first={self.batch_first})"
            )
        if not ok:
            layout = "(N, L, E)" if self.batch_first else "(L, N, E)"
            raise _InputShapeError(f"MultiheadAttention(embed_dim={e}, kdim={self.kdim}, vdim={self.vdim}): got query "
                             f"{tuple(query.shape)}, key {tuple(key.shape)}, value {tuple(value.shape)}; need {layout} inputs (or "
                             f"unbatched (L, E)) with E = {e}, {self.kdim}, {self.vdim}")  # fmt: skip
        fast = self._fast_path(query, key, value, attn_mask, key_padding_mask)
        causal = False  # (PyTorch's fast path reads no is_causal)
        if not fast:
            if is_causal and attn_mask is None:
                raise RuntimeError("MultiheadAttention: need attn_mask if specifying the is_causal hint. You may use "
                                   "the Transformer module method `generate_square_subsequent_mask` to create this "
                                   "mask.")  # fmt: skip
            # (PyTorch's: without a padding mask or weights the hint replaces the mask, as sdpa's is_causal)
            causal = is_causal and key_padding_mask is None and not need_weights
        same = query is key and key is value
        query, key, value = (_batch_major(x, unbatched, self.batch_first) for x in (query, key, value))
        if same:  # keep the one-product path for self-attention
            key = value = query
        out, w = _attention(
            "MultiheadAttention", query, key, value, self.num_heads, self.in_proj_weight, self.in_proj_bias,
            (self.q_proj_weight, self.k_proj_weight, self.v_proj_weight), self.bias_k, self.bias_v,
            self.add_zero_attn, self.dropout if self.training else 0.0, self.out_proj.weight, self.out_proj.bias,
            key_padding_mask, need_weights, None if causal else attn_mask, average_attn_weights, causal,
            fast_path=fast,
        )  # fmt: skip
        if w is not None and unbatched:
            w = w.squeeze(0)
        return _from_sequence_first(out, unbatched, self.batch_first), w


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
                f"{name}: got query {tuple(query.shape)}, keys {tuple(keys.shape)}, values {tuple(values.shape)}; need (B, dq) or "
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
                raise ValueError(
                    f"{name}: mask of shape {tuple(mask.shape)} does not broadcast to scores {tuple(s.shape)}"
                ) from None
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


# F.multi_head_attention_forward is this module's function, handed down (functional.py imports nothing above it)
F.multi_head_attention_forward.implementation = multi_head_attention_forward  # type: ignore[attr-defined]
