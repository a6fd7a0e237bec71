"""Dtypes under PyTorch's names: ``tga.float32``, ``tga.long``, ``tga.bool``, ...

They are NumPy dtypes (what ``Tensor.dtype`` returns), so ``x.dtype == tga.float32``
and ``Tensor(..., dtype=tga.int64)`` work with either spelling. This module binds the
names ``bool``, ``int`` and ``float`` and so uses none of Python's builtins of those
names; other modules never import it with ``*``.
"""

from __future__ import annotations

import builtins
from typing import Any

import numpy as np

from ..engine import declare as _declare
from ..engine.bfloat16 import BFLOAT16 as _BFLOAT16
from ..engine.bfloat16 import INSTALL_HINT as _BFLOAT16_HINT


class dtype:  # noqa: N801 - PyTorch's name
    """A dtype as PyTorch's ``torch.dtype``: one object per dtype, printed ``torch.float32``,
    with ``is_floating_point``, ``is_complex``, ``is_signed``, ``itemsize``, ``to_real()`` and
    ``to_complex()``. It stands for its NumPy dtype (``.dtype``, which NumPy reads wherever it
    takes a dtype: ``np.zeros(2, tga.int64)``, ``a.astype(t.dtype)``), equals it and hashes as
    it, and answers NumPy's attributes (``kind``, ``name``, ``type``) for the library's code.

    >>> str(tga.tensor([1.0]).dtype)
    'torch.float32'
    """

    __slots__ = ("dtype", "kind", "name", "itemsize", "char", "type", "_hash")

    def __init__(self, *_: Any) -> None:
        raise TypeError("cannot create 'torch.dtype' instances")

    @classmethod
    def _of(cls, d: np.dtype) -> dtype:
        self = object.__new__(cls)
        self.dtype, self.kind, self.name, self.itemsize, self.char, self.type = (
            d,
            "f" if d is _BFLOAT16 else d.kind,  # (NumPy files ml_dtypes' bfloat16 under 'V')
            d.name,
            d.itemsize,
            d.char,
            d.type,
        )
        self._hash = hash(d)
        return self

    def __getattr__(self, name: str) -> Any:  # NumPy's other attributes (``str``, ``num``, ``byteorder``)
        return getattr(object.__getattribute__(self, "dtype"), name)

    def __repr__(self) -> str:
        return "torch." + self.name

    __str__ = __repr__

    def __eq__(self, other: object) -> builtins.bool:
        if other.__class__ is dtype:
            return self is other
        if other is None:  # (NumPy reads None as float64)
            return False
        try:
            return builtins.bool(self.dtype == other)
        except TypeError:
            return NotImplemented

    def __ne__(self, other: object) -> builtins.bool:
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else not eq

    def __hash__(self) -> builtins.int:
        return self._hash

    def __reduce__(self) -> tuple:
        return (torch_dtype, (self.name,))

    def __copy__(self) -> dtype:
        return self

    def __deepcopy__(self, memo: Any) -> dtype:
        return self

    @property
    def is_floating_point(self) -> builtins.bool:
        return self.kind == "f"

    @property
    def is_complex(self) -> builtins.bool:
        return self.kind == "c"

    @property
    def is_signed(self) -> builtins.bool:
        return self.kind in "ifc"

    def to_real(self) -> dtype:
        return torch_dtype({"complex64": "float32", "complex128": "float64"}.get(self.name, self.name))

    def to_complex(self) -> dtype:
        """The complex dtype of this floating one's precision (a complex one itself); PyTorch's
        ``RuntimeError`` for an integer or bool dtype, which has none."""
        if self.kind not in "fc":
            raise RuntimeError(f"Unknown Complex ScalarType for {_SCALAR_TYPE.get(self.name, self.name)}")
        return torch_dtype(
            {"float16": "complex64", "bfloat16": "complex64", "float32": "complex64", "float64": "complex128"}.get(
                self.name, self.name
            )
        )


