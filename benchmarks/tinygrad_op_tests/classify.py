"""The figure for tinygrad's test_ops.py run against tinygrad_attn through the import shim.

Reads ``results.tsv`` (from ``parse.py``) and the reviewed list ``classification.csv``
(one row per failing test: pytest id, category, reason). Categories starting with ``x-``
are tests that assert tinygrad's own semantics or call what only tinygrad has; they leave
the denominator. Category ``ours`` is a failure of this library and stays in it.

Exits 1, naming them, when a test fails that the list does not classify: every failure is
read and classified by hand, never sorted by its message.
"""

import collections
import csv
import sys

CATEGORIES = {
    "x-int32": "asserts tinygrad's default int, int32 (the torch side is cast to int32; PyTorch's is int64)",
    "x-dot": "Tensor.dot as matmul (torch.Tensor.dot takes two 1-D tensors only)",
    "x-name": "calls a name or keyword torch.Tensor does not have (tinygrad-only method, class function, keyword or dtype attribute)",
    "x-semantics": "asserts tinygrad semantics that contradict PyTorch 2.13",
    "ours": "a failure of this library: PyTorch has the name and the behaviour",
}


def main() -> int:
    rows = [line.split("\t") for line in open("results.tsv").read().splitlines()]
    listed = {}
    with open("classification.csv", newline="") as f:
        for r in csv.DictReader(f):
            if r["category"] not in CATEGORIES:
                raise SystemExit(f"classification.csv: {r['id']}: unknown category {r['category']!r}")
            listed[r["id"]] = r
    by = collections.defaultdict(list)
    unclassified, stale = [], []
    for name, status, msg in rows:
        if status != "fail":
            by[status].append(name)
            if name in listed:
                stale.append(f"{name} ({listed[name]['category']}) now {status}s")
            continue
        if name not in listed:
            unclassified.append(f"{name}: {msg[:160]}")
            continue
        by[listed[name]["category"]].append(name)
    for k in ["pass", "skip", *CATEGORIES]:
        print(f"{len(by[k]):4d}  {k:12s} {CATEGORIES.get(k, '')}")
    run = sum(len(v) for k, v in by.items() if k != "skip")
    excluded = sum(len(v) for k, v in by.items() if k.startswith("x-"))
    passed = len(by["pass"])
    print(
        f"run (not skipped): {run}; excluded: {excluded}; passed {passed} / ({run} - {excluded}) = {passed / (run - excluded):.1%}"
    )
    for s in stale:
        print("   stale entry (counted as run, not excluded):", s)
    if unclassified:
        print(
            f"\n{len(unclassified)} FAILURES NOT IN classification.csv: read each test and classify it", file=sys.stderr
        )
        for u in unclassified:
            print("   ", u, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
