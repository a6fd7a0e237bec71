"""The :class:`Tensor`: an array on a device, and the graph node that made it.

Methods are thin: each calls one primitive op from :mod:`tinygrad_attn.ops` or one
composite from :mod:`tinygrad_attn.functional`.
"""

from __future__ import annotations

import functools
import math
import operator
import weakref
from collections.abc import Iterator, Sequence
from typing import Any, NamedTuple

import numpy as np

from . import autograd, ops
from . import dtypes as _dtypes
from .autograd import Function, InvalidArgumentError, composite
from .backend import Device, default_device, device_of_array, get_device
from .backend import device as _device
from .ops.saved import saved_for_backward
from .random import draw, host_generator

Shape = tuple[int, ...]
_FLOAT_KINDS = "fc"

# The hottest methods call these directly: looking ``ops.Mul.apply`` up and binding it
# on every call is a measurable share of a small op's cost.
_add, _sub, _mul, _div = ops.Add.apply, ops.Sub.apply, ops.Mul.apply, ops.Div.apply
_exp, _tanh = ops.Exp.apply, ops.Tanh.apply


def _shape_args(shape: Sequence[Any]) -> Shape:
    """``f(2, 3)`` and ``f((2, 3))`` both mean the shape ``(2, 3)``."""
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = shape[0]
    try:
        return tuple(map(operator.index, shape))
    except TypeError:  # (a float size is refused, as PyTorch's; int() would round 2.7 to 2)
        raise TypeError(f"size must be a tuple of ints, got {tuple(shape)!r}") from None


class Size(tuple):
    """A shape, as ``x.size()`` returns it: a tuple (PyTorch's ``torch.Size``)."""

    __slots__ = ()

    def numel(self) -> int:
        return math.prod(self)

    def __repr__(self) -> str:
        return f"tga.Size({list(self)})"




class DimSpelling(NamedTuple):
    """How a call named the axes of an op whose meaning differs between PyTorch and NumPy."""

    dim: Any  # the axis or axes (None: all)
    keepdim: bool
    numpy: bool  # NumPy's meaning (NumPy's keywords were used); otherwise PyTorch's


def dim_spelling(op: str, dim: Any = None, keepdim: Any = None, *, axis: Any = None, keepdims: Any = None,
                 ddof: Any = None) -> DimSpelling:  # fmt: skip
    """The one rule for ``max min var std squeeze sort ...`` (method and free function):
    NumPy's meaning only with NumPy's keywords (``axis=``, ``keepdims=``, ``ddof=``); a
    positional axis or PyTorch's ``dim=``/``keepdim=`` give PyTorch's meaning."""
    if dim is not None and axis is not None:
        raise TypeError(f"{op}: got both axis={axis!r} and dim={dim!r}; pass one of them")
    numpy = axis is not None or keepdims is not None or ddof is not None
    keep = bool(keepdims) if keepdims is not None else bool(keepdim)
    return DimSpelling(dim if axis is None else axis, keep, numpy)


def _dim_alias(axis: Any, dim: Any, op: str) -> Any:
    """PyTorch's ``dim`` or NumPy's ``axis``, for ops where both mean the same (``sum``)."""
    if dim is None:
        return axis
    return dim_spelling(op, dim, axis=axis).dim


def _required_dim(axis: Any, dim: Any, op: str) -> Any:
    """``dim`` or its alias ``axis`` (PyTorch takes either), one of which must be given."""
    d = _dim_alias(axis, dim, op)
    if d is None:
        raise TypeError(f"{op}: missing the dim to run along (dim=)")
    return d


class DimensionError(IndexError, ValueError):
    """An axis out of range. PyTorch raises ``IndexError`` for it, NumPy a ``ValueError``;
    this is both, so code written for either catches it."""


class UnsupportedModeError(NotImplementedError, ValueError):
    """A mode the op does not have (``pad(mode="bogus")``): PyTorch's ``NotImplementedError``,
    and the ``ValueError`` the first round raised."""


