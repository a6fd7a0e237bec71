"""``nn.AdaptiveLogSoftmaxWithLoss`` and ``nn.CrossMapLRN2d`` against PyTorch: parameters as
PyTorch draws them, outputs and gradients with the same weights, ``log_prob``/``predict``,
reprs and errors."""

from __future__ import annotations

import numpy as np
import pytest
from torch_oracle import assert_matches_torch

import tinygrad_attn as tga
from tinygrad_attn import nn

torch = pytest.importorskip("torch")
# (a tail's hidden size rounds down to 0 for small in_features: PyTorch warns that it initialises nothing)
pytestmark = pytest.mark.filterwarnings("ignore:Initializing zero-element tensors")

ASM = [
    dict(in_features=8, n_classes=10, cutoffs=[3, 6]),
    dict(in_features=8, n_classes=10, cutoffs=[3, 6], div_value=2.0, head_bias=True),
    dict(in_features=16, n_classes=7, cutoffs=[2], div_value=1.0),
    dict(in_features=5, n_classes=20, cutoffs=(4, 9, 15)),
]


@pytest.mark.parametrize("kw", ASM, ids=str)
@pytest.mark.parametrize("seed", [0, 5])
def test_adaptive_log_softmax_initialises_as_pytorchs(kw, seed):
    torch.manual_seed(seed)
    theirs = torch.nn.AdaptiveLogSoftmaxWithLoss(**kw)
    tga.manual_seed(seed)
    ours = nn.AdaptiveLogSoftmaxWithLoss(**kw)
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    for (n, p), (_, q) in zip(ours.named_parameters(), theirs.named_parameters()):
        np.testing.assert_array_equal(p.detach().numpy(), q.detach().numpy(), err_msg=n)
    assert repr(ours) == repr(theirs)
    for attr in ("cutoffs", "shortlist_size", "n_clusters", "head_size", "div_value", "head_bias"):
        assert getattr(ours, attr) == getattr(theirs, attr), attr


