"""The transformer layers and stacks in PyTorch's conventions: ``nn.TransformerEncoderLayer``,
``nn.TransformerEncoder``, ``nn.TransformerDecoderLayer``, ``nn.TransformerDecoder`` and the
whole encoder-decoder ``nn.Transformer``.

PyTorch's constructor arguments and defaults (``dim_feedforward=2048``, ``dropout=0.1``),
sequence-first inputs unless ``batch_first``, masks in PyTorch's sense (boolean True =
may NOT attend, float = added; ``*_key_padding_mask`` ``(N, S)``), and children named
as PyTorch names them (``self_attn``, ``multihead_attn``, ``linear1``, ``norm1``, ...),
so a PyTorch state dict loads as it is. The layer bodies are the ones of
:mod:`tinygrad_attn.nn.transformer`; only the attention
(:class:`~tinygrad_attn.nn.attention.MultiheadAttention`) and the signatures differ.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from .. import functional as F
from ..engine.switches import is_grad_enabled
from ..tensors._tensor import Tensor, where
from ..tensors.factories import creation
from . import init
from .attention import MultiheadAttention
from .layers import LayerNorm
from .module import Module, ModuleList, Parameter, _place
from .transformer import _activation, _DecoderLayerBase, _EncoderLayerBase


def _clone(module: Module) -> Module:
    """A deep copy of ``module``: its own parameters and buffers with the same values.

    The tensors are copied by hand (through the memo) and everything else by
    ``copy.deepcopy``, so this works whether or not a Tensor can be deep-copied.
    """
    memo: dict[int, Any] = {}
    for t in module._tensors():
        if isinstance(t, Parameter):  # (a copy on the tensor's device: a meta one has no values to read)
            memo[id(t)] = Parameter(t.detach().clone(), requires_grad=t.requires_grad)
        else:
            memo[id(t)] = t.detach().clone()
    return copy.deepcopy(module, memo)


class TransformerEncoderLayer(_EncoderLayerBase):
    """PyTorch's ``nn.TransformerEncoderLayer``: self-attention and a feed-forward block.

    >>> layer = TransformerEncoderLayer(16, 4, dim_feedforward=32)
    >>> layer(Tensor.randn(5, 2, 16)).shape  # (S, N, E)
    (5, 2, 16)
    """

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048, dropout: float = 0.1,
                 activation: str | Callable[[Tensor], Tensor] = F.relu, layer_norm_eps: float = 1e-5,
                 batch_first: bool = False, norm_first: bool = False, bias: bool = True, device: Any = None,
                 dtype: Any = None) -> None:  # fmt: skip
        super().__init__()
        attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias, batch_first=batch_first, dtype=dtype)
        self._build(attn, d_model, dim_feedforward, dropout, norm_first, activation, layer_norm_eps, bias, dtype)
        self.batch_first = batch_first
        _place(self, device, dtype)

    def forward(self, src: Tensor, src_mask: Any = None, src_key_padding_mask: Any = None,
                is_causal: bool = False) -> Tensor:  # fmt: skip
        """``src`` ``(S, N, E)`` (``(N, S, E)`` with ``batch_first``, or ``(S, E)``); ``src_mask``
        ``(S, S)`` or ``(N * nhead, S, S)``; ``is_causal`` without ``src_mask`` masks the future."""
        fused = _fused_kind(self)
        if not fused:  # (PyTorch's layer then hands its attention float masks: no fast path there)
            src_mask, src_key_padding_mask = (_as_float_mask(m, src) for m in (src_mask, src_key_padding_mask))
        # (its fused kernel takes masks of either kind: the attention's fast path, float masks too)
        self.self_attn._masks_of_any_kind = fused
        try:
            return self._layer(src, lambda x: self.self_attn(
                x, x, x, attn_mask=src_mask, key_padding_mask=src_key_padding_mask, need_weights=False,
                is_causal=is_causal)[0])  # fmt: skip
        finally:
            self.self_attn._masks_of_any_kind = False


class TransformerDecoderLayer(_DecoderLayerBase):
    """PyTorch's ``nn.TransformerDecoderLayer``: self-attention, attention over the memory
    (``multihead_attn``), a feed-forward block.

    >>> layer = TransformerDecoderLayer(16, 4, dim_feedforward=32)
    >>> layer(Tensor.randn(3, 2, 16), Tensor.randn(5, 2, 16)).shape  # (T, N, E)
    (3, 2, 16)
    """

    _cross = "multihead_attn"

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048, dropout: float = 0.1,
                 activation: str | Callable[[Tensor], Tensor] = F.relu, layer_norm_eps: float = 1e-5,
                 batch_first: bool = False, norm_first: bool = False, bias: bool = True, device: Any = None,
                 dtype: Any = None) -> None:  # fmt: skip
        super().__init__()
        attn_kw = dict(dropout=dropout, bias=bias, batch_first=batch_first, dtype=dtype)
        self_attn = MultiheadAttention(d_model, nhead, **attn_kw)
        cross_attn = MultiheadAttention(d_model, nhead, **attn_kw)
        self._build(self_attn, cross_attn, d_model, dim_feedforward, dropout, norm_first, activation,
                    layer_norm_eps, bias, dtype)  # fmt: skip
        self.batch_first = batch_first
        _place(self, device, dtype)

    def forward(self, tgt: Tensor, memory: Tensor, tgt_mask: Any = None, memory_mask: Any = None,
                tgt_key_padding_mask: Any = None, memory_key_padding_mask: Any = None,
                tgt_is_causal: bool = False, memory_is_causal: bool = False) -> Tensor:  # fmt: skip
        """``tgt`` ``(T, N, E)``, ``memory`` ``(S, N, E)`` (batch first with ``batch_first``);
        ``tgt_mask`` ``(T, T)``, ``memory_mask`` ``(T, S)``; ``tgt_is_causal`` without
        ``tgt_mask`` masks the future."""
        return self._layer(
            tgt,
            lambda x: self.self_attn(x, x, x, attn_mask=tgt_mask, key_padding_mask=tgt_key_padding_mask,
                                     need_weights=False, is_causal=tgt_is_causal)[0],
            lambda x: self.multihead_attn(x, memory, memory, attn_mask=memory_mask,
                                          key_padding_mask=memory_key_padding_mask, need_weights=False,
                                          is_causal=memory_is_causal)[0],
        )  # fmt: skip

    def __setstate__(self, state: dict[str, Any]) -> None:
        # As PyTorch's: a copy (TransformerDecoder's clones, copy.deepcopy, unpickling) of a
        # layer whose activation is a module (a child, not a plain attribute there) takes relu
        # as its activation attribute, which then shadows the child: its layers compute relu.
        super().__setstate__(state)
        if isinstance(state.get("activation"), Module):
            self.__dict__["activation"] = _activation("relu", type(self).__name__)


class TransformerEncoder(Module):
    """PyTorch's ``nn.TransformerEncoder``: ``num_layers`` copies of ``encoder_layer``
    (``layers.0``, ...; each starts with the same weights, as PyTorch's deep copies do),
    then ``norm`` if given.

    With ``enable_nested_tensor`` (the default) PyTorch runs inference with a left-aligned
    ``src_key_padding_mask`` and no ``mask`` on nested tensors of the kept tokens alone
    (layers of its fast-path kind: post-norm, batch-first, biases, relu or gelu, an even
    number of heads); the padded positions of its result are zeros, before ``norm``. So are
    they here, under the same conditions (the kept positions are what the padding mask gives).
    """

    def __init__(self, encoder_layer: Module, num_layers: int, norm: Module | None = None,
                 enable_nested_tensor: bool = True, mask_check: bool = True) -> None:  # fmt: skip
        super().__init__()
        self.layers = ModuleList(_clone(encoder_layer) for _ in range(num_layers))
        self.num_layers = num_layers
        self.norm = norm
        self.enable_nested_tensor, self.mask_check = enable_nested_tensor, mask_check
        self.use_nested_tensor = enable_nested_tensor and _nested_kind(encoder_layer)

    def _padded_zeros(self, src: Tensor, mask: Any, src_key_padding_mask: Any) -> Tensor | None:
        """The kept tokens ``(N, S)`` where PyTorch's call takes its nested-tensor path, else None."""
        kpm, first = src_key_padding_mask, self.layers[0] if len(self.layers) else None
        if not (self.use_nested_tensor and first is not None and not first.training and src.ndim == 3
                and isinstance(kpm, Tensor) and kpm.ndim == 2 and mask is None):  # fmt: skip
            return None
        attn = first.self_attn
        weights = (src, attn.in_proj_weight, attn.in_proj_bias, attn.out_proj.weight, attn.out_proj.bias,
                   *first.parameters())  # fmt: skip
        if is_grad_enabled() and any(t is not None and t.requires_grad for t in weights):
            return None
        kept = kpm == 0 if kpm.is_floating_point() else ~kpm.bool()
        if self.mask_check and kpm.shape[1] > 1 and bool((kept[:, 1:] & ~kept[:, :-1]).any()):
            return None  # (not left-aligned: PyTorch's mask check keeps the padded path)
        return kept

    def forward(self, src: Tensor, mask: Any = None, src_key_padding_mask: Any = None,
                is_causal: bool | None = None) -> Tensor:  # fmt: skip
        kept = self._padded_zeros(src, mask, src_key_padding_mask)
        x = src
        for layer in self.layers:
            x = layer(x, src_mask=mask, src_key_padding_mask=src_key_padding_mask, is_causal=bool(is_causal))
        if kept is not None:
            x = where(kept.unsqueeze(-1), x, 0.0)  # (N, S, E): batch-first, a condition of the path
        return self.norm(x) if self.norm is not None else x


def _fused_kind(layer: Module) -> bool:
    """Whether PyTorch's encoder layer may run as its fused inference kernel: relu or gelu, equal norm eps."""
    act = layer.__dict__.get("activation", getattr(layer, "activation", None))
    relu_or_gelu = act in (F.relu, F.gelu, Tensor.relu, Tensor.gelu) or type(act).__name__ in (
        "ReLU", "GELU")  # fmt: skip
    return relu_or_gelu and layer.norm1.eps == layer.norm2.eps


def _as_float_mask(mask: Any, like: Tensor) -> Any:
    """A boolean mask (True = may not attend) as PyTorch's layers pass it on: 0 / -inf in ``like``'s dtype."""
    if not isinstance(mask, Tensor) or mask.dtype != bool:
        return mask
    zero = Tensor.zeros(mask.shape, dtype=like.dtype, device=like.device)
    return where(mask, zero - float("inf"), zero)


def _nested_kind(layer: Module) -> bool:
    """Whether PyTorch's ``TransformerEncoder`` may run ``layer``'s copies on nested tensors."""
    if not isinstance(layer, TransformerEncoderLayer):
        return False
    attn = layer.self_attn
    return (
        not layer.norm_first and attn.batch_first and attn._qkv_same_embed_dim and attn.in_proj_bias is not None
        and _fused_kind(layer) and attn.num_heads % 2 == 0
    )  # fmt: skip


class TransformerDecoder(Module):
    """PyTorch's ``nn.TransformerDecoder``: ``num_layers`` copies of ``decoder_layer``, then
    ``norm`` if given."""

    def __init__(self, decoder_layer: Module, num_layers: int, norm: Module | None = None) -> None:
        super().__init__()
        self.layers = ModuleList(_clone(decoder_layer) for _ in range(num_layers))
        self.num_layers = num_layers
        self.norm = norm

    def forward(self, tgt: Tensor, memory: Tensor, tgt_mask: Any = None, memory_mask: Any = None,
                tgt_key_padding_mask: Any = None, memory_key_padding_mask: Any = None,
                tgt_is_causal: bool | None = None, memory_is_causal: bool = False) -> Tensor:  # fmt: skip
        x = tgt
        for layer in self.layers:
            x = layer(x, memory, tgt_mask=tgt_mask, memory_mask=memory_mask, tgt_key_padding_mask=tgt_key_padding_mask,
                      memory_key_padding_mask=memory_key_padding_mask, tgt_is_causal=bool(tgt_is_causal),
                      memory_is_causal=memory_is_causal)  # fmt: skip
        return self.norm(x) if self.norm is not None else x


class Transformer(Module):
    """PyTorch's ``nn.Transformer``: an encoder of ``num_encoder_layers`` layers and a decoder of
    ``num_decoder_layers``, each stack ending in a layer norm (``encoder.norm``,
    ``decoder.norm``), every weight matrix initialised Xavier-uniform; children named as
    PyTorch's, so its state dict loads as it is. Sequence-first unless ``batch_first``.

    >>> model = Transformer(d_model=16, nhead=4, num_encoder_layers=1, num_decoder_layers=1, dim_feedforward=32)
    >>> model(Tensor.randn(5, 2, 16), Tensor.randn(3, 2, 16)).shape  # (T, N, E)
    (3, 2, 16)
    """

    def __init__(self, d_model: int = 512, nhead: int = 8, num_encoder_layers: int = 6,
                 num_decoder_layers: int = 6, dim_feedforward: int = 2048, dropout: float = 0.1,
                 activation: str | Callable[[Tensor], Tensor] = F.relu, custom_encoder: Module | None = None,
                 custom_decoder: Module | None = None, layer_norm_eps: float = 1e-5, batch_first: bool = False,
                 norm_first: bool = False, bias: bool = True, device: Any = None, dtype: Any = None) -> None:  # fmt: skip
        super().__init__()
        layer_kw = dict(dim_feedforward=dim_feedforward, dropout=dropout, activation=activation,
                        layer_norm_eps=layer_norm_eps, batch_first=batch_first, norm_first=norm_first, bias=bias,
                        dtype=dtype)  # fmt: skip
        if custom_encoder is not None:
            self.encoder = custom_encoder
        else:
            self.encoder = TransformerEncoder(TransformerEncoderLayer(d_model, nhead, **layer_kw), num_encoder_layers,
                                              LayerNorm(d_model, eps=layer_norm_eps, bias=bias))  # fmt: skip
        if custom_decoder is not None:
            self.decoder = custom_decoder
        else:
            self.decoder = TransformerDecoder(TransformerDecoderLayer(d_model, nhead, **layer_kw), num_decoder_layers,
                                              LayerNorm(d_model, eps=layer_norm_eps, bias=bias))  # fmt: skip
        _place(self, device, dtype)  # (before the draws: PyTorch draws in the dtype)
        for p in self.parameters():  # (PyTorch's _reset_parameters)
            if p.ndim > 1:
                init.xavier_uniform_(p)
        self.d_model, self.nhead, self.batch_first = d_model, nhead, batch_first

    def forward(self, src: Tensor, tgt: Tensor, src_mask: Any = None, tgt_mask: Any = None, memory_mask: Any = None,
                src_key_padding_mask: Any = None, tgt_key_padding_mask: Any = None,
                memory_key_padding_mask: Any = None, src_is_causal: bool | None = None,
                tgt_is_causal: bool | None = None, memory_is_causal: bool = False) -> Tensor:  # fmt: skip
        """``src`` ``(S, N, E)``, ``tgt`` ``(T, N, E)`` (batch first with ``batch_first``; or
        unbatched ``(S, E)``, ``(T, E)``); the masks as the layers take them. Returns the
        decoder's output, ``tgt``'s shape."""
        batched = src.ndim == 3
        b = 0 if self.batch_first else 1
        if batched and src.shape[b] != tgt.shape[b]:
            raise RuntimeError(
                f"Transformer: the batch number of src {tuple(src.shape)} and tgt {tuple(tgt.shape)} must be equal"
            )
        if src.shape[-1] != self.d_model or tgt.shape[-1] != self.d_model:
            raise RuntimeError(f"Transformer: the feature number of src {tuple(src.shape)} and tgt {tuple(tgt.shape)} must be "
                               f"equal to d_model ({self.d_model})")  # fmt: skip
        memory = self.encoder(src, mask=src_mask, src_key_padding_mask=src_key_padding_mask, is_causal=src_is_causal)
        return self.decoder(tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                            tgt_key_padding_mask=tgt_key_padding_mask,
                            memory_key_padding_mask=memory_key_padding_mask, tgt_is_causal=tgt_is_causal,
                            memory_is_causal=memory_is_causal)  # fmt: skip

    @staticmethod
    def generate_square_subsequent_mask(sz: int, device: Any = None, dtype: Any = None) -> Tensor:
        """The causal mask of PyTorch's tutorials: 0 on and below the diagonal, ``-inf`` above
        (float32 unless ``dtype``)."""
        return creation.full((sz, sz), float("-inf"), dtype=dtype, device=device).triu(1)
