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
    name = "conj"

    def forward(self, ns, a):
        return ns.device.xp.conj(a)

    def backward(self, g, ns, inputs, out):
        return (ns.apply(type(self), g),)


class ConjPhysical(Conj):
    """``conj_physical(z)``: :class:`Conj` under PyTorch's node of that op (``ConjPhysicalBackward0``,
    where ``z.conj()`` records ``ConjBackward0``)."""

    __slots__ = ()
    name = "conj_physical"


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


# PyTorch's three transform kernels, each one node of its graph (FftC2CBackward0, FftR2CBackward0,
# FftC2RBackward0); ``torch.fft``'s functions are these with PyTorch's casts, slices, pads and conjugates
# around them (tensors/fft.py). ``norm`` is NumPy's word for the direction the kernel runs in; the
# gradient of each is its adjoint: the transform the other way, normalised the other way.


class FftC2C(Function):
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
        return (ns.apply(FftC2C, g, args=(axes, not inverse, _DUAL_NORM[norm])),)


class FftR2C(Function):
    """``args = (axes, norm, onesided)``: the forward transform of a real array over ``axes``, complex;
    ``onesided``: the last axis cut to its ``n // 2 + 1`` non-negative frequencies (the others are
    their conjugates). Gradient: the real part of the adjoint transform of ``g``, zeros in place of
    the frequencies cut (PyTorch's ``fft_r2c_backward``)."""

    __slots__ = ()
    keep = ()
    reads_values = False
    reads_output = False
    conjugate_backward = False
    name = "fft_r2c"

    def forward(self, ns, a):
        axes, norm, onesided = self.args
        xp = ns.device.xp
        cdt = _COMPLEX_OF[np.dtype(a.dtype).name]
        if a.size == 0:
            shape = list(a.shape)
            if onesided:
                shape[axes[-1]] = shape[axes[-1]] // 2 + 1
            return xp.zeros(tuple(shape), dtype=cdt)
        f = xp.fft.rfftn if onesided else xp.fft.fftn
        return f(a, axes=axes, norm=norm).astype(cdt, copy=False)

    def backward(self, g, ns, inputs, out):
        axes, norm, onesided = self.args
        shape = tuple(inputs[0].shape)
        last = axes[-1]
        if onesided and shape[last] > g.shape[last]:  # the frequencies cut: their gradient is zero
            key = (slice(None),) * last + (slice(0, g.shape[last]),)
            g = ns.slice_grad(g, shape, key)
        return (ns.apply(Real, ns.apply(FftC2C, g, args=(axes, True, _DUAL_NORM[norm]))),)


class FftC2R(Function):
    """``args = (axes, norm, n)``: the inverse transform over ``axes`` of a complex array whose last
    axis holds the ``n // 2 + 1`` non-negative frequencies of a Hermitian-symmetric signal: a real
    array of length ``n`` along it (the imaginary parts a real signal cannot have are ignored).
    Gradient: the one-sided forward transform of ``g``, the frequencies that stand for two doubled
    (PyTorch's ``fft_c2r_backward``)."""

    __slots__ = ()
    keep = ()
    reads_values = False
    reads_output = False
    conjugate_backward = False
    name = "fft_c2r"

    def forward(self, ns, a):
        axes, norm, n = self.args
        xp = ns.device.xp
        rdt = _REAL_OF[np.dtype(a.dtype).name]
        shape = tuple(a.shape)
        s = [shape[ax] for ax in axes[:-1]] + [n]
        if a.size == 0:
            out = list(shape)
            out[axes[-1]] = n
            return xp.zeros(tuple(out), dtype=rdt)
        return xp.fft.irfftn(a, s=s, axes=axes, norm=norm).astype(rdt, copy=False)

    def backward(self, g, ns, inputs, out):
        axes, norm, n = self.args
        last = axes[-1]
        gi = ns.apply(FftR2C, g, args=(axes, _DUAL_NORM[norm], True))
        double = n - gi.shape[last]
        if double > 0:
            dev = g._dev if ns.recording else ns.device
            w = np.ones(gi.shape[last], dtype=_REAL_OF[np.dtype(ns.values(gi).dtype).name])
            w[1 : 1 + double] = 2
            gi = gi * ns.const(dev.asarray(w.reshape((-1,) + (1,) * (len(gi.shape) - 1 - last))))
        return (gi,)
