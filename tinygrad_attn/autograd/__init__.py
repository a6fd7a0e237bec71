"""``tga.autograd``: PyTorch's ``torch.autograd`` names.

``Function`` is PyTorch's custom-Function API (:mod:`.function`); ``grad`` and ``backward``
take PyTorch's arguments (:mod:`.api`) on the engine's one backward pass;
:mod:`.functional` holds ``jacobian hessian vjp jvp hvp vhp``; :mod:`.forward_ad` dual tensors; ``Variable`` is the legacy wrapper
(:mod:`.variable`).

>>> (gx,) = tga.autograd.grad((x * x).sum(), x)  # doctest: +SKIP
"""

from ..engine.switches import (
    decompose,
    detect_anomaly,
    enable_grad,
    inference_mode,
    is_anomaly_enabled,
    is_grad_enabled,
    is_inference_mode_enabled,
    is_multithreading_enabled,
    is_view_replay_enabled,
    no_grad,
    set_detect_anomaly,
    set_grad_enabled,
    set_multithreading_enabled,
)
from . import forward_ad, function, functional, graph
from .api import backward, grad
from .function import Function, FunctionCtx, once_differentiable
from .gradcheck import GradcheckError, gradcheck, gradgradcheck  # (the functions, as torch.autograd's)
from .variable import Variable

__all__ = ["Function", "FunctionCtx", "backward", "decompose", "detect_anomaly", "enable_grad", "forward_ad", "function",
           "functional", "grad", "graph", "inference_mode", "is_grad_enabled", "is_inference_mode_enabled", "no_grad", "once_differentiable",
           "set_grad_enabled", "set_detect_anomaly", "is_anomaly_enabled", "Variable", "gradcheck", "gradgradcheck", "GradcheckError",
           "is_multithreading_enabled", "set_multithreading_enabled", "is_view_replay_enabled"]  # fmt: skip