@pytest.mark.parametrize("kw", ASM, ids=str)
def test_adaptive_log_softmax_forward_matches_pytorch(kw, rng):
    ours, theirs = nn.AdaptiveLogSoftmaxWithLoss(**kw), torch.nn.AdaptiveLogSoftmaxWithLoss(**kw)
    n = kw["n_classes"]
    target = np.concatenate([np.arange(n), rng.integers(0, n, 5)])  # every class, some twice
    x = rng.standard_normal((len(target), kw["in_features"]))
    assert_matches_torch(ours, theirs, lambda x: tuple(ours(x, tga.tensor(target))),
                         lambda x: tuple(theirs(x, torch.tensor(target))), [x])  # fmt: skip
    out = ours(tga.tensor(x), tga.tensor(target))
    assert type(out).__name__ == "_ASMoutput" and out._fields == ("output", "loss")
    assert out.output is out[0] and out.loss is out[1]
    # one example: (in_features,) and a 0-d target
    t1 = theirs(torch.tensor(x[0]), torch.tensor(target[3]))
    o1 = ours(tga.tensor(x[0]), tga.tensor(target[3]))
    assert o1.output.shape == tuple(t1.output.shape) == ()
    np.testing.assert_allclose(o1.output.detach().numpy(), t1.output.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(o1.loss.detach().numpy(), t1.loss.detach().numpy(), rtol=1e-12)


@pytest.mark.parametrize("kw", ASM, ids=str)
def test_adaptive_log_softmax_log_prob_and_predict_match_pytorch(kw, rng):
    ours, theirs = nn.AdaptiveLogSoftmaxWithLoss(**kw), torch.nn.AdaptiveLogSoftmaxWithLoss(**kw)
    x = rng.standard_normal((12, kw["in_features"])) * 3
    assert_matches_torch(ours, theirs, lambda x: ours.log_prob(x), lambda x: theirs.log_prob(x), [x])
    np.testing.assert_array_equal(
        ours.predict(tga.tensor(x)).detach().numpy(), theirs.predict(torch.tensor(x)).detach().numpy()
    )
    np.testing.assert_allclose(np.exp(ours.log_prob(tga.tensor(x)).detach().numpy()).sum(1), 1.0, rtol=1e-12)
    # every class predicted somewhere: a head that favours each cluster in turn
    with torch.no_grad():
        theirs.head.weight.zero_()
    ours.load_state_dict({k: v.detach().numpy() for k, v in theirs.state_dict().items()})
    np.testing.assert_array_equal(
        ours.predict(tga.tensor(x)).detach().numpy(), theirs.predict(torch.tensor(x)).detach().numpy()
    )


@pytest.mark.parametrize(
    "kw",
    [dict(cutoffs=[]), dict(cutoffs=[5, 3]), dict(cutoffs=[0, 3]), dict(cutoffs=[3, 10]), dict(cutoffs=[3, 3]),
     dict(cutoffs=[2.5])],
)  # fmt: skip
def test_adaptive_log_softmax_refuses_pytorchs_bad_cutoffs(kw):
    for lib in (torch.nn, nn):
        with pytest.raises(ValueError, match="cutoffs should be a sequence"):
            lib.AdaptiveLogSoftmaxWithLoss(8, 10, **kw)


@pytest.mark.parametrize(
    "x_shape,target",
    [((3, 8), [0, 1]), ((3, 2, 8), [0, 1, 2]), ((8,), [1]), ((3, 8), [[1]]), ((2, 8), [0, 10]), ((2, 8), [-1, 0])],
)
def test_adaptive_log_softmax_refuses_pytorchs_bad_inputs(x_shape, target):
    theirs_m, ours_m = torch.nn.AdaptiveLogSoftmaxWithLoss(8, 10, [3]), nn.AdaptiveLogSoftmaxWithLoss(8, 10, [3])
    with pytest.raises(RuntimeError) as theirs:
        theirs_m(torch.zeros(x_shape), torch.tensor(target))
    with pytest.raises(RuntimeError) as ours:
        ours_m(tga.zeros(x_shape), tga.tensor(target))
    assert str(theirs.value).split(",")[0].split("[")[0] in str(ours.value)


# -- CrossMapLRN2d ------------------------------------------------------------------------------
@pytest.mark.parametrize("size", [1, 2, 3, 4, 5, 7])
@pytest.mark.parametrize("channels", [1, 2, 3, 6, 9])
def test_cross_map_lrn2d_forward_is_pytorchs(size, channels, rng):
    x = rng.standard_normal((2, channels, 3, 4))
    kw = dict(alpha=0.3, beta=0.6, k=1.5)
    want = torch.nn.CrossMapLRN2d(size, **kw)(torch.tensor(x)).detach().numpy()
    np.testing.assert_allclose(
        nn.CrossMapLRN2d(size, **kw)(tga.tensor(x)).detach().numpy(), want, rtol=1e-12, atol=1e-14
    )


@pytest.mark.parametrize("size,channels", [(3, 6), (5, 4), (2, 3)])
def test_cross_map_lrn2d_gradient_is_the_derivative_of_its_forward(size, channels, rng):
    # (PyTorch's hand-written backward is not: torch.autograd.gradcheck fails on it, so the
    # reviewed difference is that ours is the true gradient, held to finite differences)
    x = rng.standard_normal((2, channels, 2, 3))
    m = nn.CrossMapLRN2d(size, 0.5, 0.75, 1.0)
    assert tga.gradcheck(lambda x: m(x), x)
    xt = torch.tensor(x, requires_grad=True)
    assert not torch.autograd.gradcheck(torch.nn.CrossMapLRN2d(size, 0.5, 0.75, 1.0), xt, raise_exception=False)


def test_cross_map_lrn2d_repr_and_errors_are_pytorchs():
    assert repr(nn.CrossMapLRN2d(3)) == repr(torch.nn.CrossMapLRN2d(3))
    assert repr(nn.CrossMapLRN2d(5, 0.1, 0.5, 2.0)) == repr(torch.nn.CrossMapLRN2d(5, 0.1, 0.5, 2.0))
    with pytest.raises(ValueError, match="Expected input to be 4D, got 3D instead"):
        torch.nn.CrossMapLRN2d(3)(torch.zeros(2, 3, 4))
    with pytest.raises(ValueError, match="Expected input to be 4D, got 3D instead"):
        nn.CrossMapLRN2d(3)(tga.zeros(2, 3, 4))
