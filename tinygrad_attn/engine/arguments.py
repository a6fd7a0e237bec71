"""PyTorch's argument types, read from a public function's own annotations.

PyTorch's functions parse their arguments against a schema: ``x.sum(0, 1)`` raises
``TypeError: sum(): argument 'keepdim' (position 2) must be bool, not int``, where Python's
truthiness would take the ``1``. A function declared with ``@public`` states the same types in
its annotations (``keepdim: bool = False``); :func:`typed` turns them into one check at the
call, generated once per function, so a user's mistake raises PyTorch's ``TypeError`` instead
of computing something else.

What each annotation takes is PyTorch's rule for the type (``python_arg_parser``'s):

- ``bool``: ``True`` or ``False`` only (not ``1``, not ``np.True_``, not a tensor);
- ``int``: a Python or NumPy integer, or a one-element integer tensor, not a ``bool`` or a float;
- ``float``: a number of any kind (``bool`` and complex included) or a one-element tensor;
- ``str``: a string;
- ``Sequence[int]``: PyTorch's ``int[N]``, a list or tuple of ints (or one int), not a string, a
  float or a tensor of several elements; ``tuple[int, ...]`` its ``int[]`` of no fixed length, which
  takes no lone int (``x.new_full(2, 0.0)`` raises);
- ``Tensor``: a tensor;
- ``Tensor | float`` (and a parameter ``other``): a tensor or a number (PyTorch's ``Tensor`` or
  ``Scalar`` overloads), never ``None``, a string, a list, a tuple or a NumPy array;

each with ``None`` too when the annotation is ``X | None`` or the default is ``None``. A value identical
to the parameter's default is taken as it is (a default sentinel is not checked): :data:`ABSENT` is the
default of a parameter that may be left out but is never ``None`` in PyTorch's schema. ``dtype`` is
PyTorch's ``ScalarType`` (:func:`is_dtype`). Other annotations (``Any``,
``Sequence[int]``, ...) and parameters whose names start with ``_`` are not checked.

As PyTorch's parser, the check reads NumPy's ``axis=`` as ``dim=`` and ``keepdims=`` as ``keepdim=``
(:data:`NUMPY_NAMES`) where the function has no parameter of the NumPy name itself
(``x.amax(axis=0, keepdims=True)``).

>>> import tinygrad_attn as tga
>>> tga.ones(2).sum(0, 1)
Traceback (most recent call last):
    ...
TypeError: sum(): argument 'keepdim' (position 2) must be bool, not int
"""

from __future__ import annotations

import functools
import inspect
import numbers
import os
from collections.abc import Callable
from typing import Any

import numpy as np

from . import function as _function
from . import switches as _switches
from .bfloat16 import kind_of

#: annotation (as written, a string under ``from __future__ import annotations``) -> (kind, optional)
_KINDS: dict[str, tuple[str, bool]] = {
    "Sequence[Tensor]": ("tensors", False),
    "Sequence[int]": ("ints", False),
    "Sequence[int] | None": ("ints", True),
    "tuple[int, ...]": ("ints!", False),
    # (PyTorch's overloads of a tensor or an int: repeat_interleave's repeats, histogram's bins; or of a
    # tensor or an int[]: tensor_split's indices_or_sections)
    "Tensor | int": ("int|Tensor", False),
    "Tensor | Sequence[int]": ("ints|Tensor", False),
    # (the dims of var/std or a flag in their place: PyTorch's var(unbiased) and nuclear_norm(keepdim) overloads)
    "int | Sequence[int] | bool": ("dim|bool", False),
    "int | Sequence[int] | bool | None": ("dim|bool", True),
}
for _kind in ("bool", "int", "float", "str", "Tensor"):
    _checked = "Tensor!" if _kind == "Tensor" else _kind  # (an annotated tensor is a tensor, not a number)
    _KINDS[_kind] = (_checked, False)
    _KINDS[f"{_kind} | None"] = (_checked, True)
    _KINDS[f"None | {_kind}"] = (_checked, True)
    _KINDS[f"Optional[{_kind}]"] = (_checked, True)
del _kind, _checked
#: PyTorch's ``Tensor`` or ``Scalar`` overloads (``clamp(min=)``, ``pow(exponent)``): a tensor or a number
_KINDS["Tensor | float"] = ("Tensor", False)
_KINDS["Tensor | float | None"] = ("Tensor", True)

