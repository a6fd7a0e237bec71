"""Backends: where a tensor's array lives, and the array namespace that computes on it.

:class:`device` is PyTorch's public handle of a place (``tga.device("cuda", 0)``, what
``Tensor.device`` returns). A :class:`Device` is the backend behind it, a small
object: a name (``"cpu"``, ``"cuda:0"``), the array
namespace (NumPy, CuPy or ``array_api_strict``) and a handful of helpers that the
array API standard leaves out (scatter-add, host transfer). Op code never imports
NumPy for array math: it calls ``device.ops.<name>``, so the same op runs on every
namespace.

Device names:

- ``"cpu"``: NumPy.
- ``"cuda"`` / ``"cuda:N"``: CuPy, imported only when first asked for.
- ``"array_api_strict"`` / ``"array_api_strict:device1"``: the reference namespace of
  the array API standard. It rejects NumPy-only calls and arrays of two devices in one
  operation, so the test-suite runs on it to prove the ops are portable.
- ``"meta"``: PyTorch's device of tensors without values (shape, dtype, strides and graph
  only; no memory proportional to the size): NumPy on placeholder arrays, see
  :mod:`tinygrad_attn.runtime.meta`.
"""

from __future__ import annotations

import functools
import operator
import os
from types import SimpleNamespace
from typing import Any

import numpy as np

from ..engine.bfloat16 import BFLOAT16
from . import malloc

# Array-API names the ops may call through ``device.ops``. A backend missing one of
# them under its standard name falls back to the NumPy-era spelling below.
_ARRAY_API_NAMES = (
    "abs exp log sqrt tanh sign sum max min prod reshape permute_dims broadcast_to matmul "
    "where astype zeros zeros_like ones_like full expand_dims squeeze concat stack take "
    "maximum minimum copysign isfinite all any tril triu argmax arange asarray take_along_axis matrix_transpose moveaxis"
).split()
_FALLBACKS = {"permute_dims": "transpose", "concat": "concatenate"}


def _np_reshape(x: Any, /, shape: Any, *, copy: bool | None = None) -> Any:
    return x.reshape(shape) if copy is None else np.reshape(x, shape, copy=copy)


def _np_permute_dims(x: Any, /, axes: Any) -> Any:
    return x.transpose(axes)


def _np_reduction(ufunc: Any) -> Any:
    reduce = ufunc.reduce

    def reduction(x: Any, /, *, axis: Any = None, dtype: Any = None, keepdims: bool = False) -> Any:
        return reduce(x, axis, dtype, None, keepdims)  # ufunc.reduce's own default axis is 0

    return reduction


_NP_SCALARS: dict[Any, Any] = {}  # Python number -> the 0-d array last made for it


def _np_scalar(value: Any, like: Any) -> Any:
    """``value`` (a Python number) as a 0-d array of ``like``'s floating dtype.

    NumPy takes about twice as long to combine a small array with a Python number as with
    a 0-d array of the array's own dtype, and the result is the same: NEP 50 casts the
    number to that dtype. So ops hand NumPy the 0-d array, kept from one call to the next.
    Zeros (whose sign the cache could not tell apart) and numbers that do not fit the
    dtype stay as they are.
    """
    hit = _NP_SCALARS.get(value)
    if hit is not None and hit.dtype is like.dtype:
        return hit
    dt = like.dtype
    if dt.kind != "f" or value.__class__ not in (int, float) or value == 0 or not -1e300 < value < 1e300:
        return value
    with np.errstate(over="ignore"):
        arr = np.asarray(value, dt)
    if not np.isfinite(arr):
        return value
    if len(_NP_SCALARS) >= 4096:  # a schedule may pass a new number each step
        _NP_SCALARS.clear()
    _NP_SCALARS[value] = arr
    return arr


def _keep_scalar(value: Any, like: Any) -> Any:
    return value


