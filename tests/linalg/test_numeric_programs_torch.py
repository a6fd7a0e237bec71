"""Numeric programs as scientists write them with PyTorch, drawn from a seed and run with ``torch``
bound to PyTorch and to tinygrad_attn (tests/differential.py): the same values, gradients,
dtypes, shapes and exception classes.

The kinds (``KINDS``): Newton iterations with ``autograd.grad`` (scalar and vector, with the
Jacobian by rows); polynomial fits (``vander``, powers by broadcasting, ``linalg.lstsq``,
``linalg.solve`` of the normal equations, ``pinv``) and their gradients; Gaussian-process
likelihoods (``cdist`` kernels, ``cholesky``, ``cholesky_solve``, ``solve_triangular``, log
determinants from the factor's diagonal) optimised for a few steps; log-likelihoods through
``torch.distributions``; ODE integration loops (Euler, RK4) with the state updated in place
under ``no_grad`` or rebound with a graph; and gradient descent written by hand
(``x -= lr * x.grad``, ``grad.zero_()``).

Run as a script over many seeds (prints each differing program and the counts per kind)::

    PYTHONPATH=.:tests python tests/linalg/test_numeric_programs_torch.py 0 2000
"""

from __future__ import annotations

import random
import sys
from collections.abc import Callable
from typing import Any

from differential import PRELUDE, float32_difference, generated_failures, program_of, report, seed_tests


def _head(r: random.Random) -> str:
    return f"torch.manual_seed({r.randrange(1000)})\nDT = {r.choice(['torch.float32', 'torch.float64'])}\n"


def k_newton(r: random.Random) -> str:
    f = r.choice(
        [
            "x ** 3 - 2 * x - 5",
            "torch.cos(x) - x",
            "torch.exp(x) - 3 * x ** 2",
            "x * torch.tanh(x) - 0.5",
            "torch.log1p(x ** 2) - 0.3",
        ]
    )
    x0 = r.choice(["1.5", "2.0", "0.7", "-0.4"])
    if r.random() < 0.5:
        return (
            _head(r)
            + f"""
x = torch.tensor({x0}, dtype=DT, requires_grad=True)
for it in range({r.randint(1, 6)}):
    y = {f}
    (g,) = torch.autograd.grad(y, x)
    with torch.no_grad():
        x -= y / g
    R(x.detach().clone(), y.detach())
R(x, x.requires_grad, x.grad)
"""
        )
    n = r.randint(2, 4)
    return (
        _head(r)
        + f"""
A = torch.randn({n}, {n}, dtype=DT) + {n} * torch.eye({n}, dtype=DT)
b = torch.randn({n}, dtype=DT)
def F_(x):
    return A @ x + 0.1 * torch.{r.choice(["sin", "tanh", "sigmoid"])}(x) - b
x = torch.zeros({n}, dtype=DT)
for it in range({r.randint(1, 4)}):
    xr = x.clone().requires_grad_(True)
    fx = F_(xr)
    J = torch.stack([torch.autograd.grad(fx[i], xr, retain_graph=True)[0] for i in range({n})])
    x = x - torch.linalg.solve(J, fx.detach())
    R(x, J, fx.detach().norm())
J2 = torch.autograd.functional.jacobian(F_, x)
R(J2, torch.linalg.norm(F_(x)))
"""
    )


def k_polyfit(r: random.Random) -> str:
    n, deg = r.randint(4, 9), r.randint(1, 3)
    vander = r.choice(
        [
            f"V = x.unsqueeze(-1) ** torch.arange({deg} + 1, dtype=DT)",
            f"V = torch.vander(x, N={deg} + 1, increasing=True)",
            f"V = torch.stack([x ** p for p in range({deg} + 1)], dim=1)",
        ]
    )
    solve = r.choice(
        [
            "coef = torch.linalg.lstsq(V, y.unsqueeze(-1)).solution.squeeze(-1)",
            "coef = torch.linalg.solve(V.T @ V, V.T @ y)",
            "coef = torch.linalg.pinv(V) @ y",
            "coef = torch.linalg.lstsq(V, y).solution",
            "L = torch.linalg.cholesky(V.mT @ V)\ncoef = torch.cholesky_solve((V.mT @ y).unsqueeze(-1), L).squeeze(-1)",
        ]
    )
    return (
        _head(r)
        + f"""
x = torch.linspace(-1, 1, {n}, dtype=DT)
w_true = torch.randn({deg} + 1, dtype=DT)
noise = (0.05 * torch.randn({n}, dtype=DT)).requires_grad_()
{vander}
y = V @ w_true + noise
{solve}
resid = V @ coef - y
R(coef, resid.pow(2).mean())
T(lambda: BW(coef, noise))
"""
    )


