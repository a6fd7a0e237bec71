"""Where PyTorch raises, we raise the same class; where it returns, we return the same value.

Two generators, both over PyTorch's own inventory (``op_db``, through the name map of
``test_torch_opinfo.py``):

* **PyTorch's error inputs.** Every OpInfo we have that declares ``error_inputs`` yields
  ``ErrorInput(sample, error_type, error_regex)``: each is converted to our tensors, and our op must
  raise an instance of ``error_type`` (PyTorch's own class, or its nearest built-in base) with a
  message that is not empty.
* **Edges PyTorch's error inputs lack**, made from each op's first float32 sample: the input as
  ``bool`` and as ``int64`` (float ops on other dtypes), a second operand whose last dimension does
  not broadcast, and a ``dim`` one past either end. PyTorch is the oracle: when it raises, we must
  raise the same class; when it returns, we must return what it returns (values and dtype).

Reviewed differences are strict xfails with one reason each (``KNOWN``): a fix turns the entry into
a failure that asks for its removal. Samples with ``out=`` (the project has no ``out=`` argument, an
unknown keyword raises ``TypeError``), complex or sparse tensors are not converted; they are counted.

``python tests/ops/test_torch_opinfo_errors.py`` prints the counts (OpInfos, error inputs checked,
matching) and each difference.
"""

from __future__ import annotations

import functools
import sys
import warnings
from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("expecttest")

import test_torch_opinfo as runner  # noqa: E402

from tinygrad_attn import Tensor  # noqa: E402

# ---------------------------------------------------------------------------------------------
# Calling both sides
# ---------------------------------------------------------------------------------------------


def _builtin_base(cls: type) -> type:
    """PyTorch's exception class as the built-in class a user catches (``torch.OutOfMemoryError``
    and ``LinAlgError`` are ``RuntimeError``s, ``_C._LinAlgError`` too)."""
    for k in cls.__mro__:
        if k.__module__ == "builtins":
            return k
    return Exception


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
    want = _builtin_base(want) if want is not Exception else Exception
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


@functools.cache
def _error_inputs(op_id: str) -> tuple:
    op = runner.TARGETS[op_id].op
    if op.error_inputs_func is None:
        return ()
    torch.manual_seed(0)
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

#: PyTorch's CPU dtypes: a float op's sample is cast to each (``tools/dtype_support.py`` surveys them all)
GRID_DTYPES = ("bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64")
EDGES = ("bool", "int64", "broadcast", "dim_high", "dim_low")


@functools.cache
def _first_sample(op_id: str) -> Any:
    op = runner.TARGETS[op_id].op
    torch.manual_seed(0)
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


def check_variant(op_id: str, s: Any, variant: str = "function") -> str | None:
    """Why ``variant`` of our op differs from PyTorch's on sample ``s`` (None when alike)."""
    target = runner.TARGETS[op_id]
    if not has_variant(target, variant):
        return None
    if variant == "inplace":  # (each side writes its own copy)
        s = s.transform(lambda t: t.clone() if isinstance(t, torch.Tensor) else t)
    inp, args, kwargs = _convert(s)
    theirs, terr = _raised(lambda: _call_variant(target, variant, False, s.input, s.args, s.kwargs))
    ours, err = _raised(lambda: _call_variant(target, variant, True, inp, args, kwargs))
    if terr is not None:
        return _expect_raise(type(terr), err, ours)
    if err is not None:
        return f"raises {type(err).__name__} ({str(err)[:120]}), PyTorch returns"
    if op_id.split(".")[0] in runner.RANDOM:
        return runner.compare(runner._shapes(ours), runner._shapes(theirs), 1e-5)
    tie = target.op.name in runner.TIE_ORDER_UNDEFINED
    return runner.compare(ours, theirs, 1e-5, values_only=tie)


def check_edge(op_id: str, kind: str, variant: str = "function") -> str | None:
    return check_variant(op_id, _edge(_first_sample(op_id), kind), variant)


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


# ---------------------------------------------------------------------------------------------
# Reviewed differences: "op_id#k" (error input k) or "op_id/edge" -> reason
# ---------------------------------------------------------------------------------------------

_UNBOUND = "PyTorch's OpInfo calls the unbound Tensor method on a Python number; no Python operator reaches that call"
_NO_KERNEL = "computes for this dtype where PyTorch has no kernel for it and raises"
_REFUSES = "refuses this dtype, which PyTorch computes (an error, not a silent difference)"
_CLASS = "an inner step raises RuntimeError/TypeError before the dtype check PyTorch makes (NotImplementedError)"
_DTYPE_RULE = "the result's dtype differs from PyTorch's for this input dtype"
_NO_BFLOAT16 = "NumPy has no bfloat16: .bfloat16() raises TypeError naming .half() and .float() as the ways out"
_POLE = "polygamma at the poles (integer input 0, -1, ...): ours inf, PyTorch's a large finite float32 value"