#: From this many elements on, ``where`` with a scalar on one side is a copy and a masked
#: store (below, NumPy's own ``where`` is as fast).
WHERE_COPY_MIN = 1 << 14


def _np_where(cond: Any, x1: Any, x2: Any, /) -> Any:
    """``numpy.where``, twice as fast on large arrays when one side is a scalar.

    ``where(mask, -inf, scores)`` is how attention masks are applied, forward and
    backward. NumPy's ``where`` costs about three copies' time even for a causal mask; a
    copy of the array side and a masked store of the scalar (``copyto(..., where=)``)
    cost about 1.7 (8x8x512x512 float32: 22 -> 11 ms). Same values, dtype and shape; on a
    condition with no structure (random bits) it is about 7% slower.
    """
    if x2.__class__ is np.ndarray and x2.size >= WHERE_COPY_MIN and np.ndim(x1) == 0:
        full, fill, invert = x2, x1, False
    elif x1.__class__ is np.ndarray and x1.size >= WHERE_COPY_MIN and np.ndim(x2) == 0:
        full, fill, invert = x1, x2, True
    else:
        return np.where(cond, x1, x2)
    if (
        cond.__class__ is not np.ndarray
        or cond.dtype != np.bool_
        or np.result_type(x1, x2) != full.dtype
        or np.broadcast_shapes(cond.shape, full.shape) != full.shape
    ):
        return np.where(cond, x1, x2)
    out = full.copy()
    np.copyto(out, fill, where=~cond if invert else cond)
    return out


# NumPy's module functions for these (np.sum, np.reshape, ...) are Python wrappers that
# cost a microsecond or more per call, more than the work on a small array; the ufunc
# methods and array methods below are the same operations without the wrapper. They
# keep NumPy's dtype rules (``add.reduce`` widens small integers exactly as ``sum``).
_NUMPY_FAST = {
    "sum": _np_reduction(np.add),
    "max": _np_reduction(np.maximum),
    "min": _np_reduction(np.minimum),
    "reshape": _np_reshape,
    "permute_dims": _np_permute_dims,
    "matrix_transpose": operator.attrgetter("mT"),
    "where": _np_where,
}

_CUDA_INSTALL_HINT = (
    'install CuPy with the extra that matches your CUDA toolkit: pip install "tinygrad_attn[cuda12]" '
    '(CUDA 12) or pip install "tinygrad_attn[cuda13]" (CUDA 13)'
)


#: Elements per block of the many-pass elementwise chains on a CPU (128 KiB of float32,
#: which stays in L2 cache): erf of 0.5M float32 takes 3.4 ms this way, 9.5 ms at once.
CPU_CACHE_BLOCK = 1 << 15


#: PyTorch's device types (its parser refuses any other name), and this library's test backend
_DEVICE_TYPES = ("cpu", "cuda", "ipu", "xpu", "mkldnn", "opengl", "opencl", "ideep", "hip", "ve", "fpga", "maia",
                 "xla", "lazy", "vulkan", "mps", "meta", "hpu", "mtia", "privateuseone", "array_api_strict")  # fmt: skip


