"""Gradients PyTorch computes with one backward kernel that reads the op's saved tensors.

PyTorch writes the backward of many ops (pools, convolutions, reflection and replication pads, the
shrink activations, the SVD family, ...) as one differentiable function of the gradient *and* the
op's saved input or result (``max_pool2d_with_indices_backward(grad, self, ...)``). Under
``create_graph=True`` every gradient such a node returns therefore requires grad, even where its
value does not depend on those tensors (a max pool's gradient moves ``grad`` by indices): its
derivative there is zero, not missing. A user's gradient penalty ``grad(out, x, create_graph=True)``
of a max-pooled net, then ``penalty.backward()``, runs in PyTorch and must run here.

Ours computes these gradients from tensor ops, so one that reads no tensor requiring grad comes out
constant. :func:`as_pytorch_records` gives such a gradient PyTorch's standing: a node
(:class:`KernelGradient`) whose inputs are the tensors the kernel reads, with derivative zero in each.
One rule, applied by the backward pass to every node it runs with ``create_graph``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from . import function as _function

#: PyTorch's names of the nodes whose backward is one kernel reading the saved input or result (its
#: 1-d pools are its 2-d ones between an unsqueeze and a squeeze, as ours), each with the inputs whose
#: gradient that kernel computes (None: all; ``fmod``'s gradient in its dividend is ``grad`` itself).
KERNEL_BACKWARDS: dict[str, tuple[int, ...] | None] = dict.fromkeys(
    [
        *(
            f"{kind}Pool{n}DBackward0"
            for kind in ("Avg", "AdaptiveAvg", "AdaptiveMax", "FractionalMax")
            for n in (2, 3)
        ),
        *(f"MaxPool{n}DWithIndicesBackward0" for n in (2, 3)),
        *(f"{kind}Pad{n}DBackward0" for kind in ("Reflection", "Replication") for n in (1, 2, 3)),
        "ConvolutionBackward0",
        "HardshrinkBackward0",
        "SoftshrinkBackward0",
        "PreluKernelBackward0",
        "NativeLayerNormBackward0",
        "GridSampler2DBackward0",
        "GridSampler3DBackward0",
        "LinalgSvdBackward0",
        "LinalgPinvBackward0",
        "LinalgSlogdetBackward0",
        "LinalgQrBackward0",
        "CholeskyBackward0",
    ]
) | {"CopysignBackward0": (0,), "FmodBackward1": (1,), "RemainderBackward1": (1,)}


class KernelGradient(_function.Function):
    """A gradient (input 0, a constant) standing as a function of the tensors its kernel read
    (the other inputs), with derivative zero in each: PyTorch's ``<Op>BackwardBackward0``."""

    __slots__ = ()
    name = "kernel_gradient"
    reads_output = False

    @property
    def torch_grad_fn_name(self) -> str:
        return self.args.rstrip("0123456789") + "Backward0"

    def forward(self, ns: Any, g: Any, *reads: Any) -> Any:
        return g

    def backward(self, g: Any, ns: Any, inputs: Sequence[Any], out: Any) -> Sequence[Any]:
        return (None, *(ns.zeros_like(x) for x in inputs[1:]))


def as_pytorch_records(fn: Any, gs: Sequence[Any]) -> Sequence[Any]:
    """``fn``'s gradients ``gs`` (tensors, from a ``create_graph`` pass), those PyTorch's kernel would
    make require grad made to (see the module's docstring)."""
    T = _function.Tensor
    if all(g is None or g.__class__ is not T or g._requires_grad for g in gs):
        return gs
    name = _function.grad_fn_name(fn)
    if name not in KERNEL_BACKWARDS:
        return gs
    # Only where the op's inputs enter it: a node inside an op written from others carries the op's
    # name too, and its gradients are the op's own steps, not what PyTorch's kernel returns.
    scope = _function.op_scope(fn)
    outside = [
        isinstance(x, T) and (scope is None or x._ctx is None or _function.op_scope(x._ctx) is not scope)
        for x in fn.inputs
    ]
    reads = [x for x, o in zip(fn.inputs, outside) if o and x._requires_grad]
    if not reads:
        return gs
    places = KERNEL_BACKWARDS[name]
    return [
        KernelGradient.apply(g, *reads, args=name)
        if g is not None
        and g.__class__ is T
        and not g._requires_grad
        and outside[i]
        and (places is None or i in places)
        else g
        for i, g in enumerate(gs)
    ]
