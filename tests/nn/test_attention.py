"""Attention layers: BatchFirstAttention and the score functions of Bahdanau and Luong,
against hand-written NumPy, with masks, and gradient-checked on every device.

``nn.MultiheadAttention`` against PyTorch: layouts, masks of each kind, weights, gradients."""

from __future__ import annotations

import contextlib

import numpy as np
import pytest
from helpers import close
from modelcheck import gradcheck_module, mha_numpy, softmax, to_float64
from torch_oracle import assert_matches_torch, needs_torch, torch_or_absent

import tinygrad_attn as tga
from tinygrad_attn import Tensor, nn
from tinygrad_attn.models import AdditiveAttention, BatchFirstAttention, DotAttention, GeneralAttention

# PyTorch is an optional oracle: the tests that need it carry ``needs_torch`` and skip without it,
# the others still run.
torch = torch_or_absent()


def _x(rng, *shape, device="cpu", dtype=np.float64):
    return Tensor(rng.standard_normal(shape).astype(dtype), device=device)


# -- BatchFirstAttention ---------------------------------------------------------------
def test_mha_parameter_names():
    m = BatchFirstAttention(8, 2)
    names = [n for n, _ in m.named_parameters()]
    assert names == [f"{p}.{w}" for p in ("q_proj", "k_proj", "v_proj", "out_proj") for w in ("weight", "bias")]
    assert [n for n, _ in BatchFirstAttention(8, 2, bias=False).named_parameters()] == [
        "q_proj.weight",
        "k_proj.weight",
        "v_proj.weight",
        "out_proj.weight",
    ]
    m = BatchFirstAttention(8, 2, kdim=3, vdim=5)
    assert m.k_proj.weight.shape == (8, 3) and m.v_proj.weight.shape == (8, 5)


@pytest.mark.parametrize("bias", [True, False])
def test_mha_self_attention_equals_numpy(bias, device, rng):
    m = to_float64(BatchFirstAttention(8, 2, bias=bias).to(device))
    x = _x(rng, 2, 5, 8, device=device)
    out, w = m(x, need_weights=True)
    ref, ref_w = mha_numpy(m, x.detach().numpy(), x.detach().numpy(), x.detach().numpy())
    close(out, ref, atol=1e-10, rtol=1e-9)
    close(w, ref_w, atol=1e-10, rtol=1e-9)
    assert w.shape == (2, 2, 5, 5)
    close(w.sum(-1), np.ones((2, 2, 5)), atol=1e-12)
    close(m(x), ref, atol=1e-10, rtol=1e-9)  # the fused path (no weights) agrees


def test_mha_key_and_value_defaults(device, rng):
    # key defaults to the query, value to the key
    m = to_float64(BatchFirstAttention(8, 4).to(device))
    x, k = _x(rng, 2, 3, 8, device=device), _x(rng, 2, 5, 8, device=device)
    close(m(x), m(x, x, x).detach().numpy(), atol=1e-12, rtol=1e-12)
    close(m(x, k), m(x, k, k).detach().numpy(), atol=1e-12, rtol=1e-12)
    close(m(x, k), mha_numpy(m, x.detach().numpy(), k.detach().numpy(), k.detach().numpy())[0], atol=1e-10, rtol=1e-9)


def test_mha_cross_attention_with_kdim_vdim_equals_numpy(device, rng):
    m = to_float64(BatchFirstAttention(6, 3, kdim=4, vdim=5).to(device))
    q, k, v = _x(rng, 2, 3, 6, device=device), _x(rng, 2, 4, 4, device=device), _x(rng, 2, 4, 5, device=device)
    out, w = m(q, k, v, need_weights=True)
    ref, ref_w = mha_numpy(m, q.detach().numpy(), k.detach().numpy(), v.detach().numpy())
    close(out, ref, atol=1e-10, rtol=1e-9)
    assert out.shape == (2, 3, 6) and w.shape == (2, 3, 3, 4)
    close(w, ref_w, atol=1e-10, rtol=1e-9)


