"""nn.utils against torch.nn.utils: gradient clipping (eager and compiled), parameter
vectors, padded sequences."""

from __future__ import annotations

import math

import numpy as np
import pytest

import tinygrad_attn as tga
from tinygrad_attn import Tensor, nn
from tinygrad_attn.nn.utils import clip_grad_norm_, clip_grad_value_, parameters_to_vector, vector_to_parameters
from tinygrad_attn.nn.utils.rnn import pad_sequence

torch = pytest.importorskip("torch")

SHAPES = [(3, 2), (4,), (2, 2, 2)]


def _pair(rng, device="cpu", scale=1.0):
    grads = [rng.standard_normal(s) * scale for s in SHAPES]
    ours = [nn.Parameter(np.zeros(s), device=device) for s in SHAPES]
    theirs = [torch.zeros(s, dtype=torch.float64, requires_grad=True) for s in SHAPES]
    for p, q, g in zip(ours, theirs, grads):
        p.grad = Tensor(g, device=device)
        q.grad = torch.tensor(g)
    return ours, theirs


@pytest.mark.parametrize("device", ["cpu", "array_api_strict", "array_api_strict:device1"])
@pytest.mark.parametrize("norm_type", [2.0, 1.0, 3.0, math.inf])
@pytest.mark.parametrize("max_norm", [0.5, 100.0])
def test_clip_grad_norm_is_pytorchs(norm_type, max_norm, device, rng):
    ours, theirs = _pair(rng, device)
    total = clip_grad_norm_(ours, max_norm, norm_type=norm_type)
    want = torch.nn.utils.clip_grad_norm_(theirs, max_norm, norm_type=norm_type)
    assert isinstance(total, Tensor) and total.shape == () and total.device == device
    np.testing.assert_allclose(total.detach().numpy(), want.detach().numpy(), rtol=1e-12)
    for p, q in zip(ours, theirs):
        np.testing.assert_allclose(p.grad.detach().numpy(), q.grad.detach().numpy(), rtol=1e-12)
        assert p.grad.device == device


def test_clip_grad_norm_edge_cases():
    p = nn.Parameter(np.zeros(3))
    assert float(clip_grad_norm_([p], 1.0)) == 0.0  # no gradients: a zero norm
    p.grad = Tensor(np.array([np.inf, 0.0, 0.0]))
    with pytest.raises(RuntimeError, match="clip_grad_norm_: the total norm of order 2.0 .* inf"):
        clip_grad_norm_(p, 1.0, error_if_nonfinite=True)
    p.grad = Tensor(np.array([3.0, 4.0, 0.0]))
    assert float(clip_grad_norm_(p, 1.0, foreach=True)) == pytest.approx(5.0)  # a lone tensor, foreach accepted


def test_optim_clip_is_the_same_function():
    assert tga.optim.clip_grad_norm_ is clip_grad_norm_


def test_clip_grad_value_is_pytorchs(rng):
    ours, theirs = _pair(rng, scale=2.0)
    clip_grad_value_(ours, 0.7)
    torch.nn.utils.clip_grad_value_(theirs, 0.7)
    for p, q in zip(ours, theirs):
        np.testing.assert_array_equal(p.grad.detach().numpy(), q.grad.detach().numpy())


def _train(compiled: bool, steps: int = 4) -> tuple[list[float], np.ndarray]:
    tga.manual_seed(0)
    model = nn.Linear(3, 2).double()
    opt = tga.optim.SGD(model.parameters(), lr=0.1)

    def step(x):
        opt.zero_grad()
        loss = (model(x) ** 2).sum()
        loss.backward()
        total = clip_grad_norm_(model.parameters(), 0.5)  # large inputs: every step clips
        opt.step()
        return loss, total

    run = tga.compile(step) if compiled else step
    out = []
    for i in range(steps):
        loss, total = run(Tensor(np.random.default_rng(i).standard_normal((4, 3)) * (i + 1)))
        out += [float(loss), float(total)]
    return out, model.weight.detach().numpy()


