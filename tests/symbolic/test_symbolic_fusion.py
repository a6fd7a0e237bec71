"""Elementwise chains of a program as fused GPU kernels: grouping, and the CUDA source
compiled with NVRTC (which needs no GPU)."""

from __future__ import annotations

import numpy as np
from nvrtc import compile_cubin, needs_nvrtc

import tinygrad_attn as tga
from tinygrad_attn import Tensor
from tinygrad_attn.symbolic.fusion import elementwise_groups


def _gelu_tanh(x):
    return x * 0.5 * ((x + 0.044715 * x**3) * 0.7978845608).tanh().__add__(1.0)


def _gelu_kernel():
    x = Tensor(np.random.default_rng(0).standard_normal((4, 8)).astype(np.float32))
    w = Tensor(np.random.default_rng(1).standard_normal((8, 8)).astype(np.float32))
    prog = tga.trace(lambda x, w: _gelu_tanh(x @ w).sum(-1), x, w)
    return elementwise_groups(prog)


def test_a_chain_becomes_one_kernel():
    kernels = _gelu_kernel()
    assert len(kernels) == 1  # the matmul and the sum are not elementwise; everything between is
    k = kernels[0]
    assert [op.op for op in k.records].count("mul") == 4 and "tanh" in k.operation
    assert [b.name for b in k.inputs] == ["matmul_1"]  # read once, though six ops read it
    assert k.in_params == "float32 matmul_1" and k.out_params == "float32 out"
    assert k.lines[-1].startswith("out = ") and len(k.lines) == 8


@needs_nvrtc
def test_the_chain_s_kernel_compiles():
    (k,) = _gelu_kernel()
    status, log, size = compile_cubin(k.cuda_source(), k.name, "sm_80")
    assert status == 0 and size > 0, log


def test_shared_and_broadcast_values_end_a_group(rng):
    x = Tensor(rng.standard_normal((3, 4)))
    b = Tensor(rng.standard_normal((4,)))
    # e is read twice (not inside one tree); (b * 2) has another shape than the output
    prog = tga.trace(lambda x: ((x.exp() + 1.0) * (x.exp() - 1.0) + (b * 2.0).exp()).sum(), x)
    groups = elementwise_groups(prog)
    for k in groups:
        inner = {id(op.outputs[0]) for op in k.records[:-1]}
        readers = [x for op in prog.ops for x in op.inputs if id(x) in inner]
        assert len(readers) == len(inner)  # every inner value is read once, inside the group
        assert all(op.outputs[0].shape == k.output.shape for op in k.records)
    assert any("where" not in k.operation and "exp" in k.operation for k in groups)


@needs_nvrtc
def test_every_group_s_kernel_compiles(rng):
    x = Tensor(rng.standard_normal((3, 4)))
    b = Tensor(rng.standard_normal((4,)))
    prog = tga.trace(lambda x: ((x.exp() + 1.0) * (x.exp() - 1.0) + (b * 2.0).exp()).sum(), x)
    for k in elementwise_groups(prog):
        status, log, _ = compile_cubin(k.cuda_source(), k.name, "sm_80")
        assert status == 0, log


@needs_nvrtc
def test_a_wrong_operation_does_not_compile():
    """The NVRTC check can fail: a kernel whose C is broken is reported."""
    x = Tensor(np.ones((2, 2), np.float32))
    (k,) = elementwise_groups(tga.trace(lambda x: (x.exp() * 2.0).tanh(), x))
    k.lines[-1] = k.lines[-1].replace("tanh(", "tanhh(")
    status, log, _ = compile_cubin(k.cuda_source(), k.name, "sm_80")
    assert status != 0 and "tanhh" in log
