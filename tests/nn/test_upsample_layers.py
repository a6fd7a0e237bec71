"""``nn.ConvTranspose1d/2d``, ``nn.Upsample`` (and its fixed-mode forms) and
``nn.MaxUnpool1d/2d`` against PyTorch: PyTorch's weights load into ours, outputs, input
gradients and parameter gradients agree in float64; the parameters are laid out and
initialised as PyTorch's."""

from __future__ import annotations

import numpy as np
import pytest
from torch_oracle import assert_matches_torch

import tinygrad_attn as tga
from tinygrad_attn import Tensor, nn

torch = pytest.importorskip("torch")

# (constructor arguments, input shape, output_size passed to forward)
TRANSPOSED = [
    ("ConvTranspose1d", (3, 4, 3), {}, (2, 3, 5), None),
    ("ConvTranspose1d", (2, 4, 3), {"stride": 2, "padding": 1, "output_padding": 1, "dilation": 1}, (2, 2, 5), None),
    ("ConvTranspose1d", (4, 6, 2), {"stride": 3, "groups": 2, "bias": False}, (1, 4, 4), (11,)),
    ("ConvTranspose1d", (3, 2, 3), {"dilation": 2}, (3, 6), None),  # unbatched
    ("ConvTranspose2d", (3, 2, 3), {}, (2, 3, 4, 5), None),
    ("ConvTranspose2d", (2, 4, (3, 2)), {"stride": (2, 1), "padding": (1, 0)}, (2, 2, 3, 4), None),
    ("ConvTranspose2d", (4, 2, 2), {"stride": 2, "groups": 2}, (1, 4, 3, 3), (1, 2, 7, 7)),
    ("ConvTranspose2d", (2, 3, 3), {"stride": 2, "padding": 1, "output_padding": 1, "dilation": 2}, (2, 2, 3, 3), None),
]


@pytest.mark.parametrize(("cls", "args", "kw", "shape", "size"), TRANSPOSED, ids=lambda v: str(v))
def test_conv_transpose_matches_torch_with_its_weights(cls, args, kw, shape, size, rng):
    ours, theirs = getattr(nn, cls)(*args, **kw), getattr(torch.nn, cls)(*args, **kw)
    assert_matches_torch(
        ours,
        theirs,
        lambda x: ours(x, output_size=size),
        lambda x: theirs(x, output_size=size),
        [rng.standard_normal(shape)],
    )


def test_conv_transpose_parameters_init_and_errors_as_pytorch():
    tga.manual_seed(0)
    torch.manual_seed(0)
    ours, theirs = nn.ConvTranspose2d(4, 6, 3, groups=2), torch.nn.ConvTranspose2d(4, 6, 3, groups=2)
    assert [(n, tuple(p.shape)) for n, p in ours.named_parameters()] == [
        (n, tuple(p.shape)) for n, p in theirs.named_parameters()
    ]
    # U(±1/sqrt(fan_in)), fan_in = out/groups * k*k = 27, as PyTorch's kaiming_uniform_(a=sqrt(5))
    bound = 1 / np.sqrt(27)
    for p in (ours.weight, ours.bias):
        assert np.abs(p.detach().numpy()).max() <= bound and np.abs(p.detach().numpy()).max() > 0.6 * bound
    assert nn.ConvTranspose1d(2, 3, 2, bias=False).bias is None
    with pytest.raises(ValueError, match="ConvTranspose2d.*zeros"):
        nn.ConvTranspose2d(2, 2, 3, padding_mode="reflect")
    with pytest.raises(ValueError, match="ConvTranspose2d.*divisible by groups"):
        nn.ConvTranspose2d(3, 2, 3, groups=2)
    layer = nn.ConvTranspose1d(2, 2, 3, stride=2)
    with pytest.raises(ValueError, match=r"ConvTranspose1d.*between 9 and 10"):
        layer(Tensor.zeros(1, 2, 4), output_size=(12,))
    assert "ConvTranspose2d(4, 6, kernel_size=(3, 3), stride=(1, 1), groups=2)" == repr(ours)


