"""``tga.linalg``: PyTorch's ``torch.linalg`` over batches of matrices (``(..., m, n)``).

The inverse, solve, determinant, Cholesky factor and symmetric eigen-decomposition are
primitives (``ops/decompositions.py``); the rest are composites of them and of ``matmul``.
The SVD, QR and LU factors take their values from one LAPACK call and their gradients from an
op of ``ops/decompositions.py`` written as PyTorch's formula (``SvdFactor``, ``QrPacked``,
``LuPacked``), as are the gradients where a matrix is singular (``det``'s cofactors from the SVD,
triangular solves by substitution with PyTorch's infinities and NaNs): so gradients of every
order are PyTorch's, at degenerate matrices too.
Also ``tga.det inverse logdet slogdet matrix_power matrix_exp`` and their Tensor methods.
Complex matrices (complex64, complex128) as PyTorch's: conjugate transposes where PyTorch's formulas
have them (``cholesky``'s ``L L^H``, ``qr``'s unitary ``Q``, ``pinv``, ``vecdot``'s ``conj(x) y``), real
singular values, ``log|det|`` and norms, and PyTorch's conjugate convention for gradients; ``eig`` and
``eigvals`` give complex results of real matrices too.

>>> import tinygrad_attn as tga
>>> tga.linalg.det(tga.tensor([[2.0, 0.0], [0.0, 3.0]]))  # doctest: +SKIP
Tensor(6.)
"""

from __future__ import annotations

import math
import sys
from collections.abc import Sequence
from typing import Any

import numpy as np

from .. import ops
from ..engine.composite import composite
from ..engine.declare import accepts, low_precision, public
from ..engine.forward_grads import differentiated, refuse_tangents
from ..engine.switches import check_host_read, no_grad
from ..functional.checks import MissingAxisError, same_dtype
from ..functional.checks import tensor_arg as _tensor
from ..ops.decompositions import LinAlgError
from ..ops.saved import NoGradient, saved_for_backward
from ..runtime.meta_stand_ins import refuse_without_kernel, stand_in
from ..tensors._tensor import InvalidArgumentError, Tensor, stack, where
from ..tensors.dtypes import UnsupportedDtypeError, scalar_type_name
from ..tensors.elementwise.tensor_torch import matmul  # (torch.linalg.matmul is torch.matmul)
from ..tensors.reduce import tensor_reduce
from ..tensors.return_types import structseq
from ..tensors.shape import dims

__all__ = [
    "norm", "vector_norm", "matrix_norm", "det", "slogdet", "inv", "inv_ex", "solve", "solve_ex", "lstsq", "cholesky",
    "cholesky_ex", "solve_triangular", "qr", "eig", "eigvals", "eigh", "eigvalsh", "svd", "svdvals", "pinv", "matrix_rank", "matrix_power", "matrix_exp",
    "cross", "multi_dot", "vecdot", "diagonal", "cond", "vander", "matmul", "LinAlgError",
    "lu", "lu_factor", "lu_factor_ex", "lu_solve", "ldl_factor", "ldl_factor_ex", "ldl_solve", "householder_product",
    "tensorinv", "tensorsolve",
]  # fmt: skip


# The named results, as PyTorch's torch.return_types (named, printed and pickled as its)
Slogdet = structseq("linalg_slogdet", ("sign", "logabsdet"))
Eigh = structseq("linalg_eigh", ("eigenvalues", "eigenvectors"))
Eig = structseq("linalg_eig", ("eigenvalues", "eigenvectors"))
SVD = structseq("linalg_svd", ("U", "S", "Vh"))
QR = structseq("linalg_qr", ("Q", "R"))
Lstsq = structseq("linalg_lstsq", ("solution", "residuals", "rank", "singular_values"))
WithInfo = structseq("linalg_solve_ex", ("result", "info"))
InvEx = structseq("linalg_inv_ex", ("inverse", "info"))
CholeskyEx = structseq("linalg_cholesky_ex", ("L", "info"))


#: PyTorch's CPU kernel behind each LAPACK-backed op here, which has none for float16 or bfloat16
#: (``engine.declare.LOW_PRECISION``; LAPACK has no such routines): its dispatch raises
#: ``NotImplementedError`` ('"lu_cpu" not implemented for 'BFloat16'') and runs for a non-empty input
#: only, so an empty one returns its empty result first (those of :data:`_CHECKED_FIRST` excepted).
#: The ops named nowhere here compute both dtypes (``matrix_exp matrix_power vecdot lu_unpack``, the norms).
_LAPACK_KERNELS = {
    **dict.fromkeys(("det", "lu", "lu_factor", "lu_factor_ex", "solve", "solve_ex", "tensorsolve"), "lu_cpu"),
    **dict.fromkeys(("svd", "svdvals", "cond"), "linalg_svd_cpu"),
    **dict.fromkeys(("cholesky", "cholesky_ex"), "cholesky_cpu"),
    **dict.fromkeys(("eigh", "eigvalsh"), "linalg_eigh_cpu"),
    **dict.fromkeys(("eig", "eigvals"), "linalg_eig_out_cpu"),
    **dict.fromkeys(("qr", "geqrf"), "geqrf_cpu"),
    **dict.fromkeys(("solve_triangular", "triangular_solve"), "triangular_solve_cpu"),
    "ldl_factor_ex": "ldl_factor_kernel_cpu", "ldl_solve": "ldl_solve_kernel_cpu", "lu_solve": "linalg.lu_solve_cpu",
    "householder_product": "orgqr_cpu", "ormqr": "ormqr_cpu", "cholesky_inverse": "cholesky_inverse_out_cpu",
    "cholesky_solve": "cholesky_solve_cpu",
}  # fmt: skip
#: the kernels of :data:`_LAPACK_KERNELS` whose dtype PyTorch checks before an empty input returns
_CHECKED_FIRST = frozenset(
    "eig eigvals qr geqrf solve_triangular triangular_solve householder_product ormqr cholesky_inverse "
    "cholesky_solve".split()
)
#: the LAPACK-backed ops whose float16 and bfloat16 PyTorch refuses up front (empty or not) with a
#: ``RuntimeError``, in its words ("Got BFloat16", "BFloat16{[5, 5]}" filled in)
_REFUSED_UP_FRONT = {
    **dict.fromkeys(("inv", "inv_ex", "tensorinv"), "linalg.inv: Low precision dtypes not supported. Got {name}"),
    "slogdet": "linalg.slogdet: Low precision dtypes not supported. Got {name}",
    "svd_norm": "linalg.matrix_norm: Low precision dtypes not supported. Got {name}",  # (ord nuc, 2, -2)
    **dict.fromkeys(("lstsq", "matrix_rank"), "This function doesn't handle types other than float and double"),
    "pinv": "linalg.pinv({name}{{[{shape}]}}): expected a tensor with 2 or more dimensions of float, double, cfloat or "
    "cdouble types",
}


def _float(x: Any, op: str, empty: bool | None = None) -> Tensor:
    """``x`` as a float or complex tensor of a dtype ``op``'s kernel takes; ``empty``: whether its kernel's
    result is empty (where not ``x``'s emptiness: ``lu_solve``'s is its right-hand side's)."""
    x = _tensor(x, op)
    if x.dtype.kind not in "fc":
        raise UnsupportedDtypeError(f"linalg.{op}: Expected a floating point or complex tensor as input. Got {x.dtype}")
    if low_precision(x):
        _refuse_low_precision(x, op, x.numel() == 0 if empty is None else empty)
    return x


def _refuse_low_precision(x: Tensor, op: str, empty: bool = False) -> None:
    """PyTorch's refusal of a float16 or bfloat16 ``x`` in the LAPACK-backed ``op`` (none where it computes
    them, or where the result is ``empty`` and its kernel's dispatch comes after the empty return)."""
    name = scalar_type_name(x.dtype)
    if op in _REFUSED_UP_FRONT:
        words = _REFUSED_UP_FRONT[op].format(name=name, shape=", ".join(map(str, x.shape)))
        raise RuntimeError(f"{words} (shape {tuple(x.shape)}; LAPACK has no {x.dtype} routine)")
    kernel = _LAPACK_KERNELS.get(op)
    if kernel is not None and (not empty or op in _CHECKED_FIRST):
        raise UnsupportedDtypeError(f"linalg.{op}: \"{kernel}\" not implemented for '{name}' (LAPACK has no {x.dtype} "
                                    f"routine; shape {tuple(x.shape)}); convert with .float()")  # fmt: skip


def _matrices(x: Any, op: str, square: bool = False, *, any_dtype: bool = False, empty: bool | None = None) -> Tensor:
    x = _tensor(x, op) if any_dtype else _float(x, op, empty)
    if x.ndim < 2:
        raise MissingAxisError(f"linalg.{op}: The input tensor A must have at least 2 dimensions.")
    if square and x.shape[-1] != x.shape[-2]:
        raise RuntimeError(f"linalg.{op}: A must be batches of square matrices, but they are {x.shape[-2]} by "
                           f"{x.shape[-1]} matrices")  # fmt: skip
    return x


def _real_dtype(x: Tensor) -> Any:
    """The dtype of ``x``'s real parts: float32 for complex64, float64 for complex128, else ``x``'s own."""
    return (np.float32 if x.dtype.itemsize == 8 else np.float64) if x.dtype.kind == "c" else x.dtype


def _host(x: Tensor) -> np.ndarray:
    _on_host(x, sys._getframe(1).f_code.co_name)
    return np.asarray(x._dev.to_host(x._data))


def _on_host(x: Tensor, op: str) -> None:
    """``x``'s values are computed with outside the ops (LAPACK through NumPy): inside a trace,
    a ``TraceError`` naming the line where ``x`` is a value of the program, whose replay would
    keep this call's result."""
    check_host_read(x, op)


