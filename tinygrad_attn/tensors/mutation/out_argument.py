"""PyTorch's ``out=`` argument: a function's result written into a tensor the caller gives.

``torch.mul(a, b, out=c)`` (PyTorch's tensor tutorial writes it) computes ``a * b`` and writes
it into ``c``, which it returns: ``c`` is resized to the result's shape (with PyTorch's warning
when it held elements), the result cast to ``c``'s dtype where PyTorch's ``can_cast`` allows.
Every ``tga.`` function whose PyTorch twin takes ``out=`` takes it through :func:`with_out`, a
thin adapter put in front of the one function by the package's ``install_methods``. The method
is the one function without the adapter (``x.mul is tga.mul.adapts``): PyTorch's methods take no
``out=``, and NumPy relies on that (``np.sum(x)`` calls ``x.sum(axis=None, out=None)``, which
PyTorch refuses with a ``TypeError``); :func:`method_of` refuses it where the function takes an
``out`` of its own (``norm``).
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any

import numpy as np

from ...engine.arguments import KEYWORD_OVERLOADS, numpy_aliases
from ...engine.switches import _State, no_grad
from ...engine.versions import _memory_root, bump_version, shared_with_numpy
from ...engine.warn import warn as _user_warn
from .._tensor import Tensor, cat
from ..dtypes import can_cast, scalar_type_name
from .inplace import apply_restride, refuse_internal_overlap, refuse_partial_overlap

#: Functions of :data:`OUT_NAMES` whose PyTorch docs do not say they take ``out=``
#: (tests/tensor/test_out_argument.py calls each with it).
UNDOCUMENTED_OUT = frozenset(
    """argmax argmin aminmax isin median nanmedian nonzero sum prod nansum take clamp_min clamp_max frac concat
    concatenate scatter""".split()
)

#: The functions whose PyTorch twin (``torch.X``, or the function it is an alias of) takes
#: ``out=``, by declared name; tests/tensor/test_out_argument.py reads PyTorch's docs to keep it true.
OUT_NAMES = (
    frozenset(
        """abs absolute acos acosh add addbmm addcdiv addcmul addmm addmv addr all amax amin angle any arange arccos
    chain_matmul cholesky pinverse range arccosh arcsin arcsinh arctan arctan2 arctanh asin asinh atan atan2 atanh baddbmm bernoulli bitwise_and
    bitwise_left_shift bitwise_not bitwise_or bitwise_right_shift bitwise_xor bmm bucketize cat ceil cholesky_inverse
    cholesky_solve clamp clip column_stack copysign cos cosh cross cummax cummin cumprod cumsum deg2rad det diag diff
    digamma div divide dot dstack empty eq erf erfc erfinv exp exp2 expm1 eye fix float_power floor floor_divide fmax
    fmin fmod frexp full gather gcd ge geqrf greater greater_equal gt heaviside histc histogram hstack hypot i0 igamma
    igammac index_select inner inverse isneginf isposinf kron kthvalue lcm ldexp le lerp less less_equal lgamma
    linspace log log10 log1p log2 logaddexp logaddexp2 logcumsumexp logical_and logical_not logical_or logical_xor
    logit logspace logsumexp lt lu lu_solve lu_unpack masked_select matmul matrix_power max maximum mean min minimum
    mm mode msort mul multinomial multiply mv mvlgamma nan_to_num nanmean nanquantile narrow_copy ne neg negative
    nextafter norm normal not_equal ones orgqr ormqr outer polygamma pow qr quantile rad2deg rand randint randn
    randperm reciprocal remainder renorm round row_stack rsqrt searchsorted sgn sigmoid sign signbit sin sinc sinh
    slogdet sort sqrt square stack std std_mean sub subtract svd take_along_dim tan tanh topk tril triu true_divide
    trunc var var_mean vdot vstack where xlogy zeros conj_physical complex polar""".split()
    )
    | UNDOCUMENTED_OUT
)


#: The functions whose ``out`` must have the result's dtype itself (PyTorch's "Expected out tensor to
#: have dtype float, but got double instead"), where the others cast within ``can_cast``; so must
#: every ``out`` of a function of several results (``sort``'s values and its int64 indices).
EXACT_OUT = frozenset(
    """abs absolute neg negative floor ceil trunc fix frac sgn sign round bitwise_not clamp clip clamp_min clamp_max
    nan_to_num mm bmm mv dot vdot matmul addmm addmv addbmm baddbmm index_select gather take take_along_dim
    masked_select tril triu diag cross renorm norm amax amin searchsorted bucketize histc tensordot inner narrow_copy
    logcumsumexp quantile nanquantile where argmax argmin nonzero isposinf isneginf signbit""".split()
)

#: The reductions and scans whose ``out`` gives their ``dtype=`` (the input converted to it first, as
#: PyTorch's ``torch.sum(floats, out=longs)`` sums the truncated values): a ``dtype=`` given too must be it.
DTYPE_FROM_OUT = frozenset("sum prod nansum cumsum cumprod".split())

#: The reductions whose ``out=`` is in PyTorch's overload with a ``dim`` only (``torch.sum(x, out=y)`` is its
#: TypeError, ``torch.sum(x, 0, out=y)`` and ``torch.sum(x, None, out=y)`` write into ``y``).
OUT_NEEDS_DIM = frozenset("sum prod median nanmedian".split())

#: The functions that join tensors: a result that cannot be cast to ``out``'s dtype is PyTorch's TypeError.
JOINS = frozenset("cat concat concatenate stack hstack vstack dstack column_stack row_stack".split())

#: PyTorch's elementwise functions (its TensorIterator's), which look at ``out`` before computing: it may
#: not have two elements in one place (an expanded tensor), nor share part of an input's memory, and an
#: ``out`` that is one of the inputs is not resized (:func:`refuse_out_overlap`).
ELEMENTWISE_OUT = frozenset(
    """abs absolute acos acosh add addcdiv addcmul angle arccos arccosh arcsin arcsinh arctan arctan2 arctanh asin
    asinh atan atan2 atanh bitwise_and bitwise_left_shift bitwise_not bitwise_or bitwise_right_shift bitwise_xor ceil
    clamp clip clamp_min clamp_max copysign cos cosh deg2rad digamma div divide eq erf erfc erfinv exp exp2 expm1 fix
    float_power floor floor_divide fmax fmin fmod frac ge gcd greater greater_equal gt heaviside hypot i0 igamma
    igammac isneginf isposinf lcm ldexp le lerp less less_equal lgamma log log10 log1p log2 logaddexp logaddexp2
    logical_and logical_not logical_or logical_xor logit lt maximum minimum mul multiply mvlgamma nan_to_num ne neg
    negative nextafter not_equal polygamma pow rad2deg reciprocal remainder round rsqrt sgn sigmoid sign signbit sin
    sinc sinh sqrt square sub subtract tan tanh true_divide trunc where xlogy""".split()
)

#: The scans and the reductions along a dim with indices, which refuse an ``out`` sharing part of an
#: input's memory once ``out`` is resized to the result's shape (PyTorch checks in their kernels).
OVERLAP_AFTER_RESIZE = frozenset("cumsum cumprod logcumsumexp sort msort max min".split())

#: The functions PyTorch declares without a gradient: an ``out`` or an input that requires grad is
#: no error (the others' "functions with out=... arguments don't support automatic differentiation").
NO_AUTOGRAD_OUT = frozenset(
    "eq ne lt le gt ge greater greater_equal less less_equal not_equal argmax argmin logical_and logical_or "
    "logical_xor logical_not histc".split()
)

#: Factories, which resize ``out`` without PyTorch's warning (it warns for computed results).
QUIET_RESIZE = frozenset("zeros ones full empty rand randn randint randperm eye linspace logspace normal multinomial "
                         "bernoulli".split())  # fmt: skip


def written_to_out(r: Any, out: Any, op: str, inputs: tuple[Any, ...] = ()) -> Any:
    """``r`` written into ``out`` (a tensor, or a tuple of them for a function of several
    results), which is returned; ``r`` itself when ``out`` is None. As PyTorch's: not while
    an input records a gradient (``out=`` takes no part in autograd), ``out`` resized to the
    result's shape, the result cast to ``out``'s dtype within ``can_cast``; for the functions
    of :data:`OVERLAP_AFTER_RESIZE`, a resized ``out`` sharing part of one of the arguments'
    tensors (``inputs``) refused."""
    if out is None:
        return r
    if isinstance(r, tuple):
        if not isinstance(out, (tuple, list)) or len(out) != len(r):
            raise TypeError(f"{op}(): argument 'out' must be a tuple of {len(r)} Tensors, got {type(out).__name__}")
        written = [_written(v, o, op, True, inputs) for v, o in zip(r, out)]  # (each out of several: its exact dtype)
        return tuple(written) if type(r) is tuple else out_type(type(r))(*written)
    return _written(r, out, op, False, inputs)


def _tensors_in(args: tuple[Any, ...]) -> list[Tensor]:
    """The tensors among ``args`` and in the lists among them (``cat``'s)."""
    found = []
    for a in args:
        if isinstance(a, Tensor):
            found.append(a)
        elif isinstance(a, (list, tuple)):
            found.extend(t for t in a if isinstance(t, Tensor))
    return found


def _overlap_error(op: str, out: Tensor, t: Tensor) -> RuntimeError:
    return RuntimeError(
        f"{op}(): unsupported operation: some elements of the input tensor and the written-to tensor refer to a "
        f"single memory location (shapes {tuple(t.shape)} and {tuple(out.shape)}). Please clone() the tensor "
        "before performing the operation."
    )


def refuse_out_overlap(op: str, out: Any, args: tuple[Any, ...]) -> None:
    """PyTorch's checks of ``out`` against the arguments ``args`` of ``op`` before it computes:
    for the joins (``cat``), an ``out`` sharing any memory with an input (itself included); for
    :data:`ELEMENTWISE_OUT`, an ``out`` with two elements in one place (an expanded tensor), an
    ``out`` sharing part of an input's memory (the same memory in the same layout is fine:
    ``torch.add(x, y, out=x)``), and an ``out`` that is one of the inputs and not of the
    broadcast shape (PyTorch resizes no tensor it reads)."""
    if not isinstance(out, Tensor):
        return
    inputs = _tensors_in(args)
    if op in JOINS:
        for t in inputs:
            if isinstance(t._data, np.ndarray) and isinstance(out._data, np.ndarray) and out.numel() and t.numel():
                if np.shares_memory(out._data, t._data):
                    raise _overlap_error(op, out, t)
        return
    refuse_internal_overlap(out._data, op)
    for t in inputs:
        if t is not out:
            refuse_partial_overlap(out._data, t._data, f"{op}()")
    if any(t is out for t in inputs):
        try:
            shape = np.broadcast_shapes(*(tuple(t.shape) for t in inputs))
        except ValueError:
            return  # (the op says which shapes do not broadcast)
        if shape != tuple(out.shape):
            raise RuntimeError(
                f"{op}(): output with shape {list(out.shape)} doesn't match the broadcast shape {list(shape)} "
                "(out is one of the inputs: it is not resized)"
            )


_OUT_TYPES: dict[type, type] = {}


def out_type(cls: type) -> type:
    """The class of ``cls``'s results written into ``out=``: PyTorch's ``torch.return_types.sort_out``
    for ``sort``'s (``type(torch.sort(x, out=(v, i))).__name__ == "sort_out"``), a subclass."""
    t = _OUT_TYPES.get(cls)
    if t is None:
        t = _OUT_TYPES[cls] = type(cls.__name__ + "_out", (cls,), {"__slots__": (), "__module__": cls.__module__})
    return t


def _written(r: Tensor, out: Any, op: str, exact: bool = False, inputs: tuple[Any, ...] = ()) -> Tensor:
    if not isinstance(out, Tensor):
        raise TypeError(f"{op}(): argument 'out' must be Tensor, not {type(out).__name__}")
    if _State.grad_enabled and (r.requires_grad or out.requires_grad) and op not in NO_AUTOGRAD_OUT:
        raise RuntimeError(f"{op}(): functions with out=... arguments don't support automatic differentiation, "
                           "but one of the arguments requires grad; call it without out= (or under tga.no_grad())")  # fmt: skip
    if out._dev is not r._dev:
        raise RuntimeError(f"{op}(): the result is on {r.device}, out on {out.device}; give an out on {r.device}")
    if (exact or op in EXACT_OUT) and out.dtype != r.dtype:
        raise RuntimeError(f"{op}(): Expected out tensor to have dtype {r.dtype}, but got {out.dtype} instead "
                           f"(shapes {tuple(r.shape)} and {tuple(out.shape)})")  # fmt: skip
    if not can_cast(r.dtype, out.dtype):
        if op in JOINS:
            raise TypeError(f"torch.{op}(): input types can't be cast to the desired output type "
                            f"{scalar_type_name(out.dtype)}")  # fmt: skip
        raise RuntimeError(f"{op}(): result type {scalar_type_name(r.dtype)} can't be cast to the desired output "
                           f"type {scalar_type_name(out.dtype)}")  # fmt: skip
    if tuple(out.shape) != tuple(r.shape):
        if out.numel() and op not in QUIET_RESIZE:
            _user_warn(
                f"{op}(): an output with one or more elements was resized since it had shape {list(out.shape)}, "
                f"which does not match the required output shape {list(r.shape)}. This behavior is deprecated "
                "(as in PyTorch); give an empty out, or one of the result's shape",
                UserWarning,
            )
        with no_grad():
            resized(out, tuple(r.shape))
    if inputs and op in OVERLAP_AFTER_RESIZE:
        for t in _tensors_in(inputs):
            # (max and min along a dim of one element copy it, PyTorch's shortcut, which checks nothing)
            if t is not out and not (op in ("max", "min") and t.numel() == r.numel()):
                refuse_partial_overlap(out._data, t._data, f"{op}()")
    with no_grad():
        out.copy_(r)
    return out


def with_out(fn: Callable[..., Any], names: tuple[str, ...]) -> Callable[..., Any]:
    """``fn`` taking PyTorch's ``out=`` too, where one of its ``names`` is in :data:`OUT_NAMES`
    and ``fn`` has no ``out`` of its own; else ``fn`` itself."""
    taken = [n for n in names if n in OUT_NAMES]
    if not taken:
        return fn
    try:  # (through any wrapper to the function's own parameters)
        if "out" in inspect.signature(fn).parameters:
            return fn
    except (TypeError, ValueError):
        return fn
    name = taken[0]
    adapter = _same_parameters_and_out(fn, name) or _any_parameters_and_out(fn, name)
    functools.update_wrapper(adapter, fn)
    adapter.adapts = fn  # type: ignore[attr-defined]  # (the one function it puts out= in front of)
    return adapter


def method_of(fn: Callable[..., Any], name: str) -> Callable[..., Any]:
    """The method of the declared function ``fn``: ``fn`` itself, unless ``fn`` takes an ``out`` of
    its own (``torch.norm(input, p, dim, keepdim, out, dtype)``), which PyTorch's method does not
    (``x.norm(out=y)``: a ``TypeError`` naming the method, as Python's for an unknown keyword)."""
    try:
        if "out" not in inspect.signature(fn).parameters:
            return fn
    except (TypeError, ValueError):
        return fn

    @functools.wraps(fn)
    def method(*args: Any, **kw: Any) -> Any:
        if "out" in kw:
            raise refused_out(name)
        return fn(*args, **kw)

    method.refuses_out_of = fn  # type: ignore[attr-defined]  # (the one function, whose out= it refuses)
    return method


def _out_without_dim(name: str) -> TypeError:
    return TypeError(f"{name}() received an invalid combination of arguments - got out= without dim: "
                     f"torch.{name}(input, dim, keepdim=False, *, out) writes into out, torch.{name}(input) does not")  # fmt: skip


def refused_out(name: str) -> TypeError:
    """PyTorch's error for ``out=`` given to the method ``name`` (only its free function takes one)."""
    return TypeError(f"{name}() got an unexpected keyword argument 'out' (the method takes no out=; "
                     f"torch.{name.rstrip('_')}(..., out=) writes into a tensor)")  # fmt: skip


def dtype_from_out(op: str, dtype: Any, out: Any) -> Any:
    """The ``dtype=`` of ``op`` (in :data:`DTYPE_FROM_OUT`) called with ``out``: ``out``'s dtype, where
    a ``dtype`` given must be the same (PyTorch's RuntimeError)."""
    if not isinstance(out, Tensor):
        return dtype
    if dtype is not None and dtype != out.dtype:
        raise RuntimeError(f"{op}(): Expected out tensor to have dtype {dtype}, but got {out.dtype} instead")
    return out.dtype


def _any_parameters_and_out(fn: Callable[..., Any], name: str) -> Callable[..., Any]:
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        params = []
    # (whether the first argument is a tensor, whose absence the adapter can name: not cat's list)
    tensor_first = bool(params) and params[0].kind is not params[0].VAR_POSITIONAL
    tensor_first = tensor_first and params[0].name not in _SEQUENCE_PARAMETERS
    needs_dim = name in OUT_NEEDS_DIM
    dtype_out = name in DTYPE_FROM_OUT and any(p.name == "dtype" and p.kind is p.KEYWORD_ONLY for p in params)

    checked = name in ELEMENTWISE_OUT or name in JOINS

    def adapter(*args: Any, out: Any = None, **kw: Any) -> Any:
        try:
            if out is None:
                return fn(*args, **kw)
            if needs_dim and len(args) < 2 and not kw.keys() & {"dim", "axis"}:
                raise _out_without_dim(name)
            if dtype_out:
                kw["dtype"] = dtype_from_out(name, kw.get("dtype"), out)
            if checked:
                refuse_out_overlap(name, out, (*args, *kw.values()))
            return written_to_out(fn(*args, **kw), out, name, (*args, *kw.values()))
        except (AttributeError, KeyError) as e:  # (a number or None where the tensor goes)
            if args and (tensor_first or not isinstance(args[0], (list, tuple))):
                not_a_tensor(name, args[0], e)
            raise

    return adapter


#: first parameters that take a sequence of tensors (``cat(tensors)``), not a tensor
_SEQUENCE_PARAMETERS = frozenset({"tensors", "seq", "operands", "inputs", "arrays", "args"})


def not_a_tensor(op: str, x: Any, error: BaseException) -> None:
    """Raise PyTorch's ``TypeError`` where ``op`` failed inside (``error``, an attribute missing)
    because an argument is not a tensor: a number, None, a string or a list given to ``tga.exp``
    as its input (``x``), or to ``bilinear`` as its weight (the object whose attribute was
    missing, ``error.obj``). Nothing otherwise (the error is then another one)."""
    if x is not _NO_INPUT and not isinstance(x, Tensor):
        raise TypeError(f"{op}(): argument 'input' (position 1) must be Tensor, not {type(x).__name__}") from error
    obj = getattr(error, "obj", _NO_INPUT) if isinstance(error, AttributeError) else _NO_INPUT
    if obj is None or type(obj) in _USER_VALUES:  # (a value of the user's where a tensor goes)
        raise TypeError(f"{op}(): expected a Tensor, got {type(obj).__name__} {obj!r:.40}") from error


_USER_VALUES = frozenset({int, float, bool, complex, str, bytes, list, tuple, dict})
_NO_INPUT = object()


#: first parameters that take a tensor (a free function whose first takes something else, a
#: shape or a seed, is left as it is by input_checked)
_TENSOR_PARAMETERS = frozenset({"input", "self", "x", "a", "t", "tensor", "A", "x1", "input1", "anchor", "mat"})


def input_checked(fn: Callable[..., Any], name: str) -> Callable[..., Any]:
    """``fn`` as a free function (``tga.argmax``) whose first argument must be a tensor: PyTorch's
    ``TypeError`` where a number, None or a list given there, or for another of its tensors,
    makes ``fn`` fail inside. The method (``Tensor.argmax``, whose ``self`` is one) stays ``fn``
    itself, a frame shorter. ``fn`` itself where its first parameter takes no tensor."""
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return fn
    if not params or params[0].name not in _TENSOR_PARAMETERS:
        return fn

    @functools.wraps(fn)
    def free(*args: Any, **kw: Any) -> Any:
        try:
            return fn(*args, **kw)
        except (AttributeError, KeyError) as e:
            not_a_tensor(name, args[0] if args else kw.get("input", _NO_INPUT), e)
            raise

    free.checks_input_of = fn  # type: ignore[attr-defined]  # (the one function: the method)
    return free


def _same_parameters_and_out(fn: Callable[..., Any], name: str) -> Callable[..., Any] | None:
    """The adapter written with ``fn``'s own parameters and a keyword ``out``: a call passes
    them on as they are, with no packing into ``*args``/``**kw`` (a tenth of a microsecond a
    call, which a method as hot as ``x.exp()`` pays). None where ``fn`` takes ``**kw``, or one of
    :data:`~tinygrad_attn.engine.arguments.KEYWORD_OVERLOADS` (its check reads how the call gave them)."""
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return None
    if any(p.kind is p.VAR_KEYWORD or p.name in KEYWORD_OVERLOADS for p in params) or numpy_aliases(fn, name):
        return None  # (fn's own check reads NumPy's axis= and keepdims= as PyTorch's parser does)
    defaults: dict[str, Any] = {"_fn": fn, "_written": written_to_out, "_name": name, "_unset": _NO_INPUT}
    head, call, star = [], [], False
    needs_dim = ""
    for i, p in enumerate(params):
        text = p.name
        if p.default is not p.empty:
            defaults[f"_d{i}"] = p.default
            text += f"=_d{i}"
        if name in OUT_NEEDS_DIM and p.name == "dim" and p.default is not p.empty:  # (left out: not its overload)
            head.append("dim=_unset")
            call.append(f"_d{i} if dim is _unset else dim")
            axis = " and axis is None" if any(q.name == "axis" for q in params) else ""
            defaults["_no_dim"] = _out_without_dim
            needs_dim = f"        if dim is _unset{axis}:\n            raise _no_dim(_name)\n"
            continue
        if p.kind is p.VAR_POSITIONAL:
            head.append("*" + p.name)
            call.append("*" + p.name)
            star = True
        elif p.kind is p.KEYWORD_ONLY:
            if not star:
                head.append("*")
                star = True
            head.append(text)
            call.append(f"{p.name}={p.name}")
        else:
            head.append(text)
            call.append(p.name)
        if p.kind is p.POSITIONAL_ONLY and (i + 1 == len(params) or params[i + 1].kind is not p.POSITIONAL_ONLY):
            head.append("/")
    head += ["out=None"] if star else ["*", "out=None"]
    first = params[0].name if params and params[0].kind is not params[0].VAR_POSITIONAL else None
    if first in _SEQUENCE_PARAMETERS:  # (cat's tensors: a list is right there, its own checks say what is wrong)
        first = None
    defaults["_not_tensor"], defaults["_none"], defaults["_dtype_from_out"] = not_a_tensor, _NO_INPUT, dtype_from_out
    defaults["_refuse_overlap"] = refuse_out_overlap
    dtype_line = ""
    if name in DTYPE_FROM_OUT and any(p.name == "dtype" for p in params):
        dtype_line = "        dtype = _dtype_from_out(_name, dtype, out)\n"
    inputs = "(" + "".join(("*" if p.kind is p.VAR_POSITIONAL else "") + p.name + ", " for p in params) + ")"
    if name in ELEMENTWISE_OUT or name in JOINS:
        dtype_line += f"        _refuse_overlap(_name, out, {inputs})\n"
    given = f", {inputs}" if name in OVERLAP_AFTER_RESIZE else ""
    source = (
        f"def adapter({', '.join(head)}):\n"
        f"    try:\n"
        f"        if out is None:\n            return _fn({', '.join(call)})\n"
        f"{needs_dim}{dtype_line}"
        f"        return _written(_fn({', '.join(call)}), out, _name{given})\n"
        f"    except (AttributeError, KeyError) as e:\n"  # (a number or None where the tensor goes)
        f"        _not_tensor(_name, {first or '_none'}, e)\n"
        f"        raise\n"
    )
    # (compiled as this file's code: tracebacks and the op-origin search skip it as the package's)
    exec(compile(source, __file__, "exec"), defaults)  # noqa: S102 - (made of fn's own parameter names)
    return defaults["adapter"]


def resized(self: Tensor, shape: tuple[int, ...]) -> Tensor:
    """:func:`resize_` without its check of ``requires_grad``: PyTorch's resize of an ``out=``,
    which its kernels make outside autograd (an ``out`` that requires grad, where that is allowed)."""
    if shape == tuple(self.shape):  # (PyTorch keeps the strides too)
        if self._tracks_versions:
            bump_version(self._data)
        return self
    d = self._data
    flags = getattr(getattr(d, "_array", d), "flags", None)
    if flags is not None and not flags["C_CONTIGUOUS"]:
        # PyTorch lays the new shape over the storage in memory order: a permuted or sliced
        # array has no such order here
        raise RuntimeError(
            f"resize_: this tensor (shape {tuple(self.shape)}) is not contiguous; resize x.contiguous() instead"
        )
    n = int(np.prod(shape, dtype=np.int64))
    grown = _grown_in_memory(d, shape, n)
    with no_grad():
        flat = self.reshape(-1)
        if n <= flat.shape[0]:
            r = flat[:n].reshape(shape)
        elif grown is not None:  # (within the memory it shows: PyTorch's storage keeps its values)
            r = Tensor._wrap(grown, self._dev)
        else:  # new memory: the old values first
            extra = Tensor.zeros(n - flat.shape[0], dtype=self.dtype, device=self._dev)
            r = cat([flat, extra]).reshape(shape)
    return apply_restride(self, "resize_", lambda x: r, lambda x: x)


def _grown_in_memory(d: Any, shape: tuple[int, ...], n: int) -> Any:
    """The array of ``shape`` that the NumPy array ``d`` grows to within the memory it is part
    of, where that holds ``n`` elements from ``d``'s first (PyTorch's storage, which a
    resize within its size keeps); None where it does not (new memory). PyTorch's RuntimeError
    where it does not and the memory was shared with NumPy (its storage cannot grow then)."""
    if d.__class__ is not np.ndarray or n <= d.size:
        return None
    root = _memory_root(d)
    if root.__class__ is np.ndarray and root.flags.c_contiguous and root.flags.writeable:
        offset = d.__array_interface__["data"][0] - root.__array_interface__["data"][0]
        if 0 <= offset and offset + n * d.itemsize <= root.nbytes:
            return np.ndarray(shape, d.dtype, buffer=root, offset=offset)
    if shared_with_numpy(d):
        raise RuntimeError(
            f"resize_: Trying to resize storage that is not resizable (shape {tuple(d.shape)} to {shape}): its "
            "memory is shared with a NumPy array (numpy(), from_numpy); resize a copy (x.clone()) instead"
        )
    return None
