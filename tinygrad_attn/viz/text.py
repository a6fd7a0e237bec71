"""Words and numbers for node labels: shapes, values, gradient norms, HTML-like markup.

Graphviz draws a label written as ``<...>`` as HTML-like markup: a bold title over
smaller grey detail lines reads better than one block of text.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import numpy as np

#: Tensors with at most this many elements print their numbers; larger ones a summary.
SMALL = 12


def shape_str(shape: Iterable[int]) -> str:
    """``(2, 8, 16)``; a 1-D shape keeps Python's ``(5,)``."""
    return str(tuple(int(s) for s in shape))


def num(x: float) -> str:
    """A number in at most 3 significant digits: ``0.125``, ``1.2e-05``."""
    return f"{x:.3g}"


def values_lines(host: np.ndarray) -> list[str]:
    """The numbers of a small array, or ``min / mean / max`` of a larger one.

    >>> values_lines(np.array([0.5, 2.0])), values_lines(np.arange(100.0))
    (['[0.5, 2]'], ['min 0 · mean 49.5 · max 99'])
    """
    if host.size == 0:
        return ["empty"]
    if host.dtype == np.bool_:
        return [f"{int(host.sum())} of {host.size} True"]
    if host.dtype.kind == "c":
        host = np.abs(host)
    a = host.astype(np.float64)
    finite = np.isfinite(a)
    bad = int(a.size - finite.sum())
    if host.size <= SMALL and not bad:
        fmt = {"float_kind": num} if host.dtype.kind == "f" else None
        text = np.array2string(host, separator=", ", max_line_width=44, formatter=fmt)
        lines = [line.strip() for line in text.splitlines() if line.strip()]
    else:
        v = a[finite]
        lines = [f"min {num(v.min())} · mean {num(v.mean())} · max {num(v.max())}"] if v.size else []
    if bad:
        lines.append(f"{bad} NaN/Inf of {a.size}")
    return lines


def norm_of(host: np.ndarray) -> float:
    """The Euclidean norm, in float64 so float16 gradients do not overflow."""
    return float(np.sqrt(np.sum(np.square(host.astype(np.float64)))))


def norm_line(norm: float | None) -> str:
    return "‖∇‖ —" if norm is None else f"‖∇‖ {num(norm)}"


def const_str(c: Any) -> str:
    """A Python constant input of an op (``x * 0.125``)."""
    if isinstance(c, float):
        return num(c)
    return str(c)


def _index_str(k: Any) -> str:
    if k is Ellipsis:
        return "..."
    if k is None:
        return "None"
    if isinstance(k, slice):
        parts = ["" if v is None else str(v) for v in (k.start, k.stop)]
        return ":".join(parts) + (f":{k.step}" if k.step not in (None, 1) else "")
    return str(k)


def _is_index_key(args: tuple) -> bool:
    kinds = (slice, int, type(None), type(Ellipsis))
    return all(isinstance(a, kinds) and not isinstance(a, bool) for a in args) and any(
        isinstance(a, slice) or a is Ellipsis for a in args
    )


def _arg_str(a: Any) -> str | None:
    if a is None or isinstance(a, bool):
        return None
    if isinstance(a, (int, float)):
        return const_str(a)
    if isinstance(a, str):
        return a
    if isinstance(a, slice):
        return f"[{_index_str(a)}]"
    if isinstance(a, tuple):
        if all(isinstance(v, int) and not isinstance(v, bool) for v in a):
            return str(a)
        if _is_index_key(a):
            keys = list(a)
            while len(keys) > 1 and keys[-1] == slice(None):  # x[0, :, :] is x[0]
                keys.pop()
            return "[" + ", ".join(_index_str(k) for k in keys) + "]"
        return None
    if isinstance(a, np.dtype) or type(a).__name__ == "dtype":
        return np.dtype(a).name
    if hasattr(a, "shape") and hasattr(a, "dtype"):
        return f"array {shape_str(a.shape)}"
    name = getattr(a, "name", None)
    return name if isinstance(name, str) else None


def args_str(args: Any, limit: int = 40) -> str | None:
    """The non-array parameters of an op read generically: axes, shapes, keys, scales.

    >>> args_str(((2,), True)), args_str((0, 2, 1, 3)), args_str((slice(None), slice(0, 4)))
    ('(2,)', '(0, 2, 1, 3)', '[:, 0:4]')
    """
    if args is None:
        return None
    text = _arg_str(args)
    if text is None and isinstance(args, tuple):
        text = ", ".join(s for s in map(_arg_str, args) if s)
    if not text:
        return None
    return text if len(text) <= limit else text[: limit - 1] + "…"


def heads_note(heads_axis: int | None, shapes: Iterable[tuple]) -> str | None:
    """``"4 heads"`` for an op whose operands have a head axis (its ``heads_axis``: -3 of
    attention's ``(B, H, T, d)``), read off the first operand of 4 or more dimensions."""
    if heads_axis is None:
        return None
    for s in shapes:
        if len(s) >= 4:
            return f"{s[heads_axis]} heads"
    return None


def numel(shape: Iterable[int]) -> int:
    return math.prod(int(s) for s in shape)


def plural(n: int, word: str) -> str:
    """``1 step``, ``2 steps``."""
    return f"{n} {word}" + ("" if n == 1 else "s")


def count_str(n: int) -> str:
    """``12.6k`` for 12_600."""
    for div, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if n >= div:
            return f"{n / div:.3g}{suffix}"
    return str(n)


def escape(s: str) -> str:
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")


def html_label(title: str, lines: Iterable[str] = ()) -> str:
    """A bold title over small grey detail lines, as a Graphviz HTML-like label."""
    parts = [f"<B>{escape(title)}</B>"]
    details = [f'<FONT POINT-SIZE="9" COLOR="#444444">{escape(line)}</FONT>' for line in lines if line]
    if details:  # a thin spacer line: an underscore in the title would touch the line below
        parts.append('<FONT POINT-SIZE="3"> </FONT>')
    return "<" + "<BR/>".join(parts + details) + ">"
