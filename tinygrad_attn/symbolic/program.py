"""A traced program: a flat list of op records over named buffers, and its replay.

A :class:`Buffer` is one array the program makes or reads, with a static shape, dtype
and device. An :class:`OpRecord` is one line of the program: what it calls, which
buffers it reads, which it makes. :class:`Program` holds them in order (forward, then
backward, then updates), the Python source generated from them, and that source
compiled: replaying runs exactly the text that ``print(prog)`` shows.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from .._tensor import Tensor

_DTYPE_NAMES: dict[Any, str] = {}


class TraceError(RuntimeError):
    """A traced function made a Python decision on a tensor's value (``.item()``,
    ``bool(t)``, ``.numpy()``...): a replayed program would not run that decision again."""


class Buffer:
    """One named array of a program.

    ``kind``: ``"arg"`` (an argument's array), ``"param"`` (read from a tensor fn reached,
    a parameter, or a tensor outside fn that fn changes in place), ``"const"`` (an array
    captured at trace time), ``"init"`` (a copy of an array made inside fn that fn then
    changes in place: each replay starts from the values it had), ``"grad"`` (a tensor's
    ``.grad`` after the program added into it, for fn to read), ``"number"`` (a 0-d
    array computed at each replay from Python state: an optimizer's learning rate),
    ``"state"`` (an optimizer's state array, read where the optimizer holds it),
    ``"value"`` (made by an op). ``nbytes`` is what the buffer allocates: 0 for a view of another buffer.
    ``alias``: buffers sharing memory (a tensor and its slices, reshapes) share it, so the
    passes see that a write into one changes the others.
    """

    __slots__ = ("name", "shape", "dtype", "dev", "kind", "nbytes", "index", "tensor", "array", "alias")

    def __init__(self, name: str, shape: tuple, dtype: Any, dev: Any, kind: str, nbytes: int) -> None:
        self.name = name
        self.shape = shape
        self.dtype = dtype
        self.dev = dev
        self.kind = kind
        self.nbytes = nbytes
        self.index: int | None = None  # an argument's position
        self.tensor: Tensor | None = None  # a parameter's tensor
        self.array: Any = None  # a constant's array
        self.alias: int = id(self)  # the memory it shares with other buffers (see above)

    @property
    def type_str(self) -> str:
        """``(2, 4, 8) float32``: the comment each line of the program ends with."""
        name = _DTYPE_NAMES.get(self.dtype)
        if name is None:  # (str of a dtype is slow, and a program prints thousands of them)
            name = _DTYPE_NAMES[self.dtype] = str(self.dtype)
        return f"{self.shape} {name}"

    def __repr__(self) -> str:
        return f"Buffer({self.name}: {self.type_str}, {self.kind})"


@dataclass(eq=False)
class OpRecord:
    """One line of a program.

    ``kind`` is one of:

    - ``"load"``: read an argument's, parameter's or constant's array into a buffer;
    - ``"call"``: an op's forward (``fn`` is the op instance, ``fn.args`` its arguments);
    - ``"backward"``: a fused op's hand-derived backward on arrays (``fn`` is the
      instance whose forward ran in this program, so it reads what that forward kept);
    - ``"accumulate"``: add a gradient buffer into ``target.grad`` as backward does;
    - ``"store"``: an in-place write ``inputs[0][target] = inputs[1]`` (``target`` a
      basic index, or ``None`` for the whole buffer), as ``x += y``, ``x[i] = v`` or
      ``x.clamp_()`` write into the array the eager run changed;
    - ``"effect"``: a call with effects on state outside the program: a ``zero_grad()``,
      an optimizer's ``foreach_update(i)`` (param group ``i``'s whole update, flat),
      ``_advance()`` (its step counts, before its update's ops), or the ``step()`` of an
      optimizer that gives no update as ops.

    ``inputs`` holds buffers and Python numbers; ``outputs`` buffers (``None`` where a
    backward gives no gradient).
    """

    kind: str
    op: str
    inputs: list[Any] = field(default_factory=list)
    outputs: list[Buffer | None] = field(default_factory=list)
    fn: Any = None
    section: str = "forward"
    target: Any = None  # accumulate: the argument's position (int) or the tensor; effect: the object;
    # store: the index written (None: all of it)
    scope: Any = None  # the autograd Scope (module, composite) the op was made in
    label: str = ""  # effect: the name the program gives the object
    call_args: tuple = ()  # effect: the method's arguments (a param group's index)

    @property
    def args(self) -> Any:
        """The op's non-array arguments (``None`` for most)."""
        return getattr(self.fn, "args", None) if self.kind in ("call", "backward") else None

    def __repr__(self) -> str:
        ins = ", ".join(b.name if isinstance(b, Buffer) else repr(b) for b in self.inputs)
        outs = ", ".join(b.name if b is not None else "_" for b in self.outputs)
        return f"<{self.kind} {outs} = {self.op}({ins})>"


class Program:
    """A traced function as a flat program; call it to replay on new inputs.

    >>> prog = tga.trace(lambda x, w: (x @ w).relu().sum(), x, w)  # doctest: +SKIP
    >>> print(prog)           # the generated Python source, forward then backward
    >>> loss = prog(x2, w)    # replays; gradients land in x2.grad and w.grad
    """

    def __init__(self, name: str, ops: list[OpRecord], args: list[Buffer | None], outputs: list[Buffer],
                 template: Any, arg_specs: list[Any]) -> None:  # fmt: skip
        from . import codegen, passes  # noqa: PLC0415

        self.name = name
        self.did_backward = False  # whether fn called backward() itself (set by the tracer)
        self.arg_specs = arg_specs  # per argument: (shape, dtype, device) of a tensor, or None
        self._template = template
        self.outputs = outputs
        self.arg_buffers = args
        self.ops = passes.optimize(ops, outputs)
        self.dead_after = passes.liveness(self.ops, outputs)
        self.peak_bytes = passes.peak_bytes(self.ops, self.dead_after)
        self.code, env = codegen.generate(self)
        self._env = env
        exec(compile(self.code, f"<program {name}>", "exec"), env)  # the printed text is what runs
        self._run = env["program"]

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
        outs = self._run(args)
        return _fill(self._template, [Tensor._wrap(o, b.dev) for o, b in zip(outs, self.outputs)])

    def fusion_groups(self) -> list[Any]:
        """The program's chains of elementwise ops that one GPU kernel each could compute, as
        :class:`~tinygrad_attn.symbolic.fusion.FusedKernel` records (the generated CUDA source
        of each, compile-checked with NVRTC by the tests). A replay does not run them: it
        calls each op's forward, one array call per op, as the printed program reads."""
        from .fusion import elementwise_groups  # noqa: PLC0415

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
        return tuple(_fill(t, values) for t in template)
    if isinstance(template, list):
        return [_fill(t, values) for t in template]
    if isinstance(template, dict):
        return {k: _fill(v, values) for k, v in template.items()}
    return template


class _Slot:
    """Where a returned tensor goes in the structure ``fn`` returned."""

    __slots__ = ("i",)

    def __init__(self, i: int) -> None:
        self.i = i
