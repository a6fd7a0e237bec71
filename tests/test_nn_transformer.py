"""``nn.TransformerEncoderLayer`` / ``DecoderLayer`` / ``Encoder`` / ``Decoder`` against PyTorch."""

from __future__ import annotations

import numpy as np
import pytest
from modelcheck import gradcheck_module
from torch_oracle import assert_matches_torch

import tinygrad_attn as tga
from tinygrad_attn import Tensor, nn
from tinygrad_attn.models import EncoderBlock

torch = pytest.importorskip("torch")

D, NHEAD, FF, N, T, S = 8, 2, 16, 2, 4, 5

OPTIONS = [
    {},
    {"batch_first": True},
    {"norm_first": True, "activation": "gelu"},
    {"batch_first": True, "norm_first": True, "bias": False},
]
IDS = ["default", "batch_first", "norm_first-gelu", "batch_first-norm_first-nobias"]


def _x(rng, t, batch_first):
    return rng.standard_normal((N, t, D) if batch_first else (t, N, D))


def _kpm(t):
    m = np.zeros((N, t), bool)
    m[1, -1] = True
    return m


@pytest.mark.parametrize("kw", OPTIONS, ids=IDS)
def test_encoder_layer_matches_torch(kw, rng):
    ours = nn.TransformerEncoderLayer(D, NHEAD, FF, dropout=0.0, **kw)
    theirs = torch.nn.TransformerEncoderLayer(D, NHEAD, FF, dropout=0.0, **kw)
    causal, kpm = np.triu(np.ones((T, T), bool), 1), _kpm(T)
    assert_matches_torch(ours, theirs, lambda x: ours(x, src_mask=causal, src_key_padding_mask=kpm),
                         lambda x: theirs(x, src_mask=torch.tensor(causal), src_key_padding_mask=torch.tensor(kpm)),
                         [_x(rng, T, kw.get("batch_first", False))])  # fmt: skip


@pytest.mark.filterwarnings("ignore::UserWarning")  # PyTorch's note on mixed mask types
@pytest.mark.parametrize("kw", OPTIONS, ids=IDS)
def test_decoder_layer_matches_torch(kw, rng):
    ours = nn.TransformerDecoderLayer(D, NHEAD, FF, dropout=0.0, **kw)
    theirs = torch.nn.TransformerDecoderLayer(D, NHEAD, FF, dropout=0.0, **kw)
    float_causal = np.triu(np.full((T, T), -np.inf), 1)
    mem_mask = np.zeros((T, S), bool)
    mem_mask[0, 1] = True
    masks = {"tgt_mask": float_causal, "memory_mask": mem_mask, "tgt_key_padding_mask": _kpm(T),
             "memory_key_padding_mask": _kpm(S)}  # fmt: skip
    t_masks = {k: torch.tensor(v) for k, v in masks.items()}
    bf = kw.get("batch_first", False)
    assert_matches_torch(ours, theirs, lambda x, m: ours(x, m, **masks), lambda x, m: theirs(x, m, **t_masks),
                         [_x(rng, T, bf), _x(rng, S, bf)])  # fmt: skip


@pytest.mark.filterwarnings("ignore::UserWarning")  # PyTorch's note on nested tensors
def test_encoder_stack_matches_torch(rng):
    ours = nn.TransformerEncoder(nn.TransformerEncoderLayer(D, NHEAD, FF, dropout=0.0), 2, norm=nn.LayerNorm(D))
    theirs = torch.nn.TransformerEncoder(torch.nn.TransformerEncoderLayer(D, NHEAD, FF, dropout=0.0), 2,
                                         norm=torch.nn.LayerNorm(D))  # fmt: skip
    assert list(ours.state_dict())[:2] == ["layers.0.self_attn.in_proj_weight", "layers.0.self_attn.in_proj_bias"]
    kpm = _kpm(T)
    assert_matches_torch(ours, theirs, lambda x: ours(x, src_key_padding_mask=kpm, is_causal=True),
                         lambda x: theirs(x, mask=torch.nn.Transformer.generate_square_subsequent_mask(T, dtype=x.dtype),
                                          src_key_padding_mask=torch.tensor(kpm), is_causal=True),
                         [_x(rng, T, False)])  # fmt: skip


