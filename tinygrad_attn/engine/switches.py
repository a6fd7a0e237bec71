"""The per-thread switches every op reads: grad mode, ``decompose``, ``detect_anomaly``,
module and composite scopes, and the one observer (:class:`Hook`, ``_State.hook``) through
which the tracer, anomaly detection and the explorer see each op and backward step.

Counters of how many threads have grad mode off, and of how many hooks are installed, let
an op skip reading its thread's switches while there are none. This module alone writes them;
``Function.apply`` reads them here.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import sys
import threading
import weakref
from collections.abc import Callable, Iterator
from typing import Any

# Knowing that only the graph holds a tensor or an array takes exact reference counts:
# CPython before 3.14, which may skip counting some references on the stack. Elsewhere
# nothing is freed early and no gradient is overwritten.
_CAN_COUNT_REFS = sys.implementation.name == "cpython" and sys.version_info < (3, 14)


def _count(name: str, delta: int) -> None:
    with _switch_lock:
        globals()[name] += delta


# How many threads have grad mode off: while none has, an op need not read its thread's
# switch (a module global reads faster than a ``threading.local`` attribute).
_grad_off_threads = 0
_switch_lock = threading.Lock()
# How many hooks are installed in all threads (see observing): while none is, an op need not
# read its thread's hook.
_observing = 0


class Hook:
    """An observer of one thread's ops and backward steps, installed by :func:`observing`.

    The one way the tracer (``tinygrad_attn.symbolic``), anomaly detection and the explorer
    (``tinygrad_attn.viz.explore``) see what the engine does: ``Function.apply`` calls
    :meth:`op` for every op, the backward pass :meth:`before_step` and :meth:`after_step`
    around every step, constructors :meth:`made`, in-place changes :meth:`write`. Hooks nest: each passes every event on to the one it replaced
    (``outer``), so a traced function may run inside ``detect_anomaly``, and an explored one
    under the tracer.
    """

    outer: Hook | None = None

    def op(self, fn: Any, inputs: Any, out: Any) -> None:
        """``fn`` (recorded as ``out``'s node, or not) made ``out`` from ``inputs``."""
        if self.outer is not None:
            self.outer.op(fn, inputs, out)

    def before_step(self, t: Any, g: Any) -> None:
        """The backward pass is about to run the backward of ``t``'s node (``t._ctx``), with
        ``g``, the complete gradient of ``t``."""
        if self.outer is not None:
            self.outer.before_step(t, g)

    def after_step(self, fn: Any, grads: Any, ns: Any) -> None:
        """``fn``'s backward returned ``grads`` (one per input), computed with ``ns``."""
        if self.outer is not None:
            self.outer.after_step(fn, grads, ns)

    def made(self, t: Any, source: Any = None) -> None:
        """A constructor (not an op) made ``t`` (from ``source``, the data it was given, where known)."""
        if self.outer is not None:
            self.outer.made(t, source)

    def write(self, t: Any, key: Any, value: Any) -> None:
        """An in-place change is about to write ``value`` into ``t``'s array at ``key``
        (``None``: all of it)."""
        if self.outer is not None:
            self.outer.write(t, key, value)


@contextlib.contextmanager
def observing(hook: Hook) -> Iterator[Hook]:
    """Install ``hook`` for this thread while inside; the one it replaces still sees every event."""
    st = _State
    hook.outer = st.hook
    _count("_observing", +1)
    st.hook = hook
    try:
        yield hook
    finally:
        st.hook = hook.outer
        hook.outer = None
        _count("_observing", -1)


class _Switches(threading.local):
    """The switches every op reads, one set per thread: each thread starts from the class
    defaults (grad enabled), and what one thread switches no other thread sees. Reads of
    a ``threading.local`` attribute cost a few tens of nanoseconds, a small share of an op.
    """

    _grad = True

    @property
    def grad_enabled(self) -> bool:
        return self._grad

    @grad_enabled.setter
    def grad_enabled(self, flag: bool) -> None:
        flag = bool(flag)
        if flag == self._grad:
            return
        if not flag:  # (counted before the switch, uncounted after: the count never says "none" wrongly)
            _count("_grad_off_threads", +1)
            self._grad = False
        else:
            self._grad = True
            _count("_grad_off_threads", -1)

    decompose = False
    anomaly = False
    multithreading = True  # (PyTorch's backward on device threads: one thread here either way)
    inference = False  # inside inference_mode (grad mode is off there too)
    scope: Scope | None = None
    # id -> weakref of non-leaf tensors that called retain_grad(): one registry for the
    # process (a class attribute, never set per thread), as a tensor may be made in one
    # thread and reach backward in another.
    retained: dict = {}
    # id -> (weakref, [hooks]) of tensors that called register_hook(): one registry for the
    # process, as retained.
    grad_hooks: dict = {}
    # id -> (weakref, [hooks]) of leaves that called register_post_accumulate_grad_hook()
    post_accumulate_hooks: dict = {}
    # id -> tensor, weakly, of the tensors made inside inference_mode (PyTorch's inference
    # tensors: no in-place change outside the mode, never saved for a backward)
    inference_tensors: weakref.WeakValueDictionary = weakref.WeakValueDictionary()
    # Whether recording an op may release the values of intermediates that nothing but
    # the graph holds (off during a backward pass, which counts roots' uses once more).
    releasing = _CAN_COUNT_REFS
    # The gradient array the backward step now running may overwrite (see may_overwrite).
    overwritable: Any = None
    # The symbolic tracer recording this thread (tinygrad_attn.symbolic), or None: asked by
    # the code that must act differently in a trace (a value read, a random draw, a step).
    tracer: Any = None
    # The innermost observer of this thread's ops and backward steps (see Hook), or None.
    hook: Hook | None = None

    def __init__(self) -> None:  # (runs once in each thread that touches the switches)
        # What each switch held when a context manager entered, innermost last: leaving
        # restores it, so one manager instance can be entered recursively or by two threads.
        self.saved: list = []


_State = _Switches()


# -- the symbolic tracer, as the rest of the package asks for it --------------------------
# A traced program (tinygrad_attn.symbolic) is replayed without the Python that made it, so
# code that reads values on the host, draws random numbers or changes Python objects acts
# differently while this thread is traced. These three are the only questions it asks.
def tracing() -> bool:
    """Whether the symbolic tracer is recording this thread's ops (``tga.jit.trace``,
    ``tga.compile``): ids and indices then stay inputs of the program, never host values."""
    return _State.tracer is not None


def active_tracer() -> Any:
    """The symbolic tracer recording this thread, or None: for the code that hands it a line
    of the program to record (an optimizer step, a scheduler step, a gradient hook)."""
    return _State.tracer


def check_host_read(t: Any, what: str) -> None:
    """``t``'s values are about to go to Python for ``what`` (``bool(t)``, ``.item()``, ...):
    inside a trace, a ``TraceError`` naming the line if ``t`` is a value of the program,
    since a replay would not make that Python decision again. A meta tensor has no values:
    PyTorch's ``NotImplementedError`` (its ops whose result's shape depends on the values,
    ``nonzero``, ``unique``, a boolean mask, refuse meta tensors so)."""
    if t._dev.meta:
        raise NotImplementedError(
            f"{what}: a meta tensor (shape {tuple(t.shape)}) has no values to compute with; "
            "Cannot copy out of meta tensor; no data!"
        )
    tracer = _State.tracer
    if tracer is not None:
        tracer.check_read(t, what)


# -- switches ---------------------------------------------------------------------
class _Switch(contextlib.ContextDecorator):
    """Sets switch ``attr`` to ``value`` inside; leaving restores what was in force. As a
    decorator, with or without parentheses (``@tga.no_grad``); a generator function runs under
    the switch each time it resumes, never while its caller runs between ``yield``s, as
    PyTorch's decorators do."""

    attr = ""
    value: Any = None

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        if cls.__init__ is object.__init__ and len(args) == 1 and callable(args[0]) and not kwargs:
            return cls()(args[0])  # @no_grad, without parentheses
        return super().__new__(cls)

    def __call__(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        if not inspect.isgeneratorfunction(fn):
            return super().__call__(fn)

        @functools.wraps(fn)
        def switched_generator(*args: Any, **kwargs: Any) -> Any:
            gen = fn(*args, **kwargs)
            resume: Callable[[], Any] = lambda: gen.send(None)  # noqa: E731
            while True:
                try:
                    with self:
                        response = resume()
                except StopIteration as stop:
                    return stop.value
                try:
                    request = yield response
                except GeneratorExit:
                    with self:
                        gen.close()
                    raise
                except BaseException as e:  # noqa: BLE001 - handed on to the generator, as Python's throw
                    resume = functools.partial(gen.throw, e)
                else:
                    resume = functools.partial(gen.send, request)

        return switched_generator

    def __enter__(self) -> None:
        st = _State
        st.saved.append(getattr(st, self.attr))
        setattr(st, self.attr, self.value)

    def __exit__(self, *exc: object) -> None:
        st = _State
        setattr(st, self.attr, st.saved.pop())


class _NoParamSwitch(_Switch):
    """A switch without settings: PyTorch's ``(orig_func=None)``, the function it decorates
    when used without parentheses."""

    def __new__(cls, orig_func: Callable[..., Any] | None = None) -> Any:
        if orig_func is None:
            return super().__new__(cls)
        return cls()(orig_func)  # @no_grad, without parentheses


class no_grad(_NoParamSwitch):
    """Record nothing inside: ``with tga.no_grad(): ...`` or ``@tga.no_grad()``."""

    attr, value = "grad_enabled", False

    def __init__(self) -> None:  # (PyTorch's no_grad(): its instance takes nothing)
        super().__init__()


class enable_grad(_NoParamSwitch):
    """Record again inside a ``no_grad`` region."""

    attr, value = "grad_enabled", True


def is_grad_enabled() -> bool:
    return _State.grad_enabled


class set_multithreading_enabled(contextlib.ContextDecorator):
    """PyTorch's switch of multithreaded backward, per thread: called, at once; as a ``with`` block,
    back to what was in force when it ends. The backward pass here always runs on the calling
    thread, so the switch is kept and read back (:func:`is_multithreading_enabled`) and changes nothing."""

    def __init__(self, mode: bool) -> None:
        self.prev, self.mode = _State.multithreading, bool(mode)
        _State.multithreading = self.mode

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        _State.multithreading = self.prev

    def clone(self) -> set_multithreading_enabled:
        return self.__class__(self.mode)


def is_multithreading_enabled() -> bool:
    """Whether :class:`set_multithreading_enabled` last asked for multithreaded backward (True by default)."""
    return _State.multithreading


def is_view_replay_enabled() -> bool:
    """PyTorch's ``torch.autograd.is_view_replay_enabled``: False, its default (no switch sets it here)."""
    return False


class set_grad_enabled(contextlib.ContextDecorator):
    """Switch recording on or off, as PyTorch's: called, at once (``tga.set_grad_enabled(False)``
    until switched back); as a ``with`` block, back to what was in force when it ends; as a
    decorator, for each call of the function.

    >>> with tga.set_grad_enabled(phase == "train"):  # doctest: +SKIP
    ...     loss = model(x).sum()
    """

    def __init__(self, mode: bool) -> None:
        self.prev, self.mode = _State.grad_enabled, bool(mode)
        _State.grad_enabled = self.mode

    def __enter__(self) -> None:
        _State.grad_enabled = self.mode

    def __exit__(self, *exc: object) -> None:
        _State.grad_enabled = self.prev

    def __call__(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        _State.grad_enabled = self.prev  # (a decorator switches nothing until its function runs)
        mode = self.mode

        @functools.wraps(fn)
        def switched(*args: Any, **kwargs: Any) -> Any:
            with set_grad_enabled(mode):
                return fn(*args, **kwargs)

        return switched


class inference_mode(_Switch):
    """PyTorch's ``inference_mode``: ``no_grad``, and the tensors made inside are inference
    tensors (``Tensor.is_inference()``), which outside the mode cannot be changed in place,
    made to require grad or saved for a backward; ``inference_mode(False)`` records, as
    PyTorch's turns grad mode on. A ``with`` block or a decorator, with or without
    parentheses.

    >>> @tga.inference_mode()  # doctest: +SKIP
    ... def predict(x): return model(x).argmax(-1)
    """

    attr = "grad_enabled"

    def __new__(cls, mode: Any = True) -> Any:
        if callable(mode) and not isinstance(mode, bool):  # @inference_mode, without parentheses
            return cls()(mode)
        return super().__new__(cls)

    def __init__(self, mode: bool = True) -> None:
        self.mode = bool(mode)

    def __enter__(self) -> None:
        st = _State
        st.saved.append((st.grad_enabled, st.inference))
        st.grad_enabled, st.inference = not self.mode, self.mode

    def __exit__(self, *exc: object) -> None:
        st = _State
        st.grad_enabled, st.inference = st.saved.pop()


def mark_inference(t: Any) -> None:
    """Note ``t`` (made inside inference_mode) as an inference tensor."""
    _State.inference_tensors[id(t)] = t


def is_inference_tensor(t: Any) -> bool:
    return _State.inference_tensors.get(id(t)) is t


def refuse_inference_change(t: Any, what: str) -> None:
    """PyTorch's errors for an inference tensor changed (``what``) outside inference_mode."""
    if _State.inference or not _State.inference_tensors or not is_inference_tensor(t):
        return
    if what == "requires_grad":
        raise RuntimeError("Setting requires_grad=True on inference tensor outside InferenceMode is not allowed.")
    raise RuntimeError(f"{what}: Inplace update to inference tensor outside InferenceMode is not allowed. You can "
                       "make a clone to get a normal tensor before doing inplace update. See "
                       "https://github.com/pytorch/rfcs/pull/17 for more details.")  # fmt: skip


def is_inference_mode_enabled() -> bool:
    """Whether an ``inference_mode()`` block (or decorated function) is running, as PyTorch's."""
    return _State.inference


class decompose(_Switch):
    """Run every composite op as its primitive-op definition, so graphs show each primitive.

    >>> with tga.decompose():  # doctest: +SKIP
    ...     y = x.softmax(-1)    # exp, max, sum, sub, div nodes instead of one softmax node
    """

    attr, value = "decompose", True


# The hook detect_anomaly installs: function.AnomalyCheck, which reads op values (this
# module imports no other of the engine), registered by register_anomaly_check.
_anomaly_hook: Any = None


def register_anomaly_check(hook_class: type[Hook]) -> None:
    """Called once by ``engine.function``: the hook that ``detect_anomaly`` installs."""
    global _anomaly_hook
    _anomaly_hook = hook_class


class detect_anomaly(_Switch):
    """PyTorch's anomaly mode: each op notes the line of user code that made it, and (``check_nan``)
    the backward pass raises PyTorch's ``RuntimeError`` at the first node whose gradient holds NaN,
    naming the node and that line. A forward's NaN or Inf, and an infinite gradient, are no anomaly
    (PyTorch's: a mask of ``-inf`` is not an error).
    """

    attr, value = "anomaly", True

    def __init__(self, check_nan: bool = True) -> None:
        self.check_nan = check_nan

    def __enter__(self) -> None:
        st = _State
        # (an inner detect_anomaly adds no second check)
        ctx = observing(_anomaly_hook()) if not st.anomaly else contextlib.nullcontext()
        ctx.__enter__()
        st.saved.append((ctx, _anomaly_check_nan[0]))
        _anomaly_check_nan[0] = bool(self.check_nan)
        super().__enter__()

    def __exit__(self, *exc: object) -> None:
        super().__exit__(*exc)
        ctx, _anomaly_check_nan[0] = _State.saved.pop()
        ctx.__exit__(*exc)


# -- scopes: the module and composite op an op was made in -------------------------
class Scope:
    """A node of the scope tree: a module call (``kind="module"``) or a composite op.

    Graph nodes hold a reference to the scope they were made in, never a string, so
    recording it costs one attribute read. ``path`` is built only when asked for.
    """

    __slots__ = ("name", "kind", "parent", "module", "reads", "outputs", "overload", "__weakref__")

    def __init__(self, name: str, kind: str, parent: Scope | None, module: Any = None) -> None:
        self.name = name
        self.kind = kind
        self.parent = parent
        self.module = module
        #: a composite op's floating arguments as its graph edges: the node that made each, a weak
        #: reference to a leaf that requires grad, or None (None: not known)
        self.reads: list[Any] | None = None
        #: a composite op of several outputs: ``id`` of the node that made each -> its position
        self.outputs: dict[int, int] | None = None
        #: a composite op's PyTorch overload number (``MeanBackward1``: ``mean`` over a dim)
        self.overload = 0

    def chain(self) -> list[Scope]:
        """This scope and its parents, outermost first."""
        out, s = [], self
        while s is not None:
            out.append(s)
            s = s.parent
        return out[::-1]

    @property
    def path(self) -> str:
        """Dotted module path with composites after a slash: ``layers.0.attn/softmax``."""
        mods = [s.name for s in self.chain() if s.kind == "module" and s.name]
        comps = [s.name for s in self.chain() if s.kind != "module"]
        return ".".join(mods) + ("/" + "/".join(comps) if comps else "")

    def __repr__(self) -> str:
        return f"Scope({self.path!r})"


@contextlib.contextmanager
def scope(name: str, kind: str = "composite", module: Any = None) -> Iterator[Scope]:
    """Ops made inside belong to a new child scope of the current one."""
    prev = _State.scope
    s = Scope(name, kind, prev, module)
    _State.scope = s
    try:
        yield s
    finally:
        _State.scope = prev


def current_scope() -> Scope | None:
    return _State.scope


class set_detect_anomaly:
    """PyTorch's ``set_detect_anomaly(mode, check_nan=True)``: anomaly detection on (or left as
    it is) from the call, until the end of a ``with`` block made of it."""

    def __init__(self, mode: bool, check_nan: bool = True) -> None:
        self._inside: detect_anomaly | None = None
        if mode and not _State.anomaly:
            self._inside = detect_anomaly(check_nan)
            self._inside.__enter__()

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc: object) -> None:
        if self._inside is not None:
            self._inside.__exit__(*exc)
            self._inside = None


def is_anomaly_enabled() -> bool:
    """Whether anomaly detection is on (``detect_anomaly``), as PyTorch's."""
    return _State.anomaly


# the detect_anomaly that set_anomaly_enabled(True) entered, left by set_anomaly_enabled(False);
# and the check_nan it was asked with
_anomaly_switched_on: list[detect_anomaly] = []
_anomaly_check_nan = [True]


def set_anomaly_enabled(enabled: bool, check_nan: bool = True) -> None:
    """PyTorch's ``torch.set_anomaly_enabled``: anomaly detection on or off from here on, not
    as a block (``detect_anomaly`` is the block)."""
    _anomaly_check_nan[0] = bool(check_nan)
    if enabled and not _anomaly_switched_on and not _State.anomaly:
        on = detect_anomaly(check_nan)
        on.__enter__()
        _anomaly_switched_on.append(on)
    elif not enabled and _anomaly_switched_on:
        _anomaly_switched_on.pop().__exit__(None, None, None)


def is_anomaly_check_nan_enabled() -> bool:
    """The ``check_nan`` that :func:`set_anomaly_enabled` (or ``set_detect_anomaly``) was last given."""
    return _anomaly_check_nan[0]