class device:  # noqa: N801 - PyTorch's name
    """Where a tensor lives, as ``torch.device``: ``device("cpu")``, ``device("cuda", 0)``,
    ``device("cuda:0")``, ``device(0)`` (CUDA device 0).

    ``.type`` and ``.index`` are PyTorch's; str and repr are too. Unlike PyTorch's, a
    device also equals its string (``x.device == "cpu"``) and hashes as it, so code that
    compares devices with names keeps working. Accepted wherever a device name is.
    """

    __slots__ = ("type", "index")

    def __init__(self, type: Any, index: int | str | None = None) -> None:  # noqa: A002 - PyTorch's name
        if isinstance(type, device):
            if index is not None:
                raise ValueError(f"device: an index ({index!r}) cannot be given with a device object ({type})")
            self.type, self.index = type.type, type.index
            return
        if isinstance(type, Device):
            type = type.name
        if isinstance(type, int) and not isinstance(type, bool):  # torch.device(0) is the first GPU
            type, index = "cuda", type if index is None else index
        if not isinstance(type, str):
            raise TypeError(f"device: expected a string such as 'cpu' or 'cuda:0', got {type.__class__.__name__}")
        kind, sep, sub = type.partition(":")
        if sep and index is not None:
            raise ValueError(f"device: type {type!r} already names an index; do not also pass index={index!r}")
        if sep:
            index = int(sub) if sub.lstrip("-").isdigit() else sub
        if not kind or (sep and not sub) or (isinstance(index, str) and kind != "array_api_strict"):
            raise RuntimeError(f"Invalid device string: {type!r} (use 'cpu', 'cuda' or 'cuda:N')")
        if kind not in _DEVICE_TYPES:
            raise RuntimeError(f"Expected one of {', '.join(_DEVICE_TYPES[:-1])} device type at start of device "
                               f"string: {kind}")  # fmt: skip
        if isinstance(index, int) and index < 0:
            raise RuntimeError(f"device: the index must be non-negative, got {index}")
        self.type, self.index = kind, index

    def __str__(self) -> str:
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __repr__(self) -> str:
        if self.index is None:
            return f"device(type={self.type!r})"
        return f"device(type={self.type!r}, index={self.index!r})"

    def __eq__(self, other: object) -> bool:
        if isinstance(other, device):
            return self.type == other.type and self.index == other.index
        if isinstance(other, str):
            return str(self) == other
        return NotImplemented

    def __hash__(self) -> int:
        return hash(str(self))

    def __reduce__(self) -> tuple:
        return (device, (self.type, self.index))

    def __enter__(self) -> device:
        """``with tga.device("meta"):`` makes this the default device inside, as PyTorch's."""
        _entered.append((_default_name, _default_from_env))
        set_default_device(str(self))
        return self

    def __exit__(self, *exc: Any) -> None:
        global _default_name, _default_from_env
        _default_name, _default_from_env = _entered.pop()


def _forward_of(ns: Any, cls: type, *arrays: Any, args: Any = None) -> Any:
    """Op ``cls``'s forward on ``arrays``, recording nothing (the array namespace's
    ``apply``: a backward formula that needs another op's values calls ``ns.apply``)."""
    fn = object.__new__(cls)
    fn.args, fn.ctx = args, None
    return fn.forward(ns, *arrays)


