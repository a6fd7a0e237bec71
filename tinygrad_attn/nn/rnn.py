"""Recurrent cells and layers with PyTorch's equations, weight names and layouts.

``weight_ih`` is ``(gates * hidden, input)`` and ``weight_hh`` ``(gates * hidden, hidden)``,
gates stacked in PyTorch's order (GRU: reset, update, new; LSTM: input, forget, cell,
output), so state dicts match ``nn.RNNCell`` / ``nn.GRUCell`` / ``nn.LSTMCell``, and the
layers :class:`RNN`, :class:`GRU`, :class:`LSTM` name theirs ``weight_ih_l{k}`` (and
``..._reverse`` for the backward direction) as ``nn.RNN`` and its kin do. An LSTM with
``proj_size=P`` adds ``weight_hr_l{k}`` ``(P, hidden)``, and its ``weight_hh`` is ``(4 * hidden, P)``.

A layer's whole sequence in one direction, and a cell's step, is one node: the
``recurrence`` composite, whose fused form (:mod:`tinygrad_attn.ops.recurrent`) runs the
steps on preallocated buffers with a hand-written backward through time. Inside
``tga.decompose()`` it opens into its definition, :func:`recurrence_reference`, one
primitive op per gate and step, with each recurrence written once as a function of the
two gate pre-activations (``rnn_update``, ``gru_update``, ``lstm_update``). The input
half of a step has no recurrence, so in both forms a whole sequence goes through it in
one matmul; only the hidden half runs step by step.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import functional as F
from ..engine.composite import composite
from ..functional.checks import same_dtype
from ..ops import recurrent
from ..random import transforms as rt
from ..tensors._tensor import InvalidArgumentError, Tensor, cat, stack, where
from .layers import _float_dtype, init_draws
from .module import Module, Parameter, _place
from .utils.rnn import PackedSequence, _host_ints, _lengths_of, _pack_padded, _pad_packed


def _uniform(shape: tuple[int, ...], bound: float, dtype: Any = None) -> Parameter:
    """PyTorch's recurrent init, ``init.uniform_(w, -bound, bound)`` for each parameter in order."""
    return Parameter(init_draws(rt.uniform, shape, _float_dtype(dtype), None, -bound, bound))


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


def lstm_update(gi: Tensor, gh: Tensor, c: Tensor, w_hr: Tensor | None = None) -> tuple[Tensor, Tensor]:
    """LSTM (Hochreiter & Schmidhuber, 1997), gate blocks i, f, g, o along the last axis::

    c' = sigmoid(f) * c + sigmoid(i) * tanh(g);  h' = sigmoid(o) * tanh(c')

    With a projection ``w_hr`` ``(P, H)`` (Sak et al., 2014; PyTorch's ``proj_size``) the
    hidden state is ``h' = W_hr (sigmoid(o) * tanh(c'))``, of size ``P``; ``c'`` keeps ``H``.
    """
    a = gi + gh  # (..., 4h)
    n_h = c.shape[-1]
    i, f = a[..., :n_h].sigmoid(), a[..., n_h : 2 * n_h].sigmoid()
    g, o = a[..., 2 * n_h : 3 * n_h].tanh(), a[..., 3 * n_h :].sigmoid()
    c = f * c + i * g
    h = o * c.tanh()
    return (h if w_hr is None else F.linear(h, w_hr)), c


# -- one layer and direction (or one cell step) as one node --------------------------------------
def _reference_update(mode: str, gi: Tensor, gh: Tensor, h: Tensor, c: Tensor | None,
                      w_hr: Tensor | None = None) -> Any:  # fmt: skip
    if mode == "gru":
        return gru_update(gi, gh, h)
    if mode == "lstm":
        return lstm_update(gi, gh, c, w_hr)
    return rnn_update(gi, gh, "relu" if mode == "rnn_relu" else "tanh")


