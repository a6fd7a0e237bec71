"""Shape and view methods of :class:`Tensor` (``reshape permute transpose expand squeeze
unsqueeze flatten narrow select ...``), each one function that is both the method and
the ``tga.`` free function, installed on Tensor by the package's ``install_methods``.

Views share memory with their input exactly where PyTorch's do (see the API's "Memory").
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np

from ... import ops
from ...engine.declare import public
from ...engine.layout import view_strides
from ...engine.warn import warn as _user_warn
from ...functional.checks import tensor_arg, tensor_operand
from .._tensor import InvalidArgumentError, Shape, Tensor, _shape_args
from ..dtypes import dtype as _TorchDtype
from ..dtypes import scalar_type_name
from . import dims as _dims

__all__ = []


@functools.lru_cache(maxsize=4096)
def _reshape_target(cur: Shape, shape: tuple) -> Shape:
    """``shape`` with its one ``-1`` resolved, checked against ``cur`` (cached: a model
    reshapes the same few ways on every step). The messages are PyTorch's, word for word:
    lessons print them (``except RuntimeError as e: print(e)`` after ``x.view(2, 4)``)."""
    shape = tuple(map(int, shape))
    n = math.prod(cur)
    mismatch = f"shape '{list(shape)}' is invalid for input of size {n}"
    inferred = False
    for i, s in enumerate(shape):  # (left to right, as PyTorch reports the first fault)
        if s == -1 and inferred:
            raise InvalidArgumentError("only one dimension can be inferred")
        if s < -1:
            raise InvalidArgumentError(f"invalid shape dimension {s} at index {i} of shape {list(shape)}")
        inferred = inferred or s == -1
    if -1 in shape:
        known = math.prod(s for s in shape if s != -1)
        if known == 0 and n == 0:
            raise InvalidArgumentError(
                f"cannot reshape tensor of 0 elements into shape {list(shape)} because the unspecified dimension "
                "size -1 can be any value and is ambiguous"
            )
        if known == 0 or n % known:
            raise InvalidArgumentError(mismatch)
        shape = tuple(n // known if s == -1 else s for s in shape)
    if math.prod(shape) != n:
        raise InvalidArgumentError(mismatch)
    return shape


@functools.lru_cache(maxsize=4096)
def _permutation(shape: tuple, axes: tuple) -> tuple[int, ...] | None:
    """``axes`` checked (one per axis, each in range, none repeated) and made non-negative;
    None for the identity. Cached: models permute with the same few axes on every step."""
    if len(axes) != len(shape):
        raise InvalidArgumentError(
            f"permute: {len(axes)} axes {axes} given for a tensor of shape {shape} ({len(shape)} axes)"
        )
    perm = _dims.axes(shape, axes, "permute") if shape else ()
    return None if perm == tuple(range(len(shape))) else perm


@functools.cache
def _swap_last_two(ndim: int) -> tuple[int, ...]:
    return (*range(ndim - 2), ndim - 1, ndim - 2)


@public(name="view", function=False, method=True)
def view(self, *shape: Any) -> Tensor:
    """PyTorch's ``view``: the same memory read as another shape, where its strides allow it
    (after ``t()`` or a strided slice they may not: a RuntimeError that names ``reshape``);
    ``view(dtype)``: the same bytes read as another dtype of the same size."""
    if len(shape) == 1 and isinstance(shape[0], (np.dtype, type, str, _TorchDtype)):
        return _view_as_dtype(self, shape[0])
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    cur = tuple(self._data.shape)
    target = _reshape_target(cur, shape)
    d = self._data
    strides = getattr(getattr(d, "_array", d), "strides", None)
    if strides is not None and target != cur:
        steps = tuple(int(st) // self.dtype.itemsize for st in strides)
        if view_strides(cur, steps, target) is None:  # (PyTorch's rule for view: engine/layout.py)
            raise InvalidArgumentError(  # (PyTorch's words: the view-or-reshape lesson prints them)
                "view size is not compatible with input tensor's size and stride (at least one dimension spans "
                "across two contiguous subspaces). Use .reshape(...) instead."
            )
    return reshape(self, target)


def _view_as_dtype(self: Tensor, dtype: Any) -> Tensor:
    """The same bytes read as ``dtype``; of another element size, the last dim (stride 1) holds more or
    fewer elements, under PyTorch's conditions (each its RuntimeError)."""
    dt = np.dtype(dtype)
    old, new = self.dtype.itemsize, dt.itemsize
    if new != old:
        names = f"{scalar_type_name(self.dtype)} as {scalar_type_name(dt)} (different element sizes)"
        if self.ndim == 0:
            raise RuntimeError(f"view(): self.dim() cannot be 0 if self.element_size() ({old}) != "
                               f"dtype.element_size() ({new})")  # fmt: skip
        strides = self.stride()
        if strides[-1] != 1:
            raise RuntimeError(f"view(): self.stride(-1) must be 1 to view {names}, but got {strides[-1]}")
        if new > old:
            ratio = new // old
            for what, value in (("size(-1)", self.shape[-1]), ("storage_offset()", self.storage_offset()),
                                *((f"stride({i})", st) for i, st in enumerate(strides[:-1]))):  # fmt: skip
                if value % ratio:
                    raise RuntimeError(f"view(): self.{what} must be divisible by {ratio} to view {names}, "
                                       f"but got {value}")  # fmt: skip
    return Tensor._wrap(self._data.view(dt), self._dev)  # (no gradient flows through a reinterpretation)


