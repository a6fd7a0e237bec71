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


def _fd_cases():
    """Every transform, of a complex input and (where it takes one) a real one, each normalisation,
    a cut and a padded length."""
    for name, (real_in, kw) in _TRANSFORMS.items():
        for real_x in (True,) if real_in else (False, True):
            for norm, length in itertools.product(("backward", "forward", "ortho"), (1, 3)):
                size = {"n": length} if kw == "n" else {"s": (length, 3) if name.endswith("2") else (2, length)}
                yield name, real_x, {**size, "norm": norm}


def _loss(m, name, x, kw, weights):
    out = getattr(m.fft, name)(x, **kw)
    w = m.tensor(weights[: out.numel()].reshape(tuple(out.shape)))
    return (out.real * w + out.imag * w.flip(0)).sum() if out.is_complex() else (out * w).sum()


@pytest.mark.parametrize(("name", "real_x", "kw"), list(_fd_cases()), ids=str)
def test_gradients_finite_differences(name, real_x, kw):
    """The gradient is ``dL/dx + i dL/dy`` of a real loss (central differences, float64), through the
    transform kernels, the casts, slices and pads around them."""
    rng = np.random.default_rng(5)
    x = _input(real_x, "float64", rng)[:2, :2]
    weights = rng.standard_normal(512)
    t = tga.tensor(x, requires_grad=True)
    _loss(tga, name, t, kw, weights).backward()
    grad = t.grad.numpy()

    def loss(v):
        return _loss(tga, name, tga.tensor(v), kw, weights).item()

    eps = 1e-6
    for i in np.ndindex(x.shape):
        for unit in (1.0,) if real_x else (1.0, 1j):
            up, down = x.copy(), x.copy()
            up[i] += eps * unit
            down[i] -= eps * unit
            part = grad[i].real if unit == 1.0 else grad[i].imag
            assert abs((loss(up) - loss(down)) / (2 * eps) - part) < 1e-6, (name, i, unit)


@pytest.mark.parametrize(("name", "real_x", "kw"), list(_fd_cases())[::5], ids=str)
def test_second_order_as_torch(name, real_x, kw):
    """The gradient's own gradient (``create_graph``: the backward of each kernel is itself
    transforms) in the weights of the loss, as PyTorch's, checked by central differences too."""
    rng = np.random.default_rng(6)
    x = _input(real_x, "float64", rng)[:2, :3]
    weights = rng.standard_normal(512)
    probe = rng.standard_normal(x.shape)

    def run(m, wv):
        t = m.tensor(x, requires_grad=True)
        w = m.tensor(wv, requires_grad=True)
        out = getattr(m.fft, name)(t, **kw)
        ww = w[: out.numel()].reshape(tuple(out.shape))
        loss = (out.real * ww + out.imag * ww.flip(0)).sum() if out.is_complex() else (out * ww).sum()
        (g,) = m.autograd.grad(loss, t, create_graph=True)
        second = (g.real * m.tensor(probe)).sum() + ((g.imag * m.tensor(probe)).sum() if g.is_complex() else 0)
        (gw,) = m.autograd.grad(second, w)
        return second.item(), gw.numpy()

    value, got = run(tga, weights)
    want_value, want = run(torch, weights)
    assert abs(value - want_value) < 1e-9
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-10)
    eps = 1e-6
    for k in np.flatnonzero(got)[:4]:
        up, down = weights.copy(), weights.copy()
        up[k] += eps
        down[k] -= eps
        assert abs((run(tga, up)[0] - run(tga, down)[0]) / (2 * eps) - got[k]) < 1e-6


@pytest.mark.parametrize(("name", "real_x", "kw"), list(_fd_cases()), ids=str)
def test_graph_as_torch(name, real_x, kw):
    """The nodes a graph walker sees, as PyTorch's: its transform kernels (``FftC2CBackward0``,
    ``FftR2CBackward0``, ``FftC2RBackward0``) with the casts, slices, pads and conjugates around them."""

    def walk(fn):
        if fn is None:
            return None
        return (type(fn).__name__, tuple(walk(n) for n, _ in fn.next_functions))

    x = _input(real_x, "float64", np.random.default_rng(0))
    want = walk(getattr(torch.fft, name)(torch.tensor(x, requires_grad=True), **kw).grad_fn)
    got = walk(getattr(tga.fft, name)(tga.tensor(x, requires_grad=True), **kw).grad_fn)
    assert got == want


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
