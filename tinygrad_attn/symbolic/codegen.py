"""Python source from a program's op records: the text that prints is the text that runs.

One line per record, a comment with the shape and dtype it makes::

    def program(args):
        # forward
        x = args[0]._data  # (2, 8) float32
        weight = params.weight._data  # (8, 4) float32
        matmul = matmul_op(x, weight)  # (2, 4) float32
        ...

Each op's callable is its forward bound to the device's array namespace (one shared
callable for ops without arguments, one per record for ops with arguments, which are
shown in the comment). Parameters are read from ``params.<name>`` at each replay, so an
optimizer's update in between is seen; constants live in ``consts``.
"""

from __future__ import annotations

import functools
import math
import operator
import re
import sys
import types
from typing import TYPE_CHECKING, Any

import numpy as np

from ..engine.backward import SliceGradient, accumulate_grad
from ..engine.composite import FusedFunction
from ..engine.function import _NUMPY_SCALARS, _as_ndarray, forward_of
from ..engine.switches import _State
from ..ops import elementwise as _elementwise
from ..ops.linalg import Matmul
from ..ops.movement import Permute, Split
from ..ops.reduce import Sum
from ..runtime import backend as _backend
from ..tensors._tensor import Tensor
from . import passes
from .records import Buffer

if TYPE_CHECKING:
    from .program import Program


def accumulate(t: Tensor, g: Any) -> None:
    """``t.grad += g`` by the engine's one rule (``engine.backward.accumulate_grad``): a
    ``.grad`` of its own, never the program's value or constant that the next replay reads."""
    if t._requires_grad:
        accumulate_grad(t, g)


def accumulate_owned(t: Tensor, g: Any) -> None:
    """``accumulate`` of a gradient whose memory the program made and reads no more (its name
    is deleted after this line): handed to ``t.grad`` as it is where nothing else holds it,
    instead of copied. What else could hold it (an op's saved values) shows in its reference
    count: then, or for a view, a read-only or non-contiguous array, it is copied as before."""
    if not t._requires_grad:
        return
    # (no name may hold g.flags here: the flags object holds the array, one reference more)
    sole = (
        g.__class__ is np.ndarray
        and g.base is None
        and g.flags.writeable
        and g.flags.c_contiguous
        and sys.getrefcount(g) <= _LOCAL_REFS
    )
    if sole and t._grad is None and not _State.post_accumulate_hooks:
        t._grad = Tensor._wrap(g, t._dev)  # (accumulate_grad's first case, a replay's usual one: inline)
        return
    accumulate_grad(t, g, sole)


def _local_refs() -> int:
    """The reference count ``accumulate_owned`` sees of an array only a caller's local name holds."""

    def callee(t: Any, g: Any) -> int:
        return sys.getrefcount(g)

    x = np.empty(1)
    return callee(None, x)


_LOCAL_REFS = _local_refs()


def set_grad(t: Tensor, g: Any) -> None:
    """``t.grad = g`` as Python assigned it in the traced function (``None``: cleared)."""
    t.grad = None if g is None else Tensor._wrap(_writable(g, t), t._dev)


def _writable(g: Any, t: Tensor) -> Any:
    """``g``, or a copy where it is read-only (a constant of the program): a ``.grad`` the
    user may change in place (``p.grad.mul_(2)``) must not be one the next replay reads."""
    flags = getattr(g, "flags", None)
    return t._dev.copy(g) if flags is not None and not flags.writeable else g


def _fused_backward(fn: Any, ns: Any) -> Any:
    """A fused op's array backward as ``(g, inputs, out) -> gradients``."""
    backward = fn.backward_arrays
    scalars = _NUMPY_SCALARS

    def run(g: Any, inputs: tuple, out: Any) -> list[Any]:
        gs = list(backward(g, ns, list(inputs), out))
        for i, gi in enumerate(gs):
            if gi.__class__ is SliceGradient:
                gs[i] = gi.dense()
            elif gi.__class__ in scalars:
                gs[i] = _as_ndarray(gi)
        return gs

    return run


def _args_str(args: Any, limit: int = 70) -> str:
    s = repr(args)
    if "array(" in s or len(s) > limit:  # index arrays and long tuples: their shape is enough
        if hasattr(args, "shape"):
            return f"<array {tuple(args.shape)}>"
        if isinstance(args, tuple):
            return "(" + ", ".join(_args_str(a, 24) for a in args) + ")"
        return s[: limit - 3] + "..."
    return s


