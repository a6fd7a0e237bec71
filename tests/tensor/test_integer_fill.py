"""A Python int written into an integer tensor (``full``, ``fill_``, ``fill``, ``masked_fill``,
``index_fill_``), as PyTorch's: in range it is written, a negative one wraps into an unsigned
dtype (-1 into uint8 is 255), and beyond that PyTorch's RuntimeError, never NumPy's
OverflowError nor a silent wrap."""

from __future__ import annotations

import itertools

import pytest

torch = pytest.importorskip("torch")

import tinygrad_attn as tga  # noqa: E402

DTYPES = ["uint8", "int8", "int16", "int32", "int64"]
VALUES = [-(2**63), -(2**31) - 1, -256, -255, -129, -128, -1, 0, 127, 128, 255, 256, 2**31, 2**63 - 1]
FILLS = {
    "full": lambda m, dt, v: m.full((2,), v, dtype=dt),
    "fill_": lambda m, dt, v: m.zeros(2, dtype=dt).fill_(v),
    "fill": lambda m, dt, v: m.fill(m.zeros(2, dtype=dt), v),
    "masked_fill": lambda m, dt, v: m.zeros(2, dtype=dt).masked_fill(m.tensor([True, False]), v),
    "index_fill_": lambda m, dt, v: m.zeros(2, dtype=dt).index_fill_(0, m.tensor([1]), v),
}


def _outcome(m, fill, dtype, value):
    try:
        return FILLS[fill](m, getattr(m, dtype), value).tolist()
    except RuntimeError:
        return "RuntimeError"


@pytest.mark.parametrize("fill", FILLS)
@pytest.mark.parametrize("dtype,value", list(itertools.product(DTYPES, VALUES)))
def test_an_int_written_into_an_integer_tensor_is_pytorchs(fill, dtype, value):
    assert _outcome(tga, fill, dtype, value) == _outcome(torch, fill, dtype, value)
