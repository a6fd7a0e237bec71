"""Transformer layers and the encoder-decoder: PyTorch's names, the pre-norm formula against
NumPy (the post-norm one is checked in test_torch_bridge), masks, and gradient checks.

``nn.TransformerEncoderLayer`` / ``DecoderLayer`` / ``Encoder`` / ``Decoder`` against PyTorch."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import close
from modelcheck import gelu_numpy, gradcheck_module, layer_norm_numpy, linear_numpy, mha_numpy, to_float64
from torch_oracle import assert_matches_torch, needs_torch, torch_or_absent

import tinygrad_attn as tga
import tinygrad_attn.functional as F
from tinygrad_attn import Tensor, nn
from tinygrad_attn.models import (
    DecoderBlock,
    EncoderBlock,
    EncoderDecoder,
    padding_mask,
)
from tinygrad_attn.models import TransformerEncoderLayer as BatchFirstEncoderLayer
from tinygrad_attn.optim import Adam, LambdaLR

# PyTorch is an optional oracle: the tests that need it carry ``needs_torch`` and skip without it,
# the others still run.
torch = torch_or_absent()


MHA = [f"{p}.{w}" for p in ("q_proj", "k_proj", "v_proj", "out_proj") for w in ("weight", "bias")]
FF_NORMS = ["linear1.weight", "linear1.bias", "linear2.weight", "linear2.bias"]


def _x(rng, *shape, device="cpu"):
    return Tensor(rng.standard_normal(shape), device=device)


def test_encoder_layer_names_match_pytorch():
    layer = EncoderBlock(8, 2, 16)
    names = [n for n, _ in layer.named_parameters()]
    norms = [f"norm{i}.{w}" for i in (1, 2) for w in ("weight", "bias")]
    assert names == [f"self_attn.{n}" for n in MHA] + FF_NORMS + norms
    assert {n for n, _ in layer.named_children()} == {
        "self_attn", "linear1", "linear2", "norm1", "norm2", "dropout", "dropout1", "dropout2",
    }  # fmt: skip


def test_decoder_layer_names_match_pytorch():
    layer = DecoderBlock(8, 2, 16)
    names = [n for n, _ in layer.named_parameters()]
    norms = [f"norm{i}.{w}" for i in (1, 2, 3) for w in ("weight", "bias")]
    assert names == [f"self_attn.{n}" for n in MHA] + [f"cross_attn.{n}" for n in MHA] + FF_NORMS + norms
    assert "cross_attn.out_proj.bias" in names and "norm3.weight" in names
    assert {"dropout", "dropout1", "dropout2", "dropout3"} <= {n for n, _ in layer.named_children()}


def _randomise_norms(layer, rng):
    """LayerNorm starts at weight 1, bias 0: move them so the test sees where they act."""
    for name, p in layer.named_parameters():
        if name.startswith("norm"):
            p.data = p._dev.asarray(rng.standard_normal(p.shape), dtype=p.dtype)


def test_pre_norm_encoder_layer_equals_numpy(device, rng):
    layer = EncoderBlock(8, 2, 16, norm_first=True, activation="gelu")
    _randomise_norms(layer, rng)
    layer = to_float64(layer.to(device))
    x = rng.standard_normal((2, 4, 8))
    h = layer_norm_numpy(x, layer.norm1)
    causal = np.tril(np.ones((4, 4), bool))
    x1 = x + mha_numpy(layer.self_attn, h, h, h, causal)[0]
    h = layer_norm_numpy(x1, layer.norm2)
    ref = x1 + linear_numpy(gelu_numpy(linear_numpy(h, layer.linear1)), layer.linear2)
    # the engine's erf (inside gelu) is a fit with relative error below 1.2e-7
    close(layer(Tensor(x, device=device), is_causal=True), ref, atol=1e-6, rtol=1e-6)


def test_pre_norm_decoder_layer_equals_numpy(device, rng):
    layer = DecoderBlock(8, 2, 16, norm_first=True)
    _randomise_norms(layer, rng)
    layer = to_float64(layer.to(device))
    x, mem = rng.standard_normal((2, 3, 8)), rng.standard_normal((2, 5, 8))
    keep = np.ones((2, 1, 1, 5), bool)
    keep[1, ..., 3:] = False  # memory padding
    h = layer_norm_numpy(x, layer.norm1)
    x1 = x + mha_numpy(layer.self_attn, h, h, h, np.tril(np.ones((3, 3), bool)))[0]
    h = layer_norm_numpy(x1, layer.norm2)
    x2 = x1 + mha_numpy(layer.cross_attn, h, mem, mem, keep)[0]
    h = layer_norm_numpy(x2, layer.norm3)
    ref = x2 + linear_numpy(np.maximum(linear_numpy(h, layer.linear1), 0.0), layer.linear2)
    out = layer(Tensor(x, device=device), Tensor(mem, device=device), memory_mask=Tensor(keep, device=device),
                is_causal=True)  # fmt: skip
    close(out, ref, atol=1e-10, rtol=1e-9)


@pytest.mark.parametrize("norm_first", [False, True], ids=["post_norm", "pre_norm"])
def test_layers_are_causal(norm_first, rng):
    enc = to_float64(EncoderBlock(8, 2, 16, norm_first=norm_first))
    dec = to_float64(DecoderBlock(8, 2, 16, norm_first=norm_first))
    x, mem = rng.standard_normal((1, 5, 8)), _x(rng, 1, 4, 8)
    later = x.copy()
    later[:, 3:] += 5.0  # change positions 3 and 4 only
    a, b = enc(Tensor(x), is_causal=True).detach().numpy(), enc(Tensor(later), is_causal=True).detach().numpy()
    np.testing.assert_allclose(a[:, :3], b[:, :3], atol=1e-12)
    assert np.abs(a[:, 3:] - b[:, 3:]).max() > 1e-3
    a, b = (
        dec(Tensor(x), mem, is_causal=True).detach().numpy(),
        dec(Tensor(later), mem, is_causal=True).detach().numpy(),
    )
    np.testing.assert_allclose(a[:, :3], b[:, :3], atol=1e-12)
    assert np.abs(enc(Tensor(later)).detach().numpy()[:, :3] - a[:, :3]).max() > 1e-3  # no mask, no causality


@pytest.mark.slow  # over 2 s on the array-API devices
@pytest.mark.parametrize("norm_first", [False, True], ids=["post_norm", "pre_norm"])
def test_encoder_layer_gradcheck(norm_first, device, rng):
    layer = EncoderBlock(4, 2, 6, norm_first=norm_first, activation="gelu" if norm_first else "relu")
    layer = layer.to(device)
    x = _x(rng, 2, 3, 4, device=device)
    keep = Tensor(np.array([[True, True, False], [True, True, True]])[:, None, None, :], device=device)
    assert gradcheck_module(layer, lambda x: layer(x, mask=keep, is_causal=True), x)


@pytest.mark.slow  # over 2 s on the array-API devices
@pytest.mark.parametrize("norm_first", [False, True], ids=["post_norm", "pre_norm"])
def test_decoder_layer_gradcheck(norm_first, device, rng):
    layer = DecoderBlock(4, 2, 6, norm_first=norm_first).to(device)
    x, mem = _x(rng, 2, 3, 4, device=device), _x(rng, 2, 2, 4, device=device)
    keep = Tensor(np.array([[True, False], [True, True]])[:, None, None, :], device=device)
    assert gradcheck_module(layer, lambda x, m: layer(x, m, memory_mask=keep, is_causal=True), x, mem)


def test_layer_dropout_only_in_training(rng):
    layer = EncoderBlock(8, 2, 16, dropout=0.3)
    x = Tensor(rng.standard_normal((2, 3, 8)).astype(np.float32))
    layer.eval()
    a = layer(x).detach().numpy()
    np.testing.assert_array_equal(a, layer(x).detach().numpy())
    layer.train()
    assert np.abs(layer(x).detach().numpy() - a).max() > 1e-4


def test_layer_errors():
    with pytest.raises(ValueError, match="EncoderBlock: activation.*'tanhh'"):
        EncoderBlock(8, 2, 16, activation="tanhh")
    with pytest.raises(ValueError, match=r"BatchFirstAttention.*\(2, 3, 6\)"):
        DecoderBlock(8, 2, 16)(Tensor.randn(2, 3, 8), Tensor.randn(2, 3, 6))


# -- the encoder-decoder -------------------------------------------------------------------
def _model(**kw):
    args = dict(d_model=8, n_heads=2, n_encoder_layers=2, n_decoder_layers=1, d_ff=16, dropout=0.0,
                src_vocab=7, tgt_vocab=6, max_len=10, pad_id=0)  # fmt: skip
    args.update(kw)
    return EncoderDecoder(**args)


def test_transformer_names_and_shapes():
    model = _model()
    names = [n for n, _ in model.named_parameters()]
    for n in ("src_embed.weight", "tgt_embed.weight", "encoder.layers.1.self_attn.q_proj.weight",
              "encoder.norm.bias", "decoder.layers.0.cross_attn.out_proj.bias", "decoder.layers.0.norm3.weight",
              "decoder.norm.weight", "generator.weight"):  # fmt: skip
        assert n in names
    assert "encoder.layers.2.norm1.weight" not in names
    assert "pos.pe" not in model.state_dict()  # the sinusoid table is rebuilt, not saved
    src, tgt = np.array([[1, 2, 3, 0], [4, 5, 6, 6]]), np.array([[1, 2, 3], [3, 4, 5]])
    assert model(Tensor(src), Tensor(tgt)).shape == (2, 3, 6)
    assert model.encode(src).shape == (2, 4, 8)


def test_transformer_encode_decode_equals_forward(rng):
    model = to_float64(_model())
    src, tgt = np.array([[1, 2, 3, 0], [4, 5, 6, 6]]), np.array([[1, 2, 3], [3, 4, 5]])
    mem = model.encode(src)
    close(model.decode(tgt, mem, memory_mask=padding_mask(src, 0)), model(src, tgt).detach().numpy(), atol=1e-12)


def test_transformer_source_padding_is_ignored():
    model = to_float64(_model())
    tgt = np.array([[1, 2, 3], [3, 4, 5]])
    a = model(np.array([[1, 2, 3, 0, 0], [4, 5, 6, 6, 1]]), tgt).detach().numpy()
    # Padding positions hold the pad id; their embeddings cannot matter. Nor may
    # anything the user puts there under an explicit mask.
    b = model(np.array([[1, 2, 3, 5, 6], [4, 5, 6, 6, 1]]), tgt, src_mask=padding_mask([[1, 2, 3, 0, 0], [1] * 5], 0))
    np.testing.assert_allclose(a, b.detach().numpy(), atol=1e-12)
    c = model(np.array([[1, 2, 3, 5, 6], [4, 5, 6, 6, 1]]), tgt).detach().numpy()  # now they are real tokens
    assert np.abs(c[0] - a[0]).max() > 1e-4


def test_transformer_target_is_causal():
    model = to_float64(_model())
    src = np.array([[1, 2, 3, 4]])
    a = model(src, np.array([[1, 2, 3, 4]])).detach().numpy()
    b = model(src, np.array([[1, 2, 5, 5]])).detach().numpy()
    np.testing.assert_allclose(a[:, :2], b[:, :2], atol=1e-12)
    assert np.abs(a[:, 2:] - b[:, 2:]).max() > 1e-4


def test_padding_mask():
    m = padding_mask(Tensor(np.array([[5, 3, 0], [0, 1, 2]])), pad_id=0)
    assert m.shape == (2, 1, 1, 3) and m.dtype == np.bool_
    assert m.detach().numpy()[:, 0, 0].tolist() == [[True, True, False], [False, True, True]]
    with pytest.raises(ValueError, match="padding_mask.*\\(3,\\)"):
        padding_mask([1, 2, 0], 0)


def test_transformer_on_features():
    model = _model(src_vocab=None, tgt_vocab=None)
    assert not hasattr(model, "pos") and not hasattr(model, "generator")
    out = model(Tensor.randn(2, 4, 8), Tensor.randn(2, 3, 8), src_mask=np.ones((2, 1, 1, 4), bool))
    assert out.shape == (2, 3, 8)
    with pytest.raises(ValueError, match=r"EncoderDecoder: src must be features \(B, T, 8\)"):
        model(Tensor.randn(2, 4, 5), Tensor.randn(2, 3, 8))


@pytest.mark.slow  # about 3 s
def test_transformer_gradcheck(device):
    model = EncoderDecoder(4, 2, 1, 1, 4, dropout=0.0, src_vocab=4, tgt_vocab=3, max_len=3, pad_id=0).to(device)
    src = Tensor(np.array([[1, 2, 0], [3, 1, 2]]), device=device)
    tgt = Tensor(np.array([[1, 2], [2, 1]]), device=device)
    # The layers are checked on every device above; here every parameter on the CPU, and
    # the rest (embeddings, final norms, generator) on the slower strict namespaces.
    only = None if device == "cpu" else (lambda name: ".layers." not in name)
    assert gradcheck_module(model, lambda s, t: model(s, t), src, tgt, only=only)


def test_greedy_decode_feeds_back_its_argmax():
    model = to_float64(_model())
    src = np.array([[2, 3, 4, 0], [5, 6, 2, 1]])
    ids = model.greedy_decode(src, 4, bos_id=1)
    assert ids.shape == (2, 4) and ids.dtype == np.int64
    tgt_in = np.concatenate([np.ones((2, 1), np.int64), ids.detach().numpy()[:, :-1]], 1)
    np.testing.assert_array_equal(model(src, tgt_in).detach().numpy().argmax(-1), ids.detach().numpy())
    with pytest.raises(ValueError, match="greedy_decode: the model has no tgt_vocab"):
        _model(tgt_vocab=None).greedy_decode(src, 2, 1)


def _sort_batch(rng, n, length, vocab, pad):
    """Sequences of 3..length tokens, padded; the target is the tokens sorted, then padding."""
    src = rng.integers(2, vocab, (n, length))
    for i, m in enumerate(rng.integers(3, length + 1, n)):
        src[i, m:] = pad
    tgt = np.sort(np.where(src == pad, vocab, src), 1)
    return src, np.where(tgt == vocab, pad, tgt)


@pytest.mark.slow
def test_learns_to_sort_padded_sequences():
    tga.manual_seed(0)
    rng = np.random.default_rng(0)
    vocab, length, bos, pad, steps = 8, 5, 1, 0, 600
    model = EncoderDecoder(16, 2, 1, 1, 32, dropout=0.0, src_vocab=vocab, tgt_vocab=vocab, max_len=length + 1,
                        pad_id=pad)  # fmt: skip
    opt = Adam(model.parameters(), lr=1e-2, betas=(0.9, 0.98))
    decay = LambdaLR(opt, lambda k: 1.0 - k / steps)
    for _ in range(steps):
        src, tgt = _sort_batch(rng, 32, length, vocab, pad)
        tgt_in = np.concatenate([np.full((32, 1), bos), tgt[:, :-1]], 1)
        loss = F.cross_entropy(model(src, tgt_in), tgt, ignore_index=pad)
        opt.zero_grad()
        loss.backward()
        opt.step()
        decay.step()
    src, tgt = _sort_batch(rng, 200, length, vocab, pad)
    pred = model.greedy_decode(src, length, bos).detach().numpy()
    real = tgt != pad
    accuracy = (pred == tgt)[real].mean()
    assert accuracy >= 0.9, accuracy


# -- nn.TransformerEncoderLayer / DecoderLayer / Encoder / Decoder against PyTorch -----------------

D, NHEAD, FF, N, T, S = 8, 2, 16, 2, 4, 5

OPTIONS = [
    {},
    {"batch_first": True},
    {"norm_first": True, "activation": "gelu"},
    {"batch_first": True, "norm_first": True, "bias": False},
]
IDS = ["default", "batch_first", "norm_first-gelu", "batch_first-norm_first-nobias"]


def _seq(rng, t, batch_first):
    return rng.standard_normal((N, t, D) if batch_first else (t, N, D))


def _kpm(t):
    m = np.zeros((N, t), bool)
    m[1, -1] = True
    return m


@needs_torch
@pytest.mark.parametrize("kw", OPTIONS, ids=IDS)
def test_encoder_layer_matches_torch(kw, rng):
    ours = nn.TransformerEncoderLayer(D, NHEAD, FF, dropout=0.0, **kw)
    theirs = torch.nn.TransformerEncoderLayer(D, NHEAD, FF, dropout=0.0, **kw)
    causal, kpm = np.triu(np.ones((T, T), bool), 1), _kpm(T)
    assert_matches_torch(ours, theirs, lambda x: ours(x, src_mask=causal, src_key_padding_mask=kpm),
                         lambda x: theirs(x, src_mask=torch.tensor(causal), src_key_padding_mask=torch.tensor(kpm)),
                         [_seq(rng, T, kw.get("batch_first", False))])  # fmt: skip


@needs_torch
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
                         [_seq(rng, T, bf), _seq(rng, S, bf)])  # fmt: skip


@needs_torch
@pytest.mark.filterwarnings("ignore::UserWarning")  # PyTorch's note on nested tensors
def test_encoder_stack_matches_torch(rng):
    ours = nn.TransformerEncoder(nn.TransformerEncoderLayer(D, NHEAD, FF, dropout=0.0), 2, norm=nn.LayerNorm(D))
    theirs = torch.nn.TransformerEncoder(torch.nn.TransformerEncoderLayer(D, NHEAD, FF, dropout=0.0), 2,
                                         norm=torch.nn.LayerNorm(D))  # fmt: skip
    assert list(ours.state_dict())[:2] == ["layers.0.self_attn.in_proj_weight", "layers.0.self_attn.in_proj_bias"]
    kpm = _kpm(T)
    causal = nn.Transformer.generate_square_subsequent_mask(T)  # (is_causal is a hint: both need the mask)
    assert_matches_torch(ours, theirs, lambda x: ours(x, mask=causal, src_key_padding_mask=kpm, is_causal=True),
                         lambda x: theirs(x, mask=torch.nn.Transformer.generate_square_subsequent_mask(T, dtype=x.dtype),
                                          src_key_padding_mask=torch.tensor(kpm), is_causal=True),
                         [_seq(rng, T, False)])  # fmt: skip


@needs_torch
def test_decoder_stack_matches_torch(rng):
    ours = nn.TransformerDecoder(nn.TransformerDecoderLayer(D, NHEAD, FF, dropout=0.0, batch_first=True), 2)
    theirs = torch.nn.TransformerDecoder(
        torch.nn.TransformerDecoderLayer(D, NHEAD, FF, dropout=0.0, batch_first=True), 2
    )
    causal = np.triu(np.ones((T, T), bool), 1)
    assert_matches_torch(ours, theirs, lambda x, m: ours(x, m, tgt_mask=causal, tgt_is_causal=True),
                         lambda x, m: theirs(x, m, tgt_mask=torch.tensor(causal), tgt_is_causal=True),
                         [_seq(rng, T, True), _seq(rng, S, True)])  # fmt: skip


@needs_torch
def test_stack_layers_are_independent_copies():
    layer = nn.TransformerEncoderLayer(D, NHEAD, FF).double()
    enc = nn.TransformerEncoder(layer, 3)
    first, second = enc.layers[0], enc.layers[1]
    assert first.linear1.weight is not second.linear1.weight and first.linear1.weight is not layer.linear1.weight
    np.testing.assert_array_equal(
        first.linear1.weight.detach().numpy(), layer.linear1.weight.detach().numpy()
    )  # PyTorch's copies
    assert first.linear1.weight.dtype == np.float64
    first.linear1.weight.data = first.linear1.weight.data * 0
    assert second.linear1.weight.detach().numpy().any()
    assert len(list(enc.parameters())) == 3 * len(list(layer.parameters()))
    assert enc.norm is None and "norm.weight" not in enc.state_dict()


@needs_torch
def test_defaults_and_children_as_torch():
    ours, theirs = nn.TransformerDecoderLayer(D, NHEAD), torch.nn.TransformerDecoderLayer(D, NHEAD)
    assert [n for n, _ in ours.named_children()] == [n for n, _ in theirs.named_children()]
    assert ours.linear1.weight.shape == (2048, D) and ours.dropout.p == 0.1  # PyTorch's defaults
    assert not ours.batch_first and not ours.norm_first


@needs_torch
def test_dropout_only_while_training(rng):
    layer = nn.TransformerEncoderLayer(D, NHEAD, FF, dropout=0.5).double()
    x = Tensor(_seq(rng, T, False))
    assert not np.allclose(layer(x).detach().numpy(), layer(x).detach().numpy())
    layer.eval()
    np.testing.assert_array_equal(layer(x).detach().numpy(), layer(x).detach().numpy())


@needs_torch
def test_same_body_as_the_batch_first_layer(rng):
    # The PyTorch-convention layer and models.TransformerEncoderLayer share the layer body.
    ours = nn.TransformerEncoderLayer(D, NHEAD, FF, dropout=0.0, batch_first=True, norm_first=True).double()
    old = BatchFirstEncoderLayer(D, NHEAD, FF, norm_first=True).double()
    state = ours.state_dict()
    w, b = state.pop("self_attn.in_proj_weight"), state.pop("self_attn.in_proj_bias")
    for i, name in enumerate("qkv"):
        state[f"self_attn.{name}_proj.weight"] = w[i * D : (i + 1) * D]
        state[f"self_attn.{name}_proj.bias"] = b[i * D : (i + 1) * D]
    old.load_state_dict(state)
    x = Tensor(_seq(rng, T, True))
    np.testing.assert_allclose(
        ours(x, src_mask=nn.Transformer.generate_square_subsequent_mask(T, dtype=tga.float64), is_causal=True)
        .detach()
        .numpy(),
        old(x, is_causal=True).detach().numpy(),
        atol=1e-12,
    )


@needs_torch
def test_callable_activation_and_gradcheck(device, rng):
    layer = nn.TransformerEncoderLayer(4, 2, 6, dropout=0.0, activation=nn.GELU(approximate="tanh")).to(device)
    x = Tensor(rng.standard_normal((3, 1, 4)), device=device)
    assert gradcheck_module(layer, lambda x: layer(x, src_key_padding_mask=np.array([[False, False, True]])), x)


@needs_torch
@pytest.mark.filterwarnings("ignore::UserWarning")  # PyTorch's note on mixed mask types
@pytest.mark.parametrize("norm_first", [False, True])
def test_decomposed_layers_match_torch(norm_first, rng):
    # The same numbers with every composite (attention, softmax, layer_norm) run from primitives.
    ours = nn.TransformerEncoderLayer(D, NHEAD, FF, dropout=0.0, norm_first=norm_first)
    theirs = torch.nn.TransformerEncoderLayer(D, NHEAD, FF, dropout=0.0, norm_first=norm_first)
    kpm = _kpm(T)

    def run(x):
        with tga.decompose():
            return ours(x, src_mask=nn.Transformer.generate_square_subsequent_mask(T), src_key_padding_mask=kpm)

    causal = torch.nn.Transformer.generate_square_subsequent_mask(T, dtype=torch.float64)
    assert_matches_torch(ours, theirs, run, lambda x: theirs(x, src_mask=causal, src_key_padding_mask=torch.tensor(kpm)),
                         [_seq(rng, T, False)])  # fmt: skip


@needs_torch
@pytest.mark.filterwarnings("ignore::UserWarning")  # PyTorch's note on mixed mask types
@pytest.mark.parametrize("kw", OPTIONS, ids=IDS)
def test_nn_transformer_matches_torch(kw, rng):
    # PyTorch's translation tutorial's model: the whole encoder-decoder, its state dict loaded as
    # it is, the causal mask from generate_square_subsequent_mask, padding masks on both sides.
    make = dict(d_model=D, nhead=NHEAD, num_encoder_layers=2, num_decoder_layers=1, dim_feedforward=FF,
                dropout=0.0, **kw)  # fmt: skip
    ours, theirs = nn.Transformer(**make), torch.nn.Transformer(**make)
    causal = nn.Transformer.generate_square_subsequent_mask(T, dtype=np.float64)
    t_causal = torch.nn.Transformer.generate_square_subsequent_mask(T, dtype=torch.float64)
    np.testing.assert_array_equal(causal.detach().numpy(), t_causal.detach().numpy())
    masks = {"src_key_padding_mask": _kpm(S), "tgt_key_padding_mask": _kpm(T), "memory_key_padding_mask": _kpm(S)}
    t_masks = {k: torch.tensor(v) for k, v in masks.items()}
    bf = kw.get("batch_first", False)
    assert_matches_torch(ours, theirs, lambda s, t: ours(s, t, tgt_mask=causal, **masks),
                         lambda s, t: theirs(s, t, tgt_mask=t_causal, **t_masks),
                         [_seq(rng, S, bf), _seq(rng, T, bf)])  # fmt: skip


def test_nn_transformer_initialises_as_pytorchs_and_checks_its_inputs():
    model = nn.Transformer(d_model=8, nhead=2, num_encoder_layers=1, num_decoder_layers=1, dim_feedforward=16)
    w = model.encoder.layers[0].linear1.weight.detach().numpy()
    bound = np.sqrt(6.0 / (8 + 16))  # Xavier-uniform, as PyTorch's _reset_parameters
    assert np.abs(w).max() <= bound and np.abs(w).max() > bound / 2
    assert [n for n, _ in model.named_children()] == ["encoder", "decoder"]
    with pytest.raises(RuntimeError, match="batch number"):
        model(tga.randn(4, 2, 8), tga.randn(3, 1, 8))
    with pytest.raises(RuntimeError, match="d_model"):
        model(tga.randn(4, 2, 6), tga.randn(3, 2, 6))
