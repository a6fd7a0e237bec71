"""PyTorch's older top-level spellings of ``torch.linalg``'s functions, kept by PyTorch for old
programs: ``torch.cholesky``, ``torch.pinverse``, ``torch.chain_matmul``, ``torch.frobenius_norm``,
``torch.nuclear_norm``, ``torch.norm_except_dim``, each a thin adapter of the one
implementation in :mod:`tinygrad_attn.linalg` (with PyTorch's deprecation warning where it
gives one); and those PyTorch has removed (``torch.matrix_rank``, ``torch.solve``,
``torch.lstsq``, ``torch.symeig``, ``torch.eig``), which raise its ``RuntimeError`` naming the replacement.

>>> import tinygrad_attn as tga
>>> float(tga.pinverse(tga.eye(2) * 2)[0, 0])
0.5
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NoReturn

from ..engine.arguments import ABSENT
from ..engine.declare import public
from ..engine.forward_grads import refuse_tangents
from ..engine.warn import warn as _user_warn
from ..functional.checks import tensor_arg as _tensor
from ..tensors._tensor import InvalidArgumentError, Tensor
from ..tensors.mutation.out_argument import written_to_out
from ..tensors.return_types import structseq
from ..tensors.shape import dims
from . import cholesky as _cholesky
from . import matrix_norm, multi_dot, pinv, vector_norm
from . import slogdet as _linalg_slogdet


def _deprecated(old: str, new: str) -> None:
    _user_warn(f"torch.{old} is deprecated in favor of {new} and will be removed in a future PyTorch release.",
                  UserWarning)  # fmt: skip


#: ``torch.slogdet``'s result, named apart from ``linalg.slogdet``'s (``torch.return_types.slogdet``)
Slogdet = structseq("slogdet", ("sign", "logabsdet"))


@public(name="slogdet", method=True)
def slogdet_legacy(input: Tensor) -> Slogdet:  # noqa: A002 - PyTorch's names
    """``torch.slogdet(A)`` and ``A.slogdet()``: ``tga.linalg.slogdet``, whose result PyTorch names
    ``linalg_slogdet`` there and ``slogdet`` here."""
    return Slogdet(*_linalg_slogdet(input))


@public(name="cholesky", method=True)
def cholesky_legacy(input: Tensor, upper: bool = False) -> Tensor:  # noqa: A002 - PyTorch's names
    """``torch.cholesky(A, upper=False)`` and ``A.cholesky(upper)``: ``tga.linalg.cholesky``
    (``upper`` positional too); an empty input of any shape is returned as an empty copy, as PyTorch's
    (``linalg.cholesky`` checks the shape first)."""
    refuse_tangents("cholesky", input)
    _deprecated("cholesky", "torch.linalg.cholesky")
    x = _tensor(input, "cholesky")
    if x.numel() == 0:
        return x.clone()
    return _cholesky(x, upper=upper)


@public(name="pinverse", method=True)
def pinverse(input: Tensor, rcond: float = 1e-15) -> Tensor:  # noqa: A002
    """``torch.pinverse(A, rcond)`` and ``A.pinverse(rcond)``: ``tga.linalg.pinv(A, rtol=rcond)`` (singular values below
    ``rcond`` times the largest are dropped)."""
    return pinv(input, rtol=rcond)


@public
def chain_matmul(*matrices: Tensor, out: Tensor | None = None) -> Tensor:
    """``torch.chain_matmul(A, B, C, ...)``: the product of the matrices, in the cheapest order
    (``tga.linalg.multi_dot``); one matrix is returned as a copy."""
    _deprecated("chain_matmul", "torch.linalg.multi_dot")
    if not matrices:
        raise RuntimeError("chain_matmul(): Expected one or more matrices")
    for at, m in enumerate(matrices):  # (PyTorch parses the tensors before it reads any shape)
        if not isinstance(m, Tensor):
            raise TypeError(
                f"chain_matmul(): expected Tensor as element {at} in argument 0, but got {type(m).__name__}"
            )
    for m in matrices:
        if m.ndim != 2:
            raise RuntimeError(f"chain_matmul(): Tensor dimension is {m.ndim}, "
                               "expected 2 instead.")  # fmt: skip
    r = matrices[0].clone() if len(matrices) == 1 else multi_dot(list(matrices))
    return written_to_out(r, out, "chain_matmul")


@public
def frobenius_norm(input: Tensor, dim: Sequence[int] | int, keepdim: bool = False) -> Tensor:  # noqa: A002
    """``torch.frobenius_norm(x, dim, keepdim=False)``: the 2-norm over ``dim`` (one or two dims)."""
    _deprecated("frobenius_norm", "torch.linalg.vector_norm(A, 2., dim, keepdim)")
    x = _tensor(input, "frobenius_norm")
    d = (dim,) if isinstance(dim, int) else tuple(dim)
    if len(d) > 2:
        raise RuntimeError(f"frobenius_norm: expected at most 2 dims, got {len(d)} ({d})")
    return vector_norm(x, 2.0, d, keepdim)


@public
def nuclear_norm(input: Tensor, dim: int | Sequence[int] | bool = ABSENT, keepdim: bool = False) -> Tensor:  # noqa: A002
    """``torch.nuclear_norm(A, keepdim=False)`` of a matrix, or ``(A, dim, keepdim=False)`` over
    the two ``dim``: the sum of the singular values (``tga.linalg.matrix_norm(A, "nuc")``). ``dim`` is
    left out or given, never ``None`` (PyTorch's ``TypeError``)."""
    _deprecated("nuclear_norm", "torch.linalg.matrix_norm(A, 'nuc', dim, keepdim)")
    x = _tensor(input, "nuclear_norm")
    if dim is None:
        raise TypeError(
            "nuclear_norm(): argument 'dim' must be tuple of ints, not NoneType (leave it out for a matrix)"
        )
    if isinstance(dim, bool):  # (the first spelling: the keepdim flag in second place)
        dim, keepdim = ABSENT, dim
    elif isinstance(dim, int):  # (PyTorch's int[2] reads one int as the pair (dim, dim))
        dim = (int(dim), int(dim))
    if dim is ABSENT:
        if x.ndim != 2:
            raise RuntimeError(f"nuclear_norm: expected a 2D tensor, but got a {x.ndim}D tensor (pass dim)")
        dim = (0, 1)
    dim = dims.as_int(dim)
    # (PyTorch's int[2] reads one int as the pair of it: nuclear_norm(A, 0) is matrix_norm's error of (0, 0))
    return matrix_norm(x, "nuc", (dim, dim) if isinstance(dim, int) else tuple(dim), keepdim)


@public
def norm_except_dim(v: Tensor, pow: int = 2, dim: int = 0) -> Tensor:  # noqa: A002 - PyTorch's name
    """The ``pow``-norm of ``v`` over every dim but ``dim``, kept as size-1 dims (weight
    normalisation's norm); ``dim=-1``: of the whole tensor, a 0-d tensor."""
    x = _tensor(v, "norm_except_dim")
    if dim == -1:
        return vector_norm(x, pow)
    d = dims.one(tuple(x.shape), dim, "norm_except_dim", scalar_ok=False)
    if x.shape[d] == 0:  # (PyTorch's views v as (v.size(dim), -1), which no entries leave ambiguous)
        raise InvalidArgumentError(
            f"norm_except_dim: cannot reshape tensor of 0 elements into shape [0, -1] because the unspecified "
            f"dimension size -1 can be any value and is ambiguous (v of shape {tuple(x.shape)}, dim {dim})"
        )
    others = tuple(i for i in range(x.ndim) if i != d)
    if not others:  # (a vector along dim: each entry's norm, over a new axis of one, as PyTorch's)
        return vector_norm(x.unsqueeze(-1), pow, (-1,), False)
    return vector_norm(x, pow, others, True)


def _removed(name: str, instead: str) -> NoReturn:
    # (whatever the arguments: PyTorch raises this before it reads them, so they are typed Any)
    raise RuntimeError(f"torch.{name} was deprecated in PyTorch 1.9 and is now removed; use {instead} instead")


@public
def matrix_rank(input: Any, tol: Any = None, symmetric: Any = False, *, out: Any = None) -> NoReturn:  # noqa: A002
    _removed("matrix_rank", "torch.linalg.matrix_rank (its 'symmetric' is named 'hermitian' there)")


@public(method=True)
def solve(input: Any, A: Any, *, out: Any = None) -> NoReturn:  # noqa: A002, N803
    _removed("solve", "torch.linalg.solve(A, B) (its arguments are in the other order)")


@public(method=True)
def lstsq(input: Any, A: Any, *, out: Any = None) -> NoReturn:  # noqa: A002, N803
    _removed("lstsq", "torch.linalg.lstsq(A, B).solution (its arguments are in the other order)")


@public(method=True)
def symeig(input: Any, eigenvectors: Any = False, upper: Any = True, *, out: Any = None) -> NoReturn:  # noqa: A002
    _removed("symeig", "torch.linalg.eigvalsh or torch.linalg.eigh (which read the lower triangle by default)")


@public(method=True)
def eig(self: Any, eigenvectors: Any = False, *, e: Any = None, v: Any = None) -> NoReturn:
    _removed("eig", "torch.linalg.eigvals, or torch.linalg.eig for the eigenvectors (both return complex tensors)")
