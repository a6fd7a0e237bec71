"""``tga.profiler``: PyTorch's profiler, which this library does not have: ``profile`` raises a
``NotImplementedError`` naming it when called (time a step with ``time.perf_counter`` or read a
traced program, ``tga.jit.trace``). ``record_function`` labels a region for a running profiler;
with none running it does nothing, as PyTorch's does, so models that label their parts run."""

from __future__ import annotations

import contextlib
import enum
from collections.abc import Callable
from typing import Any

from ._not_here import not_here

__all__ = ["profile", "record_function", "ProfilerActivity", "schedule", "tensorboard_trace_handler"]

_INSTEAD = "time the code with time.perf_counter(), or read its ops with tga.jit.trace(fn, *args)"


class ProfilerActivity(enum.Enum):
    CPU = "CPU"
    CUDA = "CUDA"


class profile:  # noqa: N801 - PyTorch's name
    """Not supported: raises when made."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise NotImplementedError(f"profiler.profile: not part of tinygrad_attn; {_INSTEAD}")


class record_function(contextlib.ContextDecorator):  # noqa: N801 - PyTorch's name
    """``with record_function("attention"):`` a label for a profiler; none runs here, so nothing happens."""

    def __init__(self, name: str, args: str | None = None) -> None:
        self.name = name

    def __enter__(self) -> record_function:
        return self

    def __exit__(self, *exc: object) -> None:
        return None


schedule: Callable[..., Any] = not_here("profiler.schedule", _INSTEAD)
tensorboard_trace_handler: Callable[..., Any] = not_here("profiler.tensorboard_trace_handler", _INSTEAD)
