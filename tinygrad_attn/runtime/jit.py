"""``tga.jit``: PyTorch's ``torch.jit`` names. :func:`trace` records a function as a
:class:`~tinygrad_attn.symbolic.Program` (its forward and backward as printable, replayable
Python); TorchScript itself (``script``, saving a scripted module) is not part of this library
and raises a ``NotImplementedError`` naming the function when called.

>>> import tinygrad_attn as tga
>>> x = tga.randn(3, requires_grad=True)
>>> prog = tga.jit.trace(lambda x: (x * x).sum(), x)  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from ..engine.switches import tracing

__all__ = [
    "trace", "script", "is_scripting", "is_tracing", "ignore", "unused", "export", "annotate",
    "save", "load", "freeze", "optimize_for_inference", "trace_module", "script_if_tracing", "fork", "wait",
]  # fmt: skip

F = TypeVar("F", bound=Callable[..., Any])


def trace(fn: Callable[..., Any], *example_args: Any, example_inputs: Any = None, check_trace: bool = True,
          check_inputs: Any = None, check_tolerance: float = 1e-5, strict: bool = True) -> Any:  # fmt: skip
    """Run ``fn(*example_args)`` once and return every op it made, forward and backward, as a
    :class:`~tinygrad_attn.symbolic.Program` (call it to replay on new inputs).

    As ``torch.jit.trace(fn, (x, y))``, a single tuple of examples is the argument list, and
    ``example_inputs=`` is PyTorch's keyword for it; the checking options are accepted and
    have nothing to check (a program replays the recorded ops themselves).
    """
    from ..symbolic.trace import trace as trace_program  # noqa: PLC0415 - the tracer loads on first use

    if example_inputs is not None:
        if example_args:
            raise TypeError("jit.trace: give the example arguments either positionally or as example_inputs=, not both")
        example_args = (example_inputs,)
    if len(example_args) == 1 and isinstance(example_args[0], tuple):
        example_args = example_args[0]
    return trace_program(fn, *example_args)


def is_tracing() -> bool:
    """Whether this thread is inside :func:`trace` (or a ``tga.compile`` recording)."""
    return tracing()


def is_scripting() -> bool:
    """Always False: nothing here runs as TorchScript."""
    return False


def _not_here(name: str, instead: str) -> NotImplementedError:
    return NotImplementedError(f"jit.{name}: TorchScript is not part of tinygrad_attn; {instead}")


def script(obj: Any, *args: Any, **kwargs: Any) -> Any:
    """Not supported (TorchScript compiles Python source to its own language)."""
    raise _not_here("script", "record a function with tga.jit.trace(fn, *example_args) or use tga.compile(fn)")


def trace_module(mod: Any, inputs: Any, *args: Any, **kwargs: Any) -> Any:
    """Not supported: trace the module's call with ``tga.jit.trace(module, *example_args)``."""
    raise _not_here("trace_module", "use tga.jit.trace(module, *example_args)")


def save(m: Any, f: Any, *args: Any, **kwargs: Any) -> None:
    """Not supported: save the state dict with ``tga.save(model.state_dict(), f)``."""
    raise _not_here("save", "save the state dict with tga.save(model.state_dict(), f)")


def load(f: Any, *args: Any, **kwargs: Any) -> Any:
    """Not supported: TorchScript archives hold compiled code, not only tensors."""
    raise _not_here("load", "load a state dict with tga.load(f) and model.load_state_dict(...)")


def freeze(mod: Any, *args: Any, **kwargs: Any) -> Any:
    """Not supported (it freezes a ScriptModule)."""
    raise _not_here("freeze", "use the module itself, or tga.compile(fn)")


def optimize_for_inference(mod: Any, *args: Any, **kwargs: Any) -> Any:
    """Not supported (it optimizes a ScriptModule)."""
    raise _not_here("optimize_for_inference", "use the module itself, or tga.compile(fn)")


def fork(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """Not supported (TorchScript's asynchronous tasks)."""
    raise _not_here("fork", "call the function directly")


def wait(future: Any) -> Any:
    """Not supported (TorchScript's asynchronous tasks)."""
    raise _not_here("wait", "call the function directly")


# Decorators that tell the TorchScript compiler what to skip: without one, each leaves the function as it is.
def ignore(drop: Any = False, **kwargs: Any) -> Any:
    """``@tga.jit.ignore`` and ``@tga.jit.ignore(drop=True)``: the function unchanged."""
    return drop if callable(drop) else (lambda fn: fn)


def unused(fn: F) -> F:
    """``@tga.jit.unused``: the function unchanged."""
    return fn


def export(fn: F) -> F:
    """``@tga.jit.export``: the function unchanged."""
    return fn


def script_if_tracing(fn: F) -> F:
    """``@tga.jit.script_if_tracing``: the function unchanged."""
    return fn


def annotate(the_type: Any, the_value: Any) -> Any:
    """``tga.jit.annotate(T, value)``: ``value`` (the type is for TorchScript)."""
    return the_value
