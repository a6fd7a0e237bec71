"""``tga.autograd.Function``: PyTorch's custom-Function API.

A subclass gives static ``forward`` and ``backward`` written with tensor ops, and is used
through ``apply``::

    class Exp(tga.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            y = x.exp()
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, g):
            (y,) = ctx.saved_tensors
            return g * y

    Exp.apply(x).sum().backward()

``forward`` runs with grad mode off; where a gradient is wanted, ``apply`` records one
graph node (:class:`CustomNode`, drawn with the subclass's name) whose step calls
``backward`` with a gradient per output. In an ordinary pass ``backward`` runs without
recording; with ``create_graph=True`` its tensor ops are recorded, so the gradient is
differentiable again. A trace records the ops ``forward`` and ``backward`` make, as it
records any other code: the node itself is no line of a program.

Several differentiable outputs meet in one hidden tensor (the node's own output, a flat
vector as long as all of them together), each output taking its piece of it through an
:class:`OutputOf` node, so that the engine's one gradient sum collects the gradients of
all of them before ``backward`` runs once.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import weakref
from collections.abc import Callable
from typing import Any

import numpy as np

from ..engine import forward_grads as _fg
from ..engine import function as _function
from ..engine import saved as _saved
from ..engine import switches as _switches
from ..engine.backward import SliceGradient
from ..engine.function import _NUMPY_SCALARS, _as_ndarray, _new, _next_seq, add_uses, note_rebase
from ..engine.function import Function as _Op
from ..engine.switches import _State, is_grad_enabled, no_grad
from ..engine.versions import bump_version, version_of
from ..engine.warn import warn as _user_warn
from ..tensors.mutation.inplace import _moved_history, _rebase

__all__ = ["Function", "FunctionCtx", "once_differentiable"]

_FREED = (
    "Trying to backward through the graph a second time (or directly access saved tensors after they have "
    "already been freed). Saved intermediate values of the graph are freed when you call .backward() or "
    "autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time or "
    "if you need to access saved tensors after calling backward."
)


def _version(t: Any) -> int:
    v = version_of(t._data) if t._tracks_versions else None
    return v.count if v is not None else 0


def _describe(t: Any) -> str:
    return f"tensor of shape {tuple(t.shape)} and dtype {t.dtype}"


class FunctionCtx:
    """The ``ctx`` that ``forward`` (or ``setup_context``) and ``backward`` share: what to
    save, which outputs are changed inputs or have no gradient, and any attribute the
    user sets (``ctx.k = 2``)."""

    def __init__(self) -> None:
        self.to_save: tuple = ()
        self.dirty_tensors: tuple = ()
        self.non_differentiable: tuple = ()
        self.materialize_grads = True
        self.needs_input_grad: tuple[bool, ...] = ()
        self._packed: list | None = None  # what was saved, once apply has recorded the node
        self._outputs: list = []  # weak references to the tensors apply returned
        self._freed = False
        self._name = "Function"

    def save_for_backward(self, *tensors: Any) -> None:
        """Keep ``tensors`` (or None) for ``backward``, which reads them as ``ctx.saved_tensors``;
        an in-place change of one before the backward makes that read raise."""
        self.to_save = tensors

    def save_for_forward(self, *tensors: Any) -> None:
        """Keep ``tensors`` for ``jvp`` (forward-mode AD), which reads them as ``ctx.saved_tensors``."""
        self.saved_for_forward = tensors

    def mark_dirty(self, *tensors: Any) -> None:
        """Say that ``forward`` changed these inputs in place (and returns them)."""
        self.dirty_tensors = tensors

    def mark_non_differentiable(self, *tensors: Any) -> None:
        """Say that these outputs have no gradient (``backward`` still gets one for each: zeros)."""
        self.non_differentiable = tensors

    def set_materialize_grads(self, value: bool) -> None:
        """False: an output without a gradient gives ``backward`` None instead of zeros."""
        self.materialize_grads = bool(value)

    @property
    def saved_tensors(self) -> tuple:
        """The tensors of ``save_for_backward``, checked to be as they were saved (inside ``jvp``: those of
        ``save_for_forward``)."""
        if getattr(self, "_in_jvp", False):
            return tuple(getattr(self, "saved_for_forward", ()))
        if self._packed is None:  # (inside forward, or a call that recorded nothing)
            return tuple(self.to_save)
        if self._freed:
            raise RuntimeError(_FREED)
        out = []
        hooked = getattr(self, "_hooked", None)
        for i, entry in enumerate(self._packed):
            if entry is None:
                out.append(None)
                continue
            if hooked is not None:  # (read back through the unpack hook)
                out.append(_saved.unpack_one(hooked[0], hooked[1][i], _function.Tensor))
                continue
            kind, ref, version = entry
            t = self._outputs[ref]() if kind == "output" else ref
            if t is None:
                raise RuntimeError(f"{self._name}.backward: saved tensor {i} (an output) no longer exists")
            now = _version(t)
            if now != version:
                raise RuntimeError(
                    f"one of the variables needed for gradient computation has been modified by an inplace "
                    f"operation: saved tensor {i} of {self._name} ({_describe(t)}) is at version {now}; expected "
                    f"version {version} instead. Change a copy (x.clone()), or change it after the backward."
                )
            out.append(t)
        return tuple(out)

    @property
    def saved_variables(self) -> tuple:  # (PyTorch's old name)
        return self.saved_tensors

    def _entry(self, entry: tuple) -> Any:
        kind, ref, _ = entry
        return self._outputs[ref]() if kind == "output" else ref

    def _pack(self, outputs: list, finals: list) -> None:
        """Remember what was saved: a forward output by its place (the tensor returned then
        carries this node, and holding it here would make a reference cycle), anything
        else as it is; each with its version now."""
        where = {id(o): j for j, o in enumerate(outputs) if isinstance(o, _function.Tensor)}
        self._outputs = [weakref.ref(f) if isinstance(f, _function.Tensor) else (lambda: None) for f in finals]
        packed: list = []
        for t in self.to_save:
            if t is None:
                packed.append(None)
            elif id(t) in where:
                j = where[id(t)]
                packed.append(("output", j, _version(finals[j])))
            else:
                packed.append(("tensor", t, _version(t)))
        self._packed = packed
        self.to_save = ()  # (what it held is in _packed now: an output only by its place)
        if (hooks := _saved.current_hooks()) is not None:  # saved-tensor hooks: each saved tensor packed now
            pack, unpack = hooks
            self._hooked = (unpack, [None if e is None else _saved.pack_one(pack, self._entry(e)) for e in packed])


class _Kept(_Op):
    """A node the backward pass never finds freed: the engine's "second time" error belongs
    to ``ctx.saved_tensors`` here, as in PyTorch (a Function that saved nothing may run
    backward again). The pass's release (``saved = None``) frees the saved tensors instead."""

    __slots__ = ("_kept",)
    reads_values = False  # (the version check is ctx.saved_tensors')
    reads_output = False
    #: A trace records the ops that ``forward`` and ``backward`` make, not this node.
    traced_by_its_ops = True

    @property
    def saved(self) -> Any:
        return self._kept

    @saved.setter
    def saved(self, value: Any) -> None:
        if value is None:
            self._release()
        else:
            self._kept = value

    def _release(self) -> None:
        pass


