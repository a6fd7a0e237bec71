"""``Transfer``: a tensor moved to another device; the gradient moves back."""

from __future__ import annotations

from typing import Any

from ..engine.function import Function


class Transfer(Function):
    """Move to another device (``args = (src, dst)``); the gradient moves back."""

    __slots__ = ()
    name = "to"
    reads_values = False  # backward reads devices only

    @classmethod
    def apply(cls, *inputs: Any, args: Any = None) -> Any:
        out = super().apply(*inputs, args=args)
        out._dev = args[1]
        return out

    def forward(self, ns, a):
        src, dst = self.args
        src.refuse_copy_out(dst)
        return dst.asarray(src.to_host(a))

    def backward(self, g, ns, inputs, out):
        src, dst = self.args
        if ns.recording:  # (create_graph: the gradient is a tensor, moved by an op)
            return (g.to(src),)
        return (src.asarray(dst.to_host(g)),)
