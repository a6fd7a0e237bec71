"""Compile CUDA C with NVRTC through ctypes: checks kernel sources on machines with no GPU.

NVRTC ships as a wheel (``nvidia-cuda-nvrtc-cu12``) that needs no driver.
"""

from __future__ import annotations

import ctypes
import glob
import os

import pytest


def find_libnvrtc() -> str | None:
    try:
        import nvidia.cuda_nvrtc as pkg  # noqa: PLC0415
    except ImportError:
        return None
    for base in list(getattr(pkg, "__path__", [])):
        hits = sorted(glob.glob(os.path.join(base, "lib", "libnvrtc.so*")))
        hits = [h for h in hits if "alt" not in os.path.basename(h) and "builtins" not in os.path.basename(h)]
        if hits:
            return hits[0]
    return None


def compile_cubin(source: str, name: str, arch: str) -> tuple[int, str, int]:
    """Compile ``source`` for ``arch`` (e.g. "sm_90"); returns (status, log, cubin size)."""
    path = find_libnvrtc()
    if path is None:
        raise RuntimeError("NVRTC is not installed: `pip install nvidia-cuda-nvrtc-cu12` (Linux x86-64)")
    lib = ctypes.CDLL(path)
    prog = ctypes.c_void_p()
    status = lib.nvrtcCreateProgram(ctypes.byref(prog), source.encode(), f"{name}.cu".encode(), 0, None, None)
    if status:
        return status, "nvrtcCreateProgram failed", 0
    opts = [f"--gpu-architecture={arch}".encode(), b"-std=c++14"]
    status = lib.nvrtcCompileProgram(prog, len(opts), (ctypes.c_char_p * len(opts))(*opts))
    size = ctypes.c_size_t()
    lib.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
    buf = ctypes.create_string_buffer(size.value)
    lib.nvrtcGetProgramLog(prog, buf)
    cubin = ctypes.c_size_t()
    if status == 0:
        lib.nvrtcGetCUBINSize(prog, ctypes.byref(cubin))
    lib.nvrtcDestroyProgram(ctypes.byref(prog))
    return status, buf.value.decode(errors="replace"), cubin.value


#: Marks a test that compiles CUDA sources: skipped where NVRTC is not installed (a 217 MB
#: wheel the dev extra leaves out), except where ``TINYGRAD_ATTN_REQUIRE_NVRTC`` is set (CI),
#: where a missing NVRTC fails.
needs_nvrtc = pytest.mark.skipif(
    find_libnvrtc() is None and not os.environ.get("TINYGRAD_ATTN_REQUIRE_NVRTC"),
    reason="NVRTC is not installed: `pip install nvidia-cuda-nvrtc-cu12` (Linux x86-64) compiles the CUDA "
    "kernels' sources here without a GPU",
)
