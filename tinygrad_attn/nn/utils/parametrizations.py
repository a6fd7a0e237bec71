"""PyTorch's ``torch.nn.utils.parametrizations``: ``weight_norm`` (a weight as a direction
times a learned length), ``spectral_norm`` (a weight divided by its largest singular
value, estimated by power iteration) and ``orthogonal`` (a matrix kept orthogonal), each
registered through :mod:`.parametrize`, with PyTorch's state dict keys
(``parametrizations.weight.original0/1``; ``original`` and ``parametrizations.weight.0._u/_v``
or ``.0.base``).

>>> layer = parametrizations.weight_norm(nn.Linear(20, 40))  # doctest: +SKIP
"""

from __future__ import annotations

import numpy as np

from ... import functional as F
from ... import linalg
from ...engine.switches import no_grad
from ...tensors._tensor import Tensor
from ..module import Module
from . import parametrize

__all__ = ["weight_norm", "spectral_norm", "orthogonal"]


def _norm_except(v: Tensor, dim: int | None) -> Tensor:
    """The 2-norm of ``v`` over every axis but ``dim`` (kept as size-1 axes), or of all of it."""
    if dim is None or dim == -1:
        return (v * v).sum().sqrt()
    axes = tuple(i for i in range(v.ndim) if i != dim)
    return (v * v).sum(axes, keepdims=True).sqrt() if axes else v.abs()


class _WeightNorm(Module):
    def __init__(self, dim: int | None = 0) -> None:
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g: Tensor, weight_v: Tensor) -> Tensor:
        return weight_v * (weight_g / _norm_except(weight_v, self.dim))

    def right_inverse(self, weight: Tensor) -> tuple[Tensor, Tensor]:
        return _norm_except(weight, self.dim), weight


def weight_norm(module: Module, name: str = "weight", dim: int | None = 0) -> Module:
    """``module.<name>`` as ``g * v / ||v||`` (the norm over every axis but ``dim``; all of
    them with ``dim=None``), ``g`` and ``v`` learned: PyTorch's
    ``parametrizations.weight_norm``. Returns ``module``."""
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)
    return module


class _SpectralNorm(Module):
    def __init__(self, weight: Tensor, n_power_iterations: int = 1, dim: int = 0, eps: float = 1e-12) -> None:
        super().__init__()
        ndim = weight.ndim
        if dim >= ndim or dim < -ndim:
            raise IndexError(f"Dimension out of range (expected to be in range of [-{ndim}, {ndim - 1}] but got {dim})")
        if n_power_iterations <= 0:
            raise ValueError(
                f"Expected n_power_iterations to be positive, but got n_power_iterations={n_power_iterations}"
            )
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps, self.n_power_iterations = eps, n_power_iterations
        if ndim > 1:
            mat = self._matrix(weight)
            h, w = mat.shape
            u = weight.new_empty(h).normal_(0, 1)  # (PyTorch's draws: new_empty(h).normal_, then v)
            v = weight.new_empty(w).normal_(0, 1)
            self.register_buffer("_u", F.normalize(u, dim=0, eps=self.eps))
            self.register_buffer("_v", F.normalize(v, dim=0, eps=self.eps))
            self._power_method(mat, 15)

    def _matrix(self, weight: Tensor) -> Tensor:
        """``weight`` as ``(size of dim, everything else)``."""
        if self.dim != 0:
            weight = weight.movedim(self.dim, 0)
        return weight.reshape(weight.shape[0], -1)

    def _power_method(self, mat: Tensor, n: int) -> None:
        with no_grad():
            for _ in range(n):
                self._u.copy_(F.normalize(mat @ self._v, dim=0, eps=self.eps))
                self._v.copy_(F.normalize(mat.mT @ self._u, dim=0, eps=self.eps))

    def forward(self, weight: Tensor) -> Tensor:
        if weight.ndim == 1:
            return F.normalize(weight, dim=0, eps=self.eps)
        mat = self._matrix(weight)
        if self.training:
            self._power_method(mat.detach(), self.n_power_iterations)
        u, v = self._u.clone(), self._v.clone()
        sigma = (u * (mat @ v)).sum()
        return weight / sigma

    def right_inverse(self, value: Tensor) -> Tensor:
        return value  # (the weight is stored as given; its scale is not recoverable)


def spectral_norm(module: Module, name: str = "weight", n_power_iterations: int = 1, eps: float = 1e-12,
                  dim: int | None = None) -> Module:  # fmt: skip
    """``module.<name>`` divided by its spectral norm, estimated by ``n_power_iterations`` of
    power iteration per training forward: PyTorch's ``parametrizations.spectral_norm``
    (``dim`` 1 for transposed convolutions, 0 otherwise). Returns ``module``."""
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if dim is None:
        dim = 1 if type(module).__name__.startswith("ConvTranspose") else 0
    parametrize.register_parametrization(module, name, _SpectralNorm(weight, n_power_iterations, dim, eps))
    return module


_ORTHOGONAL_MAPS = ("matrix_exp", "cayley", "householder")


