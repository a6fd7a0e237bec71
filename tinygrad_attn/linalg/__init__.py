"""``tga.linalg``: PyTorch's ``torch.linalg`` over batches of matrices (``(..., m, n)``).

The inverse, solve, determinant, Cholesky factor and symmetric eigen-decomposition are
primitives (``ops/decompositions.py``); the rest are composites of them and of ``matmul``.
The SVD, QR and pseudo-inverse take their values from the array namespace's ``linalg`` and
their gradients from a composite with the same values (``_exact_with_gradient_of``): the
singular values from the eigenvalues of the Gram matrix, ``R`` from the Cholesky factor of
``A^T A`` with LAPACK's signs, the pseudo-inverse from ``solve(A^T A, A^T)``. So gradients
of every order hold for matrices of full rank (where PyTorch's are defined too).
Also ``tga.det inverse logdet slogdet matrix_power matrix_exp`` and their Tensor methods.

>>> import tinygrad_attn as tga
>>> tga.linalg.det(tga.tensor([[2.0, 0.0], [0.0, 3.0]]))  # doctest: +SKIP
Tensor(6.)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

from .. import ops
from ..engine.declare import public
from ..engine.switches import no_grad
from ..functional.checks import tensor_arg as _tensor
from ..ops.saved import saved_for_backward
from ..tensors._tensor import Tensor, stack, where
from ..tensors.dtypes import UnsupportedDtypeError
from ..tensors.elementwise.tensor_torch import matmul  # (torch.linalg.matmul is torch.matmul)
from ..tensors.reduce import tensor_reduce
from ..tensors.shape import dims

__all__ = [
    "norm", "vector_norm", "matrix_norm", "det", "slogdet", "inv", "inv_ex", "solve", "solve_ex", "lstsq", "cholesky",
    "cholesky_ex", "solve_triangular", "qr", "eigh", "eigvalsh", "svd", "svdvals", "pinv", "matrix_rank", "matrix_power", "matrix_exp",
    "cross", "multi_dot", "vecdot", "diagonal", "cond", "vander", "matmul", "LinAlgError",
]  # fmt: skip


class LinAlgError(RuntimeError):
    """A matrix the decomposition cannot take (singular, not positive-definite), as ``torch.linalg.LinAlgError``."""


class Slogdet(NamedTuple):
    sign: Tensor
    logabsdet: Tensor


class Eigh(NamedTuple):
    eigenvalues: Tensor
    eigenvectors: Tensor


class SVD(NamedTuple):
    U: Tensor
    S: Tensor
    Vh: Tensor


class QR(NamedTuple):
    Q: Tensor
    R: Tensor


class Lstsq(NamedTuple):
    solution: Tensor
    residuals: Tensor
    rank: Tensor
    singular_values: Tensor


class WithInfo(NamedTuple):
    result: Tensor
    info: Tensor


class InvEx(NamedTuple):
    inverse: Tensor
    info: Tensor


class CholeskyEx(NamedTuple):
    L: Tensor
    info: Tensor


def _float(x: Any, op: str) -> Tensor:
    x = _tensor(x, op)
    if x.dtype.kind != "f":
        raise UnsupportedDtypeError(f"linalg.{op}: Expected a floating point tensor as input. Got {x.dtype}")
    return x


def _matrices(x: Any, op: str, square: bool = False) -> Tensor:
    x = _float(x, op)
    if x.ndim < 2:
        raise RuntimeError(f"linalg.{op}: The input tensor A must have at least 2 dimensions.")
    if square and x.shape[-1] != x.shape[-2]:
        raise RuntimeError(f"linalg.{op}: A must be batches of square matrices, but they are {x.shape[-2]} by "
                           f"{x.shape[-1]} matrices")  # fmt: skip
    return x


def _host(x: Tensor) -> np.ndarray:
    return np.asarray(x._dev.to_host(x._data))


def _exact_with_gradient_of(exact: Tensor, composite: Tensor) -> Tensor:
    """``exact``'s values with ``composite``'s gradient (of every order): the two agree in value
    up to rounding, and ``composite`` is written in differentiable ops."""
    if not composite.requires_grad:
        return exact
    delta = composite - composite.detach()  # (0, with composite's gradient)
    # where the composite is not finite (a zero or repeated singular value), the exact value stands
    # and that entry passes no gradient: no NaN leaks into the value
    return exact + where(composite.detach().isfinite(), delta, 0.0)


def _wrap(x: Tensor, arr: Any) -> Tensor:
    return Tensor._wrap(arr, x._dev)


def _zeros_info(x: Tensor, batch: tuple) -> Tensor:
    return Tensor(np.zeros(batch, np.int32), device=x._dev)


def _inverted(x: Tensor, op: str, fn: Any) -> Tensor:
    """``fn()``, the array namespace's refusal of a singular matrix raised as :class:`LinAlgError`."""
    try:
        return fn()
    except Exception as err:  # (NumPy's, CuPy's and array_api_strict's LinAlgError have no common base)
        if "LinAlgError" not in type(err).__name__:
            raise
        raise LinAlgError(
            f"linalg.{op}: the input matrix (of shape {x.shape}) is singular: it has no inverse"
        ) from None


