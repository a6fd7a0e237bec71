"""A bool where PyTorch's parser wants an int: every int parameter (a dim, a size, an index, a
count) given ``True``, ``np.True_``, or a list of ints with a bool first or later, raises where
PyTorch raises (its parser reads no bool as an int, and a list as ints by its first element) and
runs where PyTorch runs, with PyTorch's result shape."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import tinygrad_attn as tga

torch = pytest.importorskip("torch")

#: calls with one int argument written ``B``: methods of ``x`` (2 x 2 float), functions of ``lib``
CALLS = """
lib.sum(x, B) | x.squeeze(B) | x.softmax(B) | x.select(B, 0) | x.cumsum(B) | lib.max(x, B) | x.max(B) | x.argmax(B)
x.unsqueeze(B) | x.transpose(B, 0) | x.transpose(0, B) | x.flip(B) | x.narrow(B, 0, 1) | x.narrow(0, B, 1)
lib.cat([x, x], B) | x.mean(B) | x.reshape(B, 4) | x.reshape(4, B) | x.view(B, 4) | x.view(4, B) | x.repeat(B, 1)
x.repeat(1, B) | x.expand(B, 2, 2) | lib.zeros(B) | lib.zeros(2, B) | x.topk(B) | x.chunk(B) | x.roll(B)
lib.min(x, B) | x.min(B) | x.median(B) | x.mode(B) | x.sort(B) | x.logsumexp(B) | x.prod(B) | x.all(B) | x.any(B)
x.nansum(B) | x.count_nonzero(B) | x.kthvalue(1, B) | x.kthvalue(B) | x.new_zeros(B) | lib.ones(B, 2) | lib.full(B, 2.0)
x.unflatten(B, (2, 1)) | x.flatten(B) | x.movedim(B, 0) | x.movedim(0, B) | x.diagonal(B) | x.split(B) | x.unbind(B)
x.gather(B, x.long()) | x.index_select(B, lib.tensor([0])) | x.norm(dim=B) | x.cummax(B) | x.renorm(2, B, 1.0)
x.permute(B, 0) | x.permute(0, B) | x.sum(B) | x.amax(B) | x.tile(B) | x.tril(B) | x.triu(B) | lib.eye(B)
lib.arange(B) | lib.randint(0, 5, B) | x.argsort(B) | x.cumprod(B) | x.log_softmax(B) | x.std(B) | x.var(B)
x.swapaxes(B, 0) | x.squeeze(B) | lib.stack([x, x], B) | x.roll(1, B) | x.diff(B) | x.diff(1, B) | x.rot90(B)
x.nanmedian(B) | x.logcumsumexp(B) | x.cummin(B) | x.unfold(B, 1, 1) | x.unfold(0, B, 1) | x.unfold(0, 1, B)
x.index_fill(B, lib.tensor([0]), 1.0) | x.repeat_interleave(B) | x.repeat_interleave(2, B) | x.tensor_split(B)
x.hsplit(B) | x.vsplit(B) | x.new_ones(B) | x.new_full(B, 1.0) | x.new_empty(B) | lib.empty(B) | lib.rand(B)
lib.randn(B) | lib.randperm(B) | lib.tril_indices(B, 2) | lib.combinations(x[0], B) | x.msort() if B else x
""".replace("\n", " | ")

FORMS = {
    "True": "True",
    "np.True_": "np.True_",
    "(True,)": "(True,)",
    "(0, True)": "(0, True)",
    "[1, True]": "[1, True]",
}


def _cases():
    for call in (c.strip() for c in CALLS.split("|")):
        if call:
            for form in FORMS:
                yield call, form


def _run(lib, call: str, form: str):
    x = lib.tensor([[1.0, 2.0], [3.0, 4.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            out = eval(call.replace("B", FORMS[form]), {"lib": lib, "x": x, "np": np})  # noqa: S307 - the calls above
        except Exception as e:  # noqa: BLE001 - the class is what is compared
            return e
    first = out[0] if isinstance(out, (tuple, list)) else out
    return tuple(getattr(first, "shape", ()))


@pytest.mark.parametrize("call, form", list(_cases()))
def test_a_bool_is_an_int_where_pytorchs_parser_reads_one(call, form):
    theirs, ours = _run(torch, call, form), _run(tga, call, form)
    if isinstance(theirs, Exception):
        assert isinstance(ours, Exception), f"{call} with {form}: PyTorch raises {theirs!r}, we return shape {ours}"
        if isinstance(theirs, TypeError):
            assert isinstance(ours, TypeError), f"{call} with {form}: PyTorch's TypeError, ours {ours!r}"
        return
    assert not isinstance(ours, Exception), f"{call} with {form}: PyTorch runs, we raise {ours!r}"
    assert ours == theirs, f"{call} with {form}: shape {ours}, PyTorch's {theirs}"
