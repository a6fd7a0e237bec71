"""The in-place forms of the channel dropouts as PyTorch's: an unbatched input is given its batch
axis by ``unsqueeze_`` (which a leaf that requires grad refuses, whatever ``p`` and the mode), and
the alpha dropouts' modules keep ``inplace`` for their repr only (their forward is out of place)."""

from __future__ import annotations

import numpy as np
import pytest

import tinygrad_attn as tga

torch = pytest.importorskip("torch")

CASES = [("Dropout1d", (3, 4)), ("Dropout1d", (2, 3, 4)), ("Dropout3d", (3, 2, 2, 2)), ("Dropout2d", (2, 3, 4, 5)),
         ("AlphaDropout", (2, 3)), ("FeatureAlphaDropout", (2, 3, 4, 5))]  # fmt: skip


def _run(lib, name: str, shape: tuple, p: float, train: bool, leaf: bool):  # noqa: ANN001, ANN202
    lib.manual_seed(0)
    m = getattr(lib.nn, name)(p=p, inplace=True)
    m.train(train)
    x = lib.linspace(-1.0, 2.0, int(np.prod(shape)), dtype=lib.float64).reshape(shape).requires_grad_()
    y = x if leaf else x * 1.0
    try:
        out = m(y)
    except RuntimeError:
        return "RuntimeError"
    return out.detach().numpy().copy(), y.detach().numpy().copy(), tuple(y.shape), out is y


@pytest.mark.parametrize(("name", "shape"), CASES)
@pytest.mark.parametrize(("p", "train"), [(0.0, True), (0.5, True), (0.5, False)])
@pytest.mark.parametrize("leaf", [True, False])
def test_in_place_dropouts_as_pytorchs(name: str, shape: tuple, p: float, train: bool, leaf: bool) -> None:
    want, got = _run(torch, name, shape, p, train, leaf), _run(tga, name, shape, p, train, leaf)
    if isinstance(want, str):
        assert got == want
        return
    assert not isinstance(got, str), f"PyTorch runs, tinygrad_attn raises {got}"
    np.testing.assert_allclose(got[0], want[0], rtol=1e-12)
    np.testing.assert_allclose(got[1], want[1], rtol=1e-12)
    assert got[2:] == want[2:]
