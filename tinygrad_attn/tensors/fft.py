"""``tga.fft``: PyTorch's discrete Fourier transforms (``torch.fft``), written on one op, the
complex transform over some axes (``ops.complex.FFTN``); the real-input and real-output ones
(``rfft``, ``irfft``, ``hfft``, ``ihfft`` and their n-dimensional forms) are that op with a cast,
a slice and a Hermitian extension, so their gradients are PyTorch's by composition.

>>> tga.fft.fft(tga.tensor([1.0, 0.0, 0.0, 0.0]))
tensor([1.+0.j, 1.+0.j, 1.+0.j, 1.+0.j])
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..engine.arguments import int_or_ints
from ..engine.declare import low_precision
from ..ops.complex import FFTN
from ._tensor import Tensor, cat
from .dtypes import get_default_dtype, scalar_type_name, torch_dtype
from .elementwise.complex_numbers import conj, real
from .factories.creation import arange

__all__ = [
    "fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "rfft", "irfft", "rfft2", "irfft2", "rfftn", "irfftn",
    "hfft", "ihfft", "hfft2", "ihfft2", "hfftn", "ihfftn", "fftfreq", "rfftfreq", "fftshift", "ifftshift",
]  # fmt: skip

_NORMS = ("backward", "forward", "ortho")
_DUAL = {"backward": "forward", "forward": "backward", "ortho": "ortho"}


def _norm(norm: str | None, op: str) -> str:
    norm = "backward" if norm is None else norm
    if norm not in _NORMS:
        raise RuntimeError(f'{op}: Invalid normalization mode: "{norm}" (give "backward", "forward" or "ortho")')
    return norm


def _refuse_low_precision(x: Tensor, op: str) -> None:
    """PyTorch's refusal of a float16 or bfloat16 transform on the CPU (pocketfft has neither)."""
    if low_precision(x):
        raise RuntimeError(f"{op}: Unsupported dtype {scalar_type_name(x.dtype)} (the CPU's transforms have no "
                           f"{x.dtype} kernel, as PyTorch's); use .float()")  # fmt: skip


def _complex(x: Any, op: str) -> Tensor:
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}(): argument 'input' (position 1) must be Tensor, not {type(x).__name__}")
    if x.dtype.kind == "c":
        return x
    if x.dtype.kind in "biu":
        x = x.astype(get_default_dtype())
    _refuse_low_precision(x, op)
    return x.astype(torch_dtype(x.dtype).to_complex())


def _real_input(x: Any, op: str) -> Tensor:
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}(): argument 'input' (position 1) must be Tensor, not {type(x).__name__}")
    if x.dtype.kind == "c":
        raise RuntimeError(f"{op} expects a real input tensor, but got {x.dtype}")
    if x.dtype.kind in "biu":
        x = x.astype(get_default_dtype())
    _refuse_low_precision(x, op)
    return x


def _axes_and_sizes(x: Tensor, s: Sequence[int] | None, dim: Any, op: str) -> tuple[tuple[int, ...], list[int]]:
    """The transformed axes (non-negative) and their lengths, PyTorch's rules: ``dim`` None is every
    axis (the last ``len(s)`` where ``s`` is given); ``s`` entries of -1 keep the input's length."""
    dim, s = int_or_ints(dim), int_or_ints(s)
    if isinstance(dim, int):
        dim = (dim,)
    if s is not None:
        s = [s] if isinstance(s, int) else list(s)
        if dim is None:
            dim = tuple(range(x.ndim - len(s), x.ndim))
        elif len(s) != len(dim):
            raise RuntimeError(f"{op}: When given, dim and shape arguments must have the same length")
    if dim is None:
        dim = tuple(range(x.ndim))
    axes = []
    for d in dim:
        if not -x.ndim <= d < max(x.ndim, 1) or x.ndim == 0:
            raise IndexError(f"{op}: Dimension out of range (expected to be in range of [{-x.ndim}, {x.ndim - 1}], "
                             f"but got {d})")  # fmt: skip
        axes.append(d % x.ndim)
    if len(set(axes)) != len(axes):
        raise RuntimeError(f"{op}: FFT dims must be unique")
    sizes = [x.shape[a] if s is None or s[i] == -1 else int(s[i]) for i, a in enumerate(axes)]
    for n in sizes:
        if n < 1:
            raise RuntimeError(f"{op}: Invalid number of data points ({n}) specified")
    return tuple(axes), sizes