#: what a Tensor-annotated parameter other than the first never takes
_NOT_TENSORS = (str, bytes, list, tuple, dict, set, np.ndarray)


_MISSING = object()


class _Absent:
    """The default of a parameter PyTorch's schema has no ``None`` for (:data:`ABSENT`)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<not given>"


#: the default of an optional parameter whose PyTorch schema takes no ``None`` (``trapezoid(y, x)``'s
#: ``x``, its ``dx``): left out it is the default, while an explicit ``None`` is checked as any value
#: of the annotation, and refused with PyTorch's ``TypeError`` (``trapezoid(y, None)``)
ABSENT: Any = _Absent()


def _type_name(v: Any) -> str:
    """PyTorch's name of a value's type in its messages: ``int``, ``numpy.bool``, ``Tensor``."""
    t = type(v)
    if isinstance(v, _function.Tensor):
        return "Tensor"
    if t.__module__ == "builtins":
        return t.__qualname__
    return f"{t.__module__.split('.')[0]}.{t.__qualname__.lstrip('_')}"


def _one_element_tensor(v: Any, kinds: str) -> bool:
    if not isinstance(v, _function.Tensor):
        return False
    try:
        return v.numel() == 1 and np.dtype(v._data.dtype).kind in kinds
    except TypeError:  # (a backend dtype NumPy cannot read: left to the op)
        return True


def _is_int(v: Any) -> bool:
    return (type(v) is not bool and isinstance(v, (int, np.integer))) or _one_element_tensor(v, "iu")


def _is_one_int(v: Any) -> bool:
    """PyTorch's ``int`` (a dim, an index, a size): an int, a NumPy integer or a 0-d integer tensor; a
    one-element tensor of one or more dims is refused there (taken only where an ``int[]`` goes)."""
    return _is_int(v) and not (isinstance(v, _function.Tensor) and v.ndim != 0)


def _is_float(v: Any) -> bool:
    return isinstance(v, (numbers.Number, np.number, np.bool_)) or _one_element_tensor(v, "biufc")


def _is_tensor_operand(v: Any) -> bool:
    return v is not None and not isinstance(v, _NOT_TENSORS)


def _is_tensor(v: Any) -> bool:
    return isinstance(v, _function.Tensor)


def _is_sequence_of_tensors(v: Any) -> bool:
    """PyTorch's ``Tensor[]`` (``cat``'s ``tensors``): a sequence, not one tensor (which would be
    read as the sequence of its rows) nor a number."""
    return hasattr(v, "__iter__") and not isinstance(v, (_function.Tensor, str, bytes, np.ndarray))


def is_int_sequence(v: Any) -> bool:
    """A list or tuple PyTorch's parser reads as ints: by its first element, an int (a NumPy integer,
    a one-element integer tensor), not a bool; past it a Python bool is read as 0 or 1."""
    return isinstance(v, (list, tuple)) and (
        not v or (_is_int(v[0]) and all(type(d) is bool or _is_int(d) for d in v[1:]))
    )


def _is_ints(v: Any) -> bool:
    """PyTorch's ``int[]`` (sizes, split sizes, repeats): a list or tuple of ints (NumPy integers and
    one-element integer tensors among them), or one int; not a string, a float, None or a tensor of
    several elements."""
    if _is_int(v):
        return True
    if isinstance(v, (list, tuple)):
        return is_int_sequence(v)
    return isinstance(v, np.ndarray) and v.ndim == 1 and v.dtype.kind in "iu"


def _is_int_list(v: Any) -> bool:
    """PyTorch's ``int[]`` of no fixed length (a size of ``new_full``, a shape): a list or tuple of ints, not
    one int (which PyTorch takes only where the schema gives the list a length: ``int[2] stride``)."""
    return is_int_sequence(v)


def _is_output_size(v: Any) -> bool:
    """An adaptive pool's ``output_size``: PyTorch's ``int[]`` whose entries may be ``None`` (that side
    keeps the input's size). A tensor of several entries is the function's to refuse: PyTorch's Python
    reads its length against the input's rank before its parser sees it."""
    if isinstance(v, _function.Tensor) and v.ndim > 0:
        return True
    if isinstance(v, (list, tuple)):
        return all(d is None or _is_int(d) for d in v)
    return _is_ints(v)


def _is_normalized_shape(v: Any) -> bool:
    """``layer_norm``'s ``normalized_shape``: PyTorch's ``int[]`` of no fixed length (not one int), whose
    parser takes no tensor there (``F.layer_norm(x, torch.tensor([3]))`` is its ``TypeError``)."""
    return _is_ints(v) and not _is_int(v)


def _is_dim(v: Any) -> bool:
    """PyTorch's ``dim`` of a reduction: an int, a list or tuple of them (``True`` may be one of
    them there, past the first), or a one-element integer tensor."""
    if _is_int(v):
        return True
    return is_int_sequence(v)


#: the NumPy dtype kinds PyTorch has dtypes of (bool, integers, floats, complex)
_TORCH_KINDS = frozenset("biufc")
_DTYPES_READ: dict[Any, bool] = {}


def is_dtype(v: Any) -> bool:
    """PyTorch's ``ScalarType`` (a ``dtype=``): a dtype of the library, or what NumPy reads as one of
    PyTorch's dtypes (``np.float32``, ``"int64"``, the library's reading); never a tensor, a number, a
    list, or what NumPy reads as bytes, text, a record, an object, a date or its ``longdouble``. A
    dtype the library cannot hold (``bfloat16`` without ml_dtypes) is the function's to refuse."""
    if isinstance(v, (_function.Tensor, numbers.Number, list, tuple, dict)):
        return False
    try:
        return _DTYPES_READ[v]
    except (KeyError, TypeError):  # (not read yet, or not hashable)
        pass
    try:
        d = np.dtype(v)
        ok = kind_of(d) in _TORCH_KINDS and d.char not in "gG" and d.fields is None
    except TypeError:
        ok = not isinstance(v, (str, bytes, np.ndarray))  # (the library's dtype without a NumPy one: its refusal)
    try:
        _DTYPES_READ[v] = ok
    except TypeError:
        pass
    return ok


#: each kind's test of a value that is not of the kind's plain Python class
_TESTS: dict[str, Callable[[Any], bool]] = {
    "bool": lambda v: False,
    "int": _is_one_int,
    "float": _is_float,
    "str": lambda v: isinstance(v, str),
    "Tensor": _is_tensor_operand,
    "Tensor!": _is_tensor,
    "dim": _is_dim,
    "dim|bool": lambda v: isinstance(v, (bool, np.bool_)) or _is_dim(v),
    "ints": _is_ints,
    "ints!": _is_int_list,
    "int|Tensor": lambda v: _is_int(v) or isinstance(v, _function.Tensor),
    "ints|Tensor": lambda v: _is_ints(v) or isinstance(v, _function.Tensor),
    "tensors": _is_sequence_of_tensors,
    "sizes": _is_output_size,
    "shape": _is_normalized_shape,
    "dtype": is_dtype,
}
_PLAIN = {
    "bool": "bool", "int": "int", "float": "float", "str": "str", "Tensor": None, "Tensor!": None, "dim": "int",
    "dim|bool": "int", "tensors": "list", "ints": "tuple", "ints!": None, "int|Tensor": "int", "ints|Tensor": None, "sizes": "tuple", "shape": "tuple", "dtype": None,
}  # fmt: skip
_EXPECTED = {
    "bool": "bool", "int": "int", "float": "float", "str": "str", "Tensor": "Tensor", "Tensor!": "Tensor",
    "dim": "tuple of ints", "dim|bool": "tuple of ints", "tensors": "tuple of Tensors", "ints": "tuple of ints", "ints!": "tuple of ints", "int|Tensor": "Tensor or int",
    "ints|Tensor": "Tensor or tuple of ints", "sizes": "tuple of ints", "shape": "tuple of ints",
    "dtype": "torch.dtype",
}  # fmt: skip
#: parameters annotated ``Any`` whose name alone says PyTorch's type, as its schemas name them:
#: ``dim`` of a reduction, ``other`` of a binary op (a tensor or a number), ``index`` and ``mask``
#: (a tensor), the sizes of a window, its steps or a normalised shape (PyTorch's ``int[]``: ``F.max_pool2d(x, 1.5)``
#: and ``F.layer_norm(x, 1.5)`` raise its ``TypeError`` before the input's rank is read), and the scales
#: ``alpha`` and ``beta`` (PyTorch's ``Scalar``: ``torch.sub(x, y, alpha=t)`` with a tensor of several entries raises)
_BY_NAME = {
    "dim": "dim", "other": "Tensor", "index": "Tensor!", "mask": "Tensor!", "kernel_size": "ints",
    "normalized_shape": "shape", "output_size": "sizes", "stride": "ints", "dilation": "ints", "dtype": "dtype",
    "alpha": "float", "beta": "float",
}  # fmt: skip
#: flags PyTorch reads by their truth in its Python-level ``nn.functional`` (``F.relu(x, 1)`` runs in place,
#: ``F.gaussian_nll_loss(..., full=np.True_)`` and ``F.multi_head_attention_forward``'s flags from a NumPy
#: array run): never checked as ``bool``
_TRUTH_FLAGS = {
    "inplace", "return_indices", "full", "recompute_scale_factor", "add_zero_attn", "need_weights",
    "use_separate_proj_weight", "average_attn_weights",
}  # fmt: skip
#: functions that are Python in PyTorch and read every flag by its truth (a NumPy bool is a flag there)
_TRUTH_READERS = {"multi_head_attention_forward"}


def refuse(op: str, param: str, position: int | None, kind: str, value: Any) -> None:
    """Raise PyTorch's ``TypeError`` for an argument of the wrong type (``position``: its index
    in the call; PyTorch counts a method's arguments after self, a free function's from 1)."""
    where = f" (position {position or 1})" if position is not None else ""
    raise TypeError(f"{op}(): argument '{param}'{where} must be {_EXPECTED[kind]}, not {_type_name(value)}")


def _as_number(v: Any) -> Any:
    """A NumPy integer or a one-element tensor where PyTorch's parser reads a number: the Python
    number (``x.diag_embed(offset=t[0])``, ``x.max(np.int64(1))``); anything else as it is."""
    if isinstance(v, np.integer):
        return int(v)
    if isinstance(v, np.floating):  # (a float32 scalar computes as PyTorch's double: NumPy would keep float32)
        return float(v)
    if isinstance(v, _function.Tensor) and v.ndim == 0 and not v.requires_grad and not _switches.tracing():
        return v.item()  # (one that wants a gradient, or a traced program's input, stays a tensor)
    return v


def index_value(v: Any) -> int | None:
    """``v`` as the int PyTorch reads where it takes an int (a Python or NumPy integer, a
    one-element integer tensor: ``F.max_pool2d(x, t[0])``), or None for anything else."""
    if not _is_int(v):
        return None
    return int(v.item()) if isinstance(v, _function.Tensor) else int(v)


def int_or_ints(v: Any) -> Any:
    """An int or a sequence of ints (sizes, dims) with each entry read by :func:`index_value`
    (a tuple for a sequence); anything else as it is, for the caller's own error."""
    one = index_value(v)
    if one is not None:
        return one
    if isinstance(v, (list, tuple)) and all(index_value(d) is not None for d in v):
        return tuple(index_value(d) for d in v)
    return v


def output_size(op: str, nd: int, v: Any) -> Any:
    """An adaptive pool's ``output_size`` with its entries read as ints (``None`` kept): PyTorch's
    1-d pools are C and read a one-element tensor as an int; its 2-d and 3-d ones are Python and
    take its length first (``TypeError: len() of a 0-d tensor``).
    A value of another kind (a string, a tensor of several entries for a 1-d pool, entries that are no
    ints) is PyTorch's ``TypeError``; a sequence of the wrong length is the caller's to refuse."""
    if isinstance(v, _function.Tensor) and v.ndim == 0 and nd > 1:
        raise TypeError(f"{op}: len() of a 0-d tensor (give output_size as an int or a tuple of {nd})")
    if isinstance(v, _function.Tensor) and v.ndim == 1 and nd > 1:  # (PyTorch's Python iterates it)
        v = tuple(v[i] for i in range(v.shape[0]))
    if isinstance(v, (list, tuple)):
        v = type(v)(d if d is None or index_value(d) is None else index_value(d) for d in v)
    else:
        v = int_or_ints(v)
    if isinstance(v, int):
        return v
    if not isinstance(v, (list, tuple)):
        raise TypeError(f"{op}(): argument 'output_size' must be tuple of ints, not {_type_name(v)}")
    for d in v:
        if d is not None and not isinstance(d, int):
            raise TypeError(
                f"{op}(): argument 'output_size' must be tuple of ints, but found element of type {_type_name(d)}"
            )
    return v


def _as_numbers(v: Any) -> Any:
    """PyTorch's ``int[]`` with its entries read as numbers (``stride=[t0, t1]``, ``kernel_size=t``)."""
    if isinstance(v, (list, tuple)) and any(not isinstance(d, int) and d is not None for d in v):
        return type(v)(_as_number(d) for d in v)
    return _as_number(v)


def _settle(op: str, args: tuple, kwargs: dict, param: str, position: int | None, kind: str, v: Any) -> tuple:
    """The call's arguments once ``v`` (of ``param``) is found to be of ``kind``, with a NumPy
    integer where an int goes made a Python int (as PyTorch reads it); or PyTorch's error."""
    if not _TESTS[kind](v):
        refuse(op, param, position, kind, v)
    read = _as_number(v) if kind in ("int", "dim", "dim|bool", "float") else _as_numbers(v) if kind == "ints" else v
    if read is not v:
        v = read
        if position is not None and position < len(args):
            args = (*args[:position], v, *args[position + 1 :])
        else:
            kwargs = {**kwargs, param: v}
    return args, kwargs


def _checks(fn: Callable, first: bool = False) -> list[tuple[inspect.Parameter, str, bool, int | None]]:
    """The parameters of ``fn`` that :func:`typed` checks: (parameter, kind, optional, position)."""
    if fn.__name__.startswith("__"):  # (Python's operators answer NotImplemented, as PyTorch's do)
        return []
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return []
    found = []
    for i, p in enumerate(sig.parameters.values()):
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) or p.name.startswith("_") or p.name in _TRUTH_FLAGS:
            continue
        ann = p.annotation if isinstance(p.annotation, str) else getattr(p.annotation, "__name__", None)
        kind_optional = _KINDS.get(ann) if isinstance(ann, str) else None
        if ann in ("Any", None) and p.name in _BY_NAME and i > 0:
            kind_optional = (_BY_NAME[p.name], p.name == "dim")
        if kind_optional is None or (kind_optional[0] == "bool" and fn.__name__ in _TRUTH_READERS):
            continue
        kind, optional = kind_optional
        if kind in ("Tensor", "Tensor!") and i == 0 and not first:  # (a free function's has its own check)
            continue
        position = i if p.kind != p.KEYWORD_ONLY else None
        if p.default is p.empty:
            p = p.replace(default=_MISSING)  # (a missing argument is fn's own error)
        found.append((p, kind, optional or p.default is None, position))
    return found


