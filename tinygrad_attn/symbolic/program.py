"""A traced program: a flat list of op records over named buffers, and its replay.

A :class:`Buffer` is one array the program makes or reads, with a static shape, dtype
and device. An :class:`OpRecord` is one line of the program: what it calls, which
buffers it reads, which it makes. :class:`Program` holds them in order (forward, then
backward, then updates), the Python source generated from them, and that source
compiled: replaying runs exactly the text that ``print(prog)`` shows.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..engine.quiet import FP_STATE, QUIET
from ..engine.switches import _State
from ..tensors._tensor import Tensor
from . import codegen, kernels, passes
from .fusion import elementwise_groups
from .records import Buffer, OpRecord, TraceError  # noqa: F401 - (TraceError: re-exported)


class Program:
    """A traced function as a flat program; call it to replay on new inputs.

    >>> prog = tga.jit.trace(lambda x, w: (x @ w).relu().sum(), x, w)  # doctest: +SKIP
    >>> print(prog)           # the generated Python source, forward then backward
    >>> loss = prog(x2, w)    # replays; gradients land in x2.grad and w.grad
    """

    def __init__(self, name: str, ops: list[OpRecord], args: list[Buffer | None], outputs: list[Buffer],
                 template: Any, arg_specs: list[Any], fuse: bool = True) -> None:  # fmt: skip
        self.name = name
        self.did_backward = False  # whether fn called backward() itself (set by the tracer)
        self.host_reads: list[str] = []  # Python reads of a NumPy argument's values (set by the tracer)
        self.arg_specs = arg_specs  # per argument: (shape, dtype, device) of a tensor, or None
        self._template = template
        self.outputs = outputs
        self.arg_buffers = args
        self.ops = passes.optimize(ops, outputs)
        self.dead_after = passes.liveness(self.ops, outputs)
        # The elementwise groups the replay runs as one compiled loop (or CUDA kernel) each
        self.kernels = kernels.replay_kernels(self) if fuse else []
        self._peak_bytes: int | None = None  # (computed when first asked: a replay never needs it)
        self.code, env = codegen.generate(self)
        self._env = env
        exec(compile(self.code, f"<program {name}>", "exec"), env)  # the printed text is what runs
        # (taken out of env: the function holds env as its globals, and env holding the function
        # would be a reference cycle, which kept the parameters, the optimizer and the whole
        # model alive after the program was dropped, until the cyclic collector came)
        self._run = env.pop("program")

    def __call__(self, *args: Any) -> Any:
        if len(args) != len(self.arg_specs):
            raise TypeError(
                f"program {self.name}: traced with {len(self.arg_specs)} arguments, called with {len(args)}"
            )
        for i, (a, spec) in enumerate(zip(args, self.arg_specs)):
            if spec is None:
                continue
            if not isinstance(a, Tensor):
                raise TypeError(f"program {self.name}: argument {i} was a Tensor when traced, got {type(a).__name__}")
            if (a._data.shape, a._data.dtype, a._dev) != spec:
                raise ValueError(
                    f"program {self.name}: argument {i} has shape {tuple(a.shape)}, dtype {a.dtype} on {a.device}; "
                    f"the program was traced for shape {spec[0]}, dtype {spec[1]} on {spec[2].name}. "
                    "Trace again for new shapes (tga.compile does this for you)."
                )
        tracer = _State.tracer
        if tracer is not None:  # (its ops run on arrays, unseen by the trace: the step cannot be replayed)
            tracer.python_effect(f"program {self.name} (tga.jit.trace) called")
        return self.replay(args)

    def replay(self, args: Sequence[Any]) -> Any:
        """Run on ``args`` as :meth:`__call__` does, without checking them (``tga.compile``'s key
        already holds their shapes, dtypes and devices)."""
        quiet = FP_STATE.set(QUIET)  # (as eager ops: no NumPy warning of log(0), engine/quiet.py)
        try:
            outs = self._run(args)
        finally:
            FP_STATE.reset(quiet)
        template = self._template
        if template.__class__ is _Slot:  # (one tensor returned: most steps)
            b = self.outputs[template.i]
            return Tensor._wrap(outs[template.i], b.dev)
        return _fill(template, [Tensor._wrap(o, b.dev) for o, b in zip(outs, self.outputs)])

    @property
    def peak_bytes(self) -> int:
        """The most bytes the program's own buffers hold at once (see ``passes.peak_bytes``)."""
        if self._peak_bytes is None:
            self._peak_bytes = passes.peak_bytes(self.ops, self.dead_after)
        return self._peak_bytes

    def fusion_groups(self) -> list[Any]:
        """The program's chains of elementwise ops that one kernel each could compute, as
        :class:`~tinygrad_attn.symbolic.fusion.FusedKernel` records (the generated CUDA source
        of each, compile-checked with NVRTC by the tests). Those a replay runs as one call
        (a compiled loop on the CPU, a CuPy kernel on CUDA: :mod:`.kernels`) are
        ``self.kernels``, and the printed program shows their calls."""

        return elementwise_groups(self)

    def graph(self, **kw: Any) -> Any:
        """The program as a ``graphviz.Digraph``: one node per op, one edge per buffer read,
        each fusion group (:meth:`fusion_groups`) a dotted cluster (``kernels=False``: none)."""
        from ..viz.program import draw_program  # noqa: PLC0415

        return draw_program(self, **kw)

    def __str__(self) -> str:
        return self.code

    # Jupyter shows a program as its source, inline and offline
    def _repr_html_(self) -> str:
        import html  # noqa: PLC0415

        return f"<pre title={html.escape(repr(self), quote=True)!r}>{html.escape(self.code)}</pre>"

    def __repr__(self) -> str:
        return f"<Program {self.name}: {len(self.ops)} ops, peak {self.peak_bytes} bytes>"


def _fill(template: Any, values: Sequence[Any]) -> Any:
    """``template`` with each ``_Slot(i)`` replaced by ``values[i]``."""
    if isinstance(template, _Slot):
        return values[template.i]
    if isinstance(template, tuple):
        return same_kind(template, [_fill(t, values) for t in template])
    if isinstance(template, list):
        return [_fill(t, values) for t in template]
    if isinstance(template, dict):
        return {k: _fill(v, values) for k, v in template.items()}
    return template


def same_kind(seq: Any, items: list) -> Any:
    """``items`` as a sequence of ``seq``'s type: a list, a tuple, a named tuple (built field by
    field: ``x.max(1)``'s ``(values, indices)``), a tuple subclass built from one iterable
    (``Size``) or field by field (``aminmax``'s ``(min, max)``). The one rule for every
    structure a trace takes apart and puts back (arguments, results, templates)."""
    t = type(seq)
    if t is list or t is tuple:
        return t(items)
    if hasattr(seq, "_fields"):
        return t(*items)
    try:
        return t(items)
    except TypeError:
        return t(*items)


class _Slot:
    """Where a returned tensor goes in the structure ``fn`` returned."""

    __slots__ = ("i",)

    def __init__(self, i: int) -> None:
        self.i = i
