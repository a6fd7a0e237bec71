"""Python data read as PyTorch's ``torch.tensor(data)`` reads it: nested sequences of numbers
(lists, tuples, ranges, ``array.array``, ``bytearray``, ``memoryview``, deques, ``torch.Size``, a
user's class with ``len`` and indexing) that may hold NumPy scalars and one-element tensors.

PyTorch reads in three steps, and so refuses in their order: it infers the dtype (when none is
given) over every entry, reads the shape down the first entries, and stores each entry in order,
converting it to the dtype. The first entry it cannot take names the error, whose class follows
the conversion (``'set' object cannot be interpreted as an integer`` into an integer dtype,
``must be real number, not NoneType`` into a floating one, ``value cannot be converted to type
int8 without overflow`` for 300). Reading with NumPy is the fast path; the store is walked in
Python only where NumPy's array could differ from PyTorch's (ragged data, odd entries, values
out of the dtype's range, typed entries into an integer dtype).

>>> read_python_data([[1, 2], [3, 4]], None).dtype
dtype('int64')
"""

from __future__ import annotations

import builtins
from collections.abc import Mapping
from typing import Any

import numpy as np

from ...engine.quiet import quiet
from ...runtime.backend import device_of_array
from .._tensor import Tensor
from ..dtypes import _HELD, default_complex_dtype, get_default_dtype, promote_types
from ..dtypes import dtype as _TorchDtype

_NUMBERS = (bool, int, float, complex)


def torch_dtype_of(arr: np.ndarray) -> np.dtype:
    """PyTorch's inference for data given as Python numbers: int64, the default float, its complex or bool."""
    kind = arr.dtype.kind
    if kind == "f":
        return get_default_dtype()
    if kind in "iu":
        return np.dtype(np.int64)
    if kind == "c":  # the complex of the default float: complex128 under float64, as PyTorch's
        return np.dtype(default_complex_dtype())
    return arr.dtype


def is_sequence(data: Any) -> bool:
    """Whether PyTorch reads ``data`` item by item as a sequence: it has ``len`` and indexing and
    is no string, mapping, array or tensor."""
    if isinstance(data, (list, tuple)):
        return True
    if isinstance(data, (str, bytes, np.ndarray, np.generic, Tensor, Mapping)) or is_array(data):
        return False
    return hasattr(type(data), "__len__") and hasattr(type(data), "__getitem__")


def is_array(data: Any) -> bool:
    """An array of a backend (CuPy's) or an object with ``__dlpack__``: read as an array, not item by item."""
    if hasattr(data, "__dlpack__"):
        return True
    try:
        device_of_array(data)
    except TypeError:
        return False
    return True


def items(data: Any) -> list:
    if isinstance(data, (list, tuple)):
        return list(data)
    if isinstance(data, memoryview):
        return data.tolist()
    return [data[i] for i in builtins.range(len(data))]


class _Read:
    """One walk over the data: ``host`` nested lists with each one-element tensor as a 0-d array
    of its value, ``dtype`` PyTorch's inference (each entry's dtype, a Python float's default
    float, an empty sequence's too, promoted as PyTorch promotes), ``odd`` whether an entry is no
    number (None, a string, a set...)."""

    def __init__(self, data: Any) -> None:
        self.typed, self.odd, self.larger, self.numpy_bools = False, False, None, False
        self.kinds: set = set()
        self.host = self._read(data)
        self.dtype: np.dtype | None = None
        for k in self.kinds:
            dt = k if isinstance(k, (np.dtype, _TorchDtype)) else torch_dtype_of(np.asarray(k()))
            self.dtype = dt if self.dtype is None else promote_types(self.dtype, dt)

    def _read(self, item: Any) -> Any:
        if item.__class__ in _NUMBERS:
            self.kinds.add(item.__class__)
            return item
        if is_sequence(item):
            entries = items(item)
            if not entries:  # (an empty sequence infers the default float, promoted with the rest)
                self.kinds.add(float)
            return [self._read(d) for d in entries]
        if isinstance(item, np.matrix):  # (its entries are matrices again: PyTorch's reader never reaches a number)
            raise ValueError("too many dimensions 'matrix' (tensor: a np.matrix among the data; np.asarray(m) reads)")
        if isinstance(item, np.ndarray) and item.ndim and item.dtype.kind in "US":  # (strings, read as PyTorch's)
            return self._read(list(item))
        if item.__class__ is np.ndarray and item.ndim and item.dtype.newbyteorder("=") in _HELD:
            # (an array among the data: its entries, each a NumPy scalar of its dtype, as PyTorch reads it)
            self.typed = True
            self.kinds.add(np.dtype(item.dtype).newbyteorder("="))
            return [self._read(v) for v in item]
        if isinstance(item, (np.generic, np.ndarray, Tensor)):
            self.typed, dt = True, np.dtype(item.dtype)
            self.kinds.add(dt)
            self.numpy_bools |= isinstance(item, np.bool_)
            if isinstance(item, Tensor):
                if item.numel() != 1:
                    self.larger = self.larger or item.shape
                    return np.zeros((), dt)
                return _TensorValue(item.detach().numpy().reshape(()))
            return item
        if isinstance(item, _NUMBERS):  # (a subclass of a number: its value)
            self.kinds.add(next(t for t in (bool, int, float, complex) if isinstance(item, t)))
            return item
        self.odd = True
        return item


