"""The matrix functions that no composite computes accurately: inverse, solve, determinant,
log-absolute-determinant, Cholesky factor and the symmetric eigen-decomposition, over
batches of matrices (``(..., n, n)``), each one call of the array namespace's ``linalg``
forward, and ``Tril``, the triangle of the last two axes (the mask the backward formulas
take). Each backward is written in ``ns`` ops (these ops among them), so gradients of every
order follow. The other ``torch.linalg`` functions (``tinygrad_attn/linalg/__init__.py``) are
composites of these.

Complex matrices: the holomorphic ops (inverse, solve, determinant, triangular solves, LU) keep
their real formulas, which the engine reads at the conjugated inputs (PyTorch's conjugate
convention). The others (``log|det|``, Cholesky, QR, SVD, ``eigh``, the pseudo-inverse) depend on
``A^H`` and say ``conjugate_backward = False``: their formulas are PyTorch's, written with the
conjugate transpose (:func:`_mh`), which is the transpose for real matrices.
"""

from __future__ import annotations

import numpy as np

from ..engine.function import COMPLEX_PARTS, Function


def _mt(ns, x):
    return ns.matrix_transpose(x)


def _is_complex(x) -> bool:
    return getattr(getattr(x, "dtype", None), "kind", None) == "c"


def _conj(ns, x):
    """``conj(x)`` where ``x`` is complex, else ``x`` itself."""
    return ns.apply(COMPLEX_PARTS["conj"], x) if _is_complex(x) else x


def _real(ns, x):
    """The real part of ``x`` where it is complex, else ``x`` itself."""
    return ns.apply(COMPLEX_PARTS["real"], x) if _is_complex(x) else x


def _mh(ns, x):
    """The conjugate transpose of the last two axes (the transpose of a real matrix)."""
    return _conj(ns, ns.matrix_transpose(x))


class LinAlgError(RuntimeError):
    """A matrix the decomposition cannot take (singular, not positive-definite), as ``torch.linalg.LinAlgError``
    (``tga.linalg.LinAlgError``)."""


# (the class's name as PyTorch's, ``torch._C._LinAlgError``: a program printing ``type(e).__name__`` prints it)
LinAlgError.__name__ = LinAlgError.__qualname__ = "_LinAlgError"


class Tril(Function):
    """``args = k``: the entries on and below the ``k``-th diagonal of the last two axes; zeros above.
    Linear and self-adjoint: its gradient is ``Tril`` of ``g``."""

    __slots__ = ()
    primitive = True
    name = "tril"
    keep = ()
    reads_output = False

    def forward(self, ns, a):
        raw = ns.device.xp
        n, m = a.shape[-2], a.shape[-1]
        # (the mask made on the host and moved to a's device: an array API namespace makes arange on its default one)
        keep = ns.device.asarray(np.arange(m)[None, :] - np.arange(n)[:, None] <= self.args)
        return raw.where(keep, a, raw.zeros_like(a))

    def backward(self, g, ns, inputs, out):
        return (ns.apply(Tril, g, args=self.args),)


class Inv(Function):
    """The inverse; ``d inv(A) = -inv(A) dA inv(A)``."""

    __slots__ = ()
    primitive = True
    name = "inv"
    keep = ()

    def forward(self, ns, a):
        return ns.device.xp.linalg.inv(a)

    def backward(self, g, ns, inputs, out):
        t = _mt(ns, out)
        return (-ns.matmul(ns.matmul(t, g), t),)


class GivenInverse(Function):
    """The inverse ``X`` of input 0, its value given as input 1 (LAPACK's infinities and NaNs for a
    singular matrix, as ``inv_ex`` returns it), with :class:`Inv`'s gradient ``-X^T g X^T`` read from
    that value, as PyTorch's: so a singular matrix's inverse is in the graph too."""

    __slots__ = ()
    name = "inv_given"
    operands = ("A", "X")
    keep = ()

    def forward(self, ns, a, x):
        return x

    def backward(self, g, ns, inputs, out):
        t = _mt(ns, out)
        return -ns.matmul(ns.matmul(t, g), t), None


class PseudoInverse(Function):
    """The pseudo-inverse ``P`` of input 0, its value given as input 1 (the caller's rule says which
    singular values count), differentiated at constant rank as PyTorch's ``pinv``: ``gA = -P^T g P^T +
    (I - A P) g^T P P^T + P^T P g^T (I - P A)`` (Golub and Pereyra), in ``ns`` ops on the output
    itself, so gradients of every order follow: of every rank, dropped singular values included. Complex:
    the same with conjugate transposes, as PyTorch's."""

    __slots__ = ()
    name = "pinv"
    operands = ("A", "P")
    keep = (0,)
    conjugate_backward = False

    def forward(self, ns, a, p):
        return p

    def backward(self, g, ns, inputs, out):
        a, mm = inputs[0], ns.matmul
        pt, gt = _mh(ns, out), _mh(ns, g)
        first = -mm(mm(pt, g), pt)
        left = mm(gt - mm(a, mm(out, gt)), mm(out, pt))
        right = mm(mm(pt, out), gt - mm(mm(gt, out), a))
        return first + left + right, None


