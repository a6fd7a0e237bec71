"""The records a traced program is made of: :class:`Buffer` (one array the program makes or
reads, with a static shape, dtype and device), :class:`OpRecord` (one line of the program:
what it calls, which buffers it reads, which it makes), and :class:`TraceError`. Below the
program, its passes and its code generator, which all read them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..tensors._tensor import Tensor

_DTYPE_NAMES: dict[Any, str] = {}
_TYPE_STRS: dict[tuple, str] = {}  # (shape, dtype) -> its type_str


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
        key = (self.shape, self.dtype)
        s = _TYPE_STRS.get(key)
        if s is None:  # (str of a dtype and a shape's repr are slow, and a program prints thousands of them)
            name = _DTYPE_NAMES.get(self.dtype)
            if name is None:
                name = _DTYPE_NAMES[self.dtype] = str(self.dtype)
            s = f"{self.shape} {name}"
            if len(_TYPE_STRS) < 4096:  # (a few dozen shapes per program: bounded all the same)
                _TYPE_STRS[key] = s
        return s

    def __repr__(self) -> str:
        return f"Buffer({self.name}: {self.type_str}, {self.kind})"


@dataclass(eq=False)
class OpRecord:
    """One line of a program.

    ``kind`` is one of:

    - ``"load"``: read an argument's, parameter's or constant's array into a buffer;
    - ``"call"``: an op's forward (``fn`` is the op instance, ``fn.args`` its arguments);
    - ``"backward"``: a fused op's hand-derived backward on arrays (``fn`` is the
      instance whose forward ran in this program, so it reads what that forward kept), or
      a cat's or stack's gradient cut into pieces (``fn`` an ``ops.movement.Split``);
    - ``"accumulate"``: add a gradient buffer into ``target.grad`` as backward does;
    - ``"store"``: an in-place write ``inputs[0][target] = inputs[1]`` (``target`` a
      basic index, or ``None`` for the whole buffer), as ``x += y``, ``x[i] = v`` or
      ``x.clamp_()`` write into the array the eager run changed;
    - ``"effect"``: a call with effects on state outside the program: a ``zero_grad()``,
      an optimizer's ``foreach_update(i)`` (param group ``i``'s whole update, flat),
      ``_advance()`` (its step counts, before its update's ops), or the ``step()`` of an
      optimizer that gives no update as ops; ``writes`` holds the buffers whose memory it
      changes in place (the parameters an update writes).

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
    writes: list[Buffer] = field(default_factory=list)  # effect: the buffers it writes in place

    @property
    def args(self) -> Any:
        """The op's non-array arguments (``None`` for most)."""
        return getattr(self.fn, "args", None) if self.kind in ("call", "backward") else None

    def written(self) -> list[Buffer]:
        """The buffers whose memory this line changes in place: a store's target, an
        effect's ``writes``."""
        if self.kind == "store":
            return [self.inputs[0]]
        return self.writes if self.kind == "effect" else []

    def __repr__(self) -> str:
        ins = ", ".join(b.name if isinstance(b, Buffer) else repr(b) for b in self.inputs)
        outs = ", ".join(b.name if b is not None else "_" for b in self.outputs)
        return f"<{self.kind} {outs} = {self.op}({ins})>"