class CustomNode(_Kept):
    """The graph node of one ``Function.apply``: its step calls the subclass's ``backward``."""

    __slots__ = ("fcls", "fctx", "layout", "received", "dev")
    name = "custom_function"

    @property
    def op_name(self) -> str:
        return self.fcls.__name__

    @property
    def torch_grad_fn_name(self) -> str:
        """PyTorch's class of this node: ``<Function subclass>Backward`` (no overload number)."""
        return f"{self.fcls.__name__}Backward"

    def _release(self) -> None:
        if self.fctx._packed:
            self.fctx._freed = True

    def backward(self, g: Any, ns: Any, inputs: Any, out: Any) -> tuple:
        T = _function.Tensor
        recording = ns.recording
        ctx, dev = self.fctx, self.dev
        materialize = ctx.materialize_grads
        grads: list[Any] = []
        for j, entry in enumerate(self.layout):
            if entry is None:  # not a tensor
                grads.append(None)
            elif entry[0] == "only":
                grads.append(g)
            elif entry[0] == "piece":
                _, off, shape, dtype = entry
                if not materialize and j not in self.received:
                    grads.append(None)
                    continue
                n = int(np.prod(shape, dtype=np.int64))
                gi = g[off : off + n]
                gi = gi.reshape(shape) if recording else ns.reshape(gi, shape)
                if (gi._data.dtype if recording else gi.dtype) != dtype:
                    gi = ns.astype(gi, dtype)
                grads.append(gi)
            else:  # a tensor output without a gradient
                _, shape, dtype = entry
                grads.append(T._wrap(dev.zeros(shape, dtype), dev) if materialize else None)
        self.received = set()
        if not recording:
            grads = [T._wrap(_as_ndarray(a) if a.__class__ in _NUMPY_SCALARS else a, dev)
                     if a is not None and not isinstance(a, T) else a for a in grads]  # fmt: skip
        result = _user_backward(self.fcls)(ctx, *grads)
        return tuple(_checked_grads(self, result, recording))


