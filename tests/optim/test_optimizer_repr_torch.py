"""Every optimizer we share with PyTorch prints as PyTorch's: each parameter group's settings in
key order, a blank line between groups (``print(optimizer)`` in a training script)."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

import tinygrad_attn as tga  # noqa: E402

#: PyTorch's optimizers left out of the comparison (none now: SparseAdam steps with sparse gradients too)
_ASIDE: set[str] = set()


def _names() -> list[str]:
    out = []
    for n in torch.optim.__all__:
        c = getattr(torch.optim, n)
        if isinstance(c, type) and issubclass(c, torch.optim.Optimizer) and c is not torch.optim.Optimizer:
            if n not in _ASIDE and hasattr(tga.optim, n):
                out.append(n)
    return out


@pytest.mark.parametrize(
    "name, groups", [(n, g) for n in _names() for g in (1, 2) if g == 1 or n != "LBFGS"]
)  # (LBFGS takes one group, in both libraries)
def test_optimizer_prints_as_pytorch(name, groups):
    texts = []
    for lib in (torch, tga):
        lib.manual_seed(0)
        w, b = lib.nn.Parameter(lib.ones(3, 2)), lib.nn.Parameter(lib.ones(3, 4))
        params = [w, b] if groups == 1 else [{"params": [w]}, {"params": [b], "lr": 0.5}]
        texts.append(repr(getattr(lib.optim, name)(params, lr=0.01)))
    assert texts[1] == texts[0]
