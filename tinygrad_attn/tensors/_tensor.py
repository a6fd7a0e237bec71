"""The :class:`Tensor`: an array on a device, and the graph node that made it.

This module is the class core (construction, attributes, conversion, ``backward``, the
arithmetic operators, in-place ops, pickling) and the free functions ``where cat stack``.
Methods are thin: each calls one primitive op from :mod:`tinygrad_attn.ops`. The rest of
the methods are installed by the package's ``install_methods`` from the modules that
implement them (the method *is* the free function), so this module imports none of them.
"""

from __future__ import annotations

import math
import operator
import weakref
from collections.abc import Iterator, Sequence
from typing import Any, NoReturn

import numpy as np

from .. import ops
from ..engine import arguments as _arguments
from ..engine import autocast as _autocast
from ..engine import layout as _layout
from ..engine import overrides as _overrides
from ..engine.backward import backward
from ..engine.bfloat16 import BFLOAT16 as _BFLOAT16
from ..engine.declare import public
from ..engine.forward_grads import tangent_of
from ..engine.function import (
    BackwardNode,
    FreedArray,
    Function,
    InvalidArgumentError,
    backward_node,
    grad_fn_name,
    register_tensor,
)
from ..engine.function import note_grad_switched_on as _note_grad_switched_on
from ..engine.quiet import quiet
from ..engine.spellings import keeps_old_spellings
from ..engine.switches import _State, check_host_read, is_inference_tensor, refuse_inference_change, tracing
from ..engine.switches import mark_inference as _mark_inference
from ..engine.versions import share_with_numpy, version_of
from ..engine.warn import warn as _user_warn
from ..ops.tensor_namespace import TensorNamespace
from ..ops.transfer import Transfer
from ..runtime.backend import Device, default_device, device_of_array, get_device
from ..runtime.backend import device as _device
from . import dtypes as _dtypes
from . import promotion as _promotion
from .dtypes import (
    _TORCH_DTYPES,
    UnsupportedDtypeError,
    check_fill_value,
    fill_value_in,
    get_default_dtype,
    torch_dtype,
)
from .dtypes import dtype as _TorchDtype
from .dtypes import result_type as _result_type
from .mutation.inplace import apply_inplace, refuse_internal_overlap
from .printing import host_tensor_repr
from .promotion import (  # noqa: F401 - (mask_dtype: re-exported for functional)
    _FLOATS,
    _KIND_RANK,
    _as_float,
    _kind,
    _number_for,
    _ordered_operands,
    _promote_for_scalar,
    _promoted,
    _promoted_div,
    _scalar_dtype,
    _where_operand,
    mask_dtype,
)
from .shape import dims

Shape = tuple[int, ...]
_FLOAT_KINDS = "fc"
_NUMPY_DTYPE_CLASSES = frozenset(type(np.dtype(c)) for c in "?bhilqBHILQefdgFDG")

# The hottest methods call these directly: looking ``ops.Mul.apply`` up and binding it
# on every call is a measurable share of a small op's cost.
_add, _sub, _mul, _div = ops.Add.apply, ops.Sub.apply, ops.Mul.apply, ops.Div.apply
_exp, _tanh = ops.Exp.apply, ops.HyperbolicTangent.apply


def _shape_args(shape: Sequence[Any], *, new: bool = False) -> Shape:
    """``f(2, 3)`` and ``f((2, 3))`` both mean the shape ``(2, 3)``; a ``new`` tensor's (a factory's)
    has no negative size, as PyTorch's."""
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = shape[0]
    try:
        out = tuple(map(operator.index, shape))
    except TypeError:  # (a float size is refused, as PyTorch's; int() would round 2.7 to 2)
        raise TypeError(f"size must be a tuple of ints, got {tuple(shape)!r}") from None
    if new and any(n < 0 for n in out):
        bad = next(n for n in out if n < 0)
        raise RuntimeError(f"Trying to create tensor with negative dimension {bad}: {list(out)}")
    return out


class Size(tuple):
    """A shape, as ``x.shape`` and ``x.size()`` return it: a tuple of ints printing as PyTorch's
    ``torch.Size([2, 3])``; slicing, ``+`` and ``*`` give a Size again.

    >>> Size([2, 3])[1:] + (4,)
    torch.Size([3, 4])
    """

    __slots__ = ()

    def __new__(cls, sizes: Any = ()) -> Size:
        sizes = tuple(sizes)
        for i, n in enumerate(sizes):
            if not isinstance(n, (int, np.integer)) and not (hasattr(n, "__index__") and not isinstance(n, float)):
                raise TypeError(f"torch.Size() takes an iterable of 'int' (item {i} is '{type(n).__name__}')")
        return super().__new__(cls, (operator.index(n) for n in sizes))

    def numel(self) -> int:
        return math.prod(self)

    def __getitem__(self, i: Any) -> Any:
        got = tuple.__getitem__(self, i)
        return Size(got) if isinstance(i, slice) else got

    def __add__(self, other: Any) -> Size:
        if not isinstance(other, tuple):
            raise TypeError(f"can only concatenate tuple (not {type(other).__name__}) to torch.Size")
        return Size(tuple.__add__(self, other))

    def __radd__(self, other: Any) -> Size:
        if not isinstance(other, tuple):
            return NotImplemented
        return Size(tuple.__add__(other, self))

    def __mul__(self, n: Any) -> Size:
        return Size(tuple.__mul__(self, n))

    __rmul__ = __mul__

    def __repr__(self) -> str:
        return f"torch.Size({list(self)})"

    __str__ = __repr__

    def __reduce__(self) -> tuple:
        return (Size, (tuple(self),))


class UnsupportedModeError(NotImplementedError, ValueError):
    """A mode the op does not have (``pad(mode="bogus")``): PyTorch's ``NotImplementedError``,
    and a ``ValueError``: a bad value of an argument."""


class _HookHandle:
    """What ``register_hook`` returns: ``remove()`` takes the hook away (PyTorch's RemovableHandle)."""

    __slots__ = ("_hooks", "_hook")

    def __init__(self, hooks: list, hook: Any) -> None:
        self._hooks, self._hook = hooks, hook

    def remove(self) -> None:
        if self._hook in self._hooks:
            self._hooks.remove(self._hook)

    def __enter__(self) -> _HookHandle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.remove()


def _refuse_bfloat16_for_numpy() -> None:
    """PyTorch's error for ``numpy()`` of a bfloat16 tensor (NumPy has no bfloat16 of its own);
    ``.float().numpy()`` gives the values, each exact in float32."""
    raise TypeError("Got unsupported ScalarType BFloat16 (numpy() of a bfloat16 tensor; use .float().numpy())")


def _as_class(result: Any, cls: type) -> Any:
    """``result`` with its tensors of class ``cls`` (PyTorch's ``_convert`` of ``__torch_function__``): the
    same tensors, their class changed, so that their history stays theirs."""
    if isinstance(result, Tensor):
        if not isinstance(result, cls) and cls._subclass_results:
            try:
                result.__class__ = cls
            except TypeError:  # (a class of another layout: __slots__ of its own)
                pass
        return result
    if result.__class__ in (tuple, list):
        return result.__class__(_as_class(r, cls) for r in result)
    return result


def is_tensor_class(cls: Any) -> bool:
    """``Tensor`` (or a subclass) or a typed class (``DoubleTensor``: a class of one ``dtype``) itself,
    which PyTorch's constructors refuse as data by errors of their own."""
    return isinstance(cls, type) and (issubclass(cls, Tensor) or isinstance(getattr(cls, "dtype", None), np.dtype))


def class_as_data_error(cls: type) -> Exception:
    """PyTorch's legacy constructor's error for a class given as data (``torch.Tensor(c)``, ``x.new(c)``):
    a tensor class is read as a storage and refused as none (RuntimeError); any other class is no
    sequence (TypeError)."""
    if is_tensor_class(cls):
        return RuntimeError(f"not a storage '{type(cls).__name__}' (new(): {cls.__name__} is a tensor class, "
                            "not data; pass a tensor, a list or an array)")  # fmt: skip
    return TypeError(f"new(): data must be a sequence (got type); {cls.__name__} is a class, not data")