class OutputOf(_Kept):
    """Output ``j`` of a custom Function with several: its piece of the node's flat vector."""

    __slots__ = ()
    name = "custom_function_output"

    @property
    def op_name(self) -> str:
        return f"{self.inputs[0]._ctx.op_name}[{self.args[0]}]"

    @property
    def stands_for(self) -> tuple[Any, int]:
        """The node and output number PyTorch's graph shows here: the Function's one node, whose
        output ``j`` this is (``y.grad_fn`` of every output is that node)."""
        return self.inputs[0]._ctx, self.args[0]

    @staticmethod
    def describe_args(args: tuple) -> None:
        """Nothing more to draw: the title names the output (its place in the vector is plumbing)."""
        return None

    def forward(self, ns: Any, flat: Any) -> Any:  # pragma: no cover - made by apply, never run
        raise NotImplementedError

    def backward(self, g: Any, ns: Any, inputs: Any, out: Any) -> tuple:
        j, off, dtype = self.args
        hub = self.inputs[0]
        hub._ctx.received.add(j)
        n = tuple(hub.shape)
        key = slice(off, off + int(np.prod(tuple(g.shape), dtype=np.int64)))
        g = ns.reshape(g, (-1,))
        if (g._data.dtype if ns.recording else g.dtype) != dtype:
            g = ns.astype(g, dtype)
        if ns.recording:
            return (ns.slice_grad(g, n, key),)
        return (SliceGradient(g, n, key, ns),)


class OnceDifferentiable(_Op):
    """Carries a gradient made by a ``@once_differentiable`` backward: differentiating it
    again raises, as in PyTorch."""

    __slots__ = ()
    name = "once_differentiable"
    reads_values = False
    reads_output = False

    def forward(self, ns: Any, g: Any, *others: Any) -> Any:
        return g

    def backward(self, g: Any, ns: Any, inputs: Any, out: Any) -> tuple:
        raise RuntimeError(f"trying to differentiate twice a function that was marked with @once_differentiable "
                           f"({self.args})")  # fmt: skip


