"""Passes over a program's op records, each small and on its own.

- :func:`transpose_products`: ``(a @ b).T`` is made as ``b.T @ a.T``, in the layout it is read in.
- :func:`fold_constants`: an op whose inputs are all constants runs once, now.
- :func:`eliminate_common` (CSE): the same op on the same buffers is computed once.
- :func:`eliminate_dead`: ops nothing reads (and with no effect) go.
- :func:`liveness`: after which line each buffer is read for the last time, and
  :func:`memory_released`: after which line its memory goes back (the last reader of every
  buffer sharing it): the program ``del``s the names there, so memory goes back as early as
  the eager run gives it back.
- :func:`peak_bytes`: the high-water mark of the buffers the program allocates.
"""

from __future__ import annotations

from typing import Any

from ..engine.composite import FusedFunction
from ..engine.function import forward_of
from .records import Buffer, OpRecord

#: Records with effects outside the program: never removed, never merged.
EFFECTS = frozenset({"accumulate", "effect", "setgrad"})


def optimize(ops: list[OpRecord], outputs: list[Buffer]) -> list[OpRecord]:
    """The passes in order; ``outputs`` is updated where a buffer is replaced."""
    ops = transpose_products(ops, outputs)
    ops = fold_constants(ops)
    ops = compose_permutes(ops, outputs)
    ops = eliminate_common(ops, outputs)
    return eliminate_dead(ops, outputs)


def transpose_products(ops: list[OpRecord], outputs: list[Buffer]) -> list[OpRecord]:
    """``(a @ b).T`` of 2-D operands as ``b.T @ a.T`` where the transpose is the product's only
    reader: a weight's gradient in ``x @ W.mT`` is ``(x.T @ g).T``, a transposed view that
    ``.grad`` then copies element by element (and that a user's gradient would read strided);
    made as ``g.T @ x`` it comes out in the weight's layout, and the transposes of the operands
    are views (``compose_permutes`` then cancels ``x.mT.T``). Not where either result is
    written in place."""
    from ..ops.linalg import Matmul  # noqa: PLC0415
    from ..ops.movement import Permute  # noqa: PLC0415

    written = {b.alias for op in ops for b in op.written()}
    readers: dict[int, int] = {}
    names = set()
    for op in ops:
        for x in op.inputs:
            if x.__class__ is Buffer:
                readers[id(x)] = readers.get(id(x), 0) + 1
                names.add(x.name)
        names.update(b.name for b in op.outputs if b is not None)
    for b in outputs:
        readers[id(b)] = readers.get(id(b), 0) + 2
    products: dict[int, int] = {}  # id(a 2-D product) -> its index in ``out``
    out: list[Any] = []

    def transposed(b: Buffer, like: OpRecord, section: str, scope: Any) -> tuple[OpRecord, Buffer]:
        name, n = f"{b.name}_T", 1
        while name in names:
            n += 1
            name = f"{b.name}_T{n}"
        names.add(name)
        t = Buffer(name, (b.shape[1], b.shape[0]), b.dtype, b.dev, "value", 0)
        t.alias = b.alias  # (a view: its memory is b's)
        return OpRecord("call", like.op, [b], [t], fn=like.fn, section=section, scope=scope), t

    for op in ops:
        if op.kind == "call" and op.fn.__class__ is Matmul and op.outputs[0].alias not in written:
            if len(op.inputs) == 2 and all(x.__class__ is Buffer and len(x.shape) == 2 for x in op.inputs):
                products[id(op.outputs[0])] = len(out)
        elif (op.kind == "call" and isinstance(op.fn, Permute) and tuple(op.fn.args) == (1, 0)
              and id(op.inputs[0]) in products and readers.get(id(op.inputs[0])) == 1
              and op.outputs[0].alias not in written):  # fmt: skip
            j = products.pop(id(op.inputs[0]))
            mm = out[j]
            a, b = mm.inputs
            tb, bt = transposed(b, op, mm.section, mm.scope)
            ta, at = transposed(a, op, mm.section, mm.scope)
            res = op.outputs[0]
            res.nbytes = mm.outputs[0].nbytes  # (its own memory now, no longer a view)
            out[j] = [tb, ta, OpRecord("call", mm.op, [bt, at], [res], fn=mm.fn, section=mm.section, scope=mm.scope)]
            continue
        out.append(op)
    return [r for item in out for r in (item if isinstance(item, list) else (item,))]


def _pure_call(op: OpRecord) -> bool:
    # A fused op's forward keeps what its backward reads (ctx): it must run where it is. A
    # random draw gives new values each time: never merged with another, never folded.
    return op.kind == "call" and not isinstance(op.fn, FusedFunction) and not getattr(op.fn, "random", False)


