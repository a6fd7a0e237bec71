"""One declaration per public op: ``@public`` beside a function's definition says where the
function is public, and everything else follows from it: the ``tga.`` free function, the
:class:`Tensor` method, the in-place twin (``x.logit_()``), PyTorch's second names and the
package's ``__all__``. No other list of names exists to keep in step.

    @public(method=True, inplace=True, aliases=("arccos",))
    def acos(input: Tensor) -> Tensor:
        ...

gives ``tga.acos``, ``tga.arccos``, ``Tensor.acos``, ``Tensor.arccos``, ``Tensor.acos_`` and
``Tensor.arccos_``, all the one function (the twins written through the one in-place
mechanism). A method that PyTorch spells differently from its free function (``x.where(c, y)``
is ``torch.where(c, x, y)``) is declared on its own with ``function=False``.

``functional=True`` puts the function in ``tga.nn.functional`` too (``F.<name>``), which is
made from these declarations alone; ``function=False`` keeps it out of ``tga.``:

    @public(function=False, functional=True)
    def mse_loss(input: Tensor, target: Tensor, reduction: str = "mean") -> Tensor:
        ...

The table is read once, by the package's ``__init__`` (:func:`install`), and ``F`` by its own
``__init__``; a name declared twice in one namespace is an error at import, so a public name
is defined in one place.

A declaration also says which dtypes the op computes for, where PyTorch has kernels for only
some (``@public(dtypes="floating")``, :func:`accepts` for the functions of ``nn.functional``):
one check at the call, before any computing, raises PyTorch's error ("... not implemented for
'Long'") for the others, so no op computes on a dtype PyTorch refuses.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from .arguments import free_function, input_keyword, typed, without_inplace
from .autocast import cast_where_autocast
from .barebones import NO_KERNEL, refusing_wide_unsigned
from .bfloat16 import BFLOAT16
from .overrides import dispatching
from .real_only import REAL_ONLY, refusing_complex


@dataclass(frozen=True)
class Declaration:
    """Where one function is public (see :func:`public`)."""

    name: str
    fn: Any
    module: str
    function: bool
    method: bool
    inplace: bool
    inplace_function: bool
    static: bool
    aliases: tuple[str, ...]
    special: tuple[str, ...]
    functional: bool = False
    inplace_dtypes: Any = None

    @property
    def names(self) -> tuple[str, ...]:
        return (self.name, *self.aliases)


#: every declaration, by name, in the order of import
DECLARED: dict[str, Declaration] = {}
#: methods declared alone (``function=False``), by name: PyTorch's method spellings
METHOD_ONLY: dict[str, Declaration] = {}
#: the functions of ``tga.nn.functional`` (``functional=True``), by name, in the order of import
FUNCTIONAL: dict[str, Declaration] = {}


def public(
    fn: Any = None,
    *,
    function: bool = True,
    method: bool = False,
    inplace: bool = False,
    inplace_function: bool = False,
    static: bool = False,
    aliases: tuple[str, ...] = (),
    special: tuple[str, ...] = (),
    functional: bool = False,
    name: str | None = None,
    dtypes: str | Iterable[str] | None = None,
    operands: tuple[str, ...] = (),
    inplace_dtypes: str | Iterable[str] | None = None,
) -> Any:
    """Declare ``fn`` public: ``tga.<name>`` when ``function``, ``Tensor.<name>`` when ``method``,
    ``Tensor.<name>_`` (computed, then written in place) when ``inplace``, and ``tga.<name>_`` too
    when ``inplace_function`` (PyTorch has ``torch.exp_``, not ``torch.pow_``); a ``static`` method is
    called on the class (``Tensor.zeros(2, 3)`` is ``tga.zeros(2, 3)``); ``special`` names it in
    ``tga.special`` too (``special=("expit",)`` on ``sigmoid``); ``functional`` names it
    ``F.<name>`` in ``tga.nn.functional`` (its aliases are not); each of ``aliases`` names the
    same. ``name`` defaults to the function's own; a property is declared by name.
    ``dtypes`` (with ``operands``) are the dtypes it computes for, checked as :func:`accepts` checks them;
    ``inplace_dtypes`` those its in-place twin takes, where PyTorch's has fewer kernels (``x.cumsum_()``
    of a bool tensor: the sum is int64, and PyTorch has no bool kernel to write it with).

    >>> @public(method=True)
    ... def double(input):
    ...     return input * 2
    """

    def declare(f: Any) -> Any:
        inner = f.fget if isinstance(f, property) else f  # (a property is declared as its getter's name)
        key = name or inner.__name__
        if dtypes is not None:
            f = accepts(dtypes, operands, name=key)(f)
        if key in REAL_ONLY and not isinstance(f, property):  # (PyTorch's error for a complex tensor)
            f = refusing_complex(key, f, _dtype_rules[0] if _dtype_rules else NotImplementedError)
        if key in NO_KERNEL and not isinstance(f, property):  # (PyTorch's error for uint16, uint32, uint64)
            f = refusing_wide_unsigned(key, f, *_barebones_rules())
        f = _in_float32_where_pytorch_is(key, _one_node_where_pytorch_records_one(key, f))
        if not isinstance(f, property):
            f = cast_where_autocast(key, f)  # (PyTorch's CPU autocast lists: engine/autocast.py)
        if inspect.isfunction(f):
            f = typed(f, key, first=functional)
        twin = inplace or inplace_function
        d = Declaration(
            key, f, inner.__module__, function, method, twin, inplace_function, static, tuple(aliases), tuple(special),
            functional, inplace_dtypes,
        )  # fmt: skip
        if not (function or method or twin or special or functional):
            raise ValueError(f"public: {key!r} is declared public nowhere")
        if function or method or twin or special:
            _enter(DECLARED if function else METHOD_ONLY, d.names, d)
        if functional:
            _enter(FUNCTIONAL, (key,), d)
        return f

    return declare if fn is None else declare(fn)


def _barebones_rules() -> tuple:
    """What :func:`~.barebones.refusing_wide_unsigned` raises and names with: the rules registered by
    ``tensors.dtypes``, read at the call (an op declared before them finds them registered by then)."""
    return (
        _dtype_rules[0] if _dtype_rules else NotImplementedError,
        lambda *ops: _dtype_rules[1](*ops),
        lambda dt: _dtype_rules[2](dt),
    )


def _in_float32_where_pytorch_is(key: str, f: Any) -> Any:
    """``f`` with its float16 tensors computed in float32 where ``key`` is a one-kernel op of
    PyTorch's (``engine.composite.HALF_IN_FLOAT32``; a composite there does it itself)."""
    from .composite import HALF_IN_FLOAT32, half_in_float32  # noqa: PLC0415 (composite imports the engine)

    if key not in HALF_IN_FLOAT32 or isinstance(f, property) or hasattr(f, "composite_name"):
        return f
    return half_in_float32(f)