class Device:
    """One place arrays live. ``ops`` is its array namespace plus the helpers ops need."""

    __slots__ = ("name", "xp", "ops", "_array_device", "_dtypes", "public")
    #: Whether arrays here are placeholders without values (the meta device)
    meta = False

    def __init__(self, name: str, xp: Any, array_device: Any = None) -> None:
        self.name = name
        self.public = device(name)  # what Tensor.device hands out
        self.xp = xp
        self._array_device = array_device
        self._dtypes: dict[np.dtype, Any] = {}
        ops = SimpleNamespace()
        for n in _ARRAY_API_NAMES:
            f = getattr(xp, n, None) or getattr(xp, _FALLBACKS.get(n, n), None)
            if f is not None:
                setattr(ops, n, f)
        if not hasattr(ops, "matrix_transpose"):

            def _matrix_transpose(x):
                return xp.swapaxes(x, -1, -2)

            ops.matrix_transpose = _matrix_transpose
        if xp is np:  # the same functions, minus NumPy's Python-level argument wrappers
            for n, f in _NUMPY_FAST.items():
                setattr(ops, n, f)
        if not hasattr(xp, "astype"):  # CuPy before the array API spelling

            def _astype(x, dtype, copy=True):
                return x.astype(dtype, copy=copy)

            ops.astype = _astype
        ops.zeros = self.zeros
        ops.empty = self.empty
        ops.gather = self.gather
        ops.scatter_add = self.scatter_add
        ops.slice_grad = self.slice_grad
        ops.copy = self.copy
        # exp over an array the caller owns, written over it where the namespace can (NumPy,
        # CuPy): no second full-size array, and none of its page faults (13.7 -> 8.4 ms for
        # 16M float32); array_api_strict has no out= and gets a new array.
        ops.exp_inplace = _exp_inplace(xp) if hasattr(xp, "ufunc") or name.startswith("cuda") else xp.exp
        # ``value`` written into an array the caller owns where ``cond`` holds (a masked
        # store); array_api_strict has no copyto and gets a new array.
        ops.fill_where = _fill_where(xp) if hasattr(xp, "copyto") else _fill_where_new(xp)
        ops.const = _identity
        ops.scalar = _np_scalar if xp is np else _keep_scalar  # (value, like): see _np_scalar
        ops.kernels = None  # hand-written CUDA kernels for fused ops (CuPy devices only)
        # Elementwise chains of many passes (erf, GELU) go this many elements at a time on a
        # CPU, so that each pass reads from cache rather than memory; None: all at once.
        ops.cache_block = None if name.startswith("cuda") else CPU_CACHE_BLOCK
        ops.device = self
        # What a backward formula asks its namespace (the tensor namespace of create_graph
        # answers the other way, recording ops): ``recording``, and ``apply(Op, *arrays,
        # args=...)``, an op's forward on arrays (there: the op itself, recorded).
        ops.recording = False
        ops.apply = functools.partial(_forward_of, ops)
        ops.values = _identity  # (the tensor namespace: a tensor's array)
        ops.device_of = lambda arr: self  # (the tensor namespace: the device of the array)
        self.ops = ops

    def __repr__(self) -> str:
        return f"Device({self.name!r})"

    # -- dtypes -----------------------------------------------------------------
    def dtype(self, dtype: Any) -> Any:
        """The backend dtype for a NumPy dtype (or anything ``numpy.dtype`` accepts)."""
        d = np.dtype(dtype)
        out = self._dtypes.get(d)
        if out is None:
            if d is BFLOAT16 and self.xp is not np:
                raise TypeError(
                    f"the dtype torch.bfloat16 is not supported on the {self.name} device: bfloat16 arrays here are "
                    f"NumPy's (ml_dtypes), which {self.xp.__name__} cannot hold; keep bfloat16 tensors on the CPU, "
                    "or use torch.float16 (.half()) or torch.float32 (.float())"
                )
            out = getattr(self.xp, d.name) if self.xp is not np else d
            self._dtypes[d] = out
        return out

    def np_dtype(self, backend_dtype: Any) -> np.dtype:
        """The NumPy dtype of a backend dtype."""
        if isinstance(backend_dtype, np.dtype):
            return backend_dtype
        if hasattr(backend_dtype, "kind") and isinstance(getattr(backend_dtype, "dtype", None), np.dtype):
            return backend_dtype.dtype  # (the library's torch-style dtype)
        return np.dtype(str(backend_dtype).rsplit(".", 1)[-1])

    # -- creation and transfer ---------------------------------------------------
    def asarray(self, data: Any, dtype: Any = None) -> Any:
        """An array of this device holding ``data`` (a host array, a scalar, a list)."""
        if dtype is not None:
            dtype = self.dtype(dtype)
        if self._array_device is None:
            return self.xp.asarray(data, dtype=dtype)
        if isinstance(data, np.ndarray):
            # array_api_strict takes host arrays onto its CPU device first; copied: it would
            # otherwise wrap the caller's array itself, and one memory would be two devices'.
            return self.xp.asarray(self.xp.asarray(data, dtype=dtype, copy=True), device=self._array_device)
        return self.xp.asarray(data, dtype=dtype, device=self._array_device)

    def copy(self, arr: Any) -> Any:
        """A copy of one of this device's arrays."""
        if hasattr(arr, "copy"):  # NumPy, CuPy
            return arr.copy()
        return self.xp.asarray(arr, copy=True)

    def zeros(self, shape: tuple, dtype: Any) -> Any:
        if self._array_device is None:
            return self.xp.zeros(shape, dtype=dtype)
        return self.xp.zeros(shape, dtype=dtype, device=self._array_device)

    def empty(self, shape: tuple, dtype: Any) -> Any:
        """Uninitialised: for an array every element of which is written next. (Unlike
        ``zeros``, whose memory the system hands out fresh, page by page, on first write,
        it reuses memory the process already has.)"""
        if self._array_device is None:
            return self.xp.empty(shape, dtype=dtype)
        return self.xp.empty(shape, dtype=dtype, device=self._array_device)

    def refuse_copy_out(self, to: Device) -> None:
        """Raise where this device's values cannot be copied to device ``to`` (the meta device has none)."""

    def to_host(self, arr: Any) -> np.ndarray:
        """A NumPy copy (or view, on the CPU) of a backend array."""
        if self.xp is np:
            return arr
        if self._array_device is not None:  # array_api_strict (whose arrays wrap NumPy's: a copy, as from a GPU)
            return np.array(arr.to_device(self.xp.Device("CPU_DEVICE")), copy=True)
        return arr.get()  # CuPy

    # -- what the array API leaves out ------------------------------------------
    def gather(self, a: Any, axis: int, index: Any) -> Any:
        """``take`` along ``axis`` with an index array of any shape (it replaces ``axis``)."""
        xp = self.xp
        flat = xp.take(a, xp.reshape(index, (-1,)), axis=axis)
        shape = tuple(a.shape)
        return xp.reshape(flat, shape[:axis] + tuple(index.shape) + shape[axis + 1 :])

    def scatter_add(self, g: Any, shape: tuple, axis: int, index: Any) -> Any:
        """The adjoint of :meth:`gather`: zeros of ``shape`` with ``g`` summed in at ``index``."""
        k = 1
        for s in index.shape:
            k *= s
        gshape = tuple(g.shape)
        g = self.xp.reshape(g, gshape[:axis] + (k,) + gshape[axis + index.ndim :])
        return self.index_add(shape, axis, self.xp.reshape(index, (-1,)), g)

    def slice_grad(self, g: Any, shape: tuple, key: Any) -> Any:
        """The adjoint of basic indexing: zeros of ``shape`` with ``g`` written at ``key``."""
        z = self.zeros(shape, g.dtype)
        z[key] = g
        return z

    def index_add(self, shape: tuple, axis: int, index: Any, values: Any) -> Any:
        """Zeros of ``shape`` with ``values`` summed in at ``index`` (1-D) along ``axis``.

        ``values`` has ``shape`` except ``len(index)`` along ``axis``. Repeated indices
        accumulate, which is what the gradient of a gather needs.
        """
        xp = self.xp
        out = self.zeros(shape, values.dtype)
        if xp is np:
            return _np_index_add(out, axis, index, values)
        if self._array_device is None:  # CuPy
            import cupyx  # noqa: PLC0415 - only where CuPy is in use

            cupyx.scatter_add(out, (slice(None),) * axis + (index,), values)
            return out
        # Portable form: each value selected into its one-hot row, then summed over the rows.
        # (A select, not a one-hot matrix product: 0 * inf would put NaN in every other slot.)
        n = shape[axis]
        vals = xp.moveaxis(values, axis, -1)  # (..., k)
        onehot = xp.reshape(index, (-1, 1)) == xp.reshape(xp.arange(n, device=self._array_device), (1, n))  # (k, n)
        picked = xp.where(onehot, vals[..., None], xp.zeros((), dtype=values.dtype, device=self._array_device))
        return out + xp.moveaxis(xp.sum(picked, axis=-2, dtype=values.dtype), -1, axis)


