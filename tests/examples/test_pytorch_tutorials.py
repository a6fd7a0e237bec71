"""PyTorch tutorial code runs here with only its imports changed, and gives PyTorch's numbers.

The modules of ``tutorial_modules.py`` are written once, PyTorch style; each test builds
them with PyTorch and with ``tinygrad_attn`` (``import tinygrad_attn as torch``), copies
PyTorch's weights into ours through ``load_state_dict``, and compares outputs, input
gradients and parameter gradients in float64.
"""

from __future__ import annotations

import numpy as np
import pytest
import tinygrad_attn.nn.functional as tga_F
from tutorial_modules import tutorial_modules

import tinygrad_attn as tga
from tinygrad_attn import nn as tga_nn

torch = pytest.importorskip("torch")
import torch.nn.functional as torch_F  # noqa: E402

OURS = tutorial_modules(tga, tga_nn, tga_F)
THEIRS = tutorial_modules(torch, torch.nn, torch_F)


def _pair(name: str, *args):
    """The same module in both libraries, in float64, with PyTorch's weights in ours."""
    torch.manual_seed(0)
    theirs = getattr(THEIRS, name)(*args).double()
    ours = getattr(OURS, name)(*args).double()
    state = {k: v.detach().numpy() for k, v in theirs.state_dict().items()}
    assert list(ours.state_dict()) == list(state), "parameter names and order differ from PyTorch's"
    ours.load_state_dict(state)
    return ours, theirs


def _inputs(*arrays):
    """Each array as a float64 tensor requiring grad in both libraries (ints stay ints, no grad)."""
    ours, theirs = [], []
    for a in arrays:
        if a.dtype.kind == "f":
            ours.append(tga.tensor(a, dtype=tga.float64, requires_grad=True))
            theirs.append(torch.tensor(a, dtype=torch.float64, requires_grad=True))
        else:
            ours.append(tga.tensor(a))
            theirs.append(torch.tensor(a))
    return ours, theirs


def _close(a, b, what, rtol=1e-9):
    if a is None or b is None:  # a parameter the output does not depend on: no gradient in either
        assert a is None and b is None, f"{what}: {a} here, {b} in PyTorch"
        return
    a = a.detach().numpy() if isinstance(a, tga.Tensor) else np.asarray(a)
    b = b.detach().numpy()
    assert a.shape == b.shape, f"{what}: shape {a.shape} != PyTorch's {b.shape}"
    np.testing.assert_allclose(a, b, rtol=rtol, atol=rtol * 1e-2, err_msg=what)


def _check(name, ctor_args, arrays, pick=lambda out: out):
    ours, theirs = _pair(name, *ctor_args)
    xs, txs = _inputs(*arrays)
    out, tout = pick(ours(*xs)), pick(theirs(*txs))
    _close(out, tout, f"{name} output")
    rng = np.random.default_rng(1)
    w = rng.standard_normal(tuple(tout.shape))
    (out * tga.tensor(w)).sum().backward()
    (tout * torch.tensor(w)).sum().backward()
    for i, (x, tx) in enumerate(zip(xs, txs)):
        if tx.grad is not None:
            _close(x.grad, tx.grad, f"{name}: gradient of input {i}")
    tparams = dict(theirs.named_parameters())
    for pname, p in ours.named_parameters():
        _close(p.grad, tparams[pname].grad, f"{name}: gradient of {pname}")


def test_self_attention_module():
    x = np.random.default_rng(0).standard_normal((2, 5, 6))
    _check("SelfAttention", (6, 4), [x])


def test_gpt_style_causal_self_attention():
    x = np.random.default_rng(0).standard_normal((2, 5, 8))
    _check("CausalSelfAttention", (8, 2, 7), [x])


def test_bahdanau_attention():
    rng = np.random.default_rng(0)
    hidden, enc = rng.standard_normal((3, 5)), rng.standard_normal((4, 3, 2 * 6))
    _check("BahdanauAttention", (6, 5), [hidden, enc])


def test_dot_product_attention_with_a_padding_mask():
    rng = np.random.default_rng(0)
    q, k, v = rng.standard_normal((3, 4)), rng.standard_normal((3, 5, 4)), rng.standard_normal((3, 5, 2))
    mask = np.ones((3, 5), dtype=np.int64)
    mask[0, 3:] = 0
    for pick in (lambda out: out[0], lambda out: out[1]):
        _check("DotProductAttention", (), [q, k, v, mask], pick)


def test_bidirectional_gru_encoder():
    src = np.random.default_rng(0).integers(0, 11, size=(6, 3))
    _check("Encoder", (11, 4, 5, 7, 0.0), [src], lambda out: out[0])
    _check("Encoder", (11, 4, 5, 7, 0.0), [src], lambda out: out[1])


def test_seq2seq_writes_each_step_into_a_preallocated_tensor():
    rng = np.random.default_rng(0)
    src, trg = rng.integers(0, 9, size=(5, 2)), rng.integers(0, 10, size=(4, 2))

    def build(ns):
        return ns.Seq2Seq(ns.Encoder(9, 4, 5, 6, 0.0), ns.Decoder(10, 4, 5, 6))

    torch.manual_seed(0)
    theirs = build(THEIRS).double()
    ours = build(OURS).double()
    ours.load_state_dict({k: v.detach().numpy() for k, v in theirs.state_dict().items()})
    theirs_out = theirs(torch.tensor(src), torch.tensor(trg))
    ours_out = ours(tga.tensor(src), tga.tensor(trg))
    # torch.zeros is float32 in both libraries, so each step's output is rounded to float32
    # when written: the two agree to float32's precision, not float64's.
    _close(ours_out, theirs_out, "seq2seq outputs", rtol=1e-5)
    loss = tga_F.cross_entropy(ours_out[1:].reshape(-1, 10), tga.tensor(trg[1:]).reshape(-1))
    tloss = torch_F.cross_entropy(theirs_out[1:].view(-1, 10), torch.tensor(trg[1:]).view(-1))
    loss.backward()
    tloss.backward()
    tparams = dict(theirs.named_parameters())
    for pname, p in ours.named_parameters():
        _close(p.grad, tparams[pname].grad, f"seq2seq: gradient of {pname}", rtol=1e-5)


def test_a_tutorial_training_loop_runs_unchanged():
    """Optimizer, zero_grad, backward, step, item: the loop every tutorial writes."""

    def train(torch, nn, F, ns):
        torch.manual_seed(0)
        model = ns.SelfAttention(4, 4)
        head = nn.Linear(4, 3)
        opt = torch.optim.Adam(list(model.parameters()) + list(head.parameters()), lr=0.05)
        x = torch.randn(8, 5, 4)
        y = torch.randint(0, 3, (8,))
        losses = []
        for _ in range(30):
            opt.zero_grad()
            loss = F.cross_entropy(head(model(x).mean(dim=1)), y)
            loss.backward()
            opt.step()
            losses.append(loss.item())
        return losses

    losses = train(tga, tga_nn, tga_F, OURS)
    assert losses[-1] < 0.5 * losses[0]