def fold_constants(ops: list[OpRecord]) -> list[OpRecord]:
    """Run now the ops whose inputs are all constants (a mask's arithmetic, a scale's);
    their outputs become constants of the program. Not one whose result the program
    then changes in place: a constant's array would carry the change to the next replay."""
    written = {b.alias for op in ops for b in op.written()}
    out = []
    for op in ops:
        if op.kind == "call" and _all_const(op.inputs) and _pure_call(op) and op.outputs[0].alias not in written:
            if any(isinstance(x, Buffer) for x in op.inputs):
                b = op.outputs[0]
                vals = [x.array if isinstance(x, Buffer) else x for x in op.inputs]
                b.array = forward_of(op.fn, b.dev.ops, *vals)
                if not hasattr(b.array, "shape"):  # NumPy's 0-d results are scalars
                    b.array = b.dev.asarray(b.array, dtype=b.dtype)
                b.kind = "const"
                out.append(OpRecord("load", "const", [], [b], section=op.section, scope=op.scope))
                continue
        out.append(op)
    return out


def _all_const(inputs: list[Any]) -> bool:
    for x in inputs:
        if x.__class__ is Buffer and x.kind != "const":
            return False
    return True


def _substitute(inputs: list[Any], subst: dict[int, Buffer]) -> None:
    """Replace in ``inputs`` (in place) each buffer that ``subst`` maps to another."""
    for i, x in enumerate(inputs):
        r = subst.get(id(x))  # (ids of buffers only: a number alive beside them has another id)
        if r is not None:
            inputs[i] = r


def compose_permutes(ops: list[OpRecord], outputs: list[Buffer]) -> list[OpRecord]:
    """A permute of a permute is one permute of the first's input, and none at all where
    the two undo each other (``x.mT.mT``, a transpose in a forward and its backward): the
    result is then that input itself. Not where either result is written in place."""
    from ..ops.movement import Permute  # noqa: PLC0415

    written = {b.alias for op in ops for b in op.written()}
    made: dict[int, OpRecord] = {}  # id(buffer) -> the permute that made it
    subst: dict[int, Buffer] = {}
    out = []
    for op in ops:
        if subst:
            _substitute(op.inputs, subst)
        if op.kind == "call" and isinstance(op.fn, Permute) and op.outputs[0].alias not in written:
            prev = made.get(id(op.inputs[0]))
            if prev is not None:
                axes = tuple(prev.fn.args[i] for i in op.fn.args)
                if axes == tuple(range(len(axes))):
                    subst[id(op.outputs[0])] = prev.inputs[0]
                    continue
                inst = object.__new__(type(prev.fn))
                inst.args, inst.ctx = axes, None
                op = OpRecord("call", op.op, [prev.inputs[0]], op.outputs, fn=inst, section=op.section, scope=op.scope)
            made[id(op.outputs[0])] = op
        out.append(op)
    outputs[:] = [subst.get(id(b), b) for b in outputs]
    return out


_SCALARS = frozenset({int, float, bool, str, type(None)})


def _freeze(x: Any) -> Any:
    """A hashable stand-in for an op's arguments (arrays by identity)."""
    cls = x.__class__
    if cls in _SCALARS:  # (most arguments: an axis, a flag; checked first, as this runs per op)
        return (cls.__name__, x)
    if cls is tuple and all(v.__class__ is int for v in x):  # a shape, a permutation, axes: hashable as it is
        return ("ints", x)
    if isinstance(x, (tuple, list)):
        return (type(x).__name__,) + tuple(_freeze(v) for v in x)
    if isinstance(x, slice):
        return ("slice", _freeze(x.start), _freeze(x.stop), _freeze(x.step))
    if hasattr(x, "shape") and hasattr(x, "dtype") and not isinstance(x, (int, float)):
        return ("array", id(x))
    hash(x)
    return (type(x).__name__, x)


