"""Shape primitives: views and copies that move elements without changing them."""

from __future__ import annotations

import functools
import math

import numpy as np

from ..engine.backward import SliceGradient
from ..engine.function import Function
from ..engine.layout import (
    expanded_strides,
    has_strides,
    joined,
    memory_root,
    strides_of,
    unsqueezed_strides,
    view_strides,
    with_strides,
)


class Reshape(Function):
    __slots__ = ()
    primitive = True
    view = True  # the result may share the input's memory
    reads_values = False  # backward reads shapes only
    reads_output = False

    def forward(self, ns, a):
        out = ns.reshape(a, self.shape)
        if not has_strides(out) or 1 not in a.shape and (1 not in out.shape or a.flags.c_contiguous):
            return out  # (no dim of size 1, or a row-major input: NumPy's strides are PyTorch's)
        return with_strides(out, a, self.strides(tuple(a.shape), strides_of(a)))

    @property
    def shape(self) -> tuple[int, ...]:
        return self.args

    def strides(self, shape: tuple[int, ...], strides: tuple[int, ...]) -> tuple[int, ...] | None:
        """The strides of PyTorch's view of an input of ``shape``/``strides`` (None: PyTorch copies)."""
        return view_strides(shape, strides, self.args)

    def backward(self, g, ns, inputs, out):
        return (ns.reshape(g, tuple(inputs[0].shape)),)


class Unsqueeze(Reshape):
    """``x.unsqueeze(d)``, ``x[None]``: a reshape that adds axes of length 1 (PyTorch's
    ``UnsqueezeBackward0``; another reshape, ``ViewBackward0``, even where it adds an axis).
    ``args = (shape, dims)``: the result's shape and where its new axes are (ascending), each with
    PyTorch's stride: the size times the stride of the axis after it (1 at the end)."""

    __slots__ = ()
    name = "unsqueeze"

    @property
    def shape(self) -> tuple[int, ...]:
        return self.args[0]

    def strides(self, shape: tuple[int, ...], strides: tuple[int, ...]) -> tuple[int, ...]:
        for d in self.args[1]:
            shape, strides = (*shape[:d], 1, *shape[d:]), unsqueezed_strides(shape, strides, d)
        return strides


class ExpandSame(Reshape):
    """``x.expand(x.shape)``: a new view of the same shape and strides (PyTorch's ``ExpandBackward0``:
    its dims of size 1 keep their strides, where a ``view`` computes them again)."""

    __slots__ = ()
    name = "expand_same"

    def strides(self, shape: tuple[int, ...], strides: tuple[int, ...]) -> tuple[int, ...]:
        return strides


class Squeeze(Reshape):
    """``x.squeeze()``: a reshape that drops axes of length 1, drawn (and named in the backward
    graph: ``SqueezeBackward0``) as the op the user wrote. ``args = (shape, dims)``: the result's
    shape and the axes dropped; the others keep their strides, as PyTorch's."""

    __slots__ = ()
    name = "squeeze"

    @property
    def shape(self) -> tuple[int, ...]:
        return self.args[0]

    def strides(self, shape: tuple[int, ...], strides: tuple[int, ...]) -> tuple[int, ...]:
        return tuple(s for k, s in enumerate(strides) if k not in self.args[1])


class SqueezeDim(Squeeze):
    """``x.squeeze(dim)``: PyTorch's ``SqueezeBackward1``."""

    __slots__ = ()
    name = "squeeze_dim"


class SqueezeDims(Squeeze):
    """``x.squeeze(dims)`` of a list of axes: PyTorch's ``SqueezeBackward2``."""

    __slots__ = ()
    name = "squeeze_dims"


class Permute(Function):
    __slots__ = ()
    primitive = True
    view = True  # the result may share the input's memory
    reads_values = False  # backward reads shapes only
    args_label = "axes"
    reads_output = False

    def forward(self, ns, a):
        return ns.permute_dims(a, self.args)

    def backward(self, g, ns, inputs, out):
        return (ns.permute_dims(g, _inverse(self.args)),)


class Transpose(Permute):
    """``x.transpose(a, b)``: a permute that swaps two axes, drawn under the name the user wrote."""

    __slots__ = ()
    name = "transpose"

    @staticmethod
    def describe_args(perm: tuple[int, ...]) -> str:
        return "swap axes " + " ↔ ".join(str(i) for i, p in enumerate(perm) if i != p)


