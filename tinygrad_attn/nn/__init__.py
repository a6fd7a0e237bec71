"""Layers, attention blocks and recurrent cells: the building blocks of models.

Every name here that ``torch.nn`` also has (``MultiheadAttention``,
``TransformerEncoderLayer``, ``LSTM``, ...) is PyTorch's class, with PyTorch's arguments
and conventions, so PyTorch code runs after ``from tinygrad_attn import nn``. This
project's own batch-first attention and blocks (masks True = may attend) live in
:mod:`tinygrad_attn.models` under names PyTorch does not use (``BatchFirstAttention``,
``EncoderBlock``, ``DecoderBlock``, ``EncoderStack``, ``DecoderStack``,
``EncoderDecoder``); ``nn.MultiHeadAttention`` raises an error that says which to use.

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
from .attention import AdditiveAttention, DotAttention, GeneralAttention, MultiheadAttention
from .layers import (
    Dropout,
    Embedding,
    FeedForward,
    Identity,
    LayerNorm,
    Linear,
    NonDynamicallyQuantizableLinear,
    PositionalEncoding,
)
from .loss import BCELoss, BCEWithLogitsLoss, CrossEntropyLoss, MSELoss, NLLLoss
from .module import Module, ModuleDict, ModuleList, Parameter, Sequential, StateDictError, functional_call
from .rnn import GRU, LSTM, RNN, GRUCell, LSTMCell, RNNCell
from .torch_transformer import (
    Transformer,
    TransformerDecoder,
    TransformerDecoderLayer,
    TransformerEncoder,
    TransformerEncoderLayer,
)

# -- PyTorch's convolution, pooling, normalisation, shape layers, more losses, init and utils
# isort: split
from ..functional import grad  # (PyTorch's torch.nn.grad is torch.nn.functional.grad)
from . import init, parallel, utils
from .conv import Conv1d, Conv2d
from .layers import Bilinear, Flatten, LazyLinear, Unflatten
from .loss import CosineEmbeddingLoss, HuberLoss, KLDivLoss, L1Loss, SmoothL1Loss
from .normalization import BatchNorm1d, BatchNorm2d
from .parallel import DataParallel
from .pooling import AdaptiveAvgPool2d, AvgPool2d, MaxPool1d, MaxPool2d

# -- PyTorch's transposed convolutions, upsampling and unpooling layers
# isort: split
from .conv import ConvTranspose1d, ConvTranspose2d
from .upsampling import MaxUnpool1d, MaxUnpool2d, Upsample, UpsamplingBilinear2d, UpsamplingNearest2d

# One module under two names: ``tinygrad_attn.nn.functional`` is ``tinygrad_attn.functional``.
sys.modules[__name__ + ".functional"] = functional
sys.modules[__name__ + ".grad"] = grad

__all__ = [
    "functional",
    "grad",
    "parallel",
    "DataParallel",
    "Module",
    "ModuleList",
    "Parameter",
    "Sequential",
    "StateDictError",
    "functional_call",
    "Linear",
    "NonDynamicallyQuantizableLinear",
    "Embedding",
    "LayerNorm",
    "Dropout",
    "FeedForward",
    "PositionalEncoding",
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
    "Transformer",
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
__all__ += [
    "CELU",
    "SELU",
    "ReLU6",
    "Hardswish",
    "Hardsigmoid",
    "Hardtanh",
    "LogSigmoid",
    "Mish",
    "Softmin",
    "Softsign",
    "SiLU",
    "ELU",
    "LeakyReLU",
    "Softplus",
]  # PyTorch's further activations
# PyTorch's transposed convolutions, upsampling and unpooling layers
__all__ += ["ConvTranspose1d", "ConvTranspose2d", "Upsample", "UpsamplingNearest2d", "UpsamplingBilinear2d", "MaxUnpool1d", "MaxUnpool2d"]  # fmt: skip
# PyTorch's Threshold (nn/activation.py)
from .activation import Threshold  # noqa: E402

__all__ += ["Threshold"]
# PyTorch's distance modules (nn/distance.py)
from .distance import CosineSimilarity, PairwiseDistance  # noqa: E402

__all__ += ["CosineSimilarity", "PairwiseDistance"]
from .activation import GLU  # noqa: E402
from .layers import RMSNorm  # noqa: E402
from .module import ParameterDict, ParameterList  # noqa: E402

__all__ += ["RMSNorm", "ParameterList", "ParameterDict", "GLU"]

# -- a name nn does not have, one letter from PyTorch's: a message that points to both, not a guess
_MOVED = {
    "MultiHeadAttention": (
        "tinygrad_attn.nn has no MultiHeadAttention. For PyTorch's convention (sequence-first unless "
        "batch_first=True; attn_mask/key_padding_mask True = may NOT attend) use nn.MultiheadAttention; "
        "for this library's batch-first attention (allow= mask, True = may attend) use "
        "tinygrad_attn.models.BatchFirstAttention (also named models.MultiHeadAttention)"
    ),
}


def __getattr__(name: str) -> object:
    if name in _MOVED:
        raise AttributeError(_MOVED[name])
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# PyTorch's 3-d convolution, the remaining pooling layers (nn/conv.py, nn/pooling.py, nn/upsampling.py)
from .conv import Conv3d, ConvTranspose3d  # noqa: E402
from .pooling import (  # noqa: E402
    AdaptiveAvgPool1d,
    AdaptiveAvgPool3d,
    AdaptiveMaxPool1d,
    AdaptiveMaxPool2d,
    AdaptiveMaxPool3d,
    AvgPool1d,
    AvgPool3d,
    LPPool1d,
    LPPool2d,
    LPPool3d,
    MaxPool3d,
)
from .upsampling import MaxUnpool3d  # noqa: E402

__all__ += ["Conv3d", "ConvTranspose3d", "MaxPool3d", "AvgPool1d", "AvgPool3d", "AdaptiveAvgPool1d", "AdaptiveAvgPool3d", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d", "AdaptiveMaxPool3d", "LPPool1d", "LPPool2d", "LPPool3d", "MaxUnpool3d"]  # fmt: skip

# PyTorch's remaining normalisation layers (nn/normalization.py)
from .normalization import (  # noqa: E402
    BatchNorm3d,
    GroupNorm,
    InstanceNorm1d,
    InstanceNorm2d,
    InstanceNorm3d,
    LocalResponseNorm,
    SyncBatchNorm,
)

__all__ += ["BatchNorm3d", "SyncBatchNorm", "GroupNorm", "InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d", "LocalResponseNorm"]  # fmt: skip

# PyTorch's remaining activation layers (nn/activation.py)
from .activation import Hardshrink, PReLU, RReLU, Softmax2d, Softshrink, Tanhshrink  # noqa: E402

__all__ += ["Hardshrink", "Softshrink", "Tanhshrink", "Softmax2d", "PReLU", "RReLU"]

# PyTorch's padding layers (nn/padding.py)
from .padding import (  # noqa: E402
    CircularPad1d,
    CircularPad2d,
    CircularPad3d,
    ConstantPad1d,
    ConstantPad2d,
    ConstantPad3d,
    ReflectionPad1d,
    ReflectionPad2d,
    ReflectionPad3d,
    ReplicationPad1d,
    ReplicationPad2d,
    ReplicationPad3d,
    ZeroPad1d,
    ZeroPad2d,
    ZeroPad3d,
)

__all__ += ["ZeroPad1d", "ZeroPad2d", "ZeroPad3d", "ConstantPad1d", "ConstantPad2d", "ConstantPad3d", "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d", "ReplicationPad1d", "ReplicationPad2d", "ReplicationPad3d", "CircularPad1d", "CircularPad2d", "CircularPad3d"]  # fmt: skip

# PyTorch's rearranging layers (nn/rearrange.py)
from .rearrange import ChannelShuffle, Fold, PixelShuffle, PixelUnshuffle, Unfold  # noqa: E402

__all__ += ["PixelShuffle", "PixelUnshuffle", "ChannelShuffle", "Fold", "Unfold"]

# PyTorch's margin, ranking and likelihood losses (nn/loss.py)
from .loss import (  # noqa: E402
    CTCLoss,
    GaussianNLLLoss,
    HingeEmbeddingLoss,
    MarginRankingLoss,
    MultiLabelMarginLoss,
    MultiLabelSoftMarginLoss,
    MultiMarginLoss,
    PoissonNLLLoss,
    SoftMarginLoss,
    TripletMarginLoss,
    TripletMarginWithDistanceLoss,
)

__all__ += ["MarginRankingLoss", "HingeEmbeddingLoss", "SoftMarginLoss", "MultiLabelMarginLoss", "MultiLabelSoftMarginLoss", "MultiMarginLoss", "TripletMarginLoss", "TripletMarginWithDistanceLoss", "PoissonNLLLoss", "GaussianNLLLoss", "CTCLoss"]  # fmt: skip

# PyTorch's channel and alpha dropouts (nn/layers.py)
from .layers import AlphaDropout, Dropout1d, Dropout2d, Dropout3d, FeatureAlphaDropout  # noqa: E402

__all__ += ["Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout", "FeatureAlphaDropout"]

# PyTorch's EmbeddingBag (nn/embedding_bag.py)
from .embedding_bag import EmbeddingBag  # noqa: E402

__all__ += ["EmbeddingBag"]

# PyTorch's lazy convolutions and normalisations (nn/lazy.py)
from .lazy import (  # noqa: E402
    LazyBatchNorm1d,
    LazyBatchNorm2d,
    LazyBatchNorm3d,
    LazyConv1d,
    LazyConv2d,
    LazyConv3d,
    LazyConvTranspose1d,
    LazyConvTranspose2d,
    LazyConvTranspose3d,
    LazyInstanceNorm1d,
    LazyInstanceNorm2d,
    LazyInstanceNorm3d,
)

__all__ += ["LazyConv1d", "LazyConv2d", "LazyConv3d", "LazyConvTranspose1d", "LazyConvTranspose2d", "LazyConvTranspose3d", "LazyBatchNorm1d", "LazyBatchNorm2d", "LazyBatchNorm3d", "LazyInstanceNorm1d", "LazyInstanceNorm2d", "LazyInstanceNorm3d"]  # fmt: skip
from .loss import NLLLoss2d  # noqa: E402

__all__ += ["NLLLoss2d"]

# PyTorch's remaining base classes, placeholders and layers (nn/module.py, nn/parameter.py, nn/rnn.py, ...)
from .loss import AdaptiveLogSoftmaxWithLoss, LinearCrossEntropyLoss, LinearCrossEntropyOptions  # noqa: E402
from .module import Buffer, Container  # noqa: E402
from .normalization import CrossMapLRN2d  # noqa: E402
from .parameter import UninitializedBuffer, UninitializedParameter  # noqa: E402
from .pooling import FractionalMaxPool2d, FractionalMaxPool3d  # noqa: E402
from .rnn import RNNBase, RNNCellBase  # noqa: E402

__all__ += ["Buffer", "Container", "UninitializedParameter", "UninitializedBuffer", "RNNBase", "RNNCellBase"]
__all__ += ["FractionalMaxPool2d", "FractionalMaxPool3d", "CrossMapLRN2d", "AdaptiveLogSoftmaxWithLoss"]
__all__ += ["LinearCrossEntropyLoss", "LinearCrossEntropyOptions"]

# -- PyTorch's paths to the same classes, last (they hold every class above): nn.modules.<file>
# (nn.modules.linear.Linear) and nn.parameter
from . import modules, parameter  # noqa: E402, F401
