"""PyTorch's OpInfo samples through ``tga.compile``: each op we have (``test_torch_opinfo.TARGETS``)
is traced on a sample and called again with the float values moved around (same shapes and
dtypes); the second call must give what eager gives, with the result's type (a named tuple
such as ``max(dim=)``'s ``(values, indices)`` stays one), or the first must refuse with a
``TraceError``. Random ops are left out (a replay draws fresh numbers, as eager does, but not
the same ones as an eager call in between)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("expecttest")  # PyTorch's test internals import it

# A generator over PyTorch's whole inventory: the full suite's (CI runs it), not the fast loop's.
pytestmark = pytest.mark.slow

import test_torch_opinfo as T  # noqa: E402

import tinygrad_attn as tga  # noqa: E402
from tinygrad_attn import Tensor  # noqa: E402
from tinygrad_attn.symbolic import TraceError  # noqa: E402

SAMPLES = 3
#: Ops that draw random numbers, or whose PyTorch samples ask for dropout.
RANDOM = set(T.RANDOM) | {"nn.functional.scaled_dot_product_attention", "nn.functional.multi_head_attention_forward"}


def _moved(x, rng):
    """``x`` with each float tensor's values permuted (a one-element one scaled by 0.75)."""
    if isinstance(x, Tensor):
        a = _host(x)
        if a.dtype.kind == "f" and a.size > 1:
            a = a.reshape(-1)[rng.permutation(a.size)].reshape(a.shape)
        elif a.dtype.kind == "f":
            a = a * 0.75
        return tga.tensor(a.copy(), dtype=x.dtype)
    if isinstance(x, (list, tuple)):
        return type(x)(_moved(v, rng) for v in x)
    if isinstance(x, dict):
        return {k: _moved(v, rng) for k, v in x.items()}
    return x


def _host(x) -> np.ndarray:
    """A tensor's values as a NumPy array (bfloat16 through float32, which holds each exactly)."""
    return (x.float() if x.dtype == tga.bfloat16 else x).detach().numpy()


def _copy(x):
    if isinstance(x, Tensor):
        return tga.tensor(_host(x).copy(), dtype=x.dtype)
    if isinstance(x, (list, tuple)):
        return type(x)(_copy(v) for v in x)
    if isinstance(x, dict):
        return {k: _copy(v) for k, v in x.items()}
    return x


def _same(got, want, what: str) -> None:
    assert type(got) is type(want), f"{what}: a {type(got).__name__}, eager a {type(want).__name__}"
    if isinstance(want, (list, tuple)):
        assert len(got) == len(want), f"{what}: {len(got)} items, eager {len(want)}"
        for i, (g, w) in enumerate(zip(got, want)):
            _same(g, w, f"{what}[{i}]")
    elif isinstance(want, Tensor):
        assert got.dtype == want.dtype, f"{what}: {got.dtype}, eager {want.dtype}"
        g, w = _host(got), _host(want)
        assert g.shape == w.shape and g.dtype == w.dtype, f"{what}: {g.shape} {g.dtype}, eager {w.shape} {w.dtype}"
        np.testing.assert_allclose(g, w, rtol=1e-9, atol=1e-12, equal_nan=True, err_msg=what)


def _targets() -> list[str]:
    return [k for k, t in T.TARGETS.items() if t.function is not None and t.op.name not in RANDOM]


@pytest.mark.parametrize("op_id", _targets())
def test_a_compiled_op_replays_as_eager_or_refuses(op_id: str) -> None:
    target = T.TARGETS[op_id]
    rng = np.random.default_rng(0)
    for sample in T._samples(target.op, torch.float64, SAMPLES, reference=False, requires_grad=False):
        try:
            inp, args, kw = T.to_ours(sample.input), T.to_ours(tuple(sample.args)), T.to_ours(dict(sample.kwargs))
        except T.Unsupported:
            continue

        def f(inp, args, target=target, kw=kw):
            return T._call_ours(target, "function", inp, args, kw)

        inp2, args2 = _moved(inp, rng), _moved(args, rng)
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                want = f(_copy(inp2), _copy(args2))
            except Exception:  # (the moved values outside the op's domain: nothing to compare)
                continue
            compiled = tga.compile(f)
            try:
                compiled(_copy(inp), _copy(args))
            except TraceError as e:
                assert "line" in str(e), f"{op_id}: a TraceError that names no line: {e}"
                continue
            got = compiled(_copy(inp2), _copy(args2))
        _same(got, want, f"{op_id} ({T._describe(sample)})")
