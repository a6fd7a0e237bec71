"""``torch.stft``, the short-time Fourier transform, and its inverse ``torch.istft``, as PyTorch's: the signal (1-D, or 2-D for a
batch) padded by ``n_fft // 2`` on each side where ``center`` (``pad_mode`` as ``F.pad``'s), cut
into frames of ``n_fft`` every ``hop_length`` (``n_fft // 4``) samples, each multiplied by the
window (``win_length`` long, ones by default with PyTorch's warning, zero-padded to ``n_fft`` on
both sides) and transformed by :mod:`tga.fft <tinygrad_attn.tensors.fft>` (the ``n_fft // 2 + 1``
non-negative frequencies where ``onesided``, the default for real signals and windows; scaled by
``n_fft ** -0.5`` where ``normalized``). Returns ``(..., freq, frames)``, complex; PyTorch's
``return_complex`` is required for a real signal and window (``False``: ``view_as_real`` of it,
with PyTorch's deprecation warning). The gradient flows through the frames and the transform.
"""

from __future__ import annotations

from typing import Any

from ..engine.arguments import index_value
from ..engine.declare import public
from ..engine.warn import warn
from ..functional.checks import tensor_arg
from ._tensor import Tensor
from .fft import fft, ifft, irfft, rfft


def _signature(x: Tensor, n_fft: int, hop: int, win: int, window: Any, normalized: bool, onesided: Any,
               return_complex: Any) -> str:  # fmt: skip
    return (f"stft(tensor of shape {tuple(x.shape)}, {x.dtype}, n_fft={n_fft}, hop_length={hop}, win_length={win}, "
            f"window={'None' if window is None else tuple(window.shape)}, normalized={int(normalized)}, "
            f"onesided={onesided}, return_complex={return_complex})")  # fmt: skip


