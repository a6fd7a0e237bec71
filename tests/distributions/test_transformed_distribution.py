"""``TransformedDistribution`` and ``distributions.transforms`` against PyTorch: every transform's
map, inverse and log-Jacobian over generated values (and the gradients of the log-Jacobian);
chains of transforms over scalar and vector bases (a ``tanh``-squashed Gaussian policy, an affine
flow over an ``Independent`` normal, ``LogNormal`` by hand) by their shapes, support,
log-densities and gradients, cdf/icdf, and samples, which are PyTorch's under one seed."""

from __future__ import annotations

import numpy as np
import pytest

import tinygrad_attn as tga
import tinygrad_attn.distributions as D

torch = pytest.importorskip("torch")
TD = torch.distributions


def _close(a, b, what, tol=1e-10):
    b = b.detach().double().detach().numpy() if hasattr(b, "detach") else np.asarray(b, dtype=float)
    np.testing.assert_allclose(np.asarray(a.tolist(), dtype=float), b, rtol=tol, atol=tol, err_msg=what)


# name -> (a maker for either library's module of distributions, a draw of inputs in its domain)
TRANSFORMS = {
    "exp": (lambda M, lib: M.ExpTransform(), lambda rng, s: rng.standard_normal(s)),
    "sigmoid": (lambda M, lib: M.SigmoidTransform(), lambda rng, s: rng.standard_normal(s) * 3),
    "tanh": (lambda M, lib: M.TanhTransform(), lambda rng, s: rng.standard_normal(s) * 2),
    "softplus": (lambda M, lib: M.SoftplusTransform(), lambda rng, s: rng.standard_normal(s) * 3),
    "power": (
        lambda M, lib: M.PowerTransform(lib.tensor(2.5, dtype=lib.float64)),
        lambda rng, s: rng.uniform(0.2, 3, s),
    ),
    "affine-float": (lambda M, lib: M.AffineTransform(1.5, -2.0), lambda rng, s: rng.standard_normal(s)),
    "affine-tensor": (
        lambda M, lib: M.AffineTransform(
            lib.tensor([0.5, -1.0, 2.0], dtype=lib.float64), lib.tensor([2.0, 0.5, -3.0], dtype=lib.float64)
        ),  # fmt: skip
        lambda rng, s: rng.standard_normal((*s, 3)),
    ),
    "affine-event": (
        lambda M, lib: M.AffineTransform(
            lib.tensor([0.5, -1.0, 2.0], dtype=lib.float64),
            lib.tensor([2.0, 0.5, -3.0], dtype=lib.float64),
            event_dim=1,
        ),  # fmt: skip
        lambda rng, s: rng.standard_normal((*s, 3)),
    ),
    "compose": (
        lambda M, lib: M.ComposeTransform(
            [M.AffineTransform(0.3, 2.0), M.TanhTransform(), M.AffineTransform(1.0, 0.5)]
        ),
        lambda rng, s: rng.standard_normal(s),
    ),
}


@pytest.mark.parametrize("name", list(TRANSFORMS))
@pytest.mark.parametrize("shape", [(), (4,), (2, 3)], ids=str)
def test_each_transform_maps_inverts_and_has_pytorchs_log_jacobian(name, shape):
    make, draw = TRANSFORMS[name]
    x = draw(np.random.default_rng(0), shape)
    ours, theirs = make(D, tga), make(TD, torch)
    ox, tx = tga.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    oy, ty = ours(ox), theirs(tx)
    _close(oy, ty, "y")
    _close(ours.inv(oy.detach()), theirs.inv(ty.detach()), "inverse")
    _close(ours.inv(oy.detach()), x, "inverse of the map")
    oj, tj = ours.log_abs_det_jacobian(ox, oy), theirs.log_abs_det_jacobian(tx, ty)
    assert tuple(oj.shape) == tuple(tj.shape)
    _close(oj, tj, "log|det J|")
    _close(ours.inv.log_abs_det_jacobian(oy, ox), theirs.inv.log_abs_det_jacobian(ty, tx), "inverse's log|det J|")
    assert oj.requires_grad == tj.requires_grad  # (an affine map's constant log-Jacobian has no graph)
    if tj.requires_grad:
        oj.sum().backward()
        tj.sum().backward()
        _close(ox.grad, tx.grad, "d log|det J| / dx")
    assert ours.bijective == theirs.bijective
    assert ours.domain.event_dim == theirs.domain.event_dim and ours.codomain.event_dim == theirs.codomain.event_dim
    assert ours.inv.inv is ours and ours == ours and ours.inv == ours.inv


def _bases(M, lib, kind, batch):
    rng = np.random.default_rng(1)
    if kind == "vector":
        loc, scale = rng.standard_normal((*batch, 3)), rng.uniform(0.5, 1.5, (*batch, 3))
        leaves = [lib.tensor(loc, requires_grad=True), lib.tensor(scale, requires_grad=True)]
        return M.Independent(M.Normal(*leaves), 1), leaves
    loc, scale = rng.standard_normal(batch or ()), rng.uniform(0.5, 1.5, batch or ())
    leaves = [lib.tensor(loc, requires_grad=True), lib.tensor(scale, requires_grad=True)]
    return M.Normal(*leaves), leaves


