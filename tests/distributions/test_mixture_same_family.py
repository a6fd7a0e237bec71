"""``MixtureSameFamily`` and ``LogNormal`` against ``torch.distributions``: mixtures of generated
components (scalar and vector events, batch shapes that broadcast, probs and logits weights) by
their shapes, moments, log-densities and their gradients, cdf, and by their samples, which are
PyTorch's under one seed (both libraries draw with mt19937 in the same order: the component index,
then every component); the constructor's errors are PyTorch's."""

from __future__ import annotations

import numpy as np
import pytest

import tinygrad_attn as tga
import tinygrad_attn.distributions as D

torch = pytest.importorskip("torch")
TD = torch.distributions


def _close(a, b, what, tol=1e-10):
    b = b.detach().double().detach().numpy()
    np.testing.assert_allclose(np.asarray(a.tolist(), dtype=float), b, rtol=tol, atol=tol, err_msg=what)


# (component family, event axes of one component, whether the weights are logits)
KINDS = [("Normal", 0, True), ("Normal", 0, False), ("Laplace", 0, True), ("IndependentNormal", 1, True),
         ("MultivariateNormal", 1, False)]  # fmt: skip
BATCHES = [(), (2,), (3, 2)]


def _build(lib, kind, batch, k=3, seed=0):
    """The same mixture in ``lib`` (``tga`` or ``torch``) from one NumPy draw; its leaf tensors too."""
    family, _, logits = kind
    rng = np.random.default_rng(seed)
    dist = D if lib is tga else TD
    leaves = {"w": rng.standard_normal((*batch, k)) if logits else rng.uniform(0.1, 1.0, (*batch, k))}
    if family == "MultivariateNormal":
        a = rng.standard_normal((*batch, k, 2, 2))
        leaves["loc"] = rng.standard_normal((*batch, k, 2))
        leaves["cov"] = a @ np.swapaxes(a, -1, -2) + np.eye(2)
    else:
        shape = (*batch, k, 2) if family == "IndependentNormal" else (*batch, k)
        leaves["loc"], leaves["scale"] = rng.standard_normal(shape), rng.uniform(0.5, 2.0, shape)
    t = {n: lib.tensor(v, dtype=lib.float64, requires_grad=True) for n, v in leaves.items()}
    mix = dist.Categorical(logits=t["w"]) if logits else dist.Categorical(probs=t["w"])
    if family == "MultivariateNormal":
        comp = dist.MultivariateNormal(t["loc"], covariance_matrix=t["cov"])
    elif family == "IndependentNormal":
        comp = dist.Independent(dist.Normal(t["loc"], t["scale"]), 1)
    else:
        comp = getattr(dist, family)(t["loc"], t["scale"])
    return dist.MixtureSameFamily(mix, comp), t


@pytest.mark.parametrize("kind", KINDS, ids=lambda k: f"{k[0]}-{'logits' if k[2] else 'probs'}")
@pytest.mark.parametrize("batch", BATCHES, ids=str)
def test_moments_log_prob_and_gradients_are_pytorchs(kind, batch):
    ours, ot = _build(tga, kind, batch)
    theirs, tt = _build(torch, kind, batch)
    assert tuple(ours.batch_shape) == tuple(theirs.batch_shape)
    assert tuple(ours.event_shape) == tuple(theirs.event_shape)
    _close(ours.mean, theirs.mean, "mean")
    _close(ours.variance, theirs.variance, "variance")
    torch.manual_seed(3)
    value = theirs.sample((4,)).detach()
    _close(ours.log_prob(tga.tensor(value.detach().numpy())), theirs.log_prob(value), "log_prob")
    ours.log_prob(tga.tensor(value.detach().numpy())).sum().backward()
    theirs.log_prob(value).sum().backward()
    for name in ot:
        _close(ot[name].grad, tt[name].grad, f"d log_prob / d {name}")
    if kind[1] == 0:
        _close(ours.cdf(tga.tensor(value.detach().numpy())), theirs.cdf(value), "cdf")


