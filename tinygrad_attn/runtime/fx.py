"""``tga.fx``: PyTorch's graph capture as Python (``torch.fx``), which this library does not
have: ``symbolic_trace`` and the graph classes raise a ``NotImplementedError`` naming them when
called. This library's traced programs are ``tga.jit.trace(fn, *example_args)``, whose printed
program is Python that runs. ``wrap``, which marks a function at import time, leaves it as it is."""

from __future__ import annotations

from typing import Any

from ._not_here import not_here

__all__ = ["symbolic_trace", "GraphModule", "Graph", "Tracer", "Node", "Proxy", "Interpreter", "Transformer", "wrap"]

_INSTEAD = "record a function as a program with tga.jit.trace(fn, *example_args); print it with print(prog)"

symbolic_trace = not_here("fx.symbolic_trace", _INSTEAD)
GraphModule = not_here("fx.GraphModule", _INSTEAD)
Graph = not_here("fx.Graph", _INSTEAD)
Tracer = not_here("fx.Tracer", _INSTEAD)
Node = not_here("fx.Node", _INSTEAD)
Proxy = not_here("fx.Proxy", _INSTEAD)
Interpreter = not_here("fx.Interpreter", _INSTEAD)
Transformer = not_here("fx.Transformer", _INSTEAD)


def wrap(fn_or_name: Any) -> Any:
    """``torch.fx.wrap("f")`` or ``@torch.fx.wrap``: the argument as it is (nothing is traced by fx here)."""
    return fn_or_name
