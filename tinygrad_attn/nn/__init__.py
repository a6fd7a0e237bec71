"""Layers, attention blocks and recurrent cells: the building blocks of models.

The names of PyTorch's ``torch.nn`` (``MultiheadAttention``, ``TransformerEncoderLayer``,
``LSTM``, ...) take PyTorch's arguments and conventions, so PyTorch code runs after
``from tinygrad_attn import nn``; ``tinygrad_attn.models`` keeps this project's own
batch-first layers (``MultiHeadAttention``, ``TransformerEncoderLayer(d_model, n_heads,
d_ff)``) under their names.

``tinygrad_attn.nn.functional`` is the same module as :mod:`tinygrad_attn.functional`,
so ``import tinygrad_attn.nn.functional as F`` works as it does in PyTorch.
"""

import sys

from .. import functional
from .activation import (  # PyTorch's further activations
    CELU,
    ELU,
    GELU,
    SELU,
    Hardsigmoid,
    Hardswish,
    Hardtanh,
    LeakyReLU,
    LogSigmoid,
    LogSoftmax,
    Mish,
    ReLU,
    ReLU6,
    Sigmoid,
    SiLU,
    Softmax,
    Softmin,
    Softplus,
    Softsign,
    Tanh,
)
from .attention import AdditiveAttention, DotAttention, GeneralAttention, MultiHeadAttention, MultiheadAttention
from .layers import Dropout, Embedding, FeedForward, Identity, LayerNorm, Linear, PositionalEncoding
from .loss import BCELoss, BCEWithLogitsLoss, CrossEntropyLoss, MSELoss, NLLLoss
from .module import Module, ModuleDict, ModuleList, Parameter, Sequential, StateDictError, functional_call
from .rnn import GRU, LSTM, RNN, GRUCell, LSTMCell, RNNCell
from .torch_transformer import (
    TransformerDecoder,
    TransformerDecoderLayer,
    TransformerEncoder,
    TransformerEncoderLayer,
)

# -- PyTorch's convolution, pooling, normalisation, shape layers, more losses, init and utils
# isort: split
from . import init, utils
from .conv import Conv1d, Conv2d
from .layers import Bilinear, Flatten, LazyLinear, Unflatten
from .loss import CosineEmbeddingLoss, HuberLoss, KLDivLoss, L1Loss, SmoothL1Loss
from .normalization import BatchNorm1d, BatchNorm2d
from .pooling import AdaptiveAvgPool2d, AvgPool2d, MaxPool1d, MaxPool2d

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
    # PyTorch's names, arguments and conventions
    "Identity",
    "ModuleDict",
    "ReLU",
    "GELU",
    "Tanh",
    "Sigmoid",
    "Softmax",
    "LogSoftmax",
    "MultiheadAttention",
    "TransformerEncoderLayer",
    "TransformerEncoder",
    "TransformerDecoderLayer",
    "TransformerDecoder",
    "RNN",
    "GRU",
    "LSTM",
    "LSTMCell",
    "CrossEntropyLoss",
    "MSELoss",
    "NLLLoss",
    "BCEWithLogitsLoss",
    "BCELoss",
]

# PyTorch's convolution, pooling, normalisation, shape layers, more losses, init and utils
__all__ += [
    "init",
    "utils",
    "Conv1d",
    "Conv2d",
    "MaxPool1d",
    "MaxPool2d",
    "AvgPool2d",
    "AdaptiveAvgPool2d",
    "BatchNorm1d",
    "BatchNorm2d",
    "Flatten",
    "Unflatten",
    "LazyLinear",
    "Bilinear",
    "L1Loss",
    "SmoothL1Loss",
    "HuberLoss",
    "KLDivLoss",
    "CosineEmbeddingLoss",
]
__all__ += ["CELU", "SELU", "ReLU6", "Hardswish", "Hardsigmoid", "Hardtanh", "LogSigmoid", "Mish", "Softmin", "Softsign", "SiLU", "ELU", "LeakyReLU", "Softplus"]  # PyTorch's further activations
# PyTorch's Threshold (nn/activation.py)
from .activation import Threshold  # noqa: E402

__all__ += ["Threshold"]
