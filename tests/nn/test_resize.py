"""F.interpolate against PyTorch (float64 values and gradients, every mode, size and
scale_factor, align_corners), finite differences on every CPU namespace, integer images
for the nearest modes, and clear errors."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import close, rand

import tinygrad_attn as tga
import tinygrad_attn.functional as F
from tinygrad_attn import Tensor

torch = pytest.importorskip("torch")
TF = torch.nn.functional

# (mode, input shape, keyword arguments): upsampling and downsampling, ratios from sizes and from scales
CASES = [
    ("nearest", (2, 3, 13), {"size": 9}),
    ("nearest", (2, 3, 9, 11), {"size": (10, 13)}),
    ("nearest", (1, 2, 3, 4, 5), {"scale_factor": 1.7}),
    ("nearest-exact", (2, 3, 13, 10), {"size": (9, 11)}),
    ("nearest-exact", (2, 3, 7), {"scale_factor": 2}),
    ("linear", (2, 3, 12), {"size": 31}),
    ("linear", (2, 3, 12), {"size": 5, "align_corners": True}),
    ("bilinear", (2, 3, 12, 9), {"size": (31, 20)}),
    ("bilinear", (1, 2, 9, 7), {"size": (4, 12), "align_corners": True}),
    ("bilinear", (1, 2, 5, 6), {"scale_factor": (0.6, 1.5)}),
    ("trilinear", (1, 2, 3, 4, 5), {"size": (5, 3, 6)}),
    ("trilinear", (1, 1, 3, 4, 2), {"size": (5, 1, 3), "align_corners": True}),
    ("bicubic", (2, 3, 5, 7), {"size": (9, 4)}),
    ("bicubic", (1, 2, 6, 5), {"size": (4, 11), "align_corners": True}),
    ("bicubic", (1, 2, 4, 4), {"scale_factor": (1.7, 0.6)}),
    ("bicubic", (1, 1, 3, 5), {"scale_factor": 2.3, "recompute_scale_factor": True}),
    ("bicubic", (1, 1, 1, 3), {"size": (3, 1), "align_corners": True}),
    ("area", (2, 3, 13), {"size": 5}),
    ("area", (2, 3, 9, 11), {"size": (4, 13)}),
    ("area", (1, 2, 7, 6), {"scale_factor": 0.6}),
    ("area", (1, 2, 3, 4, 5), {"size": (2, 5, 3)}),
]
IDS = [f"{m}-{s}-{sorted(kw.items())}" for m, s, kw in CASES]


@pytest.mark.parametrize(("mode", "shape", "kw"), CASES, ids=IDS)
def test_matches_torch_values_and_gradients(mode, shape, kw, rng):
    x = rand(rng, *shape)
    xt = torch.tensor(x.detach().numpy(), requires_grad=True)
    y = F.interpolate(x, mode=mode, **kw)
    yt = TF.interpolate(xt, mode=mode, **kw)
    assert y.shape == tuple(yt.shape)
    close(y, yt.detach().numpy(), atol=1e-12, rtol=1e-10)
    w = rng.standard_normal(y.shape)
    (g,) = tga.grad((y * Tensor(w)).sum(), [x])
    (gt,) = torch.autograd.grad((yt * torch.tensor(w)).sum(), [xt])
    close(g, gt.detach().numpy(), atol=1e-12, rtol=1e-10)


@pytest.mark.parametrize(
    ("mode", "shape", "kw"), [CASES[i] for i in (1, 6, 9, 11, 12, 13, 18, 19)], ids=lambda v: str(v)
)
@pytest.mark.slow  # (over a third of a second, or a new interpreter: not in the fast loop)
def test_gradcheck_first_and_second_order(mode, shape, kw, device, rng):
    x = rand(rng, *shape, device=device)
    assert tga.gradcheck(lambda x: F.interpolate(x, mode=mode, **kw), x)
    g = tga.grad((F.interpolate(x, mode=mode, **kw) ** 2).sum(), [x], create_graph=True)[0]
    assert g.requires_grad and g.device == x.device


@pytest.mark.parametrize("mode", ["nearest", "nearest-exact"])
def test_integer_images_nearest_as_pytorch(mode, rng):
    x = (rng.random((2, 3, 20, 17)) * 250).astype(np.uint8)
    y = F.interpolate(tga.tensor(x), size=(7, 23), mode=mode)
    assert y.dtype == tga.uint8
    np.testing.assert_array_equal(
        y.detach().numpy(), TF.interpolate(torch.tensor(x), size=(7, 23), mode=mode).detach().numpy()
    )


def test_bad_arguments_raise_clear_errors(rng):
    x = rand(rng, 1, 2, 4, 4)
    with pytest.raises(NotImplementedError, match=r"interpolate: mode 'linear' needs 3-D input, got 4-D"):
        F.interpolate(x, size=3, mode="linear")
    with pytest.raises(NotImplementedError, match="mode 'bicubic' needs 4-D input"):
        F.interpolate(x[0], size=3, mode="bicubic")
    with pytest.raises(NotImplementedError, match="mode 'cubic' is not supported"):
        F.interpolate(x, size=3, mode="cubic")
    with pytest.raises(ValueError, match="align_corners is only for the linear modes"):
        F.interpolate(x, size=3, mode="area", align_corners=False)
    with pytest.raises(ValueError, match="exactly one of size and scale_factor"):
        F.interpolate(x)
    with pytest.raises(ValueError, match=r"size \(3, 3, 3\) must have 2 entries"):
        F.interpolate(x, size=(3, 3, 3))
    with pytest.raises(ValueError, match="align_corners is only for the linear modes"):
        F.interpolate(x, size=3, align_corners=True)
