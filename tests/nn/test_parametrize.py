"""``nn.utils.parametrize``, ``nn.utils.parametrizations.weight_norm``/``spectral_norm`` and the
older ``nn.utils.weight_norm`` against PyTorch: state dict keys, loading PyTorch's state
dict, outputs and gradients in float64, the power iteration's buffers over training steps,
assignment through ``right_inverse``, ``cached()`` and removal."""

from __future__ import annotations

import numpy as np
import pytest
from torch_oracle import assert_matches_torch

from tinygrad_attn import Tensor, nn

torch = pytest.importorskip("torch")


def _layers(m):
    return {"linear": (m.Linear(3, 4), (2, 3)), "conv1d": (m.Conv1d(2, 3, 2), (2, 2, 5)),
            "convT": (m.ConvTranspose1d(2, 3, 2), (2, 2, 4))}  # fmt: skip


@pytest.mark.parametrize("layer", ["linear", "conv1d", "convT"])
@pytest.mark.parametrize("dim", [0, 1, None])
def test_weight_norm_as_torch(layer, dim, rng):
    ours, shape = _layers(nn)[layer]
    theirs, _ = _layers(torch.nn)[layer]
    nn.utils.parametrizations.weight_norm(ours, dim=dim)
    torch.nn.utils.parametrizations.weight_norm(theirs, dim=dim)
    assert type(ours).__name__ == type(theirs).__name__
    assert_matches_torch(ours, theirs, lambda x: ours(x), lambda x: theirs(x), [rng.standard_normal(shape)])
    nn.utils.parametrize.remove_parametrizations(ours, "weight")
    torch.nn.utils.parametrize.remove_parametrizations(theirs, "weight")
    assert type(ours).__name__ == type(theirs).__name__ and list(ours.state_dict()) == list(theirs.state_dict())
    np.testing.assert_allclose(ours.weight.detach().numpy(), theirs.weight.detach().numpy(), atol=1e-12)