def _of_pytorch(func: Any) -> bool:
    """Whether ``func`` is PyTorch's (``torch.Tensor.__eq__`` meeting one of our tensors, ``torch.tensor([1.]) ==
    tga.tensor([1.])``), which hands it to our ``__torch_function__``."""
    module = getattr(func, "__module__", None) or getattr(getattr(func, "__objclass__", None), "__module__", None)
    return isinstance(module, str) and module.split(".")[0] == "torch"


class Tensor:
    """An n-dimensional array with reverse-mode autograd.

    >>> x = Tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    >>> (x * x).sum().backward()
    >>> x.grad.tolist()
    [[2.0, 4.0], [6.0, 8.0]]
    """

    # ``_uses``: how many recorded ops have taken this tensor as an input, exactly (counted by
    # engine.function alone: see add_uses).
    # (``_base``: set only on a view made without recording (see Function.apply); read with getattr)
    # (``__dict__``: a user's own attributes, ``p.no_decay = True``, as on PyTorch's tensors; made at the first one)
    __slots__ = (
        "_data",
        "_dev",
        "_grad",
        "_requires_grad",
        "_ctx",
        "name",
        "_uses",
        "_base",
        "__weakref__",
        "__dict__",
    )
    # NumPy defers ``ndarray + Tensor`` to Tensor.__radd__ (which refuses it, as PyTorch's), and
    # a ufunc of a tensor gives a tensor (``__array_wrap__``), as PyTorch's.
    __array_priority__ = 1000
    # Whether an op's result is of this class when an input is (PyTorch's default ``__torch_function__``
    # converts results to a user's subclass; Parameter, Buffer and ``.data`` disable it: results are Tensors).
    _subclass_results = True
    # Whether ops refuse this tensor as an operand unless they take its layout (a sparse tensor's)
    _refuses_ops = False
    __hash__ = object.__hash__  # identity, so tensors can key dicts despite ``==``

    @classmethod
    def __torch_function__(cls, func: Any, types: tuple, args: tuple = (), kwargs: dict | None = None) -> Any:
        """PyTorch's default (``engine.overrides``): ``func`` run with the dispatch of subclasses off, its
        tensors given back as ``cls`` (``NotImplemented`` when a class of ``types`` is not one of ``cls``'s)."""
        if not all(issubclass(cls, t) for t in types) or _of_pytorch(func):
            return NotImplemented  # (PyTorch's own function, given our tensor: not ours to run, nor to recurse into)
        with _overrides.DisableTorchFunctionSubclass():
            return _as_class(func(*args, **(kwargs or {})), cls)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        # (a subclass that overrides __torch_function__: its methods are dispatched, engine.overrides)
        super().__init_subclass__(**kwargs)
        _overrides.subclass_made(cls)

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
        if size or data.__class__ is int:  # PyTorch's legacy constructor: Tensor(2, 3) and Tensor(0) are shapes
            data = _legacy_shape(data, size, dtype)
        if isinstance(data, Tensor):
            arr, src = data._data, data._dev
        elif isinstance(data, np.ndarray):
            arr, src = data, get_device("cpu")
            if (refusal := _dtypes.unheld_array_error(arr.dtype)) is not None:  # (objects, strings, dates, ...)
                raise refusal
            if dev is None:
                dev = default_device()
        elif isinstance(data, (str, bytes)):  # (PyTorch's error: a string is no data)
            raise TypeError(f"new(): invalid data type '{type(data).__name__}' (Tensor: a string is no data)")
        elif isinstance(data, (bool, int, float, list, tuple)) or np.isscalar(data):
            arr = np.asarray(data)
            if dtype is None and arr.dtype != np.bool_:  # (complex numbers: the default dtype's complex twin)
                arr = arr.astype(get_default_dtype().to_complex() if arr.dtype.kind == "c" else get_default_dtype())
            src = get_device("cpu")
            if dev is None:
                dev = default_device()
        else:
            if isinstance(data, type):
                raise class_as_data_error(data)
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
            src.refuse_copy_out(dev)
            arr = dev.asarray(src.to_host(arr))
        if dtype is not None and dev.np_dtype(arr.dtype) != np.dtype(dtype):
            arr = dev.ops.astype(arr, dev.dtype(dtype))
        self._data = arr
        self._dev = dev
        self._grad: Tensor | None = None
        self._ctx: Function | None = None
        self.name = name
        self._requires_grad = False
        self._uses = 0
        if requires_grad:
            self.requires_grad_(True)
        if _State.inference:
            _mark_inference(self)
        if _State.hook is not None:  # made inside a traced function (see Tracer.write, Tracer.made)
            _State.hook.made(self, data)

    @classmethod
    def _wrap(cls, data: Any, dev: Device) -> Tensor:
        """A tensor around an existing array, with no copy and no graph (on the meta device: a placeholder
        of the array's shape, dtype and layout, so that a gradient computed there keeps no memory)."""
        if dev.meta and getattr(data, "meta_strides", None) is None:
            data = dev.copy(data)
        t = cls.__new__(cls)
        t._data = data
        t._dev = dev
        t._grad = None
        t._requires_grad = False
        t._ctx = None
        t.name = None
        t._uses = 0
        if _State.inference:
            _mark_inference(t)
        return t

    # Whether in-place changes of this tensor count in its memory's version (see
    # engine.versions.bump_version); False only for what ``.data`` hands out.
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
                f"data: assign a Tensor or an array to .data, not {type(value).__name__} (tensor of shape {tuple(self.shape)})"
            ) from None
        self._data = value if src is self._dev else self._dev.asarray(src.to_host(value))

    # (the constructors Tensor.zeros ones full randn rand arange eye from_dlpack: tensor_creation.py)

    # -- attributes ---------------------------------------------------------------
    @property
    def shape(self) -> Size:
        return tuple.__new__(Size, self._data.shape)  # (an array's shape holds ints: no check)

    @property
    def ndim(self) -> int:
        return self._data.ndim

    @property
    def dtype(self) -> _TorchDtype:
        """The dtype, as PyTorch's (``torch.float32``), whatever the backend; it stands for its
        NumPy dtype wherever a dtype is taken."""
        d = self._data.dtype
        hit = _TORCH_DTYPES.get(d) if d.__class__ in _NUMPY_DTYPE_CLASSES else None  # (NumPy's, CuPy's: at once)
        return hit if hit is not None else torch_dtype(self._dev.np_dtype(d))

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
    def requires_grad(self) -> bool:
        """Whether ops record this tensor for a backward pass. Only a leaf can be switched off,
        as in PyTorch: a computed tensor leaves the graph through ``detach()``. A view made
        without recording (in ``no_grad``, or of a tensor that did not require grad then)
        requires grad while the tensor whose memory it shows does (the first of a chain of such
        views: PyTorch's ``_base``), as PyTorch's views do."""
        if self._requires_grad:
            return True
        if self._ctx is not None or (v := getattr(self, "_base", None)) is None:
            return False
        base = v.inputs[0]
        while base._ctx is None and (v := getattr(base, "_base", None)) is not None:
            base = v.inputs[0]
        return base._requires_grad

    @requires_grad.setter
    def requires_grad(self, flag: bool) -> None:
        if getattr(self, "_ctx", None) is not None:
            raise RuntimeError(
                "you can only change requires_grad flags of leaf variables. If you want to use a computed "
                "variable in a subgraph that doesn't require differentiation use var_no_grad = var.detach()."
            )
        if flag and self.dtype.kind not in _FLOAT_KINDS:
            raise RuntimeError(
                f"only Tensors of floating point and complex dtype can require gradients (this one is {self.dtype})"
            )
        if flag:
            refuse_inference_change(self, "requires_grad")
        if bool(flag) != getattr(self, "_requires_grad", bool(flag)):  # (ops that read it meanwhile: no edge)
            _note_grad_switched_on(self, bool(flag))
        self._requires_grad = flag

    @property
    def grad(self) -> Tensor | None:
        """The gradient a backward pass accumulated here (a leaf's, or a ``retain_grad()``
        tensor's); reading it on another non-leaf warns, as PyTorch does, since it stays None."""
        g = self._grad
        if g is None and self._ctx is not None and not self.retains_grad:
            _user_warn(
                "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad attribute "
                "won't be populated during autograd.backward(). If you indeed want the .grad field to be populated "
                "for a non-leaf Tensor, use .retain_grad() on the non-leaf Tensor.",
                UserWarning,
            )
        return g

    @grad.setter
    def grad(self, g: Tensor | None) -> None:
        if g is not None:
            if not isinstance(g, Tensor):
                raise TypeError(
                    f"assigned grad expected to be a Tensor or None but got grad of type {type(g).__name__}"
                )
            if g.dtype != self.dtype:
                raise RuntimeError(f"assigned grad has data of a different type: {g.dtype}, the tensor is {self.dtype}")
            if g.shape != self.shape:
                raise RuntimeError(
                    f"assigned grad has data of a different size: {tuple(g.shape)}, the tensor is {tuple(self.shape)}"
                )
        self._grad = g

    @property
    def grad_fn(self) -> BackwardNode | None:
        """The graph node that made this tensor (``None`` for a leaf), under PyTorch's class
        name (``MulBackward0``); the op itself is ``t._ctx``."""
        return backward_node(self._ctx, self)

    @public(method=True)
    def numel(self) -> int:
        return math.prod(self.shape)

    def size(self, axis: int | None = None, *, dim: int | None = None) -> Any:
        """The shape, or with an axis (``dim``) the length of that axis."""
        axis = dims.alias(axis, dim, "size")
        return tuple.__new__(Size, self._data.shape) if axis is None else self.shape[axis]

    def __len__(self) -> int:
        if self.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self.shape[0]

    def requires_grad_(self, flag: bool = True) -> Tensor:
        if flag and self.dtype.kind not in _FLOAT_KINDS:
            raise RuntimeError(
                f"requires_grad: only floating-point tensors can require gradients, not {self.dtype}; "
                "convert with .float() first"
            )
        if self._ctx is not None:  # (a non-leaf already requires grad; it refuses False, as PyTorch's)
            if not flag:
                self.requires_grad = flag
            return self
        self.requires_grad = flag
        return self

    def register_hook(self, hook: Any) -> _HookHandle:
        """Call ``hook(grad)`` with this tensor's gradient each time a backward pass computes
        it, as PyTorch's: a tensor it returns replaces the gradient (a leaf's before it goes
        into ``.grad``; a non-leaf's before it flows on). Returns a handle whose ``remove()``
        takes the hook away.

        >>> h = x.register_hook(lambda g: g.clamp(-1, 1))  # doctest: +SKIP
        """
        if not self.requires_grad:
            raise RuntimeError(
                f"register_hook: cannot register a hook on a tensor that doesn't require gradient (shape {tuple(self.shape)})"
            )
        registry, key = _State.grad_hooks, id(self)
        entry = registry.get(key)
        if entry is None or entry[0]() is not self:

            def forget(ref: weakref.ref, registry: dict = registry, key: int = key) -> None:
                e = registry.get(key)
                if e is not None and e[0] is ref:
                    del registry[key]

            entry = registry[key] = (weakref.ref(self, forget), [])
        entry[1].append(hook)
        return _HookHandle(entry[1], hook)

    def retain_grad(self) -> None:
        """Keep ``.grad`` for this non-leaf tensor after backward (a leaf keeps it anyway); a
        tensor that does not require grad is PyTorch's error."""
        if not self.requires_grad:
            raise RuntimeError(f"can't retain_grad on Tensor that has requires_grad=False (shape {tuple(self.shape)})")
        if self.is_leaf:
            return
        if _State.retained is None:
            _State.retained = {}
        registry, key = _State.retained, id(self)

        def forget(ref: weakref.ref, registry: dict = registry, key: int = key) -> None:
            # The entry goes with the tensor: its id may be reused by a tensor that did not
            # ask, which would otherwise get a ``.grad`` (and keep it alive).
            if registry.get(key) is ref:
                del registry[key]

        registry[key] = weakref.ref(self, forget)

    def __repr__(self) -> str:
        """PyTorch's printing (``tensors/printing.py``): the dtype is named when it is not one
        a literal gives (the default float, its complex, int64, bool)."""
        suffixes = [f"device='{self.device}'"] if self.device != "cpu" else []
        if self._data.__class__ is FreedArray:
            return f"tensor(<values freed {self._data.when}>, size={tuple(self.shape)}, dtype=torch.{self.dtype.name})"
        default = get_default_dtype()
        named = self.dtype not in (default, np.dtype(np.complex128 if default == np.float64 else np.complex64),
                                   np.dtype(np.int64), np.dtype(np.bool_))  # fmt: skip
        if self.numel() == 0 and self.ndim != 1:
            suffixes.append(f"size={tuple(self.shape)}")
        if named or (self.numel() == 0 and self.dtype != default):
            suffixes.append(f"dtype=torch.{self.dtype.name}")
        if self._ctx is not None:
            suffixes.append(f"grad_fn=<{grad_fn_name(self._ctx)}>")
        elif self.requires_grad:
            suffixes.append("requires_grad=True")
        if (tangent := tangent_of(self)) is not None:  # (a dual tensor: forward-mode AD)
            suffixes.append(f"tangent={tangent}")  # (format's: a 0-d tangent as its number, as PyTorch's)
        if self._dev.meta:  # (no values to print: PyTorch's form names the size, and a dtype not the default)
            shown = [f"size={tuple(self.shape)}"] + (
                [f"dtype=torch.{self.dtype.name}"] if self.dtype != default else []
            )
            rest = [s for s in suffixes[1:] if not s.startswith(("size=", "dtype="))]
            return f"tensor(..., {', '.join([suffixes[0], *shown, *rest])})"
        return host_tensor_repr(self._read("repr"), suffixes)

    # -- conversion ---------------------------------------------------------------
    def numpy(self, *, force: bool = False) -> np.ndarray:
        """The values as a NumPy array: on the CPU the tensor's own memory, as PyTorch's (an
        in-place change of either shows in the other), with ``force`` too (it only lifts the
        refusal of a tensor that requires grad); a copy from another device or of memory that
        cannot be written (a broadcast)."""
        if self._requires_grad and not force:
            raise RuntimeError(
                f"Can't call numpy() on Tensor that requires grad (shape {tuple(self.shape)}). "
                "Use tensor.detach().numpy() instead."
            )
        data = self._data
        if data.dtype is _BFLOAT16:
            _refuse_bfloat16_for_numpy()
        if data.__class__ is np.ndarray and data.flags.writeable:  # (force: still the memory, as PyTorch's)
            check_host_read(self, "numpy")
            share_with_numpy(data)
            return data.view()
        return self._read("numpy")

    def _read(self, what: str) -> np.ndarray:
        """A host copy of the data for ``what`` (the method reading it): every read of a
        tensor's values into Python passes here."""
        if self._dev.meta and what in ("numpy", "__array__"):
            raise TypeError("can't convert meta device type tensor to numpy. Use Tensor.cpu() to copy the tensor "
                            "to host memory first.")  # fmt: skip
        check_host_read(self, what)  # (a Python decision on a traced value: tinygrad_attn.symbolic; meta: no values)
        if self._data.__class__ is FreedArray:
            raise RuntimeError(
                f"numpy: the values of this intermediate tensor (shape {tuple(self.shape)}) were freed "
                f"{self._data.when}, as nothing but the graph held it; keep a reference to it (and "
                "call backward(retain_graph=True)) to read it afterwards"
            )
        return np.array(self._dev.to_host(self._data), copy=True)

    def item(self) -> Any:
        return self._item("item")

    def _item(self, what: str) -> Any:
        if self._dev.meta:
            raise RuntimeError(f"Tensor.item() cannot be called on meta tensors ({what} of a tensor of shape "
                               f"{tuple(self.shape)})")  # fmt: skip
        if self.numel() != 1:
            raise InvalidArgumentError(
                f"item: only a one-element tensor converts to a Python number, not shape {tuple(self.shape)}"
            )
        return self._read(what).reshape(()).item()

    def tolist(self) -> Any:
        return self._read("tolist").tolist()

    def __float__(self) -> float:
        return float(_real_part(self._item("__float__"), "double"))

    def __int__(self) -> int:
        return int(_real_part(self._item("__int__"), "int64_t"))

    def __complex__(self) -> complex:
        return complex(self._item("__complex__"))

    def __bool__(self) -> bool:
        if self.numel() != 1:
            raise InvalidArgumentError(  # (PyTorch's RuntimeError; a ValueError as NumPy's)
                f"Boolean value of Tensor with {'no values' if self.numel() == 0 else 'more than one value'} is "
                f"ambiguous (shape {tuple(self.shape)}); use .all() or .any()"
            )
        return bool(self._item("__bool__"))

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        """``np.asarray(t)``: the values as a NumPy array (on the CPU the tensor's own memory,
        unless ``copy``). A tensor inside ``tga.jit.trace`` raises ``TraceError``, as ``.numpy()``."""
        if self._dev.meta:
            self._read("__array__")  # (PyTorch's TypeError: no values)
        check_host_read(self, "__array__")
        if copy is False:  # (PyTorch's __array__ takes no copy=: NumPy refuses np.array(t, copy=False) for it, first)
            raise ValueError(
                f"__array__: copy=False, but a tensor (on {self._dev.name}, dtype {self.dtype}) is not promised to "
                "NumPy without a copy, as PyTorch's is not: Unable to avoid copy while creating an array as "
                "requested; use np.asarray(t) or t.numpy() (the tensor's own memory on the CPU)"
            )
        if self._requires_grad:  # (as ``numpy()``: NumPy would drop the graph unseen)
            raise RuntimeError(
                f"Can't call numpy() on Tensor that requires grad (shape {tuple(self.shape)}). "
                "Use tensor.detach().numpy() instead."
            )
        if self._data.__class__ is FreedArray or self._dev.meta:
            self._read("__array__")  # (raises, saying when the values were freed or that there are none)
        if self._data.dtype is _BFLOAT16:
            _refuse_bfloat16_for_numpy()
        arr = self._dev.to_host(self._data)
        if dtype is not None:
            arr = arr.astype(dtype, copy=False)
        if copy:
            return np.array(arr, copy=True)
        if arr is self._data:
            share_with_numpy(arr)
        return arr

    def __array_wrap__(self, array: Any, context: Any = None, return_scalar: bool = False) -> Tensor:
        """A NumPy ufunc's result as a tensor sharing its memory (``np.sin(t)`` is a tensor), as
        PyTorch's: a bool result becomes uint8."""
        if array.dtype == np.bool_:
            array = array.astype(np.uint8)
        if (
            refusal := _dtypes.unheld_array_error(array.dtype, "__array_wrap__")
        ) is not None:  # (PyTorch's from_numpy of the result)
            raise refusal
        return Tensor._wrap(np.asarray(array), get_device("cpu"))

    def __dlpack__(self, *args: Any, **kw: Any) -> Any:
        if self._requires_grad:  # (PyTorch's: the consumer would write past autograd)
            raise BufferError("Can't export tensors that require gradient, use tensor.detach()")
        return self._data.__dlpack__(*args, **kw)

    def __dlpack_device__(self) -> Any:
        return self._data.__dlpack_device__()

    def to(self, *args: Any, **kw: Any) -> Tensor:
        """This tensor on another device and/or in another dtype, with PyTorch's signatures:
        ``to(device=None, dtype=None, non_blocking=False, copy=False)``, ``to(dtype)``,
        ``to(other)`` (``other``'s device and dtype). Itself where nothing changes (unless
        ``copy``); differentiable."""
        fmt = kw.pop("memory_format", None) or _layout.preserve_format
        dev, dtype, copy = _to_args(args, kw, "to")
        out = self
        if dev is not None and dev is not self._dev:
            out = Transfer.apply(out, args=(out._dev, dev))
        if dtype is not None:
            out = out.astype(dtype)
        if out is self:  # (PyTorch's: itself unless a copy is asked for or its layout is not the format's)
            if copy or (
                fmt is not _layout.preserve_format
                and _layout.suggest_memory_format(self.shape, self.stride()) is not fmt
            ):
                out = self.clone(memory_format=fmt)
            return out
        return _layout.relaid(out, _layout.strides_for(self.shape, self.stride(), fmt))

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

    def _operand_cast(self, dtype: Any) -> Tensor:
        """``astype`` for an op's type promotion: an inference tensor's cast stays one (PyTorch's
        op reads the inference tensor itself, and refuses to save it for a backward)."""
        r = self.astype(dtype)
        if _State.inference_tensors and is_inference_tensor(self):
            _mark_inference(r)
        return r

    def astype(self, dtype: Any) -> Tensor:
        """A copy in ``dtype``; gradients flow between floating dtypes."""
        dt = torch_dtype(dtype)  # (its kind: bfloat16's NumPy one is not 'f')
        if dt == self.dtype:
            return self
        if self.dtype.kind == "c" and dt.kind != "c":  # (PyTorch's: the real parts, with its warning)
            _complex_to_real_warning()
            if dt.kind not in _FLOAT_KINDS and not tracing():
                return ops.complex.Real.apply(self).astype(dt)
        if dt.kind in _FLOAT_KINDS or tracing():  # (traced: an op, never a constant)
            return ops.Cast.apply(self, args=self._dev.dtype(dt))
        with quiet():  # (NaN and inf cast to an integer as PyTorch's, without NumPy's warning)
            return Tensor._wrap(self._dev.ops.astype(self._data, self._dev.dtype(dt)), self._dev)

    def float(self) -> Tensor:
        return self.astype(np.float32)

    def double(self) -> Tensor:
        return self.astype(np.float64)

    def detach(self) -> Tensor:
        """The same data, cut from the graph (an inference tensor's detach is one too, as PyTorch's)."""
        out = self._result_class()._wrap(self._data, self._dev)
        if _State.inference_tensors and not _State.inference and is_inference_tensor(self):
            _mark_inference(out)
        return out

    def _result_class(self) -> type:
        """The class of what an op of this tensor makes: its own for a user's subclass, else Tensor."""
        return self.__class__ if self._subclass_results else Tensor

    def contiguous(self, *, memory_format: Any = None) -> Tensor:
        """Itself when its elements lie in ``memory_format``'s order (row-major by default),
        else a copy in it, as PyTorch's (so writing to the result of ``x.T.contiguous()`` never
        changes ``x``)."""
        fmt = _layout.contiguous_format if memory_format is None else memory_format
        if fmt is _layout.preserve_format:
            raise RuntimeError("contiguous: preserve memory format is unsupported by the contiguous operator")
        if self.is_contiguous(memory_format=fmt):
            return self
        return self.clone(memory_format=fmt)

    # -- autograd -----------------------------------------------------------------
    @keeps_old_spellings
    def backward(self, gradient: Any = None, retain_graph: bool | None = None, create_graph: bool = False,
                 inputs: Any = None) -> None:  # fmt: skip
        """Accumulate the gradient of this tensor into ``.grad`` of every leaf it depends on
        (PyTorch's parameters; ``grad=`` is the older name of ``gradient``)."""
        if inputs is not None:  # (only these .grad: a tensor or a sequence of them)
            inputs = [inputs] if isinstance(inputs, Tensor) else list(inputs)
        keep = create_graph if retain_graph is None else bool(retain_graph)
        backward(self, gradient, retain_graph=keep, create_graph=create_graph, inputs=inputs)

    # -- operand conversion -------------------------------------------------------
    def _operand(self, other: Any) -> Any:
        """Python numbers stay constants; arrays and lists become tensors on our device.
        A NumPy scalar is a number, as in PyTorch (``np.float64(0.5)`` keeps a float32
        tensor float32), even where it subclasses Python's float."""
        if isinstance(other, np.generic):
            return _promotion.scalar_value(other)
        if isinstance(other, (Tensor, int, float, complex)):
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
        o = other if other.__class__ in _PLAIN else self._operand(other)
        if _kind(self) == "b" or o.__class__ is bool or isinstance(o, Tensor) and _kind(o) == "b":
            _bool_subtraction(self, o)
        return _sub(*_promoted(self, o))

    def __rsub__(self, other: Any) -> Tensor:
        o = other if other.__class__ in _PLAIN else self._operand(other)
        if _kind(self) == "b" or o.__class__ is bool or isinstance(o, Tensor) and _kind(o) == "b":
            _bool_subtraction(o, self)
        return _sub(*_promoted(o, self))

    def __mul__(self, other: Any) -> Tensor:
        return _mul(*_promoted(self, other if other.__class__ in _PLAIN else self._operand(other)))

    def __rmul__(self, other: Any) -> Tensor:
        return _mul(*_promoted(other if other.__class__ in _PLAIN else self._operand(other), self))

    def __truediv__(self, other: Any) -> Tensor:
        return _div(*_promoted_div(self, other if other.__class__ in _PLAIN else self._operand(other)))

    def __rtruediv__(self, other: Any) -> Tensor:
        # (PyTorch's own definition, so its values, 1 / x rounded then scaled, and its graph, a MulBackward0)
        return self.reciprocal() * other

    def __pow__(self, other: Any) -> Tensor:
        given = other = self._operand(other)
        if self.dtype == np.bool_ and (other.__class__ is bool or getattr(other, "dtype", None) == np.bool_):
            return _bool_pow(self, other)
        base, other = _promoted(self, other)
        if isinstance(other, Tensor):
            return ops.Pow.apply(base, other)
        if isinstance(given, int) and not isinstance(given, bool) and base.dtype.kind in "biu":
            # (the exponent as given, before it is wrapped into the dtype: PyTorch refuses a negative
            # one, then one the dtype cannot hold: uint8 ** 300 is an error, not uint8 ** 44)
            if given < 0:
                raise InvalidArgumentError(
                    f"pow: integers to negative integer powers are not allowed ({base.dtype} tensor ** {given}); "
                    "convert the tensor with .float() first"
                )
            check_fill_value("pow", given, base.dtype)
        return ops.PowScalar.apply(base, args=other)

    def __rpow__(self, other: Any) -> Tensor:
        # (Pow with a constant base, not exp(t * log(base)): that has no log for base <= 0,
        # where 0 ** t and (-2) ** t are still defined)
        if isinstance(other, Tensor):  # (PyTorch's torch.pow(other, self): Tensor.__rpow__(t, base) called unbound)
            return other.__pow__(self)
        if self.dtype == np.bool_ and other.__class__ is bool:
            return _bool_pow(other, self)
        return ops.Pow.apply(*_promoted(self._operand(other), self))

    def __neg__(self) -> Tensor:
        if _kind(self) == "b":
            raise RuntimeError(
                "Negation, the `-` operator, on a bool tensor is not supported. If you are trying to invert a mask, "
                f"use the `~` or `logical_not()` operator instead (shape {tuple(self.shape)})"
            )
        return ops.Neg.apply(self)

    # (``+x``: tensor_torch.positive, which refuses bools as PyTorch does)

    def __matmul__(self, other: Any) -> Tensor:
        if not isinstance(other, Tensor):  # (Python's TypeError, as PyTorch: @ takes no numbers)
            return NotImplemented
        if _autocast.BLOCK[0] is not None:  # (``@`` is matmul to PyTorch's CPU autocast)
            (self, other), _ = _autocast.cast_arguments("matmul", (self, other), {})
        return ops.Matmul.apply(*_matmul_operands(self, other))

    def __rmatmul__(self, other: Any) -> Tensor:
        if not isinstance(other, Tensor):
            return NotImplemented
        return ops.Matmul.apply(*_matmul_operands(other, self))

    # (comparisons, logical operators, maximum/minimum/clip, masked_fill: tensor_arith.py)

    # -- elementwise --------------------------------------------------------------
    @public(method=True, inplace_function=True)
    def exp(self) -> Tensor:
        return _exp(self if self._data.dtype.__class__ in _FLOATS else _as_float(self))

    @public(method=True, inplace_function=True)
    def log(self) -> Tensor:
        return ops.Log.apply(self if self._data.dtype.__class__ in _FLOATS else _as_float(self))

    @public(method=True, inplace_function=True)
    def sqrt(self) -> Tensor:
        return ops.Sqrt.apply(self if self._data.dtype.__class__ in _FLOATS else _as_float(self))

    @public(method=True, inplace_function=True)
    def tanh(self) -> Tensor:
        return _tanh(self if self._data.dtype.__class__ in _FLOATS else _as_float(self))

    @public(name="absolute", method=True, inplace=True)
    @public(method=True, inplace_function=True)
    def abs(self) -> Tensor:
        if _kind(self) == "b":
            raise UnsupportedDtypeError(
                f"\"abs\" not implemented for 'Bool' (shape {tuple(self.shape)}); convert with .long()"
            )
        return ops.Abs.apply(self)

    def __iter__(self) -> Iterator[Tensor]:
        n = len(self)  # (a 0-d tensor raises here, at iter(), as PyTorch's)
        return (self[i] for i in range(n))

    # -- in-place ops ---------------------------------------------------------------
    # Each writes its result into this tensor's own array (views of it see the change) and
    # bumps the array's version; where a gradient is wanted it is recorded and the
    # tensor's history rebased, as PyTorch does (see inplace.apply_inplace).
    @property
    def _version(self) -> int:
        """How many in-place changes this tensor's memory has had (its views share it)."""
        v = version_of(self._data)
        return 0 if v is None else v.count

    def add_(self, other: Any, *more: Any, alpha: float = 1) -> Tensor:
        """``self += alpha * other``, in place (``alpha`` by position as ``add``'s)."""
        other, alpha = _promotion.other_and_alpha("add_", other, more, alpha, deprecated=True)
        o = self._operand(other)
        # (alpha scales as add's does: in the result's dtype, a bool or float alpha refused as there)
        return apply_inplace(self, "add_", lambda x, o: x.add(o, alpha=alpha), o, reads_old=False)

    def sub_(self, other: Any, *more: Any, alpha: float = 1) -> Tensor:
        """``self -= alpha * other``, in place (``alpha`` by position as ``sub``'s)."""
        other, alpha = _promotion.other_and_alpha("sub_", other, more, alpha, deprecated=True)
        o = self._operand(other)
        return apply_inplace(self, "sub_", lambda x, o: x.sub(o, alpha=alpha), o, reads_old=False)

    def mul_(self, other: Any) -> Tensor:
        o = self._operand(other)
        return apply_inplace(self, "mul_", Tensor.__mul__, o, reads_old=Tensor._needs_grad(o))

    def div_(self, other: Any, *, rounding_mode: str | None = None) -> Tensor:
        o = self._operand(other)
        if rounding_mode is not None:  # (a rounded quotient's gradient is zero: nothing old is read)
            return apply_inplace(self, "div_", lambda x, o: x.div(o, rounding_mode=rounding_mode), o, reads_old=False)
        # (a division's backward reads the divisor, and x if the divisor needs grad)
        return apply_inplace(self, "div_", Tensor.__truediv__, o, reads_old=Tensor._needs_grad(o))

    def fill_(self, value: Any) -> Tensor:
        """Every element becomes ``value`` (a number or a one-element tensor), in place."""
        # (-1 into uint8 is 255; 256 overflows, as PyTorch's)
        if isinstance(value, Tensor) and value.ndim:
            raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor with {value.ndim} "
                               f"dimensions (shape {tuple(value.shape)}).")  # fmt: skip
        if isinstance(value, Tensor):  # (a tensor value is copied: PyTorch refuses an expanded tensor)
            refuse_internal_overlap(self._data, "fill_")
        return self._filled(value, "fill_")

    def _filled(self, value: Any, label: str) -> Tensor:
        v = value if isinstance(value, Tensor) else fill_value_in(label, value, self.dtype)
        # (the value in this tensor's dtype, as PyTorch's: an int tensor filled with 2.5 holds 2; the
        # tensor then the value, the order of the edges of PyTorch's FillBackward3)
        return apply_inplace(self, label, lambda x, v: _in_dtype(where(False, x, v), x.dtype), v, reads_old=False)

    def zero_(self) -> Tensor:
        return self._filled(0, "zero_")  # (PyTorch's own node: ZeroBackward0)

    def copy_(self, src: Any, non_blocking: bool = False) -> Tensor:
        """This tensor's elements become ``src``'s (broadcast to its shape, cast to its dtype,
        moved from any device), in place; every copy here is synchronous, whatever ``non_blocking`` says."""
        if not isinstance(non_blocking, (bool, np.bool_)):
            raise TypeError(
                f"copy_(): argument 'non_blocking' (position 2) must be bool, not {type(non_blocking).__name__}"
            )
        if isinstance(src, (list, tuple, str)) or src is None:
            raise TypeError(f"copy_(): argument 'other' (position 1) must be Tensor, not {type(src).__name__}")
        if isinstance(src, (int, float, complex, np.generic)):  # a number is broadcast (not read as a shape)
            if isinstance(src, (complex, np.complexfloating)) and self.dtype.kind != "c":
                _user_warn("copy_: casting complex values to real discards the imaginary part", UserWarning)  # fmt: skip
                src = src.real
            src = Tensor([src], device=self._dev).reshape(())
        elif not isinstance(src, Tensor):  # (an array: the package's own initialisers pass them)
            src = Tensor(src, device=self._dev)
        if src._dev is not self._dev:
            src = src.to(self._dev)
        return apply_inplace(self, "copy_", lambda x, s: where(True, s.astype(x.dtype), x), src,
                                      reads_old=False)  # fmt: skip

    def masked_fill_(self, mask: Any, value: Any) -> Tensor:
        """``value`` where ``mask`` is True, in place (a value tensor of no dims: ``masked_fill``'s check)."""
        return apply_inplace(self, "masked_fill_", lambda x, v: x.masked_fill(mask, v), value, reads_old=False)

    # (``x += y`` and every other augmented assignment, in place as in PyTorch:
    # tinygrad_attn/tensors/mutation/augmented_assignment.py, installed by install_methods)

    @staticmethod
    def _needs_grad(x: Any) -> bool:
        return isinstance(x, Tensor) and x.requires_grad

    # (``x[key]`` and ``x[key] = value``: tinygrad_attn/tensors/index/indexing.py, installed by install_methods)

    # -- pickling and copying (io) ------------------------------------------------------
    def __reduce__(self) -> tuple:
        """Pickle the values (a host copy, in this tensor's layout: a transposed one unpickles
        transposed), dtype, device name, ``requires_grad`` and name; never the graph, nor ``.grad``
        (as PyTorch's). A non-leaf pickles detached, as a leaf; ``t.data`` as a Tensor."""
        return (_rebuild_tensor, (_copied_class(self), _pickled_memory(self._dev.to_host(self._data)), self._dev.name,
                                  self.requires_grad, self.name, None, False, self.__dict__ or None))  # fmt: skip

    def __copy__(self) -> Tensor:
        """``copy.copy(t)``: a new leaf sharing this tensor's memory and layout, as PyTorch's (a
        change of either shows in the other), with its ``requires_grad`` and without ``.grad``."""
        out = _copied_class(self)._wrap(self._data, self._dev)
        out.name = self.name
        out.__dict__.update(self.__dict__)  # (a user's attributes, as PyTorch's copy keeps them)
        if self.requires_grad:
            out.requires_grad_(True)
        return out

    def __deepcopy__(self, memo: dict) -> Tensor:
        """A new leaf with copied values, layout and gradient on the same device; tensors copied
        together that share memory (a tensor and its views) share their copies' memory, as
        PyTorch's. As PyTorch, a tensor made by an op (not a leaf) refuses: copy ``t.detach()``."""
        if self._ctx is not None:
            raise RuntimeError(
                f"deepcopy: the tensor of shape {tuple(self.shape)} was made by an op ({type(self._ctx).__name__}), not by the user; "
                "only graph leaves can be deep-copied (as in PyTorch): copy t.detach() instead"
            )
        import copy  # noqa: PLC0415 - only when copying

        out = _rebuild_tensor(_copied_class(self), _memory_copy(self._data, memo, self._dev), self._dev,
                              self.requires_grad, self.name, None, adopt=True)  # fmt: skip
        memo[id(self)] = out
        if self.grad is not None:
            out.grad = copy.deepcopy(self.grad, memo)
        if self.__dict__:  # (a user's attributes, copied as PyTorch's deepcopy copies them)
            out.__dict__.update(copy.deepcopy(self.__dict__, memo))
        return out

    # (the other methods are installed by the package's install_methods, each from the module
    # that implements it: tensor_arith.py, tensor_torch.py, tensor_shape.py, tensor_reduce.py,
    # tensor_creation.py, tensor_functions.py, indexing.py, functional.py, math_functions.py
    # and inplace_variants.py)

    # -- dtype conversions (last in the class body: these names shadow the builtins in it) --
    def long(self) -> Tensor:
        return self.astype(np.int64)

    def int(self) -> Tensor:
        return self.astype(np.int32)

    def half(self) -> Tensor:
        return self.astype(np.float16)

    def short(self) -> Tensor:
        return self.astype(np.int16)

    def char(self) -> Tensor:
        return self.astype(np.int8)

    def byte(self) -> Tensor:
        return self.astype(np.uint8)

    def cfloat(self) -> Tensor:
        return self.astype(np.complex64)

    def cdouble(self) -> Tensor:
        return self.astype(np.complex128)

    def bool(self) -> Tensor:
        return self.astype(np.bool_)

    def type(self, dtype: Any = None, non_blocking: bool = False) -> Any:
        """As PyTorch's: without a dtype, the legacy type name (``"torch.FloatTensor"``,
        ``"torch.cuda.LongTensor"``); with one (a dtype, such a name or such a class), this tensor
        converted, and moved to the CUDA device where the name is a ``torch.cuda`` one (PyTorch's
        ``RuntimeError`` where there is none). Anything else is PyTorch's error: a string or a class
        that names no tensor type (``"float32"``, ``np.float32``) its ``ValueError``, any other value
        its ``TypeError``. ``non_blocking`` is PyTorch's (copies here are synchronous)."""
        if dtype is None:
            return legacy_type_name(self)
        if dtype is Tensor:  # (the default tensor type: of the default dtype)
            dtype = "torch.Tensor"
        if isinstance(dtype, type) and not isinstance(getattr(dtype, "dtype", None), np.dtype):
            dtype = f"{dtype.__module__}.{dtype.__qualname__}".removeprefix("builtins.")
        cuda = False
        if isinstance(dtype, str):
            where, _, name = dtype.rpartition(".")
            found = [k for k, v in _LEGACY_TYPES.items() if v == name]
            if dtype == "torch.Tensor":
                found = [get_default_dtype().name]
            if where not in ("torch", "torch.cuda") or not found:
                raise ValueError(f"invalid type: '{dtype}'")
            dtype, cuda = found[0], where == "torch.cuda"
        elif not isinstance(dtype, type) and not isinstance(dtype, _TorchDtype):
            raise TypeError(f"type: dtype must be a type, str, or dtype object, not {type(dtype).__name__}")
        out = self.astype(dtype)
        return out.to("cuda") if cuda and not out._dev.name.startswith("cuda") else out