def _callable_name(op: str, args: Any) -> str:
    """``permute_1_0`` for a permute by (1, 0); ``op`` alone without arguments; ``sum_`` and a
    counter where the arguments do not read well (arrays, long tuples)."""
    if args is None or callable(args):  # (an array function: the op is named after it)
        return op
    s = repr(args)
    if "array(" in s or len(s) > 32:
        return op + "_"
    s = re.sub(r"[^0-9A-Za-z]+", "_", s.replace("-", "m").replace("None", "all")).strip("_")
    return f"{op}_{s}" if s else op


def _key_str(key: Any, global_name: Any) -> str:
    """An index as the program writes it: ``...`` for all, ``1, 0:2`` for ints and slices,
    a named global for anything else (index arrays, masks)."""
    if key is None:
        return "..."
    parts = key if isinstance(key, tuple) else (key,)
    out = []
    for k in parts:
        if isinstance(k, bool) or not isinstance(k, (int, slice)) or (isinstance(k, slice) and not all(
                v is None or isinstance(v, int) for v in (k.start, k.stop, k.step))):  # fmt: skip
            return global_name("key", key)
        if isinstance(k, int):
            out.append(repr(k))
        else:
            s = ("" if k.start is None else repr(k.start)) + ":" + ("" if k.stop is None else repr(k.stop))
            out.append(s + ("" if k.step is None else f":{k.step}"))
    return ", ".join(out) + ("," if len(out) == 1 and isinstance(key, tuple) else "") if out else "()"


#: The kinds of buffer whose memory the program allocates itself (see ``records.Buffer``).
_OWNED = frozenset({"value", "init"})


def _fused_lines(prog: Program, released: list[list[Buffer]]) -> tuple[dict, set, list[list[Buffer]]]:
    """The fused groups the replay runs (``prog.kernels``) as lines: ``{id(last record): (kernel,
    callable)}``, the ids of the records they stand for (not written), and ``released`` with the
    inner values gone (never made) and what a group reads kept until its line."""
    fused: dict[int, Any] = {}
    skipped: set[int] = set()
    if not getattr(prog, "kernels", None):
        return fused, skipped, released
    at = {id(op): i for i, op in enumerate(prog.ops)}
    inner: set[int] = set()
    moved = [list(r) for r in released]
    for k, run in prog.kernels:
        first, last = min(at[id(r)] for r in k.records), at[id(k.records[-1])]  # (records: a tree, not in order)
        fused[id(k.records[-1])] = (k, run)
        for op in k.records[:-1]:
            skipped.add(id(op))
            inner.add(id(op.outputs[0]))
        # what the group reads lives until its line (another reader between may have been its last)
        read = {b.alias for b in k.inputs}
        for i in range(first, last):
            keep = [b for b in moved[i] if b.alias in read or id(b) in inner]
            if keep:
                moved[last].extend(keep)
                moved[i] = [b for b in moved[i] if b.alias not in read and id(b) not in inner]
    return fused, skipped, [[b for b in r if id(b) not in inner] for r in moved]


