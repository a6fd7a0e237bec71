"""Fusion of elementwise chains into one GPU kernel each (CuPy ``ElementwiseKernel`` source).

On a GPU every op of a chain such as ``x * 0.5 * (1 + tanh(...))`` is a kernel launch and a
round trip through memory; one kernel for the chain reads its inputs once and writes its
output once. This pass finds the chains in a program and writes each as the three strings
``cupy.ElementwiseKernel(in_params, out_params, operation, name)`` takes.

A group is a tree of elementwise ops whose inner values each have one reader (the next op
of the group) and the full output shape: inputs may broadcast (``ElementwiseKernel``
broadcasts its arguments), inner values never do. Groups of one op are left alone. An op
is elementwise when its class says so: ``elementwise`` is its C expression over its
operands ``{0}``, ``{1}``, ``{2}`` (``{a}``: the op's ``args``), declared beside its forward.

The replay does not call these kernels yet: they are generated and compile-checked with
NVRTC (tests), ready for a CUDA replay path. On the CPU, NumPy has no fused elementwise
loops to call, so the CPU replay keeps one array call per op.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .records import Buffer, OpRecord

if TYPE_CHECKING:
    from .program import Program

C_TYPES = {"float32": "float", "float64": "double", "bool": "bool", "int64": "long long",
           "int32": "int", "int8": "signed char", "uint8": "unsigned char"}  # fmt: skip


@dataclass(eq=False)
class FusedKernel:
    """One fused chain: the records it replaces and the ``ElementwiseKernel`` strings."""

    name: str
    records: list[OpRecord]
    inputs: list[Buffer]
    output: Buffer
    in_params: str = ""
    out_params: str = ""
    operation: str = ""
    lines: list[str] = field(default_factory=list)

    def cuda_source(self) -> str:
        """A standalone CUDA kernel with the same operation over flat arrays (what NVRTC
        compiles to check the operation's C; CuPy wraps the operation in its own indexing)."""
        params = [f"const {C_TYPES[str(b.dtype)]}* __restrict__ {b.name}_p" for b in self.inputs]
        params.append(f"{C_TYPES[str(self.output.dtype)]}* __restrict__ out_p")
        loads = "".join(f"    {C_TYPES[str(b.dtype)]} {b.name} = {b.name}_p[i];\n" for b in self.inputs)
        body = "".join(f"    {ln}\n" for ln in self.lines)
        return (
            f'extern "C" __global__ void {self.name}({", ".join(params)}, long long n) {{\n'
            "    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;\n"
            "    if (i >= n) return;\n"
            f"{loads}    {C_TYPES[str(self.output.dtype)]} out;\n{body}    out_p[i] = out;\n}}\n"
        )


def _fusable(op: OpRecord) -> bool:
    # (an op says what it computes per element: its class's ``elementwise`` C expression)
    if op.kind != "call" or getattr(op.fn, "elementwise", None) is None or str(op.outputs[0].dtype) not in C_TYPES:
        return False
    return all(not isinstance(x, Buffer) or str(x.dtype) in C_TYPES for x in op.inputs)


def _literal(x: Any, ctype: str) -> str:
    v = float(x)
    if math.isinf(v):
        return f"({ctype})({'-' if v < 0 else ''}1.0/0.0)"
    return f"({ctype}){v!r}"


def _number_type(op: OpRecord, i: int, out_type: str) -> str:
    """The C type of a number operand: that of the array it meets in a binary op (as
    ``Function.apply`` casts it: ``x > 0.5`` compares in x's type, not the result's bool),
    else the output's (``where(c, 0.0, x)``)."""
    if len(op.inputs) == 2 and isinstance(other := op.inputs[1 - i], Buffer):
        return C_TYPES[str(other.dtype)]
    return out_type


def elementwise_groups(prog: Program) -> list[FusedKernel]:
    """The program's fusable elementwise chains (two ops or more), as kernels."""
    readers: dict[int, int] = {}
    for op in prog.ops:
        for x in op.inputs:
            if isinstance(x, Buffer):
                readers[id(x)] = readers.get(id(x), 0) + 1
    for b in prog.outputs:
        readers[id(b)] = readers.get(id(b), 0) + 1
    group_of: dict[int, list[OpRecord]] = {}  # id(output buffer) -> the group whose root made it
    groups: list[list[OpRecord]] = []
    at = {id(op): i for i, op in enumerate(prog.ops)}
    stores = [(i, b.alias) for i, op in enumerate(prog.ops) for b in op.written()]

    def written_between(g: list[OpRecord], op: OpRecord) -> bool:
        """Whether an in-place write between g's first op and ``op`` changes memory that g
        or ``op`` reads: one kernel would read it once, after the write."""
        start, end = at[id(g[0])], at[id(op)]
        read = {x.alias for r in g + [op] for x in r.inputs if isinstance(x, Buffer)}
        return any(start < i < end and a in read for i, a in stores)

    for op in prog.ops:
        if not _fusable(op):
            continue
        out = op.outputs[0]
        members = [op]
        for x in op.inputs:
            g = group_of.get(id(x)) if isinstance(x, Buffer) else None
            if g is not None and readers.get(id(x)) == 1 and x.shape == out.shape and not written_between(g, op):
                members = g + members  # the producer's tree becomes part of this one
                groups.remove(g)
                del group_of[id(x)]
        groups.append(members)
        group_of[id(out)] = members
    return [_kernel(g, i) for i, g in enumerate(groups) if len(g) > 1]


def _expression(fn: Any, n: int) -> str:
    """The op's C expression over its ``n`` operands: a ``variadic`` op's binary expression
    folded left, as its forward sums (``(({0} + {1}) + {2})``)."""
    expr = fn.elementwise
    if not getattr(fn, "variadic", False):
        return expr
    folded = "{0}"
    for i in range(1, n):
        folded = "(" + expr.format(folded, "{" + str(i) + "}") + ")"
    return folded


def _kernel(records: list[OpRecord], index: int) -> FusedKernel:
    inner = {id(op.outputs[0]) for op in records[:-1]}
    inputs: list[Buffer] = []
    for op in records:
        for x in op.inputs:
            if isinstance(x, Buffer) and id(x) not in inner and all(x is not b for b in inputs):
                inputs.append(x)
    out = records[-1].outputs[0]
    lines = []
    for op in records:
        b = op.outputs[0]
        ctype = C_TYPES[str(b.dtype)]
        args = [x.name if isinstance(x, Buffer) else _literal(x, _number_type(op, i, ctype)) for i, x in enumerate(op.inputs)]
        expr = _expression(op.fn, len(args))
        expr = expr.format(*args, a=_literal(op.fn.args, ctype) if "{a}" in expr else "")
        target = "out" if op is records[-1] else f"{ctype} {b.name}"
        lines.append(f"{target} = {expr};")
    name = f"fused_{index}_" + "_".join(op.op for op in records)[:48]
    return FusedKernel(
        name=name,
        records=records,
        inputs=inputs,
        output=out,
        in_params=", ".join(f"{b.dtype} {b.name}" for b in inputs),
        out_params=f"{out.dtype} out",
        operation=" ".join(lines),
        lines=lines,
    )
