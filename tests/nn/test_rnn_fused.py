"""The fused recurrences (one node per layer and direction, or per cell step): against
PyTorch for every option, against their primitive definition (``tga.decompose()``) on
every CPU device, and gradient-checked to the second order."""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest
from torch_oracle import assert_matches_torch

import tinygrad_attn as tga
from tinygrad_attn import Tensor, nn
from tinygrad_attn.nn.rnn import recurrence, unroll
from tinygrad_attn.ops import recurrent

torch = pytest.importorskip("torch")

MODES = ("rnn_tanh", "rnn_relu", "gru", "lstm")
GATES = {"rnn_tanh": 1, "rnn_relu": 1, "gru": 3, "lstm": 4}
LAYERS = {
    "rnn_tanh": (nn.RNN, torch.nn.RNN, {}),
    "rnn_relu": (nn.RNN, torch.nn.RNN, {"nonlinearity": "relu"}),
    "gru": (nn.GRU, torch.nn.GRU, {}),
    "lstm": (nn.LSTM, torch.nn.LSTM, {}),
}
OPTIONS = list(itertools.product([False, True], [False, True], [1, 2], [False, True], [False, True]))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    "batch_first,bidirectional,num_layers,bias,initial",
    OPTIONS,
    ids=[f"bf{int(a)}-bi{int(b)}-L{c}-bias{int(d)}-h0{int(e)}" for a, b, c, d, e in OPTIONS],
)
def test_layer_matches_torch_for_every_option(mode, batch_first, bidirectional, num_layers, bias, initial, rng):
    ours_cls, torch_cls, extra = LAYERS[mode]
    kw = dict(num_layers=num_layers, bias=bias, batch_first=batch_first, bidirectional=bidirectional, **extra)
    # dropout between layers is inactive in eval mode, as in PyTorch
    if num_layers > 1:
        kw["dropout"] = 0.5
    ours, theirs = ours_cls(3, 4, **kw).eval(), torch_cls(3, 4, **kw).eval()
    n_states = num_layers * (2 if bidirectional else 1)
    x = rng.standard_normal((2, 5, 3) if batch_first else (5, 2, 3))
    h0, c0 = rng.standard_normal((n_states, 2, 4)), rng.standard_normal((n_states, 2, 4))

    def run(module):
        def f(x, h, c):
            if not initial:
                return module(x)
            return module(x, (h, c)) if mode == "lstm" else module(x, h)

        return f

    arrays = [x, h0, c0] if initial else [x]
    if initial:
        assert_matches_torch(ours, theirs, run(ours), run(theirs), arrays)
    else:
        assert_matches_torch(ours, theirs, lambda x: ours(x), lambda x: theirs(x), arrays)


def test_dropout_one_zeroes_the_input_of_the_next_layer(rng):
    # In training, dropout = 1 drops everything between layers, here and in PyTorch.
    ours, theirs = nn.GRU(3, 4, num_layers=2, dropout=1.0), torch.nn.GRU(3, 4, num_layers=2, dropout=1.0)
    assert_matches_torch(ours, theirs, lambda x: ours(x), lambda x: theirs(x), [rng.standard_normal((5, 2, 3))])


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("batched", [True, False])
def test_cell_matches_torch(mode, batched, rng):
    cls = {"rnn_tanh": nn.RNNCell, "rnn_relu": nn.RNNCell, "gru": nn.GRUCell, "lstm": nn.LSTMCell}[mode]
    tcls = {"rnn_tanh": torch.nn.RNNCell, "rnn_relu": torch.nn.RNNCell, "gru": torch.nn.GRUCell,
            "lstm": torch.nn.LSTMCell}[mode]  # fmt: skip
    extra = {"nonlinearity": "relu"} if mode == "rnn_relu" else {}
    ours, theirs = cls(3, 4, **extra), tcls(3, 4, **extra)
    shape = (2,) if batched else ()
    x, h, c = rng.standard_normal(shape + (3,)), rng.standard_normal(shape + (4,)), rng.standard_normal(shape + (4,))

    def run(module):
        return lambda x, h, c: module(x, (h, c)) if mode == "lstm" else module(x, h)

    assert_matches_torch(ours, theirs, run(ours), run(theirs), [x, h, c])


