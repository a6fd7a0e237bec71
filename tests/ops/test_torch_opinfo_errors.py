"""Where PyTorch raises, we raise the same class; where it returns, we return the same value.

Three generators, all over PyTorch's own inventory (``op_db``, through the name map of
``test_torch_opinfo.py``):

* **PyTorch's error inputs.** Every OpInfo we have that declares ``error_inputs`` yields
  ``ErrorInput(sample, error_type, error_regex)``: each is converted to our tensors, and our op must
  raise an instance of ``error_type`` (PyTorch's own class, or its nearest built-in base) with a
  message that is not empty.
* **Edges PyTorch's error inputs lack**, made from each op's first float32 sample: the input as
  ``bool`` and as ``int64`` (float ops on other dtypes), a second operand whose last dimension does
  not broadcast, and a ``dim`` one past either end. PyTorch is the oracle: when it raises, we must
  raise the same class; when it returns, we must return what it returns (values and dtype).
* **PyTorch's CPU dtype grid, every spelling.** The same sample cast to each of bool, uint8, int8,
  int16, int32, int64, float16, bfloat16 and float64, through each variant both sides have: the function, the
  method ``x.op()`` and the in-place ``x.op_()``. We must raise where PyTorch raises (its class) and
  otherwise return results of its dtypes and shapes (``tools/dtype_support.py`` prints the survey; the
  dtypes an op computes for are declared once, ``@public(dtypes=...)`` in ``engine/declare.py``).

Reviewed differences are strict xfails with one reason each (``KNOWN``): a fix turns the entry into
a failure that asks for its removal. Samples with ``out=`` (the project has no ``out=`` argument, an
unknown keyword raises ``TypeError``), complex or sparse tensors are not converted; they are counted.

``python tests/ops/test_torch_opinfo_errors.py`` prints the counts (OpInfos, error inputs checked,
matching) and each difference. ``out=`` is not a variant here: the library has no ``out=`` argument.
"""

from __future__ import annotations

import functools
import importlib.util
import random
import sys
import warnings
from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip("torch")

# A generator over every op of PyTorch's inventories: the full suite's (CI runs it), not the fast loop's.
pytestmark = pytest.mark.slow
pytest.importorskip("expecttest")

import test_torch_opinfo as runner  # noqa: E402
from differential import builtin_class  # noqa: E402

from tinygrad_attn import Tensor  # noqa: E402

# ---------------------------------------------------------------------------------------------
# Calling both sides
# ---------------------------------------------------------------------------------------------


def _ours(target: runner.Target, inp: Any, args: Any, kwargs: Any) -> Any:
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        if target.function is not None:
            return target.function(inp, *args, **kwargs)
        if target.method is not None and target.method.startswith("__") and not isinstance(inp, Tensor):
            return getattr(Tensor, target.method)(inp, *args, **kwargs)  # (PyTorch's op is the unbound method)
        return getattr(inp, target.method)(*args, **kwargs)


def _theirs(target: runner.Target, inp: Any, args: Any, kwargs: Any) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if target.function is None and target.method is not None:
            if target.method.startswith("__"):
                return target.op.op(inp, *args, **kwargs)
            return target.op.method_variant(inp, *args, **kwargs)
        return target.op.op(inp, *args, **kwargs)


def _convert(sample: Any) -> tuple[Any, Any, Any]:
    if "out" in sample.kwargs:
        raise runner.Unsupported("out=")
    try:
        return runner.to_ours(sample.input), runner.to_ours(sample.args), runner.to_ours(sample.kwargs)
    except runner.Unsupported:
        raise
    except Exception as e:  # (a tensor NumPy cannot hold: more than 64 dimensions)
        raise runner.Unsupported(f"{type(e).__name__}: {e}") from None


def _raised(fn: Any) -> tuple[Any, BaseException | None]:
    try:
        return fn(), None
    except Exception as e:  # noqa: BLE001 - the class is what is compared
        return None, e


