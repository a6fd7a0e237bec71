"""torch.linalg's LU, LDL^T and Householder families and torch's older decomposition names
(``tga.lu``, ``tga.svd``, ``tga.qr``, ``tga.triangular_solve``, ``tga.cholesky_solve``, ...) against
PyTorch: values over shapes, batches and dtypes, named results, errors, and gradients against
PyTorch's and against finite differences (also of the gradient, ``create_graph=True``)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import tinygrad_attn as tga
from tinygrad_attn import Tensor

torch = pytest.importorskip("torch")

DTYPES = [np.float64, np.float32]
TOL = {np.float64: 1e-10, np.float32: 1e-4}
SHAPES = [(3, 3), (4, 2), (2, 5), (2, 3, 3), (2, 1, 4, 3), (1, 1), (0, 3, 3), (3, 0), (0, 2)]


def _np(x):
    return x.detach().numpy() if isinstance(x, torch.Tensor) else x.detach().numpy()


def _close(ours, theirs, tol):
    assert tuple(ours.shape) == tuple(theirs.shape), (ours.shape, theirs.shape)
    assert str(ours.dtype).removeprefix("torch.") == str(theirs.dtype).removeprefix("torch."), (
        ours.dtype,
        theirs.dtype,
    )
    np.testing.assert_allclose(_np(ours).astype(np.float64), _np(theirs).astype(np.float64), rtol=tol, atol=tol)


def _matrix(rng, shape, dtype=np.float64, kind="any"):
    a = rng.standard_normal(shape)
    if kind == "invertible" and shape[-1]:
        a = a + 3.0 * np.eye(shape[-1])
    elif kind == "spd":
        a = a @ np.swapaxes(a, -1, -2) + shape[-1] * np.eye(shape[-1])
    return a.astype(dtype)


def _both(a, requires_grad=False):
    return Tensor(a, requires_grad=requires_grad), torch.tensor(a, requires_grad=requires_grad)


# -- LU ----------------------------------------------------------------------------------
@pytest.mark.parametrize(("shape", "dtype"), itertools.product(SHAPES, DTYPES))
def test_lu_factor_ex_lu_and_lu_unpack_match_pytorch(rng, shape, dtype):
    a = _matrix(rng, shape, dtype)
    x, t = _both(a)
    ours, theirs = tga.linalg.lu_factor_ex(x), torch.linalg.lu_factor_ex(t)
    assert ours._fields == ("LU", "pivots", "info")
    for o, w in zip(ours, theirs, strict=True):
        _close(o, w, TOL[dtype])
    plu, tplu = tga.linalg.lu(x), torch.linalg.lu(t)
    assert plu._fields == ("P", "L", "U")
    for o, w in zip(plu, tplu, strict=True):
        _close(o, w, TOL[dtype])
    for o, w in zip(tga.lu_unpack(*ours[:2]), torch.lu_unpack(*theirs[:2]), strict=True):
        _close(o, w, TOL[dtype])
    lu_, piv = tga.lu(x)  # torch.lu: (LU, pivots), no error for a singular matrix
    _close(lu_, theirs.LU, TOL[dtype])
    _close(piv, theirs.pivots, 0)


def test_lu_factor_of_singular_matrices_reports_info_and_raises_where_pytorch_does():
    a = np.array([[[1.0, 2.0], [2.0, 4.0]], [[2.0, 0.0], [0.0, 3.0]], [[0.0, 0.0], [0.0, 0.0]]])
    x, t = _both(a)
    ours, theirs = tga.linalg.lu_factor_ex(x), torch.linalg.lu_factor_ex(t)
    for o, w in zip(ours, theirs, strict=True):
        _close(o, w, 0)
    with pytest.raises(RuntimeError, match="lu_factor.*is zero"):
        tga.linalg.lu_factor(x)
    with pytest.raises(tga.linalg.LinAlgError, match="lu_factor_ex"):
        tga.linalg.lu_factor_ex(x, check_errors=True)
    assert tga.lu(x, get_infos=True)[2].tolist() == theirs.info.tolist()
    with pytest.raises(RuntimeError, match="without pivoting"):
        tga.linalg.lu_factor(x, pivot=False)


def test_lu_pivots_follow_lapack_on_ties_and_zero_columns():
    # (exact ties in magnitude: the first row wins; a zero column keeps its row)
    for a in (
        [[1.0, 2.0], [-1.0, 3.0]],
        [[0.0, 1.0, 2.0], [0.0, 3.0, 1.0], [0.0, -3.0, 5.0]],
        [[2.0, 1.0], [2.0, 1.0]],
    ):
        x, t = _both(np.array(a))
        for o, w in zip(tga.linalg.lu_factor_ex(x), torch.linalg.lu_factor_ex(t), strict=True):
            _close(o, w, 1e-15)


@pytest.mark.parametrize(("left", "adjoint", "dtype"), itertools.product([True, False], [True, False], DTYPES))
def test_lu_solve_matches_pytorch_with_broadcast_batches(rng, left, adjoint, dtype):
    a = _matrix(rng, (2, 1, 3, 3), dtype, "invertible")
    b = _matrix(rng, (3, 3, 2) if left else (3, 2, 3), dtype)
    (x, t), (bx, bt) = _both(a), _both(b)
    ours = tga.linalg.lu_solve(*tga.linalg.lu_factor(x), bx, left=left, adjoint=adjoint)
    theirs = torch.linalg.lu_solve(*torch.linalg.lu_factor(t), bt, left=left, adjoint=adjoint)
    _close(ours, theirs, TOL[dtype] * 10)
    if left and not adjoint:
        _close(tga.lu_solve(bx, *tga.lu(x)), torch.lu_solve(bt, *torch.lu(t)), TOL[dtype] * 10)
        _close(bx.lu_solve(*x.lu()), bt.lu_solve(*t.lu()), TOL[dtype] * 10)


def test_lu_solve_errors_name_the_function():
    lu_, piv = tga.linalg.lu_factor(Tensor(np.eye(3)))
    with pytest.raises(RuntimeError, match="lu_solve.*Incompatible shapes"):
        tga.linalg.lu_solve(lu_, piv, Tensor(np.ones((2, 1))))
    with pytest.raises(RuntimeError, match="int32"):
        tga.linalg.lu_solve(lu_, piv.long(), Tensor(np.ones((3, 1))))
    with pytest.raises(RuntimeError, match="square"):
        tga.linalg.lu_solve(Tensor(np.ones((2, 3))), piv, Tensor(np.ones((2, 1))))


def _grads_match(fn_ours, fn_theirs, arrays, tol=1e-9):
    """Our gradient of ``fn`` against PyTorch's with a fixed cotangent, then ours against finite
    differences, of first order and (recorded with ``create_graph=True``) of second."""
    ours = [Tensor(a, requires_grad=True) for a in arrays]
    theirs = [torch.tensor(a, requires_grad=True) for a in arrays]
    out, tout = fn_ours(*ours), fn_theirs(*theirs)
    _close(out, tout, tol)
    v = np.random.default_rng(7).standard_normal(tuple(out.shape))
    got = tga.autograd.grad(out, ours, Tensor(v), allow_unused=True)
    want = torch.autograd.grad(tout, theirs, torch.tensor(v), allow_unused=True, materialize_grads=True)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g.detach().numpy(), w.detach().numpy(), rtol=1e-7, atol=1e-8)
    assert tga.gradcheck(fn_ours, *arrays)
    first = lambda *xs: tga.autograd.grad(fn_ours(*xs).sum(), list(xs), create_graph=True)[0]  # noqa: E731
    assert tga.gradcheck(first, *arrays)


@pytest.mark.parametrize("shape", [(3, 3), (2, 4, 3), (3, 5)])
def test_lu_gradients(rng, shape):
    a = _matrix(rng, shape)
    _grads_match(lambda x: tga.linalg.lu_factor(x).LU, lambda x: torch.linalg.lu_factor(x).LU, [a])
    _grads_match(lambda x: (lambda r: r.L @ r.U + r.P.sum(-1, keepdim=True) + r.L.sum(-1, keepdim=True))(tga.linalg.lu(x)),
                 lambda x: (lambda r: r.L @ r.U + r.P.sum(-1, keepdim=True) + r.L.sum(-1, keepdim=True))(
                     torch.linalg.lu(x)), [a])  # fmt: skip


@pytest.mark.parametrize(("left", "adjoint"), itertools.product([True, False], [True, False]))
def test_lu_solve_gradients_reach_lu_and_b(rng, left, adjoint):
    a = _matrix(rng, (3, 3), kind="invertible")
    lu_, piv = torch.linalg.lu_factor(torch.tensor(a))
    b = _matrix(rng, (3, 2) if left else (2, 3))
    ours_piv = Tensor(piv.detach().numpy())
    _grads_match(lambda m, y: tga.linalg.lu_solve(m, ours_piv, y, left=left, adjoint=adjoint),
                 lambda m, y: torch.linalg.lu_solve(m, piv, y, left=left, adjoint=adjoint), [lu_.detach().numpy(), b])  # fmt: skip


# -- LDL^T -----------------------------------------------------------------------------------
@pytest.mark.parametrize(("n", "dtype"), itertools.product([0, 1, 2, 4, 6], DTYPES))
def test_ldl_factor_follows_bunch_kaufman_as_lapack(rng, n, dtype):
    for trial in range(8):  # (indefinite matrices: 2x2 blocks among the pivots)
        a = rng.standard_normal((2, n, n))
        a = (a + np.swapaxes(a, -1, -2)) * (0.01 if trial % 4 == 0 else 1.0)
        if trial % 2:
            a[..., np.arange(n), np.arange(n)] *= 0.05
        x, t = _both(a.astype(dtype))
        ours, theirs = tga.linalg.ldl_factor_ex(x), torch.linalg.ldl_factor_ex(t)
        assert ours._fields == ("LD", "pivots", "info")
        for o, w in zip(ours, theirs, strict=True):
            _close(o, w, TOL[dtype] * 100)
        for hermitian in (False, True):
            b = rng.standard_normal((2, n, 3)).astype(dtype)
            if not theirs.info.any():
                got = tga.linalg.ldl_solve(*tga.linalg.ldl_factor(x, hermitian=hermitian), Tensor(b))
                want = torch.linalg.ldl_solve(*torch.linalg.ldl_factor(t, hermitian=hermitian), torch.tensor(b))
                _close(got, want, TOL[dtype] * 1000)


def test_ldl_factor_of_a_singular_matrix_raises_and_the_ex_form_reports_it():
    x = Tensor(np.zeros((2, 2)))
    assert tga.linalg.ldl_factor_ex(x).info.item() == torch.linalg.ldl_factor_ex(torch.zeros(2, 2)).info.item() == 1
    with pytest.raises(RuntimeError, match="ldl_factor.*singular"):
        tga.linalg.ldl_factor(x)
    with pytest.raises(RuntimeError, match="square"):
        tga.linalg.ldl_factor(Tensor(np.ones((2, 3))))


# -- Householder --------------------------------------------------------------------------
@pytest.mark.parametrize(("shape", "dtype"), itertools.product([(4, 3), (3, 3), (2, 5, 2), (3, 5), (0, 2)], DTYPES))
def test_geqrf_householder_product_and_ormqr_match_pytorch(rng, shape, dtype):
    a = _matrix(rng, shape, dtype)
    x, t = _both(a)
    ours, theirs = tga.geqrf(x), torch.geqrf(t)
    assert ours._fields == ("a", "tau")
    for o, w in zip(ours, theirs, strict=True):
        _close(o, w, TOL[dtype] * 10)
    _close(x.geqrf()[0], theirs[0], TOL[dtype] * 10)
    m, n = shape[-2:]
    if m >= n:
        _close(tga.linalg.householder_product(*ours), torch.linalg.householder_product(*theirs), TOL[dtype] * 10)
        _close(ours[0].orgqr(ours[1]), theirs[0].orgqr(theirs[1]), TOL[dtype] * 10)
    for left, transpose in itertools.product([True, False], [True, False]):
        c = rng.standard_normal(shape[:-2] + ((m, 2) if left else (2, m))).astype(dtype)
        got = tga.ormqr(*ours, Tensor(c), left, transpose)
        _close(got, torch.ormqr(*theirs, torch.tensor(c), left, transpose), TOL[dtype] * 10)


def test_householder_gradients_and_errors(rng):
    h, tau = torch.geqrf(torch.tensor(_matrix(rng, (4, 3))))
    _grads_match(
        tga.linalg.householder_product, torch.linalg.householder_product, [h.detach().numpy(), tau.detach().numpy()]
    )
    c = _matrix(rng, (4, 2))
    _grads_match(lambda a, t, y: tga.ormqr(a, t, y, True, True), lambda a, t, y: torch.ormqr(a, t, y, True, True),
                 [h.detach().numpy(), tau.detach().numpy(), c])  # fmt: skip
    with pytest.raises(RuntimeError, match="householder_product.*greater than or equal"):
        tga.linalg.householder_product(Tensor(np.ones((2, 3))), Tensor(np.ones(2)))
    with pytest.raises(RuntimeError, match="householder_product.*tau"):
        tga.linalg.householder_product(Tensor(np.ones((3, 2))), Tensor(np.ones(3)))
    with pytest.raises(RuntimeError, match="ormqr"):
        tga.ormqr(Tensor(np.ones((3, 2))), Tensor(np.ones(2)), Tensor(np.ones((4, 2))))


# -- torch's older names --------------------------------------------------------------------
@pytest.mark.parametrize(("shape", "dtype"), itertools.product([(4, 3), (3, 4), (2, 3, 3), (0, 3)], DTYPES))
def test_torch_svd_gives_v_not_vh(rng, shape, dtype):
    a = _matrix(rng, shape, dtype)
    x, t = _both(a)
    for some in (True, False):
        ours, theirs = tga.svd(x, some), torch.svd(t, some)
        assert ours._fields == ("U", "S", "V")
        for o, w in zip(ours, theirs, strict=True):
            _close(o.abs(), w.abs(), TOL[dtype] * 10)  # (singular vectors' signs are a convention)
        if x.numel():
            rebuilt = (ours.U[..., : ours.S.shape[-1]] * ours.S.unsqueeze(-2)) @ ours.V[..., : ours.S.shape[-1]].mT
            _close(rebuilt, t, TOL[dtype] * 10)
    nouv, tnouv = x.svd(compute_uv=False), t.svd(compute_uv=False)
    for o, w in zip(nouv, tnouv, strict=True):
        _close(o, w, TOL[dtype] * 10)


@pytest.mark.parametrize(("shape", "dtype"), itertools.product([(4, 3), (3, 4), (2, 3, 3)], DTYPES))
def test_torch_qr_and_its_gradient_for_wide_matrices(rng, shape, dtype):
    a = _matrix(rng, shape, dtype)
    x, t = _both(a)
    for some in (True, False):
        for o, w in zip(tga.qr(x, some), torch.qr(t, some), strict=True):
            _close(o, w, TOL[dtype] * 10)
    if dtype == np.float64:
        _grads_match(lambda y: (lambda r: r.Q.sum(-1, keepdim=True) + r.R.sum(-2, keepdim=True).sum(-1, keepdim=True))(
            tga.qr(y)), lambda y: (lambda r: r.Q.sum(-1, keepdim=True) + r.R.sum(-2, keepdim=True).sum(
            -1, keepdim=True))(torch.qr(y)), [a])  # fmt: skip


@pytest.mark.parametrize(("upper", "transpose", "unit"), itertools.product([True, False], repeat=3))
def test_triangular_solve(rng, upper, transpose, unit):
    a, b = _matrix(rng, (2, 3, 3), kind="invertible"), _matrix(rng, (1, 3, 2))
    ours = tga.triangular_solve(Tensor(b), Tensor(a), upper, transpose, unit)
    theirs = torch.triangular_solve(torch.tensor(b), torch.tensor(a), upper, transpose, unit)
    assert ours._fields == ("solution", "cloned_coefficient")
    for o, w in zip(ours, theirs, strict=True):
        _close(o, w, 1e-10)
    _grads_match(lambda y, m: tga.triangular_solve(y, m, upper, transpose, unit).solution,
                 lambda y, m: torch.triangular_solve(y, m, upper, transpose, unit).solution, [b, a])  # fmt: skip


@pytest.mark.parametrize(("upper", "dtype"), itertools.product([True, False], DTYPES))
def test_cholesky_solve_and_inverse(rng, upper, dtype):
    a = _matrix(rng, (2, 3, 3), np.float64, "spd")
    f = np.linalg.cholesky(a)
    f = (np.swapaxes(f, -1, -2) if upper else f).astype(dtype)
    b = _matrix(rng, (3, 2), dtype)
    (fx, ft), (bx, bt) = _both(f), _both(b)
    _close(tga.cholesky_solve(bx, fx, upper), torch.cholesky_solve(bt, ft, upper), TOL[dtype] * 10)
    _close(bx.cholesky_solve(fx, upper), bt.cholesky_solve(ft, upper), TOL[dtype] * 10)
    _close(tga.cholesky_inverse(fx, upper), torch.cholesky_inverse(ft, upper), TOL[dtype] * 10)
    _close(fx.cholesky_inverse(upper), ft.cholesky_inverse(upper), TOL[dtype] * 10)
    if dtype == np.float64:
        # (the gradient reaches the whole factor, as PyTorch's, while the values read one triangle: the
        # finite differences agree with it for a factor taken as its triangle)
        def tri(m):
            return m.triu() if upper else m.tril()

        _grads_match(lambda y, m: tga.cholesky_solve(y, tri(m), upper),
                     lambda y, m: torch.cholesky_solve(y, tri(m), upper), [b, f])  # fmt: skip
        _grads_match(
            lambda m: tga.cholesky_inverse(tri(m), upper), lambda m: torch.cholesky_inverse(tri(m), upper), [f]
        )
        fx.requires_grad_()
        ft.requires_grad_()
        tga.cholesky_solve(bx, fx, upper).sum().backward()
        torch.cholesky_solve(bt, ft, upper).sum().backward()
        np.testing.assert_allclose(fx.grad.detach().numpy(), ft.grad.detach().numpy(), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("dtype", DTYPES)
def test_tensorinv_and_tensorsolve(rng, dtype):
    a = _matrix(rng, (4, 6, 8, 3), dtype)
    x, t = _both(a)
    _close(tga.linalg.tensorinv(x, ind=2), torch.linalg.tensorinv(t, ind=2), TOL[dtype] * 100)
    a = _matrix(rng, (2, 3, 6), dtype)
    b = _matrix(rng, (2, 3), dtype)
    _close(tga.linalg.tensorsolve(Tensor(a), Tensor(b)), torch.linalg.tensorsolve(torch.tensor(a), torch.tensor(b)),
           TOL[dtype] * 100)  # fmt: skip
    a2 = _matrix(rng, (6, 2, 3), dtype)
    got = tga.linalg.tensorsolve(Tensor(a2), Tensor(b), dims=(0,))
    _close(got, torch.linalg.tensorsolve(torch.tensor(a2), torch.tensor(b), dims=(0,)), TOL[dtype] * 100)
    with pytest.raises(RuntimeError, match="prod"):
        tga.linalg.tensorinv(Tensor(np.ones((2, 3))), ind=1)
    with pytest.raises(RuntimeError, match="prod"):
        tga.linalg.tensorsolve(Tensor(np.ones((2, 3))), Tensor(np.ones(2)))
    if dtype == np.float64:
        _grads_match(lambda m: tga.linalg.tensorinv(m.reshape(2, 3, 6), 2),
                     lambda m: torch.linalg.tensorinv(m.reshape(2, 3, 6), 2), [_matrix(rng, (6, 6), kind="invertible")])  # fmt: skip


@pytest.mark.parametrize("center", [True, False])
def test_lowrank_factors_have_pytorchs_shapes_and_rebuild_a_low_rank_matrix(rng, center):
    a = rng.standard_normal((2, 9, 3)) @ rng.standard_normal((2, 3, 7))
    x, t = _both(a)
    for q in (3, 5):
        ours, theirs = tga.svd_lowrank(x, q=q), torch.svd_lowrank(t, q=q)
        for o, w in zip(ours, theirs, strict=True):
            assert tuple(o.shape) == tuple(w.shape)
        assert type(ours) is tuple
        U, S, V = ours  # noqa: N806
        rebuilt = (U * S.unsqueeze(-2)) @ V.mT
        np.testing.assert_allclose(rebuilt.detach().numpy(), a, atol=1e-9)
        np.testing.assert_allclose(
            S.detach().numpy()[..., :3], theirs[1].detach().numpy()[..., :3], rtol=1e-9
        )  # (rank 3: exact)
    U, S, V = tga.pca_lowrank(x.mT, center=center)  # noqa: N806
    tU, tS, tV = torch.pca_lowrank(t.mT, center=center)  # noqa: N806
    assert (U.shape, S.shape, V.shape) == (tuple(tU.shape), tuple(tS.shape), tuple(tV.shape))
    np.testing.assert_allclose(S.detach().numpy()[..., :3], tS.detach().numpy()[..., :3], rtol=1e-8)
    with pytest.raises(ValueError, match="q"):
        tga.pca_lowrank(x, q=10)


def test_ger_is_outer(rng):
    a, b = rng.standard_normal(3), rng.standard_normal(4)
    _grads_match(tga.ger, torch.ger, [a, b])
    _close(Tensor(a).ger(Tensor(b)), torch.tensor(a).ger(torch.tensor(b)), 1e-15)


def test_every_new_name_has_its_tensor_method():
    for name in ("lu", "lu_solve", "svd", "qr", "triangular_solve", "cholesky_solve", "cholesky_inverse", "geqrf",
                 "orgqr", "ormqr", "ger"):  # fmt: skip
        assert hasattr(Tensor, name) and hasattr(torch.Tensor, name), name
    for name in ("lu", "lu_factor", "lu_factor_ex", "lu_solve", "ldl_factor", "ldl_factor_ex", "ldl_solve",
                 "householder_product", "tensorinv", "tensorsolve", "solve_ex", "inv_ex", "cholesky_ex"):  # fmt: skip
        assert name in tga.linalg.__all__ and hasattr(torch.linalg, name), name


# -- the _ex forms of solve, inv and cholesky: info instead of an error ---------------------
def test_ex_forms_report_singular_and_indefinite_matrices_as_pytorch():
    singular = np.array([[[1.0, 2.0], [2.0, 4.0]], [[1.0, 0.0], [0.0, 1.0]], [[0.0, 0.0], [0.0, 0.0]]])
    x, t = _both(singular)
    b = np.array([[1.0, 2.0], [0.5, -1.0], [3.0, 1.0]])
    for left, rhs in ((True, b), (True, b[..., None]), (False, b[:, None, :])):
        ours = tga.linalg.solve_ex(x, Tensor(rhs), left=left)
        theirs = torch.linalg.solve_ex(t, torch.tensor(rhs), left=left)
        assert ours._fields == ("result", "info")
        np.testing.assert_array_equal(
            ours.result.detach().numpy(), theirs.result.detach().numpy()
        )  # (inf and NaN where PyTorch's)
        assert ours.info.tolist() == theirs.info.tolist()
    ours, theirs = tga.linalg.inv_ex(x), torch.linalg.inv_ex(t)
    np.testing.assert_array_equal(ours.inverse.detach().numpy(), theirs.inverse.detach().numpy())
    assert ours.info.tolist() == theirs.info.tolist()
    for fn in (lambda: tga.linalg.solve_ex(x, Tensor(b), check_errors=True),
               lambda: tga.linalg.inv_ex(x, check_errors=True)):  # fmt: skip
        with pytest.raises(tga.linalg.LinAlgError, match="singular"):
            fn()
    indefinite = np.array(
        [[[4.0, 2.0, 1.0], [2.0, -3.0, 0.0], [1.0, 0.0, 2.0]], [[4.0, 0, 0], [0, 1.0, 0], [0, 0, 1.0]]]
    )
    x, t = _both(indefinite)
    for upper in (False, True):
        ours, theirs = tga.linalg.cholesky_ex(x, upper=upper), torch.linalg.cholesky_ex(t, upper=upper)
        np.testing.assert_array_equal(ours.L.detach().numpy(), theirs.L.detach().numpy())  # (as LAPACK leaves it)
        assert ours.info.tolist() == theirs.info.tolist() == [2, 0]
    with pytest.raises(tga.linalg.LinAlgError, match="leading minor of order 2"):
        tga.linalg.cholesky_ex(x, check_errors=True)
    with pytest.raises(RuntimeError, match=r"\(Batch element 0\).*order 2"):
        tga.linalg.cholesky(x)


@pytest.mark.parametrize("call", ["inv", "cholesky", "solve"])
def test_linalg_error_is_named_as_pytorchs(call: str) -> None:
    """A program printing ``type(e).__name__`` of a singular matrix's error prints PyTorch's class name."""

    def name_of(lib):
        a = lib.tensor([[1.0, 2.0], [2.0, 4.0]])
        try:
            getattr(lib.linalg, call)(*((a, lib.ones(2)) if call == "solve" else (a,)))
        except lib.linalg.LinAlgError as e:
            return type(e).__name__, isinstance(e, RuntimeError)
        return None

    assert name_of(tga) == name_of(torch) is not None
