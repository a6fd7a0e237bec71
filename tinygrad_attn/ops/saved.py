"""What an op keeps for its backward where its recorded steps keep less than PyTorch's.

PyTorch's in-place check follows what each op saves: a saved tensor changed in place
before the backward makes the backward raise. Ours follows what each recorded
:class:`~tinygrad_attn.engine.function.Function` declares it reads (``keep``, ``keeps_input``,
``reads_output``). An op written as several primitives (``clamp`` as ``where`` of a fresh
mask, ``elu``, ``mse_loss``, ``logsumexp``, ...) may read only arrays it made itself, so
that changing its input would pass silently where PyTorch raises. The API promises the
same errors as PyTorch, so such an op ends with :func:`saved_for_backward`: one more node
that passes the gradient through unchanged and keeps the tensors PyTorch's op saves, so
the engine's version check fires on them as on any other op's.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..engine import function as _function
from ..engine.function import Function


class Saved(Function):
    """Input 0 is the op's result, passed on as it is (the same array); the other inputs
    are the tensors PyTorch's op saves: kept, and checked for in-place changes, not read."""

    __slots__ = ()
    laid_out_as = slice(1, None)  # (the result of the kept inputs: laid out as a pointwise op of them)
    name = "saved"
    keep = ()  # (see keeps_input: every input but the result)
    reads_output = False

    def keeps_input(self, i: int) -> bool:
        return i > 0

    def forward(self, ns: Any, out: Any, *kept: Any) -> Any:
        return out

    def backward(self, g: Any, ns: Any, inputs: Any, out: Any) -> Any:
        return (g,) + (None,) * (len(inputs) - 1)


class SavedWithOutput(Saved):
    """:class:`Saved` that also keeps the result (PyTorch's ``prod``, ``logsumexp``, ``std``, ...)."""

    __slots__ = ()
    name = "saved_with_output"
    reads_output = True


class ZeroDerivative(Function):
    """Input 0 passed on as it is, as a function of the other inputs with derivative zero:
    what a gradient formula of PyTorch's that reads its input through a step (``relu``'s
    ``threshold_backward``, ``abs``'s ``sgn``, ``hardtanh``'s mask) is. Under
    ``create_graph=True`` such a gradient requires grad where the input does (a gradient
    penalty's ``backward()`` runs, and gives the input zeros), as PyTorch's does."""

    __slots__ = ()
    name = "zero_derivative"
    keep = ()  # (see keeps_input: the tensors it depends on, for their shapes)
    reads_output = False

    def keeps_input(self, i: int) -> bool:
        return i > 0

    def forward(self, ns: Any, g: Any, *of: Any) -> Any:
        return g

    def backward(self, g: Any, ns: Any, inputs: Any, out: Any) -> Any:
        return (g,) + tuple(None if x is None else ns.zeros_like(x) for x in inputs[1:])


class UndefinedDerivative(ZeroDerivative):
    """:class:`ZeroDerivative` that gives the other inputs no gradient at all (PyTorch's undefined
    one, where its double backward returns none for them: a leaf reached only through it is
    unused), though the value requires grad where they do."""

    __slots__ = ()
    name = "undefined_derivative"

    def backward(self, g: Any, ns: Any, inputs: Any, out: Any) -> Any:
        return (g,) + (None,) * (len(inputs) - 1)


def depends_on(g: Any, ns: Any, *of: Any, undefined: bool = False) -> Any:
    """``g``, made a zero-derivative function of ``of`` when gradients are recorded
    (``create_graph=True``) and one of ``of`` requires grad (see :class:`ZeroDerivative`): also
    where ``g`` already requires grad through other tensors, since PyTorch's backward node takes
    the input, so a later gradient finds it used (zeros), not unused; ``undefined=True``: a
    function of them with no derivative (:class:`UndefinedDerivative`)."""
    if not ns.recording or not any(getattr(t, "requires_grad", False) for t in of):
        return g
    return (UndefinedDerivative if undefined else ZeroDerivative).apply(g, *of)


class GradientOf(Function):
    """The value of input 0 with the gradient of input 1 (a surrogate of the same shape that
    routes the gradient as PyTorch's op does): ``index_copy`` and ``max_unpool`` write the
    last of duplicate rows, and every one of them gets the gradient of where it was written."""

    __slots__ = ()
    name = "gradient_of"
    keep = ()
    reads_output = False

    def forward(self, ns: Any, value: Any, surrogate: Any) -> Any:
        return value

    def backward(self, g: Any, ns: Any, inputs: Any, out: Any) -> Any:
        return None, g


def with_gradient_of(value: Any, surrogate: Any) -> Any:
    """``value`` (a tensor), differentiated as ``surrogate`` is, where that requires grad."""
    if not surrogate.requires_grad:
        return value
    return GradientOf.apply(value.detach(), surrogate)


class SavedPiecewise(Saved):
    """:class:`Saved` of an op whose PyTorch gradient is a step function of the kept tensors
    (``leaky_relu hardtanh threshold hardsigmoid``): recorded, it depends on them (zero derivative)."""

    __slots__ = ()
    name = "saved_piecewise"

    def backward(self, g: Any, ns: Any, inputs: Any, out: Any) -> Any:
        return (depends_on(g, ns, *inputs[1:]),) + (None,) * (len(inputs) - 1)


