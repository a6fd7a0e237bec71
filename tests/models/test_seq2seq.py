"""Seq2Seq with Bahdanau (additive) and Luong (general) attention: one decoder step against
NumPy, teacher forcing and greedy decoding, padding, gradient checks, and a model that
learns to reverse sequences."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import close
from modelcheck import gradcheck_module, gru_numpy, softmax, to_float64

import tinygrad_attn as tga
import tinygrad_attn.functional as F
from tinygrad_attn import Tensor
from tinygrad_attn.models import AdditiveAttention, GeneralAttention, Seq2Seq
from tinygrad_attn.optim import Adam, LambdaLR

KINDS = ["additive", "general"]


def _model(kind, **kw):
    return to_float64(Seq2Seq(src_vocab=7, tgt_vocab=6, emb_dim=3, hidden_size=4, attention=kind, **kw))


def _step_numpy(model, y, s, states, keep=None):
    """One decoder step from the papers' equations, with the model's weights."""
    e = model.tgt_embed.weight.detach().numpy()[y]  # (B, emb)
    lin = lambda layer, x: (
        x @ layer.weight.detach().numpy().T + (layer.bias.detach().numpy() if layer.bias is not None else 0.0)
    )

    def attend(q):
        att = model.attention
        if isinstance(att, AdditiveAttention):  # v . tanh(W q + U k)
            hidden = np.tanh(lin(att.query_proj, q)[:, None] + lin(att.key_proj, states))
            score = lin(att.v, hidden)[..., 0]
        else:  # q . W k
            score = np.einsum("bi,ij,btj->bt", q, att.key_proj.weight.detach().numpy(), states)
        if keep is not None:
            score = np.where(keep, score, -np.inf)
        w = softmax(score)
        return np.einsum("bt,bth->bh", w, states), w

    if model.kind == "additive":  # Bahdanau: attend with the previous state, then the GRU
        c, w = attend(s)
        s = gru_numpy(model.decoder, np.concatenate([e, c], -1), s)
        return lin(model.out, np.concatenate([s, c, e], -1)), s, w
    s = gru_numpy(model.decoder, e, s)  # Luong: the GRU, then attend with the new state
    c, w = attend(s)
    return lin(model.out, np.tanh(lin(model.combine, np.concatenate([c, s], -1)))), s, w


@pytest.mark.parametrize("kind", KINDS)
def test_names(kind):
    names = [n for n, _ in Seq2Seq(7, 6, 3, 4, attention=kind).named_parameters()]
    assert names[:2] == ["src_embed.weight", "tgt_embed.weight"]
    assert "encoder.weight_ih" in names and "decoder.bias_hh" in names
    if kind == "additive":
        assert {"attention.query_proj.weight", "attention.key_proj.weight", "attention.v.weight"} <= set(names)
        assert isinstance(Seq2Seq(7, 6, 3, 4).attention, AdditiveAttention)
    else:
        assert "attention.key_proj.weight" in names and "combine.weight" in names
        assert isinstance(Seq2Seq(7, 6, 3, 4, attention=kind).attention, GeneralAttention)


@pytest.mark.parametrize("kind", KINDS)
def test_teacher_forcing_equals_numpy(kind, device, rng):
    model = _model(kind).to(device)
    src, tgt_in = rng.integers(1, 7, (2, 5)), rng.integers(0, 6, (2, 3))
    logits, weights = model(Tensor(src, device=device), Tensor(tgt_in, device=device), return_attention=True)
    assert logits.shape == (2, 3, 6) and weights.shape == (2, 3, 5)
    states = np.zeros((2, 5, 4))
    h = np.zeros((2, 4))
    emb = model.src_embed.weight.detach().numpy()
    for t in range(5):
        h = gru_numpy(model.encoder, emb[src[:, t]], h)
        states[:, t] = h
    s = h
    for t in range(3):
        out, s, w = _step_numpy(model, tgt_in[:, t], s, states)
        close(logits[:, t], out, atol=1e-10, rtol=1e-9)
        close(weights[:, t], w, atol=1e-10, rtol=1e-9)


@pytest.mark.parametrize("kind", KINDS)
def test_greedy_decode_feeds_back_its_argmax(kind, rng):
    model = _model(kind)
    src = rng.integers(1, 7, (3, 4))
    ids, weights = model.decode(src, 5, bos_id=0, return_attention=True)
    assert ids.shape == (3, 5) and ids.dtype == np.int64 and weights.shape == (3, 5, 4)
    # teacher forcing on the model's own output reproduces the same argmaxes
    tgt_in = np.concatenate([np.zeros((3, 1), np.int64), ids.detach().numpy()[:, :-1]], 1)
    np.testing.assert_array_equal(model(src, tgt_in).detach().numpy().argmax(-1), ids.detach().numpy())


@pytest.mark.parametrize("kind", KINDS)
def test_the_keys_are_projected_once_per_source(kind, rng, monkeypatch):
    # Every decoder step attends over the same encoder states: forward and decode project
    # them once (and the output layer runs once over all steps in forward), with the values
    # of the step-by-step path, which step() keeps for a caller without the projected keys.
    model = _model(kind)
    src, tgt_in = rng.integers(1, 7, (2, 5)), rng.integers(0, 6, (2, 4))
    calls = []
    key_proj = model.attention.key_proj
    monkeypatch.setattr(key_proj, "forward", lambda x, f=key_proj.forward: calls.append(x.shape) or f(x))
    out_calls = []
    monkeypatch.setattr(model.out, "forward", lambda x, f=model.out.forward: out_calls.append(x.shape) or f(x))
    logits = model(src, tgt_in)
    assert calls == [(2, 5, 4)] and out_calls == [(2, 4, 4 if kind == "general" else 2 * 4 + 3)]
    model.decode(src, 3, bos_id=0)
    assert len(calls) == 2
    states, s, mask = model.encode(src)
    for t in range(4):  # step() on its own: it projects the keys itself
        out, s, _ = model.step(tgt_in[:, t], s, states, mask)
        close(logits[:, t], out.detach().numpy(), atol=1e-12)
    assert len(calls) == 2 + 4


@pytest.mark.parametrize("kind", KINDS)
def test_padding_is_ignored(kind):
    model = _model(kind, pad_id=0)
    tgt_in = np.array([[0, 1, 2], [0, 3, 4]])
    src = np.array([[1, 2, 3, 0, 0], [4, 5, 6, 6, 1]])
    a, w = model(src, tgt_in, return_attention=True)
    assert np.all(w.detach().numpy()[0, :, 3:] == 0)  # no weight on padding
    # the same sentences without the padding give the same result
    short, _ = model(np.array([[1, 2, 3]]), tgt_in[:1], return_attention=True)
    close(a[:1], short.detach().numpy(), atol=1e-12)
    # and an explicit mask makes whatever stands there irrelevant
    keep = np.array([[True] * 3 + [False] * 2, [True] * 5])
    b = model(np.array([[1, 2, 3, 5, 6], [4, 5, 6, 6, 1]]), tgt_in, src_mask=keep)
    close(b, a.detach().numpy(), atol=1e-12)


@pytest.mark.slow  # over 2 s on the array-API devices
@pytest.mark.parametrize("kind", KINDS)
def test_gradcheck(kind, device):
    model = Seq2Seq(src_vocab=4, tgt_vocab=3, emb_dim=2, hidden_size=2, attention=kind, attn_dim=2, pad_id=0)
    model = model.to(device)
    src = Tensor(np.array([[1, 2, 3], [3, 1, 0]]), device=device)
    tgt_in = Tensor(np.array([[0, 1], [0, 2]]), device=device)
    assert gradcheck_module(model, model, src, tgt_in)


def test_errors():
    with pytest.raises(ValueError, match="Seq2Seq: attention must be 'additive' or 'general', got 'dot'"):
        Seq2Seq(4, 4, 2, 2, attention="dot")


@pytest.mark.slow
@pytest.mark.parametrize("kind", KINDS)
def test_learns_to_reverse_sequences(kind):
    tga.manual_seed(0)
    rng = np.random.default_rng(0)
    vocab, length, bos = 10, 6, 0
    model = Seq2Seq(vocab, vocab, emb_dim=16, hidden_size=32, attention=kind)
    steps = 500
    opt = Adam(model.parameters(), lr=1e-2)
    decay = LambdaLR(opt, lambda k: 1.0 - k / steps)  # to 0: the last steps settle instead of jitter
    for _ in range(steps):
        src = rng.integers(1, vocab, (32, length))
        tgt = src[:, ::-1]
        tgt_in = np.concatenate([np.full((32, 1), bos), tgt[:, :-1]], 1)
        loss = F.cross_entropy(model(src, tgt_in), tgt)
        opt.zero_grad()
        loss.backward()
        opt.step()
        decay.step()
    src = rng.integers(1, vocab, (200, length))  # unseen sequences
    pred = model.decode(src, length, bos).detach().numpy()
    token_accuracy = (pred == src[:, ::-1]).mean()
    assert token_accuracy >= 0.95, token_accuracy
    assert (pred == src[:, ::-1]).all(1).mean() >= 0.85
