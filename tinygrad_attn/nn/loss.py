"""Loss modules with PyTorch's names, constructor arguments and defaults.

Each holds its options (and its class ``weight`` / ``pos_weight`` as buffers, so they
move with ``to()`` and appear in ``state_dict()`` as PyTorch's do) and calls the
function of the same name in :mod:`tinygrad_attn.functional`.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, NamedTuple

import numpy as np

from .. import functional as F
from ..engine.warn import warn as _user_warn
from ..tensors._tensor import Tensor, cat, where
from .distance import PairwiseDistance
from .layers import Linear
from .module import Module, ModuleList, Sequential


def _buffer(t: Any) -> Tensor | None:
    if t is None or isinstance(t, Tensor):
        return t
    return Tensor(np.asarray(t, dtype=np.float32))


class _Loss(Module):
    def __init__(self, size_average: Any = None, reduce: Any = None, reduction: str = "mean") -> None:
        super().__init__()
        self.reduction = F._reduction(type(self).__name__, reduction, size_average, reduce)


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
        if isinstance(delta, bool) or not isinstance(delta, (int, float)):
            raise TypeError(f"delta must be a float or int, got: {type(delta)}")  # (PyTorch's check)
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


# -- PyTorch's margin, ranking and likelihood losses ---------------------------------------
class MarginRankingLoss(_Loss):
    """``F.margin_ranking_loss`` as a module: ``loss(x1, x2, target)``."""

    def __init__(self, margin: float = 0.0, size_average: Any = None, reduce: Any = None,
                 reduction: str = "mean") -> None:  # fmt: skip
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input1: Tensor, input2: Tensor, target: Any) -> Tensor:
        return F.margin_ranking_loss(input1, input2, target, margin=self.margin, reduction=self.reduction)


class HingeEmbeddingLoss(_Loss):
    """``F.hinge_embedding_loss`` as a module: ``loss(input, target)``, targets 1 and -1."""

    def __init__(self, margin: float = 1.0, size_average: Any = None, reduce: Any = None,
                 reduction: str = "mean") -> None:  # fmt: skip
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input: Tensor, target: Any) -> Tensor:
        return F.hinge_embedding_loss(input, target, margin=self.margin, reduction=self.reduction)


class SoftMarginLoss(_Loss):
    """``F.soft_margin_loss`` as a module: the logistic loss of targets 1 and -1."""

    def forward(self, input: Tensor, target: Any) -> Tensor:
        return F.soft_margin_loss(input, target, reduction=self.reduction)


class MultiLabelMarginLoss(_Loss):
    """``F.multilabel_margin_loss`` as a module: ``loss(input (N, C), target (N, C))``, the
    target classes listed first and ended by -1."""

    def forward(self, input: Tensor, target: Any) -> Tensor:
        return F.multilabel_margin_loss(input, target, reduction=self.reduction)


class MultiLabelSoftMarginLoss(_WeightedLoss):
    """``F.multilabel_soft_margin_loss`` as a module, with its class ``weight`` as a buffer."""

    def forward(self, input: Tensor, target: Any) -> Tensor:
        return F.multilabel_soft_margin_loss(input, target, weight=self.weight, reduction=self.reduction)


class MultiMarginLoss(_WeightedLoss):
    """``F.multi_margin_loss`` as a module: PyTorch's ``nn.MultiMarginLoss(p=1, margin=1.0,
    weight=None, reduction="mean")``."""

    def __init__(self, p: int = 1, margin: float = 1.0, weight: Any = None, size_average: Any = None,
                 reduce: Any = None, reduction: str = "mean") -> None:  # fmt: skip
        super().__init__(weight, size_average, reduce, reduction)
        if p not in (1, 2):
            raise ValueError("only p == 1 and p == 2 supported")
        if weight is not None and self.weight.ndim != 1:
            raise ValueError(f"MultiMarginLoss: expected weight to be 1D, got {self.weight.ndim}D instead")
        self.p, self.margin = p, margin

    def forward(self, input: Tensor, target: Any) -> Tensor:
        return F.multi_margin_loss(input, target, p=self.p, margin=self.margin, weight=self.weight,
                                   reduction=self.reduction)  # fmt: skip


class TripletMarginLoss(_Loss):
    """``F.triplet_margin_loss`` as a module: ``loss(anchor, positive, negative)``."""

    def __init__(self, margin: float = 1.0, p: float = 2.0, eps: float = 1e-6, swap: bool = False,
                 size_average: Any = None, reduce: Any = None, reduction: str = "mean") -> None:  # fmt: skip
        super().__init__(size_average, reduce, reduction)
        if margin <= 0:
            raise ValueError(f"TripletMarginLoss: expected margin to be greater than 0, got {margin} instead")
        self.margin, self.p, self.eps, self.swap = margin, p, eps, swap

    def forward(self, anchor: Tensor, positive: Tensor, negative: Tensor) -> Tensor:
        return F.triplet_margin_loss(anchor, positive, negative, margin=self.margin, p=self.p, eps=self.eps,
                                     swap=self.swap, reduction=self.reduction)  # fmt: skip


class TripletMarginWithDistanceLoss(_Loss):
    """``F.triplet_margin_with_distance_loss`` as a module, with any ``distance_function``."""

    def __init__(self, *, distance_function: Any = None, margin: float = 1.0, swap: bool = False,
                 reduction: str = "mean") -> None:  # fmt: skip
        super().__init__(reduction=reduction)
        if margin <= 0:
            raise ValueError(
                f"TripletMarginWithDistanceLoss: expected margin to be greater than 0, got {margin} instead"
            )
        self.distance_function = distance_function if distance_function is not None else PairwiseDistance()
        self.margin, self.swap = margin, swap

    def forward(self, anchor: Tensor, positive: Tensor, negative: Tensor) -> Tensor:
        return F.triplet_margin_with_distance_loss(anchor, positive, negative, distance_function=self.distance_function,
                                                   margin=self.margin, swap=self.swap, reduction=self.reduction)  # fmt: skip


class PoissonNLLLoss(_Loss):
    """``F.poisson_nll_loss`` as a module: PyTorch's ``nn.PoissonNLLLoss(log_input=True,
    full=False, eps=1e-8, reduction="mean")``."""

    def __init__(self, log_input: bool = True, full: bool = False, size_average: Any = None, eps: float = 1e-8,
                 reduce: Any = None, reduction: str = "mean") -> None:  # fmt: skip
        super().__init__(size_average, reduce, reduction)
        self.log_input, self.full, self.eps = log_input, full, eps

    def forward(self, log_input: Tensor, target: Any) -> Tensor:
        return F.poisson_nll_loss(log_input, target, log_input=self.log_input, full=self.full, eps=self.eps,
                                  reduction=self.reduction)  # fmt: skip


class GaussianNLLLoss(_Loss):
    """``F.gaussian_nll_loss`` as a module: ``loss(input, target, var)``."""

    def __init__(self, *, full: bool = False, eps: float = 1e-6, reduction: str = "mean") -> None:
        super().__init__(reduction=reduction)
        self.full, self.eps = full, eps

    def forward(self, input: Tensor, target: Any, var: Any) -> Tensor:
        return F.gaussian_nll_loss(input, target, var, full=self.full, eps=self.eps, reduction=self.reduction)


class CTCLoss(_Loss):
    """``F.ctc_loss`` as a module: ``loss(log_probs, targets, input_lengths, target_lengths)``."""

    def __init__(self, blank: int = 0, reduction: str = "mean", zero_infinity: bool = False) -> None:
        super().__init__(reduction=reduction)
        self.blank, self.zero_infinity = blank, zero_infinity

    def forward(self, log_probs: Tensor, targets: Any, input_lengths: Any, target_lengths: Any) -> Tensor:
        return F.ctc_loss(log_probs, targets, input_lengths, target_lengths, self.blank, self.reduction,
                          self.zero_infinity)  # fmt: skip


class NLLLoss2d(NLLLoss):
    """PyTorch's deprecated ``nn.NLLLoss2d``: :class:`NLLLoss` (which takes ``(N, C, H, W)``
    log-probabilities itself), with PyTorch's warning."""

    def __init__(self, weight: Any = None, size_average: Any = None, ignore_index: int = -100, reduce: Any = None,
                 reduction: str = "mean") -> None:  # fmt: skip
        _user_warn("`NLLLoss2d` has been deprecated. Please use `NLLLoss` instead as a drop-in replacement and see "
                      "https://pytorch.org/docs/main/nn.html#torch.nn.NLLLoss for more details.", FutureWarning)  # fmt: skip
        super().__init__(weight, size_average, ignore_index, reduce, reduction)


