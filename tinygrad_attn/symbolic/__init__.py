"""Symbolic programs: trace a function once, read it (forward and backward) as Python
source, replay it on new inputs without building a graph.

- :func:`trace` records every op a function makes into a :class:`Program`;
- :func:`compile` caches programs by argument structure, shapes and a guard on every Python
  value the function can reach (see :mod:`.compile`, :mod:`.guard`) and replays them;
- :class:`TraceError`: a traced function read a tensor's value in Python.

In-place ops (``x += y``, ``x[i] = v``, ``clamp_``...) are lines of the program that
write into the same buffer the eager run changed: a replay changes an argument or a
tensor outside ``fn`` as the eager call does, and a tensor ``fn`` makes (``zeros``)
starts each replay from its first values. Updates written by hand under ``no_grad``
(``w -= lr * w.grad``) are ops too, and so is an optimizer's ``step()`` (SGD, Adam, AdamW:
its step count moves in one recorded call, the learning rate a schedule sets is read at
each replay); ``zero_grad()`` is one recorded call, and so is an assignment to ``.grad``
(``p.grad = None``, ``p.grad = p.grad * c``) or a scheduler's ``step()``. Random draws
(dropout, ``rand``, ``randn``) are ops that draw again at each replay. A trace in one
thread leaves every other thread eager.

Modules: ``trace`` (the tracer), ``program`` (Program, op records, buffers), ``codegen``
(the Python source), ``passes`` (constant folding, CSE, dead code, liveness), ``compile``
(the cache), ``guard`` (the fingerprint of what a compiled step reaches), ``fusion``
(elementwise chains as kernels), ``kernels`` (those kernels compiled: numba loops on the CPU,
CuPy kernels on CUDA, called by the replay).
"""

from .compile import Compiled, compile
from .program import Program
from .records import Buffer, OpRecord, TraceError
from .trace import trace

__all__ = ["trace", "compile", "Compiled", "Program", "OpRecord", "Buffer", "TraceError"]
