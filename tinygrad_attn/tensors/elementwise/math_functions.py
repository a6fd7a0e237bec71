"""PyTorch's elementwise math, logic, scans, selections and shape helpers not defined in ``_tensor.py``.

Each is a ``tga.`` free function and, where PyTorch has one, a :class:`Tensor` method of
the same name (installed from the table :data:`METHODS` at the bottom). They are
composites of the primitives (``sinh`` from ``expm1``, ``logcumsumexp`` as a log-depth
scan of ``logaddexp``, ``scatter_reduce`` from ``ScatterAddAlong``), except where no
composite is accurate: the inverse trigonometric and hyperbolic functions, ``log1p`` and
``expm1`` are primitives (``ops/transcendental.py``), and ``cummax``'s indices are the
op ``CumArgExtreme``.

Dtypes follow PyTorch: a float function of an integer or bool tensor gives float32.
"""

from __future__ import annotations

import builtins
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from ... import ops
from ...engine.composite import composite
from ...engine.declare import check_dtype, low_precision, public
from ...engine.forward_grads import differentiated, refuse_tangents
from ...engine.function import Function
from ...engine.switches import check_host_read, no_grad
from ...functional.checks import broadcast_of, same_dtype, tensor_operand
from ...functional.checks import tensor_arg as _tensor
from ...ops.compare import Hypot, LogicalAnd, LogicalNot, LogicalOr, NotEqual, SignBit
from ...ops.saved import saved_for_backward, with_gradient_of
from ...runtime.meta_stand_ins import stand_in
from .._tensor import InvalidArgumentError, Tensor, cat, stack, where
from ..dtypes import UnsupportedDtypeError, fill_value_in, finfo, result_type, scalar_type_name
from ..factories.creation import ones_like
from ..promotion import as_float, bitwise_operands, float_dtype_of, promoted_operands
from ..reduce.tensor_reduce import sqrt_of_variance, var
from ..shape import dims
from ..tensor_functions import ValuesIndices, _index, _one_dim, number_as_vector, values_indices
from .tensor_torch import _rounded


def _floating(x: Any, op: str) -> Tensor:
    """``x`` as a float tensor: an integer or bool one in the default dtype, as PyTorch's float ops do."""
    return as_float(_tensor(x, op))


def _tensors_only(a: Any, b: Any, op: str) -> None:
    """PyTorch's ops without a number overload (``atan2 hypot maximum minimum fmax fmin``)
    take tensors only: a number is its ``TypeError``, not a broadcast constant."""
    for pos, (name, x) in enumerate((("input", a), ("other", b)), 1):
        if not isinstance(x, Tensor):
            raise TypeError(f"{op}(): argument '{name}' (position {pos}) must be Tensor, not {type(x).__name__}")


def _pair(a: Any, b: Any, op: str) -> tuple[Tensor, Tensor]:
    """Two operands as float tensors of one dtype on one device: ``torch.result_type``'s
    dtype (:func:`dtypes.result_type`), the default dtype where that is not a float."""
    if not isinstance(a, Tensor) and not isinstance(b, Tensor):
        raise TypeError(f"{op}: at least one operand must be a Tensor")
    like = a if isinstance(a, Tensor) else b
    dt = float_dtype_of(result_type(a, b))

    def as_float(x: Any) -> Tensor:
        if not isinstance(x, Tensor):
            return Tensor.full((), x, dtype=dt, device=like._dev)
        return x if x.dtype == dt else x.astype(dt)

    return as_float(a), as_float(b)


# -- trigonometric and hyperbolic ---------------------------------------------------
@public(method=True, inplace_function=True, aliases=("arcsin",))
def asin(x: Tensor) -> Tensor:
    """Elementwise arcsine (NaN outside ``[-1, 1]``)."""
    return ops.Asin.apply(_floating(x, "asin"))


@public(method=True, inplace_function=True, aliases=("arccos",))
def acos(x: Tensor) -> Tensor:
    """Elementwise arccosine (NaN outside ``[-1, 1]``)."""
    return ops.Acos.apply(_floating(x, "acos"))


@public(method=True, inplace_function=True, aliases=("arctan",))
def atan(x: Tensor) -> Tensor:
    """Elementwise arctangent."""
    return ops.Atan.apply(_floating(x, "atan"))


@public(method=True, inplace=True, aliases=("arctan2",))
def atan2(input: Tensor, other: Any) -> Tensor:  # noqa: A002 - PyTorch's names
    """The angle of the point ``(other, input)``, elementwise, in ``(-pi, pi]``."""
    _tensors_only(input, other, "atan2")
    y, x = _pair(input, other, "atan2")
    return ops.Atan2.apply(y, x)


@public(method=True, inplace_function=True, special=("sinc",))
def sinc(input: Tensor) -> Tensor:  # noqa: A002
    """``sin(pi x) / (pi x)``, 1 at 0 (``torch.sinc``)."""
    return ops.Sinc.apply(_floating(input, "sinc"))


@public(method=True, inplace_function=True, aliases=("arcsinh",))
def asinh(x: Tensor) -> Tensor:
    """Elementwise inverse hyperbolic sine."""
    return ops.Asinh.apply(_floating(x, "asinh"))


@public(method=True, inplace_function=True, aliases=("arccosh",))
def acosh(x: Tensor) -> Tensor:
    """Elementwise inverse hyperbolic cosine (NaN below 1)."""
    return ops.Acosh.apply(_floating(x, "acosh"))


@public(method=True, inplace_function=True, aliases=("arctanh",))
def atanh(x: Tensor) -> Tensor:
    """Elementwise inverse hyperbolic tangent (NaN outside ``[-1, 1]``)."""
    return ops.Atanh.apply(_floating(x, "atanh"))


arcsin, arccos, arctan, arctan2, arcsinh, arccosh, arctanh = asin, acos, atan, atan2, asinh, acosh, atanh


@public(method=True, inplace_function=True)
@composite("sinh")
def sinh(x: Tensor) -> Tensor:
    """Elementwise hyperbolic sine, ``(expm1(x) - expm1(-x)) / 2``: exact near 0, where
    ``(exp(x) - exp(-x)) / 2`` would cancel."""
    x = _floating(x, "sinh")
    return saved_for_backward((ops.Expm1.apply(x) - ops.Expm1.apply(-x)) * 0.5, x)  # (as PyTorch's, it keeps x)


@public(method=True, inplace_function=True)
@composite("cosh")
def cosh(x: Tensor) -> Tensor:
    """Elementwise hyperbolic cosine."""
    x = _floating(x, "cosh")
    return saved_for_backward((x.exp() + (-x).exp()) * 0.5, x)  # (as PyTorch's, it keeps x)


def _tan_fused(x: Tensor) -> Tensor:
    return ops.Tan.apply(_floating(x, "tan"))


@public(method=True, inplace_function=True)
@composite("tan", _tan_fused)
def tan(x: Tensor) -> Tensor:
    """Elementwise tangent, ``sin / cos`` (fused: ``ops.Tan``, whose backward reads its output
    only, as PyTorch's)."""
    x = _floating(x, "tan")
    return ops.Sin.apply(x) / ops.Cos.apply(x)


@public(method=True, inplace_function=True)
def deg2rad(x: Tensor) -> Tensor:
    """Degrees to radians."""
    return _floating(x, "deg2rad") * (math.pi / 180.0)


@public(method=True, inplace_function=True)
def rad2deg(x: Tensor) -> Tensor:
    """Radians to degrees."""
    return _floating(x, "rad2deg") * (180.0 / math.pi)


# -- exponentials and logarithms -----------------------------------------------------
@public(method=True, inplace_function=True)
def log2(x: Tensor) -> Tensor:
    """Elementwise base-2 logarithm."""
    return ops.Log2.apply(_floating(x, "log2"))


@public(method=True, inplace_function=True)
def log10(x: Tensor) -> Tensor:
    """Elementwise base-10 logarithm."""
    return ops.Log10.apply(_floating(x, "log10"))


