"""``torch.autograd.Variable``: the wrapper of scripts written before PyTorch 0.4 merged it
into ``Tensor``, kept as PyTorch keeps it. ``Variable(t)`` is a new leaf sharing ``t``'s memory
(detached, as PyTorch's is), ``requires_grad=True`` makes it record; ``isinstance(x, Variable)``
holds for every tensor; ``volatile`` only warns, as in PyTorch.

>>> x = Variable(tga.ones(3), requires_grad=True)  # doctest: +SKIP
"""

from __future__ import annotations

from typing import Any

from ..engine.warn import warn as _user_warn

__all__ = ["Variable"]


class _VariableMeta(type):
    def __instancecheck__(cls, obj: Any) -> bool:
        from ..tensors._tensor import Tensor  # noqa: PLC0415 - (the class registers itself after autograd loads)

        return isinstance(obj, Tensor)


class Variable(metaclass=_VariableMeta):
    """``Variable(data, requires_grad=False, volatile=False)``: ``data`` detached, a leaf."""

    def __new__(cls, data: Any = None, requires_grad: bool = False, volatile: bool = False) -> Any:
        from ..tensors._tensor import Tensor  # noqa: PLC0415
        from ..tensors.factories.creation import empty  # noqa: PLC0415

        if volatile:
            _user_warn("volatile was removed and now has no effect. Use `with torch.no_grad():` instead.",
                          UserWarning)  # fmt: skip
        if data is None:
            data = empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
        out = data.detach()
        if requires_grad:
            out.requires_grad_(True)
        return out