def test_mha_float32(rng):
    m = BatchFirstAttention(8, 2)
    x = _x(rng, 2, 5, 8, dtype=np.float32)
    out = m(x)
    assert out.dtype == np.float32
    close(out, mha_numpy(m, *(x.detach().numpy().astype(np.float64),) * 3)[0], atol=1e-5, rtol=1e-4)


def _masks(rng, b=2, h=2, tq=4, tk=5):
    """The same pattern given in each accepted layout, with its full (B, H, Tq, Tk) form."""
    pattern = rng.random((b, tq, tk)) > 0.4
    pattern[..., 0] = True  # every row keeps one key
    pad = np.ones((b, tk), bool)
    pad[0, 3:] = False
    two_d = rng.random((tq, tk)) > 0.3
    two_d[:, 0] = True
    full = lambda m: np.broadcast_to(m, (b, h, tq, tk))
    return {
        "(Tq, Tk)": (two_d, full(two_d)),
        "(B, 1, Tq, Tk)": (pattern[:, None], full(pattern[:, None])),
        "(B, Tq, Tk)": (pattern, full(pattern[:, None])),
        "(B, 1, 1, Tk) padding": (pad[:, None, None, :], full(pad[:, None, None, :])),
    }


@pytest.mark.parametrize("layout", ["(Tq, Tk)", "(B, 1, Tq, Tk)", "(B, Tq, Tk)", "(B, 1, 1, Tk) padding"])
@pytest.mark.parametrize("as_tensor", [True, False], ids=["tensor", "ndarray"])
def test_mha_boolean_mask_layouts(layout, as_tensor, device, rng):
    m = to_float64(BatchFirstAttention(8, 2).to(device))
    q, kv = _x(rng, 2, 4, 8, device=device), _x(rng, 2, 5, 8, device=device)
    mask, full = _masks(rng)[layout]
    given = Tensor(mask, device=device) if as_tensor else mask
    out, w = m(q, kv, kv, allow=given, need_weights=True)
    ref, ref_w = mha_numpy(m, q.detach().numpy(), kv.detach().numpy(), kv.detach().numpy(), full)
    close(out, ref, atol=1e-10, rtol=1e-9)
    close(w, ref_w, atol=1e-10, rtol=1e-9)
    close(m(q, kv, kv, allow=given), ref, atol=1e-10, rtol=1e-9)


def test_mha_float_mask_is_added_to_scores(device, rng):
    m = to_float64(BatchFirstAttention(8, 2).to(device))
    x = _x(rng, 2, 4, 8, device=device)
    bias = rng.standard_normal((4, 4))
    out = m(x, allow=Tensor(bias, device=device))
    ref, _ = mha_numpy(
        m, x.detach().numpy(), x.detach().numpy(), x.detach().numpy(), np.broadcast_to(bias, (2, 2, 4, 4))
    )
    close(out, ref, atol=1e-10, rtol=1e-9)


def test_mha_causal_equals_lower_triangular_mask(device, rng):
    m = to_float64(BatchFirstAttention(8, 2).to(device))
    x = _x(rng, 2, 5, 8, device=device)
    tril = Tensor(np.tril(np.ones((5, 5), bool)), device=device)
    causal, wc = m(x, is_causal=True, need_weights=True)
    explicit, we = m(x, allow=tril, need_weights=True)
    close(causal, explicit.detach().numpy(), atol=1e-12)
    close(wc, we.detach().numpy(), atol=1e-12)
    assert np.all(wc.detach().numpy()[..., np.triu_indices(5, 1)[0], np.triu_indices(5, 1)[1]] == 0)
    close(m(x, is_causal=True), explicit.detach().numpy(), atol=1e-12)  # fused path
    # the first position sees only itself, so it cannot depend on later positions
    y = x.detach().numpy().copy()
    y[:, 1:] += 1.0
    close(m(Tensor(y, device=device), is_causal=True)[:, 0], causal.detach().numpy()[:, 0], atol=1e-12)


