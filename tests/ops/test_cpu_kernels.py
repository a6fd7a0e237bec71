"""The compiled CPU loops (``ops.cpu_kernels``, numba) against the NumPy code they replace:
the same numbers bit for bit, and the loops really run where numba is installed (CI
installs it; without it these tests skip and the NumPy code is what runs everywhere)."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import count_kernel_calls

import tinygrad_attn as tga
from tinygrad_attn.ops import cpu_kernels

needs_numba = pytest.mark.skipif(not cpu_kernels.available(), reason="numba is not installed (the jit extra)")


@pytest.fixture
def calls(monkeypatch):
    """Counts the kernels handed out, by name, while they stay switched on."""
    monkeypatch.setattr(cpu_kernels, "ENABLED", True)
    return count_kernel_calls(monkeypatch)


def test_switched_off_there_is_no_kernel(monkeypatch):
    monkeypatch.setattr(cpu_kernels, "ENABLED", False)
    assert cpu_kernels.kernel("adam") is None
    assert cpu_kernels.kernel("lstm_backward") is None


@pytest.mark.parametrize(("value", "enabled"), [("0", False), ("Off", False), ("no", False), ("1", True), ("", True)])
def test_the_environment_switches_the_kernels(value, enabled):
    import os
    import subprocess
    import sys

    code = "from tinygrad_attn.ops import cpu_kernels; print(cpu_kernels.ENABLED)"
    env = dict(os.environ, TINYGRAD_ATTN_JIT=value)
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == str(enabled)


@needs_numba
def test_without_a_writable_cache_the_kernels_compile_for_the_process(monkeypatch):
    import numba

    real = numba.njit

    def no_cache_dir(*args, cache=False, **kw):
        if cache:
            raise RuntimeError("cannot cache function '_adam': no locator available for file")
        return real(*args, **kw)

    monkeypatch.setattr(numba, "njit", no_cache_dir)
    monkeypatch.setattr(cpu_kernels, "ENABLED", True)
    monkeypatch.setattr(cpu_kernels, "_compiled", {})
    fn = cpu_kernels.kernel("gelu_backward")
    x = np.arange(4, dtype=np.float32)
    d = np.empty_like(x)
    fn(x, x, x, x, d, np.float32(0.5))
    np.testing.assert_array_equal(d, ((x * x) * np.float32(0.5) + x) * x)


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
    state = [
        opt.state[p][name].detach().numpy().copy() for p in params for name in sorted(opt.state[p]) if name != "step"
    ]
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


@needs_numba
def test_adam_kernel_amsgrad_keeps_a_nan_maximum_as_numpy_does(calls, monkeypatch):
    """np.maximum(vmax, v) is NaN where vmax is NaN and v is not: the loop's maximum too."""
    runs = {}
    for on in (True, False):
        monkeypatch.setattr(cpu_kernels, "ENABLED", on)
        p = tga.nn.Parameter(tga.tensor(np.linspace(-1.0, 1.0, 6, dtype=np.float32)))
        opt = tga.optim.Adam([p], lr=0.1, amsgrad=True)
        p.grad = tga.ones(6)
        opt.step()
        opt.state[p]["max_exp_avg_sq"]._data[2] = np.nan  # (the bucket's memory: the state is a view of it)
        p.grad = tga.full((6,), 0.5)
        with np.errstate(invalid="ignore"):
            opt.step()
        runs[on] = (p.detach().numpy().copy(), opt.state[p]["max_exp_avg_sq"].detach().numpy().copy())
    assert calls.get("adam") == 2
    assert np.isnan(runs[False][1][2]) and np.isnan(runs[False][0][2])
    for a, b in zip(runs[True], runs[False]):
        np.testing.assert_array_equal(a, b)


def test_adam_float16_takes_the_numpy_passes(calls):
    _adam_run(tga.optim.AdamW, np.float16, weight_decay=0.1)
    assert "adam" not in calls


@needs_numba
def test_adam_kernel_writes_the_parameter_in_place(calls):
    p = tga.nn.Parameter(tga.tensor(np.ones((2, 3), np.float32)))
    saved = p * p  # a graph that saved p
    held = p.detach()
    opt = tga.optim.AdamW([p], lr=0.1, weight_decay=0.1)
    p.grad = tga.ones((2, 3))
    old = p._data
    opt.step()
    assert "adam" in calls and p._data is old and p._version == 2
    assert not np.array_equal(old, np.ones((2, 3), np.float32))
    np.testing.assert_array_equal(held.detach().numpy(), p.detach().numpy())
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
    return [a.detach().numpy().copy() for a in arrays]


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
        results[on] = [h.detach().numpy(), c.detach().numpy(), x.grad.detach().numpy()] + [
            p.grad.detach().numpy() for p in cell.parameters()
        ]
    assert calls.get("lstm_forward") == 1
    for a, b in zip(results[True], results[False]):
        np.testing.assert_array_equal(a, b)
        assert np.isfinite(a).all()


