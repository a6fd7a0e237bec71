"""How tensors print, as PyTorch prints them: ``tensor([1.0000, 2.5000])``, with its options
(``tga.set_printoptions``: precision, threshold, edgeitems, linewidth, profile, sci_mode).

One formatter is chosen per tensor from its finite nonzero values (of the summarised part
when the tensor has more than ``threshold`` elements): integers as they are, floats that are
all whole numbers as ``1.``, scientific notation when the values span more than three decades
(or pass 1e8, or, not whole, fall under 1e-4), otherwise ``precision`` digits; every element
is padded to the widest (``sci_mode`` set forces the notation where there is a finite nonzero value). The suffixes (``dtype=`` when it is not the default, ``size=`` of an
empty tensor, ``grad_fn=``/``requires_grad=True``, ``device=``) follow as PyTorch writes them.
Printing reads the values on the host (``host_`` helpers below take NumPy arrays).

>>> tga.set_printoptions(precision=2)  # doctest: +SKIP
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

__all__ = ["set_printoptions"]


class _Options:
    precision = 4
    threshold: float = 1000
    edgeitems = 3
    linewidth = 80
    sci_mode: bool | None = None


# PyTorch's profiles (precision, threshold, edgeitems, linewidth)
_PROFILES = {"default": (4, 1000, 3, 80), "short": (2, 1000, 2, 80), "full": (4, math.inf, 3, 80)}


def set_printoptions(precision: int | None = None, threshold: float | None = None, edgeitems: int | None = None,
                     linewidth: int | None = None, profile: str | None = None, sci_mode: bool | None = None) -> None:  # fmt: skip
    """PyTorch's ``set_printoptions``: digits after the point, how many elements print in full,
    how many at each edge of a summarised axis, the line width, a profile (``"default"``,
    ``"short"``, ``"full"``) and ``sci_mode`` (True: always scientific; False: never; None, as
    every call that does not name it: chosen per tensor)."""
    if profile in _PROFILES:  # (another name changes nothing, as in PyTorch)
        _Options.precision, _Options.threshold, _Options.edgeitems, _Options.linewidth = _PROFILES[profile]
    if precision is not None:
        _Options.precision = precision
    if threshold is not None:
        _Options.threshold = threshold
    if edgeitems is not None:
        _Options.edgeitems = edgeitems
    if linewidth is not None:
        _Options.linewidth = linewidth
    _Options.sci_mode = sci_mode


class _Formatter:
    """Writes each element of one tensor at a common width."""

    def __init__(self, values: np.ndarray) -> None:
        self.floating = values.dtype.kind == "f"
        self.int_mode, self.sci_mode, self.width = True, False, 1
        p = _Options.precision
        flat = values.reshape(-1)
        if not self.floating:
            for v in flat.tolist():
                self.width = max(self.width, len(str(v)))
        else:
            finite = flat[np.isfinite(flat) & (flat != 0)].astype(np.float64)
            if finite.size:
                mags = np.abs(finite)
                lo, hi = float(mags.min()), float(mags.max())
                self.int_mode = bool(np.all(finite == np.ceil(finite)))
                wide = hi / lo > 1000.0 or hi > 1.0e8 or lo < 1.0e-4
                self.sci_mode = wide if _Options.sci_mode is None else _Options.sci_mode
                if self.sci_mode:
                    texts, extra = [f"{v:.{p}e}" for v in finite.tolist()], 0
                elif self.int_mode:
                    texts, extra = [f"{v:.0f}" for v in finite.tolist()], 1  # the point after a whole number
                else:
                    texts, extra = [f"{v:.{p}f}" for v in finite.tolist()], 0
                self.width = max(len(s) for s in texts) + extra

    def format(self, v: Any) -> str:
        if self.floating:
            if self.sci_mode:
                s = f"{v:{self.width}.{_Options.precision}e}"
            elif self.int_mode:
                s = f"{v:.0f}" + ("" if math.isinf(v) or math.isnan(v) else ".")
            else:
                s = f"{v:.{_Options.precision}f}"
        else:
            s = str(v)
        return s.rjust(self.width)


class _ComplexFormatter:
    """A complex element as its real part's formatter and its imaginary part's, ``1.+2.j``."""

    def __init__(self, values: np.ndarray) -> None:
        self.real, self.imag = _Formatter(values.real), _Formatter(values.imag)
        self.width = self.real.width + self.imag.width + 1

    def format(self, v: complex) -> str:
        imag = (self.imag.format(v.imag) + "j").lstrip()
        return self.real.format(v.real) + (imag if imag[0] in "+-" else "+" + imag)


def host_summarised(a: np.ndarray) -> np.ndarray:
    """The elements that print when ``a`` is summarised: ``edgeitems`` at each end of every
    axis longer than twice that."""
    e = _Options.edgeitems
    for axis, n in enumerate(a.shape):
        if n > 2 * e:
            a = np.concatenate([a.take(range(e), axis), a.take(range(n - e, n), axis)], axis=axis)
    return a


def _host_body(a: np.ndarray, indent: int, summarise: bool, fmt: Any) -> str:
    if a.ndim == 0:
        return fmt.format(a.item())
    e, n = _Options.edgeitems, a.shape[0]
    cut = summarise and n > 2 * e
    if a.ndim == 1:
        per_line = max(1, (_Options.linewidth - indent) // (fmt.width + 2))
        if summarise and not e:
            items = ["..."]
        elif cut:
            items = [fmt.format(v) for v in a[:e].tolist()] + [" ..."] + [fmt.format(v) for v in a[n - e :].tolist()]
        else:
            items = [fmt.format(v) for v in a.tolist()]
        lines = [", ".join(items[i : i + per_line]) for i in range(0, len(items), per_line)]
        return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"
    rows = list(range(e)) + [None] + list(range(n - e, n)) if cut else range(n)
    parts = ["..." if i is None else _host_body(a[i], indent + 1, summarise, fmt) for i in rows]
    return "[" + ("," + "\n" * (a.ndim - 1) + " " * (indent + 1)).join(parts) + "]"


def host_tensor_repr(a: np.ndarray, suffixes: list[str], prefix: str = "tensor(") -> str:
    """``prefix`` + the values of ``a`` laid out as PyTorch lays them out + ``suffixes``; an
    empty ``a`` prints ``[]``."""
    indent = len(prefix)
    if a.size == 0:
        body = "[]"
    else:
        if a.dtype == np.float16 or a.dtype.name == "bfloat16":
            a = a.astype(np.float32)
        summarise = a.size > _Options.threshold
        shown = host_summarised(a) if summarise else a
        fmt = _ComplexFormatter(shown) if a.dtype.kind == "c" else _Formatter(shown)
        body = _host_body(a, indent, summarise, fmt)
    out = prefix + body
    last = len(out) - out.rfind("\n") + 1
    for s in suffixes:
        if last + len(s) + 2 > _Options.linewidth:
            out += ",\n" + " " * indent + s
            last = indent + len(s)
        else:
            out += ", " + s
            last += len(s) + 2
    return out + ")"