def _expect_raise(want: type, got: BaseException | None, ours: Any) -> str | None:
    """Why our outcome is not PyTorch's ``want`` (None when it is)."""
    want = builtin_class(want) if want is not Exception else Exception
    if got is None:
        kind = type(ours).__name__
        return f"returns {kind}, PyTorch raises {want.__name__}"
    if not isinstance(got, want):
        return f"raises {type(got).__name__} ({str(got)[:120]}), PyTorch raises {want.__name__}"
    if not str(got).strip():
        return f"raises {type(got).__name__} with an empty message"
    return None


# ---------------------------------------------------------------------------------------------
# 1. PyTorch's error inputs
# ---------------------------------------------------------------------------------------------


def _seed() -> None:
    """The same samples in every process: some of PyTorch's generators draw arguments (a loss's
    margin) from Python's and NumPy's generators too, not only from PyTorch's."""
    torch.manual_seed(0)
    random.seed(0)
    np.random.seed(0)


@functools.cache
def _error_inputs(op_id: str) -> tuple:
    op = runner.TARGETS[op_id].op
    if op.error_inputs_func is None:
        return ()
    _seed()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            # (the generator itself: OpInfo.error_inputs wraps each item in a callback that walks the whole
            # Python stack, which costs seconds per op inside pytest)
            return tuple(op.error_inputs_func(op, "cpu"))
        except Exception:  # (a generator that itself fails in this build)
            return ()


def check_error_input(op_id: str, k: int) -> str | None:
    """Why our op differs from PyTorch on its ``k``-th error input (None when it raises alike)."""
    target = runner.TARGETS[op_id]
    ei = _error_inputs(op_id)[k]
    s = ei.sample_input
    inp, args, kwargs = _convert(s)
    ours, err = _raised(lambda: _ours(target, inp, args, kwargs))
    return _expect_raise(ei.error_type, err, ours)


def _error_cases() -> list[tuple[str, int]]:
    out = []
    for op_id in sorted(runner.TARGETS):
        for k, ei in enumerate(_error_inputs(op_id)):
            try:
                _convert(ei.sample_input)
            except runner.Unsupported:
                continue
            # (a few error inputs raise only on CUDA or only through a variant we do not run)
            _, err = _raised(lambda ei=ei, op_id=op_id: _theirs(runner.TARGETS[op_id], ei.sample_input.input,
                                                               ei.sample_input.args, ei.sample_input.kwargs))  # fmt: skip
            if err is None:
                continue
            out.append((op_id, k))
    return out


# ---------------------------------------------------------------------------------------------
# 2. Edges made from each op's first sample, PyTorch the oracle
# ---------------------------------------------------------------------------------------------

#: PyTorch's CPU dtypes: a float op's sample is cast to each (``tools/dtype_support.py`` surveys them all);
#: bfloat16 where ml_dtypes gives NumPy one (PyTorch's CPU refuses it exactly where it refuses float16, but
#: for the few kernels its OpInfos list with one and not the other: rrelu's noise, complex32's parts)
GRID_DTYPES = ("bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64") + (
    ("bfloat16",) if importlib.util.find_spec("ml_dtypes") else ()
)
EDGES = ("bool", "int64", "broadcast", "dim_high", "dim_low")
#: how a user calls an op: ``torch.op(x)``, ``x.op()``, ``x.op_()``
VARIANTS = ("function", "method", "inplace")


@functools.cache
def _first_sample(op_id: str) -> Any:
    op = runner.TARGETS[op_id].op
    _seed()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:  # (the generator itself, as in _error_inputs)
            for s in op.sample_inputs_func(op, "cpu", torch.float32, requires_grad=False):
                if not isinstance(s.input, torch.Tensor) or s.input.numel() <= runner.MAX_NUMEL:
                    return s
        except Exception:  # (a generator that fails in this build)
            return None
    return None


