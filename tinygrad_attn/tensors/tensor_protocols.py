"""A Tensor in Python's protocols, as PyTorch's: ``[...][t]`` and ``range(t)`` (``__index__``),
``f"{loss:.4f}"`` (``__format__``), ``x in t`` (``__contains__``), ``reversed(t)``
(``__reversed__``) and ``hash(t)`` (identity: a tensor is a dict key as itself, never by its
values). Installed on :class:`Tensor` by the package's ``install_methods``.

>>> import tinygrad_attn as tga
>>> f"{tga.tensor(0.123456):.3f}"
'0.123'
>>> ["a", "b", "c"][tga.tensor(2)]
'c'
"""

from __future__ import annotations

from numbers import Number
from typing import Any

from ..engine.declare import public
from ._tensor import Tensor


@public(function=False, method=True)
def __index__(self: Tensor) -> int:
    """An integer (or bool) tensor of one element as a Python int; anything else is PyTorch's TypeError."""
    if self.dtype.kind not in "biu" or self.numel() != 1:
        raise TypeError(
            "only integer tensors of a single element can be converted to an index "
            f"(got a {self.dtype} tensor of shape {tuple(self.shape)})"
        )
    return int(self._item("__index__"))


@public(function=False, method=True)
def __format__(self: Tensor, format_spec: str) -> str:
    """A 0-d tensor formats its value (``f"{loss:.4f}"``); any tensor with no spec is ``str(t)``;
    other specs are Python's TypeError, as PyTorch's."""
    if self.ndim == 0 and not self._dev.meta:  # (a meta tensor has no value: it formats as any tensor)
        return format(self._item("__format__"), format_spec)
    if format_spec:
        raise TypeError(
            f"unsupported format string passed to Tensor.__format__ ({format_spec!r} for a tensor of shape "
            f"{tuple(self.shape)}; only a 0-d tensor formats its value)"
        )
    return str(self)


@public(function=False, method=True)
def __contains__(self: Tensor, element: Any) -> bool:
    """Whether any element of this tensor equals ``element`` (a number or a tensor broadcast against it)."""
    if not isinstance(element, (Tensor, Number)):
        raise RuntimeError(f"Tensor.__contains__ only supports Tensor or scalar, but you passed in a {type(element)}.")
    return bool((self == element).any())


@public(function=False, method=True)
def __reversed__(self: Tensor) -> Tensor:
    """The tensor with its first axis reversed (a 0-d tensor: itself), as a tensor, as PyTorch's."""
    return self if self.ndim == 0 else self.flip(0)


@public(function=False, method=True)
def __hash__(self: Tensor) -> int:
    return id(self)