def recurrence_reference(mode: str, x: Tensor, h0: Tensor | None, c0: Tensor | None, w_ih: Tensor, w_hh: Tensor,
                         b_ih: Tensor | None, b_hh: Tensor | None, reverse: bool = False, batch_first: bool = False,
                         cell: bool = False, lengths: tuple[int, ...] | None = None,
                         w_hr: Tensor | None = None) -> Any:  # fmt: skip
    """The definition of :func:`recurrence` in primitive ops, step by step."""
    # h has w_hh's columns (the projection's size P, where there is one); c has H = gates / 4
    n_c = w_hh.shape[0] // 4 if mode == "lstm" else w_hh.shape[1]
    if cell:  # x (B, in) or (in,)
        h = h0 if h0 is not None else Tensor.zeros(*x.shape[:-1], w_hh.shape[1], dtype=x.dtype, device=x.device)
        c = c0 if c0 is not None else Tensor.zeros(*x.shape[:-1], n_c, dtype=x.dtype, device=x.device)
        new = _reference_update(mode, F.linear(x, w_ih, b_ih), F.linear(h, w_hh, b_hh), h, c, w_hr)
        if mode == "lstm":
            return stack(list(new), axis=0) if w_hr is None else new
        return new
    xt = x.transpose(0, 1) if batch_first else x  # (T, B, in)
    t_len, batch = xt.shape[0], xt.shape[1]
    h = h0 if h0 is not None else Tensor.zeros(batch, w_hh.shape[1], dtype=x.dtype, device=x.device)
    c = c0 if c0 is not None else Tensor.zeros(batch, n_c, dtype=x.dtype, device=x.device)
    gi = F.linear(xt, w_ih, b_ih)  # (T, B, gates * H): the whole sequence at once
    hs: list[Any] = [None] * t_len
    cs: list[Any] = [None] * t_len
    on = None
    if lengths is not None:  # on[t]: (B, 1), whether step t is within each sequence
        on = np.arange(t_len)[:, None] < np.asarray(lengths, dtype=np.int64)[None, :]
    for t in reversed(range(t_len)) if reverse else range(t_len):
        new = _reference_update(mode, gi[t], F.linear(h, w_hh, b_hh), h, c, w_hr)
        if on is not None:  # past a sequence's end: its state carried, its outputs zero
            m = Tensor(on[t][:, None], device=x.device)
            if mode == "lstm":
                cs[t] = where(m, new[1], 0.0)
                new = (where(m, new[0], h), where(m, new[1], c))
                hs[t] = where(m, new[0], 0.0)
                h, c = new
            else:
                hs[t] = where(m, new, 0.0)
                h = where(m, new, h)
            continue
        if mode == "lstm":
            h, c = new
            cs[t] = c
        else:
            h = new
        hs[t] = h
    out = stack(hs, axis=0)  # (T, B, H)
    if mode == "lstm" and w_hr is not None:  # h (T, B, P) and c (T, B, H): a pair, not one stack
        cs_all = stack(cs, axis=0)
        return (out.transpose(0, 1), cs_all.transpose(0, 1)) if batch_first else (out, cs_all)
    if mode == "lstm":
        out = stack([out, stack(cs, axis=0)], axis=0)  # (2, T, B, H)
    if batch_first:
        out = out.transpose(1, 2) if mode == "lstm" else out.transpose(0, 1)
    return out


def _recurrence_fused(mode: str, x: Tensor, h0: Tensor | None, c0: Tensor | None, w_ih: Tensor, w_hh: Tensor,
                      b_ih: Tensor | None, b_hh: Tensor | None, reverse: bool = False, batch_first: bool = False,
                      cell: bool = False, lengths: tuple[int, ...] | None = None,
                      w_hr: Tensor | None = None) -> Tensor | None:  # fmt: skip
    # (the definition's products check these as PyTorch's do: a state or weight of another dtype is refused)
    same_dtype(f"{mode}_cell" if cell else mode, x, ("hx", h0), ("cx", c0), ("weight_ih", w_ih),
               ("weight_hh", w_hh), ("bias_ih", b_ih), ("bias_hh", b_hh))  # fmt: skip
    if w_hr is not None:  # the fused LSTM has no projection: the definition runs
        return None
    args = (reverse, batch_first, cell) if lengths is None else (reverse, batch_first, cell, lengths)
    return recurrent.RECURRENCES[mode].apply(x, h0, c0, w_ih, w_hh, b_ih, b_hh, args=args)


