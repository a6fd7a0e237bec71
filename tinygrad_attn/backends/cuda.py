"""``tga.backends.cuda``: PyTorch's CUDA math flags (``matmul.allow_tf32``, the attention
kernels' switches). Products here are computed in their own dtype, never TF32, so the flags are
kept as set and change nothing; ``is_built()`` says whether a CUDA device can be used."""

from __future__ import annotations

from ..runtime.flags import get_float32_matmul_precision, set_float32_matmul_precision


class _MatmulFlags:
    """``tga.backends.cuda.matmul``: settable flags, read back as set. ``allow_tf32`` is the other
    face of ``tga.set_float32_matmul_precision``, as in PyTorch (True: "high"; False: "highest")."""

    def __init__(self) -> None:
        self.allow_fp16_reduced_precision_reduction = True
        self.allow_bf16_reduced_precision_reduction = True

    @property
    def allow_tf32(self) -> bool:
        return get_float32_matmul_precision() != "highest"

    @allow_tf32.setter
    def allow_tf32(self, value: bool) -> None:
        set_float32_matmul_precision("high" if value else "highest")


matmul = _MatmulFlags()
_sdp = {"flash": True, "mem_efficient": True, "math": True, "cudnn": True}


def is_built() -> bool:
    """Whether this library can use a CUDA device here (CuPy and a GPU)."""
    from ..runtime.cuda import is_available  # noqa: PLC0415 - (a question asked rarely)

    return is_available()


def flash_sdp_enabled() -> bool:
    return _sdp["flash"]


def enable_flash_sdp(enabled: bool) -> None:
    _sdp["flash"] = bool(enabled)


def mem_efficient_sdp_enabled() -> bool:
    return _sdp["mem_efficient"]


def enable_mem_efficient_sdp(enabled: bool) -> None:
    _sdp["mem_efficient"] = bool(enabled)


def math_sdp_enabled() -> bool:
    return _sdp["math"]


def enable_math_sdp(enabled: bool) -> None:
    _sdp["math"] = bool(enabled)


def cudnn_sdp_enabled() -> bool:
    return _sdp["cudnn"]


def enable_cudnn_sdp(enabled: bool) -> None:
    _sdp["cudnn"] = bool(enabled)
