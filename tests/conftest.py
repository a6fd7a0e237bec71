"""Shared fixtures: every op test runs on each array namespace.

- ``cpu``: NumPy.
- ``array_api_strict``: the array API reference namespace (float64 by default); it
  rejects NumPy-only calls.
- ``array_api_strict:device1``: the same on a second device; any op that falls back to
  NumPy or mixes devices fails there.
- ``cuda``: CuPy on a GPU, marked ``gpu`` and skipped where there is none.
"""

from __future__ import annotations

import os
import sys

# The tests live in folders named after the package's parts (tests/engine, tests/nn, ...); their
# shared modules (helpers, opinfo, torch_oracle, modelcheck, nvrtc, tutorials) stay here in tests/,
# importable from every folder.
_HERE = os.path.dirname(os.path.abspath(__file__))
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)

# Recent hypothesis releases (6.170 seen) link the settings of each call of one parametrized @given test to
# the previous call's, and read them recursively: the op table's ~1000 cases of one test (tests/ops/test_oracle.py)
# passed Python's default limit of 1000 frames (RecursionError in hypothesis/_settings.py). A higher limit
# lets the chain be read; it costs nothing where no recursion is that deep.
sys.setrecursionlimit(max(sys.getrecursionlimit(), 20000))

# One BLAS thread: the suite's matrices are small, and a BLAS pool that spins while
# another process holds the other core makes runs slow and their timing erratic.
# Subprocesses (the example scripts) inherit the setting.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

import tinygrad_attn as tga  # noqa: E402

try:  # NumPy may already be loaded (by a plugin) with its pool started: limit it too
    from threadpoolctl import threadpool_limits

    threadpool_limits(1)
except ImportError:  # threadpoolctl comes with the dev extra; without it the env vars still apply
    pass

CPU_DEVICES = ["cpu", "array_api_strict", "array_api_strict:device1"]
DEVICES = CPU_DEVICES + [pytest.param("cuda", marks=pytest.mark.gpu)]


# The array-API devices check portability (no NumPy-only call, no mixed devices), which a change
# to the maths rarely breaks: the full suite (and CI) runs them, the fast loop (-m "not slow")
# leaves them out, whichever way a test takes its device.
SLOW_DEVICES = ("array_api_strict", "array_api_strict:device1")


def pytest_configure(config):
    # The fast loop (-m "not slow") also draws fewer random examples per op (tests/ops/test_oracle.py
    # reads this); the full suite, which CI runs, draws them all.
    if (config.getoption("markexpr", "") or "").replace(" ", "") == "notslow":
        os.environ["TINYGRAD_ATTN_FAST_LOOP"] = "1"


@pytest.hookimpl(tryfirst=True)  # before -m "not slow" deselects
def pytest_collection_modifyitems(config, items):
    for item in items:
        params = getattr(item, "callspec", None)
        if params is not None and any(isinstance(v, str) and v in SLOW_DEVICES for v in params.params.values()):
            item.add_marker(pytest.mark.slow)
    if tga.is_available("cuda"):
        return
    if os.environ.get("TINYGRAD_ATTN_FAST_LOOP"):  # the fast loop does not even list what would skip
        gpu = [item for item in items if "gpu" in item.keywords]
        if gpu:
            config.hook.pytest_deselected(items=gpu)
            items[:] = [item for item in items if "gpu" not in item.keywords]
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
