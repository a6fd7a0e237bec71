"""Warnings that point at the user's line: the first frame outside this package, however deep
in it the warning is raised (through ``@public``'s argument check, a composite, a module's
``__call__``), as PyTorch's Python warnings point at the caller's line.

>>> import tinygrad_attn as tga
>>> from tinygrad_attn.engine.warn import warn
>>> warn("a deprecated argument", FutureWarning)  # doctest: +SKIP
"""

from __future__ import annotations

import os
import sys
import warnings

_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


def warn(message: str | Warning, category: type[Warning] = UserWarning) -> None:
    """``warnings.warn(message, category)`` attributed to the innermost caller outside the package."""
    level, f = 2, sys._getframe(1)
    while f is not None and f.f_code.co_filename.startswith(_PACKAGE):
        f, level = f.f_back, level + 1
    warnings.warn(message, category, stacklevel=level)