@public(method=True, inplace_function=True, special=("exp2",))
def exp2(x: Tensor) -> Tensor:
    """Elementwise ``2 ** x``."""
    return ops.Exp2.apply(_floating(x, "exp2"))


@public(method=True, dtypes="floating", operands=("input", "other"))
@composite("logaddexp")
def logaddexp(input: Tensor, other: Any) -> Tensor:  # noqa: A002
    """``log(exp(input) + exp(other))`` without overflow: a logsumexp over the pair."""
    a, b = _pair(tensor_operand(input, "logaddexp"), tensor_operand(other, "logaddexp", "other", 2), "logaddexp")
    broadcast_of("logaddexp", a.shape, b.shape)
    if a.dtype.kind == "c":  # (PyTorch's: the operand of the larger real part plus log1p(exp(other - it)))
        first = a.real >= b.real
        hi, lo = where(first, a, b), where(first, b, a)
        return hi + (lo - hi).exp().log1p()
    return ops.LogAddExp.apply(a, b)  # (PyTorch's formula and gradients; it keeps its inputs, not its result)


@public(method=True, inplace_function=True, special=("xlogy",))
@composite("xlogy")
def xlogy(input: Any, other: Any) -> Tensor:  # noqa: A002
    """``input * log(other)``, and 0 where ``input`` is 0 (unless ``other`` is NaN)."""
    return ops.Xlogy.apply(*_pair(input, other, "xlogy"))


@public(method=True, inplace=True)
@composite("hypot")
def hypot(input: Tensor, other: Any) -> Tensor:  # noqa: A002
    """``sqrt(input**2 + other**2)``, elementwise, of float tensors (PyTorch's has no integer kernel)."""
    _tensors_only(input, other, "hypot")
    if result_type(input, other).kind not in "fc":
        raise UnsupportedDtypeError(f"\"hypot\" not implemented for '{scalar_type_name(result_type(input, other))}' "
                                    f"(operands {input.dtype} and {other.dtype}); convert with .float()")  # fmt: skip
    a, b = _pair(input, other, "hypot")
    # the value scaled as C's hypot (no overflow of a**2 where the result fits, as PyTorch's); the gradient
    # a / out, b / out of every order from the same sum scaled by the larger magnitude, held constant
    exact = Hypot.apply(a.detach(), b.detach())
    if not (differentiated(a) or differentiated(b)):
        return exact
    big = a.detach().abs().maximum(b.detach().abs())
    big = where(big == 0, 1.0, big).astype(big.dtype)
    sa, sb = a / big, b / big
    out = with_gradient_of(exact, (sa * sa + sb * sb).sqrt() * big)
    return saved_for_backward(out, a, b, output=True)  # (PyTorch's keeps both operands and the result)


@public(method=True, inplace=True, special=("erfinv",))
def erfinv(x: Tensor) -> Tensor:
    """The inverse error function: Giles' single-precision approximation refined by two
    Newton steps on ``erf`` (to about 1e-15 in float64); ``erfinv(+-1) = +-inf``."""
    x = _floating(x, "erfinv")
    return ops.Erfinv.apply(x)


# -- rounding and remainders ----------------------------------------------------------
@public(method=True, inplace_function=True, aliases=("fix",))
@composite("trunc")
def trunc(x: Tensor) -> Tensor:
    """Rounded toward zero (integers unchanged); gradient zero."""
    x = _tensor(x, "trunc")
    if not _rounded(x, "trunc"):
        return x.clone()
    return where(x < 0, ops.Ceil.apply(x), ops.Floor.apply(x))


fix = trunc


@public(method=True, inplace_function=True)
@composite("frac")
def frac(x: Tensor) -> Tensor:
    """The fractional part, ``x - trunc(x)`` (its sign is ``x``'s); of floats only, as PyTorch's."""
    x = _tensor(x, "frac")
    if x.dtype.kind not in "fc":
        raise NotImplementedError(f"\"frac\" not implemented for '{scalar_type_name(x.dtype)}' (shape {tuple(x.shape)}); "
                                  "convert with .float()")  # fmt: skip
    return x - trunc(x).detach()


@public(method=True, inplace=True)
def remainder(input: Any, other: Any) -> Tensor:  # noqa: A002
    """Python's ``%``: the remainder with the sign of the divisor."""
    if not isinstance(input, Tensor):
        return tensor_operand(other, "remainder", "other", 2).__rmod__(input)
    return input % other


@public(method=True, inplace=True)
def fmod(input: Tensor, other: Any) -> Tensor:  # noqa: A002
    """C's ``fmod``: the remainder with the sign of the dividend (``ops.Fmod``), in
    ``torch.result_type``'s dtype; integers by zero raise as PyTorch's (CPU) do, bools have none."""
    a = _tensor(input, "fmod")
    a, b = promoted_operands(a, other if isinstance(other, Tensor) else a._operand(other))
    kind = a.dtype.kind
    if kind == "b":
        raise UnsupportedDtypeError(
            f"\"fmod\" not implemented for 'Bool' (shape {tuple(a.shape)}); convert with .long()"
        )
    if kind in "iu" and (bool((b == 0).any()) if isinstance(b, Tensor) else b == 0):
        raise RuntimeError(f"ZeroDivisionError: fmod of {a.dtype} tensors by zero (shape {tuple(a.shape)})")
    return ops.Fmod.apply(a, b)


@public(method=True, inplace=True, dtypes="floating")
def lerp(input: Tensor, end: Tensor, weight: Tensor | float) -> Tensor:  # noqa: A002
    """``input + weight * (end - input)``; from the ``end`` side where ``|weight| >= 0.5``, as
    PyTorch computes it (so ``lerp(a, b, 1)`` is ``b`` exactly, and ``lerp(0, inf, 1)`` NaN).
    Its tensors are of one dtype: PyTorch's lerp promotes none of them, but a 0-d ``weight``
    (which takes part in the promotion as a 0-d operand does)."""
    for name, t in (("end", end), ("weight", weight)):
        if isinstance(t, Tensor) and isinstance(input, Tensor) and t.dtype != input.dtype:
            if name == "weight" and t.ndim == 0:
                continue
            raise RuntimeError(f"lerp: expected dtype {input.dtype} for `{name}` but got dtype {t.dtype} "
                               f"(shapes {tuple(input.shape)} and {tuple(t.shape)})")  # fmt: skip
    diff = end - input
    if not isinstance(weight, Tensor):
        return input + diff * weight if builtins.abs(weight) < 0.5 else end - diff * (1 - weight)
    return where(weight.abs() < 0.5, input + diff * weight, end - diff * (1 - weight))


@public(method=True, inplace=True)
@composite("copysign")
def copysign(input: Any, other: Any) -> Tensor:  # noqa: A002
    """``|input|`` with the sign of ``other`` (``-0.0`` counts as negative). No gradient
    reaches ``other``; ``input``'s is ``+-1`` (0 where ``input`` is 0), as PyTorch's."""
    a, b = _pair(tensor_operand(input, "copysign"), other, "copysign")
    neg_b = SignBit.apply(b.detach())
    neg_a = SignBit.apply(a.detach())
    out = where(neg_a != neg_b, -a, a)
    shape = out.shape
    out = where(a == 0, where(neg_b, -0.0, 0.0).expand(shape).astype(a.dtype), out)
    return saved_for_backward(out, a, output=True)  # (as PyTorch's: input and result)