@public(method=True)
def reshape(self, *shape: Any) -> Tensor:
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    cur = tuple(self._data.shape)
    shape = _reshape_target(cur, shape)
    return ops.Reshape.apply(self, args=shape)  # (a new view even of the same shape, as PyTorch's: not ``self``)


@public(method=True)
def permute(self, *axes: Any, dims: Any = None) -> Tensor:
    """The axes reordered as ``axes`` (``x.permute(1, 0)``, ``permute(x, (1, 0))``, ``dims=``)."""
    if dims is not None:
        axes = (dims,)
    if len(axes) == 1 and isinstance(axes[0], (tuple, list)):
        axes = tuple(axes[0])
    perm = _permutation(self.shape, axes)
    # (the same order: still a new view, PermuteBackward0, as PyTorch's)
    return ops.Permute.apply(self, args=perm if perm is not None else tuple(range(self.ndim)))


@public(method=True)
def transpose(self, dim0: int, dim1: int) -> Tensor:
    """Swap two axes (both named, as PyTorch's: ``x.mT`` swaps the last two)."""
    a0, a1 = dim0, dim1
    if _dims.axes(self.shape, (a0, a1), "transpose", distinct=False) == ():  # 0-d: nothing to swap, as in PyTorch
        return ops.movement.Transpose.apply(self, args=())
    axes = list(range(self.ndim))
    a0, a1 = _dims.axes(self.shape, (a0, a1), "transpose", distinct=False)
    if a0 == a1:  # (nothing to swap: still a new view, its strides kept, as PyTorch's)
        return ops.movement.Transpose.apply(self, args=tuple(axes))
    axes[a0], axes[a1] = axes[a1], axes[a0]
    return ops.movement.Transpose.apply(self, args=tuple(axes))


@public(function=False, method=True)
@property
def mT(self) -> Tensor:  # noqa: N802 - the array API's name
    nd = self._data.ndim
    if nd < 2:
        raise ValueError(f"mT: needs at least 2 dimensions, the tensor has shape {tuple(self.shape)}")
    return ops.movement.MatrixTranspose.apply(self, args=_swap_last_two(nd))


@public(function=False, method=True)
@property
def T(self) -> Tensor:  # noqa: N802 - NumPy's name
    """The dimensions reversed (a matrix transposed), as PyTorch's ``.T``; PyTorch deprecates
    it for other than 2 dimensions (its warning too), and 0-D and 1-D tensors are themselves."""
    nd = self.ndim
    if nd > 2:
        _user_warn(
            f"The use of `x.T` on tensors of dimension other than 2 to reverse their shape is deprecated and it "
            f"will throw an error in a future release (shape {tuple(self.shape)}); use x.permute(*range(x.ndim - 1, -1, -1))",
            UserWarning,
        )  # fmt: skip
    return ops.movement.ReversedAxes.apply(self, args=tuple(range(nd - 1, -1, -1)))


@public(function=False, method=True)
@public(name="broadcast_to", method=True)
def expand(self, *shape: Any) -> Tensor:
    """Broadcast to ``shape``; ``-1`` keeps a dimension."""
    tensor_arg(self, "broadcast_to")  # (tga.broadcast_to is this function)
    shape = _shape_args(shape)
    lead = len(shape) - self.ndim
    if lead < 0:
        raise InvalidArgumentError(f"expand: cannot expand shape {tuple(self.shape)} to fewer dimensions {shape}")
    shape = tuple(self.shape[i - lead] if s == -1 else s for i, s in enumerate(shape))
    if shape == self.shape:
        return ops.movement.ExpandSame.apply(self, args=shape)  # (a new view, its strides kept, as PyTorch's)
    for i, s in enumerate(self.shape):
        if s != 1 and s != shape[i + lead]:
            raise InvalidArgumentError(f"expand: cannot expand shape {tuple(self.shape)} to {shape}")
    return ops.Expand.apply(self, args=shape)


