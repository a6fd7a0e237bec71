"""Complex tensors against PyTorch: dtypes and promotion, the parts and views, values and
gradients (PyTorch's conjugate convention: ``z.grad = dL/dx + i dL/dy`` for a real loss), checked
against PyTorch's and against finite differences on the real and imaginary parts."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import tinygrad_attn as tga

torch = pytest.importorskip("torch")

_RNG = np.random.default_rng(0)


def _z(shape, dtype=np.complex128, rng=_RNG):
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)


def _close(a, b, dtype):
    tol = 1e-5 if np.dtype(dtype) in (np.complex64, np.float32) else 1e-10
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=tol, atol=tol)


# -- dtypes and promotion -------------------------------------------------------------------
def test_dtype_names():
    assert tga.cfloat is tga.complex64 and tga.cdouble is tga.complex128
    for name in ("complex64", "complex128"):
        d, t = getattr(tga, name), getattr(torch, name)
        assert d.is_complex == t.is_complex and d.is_floating_point == t.is_floating_point
        assert str(d) == str(t) and d.itemsize == t.itemsize
        assert str(d.to_real()) == str(t.to_real())
        for attr in ("eps", "max", "min", "tiny", "resolution", "bits", "dtype"):
            assert getattr(tga.finfo(d), attr) == getattr(torch.finfo(t), attr)
    assert tga.is_complex(tga.tensor([1j])) and not tga.tensor([1.0]).is_complex()


# (float16 with complex is PyTorch's complex32, which has almost no CPU kernels and no NumPy dtype: not kept here)
_DTYPES = ("bool", "uint8", "int32", "int64", "float32", "float64", "complex64", "complex128")
_SCALARS = (True, 3, 2.5, 1 + 2j)


@pytest.mark.parametrize("default", ["float32", "float64"])
@pytest.mark.parametrize("a", _DTYPES)
def test_promotion_grid(a, default):
    """Tensor with tensor, 0-d tensor and Python scalar, one side complex: ``result_type`` and
    the dtype of ``a * b`` as PyTorch's, under either default dtype."""
    old = torch.get_default_dtype()
    torch.set_default_dtype(getattr(torch, default))
    tga.set_default_dtype(getattr(tga, default))
    try:
        for b in _DTYPES:
            if "complex" not in a + b:
                continue
            ta, tb = torch.ones(2, dtype=getattr(torch, a)), torch.ones((), dtype=getattr(torch, b))
            ga, gb = tga.ones(2, dtype=getattr(tga, a)), tga.ones((), dtype=getattr(tga, b))
            assert str(tga.result_type(ga, gb)) == str(torch.result_type(ta, tb))
            assert str(tga.promote_types(ga.dtype, gb.dtype)) == str(torch.promote_types(ta.dtype, tb.dtype))
            assert str((ga * gb).dtype) == str((ta * tb).dtype)
            assert str((gb.reshape(1) * ga).dtype) == str((tb.reshape(1) * ta).dtype)
        for s in _SCALARS:
            if "complex" not in a and not isinstance(s, complex):
                continue
            assert str(tga.result_type(tga.ones(2, dtype=getattr(tga, a)), s)) == str(
                torch.result_type(torch.ones(2, dtype=getattr(torch, a)), s)
            )
            if a != "bool" or not isinstance(s, complex):
                got = tga.ones(2, dtype=getattr(tga, a)) * s
                want = torch.ones(2, dtype=getattr(torch, a)) * s
                assert str(got.dtype) == str(want.dtype)
                np.testing.assert_allclose(got.numpy(), want.numpy())
    finally:
        torch.set_default_dtype(old)
        tga.set_default_dtype(tga.float32)


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_factories(dtype):
    for name, args in (("zeros", (2, 3)), ("ones", (2,)), ("empty", (3,))):
        t = getattr(tga, name)(*args, dtype=getattr(tga, dtype))
        assert str(t.dtype) == str(getattr(torch, name)(*args, dtype=getattr(torch, dtype)).dtype)
        assert tuple(t.shape) == args
    full = tga.full((2,), 1 + 2j, dtype=getattr(tga, dtype))
    np.testing.assert_array_equal(full.numpy(), torch.full((2,), 1 + 2j, dtype=getattr(torch, dtype)).numpy())
    for seed in range(3):
        for draw in ("randn", "rand"):
            torch.manual_seed(seed)
            tga.manual_seed(seed)
            want = getattr(torch, draw)(4, 3, dtype=getattr(torch, dtype))
            got = getattr(tga, draw)(4, 3, dtype=getattr(tga, dtype))
            assert str(got.dtype) == str(want.dtype)
            _close(got.numpy(), want.numpy(), dtype)