def once_differentiable(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Decorate a ``backward`` that is not differentiable itself: it runs without recording,
    and a gradient of its gradients raises ``RuntimeError``."""

    @functools.wraps(fn)
    def wrapper(ctx: Any, *args: Any) -> Any:
        with no_grad():
            outputs = fn(ctx, *args)
        if not is_grad_enabled():
            return outputs
        T = _function.Tensor
        needy = [a for a in args if isinstance(a, T) and a.requires_grad]
        if not needy:
            return outputs
        name = getattr(fn, "__qualname__", "backward")
        one = not isinstance(outputs, tuple)
        wrapped = [OnceDifferentiable.apply(o, *needy, args=name) if isinstance(o, T) else o
                   for o in ((outputs,) if one else outputs)]  # fmt: skip
        return wrapped[0] if one else tuple(wrapped)

    return wrapper


def _user_backward(fcls: type) -> Callable[..., Any]:
    backward, vjp = fcls.backward, fcls.vjp
    if backward is not Function.backward and vjp is not Function.vjp and backward is not vjp:
        raise RuntimeError(f"{fcls.__name__}: implementing both 'backward' and 'vjp' for a custom Function is not "
                           "allowed; implement only one of them")  # fmt: skip
    return vjp if vjp is not Function.vjp else backward


def _checked_grads(node: CustomNode, result: Any, recording: bool) -> list[Any]:
    """The gradients ``backward`` returned, one per input of ``apply``, as the engine takes them."""
    T = _function.Tensor
    inputs = node.inputs
    grads = list(result) if isinstance(result, (tuple, list)) else [result]
    name = f"{node.fcls.__name__}Backward"
    if len(grads) > len(inputs) and all(g is None for g in grads[len(inputs) :]):
        grads = grads[: len(inputs)]  # (trailing Nones are allowed, as in PyTorch)
    if len(grads) != len(inputs):
        raise RuntimeError(f"function {name} returned an incorrect number of gradients (expected {len(inputs)}, "
                           f"got {len(grads)})")  # fmt: skip
    out: list[Any] = []
    for i, (x, g) in enumerate(zip(inputs, grads)):
        if g is None:
            out.append(None)
            continue
        if not isinstance(g, T):
            raise RuntimeError(f"function {name}: expected Tensor or None as gradient {i} (got {type(g).__name__})")
        if not isinstance(x, T):
            raise RuntimeError(f"function {name} returned a gradient different than None at position {i + 1}, but "
                               "the corresponding forward input was not a Variable")  # fmt: skip
        if not x.requires_grad:
            out.append(None)  # (a gradient for an input that takes none is dropped)
            continue
        xs, gs = tuple(x.shape), tuple(g.shape)
        if xs != gs:
            try:
                fits = np.broadcast_shapes(xs, gs) == gs
            except ValueError:
                fits = False
            if not fits:
                raise RuntimeError(f"Function {name} returned an invalid gradient at index {i} - got {list(gs)} but "
                                   f"expected shape compatible with {list(xs)}")  # fmt: skip
        if g._data.dtype != x._data.dtype:
            g = g.to(x.dtype)
        out.append(g if recording else g._data)
    return out


def _has_setup_context(cls: type) -> bool:
    return cls.setup_context is not Function.setup_context


class Function:
    """PyTorch's custom autograd Function: subclass it with static ``forward(ctx, *args)``
    (or ``forward(*args)`` and ``setup_context(ctx, inputs, output)``) and
    ``backward(ctx, *grad_outputs)``, then call ``YourFunction.apply(*args)``."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        _user_warn(f"{type(self)} should not be instantiated. Methods on autograd functions are all static, so "
                      "you should invoke them on the class itself.", DeprecationWarning)  # fmt: skip

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        # a 2017-style Function (instance methods, called as MyFn()(x)): PyTorch refuses it at the call
        raise RuntimeError("Legacy autograd function with non-static forward method is deprecated. Please use "
                           "new-style autograd function with static forward method. (Example: "
                           "https://pytorch.org/docs/stable/autograd.html#torch.autograd.Function)")  # fmt: skip

    @staticmethod
    def forward(*args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("You must implement the forward function for custom autograd.Function.")

    @staticmethod
    def setup_context(ctx: Any, inputs: tuple, output: Any) -> Any:
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx: Any, *grad_outputs: Any) -> Any:
        raise NotImplementedError("You must implement either the backward or vjp method for your custom "
                                  "autograd.Function to use it with backward mode AD.")  # fmt: skip

    #: An alias of ``backward`` (as in PyTorch): a subclass implements one of the two.
    vjp = backward

    @staticmethod
    def jvp(ctx: Any, *grad_inputs: Any) -> Any:
        raise NotImplementedError("You must implement the jvp function for custom autograd.Function to use it "
                                  "with forward mode AD.")  # fmt: skip

    @classmethod
    def apply(cls, *args: Any, **kwargs: Any) -> Any:
        """Run ``forward`` on ``args`` and, where a gradient is wanted, record its node."""
        split = _has_setup_context(cls)
        if kwargs:  # (positional, in forward's order, so that needs_input_grad and the gradients line up)
            sig = inspect.signature(cls.forward)
            bound = sig.bind(*args, **kwargs) if split else sig.bind(None, *args, **kwargs)
            bound.apply_defaults()
            args = bound.args if split else bound.args[1:]
        T = _function.Tensor
        ctx = FunctionCtx()
        ctx._name = cls.__name__
        ctx.needs_input_grad = tuple(isinstance(a, T) and a.requires_grad for a in args)
        dual = _fg.current_level() >= 0 and any(_fg.tangent_of(a) is not None for a in args)
        with no_grad(), _fg.suspended() if dual else contextlib.nullcontext():  # (its jvp gives the tangents)
            if split:
                raw = cls.forward(*args)
                cls.setup_context(ctx, args, raw)
            else:
                raw = cls.forward(ctx, *args)
        out = raw if not (is_grad_enabled() and any(ctx.needs_input_grad)) else _record(cls, ctx, args, raw)
        if dual:
            _forward_tangents(cls, ctx, args, out)
        return out


