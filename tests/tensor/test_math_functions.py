"""PyTorch's further math API (``tinygrad_attn/tensors/elementwise/math_functions.py``, ``activations.py``,
``ops/transcendental.py``, ``ops/running_index.py``): values and dtypes against PyTorch,
gradients against finite differences in float64, first order and with
``create_graph=True``, fused and decomposed, on every CPU array namespace; the nn modules;
einsum's repeated subscripts, ``normalize``'s p, ``linspace``'s bool refusal."""

from __future__ import annotations

import contextlib
import math

import numpy as np
import pytest
from helpers import close, rand

import tinygrad_attn as tga
import tinygrad_attn.functional as F
from tinygrad_attn import Tensor, nn


def _unit(x):  # into (-0.9, 0.9): the domain of asin, acos, atanh, erfinv
    return x.tanh() * 0.9


def _idx(data, device):
    return tga.tensor(data, device=device)


# name -> (ours, PyTorch's), each a function of (x (3, 4) float64, device, module): ``m`` is
# tinygrad_attn or torch, so one lambda often serves both sides.
OPS = {
    "asin": lambda x, d, m: m.asin(_unit(x)),
    "acos": lambda x, d, m: _unit(x).acos(),
    "atan": lambda x, d, m: x.atan(),
    "asinh": lambda x, d, m: m.asinh(x),
    "acosh": lambda x, d, m: (x.abs() + 1.1).acosh(),
    "atanh": lambda x, d, m: _unit(x).atanh(),
    "erfinv": lambda x, d, m: _unit(x).erfinv(),
    "sinh": lambda x, d, m: x.sinh(),
    "cosh": lambda x, d, m: m.cosh(x),
    "tan": lambda x, d, m: (x * 0.5).tan(),
    "log2": lambda x, d, m: x.abs().log2(),
    "log10": lambda x, d, m: m.log10(x.abs()),
    "exp2": lambda x, d, m: x.exp2(),
    "log1p": lambda x, d, m: x.abs().log1p(),
    "expm1": lambda x, d, m: m.expm1(x),
    "deg2rad": lambda x, d, m: x.deg2rad(),
    "rad2deg": lambda x, d, m: m.rad2deg(x),
    "frac": lambda x, d, m: (x * 3.0).frac(),
    "rsqrt": lambda x, d, m: x.abs().rsqrt(),
    "reciprocal": lambda x, d, m: m.reciprocal(x),
    "square": lambda x, d, m: x.square(),
    "clamp_min": lambda x, d, m: x.clamp_min(0.1),
    "clamp_max": lambda x, d, m: m.clamp_max(x, 0.1),
    "atan2": lambda x, d, m: x.atan2(x.flip(0)),
    "hypot": lambda x, d, m: m.hypot(x, x.flip(1)),
    "xlogy": lambda x, d, m: m.xlogy(x, x.abs().flip(0)),
    "fmod": lambda x, d, m: x.fmod(x.flip(0) * 0.3),
    "remainder": lambda x, d, m: m.remainder(x, x.flip(1) * 0.3),
    "lerp": lambda x, d, m: x.lerp(x.flip(0), 0.3),
    "lerp_tensor_weight": lambda x, d, m: m.lerp(x, x.flip(0), x.flip(1).sigmoid()),
    "logaddexp": lambda x, d, m: x.logaddexp(x.flip(0) * 3.0),
    "copysign": lambda x, d, m: x.copysign(x.flip(0)),
    "masked_select": lambda x, d, m: x.masked_select(x > 0.3),
    "cummax": lambda x, d, m: x.cummax(1).values,
    "cummin": lambda x, d, m: m.cummin(x, 0)[0],
    "logcumsumexp": lambda x, d, m: x.logcumsumexp(1),
    "logcumsumexp_far_apart": lambda x, d, m: (x * 300.0).logcumsumexp(0),
    "diag": lambda x, d, m: x.diag(1),
    "diag_of_vector": lambda x, d, m: m.diag(x[0], -1),
    "diagonal": lambda x, d, m: x.diagonal(),
    "diagonal_offset": lambda x, d, m: m.diagonal(x.reshape(2, 3, 2), -1, 2, 1),
    "movedim": lambda x, d, m: x.reshape(2, 3, 2).movedim((0, 1), (2, 0)),
    "unflatten": lambda x, d, m: x.unflatten(1, (2, -1)),
    "sum_to_size": lambda x, d, m: x.sum_to_size(1, 4),
    "unfold": lambda x, d, m: x.unfold(1, 2, 1) * x.reshape(2, 6).unfold(-1, 3, 2)[:, :1, :2].sum(),
    "var_mean": lambda x, d, m: m.var_mean(x, 1)[0] * m.var_mean(x, 1)[1],
    "std_mean": lambda x, d, m: m.std_mean(x, dim=0, keepdim=True)[0] + m.std_mean(x)[1],
    "meshgrid": lambda x, d, m: m.meshgrid(x[0], x[1, :3], indexing="ij")[1] * m.meshgrid(x[0], x[2, :2], indexing="xy")[0][0, :3],
    "index_add": lambda x, d, m: x.index_add(1, _ix([2, 0], d, m), x[:, :2] * 2.0, alpha=0.5),
    "index_copy": lambda x, d, m: x.index_copy(0, _ix([2, 0], d, m), x[:2].flip(1)),
    "index_fill": lambda x, d, m: x.index_fill(1, _ix([3, 1], d, m), -1.5),
    "masked_scatter": lambda x, d, m: x.masked_scatter(x > 0.3, x.flip(0) * 2.0),
    "scatter_reduce_sum": lambda x, d, m: x.scatter_reduce(0, _ix([[0, 1, 0, 2], [0, 0, 2, 2]], d, m), x[1:] * 3.0, "sum"),
    "scatter_reduce_prod": lambda x, d, m: x.scatter_reduce(1, _ix([[0, 0, 1], [3, 3, 3], [2, 1, 2]], d, m), x[:, 1:], "prod"),
    "scatter_reduce_mean": lambda x, d, m: x.scatter_reduce(1, _ix([[0, 0, 1], [3, 3, 3], [2, 1, 2]], d, m), x[:, 1:], "mean", include_self=False),
    "scatter_reduce_amax": lambda x, d, m: x.scatter_reduce(1, _ix([[0, 0, 1], [3, 3, 3], [2, 1, 2]], d, m), x[:, 1:], "amax"),
    "scatter_reduce_amin": lambda x, d, m: x.scatter_reduce(0, _ix([[0, 1, 0, 2], [0, 0, 2, 2]], d, m), x[1:] * 3.0 + 0.1, "amin", include_self=False),
    "einsum_diagonal": lambda x, d, m: m.einsum("ii->i", x[:, :3]),
    "einsum_trace": lambda x, d, m: m.einsum("ii->", x[:, :3]),
    "einsum_iij": lambda x, d, m: m.einsum("iij->j", x.reshape(2, 2, 3)),
    "einsum_bii": lambda x, d, m: m.einsum("bii->bi", x[:2, :2].reshape(1, 2, 2).expand(3, 2, 2) * x[:, :1].reshape(3, 1, 1)),
    "einsum_diag_times": lambda x, d, m: m.einsum("ii,ij->j", x[:, :3], x),
    "normalize_p0": lambda x, d, m: _F(m).normalize(x, p=0, dim=1),
    "normalize_p-1": lambda x, d, m: _F(m).normalize(x, p=-1, dim=0),
    "normalize_pinf": lambda x, d, m: _F(m).normalize(x, p=math.inf, dim=1),
    "normalize_p-inf": lambda x, d, m: _F(m).normalize(x, p=-math.inf, dim=1),
    # activations
    "celu": lambda x, d, m: _F(m).celu(x, 0.7),
    "selu": lambda x, d, m: _F(m).selu(x),
    "relu6": lambda x, d, m: _F(m).relu6(x * 4.0),
    "hardtanh": lambda x, d, m: _F(m).hardtanh(x, -0.5, 0.8),
    "hardsigmoid": lambda x, d, m: _F(m).hardsigmoid(x * 3.0),
    "hardswish": lambda x, d, m: _F(m).hardswish(x * 3.0),
    "logsigmoid": lambda x, d, m: _F(m).logsigmoid(x * 3.0),
    "mish": lambda x, d, m: _F(m).mish(x),
    "softmin": lambda x, d, m: _F(m).softmin(x, dim=1),
    "softsign": lambda x, d, m: _F(m).softsign(x),
}  # fmt: skip

