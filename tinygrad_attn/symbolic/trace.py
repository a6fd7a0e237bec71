"""The tracer: run a function once and record every op it makes as a :class:`Program`.

Tracing happens where every op already passes, ``Function.apply``: while a tracer is
installed (``_State.tracer``) each op reports its instance, inputs and output,
so any op, including ones added later, is traceable with no code of its own. The
backward pass is recorded by running each op's own ``backward`` on tensors (the
namespace ``create_graph`` uses), so it becomes primitive ops too; a fused op instead
records one call of its array-level backward, which is faster than differentiating
its primitive definition.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import itertools
import keyword
import re
import sys
import threading
import traceback
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from ..engine import function as _function
from ..engine.backward import SliceGradient, accumulate_grad, run_backward
from ..engine.composite import FusedFunction
from ..engine.function import _NUMPY_SCALARS, Function, _as_ndarray, _user_frame, collector_paused
from ..engine.switches import Hook, _State, no_grad, observing
from ..engine.versions import _memory_root
from ..ops.alias import InPlace
from ..ops.tensor_namespace import TensorNamespace
from ..tensors._tensor import Tensor, stack, where
from .guard import nested_codes
from .program import Program, _Slot, same_kind
from .records import Buffer, OpRecord, TraceError

_new = object.__new__


def trace(fn: Callable[..., Any], *example_args: Any) -> Program:
    """Run ``fn(*example_args)`` once and return its ops as a :class:`Program`.

    Tensor arguments become the program's inputs; tensors ``fn`` reaches otherwise (its
    closure, globals, ``self``, modules' parameters and buffers, optimizers' parameters)
    are read afresh at each replay; only tensors ``fn`` makes itself are constants. If
    ``fn`` returns a scalar that depends on a tensor requiring grad and calls no
    ``backward`` itself, the program also holds the backward pass of that scalar (the
    trace itself leaves every ``.grad`` as it was).
    """
    prog, _ = trace_with_result(fn, example_args)
    return prog


@collector_paused  # (its records live until the program is built: see engine.function)
def trace_with_result(fn: Callable[..., Any], args: Sequence[Any], auto_backward: bool = True,
                      reach: Callable[..., Any] | None = None, arg_names: Sequence[str] | None = None,
                      fallback: bool = False) -> tuple[Program, Any]:  # fmt: skip
    """:func:`trace`, also returning what the traced (eager) run of ``fn`` returned.
    ``reach``: the function whose closure, globals and ``self`` name the tensors read
    (``fn`` itself by default); ``arg_names``: a name per argument; ``fallback``: a call the
    program cannot replay is to run eagerly (``host_reads``), so reads after the first are let be."""
    tracer = Tracer(fn, args, reach, arg_names)
    tracer.fallback = fallback
    with tracer.installed():
        result = fn(*args)
        tracer.sync_grads()
        outputs, template = tracer.outputs_of(result)
        if auto_backward and not tracer.did_backward and isinstance(result, Tensor) and result.requires_grad:
            if result._data.shape == ():
                tracer.auto = True
                ones = Tensor._wrap(result._dev.ops.ones_like(result._data), result._dev)
                tracer.backward_pass([result], [ones._data], False, False, None)
        tracer.name_from_locals()
    prog = Program(tracer.name, tracer.ops, tracer.arg_buffers, outputs, template, tracer.arg_specs)
    prog.did_backward = tracer.did_backward
    prog.host_reads = tracer.host_reads
    tracer.release()
    return prog, result


class _TraceNamespace(TensorNamespace):
    """The tensor namespace a traced backward pass computes with: every step becomes ops of
    the program, except a fused op's, which becomes one record of its array backward."""

    def __init__(self, tracer: Tracer) -> None:
        super().__init__(where=where, stack=stack)
        self.tracer = tracer

    #: A fused op whose create_graph gradient has its own recorded formula (softmax) asks
    #: this before using it: a trace records its array backward as one op instead.
    records_fused = True

    def fused_backward(self, fn: Any, g: Any, inputs: Sequence[Any], out: Any) -> Sequence[Any]:
        return self.tracer._fused_backward(fn, g, out)

    def split_backward(self, fn: Any, g: Any, split: Any) -> Sequence[Any]:
        return self.tracer._split_backward(fn, g, split)