def test_mha_padding_mask_ignores_padded_positions(device, rng):
    m = to_float64(BatchFirstAttention(8, 2).to(device))
    q, kv = _x(rng, 2, 3, 8, device=device), rng.standard_normal((2, 5, 8))
    keep = np.ones((2, 5), bool)
    keep[0, 3:] = False  # sequence 0 has two padded keys
    keep[1, 4:] = False
    mask = Tensor(keep[:, None, None, :], device=device)
    out = m(q, Tensor(kv, device=device), allow=mask).detach().numpy()
    changed = kv.copy()
    changed[~keep] = rng.standard_normal((int((~keep).sum()), 8)) * 100.0
    out2 = m(q, Tensor(changed, device=device), allow=mask).detach().numpy()
    np.testing.assert_allclose(out, out2, atol=1e-12)
    unmasked = m(q, Tensor(changed, device=device)).detach().numpy()
    assert np.abs(unmasked - out).max() > 1e-3  # without the mask the padding does matter


def test_mha_fully_masked_row_is_zero_with_finite_gradients(device, rng):
    m = to_float64(BatchFirstAttention(4, 2).to(device))
    x = Tensor(rng.standard_normal((1, 3, 4)), device=device, requires_grad=True)
    keep = np.ones((3, 3), bool)
    keep[1] = False  # query 1 may attend nothing
    for need in (False, True):
        m.zero_grad()
        res = m(x, allow=Tensor(keep, device=device), need_weights=need)
        out = res[0] if need else res
        if need:
            assert np.all(res[1].detach().numpy()[:, :, 1] == 0)
        # nothing attended: the heads give zeros, so the row is out_proj's bias
        close(out[:, 1], np.broadcast_to(m.out_proj.bias.detach().numpy(), (1, 4)), atol=1e-12)
        assert np.isfinite(out.detach().numpy()).all()
        (out * out).sum().backward()
        assert np.isfinite(x.grad.detach().numpy()).all()
        assert all(np.isfinite(p.grad.detach().numpy()).all() for p in m.parameters())
        x.grad = None


def test_mha_dropout_only_in_training(rng):
    m = BatchFirstAttention(8, 2, dropout=0.5)
    x = _x(rng, 2, 4, 8, dtype=np.float32)
    m.eval()
    a, b = m(x).detach().numpy(), m(x).detach().numpy()
    np.testing.assert_array_equal(a, b)
    m.train()
    assert np.abs(m(x).detach().numpy() - a).max() > 1e-4


def test_mha_shape_errors():
    m = BatchFirstAttention(8, 2)
    with pytest.raises(ValueError, match=r"BatchFirstAttention.*\(2, 3, 7\)"):
        m(Tensor.randn(2, 3, 7))
    with pytest.raises(ValueError, match="BatchFirstAttention.*key"):
        m(Tensor.randn(2, 3, 8), Tensor.randn(2, 4, 8), Tensor.randn(2, 5, 8))
    with pytest.raises(ValueError, match="divisible"):
        BatchFirstAttention(6, 4)
    with pytest.raises(ValueError, match="mask"):
        m(Tensor.randn(2, 3, 8), allow=np.ones((4, 4), bool))


@pytest.mark.parametrize(
    "case",
    ["self", "self_causal", "cross_kdim_vdim_padding", "float_mask", "no_bias"],
)
def test_mha_gradcheck(case, device, rng):
    kw = {"no_bias": {"bias": False}, "cross_kdim_vdim_padding": {"kdim": 3, "vdim": 2}}.get(case, {})
    m = BatchFirstAttention(4, 2, **kw).to(device)
    x = _x(rng, 2, 3, 4, device=device)
    if case == "cross_kdim_vdim_padding":
        k, v = _x(rng, 2, 2, 3, device=device), _x(rng, 2, 2, 2, device=device)
        keep = Tensor(np.array([True, False])[None, None, None, :].repeat(2, 0), device=device)
        assert gradcheck_module(m, lambda x, k, v: m(x, k, v, allow=keep), x, k, v)
    elif case == "float_mask":
        bias = _x(rng, 3, 3, device=device)
        assert gradcheck_module(m, lambda x, b: m(x, allow=b), x, bias)  # the mask's gradient too
    else:
        assert gradcheck_module(m, lambda x: m(x, is_causal=case == "self_causal"), x)


def test_mha_gradcheck_weights_output(device, rng):
    m = BatchFirstAttention(4, 2).to(device)
    x = _x(rng, 1, 3, 4, device=device)
    assert gradcheck_module(m, lambda x: m(x, is_causal=True, need_weights=True)[1], x)


