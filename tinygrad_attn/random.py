"""One seeded random generator for the whole library.

Every draw (``Tensor.randn``, weight initialisation, dropout masks) is made on the host
from this one NumPy generator and then moved to the tensor's device, so
``manual_seed(s)`` gives the same numbers on the CPU and on every GPU.

Draws a traced program must make again at each replay (dropout masks, ``rand``,
``randn``) are an op, :class:`Draw`: its forward draws from the generator when it runs,
so a replay draws fresh numbers, the same stream as eager.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .engine.function import Function
from .engine.switches import _State

_generator = np.random.default_rng(0)


def manual_seed(seed: int) -> None:
    """Make every later random draw repeatable, on every device.

    >>> manual_seed(0); a = Tensor.randn(2); manual_seed(0); b = Tensor.randn(2)  # doctest: +SKIP
    """
    global _generator
    _generator = np.random.default_rng(seed)


def host_generator() -> np.random.Generator:
    """The generator all draws come from (host side)."""
    if _State.tracer is not None:  # a draw inside a symbolic trace would be frozen
        _State.tracer.random_draw()
    return _generator


class Draw(Function):
    """Random numbers as an op: ``args = (kind, shape, dtype, p)``, one input whose device
    the draw goes to. ``kind``: ``"random"`` (uniform in [0, 1)), ``"standard_normal"``,
    or ``"dropout"`` (the scale ``keep / (1 - p)`` of a dropout mask, ``keep`` where a
    uniform draw is ``>= p``). Not differentiable; never folded or merged by a trace."""

    __slots__ = ()
    differentiable = False
    random = True  # (read by the symbolic passes)
    name = "draw"

    def forward(self, xp: Any, like: Any) -> Any:
        kind, shape, dtype, p = self.args
        if kind == "dropout":
            arr = (_generator.random(shape) >= p) / (1.0 - p)
        else:
            arr = getattr(_generator, kind)(shape)
        return xp.device.asarray(arr, dtype=dtype)


def draw(kind: str, shape: tuple, dtype: Any, like: Any, p: float = 0.0) -> Any:
    """A tensor of draws of ``kind`` (see :class:`Draw`) on ``like``'s device."""
    return Draw.apply(like, args=(kind, tuple(shape), dtype, p))
