"""PyTorch as the oracle of ``tinygrad_attn.nn``: copy a torch module's weights into ours and
hold outputs, input gradients and parameter gradients equal, in float64."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pytest

from tinygrad_attn import Tensor
from tinygrad_attn.nn import Module


def load_torch(ours: Module, theirs: Any) -> Module:
    """Load ``theirs``' state dict into ``ours`` (after checking both list the same names in the
    same order), as float64."""
    theirs.double()
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    assert [tuple(p.shape) for p in ours.parameters()] == [tuple(p.shape) for p in theirs.parameters()]
    ours.load_state_dict({k: v.detach().numpy() for k, v in theirs.state_dict().items()})
    return ours.double()


def _flat(out: Any) -> list[Any]:
    if isinstance(out, (tuple, list)):
        return [y for x in out for y in _flat(x)]
    return [] if out is None else [out]


def assert_matches_torch(ours: Module, theirs: Any, run_ours: Callable[..., Any], run_theirs: Callable[..., Any],
                         arrays: Sequence[np.ndarray], atol: float = 1e-10) -> None:  # fmt: skip
    """Outputs, gradients of ``arrays`` and parameter gradients of ``run_ours(*tensors)`` and
    ``run_theirs(*torch_tensors)`` agree (the gradient of a fixed random weighting of every
    output)."""
    import torch  # noqa: PLC0415 - the tests that call this import it with importorskip

    load_torch(ours, theirs)
    xs_o = [Tensor(a, requires_grad=True) for a in arrays]
    xs_t = [torch.tensor(a, requires_grad=True) for a in arrays]
    outs_o, outs_t = _flat(run_ours(*xs_o)), _flat(run_theirs(*xs_t))
    assert len(outs_o) == len(outs_t)
    rng = np.random.default_rng(1)
    loss_o, loss_t = 0.0, 0.0
    for o, t in zip(outs_o, outs_t):
        assert o.shape == tuple(t.shape)
        np.testing.assert_allclose(o.detach().numpy(), t.detach().numpy(), atol=atol, rtol=1e-8)
        w = rng.standard_normal(o.shape)
        loss_o = loss_o + (o * Tensor(w)).sum()
        loss_t = loss_t + (t * torch.tensor(w)).sum()
    loss_o.backward()
    loss_t.backward()
    for x_o, x_t in zip(xs_o, xs_t):
        if x_t.grad is None:  # an input the outputs do not depend on
            assert x_o.grad is None or not np.any(x_o.grad.detach().numpy())
            continue
        np.testing.assert_allclose(x_o.grad.detach().numpy(), x_t.grad.detach().numpy(), atol=atol, rtol=1e-8)
    grads_t = {n: p.grad for n, p in theirs.named_parameters()}
    for n, p in ours.named_parameters():
        g_t = grads_t[n]
        if g_t is None:
            assert p.grad is None or not np.any(p.grad.detach().numpy()), n
            continue
        np.testing.assert_allclose(p.grad.detach().numpy(), g_t.detach().numpy(), atol=atol, rtol=1e-8, err_msg=n)


class _Absent:
    """Stands for PyTorch where it is not installed, so that a module's tables that name its
    classes still build; every test that would use them carries ``needs_torch`` and skips."""

    def __getattr__(self, name: str) -> _Absent:
        return self

    def __call__(self, *args: Any, **kwargs: Any) -> _Absent:
        return self


def torch_or_absent() -> Any:
    """``torch`` where PyTorch is installed, else a stand-in (the oracle is optional): for a test
    file where only some tests need PyTorch, so that the others still run without it."""
    try:
        import torch  # noqa: PLC0415
    except ImportError:
        return _Absent()
    return torch


needs_torch = pytest.mark.skipif(isinstance(torch_or_absent(), _Absent), reason="needs PyTorch (the oracle)")


def torch_bernoulli_is_ours() -> bool:
    """Whether PyTorch's CPU ``bernoulli_(p)`` (a float ``p``: dropout's masks) draws from the
    stream ours reproduces: it does, except from MKL's stream on an Intel CPU."""
    import torch  # noqa: PLC0415 - the tests that call this import it with importorskip

    try:
        with open("/proc/cpuinfo") as f:
            intel = "GenuineIntel" in f.read()
    except OSError:
        intel = False
    return not (intel and torch.backends.mkl.is_available())