class MatrixTranspose(Transpose):
    """``x.mT``: the last two axes swapped."""

    __slots__ = ()
    name = "mT"


class TwoDTranspose(Transpose):
    """``x.t()`` of a matrix (PyTorch's ``TBackward0``)."""

    __slots__ = ()
    name = "t"


class ReversedAxes(Permute):
    """``x.T``: the axes reversed, drawn as the user wrote it; PyTorch's node is the permute's
    (``PermuteBackward0``), of a matrix too."""

    __slots__ = ()
    name = "T"


@functools.cache
def _inverse(axes: tuple[int, ...]) -> tuple[int, ...]:
    """The permutation that undoes ``axes`` (cached: a model permutes the same few ways)."""
    inverse = [0] * len(axes)
    for i, ax in enumerate(axes):
        inverse[ax] = i
    return tuple(inverse)


class Expand(Function):
    """Broadcast to a larger shape; the engine sums the gradient back."""

    __slots__ = ()
    primitive = True
    view = True  # the result may share the input's memory
    reads_values = False  # backward reads shapes only
    reads_output = False

    def forward(self, ns, a):
        out = ns.broadcast_to(a, self.args)
        return with_strides(out, a, expanded_strides(a.shape, strides_of(a), self.args)) if has_strides(out) else out

    def backward(self, g, ns, inputs, out):
        return (g,)


class Slice(Function):
    """Basic indexing ``x[key]``: ints, slices and ``...`` (no ``None``, no arrays)."""

    __slots__ = ()
    primitive = True
    view = True  # the result may share the input's memory
    reads_values = False  # backward reads shapes only
    reads_output = False
    name = "getitem"

    def forward(self, ns, a):
        return a[self.args]

    def backward(self, g, ns, inputs, out):
        if ns.recording:  # a recorded gradient: the SliceGrad op
            return (ns.slice_grad(g, tuple(inputs[0].shape), self.args),)
        return (SliceGradient(g, tuple(inputs[0].shape), self.args, ns),)


class SliceGrad(Function):
    """Zeros of ``shape`` with ``g`` written at ``key``: the adjoint of :class:`Slice`."""

    __slots__ = ()
    primitive = True
    reads_values = False  # backward reads shapes only
    name = "slice_backward"

    def forward(self, ns, g):
        shape, key = self.args
        return ns.slice_grad(g, shape, key)

    def backward(self, g, ns, inputs, out):
        if ns.recording:  # (the Slice itself: a key of the package's own may step backwards, as flip's)
            return (ns.apply(Slice, g, args=self.args[1]),)
        return (g[self.args[1]],)


class Cat(Function):
    """Join along ``axis`` (``args``); each input's gradient is its slice of ``g``."""

    __slots__ = ()
    primitive = True
    reads_values = False  # backward reads shapes only
    args_label = "axis"
    reads_output = False

    def forward(self, ns, *arrays):
        return joined(ns.concat(arrays, axis=self.args), arrays)

    def backward(self, g, ns, inputs, out):
        axis = self.args
        return Split(axis % g.ndim, tuple(x.shape[axis] for x in inputs), True).gradients(self, g, ns)


class Stack(Function):
    """Join along a new ``axis`` (``args``, of the result); each input's gradient is ``g``
    at its index on that axis (one slice op each, where ``cat`` of unsqueezed inputs made
    a reshape and a slice)."""

    __slots__ = ()
    primitive = True
    reads_values = False  # backward reads shapes only
    args_label = "axis"
    reads_output = False

    def forward(self, ns, *arrays):  # (laid out as PyTorch's: a cat of the parts with a new dim)
        return joined(ns.stack(arrays, axis=self.args), arrays, new_dim=self.args)

    def backward(self, g, ns, inputs, out):
        return Split(self.args, (1,) * len(inputs), False).gradients(self, g, ns)