def _exact_with_gradient_of(exact: Tensor, composite: Tensor) -> Tensor:
    """``exact``'s values with ``composite``'s gradient (of every order): the two agree in value
    up to rounding, and ``composite`` is written in differentiable ops."""
    if not differentiated(composite):
        return exact
    delta = composite - composite.detach()  # (0, with composite's gradient)
    # where the composite is not finite (a zero or repeated singular value), the exact value stands
    # and that entry passes no gradient: no NaN leaks into the value
    return exact + where(composite.detach().isfinite(), delta, 0.0)


def _in_graph_of(out: Tensor, *inputs: Tensor) -> Tensor:
    """``out``, recorded as a function of ``inputs`` with gradient 0 where it is not one already (a result
    that holds none of an empty input's entries, or that the inputs do not change, still requires grad
    where PyTorch's does). The link is a ``where`` that never picks the input: an inf or NaN there
    leaves the value alone."""
    if out.requires_grad:
        return out
    never = Tensor(np.zeros((), bool), device=out._dev)
    for t in inputs:
        if t.requires_grad:
            out = out + where(never, t.sum(), 0.0).astype(out.dtype)
    return out


def _wrap(x: Tensor, arr: Any) -> Tensor:
    """``arr``, computed from ``x``'s arrays (by LAPACK), as a tensor: the one place such a result
    is made, so a trace refuses it where ``x`` is a value of the program, naming the line (a
    replay would give the traced call's result again)."""
    _on_host(x, "a linear-algebra result computed on the arrays")
    return Tensor._wrap(x._dev.xp.asarray(arr), x._dev)  # (LAPACK's scalar of one matrix: a 0-d array)


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
            f"linalg.{op}: the input matrix (of shape {tuple(x.shape)}) is singular: it has no inverse"
        ) from None


# -- determinants and inverses ---------------------------------------------------------
@public(method=True)
def det(A: Tensor) -> Tensor:  # noqa: N803 - PyTorch's names
    """The determinant of each square matrix."""
    return ops.Det.apply(_matrices(A, "det", square=True))


@composite("linalg_slogdet")
@stand_in("matrices")
def slogdet(A: Tensor) -> Slogdet:  # noqa: N803
    """``(sign, log|det|)`` of each square matrix (``sign`` 0 and ``-inf`` for a singular one); its older
    spelling ``tga.slogdet`` and the method are in :mod:`.legacy`."""
    x = _matrices(A, "slogdet", square=True)
    _on_host(x, "slogdet")
    if x.dtype.kind == "c" and x.shape[-1] and x.requires_grad:  # (a complex sign turns with A: PyTorch's gradient)
        sign = ops.DetSign.apply(x)
    else:
        with no_grad():
            sign = _wrap(x, x._dev.xp.linalg.slogdet(x._data)[0])
    # (a real sign in the graph with gradient 0, as PyTorch's; a 0x0 matrix's log|det| = 0 too)
    lad = _in_graph_of(Tensor.zeros(x.shape[:-2], dtype=_real_dtype(x), device=x._dev), x) if x.shape[-1] == 0 else (
        ops.LogAbsDet.apply(x))  # fmt: skip
    return Slogdet(_in_graph_of(sign, x), lad)


@public(method=True)
def logdet(input: Tensor) -> Tensor:  # noqa: A002
    """``log(det(A))``: NaN where the determinant is negative, ``-inf`` where it is 0; of a complex matrix,
    the complex logarithm ``log(sign) + log|det|``."""
    sign, lad = slogdet(input)
    if sign.dtype.kind == "c":
        return sign.log() + lad
    return where(sign < 0, float("nan"), lad)


@composite("linalg_inv_ex")
@stand_in("matrices")
def inv(A: Tensor) -> Tensor:  # noqa: N803
    """The inverse of each square matrix (``LinAlgError`` for a singular one)."""
    x = _matrices(A, "inv", square=True)
    return _inverted(x, "inv", lambda: ops.Inv.apply(x))


@composite("linalg_inv_ex")
@stand_in("matrices")
def inv_ex(A: Tensor, *, check_errors: bool = False) -> InvEx:  # noqa: N803
    """``(inverse, info)``: :func:`inv` and an int32 per matrix, 0 or (for a singular one) the 1-based
    index of the first zero on its LU factor's diagonal; a singular matrix's inverse is then
    LAPACK's, infinities and NaNs, as PyTorch's (which solves ``A X = I``)."""
    x = _matrices(A, "inv_ex", square=True)
    _on_host(x, "inv_ex (whether the factorisation succeeds picks the result)")
    try:
        return InvEx(inv(x), _zeros_info(x, x.shape[:-2]))
    except LinAlgError:
        pass
    eye = Tensor(np.broadcast_to(np.eye(x.shape[-1], dtype=x.dtype), x.shape).copy(), device=x._dev)
    out, info = _solve_singular(x, eye, "inv_ex", check_errors)
    return InvEx(ops.GivenInverse.apply(x, out) if differentiated(x) else out, info)


def _solve_singular(a: Tensor, b: Tensor, op: str, check_errors: bool, adjoint: bool = False) -> tuple[Tensor, Tensor]:
    """``(X, info)`` of ``A X = B`` (``adjoint``: ``A^T X = B``; one batch shape, ``B`` matrices) where some
    ``A`` is singular: the LU solve PyTorch's ``solve_ex`` does, its infinities and NaNs included (no
    gradient: PyTorch's is NaN there)."""
    from ..ops.factorizations import loop_namespace, lu_raw, lu_solve_adjoint_raw, lu_solve_raw  # noqa: PLC0415

    raw, to_raw, back = loop_namespace(a._dev)
    batch = tuple(a.shape[:-2])
    n, k = a.shape[-1], b.shape[-1]
    count = math.prod(batch)
    lu_b, _, perm = lu_raw(raw, to_raw(a._data).reshape((count, n, n)))
    rows = raw.arange(count)[:, None]
    rhs = to_raw(b._data).reshape((count, n, k))
    diag = raw.diagonal(lu_b, 0, -2, -1)
    zero = diag == 0
    info = raw.where(zero.any(-1), raw.argmax(zero, axis=-1) + 1, 0).astype(raw.int32)
    if check_errors and bool(zero.any()):
        raise LinAlgError(f"torch.linalg.{op}: The solver failed because the input matrix is singular.")
    with np.errstate(divide="ignore", invalid="ignore"):
        if adjoint:  # A^T = U^T L^T P^T: X = P L^-T U^-T B
            z = lu_solve_adjoint_raw(raw, lu_b, rhs)
            out = raw.empty_like(z)
            out[rows, perm] = z
        else:  # X = U^-1 L^-1 P^T B
            out = lu_solve_raw(raw, lu_b, rhs[rows, perm])
    return _wrap(a, back(out.reshape(batch + (n, k)))), _wrap(a, back(info.reshape(batch)))


@composite("linalg_solve_ex")
@stand_in("matrices")
def solve(A: Tensor, B: Tensor, *, left: bool = True) -> Tensor:  # noqa: N803
    """``X`` with ``A X = B`` (``left=False``: ``X A = B``); ``B`` a batch of matrices or of vectors
    (``(..., n)``, where its batch shape is ``A``'s), batches broadcast."""
    a, b = _matrices(A, "solve", square=True), _float(B, "solve")
    same_dtype("linalg.solve", a, ("B", b))  # (PyTorch's LAPACK path promotes none)
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


@composite("linalg_solve_triangular")
@stand_in("matrices")
def solve_triangular(A: Tensor, B: Tensor, *, upper: bool, left: bool = True,  # noqa: N803
                     unitriangular: bool = False) -> Tensor:  # fmt: skip
    """``X`` with ``A X = B`` (``left=False``: ``X A = B``) for a triangular ``A`` (``upper`` or
    lower; the other triangle is not read; ``unitriangular``: its diagonal is taken as ones), as
    ``torch.linalg.solve_triangular``. ``B`` is a batch of matrices; batches broadcast. The gradient
    reaches only the triangle read."""
    a, b = _matrices(A, "solve_triangular", square=True), _matrices(B, "solve_triangular", any_dtype=True)
    if b.dtype != a.dtype:  # (PyTorch's solves in A's dtype)
        b = b.to(a.dtype)
    n = a.shape[-1]
    if not unitriangular and a.numel() and bool((_host(a.detach().diagonal(0, -2, -1)) == 0).any()):
        # a zero on the diagonal: by substitution, with PyTorch's infinities and NaNs (X A = B as A^T X^T = B^T)
        coef, rhs, up = (a, b, upper) if left else (a.mT, b.mT, not upper)
        if rhs.shape[-2] != n:
            raise RuntimeError(f"linalg.solve_triangular: Incompatible shapes of A and B for the equation "
                               f"{'AX = B' if left else 'XA = B'} ({n}x{n} and {b.shape[-2]}x{b.shape[-1]})")  # fmt: skip
        batch = tuple(np.broadcast_shapes(coef.shape[:-2], rhs.shape[:-2]))
        coef, rhs = coef.expand(batch + coef.shape[-2:]), rhs.expand(batch + rhs.shape[-2:])
        x = ops.TriangularSubstitution.apply(coef, rhs, args=(up, False))
        return saved_for_backward(x if left else x.mT, a, output=True)
    t = a.triu() if upper else a.tril()
    if unitriangular:
        eye = Tensor(np.eye(n, dtype=a.dtype), device=a.device)
        t = t * (1 - eye) + eye
    return saved_for_backward(solve(t, b, left=left), a, output=True)  # (PyTorch's keeps A and the solution)


