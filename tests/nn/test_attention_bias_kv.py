"""``nn.MultiheadAttention(add_bias_kv=True, add_zero_attn=True)`` and
``F.multi_head_attention_forward`` (the same computation with the weights passed in) against
PyTorch: parameters for a seed, outputs, weights and gradients with masks of both kinds."""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest
from torch_oracle import assert_matches_torch

import tinygrad_attn as tga
import tinygrad_attn.functional as F
from tinygrad_attn import nn

torch = pytest.importorskip("torch")

E, H, L, S, N = 8, 2, 3, 4, 2


@pytest.mark.parametrize("bias_kv,zero_attn", [(True, False), (False, True), (True, True)])
@pytest.mark.parametrize("kdim", [None, 5])
@pytest.mark.parametrize("seed", [0, 4])
def test_parameters_drawn_and_named_as_pytorchs(bias_kv, zero_attn, kdim, seed):
    kw = dict(add_bias_kv=bias_kv, add_zero_attn=zero_attn, kdim=kdim, vdim=kdim, dtype=None)
    torch.manual_seed(seed)
    theirs = torch.nn.MultiheadAttention(E, H, **{**kw, "dtype": torch.float64})
    tga.manual_seed(seed)
    ours = nn.MultiheadAttention(E, H, **{**kw, "dtype": tga.float64})
    assert [(n, tuple(p.shape)) for n, p in ours.named_parameters()] == [
        (n, tuple(p.shape)) for n, p in theirs.named_parameters()
    ]
    assert list(ours.state_dict()) == list(theirs.state_dict())
    for (n, p), (_, q) in zip(ours.named_parameters(), theirs.named_parameters()):
        np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), rtol=1e-15, err_msg=n)
    assert ours.add_zero_attn == theirs.add_zero_attn
    np.testing.assert_array_equal(tga.rand(3).detach().numpy(), torch.rand(3).detach().numpy())


MASKS = ["none", "bool_attn", "float_attn", "bool_kpm", "both_bool", "3d_float"]


def _masks(kind, rng):
    attn = rng.random((L, S)) < 0.3
    attn[:, 0] = False  # every query keeps a key (PyTorch gives NaN otherwise)
    kpm = rng.random((N, S)) < 0.3
    kpm[:, 0] = False
    return {
        "none": {},
        "bool_attn": {"attn_mask": attn},
        "float_attn": {"attn_mask": rng.standard_normal((L, S))},
        "bool_kpm": {"key_padding_mask": kpm},
        "both_bool": {"attn_mask": attn, "key_padding_mask": kpm},
        "3d_float": {"attn_mask": rng.standard_normal((N * H, L, S))},
    }[kind]