class _UnheldDtype(dtype):
    """A PyTorch dtype this library cannot hold (``bfloat16`` without the ``ml_dtypes`` package),
    so that code naming it runs (``{"bfloat16": torch.bfloat16}[name]``, ``x.dtype == torch.bfloat16``)
    while a tensor asked of it is refused with a ``TypeError`` that says so and what to install:
    wherever its NumPy dtype is read."""

    __slots__ = ()

    @classmethod
    def _named(cls, name: str, itemsize: builtins.int) -> _UnheldDtype:
        self = object.__new__(cls)
        self.kind, self.name, self.itemsize, self.char, self.type = "f", name, itemsize, "", None
        self._hash = hash("torch." + name)
        return self

    def refuse(self) -> None:
        raise TypeError(f"the dtype {self} is not supported: NumPy has no {self.name} of its own; install it with "
                        f"{_BFLOAT16_HINT}, or use torch.float16 (.half()) or torch.float32 (.float())")  # fmt: skip

    @property
    def dtype(self) -> Any:  # type: ignore[override]  # (what NumPy reads: the refusal)
        self.refuse()

    def __getattr__(self, name: str) -> Any:
        raise AttributeError(f"torch.{self.name} has no attribute {name!r}")

    def __eq__(self, other: object) -> builtins.bool:
        return self is other or (isinstance(other, str) and other in (self.name, "torch." + self.name))

    def __ne__(self, other: object) -> builtins.bool:
        return not self.__eq__(other)

    def __hash__(self) -> builtins.int:
        return self._hash

    def __reduce__(self) -> str:
        return self.name  # (pickled by name: this module's attribute)


_TORCH_DTYPES: dict[Any, dtype] = {}


def torch_dtype(d: Any) -> dtype:
    """The :class:`dtype` of ``d`` (a NumPy dtype, a dtype, or anything ``numpy.dtype`` reads)."""
    hit = _TORCH_DTYPES.get(d)
    if hit is None:
        if d.__class__ is _UnheldDtype:
            d.refuse()
        nd = np.dtype(d)
        hit = _TORCH_DTYPES.get(nd)
        if hit is None:
            hit = _TORCH_DTYPES[nd] = dtype._of(nd)
    return hit


float16 = torch_dtype("float16")
float32 = torch_dtype("float32")
float64 = torch_dtype("float64")
int8 = torch_dtype("int8")
int16 = torch_dtype("int16")
int32 = torch_dtype("int32")
int64 = torch_dtype("int64")
uint8 = torch_dtype("uint8")
# (PyTorch's wider unsigned integers: dtypes for storing and converting, with few ops of their own there)
uint16 = torch_dtype("uint16")
uint32 = torch_dtype("uint32")
uint64 = torch_dtype("uint64")
complex64 = torch_dtype("complex64")
complex128 = torch_dtype("complex128")
bool = torch_dtype(np.bool_)  # noqa: A001 - PyTorch's name

# (a real dtype where ml_dtypes is installed; a name whose tensors are refused where it is not)
bfloat16 = torch_dtype(_BFLOAT16) if _BFLOAT16 is not None else _UnheldDtype._named("bfloat16", 2)

# PyTorch's second names for the same dtypes.
half = float16
float = float32  # noqa: A001
double = float64
short = int16
int = int32  # noqa: A001
long = int64
cfloat = complex64
cdouble = complex128

# -- promotion: torch.result_type's rules, in one place ----------------------------------
_CATEGORY = {"b": 0, "u": 1, "i": 1, "f": 2, "c": 3}  # bool < integer < float < complex
_DEFAULT_FLOAT = [float32]  # PyTorch's default dtype: what a Python float and a float factory make (one cell)


def get_default_dtype() -> np.dtype:
    """The floating dtype factories and Python floats give when no dtype is named (float32
    unless :func:`set_default_dtype` changed it), as ``torch.get_default_dtype``."""
    return _DEFAULT_FLOAT[0]


