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
    if kind in ("bool", "int64"):
        dt = torch.bool if kind == "bool" else torch.int64
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


def check_edge(op_id: str, kind: str) -> str | None:
    target = runner.TARGETS[op_id]
    s = _edge(_first_sample(op_id), kind)
    inp, args, kwargs = _convert(s)
    theirs, terr = _raised(lambda: _theirs(target, s.input, s.args, s.kwargs))
    ours, err = _raised(lambda: _ours(target, inp, args, kwargs))
    if terr is not None:
        return _expect_raise(type(terr), err, ours)
    if err is not None:
        return f"raises {type(err).__name__} ({str(err)[:120]}), PyTorch returns"
    if op_id.split(".")[0] in runner.RANDOM:
        return runner.compare(runner._shapes(ours), runner._shapes(theirs), 1e-5)
    tie = target.op.name in runner.TIE_ORDER_UNDEFINED
    return runner.compare(ours, theirs, 1e-5, values_only=tie)


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
_POLE = "polygamma at the poles (integer input 0, -1, ...): ours inf, PyTorch's a large finite float32 value"

KNOWN: dict[str, str] = {
    # (the ops added with the Tensor members; what the generator found, to fix next)
    "igamma/bool": "newly added op, not reviewed yet: ours computes on bool, PyTorch refuses it",
    "igamma/int64": "newly added op, not reviewed yet: ours computes on int64, PyTorch refuses it",
    "igammac/bool": "newly added op, not reviewed yet: ours computes on bool, PyTorch refuses it",
    "igammac/int64": "newly added op, not reviewed yet: ours computes on int64, PyTorch refuses it",
    "lu_unpack/bool": "newly added op, not reviewed yet: ours computes on bool, PyTorch refuses it",
    "lu_unpack/int64": "newly added op, not reviewed yet: ours computes on int64, PyTorch refuses it",
    "gradient#2": "newly added op, not reviewed yet: ours returns tuple, PyTorch raises RuntimeError",
    "gradient#9": "newly added op, not reviewed yet: ours returns tuple, PyTorch raises RuntimeError",
    "logspace#1": "newly added op, not reviewed yet: ours returns Tensor, PyTorch raises TypeError",
    "logspace.tensor_overload#1": "newly added op, not reviewed yet: ours returns Tensor, PyTorch raises TypeError",
    "bfloat16/bool": "newly added op, not reviewed yet: ours raises TypeError , bool); use .half o), PyTorch returns",
    "bfloat16/int64": "newly added op, not reviewed yet: ours raises TypeError , int64); use .half ), PyTorch returns",
    "gradient/bool": "newly added op, not reviewed yet: ours returns tuple, PyTorch raises RuntimeError",
    "index_reduce.amax/bool": "newly added op, not reviewed yet: ours returns Tensor, PyTorch raises NotImplementedError",
    "index_reduce.amin/bool": "newly added op, not reviewed yet: ours returns Tensor, PyTorch raises NotImplementedError",
    "index_reduce.mean/bool": "newly added op, not reviewed yet: ours returns Tensor, PyTorch raises NotImplementedError",
    "index_reduce.prod/bool": "newly added op, not reviewed yet: ours returns Tensor, PyTorch raises NotImplementedError",
    "native_group_norm/bool": "newly added op, not reviewed yet: ours raises RuntimeError : could not infer output dtype. Input dtype must be either a floating point or complex dtype. Got: Bool , PyTorch raises NotImplementedError",
    "native_group_norm/int64": "newly added op, not reviewed yet: ours raises RuntimeError : could not infer output dtype. Input dtype must be either a floating point or complex dtype. Got: Long , PyTorch raises NotImplementedError",
    "native_layer_norm/bool": "newly added op, not reviewed yet: ours raises RuntimeError : could not infer output dtype. Input dtype must be either a floating point or complex dtype. Got: Bool , PyTorch raises NotImplementedError",
    "native_layer_norm/int64": "newly added op, not reviewed yet: ours raises RuntimeError : could not infer output dtype. Input dtype must be either a floating point or complex dtype. Got: Long , PyTorch raises NotImplementedError",
    # (PyTorch's chunked path checks its chunking option with a ValueError before the dtype; ours refuses the dtype)
    "nn.functional.linear_cross_entropy.chunked/bool": "ours: UnsupportedDtypeError for the dtype; PyTorch: ValueError",
    "nn.functional.linear_cross_entropy.chunked/int64": "ours: UnsupportedDtypeError for the dtype; PyTorch: ValueError",
    "nn.functional.linear_cross_entropy.chunked_none/bool": "ours: UnsupportedDtypeError; PyTorch: ValueError",
    "nn.functional.linear_cross_entropy.chunked_none/int64": "ours: UnsupportedDtypeError; PyTorch: ValueError",
    "nn.functional.multi_head_attention_forward/bool": "ours: a RuntimeError for mixed dtypes in the projection; "
    "PyTorch: NotImplementedError for bool addmm",
    "__radd__#0": _UNBOUND,
    "__rand__#0": _UNBOUND,
    "__rmul__#0": _UNBOUND,
    "__ror__#0": _UNBOUND,
    "__rxor__#0": _UNBOUND,
    "__rpow__/bool": _UNBOUND,
    "addcmul/bool": _NO_KERNEL,
    "addmm/int64": _DTYPE_RULE,
    "argsort/bool": "argsort of a bool tensor (ties everywhere): the order of equal values is undefined, PyTorch's sort is not stable",
    "bernoulli/bool": _NO_KERNEL,
    "bernoulli/int64": _NO_KERNEL,
    "bincount/bool": _NO_KERNEL,
    "bucketize/bool": _NO_KERNEL,
    "clamp/bool": _NO_KERNEL,
    "corrcoef/bool": _NO_KERNEL,
    "cov/bool": _NO_KERNEL,
    "cross/bool": _CLASS,
    "cumulative_trapezoid/bool": _NO_KERNEL,
    "histc/bool": _CLASS,
    "histc/int64": _CLASS,
    "index_add/bool": _DTYPE_RULE,
    "index_copy/bool": _DTYPE_RULE,
    "isin/bool": _NO_KERNEL,
    "kthvalue/bool": _NO_KERNEL,
    "lerp/bool": _CLASS,
    "lerp/int64": _NO_KERNEL,
    "linalg.cross/bool": _CLASS,
    "linalg.matrix_power/bool": _REFUSES,
    "linalg.matrix_power/int64": _REFUSES,
    "logaddexp/bool": _NO_KERNEL,
    "logaddexp/int64": _NO_KERNEL,
    "logaddexp2/bool": _NO_KERNEL,
    "logaddexp2/int64": _NO_KERNEL,
    "logcumsumexp/bool": _NO_KERNEL,
    "logcumsumexp/int64": _NO_KERNEL,
    "logsumexp/bool": _REFUSES,
    "median/bool": _NO_KERNEL,
    "mvlgamma.mvlgamma_p_1/bool": _NO_KERNEL,
    "mvlgamma.mvlgamma_p_3/bool": _NO_KERNEL,
    "mvlgamma.mvlgamma_p_5/bool": _NO_KERNEL,
    "nanmedian/bool": _NO_KERNEL,
    "nn.functional.adaptive_avg_pool1d/bool": _REFUSES,
    "nn.functional.adaptive_avg_pool1d/int64": _REFUSES,
    "nn.functional.avg_pool1d/int64": _REFUSES,
    "nn.functional.avg_pool2d/int64": _REFUSES,
    "nn.functional.avg_pool3d/int64": _REFUSES,
    "nn.functional.conv1d/bool": _NO_KERNEL,
    "nn.functional.conv2d/bool": _NO_KERNEL,
    "nn.functional.conv3d/bool": _NO_KERNEL,
    "nn.functional.conv_transpose1d/bool": _NO_KERNEL,
    "nn.functional.conv_transpose2d/bool": _NO_KERNEL,
    "nn.functional.conv_transpose3d/bool": _NO_KERNEL,
    "nn.functional.cosine_embedding_loss/bool": _REFUSES,
    "nn.functional.cosine_embedding_loss/int64": _REFUSES,
    "nn.functional.elu/bool": _NO_KERNEL,
    "nn.functional.elu/int64": _NO_KERNEL,
    "nn.functional.embedding_bag/bool": _NO_KERNEL,
    "nn.functional.embedding_bag/int64": _NO_KERNEL,
    "nn.functional.grid_sample/bool": _NO_KERNEL,
    "nn.functional.grid_sample/int64": _NO_KERNEL,
    "nn.functional.hinge_embedding_loss/int64": _REFUSES,
    "nn.functional.interpolate.nearest/bool": _NO_KERNEL,
    "nn.functional.interpolate.nearest/int64": _NO_KERNEL,
    "nn.functional.interpolate.nearest-exact/bool": _NO_KERNEL,
    "nn.functional.interpolate.nearest-exact/int64": _NO_KERNEL,
    "nn.functional.leaky_relu/bool": _NO_KERNEL,
    "nn.functional.leaky_relu/int64": _NO_KERNEL,
    "nn.functional.linear/bool": _NO_KERNEL,
    "nn.functional.local_response_norm/bool": _NO_KERNEL,
    "nn.functional.margin_ranking_loss/int64": _REFUSES,
    "nn.functional.max_pool1d/int64": _REFUSES,
    "nn.functional.max_pool2d/int64": _REFUSES,
    "nn.functional.max_pool3d/int64": _REFUSES,
    "nn.functional.max_unpool1d/bool": _NO_KERNEL,
    "nn.functional.max_unpool1d/int64": _NO_KERNEL,
    "nn.functional.max_unpool1d.grad/bool": _NO_KERNEL,
    "nn.functional.max_unpool1d.grad/int64": _NO_KERNEL,
    "nn.functional.max_unpool2d/bool": _NO_KERNEL,
    "nn.functional.max_unpool2d/int64": _NO_KERNEL,
    "nn.functional.max_unpool2d.grad/bool": _NO_KERNEL,
    "nn.functional.max_unpool2d.grad/int64": _NO_KERNEL,
    "nn.functional.max_unpool3d/bool": _NO_KERNEL,
    "nn.functional.max_unpool3d/int64": _NO_KERNEL,
    "nn.functional.max_unpool3d.grad/bool": _NO_KERNEL,
    "nn.functional.max_unpool3d.grad/int64": _NO_KERNEL,
    "nn.functional.mse_loss/bool": _CLASS,
    "nn.functional.mse_loss/int64": _CLASS,
    "nn.functional.one_hot/bool": _CLASS,
    "nn.functional.pad.reflect/bool": _NO_KERNEL,
    "nn.functional.pad.replicate/bool": _NO_KERNEL,
    "nn.functional.pad.replicate_negative/bool": _NO_KERNEL,
    "nn.functional.poisson_nll_loss/int64": _REFUSES,
    "nn.functional.scaled_dot_product_attention/bool": _NO_KERNEL,
    "nn.functional.scaled_dot_product_attention/int64": _NO_KERNEL,
    "nn.functional.silu/bool": _NO_KERNEL,
    "nn.functional.silu/int64": _NO_KERNEL,
    "nn.functional.silu.complex/bool": _NO_KERNEL,
    "nn.functional.silu.complex/int64": _NO_KERNEL,
    "nn.functional.softmin.with_dtype/bool": _NO_KERNEL,
    "nn.functional.softplus/bool": _NO_KERNEL,
    "nn.functional.softplus/int64": _NO_KERNEL,
    "nn.functional.tanhshrink/int64": _REFUSES,
    "nn.functional.threshold/bool": _NO_KERNEL,
    "nn.functional.threshold/int64": _DTYPE_RULE,
    "nn.functional.unfold/int64": _NO_KERNEL,
    "nn.functional.upsample_nearest/bool": _NO_KERNEL,
    "nn.functional.upsample_nearest/int64": _NO_KERNEL,
    "normal/bool": _NO_KERNEL,
    "normal/int64": _NO_KERNEL,
    "randint_like/bool": _NO_KERNEL,
    "renorm/int64": _NO_KERNEL,
    "round.decimals_0/int64": _NO_KERNEL,
    "round.decimals_3/int64": _NO_KERNEL,
    "round.decimals_neg_3/int64": _NO_KERNEL,
    "scatter/bool": _DTYPE_RULE,
    "scatter_reduce.amax/bool": _DTYPE_RULE,
    "scatter_reduce.amin/bool": _DTYPE_RULE,
    "scatter_reduce.mean/bool": _NO_KERNEL,
    "scatter_reduce.prod/bool": _DTYPE_RULE,
    "scatter_reduce.sum/bool": _DTYPE_RULE,
    "topk/bool": _NO_KERNEL,
    "trapezoid/bool": _NO_KERNEL,
    "trapz/bool": _NO_KERNEL,
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
