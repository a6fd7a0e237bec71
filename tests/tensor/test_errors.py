"""Errors are PyTorch's classes (RuntimeError for shapes that do not fit, IndexError out
of range, NotImplementedError for a mode we lack, TypeError for a non-tensor), each also
a ValueError where the library's contract raises one, with a message naming the op."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

import tinygrad_attn as tga  # noqa: E402
import tinygrad_attn.functional as F  # noqa: E402

TF = torch.nn.functional

CASES = {
    "add of shapes that do not broadcast": (lambda m: m.ones(2, 3) + m.ones(4), "add"),
    "matmul of shapes that do not fit": (lambda m: m.ones(2, 3) @ m.ones(4, 2), "matmul"),
    # (PyTorch's words, not the op's name: lessons print this one; tests/tensor/test_reshape_messages_torch.py)
    "reshape to another size": (
        lambda m: m.ones(2, 3).reshape(4, 2),
        r"shape '\[4, 2\]' is invalid for input of size 6",
    ),
    "cat of 0-d tensors": (lambda m: m.cat([m.tensor(1.0), m.tensor(2.0)]), "cat"),
    "pad mode we lack": (lambda m: (F if m is tga else TF).pad(m.ones(1, 2, 3), (1, 1), mode="bogus"), "pad"),
    "target out of range": (lambda m: (F if m is tga else TF).cross_entropy(m.ones(2, 3), m.tensor([0, 5])), ""),
    "dim out of range": (lambda m: m.ones(2, 3).sum(5), "sum"),
    "index out of range": (lambda m: m.ones(2, 3)[5], ""),
    "GRU of sequence length 0": (lambda m: m.nn.GRU(3, 4)(m.ones(0, 1, 3)), "GRU"),
    "Linear of a list": (lambda m: m.nn.Linear(2, 2)([[1.0, 2.0]]), "Linear"),
    # shape checks of the products, shape functions and layers (a program's `except RuntimeError` catches them)
    "dot of matrices": (lambda m: m.ones(2, 2).dot(m.ones(2, 2)), "dot"),
    "outer of a matrix": (lambda m: m.outer(m.ones(2, 2), m.ones(2)), "outer"),
    "mm of a vector": (lambda m: m.mm(m.ones(2), m.ones(2, 2)), "mm"),
    "bmm of matrices": (lambda m: m.bmm(m.ones(2, 2), m.ones(2, 2)), "bmm"),
    "bmm of other batch sizes": (lambda m: m.bmm(m.ones(2, 2, 2), m.ones(3, 2, 2)), "bmm"),
    "index_select with a 2-D index": (lambda m: m.index_select(m.ones(3), 0, m.zeros(2, 2, dtype=m.long)), ""),
    "topk of more than the size": (lambda m: m.topk(m.ones(3), 5), "topk"),
    "repeat with too few counts": (lambda m: m.ones(2, 2).repeat(2), "repeat"),
    "split into sizes of another sum": (lambda m: m.split(m.ones(5), [2, 2]), "split"),
    "split into size 0": (lambda m: m.split(m.ones(5), 0), "split"),
    "tril of a vector": (lambda m: m.tril(m.ones(3)), "tril"),
    "triu of a vector": (lambda m: m.ones(3).triu(), "triu"),
    "stack of other shapes": (lambda m: m.stack([m.ones(2, 3), m.ones(2, 2)]), "stack"),
    "linear of shapes that do not fit": (lambda m: (F if m is tga else TF).linear(m.ones(2, 3), m.ones(4, 2)), ""),
    "item of two elements": (lambda m: m.ones(2).item(), ""),
    "expand to another size": (lambda m: m.ones(2, 3).expand(3, 3), "expand"),
    "LSTM of another input size": (lambda m: m.nn.LSTM(3, 4)(m.ones(2, 5)), ""),
    "argmax of an empty tensor": (lambda m: m.ones(0).argmax(), "argmax"),
    "one_hot of a class out of range": (lambda m: (F if m is tga else TF).one_hot(m.tensor([3]), 2), ""),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_error_classes_are_pytorchs(name):
    f, op = CASES[name]
    with pytest.raises(Exception) as theirs:
        f(torch)
    with pytest.raises(type(theirs.value), match=op) as ours:
        f(tga)
    if isinstance(theirs.value, (RuntimeError, NotImplementedError)) and name != "GRU of sequence length 0":
        assert isinstance(ours.value, ValueError)  # (a ValueError too, as the contract says)


def test_index_out_of_bounds_says_so_in_pytorch_words():
    # PyTorch: "index 3 is out of bounds for dimension 1 with size 3"; code and tests match "out of bounds"
    a = tga.ones(4, 3)
    with pytest.raises(IndexError, match=r"getitem: index 3 is out of bounds for an axis of size 3 \(shape \(4, 3\)\)"):
        a[1, 3]
    with pytest.raises(IndexError, match="out of bounds"):
        a[1, -4]
    with pytest.raises(IndexError, match="out of bounds"):
        a[tga.tensor([0, 4])]
    with pytest.raises(IndexError, match="setitem: index 5 is out of bounds"):
        a[5] = 1.0
    with pytest.raises(IndexError, match="out of bounds"):
        torch.ones(4, 3)[1, 3]
