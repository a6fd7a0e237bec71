"""PyTorch's ``torch.nn.utils.stateless``: the older name of :func:`tinygrad_attn.func.functional_call`.

>>> y = nn.utils.stateless.functional_call(model, {"weight": w}, (x,))  # doctest: +SKIP
"""

from __future__ import annotations

from typing import Any

from ...engine.warn import warn

__all__ = ["functional_call"]


def functional_call(module: Any, parameters_and_buffers: dict[str, Any], args: Any = None,
                    kwargs: dict[str, Any] | None = None, *, tie_weights: bool = True,
                    strict: bool = False) -> Any:  # fmt: skip
    """``module(*args, **kwargs)`` with the parameters and buffers named in
    ``parameters_and_buffers`` for the call: ``torch.func.functional_call``, with PyTorch's
    FutureWarning that this name is deprecated."""
    from ...autograd.func import functional_call as _call  # noqa: PLC0415 - (tga.func loads after nn)

    warn("`torch.nn.utils.stateless.functional_call` is deprecated as of PyTorch 2.0 and will be removed in a "
         "future version of PyTorch. Please use `torch.func.functional_call` instead which is a drop-in "
         "replacement.", FutureWarning)  # fmt: skip
    return _call(module, parameters_and_buffers, args, kwargs, tie_weights=tie_weights, strict=strict)
