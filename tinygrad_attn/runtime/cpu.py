"""``torch.cpu``: the CPU as a device module, beside ``tga.cuda`` (always available, one
device, nothing to synchronise: NumPy's calls return when done).

>>> import tinygrad_attn as tga
>>> tga.cpu.is_available(), tga.cpu.device_count()
(True, 1)
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any


def is_available() -> bool:
    return True


def is_initialized() -> bool:
    return True


def device_count() -> int:
    return 1


def current_device() -> str:
    return "cpu"


def set_device(device: Any) -> None:
    """PyTorch's: accepted, and nothing to do (one CPU device)."""


def synchronize(device: Any = None) -> None:
    """Nothing to wait for: every CPU op has finished when its call returns."""


def get_capabilities() -> dict[str, Any]:
    import numpy as np  # noqa: PLC0415

    return {"numpy": np.__version__}


class Stream:
    """PyTorch's CPU stream: one, in order (``wait_stream``, ``synchronize`` do nothing)."""

    def __init__(self, priority: int = -1) -> None:
        self.priority = priority

    def wait_stream(self, stream: Any) -> None:
        pass

    def synchronize(self) -> None:
        pass

    def query(self) -> bool:
        return True

    def record_event(self, event: Any = None) -> Any:
        return event


_STREAM = Stream()


def current_stream(device: Any = None) -> Stream:
    return _STREAM


class StreamContext(contextlib.AbstractContextManager):
    def __init__(self, stream: Stream | None) -> None:
        self.stream = stream

    def __exit__(self, *exc: Any) -> None:
        return None


@contextlib.contextmanager
def stream(stream: Stream | None) -> Iterator[None]:
    yield