def _resized(x: Tensor, axes: Sequence[int], sizes: Sequence[int]) -> Tensor:
    """``x`` cut or padded with zeros to ``sizes`` along ``axes``."""
    for a, n in zip(axes, sizes):
        have = x.shape[a]
        if n < have:
            x = x.narrow(a, 0, n)
        elif n > have:
            pad = list(x.shape)
            pad[a] = n - have
            x = cat([x, x.new_zeros(tuple(pad))], a)
    return x


def _c2c(x: Tensor, s: Any, dim: Any, norm: str | None, inverse: bool, op: str) -> Tensor:
    x = _complex(x, op)
    norm = _norm(norm, op)
    axes, sizes = _axes_and_sizes(x, s, dim, op)
    return FFTN.apply(_resized(x, axes, sizes), args=(axes, inverse, norm))


def _r2c(x: Tensor, s: Any, dim: Any, norm: str | None, op: str, inverse: bool = False) -> Tensor:
    """The transform of a real tensor, its last axis cut to its non-negative frequencies."""
    x = _real_input(x, op)
    norm = _norm(norm, op)
    axes, sizes = _axes_and_sizes(x, s, dim, op)
    z = FFTN.apply(_resized(x, axes, sizes).astype(torch_dtype(x.dtype).to_complex()), args=(axes, inverse, norm))
    return z.narrow(axes[-1], 0, sizes[-1] // 2 + 1)


def _c2r(x: Tensor, s: Any, dim: Any, norm: str | None, op: str, inverse: bool = True) -> Tensor:
    """The real signal whose transform's non-negative frequencies along the last axis are ``x``
    (the others are their conjugates): the imaginary parts that a real signal cannot have are ignored."""
    x = _complex(x, op)
    norm = _norm(norm, op)
    axes, sizes = _axes_and_sizes(x, s, dim, op)
    last = axes[-1]
    if s is None or list(s if not isinstance(s, int) else [s])[-1] == -1:
        sizes[-1] = 2 * (x.shape[last] - 1)
    n = sizes[-1]
    if n < 1:
        raise RuntimeError(f"{op}: Invalid number of data points ({n}) specified")
    x = _resized(x, (*axes[:-1], last), (*sizes[:-1], n // 2 + 1))
    if len(axes) > 1:  # (the other axes first, complex to complex)
        x = FFTN.apply(x, args=(axes[:-1], inverse, norm))
    m = n // 2 + 1
    if n - m > 0:  # the negative frequencies: conjugates of the positive ones, mirrored
        mirror = conj(x.narrow(last, 1, n - m).flip(last))
        x = cat([x, mirror], last)
    return real(FFTN.apply(x, args=((last,), inverse, norm))).contiguous()


def fft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None) -> Tensor:  # noqa: A002
    """The 1-D discrete Fourier transform along ``dim`` (``n``: cut or zero-padded to that length)."""
    return _c2c(input, None if n is None else [n], [dim], norm, False, "fft_fft")


def ifft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None) -> Tensor:  # noqa: A002
    """The inverse of :func:`fft`."""
    return _c2c(input, None if n is None else [n], [dim], norm, True, "fft_ifft")


def fft2(input: Tensor, s: Any = None, dim: Any = (-2, -1), norm: str | None = None) -> Tensor:  # noqa: A002
    return _c2c(input, s, dim, norm, False, "fft_fft2")


def ifft2(input: Tensor, s: Any = None, dim: Any = (-2, -1), norm: str | None = None) -> Tensor:  # noqa: A002
    return _c2c(input, s, dim, norm, True, "fft_ifft2")


def fftn(input: Tensor, s: Any = None, dim: Any = None, norm: str | None = None) -> Tensor:  # noqa: A002
    return _c2c(input, s, dim, norm, False, "fft_fftn")


def ifftn(input: Tensor, s: Any = None, dim: Any = None, norm: str | None = None) -> Tensor:  # noqa: A002
    return _c2c(input, s, dim, norm, True, "fft_ifftn")


def rfft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None) -> Tensor:  # noqa: A002
    """The transform of a real signal along ``dim``: its ``n // 2 + 1`` non-negative frequencies."""
    return _r2c(input, None if n is None else [n], [dim], norm, "fft_rfft")


def irfft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None) -> Tensor:  # noqa: A002
    """The inverse of :func:`rfft`: a real signal of length ``n`` (default ``2 * (m - 1)``)."""
    return _c2r(input, None if n is None else [n], [dim], norm, "fft_irfft")


