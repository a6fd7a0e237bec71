"""PyTorch's ``torch.nn.utils.parametrizations``: ``weight_norm`` (a weight as a direction
times a learned length) and ``spectral_norm`` (a weight divided by its largest singular
value, estimated by power iteration), each registered through :mod:`.parametrize`, with
PyTorch's state dict keys (``parametrizations.weight.original0/1``; ``original`` and
``parametrizations.weight.0._u/_v``).

>>> layer = parametrizations.weight_norm(nn.Linear(20, 40))  # doctest: +SKIP
"""

from __future__ import annotations

from ... import functional as F
from ...engine.switches import no_grad
from ...tensors._tensor import Tensor
from ..module import Module
from . import parametrize

__all__ = ["weight_norm", "spectral_norm"]


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