class Solve(Function):
    """``X`` with ``A X = B`` (``A (..., n, n)``, ``B (..., n, k)`` of one batch shape):
    ``gB = solve(A^T, g)``, ``gA = -gB X^T``."""

    __slots__ = ()
    primitive = True
    name = "solve"
    operands = ("A", "B")
    keep = (0,)

    def forward(self, ns, a, b):
        return ns.device.xp.linalg.solve(a, b)

    def backward(self, g, ns, inputs, out):
        gb = ns.apply(Solve, _mt(ns, inputs[0]), g)
        return -ns.matmul(gb, _mt(ns, out)), gb


class TriangularSubstitution(Function):
    """``args = (upper, unitriangular)``: ``X`` with ``T X = B`` for the triangle ``T`` of input 0 (the other
    triangle never read; a unit diagonal if ``unitriangular``) and ``B`` input 1, of one batch shape, by
    substitution as the BLAS ``trsm`` PyTorch's CPU build calls: each unknown times its diagonal entry's
    reciprocal, then taken from the rows left. So a zero on the diagonal gives PyTorch's infinities and
    NaNs where the array namespace's solve would raise (a diagonal without zeros: one LAPACK solve).
    ``gB = X'`` of ``T^T X' = g``, ``gA = -gB X^T`` on the triangle read."""

    __slots__ = ()
    name = "triangular_substitution"
    operands = ("A", "B")
    keep = (0,)

    def forward(self, ns, a, b):
        return self.solve(ns.device, a, b, *self.args)

    @staticmethod
    def solve(dev, a, b, upper: bool, unit: bool):
        """The values, on arrays of ``dev``: one LAPACK solve with the triangle where its diagonal has no
        zero, else the substitution."""
        from .factorizations import loop_namespace  # noqa: PLC0415

        xp, ops = dev.xp, dev.ops
        n = a.shape[-1]
        diag = xp.diagonal(a, axis1=-2, axis2=-1) if hasattr(xp, "diagonal") else xp.linalg.diagonal(a)
        if unit or not bool(xp.any(diag == 0)):
            tri = ops.triu(a, k=0) if upper else ops.tril(a, k=0)
            if unit:
                tri = xp.where(dev.asarray(np.eye(n, dtype=bool)), xp.ones_like(tri), tri)
            return xp.linalg.solve(tri, b)
        raw, to_raw, back = loop_namespace(dev)
        a, x = to_raw(a), raw.array(to_raw(b), copy=True)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            for j in range(n - 1, -1, -1) if upper else range(n):
                if not unit:
                    x[..., j, :] = x[..., j, :] * (1.0 / a[..., j, j, None])
                xj = x[..., j : j + 1, :]
                if upper and j:
                    x[..., :j, :] -= a[..., :j, j : j + 1] * xj
                elif not upper and j + 1 < n:
                    x[..., j + 1 :, :] -= a[..., j + 1 :, j : j + 1] * xj
        return back(x)

    def backward(self, g, ns, inputs, out):
        upper, unit = self.args
        a = inputs[0]
        gb = ns.apply(TriangularSubstitution, _mt(ns, a), g, args=(not upper, unit))
        ga = -ns.matmul(gb, _mt(ns, out))
        k = 1 if unit else 0  # (the triangle read: a unit diagonal is not)
        if upper:
            ga = _mt(ns, ns.apply(Tril, _mt(ns, ga), args=-k))
        else:
            ga = ns.apply(Tril, ga, args=-k)
        return ga, gb


class GivenCholeskySolve(Function):
    """``X`` with ``F F^T X = B`` (``args = upper``: ``F^T F X = B``) for inputs ``(B, F)``, its value given as
    input 2, with PyTorch's gradient read from that value: ``gB`` the same solve of ``g``, ``gF = -(gB X^T +
    X gB^T) F`` (upper: ``-F (...)``), its solves as :class:`TriangularSubstitution`'s, so a factor with a
    zero on its diagonal gives PyTorch's infinities and NaNs. Complex: ``F F^H`` (``F^H F``), the same
    formula with conjugate transposes, as PyTorch's."""

    __slots__ = ()
    name = "cholesky_solve_given"
    operands = ("B", "F", "X")
    keep = (1,)
    conjugate_backward = False

    def forward(self, ns, b, f, x):
        return x

    def backward(self, g, ns, inputs, out):
        f, upper = inputs[1], self.args
        recording = getattr(ns, "recording", False)
        dev = f._dev if recording else ns.device
        fa, garr = (ns.values(f), ns.values(g)) if recording else (f, g)
        raw_mh = (lambda t: dev.xp.conj(dev.ops.matrix_transpose(t))) if _is_complex(fa) else dev.ops.matrix_transpose
        lower = raw_mh(fa) if upper else fa
        y = TriangularSubstitution.solve(dev, lower, garr, False, False)  # L^-1 g
        x = TriangularSubstitution.solve(dev, raw_mh(lower), y, True, False)  # L^-H L^-1 g
        # (recorded, gB is this op again, as PyTorch's cholesky_solve of g: its gradient reaches all of F)
        gb = ns.apply(GivenCholeskySolve, g, f, ns.const(x), args=upper) if recording else x
        common = ns.matmul(gb, _mh(ns, out))
        common = common + _mh(ns, common)
        gf = -ns.matmul(f, common) if upper else -ns.matmul(common, f)
        return gb, gf, None


