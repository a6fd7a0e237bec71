"""Modules that a utility wraps or extends print as PyTorch's: parametrized modules
(``ParametrizationList``), the legacy ``weight_norm``/``spectral_norm`` (which keep the module's
class name) and a user's subclass of ``ModuleList`` (its own name)."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

import tinygrad_attn as tga  # noqa: E402

BUILDERS = {
    "weight_norm parametrization": lambda nn: nn.utils.parametrizations.weight_norm(nn.Linear(2, 3)),
    "spectral_norm parametrization": lambda nn: nn.utils.parametrizations.spectral_norm(nn.Conv1d(2, 3, 2)),
    "orthogonal": lambda nn: nn.utils.parametrizations.orthogonal(nn.Linear(3, 3)),
    "two parametrizations": lambda nn: nn.utils.parametrizations.weight_norm(
        nn.utils.parametrizations.weight_norm(nn.Linear(2, 3)), "bias", dim=0
    ),
    "legacy weight_norm": lambda nn: nn.utils.weight_norm(nn.Linear(2, 3)),
    "legacy weight_norm conv": lambda nn: nn.utils.weight_norm(nn.Conv2d(1, 2, 3), dim=None),
    "legacy spectral_norm": lambda nn: nn.utils.spectral_norm(nn.Linear(2, 3)),
    "ModuleList subclass": lambda nn: type("Blocks", (nn.ModuleList,), {})([nn.Linear(2, 2), nn.ReLU()]),
    "empty ModuleList subclass": lambda nn: type("Blocks", (nn.ModuleList,), {})(),
    "Sequential in a ModuleDict": lambda nn: nn.ModuleDict({"a": nn.Sequential(nn.Tanh()), "b": nn.ModuleList()}),
}


@pytest.mark.parametrize("name", sorted(BUILDERS))
def test_wrapped_module_prints_as_pytorch(name):
    texts = []
    for lib in (torch, tga):
        lib.manual_seed(0)
        m = BUILDERS[name](lib.nn)
        texts.append((repr(m), type(m).__name__))
    assert texts[1] == texts[0]