def _one_node_where_pytorch_records_one(key: str, f: Any) -> Any:
    """``f`` as one node of PyTorch's name in the backward graph where ``key`` is an op PyTorch
    records as one node and ours is written from others (``engine.composite.RECORDED_AS_ONE``)."""
    from .composite import EDGES, RECORDED_AS_ONE, composite  # noqa: PLC0415 (composite imports the engine)

    if key not in RECORDED_AS_ONE or isinstance(f, property) or hasattr(f, "composite_name"):
        return f
    return composite(RECORDED_AS_ONE[key], edges=EDGES.get(key))(f)


def _enter(table: dict[str, Declaration], names: tuple[str, ...], d: Declaration) -> None:
    for n in names:
        if n in table and table[n].fn is not d.fn:
            raise RuntimeError(f"public: {n!r} is declared twice ({table[n].module} and {d.module})")
        table[n] = d


def install(cls: type, namespace: dict[str, Any], inplace_variant: Callable[[str], Any], special: Any,
            out_variant: Callable[[Any, tuple[str, ...]], Any] = lambda fn, names: fn,
            input_check: Callable[[Any, str], Any] | None = None,
            method_variant: Callable[[Any, str], Any] = lambda fn, name: fn) -> list[str]:  # fmt: skip
    """Put every declaration in place: free functions into ``namespace`` (the package's; each
    as ``out_variant(fn, names)`` makes it: PyTorch's ``out=`` adapter, or the function itself) and
    the module ``special`` (PyTorch's ``torch.special`` names),
    methods on ``cls`` (over a class attribute of that name:
    ``Tensor.__hash__``), in-place twins made by ``inplace_variant(name)`` unless ``cls``
    defines the twin itself. A free function without an ``out=`` adapter is
    ``input_check(fn, name)`` (PyTorch's error for a first argument that is not a tensor). The
    method is ``method_variant(fn, name)``: ``fn`` itself, without the adapter, as PyTorch's methods
    take no ``out=`` (``np.sum(x)`` calls ``x.sum(axis=None, out=None)``, PyTorch's ``TypeError``).
    Every free function is behind the ``__torch_function__`` check (``engine.overrides.dispatching``);
    ``Tensor``'s methods are put behind it only where needed (``engine.overrides.dispatch_methods``).
    Returns the free functions' names, for ``__all__``."""
    exported = []
    # one function per declaration, under all its names: PyTorch's out= adapter of it where
    # PyTorch's free function takes out= (the adapter's ``adapts`` is the one function)
    adapted = {
        id(d): out_variant(d.fn, d.names) if d.function else d.fn for d in (*DECLARED.values(), *METHOD_ONLY.values())
    }
    methods = {id(d): method_variant(d.fn, d.name) for d in (*DECLARED.values(), *METHOD_ONLY.values()) if d.method}
    checked = {
        i: input_check(fn, d.name)
        for d in DECLARED.values()
        if input_check is not None and not d.static and (fn := adapted[(i := id(d))]) is d.fn
    }
    dispatched: dict[int, Any] = {}  # (each public function behind the __torch_function__ check, once)

    def public_fn(fn: Any, n: str) -> Any:
        if id(fn) not in dispatched:
            dispatched[id(fn)] = (fn, dispatching(fn, n))
        return dispatched[id(fn)][1]

    for d in {id(d): d for d in (*DECLARED.values(), *METHOD_ONLY.values())}.values():
        for n in d.special:
            setattr(special, n, public_fn(adapted[id(d)], n))
            special.__all__.append(n)
    for table in (DECLARED, METHOD_ONLY):
        for n, d in table.items():
            fn = adapted[id(d)]
            if d.function:
                namespace[n] = checked.get(id(d), fn)
                if d.method and not d.static:  # (the method's sizes one by one are not the free function's)
                    namespace[n] = free_function(namespace[n], n)
                if d.functional:  # (F's inplace flag is not torch.<name>'s)
                    namespace[n] = without_inplace(namespace[n], n)
                namespace[n] = public_fn(input_keyword(namespace[n], n), n)
                exported.append(n)
            if d.method and cls.__dict__.get(n) is not (m := methods[id(d)]):
                setattr(cls, n, staticmethod(m) if d.static else m)
    for table in (DECLARED, METHOD_ONLY):
        for n, d in table.items():
            if n + "_" in cls.__dict__ and inspect.isfunction(own := cls.__dict__[n + "_"]) and d.method:
                setattr(cls, n + "_", typed(own, n + "_"))  # (a twin of the class body: its own annotations)
            elif d.inplace:
                twin = inplace_variant(n)
                if d.method and inspect.isfunction(
                    d.fn
                ):  # (its arguments checked as the method's: x.add_((2, 3)) raises)
                    twin = typed(twin, n + "_", like=d.fn)
                if d.inplace_dtypes is not None:
                    twin = _checked_past_0d(accepts(d.inplace_dtypes, name=n + "_")(twin), n)
                setattr(cls, n + "_", twin)
            if d.inplace_function:  # (the method's deprecated numbers first are not the free function's)
                namespace[n + "_"] = public_fn(free_function(getattr(cls, n + "_"), n + "_", like=d.fn), n + "_")
                exported.append(n + "_")
    for n in sorted(NO_KERNEL - DECLARED.keys() - METHOD_ONLY.keys()):  # (operators of the class body: x + 1)
        if inspect.isfunction(own := cls.__dict__.get(n)) and not hasattr(own, "refuses_wide_unsigned"):
            setattr(cls, n, refusing_wide_unsigned(n, own, *_barebones_rules()))
    return exported


