"""The factorisations no array namespace's ``linalg`` offers, on raw arrays: LU with partial
pivoting (LAPACK's ``getrf``), Householder QR in LAPACK's compact form (``geqrf``) and the
symmetric-indefinite ``L D L^T`` with Bunch-Kaufman pivoting (``sytrf``), each following
LAPACK's choices (pivot rows, reflector signs, 1x1 or 2x2 blocks) so the results are
PyTorch's up to rounding.

The LU and Householder loops run one column at a time over a whole batch ``(B, m, n)`` in the
device's namespace (``raw``: NumPy or CuPy); the Bunch-Kaufman loop decides per matrix and
runs on the host (``ldl_host``). Their gradients, where PyTorch has them, are composites in
``tinygrad_attn/linalg.py``: the pivots these give are constants there.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..engine.quiet import quiet


def loop_namespace(device: Any) -> tuple[Any, Any, Any]:
    """``(raw, to_raw, back)``: the namespace the raw-array loops of this package run in (those
    here, the Bessel and incomplete gamma series), and the moves of an array into it and back. The
    device's own namespace where it is NumPy or CuPy (fancy indexing, item assignment, ``astype``);
    NumPy on the host otherwise (a strict array API namespace has none of those)."""
    raw = device.xp
    if getattr(raw, "__name__", "") in ("numpy", "cupy"):
        return raw, _same, _same
    return np, lambda a: np.asarray(device.to_host(a)), device.asarray


def _same(a: Any) -> Any:
    return a


@quiet()
def lu_raw(raw: Any, a: Any) -> tuple[Any, Any, Any]:
    """``(LU, pivots, perm)`` of ``a (B, m, n)``: ``LU`` packed (``L`` unit lower below the diagonal,
    ``U`` on and above), ``pivots (B, k)`` LAPACK's 1-based row interchanges, ``perm (B, m)`` the
    rows of ``a`` in the order of ``L U`` (``(P^T A)[i] = A[perm[i]]``)."""
    a = raw.array(a, copy=True)
    b, m, n = a.shape
    k = min(m, n)
    rows = raw.arange(b)
    pivots = raw.zeros((b, k), dtype=raw.int32)
    perm = raw.broadcast_to(raw.arange(m), (b, m)).copy()
    for j in range(k):
        # (the first largest magnitude, as LAPACK's idamax; izamax's |re| + |im| for complex; a NaN column keeps row j)
        col = a[:, j:, j]
        size = raw.abs(col.real) + raw.abs(col.imag) if col.dtype.kind == "c" else raw.abs(col)
        p = raw.argmax(raw.nan_to_num(size, nan=-1.0), axis=-1) + j
        pivots[:, j] = p + 1
        row_j, row_p = a[:, j, :].copy(), a[rows, p, :].copy()
        a[:, j, :], a[rows, p, :] = row_p, row_j
        idx_j, idx_p = perm[:, j].copy(), perm[rows, p].copy()
        perm[:, j], perm[rows, p] = idx_p, idx_j
        if j + 1 < m:
            piv = a[:, j, j]
            # (a zero pivot leaves its column unscaled, as LAPACK's: that column is zero below it)
            scale = raw.where(piv == 0, 1.0, piv)
            a[:, j + 1 :, j] = a[:, j + 1 :, j] / scale[:, None]
            a[:, j + 1 :, j + 1 :] -= a[:, j + 1 :, j, None] * a[:, j, None, j + 1 :]
    return a, pivots, perm


def permutation_of_pivots(raw: Any, pivots: Any, m: int) -> Any:
    """``perm (B, m)`` from LAPACK's 1-based interchanges ``pivots (B, k)``, applied in order."""
    b, k = pivots.shape
    rows = raw.arange(b)
    perm = raw.broadcast_to(raw.arange(m), (b, m)).copy()
    for j in range(k):
        p = pivots[:, j].astype(raw.int64) - 1
        idx_j, idx_p = perm[:, j].copy(), perm[rows, p].copy()
        perm[:, j], perm[rows, p] = idx_p, idx_j
    return perm