def k_gp(r: random.Random) -> str:
    n, d = r.randint(3, 7), r.randint(1, 3)
    kern = r.choice(
        [
            "K = sf2 * torch.exp(-0.5 * torch.cdist(X / ell, X / ell) ** 2)",
            "K = sf2 * torch.exp(-0.5 * torch.cdist(X, X).pow(2) / ell ** 2)",
            "d2 = ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)\n    K = sf2 * torch.exp(-d2 / (2 * ell ** 2))",
            "r_ = torch.cdist(X, X, p=2)\n    K = sf2 * (1 + math.sqrt(3) * r_ / ell) * torch.exp(-math.sqrt(3) * r_ / ell)",
        ]
    )
    solve = r.choice(
        [
            "alpha = torch.cholesky_solve(y.unsqueeze(-1), L)",
            "alpha = torch.linalg.solve_triangular(L.mT, torch.linalg.solve_triangular(L, y.unsqueeze(-1), upper=False), upper=True)",
            "alpha = torch.linalg.solve(Ky, y.unsqueeze(-1))",
        ]
    )
    opt = r.choice(["torch.optim.Adam(params, lr=0.05)", "torch.optim.LBFGS(params, lr=0.1, max_iter=3)",
                    "torch.optim.SGD(params, lr=0.01)"])  # fmt: skip
    # (float64, as Gaussian-process code is run: in float32 the factor of a kernel matrix is so
    # ill-conditioned that the likelihood's gradient near its optimum is rounding noise)
    return (
        _head(r).replace("torch.float32", "torch.float64")
        + f"""
X = torch.randn({n}, {d}, dtype=DT)
y = torch.sin(X.sum(-1)) + 0.1 * torch.randn({n}, dtype=DT)
log_ell = torch.zeros((), dtype=DT, requires_grad=True)
log_sf2 = torch.zeros((), dtype=DT, requires_grad=True)
log_noise = torch.tensor(-2.0, dtype=DT, requires_grad=True)
params = [log_ell, log_sf2, log_noise]
opt = {opt}
def nll():
    ell, sf2 = log_ell.exp(), log_sf2.exp()
    {kern}
    Ky = K + (log_noise.exp() + 1e-6) * torch.eye({n}, dtype=DT)
    L = torch.linalg.cholesky(Ky)
    {solve}
    return 0.5 * (y.unsqueeze(-1) * alpha).sum() + torch.log(torch.diagonal(L)).sum() + 0.5 * {n} * math.log(2 * math.pi)
def closure():
    opt.zero_grad()
    loss = nll()
    loss.backward()
    return loss
for step in range(3):
    R(opt.step(closure))
R(*params, *[p.grad for p in params])
"""
    )


def k_distributions(r: random.Random) -> str:
    n = r.randint(2, 6)
    dist = r.choice(
        [
            ("torch.distributions.Normal(mu, sigma.exp())", "torch.randn({n}, dtype=DT)"),
            ("torch.distributions.Laplace(mu, sigma.exp())", "torch.randn({n}, dtype=DT)"),
            ("torch.distributions.StudentT(3.0, mu, sigma.exp())", "torch.randn({n}, dtype=DT)"),
            ("torch.distributions.LogNormal(mu, sigma.exp())", "torch.rand({n}, dtype=DT) + 0.1"),
            ("torch.distributions.Gamma(sigma.exp(), mu.exp())", "torch.rand({n}, dtype=DT) + 0.1"),
            ("torch.distributions.Beta(sigma.exp(), mu.exp())", "torch.rand({n}, dtype=DT) * 0.9 + 0.05"),
            ("torch.distributions.Bernoulli(logits=mu)", "(torch.rand({n}) > 0.5).to(DT)"),
            ("torch.distributions.Poisson(sigma.exp())", "torch.randint(0, 5, ({n},)).to(DT)"),
            ("torch.distributions.Categorical(logits=torch.stack([mu, sigma], -1))", "torch.randint(0, 2, ({n},))"),
            ("torch.distributions.MultivariateNormal(mu, scale_tril=torch.diag(sigma.exp()))", "torch.randn({n}, dtype=DT)"),
            ("torch.distributions.Independent(torch.distributions.Normal(mu, sigma.exp()), 1)", "torch.randn({n}, dtype=DT)"),
        ]
    )  # fmt: skip
    extra = r.choice(
        [
            "R(d.entropy())",
            "R(d.mean, d.variance)",
            "R(torch.distributions.kl_divergence(d, d))",
            "R(d.batch_shape, d.event_shape)",
            "R(d.log_prob(data).exp().sum())",
        ]
    )
    return (
        _head(r)
        + f"""
mu = (0.3 * torch.randn({n}, dtype=DT)).requires_grad_()
sigma = (0.2 * torch.randn({n}, dtype=DT)).requires_grad_()
data = {dist[1].format(n=n)}
d = {dist[0]}
ll = d.log_prob(data).sum()
R(ll)
T(lambda: ({extra[2:-1]},))
(-ll).backward()
R(mu.grad, sigma.grad)
"""
    )


