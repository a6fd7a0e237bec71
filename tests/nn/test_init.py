"""nn.init: PyTorch's gains and fans exactly, its distributions statistically, in place,
repeatable under manual_seed, on every CPU namespace."""

from __future__ import annotations

import math

import numpy as np
import pytest

import tinygrad_attn as tga
from tinygrad_attn import Tensor, nn
from tinygrad_attn.nn import init

torch = pytest.importorskip("torch")

NONLINEARITIES = ["linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
                  "conv_transpose3d", "sigmoid", "tanh", "relu", "leaky_relu", "selu"]  # fmt: skip


@pytest.mark.parametrize("name", NONLINEARITIES)
def test_calculate_gain_is_pytorchs(name):
    assert init.calculate_gain(name) == torch.nn.init.calculate_gain(name)
    if name == "leaky_relu":
        assert init.calculate_gain(name, 0.2) == torch.nn.init.calculate_gain(name, 0.2)


def test_calculate_gain_rejects_unknown():
    with pytest.raises(ValueError, match="unsupported nonlinearity 'swish'"):
        init.calculate_gain("swish")


@pytest.mark.parametrize("shape", [(5, 3), (4, 3, 2), (6, 2, 3, 5), (2, 3, 1, 2, 2)])
def test_fans_are_pytorchs(shape):
    assert init._calculate_fan_in_and_fan_out(Tensor.zeros(*shape)) == torch.nn.init._calculate_fan_in_and_fan_out(
        torch.zeros(shape)
    )


def test_fans_need_two_dimensions():
    with pytest.raises(ValueError, match="fewer than 2 dimensions"):
        init.xavier_uniform_(Tensor.zeros(4))


def _fill(fn, shape, device="cpu", **kw):
    p = nn.Parameter(np.zeros(shape, np.float64), device=device)
    out = fn(p, **kw)
    assert out is p and p.requires_grad and p.grad_fn is None  # in place, still a leaf
    return p.detach().numpy()


# name -> (fill, kwargs, expected mean, expected std, bound or None)
FAN_IN, FAN_OUT = 200 * 3, 150 * 3  # for a (150, 200, 3) tensor
SHAPE = (150, 200, 3)
DISTRIBUTIONS = {
    "uniform": (init.uniform_, {"a": -2.0, "b": 4.0}, 1.0, 6 / math.sqrt(12), (-2.0, 4.0)),
    "normal": (init.normal_, {"mean": 0.5, "std": 2.0}, 0.5, 2.0, None),
    "xavier_uniform": (init.xavier_uniform_, {"gain": 2.0}, 0.0, 2.0 * math.sqrt(2 / (FAN_IN + FAN_OUT)), None),
    "xavier_normal": (init.xavier_normal_, {}, 0.0, math.sqrt(2 / (FAN_IN + FAN_OUT)), None),
    "kaiming_uniform": (init.kaiming_uniform_, {"nonlinearity": "relu"}, 0.0, math.sqrt(2 / FAN_IN), None),
    "kaiming_normal_fan_out": (
        init.kaiming_normal_,
        {"mode": "fan_out", "nonlinearity": "leaky_relu", "a": 0.1},
        0.0,
        math.sqrt(2 / (1 + 0.01)) / math.sqrt(FAN_OUT),
        None,
    ),
    "kaiming_uniform_default": (init.kaiming_uniform_, {"a": math.sqrt(5)}, 0.0, 1 / math.sqrt(3 * FAN_IN), None),
    "trunc_normal": (init.trunc_normal_, {"std": 0.02, "a": -0.04, "b": 0.04}, 0.0, 0.02 * 0.8796, (-0.04, 0.04)),
}


@pytest.mark.parametrize("name", sorted(DISTRIBUTIONS))
def test_distributions(name):
    fn, kw, mean, std, bounds = DISTRIBUTIONS[name]
    a = _fill(fn, SHAPE, **kw)
    n = a.size
    assert abs(a.mean() - mean) < 5 * std / math.sqrt(n)
    assert abs(a.std() - std) < 0.02 * std
    if bounds is not None:
        assert bounds[0] <= a.min() and a.max() <= bounds[1]
    if "uniform" in name and bounds is None:  # U(-b, b) with b = sqrt(3) std
        assert abs(a).max() <= math.sqrt(3) * std and abs(a).max() > 0.99 * math.sqrt(3) * std


