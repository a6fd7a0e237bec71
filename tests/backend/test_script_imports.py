"""The top of a PyTorch script: every ``torch.*`` module path it imports exists here under
``tinygrad_attn.*`` with PyTorch's names; flags read back as set; what is out of scope (ONNX
export, distributed training, the profiler, fx, CUDA autocast) raises a
``NotImplementedError`` naming the function when called, never at import."""

from __future__ import annotations

import importlib
import pkgutil
import re
import warnings

import numpy as np
import pytest

import tinygrad_attn as tga
from tinygrad_attn.tensors import printing

torch = pytest.importorskip("torch")

PATHS = ["jit", "onnx", "nn.modules", "nn.parameter", "backends", "backends.cudnn", "backends.cuda", "backends.mps",
         "backends.cpu", "accelerator", "distributed", "profiler", "fx", "amp", "cuda.amp", "nn.init", "nn.functional",
         "nn.utils", "nn.utils.rnn"]  # fmt: skip


@pytest.mark.parametrize("path", PATHS)
def test_module_paths_import_as_in_torch(path):
    importlib.import_module(f"torch.{path}")  # (the path is PyTorch's)
    mod = importlib.import_module(f"tinygrad_attn.{path}")
    assert mod is not None


def _torch_nn_files():
    return [m.name for m in pkgutil.iter_modules(torch.nn.modules.__path__) if not m.name.startswith("_")]


@pytest.mark.parametrize("file", _torch_nn_files())
def test_nn_modules_files_hold_our_classes_at_torchs_paths(file):
    theirs = importlib.import_module(f"torch.nn.modules.{file}")
    defined = [
        n
        for n in dir(theirs)
        if isinstance(getattr(theirs, n), type) and getattr(theirs, n).__module__ == theirs.__name__
    ]
    ours_nn = [n for n in defined if hasattr(tga.nn, n)]
    if not ours_nn:  # (no class of that file here: no module either)
        return
    ours = importlib.import_module(f"tinygrad_attn.nn.modules.{file}")
    for name in ours_nn:  # every class of ours that PyTorch keeps in that file is there, the same object
        assert getattr(ours, name) is getattr(tga.nn, name), (file, name)
        assert getattr(tga.nn.modules, name) is getattr(tga.nn, name)
    assert set(ours.__all__) <= set(dir(theirs)), (
        f"names at a path PyTorch does not have: {set(ours.__all__) - set(dir(theirs))}"
    )


def test_a_script_top_runs():
    code = """
import tinygrad_attn as torch
import tinygrad_attn.nn as nn
import tinygrad_attn.distributed as dist
from tinygrad_attn.nn.modules.linear import Linear
from tinygrad_attn.nn.modules.module import Module
from tinygrad_attn.nn.modules.rnn import LSTM
from tinygrad_attn.nn.parameter import Parameter
from tinygrad_attn.cuda.amp import GradScaler, autocast
from tinygrad_attn.profiler import record_function
torch.backends.cudnn.benchmark = True
torch.backends.cudnn.deterministic = True
torch.backends.cuda.matmul.allow_tf32 = True
torch.use_deterministic_algorithms(True)
torch.set_float32_matmul_precision("high")
torch.set_printoptions(precision=3)
device = torch.accelerator.current_accelerator() or "cpu"
if dist.is_available() and dist.is_initialized():
    raise SystemExit("not reached")
lstm = LSTM(3, 4)
lstm.flatten_parameters()
with torch.autocast("cpu", enabled=False), record_function("step"):
    out = Linear(2, 3)(torch.ones(1, 2))
"""
    try:
        exec(compile(code, "<script>", "exec"), {})
    finally:
        _reset_globals()


def _reset_globals():
    tga.backends.cudnn.benchmark = tga.backends.cudnn.deterministic = False
    tga.use_deterministic_algorithms(False)
    tga.set_float32_matmul_precision("highest")
    printing.set_printoptions(profile="default")


@pytest.fixture
def restored():
    yield
    _reset_globals()


