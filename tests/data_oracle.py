"""PyTorch as the oracle of ``tinygrad_attn.utils.data``: a batch of either library as plain
values (types, dtypes, shapes and numbers), so two loaders' outputs compare with ``==``."""

from __future__ import annotations

import collections.abc
from typing import Any

import numpy as np

import tinygrad_attn as tga


def plain(x: Any) -> Any:
    """``x`` with every tensor (ours or PyTorch's) as ``("tensor", dtype, shape, values)`` and each
    container tagged by its kind (a namedtuple by its class name), so that structure, dtypes and
    values all take part in a comparison."""
    if isinstance(x, tga.Tensor):
        return ("tensor", str(x.dtype), tuple(x.shape), x.detach().numpy().tolist())
    if type(x).__module__ == "torch" and type(x).__name__ == "Tensor":
        return ("tensor", str(x.dtype), tuple(x.shape), x.detach().numpy().tolist())
    if isinstance(x, np.ndarray):
        return ("ndarray", str(x.dtype), x.tolist())
    if isinstance(x, collections.abc.Mapping):
        return ("map", type(x).__name__, {k: plain(v) for k, v in x.items()})
    if isinstance(x, tuple) and hasattr(x, "_fields"):
        return ("namedtuple", type(x).__name__, tuple(plain(v) for v in x))
    if isinstance(x, (list, tuple)):
        return (type(x).__name__, [plain(v) for v in x])
    return (type(x).__name__, x)


def batches(loader: Any) -> list[Any]:
    """Every batch of one pass over ``loader``, as :func:`plain` values."""
    return [plain(b) for b in loader]
