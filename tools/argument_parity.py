"""Error parity of mistaken calls against PyTorch, over the grid of
``tests/tensor/test_no_internal_errors.py`` (every shared Tensor method, free function and ``nn.functional`` function, each
with the argument sets users get wrong): how many calls raise where PyTorch runs, and return where
PyTorch raises, and raise another class than PyTorch's. ``--write`` rewrites ``tests/tensor/argument_parity_known.py`` with the calls that
still differ (the test fails on an entry that agrees with PyTorch, so the list only shrinks).

    python tools/argument_parity.py            # the counts
    python tools/argument_parity.py --write    # and the known list
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import torch  # noqa: E402 - (the oracle)

import tinygrad_attn as tga  # noqa: E402
from tests.tensor import test_no_internal_errors as grid  # noqa: E402

KNOWN_FILE = os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "tests", "tensor", "argument_parity_known.py"
)


#: why an entry stays on the known lists (matched by the start of its key): PyTorch's behaviour there
#: is an accident of its code, or matching it would cost more than it is worth
REASONS = {
    "bfloat16(": "NumPy has no bfloat16, so the dtype is not offered: x.bfloat16() raises",
    "chalf(": "NumPy has no complex half, so complex32 is not offered: x.chalf() raises",
    "symeig(": "the removed symeig is one function as method and free function: the free function's third argument",
    "tga.get_device()": "the library's device lookup (tga.get_device(name)); with a tensor it is PyTorch's",
    "tga.get_device(None,)": "the library's device lookup (tga.get_device(name)); with a tensor it is PyTorch's",
    "F.mse_loss('t23', ": "a number as the target is this library's convenience (mse_loss(x, 0.0)); PyTorch's reads its size",
    "F.l1_loss('t23', ": "a number as the target is this library's convenience, as in mse_loss",
    "F.smooth_l1_loss('t23', ": "a number as the target is this library's convenience, as in mse_loss",
    "F.huber_loss('t23', ": "a number as the target is this library's convenience, as in mse_loss",
    "F.layer_norm('t": "layer_norm's normalized_shape defaults to the last axis, the library's first meaning",
    "tga.layer_norm('t": "torch.layer_norm is F.layer_norm, whose normalized_shape defaults to the last axis",
    "F.gaussian_nll_loss('t23', 't23', 0)": "PyTorch refuses an int var by an accident of its float-only branch; var=1 is a fair call",
    "F.gaussian_nll_loss('t23', 0, 0)": "PyTorch refuses an int var by an accident of its float-only branch; var=1 is a fair call",
    "F.gaussian_nll_loss('t23', 0, 1)": "PyTorch refuses an int var by an accident of its float-only branch; var=1 is a fair call",
    "tga.view_copy('t23', ": "view_copy is Tensor.view's copy, which takes one int; PyTorch's free view_copy refuses it",
    "tga.einsum('t23', 't23'": "PyTorch fails on a tensor where a sublist goes by its truth value; ours names the sublist",
}


def _reason(key: str) -> str:
    return next((f"    # {why}\n" for start, why in REASONS.items() if key.startswith(start)), "")


def _outcome(call):
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        try:
            call()
        except Exception as e:  # noqa: BLE001 - an outcome, compared
            return e
    return None


def _calls():
    def value(lib, a):
        return grid._VALUES[a](lib) if isinstance(a, str) and a in grid._VALUES else a

    for name in grid._methods():
        for first, rest in grid.ARGUMENTS:
            yield f"{name}{(first, *rest)!r}", lambda lib, n=name, f=first, r=rest: grid._call(lib, n, f, r)
    for name in grid._free_functions():
        for args in grid.FREE_ARGUMENTS:
            yield f"tga.{name}{args!r}", lambda lib, n=name, a=args: getattr(lib, n)(*[value(lib, x) for x in a])
    for name in grid._functionals():
        for args in grid.FUNCTIONAL_ARGUMENTS:
            yield (
                f"F.{name}{args!r}",
                lambda lib, n=name, a=args: getattr(lib.nn.functional, n)(*[value(lib, x) for x in a]),
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--write", action="store_true", help="rewrite the known list")
    parser.add_argument("--classes", action="store_true", help="print each call that raises another class")
    args = parser.parse_args()
    raises, returns, classes, n = set(), set(), {}, 0
    for key, call in _calls():
        n += 1
        theirs, ours = _outcome(lambda c=call: c(torch)), _outcome(lambda c=call: c(tga))
        if theirs is None and ours is not None:
            raises.add(key)
        elif theirs is not None and ours is None:
            returns.add(key)
        elif theirs is not None and not grid.same_class(theirs, ours):
            classes[key] = f"{grid.builtin_class(theirs).__name__}, not {type(ours).__name__}"
            if args.classes:
                print(
                    f"{key}: PyTorch {type(theirs).__name__}: {str(theirs)[:80]!r}; ours {type(ours).__name__}: {str(ours)[:80]!r}"
                )
    print(
        f"{n} calls: {len(raises)} raise where PyTorch runs, {len(returns)} return where PyTorch raises, "
        f"{len(classes)} raise another class than PyTorch's"
    )
    if args.write:

        def listed(keys):
            return "{\n" + "".join(f"{_reason(k)}    {k!r},\n" for k in sorted(keys)) + "}"

        def mapped(found):
            return "{\n" + "".join(f"{_reason(k)}    {k!r}: {found[k]!r},\n" for k in sorted(found)) + "}"

        with open(KNOWN_FILE, "w") as f:
            f.write(
                '"""The calls of tests/tensor/test_no_internal_errors.py whose outcome still differs from PyTorch\'s:\n'
                "where PyTorch runs and we raise (``KNOWN_RAISES``), where PyTorch raises and we return\n"
                "(``KNOWN_RETURNS``), and where both raise but ours is not an instance of PyTorch's class\n"
                "(``KNOWN_CLASSES``: the call, and PyTorch's builtin class, not ours). Each entry is a difference\n"
                'to remove, never to add (``python tools/argument_parity.py --write`` rewrites it)."""\n\n'
                f"KNOWN_RAISES: set[str] = {listed(raises)}\n\nKNOWN_RETURNS: set[str] = {listed(returns)}\n\n"
                f"KNOWN_CLASSES: dict[str, str] = {mapped(classes)}\n"
            )


if __name__ == "__main__":
    main()
