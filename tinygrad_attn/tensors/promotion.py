"""Dtype promotion as PyTorch does it, for the operands of an op (beside :mod:`dtypes`, whose
``result_type`` is the one rule): between kinds (bool < int < float < complex) the higher
kind decides; a Python number or a 0-d tensor decides only where its kind is higher.

The helpers tell a tensor from a number by the Tensor class, which ``_tensor.py``
registers here at import (:func:`register`), so this module imports nothing above it.
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from ..engine.bfloat16 import BFLOAT16, kind_of
from ..engine.warn import warn as _user_warn
from . import dtypes as _dtypes
from .dtypes import get_default_dtype

Tensor: Any = None  # the Tensor class (set by register)


def register(cls: type) -> None:
    """Called once by ``_tensor.py`` with the Tensor class."""
    global Tensor
    Tensor = cls


_KIND_RANK = {"b": 0, "u": 1, "i": 1, "f": 2, "c": 3}


# NumPy's floating dtypes: a float op (exp, sqrt, ...) of any other dtype computes in float32
# (by the dtype's class: comparing another namespace's dtype with NumPy's warns)
_FLOATS = frozenset(type(np.dtype(d)) for d in ("float16", "float32", "float64", "complex64", "complex128")) | (
    frozenset() if BFLOAT16 is None else {type(BFLOAT16)}
)


def float_dtype_of(dt: Any) -> np.dtype:
    """The dtype a float op (``exp``, ``asin``, ``torch.special``'s functions) computes ``dt`` in:
    ``dt`` where it is a float or complex dtype; bools and integers in PyTorch's default dtype
    (float32 unless :func:`~.dtypes.set_default_dtype` changed it), as ``torch.tensor(2).exp()``
    (NumPy would compute them in float64)."""
    dt = np.dtype(dt)
    return dt if kind_of(dt) in "fc" else get_default_dtype()


def as_float(t: Tensor) -> Tensor:
    """``t`` for a float op: bools and integers in :func:`float_dtype_of`'s dtype."""
    return t if t.dtype.kind in "fc" else t.astype(get_default_dtype())  # (the library's dtype: bfloat16's is 'f')


_as_float = as_float


def _scalar_dtype(value: Any) -> np.dtype:
    """The dtype PyTorch gives a tensor made of a lone Python number."""
    if isinstance(value, bool):
        return np.dtype(np.bool_)
    return np.dtype(np.int64) if isinstance(value, int) else get_default_dtype()


def _promote_for_scalar(t: Tensor, value: Any) -> Tensor:
    """``t`` in the dtype of ``t op value`` for a Python number ``value``, as PyTorch types
    it: ``t``'s own dtype unless the number is of a higher kind (bool < int < float), then
    the default dtype of that kind (float32, int64). NumPy would make an integer tensor
    with a float float64, and cast a float into a bool array."""
    if isinstance(value, Tensor) or not isinstance(value, (bool, int, float)):
        return t
    dt = _dtypes.result_type(t, value)
    return t if dt == t.dtype else t.astype(dt)


def _kind(t: Tensor) -> str:
    """``t.dtype.kind`` without the conversion to a NumPy dtype on every call (hot path):
    NumPy's and CuPy's arrays carry NumPy dtypes; other namespaces' dtypes are converted."""
    try:
        return t._data.dtype.kind
    except AttributeError:
        return t.dtype.kind


def _promoted(a: Any, b: Any) -> tuple[Any, Any]:
    """The operands of an arithmetic op, cast to the dtype PyTorch gives its result where
    that differs from NumPy's: between kinds (bool < int < float < complex) the operand of
    the higher kind decides, whatever its size or rank (an int32 tensor with a float32 one,
    or with a Python float, is float32; NumPy makes both float64). Within a kind NumPy's
    rule stands."""
    if a.__class__ is Tensor:  # the common cases first, decided without a NumPy dtype
        cb = b.__class__
        if cb is Tensor:
            if a._data.dtype == b._data.dtype:
                return a, b
        elif cb is float:
            if _kind(a) in "fc":
                return a, b
        elif cb is int and _kind(a) != "b":
            return a, (b if 0 <= b <= 127 else _wrapped(a, b))
    elif b.__class__ is Tensor:  # a number on the left: 2.0 * x
        ca = a.__class__
        if ca is float and _kind(b) in "fc":
            return a, b
        if ca is int and _kind(b) != "b":
            return (a if 0 <= a <= 127 else _wrapped(b, a)), b
    # torch.result_type's rules (dtypes.result_type): a 0-d tensor or a number decides
    # only where its category is higher (int32 + tensor(1) stays int32)
    dt = _dtypes.result_type(a, b)
    if isinstance(a, Tensor) and a.dtype != dt:
        a = _cast(a, dt)
    if isinstance(b, Tensor) and b.dtype != dt:
        b = _cast(b, dt)
    return a, b


def _cast(t: Tensor, dt: Any) -> Tensor:
    """An operand cast for promotion; an inference tensor's stays one (PyTorch's op reads the
    inference tensor itself, and refuses to save it for a backward)."""
    return t._operand_cast(dt)


def _wrapped(t: Tensor, value: int) -> int:
    """A Python int beside a tensor, as PyTorch casts it to the tensor's dtype: wrapped around
    where out of an integer dtype's range (``uint8_tensor * 300`` multiplies by 44; NumPy raises).
    Outside ``[-2**63, 2**64)`` PyTorch's parser refuses it whatever the tensor's dtype (its
    ``OverflowError``)."""
    if not -(2**63) <= value < 2**64:
        raise OverflowError(f"int too big to convert: {value} is outside [-2**63, 2**64)")
    return wrapped_int(value, t.dtype) if t.dtype.kind in "iu" else value


def wrapped_int(value: int, dt: Any) -> int:
    """A Python int (in ``[-2**63, 2**64)``) as an integer dtype holds it: modulo ``2**bits`` into
    its range, as C's cast from PyTorch's 64-bit number (``2**63 + 4`` is int64's ``-2**63 + 4``)."""
    lo, hi = _INT_RANGE[np.dtype(dt).char]
    return value if lo <= value <= hi else (value - lo) % (hi - lo + 1) + lo


def _promoted_div(a: Any, b: Any) -> tuple[Any, Any]:
    """As :func:`_promoted`, and true division of integers (or bools) in float32, PyTorch's
    default dtype (NumPy divides them in float64). A Python int divides as the float it is
    (not wrapped into an integer tensor's dtype: the quotient is a float)."""
    if a.__class__ is int:
        a = float(a)
    if b.__class__ is int:
        b = float(b)
    pa, pb = _promoted(a, b)
    t = pa if isinstance(pa, Tensor) else pb
    if t.dtype.kind in "biu":
        # each operand from its own dtype: a 0-d int64 -1 beside a uint8 tensor divides as -1, not as
        # the 255 that uint8 (their promoted dtype) would hold
        f = get_default_dtype()
        return tuple(x.astype(f) if isinstance(x, Tensor) else float(x) for x in (a, b))  # type: ignore[return-value]
    return pa, pb


# the range of each integer dtype, by its one-letter code
_INT_RANGE = {np.dtype(c).char: (int(np.iinfo(c).min), int(np.iinfo(c).max)) for c in np.typecodes["AllInteger"]}


def _number_for(t: Tensor, value: Any) -> Any:
    """A Python bool beside a numeric tensor as the number it stands for (the array API
    combines Python bools with bool arrays only); a Python int beside an integer tensor of its
    dtype as that dtype holds it, as PyTorch casts the number first (``uint8_tensor == -1`` compares
    with 255)."""
    if value.__class__ is bool and t.dtype.kind != "b":
        return int(value) if t.dtype.kind in "iu" else float(value)
    if value.__class__ is int and (r := _INT_RANGE.get(_char(t))) is not None and not r[0] <= value <= r[1]:
        return wrapped_int(value, _char(t))
    return value


def _char(t: Tensor) -> str:
    try:
        return t._data.dtype.char
    except AttributeError:
        return t.dtype.char


def _ordered_operands(a: Tensor, b: Any) -> tuple[Any, Any]:
    """The operands of ``<``, ``<=``, ``>``, ``>=``: promoted as PyTorch does, and bools as
    0/1 (the array API orders numbers only). Two tensors compare in their promoted dtype, as
    PyTorch's (``uint8_tensor >= tensor(-1)`` compares with 255)."""
    if isinstance(b, Tensor):
        dt = _dtypes.result_type(a, b)
        if dt == np.bool_:  # (bools as 0/1)
            dt = np.dtype(np.uint8)
        return (a if a.dtype == dt else a.astype(dt)), (b if b.dtype == dt else b.astype(dt))
    a = _promote_for_scalar(a, b)
    if a.dtype == np.bool_:
        a = a.astype(np.uint8)
    if isinstance(b, Tensor) and b.dtype == np.bool_:
        b = b.astype(np.uint8)
    return a, _number_for(a, b)


def _where_operand(x: Any, like: Tensor) -> Any:
    """Python numbers stay (constants without gradient; a complex one too, which as a tensor would be
    rounded to complex64); anything else becomes a tensor on ``like``'s device, in its own dtype (lists
    as ``Tensor`` makes them)."""
    if isinstance(x, (Tensor, bool, int, float, complex)):
        return x
    if isinstance(x, np.generic):
        return scalar_value(x)
    return Tensor(x, device=like._dev)


def scalar_value(x: np.generic) -> Any:
    """A NumPy scalar as the Python number PyTorch reads it as: its value, a NumPy bool as a float
    (PyTorch's argument parser knows no NumPy bool: ``int_tensor + np.True_`` is float32), and a
    complex one that is no Python complex (``np.complex64``) as the float NumPy makes of it, its
    real part, with NumPy's ``ComplexWarning`` (``int_tensor + np.complex64(1j)`` adds 0.0)."""
    if isinstance(x, np.bool_):
        return float(x)
    if isinstance(x, np.complexfloating) and not isinstance(x, complex):
        _user_warn("Casting complex values to real discards the imaginary part", np.exceptions.ComplexWarning)
        return float(x.real)
    return x.item()


def promoted_operands(*xs: Any) -> list[Any]:
    """Operands of one elementwise op (tensors and Python numbers) in ``torch.result_type``'s
    dtype, its 0-d and number rules included: tensors cast to it, numbers as the number
    they stand for beside it (``where``, tensor-bound ``clamp``, ``fmod``)."""
    dt = _dtypes.result_type(*xs)
    out = [_cast(x, dt) if isinstance(x, Tensor) and x.dtype != dt else x for x in xs]
    like = next(x for x in out if isinstance(x, Tensor))
    return [x if isinstance(x, Tensor) else _number_for(like, x) for x in out]


def mask_dtype(mask: Any) -> np.dtype:
    """The NumPy dtype of a mask given as a tensor, any backend's array, or nested lists
    (of ints it is int64, where ``Tensor(...)`` would make float32 of them)."""
    if isinstance(mask, Tensor) or not hasattr(mask, "dtype"):
        return mask.dtype if isinstance(mask, Tensor) else np.asarray(mask).dtype
    try:
        return np.dtype(mask.dtype)
    except TypeError:  # an array API namespace's own dtype objects
        return Tensor(mask).dtype


def bitwise_operands(a: Any, b: Any, op: str, bools: bool = True) -> tuple[Tensor, Tensor]:
    """The operands of a bitwise op or shift (``&``, ``|``, ``^``, ``<<``, ``>>``) as tensors
    of ``torch.result_type``'s dtype; a float result has no such op, as in PyTorch
    (``int_tensor & 2.5``: "bitwise_and" not implemented for 'Float')."""
    like = a if isinstance(a, Tensor) else b
    dt = _dtypes.result_type(a, b)
    if dt.kind not in ("biu" if bools else "iu"):  # (shifts take no bools)
        raise _dtypes.UnsupportedDtypeError(
            f'"{op}" not implemented for {_dtypes.scalar_type_name(dt)!r} (operands {_dtype_of(a)} and {_dtype_of(b)}); '
            f"it takes integer{' or bool' if bools else ''} tensors"
        )
    a = a.astype(dt) if isinstance(a, Tensor) else Tensor.full((), _held_as(a, dt), dtype=dt, device=like._dev)
    b = b.astype(dt) if isinstance(b, Tensor) else Tensor.full((), _held_as(b, dt), dtype=dt, device=like._dev)
    return a, b


def _held_as(v: Any, dt: np.dtype) -> Any:
    """A Python int as an integer dtype holds it, as PyTorch wraps a number for ``+`` or ``|``
    (``uint8_tensor | 300`` is ``| 44``)."""
    if v.__class__ is int and dt.kind in "iu":
        return wrapped_int(v, dt)
    return v


def _dtype_of(x: Any) -> str:
    return str(x.dtype) if isinstance(x, Tensor) else type(x).__name__


# -- PyTorch's positional ``alpha`` of ``add``/``sub`` and their in-place twins -------------------
# Besides ``add(other, *, alpha=1)`` PyTorch's parser takes ``add(Number other, Number alpha)``
# (``x.add(2, 3)`` is ``x + 6``) and the deprecated ``add(Number alpha, Tensor other)``
# (``x.add(2, y)`` is ``x + 2 * y``, with a warning); ``subtract`` has the first and not the
# second. A 0-d tensor counts as a number there, as in PyTorch's parser.


def _is_number(v: Any) -> bool:
    if isinstance(v, (numbers.Number, np.number, np.bool_)):
        return True
    return getattr(v, "_data", None) is not None and getattr(v, "ndim", None) == 0


def _as_number(v: Any) -> Any:
    return v.item() if hasattr(v, "item") and getattr(v, "_data", None) is not None else v


def other_and_alpha(op: str, other: Any, more: tuple, alpha: Any, *, deprecated: bool) -> tuple[Any, Any]:
    """``(other, alpha)`` of a call whose positional arguments after ``self`` were ``other, *more``.

    >>> other_and_alpha("add", 2, (3,), 1, deprecated=True)
    (2, 3)
    """
    if not more:
        return other, alpha
    if len(more) > 1:
        raise TypeError(f"{op}() takes from 1 to 2 positional arguments but {1 + len(more)} were given")
    second = more[0]
    kinds = f"({type(other).__name__}, {type(second).__name__})"
    if alpha != 1:
        raise TypeError(f"{op}() got alpha both by position and by keyword: {kinds} and alpha={alpha!r}")
    if deprecated and _is_number(other) and getattr(second, "_data", None) is not None:  # (Number alpha, Tensor)
        _user_warn(f"This overload of {op} is deprecated:\n\t{op}(Number alpha, Tensor other)\nConsider using one "
                      f"of the following signatures instead:\n\t{op}(Tensor other, *, Number alpha = 1)",
                      UserWarning)  # fmt: skip
        return second, _as_number(other)
    if _is_number(other) and _is_number(second):  # add(Number other, Number alpha)
        return other, _as_number(second)
    raise TypeError(f"{op}() received an invalid combination of arguments - got {kinds}, but expected one of: "
                    f"(Tensor other, *, Number alpha = 1) or (Number other, Number alpha = 1)")  # fmt: skip


# -- PyTorch's deprecated ``addcmul(Number value, Tensor tensor1, Tensor tensor2)`` ----------------
# ``addcmul`` and ``addcdiv`` (and their in-place twins) take ``value`` first by position too, with
# PyTorch's deprecation warning: ``x.addcmul(2, a, b)`` is ``x.addcmul(a, b, value=2)``.


def value_first(op: str, tensor1: Any, tensor2: Any, more: tuple, value: Any) -> tuple[Any, Any, Any]:
    """``(tensor1, tensor2, value)`` of a call whose positional arguments after ``input`` were
    ``tensor1, tensor2, *more``; PyTorch's ``TypeError`` for any other form.

    >>> value_first("addcmul", 1, 2, (), 3)
    (1, 2, 3)
    """
    if not more:
        if getattr(tensor1, "_data", None) is None:
            raise TypeError(f"{op}(): argument 'tensor1' (position 1) must be Tensor, not {type(tensor1).__name__}")
        return tensor1, tensor2, value
    tensors = (tensor2, *more)
    if (
        len(more) > 1
        or value != 1
        or not _is_number(tensor1)
        or any(getattr(t, "_data", None) is None for t in tensors)
    ):
        kinds = ", ".join(type(v).__name__ for v in (tensor1, *tensors))
        raise TypeError(f"{op}() received an invalid combination of arguments - got ({kinds}), but expected "
                        f"(Tensor tensor1, Tensor tensor2, *, Number value = 1)")  # fmt: skip
    _user_warn(f"This overload of {op} is deprecated:\n\t{op}(Number value, Tensor tensor1, Tensor tensor2)\n"
               f"Consider using one of the following signatures instead:\n\t{op}(Tensor tensor1, Tensor tensor2, *, "
               "Number value = 1)", UserWarning)  # fmt: skip
    return tensor2, more[0], _as_number(tensor1)


# -- PyTorch's deprecated ``addmm(Number beta, ...)`` and its siblings ----------------------------
# ``addmm addmv addr addbmm baddbmm`` (and their in-place twins) take ``beta`` and ``alpha`` first by
# position too, with PyTorch's deprecation warning: the method as ``x.addmm(beta, [alpha,] mat1, mat2)``,
# the free function as ``torch.addmm(beta, x, [alpha,] mat1, mat2)`` (``torch.addmm(x, beta, mat1, mat2)``
# is PyTorch's ``TypeError``: :func:`~tinygrad_attn.engine.arguments.free_function` refuses it, as it
# knows the free function from the method by the varargs' name, ``scalars_first``).


def beta_first(op: str, names: tuple[str, str], args: tuple, beta: Any, alpha: Any) -> tuple[Any, Any, Any, Any, Any]:
    """``(input, first, second, beta, alpha)`` of a call whose positional arguments were ``args``
    (``input`` first, or ``beta`` first in the deprecated forms); PyTorch's ``TypeError`` for any
    other form (``x.addmm(0.5, a, b)`` is ``x.addmm(a, b, beta=0.5)``).
    """
    is_tensor = [getattr(a, "_data", None) is not None for a in args]
    if len(args) <= 3:
        for i in (1, 2):
            if not is_tensor[i]:
                raise TypeError(f"{op}(): argument '{names[i - 1]}' (position {i}) must be Tensor, not "
                                f"{type(args[i]).__name__}")  # fmt: skip
        return (*args, beta, alpha)
    if len(args) <= 5 and _is_number(args[0]) and is_tensor[1]:  # (beta, input, [alpha,] first, second)
        x, scalars, rest = args[1], (args[0], *args[2:-2]), args[-2:]
        form = f"Number beta, Tensor input, {'Number alpha, ' if len(args) == 5 else ''}"
    elif len(args) <= 5 and is_tensor[0] and _is_number(args[1]):  # (self.)(beta, [alpha,] first, second)
        x, scalars, rest = args[0], args[1:-2], args[-2:]
        form = f"Number beta, {'Number alpha, ' if len(args) == 5 else ''}"
    else:
        scalars, rest = (), ()
    if (
        not rest
        or beta != 1
        or alpha != 1
        or not all(_is_number(s) for s in scalars)
        or not all(getattr(t, "_data", None) is not None for t in rest)
    ):
        kinds = ", ".join(type(v).__name__ for v in args)
        raise TypeError(f"{op}() received an invalid combination of arguments - got ({kinds}), but expected "
                        f"(Tensor {names[0]}, Tensor {names[1]}, *, Number beta = 1, Number alpha = 1)")  # fmt: skip
    _user_warn(f"This overload of {op} is deprecated:\n\t{op}({form}Tensor {names[0]}, Tensor {names[1]})\nConsider "
               f"using one of the following signatures instead:\n\t{op}(Tensor {names[0]}, Tensor {names[1]}, *, "
               "Number beta = 1, Number alpha = 1)", UserWarning)  # fmt: skip
    beta, alpha = (_as_number(s) for s in (*scalars, 1)[:2])
    return x, rest[0], rest[1], beta, alpha