@composite("linalg_solve_ex")
@stand_in("matrices")
def solve_ex(A: Tensor, B: Tensor, *, left: bool = True, check_errors: bool = False) -> WithInfo:  # noqa: N803
    """``(result, info)``: :func:`solve` and an int32 per system, 0 or (for a singular ``A``) the 1-based
    index of the first zero on its LU factor's diagonal, the result then LAPACK's infinities and NaNs
    as PyTorch's (``check_errors``: raise instead)."""
    if isinstance(A, Tensor):
        _on_host(A, "solve_ex (whether the factorisation succeeds picks the result)")
    try:
        x = solve(A, B, left=left)
        return WithInfo(x, _zeros_info(x, tuple(A.shape[:-2])))
    except LinAlgError:
        pass
    a, b = _matrices(A, "solve_ex", square=True), _float(B, "solve_ex")
    # (X A = B as A^T X^T = B^T with A's own LU, as PyTorch's)
    vector = left and (b.ndim == 1 or (b.ndim == a.ndim - 1 and b.shape == a.shape[:-1]))
    bb = b.unsqueeze(-1) if vector else b if left else b.mT
    batch = tuple(np.broadcast_shapes(a.shape[:-2], bb.shape[:-2]))
    res, info = _solve_singular(a.expand(batch + a.shape[-2:]), bb.expand(batch + bb.shape[-2:]), "solve_ex",
                                check_errors, adjoint=not left)  # fmt: skip
    return WithInfo(res.squeeze(-1) if vector else res if left else res.mT, info)


def _cholesky_failures(x: Tensor) -> tuple[np.ndarray, np.ndarray]:
    """``(L, info)`` on the host, per matrix as LAPACK's ``potf2`` leaves it (see ``cholesky_host``)."""
    from ..ops.factorizations import cholesky_host  # noqa: PLC0415

    n = x.shape[-1]
    flat = _host(x).reshape((math.prod(x.shape[:-2]), n, n))
    parts = [cholesky_host(a) for a in flat]
    ls = np.stack([p[0] for p in parts]) if parts else np.zeros((0, n, n), x.dtype)
    return ls.reshape(x.shape), np.asarray([p[1] for p in parts], np.int32).reshape(x.shape[:-2])


def _not_positive_definite(op: str, info: np.ndarray) -> LinAlgError:
    flat = info.reshape(-1)
    i = int(np.argmax(flat > 0))
    where_ = f"(Batch element {i}): " if info.ndim else ""
    return LinAlgError(f"linalg.{op}: {where_}The factorization could not be completed because the input is not "
                       f"positive-definite (the leading minor of order {flat[i]} is not positive-definite).")  # fmt: skip


@composite("linalg_cholesky_ex")
@stand_in("matrices")
def cholesky(A: Tensor, *, upper: bool = False) -> Tensor:  # noqa: N803
    """The lower Cholesky factor ``L`` (``A = L L^H``) of each Hermitian (symmetric) positive-definite matrix
    (its lower triangle is read); ``upper=True``: ``L^H``."""
    x = _matrices(A, "cholesky", square=True)
    try:  # (the factorisation reads the lower triangle; the gradient is symmetric, as PyTorch's)
        L = ops.Cholesky.apply(x)  # noqa: N806
    except np.linalg.LinAlgError:
        raise _not_positive_definite("cholesky", _cholesky_failures(x.detach())[1]) from None
    return L.mH if upper else L


@composite("linalg_cholesky_ex")
@stand_in("matrices")
def cholesky_ex(A: Tensor, *, upper: bool = False, check_errors: bool = False) -> CholeskyEx:  # noqa: N803
    """``(L, info)``: :func:`cholesky` and an int32 per matrix, 0 or the order of the first leading
    minor that is not positive-definite (``L`` then as LAPACK leaves it, as PyTorch's; ``check_errors``:
    raise instead)."""
    x = _matrices(A, "cholesky_ex", square=True)
    _on_host(x, "cholesky_ex (whether the factorisation succeeds picks the result)")
    try:
        L = cholesky(x, upper=upper)  # noqa: N806
        return CholeskyEx(L, _zeros_info(L, tuple(x.shape[:-2])))
    except LinAlgError:
        pass
    ls, info = _cholesky_failures(x.detach().mH if upper else x.detach())
    if check_errors:
        raise _not_positive_definite("cholesky_ex", info)
    L = Tensor(ls.astype(x.dtype), device=x._dev)  # noqa: N806
    if differentiated(x):  # (in the graph, with PyTorch's gradient of that factor)
        L = ops.GivenCholesky.apply(x.mH if upper else x, L)  # noqa: N806
    return CholeskyEx(L.mH if upper else L, Tensor(info, device=x._dev))


