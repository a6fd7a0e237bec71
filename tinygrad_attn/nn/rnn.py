"""Recurrent cells and layers with PyTorch's equations, weight names and layouts.

``weight_ih`` is ``(gates * hidden, input)`` and ``weight_hh`` ``(gates * hidden, hidden)``,
gates stacked in PyTorch's order (GRU: reset, update, new; LSTM: input, forget, cell,
output), so state dicts match ``nn.RNNCell`` / ``nn.GRUCell`` / ``nn.LSTMCell``, and the
layers :class:`RNN`, :class:`GRU`, :class:`LSTM` name theirs ``weight_ih_l{k}`` (and
``..._reverse`` for the backward direction) as ``nn.RNN`` and its kin do.

Each recurrence is written once, as a function of the two gate pre-activations
(``rnn_update``, ``gru_update``, ``lstm_update``); the cells and the layers both call it.
The input half of a step has no recurrence, so a whole sequence goes through it in one
matmul (``input_gates``); only the hidden half runs step by step.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import functional as F
from .._tensor import InvalidArgumentError, Tensor, cat, stack
from ..random import host_generator
from .module import Module, Parameter, _place


def _uniform(shape: tuple[int, ...], bound: float) -> Parameter:
    return Parameter(host_generator().uniform(-bound, bound, shape).astype(np.float32))


# -- the recurrences, on the pre-activations gi = W_ih x + b_ih, gh = W_hh h + b_hh -----------
def rnn_update(gi: Tensor, gh: Tensor, nonlinearity: str = "tanh") -> Tensor:
    """Elman: ``h' = tanh(gi + gh)`` (or ``relu``)."""
    a = gi + gh
    return a.tanh() if nonlinearity == "tanh" else a.relu()


def gru_update(gi: Tensor, gh: Tensor, h: Tensor) -> Tensor:
    """GRU (Cho et al., 2014), PyTorch's form, gate blocks r, z, n along the last axis::

    r = sigmoid(i_r + h_r);  z = sigmoid(i_z + h_z);  n = tanh(i_n + r * h_n)
    h' = (1 - z) * n + z * h
    """
    n_h = h.shape[-1]
    i_r, i_z, i_n = gi[..., :n_h], gi[..., n_h : 2 * n_h], gi[..., 2 * n_h :]
    h_r, h_z, h_n = gh[..., :n_h], gh[..., n_h : 2 * n_h], gh[..., 2 * n_h :]
    r = (i_r + h_r).sigmoid()
    z = (i_z + h_z).sigmoid()
    n = (i_n + r * h_n).tanh()
    return n + z * (h - n)  # = (1 - z) * n + z * h, one op fewer


def lstm_update(gi: Tensor, gh: Tensor, c: Tensor) -> tuple[Tensor, Tensor]:
    """LSTM (Hochreiter & Schmidhuber, 1997), gate blocks i, f, g, o along the last axis::

    c' = sigmoid(f) * c + sigmoid(i) * tanh(g);  h' = sigmoid(o) * tanh(c')
    """
    a = gi + gh  # (..., 4h)
    n_h = c.shape[-1]
    i, f = a[..., :n_h].sigmoid(), a[..., n_h : 2 * n_h].sigmoid()
    g, o = a[..., 2 * n_h : 3 * n_h].tanh(), a[..., 3 * n_h :].sigmoid()
    c = f * c + i * g
    return o * c.tanh(), c


_NONLINEARITIES = ("tanh", "relu")


def _check_nonlinearity(owner: str, nonlinearity: str) -> None:
    if nonlinearity not in _NONLINEARITIES:
        raise ValueError(f"{owner}: nonlinearity must be 'tanh' or 'relu', got {nonlinearity!r}")


