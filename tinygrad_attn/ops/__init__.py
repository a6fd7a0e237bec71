"""The ops: every ``Function`` subclass, each with its forward beside its gradient.

The primitives are the short list every backend must run; everything else in the library
(softmax, layer_norm, attention, ...) is written once, in :mod:`tinygrad_attn.functional`,
from them, and the fused ops of :mod:`.fused` compute a composite in one step. Broadcasting
is undone in one place, ``engine.backward.unbroadcast``.

Each op describes itself by class attributes, which the engine, the tracer, fusion and the
pictures read (nothing anywhere keeps a list of op names):

- ``name``: its display name (in programs, pictures, errors); unique among all ops.
- ``primitive = True``: declared by each primitive itself (not inherited), which puts it in
  :data:`PRIMITIVES`; ``tests/ops/test_opinfo.py`` then asks for an entry in ``tests/opinfo.py``.
- ``elementwise``: its C expression over its operands ``{0}``, ``{1}``, ``{2}`` (``{a}``:
  its ``args``), for an op that maps each element to one element; fusion
  (:mod:`tinygrad_attn.symbolic.fusion`) writes GPU kernels of chains of such ops from it;
  with ``variadic = True`` a binary expression folded left over any number of operands.
- ``keep``, ``keeps_input``, ``reads_output``, ``reads_values``: what its backward reads.
- ``differentiable``, ``random``; for the pictures ``commutative``, ``operands``,
  ``args_label``, ``describe_args`` and ``heads_axis``.

So adding a primitive is one class here (in any module of this package: every module is
loaded and every op class in it registered), one entry in ``tests/opinfo.py`` and one
Tensor method.
"""

from __future__ import annotations

import importlib
import pkgutil

from ..engine.function import Function


def _load_ops() -> dict[str, type[Function]]:
    """Every op class defined in a module of this package, by class name."""
    found: dict[str, type[Function]] = {}
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        module = importlib.import_module(f"{__name__}.{info.name}")
        for value in vars(module).values():
            if isinstance(value, type) and issubclass(value, Function) and value.__module__ == module.__name__:
                found[value.__name__] = value
    return found


#: Every op class of this package, by class name.
OPS: dict[str, type[Function]] = _load_ops()
#: The primitive ops (those that declare ``primitive = True``), by class name.
PRIMITIVES: dict[str, type[Function]] = {n: c for n, c in OPS.items() if c.__dict__.get("primitive", False)}

globals().update(OPS)  # ``ops.Add``, ``ops.Gather``, ...
__all__ = [n for n in OPS if not n.startswith("_")] + ["OPS", "PRIMITIVES"]