# -- GELU and layer norm (the GPT step's costliest elementwise ops) -------------------------
def _gelu_run(x_values, g_values):
    x = tga.tensor(x_values, requires_grad=True)
    y = tga.nn.functional.gelu(x)
    (y * tga.tensor(g_values)).sum().backward()
    return y.detach().numpy().copy(), x.grad.detach().numpy().copy()


@needs_numba
@pytest.mark.parametrize("shape", [(7,), (33, 65), (4, 3, 300)])
def test_gelu_kernels_give_the_numpy_passes_bit_for_bit(shape, calls, monkeypatch):
    rng = np.random.default_rng(0)
    x = (rng.standard_normal(shape) * 4).astype(np.float32)
    x.reshape(-1)[:5] = (0.0, -0.0, 1e-30, -12.0, 9.5)[: x.size]
    g = rng.standard_normal(shape).astype(np.float32)
    compiled = _gelu_run(x, g)
    assert calls.get("gelu_rest") and calls.get("gelu_backward") == 1
    monkeypatch.setattr(cpu_kernels, "ENABLED", False)
    assert [a.tobytes() for a in compiled] == [a.tobytes() for a in _gelu_run(x, g)]


@needs_numba
def test_gelu_kernels_work_block_by_block(calls, monkeypatch):
    """An input larger than two cache blocks runs a block at a time: the same numbers."""
    from tinygrad_attn.runtime.backend import get_device

    block = get_device("cpu").ops.cache_block
    x = np.random.default_rng(1).standard_normal(2 * block + 5).astype(np.float32)
    compiled = _gelu_run(x, np.ones_like(x))
    assert calls.get("gelu_square") and calls.get("gelu_rest")
    monkeypatch.setattr(cpu_kernels, "ENABLED", False)
    assert [a.tobytes() for a in compiled] == [a.tobytes() for a in _gelu_run(x, np.ones_like(x))]


def _layer_norm_run(x_values, g_values, weight, bias):
    n = x_values.shape[-1]
    rng = np.random.default_rng(5)
    x = tga.tensor(x_values, requires_grad=True)
    w = tga.tensor(rng.standard_normal(n).astype(x_values.dtype), requires_grad=True) if weight else None
    b = tga.tensor(rng.standard_normal(n).astype(x_values.dtype), requires_grad=True) if bias else None
    y = tga.nn.functional.layer_norm(x, (n,), w, b, eps=1e-5)
    (y * tga.tensor(g_values)).sum().backward()
    return [y.detach().numpy().copy(), x.grad.detach().numpy().copy()] + [
        t.grad.detach().numpy().copy() for t in (w, b) if t is not None
    ]


@needs_numba
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(("shape", "weight", "bias"), [((64, 128), True, True), ((2, 5, 33), True, False),
                                                       ((6, 16), False, False), ((3, 9), False, True)])  # fmt: skip
def test_layer_norm_kernels_match_the_numpy_code(dtype, shape, weight, bias, calls, monkeypatch):
    """Row sums in another order (float64, vectorised): equal to rounding, not bit for bit."""
    rng = np.random.default_rng(0)
    x = (rng.standard_normal(shape) * 3 + 1).astype(dtype)
    g = rng.standard_normal(shape).astype(dtype)
    compiled = _layer_norm_run(x, g, weight, bias)
    assert calls.get("layer_norm_forward") == 1 and calls.get("layer_norm_backward") == 1
    monkeypatch.setattr(cpu_kernels, "ENABLED", False)
    plain = _layer_norm_run(x, g, weight, bias)
    tol = 2e-6 if dtype == np.float32 else 1e-13
    for a, b in zip(compiled, plain):
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol * np.abs(b).max())


@needs_numba
def test_layer_norm_kernel_gradcheck_float64(calls):
    rng = np.random.default_rng(2)
    x = tga.tensor(rng.standard_normal((3, 6)), requires_grad=True)
    w = tga.tensor(rng.standard_normal(6), requires_grad=True)
    b = tga.tensor(rng.standard_normal(6), requires_grad=True)
    assert tga.gradcheck(lambda x, w, b: tga.nn.functional.layer_norm(x, (6,), w, b), x, w, b)
    assert calls.get("layer_norm_backward")


