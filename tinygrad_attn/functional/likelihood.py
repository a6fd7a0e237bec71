"""PyTorch's remaining negative log-likelihood losses: ``poisson_nll_loss``,
``gaussian_nll_loss`` and ``ctc_loss`` (connectionist temporal classification, the loss
of speech and handwriting recognisers), each a composite of primitives; the CTC forward
recursion runs over time as ``logsumexp`` of shifted copies, so its gradient is autograd's.
``tinygrad_attn.functional`` re-exports every public name.

>>> F.ctc_loss(log_probs, targets, input_lengths, target_lengths)  # doctest: +SKIP  (log_probs: (T, N, C))
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..engine.composite import composite
from ..engine.declare import accepts, check_dtype, public
from ..engine.forward_grads import refuse_tangents
from ..engine.switches import tracing
from ..runtime.meta_stand_ins import refuse_without_kernel, stand_in
from ..tensors._tensor import InvalidArgumentError, Tensor, _bool_subtraction, stack, where
from ..tensors.index.indexing import host_integers
from . import checks as _F


@public(function=False, functional=True)
@composite("poisson_nll_loss")
def poisson_nll_loss(input: Tensor, target: Tensor, log_input: bool = True, full: bool = False,  # noqa: A002
                     size_average: Any = None, eps: float = 1e-8, reduce: Any = None,
                     reduction: str = "mean") -> Tensor:  # fmt: skip
    """The negative log-likelihood of ``target`` counts under Poisson rates ``input``:
    ``exp(input) - target * input`` (``log_input``) or ``input - target * log(input + eps)``;
    ``full`` adds Stirling's approximation of ``log(target!)`` where ``target > 1``."""
    op = "poisson_nll_loss"
    reduction = _F._reduction(op, reduction, size_average, reduce)
    x = _F.tensor_arg(input, op)
    check_dtype(op, x, "numeric")  # (integer rates give a float loss, as PyTorch's formula does)
    if isinstance(target, Tensor) and (target.dtype.kind == "f" or x.dtype.kind == "f"):
        _F._computed_together(op, x, target)  # (its checks: the dtypes come from PyTorch's formula below)
    else:
        target = _F._as_operand(op, target, x)
    # (ATen's formula, op by op: each step's dtype is its operands' promotion, as PyTorch's; an int64 input's
    # exp is float32 whatever the target's float16)
    loss = x.exp() - target * x if log_input else x - target * (x + eps).log()
    if full:  # (Stirling's term everywhere, masked where target <= 1: its gradient there is 0 * inf, NaN at 0)
        stirling = target * target.log() - target + 0.5 * (2 * math.pi * target).log()
        loss = (loss + stirling.masked_fill(target <= 1, 0)).to(loss.dtype)  # (ATen's loss +=: the loss's dtype)
    return _F._reduce(loss, reduction)


