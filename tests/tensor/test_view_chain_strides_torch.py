"""Chains of view ops drawn from a seed, run with ``torch`` bound to PyTorch and to tinygrad_attn:
after each step the shape, ``stride()``, ``storage_offset()``, ``is_contiguous()`` (and of a 4-d
result ``is_contiguous(memory_format=channels_last)``), whether it shares the input's memory, and
at the end the values, must be PyTorch's.

Inputs come in several layouts (contiguous, transposed, permuted, channels-last with a batch of
one or more, stepped slices, expanded, with dims of size 1); the steps are the views that give or
drop dims of size 1, where PyTorch's strides follow its own rules (``unsqueeze``: size times stride
of the next dim; ``view``/``reshape``: ``computeStride``; ``expand``'s new dims; ``squeeze``
drops), and those that move dims (``permute movedim transpose t mT flatten unflatten narrow
select`` and indexing with ``None``), ending now and then in ``stack`` of the result with itself.

Run as a script over many seeds (prints each differing program and the counts per class)::

    PYTHONPATH=.:tests python tests/tensor/test_view_chain_strides_torch.py 0 3000
"""

from __future__ import annotations

import random
import sys
from collections.abc import Callable
from typing import Any

from differential import difference, generated_failures, report, seed_tests

#: ``V(lambda: expr)``: ``y`` becomes ``expr`` and its layout is recorded (or the exception's classes,
#: ``y`` staying as it was)
PRELUDE = """
def V(f):
    global y
    try:
        y = f()
    except Exception as e:
        R(("raised", tuple(c.__name__ for c in type(e).__mro__)))
        return
    R(tuple(y.shape), y.stride(), y.storage_offset(), y.is_contiguous(),
      y.is_contiguous(memory_format=torch.channels_last) if y.ndim == 4 else None,
      y.untyped_storage().data_ptr() == x.untyped_storage().data_ptr())
"""

#: name -> (an input's text, its shape)
LAYOUTS: dict[str, tuple[str, tuple[int, ...]]] = {
    "contiguous": ("torch.arange(24.).reshape(2, 3, 4)", (2, 3, 4)),
    "transposed": ("torch.arange(12.).reshape(3, 4).t()", (4, 3)),
    "permuted": ("torch.arange(24.).reshape(2, 3, 4).permute(2, 0, 1)", (4, 2, 3)),
    "channels_last": ("torch.arange(120.).reshape(2, 4, 5, 3).permute(0, 3, 1, 2)", (2, 3, 4, 5)),
    "channels_last_n1": ("torch.arange(60.).reshape(1, 4, 5, 3).permute(0, 3, 1, 2)", (1, 3, 4, 5)),
    "channels_last_c1": ("torch.arange(40.).reshape(2, 4, 5, 1).permute(0, 3, 1, 2)", (2, 1, 4, 5)),
    "size_one": ("torch.arange(12.).reshape(3, 1, 4)", (3, 1, 4)),
    "size_one_t": ("torch.arange(12.).reshape(3, 1, 4).transpose(0, 2)", (4, 1, 3)),
    "stepped": ("torch.arange(48.).reshape(6, 8)[::2, 1::3]", (3, 3)),
    "stepped_one": ("torch.arange(48.).reshape(6, 8)[1:2, ::3]", (1, 3)),
    "expanded": ("torch.arange(3.).reshape(3, 1).expand(3, 4)", (3, 4)),
    "scalar": ("torch.tensor(2.5)", ()),
}


def _dim(r: random.Random, nd: int, extra: int = 0) -> int:
    """A dim of ``nd + extra`` dims, negative now and then."""
    d = r.randrange(nd + extra)
    return d - (nd + extra) if r.random() < 0.3 else d