#: the names of a variable positional parameter of sizes or axes (``x.view(2, 3)``, ``x.permute(1, 0)``,
#: ``zeros(2, 3)``), and PyTorch's name of it
_INT_VARARGS = {"size": "size", "shape": "shape", "sizes": "sizes", "axes": "dims"}


#: PyTorch's name of the sizes in its "missing" message where it is not the parameter's (``x.repeat()``)
_MISSING_NAME = {"repeat": "repeats", "resize_": "size"}
#: functions whose sizes may be left out (PyTorch's ``resize`` reads none as a 0-d size and raises its own error)
_MAY_BE_EMPTY = {"resize"}


def missing(op: str, param: str) -> TypeError:
    """PyTorch's error for a required argument left out: ``x.permute()``, ``x.softmax()``."""
    return TypeError(f'{op}() missing 1 required positional arguments: "{param}"')


def _int_varargs(fn: Callable) -> tuple[int, str] | None:
    """(index, PyTorch's name) of ``fn``'s ``*size``-like parameter, if it has one."""
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return None
    for i, p in enumerate(params):
        if p.kind == p.VAR_POSITIONAL and p.name in _INT_VARARGS:
            return i, _INT_VARARGS[p.name]
    return None


def free_function(fn: Callable, name: str, like: Callable | None = None) -> Callable:
    """The free function of a method that takes its sizes one by one (``x.tile(2, 1)``, ``x.hsplit(1, 2)``,
    ``x.reshape(2, 3)``): PyTorch's parser takes a list of ints as varargs only where it is the first
    argument, which it is of the method (after ``self``) and not of the free function (after ``input``),
    so ``torch.tile(x, 2, 1)`` is its ``TypeError``. ``fn`` itself for a function without such sizes.
    ``like``: the function whose parameters ``fn`` takes (the free in-place twin ``torch.addmv_`` of ``addmv``)."""
    try:
        params = list(inspect.signature(like or fn).parameters.values())
    except (TypeError, ValueError):
        return fn
    at = next((i for i, p in enumerate(params) if p.kind == p.VAR_POSITIONAL), None)
    if at is None or at == 0:
        return fn
    p = params[at]
    if p.name == "scalars_first":
        return _numbers_not_second(fn, name, inplace=like is not None)
    if like is not None:  # (a free in-place twin takes its sizes as the method's twin does)
        return fn
    if p.name not in _INT_VARARGS and p.annotation not in ("int", int):
        return fn
    limit = max(at, 2)  # (the input, then the sizes as one list or the parameters before them)
    sizes = params[1]  # (a lone int is no list of them, unless the parameter takes an int too: hsplit's sections)
    strict = sizes.kind == sizes.VAR_POSITIONAL or sizes.annotation in ("Sequence[int]", "tuple[int, ...]")
    said = _INT_VARARGS.get(sizes.name, sizes.name)

    @functools.wraps(fn)
    def free(*args: Any, **kwargs: Any) -> Any:
        if len(args) > limit:
            raise TypeError(
                f"{name}() takes {limit} positional arguments but {len(args)} were given (the sizes as one tuple: "
                f"torch.{name}(x, (2, 3)); the method takes them one by one)"
            )
        if strict and len(args) == 2 and _is_int(args[1]) and not isinstance(args[1], _function.Tensor):
            refuse(name, said, 2, "ints!", args[1])
        return fn(*args, **kwargs)

    return free


