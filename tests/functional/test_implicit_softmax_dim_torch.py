"""softmax, log_softmax and softmin called without a dim pick PyTorch's legacy axis (the first of
0-, 1- and 3-D inputs, the second otherwise) and warn once, as PyTorch's do, fused and decomposed."""

from __future__ import annotations

import contextlib
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import tinygrad_attn as tga  # noqa: E402


def _run(lib, fn, a, decomposed):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with tga.decompose() if decomposed else contextlib.nullcontext():
            out = getattr(lib.nn.functional, fn)(lib.tensor(a)).numpy()
    return out, [str(w.message) for w in caught]


@pytest.mark.parametrize("decomposed", [False, True], ids=["fused", "decomposed"])
@pytest.mark.parametrize("fn", ["softmax", "log_softmax", "softmin"])
@pytest.mark.parametrize("ndim", range(5))
def test_an_implicit_dim_is_pytorchs_with_its_warning(ndim, fn, decomposed):
    a = np.random.default_rng(ndim).normal(size=(2, 3, 4, 5)[:ndim])
    theirs, their_warnings = _run(torch, fn, a, False)
    ours, our_warnings = _run(tga, fn, a, decomposed)
    np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-12)
    assert our_warnings == their_warnings