# -- determinants and inverses ---------------------------------------------------------
@public(method=True)
def det(A: Tensor) -> Tensor:  # noqa: N803 - PyTorch's names
    """The determinant of each square matrix."""
    return ops.Det.apply(_matrices(A, "det", square=True))


@public(method=True)
def slogdet(A: Tensor) -> Slogdet:  # noqa: N803
    """``(sign, log|det|)`` of each square matrix (``sign`` 0 and ``-inf`` for a singular one)."""
    x = _matrices(A, "slogdet", square=True)
    with no_grad():
        sign = _wrap(x, x._dev.xp.linalg.slogdet(x._data)[0])
    return Slogdet(sign, ops.LogAbsDet.apply(x))


@public(method=True)
def logdet(input: Tensor) -> Tensor:  # noqa: A002
    """``log(det(A))``: NaN where the determinant is negative, ``-inf`` where it is 0."""
    sign, lad = slogdet(input)
    return where(sign < 0, float("nan"), lad)


def inv(A: Tensor) -> Tensor:  # noqa: N803
    """The inverse of each square matrix (``LinAlgError`` for a singular one)."""
    x = _matrices(A, "inv", square=True)
    return _inverted(x, "inv", lambda: ops.Inv.apply(x))


def inv_ex(A: Tensor, *, check_errors: bool = False) -> InvEx:  # noqa: N803
    """``(inverse, info)``: :func:`inv` and an int32 0 per matrix (positive where it is singular)."""
    x = _matrices(A, "inv_ex", square=True)
    try:
        return InvEx(inv(x), _zeros_info(x, x.shape[:-2]))
    except LinAlgError:
        if check_errors:
            raise
    # (a singular matrix in the batch: info n for it, as LAPACK's; the inverses are NaN, as no value is right)
    with no_grad():
        bad = _host(ops.LogAbsDet.apply(x.detach())) == -np.inf
    nan = Tensor(np.full(x.shape, np.nan, x.dtype), device=x._dev)
    return InvEx(nan, Tensor(np.asarray(bad * x.shape[-1], dtype=np.int32), device=x._dev))


def solve(A: Tensor, B: Tensor, *, left: bool = True) -> Tensor:  # noqa: N803
    """``X`` with ``A X = B`` (``left=False``: ``X A = B``); ``B`` a batch of matrices or of vectors
    (``(..., n)``, where its batch shape is ``A``'s), batches broadcast."""
    a, b = _matrices(A, "solve", square=True), _float(B, "solve")
    if not left:
        return solve(a.mT, b.mT).mT
    vector = b.ndim == 1 or (b.ndim == a.ndim - 1 and b.shape == a.shape[:-1])
    if vector:
        b = b.unsqueeze(-1)
    if b.shape[-2] != a.shape[-1]:
        raise RuntimeError(f"linalg.solve: Incompatible shapes of A and B for the equation AX = B "
                           f"({a.shape[-2]}x{a.shape[-1]} and {b.shape[-2]}x{b.shape[-1]})")  # fmt: skip
    batch = tuple(np.broadcast_shapes(a.shape[:-2], b.shape[:-2]))
    a = a.expand(batch + a.shape[-2:])
    b = b.expand(batch + b.shape[-2:])
    x = _inverted(a, "solve", lambda: ops.Solve.apply(a, b))
    return x.squeeze(-1) if vector else x


