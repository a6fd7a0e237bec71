"""An in-place change of a view of a tensor without grad, by a value that requires grad:
PyTorch writes the base, which then requires grad and carries the change's history
(``CopySlices``); the view follows it. Ours does the same, for every view op and in-place op."""

from __future__ import annotations

import numpy as np
import pytest

import tinygrad_attn as tga

torch = pytest.importorskip("torch")

VIEWS = {
    "slice": lambda b: b[1:3],
    "row of a reshape": lambda b: b.reshape(2, 2)[0],
    "row of a transpose": lambda b: b.reshape(2, 2).T[1],
    "view of a view": lambda b: b[0:3][1:],
}
CHANGES = {
    "+=": lambda v, w: v.__iadd__(w),
    "add_": lambda v, w: v.add_(w),
    "mul_": lambda v, w: v.mul_(w),
    "copy_": lambda v, w: v.copy_(w),
    "sub_ twice": lambda v, w: v.sub_(w).sub_(w * w),
}


@pytest.mark.parametrize("view", VIEWS, ids=str)
@pytest.mark.parametrize("change", CHANGES, ids=str)
def test_the_base_is_written_and_then_requires_grad(view, change):
    start = np.arange(1.0, 5.0)
    b, tb = tga.tensor(start), torch.tensor(start)
    w, tw = tga.tensor([2.0, 3.0], requires_grad=True), torch.tensor([2.0, 3.0], requires_grad=True)
    v, tv = VIEWS[view](b), VIEWS[view](tb)
    r = CHANGES[change](v, w)
    assert CHANGES[change](tv, tw) is tv
    assert r is v  # the in-place op returns the view itself, never a new tensor
    np.testing.assert_array_equal(b.detach().numpy(), tb.detach().numpy())
    np.testing.assert_array_equal(v.detach().numpy(), tv.detach().numpy())
    assert b.requires_grad and v.requires_grad and not b.is_leaf
    weights = np.array([1.0, -2.0, 5.0, 7.0])
    (b * tga.tensor(weights)).sum().backward()
    (tb * torch.tensor(weights)).sum().backward()
    np.testing.assert_allclose(w.grad.detach().numpy(), tw.grad.detach().numpy(), rtol=1e-12)


def test_without_a_value_that_requires_grad_nothing_is_recorded():
    b = tga.zeros(4)
    v = b[1:3]
    v += 1.0
    np.testing.assert_array_equal(b.detach().numpy(), [0.0, 1.0, 1.0, 0.0])
    assert not b.requires_grad and b.is_leaf


def test_an_expanded_view_still_refuses():
    # (PyTorch: "unsupported operation: more than one element of the written-to tensor refers
    # to a single memory location")
    b = tga.zeros(1)
    v = b.expand(3)
    with pytest.raises(RuntimeError):
        v.add_(tga.ones(3, requires_grad=True))