class Det(Function):
    """The determinant; ``d det(A) = det(A) tr(inv(A) dA)``: the gradient is the cofactor matrix
    ``det(A) inv(A)^T`` where ``A`` is invertible. At a singular matrix, as PyTorch's: a recorded
    gradient (``create_graph``) is the cofactor matrix from the SVD, ``det(U) det(Vh) U diag(c) Vh`` with
    ``c[i]`` the product of the other singular values (taken where ``|det| < 100 eps``, PyTorch's
    switch); a plain one is 0 where the determinant is exactly 0 (PyTorch's solve with the zero pivots
    nudged, whose right side ``det(A) g`` is 0)."""

    __slots__ = ()
    primitive = True
    name = "det"
    keep = (0,)

    def forward(self, ns, a):
        return ns.device.xp.linalg.det(a)

    def backward(self, g, ns, inputs, out):
        a = inputs[0]
        recording = getattr(ns, "recording", False)
        dev = a._dev if recording else ns.device
        lead = tuple(out.shape)
        if a.shape[-1] == 1:  # (a 1x1 matrix's cofactor is 1, a constant, as PyTorch's)
            return (ns.reshape(g, lead + (1, 1)),)
        scale = ns.reshape(g * out, lead + (1, 1))
        d = np.asarray(dev.to_host(ns.values(out) if recording else out))
        singular = np.abs(d) < 100 * np.finfo(a.dtype).eps if recording else d == 0
        if not singular.any():
            return (scale * _mt(ns, ns.apply(Inv, a)),)
        n = a.shape[-1]
        mask = ns.const(dev.asarray(np.broadcast_to(singular[..., None, None], lead + (n, n)).copy()))
        eye = ns.const(dev.asarray(np.broadcast_to(np.eye(n, dtype=bool), lead + (n, n)).copy()))
        # (the invertible matrices' route, each singular one replaced by I so that nothing raises)
        safe = ns.where(mask, ns.where(eye, ns.zeros_like(a) + 1.0, ns.zeros_like(a)), a)
        regular = scale * _mt(ns, ns.apply(Inv, safe))
        if not recording:
            return (ns.where(mask, ns.zeros_like(regular), regular),)
        # (the SVD route for the singular matrices only: each invertible one replaced by diag(1, ..., n), whose
        # distinct singular values keep the SVD's second derivative free of NaN there)
        spread = np.broadcast_to(np.diag(np.arange(1.0, n + 1)).astype(a.dtype), lead + (n, n)).copy()
        cofactors = _svd_cofactors(ns, ns.where(mask, a, ns.const(dev.asarray(spread))))
        return (ns.where(mask, ns.reshape(g, lead + (1, 1)) * cofactors, regular),)


def _svd_cofactors(ns, a):
    """The cofactor matrix of each (recorded) ``a``, ``det(U) det(Vh) U diag(c) Vh`` with ``c[i]`` the
    product of the singular values but the ``i``-th: defined at singular matrices too."""
    dev = a._dev
    raw = dev.xp
    u0, s0, vh0 = raw.linalg.svd(ns.values(a) + 0.0)
    u, s, vh = (ns.apply(SvdFactor, a, ns.const(u0), ns.const(s0), ns.const(vh0), args=w) for w in ("U", "S", "Vh"))
    n = s0.shape[-1]
    lead = tuple(s0.shape[:-1])
    sign = ns.const(raw.asarray(raw.sign(raw.linalg.det(u0) * raw.linalg.det(vh0))))
    cols = [ns.reshape(s[..., i], lead + (1,)) for i in range(n)]
    left, right = [None] * n, [None] * n  # the products before and after each index
    for i in range(1, n):
        left[i] = cols[i - 1] if left[i - 1] is None else left[i - 1] * cols[i - 1]
        j = n - 1 - i
        right[j] = cols[j + 1] if right[j + 1] is None else right[j + 1] * cols[j + 1]
    parts = [p if q is None else q if p is None else p * q for p, q in zip(left, right)]
    others = ns.stack([p if p is not None else ns.zeros_like(cols[0]) + 1.0 for p in parts], -1)
    others = ns.reshape(others, lead + (1, n)) * ns.reshape(sign, lead + (1, 1))
    return ns.matmul(u * others, vh)