def set_default_dtype(d: Any) -> None:
    """Make ``d`` (a floating dtype) the default dtype, as ``torch.set_default_dtype``.

    >>> set_default_dtype(float64); tensor([1.0]).dtype  # doctest: +SKIP
    dtype('float64')
    """
    dt = torch_dtype(d)
    if dt.kind != "f":
        raise TypeError(f"set_default_dtype: only floating-point types are supported as the default type, got {dt}")
    _DEFAULT_FLOAT[0] = dt


def _default_of_category(category: int) -> np.dtype:
    """A Python number's dtype by its category (bool, integer, floating, complex)."""
    if category == 2:
        return _DEFAULT_FLOAT[0]
    if category == 3:
        return default_complex_dtype()
    return {0: bool, 1: int64}[category]


def default_complex_dtype() -> np.dtype:
    """The dtype of a complex Python number, by the default dtype (complex128 with float64); PyTorch's
    error where the default is bfloat16, which has no complex dtype."""
    if _DEFAULT_FLOAT[0] is bfloat16:
        raise RuntimeError("invalid default scalar type for complex")
    return complex128 if _DEFAULT_FLOAT[0] == float64 else complex64


def _dtype_argument(op: str, names: tuple[str, str], *values: object) -> None:
    """PyTorch's ``TypeError`` for an argument of ``op`` typed ``torch.dtype`` that is none: a
    dtype (ours or NumPy's) or a Python type passes, a string, a tensor or None does not."""
    for position, (name, v) in enumerate(zip(names, values), 1):
        if not isinstance(v, (dtype, np.dtype, type)):
            raise TypeError(
                f"{op}(): argument '{name}' (position {position}) must be torch.dtype, not {type(v).__name__}"
            )


def can_cast(from_: np.dtype, to: np.dtype) -> builtins.bool:
    """PyTorch's ``can_cast``: whether an op may write a result of dtype ``from_`` into a tensor
    of dtype ``to`` (within a category or up, never down: no float into an integer tensor,
    no integer into a bool one)."""
    _dtype_argument("can_cast", ("from_", "to"), from_, to)
    return _CATEGORY[torch_dtype(from_).kind] <= _CATEGORY[torch_dtype(to).kind]


# PyTorch's names of the dtypes, which its error messages use ("... not implemented for 'Float'")
_SCALAR_TYPE = {"bool": "Bool", "uint8": "Byte", "int8": "Char", "int16": "Short", "int32": "Int", "int64": "Long",
                "uint16": "UInt16", "uint32": "UInt32", "uint64": "UInt64",
                "float16": "Half", "bfloat16": "BFloat16", "float32": "Float", "float64": "Double", "complex64": "ComplexFloat",
                "complex128": "ComplexDouble"}  # fmt: skip


def scalar_type_name(dt: object) -> str:
    """PyTorch's name of a dtype in its messages: ``Float`` for float32, ``Long`` for int64."""
    name = np.dtype(dt).name
    return _SCALAR_TYPE.get(name, name)


class OperandDtypeError(TypeError, RuntimeError):
    """An operand of a dtype the op does not read (a float mask, a float index): PyTorch's
    ``RuntimeError``, and a ``TypeError`` as the library has always raised for these."""


class UnsupportedDtypeError(NotImplementedError, TypeError):
    """An op that has no kernel for a dtype (``&`` of floats, ``//`` of bools): PyTorch's
    ``NotImplementedError`` ("... not implemented for 'Float'"), and the ``TypeError`` that
    NumPy raises for these."""