def one_function(fn: Any) -> Any:
    """The declared function under what :func:`install` puts in front of it at a name: the
    ``__torch_function__`` check (``torch_function_of``), the free function's check of its input (``checks_input_of``), PyTorch's ``out=`` adapter (``adapts``), the
    method's refusal of ``out=`` (``refuses_out_of``); ``x.mul`` and ``tga.mul`` are one function by it."""
    for attr in ("torch_function_of", "takes_input_of", "checks_input_of", "adapts", "refuses_out_of"):
        fn = getattr(fn, attr, fn)
    return fn


# -- the dtypes an op computes for -------------------------------------------------------------
#: PyTorch's CPU dtypes by kind, for :func:`accepts`: ``floating`` (float16/32/64, bfloat16 where
#: ml_dtypes gives NumPy one), ``float3264`` (float32/64: LAPACK's), ``numeric`` (all but bool),
#: ``not_bool``, ``integral`` (bool and the integers), ``no_half``, ``no_float16``
_BF16 = ("bfloat16",) if BFLOAT16 is not None else ()
# (uint16, uint32, uint64 where a kind's ops compute in another dtype; where PyTorch has no kernel of theirs:
# engine/barebones.py)
_WIDE_UNSIGNED = ("uint16", "uint32", "uint64")
DTYPE_KINDS: dict[str, tuple[str, ...]] = {
    "floating": ("float16", *_BF16, "float32", "float64", "complex64", "complex128"),
    "float3264": ("float32", "float64", "complex64", "complex128"),
    "numeric": (
        "uint8",
        "int8",
        "int16",
        "int32",
        "int64",
        "float16",
        *_BF16,
        "float32",
        "float64",
        "complex64",
        "complex128",
    ),
    # (every dtype but bool, uint16, uint32 and uint64 included: ops that convert their input first)
    "not_bool": (
        "uint8",
        *_WIDE_UNSIGNED,
        "int8",
        "int16",
        "int32",
        "int64",
        "float16",
        *_BF16,
        "float32",
        "float64",
        "complex64",
        "complex128",
    ),
    "integral": ("bool", "uint8", "int8", "int16", "int32", "int64", *_WIDE_UNSIGNED),
    # (the newer special functions: every real dtype but float16, which has no CPU kernel there; float
    # ops, so an integer or bool input computes in the default dtype, refused too where that is float16)
    "no_half": ("bool", "uint8", "int8", "int16", "int32", "int64", *_WIDE_UNSIGNED, "float32", "float64"),
    # (a kernel written for bfloat16 and not float16: rrelu's noise)
    "no_float16": (*_BF16, "float32", "float64"),
}
#: PyTorch's low-precision float dtypes, float16 and bfloat16 (where ml_dtypes gives NumPy one). Its CPU
#: has kernels for both or for neither wherever an outside library computes (LAPACK, pocketfft, the
#: histogram's and pdist's loops): an op that refuses one refuses the other, by :func:`low_precision`
#: (and ``dtype_codes`` gives bfloat16 to every kind that takes float16).
LOW_PRECISION = frozenset([np.dtype(np.float16)] + ([BFLOAT16] if BFLOAT16 is not None else []))