@composite("recurrence", _recurrence_fused)
def recurrence(mode: str, x: Tensor, h0: Tensor | None, c0: Tensor | None, w_ih: Tensor, w_hh: Tensor,
               b_ih: Tensor | None, b_hh: Tensor | None, reverse: bool = False, batch_first: bool = False,
               cell: bool = False, lengths: tuple[int, ...] | None = None,
               w_hr: Tensor | None = None) -> Any:  # fmt: skip
    """One recurrent layer in one direction over a whole sequence, or one cell step.

    ``mode``: ``"rnn_tanh"``, ``"rnn_relu"``, ``"gru"`` or ``"lstm"``. Layer: ``x``
    ``(T, B, in)`` (``(B, T, in)`` with ``batch_first``) -> every hidden state, ``(T, B, H)``
    in the input's layout; ``reverse`` runs from the last step to the first. Cell
    (``cell=True``): ``x`` ``(B, in)`` or ``(in,)`` -> the next state. The LSTM's result
    stacks the cell states under the hidden ones (a leading axis of 2). ``h0``/``c0``:
    ``(B, H)`` (``(H,)`` for an unbatched cell) or None for zeros. ``lengths`` (layer form: a
    tuple of ``B`` ints, each at least 1): sequence ``b`` stops after ``lengths[b]`` steps; later
    steps carry its state unchanged and output zeros, and ``reverse`` starts at its last step.
    ``w_hr`` (LSTM only, ``(P, H)``): the projection of PyTorch's ``proj_size``; ``h`` (and
    ``h0``, and ``w_hh``'s columns) has size ``P``, ``c`` keeps ``H``, and the result is the
    pair ``(h, c)`` of all states (they differ in size, so are not stacked). It runs as its
    definition: the fused op has no projection.
    """
    return recurrence_reference(mode, x, h0, c0, w_ih, w_hh, b_ih, b_hh, reverse, batch_first, cell, lengths, w_hr)


_NONLINEARITIES = ("tanh", "relu")


def _check_nonlinearity(owner: str, nonlinearity: str) -> None:
    if nonlinearity not in _NONLINEARITIES:
        raise ValueError(f"{owner}: nonlinearity must be 'tanh' or 'relu', got {nonlinearity!r}")


# -- cells: one step --------------------------------------------------------------------------
class RNNCellBase(Module):
    """PyTorch's ``nn.RNNCellBase(input_size, hidden_size, bias, num_chunks, device=None,
    dtype=None)``, the base of :class:`RNNCell`, :class:`GRUCell` and :class:`LSTMCell`: their
    parameters (``num_chunks`` blocks of ``hidden_size`` rows) and plumbing."""

    gates = 1
    mode = "rnn_tanh"

    def __init__(self, input_size: int, hidden_size: int, bias: bool, num_chunks: int, device: Any = None,
                 dtype: Any = None) -> None:  # fmt: skip
        super().__init__()
        self.input_size, self.hidden_size, self.bias = input_size, hidden_size, bias
        self.gates = num_chunks
        k = 1.0 / math.sqrt(hidden_size)  # PyTorch's init: all uniform in +-1/sqrt(hidden)
        g = self.gates * hidden_size
        self.weight_ih = _uniform((g, input_size), k, dtype)
        self.weight_hh = _uniform((g, hidden_size), k, dtype)
        self.bias_ih = _uniform((g,), k, dtype) if bias else None
        self.bias_hh = _uniform((g,), k, dtype) if bias else None
        _place(self, device, dtype)

    def _hidden_gates(self, h: Tensor) -> Tensor:
        gh = h @ self.weight_hh.mT  # (B, gates * hidden)
        return gh + self.bias_hh if self.bias_hh is not None else gh

    def step(self, gi: Tensor, h: Any) -> Any:  # pragma: no cover - abstract
        raise NotImplementedError

    def _state(self, x: Tensor, h: Tensor | None, what: str = "hidden state", zeros: bool = True) -> Any:
        want = tuple(x.shape[:-1]) + (self.hidden_size,)
        if h is None:
            return Tensor.zeros(want, dtype=self.weight_ih.dtype, device=x.device) if zeros else None
        if h.shape != want:  # (both a ValueError and PyTorch's RuntimeError)
            raise InvalidArgumentError(f"{type(self).__name__}: {what} of shape {tuple(h.shape)}, expected {want} for an "
                                       f"input of shape {tuple(x.shape)}")  # fmt: skip
        return h

    def _step_forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        """One step: ``input`` ``(B, input_size)`` or ``(input_size,)``, ``hx`` ``(B, hidden)``
        or ``(hidden,)``, zeros if None -> the new hidden state."""
        self._check_rank(input)
        self._check_input(input)
        state = self._state(input, hx, zeros=False)
        return recurrence(self.mode, input, state, None, self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh,
                          cell=True)  # fmt: skip

    def _check_input(self, x: Tensor) -> None:
        if x.shape[-1:] != (self.input_size,):
            raise InvalidArgumentError(f"{type(self).__name__}({self.input_size}, {self.hidden_size}): input has "
                                       f"inconsistent input_size: got {x.shape[-1] if x.ndim else None} expected "
                                       f"{self.input_size} (input of shape {tuple(x.shape)})")  # fmt: skip

    def _check_rank(self, x: Tensor) -> None:
        if x.ndim not in (1, 2):
            raise InvalidArgumentError(f"{type(self).__name__}: Expected input to be 1D or 2D, got {x.ndim}D instead "
                                       f"(input must be (B, {self.input_size}) or ({self.input_size},))")  # fmt: skip

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if not self.bias:
            s += ", bias=False"
        if getattr(self, "nonlinearity", "tanh") != "tanh":
            s += f", nonlinearity={self.nonlinearity}"
        return s


