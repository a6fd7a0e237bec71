"""Joining tensors of different dtypes (cat, stack and their kin) gives ``torch.result_type``'s
dtype over the operands, as PyTorch's, with equal values; a float leaf's gradient keeps its
dtype. NumPy's rule differs (int64 with float32 joins as float64), hence a test per pair."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import tinygrad_attn as tga  # noqa: E402

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64"]
JOINS = ["cat", "concat", "concatenate", "stack", "hstack", "vstack", "dstack", "column_stack", "row_stack"]


def _values(dtype: str, seed: int) -> np.ndarray:
    r = np.random.default_rng(seed)
    if dtype == "bool":
        return r.integers(0, 2, (2, 3)).astype(bool)
    if dtype.startswith(("int", "uint")):
        return r.integers(0, 9, (2, 3)).astype(dtype)
    return r.standard_normal((2, 3)).astype(dtype)


@pytest.mark.parametrize("join", JOINS)
@pytest.mark.parametrize("a,b", list(itertools.product(DTYPES, DTYPES)))
def test_a_join_promotes_as_pytorchs(join, a, b):
    xa, xb = _values(a, 1), _values(b, 2)
    want = getattr(torch, join)([torch.tensor(xa), torch.tensor(xb)])
    got = getattr(tga, join)([tga.tensor(xa), tga.tensor(xb)])
    assert str(got.dtype) == str(want.dtype)
    np.testing.assert_array_equal(got.detach().numpy(), want.detach().numpy())


@pytest.mark.parametrize("join", ["cat", "stack"])
@pytest.mark.parametrize("other", ["int64", "float64", "bool"])
def test_a_float32_leafs_gradient_stays_float32(join, other):
    leaf = tga.tensor(_values("float32", 3), requires_grad=True)
    out = getattr(tga, join)([leaf, tga.tensor(_values(other, 4))])
    (out * out).sum().backward()
    assert leaf.grad.dtype == np.float32
    np.testing.assert_allclose(leaf.grad.detach().numpy(), 2 * _values("float32", 3), rtol=1e-6)