class Tracer(Hook):
    """Records ops into buffers while installed (see :meth:`installed`): the thread's hook."""

    _paused = False
    #: Whether a call that cannot be replayed runs eagerly (``tga.compile``) rather than raising
    fallback = False

    def __init__(self, fn: Callable[..., Any], args: Sequence[Any], reach: Callable[..., Any] | None = None,
                 arg_names: Sequence[str] | None = None) -> None:  # fmt: skip
        reach = fn if reach is None else reach
        self.name = getattr(reach, "__name__", None) or getattr(getattr(reach, "func", None), "__name__",
                                                                 type(reach).__name__)  # fmt: skip
        self.ops: list[OpRecord] = []
        self.ns = _TraceNamespace(self)  # what each backward step computes with (see backward_pass)
        self.section = "forward"
        self.did_backward = False
        self.auto = False  # recording the automatic backward of a returned scalar: leave .grad alone
        self._tmap: dict[int, Buffer] = {}  # id(tensor) -> its buffer
        self._amap: dict[int, Buffer] = {}  # id(array) -> the buffer it is (detach(), _wrap share arrays)
        self._alive: list[Any] = []  # what the maps' ids refer to, kept alive while tracing
        self._names: dict[str, int] = {}
        self._given: set[str] = set()
        self._idents: dict[str, str] = {}  # a base name -> its identifier (see _identifier)
        self._effect_objs: dict[int, str] = {}
        self._by_fn: dict[int, OpRecord] = {}  # id(eager op instance) -> its record
        self._backward_made: set[int] = set()  # ids of buffers the backward pass made
        self._fixed: set[int] = set()  # ids of buffers whose values cannot change: constants and ops on them
        self._groups: dict[int, list[Buffer]] = {}  # Buffer.alias -> the buffers sharing that memory
        self._made: set[int] = set()  # ids of the tensors fn made with a constructor (zeros, Tensor(...))
        # The user's frames that made ops (code outside the package), by id: their local variables
        # name the buffers they hold (``q``, ``scores``) once the values are final (name_from_locals).
        self._frames: dict[int, Any] = {}
        self._walked: dict[int, tuple[Any, Any]] = {}  # id(package frame) -> (it, the user frame it leads to)
        self._user_named: set[int] = set()  # ids of the buffers named after a user's variable
        self.arg_buffers: list[Buffer | None] = []
        self.arg_specs: list[Any] = []
        self.arg_tensors = list(args)
        # Python reads of a NumPy argument's values (np.mean(x)): what the program cannot replay
        self.host_reads: list[str] = []
        names = list(arg_names) if arg_names is not None else _arg_names(fn, len(args))
        reached = _tensors_in_reach(reach)
        self._param_names = {
            k: n for k, (n, _) in reached.items() if n is not None
        }  # id(tensor) -> a name from fn's reach
        self._tensors_in_reach = {k: t for k, (_, t) in reached.items()}
        # Tensors whose .grad the program keeps as the eager run leaves it: a Python assignment to
        # .grad (``p.grad = None``, ``p.grad = p.grad * c``) between two recorded events becomes a line.
        self._grad_seen: dict[int, tuple[Tensor, Any]] = {}
        for t in self._tensors_in_reach.values():
            if t.requires_grad:
                self._grad_seen[id(t)] = (t, t.grad)
        for i, a in enumerate(args):
            if isinstance(a, Tensor):
                b = self._buffer(names[i], a._data, a._dev, "arg")
                b.index = i
                self._bind(a, b)
                self.ops.append(OpRecord("load", "arg", [i], [b]))
                self.arg_buffers.append(b)
                self.arg_specs.append((a._data.shape, a._data.dtype, a._dev))
                if a.requires_grad:
                    self._grad_seen[id(a)] = (a, a.grad)
            else:
                self.arg_buffers.append(None)
                self.arg_specs.append(None)

    # -- installing -----------------------------------------------------------------
    @contextlib.contextmanager
    def installed(self) -> Iterator[Tracer]:
        """Record this thread's ops while inside. Nothing is swapped process-wide: every op,
        value read, random draw, ``step()`` and ``zero_grad()`` asks its own thread's
        ``_State.tracer``, so other threads run eagerly, untouched."""
        if _State.tracer is not None:
            raise TraceError("trace: already tracing; a traced function cannot trace or compile another")
        prev_releasing = _State.releasing
        _State.releasing = False  # the trace keeps every value: backward reads them as tensors
        _State.tracer = self
        _hook_grad(+1)
        try:
            with observing(self):  # every op and backward step of this thread comes to op / before_step
                yield self
        finally:
            _hook_grad(-1)
            _State.tracer = None
            _State.releasing = prev_releasing
            self._alive.clear()
            self._tmap.clear()
            self._amap.clear()
            self._frames.clear()  # (the user's frames hold their tensors: let them go with the trace)
            self._walked.clear()

    def release(self) -> None:
        """Let go of the eager run once the program is built: its records no longer point at
        the eager op instances (each holding its inputs and saved arrays, so the whole graph
        of the traced step would live as long as the program)."""
        for rec in self.ops:
            rec.__dict__.pop("trace_fn", None)
        self._by_fn.clear()
        self.ns = None  # (it points back here: without the cycle the tracer goes with its last reference)

    @contextlib.contextmanager
    def paused(self) -> Iterator[None]:
        """Run eager work (an optimizer step, a .grad update) without recording it."""
        _State.tracer = None
        self._paused = True
        try:
            yield
        finally:
            _State.tracer = self
            self._paused = False

    # -- buffers --------------------------------------------------------------------
    def _unique(self, base: str, numbered: bool = False) -> str:
        ident = self._idents.get(base)
        if ident is None:  # (an op's name comes back hundreds of times: checked once)
            ident = self._idents[base] = _identifier(base)
        base = ident
        while True:  # (never a name given already: ``grad_param_1`` may come from two bases)
            n = self._names.get(base, 0)
            self._names[base] = n + 1
            # Values made by ops count from 1 (``matmul_1``): the bare op name is its callable's.
            name = f"{base}_{n + 1}" if numbered else base if n == 0 else f"{base}_{n}"
            if name not in self._given:
                self._given.add(name)
                return name

    def _buffer(self, name: str, data: Any, dev: Any, kind: str, views: Sequence[Any] = ()) -> Buffer:
        dtype = dev.np_dtype(data.dtype)
        nbytes = 0 if _is_view_of(data, views) else int(data.size) * dtype.itemsize
        name = self._unique(name, numbered=kind == "value" and not name.startswith("grad_"))
        b = Buffer(name, tuple(data.shape), dtype, dev, kind, nbytes)
        b.alias = id(_memory_root(data))  # (the arrays stay alive while tracing: ids stay unique)
        self._groups.setdefault(b.alias, []).append(b)
        return b

    def _bind(self, t: Tensor, b: Buffer) -> None:
        self._tmap[id(t)] = b
        self._amap[id(t._data)] = b
        self._alive.append(t)
        self._alive.append(t._data)

    def value(self, t: Tensor) -> Buffer:
        """The buffer holding ``t``: its own, one sharing its array, or a new load."""
        b = self._tmap.get(id(t))
        if b is not None:
            return b
        b = self._amap.get(id(t._data))
        if b is None:
            if t.requires_grad or id(t) in self._tensors_in_reach:
                # A parameter, or a tensor outside fn (a closure's, a global, a module's buffer or
                # frozen weight): read at each replay, forward and backward, never folded.
                b = self._buffer(self._param_name(t), t._data, t._dev, "param")
                b.tensor = t
                if t.requires_grad and id(t) not in self._grad_seen:
                    self._grad_seen[id(t)] = (t, t.grad)
            elif type(t._data) is ArgArray or type(getattr(t._data, "base", None)) is ArgArray:
                i = _arg_index(t._data)
                t._data = t._data.view(np.ndarray)
                a = self.arg_tensors[i] if i is not None and 0 <= i < len(self.arg_tensors) else None
                if a is not None and t._data.shape == a._data.shape and t._data.dtype == a._data.dtype:
                    b = self.value(a)
                    self._bind(t, b)
                    return b
                self.host_reads.append(f"part of a NumPy argument read at {_user_line()}")
                b = self._buffer("const", t._data, t._dev, "const")
                b.array = t._data
            else:
                b = self._buffer("const", t._data, t._dev, "const")
                b.array = t._data
                b.tensor = t  # (in case fn changes it in place: see write)
                self._fixed.add(id(b))
            self.ops.append(OpRecord("load", b.kind, [], [b], section=self.section))
        self._bind(t, b)
        return b

    def _param_name(self, t: Tensor) -> str:
        """``q_proj_weight``: the dotted name in the innermost module that owns ``t``."""
        if t.name:
            return t.name
        if id(t) in self._param_names:
            return self._param_names[id(t)]
        s = _State.scope
        while s is not None:
            if s.kind == "module" and s.module is not None:
                for n, p in s.module.named_parameters():
                    if p is t:
                        return (s.path.split("/")[0] + "." + n).strip(".")
            s = s.parent
        return "param"

    def traced(self, t: Tensor) -> bool:
        """Whether ``t``'s values may change from one replay to the next."""
        b = self._tmap.get(id(t)) or self._amap.get(id(t._data))
        return t.requires_grad or (b is not None and id(b) not in self._fixed)

    # -- ops --------------------------------------------------------------------------
    def op(self, fn: Any, inputs: Sequence[Any], out: Tensor) -> None:
        """The hook's event for every op (see ``engine.switches.Hook``): recorded unless paused."""
        if not self._paused:
            self.record(fn, inputs, out)
        if self.outer is not None:
            self.outer.op(fn, inputs, out)

    def record(self, fn: Any, inputs: Sequence[Any], out: Tensor) -> None:
        """Called by ``Function.apply`` for every op while installed."""
        if self.section != "backward":  # (a backward step's ops: backward_pass noted its caller's frame once)
            self._note_user_frame(sys._getframe(2))  # (record <- op <- apply)
        if fn.__class__ is InPlace:  # the changed tensor's new node passes its value on: no line
            self._bind(out, self.value(inputs[0]))
            self._alive.append(fn)
            self._by_fn[id(fn)] = None
            return
        if getattr(fn, "traced_by_its_ops", False):  # a custom autograd.Function: its forward's ops
            self._alive.append(fn)  # are lines already, as its backward's will be; the node is only
            self._by_fn[id(fn)] = None  # a step of the traced backward pass
            return
        value, fixed = self.value, self._fixed
        ins: list[Any] = []
        views: list[Any] = []  # the input arrays: a result that is one of them, or a view of one, allocates nothing
        consts = True  # whether every buffer read holds values that cannot change
        for t in inputs:
            if isinstance(t, Tensor):
                b = value(t)
                ins.append(b)
                views.append(t._data)
                if consts and id(b) not in fixed:
                    consts = False
            else:
                ins.append(t)
        if len(ins) == 2:  # numbers as Function.apply hands them to forward
            a, b = ins
            if isinstance(b, (int, float, bool)) and isinstance(a, Buffer):
                ins[1] = _number(inputs[1], inputs[0])
            elif isinstance(a, (int, float, bool)) and isinstance(b, Buffer):
                ins[0] = _number(inputs[0], inputs[1])
        cls = fn.__class__
        inst = _new(cls)
        inst.args = fn.args
        inst.ctx = None
        name = _OP_NAMES.get(cls) or _op_name(fn)
        ob = self._buffer(name, out._data, out._dev, "value", views)
        section = self.section
        rec = OpRecord("call", name, ins, [ob], fn=inst, section=section, scope=_State.scope)
        rec.trace_fn = fn  # (the eager instance, kept alive by it: a fused backward finds its record by it)
        self.ops.append(rec)
        self._bind(out, ob)
        if consts and not getattr(fn, "random", False):  # (a random draw: new values at each replay)
            fixed.add(id(ob))  # constants in, a constant out
        if section == "backward":
            self._backward_made.add(id(ob))
        self._by_fn[id(fn)] = rec

    def _note_user_frame(self, f: Any) -> None:
        """Outwards from frame ``f``, the nearest frame of the user's code: its local variables
        name the buffers it holds (see :meth:`name_from_locals`)."""
        # A package frame still running always leads to the same user frame (its callers do not
        # change): each one walked through remembers where it led, so the next op made below
        # it (the next op of a layer's forward) stops there instead of walking ten frames again.
        walked, seen = self._walked, []
        found = None
        while f is not None:
            hit = walked.get(id(f))
            if hit is not None and hit[0] is f:
                found = hit[1]
                break
            user = _USER_FILES.get(f.f_code.co_filename)
            if user is None:
                user = _USER_FILES[f.f_code.co_filename] = _is_user_file(f.f_code.co_filename)
            if user:
                found = f
                if id(f) not in self._frames:
                    self._frames[id(f)] = f
                break
            seen.append(f)
            f = f.f_back
        for s in seen:
            walked[id(s)] = (s, found)

    def write(self, t: Tensor, key: Any, value: Any) -> None:
        """The hook's event just before an in-place change writes ``value`` (a tensor or a
        number) into ``t``'s array at ``key`` (``None``: all of it): the program writes there too."""
        if not self._paused:
            self._record_write(t, key, value)
        super().write(t, key, value)

    def _record_write(self, t: Tensor, key: Any, value: Any) -> None:
        tb = self.value(t)
        if isinstance(value, Tensor):
            if value.dtype != t.dtype:  # (a store casts as it writes; the program casts first)
                with no_grad():
                    value = value.astype(t.dtype)
            value = self.value(value)
        for b in self._groups.get(tb.alias, ()):
            self._fixed.discard(id(b))
            if b.kind != "const":
                continue
            # A constant fn changes: one fn made itself (zeros, Tensor(...)) starts each replay
            # from the values it had before this first change (a copy taken now); any other
            # is state outside fn that the replay changes too (read afresh, as a parameter).
            if b.tensor is None or id(b.tensor) in self._made:
                b.kind, b.array, b.tensor = "init", b.dev.copy(b.array), None
                b.name = self._unique("buf")
            else:
                b.kind = "param"
                b.name = self._unique(self._param_name(b.tensor))
        self.ops.append(OpRecord("store", "store", [tb, value], [], section=self.section, target=key,
                                 scope=_State.scope))  # fmt: skip

    def made(self, t: Tensor, source: Any = None) -> None:
        """The hook's event for each tensor a constructor makes while installed (``source``: the
        data it was made from). A tensor made from a NumPy argument (``Tensor(x)``,
        ``tga.from_numpy(x)``) is that argument's input, copied or cast as the constructor did."""
        if not self._paused:
            self._made.add(id(t))
            self._alive.append(t)
            i = _arg_index(source) if source is not None else None
            if i is None and type(t._data) is ArgArray:
                i = _arg_index(t._data)
            if i is not None:
                self._from_argument(t, i)
        super().made(t, source)

    def _from_argument(self, t: Tensor, i: int) -> None:
        """Bind ``t``, made from NumPy argument ``i``, to that input (a copy or a cast of it)."""
        shares = type(t._data) is ArgArray
        if type(t._data) is ArgArray:
            t._data = t._data.view(np.ndarray)
        a = self.arg_tensors[i] if 0 <= i < len(self.arg_tensors) else None
        if a is None or t._data.shape != a._data.shape or t._dev is not a._dev:
            self.host_reads.append(f"a tensor made from part of a NumPy argument at {_user_line()}")
            return
        if shares and t._data.dtype == a._data.dtype:  # (from_numpy: the same memory)
            self._bind(t, self.value(a))
            return
        with no_grad():
            r = a.astype(t.dtype) if t._data.dtype != a._data.dtype else a.clone()
        self._bind(t, self.value(r))

    def outputs_of(self, result: Any) -> tuple[list[Buffer], Any]:
        """The buffers of the tensors in ``result`` and the structure to put them back in."""
        outs: list[Buffer] = []

        def walk(x: Any) -> Any:
            if isinstance(x, Tensor):
                outs.append(self.value(x))
                return _Slot(len(outs) - 1)
            if isinstance(x, (tuple, list)):
                return same_kind(x, [walk(v) for v in x])
            if isinstance(x, dict):
                return {k: walk(v) for k, v in x.items()}
            if isinstance(x, np.ndarray) and _arg_index(x) is not None:
                # (a replay would hand back this call's array again, not the next call's)
                self.host_reads.append(f"a NumPy argument returned at {_user_line()}")
            return x

        template = walk(result)
        walk = None  # (it calls itself through its closure: a cycle that held the tracer until a collection)
        return outs, template

    def name_from_locals(self) -> None:
        """Give the buffers that the user's code holds in local variables those names
        (``scores = q @ k.mT / 8`` makes ``scores = div(...)``), where a name is still an
        op's default one and the variable's name is not taken (a helper's parameter ``x``
        leaves ``matmul_1`` as it is when the program has an argument ``x``). Called before
        the backward pass (its gradients are then ``grad_scores``) and at the end; a
        variable assigned in a loop names its last value."""
        for f in self._frames.values():
            try:
                local = f.f_locals
            except Exception:  # noqa: BLE001 - a frame that cannot show its locals names nothing
                continue
            for var, v in list(local.items()):
                if v.__class__ is not Tensor or var.startswith("_") or var == "self":
                    continue
                b = self._tmap.get(id(v))
                if b is None or b.kind != "value" or id(b) in self._user_named or b.name.startswith("grad_"):
                    continue
                name = _identifier(var)
                if name in self._given or name in self._names:  # (taken: an argument's, another value's)
                    continue
                self._user_named.add(id(b))
                b.name = self._unique(name)

    # -- backward -------------------------------------------------------------------
    def backward_pass(self, roots: Sequence[Tensor], root_grads: Sequence[Any], retain_graph: bool,
                      create_graph: bool, targets: Sequence[Tensor] | None) -> list[Any] | None:  # fmt: skip
        """The engine's one backward pass while tracing (``engine.backward.run_backward`` hands
        it here): with this trace's namespace every gradient step becomes ops, a fused op's step
        one record of its array backward (:meth:`_fused_backward`), and a leaf's gradient an
        accumulation line (:meth:`_accumulate`); nodes made before the trace are leaves."""
        if create_graph:
            return self._graph_backward(roots, root_grads, targets)
        self.did_backward = True
        self.sync_grads()
        self._note_user_frame(sys._getframe(1))
        self.name_from_locals()
        prev_section, self.section = self.section, "backward"
        try:
            grads = [self._as_tensor(g, r._dev) for r, g in zip(roots, root_grads)]
            # (retain_graph: the trace keeps every node, as it keeps every value, for what follows)
            found = run_backward(roots, grads, retain_graph=True, create_graph=False, targets=targets, ns=self.ns,
                                 accumulate=self._accumulate, within=lambda fn: id(fn) in self._by_fn)  # fmt: skip
        finally:
            self.section = prev_section
        if targets is None:
            return None
        return [None if g is None else self._as_tensor(g, t._dev)._data for g, t in zip(found, targets)]

    def _graph_backward(self, roots: Sequence[Tensor], root_grads: Sequence[Any],
                        targets: Sequence[Tensor] | None) -> list[Any] | None:  # fmt: skip
        """A backward with ``create_graph`` (a gradient penalty): its steps are ordinary tensor
        ops, recorded as the forward's are, so a later backward differentiates them too."""
        if targets is None:
            raise TraceError(
                f"backward(create_graph=True) inside a trace, at {_user_frame()}: a replay cannot rebuild "
                "the graph .grad would hold; take the gradients with tga.autograd.grad(..., create_graph=True)"
            )
        self.sync_grads()
        self._note_user_frame(sys._getframe(2))
        found = run_backward(roots, list(root_grads), retain_graph=True, create_graph=True, targets=targets,
                             ns=_function.TENSOR_NS, within=lambda fn: id(fn) in self._by_fn)  # fmt: skip
        return found

    def before_step(self, t: Tensor, g: Any) -> None:
        """The hook's event before each backward step: its gradient is ``grad_<name of t>``."""
        if not self._paused and g.__class__ is Tensor:
            self._name_grad(g, t)
        super().before_step(t, g)

    def _as_tensor(self, g: Any, dev: Any) -> Tensor:
        if isinstance(g, Tensor):
            return g
        t = Tensor._wrap(g, dev)
        self.value(t)
        return t

    def _fused_backward(self, fn: FusedFunction, g: Tensor, t: Tensor) -> list[Any]:
        """One record of the fused op's array backward, run now for the trace's values."""
        rec = self._by_fn[id(fn)]
        # An op that reads no input in its backward (softmax, which reads its output) is given
        # None for them: the program then need not keep its input alive until the backward.
        # (Only keep == (): others read what they do not "keep", a weight, from ctx or shapes.)
        unread = [fn.keep == () and isinstance(x, Tensor) for x in fn.inputs]
        saved = [None if u else a for u, a in zip(unread, fn.saved)]
        gs = fn.backward_arrays(g._data, t._dev.ops, saved, t._data)
        outs, result = self._gradient_buffers(fn.inputs, gs)
        ins = [self.value(g)] + [None if u else self.value(x) if isinstance(x, Tensor) else x
                                 for u, x in zip(unread, fn.inputs)] + [self.value(t)]  # fmt: skip
        self.ops.append(OpRecord("backward", rec.op + "_backward", ins, outs, fn=rec.fn, section="backward",
                                 scope=rec.scope))  # fmt: skip
        return result

    def _split_backward(self, fn: Function, g: Tensor, split: Any) -> list[Any]:
        """One record of a cat's or stack's gradient: ``g`` cut into a piece per input (views of
        ``g``), where each piece was a slice op of its own."""
        rec = self._by_fn[id(fn)]
        outs, result = self._gradient_buffers(fn.inputs, split.pieces(g._dev.ops, g._data), views=(g._data,))
        self.ops.append(OpRecord("backward", rec.op + "_backward", [self.value(g)], outs, fn=split,
                                 section="backward", scope=rec.scope))  # fmt: skip
        return result

    def _gradient_buffers(self, inputs: Sequence[Any], gs: Sequence[Any],
                          views: Sequence[Any] = ()) -> tuple[list[Buffer | None], list[Any]]:  # fmt: skip
        """The buffers (outputs of one backward record) and tensors of the gradients ``gs`` of
        ``inputs``, None for an input that takes none; ``views``: arrays the gradients may be
        views of (they then allocate nothing)."""
        outs: list[Buffer | None] = []
        result: list[Any] = []
        for inp, gi in zip(inputs, gs):
            if gi is None or not isinstance(inp, Tensor) or not inp.requires_grad:
                outs.append(None)
                result.append(None)
                continue
            if gi.__class__ is SliceGradient:
                gi = gi.dense()
            gt = Tensor._wrap(_as_ndarray(gi) if gi.__class__ in _NUMPY_SCALARS else gi, inp._dev)
            b = self._buffer("grad_" + self.value(inp).name, gt._data, inp._dev, "value", views)
            self._bind(gt, b)
            outs.append(b)
            result.append(gt)
        return outs, result

    def _name_grad(self, g: Tensor, t: Tensor) -> None:
        """Call a gradient made in the backward pass ``grad_<name of t>``."""
        gb, tb = self._tmap.get(id(g)), self._tmap.get(id(t))
        if gb is None or tb is None or gb.kind != "value" or gb.name.startswith("grad_"):
            return
        if id(gb) in self._backward_made:
            gb.name = self._unique("grad_" + tb.name)

    def _accumulate(self, t: Tensor, g: Tensor, sole: bool = False) -> None:
        """A leaf's gradient in the traced backward: an accumulation line of the program, and
        ``.grad`` as the engine's one rule leaves it (``engine.backward.accumulate_grad``)."""
        self._name_grad(g, t)
        tb = self._tmap[id(t)]
        if tb.kind == "value":  # (a tensor the step made, retain_grad(): a new one at each call)
            self._retained(t, g)
            return
        target = tb.index if tb.kind == "arg" else t
        self.ops.append(OpRecord("accumulate", "accumulate", [self.value(g)], [], section="backward",
                                 target=target))  # fmt: skip
        if not self.auto:  # as the eager backward does
            with self.paused():
                accumulate_grad(t, g._data)
            # A later read of .grad (an update written by hand) reads it as the replay leaves it:
            # g, or g added to what .grad held then (unread, the load goes with dead code).
            b = self._buffer(tb.name + "_grad", t.grad._data, t._dev, "grad")
            b.index, b.tensor = (target, None) if isinstance(target, int) else (None, target)
            self.ops.append(OpRecord("load", "grad", [], [b], section="backward"))
            self._tmap[id(t.grad)] = b  # (the tensor only: g's array stays g's buffer)
            self._alive.append(t.grad)
            self._grad_seen[id(t)] = (t, t.grad)

    def _retained(self, t: Tensor, g: Tensor) -> None:
        """The gradient of a ``retain_grad()`` tensor the step made: its ``.grad`` is the
        gradient's buffer (the tensor is new at each call, so its ``.grad`` starts empty); a
        second backward adding into it runs the step eagerly."""
        if self.auto:
            return
        first = t.grad is None
        with self.paused():
            accumulate_grad(t, g._data)
        if first:
            self._tmap[id(t.grad)] = self.value(g)
            self._alive.append(t.grad)
        else:
            self.host_reads.append(f"a retained gradient added to by a second backward at {_user_line()}")

    def accumulate_found(self, t: Tensor, g: Any) -> None:
        """``backward(inputs=...)``: the gradient the traced pass found for ``t`` (an array of a
        buffer) added into its ``.grad``, as an accumulation line."""
        self._accumulate(t, self._as_tensor(g, t._dev))

    def grad_assigned(self, t: Tensor, g: Any) -> None:
        """Called where Python assigns ``t.grad`` while tracing (see :func:`_hook_grad`): for
        a tensor whose gradient the program keeps (a parameter, an argument, a tensor fn
        reaches that requires grad), the assignment becomes a line of the program."""
        seen = self._grad_seen.get(id(t))
        if seen is None:
            return
        self.sync_grads()  # (anything assigned before, unseen: in order)
        tb = self._tmap.get(id(t))
        target = tb.index if tb is not None and tb.kind == "arg" else t
        ins = [] if g is None else [self.value(g)]
        self.ops.append(OpRecord("setgrad", "setgrad", ins, [], section=self.section, target=target))
        self._alive.append(t)
        self._grad_seen[id(t)] = (t, g)

    def sync_grads(self) -> None:
        """A ``.grad`` that Python assigned since the last recorded event (``p.grad = None``,
        ``p.grad = p.grad * c``) becomes a line of the program, so a replay leaves ``.grad``
        as the eager run did."""
        for k, (t, last) in list(self._grad_seen.items()):
            g = t.grad
            if g is last:
                continue
            tb = self._tmap.get(id(t))
            target = tb.index if tb is not None and tb.kind == "arg" else t
            ins = [] if g is None else [self.value(g)]
            self.ops.append(OpRecord("setgrad", "setgrad", ins, [], section=self.section, target=target))
            self._alive.append(t)
            self._grad_seen[k] = (t, g)

    def _resnapshot_grads(self) -> None:
        for k, (t, _) in list(self._grad_seen.items()):
            self._grad_seen[k] = (t, t.grad)

    # -- effects: optimizer steps and zero_grad ----------------------------------------
    def effect(self, obj: Any, method: str, original: Callable[..., Any], args: tuple = ()) -> Any:
        """Called by ``Optimizer.step``, ``Optimizer.zero_grad`` and ``Module.zero_grad``:
        record the call ``obj.method(*args)`` as one line of the program, then make it
        (unrecorded)."""
        self.sync_grads()
        name = self._effect_objs.setdefault(id(obj), self._unique(type(obj).__name__.lower()))
        section = "update" if method in ("step", "_advance", "foreach_update") else self.section
        updates = method in ("step", "foreach_update") and hasattr(obj, "param_groups") and hasattr(obj, "zero_grad")
        written = []  # an optimizer's update writes its parameters in place: reads after it are new reads
        if updates:
            for group in obj.param_groups if method == "step" else [obj.param_groups[args[0]]]:
                for p in group["params"]:
                    b = self._tmap.get(id(p)) or self._amap.get(id(p._data))
                    if b is not None and p.grad is not None:
                        written.append(b)
        self.ops.append(OpRecord("effect", method, [], [], fn=original, section=section, target=obj, label=name,
                                 call_args=tuple(args), writes=written))  # fmt: skip
        self._alive.append(obj)
        with self.paused():
            out = original(obj, *args)
        self._resnapshot_grads()  # (zero_grad: the replay makes the same change)
        if updates:  # (a parameter whose memory could not be written holds a new array: read again)
            for group in obj.param_groups:
                for p in group["params"]:
                    self._tmap.pop(id(p), None)
        return out

    def optimizer_step(self, opt: Any) -> None:
        """Called by ``Optimizer.step``: its update as ops of the program, writing in place
        into each parameter and its state, where the optimizer can say it so
        (``opt._traced_update``); otherwise one recorded call of ``step()``.

        What changes from one step to the next outside the tensors is read at each replay:
        the Python bookkeeping (a step counter) is one recorded call (``opt._advance()``),
        and the numbers the update computes from it and from the param groups (a learning
        rate a schedule sets, Adam's bias corrections) are loads of the program
        (``opt._numbers``), evaluated at that point of each replay."""
        from ..optim.optimizer import Optimizer  # noqa: PLC0415

        self.sync_grads()
        params = [p for g in opt.param_groups for p in g["params"] if p.grad is not None]
        if (
            type(opt)._flat_update is not Optimizer._flat_update
            and all(g.get("foreach") is not False for g in opt.param_groups)
            or not opt._traceable()
            or any(p.grad._dev is not p._dev or p.grad.shape != p.shape or p.grad.dtype != p.dtype for p in params)
        ):
            # One line per param group: the eager update of all its tensors (flat where the optimizer
            # has the form), read live at each replay; also where the update has no ops (a gradient of
            # another dtype or device: the eager step casts it, or says what is wrong). Not step()
            # itself: its hooks are the traced step's own calls, recorded where they ran.
            for gi in range(len(opt.param_groups)):
                self.effect(opt, "foreach_update", Optimizer.foreach_update, (gi,))
            return
        self.effect(opt, "_advance", type(opt)._advance)  # (made now too: counters and state for this step)
        prev, self.section = self.section, "update"
        try:
            with no_grad():
                for gi, group in enumerate(opt.param_groups):
                    for pi, p in enumerate(group["params"]):
                        if p.grad is None:
                            continue
                        state = opt.state[p]
                        pname = self.value(p).name
                        for k, v in state.items():  # read where the optimizer holds them at each replay
                            if isinstance(v, Tensor):
                                b = self._buffer(f"{pname}_{k}", v._data, v._dev, "state")
                                b.array = functools.partial(_opt_state_array, opt, gi, pi, k)
                                self.ops.append(OpRecord("load", "state", [], [b], section=self.section))
                                self._bind(v, b)
                        numbers = {k: self.number(functools.partial(_opt_number, opt, gi, pi, k), p, k)
                                   for k in opt._numbers(group, state)}  # fmt: skip
                        opt._traced_update(p, p.grad, state, group, numbers)
        finally:
            self.section = prev

    def number(self, fn: Callable[[], float], like: Tensor, name: str = "number") -> Tensor:
        """A 0-d tensor of ``like``'s dtype holding ``fn()``, loaded by calling ``fn`` again
        at each replay (a buffer of kind ``"number"``)."""
        dev = like._dev
        arr = dev.asarray(np.asarray(fn(), dtype=dev.np_dtype(like._data.dtype)))
        b = self._buffer(name, arr, dev, "number")
        dtype = like._data.dtype
        b.array = lambda: dev.asarray(np.asarray(fn(), dtype=dev.np_dtype(dtype)))
        self.ops.append(OpRecord("load", "number", [], [b], section=self.section))
        t = Tensor._wrap(arr, dev)
        self._bind(t, b)
        return t

    # -- reads of values and random draws: Python decisions a replay would not make again --
    def check_read(self, t: Tensor, method: str) -> None:
        """Called where a tensor's values go to Python (``Tensor._read``): raise
        :class:`TraceError` on a traced tensor."""
        if not self.traced(t) or self.fallback and self.host_reads:
            # (a call tga.compile already runs eagerly, for what it did before: nothing is replayed)
            return
        b = self._tmap.get(id(t)) or self._amap.get(id(t._data))
        made = f"made by op '{b.name}'" if b is not None else "a parameter"
        what = {"__bool__": "bool(t) (an `if` or `while` on a tensor)", "__float__": "float(t)",
                "__int__": "int(t)", "__array__": "np.asarray(t) (Tensor.__array__)", "clip_grad_norm_": "clip_grad_norm_ (a norm read in Python)"
                }.get(method, method if " " in method else f".{method}()")  # fmt: skip
        raise TraceError(
            f"{what} on a traced tensor of shape {tuple(t.shape)} ({made}) at {_user_line()}: a replayed "
            "program does not run Python decisions again, so it cannot depend on a tensor's values. Use "
            "tensor ops instead (tga.where for an `if`), or read the value outside the traced function."
        )

    def gradient_hook(self, t: Tensor) -> None:
        """Called by the backward pass where a tensor has hooks (``Tensor.register_hook``): a
        traced backward raises (a hook is Python a replay would not run again)."""
        raise TraceError(
            f"a gradient hook (register_hook) on a tensor of shape {tuple(t.shape)} inside a trace, at "
            f"{_user_line()}: a replayed program would not call it again. Register the hook outside the "
            "compiled step, or compute what it does in the step itself."
        )

    def python_effect(self, what: str) -> None:
        """Called where the step does what a program cannot replay (a generator reseeded):
        ``tga.compile`` runs the call eagerly (see ``host_reads``)."""
        self.host_reads.append(f"{what} at {_user_line()}")

    def random_draw(self) -> None:
        """Called by ``random.host_generator``: a draw inside a trace raises."""
        raise TraceError(
            f"a random draw inside a trace, at {_user_line()}: the program would replay the same numbers "
            "every call (a dropout mask frozen). Trace the model in eval mode (model.eval()) or with dropout 0, "
            "or draw the random tensor outside and pass it as an argument."
        )