def check_fill_value(op: str, value: object, dtype: object) -> None:
    """PyTorch's check of a number written into an integer tensor (``full``, ``fill_``,
    ``masked_fill``, ``index_fill``): a float must lie in the dtype's range (NaN and inf never
    do), an int too, except that an unsigned dtype also takes down to ``-max`` (it wraps). A sequence
    or a string is PyTorch's ``TypeError`` (its parser's ``Scalar``), not a value broadcast into the tensor."""
    if isinstance(value, (list, tuple, str, bytes, dict, set)):
        raise TypeError(f"{op}(): argument 'value' must be a number or a 0-d tensor, not {type(value).__name__}")
    dt = np.dtype(dtype)
    number = (builtins.int, builtins.float, np.integer, np.floating)
    if dt.kind not in "iu" or isinstance(value, (builtins.bool, np.bool_)) or not isinstance(value, number):
        return
    info = np.iinfo(dt)
    if isinstance(value, (builtins.float, np.floating)):
        ok = info.min <= builtins.float(value) <= builtins.float(info.max)
    else:
        low = -builtins.int(info.max) if dt.kind == "u" else builtins.int(info.min)
        ok = low <= builtins.int(value) <= builtins.int(info.max)
    if not ok:
        raise RuntimeError(f"{op}: value cannot be converted to type {dt.name} without overflow: {value!r}")


#: PyTorch's "barebones" unsigned dtypes: promoted with a float dtype only (their ops: ``engine/barebones.py``)
_BAREBONES = frozenset((uint16, uint32, uint64))


def promote_types(a: np.dtype, b: np.dtype) -> np.dtype:
    """PyTorch's ``promote_types``: across categories the higher one's dtype as it is (an
    int64 with a float16 is float16, where NumPy makes float64); within one, the smallest
    dtype holding both (uint8 with int8 is int16, as NumPy)."""
    _dtype_argument("promote_types", ("type1", "type2"), a, b)
    a, b = torch_dtype(a), torch_dtype(b)
    if a is b:
        return a
    if (a in _BAREBONES and b.kind != "f") or (b in _BAREBONES and a.kind != "f"):  # (only floats hold them)
        raise RuntimeError(f"Promotion for uint16, uint32, uint64 types is not supported, attempted to promote "
                           f"{scalar_type_name(a)} and {scalar_type_name(b)} (promote_types: only a float dtype "
                           "holds both; convert one with .long() or .float())")  # fmt: skip
    for d in (a, b):
        if d.kind not in _CATEGORY:  # (strings, objects: data no tensor holds)
            raise TypeError(f"promote_types: no tensor holds values of the NumPy dtype {d.dtype} (got {a} and {b})")
    ca, cb = _CATEGORY[a.kind], _CATEGORY[b.kind]
    if a is bfloat16 or b is bfloat16:  # (NumPy has no rule for it: PyTorch's table)
        other = b if a is bfloat16 else a
        if ca != cb:
            return a if ca > cb else b
        # (float16 with bfloat16: float32, the smallest float holding both; a complex one: complex64 at least)
        return float32 if other is float16 else other
    if {a.kind, b.kind} == {"f", "c"}:  # (complex wide enough for both: float64 with complex64 is complex128)
        return torch_dtype(np.promote_types(a.dtype, b.dtype))
    if ca != cb:
        return a if ca > cb else b
    return torch_dtype(np.promote_types(a.dtype, b.dtype))


