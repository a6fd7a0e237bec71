"""The fused groups of a program (:mod:`.fusion`) as callables a replay runs.

Each group is a tree of elementwise ops; its ops' ``elementwise`` expressions make one
function per element, compiled as one loop:

- on the CPU, a NumPy ufunc compiled by numba (``numba.vectorize``; the optional ``jit``
  extra, as :mod:`tinygrad_attn.ops.cpu_kernels`): one pass over memory and one call
  instead of a NumPy call and a temporary array per op. Without numba, with
  ``TINYGRAD_ATTN_JIT=0`` or ``cpu_kernels.ENABLED = False``, no group is fused and the
  replay calls each op, as before;
- on CUDA, a ``cupy.ElementwiseKernel`` from the same expressions in C
  (:meth:`.fusion.FusedKernel.elementwise_kernel`).

On the CPU a group is made of cheap ops only (:func:`cheap_on_cpu`: arithmetic, not exp or
tanh, whose NumPy loops are vectorised where a compiled loop calls the C library per
element), every value it reads and makes has one float dtype (a ``where``'s condition may
be bool), and none of its ops is a fused op whose backward reads what its forward kept. The kernel computes in the group's dtype with the constants of the
program in that dtype, so it agrees with the ops called one by one to rounding (exp, tanh
and friends are the C library's, not NumPy's own loops).

On the CPU a softmax's backward over the last axis and the group that reads its gradient
(attention's mask and scale) are one generated loop over the rows
(:func:`softmax_row_kernels`), its row sums in float64 as ``ops.cpu_kernels``'.

The compiled loops are cached by their source: in this process, and on disk beside their
generated source in the cache directory (``TINYGRAD_ATTN_CACHE``, else
``~/.cache/tinygrad_attn/kernels``), so a program traced again in a new process loads them.
"""

from __future__ import annotations

import hashlib
import importlib.util
import math
import os
import re
import sys
from collections.abc import Callable
from typing import Any

import numpy as np

from ..engine.composite import FusedFunction
from ..ops import cpu_kernels
from .fusion import FusedKernel, _expression, elementwise_groups
from .records import Buffer

#: C functions of the ``elementwise`` expressions and their Python names in a compiled loop.
_PY_FUNCTIONS = {"sin": "math.sin", "cos": "math.cos", "tan": "math.tan", "asin": "math.asin",
                 "acos": "math.acos", "atan": "math.atan", "asinh": "math.asinh", "acosh": "math.acosh",
                 "atanh": "math.atanh", "atan2": "math.atan2", "log1p": "math.log1p", "expm1": "math.expm1",
                 "log2": "math.log2", "log10": "math.log10",
                 "exp": "math.exp", "log": "math.log", "sqrt": "math.sqrt", "tanh": "math.tanh",
                 "erf": "math.erf", "fabs": "abs", "pow": "_pow", "max": "_max", "min": "_min"}  # fmt: skip
_FLOATS = ("float32", "float64")
_NUMBA_TYPES = {"float32": "float32", "float64": "float64", "bool": "boolean"}
_TERNARY = re.compile(r"^\((.+?) \? (.+?) : (.+)\)$")
_CALL = re.compile(r"\b([a-z][a-z0-9]*)\(")
_LITERAL = re.compile(r"(?<![\w.{])(\d+\.\d*(?:e[-+]?\d+)?|\d+)(?![\w.}])")

_HELPERS = """
@numba.njit(inline="always")
def _pow(a, b):
    return a**b


@numba.njit(inline="always")
def _max(a, b):  # np.maximum: a NaN on either side wins
    if a != a or a >= b:
        return a
    return b


@numba.njit(inline="always")
def _min(a, b):
    if a != a or a <= b:
        return a
    return b
"""

#: The most arrays a compiled loop reads (a NumPy ufunc takes at most 64 operands); a larger
#: group (a long chain's backward summing a hundred gradients) stays one call per op.
MAX_INPUTS = 32
_loaded: dict[str, Any] = {}  # source -> the compiled ufunc


def enabled() -> bool:
    """Whether the CPU replay fuses (numba installed and the compiled loops switched on)."""
    return cpu_kernels.ENABLED and cpu_kernels.available()