@quiet()
def geqrf_raw(raw: Any, a: Any) -> tuple[Any, Any]:
    """``(QR, tau)`` of ``a (B, m, n)`` as LAPACK's ``geqrf``: ``R`` on and above the diagonal, the
    Householder vectors (their leading 1 not stored) below it, ``H_j = I - tau_j v_j v_j^H`` (complex: as
    ``zgeqrf``, ``R``'s diagonal real and each ``H_j^H`` applied to the columns after it)."""
    a = raw.array(a, copy=True)
    b, m, n = a.shape
    k = min(m, n)
    tau = raw.zeros((b, k), dtype=a.dtype)
    for j in range(k):
        alpha = a[:, j, j]
        below = a[:, j + 1 :, j]
        # (scaled as LAPACK's dnrm2: the squares of tiny entries would underflow to a zero norm)
        size = raw.abs(below)
        big = size.max(-1) if below.shape[-1] else raw.zeros(alpha.shape, dtype=size.dtype)
        unit = raw.where(big > 0, big, 1.0)
        xnorm = big * raw.sqrt(((size / unit[:, None]) ** 2).sum(-1))
        # (as LAPACK's dlarfg: beta = -sign(alpha) |(alpha, x)|; nothing below the diagonal: H = I; zlarfg: the
        # sign of alpha's real part, H = I only where alpha is real too)
        if a.dtype.kind == "c":
            beta = -raw.copysign(raw.hypot(raw.hypot(alpha.real, alpha.imag), xnorm), alpha.real)
            skip = (xnorm == 0) & (alpha.imag == 0)
        else:
            beta = -raw.copysign(raw.hypot(alpha, xnorm), alpha)
            skip = xnorm == 0
        safe_beta = raw.where(skip, 1.0, beta)
        t = raw.where(skip, 0.0, (beta - alpha) / safe_beta)
        denom = raw.where(skip, 1.0, alpha - beta)
        a[:, j + 1 :, j] = raw.where(skip[:, None], below, below / denom[:, None])
        a[:, j, j] = raw.where(skip, alpha, beta)
        tau[:, j] = t
        if j + 1 < n:  # the trailing columns times H_j
            v = raw.concatenate([raw.ones((b, 1), dtype=a.dtype), a[:, j + 1 :, j]], axis=1)  # (B, m - j)
            w = (raw.conj(v)[:, :, None] * a[:, j:, j + 1 :]).sum(1)  # v^H A: (B, n - j - 1)
            a[:, j:, j + 1 :] -= raw.conj(t)[:, None, None] * v[:, :, None] * w[:, None, :]
    return a, tau


#: Bunch-Kaufman's threshold between a 1x1 and a 2x2 pivot, (1 + sqrt(17)) / 8 as in LAPACK.
_ALPHA = (1.0 + math.sqrt(17.0)) / 8.0


def _cabs1(x: Any) -> Any:
    """LAPACK's ``cabs1``, ``|re| + |im|`` (the magnitude its complex pivot searches compare); ``|x|`` if real."""
    x = np.asarray(x)
    return np.abs(x.real) + np.abs(x.imag) if x.dtype.kind == "c" else np.abs(x)


@quiet()
def ldl_host(a: np.ndarray, hermitian: bool = False) -> tuple[np.ndarray, np.ndarray, int]:
    """``(LD, pivots, info)`` of one symmetric ``a (n, n)`` (its lower triangle read), as LAPACK's
    ``sytrf`` with ``uplo='L'``: ``D`` block diagonal (1x1 and 2x2 blocks) on the diagonal and the
    first subdiagonal, ``L`` unit lower below; ``pivots`` 1-based, a 2x2 block's two entries both
    ``-p``; ``info`` the 1-based index of the first zero pivot (0: none). Host arrays. Complex: the
    pivots compared by ``|re| + |im|`` as ``zsytrf``'s; ``hermitian``: ``A = L D L^H`` as ``zhetrf``'s (the
    diagonal read by its real part)."""
    n = a.shape[0]
    herm = hermitian and a.dtype.kind == "c"
    w = np.tril(a).astype(a.dtype, copy=True)
    if herm:
        w[np.diag_indices(n)] = w.diagonal().real
    w = w + (np.tril(w, -1).conj().T if herm else np.tril(w, -1).T)  # (the full matrix, from its lower triangle)
    piv = np.zeros(n, dtype=np.int32)
    info = 0
    k = 0

    def diag_size(x: Any) -> float:
        return float(abs(x.real)) if herm else float(_cabs1(x))

    while k < n:
        absakk = diag_size(w[k, k])
        if k + 1 < n:
            sub = _cabs1(w[k + 1 :, k])
            imax = k + 1 + int(np.argmax(sub))
            colmax = float(sub[imax - k - 1])
        else:
            imax, colmax = k, 0.0
        if max(absakk, colmax) == 0 or math.isnan(absakk):
            if info == 0:
                info = k + 1
            kp, size = k, 1
        else:
            if absakk >= _ALPHA * colmax:
                kp, size = k, 1
            else:
                # the largest off-diagonal entry in row/column imax
                row = _cabs1(w[imax, k:imax])
                rowmax = float(row.max()) if row.size else 0.0
                if imax + 1 < n:
                    rowmax = max(rowmax, float(_cabs1(w[imax + 1 :, imax]).max()))
                if absakk >= _ALPHA * colmax * (colmax / rowmax):
                    kp, size = k, 1
                elif diag_size(w[imax, imax]) >= _ALPHA * rowmax:
                    kp, size = imax, 1
                else:
                    kp, size = imax, 2
            kk = k + size - 1
            if kp != kk:  # symmetric interchange of rows and columns kk and kp in the trailing matrix
                # (the columns already done stay: LAPACK's L is P(1) L(1) P(2) L(2) ..., interchanges between)
                order = np.arange(k, n)
                order[kk - k], order[kp - k] = kp, kk
                w[k:, k:] = w[np.ix_(order, order)]
            adj = (lambda x: x.conj().T) if herm else (lambda x: x.T)
            if size == 1:
                d = w[k, k].real if herm else w[k, k]
                if k + 1 < n:
                    col = w[k + 1 :, k] / d
                    w[k + 1 :, k + 1 :] -= np.outer(col, w[k + 1 :, k].conj() if herm else w[k + 1 :, k])
                    w[k + 1 :, k] = col
                    w[k, k + 1 :] = col.conj() if herm else col
            else:
                d = w[k : k + 2, k : k + 2].copy()
                if k + 2 < n:
                    c = w[k + 2 :, k : k + 2].copy()  # (n - k - 2, 2)
                    lcols = adj(np.linalg.solve(adj(d), adj(c)))  # C D^-1
                    w[k + 2 :, k + 2 :] -= lcols @ adj(c)
                    w[k + 2 :, k : k + 2] = lcols
                    w[k : k + 2, k + 2 :] = adj(lcols)
        if size == 1:
            piv[k] = kp + 1
        else:
            piv[k] = piv[k + 1] = -(kp + 1)
        k += size
    ld = np.tril(w)
    # (a 2x2 block keeps its subdiagonal entry; the rest of the first subdiagonal is L's)
    return ld, piv, info


