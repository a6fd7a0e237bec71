"""``tga.cuda`` without a CUDA device answers as PyTorch's CPU build: every function of
``torch.cuda`` that scripts call with no argument (memory figures, capability questions,
synchronize, seeds) returns PyTorch's value or raises an instance of its exception class,
and the legacy ``torch.cuda.FloatTensor`` names exist (scripts name them in expressions)."""

from __future__ import annotations

import pytest

import tinygrad_attn as tga

torch = pytest.importorskip("torch")

pytestmark = pytest.mark.skipif(torch.cuda.is_available() or tga.cuda.is_available(), reason="checks the answers "
                                "without a CUDA device (a GPU machine runs tests/backend/test_cuda_kernels.py)")  # fmt: skip

NO_ARGUMENT = [
    "is_available", "is_initialized", "device_count", "is_bf16_supported", "is_tf32_supported", "current_device",
    "synchronize", "get_device_name", "get_device_capability", "mem_get_info", "memory_allocated",
    "max_memory_allocated", "memory_reserved", "max_memory_reserved", "memory_cached", "max_memory_cached",
    "memory_stats", "empty_cache", "get_arch_list", "get_gencode_flags", "seed", "seed_all", "initial_seed",
    "get_rng_state_all",
]  # fmt: skip


def _outcome(fn):
    try:
        return fn(), None
    except Exception as e:  # noqa: BLE001 - compared below
        return None, e


@pytest.mark.parametrize("name", NO_ARGUMENT)
def test_a_cuda_question_is_answered_as_pytorchs_cpu_build(name):
    want, want_err = _outcome(getattr(torch.cuda, name))
    got, got_err = _outcome(getattr(tga.cuda, name))
    if want_err is not None:
        assert isinstance(got_err, type(want_err)), f"{name}: PyTorch raises {want_err!r}, ours {got_err!r}"
    else:
        assert got_err is None, f"{name}: PyTorch returns {want!r}, ours raises {got_err!r}"
        assert got == want or (not got and not want), f"{name}: {got!r}, PyTorch's {want!r}"


@pytest.mark.parametrize("name", ["FloatTensor", "DoubleTensor", "HalfTensor", "LongTensor", "IntTensor", "ByteTensor",
                                  "BoolTensor", "OutOfMemoryError"])  # fmt: skip
def test_legacy_cuda_names_exist(name):
    assert hasattr(tga.cuda, name)


def test_a_cuda_typed_tensor_needs_cuda_and_a_cpu_tensor_is_not_one():
    with pytest.raises(AssertionError, match="cuda"):
        tga.cuda.FloatTensor([1.0])
    assert not isinstance(tga.ones(2), tga.cuda.FloatTensor)
    assert isinstance(tga.ones(2), tga.FloatTensor)


def test_out_of_memory_error_is_a_runtime_error():
    assert issubclass(tga.cuda.OutOfMemoryError, RuntimeError)