@functools.lru_cache(maxsize=4096)
def _reshape_target(cur: Shape, shape: tuple) -> Shape:
    """``shape`` with its one ``-1`` resolved, checked against ``cur`` (cached: a model
    reshapes the same few ways on every step)."""
    shape = tuple(map(int, shape))
    n = math.prod(cur)
    if -1 in shape and shape.count(-1) == 1:
        known = math.prod(s for s in shape if s != -1)
        if known == 0 or n % known:
            raise InvalidArgumentError(f"reshape: cannot reshape a tensor of shape {cur} into {shape}")
        shape = tuple(n // known if s == -1 else s for s in shape)
    if math.prod(shape) != n:
        raise InvalidArgumentError(f"reshape: cannot reshape a tensor of shape {cur} into {shape}")
    return shape


@functools.cache
def _permutation(ndim: int, axes: tuple) -> tuple[int, ...] | None:
    """``axes`` checked and made non-negative; None for the identity. Cached: models
    permute with the same few axes on every step."""
    nd = max(ndim, 1)
    if sorted(int(a) % nd for a in axes) != list(range(ndim)):
        raise ValueError(f"permute: {axes} is not a permutation of the axes of a {ndim}-D tensor")
    perm = tuple(int(a) % nd for a in axes)
    return None if perm == tuple(range(ndim)) else perm


@functools.cache
def _swap_last_two(ndim: int) -> tuple[int, ...]:
    return (*range(ndim - 2), ndim - 1, ndim - 2)


class Tensor:
    """An n-dimensional array with reverse-mode autograd.

    >>> x = Tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    >>> (x * x).sum().backward()
    >>> x.grad.tolist()
    [[2.0, 4.0], [6.0, 8.0]]
    """

    # ``_uses``: how many recorded ops have taken this tensor as an input, exactly (see
    # autograd.run_backward, which orders the backward pass by it without a graph walk, and
    # autograd._release_unread, which compares it with the tensor's reference count).
    __slots__ = ("_data", "_dev", "grad", "requires_grad", "_ctx", "name", "_uses", "__weakref__")
    __array_ufunc__ = None  # ``ndarray + Tensor`` defers to Tensor.__radd__
    __hash__ = object.__hash__  # identity, so tensors can key dicts despite ``==``

    def __init__(
        self,
        data: Any = (),
        *size: int,
        requires_grad: bool = False,
        dtype: Any = None,
        device: Any = None,
        name: str | None = None,
    ) -> None:
        dev = get_device(device) if device is not None else None
        if size:  # PyTorch's legacy constructor: Tensor(2, 3) is a shape (one number stays 0-d data)
            data = _legacy_shape(data, size, dtype)
        if isinstance(data, Tensor):
            arr, src = data._data, data._dev
        elif isinstance(data, np.ndarray):
            arr, src = data, get_device("cpu")
            if dev is None:
                dev = default_device()
        elif isinstance(data, (bool, int, float, list, tuple)) or np.isscalar(data):
            arr = np.asarray(data)
            if dtype is None and arr.dtype != np.bool_:
                arr = arr.astype(np.float32)
            src = get_device("cpu")
            if dev is None:
                dev = default_device()
        else:
            try:
                src = device_of_array(data)
                arr = data
            except TypeError:
                if not hasattr(data, "__dlpack__"):
                    raise TypeError(
                        f"Tensor: cannot make a tensor from {type(data).__name__}; pass a number, a "
                        "nested list, a NumPy or CuPy array, or an object with __dlpack__"
                    ) from None
                t = Tensor.from_dlpack(data)
                arr, src = t._data, t._dev
        dev = dev or src
        if dev is src:
            arr = src.copy(arr)
        else:
            arr = dev.asarray(src.to_host(arr))
        if dtype is not None and dev.np_dtype(arr.dtype) != np.dtype(dtype):
            arr = dev.ops.astype(arr, dev.dtype(dtype))
        self._data = arr
        self._dev = dev
        self.grad: Tensor | None = None
        self._ctx: Function | None = None
        self.name = name
        self.requires_grad = False
        self._uses = 0
        if requires_grad:
            self.requires_grad_(True)
        if autograd._State.tracer is not None:  # made inside a traced function (see Tracer.write)
            autograd._State.tracer.made(self)

    @classmethod
    def _wrap(cls, data: Any, dev: Device) -> Tensor:
        """A tensor around an existing array, with no copy and no graph."""
        t = cls.__new__(cls)
        t._data = data
        t._dev = dev
        t.grad = None
        t.requires_grad = False
        t._ctx = None
        t.name = None
        t._uses = 0
        return t

    # Whether in-place changes of this tensor count in its memory's version (see
    # autograd.bump_version); False only for what ``.data`` hands out.
    _tracks_versions = True

    @property
    def data(self) -> Tensor:
        """This tensor's values as a tensor without history that shares its memory, as in
        PyTorch: writes through it (``p.data.fill_(0)``, ``p.data *= 0.5``) change this
        tensor and are not counted in its version, so autograd does not see them (an
        escape hatch: a backward that reads the old values reads the new ones). The
        backend array itself is ``t._data``."""
        return _Untracked._wrap(self._data, self._dev)

    @data.setter
    def data(self, value: Any) -> None:
        """``p.data = t`` makes ``p`` hold ``t``'s array (any shape, dtype or device), as in
        PyTorch; a NumPy or backend array is placed on ``p``'s device first."""
        if isinstance(value, Tensor):
            self._data, self._dev = value._data, value._dev
            return
        try:
            src = device_of_array(value)
        except TypeError:
            raise TypeError(
                f"data: assign a Tensor or an array to .data, not {type(value).__name__} (tensor of shape {self.shape})"
            ) from None
        self._data = value if src is self._dev else self._dev.asarray(src.to_host(value))

    # -- constructors -------------------------------------------------------------
    @classmethod
    def _host(cls, arr: np.ndarray, dtype: Any, device: Any, requires_grad: bool, name: str | None) -> Tensor:
        dev = get_device(device) if device is not None else default_device()
        dt = np.dtype(dtype) if dtype is not None else arr.dtype
        t = cls._wrap(dev.asarray(arr, dtype=dt), dev)
        t.name = name
        if requires_grad:
            t.requires_grad_(True)
        if autograd._State.tracer is not None:  # made inside a traced function (see Tracer.write)
            autograd._State.tracer.made(t)
        return t

    @classmethod
    def zeros(cls, *shape: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False,
              name: str | None = None) -> Tensor:  # fmt: skip
        return cls.full(_shape_args(shape), 0.0, dtype=dtype, device=device, requires_grad=requires_grad, name=name)

    @classmethod
    def ones(cls, *shape: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False,
             name: str | None = None) -> Tensor:  # fmt: skip
        return cls.full(_shape_args(shape), 1.0, dtype=dtype, device=device, requires_grad=requires_grad, name=name)

    @classmethod
    def full(cls, shape: Any, value: float, *, dtype: Any = None, device: Any = None, requires_grad: bool = False,
             name: str | None = None) -> Tensor:  # fmt: skip
        shape = (shape,) if isinstance(shape, int) else tuple(shape)
        # (no dtype: as PyTorch infers it from the value: bool, int64 or float32)
        dt = np.dtype(dtype) if dtype is not None else _scalar_dtype(value.item() if isinstance(value, np.generic) else value)
        return cls._host(np.full(shape, value, dtype=dt), None, device, requires_grad, name)

    @classmethod
    def randn(cls, *shape: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False,
              name: str | None = None) -> Tensor:  # fmt: skip
        """Standard normal draws, made on the host from the seeded generator and moved."""
        if autograd._State.tracer is not None and not requires_grad:  # an op: a replay draws again
            return draw("standard_normal", _shape_args(shape), dtype or np.float32, cls.zeros((), device=device))
        arr = host_generator().standard_normal(_shape_args(shape))
        return cls._host(arr, dtype or np.float32, device, requires_grad, name)

    @classmethod
    def rand(cls, *shape: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False,
             name: str | None = None) -> Tensor:  # fmt: skip
        """Uniform draws in [0, 1), made on the host from the seeded generator and moved."""
        if autograd._State.tracer is not None and not requires_grad:  # an op: a replay draws again
            return draw("random", _shape_args(shape), dtype or np.float32, cls.zeros((), device=device))
        arr = host_generator().random(_shape_args(shape))
        return cls._host(arr, dtype or np.float32, device, requires_grad, name)

    @classmethod
    def arange(cls, start: float, stop: float | None = None, step: float = 1, *, dtype: Any = None,
               device: Any = None, requires_grad: bool = False, name: str | None = None) -> Tensor:  # fmt: skip
        """``arange(n)`` or ``arange(start, stop, step)``: int64 when every argument is an
        integer, else float32, unless ``dtype`` says otherwise (as PyTorch's)."""
        whole = all(isinstance(v, (int, np.integer)) for v in (start, stop if stop is not None else 0, step))
        dt = dtype or (np.int64 if whole else np.float32)
        arr = np.arange(start, stop, step) if stop is not None else np.arange(start)  # (exact for ints)
        return cls._host(arr, dt, device, requires_grad, name)

    @classmethod
    def eye(cls, n: int, m: int | None = None, *, dtype: Any = None, device: Any = None,
            requires_grad: bool = False, name: str | None = None) -> Tensor:  # fmt: skip
        return cls._host(np.eye(n, m), dtype or np.float32, device, requires_grad, name)

    @classmethod
    def from_dlpack(cls, x: Any) -> Tensor:
        """A tensor sharing memory with any ``__dlpack__`` producer (CPU or CUDA)."""
        kind = x.__dlpack_device__()[0] if hasattr(x, "__dlpack_device__") else 1
        if kind == 2:  # kDLCUDA
            dev = get_device(f"cuda:{x.__dlpack_device__()[1]}")
            return cls._wrap(dev.xp.from_dlpack(x), dev)
        return cls._wrap(np.from_dlpack(x), get_device("cpu"))

    # -- attributes ---------------------------------------------------------------
    @property
    def shape(self) -> Shape:
        return tuple(self._data.shape)

    @property
    def ndim(self) -> int:
        return self._data.ndim

    @property
    def dtype(self) -> np.dtype:
        """The NumPy dtype, whatever the backend."""
        return self._dev.np_dtype(self._data.dtype)

    @property
    def device(self) -> _device:
        """Where the values live, as a ``tga.device`` (equal to its name: ``x.device == "cpu"``)."""
        return self._dev.public

    @property
    def is_cuda(self) -> bool:
        return self._dev.public.type == "cuda"

    def get_device(self) -> int:
        """The CUDA device index, -1 on the CPU (PyTorch's ``Tensor.get_device``)."""
        index = self._dev.public.index
        return index if isinstance(index, int) else -1

    @property
    def is_leaf(self) -> bool:
        return self._ctx is None

    @property
    def grad_fn(self) -> Function | None:
        """The graph node that made this tensor (``None`` for a leaf)."""
        return self._ctx

    def numel(self) -> int:
        return math.prod(self.shape)

    def size(self, axis: int | None = None, *, dim: int | None = None) -> Any:
        """The shape, or with an axis (``dim``) the length of that axis."""
        axis = _dim_alias(axis, dim, "size")
        return Size(self._data.shape) if axis is None else self.shape[axis]

    def __len__(self) -> int:
        if self.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self.shape[0]

    def requires_grad_(self, flag: bool = True) -> Tensor:
        if flag and self.dtype.kind not in _FLOAT_KINDS:
            raise RuntimeError(
                f"requires_grad: only floating-point tensors can require gradients, not {self.dtype}; "
                "convert with .astype('float32') first"
            )
        if not self.is_leaf and not flag:
            raise RuntimeError("requires_grad_: cannot turn off gradients of a non-leaf tensor; use .detach()")
        self.requires_grad = flag
        return self

    def retain_grad(self) -> Tensor:
        """Keep ``.grad`` for this non-leaf tensor after backward."""
        if autograd._State.retained is None:
            autograd._State.retained = {}
        registry, key = autograd._State.retained, id(self)

        def forget(ref: weakref.ref, registry: dict = registry, key: int = key) -> None:
            # The entry goes with the tensor: its id may be reused by a tensor that did not
            # ask, which would otherwise get a ``.grad`` (and keep it alive).
            if registry.get(key) is ref:
                del registry[key]

        registry[key] = weakref.ref(self, forget)
        return self

    def __repr__(self) -> str:
        extra = f", device='{self.device}'" if self.device != "cpu" else ""
        extra += ", requires_grad=True" if self.requires_grad else ""
        extra += f", grad_fn=<{self._ctx.op_name}>" if self._ctx is not None else ""
        if self._data.__class__ is autograd.FreedArray:
            body = f"<values freed {self._data.when}>, shape={self.shape}"
        else:
            body = np.array2string(self.numpy(), separator=", ", prefix="Tensor(")
        return f"Tensor({body}, dtype={self.dtype}{extra})"

    # -- conversion ---------------------------------------------------------------
    def numpy(self) -> np.ndarray:
        """A host (NumPy) copy of the data."""
        return self._read("numpy")

    def _read(self, what: str) -> np.ndarray:
        """A host copy of the data for ``what`` (the method reading it): every read of a
        tensor's values into Python passes here."""
        if autograd._State.tracer is not None:  # a Python decision on a traced value (tinygrad_attn.symbolic)
            autograd._State.tracer.check_read(self, what)
        if self._data.__class__ is autograd.FreedArray:
            raise RuntimeError(
                f"numpy: the values of this intermediate tensor (shape {self.shape}) were freed "
                f"{self._data.when}, as nothing but the graph held it; keep a reference to it (and "
                "call backward(retain_graph=True)) to read it afterwards"
            )
        return np.array(self._dev.to_host(self._data), copy=True)

    def item(self) -> Any:
        return self._item("item")

    def _item(self, what: str) -> Any:
        if self.numel() != 1:
            raise ValueError(f"item: only a one-element tensor converts to a Python number, not shape {self.shape}")
        return self._read(what).reshape(()).item()

    def tolist(self) -> Any:
        return self._read("tolist").tolist()

    def __float__(self) -> float:
        return float(self._item("__float__"))

    def __int__(self) -> int:
        return int(self._item("__int__"))

    def __bool__(self) -> bool:
        if self.numel() != 1:
            raise ValueError(f"the truth value of a tensor of shape {self.shape} is ambiguous; use .all() or .any()")
        return bool(self._item("__bool__"))

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        """``np.asarray(t)``: the values as a NumPy array (on the CPU the tensor's own memory,
        unless ``copy``). A tensor inside ``tga.trace`` raises ``TraceError``, as ``.numpy()``."""
        if autograd._State.tracer is not None:
            autograd._State.tracer.check_read(self, "__array__")
        if self._data.__class__ is autograd.FreedArray:
            self._read("__array__")  # (raises, saying when the values were freed)
        arr = self._dev.to_host(self._data)
        if copy is False and (arr is not self._data or (dtype is not None and np.dtype(dtype) != arr.dtype)):
            raise ValueError(
                f"__array__: copy=False, but a tensor on {self._dev.name} (dtype {self.dtype}) cannot be handed "
                f"to NumPy{' as ' + str(np.dtype(dtype)) if dtype is not None else ''} without a copy"
            )
        if dtype is not None:
            arr = arr.astype(dtype, copy=False)
        return np.array(arr, copy=True) if copy else arr

    def __dlpack__(self, *args: Any, **kw: Any) -> Any:
        return self._data.__dlpack__(*args, **kw)

    def __dlpack_device__(self) -> Any:
        return self._data.__dlpack_device__()

    def to(self, *args: Any, **kw: Any) -> Tensor:
        """This tensor on another device and/or in another dtype, with PyTorch's signatures:
        ``to(device=None, dtype=None, non_blocking=False, copy=False)``, ``to(dtype)``,
        ``to(other)`` (``other``'s device and dtype). Itself where nothing changes (unless
        ``copy``); differentiable."""
        dev, dtype, copy = _to_args(args, kw, "to")
        out = self
        if dev is not None and dev is not self._dev:
            out = Transfer.apply(out, args=(out._dev, dev))
        if dtype is not None:
            out = out.astype(dtype)
        if copy and out is self:
            out = self.clone()
        return out

    def cpu(self) -> Tensor:
        return self.to("cpu")

    def cuda(self, device: Any = None, non_blocking: bool = False) -> Tensor:
        """This tensor on a CUDA device (``device``: an index, a name or a ``tga.device``;
        default the first); a clear error where CUDA cannot be used."""
        if device is None:
            device = "cuda:0"
        elif isinstance(device, int) and not isinstance(device, bool):
            device = f"cuda:{device}"
        return self.to(device)

    def astype(self, dtype: Any) -> Tensor:
        """A copy in ``dtype``; gradients flow between floating dtypes."""
        dt = np.dtype(dtype)
        if dt == self.dtype:
            return self
        if dt.kind in _FLOAT_KINDS or autograd._State.tracer is not None:  # (traced: an op, never a constant)
            return ops.Cast.apply(self, args=self._dev.dtype(dt))
        return Tensor._wrap(self._dev.ops.astype(self._data, self._dev.dtype(dt)), self._dev)

    def float(self) -> Tensor:
        return self.astype(np.float32)

    def double(self) -> Tensor:
        return self.astype(np.float64)

    def detach(self) -> Tensor:
        """The same data, cut from the graph."""
        return Tensor._wrap(self._data, self._dev)

    def contiguous(self) -> Tensor:
        """Itself when its array is C-contiguous, else a copy, as PyTorch's (so writing to
        the result of ``x.T.contiguous()`` never changes ``x``)."""
        d = self._data
        flags = getattr(getattr(d, "_array", d), "flags", None)
        if flags is None or flags.c_contiguous:
            return self
        return self.clone()

    # -- autograd -----------------------------------------------------------------
    def backward(self, gradient: Any = None, retain_graph: bool | None = None, create_graph: bool = False,
                 inputs: Any = None, *, grad: Any = None) -> None:  # fmt: skip
        """Accumulate the gradient of this tensor into ``.grad`` of every leaf it depends on
        (PyTorch's parameters; ``grad=`` is the first round's name of ``gradient``)."""
        if inputs is not None:
            raise NotImplementedError("backward: inputs= is not supported; use tga.grad(output, inputs)")
        g = gradient if grad is None else grad
        keep = create_graph if retain_graph is None else bool(retain_graph)
        autograd.backward(self, g, retain_graph=keep, create_graph=create_graph)

    # -- operand conversion -------------------------------------------------------
    def _operand(self, other: Any) -> Any:
        """Python numbers stay constants; arrays and lists become tensors on our device.
        A NumPy scalar is a number, as in PyTorch (``np.float64(0.5)`` keeps a float32
        tensor float32), even where it subclasses Python's float."""
        if isinstance(other, np.generic):
            return other.item()
        if isinstance(other, (Tensor, int, float)):
            return other
        if isinstance(other, (list, tuple)):
            return Tensor(other, dtype=self.dtype, device=self._dev)
        return Tensor(other, device=self._dev)

    # -- arithmetic ---------------------------------------------------------------
    def __add__(self, other: Any) -> Tensor:
        return _add(*_promoted(self, other if other.__class__ in _PLAIN else self._operand(other)))

    def __radd__(self, other: Any) -> Tensor:
        return _add(*_promoted(other if other.__class__ in _PLAIN else self._operand(other), self))

    def __sub__(self, other: Any) -> Tensor:
        return _sub(*_promoted(self, other if other.__class__ in _PLAIN else self._operand(other)))

    def __rsub__(self, other: Any) -> Tensor:
        return _sub(*_promoted(other if other.__class__ in _PLAIN else self._operand(other), self))

    def __mul__(self, other: Any) -> Tensor:
        return _mul(*_promoted(self, other if other.__class__ in _PLAIN else self._operand(other)))

    def __rmul__(self, other: Any) -> Tensor:
        return _mul(*_promoted(other if other.__class__ in _PLAIN else self._operand(other), self))

    def __truediv__(self, other: Any) -> Tensor:
        return _div(*_promoted_div(self, other if other.__class__ in _PLAIN else self._operand(other)))

    def __rtruediv__(self, other: Any) -> Tensor:
        return _div(*_promoted_div(other if other.__class__ in _PLAIN else self._operand(other), self))

    def __pow__(self, other: Any) -> Tensor:
        other = self._operand(other)
        if self.dtype == np.bool_ and (other.__class__ is bool or getattr(other, "dtype", None) == np.bool_):
            return _bool_pow(self, other)
        base, other = _promoted(self, other)
        if isinstance(other, Tensor):
            return ops.Pow.apply(base, other)
        if isinstance(other, int) and other < 0 and base.dtype.kind in "biu":
            raise InvalidArgumentError(
                f"pow: integers to negative integer powers are not allowed ({base.dtype} tensor ** {other}); "
                "convert the tensor with .float() first"
            )
        return ops.PowScalar.apply(base, args=other)

    def __rpow__(self, other: Any) -> Tensor:
        # (Pow with a constant base, not exp(t * log(base)): that has no log for base <= 0,
        # where 0 ** t and (-2) ** t are still defined)
        if self.dtype == np.bool_ and other.__class__ is bool:
            return _bool_pow(other, self)
        return ops.Pow.apply(*_promoted(self._operand(other), self))

    def __neg__(self) -> Tensor:
        return ops.Neg.apply(self)

    def __pos__(self) -> Tensor:
        return self

    def __matmul__(self, other: Any) -> Tensor:
        return ops.Matmul.apply(self, self._operand(other))

    def __rmatmul__(self, other: Any) -> Tensor:
        return ops.Matmul.apply(self._operand(other), self)

    # -- comparisons: boolean, no gradient ------------------------------------------
    def __lt__(self, other: Any) -> Tensor:
        return Less.apply(*_ordered_operands(self, self._operand(other)))

    def __le__(self, other: Any) -> Tensor:
        return LessEqual.apply(*_ordered_operands(self, self._operand(other)))

    def __gt__(self, other: Any) -> Tensor:
        return Greater.apply(*_ordered_operands(self, self._operand(other)))

    def __ge__(self, other: Any) -> Tensor:
        return GreaterEqual.apply(*_ordered_operands(self, self._operand(other)))

    def __eq__(self, other: Any) -> Any:  # type: ignore[override]
        if other is None:
            return False
        other = self._operand(other)
        a = _promote_for_scalar(self, other)
        return Equal.apply(a, _number_for(a, other))

    def __ne__(self, other: Any) -> Any:  # type: ignore[override]
        if other is None:
            return True
        other = self._operand(other)
        a = _promote_for_scalar(self, other)
        return NotEqual.apply(a, _number_for(a, other))

    def __invert__(self) -> Tensor:
        return LogicalNot.apply(self)

    def __and__(self, other: Any) -> Tensor:
        return LogicalAnd.apply(self, self._operand(other))

    def __or__(self, other: Any) -> Tensor:
        return LogicalOr.apply(self, self._operand(other))

    def all(self, axis: Any = None, keepdims: bool = False, *, dim: Any = None, keepdim: bool | None = None) -> Tensor:
        axes = self._axes(_dim_alias(axis, dim, "all"), "all")
        return Tensor._wrap(self._dev.ops.all(self._data, axis=axes, keepdims=keepdims or bool(keepdim)), self._dev)

    def any(self, axis: Any = None, keepdims: bool = False, *, dim: Any = None, keepdim: bool | None = None) -> Tensor:
        axes = self._axes(_dim_alias(axis, dim, "any"), "any")
        return Tensor._wrap(self._dev.ops.any(self._data, axis=axes, keepdims=keepdims or bool(keepdim)), self._dev)

    # -- elementwise --------------------------------------------------------------
    def exp(self) -> Tensor:
        return _exp(self if self._data.dtype.__class__ in _FLOATS else _as_float(self))

    def log(self) -> Tensor:
        return ops.Log.apply(self if self._data.dtype.__class__ in _FLOATS else _as_float(self))

    def sqrt(self) -> Tensor:
        return ops.Sqrt.apply(self if self._data.dtype.__class__ in _FLOATS else _as_float(self))

    def tanh(self) -> Tensor:
        return _tanh(self if self._data.dtype.__class__ in _FLOATS else _as_float(self))

    def sigmoid(self) -> Tensor:
        return ops.Sigmoid.apply(self if self._data.dtype.__class__ in _FLOATS else _as_float(self))

    def relu(self) -> Tensor:
        return ops.Relu.apply(self)

    def abs(self) -> Tensor:
        return ops.Abs.apply(self)

    def erf(self) -> Tensor:
        return ops.Erf.apply(self if self._data.dtype.__class__ in _FLOATS else _as_float(self))

    def gelu(self, approximate: str = "none") -> Tensor:
        return _functional.gelu(self, approximate=approximate)

    def maximum(self, other: Any) -> Tensor:
        a, other = _promoted(self, self._operand(other))
        return ops.Maximum.apply(a, _number_for(a, other))

    def minimum(self, other: Any) -> Tensor:
        a, other = _promoted(self, self._operand(other))
        return ops.Minimum.apply(a, _number_for(a, other))

    def clip(self, lo: Any = None, hi: Any = None) -> Tensor:
        """``lo`` below ``lo``, ``hi`` above ``hi``. The gradient is 1 on the whole closed
        interval, bounds included, as PyTorch's ``clamp`` (not the 1/2 that maximum and
        minimum give ties)."""
        if lo is None and hi is None:
            raise InvalidArgumentError("clip: give at least one of min and max (both are None)")
        out = _promote_for_scalar(_promote_for_scalar(self, lo), hi)
        if lo is not None:
            out = where(out < lo, lo, out)
        if hi is not None:
            out = where(out > hi, hi, out)
        return saved_for_backward(out, self, lo, hi)  # (PyTorch's clamp keeps them: the version check follows)

    # -- reductions ---------------------------------------------------------------
    def _axes(self, axis: Any, op: str) -> tuple[int, ...] | None:
        if axis is None:
            return None
        nd = self.ndim
        axes = (axis,) if isinstance(axis, int) else tuple(axis)
        if nd == 0:  # PyTorch takes axis 0 and -1 of a 0-d tensor: the reduction over no axes
            for a in axes:
                if a not in (0, -1):
                    raise DimensionError(f"{op}: axis {a} is out of range for a 0-d tensor (use 0, -1 or None)")
            return ()
        out = []
        for a in axes:
            if not -nd <= a < max(nd, 1):
                raise DimensionError(f"{op}: axis {a} is out of range for a tensor of shape {self.shape}")
            out.append(a % max(nd, 1))
        return tuple(out)

    def sum(self, axis: Any = None, keepdims: bool = False, *, dim: Any = None, keepdim: bool | None = None,
            dtype: Any = None) -> Tensor:  # fmt: skip
        if dtype is not None:  # PyTorch's: the sum taken in ``dtype``
            self = self.astype(dtype)  # noqa: PLW0642
        if dim is not None or keepdim is not None:
            axis, keepdims = _dim_alias(axis, dim, "sum"), keepdims or bool(keepdim)
        return ops.Sum.apply(self, args=(self._axes(axis, "sum"), keepdims))

    def max(self, dim: Any = None, keepdim: bool = False, *, axis: Any = None, keepdims: bool | None = None) -> Any:
        """PyTorch's ``max``: ``x.max()`` the largest value, ``x.max(1)`` (``dim=1``) the
        ``(values, indices)`` pair, ``x.max(other)`` (a tensor) the elementwise maximum.
        NumPy's keywords give NumPy's result: ``x.max(axis=1)`` the values (see
        :func:`dim_spelling`)."""
        if dim is None and axis is None and keepdims is None:  # (the common whole-tensor max, directly)
            return ops.Max.apply(self, args=(None, bool(keepdim)))
        return _tf.max(self, dim, keepdim, axis=axis, keepdims=keepdims)

    def min(self, dim: Any = None, keepdim: bool = False, *, axis: Any = None, keepdims: bool | None = None) -> Any:
        """As :meth:`max`, for the smallest."""
        if dim is None and axis is None and keepdims is None:
            return ops.Min.apply(self, args=(None, bool(keepdim)))
        return _tf.min(self, dim, keepdim, axis=axis, keepdims=keepdims)

    def mean(self, axis: Any = None, keepdims: bool = False, *, dim: Any = None, keepdim: bool | None = None) -> Tensor:
        if dim is not None or keepdim is not None:
            axis, keepdims = _dim_alias(axis, dim, "mean"), keepdims or bool(keepdim)
        return _mean(self, axis, keepdims)

    def var(self, dim: Any = None, unbiased: bool | None = None, keepdim: bool = False, *, correction: Any = None,
            axis: Any = None, keepdims: bool | None = None, ddof: int | None = None) -> Tensor:  # fmt: skip
        """Variance, as :func:`tinygrad_attn.var` (PyTorch's unbiased one unless NumPy's keywords are used)."""
        return _tf.var(self, dim, unbiased, keepdim, correction=correction, axis=axis, keepdims=keepdims, ddof=ddof)

    def std(self, dim: Any = None, unbiased: bool | None = None, keepdim: bool = False, *, correction: Any = None,
            axis: Any = None, keepdims: bool | None = None, ddof: int | None = None) -> Tensor:  # fmt: skip
        """The square root of :meth:`var` (the same defaults); its gradient where the spread is 0 is 0."""
        return _tf.std(self, dim, unbiased, keepdim, correction=correction, axis=axis, keepdims=keepdims, ddof=ddof)

    def logsumexp(self, axis: Any = None, keepdims: bool = False, *, dim: Any = None,
                  keepdim: bool | None = None) -> Tensor:  # fmt: skip
        out = _logsumexp(self, _dim_alias(axis, dim, "logsumexp"), keepdims or bool(keepdim))
        return saved_for_backward(out, self, output=True)  # (PyTorch's keeps both: the version check follows)

    def argmax(self, axis: int | None = None, keepdims: bool = False, *, dim: int | None = None,
               keepdim: bool | None = None) -> Tensor:  # fmt: skip
        return _arg_reduce(self, "argmax", _dim_alias(axis, dim, "argmax"), keepdims or bool(keepdim))

    def argmin(self, axis: int | None = None, keepdims: bool = False, *, dim: int | None = None,
               keepdim: bool | None = None) -> Tensor:  # fmt: skip
        return _arg_reduce(self, "argmin", _dim_alias(axis, dim, "argmin"), keepdims or bool(keepdim))

    # -- shape --------------------------------------------------------------------
    def reshape(self, *shape: Any) -> Tensor:
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        cur = tuple(self._data.shape)
        shape = _reshape_target(cur, shape)
        if shape == cur:
            return self
        return ops.Reshape.apply(self, args=shape)

    view = reshape

    def permute(self, *axes: Any) -> Tensor:
        if len(axes) == 1 and isinstance(axes[0], (tuple, list)):
            axes = tuple(axes[0])
        try:
            perm = _permutation(self._data.ndim, axes)
        except ValueError:
            raise InvalidArgumentError(
                f"permute: {axes} is not a permutation of the axes of a tensor of shape {self.shape}"
            ) from None
        return self if perm is None else ops.Permute.apply(self, args=perm)

    def transpose(self, a0: int = -2, a1: int = -1, *, dim0: int | None = None, dim1: int | None = None) -> Tensor:
        """Swap two axes (the last two by default); PyTorch's ``dim0=``/``dim1=`` name them too."""
        a0 = a0 if dim0 is None else dim0
        a1 = a1 if dim1 is None else dim1
        if self._axes((a0, a1), "transpose") == ():  # 0-d: nothing to swap, as in PyTorch
            return self
        axes = list(range(self.ndim))
        a0, a1 = self._axes((a0, a1), "transpose")
        if a0 == a1:
            return self
        axes[a0], axes[a1] = axes[a1], axes[a0]
        return ops.movement.Transpose.apply(self, args=tuple(axes))

    @property
    def mT(self) -> Tensor:  # noqa: N802 - the array API's name
        nd = self._data.ndim
        if nd < 2:
            raise ValueError(f"mT: needs at least 2 dimensions, the tensor has shape {self.shape}")
        return ops.movement.MatrixTranspose.apply(self, args=_swap_last_two(nd))

    @property
    def T(self) -> Tensor:  # noqa: N802 - NumPy's name
        if self.ndim != 2:
            raise ValueError(f"T: defined for 2-D tensors only, the tensor has shape {self.shape}; use .mT or .permute")
        return ops.movement.TwoDTranspose.apply(self, args=(1, 0))

    def expand(self, *shape: Any) -> Tensor:
        """Broadcast to ``shape``; ``-1`` keeps a dimension."""
        shape = _shape_args(shape)
        lead = len(shape) - self.ndim
        if lead < 0:
            raise ValueError(f"expand: cannot expand shape {self.shape} to fewer dimensions {shape}")
        shape = tuple(self.shape[i - lead] if s == -1 else s for i, s in enumerate(shape))
        if shape == self.shape:
            return self
        for i, s in enumerate(self.shape):
            if s != 1 and s != shape[i + lead]:
                raise ValueError(f"expand: cannot expand shape {self.shape} to {shape}")
        return ops.Expand.apply(self, args=shape)

    broadcast_to = expand

    def squeeze(self, dim: Any = None, *, axis: Any = None) -> Tensor:
        """Drop axes of length 1: all of them, or those of ``dim`` that have length 1
        (PyTorch's meaning: others are left as they are). NumPy's ``axis=`` raises for an
        axis whose length is not 1."""
        s = dim_spelling("squeeze", dim, axis=axis)
        if s.dim is None:
            return self.reshape(tuple(n for n in self.shape if n != 1))
        axes = self._axes(s.dim, "squeeze")
        if s.numpy:
            for a in axes:
                if self.shape[a] != 1:
                    raise InvalidArgumentError(
                        f"squeeze: axis {a} has size {self.shape[a]}, not 1 (shape {self.shape}); "
                        "squeeze(dim) leaves such an axis as it is"
                    )
        axes = tuple(a for a in axes if self.shape[a] == 1)
        if not axes:
            return self
        return self.reshape(tuple(n for i, n in enumerate(self.shape) if i not in axes))

    def unsqueeze(self, axis: int | None = None, *, dim: int | None = None) -> Tensor:
        axis = _dim_alias(axis, dim, "unsqueeze")
        if axis is None:
            raise TypeError("unsqueeze: give the position of the new axis (dim=)")
        nd = self.ndim + 1
        if not -nd <= axis < nd:
            raise ValueError(f"unsqueeze: axis {axis} is out of range for a result of {nd} dimensions")
        axis %= nd
        return self.reshape(self.shape[:axis] + (1,) + self.shape[axis:])

    def flatten(self, start: int = 0, end: int = -1, *, start_dim: int | None = None,
                end_dim: int | None = None) -> Tensor:  # fmt: skip
        start = start if start_dim is None else start_dim
        end = end if end_dim is None else end_dim
        if self.ndim == 0:
            return self.reshape(1)
        start, end = start % self.ndim, end % self.ndim
        # (the size spelled out, not -1: a shape with a 0 has no single -1 to infer)
        return self.reshape(self.shape[:start] + (math.prod(self.shape[start : end + 1]),) + self.shape[end + 1 :])

    def chunk(self, n: int, axis: int | None = None, *, dim: int | None = None) -> list[Tensor]:
        """Split into ``n`` pieces along ``axis`` (the last may be smaller), as PyTorch does."""
        axis = _dim_alias(axis, dim, "chunk")
        (axis,) = self._axes(0 if axis is None else axis, "chunk")
        if not self.shape[axis]:  # an empty axis: one empty piece, as PyTorch's
            return [self]
        size = -(-self.shape[axis] // n)
        lead = (slice(None),) * axis
        return [self[lead + (slice(i, i + size), Ellipsis)] for i in range(0, self.shape[axis], size)]

    def split(self, split_size: Any, dim: int = 0, *, axis: int | None = None) -> Any:
        """Pieces of ``split_size`` along ``dim`` (the last may be smaller), or with a list,
        one piece per size in it (as PyTorch's ``split``)."""
        return _tf.split(self, split_size, dim if axis is None else axis)  # (one implementation: an empty axis gives one empty piece)

    def __getitem__(self, key: Any) -> Tensor:
        from .indexing import getitem  # noqa: PLC0415 - indexing builds on this module

        return getitem(self, key)

    def __iter__(self) -> Iterator[Tensor]:
        for i in range(len(self)):
            yield self[i]

    # -- in-place ops ---------------------------------------------------------------
    # Each writes its result into this tensor's own array (views of it see the change) and
    # bumps the array's version; where a gradient is wanted it is recorded and the
    # tensor's history rebased, as PyTorch does (see autograd.apply_inplace).
    @property
    def _version(self) -> int:
        """How many in-place changes this tensor's memory has had (its views share it)."""
        v = autograd.version_of(self._data)
        return 0 if v is None else v.count

    def add_(self, other: Any, alpha: float = 1) -> Tensor:
        """``self += alpha * other``, in place."""
        o = self._operand(other)
        return autograd.apply_inplace(self, "add_", lambda x, o: x + (o * alpha if alpha != 1 else o), o,
                                      reads_old=False)  # fmt: skip

    def sub_(self, other: Any, alpha: float = 1) -> Tensor:
        """``self -= alpha * other``, in place."""
        o = self._operand(other)
        return autograd.apply_inplace(self, "sub_", lambda x, o: x - (o * alpha if alpha != 1 else o), o,
                                      reads_old=False)  # fmt: skip

    def mul_(self, other: Any) -> Tensor:
        o = self._operand(other)
        return autograd.apply_inplace(self, "mul_", Tensor.__mul__, o, reads_old=Tensor._needs_grad(o))

    def div_(self, other: Any) -> Tensor:  # (a division's backward reads the divisor, and x if the divisor needs grad)
        o = self._operand(other)
        return autograd.apply_inplace(self, "div_", Tensor.__truediv__, o, reads_old=Tensor._needs_grad(o))

    def fill_(self, value: Any) -> Tensor:
        """Every element becomes ``value`` (a number or a one-element tensor), in place."""
        v = value.reshape(()) if isinstance(value, Tensor) else value
        return autograd.apply_inplace(self, "fill_", lambda x, v: where(True, v, x), v, reads_old=False)

    def zero_(self) -> Tensor:
        return self.fill_(0)

    def copy_(self, src: Any) -> Tensor:
        """This tensor's elements become ``src``'s (broadcast to its shape, cast to its dtype,
        moved from any device), in place."""
        src = src if isinstance(src, Tensor) else Tensor(src, device=self._dev)
        if src._dev is not self._dev:
            src = src.to(self._dev)
        return autograd.apply_inplace(self, "copy_", lambda x, s: where(True, s.astype(x.dtype), x), src,
                                      reads_old=False)  # fmt: skip

    def clamp_(self, min: Any = None, max: Any = None) -> Tensor:  # noqa: A002 - PyTorch's names
        if min is None and max is None:
            raise ValueError("clamp_: at least one of min and max must be given")
        return autograd.apply_inplace(self, "clamp_", lambda x: x.clip(min, max))

    clip_ = clamp_

    def masked_fill_(self, mask: Any, value: Any) -> Tensor:
        """``value`` where ``mask`` is True, in place."""
        v = value.reshape(()) if isinstance(value, Tensor) else value
        return autograd.apply_inplace(self, "masked_fill_", lambda x, v: x.masked_fill(mask, v), v, reads_old=False)

    # ``x += y``: in place, as in PyTorch. Where that cannot be recorded (a view of another
    # tensor's memory, while gradients are recorded) Python gets a new tensor back, so
    # ``x[i] += y`` still works: it writes that back with ``__setitem__``.
    def __iadd__(self, other: Any) -> Tensor:
        o = self._operand(other)
        return autograd.apply_inplace(self, "add_", Tensor.__add__, o, operator=True, reads_old=False)

    def __isub__(self, other: Any) -> Tensor:
        o = self._operand(other)
        return autograd.apply_inplace(self, "sub_", Tensor.__sub__, o, operator=True, reads_old=False)

    def __imul__(self, other: Any) -> Tensor:
        o = self._operand(other)
        return autograd.apply_inplace(self, "mul_", Tensor.__mul__, o, operator=True, reads_old=Tensor._needs_grad(o))

    def __itruediv__(self, other: Any) -> Tensor:
        o = self._operand(other)
        return autograd.apply_inplace(self, "div_", Tensor.__truediv__, o, operator=True, reads_old=Tensor._needs_grad(o))

    @staticmethod
    def _needs_grad(x: Any) -> bool:
        return isinstance(x, Tensor) and x.requires_grad

    def __setitem__(self, key: Any, value: Any) -> None:
        """``x[key] = value`` for any key ``x[key]`` takes; recorded like the in-place ops."""
        from .indexing import setitem  # noqa: PLC0415 - indexing builds on this module

        setitem(self, key, value)

    # -- selection ----------------------------------------------------------------
    def masked_fill(self, mask: Any, value: float) -> Tensor:
        """``value`` where the boolean ``mask`` is True, this tensor elsewhere."""
        kind = mask_dtype(mask)
        if kind != np.bool_:  # as PyTorch: a float or 0/1 mask does not say which entries to fill
            raise TypeError(
                f"masked_fill: mask must be boolean (True = fill with {value}), got {kind} for a tensor of shape "
                f"{self.shape}; for a 0/1 mask pass (mask != 0)"
            )
        if isinstance(value, (bool, int, float, np.generic)):  # a number takes this tensor's dtype, as in PyTorch
            value = self.dtype.type(value).item()
        return where(mask, value, self)

    def tril(self, k: int = 0) -> Tensor:
        return tril(self, k)

    def triu(self, k: int = 0) -> Tensor:
        return triu(self, k)

    # -- neural-net functions (defined in tinygrad_attn.functional, imported at the end) --
    def softmax(self, axis: int | None = None, *, dim: int | None = None) -> Tensor:
        if dim is not None:
            axis = _dim_alias(axis, dim, "softmax")
        return _functional.softmax(self, -1 if axis is None else axis)

    def log_softmax(self, axis: int | None = None, *, dim: int | None = None) -> Tensor:
        if dim is not None:
            axis = _dim_alias(axis, dim, "log_softmax")
        return _functional.log_softmax(self, -1 if axis is None else axis)

    def layer_norm(self, weight: Tensor | None = None, bias: Tensor | None = None, eps: float = 1e-5) -> Tensor:
        return _functional.layer_norm(self, self.shape[-1:], weight, bias, eps)

    def dropout(self, p: float = 0.5, training: bool = True) -> Tensor:
        return _functional.dropout(self, p, training)

    # -- pickling and copying (io) ------------------------------------------------------
    def __reduce__(self) -> tuple:
        """Pickle the values (a host copy), dtype, device name, ``requires_grad``, name and
        ``.grad``; never the graph. A non-leaf pickles detached, as a leaf (as in PyTorch)."""
        return (_rebuild_tensor, (type(self), self._dev.to_host(self._data), self._dev.name, self.requires_grad,
                                  self.name, self.grad))  # fmt: skip

    def __deepcopy__(self, memo: dict) -> Tensor:
        """A new leaf with copied values and gradient on the same device. As PyTorch, a
        tensor made by an op (not a leaf) refuses: copy ``t.detach()`` instead."""
        if self._ctx is not None:
            raise RuntimeError(
                f"deepcopy: the tensor of shape {self.shape} was made by an op ({type(self._ctx).__name__}), not by the user; "
                "only graph leaves can be deep-copied (as in PyTorch): copy t.detach() instead"
            )
        import copy  # noqa: PLC0415 - only when copying

        out = _rebuild_tensor(type(self), self._dev.copy(self._data), self._dev, self.requires_grad, self.name, None)
        memo[id(self)] = out
        if self.grad is not None:
            out.grad = copy.deepcopy(self.grad, memo)
        return out

    # -- the PyTorch face ----------------------------------------------------------
    # PyTorch's method names and signatures, so code written for torch runs unchanged.
    # The work is in tinygrad_attn.tensor_functions (also the ``tga.*`` free functions).
    def dim(self) -> int:
        return self.ndim

    def nelement(self) -> int:
        return self.numel()

    def is_floating_point(self) -> bool:
        return self.dtype.kind in "fc"

    def element_size(self) -> int:
        return self.dtype.itemsize

    def view_as(self, other: Tensor) -> Tensor:
        return self.reshape(other.shape)

    def reshape_as(self, other: Tensor) -> Tensor:
        return self.reshape(other.shape)

    def expand_as(self, other: Tensor) -> Tensor:
        return self.expand(other.shape)

    def repeat(self, *sizes: Any) -> Tensor:
        """Tiled ``sizes[i]`` times along each axis (PyTorch's ``repeat``, NumPy's ``tile``)."""
        return _tf.repeat(self, *sizes)

    def t(self) -> Tensor:
        """The transpose of a matrix (a 0-D or 1-D tensor is returned as it is)."""
        return self if self.ndim < 2 else self.T

    def clone(self) -> Tensor:
        """A copy with its own array; gradients flow back through it."""
        if self.requires_grad:
            return _add(self, 0)
        return Tensor._wrap(self._dev.copy(self._data), self._dev)

    def type_as(self, other: Tensor) -> Tensor:
        return self.astype(other.dtype)

    def new_tensor(self, data: Any, dtype: Any = None) -> Tensor:
        return Tensor(data, dtype=dtype or self.dtype, device=self._dev)

    def new_zeros(self, *size: Any, dtype: Any = None) -> Tensor:
        return Tensor.zeros(*size, dtype=dtype or self.dtype, device=self._dev)

    def new_ones(self, *size: Any, dtype: Any = None) -> Tensor:
        return Tensor.ones(*size, dtype=dtype or self.dtype, device=self._dev)

    def new_full(self, size: Any, fill_value: Any, dtype: Any = None) -> Tensor:
        return Tensor.full(size, fill_value, dtype=dtype or self.dtype, device=self._dev)

    # arithmetic by name
    def add(self, other: Any, *, alpha: Any = 1) -> Tensor:
        return self + (other if alpha == 1 else other * alpha)

    def sub(self, other: Any, *, alpha: Any = 1) -> Tensor:
        return self - (other if alpha == 1 else other * alpha)

    def mul(self, other: Any) -> Tensor:
        return self * other

    def div(self, other: Any, *, rounding_mode: str | None = None) -> Tensor:
        """``self / other``; ``rounding_mode="floor"`` or ``"trunc"`` rounds the quotient."""
        if rounding_mode is None:
            return self / other
        if rounding_mode == "floor":
            return self // other
        if rounding_mode == "trunc":
            a, b = _promoted(self, self._operand(other))
            if (a if isinstance(a, Tensor) else b).dtype.kind in "biu":
                # integers stay integers, as in PyTorch: the floor quotient, one nearer zero
                # where the signs differ and the division is not exact
                q = a // b
                return where((q < 0) & (q * b != a), q + 1, q)
            q = a / b
            return ops.Sign.apply(q) * ops.Floor.apply(q.abs())
        raise InvalidArgumentError(f"div: rounding_mode must be None, 'floor' or 'trunc', not {rounding_mode!r}")

    def pow(self, exponent: Any) -> Tensor:
        return self**exponent

    def neg(self) -> Tensor:
        return -self

    def square(self) -> Tensor:
        return self * self

    def reciprocal(self) -> Tensor:
        return 1.0 / self

    def rsqrt(self) -> Tensor:
        return 1.0 / self.sqrt()

    def matmul(self, other: Any) -> Tensor:
        return self @ other

    def mm(self, other: Tensor) -> Tensor:
        return _tf.mm(self, other)

    def bmm(self, other: Tensor) -> Tensor:
        return _tf.bmm(self, other)

    def dot(self, other: Tensor) -> Tensor:
        return _tf.dot(self, other)

    def __floordiv__(self, other: Any) -> Tensor:
        return _floor_divide(self, self._operand(other))

    def __rfloordiv__(self, other: Any) -> Tensor:
        return _floor_divide(self._operand(other), self)

    def __mod__(self, other: Any) -> Tensor:
        return _remainder(self, self._operand(other))

    def __rmod__(self, other: Any) -> Tensor:
        return _remainder(self._operand(other), self)

    def __abs__(self) -> Tensor:
        return self.abs()

    def clamp(self, min: Any = None, max: Any = None) -> Tensor:  # noqa: A002 - PyTorch's names
        """Limited to ``[min, max]`` (either may be None)."""
        return self.clip(min, max)

    clamp_min = clip

    # comparisons by name
    def eq(self, other: Any) -> Tensor:
        return self == other

    def ne(self, other: Any) -> Tensor:
        return self != other

    def lt(self, other: Any) -> Tensor:
        return self < other

    def le(self, other: Any) -> Tensor:
        return self <= other

    def gt(self, other: Any) -> Tensor:
        return self > other

    def ge(self, other: Any) -> Tensor:
        return self >= other

    # elementwise
    def sign(self) -> Tensor:
        return ops.Sign.apply(self)

    def sin(self) -> Tensor:
        return ops.Sin.apply(self if self._data.dtype.__class__ in _FLOATS else _as_float(self))

    def cos(self) -> Tensor:
        return ops.Cos.apply(self if self._data.dtype.__class__ in _FLOATS else _as_float(self))

    def floor(self) -> Tensor:
        return ops.Floor.apply(self)

    def ceil(self) -> Tensor:
        return ops.Ceil.apply(self)

    def round(self, decimals: int = 0) -> Tensor:
        """Half to even, as PyTorch and NumPy round."""
        return _tf.round(self, decimals)

    # reductions and scans
    def amax(self, dim: Any = (), keepdim: bool = False) -> Tensor:
        return _tf.amax(self, dim, keepdim)

    def amin(self, dim: Any = (), keepdim: bool = False) -> Tensor:
        return _tf.amin(self, dim, keepdim)

    def prod(self, dim: int | None = None, keepdim: bool = False, *, dtype: Any = None, axis: Any = None) -> Tensor:
        """The product over ``dim`` (all elements when None); exact with zeros. ``axis=`` is
        PyTorch's alias of ``dim``."""
        return _tf.prod(self if dtype is None else self.astype(dtype), _dim_alias(axis, dim, "prod"), keepdim)

    def cumsum(self, dim: int | None = None, *, dtype: Any = None, axis: Any = None) -> Tensor:
        return _tf.cumsum(self, _required_dim(axis, dim, "cumsum"), dtype=dtype)

    def cumprod(self, dim: int | None = None, *, dtype: Any = None, axis: Any = None) -> Tensor:
        return _tf.cumprod(self if dtype is None else self.astype(dtype), _required_dim(axis, dim, "cumprod"))

    def norm(self, p: Any = "fro", dim: Any = None, keepdim: bool = False, dtype: Any = None) -> Tensor:
        return _tf.norm(self, p, dim, keepdim, dtype=dtype)

    # indexing by index tensors
    def gather(self, dim: int, index: Any) -> Tensor:
        return _tf.gather(self, dim, index)

    def scatter(self, dim: int, index: Any, src: Any = None, *, value: Any = None, reduce: str | None = None) -> Tensor:
        return _tf.scatter(self, dim, index, src, value=value, reduce=reduce)

    def scatter_add(self, dim: int, index: Any, src: Tensor) -> Tensor:
        return _tf.scatter_add(self, dim, index, src)

    def index_select(self, dim: int, index: Any) -> Tensor:
        return _tf.index_select(self, dim, index)

    def sort(self, dim: int = -1, descending: bool = False, stable: bool = False, *, axis: Any = None) -> Any:
        """``(values, indices)``, as PyTorch's ``sort`` (NumPy's ``axis=``: the values)."""
        return _tf.sort(self, dim, descending, stable, axis=axis)

    def argsort(self, dim: int = -1, descending: bool = False, stable: bool = False) -> Tensor:
        return _tf.argsort(self, dim, descending)

    def topk(self, k: int, dim: int = -1, largest: bool = True, sorted: bool = True) -> Any:  # noqa: A002
        """``(values, indices)`` of the ``k`` largest (``largest=False``: smallest) along ``dim``."""
        return _tf.topk(self, k, dim, largest, sorted)

    # shape
    def unbind(self, dim: int = 0) -> tuple[Tensor, ...]:
        return _tf.unbind(self, dim)

    def flip(self, *axes: Any, dims: Any = None) -> Tensor:
        """Reversed along each axis given (``x.flip(0, 1)``, ``x.flip([0])``, ``x.flip(dims=(0,))``)."""
        if dims is None:
            dims = tuple(axes[0]) if len(axes) == 1 and isinstance(axes[0], (tuple, list)) else axes
        return _tf.flip(self, dims)

    def roll(self, shifts: Any, dims: Any = None) -> Tensor:
        return _tf.roll(self, shifts, dims)

    def narrow(self, dim: int, start: int, length: int) -> Tensor:
        (d,) = self._axes(dim, "narrow")
        return self[(slice(None),) * d + (slice(start, start + length),)]

    def select(self, dim: int, index: int) -> Tensor:
        (d,) = self._axes(dim, "select")
        return self[(slice(None),) * d + (index,)]

    def repeat_interleave(self, repeats: Any, dim: int | None = None) -> Tensor:
        return _tf.repeat_interleave(self, repeats, dim)

    def outer(self, other: Tensor) -> Tensor:
        return _tf.outer(self, other)

    def log1p(self) -> Tensor:
        return _tf.log1p(self)

    def expm1(self) -> Tensor:
        return _tf.expm1(self)

    def isnan(self) -> Tensor:
        return _tf.isnan(self)

    def isinf(self) -> Tensor:
        return _tf.isinf(self)

    def isfinite(self) -> Tensor:
        return _tf.isfinite(self)

    # dtype conversions (last in the class body: these names shadow the builtins in it)
    def long(self) -> Tensor:
        return self.astype(np.int64)

    def int(self) -> Tensor:
        return self.astype(np.int32)

    def half(self) -> Tensor:
        return self.astype(np.float16)

    def bool(self) -> Tensor:
        return self.astype(np.bool_)

    def type(self, dtype: Any = None) -> Any:
        """With a dtype, this tensor converted to it; without, the dtype's name."""
        return str(self.dtype) if dtype is None else self.astype(dtype)


_PLAIN = frozenset((Tensor, int, float))  # operands that need no conversion


def _rebuild_tensor(cls: type, arr: Any, device: Any, requires_grad: bool, name: str | None,
                    grad: Tensor | None) -> Tensor:  # fmt: skip
    """The other half of ``Tensor.__reduce__``: a leaf of class ``cls`` (Tensor, Parameter)."""
    t = cls.__new__(cls)
    Tensor.__init__(t, arr, device=device, requires_grad=requires_grad, name=name)
    t.grad = grad
    return t


class _Untracked(Tensor):
    """What ``Tensor.data`` hands out: a tensor without history sharing the memory, whose
    in-place changes are not counted in the memory's version (PyTorch's ``.data``)."""

    __slots__ = ()
    _tracks_versions = False


def _legacy_shape(first: Any, more: tuple, dtype: Any) -> np.ndarray:
    """``Tensor(2, 3)``: zeros of that shape (PyTorch leaves them uninitialised)."""
    shape = (first, *more)
    if not all(isinstance(n, (int, np.integer)) and not isinstance(n, bool) and n >= 0 for n in shape):
        raise TypeError(
            f"Tensor: more than one positional argument is read as a shape (PyTorch's legacy constructor), "
            f"which needs non-negative ints; got {shape}. Pass data as one list: Tensor([...])"
        )
    return np.zeros(tuple(int(n) for n in shape), dtype=np.float32 if dtype is None else np.dtype(dtype))


def _is_dtype(x: Any) -> bool:
    return isinstance(x, np.dtype) or (isinstance(x, type) and issubclass(x, (np.generic, float, int, bool)))


def _to_args(args: tuple, kw: dict, op: str) -> tuple[Device | None, Any, bool]:
    """The (device, dtype, copy) that ``Tensor.to``'s three signatures ask for."""
    dev = kw.pop("device", None)
    dtype = kw.pop("dtype", None)
    copy = kw.pop("copy", False)
    kw.pop("non_blocking", None)  # (every transfer here is synchronous)
    kw.pop("memory_format", None)  # (arrays here have one layout)
    if kw:
        raise TypeError(f"{op}: unexpected keyword argument(s) {sorted(kw)}; PyTorch's are device, dtype, "
                        "non_blocking, copy, memory_format")  # fmt: skip
    rest = list(args)
    if rest and isinstance(rest[0], Tensor):  # to(other, non_blocking=False, copy=False)
        other = rest.pop(0)
        dev, dtype = other._dev, other.dtype
    elif rest and not _is_dtype(rest[0]):  # to(device, dtype=None, non_blocking=False, copy=False)
        dev = rest.pop(0)
    if rest and _is_dtype(rest[0]):
        dtype = rest.pop(0)
    if rest and isinstance(rest[0], bool):  # non_blocking
        rest.pop(0)
    if rest and isinstance(rest[0], bool):
        copy = rest.pop(0)
    if rest:
        raise TypeError(
            f"{op}: cannot read arguments {args!r}; use to(device), to(dtype), to(device, dtype) or to(other_tensor)"
        )
    return (get_device(dev) if dev is not None else None), dtype, bool(copy)


# -- ops that need the Tensor class ------------------------------------------------
class Transfer(Function):
    """Move to another device (``args = (src, dst)``); the gradient moves back."""

    __slots__ = ()
    name = "to"
    reads_values = False  # backward reads devices only

    @classmethod
    def apply(cls, *inputs: Any, args: Any = None) -> Tensor:
        out = super().apply(*inputs, args=args)
        out._dev = args[1]
        return out

    def forward(self, xp, a):
        src, dst = self.args
        return dst.asarray(src.to_host(a))

    def backward(self, g, ns, inputs, out):
        src, dst = self.args
        if isinstance(g, Tensor):
            return (g.to(src),)
        return (src.asarray(dst.to_host(g)),)


def _compare(name: str, fn: Any) -> type[Function]:
    def forward(self, xp, a, b=None):
        return fn(xp, a, b)

    return type(name, (Function,), {"__slots__": (), "differentiable": False, "forward": forward,
                                    "name": name.lower()})  # fmt: skip


Less = _compare("Less", lambda xp, a, b: a < b)
LessEqual = _compare("LessEqual", lambda xp, a, b: a <= b)
Greater = _compare("Greater", lambda xp, a, b: a > b)
GreaterEqual = _compare("GreaterEqual", lambda xp, a, b: a >= b)
Equal = _compare("Equal", lambda xp, a, b: a == b)
NotEqual = _compare("NotEqual", lambda xp, a, b: a != b)
LogicalAnd = _compare("LogicalAnd", lambda xp, a, b: a & b)
LogicalOr = _compare("LogicalOr", lambda xp, a, b: a | b)
LogicalNot = _compare("LogicalNot", lambda xp, a, b: ~a)
_IntFloorDivide = _compare("FloorDivide", lambda xp, a, b: a // b)
_IntRemainder = _compare("Remainder", lambda xp, a, b: a % b)


# -- free functions of the public API ---------------------------------------------
_KIND_RANK = {"b": 0, "u": 1, "i": 1, "f": 2, "c": 3}


# NumPy's floating dtypes: a float op (exp, sqrt, ...) of any other dtype computes in float32
# (by the dtype's class: comparing another namespace's dtype with NumPy's warns)
_FLOATS = frozenset(type(np.dtype(d)) for d in ("float16", "float32", "float64", "complex64", "complex128"))


def _as_float(t: Tensor) -> Tensor:
    """``t`` for a float op: bools and integers in PyTorch's default float (float32), as
    ``torch.tensor(2).exp()`` (NumPy would compute them in float64)."""
    return t if t.dtype.kind in "fc" else t.astype(np.float32)


def _scalar_dtype(value: Any) -> np.dtype:
    """The dtype PyTorch gives a tensor made of a lone Python number."""
    if isinstance(value, bool):
        return np.dtype(np.bool_)
    return np.dtype(np.int64) if isinstance(value, int) else np.dtype(np.float32)


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
            return a, b
    elif b.__class__ is Tensor:  # a number on the left: 2.0 * x
        ca = a.__class__
        if (ca is float and _kind(b) in "fc") or (ca is int and _kind(b) != "b"):
            return a, b
    # torch.result_type's rules (dtypes.result_type): a 0-d tensor or a number decides
    # only where its category is higher (int32 + tensor(1) stays int32)
    dt = _dtypes.result_type(a, b)
    if isinstance(a, Tensor) and a.dtype != dt:
        a = a.astype(dt)
    if isinstance(b, Tensor) and b.dtype != dt:
        b = b.astype(dt)
    return a, b


def _promoted_div(a: Any, b: Any) -> tuple[Any, Any]:
    """As :func:`_promoted`, and true division of integers (or bools) in float32, PyTorch's
    default dtype (NumPy divides them in float64)."""
    a, b = _promoted(a, b)
    t = a if isinstance(a, Tensor) else b
    if t.dtype.kind in "biu":
        return (a.astype(np.float32) if isinstance(a, Tensor) else a), (b.astype(np.float32) if isinstance(b, Tensor) else b)
    return a, b


def _number_for(t: Tensor, value: Any) -> Any:
    """A Python bool beside a numeric tensor as the number it stands for (the array API
    combines Python bools with bool arrays only)."""
    if value.__class__ is bool and t.dtype.kind != "b":
        return int(value) if t.dtype.kind in "iu" else float(value)
    return value


def _ordered_operands(a: Tensor, b: Any) -> tuple[Any, Any]:
    """The operands of ``<``, ``<=``, ``>``, ``>=``: promoted as PyTorch does, and bools as
    0/1 (the array API orders numbers only)."""
    a = _promote_for_scalar(a, b)
    if a.dtype == np.bool_:
        a = a.astype(np.uint8)
    if isinstance(b, Tensor) and b.dtype == np.bool_:
        b = b.astype(np.uint8)
    return a, _number_for(a, b)


def _where_operand(x: Any, like: Tensor) -> Any:
    """Python numbers stay (constants without gradient); anything else becomes a tensor on
    ``like``'s device, in its own dtype (lists as ``Tensor`` makes them)."""
    if isinstance(x, (Tensor, bool, int, float)):
        return x
    if isinstance(x, np.generic):
        return x.item()
    return Tensor(x, device=like._dev)


def mask_dtype(mask: Any) -> np.dtype:
    """The NumPy dtype of a mask given as a tensor, any backend's array, or nested lists
    (of ints it is int64, where ``Tensor(...)`` would make float32 of them)."""
    if isinstance(mask, Tensor) or not hasattr(mask, "dtype"):
        return mask.dtype if isinstance(mask, Tensor) else np.asarray(mask).dtype
    try:
        return np.dtype(mask.dtype)
    except TypeError:  # an array API namespace's own dtype objects
        return Tensor(mask).dtype


def where(cond: Any, a: Any, b: Any) -> Tensor:
    """``a`` where ``cond`` is True, else ``b``; differentiable in ``a`` and ``b``.

    Dtypes follow PyTorch: a Python number takes the other side's dtype unless it is of a
    higher kind (``where(c, int_tensor, 0.5)`` is float32); two numbers give float32,
    int64 or bool; two tensors of different kinds give the higher kind's dtype.
    """
    like = next((t for t in (a, b, cond) if isinstance(t, Tensor)), None)
    if like is None:
        like = Tensor(cond)
    if not isinstance(cond, Tensor):
        cond = Tensor(cond, device=like._dev)
    if cond.dtype != np.bool_:
        cond = cond != 0
    a, b = _where_operand(a, like), _where_operand(b, like)
    ta, tb = isinstance(a, Tensor), isinstance(b, Tensor)
    if ta and tb:
        ka, kb = _KIND_RANK.get(a.dtype.kind, 0), _KIND_RANK.get(b.dtype.kind, 0)
        if ka < kb:
            a = a.astype(b.dtype)
        elif kb < ka:
            b = b.astype(a.dtype)
    elif ta:
        a = _promote_for_scalar(a, b)
        b = _number_for(a, b)
    elif tb:
        b = _promote_for_scalar(b, a)
        a = _number_for(b, a)
    else:  # two numbers: the first becomes a tensor of their common dtype
        dt = max(_scalar_dtype(a), _scalar_dtype(b), key=lambda d: _KIND_RANK[d.kind])
        a = Tensor._wrap(like._dev.asarray(np.asarray(a, dtype=dt)), like._dev)
    return ops.Where.apply(cond, a, b)


def _tri(x: Tensor, k: int, lower: bool) -> Tensor:
    if x.ndim < 2:
        raise ValueError(f"{'tril' if lower else 'triu'}: needs at least 2 dimensions, got shape {x.shape}")
    n, m = x.shape[-2:]
    keep = np.tri(n, m, k, dtype=bool) if lower else ~np.tri(n, m, k - 1, dtype=bool)
    zero = x.dtype.type(0).item()  # a zero of x's own kind: bool and int tensors stay so
    return where(Tensor(keep, device=x._dev), x, zero)


def tril(x: Tensor, k: int = 0) -> Tensor:
    """The lower triangle (the last two axes); above diagonal ``k`` becomes 0."""
    return _tri(x, k, True)


def triu(x: Tensor, k: int = 0) -> Tensor:
    """The upper triangle (the last two axes); below diagonal ``k`` becomes 0."""
    return _tri(x, k, False)


def cat(tensors: Sequence[Tensor], axis: int | None = None, *, dim: int | None = None) -> Tensor:
    """Join tensors along an existing axis (``axis`` or PyTorch's ``dim``; 0 by default)."""
    if dim is not None:
        axis = _dim_alias(axis, dim, "cat")
    axis = 0 if axis is None else axis
    tensors = list(tensors)
    if not tensors:
        raise ValueError("cat: needs at least one tensor")
    nd = tensors[0].ndim
    if nd == 0:  # (PyTorch's RuntimeError, still the first round's ValueError)
        raise InvalidArgumentError("cat: 0-d tensors cannot be concatenated; use stack, or reshape them to (1,)")
    if not -nd <= axis < nd:
        raise DimensionError(f"cat: axis {axis} is out of range for tensors of {nd} dimensions")
    return ops.Cat.apply(*tensors, args=axis % nd)


def stack(tensors: Sequence[Tensor], axis: int | None = None, *, dim: int | None = None) -> Tensor:
    """Join tensors along a new axis (``axis`` or PyTorch's ``dim``; 0 by default)."""
    if dim is not None:
        axis = _dim_alias(axis, dim, "stack")
    axis = 0 if axis is None else axis
    tensors = list(tensors)
    if not tensors:
        raise ValueError("stack: needs at least one tensor")
    shapes = {t.shape for t in tensors}
    if len(shapes) > 1:
        raise ValueError(f"stack: all tensors need one shape, got {sorted(shapes)}")
    nd = tensors[0].ndim + 1
    if not -nd <= axis < nd:
        raise ValueError(f"stack: axis {axis} is out of range for a result of {nd} dimensions")
    return cat([t.unsqueeze(axis) for t in tensors], axis % nd)


def _arg_reduce(x: Tensor, op: str, axis: int | None, keepdims: bool) -> Tensor:
    """``argmax``/``argmin``: each its own reduction (argmin is not argmax(-x), which
    overflows at an integer minimum and is undefined for bool); a 0-d tensor's one element
    is at index 0. An op (``ArgExtreme``), so a traced program recomputes it."""
    axes = x._axes(axis, op)
    if axes == ():
        return Tensor._wrap(x._dev.asarray(np.zeros((), np.int64)), x._dev)
    if x.numel() == 0 and (axes is None or x.shape[axes[0]] == 0):
        raise ValueError(f"{op}: cannot take the {op} over an empty axis (shape {x.shape}, axis {axis})")
    pick = op[3:]
    if axes is None:
        return ops.ArgExtreme.apply(x.detach().reshape(-1), args=(0, pick)).reshape(())
    a = axes[0]
    out = ops.ArgExtreme.apply(x, args=(a, pick))  # the axis kept, length 1
    return out if keepdims else out.reshape(out.shape[:a] + out.shape[a + 1 :])


def _sqrt_of_variance(v: Tensor) -> Tensor:
    """``sqrt(v)`` for a standard deviation: where the spread is 0 its gradient is 0, as
    PyTorch's ``std`` (not ``0 * 1/(2 * 0)`` = NaN: sqrt's slope at 0 is infinite)."""
    zero = v == 0
    return where(zero, 0.0, where(zero, 1.0, v).sqrt())


# -- composites used by Tensor methods (their definitions: primitives only) --------
def _bool_pow(a: Any, b: Any) -> Tensor:
    """``bool ** bool`` as PyTorch: a tensor to a Python bool stays bool (``x ** True`` is
    ``x``, ``x ** False`` all True); two bool tensors, or a bool to a bool tensor, raise."""
    if isinstance(a, Tensor) and not isinstance(b, Tensor):
        return a.clone() if b else Tensor.ones(a.shape, dtype=np.bool_, device=a._dev)
    raise UnsupportedModeError("pow: not implemented for bool ** bool tensors (PyTorch: \"pow\" not implemented for "
                               "'Bool'); convert with .long() or .float() first")  # fmt: skip


def _floor_divide(a: Any, b: Any) -> Tensor:
    """Python's (and PyTorch's) ``//``: rounds toward minus infinity; integers stay integers."""
    a, b = _promoted(a, b)
    like = a if isinstance(a, Tensor) else b
    if like.dtype.kind in "fc":
        return ops.Floor.apply(a / b)
    return _IntFloorDivide.apply(a, b)


def _remainder(a: Any, b: Any) -> Tensor:
    """Python's (and PyTorch's) ``%``: the sign of the divisor; ``a - floor(a / b) * b``."""
    a, b = _promoted(a, b)
    like = a if isinstance(a, Tensor) else b
    if like.dtype.kind in "fc":
        out = a - ops.Floor.apply(a / b).detach() * b
        return saved_for_backward(out, a, b) if isinstance(a, Tensor) and isinstance(b, Tensor) else out
    return _IntRemainder.apply(a, b)


def _reduced_count(x: Tensor, axis: Any) -> int:
    axes = x._axes(axis, "mean")
    return x.numel() if axes is None else math.prod(x.shape[a] for a in axes)


def _inverse_count(n: float) -> float:
    """``1 / n`` for a mean's divisor; ``inf`` for ``n <= 0``, so that an empty mean is
    0 * inf = NaN and a variance with ``correction >= N`` is inf (NaN if all equal), as
    PyTorch's are (rather than a silent finite number)."""
    return 1.0 / n if n > 0 else math.inf


@composite("mean")
def _mean(x: Tensor, axis: Any = None, keepdims: bool = False) -> Tensor:
    return x.sum(axis, keepdims) * _inverse_count(_reduced_count(x, axis))


@composite("var")
def _var(x: Tensor, axis: Any = None, keepdims: bool = False, correction: int = 0) -> Tensor:
    d = x - x.mean(axis, keepdims=True)
    n = _reduced_count(x, axis) - correction
    return (d * d).sum(axis, keepdims) * _inverse_count(n)


@composite("logsumexp")
def _logsumexp(x: Tensor, axis: Any = None, keepdims: bool = False) -> Tensor:
    axes = x._axes(axis, "logsumexp")
    if _reduced_count(x, axis) == 0:  # log(0) = -inf, as PyTorch; there is no max to shift by
        return x.exp().sum(axes, keepdims).log()
    # A constant shift keeps exp from overflowing; an infinite max shifts by 0 instead, so
    # that logsumexp([inf, 0]) is inf and of [-inf, -inf] is -inf (not inf - inf = NaN).
    m = x.max(axes, keepdims=True).detach()
    m = where(m.abs() == math.inf, 0.0, m)
    out = (x - m).exp().sum(axes, keepdims=True).log() + m
    return out if keepdims else out.squeeze(axes if axes is not None else tuple(range(x.ndim)))


# -- the namespace that makes backward formulas record a graph -------------------
class _TensorNamespace:
    """The array-namespace functions backward formulas use, as tensor ops.

    With ``create_graph=True`` the engine passes this instead of the device's array
    namespace, so every gradient step is itself recorded and differentiable.
    """

    @staticmethod
    def const(x: Any) -> Any:
        return x if isinstance(x, Tensor) else Tensor._wrap(x, device_of_array(x))

    @staticmethod
    def scalar(value: Any, like: Any) -> Any:
        return value

    exp = staticmethod(Tensor.exp)
    log = staticmethod(Tensor.log)
    sqrt = staticmethod(Tensor.sqrt)
    tanh = staticmethod(Tensor.tanh)
    abs = staticmethod(Tensor.abs)
    matmul = staticmethod(Tensor.__matmul__)

    @staticmethod
    def matrix_transpose(x: Tensor) -> Tensor:
        return x.mT

    @staticmethod
    def sign(x: Tensor) -> Tensor:
        return (x > 0).astype(x.dtype) - (x < 0).astype(x.dtype)

    @staticmethod
    def astype(x: Tensor, dtype: Any) -> Tensor:
        return x.astype(dtype if isinstance(dtype, np.dtype) else x._dev.np_dtype(dtype))

    @staticmethod
    def sum(x: Tensor, axis: Any = None, keepdims: bool = False) -> Tensor:
        return x.sum(axis, keepdims)

    @staticmethod
    def reshape(x: Tensor, shape: Any) -> Tensor:
        return x.reshape(shape)

    @staticmethod
    def broadcast_to(x: Tensor, shape: Any) -> Tensor:
        return x.expand(shape)

    @staticmethod
    def permute_dims(x: Tensor, axes: Any) -> Tensor:
        return x.permute(axes)

    @staticmethod
    def where(cond: Any, a: Any, b: Any) -> Tensor:
        return where(cond, a, b)

    @staticmethod
    def zeros_like(x: Tensor) -> Tensor:
        t = Tensor._wrap(x._dev.ops.zeros_like(x._data), x._dev)
        if autograd._State.tracer is not None:  # made inside a traced function (see Tracer.write)
            autograd._State.tracer.made(t)
        return t

    @staticmethod
    def slice_grad(g: Tensor, shape: Any, key: Any) -> Tensor:
        return ops.SliceGrad.apply(g, args=(shape, key))

    @staticmethod
    def gather(x: Tensor, axis: int, index: Any) -> Tensor:
        return ops.Gather.apply(x, args=(axis, index))

    @staticmethod
    def scatter_add(g: Tensor, shape: Any, axis: int, index: Any) -> Tensor:
        return ops.ScatterAdd.apply(g, args=(shape, axis, index))

    @staticmethod
    def stack(xs: Sequence[Tensor], axis: int) -> Tensor:
        return stack(xs, axis)


TENSOR_NS = _TensorNamespace()
autograd.Tensor = Tensor
autograd.TENSOR_NS = TENSOR_NS

# Last: functional builds on this module. (A module reference rather than an import inside
# each method, which cost about a microsecond per call.)
from . import functional as _functional  # noqa: E402
from . import tensor_functions as _tf  # noqa: E402


# -- PyTorch's further math and in-place variants: Tensor methods installed from the tables of
# tinygrad_attn/math_functions.py (acos ... unflatten) and inplace_variants.py (exp_ ... uniform_)
def _install_tables() -> None:
    from . import inplace_variants, math_functions  # noqa: PLC0415 - both build on this module

    math_functions._install(Tensor)
    inplace_variants.install(Tensor)


_install_tables()
