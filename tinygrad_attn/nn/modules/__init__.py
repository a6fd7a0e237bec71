"""``torch.nn.modules``: PyTorch's package of layer classes, one file per family
(``tga.nn.modules.linear.Linear``, ``tga.nn.modules.rnn.LSTM``), each re-exporting the classes of
:mod:`tinygrad_attn.nn` under PyTorch's paths, so imports written against those paths work."""

from . import (
    activation,
    batchnorm,
    container,
    conv,
    distance,
    dropout,
    flatten,
    linear,
    loss,
    module,
    normalization,
    pooling,
    rnn,
    sparse,
    transformer,
    upsampling,
)
from .activation import *  # noqa: F403
from .batchnorm import *  # noqa: F403
from .container import *  # noqa: F403
from .conv import *  # noqa: F403
from .distance import *  # noqa: F403
from .dropout import *  # noqa: F403
from .flatten import *  # noqa: F403
from .linear import *  # noqa: F403
from .loss import *  # noqa: F403
from .module import *  # noqa: F403
from .normalization import *  # noqa: F403
from .pooling import *  # noqa: F403
from .rnn import *  # noqa: F403
from .sparse import *  # noqa: F403
from .transformer import *  # noqa: F403
from .upsampling import *  # noqa: F403

__all__ = [
    n
    for m in (
        activation,
        batchnorm,
        container,
        conv,
        distance,
        dropout,
        flatten,
        linear,
        loss,
        module,
        normalization,
        pooling,
        rnn,
        sparse,
        transformer,
        upsampling,
    )
    for n in m.__all__
]
