"""PyTorch's ``F.grouped_mm``: the matrix products of a mixture of experts' groups in one call.

A 2-D operand is cut into groups along one axis by ``offs`` (int32, each group's end); a 3-D one
lists its groups along its first axis. The four layouts, as PyTorch's CPU kernel takes them:

- ``(M, K) x (G, K, N) -> (M, N)``: rows ``offs[g-1]:offs[g]`` times ``B[g]`` (tokens per expert);
- ``(G, M, K) x (K, N) -> (M, N)``: ``A[g]`` times columns ``offs[g-1]:offs[g]``;
- ``(M, K) x (K, N) -> (G, M, N)``: the products over each group of the contracted axis (weight
  gradients);
- ``(G, M, K) x (G, K, N) -> (G, M, N)``: a batched product, no ``offs``.

Rows or columns past ``offs[-1]`` are zeros here (PyTorch leaves them uninitialised). Written from
slices and ``matmul``, so gradients reach both operands.

>>> F.grouped_mm(tokens, experts, offs=tga.tensor([3, 8], dtype=tga.int32))  # doctest: +SKIP
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..engine.declare import public
from ..runtime.meta_stand_ins import stand_in
from ..tensors._tensor import Tensor, cat, stack
from ..tensors.dtypes import scalar_type_name
from ..tensors.index.indexing import host_integers


def _check(mat_a: Tensor, mat_b: Tensor, offs: Any, bias: Any, out_dtype: Any) -> None:
    """PyTorch's CPU checks, in its order and words."""
    if mat_a.dtype not in (np.float32, np.float16):
        raise RuntimeError(f"Expected mat_a to be Float32, BFloat16 or Float16 matrix, got {scalar_type_name(mat_a.dtype)}")  # fmt: skip
    if mat_b.dtype != mat_a.dtype:
        raise RuntimeError(f"grouped_mm: expected mat_a and mat_b to have the same dtype, but got: {mat_a.dtype} != "
                           f"{mat_b.dtype}")  # fmt: skip
    if mat_a.ndim not in (2, 3):
        raise RuntimeError("mat_a has to be 2 or 3d")
    if mat_b.ndim not in (2, 3):
        raise RuntimeError("mat_b has to be 2 or 3d")
    if (offs is not None) != (mat_a.ndim == 2 or mat_b.ndim == 2):
        raise RuntimeError("Have to provide offsets if there is a 2d matrix, or no offset if both matrices are 3d")
    if mat_a.shape[-1] != mat_b.shape[-2]:
        raise RuntimeError(f"contraction dimension of mat_a and mat_b must match (shapes {tuple(mat_a.shape)} and "
                           f"{tuple(mat_b.shape)})")  # fmt: skip
    for t in (mat_a, mat_b):  # (the row stride of a contiguous operand: PyTorch's kernels read 16-byte rows)
        if t.shape[-1] * t.dtype.itemsize % 16:
            raise RuntimeError(f"strides should be multiple of 16 bytes (a row of {t.shape[-1]} {t.dtype} entries "
                               f"in an operand of shape {tuple(t.shape)})")  # fmt: skip
    if offs is not None:
        if offs.dtype != np.int32:
            raise RuntimeError("Offsets have to be int32")
        if offs.ndim != 1:
            raise RuntimeError("offs has to be 1D")
    if bias is not None:
        raise RuntimeError("Bias not supported yet")
    if out_dtype is not None and np.dtype(out_dtype) != mat_a.dtype:
        raise RuntimeError("Grouped gemm output dtype must match `mat_a` dtype")


def _meta_kernel(mat_a: Tensor, mat_b: Tensor, **kw: Any) -> None:
    """The dtype check of PyTorch's meta kernel (that of its CUDA one): bfloat16 operands only."""
    if not (str(mat_a.dtype) == str(mat_b.dtype) == "torch.bfloat16"):
        raise RuntimeError(f"Expected inputs of BF16 type but got mat_a.dtype={mat_a.dtype} and "
                           f"mat_b.dtype={mat_b.dtype}.")  # fmt: skip


@public(function=False, functional=True)
@stand_in(check=_meta_kernel)
def grouped_mm(mat_a: Tensor, mat_b: Tensor, *, offs: Tensor | None = None, bias: Tensor | None = None,
               out_dtype: Any = None) -> Tensor:  # fmt: skip
    """The grouped matrix product of ``mat_a`` and ``mat_b`` (see the module's layouts), float32 or float16."""
    _check(mat_a, mat_b, offs, bias, out_dtype)
    if offs is None:  # (G, M, K) x (G, K, N)
        if mat_a.shape[0] != mat_b.shape[0]:
            raise RuntimeError("batched dimension has to match")
        return mat_a @ mat_b
    ends = [int(e) for e in host_integers(offs, "grouped_mm", "offs")]
    starts = [0] + ends[:-1]
    groups = len(ends)
    if mat_a.ndim == 2 and mat_b.ndim == 2:  # (M, K) x (K, N) -> (G, M, N)
        return stack([mat_a[:, s:e] @ mat_b[s:e, :] for s, e in zip(starts, ends)], 0)
    batch = mat_b.shape[0] if mat_b.ndim == 3 else mat_a.shape[0]  # (the 3-D operand lists the groups)
    if groups != batch:
        raise RuntimeError("matrix batch sizes have to match")
    if mat_b.ndim == 3:  # (M, K) x (G, K, N) -> (M, N): rows by group
        m, n = mat_a.shape[0], mat_b.shape[-1]
        parts = [mat_a[s:e] @ mat_b[g] for g, (s, e) in enumerate(zip(starts, ends))]
        rest = m - (ends[-1] if ends else 0)
        if rest > 0:
            parts.append(Tensor.zeros((rest, n), dtype=mat_a.dtype, device=mat_a.device))
        return cat(parts, 0)
    # (G, M, K) x (K, N) -> (M, N): columns by group
    m, n = mat_a.shape[1], mat_b.shape[-1]
    parts = [mat_a[g] @ mat_b[:, s:e] for g, (s, e) in enumerate(zip(starts, ends))]
    rest = n - (ends[-1] if ends else 0)
    if rest > 0:
        parts.append(Tensor.zeros((m, rest), dtype=mat_a.dtype, device=mat_a.device))
    return cat(parts, 1)
