"""``tga.version``: PyTorch's ``torch.version`` names, for code that checks what it runs on
(``if torch.version.cuda: ...``). ``cuda`` is the CUDA runtime CuPy was built against where CuPy
is installed (this library's GPU backend), else None, as PyTorch's CPU build says; there is no
ROCm, XPU or debug build."""

from __future__ import annotations

import importlib.util

__all__ = ["__version__", "cuda", "hip", "rocm", "xpu", "debug", "git_version"]

__version__ = "0.1.0"
hip = None
rocm = None
xpu = None
debug = False
git_version = "unknown"


def _cuda() -> str | None:
    if importlib.util.find_spec("cupy") is None:
        return None
    try:
        import cupy  # noqa: PLC0415 - optional

        v = cupy.cuda.runtime.runtimeGetVersion()  # (e.g. 12040 for 12.4)
    except Exception:  # noqa: BLE001 - CuPy without a usable CUDA: no CUDA here
        return None
    return f"{v // 1000}.{v % 1000 // 10}"


cuda = _cuda()