# Kinked or stepwise: values checked everywhere, gradients away from the kinks by ``low``.
NO_SECOND_ORDER = {"fmod", "remainder", "frac", "copysign", "masked_select", "cummax", "cummin", "index_fill"}


def _ix(data, device, m):
    return m.tensor(data) if m is not tga else _idx(data, device)


def _F(m):
    return F if m is tga else m.nn.functional


@pytest.mark.parametrize("name", OPS)
def test_values_and_dtypes_match_pytorch(name, device, rng):
    torch = pytest.importorskip("torch")
    x = rand(rng, 3, 4, device=device, requires_grad=False, low=0.2)
    ours = OPS[name](x, device, tga)
    theirs = OPS[name](torch.from_numpy(x.detach().numpy().copy()), device, torch)
    assert ours.shape == tuple(theirs.shape)
    assert ours.dtype.name == str(theirs.dtype).replace("torch.", "")
    close(ours, theirs.detach().numpy(), atol=1e-12, rtol=1e-10)


@contextlib.contextmanager
def _mode(decomposed):
    with tga.decompose() if decomposed else contextlib.nullcontext():
        yield


@pytest.mark.parametrize("decomposed", [False, True], ids=["fused", "decomposed"])
@pytest.mark.parametrize("name", OPS)
def test_gradients_match_finite_differences(name, decomposed, device, rng):
    x = rand(rng, 3, 4, device=device, low=0.2)
    with _mode(decomposed):
        assert tga.gradcheck(lambda t: OPS[name](t, device, tga), x)