def eliminate_common(ops: list[OpRecord], outputs: list[Buffer]) -> list[OpRecord]:
    """Compute once an op applied again to the same inputs with the same arguments
    (``x.mT`` in a forward and in a backward, a bias broadcast twice).

    In-place writes: a read after a write into the memory it reads (the buffer or any
    buffer sharing its memory) is not the read before it, and an op whose result is later
    written into keeps a result of its own."""
    written = {b.alias for op in ops for b in op.written()}
    version: dict[int, int] = {}  # Buffer.alias -> how many writes into that memory so far
    seen: dict[Any, Buffer] = {}
    subst: dict[int, Buffer] = {}
    out = []
    for op in ops:
        if subst:
            _substitute(op.inputs, subst)
        kind = op.kind
        for b in op.written():
            version[b.alias] = version.get(b.alias, 0) + 1
        key = None
        if kind == "call" and _pure_call(op) and op.outputs[0].alias not in written:
            try:
                # A buffer as its id, paired with the count of writes into its memory once there
                # are any (an int or a pair: never equal to a frozen argument, which starts with a name).
                ins = tuple((id(x) if x.alias not in version else (id(x), version[x.alias])) if x.__class__ is Buffer
                            else _freeze(x) for x in op.inputs)  # fmt: skip
                key = (type(op.fn), _freeze(op.fn.args), ins)
            except TypeError:  # an unhashable argument: leave the op alone
                key = None
        elif kind == "load" and op.outputs[0].kind == "const":
            key = ("const", id(op.outputs[0].array))
        if key is not None:
            prev = seen.get(key)
            if prev is not None and prev.dtype == op.outputs[0].dtype and prev.shape == op.outputs[0].shape:
                subst[id(op.outputs[0])] = prev
                continue
            seen[key] = op.outputs[0]
        out.append(op)
    outputs[:] = [subst.get(id(b), b) for b in outputs]
    return out


def eliminate_dead(ops: list[OpRecord], outputs: list[Buffer]) -> list[OpRecord]:
    """Drop ops whose outputs nothing reads and that change nothing outside.

    An in-place write stays when something later reads the memory it writes (through any
    buffer sharing it) or when that memory is outside the program (an argument's, a
    parameter's, an optimizer's state, a ``.grad``): the caller, or an effect such as an
    optimizer's update, sees the change."""
    live = {id(b) for b in outputs}
    live_mem = {b.alias for b in outputs}  # memory read after the point the walk has reached
    outside = {
        b.alias for op in ops for b in op.outputs if b is not None and b.kind in ("arg", "param", "state", "grad")
    }
    kept = []
    for op in reversed(ops):
        kind = op.kind
        if kind == "store":
            keep = op.inputs[0].alias in live_mem or op.inputs[0].alias in outside
        elif kind in EFFECTS:
            keep = True
        else:
            keep = False
            for b in op.outputs:
                if b is not None and id(b) in live:
                    keep = True
                    break
        if keep:
            kept.append(op)
            for x in op.inputs:
                if x.__class__ is Buffer:
                    live.add(id(x))
                    live_mem.add(x.alias)
    return kept[::-1]


def liveness(ops: list[OpRecord], outputs: list[Buffer]) -> list[list[Buffer]]:
    """For each op, the buffers read (or made) there for the last time: they can go after it."""
    last: dict[int, int] = {}
    bufs: dict[int, Buffer] = {}
    for i, op in enumerate(ops):
        for b in op.outputs:
            if b is not None:
                last[id(b)] = i
                bufs[id(b)] = b
        for x in op.inputs:
            if isinstance(x, Buffer):
                last[id(x)] = i
                bufs[id(x)] = x
    for b in outputs:
        last.pop(id(b), None)  # returned: alive to the end
    dead: list[list[Buffer]] = [[] for _ in ops]
    for k, i in last.items():
        dead[i].append(bufs[k])
    return dead


def memory_released(ops: list[OpRecord], dead_after: list[list[Buffer]]) -> list[list[Buffer]]:
    """For each op, the buffers whose memory goes back after it: a buffer's memory stays
    while any buffer sharing it (a view of it, one it views) is alive, so it goes with
    the last of them (a slice kept after its tensor's name is deleted holds the tensor)."""
    last: dict[int, int] = {}  # Buffer.alias -> the index of the op after which its last sharer dies
    dead_ids = set()
    for i, dead in enumerate(dead_after):
        for b in dead:
            last[b.alias] = i
            dead_ids.add(id(b))
    for op in ops:  # a buffer made and never dead is returned: it keeps the memory it shares to the end
        for b in op.outputs:
            if b is not None and id(b) not in dead_ids:
                last[b.alias] = len(ops)
    out: list[list[Buffer]] = [[] for _ in ops]
    for dead in dead_after:
        for b in dead:
            i = last[b.alias]
            if i < len(ops):
                out[i].append(b)
    return out


def peak_bytes(ops: list[OpRecord], dead_after: list[list[Buffer]]) -> int:
    """The most bytes the program's own buffers hold at once (arguments, parameters and
    constants are not counted: they exist before it runs; views count nothing)."""
    cur = peak = 0
    for op, gone in zip(ops, memory_released(ops, dead_after)):
        cur += sum(b.nbytes for b in op.outputs if b is not None and b.kind in ("value", "init"))
        peak = max(peak, cur)
        cur -= sum(b.nbytes for b in gone if b.kind in ("value", "init"))
    return peak