# -- cells: one step --------------------------------------------------------------------------
class _Cell(Module):
    """Shared parameters and plumbing of the cells; ``gates`` blocks of ``hidden_size`` rows."""

    gates = 1

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device: Any = None,
                 dtype: Any = None) -> None:  # fmt: skip
        super().__init__()
        self.input_size, self.hidden_size = input_size, hidden_size
        k = 1.0 / math.sqrt(hidden_size)  # PyTorch's init: all uniform in +-1/sqrt(hidden)
        g = self.gates * hidden_size
        self.weight_ih = _uniform((g, input_size), k)
        self.weight_hh = _uniform((g, hidden_size), k)
        self.bias_ih = _uniform((g,), k) if bias else None
        self.bias_hh = _uniform((g,), k) if bias else None
        _place(self, device, dtype)

    def input_gates(self, x: Tensor) -> Tensor:
        """``x @ W_ih.T + b_ih`` for ``x`` ``(..., input)``: ``(..., gates * hidden)``."""
        if x.shape[-1:] != (self.input_size,):
            raise ValueError(f"{type(self).__name__}({self.input_size}, {self.hidden_size}): input of shape "
                             f"{x.shape} must end in {self.input_size}")  # fmt: skip
        gi = x @ self.weight_ih.mT
        return gi + self.bias_ih if self.bias_ih is not None else gi

    def _hidden_gates(self, h: Tensor) -> Tensor:
        gh = h @ self.weight_hh.mT  # (B, gates * hidden)
        return gh + self.bias_hh if self.bias_hh is not None else gh

    def step(self, gi: Tensor, h: Any) -> Any:  # pragma: no cover - abstract
        raise NotImplementedError

    def _state(self, x: Tensor, h: Tensor | None, what: str = "hidden state") -> Tensor:
        want = x.shape[:-1] + (self.hidden_size,)
        if h is None:
            return Tensor.zeros(*want, dtype=self.weight_ih.dtype, device=x.device)
        if h.shape != want:
            raise ValueError(f"{type(self).__name__}: {what} of shape {h.shape}, expected {want} for an input "
                             f"of shape {x.shape}")  # fmt: skip
        return h

    def forward(self, x: Tensor, hx: Tensor | None = None, h: Tensor | None = None) -> Tensor:
        """One step: ``x`` ``(B, input)`` or ``(input,)``, ``hx`` (also ``h=``) ``(B, hidden)``
        or ``(hidden,)``, zeros if None -> the new hidden state."""
        self._check_rank(x)
        return self.step(self.input_gates(x), self._state(x, hx if hx is not None else h))

    def _check_rank(self, x: Tensor) -> None:
        if x.ndim not in (1, 2):
            raise ValueError(f"{type(self).__name__}: input must be (B, {self.input_size}) or ({self.input_size},), "
                             f"got {x.shape}")  # fmt: skip

    def extra_repr(self) -> str:
        return f"{self.input_size}, {self.hidden_size}"


class RNNCell(_Cell):
    """Elman cell: ``h' = tanh(W_ih x + b_ih + W_hh h + b_hh)`` (``nonlinearity="relu"``: relu).

    >>> RNNCell(3, 5)(Tensor.randn(2, 3)).shape
    (2, 5)
    """

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, nonlinearity: str = "tanh",
                 device: Any = None, dtype: Any = None) -> None:  # fmt: skip
        _check_nonlinearity("RNNCell", nonlinearity)
        super().__init__(input_size, hidden_size, bias, device, dtype)
        self.nonlinearity = nonlinearity

    def step(self, gi: Tensor, h: Tensor) -> Tensor:
        return rnn_update(gi, self._hidden_gates(h), self.nonlinearity)


class GRUCell(_Cell):
    """Gated recurrent unit, PyTorch's form (see :func:`gru_update`).

    >>> GRUCell(3, 5)(Tensor.randn(2, 3)).shape
    (2, 5)
    """

    gates = 3

    def step(self, gi: Tensor, h: Tensor) -> Tensor:
        return gru_update(gi, self._hidden_gates(h), h)


