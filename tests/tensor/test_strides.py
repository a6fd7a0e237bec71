"""``stride()``, ``storage_offset()`` and ``data_ptr()`` as PyTorch's over every view a
student meets when learning how views share memory: the same steps, the same offsets, and
a view's address where its first element lies."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

import tinygrad_attn as tga  # noqa: E402

VIEWS = {
    "itself": lambda x: x,
    "transpose": lambda x: x.transpose(0, 2),
    "step slice": lambda x: x[:, ::2],
    "expand": lambda x: x.expand(2, 2, 3, 4),
    "diagonal": lambda x: x.diagonal(),
    "unsqueeze": lambda x: x.unsqueeze(1),
    "index": lambda x: x[1],
    "narrow": lambda x: x.narrow(2, 1, 2),
    "offset slice": lambda x: x[1:, 1:, 1:],
    "permute": lambda x: x.permute(2, 0, 1),
    "select": lambda x: x.select(1, 2),
    "view": lambda x: x.view(6, 4),
    "ellipsis": lambda x: x[..., 1],
    "mT": lambda x: x.mT,
    "unflatten": lambda x: x.unflatten(2, (2, 2)),
    "contiguous of mT": lambda x: x.mT.contiguous(),
    "flip": lambda x: x.flip(0),
    "sum": lambda x: x + 1,
    "sum of mT": lambda x: x.mT + 1,
    "movedim": lambda x: x.movedim(0, -1),
    "unfold": lambda x: x.unfold(2, 2, 1),
    "chunk": lambda x: x.chunk(2, 2)[1],
    "split": lambda x: x.split(1)[1],
    "unbind": lambda x: x.unbind(1)[2],
    "None": lambda x: x[None, :, None],
    "reshape of slice": lambda x: x[1].reshape(12),
}


@pytest.mark.parametrize("name", VIEWS)
def test_strides_and_offsets_are_pytorchs(name):
    ours, theirs = (VIEWS[name](m.arange(24.0).reshape(2, 3, 4)) for m in (tga, torch))
    assert ours.stride() == theirs.stride()
    assert ours.storage_offset() == theirs.storage_offset()
    assert [ours.stride(d) for d in range(-ours.ndim, ours.ndim)] == [
        theirs.stride(d) for d in range(-theirs.ndim, theirs.ndim)
    ]


def test_a_views_address_is_where_its_first_element_lies():
    x = tga.arange(24.0).reshape(2, 3, 4)
    assert x[1].data_ptr() - x.data_ptr() == 12 * x.element_size()
    assert x.view(-1).data_ptr() == x.data_ptr()
    assert x.clone().data_ptr() != x.data_ptr()


def test_stride_of_a_dim_out_of_range_raises_as_pytorchs():
    with pytest.raises(IndexError):
        tga.zeros(2, 3).stride(2)
    with pytest.raises(IndexError):
        torch.zeros(2, 3).stride(2)