@quiet()
def lu_solve_raw(raw: Any, lu: Any, b: Any) -> Any:
    """``U^-1 L^-1 b`` for a packed ``lu (B, n, n)`` and ``b (B, n, k)`` (rows already in pivot order),
    as the BLAS ``trsm`` PyTorch's CPU build calls: each unknown times the reciprocal of its diagonal
    entry, then taken from the rows above; so a zero on ``U``'s diagonal gives the infinities and NaNs
    (``0 * inf``) PyTorch's solvers give for a singular matrix."""
    x = raw.array(b, copy=True)
    n = lu.shape[-1]
    for j in range(n):  # L has a unit diagonal: forward substitution
        if j + 1 < n:
            x[:, j + 1 :, :] -= lu[:, j + 1 :, j, None] * x[:, j, None, :]
    for j in range(n - 1, -1, -1):
        xj = x[:, j, :] * (1.0 / lu[:, j, j, None])
        x[:, j, :] = xj
        if j:
            x[:, :j, :] -= xj[:, None, :] * lu[:, :j, j, None]
    return x


@quiet()
def cholesky_host(a: np.ndarray) -> tuple[np.ndarray, int]:
    """``(L, info)`` of one matrix (its lower triangle read) as LAPACK's unblocked ``potf2``: where the
    leading minor of order ``info`` is not positive-definite the loop stops, that diagonal entry
    holding what would have been square-rooted and the columns after it untouched (what PyTorch's
    ``cholesky_ex`` returns); ``info`` 0 where it completes. A host array."""
    n = a.shape[0]
    w = np.tril(a).astype(a.dtype, copy=True)
    for j in range(n):
        row = w[j, :j].conj()  # (potf2's L L^H: the real diagonal of a Hermitian matrix)
        ajj = (w[j, j] - w[j, :j] @ row).real
        if not ajj > 0:  # (NaN too)
            w[j, j] = ajj
            return w, j + 1
        ajj = math.sqrt(ajj)
        w[j, j] = ajj
        if j + 1 < n:
            # (times the reciprocal, as potf2's scaling: where the loop stops next, its remainder is LAPACK's)
            w[j + 1 :, j] = (w[j + 1 :, j] - w[j + 1 :, :j] @ row) * (1.0 / ajj)
    return w, 0


@quiet()
def lu_solve_adjoint_raw(raw: Any, lu: Any, b: Any) -> Any:
    """``L^-T U^-T b`` (the solve with ``A^T`` before the rows are put back), as :func:`lu_solve_raw`:
    ``U^T`` forward, each unknown times its diagonal entry's reciprocal, then ``L^T`` backward."""
    x = raw.array(b, copy=True)
    n = lu.shape[-1]
    for j in range(n):
        xj = x[:, j, :] * (1.0 / lu[:, j, j, None])
        x[:, j, :] = xj
        if j + 1 < n:
            x[:, j + 1 :, :] -= xj[:, None, :] * lu[:, j, j + 1 :, None]
    for j in range(n - 1, 0, -1):
        x[:, :j, :] -= lu[:, j, :j, None] * x[:, j, None, :]
    return x
