"""The op table of the PyTorch differential tests covers every op (no PyTorch needed)."""

from __future__ import annotations

import inspect

from opinfo import OPS

import tinygrad_attn.functional as F
from tinygrad_attn import Tensor
from tinygrad_attn.ops import PRIMITIVES


def _public_composites() -> list[str]:
    """The functions ``tinygrad_attn.functional`` exports (its ``__all__``)."""
    return [n for n in F.__all__ if inspect.isfunction(getattr(F, n))]


def test_every_primitive_and_public_composite_has_an_entry():
    covered = {name for op in OPS for name in op.covers}
    missing = sorted(set(PRIMITIVES) - covered) + sorted(set(_public_composites()) - covered)
    assert not missing, (
        f"no entry in tests/opinfo.py covers {missing}: add an OpInfo for each (see the format at the "
        "top of tests/opinfo.py), so the op is checked against PyTorch"
    )


def test_every_name_an_entry_covers_exists():
    for op in OPS:
        for name in op.covers:
            assert name in PRIMITIVES or hasattr(F, name) or hasattr(Tensor, name), (op.name, name)
