"""Ops computed from values, on PyTorch's ``meta`` device (:mod:`.meta`, whose tensors have none).

An op computed from its inputs' values whose results' shapes, dtypes and strides do not depend on
them (a factorisation that checks for singularity, a sort or search on the host, a range check with
``item()``) is declared :func:`stand_in`: on meta inputs it runs once on CPU stand-ins of their
shapes, dtypes and strides holding harmless values (identity matrices for a factorisation, so that
nothing is singular; zeros elsewhere, which pass every range check), and its results' metadata
becomes the meta placeholders, each a :class:`StandIn` node of the inputs that require grad, named
as the stand-in's node. PyTorch's meta kernels check no values either. Where PyTorch's meta device
has no kernel (``cov``, ``combinations``, ``ctc_loss`` of tensor lengths),
:func:`refuse_without_kernel` raises its error instead.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .. import random
from ..engine.function import Function
from ..engine.layout import is_non_overlapping_and_dense
from ..tensors._tensor import Tensor
from .backend import get_device
from .meta import _tensor_strides, placeholder

# -- ops computed from values: run on stand-ins, or refused as PyTorch's --------------------------
#: The most elements the stand-ins of one call may hold together (8 bytes each): beyond, the op
#: refuses, as a stand-in of a meta tensor of 10**12 elements cannot be made
STAND_IN_LIMIT = 1 << 24
#: PyTorch's message of an op its meta device has no kernel for (``{}``: ATen's name of it)
NO_KERNEL = (
    "{}: attempted to run this operator with Meta tensors, but there was no fake impl or Meta kernel registered. "
    "You may have run into this message while using an operator with PT2 compilation APIs (torch.compile/"
    "torch.export); in order to use this operator with those APIs you'll need to add a fake impl. Please see the "
    "following for next steps:  https://pytorch.org/tutorials/advanced/custom_ops.html"
)


class StandIn(Function):
    """A meta result computed on stand-ins (:func:`stand_in`): ``args`` is its placeholder and the
    name of the stand-in's node (None: its class's); the inputs are the meta tensors that require
    grad, and their gradients are placeholders of their shapes (what a meta backward computes),
    themselves such nodes of the gradient and the inputs under ``create_graph``."""

    __slots__ = ()
    name = "stand_in"
    keep = ()
    reads_output = False
    reads_values = False

    @property
    def torch_grad_fn_name(self) -> str | None:
        return self.args[1]

    def forward(self, ns: Any, *xs: Any) -> Any:
        return self.args[0]

    def backward(self, g: Any, ns: Any, inputs: Sequence[Any], out: Any) -> Sequence[Any]:
        if getattr(ns, "recording", False):  # (create_graph: each gradient a node of g and the inputs, as PyTorch's)
            return tuple(StandIn.apply(g, *inputs, args=(placeholder(x.shape, x._data.dtype), None)) for x in inputs)
        return tuple(ns.zeros_like(x) for x in inputs)


def _tensors(v: Any, out: list) -> list:
    """The tensors of an argument or a result, within tuples, lists and dicts, in order."""
    if isinstance(v, Tensor):
        out.append(v)
    elif isinstance(v, (tuple, list)):
        for x in v:
            _tensors(x, out)
    elif isinstance(v, dict):
        for x in v.values():
            _tensors(x, out)
    return out


def _mapped(v: Any, f: Callable[[Any], Any]) -> Any:
    """``v`` with each tensor ``t`` in it (within tuples, named tuples, lists, dicts) as ``f(t)``."""
    if isinstance(v, Tensor):
        return f(v)
    if isinstance(v, tuple) and hasattr(v, "_fields"):
        return type(v)(*(_mapped(x, f) for x in v))
    if isinstance(v, (tuple, list)):
        return type(v)(_mapped(x, f) for x in v)
    if isinstance(v, dict):
        return {k: _mapped(x, f) for k, x in v.items()}
    return v


def _harmless(shape: tuple[int, ...], dtype: np.dtype, values: str) -> np.ndarray:
    """Values no check refuses and no factorisation finds singular: ``"zeros"``, ``"ones"`` (weights that
    sum to more than 0), or ``"matrices"``: identity matrices (in the last two axes) of a floating tensor,
    and of an integer one the row numbers from 1 along its last axis (LAPACK's pivots of no exchange)."""
    out = np.ones(shape, dtype) if values == "ones" else np.zeros(shape, dtype)
    if values == "matrices" and out.size:
        if dtype.kind in "fc" and len(shape) >= 2:
            out[...] = np.eye(shape[-2], shape[-1], dtype=dtype)
        elif dtype.kind in "iu" and len(shape) >= 1:
            out[...] = np.arange(1, shape[-1] + 1).astype(dtype)
    return out


def _stand_in_of(t: Any, values: str) -> Any:
    """A CPU tensor of meta tensor ``t``'s shape, dtype and strides (where dense), of harmless values,
    requiring grad where ``t`` does."""
    a, shape = t._data, tuple(t.shape)
    strides = _tensor_strides(a)
    v = _harmless(shape, a.dtype, values)
    if v.ndim > 1 and v.size and is_non_overlapping_and_dense(shape, strides) and all(s >= 0 for s in strides):
        order = sorted(range(len(shape)), key=lambda i: -strides[i])
        v = np.transpose(np.ascontiguousarray(np.transpose(v, order)), np.argsort(order))
    s = Tensor._wrap(v, get_device("cpu"))
    return s.requires_grad_(True) if t.requires_grad else s


def _as_meta(r: Any, cpu_to_meta: dict, grads: list, dev: Any, laid_out: Any = None) -> Any:
    """A stand-in's result ``r`` (a CPU tensor) on the meta device: the meta input it is, or a
    placeholder of its metadata, recorded as a :class:`StandIn` node of ``grads`` where it requires grad."""
    if id(r) in cpu_to_meta:
        return cpu_to_meta[id(r)]
    if r._dev.meta:
        return r
    shape = tuple(r.shape)
    strides = tuple(r.stride()) if laid_out is None else tuple(laid_out(shape))
    dense = is_non_overlapping_and_dense(shape, strides) and all(s >= 0 for s in strides)
    ph = placeholder(shape, r._data.dtype, strides if dense else None)
    if r.requires_grad and grads:
        return StandIn.apply(*grads, args=(ph, r.grad_fn.name() if r.grad_fn is not None else "StandInBackward0"))
    return Tensor._wrap(ph, dev)


def stand_in(
    values: str = "zeros",
    check: Callable[..., None] | None = None,
    strides: Callable[[tuple[int, ...]], tuple[int, ...]] | None = None,
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Declare a function computed from its tensors' values whose results' shapes, dtypes and strides do
    not depend on them: on meta tensors it runs on CPU stand-ins of ``values`` (see :func:`_harmless`)
    and gives placeholders of its results (the module's docstring), after ``check(*args, **kw)`` of
    the meta arguments (what PyTorch's meta kernel refuses). ``strides(shape)``: a result's strides
    where PyTorch's meta kernel lays it out unlike its CPU one. Other calls run it as it is."""

    def deco(fn: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(fn)
        def run(*args: Any, **kw: Any) -> Any:
            metas = [t for t in _tensors((args, kw), []) if t._dev.meta]
            if not metas:
                return fn(*args, **kw)
            if check is not None:
                check(*args, **kw)
            return _on_stand_ins(fn, metas, values, args, kw, strides)

        return run

    return deco


def _on_stand_ins(fn: Callable[..., Any], metas: list, values: str, args: tuple, kw: dict, strides: Any) -> Any:
    size = sum(t.numel() for t in {id(t): t for t in metas}.values())
    if size > STAND_IN_LIMIT:
        raise NotImplementedError(
            f"{fn.__name__}: computes from the values of its inputs, and its stand-ins of the meta tensors' shapes "
            f"{[tuple(t.shape) for t in metas]} would hold {size} elements (at most {STAND_IN_LIMIT} are made)"
        )
    meta_of: dict[int, Any] = {}
    stand_ins: dict[int, Any] = {}
    for t in metas:
        if id(t) not in stand_ins:
            stand_ins[id(t)] = s = _stand_in_of(t, values)
            meta_of[id(s)] = t
    # (PyTorch's meta kernels draw nothing: a stand-in's draws, from the default generator or one given, are undone)
    gens = [random.default_generator, *(g for g in (*args, *kw.values()) if isinstance(g, random.Generator))]
    states = [(g, g.get_state()) for g in gens]
    try:
        out = fn(*_mapped(args, lambda t: stand_ins.get(id(t), t)), **_mapped(kw, lambda t: stand_ins.get(id(t), t)))
    finally:
        for g, st in states:
            g.set_state(st)
    grads = [t for t in {id(t): t for t in metas}.values() if t.requires_grad]
    dev = metas[0]._dev
    return _mapped(out, lambda r: _as_meta(r, meta_of, grads, dev, strides))


def refuse_without_kernel(aten: str, *tensors: Any) -> None:
    """PyTorch's ``NotImplementedError`` where its meta device has no kernel for ATen's op ``aten``
    (``"aten::equal"``) and a tensor of ``tensors`` is a meta one; called where PyTorch's function
    reaches that op, after the checks of its arguments it makes first."""
    if any(getattr(getattr(t, "_dev", None), "meta", False) for t in tensors):
        raise NotImplementedError(NO_KERNEL.format(aten))