@pytest.mark.parametrize("decomposed", [False, True], ids=["fused", "decomposed"])
@pytest.mark.parametrize("name", [n for n in OPS if n not in NO_SECOND_ORDER])
def test_second_order_matches_finite_differences(name, decomposed, device, rng):
    x = rand(rng, 3, 4, device=device, low=0.2)
    fn = OPS[name]
    w = Tensor(rng.standard_normal(fn(x, device, tga).shape), device=device)

    def grad_of(t, create_graph=True):
        out = fn(t, device, tga)
        (g,) = tga.grad((out * w * out).sum(), t, create_graph=create_graph)
        return g

    with _mode(decomposed):
        close(grad_of(x), grad_of(x, create_graph=False).detach().numpy(), atol=1e-12, rtol=1e-10)
        assert tga.gradcheck(grad_of, x)


# -- dtypes: a float op of integers gives float32, as in PyTorch ---------------------------
@pytest.mark.parametrize(
    "name", ["asin", "acos", "atan", "asinh", "atanh", "sinh", "cosh", "tan", "log2", "log10", "exp2", "log1p",
             "expm1", "deg2rad", "rad2deg", "erfinv", "reciprocal"],
)  # fmt: skip
def test_float_functions_of_integers_give_float32(name, device):
    torch = pytest.importorskip("torch")
    with np.errstate(all="ignore"):  # (asin(2), log2(0), 1 / 0: NaN and inf, as in PyTorch)
        ours = getattr(tga, name)(tga.tensor([0, 1, 2], device=device))
    theirs = getattr(torch, name)(torch.tensor([0, 1, 2]))
    assert ours.dtype == np.float32, (name, ours.dtype)
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), atol=1e-6, rtol=1e-6)


def test_integer_results_stay_integers(device):
    a = tga.tensor([-7, -3, 0, 5, 9], device=device)
    assert a.trunc().dtype == np.int64 and a.square().dtype == np.int64
    np.testing.assert_array_equal(a.fmod(4).detach().numpy(), np.fmod([-7, -3, 0, 5, 9], 4))
    np.testing.assert_array_equal(tga.remainder(a, 4).detach().numpy(), np.remainder([-7, -3, 0, 5, 9], 4))


# -- the values PyTorch gives at the edges --------------------------------------------------
def test_special_values_match_pytorch(device):
    torch = pytest.importorskip("torch")
    vals = [0.0, -0.0, 1.0, -1.0, math.inf, -math.inf, math.nan, 1e-300, 1e30, -2.5]
    x, t = Tensor(np.array(vals), device=device), torch.tensor(vals, dtype=torch.float64)
    with np.errstate(all="ignore"):
        for name in ["asin", "acos", "atan", "asinh", "acosh", "atanh", "sinh", "cosh", "log2", "log10", "exp2",
                     "log1p", "expm1", "trunc", "frac", "erfinv", "logcumsumexp"]:  # fmt: skip
            ours = getattr(x, name)(0) if name == "logcumsumexp" else getattr(x, name)()
            theirs = getattr(t, name)(0) if name == "logcumsumexp" else getattr(t, name)()
            np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-12, atol=0, err_msg=name)
        np.testing.assert_array_equal(np.signbit(x.copysign(-0.0).detach().numpy()), np.ones(len(vals), bool))
        np.testing.assert_allclose(x.logaddexp(x).detach().numpy(), t.logaddexp(t).detach().numpy(), rtol=1e-12)
        np.testing.assert_allclose(x.fmod(-1.5).detach().numpy(), t.fmod(-1.5).detach().numpy(), rtol=1e-12)
        np.testing.assert_array_equal(
            x.isclose(x, equal_nan=True).detach().numpy(), t.isclose(t, equal_nan=True).detach().numpy()
        )
        np.testing.assert_array_equal(x.isclose(x).detach().numpy(), t.isclose(t).detach().numpy())


