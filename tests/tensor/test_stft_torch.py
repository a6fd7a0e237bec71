"""``tga.stft`` / ``Tensor.stft`` against PyTorch's ``torch.stft``: values, shapes and dtypes over
the options (hop and window lengths, windows, ``center`` and ``pad_mode``, ``normalized``,
``onesided``, ``return_complex``, batches, complex signals), the errors of mistaken calls, and
the gradient in the signal and the window (PyTorch's, and finite differences in float64)."""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest

import tinygrad_attn as tga

torch = pytest.importorskip("torch")

CALLS = {
    "defaults": lambda m, x: m.stft(x, 8, return_complex=True),
    "method": lambda m, x: x.stft(8, return_complex=True),
    "hann_short_window": lambda m, x: m.stft(
        x, 8, hop_length=3, win_length=6, window=m.hann_window(6, dtype=x.dtype), return_complex=True
    ),  # fmt: skip
    "not_centered": lambda m, x: m.stft(x, 6, hop_length=4, center=False, return_complex=True),
    "two_sided_normalized": lambda m, x: m.stft(x, 8, return_complex=True, onesided=False, normalized=True),
    "real_pairs": lambda m, x: m.stft(x, 8, return_complex=False),
    "constant_pad": lambda m, x: m.stft(x, 7, hop_length=2, pad_mode="constant", return_complex=True),
    "replicate_pad": lambda m, x: m.stft(x, 5, hop_length=5, pad_mode="replicate", return_complex=True),
    "long_window": lambda m, x: m.stft(x, 16, return_complex=True),
    "complex_signal": lambda m, x: m.stft(x.to(m.complex128 if x.dtype == m.float64 else m.complex64), 8),
}
MISTAKES = {
    "no_return_complex": lambda m, x: m.stft(x, 8),
    "n_fft_too_long": lambda m, x: m.stft(x, 30, return_complex=True, center=False),
    "win_length_above_n_fft": lambda m, x: m.stft(x, 8, win_length=9, return_complex=True),
    "hop_zero": lambda m, x: m.stft(x, 8, hop_length=0, return_complex=True),
    "onesided_complex": lambda m, x: m.stft(x.to(m.complex128), 8, onesided=True),
    "three_dims": lambda m, x: m.stft(x[None, None], 8, return_complex=True),
    "window_size": lambda m, x: m.stft(x, 8, window=m.ones(5, dtype=x.dtype), return_complex=True),
    "align_with_center": lambda m, x: m.stft(x, 8, return_complex=True, align_to_window=True),
}


def _signal(m, shape, dtype):
    return m.tensor(np.random.default_rng(7).standard_normal(shape), dtype=getattr(m, dtype))


@pytest.mark.parametrize(("call", "shape", "dtype"), itertools.product(CALLS, [(20,), (3, 23)],
                                                                        ["float64", "float32"]))  # fmt: skip
def test_values_match_pytorch(call, shape, dtype):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (the rectangular window's and return_complex=False's, in both)
        got, want = CALLS[call](tga, _signal(tga, shape, dtype)), CALLS[call](torch, _signal(torch, shape, dtype))
    assert tuple(got.shape) == tuple(want.shape) and str(got.dtype) == str(want.dtype)
    tol = {"rtol": 1e-12, "atol": 1e-12} if dtype == "float64" else {"rtol": 1e-5, "atol": 1e-5}
    np.testing.assert_allclose(got.numpy(), want.numpy(), **tol)


@pytest.mark.parametrize("mistake", MISTAKES)
def test_mistakes_raise_pytorchs_class(mistake):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(RuntimeError):
            MISTAKES[mistake](torch, _signal(torch, (20,), "float64"))
        with pytest.raises(RuntimeError, match="stft"):
            MISTAKES[mistake](tga, _signal(tga, (20,), "float64"))


def test_the_warnings_of_pytorch():
    x = tga.ones(20)
    with pytest.warns(UserWarning, match="window was not provided"):
        tga.stft(x, 8, return_complex=True)
    with pytest.warns(UserWarning, match="return_complex=False is deprecated"):
        tga.stft(x, 8, window=tga.ones(8), return_complex=False)


def test_gradient_in_signal_and_window():
    rng = np.random.default_rng(3)
    y, w = rng.standard_normal(20), rng.standard_normal(6)
    ours = [tga.tensor(v, requires_grad=True) for v in (y, w)]
    theirs = [torch.tensor(v, requires_grad=True) for v in (y, w)]
    (tga.stft(ours[0], 8, hop_length=3, win_length=6, window=ours[1], return_complex=True).abs() ** 2).sum().backward()
    (
        torch.stft(theirs[0], 8, hop_length=3, win_length=6, window=theirs[1], return_complex=True).abs() ** 2
    ).sum().backward()
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-11, atol=1e-12)

    def f(signal, window):
        return tga.view_as_real(tga.stft(signal, 8, hop_length=3, win_length=6, window=window, return_complex=True))

    assert tga.autograd.gradcheck(f, tuple(tga.tensor(v, requires_grad=True) for v in (y[:14], w)))


