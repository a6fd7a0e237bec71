"""``tga.distributions`` against ``torch.distributions``: for every family over generated
parameters (batch shapes, float32 and float64, probs and logits): shapes, moments, entropy,
log-densities (values and gradients), cdf/icdf, KL divergences, the argument and sample
validation errors; samples by their shapes, support and moments; reparameterised samples by
their gradients against finite differences (the same seed for each evaluation)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import tinygrad_attn as tga
import tinygrad_attn.distributions as D

torch = pytest.importorskip("torch")
TD = torch.distributions

SHAPES = [(), (3,), (2, 3)]


def _positive(rng, shape):
    return rng.uniform(0.5, 2.0, shape)


def _probs(rng, shape):
    return rng.uniform(0.1, 0.9, shape)


def _simplex(rng, shape):
    p = rng.uniform(0.1, 1.0, (*shape, 4))
    return p / p.sum(-1, keepdims=True)


def _covariance(rng, shape):
    a = rng.standard_normal((*shape, 3, 3))
    return a @ np.swapaxes(a, -1, -2) + np.eye(3)


# name -> (our class, PyTorch's, a draw of keyword parameters as NumPy arrays over a batch shape)
FAMILIES = {
    "Normal": (D.Normal, TD.Normal, lambda rng, s: {"loc": rng.standard_normal(s), "scale": _positive(rng, s)}),
    "Uniform": (D.Uniform, TD.Uniform, lambda rng, s: {"low": -_positive(rng, s), "high": _positive(rng, s)}),
    "Bernoulli-probs": (D.Bernoulli, TD.Bernoulli, lambda rng, s: {"probs": _probs(rng, s)}),
    "Bernoulli-logits": (D.Bernoulli, TD.Bernoulli, lambda rng, s: {"logits": rng.standard_normal(s)}),
    "Categorical-probs": (D.Categorical, TD.Categorical, lambda rng, s: {"probs": _simplex(rng, s)}),
    "Categorical-logits": (D.Categorical, TD.Categorical, lambda rng, s: {"logits": rng.standard_normal((*s, 4))}),
    "OneHotCategorical": (D.OneHotCategorical, TD.OneHotCategorical, lambda rng, s: {"probs": _simplex(rng, s)}),
    "Exponential": (D.Exponential, TD.Exponential, lambda rng, s: {"rate": _positive(rng, s)}),
    "Laplace": (D.Laplace, TD.Laplace, lambda rng, s: {"loc": rng.standard_normal(s), "scale": _positive(rng, s)}),
    "LogNormal": (
        D.LogNormal,
        TD.LogNormal,
        lambda rng, s: {"loc": rng.standard_normal(s), "scale": _positive(rng, s)},
    ),
    "MultivariateNormal-covariance": (
        D.MultivariateNormal,
        TD.MultivariateNormal,
        lambda rng, s: {"loc": rng.standard_normal((*s, 3)), "covariance_matrix": _covariance(rng, s)},
    ),
    "MultivariateNormal-precision": (
        D.MultivariateNormal,
        TD.MultivariateNormal,
        lambda rng, s: {"loc": rng.standard_normal((*s, 3)), "precision_matrix": _covariance(rng, s)},
    ),
    "MultivariateNormal-scale_tril": (
        D.MultivariateNormal,
        TD.MultivariateNormal,
        lambda rng, s: {"loc": rng.standard_normal((*s, 3)), "scale_tril": np.linalg.cholesky(_covariance(rng, s))},
    ),
}


def _pair(name, shape, dtype, requires_grad=False, seed=0):
    ours_cls, theirs_cls, draw = FAMILIES[name]
    params = draw(np.random.default_rng(seed), shape)
    ours = {k: tga.tensor(v.astype(dtype), requires_grad=requires_grad) for k, v in params.items()}
    theirs = {k: torch.tensor(v.astype(dtype), requires_grad=requires_grad) for k, v in params.items()}
    return ours_cls(**ours), theirs_cls(**theirs), ours, theirs


def _close(a, b, dtype, what):
    tol = 1e-5 if dtype == "float32" else 1e-12
    b = b.detach().double().detach().numpy()
    np.testing.assert_allclose(np.asarray(a.tolist(), dtype=float), b, rtol=tol, atol=tol, equal_nan=True, err_msg=what)


CASES = [(n, s, d) for n in FAMILIES for s in SHAPES for d in ("float32", "float64")]


@pytest.mark.parametrize("name, shape, dtype", CASES)
def test_shapes_moments_and_entropy_are_pytorchs(name, shape, dtype):
    ours, theirs, _, _ = _pair(name, shape, dtype)
    assert tuple(ours.batch_shape) == tuple(theirs.batch_shape)
    assert tuple(ours.event_shape) == tuple(theirs.event_shape)
    for what in ("mean", "variance", "stddev", "mode"):
        _close(getattr(ours, what), getattr(theirs, what), dtype, what)
    _close(ours.entropy(), theirs.entropy(), dtype, "entropy")
    _close(ours.perplexity(), theirs.perplexity(), dtype, "perplexity")
    assert ours.has_rsample == theirs.has_rsample
    assert ours.has_enumerate_support == theirs.has_enumerate_support
    if theirs.has_enumerate_support:
        for expand in (True, False):
            _close(ours.enumerate_support(expand), theirs.enumerate_support(expand), dtype, "support")


@pytest.mark.parametrize("name, shape, dtype", CASES)
def test_log_prob_cdf_and_their_gradients_are_pytorchs(name, shape, dtype):
    ours, theirs, our_params, their_params = _pair(name, shape, dtype, requires_grad=True)
    torch.manual_seed(1)
    value = theirs.sample((5,))
    _close(ours.log_prob(tga.tensor(value.detach().numpy())), theirs.log_prob(value), dtype, "log_prob")
    ours.log_prob(tga.tensor(value.detach().numpy())).sum().backward()
    theirs.log_prob(value).sum().backward()
    for k in our_params:
        _close(our_params[k].grad, their_params[k].grad, dtype, f"d log_prob / d {k}")
    if name in ("Normal", "Uniform", "Exponential", "Laplace", "LogNormal"):
        _close(ours.cdf(tga.tensor(value.detach().numpy())), theirs.cdf(value), dtype, "cdf")
        q = np.linspace(0.05, 0.95, 5).reshape(5, *(1,) * len(shape)).astype(dtype)
        _close(ours.icdf(tga.tensor(q)), theirs.icdf(torch.tensor(q)), dtype, "icdf")


@pytest.mark.parametrize("name, shape, dtype", CASES)
def test_samples_have_pytorchs_shape_dtype_support_and_moments(name, shape, dtype):
    ours, theirs, _, _ = _pair(name, shape, dtype)
    for sample_shape in ((), (4,), (2, 3)):
        s, t = ours.sample(sample_shape), theirs.sample(sample_shape)
        assert tuple(s.shape) == tuple(t.shape), sample_shape
        assert str(s.dtype) == str(t.dtype), sample_shape
        assert not s.requires_grad
        assert bool(ours.support.check(s).all())
    if np.isnan(np.asarray(ours.mean.tolist())).any():
        return  # (a categorical's mean is NaN: its frequencies are checked below)
    many = ours.sample((20000,))
    mean = np.asarray(many.double().mean(0).tolist())
    err = np.sqrt(np.asarray(ours.variance.double().tolist()) / 20000)
    assert np.all(np.abs(mean - np.asarray(ours.mean.double().tolist())) <= 6 * err + 1e-9)


@pytest.mark.parametrize("name", ["Normal", "Uniform", "Exponential", "Laplace", "LogNormal"])
def test_rsample_is_differentiable_in_its_parameters(name):
    ours_cls, _, draw = FAMILIES[name]
    params = {k: tga.tensor(v, requires_grad=True) for k, v in draw(np.random.default_rng(3), (3,)).items()}
    names = list(params)

    def sample(*values):
        tga.manual_seed(7)  # the same noise at every evaluation: a function of the parameters alone
        return ours_cls(**dict(zip(names, values))).rsample((2,))

    assert tga.gradcheck(sample, *params.values())


def test_multivariate_normal_rsample_is_differentiable_in_loc_and_scale():
    rng = np.random.default_rng(4)
    loc, lower = tga.tensor(rng.standard_normal(3)), tga.tensor(np.linalg.cholesky(_covariance(rng, ())))

    def sample(loc, lower):
        tga.manual_seed(7)
        return D.MultivariateNormal(loc, scale_tril=lower.tril(), validate_args=False).rsample((2,))

    assert tga.gradcheck(sample, loc, lower)


def test_multivariate_normal_argument_errors_are_pytorchs():
    for m, dist in ((torch, TD), (tga, D)):
        with pytest.raises(ValueError):
            dist.MultivariateNormal(m.zeros(3))
        with pytest.raises(ValueError):
            dist.MultivariateNormal(m.zeros(3), m.eye(3), scale_tril=m.eye(3))
        with pytest.raises(ValueError):
            dist.MultivariateNormal(m.zeros(2), -m.eye(2))


def test_bernoulli_and_categorical_draw_their_probabilities():
    tga.manual_seed(0)
    probs = tga.tensor([0.1, 0.5, 0.9])
    draws = D.Bernoulli(probs).sample((40000,))
    np.testing.assert_allclose(draws.mean(0).detach().numpy(), probs.detach().numpy(), atol=0.02)
    p = tga.tensor([0.1, 0.2, 0.7])
    counts = np.bincount(D.Categorical(p).sample((40000,)).detach().numpy(), minlength=3) / 40000
    np.testing.assert_allclose(counts, p.detach().numpy(), atol=0.02)


KL_PAIRS = ["Normal", "LogNormal", "Uniform", "Bernoulli-probs", "Categorical-logits", "OneHotCategorical", "Exponential", "Laplace",
            "MultivariateNormal-covariance", "MultivariateNormal-scale_tril"]  # fmt: skip


@pytest.mark.parametrize("name", KL_PAIRS)
@pytest.mark.parametrize("shape", [(), (3,)])
def test_kl_divergence_is_pytorchs(name, shape):
    p, tp, _, _ = _pair(name, shape, "float64", seed=1)
    q, tq, _, _ = _pair(name, shape, "float64", seed=2)
    _close(D.kl_divergence(p, q), TD.kl_divergence(tp, tq), "float64", "kl")
    _close(D.kl_divergence(p, p), TD.kl_divergence(tp, tp), "float64", "kl(p, p)")


def test_kl_of_independent_normals_and_independent_log_prob():
    rng = np.random.default_rng(0)
    loc, scale = rng.standard_normal((2, 3)), rng.uniform(0.5, 2, (2, 3))
    ours = D.Independent(D.Normal(tga.tensor(loc), tga.tensor(scale)), 1)
    theirs = TD.Independent(TD.Normal(torch.tensor(loc), torch.tensor(scale)), 1)
    assert tuple(ours.batch_shape) == (2,) and tuple(ours.event_shape) == (3,)
    value = theirs.sample((4,))
    _close(ours.log_prob(tga.tensor(value.detach().numpy())), theirs.log_prob(value), "float64", "log_prob")
    _close(ours.entropy(), theirs.entropy(), "float64", "entropy")
    other = D.Independent(D.Normal(tga.tensor(loc + 1), tga.tensor(scale)), 1)
    their_other = TD.Independent(TD.Normal(torch.tensor(loc + 1), torch.tensor(scale)), 1)
    _close(D.kl_divergence(ours, other), TD.kl_divergence(theirs, their_other), "float64", "kl")


def test_register_kl_takes_the_most_specific_formula():
    class MyNormal(D.Normal):
        pass

    @D.register_kl(MyNormal, D.Normal)
    def _mine(p, q):
        return tga.tensor(42.0)

    assert float(D.kl_divergence(MyNormal(0.0, 1.0), D.Normal(0.0, 1.0))) == 42.0
    assert float(D.kl_divergence(D.Normal(0.0, 1.0), MyNormal(0.0, 1.0))) == 0.0
    with pytest.raises(NotImplementedError):
        D.kl_divergence(D.Normal(0.0, 1.0), D.Bernoulli(0.5))


@pytest.mark.parametrize(
    "make",
    [
        lambda m: m.Normal(m.tensor([0.0]), m.tensor([-1.0])),
        lambda m: m.Bernoulli(m.tensor([1.5])),
        lambda m: m.Bernoulli(m.tensor([0.5]), m.tensor([0.0])),
        lambda m: m.Bernoulli(),
        lambda m: m.Categorical(m.tensor([-0.5, 1.5])),
        lambda m: m.Exponential(m.tensor([0.0])),
        lambda m: m.Uniform(m.tensor([1.0]), m.tensor([0.0])),
        lambda m: m.Normal(m.tensor([0.0, 0.0]), m.tensor([1.0, 1.0])).log_prob(m.tensor([0.0, 1.0, 2.0])),
        lambda m: m.Bernoulli(m.tensor([0.5])).log_prob(m.tensor([0.5])),
        lambda m: m.Exponential(m.tensor([1.0])).log_prob(m.tensor([-1.0])),
        lambda m: m.Categorical(m.tensor([0.5, 0.5])).log_prob(m.tensor(2)),
    ],
)
def test_invalid_arguments_and_values_raise_as_pytorchs(make):
    class Ours:
        tensor = staticmethod(tga.tensor)

    class Theirs:
        tensor = staticmethod(torch.tensor)

    for name in ("Normal", "Bernoulli", "Categorical", "Exponential", "Uniform"):
        setattr(Ours, name, getattr(D, name))
        setattr(Theirs, name, getattr(TD, name))
    with pytest.raises(ValueError):
        make(Theirs)
    with pytest.raises(ValueError):
        make(Ours)


def test_validation_can_be_turned_off():
    d = D.Normal(tga.tensor([0.0]), tga.tensor([-1.0]), validate_args=False)
    with np.errstate(invalid="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # (log of a negative scale: NaN, as PyTorch's)
        assert np.isnan(d.log_prob(tga.tensor([0.0])).detach().numpy()).all()
    D.Distribution.set_default_validate_args(False)
    try:
        D.Normal(tga.tensor([0.0]), tga.tensor([-1.0]))
    finally:
        D.Distribution.set_default_validate_args(True)


def test_expand_is_pytorchs():
    ours, theirs, _, _ = _pair("Normal", (3,), "float64")
    e, t = ours.expand((2, 3)), theirs.expand((2, 3))
    assert tuple(e.batch_shape) == tuple(t.batch_shape) == (2, 3)
    _close(e.log_prob(tga.zeros(2, 3, dtype=tga.float64)), t.log_prob(torch.zeros(2, 3, dtype=torch.float64)),
           "float64", "expanded")  # fmt: skip
    c, tc, _, _ = _pair("Categorical-probs", (3,), "float64")
    assert tuple(c.expand((2, 3)).batch_shape) == tuple(tc.expand((2, 3)).batch_shape)


def test_a_policy_gradient_step_runs_as_pytorchs():
    # REINFORCE as tutorials write it: log_prob of sampled actions times a return, backward
    rng = np.random.default_rng(0)
    w = rng.standard_normal((4, 3))
    obs = rng.standard_normal((5, 4))
    actions = np.array([0, 2, 1, 1, 0])
    ret = rng.standard_normal(5)
    ow, tw = tga.tensor(w, requires_grad=True), torch.tensor(w, requires_grad=True)
    loss = -(D.Categorical(logits=tga.tensor(obs) @ ow).log_prob(tga.tensor(actions)) * tga.tensor(ret)).mean()
    their = -(TD.Categorical(logits=torch.tensor(obs) @ tw).log_prob(torch.tensor(actions)) * torch.tensor(ret)).mean()
    loss.backward()
    their.backward()
    _close(loss, their, "float64", "loss")
    _close(ow.grad, tw.grad, "float64", "grad")


@pytest.mark.parametrize("name", list(FAMILIES))
def test_every_family_expands_as_pytorchs(name):
    ours, theirs, _, _ = _pair(name, (3,), "float64")
    e, t = ours.expand((2, 3)), theirs.expand((2, 3))
    assert tuple(e.batch_shape) == tuple(t.batch_shape) and tuple(e.event_shape) == tuple(t.event_shape)
    torch.manual_seed(0)
    value = t.sample()
    _close(e.log_prob(tga.tensor(value.detach().numpy())), t.log_prob(value), "float64", "log_prob after expand")
    _close(e.mean, t.mean, "float64", "mean after expand")