def _make_orthogonal(a: Tensor) -> Tensor:
    """The Q of ``a``'s QR decomposition with R's diagonal made positive (LAPACK's reflectors)."""
    x, tau = linalg.geqrf(a)
    return linalg.householder_product(x, tau) * x.diagonal(dim1=-2, dim2=-1).sgn().unsqueeze(-2)


class _Orthogonal(Module):
    """PyTorch's map from an unconstrained matrix to one with orthonormal columns (rows when
    wide): ``matrix_exp`` or ``cayley`` of the skew-symmetric part of its lower triangle, or
    the product of the Householder reflectors below its diagonal; with ``use_trivialization``
    the result multiplies a fixed orthogonal ``base``, set from the weight at registration."""

    def __init__(self, weight: Tensor, orthogonal_map: str, use_trivialization: bool = True) -> None:
        super().__init__()
        if np.dtype(weight.dtype).kind == "c" and orthogonal_map == "householder":
            raise ValueError("The householder parametrization does not support complex tensors.")
        self.shape, self.orthogonal_map, self._trivial = weight.shape, orthogonal_map, use_trivialization
        if use_trivialization:
            self.register_buffer("base", None)

    def forward(self, x: Tensor) -> Tensor:
        from ...tensors._tensor import cat  # noqa: PLC0415 - (kept out of the import graph's cycles)
        from ...tensors.factories.creation import eye  # noqa: PLC0415

        n, k = x.shape[-2], x.shape[-1]
        transposed = n < k
        if transposed:
            x = x.mT
            n, k = k, n
        if self.orthogonal_map == "householder":
            a = x.tril(diagonal=-1)
            q = linalg.householder_product(a, 2.0 / (1.0 + (a * a).sum(dim=-2)))
            q = q * x.diagonal(dim1=-2, dim2=-1).int().unsqueeze(-2)
        else:
            x = x.tril()
            if n != k:
                x = cat([x, x.new_zeros(n, n - k).expand(*x.shape[:-2], -1, -1)], dim=-1)
            a = x - x.mH
            if self.orthogonal_map == "matrix_exp":
                q = linalg.matrix_exp(a)
            else:
                eye = eye(n, dtype=a.dtype, device=a.device)
                q = linalg.solve(eye - 0.5 * a, eye + 0.5 * a)
            if n != k:
                q = q[..., :k]
        if getattr(self, "base", None) is not None:
            q = self.base @ q
        return q.mT if transposed else q

    @no_grad()
    def right_inverse(self, q: Tensor) -> Tensor:
        from ...tensors._tensor import cat  # noqa: PLC0415 - (kept out of the import graph's cycles)
        from ...tensors.factories.creation import eye, randn, zeros_like  # noqa: PLC0415

        if q.shape != self.shape:
            raise ValueError(f"Expected a matrix or batch of matrices of shape {self.shape}. Got a tensor of shape "
                             f"{q.shape}.")  # fmt: skip
        q_init = q
        n, k = q.shape[-2], q.shape[-1]
        if n < k:
            q = q.mT
            n, k = k, n
        if not self._trivial:
            raise NotImplementedError("orthogonal: assigning to the weight needs use_trivialization=True here")
        if n == k:
            eye = eye(k, dtype=q.dtype, device=q.device)
            ok = bool(((q.mH @ q - eye).abs() <= 10.0 * n * float(np.finfo(q._data.dtype).eps)).all())
            q = q.clone() if ok else _make_orthogonal(q)
        else:  # (completed to a square orthogonal matrix with normal draws, as PyTorch's)
            fill = randn(*q.shape[:-2], n, n - k, dtype=q.dtype, device=q.device)
            q = _make_orthogonal(cat([q, fill], dim=-1))
        self.base = q
        neg_eye = zeros_like(q_init)  # (householder of zeros is then the identity)
        neg_eye.diagonal(dim1=-2, dim2=-1).fill_(-1.0)
        return neg_eye


def orthogonal(module: Module, name: str = "weight", orthogonal_map: str | None = None, *,
               use_trivialization: bool = True) -> Module:  # fmt: skip
    """``module.<name>`` (a matrix, or a batch of them) kept orthogonal: PyTorch's
    ``parametrizations.orthogonal``. ``orthogonal_map`` ``"matrix_exp"`` (the default for
    square or complex matrices), ``"cayley"`` or ``"householder"`` (the default otherwise).
    Returns ``module``."""
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if weight.ndim < 2:
        raise ValueError(f"Expected a matrix or batch of matrices. Got a tensor of {weight.ndim} dimensions.")
    if orthogonal_map is None:
        square = weight.shape[-2] == weight.shape[-1]
        orthogonal_map = "matrix_exp" if square or np.dtype(weight.dtype).kind == "c" else "householder"
    if orthogonal_map not in _ORTHOGONAL_MAPS:
        raise ValueError(
            f'orthogonal_map has to be one of "matrix_exp", "cayley", "householder". Got: {orthogonal_map}'
        )
    orth = _Orthogonal(weight, orthogonal_map, use_trivialization=use_trivialization)
    parametrize.register_parametrization(module, name, orth, unsafe=True)
    return module
