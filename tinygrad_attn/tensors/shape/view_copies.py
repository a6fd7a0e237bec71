"""PyTorch's ``*_copy`` functions: each view of :class:`Tensor` (``permute``, ``transpose``,
``select``, ...) as a tensor with memory of its own, so writing to it never changes the input.
Each is the view, then :meth:`Tensor.clone` in row-major order (PyTorch's copies are contiguous
whatever the view's strides); gradients flow back through both.

>>> import tinygrad_attn as tga
>>> x = tga.zeros(2, 3)
>>> y = tga.transpose_copy(x, 0, 1)
>>> _ = y.fill_(1.0)
>>> float(x.sum())
0.0
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...engine.declare import public
from ...engine.layout import contiguous_format
from ...functional.checks import tensor_arg as _tensor
from .._tensor import Tensor
from . import dims


def _copies(views: Sequence[Tensor]) -> tuple[Tensor, ...]:
    return tuple(v.clone(memory_format=contiguous_format) for v in views)


@public
def alias_copy(input: Tensor) -> Tensor:  # noqa: A002 - PyTorch's names
    """A copy of ``input`` (the copy of ``torch.alias``, a view of the whole tensor)."""
    return _tensor(input, "alias_copy").clone(memory_format=contiguous_format)


@public
def detach_copy(input: Tensor) -> Tensor:  # noqa: A002
    """``input.detach()`` in memory of its own: no gradient flows back."""
    return _tensor(input, "detach_copy").detach().clone(memory_format=contiguous_format)


@public
def diagonal_copy(input: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:  # noqa: A002
    return _tensor(input, "diagonal_copy").diagonal(offset, dim1, dim2).clone(memory_format=contiguous_format)


@public
def permute_copy(input: Tensor, dims: tuple[int, ...]) -> Tensor:  # noqa: A002
    return _tensor(input, "permute_copy").permute(dims).clone(memory_format=contiguous_format)


@public
def select_copy(input: Tensor, dim: int, index: int) -> Tensor:  # noqa: A002
    return _tensor(input, "select_copy").select(dim, index).clone(memory_format=contiguous_format)


@public
def slice_copy(input: Tensor, dim: int = 0, start: int | None = None, end: int | None = None,  # noqa: A002
               step: int = 1) -> Tensor:  # fmt: skip
    """``input[..., start:end:step, ...]`` along ``dim``, in memory of its own."""
    x = _tensor(input, "slice_copy")
    d = dims.one(tuple(x.shape), dim, "slice_copy", scalar_ok=False)
    if step <= 0:
        raise ValueError(f"slice_copy: slice step must be positive, got {step}")
    return x[(slice(None),) * d + (slice(start, end, step),)].clone(memory_format=contiguous_format)


@public
def split_copy(input: Tensor, split_size: int, dim: int = 0) -> tuple[Tensor, ...]:  # noqa: A002
    return _copies(_tensor(input, "split_copy").split(split_size, dim))


@public
def split_with_sizes_copy(input: Tensor, split_sizes: tuple[int, ...], dim: int = 0) -> tuple[Tensor, ...]:  # noqa: A002
    return _copies(_tensor(input, "split_with_sizes_copy").split(list(split_sizes), dim))


@public
def squeeze_copy(input: Tensor, dim: Any = dims.NOT_GIVEN) -> Tensor:  # noqa: A002
    return _tensor(input, "squeeze_copy").squeeze(dim).clone(memory_format=contiguous_format)


@public
def t_copy(input: Tensor) -> Tensor:  # noqa: A002
    return _tensor(input, "t_copy").t().clone(memory_format=contiguous_format)


@public
def transpose_copy(input: Tensor, dim0: int, dim1: int) -> Tensor:  # noqa: A002
    return _tensor(input, "transpose_copy").transpose(dim0, dim1).clone(memory_format=contiguous_format)


@public
def unbind_copy(input: Tensor, dim: int = 0) -> tuple[Tensor, ...]:  # noqa: A002
    return _copies(_tensor(input, "unbind_copy").unbind(dim))


@public
def unfold_copy(input: Tensor, dimension: int, size: int, step: int) -> Tensor:  # noqa: A002
    return _tensor(input, "unfold_copy").unfold(dimension, size, step).clone(memory_format=contiguous_format)


@public
def unsqueeze_copy(input: Tensor, dim: int) -> Tensor:  # noqa: A002
    return _tensor(input, "unsqueeze_copy").unsqueeze(dim).clone(memory_format=contiguous_format)


@public
def view_copy(input: Tensor, size: Any) -> Tensor:  # noqa: A002
    """``input.view(size)`` (a shape, or a dtype: the same bytes read as that dtype) in memory of its own."""
    x = _tensor(input, "view_copy")
    return x.view(tuple(size) if isinstance(size, (tuple, list)) else size).clone(memory_format=contiguous_format)


@public
def as_strided_copy(input: Tensor, size: Sequence[int], stride: Sequence[int],  # noqa: A002
                    storage_offset: int | None = None) -> Tensor:  # fmt: skip
    """``input.as_strided(size, stride, storage_offset)`` in memory of its own."""
    return (
        _tensor(input, "as_strided_copy")
        .as_strided(size, stride, storage_offset)
        .clone(memory_format=contiguous_format)
    )


@public
def view_as_real_copy(input: Tensor) -> Tensor:  # noqa: A002
    """``torch.view_as_real(input)`` in memory of its own: a complex tensor's parts on a last axis of 2."""
    from ..elementwise.complex_numbers import view_as_real  # noqa: PLC0415 - (declared after the views)

    return view_as_real(_tensor(input, "view_as_real_copy")).clone(memory_format=contiguous_format)


@public
def view_as_complex_copy(input: Tensor) -> Tensor:  # noqa: A002
    """``torch.view_as_complex(input)`` in memory of its own: a last axis of 2 read as complex numbers."""
    from ..elementwise.complex_numbers import view_as_complex  # noqa: PLC0415

    return view_as_complex(_tensor(input, "view_as_complex_copy")).clone(memory_format=contiguous_format)
