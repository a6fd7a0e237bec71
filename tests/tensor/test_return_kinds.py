"""What a function of several results returns, as PyTorch's: a tuple (``chunk``, ``split``,
``unbind``, ``meshgrid``, ...) or a named pair (``sort``, ``max(dim)``, ``linalg.svd``, ...),
indexable and unpackable the same way and printed alike (a list prints ``[...]``)."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

import tinygrad_attn as tga  # noqa: E402

CALLS = {
    "chunk": lambda m, x: x.chunk(2),
    "torch.chunk": lambda m, x: m.chunk(x, 2),
    "split": lambda m, x: x.split(2),
    "split sizes": lambda m, x: x.split([1, 2]),
    "torch.split": lambda m, x: m.split(x, 2),
    "unbind": lambda m, x: x.unbind(),
    "tensor_split": lambda m, x: x.tensor_split(2),
    "hsplit": lambda m, x: x.hsplit(2),
    "vsplit": lambda m, x: x.vsplit(3),
    "dsplit": lambda m, x: x.reshape(3, 2, 2).dsplit(2),
    "split_with_sizes": lambda m, x: x.split_with_sizes([1, 2]),
    "unsafe_chunk": lambda m, x: x.unsafe_chunk(2),
    "unsafe_split": lambda m, x: x.unsafe_split(2),
    "meshgrid": lambda m, x: m.meshgrid(x[0], x[1], indexing="ij"),
    "broadcast_tensors": lambda m, x: m.broadcast_tensors(x, x[0]),
    "atleast_1d": lambda m, x: m.atleast_1d(x[0, 0], x[0]),
    "where of a condition": lambda m, x: m.where(x > 2),
    "nonzero as_tuple": lambda m, x: x.nonzero(as_tuple=True),
    "sort": lambda m, x: x.sort(),
    "max dim": lambda m, x: x.max(0),
    "aminmax": lambda m, x: x.aminmax(),
    "topk": lambda m, x: x.topk(1),
    "frexp": lambda m, x: x.frexp(),
    "unique counts": lambda m, x: x.unique(return_counts=True),
    "var_mean": lambda m, x: m.var_mean(x),
    "cummax": lambda m, x: x.cummax(0),
    "mode": lambda m, x: x.mode(),
    "median dim": lambda m, x: x.median(0),
    "kthvalue": lambda m, x: x.kthvalue(1),
    "linalg.svd": lambda m, x: m.linalg.svd(x),
    "linalg.qr": lambda m, x: m.linalg.qr(x),
    "linalg.slogdet": lambda m, x: m.linalg.slogdet(x[:3, :3]),
    "linalg.eigh": lambda m, x: m.linalg.eigh(x[:3, :3]),
}


def _kind(out) -> tuple:
    """list, tuple or named (a tuple with field names), and the field names."""
    if isinstance(out, list):
        return ("list",)
    fields = getattr(out, "_fields", None) or tuple(n for n in ("values", "indices", "U", "S", "Vh", "Q", "R",
                                                                 "sign", "logabsdet", "eigenvalues", "eigenvectors",
                                                                 "min", "max", "mantissa", "exponent")
                                                        if hasattr(out, n))  # fmt: skip
    return ("tuple", len(out), tuple(sorted(fields)))


@pytest.mark.parametrize("name", CALLS)
def test_a_several_results_function_returns_what_pytorchs_does(name):
    want = CALLS[name](torch, torch.arange(12.0).reshape(3, 4))
    got = CALLS[name](tga, tga.arange(12.0).reshape(3, 4))
    assert _kind(got) == _kind(want)
