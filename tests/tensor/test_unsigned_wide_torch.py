"""PyTorch's "barebones" unsigned dtypes, uint16, uint32 and uint64: PyTorch has kernels for them in a
few ops only (factories, copies and casts, views, ``cat``, ``eq``, ``mul``, the bitwise and, or and xor,
``sort``, and the ops that compute in another dtype: float functions, sums in int64) and raises for the
rest ("... not implemented for 'UInt32'"), and it refuses to promote them with another integer dtype.
Ours follows: where PyTorch raises we raise its class, where it returns we return its dtype and values.

Two generators, PyTorch the oracle:

* every OpInfo of PyTorch's ``op_db`` we share (``tests/ops/test_torch_opinfo.py``'s map), its first
  sample cast to each of the three dtypes (absolute values, so casts do not wrap), through the function,
  the method and the in-place method;
* the binary operators and the ops of the dtype grid (``test_dtype_grid.py``'s lists) with each kind of
  second operand: a tensor or 0-d tensor of the same dtype, of another wide unsigned dtype, of every other
  dtype, a Python ``int``, ``float`` and ``bool``, in both orders.

A sample of each runs in the fast loop; the whole grid is ``slow``. Reviewed differences are strict
xfails (``KNOWN``).
"""

from __future__ import annotations

import os
import sys
import warnings
from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("expecttest")  # PyTorch's test internals import it

_TESTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [os.path.join(_TESTS, "ops"), _TESTS]  # (the runners of PyTorch's OpInfos, and their helpers)
import test_torch_opinfo as runner  # noqa: E402
import test_torch_opinfo_errors as errs  # noqa: E402
from test_dtype_grid import BINARY_OPS, UNARY_OPS, _resolve  # noqa: E402

import tinygrad_attn as tga  # noqa: E402

WIDE = ("uint16", "uint32", "uint64")
OTHERS = ("bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64")
VARIANTS = ("function", "method", "inplace")
#: the second operand: a tensor or 0-d tensor of a dtype, or a Python number
KINDS = tuple(f"tensor {d}" for d in (*WIDE, *OTHERS)) + tuple(f"0-d {d}" for d in (*WIDE, *OTHERS)) + (
    "python int", "python float", "python bool",
)  # fmt: skip

#: Differences known and not yet fixed, each still a difference (a fixed one is taken off).
_UNSIGNED_READ = (
    "PyTorch reads a Python number into uint64 as an unsigned integer (a negative one: OverflowError, a float: "
    "TypeError) and into the others through int64 (past it: ValueError); ours reads them as into every integer dtype"
)
KNOWN: dict[str, str] = {
    "tensor_negative/uint64": _UNSIGNED_READ,
    "tensor_float/uint64": _UNSIGNED_READ,
    "tensor_past_int64/uint16": _UNSIGNED_READ,
    "tensor_past_int64/uint32": _UNSIGNED_READ,
    **{f"chalf/{d}": "NumPy has no complex32: x.chalf() raises for every dtype, where PyTorch converts" for d in WIDE},
    **{
        f"{op}.binary({d}, python int)": f"{op}(x, 3) is the reduction over dim 3: PyTorch checks the dim first "
        "(IndexError), ours refuses the dtype first"
        for op in ("max", "min")
        for d in WIDE
    },
    **{
        f"nn.functional.gaussian_nll_loss/{d}": "PyTorch's missing kernel (NotImplementedError) comes before the "
        "check ours makes of var's dtype (RuntimeError)"
        for d in WIDE
    },
    **{
        f"nonzero_static/{d}{v}": "a 0-d tensor: PyTorch's nonzero_static returns without its nonzero kernel, ours "
        "is written from nonzero"
        for d in WIDE
        for v in ("", "/method")
    },
}


# ---------------------------------------------------------------------------------------------
# 1. PyTorch's OpInfos, the first sample in each wide unsigned dtype
# ---------------------------------------------------------------------------------------------


def _wide_sample(op_id: str, dtype: str) -> Any:
    """The first float32 sample of ``op_id`` with its floating tensors as ``dtype`` (absolute
    values, truncated as PyTorch's cast truncates), or None where it has no floating input."""
    s = errs._first_sample(op_id)
    if s is None or not isinstance(s.input, torch.Tensor) or not s.input.is_floating_point():
        return None
    dt = getattr(torch, dtype)
    return s.transform(lambda t: t.abs().to(dt) if isinstance(t, torch.Tensor) and t.is_floating_point() else t)


def check_opinfo(op_id: str, dtype: str, variant: str) -> str | None:
    """Why ``variant`` of our ``op_id`` differs from PyTorch's on its ``dtype`` sample (None: alike)."""
    return errs.check_variant(op_id, _wide_sample(op_id, dtype), variant)


