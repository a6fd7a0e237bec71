"""Ops compute without NumPy's floating-point warnings, as PyTorch's do.

PyTorch computes ``log(0)``, ``0 / 0``, ``sqrt(-1)`` and overflows to ``inf`` without a word;
NumPy warns ("divide by zero encountered in log"), and under ``warnings.simplefilter("error")``
raises. The engine sets NumPy's error state to "ignore" around the computations it runs (an
op's forward, a backward pass, a replay, an in-place write) and only there: a user's own NumPy
code keeps its warnings.

``FP_STATE.set(QUIET)`` returns a token for ``FP_STATE.reset``. With NumPy 2 the state is NumPy's
context variable (a set and a reset cost about 0.1 µs, so every op can afford them); with older
NumPy, ``np.seterr``.

>>> import tinygrad_attn as tga
>>> tga.tensor([0.0]).log()  # no RuntimeWarning
tensor([-inf])
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import numpy as np


class _Seterr:
    """NumPy before 2.0: the process-wide state, through ``np.seterr``."""

    @staticmethod
    def set(_quiet: Any) -> dict:
        return np.seterr(all="ignore")

    @staticmethod
    def reset(old: dict) -> None:
        np.seterr(**old)


def _state() -> tuple[Any, Any]:
    try:
        from numpy._core import _ufunc_config as config

        var = config._extobj_contextvar
    except (ImportError, AttributeError):
        return _Seterr(), None
    with np.errstate(all="ignore"):
        return var, var.get()


FP_STATE, QUIET = _state()


@contextlib.contextmanager
def quiet() -> Iterator[None]:
    """NumPy's floating-point warnings off for the block (the engine's computations)."""
    token = FP_STATE.set(QUIET)
    try:
        yield
    finally:
        FP_STATE.reset(token)
