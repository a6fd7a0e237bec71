"""Dtypes under PyTorch's names: ``tga.float32``, ``tga.long``, ``tga.bool``, ...

They are NumPy dtypes (what ``Tensor.dtype`` returns), so ``x.dtype == tga.float32``
and ``Tensor(..., dtype=tga.int64)`` work with either spelling. This module binds the
names ``bool``, ``int`` and ``float`` and so uses none of Python's builtins of those
names; other modules never import it with ``*``.
"""

from __future__ import annotations

import numpy as np

float16 = np.dtype("float16")
float32 = np.dtype("float32")
float64 = np.dtype("float64")
int8 = np.dtype("int8")
int16 = np.dtype("int16")
int32 = np.dtype("int32")
int64 = np.dtype("int64")
uint8 = np.dtype("uint8")
complex64 = np.dtype("complex64")
complex128 = np.dtype("complex128")
bool = np.dtype(np.bool_)  # noqa: A001 - PyTorch's name

# PyTorch's second names for the same dtypes.
half = float16
float = float32  # noqa: A001
double = float64
short = int16
int = int32  # noqa: A001
long = int64

__all__ = [
    "float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "complex64", "complex128",
    "bool", "half", "float", "double", "short", "int", "long",
]  # fmt: skip