def test_log1p_and_expm1_keep_tiny_float32_arguments():
    # (log(1 + x) would give 0 for these: 1 + 1e-9 is 1 in float32)
    x = tga.tensor([1e-9, -3e-10], dtype=tga.float32)
    close(x.log1p(), np.array([1e-9, -3e-10]), rtol=1e-6, atol=0)
    close(x.expm1(), np.array([1e-9, -3e-10]), rtol=1e-6, atol=0)
    close(x.sinh(), np.array([1e-9, -3e-10]), rtol=1e-6, atol=0)


# -- logic, selections and scans --------------------------------------------------------------
def test_logical_functions_give_bools(device):
    a = tga.tensor([0, 1, 2, 0], device=device)
    b = tga.tensor([True, True, False, False], device=device)
    np.testing.assert_array_equal(a.logical_not().detach().numpy(), [True, False, False, True])
    np.testing.assert_array_equal(tga.logical_and(a, b).detach().numpy(), [False, True, False, False])
    np.testing.assert_array_equal(a.logical_or(b).detach().numpy(), [True, True, True, False])
    np.testing.assert_array_equal(tga.logical_xor(a, b).detach().numpy(), [True, False, True, False])


def test_nonzero_both_forms(device):
    torch = pytest.importorskip("torch")
    a = np.array([[0.0, 1.5, 0.0], [2.0, 0.0, -1.0]])
    x, t = Tensor(a, device=device), torch.from_numpy(a)
    np.testing.assert_array_equal(x.nonzero().detach().numpy(), t.nonzero().detach().numpy())
    assert x.nonzero().dtype == np.int64
    for ours, theirs in zip(tga.nonzero(x, as_tuple=True), torch.nonzero(t, as_tuple=True)):
        np.testing.assert_array_equal(ours.detach().numpy(), theirs.detach().numpy())
    assert tuple(tga.tensor(0.0, device=device).nonzero().shape) == tuple(torch.tensor(0.0).nonzero().shape)


def test_cummax_indices_take_the_latest_tie_and_nans(device):
    torch = pytest.importorskip("torch")
    a = np.array([[1.0, 3.0, 2.0, 3.0, math.nan, 5.0], [0.0, 0.0, 0.0, -1.0, 2.0, 2.0]])
    x, t = Tensor(a, device=device), torch.from_numpy(a)
    for op in ("cummax", "cummin"):
        ours, theirs = getattr(x, op)(1), getattr(t, op)(1)
        np.testing.assert_array_equal(ours.indices.detach().numpy(), theirs.indices.detach().numpy())
        np.testing.assert_array_equal(ours.values.detach().numpy(), theirs.values.detach().numpy())
    i = tga.tensor([3, 1, 4, 1, 5], device=device)
    assert i.cummax(0).values.tolist() == [3, 3, 4, 4, 5]


def test_isclose_and_allclose(device):
    x = Tensor(np.array([1.0, 2.0, math.nan]), device=device)
    y = Tensor(np.array([1.0 + 1e-9, 2.1, math.nan]), device=device)
    assert x.isclose(y).tolist() == [True, False, False]
    assert tga.isclose(x, y, equal_nan=True, atol=0.2).tolist() == [True, True, True]
    assert not x.allclose(y) and x.allclose(y, atol=0.2, equal_nan=True)