def test_cudnn_flags_default_as_torch_and_read_back(restored):
    for name in ("enabled", "deterministic", "benchmark", "allow_tf32"):
        default = getattr(torch.backends.cudnn, name)
        assert getattr(tga.backends.cudnn, name) == default, name
        setattr(tga.backends.cudnn, name, not default)
        assert getattr(tga.backends.cudnn, name) == (not default)
        setattr(tga.backends.cudnn, name, default)
    with tga.backends.cudnn.flags(enabled=True, benchmark=True, deterministic=True, allow_tf32=False):
        assert tga.backends.cudnn.benchmark and tga.backends.cudnn.deterministic and not tga.backends.cudnn.allow_tf32
    assert not tga.backends.cudnn.benchmark and tga.backends.cudnn.allow_tf32
    assert (
        tga.backends.cudnn.is_available() is False
        and tga.backends.mps.is_available() is torch.backends.mps.is_available()
    )
    assert tga.backends.cuda.is_built() == tga.cuda.is_available()


def test_matmul_precision_and_tf32_are_one_setting_as_in_torch(restored):
    assert tga.get_float32_matmul_precision() == "highest" and tga.backends.cuda.matmul.allow_tf32 is False
    tga.backends.cuda.matmul.allow_tf32 = True
    assert tga.get_float32_matmul_precision() == "high"
    tga.set_float32_matmul_precision("medium")
    assert tga.backends.cuda.matmul.allow_tf32 is True and tga.get_float32_matmul_precision() == "medium"
    with pytest.warns(UserWarning, match="bogus is not one of"):
        tga.set_float32_matmul_precision("bogus")
    assert tga.get_float32_matmul_precision() == "medium"
    tga.set_float32_matmul_precision("highest")
    assert tga.backends.cuda.matmul.allow_tf32 is False


def test_deterministic_algorithms_read_back_and_check_as_torch(restored):
    assert tga.are_deterministic_algorithms_enabled() == torch.are_deterministic_algorithms_enabled()
    tga.use_deterministic_algorithms(True, warn_only=True)
    assert tga.are_deterministic_algorithms_enabled() and tga.is_deterministic_algorithms_warn_only_enabled()
    for lib in (tga, torch):
        with pytest.raises(TypeError):
            lib.use_deterministic_algorithms(1)


def test_set_printoptions(restored):
    x = tga.tensor([1.23456789, 100.5])
    tga.set_printoptions(precision=2)
    assert "1.23," in repr(x) and "1.2346" not in repr(x)
    tga.set_printoptions(profile="default")
    assert "1.2346" in repr(x)
    tga.set_printoptions(sci_mode=True)
    assert "e+00" in repr(x)
    tga.set_printoptions(profile="full")
    assert "..." not in repr(tga.arange(3000))
    tga.set_printoptions(profile="short", sci_mode=False)
    assert "..." in repr(tga.arange(3000)) and "1.23," in repr(x)


def test_default_device_as_torch():
    assert str(tga.get_default_device()) == str(torch.get_default_device())
    assert isinstance(tga.get_default_device(), tga.device)


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda: tga.onnx.export(None, None, "m.onnx"), "onnx.export"),
        (lambda: tga.distributed.init_process_group("nccl"), "distributed.init_process_group"),
        (lambda: tga.distributed.get_rank(), "distributed.get_rank"),
        (lambda: tga.distributed.all_reduce(tga.ones(1)), "distributed.all_reduce"),
        (lambda: tga.profiler.profile(activities=[tga.profiler.ProfilerActivity.CPU]), "profiler.profile"),
        (lambda: tga.fx.symbolic_trace(tga.nn.Linear(2, 2)), "fx.symbolic_trace"),
        (lambda: tga.jit.script(tga.nn.Linear(2, 2)), "jit.script"),
    ],  # fmt: skip
)
def test_out_of_scope_raises_naming_the_function_when_called(call, name):
    with pytest.raises(NotImplementedError, match="^" + re.escape(name) + ":"):
        call()


