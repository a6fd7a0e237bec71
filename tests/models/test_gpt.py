"""GPT: names and tying, causality, generation (greedy, temperature, top-k), a gradient check,
and a tiny model that memorises a repeated sequence."""

from __future__ import annotations

import numpy as np
import pytest
from modelcheck import gradcheck_module, to_float64

import tinygrad_attn as tga
import tinygrad_attn.functional as F
from tinygrad_attn import Tensor
from tinygrad_attn.models import GPT
from tinygrad_attn.optim import Adam


def _gpt(**kw):
    args = dict(vocab_size=7, d_model=8, n_heads=2, n_layers=2, max_len=6)
    args.update(kw)
    return GPT(**args)


def test_names_and_tied_weights():
    tied, untied = _gpt(), _gpt(tie_weights=False)
    names = [n for n, _ in tied.named_parameters()]
    assert names[:2] == ["tok_emb.weight", "pos_emb.weight"]
    assert "blocks.1.self_attn.q_proj.weight" in names and names[-2:] == ["ln_f.weight", "ln_f.bias"]
    assert "head.weight" not in names and tied.head.weight is tied.tok_emb.weight
    assert [n for n, _ in untied.named_parameters()][-1] == "head.weight"
    assert len(list(untied.parameters())) == len(list(tied.parameters())) + 1
    assert tied.blocks[0].norm_first  # GPT-2's pre-norm blocks


def test_tied_head_gets_both_gradients():
    model = _gpt(n_layers=1)
    ids = np.array([[1, 2, 3]])
    F.cross_entropy(model(ids), np.array([[2, 3, 4]])).backward()
    g = model.tok_emb.weight.grad.detach().numpy()
    assert np.abs(g[6]).max() > 0  # id 6 is never an input: only the head gives it a gradient
    assert model(ids).shape == (1, 3, 7)


def test_is_causal(rng):
    model = to_float64(_gpt())
    a = model(np.array([[1, 2, 3, 4, 5]])).detach().numpy()
    b = model(np.array([[1, 2, 3, 6, 0]])).detach().numpy()
    np.testing.assert_allclose(a[:, :3], b[:, :3], atol=1e-12)
    assert np.abs(a[:, 3:] - b[:, 3:]).max() > 1e-6


def test_generate_greedy_equals_argmax_loop():
    model = to_float64(_gpt())
    out = model.generate(np.array([[1, 2], [3, 3]]), 6, greedy=True)
    assert out.shape == (2, 8) and out.dtype == np.int64
    seq = np.array([[1, 2], [3, 3]])
    for _ in range(6):  # by hand, with the last max_len tokens as context
        logits = model(seq[:, -6:]).detach().numpy()[:, -1]
        seq = np.concatenate([seq, logits.argmax(-1)[:, None]], 1)
    np.testing.assert_array_equal(out.detach().numpy(), seq)
    assert model.generate([1, 2], 3, greedy=True).shape == (5,)  # a 1-D prompt stays 1-D
    assert model.training  # generate restores the mode


def test_generate_sampling_is_seeded_and_respects_top_k():
    model = _gpt()
    tga.manual_seed(3)
    a = model.generate(np.array([[1]]), 5, temperature=2.0).detach().numpy()
    tga.manual_seed(3)
    b = model.generate(np.array([[1]]), 5, temperature=2.0).detach().numpy()
    np.testing.assert_array_equal(a, b)
    top1 = model.generate(np.array([[1, 2]]), 5, top_k=1).detach().numpy()
    np.testing.assert_array_equal(top1, model.generate(np.array([[1, 2]]), 5, greedy=True).detach().numpy())
    # with top_k=2 every sampled token is one of the two most likely
    tga.manual_seed(0)
    seq = model.generate(np.array([[1]] * 20), 1, top_k=2, temperature=5.0).detach().numpy()
    best2 = np.argsort(model(np.array([[1]])).detach().numpy()[0, -1])[-2:]
    assert set(seq[:, 1].tolist()) <= set(best2.tolist())
    assert len(set(seq[:, 1].tolist())) == 2


