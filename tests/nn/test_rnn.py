"""Recurrent cells: PyTorch's equations and weight names, against NumPy, gradient-checked.

``nn.RNN``, ``nn.GRU``, ``nn.LSTM`` and the cells against PyTorch, and gradient-checked."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import close
from modelcheck import gradcheck_module, gru_numpy, to_float64
from torch_oracle import assert_matches_torch, load_torch, needs_torch, torch_or_absent

import tinygrad_attn as tga
from tinygrad_attn import Tensor, nn
from tinygrad_attn import manual_seed as tga_manual_seed
from tinygrad_attn.models import GRUCell, RNNCell
from tinygrad_attn.nn.rnn import unroll

# PyTorch is an optional oracle: the tests that need it carry ``needs_torch`` and skip without it,
# the others still run.
torch = torch_or_absent()


def _rnn_numpy(cell, x, h):
    w = {n: p.detach().numpy() for n, p in cell.named_parameters()}
    return np.tanh(x @ w["weight_ih"].T + w["bias_ih"] + h @ w["weight_hh"].T + w["bias_hh"])


CELLS = {"rnn": (RNNCell, _rnn_numpy, 1), "gru": (GRUCell, gru_numpy, 3)}


@pytest.mark.parametrize("kind", sorted(CELLS))
def test_names_and_shapes(kind):
    cls, _, gates = CELLS[kind]
    cell = cls(3, 5)
    shapes = {n: p.shape for n, p in cell.named_parameters()}
    assert shapes == {
        "weight_ih": (gates * 5, 3),
        "weight_hh": (gates * 5, 5),
        "bias_ih": (gates * 5,),
        "bias_hh": (gates * 5,),
    }
    assert all(np.abs(p.detach().numpy()).max() <= 1 / np.sqrt(5) for p in cell.parameters())  # PyTorch's init
    assert [n for n, _ in cls(3, 5, bias=False).named_parameters()] == ["weight_ih", "weight_hh"]


@pytest.mark.parametrize("kind", sorted(CELLS))
def test_step_equals_numpy(kind, device, rng):
    cls, ref, _ = CELLS[kind]
    cell = to_float64(cls(3, 4).to(device))
    x, h = rng.standard_normal((2, 3)), rng.standard_normal((2, 4))
    close(cell(Tensor(x, device=device), Tensor(h, device=device)), ref(cell, x, h), atol=1e-12, rtol=1e-10)
    close(cell(Tensor(x, device=device)), ref(cell, x, np.zeros((2, 4))), atol=1e-12, rtol=1e-10)


@pytest.mark.parametrize("kind", sorted(CELLS))
def test_unroll_equals_step_by_step(kind, rng):
    cls, ref, _ = CELLS[kind]
    cell = to_float64(cls(3, 4))
    x = rng.standard_normal((2, 5, 3))
    states, last = unroll(cell, Tensor(x))
    h = np.zeros((2, 4))
    for t in range(5):
        h = ref(cell, x[:, t], h)
        close(states[:, t], h, atol=1e-12, rtol=1e-10)
    close(last, h, atol=1e-12, rtol=1e-10)
    assert states.shape == (2, 5, 4)


@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("kind", sorted(CELLS))
def test_gradcheck(kind, bias, device, rng):
    cell = CELLS[kind][0](3, 2, bias=bias).to(device)
    x, h = Tensor(rng.standard_normal((2, 3)), device=device), Tensor(rng.standard_normal((2, 2)), device=device)
    assert gradcheck_module(cell, cell, x, h)


@pytest.mark.parametrize("kind", sorted(CELLS))
def test_unroll_gradcheck(kind, device, rng):
    cell = CELLS[kind][0](2, 2).to(device)
    x = Tensor(rng.standard_normal((2, 3, 2)), device=device)
    assert gradcheck_module(cell, lambda x: unroll(cell, x)[0], x)


def test_errors():
    with pytest.raises(RuntimeError, match=r"GRUCell\(3, 4\): input has inconsistent input_size: got 5 expected 3"):
        GRUCell(3, 4)(Tensor.randn(2, 5))  # (PyTorch's RuntimeError, and a ValueError too)
    with pytest.raises(ValueError, match=r"RNNCell: hidden state of shape \(2, 3\), expected \(2, 4\)"):
        RNNCell(3, 4)(Tensor.randn(2, 3), Tensor.randn(2, 3))


# -- nn.RNN, nn.GRU, nn.LSTM and their cells against PyTorch ---------------------------------------

LAYERS = {"RNN": (nn.RNN, torch.nn.RNN), "GRU": (nn.GRU, torch.nn.GRU), "LSTM": (nn.LSTM, torch.nn.LSTM)}
TORCH_CELLS = {
    "RNNCell": (nn.RNNCell, torch.nn.RNNCell),
    "GRUCell": (nn.GRUCell, torch.nn.GRUCell),
    "LSTMCell": (nn.LSTMCell, torch.nn.LSTMCell),
}


def _pair(hx):
    return hx if isinstance(hx, tuple) else (hx,)


@needs_torch
@pytest.mark.parametrize("kind", sorted(LAYERS))
@pytest.mark.parametrize(
    "kw",
    [
        {},
        {"num_layers": 2},
        {"bidirectional": True},
        {"num_layers": 2, "bidirectional": True, "batch_first": True},
        {"batch_first": True, "bias": False},
    ],
    ids=["plain", "2layers", "bidir", "2layers-bidir-batchfirst", "batchfirst-nobias"],
)
def test_layer_matches_torch(kind, kw, rng):
    ours_cls, torch_cls = LAYERS[kind]
    ours, theirs = ours_cls(3, 4, **kw), torch_cls(3, 4, **kw)
    x = rng.standard_normal((2, 5, 3) if kw.get("batch_first") else (5, 2, 3))
    assert_matches_torch(ours, theirs, lambda x: ours(x), lambda x: theirs(x), [x])


@needs_torch
@pytest.mark.parametrize("kind", sorted(LAYERS))
def test_layer_with_initial_state_matches_torch(kind, rng):
    ours_cls, torch_cls = LAYERS[kind]
    ours, theirs = ours_cls(3, 4, num_layers=2, bidirectional=True), torch_cls(3, 4, num_layers=2, bidirectional=True)
    x, h0, c0 = rng.standard_normal((5, 2, 3)), rng.standard_normal((4, 2, 4)), rng.standard_normal((4, 2, 4))

    def run(module):
        return lambda x, h, c: module(x, (h, c)) if kind == "LSTM" else module(x, h) + (c.sum() * 0,)

    assert_matches_torch(ours, theirs, run(ours), run(theirs), [x, h0, c0])


@needs_torch
@pytest.mark.parametrize("kind", sorted(LAYERS))
def test_unbatched_input_matches_torch(kind, rng):
    ours_cls, torch_cls = LAYERS[kind]
    ours, theirs = ours_cls(3, 4, num_layers=2), torch_cls(3, 4, num_layers=2)
    x = rng.standard_normal((5, 3))
    assert_matches_torch(ours, theirs, lambda x: ours(x), lambda x: theirs(x), [x])
    out, hx = ours(Tensor(x))
    assert out.shape == (5, 4) and all(h.shape == (2, 4) for h in _pair(hx))


@needs_torch
def test_rnn_relu_and_state_dict_names():
    ours, theirs = nn.RNN(3, 4, 2, "relu", bidirectional=True), torch.nn.RNN(3, 4, 2, "relu", bidirectional=True)
    x = np.random.default_rng(0).standard_normal((5, 2, 3))
    assert_matches_torch(ours, theirs, lambda x: ours(x), lambda x: theirs(x), [x])
    assert list(nn.LSTM(3, 4, 2, bidirectional=True).state_dict())[:5] == [
        "weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0", "weight_ih_l0_reverse",
    ]  # fmt: skip
    assert nn.GRU(3, 4, 2, bidirectional=True).weight_ih_l1.shape == (12, 8)  # input: both directions
    assert all(np.abs(p.detach().numpy()).max() <= 0.5 for p in nn.LSTM(3, 4).parameters())  # +-1/sqrt(hidden)


@needs_torch
def test_dropout_between_layers_only_while_training(rng):
    m = nn.GRU(3, 4, num_layers=3, dropout=0.5).double()
    x = Tensor(rng.standard_normal((5, 2, 3)))
    a, b = m(x)[0].detach().numpy(), m(x)[0].detach().numpy()
    assert not np.allclose(a, b)  # a fresh mask each call
    m.eval()
    np.testing.assert_array_equal(m(x)[0].detach().numpy(), m(x)[0].detach().numpy())
    one = nn.GRU(3, 4, num_layers=1, dropout=0.5).double()  # nothing after the last layer
    np.testing.assert_array_equal(one(x)[0].detach().numpy(), one(x)[0].detach().numpy())


@needs_torch
@pytest.mark.parametrize("kind", sorted(TORCH_CELLS))
@pytest.mark.parametrize("batched", [True, False])
def test_cell_matches_torch(kind, batched, rng):
    ours_cls, torch_cls = TORCH_CELLS[kind]
    ours, theirs = ours_cls(3, 4), torch_cls(3, 4)
    shape = (2,) if batched else ()
    x, h, c = rng.standard_normal(shape + (3,)), rng.standard_normal(shape + (4,)), rng.standard_normal(shape + (4,))
    lstm = kind == "LSTMCell"
    assert_matches_torch(ours, theirs, lambda x, h, c: ours(x, (h, c) if lstm else h),
                         lambda x, h, c: theirs(x, (h, c) if lstm else h), [x, h, c])  # fmt: skip
    assert_matches_torch(ours, theirs, lambda x: ours(x), lambda x: theirs(x), [x])  # zero state


@needs_torch
def test_rnn_cell_relu_and_keywords(rng):
    ours, theirs = nn.RNNCell(3, 4, nonlinearity="relu"), torch.nn.RNNCell(3, 4, nonlinearity="relu")
    x, h = rng.standard_normal((2, 3)), rng.standard_normal((2, 4))
    assert_matches_torch(ours, theirs, lambda x, h: ours(x, hx=h), lambda x, h: theirs(x, hx=h), [x, h])
    np.testing.assert_array_equal(
        ours(input=Tensor(x), hx=Tensor(h)).detach().numpy(), ours(Tensor(x), Tensor(h)).detach().numpy()
    )
    with pytest.raises(ValueError, match="nonlinearity"):
        nn.RNNCell(3, 4, nonlinearity="gelu")


@needs_torch
@pytest.mark.parametrize("kind", sorted(TORCH_CELLS))
def test_cell_gradcheck(kind, device, rng):
    cell = TORCH_CELLS[kind][0](3, 4).to(device)
    x = Tensor(rng.standard_normal((2, 3)), device=device)
    h, c = (Tensor(rng.standard_normal((2, 4)), device=device) for _ in range(2))
    if kind == "LSTMCell":
        assert gradcheck_module(cell, lambda x, h, c: cell(x, (h, c))[0] + cell(x, (h, c))[1] * 0.5, x, h, c)
    else:
        assert gradcheck_module(cell, lambda x, h: cell(x, h), x, h)


@needs_torch
@pytest.mark.parametrize("kind", sorted(LAYERS))
@pytest.mark.slow  # (over a third of a second, or a new interpreter: not in the fast loop)
def test_layer_gradcheck(kind, rng):
    # The torch comparison checks gradients of every option; finite differences once more here.
    m = LAYERS[kind][0](2, 2, num_layers=2, bidirectional=True)
    x = Tensor(rng.standard_normal((2, 1, 2)))

    def run(x):
        out, hx = m(x)
        return out.sum() + sum(h.sum() for h in _pair(hx)) * 0.5

    assert gradcheck_module(m, run, x)


@needs_torch
@pytest.mark.parametrize("kind", sorted(LAYERS))
def test_layer_runs_on_every_device(kind, device, rng):
    # Values and gradients on each array namespace equal NumPy's.
    x = rng.standard_normal((3, 2, 2))
    results = []
    for dev in ("cpu", device):
        tga_manual_seed(0)
        m = LAYERS[kind][0](2, 3, bidirectional=True).double().to(dev)
        xt = Tensor(x, device=dev, requires_grad=True)
        out, hx = m(xt)
        (out.sum() + _pair(hx)[-1].sum()).backward()
        results.append(
            [out.detach().numpy(), xt.grad.detach().numpy()] + [p.grad.detach().numpy() for p in m.parameters()]
        )
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, atol=1e-12)


@needs_torch
def test_bad_input_is_named(rng):
    with pytest.raises(ValueError, match=r"LSTM\(3, 4\).*\(2, 5, 2\)"):
        nn.LSTM(3, 4)(Tensor(rng.standard_normal((2, 5, 2)).astype(np.float32)))
    with pytest.raises(ValueError, match="h_0 of shape"):
        nn.GRU(3, 4)(Tensor(rng.standard_normal((5, 2, 3)).astype(np.float32)), Tensor(np.zeros((1, 3, 4))))
    with pytest.raises(
        ValueError, match=r"RNN input dtype \((torch\.)?float64\) does not match weight dtype \((torch\.)?float32\)"
    ):
        nn.GRU(3, 4)(Tensor(rng.standard_normal((5, 2, 3))))  # (PyTorch's check, before the shapes)
    with pytest.raises(ValueError, match="hidden state of shape"):
        nn.GRUCell(3, 4)(Tensor(rng.standard_normal((2, 3))), Tensor(np.zeros((3, 4))))


@needs_torch
def test_torch_state_dict_loads_float32():
    theirs = torch.nn.LSTM(3, 4, num_layers=2, bidirectional=True)
    ours = nn.LSTM(3, 4, num_layers=2, bidirectional=True)
    ours.load_state_dict({k: v.detach().numpy() for k, v in theirs.state_dict().items()})
    x = np.random.default_rng(0).standard_normal((5, 2, 3)).astype(np.float32)
    np.testing.assert_allclose(
        ours(Tensor(x))[0].detach().numpy(), theirs(torch.tensor(x))[0].detach().numpy(), atol=1e-5
    )
    assert load_torch  # the float64 loader is the one the other tests use


@needs_torch
@pytest.mark.parametrize("kind", sorted(TORCH_CELLS))
def test_cell_second_order_gradcheck(kind, rng):
    # The gradient of a cell is differentiable again (create_graph=True), checked by finite differences.
    cell = TORCH_CELLS[kind][0](2, 3).double()
    x = Tensor(rng.standard_normal((2, 2)))

    def grad_norm(x):
        out = cell(x)
        y = (out[0] + out[1]).sum() if kind == "LSTMCell" else out.sum()
        (g,) = tga.grad((y * y), [x], create_graph=True)
        return (g * g).sum()

    assert tga.gradcheck(grad_norm, x)