# -- the fused op against its definition -----------------------------------------------------
def _operands(mode, rng, device, cell=False, batch_first=False, bias=True, initial=True, t=4, b=2, n_in=3, n_h=3):
    g = GATES[mode] * n_h

    def arr(*shape):
        return Tensor(rng.standard_normal(shape) * 0.7, device=device, requires_grad=True)

    x = arr(b, n_in) if cell else arr(*((b, t, n_in) if batch_first else (t, b, n_in)))
    h0 = arr(b, n_h) if initial else None
    c0 = arr(b, n_h) if initial and mode == "lstm" else None
    w_ih, w_hh = arr(g, n_in), arr(g, n_h)
    b_ih, b_hh = (arr(g), arr(g)) if bias else (None, None)
    return [x, h0, c0, w_ih, w_hh, b_ih, b_hh]


CASES = [
    # (mode, cell, reverse, batch_first, bias, initial)
    *[(m, False, False, False, True, True) for m in MODES],
    *[(m, False, True, True, True, False) for m in MODES],
    *[(m, False, True, False, False, True) for m in MODES],
    *[(m, True, False, False, True, True) for m in MODES],
    ("gru", False, False, True, False, False),
    ("lstm", True, False, False, False, False),
]
CASE_IDS = [f"{m}-{'cell' if c else 'layer'}-r{int(r)}-bf{int(bf)}-b{int(b)}-h{int(h)}" for m, c, r, bf, b, h in CASES]


def _run(mode, ops, cell, reverse, batch_first):
    return recurrence(mode, *ops, reverse=reverse, batch_first=batch_first, cell=cell)


@pytest.mark.parametrize("mode,cell,reverse,batch_first,bias,initial", CASES, ids=CASE_IDS)
def test_fused_equals_decomposed(mode, cell, reverse, batch_first, bias, initial, device, rng):
    ops = _operands(mode, rng, device, cell, batch_first, bias, initial)
    fused = _run(mode, ops, cell, reverse, batch_first)
    assert isinstance(fused._ctx, recurrent.RECURRENCES[mode])  # one node
    with tga.decompose():
        ref = _run(mode, ops, cell, reverse, batch_first)
    assert not isinstance(ref._ctx, recurrent.RECURRENCES[mode])
    assert fused.shape == ref.shape
    np.testing.assert_allclose(fused.detach().numpy(), ref.detach().numpy(), rtol=1e-12, atol=1e-12)
    w = Tensor(rng.standard_normal(fused.shape), device=device)
    leaves = [t for t in ops if t is not None]
    g_fused = tga.grad((fused * w).sum(), leaves)
    g_ref = tga.grad((ref * w).sum(), leaves)
    for a, b in zip(g_fused, g_ref):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("mode,cell,reverse,batch_first,bias,initial", CASES, ids=CASE_IDS)
def test_fused_gradcheck(mode, cell, reverse, batch_first, bias, initial, device, rng):
    ops = _operands(mode, rng, device, cell, batch_first, bias, initial, t=3, b=2, n_in=2, n_h=2)
    where = [i for i, t in enumerate(ops) if t is not None]

    def f(*ts):
        full = list(ops)
        for i, t in zip(where, ts):
            full[i] = t
        return _run(mode, full, cell, reverse, batch_first)

    assert tga.gradcheck(f, *[ops[i] for i in where])


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("cell", [False, True])
@pytest.mark.slow  # (over a third of a second, or a new interpreter: not in the fast loop)
def test_fused_second_order(mode, cell, device, rng):
    # create_graph=True differentiates the definition, so the gradient is differentiable again.
    ops = _operands(mode, rng, device, cell, t=2, b=2, n_in=2, n_h=2)
    where = [i for i, t in enumerate(ops) if t is not None]

    def grad_norm(*ts):
        full = list(ops)
        for i, t in zip(where, ts):
            full[i] = t
        y = _run(mode, full, cell, False, False)
        gs = tga.grad((y * y).sum(), list(ts), create_graph=True)
        return sum((g * g).sum() for g in gs)

    assert tga.gradcheck(grad_norm, *[ops[i] for i in where])


# -- one node per layer and direction in the graph ---------------------------------------------
def _nodes(t):
    seen, stack, out = set(), [t], []
    while stack:
        x = stack.pop()
        fn = x._ctx
        if fn is None or id(fn) in seen:
            continue
        seen.add(id(fn))
        out.append(fn)
        stack.extend(i for i in fn.inputs if isinstance(i, Tensor))
    return out


