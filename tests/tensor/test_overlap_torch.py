"""An in-place op whose operand shares part of the memory it writes (``x += x.t()``,
``x[1:] = x[:-1]``, ``x.add_(x[0])``) raises PyTorch's RuntimeError, as PyTorch's does, for
every pair of views of one tensor: where PyTorch runs, the values agree (where PyTorch leaves
the result to the order of its writes, nothing is compared)."""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest

import tinygrad_attn as tga

torch = pytest.importorskip("torch")

VIEWS = {
    "x": lambda x: x,
    "x.t()": lambda x: x.t(),
    "x[1:]": lambda x: x[1:],
    "x[:-1]": lambda x: x[:-1],
    "x[0]": lambda x: x[0],
    "x[1]": lambda x: x[1],
    "x[:, 0]": lambda x: x[:, 0],
    "x[:, 1:]": lambda x: x[:, 1:],
    "x.view(9)[:3]": lambda x: x.view(9)[:3],
    "x.view(9)[2:5]": lambda x: x.view(9)[2:5],
    "x.clone()": lambda x: x.clone(),
    "x.diagonal()": lambda x: x.diagonal(),
}
OPS = {
    "add_": lambda d, s: d.add_(s),
    "mul_": lambda d, s: d.mul_(s),
    "copy_": lambda d, s: d.copy_(s),
    "+=": lambda d, s: d.__iadd__(s),
    "d[...] = s": lambda d, s: d.__setitem__(Ellipsis, s),
}


def _run(lib, dest: str, src: str, op: str) -> object:
    x = lib.arange(9.0).reshape(3, 3)
    d, s = VIEWS[dest](x), VIEWS[src](x)
    try:
        OPS[op](d, s)
    except RuntimeError:
        return "RuntimeError"
    return x.tolist()


def _shares_part(dest: str, src: str) -> bool:
    x = tga.arange(9.0).reshape(3, 3)
    d, s = VIEWS[dest](x).detach().numpy(), VIEWS[src](x).detach().numpy()
    return False if d.shape == s.shape and d.strides == s.strides else bool(np.shares_memory(d, s))


def _fits(dest: str, src: str) -> bool:
    """Whether ``src``'s shape broadcasts to ``dest``'s (the pairs where only the overlap can fail)."""
    x = np.zeros((3, 3))
    d, s = VIEWS[dest](tga.tensor(x)).shape, VIEWS[src](tga.tensor(x)).shape
    try:
        return np.broadcast_shapes(d, s) == tuple(d)
    except ValueError:
        return False


@pytest.mark.parametrize("dest, src, op", [c for c in itertools.product(VIEWS, VIEWS, OPS) if _fits(*c[:2])], ids=str)
def test_in_place_from_overlapping_memory_as_pytorch(dest: str, src: str, op: str) -> None:
    theirs = _run(torch, dest, src, op)
    ours = _run(tga, dest, src, op)
    if theirs == "RuntimeError":
        assert ours == "RuntimeError"
    elif not _shares_part(dest, src) or dest == src:
        assert ours == theirs


#: Functions given ``out=``, one of each kind of PyTorch's check: elementwise (before computing, a
#: partial overlap with an input), a join (any overlap, the input itself included), a scan and a
#: reduction along a dim with indices (after resizing ``out``), a reduction (no check).
OUT_CALLS = {
    "add": lambda lib, x, o: lib.add(x, 1, out=o),
    "mul": lambda lib, x, o: lib.mul(x, x[0], out=o),
    "exp": lambda lib, x, o: lib.exp(x, out=o),
    "where": lambda lib, x, o: lib.where(x > 2, x, lib.full((3, 3), 0.5), out=o),
    "cat": lambda lib, x, o: lib.cat([x, x], out=o),
    "stack": lambda lib, x, o: lib.stack([x[0], x[1]], out=o),
    "cumsum": lambda lib, x, o: lib.cumsum(x, 0, out=o),
    "max": lambda lib, x, o: lib.max(x, 1, out=(o, lib.zeros(0, dtype=lib.int64)))[0],
    "sort": lambda lib, x, o: lib.sort(x, 1, out=(o, lib.zeros(0, dtype=lib.int64)))[0],
}
OUTS = ["x", "x[...]", "x[0]", "x[1:]", "x.t()", "x.view(9)[:3]", "x.clone()", "expanded"]
#: (an ``out`` the result outgrows, or an expanded one, resized: PyTorch's storage grows in place, ours
#: moves to new memory; and PyTorch's scans and reductions resize an ``out`` that is the input first)
RESIZED = {"cat": ["expanded"], "stack": ["expanded"], "cumsum": ["x", "x[1:]", "expanded"],
           "max": ["x", "x[1:]", "expanded"], "sort": ["x", "x[1:]", "expanded"]}  # fmt: skip