@public(method=True)
def squeeze(self, dim: Any = _dims.NOT_GIVEN, *dims: int, axis: Any = None) -> Tensor:
    """Drop axes of length 1: all of them, or those of ``dim`` that have length 1
    (PyTorch's meaning: others are left as they are; ``x.squeeze(1, 0)`` names two). NumPy's
    ``axis=`` raises for an axis whose length is not 1."""
    dim = _dims.given("squeeze", dim)
    if dims:
        dim = (dim, *dims)
    s = _dims.spelling("squeeze", dim, axis=axis)
    # (PyTorch's overloads: squeeze() SqueezeBackward0, squeeze(dim) 1, squeeze(dims) 2)
    mv = ops.movement
    op = mv.Squeeze if s.dim is None else mv.SqueezeDim if isinstance(s.dim, int) else mv.SqueezeDims
    if s.dim is None:
        ones = tuple(k for k, n in enumerate(self.shape) if n == 1)
        return op.apply(self, args=(tuple(n for n in self.shape if n != 1), ones))
    axes = _dims.axes(self.shape, s.dim, "squeeze")
    if s.numpy:
        for a in axes:
            if self.shape[a] != 1:
                raise InvalidArgumentError(
                    f"squeeze: axis {a} has size {self.shape[a]}, not 1 (shape {tuple(self.shape)}); "
                    "squeeze(dim) leaves such an axis as it is"
                )
    axes = tuple(a for a in axes if self.shape[a] == 1)  # (none: still a new view, as PyTorch's)
    return op.apply(self, args=(tuple(n for i, n in enumerate(self.shape) if i not in axes), axes))


@public(method=True)
def unsqueeze(self, axis: int | None = None, *, dim: int | None = None) -> Tensor:
    axis = _dims.new_axis(self.shape, _dims.required(axis, dim, "unsqueeze"), "unsqueeze")
    return ops.movement.Unsqueeze.apply(self, args=((*self.shape[:axis], 1, *self.shape[axis:]), (axis,)))


@public(method=True)
def flatten(self, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    """Axes ``start_dim`` to ``end_dim`` merged into one."""
    if self.ndim == 0:
        _dims.axes((), (start_dim, end_dim), "flatten", distinct=False)
        return self.reshape(1)
    start, end = _dims.axes(self.shape, (start_dim, end_dim), "flatten", distinct=False)
    if start > end:
        raise InvalidArgumentError(
            f"flatten: start_dim {start_dim} comes after end_dim {end_dim} (shape {tuple(self.shape)})"
        )
    if start == end:  # (nothing to merge: the tensor itself, as PyTorch's)
        return self
    # (the size spelled out, not -1: a shape with a 0 has no single -1 to infer)
    return self.reshape(self.shape[:start] + (math.prod(self.shape[start : end + 1]),) + self.shape[end + 1 :])


@public(function=False, method=True)
def view_as(self, other: Tensor) -> Tensor:
    return self.reshape(tensor_operand(other, "view_as", "other", 1).shape)


@public(function=False, method=True)
def reshape_as(self, other: Tensor) -> Tensor:
    return self.reshape(tensor_operand(other, "reshape_as", "other", 1).shape)


@public(function=False, method=True)
def expand_as(self, other: Tensor) -> Tensor:
    return self.expand(tensor_operand(other, "expand_as", "other", 1).shape)


@public(method=True)
def t(self) -> Tensor:
    """The transpose of a matrix (of a 0-D or 1-D tensor, a view of it as it is)."""
    if tensor_arg(self, "t").ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {self.ndim}D (shape {tuple(self.shape)}); "
                           "use .mT or .transpose(-2, -1)")  # fmt: skip
    # (of a 0-D or 1-D tensor a view of it all the same, as PyTorch's: a no_grad t() is a no_grad view)
    return ops.movement.TwoDTranspose.apply(self, args=(1, 0) if self.ndim == 2 else tuple(range(self.ndim)))


@public(method=True)
def narrow(self, dim: int, start: Any, length: int) -> Tensor:
    """``length`` entries of ``dim`` from ``start`` (a view); a negative ``start`` counts from
    the end, and ``start`` may be a 0-d integer tensor, as PyTorch's. Past the end raises."""
    d = _dims.one(tensor_arg(self, "narrow").shape, dim, "narrow", scalar_ok=False)
    size = self.shape[d]
    if isinstance(start, (bool, np.bool_)):  # (no overload of PyTorch's takes a bool start)
        raise TypeError(f"narrow(): received an invalid combination of arguments - got start {start!r}; "
                        "expected an int or a 0-d integer tensor")  # fmt: skip
    if isinstance(start, Tensor):
        if start.ndim != 0 or start.dtype.kind not in "iu":
            raise RuntimeError(
                f"narrow: start must be an 0-dim integral Tensor, got shape {tuple(start.shape)}, {start.dtype}"
            )
        start = int(start.item())
    start = int(start)
    if not -size <= start <= size:
        raise IndexError(f"narrow: start {start} is out of range for dim {dim} of size {size}")
    start = start + size if start < 0 else start  # (a negative start counts from the end, as in PyTorch)
    if not 0 <= length <= size - start:
        raise RuntimeError(f"narrow: start ({start}) + length ({length}) exceeds dim {dim} of size {size}")
    return self[(slice(None),) * d + (slice(start, start + length),)]


@public(method=True)
def select(self, dim: int, index: int) -> Tensor:
    d = _dims.one(tensor_arg(self, "select").shape, dim, "select", scalar_ok=False)
    return self[(slice(None),) * d + (index,)]
