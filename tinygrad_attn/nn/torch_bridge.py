"""Convert state dicts between PyTorch's attention layers and ours, as NumPy arrays.

PyTorch need not be installed: pass ``{k: v.numpy() for k, v in torch_module.state_dict().items()}``.
This is for this project's batch-first blocks (``models.BatchFirstAttention``, ``models.EncoderBlock``, ``DecoderBlock``);
the PyTorch-convention ``nn.MultiheadAttention`` and ``nn.Transformer*`` layers use PyTorch's
names, so a PyTorch state dict loads into them with ``load_state_dict`` as it is.

========================== =========================================================
PyTorch                    ours
========================== =========================================================
``in_proj_weight`` (3d, d) ``q_proj.weight``, ``k_proj.weight``, ``v_proj.weight``
``in_proj_bias`` (3d,)     ``q_proj.bias``, ``k_proj.bias``, ``v_proj.bias``
``q_proj_weight`` (d, kd.) ``q_proj.weight`` (likewise ``k_``, ``v_``; kdim/vdim != d)
``out_proj.*``             ``out_proj.*``
``multihead_attn.*``       ``cross_attn.*`` (decoder layer)
``linear1/2.*``,           the same names
``norm1/2/3.*``
========================== =========================================================

>>> ours = from_torch(torch_sd, "encoder")  # doctest: +SKIP
>>> layer.load_state_dict(ours)  # doctest: +SKIP
>>> to_torch(layer.state_dict(), "encoder").keys() == torch_sd.keys()  # doctest: +SKIP
True
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

__all__ = [
    "from_torch",
    "to_torch",
    "from_torch_mha",
    "to_torch_mha",
    "from_torch_encoder_layer",
    "to_torch_encoder_layer",
    "from_torch_decoder_layer",
    "to_torch_decoder_layer",
]

_QKV = ("q", "k", "v")
_PLAIN = {  # the layers' entries other than attention, under the same names on both sides
    "encoder": ("linear1", "linear2", "norm1", "norm2"),
    "decoder": ("linear1", "linear2", "norm1", "norm2", "norm3"),
}
_ATTENTION = {  # (PyTorch prefix, our prefix)
    "mha": (("", ""),),
    "encoder": (("self_attn.", "self_attn."),),
    "decoder": (("self_attn.", "self_attn."), ("multihead_attn.", "cross_attn.")),
}


def _arr(v: Any) -> np.ndarray:
    """A NumPy copy (a Tensor or a torch tensor's ``.numpy()`` both work)."""
    if hasattr(v, "detach") and not isinstance(v, np.ndarray):
        v = v.detach()  # (a parameter: ``numpy()`` refuses a tensor that requires grad)
    return np.array(v.detach().numpy() if hasattr(v, "detach") and not isinstance(v, np.ndarray) else v, copy=True)


def _take(sd: dict[str, np.ndarray], key: str, who: str) -> np.ndarray:
    if key not in sd:
        raise KeyError(f"{who}: the state dict has no '{key}' (keys: {sorted(sd)})")
    return sd.pop(key)


def _mha_from_torch(sd: dict[str, np.ndarray], src: str, dst: str, who: str) -> dict[str, np.ndarray]:
    out: dict[str, np.ndarray] = {}
    for extra in ("bias_k", "bias_v"):
        if src + extra in sd:
            raise ValueError(f"{who}: '{src}{extra}' (add_bias_kv=True) has no counterpart in BatchFirstAttention")
    if src + "in_proj_weight" in sd:
        w = _take(sd, src + "in_proj_weight", who)  # (3d, d): rows q, then k, then v
        if w.ndim != 2 or w.shape[0] % 3:
            raise ValueError(f"{who}: '{src}in_proj_weight' has shape {tuple(w.shape)}, expected (3*d, d)")
        for name, part in zip(_QKV, np.split(w, 3, axis=0)):
            out[f"{dst}{name}_proj.weight"] = np.ascontiguousarray(part)
    else:  # kdim or vdim differ from d: three separate weights
        for name in _QKV:
            out[f"{dst}{name}_proj.weight"] = _take(sd, f"{src}{name}_proj_weight", who)
    if src + "in_proj_bias" in sd:
        b = _take(sd, src + "in_proj_bias", who)
        d = out[f"{dst}q_proj.weight"].shape[0]
        if b.shape != (3 * d,):
            raise ValueError(f"{who}: '{src}in_proj_bias' has shape {tuple(b.shape)}, expected ({3 * d},)")
        for name, part in zip(_QKV, np.split(b, 3)):
            out[f"{dst}{name}_proj.bias"] = np.ascontiguousarray(part)
    for p in ("weight", "bias"):
        if f"{src}out_proj.{p}" in sd:
            out[f"{dst}out_proj.{p}"] = sd.pop(f"{src}out_proj.{p}")
    return out


def _mha_to_torch(sd: dict[str, np.ndarray], src: str, dst: str, who: str) -> dict[str, np.ndarray]:
    out: dict[str, np.ndarray] = {}
    ws = [_take(sd, f"{src}{n}_proj.weight", who) for n in _QKV]
    if all(w.shape == ws[0].shape for w in ws) and ws[0].shape[0] == ws[0].shape[1]:
        out[dst + "in_proj_weight"] = np.concatenate(ws, axis=0)  # (3d, d)
    else:  # what PyTorch keeps when kdim/vdim differ from embed_dim
        for n, w in zip(_QKV, ws):
            out[f"{dst}{n}_proj_weight"] = w
    bs = [sd.pop(f"{src}{n}_proj.bias", None) for n in _QKV]
    if any(b is not None for b in bs):
        if any(b is None for b in bs):
            raise ValueError(f"{who}: PyTorch keeps the q, k, v biases together; '{src}' has only some of them")
        out[dst + "in_proj_bias"] = np.concatenate(bs)  # (3d,)
    for p in ("weight", "bias"):
        if f"{src}out_proj.{p}" in sd:
            out[f"{dst}out_proj.{p}"] = sd.pop(f"{src}out_proj.{p}")
    return out


def _convert(sd: Mapping[str, Any], kind: str, to_ours: bool) -> dict[str, np.ndarray]:
    if kind not in _ATTENTION:
        raise ValueError(f"torch_bridge: kind must be one of {sorted(_ATTENTION)}, got {kind!r}")
    who = f"{'from' if to_ours else 'to'}_torch({kind!r})"
    rest = {k: _arr(v) for k, v in sd.items()}
    out: dict[str, np.ndarray] = {}
    for torch_prefix, our_prefix in _ATTENTION[kind]:
        if to_ours:
            out.update(_mha_from_torch(rest, torch_prefix, our_prefix, who))
        else:
            out.update(_mha_to_torch(rest, our_prefix, torch_prefix, who))
    for mod in _PLAIN.get(kind, ()):
        for p in ("weight", "bias"):
            key = f"{mod}.{p}"
            if key in rest:
                out[key] = rest.pop(key)
    if rest:
        raise KeyError(f"{who}: unexpected keys {sorted(rest)}")
    return out


def from_torch(sd: Mapping[str, Any], kind: str) -> dict[str, np.ndarray]:
    """A PyTorch state dict of ``kind`` (``"mha"``, ``"encoder"`` or ``"decoder"``) in our names.

    ``"mha"`` is ``nn.MultiheadAttention``, ``"encoder"`` ``nn.TransformerEncoderLayer``,
    ``"decoder"`` ``nn.TransformerDecoderLayer``. Arrays are copied, bit for bit.
    """
    return _convert(sd, kind, to_ours=True)


def to_torch(sd: Mapping[str, Any], kind: str) -> dict[str, np.ndarray]:
    """Our state dict of ``kind`` in PyTorch's names and layout (the inverse of :func:`from_torch`)."""
    return _convert(sd, kind, to_ours=False)


def from_torch_mha(sd: Mapping[str, Any]) -> dict[str, np.ndarray]:
    """``nn.MultiheadAttention`` state dict -> our ``BatchFirstAttention``."""
    return from_torch(sd, "mha")


def to_torch_mha(sd: Mapping[str, Any]) -> dict[str, np.ndarray]:
    """Our ``BatchFirstAttention`` state dict -> ``nn.MultiheadAttention``."""
    return to_torch(sd, "mha")


def from_torch_encoder_layer(sd: Mapping[str, Any]) -> dict[str, np.ndarray]:
    """``nn.TransformerEncoderLayer`` state dict -> our ``EncoderBlock``."""
    return from_torch(sd, "encoder")


def to_torch_encoder_layer(sd: Mapping[str, Any]) -> dict[str, np.ndarray]:
    """Our ``EncoderBlock`` state dict -> ``nn.TransformerEncoderLayer``."""
    return to_torch(sd, "encoder")


def from_torch_decoder_layer(sd: Mapping[str, Any]) -> dict[str, np.ndarray]:
    """``nn.TransformerDecoderLayer`` state dict -> our ``DecoderBlock``."""
    return from_torch(sd, "decoder")


def to_torch_decoder_layer(sd: Mapping[str, Any]) -> dict[str, np.ndarray]:
    """Our ``DecoderBlock`` state dict -> ``nn.TransformerDecoderLayer``."""
    return to_torch(sd, "decoder")
