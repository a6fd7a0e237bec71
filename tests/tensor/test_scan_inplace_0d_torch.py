"""``cumsum_``/``cumprod_`` of every dtype and rank against PyTorch's: a 0-d tensor is left as it is
before any dtype check (bool runs), a tensor with entries of a dtype without an in-place kernel is
refused with PyTorch's class, and a dim out of range raises for every dtype."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import tinygrad_attn as tga  # noqa: E402

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64"]


def _run(lib, op, dtype, shape, dim):
    x = lib.tensor((np.arange(int(np.prod(shape))) % 3).reshape(shape).tolist(), dtype=getattr(lib, dtype))
    try:
        out = getattr(x, op)(dim)
    except Exception as e:  # noqa: BLE001 - the class is what is compared
        return type(e)
    return out is x, str(x.dtype), x.numpy().tolist()


@pytest.mark.parametrize("op", ["cumsum_", "cumprod_"])
@pytest.mark.parametrize("dtype", DTYPES)
def test_inplace_scans_as_in_torch(op, dtype):
    for shape, dim in [((), 0), ((), -1), ((), 1), ((3,), 0), ((2, 3), 1), ((2, 3), 2)]:
        theirs, ours = _run(torch, op, dtype, shape, dim), _run(tga, op, dtype, shape, dim)
        if isinstance(theirs, type):
            assert isinstance(ours, type) and issubclass(ours, theirs), (shape, dim, theirs, ours)
        else:
            assert ours == theirs, (shape, dim, theirs, ours)
