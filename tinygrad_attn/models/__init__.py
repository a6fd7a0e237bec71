"""Whole models and the library's own batch-first blocks: GPT, ViT, an attention seq2seq,
:class:`BatchFirstAttention`, :class:`EncoderBlock`, :class:`DecoderBlock`,
:class:`EncoderStack`, :class:`DecoderStack` and :class:`EncoderDecoder`.

The layers that PyTorch also has live in :mod:`tinygrad_attn.nn` and are exported here
too (the same objects), so ``tga.models.Linear`` keeps working. No name here means
something else than in ``nn``: the batch-first blocks (masks True = may attend) have
names PyTorch does not use. Their contract names (API.md, "Models":
``MultiHeadAttention``, ``TransformerEncoderLayer``, ...) are aliases below, outside
``__all__``.
"""

from ..functional import scaled_dot_product_attention
from ..nn.attention import AdditiveAttention, DotAttention, GeneralAttention
from ..nn.layers import Dropout, Embedding, FeedForward, LayerNorm, Linear, PositionalEncoding
from ..nn.module import Module, ModuleList, Parameter, Sequential, StateDictError, functional_call
from ..nn.rnn import GRUCell, RNNCell
from ..nn.torch_bridge import from_torch, to_torch
from ..serialization.safetensors_file import load_safetensors, save_safetensors
from .blocks import (
    BatchFirstAttention,
    DecoderBlock,
    DecoderStack,
    EncoderBlock,
    EncoderDecoder,
    EncoderStack,
    padding_mask,
)
from .gpt import GPT
from .seq2seq import Seq2Seq
from .vit import ViT

# The contract names (API.md, "Models"): the same classes under those names.
MultiHeadAttention = BatchFirstAttention  # the contract's name; nn.MultiheadAttention is PyTorch's
TransformerEncoderLayer = EncoderBlock  # the contract's name; nn.TransformerEncoderLayer is PyTorch's
TransformerDecoderLayer = DecoderBlock  # the contract's name; nn.TransformerDecoderLayer is PyTorch's
TransformerEncoder = EncoderStack  # the contract's name; nn.TransformerEncoder is PyTorch's
TransformerDecoder = DecoderStack  # the contract's name; nn.TransformerDecoder is PyTorch's
Transformer = EncoderDecoder  # the contract's name; PyTorch's nn.Transformer is another class

__all__ = [
    "Module",
    "ModuleList",
    "Parameter",
    "Sequential",
    "Linear",
    "Embedding",
    "LayerNorm",
    "Dropout",
    "FeedForward",
    "PositionalEncoding",
    "StateDictError",
    "functional_call",
    "save_safetensors",
    "load_safetensors",
    "from_torch",
    "to_torch",
    "scaled_dot_product_attention",
    "BatchFirstAttention",
    "DotAttention",
    "GeneralAttention",
    "AdditiveAttention",
    "EncoderBlock",
    "DecoderBlock",
    "EncoderStack",
    "DecoderStack",
    "EncoderDecoder",
    "padding_mask",
    "GPT",
    "ViT",
    "RNNCell",
    "GRUCell",
    "Seq2Seq",
]