_LEGACY_TYPES = {"float32": "FloatTensor", "float64": "DoubleTensor", "float16": "HalfTensor",
                 "bfloat16": "BFloat16Tensor", "int8": "CharTensor", "uint8": "ByteTensor", "int16": "ShortTensor",
                 "int32": "IntTensor", "int64": "LongTensor", "bool": "BoolTensor", "complex64": "ComplexFloatTensor",
                 "complex128": "ComplexDoubleTensor", "uint16": "UInt16Tensor", "uint32": "UInt32Tensor",
                 "uint64": "UInt64Tensor"}  # fmt: skip


# PyTorch's free functions of these methods (``torch.detach(x)`` is ``x.detach()``)
for _method in ("detach", "fill_", "zero_"):
    public(getattr(Tensor, _method), name=_method)


def legacy_type_name(t: Tensor) -> str:
    """PyTorch's ``x.type()`` string of a tensor: ``torch.FloatTensor``, ``torch.cuda.IntTensor``."""
    where = "torch.cuda." if t._dev.name.startswith("cuda") else "torch."
    return where + _LEGACY_TYPES.get(t.dtype.name, f"{t.dtype.name}Tensor")


_PLAIN = frozenset((Tensor, int, float))  # operands that need no conversion


def _rebuild_tensor(cls: type, arr: Any, device: Any, requires_grad: bool, name: str | None,
                    grad: Tensor | None, adopt: bool = False, state: dict | None = None) -> Tensor:  # fmt: skip
    """The other half of ``Tensor.__reduce__``: a leaf of class ``cls`` (Tensor, Parameter) holding
    ``arr``'s values in its layout (``adopt``: ``arr`` itself, an array of the device made for it), with
    the user's attributes ``state``."""
    t = cls.__new__(cls)
    if isinstance(arr, np.generic):  # (a 0-d value pickled as NumPy's scalar keeps its dtype)
        arr = np.asarray(arr)
    viewed = isinstance(arr, tuple)
    if viewed:  # (a view pickled with its memory: _pickled_memory)
        memory, offset, shape, strides = arr
        arr = np.ndarray(shape, memory.dtype, buffer=memory, offset=offset, strides=strides)
    Tensor.__init__(t, arr, device=device, requires_grad=requires_grad, name=name)
    if adopt or (viewed and t._data.__class__ is np.ndarray):
        t._data = arr
    elif arr.__class__ is np.ndarray and t._data.__class__ is np.ndarray and t._data.strides != arr.strides:
        t._data = np.array(arr, order="K", copy=True)  # (the layout kept: strides as the pickled tensor's)
    t.grad = grad
    if state:
        t.__dict__.update(state)
    return t


