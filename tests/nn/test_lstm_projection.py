"""``nn.LSTM(..., proj_size=P)``, PyTorch's LSTM with projections, against PyTorch.

Each layer and direction has ``weight_hr_l{k}`` ``(P, hidden)``: the hidden state is
``W_hr (o * tanh(c))`` of size ``P`` while ``c`` keeps ``hidden``. Over a generator of
configurations (layers, directions, layouts, bias, unbatched and packed inputs, with and
without ``(h_0, c_0)``, float32 and float64) PyTorch's state dict is loaded into ours and the
outputs, the final ``(h, c)`` and the gradients of the input, of ``h_0``, ``c_0`` and of every
parameter are compared; then finite differences (first and second order), PyTorch's init
numbers for a seed, its names, shapes, errors and repr, dropout's masks, and traced and compiled
replays.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pytest
from modelcheck import gradcheck_module

import tinygrad_attn as tga
from tinygrad_attn import Tensor, nn
from tinygrad_attn.nn.utils.rnn import PackedSequence, pack_padded_sequence, pad_packed_sequence

torch = pytest.importorskip("torch")

from torch_oracle import torch_bernoulli_is_ours  # noqa: E402

INPUT, HIDDEN, PROJ, STEPS, BATCH = 3, 5, 2, 4, 3
#: the packed batches' lengths (unsorted: the batch is reordered, and h_0 with it)
LENGTHS = [(4, 2, 3), (1, 4, 4), (3, 1, 2)]
TOL = {"float64": dict(rtol=1e-9, atol=1e-11), "float32": dict(rtol=2e-4, atol=2e-5)}


def _config_id(c: tuple) -> str:
    layers, bi, bf, bias, form, initial, dtype = c
    return f"L{layers}-{'bi' if bi else 'uni'}-{'bf' if bf else 'tf'}-{'bias' if bias else 'nobias'}-{form}-" + (
        f"{'h0c0' if initial else 'zeros'}-{dtype}"
    )


def _configs() -> list[Any]:
    """Every combination; the fast loop runs a spread of them (each value of each option still
    in it), the full suite all."""
    out = []
    combos = itertools.product((1, 2, 3), (False, True), (False, True), (True, False),
                               ("batched", "unbatched", "packed"), (False, True), ("float64", "float32"))  # fmt: skip
    for i, c in enumerate(combos):
        marks = [] if i % 5 == 0 else [pytest.mark.slow]
        out.append(pytest.param(*c, id=_config_id(c), marks=marks))
    return out


def _pair(kw: dict[str, Any], dtype: str) -> tuple[Any, Any]:
    """PyTorch's module and ours, with PyTorch's parameters loaded into ours."""
    theirs = torch.nn.LSTM(INPUT, HIDDEN, proj_size=PROJ, dtype=getattr(torch, dtype), **kw)
    ours = nn.LSTM(INPUT, HIDDEN, proj_size=PROJ, dtype=getattr(tga, dtype), **kw)
    assert [(k, tuple(v.shape)) for k, v in ours.state_dict().items()] == [
        (k, tuple(v.shape)) for k, v in theirs.state_dict().items()
    ]
    ours.load_state_dict({k: v.detach().numpy() for k, v in theirs.state_dict().items()})
    return theirs, ours


def _run(lib: Any, module: Any, x: Any, hx: Any, form: str, batch_first: bool, lengths: tuple) -> list[Any]:
    """``module`` over ``x`` (packed first for the packed form): [output (padded), h_n, c_n]."""
    if form == "packed":
        packed = lib.nn.utils.rnn.pack_padded_sequence(x, list(lengths), batch_first=batch_first, enforce_sorted=False)
        out, (h, c) = module(packed, hx)
        assert isinstance(out, PackedSequence if lib is tga else torch.nn.utils.rnn.PackedSequence)
        out = lib.nn.utils.rnn.pad_packed_sequence(out, batch_first=batch_first)[0]
    else:
        out, (h, c) = module(x, hx)
    return [out, h, c]


@pytest.mark.parametrize(("num_layers", "bidirectional", "batch_first", "bias", "form", "initial", "dtype"),
                         _configs())  # fmt: skip
def test_matches_torch(num_layers, bidirectional, batch_first, bias, form, initial, dtype):
    rng = np.random.default_rng(num_layers * 7 + bidirectional * 3 + batch_first)
    kw = dict(num_layers=num_layers, bidirectional=bidirectional, batch_first=batch_first, bias=bias)
    theirs, ours = _pair(kw, dtype)
    n = num_layers * (2 if bidirectional else 1)
    lengths = LENGTHS[(num_layers + bidirectional) % len(LENGTHS)]
    if form == "unbatched":
        shapes = [(STEPS, INPUT), (n, PROJ), (n, HIDDEN)]
    else:
        shapes = [(BATCH, STEPS, INPUT) if batch_first else (STEPS, BATCH, INPUT), (n, BATCH, PROJ), (n, BATCH, HIDDEN)]
    arrays = [rng.standard_normal(s).astype(dtype) for s in shapes]
    xs_t = [torch.tensor(a, requires_grad=True) for a in arrays]
    xs_o = [Tensor(a, requires_grad=True) for a in arrays]
    outs_t = _run(torch, theirs, xs_t[0], tuple(xs_t[1:]) if initial else None, form, batch_first, lengths)
    outs_o = _run(tga, ours, xs_o[0], tuple(xs_o[1:]) if initial else None, form, batch_first, lengths)
    last = (2 if bidirectional else 1) * PROJ
    want_shapes = [shapes[0][:-1] + (last,), shapes[1], shapes[2]]
    if form == "packed":  # padded to the longest sequence
        t_max = max(lengths)
        want_shapes[0] = (BATCH, t_max, last) if batch_first else (t_max, BATCH, last)
    for what, o, t, shape in zip(("output", "h_n", "c_n"), outs_o, outs_t, want_shapes):
        assert o.shape == tuple(t.shape) == shape, what
        assert o.dtype == getattr(tga, dtype), what
        np.testing.assert_allclose(o.detach().numpy(), t.detach().numpy(), err_msg=what, **TOL[dtype])
    weights = [rng.standard_normal(tuple(t.shape)).astype(dtype) for t in outs_t]
    loss_t = sum((t * torch.tensor(w)).sum() for t, w in zip(outs_t, weights))
    loss_o = sum((o * Tensor(w)).sum() for o, w in zip(outs_o, weights))
    wrt_t = xs_t[: 3 if initial else 1] + list(theirs.parameters())
    wrt_o = xs_o[: 3 if initial else 1] + list(ours.parameters())
    names = ["input", "h_0", "c_0"][: 3 if initial else 1] + [n for n, _ in ours.named_parameters()]
    for name, go, gt in zip(names, tga.autograd.grad(loss_o, wrt_o), torch.autograd.grad(loss_t, wrt_t)):
        np.testing.assert_allclose(
            go.detach().numpy(), gt.detach().numpy(), err_msg=f"gradient of {name}", **TOL[dtype]
        )


@pytest.mark.parametrize("lengths", [(3, 1, 2), (2, 3, 3), (1, 1, 1)])
@pytest.mark.parametrize("initial", [False, True])
def test_packed_final_states_are_each_sequences_own(lengths, initial):
    # The packed output's h_n / c_n, bidirectional over 2 layers, as PyTorch's, back in the batch's order.
    rng = np.random.default_rng(sum(lengths))
    theirs, ours = _pair(dict(num_layers=2, bidirectional=True), "float64")
    x = rng.standard_normal((3, 3, INPUT))
    h0, c0 = rng.standard_normal((4, 3, PROJ)), rng.standard_normal((4, 3, HIDDEN))
    hx_t = (torch.tensor(h0), torch.tensor(c0)) if initial else None
    hx_o = (Tensor(h0), Tensor(c0)) if initial else None
    out_t, (h_t, c_t) = theirs(torch.nn.utils.rnn.pack_padded_sequence(torch.tensor(x), lengths, enforce_sorted=False),
                               hx_t)  # fmt: skip
    out_o, (h_o, c_o) = ours(pack_padded_sequence(Tensor(x), lengths, enforce_sorted=False), hx_o)
    np.testing.assert_allclose(out_o.data.detach().numpy(), out_t.data.detach().numpy(), **TOL["float64"])
    np.testing.assert_allclose(h_o.detach().numpy(), h_t.detach().numpy(), **TOL["float64"])
    np.testing.assert_allclose(c_o.detach().numpy(), c_t.detach().numpy(), **TOL["float64"])
    padded, got_lengths = pad_packed_sequence(out_o)
    assert got_lengths.tolist() == list(lengths)
    for b, n in enumerate(lengths):  # past a sequence's end its outputs are zeros
        assert not padded.detach().numpy()[n:, b].any()


@pytest.mark.parametrize(("num_layers", "bidirectional", "batch_first", "bias"),
                         [(1, False, False, True), (2, True, True, False), (2, False, False, True)])  # fmt: skip
def test_gradcheck(num_layers, bidirectional, batch_first, bias, rng):
    # Finite differences in float64 with respect to the input, h_0, c_0 and every parameter.
    m = nn.LSTM(2, 3, num_layers, bias, batch_first, bidirectional=bidirectional, proj_size=1).double()
    n = num_layers * (2 if bidirectional else 1)
    x = Tensor(rng.standard_normal((2, 3, 2)))  # (B, T, in) with batch_first, else (T, B, in)
    b = 2 if batch_first else 3
    h0, c0 = Tensor(rng.standard_normal((n, b, 1))), Tensor(rng.standard_normal((n, b, 3)))

    def run(x, h0, c0):
        out, (h, c) = m(x, (h0, c0))
        return out, h, c

    assert gradcheck_module(m, run, x, h0, c0)


@pytest.mark.parametrize(
    ("packed", "bidirectional"), [(True, False), pytest.param(False, True, marks=pytest.mark.slow)]
)
def test_second_order_gradcheck(packed, bidirectional, rng):
    # The gradient built with create_graph=True is differentiable again: finite differences of
    # its norm with respect to the input, h_0, c_0 and every parameter.
    m = nn.LSTM(2, 3, num_layers=2, bidirectional=bidirectional, proj_size=2).double()
    n = 4 if bidirectional else 2
    x = Tensor(rng.standard_normal((3, 2, 2)))
    h0, c0 = Tensor(rng.standard_normal((n, 2, 2))), Tensor(rng.standard_normal((n, 2, 3)))

    def grad_norm(x, h0, c0):
        inp = pack_padded_sequence(x, [3, 2]) if packed else x
        out, (h, c) = m(inp, (h0, c0))
        out = out.data if packed else out
        y = (out * out).sum() + (h * c[..., :2]).sum() + c.sum()
        gs = tga.autograd.grad(y, [x, h0, c0], create_graph=True)
        return sum((g * g).sum() for g in gs)

    assert gradcheck_module(m, grad_norm, x, h0, c0)


def test_gradgradcheck_of_the_recurrence(rng):
    # tga.gradgradcheck through one layer with projection, all of its tensors as inputs.
    from tinygrad_attn.nn.rnn import recurrence  # noqa: PLC0415

    x = rng.standard_normal((3, 2, 2))
    h0, c0 = rng.standard_normal((2, 1)), rng.standard_normal((2, 3))
    w_ih, w_hh, w_hr = rng.standard_normal((12, 2)), rng.standard_normal((12, 1)), rng.standard_normal((1, 3))
    b_ih, b_hh = rng.standard_normal(12), rng.standard_normal(12)

    def f(x, h0, c0, w_ih, w_hh, b_ih, b_hh, w_hr):
        return recurrence("lstm", x, h0, c0, w_ih, w_hh, b_ih, b_hh, reverse=True, w_hr=w_hr)

    args = [Tensor(a) for a in (x, h0, c0, w_ih, w_hh, b_ih, b_hh, w_hr)]
    assert tga.autograd.gradcheck(f, *args)
    assert tga.autograd.gradgradcheck(f, args)


def test_recurrence_cell_form_with_projection(rng):
    # The cell form of the definition with w_hr: one step of the layer.
    from tinygrad_attn.nn.rnn import recurrence  # noqa: PLC0415

    m = nn.LSTM(INPUT, HIDDEN, proj_size=PROJ).double()
    x = rng.standard_normal((1, 2, INPUT))
    h, c = recurrence("lstm", Tensor(x[0]), None, None, m.weight_ih_l0, m.weight_hh_l0, m.bias_ih_l0, m.bias_hh_l0,
                      cell=True, w_hr=m.weight_hr_l0)  # fmt: skip
    out, (h_n, c_n) = m(Tensor(x))
    np.testing.assert_allclose(h.detach().numpy(), h_n.detach().numpy()[0], rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(c.detach().numpy(), c_n.detach().numpy()[0], rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("seed", [0, 3])
@pytest.mark.parametrize("kw", [dict(), dict(num_layers=2, bidirectional=True), dict(num_layers=3, bias=False)])
def test_same_seed_same_parameters_as_torch(seed, kw):
    # PyTorch draws every parameter uniform in +-1/sqrt(hidden), in their order (weight_hr last
    # of each layer and direction): after the same seed ours holds the same numbers.
    torch.manual_seed(seed)
    theirs = torch.nn.LSTM(4, 6, proj_size=3, **kw)
    tga.manual_seed(seed)
    ours = nn.LSTM(4, 6, proj_size=3, **kw)
    want = {k: v.detach().numpy() for k, v in theirs.named_parameters()}
    got = {k: v.detach().numpy() for k, v in ours.named_parameters()}
    assert list(got) == list(want)
    for k in want:
        np.testing.assert_array_equal(got[k], want[k], err_msg=k)


@pytest.mark.parametrize("kw", [dict(), dict(num_layers=2, bidirectional=True), dict(num_layers=3, bias=False),
                                dict(num_layers=2, bias=False, bidirectional=True, batch_first=True, dropout=0.25)])  # fmt: skip
def test_names_shapes_repr_and_all_weights_as_torch(kw):
    theirs, ours = torch.nn.LSTM(4, 6, proj_size=3, **kw), nn.LSTM(4, 6, proj_size=3, **kw)
    assert [(k, tuple(v.shape)) for k, v in ours.state_dict().items()] == [
        (k, tuple(v.shape)) for k, v in theirs.state_dict().items()
    ]
    assert [k for k, _ in ours.named_parameters()] == [k for k, _ in theirs.named_parameters()]
    assert ours._flat_weights_names == theirs._flat_weights_names
    assert [[tuple(p.shape) for p in ps] for ps in ours.all_weights] == [
        [tuple(p.shape) for p in ps] for ps in theirs.all_weights
    ]
    assert all(p is getattr(ours, n) for ps, ns in zip(ours.all_weights, ours._all_weights) for p, n in zip(ps, ns))
    assert repr(ours) == repr(theirs)
    assert ours.proj_size == theirs.proj_size == 3


@pytest.mark.parametrize("kw", [dict(), dict(num_layers=2, bias=False, batch_first=True, dropout=0.5),
                                dict(bidirectional=True, dropout=0.0)])  # fmt: skip
def test_repr_without_projection_as_torch(kw):
    # (the same printer: bias=False shows, as PyTorch prints it)
    assert repr(nn.LSTM(4, 6, **kw)) == repr(torch.nn.LSTM(4, 6, **kw))
    assert repr(nn.GRU(4, 6, **kw)) == repr(torch.nn.GRU(4, 6, **kw))


@pytest.mark.parametrize(
    ("build", "args", "kw"),
    [
        ("LSTM", (3, 5), dict(proj_size=5)),
        ("LSTM", (3, 5), dict(proj_size=7)),
        ("LSTM", (3, 5), dict(proj_size=-1)),
        ("GRU", (3, 5), dict(proj_size=2)),
        ("GRU", (3, 5), dict(proj_size=0)),
        ("RNN", (3, 5), dict(proj_size=2)),
        ("RNN", (3, 5), dict(proj_size=0, nonlinearity="relu")),
        ("GRU", (3, 5), dict(projection=2)),
    ],
)
def test_construction_errors_as_torch(build, args, kw):
    with pytest.raises(Exception) as want:
        getattr(torch.nn, build)(*args, **kw)
    with pytest.raises(want.type) as got:
        getattr(nn, build)(*args, **kw)
    if want.type is ValueError:
        assert str(got.value) == str(want.value)


@pytest.mark.parametrize(
    ("x_shape", "h_shape", "c_shape"),
    [
        ((4, 3, INPUT), (1, 3, HIDDEN), (1, 3, HIDDEN)),  # h_0 of hidden_size where the projection's is wanted
        ((4, 3, INPUT), (1, 3, PROJ), (1, 3, PROJ)),  # c_0 of the projection's size
        ((4, INPUT), (1, HIDDEN), (1, HIDDEN)),  # unbatched, the same
        ((4, 3, INPUT), (2, 3, PROJ), (1, 3, HIDDEN)),
    ],
)
def test_state_shape_errors_as_torch(x_shape, h_shape, c_shape):
    theirs, ours = torch.nn.LSTM(INPUT, HIDDEN, proj_size=PROJ), nn.LSTM(INPUT, HIDDEN, proj_size=PROJ)
    with pytest.raises(Exception) as want:
        theirs(torch.zeros(x_shape), (torch.zeros(h_shape), torch.zeros(c_shape)))
    with pytest.raises(want.type, match="h_0|c_0"):
        ours(tga.zeros(x_shape), (tga.zeros(h_shape), tga.zeros(c_shape)))


def test_dropout_between_layers_as_torch():
    # Training with dropout between the layers: after the same seed, PyTorch's masks and numbers
    # (the masks' draws are held to PyTorch's in test_dropout_masks_torch, skipped where PyTorch
    # draws from MKL's stream on an Intel CPU); in eval mode no dropout at all.
    x = np.random.default_rng(1).standard_normal((5, 2, INPUT))
    theirs, ours = _pair(dict(num_layers=3, dropout=0.4, bidirectional=True), "float64")
    for training in (False, True):
        theirs.train(training)
        ours.train(training)
        torch.manual_seed(7)
        out_t, (h_t, c_t) = theirs(torch.tensor(x))
        tga.manual_seed(7)
        out_o, (h_o, c_o) = ours(Tensor(x))
        if training and not torch_bernoulli_is_ours():
            continue
        for o, t in ((out_o, out_t), (h_o, h_t), (c_o, c_t)):
            np.testing.assert_allclose(o.detach().numpy(), t.detach().numpy(), **TOL["float64"])
    ours.eval()
    a = ours(Tensor(x))[0].detach().numpy()
    ours.dropout = 0.0
    np.testing.assert_array_equal(a, ours(Tensor(x))[0].detach().numpy())


def test_dropout_one_zeroes_the_input_of_the_next_layer():
    # dropout=1 in training: the second layer sees zeros, so its output is that of a zero input.
    m = nn.LSTM(INPUT, HIDDEN, num_layers=2, dropout=1.0, proj_size=PROJ).double().train()
    out = m(Tensor(np.random.default_rng(0).standard_normal((4, 2, INPUT))))[0]
    zero_in = nn.LSTM(2 * 1, HIDDEN, proj_size=PROJ).double()
    zero_in.load_state_dict({k[:-1] + "0": v for k, v in m.state_dict().items() if k.endswith("_l1")})
    np.testing.assert_allclose(
        out.detach().numpy(), zero_in(tga.zeros(4, 2, PROJ, dtype=tga.float64))[0].detach().numpy(), rtol=1e-12
    )


def test_traced_program_replays_with_new_weights(rng):
    # tga.jit.trace records the layers' step-by-step ops; a replay after the weights change gives
    # the eager gradients.
    m = nn.LSTM(3, 4, num_layers=2, bidirectional=True, batch_first=True, proj_size=2).double()
    x = Tensor(rng.standard_normal((2, 5, 3)), requires_grad=True)
    h0 = Tensor(rng.standard_normal((4, 2, 2)), requires_grad=True)
    c0 = Tensor(rng.standard_normal((4, 2, 4)), requires_grad=True)

    def loss():
        out, (h, c) = m(x, (h0, c0))
        return (out * out).sum() + h.sum() + (c * c).sum()

    prog = tga.jit.trace(loss)
    for p in m.parameters():
        p.data = p.data * 1.1
    leaves = [*m.parameters(), x, h0, c0]

    def grads(run):
        for t in leaves:
            t.grad = None
        run()
        return [t.grad.detach().numpy().copy() for t in leaves]

    got = grads(prog)
    want = grads(lambda: loss().backward())
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("packed", [False, True])
def test_compiled_training_equals_eager(packed):
    # tga.compile of an optimizer step over an LSTM with projections: the eager losses and parameters.
    def build():
        tga.manual_seed(0)
        lstm, head = nn.LSTM(3, 6, num_layers=2, proj_size=2, bidirectional=True), nn.Linear(4, 1)
        opt = tga.optim.Adam([*lstm.parameters(), *head.parameters()], lr=1e-2)

        def step(x):
            opt.zero_grad()
            inp = pack_padded_sequence(x, [5, 3, 4], enforce_sorted=False) if packed else x
            out, (h, c) = lstm(inp)
            out = pad_packed_sequence(out)[0] if packed else out
            loss = (head(out) ** 2).mean() + (c * c).mean()
            loss.backward()
            opt.step()
            return loss

        return step, [lstm, head]

    results = []
    for compiled in (False, True):
        step, mods = build()
        run = tga.compile(step) if compiled else step
        losses = [run(Tensor(np.random.default_rng(i).standard_normal((5, 3, 3)).astype(np.float32))).item()
                  for i in range(6)]  # fmt: skip
        results.append((losses, [p.detach().numpy().copy() for m in mods for p in m.parameters()]))
        if compiled:
            assert len(run.programs) == 1
    (l0, p0), (l1, p1) = results
    np.testing.assert_allclose(l1, l0, rtol=1e-5, atol=1e-6)
    for a, b in zip(p1, p0):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("packed", [False, True])
def test_runs_on_every_device(packed, device, rng):
    # Values and gradients on each array namespace (and the GPU, where there is one) equal NumPy's.
    x, h0, c0 = rng.standard_normal((4, 3, 2)), rng.standard_normal((4, 3, 2)), rng.standard_normal((4, 3, 3))
    results = []
    for dev in ("cpu", device):
        tga.manual_seed(0)
        m = nn.LSTM(2, 3, num_layers=2, bidirectional=True, proj_size=2).double().to(dev)
        xs = [Tensor(a, device=dev, requires_grad=True) for a in (x, h0, c0)]
        inp = pack_padded_sequence(xs[0], [2, 4, 1], enforce_sorted=False) if packed else xs[0]
        out, (h, c) = m(inp, (xs[1], xs[2]))
        out = out.data if packed else out
        ((out * out).sum() + h.sum() + (c * c).sum()).backward()
        results.append(
            [out.detach().numpy(), h.detach().numpy(), c.detach().numpy()]
            + [t.grad.detach().numpy() for t in [*xs, *m.parameters()]]
        )
    for a, b in zip(*results):
        np.testing.assert_allclose(b, a, rtol=1e-10, atol=1e-12)
