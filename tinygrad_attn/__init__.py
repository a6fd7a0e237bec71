"""tinygrad_attn: a small, fast, honest deep-learning engine for building attention.

>>> import tinygrad_attn as tga
>>> x = tga.Tensor([[1.0, 2.0, 3.0]], requires_grad=True)
>>> x.softmax().sum().backward()
"""

from . import functional
from ._tensor import Tensor, cat, stack, tril, triu, where
from .autograd import Function, decompose, detect_anomaly, enable_grad, grad, is_grad_enabled, no_grad
from .device import default_device, devices, get_device, is_available, set_default_device
from .gradcheck import gradcheck
from .malloc import keep_freed_memory
from .random import manual_seed

__version__ = "0.1.0"

_SUBPACKAGES = ("models", "nn", "optim", "viz")


def __getattr__(name: str):
    # ``tga.models``, ``tga.nn``, ``tga.optim``, ``tga.viz`` load on first use, so ``import tinygrad_attn``
    # stays light (no Graphviz or model code until asked for).
    if name in _SUBPACKAGES:
        import importlib  # noqa: PLC0415

        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "Tensor",
    "Function",
    "functional",
    "grad",
    "no_grad",
    "enable_grad",
    "is_grad_enabled",
    "decompose",
    "detect_anomaly",
    "gradcheck",
    "manual_seed",
    "devices",
    "is_available",
    "set_default_device",
    "default_device",
    "get_device",
    "keep_freed_memory",
    "cat",
    "stack",
    "where",
    "tril",
    "triu",
]