def _opinfo_cases() -> list[tuple[str, str, str]]:
    out = []
    for op_id in sorted(runner.TARGETS):
        if _wide_sample(op_id, "uint32") is None:
            continue
        try:
            errs._convert(_wide_sample(op_id, "uint32"))
        except runner.Unsupported:
            continue
        for dtype in WIDE:
            for variant in VARIANTS:
                if errs.has_variant(runner.TARGETS[op_id], variant):
                    out.append((op_id, dtype, variant))
    return out


OPINFO_CASES = _opinfo_cases()


def _opinfo_key(op_id: str, dtype: str, variant: str) -> str:
    return f"{op_id}/{dtype}" + ("" if variant == "function" else f"/{variant}")


# ---------------------------------------------------------------------------------------------
# 2. The dtype grid's ops with every kind of operand
# ---------------------------------------------------------------------------------------------


def _values(dtype: str, shift: int = 0) -> np.ndarray:
    if dtype == "bool":
        return np.roll(np.array([True, False, True, True, False, False]), shift)
    return np.roll(np.array([0, 1, 2, 3, 5, 7]), shift).astype(dtype)


def _operand(m: Any, kind: str, shift: int) -> Any:
    if kind == "python int":
        return 3
    if kind == "python float":
        return 2.5
    if kind == "python bool":
        return True
    shape, dtype = kind.split()
    a = _values(dtype, shift)
    t = m.tensor(a)
    return t[1].clone() if shape == "0-d" else t


def _call(m: Any, op: tuple[str, tuple, dict], *args: Any) -> tuple[Any, BaseException | None]:
    name, extra, kwargs = op
    fn = _resolve(m, name)
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            return fn(*args, *extra, **kwargs), None
    except Exception as e:  # noqa: BLE001 - the class is what is compared
        return None, e


def _outcome_differs(ours: Any, our_error: Any, theirs: Any, their_error: Any) -> str | None:
    if their_error is not None:
        return errs._expect_raise(type(their_error), our_error, ours)
    if our_error is not None:
        return f"raises {type(our_error).__name__} ({str(our_error)[:120]}), PyTorch returns"
    return runner.compare(ours, theirs, 1e-5)


def check_grid(name: str, dtype: str, kind: str, first: bool) -> str | None:
    """Why our ``name`` differs from PyTorch's with a ``dtype`` tensor and a ``kind`` operand (the
    wide tensor first when ``first``; a unary op takes the wide tensor alone, ``kind`` None)."""
    if name in UNARY_OPS:
        op = UNARY_OPS[name]
        theirs, terr = _call(torch, op, torch.tensor(_values(dtype)))
        ours, err = _call(tga, op, tga.tensor(_values(dtype)))
        return _outcome_differs(ours, err, theirs, terr)
    op = BINARY_OPS[name]
    sides = []
    for m in (torch, tga):
        a, b = m.tensor(_values(dtype)), _operand(m, kind, 1)
        sides.append(_call(m, op, *((a, b) if first else (b, a))) if first or not kind.startswith("python") else
                     _call(m, op, a, b))  # fmt: skip
    (theirs, terr), (ours, err) = sides
    return _outcome_differs(ours, err, theirs, terr)


def _grid_cases() -> list[tuple[str, str, str | None, bool]]:
    out = []
    for dtype in WIDE:
        for name in UNARY_OPS:
            out.append((name, dtype, None, True))
        for name in BINARY_OPS:
            for kind in KINDS:
                out.append((name, dtype, kind, True))
                if not kind.startswith("python"):
                    out.append((name, dtype, kind, False))
    return out


def _grid_key(name: str, dtype: str, kind: str | None, first: bool) -> str:
    if kind is None:
        return f"{name}({dtype})"
    return f"{name}({dtype}, {kind})" if first else f"{name}({kind}, {dtype})"


GRID_CASES = _grid_cases()

#: the fast loop's sample, in uint32: a few ops of each kind PyTorch has (computes in the dtype, in another, refuses)
FAST_OPS = {"add", "mul", "eq", "lt", "sum", "sin", "cat", "sort", "amax", "div"}


def _params(cases: list, key: Any, fast: bool | None) -> list:
    """The cases as parameters, each known difference a strict xfail; ``fast``: the fast loop's sample only,
    the others only (marked slow), or None: all of them, in the fast loop."""
    out = []
    for case in cases:
        if fast is not None and (case[0].split(".")[0] in FAST_OPS and case[1] == "uint32") != fast:
            continue
        k = key(*case)
        marks = [pytest.mark.xfail(reason=KNOWN[k], strict=True)] if k in KNOWN else []
        if fast is False:
            marks.append(pytest.mark.slow)
        out.append(pytest.param(*case, marks=marks, id=k))
    return out