def _copied_class(t: Tensor) -> type:
    """The class a copy or a pickle of ``t`` has: its own, but a Tensor for what ``.data`` hands out."""
    return Tensor if t.__class__ is _Untracked else t.__class__


def _memory_root(data: np.ndarray) -> np.ndarray | None:
    """The array owning the memory ``data`` views, where it lies plainly (C or F order), else None."""
    root = data
    while isinstance(root.base, np.ndarray):
        root = root.base
    return root if root.flags.c_contiguous or root.flags.f_contiguous else None


def _view_of(data: np.ndarray, root: np.ndarray, memory: np.ndarray) -> np.ndarray:
    """``data``'s view of ``root``, taken of ``memory`` (a copy of ``root``)."""
    offset = data.__array_interface__["data"][0] - root.__array_interface__["data"][0]
    return np.ndarray(data.shape, data.dtype, buffer=memory, offset=offset, strides=data.strides)


def _memory_copy(data: Any, memo: dict, dev: Device) -> Any:
    """A copy of ``data`` for ``copy.deepcopy``, in its layout: a view of the copy of the memory it
    views, that copy made once per ``memo`` (so views copied together stay views of one memory)."""
    if data.__class__ is not np.ndarray:
        return dev.copy(data)
    root = _memory_root(data)
    if root is None:  # (memory of no plain layout: a compact copy)
        return np.array(data, order="K", copy=True)
    key = ("tensor memory", id(root))
    if key not in memo:
        memo[key] = root.copy(order="K")
        memo.setdefault(id(memo), []).append(root)  # (kept alive while the memo lives: its id stays its own)
    return _view_of(data, root, memo[key])


