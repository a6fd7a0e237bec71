"""Layers, attention and whole models, built from the engine's ops."""

from ..functional import scaled_dot_product_attention
from .attention import AdditiveAttention, DotAttention, GeneralAttention, MultiHeadAttention
from .checkpoint import load_safetensors, save_safetensors
from .gpt import GPT
from .layers import Dropout, Embedding, FeedForward, LayerNorm, Linear, PositionalEncoding
from .module import Module, ModuleList, Parameter, Sequential, StateDictError, functional_call
from .rnn import GRUCell, RNNCell
from .seq2seq import Seq2Seq
from .torch_bridge import from_torch, to_torch
from .transformer import (
    Transformer,
    TransformerDecoder,
    TransformerDecoderLayer,
    TransformerEncoder,
    TransformerEncoderLayer,
    padding_mask,
)
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
