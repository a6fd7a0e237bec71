"""NumPy's ``bfloat16``, from the optional ``ml_dtypes`` package (``pip install tinygrad_attn[bfloat16]``).

NumPy has no bfloat16; ``ml_dtypes`` (JAX's) gives it one, with casts that round to nearest even
as PyTorch's ``.to(torch.bfloat16)`` does (bit for bit, subnormals and infinities included). Its
ufuncs are slow and its reductions accumulate in bfloat16, so ops never compute in it: they
compute in float32 and round once at their end, as PyTorch's CPU kernels do (``engine/function.py``,
:data:`~tinygrad_attn.engine.function.COMPUTED_IN_FLOAT32`). ``BFLOAT16`` is None without the package.

NumPy files the dtype under kind ``'V'`` (its own kinds have no place for it); the library's
``torch.bfloat16`` answers ``'f'``, and :func:`kind_of` reads an array's dtype so.
"""

from __future__ import annotations

from typing import Any

import numpy as np

try:
    import ml_dtypes as _ml_dtypes
except ImportError:  # (an optional extra)
    _ml_dtypes = None

#: NumPy's bfloat16 dtype, or None where ml_dtypes is not installed
BFLOAT16: np.dtype | None = None if _ml_dtypes is None else np.dtype(_ml_dtypes.bfloat16)

#: what to install for it, named in the refusals
INSTALL_HINT = "pip install tinygrad_attn[bfloat16] (NumPy's bfloat16 comes from the ml_dtypes package)"


def kind_of(dt: Any) -> str:
    """NumPy's kind of ``dt`` (a NumPy dtype or anything with ``kind``), ``'f'`` for bfloat16."""
    if dt is BFLOAT16 and dt is not None:
        return "f"
    return dt.kind