def test_tensor_of_python_complex():
    for data in ([1 + 2j, 3.0], 1j, [[1, 2j]]):
        assert str(tga.tensor(data).dtype) == str(torch.tensor(data).dtype)
        np.testing.assert_array_equal(tga.tensor(data).numpy(), torch.tensor(data).numpy())
    z = tga.tensor([1.0, 2.0]).to(tga.complex64)
    assert z.dtype == tga.complex64 and tga.tensor([1.0]).cdouble().dtype == tga.complex128


@pytest.mark.parametrize("target", ["float32", "float64", "int64", "int32"])
def test_complex_to_real_casts_warn(target):
    z = tga.tensor([1.5 + 2j, -3.25 - 1j])
    with pytest.warns(UserWarning, match="discards the imaginary part"):
        got = z.to(getattr(tga, target))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = torch.tensor([1.5 + 2j, -3.25 - 1j]).to(getattr(torch, target))
    assert str(got.dtype) == str(want.dtype)
    np.testing.assert_array_equal(got.numpy(), want.numpy())


# -- parts and views ------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_parts_and_views(dtype):
    z = _z((3, 4), dtype)
    g, t = tga.tensor(z), torch.tensor(z)
    for f in (
        lambda m, x: x.real,
        lambda m, x: x.imag,
        lambda m, x: x.conj(),
        lambda m, x: m.conj_physical(x),
        lambda m, x: x.angle(),
        lambda m, x: x.abs(),
        lambda m, x: x.sgn(),
        lambda m, x: m.view_as_real(x),
        lambda m, x: m.view_as_complex(m.view_as_real(x)),
        lambda m, x: m.view_as_real(x.T),
        lambda m, x: m.polar(x.abs(), x.angle()),
        lambda m, x: m.complex(x.real, x.imag),
        lambda m, x: x.resolve_conj(),
    ):
        a, b = f(tga, g), f(torch, t)
        assert str(a.dtype) == str(b.dtype) and tuple(a.shape) == tuple(b.shape)
        _close(a.numpy(), b.resolve_conj().numpy(), dtype)


def test_views_share_memory():
    z = tga.tensor([1 + 2j, 3 + 4j])
    z.real[0] = 10.0
    z.imag[1] = -1.0
    np.testing.assert_array_equal(z.numpy(), [10 + 2j, 3 - 1j])
    r = tga.view_as_real(z)
    r[1, 0] = 7.0
    assert z[1].item() == 7 - 1j
    x = tga.zeros(3, 2)
    c = tga.view_as_complex(x)
    c[2] = 1 + 5j
    np.testing.assert_array_equal(x.numpy()[2], [1.0, 5.0])


def test_view_errors():
    with pytest.raises(RuntimeError):
        tga.tensor([1.0]).imag
    for bad in (tga.zeros(3, 3), tga.zeros(2, dtype=tga.int64), tga.zeros(4, 2).T.contiguous().T, tga.zeros(()),
                tga.zeros(3, 3)[:, :2]):  # fmt: skip
        with pytest.raises(RuntimeError):
            torch.view_as_complex(torch.from_numpy(np.ascontiguousarray(bad.numpy())) if bad.ndim != 2 or
                                  bad.shape[-1] != 2 else torch.zeros(3, 3)[:, :2])  # fmt: skip
        with pytest.raises(RuntimeError):
            tga.view_as_complex(bad)
    with pytest.raises(RuntimeError):
        tga.view_as_real(tga.zeros(2))
    with pytest.raises(RuntimeError):
        tga.complex(tga.zeros(2), tga.zeros(2, dtype=tga.float64))


