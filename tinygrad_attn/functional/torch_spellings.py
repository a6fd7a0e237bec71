"""``torch.X`` where PyTorch's free function of an ``nn.functional`` computation takes other
arguments than ``F.X``: the ATen spelling (``torch.dropout(input, p, train)``, a reduction as
the integer 0 ``none`` / 1 ``mean`` / 2 ``sum``, ``torch.batch_norm``'s weight before its
running statistics, ``torch.embedding(weight, indices)``). Each is a thin adapter that calls
the one implementation in ``nn.functional``; where the two spellings agree the ``F`` function
is declared ``torch.X`` itself (``function=True`` beside it).

>>> import tinygrad_attn as tga
>>> x = tga.ones(2, 3)
>>> tga.dropout(x, 0.5, False).equal(x)
True
"""

from __future__ import annotations

import warnings
from typing import Any

from ..engine.declare import public
from ..tensors._tensor import InvalidArgumentError, Tensor
from . import activations as _activations
from . import conv as _conv
from . import dropouts as _dropouts
from . import likelihood as _likelihood
from . import losses as _losses
from . import margin as _margin
from . import norm as _norm
from . import pooling as _pooling
from .checks import _float, tensor_arg

_REDUCTIONS = ("none", "mean", "sum")


def reduction_name(op: str, reduction: Any) -> str:
    """ATen's reduction integer (0, 1, 2) as ``nn.functional``'s name; a name passes through."""
    if isinstance(reduction, str) and reduction in _REDUCTIONS:
        return reduction
    if isinstance(reduction, int) and not isinstance(reduction, bool) and 0 <= reduction < len(_REDUCTIONS):
        return _REDUCTIONS[reduction]
    raise InvalidArgumentError(f"{op}: reduction must be 0 (none), 1 (mean) or 2 (sum), got {reduction!r}")


def _functional() -> Any:
    from .. import functional  # noqa: PLC0415 - (the package: it imports this module as one of its parts)

    return functional


# -- dropout: (input, p, train), every argument positional -------------------------------------
@public
def selu(input: Tensor) -> Tensor:  # noqa: A002 - PyTorch's names
    """``torch.selu(input)``: ``F.selu`` without its ``inplace`` flag (PyTorch's free function has none)."""
    return _activations.selu(input)


@public
def dropout(input: Tensor, p: float, train: bool) -> Tensor:  # noqa: A002 - PyTorch's names
    """``torch.dropout(input, p, train)``: ``F.dropout(input, p, training=train)``."""
    return _functional().dropout(input, p, train)


@public
def dropout_(input: Tensor, p: float, train: bool) -> Tensor:  # noqa: A002
    """``torch.dropout_``: :func:`dropout` written into ``input``."""
    return _functional().dropout(input, p, train, inplace=True)


@public
def feature_dropout(input: Tensor, p: float, train: bool) -> Tensor:  # noqa: A002
    """``torch.feature_dropout``: whole channels (axis 1) of ``input (N, C, *)`` zeroed with
    probability ``p``, the rest scaled by ``1 / (1 - p)`` (``F.dropout2d``'s rule for any rank)."""
    return _feature_dropout(input, p, train, inplace=False)


@public
def feature_dropout_(input: Tensor, p: float, train: bool) -> Tensor:  # noqa: A002
    """``torch.feature_dropout_``: :func:`feature_dropout` written into ``input``."""
    return _feature_dropout(input, p, train, inplace=True)


def _feature_dropout(input: Tensor, p: float, train: bool, inplace: bool) -> Tensor:  # noqa: A002
    op = "feature_dropout_" if inplace else "feature_dropout"
    if not isinstance(input, Tensor):
        raise TypeError(f"{op}: input must be a Tensor, got {type(input).__name__}")
    if not 0 <= p <= 1:
        raise InvalidArgumentError(f"dropout probability has to be between 0 and 1, but got {p}")
    if p == 0 or not train or input.numel() == 0:  # (as PyTorch's: the input itself, unchecked)
        return input
    if input.ndim < 2:
        raise InvalidArgumentError(f"{op}: feature dropout needs an input of at least 2 dimensions, "
                                   f"got {tuple(input.shape)}")  # fmt: skip
    # (the channels of (N, C, rest...) as (N, C, 1): dropout1d's one draw per channel, then the shape back)
    out = _dropouts.dropout1d(input.reshape(input.shape[0], input.shape[1], -1), p, train, False).reshape(input.shape)
    return input.copy_(out) if inplace else out


@public
def alpha_dropout(input: Tensor, p: float, train: bool) -> Tensor:  # noqa: A002
    """``torch.alpha_dropout(input, p, train)``: ``F.alpha_dropout(input, p, training=train)``."""
    return _dropouts.alpha_dropout(input, p, train)


@public
def alpha_dropout_(input: Tensor, p: float, train: bool) -> Tensor:  # noqa: A002
    return _dropouts.alpha_dropout(input, p, train, inplace=True)


