"""Tensor factories with PyTorch's names and signatures: ``tga.tensor``, ``tga.zeros``, ...

Shapes are given either way (``zeros(2, 3)`` or ``zeros((2, 3))``); every factory takes
``dtype=``, ``device=`` and ``requires_grad=``. Dtypes are inferred as PyTorch infers
them (Python ints become int64, floats float32, bools bool), unlike the ``Tensor``
constructor, which makes every Python number float32 (NumPy users' default).
Random draws come from ``generator=`` or the default generator (``tga.manual_seed``), with
PyTorch's numbers for the same seed (:mod:`tinygrad_attn.random`).
"""

from __future__ import annotations

import builtins
import math
import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from ...engine.arguments import index_value, ints, missing, refuse
from ...engine.bfloat16 import kind_of
from ...engine.declare import check_dtype, public
from ...engine.function import Function, InvalidArgumentError
from ...engine.layout import contiguous_format, preserve_format, relaid, strides_for
from ...engine.switches import _State, tracing
from ...engine.versions import share_with_numpy
from ...engine.warn import warn as _user_warn
from ...random import generator_for
from ...random import transforms as random_transforms
from ...runtime.backend import default_device, get_device
from ...runtime.meta_stand_ins import refuse_without_kernel, stand_in
from .._tensor import Size, Tensor, _shape_args, class_as_data_error, is_tensor_class
from ..dtypes import (
    UnsupportedDtypeError,
    fill_value_in,
    get_default_dtype,
    scalar_type_name,
    set_default_dtype,
    unheld_array_error,
)
from .python_data import is_array, is_sequence, read_python_data, refuse_data, torch_dtype_of
from .tensor_creation import drawn, on_meta

__all__ = ["FloatTensor", "DoubleTensor", "HalfTensor", "LongTensor", "IntTensor", "ShortTensor", "CharTensor",
            "ByteTensor", "BoolTensor", "set_default_tensor_type", "typename"]  # typed constructors  # fmt: skip