class Split:
    """``g`` cut along ``axis`` into pieces of ``sizes`` (each without that axis unless
    ``keep_axis``: a stack's): the gradients of :class:`Cat` and :class:`Stack`, which a
    traced program computes in one line (``grad_a, grad_b, = cat_backward_1(g)``) instead of
    one slice op per input. The pieces are views of ``g``."""

    __slots__ = ("args",)

    def __init__(self, axis: int, sizes: tuple, keep_axis: bool) -> None:
        self.args = (axis, sizes, keep_axis)

    def keys(self) -> list[tuple]:
        axis, sizes, keep_axis = self.args
        lead = (slice(None),) * axis
        keys, start = [], 0
        for n in sizes:
            keys.append(lead + ((slice(start, start + n) if keep_axis else start), Ellipsis))
            start += n
        return keys

    def pieces(self, ns, g):
        return [g[key] for key in self.keys()]

    def gradients(self, fn: Function, g, ns):
        """The gradients of ``fn``'s inputs as namespace ``ns`` computes them: views of an
        array; in a trace, one line of pieces; under ``create_graph``, the Slice op itself per
        piece, as ``g[key]`` would make it (a key in bounds is kept as written), without the
        whole indexing path of ``Tensor.__getitem__``."""
        if not ns.recording:
            return self.pieces(ns, g)
        if ns.records_fused:
            return ns.split_backward(fn, g, self)
        return [ns.apply(Slice, g, args=key) for key in self.keys()]


# -- strided views: diagonal, unfold -------------------------------------------------


class Strided(Function):
    """A view that reads the input at a lattice of positions: output index ``j`` reads input
    index ``start + sum_k j[k] * steps[k]``. ``args = (shape, start, steps)``: the output's
    shape, a multi-index of the input, and one integer vector of input axes per output axis.

    Described in the input's index space, not in bytes, so the same op is right for any
    layout of the input (a view of a transposed tensor, a view of a view). On NumPy and CuPy
    the result is a strided view of the input's memory, as PyTorch's; on a namespace without
    strides (``array_api_strict``) it is a gather, a copy (such a namespace has no views of
    this kind). The gradient scatters ``g`` back, summing where positions repeat (the
    overlapping windows of ``unfold``).
    """

    __slots__ = ()
    primitive = True
    view = True  # the result may share the input's memory
    reads_values = False  # backward reads shapes only
    reads_output = False
    name = "strided"

    @staticmethod
    def describe_args(args: tuple) -> str:
        shape, start, steps = args
        return f"start {tuple(start)} steps {', '.join(str(tuple(s)) for s in steps)}"

    def forward(self, ns, a):
        shape, start, steps = self.args
        strides = getattr(a, "strides", None)
        if strides is None:  # no strides to set (array_api_strict): the positions, gathered
            pos = self.positions(tuple(a.shape))
            index = ns.device.asarray(pos.reshape(-1))
            return ns.reshape(ns.gather(ns.reshape(a, (-1,)), 0, index), shape)
        return _as_strided(ns, a, shape, start, steps)

    def backward(self, g, ns, inputs, out):
        in_shape = tuple(inputs[0].shape)
        shape, start, steps = self.args
        if not ns.recording and getattr(g, "strides", None) is not None:
            # (arrays with strides: g written, or added, through the same view of zeros)
            z = ns.zeros(in_shape, g.dtype)
            if not math.prod(shape):
                return (z,)
            if not self.overlaps:
                _as_strided(ns, z, shape, start, steps)[...] = g
                return (z,)
            if self.last_axis_apart:  # (unfold: one entry of every window at a time)
                for i in range(shape[-1]):
                    self.entry_view(ns, z, i)[...] += g[..., i]
                return (z,)
        n = math.prod(in_shape)
        dev = g._dev if ns.recording else ns.device
        index = dev.asarray(self.positions(in_shape).reshape(-1))
        flat = ns.scatter_add(ns.reshape(g, (-1,)), (n,), 0, index)
        return (ns.reshape(flat, in_shape),)

    def positions(self, in_shape: tuple[int, ...]) -> np.ndarray:
        """The flat (C-order) position in an input of ``in_shape`` that each output element
        reads: an int64 array of the output's shape."""
        return strided_positions(in_shape, *self.args)

    @property
    def overlaps(self) -> bool:
        """Whether two elements of the view are one element of the input (``unfold`` with
        ``step < size``): an in-place change of the view then has no single meaning."""
        shape, start, steps = self.args
        return _overlaps(shape, steps)

    def entry_view(self, ns, a, i: int):
        """The view of ``a`` that this view shows at index ``i`` of its last axis."""
        shape, start, steps = self.args
        at = tuple(s + i * m for s, m in zip(start, steps[-1]))
        return _as_strided(ns, a, shape[:-1], at, steps[:-1])

    @property
    def last_axis_apart(self) -> bool:
        """Whether the view without its last axis (one entry of every window) has no overlap."""
        shape, start, steps = self.args
        return not _overlaps(shape[:-1], steps[:-1])


