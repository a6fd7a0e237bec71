"""The reference backward (``tinygrad_attn/engine/reference_backward.py``, the one to read)
and the engine's pass give the same gradients: every op of the table (``tests/opinfo.py``)
that has a gradient, in float64, composites both fused and decomposed."""

from __future__ import annotations

import contextlib

import numpy as np
import pytest
from helpers import examples
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from opinfo import OPS, OpInfo

import tinygrad_attn as tga
from tinygrad_attn import Tensor
from tinygrad_attn.engine.reference_backward import reference_grad

CASES = [
    pytest.param(op, mode, id=f"{op.name}-{mode}")
    for op in OPS
    if op.grad
    for mode in (("fused", "decomposed") if op.composite else ("plain",))
]


@pytest.mark.parametrize("op, mode", CASES)
@settings(max_examples=examples(8), deadline=None, derandomize=True, database=None,
          suppress_health_check=list(HealthCheck))  # fmt: skip
@given(data=st.data())
def test_the_reference_and_the_engine_give_the_same_gradients(op: OpInfo, mode: str, data) -> None:
    sample = data.draw(op.sample, label="sample")
    n = len(sample.args) if op.grad_args is None else op.grad_args
    xs = [Tensor(a, requires_grad=i < n and a.dtype == np.float64) for i, a in enumerate(sample.args)]
    diff = [x for x in xs if x.requires_grad]
    decomposed = tga.decompose() if mode == "decomposed" else contextlib.nullcontext()
    with np.errstate(all="ignore"), decomposed:
        out = op.ours(*xs, **sample.kwargs)
        assert out.requires_grad, f"{op.name}: no graph to differentiate ({sample})"
        v = np.random.default_rng(0).standard_normal(tuple(out.shape))
        want = reference_grad(out, diff, v)  # (first: the engine's pass releases what the graph saved)
        got = tga.grad(out, diff, Tensor(v), allow_unused=True)
    for i, (g, w) in enumerate(zip(got, want)):
        assert (g is None) == (w is None), f"{op.name}: input {i} has a gradient in one pass only ({sample})"
        if g is not None:
            np.testing.assert_allclose(g.detach().numpy(), np.asarray(w), rtol=1e-12, atol=1e-12, equal_nan=True,
                                       err_msg=f"{op.name}: gradient of input {i} ({sample})")  # fmt: skip