class LogAbsDet(Function):
    """``log|det(A)|``; its gradient is ``inv(A)^H`` (``inv(A)^T`` for a real ``A``). At a singular matrix the
    backward raises :class:`LinAlgError`, as PyTorch's (its solve with ``A``)."""

    __slots__ = ()
    primitive = True
    name = "logabsdet"
    keep = (0,)
    reads_output = False
    conjugate_backward = False

    def forward(self, ns, a):
        return ns.device.xp.linalg.slogdet(a)[1]

    def backward(self, g, ns, inputs, out):
        a = inputs[0]
        try:
            inverse_t = _mh(ns, ns.apply(Inv, a))
        except Exception as err:  # (NumPy's, CuPy's and array_api_strict's LinAlgError have no common base)
            if "LinAlgError" not in type(err).__name__:
                raise
            if getattr(ns, "recording", False):
                raise LinAlgError(f"linalg.slogdet: the gradient of log|det(A)| at a singular matrix A (of shape "
                                  f"{tuple(a.shape)}): solving with it failed because it is singular") from None  # fmt: skip
            inverse_t = _inverse_transposed_by_lu(ns, a)
            if _is_complex(a):
                inverse_t = ns.device.xp.conj(inverse_t)
        return (ns.reshape(g, tuple(g.shape) + (1, 1)) * inverse_t,)


class DetSign(Function):
    """``det(A) / |det(A)|`` of a complex ``A`` (the ``sign`` of ``slogdet``, 0 where ``A`` is singular), with
    PyTorch's gradient: ``d sign = i Im(tr(A^-1 dA)) sign``, so ``gA = i Im(g conj(sign)) A^-H``."""

    __slots__ = ()
    name = "slogdet_sign"
    keep = (0,)
    conjugate_backward = False

    def forward(self, ns, a):
        return ns.device.xp.linalg.slogdet(a)[0]

    def backward(self, g, ns, inputs, out):
        a = inputs[0]
        turn = ns.apply(COMPLEX_PARTS["imag"], g * _conj(ns, out)) * 1j  # (i Im(g conj(sign)))
        return (ns.reshape(turn, tuple(turn.shape) + (1, 1)) * _mh(ns, ns.apply(Inv, a)),)


def _inverse_transposed_by_lu(ns, a):
    """``inv(A)^T`` of arrays ``a (..., n, n)``, the inverse solved from ``A``'s pivoted LU, as PyTorch's
    plain backward of ``slogdet`` makes it: a singular matrix gives LAPACK's infinities and NaNs, not
    an error."""
    from .factorizations import loop_namespace, lu_raw, lu_solve_raw  # noqa: PLC0415

    raw, to_raw, back = loop_namespace(ns.device)
    shape = tuple(a.shape)
    n, count = shape[-1], int(np.prod(shape[:-2], dtype=np.int64))
    lu_b, _, perm = lu_raw(raw, raw.reshape(to_raw(a), (count, n, n)))
    eye = raw.broadcast_to(raw.eye(n, dtype=lu_b.dtype), (count, n, n))
    with np.errstate(divide="ignore", invalid="ignore"):
        x = lu_solve_raw(raw, lu_b, eye[raw.arange(count)[:, None], perm])  # U^-1 L^-1 P^T
    return back(raw.reshape(raw.swapaxes(x, -1, -2), shape))


class Cholesky(Function):
    """The lower Cholesky factor ``L`` of a Hermitian (symmetric) positive-definite ``A = L L^H``; with
    ``T = tril(L^H gL)``: ``gA = L^-H (T + tril(T, -1)^H) / 2 L^-1``, as PyTorch's."""

    __slots__ = ()
    primitive = True
    name = "cholesky"
    keep = ()
    conjugate_backward = False

    def forward(self, ns, a):
        out = ns.device.xp.linalg.cholesky(a)
        if isinstance(out, np.ndarray) and np.isnan(np.diagonal(out, 0, -2, -1)).any():
            # (NumPy's LAPACK factors a NaN through; PyTorch's potrf stops at it, as at a minor <= 0)
            raise np.linalg.LinAlgError("Matrix is not positive definite")
        return out

    def backward(self, g, ns, inputs, out):
        return (_cholesky_backward(ns, g, out, lambda t, b: ns.apply(Solve, t, b)),)


class GivenCholesky(Function):
    """The lower factor of input 0 as LAPACK leaves it where the factorisation stops (a leading minor not
    positive-definite: ``cholesky_ex``'s ``L``), its value given as input 1, with :class:`Cholesky`'s
    gradient read from that value, as PyTorch's: its solves with ``L`` by substitution
    (:class:`TriangularSubstitution`), whose infinities and NaNs at the factor's non-positive diagonal
    entry are PyTorch's."""

    __slots__ = ()
    name = "cholesky_given"
    operands = ("A", "L")
    keep = ()
    conjugate_backward = False

    def forward(self, ns, a, lower):
        return lower

    def backward(self, g, ns, inputs, out):
        def upper_solve(t, b):
            return ns.apply(TriangularSubstitution, t, b, args=(True, False))

        return _cholesky_backward(ns, g, out, upper_solve), None


