"""Module: registration, PyTorch's dotted names, traversal, modes, devices and state dicts."""

from __future__ import annotations

import numpy as np
import pytest

import tinygrad_attn as tga
from tinygrad_attn import Tensor
from tinygrad_attn.models import (
    Dropout,
    Embedding,
    LayerNorm,
    Linear,
    Module,
    ModuleList,
    Parameter,
    Sequential,
    StateDictError,
    functional_call,
)


class Block(Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = Linear(4, 4)
        self.norm = LayerNorm(4)
        self.drop = Dropout(0.5)

    def forward(self, x):
        return self.drop(self.norm(self.fc(x)))


class Net(Module):
    def __init__(self) -> None:
        super().__init__()
        self.scale = Parameter(np.ones(1, np.float32))
        self.embed = Embedding(10, 4)
        self.blocks = ModuleList([Block(), Block()])
        self.head = Linear(4, 3, bias=False)
        self.register_buffer("count", Tensor(np.zeros(2, np.float32)))
        self.register_buffer("cache", Tensor(np.zeros(3, np.float32)), persistent=False)
        self.note = "plain attribute"

    def forward(self, ids):
        x = self.embed(ids) * self.scale
        for b in self.blocks:
            x = b(x)
        return self.head(x)


# Written out by hand: the names PyTorch gives the same structure.
NET_PARAMS = [
    "scale",
    "embed.weight",
    "blocks.0.fc.weight",
    "blocks.0.fc.bias",
    "blocks.0.norm.weight",
    "blocks.0.norm.bias",
    "blocks.1.fc.weight",
    "blocks.1.fc.bias",
    "blocks.1.norm.weight",
    "blocks.1.norm.bias",
    "head.weight",
]


def test_named_parameters_are_pytorch_names():
    net = Net()
    assert [n for n, _ in net.named_parameters()] == NET_PARAMS
    assert all(isinstance(p, Parameter) for p in net.parameters())
    assert net.blocks[1].fc.weight is dict(net.named_parameters())["blocks.1.fc.weight"]


def test_plain_attributes_and_tensors_are_not_registered():
    net = Net()
    net.extra = Tensor([1.0, 2.0])  # a plain tensor is not a parameter
    assert "extra" not in {n for n, _ in net.named_parameters()}
    assert "note" not in net.state_dict()


def test_reassignment_replaces_registration():
    m = Module()
    m.a = Parameter(np.zeros(2, np.float32))
    m.a = Linear(2, 2)  # now a child, no longer a parameter
    assert [n for n, _ in m.named_parameters()] == ["a.weight", "a.bias"]
    del m.a
    assert list(m.parameters()) == [] and list(m.children()) == []


def test_assigning_a_plain_tensor_to_a_parameter_name_is_an_error():
    lin = Linear(2, 3)
    with pytest.raises(TypeError, match=r"Linear\.weight.*Parameter"):
        lin.weight = Tensor(np.zeros((3, 2), np.float32))
    assert isinstance(lin.weight, Parameter)


def test_shared_parameters_are_listed_once_and_saved_under_both_names():
    a, b = Linear(3, 3), Linear(3, 3)
    b.weight = a.weight  # tied
    seq = Sequential(a, b)
    assert [n for n, _ in seq.named_parameters()] == ["0.weight", "0.bias", "1.bias"]
    assert sorted(seq.state_dict()) == ["0.bias", "0.weight", "1.bias", "1.weight"]
    sd = seq.state_dict()
    sd["0.weight"] = sd["1.weight"] = np.full((3, 3), 2.0, np.float32)
    seq.load_state_dict(sd)
    assert np.all(b.weight.detach().numpy() == 2.0)


def test_children_and_modules():
    net = Net()
    assert list(net.children()) == [net.embed, net.blocks, net.head]
    names = [n for n, _ in net.named_modules()]
    assert names == ["", "embed", "blocks", "blocks.0", "blocks.0.fc", "blocks.0.norm", "blocks.0.drop",
                     "blocks.1", "blocks.1.fc", "blocks.1.norm", "blocks.1.drop", "head"]  # fmt: skip
    assert list(net.modules())[0] is net
    assert net.get_submodule("blocks.1.norm") is net.blocks[1].norm
    with pytest.raises(AttributeError, match="blocks.7"):
        net.get_submodule("blocks.7")


def test_module_list_indexing():
    ml = ModuleList([Linear(1, 1) for _ in range(3)])
    assert ml[-1] is list(ml)[2] and len(ml[1:]) == 2
    with pytest.raises(IndexError, match="index 3"):
        ml[3]
    new = Linear(1, 1)
    ml[0] = new
    assert ml[0] is new and [n for n, _ in ml.named_parameters()][:2] == ["0.weight", "0.bias"]
    seq = Sequential(Linear(2, 3), Linear(3, 4), Linear(4, 1))
    assert isinstance(seq[1:], Sequential) and seq[1:](Tensor.ones(1, 3)).shape == (1, 1)


def test_train_eval_is_recursive():
    net = Net()
    assert all(m.training for m in net.modules())
    assert net.eval() is net
    assert not any(m.training for m in net.modules())
    net.train()
    assert all(m.training for m in net.modules())


def test_zero_grad_and_requires_grad():
    net = Net()
    net(np.array([[1, 2, 3]])).sum().backward()
    assert all(p.grad is not None for p in net.parameters())
    net.zero_grad()
    assert all(p.grad is None for p in net.parameters())
    net.requires_grad_(False)
    assert not any(p.requires_grad for p in net.parameters())


def test_state_dict_holds_detached_tensors_sharing_memory_and_persistent_buffers_only():
    net = Net()
    sd = net.state_dict()
    assert list(sd) == NET_PARAMS[:1] + ["count"] + NET_PARAMS[1:]
    assert all(isinstance(v, Tensor) and not v.requires_grad and v.is_leaf for v in sd.values())
    assert net.head.weight.requires_grad  # (the module's own parameters are untouched)
    assert isinstance(np.asarray(sd["head.weight"]), np.ndarray) and np.asarray(sd["head.weight"]).dtype == np.float32
    sd["head.weight"].fill_(7.0)  # the same memory, as PyTorch's state dict
    assert np.all(net.head.weight.detach().numpy() == 7.0)
    copy = net.state_dict()["blocks.0.fc.bias"].clone()
    copy.fill_(3.0)
    assert not np.any(net.blocks[0].fc.bias.detach().numpy() == 3.0)
    assert net.state_dict(keep_vars=True)["head.weight"] is net.head.weight
    assert list(net.state_dict(prefix="m."))[0] == "m." + NET_PARAMS[0]


def test_load_state_dict_fills_in_place():
    a, b = Net(), Net()
    params = list(b.parameters())
    assert b.load_state_dict(a.state_dict()) == ([], [])  # PyTorch's (missing_keys, unexpected_keys)
    assert all(p is q for p, q in zip(params, b.parameters()))  # same objects, new values
    for k, v in a.state_dict().items():
        np.testing.assert_array_equal(b.state_dict()[k], v)


@pytest.mark.parametrize("assign", [False, True])
def test_load_state_dict_writes_the_memory_tensors_share_as_pytorchs(assign):
    # Tensors sharing a parameter's or buffer's memory (detach(), an earlier state_dict())
    # see the loaded values, each version counts the copy, and a graph that saved a
    # parameter before the load raises in its backward; with assign=True the module takes
    # the given tensors instead, and the old memory keeps its values.
    torch = pytest.importorskip("torch")
    seen = {}
    for side, lib in (("ours", tga), ("theirs", torch)):
        net = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.BatchNorm1d(4)).double()
        rng = np.random.default_rng(0)  # (the same values on both sides)
        first, new = (
            {k: rng.standard_normal(tuple(v.shape)) if v.dtype == lib.float64 else np.array(i)
             for k, v in net.state_dict().items()} for i in (3, 5)
        )  # fmt: skip
        net.load_state_dict({k: lib.tensor(v) for k, v in first.items()})
        held = {k: v.detach() for k, v in net.state_dict().items()}
        before = net.state_dict()
        versions = {k: v._version for k, v in net.state_dict(keep_vars=True).items()}
        x = lib.tensor(np.ones((2, 3)), requires_grad=True)
        loss = (net[0](x) ** 2).sum()  # saves the weight (x's gradient reads it)
        net.load_state_dict({k: lib.tensor(v) for k, v in new.items()}, assign=assign)
        try:
            loss.backward()
            raised = False
        except RuntimeError:
            raised = True
        now = net.state_dict(keep_vars=True)
        seen[side] = (
            raised,
            {k: now[k]._version - versions[k] for k in new} if not assign else None,
            {k: np.asarray(t.detach().numpy()).copy() for k, t in held.items()},
            {k: np.asarray(t.detach().numpy()).copy() for k, t in before.items()},
            {k: np.asarray(now[k].detach().numpy()).copy() for k in new},
        )
    ours, theirs = seen["ours"], seen["theirs"]
    assert ours[:2] == theirs[:2]
    for got, want in zip(ours[2:], theirs[2:]):
        for k in want:
            np.testing.assert_array_equal(got[k], want[k], err_msg=k)