@pytest.mark.parametrize("kind", KINDS, ids=lambda k: f"{k[0]}-{'logits' if k[2] else 'probs'}")
@pytest.mark.parametrize("sample_shape", [(), (5,), (2, 3)], ids=str)
def test_samples_are_pytorchs_under_one_seed(kind, sample_shape):
    ours, _ = _build(tga, kind, (2,))
    theirs, _ = _build(torch, kind, (2,))
    tga.manual_seed(11)
    torch.manual_seed(11)
    s, t = ours.sample(sample_shape), theirs.sample(sample_shape)
    assert tuple(s.shape) == tuple(t.shape) and not s.requires_grad
    _close(s, t, "sample", tol=1e-6 if kind[0] == "MultivariateNormal" else 1e-12)


def test_a_mixture_density_network_step_is_pytorchs():
    # the mixture density network of tutorials: a linear layer gives weights, means and scales
    rng = np.random.default_rng(1)
    x, y, w = rng.standard_normal((6, 2)), rng.standard_normal(6), rng.standard_normal((2, 9))
    losses = []
    for lib, dist in ((tga, D), (torch, TD)):
        weight = lib.tensor(w, requires_grad=True)
        out = lib.tensor(x) @ weight
        logits, mu, log_sigma = out[:, :3], out[:, 3:6], out[:, 6:]
        gmm = dist.MixtureSameFamily(dist.Categorical(logits=logits), dist.Normal(mu, log_sigma.exp()))
        loss = -gmm.log_prob(lib.tensor(y)).mean()
        loss.backward()
        losses.append((loss, weight.grad))
    _close(losses[0][0], losses[1][0], "loss")
    _close(losses[0][1], losses[1][1], "grad")


@pytest.mark.parametrize(
    "make",
    [
        lambda dist, lib: dist.MixtureSameFamily(dist.Normal(0.0, 1.0), dist.Normal(lib.zeros(2), lib.ones(2))),
        lambda dist, lib: dist.MixtureSameFamily(dist.Categorical(lib.ones(3)), dist.Normal(lib.zeros(2), lib.ones(2))),
        lambda dist, lib: dist.MixtureSameFamily(
            dist.Categorical(lib.ones(4, 2)), dist.Normal(lib.zeros(3, 2), lib.ones(3, 2))
        ),
        lambda dist, lib: dist.MixtureSameFamily(dist.Categorical(lib.ones(2)), "not a distribution"),
    ],
    ids=["mixture not categorical", "K differs", "batch shapes differ", "component not a distribution"],
)
def test_constructor_errors_are_pytorchs(make):
    with pytest.raises(Exception) as theirs:
        make(TD, torch)
    with pytest.raises(type(theirs.value)):
        make(D, tga)


def test_lognormal_samples_are_pytorchs_under_one_seed_and_exp_of_the_normals():
    loc, scale = np.array([0.0, 0.5, -1.0]), np.array([1.0, 0.3, 2.0])
    tga.manual_seed(5)
    torch.manual_seed(5)
    ours = D.LogNormal(tga.tensor(loc), tga.tensor(scale))
    theirs = TD.LogNormal(torch.tensor(loc), torch.tensor(scale))
    _close(ours.sample((4,)), theirs.sample((4,)), "sample")
    _close(ours.rsample((2,)), theirs.rsample((2,)), "rsample")
    tga.manual_seed(5)
    normal = D.Normal(tga.tensor(loc), tga.tensor(scale)).sample((4,))
    tga.manual_seed(5)
    _close(ours.sample((4,)), torch.tensor(normal.tolist(), dtype=torch.float64).exp(), "exp of the normal's draws")
    assert isinstance(ours.base_dist, D.Normal)
    assert ours.support.check(ours.sample((3,))).all()