def _cholesky_backward(ns, g, lower, solve_upper):
    """``L^-H (T + tril(T, -1)^H) / 2 L^-1`` with ``T = tril(L^H g)``; ``solve_upper(U, B)``: ``U^-1 B``."""
    lt = _mh(ns, lower)  # L^H
    t = ns.apply(Tril, ns.matmul(lt, g), args=0)
    m = (t + _mh(ns, ns.apply(Tril, t, args=-1))) * 0.5
    left = solve_upper(lt, m)  # L^-H M
    return _mh(ns, solve_upper(lt, _mh(ns, left)))  # (L^-H M) L^-1


def _eigh(ns, a, uplo: str):
    raw = ns.device.xp
    try:
        return raw.linalg.eigh(a, UPLO=uplo)
    except TypeError:  # (the array API's eigh reads the lower triangle and takes no UPLO: the upper is A^H's lower)
        return raw.linalg.eigh(a if uplo == "L" else raw.conj(raw.matrix_transpose(a)))


class EighValues(Function):
    """``args = UPLO``: the eigenvalues (real) of a Hermitian (symmetric) matrix, ascending;
    ``gA = V diag(g) V^H``."""

    __slots__ = ()
    primitive = True
    name = "eigvalsh"
    keep = (0,)
    reads_output = False
    conjugate_backward = False

    def forward(self, ns, a):
        return _eigh(ns, a, self.args)[0]

    def backward(self, g, ns, inputs, out):
        v = ns.apply(EighVectors, inputs[0], args=self.args)
        n = g.shape[-1]
        return (ns.matmul(v * ns.reshape(g, tuple(g.shape[:-1]) + (1, n)), _mh(ns, v)),)


class EighVectors(Function):
    """``args = UPLO``: the eigenvectors (columns) of a Hermitian (symmetric) matrix; with ``K = V^H gV`` made
    skew-Hermitian (``(K - K^H) / 2``, the tangent directions that keep ``V`` unitary, as PyTorch's):
    ``gA = V (K / E) V^H``, ``E[i, j] = w[j] - w[i]`` off the diagonal, 1 on it (so infinite or NaN at
    repeated eigenvalues, as PyTorch's)."""

    __slots__ = ()
    primitive = True
    name = "eigh_vectors"
    keep = (0,)
    conjugate_backward = False

    def forward(self, ns, a):
        return _eigh(ns, a, self.args)[1]

    def backward(self, g, ns, inputs, out):
        v = out
        w = ns.apply(EighValues, inputs[0], args=self.args)
        n = w.shape[-1]
        lead = tuple(w.shape[:-1])
        diff = ns.reshape(w, lead + (1, n)) - ns.reshape(w, lead + (n, 1))  # w[j] - w[i]
        # (the diagonal 1, as PyTorch's: a repeated eigenvalue off it divides by 0, its infinities and NaNs)
        dev = w._dev if getattr(ns, "recording", False) else ns.device
        eye = ns.const(dev.asarray(np.eye(n, dtype=bool)))
        e = ns.where(eye, ns.zeros_like(diff) + 1.0, diff)
        k = ns.matmul(_mh(ns, v), g)
        _check_phase_free(ns, k, "linalg_eigh_backward")
        with np.errstate(divide="ignore", invalid="ignore"):
            inner = ((k - _mh(ns, k)) * 0.5) / e
        return (ns.matmul(ns.matmul(v, inner), _mh(ns, v)),)


def _check_phase_free(ns, k, op: str) -> None:
    """PyTorch's check that a loss does not depend on the phases of complex eigenvectors (each is one only
    up to a factor ``e^{i phi}``): the imaginary diagonal of ``K = V^H gV`` near 0 (``allclose``, 1e-2)."""
    if not _is_complex(k):
        return
    raw = k._dev if getattr(ns, "recording", False) else ns.device
    values = ns.values(k) if getattr(ns, "recording", False) else k
    d = np.asarray(raw.to_host(values)).diagonal(0, -2, -1).imag
    if not np.all(np.abs(d) <= 1e-2):
        raise RuntimeError(f"{op}: The eigenvectors in the complex case are specified up to multiplication by "
                           "e^{i phi}. The specified loss function depends on this phase term, making it "
                           f"ill-defined (the imaginary diagonal of V^H gV reaches {float(np.abs(d).max()):.3g}).")  # fmt: skip


