"""All parameters as one flat vector, and back."""

from __future__ import annotations

from collections.abc import Iterable

from ...engine.switches import no_grad
from ...tensors._tensor import Tensor, cat


def parameters_to_vector(parameters: Iterable[Tensor]) -> Tensor:
    """The parameters flattened and joined, in order, into one 1-D tensor (differentiable,
    as PyTorch's)."""
    ps = list(parameters)
    if not ps:
        raise ValueError("parameters_to_vector: got no parameters")
    dev = ps[0]._dev
    for p in ps:
        if p._dev is not dev:
            raise RuntimeError(f"parameters_to_vector: parameters on {ps[0].device} and {p.device}; move them to one")
    return cat([p.reshape(-1) for p in ps], 0)


def vector_to_parameters(vec: Tensor, parameters: Iterable[Tensor]) -> None:
    """Each parameter's data becomes its consecutive slice of the 1-D ``vec``, as PyTorch's
    (``param.data = slice``): the parameters share ``vec``'s memory, and tensors that shared
    their old memory keep the old values."""
    if not isinstance(vec, Tensor):
        raise TypeError(f"vector_to_parameters: expected a Tensor, got {type(vec).__name__}")
    if vec.ndim != 1:
        raise ValueError(f"vector_to_parameters: vec must be 1-D, got shape {tuple(vec.shape)}")
    ps = list(parameters)
    need = sum(p.numel() for p in ps)
    if vec.shape[0] != need:
        raise ValueError(f"vector_to_parameters: vec has {vec.shape[0]} elements, the parameters {need}")
    at = 0
    with no_grad():
        for p in ps:
            n = p.numel()
            p.data = vec.data[at : at + n].reshape(p.shape)
            at += n
