"""PyTorch's process-wide switches that a script sets at its top: whether algorithms must be
deterministic (``tga.use_deterministic_algorithms``) and the float32 matrix-product precision
(``tga.set_float32_matmul_precision``). Every op here is deterministic and computes float32
products in float32, so these change no number: they are kept and read back as set, and their
arguments are checked as PyTorch checks them.

>>> import tinygrad_attn as tga
>>> tga.use_deterministic_algorithms(True)
>>> tga.are_deterministic_algorithms_enabled()
True
"""

from __future__ import annotations

from ..engine.warn import warn as _user_warn

__all__ = [
    "use_deterministic_algorithms", "are_deterministic_algorithms_enabled",
    "is_deterministic_algorithms_warn_only_enabled", "set_float32_matmul_precision", "get_float32_matmul_precision",
    "set_deterministic_debug_mode", "get_deterministic_debug_mode", "set_warn_always", "is_warn_always_enabled",
    "set_flush_denormal",
]  # fmt: skip

_deterministic = {"mode": False, "warn_only": False}
_matmul_precision = ["highest"]
_warn_always = [False]
_DEBUG_MODES = ("default", "warn", "error")
_PRECISIONS = ("highest", "high", "medium")


def use_deterministic_algorithms(mode: bool, *, warn_only: bool = False) -> None:
    """Ask for deterministic algorithms only (every op here is one already)."""
    if not isinstance(mode, bool):
        raise TypeError(f"use_deterministic_algorithms: mode must be a bool, got {type(mode).__name__}")
    _deterministic.update(mode=mode, warn_only=bool(warn_only))


def are_deterministic_algorithms_enabled() -> bool:
    return _deterministic["mode"]


def is_deterministic_algorithms_warn_only_enabled() -> bool:
    return _deterministic["warn_only"]


def set_float32_matmul_precision(precision: str) -> None:
    """``"highest"``, ``"high"`` or ``"medium"``: how much precision float32 products may give up
    for speed (TF32 on GPUs). Here they are always computed in float32 ("highest")."""
    if precision not in _PRECISIONS:  # (PyTorch warns and changes nothing)
        _user_warn(
            f"{precision} is not one of 'highest', 'high', or 'medium'; the current set_float32_matmul_precision "
            "call has no effect.",
            UserWarning,
        )
        return
    _matmul_precision[0] = precision


def get_float32_matmul_precision() -> str:
    return _matmul_precision[0]


def set_deterministic_debug_mode(debug_mode: int | str) -> None:
    """PyTorch's other spelling of :func:`use_deterministic_algorithms`: ``"default"`` (0) off,
    ``"warn"`` (1) on with ``warn_only``, ``"error"`` (2) on."""
    if isinstance(debug_mode, str):
        if debug_mode not in _DEBUG_MODES:
            raise RuntimeError(
                f"invalid value of debug_mode, expected one of `default`, `warn`, `error`, but got {debug_mode}"
            )
        debug_mode = _DEBUG_MODES.index(debug_mode)
    if not isinstance(debug_mode, int) or isinstance(debug_mode, bool):
        raise TypeError(f"debug_mode must be str or int, but got {type(debug_mode).__name__}")
    if debug_mode not in (0, 1, 2):
        raise RuntimeError(f"invalid value of debug_mode, expected 0, 1, or 2, but got {debug_mode}")
    use_deterministic_algorithms(debug_mode != 0, warn_only=debug_mode == 1)


def get_deterministic_debug_mode() -> int:
    """0, 1 or 2: what :func:`set_deterministic_debug_mode` (or :func:`use_deterministic_algorithms`) set."""
    if not _deterministic["mode"]:
        return 0
    return 1 if _deterministic["warn_only"] else 2


def set_warn_always(b: bool, /) -> None:
    """PyTorch's switch for warnings that are given once per process: kept and read back
    (:func:`is_warn_always_enabled`); the warnings here follow Python's own filters."""
    _warn_always[0] = bool(b)


def is_warn_always_enabled() -> bool:
    return _warn_always[0]


def set_flush_denormal(mode: bool) -> bool:
    """Ask the CPU to flush denormal floats to zero; returns whether the mode is now as asked, as
    PyTorch's. NumPy's arithmetic keeps denormals and offers no switch, so ``True`` returns
    False (nothing changed) and ``False`` returns True (denormals are kept)."""
    if not isinstance(mode, bool):
        raise RuntimeError(f"flush_denormal expects a bool, but got {type(mode).__name__}")
    return not mode