def python_template(fn: Any, n: int, dtype: str) -> str | None:
    """The op's ``elementwise`` C expression as Python a compiled loop runs, its numbers
    in ``dtype`` (``_T(1)``); None where it uses a function the loop cannot call."""
    expr = _expression(fn, n)
    m = _TERNARY.match(expr)
    if m:
        expr = f"(({m.group(2)}) if ({m.group(1)}) else ({m.group(3)}))"
    if "?" in expr:
        return None
    expr = expr.replace("||", "or").replace("&&", "and")
    for name in _CALL.findall(expr):
        if name not in _PY_FUNCTIONS:
            return None
    expr = _CALL.sub(lambda c: _PY_FUNCTIONS[c.group(1)] + "(", expr)
    if dtype in _FLOATS:
        expr = _LITERAL.sub(lambda c: f"_T({c.group(1)})", expr)
    return expr


def cpu_fusable(k: FusedKernel) -> bool:
    """Whether the CPU replay runs ``k`` as one compiled loop (see the module docstring)."""
    dtype = str(k.output.dtype)
    if dtype not in _FLOATS or k.output.dev.name != "cpu" or len(k.inputs) > MAX_INPUTS:
        return False
    for op in k.records:
        if isinstance(op.fn, FusedFunction) or str(op.outputs[0].dtype) != dtype:
            return False
        for x in op.inputs:
            if isinstance(x, Buffer) and str(x.dtype) not in (dtype, "bool"):
                return False
        if python_template(op.fn, len(op.inputs), dtype) is None:
            return False
    return True


def _element_lines(records: list[Any], names: dict[int, str], consts: dict[str, str], dtype: str) -> list[str]:
    """The group's expressions as Python lines over the names ``names`` gives its inputs:
    ``t<j> = _T(...)`` per inner value, the last line the bare expression of the result.
    Numbers become named constants (``consts``: their text -> name)."""
    lines = []
    for j, op in enumerate(records):
        args = []
        for x in op.inputs:
            if isinstance(x, Buffer):
                args.append(names[id(x)])
            else:
                v = float(x)
                text = repr(v) if math.isfinite(v) else ("np.inf" if v > 0 else "-np.inf") if v == v else "np.nan"
                c = consts.setdefault(text, f"c{len(consts)}")
                args.append(c)
        expr = python_template(op.fn, len(op.inputs), dtype)
        a = ""
        if "{a}" in expr:
            c = consts.setdefault(repr(float(op.fn.args)), f"c{len(consts)}")
            a = c
        expr = expr.format(*args, a=a)
        if op is records[-1]:
            lines.append(expr)
        else:
            name = f"t{j}"
            names[id(op.outputs[0])] = name
            lines.append(f"{name} = _T({expr})")
    return lines


def _head(dtype: str, consts: dict[str, str]) -> list[str]:
    head = ["import math", "", "import numba", "import numpy as np", "", f"_T = np.{dtype}"]
    return head + [f"{c} = np.{dtype}({text})" for text, c in consts.items()]


def cpu_source(k: FusedKernel) -> str:
    """The Python source of ``k``'s compiled loop: a module defining ``kernel``."""
    dtype = str(k.output.dtype)
    names = {id(b): f"a{i}" for i, b in enumerate(k.inputs)}
    consts: dict[str, str] = {}
    *inner, last = _element_lines(k.records, names, consts, dtype)
    lines = [f"    {ln}" for ln in inner] + [f"    return _T({last})"]
    sig = f'"{_NUMBA_TYPES[dtype]}(' + ", ".join(_NUMBA_TYPES[str(b.dtype)] for b in k.inputs) + ')"'
    params = ", ".join(f"a{i}" for i in range(len(k.inputs)))
    body = [f"@numba.vectorize([{sig}], nopython=True, cache=True)", f"def kernel({params}):", *lines]
    return "\n".join(_head(dtype, consts)) + "\n" + _HELPERS + "\n\n" + "\n".join(body) + "\n"


def _cache_dir() -> str | None:
    path = os.environ.get("TINYGRAD_ATTN_CACHE") or os.path.join(os.path.expanduser("~"), ".cache", "tinygrad_attn")
    path = os.path.join(path, "kernels")
    try:
        os.makedirs(path, exist_ok=True)
    except OSError:
        return None
    return path if os.access(path, os.W_OK) else None