@public(method=True, inplace_function=True)
def nan_to_num(
    input: Tensor, nan: float | None = 0.0, posinf: float | None = None, neginf: float | None = None
) -> Tensor:  # noqa: A002
    """``input`` with NaN replaced by ``nan``, ``inf`` by ``posinf`` and ``-inf`` by ``neginf``
    (by default the dtype's largest and lowest finite values), as PyTorch's; the gradient
    flows where ``input`` is finite. An integer or bool tensor comes back as a copy."""
    x = _tensor(input, "nan_to_num")
    if x.dtype.kind not in "fc":
        return x.clone()
    if x.dtype.kind == "c":  # (each part on its own, as PyTorch's)
        from .complex_numbers import complex_  # noqa: PLC0415 - a sibling built on this module's functions

        return complex_(nan_to_num(x.real, nan, posinf, neginf), nan_to_num(x.imag, nan, posinf, neginf))
    info = finfo(x.dtype)  # (PyTorch's limits: NumPy's finfo has no bfloat16)
    hi = float(info.max) if posinf is None else float(posinf)
    lo = float(info.min) if neginf is None else float(neginf)
    nan = 0.0 if nan is None else float(nan)  # (None: PyTorch's default, as for posinf and neginf)
    values = where(x.isnan(), nan, where(x == math.inf, hi, where(x == -math.inf, lo, x)))
    return saved_for_backward(values.astype(x.dtype), x)  # (PyTorch's keeps its input)


# -- comparisons and logic ----------------------------------------------------------
@public(method=True)
def isclose(input: Tensor, other: Any, rtol: float = 1e-5, atol: float = 1e-8, equal_nan: bool = False) -> Tensor:  # noqa: A002
    """Where ``|input - other| <= atol + rtol * |other|`` (equal infinities too); a bool tensor."""
    a = tensor_operand(input, "isclose")
    b = tensor_operand(other, "isclose", "other", 2)
    if rtol < 0 or atol < 0:
        raise RuntimeError(
            f"isclose: rtol and atol must be greater than or equal to zero, got rtol={rtol}, atol={atol}"
        )
    if isinstance(b, Tensor) and a.dtype != b.dtype:
        raise RuntimeError(f"isclose: {a.dtype} and {b.dtype} differ; PyTorch compares tensors of one dtype")
    a, b = a.detach(), b.detach() if isinstance(b, Tensor) else b
    if a.dtype.kind not in "fc":
        a = a.astype(np.float64)
        b = b.astype(np.float64) if isinstance(b, Tensor) else b
    close = (a == b) | (((a - b).abs() <= atol + rtol * (b.abs() if isinstance(b, Tensor) else builtins.abs(b)))
                        & ((a - b).abs() < math.inf))  # fmt: skip
    if equal_nan:
        close = close | ((a != a) & (b != b))
    return close


def _clamp(x: Tensor, lo: Any, hi: Any) -> Tensor:
    from .tensor_arith import clamped  # noqa: PLC0415 - (tensor_arith is imported after this module)

    return clamped(x, lo, hi)


@public(method=True, inplace_function=True)
def clamp_min(x: Tensor, min: Tensor | float) -> Tensor:  # noqa: A002
    """``max(x, min)``."""
    return _clamp(tensor_operand(x, "clamp_min"), min, None)


@public(method=True, inplace_function=True)
def clamp_max(x: Tensor, max: Tensor | float) -> Tensor:  # noqa: A002
    """``min(x, max)``."""
    return _clamp(tensor_operand(x, "clamp_max"), None, max)


def _truth(x: Any, like: Tensor) -> Tensor:
    if not isinstance(x, Tensor):
        x = Tensor(np.asarray(x), device=like._dev)
    return x if x.dtype == np.bool_ else NotEqual.apply(x, 0)


@public(method=True, inplace=True)
def logical_not(x: Tensor) -> Tensor:
    """Elementwise not (of ``x != 0`` for a number tensor); a bool tensor."""
    return LogicalNot.apply(_truth(x, x))


@public(method=True, inplace=True)
def logical_and(input: Tensor, other: Any) -> Tensor:  # noqa: A002
    """Elementwise and of the truth values; a bool tensor."""
    return LogicalAnd.apply(_truth(input, input), _truth(_tensor(other, "logical_and"), input))


@public(method=True, inplace=True)
def logical_or(input: Tensor, other: Any) -> Tensor:  # noqa: A002
    """Elementwise or of the truth values; a bool tensor."""
    return LogicalOr.apply(_truth(input, input), _truth(_tensor(other, "logical_or"), input))


@public(method=True, inplace=True)
def logical_xor(input: Tensor, other: Any) -> Tensor:  # noqa: A002
    """Elementwise exclusive or of the truth values; a bool tensor."""
    return NotEqual.apply(_truth(input, input), _truth(_tensor(other, "logical_xor"), input))


# -- bitwise (integers and bools; no gradient) ----------------------------------------------
def _bitwise(name: str, fn: str) -> type:
    def forward(self, ns, a, b=None):
        raw = ns.device.xp
        f = getattr(raw, fn, None) or getattr(raw, fn.replace("bitwise_", ""))  # (NumPy's and CuPy's left_shift)
        return f(a) if b is None else f(a, b)

    return type(name, (Function,), {"__slots__": (), "differentiable": False, "forward": forward,
                                    "name": name.lower()})  # fmt: skip


_BITWISE = {
    "and": _bitwise("BitwiseAnd", "bitwise_and"),
    "or": _bitwise("BitwiseOr", "bitwise_or"),
    "xor": _bitwise("BitwiseXor", "bitwise_xor"),
    "left_shift": _bitwise("BitwiseLeftShift", "bitwise_left_shift"),
    "right_shift": _bitwise("BitwiseRightShift", "bitwise_right_shift"),
}


@public(method=True, inplace=True)
def bitwise_and(input: Any, other: Any) -> Tensor:  # noqa: A002
    """Elementwise ``&`` of integer or bool tensors."""
    return _BITWISE["and"].apply(*bitwise_operands(input, other, "bitwise_and"))


@public(method=True, inplace=True)
def bitwise_or(input: Any, other: Any) -> Tensor:  # noqa: A002
    """Elementwise ``|`` of integer or bool tensors."""
    return _BITWISE["or"].apply(*bitwise_operands(input, other, "bitwise_or"))


@public(method=True, inplace=True)
@public(name="__xor__", function=False, method=True)
def bitwise_xor(input: Any, other: Any) -> Tensor:  # noqa: A002
    """Elementwise ``^`` of integer or bool tensors."""
    return _BITWISE["xor"].apply(*bitwise_operands(input, other, "bitwise_xor"))


@public(method=True, inplace=True)
@public(name="__lshift__", function=False, method=True)
def bitwise_left_shift(input: Any, other: Any) -> Tensor:  # noqa: A002
    """Elementwise ``<<`` of integer tensors."""
    return _BITWISE["left_shift"].apply(*bitwise_operands(input, other, "bitwise_left_shift", bools=False))


@public(method=True, inplace=True)
@public(name="__rshift__", function=False, method=True)
def bitwise_right_shift(input: Any, other: Any) -> Tensor:  # noqa: A002
    """Elementwise ``>>`` of integer tensors (arithmetic for signed ones)."""
    return _BITWISE["right_shift"].apply(*bitwise_operands(input, other, "bitwise_right_shift", bools=False))


@public(method=True, inplace=True)
def bitwise_not(input: Tensor) -> Tensor:  # noqa: A002
    """Elementwise ``~`` of an integer or bool tensor."""
    x = _tensor(input, "bitwise_not")
    return ~x  # (bools: not; integers: every bit flipped; PyTorch's error for other dtypes)


# -- selections -----------------------------------------------------------------------
@public(method=True)
def nonzero(input: Tensor, *, as_tuple: bool = False) -> Any:  # noqa: A002
    """The indices of the non-zero entries: an ``(n, ndim)`` int64 tensor, or with
    ``as_tuple=True`` one 1-D tensor per axis (a 0-d tensor counts as 1-D)."""
    x = _tensor(input, "nonzero")
    check_host_read(x, "nonzero")  # (a shape from the values: traced, a TraceError naming the line)
    raw, dev = x._dev.xp, x._dev
    a = x._data if x.ndim else raw.reshape(x._data, (1,))
    idx = raw.nonzero(a)
    cols = [Tensor._wrap(raw.astype(i, dev.dtype(np.int64)), dev) for i in idx]
    if as_tuple:
        return tuple(cols)
    if x.ndim == 0:
        return Tensor.zeros((cols[0].shape[0], 0), dtype=np.int64, device=dev)
    return stack(cols, 1)


