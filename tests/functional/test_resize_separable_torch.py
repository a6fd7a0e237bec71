"""``interpolate`` through PyTorch's separable kernel: ``uint8`` bilinear and bicubic (fixed point,
equal to the last unit) and ``antialias=True`` in every dtype (values, and in float64 the gradient
against PyTorch's and finite differences), by a generator over input and output sizes, scale
factors, ``align_corners``, ``antialias`` and channel counts."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import tinygrad_attn as tga
import tinygrad_attn.functional as F

torch = pytest.importorskip("torch")

SIZES = [1, 2, 3, 7, 16]


def _cases():
    rng = np.random.default_rng(0)
    for (h, w), (oh, ow) in itertools.product(
        itertools.product([1, 4, 9], [1, 5, 8]), [(1, 3), (2, 2), (7, 13), (16, 4)]
    ):
        for mode, align, aa in itertools.product(("bilinear", "bicubic"), (False, True), (False, True)):
            c = int(rng.choice([1, 3, 4, 6]))
            if c > 4 and (w == 1 or ow == 1):
                # (PyTorch's uint8 kernel for more than 4 channels takes an (N, C, H, 1) image for a
                # channels-last one and mixes its channels: a defect of its, not reproduced)
                c = 3
            yield pytest.param((2, c, h, w), dict(size=(oh, ow)), mode, align, aa,
                               id=f"{mode}-{c}x{h}x{w}-to-{oh}x{ow}-align{align}-aa{aa}")  # fmt: skip
    for scale, recompute in itertools.product([(0.5, 0.5), (1.7, 0.6), (2.0, 3.0), (0.3, 1.25)], (None, True)):
        for mode, align, aa in itertools.product(("bilinear", "bicubic"), (False, True), (False, True)):
            kw = dict(scale_factor=scale, recompute_scale_factor=recompute)
            yield pytest.param((1, 3, 10, 7), kw, mode, align, aa, id=f"{mode}-scale{scale}-{recompute}-{align}-{aa}")


CASES = list(_cases())


def _run(lib, x, kw, mode, align, aa):
    return lib.interpolate(x, mode=mode, align_corners=align, antialias=aa, **kw)


def _torch_or_skip(x, kw, mode, align, aa):
    try:
        return _run(torch.nn.functional, x, kw, mode, align, aa)
    except RuntimeError as e:  # (an internal assert of PyTorch's uint8 kernel for a few 1 x 1 outputs)
        pytest.skip(f"PyTorch raises: {str(e)[:60]}")


@pytest.mark.parametrize(("shape", "kw", "mode", "align", "aa"), CASES)
def test_uint8_in_pytorchs_fixed_point(shape, kw, mode, align, aa) -> None:
    x = np.random.default_rng(sum(shape)).integers(0, 256, shape).astype(np.uint8)
    theirs = _torch_or_skip(torch.from_numpy(x), kw, mode, align, aa)
    ours = _run(F, tga.tensor(x), kw, mode, align, aa)
    assert ours.dtype == tga.uint8
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


@pytest.mark.parametrize(("shape", "kw", "mode", "align", "aa"), [c for c in CASES if c.values[4]])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_antialias_values_and_gradients(shape, kw, mode, align, aa, dtype) -> None:
    x = np.random.default_rng(sum(shape)).standard_normal(shape).astype(dtype)
    t = torch.from_numpy(x).requires_grad_()
    ours = tga.tensor(x, requires_grad=True)
    theirs = _torch_or_skip(t, kw, mode, align, aa)
    out = _run(F, ours, kw, mode, align, aa)
    assert out.dtype == getattr(tga, dtype) and out.shape == tuple(theirs.shape)
    tol = 1e-10 if dtype == "float64" else 1e-5
    np.testing.assert_allclose(out.detach().numpy(), theirs.detach().numpy(), rtol=tol, atol=tol)
    if dtype == "float64":
        g = np.random.default_rng(1).standard_normal(theirs.shape)
        (theirs * torch.from_numpy(g)).sum().backward()
        (out * tga.tensor(g)).sum().backward()
        np.testing.assert_allclose(ours.grad.numpy(), t.grad.numpy(), rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
def test_antialias_gradient_against_finite_differences(mode) -> None:
    x = tga.tensor(np.random.default_rng(2).standard_normal((1, 2, 6, 5)), requires_grad=True)
    assert tga.gradcheck(lambda v: F.interpolate(v, size=(3, 7), mode=mode, antialias=True), x)
    # (linear in its input: a gradient built with create_graph is the same linear map, of the cotangent)
    g = tga.tensor(np.random.default_rng(3).standard_normal((1, 2, 3, 7)), requires_grad=True)
    assert tga.gradcheck(lambda c: tga.autograd.grad(F.interpolate(x, size=(3, 7), mode=mode, antialias=True), x, c,
                                                     create_graph=True)[0], g)  # fmt: skip


@pytest.mark.parametrize("mode", ["linear", "trilinear", "nearest", "area"])
def test_antialias_only_for_bilinear_and_bicubic(mode) -> None:
    shape = (1, 1, 4) if mode == "linear" else (1, 1, 4, 4, 4) if mode == "trilinear" else (1, 1, 4, 4)
    size = tuple(2 for _ in shape[2:])
    with pytest.raises(ValueError, match="Anti-alias") as theirs:
        torch.nn.functional.interpolate(torch.zeros(shape), size=size, mode=mode, antialias=True)
    with pytest.raises(type(theirs.value), match="Anti-alias"):
        F.interpolate(tga.zeros(shape), size=size, mode=mode, antialias=True)