def test_scatter_reduce_amax_shares_the_gradient_among_ties(device):
    # (as PyTorch: ties of the sources share the gradient; and, PyTorch's quirk kept, an input
    # equal to the result counts among them even with include_self=False, where it gets no share)
    torch = pytest.importorskip("torch")
    a = np.array([1.0, 2.0, 0.0])
    s = np.array([2.0, 2.0, 5.0, 1.0])
    ix = [1, 1, 2, 0]
    x, src = Tensor(a, device=device, requires_grad=True), Tensor(s, device=device, requires_grad=True)
    x.scatter_reduce(0, _idx(ix, device), src, "amax").sum().backward()
    tx, ts = torch.tensor(a, requires_grad=True), torch.tensor(s, requires_grad=True)
    tx.scatter_reduce(0, torch.tensor(ix), ts, "amax").sum().backward()
    close(x.grad, tx.grad.detach().numpy())
    close(src.grad, ts.grad.detach().numpy())


def test_errors_name_the_op(device):
    x = Tensor(np.zeros((2, 3)), device=device)
    with pytest.raises(RuntimeError, match="diagonal"):
        x.diagonal(0, 1, 1)
    with pytest.raises(RuntimeError, match="unflatten"):
        x.unflatten(1, (2, 2))
    with pytest.raises(RuntimeError, match="sum_to_size"):
        x.sum_to_size(3, 3)
    with pytest.raises(RuntimeError, match="masked_select"):
        x.masked_select(x)
    with pytest.raises(ValueError, match="scatter_reduce"):
        x.scatter_reduce(0, _idx([[0]], device), x, "max")
    with pytest.raises(TypeError, match="movedim"):  # (a list with an int: no overload of PyTorch's)
        x.movedim((0, 1), 0)
    with pytest.raises(RuntimeError, match="movedim"):
        x.movedim((0, 1), (0,))
    with pytest.raises(RuntimeError, match="hardswish"):
        F.hardswish(tga.tensor([1, 2], device=device))


def test_linspace_of_bool_raises_as_pytorch():
    torch = pytest.importorskip("torch")
    with pytest.raises(RuntimeError):
        torch.linspace(0, 1, 3, dtype=torch.bool)
    with pytest.raises(RuntimeError, match="linspace"):
        tga.linspace(0, 1, 3, dtype=tga.bool)


# -- normal, and the nn modules -----------------------------------------------------------------
def test_normal_draws_from_the_library_generator(device):
    tga.manual_seed(3)
    a = tga.normal(2.0, 0.5, size=(2000,), device=device)
    assert abs(a.mean().item() - 2.0) < 0.05 and abs(a.std().item() - 0.5) < 0.05
    tga.manual_seed(3)
    assert np.array_equal(tga.normal(2.0, 0.5, size=(2000,), device=device).detach().numpy(), a.detach().numpy())
    m = Tensor(np.array([0.0, 10.0, -10.0]), device=device)
    s = Tensor(np.array([0.0, 1e-9, 1e-9]), device=device)
    close(tga.normal(m, s), m.detach().numpy(), atol=1e-6)
    assert tga.normal(m, 1.0).shape == (3,) and tga.normal(0.0, s).shape == (3,)


@pytest.mark.parametrize(
    "name, kwargs",
    [("CELU", {"alpha": 0.5}), ("SELU", {}), ("ReLU6", {}), ("Hardswish", {}), ("Hardsigmoid", {}),
     ("Hardtanh", {"min_val": -0.5, "max_val": 2.0}), ("LogSigmoid", {}), ("Mish", {}), ("Softmin", {"dim": 1}),
     ("Softsign", {}), ("SiLU", {}), ("ELU", {"alpha": 0.3}), ("LeakyReLU", {"negative_slope": 0.2}),
     ("Softplus", {"beta": 2.0})],
)  # fmt: skip
def test_activation_modules_match_pytorch(name, kwargs, rng):
    torch = pytest.importorskip("torch")
    a = rng.standard_normal((3, 5)) * 4
    ours, theirs = getattr(nn, name)(**kwargs), getattr(torch.nn, name)(**kwargs)
    close(ours(Tensor(a)), theirs(torch.from_numpy(a)).detach().numpy(), atol=1e-12, rtol=1e-10)
    assert repr(ours).startswith(name)