class _TensorValue(np.ndarray):
    """The value of a one-element tensor of the data (a 0-d array): PyTorch converts it as a tensor
    (``only integer tensors of a single element can be converted to an index``), not as a number."""

    def __new__(cls, value: np.ndarray) -> _TensorValue:
        return value.view(cls)


def _shape(host: Any) -> list[int]:
    """The shape PyTorch reads down the first entries (a string there: its ValueError)."""
    shape, first = [], host
    while isinstance(first, list):
        shape.append(len(first))
        first = first[0] if first else None
    if isinstance(first, str):
        raise ValueError(f"too many dimensions 'str' (tensor: the data holds the string {first!r})")
    return shape


def _infer_refusal(host: Any) -> None:
    """PyTorch's error while inferring the dtype: the first entry that is no number."""
    stack = [host]
    while stack:
        v = stack.pop()
        if isinstance(v, list):
            stack.extend(reversed(v))
        elif not isinstance(v, (*_NUMBERS, np.generic, np.ndarray)):
            if isinstance(v, (str, bytes)):
                raise TypeError(f"new(): invalid data type '{type(v).__name__}' (tensor: an entry of the data is "
                                f"{v!r})")  # fmt: skip
            raise RuntimeError(f"Could not infer dtype of {type(v).__name__} (tensor: an entry of the data is not a "
                               "number)")  # fmt: skip


def _store(host: Any, shape: list[int], dt: np.dtype) -> np.ndarray | None:
    """PyTorch's store of every entry into ``dt``, in order: the first refusal raises. Returns the
    array where NumPy cannot make it (an empty first list, below which PyTorch compares nothing)."""
    if 0 in shape:
        return np.zeros(shape, dt)
    info = np.iinfo(dt) if dt.kind in "iu" else None

    def put(item: Any, dim: int) -> None:
        if dim == len(shape):
            _convert(item, dt, info)
            return
        if not isinstance(item, list):
            raise TypeError(f"not a sequence (tensor: a number at depth {dim}, where the first entries are lists; "
                            f"the shape read from them is {tuple(shape)})")  # fmt: skip
        if len(item) != shape[dim]:
            raise ValueError(f"expected sequence of length {shape[dim]} at dim {dim} (got {len(item)})")
        for x in item:
            put(x, dim + 1)

    put(host, 0)
    return None


def _convert(v: Any, dt: np.dtype, info: Any) -> None:
    """PyTorch's conversion of one entry into ``dt`` (as its C++ reads a Python object), or its
    error. NumPy's float64 and complex128 are Python numbers (subclasses); its other scalars are
    read through ``__index__`` into an integer or bool dtype."""
    name = (
        "numpy.bool" if isinstance(v, np.bool_) else f"numpy.{type(v).__name__}" if isinstance(v, np.generic) else None
    )
    name = name or type(v).__name__
    if isinstance(v, list):
        raise TypeError(f"must be real number, not list (tensor: the data is not rectangular at {v!r})")
    if dt.kind in "iub":
        if isinstance(v, _TensorValue):
            if v.dtype.kind not in "iub":
                raise TypeError("only integer tensors of a single element can be converted to an index (tensor: an "
                                f"entry of the data is a {v.dtype} tensor, the dtype is {dt.name})")  # fmt: skip
            v = v.item()
        elif isinstance(v, (np.integer, np.bool_)):
            v = v.item()
        if isinstance(v, bool) or (dt.kind == "b" and isinstance(v, (int, float, complex))):
            return
        if isinstance(v, float):
            if not info.min <= v <= info.max:  # (NaN: never)
                raise RuntimeError(f"value cannot be converted to type {dt.name} without overflow: {v!r} (tensor)")
            return
        if isinstance(v, int):
            low = -int(info.max) if dt.kind == "u" else int(info.min)  # (an unsigned dtype wraps from -max)
            if not low <= v <= info.max:
                raise RuntimeError(f"value cannot be converted to type {dt.name} without overflow: {v!r} (tensor)")
            return
        raise TypeError(f"'{name}' object cannot be interpreted as an integer (tensor: into {dt.name})")
    if isinstance(v, _TensorValue):
        if v.dtype.kind == "c" and dt.kind != "c" and v.item().imag != 0:
            raise RuntimeError("value cannot be converted to type double without overflow (tensor: a complex entry "
                               f"{v.item()!r} into {dt.name})")  # fmt: skip
        return
    if isinstance(v, (np.generic, bool, int, float)) or (isinstance(v, complex) and dt.kind == "c"):
        return
    raise TypeError(f"must be real number, not {name} (tensor: into {dt.name})")