def test_decoder_stack_matches_torch(rng):
    ours = nn.TransformerDecoder(nn.TransformerDecoderLayer(D, NHEAD, FF, dropout=0.0, batch_first=True), 2)
    theirs = torch.nn.TransformerDecoder(
        torch.nn.TransformerDecoderLayer(D, NHEAD, FF, dropout=0.0, batch_first=True), 2
    )
    causal = np.triu(np.ones((T, T), bool), 1)
    assert_matches_torch(ours, theirs, lambda x, m: ours(x, m, tgt_mask=causal, tgt_is_causal=True),
                         lambda x, m: theirs(x, m, tgt_mask=torch.tensor(causal), tgt_is_causal=True),
                         [_x(rng, T, True), _x(rng, S, True)])  # fmt: skip


def test_stack_layers_are_independent_copies():
    layer = nn.TransformerEncoderLayer(D, NHEAD, FF).double()
    enc = nn.TransformerEncoder(layer, 3)
    first, second = enc.layers[0], enc.layers[1]
    assert first.linear1.weight is not second.linear1.weight and first.linear1.weight is not layer.linear1.weight
    np.testing.assert_array_equal(first.linear1.weight.numpy(), layer.linear1.weight.numpy())  # PyTorch's copies
    assert first.linear1.weight.dtype == np.float64
    first.linear1.weight.data = first.linear1.weight.data * 0
    assert second.linear1.weight.numpy().any()
    assert len(list(enc.parameters())) == 3 * len(list(layer.parameters()))
    assert enc.norm is None and "norm.weight" not in enc.state_dict()


def test_defaults_and_children_as_torch():
    ours, theirs = nn.TransformerDecoderLayer(D, NHEAD), torch.nn.TransformerDecoderLayer(D, NHEAD)
    assert [n for n, _ in ours.named_children()] == [n for n, _ in theirs.named_children()]
    assert ours.linear1.weight.shape == (2048, D) and ours.dropout.p == 0.1  # PyTorch's defaults
    assert not ours.batch_first and not ours.norm_first


def test_dropout_only_while_training(rng):
    layer = nn.TransformerEncoderLayer(D, NHEAD, FF, dropout=0.5).double()
    x = Tensor(_x(rng, T, False))
    assert not np.allclose(layer(x).numpy(), layer(x).numpy())
    layer.eval()
    np.testing.assert_array_equal(layer(x).numpy(), layer(x).numpy())


def test_same_body_as_the_batch_first_layer(rng):
    # The PyTorch-convention layer and models.EncoderBlock share the layer body.
    ours = nn.TransformerEncoderLayer(D, NHEAD, FF, dropout=0.0, batch_first=True, norm_first=True).double()
    old = EncoderBlock(D, NHEAD, FF, norm_first=True).double()
    state = ours.state_dict()
    w, b = state.pop("self_attn.in_proj_weight"), state.pop("self_attn.in_proj_bias")
    for i, name in enumerate("qkv"):
        state[f"self_attn.{name}_proj.weight"] = w[i * D : (i + 1) * D]
        state[f"self_attn.{name}_proj.bias"] = b[i * D : (i + 1) * D]
    old.load_state_dict(state)
    x = Tensor(_x(rng, T, True))
    np.testing.assert_allclose(ours(x, is_causal=True).numpy(), old(x, is_causal=True).numpy(), atol=1e-12)


def test_callable_activation_and_gradcheck(device, rng):
    layer = nn.TransformerEncoderLayer(4, 2, 6, dropout=0.0, activation=nn.GELU(approximate="tanh")).to(device)
    x = Tensor(rng.standard_normal((3, 1, 4)), device=device)
    assert gradcheck_module(layer, lambda x: layer(x, src_key_padding_mask=np.array([[False, False, True]])), x)


@pytest.mark.filterwarnings("ignore::UserWarning")  # PyTorch's note on mixed mask types
@pytest.mark.parametrize("norm_first", [False, True])
def test_decomposed_layers_match_torch(norm_first, rng):
    # The same numbers with every composite (attention, softmax, layer_norm) run from primitives.
    ours = nn.TransformerEncoderLayer(D, NHEAD, FF, dropout=0.0, norm_first=norm_first)
    theirs = torch.nn.TransformerEncoderLayer(D, NHEAD, FF, dropout=0.0, norm_first=norm_first)
    kpm = _kpm(T)

    def run(x):
        with tga.decompose():
            return ours(x, src_key_padding_mask=kpm, is_causal=True)

    causal = torch.nn.Transformer.generate_square_subsequent_mask(T, dtype=torch.float64)
    assert_matches_torch(ours, theirs, run, lambda x: theirs(x, src_mask=causal, src_key_padding_mask=torch.tensor(kpm)),
                         [_x(rng, T, False)])  # fmt: skip
