"""The CUDA kernels of the fused ops: every source compiles for sm_80 and sm_90 (NVRTC, no
GPU needed), and on a GPU each kernel equals the NumPy formula.

NVRTC is a 217 MB wheel, so the dev extra does not pull it onto every CPU machine: the
compile checks run where ``nvidia-cuda-nvrtc-cu12`` is installed (CI installs it and sets
``TINYGRAD_ATTN_REQUIRE_NVRTC=1``, so there a missing NVRTC fails instead of skipping)."""

from __future__ import annotations

import numpy as np
import pytest
from nvrtc import compile_cubin, needs_nvrtc

import tinygrad_attn as tga
from tinygrad_attn import Tensor
from tinygrad_attn.ops.cuda_kernels import all_sources


@needs_nvrtc
@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
@pytest.mark.parametrize("name", sorted(all_sources()))
def test_kernel_source_compiles(name, arch):
    status, log, cubin_size = compile_cubin(all_sources()[name], name, arch)
    assert status == 0, log
    assert cubin_size > 0


@needs_nvrtc
def test_a_broken_source_is_caught():
    status, log, _ = compile_cubin('extern "C" __global__ void k(float* x) { x[0] = undefined_name; }', "k", "sm_90")
    assert status != 0 and "undefined_name" in log


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_kernels_match_numpy_on_gpu(dtype):
    rng = np.random.default_rng(0)
    a = rng.standard_normal((3, 5, 300)).astype(dtype)
    g = rng.standard_normal(a.shape).astype(dtype)
    tol = 1e-5 if dtype == np.float32 else 1e-12
    for f in (lambda t: t.softmax(-1), lambda t: t.gelu()):
        xg = Tensor(a, device="cuda", requires_grad=True)
        xc = Tensor(a, requires_grad=True)
        yg, yc = f(xg), f(xc)
        np.testing.assert_allclose(yg.detach().numpy(), yc.detach().numpy(), atol=tol, rtol=tol)
        yg.backward(Tensor(g, device="cuda"))
        yc.backward(Tensor(g))
        np.testing.assert_allclose(xg.grad.detach().numpy(), xc.grad.detach().numpy(), atol=tol, rtol=tol)
    assert tga.get_device("cuda").ops.kernels is not None