def k_ode(r: random.Random) -> str:
    system = r.choice(
        [
            ("torch.stack([y[1], -theta * torch.sin(y[0])])", "torch.tensor([1.0, 0.0], dtype=DT)"),
            ("torch.stack([theta * y[0] - y[0] * y[1], y[0] * y[1] - y[1]])", "torch.tensor([1.5, 1.0], dtype=DT)"),
            ("-theta * y", "torch.ones(3, dtype=DT)"),
            ("torch.tanh(W @ y) * theta", "torch.randn(3, dtype=DT)"),
        ]
    )
    dt = r.choice(["0.1", "0.05", "0.2"])
    steps = r.randint(2, 8)
    scheme = r.choice(["euler", "rk4", "euler_inplace", "midpoint"])
    if scheme == "euler":
        body = "    y = y + dt * f(y)"
    elif scheme == "midpoint":
        body = "    y = y + dt * f(y + 0.5 * dt * f(y))"
    elif scheme == "rk4":
        body = (
            "    k1 = f(y)\n    k2 = f(y + dt / 2 * k1)\n    k3 = f(y + dt / 2 * k2)\n    k4 = f(y + dt * k3)\n"
            "    y = y + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)"
        )
    else:
        body = "    with torch.no_grad():\n        y += dt * f(y)\n        traj[i + 1] = y"
    return (
        _head(r)
        + f"""
theta = torch.tensor(0.8, dtype=DT, requires_grad=True)
W = torch.randn(3, 3, dtype=DT) * 0.5
def f(y):
    return {system[0]}
y = {system[1]}
dt = {dt}
traj = torch.zeros({steps} + 1, *y.shape, dtype=DT)
traj[0] = y
for i in range({steps}):
{body}
R(y, traj)
if y.requires_grad:
    y.pow(2).sum().backward()
    R(theta.grad)
"""
    )


def k_descent(r: random.Random) -> str:
    n = r.randint(2, 5)
    loss = r.choice(
        [
            "((A @ x - b) ** 2).sum()",
            "torch.logsumexp(A @ x, 0) - b @ x",
            "F.softplus(A @ x - b).sum() + 0.1 * x.norm() ** 2",
            "(x[1:] - x[:-1] ** 2).pow(2).sum() + (1 - x[:-1]).pow(2).sum()",
        ]
    )
    return (
        _head(r)
        + f"""
A = torch.randn({n}, {n}, dtype=DT)
b = torch.randn({n}, dtype=DT)
x = torch.zeros({n}, dtype=DT, requires_grad=True)
lr = {r.choice(["0.01", "0.05", "0.1"])}
for it in range({r.randint(1, 6)}):
    loss = {loss}
    loss.backward()
    with torch.no_grad():
        x -= lr * x.grad
        {r.choice(["x.grad.zero_()", "x.grad = None", "x.grad.data.zero_()"])}
    R(loss)
R(x, x.grad)
"""
    )


KINDS: dict[str, Callable[[random.Random], str]] = {
    "newton": k_newton, "polyfit": k_polyfit, "gp": k_gp, "distributions": k_distributions, "ode": k_ode,
    "descent": k_descent,
}  # fmt: skip

HELPERS = (
    PRELUDE
    + """
def BW(out, *leaves):
    w = torch.linspace(0.5, 2.0, out.numel(), dtype=out.dtype).reshape(out.shape)
    loss = (out * w).sum()
    R(out, loss)
    loss.backward()
    R(*[t.grad for t in leaves])
"""
)


def program(seed: int) -> str:
    return program_of(KINDS, seed)


def _difference(src: str, torch: Any) -> tuple[str, str] | None:
    return float32_difference(src, torch)


def failures(seeds: range, torch: Any) -> list[tuple]:
    return generated_failures(KINDS, seeds, torch, _difference, HELPERS)


FAST_SEEDS = range(0, 240)
SLOW_SEEDS = range(240, 3000)

#: Differences known and not yet fixed, by seed: each must still differ (a fixed one is taken off).
KNOWN: dict[int, str] = {}


test_numeric_programs_run_as_in_torch, test_more_numeric_programs_run_as_in_torch = seed_tests(
    failures, KNOWN, FAST_SEEDS, SLOW_SEEDS, 60, 460
)


def test_programs_differ_with_the_seed() -> None:
    assert len({program(s) for s in range(40)}) == 40


if __name__ == "__main__":
    report(failures, KINDS, sys.argv)