class Diagonal(Strided):
    """``x.diagonal(offset, dim1, dim2)``: a strided view, drawn under PyTorch's name."""

    __slots__ = ()
    name = "diagonal"
    overlaps = False  # (k + a along one axis and k + b along another: a different element for each k)

    @staticmethod
    def describe_args(args: tuple) -> str:
        shape, start, steps = args
        d1, d2 = (i for i, m in enumerate(steps[-1]) if m)
        return f"dims {d1}, {d2} from {tuple(start)}"


class SlidingWindows(Strided):
    """``x.unfold(dimension, size, step)``: a strided view of (possibly overlapping) windows."""

    __slots__ = ()
    name = "unfold"
    last_axis_apart = True  # (entry i of every window: distinct elements, step > 0 apart)

    def entry_view(self, ns, a, i: int):  # (a basic slice: cheaper than as_strided)
        shape, start, steps = self.args
        d = next(k for k, m in enumerate(steps[-1]) if m)
        step, count = steps[d][d], shape[d]
        return a[(slice(None),) * d + (slice(i, i + (count - 1) * step + 1, step),)]

    @property
    def overlaps(self) -> bool:  # (known from the arguments: no search of the lattice)
        shape, start, steps = self.args
        d = next(i for i, m in enumerate(steps[-1]) if m)
        return shape[d] > 1 and 1 < shape[-1] and steps[d][d] < shape[-1]

    @staticmethod
    def describe_args(args: tuple) -> str:
        shape, start, steps = args
        d = next(i for i, m in enumerate(steps[-1]) if m)
        return f"dim {d}, size {shape[-1]}, step {steps[d][d]}"


def _as_strided(ns, a, shape: tuple[int, ...], start: tuple[int, ...], steps: tuple[tuple[int, ...], ...]):
    """The view of ``a`` (a NumPy or CuPy array, any layout) that :class:`Strided` describes."""
    if math.prod(shape):  # (an empty view reads nothing, and start may lie past the end)
        a = a[tuple(slice(s, None) for s in start)]
    strides = a.strides
    steps_bytes = tuple(sum(m * s for m, s in zip(row, strides)) for row in steps)
    return ns.device.xp.lib.stride_tricks.as_strided(a, shape, steps_bytes)


def strided_positions(in_shape: tuple[int, ...], shape: tuple[int, ...], start: tuple[int, ...],
                      steps: tuple[tuple[int, ...], ...]) -> np.ndarray:  # fmt: skip
    """The flat (C-order) input positions a :class:`Strided` view of ``(shape, start,
    steps)`` reads from an input of ``in_shape``, as an int64 array of ``shape``."""
    unit = [math.prod(in_shape[i + 1 :]) for i in range(len(in_shape))]
    pos = np.full(shape, sum(s * u for s, u in zip(start, unit)), dtype=np.int64)
    for k, row in enumerate(steps):
        along = np.arange(shape[k], dtype=np.int64) * sum(m * u for m, u in zip(row, unit))
        pos += along.reshape([-1 if i == k else 1 for i in range(len(shape))])
    return pos


@functools.lru_cache(maxsize=256)
def _overlaps(shape: tuple[int, ...], steps: tuple[tuple[int, ...], ...]) -> bool:
    """Whether ``sum_k j[k] * steps[k]`` takes one value twice for ``0 <= j[k] < shape[k]``."""
    moving = [(n, row) for n, row in zip(shape, steps) if n > 1]  # (axes of one element move nothing)
    if not moving or math.prod(shape) == 0:
        return False
    coords = np.zeros((1, len(moving[0][1])), dtype=np.int64)
    for n, row in moving:  # every reachable multi-index of the input, one row each
        along = np.arange(n, dtype=np.int64)[:, None] * np.asarray(row, dtype=np.int64)
        coords = (coords[:, None, :] + along[None, :, :]).reshape(-1, coords.shape[1])
    return bool(np.unique(coords, axis=0).shape[0] < coords.shape[0])


