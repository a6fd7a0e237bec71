"""How backpropagation works here: the whole algorithm in one short function.

:func:`reference_grad` walks the same graph as the engine's pass
(:func:`.backward.run_backward`): a tensor's ``_ctx`` is the node (a
:class:`.function.Function`) that made it, the node's ``inputs`` are the tensors it read,
and its ``backward(g, ns, saved, out)`` turns the gradient of its output into one gradient
per input (the chain rule, one op at a time). The engine's pass computes the same numbers
(``tests/engine/test_reference_backward.py`` holds the two equal over the op table); what
it adds is speed and memory (no walk before the pass, values freed as soon as they are
done, gradients written over in place), hooks, ``retain_grad``, in-place histories,
``create_graph`` and tracing.

>>> x = tga.tensor([1.0, 2.0], requires_grad=True)  # doctest: +SKIP
>>> reference_grad((x * x).sum(), [x], np.ones(()))  # [array([2., 4.])]  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from . import function as _function
from .backward import SliceGradient, unbroadcast


def reference_grad(output: Any, inputs: Sequence[Any], grad_output: Any) -> list[Any]:
    """The gradients (arrays) of ``output`` with respect to ``inputs``, the gradient of
    ``output`` being the array ``grad_output``; None for an input ``output`` does not use."""
    Tensor = _function.Tensor

    # 1. Order: every tensor after the tensors it was computed from (depth first; the
    #    recursion suits graphs of up to a few hundred nodes).
    order: list[Any] = []
    seen: set[int] = set()

    def visit(t: Any) -> None:
        if id(t) not in seen:
            seen.add(id(t))
            for x in t._ctx.inputs if t._ctx is not None else ():
                if isinstance(x, Tensor) and x.requires_grad:
                    visit(x)
            order.append(t)

    visit(output)
    grads = {id(output): grad_output}
    for t in reversed(order):  # from the output back: each tensor's gradient is complete
        fn, g = t._ctx, grads.get(id(t))
        if fn is None or g is None:  # a leaf, or a tensor no gradient reaches
            continue
        # 2. Apply: the node's backward gives each input its share of the gradient.
        for x, gx in zip(fn.inputs, fn.backward(g, t._dev.ops, fn.saved, t._data)):
            if not isinstance(x, Tensor) or not x.requires_grad or gx is None:
                continue
            if isinstance(gx, SliceGradient):  # a slice's share, kept compact: written out
                gx = gx.dense()
            gx = unbroadcast(gx, tuple(x.shape), t._dev.ops)  # sum over broadcast axes
            # 3. Accumulate: a tensor several ops read gets the sum of their shares.
            grads[id(x)] = grads[id(x)] + gx if id(x) in grads else gx
    return [grads.get(id(x)) for x in inputs]
