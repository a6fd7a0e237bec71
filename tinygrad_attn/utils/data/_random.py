"""The random draws of the samplers and the loader, made with the calls PyTorch's make, in
the same order, so that one seed gives PyTorch's batches (the library's generator draws
PyTorch's numbers). Each helper takes ``generator=None`` (the global generator,
``tga.manual_seed``) or a ``tga.Generator``."""

from __future__ import annotations

from typing import Any

from ...random import Generator
from ...tensors import dtypes
from ...tensors.factories import creation


def new_generator(seed: int) -> Generator:
    """A fresh generator seeded with ``seed`` (``g = torch.Generator(); g.manual_seed(seed)``)."""
    g = Generator()
    g.manual_seed(seed)
    return g


def random_seed(generator: Generator | None = None) -> int:
    """One int64 seed: ``torch.empty((), dtype=torch.int64).random_(generator=g).item()``."""
    return int(creation.empty((), dtype=dtypes.int64).random_(generator=generator).item())


def randperm(n: int, generator: Generator | None = None) -> list[int]:
    """``torch.randperm(n, generator=g).tolist()``."""
    return creation.randperm(n, generator=generator).tolist()


def randint(high: int, size: int, generator: Generator | None = None) -> list[int]:
    """``torch.randint(high=high, size=(size,), dtype=torch.int64, generator=g).tolist()``."""
    return creation.randint(high=high, size=(size,), dtype=dtypes.int64, generator=generator).tolist()


def multinomial(weights: Any, num_samples: int, replacement: bool, generator: Generator | None = None) -> list[int]:
    """``torch.multinomial(weights, num_samples, replacement, generator=g).tolist()``."""
    return creation.multinomial(weights, num_samples, replacement, generator=generator).tolist()