class RNNCell(RNNCellBase):
    """Elman cell: ``h' = tanh(W_ih x + b_ih + W_hh h + b_hh)`` (``nonlinearity="relu"``: relu).

    >>> RNNCell(3, 5)(Tensor.randn(2, 3)).shape
    (2, 5)
    """

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, nonlinearity: str = "tanh",
                 device: Any = None, dtype: Any = None) -> None:  # fmt: skip
        _check_nonlinearity("RNNCell", nonlinearity)
        super().__init__(input_size, hidden_size, bias, 1, device, dtype)
        self.nonlinearity = nonlinearity
        self.mode = "rnn_" + nonlinearity

    def step(self, gi: Tensor, h: Tensor) -> Tensor:
        return rnn_update(gi, self._hidden_gates(h), self.nonlinearity)

    forward = RNNCellBase._step_forward  # (the base has no forward of its own, as PyTorch's)


class GRUCell(RNNCellBase):
    """Gated recurrent unit, PyTorch's form (see :func:`gru_update`).

    >>> GRUCell(3, 5)(Tensor.randn(2, 3)).shape
    (2, 5)
    """

    gates = 3
    mode = "gru"

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device: Any = None,
                 dtype: Any = None) -> None:  # fmt: skip
        super().__init__(input_size, hidden_size, bias, 3, device, dtype)

    def step(self, gi: Tensor, h: Tensor) -> Tensor:
        return gru_update(gi, self._hidden_gates(h), h)

    forward = RNNCellBase._step_forward


