"""How a result's elements lie in memory, as PyTorch's rules decide it. Users see layouts
(``stride()``, ``is_contiguous()``, whether ``.view`` succeeds, ``.numpy()``'s strides, the
order random fills write), so a copy lays its elements out as PyTorch's would:

- ``preserve_format`` (``clone``, ``*_like``, dtype conversions): a dense, non-overlapping input's
  strides are kept; another input's dims keep their order in memory, packed densely (PyTorch's
  ``infer_dense_strides``, TensorIterator's ordering: a broadcast dim stays where it is);
- ``contiguous_format``: row-major; ``channels_last``: ``(N, H, W, C)`` in memory for a 4-d tensor
  (``channels_last_3d``: ``(N, D, H, W, C)`` for a 5-d one).

:class:`~tinygrad_attn.engine.function.Function` lays out the result of every op that declares
``laid_out_as`` (the pointwise ones) by :func:`of_operands`; the ops whose PyTorch result is
row-major or in their input's format say so where they compute it (:func:`row_major_array`,
:func:`in_format_of`). Strides are in elements, as ``Tensor.stride()`` gives them. An array of a given layout is a
row-major array of the permuted shape, seen through the inverse permutation: one allocation, on
any backend.

>>> import tinygrad_attn as tga
>>> tga.arange(6.).reshape(2, 3).t().clone().stride()
(1, 3)
>>> tga.zeros(1, 2, 3, 4).contiguous(memory_format=tga.channels_last).stride()
(24, 1, 8, 2)
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from typing import Any


class memory_format:  # noqa: N801 - PyTorch's name (``torch.memory_format``)
    """The order in which a dense tensor's elements lie in memory. PyTorch's four are named
    (``x.contiguous(memory_format=tga.channels_last)`` reads as there); the rules of this
    module lay copies out in them."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __repr__(self) -> str:
        return f"torch.{self._name}"  # (as a dtype prints: a printed program reads as PyTorch's)


contiguous_format = memory_format("contiguous_format")
preserve_format = memory_format("preserve_format")
channels_last = memory_format("channels_last")
channels_last_3d = memory_format("channels_last_3d")


#: the dims of a channels-last tensor from innermost to outermost, by its number of dims
_CHANNELS_LAST = {4: (1, 3, 2, 0), 5: (1, 4, 3, 2, 0)}


