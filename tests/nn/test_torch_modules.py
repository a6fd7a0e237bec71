"""PyTorch's small modules in ``tinygrad_attn.nn``: activations, containers, layer options, and
tutorial code that runs after changing only its imports."""

from __future__ import annotations

from collections import OrderedDict

import numpy as np
import pytest
from torch_oracle import assert_matches_torch

import tinygrad_attn as tga
from tinygrad_attn import Tensor, nn

torch = pytest.importorskip("torch")


@pytest.mark.parametrize(
    "make",
    [
        lambda m: m.ReLU(),
        lambda m: m.GELU(),
        lambda m: m.GELU(approximate="tanh"),
        lambda m: m.Tanh(),
        lambda m: m.Sigmoid(),
        lambda m: m.Softmax(dim=-1),
        lambda m: m.Softmax(dim=0),
        lambda m: m.LogSoftmax(dim=1),
        lambda m: m.Identity(54, unused="ignored"),
    ],
    ids=["relu", "gelu", "gelu-tanh", "tanh", "sigmoid", "softmax-1", "softmax0", "logsoftmax1", "identity"],
)
def test_activation_matches_torch(make, rng):
    x = rng.standard_normal((3, 4, 5))
    ours, theirs = make(nn), make(torch.nn)
    assert_matches_torch(ours, theirs, lambda x: ours(x), lambda x: theirs(x), [x])


@pytest.mark.filterwarnings("ignore::UserWarning")  # PyTorch's note on the implicit dim
@pytest.mark.parametrize("shape", [(5,), (2, 5), (2, 3, 5), (2, 3, 4, 5)])
def test_softmax_without_dim_picks_torch_axis(shape, rng):
    x = rng.standard_normal(shape)
    for ours, theirs in ((nn.Softmax(), torch.nn.Softmax()), (nn.LogSoftmax(), torch.nn.LogSoftmax())):
        np.testing.assert_allclose(
            ours(Tensor(x)).detach().numpy(), theirs(torch.tensor(x)).detach().numpy(), atol=1e-12
        )


def test_sequential_from_ordered_dict_and_state_dict_as_torch(rng):
    def build(m):
        return m.Sequential(OrderedDict([("fc", m.Linear(3, 4)), ("act", m.ReLU()), ("norm", m.LayerNorm(4)),
                                         ("out", m.Linear(4, 2))]))  # fmt: skip

    ours, theirs = build(nn), build(torch.nn)
    assert list(ours.state_dict()) == ["fc.weight", "fc.bias", "norm.weight", "norm.bias", "out.weight", "out.bias"]
    assert_matches_torch(ours, theirs, lambda x: ours(x), lambda x: theirs(x), [rng.standard_normal((2, 3))])
    assert ours[0] is ours.fc and ours[-1] is ours.out and isinstance(ours[1], nn.ReLU)
    assert [n for n, _ in ours[1:].named_children()] == ["act", "norm", "out"]
    assert len(nn.Sequential(nn.Linear(1, 1), nn.Tanh())) == 2


def test_module_dict():
    d = nn.ModuleDict({"enc": nn.Linear(2, 3), "dec": nn.Linear(3, 2)})
    d["act"] = nn.GELU()
    assert list(d) == ["enc", "dec", "act"] and list(d.keys()) == ["enc", "dec", "act"]
    assert "enc" in d and len(d) == 3 and d["dec"].out_features == 2
    assert [n for n, _ in d.named_parameters()] == ["enc.weight", "enc.bias", "dec.weight", "dec.bias"]
    assert isinstance(d.pop("act"), nn.GELU) and len(d) == 2
    d.update([("extra", nn.Identity())])
    assert [k for k, _ in d.items()] == ["enc", "dec", "extra"]
    with pytest.raises(KeyError, match="'items'"):
        d["items"] = nn.Identity()
    theirs = torch.nn.ModuleDict({"enc": torch.nn.Linear(2, 3), "dec": torch.nn.Linear(3, 2)})
    assert list(nn.ModuleDict({"enc": nn.Linear(2, 3), "dec": nn.Linear(3, 2)}).state_dict()) == list(
        theirs.state_dict()
    )


@pytest.mark.parametrize("kw", [{}, {"elementwise_affine": False}, {"bias": False}, {"eps": 1e-3}])
@pytest.mark.parametrize("shape", [4, (3, 4)])
def test_layer_norm_options_match_torch(kw, shape, rng):
    ours, theirs = nn.LayerNorm(shape, **kw), torch.nn.LayerNorm(shape, **kw)
    with torch.no_grad():
        for p in theirs.parameters():
            p.copy_(torch.tensor(rng.standard_normal(tuple(p.shape))))
    x = rng.standard_normal((2, 3, 4))
    assert_matches_torch(ours, theirs, lambda x: ours(x), lambda x: theirs(x), [x])