class LSTMCell(RNNCellBase):
    """Long short-term memory cell (see :func:`lstm_update`); the state is ``(h, c)``.

    >>> h, c = LSTMCell(3, 5)(Tensor.randn(2, 3))
    >>> h.shape, c.shape
    ((2, 5), (2, 5))
    """

    gates = 4
    mode = "lstm"

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device: Any = None,
                 dtype: Any = None) -> None:  # fmt: skip
        super().__init__(input_size, hidden_size, bias, 4, device, dtype)

    def step(self, gi: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        h, c = state
        return lstm_update(gi, self._hidden_gates(h), c)

    def forward(self, input: Tensor, hx: tuple[Tensor, Tensor] | None = None) -> tuple[Tensor, Tensor]:  # type: ignore[override]
        """One step: ``input`` ``(B, input_size)`` or ``(input_size,)``, ``hx = (h, c)`` (zeros if None) -> ``(h', c')``."""
        self._check_rank(input)
        self._check_input(input)
        h, c = (None, None) if hx is None else hx
        h, c = self._state(input, h, zeros=False), self._state(input, c, "cell state", zeros=False)
        hc = recurrence("lstm", input, h, c, self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh, cell=True)
        return hc[0], hc[1]


def unroll(cell: RNNCellBase, x: Tensor, h: Tensor | None = None) -> tuple[Tensor, Tensor]:
    """Run ``cell`` over ``x`` ``(B, T, input)``: all states ``(B, T, hidden)`` and the last ``(B, hidden)``.

    One node for the whole sequence (a :func:`recurrence`): the input half of every
    step is one matmul; only the recurrent half runs step by step. (An LSTM cell starts
    from ``c = 0``; its hidden states are returned.)
    """
    if x.ndim != 3:
        raise ValueError(f"unroll: input must be (B, T, {cell.input_size}), got {tuple(x.shape)}")
    cell._check_input(x)
    if h is not None and h.shape != (x.shape[0], cell.hidden_size):
        raise ValueError(f"unroll: hidden state of shape {tuple(h.shape)}, expected {(x.shape[0], cell.hidden_size)}")
    seq = recurrence(cell.mode, x, h, None, cell.weight_ih, cell.weight_hh, cell.bias_ih, cell.bias_hh,
                     batch_first=True)  # fmt: skip
    if cell.mode == "lstm":
        seq = seq[0]
    return seq, seq[:, -1]


# -- layers: whole sequences, stacked and bidirectional ------------------------------------------
#: PyTorch's ``mode`` names: (gates, the LSTM's (h, c) state, our :func:`recurrence` mode)
_MODES = {"RNN_TANH": (1, False, "rnn_tanh"), "RNN_RELU": (1, False, "rnn_relu"), "GRU": (3, False, "gru"),
          "LSTM": (4, True, "lstm")}  # fmt: skip


class RNNBase(Module):
    """PyTorch's ``nn.RNNBase(mode, input_size, hidden_size, num_layers=1, bias=True,
    batch_first=False, dropout=0.0, bidirectional=False, proj_size=0, device=None, dtype=None)``:
    parameters, layout and the time loop shared by :class:`RNN`, :class:`GRU`, :class:`LSTM`.

    ``mode`` (``"LSTM"``, ``"GRU"``, ``"RNN_TANH"``, ``"RNN_RELU"``) sets the gates and the
    :func:`recurrence` each layer and direction runs as one node.
    """

    gates = 1
    _pair = False  # the LSTM's state is (h, c)
    _recurrence_mode = "rnn_tanh"

    def __init__(self, mode: str, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False, proj_size: int = 0,
                 device: Any = None, dtype: Any = None) -> None:  # fmt: skip
        super().__init__()
        name = type(self).__name__
        if not isinstance(dropout, (int, float)) or isinstance(dropout, bool) or not 0 <= dropout <= 1:
            raise ValueError("dropout should be a number in range [0, 1] representing the probability of an element "
                             f"being zeroed ({name} got {dropout!r})")  # fmt: skip
        for what, v in (("bias", bias), ("batch_first", batch_first)):
            if not isinstance(v, bool):
                raise TypeError(f"{what} should be of type bool, got: {type(v).__name__}")
        for what, v in (("input_size", input_size), ("hidden_size", hidden_size)):
            if not isinstance(v, int) or isinstance(v, bool):
                raise TypeError(f"{what} should be of type int, got: {type(v).__name__}")
            if v <= 0:
                raise ValueError(f"{what} must be greater than zero")
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if mode not in _MODES:
            raise ValueError(f"Unrecognized RNN mode: {mode}")
        if proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        self.mode = mode
        self.gates, self._pair, self._recurrence_mode = _MODES[mode]
        self.proj_size = proj_size
        self.input_size, self.hidden_size, self.num_layers = input_size, hidden_size, num_layers
        self.bias, self.batch_first, self.dropout, self.bidirectional = bias, batch_first, dropout, bidirectional
        self.num_directions = 2 if bidirectional else 1
        # PyTorch's init: all uniform in +-1/sqrt(hidden), drawn in the order they are made
        k = 1.0 / math.sqrt(hidden_size)
        g = self.gates * hidden_size
        h_out = proj_size or hidden_size  # the hidden state's size: the projection's, if any
        self._flat_weights_names: list[str] = []
        self._all_weights: list[list[str]] = []
        for layer in range(num_layers):
            n_in = input_size if layer == 0 else h_out * self.num_directions
            for sfx in self._suffixes(layer):
                names = [f"weight_ih{sfx}", f"weight_hh{sfx}"]
                setattr(self, f"weight_ih{sfx}", _uniform((g, n_in), k, dtype))
                setattr(self, f"weight_hh{sfx}", _uniform((g, h_out), k, dtype))
                if bias:
                    setattr(self, f"bias_ih{sfx}", _uniform((g,), k, dtype))
                    setattr(self, f"bias_hh{sfx}", _uniform((g,), k, dtype))
                    names += [f"bias_ih{sfx}", f"bias_hh{sfx}"]
                if proj_size:
                    setattr(self, f"weight_hr{sfx}", _uniform((proj_size, hidden_size), k, dtype))
                    names.append(f"weight_hr{sfx}")
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        _place(self, device, dtype)

    @property
    def all_weights(self) -> list[list[Parameter]]:
        """Each layer and direction's parameters, in PyTorch's order (``weight_ih``,
        ``weight_hh``, the biases, ``weight_hr``)."""
        return [[getattr(self, n) for n in names] for names in self._all_weights]

    def flatten_parameters(self) -> None:
        """Nothing to do: PyTorch packs the weights into one cuDNN buffer here; this library
        calls no cuDNN, and its layers read each weight where it is."""

    def _suffixes(self, layer: int) -> list[str]:
        return [f"_l{layer}", f"_l{layer}_reverse"][: self.num_directions]

    def _initial(self, x: Tensor, hx: Any, unbatched: bool, b: int) -> list[Any]:
        """One state per (layer, direction), from ``hx`` ``(L*D, B, H)``, or None (zeros)."""
        n = self.num_layers * self.num_directions
        parts = list(hx) if self._pair and hx is not None else [hx] * (2 if self._pair else 1)
        if len(parts) != (2 if self._pair else 1):
            raise ValueError(f"{type(self).__name__}: hx must be a pair (h_0, c_0)")
        states = []
        # h_0 has the projection's size where there is one; c_0 always hidden_size
        for part, what, size in zip(parts, ("h_0", "c_0"), (self.proj_size or self.hidden_size, self.hidden_size)):
            want = (n, size) if unbatched else (n, b, size)
            if part is None:  # zeros, made inside the op
                states.append([None] * n)
                continue
            if part.shape != want:  # (both a ValueError and PyTorch's RuntimeError)
                raise InvalidArgumentError(f"{type(self).__name__}: {what} of shape {tuple(part.shape)}, expected {want} for an "
                                 f"input of shape {x.shape if not unbatched else (x.shape[0], x.shape[2])}")  # fmt: skip
            elif unbatched:
                part = part.unsqueeze(1)  # (L*D, 1, H)
            states.append([part[i] for i in range(n)])
        return list(zip(*states)) if self._pair else states[0]

    def _sequence_forward(self, input: Tensor, hx: Any = None) -> tuple[Tensor, Any]:
        """``input`` ``(T, B, input_size)`` (``(B, T, input_size)`` with ``batch_first``, or
        unbatched ``(T, input_size)``) -> ``(output, h_n)``: ``output`` ``(T, B, D * hidden)``
        in the input's layout, ``h_n`` ``(num_layers * D, B, hidden)``; the LSTM's second
        item is ``(h_n, c_n)`` (with ``proj_size``, ``output``'s and ``h_n``'s last size is
        the projection's, ``c_n``'s ``hidden_size``). ``hx`` as ``h_n``; zeros if None. A :class:`PackedSequence`
        input gives a packed output, and each sequence's ``h_n`` is its state at its own last
        step, as PyTorch's."""
        if self.proj_size and not self._pair:  # (PyTorch's RNNBase builds its weights, and has no forward)
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        weight = self.weight_ih_l0
        data = input.data if isinstance(input, PackedSequence) else input
        if isinstance(data, Tensor) and data.dtype != weight.dtype:  # (PyTorch's check: no silent promotion)
            raise ValueError(f"RNN input dtype ({data.dtype}) does not match weight dtype ({weight.dtype}). Convert "
                             "input to the same dtype as the weights.")  # fmt: skip
        if isinstance(input, PackedSequence):
            return self._forward_packed(input, hx)
        name = type(self).__name__
        if input.ndim not in (2, 3) or input.shape[-1] != self.input_size:
            raise InvalidArgumentError(
                f"{name}({self.input_size}, {self.hidden_size}): input of shape {tuple(input.shape)} must be "
                f"(T, B, {self.input_size}), (B, T, {self.input_size}) with batch_first, or unbatched "
                f"(T, {self.input_size})"
            )
        unbatched = input.ndim == 2
        # batch_first input stays (B, T, in): the op reads either layout.
        bf = self.batch_first and not unbatched
        x = input.unsqueeze(1) if unbatched else input  # (T, B, in), or (B, T, in) with batch_first
        t_len, b = (x.shape[1], x.shape[0]) if bf else (x.shape[0], x.shape[1])
        if t_len == 0:  # (as PyTorch: there is no step to run, and no last state to return)
            raise InvalidArgumentError(f"{type(self).__name__}: the input has sequence length 0 (shape {tuple(x.shape)}); "
                                       "give at least one step")  # fmt: skip
        states = self._initial(x, hx, unbatched, b)
        x, last = self._layers(x, states, bf, t_len)
        if unbatched:
            out = x.squeeze(1)
        else:
            out = x

        def final(states: list[Tensor]) -> Tensor:
            s = stack(states, axis=0)  # (L * D, B, H)
            return s.squeeze(1) if unbatched else s

        if self._pair:
            return out, (final([s[0] for s in last]), final([s[1] for s in last]))
        return out, final(last)

    def _layers(self, x: Tensor, states: list[Any], bf: bool, t_len: int,
                lengths: tuple[int, ...] | None = None) -> tuple[Tensor, list[Any]]:  # fmt: skip
        """Every layer and direction over ``x``: the last layer's output, and each (layer,
        direction)'s final state (with ``lengths``: at each sequence's own last step)."""
        last_step = None
        if lengths is not None:  # where each sequence's forward direction ends: (step, batch) indices
            last_step = (Tensor(np.asarray(lengths, dtype=np.int64) - 1, device=x.device),
                         Tensor(np.arange(len(lengths), dtype=np.int64), device=x.device))  # fmt: skip
            if bf:
                last_step = last_step[::-1]
        last = []
        for layer in range(self.num_layers):
            outs = []
            for d, sfx in enumerate(self._suffixes(layer)):
                w_ih, w_hh = getattr(self, f"weight_ih{sfx}"), getattr(self, f"weight_hh{sfx}")
                b_ih, b_hh = getattr(self, f"bias_ih{sfx}", None), getattr(self, f"bias_hh{sfx}", None)
                w_hr = getattr(self, f"weight_hr{sfx}", None)
                state = states[layer * self.num_directions + d]
                h0, c0 = state if self._pair else (state, None)
                seq = recurrence(self._mode(), x, h0, c0, w_ih, w_hh, b_ih, b_hh, reverse=bool(d), batch_first=bf,
                                 lengths=lengths, w_hr=w_hr)  # fmt: skip
                t_last = 0 if d else t_len - 1  # the step each direction ends at
                if self._pair:  # (2, T, B, H), or the pair (h, c) with a projection: hidden states, cell states
                    hs, cs = seq[0], seq[1]
                    if last_step is not None and not d:
                        last.append((hs[last_step], cs[last_step]))
                    else:
                        last.append((hs[:, t_last], cs[:, t_last]) if bf else (hs[t_last], cs[t_last]))
                else:
                    hs = seq
                    if last_step is not None and not d:
                        last.append(hs[last_step])
                    else:
                        last.append(hs[:, t_last] if bf else hs[t_last])
                outs.append(hs)  # (T, B, H) or (B, T, H)
            x = outs[0] if len(outs) == 1 else cat(outs, axis=-1)  # (T, B, D * H)
            if self.dropout and layer < self.num_layers - 1:  # between layers, as PyTorch
                x = self._dropout_between(x, bf, t_len, lengths)
        return x, last

    def _dropout_between(self, x: Tensor, bf: bool, t_len: int, lengths: tuple[int, ...] | None) -> Tensor:
        """Dropout of a layer's output with PyTorch's mask: drawn over the time-major layout its
        kernels run in (batch_first or not), and for a packed batch over the packed rows alone, in
        their order (the padding draws nothing)."""
        p, training = self.dropout, self.training
        if lengths is not None:  # (time-major, sorted by length: the packed rows are (t, b) with t < lengths[b])
            valid = Tensor(np.arange(t_len)[:, None] < np.asarray(lengths)[None, :], device=x.device)
            return x.new_zeros(tuple(x.shape)).index_put((valid,), F.dropout(x[valid], p, training))
        if bf:  # (a time-major copy: dropout draws in memory order, PyTorch's over its time-major output)
            return F.dropout(x.transpose(0, 1).contiguous(), p, training).transpose(0, 1)
        return F.dropout(x.contiguous(), p, training)

    def _forward_packed(self, input: PackedSequence, hx: Any) -> tuple[PackedSequence, Any]:
        """The layers over a packed batch: padded time-major in the packed (sorted) order, run
        with the lengths, packed again; ``hx`` and ``h_n`` in the batch's own order."""
        name = type(self).__name__
        data = input.data
        if data.ndim != 2 or data.shape[-1] != self.input_size:
            raise ValueError(f"{name}({self.input_size}, {self.hidden_size}): a PackedSequence's data of shape "
                             f"{tuple(data.shape)} must be (steps, {self.input_size})")  # fmt: skip
        bs = _host_ints(input.batch_sizes, "batch_sizes", name)
        lengths = tuple(int(n) for n in _lengths_of(bs))
        x = _pad_packed(data, bs)  # (T, B, in)
        t_len, b = x.shape[0], x.shape[1]
        if hx is not None and input.sorted_indices is not None:  # hx is in the batch's order
            parts = [hx[0], hx[1]] if self._pair else [hx]
            parts = [None if p is None else p.index_select(1, input.sorted_indices) for p in parts]
            hx = tuple(parts) if self._pair else parts[0]
        states = self._initial(x, hx, False, b)
        out, last = self._layers(x, states, False, t_len, lengths)
        packed = PackedSequence(_pack_padded(out, bs), input.batch_sizes, input.sorted_indices,
                                input.unsorted_indices)  # fmt: skip

        def final(states: list[Tensor]) -> Tensor:
            s = stack(states, axis=0)  # (L * D, B, H), back in the batch's order
            return s.index_select(1, input.unsorted_indices) if input.unsorted_indices is not None else s

        if self._pair:
            return packed, (final([s[0] for s in last]), final([s[1] for s in last]))
        return packed, final(last)

    def _mode(self) -> str:
        return self._recurrence_mode

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size:
            s += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if not self.bias:
            s += ", bias=False"
        if self.batch_first:
            s += ", batch_first=True"
        if self.dropout:
            s += f", dropout={self.dropout}"
        if self.bidirectional:
            s += ", bidirectional=True"
        return s


def _no_projection(name: str, kwargs: dict[str, Any]) -> None:
    """PyTorch's RNN and GRU refuse ``proj_size`` (any value) with a ValueError, other unknown keywords as Python."""
    if "proj_size" in kwargs:
        raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
    if kwargs:
        raise TypeError(f"{name}.__init__() got an unexpected keyword argument {next(iter(kwargs))!r}")


class RNN(RNNBase):
    """A stack of Elman layers over a sequence, as PyTorch's ``nn.RNN``.

    >>> out, h_n = RNN(3, 5, num_layers=2)(Tensor.randn(7, 2, 3))
    >>> out.shape, h_n.shape
    ((7, 2, 5), (2, 2, 5))
    """

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, nonlinearity: str = "tanh",
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0,
                 bidirectional: bool = False, device: Any = None, dtype: Any = None,
                 **kwargs: Any) -> None:  # fmt: skip
        _no_projection("RNN", kwargs)
        _check_nonlinearity("RNN", nonlinearity)
        super().__init__("RNN_" + nonlinearity.upper(), input_size, hidden_size, num_layers, bias, batch_first,
                         dropout, bidirectional, 0, device, dtype)  # fmt: skip
        self.nonlinearity = nonlinearity

    def _mode(self) -> str:
        return "rnn_" + self.nonlinearity

    forward = RNNBase._sequence_forward  # (the base has no forward of its own, as PyTorch's)


