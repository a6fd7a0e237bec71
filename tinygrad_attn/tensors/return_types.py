"""PyTorch's ``torch.return_types``: the named tuples of ops that return several tensors, each a
class named as PyTorch's (``type(torch.linalg.slogdet(A)).__name__ == "linalg_slogdet"``), with
its fields, and printed as PyTorch prints them (``torch.return_types.linalg_slogdet(\\nsign=...,
\\nlogabsdet=...)``). Each class lives in this module under its name, so results pickle.

>>> import tinygrad_attn as tga
>>> tga.linalg.slogdet(tga.eye(2))._fields
('sign', 'logabsdet')
"""

from __future__ import annotations

import collections
from typing import Any

__all__ = ["structseq", "register"]


def _repr(self: Any) -> str:
    fields = ",\n".join(f"{k}={v!r}" for k, v in zip(self._fields, self))
    return f"torch.return_types.{type(self).__name__}(\n{fields})"


def structseq(name: str, fields: tuple[str, ...]) -> type:
    """The named tuple class PyTorch calls ``torch.return_types.<name>``, with ``fields``
    (made once; the same class at each call)."""
    cls = globals().get(name)
    if cls is None:
        cls = collections.namedtuple(name, fields, module=__name__)
        cls.__repr__ = _repr
        cls.__doc__ = f"PyTorch's ``torch.return_types.{name}``: ``({', '.join(fields)})``, also by name."
        globals()[name] = cls
        __all__.append(name)
    elif cls._fields != tuple(fields):
        raise TypeError(f"return_types.{name}: fields {cls._fields}, asked for {tuple(fields)}")
    return cls


def register(cls: type) -> None:
    """Put a named result class made elsewhere (``max``'s ``(values, indices)``) here under its name."""
    globals().setdefault(cls.__name__, cls)
    if cls.__name__ not in __all__:
        __all__.append(cls.__name__)
