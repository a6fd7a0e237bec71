"""``tga.accelerator``: PyTorch's device-neutral questions about the accelerator (here a CUDA
device, when CuPy and a GPU are present), answered from :mod:`tinygrad_attn.cuda`.

>>> device = tga.accelerator.current_accelerator() or "cpu"  # doctest: +SKIP
"""

from __future__ import annotations

from typing import Any

from . import cuda as _cuda
from .backend import device as _device

__all__ = ["is_available", "current_accelerator", "device_count", "current_device_index", "current_device_idx",
           "set_device_index", "set_device_idx", "synchronize"]  # fmt: skip

_current = [0]


def is_available() -> bool:
    """Whether an accelerator (a CUDA device) can be used here."""
    return _cuda.is_available()


def current_accelerator(check_available: bool = False) -> _device | None:
    """``device("cuda")`` where CUDA can be used, else None (as PyTorch's on a CPU-only build)."""
    return _device("cuda") if _cuda.is_available() else None


def device_count() -> int:
    return _cuda.device_count()


def current_device_index() -> int:
    """The accelerator's index new tensors go to (0, or the one set)."""
    return _current[0]


def set_device_index(device: Any) -> None:
    """Remember ``device``'s index (an int or a ``cuda:N`` device) as the current one."""
    index = device if isinstance(device, int) else getattr(_device(device), "index", None) or 0
    if _cuda.is_available() and not 0 <= index < _cuda.device_count():
        raise RuntimeError(f"accelerator.set_device_index: no device {index} ({_cuda.device_count()} here)")
    _current[0] = int(index)


current_device_idx = current_device_index
set_device_idx = set_device_index


def synchronize(device: Any = None) -> None:
    """Wait for the accelerator's queued work (nothing to wait for without one)."""
    if _cuda.is_available():
        import cupy  # noqa: PLC0415 - only with a GPU

        cupy.cuda.Device().synchronize()
