"""``tga.cuda``: PyTorch's ``torch.cuda`` questions, answered for this library's CUDA devices.

>>> device = "cuda" if tga.cuda.is_available() else "cpu"  # doctest: +SKIP
"""

from __future__ import annotations

import sys

from ..random import manual_seed as _manual_seed
from .amp import cuda_amp as amp
from .backend import devices as _devices
from .backend import is_available as _is_available


def is_available() -> bool:
    """Whether a CUDA device (CuPy and a GPU) can be used here; never raises."""
    return _is_available("cuda")


def device_count() -> int:
    """How many CUDA devices can be used here."""
    return sum(1 for d in _devices() if d.startswith("cuda"))


def manual_seed(seed: int) -> None:
    """The one generator serves every device (draws are made on the host and moved)."""
    _manual_seed(seed)


manual_seed_all = manual_seed


# ``from torch.cuda.amp import autocast, GradScaler``: this module is no package, so the path is registered
sys.modules[__name__ + ".amp"] = amp
