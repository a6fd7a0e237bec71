"""The :class:`Tensor`: an array on a device, and the graph node that made it.

Methods are thin: each calls one primitive op from :mod:`tinygrad_attn.ops` or one
composite from :mod:`tinygrad_attn.functional`.
"""

from __future__ import annotations

import math
import operator
import weakref
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from . import autograd, dims, ops
from . import dtypes as _dtypes
from .autograd import Function, InvalidArgumentError
from .backend import Device, default_device, device_of_array, get_device
from .backend import device as _device
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


class UnsupportedModeError(NotImplementedError, ValueError):
    """A mode the op does not have (``pad(mode="bogus")``): PyTorch's ``NotImplementedError``,
    and the ``ValueError`` the first round raised."""


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
        axis = dims.alias(axis, dim, "size")
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
        return out

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


def cat(tensors: Sequence[Tensor], axis: int | None = None, *, dim: int | None = None) -> Tensor:
    """Join tensors along an existing axis (``axis`` or PyTorch's ``dim``; 0 by default)."""
    if dim is not None:
        axis = dims.alias(axis, dim, "cat")
    axis = 0 if axis is None else axis
    tensors = list(tensors)
    if not tensors:
        raise ValueError("cat: needs at least one tensor")
    if tensors[0].ndim == 0:  # (PyTorch's RuntimeError, still the first round's ValueError)
        raise InvalidArgumentError("cat: 0-d tensors cannot be concatenated; use stack, or reshape them to (1,)")
    return ops.Cat.apply(*tensors, args=dims.one(tensors[0].shape, axis, "cat"))


def stack(tensors: Sequence[Tensor], axis: int | None = None, *, dim: int | None = None) -> Tensor:
    """Join tensors along a new axis (``axis`` or PyTorch's ``dim``; 0 by default)."""
    if dim is not None:
        axis = dims.alias(axis, dim, "stack")
    axis = 0 if axis is None else axis
    tensors = list(tensors)
    if not tensors:
        raise ValueError("stack: needs at least one tensor")
    shapes = {t.shape for t in tensors}
    if len(shapes) > 1:
        raise ValueError(f"stack: all tensors need one shape, got {sorted(shapes)}")
    axis = dims.new_axis(tensors[0].shape, axis, "stack")
    return cat([t.unsqueeze(axis) for t in tensors], axis)


# -- composites used by Tensor methods (their definitions: primitives only) --------
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
        return a - ops.Floor.apply(a / b).detach() * b
    return _IntRemainder.apply(a, b)


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
