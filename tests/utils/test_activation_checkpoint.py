"""``tga.utils.checkpoint`` against PyTorch's: the same outputs and gradients (PyTorch's
recomputation reproduces the plain call), the reentrant variant's rule that nothing records
when no input requires grad, and PyTorch's warnings and errors."""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest

import tinygrad_attn as tga
from tinygrad_attn.utils.checkpoint import checkpoint, checkpoint_sequential

torch = pytest.importorskip("torch")
from torch.utils import checkpoint as torch_checkpoint  # noqa: E402


def _block(lib):
    lib.manual_seed(0)
    return lib.nn.Sequential(
        lib.nn.Linear(4, 5), lib.nn.Tanh(), lib.nn.Linear(5, 3), lib.nn.ReLU(), lib.nn.Linear(3, 2)
    )


def _run(lib, ck, reentrant, input_grad, sequential, segments):
    net = _block(lib).double()
    x = lib.tensor(np.linspace(-1, 1, 12).reshape(3, 4), dtype=lib.float64, requires_grad=input_grad)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        if sequential:
            y = ck.checkpoint_sequential(net, segments, x, use_reentrant=reentrant)
        else:
            y = ck.checkpoint(net, x, use_reentrant=reentrant)
    out = [y.detach().numpy(), y.requires_grad, sorted({str(m.message)[:40] for m in w})]
    if y.requires_grad:
        y.sum().backward()
        out += [p.grad.detach().numpy() for p in net.parameters() if p.grad is not None]
        out.append(None if x.grad is None else x.grad.detach().numpy())
    return out


@pytest.mark.parametrize(
    ("reentrant", "input_grad", "sequential", "segments"),
    [(r, g, False, 1) for r, g in itertools.product([True, False], [True, False])]
    + [(r, g, True, s) for r, g, s in itertools.product([True, False], [True, False], [1, 2, 3])],
)
def test_outputs_gradients_and_warnings_as_pytorchs(reentrant, input_grad, sequential, segments):
    ours = _run(tga, tga.utils.checkpoint, reentrant, input_grad, sequential, segments)
    theirs = _run(torch, torch_checkpoint, reentrant, input_grad, sequential, segments)
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        if isinstance(b, np.ndarray):
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
        else:
            assert a == b


def test_use_reentrant_omitted_warns_as_pytorch_and_keyword_errors_match():
    x = tga.ones(2, requires_grad=True)
    with pytest.warns(UserWarning, match="use_reentrant parameter should be passed explicitly"):
        checkpoint(lambda a: a * 2, x)
    with pytest.warns(UserWarning, match="checkpoint_sequential: the use_reentrant"):
        checkpoint_sequential([tga.nn.ReLU()], 1, x)
    for lib, ck in ((tga, checkpoint), (torch, torch_checkpoint.checkpoint)):
        t = lib.ones(2, requires_grad=True)
        with pytest.raises(ValueError, match="Unexpected keyword arguments: b"):
            ck(lambda a, b=1: a * b, t, b=3, use_reentrant=True)
        with pytest.raises(ValueError, match="only supported when use_reentrant=False"):
            ck(lambda a: a, t, use_reentrant=True, debug=True)
        assert ck(lambda a, b=1: a * b, t, b=3, use_reentrant=False).tolist() == [3.0, 3.0]