def _forward_tangents(cls: type, ctx: FunctionCtx, args: tuple, out: Any) -> None:
    """Forward-mode AD through a custom Function: its ``jvp(ctx, *tangents)`` (zeros for a tensor input without a
    tangent, None for anything else) gives the outputs' tangents, as PyTorch's; without one, PyTorch's error."""
    if cls.jvp is Function.jvp:
        raise NotImplementedError("You must implement the jvp function for custom autograd.Function to use it with "
                                  "forward mode AD.")  # fmt: skip
    T = _function.Tensor
    tangents = [(_fg.tangent_of(a) if _fg.tangent_of(a) is not None else a.new_zeros(a.shape))
                if isinstance(a, T) else None for a in args]  # fmt: skip
    ctx._in_jvp = True  # (ctx.saved_tensors: those of save_for_forward)
    try:
        with _fg.suspended():
            result = cls.jvp(ctx, *tangents)
    finally:
        ctx._in_jvp = False
    outs = list(out) if isinstance(out, tuple) else [out]
    given = list(result) if isinstance(result, tuple) else [result]
    for o, t in zip(outs, given):
        if isinstance(o, T) and isinstance(t, T) and _differentiable(o):
            _fg.set_tangent(o, t)


def _differentiable(t: Any) -> bool:
    return t._dev.np_dtype(t._data.dtype).kind in "fc"


