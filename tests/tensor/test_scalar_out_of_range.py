"""A Python int outside an integer tensor's range, beside it in a comparison or an elementwise op:
PyTorch casts the number to the tensor's dtype first (``uint8_tensor == -1`` compares with 255),
and so must we, for every integer dtype, comparison and boundary-crossing number."""

from __future__ import annotations

import numpy as np
import pytest

import tinygrad_attn as tga

torch = pytest.importorskip("torch")

INTS = ["uint8", "int8", "int16", "int32"]
OPS = ["eq", "ne", "lt", "le", "gt", "ge", "fmod"]


def _numbers(dtype: str) -> list[int]:
    info = np.iinfo(dtype)
    lo, hi = int(info.min), int(info.max)
    return [lo - 1, hi + 1, -1, hi + 2 + (hi - lo), lo - 300]


@pytest.mark.parametrize("dtype", INTS)
@pytest.mark.parametrize("op", OPS)
def test_an_out_of_range_int_is_cast_to_the_dtype_first(op, dtype):
    info = np.iinfo(dtype)
    values = np.array([info.min, info.max, 0, 1, 44, info.max - 1], dtype=dtype)
    for n in _numbers(dtype):
        if op == "fmod" and (n - int(info.min)) % (int(info.max) - int(info.min) + 1) + int(info.min) == 0:
            continue  # (a zero divisor after the cast: integer division by zero, another test's)
        want = getattr(torch, op)(torch.tensor(values), n)
        got = getattr(tga, op)(tga.tensor(values), n)
        assert str(got.dtype) == str(want.dtype), (op, dtype, n)
        assert got.tolist() == want.tolist(), (op, dtype, n)
