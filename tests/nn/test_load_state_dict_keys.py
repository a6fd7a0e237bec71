"""``Module.load_state_dict`` returns PyTorch's ``(missing_keys, unexpected_keys)`` named
tuple (``Module.load(path)`` returns the module, as the contract says)."""

from __future__ import annotations

import numpy as np
import pytest

import tinygrad_attn as tga
from tinygrad_attn import nn


def _net(lib):
    return lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.ReLU(), lib.nn.Linear(4, 2))


def test_the_result_is_pytorchs_named_tuple():
    torch = pytest.importorskip("torch")
    ours, theirs = _net(tga), _net(torch)
    sd = {k: v.detach().numpy() for k, v in theirs.state_dict().items()}
    got, want = ours.load_state_dict(sd), theirs.load_state_dict(theirs.state_dict())
    assert got == want == ([], [])
    assert repr(got) == repr(want) == "<All keys matched successfully>"
    assert str(got) == str(want)
    del sd["2.bias"]
    sd["extra.weight"] = np.zeros(2)
    tsd = dict(theirs.state_dict())
    del tsd["2.bias"]
    tsd["extra.weight"] = torch.zeros(2)
    got, want = ours.load_state_dict(sd, strict=False), theirs.load_state_dict(tsd, strict=False)
    assert got == (["2.bias"], ["extra.weight"])
    assert got.missing_keys == want.missing_keys and got.unexpected_keys == want.unexpected_keys
    assert repr(got) == repr(want) == "_IncompatibleKeys(missing_keys=['2.bias'], unexpected_keys=['extra.weight'])"
    missing, unexpected = got  # the way training scripts unpack it
    assert missing == ["2.bias"] and unexpected == ["extra.weight"]


def test_strict_still_raises_and_load_returns_the_module(tmp_path):
    net = _net(tga)
    with pytest.raises(RuntimeError, match="missing key '0.bias'"):
        net.load_state_dict({k: v for k, v in net.state_dict().items() if k != "0.bias"})
    net.save(tmp_path / "m.safetensors")
    other = _net(tga)
    assert other.load(tmp_path / "m.safetensors") is other
    np.testing.assert_array_equal(other[2].weight.detach().numpy(), net[2].weight.detach().numpy())


def test_assign_takes_the_tensor_itself_as_pytorch(device):
    torch = pytest.importorskip("torch")
    lin, tlin = nn.Linear(3, 2).to(device), torch.nn.Linear(3, 2)
    w = tga.ones(2, 3, device=device)
    lin.load_state_dict({"weight": w, "bias": tga.zeros(2, device=device)}, assign=True)
    tw = torch.ones(2, 3)
    tlin.load_state_dict({"weight": tw, "bias": torch.zeros(2)}, assign=True)
    with tga.no_grad():
        w.mul_(3.0)
    with torch.no_grad():
        tw.mul_(3.0)
    np.testing.assert_array_equal(lin.weight.detach().numpy(), tlin.weight.detach().numpy())  # shared memory: 3s
    assert lin.weight.requires_grad and tlin.weight.requires_grad
    lin.load_state_dict({"weight": np.full((2, 3), 5.0), "bias": np.zeros(2)})  # copied in place (assign=False)
    tlin.load_state_dict({"weight": torch.full((2, 3), 5.0), "bias": torch.zeros(2)})
    assert lin.weight.detach().numpy()[0, 0] == tlin.weight[0, 0].item() == 5.0
    assert w.detach().numpy()[0, 0] == tw[0, 0].item() == 5.0  # (into the memory the module shares with w)
