"""Complex tensors as PyTorch has them: their parts (``real``, ``imag``: views), the conjugate,
``view_as_real``/``view_as_complex`` (views sharing memory), ``polar`` and ``complex``.

>>> z = tga.polar(tga.ones(2), tga.tensor([0.0, 1.5708]))
>>> tga.view_as_real(z).shape
torch.Size([2, 2])
"""

from __future__ import annotations

from typing import Any

from ...engine.declare import public
from ...functional.checks import tensor_arg
from ...ops.complex import Complex, Conj, ConjPhysical, Imag, Real, ViewAsComplex, ViewAsReal
from .._tensor import Tensor, where
from ..dtypes import UnsupportedDtypeError, torch_dtype


def _complex_only(x: Tensor, op: str) -> None:
    if x.dtype.kind != "c":
        raise RuntimeError(f"{op} is not implemented for tensors with non-complex dtypes (got {x.dtype}).")


@public(name="real")
def real(input: Tensor) -> Tensor:  # noqa: A002
    """The real parts of a complex tensor, a view (writing it changes the tensor); a real tensor itself."""
    x = tensor_arg(input, "real")
    return Real.apply(x) if x.dtype.kind == "c" else x


@public(name="imag")
def imag(input: Tensor) -> Tensor:  # noqa: A002
    """The imaginary parts of a complex tensor, a view; PyTorch's RuntimeError for a real one."""
    x = tensor_arg(input, "imag")
    _complex_only(x, "imag")
    return Imag.apply(x)


@public(name="real", function=False, method=True)
@property
def _real(self: Tensor) -> Tensor:
    return real(self)


@public(name="imag", function=False, method=True)
@property
def _imag(self: Tensor) -> Tensor:
    return imag(self)


@public(method=True, inplace=True, inplace_function=True)
def conj_physical(input: Tensor) -> Tensor:  # noqa: A002
    """The complex conjugate, computed (a real tensor: itself)."""
    x = tensor_arg(input, "conj_physical")
    return ConjPhysical.apply(x) if x.dtype.kind == "c" else x


@public(method=True)
def conj(input: Tensor) -> Tensor:  # noqa: A002
    """The complex conjugate (a real tensor: itself). PyTorch's is a lazy view with a flag;
    here the values are computed, so ``is_conj()`` is False and ``resolve_conj`` does nothing."""
    x = tensor_arg(input, "conj")
    return Conj.apply(x) if x.dtype.kind == "c" else x


@public(method=True)
def resolve_conj(input: Tensor) -> Tensor:  # noqa: A002
    """``input`` itself: conjugates are computed at once here, never left pending."""
    return tensor_arg(input, "resolve_conj")


@public(method=True)
def resolve_neg(input: Tensor) -> Tensor:  # noqa: A002
    """``input`` itself: negations are computed at once here, never left pending."""
    return tensor_arg(input, "resolve_neg")


@public(method=True)
def is_conj(input: Tensor) -> bool:  # noqa: A002
    """False: no tensor here carries a pending conjugation."""
    tensor_arg(input, "is_conj")
    return False


@public(method=True)
def is_neg(input: Tensor) -> bool:  # noqa: A002
    """False: no tensor here carries a pending negation."""
    tensor_arg(input, "is_neg")
    return False


@public(method=True)
def view_as_real(input: Tensor) -> Tensor:  # noqa: A002
    """A complex tensor's (real, imaginary) pairs along a new last axis of size 2, a view of its memory."""
    x = tensor_arg(input, "view_as_real")
    if x.dtype.kind != "c":
        raise RuntimeError(f"view_as_real is only supported for complex tensors (got {x.dtype})")
    return ViewAsReal.apply(x)


@public(method=True)
def view_as_complex(input: Tensor) -> Tensor:  # noqa: A002
    """The pairs along the last axis (of size 2, stride 1) of a float32/float64 tensor as complex
    numbers, a view of its memory."""
    x = tensor_arg(input, "view_as_complex")
    if x.dtype.name not in ("float32", "float64"):
        raise RuntimeError(
            f"view_as_complex is only supported for floating point tensors (float32, float64), but got a tensor "
            f"of scalar type: {x.dtype}"
        )
    if x.ndim == 0 or x.shape[-1] != 2:
        raise RuntimeError(f"Tensor must have a last dimension of size 2 (got shape {tuple(x.shape)})")
    strides = x.stride() if x.numel() else (1,) * x.ndim
    if strides[-1] != 1:
        raise RuntimeError(f"Tensor must have a last dimension with stride 1 (got strides {strides})")
    if any(s % 2 for s in strides[:-1]) or x.storage_offset() % 2:
        raise RuntimeError(
            f"Tensor must have a stride divisible by 2 for all but last dimension (got strides {strides}) and a "
            "storage offset divisible by 2"
        )
    return ViewAsComplex.apply(x)


def _parts(real: Any, imag: Any, op: str) -> tuple[Tensor, Tensor]:
    a, b = tensor_arg(real, op), tensor_arg(imag, op)
    if a.dtype != b.dtype:
        raise RuntimeError(f"{op}: expected both inputs of one dtype, got {a.dtype} and {b.dtype}")
    if a.dtype.name == "float16":  # (PyTorch's complex32 of two float16 tensors is not a dtype here)
        raise UnsupportedDtypeError(f"\"{op}\" not implemented for 'Half' (shapes {tuple(a.shape)} and {tuple(b.shape)}); "
                                    "convert both with .float()")  # fmt: skip
    if a.dtype.name not in ("float32", "float64"):
        raise RuntimeError(f"{op}: expected both inputs to be float or double tensors, got {a.dtype} and {b.dtype}")
    return a, b


@public(name="complex")
def complex_(real: Tensor, imag: Tensor) -> Tensor:
    """``real + i imag`` of two float32 (or float64) tensors, broadcast: complex64 (complex128)."""
    a, b = _parts(real, imag, "complex")
    return Complex.apply(a, b)


@public
def polar(abs: Tensor, angle: Tensor) -> Tensor:  # noqa: A002
    """``abs * (cos(angle) + i sin(angle))`` of two float32 (or float64) tensors, broadcast.

    >>> tga.polar(tga.tensor([2.0]), tga.tensor([0.0]))
    tensor([2.+0.j])
    """
    r, theta = _parts(abs, angle, "polar")
    return Complex.apply(r * theta.cos(), r * theta.sin())


def complex_angle(z: Tensor) -> Tensor:
    """The argument of each complex entry, in ``(-pi, pi]``: ``atan2(imag, real)``, whose gradient
    is PyTorch's (``i z / |z|^2``)."""
    return imag(z).atan2(real(z))


def complex_sgn(z: Tensor) -> Tensor:
    """``z / |z|`` (0 at 0), with a finite gradient at 0 (the zero branch's)."""
    r = z.abs()
    zero = r == 0
    safe = where(zero, r.new_ones(()), r)
    return where(zero, z.new_zeros(()), z / safe.astype(torch_dtype(z.dtype).dtype))
