"""PyTorch's further tensor functions and ``torch.linalg`` (``shape_functions.py``, ``products.py``,
``statistics.py``, ``special_functions.py``, ``linalg.py``) beyond the op table's value and gradient
checks (``tests/opinfo.py``): result types and names, ties, finite-difference gradients in float64,
the in-place twins, the errors PyTorch raises, and the gamma family against SciPy."""

from __future__ import annotations

import math

import numpy as np
import pytest
from helpers import close

import tinygrad_attn as tga
from tinygrad_attn import Tensor

torch = pytest.importorskip("torch")


def _t(a, device="cpu", grad=False):
    return Tensor(np.asarray(a, dtype=np.float64), device=device, requires_grad=grad)


# -- finite differences ----------------------------------------------------------------
def _spd(rng, n, batch=()):
    a = rng.standard_normal(batch + (n, n))
    return a @ np.swapaxes(a, -1, -2) + n * np.eye(n)


def _separated(rng, n):
    a = rng.uniform(-1, 1, (n, n))
    return a + a.T + np.diag(8.0 * np.arange(n))


LINALG_FUNCTIONS = {
    "det": (lambda x: tga.linalg.det(x), lambda rng: rng.standard_normal((2, 3, 3)) + 3 * np.eye(3)),
    "slogdet": (lambda x: tga.linalg.slogdet(x).logabsdet, lambda rng: rng.standard_normal((3, 3)) + 3 * np.eye(3)),
    "inv": (lambda x: tga.linalg.inv(x), lambda rng: rng.standard_normal((2, 3, 3)) + 3 * np.eye(3)),
    "solve": (lambda x: tga.linalg.solve(x, x[..., :1] * 2.0 + 1.0), lambda rng: rng.standard_normal((3, 3)) + 3 * np.eye(3)),
    # (symmetric inputs, as PyTorch's own checks: the factorisation reads one triangle, its gradient is symmetric)
    "cholesky": (lambda x: tga.linalg.cholesky(x + x.mT), lambda rng: _spd(rng, 3, (2,))),
    "eigvalsh": (lambda x: tga.linalg.eigvalsh(x + x.mT), lambda rng: _separated(rng, 3)),
    "eigh_vectors": (lambda x: tga.linalg.eigh(x + x.mT).eigenvectors ** 2, lambda rng: _separated(rng, 3)),
    "svdvals": (lambda x: tga.linalg.svdvals(x), lambda rng: rng.uniform(-1, 1, (4, 3)) + np.eye(4, 3) * [4, 12, 20]),
    "svd_u": (lambda x: tga.linalg.svd(x, full_matrices=False).U ** 2,
              lambda rng: rng.uniform(-1, 1, (4, 3)) + np.eye(4, 3) * [4, 12, 20]),
    "qr": (lambda x: tga.linalg.qr(x).Q * 2.0 + tga.linalg.qr(x).R[..., :1, :],
           lambda rng: rng.uniform(-1, 1, (4, 3)) + np.eye(4, 3) * [4, 12, 20]),
    "pinv": (lambda x: tga.linalg.pinv(x), lambda rng: rng.uniform(-1, 1, (3, 4)) + np.eye(3, 4) * np.array([[4], [12], [20]])),
    "matrix_exp": (lambda x: tga.linalg.matrix_exp(x), lambda rng: rng.standard_normal((3, 3))),
    "matrix_norm_nuc": (lambda x: tga.linalg.matrix_norm(x, "nuc"), lambda rng: rng.uniform(-1, 1, (3, 3)) + np.diag([4, 12, 20])),
    "lgamma": (lambda x: tga.lgamma(x), lambda rng: rng.uniform(0.3, 4, (5,))),
    "polygamma": (lambda x: tga.polygamma(2, x), lambda rng: rng.uniform(0.3, 4, (5,))),
    "cdist": (lambda x: tga.cdist(x, x[:2] * 0.5 + 0.25), lambda rng: rng.standard_normal((3, 2))),
    "quantile": (lambda x: tga.quantile(x, 0.3, dim=1), lambda rng: rng.standard_normal((2, 5))),
    "median": (lambda x: x.median(0).values, lambda rng: rng.standard_normal((5, 2))),
    "ldexp": (lambda x: tga.ldexp(x, Tensor(np.array([-2, -1, 0, 3]), device=x.device)), lambda rng: rng.standard_normal(4)),
    "kron": (lambda x: tga.kron(x, x[:1] * 2.0), lambda rng: rng.standard_normal((2, 2))),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(LINALG_FUNCTIONS))
def test_gradients_match_finite_differences(name, device, rng):
    fn, make = LINALG_FUNCTIONS[name]
    x = Tensor(make(rng), device=device, requires_grad=True)
    assert tga.gradcheck(fn, x)


