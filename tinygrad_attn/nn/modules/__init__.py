"""``torch.nn.modules``: PyTorch's package of layer classes, one file per family
(``torch.nn.modules.linear.Linear``, ``torch.nn.modules.rnn.LSTM``). Here each of those paths is a
module holding the classes of :mod:`tinygrad_attn.nn` that PyTorch keeps in that file (the same
objects), made from one table of PyTorch 2.13's files, so imports written against those paths work
and a class added to ``nn`` appears at its PyTorch path without another list to keep.

>>> from tinygrad_attn.nn.modules.linear import Linear  # doctest: +SKIP
"""

from __future__ import annotations

import sys
import types

#: PyTorch 2.13's ``torch/nn/modules/<file>.py`` and the public classes each defines (its inventory, not ours)
PYTORCH_FILES = {
    "activation": (
        "CELU ELU GELU GLU Hardshrink Hardsigmoid Hardswish Hardtanh LeakyReLU LogSigmoid LogSoftmax Mish "
        "MultiheadAttention PReLU RReLU ReLU ReLU6 SELU SiLU Sigmoid Softmax Softmax2d Softmin Softplus "
        "Softshrink Softsign Tanh Tanhshrink Threshold"
    ),
    "adaptive": "AdaptiveLogSoftmaxWithLoss",
    "batchnorm": "BatchNorm1d BatchNorm2d BatchNorm3d LazyBatchNorm1d LazyBatchNorm2d LazyBatchNorm3d SyncBatchNorm",
    "channelshuffle": "ChannelShuffle",
    "container": "Container ModuleDict ModuleList ParameterDict ParameterList Sequential",
    "conv": (
        "Conv1d Conv2d Conv3d ConvTranspose1d ConvTranspose2d ConvTranspose3d LazyConv1d LazyConv2d "
        "LazyConv3d LazyConvTranspose1d LazyConvTranspose2d LazyConvTranspose3d"
    ),
    "distance": "CosineSimilarity PairwiseDistance",
    "dropout": "AlphaDropout Dropout Dropout1d Dropout2d Dropout3d FeatureAlphaDropout",
    "flatten": "Flatten Unflatten",
    "fold": "Fold Unfold",
    "instancenorm": (
        "InstanceNorm1d InstanceNorm2d InstanceNorm3d LazyInstanceNorm1d LazyInstanceNorm2d LazyInstanceNorm3d"
    ),
    "lazy": "LazyModuleMixin",
    "linear": "Bilinear Identity LazyLinear Linear NonDynamicallyQuantizableLinear",
    "linear_cross_entropy_options": "LinearCrossEntropyOptions",
    "loss": (
        "BCELoss BCEWithLogitsLoss CTCLoss CosineEmbeddingLoss CrossEntropyLoss GaussianNLLLoss "
        "HingeEmbeddingLoss HuberLoss KLDivLoss L1Loss LinearCrossEntropyLoss MSELoss MarginRankingLoss "
        "MultiLabelMarginLoss MultiLabelSoftMarginLoss MultiMarginLoss NLLLoss NLLLoss2d PoissonNLLLoss "
        "SmoothL1Loss SoftMarginLoss TripletMarginLoss TripletMarginWithDistanceLoss"
    ),
    "module": "Module",
    "normalization": "CrossMapLRN2d GroupNorm LayerNorm LocalResponseNorm RMSNorm",
    "padding": (
        "CircularPad1d CircularPad2d CircularPad3d ConstantPad1d ConstantPad2d ConstantPad3d ReflectionPad1d "
        "ReflectionPad2d ReflectionPad3d ReplicationPad1d ReplicationPad2d ReplicationPad3d ZeroPad1d "
        "ZeroPad2d ZeroPad3d"
    ),
    "pixelshuffle": "PixelShuffle PixelUnshuffle",
    "pooling": (
        "AdaptiveAvgPool1d AdaptiveAvgPool2d AdaptiveAvgPool3d AdaptiveMaxPool1d AdaptiveMaxPool2d "
        "AdaptiveMaxPool3d AvgPool1d AvgPool2d AvgPool3d FractionalMaxPool2d FractionalMaxPool3d LPPool1d "
        "LPPool2d LPPool3d MaxPool1d MaxPool2d MaxPool3d MaxUnpool1d MaxUnpool2d MaxUnpool3d"
    ),
    "rnn": "GRU GRUCell LSTM LSTMCell RNN RNNBase RNNCell RNNCellBase",
    "sparse": "Embedding EmbeddingBag",
    "transformer": "Transformer TransformerDecoder TransformerDecoderLayer TransformerEncoder TransformerEncoderLayer",
    "upsampling": "Upsample UpsamplingBilinear2d UpsamplingNearest2d",
}

__all__: list[str] = []
_nn = vars(sys.modules[__name__.rpartition(".")[0]])  # tinygrad_attn.nn, which imports this package last

for _file, _names in PYTORCH_FILES.items():
    _module = types.ModuleType(f"{__name__}.{_file}", f"``torch.nn.modules.{_file}``: PyTorch's path to these classes.")
    _module.__all__ = [n for n in _names.split() if n in _nn]
    for _name in _module.__all__:
        setattr(_module, _name, _nn[_name])
        globals()[_name] = _nn[_name]
    sys.modules[_module.__name__] = _module
    globals()[_file] = _module
    __all__ += _module.__all__

# (``torch.nn.modules.module`` holds the hooks of every module too)
from .. import module as _module_py  # noqa: E402

for _name in [n for n in vars(_module_py) if n.startswith("register_module_")]:
    setattr(globals()["module"], _name, getattr(_module_py, _name))
