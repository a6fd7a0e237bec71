"""``tga.autograd.functional``: PyTorch's ``jacobian hessian vjp jvp hvp vhp``, each a few
calls of :func:`tga.autograd.grad` (reverse mode; a Jacobian-vector product by the double
backward trick, as PyTorch computes it). Inputs and outputs are a tensor or a tuple of
tensors, and the results nest as PyTorch's do.

>>> jac = tga.autograd.functional.jacobian(lambda x: x.exp(), x)  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..engine.switches import enable_grad, is_grad_enabled, set_grad_enabled
from ..tensors._tensor import Tensor, stack
from .api import grad

__all__ = ["hessian", "hvp", "jacobian", "jvp", "vhp", "vjp"]

_STRATEGIES = ("forward-mode", "reverse-mode")


class StrategyError(ValueError, AssertionError):
    """An unknown ``strategy``: PyTorch asserts it (``AssertionError``); it is a bad value too."""


def _as_tuple(x: Any, what: str, who: str) -> tuple[bool, tuple]:
    """``(whether x was a tuple, x as a tuple of tensors)``."""
    is_tuple = isinstance(x, tuple)  # (only a tuple: a list is one argument, and not a tensor, as in PyTorch)
    items = tuple(x) if is_tuple else (x,)
    for i, t in enumerate(items):
        if not isinstance(t, Tensor):
            kind = "a tuple of Tensors" if is_tuple else "a Tensor"
            raise TypeError(f"{who}: the {what} must be either a Tensor or a tuple of Tensors, but the value at "
                            f"index {i} has type {type(t).__name__} (expected {kind})")  # fmt: skip
    return is_tuple, items


def _unpack(res: Any, is_tuple: Any) -> Any:
    """``res`` (tuples) unpacked where the caller gave or returned single tensors; for a
    Jacobian ``is_tuple`` is ``(outputs were a tuple, inputs were)``."""
    if isinstance(is_tuple, tuple):
        outs_tuple, ins_tuple = is_tuple
        if not ins_tuple:
            res = tuple(r[0] for r in res)
        return res if outs_tuple else res[0]
    return res if is_tuple else res[0]


def _prepare(inputs: tuple, create_graph: bool, need_graph: bool) -> tuple:
    """The tensors ``func`` is called on: with ``create_graph``, inputs that require grad keep
    their history (so the results can be differentiated with respect to them); others are
    detached copies that require grad where a graph is needed."""
    return tuple(t.view_as(t) if create_graph and t.requires_grad else t.detach().requires_grad_(need_graph)
                 for t in inputs)  # fmt: skip


def _finish(xs: Any, create_graph: bool) -> Any:
    """Results detached unless the caller asked for a graph."""
    if create_graph:
        return xs
    if isinstance(xs, tuple):
        return tuple(_finish(x, create_graph) for x in xs)
    return xs.detach()


def _zeros_like(t: Tensor, requires_grad: bool = False) -> Tensor:
    z = Tensor._wrap(t._dev.zeros(tuple(t.shape), t._data.dtype), t._dev)
    return z.requires_grad_(requires_grad)


def _check_v(v: tuple, others: tuple, v_tuple: bool, who: str) -> None:
    if len(v) != len(others):
        raise RuntimeError(f"{who}: v is a tuple of invalid length: should be {len(others)} but got {len(v)}.")
    for i, (a, b) in enumerate(zip(v, others)):
        if tuple(a.shape) != tuple(b.shape):
            head = "" if v_tuple else "The given v should contain a single Tensor. "
            raise RuntimeError(f"{who}: {head}Entry {i} in v has invalid size: should be {tuple(b.shape)} but got "
                               f"{tuple(a.shape)}.")  # fmt: skip


_UNDIFFERENTIABLE = {
    "outputs": "Output {i} of the user-provided function does not require gradients. The outputs must be computed "
    "in a differentiable manner from the input when running in strict mode.",
    "grad_inputs": "The gradient with respect to input {i} is independent of the inputs of the user-provided "
    "function. This is not allowed in strict mode.",
    "jacobian": "While computing the hessian, found that the jacobian of the user-provided function with respect "
    "to input {i} is independent of the input. This is not allowed in strict mode (the function must be twice "
    "differentiable, and its jacobian depend on the inputs: a linear function's does not).",
    "hessian": "The hessian of the user-provided function with respect to input {i} is independent of the input. "
    "This is not allowed in strict mode (the function must be thrice differentiable).",
}


def _check_differentiable(xs: tuple, what: str, strict: bool) -> None:
    if not strict:
        return
    for i, x in enumerate(xs):
        if x is None:
            raise RuntimeError(f"The output of the user-provided function is independent of input {i}. This is not "
                               "allowed in strict mode.")  # fmt: skip
        if not x.requires_grad:
            raise RuntimeError(_UNDIFFERENTIABLE[what].format(i=i))


_INDEPENDENT = {
    "back": "The output of the user-provided function is independent of input {i}.",
    "back_trick": "The gradient with respect to the input is independent of entry {i} in the grad_outputs when "
    "using the double backward trick to compute forward mode gradients.",
    "double_back": "The jacobian of the user-provided function is independent of input {i}.",
    "double_back_trick": "The hessian of the user-provided function is independent of entry {i} in the grad jacobian.",
}


def _fill_zeros(grads: tuple, refs: tuple, strict: bool, stage: str) -> tuple:
    """``grads`` with zeros (of ``refs[i]``'s shape) where nothing flowed; strict mode raises there."""
    out = []
    for i, (g, r) in enumerate(zip(grads, refs)):
        if g is None:
            if strict:
                raise RuntimeError(_INDEPENDENT[stage].format(i=i) + " This is not allowed in strict mode.")
            g = _zeros_like(r)
        out.append(g)
    return tuple(out)


def _grad(outputs: tuple, inputs: tuple, grad_outputs: tuple | None = None, create_graph: bool = False,
          retain_graph: bool | None = None) -> tuple:  # fmt: skip
    """``grad`` of the outputs that require grad (None for every input where none does)."""
    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    pairs = [(o, g) for o, g in zip(outputs, grad_outputs) if o is not None and o.requires_grad]
    if not pairs:
        return (None,) * len(inputs)
    outs, gos = zip(*pairs)
    return grad(list(outs), list(inputs), list(gos), allow_unused=True, create_graph=create_graph,
                retain_graph=retain_graph)  # fmt: skip


def vjp(func: Callable[..., Any], inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple[Any, Any]:  # fmt: skip
    """``(func(*inputs), v^T J)``: the vector-Jacobian product at ``inputs``."""
    with enable_grad():
        ins_tuple, inputs = _as_tuple(inputs, "inputs", "vjp")
        inputs = _prepare(inputs, create_graph, True)
        outs_tuple, outputs = _as_tuple(func(*inputs), "outputs of the user-provided function", "vjp")
        _check_differentiable(outputs, "outputs", strict)
        if v is not None:
            v_tuple, v = _as_tuple(v, "v", "vjp")
            v = _prepare(v, create_graph, False)
            _check_v(v, outputs, v_tuple, "vjp")
        elif len(outputs) != 1 or outputs[0].numel() != 1:
            raise RuntimeError("vjp: the vector v can only be None if the user-provided function returns a single "
                               "Tensor with a single element.")  # fmt: skip
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        res = _fill_zeros(_grad(outputs, inputs, v, create_graph=create_graph), inputs, strict, "back")
    return _unpack(_finish(outputs, create_graph), outs_tuple), _unpack(_finish(res, create_graph), ins_tuple)


def jvp(func: Callable[..., Any], inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple[Any, Any]:  # fmt: skip
    """``(func(*inputs), J v)``: the Jacobian-vector product, by the double backward trick
    (the vector-Jacobian product is linear in its vector: differentiate it by the vector)."""
    with enable_grad():
        ins_tuple, inputs = _as_tuple(inputs, "inputs", "jvp")
        inputs = _prepare(inputs, create_graph, True)
        if v is not None:
            v_tuple, v = _as_tuple(v, "v", "jvp")
            v = _prepare(v, create_graph, False)
            _check_v(v, inputs, v_tuple, "jvp")
        elif len(inputs) != 1 or inputs[0].numel() != 1:
            raise RuntimeError("jvp: the vector v can only be None if the input to the user-provided function is a "
                               "single Tensor with a single element.")  # fmt: skip
        outs_tuple, outputs = _as_tuple(func(*inputs), "outputs of the user-provided function", "jvp")
        _check_differentiable(outputs, "outputs", strict)
        u = tuple(_zeros_like(o, requires_grad=True) for o in outputs)
        grad_inputs = _grad(outputs, inputs, u, create_graph=True)
        _check_differentiable(grad_inputs, "grad_inputs", strict)
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        res = _fill_zeros(_grad(grad_inputs, u, v, create_graph=create_graph), outputs, strict, "back_trick")
    return _unpack(_finish(outputs, create_graph), outs_tuple), _unpack(_finish(res, create_graph), outs_tuple)


def jacobian(func: Callable[..., Any], inputs: Any, create_graph: bool = False, strict: bool = False,
             vectorize: bool = False, strategy: str = "reverse-mode") -> Any:  # fmt: skip
    """The Jacobian of ``func`` at ``inputs``: ``out.shape + in.shape`` for a tensor in and
    out; a tuple over the inputs, the outputs, or both (outputs first) where those are tuples.
    ``vectorize`` and ``strategy`` are accepted; every row is one reverse-mode pass here."""
    if strategy not in _STRATEGIES:
        raise StrategyError('jacobian: expected strategy to be either "forward-mode" or "reverse-mode", got '
                         f"{strategy!r}")  # fmt: skip
    if strategy == "forward-mode":
        if create_graph:
            raise NotImplementedError('jacobian: create_graph=True and strategy="forward-mode" are not supported '
                                      'together; set create_graph=False or strategy="reverse-mode"')  # fmt: skip
        if not vectorize:
            raise NotImplementedError('jacobian: strategy="forward-mode" needs vectorize=True')
    with enable_grad():
        ins_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
        inputs = _prepare(inputs, create_graph, True)
        outs_tuple, outputs = _as_tuple(func(*inputs), "outputs of the user-provided function", "jacobian")
        _check_differentiable(outputs, "outputs", strict)
        if strict and vectorize:  # (checked once the function ran, as PyTorch)
            raise RuntimeError("torch.autograd.functional.jacobian: `strict=True` and `vectorized=True` are not "
                               "supported together. Please either set `strict=False` or `vectorize=False`.")  # fmt: skip
        result = []
        for i, out in enumerate(outputs):
            rows: list[list[Tensor]] = [[] for _ in inputs]
            flat = out.reshape(-1)
            for k in range(out.numel()):
                gs = _grad((flat[k],), inputs, retain_graph=True, create_graph=create_graph)
                for j, (g, x) in enumerate(zip(gs, inputs)):
                    if g is not None and strict and create_graph and not g.requires_grad:
                        raise RuntimeError(f"The jacobian of the user-provided function is independent of input {i}. "
                                           "This is not allowed in strict mode when create_graph=True.")  # fmt: skip
                    if g is None:
                        if strict:
                            raise RuntimeError(f"Output {i} of the user-provided function is independent of input "
                                               f"{j}. This is not allowed in strict mode.")  # fmt: skip
                        g = _zeros_like(x)
                    rows[j].append(g)
            result.append(tuple(_rows_to_jacobian(r, out, x) for r, x in zip(rows, inputs)))
        res = _finish(tuple(result), create_graph)
        if strategy == "forward-mode":  # (PyTorch's forward-mode path builds lists, which its unpacking keeps)
            res = [list(r) for r in res]
        return _unpack(res, (outs_tuple, ins_tuple))


def _rows_to_jacobian(rows: list[Tensor], out: Tensor, x: Tensor) -> Tensor:
    shape = tuple(out.shape) + tuple(x.shape)
    if not rows:  # (as PyTorch, which stacks the rows)
        raise RuntimeError(f"jacobian: an output of shape {tuple(out.shape)} has no elements to differentiate")
    return stack(rows, 0).reshape(shape)


def hessian(func: Callable[..., Any], inputs: Any, create_graph: bool = False, strict: bool = False,
            vectorize: bool = False, outer_jacobian_strategy: str = "reverse-mode") -> Any:  # fmt: skip
    """The Hessian of a scalar ``func`` at ``inputs``: ``in.shape + in.shape`` for one tensor,
    a tuple of tuples (``[i][j]``: by input i, then input j) for a tuple of them."""
    ins_tuple, inputs = _as_tuple(inputs, "inputs", "hessian")
    if outer_jacobian_strategy not in _STRATEGIES:
        raise StrategyError('hessian: expected outer_jacobian_strategy to be either "forward-mode" or "reverse-mode", '
                         f"got {outer_jacobian_strategy!r}")  # fmt: skip

    def scalar(*xs: Tensor) -> Tensor:
        out = func(*xs)
        is_tuple, t_out = _as_tuple(out, "outputs of the user-provided function", "hessian")
        _check_differentiable(t_out, "outputs", strict)
        if is_tuple:
            raise RuntimeError("hessian: the function given to hessian should return a single Tensor")
        if out.numel() != 1:
            raise RuntimeError(f"hessian: the Tensor returned by the function given to hessian should contain a "
                               f"single element, got shape {tuple(out.shape)}")  # fmt: skip
        return out.reshape(())

    def gradient(*xs: Tensor) -> Any:
        jac = jacobian(scalar, xs, create_graph=True)
        _check_differentiable(jac, "jacobian", strict)
        return jac

    res = jacobian(gradient, inputs, create_graph=create_graph, strict=strict, vectorize=vectorize,
                   strategy=outer_jacobian_strategy)  # fmt: skip
    return _unpack(res, (ins_tuple, ins_tuple))


def _scalar_and_gradient(func: Callable[..., Any], inputs: Any, v: Any, create_graph: bool, strict: bool,
                         who: str) -> tuple:  # fmt: skip
    """The shared start of ``vhp`` and ``hvp``: the inputs, ``v``, the output and its gradient."""
    ins_tuple, inputs = _as_tuple(inputs, "inputs", who)
    inputs = _prepare(inputs, create_graph, True)
    if v is not None:
        v_tuple, v = _as_tuple(v, "v", who)
        v = _prepare(v, create_graph, False)
        _check_v(v, inputs, v_tuple, who)
    elif len(inputs) != 1 or inputs[0].numel() != 1:
        raise RuntimeError(f"{who}: the vector v can only be None if the input to the user-provided function is a "
                           "single Tensor with a single element.")  # fmt: skip
    outs_tuple, outputs = _as_tuple(func(*inputs), "outputs of the user-provided function", who)
    _check_differentiable(outputs, "outputs", strict)
    if outs_tuple:
        raise RuntimeError(f"{who}: the function given to {who} should return a single Tensor")
    if outputs[0].numel() != 1:
        raise RuntimeError(f"{who}: the Tensor returned by the function given to {who} should contain a single "
                           f"element, got shape {tuple(outputs[0].shape)}")  # fmt: skip
    jac = _grad(outputs, inputs, create_graph=True)
    _check_differentiable(jac, "jacobian", strict)
    return ins_tuple, inputs, v, outputs, jac


def vhp(func: Callable[..., Any], inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple[Any, Any]:  # fmt: skip
    """``(func(*inputs), v^T H)`` for a scalar ``func``."""
    with enable_grad():
        ins_tuple, inputs, v, outputs, jac = _scalar_and_gradient(func, inputs, v, create_graph, strict, "vhp")
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        res = _fill_zeros(_grad(jac, inputs, v, create_graph=create_graph), inputs, strict, "double_back")
    return _finish(outputs[0], create_graph), _unpack(_finish(res, create_graph), ins_tuple)


def hvp(func: Callable[..., Any], inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple[Any, Any]:  # fmt: skip
    """``(func(*inputs), H v)`` for a scalar ``func``, by the double backward trick."""
    with enable_grad():
        ins_tuple, inputs, v, outputs, jac = _scalar_and_gradient(func, inputs, v, create_graph, strict, "hvp")
        u = tuple(_zeros_like(x, requires_grad=True) for x in inputs)
        back = _grad(jac, inputs, u, create_graph=True)
        _check_differentiable(jac, "hessian", strict)
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        res = _fill_zeros(_grad(back, u, v, create_graph=create_graph), inputs, strict, "double_back_trick")
    return _finish(outputs[0], create_graph), _unpack(_finish(res, create_graph), ins_tuple)
