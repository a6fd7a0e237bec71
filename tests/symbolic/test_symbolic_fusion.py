"""Elementwise chains of a program as fused GPU kernels: grouping, and the CUDA source
compiled with NVRTC (which needs no GPU)."""

from __future__ import annotations

import re

import numpy as np
import pytest
from nvrtc import compile_cubin, needs_nvrtc

import tinygrad_attn as tga
from tinygrad_attn import Tensor
from tinygrad_attn.symbolic.fusion import elementwise_groups


def _gelu_tanh(x):
    return x * 0.5 * ((x + 0.044715 * x**3) * 0.7978845608).tanh().__add__(1.0)


def _gelu_kernel():
    x = Tensor(np.random.default_rng(0).standard_normal((4, 8)).astype(np.float32))
    w = Tensor(np.random.default_rng(1).standard_normal((8, 8)).astype(np.float32))
    prog = tga.jit.trace(lambda x, w: _gelu_tanh(x @ w).sum(-1), x, w)
    return elementwise_groups(prog)


def test_a_chain_becomes_one_kernel():
    kernels = _gelu_kernel()
    assert len(kernels) == 1  # the matmul and the sum are not elementwise; everything between is
    k = kernels[0]
    assert [op.op for op in k.records].count("mul") == 4 and "tanh" in k.operation
    assert [b.name for b in k.inputs] == ["matmul_1"]  # read once, though six ops read it
    assert k.in_params == "float32 matmul_1" and k.out_params == "float32 out"
    assert k.lines[-1].startswith("out = ") and len(k.lines) == 8


def test_a_sum_of_many_gradients_is_one_expression_of_its_kernel():
    # x read by three consumers: its gradients are summed by one add_n (a variadic op, its
    # binary expression folded left), which joins the elementwise chain around it.
    x = Tensor(np.random.default_rng(0).standard_normal((4, 8)).astype(np.float32), requires_grad=True)
    prog = tga.jit.trace(lambda x: ((x * 2.0).tanh() + x.exp() + (x * 3.0).sin()).sum(), x)
    (k,) = [k for k in elementwise_groups(prog) if any(op.op == "add_n" for op in k.records)]
    assert k.records[-1].op == "add_n" and len(k.records[-1].inputs) == 3
    a, b, c = (x.name for x in k.records[-1].inputs)
    assert k.lines[-1] == f"out = (({a} + {b}) + {c});", k.lines


@needs_nvrtc
def test_the_chain_s_kernel_compiles():
    (k,) = _gelu_kernel()
    status, log, size = compile_cubin(k.cuda_source(), k.name, "sm_80")
    assert status == 0 and size > 0, log


def test_shared_and_broadcast_values_end_a_group(rng):
    x = Tensor(rng.standard_normal((3, 4)))
    b = Tensor(rng.standard_normal((4,)))
    # e is read twice (not inside one tree); (b * 2) has another shape than the output
    prog = tga.jit.trace(lambda x: ((x.exp() + 1.0) * (x.exp() - 1.0) + (b * 2.0).exp()).sum(), x)
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
    prog = tga.jit.trace(lambda x: ((x.exp() + 1.0) * (x.exp() - 1.0) + (b * 2.0).exp()).sum(), x)
    for k in elementwise_groups(prog):
        status, log, _ = compile_cubin(k.cuda_source(), k.name, "sm_80")
        assert status == 0, log


@needs_nvrtc
def test_a_wrong_operation_does_not_compile():
    """The NVRTC check can fail: a kernel whose C is broken is reported."""
    x = Tensor(np.ones((2, 2), np.float32))
    (k,) = elementwise_groups(tga.jit.trace(lambda x: (x.exp() * 2.0).tanh(), x))
    k.lines[-1] = k.lines[-1].replace("tanh(", "tanhh(")
    status, log, _ = compile_cubin(k.cuda_source(), k.name, "sm_80")
    assert status != 0 and "tanhh" in log


def test_a_power_with_a_tensor_exponent_fuses(rng):
    """Fusion reads each op's declared C expression, not a table keyed by op name: the
    tensor power (``pow``) and the constant one (``pow_scalar``) each bring their own."""
    a = Tensor(rng.uniform(0.5, 2.0, (3, 4)).astype(np.float32))
    b = Tensor(rng.uniform(0.5, 2.0, (3, 4)).astype(np.float32))
    (k,) = elementwise_groups(tga.jit.trace(lambda a, b: (a * 2.0) ** b, a, b))
    assert k.lines == ["float mul_1 = a * (float)2.0;", "out = pow(mul_1, b);"]
    (k,) = elementwise_groups(tga.jit.trace(lambda a: (a * 2.0) ** 3.0, a))
    assert k.lines[-1] == "out = pow(mul_1, (float)3.0);"


