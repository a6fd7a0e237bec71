"""PyTorch's structured control flow, ``torch.cond`` and ``torch.while_loop``, as they run
outside ``torch.compile``: the branch or the loop is run by Python on the values at hand.

A program traced by ``tga.compile`` that calls them reads a tensor's value to decide, and so
is refused there as any ``if`` on a tensor is (the trace would freeze the decision).

>>> import tinygrad_attn as tga
>>> tga.cond(tga.tensor(True), lambda x: x + 1, lambda x: x - 1, (tga.ones(2),))
tensor([2., 2.])
>>> tga.while_loop(lambda i, x: i < 3, lambda i, x: (i + 1, x * 2), (tga.tensor(0), tga.ones(2)))
(tensor(3), tensor([8., 8.]))
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..tensors._tensor import Tensor

__all__ = ["cond", "while_loop"]


def _truth(pred: Any, what: str) -> bool:
    if isinstance(pred, Tensor):
        if pred.numel() != 1:
            raise RuntimeError(f"Expected {what} to be bool or single-element tensor, but got {pred}.")
        return bool(pred.item())
    if isinstance(pred, (bool, int, float)):
        return bool(pred)
    raise RuntimeError(f"Expected {what} to be bool or single-element tensor, but got {type(pred).__name__}.")


def cond(pred: bool | int | float | Tensor, true_fn: Callable[..., Any], false_fn: Callable[..., Any],
         operands: tuple | list = ()) -> Any:  # fmt: skip
    """``true_fn(*operands)`` if ``pred`` (a bool, a number or a one-element tensor) holds, else
    ``false_fn(*operands)``, as PyTorch's ``torch.cond`` runs eagerly; gradients flow through the
    branch taken."""
    if not callable(true_fn) or not callable(false_fn):
        raise RuntimeError("Expect both branches to be callable.")
    return (true_fn if _truth(pred, "pred") else false_fn)(*operands)


def _leaves(tree: Any) -> list[Any]:
    if isinstance(tree, (tuple, list)):
        return [leaf for t in tree for leaf in _leaves(t)]
    if isinstance(tree, dict):
        return [leaf for t in tree.values() for leaf in _leaves(t)]
    return [tree]


def _shaped(tree: Any, leaves: list[Any]) -> Any:
    """``leaves`` in the nesting of ``tree`` (taken from the front of the list)."""
    if isinstance(tree, (tuple, list)):
        return type(tree)(_shaped(t, leaves) for t in tree)
    if isinstance(tree, dict):
        return {k: _shaped(t, leaves) for k, t in tree.items()}
    return leaves.pop(0)


def while_loop(cond_fn: Callable[..., Any], body_fn: Callable[..., Any], carried_inputs: tuple | list) -> Any:
    """``carried = body_fn(*carried)`` while ``cond_fn(*carried)`` holds, as PyTorch's ``torch.while_loop``
    runs eagerly: ``carried_inputs`` is a tuple of tensors and ints (nested in tuples, lists and
    dicts); each step's result, read leaf by leaf in that nesting, is the next step's input, and the
    last step's result is returned as the body returned it (the inputs, when no step runs)."""
    if not callable(cond_fn) or not callable(body_fn):
        raise RuntimeError("Expect cond_fn and body_fn to be callable.")
    if not isinstance(carried_inputs, (tuple, list)) or not all(
        isinstance(leaf, (Tensor, int)) for leaf in _leaves(carried_inputs)
    ):
        raise RuntimeError(
            "Expect carried_inputs to be a tuple of possibly nested dict/list/tuple that only consists of tensor "
            f"or int leaves, but got {carried_inputs}."
        )
    result: Any = carried_inputs
    carried = carried_inputs
    n = len(_leaves(carried_inputs))
    while _truth(cond_fn(*carried), "cond_fn's output"):
        result = body_fn(*carried)
        leaves = _leaves(result)
        if len(leaves) != n:
            raise RuntimeError(
                f"while_loop: body_fn returned {len(leaves)} values for the {n} values it carries ({result})"
            )
        carried = _shaped(carried_inputs, leaves)
    return result