class GRU(RNNBase):
    """A stack of GRU layers over a sequence, as PyTorch's ``nn.GRU``."""

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False, device: Any = None,
                 dtype: Any = None, **kwargs: Any) -> None:  # fmt: skip
        _no_projection("GRU", kwargs)
        super().__init__("GRU", input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional, 0,
                         device, dtype)  # fmt: skip

    forward = RNNBase._sequence_forward


class LSTM(RNNBase):
    """A stack of LSTM layers over a sequence, as PyTorch's ``nn.LSTM``; returns
    ``(output, (h_n, c_n))``.

    ``proj_size=P`` (``0 < P < hidden_size``) adds each layer and direction a projection
    ``weight_hr_l{k}`` ``(P, hidden_size)``: the hidden state is ``W_hr (o * tanh(c))``, so
    ``h_0``/``h_n`` and each direction's output have size ``P`` (``c`` keeps ``hidden_size``),
    and ``weight_hh`` is ``(4 * hidden_size, P)``. Those layers run as the step-by-step
    definition of :func:`recurrence` (the fused op has no projection).

    >>> out, (h_n, c_n) = LSTM(3, 5, proj_size=2, bidirectional=True)(Tensor.randn(7, 4, 3))
    >>> out.shape, h_n.shape, c_n.shape
    ((7, 4, 4), (2, 4, 2), (2, 4, 5))
    """

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False, proj_size: int = 0,
                 device: Any = None, dtype: Any = None) -> None:  # fmt: skip
        super().__init__("LSTM", input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional,
                         proj_size, device, dtype)  # fmt: skip

    forward = RNNBase._sequence_forward


# The fused recurrences recompute this definition for gradients of higher order (handed down:
# the op imports nothing above it)
recurrent._Recurrence.definition = staticmethod(recurrence_reference)