def _step(r: random.Random, shape: tuple[int, ...]) -> tuple[str, tuple[int, ...]] | None:
    """A view of ``y`` (of ``shape``) as text, and its shape; None where the draw does not fit."""
    nd = len(shape)
    kind = r.choice(["unsqueeze", "unsqueeze", "squeeze", "squeeze_dim", "view_ones", "view_ones", "reshape",
                     "expand", "expand_new", "movedim", "permute", "transpose", "t", "mT", "flatten",
                     "unflatten", "none", "narrow1", "select", "slice1"])  # fmt: skip
    if kind == "unsqueeze":
        d = _dim(r, nd, 1)
        d1 = d % (nd + 1)
        return f"y.unsqueeze({d})", (*shape[:d1], 1, *shape[d1:])
    if kind == "squeeze":
        return "y.squeeze()", tuple(n for n in shape if n != 1)
    if kind == "squeeze_dim" and nd:
        d = _dim(r, nd)
        return f"y.squeeze({d})", tuple(n for k, n in enumerate(shape) if k != d % nd or n != 1)
    if kind == "view_ones":  # (dims of size 1 taken out and put in elsewhere: always a view)
        new = [n for n in shape if n != 1]
        for _ in range(r.randint(0, 2)):
            new.insert(r.randint(0, len(new)), 1)
        return f"y.{r.choice(['view', 'reshape'])}({tuple(new)})", tuple(new)
    if kind == "reshape" and nd >= 2:
        k = r.randrange(nd - 1)
        new = (*shape[:k], shape[k] * shape[k + 1], *shape[k + 2 :])
        if r.random() < 0.5:
            new = (*new[: k + 1], 1, *new[k + 1 :])
        return f"y.reshape({new})", new
    if kind == "expand" and 1 in shape:
        new = tuple(r.choice([n, 2, -1]) if n == 1 else r.choice([n, -1]) for n in shape)
        return f"y.expand({new})", tuple(s if e == -1 else e for s, e in zip(shape, new, strict=True))
    if kind == "expand_new":
        lead = tuple(r.choice([1, 1, 2]) for _ in range(r.randint(1, 2)))
        return f"y.expand({(*lead, *shape)})", (*lead, *shape)
    if kind == "movedim" and nd:
        a, b = _dim(r, nd), _dim(r, nd)
        order = [k for k in range(nd) if k != a % nd]
        order.insert(b % nd, a % nd)
        return f"y.movedim({a}, {b})", tuple(shape[k] for k in order)
    if kind == "permute" and nd:
        perm = list(range(nd))
        r.shuffle(perm)
        return f"y.permute({tuple(perm)})", tuple(shape[k] for k in perm)
    if kind == "transpose" and nd:
        a, b = _dim(r, nd), _dim(r, nd)
        s = list(shape)
        s[a % nd], s[b % nd] = s[b % nd], s[a % nd]
        return f"y.transpose({a}, {b})", tuple(s)
    if kind == "t" and nd <= 2:
        return "y.t()", tuple(reversed(shape))
    if kind == "mT" and nd >= 2:
        return "y.mT", (*shape[:-2], shape[-1], shape[-2])
    if kind == "flatten" and nd:
        a, b = sorted((r.randrange(nd), r.randrange(nd)))
        n = 1
        for s in shape[a : b + 1]:
            n *= s
        return f"y.flatten({a}, {b})", (*shape[:a], n, *shape[b + 1 :])
    if kind == "unflatten" and nd:
        d = r.randrange(nd)
        parts = r.choice([(1, shape[d]), (shape[d], 1), (1, -1, 1)])
        full = tuple(shape[d] if p == -1 else p for p in parts)
        return f"y.unflatten({d}, {parts})", (*shape[:d], *full, *shape[d + 1 :])
    if kind == "none":
        d = r.randint(0, nd)
        return f"y[{''.join([':, '] * d)}None]", (*shape[:d], 1, *shape[d:])
    if kind == "narrow1" and nd and all(shape):
        d = r.randrange(nd)
        start = r.randrange(shape[d])
        return f"y.narrow({d}, {start}, 1)", (*shape[:d], 1, *shape[d + 1 :])
    if kind == "select" and nd and all(shape):
        d = r.randrange(nd)
        return f"y.select({d}, {r.randrange(shape[d])})", (*shape[:d], *shape[d + 1 :])
    if kind == "slice1" and nd and shape[0] > 1:
        return "y[1:2]", (1, *shape[1:])
    return None


def k_chain(r: random.Random) -> str:
    """An input of a layout, then three to six views of it; now and then a stack at the end."""
    text, shape = LAYOUTS[r.choice(list(LAYOUTS))]
    lines = [f"x = {text}", "y = x"]
    for _ in range(r.randint(3, 6)):
        step = None
        while step is None:
            step = _step(r, shape)
        lines.append(f"V(lambda: {step[0]})")
        shape = step[1]
    if r.random() < 0.3:
        d = r.randint(0, len(shape))
        lines.append(f"V(lambda: torch.stack([y, y], {d}))")
    lines.append("R(y)")
    return "\n".join(lines)


KINDS: dict[str, Callable[[random.Random], str]] = {"chain": k_chain}


def failures(seeds: range, torch: Any) -> list[tuple]:
    return generated_failures(KINDS, seeds, torch, difference, PRELUDE)


FAST_SEEDS = range(0, 400)
SLOW_SEEDS = range(400, 6000)

#: Differences known and not yet fixed, by seed: each must still differ (a fixed one is taken off).
KNOWN: dict[int, str] = {}

test_view_strides_as_in_torch, test_more_view_strides_as_in_torch = seed_tests(
    failures, KNOWN, FAST_SEEDS, SLOW_SEEDS, 200, 1400
)


if __name__ == "__main__":
    report(failures, KINDS, sys.argv)
