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
    "reshape to another size": (lambda m: m.ones(2, 3).reshape(4, 2), "reshape"),
    "cat of 0-d tensors": (lambda m: m.cat([m.tensor(1.0), m.tensor(2.0)]), "cat"),
    "pad mode we lack": (lambda m: (F if m is tga else TF).pad(m.ones(1, 2, 3), (1, 1), mode="bogus"), "pad"),
    "target out of range": (lambda m: (F if m is tga else TF).cross_entropy(m.ones(2, 3), m.tensor([0, 5])), ""),
    "dim out of range": (lambda m: m.ones(2, 3).sum(5), "sum"),
    "index out of range": (lambda m: m.ones(2, 3)[5], ""),
    "GRU of sequence length 0": (lambda m: m.nn.GRU(3, 4)(m.ones(0, 1, 3)), "GRU"),
    "Linear of a list": (lambda m: m.nn.Linear(2, 2)([[1.0, 2.0]]), "Linear"),
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
