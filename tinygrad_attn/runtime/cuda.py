"""``tga.cuda``: PyTorch's ``torch.cuda`` questions, answered for this library's CUDA devices.

Without a CUDA device each answers as PyTorch's CPU build does: the questions about memory
give 0 and empty statistics, those that need a device raise :class:`CudaUnavailableError`
(an ``AssertionError`` as PyTorch's "Torch not compiled with CUDA enabled", and a
``RuntimeError`` naming what is missing).

>>> device = "cuda" if tga.cuda.is_available() else "cpu"  # doctest: +SKIP
"""

from __future__ import annotations

import sys
from typing import Any

from ..engine.warn import warn as _warn
from ..random import get_rng_state as _get_rng_state
from ..random import initial_seed as _initial_seed
from ..random import manual_seed as _manual_seed
from ..tensors.factories import creation as _creation
from ..tensors.factories.creation import _TypedTensorType
from .amp import cuda_amp as amp
from .backend import CudaUnavailableError, _import_cupy
from .backend import devices as _devices
from .backend import is_available as _is_available

has_half = True
has_magma = False


class OutOfMemoryError(RuntimeError):
    """PyTorch's ``torch.cuda.OutOfMemoryError`` (a ``RuntimeError``), for ``except`` clauses."""


def is_available() -> bool:
    """Whether a CUDA device (CuPy and a GPU) can be used here; never raises."""
    return _is_available("cuda")


def is_initialized() -> bool:
    """Whether CUDA is in use here (as PyTorch's, False where there is none)."""
    return is_available()


def device_count() -> int:
    """How many CUDA devices can be used here."""
    return sum(1 for d in _devices() if d.startswith("cuda"))


def is_bf16_supported(including_emulation: bool = True) -> bool:
    """False: bfloat16 lives on the CPU only here (NumPy's, from ml_dtypes; CuPy cannot hold it)."""
    return False


def is_tf32_supported() -> bool:
    """False: the library's float32 products are computed in float32."""
    return False


def _cupy() -> Any:
    """CuPy, where a CUDA device can be used; else :class:`CudaUnavailableError`."""
    return _import_cupy()


def _index(device: Any) -> int:
    if device is None:
        return int(_cupy().cuda.Device().id)
    if isinstance(device, int):
        return device
    name = str(device)  # ("cuda", "cuda:1", a tga.device)
    return int(name.split(":")[1]) if ":" in name else 0


def current_device() -> int:
    """The index of the current CUDA device."""
    return int(_cupy().cuda.Device().id)


def set_device(device: Any) -> None:
    """Make ``device`` (an index, ``"cuda:N"`` or a device) the current CUDA device."""
    _cupy().cuda.Device(_index(device)).use()


def synchronize(device: Any = None) -> None:
    """Wait for every kernel queued on ``device`` (the current one by default)."""
    cp = _cupy()
    with cp.cuda.Device(_index(device)):
        cp.cuda.get_current_stream().synchronize()


def get_device_name(device: Any = None) -> str:
    """The GPU's name, as its driver reports it."""
    cp = _cupy()
    name = cp.cuda.runtime.getDeviceProperties(_index(device))["name"]
    return name.decode() if isinstance(name, bytes) else str(name)


def get_device_capability(device: Any = None) -> tuple[int, int]:
    """The GPU's compute capability ``(major, minor)``."""
    cc = _cupy().cuda.Device(_index(device)).compute_capability
    return int(cc[:-1]), int(cc[-1])


def mem_get_info(device: Any = None) -> tuple[int, int]:
    """``(free, total)`` bytes of the GPU's memory."""
    cp = _cupy()
    with cp.cuda.Device(_index(device)):
        free, total = cp.cuda.runtime.memGetInfo()
    return int(free), int(total)


def _pool_bytes(used: bool) -> int:
    if not is_available():
        return 0  # (PyTorch's CPU build: no allocation was ever made)
    pool = _cupy().get_default_memory_pool()
    return int(pool.used_bytes() if used else pool.total_bytes())


def memory_allocated(device: Any = None) -> int:
    """Bytes held by tensors on the GPU (CuPy's memory pool in use); 0 without CUDA."""
    return _pool_bytes(True)


def memory_reserved(device: Any = None) -> int:
    """Bytes the memory pool holds, in use or cached; 0 without CUDA."""
    return _pool_bytes(False)


# (CuPy's pool keeps no peak: the current figures stand for the peaks)
max_memory_allocated = memory_allocated
max_memory_reserved = memory_reserved


def memory_cached(device: Any = None) -> int:
    """PyTorch's older name of :func:`memory_reserved` (with its FutureWarning)."""
    _warn("`torch.cuda.memory_cached` has been renamed to `torch.cuda.memory_reserved`", FutureWarning)
    return memory_reserved(device)


def max_memory_cached(device: Any = None) -> int:
    """PyTorch's older name of :func:`max_memory_reserved` (with its FutureWarning)."""
    _warn("`torch.cuda.max_memory_cached` has been renamed to `torch.cuda.max_memory_reserved`", FutureWarning)
    return max_memory_reserved(device)


def memory_stats(device: Any = None) -> dict[str, Any]:
    """Allocator statistics: ``allocated_bytes.all.current`` and ``reserved_bytes.all.current``
    where there is CUDA; empty without, as PyTorch's CPU build."""
    if not is_available():
        return {}
    return {"allocated_bytes.all.current": memory_allocated(), "reserved_bytes.all.current": memory_reserved()}


def reset_peak_memory_stats(device: Any = None) -> None:
    """Nothing to reset (no peak is kept), where there is CUDA."""
    _cupy()


reset_max_memory_allocated = reset_peak_memory_stats
reset_max_memory_cached = reset_peak_memory_stats
reset_accumulated_memory_stats = reset_peak_memory_stats


def empty_cache() -> None:
    """Give the memory pool's cached blocks back to the driver; nothing to do without CUDA."""
    if is_available():
        _cupy().get_default_memory_pool().free_all_blocks()


def get_arch_list() -> list[str]:
    """The architectures compiled for: none ahead of time (kernels are compiled with NVRTC)."""
    return []


def get_gencode_flags() -> str:
    return ""


def manual_seed(seed: int) -> None:
    """The one generator serves every device (draws are made on the host and moved)."""
    _manual_seed(seed)


manual_seed_all = manual_seed


def seed() -> None:
    """Nothing to do: the one host generator serves every device (``tga.seed()`` reseeds it)."""


seed_all = seed


def initial_seed() -> int:
    """The seed of the generator CUDA draws use: the host's (``tga.initial_seed()``)."""
    _cupy()
    return _initial_seed()


def get_rng_state_all() -> list[Any]:
    """One state per CUDA device: none here without CUDA (draws are made on the host)."""
    return [_get_rng_state() for _ in range(device_count())]


# (each of the host's typed constructors, on the CUDA device: the names follow the host's one table)
for _host_type in _creation._TYPED:
    globals()[_host_type.__name__] = _TypedTensorType(
        _host_type.__name__, (), {"dtype": _host_type.dtype, "device": "cuda", "__doc__": f"``torch.cuda."
                                  f"{_host_type.__name__}``: a {_host_type.dtype} tensor on the CUDA device."})  # fmt: skip

__all__ = ["CudaUnavailableError"]

# ``from torch.cuda.amp import autocast, GradScaler``: this module is no package, so the path is registered
sys.modules[__name__ + ".amp"] = amp
