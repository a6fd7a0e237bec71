"""Differential tests against PyTorch: every entry of the op table (``tests/opinfo.py``)
is checked in float64 for value, gradient and gradient of gradient, composites both
fused and decomposed, on each CPU array namespace. PyTorch is only the oracle here."""

from __future__ import annotations

import contextlib
import warnings

import numpy as np
import pytest
from helpers import examples

torch = pytest.importorskip("torch")

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from hypothesis.extra import numpy as hnp  # noqa: E402
from opinfo import EXTREMES, OPS, OpInfo, Sample  # noqa: E402

import tinygrad_attn as tga  # noqa: E402
from tinygrad_attn import Tensor  # noqa: E402

#: The devices compared: NumPy and the array API's strict namespace (a CUDA GPU where present);
#: array_api_strict only in the full suite (the fast loop, -m "not slow", checks each op on NumPy).
ORACLE_DEVICES = [
    "cpu",
    pytest.param("array_api_strict", marks=pytest.mark.slow),
    pytest.param("cuda", marks=pytest.mark.gpu),
]
_QUIET_CHECKS = [
    HealthCheck.function_scoped_fixture,
    HealthCheck.too_slow,
    HealthCheck.filter_too_much,
    HealthCheck.data_too_large,
]


def _settings(n: int) -> settings:
    """``n`` examples per op, mode and device, the same ones on every run (derandomized); the
    fast loop (``-m "not slow"``, see conftest.py) draws fewer (``helpers.examples``)."""
    return settings(max_examples=examples(n), deadline=None, derandomize=True, database=None,
                    suppress_health_check=_QUIET_CHECKS)  # fmt: skip


def _cases(select=lambda op: True):
    return [
        pytest.param(op, mode, id=f"{op.name}-{mode}")
        for op in OPS
        if select(op)
        for mode in (("fused", "decomposed") if op.composite else ("plain",))
    ]


@contextlib.contextmanager
def _quiet():
    """Extreme inputs make NumPy and PyTorch warn (overflow, 0 * inf, degrees of freedom):
    the values are what is compared."""
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def _mode(mode: str):
    return tga.decompose() if mode == "decomposed" else contextlib.nullcontext()


def _differentiable(op: OpInfo, sample: Sample) -> list[bool]:
    n = len(sample.args) if op.grad_args is None else op.grad_args
    return [i < n and a.dtype == np.float64 for i, a in enumerate(sample.args)]


def _ours(op: OpInfo, sample: Sample, device: str, requires_grad: bool) -> list:
    diff = _differentiable(op, sample)
    return [Tensor(a, device=device, requires_grad=requires_grad and d) for a, d in zip(sample.args, diff)]


def _theirs(op: OpInfo, sample: Sample, requires_grad: bool) -> list:
    diff = _differentiable(op, sample)
    return [torch.from_numpy(a.copy()).requires_grad_(requires_grad and d) for a, d in zip(sample.args, diff)]


def _host(t) -> np.ndarray:
    if isinstance(t, Tensor):
        return t.detach().numpy()
    return t.detach().numpy(force=True)  # (force: PyTorch's second derivatives may be lazy zero tensors)


def _assert_close(op: OpInfo, ours, theirs, what: str, sample: Sample) -> None:
    got, want = _host(ours), _host(theirs)
    assert got.shape == want.shape, f"{op.name}: {what} shape {got.shape}, PyTorch {want.shape} ({sample})"
    if got.dtype.kind == "b" or want.dtype.kind == "b":
        np.testing.assert_array_equal(got, want, err_msg=f"{op.name}: {what} ({sample})")
        return
    np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=op.rtol, atol=op.atol,
                               equal_nan=True, err_msg=f"{op.name}: {what} ({sample})")  # fmt: skip


def _draw_with_extremes(data, op: OpInfo) -> Sample:
    sample = data.draw(op.sample, label="sample")
    if not op.extremes or not data.draw(st.booleans(), label="extremes"):
        return sample
    args = []
    for a in sample.args:
        if a.dtype == np.float64 and a.size:
            where = data.draw(hnp.arrays(np.bool_, a.shape), label="where")
            special = data.draw(hnp.arrays(np.float64, a.shape, elements=st.sampled_from(EXTREMES)), label="values")
            a = np.where(where, special, a)
        args.append(a)
    return Sample(tuple(args), sample.kwargs)


