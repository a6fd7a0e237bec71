"""``tga.backends.cudnn``: PyTorch's cuDNN flags. This library calls no cuDNN (convolutions are
one matrix product), so ``is_available()`` is False and the flags are kept as set, changing
nothing (every op here is deterministic already)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

enabled = True
deterministic = False
benchmark = False
benchmark_limit = 10
allow_tf32 = True

__all__ = ["enabled", "deterministic", "benchmark", "benchmark_limit", "allow_tf32", "is_available", "version", "flags"]


def is_available() -> bool:
    """False: cuDNN is never used here."""
    return False


def version() -> None:
    """None: no cuDNN library is loaded (as PyTorch's without one)."""
    return None


@contextlib.contextmanager
def flags(enabled: bool = False, benchmark: bool = False, deterministic: bool = False,
          allow_tf32: bool = True) -> Iterator[None]:  # fmt: skip
    """Set the four flags inside the block, as PyTorch's ``torch.backends.cudnn.flags``."""
    names = ("enabled", "benchmark", "deterministic", "allow_tf32")
    saved = {n: globals()[n] for n in names}
    globals().update(zip(names, (enabled, benchmark, deterministic, allow_tf32)))
    try:
        yield
    finally:
        globals().update(saved)
