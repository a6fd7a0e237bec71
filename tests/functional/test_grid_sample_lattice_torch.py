"""grid_sample at grid coordinates on the pixel lattice, its borders and beyond (where a
coordinate's clip or reflection has a kink), on one-pixel axes too, in every mode, padding and
corner alignment: values and both gradients equal PyTorch's."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import tinygrad_attn as tga  # noqa: E402

_LATTICE = [-1.5, -1.0, -0.5, -0.25, 0.0, 0.25, 0.5, 1.0, 1.5]


def _run(lib, x, g, mode, padding, align):
    xt, gt = lib.tensor(x, requires_grad=True), lib.tensor(g, requires_grad=True)
    y = lib.nn.functional.grid_sample(xt, gt, mode=mode, padding_mode=padding, align_corners=align)
    weights = lib.tensor(np.arange(y.numel(), dtype=np.float64).reshape(tuple(y.shape)))
    (y * weights).sum().backward()
    # (no gradient and a zero gradient are one: nearest's grid has none here, PyTorch's zeros)
    return [y.detach().numpy()] + [np.zeros(t.shape) if t.grad is None else t.grad.numpy() for t in (xt, gt)]


@pytest.mark.parametrize("seed", range(40))
def test_grid_sample_on_the_lattice_is_pytorchs(seed):
    rng = np.random.default_rng(seed)
    h, w = rng.integers(1, 4, 2)
    x = rng.normal(size=(1, 2, h, w))
    g = rng.choice(_LATTICE, size=(1, 3, 2, 2))
    if seed % 2:  # (half the draws off the lattice)
        g = g + rng.normal(size=g.shape) * 0.3
    for padding in ("zeros", "border", "reflection"):
        for align in (False, True):
            for mode in ("bilinear", "nearest", "bicubic"):
                theirs, ours = _run(torch, x, g, mode, padding, align), _run(tga, x, g, mode, padding, align)
                for what, a, b in zip(("value", "input's gradient", "grid's gradient"), ours, theirs):
                    np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-9, err_msg=f"{what}: {mode} {padding} {align}")
