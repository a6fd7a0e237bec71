"""A small Vision Transformer as the "ViT from scratch" tutorials write it (a ``Conv2d``
patch embedding and ``nn.MultiheadAttention`` blocks), re-written.

What it exercises: ``nn.Conv2d(c, d, kernel_size=p, stride=p)`` then ``flatten(2)
.transpose(1, 2)``, a class token and position table as ``nn.Parameter(torch.zeros(...))``
set with ``nn.init.trunc_normal_(std=0.02)``, ``cls_token.expand(B, -1, -1)``, pre-norm
blocks with ``nn.MultiheadAttention(batch_first=True)`` called as ``attn(x, x, x,
need_weights=False)[0]``, an MLP in ``nn.Sequential`` with ``nn.GELU``, ``self.apply``
of an init that zeroes biases and sets LayerNorms with ``nn.init.constant_``,
``nn.CrossEntropyLoss(label_smoothing=0.1)``, AdamW with ``weight_decay`` and a
``CosineAnnealingLR``.
"""

from __future__ import annotations

from types import SimpleNamespace


def data(rng):
    return {"images": rng.standard_normal((2, 3, 8, 8)), "labels": rng.integers(0, 5, size=2)}


def tutorial(torch, nn, F):
    class PatchEmbedding(nn.Module):
        def __init__(self, img_size, patch_size, in_channels, embed_dim):
            super().__init__()
            self.n_patches = (img_size // patch_size) ** 2
            self.proj = nn.Conv2d(in_channels, embed_dim, kernel_size=patch_size, stride=patch_size)

        def forward(self, x):
            x = self.proj(x)  # (B, E, H/P, W/P)
            x = x.flatten(2)  # (B, E, N)
            return x.transpose(1, 2)  # (B, N, E)

    class TransformerBlock(nn.Module):
        def __init__(self, dim, heads, mlp_ratio=4.0, dropout=0.0):
            super().__init__()
            self.norm1 = nn.LayerNorm(dim)
            self.attn = nn.MultiheadAttention(dim, heads, dropout=dropout, batch_first=True)
            self.norm2 = nn.LayerNorm(dim)
            hidden = int(dim * mlp_ratio)
            self.mlp = nn.Sequential(
                nn.Linear(dim, hidden), nn.GELU(), nn.Dropout(dropout), nn.Linear(hidden, dim), nn.Dropout(dropout)
            )

        def forward(self, x):
            h = self.norm1(x)
            x = x + self.attn(h, h, h, need_weights=False)[0]
            return x + self.mlp(self.norm2(x))

    class VisionTransformer(nn.Module):
        def __init__(self, img_size=8, patch_size=4, in_channels=3, num_classes=5, embed_dim=8, depth=2, heads=2):
            super().__init__()
            self.patch_embed = PatchEmbedding(img_size, patch_size, in_channels, embed_dim)
            n = self.patch_embed.n_patches
            self.cls_token = nn.Parameter(torch.zeros(1, 1, embed_dim))
            self.pos_embed = nn.Parameter(torch.zeros(1, n + 1, embed_dim))
            self.blocks = nn.ModuleList([TransformerBlock(embed_dim, heads) for _ in range(depth)])
            self.norm = nn.LayerNorm(embed_dim)
            self.head = nn.Linear(embed_dim, num_classes)
            nn.init.trunc_normal_(self.pos_embed, std=0.02)
            nn.init.trunc_normal_(self.cls_token, std=0.02)
            self.apply(self._init_weights)

        def _init_weights(self, m):
            if isinstance(m, nn.Linear):
                nn.init.trunc_normal_(m.weight, std=0.02)
                if m.bias is not None:
                    nn.init.zeros_(m.bias)
            elif isinstance(m, nn.LayerNorm):
                nn.init.constant_(m.weight, 1.0)
                nn.init.constant_(m.bias, 0.0)

        def forward(self, x):
            B = x.shape[0]
            x = self.patch_embed(x)
            cls_tokens = self.cls_token.expand(B, -1, -1)
            x = torch.cat((cls_tokens, x), dim=1)
            x = x + self.pos_embed
            for blk in self.blocks:
                x = blk(x)
            x = self.norm(x)
            return self.head(x[:, 0])  # the class token's row

    criterion = nn.CrossEntropyLoss(label_smoothing=0.1)

    def model():
        return VisionTransformer()

    def optimizer(model):
        opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.05)
        sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=10)
        return opt, sched

    def forward(model, batch):
        logits = model(batch["images"])
        return {"logits": logits}, criterion(logits, batch["labels"])

    def update(model, state):
        opt, sched = state
        opt.step()
        sched.step()
        opt.zero_grad()

    return SimpleNamespace(model=model, optimizer=optimizer, forward=forward, update=update)
