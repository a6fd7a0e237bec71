"""Shared fixtures: every op test runs on each array namespace.

- ``cpu``: NumPy.
- ``array_api_strict``: the array API reference namespace (float64 by default); it
  rejects NumPy-only calls.
- ``array_api_strict:device1``: the same on a second device; any op that falls back to
  NumPy or mixes devices fails there.
- ``cuda``: CuPy on a GPU, marked ``gpu`` and skipped where there is none.
"""

from __future__ import annotations

import numpy as np
import pytest

import tinygrad_attn as tga

CPU_DEVICES = ["cpu", "array_api_strict", "array_api_strict:device1"]
DEVICES = CPU_DEVICES + [pytest.param("cuda", marks=pytest.mark.gpu)]


def pytest_collection_modifyitems(config, items):
    if tga.is_available("cuda"):
        return
    skip = pytest.mark.skip(reason="no CUDA GPU with CuPy here")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(params=DEVICES)
def device(request):
    """Each device name in turn."""
    return request.param


@pytest.fixture(autouse=True)
def _seed():
    tga.manual_seed(0)
    yield


@pytest.fixture
def rng():
    return np.random.default_rng(0)
