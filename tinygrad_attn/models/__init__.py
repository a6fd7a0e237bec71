"""Whole models built from :mod:`tinygrad_attn.nn`: GPT, ViT, an attention seq2seq.

The layers and attention blocks live in :mod:`tinygrad_attn.nn`; their names are
exported here too, so ``tga.models.Linear`` and ``tga.models.MultiHeadAttention`` keep
working.
"""

from ..functional import scaled_dot_product_attention
from ..nn.attention import AdditiveAttention, DotAttention, GeneralAttention, MultiHeadAttention
from ..nn.layers import Dropout, Embedding, FeedForward, LayerNorm, Linear, PositionalEncoding
from ..nn.module import Module, ModuleList, Parameter, Sequential, StateDictError, functional_call
from ..nn.rnn import GRUCell, RNNCell
from ..nn.torch_bridge import from_torch, to_torch
from ..nn.transformer import (
    Transformer,
    TransformerDecoder,
    TransformerDecoderLayer,
    TransformerEncoder,
    TransformerEncoderLayer,
    padding_mask,
)
from ..serialization import load_safetensors, save_safetensors
from .gpt import GPT
from .seq2seq import Seq2Seq
from .vit import ViT

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
    "MultiHeadAttention",
    "DotAttention",
    "GeneralAttention",
    "AdditiveAttention",
    "TransformerEncoderLayer",
    "TransformerDecoderLayer",
    "TransformerEncoder",
    "TransformerDecoder",
    "Transformer",
    "padding_mask",
    "GPT",
    "ViT",
    "RNNCell",
    "GRUCell",
    "Seq2Seq",
]
