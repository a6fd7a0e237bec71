"""``torch.nn.modules.loss``: PyTorch's path to its losses, here the classes of
:mod:`tinygrad_attn.nn` (the same objects)."""

from ..loss import (
    BCELoss,
    BCEWithLogitsLoss,
    CosineEmbeddingLoss,
    CrossEntropyLoss,
    HuberLoss,
    KLDivLoss,
    L1Loss,
    MSELoss,
    NLLLoss,
    SmoothL1Loss,
)

__all__ = [
    "L1Loss",
    "NLLLoss",
    "KLDivLoss",
    "MSELoss",
    "BCELoss",
    "BCEWithLogitsLoss",
    "SmoothL1Loss",
    "HuberLoss",
    "CrossEntropyLoss",
    "CosineEmbeddingLoss",
]
