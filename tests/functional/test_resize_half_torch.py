"""float16 ``interpolate`` in the modes ``linear`` and ``trilinear`` rounds as PyTorch's (float32 positions, float16 weights,
float32 sums, one final rounding): equal to the last float16 unit, by a generator over sizes, scale
factors and ``align_corners``; and its gradient has PyTorch's dtype."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import tinygrad_attn as tga
import tinygrad_attn.functional as F

torch = pytest.importorskip("torch")

MODES = {"linear": (11,), "trilinear": (4, 3, 6)}  # (bilinear: PyTorch's float32-weight kernel, within tolerance)


def _cases():
    for mode, spatial in MODES.items():
        nd = len(spatial)
        for out, align in itertools.product([1, 2, 7, 13], [False, True]):
            yield pytest.param(mode, spatial, dict(size=(out,) * nd), align, id=f"{mode}-size{out}-align{align}")
        for scale, recompute in itertools.product([0.5, 1.7, 2.0, 3.3], [None, True]):
            kw = dict(scale_factor=scale, recompute_scale_factor=recompute)
            yield pytest.param(mode, spatial, kw, False, id=f"{mode}-scale{scale}-{recompute}")


@pytest.mark.parametrize(("mode", "spatial", "kw", "align"), list(_cases()))
def test_half_linear_modes_round_as_pytorch(mode, spatial, kw, align) -> None:
    x = (np.random.default_rng(len(spatial)).standard_normal((2, 3) + spatial) * 10).astype(np.float16)
    t = torch.from_numpy(x).requires_grad_()
    ours = tga.tensor(x, requires_grad=True)
    theirs = torch.nn.functional.interpolate(t, mode=mode, align_corners=align, **kw)
    out = F.interpolate(ours, mode=mode, align_corners=align, **kw)
    assert out.dtype == tga.float16
    np.testing.assert_array_equal(out.detach().numpy(), theirs.detach().numpy())
    g = np.ones(theirs.shape, np.float16)
    theirs.backward(torch.from_numpy(g))
    out.backward(tga.tensor(g))
    assert ours.grad.dtype == tga.float16
    np.testing.assert_allclose(ours.grad.numpy().astype(np.float64), t.grad.numpy().astype(np.float64), rtol=5e-3,
                               atol=5e-3)  # fmt: skip