# ---------------------------------------------------------------------------------------------
# 3. What is not an op: factories, promotion, limits, printing
# ---------------------------------------------------------------------------------------------

#: the factories and fills, each given a dtype: (PyTorch's) filled in it, or its error
FACTORIES: dict[str, Any] = {
    "zeros": lambda m, d: m.zeros(2, 3, dtype=d),
    "ones": lambda m, d: m.ones(2, dtype=d),
    "full": lambda m, d: m.full((2,), 3, dtype=d),
    "full_wrapped": lambda m, d: m.full((2,), -1, dtype=d),
    "empty": lambda m, d: m.empty(2, dtype=d).zero_(),
    "eye": lambda m, d: m.eye(2, 3, dtype=d),
    "arange": lambda m, d: m.arange(3, dtype=d),
    "linspace": lambda m, d: m.linspace(0, 4, 3, dtype=d),
    "logspace": lambda m, d: m.logspace(0, 2, 3, dtype=d),
    "rand": lambda m, d: m.rand(2, dtype=d),
    "randn": lambda m, d: m.randn(2, dtype=d),
    "randperm": lambda m, d: m.randperm(3, dtype=d),
    "randint": lambda m, d: m.randint(0, 5, (4,), dtype=d).zero_(),
    "tril_indices": lambda m, d: m.tril_indices(2, 2, dtype=d),
    "tensor": lambda m, d: m.tensor([0, 1, 2**16 - 1], dtype=d),
    "tensor_negative": lambda m, d: m.tensor([-1], dtype=d),
    "tensor_float": lambda m, d: m.tensor([1.5], dtype=d),
    "tensor_past_int64": lambda m, d: m.tensor([2**63], dtype=d),
    "zeros_like": lambda m, d: m.zeros_like(m.ones(2, dtype=d)),
    "full_like": lambda m, d: m.full_like(m.ones(2, dtype=d), 4),
    "fill_": lambda m, d: m.ones(2, dtype=d).fill_(5),
    "normal_": lambda m, d: m.ones(2, dtype=d).normal_(),
    "uniform_": lambda m, d: m.ones(2, dtype=d).uniform_(),
    "to_float": lambda m, d: m.tensor([0, 7], dtype=d).float(),
    "from_float": lambda m, d: m.tensor([1.5, 2**15]).to(d),
    "to_int8": lambda m, d: m.tensor([0, 300], dtype=d).to(m.int8),
    "setitem": lambda m, d: _setitem(m.zeros(3, dtype=d)),
    "iinfo": lambda m, d: repr(m.iinfo(d)),
    "iinfo_max": lambda m, d: m.iinfo(d).max,
    "repr": lambda m, d: repr(m.tensor([0, 1, 65535], dtype=d)),
    "repr_0d": lambda m, d: repr(m.tensor(7, dtype=d)),
    "is_signed": lambda m, d: (d.is_signed, m.ones(1, dtype=d).is_signed(), d.itemsize),
    "tolist": lambda m, d: m.tensor([3, 4], dtype=d).tolist(),
}  # fmt: skip


def _setitem(t: Any) -> Any:
    t[1] = 2
    t[t == 0] = 5
    return t


def _plain(x: Any) -> Any:
    """A result both sides print alike: a tensor as its dtype's name and its values, else itself."""
    if hasattr(x, "dtype") and hasattr(x, "tolist"):
        return (str(x.dtype).removeprefix("torch."), x.tolist())
    return x.replace("torch.", "") if isinstance(x, str) else x


def check_factory(name: str, dtype: str) -> str | None:
    """Why our ``name`` of :data:`FACTORIES` in ``dtype`` differs from PyTorch's (None: alike)."""
    theirs, terr = errs._raised(lambda: FACTORIES[name](torch, getattr(torch, dtype)))
    ours, err = errs._raised(lambda: FACTORIES[name](tga, getattr(tga, dtype)))
    if terr is not None or err is not None:
        return _outcome_differs(ours, err, theirs, terr)
    return None if _plain(ours) == _plain(theirs) else f"{_plain(ours)!r}, PyTorch's {_plain(theirs)!r}"


FACTORY_CASES = [(name, dtype) for name in FACTORIES for dtype in WIDE]

#: the dtypes promotion sees, and where an operand stands: a tensor with dimensions or a 0-d one
PROMOTED = ("bool", "uint8", "int8", "int16", "int32", "int64", "uint16", "uint32", "uint64", "float16", "bfloat16",
            "float32", "float64", "complex64", "complex128")  # fmt: skip


def _promoted(m: Any, a: str, b: str, tiers: str) -> tuple[Any, BaseException | None]:
    if tiers == "types":
        return errs._raised(lambda: m.promote_types(getattr(m, a), getattr(m, b)))
    x, y = (m.zeros((2,) if t == "d" else (), dtype=getattr(m, n)) for t, n in zip(tiers, (a, b), strict=True))
    return errs._raised(lambda: m.result_type(x, y))


