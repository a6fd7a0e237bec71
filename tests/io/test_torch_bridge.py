"""The PyTorch bridge: names and layouts both ways, bit for bit, and our BatchFirstAttention
loaded from a PyTorch state dict computing what PyTorch's documented formula computes."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tinygrad_attn import Tensor
from tinygrad_attn.nn import torch_bridge as tb

D, FF = 8, 16

# PyTorch's state-dict keys, written out by hand from nn.MultiheadAttention,
# nn.TransformerEncoderLayer and nn.TransformerDecoderLayer.
TORCH_MHA = ["in_proj_weight", "in_proj_bias", "out_proj.weight", "out_proj.bias"]
TORCH_ENCODER = [f"self_attn.{k}" for k in TORCH_MHA] + [
    "linear1.weight", "linear1.bias", "linear2.weight", "linear2.bias",
    "norm1.weight", "norm1.bias", "norm2.weight", "norm2.bias",
]  # fmt: skip
TORCH_DECODER = TORCH_ENCODER + [f"multihead_attn.{k}" for k in TORCH_MHA] + ["norm3.weight", "norm3.bias"]


def _torch_shapes(kdim=D, vdim=D, bias=True):
    mha = {"out_proj.weight": (D, D)}
    if kdim == vdim == D:
        mha["in_proj_weight"] = (3 * D, D)
    else:
        mha.update(q_proj_weight=(D, D), k_proj_weight=(D, kdim), v_proj_weight=(D, vdim))
    if bias:
        mha.update({"in_proj_bias": (3 * D,), "out_proj.bias": (D,)})
    return mha


def _layer_shapes(prefixes):
    out = {}
    for p in prefixes:
        out.update({p + k: s for k, s in _torch_shapes().items()})
    out.update({"linear1.weight": (FF, D), "linear1.bias": (FF,), "linear2.weight": (D, FF), "linear2.bias": (D,)})
    for n in ("norm1", "norm2", "norm3")[: len(prefixes) + 1]:
        out.update({f"{n}.weight": (D,), f"{n}.bias": (D,)})
    return out


SHAPES = {
    "mha": _torch_shapes(),
    "encoder": _layer_shapes(["self_attn."]),
    "decoder": _layer_shapes(["self_attn.", "multihead_attn."]),
}


def _random(rng, shapes, dtype=np.float32):
    return {k: rng.standard_normal(s).astype(dtype) for k, s in shapes.items()}


def _assert_bits(a, b):
    assert sorted(a) == sorted(b)
    for k in a:
        assert a[k].dtype == b[k].dtype and a[k].shape == b[k].shape and a[k].tobytes() == b[k].tobytes(), k


def test_torch_key_lists():
    assert sorted(SHAPES["mha"]) == sorted(TORCH_MHA)
    assert sorted(SHAPES["encoder"]) == sorted(TORCH_ENCODER)
    assert sorted(SHAPES["decoder"]) == sorted(TORCH_DECODER)


def test_mha_names_and_split(rng):
    sd = _random(rng, SHAPES["mha"])
    ours = tb.from_torch_mha(sd)
    assert sorted(ours) == sorted(
        ["q_proj.weight", "q_proj.bias", "k_proj.weight", "k_proj.bias", "v_proj.weight", "v_proj.bias",
         "out_proj.weight", "out_proj.bias"]
    )  # fmt: skip
    w, b = sd["in_proj_weight"], sd["in_proj_bias"]
    np.testing.assert_array_equal(ours["q_proj.weight"], w[:D])
    np.testing.assert_array_equal(ours["k_proj.weight"], w[D : 2 * D])
    np.testing.assert_array_equal(ours["v_proj.bias"], b[2 * D :])
    np.testing.assert_array_equal(ours["out_proj.weight"], sd["out_proj.weight"])


@pytest.mark.parametrize("kind", ["mha", "encoder", "decoder"])
def test_round_trips_bit_for_bit(rng, kind):
    torch_sd = _random(rng, SHAPES[kind])
    ours = tb.from_torch(torch_sd, kind)
    _assert_bits(tb.to_torch(ours, kind), torch_sd)  # torch -> ours -> torch
    _assert_bits(tb.from_torch(tb.to_torch(ours, kind), kind), ours)  # ours -> torch -> ours
    if kind == "decoder":
        assert "cross_attn.k_proj.weight" in ours and not any(k.startswith("multihead_attn") for k in ours)


@pytest.mark.parametrize("kdim, vdim, bias", [(5, 3, True), (D, 4, True), (D, D, False), (6, 6, False)])
def test_separate_projections_and_no_bias(rng, kdim, vdim, bias):
    torch_sd = _random(rng, _torch_shapes(kdim, vdim, bias), np.float64)
    ours = tb.from_torch_mha(torch_sd)
    assert ours["k_proj.weight"].shape == (D, kdim) and ours["v_proj.weight"].shape == (D, vdim)
    assert ("q_proj.bias" in ours) == bias
    _assert_bits(tb.to_torch_mha(ours), torch_sd)


@settings(max_examples=30, deadline=None)
@given(
    d=st.integers(1, 6),
    kdim=st.integers(1, 6),
    vdim=st.integers(1, 6),
    bias=st.booleans(),
    dtype=st.sampled_from([np.float16, np.float32, np.float64]),
)
def test_any_mha_round_trips(d, kdim, vdim, bias, dtype):
    rng = np.random.default_rng(d * 100 + kdim * 10 + vdim)
    ours = {"q_proj.weight": (d, d), "k_proj.weight": (d, kdim), "v_proj.weight": (d, vdim), "out_proj.weight": (d, d)}
    if bias:
        ours.update({f"{n}_proj.bias": (d,) for n in ("q", "k", "v", "out")})
    ours = _random(rng, ours, dtype)
    torch_sd = tb.to_torch_mha(ours)
    assert ("in_proj_weight" in torch_sd) == (kdim == vdim == d)
    _assert_bits(tb.from_torch_mha(torch_sd), ours)


def test_encoder_and_decoder_wrappers(rng):
    enc = _random(rng, SHAPES["encoder"])
    _assert_bits(tb.to_torch_encoder_layer(tb.from_torch_encoder_layer(enc)), enc)
    dec = _random(rng, SHAPES["decoder"])
    _assert_bits(tb.to_torch_decoder_layer(tb.from_torch_decoder_layer(dec)), dec)


def test_errors_name_the_keys(rng):
    sd = _random(rng, SHAPES["encoder"])
    with pytest.raises(KeyError, match="unexpected keys.*'extra.weight'"):
        tb.from_torch({**sd, "extra.weight": np.zeros(1)}, "encoder")
    del sd["self_attn.in_proj_weight"]
    with pytest.raises(KeyError, match="self_attn.q_proj_weight"):
        tb.from_torch(sd, "encoder")
    with pytest.raises(ValueError, match="bias_k"):
        tb.from_torch_mha({**_random(rng, SHAPES["mha"]), "bias_k": np.zeros((1, 1, D))})
    with pytest.raises(ValueError, match="kind must be one of"):
        tb.from_torch({}, "lstm")


# -- numerics: PyTorch's documented MHA forward, in NumPy ----------------------------------
def torch_mha_forward(sd, query, key, value, n_heads, allowed=None):
    """nn.MultiheadAttention(batch_first=True) from its documentation: in_proj, heads,
    softmax(q k^T / sqrt(d_head)), concat, out_proj. ``allowed``: True where a query may attend."""
    d = query.shape[-1]
    if "in_proj_weight" in sd:
        wq, wk, wv = np.split(sd["in_proj_weight"], 3)
    else:
        wq, wk, wv = sd["q_proj_weight"], sd["k_proj_weight"], sd["v_proj_weight"]
    bq, bk, bv = np.split(sd["in_proj_bias"], 3)
    q, k, v = query @ wq.T + bq, key @ wk.T + bk, value @ wv.T + bv
    hd = d // n_heads

    def heads(x):  # (B, T, d) -> (B, H, T, hd)
        return x.reshape(x.shape[0], x.shape[1], n_heads, hd).transpose(0, 2, 1, 3)

    s = heads(q) @ heads(k).transpose(0, 1, 3, 2) / math.sqrt(hd)  # (B, H, Tq, Tk)
    if allowed is not None:
        s = np.where(allowed, s, -np.inf)
    w = np.exp(s - s.max(-1, keepdims=True))
    w = w / w.sum(-1, keepdims=True)
    o = (w @ heads(v)).transpose(0, 2, 1, 3).reshape(query.shape[0], query.shape[1], d)
    return o @ sd["out_proj.weight"].T + sd["out_proj.bias"]


@pytest.mark.parametrize("kdim, vdim, masked", [(None, None, False), (None, None, True), (5, 3, True)])
def test_mha_loaded_from_torch_matches_torch_formula(rng, device, kdim, vdim, masked):
    from tinygrad_attn.models import BatchFirstAttention

    n_heads, B, Tq, Tk = 2, 2, 3, 4
    kd, vd = kdim or D, vdim or D
    torch_sd = _random(rng, _torch_shapes(kd, vd), np.float64)
    mha = BatchFirstAttention(D, n_heads, kdim=kdim, vdim=vdim).double().to(device)
    mha.load_state_dict(tb.from_torch_mha(torch_sd))
    q = rng.standard_normal((B, Tq, D))
    k = rng.standard_normal((B, Tk, kd))
    v = rng.standard_normal((B, Tk, vd))
    allowed = None
    if masked:  # key padding: the last key of the first sequence is padding
        allowed = np.ones((B, 1, 1, Tk), bool)
        allowed[0, ..., -1] = False
    ref = torch_mha_forward(torch_sd, q, k, v, n_heads, allowed)
    mask = Tensor(allowed, device=device) if masked else None
    out = mha(Tensor(q, device=device), Tensor(k, device=device), Tensor(v, device=device), allow=mask)
    np.testing.assert_allclose(out.detach().numpy(), ref, rtol=1e-10, atol=1e-10)
    _assert_bits(tb.to_torch_mha(mha.state_dict()), torch_sd)  # and back, bit for bit


def _np_layer_norm(x, sd, name):
    xc = x - x.mean(-1, keepdims=True)
    return xc / np.sqrt((xc * xc).mean(-1, keepdims=True) + 1e-5) * sd[f"{name}.weight"] + sd[f"{name}.bias"]


def _np_feed_forward(x, sd):
    h = np.maximum(x @ sd["linear1.weight"].T + sd["linear1.bias"], 0.0)
    return h @ sd["linear2.weight"].T + sd["linear2.bias"]


def _sub(sd, prefix):
    return {k[len(prefix) :]: v for k, v in sd.items() if k.startswith(prefix)}


def test_encoder_layer_loaded_from_torch_matches_torch_formula(rng, device):
    """nn.TransformerEncoderLayer(norm_first=False): x = norm1(x + sa(x)); x = norm2(x + ff(x))."""
    from tinygrad_attn.models import EncoderBlock

    sd = _random(rng, SHAPES["encoder"], np.float64)
    layer = EncoderBlock(D, 2, FF).double().to(device)
    layer.load_state_dict(tb.from_torch_encoder_layer(sd))
    x = rng.standard_normal((2, 3, D))
    h = _np_layer_norm(x + torch_mha_forward(_sub(sd, "self_attn."), x, x, x, 2), sd, "norm1")
    ref = _np_layer_norm(h + _np_feed_forward(h, sd), sd, "norm2")
    np.testing.assert_allclose(layer(Tensor(x, device=device)).detach().numpy(), ref, rtol=1e-10, atol=1e-10)


def test_decoder_layer_loaded_from_torch_matches_torch_formula(rng, device):
    """nn.TransformerDecoderLayer(norm_first=False) with a causal self-attention mask."""
    from tinygrad_attn.models import DecoderBlock

    sd = _random(rng, SHAPES["decoder"], np.float64)
    layer = DecoderBlock(D, 2, FF).double().to(device)
    layer.load_state_dict(tb.from_torch_decoder_layer(sd))
    x, mem = rng.standard_normal((2, 3, D)), rng.standard_normal((2, 4, D))
    causal = np.tril(np.ones((3, 3), bool))
    h = _np_layer_norm(x + torch_mha_forward(_sub(sd, "self_attn."), x, x, x, 2, causal), sd, "norm1")
    h = _np_layer_norm(h + torch_mha_forward(_sub(sd, "multihead_attn."), h, mem, mem, 2), sd, "norm2")
    ref = _np_layer_norm(h + _np_feed_forward(h, sd), sd, "norm3")
    out = layer(Tensor(x, device=device), Tensor(mem, device=device), is_causal=True)
    np.testing.assert_allclose(out.detach().numpy(), ref, rtol=1e-10, atol=1e-10)
