"""``unique`` of tensors holding NaN, flat and along a dim, against PyTorch's: values, inverse and
counts. A NaN equals nothing, so each is its own entry (slice); along a dim, where a NaN slice lands
is where PyTorch's sort of the slices (every comparison with NaN false) leaves it."""

from __future__ import annotations

import random

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import tinygrad_attn as tga  # noqa: E402

VALUES = [float("nan"), 1.0, 0.0, -0.0, -float("inf"), float("inf"), 2.0]


def _draws(seed: int, long: bool):
    r = random.Random(seed)
    for _ in range(150):
        if long:  # (more than 16 slices: PyTorch's sort splits before its insertion sort)
            shape = (r.randint(17, 40), r.randint(1, 2))
        else:
            shape = tuple(r.randint(1, 4) for _ in range(r.randint(1, 3)))
        a = np.array([r.choice(VALUES) for _ in range(int(np.prod(shape)))]).reshape(shape)
        yield a, r.choice([None, *range(len(shape))])


@pytest.mark.parametrize("long", [False, True])
@pytest.mark.parametrize("dtype", ["float64", "float16"])
def test_unique_with_nan_as_in_torch(dtype, long):
    bad = []
    for a, dim in _draws(0, long):
        theirs = torch.unique(torch.tensor(a, dtype=getattr(torch, dtype)), dim=dim, return_inverse=True,
                              return_counts=True)  # fmt: skip
        ours = tga.unique(tga.tensor(a, dtype=getattr(tga, dtype)), dim=dim, return_inverse=True, return_counts=True)
        for what, t, o in zip(("values", "inverse", "counts"), theirs, ours):
            t, o = t.numpy(), o.numpy()
            if t.shape != o.shape or t.dtype != o.dtype or not np.array_equal(t, o, equal_nan=True):
                bad.append(f"unique({a.tolist()}, dim={dim}) {what}: PyTorch {t.tolist()}, ours {o.tolist()}")
    assert not bad, f"{len(bad)} differences; first: {bad[0]}"