# -- the score functions of the papers -------------------------------------------------
def _score_numpy(att, q, k):
    """The paper's score of each (query, key) pair, in NumPy: (B, Tq, Tk)."""
    if isinstance(att, DotAttention):
        return q @ k.transpose(0, 2, 1) / (np.sqrt(q.shape[-1]) if att.scaled else 1.0)
    if isinstance(att, GeneralAttention):
        w = att.key_proj.weight.detach().numpy()  # (dq, dk)
        return np.einsum("bqi,ij,bkj->bqk", q, w, k)
    wq, uk, v = (
        att.query_proj.weight.detach().numpy(),
        att.key_proj.weight.detach().numpy(),
        att.v.weight.detach().numpy()[0],
    )
    hidden = np.tanh((q @ wq.T)[:, :, None, :] + (k @ uk.T)[:, None, :, :])  # (B, Tq, Tk, h)
    return hidden @ v


SCORES = {
    "dot": lambda: DotAttention(),
    "dot_unscaled": lambda: DotAttention(scaled=False),
    "general": lambda: GeneralAttention(4, 3),
    "additive": lambda: AdditiveAttention(4, 3, 5),
}


def _qkv(name, rng, device, tq=None):
    dk = 4 if name.startswith("dot") else 3
    q = _x(rng, *((2, 4) if tq is None else (2, tq, 4)), device=device)
    return q, _x(rng, 2, 5, dk, device=device), _x(rng, 2, 5, 2, device=device)


@pytest.mark.parametrize("tq", [None, 3], ids=["query_2d", "query_3d"])
@pytest.mark.parametrize("name", sorted(SCORES))
def test_score_attention_equals_numpy(name, tq, device, rng):
    att = to_float64(SCORES[name]().to(device))
    q, k, v = _qkv(name, rng, device, tq)
    keep = np.ones((2, 5), bool)
    keep[1, 2:] = False
    for mask in (None, keep):
        ctx, w = att(q, k, v, mask=None if mask is None else Tensor(mask, device=device))
        q3 = q.detach().numpy() if tq else q.detach().numpy()[:, None]
        s = _score_numpy(att, q3, k.detach().numpy())
        if mask is not None:
            s = np.where(mask[:, None, :], s, -np.inf)
        p = softmax(s)
        ref = p @ v.detach().numpy()
        if not tq:
            ref, p = ref[:, 0], p[:, 0]
        close(ctx, ref, atol=1e-10, rtol=1e-9)
        close(w, p, atol=1e-10, rtol=1e-9)
        close(w.sum(-1), np.ones(w.shape[:-1]), atol=1e-12)


@pytest.mark.parametrize("name", sorted(SCORES))
def test_score_attention_parameter_names(name):
    names = [n for n, _ in SCORES[name]().named_parameters()]
    expected = {"dot": [], "dot_unscaled": [], "general": ["key_proj.weight"]}
    assert names == expected.get(name, ["query_proj.weight", "key_proj.weight", "v.weight"])


@pytest.mark.parametrize("name", sorted(SCORES))
def test_score_attention_fully_masked_row(name, device, rng):
    att = to_float64(SCORES[name]().to(device))
    q, k, v = _qkv(name, rng, device, tq=3)
    q.requires_grad_(True)
    keep = np.ones((2, 3, 5), bool)
    keep[0, 1] = False  # batch 0, query 1: nothing to attend
    ctx, w = att(q, k, v, mask=Tensor(keep, device=device))
    assert np.all(ctx.detach().numpy()[0, 1] == 0) and np.all(w.detach().numpy()[0, 1] == 0)
    assert np.isfinite(ctx.detach().numpy()).all()
    (ctx * ctx).sum().backward()
    assert np.isfinite(q.grad.detach().numpy()).all()


