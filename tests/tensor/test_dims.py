"""The one rule for axes (``tinygrad_attn/tensors/shape/dims.py``): every method and free function that
takes an axis reads it through the one normaliser, so the same mistake gives the same
error class and the same message shape everywhere, and ``dim=``/``axis=`` mean the same."""

from __future__ import annotations

import numpy as np
import pytest

import tinygrad_attn as tga
import tinygrad_attn.functional as F
from tinygrad_attn.tensors.shape import dims

X = np.arange(6, dtype=np.float32).reshape(2, 3)

#: name -> a call of it with the axis ``d`` (method spelling ``x.name(...)`` and free ``tga.name(x, ...)``)
AXIS_CALLS = {
    "sum": lambda f, x, d: f(x, d),
    "mean": lambda f, x, d: f(x, d),
    "max": lambda f, x, d: f(x, d),
    "min": lambda f, x, d: f(x, d),
    "amax": lambda f, x, d: f(x, d),
    "amin": lambda f, x, d: f(x, d),
    "var": lambda f, x, d: f(x, d),
    "std": lambda f, x, d: f(x, d),
    "prod": lambda f, x, d: f(x, d),
    "logsumexp": lambda f, x, d: f(x, d),
    "argmax": lambda f, x, d: f(x, d),
    "argmin": lambda f, x, d: f(x, d),
    "all": lambda f, x, d: f(x, d),
    "any": lambda f, x, d: f(x, d),
    "cumsum": lambda f, x, d: f(x, d),
    "cumprod": lambda f, x, d: f(x, d),
    "cummax": lambda f, x, d: f(x, d),
    "cummin": lambda f, x, d: f(x, d),
    "logcumsumexp": lambda f, x, d: f(x, d),
    "softmax": lambda f, x, d: f(x, d),
    "log_softmax": lambda f, x, d: f(x, d),
    "sort": lambda f, x, d: f(x, d),
    "argsort": lambda f, x, d: f(x, d),
    "topk": lambda f, x, d: f(x, 1, d),
    "squeeze": lambda f, x, d: f(x, d),
    "unsqueeze": lambda f, x, d: f(x, d),
    "flip": lambda f, x, d: f(x, (d,)),
    "roll": lambda f, x, d: f(x, 1, d),
    "chunk": lambda f, x, d: f(x, 2, d),
    "split": lambda f, x, d: f(x, 1, d),
    "unbind": lambda f, x, d: f(x, d),
    "transpose": lambda f, x, d: f(x, 0, d),
    "norm": lambda f, x, d: f(x, 2, d),
    "gather": lambda f, x, d: f(x, d, tga.zeros((2, 3), dtype=tga.int64)),
    "index_select": lambda f, x, d: f(x, d, tga.tensor([0])),
    "movedim": lambda f, x, d: f(x, d, 0),
    "diagonal": lambda f, x, d: f(x, 0, 0, d),
    "unflatten": lambda f, x, d: f(x, d, (1, 1)),
    "narrow": lambda f, x, d: f(x, d, 0, 1),
    "select": lambda f, x, d: f(x, d, 0),
    "repeat_interleave": lambda f, x, d: f(x, 2, d),
}


def _method(name):
    return lambda x, *a: getattr(x, name)(*a)


def _free(name):
    return lambda x, *a: getattr(tga, name)(x, *a)


SPELLINGS = [(n, "method") for n in AXIS_CALLS] + [(n, "free") for n in AXIS_CALLS if hasattr(tga, n)]


@pytest.mark.parametrize(("name", "how"), SPELLINGS, ids=[f"{h}-{n}" for n, h in SPELLINGS])
def test_an_axis_out_of_range_is_one_error_everywhere(name, how):
    x = tga.tensor(X)
    f = _method(name) if how == "method" else _free(name)
    with pytest.raises(dims.DimensionError, match=rf"^{name}: axis 5 is out of range for a "):
        AXIS_CALLS[name](f, x, 5)
    with pytest.raises(IndexError):  # (PyTorch's class, and NumPy's ValueError)
        AXIS_CALLS[name](f, x, -7)


