"""A Tensor in Python's protocols (``__index__ __format__ __contains__ __reversed__ __hash__``)
against PyTorch: the same values, and the same exception class where PyTorch raises."""

from __future__ import annotations

import operator
from typing import Any

import numpy as np
import pytest

import tinygrad_attn as tga

torch = pytest.importorskip("torch")

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64"]
SHAPES = [(), (1,), (1, 1), (2,), (0,), (2, 3)]


def _both(values: np.ndarray, dtype: str) -> tuple[Any, Any]:
    values = np.asarray(values, dtype=dtype)  # (a 0-d array: a NumPy scalar is another case of tga.tensor)
    return tga.tensor(values), torch.tensor(values)


def _outcome(fn: Any, t: Any) -> Any:
    try:
        out = fn(t)
    except Exception as e:  # noqa: BLE001 - the class is what is compared
        return type(e)
    return out.detach().numpy().tolist() if hasattr(out, "numpy") else out


def _same(fn: Any, values: np.ndarray, dtype: str) -> None:
    ours, theirs = (_outcome(fn, t) for t in _both(values, dtype))
    if isinstance(theirs, type):
        assert isinstance(ours, type) and issubclass(ours, theirs), f"torch raises {theirs.__name__}, ours gave {ours}"
    else:
        assert ours == theirs and type(ours) is type(theirs)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
def test_index_as_torch(shape: tuple, dtype: str) -> None:
    values = np.arange(1, 1 + int(np.prod(shape))).reshape(shape) % 3
    _same(operator.index, values, dtype)
    _same(lambda t: ["a", "b", "c", "d"][t], values, dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("spec", ["", ".4f", ".2e", ">10", "05d", "d", "g", "%", "x", "!bogus"])
def test_format_as_torch(shape: tuple, dtype: str, spec: str) -> None:
    values = np.arange(1, 1 + int(np.prod(shape))).reshape(shape) * 1.25
    if spec == "" and shape != ():  # (the text of the whole tensor: ours is printed as ours)
        assert format(tga.tensor(values.astype(dtype)), "") == str(tga.tensor(values.astype(dtype)))
        return
    _same(lambda t: format(t, spec), values, dtype)


def test_format_in_an_f_string_of_a_loss_that_requires_grad() -> None:
    w = tga.tensor([0.5, 1.5], requires_grad=True)
    loss = (w * w).sum()
    assert f"{loss:.4f}" == "2.5000" and f"loss {loss:8.2f}|" == "loss     2.50|"


@pytest.mark.parametrize("element", [1, 2.0, 7, True, "a", None, [1], (2, 3)], ids=repr)
@pytest.mark.parametrize("dtype", ["int64", "float32", "bool"])
def test_contains_as_torch(element: Any, dtype: str) -> None:
    values = np.array([[0, 1], [2, 3]])
    _same(lambda t: element in t, values, dtype)


def test_contains_a_tensor_broadcasts_as_torch() -> None:
    values = np.array([[0, 1], [2, 3]])
    for row in ([2, 3], [3, 2], [[0, 1]], 3):
        _same(lambda t, row=row: type(t).__contains__(t, tga.tensor(row) if isinstance(t, tga.Tensor) else torch.tensor(row)),
              values, "int64")  # fmt: skip


@pytest.mark.parametrize("shape", [(), (3,), (2, 3), (0, 2)])
def test_reversed_as_torch(shape: tuple) -> None:
    values = np.arange(int(np.prod(shape))).reshape(shape)
    _same(lambda t: reversed(t), values, "int64")
    t = tga.tensor(values)
    assert isinstance(reversed(t), tga.Tensor)


def test_hash_is_identity() -> None:
    a, b = tga.tensor([1.0, 2.0]), tga.tensor([1.0, 2.0])
    assert hash(a) == hash(a) and hash(a) != hash(b)
    seen = {a: "a", b: "b"}
    assert seen[a] == "a" and seen[b] == "b" and len({a, b, a}) == 2
    p = tga.nn.Parameter(tga.zeros(2))
    assert {p: 1}[p] == 1


def test_protocols_on_each_device(device: str) -> None:
    t = tga.tensor([[3, 1], [4, 1]], device=device)
    assert ["a", "b", "c"][t[1, 1]] == "b" and operator.index(t[0, 0]) == 3
    assert f"{tga.tensor(2.5, device=device):.2f}" == "2.50" and 4 in t and 7 not in t
    r = reversed(t)
    assert str(r.device) == str(t.device) and r.tolist() == [[4, 1], [3, 1]]
    assert hash(t) == id(t)