def low_precision(x: Any) -> bool:
    """Whether ``x`` is a tensor of a dtype of :data:`LOW_PRECISION`."""
    return getattr(getattr(x, "_data", None), "dtype", None) in LOW_PRECISION


# (each dtype's one-letter code, with its aliases: int64 is 'l' and 'q' alike)
_CODES = {c: np.dtype(c).name for c in np.typecodes["All"] if c not in "OSUVMm"}
if BFLOAT16 is not None:
    _CODES[BFLOAT16.char] = "bfloat16"


def dtype_codes(dtypes: str | Iterable[str]) -> str:
    """The one-letter codes (``np.dtype.char``) of the dtypes named by a kind of
    :data:`DTYPE_KINDS` or by a list of dtype names."""
    names = DTYPE_KINDS[dtypes] if isinstance(dtypes, str) else tuple(dtypes)
    if "float16" in names and BFLOAT16 is not None:  # (PyTorch's CPU kernels take bfloat16 wherever float16)
        names = (*names, "bfloat16")
    unknown = set(names) - set(_CODES.values())
    if unknown:
        raise ValueError(f"accepts: unknown dtypes {sorted(unknown)}")
    return "".join(c for c, n in _CODES.items() if n in names)


def _checked_past_0d(checked: Callable, name: str) -> Callable:
    """``checked`` (an in-place twin behind its dtype check), except for a 0-d tensor of a dtype it
    refuses: PyTorch's in-place scans (``cumsum_``, ``cumprod_``) leave a 0-d tensor as it is
    before they look for a kernel of its dtype, so ``tensor(True).cumsum_(0)`` runs. The arguments
    are checked first, by the out-of-place op ``name`` (a dim out of range: IndexError)."""
    accepted = {np.dtype(t) for t in checked.accepted_dtypes}

    @functools.wraps(checked)
    def run(self: Any, *args: Any, **kwargs: Any) -> Any:
        if kwargs.get("dtype") is None and getattr(getattr(self, "_data", None), "dtype", None) not in accepted:
            getattr(self, name)(*args, **kwargs)  # (a dim out of range raises first, as in PyTorch)
            if self.ndim == 0:
                return self
        return checked(self, *args, **kwargs)

    return run