@public(method=True)
@stand_in(strides=lambda shape: (1, shape[0]))  # (PyTorch's meta kernel: column-major, as its CUDA one)
def nonzero_static(input: Tensor, *, size: int, fill_value: int = -1) -> Tensor:  # noqa: A002
    """:func:`nonzero`'s ``(n, ndim)`` indices cut or padded (rows of ``fill_value``) to exactly
    ``size`` rows: a shape known before the values are."""
    if not isinstance(size, (int, np.integer)) or isinstance(size, bool) or size < 0:
        raise RuntimeError(f"nonzero_static: 'size' must be an non-negative integer, got {size!r}")
    found = nonzero(input)[:size]
    if found.shape[0] == size:
        return found
    pad = Tensor.full((size - found.shape[0], found.shape[1]), int(fill_value), dtype=np.int64, device=found._dev)
    return cat([found, pad], 0)


@public(method=True, inplace=True)
def put(input: Tensor, index: Any, source: Tensor, accumulate: bool = False) -> Tensor:  # noqa: A002
    """``input`` with ``source``'s entries written at the flat positions ``index`` (row-major;
    negative ones count from the end), added there with ``accumulate``, as ``torch.put``."""
    x = _tensor(input, "put")
    idx = index if isinstance(index, Tensor) else Tensor(np.asarray(index), device=x._dev)
    if idx.dtype != np.int64:
        raise RuntimeError(f"put_(): Expected a long tensor for index, but got {scalar_type_name(idx.dtype)}")
    if not isinstance(source, Tensor) or source.dtype != x.dtype:
        got = scalar_type_name(source.dtype) if isinstance(source, Tensor) else type(source).__name__
        raise RuntimeError(f"put_(): self and source expected to have the same dtype, but got self.dtype = "
                           f"{scalar_type_name(x.dtype)} and source.dtype = {got}")  # fmt: skip
    if idx.numel() != source.numel():
        raise IndexError(f"put_(): Expected source and index to have the same number of elements, but got "
                         f"source.numel() = {source.numel()}, index.numel() = {idx.numel()}")  # fmt: skip
    n = x.numel()
    flat = idx.reshape(-1)
    if flat.numel():
        lo, hi = int(flat.min().item()), int(flat.max().item())
        if lo < -n or hi >= n:
            raise IndexError(
                f"out of range: tried to access index {hi if hi >= n else lo} on a tensor of {n} elements."
            )
    flat = where(flat < 0, flat + n, flat)
    out = x.reshape(-1).index_put((flat,), source.reshape(-1), accumulate).reshape(x.shape)
    return saved_for_backward(out, source)  # (PyTorch's keeps the source)


@public(method=True)
def isposinf(input: Tensor) -> Tensor:  # noqa: A002
    """Where ``input`` is +inf (a boolean tensor; integers never are)."""
    x = _tensor(input, "isposinf")
    return x == math.inf if x.dtype.kind in "fc" else Tensor.zeros(x.shape, dtype=np.bool_, device=x._dev)


@public(method=True)
def isneginf(input: Tensor) -> Tensor:  # noqa: A002
    """Where ``input`` is -inf (a boolean tensor; integers never are)."""
    x = _tensor(input, "isneginf")
    return x == -math.inf if x.dtype.kind in "fc" else Tensor.zeros(x.shape, dtype=np.bool_, device=x._dev)


@public(method=True)
def isreal(input: Tensor) -> Tensor:  # noqa: A002
    """Where ``input`` has no imaginary part (everywhere for a real tensor)."""
    x = _tensor(input, "isreal")
    if x.dtype.kind == "c":
        return x.imag == 0
    return ones_like(x, dtype=np.bool_)


@public(method=True)
def masked_select(input: Tensor, mask: Any) -> Tensor:  # noqa: A002
    """The entries of ``input`` where ``mask`` (broadcast with it) is true, as a 1-D tensor."""
    x = _tensor(input, "masked_select")
    m = mask if isinstance(mask, Tensor) else Tensor(np.asarray(mask), device=x._dev)
    if m.dtype != np.bool_:
        raise RuntimeError(f"masked_select: the mask must be a bool tensor, got {m.dtype}")
    shape = broadcast_of("masked_select", x.shape, m.shape)
    return saved_for_backward(x.expand(shape).reshape(-1)[m.expand(shape).reshape(-1)], x, m)  # (as PyTorch's)


def _index_line(x: Tensor, d: int, index: Any, like_shape: tuple, op: str) -> Tensor:
    """A 1-D ``index`` along ``d``, checked, expanded to ``like_shape`` (its length along ``d``)."""
    from ..tensor_functions import _check_bounds, _index_tensor  # noqa: PLC0415

    idx = _index_tensor(x, index, op, vector=True).reshape(-1)
    _check_bounds(x._dev.ops, idx._data, x.shape[d], op, d, x.shape)
    shape = tuple(like_shape[:d]) + (idx.shape[0],) + tuple(like_shape[d + 1 :])
    return idx.reshape(tuple(-1 if k == d else 1 for k in range(x.ndim))).expand(shape)


def _source(x: Tensor, d: int, index: Any, source: Tensor, op: str) -> tuple[Tensor, Tensor]:
    from ..tensor_functions import _index_tensor  # noqa: PLC0415

    n = _index_tensor(x, index, op, vector=True).numel()  # (the index's rank first: PyTorch's IndexError)
    want = x.shape[:d] + (n,) + x.shape[d + 1 :]
    same_dtype(op, x, ("source", source))  # (PyTorch's index kernels convert none)
    src = source if source.ndim else source.reshape((1,) * x.ndim)
    if tuple(src.shape) != tuple(want):
        raise RuntimeError(
            f"{op}: source of shape {tuple(source.shape)} must have shape {want} (the index along dim {d})"
        )
    return _index_line(x, d, index, x.shape, op), src


@public(method=True, inplace=True)
@number_as_vector()
def index_add(input: Tensor, dim: int, index: Any, source: Tensor, *, alpha: Any = 1) -> Tensor:  # noqa: A002
    """``alpha * source`` added into ``input`` at the rows ``index`` names along ``dim``."""
    x = _tensor(input, "index_add")
    d = _one_dim(x, dim, "index_add")
    idx, src = _source(x, d, index, source, "index_add")
    if x.dtype.kind in "biu":  # (PyTorch takes alpha as the tensor's own kind: a bool's -1 is True)
        alpha = bool(alpha) if x.dtype.kind == "b" else int(alpha)
    if low_precision(x) and alpha == 1 and x.ndim > 1:  # (PyTorch's scatter_add then: in float32, rounded once)
        out = (x.float() + ops.ScatterAddAlong.apply(src.float(), idx, args=(d, x.shape))).astype(x.dtype)
    elif low_precision(x):
        out = _added_in_turn(x, d, index, idx, src, alpha, "index_add")
    else:
        out = x + ops.ScatterAddAlong.apply(src * alpha if alpha != 1 else src, idx, args=(d, x.shape))
    if out.dtype != x.dtype and x.dtype == np.bool_:  # (bool stays bool: an "or" of what is added, as PyTorch's)
        out = out != 0
    return saved_for_backward(out, source)  # (PyTorch's keeps the source)


@public(method=True, inplace=True)
@number_as_vector()
def index_copy(input: Tensor, dim: int, index: Any, source: Tensor) -> Tensor:  # noqa: A002
    """``input`` with the rows ``index`` names along ``dim`` replaced by ``source``'s."""
    x = _tensor(input, "index_copy")
    d = _one_dim(x, dim, "index_copy")
    idx, src = _source(x, d, index, source, "index_copy")
    out = x.scatter(d, idx, src)
    if differentiated(out):  # every source row gets the gradient of where it went, duplicates too (as PyTorch's)
        from ...ops.saved import with_gradient_of  # noqa: PLC0415

        hit = ops.ScatterAddAlong.apply(Tensor.ones(idx.shape, device=x._dev), idx, args=(d, x.shape)) > 0
        out = with_gradient_of(out, where(hit, 0.0, x) + ops.ScatterAddAlong.apply(src, idx, args=(d, x.shape)))
    return saved_for_backward(out, source)  # (PyTorch's keeps the source)


