"""``tga.multiprocessing`` and ``tga.cpu``: PyTorch's module paths, names and behaviour."""

import importlib

import numpy as np
import pytest

import tinygrad_attn as tga

mp = tga.multiprocessing


def _child(i, q, scale):
    q.put((i, float((tga.ones(3) * scale * i).sum())))


def _failing(i):
    if i == 1:
        raise ValueError("child one fails")


def test_spawn_runs_each_index_and_join_waits():
    ctx = mp.get_context("fork")
    q = ctx.Queue()
    mp.spawn(_child, args=(q, 2.0), nprocs=3, start_method="fork")
    got = sorted(q.get(timeout=30) for _ in range(3))
    assert got == [(0, 0.0), (1, 6.0), (2, 12.0)]


def test_spawn_raises_the_childs_error_with_its_traceback():
    with pytest.raises(mp.ProcessRaisedException, match="child one fails"):
        mp.spawn(_failing, nprocs=2, start_method="fork")


def test_start_processes_without_join_gives_a_context():
    ctx = mp.start_processes(_failing, nprocs=1, join=False, start_method="fork")
    assert len(ctx.pids()) == 1
    while not ctx.join():
        pass


def test_sharing_strategies():
    assert mp.get_sharing_strategy() in mp.get_all_sharing_strategies()
    mp.set_sharing_strategy("file_system")
    try:
        assert mp.get_sharing_strategy() == "file_system"
    finally:
        mp.set_sharing_strategy("file_descriptor")
    with pytest.raises(AssertionError):
        mp.set_sharing_strategy("shared_memory_please")


def test_a_tensor_goes_through_a_queue_with_its_values():
    ctx = mp.get_context("fork")
    q = ctx.Queue()
    t = tga.arange(6.0).reshape(2, 3)
    q.put(t)
    back = q.get(timeout=30)
    np.testing.assert_array_equal(back.detach().numpy(), t.detach().numpy())


@pytest.mark.parametrize("module", ["multiprocessing", "cpu"])
def test_the_names_pytorch_has(module):
    pytest.importorskip("torch")
    theirs = importlib.import_module(f"torch.{module}")
    ours = importlib.import_module(f"tinygrad_attn.{module}")
    skip = {"torch", "sys", "multiprocessing", "reductions", "init_reductions", "amp", "lru_cache", "Any", "Mapping",
            "MappingProxyType", "AbstractContextManager", "ENV_VAR_PARALLEL_START", "SpawnContext", "Event"}  # fmt: skip
    missing = [n for n in dir(theirs) if not n.startswith("_") and n not in skip and not hasattr(ours, n)]
    assert not missing
    assert getattr(tga, module) is ours


def test_cpu_device_module():
    torch = pytest.importorskip("torch")
    for name in ("is_available", "device_count", "current_device", "is_initialized"):
        assert getattr(tga.cpu, name)() == getattr(torch.cpu, name)()
    tga.cpu.synchronize()
    with tga.cpu.stream(tga.cpu.current_stream()):
        pass
