"""Every op of the table (``tests/opinfo.py``), compiled: a step that computes the op and
takes the gradient of its outputs is traced on one sample and called again on the same
shapes with other values. The second call must give what eager gives on those values
(outputs and gradients), or the first must refuse with a ``TraceError`` that names the line.

This is the class a value computed on a tensor's arrays outside an op falls into (a NaN
mask, a sign bit, a LAPACK factor, an index's last writes): invisible to a trace, it would be
kept as a constant and replayed for every later input. Such values are ops
(``ops.array_function``), or a trace refuses them (``check_host_read``)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from helpers import examples
from hypothesis import HealthCheck, given, settings
from opinfo import OPS, OpInfo, Sample

import tinygrad_attn as tga
from tinygrad_attn import Tensor
from tinygrad_attn.symbolic import TraceError

# A generator over the whole op table: the full suite's (CI runs it), not the fast loop's.
pytestmark = pytest.mark.slow


def _other_values(a: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """The same shape and dtype with the values moved around: inside the op's domain (the
    same multiset: positive stays positive, an index stays in range), different where the
    values are not all equal. A one-element float array is scaled toward zero."""
    if a.size <= 1:
        return a * 0.75 if a.dtype == np.float64 else a.copy()
    flat = a.reshape(-1)
    return flat[rng.permutation(flat.size)].reshape(a.shape)


def _tensors(out) -> list:
    if isinstance(out, Tensor):
        return [out]
    if isinstance(out, (tuple, list)):
        return [t for x in out for t in _tensors(x)]
    return [out]


def _step(op: OpInfo, kwargs: dict):
    def step(*ts):
        out = op.ours(*ts, **kwargs)
        loss = None
        for t in _tensors(out):
            if isinstance(t, Tensor) and t.requires_grad and t.dtype.kind == "f":
                s = (t * 0.5).sum()
                loss = s if loss is None else loss + s
        if loss is not None:
            loss.backward()
        return out

    return step


def _inputs(op: OpInfo, arrays: list) -> list:
    n = len(arrays) if op.grad_args is None else op.grad_args
    return [Tensor(a.copy(), requires_grad=op.grad and i < n and a.dtype == np.float64) for i, a in enumerate(arrays)]


def _same(got, want, what: str) -> None:
    if isinstance(want, Tensor):
        assert isinstance(got, Tensor), f"{what}: {type(got).__name__}, eager a tensor"
        g, w = got.detach().numpy(), want.detach().numpy()
        assert g.shape == w.shape and g.dtype == w.dtype, f"{what}: {g.shape} {g.dtype}, eager {w.shape} {w.dtype}"
        np.testing.assert_allclose(g, w, rtol=1e-9, atol=1e-12, equal_nan=True, err_msg=what)
    else:
        assert got == want or (got != got and want != want), f"{what}: {got!r}, eager {want!r}"


def _check(op: OpInfo, sample: Sample, rng: np.random.Generator) -> None:
    other = [_other_values(a, rng) for a in sample.args]
    step = _step(op, sample.kwargs)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        eager_in = _inputs(op, other)
        try:
            want = step(*eager_in)
        except Exception:  # (the other values outside the op's domain: nothing to compare)
            return
        compiled = tga.compile(step)
        try:
            compiled(*_inputs(op, list(sample.args)))
        except TraceError as e:
            assert "line" in str(e), f"{op.name}: a TraceError that names no line: {e}"
            return
        replay_in = _inputs(op, other)
        got = compiled(*replay_in)
    outs, wants = _tensors(got), _tensors(want)
    assert len(outs) == len(wants), f"{op.name}: {len(outs)} outputs, eager {len(wants)}"
    for i, (g, w) in enumerate(zip(outs, wants)):
        _same(g, w, f"{op.name}: output {i} of the second call ({sample})")
    for i, (a, b) in enumerate(zip(replay_in, eager_in)):
        assert (a.grad is None) == (b.grad is None), f"{op.name}: gradient of argument {i} there or not"
        if a.grad is not None:
            _same(a.grad, b.grad, f"{op.name}: gradient of argument {i} ({sample})")


@pytest.mark.parametrize("op", OPS, ids=[op.name for op in OPS])
def test_a_compiled_op_replays_as_eager_or_refuses(op):
    rng = np.random.default_rng(0)

    @settings(max_examples=examples(4), deadline=None, derandomize=True, database=None,
              suppress_health_check=list(HealthCheck))  # fmt: skip
    @given(op.sample)
    def run(sample):
        _check(op, sample, rng)

    run()


def test_the_generator_catches_a_value_kept_as_a_constant(monkeypatch):
    """The check fails where an op computes on the arrays outside an op (``isnan`` as it was)."""
    import tinygrad_attn.tensors.tensor_functions as tf  # noqa: PLC0415

    monkeypatch.setattr(tf, "_elementwise_test", lambda x, name: Tensor._wrap(np.isnan(x._data), x._dev))
    op = next(o for o in OPS if o.name == "nansum")
    sample = Sample((np.array([[1.0, np.nan], [2.0, 3.0]]), *()), {"axis": 0, "keepdims": False})
    with pytest.raises(AssertionError):
        _check(op, sample, np.random.default_rng(2))  # (a permutation that moves the NaN)