# -- small pieces ------------------------------------------------------------------------
class ArgArray(np.ndarray):
    """A NumPy argument as a compiled step sees it while traced: an ``ndarray`` (``np.mean(x)``
    works, as eagerly) that remembers which input it is, so a tensor made from it becomes that
    input of the program. A NumPy computation on it in Python is noted (the tracer's
    ``host_reads``): a program cannot replay it, so ``tga.compile`` runs that call eagerly."""

    _tga_arg: int = -1

    @classmethod
    def of(cls, arr: np.ndarray, i: int) -> ArgArray:
        v = arr.view(cls)
        v._tga_arg = i
        return v

    def __array_finalize__(self, obj: Any) -> None:
        self._tga_arg = getattr(obj, "_tga_arg", -1)

    def _noted(self, what: str) -> None:
        tracer = _State.tracer
        if tracer is None:
            return
        f = sys._getframe(2)
        while f is not None and "/numpy/" in f.f_code.co_filename.replace("\\", "/"):
            f = f.f_back  # (NumPy's own Python: a method calling a ufunc)
        if f is not None and _is_user_file(f.f_code.co_filename):  # (not the package's own conversions)
            where = f'File "{f.f_code.co_filename}", line {f.f_lineno}, in {f.f_code.co_name}'
            tracer.host_reads.append(f"{what} on a NumPy argument at {where}")

    def __array_ufunc__(self, ufunc: Any, method: str, *inputs: Any, **kw: Any) -> Any:
        self._noted(f"np.{ufunc.__name__}" + ("" if method == "__call__" else f".{method}"))
        inputs = tuple(x.view(np.ndarray) if isinstance(x, ArgArray) else x for x in inputs)
        if "out" in kw:
            kw["out"] = tuple(x.view(np.ndarray) if isinstance(x, ArgArray) else x for x in kw["out"])
        return getattr(ufunc, method)(*inputs, **kw)

    def __array_function__(self, func: Any, types: Any, args: Any, kw: Any) -> Any:
        self._noted(f"np.{func.__name__}")

        def plain(x: Any) -> Any:
            if isinstance(x, ArgArray):
                return x.view(np.ndarray)
            if type(x) in (list, tuple):
                return type(x)(plain(v) for v in x)
            return x

        return func(*plain(args), **{k: plain(v) for k, v in kw.items()})

    def __getitem__(self, key: Any) -> Any:
        r = super().__getitem__(key)
        if not isinstance(r, np.ndarray):  # (one element, a NumPy scalar: a value in Python)
            self._noted("an element read")
        return r

    def item(self, *a: Any) -> Any:
        self._noted(".item()")
        return self.view(np.ndarray).item(*a)

    def tolist(self) -> Any:
        self._noted(".tolist()")
        return self.view(np.ndarray).tolist()

    def __float__(self) -> float:
        self._noted("float()")
        return float(self.view(np.ndarray))

    def __int__(self) -> int:
        self._noted("int()")
        return int(self.view(np.ndarray))

    def __bool__(self) -> bool:
        self._noted("bool()")
        return bool(self.view(np.ndarray))

    def __index__(self) -> int:
        self._noted("an index")
        return self.view(np.ndarray).__index__()

    def __iter__(self) -> Any:
        self._noted("iteration")
        return iter(self.view(np.ndarray))


