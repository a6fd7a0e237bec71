"""``tga.autograd``: PyTorch's ``torch.autograd`` names, from the engine (:mod:`tinygrad_attn.engine`).

>>> (gx,) = tga.autograd.grad((x * x).sum(), x)  # doctest: +SKIP
"""

from .engine.backward import backward, grad
from .engine.function import Function
from .engine.switches import (
    decompose,
    detect_anomaly,
    enable_grad,
    inference_mode,
    is_grad_enabled,
    no_grad,
    set_grad_enabled,
)

__all__ = ["Function", "backward", "decompose", "detect_anomaly", "enable_grad", "grad", "inference_mode",
           "is_grad_enabled", "no_grad", "set_grad_enabled"]  # fmt: skip
