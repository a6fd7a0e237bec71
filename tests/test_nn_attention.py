"""``nn.MultiheadAttention`` against PyTorch: layouts, masks of each kind, weights, gradients."""

from __future__ import annotations

import contextlib

import numpy as np
import pytest
from modelcheck import gradcheck_module
from torch_oracle import assert_matches_torch

import tinygrad_attn as tga
from tinygrad_attn import Tensor, nn
from tinygrad_attn.models import BatchFirstAttention

torch = pytest.importorskip("torch")

E, H, L, S, N = 8, 2, 4, 5, 3


def _inputs(rng, batch_first, self_attn, kdim=E):
    shape = (lambda t, e: (N, t, e)) if batch_first else (lambda t, e: (t, N, e))
    q = rng.standard_normal(shape(L, E))
    if self_attn:
        return [q]
    return [q, rng.standard_normal(shape(S, kdim)), rng.standard_normal(shape(S, kdim))]


def _masks(rng, kind, tk):
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


@pytest.mark.filterwarnings("ignore::UserWarning")  # PyTorch's note on mixed mask types
@pytest.mark.parametrize("masks", MASKS)
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("self_attn", [True, False], ids=["self", "cross"])
def test_matches_torch(masks, batch_first, self_attn, rng):
    ours = nn.MultiheadAttention(E, H, batch_first=batch_first)
    theirs = torch.nn.MultiheadAttention(E, H, batch_first=batch_first)
    arrays = _inputs(rng, batch_first, self_attn)
    am, kpm = _masks(rng, masks, L if self_attn else S)

    def run(module, as_mask):
        def f(*xs):
            q, k, v = (xs[0],) * 3 if self_attn else xs
            return module(q, k, v, key_padding_mask=as_mask(kpm), attn_mask=as_mask(am))

        return f

    assert_matches_torch(ours, theirs, run(ours, lambda m: m), run(theirs, lambda m: None if m is None else
                                                                      torch.tensor(m)), arrays)  # fmt: skip


@pytest.mark.parametrize("decomposed", [False, True])
@pytest.mark.parametrize("average", [True, False])
@pytest.mark.parametrize("need_weights", [True, False])
def test_weights_match_torch(need_weights, average, decomposed, rng):
    ours, theirs = nn.MultiheadAttention(E, H), torch.nn.MultiheadAttention(E, H)
    arrays = _inputs(rng, False, False)
    am, kpm = _masks(rng, "bool2d+kpm", S)
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


def test_kdim_vdim_match_torch(rng):
    ours, theirs = nn.MultiheadAttention(E, H, kdim=6, vdim=3), torch.nn.MultiheadAttention(E, H, kdim=6, vdim=3)
    assert [n for n, _ in ours.named_parameters()] == [
        "q_proj_weight", "k_proj_weight", "v_proj_weight", "in_proj_bias", "out_proj.weight", "out_proj.bias",
    ]  # fmt: skip
    q, k, v = rng.standard_normal((L, N, E)), rng.standard_normal((S, N, 6)), rng.standard_normal((S, N, 3))
    assert_matches_torch(ours, theirs, lambda *x: ours(*x), lambda *x: theirs(*x), [q, k, v])


def test_unbatched_and_causal_match_torch(rng):
    ours, theirs = nn.MultiheadAttention(E, H, bias=False), torch.nn.MultiheadAttention(E, H, bias=False)
    x = rng.standard_normal((L, E))
    causal = np.triu(np.ones((L, L), bool), 1)
    t_causal = torch.tensor(causal)
    assert_matches_torch(ours, theirs, lambda x: ours(x, x, x, attn_mask=causal, is_causal=True),
                         lambda x: theirs(x, x, x, attn_mask=t_causal, is_causal=True), [x])  # fmt: skip
    # is_causal alone (PyTorch asks for the mask too) masks the future just the same.
    xt = Tensor(x)
    a, wa = ours(xt, xt, xt, is_causal=True)
    b, wb = ours(xt, xt, xt, attn_mask=causal)
    np.testing.assert_allclose(a.numpy(), b.numpy(), atol=1e-12)
    assert a.shape == (L, E) and wa.shape == (L, L) and not np.triu(wa.numpy(), 1).any()