#: The names this library gives the first tensor of a function that PyTorch's free function calls ``input``
_SELF_NAMES = ("self", "x", "t", "a", "tensor")


def input_keyword(fn: Callable, name: str) -> Callable:
    """The free function ``torch.<name>`` taking its first tensor as ``input=`` too (``torch.sin(input=x)``,
    ``torch.add(input=x, other=y)``), as PyTorch's, where the declared function names it otherwise
    (``self``, ``x``: the method's name). ``fn`` itself where the name is already ``input`` or another."""
    try:
        params = list(inspect.signature(getattr(fn, "__wrapped__", fn)).parameters.values())
    except (TypeError, ValueError):
        return fn
    if not params or params[0].name not in _SELF_NAMES or any(p.name == "input" for p in params):
        return fn
    first = params[0].name

    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> Any:
        if "input" in kwargs and first not in kwargs:
            if args:
                raise TypeError(f"{name}() got multiple values for argument 'input'")
            args = (kwargs.pop("input"),)
        return fn(*args, **kwargs)

    call.takes_input_of = fn  # type: ignore[attr-defined]
    return call


def without_inplace(fn: Callable, name: str) -> Callable:
    """The free function ``torch.<name>`` of an ``nn.functional`` function that takes ``inplace`` (``celu
    threshold rrelu``): PyTorch's ``torch.celu`` has no such parameter, so ``torch.celu(x, 1.0, True)`` and
    ``torch.celu(x, inplace=True)`` are its ``TypeError`` (``F.celu`` and ``torch.celu_`` write in place).
    ``fn`` itself for a function without ``inplace``."""
    try:
        params = list(inspect.signature(fn).parameters)
    except (TypeError, ValueError):
        return fn
    if "inplace" not in params:
        return fn
    at = params.index("inplace")

    @functools.wraps(fn)
    def free(*args: Any, **kwargs: Any) -> Any:
        if len(args) > at:
            raise TypeError(f"{name}() takes from 1 to {at} positional arguments but {len(args)} were given")
        if "inplace" in kwargs:
            raise TypeError(f"{name}() got an unexpected keyword argument 'inplace' (F.{name} takes it)")
        return fn(*args, **kwargs)

    free.checks_input_of = getattr(fn, "checks_input_of", fn)  # (the one function behind it: declare.one_function)
    return free