# -- result types, ties and values -----------------------------------------------------
def test_order_statistics_name_their_results_and_break_ties_as_pytorch():
    a = np.array([[3.0, 1, 1, 3, 2], [2, 2, 5, 5, 0], [1, 2, 2, 2, 3]])
    for name, args in (("median", (1,)), ("mode", (1,)), ("nanmedian", (1,))):
        ours, theirs = getattr(tga, name)(_t(a), *args), getattr(torch, name)(torch.tensor(a), *args)
        close(ours.values, theirs.values.detach().numpy())
        np.testing.assert_array_equal(ours.indices.detach().numpy(), theirs.indices.detach().numpy())
        assert ours.indices.dtype == np.int64
    mm = tga.aminmax(_t(a), dim=1)
    close(mm.min, a.min(1))
    close(mm.max, a.max(1))


@pytest.mark.parametrize("seed", range(6))
def test_order_statistics_of_ties_and_nans_pick_and_route_the_gradient_as_pytorch(seed):
    """Tie-heavy slices with NaNs: kthvalue's index (PyTorch's quickselect's), mode's (its sort's
    runs, a NaN equal to nothing) and the gradient each picked entry takes; median of every entry
    shares its gradient evenly among the entries equal to it (or the NaNs), as PyTorch's."""
    rng = np.random.default_rng(seed)
    for _ in range(25):
        shape = tuple(int(n) for n in rng.integers(1, 9, int(rng.integers(1, 4))))
        x = rng.integers(0, int(rng.integers(1, 4)), shape).astype(np.float64)
        x[rng.random(shape) < 0.2 * (seed % 2)] = np.nan
        d = int(rng.integers(0, len(shape)))
        k = int(rng.integers(1, shape[d] + 1))
        got, want = [], []
        for m, out in ((tga, got), (torch, want)):
            for f, args in ((m.kthvalue, (k, d)), (m.mode, (d,)), (m.median, ())):
                xt = m.tensor(x, requires_grad=True)
                r = f(xt, *args)
                values = r if args == () else r.values
                (g,) = m.autograd.grad(values, xt, m.ones_like(values))
                out += [values.detach().numpy(), g.detach().numpy()] + (
                    [] if args == () else [r.indices.detach().numpy()]
                )
        for o, w in zip(got, want):
            np.testing.assert_array_equal(o, w, err_msg=f"{shape} dim {d} k {k}: {x.tolist()}")


def test_median_of_all_entries_is_the_lower_median_and_nan_wins():
    close(tga.median(_t([4.0, 1, 3, 2])), 2.0)
    assert math.isnan(tga.median(_t([1.0, math.nan, 2.0])).item())
    close(tga.nanmedian(_t([1.0, math.nan, 2.0, 5.0])), 2.0)


def test_unique_variants_as_pytorch():
    a = np.array([[3, 1, 1], [2, 3, 3], [3, 1, 1]])
    for kw in ({}, {"return_inverse": True}, {"return_counts": True, "dim": 0}, {"return_inverse": True, "dim": 1}):
        ours, theirs = tga.unique(Tensor(a), **kw), torch.unique(torch.tensor(a), **kw)
        for o, t in zip(
            ours if isinstance(ours, tuple) else (ours,), theirs if isinstance(theirs, tuple) else (theirs,)
        ):
            np.testing.assert_array_equal(o.detach().numpy(), t.detach().numpy())
            assert o.dtype.name == str(t.dtype).replace("torch.", "")
    ours = tga.unique_consecutive(Tensor(np.array([1, 1, 2, 2, 3, 1, 1, 2])), return_counts=True)
    theirs = torch.unique_consecutive(torch.tensor([1, 1, 2, 2, 3, 1, 1, 2]), return_counts=True)
    for o, t in zip(ours, theirs):
        np.testing.assert_array_equal(o.detach().numpy(), t.detach().numpy())


@pytest.mark.parametrize("weights", [None, np.float32, np.float64, np.int64])
def test_bincount_dtype_as_pytorch(weights):
    x = np.array([0, 1, 1, 3])
    w = None if weights is None else np.array([1, 2, 3, 4]).astype(weights)
    ours = tga.bincount(Tensor(x), None if w is None else Tensor(w), minlength=6)
    theirs = torch.bincount(torch.tensor(x), None if w is None else torch.tensor(w), minlength=6)
    np.testing.assert_array_equal(ours.detach().numpy(), theirs.detach().numpy())
    assert ours.dtype.name == str(theirs.dtype).replace("torch.", "")


def test_vander_decreasing_is_pytorchs():
    x = np.array([2.0, -1.0, 0.5])
    for n in (None, 1, 4):
        close(tga.vander(_t(x), n), torch.vander(torch.tensor(x), n).detach().numpy())