def test_graph_shows_one_node_per_layer_and_direction(rng):
    m = nn.LSTM(3, 4, num_layers=2, bidirectional=True)
    out, _ = m(Tensor(rng.standard_normal((5, 2, 3)).astype(np.float32), requires_grad=True))
    fused = [fn for fn in _nodes(out) if isinstance(fn, recurrent.LSTMRecurrence)]
    assert len(fused) == 4
    with tga.decompose():
        out, _ = m(Tensor(rng.standard_normal((5, 2, 3)).astype(np.float32), requires_grad=True))
    nodes = _nodes(out)
    assert not any(isinstance(fn, recurrent.LSTMRecurrence) for fn in nodes)
    assert len(nodes) > 100  # the step-by-step primitive form


def test_unroll_is_one_node_and_matches_the_cell_step_by_step(rng):
    cell = nn.GRUCell(3, 4).double()
    x = Tensor(rng.standard_normal((2, 5, 3)))
    states, last = unroll(cell, x)
    assert isinstance(states._ctx, recurrent.GRURecurrence)
    h = None
    for t in range(5):
        h = cell(x[:, t], h)
        np.testing.assert_allclose(states[:, t].detach().numpy(), h.detach().numpy(), atol=1e-12)
    np.testing.assert_allclose(last.detach().numpy(), h.detach().numpy(), atol=1e-12)


def test_float32_stays_float32(rng):
    m = nn.GRU(3, 4, bidirectional=True)
    out, h = m(Tensor(rng.standard_normal((5, 2, 3)).astype(np.float32)))
    assert out.dtype == np.float32 and h.dtype == np.float32


def test_unroll_bad_input_is_named(rng):
    with pytest.raises(ValueError, match=r"unroll: input must be \(B, T, 3\)"):
        unroll(nn.GRUCell(3, 4), Tensor(rng.standard_normal((2, 3))))


@pytest.mark.parametrize("mode", ["gru", "lstm"])
def test_traced_program_replays_the_fused_layer(mode, rng):
    # tga.jit.trace records the fused node and its array backward; a replay with new weights
    # gives the eager gradients.
    m = LAYERS[mode][0](3, 4, bidirectional=True, batch_first=True).double()
    x = Tensor(rng.standard_normal((2, 5, 3)), requires_grad=True)

    def loss():
        out, hx = m(x)
        last = hx[0] if mode == "lstm" else hx
        return (out * out).sum() + last.sum()

    prog = tga.jit.trace(loss)
    for p in m.parameters():
        p.data = p.data * 1.1
    m.zero_grad()
    x.grad = None
    prog()
    got = [p.grad.detach().numpy() for p in m.parameters()] + [x.grad.detach().numpy()]
    m.zero_grad()
    x.grad = None
    loss().backward()
    want = [p.grad.detach().numpy() for p in m.parameters()] + [x.grad.detach().numpy()]
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def test_benchmark_numpy_lstm_computes_the_layers_gradients(monkeypatch):
    # The hand-written NumPy baseline of benchmarks/rnn.py does the work the layer does.
    import sys  # noqa: PLC0415
    from pathlib import Path  # noqa: PLC0415

    sys.modules.pop("rnn", None)
    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parents[2] / "benchmarks"))
    import rnn as bench  # noqa: PLC0415

    t_len, batch, hidden = 4, 3, 5
    gx, gw_ih, gw_hh, gb = bench.lstm_numpy(t_len, batch, hidden)()
    rng = np.random.default_rng(0)  # the baseline's weights and input, drawn in its order
    k = 1 / np.sqrt(hidden)
    w_ih, w_hh = (rng.uniform(-k, k, (4 * hidden, hidden)).astype(np.float32) for _ in range(2))
    b = rng.uniform(-k, k, 4 * hidden).astype(np.float32)
    x = Tensor(rng.standard_normal((t_len, batch, hidden)).astype(np.float32), requires_grad=True)
    m = nn.LSTM(hidden, hidden, bias=True)
    m.load_state_dict({"weight_ih_l0": w_ih, "weight_hh_l0": w_hh, "bias_ih_l0": b, "bias_hh_l0": b * 0})
    m(x)[0].sum().backward()
    for got, want in (
        (gx, x.grad),
        (gw_ih, m.weight_ih_l0.grad),
        (gw_hh, m.weight_hh_l0.grad),
        (gb, m.bias_ih_l0.grad),
    ):
        np.testing.assert_allclose(got.reshape(want.shape), want.detach().numpy(), rtol=1e-4, atol=1e-5)