class MetaDevice(Device):
    """PyTorch's ``meta`` device: every array is a placeholder of :mod:`.meta` (a shape, a dtype
    and strides over one element of memory), made here and by ``Function.apply``."""

    __slots__ = ("_meta",)
    meta = True

    def __init__(self) -> None:
        from . import meta as _meta  # noqa: PLC0415 - the meta device's rules, loaded with it

        super().__init__("meta", np)
        self._meta = _meta
        ops = self.ops
        ops.reshape = _meta.reshape
        ops.matmul = _meta.matmul  # (shapes only: the work of a product or a reduction of the zeros is not done)
        for name in ("sum", "max", "min", "prod"):
            setattr(ops, name, _meta.reduction(getattr(ops, name)))
        ops.astype = self.astype
        ops.scalar = _keep_scalar
        ops.cache_block = None
        for name in ("full", "ones", "empty_like", "zeros_like", "ones_like", "full_like", "arange"):
            setattr(ops, name, functools.partial(self._made_by, getattr(np, name)))
        ops.asarray = self.asarray
        ops.meta_forward = _meta.forward  # (what Function.apply runs instead of an op's forward)

    def _made_by(self, make: Any, *args: Any, **kw: Any) -> Any:
        """A placeholder of the shape and dtype that NumPy's ``make`` would give."""
        a = make(*args, **kw)  # (small or broadcast: the factories of the namespace are called with shapes)
        return self._meta.placeholder(a.shape, a.dtype)

    def astype(self, x: Any, dtype: Any, copy: bool = True) -> Any:
        st = self._meta._tensor_strides(x)
        return self._meta.placeholder(
            x.shape, dtype, st if self._meta.is_non_overlapping_and_dense(x.shape, st) else None
        )

    def asarray(self, data: Any, dtype: Any = None) -> Any:
        a = data if hasattr(data, "shape") and hasattr(data, "dtype") else np.asarray(data)
        if isinstance(a, np.ndarray) and a.__class__ is not self._meta.MetaArray and a.size > 1:
            a = np.asarray(a)
        return self._meta.placeholder(a.shape, a.dtype if dtype is None else np.dtype(dtype))

    def copy(self, arr: Any) -> Any:
        st = self._meta._tensor_strides(arr)
        dense = self._meta.is_non_overlapping_and_dense(arr.shape, st) and all(s >= 0 for s in st)
        return self._meta.placeholder(arr.shape, arr.dtype, st if dense else None)

    def zeros(self, shape: tuple, dtype: Any) -> Any:
        return self._meta.placeholder(shape, dtype)

    def empty(self, shape: tuple, dtype: Any, strides: Any = None) -> Any:
        return self._meta.placeholder(shape, dtype, strides)

    def to_host(self, arr: Any) -> np.ndarray:
        """The placeholder as a NumPy array of zero steps (no memory): what host code computes
        on (a sort's order); the reads of values (``.item()``, ``.cpu()``, a copy out) refuse first."""
        return arr.view(np.ndarray)

    def refuse_copy_out(self, to: Device) -> None:
        """PyTorch's error of a copy of a meta tensor's values to a device that holds values."""
        if not to.meta:
            raise NotImplementedError(self._meta.NO_DATA)


