"""Second derivatives of every shared OpInfo against PyTorch's, in float64.

For each sample of an op PyTorch differentiates twice (``supports_gradgrad``), both libraries compute
the vector-Jacobian product with ``create_graph=True`` and then the gradient of that product, taken
against a second random vector, in every input: the gradient of the gradient a user's gradient
penalty, Hessian-vector product or MAML step reads. The samples, the conversion to our tensors and
the comparison are the first-order runner's (``test_torch_opinfo``); the fast loop runs the first
samples of each op, the slow pass more of them.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import tinygrad_attn as tga  # noqa: E402
from tests.ops import test_torch_opinfo as runner  # noqa: E402

FAST_SAMPLES = 1
SLOW_SAMPLES = 6

#: op id -> why its second derivative differs from PyTorch's today
KNOWN: dict[str, str] = {}
#: the same, in the slow pass's samples only
KNOWN_SLOW: dict[str, str] = {
    "linalg.norm.subgradients_at_zero": "the second derivative of a p < 1 norm at the zero vector: PyTorch's formula "
    "(x |x|^(p-2) ...) gives NaN there, ours the subgradient's 0 (the first derivatives agree)",
}


def _vector(t: Any, seed: int) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    return torch.randn(t.shape, dtype=t.dtype, generator=g)


def _ours(x: torch.Tensor) -> Any:
    return tga.tensor(runner._as_numpy(x), dtype=tga.complex128 if x.is_complex() else tga.float64)


def compare_gradgrad(target: runner.Target, sample: Any) -> str | None:
    """Why our second derivative of one sample differs from PyTorch's (None: equal or not comparable)."""
    op = target.op
    if sample.kwargs.get("dropout_p", 0) > 0:
        return None  # (random: PyTorch's generator is not ours)
    leaves: list = []
    try:
        inp = runner.to_ours(sample.input, leaves)
        args, kwargs = runner.to_ours(sample.args, leaves), runner.to_ours(sample.kwargs, leaves)
    except runner.Unsupported:
        return None
    if not leaves:
        return None
    process = sample.output_process_fn_grad
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            theirs = runner._flat(process(op.op(sample.input, *sample.args, **sample.kwargs)))
            pick = [k for k, t in enumerate(theirs) if isinstance(t, torch.Tensor) and t.requires_grad]
            if not pick or any(theirs[k].is_complex() for k in pick):
                return None
            cots = [_vector(theirs[k], 1234 + k) for k in pick]
            g1 = torch.autograd.grad([theirs[k] for k in pick], [t for t, _ in leaves], cots, create_graph=True,
                                     allow_unused=True)  # fmt: skip
            second = [k for k, g in enumerate(g1) if g is not None and g.requires_grad]
            if not second:
                return None
            ws = [_vector(g1[k], 4321 + k) for k in second]
            tg = torch.autograd.grad([g1[k] for k in second], [t for t, _ in leaves], ws, allow_unused=True)
    except Exception:
        return None  # PyTorch has no second derivative here
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            ours = runner._flat(process(target.function(inp, *args, **kwargs)))
            outs = [ours[k] for k in pick]
            if not all(isinstance(o, tga.Tensor) and o.requires_grad for o in outs):
                return "an output PyTorch differentiates does not require grad"
            o1 = tga.autograd.grad(outs, [o for _, o in leaves], [_ours(c) for c in cots], create_graph=True,
                                   allow_unused=True)  # fmt: skip
            firsts = [o1[k] for k in second]
            if any(g is None or not g.requires_grad for g in firsts):
                return "a first derivative PyTorch differentiates again does not require grad here"
            og = tga.autograd.grad(firsts, [o for _, o in leaves], [_ours(w) for w in ws], allow_unused=True)
    except Exception as e:
        return f"raises {type(e).__name__}: {str(e)[:200]}"
    return runner.compare_gradients(op.name, og, tg, leaves, "second derivative")


def run_op(op_id: str, n: int) -> runner.Tally:
    target = runner.TARGETS[op_id]
    tally = runner.Tally()
    tga.manual_seed(0)
    for sample in runner._samples(target.op, torch.float64, n, reference=False, requires_grad=True):
        tally.compared += 1
        why = compare_gradgrad(target, sample)
        if why:
            tally.fail(f"{runner._describe(sample)}: {why}")
    return tally