def _numbers_not_second(fn: Callable, name: str, inplace: bool = False) -> Callable:
    """The free function of a method that takes PyTorch's deprecated numbers first (``x.addmm(beta, mat1,
    mat2)``, its varargs named ``scalars_first``): the free function takes them before the input
    (``torch.addmm(beta, x, mat1, mat2)``), so a number after the input is PyTorch's ``TypeError``. A free
    in-place twin (``torch.addmv_(beta, x, mat, vec)``) is the method's, called on that input."""

    @functools.wraps(fn)
    def free(*args: Any, **kwargs: Any) -> Any:
        if len(args) > 3 and isinstance(args[0], _function.Tensor) and not isinstance(args[1], _function.Tensor):
            kinds = ", ".join(type(a).__name__ for a in args)
            raise TypeError(f"{name}() received an invalid combination of arguments - got ({kinds}), but expected "
                            f"(Tensor input, Tensor, Tensor, *, Number beta = 1, Number alpha = 1), or "
                            f"(Number beta, Tensor input, [Number alpha,] Tensor, Tensor)")  # fmt: skip
        if inplace and len(args) > 3 and isinstance(args[1], _function.Tensor):
            args = (args[1], args[0], *args[2:])  # (the twin writes into the input: the method's form)
        return fn(*args, **kwargs)

    free.checks_input_of = getattr(fn, "checks_input_of", fn)  # (the one function behind it: declare.one_function)
    return free


