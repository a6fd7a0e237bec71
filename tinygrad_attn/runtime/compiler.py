"""``tga.compiler``: PyTorch's ``torch.compiler`` names. :func:`compile` is ``tga.compile`` (a
function traced into a replayable :class:`~tinygrad_attn.symbolic.Program`); :func:`is_compiling`
says whether the running code is being traced by it. The switches of PyTorch's Dynamo that have
no counterpart here (``disable``, ``allow_in_graph``, ``assume_constant_result``) return the
function they are given, as PyTorch's do outside a compile.

>>> import tinygrad_attn as tga
>>> tga.compiler.is_compiling()
False
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..engine.switches import tracing

__all__ = ["compile", "is_compiling", "is_dynamo_compiling", "is_exporting", "disable", "reset", "allow_in_graph",
           "assume_constant_result", "cudagraph_mark_step_begin", "list_backends"]  # fmt: skip


def compile(*args: Any, **kwargs: Any) -> Any:  # noqa: A001 - PyTorch's name
    """``tga.compile`` (PyTorch's ``torch.compiler.compile`` is ``torch.compile``)."""
    from ..symbolic.compile import compile as _compile  # noqa: PLC0415 - the tracer loads on first use

    return _compile(*args, **kwargs)


def is_compiling() -> bool:
    """Whether this code runs inside a trace of ``tga.compile`` or ``tga.jit.trace``."""
    return tracing()


is_dynamo_compiling = is_compiling


def is_exporting() -> bool:
    """False: there is no ``torch.export`` here."""
    return False


def disable(fn: Callable[..., Any] | None = None, recursive: bool = True, *, reason: str | None = None) -> Any:
    """``fn`` itself (or a decorator that returns it): a traced function records every op it runs."""
    if fn is None:
        return lambda f: f
    return fn


def allow_in_graph(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` itself: every function's ops are in the traced program here."""
    return fn


def assume_constant_result(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` itself."""
    return fn


def reset() -> None:
    """Nothing to clear: each compiled function keeps its own cache of programs."""


def cudagraph_mark_step_begin() -> None:
    """Nothing to mark: CUDA graphs are not used here."""


def list_backends(exclude_tags: Any = ("debug", "experimental")) -> list[str]:
    """The compile backends: none but the library's own tracer, which ``backend=`` does not select."""
    return []