def result_type(*operands: object) -> np.dtype:
    """The dtype of an elementwise op of ``operands``, as ``torch.result_type``.

    Each operand is a tensor (anything with ``dtype`` and ``ndim``) or a Python or NumPy
    scalar. Dimensioned tensors outrank 0-d tensors, which outrank scalars: a lower rank
    decides only when its category (bool < integer < float < complex) is higher, and then
    a scalar gives its category's default dtype (``float32_tensor * np.float64(0.5)`` is
    float32, ``int32_tensor + tensor(1)`` int32, ``int_tensor * 0.5`` float32).
    """
    tiers: list[np.dtype | None] = [None, None, None]  # dimensioned, 0-d, scalar
    for x in operands:
        dt = getattr(x, "dtype", None)
        if dt is not None and getattr(x, "ndim", 0) and not isinstance(x, np.generic):
            tier = 0
        elif dt is not None and not isinstance(x, np.generic):
            tier = 1
        else:
            tier = 2
            # (a NumPy bool is a number to PyTorch's argument parser, read as a float: int_tensor + np.True_ is float32)
            # (and a NumPy complex that is no Python complex as its real part, a float: np.complex64)
            as_float = isinstance(x, np.bool_) or (
                isinstance(x, np.complexfloating) and not isinstance(x, builtins.complex)
            )
            kind = "b" if isinstance(x, builtins.bool) else "f" if as_float else np.asarray(x).dtype.kind
            if kind == "O" and isinstance(x, builtins.int):  # (past uint64's range: PyTorch's parser's error)
                raise OverflowError(f"int too big to convert: {x} is outside [-2**63, 2**64)")
            if kind not in _CATEGORY:  # (None, a string, a list of them: what PyTorch's parser refuses)
                raise TypeError(f"expected a Tensor or a number as an operand, got {type(x).__name__}: {x!r:.40}")
            dt = _default_of_category(_CATEGORY[kind])
        dt = torch_dtype(dt)
        tiers[tier] = dt if tiers[tier] is None else promote_types(tiers[tier], dt)
    out: np.dtype | None = None
    for dt in tiers:  # from the highest rank down: a lower one counts only with a higher category
        if dt is None:
            continue
        if out is None:
            out = dt
        elif dt.kind == "c" and out.kind == "f":  # (a float keeps its width: float32, 0-d complex128: complex64)
            out = out.to_complex()
        elif _CATEGORY[dt.kind] > _CATEGORY[out.kind]:
            out = dt if out.kind != "b" and _CATEGORY[dt.kind] >= 2 else promote_types(out, dt)
    if out is None:
        raise TypeError("result_type: needs at least one operand")
    return out


def fill_value_in(op: str, value: Any, dtype: Any) -> Any:
    """``value`` as ``op`` writes it into a tensor of ``dtype``: checked by :func:`check_fill_value`,
    and a Python int into an integer dtype wrapped as PyTorch writes it (-1 is uint8's 255; NumPy
    would raise an OverflowError naming neither the op nor the dtype); any other value as given."""
    check_fill_value(op, value, dtype)
    dt = np.dtype(dtype)
    if isinstance(value, builtins.int) and not isinstance(value, builtins.bool) and dt.kind in "iu":
        return np.asarray(value).astype(dt).item()
    return value


def accumulate_dtype(dt: Any, dtype: Any = None) -> np.dtype:
    """The dtype a sum, product or running sum/product of a ``dt`` tensor is computed and
    returned in, as PyTorch's: ``dtype`` when given, else int64 for bools and integers
    (``uint8`` and ``int16`` products do not wrap around; NumPy would sum uint8 in uint64),
    else ``dt`` itself."""
    if dtype is not None:
        return torch_dtype(dtype)
    dt = torch_dtype(dt)
    return int64 if dt.kind in "biu" else dt


#: the NumPy dtypes a tensor holds (PyTorch's: no objects, strings, dates or long doubles)
_HELD = frozenset(np.dtype(n) for n in ("bool", "uint8", "int8", "int16", "int32", "int64", "uint16", "uint32",
                                         "uint64", "float16", "float32", "float64", "complex64", "complex128")) | (
    frozenset() if _BFLOAT16 is None else {_BFLOAT16})  # fmt: skip


def unheld_array_error(dt: np.dtype, op: str = "tensor") -> TypeError | None:
    """PyTorch's ``TypeError`` for a NumPy array of a dtype no tensor holds (``object``, ``str``,
    ``datetime64``, ``longdouble``, ...), or None for one it holds (in either byte order)."""
    if dt.newbyteorder("=") in _HELD:
        return None
    return TypeError(
        f"{op}: can't convert np.ndarray of type numpy.{dt.type.__name__}. The only supported types are: float64, float32, "
        "float16, complex64, complex128, int64, int32, int16, int8, uint64, uint32, uint16, uint8, and bool."
    )