def ints(op: str, param: str, values: tuple) -> None:
    """PyTorch's check of a size or axes given one by one or as one sequence: each an int (a NumPy
    integer, a one-element integer tensor), never a float, a string, None or a tensor of several
    elements. Anything else alone (a dtype: ``x.view(torch.int32)``) is the function's to read."""
    if len(values) == 1 and isinstance(values[0], (list, tuple)):
        values = tuple(values[0])
    elif len(values) == 1 and not isinstance(values[0], (numbers.Number, np.generic, _function.Tensor)):
        if values[0] is None or isinstance(values[0], (str, bytes)):
            refuse(op, param, 1, "ints", values[0])
        return
    for at, v in enumerate(values):
        # (as :func:`is_int_sequence`: a bool first is refused, a Python bool further on read as 0 or 1)
        if v.__class__ is not int and not _is_int(v) and (at == 0 or not isinstance(v, bool)):
            raise TypeError(
                f"{op}(): argument '{param}' (position 1) must be tuple of ints, but found element of type "
                f"{_type_name(v)} at pos {at}"
            )


#: parameters that PyTorch takes in an overload of their own whose other arguments are keywords
#: (``sort(input, *, stable, dim=-1, descending=False)`` beside ``sort(input, dim=-1, descending=False)``):
#: given by position, or with an argument past the input given by position, its ``TypeError``
KEYWORD_OVERLOADS = frozenset({"stable"})


