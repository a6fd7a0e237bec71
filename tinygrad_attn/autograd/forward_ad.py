"""``tga.autograd.forward_ad``: PyTorch's forward-mode AD, dual tensors carrying a tangent through every op.

>>> import tinygrad_attn.autograd.forward_ad as fwAD  # doctest: +SKIP
>>> with fwAD.dual_level():  # doctest: +SKIP
...     x = fwAD.make_dual(primal, tangent)
...     jvp = fwAD.unpack_dual(x.sin()).tangent  # tangent * cos(primal)

How each op's tangent is computed (from its gradient, transposed): ``engine/forward_grads.py``.
"""

from __future__ import annotations

import functools
from typing import Any, NamedTuple

from ..engine import forward_grads as _fg


class UnpackedDualTensor(NamedTuple):
    """What :func:`unpack_dual` returns: the primal (a view of the dual tensor) and its tangent (or None)."""

    primal: Any
    tangent: Any


def _inexact(t: Any) -> bool:
    return t.is_floating_point() or t.is_complex()


def enter_dual_level() -> int:
    """Open the dual level (only one at a time, as PyTorch's) and return its number."""
    return _fg.enter_level()


def exit_dual_level(*, level: int | None = None) -> None:
    """Close the dual level: every tangent of it is forgotten."""
    _fg.exit_level(level)


def make_dual(tensor: Any, tangent: Any, *, level: int | None = None) -> Any:
    """A view of ``tensor`` that carries ``tangent`` (of its shape) through the ops it meets inside the level."""
    level = _fg.current_level() if level is None else level
    if level < 0:
        raise RuntimeError("Trying to create a dual Tensor for forward AD but no level exists, make sure to "
                           "enter_dual_level() first.")  # fmt: skip
    if not _inexact(tensor):
        raise ValueError(f"Expected primal to be floating point or complex, but got: {tensor.dtype}")
    if not _inexact(tangent):
        raise ValueError(f"Expected tangent to be floating point or complex, but got: {tangent.dtype}")
    if level != _fg.current_level():
        raise RuntimeError("Invalid level given to _make_dual")
    if _fg.tangent_of(tensor) is not None:
        raise RuntimeError(f"Making a dual Tensor based on a Tensor that already has a forward gradient at the same "
                           f"level {level} is not supported.")  # fmt: skip
    if tuple(tangent.shape) != tuple(tensor.shape):
        raise RuntimeError("Trying to set a forward gradient that has a different size than that of the original "
                           f"Tensor, this is not supported. Tensor is of size {_size(tensor)} while the given forward "
                           f"gradient is of size {_size(tangent)}.")  # fmt: skip
    if tangent.device != tensor.device:
        raise RuntimeError(f"make_dual: the tangent is on {tangent.device}, the primal on {tensor.device}; "
                           "move one of them (.to(device))")  # fmt: skip
    with _fg.suspended():
        dual = tensor.view_as(tensor)
    _fg.set_tangent(dual, tangent)
    return dual


def unpack_dual(tensor: Any, *, level: int | None = None) -> UnpackedDualTensor:
    """``(primal, tangent)`` of a dual tensor: the primal a view of it without the tangent; ``tangent`` is None
    for a tensor that has none (or outside a level)."""
    level = _fg.current_level() if level is None else level
    if level < 0:
        return UnpackedDualTensor(tensor, None)
    tangent = _fg.tangent_of(tensor)
    if tangent is None:
        return UnpackedDualTensor(tensor, None)
    if level != _fg.current_level():
        raise RuntimeError("Invalid level given to _fw_primal")
    with _fg.suspended():
        primal = tensor.view_as(tensor)
    return UnpackedDualTensor(primal, tangent)


def _size(t: Any) -> str:
    return "[" + ", ".join(map(str, t.shape)) + "]"


class dual_level:
    """The context of forward-mode AD: inside, :func:`make_dual` makes dual tensors; on exit their tangents go.
    Also a decorator (PyTorch's is one)."""

    def __enter__(self) -> int:
        return enter_dual_level()

    def __exit__(self, *exc: Any) -> None:
        exit_dual_level()

    def __call__(self, fn: Any) -> Any:
        @functools.wraps(fn)
        def run(*args: Any, **kw: Any) -> Any:
            with dual_level():
                return fn(*args, **kw)

        return run


__all__ = ["UnpackedDualTensor", "dual_level", "enter_dual_level", "exit_dual_level", "make_dual", "unpack_dual"]