class _Limits:
    """What ``finfo`` and ``iinfo`` share with PyTorch's: two are equal when every field is (so
    ``finfo(complex64) == finfo(float32)``), and neither is hashable."""

    __hash__ = None  # type: ignore[assignment]

    def __eq__(self, other: object) -> builtins.bool:
        return type(other) is type(self) and vars(other) == vars(self)

    def __ne__(self, other: object) -> builtins.bool:
        return not self.__eq__(other)


#: the limits of the floating dtypes NumPy has none of (finfo's fields), as PyTorch gives them
_UNHELD_FINFO = {
    "bfloat16": {"bits": 16, "eps": 2.0**-7, "max": 3.3895313892515355e38, "smallest_normal": 2.0**-126,
                 "resolution": 0.01},
}  # fmt: skip


class finfo(_Limits):  # noqa: N801 - PyTorch's name
    """The limits of a floating dtype as Python floats, as ``torch.finfo``: ``eps``, ``max``,
    ``min``, ``tiny`` (= ``smallest_normal``), ``resolution``, ``bits`` and ``dtype`` (its name).

    >>> finfo(float32).eps  # 1.1920928955078125e-07
    """

    def __init__(self, type: Any = None) -> None:  # noqa: A002 - PyTorch's argument name
        if (
            type is not None
            and getattr(type, "name", None) in _UNHELD_FINFO
            and (type.__class__ is _UnheldDtype or torch_dtype(type) is bfloat16)
        ):
            f = _UNHELD_FINFO[type.name]
            self.bits, self.dtype = f["bits"], type.name
            self.eps, self.max, self.min = f["eps"], f["max"], -f["max"]
            self.tiny = self.smallest_normal = f["smallest_normal"]
            self.resolution = f["resolution"]
            return
        dt = _DEFAULT_FLOAT[0] if type is None else np.dtype(type)
        if dt.kind not in "fc":
            raise TypeError(f"finfo() requires a floating point input type, got {dt}: use iinfo for integers")
        dt = torch_dtype(dt).to_real().dtype  # (a complex dtype's limits are its parts': finfo(complex64) is float32's)
        info = np.finfo(dt)
        self.bits, self.dtype = info.bits, dt.name
        self.eps, self.max, self.min = builtins.float(info.eps), builtins.float(info.max), builtins.float(info.min)
        self.tiny = self.smallest_normal = builtins.float(info.smallest_normal)
        self.resolution = 10.0**-info.precision  # (NumPy gives it in the dtype: float16 rounds 0.001)

    def __repr__(self) -> str:
        return (f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, eps={self.eps:g}, "
                f"smallest_normal={self.smallest_normal:g}, tiny={self.tiny:g}, dtype={self.dtype})")  # fmt: skip


class iinfo(_Limits):  # noqa: N801 - PyTorch's name
    """The limits of an integer dtype as Python ints, as ``torch.iinfo``: ``bits``, ``max``,
    ``min`` and ``dtype`` (its name). Not of ``bool``, as PyTorch's."""

    def __init__(self, type: Any) -> None:  # noqa: A002 - PyTorch's argument name
        dt = np.dtype(type)
        if dt.kind == "b":
            raise TypeError("torch.bool is not supported by torch.iinfo")
        if dt.kind not in "iu":
            raise TypeError(f"iinfo() requires an integer input type, got {dt}: use finfo for floats")
        info = np.iinfo(dt)
        self.bits, self.max, self.min, self.dtype = info.bits, builtins.int(info.max), builtins.int(info.min), dt.name

    def __repr__(self) -> str:
        return f"iinfo(min={self.min:g}, max={self.max:g}, dtype={self.dtype})"


__all__ = [
    "dtype", "finfo", "iinfo", "get_default_dtype", "set_default_dtype",
    "float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "complex64", "complex128",
    "uint16", "uint32", "uint64", "dtype", "bfloat16",
    "bool", "half", "float", "double", "short", "int", "long", "cfloat", "cdouble", "promote_types", "can_cast",
]  # fmt: skip


_declare.register_dtype_rules(UnsupportedDtypeError, result_type, scalar_type_name, get_default_dtype)