def check_promotion(a: str, b: str, tiers: str) -> str | None:
    """Why ours promotes ``a`` with ``b`` otherwise than PyTorch (``tiers``: ``types`` for
    ``promote_types``, else ``result_type`` of tensors, ``d`` with dimensions, ``0`` 0-d)."""
    theirs, terr = _promoted(torch, a, b, tiers)
    ours, err = _promoted(tga, a, b, tiers)
    if terr is not None:
        return errs._expect_raise(type(terr), err, ours)
    if err is not None:
        return f"raises {type(err).__name__} ({err}), PyTorch gives {theirs}"
    return None if _plain(str(ours)) == _plain(str(theirs)) else f"{ours}, PyTorch's {theirs}"


PROMOTION_CASES = [
    (a, b, tiers)
    for a in WIDE
    for b in PROMOTED
    for tiers in ("types", "dd", "d0", "0d", "00")
    for a, b in ((a, b), (b, a))
    if hasattr(tga, a) and hasattr(tga, b)
]


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize(("name", "dtype"), _params(FACTORY_CASES, lambda n, d: f"{n}/{d}", None))
def test_factories_limits_printing_like_pytorch(name: str, dtype: str) -> None:
    why = check_factory(name, dtype)
    assert why is None, f"{name}({dtype}): {why}"


@pytest.mark.parametrize(("a", "b", "tiers"), PROMOTION_CASES, ids=["-".join(c) for c in PROMOTION_CASES])
def test_promotion_like_pytorch(a: str, b: str, tiers: str) -> None:
    why = check_promotion(a, b, tiers)
    assert why is None, f"{tiers} {a} with {b}: {why}"


# ---------------------------------------------------------------------------------------------
# The tests: a sample fast, the rest slow
# ---------------------------------------------------------------------------------------------


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize(("op_id", "dtype", "variant"),
                         _params(OPINFO_CASES, _opinfo_key, True) + _params(OPINFO_CASES, _opinfo_key, False))  # fmt: skip
def test_opinfo_sample_like_pytorch(op_id: str, dtype: str, variant: str) -> None:
    why = check_opinfo(op_id, dtype, variant)
    assert why is None, f"{_opinfo_key(op_id, dtype, variant)}: {why}"


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize(("name", "dtype", "kind", "first"),
                         _params(GRID_CASES, _grid_key, True) + _params(GRID_CASES, _grid_key, False))  # fmt: skip
def test_operands_like_pytorch(name: str, dtype: str, kind: str | None, first: bool) -> None:
    why = check_grid(name, dtype, kind, first)
    assert why is None, f"{_grid_key(name, dtype, kind, first)}: {why}"


def test_inventory_is_large() -> None:
    """The generators still find PyTorch's inventory (an upgrade that renames it shows here)."""
    assert len(OPINFO_CASES) >= 1500
    assert len(GRID_CASES) >= 3000


if __name__ == "__main__":
    rows = [(_opinfo_key(*c), check_opinfo(*c)) for c in OPINFO_CASES]
    rows += [(_grid_key(*c), check_grid(*c)) for c in GRID_CASES]
    rows += [(f"{n}/{d}", check_factory(n, d)) for n, d in FACTORY_CASES]
    rows += [("-".join(c), check_promotion(*c)) for c in PROMOTION_CASES]
    for k, w in rows:
        if w and k not in KNOWN:
            print(f"NEW {k}: {w}")
        elif not w and k in KNOWN:
            print(f"FIXED {k}")
    print(f"checked {len(rows)}; differing {sum(1 for _, w in rows if w)}; known {len(KNOWN)}")


def test_every_name_of_the_table_is_an_op() -> None:
    """Each name of ``engine.barebones.NO_KERNEL`` is the name an op is declared with or an operator of
    Tensor's class body, and is refused by it: a renamed op or an alias would leave an entry that checks nothing."""
    from tinygrad_attn.engine.barebones import _ONLY_WHEN, NO_KERNEL  # noqa: PLC0415
    from tinygrad_attn.engine.declare import DECLARED, FUNCTIONAL, METHOD_ONLY  # noqa: PLC0415

    declared = {d.name: d.fn for d in (*DECLARED.values(), *METHOD_ONLY.values(), *FUNCTIONAL.values())}
    unchecked = [
        n
        for n in sorted(NO_KERNEL)
        if not getattr(declared.get(n, tga.Tensor.__dict__.get(n)), "refuses_wide_unsigned", False)
    ]
    assert not unchecked, f"names of the table that no op is declared with: {unchecked}"
    assert set(_ONLY_WHEN) <= NO_KERNEL
