"""``F.fractional_max_pool2d/3d`` (and ``nn.FractionalMaxPool2d/3d``), ``F.pdist``,
``F.conv_tbc`` and ``F.assert_int_or_pair`` against PyTorch: values, indices, gradients
(also of second order), the generator's draws, and errors."""

from __future__ import annotations

import re

import numpy as np
import pytest

import tinygrad_attn as tga
import tinygrad_attn.functional as F
from tinygrad_attn import nn

torch = pytest.importorskip("torch")
TF = torch.nn.functional

# (nd, input shape, kernel, output_size or None, output_ratio or None)
FRACTIONAL = [
    (2, (2, 3, 9, 11), 2, (4, 5), None),
    (2, (2, 3, 9, 11), (3, 2), (7, 3), None),
    (2, (3, 10, 7), 3, None, (0.5, 0.7)),  # unbatched
    (2, (1, 2, 5, 5), 2, 4, None),  # windows overlap
    (2, (1, 1, 6, 6), 2, (1, 1), None),
    (2, (2, 1, 6, 6), 2, (0, 3), None),  # an empty output
    (3, (2, 2, 7, 6, 8), 2, (3, 4, 5), None),
    (3, (2, 6, 5, 7), (2, 3, 1), None, 0.5),  # unbatched
]


def _fractional(lib, nd):
    return getattr(lib.nn.functional if lib is torch else F, f"fractional_max_pool{nd}d")