def _eig_host(dev, a, part: int):
    """``eigenvalues`` (``part`` 0) or ``eigenvectors`` (1) of a general square ``a`` by LAPACK's ``geev`` on the
    host (the array namespaces of devices have no ``eig``), always complex: complex64 for float32 and complex64
    input, complex128 otherwise. Each eigenvector of unit norm with its largest entry real, as ``geev`` leaves it."""
    host = np.asarray(dev.to_host(a))
    out = np.linalg.eig(host)[part]
    cdt = np.complex64 if host.dtype in (np.float32, np.complex64) else np.complex128
    return dev.asarray(np.ascontiguousarray(out.astype(cdt, copy=False)))


class EigValues(Function):
    """The eigenvalues of a general square matrix (complex). ``gA = V^-H diag(g) V^H``, as PyTorch's (a real
    ``A`` takes its real part: the engine's rule for a real input of a complex result)."""

    __slots__ = ()
    name = "eigvals"
    keep = (0,)
    reads_output = False
    conjugate_backward = False

    def forward(self, ns, a):
        return _eig_host(ns.device, a, 0)

    def backward(self, g, ns, inputs, out):
        v = ns.apply(EigVectors, inputs[0])
        n = g.shape[-1]
        vh = _mh(ns, v)
        return (ns.apply(Solve, vh, ns.reshape(g, tuple(g.shape[:-1]) + (n, 1)) * vh),)


class EigVectors(Function):
    """The eigenvectors (columns) of a general square matrix, as :func:`_eig_host` normalises them. With
    ``K = V^H gV - V^H V diag(re(diag(V^H gV)))`` (the normalisation's constraint, as PyTorch's) and
    ``E[i, j] = conj(w[j] - w[i])`` off the diagonal, 1 on it: ``gA = V^-H (K / E) V^H``. A loss that depends
    on the eigenvectors' phases raises PyTorch's ``RuntimeError``."""

    __slots__ = ()
    name = "eig_vectors"
    keep = (0,)
    conjugate_backward = False

    def forward(self, ns, a):
        return _eig_host(ns.device, a, 1)

    def backward(self, g, ns, inputs, out):
        v = out
        w = _conj(ns, ns.apply(EigValues, inputs[0]))
        n = w.shape[-1]
        lead = tuple(w.shape[:-1])
        vh = _mh(ns, v)
        k = ns.matmul(vh, g)
        _check_phase_free(ns, k, "linalg_eig_backward")
        dev = w._dev if getattr(ns, "recording", False) else ns.device
        eye = ns.const(dev.asarray(np.eye(n, dtype=bool)))
        diag = _real(ns, ns.sum(ns.where(eye, k, ns.zeros_like(k)), axis=-2, keepdims=True))  # (..., 1, n)
        k = k - ns.matmul(vh, v * diag)
        diff = ns.reshape(w, lead + (1, n)) - ns.reshape(w, lead + (n, 1))  # conj(w[j] - w[i])
        e = ns.where(eye, ns.zeros_like(diff) + 1.0, diff)
        with np.errstate(divide="ignore", invalid="ignore"):
            inner = k / e
        return (ns.apply(Solve, vh, ns.matmul(inner, vh)),)


class SvdValues(Function):
    """``args = full_matrices``: ``U``, ``S`` and ``Vh`` of input 0 from one LAPACK call, packed flat along the
    last axis (``(..., m r + k + r' n)``), for ``linalg.svd`` to slice: an op, so a traced program computes
    them from its input. No gradient (:class:`SvdFactor` gives it). -0.0 is read as +0.0: OpenBLAS gives
    a 1x1 -0.0 the singular vectors (-1, 1), PyTorch's MKL (1, 1), whose gradient ``U diag(g) Vh`` has
    the other sign."""

    __slots__ = ()
    differentiable = False
    name = "svd_values"

    def forward(self, ns, a):
        u, s, vh = ns.device.xp.linalg.svd(a + 0.0, full_matrices=self.args)
        lead = tuple(a.shape[:-2])
        flat = [
            ns.reshape(u, lead + (u.shape[-2] * u.shape[-1],)),
            s,
            ns.reshape(vh, lead + (vh.shape[-2] * vh.shape[-1],)),
        ]
        return ns.concat(flat, axis=-1)


