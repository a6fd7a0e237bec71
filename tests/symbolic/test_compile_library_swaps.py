"""A function swapped in a library's namespace between calls (``F.gelu = F.relu``,
``tga.tanh = tga.sigmoid``, ``tga.nn.functional.silu = ...``) is what the next replay calls, as
eager would: the guard reads what the step names of a library module, down each chain of
attributes, after the check of its last reads has held for several replays."""

from __future__ import annotations

import numpy as np
import pytest

import tinygrad_attn as tga

F = tga.nn.functional

#: (namespace, name, replacement): the step reads namespace.name through the spelling below
SWAPS = [
    (F, "gelu", F.relu),
    (tga, "tanh", tga.sigmoid),
    (F, "silu", F.softplus),
    (tga, "exp", tga.sin),
    (F, "softmax", F.log_softmax),
    (tga.linalg, "vector_norm", tga.sum),
]


def _step(x):
    a = F.gelu(x).sum() + tga.tanh(x).sum() + tga.nn.functional.silu(x).sum()
    b = tga.exp(x).mean() + F.softmax(x, dim=-1)[0, 0] + tga.linalg.vector_norm(x)
    return a + b


@pytest.mark.parametrize("swap", SWAPS, ids=lambda s: f"{s[0].__name__}.{s[1]}")
def test_a_swapped_library_function_is_called_by_the_next_replay(swap):
    ns, name, new = swap
    x = tga.tensor(np.random.default_rng(0).normal(size=(3, 4)).astype(np.float32))
    step = tga.compile(_step)
    for _ in range(4):  # (the check of the last reads holds: replays)
        np.testing.assert_allclose(step(x).item(), _step(x).item(), rtol=1e-5)
    old = getattr(ns, name)
    setattr(ns, name, new)
    try:
        for _ in range(3):
            np.testing.assert_allclose(step(x).item(), _step(x).item(), rtol=1e-5)
    finally:
        setattr(ns, name, old)
    np.testing.assert_allclose(step(x).item(), _step(x).item(), rtol=1e-5)