def test_conv_transpose_decodes_what_a_conv_encodes(rng):
    """An autoencoder's shapes: Conv2d with stride 2 down, ConvTranspose2d with output_size back up."""
    down, up = nn.Conv2d(3, 8, 3, stride=2, padding=1), nn.ConvTranspose2d(8, 3, 3, stride=2, padding=1)
    x = Tensor(rng.standard_normal((2, 3, 9, 8)).astype(np.float32), requires_grad=True)
    h = down(x)
    y = up(h, output_size=x.shape)
    assert y.shape == x.shape
    ((y - x) ** 2).mean().backward()
    assert x.grad.shape == x.shape and up.weight.grad.shape == up.weight.shape


UPSAMPLE = [
    ("Upsample", {"scale_factor": 2}, (2, 3, 5)),
    ("Upsample", {"scale_factor": 2, "mode": "nearest"}, (2, 3, 4, 5)),
    ("Upsample", {"size": (7, 3), "mode": "nearest"}, (1, 2, 4, 5)),
    ("Upsample", {"scale_factor": 1.5, "mode": "bilinear", "align_corners": False}, (2, 2, 4, 3)),
    ("Upsample", {"scale_factor": (2, 3), "mode": "bilinear", "align_corners": True}, (1, 2, 3, 3)),
    ("Upsample", {"size": 9, "mode": "linear"}, (2, 3, 4)),
    ("Upsample", {"scale_factor": 2, "mode": "nearest-exact"}, (1, 1, 3, 3)),
    ("UpsamplingNearest2d", {"scale_factor": 2}, (2, 3, 3, 2)),
    ("UpsamplingBilinear2d", {"size": (5, 4)}, (2, 3, 3, 2)),
]


@pytest.mark.parametrize(("cls", "kw", "shape"), UPSAMPLE, ids=lambda v: str(v))
def test_upsample_matches_torch(cls, kw, shape, rng):
    ours, theirs = getattr(nn, cls)(**kw), getattr(torch.nn, cls)(**kw)
    assert list(ours.state_dict()) == list(theirs.state_dict()) == []
    assert_matches_torch(ours, theirs, ours, theirs, [rng.standard_normal(shape)])
    assert repr(ours) == repr(theirs)


def test_upsample_gradcheck(device, rng):
    up = nn.Upsample(scale_factor=2, mode="bilinear", align_corners=False)
    x = Tensor(rng.standard_normal((1, 2, 3, 3)), device=device)
    assert tga.gradcheck(up, x)


@pytest.mark.parametrize("nd", [1, 2])
def test_max_unpool_layers_invert_max_pool_as_pytorch(nd, rng):
    pool_o = (nn.MaxPool1d if nd == 1 else nn.MaxPool2d)(2, stride=2, return_indices=True)
    pool_t = (torch.nn.MaxPool1d if nd == 1 else torch.nn.MaxPool2d)(2, stride=2, return_indices=True)
    unpool_o = (nn.MaxUnpool1d if nd == 1 else nn.MaxUnpool2d)(2, stride=2)
    unpool_t = (torch.nn.MaxUnpool1d if nd == 1 else torch.nn.MaxUnpool2d)(2, stride=2)
    shape = (2, 3, 9) if nd == 1 else (2, 3, 5, 4)
    a = rng.standard_normal(shape)
    x, tx = Tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    y, i = pool_o(x)
    ty, ti = pool_t(tx)
    z = unpool_o(y, i, output_size=x.shape)
    tz = unpool_t(ty, ti, output_size=tx.shape)
    np.testing.assert_array_equal(z.detach().numpy(), tz.detach().numpy())
    w = rng.standard_normal(z.shape)
    (z * Tensor(w)).sum().backward()
    (tz * torch.tensor(w)).sum().backward()
    np.testing.assert_allclose(x.grad.detach().numpy(), tx.grad.detach().numpy(), rtol=1e-12)
    assert repr(unpool_o) == repr(unpool_t)