class SvdFactor(Function):
    """``args = which`` (``"U"``, ``"S"`` or ``"Vh"``): one factor of the singular value decomposition
    ``A = U diag(S) Vh`` of input 0, its value given with its partners as inputs 1-3 (one LAPACK call
    makes all three; ``U`` and ``Vh`` may be the complete ones, whose columns and rows past
    ``k = min(m, n)`` take no gradient, as PyTorch's). The gradient is PyTorch's, linear in each
    factor's: ``gS`` gives ``U diag(gS) Vh``; ``gU`` and ``gVh`` the skew parts of ``U^T gU`` and ``Vh gVh^T``
    divided by ``E[i, j] = S[j]^2 - S[i]^2`` (its diagonal 1), so repeated singular values give
    infinities and NaNs where PyTorch's do, plus for a tall (wide) matrix the part of ``gU`` (``gVh``)
    outside ``U``'s (``Vh``'s) span, divided by ``S``. Written in ``ns`` ops on the factors as ops of
    this class, so gradients of every order follow. Complex: the same with conjugate transposes, and ``gU``'s
    term ``i Im(diag(U^H gU)) / S`` on the diagonal, as PyTorch's."""

    __slots__ = ()
    name = "svd_factor"
    conjugate_backward = False
    operands = ("A", "U", "S", "Vh")
    keep = (1, 2, 3)  # (the factors, as PyTorch's keeps them; A only as the graph's node, for the next order)
    reads_output = False

    def forward(self, ns, a, u, s, vh):
        return {"U": u, "S": s, "Vh": vh}[self.args]

    def backward(self, g, ns, inputs, out):
        a, u0, s0, vh0 = inputs
        k = s0.shape[-1]
        u0, vh0 = u0[..., :k], vh0[..., :k, :]
        if getattr(ns, "recording", False):  # the factors as functions of A, for the next order
            u, s, vh = (ns.apply(SvdFactor, a, u0, s0, vh0, args=w) for w in ("U", "S", "Vh"))
        else:
            u, s, vh = u0, s0, vh0
        with np.errstate(divide="ignore", invalid="ignore"):
            return (_svd_backward(ns, self.args, g, u, s, vh), None, None, None)


def _svd_backward(ns, which: str, g, u, s, vh):
    m, n, k = u.shape[-2], vh.shape[-1], s.shape[-1]
    lead = tuple(s.shape[:-1])
    row, col = ns.reshape(s, lead + (1, k)), ns.reshape(s, lead + (k, 1))
    mm, mt = ns.matmul, (lambda x: _mh(ns, x))
    if which == "S":
        return mm(u * ns.reshape(g, lead + (1, k)), vh)
    s2 = s * s
    dev = s._dev if getattr(ns, "recording", False) else ns.device
    eye = ns.const(dev.asarray(np.eye(k, dtype=bool)))
    e = ns.where(eye, ns.zeros_like(row * col) + 1.0, ns.reshape(s2, lead + (1, k)) - ns.reshape(s2, lead + (k, 1)))
    if which == "U":
        g = g[..., :k]
        j = mm(mt(u), g)
        skew = j - mt(j)
        inner = (skew / e) * row
        if _is_complex(j):  # (the imaginary diagonal of U^H gU, over S: PyTorch's complex term)
            inner = inner + ns.where(eye, skew, ns.zeros_like(skew)) / (col * 2.0)
        if m > n:  # the part of gU outside U's span: (I - U U^T) gU S^-1
            gs = g / row
            return mm(mm(u, inner) + gs - mm(u, mm(mt(u), gs)), vh)
        return mm(mm(u, inner), vh)
    g = g[..., :k, :]
    j = mm(vh, mt(g))  # Vh gV
    inner = col * ((j - mt(j)) / e)
    if m < n:  # the part of gVh outside Vh's span: S^-1 gVh (I - V Vh)
        gs = g / col
        return mm(u, mm(inner, vh) + gs - mm(mm(gs, mt(vh)), vh))
    return mm(mm(u, inner), vh)


class QrValues(Function):
    """``args = complete``: ``Q`` and ``R`` of input 0 from one LAPACK call (reduced, or complete), packed flat
    along the last axis, for ``linalg.qr`` to slice: an op, so a traced program computes them from its
    input. No gradient (:class:`QrPacked` gives it). -0.0 is read as +0.0: at a zero matrix the signs of
    ``R``'s zeros, by which the gradient divides, are then PyTorch's MKL's."""

    __slots__ = ()
    differentiable = False
    name = "qr_values"

    def forward(self, ns, a):
        q, r = ns.device.xp.linalg.qr(a + 0.0, mode="complete" if self.args else "reduced")
        lead = tuple(a.shape[:-2])
        flat = [ns.reshape(q, lead + (q.shape[-2] * q.shape[-1],)), ns.reshape(r, lead + (r.shape[-2] * r.shape[-1],))]
        return ns.concat(flat, axis=-1)


