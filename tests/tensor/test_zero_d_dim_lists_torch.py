"""A 0-d tensor's dims 0 and -1 are one axis, as PyTorch wraps them: a dim list naming it twice
(``(0, -1)``, ``(0, 0)``) is PyTorch's RuntimeError in every reduction, a list naming it once runs."""

from __future__ import annotations

import pytest

import tinygrad_attn as tga

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("op", ["sum", "mean", "amax", "amin", "any", "nanmean", "count_nonzero", "logsumexp", "std"])
@pytest.mark.parametrize("dim", [(0, -1), (0, 0), (-1, -1), (0,), [-1]])
def test_dim_lists_of_a_0d_tensor(op: str, dim: tuple) -> None:
    def run(lib):  # noqa: ANN001, ANN202
        try:
            return float(getattr(lib.tensor(0.5), op)(dim=dim))
        except RuntimeError:
            return "RuntimeError"

    want, got = run(torch), run(tga)
    assert got == want or (want != want and got != got), (want, got)