# -- eigenvalues and singular values ---------------------------------------------------
@composite("linalg_eigh")
def eigh(A: Tensor, UPLO: str = "L") -> Eigh:  # noqa: N803
    """The eigenvalues (ascending) and eigenvectors (columns) of each symmetric matrix, read from its
    lower (``UPLO='L'``) or upper triangle."""
    x = _matrices(A, "eigh", square=True)
    if UPLO not in ("L", "U"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    return Eigh(ops.EighValues.apply(x, args=UPLO), ops.EighVectors.apply(x, args=UPLO))


def _general_square(A: Any, op: str) -> Tensor:  # noqa: N803
    x = _matrices(A, op, square=True)
    _on_host(x, op)  # (LAPACK's geev on the host: no device namespace has it)
    if x.numel() and not bool(np.isfinite(_host(x.detach())).all()):
        raise RuntimeError(f"linalg.{op}: input tensor should not contain infs or NaNs (shape {tuple(x.shape)})")
    return x


@composite("linalg_eig")
@stand_in("matrices")
def eig(A: Tensor) -> Eig:  # noqa: N803
    """The eigenvalues and eigenvectors (columns) of each general square matrix, always complex (complex64 for
    float32 input), as LAPACK's ``geev`` gives them: each eigenvector of unit norm with its largest entry
    real. Gradients as PyTorch's (``ops.EigValues``, ``ops.EigVectors``; a loss that depends on the
    eigenvectors' phases raises, as there)."""
    x = _general_square(A, "eig")
    return Eig(ops.EigValues.apply(x), ops.EigVectors.apply(x))


@composite("linalg_eig")
@stand_in("matrices")
def eigvals(A: Tensor) -> Tensor:  # noqa: N803
    """The eigenvalues of each general square matrix, always complex, as :func:`eig`'s."""
    x = _general_square(A, "eigvals")
    return saved_for_backward(ops.EigValues.apply(x), x)


@composite("linalg_eigh")
def eigvalsh(A: Tensor, UPLO: str = "L") -> Tensor:  # noqa: N803
    """The eigenvalues (ascending) of each symmetric matrix."""
    x = _matrices(A, "eigvalsh", square=True)
    return saved_for_backward(ops.EighValues.apply(x, args=UPLO), output=True)


def _svd_factors(x: Tensor, full_matrices: bool) -> SVD:
    """``(U, S, Vh)`` of ``x``: one LAPACK call, each factor in the graph as ``ops.SvdFactor`` (PyTorch's
    gradient) where ``x`` requires grad."""
    if x.numel() == 0:  # (float16 and bfloat16 in float32: LAPACK has neither)
        data = x._data.astype(np.float32) if low_precision(x) else x._data
        u, s, vh = x._dev.xp.linalg.svd(data, full_matrices=full_matrices)
        dtypes = (x.dtype, _real_dtype(x), x.dtype)
        return SVD(*(_in_graph_of(_wrap(x, t).astype(d), x) for t, d in zip((u, s, vh), dtypes, strict=True)))
    m, n = x.shape[-2:]
    k = min(m, n)
    r1, r2 = (m, n) if full_matrices else (k, k)
    batch = tuple(x.shape[:-2])
    packed = ops.SvdValues.apply(x, args=full_matrices)  # (one op: a trace computes it from x)
    U = packed[..., : m * r1].reshape(batch + (m, r1))  # noqa: N806
    S = packed[..., m * r1 : m * r1 + k]  # noqa: N806
    if S.dtype.kind == "c":  # (packed with the complex factors: the singular values are real)
        S = S.real.contiguous()  # noqa: N806
    Vh = packed[..., m * r1 + k :].reshape(batch + (r2, n))  # noqa: N806
    if not differentiated(x):
        return SVD(U, S, Vh)
    return SVD(*(ops.SvdFactor.apply(x, U, S, Vh, args=w) for w in ("U", "S", "Vh")))


@composite("linalg_svd", output=1)
@stand_in("matrices")
def svdvals(A: Tensor) -> Tensor:  # noqa: N803
    """The singular values of each matrix, descending. The gradient is ``U diag(g) Vh`` (no division by
    gaps between singular values: finite at repeated and zero ones, as PyTorch's)."""
    x = _matrices(A, "svdvals")
    if not differentiated(x) or x.numel() == 0:
        raw = x._dev.xp
        values = raw.linalg.svdvals if hasattr(raw.linalg, "svdvals") else (
            lambda a: raw.linalg.svd(a, compute_uv=False))  # fmt: skip
        exact = _wrap(x, values(x._data)) if x.numel() else (
            Tensor.zeros(x.shape[:-2] + (min(x.shape[-2:]),), dtype=_real_dtype(x), device=x._dev))  # fmt: skip
        return _in_graph_of(exact, x)
    # (the factors are kept, not A: changing A in place before the backward is no error, as in PyTorch)
    return saved_for_backward(_svd_factors(x, False).S, output=True)


@composite("linalg_svd")
def svd(A: Tensor, full_matrices: bool = True, *, driver: str | None = None) -> SVD:  # noqa: N803
    """``(U, S, Vh)`` with ``A = U diag(S) Vh``, ``S`` descending. Gradients as PyTorch's (``ops.SvdFactor``):
    of every factor, the complete ``U``'s and ``Vh``'s extra columns and rows taking none; infinite or
    NaN where the loss depends on ``U`` or ``Vh`` and singular values repeat."""
    return _svd_factors(_matrices(A, "svd"), full_matrices)


@composite("linalg_qr")
def qr(A: Tensor, mode: str = "reduced") -> QR:  # noqa: N803
    """``(Q, R)`` with ``A = Q R``, ``Q``'s columns orthonormal, ``R`` upper triangular (``mode``:
    ``'reduced'``, ``'complete'`` or ``'r'``, whose ``Q`` is empty). Gradients as PyTorch's (``ops.QrPacked``;
    a wide matrix through its leading square block), infinite and NaN where ``R`` is singular."""
    x = _matrices(A, "qr")
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of 'reduced' (default), 'r', or 'complete'")  # fmt: skip
    m, n = x.shape[-2:]
    if x.numel() == 0:
        q, r = x._dev.xp.linalg.qr(x._data, mode="complete" if mode == "complete" else "reduced")
        Q, R = _in_graph_of(_wrap(x, q), x), _in_graph_of(_wrap(x, r), x)  # noqa: N806
    else:
        kq = m if mode == "complete" else min(m, n)  # (Q (m, kq), R (kq, n))
        packed = ops.QrValues.apply(x, args=mode == "complete")  # (one op: a trace computes it from x)
        batch = tuple(x.shape[:-2])
        Q = packed[..., : m * kq].reshape(batch + (m, kq))  # noqa: N806
        R = packed[..., m * kq :].reshape(batch + (kq, n))  # noqa: N806
    if not differentiated(x) or x.numel() == 0:
        pass  # (values only; an empty input's factors are in its graph already)
    elif m < n:
        # A = Q [R1 R2]: (Q, R1) of the square A[:, :m], whose Householder steps are A's; R2 = Q^T A[:, m:]
        from ..tensors._tensor import cat  # noqa: PLC0415

        Q, R1 = qr(x[..., :, :m])  # noqa: N806
        R = cat([R1, _exact_with_gradient_of(R[..., :, m:], Q.mH @ x[..., :, m:])], -1)  # noqa: N806
    else:  # (PyTorch's gradient, ops.QrPacked; of the reduced factors)
        q_red, r_red = Q[..., :, :n].detach(), R[..., :n, :].detach()
        packed = ops.QrPacked.apply(x, q_red, r_red)
        Q_red, R_red = packed[..., :m, :], packed[..., m:, :]  # noqa: N806
        if mode == "complete" and m > n:
            from ..tensors._tensor import cat  # noqa: PLC0415

            Q = cat([Q_red, Q[..., :, n:]], -1)  # noqa: N806
            R = cat([R_red, R[..., n:, :]], -2)  # noqa: N806
        else:
            Q, R = Q_red, R_red  # noqa: N806
    if mode == "r":
        Q = Tensor.zeros((0,), dtype=x.dtype, device=x._dev)  # noqa: N806
        if R.requires_grad:  # (PyTorch's R has a node whose backward refuses: its formula needs Q)
            from ..ops.alias import RefusedDerivative  # noqa: PLC0415

            R = RefusedDerivative.apply(R, args="The derivative of linalg.qr depends on Q, which is not computed "  # noqa: N806
                                        "when mode='r'. Please use linalg.qr(A, mode='reduced') if you are going "
                                        "to differentiate through linalg.qr.")  # fmt: skip
    return QR(Q, R)


@composite("linalg_pinv")
@stand_in("matrices")
def pinv(A: Tensor, *, atol: Any = None, rtol: Any = None, hermitian: bool = False) -> Tensor:  # noqa: N803
    """The Moore-Penrose pseudo-inverse (singular values below ``max(atol, rtol * largest)`` dropped;
    ``rtol`` defaults to ``eps * max(m, n)`` without ``atol``). ``hermitian=True`` reads the lower
    triangle alone and inverts its eigenvalues (by absolute value), as PyTorch's.

    The gradient is PyTorch's, the pseudo-inverse's derivative at constant rank (``ops.PseudoInverse``),
    of every order."""
    x = _matrices(A, "pinv", square=hermitian)
    m, n = x.shape[-2:]
    if x.numel() == 0:
        return x.mH.clone()  # (empty, in the graph)
    eps = np.finfo(x.dtype).eps
    at = 0.0 if atol is None else (_host(atol) if isinstance(atol, Tensor) else atol)
    rt = (eps * max(m, n) if atol is None or atol == 0 else 0.0) if rtol is None else (
        _host(rtol) if isinstance(rtol, Tensor) else rtol)  # fmt: skip
    if hermitian:
        w, v = np.linalg.eigh(_host(x), UPLO="L")  # (the upper triangle is never read)
        s = np.abs(w)
        tol = np.maximum(np.asarray(at)[..., None], np.asarray(rt)[..., None] * s.max(-1, keepdims=True))
        keep = s > tol
        winv = np.where(keep, 1.0 / np.where(keep, w, 1.0), 0.0)
        exact_np = (v * winv[..., None, :]) @ v.conj().swapaxes(-1, -2)
    else:
        u, s, vh = (np.asarray(v) for v in np.linalg.svd(_host(x), full_matrices=False))
        tol = np.maximum(np.asarray(at)[..., None], np.asarray(rt)[..., None] * s[..., :1])
        keep = s > tol
        sinv = np.where(keep, 1.0 / np.where(keep, s, 1.0), 0.0)
        exact_np = (vh.conj().swapaxes(-1, -2) * sinv[..., None, :]) @ u.conj().swapaxes(-1, -2)
    exact = Tensor(exact_np.astype(x.dtype), device=x._dev)
    if not differentiated(x):
        return exact
    return ops.PseudoInverse.apply(x, exact)  # (PyTorch's keeps A and the result, as this op does)


@stand_in("matrices")
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


@composite("linalg_lstsq")
def lstsq(A: Tensor, B: Tensor, rcond: float | None = None, *, driver: str | None = None) -> Lstsq:  # noqa: N803
    """The least-squares solution ``X`` minimising ``|A X - B|`` (``pinv(A) @ B``), and the other
    fields as PyTorch's ``driver`` fills them: the rank (not ``gels``, which assumes it full), the
    singular values (``gelsd``, ``gelss``), the squared residuals ``|A X - B|^2`` of each column
    (not ``gelsy``, the default; only where ``A`` is tall and every matrix of full rank)."""
    a, b = _matrices(A, "lstsq"), _float(B, "lstsq")
    drv = "gelsy" if driver is None else driver
    if drv not in ("gels", "gelsy", "gelsd", "gelss"):
        raise RuntimeError("torch.linalg.lstsq: parameter `driver` should be one of (gels, gelsy, gelsd, gelss)")
    refuse_without_kernel("aten::linalg_lstsq.out", a, b)
    vector = b.ndim == a.ndim - 1
    bb = b.unsqueeze(-1) if vector else b
    sol = pinv(a, rtol=rcond) @ bb  # (..., n, k)
    m, n = a.shape[-2:]
    empty = Tensor.zeros((0,), dtype=a.dtype, device=a._dev)
    rank = Tensor.zeros((0,), dtype=np.int64, device=a._dev) if drv == "gels" else matrix_rank(a, rtol=rcond)
    residuals = sol.reshape(-1)[:0]  # (empty, yet on the graph as PyTorch's; real, as the squared magnitudes)
    if residuals.dtype.kind == "c":
        residuals = residuals.real
    if m > n and drv != "gelsy" and (drv == "gels" or bool((rank == n).all())):
        r = a @ sol - bb
        residuals = ((r * r) if r.dtype.kind != "c" else (r.real * r.real + r.imag * r.imag)).sum(-2)  # (..., k): a
        # vector b keeps its column (k = 1), as PyTorch's; of complex residuals, their squared magnitudes
    singular = svdvals(a).detach() if drv in ("gelsd", "gelss") else (
        empty.real if empty.dtype.kind == "c" else empty)  # fmt: skip
    sol = saved_for_backward(sol.squeeze(-1) if vector else sol, output=True)
    return Lstsq(sol, residuals, rank, singular)


# -- norms -----------------------------------------------------------------------------
@composite("linalg_vector_norm")
def vector_norm(x: Tensor, ord: float = 2, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Tensor:  # noqa: A002
    """:func:`_vector_norm`, keeping its input and result for the backward, as PyTorch's (a
    float16 norm is computed in float32 and rounded once, as there)."""
    dim = dims.all_if_empty(dim)
    if getattr(x, "dtype", None) == np.float16 and dtype in (None, np.float16):
        out = _vector_norm(x.astype(np.float32), ord, dim, keepdim).astype(np.float16)
    else:
        out = _vector_norm(x, ord, dim, keepdim, dtype=dtype)
    return saved_for_backward(out, x, output=True)


def _vector_norm(x: Tensor, ord: float = 2, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Tensor:  # noqa: A002
    """The ``ord``-norm of the entries (of all, flattened, or over ``dim``): ``inf`` the largest
    magnitude, ``-inf`` the smallest, 0 the count of non-zeros; its gradient is 0 where the norm is 0."""
    if getattr(x, "dtype", None) is not None and x.dtype.kind == "c":  # (of complex entries: of their magnitudes)
        x = x.abs()
    x = _float(x, "vector_norm")
    if dtype is not None:
        x = x.astype(dtype)
    axes = dims.axes(x.shape, dim, "vector_norm")
    if axes is None:
        axes = tuple(range(x.ndim))
    a = x.abs()
    if ord == 0:  # (the count of non-zeros: in the graph, with no gradient at all, as PyTorch's)
        count = a.detach().sign()
        count = count.sum(axes, keepdim) if axes else count
        return NoGradient.apply(count, x) if differentiated(x) else count
    if not axes:  # (a 0-d tensor: its magnitude)
        return a
    if ord == math.inf:
        return a.amax(axes, keepdim)
    if ord == -math.inf:
        return a.amin(axes, keepdim)
    if ord == 1:
        return a.sum(axes, keepdim)
    if ord == 2:  # (PyTorch's gradient and second derivative at a zero norm: 0 and NaN)
        return tensor_reduce.norm2(x, axes, keepdim)
    return tensor_reduce.power_norm(a, ord, axes, keepdim)


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
    if d0 == d1:
        raise InvalidArgumentError(f"linalg.matrix_norm: dims must be different. Got {tuple(dim)}")
    if ord == "fro":
        return vector_norm(x, 2, (d0, d1), keepdim)
    if ord in ("nuc", 2, -2):
        if low_precision(x):
            _refuse_low_precision(x, "svd_norm")
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
    if x.numel() == 0 and p in (None, 2, -2, 1, -1, math.inf, -math.inf, "fro", "nuc"):  # (PyTorch's: 0, no gradient)
        return Tensor.zeros(x.shape[:-2], dtype=_real_dtype(x), device=x._dev)
    if p in (None, 2, -2):
        s = svdvals(x)
        if s.shape[-1] == 0:
            return s.sum(-1)  # (no singular values: zeros of the batch's shape)
        # (PyTorch's steps: the largest and smallest as slices, their quotient squeezed: SqueezeBackward1)
        big, small = s.narrow(-1, 0, 1), s.narrow(-1, s.shape[-1] - 1, 1)
        return (big / small if p != -2 else small / big).squeeze(-1)
    return matrix_norm(x, p) * matrix_norm(inv(x), p)


# -- products and helpers --------------------------------------------------------------
@public(method=True)
def matrix_power(A: Tensor, n: int) -> Tensor:  # noqa: N803
    """``A`` multiplied by itself ``n`` times (``n = 0``: the identity; ``n < 0``: powers of the inverse)."""
    x = _matrices(A, "matrix_power", square=True, any_dtype=True)  # (every dtype: products, as PyTorch's)
    n = int(n)
    if n < 0 and x.dtype.kind not in "fc":
        raise RuntimeError(f"linalg.matrix_power: negative powers of {x.dtype} matrices are not defined (no inverse); "
                           "convert with .float()")  # fmt: skip
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
@stand_in("matrices")
def matrix_exp(A: Tensor) -> Tensor:  # noqa: N803
    """The matrix exponential ``sum_k A**k / k!``: a Taylor polynomial of ``A / 2**s`` (its norm at most
    1/2, where 18 terms reach float64's precision), squared ``s`` times."""
    x = _matrices(A, "matrix_exp", square=True)
    if x.numel() == 0:
        return x.clone()
    if x.dtype == np.float32:  # (the squarings multiply float32's rounding by the norm: in float64, rounded once)
        return saved_for_backward(matrix_exp(x.astype(np.float64)).astype(np.float32), x)
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


@accepts("numeric")
@composite("linalg_cross")
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
    out = _chain_product(mats)
    if first:
        out = out.squeeze(0)
    if last:
        out = out.squeeze(-1)
    return out


def _chain_product(mats: list[Tensor]) -> Tensor:
    """The product of ``mats`` in the order of fewest multiplications, as PyTorch's ``multi_dot`` picks
    it (the first cheapest split; with three, ``(AB)C`` unless ``A(BC)`` is strictly cheaper): the
    rounding follows the order, visibly in float16."""
    n = len(mats)
    if n == 2:
        return mats[0] @ mats[1]
    dims_ = [m.shape[0] for m in mats] + [mats[-1].shape[1]]
    if n == 3:
        a, b, c, d = dims_
        return mats[0] @ (mats[1] @ mats[2]) if a * c * (b + d) > b * d * (a + c) else (mats[0] @ mats[1]) @ mats[2]
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for span in range(1, n):
        for i in range(n - span):
            j = i + span
            cost[i][j] = None
            for k in range(i, j):
                q = cost[i][k] + cost[k + 1][j] + dims_[i] * dims_[k + 1] * dims_[j + 1]
                if cost[i][j] is None or q < cost[i][j]:
                    cost[i][j], split[i][j] = q, k

    def product(i: int, j: int) -> Tensor:
        return mats[i] if i == j else product(i, split[i][j]) @ product(split[i][j] + 1, j)

    return product(0, n - 1)


def vecdot(x: Tensor, y: Tensor, *, dim: int = -1) -> Tensor:
    """The dot product of vectors along ``dim`` (the inputs broadcast); of complex vectors ``sum(conj(x) y)``."""
    same_dtype("linalg.vecdot", _float(x, "vecdot"), ("y", _float(y, "vecdot")))  # (PyTorch's promotes none)
    if x.ndim == 1 and y.ndim == 1:  # (PyTorch's of two vectors is vdot's one node, VdotBackward0, any dim)
        return x.vdot(y)
    return ((x.conj() if x.dtype.kind == "c" else x) * y).sum(dim)


def diagonal(A: Tensor, *, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:  # noqa: N803
    """The ``offset`` diagonal of each matrix (``torch.diagonal`` with ``dim1=-2, dim2=-1``)."""
    return _tensor(A, "diagonal").diagonal(offset, dim1, dim2)


# (PyTorch's: no bool, no float16)
@accepts(("uint8", "uint16", "uint32", "uint64", "int8", "int16", "int32", "int64", "float32", "float64", "complex64",
          "complex128"))  # fmt: skip
def vander(x: Tensor, *, N: int | None = None) -> Tensor:  # noqa: N803
    """The Vandermonde matrix of the last dimension of ``x``: columns ``x**0, x**1, ..., x**(N - 1)``."""
    x = _tensor(x, "vander")
    if x.dtype.kind == "b":
        raise RuntimeError(f"linalg.vander supports floating point, complex, and integer tensors, but got Bool "
                           f"(shape {tuple(x.shape)})")  # fmt: skip
    if x.ndim < 1:
        x = x.reshape(1)  # (PyTorch reads a 0-d x as a vector of one)
    if x.dtype.kind in "iu":  # (PyTorch's integer powers are int64, as its cumulative product of them)
        x = x.astype(np.int64)
    n = x.shape[-1] if N is None else int(N)
    if n <= 1:
        raise RuntimeError("N must be greater than 1.")
    cols = [Tensor.ones(x.shape, dtype=x.dtype, device=x._dev)]
    for _ in range(n - 1):  # (each power the previous times x: no gradient divides by x)
        cols.append(cols[-1] * x)
    return stack(cols, -1)


# -- LU, LDL^T and Householder factorisations ---------------------------------------------
# The pivoted loops are ops/factorizations.py's, on raw arrays; a factor that needs a gradient is
# ops.LuPacked, PyTorch's formula with the pivots as constants (a permutation is piecewise constant
# in A), of every order.
LUFactor = structseq("linalg_lu_factor", ("LU", "pivots"))
LUFactorEx = structseq("linalg_lu_factor_ex", ("LU", "pivots", "info"))
PLU = structseq("linalg_lu", ("P", "L", "U"))
LDLFactor = structseq("linalg_ldl_factor", ("LD", "pivots"))
LDLFactorEx = structseq("linalg_ldl_factor_ex", ("LD", "pivots", "info"))
Geqrf = structseq("geqrf", ("a", "tau"))
TorchSVD = structseq("svd", ("U", "S", "V"))
TriangularSolve = structseq("triangular_solve", ("solution", "cloned_coefficient"))


def _flat_batch(x: Tensor) -> Any:
    """``x``'s array as ``(B, m, n)``, its batch dimensions flattened."""
    return x._dev.xp.reshape(x._data, (math.prod(x.shape[:-2]),) + tuple(x.shape[-2:]))


def _permutation_matrix(x: Tensor, perm: Any, batch: tuple) -> Tensor:
    """The constant ``P (..., m, m)`` with ``P[perm[i], i] = 1`` (``perm (B, m)`` in the loop namespace),
    so ``A = P (P^T A)``."""
    from ..ops.factorizations import loop_namespace  # noqa: PLC0415

    raw, _, back = loop_namespace(x._dev)
    m = perm.shape[-1]
    eye = raw.eye(m, dtype=np.dtype(x.dtype))
    p = raw.swapaxes(eye[perm], -1, -2)  # (B, m, m): row perm[i] of column i is 1
    return _wrap(x, back(raw.reshape(p, batch + (m, m))))


def _lu(x: Tensor) -> tuple[Tensor, Tensor, Tensor, Any]:
    """``(LU, pivots, info, P)`` of a float batch of matrices; ``LU`` in the graph where ``x`` is."""
    from ..ops.factorizations import loop_namespace, lu_raw  # noqa: PLC0415

    batch = tuple(x.shape[:-2])
    m, n = x.shape[-2:]
    k = min(m, n)
    raw, to_raw, back = loop_namespace(x._dev)
    lu_b, piv_b, perm = lu_raw(raw, to_raw(_flat_batch(x)))
    diag = raw.diagonal(lu_b, 0, -2, -1) if k else raw.zeros((lu_b.shape[0], 0), dtype=lu_b.dtype)
    zero = diag == 0
    if k:  # (the first zero on U's diagonal, 1-based; 0 where none)
        info = raw.where(zero.any(-1), raw.argmax(zero, axis=-1) + 1, 0).astype(raw.int32)
    else:
        info = raw.zeros(zero.shape[:1], dtype=raw.int32)
    P = _permutation_matrix(x, perm, batch)  # noqa: N806
    if differentiated(x):  # (PyTorch's backward keeps the factor it returned)
        value = Tensor._wrap(back(raw.reshape(lu_b, x.shape)), x._dev)
        LU = saved_for_backward(ops.LuPacked.apply(x, value, P), output=True)  # noqa: N806
    else:
        LU = _wrap(x, back(raw.reshape(lu_b, x.shape)))  # noqa: N806
    pivots = _wrap(x, back(raw.reshape(piv_b, batch + (k,))))
    return LU, pivots, _wrap(x, back(raw.reshape(info, batch))), P


def _no_pivoting(op: str) -> RuntimeError:
    return RuntimeError(f"linalg.{op}: LU without pivoting is not implemented on the CPU")


def _check_lu_info(info: Tensor, op: str) -> None:
    bad = np.asarray(_host(info)).reshape(-1)
    if bad.size and bad.max() > 0:
        i = int(np.argmax(bad > 0))
        where_ = f"(Batch element {i}): " if info.ndim else ""
        raise LinAlgError(f"torch.linalg.{op}: {where_}U[{bad[i]},{bad[i]}] is zero and using it on lu_solve would "
                          "result in a division by zero. If you still want to perform the factorization, consider "
                          "calling linalg.lu(A, pivot) or linalg.lu_factor_ex(A, pivot)")  # fmt: skip


@composite("linalg_lu_factor_ex")
@stand_in("matrices")
def lu_factor_ex(A: Tensor, *, pivot: bool = True, check_errors: bool = False) -> LUFactorEx:  # noqa: N803
    """``(LU, pivots, info)``: the LU decomposition with partial pivoting ``A = P L U`` of each
    ``(m, n)`` matrix packed in one matrix (``L``'s unit diagonal not stored), LAPACK's 1-based row
    interchanges (int32, ``(..., min(m, n))``) and per matrix the 1-based index of the first zero on
    ``U``'s diagonal (0: none; ``check_errors``: raise then).

    >>> tga.linalg.lu_factor_ex(tga.tensor([[1.0, 2.0], [3.0, 4.0]])).pivots  # doctest: +SKIP
    Tensor([2, 2], dtype=int32)
    """
    x = _matrices(A, "lu_factor_ex")
    if not pivot:
        raise _no_pivoting("lu_factor")
    LU, pivots, info, _ = _lu(x)  # noqa: N806
    if check_errors:
        _check_lu_info(info, "lu_factor_ex")
    return LUFactorEx(LU, pivots, info)


@composite("linalg_lu_factor_ex")
@stand_in("matrices")
def lu_factor(A: Tensor, *, pivot: bool = True) -> LUFactor:  # noqa: N803
    """``(LU, pivots)`` of :func:`lu_factor_ex`; a matrix with a zero on ``U``'s diagonal raises."""
    x = _matrices(A, "lu_factor")
    if not pivot:
        raise _no_pivoting("lu_factor")
    LU, pivots, info, _ = _lu(x)  # noqa: N806
    _check_lu_info(info, "lu_factor")
    return LUFactor(LU, pivots)


def _unpack(LU: Tensor) -> tuple[Tensor, Tensor]:  # noqa: N803
    """``L (..., m, k)`` (unit lower) and ``U (..., k, n)`` of a packed ``LU``."""
    m, n = LU.shape[-2:]
    k = min(m, n)
    eye = Tensor(np.eye(m, k, dtype=LU.dtype), device=LU._dev)
    return LU[..., :, :k].tril(-1) + eye, LU[..., :k, :].triu()


@composite("linalg_lu")
@stand_in("matrices")
def lu(A: Tensor, *, pivot: bool = True) -> PLU:  # noqa: N803
    """``(P, L, U)`` with ``A = P L U``: ``P`` a permutation matrix, ``L (m, k)`` unit lower and ``U (k, n)``
    upper triangular, ``k = min(m, n)``; no error for a singular matrix."""
    x = _matrices(A, "lu")
    if not pivot:
        raise _no_pivoting("lu_factor")
    LU, _, _, P = _lu(x)  # noqa: N806
    L, U = _unpack(LU)  # noqa: N806
    return PLU(P, L, U)


def _pivot_permutation(LU: Tensor, pivots: Tensor, op: str) -> Tensor:  # noqa: N803
    """The constant ``P`` of ``A = P L U`` from LAPACK's interchanges ``pivots (..., k)``."""
    from ..ops.factorizations import loop_namespace, permutation_of_pivots  # noqa: PLC0415

    piv = _tensor(pivots, op)
    if piv.dtype != np.int32:
        raise RuntimeError(f"{op}: LU_pivots is expected to be a contiguous tensor of torch.int32 dtype. Note: "
                           "this function is intended to be used with the output produced by torch.linalg.lu_factor")  # fmt: skip
    m = LU.shape[-2]
    batch = tuple(piv.shape[:-1])
    raw, to_raw, _ = loop_namespace(piv._dev)
    flat = raw.reshape(to_raw(piv._data), (math.prod(batch), piv.shape[-1]))
    if flat.size and (int(flat.min()) < 1 or int(flat.max()) > m):
        raise RuntimeError(f"{op}: pivots must be 1-based row indices between 1 and {m}, got values from "
                           f"{int(flat.min())} to {int(flat.max())}")  # fmt: skip
    return _permutation_matrix(LU, permutation_of_pivots(raw, flat, m), batch)


@public
@stand_in("matrices")
def lu_unpack(LU_data: Tensor, LU_pivots: Tensor, unpack_data: bool = True,  # noqa: N803
              unpack_pivots: bool = True) -> PLU:  # fmt: skip
    """``(P, L, U)`` from :func:`lu_factor`'s packed ``LU`` and ``pivots`` (what is not unpacked is an
    empty tensor)."""
    lu_data = _matrices(LU_data, "lu_unpack", any_dtype=True)  # (PyTorch unpacks every dtype: it only copies)
    empty = Tensor.zeros((0,), dtype=lu_data.dtype, device=lu_data._dev)
    if unpack_data:
        L, U = _unpack(lu_data)  # noqa: N806
    else:
        L = U = empty  # noqa: N806
    P = _pivot_permutation(lu_data, LU_pivots, "lu_unpack") if unpack_pivots else empty  # noqa: N806
    return structseq("lu_unpack", ("P", "L", "U"))(P, L, U)


@composite("linalg_lu_solve")
@stand_in("matrices")
def lu_solve(LU: Tensor, pivots: Tensor, B: Tensor, *, left: bool = True, adjoint: bool = False) -> Tensor:  # noqa: N803
    """``X`` with ``A X = B`` (``left=False``: ``X A = B``; ``adjoint``: ``A^H`` for ``A``) from
    :func:`lu_factor`'s ``(LU, pivots)`` of ``A``; batches broadcast. Gradients reach ``B`` and the
    triangles of ``LU``."""
    empty = getattr(B, "numel", lambda: 1)() == 0  # (PyTorch's kernel runs for a non-empty solution only)
    lu_data, b = _matrices(LU, "lu_solve", square=True, empty=empty), _matrices(B, "lu_solve")
    if low_precision(lu_data) and lu_data.dtype == b.dtype:  # (empty: its triangular solves in float32, as LAPACK's)
        return lu_solve(lu_data.float(), pivots, b.float(), left=left, adjoint=adjoint).to(lu_data.dtype)
    if not left:
        return lu_solve(lu_data, pivots, b.mH, adjoint=not adjoint).mH
    if b.shape[-2] != lu_data.shape[-1]:
        raise RuntimeError(f"linalg.lu_solve: Incompatible shapes of A and B for the equation AX = B "
                           f"({lu_data.shape[-2]}x{lu_data.shape[-1]} and {b.shape[-2]}x{b.shape[-1]})")  # fmt: skip
    P = _pivot_permutation(lu_data, pivots, "linalg.lu_solve")  # noqa: N806
    if not adjoint:  # A = P L U: X = U^-1 L^-1 P^T B
        y = solve_triangular(lu_data, P.mT @ b, upper=False, unitriangular=True)
        x = solve_triangular(lu_data, y, upper=True)
    else:  # A^H = U^H L^H P^T: X = P L^-H U^-H B
        y = solve_triangular(lu_data.mH, b, upper=False)
        x = P @ solve_triangular(lu_data.mH, y, upper=True, unitriangular=True)
    return saved_for_backward(x, lu_data, output=True)  # (PyTorch's keeps LU and the solution)


@stand_in("matrices")
def ldl_factor_ex(A: Tensor, *, hermitian: bool = False, check_errors: bool = False) -> LDLFactorEx:  # noqa: N803
    """``(LD, pivots, info)``: the ``A = L D L^T`` decomposition of each symmetric matrix (its lower
    triangle read) with Bunch-Kaufman pivoting, in LAPACK's compact form: ``D``'s 1x1 and 2x2 blocks
    on the diagonal and first subdiagonal, ``L`` below; a 2x2 block's pivots both negative. No
    gradient (PyTorch has none). ``hermitian``: ``A = L D L^H`` of a Hermitian complex matrix (the same for
    real matrices)."""
    from ..ops.factorizations import ldl_host  # noqa: PLC0415

    x = _matrices(A, "ldl_factor_ex", square=True)
    batch, n = tuple(x.shape[:-2]), x.shape[-1]
    flat = _host(x).reshape((math.prod(batch), n, n))
    parts = [ldl_host(a, hermitian) for a in flat]
    ld = np.stack([p[0] for p in parts]) if parts else np.zeros((0, n, n), x.dtype)
    piv = np.stack([p[1] for p in parts]) if parts else np.zeros((0, n), np.int32)
    info = np.asarray([p[2] for p in parts], np.int32)
    if check_errors and info.size and info.max() > 0:
        i = int(np.argmax(info > 0))
        raise LinAlgError(f"torch.linalg.ldl_factor_ex: {'(Batch element ' + str(i) + '): ' if batch else ''}"
                          f"The factorization could not be completed because the input is not invertible "
                          f"(D[{info[i]},{info[i]}] is zero)")  # fmt: skip
    dev = x._dev
    return LDLFactorEx(Tensor(ld.reshape(x.shape).astype(x.dtype), device=dev),
                       Tensor(piv.reshape(batch + (n,)), device=dev), Tensor(info.reshape(batch), device=dev))  # fmt: skip


@stand_in("matrices")
def ldl_factor(A: Tensor, *, hermitian: bool = False) -> LDLFactor:  # noqa: N803
    """``(LD, pivots)`` of :func:`ldl_factor_ex`; a singular matrix (a zero block of ``D``) raises."""
    LD, pivots, info = ldl_factor_ex(A, hermitian=hermitian)  # noqa: N806
    bad = np.asarray(_host(info)).reshape(-1)
    if bad.size and bad.max() > 0:
        i = int(np.argmax(bad > 0))
        raise LinAlgError(f"torch.linalg.ldl_factor: {'(Batch element ' + str(i) + '): ' if info.ndim else ''}The "
                          f"factorization could not be completed because the input is singular (D[{bad[i]},{bad[i]}] "
                          "is zero); linalg.ldl_factor_ex returns the factors with info")  # fmt: skip
    return LDLFactor(LD, pivots)


def _ldl_parts_host(ld: np.ndarray, piv: np.ndarray, hermitian: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """``(M, D)`` with ``A = M D M^T`` (``hermitian``: ``M D M^H``) of one compact ``LD``: ``M = P(1) L(1) P(2)
    L(2) ...`` (host)."""
    n = ld.shape[0]
    m = np.eye(n, dtype=ld.dtype)
    d = np.zeros_like(ld)
    k = 0
    while k < n:
        size = 1 if piv[k] > 0 else 2
        kp = abs(int(piv[k])) - 1
        kk = k + size - 1
        swap = np.arange(n)
        swap[kk], swap[kp] = kp, kk
        m = m[:, swap]  # M P(k): columns kk and kp exchanged
        step = np.eye(n, dtype=ld.dtype)
        step[k + size :, k : k + size] = ld[k + size :, k : k + size]
        m = m @ step
        d[k : k + size, k : k + size] = ld[k : k + size, k : k + size]
        if size == 2:
            d[k, k + 1] = ld[k + 1, k].conj() if hermitian else ld[k + 1, k]
        k += size
    return m, d


@stand_in("matrices")
def ldl_solve(LD: Tensor, pivots: Tensor, B: Tensor, *, hermitian: bool = False) -> Tensor:  # noqa: N803
    """``X`` with ``A X = B`` from :func:`ldl_factor`'s ``(LD, pivots)`` of ``A``; batches broadcast. No gradient."""
    ld, b = _matrices(LD, "ldl_solve", square=True), _matrices(B, "ldl_solve")
    piv = _tensor(pivots, "ldl_solve")
    n = ld.shape[-1]
    if b.shape[-2] != n:
        raise RuntimeError(f"torch.linalg.ldl_solve: Incompatible shapes of A and B for the equation AX = B "
                           f"({n}x{n} and {b.shape[-2]}x{b.shape[-1]})")  # fmt: skip
    count = math.prod(ld.shape[:-2])
    lh, ph = _host(ld).reshape((count, n, n)), np.asarray(_host(piv)).reshape((count, n))
    herm = hermitian and ld.dtype.kind == "c"
    parts = [_ldl_parts_host(a, p, herm) for a, p in zip(lh, ph, strict=True)]
    shape = tuple(ld.shape[:-2]) + (n, n)
    m = np.stack([p[0] for p in parts]).reshape(shape) if parts else np.zeros(shape, ld.dtype)
    d = np.stack([p[1] for p in parts]).reshape(shape) if parts else np.zeros(shape, ld.dtype)
    with no_grad():
        M, D = Tensor(m, device=ld._dev), Tensor(d, device=ld._dev)  # noqa: N806
        return solve(M.mH if herm else M.mT, solve(D, solve(M, b.detach())))


def _reflectors(A: Tensor, k: int) -> Tensor:  # noqa: N803
    """The Householder vectors ``(..., m, k)``: ``A``'s columns below the diagonal, a 1 on it."""
    m = A.shape[-2]
    return A[..., :, :k].tril(-1) + Tensor(np.eye(m, k, dtype=A.dtype), device=A._dev)


@composite("linalg_householder_product")
def householder_product(A: Tensor, tau: Tensor) -> Tensor:  # noqa: N803
    """The first ``n`` columns of ``H_1 H_2 ... H_k``, ``H_i = I - tau_i v_i v_i^H`` with ``v_i`` the
    ``i``-th column of ``A (..., m, n)`` below the diagonal (a 1 on it): the ``Q`` of :func:`geqrf`'s
    output. Gradients reach ``tau`` and ``A`` below the diagonal."""
    a, t = _matrices(A, "householder_product"), _float(tau, "householder_product")
    m, n = a.shape[-2:]
    k = t.shape[-1] if t.ndim else 0
    if m < n:
        raise RuntimeError("torch.linalg.householder_product: input.shape[-2] must be greater than or equal to "
                           f"input.shape[-1], got {m} and {n}")  # fmt: skip
    if n < k:
        raise RuntimeError("torch.linalg.householder_product: input.shape[-1] must be greater than or equal to "
                           f"tau.shape[-1], got {n} and {k}")  # fmt: skip
    if t.ndim != a.ndim - 1 or tuple(t.shape[:-1]) != tuple(a.shape[:-2]):
        raise RuntimeError("torch.linalg.householder_product: Expected batch dimensions of tau to be equal to "
                           f"input.shape[:-2], but got {tuple(t.shape[:-1])} and {tuple(a.shape[:-2])}")  # fmt: skip
    q = Tensor(np.broadcast_to(np.eye(m, n, dtype=a.dtype), tuple(a.shape[:-2]) + (m, n)).copy(), device=a._dev)
    out = _in_graph_of(_apply_reflectors(a, t, q, left=True, transpose=False), a, t)
    return saved_for_backward(out, a, t, output=True)  # (PyTorch's keeps both inputs and the result)


def _apply_reflectors(a: Tensor, t: Tensor, c: Tensor, *, left: bool, transpose: bool) -> Tensor:
    """``Q C``, ``Q^H C``, ``C Q`` or ``C Q^H`` with ``Q = H_1 ... H_k`` the reflectors of ``(a, t)``
    (``H_i = I - t_i v_i v_i^H``, so ``H_i^H`` has ``conj(t_i)``)."""
    k = t.shape[-1]
    v = _reflectors(a, k)
    if transpose and t.dtype.kind == "c":
        t = t.conj()
    # Q C applies H_k first; Q^T C applies H_1 first (and the reverse from the right)
    order = range(k) if left == transpose else range(k - 1, -1, -1)
    for i in order:
        vi = v[..., :, i : i + 1]  # (..., r, 1)
        ti = t[..., i : i + 1].unsqueeze(-1)
        if left:
            c = c - ti * vi @ (vi.mH @ c)
        else:
            c = c - ti * (c @ vi) @ vi.mH
    return c


@public(method=True)
def orgqr(input: Tensor, tau: Tensor) -> Tensor:  # noqa: A002
    """:func:`householder_product`."""
    return householder_product(input, tau)


@public(method=True)
def ormqr(input: Tensor, tau: Tensor, other: Tensor, left: bool = True, transpose: bool = False) -> Tensor:  # noqa: A002
    """``Q other`` (``left=False``: ``other Q``; ``transpose``: ``Q^H``) with ``Q`` the full unitary
    product of :func:`geqrf`'s reflectors ``(input, tau)``, never formed. Gradients reach all three."""
    refuse_tangents("ormqr", input, tau, other)
    a, t, c = _matrices(input, "ormqr"), _float(tau, "ormqr"), _matrices(other, "ormqr")
    rows = c.shape[-2] if left else c.shape[-1]
    k = t.shape[-1] if t.ndim else 0
    if a.shape[-2] != rows:
        side = "other.shape[-2]" if left else "other.shape[-1]"
        raise RuntimeError(f"torch.ormqr: input.shape[-2] must be equal to {side}, got {a.shape[-2]} and {rows}")
    if k > a.shape[-1] or k > rows:
        raise RuntimeError(f"torch.ormqr: tau.shape[-1] must be less than or equal to input.shape[-1] and to "
                           f"{rows}, got {k}")  # fmt: skip
    out = _in_graph_of(_apply_reflectors(a, t, c, left=left, transpose=transpose), a, t)
    return saved_for_backward(out, a, t, c, output=True)  # (PyTorch's keeps its inputs and the result)


@public(method=True)
def geqrf(input: Tensor) -> Geqrf:  # noqa: A002
    """``(a, tau)``: LAPACK's QR in compact form (``R`` on and above the diagonal, the Householder
    vectors below it, their scales ``tau``); :func:`householder_product` makes ``Q`` of it. No
    gradient (PyTorch has none)."""
    from ..ops.factorizations import geqrf_raw, loop_namespace  # noqa: PLC0415

    x = _matrices(input, "geqrf")
    m, n = x.shape[-2:]
    raw, to_raw, back = loop_namespace(x._dev)
    a, tau = geqrf_raw(raw, to_raw(_flat_batch(x)))
    batch = tuple(x.shape[:-2])
    return Geqrf(_wrap(x, back(raw.reshape(a, x.shape))), _wrap(x, back(raw.reshape(tau, batch + (min(m, n),)))))


def tensorinv(A: Tensor, ind: int = 2) -> Tensor:  # noqa: N803
    """The inverse of ``A`` seen as a linear map from its last dimensions to its first ``ind``:
    ``tensordot(tensorinv(A, ind), A, ind)`` is the identity; the result has shape
    ``A.shape[ind:] + A.shape[:ind]``."""
    x = _float(A, "tensorinv")
    if ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    out_shape, in_shape = tuple(x.shape[:ind]), tuple(x.shape[ind:])
    rows, cols = math.prod(out_shape), math.prod(in_shape)
    if rows != cols:
        raise RuntimeError(f"Expected self to satisfy the requirement prod(self.shape[ind:]) == "
                           f"prod(self.shape[:ind]), but got {cols} != {rows}")  # fmt: skip
    return inv(x.reshape(rows, cols)).reshape(in_shape + out_shape)


def tensorsolve(A: Tensor, B: Tensor, dims: Sequence[int] | None = None) -> Tensor:  # noqa: N803
    """``X`` with ``tensordot(A, X, X.ndim) = B``: ``X`` has shape ``A.shape[B.ndim:]``; ``dims``:
    dimensions of ``A`` moved to the end first."""
    a, b = _float(A, "tensorsolve"), _float(B, "tensorsolve")
    if dims is not None:
        from ..tensors.shape.dims import one as one_dim  # noqa: PLC0415  (``dims`` is the argument here)

        d = [one_dim(a.shape, i, "tensorsolve") for i in dims]
        a = a.movedim(d, list(range(a.ndim - len(d), a.ndim)))
    x_shape = tuple(a.shape[b.ndim :])
    rows, cols = b.numel(), math.prod(x_shape)
    if math.prod(a.shape[: b.ndim]) != rows or rows != cols:
        raise RuntimeError(f"Expected self to satisfy the requirement prod(self.shape[other.ndim:]) == "
                           f"prod(self.shape[:other.ndim]), but got {cols} != {rows}")  # fmt: skip
    return solve(a.reshape(rows, cols), b.reshape(rows)).reshape(x_shape)


# -- torch's top-level decompositions (their own signatures and results) ----------------------
@public(name="svd", method=True)
def _torch_svd(input: Tensor, some: bool = True, compute_uv: bool = True) -> TorchSVD:  # noqa: A002
    """``torch.svd``: ``(U, S, V)`` with ``A = U diag(S) V^T`` (``V``, not ``Vh``); ``some``: the reduced
    factors; ``compute_uv=False``: ``U`` and ``V`` zero-filled ``(m, m)`` and ``(n, n)``."""
    x = _matrices(input, "svd")
    if not compute_uv:
        m, n = x.shape[-2:]
        batch = tuple(x.shape[:-2])
        zeros = [Tensor.zeros(batch + (r, r), dtype=x.dtype, device=x._dev) for r in (m, n)]
        return TorchSVD(zeros[0], svdvals(x), zeros[1])
    # (the complete factors' extra columns take no gradient, as PyTorch's)
    U, S, Vh = svd(x, full_matrices=not some)  # noqa: N806
    return TorchSVD(U, S, Vh.mH)


@public(name="qr", method=True)
def _torch_qr(input: Tensor, some: bool = True) -> QR:  # noqa: A002
    """``torch.qr``: :func:`qr` reduced (``some``) or complete."""
    return structseq("qr", ("Q", "R"))(*qr(input, "reduced" if some else "complete"))


@public(name="lu")
def _torch_lu(A: Tensor, pivot: bool = True, get_infos: bool = False) -> tuple:  # noqa: N803
    """``torch.lu``: ``(LU, pivots)`` (and ``infos`` with ``get_infos``) of :func:`lu_factor_ex`, which
    never raises for a singular matrix."""
    LU, pivots, info = lu_factor_ex(A, pivot=pivot)  # noqa: N806
    return (LU, pivots, info) if get_infos else (LU, pivots)


@public(name="lu", function=False, method=True)
def _lu_method(self: Tensor, pivot: bool = True, get_infos: bool = False) -> tuple:
    """``Tensor.lu``: :func:`_torch_lu` of this tensor."""
    return _torch_lu(self, pivot, get_infos)


@public(name="lu_solve", method=True)
def _torch_lu_solve(b: Tensor, LU_data: Tensor, LU_pivots: Tensor) -> Tensor:  # noqa: N803
    """``torch.lu_solve(b, LU_data, LU_pivots)``: :func:`lu_solve` with its arguments in that order."""
    return lu_solve(LU_data, LU_pivots, b)


@public(method=True)
def triangular_solve(b: Tensor, A: Tensor, upper: bool = True, transpose: bool = False,  # noqa: N803
                     unitriangular: bool = False) -> TriangularSolve:  # fmt: skip
    """``(X, A.clone())`` with ``A X = b`` (``transpose``: ``A^T X = b``) for triangular ``A`` (only its
    ``upper`` or lower triangle read); batches broadcast."""
    a, rhs = _matrices(A, "triangular_solve", square=True), _matrices(b, "triangular_solve")
    coef, up = (a.mT, not upper) if transpose else (a, upper)
    x = solve_triangular(coef, rhs, upper=up, unitriangular=unitriangular)
    # (PyTorch's keeps b, A and the solution)
    return TriangularSolve(saved_for_backward(x, rhs, a, output=True), a.clone())


def _cholesky_product(factor: Tensor, upper: bool) -> Tensor:
    return factor.mH @ factor if upper else factor @ factor.mH


@public(method=True)
def cholesky_solve(B: Tensor, L: Tensor, upper: bool = False) -> Tensor:  # noqa: N803
    """``X`` with ``A X = B`` for ``A = L L^T`` (``upper``: ``A = U^T U``) given the Cholesky factor;
    batches broadcast. The values come from the factor's triangle; the gradient is PyTorch's
    (``ops.GivenCholeskySolve``: it reaches the whole of ``L``; infinite and NaN for a singular factor)."""
    rhs, f = _matrices(B, "cholesky_solve"), _matrices(L, "cholesky_solve", square=True)
    same_dtype("cholesky_solve", rhs, ("L", f))  # (PyTorch's LAPACK path promotes none)
    lower = f.mH if upper else f
    with no_grad():  # L^-H (L^-1 B)
        exact = solve_triangular(lower.mH, solve_triangular(lower, rhs, upper=False), upper=True)
    if not (differentiated(rhs) or differentiated(f)):
        return exact
    batch = tuple(exact.shape[:-2])
    out = ops.GivenCholeskySolve.apply(rhs.expand(batch + rhs.shape[-2:]), f.expand(batch + f.shape[-2:]), exact,
                                       args=upper)  # fmt: skip
    return saved_for_backward(out, rhs, f, output=True)  # (PyTorch's keeps both inputs and the result)


@public(method=True)
def cholesky_inverse(L: Tensor, upper: bool = False) -> Tensor:  # noqa: N803
    """The inverse of ``A = L L^T`` (``upper``: ``U^T U``) given its Cholesky factor; the gradient, as
    PyTorch's, is that of ``inv(L L^T)``."""
    f = _matrices(L, "cholesky_inverse", square=True)
    lower = f.mH if upper else f
    with no_grad():
        eye = Tensor(np.broadcast_to(np.eye(f.shape[-1], dtype=f.dtype), f.shape).copy(), device=f._dev)
        linv = solve_triangular(lower.detach(), eye, upper=False)
        exact = linv.mH @ linv
    if not differentiated(f):
        return exact
    out = _exact_with_gradient_of(exact, inv(_cholesky_product(f, upper)))
    return saved_for_backward(out, f, output=True)  # (PyTorch's keeps the factor and the result)


def ger(input: Tensor, vec2: Tensor) -> Tensor:  # noqa: A002
    """``torch.ger``: the outer product of two vectors (``torch.outer``'s older name)."""
    from ..tensors.tensor_functions import outer  # noqa: PLC0415

    return outer(_tensor(input, "ger"), _tensor(vec2, "ger"))


def _approximate_basis(a: Tensor, q: int, niter: int) -> Tensor:
    """``Q (..., m, q)`` with orthonormal columns whose span nearly holds ``a``'s range (Halko et al.'s
    randomised range finder with ``niter`` power iterations)."""
    from ..tensors.factories.creation import randn  # noqa: PLC0415

    r = randn(a.shape[-1], q, dtype=a.dtype, device=a.device)
    basis = qr(a @ r).Q
    for _ in range(niter):
        basis = qr(a.mH @ basis).Q
        basis = qr(a @ basis).Q
    return basis


@public
def svd_lowrank(A: Tensor, q: int | None = 6, niter: int = 2, M: Tensor | None = None) -> tuple[Tensor, Tensor, Tensor]:  # noqa: N803
    """A randomised rank-``q`` ``(U, S, V)`` (a plain tuple) with ``A - M ~ U diag(S) V^T`` (``U (..., m, q)``, ``V (..., n, q)``);
    draws from the global generator, so only the reconstruction, not the factors, is comparable."""
    x = _matrices(A, "svd_lowrank")
    q = 6 if q is None else int(q)
    if M is not None:
        x = x - _tensor(M, "svd_lowrank").expand(x.shape)
    m, n = x.shape[-2:]
    a = x.mH if m < n else x
    basis = _approximate_basis(a, q, niter)
    U, S, Vh = svd(basis.mH @ a, full_matrices=False)  # noqa: N806
    U, V = basis @ U, Vh.mH  # noqa: N806
    return (V, S, U) if m < n else (U, S, V)  # (a plain tuple, as PyTorch's)


@public
def pca_lowrank(A: Tensor, q: int | None = None, center: Any = True, niter: int = 2) -> tuple[Tensor, Tensor, Tensor]:  # noqa: N803
    """:func:`svd_lowrank` of ``A`` with its column means taken away (``center``); ``q`` defaults to
    ``min(6, m, n)``."""
    x = _matrices(A, "pca_lowrank")
    m, n = x.shape[-2:]
    if q is None:
        q = min(6, m, n)
    elif not 0 <= q <= min(m, n):
        raise ValueError(f"q(={q}) must be non-negative integer and not greater than min(m, n)={min(m, n)}")
    if niter < 0:
        raise ValueError(f"niter(={niter}) must be non-negative integer")
    if center:
        x = x - x.mean(-2, keepdim=True)
    return svd_lowrank(x, q, niter=niter)


# torch's top-level spellings
@public(method=True)
def inverse(input: Tensor) -> Tensor:  # noqa: A002
    """:func:`inv`."""
    return inv(input)