def compiled(source: str) -> Any:
    """The ufunc ``source`` defines, compiled once per process (and cached on disk)."""
    fn = _loaded.get(source)
    if fn is not None:
        return fn
    digest = hashlib.sha1(source.encode()).hexdigest()[:16]
    where = _cache_dir()
    module: Any = None
    if where is not None:
        path = os.path.join(where, f"fused_{digest}.py")
        try:
            if not os.path.exists(path):
                tmp = f"{path}.{os.getpid()}.tmp"
                with open(tmp, "w") as f:
                    f.write(source)
                os.replace(tmp, path)  # (another process writing the same source writes the same text)
            name = f"tinygrad_attn_fused_{digest}"
            module = sys.modules.get(name)
            if module is None:
                spec = importlib.util.spec_from_file_location(name, path)
                module = importlib.util.module_from_spec(spec)
                sys.modules[name] = module  # (numba's cache finds the module of a kernel by its name)
                spec.loader.exec_module(module)
        except (OSError, RuntimeError):
            module = None
    if module is None:  # (no cache directory: compiled for this process only)
        env: dict[str, Any] = {}
        exec(compile(source.replace("cache=True", "cache=False"), f"<fused {digest}>", "exec"), env)  # noqa: S102
        module = type("M", (), env)
    # (the NumPy ufunc numba built, called directly: through the DUFunc wrapper a call cost
    # 2.2 us instead of 0.44)
    fn = _loaded[source] = getattr(module.kernel, "ufunc", module.kernel)
    return fn


def cpu_callable(k: FusedKernel) -> Callable[..., Any]:
    """``k`` as ``f(*inputs) -> a new array of the group's shape``."""
    ufunc = compiled(cpu_source(k))
    shape, dtype = k.output.shape, k.output.dtype
    empty = np.empty

    def run(*ins: Any) -> Any:
        out = empty(shape, dtype)
        ufunc(*ins, out=out)
        return out

    run.__name__ = k.name
    return run


def cuda_strings(k: FusedKernel) -> tuple[str, str, str]:
    """``k``'s ``ElementwiseKernel`` strings with its values renamed ``v0, v1, ...`` (a buffer
    named ``i`` or ``n`` would meet CuPy's own names)."""
    names = [b.name for b in k.inputs] + [op.outputs[0].name for op in k.records[:-1]]
    rename = {n: f"v{j}" for j, n in enumerate(names)}
    pattern = re.compile(r"\b(" + "|".join(re.escape(n) for n in sorted(rename, key=len, reverse=True)) + r")\b")
    operation = pattern.sub(lambda m: rename[m.group(1)], k.operation)
    in_params = ", ".join(f"{b.dtype} {rename[b.name]}" for b in k.inputs)
    return in_params, k.out_params, operation


def cuda_callable(k: FusedKernel) -> Callable[..., Any]:
    """``k`` as a ``cupy.ElementwiseKernel`` call (built at the first call)."""
    made: list[Any] = []

    def run(*ins: Any) -> Any:
        if not made:
            import cupy  # noqa: PLC0415

            made.append(cupy.ElementwiseKernel(*cuda_strings(k), k.name))
        return made[0](*ins)

    run.__name__ = k.name
    return run


def cheap_on_cpu(op: Any) -> bool:
    """Whether a compiled loop computes ``op`` at least as fast as NumPy: arithmetic,
    comparisons, ``where``, powers. Not exp, tanh, log and the other functions of the C
    library, which a loop calls one element at a time where NumPy's own loops are vectorised
    (``overhead.py``'s chain of ``* + tanh exp`` on (16, 16) float32 replays at 1.35 us per op
    with them in the loops, 0.88 with the arithmetic only, 0.94 unfused)."""
    expr = getattr(op.fn, "elementwise", None) or ""
    return all(name in ("pow", "fabs", "max", "min") for name in _CALL.findall(expr))


# -- a softmax's backward with the elementwise work after it --------------------------------
# Attention masks and scales the gradient of its scores after the softmax's backward: an
# elementwise group of its own, one more pass over the (B, H, T, T) scores. A row kernel
# evaluates the group on each ``(g - sum(g y)) y`` as the backward makes it: one loop over
# the rows instead of two (0.14 ms against 0.22 for attention's (8, 8, 128, 128) float32).
# The forward's scale and mask before the softmax stay a group of their own: joined to the
# softmax's first pass over the rows, they measured slower than the two loops apart.


