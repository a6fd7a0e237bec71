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
    assert theirs == OUT_NAMES - UNDOCUMENTED_OUT


X = np.array([[0.5, -1.5, 2.0], [3.0, 0.0, -0.25]])
UNDOCUMENTED = {
    "sum": lambda m, x, out: m.sum(x, 0, out=out),
    "prod": lambda m, x, out: m.prod(x, 1, out=out),
    "nansum": lambda m, x, out: m.nansum(x, 0, out=out),
    "argmax": lambda m, x, out: m.argmax(x, 0, out=out),
    "argmin": lambda m, x, out: m.argmin(x, out=out),
    "take": lambda m, x, out: m.take(x, m.tensor([0, 4]), out=out),
    "isin": lambda m, x, out: m.isin(x, x[0], out=out),
    "clamp_min": lambda m, x, out: m.clamp_min(x, 0.5, out=out),
    "clamp_max": lambda m, x, out: m.clamp_max(x, 0.5, out=out),
    "frac": lambda m, x, out: m.frac(x, out=out),
    "concat": lambda m, x, out: m.concat([x, x], out=out),
    "concatenate": lambda m, x, out: m.concatenate([x, x], 1, out=out),
    "nonzero": lambda m, x, out: m.nonzero(x, out=out),
    "scatter": lambda m, x, out: m.scatter(x, 0, m.tensor([[1, 0]]), 9.0, out=out),
}


def test_the_undocumented_outs_are_listed_once():
    assert set(UNDOCUMENTED) == set(UNDOCUMENTED_OUT)


@pytest.mark.parametrize("name", sorted(UNDOCUMENTED))
def test_pytorch_takes_out_where_its_docs_do_not_say(name):
    results = []
    for m in (torch, tga):
        x = m.tensor(X)
        kind = m.int64 if name in ("argmax", "argmin", "nonzero") else m.bool if name == "isin" else m.float64
        out = m.empty(0, dtype=kind)
        r = UNDOCUMENTED[name](m, x, out)
        assert r is out
        results.append((tuple(out.shape), str(out.dtype), out.tolist()))
    assert results[0] == results[1]


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


def test_out_refuses_what_pytorch_refuses():
    for m in (torch, tga):
        with pytest.raises(RuntimeError, match="can't be cast"):
            m.exp(m.tensor(A), out=m.zeros(2, 3, dtype=m.int64))
        with pytest.raises(RuntimeError, match="automatic differentiation"):
            m.exp(m.tensor(A, requires_grad=True), out=m.zeros(2, 3, dtype=m.float64))
        with m.no_grad():  # (under no_grad it writes)
            m.exp(m.tensor(A, requires_grad=True), out=m.zeros(2, 3, dtype=m.float64))