def _np_index_add(out: np.ndarray, axis: int, index: np.ndarray, values: np.ndarray) -> np.ndarray:
    """``numpy.add.at(out, (..., index), values)``, by sorting: the values of each index
    summed in one ``add.reduceat`` over runs of equal indices (stable, so in the order
    ``add.at`` takes them), then one store per distinct index. An embedding's gradient
    (1024 rows into 64) takes 0.13 ms this way, 0.86 with ``add.at``."""
    if index.size == 0:
        return out
    index = np.where(index < 0, index + out.shape[axis], index)  # -1 and n - 1 are one row
    order = np.argsort(index, kind="stable")
    ordered = index[order]
    starts = np.flatnonzero(np.concatenate(([True], ordered[1:] != ordered[:-1])))
    sums = np.add.reduceat(np.take(values, order, axis=axis), starts, axis=axis)
    out[(slice(None),) * axis + (ordered[starts],)] = sums
    return out


def _exp_inplace(xp: Any) -> Any:
    exp = xp.exp

    def exp_inplace(x: Any) -> Any:
        return exp(x, out=x)

    return exp_inplace


def _fill_where(xp: Any) -> Any:
    copyto = xp.copyto

    def fill_where(x: Any, cond: Any, value: Any) -> Any:
        copyto(x, value, where=cond)
        return x

    return fill_where


