"""PyTorch's ``out=``: every ``tga.`` function whose PyTorch twin takes it writes its result
into the given tensor and returns it, resized (with PyTorch's warning when it held elements),
cast within ``can_cast``, refused while an input records a gradient; a function of several
results takes a tuple. The list of such functions is PyTorch's, read from its docs."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import tinygrad_attn as tga  # noqa: E402
from tinygrad_attn.engine.declare import DECLARED  # noqa: E402
from tinygrad_attn.tensors.mutation.out_argument import OUT_NAMES, UNDOCUMENTED_OUT  # noqa: E402


def _takes_out(fn, depth: int = 0) -> bool:
    doc = getattr(fn, "__doc__", "") or ""
    if re.search(r"\bout \((Tensor|tuple)", doc):
        return True
    alias = re.search(r"Alias for :func:`torch\.([\w.]+)`", doc)
    if alias and depth < 3:
        target = torch
        for part in alias.group(1).split("."):
            target = getattr(target, part, None)
        return target is not None and _takes_out(target, depth + 1)
    return False


def test_the_functions_taking_out_are_pytorchs():
    theirs = {
        name
        for name, d in DECLARED.items()
        if d.function and any(_takes_out(getattr(torch, n)) for n in d.names if hasattr(torch, n))
    }
    assert theirs | UNDOCUMENTED_OUT == OUT_NAMES


A = np.arange(1.0, 7.0).reshape(2, 3)
CALLS = {
    "mul": lambda m, out: m.mul(m.tensor(A), m.tensor(A), out=out),
    "add alpha": lambda m, out: m.add(m.tensor(A), m.tensor(A), alpha=2, out=out),
    "exp": lambda m, out: m.exp(m.tensor(A), out=out),
    "neg": lambda m, out: m.neg(m.tensor(A), out=out),
    "matmul": lambda m, out: m.matmul(m.tensor(A), m.tensor(A).T, out=out),
    "mean dim": lambda m, out: m.mean(m.tensor(A), 1, out=out),
    "cat": lambda m, out: m.cat([m.tensor(A), m.tensor(A)], out=out),
    "where": lambda m, out: m.where(m.tensor(A) > 2, m.tensor(A), m.tensor(0.0, dtype=m.float64), out=out),
    "clamp": lambda m, out: m.clamp(m.tensor(A), 2, 4, out=out),
    "zeros": lambda m, out: m.zeros(2, 2, out=out),
    "arange": lambda m, out: m.arange(5.0, out=out),
    "sigmoid": lambda m, out: m.sigmoid(m.tensor(A), out=out),
    "pow": lambda m, out: m.pow(m.tensor(A), 2, out=out),
    "eq": lambda m, out: m.eq(m.tensor(A), 3.0, out=out),
}


@pytest.mark.parametrize("out_shape", [(0,), (2, 3), (7,)], ids=["empty", "same", "other"])
@pytest.mark.parametrize("name", CALLS)
def test_out_gets_the_result_as_pytorchs(name, out_shape):
    results = []
    for m in (torch, tga):
        out = m.zeros(out_shape, dtype=m.float64 if name != "eq" else m.bool)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            r = CALLS[name](m, out)
        assert r is out
        results.append((tuple(out.shape), np.asarray(out.detach().numpy()).tolist(), bool(caught)))
    assert results[0] == results[1]


def test_several_results_go_into_a_tuple_of_outs():
    for m in (torch, tga):
        values, indices = m.empty(0), m.empty(0, dtype=m.int64)
        r = m.sort(m.tensor([3.0, 1.0, 2.0]), out=(values, indices))
        assert r[0] is values and r[1] is indices and indices.tolist() == [1, 2, 0]


B = [[1.0, 3.0, 3.0], [0.0, 2.0, 0.0]]
#: A call with ``out=`` of each function whose PyTorch docs do not say it takes one (outs of dtype, shape).
UNDOCUMENTED = {
    "argmax": (lambda m, x, out: m.argmax(x, 1, out=out), ("int64",)),
    "argmin": (lambda m, x, out: m.argmin(x, out=out), ("int64",)),
    "aminmax": (lambda m, x, out: m.aminmax(x, dim=0, out=out), ("float64", "float64")),
    "isin": (lambda m, x, out: m.isin(x, m.tensor([3.0, 0.0], dtype=m.float64), out=out), ("bool",)),
    "median": (lambda m, x, out: m.median(x, 1, out=out), ("float64", "int64")),
    "nanmedian": (lambda m, x, out: m.nanmedian(x, 0, keepdim=True, out=out), ("float64", "int64")),
    "nonzero": (lambda m, x, out: m.nonzero(x, out=out), ("int64",)),
    "sum": (lambda m, x, out: m.sum(x, 0, out=out), ("float64",)),
    "prod": (lambda m, x, out: m.prod(x, 1, out=out), ("float64",)),
    "nansum": (lambda m, x, out: m.nansum(x, 0, out=out), ("float64",)),
    "take": (lambda m, x, out: m.take(x, m.tensor([0, 4]), out=out), ("float64",)),
    "clamp_min": (lambda m, x, out: m.clamp_min(x, 0.5, out=out), ("float64",)),
    "clamp_max": (lambda m, x, out: m.clamp_max(x, 0.5, out=out), ("float64",)),
    "frac": (lambda m, x, out: m.frac(x, out=out), ("float64",)),
    "concat": (lambda m, x, out: m.concat([x, x], out=out), ("float64",)),
    "concatenate": (lambda m, x, out: m.concatenate([x, x], 1, out=out), ("float64",)),
    "scatter": (lambda m, x, out: m.scatter(x, 0, m.tensor([[1, 0]]), 9.0, out=out), ("float64",)),
}


@pytest.mark.parametrize("name", sorted(UNDOCUMENTED_OUT))
def test_out_where_pytorchs_docs_do_not_say(name):
    call, dtypes = UNDOCUMENTED[name]
    seen = []
    for m in (torch, tga):
        outs = tuple(m.empty(0, dtype=getattr(m, d)) for d in dtypes)
        r = call(m, m.tensor(B, dtype=m.float64), outs if len(outs) > 1 else outs[0])
        if len(outs) == 1:
            assert r is outs[0]
        else:
            assert all(a is b for a, b in zip(r, outs))
        seen.append((type(r).__name__, [(str(o.dtype), o.tolist()) for o in outs]))
    assert seen[0] == seen[1]


def test_a_tuple_of_outs_comes_back_as_pytorchs_out_class():
    for m in (torch, tga):
        x = m.tensor(B, dtype=m.float64)
        r = m.max(x, 1, out=(m.empty(0, dtype=m.float64), m.empty(0, dtype=m.int64)))
        assert type(r).__name__ == "max_out" and r.values is r[0] and r.indices.tolist() == [1, 1]
        r = m.cummin(x, 0, out=(m.empty(0, dtype=m.float64), m.empty(0, dtype=m.int64)))
        assert type(r).__name__ == "cummin_out"
        r = m.frexp(x, out=(m.empty(0, dtype=m.float64), m.empty(0, dtype=m.int32)))
        assert type(r).__name__ == "frexp_out" and r.mantissa is r[0]


def test_out_refuses_what_pytorch_refuses():
    for m in (torch, tga):
        with pytest.raises(RuntimeError, match="can't be cast"):
            m.exp(m.tensor(A), out=m.zeros(2, 3, dtype=m.int64))
        with pytest.raises(RuntimeError, match="automatic differentiation"):
            m.exp(m.tensor(A, requires_grad=True), out=m.zeros(2, 3, dtype=m.float64))
        with m.no_grad():  # (under no_grad it writes)
            m.exp(m.tensor(A, requires_grad=True), out=m.zeros(2, 3, dtype=m.float64))


#: the methods PyTorch's Tensor and ours both have
_METHODS = sorted(n for n in dir(torch.Tensor) if not n.startswith("_") and callable(getattr(tga.Tensor, n, None)))


def _with_out(lib, name: str) -> str:
    x = lib.ones(2, 2)
    try:
        getattr(x, name)(out=None)
    except TypeError:
        return "TypeError"
    except Exception as e:  # noqa: BLE001 - its class is what is compared
        return type(e).__name__
    return "ran"


def test_methods_refuse_out_as_pytorchs():
    # (only the free functions take out=: x.sum(out=None) is PyTorch's TypeError, so NumPy's np.sum(x),
    # which calls x.sum(axis=None, out=None), raises as with PyTorch's tensors)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        differ = [(n, want, got) for n in _METHODS if (want := _with_out(torch, n)) != (got := _with_out(tga, n))]
    assert not differ
    assert len(_METHODS) > 400


@pytest.mark.parametrize("call", ["x.sum(out=o)", "x.exp(out=o)", "x.norm(out=o)", "x.exp_(out=o)", "x.add(1, out=o)",
                                  "x.cumsum_(0, out=o)", "x.clamp_(0, 1, out=o)", "np.sum(x)", "np.max(x)"])  # fmt: skip
def test_a_method_given_out_names_itself(call: str) -> None:
    x, o = tga.ones(3), tga.zeros(3)
    method = re.match(r"x\.(\w+)|np\.(\w+)", call)
    with pytest.raises(TypeError, match=rf"{method[1] or method[2]}\(\)"):
        eval(call)  # noqa: S307 - the test's own text
    assert o.tolist() == [0.0, 0.0, 0.0] and x.tolist() == [1.0, 1.0, 1.0]
    assert tga.exp(x, out=o) is o and o.tolist() == tga.exp(x).tolist()  # (the free function takes it)


@pytest.mark.parametrize("name", ["sum", "prod", "median", "nanmedian", "mean", "nansum", "amax", "max", "amin"])
def test_out_without_dim_as_pytorch(name: str) -> None:
    # (sum's and prod's out= is in their overload with a dim only; mean's and amax's is not)
    def call(lib, *dim):
        x = lib.tensor([[1.0, 4.0], [3.0, 2.0]])
        out = lib.zeros(())
        if name in ("median", "nanmedian") and dim or name == "max" and dim:
            out = (lib.zeros(()), lib.zeros((), dtype=lib.int64))
        try:
            r = getattr(lib, name)(x, *dim, out=out)
        except TypeError:
            return "TypeError"
        return [v.tolist() for v in r] if isinstance(r, tuple) else r.tolist()

    for dim in ((), (0,)):
        assert call(tga, *dim) == call(torch, *dim), (name, dim)
