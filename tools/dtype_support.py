"""Which dtypes each shared op takes, asked of PyTorch and of the library, side by side.

For every OpInfo of PyTorch's ``op_db`` that the library shares (the name map of
``tests/ops/test_torch_opinfo.py``), the op's first float32 sample is cast to each dtype of
PyTorch's CPU grid (bool, uint8, int8, int16, int32, int64, float16, bfloat16, float32, float64) and run
through each variant both sides have (the function, the method, the in-place method). A row is
printed where the two differ (PyTorch raises and we return, or the other way, another exception
class, another result dtype or value), grouped by kind::

    python tools/dtype_support.py                    # every difference, grouped by kind
    python tools/dtype_support.py --ops erf elu      # only OpInfos whose id starts with these

PyTorch is the oracle here, never a dependency of the package: this script, like the tests, needs
it installed. The differences it prints are what ``tests/ops/test_torch_opinfo_errors.py`` checks
(its ``KNOWN`` entries list those not fixed yet).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections import defaultdict

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.join(HERE, "..", "tests", "ops"), os.path.join(HERE, "..", "tests"), os.path.join(HERE, "..")]

import test_torch_opinfo_errors as errs  # noqa: E402

runner = errs.runner
GRID = errs.GRID_DTYPES
VARIANTS = ("function", "method", "inplace")


def survey(prefixes: tuple[str, ...] = ()) -> dict[str, dict[tuple[str, str], tuple[str, str, str | None]]]:
    """op id -> (variant, dtype) -> (PyTorch's outcome, ours, the value difference or None)."""
    out: dict[str, dict] = {}
    for op_id in sorted(runner.TARGETS):
        if prefixes and not op_id.startswith(prefixes):
            continue
        base = errs._first_sample(op_id)
        if base is None:
            continue
        rows = {}
        for dt in GRID:
            s = errs._edge(base, dt)
            if s is None:
                continue
            for variant in VARIANTS:
                try:
                    why = errs.check_variant(op_id, s, variant)
                except runner.Unsupported:
                    break
                if why is not None:
                    rows[(variant, dt)] = why
        out[op_id] = rows
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ops", nargs="*", default=(), help="OpInfo ids starting with these only")
    args = ap.parse_args()
    res = survey(tuple(args.ops))
    kinds: dict[str, list[str]] = defaultdict(list)
    for op_id, rows in res.items():
        for (variant, dt), why in rows.items():
            key = f"{op_id}/{dt}" + ("" if variant == "function" else f"/{variant}")
            kinds[why.split(",")[0].split("(")[0].strip()].append(f"{key}: {why}")
    for kind, lines in sorted(kinds.items(), key=lambda kv: -len(kv[1])):
        print(f"== {kind} ({len(lines)})")
        for line in lines:
            print("  " + line)
    print(f"ops surveyed: {len(res)}; differences: {sum(len(r) for r in res.values())}")


if __name__ == "__main__":
    main()