class SavedJoint(Saved):
    """:class:`Saved` of an op whose PyTorch backward is one op of the kept tensors
    (``native_layer_norm_backward``, ``native_batch_norm_backward``): recorded
    (``create_graph=True``), every gradient it passes on requires grad where one of them does, as
    that op's results all do (a bias's gradient too, a sum of the incoming gradient alone); their
    derivative through it is undefined, as PyTorch's double backward gives them none of its own."""

    __slots__ = ()
    name = "saved_joint"

    def backward(self, g: Any, ns: Any, inputs: Any, out: Any) -> Any:
        return (depends_on(g, ns, *inputs[1:], undefined=True),) + (None,) * (len(inputs) - 1)


def saved_for_backward(out: Any, *tensors: Any, output: bool = False, piecewise: bool = False,
                       joint: bool = False) -> Any:  # fmt: skip
    """``out``, recorded as keeping ``tensors`` (the ones among them that are tensors) and,
    with ``output=True``, itself for the backward, as the PyTorch op it computes does;
    ``piecewise=True`` for an op whose gradient is a step function of them (:class:`SavedPiecewise`);
    ``joint=True`` for one whose backward is one op of them (:class:`SavedJoint`).

    Nothing is recorded where ``out`` needs no gradient (no graph, no check)."""
    if not out.requires_grad:
        return out
    kept = [t for t in tensors if isinstance(t, _function.Tensor)]
    if not kept and not output:
        return out
    if piecewise:
        return SavedPiecewise.apply(out, *kept)
    if joint:
        return SavedJoint.apply(out, *kept)
    return (SavedWithOutput if output else Saved).apply(out, *kept)


class NoGradient(Function):
    """Input 0 passed on as it is, in the graph of the other inputs but giving them no gradient
    at all (PyTorch's undefined gradient: a leaf reached only through it keeps ``.grad`` None,
    and ``autograd.grad`` calls it unused), as PyTorch's ord-0 ``vector_norm``."""

    __slots__ = ()
    name = "no_gradient"
    keep = ()
    reads_output = False

    def keeps_input(self, i: int) -> bool:
        return False

    def forward(self, ns: Any, value: Any, *of: Any) -> Any:
        return value

    def backward(self, g: Any, ns: Any, inputs: Any, out: Any) -> Any:
        return (None,) * len(inputs)


class NotDifferentiable(NoGradient):
    """:class:`NoGradient` whose backward raises PyTorch's error for an op without a derivative
    formula (``bincount``'s weights, ``histogram``'s input): the result requires grad where an
    input does, as PyTorch's, and a backward through it refuses. ``args``: the op's name."""

    __slots__ = ()
    name = "NotImplemented"

    def backward(self, g: Any, ns: Any, inputs: Any, out: Any) -> Any:
        raise RuntimeError(f"derivative for aten::{self.args} is not implemented")


#: The clamp of PyTorch's binary_cross_entropy_backward kernel (a float), and of its double backward (a double)
_BCE_KERNEL_EPS = float(np.float32(1e-12))
_BCE_EPS = 1e-12


def _clamp_min(ns: Any, v: Any, lo: float) -> Any:
    return v.clamp_min(lo) if ns.recording else ns.maximum(v, lo)


class BinaryCrossEntropyGradient(Function):
    """``(x - t) / max(x (1 - x), 1e-12)``: PyTorch's ``binary_cross_entropy_backward`` of probabilities
    ``x`` and targets ``t`` (per unit of the incoming gradient), whose own derivatives are PyTorch's
    double backward: ``(x^2 - 2 x t + t) / ((x + eps)^2 (1 - x + eps)^2)`` for ``x`` and
    ``-1 / (max(1 - x, eps) max(x, eps))`` for ``t`` (finite or infinite where ``x`` is 0 or 1)."""

    __slots__ = ()
    name = "binary_cross_entropy_backward"
    keep = (0, 1)
    reads_output = False

    def forward(self, ns: Any, x: Any, t: Any) -> Any:
        return (x - t) / ns.maximum(x * (1 - x), _BCE_KERNEL_EPS)

    def backward(self, g: Any, ns: Any, inputs: Any, out: Any) -> Any:
        x, t = inputs
        gx = g * (x * x - 2 * x * t + t) / ((x + _BCE_EPS) * (x + _BCE_EPS) * (1 - x + _BCE_EPS) * (1 - x + _BCE_EPS))
        gt = -g / (_clamp_min(ns, 1 - x, _BCE_EPS) * _clamp_min(ns, x, _BCE_EPS))
        return gx, gt


class BinaryCrossEntropyEdge(Function):
    """Input 0 (binary cross-entropy of probabilities ``x``, input 1, and targets ``t``, input 2,
    with no graph of its own) with PyTorch's gradients: ``g`` times
    :class:`BinaryCrossEntropyGradient` for ``x`` and ``-g logit(x) = g (log1p(-x) - log(x))`` for
    ``t``, each differentiable again as PyTorch's. Taken where ``x`` is 0 or 1, where the clamped
    logs of the definition give other gradients."""

    __slots__ = ()
    name = "binary_cross_entropy"
    keep = (1, 2)
    reads_output = False

    def forward(self, ns: Any, value: Any, x: Any, t: Any) -> Any:
        return value

    def backward(self, g: Any, ns: Any, inputs: Any, out: Any) -> Any:
        _, x, t = inputs
        if ns.recording:
            return None, g * BinaryCrossEntropyGradient.apply(x, t), g * ((-x).log1p() - x.log())
        with np.errstate(divide="ignore", invalid="ignore"):
            xp = ns.device.xp
            return None, g * ((x - t) / ns.maximum(x * (1 - x), _BCE_KERNEL_EPS)), g * (xp.log1p(-x) - xp.log(x))