def test_embedding_padding_idx_as_torch():
    ours, theirs = nn.Embedding(5, 3, padding_idx=0), torch.nn.Embedding(5, 3, padding_idx=0)
    assert not ours.weight.detach().numpy()[0].any()
    with torch.no_grad():
        theirs.weight.copy_(torch.arange(15.0).reshape(5, 3))  # a nonzero padding row: read, not learned
    ids = np.array([[0, 2, 0], [4, 1, 2]])
    assert_matches_torch(ours, theirs, lambda: ours(ids), lambda: theirs(torch.tensor(ids)), [])
    assert not ours.weight.grad.detach().numpy()[0].any() and ours.weight.grad.detach().numpy()[2].any()
    assert (ours.num_embeddings, ours.embedding_dim, ours.padding_idx) == (5, 3, 0)
    assert nn.Embedding(5, 3, padding_idx=-1).padding_idx == 4


@pytest.mark.parametrize("freeze", [True, False])
def test_embedding_from_pretrained_as_torch(freeze):
    table = np.arange(15.0).reshape(5, 3)
    ids = np.array([[0, 2, 0], [4, 1, 2]])
    seen = []
    for lib, mod in ((tga, nn), (torch, torch.nn)):
        w = lib.tensor(table.copy())
        emb = mod.Embedding.from_pretrained(w, freeze=freeze, padding_idx=2)
        out = emb(lib.tensor(ids))
        with lib.no_grad():
            w.mul_(2.0)  # the table's memory is the embedding's weight
        if not freeze:
            (out * out).sum().backward()
        grad = None if emb.weight.grad is None else np.array(emb.weight.grad.detach().numpy())
        seen.append((np.array(out.detach().numpy()), np.array(emb.weight.detach().numpy()), emb.weight.requires_grad,
                     grad, (emb.num_embeddings, emb.embedding_dim, emb.padding_idx)))  # fmt: skip
    (o1, w1, r1, g1, n1), (o2, w2, r2, g2, n2) = seen
    np.testing.assert_array_equal(o1, o2)
    np.testing.assert_array_equal(w1, w2)
    assert r1 == r2 == (not freeze) and n1 == n2
    assert (g1 is None) == (g2 is None) == freeze
    if g1 is not None:
        np.testing.assert_array_equal(g1, g2)
    with pytest.raises(ValueError, match="2-D"):
        nn.Embedding.from_pretrained(tga.ones(3))


def test_a_parameter_of_a_tensor_shares_its_memory_as_torch():
    seen = []
    for lib, mod in ((tga, nn), (torch, torch.nn)):
        t = lib.ones(3, dtype=lib.float64)
        p = mod.Parameter(t)
        with lib.no_grad():
            p.add_(1.0)
        t.mul_(3.0)
        seen.append(
            (np.array(t.detach().numpy()), np.array(p.detach().numpy()), p.requires_grad, p.is_leaf, t.requires_grad)
        )
    (t1, p1, *f1), (t2, p2, *f2) = seen
    np.testing.assert_array_equal(t1, t2)
    np.testing.assert_array_equal(p1, p2)
    assert f1 == f2
    q = nn.Parameter(tga.ones(3), dtype=tga.float64)  # another dtype: a copy
    assert q.dtype == np.float64


@pytest.mark.parametrize("dim", [-1, 0])
def test_glu_module_as_torch(dim):
    ours, theirs = nn.GLU(dim), torch.nn.GLU(dim)
    x = np.random.default_rng(3).standard_normal((4, 6))
    assert_matches_torch(ours, theirs, lambda x: ours(x), lambda x: theirs(x), [x])
    assert repr(ours) == repr(theirs)


@pytest.mark.parametrize(
    "name,kw",
    [
        ("CosineSimilarity", {}),
        ("CosineSimilarity", dict(dim=-1, eps=0.5)),
        ("PairwiseDistance", {}),
        ("PairwiseDistance", dict(p=1.0, keepdim=True)),
    ],
)
def test_distance_modules_as_torch(name, kw):
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((4, 3)), rng.standard_normal((4, 3))
    ours, theirs = getattr(nn, name)(**kw), getattr(torch.nn, name)(**kw)
    assert_matches_torch(ours, theirs, lambda x, y: ours(x, y), lambda x, y: theirs(x, y), [a, b])
    assert repr(ours).startswith(name)


@pytest.mark.parametrize("shape,kw", [(4, {}), ((3, 4), dict(eps=1e-3)), (4, dict(elementwise_affine=False))])
def test_rms_norm_as_torch(shape, kw):
    rng = np.random.default_rng(2)
    ours, theirs = nn.RMSNorm(shape, **kw), torch.nn.RMSNorm(shape, **kw)
    with torch.no_grad():
        for p in theirs.parameters():
            p.copy_(torch.tensor(rng.standard_normal(tuple(p.shape))))
    x = rng.standard_normal((2, 3, 4))
    assert_matches_torch(ours, theirs, lambda x: ours(x), lambda x: theirs(x), [x])
    assert repr(ours) == repr(theirs)