def keyword_overload(op: str, param: str, args: tuple, kwargs: dict) -> TypeError:
    """PyTorch's error for ``x.sort(0, stable=True)``: ``param`` (of :data:`KEYWORD_OVERLOADS`) goes
    with the other arguments by keyword only."""
    got = ", ".join([_type_name(a) for a in args] + [f"{k}={_type_name(v)}" for k, v in kwargs.items()])
    return TypeError(
        f"{op}() received an invalid combination of arguments - got ({got}): '{param}' is a keyword-only "
        f"argument, and with it every argument after the input is given by keyword ({op}(input, *, {param}, "
        "dim=..., ...))"
    )


def typed(fn: Callable, name: str, like: Callable | None = None, first: bool = False) -> Callable:
    """``fn`` with PyTorch's argument-type checks of its annotated parameters (see the module's
    docstring), or ``fn`` itself when it has none. The check is a function generated for ``fn``
    that reads each checked argument where the call put it (by position or by name) and passes
    the call on unchanged, so wrappers that take other spellings keep them. ``like``: the
    function whose parameters ``fn`` takes as they are (an in-place twin ``x.add_`` of ``x.add``). ``first``:
    the first operand is checked too (``F.relu(3)``: ``nn.functional`` has no other check of it)."""
    if fn in _MADE or fn in _MADE.values():  # (a function declared twice is one function)
        return _MADE.get(fn, fn)
    checks = _checks(like or fn, first)
    sizes = _int_varargs(like or fn)
    aliases = numpy_aliases(like or fn, name)
    if not checks and sizes is None and not aliases:
        return fn
    env: dict[str, Any] = {"_fn": fn, "_settle": _settle, "_op": name, "_ints": ints, "_missing": missing}
    body = []
    if aliases:  # (PyTorch's parser reads NumPy's axis= as dim=, keepdims= as keepdim=)
        env["_aliased"], env["_aliases"] = aliased, aliases
        said = " or ".join(f"{a!r} in kwargs" for a, _, _ in aliases)
        body += [f"    if kwargs and ({said}):", "        args, kwargs = _aliased(_op, args, kwargs, _aliases)"]
    body += ["    n = len(args)"]
    if sizes is not None:
        body += [f"    if n > {sizes[0]}:", f"        _ints(_op, {sizes[1]!r}, args[{sizes[0]}:])"]
        if name not in _MAY_BE_EMPTY:  # (none given, and not by a keyword either: PyTorch's TypeError)
            said = _MISSING_NAME.get(name, sizes[1])
            body += [f"    elif not kwargs.keys() & {{'size', 'shape', 'sizes', 'dims', {said!r}}}:",
                     f"        raise _missing(_op, {said!r})"]  # fmt: skip
    for p, _, _, position in checks:
        if p.name in KEYWORD_OVERLOADS and position is not None:
            env["_overload"] = keyword_overload
            body += [f"    if n > {position} or (n > 1 and {p.name!r} in kwargs):",
                     f"        raise _overload(_op, {p.name!r}, args, kwargs)"]  # fmt: skip
    for i, (p, kind, optional, position) in enumerate(checks):
        env[f"_d{i}"] = p.default
        read = f"kwargs.get({p.name!r}, _d{i})"
        if position is not None:
            read = f"args[{position}] if n > {position} else {read}"
        cond = [f"v is not _d{i}"]
        if optional:
            cond.append("v is not None")
        if _PLAIN[kind] is not None:
            cond.append(f"v.__class__ is not {_PLAIN[kind]}")
        if kind in ("Tensor", "Tensor!"):
            cond.append("not isinstance(v, _fm.Tensor)")
        settle = f"args, kwargs = _settle(_op, args, kwargs, {p.name!r}, {position!r}, {kind!r}, v)"
        body += [f"    v = {read}", f"    if {' and '.join(cond)}:", f"        {settle}"]
    src = "def checked(*args, **kwargs):\n" + "\n".join(body) + "\n    return _fn(*args, **kwargs)\n"
    # (named as a file of this package, so that tracebacks and the tracer's "your line" skip it)
    env["_fm"] = _function  # (the tensor class is registered after the engine is imported)
    exec(compile(src, os.path.join(os.path.dirname(__file__), f"<typed {name}>"), "exec"), env)  # noqa: S102
    checked = functools.update_wrapper(env["checked"], fn)
    _MADE[fn] = checked
    return checked