def _spectrum(m, dtype="float64", batched=True, **kw):
    x = _signal(m, (2, 20) if batched else (20,), dtype)
    kw = {"n_fft": 8, "window": m.hann_window(8, dtype=x.dtype), "return_complex": True, **kw}
    return m.stft(x, **kw)


ISTFT_CALLS = {
    "hann": lambda m: m.istft(_spectrum(m), 8, window=m.hann_window(8, dtype=m.float64)),
    "unbatched": lambda m: _spectrum(m, batched=False).istft(8, window=m.hann_window(8, dtype=m.float64)),
    "rectangular": lambda m: m.istft(_spectrum(m), 8),
    "longer": lambda m: m.istft(_spectrum(m), 8, window=m.hann_window(8, dtype=m.float64), length=25),
    "shorter": lambda m: m.istft(_spectrum(m), 8, window=m.hann_window(8, dtype=m.float64), length=13),
    "normalized": lambda m: m.istft(
        _spectrum(m, normalized=True), 8, window=m.hann_window(8, dtype=m.float64), normalized=True
    ),  # fmt: skip
    "float32": lambda m: m.istft(_spectrum(m, "float32"), 8, window=m.hann_window(8)),
    "two_sided": lambda m: m.istft(_spectrum(m, onesided=False), 8, window=m.hann_window(8, dtype=m.float64)),
    "two_sided_complex": lambda m: m.istft(
        _spectrum(m, onesided=False), 8, window=m.hann_window(8, dtype=m.float64), return_complex=True
    ),  # fmt: skip
    "not_centered": lambda m: m.istft(
        _spectrum(m, center=False, window=None, hop_length=4), 8, hop_length=4, center=False
    ),  # fmt: skip
    "short_window": lambda m: m.istft(
        _spectrum(m, hop_length=3, win_length=6, window=m.ones(6, dtype=m.float64)),
        8,
        hop_length=3,
        win_length=6,
        window=m.ones(6, dtype=m.float64),
    ),  # fmt: skip
}
ISTFT_MISTAKES = {
    "real_input": lambda m: m.istft(_spectrum(m).real, 8),
    "wrong_sidedness": lambda m: m.istft(_spectrum(m), 8, onesided=False),
    "zero_window": lambda m: m.istft(_spectrum(m), 8, window=m.zeros(8, dtype=m.float64)),
    "hann_not_centered": lambda m: m.istft(
        _spectrum(m, center=False), 8, window=m.hann_window(8, dtype=m.float64), center=False
    ),  # fmt: skip
    "window_size": lambda m: m.istft(_spectrum(m), 8, window=m.ones(5, dtype=m.float64)),
}


@pytest.mark.parametrize("call", ISTFT_CALLS)
def test_istft_values_match_pytorch(call):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got, want = ISTFT_CALLS[call](tga), ISTFT_CALLS[call](torch)
    assert tuple(got.shape) == tuple(want.shape) and str(got.dtype) == str(want.dtype)
    tol = {"rtol": 1e-5, "atol": 1e-5} if call == "float32" else {"rtol": 1e-12, "atol": 1e-12}
    np.testing.assert_allclose(got.numpy(), want.numpy(), **tol)


@pytest.mark.parametrize("mistake", ISTFT_MISTAKES)
def test_istft_mistakes_raise_pytorchs_class(mistake):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(RuntimeError):
            ISTFT_MISTAKES[mistake](torch)
        with pytest.raises(RuntimeError, match="istft"):
            ISTFT_MISTAKES[mistake](tga)


def test_istft_gradient():
    y = np.random.default_rng(5).standard_normal(20)
    w = np.linspace(0.5, 2.0, 20)
    grads = []
    for m in (tga, torch):
        x = m.tensor(y, requires_grad=True)
        h = m.hann_window(8, dtype=m.float64)
        z = m.istft(m.stft(x, 8, hop_length=2, window=h, return_complex=True) * 2, 8, hop_length=2, window=h)
        (z * m.tensor(w)).sum().backward()
        grads.append(x.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-12, atol=1e-12)
    h = tga.hann_window(8, dtype=tga.float64)
    spectrum = tga.stft(tga.tensor(y), 8, hop_length=2, window=h, return_complex=True)

    def f(re, im):
        return tga.istft(tga.complex(re, im), 8, hop_length=2, window=h)

    assert tga.autograd.gradcheck(f, (tga.tensor(spectrum.real.numpy(), requires_grad=True),
                                      tga.tensor(spectrum.imag.numpy(), requires_grad=True)))  # fmt: skip
