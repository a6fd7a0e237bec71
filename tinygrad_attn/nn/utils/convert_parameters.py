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
    """Each parameter's data becomes its consecutive slice of ``vec``, as PyTorch's
    (``param.data = vec[i : i + n].view_as(param)``): the parameters share ``vec``'s memory, and
    tensors that shared their old memory keep the old values. As PyTorch's, a slice that cannot be
    viewed as its parameter raises ``RuntimeError`` (the view's), and entries past the last
    parameter are left unread."""
    if not isinstance(vec, Tensor):
        raise TypeError(f"vector_to_parameters: expected a Tensor, got {type(vec).__name__}")
    at = 0
    with no_grad():
        for p in parameters:
            n = p.numel()
            p.data = vec.data[at : at + n].view_as(p)
            at += n