def _dtype_name(t) -> str:
    return str(t.dtype).replace("torch.", "")


@pytest.mark.parametrize("device", ORACLE_DEVICES)
@pytest.mark.parametrize("op, mode", _cases())
@_settings(10)
@given(data=st.data())
def test_value(op: OpInfo, mode: str, device: str, data) -> None:
    sample = _draw_with_extremes(data, op)
    with _quiet():
        want = op.theirs(*_theirs(op, sample, False), **sample.kwargs)
        with _mode(mode):
            got = op.ours(*_ours(op, sample, device, False), **sample.kwargs)
    _assert_close(op, got, want, "value", sample)
    assert got.dtype.name == _dtype_name(want), f"{op.name}: dtype {got.dtype}, PyTorch {want.dtype} ({sample})"


def _draw_for_gradients(data, op: OpInfo) -> Sample:
    return data.draw(op.sample, label="sample")  # (0-d inputs included: their gradients add up)


def _cotangent(shape: tuple, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape)


@pytest.mark.parametrize("device", ORACLE_DEVICES)
@pytest.mark.parametrize("op, mode", _cases(lambda op: op.grad))
@_settings(8)
@given(data=st.data())
def test_gradient(op: OpInfo, mode: str, device: str, data) -> None:
    sample = _draw_for_gradients(data, op)
    xs, ts = _ours(op, sample, device, True), _theirs(op, sample, True)
    diff = [i for i, t in enumerate(ts) if t.requires_grad]
    with _quiet():
        want_out = op.theirs(*ts, **sample.kwargs)
        v = _cotangent(tuple(want_out.shape))
        want = torch.autograd.grad(want_out, [ts[i] for i in diff], torch.from_numpy(v), allow_unused=True,
                                   materialize_grads=True)  # fmt: skip
        with _mode(mode):
            out = op.ours(*xs, **sample.kwargs)
            got = tga.grad(out, [xs[i] for i in diff], Tensor(v, device=device), allow_unused=True)
    for i, g, w in zip(diff, got, want):
        if g is None:
            g = Tensor(np.zeros(xs[i].shape), device=device)
        _assert_close(op, g, w, f"gradient of input {i}", sample)


@pytest.mark.parametrize("device", ORACLE_DEVICES)
@pytest.mark.parametrize("op, mode", _cases(lambda op: op.grad and op.gradgrad))
@_settings(5)
@given(data=st.data())
def test_gradient_of_gradient(op: OpInfo, mode: str, device: str, data) -> None:
    """d/dx <grad_x(<f(x), v>), u>: the first-order gradient, recorded with
    ``create_graph=True``, differentiated again."""
    sample = _draw_for_gradients(data, op)
    xs, ts = _ours(op, sample, device, True), _theirs(op, sample, True)
    diff = [i for i, t in enumerate(ts) if t.requires_grad]
    with _quiet():
        out_t = op.theirs(*ts, **sample.kwargs)
        v = _cotangent(tuple(out_t.shape))
        us = [_cotangent(tuple(ts[i].shape), seed=1 + i) for i in diff]
        g1 = torch.autograd.grad(out_t, [ts[i] for i in diff], torch.from_numpy(v), create_graph=True,
                                 allow_unused=True, materialize_grads=True)  # fmt: skip
        s_t = sum((g * torch.from_numpy(u)).sum() for g, u in zip(g1, us))
        if s_t.requires_grad:
            want = torch.autograd.grad(s_t, [ts[i] for i in diff], allow_unused=True, materialize_grads=True)
        else:
            want = [torch.zeros_like(ts[i]) for i in diff]
        with _mode(mode):
            out = op.ours(*xs, **sample.kwargs)
            g1 = tga.grad(out, [xs[i] for i in diff], Tensor(v, device=device), create_graph=True, allow_unused=True)
            terms = [(g * Tensor(u, device=device)).sum() for g, u in zip(g1, us) if g is not None]
            s = sum(terms[1:], terms[0]) if terms else None
            got = (
                tga.grad(s, [xs[i] for i in diff], allow_unused=True)
                if s is not None and s.requires_grad
                else [None] * len(diff)
            )
    for i, g, w in zip(diff, got, want):
        if g is None:
            g = Tensor(np.zeros(xs[i].shape), device=device)
        _assert_close(op, g, w, f"second-order gradient of input {i}", sample)
