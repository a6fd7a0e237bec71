"""A reduction given an empty ``dim`` (``[]`` or ``()``) reduces every axis, as PyTorch's
(``x.sum(dim=[])`` is ``x.sum()``), with and without ``keepdim``; ops that are not reductions
(``flip``) read it as no axis. Before, the reductions here reduced nothing: a silent copy."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import tinygrad_attn as tga  # noqa: E402

CALLS = {
    "sum": lambda m, x, d, k: x.sum(dim=d, keepdim=k),
    "mean": lambda m, x, d, k: x.mean(dim=d, keepdim=k),
    "amax": lambda m, x, d, k: x.amax(dim=d, keepdim=k),
    "amin": lambda m, x, d, k: x.amin(dim=d, keepdim=k),
    "nansum": lambda m, x, d, k: x.nansum(dim=d, keepdim=k),
    "nanmean": lambda m, x, d, k: x.nanmean(dim=d, keepdim=k),
    "var": lambda m, x, d, k: x.var(dim=d, keepdim=k),
    "std": lambda m, x, d, k: x.std(dim=d, keepdim=k),
    "var_mean": lambda m, x, d, k: m.var_mean(x, d, keepdim=k)[0],
    "std_mean": lambda m, x, d, k: m.std_mean(x, d, keepdim=k)[1],
    "count_nonzero": lambda m, x, d, k: x.count_nonzero(dim=d),
    "norm": lambda m, x, d, k: x.norm(dim=d, keepdim=k),
    "vector_norm": lambda m, x, d, k: m.linalg.vector_norm(x, dim=d, keepdim=k),
    "logsumexp keepdim": lambda m, x, d, k: x.logsumexp(dim=d, keepdim=True),
    "flip": lambda m, x, d, k: x.flip(d),
}


@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("empty", [[], ()], ids=["list", "tuple"])
@pytest.mark.parametrize("name", CALLS)
def test_an_empty_dim_reduces_as_pytorchs(name, empty, keepdim):
    a = np.random.default_rng(0).standard_normal((2, 3, 4))
    want = CALLS[name](torch, torch.tensor(a), empty, keepdim)
    got = CALLS[name](tga, tga.tensor(a), empty, keepdim)
    assert tuple(got.shape) == tuple(want.shape)
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-12)
