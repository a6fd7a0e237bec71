"""Same seed, same parameters: modules built after ``tga.manual_seed(s)`` hold the numbers
PyTorch's hold after ``torch.manual_seed(s)`` (the same init functions, in the same order),
and the ``nn.init`` functions draw PyTorch's numbers from a ``generator=``.

Bit for bit, except the float32 normal fills of 16 numbers or more (``nn.Embedding``,
``init.normal_``), which are within a few units in the last place (see
tests/tensor/test_random_torch.py).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import tinygrad_attn as tga

torch = pytest.importorskip("torch")

MODULES = {
    "Linear": lambda nn, dt: nn.Linear(5, 7, dtype=dt),
    "Linear_no_bias": lambda nn, dt: nn.Linear(9, 3, bias=False, dtype=dt),
    "Conv1d": lambda nn, dt: nn.Conv1d(3, 4, 3, dtype=dt),
    "Conv2d_groups": lambda nn, dt: nn.Conv2d(2, 6, (3, 2), groups=2, dtype=dt),
    "ConvTranspose2d": lambda nn, dt: nn.ConvTranspose2d(2, 6, 3, dtype=dt),
    "LayerNorm": lambda nn, dt: nn.LayerNorm(4, dtype=dt),
    "MultiheadAttention": lambda nn, dt: nn.MultiheadAttention(8, 2, dtype=dt),
    "MultiheadAttention_kdim": lambda nn, dt: nn.MultiheadAttention(8, 2, kdim=5, vdim=3, dtype=dt),
    "TransformerEncoderLayer": lambda nn, dt: nn.TransformerEncoderLayer(8, 2, 16, dtype=dt),
    "Transformer": lambda nn, dt: nn.Transformer(8, 2, 1, 1, 16, dtype=dt),
    "RNN": lambda nn, dt: nn.RNN(3, 5, 2, dtype=dt),
    "LSTM_bidirectional": lambda nn, dt: nn.LSTM(3, 5, 2, bidirectional=True, dtype=dt),
    "GRU": lambda nn, dt: nn.GRU(4, 3, dtype=dt),
    "LSTMCell": lambda nn, dt: nn.LSTMCell(4, 3, dtype=dt),
    "GRUCell": lambda nn, dt: nn.GRUCell(4, 3, dtype=dt),
    "Bilinear": lambda nn, dt: nn.Bilinear(3, 4, 5, dtype=dt),
    "Embedding_small": lambda nn, dt: nn.Embedding(3, 5, padding_idx=1, dtype=dt),
    "EmbeddingBag_small": lambda nn, dt: nn.EmbeddingBag(3, 4, mode="sum", dtype=dt),
    "Conv3d": lambda nn, dt: nn.Conv3d(2, 3, 2, dtype=dt),
    "ConvTranspose1d": lambda nn, dt: nn.ConvTranspose1d(2, 3, 3, dtype=dt),
    "PReLU": lambda nn, dt: nn.PReLU(3, dtype=dt),
    "GroupNorm": lambda nn, dt: nn.GroupNorm(2, 4, dtype=dt),
    "InstanceNorm1d_affine": lambda nn, dt: nn.InstanceNorm1d(3, affine=True, dtype=dt),
    "Sequential": lambda nn, dt: nn.Sequential(
        nn.Conv1d(2, 3, 2, dtype=dt), nn.ReLU(), nn.Flatten(), nn.Linear(6, 8, dtype=dt), nn.Tanh(),
        nn.Linear(8, 3, dtype=dt)
    ),
}  # fmt: skip


def _params(module) -> dict[str, np.ndarray]:
    return {k: v.detach().numpy() for k, v in module.named_parameters()}


@pytest.mark.parametrize("name", list(MODULES))
@pytest.mark.parametrize("seed", [0, 1, 12345])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_modules_initialise_as_pytorchs(name, seed, dtype):
    import warnings

    build = MODULES[name]
    torch.manual_seed(seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (PyTorch's nested-tensor notice)
        theirs = _params(build(torch.nn, getattr(torch, dtype)))
    tga.manual_seed(seed)
    ours = _params(build(tga.nn, getattr(tga, dtype)))
    assert list(ours) == list(theirs)
    for key, value in theirs.items():
        assert ours[key].dtype == value.dtype, key
        np.testing.assert_array_equal(ours[key], value, err_msg=key)
    # the stream after the module is PyTorch's too: no draw more, none less
    np.testing.assert_array_equal(tga.rand(5).detach().numpy(), torch.rand(5).detach().numpy())


@pytest.mark.parametrize("seed", [0, 3])
def test_embedding_is_pytorchs_within_float32_normal_rounding(seed):
    torch.manual_seed(seed)
    theirs = torch.nn.Embedding(50, 8, padding_idx=4).weight.detach().numpy()
    tga.manual_seed(seed)
    ours = tga.nn.Embedding(50, 8, padding_idx=4).weight.detach().numpy()
    np.testing.assert_allclose(ours, theirs, rtol=5e-7, atol=5e-7)
    assert (ours[4] == 0).all()
    np.testing.assert_array_equal(tga.rand(5).detach().numpy(), torch.rand(5).detach().numpy())


INITS = {
    "uniform_": lambda init, t, g: init.uniform_(t, -0.3, 0.7, generator=g),
    "normal_": lambda init, t, g: init.normal_(t, 0.5, 2.0, generator=g),
    "xavier_uniform_": lambda init, t, g: init.xavier_uniform_(t, gain=1.5, generator=g),
    "xavier_normal_": lambda init, t, g: init.xavier_normal_(t, generator=g),
    "kaiming_uniform_": lambda init, t, g: init.kaiming_uniform_(t, a=math.sqrt(5), generator=g),
    "kaiming_normal_": lambda init, t, g: init.kaiming_normal_(t, mode="fan_out", nonlinearity="relu", generator=g),
    "trunc_normal_wide": lambda init, t, g: init.trunc_normal_(t, 0.0, 1.0, -2.0, 2.0, generator=g),
    "trunc_normal_narrow": lambda init, t, g: init.trunc_normal_(t, 0.0, 1.0, 0.5, 0.9, generator=g),
    "sparse_": lambda init, t, g: init.sparse_(t, 0.5, generator=g) if t.ndim == 2 else init.uniform_(t, generator=g),
    "orthogonal_": lambda init, t, g: init.orthogonal_(t, generator=g),
}


@pytest.mark.parametrize("name", list(INITS))
@pytest.mark.parametrize("shape", [(3, 4), (4, 3, 2), (40, 30)])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_init_functions_draw_pytorchs_numbers(name, shape, dtype):
    fill = INITS[name]
    torch.manual_seed(2)  # (sparse_ draws its permutations from the default generator, as PyTorch's)
    tga.manual_seed(2)
    theirs = fill(torch.nn.init, torch.zeros(shape, dtype=getattr(torch, dtype)), torch.Generator().manual_seed(7))
    ours = fill(tga.nn.init, tga.zeros(shape, dtype=getattr(tga, dtype)), tga.Generator().manual_seed(7))
    theirs = theirs.detach().numpy()
    if name == "orthogonal_":  # (a QR factorisation: LAPACK's rounding, not the draws, differs)
        np.testing.assert_allclose(ours.detach().numpy(), theirs, atol=1e-5 if dtype == "float32" else 1e-12)
    elif dtype == "float32" and ("normal" in name or name == "sparse_") and math.prod(shape) >= 16:
        np.testing.assert_allclose(ours.detach().numpy(), theirs, rtol=5e-7, atol=5e-7)
    else:
        np.testing.assert_array_equal(ours.detach().numpy(), theirs)