@public
def feature_alpha_dropout(input: Tensor, p: float, train: bool) -> Tensor:  # noqa: A002
    """``torch.feature_alpha_dropout(input, p, train)``: ``F.feature_alpha_dropout``."""
    return _dropouts.feature_alpha_dropout(input, p, train)


@public
def feature_alpha_dropout_(input: Tensor, p: float, train: bool) -> Tensor:  # noqa: A002
    return _dropouts.feature_alpha_dropout(input, p, train, inplace=True)


@public
def native_dropout(input: Tensor, p: float, train: bool | None) -> tuple[Tensor, Tensor]:  # noqa: A002
    """``torch.native_dropout``: the dropped-out tensor and the bool mask of the kept elements
    (all kept when not ``train``)."""
    if not train or p == 0:
        return input.clone(), input.new_ones(input.shape).astype(bool)
    out = _functional().dropout(input, p, True)
    return out, (out != 0) if p < 1 else out.new_zeros(out.shape).astype(bool)


# -- normalisation: weight and bias before the running statistics -----------------------------
@public
def batch_norm(input: Tensor, weight: Tensor | None, bias: Tensor | None, running_mean: Tensor | None,  # noqa: A002
               running_var: Tensor | None, training: bool, momentum: float, eps: float,
               cudnn_enabled: bool) -> Tensor:  # fmt: skip
    """``torch.batch_norm``: ``F.batch_norm`` with ATen's order of arguments (``cudnn_enabled`` unused)."""
    return _conv.batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)


@public
def instance_norm(input: Tensor, weight: Tensor | None, bias: Tensor | None, running_mean: Tensor | None,  # noqa: A002
                  running_var: Tensor | None, use_input_stats: bool, momentum: float, eps: float,
                  cudnn_enabled: bool) -> Tensor:  # fmt: skip
    """``torch.instance_norm``: ``F.instance_norm`` with ATen's order of arguments."""
    return _norm.instance_norm(input, running_mean, running_var, weight, bias, use_input_stats, momentum, eps)


# -- embedding: the weight first, padding_idx -1 for none ------------------------------------
@public
def embedding(weight: Tensor, indices: Tensor, padding_idx: int = -1, scale_grad_by_freq: bool = False,
              sparse: bool = False) -> Tensor:  # fmt: skip
    """``torch.embedding(weight, indices)``: ``F.embedding(indices, weight)``; ATen's
    ``padding_idx`` is an index of ``weight`` or -1 (or any negative number) for none."""
    pad = padding_idx if padding_idx is not None and padding_idx >= 0 else None
    return _functional().embedding(indices, weight, pad, None, 2.0, scale_grad_by_freq, sparse)


# -- losses: the reduction as ATen's integer, no size_average/reduce. Left out it is 0 (none),
# as PyTorch's torch.X binding has it, although ATen's schemas say 1 (mean) ---------------------
@public
def binary_cross_entropy_with_logits(input: Tensor, target: Tensor, weight: Tensor | None = None,  # noqa: A002
                                     pos_weight: Tensor | None = None, reduction: int = 0) -> Tensor:  # fmt: skip
    """``torch.binary_cross_entropy_with_logits``: ``F``'s, ATen's dtype check first (``F`` compares the
    sizes in Python before it)."""
    op = "binary_cross_entropy_with_logits"
    _float(tensor_arg(input, op), op)
    return _functional().binary_cross_entropy_with_logits(
        input, target, weight, reduction=reduction_name(op, reduction), pos_weight=pos_weight
    )


@public
def kl_div(input: Tensor, target: Tensor, reduction: int = 0, *, log_target: bool = False) -> Tensor:  # noqa: A002
    """``torch.kl_div``: ``F.kl_div``; its ``mean`` (1) is over every element, not the batch (and,
    as PyTorch's, without ``F.kl_div``'s warning about that)."""
    red = reduction_name("kl_div", reduction)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return _losses.kl_div(input, target, reduction=red, log_target=log_target)


@public
def cosine_embedding_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0,
                          reduction: int = 0) -> Tensor:  # fmt: skip
    red = reduction_name("cosine_embedding_loss", reduction)
    return _losses.cosine_embedding_loss(input1, input2, target, margin, reduction=red)


@public
def hinge_embedding_loss(input: Tensor, target: Tensor, margin: float = 1.0, reduction: int = 0) -> Tensor:  # noqa: A002
    red = reduction_name("hinge_embedding_loss", reduction)
    return _margin.hinge_embedding_loss(input, target, margin, reduction=red)


@public
def margin_ranking_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0,
                        reduction: int = 0) -> Tensor:  # fmt: skip
    red = reduction_name("margin_ranking_loss", reduction)
    return _margin.margin_ranking_loss(input1, input2, target, margin, reduction=red)