@pytest.mark.parametrize("name", sorted(SCORES))
def test_score_attention_float_mask(name, device, rng):
    att = to_float64(SCORES[name]().to(device))
    q, k, v = _qkv(name, rng, device, tq=3)
    bias = rng.standard_normal((2, 3, 5))
    bias[0, 1] = -np.inf  # a row that may attend nothing
    bias[1, 0, 2:] = -np.inf
    ctx, w = att(q, k, v, mask=Tensor(bias, device=device))
    s = _score_numpy(att, q.detach().numpy(), k.detach().numpy())
    expected_w = np.zeros_like(s)
    for b, i in np.ndindex(2, 3):
        if np.isfinite(bias[b, i]).any():
            expected_w[b, i] = softmax(s[b, i] + bias[b, i])
    close(w, expected_w, atol=1e-10, rtol=1e-9)
    close(ctx, expected_w @ v.detach().numpy(), atol=1e-10, rtol=1e-9)


@pytest.mark.parametrize("name", sorted(SCORES))
def test_score_attention_gradcheck(name, device, rng):
    att = SCORES[name]().to(device)
    q, k, v = _qkv(name, rng, device, tq=2)
    keep = Tensor(np.array([[True, True, True, False, False], [True] * 5]), device=device)
    assert gradcheck_module(att, lambda q, k, v: att(q, k, v, mask=keep)[0], q, k, v)
    assert gradcheck_module(att, lambda q, k, v: att(q[:, 0], k, v)[1], q, k, v)


@pytest.mark.parametrize("name", sorted(SCORES))
def test_score_attention_with_prepared_keys_is_the_same(name, device, rng):
    # A decoder projects its keys once (prepare_keys) and passes them at every step.
    att = to_float64(SCORES[name]().to(device))
    q, k, v = _qkv(name, rng, device, tq=3)
    keep = Tensor(np.array([[True, True, True, False, False], [True] * 5]), device=device)
    pk = att.prepare_keys(k)
    for query in (q, q[:, 0]):
        want = att(query, k, v, mask=keep)
        got = att(query, k, v, mask=keep, prepared_keys=pk)
        for a, b in zip(got, want):
            np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())
    close(att.score(q, k), _score_numpy(att, q.detach().numpy(), k.detach().numpy()), atol=1e-10, rtol=1e-9)


def test_a_score_subclass_that_defines_score_alone_takes_prepared_keys(rng):
    from tinygrad_attn.nn.attention import _ScoreAttention  # noqa: PLC0415  (the score functions' base)

    class Cosine(_ScoreAttention):
        def score(self, q, k):
            return (q / q.norm(dim=-1, keepdim=True)) @ (k / k.norm(dim=-1, keepdim=True)).mT

    att = Cosine()
    q, k, v = _x(rng, 2, 4), _x(rng, 2, 5, 4), _x(rng, 2, 5, 3)
    assert att.prepare_keys(k) is k
    for a, b in zip(att(q, k, v, prepared_keys=att.prepare_keys(k)), att(q, k, v)):
        np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())

    class Half(_ScoreAttention):  # keys prepared, but no score for them: a clear error
        def prepare_keys(self, keys):
            return keys * 2.0

    with pytest.raises(NotImplementedError, match="Half.*score_prepared"):
        Half()(q, k, v)


def test_score_attention_errors():
    with pytest.raises(ValueError, match="AdditiveAttention"):
        AdditiveAttention(4, 3, 5)(Tensor.randn(2, 4), Tensor.randn(2, 5), Tensor.randn(2, 5, 2))
    with pytest.raises(ValueError, match="DotAttention.*4.*3"):
        DotAttention()(Tensor.randn(2, 4), Tensor.randn(2, 5, 3), Tensor.randn(2, 5, 2))
    with pytest.raises(ValueError, match="mask"):
        DotAttention()(Tensor.randn(2, 4), Tensor.randn(2, 5, 4), Tensor.randn(2, 5, 2), mask=np.ones((2, 4), bool))


def test_attention_layers_run_under_decompose(rng):
    m = BatchFirstAttention(4, 2)
    x = _x(rng, 1, 3, 4, dtype=np.float32)
    with tga.decompose():
        y = m(x, is_causal=True)
    close(y, m(x, is_causal=True).detach().numpy(), atol=1e-6)


