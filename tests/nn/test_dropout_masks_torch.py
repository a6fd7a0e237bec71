"""Dropout draws PyTorch's masks: after the same seed, every dropout of the library (F.dropout
and its channel and alpha kinds, the layers that drop inside: Transformer layers, multi-head
attention, stacked RNNs) zeroes the elements PyTorch's CPU kernels zero and scales the rest by
the same float, so a training program with dropout prints PyTorch's numbers. (PyTorch built with
MKL on an Intel CPU draws these masks from MKL's stream instead: there the test is skipped.)"""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from torch_oracle import torch_bernoulli_is_ours  # noqa: E402

import tinygrad_attn as tga  # noqa: E402

pytestmark = pytest.mark.skipif(
    not torch_bernoulli_is_ours(), reason="PyTorch draws bernoulli_(p) from MKL's stream on this CPU"
)

FUNCTIONS = {
    "dropout": (lambda m, x, p: m.nn.functional.dropout(x, p), (5, 7)),
    "dropout in place": (lambda m, x, p: m.nn.functional.dropout(x.clone(), p, inplace=True), (40,)),
    "dropout1d": (lambda m, x, p: m.nn.functional.dropout1d(x, p), (2, 6, 5)),
    "dropout2d": (lambda m, x, p: m.nn.functional.dropout2d(x, p), (2, 6, 3, 3)),
    "dropout3d": (lambda m, x, p: m.nn.functional.dropout3d(x, p), (2, 5, 2, 2, 2)),
    "alpha_dropout": (lambda m, x, p: m.nn.functional.alpha_dropout(x, p, training=True), (6, 9)),
    "feature_alpha_dropout": (lambda m, x, p: m.nn.functional.feature_alpha_dropout(x, p, training=True), (3, 8, 2)),
    "Dropout module": (lambda m, x, p: m.nn.Dropout(p)(x), (3, 4, 5)),
}


@pytest.mark.parametrize("p", [0.1, 0.5, 1 / 3, 0.9])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_dropout_functions_zero_and_scale_as_pytorch(name, dtype, p):
    f, shape = FUNCTIONS[name]
    x = np.random.default_rng(0).standard_normal(shape).astype(dtype)
    torch.manual_seed(3)
    theirs = f(torch, torch.tensor(x), p).detach().numpy()
    after = torch.rand(3).detach().numpy()
    tga.manual_seed(3)
    ours = f(tga, tga.tensor(x), p).detach().numpy()
    np.testing.assert_array_equal(ours == 0, theirs == 0)
    np.testing.assert_allclose(ours, theirs, rtol=2e-7 if dtype == "float32" else 1e-15, atol=0)
    np.testing.assert_array_equal(tga.rand(3).detach().numpy(), after)  # the generator moved on alike


LAYERS = {
    "TransformerEncoderLayer": lambda m: m.nn.TransformerEncoderLayer(d_model=16, nhead=4, dropout=0.2),
    "TransformerDecoderLayer": lambda m: m.nn.TransformerDecoderLayer(d_model=16, nhead=2, dropout=0.2),
    "MultiheadAttention": lambda m: m.nn.MultiheadAttention(16, 4, dropout=0.3),
    "LSTM of two layers": lambda m: m.nn.LSTM(16, 16, num_layers=2, dropout=0.4),
    "GRU of three layers": lambda m: m.nn.GRU(16, 8, num_layers=3, dropout=0.25),
    # (the masks are drawn over the time-major layout, and over a packed batch's rows alone)
    "batch_first LSTM": lambda m: m.nn.LSTM(16, 8, num_layers=2, dropout=0.3, batch_first=True),
    "batch_first bidirectional GRU": lambda m: m.nn.GRU(
        16, 8, num_layers=3, dropout=0.5, batch_first=True, bidirectional=True
    ),
    "batch_first TransformerEncoderLayer": lambda m: m.nn.TransformerEncoderLayer(
        16, 4, 32, dropout=0.2, batch_first=True
    ),
    "batch_first TransformerDecoderLayer": lambda m: m.nn.TransformerDecoderLayer(
        16, 2, 8, dropout=0.3, batch_first=True, norm_first=True
    ),
    "packed LSTM": lambda m: m.nn.LSTM(16, 8, num_layers=2, dropout=0.3),
    "packed bidirectional RNN": lambda m: m.nn.RNN(16, 8, num_layers=3, dropout=0.5, bidirectional=True),
}


def _forward(m, name):
    m.manual_seed(0)
    layer = LAYERS[name](m)
    layer.train()
    x = m.randn(7, 3, 16)
    m.manual_seed(5)
    if name == "MultiheadAttention":
        out = layer(x, x, x)[0]
    elif name.endswith("TransformerDecoderLayer"):
        out = layer(x, m.randn(7, 4, 16) if name.startswith("batch_first") else m.randn(4, 3, 16))
    elif name.startswith("packed"):
        packed = m.nn.utils.rnn.pack_padded_sequence(x, [5, 7, 2], enforce_sorted=False)
        out = m.nn.utils.rnn.pad_packed_sequence(layer(packed)[0])[0]
    else:
        out = layer(x)
    out = out[0] if isinstance(out, tuple) else out
    return np.concatenate([out.detach().numpy().ravel(), m.rand(3).numpy()])  # (and where the generator is)


@pytest.mark.parametrize("name", sorted(LAYERS))
def test_layers_with_dropout_train_as_pytorch(name):
    theirs, ours = _forward(torch, name), _forward(tga, name)
    np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-6)