@public
def triplet_margin_loss(anchor: Tensor, positive: Tensor, negative: Tensor, margin: float = 1.0, p: float = 2.0,
                        eps: float = 1e-6, swap: bool = False, reduction: int = 0) -> Tensor:  # fmt: skip
    red = reduction_name("triplet_margin_loss", reduction)
    return _margin.triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap, reduction=red)


@public
def poisson_nll_loss(input: Tensor, target: Tensor, log_input: bool, full: bool, eps: float,  # noqa: A002
                     reduction: int) -> Tensor:  # fmt: skip
    red = reduction_name("poisson_nll_loss", reduction)
    return _likelihood.poisson_nll_loss(input, target, log_input, full, eps=eps, reduction=red)


@public
def ctc_loss(log_probs: Tensor, targets: Any, input_lengths: Any, target_lengths: Any, blank: int = 0,
             reduction: int = 0, zero_infinity: bool = False) -> Tensor:  # fmt: skip
    red = reduction_name("ctc_loss", reduction)
    return _likelihood.ctc_loss(log_probs, targets, input_lengths, target_lengths, blank, red, zero_infinity)


# -- pooling and convolution ----------------------------------------------------------------
@public
def adaptive_max_pool1d(input: Tensor, output_size: Any) -> tuple[Tensor, Tensor]:  # noqa: A002
    """``torch.adaptive_max_pool1d``: the values and the int64 indices, always both."""
    return _pooling.adaptive_max_pool1d(input, output_size, True)


@public
def convolution(input: Tensor, weight: Tensor, bias: Tensor | None, stride: Any, padding: Any,  # noqa: A002
                dilation: Any, transposed: bool, output_padding: Any, groups: int) -> Tensor:  # fmt: skip
    """``torch.convolution``: the convolution (or, ``transposed``, its transpose) of as many
    spatial dims as ``weight`` has beyond its first two, every argument given."""
    nd = weight.ndim - 2
    if nd not in (1, 2, 3):
        raise InvalidArgumentError(
            f"convolution: weight must have 3, 4 or 5 dimensions (1 to 3 spatial ones), got shape {tuple(weight.shape)}"
        )
    f = _functional()
    if transposed:
        fn = (f.conv_transpose1d, f.conv_transpose2d, f.conv_transpose3d)[nd - 1]
        return fn(input, weight, bias, stride, padding, output_padding, groups, dilation)
    fn = (f.conv1d, f.conv2d, f.conv3d)[nd - 1]
    return fn(input, weight, bias, stride, padding, dilation, groups)


# -- sampling: the modes as ATen's integers ------------------------------------------------------
_INTERPOLATIONS = ("bilinear", "nearest", "bicubic")
_PADDINGS = ("zeros", "border", "reflection")


def _mode(op: str, what: str, value: Any, names: tuple[str, ...]) -> str:
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < len(names):
        return names[value]
    raise InvalidArgumentError(f"{op}: {what} must be one of {dict(enumerate(names))}, got {value!r}")


def _grid_sampler(op: str, ndim: int | None, input: Tensor, grid: Tensor, interpolation_mode: int,  # noqa: A002
                  padding_mode: int, align_corners: bool) -> Tensor:  # fmt: skip
    if ndim is not None and getattr(input, "ndim", None) != ndim:
        raise InvalidArgumentError(f"{op}: expected a {ndim}-D input, got shape {tuple(getattr(input, 'shape', ()))}")
    mode = _mode(op, "interpolation_mode", interpolation_mode, _INTERPOLATIONS)
    padding = _mode(op, "padding_mode", padding_mode, _PADDINGS)
    return _functional().grid_sample(input, grid, mode, padding, align_corners)


@public
def grid_sampler(input: Tensor, grid: Tensor, interpolation_mode: int, padding_mode: int,  # noqa: A002
                 align_corners: bool) -> Tensor:  # fmt: skip
    """``torch.grid_sampler``: ``F.grid_sample`` with the modes as integers (interpolation 0
    bilinear, 1 nearest, 2 bicubic; padding 0 zeros, 1 border, 2 reflection)."""
    return _grid_sampler("grid_sampler", None, input, grid, interpolation_mode, padding_mode, align_corners)


@public
def grid_sampler_2d(input: Tensor, grid: Tensor, interpolation_mode: int, padding_mode: int,  # noqa: A002
                    align_corners: bool) -> Tensor:  # fmt: skip
    return _grid_sampler("grid_sampler_2d", 4, input, grid, interpolation_mode, padding_mode, align_corners)


@public
def grid_sampler_3d(input: Tensor, grid: Tensor, interpolation_mode: int, padding_mode: int,  # noqa: A002
                    align_corners: bool) -> Tensor:  # fmt: skip
    return _grid_sampler("grid_sampler_3d", 5, input, grid, interpolation_mode, padding_mode, align_corners)


@public
def affine_grid_generator(theta: Tensor, size: Any, align_corners: bool) -> Tensor:
    """``torch.affine_grid_generator``: ``F.affine_grid(theta, size, align_corners)``."""
    return _functional().affine_grid(theta, list(size), align_corners)
