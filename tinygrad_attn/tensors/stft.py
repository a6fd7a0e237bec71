"""``torch.stft``, the short-time Fourier transform, as PyTorch's: the signal (1-D, or 2-D for a
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

from ..engine.declare import public
from ..engine.warn import warn
from ..functional.checks import tensor_arg
from ._tensor import Tensor


def _signature(x: Tensor, n_fft: int, hop: int, win: int, window: Any, normalized: bool, onesided: Any,
               return_complex: Any) -> str:  # fmt: skip
    return (f"stft(tensor of shape {tuple(x.shape)}, {x.dtype}, n_fft={n_fft}, hop_length={hop}, win_length={win}, "
            f"window={'None' if window is None else tuple(window.shape)}, normalized={int(normalized)}, "
            f"onesided={onesided}, return_complex={return_complex})")  # fmt: skip


@public
def stft(
    input: Tensor,  # noqa: A002
    n_fft: int,
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
    """The short-time Fourier transform of ``input`` (see the module's docstring)."""
    from .. import fft as _fft  # noqa: PLC0415 - (the fft module imports the tensors first)
    from ..functional import pad as _pad  # noqa: PLC0415
    from .elementwise.complex_numbers import view_as_real  # noqa: PLC0415

    x = tensor_arg(input, "stft")
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
        p = n_fft // 2
        x = _pad(x.reshape((1,) * (3 - x.ndim) + tuple(x.shape)), [p, p], mode=pad_mode)
        x = x.reshape(tuple(x.shape[-input.ndim :]))
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
    frames = x.unfold(-1, n_fft, hop)  # (B, frames, n_fft)
    if window is not None:
        left = (n_fft - win) // 2
        w = _pad(window, [left, n_fft - win - left]) if win < n_fft else window
        frames = frames * w
    norm = "ortho" if normalized else "backward"
    out = (_fft.rfft(frames, dim=-1, norm=norm) if onesided else _fft.fft(frames, dim=-1, norm=norm)).transpose(1, 2)
    out = out if batched else out[0]
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
    n_fft: int,
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
