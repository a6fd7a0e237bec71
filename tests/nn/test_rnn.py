"""Recurrent cells: PyTorch's equations and weight names, against NumPy, gradient-checked."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import close
from modelcheck import gradcheck_module, gru_numpy, to_float64

from tinygrad_attn import Tensor
from tinygrad_attn.models import GRUCell, RNNCell
from tinygrad_attn.nn.rnn import unroll


def _rnn_numpy(cell, x, h):
    w = {n: p.numpy() for n, p in cell.named_parameters()}
    return np.tanh(x @ w["weight_ih"].T + w["bias_ih"] + h @ w["weight_hh"].T + w["bias_hh"])


CELLS = {"rnn": (RNNCell, _rnn_numpy, 1), "gru": (GRUCell, gru_numpy, 3)}


@pytest.mark.parametrize("kind", sorted(CELLS))
def test_names_and_shapes(kind):
    cls, _, gates = CELLS[kind]
    cell = cls(3, 5)
    shapes = {n: p.shape for n, p in cell.named_parameters()}
    assert shapes == {
        "weight_ih": (gates * 5, 3),
        "weight_hh": (gates * 5, 5),
        "bias_ih": (gates * 5,),
        "bias_hh": (gates * 5,),
    }
    assert all(np.abs(p.numpy()).max() <= 1 / np.sqrt(5) for p in cell.parameters())  # PyTorch's init
    assert [n for n, _ in cls(3, 5, bias=False).named_parameters()] == ["weight_ih", "weight_hh"]


@pytest.mark.parametrize("kind", sorted(CELLS))
def test_step_equals_numpy(kind, device, rng):
    cls, ref, _ = CELLS[kind]
    cell = to_float64(cls(3, 4).to(device))
    x, h = rng.standard_normal((2, 3)), rng.standard_normal((2, 4))
    close(cell(Tensor(x, device=device), Tensor(h, device=device)), ref(cell, x, h), atol=1e-12, rtol=1e-10)
    close(cell(Tensor(x, device=device)), ref(cell, x, np.zeros((2, 4))), atol=1e-12, rtol=1e-10)


@pytest.mark.parametrize("kind", sorted(CELLS))
def test_unroll_equals_step_by_step(kind, rng):
    cls, ref, _ = CELLS[kind]
    cell = to_float64(cls(3, 4))
    x = rng.standard_normal((2, 5, 3))
    states, last = unroll(cell, Tensor(x))
    h = np.zeros((2, 4))
    for t in range(5):
        h = ref(cell, x[:, t], h)
        close(states[:, t], h, atol=1e-12, rtol=1e-10)
    close(last, h, atol=1e-12, rtol=1e-10)
    assert states.shape == (2, 5, 4)


@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("kind", sorted(CELLS))
def test_gradcheck(kind, bias, device, rng):
    cell = CELLS[kind][0](3, 2, bias=bias).to(device)
    x, h = Tensor(rng.standard_normal((2, 3)), device=device), Tensor(rng.standard_normal((2, 2)), device=device)
    assert gradcheck_module(cell, cell, x, h)


@pytest.mark.parametrize("kind", sorted(CELLS))
def test_unroll_gradcheck(kind, device, rng):
    cell = CELLS[kind][0](2, 2).to(device)
    x = Tensor(rng.standard_normal((2, 3, 2)), device=device)
    assert gradcheck_module(cell, lambda x: unroll(cell, x)[0], x)


def test_errors():
    with pytest.raises(ValueError, match=r"GRUCell\(3, 4\): input of shape \(2, 5\) must end in 3"):
        GRUCell(3, 4)(Tensor.randn(2, 5))
    with pytest.raises(ValueError, match=r"RNNCell: hidden state of shape \(2, 3\), expected \(2, 4\)"):
        RNNCell(3, 4)(Tensor.randn(2, 3), Tensor.randn(2, 3))