KNOWN: dict[str, str] = {
    "bfloat16/bool": _NO_BFLOAT16,
    "bfloat16/int64": _NO_BFLOAT16,
    # (PyTorch's chunked path checks its chunking option with a ValueError before the dtype; ours refuses the dtype)
    "nn.functional.linear_cross_entropy.chunked/bool": "ours: UnsupportedDtypeError for the dtype; PyTorch: ValueError",
    "nn.functional.linear_cross_entropy.chunked/int64": "ours: UnsupportedDtypeError for the dtype; PyTorch: ValueError",
    "nn.functional.linear_cross_entropy.chunked_none/bool": "ours: UnsupportedDtypeError; PyTorch: ValueError",
    "nn.functional.linear_cross_entropy.chunked_none/int64": "ours: UnsupportedDtypeError; PyTorch: ValueError",
    "__radd__#0": _UNBOUND,
    "__rand__#0": _UNBOUND,
    "__rmul__#0": _UNBOUND,
    "__ror__#0": _UNBOUND,
    "__rxor__#0": _UNBOUND,
    "__rpow__/bool": _UNBOUND,
    "addmm/int64": _DTYPE_RULE,
    "argsort/bool": "argsort of a bool tensor (ties everywhere): the order of equal values is undefined, PyTorch's sort is not stable",
    "index_add/bool": _DTYPE_RULE,
    "index_copy/bool": _DTYPE_RULE,
    "linalg.lstsq/broadcast": "lstsq's rank output has shape (), PyTorch's (0,) for the gels driver",
    "linalg.matrix_power/bool": _REFUSES,
    "linalg.matrix_power/int64": _REFUSES,
    "linalg.vander/int64": _REFUSES,
    "nn.functional.adaptive_avg_pool1d/bool": _REFUSES,
    "nn.functional.adaptive_avg_pool1d/int64": _REFUSES,
    "nn.functional.avg_pool1d/int64": _REFUSES,
    "nn.functional.avg_pool2d/int64": _REFUSES,
    "nn.functional.avg_pool3d/int64": _REFUSES,
    "nn.functional.cosine_embedding_loss/bool": _REFUSES,
    "nn.functional.cosine_embedding_loss/int64": _REFUSES,
    "nn.functional.hinge_embedding_loss/int64": _REFUSES,
    "nn.functional.margin_ranking_loss/int64": _REFUSES,
    "nn.functional.poisson_nll_loss/int64": _REFUSES,
    "nn.functional.tanhshrink/int64": _REFUSES,
    "polygamma.polygamma_n_0/int64": _POLE,
    "polygamma.polygamma_n_1/int64": _POLE,
    "polygamma.polygamma_n_2/int64": _POLE,
    "polygamma.polygamma_n_3/int64": _POLE,
    "polygamma.polygamma_n_4/int64": _POLE,
    "scatter/bool": _DTYPE_RULE,
    "scatter_reduce.amax/bool": _DTYPE_RULE,
    "scatter_reduce.amin/bool": _DTYPE_RULE,
    "scatter_reduce.prod/bool": _DTYPE_RULE,
    "scatter_reduce.sum/bool": _DTYPE_RULE,
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


def test_inventory_is_large() -> None:
    """The generators still find PyTorch's inventory (an upgrade that renames it shows here)."""
    assert len({o for o, _ in ERROR_CASES}) >= 100
    assert len(ERROR_CASES) >= 300
    assert len(EDGE_CASES) >= 500


if __name__ == "__main__":
    rows: list[tuple[str, str | None]] = []
    for o, k in ERROR_CASES:
        rows.append((f"{o}#{k}", check_error_input(o, k)))
    for o, kind in EDGE_CASES:
        rows.append((f"{o}/{kind}", check_edge(o, kind)))
    bad = [(k, w) for k, w in rows if w]
    for k, w in rows:
        if not w and k in KNOWN:
            print(f"FIXED {k}: matches PyTorch now; remove its KNOWN entry")
    for k, w in bad:
        mark = "known" if k in KNOWN else "NEW"
        print(f"{mark} {k}: {w}")
    n_err = len(ERROR_CASES)
    err_ok = sum(1 for k, w in rows[:n_err] if not w)
    edge_ok = sum(1 for k, w in rows[n_err:] if not w)
    print(f"OpInfos with error inputs: {len({o for o, _ in ERROR_CASES})}; error inputs checked: {n_err}, "
          f"matching: {err_ok}")  # fmt: skip
    print(f"edges checked: {len(EDGE_CASES)} over {len({o for o, _ in EDGE_CASES})} OpInfos, matching: {edge_ok}")
    sys.exit(0)
