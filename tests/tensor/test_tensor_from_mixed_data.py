"""``tensor(data)`` of nested lists mixing Python numbers, NumPy scalars and one-element
tensors (``torch.tensor([loss.item() ...])`` written without ``.item()``): PyTorch's dtype
(each entry's own, promoted), shape (a one-element tensor is read as its number) and values,
and its ValueError for a larger tensor inside the list. A random generator over every kind."""

from __future__ import annotations

import random

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import tinygrad_attn as tga  # noqa: E402

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64"]


def _leaf(rnd: random.Random):
    """A recipe for one entry: (kind, dtype, value, shape)."""
    kind = rnd.choice(["py", "py", "np", "tensor"])
    dtype = rnd.choice(DTYPES)
    value = rnd.choice([0, 1, 3]) if dtype != "bool" else rnd.choice([0, 1])
    if kind == "py":
        return ("py", rnd.choice(["bool", "int", "float"]), value, None)
    shape = rnd.choice([(), (), (1,), (1, 1), (2,)]) if kind == "tensor" else ()
    return (kind, dtype, value, shape)


def _make(lib, recipe):
    kind, dtype, value, shape = recipe
    if kind == "py":
        return {"bool": bool, "int": int, "float": lambda v: v + 0.5}[dtype](value)
    if kind == "np":
        return np.dtype(dtype).type(value)
    return lib.full(shape, value, dtype=getattr(lib, dtype))


def _programs(n: int = 600):
    rnd = random.Random(0)
    out = []
    for _ in range(n):
        width, nested = rnd.randint(1, 3), rnd.random() < 0.4
        if nested:
            out.append([[_leaf(rnd) for _ in range(width)] for _ in range(2)])
        else:
            out.append([_leaf(rnd) for _ in range(width)])
    return out


def _build(lib, program):
    return [[_make(lib, r) for r in row] if isinstance(row, list) else _make(lib, row) for row in program]


def _outcome(lib, program):
    try:
        t = lib.tensor(_build(lib, program))
    except (ValueError, TypeError, RuntimeError) as e:
        return ("raises", type(e).__name__)
    return (str(t.dtype).removeprefix("torch."), tuple(t.shape), np.asarray(t.detach().numpy()).tolist())


@pytest.mark.parametrize("k", range(600))
def test_tensor_of_mixed_entries_is_pytorchs(k):
    program = _programs()[k]
    assert _outcome(tga, program) == _outcome(torch, program), program
