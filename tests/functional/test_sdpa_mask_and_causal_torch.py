"""``F.scaled_dot_product_attention`` given both ``attn_mask`` and ``is_causal=True``, against
PyTorch: its CPU math kernel refuses the two together (RuntimeError), its fused kernel (4-D
operands of one batch, heads and head size, last dims of stride 1, no dropout, a mask of 2 or 4
dims not requiring grad) applies both. Calls drawn from a seed (ranks, sizes, bool and float
masks and their shapes, dropout, grouped heads, transposed operands, float32/float64): the same
exception class, or the same values and gradients."""

from __future__ import annotations

import random

import numpy as np
import pytest

import tinygrad_attn as tga

torch = pytest.importorskip("torch")

SEEDS = range(150)


def _case(seed: int) -> dict:
    r = random.Random(seed)
    rank = r.choice([3, 4, 4, 4, 2, 5])
    b, h, tq, tk, d = r.randint(1, 2), r.choice([1, 2]), r.randint(1, 4), r.randint(1, 4), r.choice([2, 3])
    hq = h * r.choice([1, 1, 2]) if rank == 4 else h
    dv = d if r.random() < 0.85 else d + 1
    lead = {2: (), 3: (b,), 4: (b, hq), 5: (2, b, h)}[rank]
    klead = (b, h) if rank == 4 else lead
    if rank == 4 and r.random() < 0.1:
        klead = (3 - b, h)  # (another batch size: broadcast by the math kernel only)
    mshape = r.choice([(tq, tk), (1, tk), (tq, 1), (1, 1, tq, tk), (b, 1, tq, tk), (1, hq, tq, tk), (b, tq, tk), (tk,)])
    return {
        "q": lead + (tq, d),
        "k": klead + (tk, d),
        "v": klead + (tk, dv),
        "mask": mshape,
        "bool": r.random() < 0.5,
        "mask_grad": r.random() < 0.15,
        "dropout": 0.3 if r.random() < 0.1 else 0.0,
        "gqa": hq != h,
        "transposed": r.choice([None, None, None, "q", "k", "v"]),
        "dtype": r.choice(["float32", "float64"]),
        "seed": seed,
    }


def _run(m, c: dict):
    rng = np.random.default_rng(c["seed"])
    dt = getattr(m, c["dtype"])
    leaves = []
    for name in "qkv":
        a = rng.standard_normal(c[name])
        if c["transposed"] == name:  # (the same values, with the last dim of stride > 1)
            t = m.tensor(np.ascontiguousarray(np.swapaxes(a, -1, -2)), dtype=dt).transpose(-1, -2)
        else:
            t = m.tensor(a, dtype=dt)
        leaves.append(t.requires_grad_())
    q, k, v = leaves
    mk = rng.standard_normal(c["mask"])
    mask = m.tensor(mk > -0.5) if c["bool"] else m.tensor(mk, dtype=dt)
    if c["mask_grad"] and not c["bool"]:
        mask.requires_grad_()
    kw = {"enable_gqa": True} if c["gqa"] else {}
    if c["dropout"]:
        kw["dropout_p"] = c["dropout"]
    try:
        out = m.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=True, **kw)
    except Exception as e:  # noqa: BLE001 - the class is compared
        return next(cls for cls in (IndexError, ValueError, TypeError, RuntimeError, Exception) if isinstance(e, cls))
    if c["dropout"]:
        return "computed"  # (random: only that it computes)
    w = m.linspace(0.5, 2.0, out.numel(), dtype=dt).reshape(out.shape)
    (out * w).sum().backward()
    grads = [x.grad for x in leaves] + ([mask.grad] if mask.requires_grad else [])
    return [out.detach().numpy()] + [None if g is None else g.numpy() for g in grads]


@pytest.mark.parametrize("seed", SEEDS)
def test_mask_with_is_causal_as_pytorch(seed):
    c = _case(seed)
    ours, theirs = _run(tga, c), _run(torch, c)
    if not isinstance(theirs, list):
        assert ours == theirs, (c, ours, theirs)
        return
    assert isinstance(ours, list), (c, ours)
    tol = {"rtol": 1e-5, "atol": 1e-6} if c["dtype"] == "float32" else {"rtol": 1e-11, "atol": 1e-12}
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        assert (a is None) == (b is None)
        if a is not None:
            assert a.shape == b.shape and a.dtype == b.dtype
            np.testing.assert_allclose(a, b, **tol)


def test_the_draws_reach_both_kernels():
    kinds = {_run(torch, _case(s)).__class__.__name__ for s in SEEDS}
    assert {"list", "type"} <= kinds
    refused = sum(_run(torch, _case(s)) is RuntimeError for s in SEEDS)
    assert 20 < refused < len(SEEDS) - 20


def test_attention_modules_combine_the_mask_and_the_causal_triangle():
    # (the library's batch-first attention passes one mask with the triangle in it)
    q = tga.randn(2, 3, 4)
    m = tga.tensor([[True, True, False], [True, True, True], [False, True, True]])
    from tinygrad_attn.nn.attention import attend_heads

    got, _ = attend_heads(q, q, q, 2, m, True)
    want, _ = attend_heads(q, q, q, 2, m & tga.ones(3, 3, dtype=tga.bool).tril(), False)
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("shape", [(), (5,), (1,), (3, 5), (1, 5), (2, 1, 5)], ids=str)
@pytest.mark.parametrize("kind", ["bool", "float"])
def test_mask_of_any_number_of_dims_as_pytorch(shape: tuple, kind: str) -> None:
    """A mask of fewer than 2 dims is PyTorch's IndexError; others broadcast."""

    def outcome(m):
        g = np.random.default_rng(0)
        q, k, v = (m.tensor(g.standard_normal(s), dtype=m.float64) for s in ((1, 2, 3, 4), (1, 2, 5, 4), (1, 2, 5, 4)))
        mk = g.standard_normal(shape)
        mask = m.tensor(mk > -0.5) if kind == "bool" else m.tensor(mk, dtype=m.float64)
        try:
            return m.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask).tolist()
        except (IndexError, RuntimeError) as e:
            return type(e).__name__

    want, got = outcome(torch), outcome(tga)
    assert type(want) is type(got) and (isinstance(want, str) and want == got or np.allclose(want, got, atol=1e-12))
