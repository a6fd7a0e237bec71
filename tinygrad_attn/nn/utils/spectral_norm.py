"""PyTorch's older ``torch.nn.utils.spectral_norm`` / ``remove_spectral_norm``: the parameter
``name`` becomes ``name_orig``, with buffers ``name_u`` and ``name_v`` (the power iteration's
vectors), and a forward pre-hook sets the plain attribute ``module.<name>`` to
``name_orig / sigma`` before each forward, one power iteration per training forward. New code
uses ``parametrizations.spectral_norm`` (whose iteration differs: it starts with 15 and
updates ``u`` before ``v``)."""

from __future__ import annotations

from typing import Any

from ... import functional as F
from ...engine.switches import no_grad
from ...tensors._tensor import Tensor
from ..module import Module, Parameter

__all__ = ["spectral_norm", "remove_spectral_norm"]


class _SpectralNormHook:
    """The forward pre-hook: ``module.<name>`` from ``name_orig`` and the current ``u``, ``v``."""

    def __init__(self, name: str, n_power_iterations: int, dim: int, eps: float) -> None:
        self.name, self.n_power_iterations, self.dim, self.eps = name, n_power_iterations, dim, eps

    def matrix(self, weight: Tensor) -> Tensor:
        if self.dim != 0:
            weight = weight.movedim(self.dim, 0)
        return weight.reshape(weight.shape[0], -1)

    def compute(self, module: Module, power_iteration: bool) -> Tensor:
        weight = getattr(module, self.name + "_orig")
        u, v = getattr(module, self.name + "_u"), getattr(module, self.name + "_v")
        mat = self.matrix(weight)
        if power_iteration:
            with no_grad():
                for _ in range(self.n_power_iterations):  # (v first, then u: PyTorch's order here)
                    v.copy_(F.normalize(mat.detach().mT @ u, dim=0, eps=self.eps))
                    u.copy_(F.normalize(mat.detach() @ v, dim=0, eps=self.eps))
            if self.n_power_iterations > 0:  # (the graph keeps these values, not later iterations')
                u, v = u.clone(), v.clone()
        return weight / (u * (mat @ v)).sum()

    def __call__(self, module: Module, inputs: Any) -> None:
        setattr(module, self.name, self.compute(module, power_iteration=module.training))


def spectral_norm(module: Module, name: str = "weight", n_power_iterations: int = 1, eps: float = 1e-12,
                  dim: int | None = None) -> Module:  # fmt: skip
    """``module.<name>`` divided by its largest singular value, estimated by power iteration
    (PyTorch's ``nn.utils.spectral_norm``; ``dim`` 1 for transposed convolutions, 0 otherwise).
    Returns ``module``."""
    hooks = module.__dict__.setdefault("_spectral_norm_hooks", {})
    if name in hooks:
        raise RuntimeError(f"Cannot register two spectral_norm hooks on the same parameter {name}")
    weight = module._parameters.get(name)
    if weight is None:
        raise KeyError(name)
    if n_power_iterations < 0:  # (PyTorch's check; 0 is allowed here)
        raise ValueError(f"Expected n_power_iterations to be positive, but got n_power_iterations={n_power_iterations}")
    if dim is None:
        dim = 1 if type(module).__name__.startswith("ConvTranspose") else 0
    hook = _SpectralNormHook(name, n_power_iterations, dim if dim >= 0 else dim + weight.ndim, eps)
    with no_grad():
        mat = hook.matrix(weight)
        h, w = mat.shape
        u = F.normalize(weight.new_empty(h).normal_(0, 1), dim=0, eps=eps)  # (PyTorch's draws: u, then v)
        v = F.normalize(weight.new_empty(w).normal_(0, 1), dim=0, eps=eps)
    del module._parameters[name]
    module.__dict__.pop(name, None)
    module.register_parameter(name + "_orig", weight)
    setattr(module, name, weight.detach())  # (a plain attribute until the first forward, as in PyTorch)
    module.register_buffer(name + "_u", u)
    module.register_buffer(name + "_v", v)
    hooks[name] = (hook, module.register_forward_pre_hook(hook))
    return module


def remove_spectral_norm(module: Module, name: str = "weight") -> Module:
    """Undo :func:`spectral_norm`: ``name`` a plain parameter again, holding the normalised value."""
    hooks = module.__dict__.get("_spectral_norm_hooks", {})
    if name not in hooks:
        raise ValueError(f"spectral_norm of '{name}' not found in {module}")
    hook, handle = hooks.pop(name)
    handle.remove()
    with no_grad():
        value = hook.compute(module, power_iteration=False).detach()
    for suffix in ("_orig", "_u", "_v"):
        delattr(module, name + suffix)
    module.__dict__.pop(name, None)
    module.register_parameter(name, Parameter(value))
    return module