@pytest.mark.parametrize("bias_kv,zero_attn", [(True, False), (False, True), (True, True)])
@pytest.mark.parametrize("mask", MASKS)
@pytest.mark.parametrize("batch_first", [False, True])
def test_forward_with_bias_kv_and_zero_attn_matches_pytorch(bias_kv, zero_attn, mask, batch_first, rng):
    kw = dict(add_bias_kv=bias_kv, add_zero_attn=zero_attn, batch_first=batch_first)
    ours, theirs = nn.MultiheadAttention(E, H, **kw), torch.nn.MultiheadAttention(E, H, **kw)
    masks = _masks(mask, rng)
    q_shape, kv_shape = ((N, L, E), (N, S, E)) if batch_first else ((L, N, E), (S, N, E))
    arrays = [rng.standard_normal(q_shape), rng.standard_normal(kv_shape), rng.standard_normal(kv_shape)]

    def run(module, lib):
        ms = {k: lib.tensor(v) for k, v in masks.items()}
        return lambda q, k, v: module(q, k, v, **ms, average_attn_weights=False)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (PyTorch's note on mismatched mask types)
        assert_matches_torch(ours, theirs, run(ours, tga), run(theirs, torch), arrays)


@pytest.mark.parametrize("bias_kv,zero_attn", [(True, True), (False, False)])
def test_self_attention_unbatched_with_bias_kv(bias_kv, zero_attn, rng):
    kw = dict(add_bias_kv=bias_kv, add_zero_attn=zero_attn)
    ours, theirs = nn.MultiheadAttention(E, H, **kw), torch.nn.MultiheadAttention(E, H, **kw)
    assert_matches_torch(
        ours, theirs, lambda x: ours(x, x, x), lambda x: theirs(x, x, x), [rng.standard_normal((L, E))]
    )


def _weights(rng, separate, bias_kv):
    w = {
        "in_proj_weight": None if separate else rng.standard_normal((3 * E, E)) / 3,
        "in_proj_bias": rng.standard_normal(3 * E),
        "bias_k": rng.standard_normal((1, 1, E)) if bias_kv else None,
        "bias_v": rng.standard_normal((1, 1, E)) if bias_kv else None,
        "out_proj_weight": rng.standard_normal((E, E)) / 3,
        "out_proj_bias": rng.standard_normal(E),
    }
    for name in ("q_proj_weight", "k_proj_weight", "v_proj_weight"):
        w[name] = rng.standard_normal((E, E)) / 3 if separate else None
    return w


@pytest.mark.parametrize(
    "separate,bias_kv,zero_attn,mask,batched,need_weights",
    [
        c
        for c in itertools.product(
            [False, True],
            [False, True],
            [False, True],
            ["none", "bool_attn", "both_bool"],
            [True, False],
            [True, False],
        )
        if c[4] or c[3] != "both_bool"
    ],  # fmt: skip
)
def test_functional_multi_head_attention_forward_matches_pytorch(separate, bias_kv, zero_attn, mask, batched,
                                                                 need_weights, rng):  # fmt: skip
    w = _weights(rng, separate, bias_kv)
    masks = _masks(mask, rng)
    q = rng.standard_normal((L, N, E) if batched else (L, E))
    kv = rng.standard_normal((S, N, E) if batched else (S, E))
    names = [k for k, v in w.items() if v is not None]

    def call(lib, fn, q, k, v, *ws):
        args = dict(zip(names, ws))
        full = {k: args.get(k) for k in w}
        ms = {k: lib.tensor(v) for k, v in masks.items()}
        return fn(q, k, v, E, H, full["in_proj_weight"], full["in_proj_bias"], full["bias_k"], full["bias_v"],
                  zero_attn, 0.0, full["out_proj_weight"], full["out_proj_bias"], need_weights=need_weights,
                  use_separate_proj_weight=separate, q_proj_weight=full["q_proj_weight"],
                  k_proj_weight=full["k_proj_weight"], v_proj_weight=full["v_proj_weight"], **ms)  # fmt: skip

    arrays = [q, kv, rng.standard_normal(kv.shape)] + [w[k] for k in names]
    xs_t = [torch.tensor(a, requires_grad=True) for a in arrays]
    xs_o = [tga.tensor(a, requires_grad=True) for a in arrays]
    out_t = call(torch, torch.nn.functional.multi_head_attention_forward, *xs_t)
    out_o = call(tga, F.multi_head_attention_forward, *xs_o)
    assert (out_o[1] is None) == (out_t[1] is None)
    for o, t in zip(out_o, out_t):
        if t is not None:
            assert o.shape == tuple(t.shape)
            np.testing.assert_allclose(o.detach().numpy(), t.detach().numpy(), rtol=1e-10, atol=1e-12)
    cot = rng.standard_normal(tuple(out_t[0].shape))
    gt = torch.autograd.grad(out_t[0], xs_t, torch.tensor(cot))
    go = tga.autograd.grad(out_o[0], xs_o, tga.tensor(cot))
    for o, t in zip(go, gt):
        np.testing.assert_allclose(o.detach().numpy(), t.detach().numpy(), rtol=1e-9, atol=1e-10)


def test_functional_static_kv_and_checks_as_pytorchs(rng):
    w = _weights(rng, False, False)
    q, kv = rng.standard_normal((L, N, E)), rng.standard_normal((S, N, E))
    static_k, static_v = rng.standard_normal((N * H, S + 1, E // H)), rng.standard_normal((N * H, S + 1, E // H))

    def call(lib, fn, **extra):
        t = {k: None if v is None else lib.tensor(v) for k, v in w.items()}
        return fn(lib.tensor(q), lib.tensor(kv), lib.tensor(kv), E, H, t["in_proj_weight"], t["in_proj_bias"],
                  None, None, False, 0.0, t["out_proj_weight"], t["out_proj_bias"], **extra)  # fmt: skip

    extra = dict(static_k=static_k, static_v=static_v)
    out_t = call(
        torch, torch.nn.functional.multi_head_attention_forward, **{k: torch.tensor(v) for k, v in extra.items()}
    )
    out_o = call(tga, F.multi_head_attention_forward, **{k: tga.tensor(v) for k, v in extra.items()})
    for o, t in zip(out_o, out_t):
        np.testing.assert_allclose(o.detach().numpy(), t.detach().numpy(), rtol=1e-10, atol=1e-12)
    for kw, error in (({"is_causal": True}, RuntimeError),):
        with pytest.raises(error, match="Need attn_mask"):
            call(torch, torch.nn.functional.multi_head_attention_forward, **kw)
        with pytest.raises(error, match="Need attn_mask"):
            call(tga, F.multi_head_attention_forward, **kw)
    with pytest.raises(AssertionError, match="was expecting embedding dimension of 6"):
        F.multi_head_attention_forward(tga.tensor(q), tga.tensor(kv), tga.tensor(kv), 6, H, None, None, None, None,
                                       False, 0.0, tga.tensor(w["out_proj_weight"]), None)  # fmt: skip
