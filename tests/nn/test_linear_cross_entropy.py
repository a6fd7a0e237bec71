"""``F.linear_cross_entropy``, ``nn.LinearCrossEntropyLoss`` and ``nn.LinearCrossEntropyOptions``
against PyTorch: values and gradients (class indices, probabilities, K-dimensional, weights,
smoothing, every reduction), parameters for a seed, repr and errors."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from torch_oracle import assert_matches_torch

import tinygrad_attn as tga
import tinygrad_attn.functional as F
from tinygrad_attn import nn

torch = pytest.importorskip("torch")

C, IN = 5, 4


def _case(rng, out_features, probabilities, batched):
    n = 3
    x = rng.standard_normal((n, IN) if batched else (IN,))
    w = rng.standard_normal((C, *out_features, IN))
    b = rng.standard_normal((C, *out_features))
    lead = (n,) if batched else ()
    if probabilities:
        t = rng.random((*lead, C, *out_features))
        t = t / t.sum(axis=len(lead), keepdims=True)
    else:
        t = rng.integers(0, C, (*lead, *out_features))
        t.flat[0] = 2  # (a class that ignore_index=2 drops)
    return x, w, b, t


@pytest.mark.parametrize(
    "out_features,probabilities,batched,bias,weight,reduction,smoothing,ignore",
    [c for c in itertools.product([(), (2, 3)], [False, True], [True, False], [False, True], [False, True],
                                  ["mean", "sum", "none"], [0.0, 0.2], [None, 2])
     if (c[2] or not c[0]) and not (c[1] and c[7] is not None)],
)  # fmt: skip
def test_linear_cross_entropy_matches_pytorch(out_features, probabilities, batched, bias, weight, reduction,
                                              smoothing, ignore, rng):  # fmt: skip
    x, w, b, t = _case(rng, out_features, probabilities, batched)
    cw = rng.random(C) + 0.5
    kw = dict(reduction=reduction, label_smoothing=smoothing, ignore_index=ignore)
    arrays = [x, w] + ([b] if bias else [])

    def run(lib, fn):
        def call(x, w, *bb):
            return fn(x, w, lib.tensor(t), linear_bias=bb[0] if bb else None,
                      weight=lib.tensor(cw) if weight else None, **kw)  # fmt: skip

        return call

    ts = [torch.tensor(a, requires_grad=True) for a in arrays]
    os_ = [tga.tensor(a, requires_grad=True) for a in arrays]
    yt, yo = run(torch, torch.nn.functional.linear_cross_entropy)(*ts), run(tga, F.linear_cross_entropy)(*os_)
    assert yo.shape == tuple(yt.shape)
    np.testing.assert_allclose(yo.detach().numpy(), yt.detach().numpy(), rtol=1e-10, atol=1e-12)
    cot = rng.standard_normal(tuple(yt.shape))
    for go, gt in zip(tga.autograd.grad(yo, os_, tga.tensor(cot)), torch.autograd.grad(yt, ts, torch.tensor(cot))):
        np.testing.assert_allclose(go.detach().numpy(), gt.detach().numpy(), rtol=1e-9, atol=1e-11)


def test_linear_cross_entropy_gradcheck_second_order(rng):
    x, w, b, t = _case(rng, (), False, True)
    tt = tga.tensor(t)
    assert tga.gradcheck(lambda x, w, b: F.linear_cross_entropy(x, w, tt, linear_bias=b, label_smoothing=0.1), x, w, b)
    xs = [torch.tensor(a, requires_grad=True) for a in (x, w)]
    xo = [tga.tensor(a, requires_grad=True) for a in (x, w)]
    (gt,) = torch.autograd.grad(
        torch.nn.functional.linear_cross_entropy(*xs, torch.tensor(t)), xs[:1], create_graph=True
    )
    (go,) = tga.autograd.grad(F.linear_cross_entropy(*xo, tt), xo[:1], create_graph=True)
    for a, b_ in zip(tga.autograd.grad((go**2).sum(), xo), torch.autograd.grad((gt**2).sum(), xs)):
        np.testing.assert_allclose(a.detach().numpy(), b_.detach().numpy(), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize(
    "shapes,kw",
    [(((2, 3, 4), (5, 4), (2,)), {}), (((2, 4), (4,), (2,)), {}), (((2, 4), (5, 3), (2,)), {}),
     (((2, 4), (5, 4), (2,)), {"linear_bias": (4,)}), (((4,), (5, 2, 4), ()), {}),
     (((2, 4), (5, 4), (2, 5)), {"ignore_index": 1})],
)  # fmt: skip
def test_linear_cross_entropy_refuses_what_pytorch_refuses(shapes, kw):
    def call(lib, fn):
        x, w, t = shapes
        target = lib.zeros(t) if len(t) == 2 and t[1] == 5 else lib.zeros(t, dtype=lib.int64)
        extra = {k: lib.zeros(v) if isinstance(v, tuple) else v for k, v in kw.items()}
        return fn(lib.zeros(x), lib.zeros(w), target, **extra)

    with pytest.raises(RuntimeError) as theirs:
        call(torch, torch.nn.functional.linear_cross_entropy)
    with pytest.raises(RuntimeError) as ours:
        call(tga, F.linear_cross_entropy)
    assert str(ours.value) == str(theirs.value)


@pytest.mark.parametrize(
    "kw",
    [{}, {"out_features": (4, 3), "bias": True}, {"bias": True, "label_smoothing": 0.1, "reduction": "sum"},
     {"ignore_index": 1, "reduction": "none"}],
)  # fmt: skip
@pytest.mark.parametrize("seed", [0, 3])
def test_linear_cross_entropy_loss_module_is_pytorchs(kw, seed, rng):
    torch.manual_seed(seed)
    theirs = torch.nn.LinearCrossEntropyLoss(IN, C, **kw)
    tga.manual_seed(seed)
    ours = nn.LinearCrossEntropyLoss(IN, C, **kw)
    assert repr(ours) == repr(theirs)
    for (n, p), (m, q) in zip(ours.named_parameters(), theirs.named_parameters(), strict=True):
        assert n == m
        np.testing.assert_array_equal(p.detach().numpy(), q.detach().numpy())
    t = rng.integers(0, C, (3, *kw.get("out_features", ())))
    assert_matches_torch(ours, theirs, lambda x: ours(x, tga.tensor(t)), lambda x: theirs(x, torch.tensor(t)),
                         [rng.standard_normal((3, IN))])  # fmt: skip


def test_linear_cross_entropy_loss_with_class_weight_and_options(rng):
    cw = rng.random(C)
    opts_o, opts_t = (
        nn.LinearCrossEntropyOptions(batch_chunk_size=2),
        torch.nn.LinearCrossEntropyOptions(batch_chunk_size=2),
    )
    assert repr(opts_o) == repr(opts_t)
    ours = nn.LinearCrossEntropyLoss(IN, C, weight=tga.tensor(cw), options=opts_o)
    theirs = torch.nn.LinearCrossEntropyLoss(IN, C, weight=torch.tensor(cw), options=opts_t)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    t = rng.integers(0, C, 6)
    assert_matches_torch(ours, theirs, lambda x: ours(x, tga.tensor(t)), lambda x: theirs(x, torch.tensor(t)),
                         [rng.standard_normal((6, IN))])  # fmt: skip
    for lib in (torch.nn, nn):
        with pytest.raises(RuntimeError, match="expected weight shape"):
            lib.LinearCrossEntropyLoss(IN, C, weight=(torch if lib is torch.nn else tga).ones(C + 1))
        with pytest.raises(RuntimeError, match="label_smoothing to be in range"):
            lib.LinearCrossEntropyLoss(IN, C, label_smoothing=1.5)


@pytest.mark.parametrize(
    "kw",
    [{"acc_policy": "fast"}, {"chunking_method": "aspect"}, {"chunking_method": "aspect_ratio:0"},
     {"batch_chunk_size": 0}, {"batch_chunk_size": 2.5}],
)  # fmt: skip
def test_linear_cross_entropy_options_checked_as_pytorchs(kw):
    with pytest.raises(ValueError) as theirs:
        torch.nn.LinearCrossEntropyOptions(**kw)
    with pytest.raises(ValueError) as ours:
        nn.LinearCrossEntropyOptions(**kw)
    assert str(ours.value) == str(theirs.value)
    assert nn.LinearCrossEntropyOptions(chunking_method="aspect_ratio:2", acc_policy="compact").acc_policy == "compact"
