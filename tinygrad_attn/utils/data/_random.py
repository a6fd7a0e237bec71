"""The random draws of the samplers and the loader, made with the calls PyTorch's make, in
the same order, so that one seed gives PyTorch's batches once the library's generator draws
PyTorch's numbers.

Each helper takes ``generator=None`` (the library's global generator, ``tga.manual_seed``)
or a ``tga.Generator``. Where the library has no ``Generator`` class yet, :class:`HostGenerator`
stands in for it (a seeded NumPy generator of its own), so ``generator=`` still makes a
loader's order repeatable and independent of the global stream.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ... import creation, dtypes
from ... import random as library_random


class HostGenerator:
    """A seeded generator of its own, standing in for ``tga.Generator`` where the library
    has none: ``manual_seed``, ``initial_seed`` and ``seed`` as PyTorch's."""

    def __init__(self, device: Any = "cpu") -> None:
        self.device = device
        self.manual_seed(67280421310721)  # PyTorch's default seed

    def manual_seed(self, seed: int) -> HostGenerator:
        self._seed = int(seed)
        self.rng = np.random.default_rng(self._seed & 0xFFFF_FFFF_FFFF_FFFF)
        return self

    def initial_seed(self) -> int:
        return self._seed

    def seed(self) -> int:
        return self.manual_seed(int(np.random.default_rng().integers(0, 2**63))).initial_seed()


def generator_class() -> type:
    """``tga.Generator`` where the library has it, else :class:`HostGenerator`."""
    return getattr(library_random, "Generator", None) or HostGenerator


def new_generator(seed: int) -> Any:
    """A fresh generator seeded with ``seed`` (``g = torch.Generator(); g.manual_seed(seed)``)."""
    g = generator_class()()
    g.manual_seed(seed)
    return g


def random_seed(generator: Any = None) -> int:
    """One int64 seed: ``torch.empty((), dtype=torch.int64).random_(generator=g).item()``."""
    if isinstance(generator, HostGenerator):
        return int(generator.rng.integers(0, 2**63 - 1))
    kwargs = {} if generator is None else {"generator": generator}
    return int(creation.empty((), dtype=dtypes.int64).random_(**kwargs).item())


def randperm(n: int, generator: Any = None) -> list[int]:
    """``torch.randperm(n, generator=g).tolist()``."""
    if isinstance(generator, HostGenerator):
        return generator.rng.permutation(n).tolist()
    return creation.randperm(n, generator=generator).tolist()


def randint(high: int, size: int, generator: Any = None) -> list[int]:
    """``torch.randint(high=high, size=(size,), dtype=torch.int64, generator=g).tolist()``."""
    if isinstance(generator, HostGenerator):
        return generator.rng.integers(0, high, size).tolist()
    kwargs = {} if generator is None else {"generator": generator}
    return creation.randint(high=high, size=(size,), dtype=dtypes.int64, **kwargs).tolist()


def multinomial(weights: Any, num_samples: int, replacement: bool, generator: Any = None) -> list[int]:
    """``torch.multinomial(weights, num_samples, replacement, generator=g).tolist()``."""
    if isinstance(generator, HostGenerator):
        p = weights.numpy().astype(np.float64)
        if (p < 0).any() or not np.isfinite(p).all() or p.sum() <= 0:
            raise RuntimeError("multinomial: the weights must be non-negative, finite and have a non-zero sum")
        if not replacement and num_samples > int((p > 0).sum()):
            raise RuntimeError("multinomial: cannot sample n_sample > prob_dist.size(-1) samples without replacement")
        return generator.rng.choice(len(p), size=num_samples, replace=replacement, p=p / p.sum()).tolist()
    kwargs = {} if generator is None else {"generator": generator}
    return creation.multinomial(weights, num_samples, replacement, **kwargs).tolist()