class _ASMoutput(NamedTuple):
    """What :class:`AdaptiveLogSoftmaxWithLoss` returns, as PyTorch's named tuple: each row's
    log-probability of its target, and the mean negative of those."""

    output: Tensor
    loss: Tensor


class AdaptiveLogSoftmaxWithLoss(Module):
    """PyTorch's ``nn.AdaptiveLogSoftmaxWithLoss(in_features, n_classes, cutoffs, div_value=4.0,
    head_bias=False, device=None, dtype=None)``: the adaptive softmax of Grave et al. The
    ``head`` scores the first ``cutoffs[0]`` classes and one entry per cluster; cluster ``i``
    (classes ``cutoffs[i]`` to ``cutoffs[i + 1]``) is scored by ``tail[i]``, two bias-free
    linear maps through ``in_features // div_value ** (i + 1)`` features. The log-probability
    of a class in a cluster is the cluster's (from the head) plus the class's within it.

    >>> asm = AdaptiveLogSoftmaxWithLoss(8, 10, [4, 8])  # doctest: +SKIP
    >>> out, loss = asm(tga.randn(3, 8), tga.tensor([0, 5, 9]))  # doctest: +SKIP
    """

    def __init__(self, in_features: int, n_classes: int, cutoffs: Any, div_value: float = 4.0,
                 head_bias: bool = False, device: Any = None, dtype: Any = None) -> None:  # fmt: skip
        super().__init__()
        cutoffs = list(cutoffs)
        if len(cutoffs) == 0:
            raise ValueError("cutoffs should be a sequence of length larger than 0")
        if (cutoffs != sorted(cutoffs) or min(cutoffs) <= 0 or max(cutoffs) > n_classes - 1
                or len(set(cutoffs)) != len(cutoffs) or any(int(c) != c for c in cutoffs)):  # fmt: skip
            raise ValueError("cutoffs should be a sequence of unique, positive integers sorted in an increasing "
                             "order, where each value is between 1 and n_classes-1")  # fmt: skip
        self.in_features, self.n_classes = in_features, n_classes
        self.cutoffs = cutoffs + [n_classes]
        self.div_value, self.head_bias = div_value, head_bias
        self.shortlist_size = self.cutoffs[0]
        self.n_clusters = len(self.cutoffs) - 1
        self.head_size = self.shortlist_size + self.n_clusters
        self.head = Linear(in_features, self.head_size, bias=head_bias, device=device, dtype=dtype)
        self.tail = ModuleList()
        for i in range(self.n_clusters):
            hidden = int(in_features // (div_value ** (i + 1)))
            size = self.cutoffs[i + 1] - self.cutoffs[i]
            self.tail.append(Sequential(Linear(in_features, hidden, bias=False, device=device, dtype=dtype),
                                        Linear(hidden, size, bias=False, device=device, dtype=dtype)))  # fmt: skip

    def forward(self, input_: Tensor, target_: Tensor) -> _ASMoutput:
        """``input_`` ``(N, in_features)`` and class indices ``target_`` ``(N,)`` (or one
        example: ``(in_features,)`` and ``()``) -> ``(output, loss)``: each example's
        log-probability of its target ``(N,)`` and ``-output.mean()``."""
        if target_.ndim == 1:
            if input_.shape[0] != target_.shape[0]:
                raise RuntimeError("Input and target should have the same size in the batch dimension.")
            if input_.ndim != 2:
                raise RuntimeError(f"1D target tensor expects 2D input tensors, but found inputs with size "
                                   f"{tuple(input_.shape)}")  # fmt: skip
        elif target_.ndim == 0:
            if input_.ndim != 1:
                raise RuntimeError(f"0D target tensor expects 1D input tensors, but found inputs with size "
                                   f"{tuple(input_.shape)}")  # fmt: skip
        else:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        batched = target_.ndim > 0
        x = input_ if batched else input_.unsqueeze(0)
        target = (target_ if batched else target_.unsqueeze(0)).detach().numpy().astype(np.int64)  # (N,) on the host
        if target.size and (target.min() < 0 or target.max() >= self.n_classes):
            raise RuntimeError(f"Target values should be in [0, {self.n_classes - 1}], but values in range "
                               f"[{target.min()}, {target.max()}] were found. ")  # fmt: skip
        dev = x._dev
        # each row's entry of the head: its class in the shortlist, else its cluster's
        cluster = np.searchsorted(np.asarray(self.cutoffs), target, side="right")  # 0: the shortlist
        head_column = np.where(cluster == 0, target, self.shortlist_size + cluster - 1)
        head_logprob = F.log_softmax(self.head(x), dim=1)  # (N, head_size)
        output = head_logprob.gather(1, Tensor._wrap(dev.asarray(head_column[:, None]), dev)).squeeze(1)
        for i in range(1, self.n_clusters + 1):
            rows = np.flatnonzero(cluster == i)
            if rows.size == 0:
                continue
            rows_t = Tensor._wrap(dev.asarray(rows), dev)
            local = Tensor._wrap(dev.asarray((target[rows] - self.cutoffs[i - 1])[:, None]), dev)
            logprob = F.log_softmax(self.tail[i - 1](x.index_select(0, rows_t)), dim=1)  # (rows, cluster size)
            output = output.index_add(0, rows_t, logprob.gather(1, local).squeeze(1))
        loss = (-output).mean()
        return _ASMoutput(output if batched else output.squeeze(0), loss)

    def _full_log_prob(self, input: Tensor, head_output: Tensor) -> Tensor:
        head_logprob = F.log_softmax(head_output, dim=1)  # (N, head_size)
        parts = [head_logprob[:, : self.shortlist_size]]
        for i in range(self.n_clusters):
            cluster_logprob = F.log_softmax(self.tail[i](input), dim=1)
            parts.append(cluster_logprob + head_logprob[:, self.shortlist_size + i].unsqueeze(1))
        return cat(parts, 1)

    def log_prob(self, input: Tensor) -> Tensor:
        """The log-probability of every class: ``input`` ``(N, in_features)`` -> ``(N, n_classes)``."""
        return self._full_log_prob(input, self.head(input))

    def predict(self, input: Tensor) -> Tensor:
        """The most probable class of each row of ``input`` ``(N, in_features)``: ``(N,)`` int64
        (``log_prob(input).argmax(1)``; rows whose head picks a shortlist class need no tail)."""
        head_output = self.head(input)
        best = head_output.argmax(1)
        outside = best >= self.shortlist_size
        if not bool(outside.any()):
            return best
        return where(outside, self._full_log_prob(input, head_output).argmax(1), best)


@dataclasses.dataclass(slots=True, frozen=True)
class LinearCrossEntropyOptions:
    """PyTorch's ``nn.LinearCrossEntropyOptions``: how PyTorch's :func:`F.linear_cross_entropy`
    chunks its batch to save memory (``allow_retain_graph``, ``batch_chunk_size``,
    ``chunking_method``, ``acc_policy``, ``acc_dtype``), checked as PyTorch checks them. This
    library forms the logits whole, so the options change no value."""

    allow_retain_graph: bool = False
    batch_chunk_size: int | None = None
    chunking_method: str | None = "auto"
    acc_policy: str = "auto"
    acc_dtype: Any = None

    def __post_init__(self) -> None:
        if self.acc_policy not in ("accurate", "balanced", "compact", "auto"):
            raise ValueError(f"invalid acc_policy: {self.acc_policy!r}")
        if self.chunking_method is not None and self.chunking_method != "auto":
            name, sep, factor = self.chunking_method.partition(":")
            factor = factor if sep else "1"
            if not (name == "aspect_ratio" and factor.isdigit() and int(factor) > 0):
                raise ValueError(f"invalid chunking_method: {self.chunking_method!r}")
        size = self.batch_chunk_size
        if not (size is None or (isinstance(size, int) and not isinstance(size, bool) and size > 0)):
            raise ValueError(f"batch_chunk_size must be positive int or None, got {size!r}")
        if self.acc_dtype is not None and np.dtype(self.acc_dtype).name not in ("float16", "bfloat16", "float32",
                                                                                 "float64"):  # fmt: skip
            raise ValueError(f"acc_dtype must be one of {{None, float16, bfloat16, float32, float64}}, got "
                             f"{self.acc_dtype!r}. Pass acc_dtype=None to let the op pick automatically.")  # fmt: skip


class LinearCrossEntropyLoss(_WeightedLoss):
    """PyTorch's ``nn.LinearCrossEntropyLoss(in_features, num_classes, *, out_features=(),
    bias=False, device=None, dtype=None, reduction="mean", weight=None, ignore_index=None,
    label_smoothing=0.0, options=None)``: a :class:`Linear` to ``num_classes * prod(out_features)``
    logits (its weight stored flat, as PyTorch's) and the cross entropy with ``target``; see
    :func:`F.linear_cross_entropy`."""

    def __init__(self, in_features: int, num_classes: int, *, out_features: tuple[int, ...] = (), bias: bool = False,
                 device: Any = None, dtype: Any = None, reduction: str = "mean", weight: Tensor | None = None,
                 ignore_index: int | None = None, label_smoothing: float = 0.0,
                 options: LinearCrossEntropyOptions | None = None) -> None:  # fmt: skip
        if weight is not None and tuple(weight.shape) != (num_classes,):
            raise RuntimeError(f"expected weight shape to be {(num_classes,)}, got {tuple(weight.shape)}")
        if label_smoothing < 0 or label_smoothing > 1.0:
            raise RuntimeError(f"expected label_smoothing to be in range [0, 1], got {label_smoothing}")
        super().__init__(weight, None, None, reduction)
        self.num_classes, self.out_features = num_classes, out_features
        self.ignore_index, self.label_smoothing = ignore_index, label_smoothing
        self.linear = Linear(in_features, math.prod(out_features, start=num_classes), bias=bias, device=device,
                             dtype=dtype)  # fmt: skip
        self.options = options

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        shape = (self.num_classes, *self.out_features)
        bias = self.linear.bias.reshape(shape) if self.linear.bias is not None else None
        return F.linear_cross_entropy(input, self.linear.weight.reshape(*shape, self.linear.in_features), target,
                                      linear_bias=bias, weight=self.weight, reduction=self.reduction,
                                      ignore_index=self.ignore_index, label_smoothing=self.label_smoothing,
                                      options=self.options)  # fmt: skip

    def extra_repr(self) -> str:
        return (f"in_features={self.linear.in_features}, num_classes={self.num_classes}, "
                f"out_features={self.out_features}, bias={self.linear.bias is not None}, reduction={self.reduction}, "
                f"ignore_index={self.ignore_index}, label_smoothing={self.label_smoothing}, options={self.options}")  # fmt: skip