# -- the LSTM's NumPy path: gates from one exp --------------------------------------------------
def _lstm_pair(hidden, weight_scale):
    torch.manual_seed(0)  # the bounds below compare errors of one draw: the same draw whatever ran before
    theirs = torch.nn.LSTM(hidden, hidden)
    with torch.no_grad():
        for p in theirs.parameters():
            p.mul_(weight_scale)
    ours = nn.LSTM(hidden, hidden)
    ours.load_state_dict({k: v.detach().numpy() for k, v in theirs.state_dict().items()})
    return ours, theirs


def _lstm_float32_errors(ours, theirs, x):
    """Largest error of the output and of x's gradient, ours and PyTorch's in float32, against
    PyTorch in float64."""
    ref = torch.nn.LSTM(x.shape[-1], x.shape[-1]).double()
    ref.load_state_dict({k: v.double() for k, v in theirs.state_dict().items()})
    x64 = torch.tensor(x.astype(np.float64), requires_grad=True)
    out64, _ = ref(x64)
    (out64 * out64).sum().backward()
    errors = []
    for run in ("ours", "theirs"):
        if run == "ours":
            xt = Tensor(x, requires_grad=True)
            out, _ = ours(xt)
            (out * out).sum().backward()
            got, grad = out.detach().numpy(), xt.grad.detach().numpy()
        else:
            xt = torch.tensor(x, requires_grad=True)
            out, _ = theirs(xt)
            (out * out).sum().backward()
            got, grad = out.detach().numpy(), xt.grad.detach().numpy()
        assert got.dtype == np.float32 and grad.dtype == np.float32
        errors.append((np.abs(got - out64.detach().numpy()).max(), np.abs(grad - x64.grad.detach().numpy()).max()))
    return errors


def test_lstm_float32_as_accurate_as_torch(rng):
    # sigmoid(a) = 1 / (1 + exp(-a)) and tanh(a) = 2 sigmoid(2a) - 1 in float32: no further
    # from float64 than PyTorch's float32 LSTM (with room for a few roundings).
    ours, theirs = _lstm_pair(16, 3.0)  # pre-activations of several units
    x = (rng.standard_normal((30, 4, 16)) * 2).astype(np.float32)
    (ours_out, ours_grad), (torch_out, torch_grad) = _lstm_float32_errors(ours, theirs, x)
    assert ours_out <= 2 * torch_out + 1e-7 and ours_grad <= 2 * torch_grad + 1e-6
    assert ours_out < 1e-5 and ours_grad < 1e-4


def test_lstm_float32_saturated_gates_warn_nothing(rng):
    # Pre-activations past -88 make exp(-a) overflow to inf in float32: the gate is exactly 0,
    # with no overflow warning and no nan, as PyTorch's.
    ours, theirs = _lstm_pair(8, 100.0)
    x = (rng.standard_normal((6, 3, 8)) * 10).astype(np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        (ours_out, ours_grad), (torch_out, torch_grad) = _lstm_float32_errors(ours, theirs, x)
    assert np.isfinite([ours_out, ours_grad]).all()
    assert ours_out <= 2 * torch_out + 1e-6 and ours_grad <= 2 * torch_grad + 1e-5


def test_benchmark_lstm_matmuls_run_in_both_libraries(monkeypatch):
    # benchmarks/rnn.py's floor row: the layer's matrix products alone, NumPy and PyTorch.
    import sys  # noqa: PLC0415
    from pathlib import Path  # noqa: PLC0415

    sys.modules.pop("rnn", None)
    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parents[2] / "benchmarks"))
    import rnn as bench  # noqa: PLC0415

    contenders = bench.lstm_gemm_contenders(torch, 3, 2, 4)
    assert sorted(contenders) == ["ours", "torch"]
    for step in contenders.values():
        step()


@pytest.mark.parametrize("name", ["RNN", "GRU", "LSTM"])
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("num_layers", [1, 2])
def test_final_states_are_new_memory_as_pytorchs(name, batch_first, num_layers, rng):
    # PyTorch's h_n (and c_n) never share memory with the output: changing one in place
    # leaves the other as it was (a view of the last step would change the output too).
    m = getattr(nn, name)(3, 4, num_layers=num_layers, batch_first=batch_first)
    out, states = m(Tensor(rng.standard_normal((5, 2, 3)).astype(np.float32)))
    before = out.detach().numpy().copy()
    with tga.no_grad():
        for s in states if name == "LSTM" else (states,):
            s.add_(100.0)
    np.testing.assert_array_equal(out.detach().numpy(), before)
