"""``nn.MultiheadAttention``'s refusals of mismatched inputs as PyTorch's classes: its assertions
(``AssertionError``) for the shapes it checks, and its reshape's ``RuntimeError`` for a query and
keys of different batch sizes, which no assertion catches."""

from __future__ import annotations

import pytest

import tinygrad_attn as tga

torch = pytest.importorskip("torch")

SHAPES = [((3, 2, 4), (2, 2, 4), (2, 2, 4)), ((2, 3, 4), (2, 2, 4), (2, 2, 4)), ((3, 2, 4), (3, 2, 4), (3, 5, 4)),
          ((3, 2, 4), (3, 2, 5), (3, 2, 4)), ((2, 4), (3, 2, 4), (3, 2, 4)), ((3, 2, 4), (3, 2, 4), (3, 2, 4))]  # fmt: skip


def _outcome(lib, batch_first: bool, q: tuple, k: tuple, v: tuple):  # noqa: ANN001, ANN202
    m = lib.nn.MultiheadAttention(4, 2, batch_first=batch_first)
    try:
        return tuple(m(lib.ones(q), lib.ones(k), lib.ones(v))[0].shape)
    except Exception as e:  # noqa: BLE001 - the class is compared
        return type(e)


@pytest.mark.parametrize("batch_first", [True, False])
@pytest.mark.parametrize(("q", "k", "v"), SHAPES)
def test_mismatched_inputs_raise_pytorchs_classes(batch_first: bool, q: tuple, k: tuple, v: tuple) -> None:
    want, got = _outcome(torch, batch_first, q, k, v), _outcome(tga, batch_first, q, k, v)
    if isinstance(want, tuple):
        assert got == want
    else:
        assert isinstance(got, type) and issubclass(got, want), (want, got)
