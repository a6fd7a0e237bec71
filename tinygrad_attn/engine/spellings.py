"""The library's earlier keyword spellings that keep working, all in this one table, each with the
name that replaces it (PyTorch's). A function that keeps some is decorated with
:func:`keeps_old_spellings`; its signature shows only the current names.

>>> OLD_SPELLINGS["Tensor.backward"]
{'grad': 'gradient'}
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any

#: function (its ``__qualname__``) -> {old keyword: the keyword that replaces it}
OLD_SPELLINGS: dict[str, dict[str, str]] = {
    "Tensor.backward": {"grad": "gradient"},  # (PyTorch names it gradient)
    "scaled_dot_product_attention": {"mask": "attn_mask"},  # (PyTorch's F.scaled_dot_product_attention)
    "BatchFirstAttention.forward": {"mask": "allow"},  # (allow says which way a boolean mask reads)
    "load": {"device": "map_location"},  # (torch.load's map_location)
}


def keeps_old_spellings(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` also taking the old keywords :data:`OLD_SPELLINGS` lists for it: each is passed on
    under its current name; both at once is a ``TypeError`` naming the two."""
    renames = OLD_SPELLINGS[fn.__qualname__]
    op = fn.__qualname__
    params = list(inspect.signature(fn).parameters.values())
    # (how many positional arguments it takes to reach each new name: given positionally, it clashes too)
    reach = {
        p.name: i + 1 for i, p in enumerate(params) if p.name in renames.values() and p.kind <= p.POSITIONAL_OR_KEYWORD
    }

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        for old, new in renames.items():
            if old in kwargs:
                value = kwargs.pop(old)
                if kwargs.get(new) is not None or len(args) >= reach.get(new, len(args) + 1):
                    raise TypeError(f"{op}: got both {new}= and {old}= (its older name); pass {new}")
                kwargs[new] = value
        return fn(*args, **kwargs)

    return wrapper
