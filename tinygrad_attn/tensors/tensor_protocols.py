"""A Tensor in Python's protocols, as PyTorch's: ``[...][t]`` and ``range(t)`` (``__index__``),
``f"{loss:.4f}"`` (``__format__``), ``x in t`` (``__contains__``), ``reversed(t)``
(``__reversed__``) and ``hash(t)`` (identity: a tensor is a dict key as itself, never by its
values). Installed on :class:`Tensor` by the package's ``install_methods``; the binary operators'
rule for the other operand (:func:`install_binary_operators`) after it.

>>> import tinygrad_attn as tga
>>> f"{tga.tensor(0.123456):.3f}"
'0.123'
>>> ["a", "b", "c"][tga.tensor(2)]
'c'
"""

from __future__ import annotations

import functools
from numbers import Number
from typing import Any

import numpy as np

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


# -- binary operators: which other operand they take ---------------------------------------
#: Every binary operator of a Tensor (``t + o``, ``o + t``, ``t += o``, ``t == o``, ...).
BINARY_OPERATORS = tuple(
    f"__{prefix}{name}__"
    for name in "add sub mul truediv floordiv mod pow matmul and or xor lshift rshift".split()
    for prefix in ("", "r", "i")
) + tuple(f"__{name}__" for name in "eq ne lt le gt ge".split())

#: What PyTorch's operators take as the other operand: a tensor, a Python number, a NumPy scalar.
_OPERANDS = (Tensor, bool, int, float, complex, np.number, np.bool_)
_PLAIN = frozenset((Tensor, int, float))  # (the common operands, checked by class first: no isinstance)


#: The operators whose other operand may be something else: ``t == array`` compares with the array
#: (``!=`` does not: PyTorch's NotImplemented, Python then compares identities), and
#: ``o / t`` is ``t.reciprocal() * o``, which takes what ``*`` and its reflection take.
_OPERANDS_OF = {"__eq__": (*_OPERANDS, np.ndarray), "__rtruediv__": (object,)}


#: the operators PyTorch defines in C (``torch._C.TensorBase``'s): called unbound on what is no tensor
#: (``torch.Tensor.__radd__(2, t)``, which no Python operator does) they raise the descriptor's TypeError;
#: the others are Python functions of ``torch.Tensor`` and compute with any first operand
C_OPERATORS = frozenset(
    f"__{n}__" for n in ("add radd iadd sub isub mul rmul imul truediv ifloordiv mod imod matmul and rand iand or "
                         "ror ior xor rxor ixor lshift ilshift rshift irshift eq ne lt le gt ge").split()
)  # fmt: skip


def _binary_operator(fn: Any, operands: tuple[type, ...] = _OPERANDS, name: str | None = None) -> Any:
    """``fn`` as PyTorch's operators are: an operand they do not take (a list, a tuple, an array,
    a ``Fraction``, a string) and a TypeError of the op give ``NotImplemented``, so Python tries the
    other operand's method and then raises its own TypeError (``t + [1, 2]``), or runs the other
    type's rule: ``[1, 2] * tga.tensor(2)`` repeats the list, as in PyTorch. One of
    :data:`C_OPERATORS` called unbound on what is no tensor raises PyTorch's TypeError."""
    name = name or fn.__name__
    in_c = name in C_OPERATORS

    @functools.wraps(fn)
    def operator(self: Tensor, other: Any, *args: Any, **kwargs: Any) -> Any:
        if in_c and self.__class__ is not Tensor and not isinstance(self, Tensor):
            raise TypeError(f"descriptor '{name}' for 'torch._C.TensorBase' objects doesn't apply to a "
                            f"'{type(self).__name__}' object")  # fmt: skip
        if other.__class__ not in _PLAIN and not isinstance(other, operands) and not hasattr(other, "_tga_arg"):
            # (``_tga_arg``: a compiled step's NumPy argument while traced, symbolic.trace.ArgArray, taken as
            # the program's input it is)
            return NotImplemented
        try:
            return fn(self, other, *args, **kwargs)
        except TypeError as e:
            if isinstance(e, RuntimeError):  # (the project's dtype errors: PyTorch's NotImplementedError, ...)
                raise
            return NotImplemented

    operator.binary_operator_of = fn  # type: ignore[attr-defined]
    return operator


def install_binary_operators(cls: type) -> None:
    """Give every binary operator of ``cls`` the rule of :func:`_binary_operator` (once)."""
    for name in BINARY_OPERATORS:
        fn = getattr(cls, name, None)
        if fn is not None and not hasattr(fn, "binary_operator_of"):
            setattr(cls, name, _binary_operator(fn, _OPERANDS_OF.get(name, _OPERANDS), name))