def rfft2(input: Tensor, s: Any = None, dim: Any = (-2, -1), norm: str | None = None) -> Tensor:  # noqa: A002
    return _r2c(input, s, dim, norm, "fft_rfft2")


def irfft2(input: Tensor, s: Any = None, dim: Any = (-2, -1), norm: str | None = None) -> Tensor:  # noqa: A002
    return _c2r(input, s, dim, norm, "fft_irfft2")


def rfftn(input: Tensor, s: Any = None, dim: Any = None, norm: str | None = None) -> Tensor:  # noqa: A002
    return _r2c(input, s, dim, norm, "fft_rfftn")


def irfftn(input: Tensor, s: Any = None, dim: Any = None, norm: str | None = None) -> Tensor:  # noqa: A002
    return _c2r(input, s, dim, norm, "fft_irfftn")


def hfft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None) -> Tensor:  # noqa: A002
    """The transform of a Hermitian-symmetric signal given by its first half: a real result."""
    norm = _norm(norm, "fft_hfft")
    return _c2r(conj(_complex(input, "fft_hfft")), None if n is None else [n], [dim], _DUAL[norm], "fft_hfft")


def ihfft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None) -> Tensor:  # noqa: A002
    """The inverse of :func:`hfft`: the first half of a real signal's inverse transform."""
    norm = _norm(norm, "fft_ihfft")
    return conj(_r2c(input, None if n is None else [n], [dim], _DUAL[norm], "fft_ihfft"))


def hfft2(input: Tensor, s: Any = None, dim: Any = (-2, -1), norm: str | None = None) -> Tensor:  # noqa: A002
    """:func:`hfftn` over two axes (the last two by default)."""
    return hfftn(input, s, dim, norm)


def hfftn(input: Tensor, s: Any = None, dim: Any = None, norm: str | None = None) -> Tensor:  # noqa: A002
    """The n-dimensional :func:`hfft`: the real transform of a signal Hermitian-symmetric along the last axis."""
    norm = _norm(norm, "fft_hfftn")
    return _c2r(conj(_complex(input, "fft_hfftn")), s, dim, _DUAL[norm], "fft_hfftn")


def ihfft2(input: Tensor, s: Any = None, dim: Any = (-2, -1), norm: str | None = None) -> Tensor:  # noqa: A002
    """:func:`ihfftn` over two axes (the last two by default)."""
    return ihfftn(input, s, dim, norm)


def ihfftn(input: Tensor, s: Any = None, dim: Any = None, norm: str | None = None) -> Tensor:  # noqa: A002
    """The inverse of :func:`hfftn`: half of a real signal's n-dimensional inverse transform."""
    norm = _norm(norm, "fft_ihfftn")
    return conj(_r2c(input, s, dim, _DUAL[norm], "fft_ihfftn"))


def fftfreq(n: int, d: float = 1.0, *, dtype: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    """The sample frequencies of an ``n``-point transform with spacing ``d``: ``[0, 1, ..., -1] / (d n)``."""
    k = arange(n, dtype=np.int64, device=device)
    k = k - n * (k >= (n + 1) // 2).astype(np.int64)
    out = k.astype(get_default_dtype() if dtype is None else dtype) / (d * n)
    return out.requires_grad_(True) if requires_grad else out


def rfftfreq(n: int, d: float = 1.0, *, dtype: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    """The non-negative sample frequencies of an ``n``-point real transform: ``[0, ..., n // 2] / (d n)``."""
    out = arange(n // 2 + 1, dtype=get_default_dtype() if dtype is None else dtype, device=device) / (d * n)
    return out.requires_grad_(True) if requires_grad else out


def _shifted(x: Tensor, dim: Any, sign: int) -> Tensor:
    dim = int_or_ints(dim)
    if dim is None:
        dim = tuple(range(x.ndim))
    elif isinstance(dim, int):
        dim = (dim,)
    dim = tuple(dim)
    if not dim:
        return x
    return x.roll(tuple(sign * (x.shape[d] // 2) if sign > 0 else -(x.shape[d] // 2) for d in dim), dim)


def fftshift(input: Tensor, dim: Any = None) -> Tensor:  # noqa: A002
    """The zero frequency moved to the middle of each axis of ``dim`` (every axis by default)."""
    return _shifted(input, dim, 1)


def ifftshift(input: Tensor, dim: Any = None) -> Tensor:  # noqa: A002
    """The inverse of :func:`fftshift`."""
    return _shifted(input, dim, -1)