def _out_run(lib, call: str, out: str) -> object:
    x = lib.arange(9.0).reshape(3, 3)
    o = lib.zeros(1, 3).expand(3, 3) if out == "expanded" else eval(out, {"x": x})  # noqa: S307 - (the test's own text)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = OUT_CALLS[call](lib, x, o)
    except RuntimeError:
        return "RuntimeError"
    return r.shape, r.tolist()


@pytest.mark.parametrize("call, out", [(c, o) for c in OUT_CALLS for o in OUTS if o not in RESIZED.get(c, ())], ids=str)
def test_out_overlapping_an_input_as_pytorch(call: str, out: str) -> None:
    """``out=`` sharing memory with an input: PyTorch's RuntimeError where it refuses, else its
    values (where the result does not depend on the order of the writes)."""
    theirs = _out_run(torch, call, out)
    ours = _out_run(tga, call, out)
    assert (ours == "RuntimeError") == (theirs == "RuntimeError"), (ours, theirs)
    if theirs != "RuntimeError" and out in ("x", "x[...]", "x.clone()") and call not in ("cumsum", "max", "sort"):
        assert ours[0] == tuple(theirs[0])
        np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-6)


#: Writes into an expanded tensor: PyTorch's ``fill_``, ``masked_fill_`` and ``index_put_`` write
#: the memory it repeats (the last two with a deprecation warning), as does a basic-key store into
#: a part that repeats nothing; the others refuse.
EXPANDED_WRITES = {
    "fill_": lambda v, lib: v.fill_(3),
    "zero_": lambda v, lib: v.zero_(),
    "fill_ tensor": lambda v, lib: v.fill_(lib.tensor(2.0)),
    "add_": lambda v, lib: v.add_(1),
    "copy_": lambda v, lib: v.copy_(lib.ones(3, 2)),
    "masked_fill_": lambda v, lib: v.masked_fill_(v > 1, 5),
    "v[mask] = 5": lambda v, lib: v.__setitem__(v > 1, 5),
    "v[idx] = t": lambda v, lib: v.__setitem__(lib.tensor([0, 2]), lib.tensor([[5.0, 6], [7, 8]])),
    "index_put_ accumulate": lambda v, lib: v.index_put_((lib.tensor([1, 1]),), lib.tensor(0.5), accumulate=True),
    "v[0] = t": lambda v, lib: v.__setitem__(0, lib.tensor([3.0, 4])),
    "v[:1] = 9": lambda v, lib: v.__setitem__(slice(None, 1), 9.0),
    "v[...] = 5": lambda v, lib: v.__setitem__(Ellipsis, 5.0),
    "v[:, 0] = 3": lambda v, lib: v.__setitem__((slice(None), 0), 3.0),
}


@pytest.mark.parametrize("op", EXPANDED_WRITES)
def test_write_into_expanded_tensor_as_pytorch(op: str) -> None:
    def run(lib):
        x = lib.tensor([[1.0, 2.0]])
        with warnings.catch_warnings(record=True) as ws:
            warnings.simplefilter("always")
            try:
                EXPANDED_WRITES[op](x.expand(3, 2), lib)
            except RuntimeError:
                return "RuntimeError", []
        return x.tolist(), sorted({w.category.__name__ for w in ws})

    assert run(tga) == run(torch)