def _rows_of(b: Buffer, shape: tuple) -> bool:
    """Whether ``b`` broadcasts to ``shape`` along leading axes only (a (T, T) mask against
    (B, H, T, T) scores, a bias): as rows of its last axis, row ``r`` of the result reads its
    row ``r % (its rows)``."""
    s = tuple(b.shape)
    if not s or len(s) > len(shape) or s[-1] != shape[-1]:
        return False
    pad = (1,) * (len(shape) - len(s)) + s
    p = 0
    while p < len(pad) and pad[p] == 1:
        p += 1
    return pad[p:] == tuple(shape[p:])


def _row_loads(inputs: list[Buffer], names: dict[int, str]) -> tuple[list[str], list[str]]:
    """Per input ``a<i>`` (2-D rows): the line that takes its row ``p<i>``, and the line that
    loads its element ``x<i>`` (named in ``names``). (Row views indexed from 0 by the loop: an
    index the compiler cannot prove non-negative gets a wraparound check that keeps the loop
    scalar.)"""
    rows, loads = [], []
    for i, b in enumerate(inputs):
        names[id(b)] = f"x{i}"
        rows.append(f"        p{i} = a{i}[r % a{i}.shape[0]]")
        loads.append(f"            x{i} = p{i}[j]")
    return rows, loads


def _signature(dtype: str, buffers: list[Buffer], extra: int) -> str:
    types_ = [f"{_NUMBA_TYPES[str(b.dtype)]}[:, ::1]" for b in buffers] + [f"{_NUMBA_TYPES[dtype]}[:, ::1]"] * extra
    return '"void(' + ", ".join(types_) + ')"'


_ROW_DOT = """
@numba.njit(nogil=True, error_model="numpy", fastmath={"reassoc"}, inline="never")
def _row_dot(g, y):  # (float64, in an order of the compiler's: vectorised, as cpu_kernels' softmax backward)
    s = 0.0
    for j in range(g.shape[0]):
        s += g[j] * y[j]
    return s
"""


def softmax_backward_source(k: FusedKernel) -> str:
    """The compiled loop of a softmax's backward whose gradient a group reads (``k.records``:
    the backward, then the group): ``kernel(g, y, a..., out)`` writes the group of each
    ``(g - sum(g y)) y`` (in that order, as ``ops.fused.softmax_backward_array``)."""
    dtype = str(k.output.dtype)
    grad = k.records[0].outputs[0]
    names: dict[int, str] = {id(grad): "d"}
    consts: dict[str, str] = {}
    others = k.inputs[2:]
    rows, loads = _row_loads(others, names)
    *inner, value = _element_lines(k.records[1:], names, consts, dtype)
    params = "".join(f", a{i}" for i in range(len(others)))
    body = [
        f"@numba.njit({_signature(dtype, k.inputs, 1)}, nogil=True, error_model='numpy', cache=True)",
        f"def kernel(g, y{params}, out):",
        "    n_rows, n = out.shape",
        "    for r in range(n_rows):",
        *rows,
        "        gr, yr, outr = g[r], y[r], out[r]",
        "        c = _T(_row_dot(gr, yr))",
        "        for j in range(n):",
        "            d = _T((gr[j] - c) * yr[j])",
        *loads,
        *(f"            {ln}" for ln in inner),
        f"            outr[j] = _T({value})",
    ]
    return "\n".join(_head(dtype, consts)) + "\n" + _HELPERS + _ROW_DOT + "\n\n" + "\n".join(body) + "\n"


def _as_rows(a: Any, n: int) -> Any:
    if not a.flags.c_contiguous:  # (a view the trace saw contiguous may not be at every replay)
        a = np.ascontiguousarray(a)
    return a.reshape(-1, n)


def softmax_backward_callable(k: FusedKernel) -> Callable[..., Any]:
    kern = compiled(softmax_backward_source(k))
    shape, dtype, n = k.output.shape, k.output.dtype, k.output.shape[-1]
    empty = np.empty

    def run(*ins: Any) -> Any:
        out = empty(shape, dtype)
        kern(*[_as_rows(a, n) for a in ins], out.reshape(-1, n))
        return out

    run.__name__ = k.name
    return run