def solve_triangular(A: Tensor, B: Tensor, *, upper: bool, left: bool = True,  # noqa: N803
                     unitriangular: bool = False) -> Tensor:  # fmt: skip
    """``X`` with ``A X = B`` (``left=False``: ``X A = B``) for a triangular ``A`` (``upper`` or
    lower; the other triangle is not read; ``unitriangular``: its diagonal is taken as ones), as
    ``torch.linalg.solve_triangular``. ``B`` is a batch of matrices; batches broadcast. The gradient
    reaches only the triangle read."""
    a, b = _matrices(A, "solve_triangular", square=True), _matrices(B, "solve_triangular")
    t = a.triu() if upper else a.tril()
    if unitriangular:
        n = a.shape[-1]
        eye = Tensor(np.eye(n, dtype=a.dtype), device=a.device)
        t = t * (1 - eye) + eye
    return saved_for_backward(solve(t, b, left=left), a, output=True)  # (PyTorch's keeps A and the solution)


def solve_ex(A: Tensor, B: Tensor, *, left: bool = True, check_errors: bool = False) -> WithInfo:  # noqa: N803
    """``(solution, info)``: :func:`solve` and an int32 0 per system."""
    x = solve(A, B, left=left)
    return WithInfo(x, _zeros_info(x, tuple(A.shape[:-2])))


@public(function=False, method=True)
def cholesky(A: Tensor, *, upper: bool = False) -> Tensor:  # noqa: N803
    """The lower Cholesky factor ``L`` (``A = L L^T``) of each symmetric positive-definite matrix
    (its lower triangle is read); ``upper=True``: ``L^T``."""
    x = _matrices(A, "cholesky", square=True)
    try:  # (the factorisation reads the lower triangle; the gradient is symmetric, as PyTorch's)
        L = ops.Cholesky.apply(x)  # noqa: N806
    except np.linalg.LinAlgError:
        raise LinAlgError("linalg.cholesky: The factorization could not be completed because the input is not "
                          "positive-definite.") from None  # fmt: skip
    return L.mT if upper else L


def cholesky_ex(A: Tensor, *, upper: bool = False, check_errors: bool = False) -> CholeskyEx:  # noqa: N803
    """``(L, info)``: :func:`cholesky` and an int32 0 per matrix."""
    L = cholesky(A, upper=upper)  # noqa: N806
    return CholeskyEx(L, _zeros_info(L, tuple(A.shape[:-2])))