def _arg_index(arr: Any) -> int | None:
    """Which NumPy argument ``arr`` is, or was made from (a view of it, ``np.asarray`` of it),
    by position; None for an array of its own. (The callers compare shapes: a part of an
    argument is not the argument.)"""
    for _ in range(4):
        if arr is None:
            return None
        if type(arr) is ArgArray:
            return arr._tga_arg if arr._tga_arg >= 0 else None
        arr = getattr(arr, "base", None)
    return None


_GRAD_SLOT = Tensor.__dict__["grad"]  # the slot's own descriptor
_grad_hooks = 0
_grad_lock = threading.Lock()


class _GradHook:
    """``Tensor.grad`` while some thread traces: assignments are told to that thread's
    tracer (``p.grad = None`` inside a traced step is a line of the program). Installed
    only while tracing, so eager ``.grad`` reads and writes stay a slot's."""

    def __get__(self, t: Any, cls: Any = None) -> Any:
        return self if t is None else _GRAD_SLOT.__get__(t, cls)

    def __set__(self, t: Any, g: Any) -> None:
        tracer = _State.tracer
        if tracer is not None and id(t) in tracer._grad_seen:  # (not the ``grad = None`` of every new tensor)
            tracer.grad_assigned(t, g)
        _GRAD_SLOT.__set__(t, g)