def test_backward_of_complex_scalar_raises():
    z = tga.tensor([1 + 2j], requires_grad=True)
    with pytest.raises(RuntimeError, match="real scalar outputs"):
        (z * z).sum().backward()


# -- gradients ------------------------------------------------------------------------------
_UNARY = {
    "exp": lambda m, z: z.exp(),
    "log": lambda m, z: z.log(),
    "sqrt": lambda m, z: z.sqrt(),
    "rsqrt": lambda m, z: z.rsqrt(),
    "sin": lambda m, z: z.sin(),
    "cos": lambda m, z: z.cos(),
    "tan": lambda m, z: z.tan(),
    "tanh": lambda m, z: z.tanh(),
    "sinh": lambda m, z: z.sinh(),
    "cosh": lambda m, z: z.cosh(),
    "sigmoid": lambda m, z: z.sigmoid(),
    "reciprocal": lambda m, z: z.reciprocal(),
    "square": lambda m, z: z.square(),
    "neg": lambda m, z: -z,
    "pow2": lambda m, z: z**2,
    "pow_half": lambda m, z: z**0.5,
    "pow_complex": lambda m, z: z ** (0.5 + 1j),
    "rpow": lambda m, z: 2.0**z,
    "abs": lambda m, z: z.abs(),
    "angle": lambda m, z: z.angle(),
    "sgn": lambda m, z: z.sgn(),
    "conj": lambda m, z: z.conj() * z,
    "real": lambda m, z: z.real * z.imag,
    "view_as_real": lambda m, z: m.view_as_real(z) ** 2,
    "sum": lambda m, z: (z * z).sum(0),
    "mean": lambda m, z: (z * z).mean(),
    "prod": lambda m, z: z.prod(1),
    "cumsum": lambda m, z: z.cumsum(1),
    "cumprod": lambda m, z: z.cumprod(1),
    "matmul": lambda m, z: z @ z.T,
    "mH": lambda m, z: z.mH @ z,
    "outer": lambda m, z: m.outer(z[0], z[1]),
    "einsum": lambda m, z: m.einsum("ij,kj->ik", z, z),
    "cat_stack": lambda m, z: m.stack([m.cat([z, z * 2]), m.cat([z.exp(), z])]),
    "reshape_flatten": lambda m, z: z.reshape(3, 2).transpose(0, 1).flatten() * 1j,
    "mul_real": lambda m, z: z * m.arange(3.0, dtype=z.real.dtype),
    "div": lambda m, z: z / (z + 3),
    "norm": lambda m, z: m.linalg.vector_norm(z),
    "abs_square": lambda m, z: z.abs() ** 2,
}


def _real_loss(m, out, w):
    """A real loss of a complex or real result, weighted so every part counts."""
    if out.is_complex():
        return (m.view_as_real(out) * w[..., None] if False else (out.real * w + out.imag * w.flip(0))).sum()
    return (out * w).sum()


def _grad(m, f, z, weights):
    x = m.tensor(z, requires_grad=True)
    out = f(m, x)
    w = m.tensor(weights.reshape(-1)[: out.numel()].reshape(out.shape))
    _real_loss(m, out, w).backward()
    return out.detach().numpy(), x.grad.numpy()


@pytest.mark.parametrize("name", sorted(_UNARY))
@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_gradients_as_torch(name, dtype):
    rng = np.random.default_rng(abs(hash(name)) % 1000)
    z = _z((2, 3), dtype, rng) + (0.5 if name in ("log", "sqrt", "rsqrt") else 0)
    weights = rng.standard_normal(64).astype(np.float32 if dtype == np.complex64 else np.float64)
    got_v, got_g = _grad(tga, _UNARY[name], z, weights)
    want_v, want_g = _grad(torch, _UNARY[name], z, weights)
    assert got_g.dtype == want_g.dtype
    _close(got_v, want_v, dtype)
    _close(got_g, want_g, dtype)