def accepts(dtypes: str | Iterable[str], operands: tuple[str, ...] = (), *, name: str | None = None) -> Callable:
    """Make ``fn`` raise PyTorch's error for a dtype it has no kernel for, before computing.

    ``dtypes``: a kind of :data:`DTYPE_KINDS` (``"floating"``, ``"numeric"``, ...) or dtype names.
    The dtype of the first of ``operands`` (parameter names; the first parameter by default)
    decides, when it is a tensor (anything else is left to ``fn``); with more ``operands``, their
    dtype promoted together decides, as PyTorch's kernels dispatch on it
    (``logaddexp(int_tensor, float_tensor)`` computes). The codes are computed once here, so a
    call pays one frame and one lookup.

    >>> @accepts("floating")
    ... def softplus(input): ...
    """
    codes = dtype_codes(dtypes)
    in_default = dtypes == "no_half"  # (its integer and bool inputs compute in the default dtype)

    def wrap(fn: Callable) -> Callable:
        op = name or getattr(fn, "__name__", "op")
        params = list(inspect.signature(fn).parameters)
        names = tuple(operands) or (params[0],)
        for n in names:  # (a misspelt operand is an error at import, not a check that never runs)
            if n not in params:
                raise ValueError(f"accepts: {op} has no parameter {n!r}")
        first, at = names[0], params.index(names[0])
        others = tuple((n, params.index(n)) for n in names[1:])

        @functools.wraps(fn)
        def checked(*args: Any, **kwargs: Any) -> Any:
            x = args[at] if len(args) > at else kwargs.get(first)
            if others:
                rest = [args[i] if i < len(args) else kwargs.get(n) for n, i in others]
                _check_promoted(op, codes, in_default, x, rest)
                return fn(*args, **kwargs)
            try:
                code = x._data.dtype.char
            except AttributeError:  # not a tensor (a number, a list, None), or a backend dtype without a code
                code = _code_of(x)
            if code is not None and code not in codes:
                _refuse(op, codes, x, [])
            if in_default and code in _INTEGRAL_CODES and _dtype_rules[3]() == np.float16:
                _refuse_in_default(op, x)
            return fn(*args, **kwargs)

        checked.accepted_dtypes = tuple(dict.fromkeys(_CODES[c] for c in codes))  # (read by the tests)
        return checked

    return wrap


