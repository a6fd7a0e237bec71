"""PyTorch's one-step recurrent cells as free functions of a batch, the weights passed in:
``torch.rnn_tanh_cell``, ``torch.rnn_relu_cell``, ``torch.gru_cell`` and ``torch.lstm_cell``
(``nn.RNNCell``, ``nn.GRUCell`` and ``nn.LSTMCell`` without the module). Each calls the one
recurrence of ``tga.nn``'s layers (``nn.rnn.recurrence``), loaded on first use.

>>> import tinygrad_attn as tga
>>> x, h = tga.randn(2, 3), tga.zeros(2, 4)
>>> tga.rnn_tanh_cell(x, h, tga.randn(4, 3), tga.randn(4, 4)).shape
torch.Size([2, 4])
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..engine.declare import public
from ..tensors._tensor import InvalidArgumentError, Tensor

_GATES = {"rnn_tanh": 1, "rnn_relu": 1, "gru": 3, "lstm": 4}


def _step(mode: str, input: Tensor, h: Tensor, c: Tensor | None, w_ih: Tensor, w_hh: Tensor,  # noqa: A002
          b_ih: Tensor | None, b_hh: Tensor | None) -> Any:  # fmt: skip
    op = f"{mode}_cell"
    for name, t in (("input", input), ("hx", h), ("w_ih", w_ih), ("w_hh", w_hh)):
        if not isinstance(t, Tensor):
            raise TypeError(f"{op}: {name} must be a Tensor, got {type(t).__name__}")
    # (a batch of rows only, as PyTorch's: the unbatched (in,) form is the modules')
    if input.ndim != 2 or h.ndim != 2 or h.shape[0] != input.shape[0]:
        raise IndexError(
            f"{op}: expected input (B, in) and hx (B, hidden), got {tuple(input.shape)} and {tuple(h.shape)}"
        )
    gates, hidden = _GATES[mode] * h.shape[1], h.shape[1]
    if tuple(w_ih.shape) != (gates, input.shape[1]) or tuple(w_hh.shape) != (gates, hidden):
        raise InvalidArgumentError(
            f"{op}: expected w_ih of shape {(gates, input.shape[1])} and w_hh of shape {(gates, hidden)} for input "
            f"{tuple(input.shape)} and hx {tuple(h.shape)}, got {tuple(w_ih.shape)} and {tuple(w_hh.shape)}"
        )
    from ..nn.rnn import recurrence  # noqa: PLC0415 - (tga.nn loads on first use)

    return recurrence(mode, input, h, c, w_ih, w_hh, b_ih, b_hh, cell=True)


@public
def rnn_tanh_cell(input: Tensor, hx: Tensor, w_ih: Tensor, w_hh: Tensor, b_ih: Tensor | None = None,  # noqa: A002
                  b_hh: Tensor | None = None) -> Tensor:  # fmt: skip
    """``tanh(input @ w_ih.T + b_ih + hx @ w_hh.T + b_hh)``: one step of ``nn.RNNCell``."""
    return _step("rnn_tanh", input, hx, None, w_ih, w_hh, b_ih, b_hh)


@public
def rnn_relu_cell(input: Tensor, hx: Tensor, w_ih: Tensor, w_hh: Tensor, b_ih: Tensor | None = None,  # noqa: A002
                  b_hh: Tensor | None = None) -> Tensor:  # fmt: skip
    """:func:`rnn_tanh_cell` with ``relu``."""
    return _step("rnn_relu", input, hx, None, w_ih, w_hh, b_ih, b_hh)


@public
def gru_cell(input: Tensor, hx: Tensor, w_ih: Tensor, w_hh: Tensor, b_ih: Tensor | None = None,  # noqa: A002
             b_hh: Tensor | None = None) -> Tensor:  # fmt: skip
    """One step of ``nn.GRUCell``; the gates' rows of the weights in PyTorch's order (reset, update, new)."""
    return _step("gru", input, hx, None, w_ih, w_hh, b_ih, b_hh)


@public
def lstm_cell(input: Tensor, hx: Sequence[Tensor], w_ih: Tensor, w_hh: Tensor, b_ih: Tensor | None = None,  # noqa: A002
              b_hh: Tensor | None = None) -> tuple[Tensor, Tensor]:  # fmt: skip
    """One step of ``nn.LSTMCell``: ``hx = (h, c)`` -> ``(h', c')``; the gates' rows in PyTorch's
    order (input, forget, cell, output)."""
    if isinstance(hx, Tensor) or len(hx) != 2:
        raise TypeError(f"lstm_cell: hx must be a pair (h, c) of tensors, got {type(hx).__name__}")
    h, c = hx
    hc = _step("lstm", input, h, c, w_ih, w_hh, b_ih, b_hh)
    return hc[0], hc[1]