#: ops that take NumPy's ``axis=`` besides PyTorch's ``dim=``
BOTH_SPELLINGS = ["sum", "mean", "max", "min", "var", "std", "prod", "logsumexp", "argmax", "argmin", "all", "any",
                  "cumsum", "cumprod", "softmax", "log_softmax", "squeeze", "unsqueeze", "chunk", "split", "sort",
                  "cummax", "cummin", "logcumsumexp"]  # fmt: skip


#: ops where ``axis=`` gives NumPy's result and ``dim=`` PyTorch's: any duplicate is refused
DIFFERENT_MEANINGS = {"max", "min", "var", "std", "squeeze", "sort"}


@pytest.mark.parametrize("name", BOTH_SPELLINGS)
def test_dim_and_axis_together_are_read_alike(name):
    """The method, the free function and ``F.`` read a duplicate axis by one rule: two
    different axes are refused, naming the op; the same axis twice is that axis (except
    where ``axis=`` and ``dim=`` mean different results: then any duplicate is refused)."""
    x = tga.tensor(X)
    extra = (1,) if name in ("chunk", "split") else ()
    forms = [lambda **kw: getattr(x, name)(*extra, **kw)]
    if hasattr(tga, name):
        forms.append(lambda **kw: getattr(tga, name)(x, *extra, **kw))
    if hasattr(F, name):
        forms.append(lambda **kw: getattr(F, name)(x, *extra, **kw))
    for form in forms:
        with pytest.raises(TypeError, match=rf"^{name}: got both axis=0 and dim=1; pass one of them"):
            form(axis=0, dim=1)
        if name in DIFFERENT_MEANINGS:
            with pytest.raises(TypeError, match=rf"^{name}: got both axis=1 and dim=1; pass one of them"):
                form(axis=1, dim=1)
        else:
            same, want = form(axis=1, dim=1), form(dim=1)
            for a, b in zip(
                same if isinstance(same, (list, tuple)) else [same], want if isinstance(want, (list, tuple)) else [want]
            ):
                np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_softmax_reads_dim_and_axis_alike(name):
    x = tga.tensor(X)
    want = getattr(F, name)(x, 1).detach().numpy()
    for out in (getattr(x, name)(1), getattr(x, name)(dim=1), getattr(x, name)(axis=1), getattr(tga, name)(x, 1),
                getattr(tga, name)(x, axis=1), getattr(F, name)(x, dim=1)):  # fmt: skip
        np.testing.assert_array_equal(out.detach().numpy(), want)


def test_keepdim_and_keepdims_are_aliases():
    x = tga.tensor(X)
    for name in ("sum", "mean", "logsumexp", "argmax", "all"):
        assert getattr(x, name)(dim=1, keepdim=True).shape == (2, 1)
        assert getattr(x, name)(axis=1, keepdims=True).shape == (2, 1)


def test_the_normaliser_itself():
    assert dims.axes((2, 3), None, "op") is None
    assert dims.axes((2, 3), -1, "op") == (1,)
    assert dims.axes((2, 3), [0, -1], "op") == (0, 1)
    assert dims.axes((), 0, "op") == () and dims.axes((), -1, "op") == ()
    with pytest.raises(dims.DimensionError, match="op: axis 1 is out of range for a 0-d tensor"):
        dims.axes((), 1, "op")
    with pytest.raises(TypeError, match="op: dim must be an int or a sequence of ints"):
        dims.axes((2, 3), "a", "op")
    assert dims.one((2, 3), np.int64(-2), "op") == 0
    with pytest.raises(TypeError, match="op: dim must be one int"):
        dims.one((2, 3), (0, 1), "op")
    with pytest.raises(dims.DimensionError, match="0-d tensor"):
        dims.one((), 0, "op", scalar_ok=False)
    assert dims.new_axis((2, 3), -1, "op") == 2
    s = dims.spelling("max", 1, True)
    assert (s.dim, s.keepdim, s.numpy) == (1, True, False)
    s = dims.spelling("max", axis=1, keepdims=False)
    assert (s.dim, s.keepdim, s.numpy) == (1, False, True)
    with pytest.raises(TypeError, match="cumsum: missing the dim"):
        dims.required(None, None, "cumsum")