@pytest.mark.filterwarnings("ignore::FutureWarning")
@pytest.mark.parametrize("layer", ["linear", "conv1d"])
@pytest.mark.parametrize("dim", [0, 1, None])
def test_old_weight_norm_as_torch(layer, dim, rng):
    ours, shape = _layers(nn)[layer]
    theirs, _ = _layers(torch.nn)[layer]
    with pytest.warns(FutureWarning):
        nn.utils.weight_norm(ours, dim=dim)
    torch.nn.utils.weight_norm(theirs, dim=dim)
    assert_matches_torch(ours, theirs, lambda x: ours(x), lambda x: theirs(x), [rng.standard_normal(shape)])
    nn.utils.remove_weight_norm(ours)
    torch.nn.utils.remove_weight_norm(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    np.testing.assert_allclose(ours.weight.detach().numpy(), theirs.weight.detach().numpy(), atol=1e-12)


@pytest.mark.parametrize("layer", ["linear", "conv1d", "convT"])
@pytest.mark.parametrize("n_power_iterations", [1, 3])
def test_spectral_norm_as_torch_over_training_steps(layer, n_power_iterations, rng):
    ours, shape = _layers(nn)[layer]
    theirs, _ = _layers(torch.nn)[layer]
    nn.utils.parametrizations.spectral_norm(ours, n_power_iterations=n_power_iterations)
    torch.nn.utils.parametrizations.spectral_norm(theirs, n_power_iterations=n_power_iterations)
    x = rng.standard_normal(shape)
    for _ in range(2):  # (each training forward moves the power iteration's u and v)
        assert_matches_torch(ours, theirs, lambda x: ours(x), lambda x: theirs(x), [x])
    for k, v in theirs.state_dict().items():
        np.testing.assert_allclose(ours.state_dict()[k].detach().numpy(), v.detach().numpy(), atol=1e-10, err_msg=k)
    ours.eval(), theirs.eval()
    assert_matches_torch(ours, theirs, lambda x: ours(x), lambda x: theirs(x), [x])


class _Symmetric:
    """The upper triangle mirrored (PyTorch's tutorial parametrization), built for either library."""

    @staticmethod
    def make(m):
        class Symmetric(m.Module):
            def forward(self, x):
                return x.triu() + x.triu(1).mT

            def right_inverse(self, a):
                return a.triu()

        return Symmetric()


def test_custom_parametrization_assignment_cache_and_removal(rng):
    ours, theirs = nn.Linear(3, 3), torch.nn.Linear(3, 3)
    for lib, layer in ((nn, ours), (torch.nn, theirs)):
        lib.utils.parametrize.register_parametrization(layer, "weight", _Symmetric.make(lib))
    assert nn.utils.parametrize.is_parametrized(ours, "weight") and not nn.utils.parametrize.is_parametrized(
        ours, "bias"
    )
    assert nn.utils.parametrize.type_before_parametrizations(ours) is nn.Linear
    assert_matches_torch(ours, theirs, lambda x: ours(x), lambda x: theirs(x), [rng.standard_normal((2, 3))])
    w = ours.weight.detach().numpy()
    np.testing.assert_allclose(w, w.T)
    a = rng.standard_normal((3, 3))
    ours.weight = Tensor(a)  # (through right_inverse: the original holds the upper triangle)
    theirs.weight = torch.tensor(a)
    np.testing.assert_allclose(ours.parametrizations.weight.original.detach().numpy(), np.triu(a))
    np.testing.assert_allclose(ours.weight.detach().numpy(), theirs.weight.detach().numpy())
    with nn.utils.parametrize.cached():
        assert ours.weight is ours.weight
    assert ours.weight is not ours.weight
    nn.utils.parametrize.remove_parametrizations(ours, "weight", leave_parametrized=False)
    torch.nn.utils.parametrize.remove_parametrizations(theirs, "weight", leave_parametrized=False)
    assert type(ours) is nn.Linear and list(ours.state_dict()) == list(theirs.state_dict())
    np.testing.assert_allclose(ours.weight.detach().numpy(), np.triu(a))


def test_parametrization_that_changes_the_shape_needs_unsafe():
    class Flat(nn.Module):
        def forward(self, x):
            return x.reshape(-1)

    with pytest.raises(ValueError, match="unsafe=True"):
        nn.utils.parametrize.register_parametrization(nn.Linear(2, 3), "weight", Flat())
    layer = nn.utils.parametrize.register_parametrization(nn.Linear(2, 3), "weight", Flat(), unsafe=True)
    assert layer.weight.shape == (6,)
    with pytest.raises(ValueError):
        nn.utils.parametrize.register_parametrization(nn.Linear(2, 3), "nothing", Flat())


@pytest.mark.parametrize("kind", ["conv1d", "conv2d", "convT", "linear"])
@pytest.mark.parametrize("bias", [True, False])
def test_fuse_batch_norm_as_torch(kind, bias, rng):
    def build(m):
        layer = {
            "conv1d": lambda: m.Conv1d(2, 3, 2, bias=bias),
            "conv2d": lambda: m.Conv2d(2, 3, 2, bias=bias),
            "convT": lambda: m.ConvTranspose1d(2, 3, 2, bias=bias),
            "linear": lambda: m.Linear(2, 3, bias=bias),
        }
        bn = m.BatchNorm2d(3) if kind == "conv2d" else m.BatchNorm1d(3)
        return layer[kind](), bn  # fmt: skip

    (lo, bo), (lt, bt) = build(nn), build(torch.nn)
    with torch.no_grad():
        for t in list(lt.parameters()) + list(bt.parameters()) + [bt.running_mean]:
            t.normal_()
        bt.running_var.uniform_(0.5, 2.0)
    lt.double(), bt.double()
    lo.load_state_dict({k: v.detach().numpy() for k, v in lt.state_dict().items()})
    bo.load_state_dict({k: v.detach().numpy() for k, v in bt.state_dict().items()})
    lo.double(), bo.double()
    for m in (lo, bo, lt, bt):
        m.eval()
    if kind == "linear":
        fo, ft = nn.utils.fuse_linear_bn_eval(lo, bo), torch.nn.utils.fuse_linear_bn_eval(lt, bt)
    else:
        fo = nn.utils.fuse_conv_bn_eval(lo, bo, transpose=kind == "convT")
        ft = torch.nn.utils.fuse_conv_bn_eval(lt, bt, transpose=kind == "convT")
    shape = {"conv1d": (2, 2, 5), "conv2d": (2, 2, 4, 4), "convT": (2, 2, 4), "linear": (4, 2)}[kind]
    x = rng.standard_normal(shape)
    np.testing.assert_allclose(fo(Tensor(x)).detach().numpy(), ft(torch.tensor(x)).detach().numpy(), atol=1e-10)
    np.testing.assert_allclose(fo(Tensor(x)).detach().numpy(), bo(lo(Tensor(x))).detach().numpy(), atol=1e-10)
    assert fo is not lo and list(fo.state_dict()) == list(ft.state_dict())
    with pytest.raises(AssertionError):
        (nn.utils.fuse_linear_bn_eval if kind == "linear" else nn.utils.fuse_conv_bn_eval)(lo.train(), bo)