def strides_of(a: Any) -> tuple[int, ...]:
    """The steps of array ``a`` in elements (row-major ones for an empty array: NumPy gives it any;
    and for an array that has none to show, as ``array_api_strict``'s: row-major is what it stands for;
    a meta tensor's placeholder carries the strides it stands for: runtime.meta)."""
    if (meta := getattr(a, "meta_strides", None)) is not None:
        return meta
    if a.size == 0 or not hasattr(a, "strides"):
        return row_major(a.shape)
    return tuple(int(s) // a.itemsize for s in a.strides)


def row_major(shape: Sequence[int]) -> tuple[int, ...]:
    """The strides of a C-contiguous tensor (an empty dim counting as 1, as PyTorch's)."""
    steps, step = [], 1
    for n in reversed(shape):
        steps.append(step)
        step *= max(n, 1)
    return tuple(reversed(steps))


def is_contiguous_as(shape: Sequence[int], strides: Sequence[int], memory_format: Any = None) -> bool:
    """PyTorch's ``is_contiguous(memory_format=)``: the elements lie in that format's order with
    no gaps (dims of size 1 may have any stride; an empty tensor is contiguous)."""
    if memory_format is None or memory_format is contiguous_format or memory_format is preserve_format:
        order = tuple(reversed(range(len(shape))))
    elif memory_format is channels_last or memory_format is channels_last_3d:
        want = 4 if memory_format is channels_last else 5
        if len(shape) != want:
            return False
        order = _CHANNELS_LAST[want]
    else:
        raise TypeError(f"is_contiguous(): argument 'memory_format' must be torch.memory_format, not "
                        f"{type(memory_format).__name__}")  # fmt: skip
    if 0 in shape:
        return True
    expected = 1
    for d in order:
        if shape[d] != 1:
            if strides[d] != expected:
                return False
            expected *= shape[d]
    return True


def is_non_overlapping_and_dense(shape: Sequence[int], strides: Sequence[int]) -> bool:
    """Whether the elements fill a block of memory exactly, in some order of the dims."""
    if 0 in shape:
        return True
    expected = 1
    for d in sorted((d for d in range(len(shape)) if shape[d] != 1), key=lambda d: (strides[d], shape[d])):
        if strides[d] != expected:
            return False
        expected *= shape[d]
    return True


def dense_order(shape: Sequence[int], strides: Sequence[Sequence[int]]) -> list[int]:
    """The dims from innermost to outermost in memory that TensorIterator (and PyTorch's
    ``infer_dense_strides``) gives operands of these ``strides``: the first operand whose steps
    along two dims differ, neither being 0 (broadcast), orders them; equal steps put the smaller dim
    inside; where no operand decides, dims keep their order (the last innermost)."""
    n = len(shape)
    perm = list(reversed(range(n)))

    def after(d0: int, d1: int) -> int:  # (1: d0 lies outside d1, -1: inside, 0: undecided)
        for st in strides:
            s0, s1 = st[d0], st[d1]
            if s0 == 0 or s1 == 0:
                continue
            if s0 != s1:
                return 1 if s0 > s1 else -1
            if shape[d0] > shape[d1]:
                return 1
        return 0

    for i in range(1, n):  # (insertion sort, stable: TensorIterator's own)
        d1 = i
        for j in range(1, i + 1):
            d0 = i - j
            c = after(perm[d0], perm[d1])
            if c > 0:
                perm[d0], perm[d1] = perm[d1], perm[d0]
                d1 = d0
            elif c < 0:
                break
    return perm


def dense_strides(shape: Sequence[int], inner_first: Sequence[int]) -> tuple[int, ...]:
    """The strides of a dense tensor whose dims lie in memory in the order ``inner_first``."""
    out, step = [0] * len(shape), 1
    for d in inner_first:
        out[d] = step
        step *= max(shape[d], 1)
    return tuple(out)


def suggest_memory_format(shape: Sequence[int], strides: Sequence[int]) -> Any:
    """PyTorch's ``suggest_memory_format``: channels-last where the strides look like it (its
    ``is_channels_last_strides_2d/3d``, ambiguous cases counting as contiguous), else contiguous."""
    order = _CHANNELS_LAST.get(len(shape))
    if order is None or strides[1] == 0:
        return contiguous_format
    low = 0
    for d in order:
        if shape[d] == 0 or strides[d] < low:
            return contiguous_format
        if d == 0 and low == strides[1]:
            return contiguous_format
        low = strides[d] * (shape[d] if shape[d] > 1 else 1)
    return channels_last if len(shape) == 4 else channels_last_3d


def strides_for(shape: Sequence[int], strides: Sequence[int], memory_format: Any) -> tuple[int, ...]:
    """The strides of a copy of a tensor of ``shape``/``strides`` in ``memory_format``."""
    if memory_format is None or memory_format is preserve_format:
        steps = tuple(abs(s) for s in strides)  # (a reversed view here, as NumPy's: its dims' order)
        if steps == tuple(strides) and is_non_overlapping_and_dense(shape, strides):
            return steps
        return dense_strides(shape, dense_order(shape, [steps]))
    if memory_format is contiguous_format:
        return row_major(shape)
    if memory_format is channels_last or memory_format is channels_last_3d:
        want = 4 if memory_format is channels_last else 5
        if len(shape) != want:
            name = "channels_last" if want == 4 else "channels_last_3d"
            raise RuntimeError(f"required rank {want} tensor to use {name} format (got shape {tuple(shape)})")
        return dense_strides(shape, _CHANNELS_LAST[want])
    raise TypeError(f"memory_format must be torch.memory_format, not {type(memory_format).__name__}")


def _namespace(dev: Any, a: Any) -> Any:
    """The array module of device ``dev``, or else of array ``a`` (NumPy's, CuPy's)."""
    if dev is not None:
        return dev.xp
    spaced = getattr(a, "__array_namespace__", None)
    return spaced() if spaced is not None else importlib.import_module(type(a).__module__.partition(".")[0])


def allocate(dev: Any, shape: Sequence[int], dtype: Any, strides: Sequence[int] | None = None,
             like: Any = None) -> Any:  # fmt: skip
    """A new uninitialised array of device ``dev`` (None: of array ``like``'s namespace) laid out
    as ``strides`` say (which must be dense: of :func:`strides_for`); row-major without them."""
    shape = tuple(shape)
    if dev is not None and dev.meta:  # (a placeholder that carries the strides)
        return dev.empty(shape, dtype, strides)
    new = dev.empty if dev is not None else lambda s, dt: _namespace(None, like).empty(s, dtype=dt)
    if strides is None or tuple(strides) == row_major(shape):
        return new(shape, dtype)
    outer_first = sorted(range(len(shape)), key=lambda d: (-strides[d], -shape[d], -d))
    inverse = [0] * len(shape)
    for i, d in enumerate(outer_first):
        inverse[d] = i
    a = new(tuple(shape[d] for d in outer_first), dtype)
    return a.transpose(inverse) if hasattr(a, "transpose") else _namespace(dev, a).permute_dims(a, tuple(inverse))


def copy_into(dev: Any, a: Any, strides: Sequence[int], dtype: Any = None) -> Any:
    """A copy of array ``a`` (in ``dtype`` when given) with the dense ``strides``, on device
    ``dev`` (None: ``a``'s namespace's)."""
    out = allocate(dev, a.shape, a.dtype if dtype is None else dtype, strides, like=a)
    xp = _namespace(dev, a)
    if hasattr(xp, "copyto"):  # NumPy, CuPy
        xp.copyto(out, a, casting="unsafe")
    else:
        out[...] = a if dtype is None else xp.astype(a, dtype)
    return out


def copy_as(dev: Any, a: Any, memory_format: Any = None, dtype: Any = None) -> Any:
    """A copy of array ``a`` (in ``dtype`` when given) laid out as PyTorch's copy in ``memory_format``."""
    flags = getattr(a, "flags", None)
    if dtype is None and flags is not None and flags.c_contiguous and 1 not in a.shape:
        if memory_format is None or memory_format is preserve_format or memory_format is contiguous_format:
            return dev.copy(a)  # (the common case, quickly)
    return copy_into(dev, a, strides_for(a.shape, strides_of(a), memory_format), dtype)


def relaid(t: Any, strides: Sequence[int]) -> Any:
    """Tensor ``t``, just computed (no node has read its array yet), with its array laid out as
    ``strides`` say: copied only where its own layout differs."""
    a = t._data
    if hasattr(a, "strides") and strides_of(a) != tuple(strides):
        t._data = copy_into(t._dev, a, strides)
    return t


def _broadcast_strides(a: Any, shape: tuple[int, ...]) -> tuple[int, ...]:
    """The steps of operand ``a`` along the dims of the result ``shape`` (0 where it is broadcast)."""
    pad = len(shape) - a.ndim
    st = strides_of(a)
    return (0,) * pad + tuple(0 if n == 1 and shape[pad + i] != 1 else st[i] for i, n in enumerate(a.shape))


def _broadcast_to(shape: tuple[int, ...], arrays: Sequence[Any]) -> bool:
    """Whether ``shape`` is the broadcast shape of ``arrays``."""
    if any(a.ndim > len(shape) for a in arrays):
        return False
    widest = [1] * len(shape)
    for a in arrays:
        for i, n in enumerate(a.shape, len(shape) - a.ndim):
            if n != 1 and n != shape[i]:
                return False
            widest[i] = max(widest[i], n)
    return tuple(widest) == tuple(shape)


def of_operands(dev: Any, out: Any, operands: Sequence[Any]) -> Any:
    """Array ``out``, an elementwise result of ``operands`` (arrays or numbers), laid out as
    PyTorch's TensorIterator lays out its output: the order of dims the operands' strides give,
    the first operand deciding first (NumPy's ``order='K'`` keeps row-major order where the
    operands disagree). A copy only where operands of different layouts gave another one."""
    for a in operands:  # (the common case first, quickly: row-major operands give a row-major result)
        flags = getattr(a, "flags", None)
        if flags is not None and not flags.c_contiguous:
            break
    else:
        flags = getattr(out, "flags", None)
        return out if flags is None or flags.c_contiguous else copy_into(dev, out, row_major(out.shape))
    arrays = [a for a in operands if getattr(a, "ndim", 0)]
    if any(getattr(a, "flags", None) is None for a in arrays):
        return out
    if not _broadcast_to(out.shape, arrays):  # (a result of another shape: no elementwise one)
        return out
    strides = [tuple(abs(s) for s in _broadcast_strides(a, out.shape)) for a in arrays]
    want = dense_strides(out.shape, dense_order(out.shape, strides))
    if strides_of(out) == want or 0 in out.shape:
        return out
    return copy_into(dev, out, want)


def unsqueezed_strides(shape: Sequence[int], strides: Sequence[int], dim: int) -> tuple[int, ...]:
    """The strides of PyTorch's ``unsqueeze(dim)`` of a tensor of ``shape``/``strides``."""
    step = 1 if dim >= len(shape) else shape[dim] * strides[dim]
    return (*strides[:dim], step, *strides[dim:])


def view_strides(shape: Sequence[int], strides: Sequence[int], new_shape: Sequence[int]) -> tuple[int, ...] | None:
    """The strides of PyTorch's ``view(new_shape)`` of a tensor of ``shape``/``strides`` (ATen's
    ``computeStride``), None where no view has them (``reshape`` copies there). The dims are cut in
    chunks that lie contiguously; a new dim of size 1 takes the stride of the chunk it falls in."""
    if not shape:
        return (1,) * len(new_shape)
    if 0 in shape:  # (any strides do: a view keeps its own when its shape stays, else row-major ones)
        return tuple(strides) if tuple(shape) == tuple(new_shape) else row_major(new_shape)
    new = [0] * len(new_shape)
    view_d, base = len(new_shape) - 1, strides[-1]
    tensor_numel = view_numel = 1
    for d in range(len(shape) - 1, -1, -1):
        tensor_numel *= shape[d]
        if d == 0 or (shape[d - 1] != 1 and strides[d - 1] != tensor_numel * base):  # (a chunk ends)
            while view_d >= 0 and (view_numel < tensor_numel or new_shape[view_d] == 1):
                new[view_d] = view_numel * base
                view_numel *= new_shape[view_d]
                view_d -= 1
            if view_numel != tensor_numel:
                return None
            if d > 0:
                base, tensor_numel, view_numel = strides[d - 1], 1, 1
    return tuple(new) if view_d == -1 else None


def expanded_strides(shape: Sequence[int], strides: Sequence[int], new_shape: Sequence[int]) -> tuple[int, ...]:
    """The strides of PyTorch's ``expand(new_shape)`` of a tensor of ``shape``/``strides`` (ATen's
    ``inferExpandGeometry``): 0 along an expanded dim; a new dim of size 1 takes the size times the
    stride of the dim after it; every dim of an expanded 0-d tensor, 0."""
    if not shape:
        return (0,) * len(new_shape)
    lead = len(new_shape) - len(shape)
    out = [0] * len(new_shape)
    for i in range(len(new_shape) - 1, -1, -1):
        size, step = (shape[i - lead], strides[i - lead]) if i >= lead else (1, new_shape[i + 1] * out[i + 1])
        out[i] = step if size == new_shape[i] else 0
    return tuple(out)


def with_strides(out: Any, a: Any, strides: Sequence[int] | None) -> Any:
    """Array ``out``, NumPy's view of array ``a`` (a reshape, an expand), as PyTorch's view of the
    element ``strides`` (None: ``out`` as it is, where PyTorch copies): NumPy gives dims of size 1
    strides of its own, which no element is apart by but ``stride()`` and memory formats show.
    The same elements in the same places: a view of ``a``'s memory from its first element."""
    if strides is None or not has_strides(out) or 0 in out.shape:
        return out
    strides = tuple(strides)
    if strides_of(out) == strides:
        return out
    steps = tuple(s * a.itemsize for s in strides)
    root = memory_root(a)
    iface = getattr(a, "__array_interface__", None)
    if iface is None or not (root.flags.c_contiguous or root.flags.f_contiguous):  # (CuPy; memory in pieces)
        return _namespace(None, a).lib.stride_tricks.as_strided(a, out.shape, steps)
    # (a view whose base is the memory's array, as AsStrided's: storage_offset() and data_ptr() read it back)
    offset = iface["data"][0] - root.__array_interface__["data"][0]
    view = _namespace(None, a).ndarray(out.shape, a.dtype, buffer=root, offset=offset, strides=steps)
    if not out.flags.writeable:  # (a broadcast stays read-only)
        view.flags.writeable = False
    return view


def memory_root(a: Any) -> Any:
    """The array that owns the memory array ``a`` views (``a`` itself where it owns it): what a
    storage offset counts from."""
    root = a
    while getattr(root, "base", None) is not None and hasattr(root.base, "itemsize"):
        root = root.base
    return root


def has_strides(a: Any) -> bool:
    """Whether ``a`` is an array of NumPy's or CuPy's with strides of its own (not a tensor of a
    recorded gradient, a meta placeholder or an ``array_api_strict`` array)."""
    return hasattr(a, "strides") and hasattr(a, "flags") and getattr(a, "meta_strides", None) is None


def joined(out: Any, parts: Sequence[Any], new_dim: int | None = None) -> Any:
    """Array ``out``, a join (``cat``; ``stack``) of the arrays ``parts``, laid out as PyTorch's: in
    the memory format all parts suggest (channels-last ones give a channels-last result), else
    row-major. PyTorch's ``stack`` is a cat: along ``new_dim`` of the parts as they are, then viewed
    with the new dim split off, or (``new_dim`` last) of the parts unsqueezed there."""
    flags = getattr(out, "flags", None)
    if flags is None or (flags.c_contiguous and all(p.flags.c_contiguous for p in parts)):
        return out  # (row-major parts: a row-major join)
    split = new_dim is not None and new_dim < parts[0].ndim
    formats = set()
    for p in parts:
        shape, st = p.shape, strides_of(p)
        if new_dim is not None and not split:
            shape, st = (*shape[:new_dim], 1, *shape[new_dim:]), unsqueezed_strides(shape, st, new_dim)
        formats.add(suggest_memory_format(shape, st))
    fmt = formats.pop() if len(formats) == 1 else contiguous_format
    if split:  # (the cat's layout, seen through the view that splits its dim in two)
        cat = (*out.shape[:new_dim], out.shape[new_dim] * out.shape[new_dim + 1], *out.shape[new_dim + 2 :])
        want = view_strides(cat, strides_for(cat, row_major(cat), fmt), out.shape)
    else:
        want = strides_for(out.shape, strides_of(out), fmt)
    return out if strides_of(out) == want or 0 in out.shape else copy_into(None, out, want)


def row_major_array(a: Any) -> Any:
    """Array ``a`` (a reduction's, a scan's, a matrix product's result) row-major as PyTorch's
    are, its dims of size 1 included (NumPy's keep the order of the input's remaining dims)."""
    flags = getattr(a, "flags", None)
    if flags is None or a.ndim < 2 or (flags.c_contiguous and 1 not in a.shape):
        return a
    want = row_major(a.shape)
    return a if strides_of(a) == want else copy_into(None, a, want)


def in_format_of(a: Any, x: Any) -> Any:
    """Array ``a``, the result of a convolution, pooling or normalisation of array ``x``, in the
    memory format ``x`` suggests (channels-last in, channels-last out), as PyTorch's CPU kernels."""
    if not hasattr(a, "strides") or not hasattr(x, "strides"):
        return a
    fmt = suggest_memory_format(x.shape, strides_of(x)) if x.ndim == a.ndim else contiguous_format
    want = strides_for(a.shape, strides_of(a), fmt)
    return a if strides_of(a) == want or 0 in a.shape else copy_into(None, a, want)


def row_major_result(t: Any) -> Any:
    """Tensor ``t``, just computed, row-major (the ops PyTorch gives a contiguous result whatever
    their input's layout: ``layer_norm``, ``tril``/``triu``, ``leaky_relu``-like ``rrelu``, ...)."""
    return relaid(t, row_major(t.shape))


def result_in_format_of(t: Any, x: Any) -> Any:
    """Tensor ``t``, just computed from tensor ``x`` (a normalisation, padding or resize of it), in
    the memory format ``x`` suggests, as PyTorch's CPU kernels give theirs."""
    fmt = suggest_memory_format(x.shape, x.stride()) if t.ndim == x.ndim else contiguous_format
    return relaid(t, strides_for(t.shape, row_major(t.shape), fmt))


def pointwise_result(t: Any, *operands: Any) -> Any:
    """Tensor ``t``, just computed pointwise from ``operands`` (tensors or numbers) by several ops,
    laid out as PyTorch's one TensorIterator op lays out its result (:func:`of_operands`)."""
    if t.ndim > 1:
        t._data = of_operands(t._dev, t._data, [getattr(x, "_data", x) for x in operands])
    return t
