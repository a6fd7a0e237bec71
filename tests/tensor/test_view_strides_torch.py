"""``x.view(shape)`` takes a view exactly where PyTorch's does: for every layout a program
makes (transposes, permutes, slices with and without steps, expands, selects) and every target
shape, the same result shape or PyTorch's RuntimeError; ``view(dtype)`` reads the same bytes;
``numpy()`` on the CPU shares the tensor's memory, as PyTorch's."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import tinygrad_attn as tga

torch = pytest.importorskip("torch")

LAYOUTS = {
    "contiguous": lambda x: x,
    "transpose(1, 2)": lambda x: x.transpose(1, 2),
    "[:, :, :2]": lambda x: x[:, :, :2],
    "[:, 1:]": lambda x: x[:, 1:],
    "permute(3, 2, 1, 0)": lambda x: x.permute(3, 2, 1, 0),
    "[..., ::2]": lambda x: x[..., ::2],
    "[:1]": lambda x: x[:1],
    "transpose(0, 1)[:, :1]": lambda x: x.transpose(0, 1)[:, :1],
    "unsqueeze(2).expand": lambda x: x.unsqueeze(2).expand(2, 3, 2, 4, 5),
    "[:, :, :1, :]": lambda x: x[:, :, :1, :],
    "select(2, 1)": lambda x: x.select(2, 1),
    "matrix t()": lambda x: x.flatten(0, 1).flatten(1).t(),
    "mT": lambda x: x.mT,
}
TARGETS = [(-1,), (2, -1), (6, 4, 5), (2, 3, 20), (3, 2, 4, 5), (2, 12, 5), (1, -1), (-1, 1), (2, 3, 2, 2, 5),
           (4, -1), (5, -1), (-1, 5), (-1, 2)]  # fmt: skip


def _outcome(lib, layout: str, target: tuple) -> object:
    x = LAYOUTS[layout](lib.tensor(np.arange(120.0).reshape(2, 3, 4, 5)))
    try:
        v = x.view(target)
    except RuntimeError:
        return "RuntimeError"
    except Exception as e:  # noqa: BLE001 - the class is what is compared
        return type(e).__name__
    return tuple(v.shape), v.reshape(-1)[:7].tolist()


@pytest.mark.parametrize("layout, target", list(itertools.product(LAYOUTS, TARGETS)), ids=str)
def test_view_is_possible_where_pytorchs_is(layout: str, target: tuple) -> None:
    assert _outcome(tga, layout, target) == _outcome(torch, layout, target)


@pytest.mark.parametrize("dtype, as_dtype", [("float32", "int32"), ("int64", "float64"), ("int32", "float32"),
                                             ("int16", "float16"), ("uint8", "int8"), ("float64", "int64")])  # fmt: skip
def test_view_as_a_dtype_of_the_same_size_reads_the_same_bytes(dtype: str, as_dtype: str) -> None:
    a = np.arange(-3, 3).astype(dtype)
    ours = tga.tensor(a).view(getattr(tga, as_dtype))
    theirs = torch.tensor(a).view(getattr(torch, as_dtype))
    assert str(ours.dtype).replace("torch.", "") == str(theirs.dtype).replace("torch.", "")
    np.testing.assert_array_equal(ours.detach().numpy(), theirs.detach().numpy())


@pytest.mark.parametrize("change", ["tensor add_", "array +=", "setitem"])
def test_numpy_shares_memory_with_the_tensor(change: str) -> None:
    def run(lib):
        t = lib.ones(2, 3)
        n = t.detach().numpy()
        if change == "tensor add_":
            t.add_(1)
        elif change == "array +=":
            n += 5
        else:
            t[0, 1] = 7
        return n.tolist(), t.tolist()

    assert run(tga) == run(torch)


COPIES = {
    "contiguous()": lambda x: x.contiguous(),
    "contiguous() with grad": lambda x: (x.requires_grad_() * 1).transpose(0, 1).transpose(0, 1).contiguous(),
    "clone() with grad": lambda x: x.requires_grad_().clone(),
    "* 2": lambda x: x * 2,
    "exp()": lambda x: x.exp(),
}


@pytest.mark.parametrize("layout, copy", list(itertools.product(LAYOUTS, COPIES)), ids=str)
def test_what_a_copy_gives_views_as_pytorchs(layout: str, copy: str) -> None:
    def outcome(lib):
        y = COPIES[copy](LAYOUTS[layout](lib.tensor(np.arange(120.0).reshape(2, 3, 4, 5))))
        try:
            return y.is_contiguous(), tuple(y.view(-1).shape)
        except RuntimeError:
            return y.is_contiguous(), "RuntimeError"

    assert outcome(tga) == outcome(torch)


# -- view(dtype): the same bytes as another dtype, of another element size too ---------------------------
_VIEW_DTYPES = ("uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64", "bool", "complex64",
                "complex128")  # fmt: skip
_VIEW_SOURCES = (
    "torch.arange(8).to(torch.{a})", "torch.arange(24).to(torch.{a}).reshape(2, 3, 4)",
    "torch.arange(24).to(torch.{a}).reshape(2, 3, 4)[:, 1:, 1:]", "torch.arange(24).to(torch.{a}).reshape(2, 3, 4).transpose(1, 2)",
    "torch.tensor(3).to(torch.{a})", "torch.arange(24).to(torch.{a}).reshape(2, 12)[:, 2:]",
    "torch.arange(24).to(torch.{a}).reshape(4, 6)[:, :3]",
)  # fmt: skip


@pytest.mark.parametrize("source", _VIEW_SOURCES)
@pytest.mark.parametrize("to", _VIEW_DTYPES)
def test_view_as_a_dtype_of_another_size_as_pytorch(source: str, to: str) -> None:
    """Shape, strides, offset and bytes of ``x.view(dtype)``, or PyTorch's error class, over every pair."""

    def outcome(lib, a):
        try:
            v = eval(source.format(a=a), {"torch": lib}).view(getattr(lib, to))
        except RuntimeError as e:
            return type(e).__name__
        return tuple(v.shape), v.stride(), v.storage_offset(), np.asarray(v.tolist()).tobytes()

    for a in _VIEW_DTYPES:
        assert outcome(tga, a) == outcome(torch, a), f"{source.format(a=a)}.view(torch.{to})"
