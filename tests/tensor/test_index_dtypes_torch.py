"""Index tensors of every dtype, against PyTorch: as keys (``x[k]``, ``x[:, k]``, ``x[k] = v``
with a tensor or a number, tensors and NumPy arrays) and as the index of every index op
(``gather``, ``scatter*``, ``index_*``, ``take*``, ``put``, ``embedding``). A uint8 key is a
mask (PyTorch's deprecated byte mask); an index of a dtype PyTorch's kernel does not take
raises where PyTorch's does, with its exception class."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import tinygrad_attn as tga

torch = pytest.importorskip("torch")

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float32", "float64"]

#: index ops: (call, the index's values); ``i`` is the index of that dtype, ``x`` a 2 x 3 float tensor
INDEX_OPS = {
    "index_select": ("x.index_select(0, i)", [1, 0]),
    "index_add": ("x.index_add(0, i, lib.ones(2, 3))", [1, 0]),
    "index_copy": ("x.index_copy(0, i, lib.ones(2, 3))", [1, 0]),
    "index_fill": ("x.index_fill(0, i, 1.0)", [1, 0]),
    "gather": ("x.gather(0, i)", [[1, 0, 1]]),
    "scatter": ("x.scatter(0, i, 1.0)", [[1, 0, 1]]),
    "scatter_add": ("x.scatter_add(0, i, lib.ones(1, 3))", [[1, 0, 1]]),
    "scatter_reduce": ("x.scatter_reduce(0, i, lib.ones(1, 3), 'amax')", [[1, 0, 1]]),
    "take": ("x.take(i)", [1, 0]),
    "take_along_dim": ("lib.take_along_dim(x, i, 0)", [[1, 0, 1]]),
    "put": ("x.put(i, lib.ones(2))", [1, 0]),
    "index_put": ("x.index_put((i,), lib.ones(3))", [1, 0]),
    "index_put_0d": ("x.index_put((i,), lib.tensor(2.0))", [1, 0]),
    "embedding": ("lib.nn.functional.embedding(i, x)", [1, 0]),
    "one_hot": ("lib.nn.functional.one_hot(i, 3)", [1, 0]),
}

#: keys: (expression, the key's values); ``k`` is the key (a tensor or a NumPy array of that dtype)
KEYS = {
    "get": ("x[k]", [1, 0]),
    "get_columns": ("x[:, k]", [1, 0, 1]),
    "get_0d": ("x[k]", 1),
    "get_2d": ("x[k]", [[1, 0, 1], [0, 0, 1]]),
    "set_tensor": ("x.__setitem__(k, lib.full((3,), 7.0)) or x", [1, 0]),
    "set_number": ("x.__setitem__(k, 7.0) or x", [1, 0]),
    "set_columns_number": ("x.__setitem__((slice(None), k), 7.0) or x", [1, 0, 1]),
    "set_columns_tensor": ("x.__setitem__((slice(None), k), lib.ones(2, 3)) or x", [1, 0, 1]),
}


def _run(lib, expr: str, **names):
    x = lib.arange(6.0).reshape(2, 3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return eval(expr, {"lib": lib, "x": x, "np": np, **names}).tolist()  # noqa: S307 - the table's calls
        except Exception as e:  # noqa: BLE001 - the class is what is compared
            return e


def _same(what: str, ours, theirs) -> None:
    if isinstance(theirs, Exception):
        assert isinstance(ours, Exception), f"{what}: PyTorch raises {theirs!r}, we return {ours}"
        assert isinstance(ours, type(theirs)), f"{what}: PyTorch raises {type(theirs).__name__}, we {ours!r}"
        return
    assert not isinstance(ours, Exception), f"{what}: PyTorch runs, we raise {ours!r}"
    assert ours == theirs, f"{what}: {ours}, PyTorch's {theirs}"


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", sorted(INDEX_OPS))
def test_an_index_op_takes_the_index_dtypes_pytorchs_does(op, dtype):
    expr, values = INDEX_OPS[op]
    _same(
        f"{op} with a {dtype} index",
        _run(tga, expr, i=tga.tensor(values).to(getattr(tga, dtype))),
        _run(torch, expr, i=torch.tensor(values).to(getattr(torch, dtype))),
    )


@pytest.mark.parametrize("form", ["tensor", "array", "list"])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("key", sorted(KEYS))
def test_a_key_of_every_dtype_indexes_as_pytorchs(key, dtype, form):
    expr, values = KEYS[key]

    def k(lib):
        if form == "array":
            return np.asarray(values).astype(dtype)
        if form == "list":  # (a list of floats is read as ints cut toward zero)
            return (np.asarray(values).astype(dtype) + (0.7 if dtype.startswith("float") else 0)).tolist()
        return lib.tensor(values).to(getattr(lib, dtype))

    _same(f"{expr} with a {dtype} {form} key", _run(tga, expr, k=k(tga)), _run(torch, expr, k=k(torch)))


def test_a_byte_mask_warns_as_pytorchs():
    with pytest.warns(UserWarning, match="uint8 is now deprecated"):
        out = tga.arange(3.0)[tga.tensor([1, 0, 1], dtype=tga.uint8)]
    assert out.tolist() == [0.0, 2.0]
