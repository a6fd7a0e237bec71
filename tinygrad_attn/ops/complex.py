"""Complex numbers: their parts, the conjugate, and the views between a complex tensor and
its (real, imaginary) pairs, each forward beside its gradient.

Gradients follow PyTorch's convention: for a real loss ``L`` of ``z = x + iy`` the gradient
of ``z`` is ``dL/dx + i dL/dy``. Holomorphic ops need nothing of their own for it: the engine
hands their backward the conjugates of what it reads (``Function.conjugate_backward``), so
``g * f'(z)`` becomes PyTorch's ``g * conj(f'(z))``. The ops here are not holomorphic and say
their gradients themselves; the engine takes the real part of a complex gradient that reaches
a real tensor (``engine.backward._in_dtype_of``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..engine import function as _function
from ..engine.function import Function

_REAL_OF = {"complex64": "float32", "complex128": "float64"}
_COMPLEX_OF = {"float32": "complex64", "float64": "complex128"}


def complex_array(ns: Any, re: Any, im: Any) -> Any:
    """``re + i im`` of two real arrays of one dtype, broadcast, without arithmetic
    (``re + 1j * im`` makes a NaN real part where ``im`` is infinite: ``0 * inf``)."""
    xp = ns.device.xp
    shape = np.broadcast_shapes(tuple(re.shape), tuple(im.shape))
    out = xp.empty(shape, dtype=_COMPLEX_OF[np.dtype(re.dtype).name])
    out.real[...] = re
    out.imag[...] = im
    return out


def real_pairs(ns: Any, z: Any) -> Any:
    """The complex array ``z`` as its (real, imaginary) pairs along a new last axis, sharing
    its memory (whatever its strides) where the array module can, else a copy."""
    xp = ns.device.xp
    re = z.real
    try:
        strided = xp.lib.stride_tricks.as_strided
    except AttributeError:
        return xp.stack([re, z.imag], axis=-1)
    return strided(re, (*z.shape, 2), (*re.strides, re.itemsize))


class Real(Function):
    """``z.real``: a view of the real parts. Gradient: ``g`` itself (the engine makes it complex)."""

    __slots__ = ()
    view = True
    reads_values = False
    reads_output = False
    conjugate_backward = False
    name = "real"

    def forward(self, ns, a):
        return a.real

    def backward(self, g, ns, inputs, out):
        return (g,)

    @staticmethod
    def whole_from(base, value):
        """The complex tensor whose real parts are ``value`` (a write through this view)."""
        return Complex.apply(value.astype(value.dtype), Imag.apply(base))


class Imag(Function):
    """``z.imag``: a view of the imaginary parts. Gradient: ``i g``."""

    __slots__ = ()
    view = True
    reads_values = False
    reads_output = False
    conjugate_backward = False
    name = "imag"

    def forward(self, ns, a):
        return a.imag

    def backward(self, g, ns, inputs, out):
        return (g * 1j,)

    @staticmethod
    def whole_from(base, value):
        """The complex tensor whose imaginary parts are ``value`` (a write through this view)."""
        return Complex.apply(Real.apply(base), value)


class Conj(Function):
    """The complex conjugate (a copy: PyTorch's lazy conjugate bit is not kept). Gradient: ``conj(g)``."""

    __slots__ = ()
    reads_values = False
    reads_output = False
    conjugate_backward = False
    name = "conj_physical"

    def forward(self, ns, a):
        return ns.device.xp.conj(a)

    def backward(self, g, ns, inputs, out):
        return (ns.apply(Conj, g),)


class Complex(Function):
    """``complex(re, im)``: ``re + i im`` of two real tensors. Gradients: ``real(g)``, ``imag(g)``."""

    __slots__ = ()
    laid_out_as = slice(0, None)
    keep = ()
    reads_values = False
    reads_output = False
    conjugate_backward = False
    operands = ("real", "imag")
    name = "complex"

    def forward(self, ns, re, im):
        return complex_array(ns, re, im)

    def backward(self, g, ns, inputs, out):
        return ns.apply(Real, g), ns.apply(Imag, g)


class ViewAsReal(Function):
    """``view_as_real(z)``: the (real, imaginary) pairs of ``z`` along a new last axis, a view.
    Gradient: the pairs of ``g`` read back as complex numbers."""

    __slots__ = ()
    view = True
    reads_values = False
    reads_output = False
    conjugate_backward = False
    name = "view_as_real"

    def forward(self, ns, a):
        return real_pairs(ns, a)

    def backward(self, g, ns, inputs, out):
        return (ns.apply(ViewAsComplex, g),)

    @staticmethod
    def whole_from(base, value):
        return ViewAsComplex.apply(value.contiguous())


class ViewAsComplex(Function):
    """``view_as_complex(x)``: the pairs of ``x``'s last axis (of size 2) as complex numbers, a
    view where the layout allows. Gradient: ``view_as_real(g)``."""

    __slots__ = ()
    view = True
    reads_values = False
    reads_output = False
    conjugate_backward = False
    name = "view_as_complex"

    def forward(self, ns, a):
        cdt = _COMPLEX_OF[np.dtype(a.dtype).name]
        if a.__class__ is np.ndarray or hasattr(a, "view"):
            try:
                return a.view(cdt)[..., 0]
            except (ValueError, TypeError):  # (a layout the array module cannot reinterpret: a copy)
                pass
        return complex_array(ns, a[..., 0], a[..., 1])

    def backward(self, g, ns, inputs, out):
        return (ns.apply(ViewAsReal, g),)

    @staticmethod
    def whole_from(base, value):
        return ViewAsReal.apply(value)


_function.COMPLEX_PARTS.update(conj=Conj, real=Real, imag=Imag)


#: The normalisation of a transform's adjoint: the inverse transform's, scaled so that the pair is adjoint
_DUAL_NORM = {"backward": "forward", "forward": "backward", "ortho": "ortho"}


class FFTN(Function):
    """``args = (axes, inverse, norm)``: the discrete Fourier transform of a complex array over
    ``axes`` (the inverse one where ``inverse``), NumPy's pocketfft, rounded to the input's dtype.
    Linear: its gradient is the adjoint transform of ``g`` (the inverse transform, normalised
    the other way), PyTorch's under its conjugate convention."""

    __slots__ = ()
    keep = ()
    reads_values = False
    reads_output = False
    conjugate_backward = False
    name = "fft_c2c"

    def forward(self, ns, a):
        axes, inverse, norm = self.args
        xp = ns.device.xp
        if not axes or a.size == 0:
            return a * 1
        f = xp.fft.ifftn if inverse else xp.fft.fftn
        return f(a, axes=axes, norm=norm).astype(a.dtype, copy=False)

    def backward(self, g, ns, inputs, out):
        axes, inverse, norm = self.args
        return (ns.apply(FFTN, g, args=(axes, not inverse, _DUAL_NORM[norm])),)
