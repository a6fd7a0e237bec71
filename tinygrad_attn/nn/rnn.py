"""Recurrent cells with PyTorch's equations and weight names, and a loop over time.

``weight_ih`` is ``(gates * hidden, input)`` and ``weight_hh`` ``(gates * hidden, hidden)``,
gates stacked in PyTorch's order (GRU: reset, update, new), so state dicts match
``nn.RNNCell`` / ``nn.GRUCell``. Each cell splits its step into ``input_gates(x)`` (no
recurrence, so a whole sequence can go through in one matmul) and ``step(gi, h)``.
"""

from __future__ import annotations

import math

import numpy as np

from .._tensor import Tensor, stack
from ..random import host_generator
from .module import Module, Parameter


def _uniform(shape: tuple[int, ...], bound: float) -> Parameter:
    return Parameter(host_generator().uniform(-bound, bound, shape).astype(np.float32))


class _Cell(Module):
    """Shared parameters and plumbing of the cells; ``gates`` blocks of ``hidden_size`` rows."""

    gates = 1

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True) -> None:
        super().__init__()
        self.input_size, self.hidden_size = input_size, hidden_size
        k = 1.0 / math.sqrt(hidden_size)  # PyTorch's init: all uniform in +-1/sqrt(hidden)
        g = self.gates * hidden_size
        self.weight_ih = _uniform((g, input_size), k)
        self.weight_hh = _uniform((g, hidden_size), k)
        self.bias_ih = _uniform((g,), k) if bias else None
        self.bias_hh = _uniform((g,), k) if bias else None

    def input_gates(self, x: Tensor) -> Tensor:
        """``x @ W_ih.T + b_ih`` for ``x`` ``(..., input)``: ``(..., gates * hidden)``."""
        if x.shape[-1] != self.input_size:
            raise ValueError(f"{type(self).__name__}({self.input_size}, {self.hidden_size}): input of shape "
                             f"{x.shape} must end in {self.input_size}")  # fmt: skip
        gi = x @ self.weight_ih.mT
        return gi + self.bias_ih if self.bias_ih is not None else gi

    def _hidden_gates(self, h: Tensor) -> Tensor:
        gh = h @ self.weight_hh.mT  # (B, gates * hidden)
        return gh + self.bias_hh if self.bias_hh is not None else gh

    def step(self, gi: Tensor, h: Tensor) -> Tensor:  # pragma: no cover - abstract
        raise NotImplementedError

    def forward(self, x: Tensor, h: Tensor | None = None) -> Tensor:
        """One step: ``x`` ``(B, input)``, ``h`` ``(B, hidden)`` (zeros if None) -> new ``h``."""
        if h is None:
            h = Tensor.zeros(x.shape[0], self.hidden_size, dtype=self.weight_ih.dtype, device=x.device)
        elif h.shape != (x.shape[0], self.hidden_size):
            raise ValueError(f"{type(self).__name__}: hidden state of shape {h.shape}, expected "
                             f"{(x.shape[0], self.hidden_size)}")  # fmt: skip
        return self.step(self.input_gates(x), h)

    def extra_repr(self) -> str:
        return f"{self.input_size}, {self.hidden_size}"


class RNNCell(_Cell):
    """Elman cell: ``h' = tanh(W_ih x + b_ih + W_hh h + b_hh)``.

    >>> RNNCell(3, 5)(Tensor.randn(2, 3)).shape
    (2, 5)
    """

    def step(self, gi: Tensor, h: Tensor) -> Tensor:
        return (gi + self._hidden_gates(h)).tanh()


class GRUCell(_Cell):
    """Gated recurrent unit (Cho et al., 2014), PyTorch's form::

        r = sigmoid(W_ir x + b_ir + W_hr h + b_hr)
        z = sigmoid(W_iz x + b_iz + W_hz h + b_hz)
        n = tanh(W_in x + b_in + r * (W_hn h + b_hn))
        h' = (1 - z) * n + z * h

    >>> GRUCell(3, 5)(Tensor.randn(2, 3)).shape
    (2, 5)
    """

    gates = 3

    def step(self, gi: Tensor, h: Tensor) -> Tensor:
        gh = self._hidden_gates(h)  # (B, 3h)
        n_h = self.hidden_size
        i_r, i_z, i_n = gi[:, :n_h], gi[:, n_h : 2 * n_h], gi[:, 2 * n_h :]
        h_r, h_z, h_n = gh[:, :n_h], gh[:, n_h : 2 * n_h], gh[:, 2 * n_h :]
        r = (i_r + h_r).sigmoid()
        z = (i_z + h_z).sigmoid()
        n = (i_n + r * h_n).tanh()
        return n + z * (h - n)  # = (1 - z) * n + z * h, one op fewer


def unroll(cell: _Cell, x: Tensor, h: Tensor | None = None) -> tuple[Tensor, Tensor]:
    """Run ``cell`` over ``x`` ``(B, T, input)``: all states ``(B, T, hidden)`` and the last ``(B, hidden)``.

    The input half of every step is one matmul over the whole sequence; only the
    recurrent half runs step by step.
    """
    b, t, _ = x.shape
    if h is None:
        h = Tensor.zeros(b, cell.hidden_size, dtype=cell.weight_ih.dtype, device=x.device)
    gi = cell.input_gates(x)  # (B, T, gates * hidden)
    states = []
    for i in range(t):
        h = cell.step(gi[:, i], h)  # (B, hidden)
        states.append(h)
    return stack(states, axis=1), h