def test_load_state_dict_keeps_zero_dim_parameters(device):
    m = Module()
    m.t = Parameter(np.array(0.5, np.float32))
    m.to(device).load_state_dict({"t": np.array(2.0, np.float32)})
    assert m.t.shape == () and m.t.item() == 2.0 and m.state_dict()["t"].shape == ()


def test_load_state_dict_wrong_shape_names_key_and_both_shapes():
    net = Net()
    sd = net.state_dict()
    sd["blocks.1.fc.weight"] = np.zeros((4, 5), np.float32)
    before = net.blocks[0].fc.weight.detach().numpy()
    sd["blocks.0.fc.weight"] = before + 1.0  # fits, but must not be loaded when another key fails
    with pytest.raises(StateDictError) as e:
        net.load_state_dict(sd)
    msg = str(e.value)
    assert "'blocks.1.fc.weight'" in msg and "(4, 5)" in msg and "(4, 4)" in msg
    np.testing.assert_array_equal(net.blocks[0].fc.weight.detach().numpy(), before)
    with pytest.raises(ValueError, match="blocks.1.fc.weight"):  # shape errors are checked even non-strict
        net.load_state_dict(sd, strict=False)


def test_load_state_dict_missing_and_unexpected_keys():
    net = Net()
    sd = net.state_dict()
    del sd["head.weight"]
    with pytest.raises(KeyError, match=r"missing key 'head\.weight' \(the module's shape \(3, 4\)\)"):
        net.load_state_dict(sd)
    sd = net.state_dict()
    sd["head.bias"] = np.zeros(3, np.float32)
    with pytest.raises(RuntimeError, match=r"unexpected key 'head\.bias' \(shape \(3,\)"):
        net.load_state_dict(sd)
    net.load_state_dict({"head.bias": np.zeros(3), "scale": np.full(1, 3.0)}, strict=False)
    assert net.scale.item() == 3.0 and net.scale.dtype == np.float32