def _hook_grad(delta: int) -> None:
    global _grad_hooks
    with _grad_lock:
        _grad_hooks += delta
        if delta > 0 and _grad_hooks == 1:
            Tensor.grad = _GradHook()
        elif delta < 0 and _grad_hooks == 0:
            Tensor.grad = _GRAD_SLOT


#: Names the generated program uses itself; buffers never take them.
_RESERVED = frozenset({"program", "args", "accumulate", "set_grad", "Tensor", "xp", "None", "True", "False",
                       "params", "consts"})  # fmt: skip
_USER_FILES: dict[str, bool] = {}  # a code file name -> whether it is the user's (see _is_user_file)


def _is_user_file(filename: str) -> bool:
    """Code outside this package (tests and benchmarks count as the user's)."""
    f = filename.replace("\\", "/")
    return "/tinygrad_attn/" not in f or "/tests/" in f


def _identifier(base: str) -> str:
    """``base`` as a Python name the program may use."""
    if (base.isascii() and base.isidentifier() and base[0] != "_" and base[-1] != "_"
            and not keyword.iskeyword(base) and base not in _RESERVED):  # fmt: skip
        return base  # (already one: most bases, and every ``grad_<name>``, each new, that a cache would miss)
    return _made_identifier(base)


@functools.lru_cache(maxsize=4096)
def _made_identifier(base: str) -> str:
    """:func:`_identifier` of a base that is not a name as it is (cached: a regex per buffer
    was one of the larger costs of tracing)."""
    base = re.sub(r"\W", "_", base).strip("_") or "t"
    if base[0].isdigit() or keyword.iskeyword(base) or base in _RESERVED:
        base = "t_" + base
    return base


