"""Short complex programs as new users write them (parts, views, promotion, gradients, modules,
transforms), each run with ``torch`` and with ``tga`` as ``T``: the same values and dtypes, or
both raising."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import tinygrad_attn as tga

torch = pytest.importorskip("torch")

PROGRAMS = {
    "exp_itheta": "th = T.tensor([0.1, 0.5, 2.0], requires_grad=True); z = T.exp(1j * th); z.real.sum().backward(); out = (z, th.grad)",
    "randn_norm": "T.manual_seed(0); z = T.randn(3, 4, dtype=T.cfloat, requires_grad=True); n = z.norm(); n.backward(); out = (n, z.grad)",
    "int_times_j": "out = (T.tensor([1, 2]) * 1j,)",
    "mean_sum": "z = T.tensor([[1+2j, 3-1j],[0.5j, 2]]); out = (z.mean(), z.sum(0), z.mean(1), z.prod())",
    "like": "z = T.tensor([1+2j]); out = (T.zeros_like(z), T.ones_like(z), T.full_like(z, 2+1j), z.new_zeros(2), z.new_ones(1))",
    "linear": "T.manual_seed(0); l = T.nn.Linear(4, 3, dtype=T.cfloat); x = T.randn(2, 4, dtype=T.cfloat); y = l(x); y.abs().sum().backward(); out = (y.shape, l.weight.grad.dtype)",
    "to128": "z = T.tensor([1+2j]); out = (z.to(T.complex128), z.double() if False else z.cdouble())",
    "matmul_mixed": "a = T.tensor([[1.0, 2.0]]); b = T.tensor([[1j], [2.0]]); out = (a.to(T.cfloat) @ b,)",
    "stack_cat": "z = T.tensor([1+2j]); out = (T.stack([z, z.conj()]), T.cat([z, z * 1j]))",
    "where": "z = T.tensor([1+2j, -1-1j]); out = (T.where(z.real > 0, z, T.zeros_like(z)),)",
    "masked_fill": "z = T.tensor([1+2j, -1-1j]); out = (z.masked_fill(z.real < 0, 0), z.masked_fill(z.imag > 0, 1j))",
    "isclose": "z = T.tensor([1+2j]); out = (T.isclose(z, z + 1e-9), T.allclose(z, z), z == z, z != 0)",
    "eq_scalar": "z = T.tensor([1+2j, 0]); out = (z == 0, z.nonzero(), z.count_nonzero(), z.bool())",
    "abs_sq_grad": "z = T.tensor([1+2j, 3-1j], requires_grad=True); (z.abs()**2).sum().backward(); out = (z.grad,)",
    "polar_grad": "r = T.tensor([1.0, 2.0], requires_grad=True); t = T.tensor([0.3, -1.0], requires_grad=True); z = T.polar(r, t); (z.real * 2 + z.imag).sum().backward(); out = (r.grad, t.grad)",
    "complex_fn_grad": "a = T.tensor([1.0, 2.0], requires_grad=True); b = T.tensor([0.5, -1.0], requires_grad=True); z = T.complex(a, b); (z * z).abs().sum().backward(); out = (a.grad, b.grad)",
    "view_as_real_sum": "z = T.tensor([1+2j, 3-1j], requires_grad=True); T.view_as_real(z).pow(2).sum().backward(); out = (z.grad,)",
    "div_scalar": "z = T.tensor([1+2j]); out = (z / 2, 2 / z, z / (1+1j), (1+1j) - z, z ** 2, 2 ** z, z // 1 if False else z)",
    "einsum": "z = T.tensor([[1+2j, 3-1j]]); out = (T.einsum('ij,kj->ik', z, z.conj()),)",
    "softmax_abs": "z = T.tensor([[1+2j, 3-1j]]); out = (z.abs().softmax(-1),)",
    "complex_item": "z = T.tensor(1+2j); out = (complex(z), z.item())",
    "float_of_complex": "z = T.tensor(1+0j); out = (float(z.real),)",
    "sort_abs": "z = T.tensor([3+0j, 1j, -2]); out = (z.abs().sort().values, z[z.abs().argsort()])",
    "index_put": "z = T.zeros(3, dtype=T.cfloat); z[1] = 1+2j; z[T.tensor([0, 2])] = T.tensor([3j, 4+0j]); out = (z,)",
    "clone_detach": "z = T.tensor([1+2j], requires_grad=True); out = (z.clone().detach(), z.detach().numpy())",
    "sgn_grad": "z = T.tensor([1+2j, 0j], requires_grad=True); z.sgn().real.sum().backward(); out = (z.grad,)",
    "angle_real": "x = T.tensor([1.0, -1.0, 0.0, -0.0, float('nan')]); out = (x.angle(),)",
    "pow_int_tensor": "z = T.tensor([1+2j]); out = (z.pow(T.tensor([2])), z ** T.tensor(0.5))",
    "mse_complex_err": "z = T.tensor([1+2j]); out = ((z - z).abs().pow(2).mean(),)",
    "cumsum_flip": "z = T.tensor([1+2j, 3-1j]); out = (z.cumsum(0).flip(0), z.roll(1), z.repeat(2), z.expand(2, 2))",
    "trace_diag": "z = T.tensor([[1+2j, 3-1j],[1j, 2]]); out = (z.trace(), z.diag(), z.tril(), z.triu(1), z.diagonal())",
    "mH_grad": "z = T.tensor([[1+2j, 3-1j],[1j, 2]], requires_grad=True); (z.mH @ z).real.sum().backward(); out = (z.grad,)",
    "complex_tensor_list": "out = (T.tensor([[1, 2j], [3.5, 4]]), T.tensor([1j], dtype=T.complex128), T.as_tensor(np.array([1+1j])))",
    "from_numpy": "a = np.array([1+2j], dtype=np.complex64); z = T.from_numpy(a); z.mul_(2); out = (z, a.copy())",
    "inplace_mul_complex": "z = T.tensor([1+2j]); z.mul_(1j); z += 1; z *= 2; out = (z,)",
    "float_inplace_complex": "x = T.tensor([1.0]); x.mul_(1j) if False else None; out = (x * 1j,)",
    "real_setter_none": "z = T.tensor([1+2j]); out = (z.real.dtype, z.imag.dtype, T.real(z), T.imag(z))",
    "sum_dtype": "z = T.tensor([1+2j]); out = (z.sum(dtype=T.complex128),)",
    "mean_dim_keep": "z = T.tensor([[1+2j, 3j]]); out = (z.mean(dim=1, keepdim=True), z.var(), z.std(dim=1))",
    "dot": "z = T.tensor([1+2j, 3j]); out = (T.dot(z, z), T.vdot(z, z), T.inner(z, z), T.outer(z, z))",
    "nan_complex": "z = T.tensor([complex(float('nan'), 1)]); out = (z.isnan(), z.isfinite(), z.isinf(), T.nan_to_num(z))",
    "sigmoid_tanh": "z = T.tensor([1+2j]); out = (z.sigmoid(), z.tanh(), T.nn.functional.silu(z) if hasattr(T.nn.functional, 'silu') else z)",
    "fft_basic": "x = T.arange(8.0); X = T.fft.fft(x); out = (X, T.fft.ifft(X).real, T.fft.rfft(x).abs())",
}


def _leaves(v):
    """The values of a result as (dtype name, complex128 array) pairs, numbers and shapes as they are."""
    if isinstance(v, (torch.Size, tga.Size)):
        return [tuple(v)]
    if isinstance(v, (torch.dtype, tga.dtype)):
        return [str(v)]
    if isinstance(v, (tuple, list)):
        return [leaf for x in v for leaf in _leaves(x)]
    if hasattr(v, "detach") and hasattr(v, "dtype"):
        t = v.detach()
        if isinstance(t, torch.Tensor):
            t = t.resolve_conj()
        return [(str(t.dtype), np.asarray(t.numpy(), dtype=np.complex128))]
    if isinstance(v, np.ndarray):
        return [("ndarray", v.astype(np.complex128))]
    return [v]


def _run(m, code):
    env = {"T": m, "np": np}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            exec(code, env)  # noqa: S102 - the programs above, run on both libraries
        except Exception as e:  # noqa: BLE001 - raising is a result compared with PyTorch's
            return type(e)
    return _leaves(env["out"])


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_program_as_torch(name):
    want, got = _run(torch, PROGRAMS[name]), _run(tga, PROGRAMS[name])
    if isinstance(want, type):
        assert isinstance(got, type), f"PyTorch raises {want.__name__}, we return {got!r:.200}"
        return
    assert not isinstance(got, type), f"we raise {got.__name__} where PyTorch returns"
    assert len(got) == len(want)
    for a, b in zip(got, want):
        if isinstance(b, tuple) and len(b) == 2 and isinstance(b[1], np.ndarray):
            assert a[0] == b[0] and a[1].shape == b[1].shape
            np.testing.assert_allclose(a[1], b[1], rtol=1e-5, atol=1e-6)
        else:
            assert a == b
