"""One seeded random generator for the whole library.

Every draw (``Tensor.randn``, weight initialisation, dropout masks) is made on the host
from this one NumPy generator and then moved to the tensor's device, so
``manual_seed(s)`` gives the same numbers on the CPU and on every GPU.
"""

from __future__ import annotations

import numpy as np

from . import autograd as _autograd

_generator = np.random.default_rng(0)


def manual_seed(seed: int) -> None:
    """Make every later random draw repeatable, on every device.

    >>> manual_seed(0); a = Tensor.randn(2); manual_seed(0); b = Tensor.randn(2)  # doctest: +SKIP
    """
    global _generator
    _generator = np.random.default_rng(seed)


def host_generator() -> np.random.Generator:
    """The generator all draws come from (host side)."""
    if _autograd._State.tracer is not None:  # a draw inside a symbolic trace would be frozen
        _autograd._State.tracer.random_draw()
    return _generator
