"""Every factory with every kind of size (negative, zero, empty, mixed): it raises where
PyTorch raises, with PyTorch's class, and makes PyTorch's shape where PyTorch runs."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

import tinygrad_attn as tga  # noqa: E402

_FACTORIES = {
    "zeros": lambda lib, s: lib.zeros(*s),
    "zeros_tuple": lambda lib, s: lib.zeros(tuple(s)),
    "ones": lambda lib, s: lib.ones(s),
    "empty": lambda lib, s: lib.empty(*s),
    "rand": lambda lib, s: lib.rand(*s),
    "randn": lambda lib, s: lib.randn(tuple(s)),
    "full": lambda lib, s: lib.full(tuple(s), 2.0),
    "randint": lambda lib, s: lib.randint(0, 5, tuple(s)),
    "new_zeros": lambda lib, s: lib.ones(2).new_zeros(*s),
    "new_ones": lambda lib, s: lib.ones(2).new_ones(tuple(s)),
    "new_empty": lambda lib, s: lib.ones(2).new_empty(tuple(s)),
    "new_full": lambda lib, s: lib.ones(2).new_full(tuple(s), 3.0),
}
_SIZES = [(-1,), (2, -1), (-3, 2), (0,), (2, 0, 3), (1,), (2, 3)]


@pytest.mark.parametrize("size", _SIZES, ids=str)
@pytest.mark.parametrize("factory", sorted(_FACTORIES))
def test_a_factory_takes_and_refuses_the_sizes_pytorchs_does(factory, size):
    make = _FACTORIES[factory]
    try:
        theirs = make(torch, size)
    except Exception as e:  # noqa: BLE001 - compared below
        with pytest.raises(type(e)):
            make(tga, size)
        return
    assert tuple(make(tga, size).shape) == tuple(theirs.shape)


def _ranges() -> list[tuple]:
    """Bounds and steps with fractional parts of both signs, steps that cut to 0 in an integer dtype."""
    rng = __import__("random").Random(7)
    out = [(1, 2.5, 0.5), (0.5, 3.2, 1.5), (-1.5, 2, 0.9), (0, 5, 2.5), (2.7, -1, -0.6), (0.5, 3.7, 0.9)]
    for _ in range(24):
        start = round(rng.uniform(-4, 4), 1)
        step = round(rng.choice([-1, 1]) * rng.uniform(0.2, 2.5), 1)
        out.append((start, round(start + step * rng.randint(1, 6) + rng.uniform(-0.4, 0.4), 1), step))
    return out


@pytest.mark.parametrize("dtype", ["int64", "int32", "int16", "uint8", "float32", "float64"])
@pytest.mark.parametrize("bounds", _ranges(), ids=str)
def test_arange_with_fractional_bounds_in_every_dtype_is_pytorchs(bounds, dtype):
    if dtype == "uint8" and (bounds[0] < 0 or bounds[1] < 0):
        return  # (PyTorch's uint8 of a negative number wraps by the platform's cast: not a contract)
    try:
        theirs = torch.arange(*bounds, dtype=getattr(torch, dtype))
    except Exception as e:  # noqa: BLE001 - compared below
        with pytest.raises(type(e)):
            tga.arange(*bounds, dtype=getattr(tga, dtype))
        return
    ours = tga.arange(*bounds, dtype=getattr(tga, dtype))
    assert str(ours.dtype).split(".")[-1] == dtype
    assert ours.tolist() == pytest.approx(theirs.tolist(), rel=1e-6)


# -- sizes by keyword: zeros(size=(2, 3)), randint(5, size=...), arange(end=3) --------------------------------
KEYWORD_SIZE_CALLS = (
    "zeros(size=(2, 3))", "ones(size=(2, 3))", "empty(size=(2, 3)).shape", "rand(size=(2, 3))", "randn(size=(2, 3))",
    "randint(5, size=(2, 3))", "randint(low=0, high=5, size=(2,))", "randint(high=5, size=(2,))", "zeros(size=[2])",
    "empty(size=(2,), dtype=torch.int64).shape", "ones(size=(2,), requires_grad=True)", "rand(size=(2,), generator=None)",
    "arange(end=3)", "arange(start=1, end=3)", "arange()", "zeros(2, size=(3,))", "randn(size=2)",
    "zeros(size=torch.Size([2]))", "arange(5)", "arange(1, 4)", "randint(3, (2,))", "randint(1, 3, (2,))",
)  # fmt: skip


@pytest.mark.parametrize("call", KEYWORD_SIZE_CALLS)
def test_factory_sizes_by_keyword_as_pytorch(call: str) -> None:
    def outcome(lib):
        lib.manual_seed(0)
        try:
            v = eval(f"torch.{call}", {"torch": lib})
        except TypeError:
            return "TypeError"
        return (tuple(v), None) if isinstance(v, tuple) else (str(v.dtype).split(".")[-1], v.tolist(), v.requires_grad)

    assert outcome(tga) == outcome(torch)
