"""tga.set_num_threads / tga.get_num_threads: the BLAS threads of this process."""

from __future__ import annotations

import subprocess
import sys

import pytest
from threadpoolctl import threadpool_info

import tinygrad_attn as tga
from tinygrad_attn.runtime import threads


def _blas_threads() -> set[int]:
    return {lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"}


@pytest.fixture
def restore_threads():
    before = tga.get_num_threads()
    yield
    tga.set_num_threads(before)


def test_set_and_get_act_on_the_blas_library(restore_threads):
    tga.set_num_threads(2)
    assert tga.get_num_threads() == 2 and _blas_threads() == {2}
    tga.set_num_threads(1)
    assert tga.get_num_threads() == 1 and _blas_threads() == {1}


@pytest.mark.slow  # (over a third of a second, or a new interpreter: not in the fast loop)
def test_the_default_is_the_blas_librarys_own():
    # In a fresh process with no thread variables set, the library's choice stands.
    code = "import tinygrad_attn as t, threadpoolctl as c; t.Tensor([1.0]); print(t.get_num_threads(), " \
           "max(i['num_threads'] for i in c.threadpool_info() if i['user_api'] == 'blas'))"  # fmt: skip
    env = {"PATH": "", "PYTHONPATH": ":".join(sys.path)}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    ours, blas = out.stdout.split()
    assert ours == blas


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, "2"])
def test_bad_counts_are_refused(bad):
    with pytest.raises(ValueError, match=r"set_num_threads: .*int >= 1"):
        tga.set_num_threads(bad)


def test_no_blas_pool_is_named(monkeypatch):
    monkeypatch.setattr(threads, "_blas_pools", lambda: [])
    with pytest.raises(RuntimeError, match="no BLAS library.*OMP_NUM_THREADS"):
        tga.set_num_threads(1)
    assert tga.get_num_threads() == 1