def test_linalg_results_reconstruct_their_input(rng):
    a = rng.standard_normal((2, 4, 3))
    u, s, vh = tga.linalg.svd(_t(a), full_matrices=False)
    close((u * s.unsqueeze(-2)) @ vh, a, atol=1e-12)
    q, r = tga.linalg.qr(_t(a))
    close(q @ r, a, atol=1e-12)
    close(q.mT @ q, np.broadcast_to(np.eye(3), (2, 3, 3)), atol=1e-12)
    sym = a[0].T @ a[0]
    w, v = tga.linalg.eigh(_t(sym))
    close((v * w.unsqueeze(-2)) @ v.mT, sym, atol=1e-12)
    sign, lad = tga.linalg.slogdet(_t(sym))
    close(sign * lad.exp(), np.linalg.det(sym), rtol=1e-10)
    lst = tga.linalg.lstsq(_t(a[0]), _t(a[1]))
    close(
        lst.solution, torch.linalg.lstsq(torch.tensor(a[0]), torch.tensor(a[1])).solution.detach().numpy(), atol=1e-12
    )
    assert lst.rank.item() == 3


def test_in_place_twins_write_the_out_of_place_result(rng):
    a, b, c = (rng.standard_normal((3, 4)) for _ in range(3))
    cases = {
        "addcmul_": ((_t(b), _t(c)), {"value": 0.5}),
        "addcdiv_": ((_t(b), _t(np.abs(c) + 1)), {"value": 2.0}),
        "logit_": ((), {"eps": 0.1}),
        "erfc_": ((), {}),
        "lgamma_": ((), {}),
        "digamma_": ((), {}),
        "renorm_": ((2, 0, 1.0), {}),
        "float_power_": ((2.0,), {}),
        "index_put_": (((Tensor(np.array([0, 0, 2])),), _t([1.0, 2.0, 3.0]).unsqueeze(-1), True), {}),
    }
    for name, (args, kw) in cases.items():
        x = _t(np.abs(a) + 0.5 if name in ("lgamma_", "digamma_") else a)
        want = getattr(x, name[:-1])(*args, **kw).detach().numpy()
        out = getattr(x, name)(*args, **kw)
        assert out is x, name
        close(x, want, atol=1e-12)
    t = torch.tensor(a)
    t.index_put_((torch.tensor([0, 0, 2]),), torch.tensor([[1.0], [2.0], [3.0]], dtype=torch.float64), True)
    x = _t(a)
    x.index_put_((Tensor(np.array([0, 0, 2])),), _t([[1.0], [2.0], [3.0]]), True)
    close(x, t.detach().numpy())


# -- errors as PyTorch's ---------------------------------------------------------------
def test_singular_and_indefinite_matrices_raise_linalg_error():
    with pytest.raises(tga.linalg.LinAlgError):
        tga.linalg.inv(_t([[1.0, 2.0], [2.0, 4.0]]))
    with pytest.raises(tga.linalg.LinAlgError):
        tga.linalg.cholesky(_t([[1.0, 2.0], [2.0, 1.0]]))
    assert issubclass(tga.linalg.LinAlgError, RuntimeError)  # (as torch.linalg.LinAlgError)
    info = tga.linalg.inv_ex(_t([[1.0, 2.0], [2.0, 4.0]])).info
    assert info.dtype == np.int32 and info.item() > 0


@pytest.mark.parametrize(
    "call",
    [
        lambda lib, x: lib.kthvalue(x, 7, 0),
        lambda lib, x: lib.cross(x[:2], x[:2]),
        lambda lib, x: lib.linalg.det(x),
        lambda lib, x: lib.tensordot(x, x, 3),
        lambda lib, x: lib.fliplr(x.reshape(-1)),
        lambda lib, x: lib.combinations(x, -1),
        lambda lib, x: lib.bincount(x.reshape(-1)),
        lambda lib, x: lib.quantile(x, 1.5),
    ],
)
def test_bad_input_raises_pytorchs_exception_class(call):
    a = np.arange(6.0).reshape(3, 2)
    with pytest.raises(Exception) as theirs:
        call(torch, torch.tensor(a))
    with pytest.raises(type(theirs.value)):
        call(tga, _t(a))


# -- the gamma family against SciPy ----------------------------------------------------
def test_gamma_family_to_float64_precision():
    special = pytest.importorskip("scipy.special")
    x = np.concatenate([np.linspace(-6.9, -0.1, 40) + 0.013, np.linspace(0.01, 30, 80), [1e3, 1e5]])
    close(tga.lgamma(_t(x)), special.gammaln(x), atol=0, rtol=1e-13)
    close(tga.digamma(_t(x)), special.psi(x), atol=1e-13, rtol=1e-13)
    pos = x[x > 0]
    for n in (1, 2, 3):
        close(tga.polygamma(n, _t(pos)), special.polygamma(n, pos), atol=0, rtol=1e-13)
    close(tga.mvlgamma(_t(pos[pos > 1.5]), 3), special.multigammaln(pos[pos > 1.5], 3), rtol=1e-13)


def test_gamma_family_edges_as_pytorch():
    x = np.array([0.0, -0.0, -1.0, -2.0, math.inf, -math.inf, math.nan, 1.0, 2.0])
    with np.errstate(all="ignore"):
        close(tga.lgamma(_t(x)), torch.lgamma(torch.tensor(x)).detach().numpy(), atol=1e-14)
        close(tga.digamma(_t(x)), torch.digamma(torch.tensor(x)).detach().numpy(), atol=1e-14)
