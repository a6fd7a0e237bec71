"""CUDA kernels for the fused ops on CuPy: one pass over memory where NumPy-style code makes several.

The sources are plain CUDA C, compiled by CuPy (NVRTC) the first time a CUDA device
runs the op. The NumPy formulas in :mod:`tinygrad_attn.ops.fused` are the reference:
the GPU tests compare the two, and CI compiles every source for sm_80 and sm_90 with
NVRTC alone (no GPU needed), so a syntax or type error cannot reach a GPU user.

Row kernels (softmax and its backward) take a contiguous ``(rows, cols)`` view, one
thread block per row, with shared-memory tree reductions.
"""

from __future__ import annotations

from typing import Any

_TYPES = {"float32": ("float", "f32"), "float64": ("double", "f64")}
BLOCK = 256  # threads per row block; a power of two for the tree reductions

_ROW_REDUCE = r"""
__device__ __forceinline__ T block_reduce(T v, T* buf, const bool take_max) {
    buf[threadIdx.x] = v;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) {
            T o = buf[threadIdx.x + s];
            buf[threadIdx.x] = take_max ? (o > buf[threadIdx.x] ? o : buf[threadIdx.x]) : buf[threadIdx.x] + o;
        }
        __syncthreads();
    }
    T r = buf[0];
    __syncthreads();
    return r;
}
"""

_SOURCES = {
    "softmax_rows": r"""
extern "C" __global__ void softmax_rows_SUFFIX(const T* __restrict__ x, T* __restrict__ y, const int cols) {
    __shared__ T buf[BLOCK];
    const long long base = (long long)blockIdx.x * cols;
    T m = -HUGE_T;
    for (int j = threadIdx.x; j < cols; j += blockDim.x) m = x[base + j] > m ? x[base + j] : m;
    m = block_reduce(m, buf, true);
    T s = 0;
    for (int j = threadIdx.x; j < cols; j += blockDim.x) {
        T e = exp(x[base + j] - m);
        y[base + j] = e;
        s += e;
    }
    const T inv = (T)1 / block_reduce(s, buf, false);
    for (int j = threadIdx.x; j < cols; j += blockDim.x) y[base + j] *= inv;
}
""",
    "softmax_backward_rows": r"""
extern "C" __global__ void softmax_backward_rows_SUFFIX(const T* __restrict__ g, const T* __restrict__ y,
                                                        T* __restrict__ gx, const int cols) {
    __shared__ T buf[BLOCK];
    const long long base = (long long)blockIdx.x * cols;
    T s = 0;
    for (int j = threadIdx.x; j < cols; j += blockDim.x) s += g[base + j] * y[base + j];
    s = block_reduce(s, buf, false);
    for (int j = threadIdx.x; j < cols; j += blockDim.x) gx[base + j] = y[base + j] * (g[base + j] - s);
}
""",
    "gelu": r"""
extern "C" __global__ void gelu_SUFFIX(const T* __restrict__ x, T* __restrict__ y, const long long n) {
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
        const T v = x[i];
        y[i] = (T)0.5 * v * ((T)1 + erf(v * (T)0.70710678118654752440));
    }
}
""",
    "gelu_backward": r"""
extern "C" __global__ void gelu_backward_SUFFIX(const T* __restrict__ x, const T* __restrict__ g,
                                                T* __restrict__ gx, const long long n) {
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
        const T v = x[i];
        const T cdf = (T)0.5 * ((T)1 + erf(v * (T)0.70710678118654752440));
        const T pdf = (T)0.39894228040143267794 * exp((T)-0.5 * v * v);
        gx[i] = g[i] * (cdf + v * pdf);
    }
}
""",
}


def kernel_source(name: str, dtype: str) -> str:
    """The complete CUDA C source of kernel ``name`` for ``dtype`` ("float32"/"float64")."""
    ctype, suffix = _TYPES[dtype]
    # NVRTC has no <math.h> macros such as HUGE_VALF: build infinity from its bits.
    huge = "__int_as_float(0x7f800000)" if ctype == "float" else "__longlong_as_double(0x7ff0000000000000LL)"
    head = f"typedef {ctype} T;\n#define BLOCK {BLOCK}\n#define HUGE_T ({huge})\n"
    return head + _ROW_REDUCE + _SOURCES[name].replace("SUFFIX", suffix)


def kernel_name(name: str, dtype: str) -> str:
    return f"{name}_{_TYPES[dtype][1]}"


def all_sources() -> dict[str, str]:
    """Every kernel for every dtype: ``{kernel name: source}`` (what CI compiles)."""
    return {kernel_name(n, d): kernel_source(n, d) for n in _SOURCES for d in _TYPES}


class CudaKernels:
    """The kernels for one CuPy module, compiled on first use and cached."""

    def __init__(self, cupy: Any) -> None:
        self.cp = cupy
        self._cache: dict[tuple[str, str], Any] = {}

    def supports(self, x: Any) -> bool:
        return str(x.dtype) in _TYPES and x.size > 0

    def _kernel(self, name: str, dtype: Any) -> Any:
        key = (name, str(dtype))
        k = self._cache.get(key)
        if k is None:
            k = self.cp.RawKernel(kernel_source(name, str(dtype)), kernel_name(name, str(dtype)))
            self._cache[key] = k
        return k

    def _rows(self, x: Any) -> tuple[Any, int, int]:
        x = self.cp.ascontiguousarray(x)
        cols = x.shape[-1]
        return x, x.size // cols, cols

    def softmax(self, x: Any) -> Any:
        """Softmax over the last axis."""
        x, rows, cols = self._rows(x)
        y = self.cp.empty_like(x)
        self._kernel("softmax_rows", x.dtype)((rows,), (BLOCK,), (x, y, self.cp.int32(cols)))
        return y

    def softmax_backward(self, g: Any, y: Any) -> Any:
        g, rows, cols = self._rows(g)
        y = self.cp.ascontiguousarray(y)
        gx = self.cp.empty_like(g)
        self._kernel("softmax_backward_rows", g.dtype)((rows,), (BLOCK,), (g, y, gx, self.cp.int32(cols)))
        return gx

    def _elementwise(self, name: str, *arrays: Any) -> Any:
        arrays = tuple(self.cp.ascontiguousarray(a) for a in arrays)
        out = self.cp.empty_like(arrays[0])
        n = out.size
        blocks = min((n + BLOCK - 1) // BLOCK, 65535)
        self._kernel(name, out.dtype)((blocks,), (BLOCK,), (*arrays, out, self.cp.int64(n)))
        return out

    def gelu(self, x: Any) -> Any:
        return self._elementwise("gelu", x)

    def gelu_backward(self, x: Any, g: Any) -> Any:
        return self._elementwise("gelu_backward", x, g)
