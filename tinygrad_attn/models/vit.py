"""The Vision Transformer (Dosovitskiy et al., 2021): an image is a sequence of patches.

Patches are cut by reshape and permute (no convolution), flattened and projected by a
:class:`Linear`; a learned class token is put in front, learned positions are added,
pre-norm encoder layers run over the sequence, and the head reads the class token.
"""

from __future__ import annotations

import numpy as np

from ..nn.layers import Dropout, LayerNorm, Linear
from ..nn.module import Module, ModuleList, Parameter
from ..random import host_generator
from ..random import transforms as rt
from ..tensors._tensor import Tensor, cat
from .blocks import EncoderBlock


def patchify(x: Tensor, patch_size: int) -> Tensor:
    """``(B, C, H, W)`` -> ``(B, N, C*p*p)``, patches in row-major order, each flattened
    channel first (the layout of a ``p``-strided convolution's weight).

    >>> patchify(Tensor.randn(2, 3, 8, 8), 4).shape
    (2, 4, 48)
    """
    b, c, h, w = x.shape
    p = patch_size
    x = x.reshape(b, c, h // p, p, w // p, p)  # (B, C, H/p, p, W/p, p)
    x = x.permute(0, 2, 4, 1, 3, 5)  # (B, H/p, W/p, C, p, p)
    return x.reshape(b, (h // p) * (w // p), c * p * p)  # (B, N, C*p*p)


class ViT(Module):
    """``ViT(image_size, patch_size, channels, n_classes, d_model, n_heads, n_layers)``:
    images ``(B, C, H, W)`` -> class logits ``(B, n_classes)``.

    >>> vit = ViT(image_size=8, patch_size=4, channels=1, n_classes=3, d_model=16, n_heads=2, n_layers=1)
    >>> vit(Tensor.randn(2, 1, 8, 8)).shape
    (2, 3)
    """

    def __init__(self, image_size: int, patch_size: int, channels: int, n_classes: int, d_model: int,
                 n_heads: int, n_layers: int, d_ff: int | None = None, dropout: float = 0.0) -> None:  # fmt: skip
        super().__init__()
        if image_size % patch_size:
            raise ValueError(f"ViT: image_size {image_size} is not divisible by patch_size {patch_size}")
        self.image_size, self.patch_size, self.channels = image_size, patch_size, channels
        n_patches = (image_size // patch_size) ** 2
        self.patch_embed = Linear(channels * patch_size * patch_size, d_model)
        self.cls_token = Parameter(rt.normal(host_generator(), (1, 1, d_model), np.float32, 0.0, 0.02))
        self.pos_embed = Parameter(rt.normal(host_generator(), (1, n_patches + 1, d_model), np.float32, 0.0, 0.02))
        self.drop = Dropout(dropout)
        d_ff = 4 * d_model if d_ff is None else d_ff
        self.layers = ModuleList(
            EncoderBlock(d_model, n_heads, d_ff, dropout, norm_first=True, activation="gelu") for _ in range(n_layers)
        )
        self.norm = LayerNorm(d_model)
        self.head = Linear(d_model, n_classes)

    def forward(self, images: Tensor) -> Tensor:
        s, c = self.image_size, self.channels
        if images.ndim != 4 or images.shape[1:] != (c, s, s):
            raise ValueError(f"ViT: images must be (B, {c}, {s}, {s}), got shape {tuple(images.shape)}")
        b = images.shape[0]
        x = self.patch_embed(patchify(images, self.patch_size))  # (B, N, d)
        cls = self.cls_token.expand(b, 1, x.shape[-1])  # (B, 1, d)
        x = self.drop(cat([cls, x], axis=1) + self.pos_embed)  # (B, N+1, d)
        for layer in self.layers:
            x = layer(x)
        return self.head(self.norm(x[:, 0]))  # the class token: (B, n_classes)