def _pickled_memory(data: Any) -> Any:
    """What a pickle holds of a host array: the array, or for a view of other memory a copy of all
    that memory with the view's offset, shape and strides, as PyTorch pickles a tensor's whole
    storage, so that it unpickles in its layout (``x[:, 1]`` keeps its stride; NumPy's pickle would not)."""
    root = _memory_root(data) if data.__class__ is np.ndarray and data.size else None
    if root is None or root is data:
        return data
    offset = data.__array_interface__["data"][0] - root.__array_interface__["data"][0]
    return (root.copy(order="K"), offset, data.shape, data.strides)


class _Untracked(Tensor):
    """What ``Tensor.data`` hands out: a tensor without history sharing the memory, whose
    in-place changes are not counted in the memory's version (PyTorch's ``.data``)."""

    __slots__ = ()
    _tracks_versions = False
    _subclass_results = False


def _legacy_shape(first: Any, more: tuple, dtype: Any) -> np.ndarray:
    """``Tensor(2, 3)``, ``Tensor(0)``: zeros of that shape (PyTorch leaves them uninitialised). One
    Python int is a length, as PyTorch reads it (``torch.Tensor(0)`` is the empty vector programs
    start a ``cat`` from); a float or a bool stays 0-d data."""
    shape = (first, *more)
    if not all(isinstance(n, (int, np.integer)) and not isinstance(n, bool) and n >= 0 for n in shape):
        raise TypeError(
            f"Tensor: more than one positional argument is read as a shape (PyTorch's legacy constructor), "
            f"which needs non-negative ints; got {shape}. Pass data as one list: Tensor([...])"
        )
    return np.zeros(tuple(int(n) for n in shape), dtype=get_default_dtype() if dtype is None else np.dtype(dtype))