@pytest.mark.parametrize("case", FRACTIONAL, ids=lambda c: f"{c[0]}d-{c[1]}-{c[2]}-{c[3]}-{c[4]}")
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_fractional_max_pool_with_given_samples_is_pytorchs(case, dtype, rng):
    nd, shape, k, out, ratio = case
    x = rng.standard_normal(shape).astype(dtype)
    nb = 1 if len(shape) == nd + 1 else shape[0]
    u = rng.random((nb, shape[-nd - 1], nd)).astype(dtype)
    xt = torch.tensor(x, requires_grad=True)
    ty, ti = _fractional(torch, nd)(xt, k, out, ratio, True, torch.tensor(u))
    xo = tga.tensor(x, requires_grad=True)
    oy, oi = _fractional(tga, nd)(xo, k, out, ratio, True, tga.tensor(u))
    np.testing.assert_array_equal(oy.detach().numpy(), ty.detach().numpy())
    np.testing.assert_array_equal(oi.detach().numpy(), ti.detach().numpy())
    assert oi.dtype == np.int64
    w = rng.standard_normal(tuple(ty.shape)).astype(dtype)
    (gt,) = torch.autograd.grad(ty, xt, torch.tensor(w))
    (go,) = tga.autograd.grad(oy, [xo], tga.tensor(w))
    np.testing.assert_allclose(go.detach().numpy(), gt.detach().numpy(), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("nd", [2, 3])
@pytest.mark.parametrize("seed", [0, 7])
def test_fractional_max_pool_draws_pytorchs_samples_from_the_generator(nd, seed, rng):
    x = rng.standard_normal((2, 3) + (9,) * nd).astype(np.float32)
    torch.manual_seed(seed)
    theirs = _fractional(torch, nd)(torch.tensor(x), 2, output_ratio=(0.5,) * nd, return_indices=True)
    tga.manual_seed(seed)
    ours = _fractional(tga, nd)(tga.tensor(x), 2, output_ratio=(0.5,) * nd, return_indices=True)
    for o, t in zip(ours, theirs):
        np.testing.assert_array_equal(o.detach().numpy(), t.detach().numpy())
    np.testing.assert_array_equal(
        tga.rand(4).detach().numpy(), torch.rand(4).detach().numpy()
    )  # no draw more, none less


@pytest.mark.parametrize("nd", [2, 3])
def test_fractional_max_pool_gradcheck(nd, rng):
    x = rng.standard_normal((1, 2) + (6,) * nd)
    u = tga.tensor(rng.random((1, 2, nd)))
    assert tga.gradcheck(lambda x: _fractional(tga, nd)(x, 2, output_size=3, _random_samples=u), x)
    xt = torch.tensor(x, requires_grad=True)
    xo = tga.tensor(x, requires_grad=True)
    yt = _fractional(torch, nd)(xt, 2, output_size=3, _random_samples=torch.tensor(u.detach().numpy()))
    yo = _fractional(tga, nd)(xo, 2, output_size=3, _random_samples=u)
    (gt,) = torch.autograd.grad((yt**2).sum(), xt, create_graph=True)
    (go,) = tga.autograd.grad((yo**2).sum(), xo, create_graph=True)
    (ggt,) = torch.autograd.grad(gt.sum(), xt)
    (ggo,) = tga.autograd.grad(go.sum(), xo)
    np.testing.assert_allclose(ggo.detach().numpy(), ggt.detach().numpy(), atol=1e-12)


@pytest.mark.parametrize(
    "call",
    [
        lambda lib, x, u: _fractional(lib, 2)(x, 2),
        lambda lib, x, u: _fractional(lib, 2)(x, 2, output_size=(11, 3)),
        lambda lib, x, u: _fractional(lib, 2)(x, 2, output_size=(4, 4), _random_samples=u[:, :1]),
        lambda lib, x, u: _fractional(lib, 2)(x, 2, output_size=(4, 4), _random_samples=u.float()),
    ],
    ids=["no-size", "too-large", "samples-channels", "samples-dtype"],
)
def test_fractional_max_pool_refuses_what_pytorch_refuses(call, rng):
    x, u = rng.standard_normal((1, 2, 10, 10)), rng.random((1, 2, 2))
    with pytest.raises(Exception) as theirs:
        call(torch, torch.tensor(x), torch.tensor(u))
    with pytest.raises(type(theirs.value)) as ours:
        call(tga, tga.tensor(x), tga.tensor(u))
    assert str(theirs.value).split("(")[0][:30] in str(ours.value) or type(theirs.value) is RuntimeError


@pytest.mark.parametrize(
    "kw",
    [
        {"kernel_size": 3, "output_size": 4},
        {"kernel_size": (2, 3), "output_ratio": (0.5, 0.6), "return_indices": True},
        {"kernel_size": 2, "output_ratio": 0.5},
    ],
)
@pytest.mark.parametrize("nd", [2, 3])
def test_fractional_max_pool_modules_are_pytorchs(kw, nd, rng):
    kw = dict(kw)
    if nd == 3 and isinstance(kw["kernel_size"], tuple):
        kw["kernel_size"] = kw["kernel_size"] + (2,)
        kw["output_ratio"] = kw["output_ratio"] + (0.5,)
    name = f"FractionalMaxPool{nd}d"
    ours, theirs = getattr(nn, name)(**kw), getattr(torch.nn, name)(**kw)
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    for attr in ("kernel_size", "output_size", "output_ratio", "return_indices"):
        assert getattr(ours, attr) == getattr(theirs, attr), attr
    x = rng.standard_normal((2, 3) + (10,) * nd).astype(np.float32)
    torch.manual_seed(1)
    tga.manual_seed(1)
    ro, rt = ours(tga.tensor(x)), theirs(torch.tensor(x))
    ro, rt = (ro, rt) if isinstance(ro, tuple) else ((ro,), (rt,))
    for o, t in zip(ro, rt, strict=True):
        np.testing.assert_array_equal(o.detach().numpy(), t.detach().numpy())
    u = rng.random((2, 3, nd)).astype(np.float32)
    fixed_o = getattr(nn, name)(**kw, _random_samples=tga.tensor(u))
    fixed_t = getattr(torch.nn, name)(**kw, _random_samples=torch.tensor(u))
    assert list(fixed_o.state_dict()) == list(fixed_t.state_dict()) == ["_random_samples"]
    ro, rt = fixed_o(tga.tensor(x)), fixed_t(torch.tensor(x))
    ro, rt = (ro, rt) if isinstance(ro, tuple) else ((ro,), (rt,))
    for o, t in zip(ro, rt):
        np.testing.assert_array_equal(o.detach().numpy(), t.detach().numpy())


@pytest.mark.parametrize(
    "kw,error",
    [
        ({"kernel_size": 3}, "either an output size, or a pooling ratio"),
        ({"kernel_size": 3, "output_ratio": 1.5}, "output_ratio must be between 0 and 1"),
        ({"kernel_size": 3, "output_ratio": 0.5, "output_size": 3}, "only one of output_size and output_ratio"),
    ],
)
def test_fractional_max_pool_module_arguments_checked_as_pytorchs(kw, error):
    for lib in (torch.nn, nn):
        with pytest.raises(ValueError, match=error):
            lib.FractionalMaxPool2d(**kw)


# -- pdist ------------------------------------------------------------------------------------
@pytest.mark.parametrize("p", [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, float("inf")])
@pytest.mark.parametrize("n", [1, 2, 5])
def test_pdist_is_pytorchs(p, n, rng):
    x = rng.standard_normal((n, 4))
    x[-1] = x[0]  # a zero distance: gradient 0 there, as PyTorch's
    xt, xo = torch.tensor(x, requires_grad=True), tga.tensor(x, requires_grad=True)
    yt, yo = TF.pdist(xt, p), F.pdist(xo, p)
    np.testing.assert_allclose(yo.detach().numpy(), yt.detach().numpy(), rtol=1e-12, atol=1e-12)
    if yt.numel():
        w = rng.standard_normal(tuple(yt.shape))
        (gt,) = torch.autograd.grad(yt, xt, torch.tensor(w))
        (go,) = tga.autograd.grad(yo, xo, tga.tensor(w))
        np.testing.assert_allclose(go.detach().numpy(), gt.detach().numpy(), rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("p", [1.5, 2.0, 3.0])
def test_pdist_gradcheck(p, rng):
    assert tga.gradcheck(lambda x: F.pdist(x, p), rng.standard_normal((4, 3)))


@pytest.mark.parametrize(
    "x,p", [(np.zeros(3), 2.0), (np.zeros((2, 3, 4)), 2.0), (np.zeros((3, 2)), -1.0), (np.zeros((3, 2), np.int64), 2.0)]
)
def test_pdist_refuses_what_pytorch_refuses(x, p):
    with pytest.raises(RuntimeError) as theirs:
        TF.pdist(torch.tensor(x), p)
    with pytest.raises(RuntimeError, match=re.escape(str(theirs.value))):
        F.pdist(tga.tensor(x), p)


# -- conv_tbc -----------------------------------------------------------------------------------
@pytest.mark.parametrize("shape,k,pad", [((6, 2, 3), 3, 0), ((6, 2, 3), 3, 1), ((4, 1, 2), 1, 2), ((5, 3, 4), 5, 0)])
def test_conv_tbc_is_pytorchs(shape, k, pad, rng):
    t, b, c = shape
    arrays = [rng.standard_normal(shape), rng.standard_normal((k, c, 4)), rng.standard_normal(4)]
    ts = [torch.tensor(a, requires_grad=True) for a in arrays]
    os_ = [tga.tensor(a, requires_grad=True) for a in arrays]
    yt, yo = TF.conv_tbc(*ts, pad), F.conv_tbc(*os_, pad)
    np.testing.assert_allclose(yo.detach().numpy(), yt.detach().numpy(), rtol=1e-12, atol=1e-12)
    w = rng.standard_normal(tuple(yt.shape))
    gt = torch.autograd.grad(yt, ts, torch.tensor(w))
    go = tga.autograd.grad(yo, os_, tga.tensor(w))
    for o, t_ in zip(go, gt):
        np.testing.assert_allclose(o.detach().numpy(), t_.detach().numpy(), rtol=1e-10, atol=1e-10)
    assert tga.gradcheck(lambda x, w_, b_: F.conv_tbc(x, w_, b_, pad), *arrays)


@pytest.mark.parametrize(
    "shapes",
    [((6, 2), (3, 2, 4), (4,)), ((6, 2, 3), (3, 3), (4,)), ((6, 2, 3), (3, 3, 4), (4, 1)), ((6, 2, 3), (3, 2, 4), (4,)),
     ((6, 2, 3), (3, 3, 4), (5,))],
)  # fmt: skip
def test_conv_tbc_refuses_what_pytorch_refuses(shapes):
    with pytest.raises(RuntimeError) as theirs:
        TF.conv_tbc(*(torch.zeros(s) for s in shapes))
    with pytest.raises(RuntimeError, match=re.escape(str(theirs.value).split(".")[0][:25])):
        F.conv_tbc(*(tga.zeros(s) for s in shapes))


@pytest.mark.parametrize("arg", [3, (2, 3), [1, 2], (1, 2, 3), [4]])
def test_assert_int_or_pair_is_pytorchs(arg):
    def outcome(fn):
        try:
            fn(arg, "kernel_size", "{} must be int or 2-tuple for 4D input")
        except AssertionError as e:
            return str(e)
        return None

    assert outcome(F.assert_int_or_pair) == outcome(TF.assert_int_or_pair)