# (base kind, transforms): a squashed policy, an affine-sigmoid chain, lognormal by hand, a flow over vectors
CHAINS = {
    "tanh-policy": ("scalar", lambda M, lib: [M.TanhTransform()]),
    "affine-sigmoid": ("scalar", lambda M, lib: [M.AffineTransform(0.5, 2.0), M.SigmoidTransform()]),
    "lognormal": ("scalar", lambda M, lib: M.ExpTransform()),
    "decreasing": ("scalar", lambda M, lib: [M.AffineTransform(1.0, -3.0), M.ExpTransform()]),
    "vector-flow": (
        "vector",
        lambda M, lib: [
            M.AffineTransform(
                lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64),
                lib.tensor([0.5, 2.0, 1.5], dtype=lib.float64),
                event_dim=1,
            ),
            M.TanhTransform(),
        ],
    ),  # fmt: skip
}


def _pair(chain, batch):
    kind, make = CHAINS[chain]
    ob, ol = _bases(D, tga, kind, batch)
    tb, tl = _bases(TD, torch, kind, batch)
    return D.TransformedDistribution(ob, make(D, tga)), TD.TransformedDistribution(tb, make(TD, torch)), ol, tl


@pytest.mark.parametrize("chain", list(CHAINS))
@pytest.mark.parametrize("batch", [(), (2,), (3, 2)], ids=str)
def test_log_prob_and_its_gradients_are_pytorchs(chain, batch):
    ours, theirs, ol, tl = _pair(chain, batch)
    assert tuple(ours.batch_shape) == tuple(theirs.batch_shape)
    assert tuple(ours.event_shape) == tuple(theirs.event_shape)
    assert ours.has_rsample == theirs.has_rsample
    torch.manual_seed(2)
    value = theirs.sample((4,)).detach()
    assert bool(ours.support.check(tga.tensor(value.detach().numpy())).all())
    _close(ours.log_prob(tga.tensor(value.detach().numpy())), theirs.log_prob(value), "log_prob", tol=1e-8)
    ours.log_prob(tga.tensor(value.detach().numpy())).sum().backward()
    theirs.log_prob(value).sum().backward()
    for o, t in zip(ol, tl):
        _close(o.grad, t.grad, "d log_prob / d parameter", tol=1e-8)


@pytest.mark.parametrize("chain", [c for c in CHAINS if CHAINS[c][0] == "scalar"])
def test_cdf_and_icdf_are_pytorchs(chain):
    ours, theirs, _, _ = _pair(chain, (2,))
    torch.manual_seed(3)
    value = theirs.sample((5,)).detach()
    _close(ours.cdf(tga.tensor(value.detach().numpy())), theirs.cdf(value), "cdf", tol=1e-8)
    q = np.linspace(0.1, 0.9, 5).reshape(5, 1).repeat(2, 1)
    _close(ours.icdf(tga.tensor(q)), theirs.icdf(torch.tensor(q)), "icdf", tol=1e-8)


@pytest.mark.parametrize("chain", list(CHAINS))
@pytest.mark.parametrize("sample_shape", [(), (5,), (2, 3)], ids=str)
def test_samples_and_rsamples_are_pytorchs_under_one_seed(chain, sample_shape):
    ours, theirs, ol, tl = _pair(chain, (2,))
    tga.manual_seed(4)
    torch.manual_seed(4)
    s, t = ours.sample(sample_shape), theirs.sample(sample_shape)
    assert tuple(s.shape) == tuple(t.shape) and not s.requires_grad
    _close(s, t, "sample")
    r, tr = ours.rsample(sample_shape), theirs.rsample(sample_shape)
    _close(r, tr, "rsample")
    r.sum().backward()
    tr.sum().backward()
    for o, t in zip(ol, tl):
        _close(o.grad, t.grad, "d rsample / d parameter")


def test_expand_keeps_the_transforms():
    ours, theirs, _, _ = _pair("affine-sigmoid", (2,))
    e, t = ours.expand((4, 2)), theirs.expand((4, 2))
    assert tuple(e.batch_shape) == tuple(t.batch_shape) == (4, 2)
    value = torch.full((4, 2), 0.3, dtype=torch.float64)
    _close(e.log_prob(tga.tensor(value.detach().numpy())), t.log_prob(value), "log_prob after expand")


@pytest.mark.parametrize("bad", ["a string", [1, 2]], ids=["string", "list of ints"])
def test_transforms_that_are_not_transforms_are_refused_as_pytorch_refuses(bad):
    with pytest.raises(ValueError):
        TD.TransformedDistribution(TD.Normal(0.0, 1.0), bad)
    with pytest.raises(ValueError):
        D.TransformedDistribution(D.Normal(0.0, 1.0), bad)