def _real_part(v: Any, target: str) -> Any:
    """A complex value as ``float()``/``int()`` take it, as PyTorch's: its real part when it has no
    imaginary one, else PyTorch's RuntimeError."""
    if isinstance(v, complex):
        if v.imag != 0:
            raise RuntimeError(f"value cannot be converted to type {target} without overflow: {v!r}")
        return v.real
    return v


def _is_dtype(x: Any) -> bool:
    return isinstance(x, (np.dtype, _TorchDtype)) or (
        isinstance(x, type) and issubclass(x, (np.generic, float, int, bool))
    )


def _to_args(args: tuple, kw: dict, op: str) -> tuple[Device | None, Any, bool]:
    """The (device, dtype, copy) that ``Tensor.to``'s three signatures ask for."""
    dev = kw.pop("device", None)
    dtype = kw.pop("dtype", None)
    copy = kw.pop("copy", False)
    kw.pop("non_blocking", None)  # (every transfer here is synchronous)
    if kw:
        raise TypeError(f"{op}: unexpected keyword argument(s) {sorted(kw)}; PyTorch's are device, dtype, "
                        "non_blocking, copy, memory_format")  # fmt: skip
    rest = list(args)
    if rest and isinstance(rest[0], (bool, float, complex, np.bool_, np.floating, np.complexfloating)):
        # (PyTorch reads a non-int number as to(other) of the 0-d tensor it wraps: its dtype)
        dtype = {"b": np.bool_, "f": np.float64, "c": np.complex128}[np.asarray(rest.pop(0)).dtype.kind]
    elif rest and isinstance(rest[0], Tensor):  # to(other, non_blocking=False, copy=False)
        other = rest.pop(0)
        dev, dtype = other._dev, other.dtype
    elif rest and not _is_dtype(rest[0]):  # to(device, dtype=None, non_blocking=False, copy=False)
        dev = rest.pop(0)
    if rest and _is_dtype(rest[0]):
        dtype = rest.pop(0)
    if dtype is not None and not _arguments.is_dtype(dtype):  # (a list, a string of bytes: PyTorch's TypeError)
        _arguments.refuse(op, "dtype", None, "dtype", dtype)
    if rest and isinstance(rest[0], bool):  # non_blocking
        rest.pop(0)
    if rest and isinstance(rest[0], bool):
        copy = rest.pop(0)
    if rest:
        raise TypeError(
            f"{op}: cannot read arguments {args!r}; use to(device), to(dtype), to(device, dtype) or to(other_tensor)"
        )
    return (get_device(dev) if dev is not None else None), dtype, bool(copy)