def test_clipping_in_a_compiled_step_is_never_silently_different():
    """A compiled step that clips gives eager's numbers at every replay, or (where the tracer
    cannot record new gradients) raises naming clip_grad_norm_ instead."""
    eager = _train(False)
    try:
        compiled = _train(True)
    except tga.TraceError as e:
        assert "clip_grad_norm_" in str(e)
        return
    np.testing.assert_allclose(compiled[0], eager[0], rtol=1e-12)
    np.testing.assert_allclose(compiled[1], eager[1], rtol=1e-12)


def test_parameters_to_vector_and_back(rng):
    ps = [nn.Parameter(rng.standard_normal(s)) for s in SHAPES]
    qs = [torch.tensor(p.detach().numpy()) for p in ps]
    v = parameters_to_vector(ps)
    np.testing.assert_array_equal(v.detach().numpy(), torch.nn.utils.parameters_to_vector(qs).detach().numpy())
    (v * Tensor(np.arange(v.shape[0], dtype=np.float64))).sum().backward()  # differentiable
    np.testing.assert_array_equal(ps[1].grad.detach().numpy(), np.arange(6, 10))
    new = Tensor(rng.standard_normal(v.shape[0]))
    tnew = torch.tensor(new.detach().numpy())
    held, theirs_held = [p.detach() for p in ps], [q.detach() for q in qs]
    vector_to_parameters(new, ps)
    torch.nn.utils.vector_to_parameters(tnew, qs)
    for p, q in zip(ps, qs):
        np.testing.assert_array_equal(p.detach().numpy(), q.detach().numpy())
    for h, th in zip(held, theirs_held):  # the parameters took new memory: the old stays as it was
        np.testing.assert_array_equal(h.detach().numpy(), th.detach().numpy())
    new.mul_(2.0)  # ... and that memory is vec's
    tnew.mul_(2.0)
    for p, q in zip(ps, qs):
        np.testing.assert_array_equal(p.detach().numpy(), q.detach().numpy())
    with pytest.raises(RuntimeError, match=r"shape '\[3, 2\]' is invalid for input of size 3"):  # (PyTorch's view_as)
        vector_to_parameters(Tensor(np.zeros(3)), ps)


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("side", ["right", "left"])
def test_pad_sequence_is_pytorchs(batch_first, side, rng):
    arrays = [rng.standard_normal((n, 2)) for n in (3, 1, 4)]
    ours = [Tensor(a, requires_grad=True) for a in arrays]
    theirs = [torch.tensor(a, requires_grad=True) for a in arrays]
    y = pad_sequence(ours, batch_first=batch_first, padding_value=-1.0, padding_side=side)
    yt = torch.nn.utils.rnn.pad_sequence(theirs, batch_first=batch_first, padding_value=-1.0, padding_side=side)
    np.testing.assert_array_equal(y.detach().numpy(), yt.detach().numpy())
    w = rng.standard_normal(y.shape)
    (y * Tensor(w)).sum().backward()
    (yt * torch.tensor(w)).sum().backward()
    for a, b in zip(ours, theirs):
        np.testing.assert_array_equal(a.grad.detach().numpy(), b.grad.detach().numpy())


def test_pad_sequence_errors():
    with pytest.raises(RuntimeError, match="same trailing shape"):
        pad_sequence([Tensor.zeros(2, 3), Tensor.zeros(2, 4)])
    with pytest.raises(RuntimeError, match="padding_side"):
        pad_sequence([Tensor.zeros(2)], padding_side="middle")


@pytest.mark.parametrize("clip", ["norm", "value"])
def test_clipping_scales_each_grad_in_place_as_pytorchs(clip, rng):
    arrays = [rng.standard_normal(s) * 5 for s in SHAPES]
    seen = []
    for lib, utils in ((tga, tga.nn.utils), (torch, torch.nn.utils)):
        ps = [lib.nn.Parameter(lib.tensor(a.copy())) for a in arrays]
        for p, a in zip(ps, arrays):
            p.grad = lib.tensor(a * 2.0)
        held = [p.grad for p in ps]
        if clip == "norm":
            utils.clip_grad_norm_(ps, 1.0)
        else:
            utils.clip_grad_value_(ps, 0.5)
        assert all(p.grad is h for p, h in zip(ps, held))
        seen.append([np.array(h.detach().numpy()) for h in held])
    for a, b in zip(*seen):
        np.testing.assert_allclose(a, b, rtol=1e-12)