def _twice_differentiable(op_id: str) -> bool:
    t = runner.TARGETS[op_id]
    return (
        t.function is not None
        and t.op.supports_autograd
        and t.op.supports_gradgrad
        and op_id not in runner.RANDOM
        and torch.float64 in runner._supported(t.op)
    )


def _params(slow: bool) -> list:
    return runner.op_params(
        filter(_twice_differentiable, runner.TARGETS), {**KNOWN, **(KNOWN_SLOW if slow else {})}, slow
    )


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("op_id", _params(slow=False))
def test_second_derivative_is_pytorchs(op_id: str) -> None:
    tally = run_op(op_id, FAST_SAMPLES)
    runner._check(tally)


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("op_id", _params(slow=True))
def test_second_derivative_of_more_samples_is_pytorchs(op_id: str) -> None:
    tally = run_op(op_id, SLOW_SAMPLES)
    runner._check(tally)


def test_the_runner_sees_a_wrong_second_derivative() -> None:
    """A function whose first derivative is right but whose recorded derivative is constant: caught."""

    class _Flat(tga.autograd.Function):
        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:
            ctx.save_for_backward(x)
            return x * x * x

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            (x,) = ctx.saved_tensors
            return g * (3 * x * x).detach()  # (no history: its derivative in x is lost)

    op = next(o for o in runner.op_db if o.name == "pow")
    sample = next(iter(op.sample_inputs("cpu", torch.float64, requires_grad=True)))
    bad = runner.Target(op, function=lambda x, *a, **k: _Flat.apply(x))
    cube = type(sample)(sample.input, args=(3,))
    assert compare_gradgrad(bad, cube) is not None
    good = runner.Target(op, function=tga.pow)
    assert compare_gradgrad(good, cube) is None


_PENALTY_OPS = {
    "max_pool2d": lambda lib, x: lib.nn.functional.max_pool2d(x, 2),
    "avg_pool2d": lambda lib, x: lib.nn.functional.avg_pool2d(x, 2),
    "adaptive_max_pool2d": lambda lib, x: lib.nn.functional.adaptive_max_pool2d(x, 2),
    "reflect_pad": lambda lib, x: lib.nn.functional.pad(x, (1, 1, 1, 1), mode="reflect"),
    "replicate_pad": lambda lib, x: lib.nn.functional.pad(x, (1, 1, 1, 1), mode="replicate"),
    "hardshrink": lambda lib, x: lib.nn.functional.hardshrink(x, 0.3),
    "softshrink": lambda lib, x: lib.nn.functional.softshrink(x, 0.3),
    "relu": lambda lib, x: lib.relu(x),
    "scale": lambda lib, x: x * 2,
    "clamp": lambda lib, x: x.clamp(-0.5, 0.5),
}


@pytest.mark.parametrize("name", sorted(_PENALTY_OPS))
def test_a_gradient_penalty_runs_as_in_pytorch(name: str) -> None:
    """``g = grad(f(x).sum(), x, create_graph=True)``: whether ``g`` requires grad and the gradient of
    ``(g ** 2).sum()`` (a gradient penalty) are PyTorch's, or its error. (The node ``g`` prints is
    not compared: ours records the backward's own steps, PyTorch one ``<Op>BackwardBackward0``.)"""
    data = np.random.default_rng(0).standard_normal((1, 2, 4, 4))
    seen = []
    for lib in (torch, tga):
        x = lib.tensor(data, requires_grad=True)
        (g,) = lib.autograd.grad(_PENALTY_OPS[name](lib, x).sum(), x, create_graph=True)
        try:
            (gg,) = lib.autograd.grad((g**2).sum(), x)
            second = gg.detach().numpy()
        except RuntimeError as e:
            second = type(e)
        seen.append((g.requires_grad, second))
    (t_req, t_second), (o_req, o_second) = seen
    assert o_req == t_req
    if isinstance(t_second, np.ndarray):
        np.testing.assert_allclose(o_second, t_second, rtol=1e-12, atol=1e-12)
    else:
        assert o_second is t_second