def _needs_store(read: _Read, arr: np.ndarray | None, dt: np.dtype) -> bool:
    """Whether NumPy's reading of the data could differ from PyTorch's store into ``dt``."""
    if arr is None or arr.dtype == object or read.odd:
        return True
    if arr.dtype.kind == "c" and dt.kind not in "cb":
        return True
    if dt.kind in "iub" and read.typed:
        return True
    if dt.kind not in "iu" or arr.dtype.kind not in "fiu" or not arr.size:
        return False
    info = np.iinfo(dt)
    low = info.min if arr.dtype.kind == "f" else (-int(info.max) if dt.kind == "u" else int(info.min))
    with quiet():
        return not ((arr >= low) & (arr <= info.max)).all()  # (NaN: outside)


def read_python_data(data: Any, dtype: Any, name: str = "tensor") -> np.ndarray:
    """``data`` (Python numbers in nested sequences) as a NumPy array of ``dtype`` (None: PyTorch's
    inference), with PyTorch's errors in PyTorch's order: the shape, the dtype, each entry."""
    read = _Read(data)
    shape = _shape(read.host)
    if dtype is None and read.odd:
        _infer_refusal(read.host)
    try:
        with quiet():
            arr = None if read.odd else np.asarray(read.host)
    except ValueError:  # (ragged)
        arr = None
    if arr is not None and (
        (arr.dtype == np.uint64 and (dtype is None or np.dtype(dtype).kind != "u"))
        or (arr.dtype == object and any(isinstance(v, int) and abs(v) >= 2**63 for v in arr.ravel()))
    ):
        raise ValueError(f"{name}: Overflow when unpacking long long (a Python int outside int64's range)")
    if dtype is None:
        dtype = read.dtype if read.dtype is not None else get_default_dtype()
    dt = np.dtype(dtype)
    integral = dt.kind in "iu"
    if read.larger is not None:
        cls = TypeError if integral or dt.kind == "b" else ValueError
        raise cls(f"{name}: only one element tensors can be converted to Python scalars (an entry of the data "
                  f"has shape {read.larger}); use torch.stack to join tensors")  # fmt: skip
    if read.numpy_bools and integral:
        raise TypeError(f"{name}: 'numpy.bool' object cannot be interpreted as an integer (the data mixes NumPy "
                        f"bools with integers: convert them with int())")  # fmt: skip
    if _needs_store(read, arr, dt):
        made = _store(read.host, shape, dt)
        if made is not None:
            return made
        if arr is None or arr.dtype == object:  # pragma: no cover - _store refuses every such data
            raise TypeError(f"{name}: the nested lists must be rectangular and hold numbers only")
    with quiet():  # (1e308 in float32 is inf, as PyTorch's, without NumPy's warning)
        return arr.astype(dt)


def refuse_data(data: Any, dtype: Any) -> None:
    """PyTorch's error for data that is neither a number, a sequence nor an array (a set, a dict,
    an iterator): a RuntimeError while inferring a dtype, else the conversion's TypeError."""
    if dtype is None:
        raise RuntimeError(f"Could not infer dtype of {type(data).__name__} (tensor: the data must be a number, a "
                           "sequence of numbers or an array)")  # fmt: skip
    dt = np.dtype(dtype)
    _convert(data, dt, np.iinfo(dt) if dt.kind in "iu" else None)
    raise TypeError(f"tensor: cannot read a {type(data).__name__} as data")  # pragma: no cover
