"""PyTorch's ``torch.nn.utils``: gradient clipping, flat parameter vectors, padded sequences.

>>> total = nn.utils.clip_grad_norm_(model.parameters(), 1.0)  # doctest: +SKIP
>>> batch = nn.utils.rnn.pad_sequence([a, b, c], batch_first=True)  # doctest: +SKIP
"""

from . import rnn
from .clip_grad import clip_grad_norm_, clip_grad_value_
from .convert_parameters import parameters_to_vector, vector_to_parameters

__all__ = ["clip_grad_norm_", "clip_grad_value_", "parameters_to_vector", "vector_to_parameters", "rnn"]
