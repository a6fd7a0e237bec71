"""``torch.nn.modules.rnn``: PyTorch's path to its recurrent layers and cells, here the classes of
:mod:`tinygrad_attn.nn` (the same objects)."""

from ..rnn import GRU, LSTM, RNN, GRUCell, LSTMCell, RNNCell

__all__ = ["RNN", "LSTM", "GRU", "RNNCell", "LSTMCell", "GRUCell"]