class _Names:
    """The globals a program's source runs with and the names it gives them: each value once,
    under the first name not taken by a buffer or an earlier global."""

    def __init__(self, prog: Program) -> None:
        self.params = types.SimpleNamespace()
        self.consts = types.SimpleNamespace()
        self.env: dict[str, Any] = {
            "accumulate": accumulate, "accumulate_owned": accumulate_owned, "set_grad": set_grad,
            "params": self.params, "consts": self.consts,
        }  # fmt: skip
        self.taken = {b.name for op in prog.ops for b in op.outputs if b is not None} | set(self.env)
        self.shared: dict[Any, str] = {}  # (op, arguments, namespace) -> the callable's name
        self.counts: dict[str, int] = {}
        self.param_attr: dict[int, str] = {}  # id(tensor) -> its name under params
        self.numbers: dict[tuple, str] = {}  # (value, dtype, device) -> the named constant holding it
        self.tried: dict[str, int] = {}  # base -> the number of its latest name (the names before it are taken)
        for op in prog.ops:  # parameters by their own names, also where a line names one before its load
            if op.kind == "load" and op.outputs[0].kind == "param" and id(op.outputs[0].tensor) not in self.param_attr:
                b = op.outputs[0]
                self.param_attr[id(b.tensor)] = b.name
                setattr(self.params, b.name, b.tensor)

    def global_name(self, base: str, value: Any) -> str:
        # base, base_2, base_3...: the first name not taken (from the last one given, not from
        # the start again: a program with a hundred constants asked a hundred times)
        n = self.tried.get(base, 1)
        name = base if n == 1 else f"{base}_{n}"
        while name in self.taken:
            n += 1
            name = f"{base}_{n}"
        self.tried[base] = n
        self.taken.add(name)
        self.env[name] = value
        return name

    def operand(self, x: Any) -> str:
        if x.__class__ is Buffer:
            return x.name
        if x is None:  # (an absent operand: a linear's bias)
            return "None"
        # (a Python float only: NumPy 2 writes np.float64, a float subclass, as ``np.float64(0.5)``)
        if isinstance(x, (bool, int)) or (x.__class__ is float and math.isfinite(x)):
            return repr(x)
        # A NumPy scalar (the device's way of holding a number), an infinity: a named
        # constant whose name shows the value (c_0_5, c_neg_inf), one per value and dtype
        # however many lines use it (a scale in a forward and in its backward).
        try:
            shown = repr(float(x)).replace("-", "neg_").replace(".", "_").replace("+", "")  # (1e+38: c_1e38)
        except (TypeError, ValueError):
            shown = ""
        if not shown:
            return self.global_name("c", x)
        key = (shown, str(getattr(x, "dtype", type(x))), str(getattr(x, "device", "")))
        name = self.numbers.get(key)
        if name is None:
            name = self.numbers[key] = self.global_name(f"c_{shown}", x)
        return name

    def tensor_of(self, target: Any) -> str:
        """``args[0]`` for an argument's position, ``params.<name>`` for a tensor."""
        if isinstance(target, int):
            return f"args[{target}]"
        attr = self.param_attr.get(id(target))
        if attr is None:
            attr = self.param_attr[id(target)] = self.global_name("grad_target", None)
            setattr(self.params, attr, target)
            del self.env[attr]
        return f"params.{attr}"


def _load_line(names: _Names, op: Any) -> str:
    """A value the program reads at each replay: an argument, a parameter, a ``.grad``, a number or
    state read then, a constant (a copy of it where the program changes it in place)."""
    b = op.outputs[0]
    if b.kind == "arg":
        return f"{b.name} = args[{op.inputs[0]}]._data"
    if b.kind == "param":
        attr = names.param_attr.get(id(b.tensor))
        if attr is None:
            attr = names.param_attr[id(b.tensor)] = b.name
            setattr(names.params, attr, b.tensor)
        return f"{b.name} = params.{attr}._data"
    if b.kind == "grad":  # .grad after an accumulation, read by fn (an update by hand)
        return f"{b.name} = {names.tensor_of(b.index if b.tensor is None else b.tensor)}.grad._data"
    if b.kind in ("number", "state"):  # read at this point of each replay (a learning rate, Adam's m)
        return f"{b.name} = {names.global_name('read_' + b.name, b.array)}()"
    if b.kind == "init":  # changed in place by the program: each replay starts from a copy
        setattr(names.consts, b.name, b.array)
        copy = names.global_name("copy", b.dev.copy)
        return f"{b.name} = {copy}(consts.{b.name})"
    setattr(names.consts, b.name, b.array)
    return f"{b.name} = consts.{b.name}"