def test_mha_cache_steps_equal_one_causal_call(device, rng):
    m = to_float64(BatchFirstAttention(8, 2).to(device))
    x = _x(rng, 2, 6, 8, device=device)
    full = m(x, is_causal=True).detach().numpy()
    cache = {}
    steps = [m(x[:, :2], is_causal=True, cache=cache), m(x[:, 2:3], is_causal=True, cache=cache),
             m(x[:, 3:6], is_causal=True, cache=cache)]  # fmt: skip
    close(np.concatenate([s.detach().numpy() for s in steps], 1), full, atol=1e-12)
    assert cache["k"].shape == (2, 2, 6, 4)


# -- nn.MultiheadAttention against PyTorch ---------------------------------------------------------

E, H, L, S, N = 8, 2, 4, 5, 3


def _inputs(rng, batch_first, self_attn, kdim=E):
    shape = (lambda t, e: (N, t, e)) if batch_first else (lambda t, e: (t, N, e))
    q = rng.standard_normal(shape(L, E))
    if self_attn:
        return [q]
    return [q, rng.standard_normal(shape(S, kdim)), rng.standard_normal(shape(S, kdim))]


def _torch_masks(rng, kind, tk):
    """(attn_mask, key_padding_mask) as NumPy arrays in PyTorch's sense; never a fully masked row."""
    kpm = np.zeros((N, tk), bool)
    kpm[0, -1], kpm[1, -2:] = True, True
    if kind == "none":
        return None, None
    if kind == "bool2d":
        am = rng.random((L, tk)) < 0.3
        am[:, 0] = False
        return am, None
    if kind == "float3d":
        return rng.standard_normal((N * H, L, tk)), None
    if kind == "kpm":
        return None, kpm
    if kind == "bool2d+kpm":
        return np.triu(np.ones((L, tk), bool), 1), kpm
    if kind == "float2d+floatkpm":
        return rng.standard_normal((L, tk)), np.where(kpm, -np.inf, 0.0)
    if kind == "float3d+kpm":
        return rng.standard_normal((N * H, L, tk)), kpm
    raise AssertionError(kind)


MASKS = ["none", "bool2d", "float3d", "kpm", "bool2d+kpm", "float2d+floatkpm", "float3d+kpm"]


@needs_torch
@pytest.mark.filterwarnings("ignore::UserWarning")  # PyTorch's note on mixed mask types
@pytest.mark.parametrize("masks", MASKS)
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("self_attn", [True, False], ids=["self", "cross"])
def test_matches_torch(masks, batch_first, self_attn, rng):
    ours = nn.MultiheadAttention(E, H, batch_first=batch_first)
    theirs = torch.nn.MultiheadAttention(E, H, batch_first=batch_first)
    arrays = _inputs(rng, batch_first, self_attn)
    am, kpm = _torch_masks(rng, masks, L if self_attn else S)

    def run(module, as_mask):
        def f(*xs):
            q, k, v = (xs[0],) * 3 if self_attn else xs
            return module(q, k, v, key_padding_mask=as_mask(kpm), attn_mask=as_mask(am))

        return f

    assert_matches_torch(ours, theirs, run(ours, lambda m: m), run(theirs, lambda m: None if m is None else
                                                                      torch.tensor(m)), arrays)  # fmt: skip


@needs_torch
@pytest.mark.parametrize("decomposed", [False, True])
@pytest.mark.parametrize("average", [True, False])
@pytest.mark.parametrize("need_weights", [True, False])
def test_weights_match_torch(need_weights, average, decomposed, rng):
    ours, theirs = nn.MultiheadAttention(E, H), torch.nn.MultiheadAttention(E, H)
    arrays = _inputs(rng, False, False)
    am, kpm = _torch_masks(rng, "bool2d+kpm", S)
    kw = {"need_weights": need_weights, "average_attn_weights": average}

    def ours_run(q, k, v):
        with tga.decompose() if decomposed else contextlib.nullcontext():
            return ours(q, k, v, key_padding_mask=kpm, attn_mask=am, **kw)

    theirs_run = lambda q, k, v: theirs(q, k, v, key_padding_mask=torch.tensor(kpm), attn_mask=torch.tensor(am), **kw)  # noqa: E731
    assert_matches_torch(ours, theirs, ours_run, theirs_run, arrays)
    out, w = ours(*(Tensor(a) for a in arrays), **kw)
    assert (w is None) == (not need_weights)
    if need_weights:
        assert w.shape == ((N, L, S) if average else (N, H, L, S))


