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


# -- the forms data comes in, and the values each dtype takes --------------------------------------
class _Seq:
    """A user's sequence: ``len`` and indexing, nothing else (PyTorch reads it item by item)."""

    def __init__(self, items):
        self.items = list(items)

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        return self.items[i]


class _ArrayOnly:
    """An object with ``__array__`` alone, which PyTorch does not read."""

    def __array__(self, dtype=None, copy=None):
        return np.array([1, 2], dtype=np.int32)


# Each form turns a flat list of Python numbers into the data (None: not for these numbers).
FORMS = {
    "list": list,
    "tuple": tuple,
    "nested": lambda v: [list(v), list(v)],
    "range": lambda v: range(len(v)) if all(type(x) is int for x in v) else None,
    "deque": lambda v: __import__("collections").deque(v),
    "array('d')": lambda v: __import__("array").array("d", [float(x.real) for x in v]),
    "array('q')": lambda v: __import__("array").array("q", v) if all(type(x) is int for x in v) else None,
    "bytearray": lambda v: bytearray(v) if all(type(x) is int and 0 <= x < 256 for x in v) else None,
    "memoryview": lambda v: memoryview(bytes(v)) if all(type(x) is int and 0 <= x < 256 for x in v) else None,
    "user sequence": _Seq,
    "list of ranges": lambda v: [range(2), range(3, 5)],
    "Size": lambda v: tga.Size(v) if all(type(x) is int and x >= 0 for x in v) else None,
    "set": set,
    "dict": lambda v: dict(enumerate(v)),
    "iterator": iter,
    "generator": lambda v: (x for x in v),
    "array only": lambda v: _ArrayOnly(),
    "ragged": lambda v: [list(v), list(v)[:1]],
    "number in lists": lambda v: [list(v), v[0]],
    "list in numbers": lambda v: [v[0], list(v)],
    "empty then full": lambda v: [[], list(v)],
    "None inside": lambda v: [v[0], None],
    "bytes inside": lambda v: [v[0], b"ab"],
    "numpy scalars": lambda v: [np.asarray(x)[()] for x in v],
    "0-d tensors": lambda v: ["0-d", *v],  # (made per library below)
}
VALUES = [[1, 2], [300, -1], [-129, 5], [2**31, 0], [-200, 255], [-256, 1], [1.5, -0.5], [1e10, 2.0], [1 + 2j, 0],
          [True, 2], [float("nan"), 1.0], [2**40, 3]]  # fmt: skip


def _data(lib, form, values):
    if form == "0-d tensors":
        return [lib.tensor(x) for x in values]
    if form == "Size":
        return lib.Size(values) if all(type(x) is int and x >= 0 for x in values) else None
    return FORMS[form](values)


def _form_cases():
    out = []
    for form in FORMS:
        for values in VALUES:
            if _data(tga, form, values) is None:
                continue  # (this form cannot hold these numbers)
            for dtype in [None, *DTYPES]:
                out.append((form, values, dtype))
    return out


@pytest.mark.parametrize("form, values, dtype", _form_cases())
def test_every_form_of_data_and_value_is_read_as_pytorch_reads_it(form, values, dtype):
    results = []
    for lib in (torch, tga):
        data = _data(lib, form, values)
        try:
            t = lib.tensor(data, dtype=None if dtype is None else getattr(lib, dtype))
            results.append(("ok", str(t.dtype).split(".")[-1], tuple(t.shape), t.detach().numpy()))
        except Exception as e:  # noqa: BLE001 - the class is compared
            results.append(("raises", [c.__name__ for c in type(e).__mro__]))
    theirs, ours = results
    assert ours[0] == theirs[0], (ours, theirs)
    if theirs[0] == "raises":
        assert theirs[1][0] in ours[1], (ours, theirs)
        return
    assert ours[1:3] == theirs[1:3]
    np.testing.assert_array_equal(ours[3], theirs[3])
