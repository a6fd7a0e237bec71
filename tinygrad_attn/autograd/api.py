"""``tga.autograd.grad`` and ``tga.autograd.backward`` with PyTorch's arguments, on the
engine's one backward pass (:func:`tinygrad_attn.engine.backward.run_backward`)."""

from __future__ import annotations

from typing import Any

from ..engine import backward as _backward
from ..engine import function as _function
from ..engine.backward import _accumulate_found, run_backward
from ..engine.function import replay_if_stale
from ..tensors._tensor import stack


def _tensors(x: Any, what: str, who: str) -> list[Any]:
    T = _function.Tensor
    items = [x] if isinstance(x, T) else list(x)
    for i, t in enumerate(items):
        if not isinstance(t, T):
            raise TypeError(f"{who}: {what} must be Tensors, but element {i} is {type(t).__name__}")
    return items


def _grads_for(outs: list[Any], given: Any, who: str) -> list[Any]:
    """One gradient (or None) per output, checked as PyTorch checks them: a number where a
    sequence is expected is a TypeError, extra gradients are ignored, too few an error."""
    T = _function.Tensor
    if given is None:
        return [None] * len(outs)
    if isinstance(given, T):
        gs = [given]
    else:
        try:
            gs = list(given)
        except TypeError:
            raise TypeError(f"'{type(given).__name__}' object is not iterable") from None
    for g in gs:
        if g is not None and not isinstance(g, T):
            raise TypeError(f"gradients can be either Tensors or None, but got {type(g).__name__}")
    if len(gs) < len(outs):
        raise RuntimeError(f"got {len(outs)} tensors and {len(gs)} gradients")
    return gs[: len(outs)]


def grad(
    outputs: Any,
    inputs: Any,
    grad_outputs: Any = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    only_inputs: bool = True,
    allow_unused: bool | None = None,
    is_grads_batched: bool = False,
    materialize_grads: bool = False,
) -> Any:
    """The gradients of ``outputs`` with respect to ``inputs`` (a tuple; a dict when
    ``inputs`` is one), as ``torch.autograd.grad``; no ``.grad`` is touched.

    >>> (gx,) = tga.autograd.grad((x * x).sum(), x)  # doctest: +SKIP
    """
    if materialize_grads and allow_unused is False:
        raise ValueError("Expected allow_unused to be True or not passed when materialize_grads=True, but got: "
                         "allow_unused=False.")  # fmt: skip
    allow = materialize_grads if allow_unused is None else allow_unused
    keys = None
    if isinstance(inputs, dict):
        keys, inputs = list(inputs), list(inputs.values())
    outs = _tensors(outputs, "outputs", "grad")
    ins = _tensors(inputs, "inputs", "grad")
    gos = _grads_for(outs, grad_outputs, "grad")
    if is_grads_batched:
        n = {int(g.shape[0]) for g in gos if g is not None}
        if len(n) != 1:
            raise RuntimeError("grad: is_grads_batched=True needs grad_outputs with one leading batch size")
        (n,) = n
        keep = create_graph if retain_graph is None else retain_graph
        rows = [_grad(outs, ins, [None if g is None else g[b] for g in gos], True if b < n - 1 else keep,
                      create_graph, allow, False) for b in range(n)]  # fmt: skip
        result = tuple(None if rows[0][i] is None else stack([r[i] for r in rows]) for i in range(len(ins)))
        # (an input nothing reached gets zeros of its own shape, unbatched, as in PyTorch)
        result = _materialized(ins, result) if materialize_grads else result
    else:
        result = _grad(outs, ins, gos, retain_graph, create_graph, allow, materialize_grads)
    return dict(zip(keys, result)) if keys is not None else result


def _grad(outs: list, ins: list, gos: list, retain_graph: bool | None, create_graph: bool, allow: bool,
          materialize: bool) -> tuple:  # fmt: skip
    found = _backward.grad(outs, ins, gos, retain_graph=retain_graph, create_graph=create_graph,
                           allow_unused=allow)  # fmt: skip
    return _materialized(ins, found) if materialize else found


def _materialized(ins: list, found: tuple) -> tuple:
    T = _function.Tensor
    return tuple(T._wrap(t._dev.zeros(tuple(t.shape), t._data.dtype), t._dev) if g is None else g
                 for t, g in zip(ins, found))  # fmt: skip


def backward(
    tensors: Any,
    grad_tensors: Any = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    grad_variables: Any = None,
    inputs: Any = None,
) -> None:
    """Accumulate the gradients of ``tensors`` into the ``.grad`` of the leaves (only of
    ``inputs``, where given), as ``torch.autograd.backward``."""
    roots = _tensors(tensors, "tensors", "backward")
    if grad_variables is not None:
        if grad_tensors is not None:
            raise RuntimeError("backward: give grad_tensors or its old name grad_variables, not both")
        grad_tensors = grad_variables
    gs = _grads_for(roots, grad_tensors, "backward")
    targets = None
    if inputs is not None:
        targets = _tensors(inputs, "inputs", "backward")
        if not targets:
            raise RuntimeError("'inputs' argument to backward() cannot be empty.")
    for i, r in enumerate(roots):
        replay_if_stale(r)
        if not r.requires_grad:
            raise RuntimeError(f"backward: element {i} of tensors does not require grad and does not have a grad_fn")
    root_grads = [_backward._root_grad(r, g, create_graph, "backward") for r, g in zip(roots, gs)]
    keep = create_graph if retain_graph is None else retain_graph
    found = run_backward(roots, root_grads, retain_graph=keep, create_graph=create_graph, targets=targets,
                         retained_too=True, within=_backward._within_paths(roots, targets))  # fmt: skip
    _accumulate_found(targets, found)