def _fill_where_new(xp: Any) -> Any:
    where = xp.where

    def fill_where(x: Any, cond: Any, value: Any) -> Any:
        return where(cond, xp.asarray(value, dtype=x.dtype, device=x.device), x)

    return fill_where


def _identity(x: Any) -> Any:
    return x


# -- the registry ----------------------------------------------------------------
_devices: dict[str, Device] = {}
_DEVICE_ENV = "TINYGRAD_ATTN_DEVICE"
_default_name = os.environ.get(_DEVICE_ENV, "cpu")
_default_from_env = _DEVICE_ENV in os.environ  # until set_default_device: errors name the variable
_entered: list[tuple[str, bool]] = []  # the defaults that ``with device(...)`` blocks replaced, innermost last


def _normalize(name: str) -> str:
    name = str(name).strip().lower()
    if name == "cuda":
        return "cuda:0"
    if name == "array_api_strict:cpu_device":
        return "array_api_strict"
    if name == "cpu:0":  # PyTorch's spelling of the one CPU device
        return "cpu"
    return name


def get_device(name: Any = None) -> Device | int:
    """The :class:`Device` for a name such as ``"cpu"`` or ``"cuda:1"`` (default: current); of a
    tensor, PyTorch's ``torch.get_device(tensor)``: its CUDA index, -1 on the CPU."""
    if isinstance(name, Device):
        return name
    if hasattr(name, "_dev") and callable(getattr(name, "get_device", None)):  # (a tensor: no import of the class here)
        return name.get_device()
    if isinstance(name, device):
        name = str(name)
    elif isinstance(name, int) and not isinstance(name, bool):  # PyTorch: an index names a CUDA device
        name = f"cuda:{name}"
    elif isinstance(name, bytes):
        name = name.decode()
    if isinstance(name, str):  # (PyTorch's parser of a device string, with its errors)
        name = str(device(name))
    elif isinstance(name, (list, tuple, dict, set, float, complex)):  # (PyTorch's parser of a device: a TypeError)
        raise TypeError(
            f"device(): expected a device name such as 'cpu' or 'cuda:1', an index or a device, "
            f"got {type(name).__name__} {name!r}"
        )
    from_env = name is None and _default_from_env
    if name is None:
        name = _default_name
    key = _normalize(name)
    dev = _devices.get(key)
    if dev is None:
        try:
            dev = _make_device(key)
        except RuntimeError as e:
            if from_env:  # the user never typed this name in code: say where it came from
                raise RuntimeError(
                    f"the environment variable {_DEVICE_ENV}={name!r} names a device that cannot be used: {e}; "
                    f"set {_DEVICE_ENV} to one of {devices()} or unset it"
                ) from e
            raise
        _devices[key] = dev
    return dev


