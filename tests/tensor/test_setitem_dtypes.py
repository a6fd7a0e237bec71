"""``x[key] = value`` with a tensor value of another dtype, as PyTorch's: basic keys cast the
value (``copy_``), index tensors and lists refuse it (``index_put_``'s RuntimeError), masks take
a one-element value of any dtype (``masked_fill``). Every key kind × value shape × dtype pair."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import tinygrad_attn as tga  # noqa: E402

DTYPES = ["bool", "int32", "int64", "float32", "float64"]
KEYS = {
    "int": lambda m: (0,),
    "slice": lambda m: (slice(0, 1),),
    "0-d index": lambda m: (m.tensor(1),),
    "list": lambda m: ([0, 1],),
    "index tensor": lambda m: (m.tensor([1]),),
    "row mask": lambda m: (m.tensor([True, False]),),
    "full mask": lambda m: (m.tensor([[True, False, True], [False, False, True]]),),
    "slice and mask": lambda m: (slice(None), m.tensor([True, False, True])),
    "mask and int": lambda m: (m.tensor([False, True]), 2),
    "index tensors": lambda m: (m.tensor([0, 1]), m.tensor([2, 0])),
}
VALUES = {"0-d": (), "one element": (1,), "row": (3,)}


@pytest.mark.parametrize("value_shape", VALUES)
@pytest.mark.parametrize("key", KEYS)
@pytest.mark.parametrize("dst,src", [p for p in itertools.product(DTYPES, DTYPES) if p[0] != p[1]])
def test_setitem_with_a_value_of_another_dtype_is_pytorchs(key, value_shape, dst, src):
    def run(m):
        x = m.zeros(2, 3, dtype=getattr(m, dst))
        v = m.ones(VALUES[value_shape], dtype=getattr(m, src))
        try:
            x[KEYS[key](m)] = v
        except RuntimeError:
            return "raises"
        return np.asarray(x.detach().numpy()).tolist()

    assert run(tga) == run(torch)
