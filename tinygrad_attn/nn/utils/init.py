"""PyTorch's ``torch.nn.utils.init``: ``skip_init``, a module made without running its initialisation."""

from __future__ import annotations

import inspect
from typing import Any


def skip_init(module_cls: type, *args: Any, **kwargs: Any) -> Any:
    """``module_cls(*args, **kwargs)`` whose parameters PyTorch leaves uninitialised (memory as it was
    found, meant to be overwritten: ``load_state_dict`` or an init of one's own). Here they hold the
    module's own initial values, one of the values uninitialised memory may hold. As PyTorch's, the
    class must be a Module that takes a ``device`` argument."""
    from ..module import Module  # noqa: PLC0415 - (the module imports nn.utils)

    if not issubclass(module_cls, Module):  # (a non-class is issubclass's TypeError, as PyTorch's)
        raise RuntimeError(f"Expected a Module; got {module_cls}")
    if "device" not in inspect.signature(module_cls).parameters:
        raise RuntimeError("Module must support a 'device' arg to skip initialization")
    return module_cls(*args, **kwargs)