def _make_device(key: str) -> Device:
    kind, _, index = key.partition(":")
    if kind == "cpu" and not index:
        malloc.keep_by_default()  # large arrays reuse freed memory instead of fresh pages
        return Device("cpu", np)
    if kind == "cpu":
        raise RuntimeError(f"unknown device {key!r}: there is one CPU device, 'cpu' (also spelled 'cpu:0')")
    if kind == "cuda":
        cp = _import_cupy()
        n = int(index or 0)
        count = cp.cuda.runtime.getDeviceCount()
        if n >= count:
            raise RuntimeError(f"device 'cuda:{n}' asked for, but only {count} CUDA device(s) are present")
        from ..ops.cuda_kernels import CudaKernels  # noqa: PLC0415 - CUDA only

        dev = Device(f"cuda:{n}", cp)
        dev.ops.kernels = CudaKernels(cp)
        return dev
    if kind == "meta":
        if index:
            raise RuntimeError(f"unknown device {key!r}: there is one meta device, 'meta'")
        return MetaDevice()
    if kind == "array_api_strict":
        try:
            import array_api_strict as xps  # noqa: PLC0415 - a test backend, loaded on demand
        except ImportError as e:
            raise RuntimeError(
                "device 'array_api_strict' needs the array-api-strict package: pip install \"tinygrad_attn[dev]\""
            ) from e
        sub = index or "CPU_DEVICE"
        name = "array_api_strict" if sub == "CPU_DEVICE" else f"array_api_strict:{sub}"
        return Device(name, xps, xps.Device(sub))
    raise RuntimeError(
        f"unknown device {key!r}: use 'cpu', 'cuda', 'cuda:N', 'array_api_strict' or 'array_api_strict:device1'"
    )


class CudaUnavailableError(RuntimeError, AssertionError):
    """A CUDA device asked for where none can be used: PyTorch's CPU build asserts ("Torch not
    compiled with CUDA enabled"), the library raises a ``RuntimeError`` naming what is missing."""


def _import_cupy() -> Any:
    try:
        import cupy  # noqa: PLC0415 - CuPy is imported only when a CUDA device is asked for
    except ImportError as e:
        raise CudaUnavailableError(f"device 'cuda' needs CuPy, which is not installed: {_CUDA_INSTALL_HINT}") from e
    try:
        ok = cupy.cuda.is_available()
    except Exception:  # noqa: BLE001 - a broken driver reports as unavailable
        ok = False
    if not ok:
        raise CudaUnavailableError(
            "device 'cuda' needs a CUDA GPU: CuPy is installed but finds no GPU or driver "
            "(cupy.cuda.is_available() is False); use device 'cpu'"
        )
    return cupy


def is_available(name: str) -> bool:
    """Whether the device can be used here; never raises."""
    try:
        get_device(name)
    except RuntimeError:
        return False
    return True


def devices() -> list[str]:
    """The device names usable here, e.g. ``['cpu', 'cuda:0']``."""
    out = ["cpu"]
    try:
        cp = _import_cupy()
        out += [f"cuda:{i}" for i in range(cp.cuda.runtime.getDeviceCount())]
    except RuntimeError:
        pass
    return out


def set_default_device(name: str) -> None:
    """Make ``name`` the device new tensors go to when none is given."""
    global _default_name, _default_from_env
    get_device(name)  # fail now, at the call the user can see
    _default_name = _normalize(name)
    _default_from_env = False


def default_device() -> Device:
    return get_device(None)


def get_default_device() -> device:
    """The device new tensors go to when none is given, as PyTorch's handle (``device(type='cpu')``)."""
    return device(get_device(None).name)


def device_of_array(arr: Any) -> Device:
    """The :class:`Device` owning a backend array (NumPy, CuPy or array_api_strict)."""
    if isinstance(arr, np.ndarray):
        return get_device("cpu")
    mod = type(arr).__module__
    if mod.startswith("cupy"):
        return get_device(f"cuda:{arr.device.id}")
    if mod.startswith("array_api_strict"):
        sub = str(arr.device).split("'")[1] if "'" in str(arr.device) else "CPU_DEVICE"
        return get_device("array_api_strict" if sub == "CPU_DEVICE" else f"array_api_strict:{sub}")
    raise TypeError(f"not an array of a known backend: {type(arr).__name__}")