# -- eigenvalues and singular values ---------------------------------------------------
def eigh(A: Tensor, UPLO: str = "L") -> Eigh:  # noqa: N803
    """The eigenvalues (ascending) and eigenvectors (columns) of each symmetric matrix, read from its
    lower (``UPLO='L'``) or upper triangle."""
    x = _matrices(A, "eigh", square=True)
    if UPLO not in ("L", "U"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    return Eigh(ops.EighValues.apply(x, args=UPLO), ops.EighVectors.apply(x, args=UPLO))


def eigvalsh(A: Tensor, UPLO: str = "L") -> Tensor:  # noqa: N803
    """The eigenvalues (ascending) of each symmetric matrix."""
    x = _matrices(A, "eigvalsh", square=True)
    return saved_for_backward(ops.EighValues.apply(x, args=UPLO), output=True)


def _gram_singular_values(x: Tensor) -> Tensor:
    """The singular values (descending) as square roots of the Gram matrix's eigenvalues."""
    gram = x.mT @ x if x.shape[-2] >= x.shape[-1] else x @ x.mT
    w = ops.EighValues.apply(gram, args="L").flip(-1)
    return w.clamp(0, None).sqrt()


def svdvals(A: Tensor) -> Tensor:  # noqa: N803
    """The singular values of each matrix, descending."""
    x = _matrices(A, "svdvals")
    raw = x._dev.xp
    values = raw.linalg.svdvals if hasattr(raw.linalg, "svdvals") else lambda a: raw.linalg.svd(a, compute_uv=False)
    exact = _wrap(x, values(x._data)) if x.numel() else (
        Tensor.zeros(x.shape[:-2] + (min(x.shape[-2:]),), dtype=x.dtype, device=x._dev))  # fmt: skip
    # (the gradient's composite reads a copy of A: PyTorch's keeps the decomposition, not A, so
    # changing A in place before the backward is no error there either)
    out = _exact_with_gradient_of(exact, _gram_singular_values(x.clone()) if x.requires_grad else exact)
    return saved_for_backward(out, output=True)


def svd(A: Tensor, full_matrices: bool = True, *, driver: str | None = None) -> SVD:  # noqa: N803
    """``(U, S, Vh)`` with ``A = U diag(S) Vh``, ``S`` descending. Gradients: of ``S`` always, of ``U`` and
    ``Vh`` for ``full_matrices=False`` (or square) matrices of distinct nonzero singular values."""
    x = _matrices(A, "svd")
    u, s, vh = x._dev.xp.linalg.svd(x._data, full_matrices=full_matrices)
    U, S, Vh = _wrap(x, u), _wrap(x, s), _wrap(x, vh)  # noqa: N806
    if not x.requires_grad:
        return SVD(U, S, Vh)
    m, n = x.shape[-2:]
    k = min(m, n)
    s_comp = _gram_singular_values(x)
    S = _exact_with_gradient_of(S, s_comp)  # noqa: N806
    if full_matrices and m != n:
        return SVD(U, S, Vh)
    # the composite: V from the Gram matrix's eigenvectors (signs matched to the exact ones), U = A V / S
    tall = m >= n
    gram = x.mT @ x if tall else x @ x.mT
    vecs = ops.EighVectors.apply(gram, args="L").flip(-1)  # (..., k, k), descending order
    ref = Vh.mT[..., :k] if tall else U[..., :k]
    with no_grad():
        signs = ((vecs * ref).sum(-2, keepdim=True) < 0).astype(x.dtype) * -2.0 + 1.0
    vecs = vecs * signs
    other = (x @ vecs if tall else x.mT @ vecs) / s_comp.unsqueeze(-2)
    if tall:
        U = _exact_with_gradient_of(U, other)  # noqa: N806
        Vh = _exact_with_gradient_of(Vh, vecs.mT)  # noqa: N806
    else:
        U = _exact_with_gradient_of(U, vecs)  # noqa: N806
        Vh = _exact_with_gradient_of(Vh, other.mT)  # noqa: N806
    return SVD(U, S, Vh)


def qr(A: Tensor, mode: str = "reduced") -> QR:  # noqa: N803
    """``(Q, R)`` with ``A = Q R``, ``Q``'s columns orthonormal, ``R`` upper triangular (``mode``:
    ``'reduced'``, ``'complete'`` or ``'r'``, whose ``Q`` is empty). Gradients for ``m >= n`` matrices
    of full rank."""
    x = _matrices(A, "qr")
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of 'reduced' (default), 'r', or 'complete'")  # fmt: skip
    raw = x._dev.xp
    q, r = raw.linalg.qr(x._data, mode="complete" if mode == "complete" else "reduced")
    Q, R = _wrap(x, q), _wrap(x, r)  # noqa: N806
    m, n = x.shape[-2:]
    if x.requires_grad and m >= n:
        # R = D chol(A^T A)^T with D LAPACK's signs of R's diagonal; Q = A R^-1
        with no_grad():
            d = (R.diagonal(0, -2, -1)[..., :n] < 0).astype(x.dtype) * -2.0 + 1.0
        rc = cholesky(x.mT @ x).mT * d.unsqueeze(-1)
        R_red = _exact_with_gradient_of(R[..., :n, :], rc)  # noqa: N806
        qc = solve(rc.mT, x.mT).mT  # A R^-1
        Q_red = _exact_with_gradient_of(Q[..., :, :n], qc)  # noqa: N806
        if mode == "complete" and m > n:
            from ..tensors._tensor import cat  # noqa: PLC0415

            Q = cat([Q_red, Q[..., :, n:]], -1)  # noqa: N806
            R = cat([R_red, R[..., n:, :]], -2)  # noqa: N806
        else:
            Q, R = Q_red, R_red  # noqa: N806
    if mode == "r":
        Q = Tensor.zeros((0,), dtype=x.dtype, device=x._dev)  # noqa: N806
    return QR(Q, R)


@public(name="pinverse", function=False, method=True)
def pinv(A: Tensor, *, atol: Any = None, rtol: Any = None, hermitian: bool = False) -> Tensor:  # noqa: N803
    """The Moore-Penrose pseudo-inverse (singular values below ``max(atol, rtol * largest)`` dropped;
    ``rtol`` defaults to ``eps * max(m, n)`` without ``atol``). Gradients for matrices of full rank."""
    x = _matrices(A, "pinv")
    m, n = x.shape[-2:]
    if x.numel() == 0:
        return x.mT.clone()  # (empty, in the graph)
    u, s, vh = (np.asarray(v) for v in np.linalg.svd(_host(x), full_matrices=False))
    eps = np.finfo(x.dtype).eps
    at = 0.0 if atol is None else (_host(atol) if isinstance(atol, Tensor) else atol)
    rt = (eps * max(m, n) if atol is None or atol == 0 else 0.0) if rtol is None else (
        _host(rtol) if isinstance(rtol, Tensor) else rtol)  # fmt: skip
    tol = np.maximum(np.asarray(at)[..., None], np.asarray(rt)[..., None] * s[..., :1])
    keep = s > tol
    sinv = np.where(keep, 1.0 / np.where(keep, s, 1.0), 0.0)
    exact = Tensor(((vh.swapaxes(-1, -2) * sinv[..., None, :]) @ u.swapaxes(-1, -2)).astype(x.dtype), device=x._dev)
    if not x.requires_grad:
        return exact
    comp = solve(x.mT @ x, x.mT) if m >= n else solve(x @ x.mT, x).mT
    return saved_for_backward(_exact_with_gradient_of(exact, comp), output=True)


def matrix_rank(A: Tensor, *, atol: Any = None, rtol: Any = None, hermitian: bool = False, tol: Any = None) -> Tensor:  # noqa: N803
    """The number of singular values above ``max(atol, rtol * largest)`` (int64, no gradient)."""
    x = _matrices(A, "matrix_rank")
    m, n = x.shape[-2:]
    if tol is not None:
        atol, rtol = tol, 0.0
    s = np.linalg.svd(_host(x), compute_uv=False) if x.numel() else np.zeros(x.shape[:-2] + (0,))
    eps = np.finfo(x.dtype).eps
    at = 0.0 if atol is None else float(atol)
    rt = (eps * max(m, n) if not at else 0.0) if rtol is None else float(rtol)
    big = s[..., :1] if s.shape[-1] else np.zeros(s.shape[:-1] + (1,))
    return Tensor(np.asarray((s > np.maximum(at, rt * big)).sum(-1), np.int64), device=x._dev)


def lstsq(A: Tensor, B: Tensor, rcond: float | None = None, *, driver: str | None = None) -> Lstsq:  # noqa: N803
    """The least-squares solution ``X`` minimising ``|A X - B|`` (``pinv(A) @ B``), and PyTorch's
    default driver's other fields (``gelsy``: no residuals or singular values; the rank)."""
    a, b = _matrices(A, "lstsq"), _float(B, "lstsq")
    vector = b.ndim == a.ndim - 1
    bb = b.unsqueeze(-1) if vector else b
    sol = pinv(a, rtol=rcond) @ bb
    sol = saved_for_backward(sol.squeeze(-1) if vector else sol, output=True)
    empty = Tensor.zeros((0,), dtype=a.dtype, device=a._dev)
    return Lstsq(sol, empty, matrix_rank(a, rtol=rcond), empty)


# -- norms -----------------------------------------------------------------------------
def vector_norm(x: Tensor, ord: float = 2, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Tensor:  # noqa: A002
    """:func:`_vector_norm`, keeping its input and result for the backward, as PyTorch's."""
    out = _vector_norm(x, ord, dim, keepdim, dtype=dtype)
    return saved_for_backward(out, x, output=True)


def _vector_norm(x: Tensor, ord: float = 2, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Tensor:  # noqa: A002
    """The ``ord``-norm of the entries (of all, flattened, or over ``dim``): ``inf`` the largest
    magnitude, ``-inf`` the smallest, 0 the count of non-zeros; its gradient is 0 where the norm is 0."""
    x = _float(x, "vector_norm")
    if dtype is not None:
        x = x.astype(dtype)
    axes = dims.axes(x.shape, dim, "vector_norm")
    if axes is None:
        axes = tuple(range(x.ndim))
    a = x.abs()
    if not axes:  # (a 0-d tensor: its magnitude, or for ord 0 whether it is non-zero)
        return a.sign() if ord == 0 else a
    if ord == math.inf:
        return a.amax(axes, keepdim)
    if ord == -math.inf:
        return a.amin(axes, keepdim)
    if ord == 0:  # (in the graph with gradient 0, as PyTorch's)
        return a.sign().sum(axes, keepdim)
    if ord == 1:
        return a.sum(axes, keepdim)
    s = (a**ord).sum(axes, keepdim)
    if ord < 0:
        return s ** (1.0 / ord)
    zero = s == 0
    return where(zero, 0.0, where(zero, 1.0, s) ** (1.0 / ord))


def matrix_norm(A: Tensor, ord: Any = "fro", dim: tuple[int, int] = (-2, -1), keepdim: bool = False, *,  # noqa: N803, A002
                dtype: Any = None) -> Tensor:  # fmt: skip
    """The ``ord`` norm of each matrix in the plane ``dim``: ``'fro'``, ``'nuc'`` (sum of singular
    values), ``2``/``-2`` (largest/smallest singular value), ``1``/``-1`` (max/min column sum),
    ``inf``/``-inf`` (max/min row sum).

    Each keeps for the backward what PyTorch's steps keep: ``'fro'`` and the sums its input and
    result, ``2``/``-2`` the singular values and the result, ``'nuc'`` neither input nor result."""
    x = _matrices(A, "matrix_norm")
    if dtype is not None:
        x = x.astype(dtype)
    d0, d1 = (dims.one(x.shape, d, "matrix_norm", scalar_ok=False) for d in dim)
    if ord == "fro":
        return vector_norm(x, 2, (d0, d1), keepdim)
    if ord in ("nuc", 2, -2):
        moved = x.movedim((d0, d1), (-2, -1))
        s = svdvals(moved)
        out = s.sum(-1) if ord == "nuc" else s.amax(-1) if ord == 2 else s.amin(-1)
        if keepdim:
            out = out.unsqueeze(-1).unsqueeze(-1).movedim((-2, -1), (d0, d1))
        return out
    if ord in (1, -1, math.inf, -math.inf):
        sum_over, pick_over = (d0, d1) if ord in (1, -1) else (d1, d0)
        sums = x.abs().sum(sum_over, keepdim=True)
        out = sums.amax(pick_over, keepdim=True) if ord > 0 else sums.amin(pick_over, keepdim=True)
        return out if keepdim else out.squeeze((d0, d1) if d0 < d1 else (d1, d0))
    raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")


tensor_reduce.MATRIX_NORM[:] = [matrix_norm]  # (torch.norm's p='nuc')


def norm(A: Tensor, ord: Any = None, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Tensor:  # noqa: N803, A002
    """:func:`vector_norm` for ``dim`` an int (or a 1-D input), :func:`matrix_norm` for two dims (or a
    2-D input); without ``ord`` and ``dim``, the 2-norm of every entry."""
    x = _tensor(A, "norm")
    if ord is None:
        return vector_norm(x, 2, dim, keepdim, dtype=dtype)
    if isinstance(dim, (int, np.integer)) or (dim is None and x.ndim == 1) or (
            isinstance(dim, (tuple, list)) and len(dim) == 1):  # fmt: skip
        return vector_norm(x, ord, dim, keepdim, dtype=dtype)
    if dim is None and x.ndim != 2:
        raise RuntimeError(
            f"linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. Got {x.ndim}D."
        )
    return matrix_norm(x, ord, (-2, -1) if dim is None else tuple(dim), keepdim, dtype=dtype)


def cond(A: Tensor, p: Any = None) -> Tensor:  # noqa: N803
    """The condition number in the ``p`` norm (``None``/2: largest over smallest singular value)."""
    x = _matrices(A, "cond")
    if p in (None, 2, -2):
        s = svdvals(x)
        big, small = s[..., 0], s[..., -1]
        return big / small if p != -2 else small / big
    return matrix_norm(x, p) * matrix_norm(inv(x), p)


# -- products and helpers --------------------------------------------------------------
@public(method=True)
def matrix_power(A: Tensor, n: int) -> Tensor:  # noqa: N803
    """``A`` multiplied by itself ``n`` times (``n = 0``: the identity; ``n < 0``: powers of the inverse)."""
    x = _matrices(A, "matrix_power", square=True)
    n = int(n)
    if n == 0:
        eye = Tensor(np.eye(x.shape[-1], dtype=x.dtype), device=x._dev)
        # (a result in the graph with gradient 0, as PyTorch's)
        return where(Tensor(np.zeros((), bool), device=x._dev), x, eye)
    if n == 1:  # (a copy, as PyTorch's: never its input's memory)
        return x.clone()
    if n < 0:
        x, n = inv(x), -n
    out, base = None, x
    while n:  # (repeated squaring)
        if n & 1:
            out = base if out is None else out @ base
        n >>= 1
        if n:
            base = base @ base
    return out


@public(method=True)
def matrix_exp(A: Tensor) -> Tensor:  # noqa: N803
    """The matrix exponential ``sum_k A**k / k!``: a Taylor polynomial of ``A / 2**s`` (its norm at most
    1/2, where 18 terms reach float64's precision), squared ``s`` times."""
    x = _matrices(A, "matrix_exp", square=True)
    if x.numel() == 0:
        return x.clone()
    with no_grad():
        size = float(np.max(np.abs(_host(x)).sum(-2))) if x.numel() else 0.0
    s = max(0, math.ceil(math.log2(size / 0.5))) if size > 0.5 and math.isfinite(size) else 0
    y = x / float(2**s) if s else x
    eye = Tensor(np.eye(x.shape[-1], dtype=x.dtype), device=x._dev)
    out = eye + y
    term = y
    for k in range(2, 19):
        term = (term @ y) / float(k)
        out = out + term
    for _ in range(s):
        out = out @ out
    return saved_for_backward(out, x)  # (PyTorch's keeps A; the products here may keep only A / 2**s)


def cross(input: Tensor, other: Tensor, *, dim: int = -1) -> Tensor:  # noqa: A002
    """The cross product of 3-vectors along ``dim`` (default the last), the inputs broadcast."""
    from .products import cross as _cross  # noqa: PLC0415

    return _cross(_tensor(input, "cross"), _tensor(other, "cross"), dim)


def multi_dot(tensors: Sequence[Tensor]) -> Tensor:
    """The product of the matrices in order (the first may be 1-D: a row; the last 1-D: a column)."""
    ts = list(tensors)
    if len(ts) < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {len(ts)}")
    first, last = ts[0].ndim == 1, ts[-1].ndim == 1
    mats = [ts[0].unsqueeze(0) if first else ts[0], *ts[1:-1], ts[-1].unsqueeze(-1) if last else ts[-1]]
    for i, t in enumerate(mats):
        if t.ndim != 2:
            raise RuntimeError(f"multi_dot(): tensor {i} must be 2D but got {ts[i].ndim}D")
    out = mats[0]
    for m in mats[1:]:
        out = out @ m
    if first:
        out = out.squeeze(0)
    if last:
        out = out.squeeze(-1)
    return out


def vecdot(x: Tensor, y: Tensor, *, dim: int = -1) -> Tensor:
    """The dot product of vectors along ``dim`` (the inputs broadcast)."""
    return (_float(x, "vecdot") * _float(y, "vecdot")).sum(dim)


def diagonal(A: Tensor, *, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:  # noqa: N803
    """The ``offset`` diagonal of each matrix (``torch.diagonal`` with ``dim1=-2, dim2=-1``)."""
    return _tensor(A, "diagonal").diagonal(offset, dim1, dim2)


def vander(x: Tensor, *, N: int | None = None) -> Tensor:  # noqa: N803
    """The Vandermonde matrix of the last dimension of ``x``: columns ``x**0, x**1, ..., x**(N - 1)``."""
    x = _tensor(x, "vander")
    if x.ndim < 1:
        raise RuntimeError("linalg.vander: x must have at least one dimension")
    n = x.shape[-1] if N is None else int(N)
    if n <= 1:
        raise RuntimeError("N must be greater than 1.")
    cols = [Tensor.ones(x.shape, dtype=x.dtype, device=x._dev)]
    for _ in range(n - 1):  # (each power the previous times x: no gradient divides by x)
        cols.append(cols[-1] * x)
    return stack(cols, -1)


# torch's top-level spellings
@public(method=True)
def inverse(input: Tensor) -> Tensor:  # noqa: A002
    """:func:`inv`."""
    return inv(input)