def _call_line(names: _Names, op: Any, comment: str) -> tuple[str, str]:
    """An op's forward on arrays, through its callable: a fused op's own (it keeps what its
    backward reads), else one per op and arguments, named after both (permute_1_0, sum_0_1_False)."""
    b = op.outputs[0]
    ns = b.dev.ops
    if isinstance(op.fn, FusedFunction):
        names.counts[op.op] = names.counts.get(op.op, 0) + 1
        f = names.global_name(f"{op.op}{names.counts[op.op]}", functools.partial(op.fn.forward, ns))
        if op.fn.args is not None:
            comment += f"  {op.op} {_args_str(op.fn.args)}"
    else:
        try:
            args = op.fn.args
            key = (type(op.fn), id(ns)) if args is None else (type(op.fn), passes._freeze(args), id(ns))
        except TypeError:  # an unhashable argument: a callable of its own
            key = object()
        low = any(x.__class__ is Buffer and getattr(x.dtype, "name", None) == "bfloat16" for x in op.inputs)
        fast = None if low else _direct(op, ns)
        if fast is not None:
            key = (key, "direct")
        if low:  # (computed in float32 and rounded, as Function.apply computes it: COMPUTED_IN_FLOAT32)
            key = (key, "bfloat16")
        f = names.shared.get(key)
        if f is None:
            forward = functools.partial(forward_of, op.fn, ns) if low else functools.partial(op.fn.forward, ns)
            f = names.shared[key] = names.global_name(_callable_name(op.op, op.fn.args), fast or forward)
    operands = ", ".join([x.name if x.__class__ is Buffer else names.operand(x) for x in op.inputs])
    return f"{b.name} = {f}({operands})", comment


# Ops whose forward is one Python operator on its operands, whatever the namespace.
_OPERATORS = {_elementwise.Add: operator.add, _elementwise.Sub: operator.sub, _elementwise.Mul: operator.mul,
              _elementwise.Div: operator.truediv, _elementwise.Neg: operator.neg}  # fmt: skip


def _direct(op: Any, ns: Any) -> Any:
    """The callable that computes what ``op.fn.forward(ns, ...)`` computes for this record's
    operands with no Python frame of its own, where there is one: the operator of ``a + b``,
    an ndarray's ``transpose`` and ``add.reduce`` for a sum with NumPy's
    namespace, ``matmul`` itself where the traced shapes take its plain branch. A replay of a small step is mostly such calls,
    each otherwise three Python calls deep; None for any other op (its forward is called: a reshape's, whose
    strides along dims of size 1 are PyTorch's, not the ndarray's own)."""
    cls = type(op.fn)
    f = _OPERATORS.get(cls)  # (the class itself: a subclass may have a forward of its own)
    if f is not None:
        return f
    if cls.forward is Permute.forward and ns.permute_dims is _backend._np_permute_dims:
        return operator.methodcaller("transpose", op.fn.args)
    if cls.forward is Sum.forward and ns.sum is _backend._NUMPY_FAST["sum"]:
        axis, keepdims = op.fn.args  # (the namespace's sum is add.reduce with these)
        return functools.partial(np.add.reduce, axis=axis, dtype=None, out=None, keepdims=keepdims)
    if cls is Matmul and ns.matmul is np.matmul and len(op.inputs) == 2:
        a, b = (x.shape if x.__class__ is Buffer else None for x in op.inputs)
        if a is not None and b is not None and not (len(b) == 2 and len(a) > 2 and not (len(a) == 3 and a[0] == 1)):
            return np.matmul  # (Matmul.forward's other branch: a batch times one matrix, as one product)
    return None


def _backward_line(names: _Names, op: Any) -> str:
    """A fused op's backward on arrays (a cat's or stack's: the gradient in pieces)."""
    ns = op.inputs[0].dev.ops
    targets = ", ".join(b.name if b is not None else "_" for b in op.outputs)
    if op.fn.__class__ is Split:
        f = names.global_name(op.op, functools.partial(op.fn.pieces, ns))
        return f"{targets}, = {f}({op.inputs[0].name})"
    f = names.global_name(op.op, _fused_backward(op.fn, ns))
    g, ins, out = op.inputs[0], op.inputs[1:-1], op.inputs[-1]
    tup = ", ".join(names.operand(x) for x in ins) + ("," if len(ins) == 1 else "")
    return f"{targets}, = {f}({g.name}, ({tup}), {out.name})"


def _has_flat_form(opt: Any) -> bool:
    from ..optim.optimizer import Optimizer  # noqa: PLC0415 - optim imports the package first

    return type(opt)._flat_update is not Optimizer._flat_update


