"""Tensor's members about its memory and kind that PyTorch code reads, with PyTorch's answers for
a dense tensor on a CPU without CUDA: the ``is_sparse is_nested is_quantized is_mkldnn
is_xpu is_mps is_ipu is_maia is_mtia is_vulkan is_xla`` flags (False for a dense tensor; a sparse
COO tensor, ``tensors/sparse.py``, answers ``is_sparse`` itself), ``is_meta`` (a tensor of the meta device), ``is_pinned()`` / ``pin_memory()`` (PyTorch's RuntimeError: no
accelerator to pin for), ``is_shared()`` / ``share_memory_()`` (a mark on the memory, seen by
every view of it), ``dim_order()``, ``const_data_ptr()``, ``new_empty_strided`` and ``adjoint``.

>>> import tinygrad_attn as tga
>>> x = tga.zeros(2, 3)
>>> x.is_sparse, x.is_pinned(), x.t().dim_order()
(False, False, (1, 0))
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from typing import Any

import numpy as np

from .. import ops
from ..engine.declare import public
from ..engine.switches import is_grad_enabled, is_inference_tensor, no_grad
from ..engine.versions import _memory_root
from ..engine.warn import warn
from ..runtime.backend import device as _device
from ._tensor import Tensor
from .dtypes import UnsupportedDtypeError
from .factories.creation import empty_strided

_FLAGS = ("is_sparse", "is_nested", "is_quantized", "is_mkldnn", "is_xpu", "is_mps", "is_ipu", "is_maia",
          "is_mtia", "is_vulkan", "is_xla")  # fmt: skip


def _declare_flag(name: str) -> None:
    def flag(self: Tensor) -> bool:
        return False

    flag.__name__ = flag.__qualname__ = f"_{name}"
    flag.__doc__ = f"``Tensor.{name}``: False, as PyTorch's for a dense tensor on the CPU (or CUDA)."
    public(property(flag), name=name, function=False, method=True)


for _name in _FLAGS:
    _declare_flag(_name)


@public(name="is_meta", function=False, method=True)
@property
def _is_meta(self) -> bool:
    """``Tensor.is_meta``: whether the tensor is on the meta device (a shape, dtype and strides, no values)."""
    return self._dev.meta


# (the device types PyTorch's device strings may start with)
_DEVICE_TYPES = ("cpu cuda ipu xpu mkldnn opengl opencl ideep hip ve fpga maia xla lazy vulkan mps meta hpu mtia "
                 "privateuseone").split()  # fmt: skip


@public(function=False, method=True)
def is_pinned(self, device: Any = None) -> bool:
    """False: no memory here is page-locked for an accelerator (PyTorch's on a CPU without CUDA).
    ``device`` (deprecated in PyTorch, with its warning) as PyTorch reads it: an index asks for an
    accelerator (its RuntimeError), a name or ``tga.device`` is read and answered False."""
    if device is None:
        return False
    if isinstance(device, bool) or not isinstance(device, (str, int, _device)):
        raise TypeError(
            f"is_pinned(): argument 'device' (position 1) must be torch.device, not {type(device).__name__}"
        )
    if isinstance(device, int):
        if device < 0:
            raise RuntimeError(f"is_pinned: Device index must not be negative, got {device}")
        raise RuntimeError(f"is_pinned: Cannot access accelerator device when none is available (device {device})")
    if isinstance(device, str) and device.split(":")[0] not in _DEVICE_TYPES:
        raise RuntimeError(
            f"Expected one of {', '.join(_DEVICE_TYPES)} device type at start of device string: {device} (is_pinned)"
        )
    warn("The argument 'device' of Tensor.is_pinned() is deprecated. Please do not pass this argument.",
         DeprecationWarning)  # fmt: skip
    return False


@public(function=False, method=True)
def pin_memory(self, device: Any = None) -> Tensor:
    """PyTorch's ``RuntimeError`` on a machine without an accelerator: nothing to pin memory for."""
    raise RuntimeError(
        f"pin_memory: Cannot access accelerator device when none is available (tensor of shape {tuple(self.shape)}, "
        f"{self.dtype}, on {self.device})"
    )


# the memories marked shared, by the id of their root array (an entry goes with its memory)
_shared: dict[int, weakref.ref] = {}


def _root(t: Tensor) -> Any:
    return _memory_root(t._data)


@public(function=False, method=True)
def is_shared(self) -> bool:
    """Whether :meth:`share_memory_` marked this tensor's memory (its views' and base's alike)."""
    root = _root(self)
    ref = _shared.get(id(root))
    return ref is not None and ref() is root


@public(function=False, method=True)
def share_memory_(self) -> Tensor:
    """Mark the memory as shared between processes and return ``self`` (PyTorch's moves it into
    shared memory; here the worker processes of ``tga.multiprocessing`` get their tensors
    pickled, and the mark is what ``is_shared()`` reads, for this tensor and every view of it)."""
    root, key = _root(self), id(_root(self))
    try:
        _shared[key] = weakref.ref(root, lambda _, key=key: _shared.pop(key, None))
    except TypeError:  # (an array that takes no weak reference: kept by identity)
        _shared[key] = lambda root=root: root
    return self


@public(function=False, method=True)
def dim_order(self, *, ambiguity_check: bool | Sequence[Any] = False) -> tuple[int, ...]:
    """The dims from the outermost in memory to the innermost, sorted by stride as PyTorch's
    (``x.t().dim_order()`` of a matrix is ``(1, 0)``; an expanded dim, of stride 0, keeps its place)."""
    if ambiguity_check is not False:
        raise NotImplementedError(
            f"dim_order: ambiguity_check={ambiguity_check!r} is not supported (tensor of shape {tuple(self.shape)})"
        )
    strides, shape = self.stride(), tuple(self.shape)
    n = self.ndim
    if n < 2:
        return tuple(range(n))
    if _dense_in_order(shape, strides, range(n)):  # (contiguous; PyTorch's fast path, as its channels-last one)
        return tuple(range(n))
    if n == 4 and _dense_in_order(shape, strides, (0, 2, 3, 1)):
        return (0, 2, 3, 1)

    def at_least(a: int, b: int) -> bool:
        return b == 0 or (a != 0 and (a >= b or a % b == 0))

    def order(a: int, b: int) -> int:  # (PyTorch's: a stride of 0 decides nothing; equal strides, by size)
        if strides[a] == 0 or strides[b] == 0:
            return 0
        if strides[a] == strides[b]:
            return 0 if at_least(shape[b], shape[a]) else 1
        return -1 if at_least(strides[b], strides[a]) else 1 if at_least(strides[a], strides[b]) else 0

    perm = list(reversed(range(n)))  # (an insertion sort from the innermost, stopping at a decided pair)
    for i in range(1, n):
        j = i
        for k in reversed(range(i)):
            c = order(perm[k], perm[j])
            if c > 0:
                perm[k], perm[j] = perm[j], perm[k]
                j = k
            elif c < 0:
                break
    return tuple(reversed(perm))


def _dense_in_order(shape: tuple[int, ...], strides: tuple[int, ...], order: Sequence[int]) -> bool:
    """Whether the dims, outermost first in ``order``, are row-major over one block of memory (dims
    of size 1 may have any stride; an empty tensor is), as PyTorch's contiguity of a memory format."""
    if 0 in shape:
        return True
    expected = 1
    for d in reversed(tuple(order)):
        if shape[d] != 1:
            if strides[d] != expected:
                return False
            expected *= shape[d]
    return True


@public(function=False, method=True)
def const_data_ptr(self) -> int:
    """:meth:`data_ptr`, the address of the first element (PyTorch's for reading only)."""
    return self.data_ptr()


@public(function=False, method=True)
def new_empty_strided(
    self,
    size: Sequence[int],
    stride: Sequence[int],
    *,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    pin_memory: bool = False,
) -> Tensor:
    """:func:`~tinygrad_attn.empty_strided` of this tensor's dtype and device unless given."""
    return empty_strided(
        size,
        stride,
        dtype=dtype if dtype is not None else self.dtype,
        layout=layout,
        device=device if device is not None else self.device,
        requires_grad=requires_grad,
        pin_memory=pin_memory,
    )


@public(method=True)
def adjoint(self) -> Tensor:
    """The conjugate transpose of the last two dims, ``x.mT.conj()``: a view for a real tensor,
    as PyTorch's; a 1-D tensor is PyTorch's RuntimeError, a 0-d one its conjugate (with its warning)."""
    if self.ndim == 0:  # (PyTorch's: a deprecated spelling of conj)
        warn("adjoint() is deprecated on 0-D tensors. Consider using x.conj().", UserWarning)
        return self.conj()
    if self.ndim < 2:
        raise RuntimeError(
            f"tensor.adjoint() is only supported on matrices or batches of matrices. Got {self.ndim}-D tensor."
        )
    t = self.transpose(-2, -1)
    return t.conj() if self.dtype.kind == "c" else t


@public(method=True)
def as_strided(
    input: Tensor,  # noqa: A002
    size: Sequence[int],
    stride: Sequence[int],
    storage_offset: int | None = None,
) -> Tensor:
    """A view of the memory ``input`` lies in (its base's, all of it): ``size`` elements ``stride``
    apart from ``storage_offset`` (``input``'s own by default), as PyTorch's; its gradient is
    PyTorch's AsStridedBackward (see :class:`~tinygrad_attn.ops.movement.AsStrided`)."""
    size, stride = tuple(int(n) for n in size), tuple(int(s) for s in stride)
    if len(size) != len(stride):
        raise RuntimeError(f"mismatch in length of strides and shape (as_strided: size {size}, stride {stride})")
    if any(s < 0 for s in stride):
        raise RuntimeError(f"as_strided: Negative strides are not supported at the moment, got strides: {list(stride)}")
    if any(n < 0 for n in size):
        raise RuntimeError(f"as_strided: Trying to create tensor with negative dimension: size {list(size)}")
    if storage_offset is not None and storage_offset < 0:
        raise RuntimeError(f"Tensor: invalid storage offset {storage_offset} (as_strided of size {list(size)})")
    return ops.AsStrided.apply(input, args=(size, stride, None if storage_offset is None else int(storage_offset)))


@public(method=True)
def is_inference(input: Tensor) -> bool:  # noqa: A002
    """Whether ``input`` was made inside :class:`~tinygrad_attn.inference_mode` (PyTorch's inference tensor)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"is_inference(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    return is_inference_tensor(input)


@public(function=False, method=True)
def as_subclass(self, cls: type) -> Tensor:
    """This tensor as an instance of ``cls`` (a subclass of :class:`Tensor`), sharing its memory
    and its history as an alias, as PyTorch's."""
    if not (isinstance(cls, type) and issubclass(cls, Tensor)):
        raise TypeError(
            "Creating a Tensor subclass from a class that does not inherit from Tensor is not possible. "
            f"Make sure your class inherits from Tensor (as_subclass got {cls!r})."
        )
    alias = self.view_as(self)
    out = cls.__new__(cls)
    for slot in Tensor.__slots__:
        if slot not in ("__weakref__", "__dict__") and hasattr(alias, slot):
            setattr(out, slot, getattr(alias, slot))
    return out


@public(function=False, method=True)
def set_(self, source: Any = None, storage_offset: int | None = None, size: Sequence[int] | None = None,
         stride: Sequence[int] | None = None) -> Tensor:  # fmt: skip
    """Make this tensor show ``source``'s memory, in place, as PyTorch's: all of ``source`` as it is,
    or (with ``storage_offset``, ``size``, ``stride``) that window of it; ``set_()`` leaves it empty."""
    from .mutation.inplace import apply_restride  # noqa: PLC0415 - (inplace imports this package)

    if source is None:
        with no_grad():
            shown = Tensor.zeros(0, dtype=self.dtype, device=self.device)
    elif not isinstance(source, Tensor):
        raise TypeError(f"set_(): argument 'source' must be Tensor, not {type(source).__name__}")
    elif source.dtype != self.dtype:
        raise RuntimeError(
            f"Could not set tensor of type {source.dtype} to a tensor of type {self.dtype} (set_ takes the same dtype)"
        )
    elif size is None:
        shown = source.detach()
    else:
        size = tuple(size)
        if stride is None:
            stride = tuple(int(np.prod(size[k + 1 :], dtype=np.int64)) for k in range(len(size)))
        with no_grad():
            shown = source.detach().as_strided(size, stride, storage_offset)
    if self.requires_grad and self._ctx is not None and is_grad_enabled():
        # (its values no longer depend on its history: none of the gradient goes there)
        shown = shown.detach().requires_grad_()
    return apply_restride(self, "set_", lambda t: shown, lambda t: t)


@public(function=False, method=True)
def is_set_to(self, tensor: Tensor) -> bool:
    """Whether this tensor and ``tensor`` show the same memory the same way (one memory, offset,
    shape and strides), as PyTorch's."""
    if not isinstance(tensor, Tensor):
        raise TypeError(f"is_set_to(): argument 'tensor' (position 1) must be Tensor, not {type(tensor).__name__}")
    return (
        _root(self) is _root(tensor)
        and tuple(self.shape) == tuple(tensor.shape)
        and self.stride() == tensor.stride()
        and self.storage_offset() == tensor.storage_offset()
    )


@public(function=False, method=True)
def module_load(self, other: object, assign: object = False) -> Tensor:
    """What :meth:`Module.load_state_dict` puts in place of this parameter or buffer: ``other``
    detached (``assign``), else ``other``'s values copied into this tensor, detached, as PyTorch's."""
    if assign:
        return other.detach()  # type: ignore[attr-defined]
    return self.copy_(other).detach()


@public(function=False, method=True)
def chalf(self, memory_format: Any = None) -> Tensor:
    """PyTorch's ``complex32`` copy: there is no complex32 here (NumPy has no complex half), so
    this raises; ``x.cfloat()`` is the complex copy that exists."""
    raise UnsupportedDtypeError(
        f"chalf: complex32 (ComplexHalf) is not a dtype of tinygrad_attn (tensor of dtype {self.dtype}, shape "
        f"{tuple(self.shape)}); use x.cfloat() for a complex64 copy"
    )
