"""PyTorch's ``torch.nn.utils``: gradient clipping, flat parameter vectors, padded sequences.

>>> total = nn.utils.clip_grad_norm_(model.parameters(), 1.0)  # doctest: +SKIP
>>> batch = nn.utils.rnn.pad_sequence([a, b, c], batch_first=True)  # doctest: +SKIP
"""

from . import rnn
from .clip_grad import clip_grad_norm, clip_grad_norm_, clip_grad_value_, clip_grads_with_norm_, get_total_norm
from .convert_parameters import parameters_to_vector, vector_to_parameters

__all__ = [
    "clip_grad_norm_",
    "clip_grad_norm",
    "clip_grad_value_",
    "clip_grads_with_norm_",
    "get_total_norm",
    "parameters_to_vector",
    "vector_to_parameters",
    "rnn",
]

# PyTorch's parametrizations and the older weight norm
from . import parametrizations, parametrize, stateless  # noqa: E402
from .spectral_norm import remove_spectral_norm, spectral_norm  # noqa: E402
from .weight_norm import remove_weight_norm, weight_norm  # noqa: E402

__all__ += ["parametrize", "parametrizations", "stateless", "weight_norm", "remove_weight_norm", "spectral_norm",
            "remove_spectral_norm"]  # fmt: skip
from .fusion import fuse_conv_bn_eval, fuse_conv_bn_weights, fuse_linear_bn_eval, fuse_linear_bn_weights  # noqa: E402

__all__ += ["fuse_conv_bn_eval", "fuse_conv_bn_weights", "fuse_linear_bn_eval", "fuse_linear_bn_weights"]
from . import init  # noqa: E402
from .init import skip_init  # noqa: E402

__all__ += ["init", "skip_init"]