def _record(cls: type, ctx: FunctionCtx, args: tuple, raw: Any) -> Any:
    """The node of one ``apply`` and the tensors it returns (see the module's docstring)."""
    T = _function.Tensor
    for i, t in enumerate(ctx.to_save):
        if t is not None and not isinstance(t, T):
            raise TypeError(f"save_for_backward can only save variables, but argument {i} is of type "
                            f"{type(t).__name__}")  # fmt: skip
    single = not isinstance(raw, tuple)
    outputs = [raw] if single else list(raw)
    dirty = {id(t) for t in ctx.dirty_tensors}
    non_diff = {id(t) for t in ctx.non_differentiable}
    returned = {id(o) for o in outputs}
    for t in ctx.dirty_tensors:
        if id(t) not in returned:
            raise RuntimeError(f"{cls.__name__}: some elements marked as dirty weren't returned as outputs")
    inputs = list(args)
    moved: dict[int, Any] = {}  # id(dirty input) -> its history before forward changed it
    for i, a in enumerate(args):
        if isinstance(a, T) and id(a) in dirty and id(a) not in moved:
            if a._ctx is None and a.requires_grad:
                raise RuntimeError(f"{cls.__name__}: a leaf Variable that requires grad has been used in an in-place "
                                   "operation.")  # fmt: skip
            moved[id(a)] = _moved_history(a)
        if isinstance(a, T) and id(a) in moved:
            inputs[i] = moved[id(a)]
    diff = [isinstance(o, T) and _differentiable(o) and id(o) not in non_diff for o in outputs]
    if not any(diff):  # nothing to differentiate: no node (a changed input keeps no history)
        given = _input_ids(args)
        finals = [T._wrap(o._data, o._dev) if isinstance(o, T) and id(o) in given and id(o) not in moved else o
                  for o in outputs]  # fmt: skip
        for o in outputs:  # (an input changed in place: o itself, without a gradient from here on)
            if isinstance(o, T) and id(o) in moved:
                _rebase(o, moved[id(o)], T._wrap(o._data, o._dev), cls.__name__)
        return finals[0] if single else tuple(finals)
    dev = next(a._dev for a in inputs if isinstance(a, T))
    node = _new(CustomNode)
    node.fcls, node.fctx, node.dev, node.received = cls, ctx, dev, set()
    node.args, node.ctx, node._kept = None, None, ()
    node.inputs = inputs
    node.scope = _State.scope
    node.seq = _next_seq()
    add_uses(inputs)
    made: list[tuple[Any, Any]] = []  # (node, its output) for the observers, in creation order
    finals: list[Any] = list(outputs)
    taken = _input_ids(args)
    if single and diff[0]:
        node.layout = [("only",)]
        finals[0] = _own(outputs[0], taken, node)
        made.append((node, finals[0]))
    else:
        layout: list[Any] = []
        flat_dtype = np.result_type(*[dev.np_dtype(o._data.dtype) for o, d in zip(outputs, diff) if d] or [np.float32])
        flat_dtype = dev.dtype(flat_dtype)
        off = 0
        for o, d in zip(outputs, diff):
            if not isinstance(o, T):
                layout.append(None)
            elif d:
                layout.append(("piece", off, tuple(o.shape), o._data.dtype))
                off += int(o._data.size)
            else:
                layout.append(("none", tuple(o.shape), o._data.dtype))
        node.layout = layout
        ns = dev.ops
        hub = T._wrap(ns.broadcast_to(dev.zeros((1,), flat_dtype), (off,)), dev)  # (no memory of its own)
        hub.requires_grad, hub._ctx = True, node
        made.append((node, hub))
        for j, (o, d) in enumerate(zip(outputs, diff)):
            if not d:
                continue
            sel = _new(OutputOf)
            sel.args, sel.ctx, sel._kept = (j, layout[j][1], flat_dtype), None, ()
            sel.inputs, sel.scope, sel.seq = (hub,), _State.scope, _next_seq()
            add_uses((hub,))
            finals[j] = _own(o, taken, sel)
            made.append((sel, finals[j]))
    for j, o in enumerate(outputs):
        if isinstance(o, T) and not diff[j] and id(o) not in dirty:
            if id(o) in taken:  # an input returned as it is: a new tensor, without a gradient
                finals[j] = T._wrap(o._data, o._dev)
            else:
                o._requires_grad = False
    hook = _State.hook if _switches._observing else None
    if hook is not None:
        for fn, out in made:
            hook.op(fn, fn.inputs, out)
    for j, o in enumerate(outputs):  # inputs changed in place take the node's result as their new history
        if isinstance(o, T) and id(o) in dirty:
            r = finals[j]
            if not diff[j]:
                r = T._wrap(o._data, o._dev)
            _rebase(o, moved[id(o)], r, cls.__name__)
            note_rebase(_next_seq())
            bump_version(o._data)  # (PyTorch counts a dirty tensor's change once more, when apply returns it)
            finals[j] = o
    ctx._pack(outputs, finals)
    return finals[0] if single else tuple(finals)


def _input_ids(args: tuple) -> set[int]:
    return {id(a) for a in args if isinstance(a, _function.Tensor)}


def _own(o: Any, taken: set[int], node: _Op) -> Any:
    """The tensor that carries ``node`` for output ``o``: ``o`` itself when forward made it
    (so that what it saved or keeps is the returned tensor), else a new tensor on its memory
    (an input returned, a changed input, a view, one returned twice)."""
    T = _function.Tensor
    if id(o) in taken or o._ctx is not None or o.requires_grad or getattr(o, "_base", None) is not None:
        taken.add(id(o))
        o = T._wrap(o._data, o._dev)
    taken.add(id(o))
    o.requires_grad, o._ctx = True, node
    return o