def _effect_line(names: _Names, op: Any, comment: str) -> tuple[str, str]:
    """A call for its effect on an object the program holds (an optimizer's step)."""
    obj = op.label if names.env.get(op.label) is op.target else names.global_name(op.label, op.target)
    line = f"{obj}.{op.op}({', '.join(map(repr, op.call_args))})"
    if op.op == "step" and hasattr(op.target, "param_groups"):
        n = sum(len(g["params"]) for g in op.target.param_groups)
        comment = f"  # updates {n} parameters in place"
    elif op.op == "foreach_update":
        group = op.target.param_groups[op.call_args[0]]
        flat = ", flat" if group.get("foreach") is not False and _has_flat_form(op.target) else ""
        comment = f"  # param group {op.call_args[0]}: updates its {len(group['params'])} parameters in place{flat}"
    elif op.op == "_advance":
        comment = "  # step counters and state, before the update below"
    return line, comment


def _line(names: _Names, op: Any, fused: dict, owned: bool = False) -> tuple[str, str]:
    """One record as a line of the program and its comment (the shape and dtype it makes)."""
    outs = op.outputs
    if len(outs) == 1 and outs[0] is not None:  # (most lines: one result)
        comment = "  # " + outs[0].type_str
    else:
        outs = [b for b in outs if b is not None]
        comment = "  # " + ", ".join(b.type_str for b in outs) if outs else ""
    if op.kind == "load":
        return _load_line(names, op), comment
    if op.kind == "call" and id(op) in fused:
        k, run = fused[id(op)]
        f = names.global_name(k.name, run)
        line = f"{op.outputs[0].name} = {f}({', '.join(b.name for b in k.inputs)})"
        return line, comment + "  fused: " + ", ".join(r.op for r in k.records)
    if op.kind == "call":
        return _call_line(names, op, comment)
    if op.kind == "backward":
        return _backward_line(names, op), comment
    if op.kind == "accumulate":
        # (.grad gets an array of its own: accumulate copies what the program holds, unless the
        # program made that memory and its last reader is this line: ``owned``)
        return f"{'accumulate_owned' if owned else 'accumulate'}({names.tensor_of(op.target)}, {op.inputs[0].name})", (
            comment
        )
    if op.kind == "setgrad":
        return f"set_grad({names.tensor_of(op.target)}, {op.inputs[0].name if op.inputs else 'None'})", comment
    if op.kind == "store":
        dst, v = op.inputs
        return f"{dst.name}[{_key_str(op.target, names.global_name)}] = {names.operand(v)}", (
            f"  # in place: {dst.type_str}"
        )
    if op.kind == "effect":
        return _effect_line(names, op, comment)
    raise AssertionError(op.kind)  # pragma: no cover - every kind is listed above


def _owners(prog: Program) -> dict[int, bool]:
    """``Buffer.alias`` -> whether every buffer sharing that memory is the program's own."""
    owners: dict[int, bool] = {}
    for op in prog.ops:
        for b in (*op.outputs, *op.inputs):
            if b is not None and b.__class__ is Buffer:
                owners[b.alias] = owners.get(b.alias, True) and b.kind in _OWNED
    return owners


def generate(prog: Program) -> tuple[str, dict[str, Any]]:
    """The source of ``def program(args)`` and the globals it runs with."""
    names = _Names(prog)
    lines = ["def program(args):"]
    section = None
    returned = {id(b) for b in prog.outputs}
    # A name is deleted where its memory goes back: after the last reader of every buffer
    # sharing that memory (a view's name goes with what it shows; the names of parameters,
    # arguments and constants hold memory the program does not own, and are not deleted).
    released = passes.memory_released(prog.ops, prog.dead_after)
    fused, skipped, released = _fused_lines(prog, released)
    owners = _owners(prog)
    for op, dead in zip(prog.ops, released):
        if id(op) in skipped:  # (an inner op of a fused group: its group's line computes it)
            continue
        if op.section != section:
            section = op.section
            lines.append(f"    # {section}")
        g = op.inputs[0] if op.kind == "accumulate" else None
        owned = g is not None and g.kind in _OWNED and owners.get(g.alias) and any(b.alias == g.alias for b in dead)
        line, comment = _line(names, op, fused, bool(owned))
        lines.append(f"    {line}{comment}")
        gone = [b.name for b in dead if b.kind in _OWNED and id(b) not in returned]
        if gone:
            lines.append(f"    del {', '.join(gone)}")
    ret = ", ".join(b.name for b in prog.outputs)
    lines.append(f"    return ({ret}{',' if len(prog.outputs) == 1 else ''})")
    return "\n".join(lines) + "\n", names.env