@public
def stft(
    input: Tensor,  # noqa: A002
    n_fft: Any,
    hop_length: Any = None,
    win_length: Any = None,
    window: Tensor | None = None,
    center: bool = True,
    pad_mode: str = "reflect",
    normalized: bool = False,
    onesided: bool | None = None,
    return_complex: bool | None = None,
    align_to_window: bool | None = None,
) -> Tensor:
    """The short-time Fourier transform of ``input`` (see the module's docstring)."""
    from ..functional import pad as _pad  # noqa: PLC0415
    from .elementwise.complex_numbers import view_as_real  # noqa: PLC0415

    x = tensor_arg(input, "stft")
    # (in PyTorch's order: its Python reads n_fft // 2 first, then its kernel the argument types, then the rest)
    p = int(n_fft // 2) if center else 0  # (a tensor of several numbers: ValueError; None: TypeError)
    if index_value(n_fft) is None:  # (an int, a NumPy integer or a one-element integer tensor, as PyTorch's parser)
        raise TypeError(f"stft(): argument 'n_fft' (position 2) must be int, not {type(n_fft).__name__}")
    n_fft = index_value(n_fft)
    for pos, (name, v) in enumerate((("hop_length", hop_length), ("win_length", win_length)), 3):
        if v is not None and index_value(v) is None:
            raise TypeError(f"stft(): argument '{name}' (position {pos}) must be int, not {type(v).__name__}")
    hop_length, win_length = (None if v is None else index_value(v) for v in (hop_length, win_length))
    complex_in = x.dtype.kind == "c" or (window is not None and window.dtype.kind == "c")
    if return_complex is None:
        if not complex_in:
            raise RuntimeError(
                "stft requires the return_complex parameter be given for real inputs, and will further require that "
                f"return_complex=True in a future PyTorch release (input of shape {tuple(x.shape)}, {x.dtype})."
            )
        return_complex = True
    if align_to_window is not None and center:
        raise RuntimeError("stft align_to_window should only be set when center = false")
    if align_to_window:
        raise NotImplementedError("stft: align_to_window=True is not supported")
    if x.ndim not in (1, 2):
        raise RuntimeError(f"stft: expected a 1D or 2D tensor, but got {x.ndim}D tensor of shape {tuple(x.shape)}")
    if center:
        x = _pad(x.reshape((1,) * (3 - x.ndim) + tuple(x.shape)), [p, p], mode=pad_mode)
        x = x.reshape(tuple(x.shape[-input.ndim :]))
    if x.dtype.kind not in "fc":  # (after the centre padding, whose kernel refuses bool first: PyTorch's order)
        raise RuntimeError(f"stft: expected a tensor of floating point or complex values, got {x.dtype}")
    batched = x.ndim == 2
    x = x if batched else x.unsqueeze(0)
    hop = n_fft // 4 if hop_length is None else int(hop_length)
    win = n_fft if win_length is None else int(win_length)
    length = x.shape[-1]
    sig = _signature(x if batched else x[0], n_fft, hop, win, window, normalized, onesided, return_complex)
    if n_fft <= 0 or n_fft > length:
        raise RuntimeError(f"{sig} : expected 0 < n_fft < {length}, but got n_fft={n_fft}")
    if hop <= 0:
        raise RuntimeError(f"{sig} : expected hop_length > 0, but got hop_length={hop}")
    if win <= 0 or win > n_fft:
        raise RuntimeError(f"{sig} : expected 0 < win_length <= n_fft, but got win_length={win}")
    if window is None:
        warn(
            "A window was not provided. A rectangular window will be applied,which is known to cause spectral "
            "leakage. Other windows such as torch.hann_window or torch.hamming_window are recommended to reduce "
            "spectral leakage.To suppress this warning and use a rectangular window, explicitly set "
            "`window=torch.ones(n_fft, device=<device>)`.",
            UserWarning,
        )
    elif window.ndim != 1 or window.shape[0] != win:
        raise RuntimeError(
            f"{sig} : expected a 1D window tensor of size equal to win_length={win}, but got window with size "
            f"{list(window.shape)}"
        )
    if onesided is None:
        onesided = not complex_in
    elif onesided and complex_in:
        raise RuntimeError(f"{sig} : Cannot have onesided output if window or input is complex")
    # (B, frames, n_fft): PyTorch's strided view of the signal (AsStridedBackward0)
    frames = x.as_strided((x.shape[0], 1 + (x.shape[1] - n_fft) // hop, n_fft),
                          (x.stride(0), hop * x.stride(1), x.stride(1)))  # fmt: skip
    if window is not None:
        left = (n_fft - win) // 2
        w = _pad(window, [left, n_fft - win - left]) if win < n_fft else window
        frames = frames * w
    norm = "ortho" if normalized else "backward"
    out = rfft(frames, dim=-1, norm=norm) if onesided else fft(frames, dim=-1, norm=norm)
    out.transpose_(1, 2)  # (in place, as PyTorch's: TransposeBackward1, then SqueezeBackward4)
    if not batched:
        out.squeeze_(0)
    if not return_complex:
        warn(
            "stft with return_complex=False is deprecated. In a future pytorch release, stft will return complex "
            "tensors for all inputs, and return_complex=False will raise an error.\nNote: you can still call "
            "torch.view_as_real on the complex output to recover the old return format.",
            UserWarning,
        )
        return view_as_real(out)
    return out


# The method names its tensor ``self``, as PyTorch's does (the function's is ``input``)
@public(name="stft", function=False, method=True)
def _stft_method(
    self: Tensor,
    n_fft: Any,
    hop_length: int | None = None,
    win_length: int | None = None,
    window: Tensor | None = None,
    center: bool = True,
    pad_mode: str = "reflect",
    normalized: bool = False,
    onesided: bool | None = None,
    return_complex: bool | None = None,
    align_to_window: bool | None = None,
) -> Tensor:
    """:func:`stft` of this tensor."""
    return stft(self, n_fft, hop_length, win_length, window, center, pad_mode, normalized, onesided, return_complex,
                align_to_window)  # fmt: skip


@public
def istft(
    input: Tensor,  # noqa: A002
    n_fft: int,
    hop_length: int | None = None,
    win_length: int | None = None,
    window: Tensor | None = None,
    center: bool = True,
    normalized: bool = False,
    onesided: bool | None = None,
    length: int | None = None,
    return_complex: bool = False,
) -> Tensor:
    """The inverse of :func:`stft`, as PyTorch's: each frame transformed back (``irfft`` where
    ``onesided``, the default when the frequencies are ``n_fft // 2 + 1``), multiplied by the window,
    added where the frames overlap and divided by the added squares of the window (PyTorch's
    RuntimeError where they are below ``1e-11``); the ``n_fft // 2`` samples of padding off each end
    where ``center``, cut or zero-padded to ``length``. The gradient flows through all of it."""
    from ..functional import pad as _pad  # noqa: PLC0415

    x = tensor_arg(input, "istft")
    if x.dtype.kind != "c":
        raise RuntimeError(
            "istft requires a complex-valued input tensor matching the output from stft with return_complex=True "
            f"(got {x.dtype}, shape {tuple(x.shape)})."
        )
    hop = n_fft // 4 if hop_length is None else int(hop_length)
    win = n_fft if win_length is None else int(win_length)
    sig = (f"istft(tensor of shape {tuple(x.shape)}, {x.dtype}, n_fft={n_fft}, hop_length={hop}, win_length={win}, "
           f"center={int(center)}, normalized={int(normalized)}, onesided={onesided}, length={length})")  # fmt: skip
    if x.ndim not in (2, 3):
        raise RuntimeError(f"{sig} : expected a tensor with 2 or 3 dimensions of complex values, but got {x.ndim}")
    batched = x.ndim == 3
    x = x if batched else x.unsqueeze(0)
    freq, n_frames = x.shape[-2], x.shape[-1]
    if onesided is None:
        onesided = freq != n_fft
    if onesided and freq != n_fft // 2 + 1:
        raise RuntimeError(f"{sig} : expected the frequency dimension (3rd to the last) of the input tensor to match "
                           f"n_fft / 2 + 1 when onesided=True, but got {freq}")  # fmt: skip
    if not onesided and freq != n_fft:
        raise RuntimeError(f"{sig} : expected the frequency dimension (3rd to the last) of the input tensor to match "
                           f"n_fft when onesided=False, but got {freq}")  # fmt: skip
    if not 0 < win <= n_fft:
        raise RuntimeError(f"{sig} : expected 0 < win_length <= n_fft, but got win_length={win}")
    if hop <= 0 or hop > win:
        raise RuntimeError(f"{sig} : expected 0 < hop_length <= win_length")
    if window is None:
        window = Tensor.ones(win, dtype=x.real.dtype, device=x.device)
    elif window.ndim != 1 or window.shape[0] != win:
        raise RuntimeError(f"{sig} : Invalid window shape. window has to be 1D and length of `win_length`")
    if win < n_fft:
        left = (n_fft - win) // 2
        window = _pad(window, [left, n_fft - win - left])
    if normalized:
        x = x * (n_fft**0.5)
    frames = x.transpose(1, 2)  # (B, frames, freq)
    if onesided:
        frames = irfft(frames, n=n_fft, dim=-1)
    elif not return_complex:  # (a real signal from a two-sided spectrum: its first half, as PyTorch reads it)
        frames = irfft(frames[..., : n_fft // 2 + 1], n=n_fft, dim=-1)
    else:
        frames = ifft(frames, n=n_fft, dim=-1)
    frames = frames * window
    total = n_fft + hop * (n_frames - 1)
    idx = (Tensor.arange(n_frames, device=x.device).reshape(-1, 1) * hop
           + Tensor.arange(n_fft, device=x.device).reshape(1, -1)).reshape(-1)  # fmt: skip
    y = Tensor.zeros((x.shape[0], total), dtype=frames.dtype, device=x.device)
    y = y.index_add(1, idx, frames.reshape(x.shape[0], -1))
    square = (window * window).reshape(1, -1).expand(n_frames, n_fft).reshape(-1)
    envelope = Tensor.zeros(total, dtype=square.dtype, device=x.device).index_add(0, idx, square)
    start = n_fft // 2 if center else 0
    end = start + length if length is not None else total - n_fft // 2 if center else total
    y, envelope = y[:, start : min(end, total)], envelope[start : min(end, total)]
    if envelope.numel() and (envelope.abs().min() < 1e-11).item():
        raise RuntimeError(f"{sig} window overlap add min: {envelope.abs().min().item():g}")
    y = y / envelope
    if end > total:
        y = _pad(y, [0, end - total])
    return y if batched else y[0]


@public(name="istft", function=False, method=True)
def _istft_method(
    self: Tensor,
    n_fft: int,
    hop_length: int | None = None,
    win_length: int | None = None,
    window: Tensor | None = None,
    center: bool = True,
    normalized: bool = False,
    onesided: bool | None = None,
    length: int | None = None,
    return_complex: bool = False,
) -> Tensor:
    """:func:`istft` of this tensor."""
    return istft(self, n_fft, hop_length, win_length, window, center, normalized, onesided, length, return_complex)