def test_parameters_init_and_errors():
    m = nn.MultiheadAttention(E, H)
    assert [(n, p.shape) for n, p in m.named_parameters()] == [
        ("in_proj_weight", (3 * E, E)), ("in_proj_bias", (3 * E,)), ("out_proj.weight", (E, E)), ("out_proj.bias", (E,)),
    ]  # fmt: skip
    assert not m.in_proj_bias.numpy().any() and not m.out_proj.bias.numpy().any()  # zeros, as PyTorch
    assert np.abs(m.in_proj_weight.numpy()).max() <= np.sqrt(6 / (4 * E))  # Xavier-uniform
    with pytest.raises(NotImplementedError, match="add_bias_kv"):
        nn.MultiheadAttention(E, H, add_bias_kv=True)
    with pytest.raises(ValueError, match="attn_mask of shape"):
        x = Tensor.randn(L, N, E)
        m(x, x, x, attn_mask=np.zeros((L, L + 1), bool))
    with pytest.raises(ValueError, match=r"need \(L, N, E\)"):
        m(Tensor.randn(L, N, E + 1), x, x)


def test_shares_the_heads_with_batch_first_attention(rng):
    # The batch-first class and the PyTorch face run the same heads: equal weights, equal outputs.
    ours = nn.MultiheadAttention(E, H, batch_first=True).double()
    old = BatchFirstAttention(E, H).double()
    w, b = ours.in_proj_weight.numpy(), ours.in_proj_bias.numpy()
    old.load_state_dict({
        "q_proj.weight": w[:E], "k_proj.weight": w[E : 2 * E], "v_proj.weight": w[2 * E :],
        "q_proj.bias": b[:E] + 0.1, "k_proj.bias": b[E : 2 * E], "v_proj.bias": b[2 * E :],
        "out_proj.weight": ours.out_proj.weight.numpy(), "out_proj.bias": ours.out_proj.bias.numpy(),
    })  # fmt: skip
    ours.in_proj_bias.data = ours.in_proj_bias.data + np.r_[np.full(E, 0.1), np.zeros(2 * E)]
    x = Tensor(rng.standard_normal((N, L, E)))
    kpm = np.zeros((N, L), bool)
    kpm[:, -1] = True
    out, w_ours = ours(x, x, x, key_padding_mask=kpm, average_attn_weights=False)
    ref, w_ref = old(x, allow=~kpm[:, None, None, :], need_weights=True)
    np.testing.assert_allclose(out.numpy(), ref.numpy(), atol=1e-12)
    np.testing.assert_allclose(w_ours.numpy(), w_ref.numpy(), atol=1e-12)


def test_gradcheck_on_every_device(device, rng):
    m = nn.MultiheadAttention(4, 2, batch_first=True).to(device)
    q, kv = (Tensor(rng.standard_normal((1, t, 4)), device=device) for t in (2, 3))
    am = Tensor(rng.standard_normal((2, 3)), device=device)
    kpm = Tensor(np.array([[False, False, True]]), device=device)
    assert gradcheck_module(m, lambda q, kv: m(q, kv, kv, key_padding_mask=kpm, attn_mask=am)[0], q, kv)


def test_dropout_on_the_weights_only_while_training(rng):
    m = nn.MultiheadAttention(E, H, dropout=0.5).double()
    x = Tensor(rng.standard_normal((L, N, E)))
    (a, wa), (b, _) = m(x, x, x, average_attn_weights=False), m(x, x, x)
    assert not np.allclose(a.numpy(), b.numpy())
    assert (wa.numpy() == 0).any()  # the weights returned are the dropped-out ones, as PyTorch's
    m.eval()
    (a, wa), (b, _) = m(x, x, x), m(x, x, x)
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    np.testing.assert_allclose(wa.numpy().sum(-1), 1.0)
