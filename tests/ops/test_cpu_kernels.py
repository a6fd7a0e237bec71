"""The compiled CPU loops (``ops.cpu_kernels``, numba) against the NumPy code they replace:
the same numbers bit for bit, and the loops really run where numba is installed (CI
installs it; without it these tests skip and the NumPy code is what runs everywhere)."""

from __future__ import annotations

import numpy as np
import pytest

import tinygrad_attn as tga
from tinygrad_attn.ops import cpu_kernels

needs_numba = pytest.mark.skipif(not cpu_kernels.available(), reason="numba is not installed (the jit extra)")


@pytest.fixture
def calls(monkeypatch):
    """Counts the kernels handed out, by name, while they stay switched on."""
    seen: dict[str, int] = {}
    real = cpu_kernels.kernel

    def counting(name):
        fn = real(name)
        if fn is not None:
            seen[name] = seen.get(name, 0) + 1
        return fn

    monkeypatch.setattr(cpu_kernels, "kernel", counting)
    monkeypatch.setattr(cpu_kernels, "ENABLED", True)
    return seen


def test_switched_off_there_is_no_kernel(monkeypatch):
    monkeypatch.setattr(cpu_kernels, "ENABLED", False)
    assert cpu_kernels.kernel("adam") is None
    assert cpu_kernels.kernel("lstm_backward") is None


def test_float_arrays_accepts_only_what_the_kernels_are_compiled_for():
    a = np.zeros((2, 3), np.float32)
    assert cpu_kernels.float_arrays(a, np.ones(4, np.float32))
    assert not cpu_kernels.float_arrays(a, np.ones(4, np.float64))  # one dtype
    assert not cpu_kernels.float_arrays(a.T)  # C-contiguous
    assert not cpu_kernels.float_arrays(a.astype(np.float16))
    assert not cpu_kernels.float_arrays(a.astype(np.int32))


# -- Adam and AdamW -----------------------------------------------------------------------
def _adam_run(cls, dtype, steps=4, nonfinite=False, amsgrad_from=None, **kw):
    rng = np.random.default_rng(0)
    params = [tga.nn.Parameter(tga.tensor(rng.standard_normal(s).astype(dtype))) for s in [(3, 4), (5,), (2, 2, 2)]]
    opt = cls(params, lr=1e-2, **kw)
    for k in range(steps):
        if amsgrad_from is not None and k == amsgrad_from:
            opt.param_groups[0]["amsgrad"] = True
        for p in params:
            g = rng.standard_normal(p.shape).astype(dtype)
            if nonfinite and k == 1:
                g.reshape(-1)[:3] = (np.nan, np.inf, -np.inf)
            p.grad = tga.tensor(g)
        opt.step()
    state = [opt.state[p][name].numpy().copy() for p in params for name in sorted(opt.state[p]) if name != "step"]
    return [p.detach().numpy().copy() for p in params] + state


ADAM_CASES = [
    (tga.optim.Adam, {}),
    (tga.optim.Adam, {"weight_decay": 0.1}),
    (tga.optim.Adam, {"amsgrad": True, "weight_decay": 0.05}),
    (tga.optim.AdamW, {}),
    (tga.optim.AdamW, {"weight_decay": 0.1, "betas": (0.8, 0.95), "eps": 1e-6}),
    (tga.optim.AdamW, {"amsgrad": True}),
]


@needs_numba
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(("cls", "kw"), ADAM_CASES)
def test_adam_kernel_gives_the_numpy_update_bit_for_bit(cls, kw, dtype, calls, monkeypatch):
    compiled = _adam_run(cls, dtype, **kw)
    assert calls.get("adam") == 4
    monkeypatch.setattr(cpu_kernels, "ENABLED", False)
    assert [a.tobytes() for a in compiled] == [a.tobytes() for a in _adam_run(cls, dtype, **kw)]


@needs_numba
@pytest.mark.parametrize("cls", [tga.optim.Adam, tga.optim.AdamW])
def test_adam_kernel_nonfinite_gradients_and_amsgrad_switched_on_later(cls, calls, monkeypatch):
    runs = {}
    for on in (True, False):
        monkeypatch.setattr(cpu_kernels, "ENABLED", on)
        with np.errstate(invalid="ignore"):  # (NumPy's passes warn of inf / inf; the loop does not)
            runs[on] = (_adam_run(cls, np.float32, steps=5, nonfinite=True, weight_decay=0.01),
                        _adam_run(cls, np.float32, steps=5, amsgrad_from=2))  # fmt: skip
    assert calls.get("adam") == 10
    for a, b in zip(runs[True][0] + runs[True][1], runs[False][0] + runs[False][1]):
        np.testing.assert_array_equal(a, b)  # (NaN where NaN)
    assert np.isnan(runs[True][0][0]).any()