def test_bitwise_functions_and_operators_match_pytorch(device):
    torch = pytest.importorskip("torch")
    a, b = [5, -3, 12, 0], [3, 6, 1, -1]
    x, y, tx, ty = tga.tensor(a, device=device), tga.tensor(b, device=device), torch.tensor(a), torch.tensor(b)
    for ours, theirs in [(x ^ y, tx ^ ty), (2 & x, 2 & tx), (6 | x, 6 | tx), (x << 2, tx << 2), (x >> 1, tx >> 1),
                         (x.bitwise_not(), tx.bitwise_not()), (tga.bitwise_and(x, y), torch.bitwise_and(tx, ty)),
                         (x.bitwise_or(y), tx.bitwise_or(ty)), (1 << y.abs(), 1 << ty.abs())]:  # fmt: skip
        assert ours.dtype == np.int64 and ours.tolist() == theirs.tolist()
    flags = tga.tensor([True, False, True], device=device)
    assert (flags ^ tga.tensor([True, True, False], device=device)).tolist() == [False, True, True]
    with pytest.raises(RuntimeError, match="bitwise_xor"):
        Tensor(np.ones(2), device=device) ^ Tensor(np.ones(2), device=device)


def test_meshgrid_refuses_an_unknown_indexing_as_pytorch():
    with pytest.raises(RuntimeError, match="meshgrid"):
        tga.meshgrid(tga.tensor([1.0]), indexing="bad")


def test_activation_modules_take_pytorchs_positional_arguments():
    assert nn.CELU(0.5, True).alpha == 0.5 and nn.SELU(True).inplace
    assert (nn.Hardtanh(-2.0, 2.0)(tga.tensor([-3.0, 3.0]))).tolist() == [-2.0, 2.0]
    with pytest.raises(TypeError, match="SELU"):
        nn.SELU(True, 1.0)
    with pytest.raises(TypeError, match="CELU.*beta"):
        nn.CELU(beta=1.0)


def test_unfold_windows_and_errors_as_pytorch(device):
    torch = pytest.importorskip("torch")
    a = np.arange(27.0).reshape(3, 3, 3)
    for args in [(2, 2, 8), (1, 0, 8), (-1, 2, 1), (0, 3, 1)]:
        close(Tensor(a, device=device).unfold(*args), torch.from_numpy(a).unfold(*args).detach().numpy())
    with pytest.raises(RuntimeError, match="unfold"):
        Tensor(np.zeros(8), device=device).unfold(0, 9, 3)
    with pytest.raises(IndexError):
        Tensor(np.zeros(8), device=device).unfold(1, 8, 3)
    with pytest.raises(RuntimeError, match="unfold"):
        Tensor(np.zeros(8), device=device).unfold(0, 1, -1)


def test_meshgrid_without_indexing_is_ij_as_pytorchs_none():
    a, b = tga.tensor([1.0, 2.0, 3.0]), tga.tensor([4.0, 5.0])
    for grids in (tga.meshgrid(a, b), tga.meshgrid(a, b, indexing=None)):
        assert [g.shape for g in grids] == [(3, 2), (3, 2)]
        assert grids[0].tolist() == [[1.0, 1.0], [2.0, 2.0], [3.0, 3.0]]


def test_unflatten_method_takes_pytorchs_parameter_names():
    x = tga.tensor(np.arange(6.0))
    assert x.unflatten(dim=0, sizes=(2, -1)).shape == (2, 3)


@pytest.mark.parametrize("name", ["atan2", "hypot", "copysign", "fmod", "logaddexp"])
def test_binary_functions_promote_as_torch_result_type(name):
    torch = pytest.importorskip("torch")
    cases = [
        (np.ones(3, np.float32), np.array(2.0)),  # a 0-d float64 tensor beside a dimensioned float32 one
        (np.ones(3, np.float32), np.ones(3)),
        (np.ones(3, np.int64), np.array(2.5, np.float32)),
    ]
    for a, b in cases:
        theirs = getattr(torch, name)(torch.tensor(a), torch.tensor(b)).dtype
        ours = getattr(tga, name)(tga.tensor(a), tga.tensor(b)).dtype
        assert str(theirs) == str(ours), (name, a.dtype, b.shape, b.dtype, theirs, ours)


def test_where_method_is_torch_where_with_self_as_the_taken_value(device):
    torch = pytest.importorskip("torch")
    x, y = np.arange(6.0).reshape(2, 3), -np.ones((2, 3))
    c = np.array([[True, False, True], [False, True, False]])
    a, b = Tensor(x, device=device, requires_grad=True), Tensor(y, device=device, requires_grad=True)
    out = a.where(tga.tensor(c, device=device), b)
    ta, tb = torch.tensor(x, requires_grad=True), torch.tensor(y, requires_grad=True)
    tout = ta.where(torch.tensor(c), tb)
    close(out, tout.detach().numpy())
    w = np.arange(6.0).reshape(2, 3) + 1
    ga, gb = tga.grad((out * Tensor(w, device=device)).sum(), [a, b])
    tga_, tgb = torch.autograd.grad((tout * torch.tensor(w)).sum(), [ta, tb])
    close(ga, tga_.detach().numpy())
    close(gb, tgb.detach().numpy())
    close(a.where(tga.tensor(c, device=device), 7.5), torch.tensor(x).where(torch.tensor(c), 7.5).detach().numpy())