def test_cached_steps_give_the_logits_of_the_whole_sequence():
    model = to_float64(_gpt(max_len=9))
    ids = np.array([[1, 2, 3, 4, 5, 6, 0, 2, 3], [3, 3, 1, 0, 6, 5, 4, 4, 1]])
    full = model(ids).detach().numpy()
    cache = model.new_cache()
    parts = [model(ids[:, :3], cache), model(ids[:, 3:4], cache), model(ids[:, 4:7], cache),
             model(ids[:, 7:8], cache), model(ids[:, 8:], cache)]  # fmt: skip
    np.testing.assert_allclose(np.concatenate([p.detach().numpy() for p in parts], 1), full, atol=1e-12)
    assert cache.length == 9 and cache.layers[0]["k"].shape == (2, 2, 9, 4)
    with pytest.raises(ValueError, match="9 tokens already in the cache"):
        model(ids[:, :1], cache)


@pytest.mark.parametrize("greedy", [True, False])
def test_generate_with_and_without_the_cache_agree(greedy):
    model = to_float64(_gpt())
    model.pos_emb.weight.data[...] *= 100  # positions matter: a wrong one changes the tokens
    prompt = np.array([[1, 2], [3, 3], [0, 5]])
    runs = []
    for use_cache in (True, False):
        tga.manual_seed(7)
        runs.append(model.generate(prompt, 7, temperature=1.5, greedy=greedy, use_cache=use_cache).detach().numpy())
    np.testing.assert_array_equal(runs[0], runs[1])  # 2 + 7 > max_len 6: the cache gives way to the window
    assert runs[0].shape == (3, 9)


def test_a_cache_is_for_self_attention_only():
    from tinygrad_attn.models import BatchFirstAttention

    m = BatchFirstAttention(4, 2)
    x, y = Tensor.randn(1, 3, 4), Tensor.randn(1, 3, 4)
    with pytest.raises(ValueError, match="a cache is for self-attention"):
        m(x, y, cache={})
    with pytest.raises(ValueError, match="is_causal with a cache takes no mask"):
        cache = {}
        m(x, cache=cache, is_causal=True)
        m(x, cache=cache, is_causal=True, allow=np.ones((3, 6), bool))


def test_errors():
    model = _gpt()
    with pytest.raises(ValueError, match=r"GPT: ids must be \(B, T\) with T <= max_len 6"):
        model(np.zeros((1, 7), np.int64))
    with pytest.raises(ValueError, match="temperature"):
        model.generate([1], 2, temperature=0.0)
    with pytest.raises(ValueError, match="top_k"):
        model.generate([1], 2, top_k=0)


@pytest.mark.slow  # over 2 s on the array-API devices
@pytest.mark.parametrize("tie", [True, False], ids=["tied", "untied"])
def test_gradcheck(tie, device):
    model = GPT(vocab_size=4, d_model=4, n_heads=2, n_layers=1, max_len=3, d_ff=4, tie_weights=tie).to(device)
    ids = Tensor(np.array([[1, 2, 3], [0, 3, 3]]), device=device)
    assert gradcheck_module(model, model, ids)


@pytest.mark.slow
def test_memorises_a_repeated_sequence():
    tga.manual_seed(0)
    pattern = [3, 1, 4, 1, 5, 9, 2, 6]  # "1" is followed by "4" and by "5": context decides
    seq = np.array(pattern * 3)
    t = 16
    windows = np.stack([seq[i : i + t + 1] for i in range(len(seq) - t)])  # (8, 17)
    x, y = windows[:, :-1], windows[:, 1:]
    model = GPT(vocab_size=10, d_model=32, n_heads=2, n_layers=2, max_len=t, d_ff=64)
    opt = Adam(model.parameters(), lr=5e-3)
    for _ in range(100):
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    assert loss.item() < 0.05
    out = model.generate(seq[None, :1], 15, greedy=True).detach().numpy()[0]
    np.testing.assert_array_equal(out, seq[:16])