def _edge(sample: Any, kind: str) -> Any:
    """The sample changed to one edge, or None when the edge does not apply to it."""
    x = sample.input
    if not isinstance(x, torch.Tensor) or not x.is_floating_point():
        return None
    if kind in GRID_DTYPES:
        dt = getattr(torch, kind)
        return sample.transform(lambda t: t.to(dt) if isinstance(t, torch.Tensor) and t.is_floating_point() else t)
    if kind == "broadcast":
        if x.ndim == 0 or x.shape[-1] < 2:
            return None
        for i, a in enumerate(sample.args):
            if isinstance(a, torch.Tensor) and a.shape == x.shape:
                bad = torch.zeros((*x.shape[:-1], x.shape[-1] + 1), dtype=a.dtype)
                args = list(sample.args)
                args[i] = bad
                return type(sample)(x, args=tuple(args), kwargs=sample.kwargs)
        return None
    dim = sample.kwargs.get("dim")
    if not isinstance(dim, int) or isinstance(dim, bool):
        return None
    n = max(x.ndim, 1)
    kw = dict(sample.kwargs, dim=n if kind == "dim_high" else -n - 1)
    return type(sample)(x, args=sample.args, kwargs=kw)


def _call_variant(target: runner.Target, variant: str, ours: bool, inp: Any, args: Any, kwargs: Any) -> Any:
    if variant == "function":
        return (_ours if ours else _theirs)(target, inp, args, kwargs)
    if ours:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            return getattr(inp, target.method if variant == "method" else target.inplace)(*args, **kwargs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        op = target.op
        return (op.method_variant if variant == "method" else op.inplace_variant)(inp, *args, **kwargs)


def has_variant(target: runner.Target, variant: str) -> bool:
    """Whether both sides have ``variant`` ("function", "method", "inplace") as a call of its own."""
    if variant == "method":
        return target.function is not None and target.method is not None and not target.method.startswith("__") \
            and target.op.method_variant is not None  # fmt: skip
    if variant == "inplace":
        return target.inplace is not None and target.op.inplace_variant is not None
    return True


def _both_sides(target: Any, variant: str, s: Any) -> tuple[Any, Any, tuple]:
    """``variant`` of our op and of PyTorch's on sample ``s``: ``(ours, theirs, ())`` where both
    return, else ``(ours, theirs, (why,))`` with why they differ in raising (None: alike)."""
    if variant == "inplace":  # (each side writes its own copy)
        s = s.transform(lambda t: t.clone() if isinstance(t, torch.Tensor) else t)
    inp, args, kwargs = _convert(s)
    theirs, terr = _raised(lambda: _call_variant(target, variant, False, s.input, s.args, s.kwargs))
    ours, err = _raised(lambda: _call_variant(target, variant, True, inp, args, kwargs))
    if terr is not None:
        return ours, theirs, (_expect_raise(type(terr), err, ours),)
    if err is not None:
        return ours, theirs, (f"raises {type(err).__name__} ({str(err)[:120]}), PyTorch returns",)
    return ours, theirs, ()


def check_variant(op_id: str, s: Any, variant: str = "function") -> str | None:
    """Why ``variant`` of our op differs from PyTorch's on sample ``s`` (None when alike)."""
    target = runner.TARGETS[op_id]
    if not has_variant(target, variant):
        return None
    ours, theirs, raised = _both_sides(target, variant, s)
    if raised:
        return raised[0]
    if op_id.split(".")[0] in runner.RANDOM:
        return runner.compare(runner._shapes(ours), runner._shapes(theirs), 1e-5)
    tie = target.op.name in runner.TIE_ORDER_UNDEFINED
    return runner.compare(ours, theirs, 1e-5, values_only=tie)


def check_edge(op_id: str, kind: str, variant: str = "function") -> str | None:
    return check_variant(op_id, _edge(_first_sample(op_id), kind), variant)


def check_dtype_support(op_id: str, dtype: str, variant: str) -> str | None:
    """Whether ``variant`` of our op raises where PyTorch's raises (its class) for the first
    sample cast to ``dtype``, and otherwise returns results of PyTorch's dtypes and shapes (the values
    are compared by the edges above and by ``test_torch_opinfo.py``)."""
    target = runner.TARGETS[op_id]
    s = _edge(_first_sample(op_id), dtype)
    ours, theirs, raised = _both_sides(target, variant, s)
    if raised:
        return raised[0]
    o, t = runner._flat(ours), runner._flat(theirs)
    if len(o) != len(t):
        return f"{len(o)} outputs, PyTorch's {len(t)}"
    for k, (a, b) in enumerate(zip(o, t)):
        if isinstance(b, torch.Tensor) and (runner._dtype_name(a), tuple(getattr(a, "shape", ()))) != (
            runner._dtype_name(b), tuple(b.shape)):  # fmt: skip
            return f"output {k}: {runner._dtype_name(a)} {tuple(getattr(a, 'shape', ()))}, PyTorch's " \
                f"{runner._dtype_name(b)} {tuple(b.shape)}"  # fmt: skip
    return None


def _edge_cases() -> list[tuple[str, str]]:
    out = []
    for op_id in sorted(runner.TARGETS):
        s = _first_sample(op_id)
        if s is None:
            continue
        for kind in EDGES:
            e = _edge(s, kind)
            if e is None:
                continue
            try:
                _convert(e)
            except runner.Unsupported:
                continue
            out.append((op_id, kind))
    return out


def _dtype_cases() -> list[tuple[str, str, str]]:
    """(op, dtype, variant) for every dtype of PyTorch's CPU grid and every variant both sides have,
    but those the edges above compare with values (the function on bool and int64) and float32 (the sample's own)."""
    out = []
    for op_id in sorted(runner.TARGETS):
        s = _first_sample(op_id)
        if s is None or _edge(s, "bool") is None:
            continue
        try:
            _convert(s)
        except runner.Unsupported:
            continue
        for dtype in GRID_DTYPES:
            for variant in VARIANTS:
                skip = dtype == "float32" or (variant == "function" and dtype in ("bool", "int64"))
                if not skip and has_variant(runner.TARGETS[op_id], variant):
                    out.append((op_id, dtype, variant))
    return out


# ---------------------------------------------------------------------------------------------
# Reviewed differences: "op_id#k" (error input k) or "op_id/edge" -> reason
# ---------------------------------------------------------------------------------------------

_NO_COMPLEX32 = "float16 parts: PyTorch makes a complex32 (chalf) tensor; NumPy has no complex32, so ours refuses"
KNOWN: dict[str, str] = {
    **{f"{name}/float16": _NO_COMPLEX32 for name in ("complex", "view_as_complex")},
    **{
        f"chalf/{d}": "NumPy has no complex32: x.chalf() raises for every dtype, where PyTorch converts"
        for d in ("bool", "int64", "uint8", "int8", "int16", "int32", "float16", "bfloat16", "float64")
    },
}


def _params(cases: list, key: Any) -> list:
    out = []
    for case in cases:
        k = key(*case)
        marks = [pytest.mark.xfail(reason=KNOWN[k], strict=True)] if k in KNOWN else []
        out.append(pytest.param(*case, marks=marks, id=k))
    return out


ERROR_CASES = _error_cases()
EDGE_CASES = _edge_cases()
DTYPE_CASES = _dtype_cases()


def _dtype_key(op_id: str, dtype: str, variant: str) -> str:
    return f"{op_id}/{dtype}" + ("" if variant == "function" else f"/{variant}")


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize(("op_id", "k"), _params(ERROR_CASES, lambda o, k: f"{o}#{k}"))
def test_error_input_raises_like_pytorch(op_id: str, k: int) -> None:
    why = check_error_input(op_id, k)
    assert why is None, f"{op_id} error input {k}: {why}"


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize(("op_id", "kind"), _params(EDGE_CASES, lambda o, k: f"{o}/{k}"))
def test_edge_like_pytorch(op_id: str, kind: str) -> None:
    why = check_edge(op_id, kind)
    assert why is None, f"{op_id} {kind}: {why}"


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize(("op_id", "dtype", "variant"), _params(DTYPE_CASES, _dtype_key))
def test_dtype_support_like_pytorch(op_id: str, dtype: str, variant: str) -> None:
    why = check_dtype_support(op_id, dtype, variant)
    assert why is None, f"{_dtype_key(op_id, dtype, variant)}: {why}"


def _ours_raises(op_id: str, dtype: str) -> bool | None:
    """Whether our op raises on its first sample cast to ``dtype`` (None: no sample to cast)."""
    s = _first_sample(op_id)
    e = None if s is None else _edge(s, dtype)
    if e is None:
        return None
    try:
        inp, args, kwargs = _convert(e)
    except runner.Unsupported:
        return None
    return _raised(lambda: _ours(runner.TARGETS[op_id], inp, args, kwargs))[1] is not None


def test_float16_and_bfloat16_refused_together_as_op_db_lists_them() -> None:
    """PyTorch's OpInfos list float16 and bfloat16 alike for the CPU but for a few kernels (rrelu's noise,
    complex32's parts): where they list both or neither, ours refuses the one where it refuses the other
    (``engine.declare.LOW_PRECISION``), the first sample of every shared OpInfo in each."""
    pytest.importorskip("ml_dtypes")
    apart, checked = [], 0
    for op_id in sorted(runner.TARGETS):
        listed = {
            d for d in ("float16", "bfloat16") if getattr(torch, d) in runner._supported(runner.TARGETS[op_id].op)
        }
        if len(listed) == 1:
            continue
        refused = {d: _ours_raises(op_id, d) for d in ("float16", "bfloat16")}
        if None in refused.values():
            continue
        checked += 1
        if refused["float16"] != refused["bfloat16"]:
            apart.append(f"{op_id}: float16 {'refused' if refused['float16'] else 'computed'}, bfloat16 "
                         f"{'refused' if refused['bfloat16'] else 'computed'}")  # fmt: skip
    assert checked >= 300 and not apart, f"{checked} checked; {apart}"


def test_inventory_is_large() -> None:
    """The generators still find PyTorch's inventory (an upgrade that renames it shows here)."""
    assert len({o for o, _ in ERROR_CASES}) >= 100
    assert len(ERROR_CASES) >= 300
    assert len(EDGE_CASES) >= 500
    assert len(DTYPE_CASES) >= 3000


if __name__ == "__main__":
    rows: list[tuple[str, str | None]] = []
    for o, k in ERROR_CASES:
        rows.append((f"{o}#{k}", check_error_input(o, k)))
    for o, kind in EDGE_CASES:
        rows.append((f"{o}/{kind}", check_edge(o, kind)))
    for o, dt, v in DTYPE_CASES:
        rows.append((_dtype_key(o, dt, v), check_dtype_support(o, dt, v)))
    bad = [(k, w) for k, w in rows if w]
    for k, w in rows:
        if not w and k in KNOWN:
            print(f"FIXED {k}: matches PyTorch now; remove its KNOWN entry")
    for k, w in bad:
        mark = "known" if k in KNOWN else "NEW"
        print(f"{mark} {k}: {w}")
    n_err = len(ERROR_CASES)
    err_ok = sum(1 for k, w in rows[:n_err] if not w)
    print(f"OpInfos with error inputs: {len({o for o, _ in ERROR_CASES})}; error inputs checked: {n_err}, "
          f"matching: {err_ok}")  # fmt: skip
    n_edge = len(EDGE_CASES)
    edge_ok = sum(1 for k, w in rows[n_err : n_err + n_edge] if not w)
    grid_ok = sum(1 for k, w in rows[n_err + n_edge :] if not w)
    print(f"edges checked: {n_edge} over {len({o for o, _ in EDGE_CASES})} OpInfos, matching: {edge_ok}")
    print(f"dtypes x variants checked: {len(DTYPE_CASES)}, matching: {grid_ok}")
    sys.exit(0)