@needs_numba
def test_layer_norm_kernel_skips_what_it_is_not_compiled_for(calls):
    # (float16 never reaches it as float16: layer_norm computes it in float32, as PyTorch's)
    base = tga.tensor(np.random.default_rng(0).standard_normal((8, 4)).astype(np.float32), requires_grad=True)
    tga.nn.functional.layer_norm(base.mT, (8,)).sum().backward()  # a transposed view: not contiguous
    assert "layer_norm_forward" not in calls and "layer_norm_backward" not in calls


def _softmax_run(x_values, g_values, dim):
    x = tga.tensor(x_values, requires_grad=True)
    y = tga.nn.functional.softmax(x, dim)
    (y * tga.tensor(g_values)).sum().backward()
    return [y.detach().numpy().copy(), x.grad.detach().numpy().copy()]


@needs_numba
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(8, 4, 32, 32), (5, 129), (7,), (2, 3, 1)])
@pytest.mark.parametrize("masked", [False, True])
def test_softmax_kernels_match_the_numpy_code(dtype, shape, masked, calls, monkeypatch):
    """Row sums in another order (float64, vectorised): equal to rounding, not bit for bit; a
    causal mask's -inf gives the same zeros, a row of -inf or with a NaN the same NaN."""
    rng = np.random.default_rng(0)
    x = (rng.standard_normal(shape) * 4).astype(dtype)
    if masked and len(shape) > 1:
        x = np.where(np.tri(shape[-2], shape[-1], dtype=bool), x, -np.inf).astype(dtype)
        x[(0,) * (len(shape) - 1)] = -np.inf  # a row that allows nothing: NaN, as NumPy's passes give
        if shape[-1] > 1:
            x[(0,) * (len(shape) - 2) + (min(1, shape[-2] - 1), 0)] = np.nan
    g = rng.standard_normal(shape).astype(dtype)
    with np.errstate(invalid="ignore"):  # (-inf - -inf: the NumPy passes warn where the loop does not)
        compiled = _softmax_run(x, g, -1)
        assert calls.get("softmax_shift") == 1 and calls.get("softmax_backward") == 1
        monkeypatch.setattr(cpu_kernels, "ENABLED", False)
        plain = _softmax_run(x, g, -1)
    tol = 2e-6 if dtype == np.float32 else 1e-13
    for a, b in zip(compiled, plain):
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_array_equal(np.isnan(a), np.isnan(b))
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


@needs_numba
def test_softmax_kernel_gradcheck_float64(calls):
    x = tga.tensor(np.random.default_rng(3).standard_normal((3, 6)), requires_grad=True)
    assert tga.gradcheck(lambda x: tga.nn.functional.softmax(x, -1), x)
    assert calls.get("softmax_shift") and calls.get("softmax_backward")


@needs_numba
def test_softmax_kernels_skip_what_they_are_not_compiled_for(calls):
    rng = np.random.default_rng(0)
    # (float16 never reaches the forward kernel as float16: softmax computes it in float32, as PyTorch's)
    base = tga.tensor(rng.standard_normal((8, 4)).astype(np.float32), requires_grad=True)
    tga.nn.functional.softmax(base, 0).sum().backward()  # not the last axis
    assert "softmax_shift" not in calls and "softmax_backward" not in calls
    y = tga.nn.functional.softmax(
        base.mT, -1
    )  # a transposed view: its row-major copy is (PyTorch's result is row-major)
    assert calls.get("softmax_shift") == 1 and y.is_contiguous()


@needs_numba
def test_softmax_kernels_against_torch(calls):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(4)
    x = rng.standard_normal((4, 3, 17, 17)).astype(np.float32) * 3
    x = np.where(np.tri(17, dtype=bool), x, -np.inf).astype(np.float32)
    g = rng.standard_normal(x.shape).astype(np.float32)
    ours = _softmax_run(x, g, -1)
    assert calls.get("softmax_shift") == 1 and calls.get("softmax_backward") == 1
    tx = torch.tensor(x, requires_grad=True)
    ty = torch.softmax(tx, -1)
    (ty * torch.tensor(g)).sum().backward()
    np.testing.assert_allclose(ours[0], ty.detach().numpy(), rtol=2e-6, atol=1e-7)
    np.testing.assert_allclose(ours[1], tx.grad.detach().numpy(), rtol=2e-5, atol=1e-6)
