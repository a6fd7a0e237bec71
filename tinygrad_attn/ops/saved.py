"""What an op keeps for its backward where its recorded steps keep less than PyTorch's.

PyTorch's in-place check follows what each op saves: a saved tensor changed in place
before the backward makes the backward raise. Ours follows what each recorded
:class:`~tinygrad_attn.engine.function.Function` declares it reads (``keep``, ``keeps_input``,
``reads_output``). An op written as several primitives (``clamp`` as ``where`` of a fresh
mask, ``elu``, ``mse_loss``, ``logsumexp``, ...) may read only arrays it made itself, so
that changing its input would pass silently where PyTorch raises. The API promises the
same errors as PyTorch, so such an op ends with :func:`saved_for_backward`: one more node
that passes the gradient through unchanged and keeps the tensors PyTorch's op saves, so
the engine's version check fires on them as on any other op's.
"""

from __future__ import annotations

from typing import Any

from ..engine import function as _function
from ..engine.function import Function


class Saved(Function):
    """Input 0 is the op's result, passed on as it is (the same array); the other inputs
    are the tensors PyTorch's op saves: kept, and checked for in-place changes, not read."""

    __slots__ = ()
    name = "saved"
    keep = ()  # (see keeps_input: every input but the result)
    reads_output = False

    def keeps_input(self, i: int) -> bool:
        return i > 0

    def forward(self, xp: Any, out: Any, *kept: Any) -> Any:
        return out

    def backward(self, g: Any, ns: Any, inputs: Any, out: Any) -> Any:
        return (g,) + (None,) * (len(inputs) - 1)


class SavedWithOutput(Saved):
    """:class:`Saved` that also keeps the result (PyTorch's ``prod``, ``logsumexp``, ``std``, ...)."""

    __slots__ = ()
    name = "saved_with_output"
    reads_output = True


def saved_for_backward(out: Any, *tensors: Any, output: bool = False) -> Any:
    """``out``, recorded as keeping ``tensors`` (the ones among them that are tensors) and,
    with ``output=True``, itself for the backward, as the PyTorch op it computes does.

    Nothing is recorded where ``out`` needs no gradient (no graph, no check)."""
    if not out.requires_grad:
        return out
    kept = [t for t in tensors if isinstance(t, _function.Tensor)]
    if not kept and not output:
        return out
    return (SavedWithOutput if output else Saved).apply(out, *kept)