@public(function=False, functional=True)
@composite("gaussian_nll_loss")
def gaussian_nll_loss(input: Tensor, target: Any, var: Any, full: bool = False, eps: float = 1e-6,  # noqa: A002
                      reduction: str = "mean") -> Tensor:  # fmt: skip
    """``0.5 * (log(var) + (input - target)^2 / var)`` (plus ``0.5 log(2 pi)`` with ``full``):
    the negative log-likelihood of ``target`` under Gaussians of mean ``input`` and variance
    ``var``; ``var`` the input's shape, one axis shorter, 1 on one axis, or a float. Values
    below ``eps`` are raised to ``eps`` outside the graph (the gradient passes as if they
    were not), as PyTorch's."""
    op = "gaussian_nll_loss"
    x = _F.tensor_arg(input, op)
    if isinstance(var, Tensor) and var.dtype.kind not in "fc":  # (PyTorch clamps var at eps in place: a float)
        raise RuntimeError(f"{op}: result type Float can't be cast to var's dtype {var.dtype}; give a floating var")
    if any(isinstance(t, Tensor) and t.dtype.kind == "b" for t in (x, target)):
        _bool_subtraction(x, target)  # (PyTorch's formula takes input - target: a bool operand refused)
    if isinstance(var, Tensor):  # (PyTorch's dtype: input, target and var promoted together)
        x, target, var = _F._computed_together(op, x, target, var)
    else:
        x, target = _F._computed_together(op, x, target)
    if isinstance(var, (int, float)):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        var = Tensor.full(x.shape, float(var), dtype=x.dtype, device=x.device)
    var = _F._as_operand(op, var, x, "var")
    if not tracing() and bool((var < 0).any()):  # (a value check: a trace leaves it out, as embedding's)
        raise ValueError("var has negative entry/entries")
    if var.shape != x.shape:
        if x.shape[:-1] == var.shape:
            var = var.unsqueeze(-1)
        elif not (var.ndim == x.ndim and sum(v for n, v in zip(x.shape, var.shape) if n != v) == 1):
            raise ValueError(f"{op}: var is of incorrect size: {tuple(var.shape)} for input {tuple(x.shape)}")
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    var = var + (var.detach().clamp(min=eps) - var.detach())  # (the clamp outside the graph)
    loss = 0.5 * (var.log() + (x - target) ** 2 / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _F._reduce(loss, reduction)


#: Log-probability of what cannot happen: finite, so that no ``inf - inf`` reaches a gradient
_IMPOSSIBLE = -1e30


def _ctc_lengths(lengths: Any, op: str, what: str) -> np.ndarray:
    """Lengths as a host int64 vector: a tensor of an integer dtype only (PyTorch's kernel refuses a
    float or bool one, whole numbers or not), or a list of ints."""
    if isinstance(lengths, Tensor) and lengths.dtype.kind not in "iu":
        raise RuntimeError(f"{op}: {what} must be integral, got a tensor of {lengths.dtype}")
    return host_integers(lengths, op, what).reshape(-1)


def _ctc_targets(op: str, targets: Any, target_lengths: np.ndarray, n: int) -> np.ndarray:
    """``(N, S)`` host targets, from padded ``(N, S)`` or concatenated 1-D ones (as PyTorch's, an
    unbatched input's 1-D targets too: their length is the target length); a target tensor of any
    dtype read as int64 labels, as PyTorch's kernel casts it."""
    if isinstance(targets, Tensor) and targets.dtype.kind not in "iu":
        targets = targets.detach().astype(np.int64)
    t = host_integers(targets, op, "targets")
    s_max = int(target_lengths.max()) if n else 0
    if t.ndim == 1:
        if t.shape[0] != int(target_lengths.sum()):
            raise InvalidArgumentError(
                f"{op}: concatenated targets of length {t.shape[0]} do not sum the target lengths "
                f"{target_lengths.tolist()}"
            )
        out = np.zeros((n, max(s_max, 1)), np.int64)
        starts = np.concatenate([[0], np.cumsum(target_lengths)[:-1]])
        for i, (a, m) in enumerate(zip(starts, target_lengths)):
            out[i, :m] = t[a : a + m]
        return out
    if t.ndim != 2 or t.shape[0] != n:  # (PyTorch's kernel: padded targets are (N, S), one row per batch element)
        raise RuntimeError(f"{op}: padded targets must be of shape ({n}, S), got {tuple(t.shape)}")
    if t.shape[1] < s_max:
        raise InvalidArgumentError(f"{op}: targets of shape {tuple(t.shape)} are shorter than target length {s_max}")
    return t


def _ctc_meta_kernel(
    log_probs: Any, targets: Any, input_lengths: Any, target_lengths: Any, *args: Any, **kw: Any
) -> None:
    """PyTorch's meta device has a ``ctc_loss`` kernel for lengths given as lists only."""
    if isinstance(input_lengths, Tensor) or isinstance(target_lengths, Tensor):
        refuse_without_kernel("aten::_ctc_loss.Tensor", log_probs, targets, input_lengths, target_lengths)


@public(function=False, functional=True)
@accepts("float3264")
@composite("ctc_loss")
@stand_in(check=_ctc_meta_kernel)
def ctc_loss(log_probs: Tensor, targets: Any, input_lengths: Any, target_lengths: Any, blank: int = 0,
             reduction: str = "mean", zero_infinity: bool = False) -> Tensor:  # fmt: skip
    """The connectionist temporal classification loss: ``-log`` of the total probability of
    every alignment of ``targets`` to ``log_probs (T, N, C)`` (log-softmax outputs; ``(T, C)``
    unbatched) that collapses repeats and drops ``blank``. ``targets`` padded ``(N, S)`` or
    concatenated; ``"mean"`` divides each loss by its target length, then averages; an
    impossible alignment costs ``inf`` (0 with ``zero_infinity``). PyTorch's ``F.ctc_loss``."""
    refuse_tangents("_ctc_loss", log_probs)
    op = "ctc_loss"
    reduction = _F._reduction(op, reduction)
    lp = _F.tensor_arg(log_probs, op)
    _F._float(lp, op)
    unbatched = lp.ndim == 2
    if lp.ndim not in (2, 3):
        raise InvalidArgumentError(f"{op}: log_probs must be (T, N, C) or (T, C), got shape {tuple(lp.shape)}")
    if unbatched:
        lp = lp.unsqueeze(1)
    t_max, n, c = lp.shape
    in_len = _ctc_lengths(input_lengths, op, "input_lengths")
    tg_len = _ctc_lengths(target_lengths, op, "target_lengths")
    if in_len.shape != (n,) or tg_len.shape != (n,):
        raise RuntimeError(
            f"{op}: input_lengths {tuple(in_len.shape)} and target_lengths {tuple(tg_len.shape)} must have one entry per batch "
            f"element ({n})"
        )
    if (in_len > t_max).any() or (in_len < 0).any() or (tg_len < 0).any():
        raise RuntimeError(f"{op}: expected input_lengths in [0, {t_max}], got {in_len.tolist()}")
    if not 0 <= blank < c:
        raise RuntimeError(f"{op}: blank must be in label range [0, {c}), got {blank}")
    tg = _ctc_targets(op, targets, tg_len, n)  # (N, S)
    s_max = tg.shape[1]
    width = 2 * s_max + 1
    ext = np.full((n, width), blank, np.int64)  # blank, l1, blank, l2, ..., blank
    ext[:, 1::2] = tg
    for i, m in enumerate(tg_len):
        ext[i, 2 * m + 1 :] = blank
    # s may come from s - 2: a label (odd s) unlike the one before it, even one that is the blank, as PyTorch's
    skip = np.zeros((n, width), bool)
    skip[:, 3::2] = ext[:, 3::2] != ext[:, 1:-2:2]
    dev = lp._dev

    def const(a: np.ndarray) -> Tensor:
        return Tensor._wrap(dev.asarray(a), dev)

    idx = const(ext).reshape(1, n, width).expand(t_max, n, width)
    lpe = lp.gather(2, idx)  # (T, N, 2S+1): each time's log-probability of each extended label
    # PyTorch's kernel starts the blank's gradient at the last frame from the final blank, then overwrites it
    # with the last label's share when that label is the blank: the final blank's share there is not counted.
    dropped = np.zeros((t_max, n, width), bool)
    for i, (m, length) in enumerate(zip(tg_len, in_len)):
        if m > 0 and length > 0 and tg[i, m - 1] == blank:
            dropped[length - 1, i, 2 * m] = True
    if dropped.any():
        lpe = where(const(dropped), lpe.detach(), lpe)
    start = np.full((n, width), _IMPOSSIBLE)
    start[:, 0] = 0.0
    if width > 1:
        start[tg_len > 0, 1] = 0.0
    alpha = const(start.astype(lp.dtype)) + lpe[0]
    skip_t, steps = const(skip), const(in_len.reshape(n, 1))

    def shifted(a: Tensor, k: int) -> Tensor:  # a[:, s - k], impossible for s < k
        if k >= width:
            return Tensor.full(a.shape, _IMPOSSIBLE, dtype=a.dtype, device=a.device)
        return _F._pad_constant(a, 1, k, -k, _IMPOSSIBLE)

    for t in range(1, t_max):
        one = shifted(alpha, 1)
        two = where(skip_t, shifted(alpha, 2), _IMPOSSIBLE)
        step = stack([alpha, one, two]).logsumexp(0) + lpe[t]
        alpha = where(steps > t, step, alpha)  # (past its length a sequence keeps its alpha)
    last = const(2 * tg_len.reshape(n, 1))
    ends = [alpha.gather(1, last)]
    before = np.where(tg_len > 0, 2 * tg_len - 1, 0).reshape(n, 1)
    ends.append(where(const(tg_len.reshape(n, 1) > 0), alpha.gather(1, const(before)), _IMPOSSIBLE))
    ll = stack(ends).logsumexp(0).reshape(n)
    # (no frames: certain for an empty target, impossible for any other)
    ll = where(const(in_len == 0), const(np.where(tg_len == 0, 0.0, _IMPOSSIBLE).astype(lp.dtype)), ll)
    impossible = ll < _IMPOSSIBLE / 10
    # PyTorch's gradient with respect to log_probs is the true one plus exp(log_probs) at each
    # frame within the input length: it assumes log-softmax outputs, through whose backward the
    # added term vanishes (it sums to 1 over classes, as does the true gradient's negative). A
    # term of value 0 with that gradient gives its numbers for log_probs, and the same
    # gradient as the true one for the logits before a log_softmax.
    frames = const((np.arange(t_max).reshape(t_max, 1) < in_len.reshape(1, n)).reshape(t_max, n, 1))
    mass = where(frames, lp.exp(), 0.0).sum((0, 2))  # (N,)
    if zero_infinity:
        loss = where(impossible, 0.0, -ll + (mass - mass.detach()))
    else:
        # An impossible alignment costs inf, and PyTorch's gradient there is NaN at each frame within
        # the input length (its exp(log_probs) - exp(-inf + inf - log_probs)): a term of value 0 whose
        # gradient is NaN at those frames, sqrt(d * d) at d = 0 (0.5 / sqrt(0) times 2 d), gives it.
        lost = where(frames & impossible.reshape(1, n, 1), lp, 0.0)
        d = lost - lost.detach()
        loss = where(impossible, math.inf + (d * d).sqrt().sum((0, 2)), -ll + (mass - mass.detach()))
    if reduction == "mean":
        loss = (loss / const(np.maximum(tg_len, 1).astype(lp.dtype))).mean()
    elif reduction == "sum":
        loss = loss.sum()
    elif unbatched:
        loss = loss.reshape(())
    return loss