class LSTMCell(_Cell):
    """Long short-term memory cell (see :func:`lstm_update`); the state is ``(h, c)``.

    >>> h, c = LSTMCell(3, 5)(Tensor.randn(2, 3))
    >>> h.shape, c.shape
    ((2, 5), (2, 5))
    """

    gates = 4

    def step(self, gi: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        return lstm_update(gi, self._hidden_gates(h), c)

    def forward(self, x: Tensor, hx: tuple[Tensor, Tensor] | None = None) -> tuple[Tensor, Tensor]:  # type: ignore[override]
        """One step: ``x`` ``(B, input)`` or ``(input,)``, ``hx = (h, c)`` (zeros if None) -> ``(h', c')``."""
        self._check_rank(x)
        h, c = (None, None) if hx is None else hx
        return self.step(self.input_gates(x), (self._state(x, h), self._state(x, c, "cell state")))


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


# -- layers: whole sequences, stacked and bidirectional ------------------------------------------
class _RNNBase(Module):
    """Parameters, layout and the time loop shared by :class:`RNN`, :class:`GRU`, :class:`LSTM`.

    Subclasses set ``gates`` and ``_update(gi, gh, state) -> state`` (state ``h``, or
    ``(h, c)`` for the LSTM).
    """

    gates = 1
    _pair = False  # the LSTM's state is (h, c)

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False, device: Any = None,
                 dtype: Any = None) -> None:  # fmt: skip
        super().__init__()
        name = type(self).__name__
        if num_layers < 1 or hidden_size < 1:
            raise ValueError(f"{name}: num_layers ({num_layers}) and hidden_size ({hidden_size}) must be positive")
        if not 0.0 <= dropout <= 1.0:
            raise ValueError(f"{name}: dropout must be in [0, 1], got {dropout}")
        self.input_size, self.hidden_size, self.num_layers = input_size, hidden_size, num_layers
        self.bias, self.batch_first, self.dropout, self.bidirectional = bias, batch_first, dropout, bidirectional
        self.num_directions = 2 if bidirectional else 1
        k = 1.0 / math.sqrt(hidden_size)  # PyTorch's init: all uniform in +-1/sqrt(hidden)
        g = self.gates * hidden_size
        for layer in range(num_layers):
            n_in = input_size if layer == 0 else hidden_size * self.num_directions
            for sfx in self._suffixes(layer):
                setattr(self, f"weight_ih{sfx}", _uniform((g, n_in), k))
                setattr(self, f"weight_hh{sfx}", _uniform((g, hidden_size), k))
                if bias:
                    setattr(self, f"bias_ih{sfx}", _uniform((g,), k))
                    setattr(self, f"bias_hh{sfx}", _uniform((g,), k))
        _place(self, device, dtype)

    def _suffixes(self, layer: int) -> list[str]:
        return [f"_l{layer}", f"_l{layer}_reverse"][: self.num_directions]

    def _update(self, gi: Tensor, gh: Tensor, state: Any) -> Any:  # pragma: no cover - abstract
        raise NotImplementedError

    def _initial(self, x: Tensor, hx: Any, unbatched: bool) -> list[Any]:
        """One state per (layer, direction), from ``hx`` ``(L*D, B, H)`` or zeros."""
        n, b = self.num_layers * self.num_directions, x.shape[1]
        want = (n, self.hidden_size) if unbatched else (n, b, self.hidden_size)
        parts = list(hx) if self._pair and hx is not None else [hx] * (2 if self._pair else 1)
        if len(parts) != (2 if self._pair else 1):
            raise ValueError(f"{type(self).__name__}: hx must be a pair (h_0, c_0)")
        states = []
        for part, what in zip(parts, ("h_0", "c_0")):
            if part is None:
                part = Tensor.zeros(n, b, self.hidden_size, dtype=x.dtype, device=x.device)
            elif part.shape != want:
                raise ValueError(f"{type(self).__name__}: {what} of shape {part.shape}, expected {want} for an "
                                 f"input of shape {x.shape if not unbatched else (x.shape[0], x.shape[2])}")  # fmt: skip
            elif unbatched:
                part = part.unsqueeze(1)  # (L*D, 1, H)
            states.append([part[i] for i in range(n)])
        return list(zip(*states)) if self._pair else states[0]

    def forward(self, input: Tensor, hx: Any = None) -> tuple[Tensor, Any]:
        """``input`` ``(T, B, input_size)`` (``(B, T, input_size)`` with ``batch_first``, or
        unbatched ``(T, input_size)``) -> ``(output, h_n)``: ``output`` ``(T, B, D * hidden)``
        in the input's layout, ``h_n`` ``(num_layers * D, B, hidden)``; the LSTM's second
        item is ``(h_n, c_n)``. ``hx`` as ``h_n``; zeros if None."""
        name = type(self).__name__
        if input.ndim not in (2, 3) or input.shape[-1] != self.input_size:
            raise ValueError(f"{name}({self.input_size}, {self.hidden_size}): input of shape {input.shape} must be "
                             f"(T, B, {self.input_size}), (B, T, {self.input_size}) with batch_first, or unbatched "
                             f"(T, {self.input_size})")  # fmt: skip
        unbatched = input.ndim == 2
        if unbatched:
            x = input.unsqueeze(1)
        else:
            x = input.transpose(0, 1) if self.batch_first else input  # (T, B, in)
        states = self._initial(x, hx, unbatched)
        t_len = x.shape[0]
        if t_len == 0:  # (as PyTorch: there is no step to run, and no last state to return)
            raise InvalidArgumentError(f"{type(self).__name__}: the input has sequence length 0 (shape {x.shape}); "
                                       "give at least one step")  # fmt: skip
        last = []
        for layer in range(self.num_layers):
            outs = []
            for d, sfx in enumerate(self._suffixes(layer)):
                w_ih, w_hh = getattr(self, f"weight_ih{sfx}"), getattr(self, f"weight_hh{sfx}")
                b_ih, b_hh = getattr(self, f"bias_ih{sfx}", None), getattr(self, f"bias_hh{sfx}", None)
                gi = F.linear(x, w_ih, b_ih)  # (T, B, gates * H): the whole sequence at once
                state = states[layer * self.num_directions + d]
                seq: list[Any] = [None] * t_len
                for t in reversed(range(t_len)) if d else range(t_len):
                    h = state[0] if self._pair else state
                    state = self._update(gi[t], F.linear(h, w_hh, b_hh), state)
                    seq[t] = state[0] if self._pair else state  # (B, H)
                outs.append(stack(seq, axis=0))  # (T, B, H)
                last.append(state)
            x = outs[0] if len(outs) == 1 else cat(outs, axis=-1)  # (T, B, D * H)
            if self.dropout and layer < self.num_layers - 1:
                x = F.dropout(x, self.dropout, self.training)  # between layers, as PyTorch
        if unbatched:
            out = x.squeeze(1)
        else:
            out = x.transpose(0, 1) if self.batch_first else x

        def final(states: list[Tensor]) -> Tensor:
            s = stack(states, axis=0)  # (L * D, B, H)
            return s.squeeze(1) if unbatched else s

        if self._pair:
            return out, (final([s[0] for s in last]), final([s[1] for s in last]))
        return out, final(last)

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.batch_first:
            s += ", batch_first=True"
        if self.dropout:
            s += f", dropout={self.dropout}"
        if self.bidirectional:
            s += ", bidirectional=True"
        return s


