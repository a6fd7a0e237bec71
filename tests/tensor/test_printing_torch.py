"""Tensors print as PyTorch prints them: ``repr``/``str``/``format`` of every dtype, shape and
kind of values (whole floats, spans that need scientific notation, NaN and inf, empty and
summarised tensors), under every print option, with the ``dtype=``, ``size=``,
``requires_grad=`` and ``grad_fn=`` suffixes; and ``torch.Size`` as PyTorch's."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pytest

import tinygrad_attn as tga

torch = pytest.importorskip("torch")

DTYPES = ["float32", "float64", "float16", "int64", "int32", "int16", "int8", "uint8", "bool", "complex64"]
SHAPES = [(), (1,), (4,), (2, 3), (2, 1, 3), (0,), (0, 3), (2, 0), (3, 40), (1200,), (40, 40), (2, 2, 300)]


def _values(kind: str, shape: tuple[int, ...], dtype: str, rng: np.random.Generator) -> np.ndarray:
    n = int(np.prod(shape))
    a = {
        "normal": lambda: rng.standard_normal(n),
        "whole": lambda: rng.integers(-50, 50, n).astype(np.float64),
        "wide": lambda: rng.standard_normal(n) * 10.0 ** rng.integers(-6, 9, n),
        "tiny": lambda: rng.uniform(1e-6, 9e-5, n),
        "special": lambda: np.resize([np.nan, np.inf, -np.inf, 1.5, 0.0, -0.0], n),
        "zeros": lambda: np.zeros(n),
        "big_whole": lambda: np.resize([1.0, 3e9, -7.0], n),
    }[kind]()
    if dtype == "bool":
        a = a > 0
    elif dtype == "complex64":
        a = a + 1j * rng.standard_normal(n)
    elif np.dtype(dtype).kind in "iu":
        info = np.iinfo(dtype)
        a = np.clip(np.nan_to_num(a, posinf=info.max, neginf=info.min), info.min, info.max)
    with np.errstate(invalid="ignore", over="ignore"):
        return a.astype(dtype).reshape(shape)


def _cases() -> list[Any]:
    kinds = ["normal", "whole", "wide", "tiny", "special", "zeros", "big_whole"]
    out = []
    for dtype, shape, kind in itertools.product(DTYPES, SHAPES, kinds):
        if kind != "normal" and (np.dtype(dtype).kind in "biu" or dtype == "complex64") and kind != "whole":
            continue  # (integers and bools: the kinds differ only by the float values they come from)
        out.append(pytest.param(dtype, shape, kind, id=f"{dtype}-{'x'.join(map(str, shape)) or 'scalar'}-{kind}"))
    return out


@pytest.mark.parametrize("dtype, shape, kind", _cases())
def test_repr_and_str_are_pytorchs(dtype: str, shape: tuple[int, ...], kind: str) -> None:
    a = _values(kind, shape, dtype, np.random.default_rng(abs(hash((dtype, shape, kind))) % 2**32))
    ours, theirs = tga.tensor(a), torch.tensor(a)
    assert repr(ours) == repr(theirs)
    assert str(ours) == str(theirs)
    assert f"{ours}" == f"{theirs}"


OPTIONS = [
    {"precision": 2},
    {"precision": 8},
    {"sci_mode": True},
    {"sci_mode": False},
    {"threshold": 5},
    {"threshold": 5, "edgeitems": 1},
    {"linewidth": 40},
    {"profile": "short"},
    {"profile": "full"},
    {"profile": "default", "precision": 6, "sci_mode": True},
]


@pytest.fixture
def restored_printoptions():
    yield
    tga.set_printoptions(profile="default")
    torch.set_printoptions(profile="default")


@pytest.mark.parametrize("options", OPTIONS, ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()))
@pytest.mark.parametrize("kind", ["normal", "whole", "wide", "special"])
@pytest.mark.parametrize("shape", [(7,), (3, 9), (2, 3, 4), (1500,)], ids=str)
def test_print_options_are_pytorchs(options: dict, kind: str, shape: tuple[int, ...], restored_printoptions) -> None:
    a = _values(kind, shape, "float32", np.random.default_rng(7))
    tga.set_printoptions(**options)
    torch.set_printoptions(**options)
    assert repr(tga.tensor(a)) == repr(torch.tensor(a))
    i = _values(kind, shape, "int64", np.random.default_rng(7))
    assert repr(tga.tensor(i)) == repr(torch.tensor(i))


PROGRAMS = {
    "leaf": lambda t: t.tensor([1.0, 2.5], requires_grad=True),
    "leaf float64": lambda t: t.ones(2, 2, dtype=t.float64, requires_grad=True),
    "mul": lambda t: t.tensor([1.0, 2.0], requires_grad=True) * 2,
    "sum": lambda t: t.tensor([1.0, 2.0], requires_grad=True).sum(),
    "a long row": lambda t: t.linspace(0, 3, 30, requires_grad=True) * 3,
    "linear": lambda t: t.nn.functional.linear(t.ones(3, 2), t.ones(4, 2, requires_grad=True), t.ones(4)),
    "matmul": lambda t: t.ones(2, 3, requires_grad=True) @ t.ones(3, 2),
    "cross_entropy": lambda t: t.nn.functional.cross_entropy(t.ones(3, 4, requires_grad=True), t.tensor([0, 1, 3])),
    "sigmoid": lambda t: t.ones(2, requires_grad=True).sigmoid(),
    "tanh": lambda t: t.ones(2, requires_grad=True).tanh(),
    "softmax": lambda t: t.ones(2, 3, requires_grad=True).softmax(-1),
    "view": lambda t: t.ones(2, 3, requires_grad=True).view(6),
    "t": lambda t: t.ones(2, 3, requires_grad=True).t(),
    "relu": lambda t: t.ones(2, requires_grad=True).relu(),
    "float64 mul": lambda t: t.ones(2, dtype=t.float64, requires_grad=True) * 3,
    "empty with grad": lambda t: t.zeros(0, 2, requires_grad=True),
    "detached": lambda t: (t.ones(2, requires_grad=True) * 2).detach(),
    "mean": lambda t: t.ones(2, 3, requires_grad=True).mean(),
    "mse_loss": lambda t: t.nn.functional.mse_loss(t.ones(3, requires_grad=True), t.zeros(3)),
    "nll_loss": lambda t: t.nn.functional.nll_loss(t.ones(2, 3, requires_grad=True), t.tensor([0, 2])),
    "l1_loss": lambda t: t.nn.functional.l1_loss(t.ones(3, requires_grad=True), t.zeros(3)),
    "bce_with_logits": lambda t: t.nn.functional.binary_cross_entropy_with_logits(
        t.ones(3, requires_grad=True), t.ones(3)
    ),
    "log_softmax": lambda t: t.ones(2, 3, requires_grad=True).log_softmax(1),
    "layer_norm": lambda t: t.nn.functional.layer_norm(t.ones(2, 3, requires_grad=True), (3,)),
    "gelu": lambda t: t.nn.functional.gelu(t.ones(3, requires_grad=True)),
    "norm": lambda t: t.ones(3, requires_grad=True).norm(),
    "linear without bias": lambda t: t.nn.functional.linear(t.ones(3, 2), t.ones(4, 2, requires_grad=True)),
    "grad_fn itself": lambda t: repr((t.ones(2, requires_grad=True) + 1).grad_fn).split(" object at ")[0],
    "max over a dim": lambda t: t.tensor([[1.0, 5.0], [7.0, 2.0]]).max(1),
    "sort": lambda t: t.tensor([3.0, 1.0, 2.0]).sort(),
    "topk": lambda t: t.tensor([3.0, 1.0, 2.0]).topk(2),
    "median over a dim": lambda t: t.tensor([[3.0, 1.0, 2.0]]).median(1),
    "cummin": lambda t: t.tensor([3.0, 1.0, 2.0]).cummin(0),
    "parameter": lambda t: t.nn.Parameter(t.tensor([0.5, -1.0])),
    "parameter scalar": lambda t: t.nn.Parameter(t.tensor(0.5)),
    "parameter int64 frozen": lambda t: t.nn.Parameter(t.tensor([1, 2]), requires_grad=False),
}


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_autograd_suffixes_are_pytorchs(name: str) -> None:
    ours, theirs = PROGRAMS[name](tga), PROGRAMS[name](torch)
    assert repr(ours) == repr(theirs)
    assert str(ours) == str(theirs)


def test_default_dtype_decides_which_dtype_prints(restored_default_dtype=None) -> None:
    for lib in (tga, torch):
        lib.set_default_dtype(lib.float64)
    try:
        for make in (lambda t: t.tensor([1.5, 2.0]), lambda t: t.tensor([1.5], dtype=t.float32),
                     lambda t: t.tensor([1 + 2j]), lambda t: t.zeros(0), lambda t: t.zeros(0, dtype=t.float32)):  # fmt: skip
            assert repr(make(tga)) == repr(make(torch))
    finally:
        for lib in (tga, torch):
            lib.set_default_dtype(lib.float32)


SIZES = [(), (3,), (2, 3), (2, 0, 4)]


@pytest.mark.parametrize("shape", SIZES, ids=str)
def test_shape_is_pytorchs_size(shape: tuple[int, ...]) -> None:
    ours, theirs = tga.zeros(shape), torch.zeros(shape)
    for get in (lambda x: x.shape, lambda x: x.size(), lambda x: x.shape[1:], lambda x: x.shape + (5,),
                lambda x: (5,) + x.shape, lambda x: x.shape * 2, lambda x: x.T.shape if x.ndim == 2 else x.shape):  # fmt: skip
        o, t = get(ours), get(theirs)
        assert repr(o) == repr(t) and str(o) == str(t) and f"{o}" == f"{t}"
        assert type(o).__name__ == type(t).__name__ == "Size"
        assert o == t and o.numel() == t.numel() and hash(o) == hash(t)
    assert repr(tga.Size(shape)) == repr(torch.Size(shape))
    for bad in (lambda lib: lib.Size([2.5]), lambda lib: lib.Size(shape) + [1]):
        with pytest.raises(TypeError):
            bad(torch)
        with pytest.raises(TypeError):
            bad(tga)


def test_constants_print_as_pytorchs():
    """Every dtype, layout and memory format PyTorch names at its top level that we share prints
    as PyTorch's (``print(x.layout)`` reads ``torch.strided``)."""
    kinds = (torch.dtype, torch.layout, torch.memory_format)
    names = [n for n in dir(torch) if isinstance(getattr(torch, n), kinds) and hasattr(tga, n)]
    assert len(names) > 20
    bad = [(n, repr(getattr(tga, n)), repr(getattr(torch, n))) for n in names
           if (repr(getattr(tga, n)), str(getattr(tga, n))) != (repr(getattr(torch, n)), str(getattr(torch, n)))]  # fmt: skip
    assert not bad, bad