# -- sinc at 0, where the OpInfo entry draws no inputs -----------------------------------
@np.errstate(divide="ignore", invalid="ignore")  # (the second pass divides 0 by 0 as PyTorch's: NumPy warns)
def test_sinc_at_zero_value_and_derivatives():
    # PyTorch's formula: the derivative 0 where pi x x is 0 (also where x x underflows: 1e-200), and
    # recorded, its derivative there NaN (the masked side's 0 / 0; the limit would be -pi^2 / 3)
    torch = pytest.importorskip("torch")
    points = [0.0, -0.0, 1e-200, -1e-200, 0.5]
    got, want = [], []
    for m, out in ((tga, got), (torch, want)):
        x = m.tensor(points, dtype=m.float64, requires_grad=True)
        y = x.sinc()
        (g,) = m.autograd.grad(y.sum(), [x], create_graph=True)
        (gg,) = m.autograd.grad(g.sum(), [x])
        out += [y.detach().numpy(), g.detach().numpy(), gg.detach().numpy()]
    np.testing.assert_array_equal(got[0], [1.0, 1.0, 1.0, 1.0, 2 / math.pi])
    for o, w in zip(got, want):
        np.testing.assert_allclose(o, w, rtol=1e-12, equal_nan=True)
    assert tga.sinc(tga.tensor([1, 2])).dtype == tga.float32
    assert tga.gradcheck(lambda t: t.sinc(), tga.tensor([0.0, 1e-3, -0.7, 2.5], dtype=tga.float64, requires_grad=True))


# -- binary ops on every pair of special values: value, gradient, second derivative --------------
_SPECIAL = [0.0, -0.0, 1e-170, 0.5, 2.0, -1.0, 800.0, np.inf, -np.inf, np.nan]
_BINARY_KINKS = {
    "xlogy": lambda m, a, b: m.xlogy(a, b),
    "logaddexp": lambda m, a, b: m.logaddexp(a, b),
    "atan2": lambda m, a, b: m.atan2(a, b),
    "pow": lambda m, a, b: a**b,
    "maximum": lambda m, a, b: m.maximum(a, b),
    "minimum": lambda m, a, b: m.minimum(a, b),
}


@pytest.mark.parametrize("name", _BINARY_KINKS)
@np.errstate(all="ignore")  # (NumPy warns of the infinities and NaNs asked for, as PyTorch does not)
def test_binary_ops_at_special_values_as_pytorch(name):
    """Every pair of zeros (both signs), a tiny, ordinary, large, infinite and NaN operand: the value,
    both gradients and both second derivatives (create_graph), each PyTorch's, NaN where its are."""
    torch = pytest.importorskip("torch")
    a, b = (v.ravel() for v in np.meshgrid(_SPECIAL, _SPECIAL))
    got, want = [], []
    for m, out in ((tga, got), (torch, want)):
        ts = [m.tensor(v, dtype=m.float64, requires_grad=True) for v in (a, b)]
        y = _BINARY_KINKS[name](m, *ts)
        grads = m.autograd.grad(y, ts, m.tensor(np.linspace(-1.0, 2.0, a.size)), create_graph=True)
        s = grads[0].sum() * 2.0 + (grads[1] * 3.0).sum()
        seconds = m.autograd.grad(s, ts, allow_unused=True) if s.requires_grad else (None, None)
        out += [y.detach().numpy()] + [g.detach().numpy() for g in grads]
        out += [np.zeros(a.size) if h is None else h.detach().numpy() for h in seconds]
    for what, o, w in zip(("value", "gradient a", "gradient b", "second a", "second b"), got, want):
        bad = ~np.isclose(o, w, rtol=1e-12, atol=0, equal_nan=True)
        assert not bad.any(), (
            f"{name} {what}: at {list(zip(a[bad], b[bad]))[:4]} ours {o[bad][:4]}, PyTorch {w[bad][:4]}"
        )
