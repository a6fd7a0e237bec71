"""Window functions for spectral analysis: PyTorch's ``torch.hann_window``, ``hamming_window``,
``blackman_window``, ``bartlett_window`` and ``kaiser_window`` (``periodic=True`` by default:
the window of one more point, its last dropped), and ``torch.signal.windows`` (``hann``,
``hamming``, ``blackman``, ``bartlett``, ``kaiser``, ``cosine``, ``exponential``, ``gaussian``,
``general_cosine``, ``general_hamming``, ``nuttall``; ``sym=True`` by default, the symmetric
window). Each is a formula of the point index ``n`` computed in float64 on the host, then
made a tensor of ``dtype`` (the default float dtype) on ``device``.

>>> import tinygrad_attn as tga
>>> tga.hann_window(4).tolist()
[0.0, 0.5, 1.0, 0.5]
>>> tga.signal.windows.hann(3).tolist()
[0.0, 1.0, 0.0]
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from ...engine.declare import public
from .._tensor import Tensor
from ..dtypes import get_default_dtype

__all__ = ["bartlett", "blackman", "cosine", "exponential", "gaussian", "general_cosine", "general_hamming",
           "hamming", "hann", "kaiser", "nuttall"]  # (torch.signal.windows)  # fmt: skip


def _length(op: str, m: Any) -> int:
    try:
        n = operator.index(m) if not isinstance(m, bool) else None
    except TypeError:
        n = None
    if n is None:
        raise TypeError(f"{op}: window_length must be an int, got {type(m).__name__}")
    if n < 0:
        raise RuntimeError(f"{op} requires non-negative window_length, got window_length={n}")
    return n


def _made(op: str, values: np.ndarray, dtype: Any, device: Any, requires_grad: bool) -> Tensor:
    dt = np.dtype(dtype) if dtype is not None else get_default_dtype()
    if dt.kind != "f":
        raise RuntimeError(f"{op} expects floating point dtypes, got: {dt}")
    return Tensor(values.astype(dt), device=device, requires_grad=requires_grad)


def _window(op: str, m: Any, symmetric: bool, formula: Callable[[np.ndarray, int], np.ndarray], dtype: Any,
            device: Any, requires_grad: bool) -> Tensor:  # fmt: skip
    """``formula(n, points)`` at ``n = 0 .. points-1``: ``points`` is the length, or one more
    (the periodic window, its last point dropped); lengths 0 and 1 are empty and ``[1]``."""
    n = _length(op, m)
    if n <= 1:
        return _made(op, np.ones(n), dtype, device, requires_grad)
    points = n if symmetric else n + 1
    return _made(op, formula(np.arange(points, dtype=np.float64), points)[:n], dtype, device, requires_grad)


def _cosine_sum(coefficients: Iterable[float]) -> Callable[[np.ndarray, int], np.ndarray]:
    """``sum_k (-1)^k a_k cos(2 pi k n / (points - 1))``: Hann, Hamming, Blackman, Nuttall."""
    a = [float(c) for c in coefficients]
    return lambda n, points: sum((-1) ** k * c * np.cos(2 * math.pi * k * n / (points - 1)) for k, c in enumerate(a))


def _bartlett(n: np.ndarray, points: int) -> np.ndarray:
    return 1.0 - np.abs(2.0 * n / (points - 1) - 1.0)


def _kaiser(beta: float) -> Callable[[np.ndarray, int], np.ndarray]:
    def formula(n: np.ndarray, points: int) -> np.ndarray:
        half = (points - 1) / 2.0
        return np.i0(beta * np.sqrt(np.clip(1.0 - ((n - half) / half) ** 2, 0.0, None))) / np.i0(beta)

    return formula


# -- torch.X_window(window_length, periodic=True, ...) ------------------------------------------
@public
def hann_window(window_length: int, periodic: bool = True, *, dtype: Any = None, layout: Any = None,
                device: Any = None, requires_grad: bool = False, pin_memory: bool = False) -> Tensor:  # fmt: skip
    """``0.5 - 0.5 cos(2 pi n / (N - 1))`` (PyTorch's ``torch.hann_window``)."""
    return _window("hann_window", window_length, not periodic, _cosine_sum((0.5, 0.5)), dtype, device, requires_grad)


@public
def hamming_window(window_length: int, periodic: bool = True, alpha: float = 0.54, beta: float = 0.46, *,
                   dtype: Any = None, layout: Any = None, device: Any = None, requires_grad: bool = False,
                   pin_memory: bool = False) -> Tensor:  # fmt: skip
    """``alpha - beta cos(2 pi n / (N - 1))`` (PyTorch's ``torch.hamming_window``)."""
    formula = _cosine_sum((alpha, beta))
    return _window("hamming_window", window_length, not periodic, formula, dtype, device, requires_grad)


@public
def blackman_window(window_length: int, periodic: bool = True, *, dtype: Any = None, layout: Any = None,
                    device: Any = None, requires_grad: bool = False, pin_memory: bool = False) -> Tensor:  # fmt: skip
    """``0.42 - 0.5 cos(2 pi n / (N - 1)) + 0.08 cos(4 pi n / (N - 1))``."""
    formula = _cosine_sum((0.42, 0.5, 0.08))
    return _window("blackman_window", window_length, not periodic, formula, dtype, device, requires_grad)


@public
def bartlett_window(window_length: int, periodic: bool = True, *, dtype: Any = None, layout: Any = None,
                    device: Any = None, requires_grad: bool = False, pin_memory: bool = False) -> Tensor:  # fmt: skip
    """The triangle ``1 - |2 n / (N - 1) - 1|``."""
    return _window("bartlett_window", window_length, not periodic, _bartlett, dtype, device, requires_grad)


@public
def kaiser_window(window_length: int, periodic: bool = True, beta: float = 12.0, *, dtype: Any = None,
                  layout: Any = None, device: Any = None, requires_grad: bool = False,
                  pin_memory: bool = False) -> Tensor:  # fmt: skip
    """``I0(beta sqrt(1 - ((n - (N-1)/2) / ((N-1)/2))^2)) / I0(beta)``."""
    return _window("kaiser_window", window_length, not periodic, _kaiser(beta), dtype, device, requires_grad)


# -- torch.signal.windows.X(M, *, sym=True, ...) ----------------------------------------------
def _signal(op: str, m: Any, sym: bool, formula: Callable[[np.ndarray, int], np.ndarray], dtype: Any, device: Any,
            requires_grad: bool) -> Tensor:  # fmt: skip
    if isinstance(m, int) and not isinstance(m, bool) and m < 0:
        raise ValueError(f"{op} requires non-negative window length, got M={m}")
    return _window(op, m, sym, formula, dtype, device, requires_grad)


def hann(M: int, *, sym: bool = True, dtype: Any = None, layout: Any = None, device: Any = None,  # noqa: N803
         requires_grad: bool = False) -> Tensor:  # fmt: skip
    """``torch.signal.windows.hann``: :func:`hann_window` with ``periodic = not sym``."""
    return _signal("hann", M, sym, _cosine_sum((0.5, 0.5)), dtype, device, requires_grad)


def hamming(M: int, *, sym: bool = True, dtype: Any = None, layout: Any = None, device: Any = None,  # noqa: N803
            requires_grad: bool = False) -> Tensor:  # fmt: skip
    return _signal("hamming", M, sym, _cosine_sum((0.54, 0.46)), dtype, device, requires_grad)


def general_hamming(M: int, *, alpha: float = 0.54, sym: bool = True, dtype: Any = None, layout: Any = None,  # noqa: N803
                    device: Any = None, requires_grad: bool = False) -> Tensor:  # fmt: skip
    """``alpha - (1 - alpha) cos(2 pi n / (M - 1))``."""
    return _signal("general_hamming", M, sym, _cosine_sum((alpha, 1.0 - alpha)), dtype, device, requires_grad)


def general_cosine(M: int, *, a: Iterable[float], sym: bool = True, dtype: Any = None, layout: Any = None,  # noqa: N803
                   device: Any = None, requires_grad: bool = False) -> Tensor:  # fmt: skip
    """``sum_k (-1)^k a[k] cos(2 pi k n / (M - 1))``."""
    if a is None or not isinstance(a, Iterable):
        raise TypeError(f"general_cosine: coefficients 'a' must be an iterable of floats, got {type(a).__name__}")
    return _signal("general_cosine", M, sym, _cosine_sum(a), dtype, device, requires_grad)


def blackman(M: int, *, sym: bool = True, dtype: Any = None, layout: Any = None, device: Any = None,  # noqa: N803
             requires_grad: bool = False) -> Tensor:  # fmt: skip
    return _signal("blackman", M, sym, _cosine_sum((0.42, 0.5, 0.08)), dtype, device, requires_grad)


def nuttall(M: int, *, sym: bool = True, dtype: Any = None, layout: Any = None, device: Any = None,  # noqa: N803
            requires_grad: bool = False) -> Tensor:  # fmt: skip
    """The minimum four-term Blackman-Harris window of Nuttall."""
    a = (0.3635819, 0.4891775, 0.1365995, 0.0106411)
    return _signal("nuttall", M, sym, _cosine_sum(a), dtype, device, requires_grad)


def bartlett(M: int, *, sym: bool = True, dtype: Any = None, layout: Any = None, device: Any = None,  # noqa: N803
             requires_grad: bool = False) -> Tensor:  # fmt: skip
    return _signal("bartlett", M, sym, _bartlett, dtype, device, requires_grad)


def kaiser(M: int, *, beta: float = 12.0, sym: bool = True, dtype: Any = None, layout: Any = None,  # noqa: N803
           device: Any = None, requires_grad: bool = False) -> Tensor:  # fmt: skip
    if beta < 0:
        raise ValueError(f"beta must be non-negative, got: {beta} instead.")
    return _signal("kaiser", M, sym, _kaiser(beta), dtype, device, requires_grad)


def cosine(M: int, *, sym: bool = True, dtype: Any = None, layout: Any = None, device: Any = None,  # noqa: N803
           requires_grad: bool = False) -> Tensor:  # fmt: skip
    """``sin(pi (n + 0.5) / M)``, the simple cosine (sine) window."""
    return _signal("cosine", M, sym, lambda n, points: np.sin(math.pi * (n + 0.5) / points), dtype, device,
                   requires_grad)  # fmt: skip


def exponential(M: int, *, center: float | None = None, tau: float = 1.0, sym: bool = True, dtype: Any = None,  # noqa: N803
                layout: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:  # fmt: skip
    """``exp(-|n - center| / tau)``, ``center`` the middle ``(M - 1) / 2`` by default."""
    if tau <= 0:
        raise ValueError(f"Tau must be positive, got: {tau} instead.")
    if sym and center is not None:
        raise ValueError("Center must be None for symmetric windows")

    def formula(n: np.ndarray, points: int) -> np.ndarray:
        c = (points - 1) / 2.0 if center is None else center
        return np.exp(-np.abs(n - c) / tau)

    return _signal("exponential", M, sym, formula, dtype, device, requires_grad)


def gaussian(M: int, *, std: float = 1.0, sym: bool = True, dtype: Any = None, layout: Any = None,  # noqa: N803
             device: Any = None, requires_grad: bool = False) -> Tensor:  # fmt: skip
    """``exp(-((n - (M - 1) / 2) / std)^2 / 2)``."""
    if std <= 0:
        raise ValueError(f"Standard deviation must be positive, got: {std} instead.")
    return _signal("gaussian", M, sym, lambda n, points: np.exp(-(((n - (points - 1) / 2.0) / std) ** 2) / 2.0),
                   dtype, device, requires_grad)  # fmt: skip
