"""PyTorch's grad-mode switches, against PyTorch: ``set_grad_enabled`` (a call switches at once;
a ``with`` block and a decorator switch back) and ``inference_mode`` (a ``with`` block or a
decorator, with or without parentheses; ``inference_mode(False)`` records)."""

from __future__ import annotations

import numpy as np
import pytest

import tinygrad_attn as tga

torch = pytest.importorskip("torch")


def _script(lib):
    """What a series of uses of the switches records, as ``requires_grad`` of ``x * 2``."""
    x = lib.tensor(np.ones(2), requires_grad=True)
    seen = []

    def records():
        seen.append((x * 2).requires_grad)

    with lib.set_grad_enabled(False):
        records()
    records()
    lib.set_grad_enabled(False)
    records()
    with lib.set_grad_enabled(True):
        records()
    records()
    lib.set_grad_enabled(True)

    @lib.set_grad_enabled(False)
    def off():
        records()

    records()  # (decorating switched nothing)
    off()
    records()
    with lib.inference_mode():
        records()

    @lib.inference_mode
    def bare():
        records()

    @lib.inference_mode()
    def called():
        records()

    bare()
    called()
    records()
    with lib.no_grad():
        with lib.inference_mode(False):
            records()
        with lib.enable_grad():
            records()
    return seen


def test_grad_mode_switches_as_pytorchs():
    ours, theirs = _script(tga), _script(torch)
    assert ours == theirs
    assert ours.count(True) >= 4 and ours.count(False) >= 4  # (the script exercises both modes)
    assert tga.is_grad_enabled()


def test_randperm_is_a_permutation_from_the_seeded_generator():
    tga.manual_seed(3)
    a = tga.randperm(10)
    tga.manual_seed(3)
    b = tga.randperm(10)
    assert a.dtype == np.int64 == torch.randperm(10).detach().numpy().dtype
    np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())
    np.testing.assert_array_equal(np.sort(a.detach().numpy()), np.arange(10))
    assert tga.randperm(4, dtype=tga.float32).dtype == np.float32 and tga.randperm(0).shape == (0,)
    with pytest.raises(RuntimeError, match="non-negative"):
        tga.randperm(-1)
