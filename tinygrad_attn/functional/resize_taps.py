"""The taps of PyTorch's separable resize: ``interpolate(antialias=True)`` in every dtype, and
``bilinear``/``bicubic`` of ``uint8`` images.

Each spatial axis is resized alone, the last axis first, and an axis whose size does not change
is left as it is. An output position ``i`` reads the source entries ``lo[i] .. lo[i] + K`` with
weights (``weights[i]``, zero past the taps it has), from a filter centred on
``scale * (i + 0.5)``: the triangle for the linear modes, Keys' cubic for bicubic (``a = -0.5``
with antialias, PyTorch's ``-0.75`` without). With antialias and a shrinking axis the filter is
stretched by the scale, so each output averages every source entry under it. The taps of an
output are cut at the edges and its weights divided by their sum; without antialias the bicubic
taps instead repeat the edge entry, whose weights add up.

A ``uint8`` image computes in fixed point, as PyTorch's: the weights of an axis are scaled by
``2**p`` (``p`` the most bits that keep the largest weight, doubled, below ``2**15``) and rounded
away from zero to integers, each output is ``(sum(x * w) + 2**(p - 1)) >> p`` clamped to 0..255,
and the next axis reads that ``uint8`` result.

>>> lo, w = taps(4, 2, 2.0, align_corners=False, antialias=True, cubic=False)
>>> lo.tolist(), w.round(3).tolist()
([0, 1], [[0.429, 0.429, 0.143, 0.0, 0.0], [0.143, 0.429, 0.429, 0.0, 0.0]])
"""

from __future__ import annotations

import numpy as np


def source_scale(n_in: int, n_out: int, align_corners: bool, scale_factor: float | None) -> float:
    """Source entries per output entry: PyTorch's, from the given scale factor where there is one."""
    if align_corners:
        return (n_in - 1) / (n_out - 1) if n_out > 1 else 0.0
    if scale_factor is not None and scale_factor > 0:
        return 1.0 / scale_factor
    return n_in / n_out


def _filter(x: np.ndarray, cubic: bool, a: float) -> np.ndarray:
    x = np.abs(x)
    if not cubic:
        return np.where(x < 1.0, 1.0 - x, 0.0)
    near = ((a + 2) * x - (a + 3)) * x * x + 1
    far = ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
    return np.where(x < 1.0, near, np.where(x < 2.0, far, 0.0))


def taps(n_in: int, n_out: int, scale: float, *, align_corners: bool, antialias: bool,
         cubic: bool) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """``(lo, weights)`` of one axis (``scale``: :func:`source_scale`): each output's first source
    index, ``(n_out,)``, and its weights, ``(n_out, K)``, in float64."""
    width = 4 if cubic else 2
    stretched = antialias and scale >= 1.0
    if not antialias and cubic:
        return _edge_repeating_cubic(n_in, n_out, scale, align_corners)
    support = width * 0.5 * (scale if stretched else 1.0)
    k = int(np.ceil(support)) * 2 + 1 if antialias else width
    delta = 0.5 if align_corners and not antialias else 0.0  # (align_corners: the centre on scale * i)
    center = scale * (np.arange(n_out, dtype=np.float64) + 0.5 - delta)
    lo = np.maximum(np.trunc(center - support + 0.5 + delta).astype(np.int64), 0)
    count = np.minimum(np.trunc(center + support + 0.5 + delta).astype(np.int64), n_in) - lo
    j = np.arange(k)
    w = _filter((j + lo[:, None] - center[:, None] + 0.5 - delta) * (1.0 / scale if stretched else 1.0), cubic, -0.5)
    w = np.where(j < count[:, None], w, 0.0)
    total = np.zeros(n_out)
    for c in range(k):  # (summed in tap order, as the kernel)
        total = total + w[:, c]
    return lo, np.where(total[:, None] != 0.0, w / np.where(total != 0.0, total, 1.0)[:, None], w)


def _edge_repeating_cubic(n_in: int, n_out: int, scale: float, align_corners: bool) -> tuple[np.ndarray, np.ndarray]:
    """Bicubic without antialias: the four taps around each source point, those past an edge
    reading the edge entry (their weights added to its)."""
    i = np.arange(n_out, dtype=np.float64)
    src = i * scale if align_corners else scale * (i + 0.5) - 0.5
    base = np.floor(src)
    t = src - base
    w = np.stack([_filter(t + 1, True, -0.75), _filter(t, True, -0.75), _filter(1 - t, True, -0.75),
                  _filter(2 - t, True, -0.75)], axis=1)  # fmt: skip
    index = np.clip(base.astype(np.int64)[:, None] + np.arange(-1, 3), 0, n_in - 1)
    lo = index[:, 0]
    folded = np.zeros((n_out, 4))
    for c in range(4):
        folded[np.arange(n_out), index[:, c] - lo] += w[:, c]
    return lo, folded


def int16_weights(w: np.ndarray) -> tuple[np.ndarray, int]:
    """The fixed-point weights of one axis and their bits ``p``: ``w * 2**p`` rounded away from zero."""
    top = float(w.max())
    p = 0
    while p < 22 and int(0.5 + top * (1 << (p + 1))) < (1 << 15):
        p += 1
    scaled = w * (1 << p)
    return np.trunc(np.where(w < 0, scaled - 0.5, scaled + 0.5)).astype(np.int64), p
