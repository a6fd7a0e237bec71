"""Symbolic programs: trace a function once, read it (forward and backward) as Python
source, replay it on new inputs without building a graph.

- :func:`trace` records every op a function makes into a :class:`Program`;
- :func:`compile` caches programs by input shapes and replays them;
- :class:`TraceError`: a traced function read a tensor's value in Python.

Modules: ``trace`` (the tracer), ``program`` (Program, op records, buffers), ``codegen``
(the Python source), ``passes`` (constant folding, CSE, dead code, liveness), ``compile``
(the cache), ``fusion`` (elementwise chains as CUDA kernels, for a GPU replay).
"""

from .compile import Compiled, compile
from .program import Buffer, OpRecord, Program, TraceError
from .trace import trace

__all__ = ["trace", "compile", "Compiled", "Program", "OpRecord", "Buffer", "TraceError"]