_ONE_ARGUMENT: Any = object()  # (where(cond) without a and b)


def _in_dtype(t: Tensor, dtype: Any) -> Tensor:
    return t if t.dtype == dtype else t.astype(dtype)


# -- free functions of the public API ---------------------------------------------
@public(functional=True)
def where(cond: Any, a: Any = _ONE_ARGUMENT, b: Any = _ONE_ARGUMENT) -> Any:
    """``a`` where ``cond`` is True, else ``b``; differentiable in ``a`` and ``b``;
    ``where(cond)`` alone is ``cond.nonzero(as_tuple=True)``, as PyTorch's.

    Dtypes are ``torch.result_type(a, b)``'s: a Python number or a 0-d tensor decides only
    where its kind is higher (``where(c, int_tensor, 0.5)`` is float32, ``where(c, f32,
    tensor(2.0, dtype=float64))`` float32); two numbers give float32, int64 or bool.
    """
    if a is _ONE_ARGUMENT or b is _ONE_ARGUMENT:
        if a is not b:
            raise TypeError("where: give both a and b, or neither (where(cond) is cond.nonzero(as_tuple=True))")
        if not isinstance(cond, Tensor):  # (PyTorch's one-argument where takes a tensor alone)
            raise TypeError(f"where(): argument 'condition' (position 1) must be Tensor, not {type(cond).__name__}")
        return cond.nonzero(as_tuple=True)
    # (a NumPy scalar is the Python number it holds, as PyTorch's parser reads it)
    a, b = (_promotion.scalar_value(v) if isinstance(v, np.generic) else v for v in (a, b))
    like = next((t for t in (a, b, cond) if isinstance(t, Tensor)), None)
    if like is None:
        like = Tensor(cond)
    if isinstance(cond, Tensor) and cond.dtype != np.bool_:  # (PyTorch's rule: a tensor condition is a mask)
        raise RuntimeError(f"where expected condition to be a boolean tensor, but got a tensor with dtype {cond.dtype}")
    if not isinstance(cond, Tensor):
        cond = Tensor(cond, device=like._dev)
    if cond.dtype != np.bool_:  # (an array or list of numbers: nonzero is True, as NumPy's where)
        cond = cond != 0
    a, b = _where_operand(a, like), _where_operand(b, like)
    if isinstance(a, Tensor) or isinstance(b, Tensor):  # torch.result_type's dtype, 0-d and number rules included
        dt = _result_type(a, b)
        for v in (a, b):  # (an int the result's integer dtype cannot hold is PyTorch's error, as fill_'s)
            if v.__class__ is int and dt.kind in "iu":
                fill_value_in("where", v, dt)
        a, b = _promotion.promoted_operands(a, b)
    else:  # two numbers: the first becomes a tensor of their common dtype
        dt = max(_scalar_dtype(a), _scalar_dtype(b), key=lambda d: _KIND_RANK[d.kind])
        a = Tensor._wrap(like._dev.asarray(np.asarray(a, dtype=dt)), like._dev)
    return ops.Where.apply(cond, a, b)


