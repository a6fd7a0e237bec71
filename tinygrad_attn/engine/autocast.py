"""Which ops an enabled ``torch.autocast("cpu")`` block runs in which dtype: PyTorch's CPU lists.

PyTorch's autocast casts the floating arguments of a few ops on their way in (its
``autocast_mode.cpp``, CPU): the matrix products and convolutions run in the block's lower
precision (bfloat16 by default, or float16), the ops that lose too much there (losses, FFTs,
factorizations, ``prod``) in float32, and ``cat``/``stack``/``index_copy`` in the widest
dtype among their tensors. Every other op runs in the dtype its inputs have. Only floating
tensors other than float64 are cast, and the casts are recorded, so gradients flow back to
the original dtypes. ``@public`` wraps each function named here (:func:`cast_where_autocast`);
``runtime/amp.py``'s ``autocast`` switches the block on and off (:data:`BLOCK`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

#: PyTorch's ``lower_precision_fp`` ops on the CPU: computed in the block's dtype
LOWER = frozenset(
    "conv1d conv2d conv3d bmm mm linalg_vecdot baddbmm addmm addbmm linear matmul conv_tbc conv_transpose1d "
    "conv_transpose2d conv_transpose3d prelu scaled_dot_product_attention".split()
)
#: PyTorch's ``fp32`` ops on the CPU: computed in float32
FLOAT32 = frozenset(
    "avg_pool3d binary_cross_entropy grid_sample polar prod quantile nanquantile stft cdist trace view_as_complex "
    "cholesky cholesky_inverse cholesky_solve inverse lu_solve orgqr ormqr pinverse max_pool3d max_unpool2d "
    "max_unpool3d adaptive_avg_pool3d mse_loss cosine_embedding_loss nll_loss hinge_embedding_loss poisson_nll_loss "
    "smooth_l1_loss cross_entropy l1_loss huber_loss margin_ranking_loss soft_margin_loss triplet_margin_loss "
    "multi_margin_loss ctc_loss kl_div multilabel_margin_loss binary_cross_entropy_with_logits "
    "fft_fft fft_ifft fft_fft2 fft_ifft2 fft_fftn fft_ifftn fft_rfft fft_irfft fft_rfft2 fft_irfft2 fft_rfftn "
    "fft_irfftn fft_hfft fft_ihfft linalg_cond linalg_matrix_rank linalg_solve linalg_cholesky linalg_svdvals "
    "linalg_eigvals linalg_eigvalsh linalg_inv linalg_householder_product linalg_tensorinv linalg_tensorsolve "
    "geqrf qr svd triangular_solve fractional_max_pool2d fractional_max_pool3d adaptive_max_pool3d linalg_qr "
    "linalg_cholesky_ex linalg_svd linalg_eig linalg_eigh linalg_lstsq linalg_inv_ex".split()
)
#: PyTorch's ``promote`` ops on the CPU: computed in the widest floating dtype among their tensors
PROMOTE = frozenset("stack cat index_copy".split())

#: the dtype of the enabled CPU autocast block (a one-element cell), or None outside any
BLOCK: list[Any] = [None]


def _floating_tensors(values: Any) -> list[Any]:
    out = []
    for v in values:
        if isinstance(v, (list, tuple)):
            out.extend(_floating_tensors(v))
        elif getattr(v, "_data", None) is not None and v.dtype.kind == "f" and v.dtype.name != "float64":
            out.append(v)
    return out


def _cast(v: Any, dtype: Any) -> Any:
    if isinstance(v, (list, tuple)) and not hasattr(v, "_fields"):
        return type(v)(_cast(x, dtype) for x in v)
    if getattr(v, "_data", None) is not None and v.dtype.kind == "f" and v.dtype.name != "float64":
        return v if v.dtype == dtype else v.astype(dtype)
    return v


def cast_arguments(name: str, args: tuple, kw: dict) -> tuple[tuple, dict]:
    """``args`` and ``kw`` with their floating tensors (not float64) cast as the enabled block's
    policy for op ``name`` says (its lower dtype, float32, or their widest dtype)."""
    low = BLOCK[0]
    if name in LOWER:
        dtype = low
    elif name in FLOAT32:
        dtype = _float32()
    else:
        floats = _floating_tensors((*args, *kw.values()))
        if not floats:
            return args, kw
        dtype = functools.reduce(_wider, (t.dtype for t in floats))
    return tuple(_cast(a, dtype) for a in args), {k: _cast(v, dtype) for k, v in kw.items()}


def _float32() -> Any:
    return np.dtype(np.float32)


def _wider(a: Any, b: Any) -> Any:
    """The smaller float dtype holding both (of float16, bfloat16, float32: eligible tensors are no float64)."""
    if a == b:
        return a
    if {a.name, b.name} == {"float16", "bfloat16"}:
        return _float32()
    return a if a.itemsize > b.itemsize else b


def cast_where_autocast(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` (the public function ``name``) casting its arguments inside an enabled CPU autocast
    block, where ``name`` is on one of PyTorch's lists; ``fn`` itself otherwise."""
    if name not in LOWER and name not in FLOAT32 and name not in PROMOTE:
        return fn
    if getattr(fn, "autocast_name", None) == name:  # (declared twice, ``@public`` over ``@public``: once)
        return fn

    @functools.wraps(fn)
    def run(*args: Any, **kw: Any) -> Any:
        if BLOCK[0] is not None:
            args, kw = cast_arguments(name, args, kw)
        return fn(*args, **kw)

    run.autocast_name = name  # type: ignore[attr-defined]
    return run