def _address(a) -> int:
    iface = getattr(a, "__array_interface__", None)
    return int(iface["data"][0]) if iface is not None else int(a.data.ptr)  # (CuPy: its device pointer)


def _memory_positions(size: tuple[int, ...], stride: tuple[int, ...], offset: int) -> np.ndarray:
    """The memory positions (in elements) of a view of ``size``, ``stride`` from ``offset``: int64 of ``size``."""
    pos = np.full(size, offset, dtype=np.int64)
    for k, (n, s) in enumerate(zip(size, stride)):
        pos += (np.arange(n, dtype=np.int64) * s).reshape([-1 if i == k else 1 for i in range(len(size))])
    return pos


class AsStrided(Function):
    """``x.as_strided(size, stride, storage_offset)``: a view of the memory ``x`` lies in (its
    base's, all of it), ``size`` elements ``stride`` apart from ``storage_offset`` (``x``'s own
    by default), whatever ``x``'s own layout. ``args = (size, stride, storage_offset or None)``.

    Its gradient is PyTorch's AsStridedBackward: ``g`` summed into the memory the view reads
    (where it reads a place twice, twice), then read back at ``x``'s places; where ``x`` itself
    shows a place several times (an expanded dim), each share is divided by their number.
    """

    __slots__ = ()
    view = True
    keep = ()  # (backward reads the layouts, kept in ctx)
    reads_values = False
    reads_output = False
    name = "as_strided"

    @staticmethod
    def describe_args(args: tuple) -> str:
        size, stride, offset = args
        return f"size {tuple(size)} stride {tuple(stride)}" + ("" if offset is None else f" offset {offset}")

    def forward(self, ns, a):
        size, stride, offset = self.args
        if getattr(a, "strides", None) is None:
            raise NotImplementedError(f"as_strided: the device {ns.device.name} has no strided views of memory")
        root = memory_root(a)
        item = a.itemsize
        start = (_address(a) - _address(root)) // item
        at = start if offset is None else offset
        self.ctx = (tuple(a.shape), tuple(s // item for s in a.strides), start, at)
        need = at + 1 + sum((n - 1) * s for n, s in zip(size, stride)) if math.prod(size) else 0
        if need > root.size:
            raise RuntimeError(
                f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset {at}, and itemsize {item} "
                f"requiring a storage size of {need * item} are out of bounds for storage of size {root.size * item}"
            )
        if not (root.flags.c_contiguous or root.flags.f_contiguous):
            raise NotImplementedError(f"as_strided: memory not in one block (an array of strides {root.strides})")
        xp = ns.device.xp
        steps = tuple(s * item for s in stride)
        if xp is np:  # (a view whose base is the memory's array: storage_offset() and data_ptr() read it back)
            return np.ndarray(size, a.dtype, buffer=root, offset=at * item if need else 0, strides=steps)
        flat = xp.lib.stride_tricks.as_strided(root, (root.size,), (item,))
        return xp.lib.stride_tricks.as_strided(flat[at:] if need else flat, size, steps)

    def backward(self, g, ns, inputs, out):
        size, stride, _ = self.args
        in_size, in_stride, start, at = self.ctx
        low = min(start, at)
        read = _memory_positions(size, stride, at - low).reshape(-1)
        mine = _memory_positions(in_size, in_stride, start - low).reshape(-1)
        n = int(max(read.max(initial=-1), mine.max(initial=-1))) + 1
        dev = g._dev if ns.recording else ns.device
        memory = ns.scatter_add(ns.reshape(g, (-1,)), (n,), 0, dev.asarray(read))
        grad = ns.reshape(ns.gather(memory, 0, dev.asarray(mine)), in_size)
        if np.unique(mine).size < mine.size:  # (x shows a place several times: each its share)
            share = 1.0 / np.bincount(mine, minlength=n)[mine].reshape(in_size)
            dt = np.dtype(ns.values(g).dtype)
            grad = grad * ns.const(dev.asarray(share.astype(np.empty(0, dt).real.dtype)))
        return (grad,)
