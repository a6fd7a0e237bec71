"""The one way a name that PyTorch has and this library leaves out (ONNX export, distributed
training, the profiler, torch.fx) answers a call: a ``NotImplementedError`` naming the function
and what to do instead, raised when called and never at import, so a script whose top imports
these modules runs as far as it can."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def not_here(qualname: str, instead: str) -> Callable[..., Any]:
    """A function ``qualname`` (``"distributed.init_process_group"``) that raises when called."""

    def missing(*args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(f"{qualname}: not part of tinygrad_attn; {instead}")

    missing.__name__ = missing.__qualname__ = qualname.rpartition(".")[2]
    missing.__doc__ = f"Not part of tinygrad_attn (PyTorch's ``torch.{qualname}``): raises NotImplementedError."
    return missing
