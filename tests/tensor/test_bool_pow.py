"""``bool ** bool`` as PyTorch 2.13 has it: a bool tensor to a Python bool stays bool; two
bool tensors (or a Python bool to a bool tensor) raise ``NotImplementedError`` ("pow" is
not implemented for 'Bool'); a bool tensor to an int or a float promotes as usual."""

from __future__ import annotations

import numpy as np
import pytest

import tinygrad_attn as tga

torch = pytest.importorskip("torch")

CASES = {
    "tensor ** True": lambda m, a: a**True,
    "tensor ** False": lambda m, a: a**False,
    "tensor ** tensor": lambda m, a: a**a,
    "0-d ** 0-d": lambda m, a: m.tensor(True) ** m.tensor(False),
    "True ** tensor": lambda m, a: True**a,
    "tensor ** 2": lambda m, a: a**2,
    "tensor ** 2.0": lambda m, a: a**2.0,
    "2 ** tensor": lambda m, a: 2**a,
    "pow(tensor, True)": lambda m, a: a.pow(True),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_bool_pow_as_pytorch(name):
    got, want = [], []
    for m, out in ((tga, got), (torch, want)):
        a = m.tensor(np.array([True, False]))
        try:
            r = CASES[name](m, a)
            out.append((str(r.dtype).replace("torch.", ""), np.asarray(r.detach().numpy()).tolist()))
        except NotImplementedError:
            out.append("raises")
    assert got == want