def test_distributed_answers_the_single_process_questions():
    assert tga.distributed.is_available() is False and tga.distributed.is_initialized() is False
    assert set(tga.distributed.__all__) <= set(dir(torch.distributed))


def test_fx_wrap_and_record_function_leave_code_as_it_is():
    def f(x):
        return x

    assert tga.fx.wrap(f) is f and tga.fx.wrap("f") == "f"
    with tga.profiler.record_function("block") as r:
        assert r is not None

    @tga.profiler.record_function("decorated")
    def g():
        return 3

    assert g() == 3


def test_accelerator_as_torch_here():
    theirs = torch.accelerator.current_accelerator()
    ours = tga.accelerator.current_accelerator()
    assert (ours is None) == (theirs is None or not tga.cuda.is_available())
    assert tga.accelerator.is_available() == tga.cuda.is_available()
    assert tga.accelerator.device_count() == tga.cuda.device_count()


@pytest.mark.parametrize("cls", ["RNN", "LSTM", "GRU"])
def test_flatten_parameters_is_a_no_op(cls):
    m = getattr(tga.nn, cls)(3, 4)
    before = {k: v.detach().numpy().copy() for k, v in m.state_dict().items()}
    assert m.flatten_parameters() is None and getattr(torch.nn, cls)(3, 4).flatten_parameters() is None
    assert all(np.array_equal(v.detach().numpy(), before[k]) for k, v in m.state_dict().items())


def test_autocast_disabled_runs_the_block_and_cuda_without_a_gpu_disables_itself():
    with tga.autocast("cpu", enabled=False):
        y = tga.ones(2) * 2
    assert y.dtype == tga.float32

    @tga.amp.autocast("cpu", enabled=False)
    def f():
        return 5

    assert f() == 5
    if not tga.cuda.is_available():
        with pytest.warns(UserWarning, match="CUDA is not available"):
            ctx = tga.autocast("cuda")
        with ctx:
            pass
    with pytest.raises(RuntimeError):
        tga.autocast("tpu")
    with pytest.raises(ValueError):
        tga.autocast(3)


def _training(lib, scaler, steps, blowup_at):
    lib.manual_seed(0)
    w = lib.nn.Parameter(lib.tensor(np.linspace(-1.0, 1.0, 6, dtype=np.float32).reshape(2, 3)))
    opt = lib.optim.SGD([w], lr=0.1)
    scales, values = [], []
    for i in range(steps):
        opt.zero_grad()
        x = lib.tensor(np.full((4, 2), 1e38 if i in blowup_at else 0.5, dtype=np.float32))  # (1e38 ** 2: inf)
        loss = (x @ w).square().mean()
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        scales.append(scaler.get_scale())
        values.append(w.detach().numpy().copy())
    return scales, values, scaler.state_dict()


# (the steps that overflow on purpose: NumPy warns where PyTorch is silent)
@pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning", "ignore:invalid value:RuntimeWarning")
def test_grad_scaler_as_torchs_on_the_cpu():
    kw = dict(init_scale=2.0**4, growth_factor=2.0, backoff_factor=0.5, growth_interval=2)
    ours = _training(tga, tga.amp.GradScaler("cpu", **kw), 8, {3, 4})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = _training(torch, torch.amp.GradScaler("cpu", **kw), 8, {3, 4})
    assert ours[0] == theirs[0] and ours[0][3] < ours[0][2]  # (the steps with overflow backed the scale off)
    for a, b in zip(ours[1], theirs[1]):
        np.testing.assert_allclose(a, b, rtol=1e-6)
    assert ours[2] == theirs[2]


def test_grad_scaler_disabled_is_a_pass_through():
    s = tga.amp.GradScaler(enabled=False)
    t = tga.ones(2)
    assert s.scale(t) is t and s.get_scale() == 1.0 and not s.is_enabled() and s.state_dict() == {}
    with pytest.raises(RuntimeError, match="already been called"):
        g = tga.amp.GradScaler("cpu")
        opt = tga.optim.SGD([tga.nn.Parameter(tga.ones(1))], lr=0.1)
        g.unscale_(opt)
        g.unscale_(opt)