def test_adam_float16_takes_the_numpy_passes(calls):
    _adam_run(tga.optim.AdamW, np.float16, weight_decay=0.1)
    assert "adam" not in calls


def test_adam_kernel_leaves_the_parameters_old_memory_alone(calls):
    p = tga.nn.Parameter(tga.tensor(np.ones(6, np.float32)))
    saved = p * p  # a graph that saved p
    opt = tga.optim.AdamW([p], lr=0.1, weight_decay=0.1)
    p.grad = tga.ones(6)
    old = p._data
    opt.step()
    assert p._data is not old and np.array_equal(old, np.ones(6, np.float32))
    assert not np.array_equal(p.detach().numpy(), np.ones(6, np.float32))
    with pytest.raises(RuntimeError, match="in-place op changed"):
        saved.sum().backward()  # PyTorch's step writes the parameter in place: the check fires as there


# -- the LSTM -------------------------------------------------------------------------------
def _lstm_run(dtype, batch_first, bidirectional, layers, initial, seed=1):
    tga.manual_seed(0)
    m = tga.nn.LSTM(3, 4, num_layers=layers, batch_first=batch_first, bidirectional=bidirectional).to(dtype=dtype)
    rng = np.random.default_rng(seed)
    x = tga.tensor(rng.standard_normal((2, 5, 3) if batch_first else (5, 2, 3)).astype(dtype), requires_grad=True)
    n = layers * (2 if bidirectional else 1)
    states = None
    if initial:
        states = tuple(tga.tensor(rng.standard_normal((n, 2, 4)).astype(dtype), requires_grad=True) for _ in range(2))
    out, (h_n, c_n) = m(x, states) if states else m(x)
    w = tga.tensor(rng.standard_normal(out.shape).astype(dtype))
    ((out * w).sum() + (h_n * h_n).sum() + c_n.sum()).backward()
    arrays = [out, h_n, c_n, x.grad] + [p.grad for p in m.parameters()] + ([s.grad for s in states] if states else [])
    return [a.numpy().copy() for a in arrays]


@needs_numba
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(("batch_first", "bidirectional", "layers", "initial"),
                         [(False, False, 1, False), (True, False, 2, True), (False, True, 1, True), (True, True, 2, False)])  # fmt: skip
def test_lstm_kernels_give_the_numpy_steps_bit_for_bit(
    dtype, batch_first, bidirectional, layers, initial, calls, monkeypatch
):
    compiled = _lstm_run(dtype, batch_first, bidirectional, layers, initial)
    directions = layers * (2 if bidirectional else 1)
    assert calls.get("lstm_forward") == directions and calls.get("lstm_backward") == directions
    monkeypatch.setattr(cpu_kernels, "ENABLED", False)
    plain = _lstm_run(dtype, batch_first, bidirectional, layers, initial)
    assert [a.tobytes() for a in compiled] == [a.tobytes() for a in plain]


@needs_numba
def test_lstm_backward_kernel_alone_matches_the_numpy_backward(monkeypatch):
    """The backward loop on the NumPy forward's gates: a change of either half shows."""
    real = cpu_kernels.kernel
    monkeypatch.setattr(cpu_kernels, "kernel", lambda name: None if name == "lstm_forward" else real(name))
    half = _lstm_run(np.float32, False, True, 2, True)
    monkeypatch.setattr(cpu_kernels, "ENABLED", False)
    assert [a.tobytes() for a in half] == [a.tobytes() for a in _lstm_run(np.float32, False, True, 2, True)]


@needs_numba
def test_lstm_cell_and_saturated_gates_through_the_kernels(calls, monkeypatch):
    x_values = (np.random.default_rng(3).standard_normal((2, 3)) * 200).astype(np.float32)  # gates at 0 and 1
    results = {}
    for on in (True, False):
        monkeypatch.setattr(cpu_kernels, "ENABLED", on)
        tga.manual_seed(0)
        cell = tga.nn.LSTMCell(3, 4)
        x = tga.tensor(x_values, requires_grad=True)
        h, c = cell(x)
        (h.sum() + c.sum()).backward()
        results[on] = [h.numpy(), c.numpy(), x.grad.numpy()] + [p.grad.numpy() for p in cell.parameters()]
    assert calls.get("lstm_forward") == 1
    for a, b in zip(results[True], results[False]):
        np.testing.assert_array_equal(a, b)
        assert np.isfinite(a).all()
