"""Public PyTorch tutorials about attention run here with only their imports changed.

Each module of ``tests/tutorials/`` is written once, PyTorch style. The harness builds its
model with PyTorch and with ``tinygrad_attn`` (``import tinygrad_attn as torch``), loads
PyTorch's state dict (torch tensors as they are) into ours, then for a few training steps
compares the outputs, the loss and every parameter's gradient, and at the end every
parameter after the optimizer steps, in float64.
"""

from __future__ import annotations

import random

import numpy as np
import pytest
import tinygrad_attn.nn.functional as tga_F
from tutorials import (
    annotated_transformer,
    bahdanau_seq2seq,
    d2l_attention,
    llms_from_scratch,
    lstm_seq2seq,
    luong_chatbot,
    mingpt,
    nanogpt,
    seq2seq_gru_attention,
    transformer_from_scratch,
    transformer_lm,
    vit,
)

import tinygrad_attn as tga
from tinygrad_attn import nn as tga_nn

torch = pytest.importorskip("torch")
import torch.nn.functional as torch_F  # noqa: E402

# A few training steps of a model in both libraries; the first torch optimizer made in a
# process also imports torch's compiler (about 10 s).
slow = pytest.mark.slow


def _namespaces(mod):
    return mod.tutorial(torch, torch.nn, torch_F), mod.tutorial(tga, tga_nn, tga_F)


def _batch(lib, data: dict) -> dict:
    """The NumPy batch as tensors of ``lib``: floats in float64, integers and bools as they are."""
    out = {}
    for k, a in data.items():
        a = np.asarray(a)
        out[k] = lib.tensor(a, dtype=lib.float64) if a.dtype.kind == "f" else lib.tensor(a)
    return out


def _array(t):
    if isinstance(t, tga.Tensor):
        return t.detach().numpy()
    return t.detach().numpy()


def _close(ours, theirs, what, rtol):
    if theirs is None or ours is None:
        assert ours is None and theirs is None, f"{what}: {ours} here, {theirs} in PyTorch"
        return
    a, b = _array(ours), _array(theirs)
    assert a.shape == b.shape, f"{what}: shape {a.shape} != PyTorch's {b.shape}"
    np.testing.assert_allclose(a, b, rtol=rtol, atol=rtol, err_msg=what)


def _pair(mod, double=True, model_args=()):
    theirs_ns, ours_ns = _namespaces(mod)
    torch.manual_seed(0)
    tga.manual_seed(0)
    theirs, ours = theirs_ns.model(*model_args), ours_ns.model(*model_args)
    if double:
        theirs, ours = theirs.double(), ours.double()
    data = mod.data(np.random.default_rng(0))
    if hasattr(mod, "materialize"):  # lazy layers get their shapes from a first batch
        mod.materialize(theirs_ns, theirs, _batch(torch, data))
        mod.materialize(ours_ns, ours, _batch(tga, data))
    sd = theirs.state_dict()
    assert sorted(ours.state_dict()) == sorted(sd), "parameter and buffer names differ from PyTorch's"
    ours.load_state_dict(sd)  # torch tensors, as they are
    return (theirs_ns, theirs), (ours_ns, ours), data


def _train_and_compare(mod, steps=3, rtol=1e-9, double=True, model_args=()):
    (tns, theirs), (ons, ours), data = _pair(mod, double, model_args)
    topt, oopt = tns.optimizer(theirs), ons.optimizer(ours)
    tparams = dict(theirs.named_parameters())
    for step in range(steps):
        random.seed(step)  # tutorials that draw teacher forcing from Python's random
        tout, tloss = tns.forward(theirs, _batch(torch, data))
        random.seed(step)
        oout, oloss = ons.forward(ours, _batch(tga, data))
        for k in tout:
            _close(oout[k], tout[k], f"{mod.__name__} step {step}: {k}", rtol)
        _close(oloss, tloss, f"{mod.__name__} step {step}: loss", rtol)
        tloss.backward()
        oloss.backward()
        for name, p in ours.named_parameters():
            _close(p.grad, tparams[name].grad, f"{mod.__name__} step {step}: gradient of {name}", rtol)
        tns.update(theirs, topt)
        ons.update(ours, oopt)
    for name, p in ours.named_parameters():
        _close(p, tparams[name], f"{mod.__name__}: {name} after {steps} steps", rtol)
    return (tns, theirs), (ons, ours), data


@slow
def test_nanogpt():
    (tns, theirs), (ons, ours), data = _train_and_compare(nanogpt)
    assert ours.get_num_params() == theirs.get_num_params()
    assert ours.transformer.wte.weight is ours.lm_head.weight  # tied, as in PyTorch
    prompt = data["x"][:, :3]
    want = theirs.generate(torch.tensor(prompt), 4, top_k=1)  # top-1: no draw, the same tokens
    got = ours.generate(tga.tensor(prompt), 4, top_k=1)
    np.testing.assert_array_equal(got.detach().numpy(), want.detach().numpy())