class QrPacked(Function):
    """The reduced QR decomposition ``A = Q R`` of a tall or square input 0 (``m >= n``), ``Q (m, n)`` above
    ``R (n, n)`` in one ``(m + n, n)`` output (``linalg.qr`` slices them), their values given as inputs 1-2
    (:class:`QrValues`): one op, so the gradient is one formula of both factors' gradients, as PyTorch's
    (their sum over separate ops would meet an infinity with a NaN where PyTorch's is infinite). With
    ``M = R gR^H - gQ^H Q``: ``gA = (gQ + Q sym(M)) R^-H``, ``sym(M)`` the Hermitian matrix of ``M``'s lower
    triangle and the real part of its diagonal; ``R^-T`` by :class:`TriangularSubstitution`, so a rank-deficient ``A`` (a zero on ``R``'s
    diagonal) gives PyTorch's infinities and NaNs. Written in ``ns`` ops on the factors as slices of this
    op: gradients of every order follow."""

    __slots__ = ()
    name = "qr"
    operands = ("A", "Q", "R")
    reads_output = False
    conjugate_backward = False

    def keeps_input(self, i: int) -> bool:
        return i != 0  # (the factors, as PyTorch's keeps them; A only as the graph's node)

    def forward(self, ns, a, q, r):
        return ns.concat([q, r], axis=-2)

    def backward(self, g, ns, inputs, out):
        a, q, r = inputs
        m = q.shape[-2]
        if getattr(ns, "recording", False):  # the factors as functions of A, for the next order
            packed = ns.apply(QrPacked, a, q, r)
            q, r = packed[..., :m, :], packed[..., m:, :]
        gq, gr = g[..., :m, :], g[..., m:, :]
        mm, mt = ns.matmul, (lambda x: _mh(ns, x))
        s = mm(r, mt(gr)) - mm(mt(gq), q)
        low = ns.apply(Tril, s, args=-1)
        diag = _real(ns, s - low - _mt(ns, ns.apply(Tril, _mt(ns, s), args=-1)))  # (M's diagonal alone)
        inner = mm(q, low + mt(low) + diag) + gq
        # X R^H = inner: R X^H = inner^H
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            x_t = ns.apply(TriangularSubstitution, r, mt(inner), args=(True, False))
        return mt(x_t), None, None


class LuPacked(Function):
    """The packed LU factor (``L`` unit lower below the diagonal, ``U`` on and above) of input 0 with partial
    pivoting ``A = P L U``, its value given as input 1 and the permutation matrix ``P`` as input 2 (both
    constants: a permutation is piecewise constant in ``A``). The gradient is PyTorch's, one formula of
    ``gL = tril(g, -1)`` and ``gU = triu(g)``; for a square ``A``:
    ``gA = P L^-T (tril(L^T gL, -1) + triu(gU U^T)) U^-T``, and for a wide (tall) one the same with the
    columns (rows) past the square block. Its solves are :class:`TriangularSubstitution`'s, so a zero on
    ``U``'s diagonal gives PyTorch's infinities and NaNs; written in ``ns`` ops on the factor as this op
    again, so gradients of every order follow."""

    __slots__ = ()
    name = "lu_packed"
    operands = ("A", "LU", "P")
    reads_output = False

    def keeps_input(self, i: int) -> bool:
        return i != 0  # (the factor and pivots, as PyTorch's keeps them; A only as the graph's node)

    def forward(self, ns, a, lu, p):
        return lu

    def backward(self, g, ns, inputs, out):
        a, lu, p = inputs
        recording = getattr(ns, "recording", False)
        dev = a._dev if recording else ns.device
        if recording:
            lu = ns.apply(LuPacked, a, lu, p)
        m, n = lu.shape[-2], lu.shape[-1]
        k = min(m, n)
        mm, mt = ns.matmul, (lambda x: _mt(ns, x))

        def tril(x, d):
            return ns.apply(Tril, x, args=d)

        def triu(x, d=0):
            return mt(ns.apply(Tril, mt(x), args=-d))

        def sub(t, b, upper, unit=False):
            return ns.apply(TriangularSubstitution, t, b, args=(upper, unit))

        eye = ns.const(dev.asarray(np.eye(m, k, dtype=bool)))
        below = tril(lu[..., :, :k], -1)
        low, up = ns.where(eye, ns.zeros_like(below) + 1.0, below), triu(lu[..., :k, :])
        gl, gu = tril(g[..., :, :k], -1), triu(g[..., :k, :])
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            if m == n:
                inner = tril(mm(mt(low), gl), -1) + triu(mm(gu, mt(up)))
                ga = sub(mt(low), mt(sub(up, mt(inner), True)), True, True)  # L^-T inner U^-T
            elif m < n:  # A = L [U1 U2]
                u1 = up[..., :, :m]
                inner = tril(mm(mt(low), gl) - mm(gu, mt(up)), -1)
                left = mt(sub(u1, mt(inner), True)) + gu[..., :, :m]  # inner U1^-T + triu(gU1)
                from ..tensors._tensor import cat  # noqa: PLC0415

                both = cat([left, gu[..., :, m:]], -1) if recording else ns.concat([left, gu[..., :, m:]], axis=-1)
                ga = sub(mt(low), both, True, True)  # L^-T [...]
            else:  # A = [L1; L2] U
                l1 = low[..., :n, :]
                inner = triu(mm(gu, mt(up)) - mm(mt(low), gl))
                top = sub(mt(l1), inner, True, True) + gl[..., :n, :]  # L1^-T inner + tril(gL1, -1)
                from ..tensors._tensor import cat  # noqa: PLC0415

                both = cat([top, gl[..., n:, :]], -2) if recording else ns.concat([top, gl[..., n:, :]], axis=-2)
                ga = mt(sub(up, mt(both), True))  # [...] U^-T
        return mm(p, ga), None, None