def test_to_moves_parameters_buffers_and_grads(device):
    net = Net()
    net(np.array([[1, 2]])).sum().backward()
    w = net.head.weight
    ref = {k: v.detach().numpy() for k, v in net.state_dict().items()}
    assert net.to(device) is net
    assert net.head.weight is w  # moved in place
    for t in list(net.parameters()) + list(net.buffers()):
        assert t.device == tga.get_device(device).name
    assert all(p.grad.device == p.device for p in net.parameters())
    assert net.cache.device == net.head.weight.device  # non-persistent buffers move too
    for k, v in net.state_dict().items():
        np.testing.assert_array_equal(v, ref[k])
    out = net(np.array([[1, 2]]))
    assert out.device == net.head.weight.device


def test_double_casts_parameters_and_buffers():
    net = Net().double()
    assert all(t.dtype == np.float64 for t in list(net.parameters()) + list(net.buffers()))
    assert net(np.array([[0, 1]])).dtype == np.float64


def test_functional_call_uses_the_given_tensors_then_restores():
    lin = Linear(2, 2)
    w = Tensor(np.eye(2), requires_grad=True)
    b = Tensor(np.zeros(2), requires_grad=True)
    x = Tensor(np.array([[1.0, 2.0]]))
    y = functional_call(lin, {"weight": w, "bias": b}, x)
    np.testing.assert_array_equal(y.detach().numpy(), [[1.0, 2.0]])
    y.sum().backward()
    np.testing.assert_array_equal(w.grad.detach().numpy(), [[1.0, 2.0], [1.0, 2.0]])
    assert isinstance(lin.weight, Parameter) and lin.weight.grad is None
    with pytest.raises(KeyError, match="nope"):
        functional_call(lin, {"nope": w}, x)


def test_scopes_name_modules_by_attribute():
    net = Net()
    out = net(np.array([[1]]))
    fn = out.grad_fn
    assert fn.scope is not None and fn.scope.path == "head"


def test_apply_add_module_and_extend():
    seq = Sequential(Linear(2, 2))
    seq.add_module("extra", LayerNorm(2))
    ml = ModuleList().extend([Linear(1, 1), Linear(1, 1)])
    assert [n for n, _ in seq.named_children()] == ["0", "extra"] and len(ml) == 2
    visited = []
    assert seq.apply(lambda m: visited.append(type(m).__name__)) is seq
    assert visited == ["Linear", "LayerNorm", "Sequential"]  # children first, as PyTorch