class RNN(_RNNBase):
    """A stack of Elman layers over a sequence, as PyTorch's ``nn.RNN``.

    >>> out, h_n = RNN(3, 5, num_layers=2)(Tensor.randn(7, 2, 3))
    >>> out.shape, h_n.shape
    ((7, 2, 5), (2, 2, 5))
    """

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, nonlinearity: str = "tanh",
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0,
                 bidirectional: bool = False, device: Any = None, dtype: Any = None) -> None:  # fmt: skip
        _check_nonlinearity("RNN", nonlinearity)
        super().__init__(input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional, device, dtype)
        self.nonlinearity = nonlinearity

    def _update(self, gi: Tensor, gh: Tensor, h: Tensor) -> Tensor:
        return rnn_update(gi, gh, self.nonlinearity)


class GRU(_RNNBase):
    """A stack of GRU layers over a sequence, as PyTorch's ``nn.GRU``."""

    gates = 3

    def _update(self, gi: Tensor, gh: Tensor, h: Tensor) -> Tensor:
        return gru_update(gi, gh, h)


class LSTM(_RNNBase):
    """A stack of LSTM layers over a sequence, as PyTorch's ``nn.LSTM`` (no ``proj_size``);
    returns ``(output, (h_n, c_n))``."""

    gates = 4
    _pair = True

    def _update(self, gi: Tensor, gh: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        return lstm_update(gi, gh, state[1])