@pytest.mark.parametrize("name", sorted(_UNARY))
def test_gradients_finite_differences(name):
    """``z.grad`` is ``dL/dx + i dL/dy``, by central differences on each part (complex128)."""
    rng = np.random.default_rng(abs(hash(name)) % 1000 + 1)
    z = _z((2, 3), np.complex128, rng) + (0.5 if name in ("log", "sqrt", "rsqrt") else 0)
    weights = rng.standard_normal(64)

    def loss(v):
        out = _UNARY[name](tga, tga.tensor(v))
        w = tga.tensor(weights[: out.numel()].reshape(tuple(out.shape)))
        return _real_loss(tga, out, w).item()

    _, grad = _grad(tga, _UNARY[name], z, weights)
    eps = 1e-6
    for i in np.ndindex(z.shape):
        for unit, part in ((1.0, grad[i].real), (1j, grad[i].imag)):
            up, down = z.copy(), z.copy()
            up[i] += eps * unit
            down[i] -= eps * unit
            assert abs((loss(up) - loss(down)) / (2 * eps) - part) < 1e-5 * max(1.0, abs(part)), (name, i, unit)


@pytest.mark.parametrize("name", ["exp", "abs", "angle", "div", "sgn", "matmul", "sigmoid", "view_as_real", "prod"])
def test_second_derivatives_as_torch(name):
    rng = np.random.default_rng(7)
    z = _z((2, 3), np.complex128, rng)
    weights = rng.standard_normal(64)
    res = []
    for m in (torch, tga):
        x = m.tensor(z, requires_grad=True)
        out = _UNARY[name](m, x)
        w = m.tensor(weights[: out.numel()].reshape(tuple(out.shape)))
        (g,) = m.autograd.grad(_real_loss(m, out, w), x, create_graph=True)
        ((g * x.sin()).real + g.abs() ** 2).sum().backward()
        res.append((g.detach().numpy(), x.grad.numpy()))
    _close(res[1][0], res[0][0], np.complex128)
    _close(res[1][1], res[0][1], np.complex128)


