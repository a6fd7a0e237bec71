"""How tensors print: ``tga.set_printoptions`` (PyTorch's names and profiles) and the options
``Tensor.__repr__`` hands to NumPy's ``array2string``. Until a script sets them, tensors print
with NumPy's own defaults; the options are this library's alone (NumPy's global print options
are left as they are).

>>> tga.set_printoptions(precision=2)  # doctest: +SKIP
"""

from __future__ import annotations

import math
from typing import Any

__all__ = ["set_printoptions"]

# PyTorch's profiles (precision, threshold, edgeitems, linewidth)
_PROFILES = {"default": (4, 1000, 3, 80), "short": (2, 1000, 2, 80), "full": (4, math.inf, 3, 80)}
_options: dict[str, Any] = {}  # array2string's keywords; empty: NumPy's defaults


def set_printoptions(precision: int | None = None, threshold: float | None = None, edgeitems: int | None = None,
                     linewidth: int | None = None, profile: str | None = None, sci_mode: bool | None = None) -> None:  # fmt: skip
    """PyTorch's ``set_printoptions``: digits after the point, how many elements print in full,
    how many at each edge of a summarised axis, the line width, a profile (``"default"``,
    ``"short"``, ``"full"``) and ``sci_mode`` (True: always scientific; False: never)."""
    if profile in _PROFILES:  # (another name changes nothing, as in PyTorch)
        precision_, threshold_, edgeitems_, linewidth_ = _PROFILES[profile]
        _options.update(precision=precision_, threshold=threshold_, edgeitems=edgeitems_, max_line_width=linewidth_)
    for key, value in (("precision", precision), ("threshold", threshold), ("edgeitems", edgeitems),
                       ("max_line_width", linewidth)):  # fmt: skip
        if value is not None:
            _options[key] = value
    if sci_mode is not None:
        _options["sci_mode"] = bool(sci_mode)


def array2string_options() -> dict[str, Any]:
    """The keywords for ``np.array2string`` (``threshold`` as an int: NumPy takes no infinity)."""
    out = {k: v for k, v in _options.items() if k != "sci_mode"}
    if out.get("threshold") == math.inf:
        out["threshold"] = 2**62
    if "sci_mode" in _options:
        if _options["sci_mode"]:
            digits = _options.get("precision", 4)
            out["formatter"] = {"float_kind": lambda v: f"{v:.{digits}e}"}
        else:
            out["suppress_small"] = True
    return out