@needs_torch
def test_kdim_vdim_match_torch(rng):
    ours, theirs = nn.MultiheadAttention(E, H, kdim=6, vdim=3), torch.nn.MultiheadAttention(E, H, kdim=6, vdim=3)
    assert [n for n, _ in ours.named_parameters()] == [
        "q_proj_weight", "k_proj_weight", "v_proj_weight", "in_proj_bias", "out_proj.weight", "out_proj.bias",
    ]  # fmt: skip
    q, k, v = rng.standard_normal((L, N, E)), rng.standard_normal((S, N, 6)), rng.standard_normal((S, N, 3))
    assert_matches_torch(ours, theirs, lambda *x: ours(*x), lambda *x: theirs(*x), [q, k, v])


@needs_torch
@pytest.mark.filterwarnings("ignore::UserWarning")  # PyTorch's note on mixed mask types
@pytest.mark.parametrize("masks", ["none", "bool2d", "float3d", "bool2d+kpm", "float2d+floatkpm"])
@pytest.mark.parametrize("kdim", [E, 6], ids=["kdim=E", "kdim=6"])
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize(("bias_kv", "zero_attn"), [(True, False), (False, True), (True, True)])
@pytest.mark.parametrize("average", [True, False])
def test_add_bias_kv_and_zero_attn_match_torch(bias_kv, zero_attn, average, batch_first, kdim, masks, rng):
    kw = {"add_bias_kv": bias_kv, "add_zero_attn": zero_attn, "batch_first": batch_first, "kdim": kdim, "vdim": kdim}
    ours, theirs = nn.MultiheadAttention(E, H, **kw), torch.nn.MultiheadAttention(E, H, **kw)
    assert [(n, p.shape) for n, p in ours.named_parameters()] == [
        (n, tuple(p.shape)) for n, p in theirs.named_parameters()
    ]
    arrays = _inputs(rng, batch_first, False, kdim)
    am, kpm = _torch_masks(rng, masks, S)
    as_t = lambda m: None if m is None else torch.tensor(m)  # noqa: E731
    # (the weights, per head or averaged, include the extra keys' columns, as PyTorch's)
    assert_matches_torch(
        ours, theirs,
        lambda q, k, v: ours(q, k, v, key_padding_mask=kpm, attn_mask=am, average_attn_weights=average),
        lambda q, k, v: theirs(q, k, v, key_padding_mask=as_t(kpm), attn_mask=as_t(am), average_attn_weights=average),
        arrays,
    )  # fmt: skip


@needs_torch
def test_add_bias_kv_draws_and_unbatched_match_torch(rng):
    tga.manual_seed(3)
    torch.manual_seed(3)
    ours = nn.MultiheadAttention(E, H, add_bias_kv=True, add_zero_attn=True)
    theirs = torch.nn.MultiheadAttention(E, H, add_bias_kv=True, add_zero_attn=True)
    for n, p in theirs.named_parameters():  # PyTorch's numbers for one seed, the learnt key and value too
        np.testing.assert_allclose(
            dict(ours.named_parameters())[n].detach().numpy(), p.detach().numpy(), rtol=1e-6, atol=1e-7
        )
    x = rng.standard_normal((L, E))
    assert_matches_torch(ours, theirs, lambda x: ours(x, x, x), lambda x: theirs(x, x, x), [x])


@needs_torch
def test_unbatched_and_causal_match_torch(rng):
    ours, theirs = nn.MultiheadAttention(E, H, bias=False), torch.nn.MultiheadAttention(E, H, bias=False)
    x = rng.standard_normal((L, E))
    causal = np.triu(np.ones((L, L), bool), 1)
    t_causal = torch.tensor(causal)
    assert_matches_torch(ours, theirs, lambda x: ours(x, x, x, attn_mask=causal, is_causal=True),
                         lambda x: theirs(x, x, x, attn_mask=t_causal, is_causal=True), [x])  # fmt: skip
    # is_causal alone: PyTorch asks for the mask (RuntimeError), and so do we
    xt, tt = Tensor(x), torch.tensor(x)
    with pytest.raises(RuntimeError, match="need attn_mask"):
        ours(xt, xt, xt, is_causal=True)
    with pytest.raises(RuntimeError, match="Need attn_mask"):
        theirs(tt, tt, tt, is_causal=True)