def _per_head(lib, mod):
    class PerHead(mod.Module):  # per-head projections in a ParameterList, biases in a ParameterDict
        def __init__(self):
            super().__init__()
            self.heads = mod.ParameterList([mod.Parameter(lib.zeros(3, 2, dtype=lib.float64)) for _ in range(2)])
            self.heads.append(lib.zeros(3, 2, dtype=lib.float64))  # a tensor: made a Parameter
            self.bias = mod.ParameterDict({"q": lib.zeros(2, dtype=lib.float64)})
            self.bias["k"] = mod.Parameter(lib.zeros(2, dtype=lib.float64))

        def forward(self, x):
            return sum(((x @ w) + self.bias["q"]) * self.bias["k"].exp() for w in self.heads)

    return PerHead()


def test_parameter_containers_as_torch(rng):
    ours, theirs = _per_head(tga, nn), _per_head(torch, torch.nn)
    with torch.no_grad():
        for p in theirs.parameters():
            p.copy_(torch.tensor(rng.standard_normal(tuple(p.shape))))
    assert_matches_torch(ours, theirs, lambda x: ours(x), lambda x: theirs(x), [rng.standard_normal((4, 3))])
    assert [n for n, _ in ours.named_parameters()] == ["heads.0", "heads.1", "heads.2", "bias.q", "bias.k"]
    heads, bias = ours.heads, ours.bias
    assert len(heads) == 3 and heads[-1] is heads[2] and all(p.requires_grad for p in heads)
    assert isinstance(heads[1:], nn.ParameterList) and len(heads[1:]) == 2
    assert list(bias) == ["q", "k"] and "q" in bias and len(bias) == 2
    k = bias.pop("k")
    assert isinstance(k, nn.Parameter) and list(bias.keys()) == ["q"]
    assert [n for n, _ in ours.named_parameters()] == ["heads.0", "heads.1", "heads.2", "bias.q"]
    with pytest.raises(KeyError, match="attribute"):
        bias["items"] = tga.ones(1)
    with pytest.raises(TypeError, match="Parameter or a Tensor"):
        heads.append(np.ones(2))
    with pytest.raises(IndexError):
        heads[3]


def test_parameter_registers_and_modules_compose():
    class Scale(nn.Module):
        def __init__(self):
            super().__init__()
            self.alpha = nn.Parameter(Tensor.ones(3))
            self.blocks = nn.ModuleList([nn.Linear(3, 3), nn.Dropout(0.1)])

        def forward(self, x):
            return self.blocks[1](self.blocks[0](x)) * self.alpha

    m = Scale()
    assert [n for n, _ in m.named_parameters()] == ["alpha", "blocks.0.weight", "blocks.0.bias"]
    assert m.alpha.requires_grad and nn.Dropout().p == 0.5


def test_tutorial_code_runs_after_changing_imports():
    # A PyTorch tutorial's classifier and training loop; only the imports differ.
    import tinygrad_attn.nn.functional as F  # noqa: PLC0415

    import tinygrad_attn as torch_  # noqa: PLC0415
    from tinygrad_attn import nn as nn_  # noqa: PLC0415

    class Net(nn_.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn_.Embedding(10, 8)
            self.rnn = nn_.LSTM(8, 16, batch_first=True)
            self.attn = nn_.MultiheadAttention(16, 2, batch_first=True)
            self.head = nn_.Sequential(nn_.Linear(16, 16), nn_.ReLU(), nn_.Linear(16, 2))

        def forward(self, ids):
            x, (h, c) = self.rnn(self.embed(ids))
            x, _ = self.attn(x, x, x, need_weights=False)
            return F.log_softmax(self.head(x.mean(axis=1)), axis=-1)

    torch_.manual_seed(0)
    net = Net()
    opt = tga.optim.Adam(net.parameters(), lr=1e-2)
    ids = Tensor(np.random.default_rng(0).integers(0, 10, (4, 6)))
    targets = np.array([0, 1, 0, 1])
    losses = []
    for _ in range(20):
        opt.zero_grad()
        loss = F.cross_entropy(net(ids), targets)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[-1] < 0.5 * losses[0]


@pytest.mark.parametrize(
    "make",
    [
        lambda **kw: nn.MultiheadAttention(4, 2, kdim=3, **kw),
        lambda **kw: nn.TransformerEncoderLayer(4, 2, 8, **kw),
        lambda **kw: nn.TransformerDecoderLayer(4, 2, 8, **kw),
        lambda **kw: nn.LSTM(3, 4, bidirectional=True, **kw),
        lambda **kw: nn.RNN(3, 4, 1, "relu", **kw),
        lambda **kw: nn.GRUCell(3, 4, **kw),
        lambda **kw: nn.RNNCell(3, 4, **kw),
    ],
    ids=["mha", "encoder_layer", "decoder_layer", "lstm", "rnn", "grucell", "rnncell"],
)
def test_device_and_dtype_arguments(make, device):
    m = make(device=device, dtype=np.float64)
    assert all(p.device == Tensor([0.0], device=device).device and p.dtype == np.float64 for p in m.parameters())