def test_kaiming_uniform_default_is_linears_bound():
    a = _fill(init.kaiming_uniform_, (300, 50), a=math.sqrt(5))
    assert np.abs(a).max() <= 1 / math.sqrt(50)


@pytest.mark.parametrize("device", ["cpu", "array_api_strict", "array_api_strict:device1"])
def test_fills_on_each_device_and_repeat_under_manual_seed(device):
    tga.manual_seed(3)
    a = _fill(init.xavier_normal_, (4, 5), device)
    tga.manual_seed(3)
    b = _fill(init.xavier_normal_, (4, 5), device)
    np.testing.assert_array_equal(a, b)
    c = _fill(init.xavier_normal_, (4, 5), device)
    assert not np.array_equal(a, c)
    d = _fill(init.normal_, (4, 5), device, generator=tga.Generator().manual_seed(1))
    expect = tga.randn(4, 5, dtype=tga.float64, generator=tga.Generator().manual_seed(1))
    np.testing.assert_array_equal(d, expect.detach().numpy())


def test_keeps_dtype_and_writes_through_views():
    w = nn.Parameter(np.zeros((3, 4), np.float32))
    init.constant_(w, 0.25)
    assert w.dtype == np.float32 and (w.detach().numpy() == 0.25).all()
    assert (init.ones_(w).detach().numpy() == 1).all() and (init.zeros_(w).detach().numpy() == 0).all()


def test_constant_eye_dirac_are_pytorchs():
    np.testing.assert_array_equal(_fill(init.eye_, (3, 5)), torch.nn.init.eye_(torch.empty(3, 5)).detach().numpy())
    for shape, groups in (((4, 2, 3), 1), ((6, 3, 3, 3), 2), ((4, 4, 1, 3, 3), 2)):
        want = torch.nn.init.dirac_(torch.empty(shape), groups).detach().numpy()
        np.testing.assert_array_equal(_fill(init.dirac_, shape, groups=groups), want)
    np.testing.assert_array_equal(_fill(init.constant_, (2, 3), val=-1.5), np.full((2, 3), -1.5))


@pytest.mark.parametrize("shape", [(6, 4), (4, 6), (5, 2, 3)])
def test_orthogonal(shape):
    a = _fill(init.orthogonal_, shape, gain=2.0).reshape(shape[0], -1)
    small = min(a.shape)
    gram = a @ a.T if a.shape[0] == small else a.T @ a
    np.testing.assert_allclose(gram, 4.0 * np.eye(small), atol=1e-12)


def test_sparse():
    a = _fill(init.sparse_, (10, 400), sparsity=0.3, std=0.5)
    assert ((a == 0).sum(axis=0) == 3).all()
    assert abs(a[a != 0].std() - 0.5) < 0.03


def test_init_under_no_grad_does_not_record_and_takes_raw_arrays():
    lin = nn.Linear(3, 2)
    init.xavier_uniform_(lin.weight)
    y = lin(Tensor.ones(1, 3))
    assert y.requires_grad and lin.weight.grad_fn is None
    arr = np.zeros((2, 3))
    assert init.constant_(arr, 2.0) is arr and (arr == 2).all()


DEPRECATED = ["uniform", "normal", "constant", "eye", "dirac", "xavier_uniform", "xavier_normal", "kaiming_uniform",
              "kaiming_normal", "orthogonal", "sparse"]  # fmt: skip


def test_the_deprecated_names_are_pytorchs():
    torch = pytest.importorskip("torch")
    theirs = {n for n in dir(torch.nn.init) if not n.startswith("_") and hasattr(torch.nn.init, n + "_")}
    assert theirs == set(DEPRECATED)


@pytest.mark.parametrize("name", DEPRECATED)
def test_deprecated_names_warn_then_call_the_underscored_one(name):
    shape = {"dirac": (2, 2, 3), "eye": (3, 4)}.get(name, (4, 5))
    extra = {"constant": (0.5,), "sparse": (0.25,)}.get(name, ())
    tga.manual_seed(3)
    expected = getattr(init, name + "_")(Tensor(np.zeros(shape)), *extra).detach().numpy()
    tga.manual_seed(3)
    t = Tensor(np.zeros(shape))
    with pytest.warns(FutureWarning, match=rf"`nn\.init\.{name}` is now deprecated in favor of `nn\.init\.{name}_`"):
        out = getattr(init, name)(t, *extra)
    assert out is t
    np.testing.assert_array_equal(t.detach().numpy(), expected)