def _user_line() -> str:
    """The innermost line of the user's code (not this package's, not an installed library's:
    ``np.asarray(t)`` reaches the tracer through NumPy's frames)."""
    pkg = "/tinygrad_attn/"
    for fr in reversed(traceback.extract_stack()[:-2]):
        f = fr.filename.replace("\\", "/")
        if (pkg not in f or "/tests/" in f) and "-packages/" not in f and not f.startswith("<frozen"):
            return f'File "{fr.filename}", line {fr.lineno}, in {fr.name}: {fr.line}'
    return "<unknown>"


def _opt_number(opt: Any, gi: int, pi: int, key: str) -> float:
    """Number ``key`` of the update of parameter ``pi`` of group ``gi``, as it is now."""
    group = opt.param_groups[gi]
    return opt._numbers(group, opt.state[group["params"][pi]])[key]


def _opt_state_array(opt: Any, gi: int, pi: int, key: str) -> Any:
    """The array of state ``key`` of parameter ``pi`` of group ``gi``, as it is now (a
    state dict loaded since, a move to another device, give new tensors)."""
    return opt.state[opt.param_groups[gi]["params"][pi]][key]._data


def _number(value: Any, like: Tensor) -> Any:
    """A number as ``Function.apply`` hands it to forward, for the trace's device."""
    return like._dev.ops.scalar(value, like._data)