def _one_op_group(op: Any, index: int) -> FusedKernel | None:
    """A single fusable op as a group of one (the row kernels take it; alone it stays a call)."""
    from .fusion import _fusable, _kernel  # noqa: PLC0415

    if not (_fusable(op) and cheap_on_cpu(op)):
        return None
    k = _kernel([op], index)
    return k if cpu_fusable(k) else None


def softmax_row_kernels(prog: Any, groups: list[tuple[FusedKernel, Callable[..., Any]]]) -> list[tuple[Any, Any]]:
    """``groups`` with each group that reads a softmax's gradient over the last axis (its only
    reader) joined to that backward as one row kernel; the other groups as they were."""
    from ..ops.fused import SoftmaxAlongDim  # noqa: PLC0415

    ops = prog.ops
    at = {id(op): i for i, op in enumerate(ops)}
    readers: dict[int, int] = {}
    for op in ops:
        for x in op.inputs:
            if x.__class__ is Buffer:
                readers[id(x)] = readers.get(id(x), 0) + 1
    for b in prog.outputs:
        readers[id(b)] = readers.get(id(b), 0) + 2
    reads = {}  # id(buffer) -> the group reading it
    for k, _ in groups:
        for b in k.inputs:
            reads.setdefault(id(b), k)
    stores = [(i, b.alias) for i, op in enumerate(ops) for b in op.written()]
    joined: set[int] = set()
    out: list[tuple[Any, Any]] = []
    for i, op in enumerate(ops):
        if op.kind != "backward" or type(op.fn) is not SoftmaxAlongDim or len(op.outputs) != 1:
            continue
        g, y, d = op.inputs[0], op.inputs[-1], op.outputs[0]
        if (d is None or y.__class__ is not Buffer or g.__class__ is not Buffer or y.dev.name != "cpu"
                or str(y.dtype) not in _FLOATS or not y.shape or not all(y.shape)
                or op.fn.args not in (-1, len(y.shape) - 1) or g.shape != y.shape or g.dtype != y.dtype
                or readers.get(id(d)) != 1):  # fmt: skip
            continue
        k = reads.get(id(d))
        if k is None:  # (one op after it: a group of one)
            nxt = next((r for r in ops[i + 1 : i + 9] if any(x is d for x in r.inputs)), None)
            k = _one_op_group(nxt, len(out)) if nxt is not None else None
        if k is None or k.output.shape != y.shape or k.output.dtype != y.dtype:
            continue
        others = [b for b in k.inputs if b is not d]
        read = {b.alias for b in (g, y, *others)}  # (no write into what it reads before its line)
        end = at[id(k.records[-1])]
        if not all(_rows_of(b, y.shape) for b in others) or any(i < j < end and a in read for j, a in stores):
            continue
        rk = FusedKernel(f"softmax_grad_rows_{len(out)}_" + "_".join(r.op for r in k.records)[:40], [op, *k.records],
                         [g, y, *others], k.output)  # fmt: skip
        try:
            run = softmax_backward_callable(rk)
        except Exception:  # noqa: BLE001 - (a loop numba cannot compile: the ops stay calls, as before)
            continue
        joined.add(id(k))
        out.append((rk, run))
    return [(k, r) for k, r in groups if id(k) not in joined] + out


def replay_kernels(prog: Any) -> list[tuple[FusedKernel, Callable[..., Any]]]:
    """The groups of ``prog`` a replay runs as one call each, with their callables."""
    out = []
    devices = {b.dev.name for op in prog.ops for b in op.outputs if b is not None}
    if "cpu" in devices and enabled():
        for k in elementwise_groups(prog, cheap_on_cpu):
            if cpu_fusable(k):
                out.append((k, cpu_callable(k)))
        out = softmax_row_kernels(prog, out)
    if "cuda" in devices:
        for k in elementwise_groups(prog):
            if k.output.dev.name != "cuda" or not all(str(b.dtype) in _FLOATS + ("bool",) for b in k.inputs):
                continue
            if not any(isinstance(op.fn, FusedFunction) for op in k.records):
                out.append((k, cuda_callable(k)))
    return out