def check_dtype(op: str, x: Any, dtypes: str | Iterable[str]) -> None:
    """The check of :func:`accepts`, for an op whose accepted dtypes depend on an argument
    (``round(x, decimals=0)`` is float-only, ``round(x)`` is not; ``interpolate`` by mode);
    ``dtypes`` a kind or a tuple of names (kept, once converted, for the next call)."""
    code = _code_of(x)
    if code is not None:
        codes = _codes_of(dtypes)
        if code not in codes:
            _refuse(op, codes, x, [])


@functools.cache
def _codes_of(dtypes: str | tuple[str, ...]) -> str:
    return dtype_codes(dtypes)


def _code_of(x: Any) -> str | None:
    dt = getattr(x, "dtype", None)
    if dt is None or not hasattr(x, "_data"):
        return None
    return np.dtype(dt).char


# Registered by tinygrad_attn.tensors.dtypes (the engine imports nothing above it): the error
# class, ``result_type`` and PyTorch's dtype names, which a refusal uses.
_dtype_rules: Any = None


def register_dtype_rules(
    error: type, result_type: Callable, scalar_type_name: Callable, default_dtype: Callable
) -> None:
    """Called once by ``tinygrad_attn.tensors.dtypes``: what :func:`accepts` raises and names with,
    and the default dtype (an integer input of a float op computes in it)."""
    global _dtype_rules
    _dtype_rules = (error, result_type, scalar_type_name, default_dtype)


_INTEGRAL_CODES = frozenset(dtype_codes("integral"))


def _check_promoted(op: str, codes: str, in_default: bool, x: Any, rest: list) -> None:
    """The check of several operands: the dtype they promote to decides, as PyTorch's kernels
    dispatch on it (``zeta(int_tensor, 0-d float16)`` has no kernel, ``zeta(float16, float32)``
    computes in float32); the first tensor among them names the shapes."""
    ops = [o for o in (x, *rest) if o is not None and not isinstance(o, str)]
    tensor = next((o for o in ops if _code_of(o) is not None), None)
    if tensor is None:
        return  # (numbers only: left to the op)
    try:
        code = np.dtype(_dtype_rules[1](*ops)).char
    except Exception:  # noqa: BLE001 - operands result_type cannot read: the first tensor's dtype decides
        code = _code_of(tensor)
    if code not in codes:
        _refuse(op, codes, tensor, [o for o in ops if o is not tensor])
    if in_default and code in _INTEGRAL_CODES and _dtype_rules[3]() == np.float16:
        _refuse_in_default(op, tensor)


def _refuse_in_default(op: str, x: Any) -> None:
    """PyTorch's error for an integer or bool input of a float op without a float16 kernel, where
    the default dtype it computes in is float16."""
    raise _dtype_rules[0](
        f"\"{op}\" not implemented for 'Half' (dtype {np.dtype(x.dtype).name}, shape {tuple(x.shape)}, computed in "
        f"the default dtype float16; {op} takes no_half dtypes)"
    )


def _refuse(op: str, codes: str, x: Any, others: list) -> None:
    """Raise unless the operands promoted together have a dtype in ``codes``."""
    UnsupportedDtypeError, result_type, scalar_type_name, _ = _dtype_rules  # noqa: N806

    dt = x.dtype
    if others:
        ops = [o for o in (x, *others) if o is not None and not isinstance(o, str)]
        try:
            dt = result_type(*ops)
        except Exception:  # noqa: BLE001 - operands result_type cannot read: the first one's dtype decides
            dt = x.dtype
        if np.dtype(dt).char in codes:
            return
    kinds = [k for k, v in DTYPE_KINDS.items() if dtype_codes(v) == codes]
    kind = np.dtype(dt).kind
    ints_ok = "l" in codes or "q" in codes
    hint = (
        " convert with .long()"
        if kind == "b" and ints_ok
        else " convert with .float()"
        if kind in "biu" and "f" in codes
        else ""
    )
    takes = kinds[0] if kinds else ", ".join(dict.fromkeys(_CODES[c] for c in codes))
    raise UnsupportedDtypeError(
        f'"{op}" not implemented for {scalar_type_name(dt)!r} (dtype {np.dtype(dt).name}, shape {tuple(x.shape)}; '
        f"{op} takes {takes} dtypes){';' + hint if hint else ''}"
    )
