"""Layers, attention blocks and recurrent cells: the building blocks of models.

``tinygrad_attn.nn.functional`` is the same module as :mod:`tinygrad_attn.functional`,
so ``import tinygrad_attn.nn.functional as F`` works as it does in PyTorch.
"""

import sys

from .. import functional
from .attention import AdditiveAttention, DotAttention, GeneralAttention, MultiHeadAttention
from .layers import Dropout, Embedding, FeedForward, LayerNorm, Linear, PositionalEncoding
from .loss import BCELoss, BCEWithLogitsLoss, CrossEntropyLoss, MSELoss, NLLLoss
from .module import Module, ModuleList, Parameter, Sequential, StateDictError, functional_call
from .rnn import GRUCell, RNNCell

# One module under two names: ``tinygrad_attn.nn.functional`` is ``tinygrad_attn.functional``.
sys.modules[__name__ + ".functional"] = functional

__all__ = [
    "functional",
    "Module",
    "ModuleList",
    "Parameter",
    "Sequential",
    "StateDictError",
    "functional_call",
    "Linear",
    "Embedding",
    "LayerNorm",
    "Dropout",
    "FeedForward",
    "PositionalEncoding",
    "MultiHeadAttention",
    "DotAttention",
    "GeneralAttention",
    "AdditiveAttention",
    "RNNCell",
    "GRUCell",
    "CrossEntropyLoss",
    "MSELoss",
    "NLLLoss",
    "BCEWithLogitsLoss",
    "BCELoss",
]
