"""``tga.fft`` against ``torch.fft``: every transform over lengths (cut, padded), axes and
normalisations, in float32/float64 and complex64/complex128: values, dtypes, and gradients
(PyTorch's, under its conjugate convention) of a real loss of the result."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import tinygrad_attn as tga

torch = pytest.importorskip("torch")

# name -> (real input?, the keyword of its length: "n" for the 1-D ones, "s" for the others)
_TRANSFORMS = {
    "fft": (False, "n"),
    "ifft": (False, "n"),
    "rfft": (True, "n"),
    "irfft": (False, "n"),
    "hfft": (False, "n"),
    "ihfft": (True, "n"),
    "fft2": (False, "s"),
    "ifft2": (False, "s"),
    "rfft2": (True, "s"),
    "irfft2": (False, "s"),
    "fftn": (False, "s"),
    "ifftn": (False, "s"),
    "rfftn": (True, "s"),
    "irfftn": (False, "s"),
    "hfft2": (False, "s"),
    "ihfft2": (True, "s"),
    "hfftn": (False, "s"),
    "ihfftn": (True, "s"),
}
_NORMS = (None, "backward", "forward", "ortho")


def _cases():
    for name, (_, kw) in _TRANSFORMS.items():
        for norm, length in itertools.product(_NORMS, (None, 3, 8)):
            if kw == "n":
                for dim in (-1, 0):
                    yield name, {"n": length, "dim": dim, "norm": norm}
            else:
                s = None if length is None else (length, 5) if name.endswith("2") else (4, length)
                dim = (-2, -1) if name.endswith("2") else (None if s is None else (0, 2))
                yield name, {"s": s, "dim": dim, "norm": norm}


def _input(real_in: bool, dtype: str, rng: np.random.Generator) -> np.ndarray:
    x = rng.standard_normal((4, 3, 6))
    if not real_in:
        x = x + 1j * rng.standard_normal(x.shape)
        return x.astype("complex64" if dtype == "float32" else "complex128")
    return x.astype(dtype)


def _run(m, name, kwargs, x, weights):
    t = m.tensor(x, requires_grad=True)
    kw = {k: v for k, v in kwargs.items() if v is not None or k == "norm"}
    out = getattr(m.fft, name)(t, **kw)
    w = m.tensor(weights[: out.numel()].reshape(tuple(out.shape)))
    loss = (out.real * w + out.imag * w.flip(0)).sum() if out.is_complex() else (out * w).sum()
    loss.backward()
    value = out.detach()
    grad = t.grad
    if m is torch:  # (PyTorch's lazy conjugates, resolved to read their values)
        value, grad = value.resolve_conj(), grad.resolve_conj()
    return value.numpy(), grad.numpy()


@pytest.mark.parametrize(("name", "kwargs"), list(_cases()), ids=lambda v: str(v))
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_transforms_as_torch(name, kwargs, dtype):
    rng = np.random.default_rng(len(name))
    x = _input(_TRANSFORMS[name][0], dtype, rng)
    weights = rng.standard_normal(4096).astype(dtype)
    got, want = _run(tga, name, kwargs, x, weights), _run(torch, name, kwargs, x, weights)
    tol = 1e-4 if dtype == "float32" else 1e-10
    for a, b in zip(got, want):
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


@pytest.mark.parametrize("name", ["fft", "rfft", "irfft", "hfft", "ihfft", "fftn", "irfftn"])
def test_gradients_finite_differences(name):
    """The gradient is ``dL/dx + i dL/dy`` of a real loss (central differences, float64)."""
    rng = np.random.default_rng(5)
    real_in = _TRANSFORMS[name][0]
    x = _input(real_in, "float64", rng)[:2, :2]
    weights = rng.standard_normal(512)
    kw = {"norm": "ortho"}

    def loss(v):
        out = getattr(tga.fft, name)(tga.tensor(v), **kw)
        w = tga.tensor(weights[: out.numel()].reshape(tuple(out.shape)))
        return ((out.real * w + out.imag * w.flip(0)).sum() if out.is_complex() else (out * w).sum()).item()

    _, grad = _run(tga, name, kw, x, weights)
    eps = 1e-6
    for i in np.ndindex(x.shape):
        for unit in (1.0,) if real_in else (1.0, 1j):
            up, down = x.copy(), x.copy()
            up[i] += eps * unit
            down[i] -= eps * unit
            part = grad[i].real if unit == 1.0 else grad[i].imag
            assert abs((loss(up) - loss(down)) / (2 * eps) - part) < 1e-6, (name, i, unit)


@pytest.mark.parametrize("n", [1, 4, 5, 8])
def test_frequencies_and_shifts(n):
    for d in (1.0, 0.5):
        np.testing.assert_allclose(tga.fft.fftfreq(n, d).numpy(), torch.fft.fftfreq(n, d).numpy())
        np.testing.assert_allclose(tga.fft.rfftfreq(n, d).numpy(), torch.fft.rfftfreq(n, d).numpy())
    x = np.arange(n * 3.0).reshape(3, n)
    for dim in (None, 0, 1, (0, 1)):
        for f in ("fftshift", "ifftshift"):
            got = getattr(tga.fft, f)(tga.tensor(x), dim=dim).numpy()
            np.testing.assert_array_equal(got, getattr(torch.fft, f)(torch.tensor(x), dim=dim).numpy())


def test_errors_as_torch():
    z = np.ones((2, 4), dtype=np.complex64)
    for call in (
        lambda m: m.fft.rfft(m.tensor(z)),
        lambda m: m.fft.fft(m.tensor(z.real), norm="bad"),
        lambda m: m.fft.fft(m.tensor(z), dim=2),
        lambda m: m.fft.fft(m.tensor(z), n=0),
        lambda m: m.fft.fftn(m.tensor(z), s=(2, 2), dim=(0,)),
    ):
        with pytest.raises(Exception) as want:
            call(torch)
        with pytest.raises(Exception) as got:
            call(tga)
        assert isinstance(got.value, [k for k in type(want.value).__mro__ if k.__module__ == "builtins"][0])


def test_spectral_filter_program_as_torch():
    """A low-pass filter of a batch of signals by rfft, a mask, irfft, and a loss: values and gradients."""
    rng = np.random.default_rng(2)
    sig = rng.standard_normal((3, 32)).astype(np.float32)
    res = []
    for m in (torch, tga):
        x = m.tensor(sig, requires_grad=True)
        spec = m.fft.rfft(x, norm="ortho")
        keep = (m.fft.rfftfreq(32) < 0.2).to(spec.dtype)
        y = m.fft.irfft(spec * keep, n=32, norm="ortho")
        power = (spec.abs() ** 2).mean()
        loss = ((y - x) ** 2).mean() + power
        loss.backward()
        res.append((y.detach().numpy(), x.grad.numpy()))
    for a, b in zip(res[1], res[0]):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)