_OP_NAMES: dict[type, str] = {}  # an op class -> its name, where every instance has the same one
_CLASS_OP_NAME = Function.__dict__["op_name"]  # the property that reads the class's name


def _op_name(fn: Any) -> str:
    """``fn.op_name``, remembered per class where the class does not name each instance
    (``op_name`` walks the class's attributes: a trace asks once per op it records)."""
    name = fn.op_name
    if getattr(fn.__class__, "op_name", None) is _CLASS_OP_NAME:
        _OP_NAMES[fn.__class__] = name
    return name


def _is_view_of(data: Any, arrays: Sequence[Any]) -> bool:
    """Whether ``data`` shares the memory of one of ``arrays`` (a reshape, a slice, or the
    array itself, as an in-place op's node passes it on)."""
    for a in arrays:
        if a is data:
            return True
    base = getattr(data, "base", None)
    if base is None:  # (most results: an array of their own)
        return False
    for a in arrays:
        if a is base or getattr(a, "base", None) is base:
            return True
    return False


def reachable(fn: Callable[..., Any]) -> dict[str, Any]:
    """What ``fn`` reaches by name: its ``self`` (a bound method, a module), its closure and
    the globals its code names (nested functions' too), with the items of lists, tuples
    and dicts among them: ``{name: object}``."""
    from ..nn.module import Module  # noqa: PLC0415

    found: dict[str, Any] = {}
    while isinstance(fn, functools.partial):
        for i, a in enumerate(fn.args):
            found[f"partial_{i}"] = a
        fn = fn.func
    obj = getattr(fn, "__self__", None)
    if isinstance(fn, Module):
        obj, fn = fn, fn.forward
    if obj is not None and not isinstance(obj, type) and not inspect.ismodule(obj):
        found["self"] = obj
    code = getattr(fn, "__code__", None)
    if code is not None:
        for name, cell in zip(code.co_freevars, getattr(fn, "__closure__", None) or ()):
            with contextlib.suppress(ValueError):  # an empty cell
                found[name] = cell.cell_contents
        glb = getattr(fn, "__globals__", {})
        for c in nested_codes(code):  # the globals of nested functions and lambdas too
            for name in c.co_names:
                if name in glb:
                    found.setdefault(name, glb[name])
    return expand(found)


