"""Piecewise activations at their kinks and at infinities: PyTorch's value and gradient there
(the fast loop's fewer random draws found hardswish giving 0 at -inf and gradient 1.5 at 3)."""

from __future__ import annotations

import contextlib
import warnings

import numpy as np
import pytest

import tinygrad_attn as tga
import tinygrad_attn.functional as F

torch = pytest.importorskip("torch")
TF = torch.nn.functional

POINTS = np.array([-np.inf, -5.0, -3.0, -1e-300, 0.0, 2.0, 3.0, 6.0, 7.0, np.inf])
ACTIVATIONS = ["hardswish", "hardsigmoid", "relu6", "hardtanh", "relu", "leaky_relu", "elu"]


@pytest.mark.parametrize("decomposed", [False, True], ids=["fused", "decomposed"])
@pytest.mark.parametrize("name", ACTIVATIONS)
def test_kinks_and_infinities_as_pytorch(name, decomposed):
    a = tga.tensor(POINTS, requires_grad=True)
    b = torch.tensor(POINTS, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # (inf * 0 in the piece that gives PyTorch's NaN)
        with tga.decompose() if decomposed else contextlib.nullcontext():
            ours = getattr(F, name)(a)
            ours.sum().backward()
    theirs = getattr(TF, name)(b)
    theirs.sum().backward()
    # (to the last bits: x * (x + 3) / 6 and PyTorch's x * (x + 3) * (1 / 6) may round apart)
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-14, atol=0)
    # (PyTorch's hardsigmoid backward multiplies by 1/6 rounded to float32, even in float64)
    rtol = 1e-7 if name == "hardsigmoid" else 1e-14
    np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=rtol, atol=0)
