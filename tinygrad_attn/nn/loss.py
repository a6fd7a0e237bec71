"""Loss modules with PyTorch's names, constructor arguments and defaults.

Each holds its options (and its class ``weight`` / ``pos_weight`` as buffers, so they
move with ``to()`` and appear in ``state_dict()`` as PyTorch's do) and calls the
function of the same name in :mod:`tinygrad_attn.functional`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import functional as F
from .._tensor import Tensor
from .module import Module


def _buffer(t: Any) -> Tensor | None:
    if t is None or isinstance(t, Tensor):
        return t
    return Tensor(np.asarray(t, dtype=np.float32))


class _Loss(Module):
    def __init__(self, size_average: Any = None, reduce: Any = None, reduction: str = "mean") -> None:
        super().__init__()
        self.reduction = F._reduction(type(self).__name__, reduction, size_average, reduce)

    def extra_repr(self) -> str:
        return f"reduction={self.reduction!r}" if self.reduction != "mean" else ""


class _WeightedLoss(_Loss):
    def __init__(self, weight: Any = None, size_average: Any = None, reduce: Any = None,
                 reduction: str = "mean") -> None:  # fmt: skip
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", _buffer(weight))


class CrossEntropyLoss(_WeightedLoss):
    """:func:`tinygrad_attn.functional.cross_entropy` as a module: ``loss(input, target)``."""

    def __init__(self, weight: Any = None, size_average: Any = None, ignore_index: int = -100, reduce: Any = None,
                 reduction: str = "mean", label_smoothing: float = 0.0) -> None:  # fmt: skip
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index, self.label_smoothing = ignore_index, label_smoothing

    def forward(self, input: Tensor, target: Any) -> Tensor:
        return F.cross_entropy(input, target, weight=self.weight, ignore_index=self.ignore_index,
                               reduction=self.reduction, label_smoothing=self.label_smoothing)  # fmt: skip


class NLLLoss(_WeightedLoss):
    """:func:`tinygrad_attn.functional.nll_loss` as a module: ``loss(log_probs, target)``."""

    def __init__(self, weight: Any = None, size_average: Any = None, ignore_index: int = -100, reduce: Any = None,
                 reduction: str = "mean") -> None:  # fmt: skip
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index

    def forward(self, input: Tensor, target: Any) -> Tensor:
        return F.nll_loss(input, target, weight=self.weight, ignore_index=self.ignore_index, reduction=self.reduction)


class MSELoss(_Loss):
    """:func:`tinygrad_attn.functional.mse_loss` as a module: ``loss(input, target)``."""

    def forward(self, input: Tensor, target: Any) -> Tensor:
        return F.mse_loss(input, target, reduction=self.reduction)


class BCELoss(_WeightedLoss):
    """:func:`tinygrad_attn.functional.binary_cross_entropy` as a module: ``loss(probs, target)``."""

    def forward(self, input: Tensor, target: Any) -> Tensor:
        return F.binary_cross_entropy(input, target, weight=self.weight, reduction=self.reduction)


class BCEWithLogitsLoss(_Loss):
    """:func:`tinygrad_attn.functional.binary_cross_entropy_with_logits` as a module."""

    def __init__(self, weight: Any = None, size_average: Any = None, reduce: Any = None, reduction: str = "mean",
                 pos_weight: Any = None) -> None:  # fmt: skip
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", _buffer(weight))
        self.register_buffer("pos_weight", _buffer(pos_weight))

    def forward(self, input: Tensor, target: Any) -> Tensor:
        return F.binary_cross_entropy_with_logits(input, target, weight=self.weight, reduction=self.reduction,
                                                  pos_weight=self.pos_weight)  # fmt: skip


# -- regression and divergence losses ------------------------------------------------------
class L1Loss(_Loss):
    """:func:`tinygrad_attn.functional.l1_loss` as a module: ``loss(input, target)``."""

    def forward(self, input: Tensor, target: Any) -> Tensor:
        return F.l1_loss(input, target, reduction=self.reduction)


class SmoothL1Loss(_Loss):
    """:func:`tinygrad_attn.functional.smooth_l1_loss` as a module, with its ``beta``."""

    def __init__(self, size_average: Any = None, reduce: Any = None, reduction: str = "mean",
                 beta: float = 1.0) -> None:  # fmt: skip
        super().__init__(size_average, reduce, reduction)
        self.beta = beta

    def forward(self, input: Tensor, target: Any) -> Tensor:
        return F.smooth_l1_loss(input, target, reduction=self.reduction, beta=self.beta)


class HuberLoss(_Loss):
    """:func:`tinygrad_attn.functional.huber_loss` as a module, with its ``delta``."""

    def __init__(self, reduction: str = "mean", delta: float = 1.0) -> None:
        super().__init__(reduction=reduction)
        self.delta = delta

    def forward(self, input: Tensor, target: Any) -> Tensor:
        return F.huber_loss(input, target, reduction=self.reduction, delta=self.delta)


class KLDivLoss(_Loss):
    """:func:`tinygrad_attn.functional.kl_div` as a module: ``loss(log_probs, target)``;
    ``reduction="batchmean"`` is the KL divergence per sample."""

    def __init__(self, size_average: Any = None, reduce: Any = None, reduction: str = "mean",
                 log_target: bool = False) -> None:  # fmt: skip
        batchmean = reduction == "batchmean" and size_average is None and reduce is None
        super().__init__(size_average, reduce, "mean" if batchmean else reduction)
        if batchmean:
            self.reduction = "batchmean"
        self.log_target = log_target

    def forward(self, input: Tensor, target: Any) -> Tensor:
        return F.kl_div(input, target, reduction=self.reduction, log_target=self.log_target)


class CosineEmbeddingLoss(_Loss):
    """:func:`tinygrad_attn.functional.cosine_embedding_loss` as a module: ``loss(x1, x2, target)``."""

    def __init__(self, margin: float = 0.0, size_average: Any = None, reduce: Any = None,
                 reduction: str = "mean") -> None:  # fmt: skip
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input1: Tensor, input2: Tensor, target: Any) -> Tensor:
        return F.cosine_embedding_loss(input1, input2, target, margin=self.margin, reduction=self.reduction)