@needs_torch
def test_parameters_init_and_errors():
    m = nn.MultiheadAttention(E, H)
    assert [(n, p.shape) for n, p in m.named_parameters()] == [
        ("in_proj_weight", (3 * E, E)), ("in_proj_bias", (3 * E,)), ("out_proj.weight", (E, E)), ("out_proj.bias", (E,)),
    ]  # fmt: skip
    assert not m.in_proj_bias.detach().numpy().any() and not m.out_proj.bias.detach().numpy().any()  # zeros, as PyTorch
    assert np.abs(m.in_proj_weight.detach().numpy()).max() <= np.sqrt(6 / (4 * E))  # Xavier-uniform
    with pytest.raises(ValueError, match="attn_mask of shape"):
        x = Tensor.randn(L, N, E)
        m(x, x, x, attn_mask=np.zeros((L, L + 1), bool))
    with pytest.raises(ValueError, match=r"need \(L, N, E\)"):
        m(Tensor.randn(L, N, E + 1), x, x)


@needs_torch
def test_shares_the_heads_with_batch_first_attention(rng):
    # The batch-first class and the PyTorch face run the same heads: equal weights, equal outputs.
    ours = nn.MultiheadAttention(E, H, batch_first=True).double()
    old = BatchFirstAttention(E, H).double()
    w, b = ours.in_proj_weight.detach().numpy(), ours.in_proj_bias.detach().numpy()
    old.load_state_dict({
        "q_proj.weight": w[:E], "k_proj.weight": w[E : 2 * E], "v_proj.weight": w[2 * E :],
        "q_proj.bias": b[:E] + 0.1, "k_proj.bias": b[E : 2 * E], "v_proj.bias": b[2 * E :],
        "out_proj.weight": ours.out_proj.weight.detach().numpy(), "out_proj.bias": ours.out_proj.bias.detach().numpy(),
    })  # fmt: skip
    ours.in_proj_bias.data = ours.in_proj_bias.data + np.r_[np.full(E, 0.1), np.zeros(2 * E)]
    x = Tensor(rng.standard_normal((N, L, E)))
    kpm = np.zeros((N, L), bool)
    kpm[:, -1] = True
    out, w_ours = ours(x, x, x, key_padding_mask=kpm, average_attn_weights=False)
    ref, w_ref = old(x, allow=~kpm[:, None, None, :], need_weights=True)
    np.testing.assert_allclose(out.detach().numpy(), ref.detach().numpy(), atol=1e-12)
    np.testing.assert_allclose(w_ours.detach().numpy(), w_ref.detach().numpy(), atol=1e-12)


@needs_torch
def test_gradcheck_on_every_device(device, rng):
    m = nn.MultiheadAttention(4, 2, batch_first=True).to(device)
    q, kv = (Tensor(rng.standard_normal((1, t, 4)), device=device) for t in (2, 3))
    am = Tensor(rng.standard_normal((2, 3)), device=device)
    kpm = Tensor(np.array([[False, False, True]]), device=device)
    assert gradcheck_module(m, lambda q, kv: m(q, kv, kv, key_padding_mask=kpm, attn_mask=am)[0], q, kv)


@needs_torch
def test_dropout_on_the_weights_only_while_training(rng):
    m = nn.MultiheadAttention(E, H, dropout=0.5).double()
    x = Tensor(rng.standard_normal((L, N, E)))
    (a, wa), (b, _) = m(x, x, x, average_attn_weights=False), m(x, x, x)
    assert not np.allclose(a.detach().numpy(), b.detach().numpy())
    assert (wa.detach().numpy() == 0).any()  # the weights returned are the dropped-out ones, as PyTorch's
    m.eval()
    (a, wa), (b, _) = m(x, x, x), m(x, x, x)
    np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())
    np.testing.assert_allclose(wa.detach().numpy().sum(-1), 1.0)
