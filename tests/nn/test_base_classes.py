"""PyTorch's base classes and placeholders of ``torch.nn``: ``Buffer``, ``Container``,
``UninitializedParameter``/``UninitializedBuffer`` (the lazy modules'), ``RNNBase`` and
``RNNCellBase``, each held to PyTorch's behaviour."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest

import tinygrad_attn as tga
from tinygrad_attn import nn

torch = pytest.importorskip("torch")


def _both(build):
    return build(nn, tga), build(torch.nn, torch)


@pytest.mark.parametrize("persistent", [True, False])
def test_buffer_assigned_to_a_module_is_registered_as_pytorchs(persistent):
    def build(m, lib):
        mod = m.Module()
        mod.a = m.Buffer(lib.arange(3.0), persistent=persistent)
        mod.w = m.Parameter(lib.ones(2))
        mod.b = m.Buffer(lib.zeros(2))
        return mod

    ours, theirs = _both(build)
    assert [n for n, _ in ours.named_buffers()] == [n for n, _ in theirs.named_buffers()]
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    assert isinstance(ours.a, nn.Buffer) and isinstance(ours.a, tga.Tensor) and ours.a.persistent == persistent
    np.testing.assert_array_equal(ours.a.detach().numpy(), theirs.a.detach().numpy())
    # a copy keeps the buffer and its persistence
    for clone in (copy.deepcopy(ours), pickle.loads(pickle.dumps(ours))):
        assert list(clone.state_dict()) == list(theirs.state_dict())
        assert clone.a.persistent == persistent


def test_buffer_shares_memory_detached_and_keeps_requires_grad():
    x = tga.ones(3, requires_grad=True)
    b = nn.Buffer(x)
    tb = torch.nn.Buffer(torch.ones(3, requires_grad=True))
    assert b.requires_grad == tb.requires_grad and b.is_leaf and b.grad_fn is None
    x.data.fill_(2.0)
    assert b.detach().numpy().tolist() == [2.0, 2.0, 2.0]
    assert tuple(nn.Buffer().shape) == tuple(torch.nn.Buffer().shape) == (0,)


def test_buffer_replacing_a_parameter_is_refused_as_pytorch():
    ours, theirs = nn.Linear(2, 2), torch.nn.Linear(2, 2)
    with pytest.raises(TypeError):
        theirs.weight = torch.nn.Buffer(torch.ones(2, 2))
    with pytest.raises(TypeError):
        ours.weight = nn.Buffer(tga.ones(2, 2))


def test_container_is_pytorchs_deprecated_module_with_children():
    with pytest.warns(FutureWarning):
        theirs = torch.nn.Container(fc=torch.nn.Linear(2, 3), act=torch.nn.ReLU())
    with pytest.warns(FutureWarning):
        ours = nn.Container(fc=nn.Linear(2, 3), act=nn.ReLU())
    assert isinstance(ours, nn.Module)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert [n for n, _ in ours.named_children()] == [n for n, _ in theirs.named_children()]
    assert repr(ours) == repr(theirs)


@pytest.mark.parametrize("kind", ["UninitializedParameter", "UninitializedBuffer"])
@pytest.mark.parametrize("dtype", [None, "float64"])
def test_uninitialized_placeholders_as_pytorchs(kind, dtype):
    ours = getattr(nn, kind)(dtype=None if dtype is None else getattr(tga, dtype))
    theirs = getattr(torch.nn, kind)(dtype=None if dtype is None else getattr(torch, dtype))
    assert repr(ours) == repr(theirs)
    assert ours.requires_grad == theirs.requires_grad
    assert str(ours.dtype) == str(theirs.dtype)
    assert nn.parameter.is_lazy(ours) and torch.nn.parameter.is_lazy(theirs)
    for t in (ours, theirs):
        with pytest.raises(RuntimeError, match="shape of an uninitialized"):
            t.shape  # noqa: B018
    ours.materialize((2, 3))
    theirs.materialize((2, 3))
    assert type(ours).__name__ == type(theirs).__name__ or (
        kind == "UninitializedBuffer" and isinstance(ours, nn.Buffer)
    )
    assert tuple(ours.shape) == tuple(theirs.shape) == (2, 3)
    assert isinstance(ours, nn.Parameter) == isinstance(theirs, torch.nn.Parameter)
    assert isinstance(ours, nn.Buffer) == isinstance(theirs, torch.nn.Buffer)
    assert not nn.parameter.is_lazy(ours)


LAZY = {
    "LazyLinear": (lambda m: m.LazyLinear(3), (2, 5)),
    "LazyConv2d": (lambda m: m.LazyConv2d(4, 2), (2, 3, 4, 4)),
    "LazyConvTranspose1d": (lambda m: m.LazyConvTranspose1d(4, 2, bias=False), (2, 3, 5)),
    "LazyBatchNorm1d": (lambda m: m.LazyBatchNorm1d(), (4, 3)),
    "LazyInstanceNorm2d": (lambda m: m.LazyInstanceNorm2d(affine=True, track_running_stats=True), (2, 3, 2, 2)),
}


@pytest.mark.parametrize("name", list(LAZY))
def test_lazy_modules_hold_pytorchs_placeholders_until_their_first_input(name, rng):
    build, shape = LAZY[name]
    ours, theirs = build(nn), build(torch.nn)

    def kinds(module, lib):
        out = {}
        for n, p in module.named_parameters():
            out[n] = type(p).__name__
        for n, b in module.named_buffers():
            out[n] = "UninitializedBuffer" if isinstance(b, lib.UninitializedBuffer) else "buffer"
        return out

    assert kinds(ours, nn) == kinds(theirs, torch.nn)
    params = list(ours.parameters())
    x = rng.standard_normal(shape).astype(np.float32)
    ours(tga.tensor(x))
    theirs(torch.tensor(x))
    assert kinds(ours, nn) == kinds(theirs, torch.nn)
    assert type(ours).__name__ == type(theirs).__name__
    assert all(a is b for a, b in zip(params, ours.parameters()))  # the same objects, filled in place
    assert {k: tuple(v.shape) for k, v in ours.state_dict().items()} == {
        k: tuple(v.shape) for k, v in theirs.state_dict().items()
    }


@pytest.mark.parametrize("cls", ["RNN", "LSTM", "GRU"])
def test_recurrent_layers_are_rnnbase_as_pytorchs(cls):
    ours, theirs = getattr(nn, cls)(3, 4, 2), getattr(torch.nn, cls)(3, 4, 2)
    assert isinstance(ours, nn.RNNBase) and isinstance(theirs, torch.nn.RNNBase)
    assert ours.mode == theirs.mode
    assert repr(ours) == repr(theirs)


@pytest.mark.parametrize("mode", ["LSTM", "GRU", "RNN_TANH", "RNN_RELU"])
@pytest.mark.parametrize(
    "kw", [{}, {"num_layers": 2, "bidirectional": True, "bias": False}, {"num_layers": 2, "proj_size": 2}]
)
def test_rnnbase_built_directly_initialises_as_pytorchs(mode, kw):
    torch.manual_seed(3)
    theirs = torch.nn.RNNBase(mode, 3, 4, **kw)
    tga.manual_seed(3)
    ours = nn.RNNBase(mode, 3, 4, **kw)
    assert ours.mode == theirs.mode
    got = {k: v.detach().numpy() for k, v in ours.state_dict().items()}
    want = {k: v.detach().numpy() for k, v in theirs.state_dict().items()}
    assert list(got) == list(want)
    for k in want:
        np.testing.assert_array_equal(got[k], want[k], err_msg=k)


def test_rnnbase_refuses_what_pytorchs_refuses():
    with pytest.raises(ValueError, match="Unrecognized RNN mode"):
        torch.nn.RNNBase("LSTMX", 3, 4)
    with pytest.raises(ValueError, match="Unrecognized RNN mode"):
        nn.RNNBase("LSTMX", 3, 4)
    for lib in (torch, tga):
        for size, match in ((4, "smaller than hidden_size"), (-1, "positive integer or zero")):
            with pytest.raises(ValueError, match=match):
                lib.nn.RNNBase("LSTM", 3, 4, proj_size=size)
    for cls in ("GRU", "RNN"):  # (RNNBase itself builds weight_hr for any mode, as PyTorch's; they refuse)
        for lib in (torch, tga):
            with pytest.raises(ValueError, match="only supported for LSTM"):
                getattr(lib.nn, cls)(3, 4, proj_size=2)
    for lib in (torch, tga):  # (RNNBase has no forward of its own)
        with pytest.raises(NotImplementedError):
            lib.nn.RNNBase("GRU", 3, 4, proj_size=2)(lib.zeros(2, 1, 3))


@pytest.mark.parametrize("cls", ["RNNCell", "LSTMCell", "GRUCell"])
@pytest.mark.parametrize("bias", [True, False])
def test_cells_are_rnncellbase_as_pytorchs(cls, bias):
    ours, theirs = getattr(nn, cls)(3, 4, bias=bias), getattr(torch.nn, cls)(3, 4, bias=bias)
    assert isinstance(ours, nn.RNNCellBase) and isinstance(theirs, torch.nn.RNNCellBase)
    assert repr(ours) == repr(theirs)
    assert ours.bias == theirs.bias


@pytest.mark.parametrize("chunks", [1, 3, 4])
def test_rnncellbase_built_directly_initialises_as_pytorchs(chunks):
    torch.manual_seed(5)
    theirs = torch.nn.RNNCellBase(3, 4, True, chunks)
    tga.manual_seed(5)
    ours = nn.RNNCellBase(3, 4, True, chunks)
    for (n, p), (m, q) in zip(ours.named_parameters(), theirs.named_parameters(), strict=True):
        assert n == m
        np.testing.assert_array_equal(p.detach().numpy(), q.detach().numpy())