@public
def cat(tensors: Sequence[Tensor], axis: int | None = None, *, dim: int | None = None) -> Tensor:
    """Join tensors along an existing axis (``axis`` or PyTorch's ``dim``; 0 by default)."""
    if dim is not None:
        axis = dims.alias(axis, dim, "cat")
    axis = 0 if axis is None else axis
    tensors = list(tensors)
    if not tensors:
        raise ValueError("cat: needs at least one tensor")
    legacy = [isinstance(t, Tensor) and t.shape == (0,) for t in tensors]
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"cat: expected a Tensor as element {i}, got {type(t).__name__}")
    if any(legacy) and not all(legacy):
        # PyTorch's legacy rule: a 1-d empty tensor joins anything, whatever the dim. It is given the others'
        # shape with no entries along the axis, so it stays in the graph (its gradient: empty) and its dtype counts.
        like = tensors[legacy.index(False)]
        d = dims.one(like.shape, axis, "cat")
        empty_shape = like.shape[:d] + (0,) + like.shape[d + 1 :]
        dtype = _result_type(*tensors)
        tensors = [(t.reshape(empty_shape) if e else t) for t, e in zip(tensors, legacy)]
        tensors = [t if t.dtype == dtype else t.astype(dtype) for t in tensors]
    if tensors[0].ndim == 0:  # (PyTorch's RuntimeError, and a ValueError: see InvalidArgumentError)
        raise InvalidArgumentError("cat: 0-d tensors cannot be concatenated; use stack, or reshape them to (1,)")
    return ops.Cat.apply(*_joined_dtype(tensors), args=dims.one(tensors[0].shape, axis, "cat"))


def _joined_dtype(tensors: list) -> list:
    """The operands of ``cat``/``stack`` in one dtype, ``torch.result_type``'s over them
    (int64 with float32 joins as float32, as PyTorch's, not NumPy's float64)."""
    first = tensors[0].dtype
    if all(t.dtype == first for t in tensors):
        return tensors
    dtype = _result_type(*tensors)
    return [t if t.dtype == dtype else t.astype(dtype) for t in tensors]


@public
def stack(tensors: Sequence[Tensor], axis: int | None = None, *, dim: int | None = None) -> Tensor:
    """Join tensors along a new axis (``axis`` or PyTorch's ``dim``; 0 by default)."""
    if dim is not None:
        axis = dims.alias(axis, dim, "stack")
    axis = 0 if axis is None else axis
    tensors = list(tensors)
    if not tensors:
        raise ValueError("stack: needs at least one tensor")
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"stack: expected a Tensor as element {i}, got {type(t).__name__}")
    shapes = {t.shape for t in tensors}
    if len(shapes) > 1:
        raise InvalidArgumentError(f"stack: all tensors need one shape, got {sorted(shapes)}")
    axis = dims.new_axis(tensors[0].shape, axis, "stack")
    return ops.Stack.apply(*_joined_dtype(tensors), args=axis)


# -- operands PyTorch refuses -----------------------------------------------------------
def _matmul_operands(a: Tensor, b: Tensor) -> tuple[Tensor, Tensor]:
    """PyTorch's matmul promotes nothing: both operands of one dtype, and not bool."""
    if a._data.dtype != b._data.dtype:
        raise RuntimeError(
            f"matmul: expected m1 and m2 to have the same dtype, but got: {a.dtype} != {b.dtype} "
            f"(shapes {tuple(a.shape)} and {tuple(b.shape)}); convert one with .to(other.dtype)"
        )
    if _kind(a) == "b":
        raise UnsupportedDtypeError(
            f"matmul: not implemented for 'Bool' (shapes {tuple(a.shape)} and {tuple(b.shape)}); convert with .long()"
        )
    return a, b


def _bool_subtraction(a: Any, b: Any) -> NoReturn:
    """PyTorch refuses ``-`` with a bool operand (a mask minus anything is a mistake for ``~``)."""
    raise RuntimeError(
        "Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying to invert a "
        f"mask, use the `~` or `logical_not()` operator instead (operands {_described(a)} and {_described(b)})"
    )


def _described(x: Any) -> str:
    return f"a {x.dtype} tensor of shape {tuple(x.shape)}" if isinstance(x, Tensor) else repr(x)


# -- bool ** bool, as PyTorch's ------------------------------------------------------
def _bool_pow(a: Any, b: Any) -> Tensor:
    """``bool ** bool`` as PyTorch: a tensor to a Python bool stays bool (``x ** True`` is
    ``x``, ``x ** False`` all True); two bool tensors, or a bool to a bool tensor, raise."""
    if isinstance(a, Tensor) and not isinstance(b, Tensor):
        return a.clone() if b else Tensor.ones(a.shape, dtype=np.bool_, device=a._dev)
    raise UnsupportedModeError("pow: not implemented for bool ** bool tensors (PyTorch: \"pow\" not implemented for "
                               "'Bool'); convert with .long() or .float() first")  # fmt: skip


# -- the namespace that makes backward formulas record a graph -------------------
# The namespace of tensor ops a backward pass with create_graph=True hands to each op (built
# from the ops in ops/tensor_namespace.py); the engine learns it and the class by registration.
_promotion.register(Tensor)  # (the promotion rules tell a Tensor from a number by this class)
TENSOR_NS = TensorNamespace(where=where, stack=stack)
register_tensor(Tensor, TENSOR_NS)


def _complex_to_real_warning() -> None:
    _user_warn("Casting complex values to real discards the imaginary part", UserWarning)