#: PyTorch's NumPy names of its parameters (``python_arg_parser``'s): ``x.amax(axis=0, keepdims=True)``
NUMPY_NAMES = {"dim": "axis", "keepdim": "keepdims"}
#: the functions that give NumPy's keywords NumPy's meaning (the API's rule, ``dims.spelling``), and
#: those PyTorch writes in Python, whose parameters have no second names (``x.split(1, axis=0)`` raises)
_OWN_NUMPY_MEANING = frozenset(
    """max min var std squeeze sort median nanmedian mode kthvalue cummax cummin split norm unique
    unique_consecutive stft istft tensordot softmax log_softmax softmin""".split()
)


def numpy_aliases(fn: Callable, name: str) -> tuple[tuple[str, str, int | None], ...]:
    """``(numpy_name, name, position)`` of each parameter of ``fn`` that PyTorch's parser also takes
    under its NumPy name (:data:`NUMPY_NAMES`), where ``fn`` has no parameter of that name itself."""
    if name.rstrip("_") in _OWN_NUMPY_MEANING or name.startswith("_"):
        return ()
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return ()
    names = {p.name for p in params}
    return tuple(
        (NUMPY_NAMES[p.name], p.name, i if p.kind <= p.POSITIONAL_OR_KEYWORD else None)
        for i, p in enumerate(params)
        if p.name in NUMPY_NAMES and NUMPY_NAMES[p.name] not in names and p.kind is not p.VAR_POSITIONAL
    )


def aliased(op: str, args: tuple, kwargs: dict, aliases: tuple) -> tuple[tuple, dict]:
    """``kwargs`` with NumPy's names of ``aliases`` (:func:`numpy_aliases`) read as PyTorch's; given
    under both names (or by position too), PyTorch's ``TypeError``."""
    kwargs = dict(kwargs)
    for numpy_name, torch_name, position in aliases:
        if numpy_name in kwargs:
            if torch_name in kwargs or (position is not None and len(args) > position):
                raise TypeError(f"{op}() got multiple values for argument '{torch_name}' ({numpy_name}= is its "
                                "NumPy name)")  # fmt: skip
            kwargs[torch_name] = kwargs.pop(numpy_name)
    return args, kwargs


#: each checked function, by the function it checks
_MADE: dict[Callable, Callable] = {}