def expand(found: dict[str, Any]) -> dict[str, Any]:
    """``found`` with, one level down, what its lists, tuples and dicts hold (tensors,
    modules, optimizers) and the attributes of plain objects (a trainer's ``self.model``,
    ``self.opt``, ``self.scale``)."""
    from ..nn.module import Module  # noqa: PLC0415

    for name, v in list(found.items()):
        if isinstance(v, (list, tuple)):
            items: Any = enumerate(v)
        elif isinstance(v, dict):
            items = v.items()
        elif (hasattr(v, "__dict__") and not isinstance(v, (Module, Tensor, type)) and not callable(v)
              and not inspect.ismodule(v) and (type(v).__module__.split(".")[0] != "tinygrad_attn"
                                               or type(v).__module__.startswith("tinygrad_attn.distributions."))):  # fmt: skip
            items = ((k, x) for k, x in vars(v).items() if not k.startswith("_"))
        else:
            continue
        for k, x in itertools.islice(items, 256):
            if isinstance(v, (list, tuple, dict)) and isinstance(x, _PLAIN):
                continue  # (numbers in a container: not read by name, not guarded)
            found.setdefault(f"{name}_{k}" if isinstance(v, (list, tuple, dict)) else f"{name}.{k}", x)
    return found


_PLAIN = (int, float, bool, str, bytes, type(None), complex)


def _tensors_in_reach(fn: Callable[..., Any]) -> dict[int, tuple[str, Tensor]]:
    """id(tensor) -> (name, tensor) for every tensor ``fn`` reaches: by name, as a module's
    parameter or buffer, as a parameter an optimizer holds. These live outside ``fn``: a
    program reads them at each replay, never as constants."""
    from ..nn.module import Module  # noqa: PLC0415
    from ..optim.optimizer import Optimizer  # noqa: PLC0415

    out: dict[int, tuple[str, Tensor]] = {}
    found = reachable(fn)
    for name, v in sorted(found.items(), key=lambda kv: isinstance(kv[1], Optimizer)):  # modules name first
        if isinstance(v, Tensor):
            out.setdefault(id(v), (name, v))
        elif isinstance(v, Module):
            for pn, p in v.named_parameters():
                out.setdefault(id(p), (pn, p))
            for bn, b in v.named_buffers():
                out.setdefault(id(b), (bn, b))
        elif isinstance(v, Optimizer):
            for g in v.param_groups:
                for p in g["params"]:
                    out.setdefault(id(p), (None, p))  # (no name of its own: the module scope's, if any)
    return out


def _arg_names(fn: Callable[..., Any], n: int) -> list[str]:
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        params = []
    names = []
    for i in range(n):
        if i < len(params) and params[i].kind in (params[i].POSITIONAL_ONLY, params[i].POSITIONAL_OR_KEYWORD):
            names.append(params[i].name)
        else:
            names.append(f"arg{i}")
    return names
