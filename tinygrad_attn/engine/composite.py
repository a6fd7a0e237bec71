"""Composite ops: a definition in primitive ops (the reference), optionally computed by one
fused op whose backward is written by hand (:class:`FusedFunction`)."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from .backward import run_backward
from .function import Function
from .switches import Scope, _State, decompose

if TYPE_CHECKING:
    from .._tensor import Tensor


def composite(name: str, fused: Callable[..., Tensor | None] | None = None) -> Callable:
    """Declare ``reference`` (written in tensor ops) as the definition of composite op ``name``.

    ``fused(*args, **kw)`` may return a tensor computed by one fused :class:`Function`, or
    ``None`` where it does not apply. Inside ``tga.decompose()`` the reference always runs,
    within a scope named ``name`` so its primitives draw as one group.
    """

    def deco(reference: Callable[..., Tensor]) -> Callable[..., Tensor]:
        @functools.wraps(reference)
        def run(*args: Any, **kw: Any) -> Tensor:
            if fused is not None and not _State.decompose:
                out = fused(*args, **kw)
                if out is not None:
                    return out
            prev = _State.scope
            _State.scope = Scope(name, "composite", prev)
            try:
                return reference(*args, **kw)
            finally:
                _State.scope = prev

        run.reference = reference  # type: ignore[attr-defined]
        run.composite_name = name  # type: ignore[attr-defined]
        return run

    return deco


class FusedFunction(Function):
    """A composite op computed in one step, with a hand-derived backward.

    ``reference`` is the primitive definition (a function of tensors). With
    ``create_graph=True`` the backward recomputes it and differentiates that, so fused ops
    have gradients of every order without a second hand-derived formula.
    """

    __slots__ = ()
    #: The composite's definition in tensor ops, which ``recompute`` applies. Set (as a
    #: ``staticmethod``) by the module that writes the definition, above the ops
    #: (``functional.py``, ``nn/rnn.py``): an op imports nothing above it.
    definition: Callable[..., Any] | None = None

    def recompute(self, *inputs: Any) -> Tensor:
        """The op's primitive definition applied to ``inputs`` (used for higher orders)."""
        raise NotImplementedError  # pragma: no cover

    def backward(self, g: Any, ns: Any, inputs: Sequence[Any], out: Any) -> Sequence[Any]:
        if ns.recording:  # a gradient that is itself recorded (create_graph, a trace): the namespace's way
            return ns.fused_backward(self, g, inputs, out)
        return self.backward_arrays(g, ns, inputs, out)

    def backward_arrays(self, g: Any, ns: Any, inputs: Sequence[Any], out: Any) -> Sequence[Any]:
        raise NotImplementedError  # pragma: no cover

    def _backward_by_reference(self, g: Tensor, ns: Any, inputs: Sequence[Any]) -> list[Any]:
        # The local derivative only: the reference runs on stand-ins (one alias op per
        # differentiable input) and the pass below stops at them. Differentiating with
        # respect to the inputs themselves would also follow the paths through their own
        # history, counted again by the outer pass where one input depends on another
        # (``linear(W * 1.0, W)``). The stand-ins stay in the graph, so the gradient is
        # still differentiable with respect to the inputs, to any order.
        stand_ins = [ns.alias(t) if getattr(t, "requires_grad", False) else t for t in inputs]
        diff = [s for s, t in zip(stand_ins, inputs) if s is not t]
        with decompose():
            y = self.recompute(*stand_ins)
        found = run_backward([y], [g], retain_graph=True, create_graph=True, targets=diff, stop_at_targets=True)
        gs = iter(found)
        return [next(gs) if s is not t else None for s, t in zip(stand_ins, inputs)]
