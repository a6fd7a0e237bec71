"""Attention weights as heat maps: one panel per head, tokens on the axes.

>>> w = tga.functional.scaled_dot_product_attention(q, k, v, return_weights=True)[1]  # doctest: +SKIP
>>> plot_attention(w, x_labels=["the", "cat", "sat"], path="weights.png")  # doctest: +SKIP
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..tensors._tensor import Tensor


def _matplotlib() -> Any:
    """The Agg canvas and Figure, imported only when a plot is asked for."""
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg  # noqa: PLC0415
        from matplotlib.figure import Figure  # noqa: PLC0415
    except ImportError as e:
        raise ImportError(
            "plot_attention needs matplotlib, which is not installed: pip install matplotlib "
            "(or pip install 'tinygrad_attn[plot]')"
        ) from e
    return FigureCanvasAgg, Figure


def _heads(weights: Any) -> np.ndarray:
    """``(H, Tq, Tk)`` on the host from (Tq, Tk), (H, Tq, Tk) or (B, H, Tq, Tk) (first item)."""
    w = weights.detach().numpy() if isinstance(weights, Tensor) else np.asarray(weights)
    if w.ndim == 2:
        return w[None]
    if w.ndim == 3:
        return w
    if w.ndim == 4:
        return w[0]
    raise ValueError(
        f"plot_attention: weights must be (Tq, Tk), (H, Tq, Tk) or (B, H, Tq, Tk), got shape {tuple(w.shape)}"
    )


def _check_labels(labels: Sequence[str] | None, n: int, axis: str) -> list[str] | None:
    if labels is None:
        return None
    labels = [str(s) for s in labels]
    if len(labels) != n:
        raise ValueError(f"plot_attention: {len(labels)} {axis} labels for {n} {axis} positions")
    return labels


def plot_attention(
    weights: Any,
    x_labels: Sequence[str] | None = None,
    y_labels: Sequence[str] | None = None,
    path: str | Path | None = None,
) -> Any:
    """Heat maps of attention ``weights``: rows are queries (``y_labels``), columns keys (``x_labels``).

    ``weights`` is ``(Tq, Tk)``, ``(H, Tq, Tk)`` or ``(B, H, Tq, Tk)`` (the first batch
    item is drawn), a Tensor or an array. Returns the matplotlib ``Figure`` (drawn with
    the Agg canvas, so no window opens); saves it to ``path`` when given.
    """
    w = _heads(weights).astype(np.float64)
    n_heads, tq, tk = w.shape
    xl = _check_labels(x_labels, tk, "key")
    yl = _check_labels(y_labels, tq, "query")
    canvas_cls, figure_cls = _matplotlib()
    cols = min(n_heads, 4)
    rows = math.ceil(n_heads / cols)
    side = max(2.2, 0.32 * max(tq, tk) + 1.2)
    fig = figure_cls(figsize=(side * cols + 0.9, side * rows + 0.3), layout="constrained")
    canvas_cls(fig)
    axes = fig.subplots(rows, cols, squeeze=False)
    vmax = float(np.nanmax(w)) if np.isfinite(w).any() else 1.0
    image = None
    for h, ax in enumerate(axes.flat):
        if h >= n_heads:
            ax.set_axis_off()
            continue
        image = ax.imshow(w[h], cmap="viridis", vmin=0.0, vmax=max(vmax, 1e-12), aspect="equal")
        ax.set_title(f"head {h}" if n_heads > 1 else "attention", fontsize=10)
        ax.set_xticks(range(tk), xl if xl is not None else range(tk), rotation=90 if xl else 0, fontsize=8)
        ax.set_yticks(range(tq), yl if yl is not None else range(tq), fontsize=8)
        ax.set_xlabel("key", fontsize=8)
        if h % cols == 0:
            ax.set_ylabel("query", fontsize=8)
    fig.colorbar(image, ax=axes.ravel().tolist(), shrink=0.8, label="weight")
    if path is not None:
        fig.savefig(path, dpi=120)
    return fig