@slow
def test_annotated_transformer():
    (tns, theirs), (ons, ours), data = _train_and_compare(annotated_transformer)
    src = data["src"][:1]
    want = tns.greedy_decode(theirs, torch.tensor(src), torch.ones(1, 1, src.shape[1]), 6, 1)
    got = ons.greedy_decode(ours, tga.tensor(src), tga.ones(1, 1, src.shape[1]), 6, 1)
    np.testing.assert_array_equal(got.detach().numpy(), want.detach().numpy())


def test_annotated_transformer_label_smoothing_distribution():
    tns, ons = _namespaces(annotated_transformer)
    logits = np.log(np.array([[0, 0.2, 0.7, 0.1, 0]] * 5) + 1e-12)
    target = np.array([2, 1, 0, 3, 3])
    crit_t, crit_o = tns.LabelSmoothing(5, 0, 0.4), ons.LabelSmoothing(5, 0, 0.4)
    lt = crit_t(torch.tensor(logits), torch.tensor(target))
    lo = crit_o(tga.tensor(logits), tga.tensor(target))
    _close(crit_o.true_dist, crit_t.true_dist, "label smoothing: true_dist", 1e-12)
    _close(lo, lt, "label smoothing: loss", 1e-12)


@slow
def test_seq2seq_gru_attention_with_torch_device():
    (tns, theirs), (ons, ours), data = _train_and_compare(seq2seq_gru_attention)
    assert ons.device == "cpu" and isinstance(ons.device, tga.device)
    src = _batch(tga, data)["input"]
    enc_out, enc_hidden = ours["encoder"](src)
    outputs, _, attn = ours["decoder"](enc_out, enc_hidden)  # greedy, no target
    tsrc = _batch(torch, data)["input"]
    tenc_out, tenc_hidden = theirs["encoder"](tsrc)
    toutputs, _, tattn = theirs["decoder"](tenc_out, tenc_hidden)
    _close(outputs, toutputs, "greedy decoding", 1e-9)
    _close(attn, tattn, "attention weights", 1e-9)


@slow
def test_lstm_seq2seq_writes_outputs_t():
    # torch.zeros(...) holds the outputs in float32 in both libraries: float32's precision
    _train_and_compare(lstm_seq2seq, rtol=1e-5)


@slow
def test_vit_with_conv_patches_and_multihead_attention():
    _train_and_compare(vit)


def test_d2l_masked_softmax():
    tns, ons = _namespaces(d2l_attention)
    x = np.random.default_rng(0).random((2, 2, 4))
    for lens in (np.array([2, 3]), np.array([[1, 3], [2, 4]])):
        want = tns.masked_softmax(torch.tensor(x), torch.tensor(lens))
        got = ons.masked_softmax(tga.tensor(x), tga.tensor(lens))
        _close(got, want, f"masked_softmax with valid_lens {lens.tolist()}", 1e-12)
        assert (got.detach().numpy()[0, 0, 2:] == 0).all()


@slow
def test_d2l_attention_scoring_and_multihead():
    _train_and_compare(d2l_attention)


@slow
def test_pytorch_transformer_language_model():
    _train_and_compare(transformer_lm)


@slow
def test_mingpt():
    (tns, theirs), (ons, ours), data = _train_and_compare(mingpt)
    prompt = data["x"][:, :2]
    want = theirs.generate(torch.tensor(prompt), 3, do_sample=False)
    got = ours.generate(tga.tensor(prompt), 3, do_sample=False)
    np.testing.assert_array_equal(got.detach().numpy(), want.detach().numpy())


@slow
def test_transformer_from_scratch_with_einsum():
    _train_and_compare(transformer_from_scratch)


@slow
def test_llms_from_scratch_gpt():
    # The GELU's constant is sqrt of a float32 tensor, and PyTorch's float32 sqrt of 2/pi is one
    # unit in the last place above NumPy's (correctly rounded) one: float32's precision, then.
    (tns, theirs), (ons, ours), data = _train_and_compare(llms_from_scratch, rtol=1e-6)
    start = data["input"][:1, :3]
    want = tns.generate_text_simple(theirs, torch.tensor(start), 4, 8)
    got = ons.generate_text_simple(ours, tga.tensor(start), 4, 8)
    np.testing.assert_array_equal(got.detach().numpy(), want.detach().numpy())


@slow
@pytest.mark.parametrize("attn_model", ["dot", "general", "concat"])
def test_luong_attention_scores(attn_model):
    _train_and_compare(luong_chatbot, model_args=(attn_model,))


@slow
def test_bahdanau_seq2seq_over_a_bidirectional_gru():
    # torch.zeros(...) holds the outputs in float32 in both libraries: float32's precision
    (tns, theirs), (ons, ours), _ = _train_and_compare(bahdanau_seq2seq, rtol=1e-5)
    assert ons.count_parameters(ours) == tns.count_parameters(theirs)
