"""The generators' harness itself: a known seed must still differ unless its reason is rounding that
depends on the machine, and a new difference fails."""

from __future__ import annotations

import pytest
from differential import ROUNDING, assert_seeds_as_in_torch


def _failing(seeds_that_differ: set[int]):
    return lambda seeds, torch: [(s, "program", ("value", "why")) for s in seeds if s in seeds_that_differ]


def test_a_known_seed_that_agrees_must_come_off_the_list() -> None:
    with pytest.raises(AssertionError, match="now run as in PyTorch"):
        assert_seeds_as_in_torch(_failing(set()), range(3), None, {1: "a wrong formula"})


def test_a_rounding_seed_may_agree_or_differ() -> None:
    known = {1: ROUNDING + "float32 cancellation"}
    assert_seeds_as_in_torch(_failing(set()), range(3), None, known)
    assert_seeds_as_in_torch(_failing({1}), range(3), None, known)


def test_a_new_difference_fails() -> None:
    with pytest.raises(AssertionError, match="1 of 3 programs differ"):
        assert_seeds_as_in_torch(_failing({2}), range(3), None, {1: ROUNDING + "noise"})
