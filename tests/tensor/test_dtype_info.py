"""``tga.finfo`` and ``tga.iinfo`` against PyTorch's: every field, the repr, the errors."""

from __future__ import annotations

import pytest

import tinygrad_attn as tga

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("name", ["float16", "float32", "float64"])
def test_finfo_is_pytorchs(name):
    ours, theirs = tga.finfo(getattr(tga, name)), torch.finfo(getattr(torch, name))
    for field in ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution", "dtype"):
        assert getattr(ours, field) == getattr(theirs, field), field
        assert type(getattr(ours, field)) is type(getattr(theirs, field)), field
    assert repr(ours) == repr(theirs)


def test_finfo_defaults_to_float32():
    assert repr(tga.finfo()) == repr(torch.finfo())


@pytest.mark.parametrize("name", ["uint8", "int8", "int16", "int32", "int64"])
def test_iinfo_is_pytorchs(name):
    ours, theirs = tga.iinfo(getattr(tga, name)), torch.iinfo(getattr(torch, name))
    for field in ("bits", "max", "min", "dtype"):
        assert getattr(ours, field) == getattr(theirs, field), field
    assert repr(ours) == repr(theirs)


@pytest.mark.parametrize("info, name", [("finfo", "int32"), ("finfo", "bool"), ("iinfo", "float32")])
def test_the_wrong_kind_raises_a_type_error(info, name):
    with pytest.raises(TypeError):
        getattr(torch, info)(getattr(torch, name))
    with pytest.raises(TypeError, match=info):
        getattr(tga, info)(getattr(tga, name))
