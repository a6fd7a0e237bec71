"""Freed memory kept for the next arrays (glibc's malloc): fewer page faults per step."""

from __future__ import annotations

import os
import platform
import subprocess
import sys

import pytest

import tinygrad_attn as tga
from tinygrad_attn.runtime import malloc

GLIBC = sys.platform.startswith("linux") and platform.libc_ver()[0] == "glibc"

# Rounds of eight 2 MiB arrays, all made and then all freed, as a training step does;
# prints the page faults of the rounds after the first.
_ROUNDS = """
import resource, numpy as np
import tinygrad_attn as tga
tga.Tensor([1.0])  # makes the CPU device
def round_():
    arrays = [np.ones(1 << 19, np.float32) for _ in range(8)]
    del arrays
round_()
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for _ in range(5):
    round_()
print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
"""


def _faults(**env: str) -> int:
    run_env = {k: v for k, v in os.environ.items() if not k.startswith("MALLOC_") and k != "GLIBC_TUNABLES"}
    run_env.update(env)
    out = subprocess.run([sys.executable, "-c", _ROUNDS], env=run_env, capture_output=True, text=True, check=True)
    return int(out.stdout.split()[-1])


@pytest.mark.slow  # (over half a second: the full suite runs it, the fast loop does not)
def test_the_cpu_device_keeps_freed_memory_unless_told_not_to():
    kept, given_back = _faults(), _faults(TINYGRAD_ATTN_KEEP_FREED_MEMORY="0")
    if GLIBC:
        assert given_back >= 5 * 8 * 256  # glibc's default: every round maps its pages afresh
        assert kept < given_back / 20
    else:  # nothing to tune: the same either way
        assert abs(kept - given_back) < max(given_back, 100) / 2


@pytest.mark.slow  # (over half a second: the full suite runs it, the fast loop does not)
def test_a_malloc_setting_in_the_environment_is_left_alone():
    ours = _faults()
    for env in ({"MALLOC_TRIM_THRESHOLD_": "131072"}, {"GLIBC_TUNABLES": "glibc.malloc.trim_threshold=131072"}):
        theirs = _faults(**env)
        if GLIBC:  # their threshold (glibc's default here) holds: pages mapped afresh
            assert theirs > 20 * max(ours, 1)


def test_keep_freed_memory_reports_whether_it_applied():
    assert tga.keep_freed_memory(malloc.DEFAULT_LIMIT) is GLIBC


@pytest.mark.parametrize("value,expect", [("0", False), ("false", False), ("No", False), ("OFF", False),
                                          ("1", True), ("TRUE", True), ("yes", True), (" on ", True), ("", True)])  # fmt: skip
def test_keep_setting_understands_the_usual_spellings(monkeypatch, value, expect):
    applied = []
    monkeypatch.setattr(malloc, "keep_freed_memory", lambda limit: applied.append(limit) or True)
    for k in ("MALLOC_TRIM_THRESHOLD_", "MALLOC_MMAP_THRESHOLD_", "MALLOC_TOP_PAD_", "GLIBC_TUNABLES"):
        monkeypatch.delenv(k, raising=False)
    monkeypatch.setenv("TINYGRAD_ATTN_KEEP_FREED_MEMORY", value)
    assert malloc.keep_by_default() is expect
    assert applied == ([malloc.DEFAULT_LIMIT] if expect else [])


def test_keep_setting_refuses_other_values_naming_the_variable(monkeypatch):
    monkeypatch.setenv("TINYGRAD_ATTN_KEEP_FREED_MEMORY", "maybe")
    with pytest.raises(ValueError, match=r"TINYGRAD_ATTN_KEEP_FREED_MEMORY='maybe' is not a yes/no value.*off"):
        malloc.keep_by_default()


@pytest.mark.slow  # (over a third of a second, or a new interpreter: not in the fast loop)
def test_off_spelled_in_words_gives_memory_back():
    if GLIBC:
        assert _faults(TINYGRAD_ATTN_KEEP_FREED_MEMORY="Off") >= 5 * 8 * 256
