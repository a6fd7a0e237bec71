"""ViT: patches by reshape/permute against NumPy, names, a gradient check, and a tiny model
that overfits 64 images."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import close
from modelcheck import gradcheck_module

import tinygrad_attn as tga
import tinygrad_attn.functional as F
from tinygrad_attn import Tensor
from tinygrad_attn.models import ViT
from tinygrad_attn.models.vit import patchify
from tinygrad_attn.optim import Adam


def test_patchify_equals_numpy(device, rng):
    x = rng.standard_normal((2, 3, 6, 4))
    got = patchify(Tensor(x, device=device), 2)
    ref = [
        [x[b, :, i : i + 2, j : j + 2].reshape(-1) for i in range(0, 6, 2) for j in range(0, 4, 2)] for b in range(2)
    ]
    close(got, np.array(ref), atol=0)
    assert got.shape == (2, 6, 12)


def test_names_and_shapes():
    vit = ViT(image_size=8, patch_size=4, channels=3, n_classes=5, d_model=16, n_heads=2, n_layers=2)
    names = [n for n, _ in vit.named_parameters()]
    assert names[:4] == ["cls_token", "pos_embed", "patch_embed.weight", "patch_embed.bias"]
    assert "layers.1.self_attn.out_proj.weight" in names and names[-2:] == ["head.weight", "head.bias"]
    assert vit.pos_embed.shape == (1, 5, 16) and vit.patch_embed.weight.shape == (16, 48)
    assert vit(Tensor.randn(3, 3, 8, 8)).shape == (3, 5)


def test_head_reads_the_class_token(rng):
    vit = ViT(image_size=4, patch_size=2, channels=1, n_classes=3, d_model=8, n_heads=2, n_layers=1)
    x = Tensor(rng.standard_normal((2, 1, 4, 4)).astype(np.float32))
    a = vit(x).detach().numpy()
    vit.cls_token.data = vit.cls_token._dev.asarray(np.ones((1, 1, 8)), dtype=vit.cls_token.dtype)
    assert np.abs(vit(x).detach().numpy() - a).max() > 1e-4


def test_errors():
    with pytest.raises(ValueError, match="ViT: image_size 10 is not divisible by patch_size 4"):
        ViT(10, 4, 1, 2, 8, 2, 1)
    vit = ViT(8, 4, 1, 2, 8, 2, 1)
    with pytest.raises(ValueError, match=r"ViT: images must be \(B, 1, 8, 8\), got shape \(2, 3, 8, 8\)"):
        vit(Tensor.randn(2, 3, 8, 8))


@pytest.mark.slow  # over 2 s on the array-API devices
def test_gradcheck(device, rng):
    vit = ViT(image_size=4, patch_size=2, channels=1, n_classes=3, d_model=4, n_heads=2, n_layers=1, d_ff=4)
    vit = vit.to(device)
    x = Tensor(rng.standard_normal((2, 1, 4, 4)), device=device)
    assert gradcheck_module(vit, vit, x)


@pytest.mark.slow
def test_overfits_64_images():
    tga.manual_seed(0)
    rng = np.random.default_rng(0)
    images = Tensor(rng.standard_normal((64, 1, 8, 8)).astype(np.float32))
    labels = rng.integers(0, 4, 64)  # random labels: only memorising fits them
    vit = ViT(image_size=8, patch_size=4, channels=1, n_classes=4, d_model=16, n_heads=2, n_layers=1)
    opt = Adam(vit.parameters(), lr=3e-3)
    for _ in range(80):
        loss = F.cross_entropy(vit(images), labels)
        opt.zero_grad()
        loss.backward()
        opt.step()
    accuracy = (vit(images).detach().numpy().argmax(-1) == labels).mean()
    assert accuracy >= 0.95, accuracy
    assert loss.item() < 0.1