@public
def tensor(data: Any, *, dtype: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    """A new tensor holding a copy of ``data``, with the dtype PyTorch would infer.

    >>> tensor([1, 2]).dtype, tensor([1.0, 2]).dtype, tensor(True).dtype
    (dtype('int64'), dtype('float32'), dtype('bool'))
    """
    if isinstance(data, Tensor):  # a copy cut from the graph, as torch.tensor(t) is, with its warning
        _user_warn(
            "To copy construct from a tensor, it is recommended to use sourceTensor.detach().clone() or "
            "sourceTensor.detach().clone().requires_grad_(True), rather than torch.tensor(sourceTensor).",
            UserWarning,
        )
        if tracing() and device is None:  # (traced: a copy made by an op at each replay)
            out = data.detach().clone()
            out = out if dtype is None else out.astype(dtype)
            return out.requires_grad_(requires_grad) if requires_grad else out
        out = _copy_of_tensor(data, dtype, device, requires_grad)
        return out if out._dev is not data._dev else relaid(out, strides_for(data.shape, data.stride(), None))
    if data is None:  # (PyTorch's reading: data of no dtype; an operand None stays the operators' TypeError)
        raise RuntimeError("Could not infer dtype of NoneType (tensor: None is no data)")
    if is_tensor_class(data):  # (PyTorch reads such a class's __cuda_array_interface__, a property: its TypeError)
        raise TypeError(f"tensor(): {data.__name__} is a tensor class, not data; pass a tensor, a list or an array")
    if isinstance(data, np.generic):  # a NumPy scalar keeps its dtype (np.float64 subclasses float)
        return Tensor(np.asarray(data), dtype=dtype, device=device, requires_grad=requires_grad)
    if isinstance(data, (bool, int, float, complex)) or is_sequence(data):
        arr = read_python_data(data, dtype)
        return Tensor(arr, device=device, requires_grad=requires_grad)
    if not isinstance(data, (np.ndarray, str, bytes)) and not is_array(data):
        refuse_data(data, dtype)
    if (
        isinstance(data, np.ndarray) and (refusal := _unshareable(data, "tensor")) is not None
    ):  # (PyTorch reads it so too)
        raise refusal
    return Tensor(data, dtype=dtype, device=device, requires_grad=requires_grad)


@public
def as_tensor(data: Any, *, dtype: Any = None, device: Any = None) -> Tensor:
    """``data`` itself when it is already a tensor of that dtype and device; a NumPy array of
    that dtype bound for the CPU shares its memory (:func:`from_numpy`), as PyTorch's; else
    :func:`tensor`, a copy."""
    if (
        isinstance(data, Tensor)
        and (dtype is None or data.dtype == np.dtype(dtype))
        and (device is None or Tensor.zeros(0, device=device).device == data.device)
    ):
        return data
    if (
        isinstance(data, np.ndarray)
        and (dtype is None or np.dtype(dtype) == data.dtype)
        and (get_device(device) if device is not None else default_device()).name == "cpu"
        and _unshareable(data) is None
    ):
        return from_numpy(data)
    if isinstance(data, Tensor):  # (another dtype or device: a copy, without tensor()'s warning, as PyTorch's)
        return _copy_of_tensor(data, dtype, device, False)
    return tensor(data, dtype=dtype, device=device)


@public
def asarray(obj: Any, *, dtype: Any = None, device: Any = None, copy: bool | None = None,
            requires_grad: bool | None = None) -> Tensor:  # fmt: skip
    """PyTorch's ``torch.asarray``: ``obj`` as a tensor, sharing its memory where it can (a tensor
    of that dtype and device is returned itself; a NumPy array bound for the CPU is shared, as
    :func:`from_numpy`). ``copy=True`` always copies (a tensor's copy stays in its graph);
    ``copy=False`` refuses with PyTorch's ``ValueError`` where a copy would be needed.
    ``requires_grad`` defaults to ``obj``'s (False for anything but a tensor)."""
    if isinstance(obj, np.ndarray) and (refusal := _unshareable(obj, "asarray")) is not None:
        raise refusal
    if isinstance(obj, np.generic) and copy is False:
        raise RuntimeError("can't alias NumPy scalars. Either remove copy=False or transform it in a ndarray. "
                           f"(asarray: a numpy.{type(obj).__name__})")  # fmt: skip
    if (
        isinstance(obj, np.ndarray)
        and obj.ndim == 0
        and copy is not True
        and (dtype is None or np.dtype(dtype) == obj.dtype)
    ):
        obj = obj.copy()  # (a 0-d array is read as NumPy's scalar it holds, as PyTorch's: copied, even for copy=False)
    if copy is True:
        if isinstance(obj, Tensor):
            out = obj.clone() if dtype is None or np.dtype(dtype) == obj.dtype else obj.to(np.dtype(dtype))
            out = out if device is None else out.to(device)
        else:
            out = tensor(obj.copy() if isinstance(obj, np.ndarray) else obj, dtype=dtype, device=device)
    else:
        out = as_tensor(obj, dtype=dtype, device=device)
        shared = out is obj or (isinstance(obj, np.ndarray) and (out._data is obj or np.shares_memory(out._data, obj)))
        if copy is False and not shared:
            if isinstance(obj, (Tensor, np.ndarray)):
                from ..dtypes import scalar_type_name  # noqa: PLC0415

                raise ValueError(f"can't alias tensor with dtype '{scalar_type_name(obj.dtype)}' into dtype "
                                 f"'{scalar_type_name(out.dtype)}' (or onto device {out.device}).")  # fmt: skip
            raise ValueError("can't alias arbitrary sequence into a tensor.")
    want = requires_grad if requires_grad is not None else isinstance(obj, Tensor) and obj.requires_grad
    if want and not out.requires_grad:
        out.requires_grad_(True)
    elif not want and out.requires_grad and out is not obj:
        out = out.detach()
    return out


@public
def empty_strided(size: Sequence[int], stride: Sequence[int], *, dtype: Any = None, layout: Any = None, device: Any = None,
                  requires_grad: bool = False, pin_memory: bool = False) -> Tensor:  # fmt: skip
    """PyTorch's ``torch.empty_strided``: a tensor of ``size`` whose elements lie ``stride`` apart
    in memory of its own (``x.stride()`` reads them back on the CPU; another device gets the
    values in C order). Its values are zeros here (PyTorch's are whatever the memory held)."""
    size, stride = tuple(int(n) for n in size), tuple(int(s) for s in stride)
    if len(size) != len(stride):
        raise RuntimeError(f"dimensionality of sizes ({len(size)}) must match dimensionality of strides "
                           f"({len(stride)})")  # fmt: skip
    if any(n < 0 for n in size) or any(s < 0 for s in stride):
        raise RuntimeError(f"empty_strided: sizes and strides must be non-negative, got {size} and {stride}")
    dt = np.dtype(dtype) if dtype is not None else get_default_dtype()
    extent = 0 if 0 in size else 1 + sum((n - 1) * s for n, s in zip(size, stride))
    if on_meta(device):  # (the strides, and no memory)
        dev = get_device(device) if device is not None else default_device()
        return Tensor._wrap(dev.empty(size, dt, stride), dev).requires_grad_(requires_grad)
    memory = np.zeros(extent, dt)
    arr = np.lib.stride_tricks.as_strided(memory, size, tuple(s * dt.itemsize for s in stride))
    on_cpu = (get_device(device) if device is not None else default_device()).name == "cpu"
    out = from_numpy(arr) if on_cpu else Tensor(np.ascontiguousarray(arr), device=device)
    return out.requires_grad_(True) if requires_grad else out


@public
def empty_permuted(size: Sequence[int], physical_layout: Sequence[int], *, dtype: Any = None, layout: Any = None,
                   device: Any = None, requires_grad: bool = False, pin_memory: bool = False) -> Tensor:  # fmt: skip
    """PyTorch's ``torch.empty_permuted``: a tensor of ``size`` whose dims lie in memory in the order
    ``physical_layout`` (outermost first), so ``empty_permuted((N, C, H, W), (0, 2, 3, 1))`` is channels-last."""
    size, order = tuple(int(n) for n in size), tuple(int(d) for d in physical_layout)
    if len(size) != len(order):
        raise RuntimeError(
            "Number of dimensions in size does not match the length of the physical_layout; i.e. "
            f"len(size) = {len(size)} is not equal to len(physical_layout) = {len(order)}"
        )
    if sorted(order) != [*builtins.range(len(size))]:
        raise RuntimeError(
            f"Duplicate dim not allowed (empty_permuted: physical_layout {list(order)} of {len(size)} dims)"
        )
    stride, step = [0] * len(size), 1
    for d in reversed(order):  # (the last dim of the layout is the innermost)
        stride[d], step = step, step * max(size[d], 1)
    return empty_strided(size, stride, dtype=dtype, layout=layout, device=device, requires_grad=requires_grad,
                         pin_memory=pin_memory)  # fmt: skip


@public
def frombuffer(buffer: Any, *, dtype: Any, count: int = -1, offset: int = 0, requires_grad: bool = False) -> Tensor:
    """PyTorch's ``torch.frombuffer``: a 1-D tensor over the bytes of an object of Python's
    buffer protocol (``bytearray``, ``memoryview``, ``array.array``), ``count`` elements of
    ``dtype`` (all by default) from byte ``offset``, sharing its memory. A read-only buffer
    (``bytes``) is copied instead, with a warning (PyTorch shares it all the same)."""
    dt = np.dtype(dtype)
    size = memoryview(buffer).nbytes
    if size == 0 or count == 0:
        raise ValueError(f"both buffer length ({size}) and count ({count}) must not be 0")
    if not 0 <= offset < size:
        raise ValueError(f"offset ({offset} bytes) must be non-negative and no greater than buffer length ({size} "
                         "bytes) minus 1")  # fmt: skip
    if count < 0 and (size - offset) % dt.itemsize:
        raise ValueError(f"buffer length ({size - offset} bytes) after offset ({offset} bytes) must be a multiple of "
                         f"element size ({dt.itemsize})")  # fmt: skip
    if count > 0 and size - offset < count * dt.itemsize:
        raise ValueError(f"requested buffer length ({count} * {dt.itemsize} bytes) after offset ({offset} bytes) "
                         f"must not be greater than actual buffer length ({size} bytes)")  # fmt: skip
    arr = np.frombuffer(buffer, dtype=dt, count=count, offset=offset)
    if not arr.flags.writeable:
        _user_warn("frombuffer: the given buffer is not writable; the tensor holds a copy of its bytes",
                      UserWarning)  # fmt: skip
        arr = arr.copy()
    out = from_numpy(arr)
    return out.requires_grad_(True) if requires_grad else out


def _copy_of_tensor(data: Tensor, dtype: Any, device: Any, requires_grad: bool) -> Tensor:
    return Tensor(data.detach(), dtype=dtype, device=device, requires_grad=requires_grad)


@public
def from_numpy(arr: np.ndarray) -> Tensor:
    """A CPU tensor sharing ``arr``'s memory, as PyTorch's: a change of either shows in the
    other (``tga.tensor(arr)`` copies).

    >>> a = np.zeros(2); t = from_numpy(a); t += 1; a
    array([1., 1.])
    """
    if not isinstance(arr, np.ndarray):
        raise TypeError(f"from_numpy: expected np.ndarray (got {type(arr).__name__})")
    refusal = _unshareable(arr)
    if refusal is not None:
        raise refusal
    if not arr.flags.writeable:
        _warn_not_writable()
    if isinstance(arr, (np.matrix, np.ma.MaskedArray)):  # (their memory as a plain array, as PyTorch's)
        arr = arr.view(np.ndarray)
    t = Tensor._wrap(arr, get_device("cpu"))
    share_with_numpy(arr)
    if _State.hook is not None:  # made inside a traced function, as the constructor's tensors
        _State.hook.made(t)
    return t


_NOT_WRITABLE = [False]  # (whether the warning below was given: once, as PyTorch's)


def _warn_not_writable() -> None:
    """PyTorch's warning for a tensor sharing memory NumPy holds read-only (given once a program)."""
    if not _NOT_WRITABLE[0]:
        _NOT_WRITABLE[0] = True
        _user_warn(
            "The given NumPy array is not writable, and PyTorch does not support non-writable tensors. This means "
            "writing to this tensor will result in undefined behavior. You may want to copy the array to protect its "
            "data or make it writable before converting it to a tensor. This type of warning will be suppressed for "
            "the rest of this program.",
            UserWarning,
        )


def _negative_strides(arr: np.ndarray, op: str) -> ValueError | None:
    if any(s < 0 for s in arr.strides):
        return ValueError(
            f"{op}: At least one stride in the given numpy array is negative, and tensors with negative strides are not "
            f"currently supported (an array of shape {arr.shape}, strides {arr.strides}). (You can probably work "
            "around this by making a copy of your array  with array.copy().) "
        )
    return None


def _unshareable(arr: np.ndarray, op: str = "from_numpy") -> Exception | None:
    """Why a tensor cannot share ``arr``'s memory (PyTorch's refusals), or None where it can: a
    dtype no tensor holds, a foreign byte order, or a negative stride (a reversed array). PyTorch
    reads an array so wherever it is data (``tensor``, ``as_tensor``, ``asarray``), copied or not."""
    if (refusal := unheld_array_error(arr.dtype, op)) is not None:
        return refusal
    if not arr.dtype.isnative:
        return ValueError(
            f"{op}: given numpy array has byte order different from the native byte order. Conversion between byte orders "
            "is currently not supported: convert it first, arr.astype(arr.dtype.newbyteorder('='))"
        )
    return _negative_strides(arr, op)


@public
def is_tensor(obj: Any) -> bool:
    """Whether ``obj`` is a :class:`Tensor`."""
    return isinstance(obj, Tensor)


@public
def is_storage(obj: Any) -> bool:
    """Whether ``obj`` is a storage object (``t.untyped_storage()``, ``t.storage()``)."""
    from ..storage import TypedStorage, UntypedStorage  # noqa: PLC0415 - (storage builds on the tensor)

    return isinstance(obj, (TypedStorage, UntypedStorage))


def sizes_given(shape: tuple, size: Any, op: str) -> tuple:
    """A factory's sizes, given by position (``zeros(2, 3)``, ``zeros((2, 3))``) or by PyTorch's keyword
    ``size=`` (``zeros(size=(2, 3))``), as the positional form reads them."""
    if size is None:
        if not shape:  # (no size at all: PyTorch's TypeError, where none is no 0-d size)
            raise missing(op, "size")
        return shape
    if shape:
        raise TypeError(f"{op}() received an invalid combination of arguments: the size given by position {shape} "
                        f"and by keyword size={size!r}")  # fmt: skip
    if not isinstance(size, (tuple, list)):  # (by keyword, PyTorch's size is a sequence: not one int)
        raise TypeError(f"{op}(): argument 'size' must be tuple of ints, not {type(size).__name__}")
    return (size,)


@public(method=True, static=True)
def zeros(
    *shape: Any,
    size: Any = None,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    name: str | None = None,
) -> Tensor:
    """A tensor of zeros: ``zeros(2, 3)``, ``zeros((2, 3))`` or ``zeros(size=(2, 3))``; float32 unless ``dtype`` says
    otherwise."""
    dt = dtype if dtype is not None else get_default_dtype()
    return full(
        _shape_args(sizes_given(shape, size, "zeros"), new=True),
        0,
        dtype=dt,
        device=device,
        requires_grad=requires_grad,
        name=name,
    )


@public(method=True, static=True)
def ones(
    *shape: Any,
    size: Any = None,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    name: str | None = None,
) -> Tensor:
    """A tensor of ones: ``ones(2, 3)``, ``ones((2, 3))`` or ``ones(size=(2, 3))``; float32 unless ``dtype`` says
    otherwise."""
    dt = dtype if dtype is not None else get_default_dtype()
    return full(
        _shape_args(sizes_given(shape, size, "ones"), new=True),
        1,
        dtype=dt,
        device=device,
        requires_grad=requires_grad,
        name=name,
    )


@public
def empty(*shape: Any, size: Any = None, dtype: Any = None, device: Any = None, requires_grad: bool = False,
          memory_format: Any = None) -> Tensor:  # fmt: skip
    """Zeros (an uninitialised tensor would show whatever memory held before), laid out in
    ``memory_format`` (row-major by default, ``channels_last``: ``(N, H, W, C)`` in memory)."""
    out = zeros(*sizes_given(shape, size, "empty"), dtype=dtype, device=device, requires_grad=requires_grad)
    if memory_format is None or memory_format is contiguous_format:
        return out
    if memory_format is preserve_format:
        raise RuntimeError("empty: preserve memory format is unsupported by the empty operator")
    return relaid(out, strides_for(out.shape, out.stride(), memory_format))


@public(method=True, static=True)
def full(size: Any, fill_value: Any, dtype: Any = None, device: Any = None,
         requires_grad: bool = False, name: str | None = None) -> Tensor:  # fmt: skip
    """``size`` filled with ``fill_value``; the dtype is inferred from it (int64, float32 or bool)."""
    if dtype is None:
        dtype = torch_dtype_of(np.asarray(fill_value))
    ints("full", "size", (size,))  # (a float, None or a leading bool among the sizes: PyTorch's TypeError)
    fill_value = fill_value_in("full", fill_value, dtype)  # (-1 into uint8 is 255, as PyTorch's)
    dtype = np.dtype(dtype)
    if on_meta(device):  # (one element seen at every place: a meta tensor takes its shape and dtype)
        arr = np.broadcast_to(np.asarray(fill_value, dtype=dtype), _shape_args((size,), new=True))
    else:
        arr = np.full(_shape_args((size,), new=True), fill_value, dtype=dtype)
    return Tensor._host(arr, None, device, requires_grad, name)


@public(method=True, static=True)
def rand(*shape: Any, size: Any = None, generator: Any = None, dtype: Any = None, device: Any = None,
         requires_grad: bool = False, name: str | None = None) -> Tensor:  # fmt: skip
    """Uniform draws in ``[0, 1)`` (float32 by default), PyTorch's numbers for a seed."""
    return drawn(Tensor, "random", sizes_given(shape, size, "rand"), dtype, device, requires_grad, name, generator)


@public(method=True, static=True)
def randn(*shape: Any, size: Any = None, generator: Any = None, dtype: Any = None, device: Any = None,
          requires_grad: bool = False, name: str | None = None) -> Tensor:  # fmt: skip
    """Standard normal draws (float32 by default), PyTorch's numbers for a seed."""
    return drawn(
        Tensor, "standard_normal", sizes_given(shape, size, "randn"), dtype, device, requires_grad, name, generator
    )


@public
def randint(low: int = 0, high: Any = None, size: Any = None, *, generator: Any = None, dtype: Any = None,
            device: Any = None, requires_grad: bool = False) -> Tensor:  # fmt: skip
    """Integers drawn uniformly from ``[low, high)``: ``randint(high, size)`` or ``randint(low, high, size)``
    (PyTorch's numbers for a seed: a draw modulo the range)."""
    if high is None and size is not None:  # randint(high, size=...)
        low, high = 0, low
    if size is None:  # randint(high, size)
        if high is None:
            raise TypeError("randint: give the size, as randint(high, size) or randint(low, high, size)")
        low, high, size = 0, low, high
    if not isinstance(size, (list, tuple)):  # (PyTorch's size here is a tuple of ints: not one int, not a bool)
        refuse("randint", "size", 3, "ints", size)
    ints("randint", "size", (size,))
    low, high = int(low), int(high)
    if low >= high:
        raise RuntimeError(f"randint: expects from < to, got from={low} >= to={high}")
    gen = generator_for(generator, "randint")
    arr = random_transforms.integers(gen, _shape_args((size,), new=True), dtype or np.int64, low, high)
    return Tensor(arr, device=device, requires_grad=requires_grad)


@public
def randperm(n: int, *, generator: Any = None, dtype: Any = None, device: Any = None,
             requires_grad: bool = False) -> Tensor:  # fmt: skip
    """A random permutation of ``0 .. n-1`` (int64 unless ``dtype`` says otherwise), as
    ``torch.randperm``: the same permutation for the same generator state.

    >>> order = randperm(len(data))  # doctest: +SKIP
    """
    if int(n) < 0:
        raise RuntimeError(f"randperm: n must be non-negative, got {n}")
    _counting_kernel("randperm", dtype or np.int64)
    arr = random_transforms.randperm(generator_for(generator, "randperm"), int(n))
    return Tensor(arr.astype(dtype or np.int64), device=device, requires_grad=requires_grad)


_NO_START: Any = type("_NoStart", (), {"__repr__": lambda self: "0"})()  # (arange(end=3): start 0)

#: the dtypes of PyTorch's CPU kernels that count or space values (its real dtypes but bool and the
#: unsigned ones past uint8; linspace and logspace have complex ones too): another ``dtype=`` is its
#: ``NotImplementedError``, named by the kernel
_REAL_COUNTING = frozenset(("uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64"))
_COUNTING_KERNELS = {
    "arange_cpu": _REAL_COUNTING, "range_cpu": _REAL_COUNTING, "randperm": _REAL_COUNTING,
    "linspace_cpu": _REAL_COUNTING | {"complex64", "complex128"}, "logspace_cpu": _REAL_COUNTING | {"complex64", "complex128"},
}  # fmt: skip


def _counting_kernel(kernel: str, dtype: Any) -> None:
    """Refuse a ``dtype=`` that PyTorch's counting kernel ``kernel`` has no instance for
    (``arange(3, dtype=torch.bool)``), with its message."""
    dt = np.dtype(dtype)
    if dt.name not in _COUNTING_KERNELS[kernel]:
        raise UnsupportedDtypeError(f"\"{kernel}\" not implemented for '{scalar_type_name(dt)}'")


@public(method=True, static=True)
def arange(start: float = _NO_START, end: float | None = None, step: float = 1, *, dtype: Any = None, device: Any = None,
           requires_grad: bool = False, name: str | None = None) -> Tensor:  # fmt: skip
    """``arange(end)`` or ``arange(start, end, step)``: int64 when every argument is an int, else float32.

    As PyTorch's: the length is ``ceil((end - start) / step)``, and an integer dtype counts
    from ``int(start)`` by ``int(step)`` (``arange(0.5, 3.7, 1.5, dtype=int64)`` is ``[0, 1, 2]``; the
    narrower integer kernels keep the float length and a step cut to 0 repeats ``int(start)``)."""
    if start is _NO_START:  # (arange(end=3); arange() is PyTorch's TypeError)
        if end is None:
            raise TypeError("arange() received an invalid combination of arguments - got (), but expected (end) or "
                            "(start, end, step)")  # fmt: skip
        start = 0
    if end is None:
        start, end = 0, start
    start, end, step = (v.item() if hasattr(v, "item") else v for v in (start, end, step))
    if dtype is None:
        whole = all(isinstance(v, int) for v in (start, end, step))
        dtype = np.int64 if whole else get_default_dtype()
    _counting_kernel("arange_cpu", dtype)
    if step == 0:
        raise InvalidArgumentError(f"arange: step must be nonzero (start {start}, end {end})")
    if not all(math.isfinite(v) for v in (start, end)):
        raise RuntimeError(f"arange: unsupported range: {start} -> {end}; start and end must be finite")
    if (end - start) * step < 0:
        raise InvalidArgumentError(f"arange: upper bound and lower bound inconsistent with step sign "
                                   f"(start {start}, end {end}, step {step})")  # fmt: skip
    n = max(math.ceil((end - start) / step), 0)
    if np.dtype(dtype).kind in "iub":
        if np.dtype(dtype) == np.int64:  # (PyTorch's int64 kernel counts in integers cut toward zero, end too)
            if int(step) == 0:
                raise InvalidArgumentError(f"arange: step must be nonzero once cast to int64 (step {step})")
            xs, xe, xst = int(start), int(end), int(step)
            num = xe - xs + xst - (1 if xst > 0 else -1)
            n = max((abs(num) // abs(xst)) * (1 if (num >= 0) == (xst > 0) else -1), 0)
        arr = int(start) + np.arange(n, dtype=np.int64) * int(step)
    else:
        arr = start + np.arange(n, dtype=np.float64) * step
    return Tensor._host(arr.astype(dtype), None, device, requires_grad, name)


@public
def range(start: float, end: float, step: float = 1, *, dtype: Any = None, device: Any = None,  # noqa: A001 - PyTorch's
          requires_grad: bool = False) -> Tensor:  # fmt: skip
    """PyTorch's deprecated ``torch.range``: ``start, start + step, ...`` up to ``end`` included,
    in the default float dtype unless ``dtype`` is given (prefer :func:`arange`, which leaves
    ``end`` out)."""
    _user_warn(
        "torch.range is deprecated and will be removed in a future release because its behavior is inconsistent "
        "with Python's range builtin. Instead, use torch.arange, which produces values in [start, end).",
        UserWarning,
    )
    start, end, step = (v.item() if isinstance(v, Tensor) else v for v in (start, end, step))
    if step == 0:
        raise RuntimeError(f"range: step must be nonzero (start {start}, end {end})")
    if (end - start) * step < 0:
        raise RuntimeError(f"range: upper bound and larger bound inconsistent with step sign (start {start}, end "
                           f"{end}, step {step})")  # fmt: skip
    dt = np.dtype(dtype) if dtype is not None else get_default_dtype()
    _counting_kernel("range_cpu", dt)
    n = int(math.floor((end - start) / step)) + 1
    arr = start + np.arange(n, dtype=np.float64) * step
    return Tensor(arr.astype(dt), device=device, requires_grad=requires_grad)


@public
def linspace(start: Any, end: Any, steps: int, *, dtype: Any = None, device: Any = None,
             requires_grad: bool = False) -> Tensor:  # fmt: skip
    """``steps`` evenly spaced values from ``start`` to ``end``, both included (float32 by default)."""
    for name, v in (("start", start), ("end", end)):
        if isinstance(v, Tensor) and v.ndim != 0:
            raise RuntimeError(f"linspace only supports 0-dimensional start and end tensors, but got {name} with "
                               f"{v.ndim} dimension(s)")  # fmt: skip
    given = steps
    try:  # (an int, or what stands for one: a 0-d integer tensor; not a float, not a bool)
        steps = operator.index(steps) if not isinstance(steps, bool) else None
    except TypeError:
        steps = None
    if steps is None:
        raise TypeError(f"linspace() received an invalid combination of arguments - got steps of type "
                        f"{type(given).__name__}; steps must be an int")  # fmt: skip
    if steps < 0:
        raise RuntimeError(f"linspace: number of steps must be non-negative, got {steps}")
    if steps:  # (no steps: no kernel runs, as PyTorch's)
        _counting_kernel("linspace_cpu", dtype or get_default_dtype())
    # (0-d tensors are read as numbers, as PyTorch's: a float32 start makes no float32 arithmetic)
    start, end = (v.item() if isinstance(v, Tensor) else v for v in (start, end))
    return Tensor(_evenly_spaced_host(start, end, steps, np.dtype(dtype or get_default_dtype())), device=device,
                  requires_grad=requires_grad)  # fmt: skip


def _evenly_spaced_host(start: Any, end: Any, steps: int, dt: np.dtype) -> np.ndarray:
    """PyTorch's linspace values: the first half ``start + step * i``, the second ``end - step * (steps
    - 1 - i)``, each one fused multiply-add in the output's float type (integers: their bounds truncated,
    the arithmetic in float64, the result truncated). The fused rounding is taken in a wider type (float64
    for float32; the host's long double for float64). float16 and bfloat16: C++'s arithmetic of their
    types, which rounds each step (the integers converted to the type first), as PyTorch's scalar loop
    (its vectorised loop, from a SIMD register's width of steps on, starts each register at its own base)."""
    if dt.itemsize == 2 and kind_of(dt) == "f":
        return _evenly_spaced_low(start, end, steps, dt)
    if dt.kind == "f":
        wt, lo, hi = dt, dt.type(start), dt.type(end)
    else:
        wt = np.dtype(np.float64)
        lo, hi = wt.type(int(start)), wt.type(int(end))
    if steps == 1:
        return np.full(1, lo, dtype=wt).astype(dt)
    step = (hi - lo) / wt.type(max(steps - 1, 1))
    wide = np.float64 if wt == np.float32 else np.longdouble
    i = np.arange(steps).astype(wide)
    with np.errstate(invalid="ignore", over="ignore"):
        vals = np.where(i < steps // 2, wide(lo) + wide(step) * i, wide(hi) - wide(step) * (steps - 1 - i))
        return vals.astype(wt).astype(dt)


def _evenly_spaced_low(start: Any, end: Any, steps: int, dt: np.dtype) -> np.ndarray:
    """:func:`_evenly_spaced_host` for a 2-byte float ``dt``: each operation of PyTorch's scalar loop
    computed in float32 and rounded to ``dt`` (``c10::Half``'s and ``c10::BFloat16``'s operators)."""
    single = np.float32

    def rounded(v: Any) -> np.ndarray:
        with np.errstate(over="ignore", invalid="ignore"):
            return np.asarray(v).astype(dt).astype(single)  # (a Python number rounded once, from float64)

    lo, hi = rounded(start), rounded(end)
    if steps == 1:
        return lo.reshape(1).astype(dt)
    step = rounded(rounded(hi - lo) / rounded(max(steps - 1, 1)))
    i = np.arange(steps)
    first = rounded(lo + rounded(step * rounded(i)))
    second = rounded(hi - rounded(step * rounded(steps - 1 - i)))
    return np.where(i < steps // 2, first, second).astype(dt)


@public
def logspace(start: Any, end: Any, steps: int, base: float = 10.0, *, dtype: Any = None, device: Any = None,
             requires_grad: bool = False) -> Tensor:  # fmt: skip
    """``steps`` powers ``base ** e``, the exponents evenly spaced from ``start`` to ``end`` (float32 by default).

    >>> tga.logspace(0, 2, 3)  # doctest: +SKIP
    Tensor([  1.,  10., 100.], dtype=float32)
    """
    start, end = (v.item() if isinstance(v, Tensor) else v for v in (start, end))
    if not isinstance(steps, (int, np.integer)) or isinstance(steps, bool):  # (PyTorch's argument parser: an int)
        raise TypeError(f"logspace(): argument 'steps' must be int, not {type(steps).__name__}")
    if steps < 0:
        raise RuntimeError(f"logspace: number of steps must be non-negative, got {steps}")
    dt = np.dtype(dtype or get_default_dtype())
    if steps:  # (no steps: no kernel runs, as PyTorch's)
        _counting_kernel("logspace_cpu", dt)
    if dt.kind in "iub":  # (an integer result takes integer exponent bounds, as PyTorch's: -1.5 is -1)
        start, end = int(start), int(end)
    # (as PyTorch's kernel: the first half counted from start, the second from end, in the output's
    # float type, or in float64 for an integer output)
    wt = dt if dt.kind == "f" else np.dtype(np.float64)
    i = np.arange(steps)
    step = (wt.type(end) - wt.type(start)) / wt.type(max(steps - 1, 1))
    e = np.where(i < steps // 2, wt.type(start) + step * i.astype(wt), wt.type(end) - step * (steps - 1 - i).astype(wt))
    if steps == 1:  # (one step is the start)
        e = np.full(1, start, dtype=wt)
    with np.errstate(over="ignore", invalid="ignore"):
        arr = np.power(wt.type(base), e.astype(wt))
    return Tensor(arr.astype(dt), device=device, requires_grad=requires_grad)


@public
def scalar_tensor(s: float, *, dtype: Any = None, device: Any = None, requires_grad: bool = False,
                  **_: Any) -> Tensor:  # fmt: skip
    """A 0-d tensor holding the number ``s``, of the default float dtype unless ``dtype`` says otherwise."""
    s = s.item() if isinstance(s, Tensor) else s
    return Tensor(np.asarray(s).astype(dtype or get_default_dtype()), device=device, requires_grad=requires_grad)


@public
def fill(input: Tensor, value: Tensor | float) -> Tensor:  # noqa: A002
    """A tensor of ``input``'s shape and dtype filled with ``value`` (a number or a 0-d tensor, whose
    gradient is the sum of the result's; ``input``'s is zero), as ``torch.fill``."""
    from .._tensor import where  # noqa: PLC0415

    if isinstance(value, Tensor):
        if value.ndim:
            raise RuntimeError(
                f"fill_ only supports 0-dimension value tensor but got tensor with {value.ndim} dimensions."
            )
        v = value if value.dtype == input.dtype else value.astype(input.dtype)
    else:
        if value.__class__ is int:  # (-1 into uint8 is 255; 256 overflows)
            value = fill_value_in("fill", value, input.dtype)
        v = Tensor(np.asarray(value).astype(input.dtype), device=input._dev)
    return where(Tensor.ones(input.shape, dtype=np.bool_, device=input._dev), v, input)


@public(method=True, static=True)
def eye(n: int, m: int | None = None, *, dtype: Any = None, device: Any = None,
        requires_grad: bool = False, name: str | None = None) -> Tensor:  # fmt: skip
    """The ``n`` by ``m`` (default ``n``) identity matrix."""
    for name, v in (("n", n), ("m", m)):
        if v is not None and v < 0:
            raise RuntimeError(f"eye: {name} must be greater or equal to 0, got {v}")
    return Tensor._host(np.eye(n, m), dtype or get_default_dtype(), device, requires_grad, name)


def _like(t: Tensor, dtype: Any, device: Any) -> tuple[Sequence[int], Any, Any]:
    if not isinstance(t, Tensor):
        raise TypeError(f"argument 'input' (position 1) must be Tensor, not {type(t).__name__}")
    return t.shape, (dtype if dtype is not None else t.dtype), (device if device is not None else t.device)


def _laid_like(out: Tensor, t: Tensor, memory_format: Any) -> Tensor:
    """``out``, new, laid out as PyTorch's ``empty_like(t, memory_format=)`` (``preserve_format``:
    ``t``'s layout); its values stay where they are in its shape."""
    return relaid(out, strides_for(t.shape, t.stride(), memory_format))


@public
def zeros_like(
    t: Tensor, *, dtype: Any = None, device: Any = None, requires_grad: bool = False, memory_format: Any = None
) -> Tensor:
    """Zeros of ``t``'s shape, dtype and device (each may be overridden)."""
    shape, dtype, device = _like(t, dtype, device)
    return _laid_like(Tensor.zeros(shape, dtype=dtype, device=device, requires_grad=requires_grad), t, memory_format)


@public
def ones_like(
    t: Tensor, *, dtype: Any = None, device: Any = None, requires_grad: bool = False, memory_format: Any = None
) -> Tensor:
    """Ones of ``t``'s shape, dtype and device (each may be overridden)."""
    shape, dtype, device = _like(t, dtype, device)
    return _laid_like(Tensor.ones(shape, dtype=dtype, device=device, requires_grad=requires_grad), t, memory_format)


@public
def empty_like(
    t: Tensor, *, dtype: Any = None, device: Any = None, requires_grad: bool = False, memory_format: Any = None
) -> Tensor:
    """Zeros of ``t``'s shape, dtype and device (see :func:`empty`)."""
    return zeros_like(t, dtype=dtype, device=device, requires_grad=requires_grad, memory_format=memory_format)


@public
def full_like(t: Tensor, fill_value: float, *, dtype: Any = None, device: Any = None,
              requires_grad: bool = False, memory_format: Any = None) -> Tensor:  # fmt: skip
    """``fill_value`` in ``t``'s shape, dtype and device (each may be overridden)."""
    shape, dtype, device = _like(t, dtype, device)
    out = Tensor.full(shape, fill_value, dtype=dtype, device=device, requires_grad=requires_grad)
    return _laid_like(out, t, memory_format)


@public
def rand_like(t: Tensor, *, generator: Any = None, dtype: Any = None, device: Any = None,
              requires_grad: bool = False, memory_format: Any = None) -> Tensor:  # fmt: skip
    """Uniform draws in ``[0, 1)`` in ``t``'s shape, dtype and device."""
    shape, dtype, device = _like(t, dtype, device)
    # (PyTorch's: empty_like(t, memory_format=) filled in place, walking its memory)
    out = empty_like(t, dtype=dtype, device=device, memory_format=memory_format).uniform_(generator=generator)
    return out.requires_grad_(requires_grad)


@public
def randn_like(t: Tensor, *, generator: Any = None, dtype: Any = None, device: Any = None,
               requires_grad: bool = False, memory_format: Any = None) -> Tensor:  # fmt: skip
    """Standard normal draws in ``t``'s shape, dtype and device."""
    shape, dtype, device = _like(t, dtype, device)
    out = empty_like(t, dtype=dtype, device=device, memory_format=memory_format).normal_(generator=generator)
    return out.requires_grad_(requires_grad)


@public(dtypes="not_bool")
def randint_like(t: Tensor, low: int | Tensor, high: int | None = None, *, generator: Any = None, dtype: Any = None,
                 device: Any = None, memory_format: Any = None) -> Tensor:  # fmt: skip
    """Integers from ``[low, high)`` in ``t``'s shape (``randint_like(t, high)`` draws from ``[0, high)``;
    that ``high`` may be a one-element tensor, as PyTorch's ``randint_like(input, Tensor high)``)."""
    shape, dtype, device = _like(t, dtype, device)
    if high is None and isinstance(low, Tensor):
        if low.numel() != 1:
            raise RuntimeError(f"randint_like: high must be a one-element tensor, got shape {tuple(low.shape)}")
        low = int(low.item())
    elif index_value(low) is None:
        raise TypeError(f"randint_like(): argument 'low' (position 2) must be int, not {type(low).__name__}")
    else:
        low = index_value(low)
    high = high if index_value(high) is None else index_value(high)
    if high is None:
        low, high = 0, low
    if low >= high:  # (randint's error)
        return randint(low, high, shape, generator=generator, dtype=dtype, device=device)
    return empty_like(t, dtype=dtype, device=device, memory_format=memory_format).random_(
        low, high, generator=generator
    )


@public(method=True)
@stand_in("ones")
def multinomial(input: Tensor, num_samples: int, replacement: bool = False, *,  # noqa: A002 - torch's name
                generator: Any = None) -> Tensor:  # fmt: skip
    """Indices drawn with probability proportional to each row of ``input`` (1-D or 2-D),
    as ``torch.multinomial``: int64, PyTorch's numbers for a seed, on ``input``'s device."""
    if num_samples <= 0:
        raise RuntimeError(f"multinomial: cannot sample n_sample <= 0 samples (num_samples={num_samples})")
    probs = input._read("multinomial")  # (not numpy(): bfloat16 has none)
    if input.dtype.kind != "f":
        raise RuntimeError(f"multinomial: needs a floating-point tensor of weights, got {probs.dtype}")
    rows = probs.reshape(1, -1) if probs.ndim == 1 else probs
    if probs.ndim not in (1, 2) or (rows < 0).any() or not np.isfinite(rows).all():
        raise RuntimeError(
            f"multinomial: needs a 1-D or 2-D tensor of non-negative finite weights, got shape {tuple(input.shape)}"
        )
    if (rows.sum(axis=1) <= 0).any():
        raise RuntimeError("multinomial: invalid multinomial distribution (sum of probabilities <= 0)")
    if not replacement and num_samples > rows.shape[1]:
        raise RuntimeError(
            f"multinomial: cannot sample n_sample > prob_dist.size(-1) samples without replacement "
            f"({num_samples} > {rows.shape[1]})"
        )
    out = random_transforms.multinomial(generator_for(generator, "multinomial"), rows, int(num_samples), replacement)
    out = out.reshape(num_samples) if probs.ndim == 1 else out
    return Tensor(out.astype(np.int64), device=input.device)


class _Counts(Function):
    """Counts drawn on the host (``args``: the array of draws, made before the op so that the
    generator is read once): their gradient is PyTorch's, zeros for ``poisson`` (PoissonBackward0)
    and its RuntimeError for ``binomial`` (no derivative)."""

    __slots__ = ()
    keep = ()
    reads_output = False
    reads_values = False

    def forward(self, ns: Any, *inputs: Any) -> Any:
        return ns.device.asarray(self.args)

    def backward(self, g: Any, ns: Any, inputs: Any, out: Any) -> Any:
        if self.name == "binomial":
            raise RuntimeError("derivative for aten::binomial is not implemented")
        return (ns.zeros_like(g),)


class Poisson(_Counts):
    __slots__ = ()
    name = "poisson"


class Binomial(_Counts):
    __slots__ = ()
    name = "binomial"


@public(dtypes="floating")
@stand_in()
def poisson(input: Tensor, generator: Any = None) -> Tensor:  # noqa: A002 - torch's name
    """Poisson counts with rate ``input`` (elementwise), in its dtype: PyTorch's numbers for a seed.
    The gradient is zeros, as PyTorch's."""
    rate = input.detach().numpy()
    counts = random_transforms.poisson(generator_for(generator, "poisson"), rate)
    return Poisson.apply(input, args=np.asarray(counts))


@public
def binomial(count: Tensor, prob: Tensor, generator: Any = None) -> Tensor:
    """Binomial counts of ``count`` trials of probability ``prob`` (broadcast), in their dtype:
    PyTorch's numbers for a seed. No gradient (backward raises PyTorch's RuntimeError)."""
    for t in (count, prob):
        if t.dtype.kind != "f":
            raise ValueError(
                f"binomial only supports floating-point dtypes for count, got: {scalar_type_name(t.dtype)}"
            )
    if count.dtype != prob.dtype:
        raise RuntimeError(f"Found dtype {scalar_type_name(prob.dtype)} but expected {scalar_type_name(count.dtype)}")
    check_dtype("binomial", prob, ("float32", "float64"))
    refuse_without_kernel("aten::binomial", count, prob)
    n, p = count.detach().numpy(), prob.detach().numpy()
    counts = random_transforms.binomial(generator_for(generator, "binomial"), n, p)
    return Binomial.apply(count, prob, args=np.asarray(counts))


#: ``bernoulli``'s ``p`` left out (``x.bernoulli(None)`` is PyTorch's TypeError)
_NO_P: Any = object()


@public(method=True)
@stand_in()
def bernoulli(input: Tensor, p: float = _NO_P, *, generator: Any = None) -> Tensor:  # noqa: A002 - torch's name
    """1 with probability ``input`` (elementwise), else 0, in ``input``'s dtype; PyTorch's
    numbers for a seed (``p``, a number, draws with that probability instead, as PyTorch's
    other overload, for any dtype; those numbers are PyTorch's own engine's and are not reproduced)."""
    if p is not _NO_P:
        return input.detach().new_empty(input.shape).bernoulli_(p, generator=generator)
    check_dtype("bernoulli", input, "floating")  # (the probabilities must be floats)
    probs = input._read("bernoulli")  # (not numpy(): bfloat16 has none)
    if probs.size and not ((probs >= 0) & (probs <= 1)).all():  # (NaN is no probability either)
        raise RuntimeError("bernoulli: expected every probability of input to be in [0, 1]")
    draws = random_transforms.bernoulli(generator_for(generator, "bernoulli"), probs)
    return Tensor(np.asarray(draws).astype(input.dtype), device=input.device)  # (0-d: an array, not a NumPy scalar)


# -- PyTorch's typed legacy constructors: FloatTensor, LongTensor, ... ------------------
class _TypedTensorType(type):
    """The metaclass of ``FloatTensor`` and its kin: calling one makes a :class:`Tensor`
    of its dtype on its device type, and ``isinstance(x, FloatTensor)`` asks whether ``x``
    is a float32 tensor there, as in PyTorch. ``torch.cuda.FloatTensor`` and its kin are the
    same types with ``device = "cuda"`` (made in :mod:`tinygrad_attn.runtime.cuda`)."""

    dtype: np.dtype
    device: str = "cpu"  # (the device type its instances live on; its constructor's default)

    def __call__(cls, *args: Any, device: Any = None) -> Tensor:
        name = cls.__name__
        device = cls.device if device is None else device
        if not args:  # FloatTensor(): empty
            return Tensor(np.zeros((0,), cls.dtype), device=device)
        if len(args) > 1 or isinstance(args[0], (int, np.integer)) and not isinstance(args[0], bool):
            if not all(isinstance(n, (int, np.integer)) and not isinstance(n, bool) and n >= 0 for n in args):
                raise TypeError(f"{name}: a shape must be non-negative ints, got {args}; pass data as one list")
            return Tensor(np.zeros(tuple(int(n) for n in args), cls.dtype), device=device)  # (torch: uninitialised)
        data = args[0]
        if isinstance(data, type):  # (a class is no data: the legacy constructor's error, as Tensor(c)'s)
            raise class_as_data_error(data)
        if isinstance(data, Tensor):
            if data.dtype != cls.dtype:
                raise TypeError(
                    f"{name}: expected a tensor of dtype {cls.dtype}, got {data.dtype}; use t.to({cls.dtype})"
                )
            return Tensor(data.detach(), device=device)
        if isinstance(data, Size):  # FloatTensor(x.size()): a shape
            return Tensor(np.zeros(tuple(data), cls.dtype), device=device)
        if isinstance(data, np.ndarray) or is_array(data):  # (an array: converted whole)
            return Tensor(data, dtype=cls.dtype, device=device)
        return Tensor(read_python_data(data, cls.dtype, name), device=device)

    def __instancecheck__(cls, obj: Any) -> bool:
        return isinstance(obj, Tensor) and obj.dtype == cls.dtype and str(obj.device).split(":")[0] == cls.device

    def __repr__(cls) -> str:
        namespace = "tinygrad_attn" if cls.device == "cpu" else f"tinygrad_attn.{cls.device}"
        return f"<class '{namespace}.{cls.__name__}'>"


def _typed(name: str, dtype: Any) -> type:
    return _TypedTensorType(name, (), {"dtype": np.dtype(dtype), "__doc__": f"PyTorch's ``{name}``: a {np.dtype(dtype)} tensor "
                                       f"from data (``{name}([1, 2])``) or of a shape (``{name}(2, 3)``, zeros)."})  # fmt: skip


FloatTensor = _typed("FloatTensor", np.float32)
DoubleTensor = _typed("DoubleTensor", np.float64)
HalfTensor = _typed("HalfTensor", np.float16)
LongTensor = _typed("LongTensor", np.int64)
IntTensor = _typed("IntTensor", np.int32)
ShortTensor = _typed("ShortTensor", np.int16)
CharTensor = _typed("CharTensor", np.int8)
ByteTensor = _typed("ByteTensor", np.uint8)
BoolTensor = _typed("BoolTensor", np.bool_)
_TYPED = (FloatTensor, DoubleTensor, HalfTensor, LongTensor, IntTensor, ShortTensor, CharTensor, ByteTensor, BoolTensor)


def set_default_tensor_type(t: Any, /) -> None:
    """PyTorch's deprecated ``torch.set_default_tensor_type``: ``FloatTensor``, ``DoubleTensor``
    or ``HalfTensor`` (or its name, ``"torch.DoubleTensor"``) makes its dtype the default
    (:func:`~tinygrad_attn.set_default_dtype`), with PyTorch's warning; a non-floating type is
    PyTorch's ``TypeError``."""
    _user_warn(
        "torch.set_default_tensor_type() is deprecated as of PyTorch 2.1, please use torch.set_default_dtype() and "
        "torch.set_default_device() as alternatives.",
        UserWarning,
    )
    typed = {cls.__name__: cls for cls in _TYPED}
    if isinstance(t, str):
        name = t.rpartition(".")[2]
        if name not in typed:
            raise TypeError(f"set_default_tensor_type: unknown tensor type {t!r} (expected e.g. 'torch.DoubleTensor')")
        t = typed[name]
    if not isinstance(t, _TypedTensorType):
        raise TypeError(f"set_default_tensor_type: expected a tensor type such as DoubleTensor, got {t!r}")
    if t.dtype.kind != "f":
        raise TypeError("only floating-point types are supported as the default type")
    set_default_dtype(t.dtype)


def typename(obj: Any, /) -> str:
    """PyTorch's ``torch.typename``: a tensor's legacy type (``"torch.FloatTensor"``), else the
    object's (or its class's) qualified name, its module first unless that is ``builtins``."""
    if isinstance(obj, Tensor):
        return obj.type()
    qualname = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None)
    named = obj if isinstance(qualname, str) else type(obj)  # (an instance: its class's names)
    qualname = qualname if named is obj else named.__qualname__
    module = getattr(named, "__module__", "") or ""
    if not isinstance(module, str) or module in ("", "builtins"):
        return qualname
    return f"{module}.{qualname}"
