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
