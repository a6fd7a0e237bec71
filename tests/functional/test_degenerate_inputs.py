"""Inputs with an empty axis where PyTorch computes an (empty or constant) result: ours too,
not an internal ZeroDivisionError."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import tinygrad_attn as tga  # noqa: E402

CALLS = {
    "attention of queries without features": lambda m: m.nn.functional.scaled_dot_product_attention(
        m.ones(2, 3, 0), m.ones(2, 4, 0), m.arange(40.0).reshape(2, 4, 5)
    ),
    "batch_norm of no channels": lambda m: m.nn.functional.batch_norm(m.ones(1, 0, 2), None, None, training=True),
    "batch_norm of no batch": lambda m: m.nn.functional.batch_norm(m.ones(0, 3, 2), None, None, training=True),
}


@pytest.mark.parametrize("name", CALLS)
def test_a_degenerate_input_computes_as_pytorchs(name):
    want, got = CALLS[name](torch), CALLS[name](tga)
    assert tuple(got.shape) == tuple(want.shape)
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy())
