"""float16 reductions run in float32 and round once, as PyTorch's CPU kernels: a float16 running
sum (NumPy's) drifts by whole units over a thousand terms, and a float16 mean rounded twice
(the sum, then the division) is one unit off in about a quarter of the rows. (Products are
not widened: PyTorch's float16 products stay float16.)"""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import tinygrad_attn as tga  # noqa: E402

REDUCTIONS = {
    "sum": lambda m, x, d: x.sum(d),
    "mean": lambda m, x, d: x.mean(d),
    "mean keepdim": lambda m, x, d: x.mean(d, keepdim=True),
    "cumsum": lambda m, x, d: x.cumsum(d),
    "var": lambda m, x, d: x.var(d),
    "std": lambda m, x, d: x.std(d),
    "var_mean": lambda m, x, d: m.var_mean(x, d)[0],
    "std_mean": lambda m, x, d: m.std_mean(x, d)[1],
    "nansum": lambda m, x, d: x.nansum(d),
    "nanmean": lambda m, x, d: x.nanmean(d),
    "norm": lambda m, x, d: x.norm(dim=d),
    "norm keepdim": lambda m, x, d: x.norm(dim=d, keepdim=True),
    "vector_norm": lambda m, x, d: m.linalg.vector_norm(x, 3, d),
    "matrix_norm": lambda m, x, d: m.linalg.matrix_norm(x.reshape(20, -1, 40 // (d + 1))),
    "logsumexp": lambda m, x, d: x.logsumexp(d),
}


@pytest.mark.parametrize("dim", [0, 1])
@pytest.mark.parametrize("name", sorted(REDUCTIONS))
def test_a_float16_reduction_rounds_once(name, dim):
    a = np.random.default_rng(7).standard_normal((600, 400)).astype(np.float16)
    want = REDUCTIONS[name](torch, torch.tensor(a), dim).detach().numpy()
    got = REDUCTIONS[name](tga, tga.tensor(a), dim).detach().numpy()
    assert got.dtype == want.dtype == np.float16
    ulps = np.abs(got.astype(np.float64) - want) / np.spacing(np.abs(want).astype(np.float16)).astype(np.float64)
    assert ulps.max() <= 1, f"{name}: {ulps.max()} float16 units apart"
    assert (ulps > 0).mean() <= 0.01, f"{name}: {(ulps > 0).mean():.1%} of the results differ by a unit"