def test_a_number_takes_the_type_of_the_array_it_meets(rng):
    """``x > 0.5`` compares in x's type (a bool 0.5 would be true: ``x > 1``); a where's
    numbers take the output's type."""
    x = Tensor(rng.standard_normal((3, 4)))
    (k,) = elementwise_groups(tga.jit.trace(lambda x: tga.where(x.exp() > 0.5, 0.25, x), x))
    assert "exp_1 > (double)0.5" in k.operation and "(double)0.25" in k.operation


def _elementwise_ops() -> list[type]:
    from tinygrad_attn import ops  # noqa: PLC0415
    from tinygrad_attn.tensors import _tensor  # noqa: PLC0415

    found = [c for c in ops.OPS.values() if getattr(c, "elementwise", None)]
    found += [c for c in vars(_tensor).values() if isinstance(c, type) and getattr(c, "elementwise", None)]
    return list(dict.fromkeys(found))


def test_the_ops_that_declare_an_expression():
    names = {c.op_name_of() for c in _elementwise_ops()}
    assert {"add", "mul", "pow", "pow_scalar", "exp", "tanh", "where", "greater", "sin", "atan2"} <= names
    assert not {"sum", "matmul", "reshape", "softmax"} & names  # (not elementwise)


@needs_nvrtc
@pytest.mark.slow  # (over half a second: the full suite runs it, the fast loop does not)
def test_every_declared_expression_compiles():
    """A kernel of each op that declares ``elementwise``, on float32 and float64 operands,
    compiles: a wrong expression on any op class fails here, not on a GPU user's machine."""
    from tinygrad_attn.runtime.backend import get_device  # noqa: PLC0415
    from tinygrad_attn.symbolic.fusion import _kernel  # noqa: PLC0415
    from tinygrad_attn.symbolic.program import Buffer, OpRecord  # noqa: PLC0415

    dev = get_device("cpu")
    for cls in _elementwise_ops():
        n = 1 + max(int(c) for c in "012" if "{" + c + "}" in cls.elementwise)
        for dtype in (np.float32, np.float64):
            arrays = [np.full((4,), 0.5, dtype) for _ in range(n)]
            fn = object.__new__(cls)
            fn.args, fn.ctx = 2.0, None  # (the exponent of pow_scalar; no other op reads args)
            with np.errstate(all="ignore"):  # (only the output's dtype matters: acosh(0.5) may be NaN)
                out = np.asarray(fn.forward(dev.ops, *arrays))
            ins = [Buffer(f"x{i}", (4,), np.dtype(dtype), dev, "arg", 0) for i in range(n)]
            rec = OpRecord("call", cls.op_name_of(), ins, [Buffer("y", (4,), out.dtype, dev, "value", 0)], fn=fn)
            k = _kernel([rec], 0)
            status, log, _ = compile_cubin(k.cuda_source(), k.name, "sm_80")
            assert status == 0, (cls.op_name_of(), dtype, k.operation, log)


def _cluster_nodes(src: str, label: str) -> set[str]:
    """The node ids drawn directly inside the DOT cluster whose label holds ``label``."""
    for block in src.split("subgraph ")[1:]:
        head, _, body = block.partition("\n")
        if label in body.split("\n\t\t\tnode", 1)[0] or label in head:
            return set(re.findall(r"^\t+(op\d+) \[", body.split("subgraph ")[0], re.M))
    return set()


def test_the_program_picture_frames_each_fusion_group():
    x = Tensor(np.random.default_rng(0).standard_normal((4, 8)).astype(np.float32))
    w = Tensor(np.random.default_rng(1).standard_normal((8, 8)).astype(np.float32), requires_grad=True)
    prog = tga.jit.trace(lambda x, w: _gelu_tanh(x @ w).sum(), x, w)
    groups = prog.fusion_groups()
    assert len(groups) == 3  # gelu's forward chain and two chains of its backward
    src = prog.graph().source
    assert src.count(": one GPU kernel, ") == len(groups) and "3 elementwise chains fusable" in src
    at = {id(op): f"op{i}" for i, op in enumerate(prog.ops)}
    for k in groups:
        assert _cluster_nodes(src, k.name) == {at[id(op)] for op in k.records}
    assert "GPU kernel" not in prog.graph(kernels=False).source