@public(method=True, inplace=True)
@number_as_vector()
def index_fill(input: Tensor, dim: int, index: Any, value: Any) -> Tensor:  # noqa: A002
    """``input`` with the rows ``index`` names along ``dim`` set to ``value``."""
    x = _tensor(input, "index_fill")
    d = _one_dim(x, dim, "index_fill")
    if isinstance(index, Tensor) and index.dtype != np.int64:  # (index_add and index_copy take int32 too)
        raise IndexError(f"index_fill_(): Expected dtype int64 for index (got {index.dtype}).")
    if isinstance(value, Tensor) and value.ndim:
        raise RuntimeError(f"index_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                           f"{value.ndim} dimension(s) (shape {tuple(value.shape)}).")  # fmt: skip
    idx = _index_line(x, d, index, x.shape, "index_fill")
    ones = Tensor.ones(idx.shape, device=x._dev)
    hit = ops.ScatterAddAlong.apply(ones, idx, args=(d, x.shape)) > 0
    if isinstance(value, Tensor):  # (in input's dtype, as PyTorch's: a value tensor takes no part in promotion)
        v = value.reshape(())
        v = v if v.dtype == x.dtype else v.to(x.dtype)
    else:  # (-1 into uint8 is 255, as PyTorch's)
        v = x.dtype.type(fill_value_in("index_fill", value, x.dtype)).item()
    return where(hit, v, x)


@public(method=True, inplace=True)
@stand_in()
def masked_scatter(input: Tensor, mask: Any, source: Tensor) -> Tensor:  # noqa: A002
    """``input`` with the entries where ``mask`` is true taking ``source``'s, in order."""
    x = _tensor(input, "masked_scatter")
    m = mask if isinstance(mask, Tensor) else Tensor(np.asarray(mask), device=x._dev)
    if m.dtype != np.bool_:
        raise RuntimeError(f"masked_scatter: the mask must be a bool tensor, got {m.dtype}")
    shape = broadcast_of("masked_scatter", x.shape, m.shape)
    flat_m = m.expand(shape).reshape(-1)
    same_dtype("masked_scatter", x, ("source", source))  # (PyTorch's kernel converts none)
    need = int(flat_m.astype(np.int64).sum().item())
    if need > source.numel():
        raise RuntimeError(f"masked_scatter: the mask selects {need} entries, source has {source.numel()}")
    pos = (flat_m.astype(np.int64).cumsum(0) - 1).clip(0, None)  # the source entry for each masked one
    if source.numel() == 0:
        return x.expand(shape) * 1
    picked = source.reshape(-1).index_select(0, pos)
    return where(flat_m, picked, x.expand(shape).reshape(-1)).reshape(shape)


_SCATTER_REDUCTIONS = ("sum", "prod", "mean", "amax", "amin")
#: The dtypes scatter_reduce's amax and amin take (an order: no complex)
_ORDERED = ("uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64")


@public(method=True, inplace=True)
@composite("scatter_reduce")
@number_as_vector()
def scatter_reduce(input: Tensor, dim: int, index: Any, src: Tensor, reduce: str, *,  # noqa: A002
                   include_self: bool = True) -> Tensor:  # fmt: skip
    """``src`` reduced into ``input`` at ``index`` along ``dim`` with ``"sum" "prod" "mean"
    "amax" "amin"`` (``include_self=False``: the entries written start empty), as
    ``torch.scatter_reduce``. Gradients are PyTorch's: ``amax``/``amin`` share among ties."""
    out = _scatter_reduce(input, dim, index, src, reduce, include_self)
    return saved_for_backward(out, input, index, src, output=True)  # (what PyTorch's keeps)


def _scatter_reduce(input: Tensor, dim: int, index: Any, src: Tensor, reduce: str,  # noqa: A002
                    include_self: bool) -> Tensor:  # fmt: skip
    x = _tensor(input, "scatter_reduce")
    if reduce not in _SCATTER_REDUCTIONS:
        raise InvalidArgumentError(f"scatter_reduce: reduce must be one of {_SCATTER_REDUCTIONS}, not {reduce!r}")
    if reduce == "mean":  # (PyTorch divides in the input's dtype, which bool has no kernel for)
        check_dtype("scatter_reduce_mean", x, "numeric")
    if not isinstance(src, Tensor) or src.dtype != x.dtype:
        raise RuntimeError(f"scatter_reduce: src must be a tensor of the input's dtype {x.dtype}")
    if x.dtype == np.bool_:  # (PyTorch's bool kernels: sum and amax are "any", prod and amin "all"; in int64 here)
        wide = _scatter_reduce(x.astype(np.int64), dim, index, src.astype(np.int64), reduce, include_self)
        return wide != 0
    d = _one_dim(x, dim, "scatter_reduce")
    idx = _index(x, d, index, "scatter_reduce")
    src = src[tuple(slice(0, i) for i in idx.shape)]
    ones = Tensor.ones(idx.shape, dtype=x.dtype.to_real(), device=x._dev)  # (counts: real for a complex x)
    count = ops.ScatterAddAlong.apply(ones, idx, args=(d, x.shape))  # writes per entry
    written = count > 0
    if reduce in ("sum", "mean"):
        base = x if include_self else where(written, 0, x)
        if low_precision(x):  # (PyTorch's kernel sums them in float32 and rounds once)
            total = (base.float() + ops.ScatterAddAlong.apply(src.float(), idx, args=(d, x.shape))).astype(x.dtype)
        else:
            total = base + ops.ScatterAddAlong.apply(src, idx, args=(d, x.shape))
        if reduce == "sum":
            return total
        n = count + (1 if include_self else 0)
        out = total / where(n == 0, 1, n)
        return out if x.dtype.kind in "fc" else (total // where(n == 0, 1, n)).astype(x.dtype)
    # prod, amax, amin: one slice of the index along dim at a time (one write per entry in each)
    lead = (slice(None),) * d
    if reduce == "prod":
        out = x if include_self else where(written, 1, x)
        for k in range(idx.shape[d]):
            ik, sk = idx[lead + (slice(k, k + 1),)], src[lead + (slice(k, k + 1),)]
            wk = ops.ScatterAddAlong.apply(ones[lead + (slice(k, k + 1),)], ik, args=(d, x.shape)) > 0
            out = where(wk, out * ops.ScatterAddAlong.apply(sk, ik, args=(d, x.shape)), out)
        return out
    # amax / amin: the values without a graph, then gradients shared among the entries equal to them
    # (PyTorch's kernel has no complex order)
    check_dtype(f"scatter_gather_tensor_cpu_reduce_{reduce}", x, _ORDERED)
    pick = np.maximum if reduce == "amax" else np.minimum
    with no_grad():
        v = x if include_self else where(written, -math.inf if reduce == "amax" else math.inf, x)
        if x.dtype.kind not in "fc":  # (integers start from their own extreme: where(.., inf, x) would be a float)
            v = x if include_self else where(written, _int_extreme(x.dtype, reduce), x)
        for k in range(idx.shape[d]):
            ik, sk = idx[lead + (slice(k, k + 1),)], src[lead + (slice(k, k + 1),)]
            wk = ops.ScatterAddAlong.apply(ones[lead + (slice(k, k + 1),)], ik, args=(d, x.shape)) > 0
            put = ops.ScatterAddAlong.apply(sk, ik, args=(d, x.shape))
            v = where(wk, v.maximum(put) if pick is np.maximum else v.minimum(put), v)
            v = where(wk & (put != put), math.nan, v) if v.dtype.kind in "fc" else v
    if not (differentiated(x) or differentiated(src)):
        return v
    hit_src = (src == ops.GatherAlong.apply(v, idx, args=(d, x.shape))).astype(x.dtype)
    eq_self = (x == v).astype(x.dtype)
    # (PyTorch counts the input among the ties even with include_self=False, where its own
    # share is then dropped; entries never written pass their gradient to the input)
    n = ops.ScatterAddAlong.apply(hit_src, idx, args=(d, x.shape)) + eq_self
    n = where(n == 0, 1.0, n)
    hit_self = eq_self if include_self else where(written, 0.0, eq_self)
    share = ops.ScatterAddAlong.apply((src - src.detach()) * hit_src, idx, args=(d, x.shape))
    return v + (share + (x - x.detach()) * hit_self) / n


_INDEX_REDUCTIONS = ("prod", "mean", "amax", "amin")


@public(method=True, inplace=True, dtypes="numeric")
@number_as_vector()
def index_reduce(input: Tensor, dim: int, index: Any, source: Tensor, reduce: str, *,  # noqa: A002
                 include_self: bool = True) -> Tensor:  # fmt: skip
    """The rows of ``source`` reduced into the rows of ``input`` that ``index`` names along ``dim``
    (``"prod" "mean" "amax" "amin"``; ``include_self=False``: the rows written start empty), as
    ``torch.index_reduce``: :func:`scatter_reduce` with the index spread over ``source``'s shape."""
    refuse_tangents("index_reduce", input, source)
    x = _tensor(input, "index_reduce")
    if reduce not in _INDEX_REDUCTIONS:
        raise RuntimeError(f"index_reduce(): Expected reduce to be one of prod, mean, amax or amin but got {reduce}.")
    d = _one_dim(x, dim, "index_reduce")
    if not isinstance(source, Tensor) or source.dtype != x.dtype:
        got = source.dtype if isinstance(source, Tensor) else type(source).__name__
        raise RuntimeError(f"index_reduce(): self ({x.dtype}) and source ({got}) must have the same scalar type")
    idx, src = _source(x, d, index, source, "index_reduce")
    if reduce == "mean" and low_precision(x):  # (PyTorch's kernel adds each row in turn, as index_add's)
        count = ops.ScatterAddAlong.apply(Tensor.ones(idx.shape, dtype=x.dtype, device=x._dev), idx, args=(d, x.shape))
        base = x if include_self else where(count > 0, 0, x)
        total = _added_in_turn(base, d, index, idx, src, 1, "index_reduce")
        n = count + 1 if include_self else count
        return saved_for_backward(total / where(n == 0, 1, n), x, index, src, output=True)
    return scatter_reduce(x, d, idx, src, reduce, include_self=include_self)


def _added_in_turn(x: Tensor, d: int, index: Any, idx: Tensor, src: Tensor, alpha: Any, op: str) -> Tensor:
    """``x`` with ``alpha * src`` added at the rows ``index`` (1-D; ``idx`` spread over ``src``) names along
    ``d``, as PyTorch's float16 and bfloat16 ``index_add`` (a 1-d one, or ``alpha`` not 1) and ``index_reduce``
    do: ``alpha * src`` in the dtype (``alpha`` rounded to it), each row of it added into its row of ``x`` in
    turn and rounded to the dtype each time (checked against PyTorch: equal in every entry). One step per
    repeat: the k-th rows naming each row of ``x`` go in step k."""
    from ..index.indexing import host_integers  # noqa: PLC0415

    rows = host_integers(index, op, "index").reshape(-1) % max(x.shape[d], 1)
    order = np.argsort(rows, kind="stable")
    first = np.searchsorted(rows[order], rows[order], side="left")
    turn = np.empty_like(rows)
    turn[order] = np.arange(rows.size) - first  # (how many rows before it name the same row)
    at = (slice(None),) * d
    if alpha != 1:
        src = (src.float() * float(np.asarray(alpha).astype(x.dtype))).astype(x.dtype)
    out, wide = x, src.float()
    for k in range(int(turn.max()) + 1 if turn.size else 0):
        mine = np.flatnonzero(turn == k)
        pick = Tensor(mine, device=x._dev)
        step = ops.ScatterAddAlong.apply(wide.index_select(d, pick), idx[at + (mine,)], args=(d, x.shape))
        out = (out.float() + step).astype(x.dtype)
    return out


def _int_extreme(dtype: np.dtype, reduce: str) -> int:
    info = np.iinfo(dtype)
    return int(info.min if reduce == "amax" else info.max)


# -- scans ------------------------------------------------------------------------------
def _cum_extreme(x: Tensor, dim: int, pick: str) -> ValuesIndices:
    x = _tensor(x, "cum" + pick)
    if x.ndim == 0:
        dims.axes(x.shape, dim, "cum" + pick)
        return values_indices("cum" + pick, x, Tensor.zeros((), dtype=np.int64, device=x._dev))
    d = _one_dim(x, dim, "cum" + pick)
    idx = ops.CumArgExtreme.apply(x, args=(d, pick))
    return values_indices(
        "cum" + pick, saved_for_backward(ops.GatherAlong.apply(x, idx, args=(d, x.shape)), x), idx
    )  # (as PyTorch's)


@public(method=True)
def cummax(input: Tensor, dim: int | None = None, *, axis: int | None = None) -> ValuesIndices:  # noqa: A002
    """The running maximum along ``dim`` and where it was (the latest of ties), as
    ``torch.cummax``; the gradient goes to the entry each value came from."""
    return _cum_extreme(input, dims.required(axis, dim, "cummax"), "max")


@public(method=True)
def cummin(input: Tensor, dim: int | None = None, *, axis: int | None = None) -> ValuesIndices:  # noqa: A002
    """The running minimum along ``dim`` and where it was, as ``torch.cummin``."""
    return _cum_extreme(input, dims.required(axis, dim, "cummin"), "min")


@public(method=True, dtypes="floating")
@composite("logcumsumexp")
def logcumsumexp(input: Tensor, dim: int | None = None, *, axis: int | None = None) -> Tensor:  # noqa: A002
    """``log(cumsum(exp(input)))`` along ``dim`` without overflow or underflow: a log-depth
    scan whose every step is a log-add-exp with the entries ``s`` places before; PyTorch's gradient."""
    dim = dims.required(axis, dim, "logcumsumexp")
    x = _floating(input, "logcumsumexp")
    if x.dtype.kind == "c" and x.numel():  # (an empty one: the scan alone, as a real one)
        # differentiated as the formula, shifted by the largest real part along dim, held constant; its
        # value PyTorch's scan's (whose imaginary parts keep their branch, not the logarithm's principal one)
        m = x.real.detach().amax(dim, keepdim=True) if x.ndim else x.real.detach()
        m = where(m.abs() == math.inf, m.new_zeros(()), m)
        formula = saved_for_backward((x - m).exp().cumsum(dim).log() + m, x, output=True)
        with no_grad():
            value = _logcumsumexp(x.detach(), dim)
        return with_gradient_of(value, formula)
    return _logcumsumexp(x, dim)


def _logcumsumexp(x: Tensor, dim: int) -> Tensor:
    if x.ndim == 0:
        dims.axes(x.shape, dim, "logcumsumexp")
        return ops.Logcumsumexp.apply(x, args=0)
    return ops.Logcumsumexp.apply(x, args=_one_dim(x, dim, "logcumsumexp"))


# -- shape --------------------------------------------------------------------------
@public(method=True)
def diagonal(input: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:  # noqa: A002
    """The diagonal of the plane ``(dim1, dim2)`` (``offset`` above it, or below when
    negative), as a new last axis, as ``torch.diagonal``."""
    x = _tensor(input, "diagonal")
    d1, d2 = dims.axes(x.shape, (dim1, dim2), "diagonal") or (0, 0)  # (the two axes must differ)
    if x.ndim < 2:
        raise RuntimeError(f"diagonal: needs at least 2 dimensions, got shape {tuple(x.shape)}")
    # A strided view, as PyTorch's, for any two axes (next to each other or not): element k
    # reads x at k + max(0, -offset) along d1 and k + max(0, offset) along d2
    offset = int(offset)
    n1, n2 = x.shape[d1], x.shape[d2]
    length = builtins.max(0, builtins.min(n1 - builtins.max(0, -offset), n2 - builtins.max(0, offset)))
    rest = [i for i in range(x.ndim) if i not in (d1, d2)]
    start = [0] * x.ndim
    if length:
        start[d1], start[d2] = builtins.max(0, -offset), builtins.max(0, offset)
    steps = [tuple(int(i == r) for i in range(x.ndim)) for r in rest]
    steps.append(tuple(int(i in (d1, d2)) for i in range(x.ndim)))
    shape = tuple(x.shape[r] for r in rest) + (length,)
    return ops.Diagonal.apply(x, args=(shape, tuple(start), tuple(steps)))


@public(method=True)
def diag(input: Tensor, diagonal: int = 0) -> Tensor:  # noqa: A002
    """A 1-D tensor as the ``diagonal``-th diagonal of a square matrix, or a 2-D tensor's
    ``diagonal``-th diagonal, as ``torch.diag``."""
    x = _tensor(input, "diag")
    if x.ndim == 2:  # (this function's argument ``diagonal`` hides the module's function of that name)
        # a copy: PyTorch's diag is new memory (its diagonal a view), so changing it in place
        # never changes the matrix
        return globals()["diagonal"](x, diagonal).clone()
    if x.ndim != 1:
        raise RuntimeError(f"diag: needs a 1-D or 2-D tensor, got shape {tuple(x.shape)}")
    n, k = x.shape[0], builtins.abs(diagonal)
    eye = Tensor.eye(n, dtype=np.bool_, device=x._dev)
    square = where(eye, x.reshape(n, 1).expand(n, n), Tensor.zeros((), dtype=x.dtype, device=x._dev))
    if k == 0:
        return square
    zc = Tensor.zeros((n, k), dtype=x.dtype, device=x._dev)
    zr = Tensor.zeros((k, n + k), dtype=x.dtype, device=x._dev)
    if diagonal > 0:  # above: zero columns on the left, zero rows below
        return cat([cat([zc, square], 1), zr], 0)
    return cat([zr, cat([square, zc], 1)], 0)


@public(method=True)
def trace(input: Tensor, *example_args: Any) -> Tensor:  # noqa: A002 - PyTorch's name
    """The sum of a matrix's main diagonal, as ``torch.trace`` (integers sum to int64).
    The tracer of functions is :func:`tinygrad_attn.jit.trace`.

    >>> tga.jit.trace(tga.tensor([[1.0, 2.0], [3.0, 4.0]]))  # doctest: +SKIP
    tensor(5.)
    """
    if callable(input) and not isinstance(input, Tensor) or example_args:  # (the tracer's old spelling)
        raise TypeError(
            f"trace: expected a Tensor (torch.trace, the sum of a matrix's diagonal), got the callable {input!r}; "
            "to trace a function into a program use tga.jit.trace(fn, *example_args)"
        )
    x = _tensor(input, "trace")
    if x.ndim != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {x.ndim} (shape {tuple(x.shape)})")
    if x.dtype == np.bool_:
        raise NotImplementedError("trace: not implemented for bool tensors (as in PyTorch); convert with .long()")
    d = diagonal(x)
    return (d if d.dtype.kind in "fc" else d.astype(np.int64)).sum()


@public(function=False, method=True)
def unfold(input: Tensor, dimension: int, size: int, step: int) -> Tensor:  # noqa: A002
    """Every window of ``size`` entries along ``dimension``, ``step`` apart, as
    ``Tensor.unfold``: that axis becomes the window count, a new last axis the window."""
    x = _tensor(input, "unfold")
    (d,) = dims.axes(x.shape, dimension, "unfold") if x.ndim else (0,)
    n = x.shape[d] if x.ndim else 1
    if size < 0 or size > n:
        raise InvalidArgumentError(f"unfold: size {size} must be between 0 and dimension {d}'s size {n}")
    if step <= 0:
        raise InvalidArgumentError(f"unfold: step must be positive, got {step}")
    if x.ndim == 0:
        return x.reshape(1)
    # A strided view, as PyTorch's (windows overlap where step < size): window w, entry i
    # reads x at w * step + i along d
    size, step = int(size), int(step)
    count = (n - size) // step + 1
    shape = (*x.shape[:d], count, *x.shape[d + 1 :], size)
    steps = [tuple(int(i == k) for i in range(x.ndim)) for k in range(x.ndim)]
    steps[d] = tuple(step * int(i == d) for i in range(x.ndim))
    steps.append(tuple(int(i == d) for i in range(x.ndim)))
    return ops.SlidingWindows.apply(x, args=(shape, (0,) * x.ndim, tuple(steps)))


@public(method=True, aliases=("moveaxis",))
def movedim(input: Tensor, source: Sequence[int], destination: Sequence[int]) -> Tensor:  # noqa: A002
    """Axes ``source`` moved to positions ``destination``, the others kept in order."""
    x = _tensor(input, "movedim")
    if isinstance(source, (list, tuple)) != isinstance(destination, (list, tuple)):  # (its two overloads: ints, lists)
        raise TypeError(f"movedim(): received an invalid combination of arguments - got source {source!r} and "
                        f"destination {destination!r}; give two ints or two lists of ints")  # fmt: skip
    source, destination = dims.as_int(source), dims.as_int(destination)
    src = (source,) if isinstance(source, (int, np.integer)) else tuple(source)
    dst = (destination,) if isinstance(destination, (int, np.integer)) else tuple(destination)
    if len(src) != len(dst):
        raise RuntimeError(f"movedim: {len(src)} source dims and {len(dst)} destination dims; give as many of each")
    s = dims.axes(x.shape, src, "movedim") if src else ()
    t = dims.axes(x.shape, dst, "movedim") if dst else ()
    if len(set(s)) != len(s) or len(set(t)) != len(t):
        raise RuntimeError(f"movedim: repeated dim in source {src} or destination {dst}")
    order = [None] * x.ndim
    for a, b in zip(s, t):
        order[b] = a
    rest = iter(i for i in range(x.ndim) if i not in s)
    return x.permute([o if o is not None else next(rest) for o in order])


moveaxis = movedim


@public
def unflatten(input: Tensor, dim: int, sizes: tuple[int, ...]) -> Tensor:  # noqa: A002
    """Axis ``dim`` split into ``sizes`` (one may be -1)."""
    x = _tensor(input, "unflatten")
    d = dims.one(x.shape, dim, "unflatten", scalar_ok=False)
    sizes = tuple(int(s) for s in sizes)
    if not sizes:
        raise RuntimeError("unflatten: sizes must not be empty")
    known = math.prod(s for s in sizes if s != -1)
    if sizes.count(-1) > 1 or (-1 not in sizes and known != x.shape[d]) or (known and x.shape[d] % known):
        raise RuntimeError(f"unflatten: sizes {sizes} do not multiply to dimension {d}'s size {x.shape[d]}")
    return x.reshape((*x.shape[:d], *sizes, *x.shape[d + 1 :]))


@public
def meshgrid(*tensors: Any, indexing: str | None = None) -> tuple[Tensor, ...]:
    """Coordinate grids from 1-D tensors: ``"ij"`` (matrix; what PyTorch's ``None`` means) or ``"xy"``."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    if indexing is None:
        indexing = "ij"
    if indexing not in ("ij", "xy"):
        raise InvalidArgumentError(f"meshgrid: indexing must be 'ij' or 'xy', not {indexing!r}")
    ts = [_tensor(t, "meshgrid") for t in tensors]
    if not ts:
        raise RuntimeError("meshgrid expects a non-empty TensorList")
    for t in ts:  # (PyTorch's rule: a 0-d tensor is one point, anything above 1-D a mistake)
        if t.ndim > 1:
            raise RuntimeError(
                f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got shape {tuple(t.shape)}"
            )
    ts = [t.reshape(-1) for t in ts]
    if len({t.dtype for t in ts}) > 1:  # (PyTorch's does not promote them)
        raise RuntimeError(f"meshgrid expects all tensors to have the same dtype, got {[str(t.dtype) for t in ts]}")
    if len(ts) >= 2 and indexing == "xy":
        ts[0], ts[1] = ts[1], ts[0]
    shape = tuple(t.shape[0] for t in ts)
    n = len(ts)
    out = [t.reshape(tuple(-1 if i == k else 1 for i in range(n))).expand(shape) for k, t in enumerate(ts)]
    if n >= 2 and indexing == "xy":  # ("xy" is "ij" of the first two swapped, outputs swapped back)
        out[0], out[1] = out[1], out[0]
    return tuple(out)


# -- reductions ------------------------------------------------------------------------
@public
def var_mean(input: Tensor, dim: int | Sequence[int] | bool | None = None, unbiased: bool | None = None, keepdim: bool = False, *,  # noqa: A002
             correction: Any = None) -> tuple[Tensor, Tensor]:  # fmt: skip
    """``(var, mean)`` over ``dim``, as ``torch.var_mean`` (unbiased unless told otherwise)."""
    x = _tensor(input, "var_mean")
    if x.dtype.kind not in "fc":
        raise UnsupportedDtypeError(f"var_mean only support floating point and complex dtypes, got {x.dtype}")
    if isinstance(dim, bool):  # PyTorch's var_mean(x, unbiased) overload
        dim, unbiased = None, dim
    if isinstance(unbiased, (int, np.integer)) and not isinstance(unbiased, bool) and dim is None:
        dim, unbiased = unbiased, None  # var_mean(x, 1): the dim
    c = 1 if correction is None and unbiased is None else correction
    return var(x, dim, unbiased, keepdim, correction=c), x.mean(dim=dim, keepdim=keepdim)


@public
def std_mean(input: Tensor, dim: int | Sequence[int] | bool | None = None, unbiased: bool | None = None, keepdim: bool = False, *,  # noqa: A002
             correction: Any = None) -> tuple[Tensor, Tensor]:  # fmt: skip
    """``(std, mean)`` over ``dim``, as ``torch.std_mean``."""
    v, m = var_mean(input, dim, unbiased, keepdim, correction=correction)
    return saved_for_backward(sqrt_of_variance(v), output=True), m  # (PyTorch's keeps the input and the std)


@public(function=False, method=True)
def sum_to_size(input: Tensor, *size: Any) -> Tensor:  # noqa: A002
    """``input`` summed down to ``size``, which it must broadcast from (``Tensor.sum_to_size``)."""
    x = _tensor(input, "sum_to_size")
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    size = tuple(int(s) for s in size)
    try:
        fits = len(size) <= x.ndim and np.broadcast_shapes(size, x.shape) == x.shape
    except ValueError:
        fits = False
    if not fits:
        raise RuntimeError(f"sum_to_size: size {size} is not expandable to the tensor's size {tuple(x.shape)}")
    if not size:  # the total, new memory as PyTorch's (a 0-d input too: only a same-shape result is the input)
        return x.sum()
    lead = x.ndim - len(size)
    axes = tuple(range(lead)) + tuple(lead + i for i, s in enumerate(size) if s == 1 and x.shape[lead + i] != 1)
    out = x.sum(axes, keepdims=True) if axes else x
    return out.reshape(size)


# -- random ------------------------------------------------------------------------------
@public(dtypes="floating", operands=("mean", "std"))
@stand_in()
def normal(mean: Any = 0.0, std: Tensor | float = 1.0, size: Any = None, *, generator: Any = None, dtype: Any = None,
           device: Any = None, requires_grad: bool = False) -> Tensor:  # fmt: skip
    """Normal draws, as ``torch.normal``: ``mean`` and ``std`` tensors (broadcast), or
    numbers with ``size``; PyTorch's numbers for a seed. No gradient flows to them."""
    if size is not None:  # (PyTorch's overload with a size reads one-element tensors as the numbers they hold)
        mean, std = (v.item() if isinstance(v, Tensor) and v.ndim == 0 else v for v in (mean, std))
    like = mean if isinstance(mean, Tensor) else std if isinstance(std, Tensor) else None
    if like is None:
        if size is None:
            raise TypeError("normal: with a number mean and std, give the size")
        out = Tensor.zeros(*_shape(size), dtype=dtype, device=device).normal_(float(mean), float(std),
                                                                              generator=generator)  # fmt: skip
        return out.requires_grad_(requires_grad) if requires_grad else out
    if size is not None:  # (PyTorch's overloads: a size goes with two numbers only)
        raise TypeError(f"normal(): a size ({size!r}) goes with a number mean and std, not with a tensor")
    if like.dtype.kind not in "fc":  # (the draws take the dtype of the tensor that shapes them: PyTorch's)
        raise NotImplementedError(f"normal: draws of dtype {like.dtype} are not implemented; give a floating mean")
    m = mean.detach() if isinstance(mean, Tensor) else mean
    s = std.detach() if isinstance(std, Tensor) else std
    if isinstance(s, Tensor) and bool((s < 0).any()):
        raise RuntimeError("normal: std must be >= 0")
    shape = np.broadcast_shapes(*(t.shape for t in (m, s) if isinstance(t, Tensor)))
    dt = like.dtype if like.dtype.kind in "fc" else np.float32
    # (PyTorch's order: standard draws, or of std when it is a number, then times std, plus mean)
    scale = 1.0 if isinstance(s, Tensor) else float(s)
    z = Tensor.zeros(shape, dtype=dt, device=like._dev).normal_(0.0, scale, generator=generator)
    return (z * s if isinstance(s, Tensor) else z) + m


def _shape(size: Any) -> tuple[int, ...]:
    return (int(size),) if isinstance(size, (int, np.integer)) else tuple(int(s) for s in size)


# Tensor.unflatten names its operand ``self``, as PyTorch's method does (the function's is ``input``)
@public(name="unflatten", function=False, method=True)
def _unflatten_method(self: Tensor, dim: int, sizes: Sequence[int]) -> Tensor:
    """Axis ``dim`` split into ``sizes`` (one may be -1)."""
    return unflatten(self, dim, sizes)


# Tensor.where(condition, y) is torch.where(condition, self, y): the tensor is the value taken
# where the condition holds (in tinygrad's spelling the tensor is the condition; not PyTorch's)
@public(name="where", function=False, method=True)
def _where_method(self: Tensor, condition: Tensor, y: Tensor | float) -> Tensor:
    """``self`` where ``condition`` holds, else ``y`` (``torch.where(condition, self, y)``)."""
    return where(condition, self, y)


# Python's reflected operators PyTorch gives Tensor that _tensor.py does not define: the operands swapped
@public(function=False, method=True)
def __rand__(self: Tensor, other: Any) -> Tensor:
    return bitwise_and(other, self)


@public(function=False, method=True)
def __ror__(self: Tensor, other: Any) -> Tensor:
    return bitwise_or(other, self)


@public(function=False, method=True)
def __rxor__(self: Tensor, other: Any) -> Tensor:
    return bitwise_xor(other, self)


@public(function=False, method=True)
def __rlshift__(self: Tensor, other: Any) -> Tensor:
    return bitwise_left_shift(other, self)


@public(function=False, method=True)
def __rrshift__(self: Tensor, other: Any) -> Tensor:
    return bitwise_right_shift(other, self)


@public(method=True)
def allclose(input: Tensor, other: Any, rtol: float = 1e-5, atol: float = 1e-8, equal_nan: bool = False) -> bool:  # noqa: A002
    """Whether :func:`isclose` holds everywhere."""
    return bool(isclose(input, other, rtol, atol, equal_nan).all())


# -- index_put_ -----------------------------------------------------------------------------
@public(function=False, method=True)
def index_put_(input: Tensor, indices: Sequence[Tensor], values: Any, accumulate: bool = False) -> Tensor:  # noqa: A002
    """``index_put`` in place (``Tensor.index_put_``; ``accumulate`` sums repeated indices)."""
    from ..mutation.inplace import apply_inplace  # noqa: PLC0415 - (the one in-place mechanism)

    v = values if isinstance(values, Tensor) else Tensor(np.asarray(values), device=input._dev)
    return apply_inplace(input, "index_put_", lambda x, v: x.index_put(indices, v, accumulate), v)
