"""PyTorch's positional ``alpha`` of ``add``/``sub`` and their in-place twins.

Besides ``add(other, *, alpha=1)`` PyTorch's parser takes ``add(Number other, Number alpha)``
(``x.add(2, 3)`` is ``x + 6``) and the deprecated ``add(Number alpha, Tensor other)``
(``x.add(2, y)`` is ``x + 2 * y``, with a warning); ``subtract`` has the first and not the
second. A 0-d tensor counts as a number there, as in PyTorch's parser.
"""

from __future__ import annotations

import numbers
import warnings
from typing import Any

import numpy as np


def _is_number(v: Any) -> bool:
    if isinstance(v, (numbers.Number, np.number, np.bool_)):
        return True
    return getattr(v, "_data", None) is not None and getattr(v, "ndim", None) == 0


def _as_number(v: Any) -> Any:
    return v.item() if hasattr(v, "item") and getattr(v, "_data", None) is not None else v


def other_and_alpha(op: str, other: Any, more: tuple, alpha: Any, *, deprecated: bool) -> tuple[Any, Any]:
    """``(other, alpha)`` of a call whose positional arguments after ``self`` were ``other, *more``.

    >>> other_and_alpha("add", 2, (3,), 1, deprecated=True)
    (2, 3)
    """
    if not more:
        return other, alpha
    if len(more) > 1:
        raise TypeError(f"{op}() takes from 1 to 2 positional arguments but {1 + len(more)} were given")
    second = more[0]
    kinds = f"({type(other).__name__}, {type(second).__name__})"
    if alpha != 1:
        raise TypeError(f"{op}() got alpha both by position and by keyword: {kinds} and alpha={alpha!r}")
    if _is_number(other) and _is_number(second):  # add(Number other, Number alpha)
        return other, _as_number(second)
    if _is_number(other) and getattr(second, "_data", None) is not None:  # add(Number alpha, Tensor other)
        if not deprecated:
            raise TypeError(f"{op}() received an invalid combination of arguments - got {kinds}, but expected one "
                            "of: (Tensor other, *, Number alpha = 1) or (Number other, Number alpha = 1)")  # fmt: skip
        warnings.warn(f"This overload of {op} is deprecated:\n\t{op}(Number alpha, Tensor other)\nConsider using one "
                      f"of the following signatures instead:\n\t{op}(Tensor other, *, Number alpha = 1)",
                      UserWarning, stacklevel=3)  # fmt: skip
        return second, _as_number(other)
    raise TypeError(f"{op}() received an invalid combination of arguments - got {kinds}, but expected one of: "
                    f"(Tensor other, *, Number alpha = 1) or (Number other, Number alpha = 1)")  # fmt: skip
