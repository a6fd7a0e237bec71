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


def cpu_source(k: FusedKernel) -> str:
    """The Python source of ``k``'s compiled loop: a module defining ``kernel``."""
    dtype = str(k.output.dtype)
    inner = {id(op.outputs[0]) for op in k.records[:-1]}
    names = {id(b): f"a{i}" for i, b in enumerate(k.inputs)}
    consts: dict[str, str] = {}
    lines = []
    for j, op in enumerate(k.records):
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
        if op is k.records[-1]:
            lines.append(f"    return _T({expr})")
        else:
            name = f"t{j}"
            names[id(op.outputs[0])] = name
            lines.append(f"    {name} = _T({expr})")
    assert all(i in names for i in inner)
    sig = f'"{_NUMBA_TYPES[dtype]}(' + ", ".join(_NUMBA_TYPES[str(b.dtype)] for b in k.inputs) + ')"'
    head = ["import math", "", "import numba", "import numpy as np", "", f"_T = np.{dtype}"]
    head += [f"{c} = np.{dtype}({text})" for text, c in consts.items()]
    params = ", ".join(f"a{i}" for i in range(len(k.inputs)))
    body = [f"@numba.vectorize([{sig}], nopython=True, cache=True)", f"def kernel({params}):", *lines]
    return "\n".join(head) + "\n" + _HELPERS + "\n\n" + "\n".join(body) + "\n"


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


def replay_kernels(prog: Any) -> list[tuple[FusedKernel, Callable[..., Any]]]:
    """The groups of ``prog`` a replay runs as one call each, with their callables."""
    out = []
    devices = {b.dev.name for op in prog.ops for b in op.outputs if b is not None}
    if "cpu" in devices and enabled():
        for k in elementwise_groups(prog, cheap_on_cpu):
            if cpu_fusable(k):
                out.append((k, cpu_callable(k)))
    if "cuda" in devices:
        for k in elementwise_groups(prog):
            if k.output.dev.name != "cuda" or not all(str(b.dtype) in _FLOATS + ("bool",) for b in k.inputs):
                continue
            if not any(isinstance(op.fn, FusedFunction) for op in k.records):
                out.append((k, cuda_callable(k)))
    return out