# -- rotary embeddings as LLaMA's code writes them ------------------------------------------
def _rope(m, xq, xk, theta=10000.0, dim=None):
    _, seq, _, d = xq.shape
    dim = d if dim is None else dim
    freqs = 1.0 / (theta ** (m.arange(0, dim, 2)[: (dim // 2)].float() / dim))
    freqs = m.outer(m.arange(seq), freqs)
    freqs_cis = m.polar(m.ones_like(freqs), freqs)
    xq_ = m.view_as_complex(xq.float().reshape(*xq.shape[:-1], -1, 2))
    xk_ = m.view_as_complex(xk.float().reshape(*xk.shape[:-1], -1, 2))
    fc = freqs_cis.view(1, seq, 1, -1)
    xq_out = m.view_as_real(xq_ * fc).flatten(3)
    xk_out = m.view_as_real(xk_ * fc).flatten(3)
    return xq_out.type_as(xq), xk_out.type_as(xk)


@pytest.mark.parametrize("shape", [(1, 4, 1, 8), (2, 5, 3, 16), (3, 7, 2, 4)])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_rope_attention_as_torch(shape, dtype):
    rng = np.random.default_rng(sum(shape))
    q, k, v = (rng.standard_normal(shape).astype(dtype) for _ in range(3))
    proj = rng.standard_normal((shape[-1], shape[-1])).astype(dtype)
    res = []
    for m in (torch, tga):
        w = m.tensor(proj, requires_grad=True)
        xq, xk, xv = (m.tensor(a, requires_grad=True) for a in (q, k, v))
        rq, rk = _rope(m, xq @ w, xk)
        att = ((rq.transpose(1, 2) @ rk.transpose(1, 2).transpose(-1, -2)) / shape[-1] ** 0.5).softmax(-1)
        out = att @ xv.transpose(1, 2)
        loss = (out**2).mean()
        loss.backward()
        res.append([loss.detach().numpy(), rq.detach().numpy(), xq.grad.numpy(), xk.grad.numpy(), w.grad.numpy()])
    for a, b in zip(res[1], res[0]):
        assert a.dtype == b.dtype
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)


def test_rope_training_step_as_torch():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 6, 2, 8)).astype(np.float32)
    w0 = rng.standard_normal((8, 8)).astype(np.float32) * 0.3
    res = []
    for m in (torch, tga):
        lin = m.nn.Linear(8, 8, bias=False)
        with m.no_grad():
            lin.weight.copy_(m.tensor(w0))
        opt = m.optim.AdamW(lin.parameters(), lr=1e-2)
        for _ in range(3):
            xq = lin(m.tensor(x))
            rq, rk = _rope(m, xq, xq)
            loss = (rq * rk.roll(1, 1)).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        res.append(lin.weight.detach().numpy())
    np.testing.assert_allclose(res[1], res[0], rtol=1e-4, atol=1e-5)


def test_conjugate_and_negative_bits():
    """No tensor here carries PyTorch's lazy bits: ``is_conj``/``is_neg`` are those of a resolved
    tensor, and ``resolve_conj``/``resolve_neg`` give its values."""
    z = _z((3,), np.complex64)
    for m in (tga, torch):
        t = m.tensor(z)
        assert not t.is_neg() and not t.resolve_conj().is_conj() and not m.is_conj(t.conj_physical())
        np.testing.assert_array_equal(t.conj().resolve_conj().resolve_neg().numpy(), np.conj(z))
    x = tga.tensor(z)
    x.conj_physical_()
    np.testing.assert_array_equal(x.numpy(), np.conj(z))


@pytest.mark.parametrize(
    "call",
    [lambda z: z < z, lambda z: z.max(), lambda z: z.sort(), lambda z: z.relu(), lambda z: z.floor(),
     lambda z: z.clamp(0, 1), lambda z: z.argmax(), lambda z: z.sign(), lambda z: z.maximum(z), lambda z: z.topk(1),
     lambda z: z.softmax(-1), lambda z: z.cummax(0), lambda z: z.erf()],
)  # fmt: skip
def test_real_only_ops_raise_as_torch(call):
    z = _z((3,), np.complex64)
    with pytest.raises(Exception) as want:
        call(torch.tensor(z))
    with pytest.raises(Exception) as got:
        call(tga.tensor(z))
    assert isinstance(got.value, [k for k in type(want.value).__mro__ if k.__module__ == "builtins"][0])


@pytest.mark.parametrize("case", range(4))
def test_writes_through_complex_views_with_gradients_as_torch(case):
    """In-place changes through ``real``, ``imag``, ``view_as_real`` and ``view_as_complex`` of
    tensors in a graph: values and gradients as PyTorch's."""
    rng = np.random.default_rng(case)
    z0, x0 = _z((3,), np.complex64, rng), rng.standard_normal((3, 2)).astype(np.float32)
    res = []
    for m in (torch, tga):
        z = m.tensor(z0, requires_grad=True)
        x = m.tensor(x0, requires_grad=True)
        w, y = z * 2, x * 1
        if case == 0:
            w.real[0] = 5.0
            w.imag.mul_(3)
        elif case == 1:
            m.view_as_real(w)[1, 0] = -4.0
        elif case == 2:
            c = m.view_as_complex(y)
            c.mul_(1 + 1j)
        else:
            m.view_as_complex(y)[0] = 2j
            w.imag.add_(y[:, 0])
        loss = (w * w.conj()).real.sum() + w.abs().sum() + (y * m.arange(6.0).reshape(3, 2)).sum()
        loss.backward()
        res.append([w.detach().numpy(), y.detach().numpy(), z.grad.numpy(), x.grad.numpy()])
    for a, b in zip(res[1], res[0]):
        _close(a, b, np.complex64)


def test_rope_compiled_with_gradients_as_torch():
    """The rotary embedding and its gradient under ``tga.compile``: each replay gives PyTorch's."""
    rng = np.random.default_rng(11)
    x = rng.standard_normal((2, 5, 3, 8)).astype(np.float32)

    def step(m, xq):
        a, b = _rope(m, xq, xq * 2)
        loss = (a * b).mean()
        (g,) = m.autograd.grad(loss, xq)
        return loss, g

    want_loss, want_grad = step(torch, torch.tensor(x, requires_grad=True))
    compiled = tga.compile(lambda xq: step(tga, xq))
    for k in range(3):
        loss, grad = compiled(tga.tensor(x * (k + 1) / (k + 1), requires_grad=True))
        np.testing.assert_allclose(loss.item(), want_loss.item(), rtol=1e-5)
        np.testing.assert_allclose(grad.numpy(), want_grad.numpy(), rtol=1e-5, atol=1e-6)
