"""PyTorch's inventories of names (``tools/inventory.py``): no gap appears unreviewed.

Every name of PyTorch's OpInfo database, ``dir(torch.Tensor)``, ``torch.nn``'s classes,
``torch.nn.functional``'s functions, ``torch.linalg`` and ``dir(torch)`` itself is present here,
out of scope with a reason, or listed with a reason in ``tools/inventory_missing.txt``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))

import inventory  # noqa: E402


@pytest.fixture(scope="module")
def table():
    return inventory.classify(inventory.torch_names())


def test_every_missing_name_is_reviewed(table):
    gaps = inventory.unlisted_gaps(table)
    assert not gaps, (
        f"{len(gaps)} of PyTorch's names are missing and not in tools/inventory_missing.txt: {gaps[:40]}; "
        "write them, or list each there with a reason (inventory<TAB>name<TAB>reason)"
    )


def test_every_reviewed_gap_is_still_a_gap(table):
    stale = inventory.stale_entries(table)
    assert not stale, (
        f"tools/inventory_missing.txt lists names that are no longer missing: {stale[:40]}; "
        "remove them (python tools/inventory.py --prune)"
    )


def test_every_listed_gap_has_a_reason():
    assert all(reason.strip() for reason in inventory.reviewed_missing().values())


def test_classification_is_one_of_three(table):
    for inventory_name, rows in table.items():
        for name, status, reason in rows:
            assert status in ("present", "missing", "out of scope"), (inventory_name, name)
            assert status != "out of scope" or reason, (inventory_name, name)
