"""tinygrad_attn: a small, fast, honest deep-learning engine for building attention.

>>> import tinygrad_attn as tga
>>> x = tga.Tensor([[1.0, 2.0, 3.0]], requires_grad=True)
>>> x.softmax().sum().backward()
"""

# The modules that declare PyTorch's ops (``@public``: read by install_methods below); the star imports are the
# other top-level names: typed constructors and dtypes (``tga.bool`` binds the name in this module only; the
# package's modules keep Python's ``bool``).
import sys as _sys
import types as _types

from . import (  # noqa: F401 - imported for their declarations
    augmented_assignment,
    creation,
    cuda,
    dtypes,
    flags,
    functional,
    indexing,
    inplace_variants,
    linalg,
    math_functions,
    products,
    shape_functions,
    special_functions,
    statistics,
    tensor_arith,
    tensor_creation,
    tensor_functions,
    tensor_protocols,
    tensor_reduce,
    tensor_shape,
    tensor_torch,
)
from ._tensor import Tensor, cat, stack, where
from .amp import autocast
from .autograd import (
    Function,
    decompose,
    detect_anomaly,
    enable_grad,
    grad,
    inference_mode,
    is_grad_enabled,
    no_grad,
    set_grad_enabled,
)
from .backend import default_device, device, devices, get_default_device, get_device, is_available, set_default_device
from .creation import *  # noqa: F403
from .dtypes import *  # noqa: F403
from .engine import declare
from .flags import *  # noqa: F403
from .gradcheck import gradcheck
from .linalg import det, inverse, logdet, matrix_exp, matrix_power, slogdet  # torch's top-level spellings
from .malloc import keep_freed_memory
from .printing import set_printoptions
from .random import Generator, default_generator, get_rng_state, initial_seed, manual_seed, seed, set_rng_state
from .serialization import load, save
from .tensor_functions import *  # noqa: F403
from .threads import get_num_threads, set_num_threads

__version__ = "0.1.0"


def install_methods() -> list[str]:
    """Put every declared op in place (:mod:`tinygrad_attn.engine.declare`): the ``tga.`` free
    functions, :class:`Tensor`'s methods written outside its class body (``x.var`` *is*
    ``tga.var``, ``x.softmax`` *is* ``F.softmax``) and the in-place twins. ``_tensor.py``
    imports none of the modules that declare them. Returns the free functions' names."""
    return declare.install(Tensor, globals(), inplace_variants.variant, special)


# ``tga.special`` (``torch.special``): the functions declared with a ``special=`` name, no module of its own
special = _sys.modules[f"{__name__}.special"] = _types.ModuleType(f"{__name__}.special", "PyTorch's torch.special.")
special.__all__ = []
_DECLARED = install_methods()

# PyTorch's top-level constants (``torch.inf``, ``torch.pi``): plain Python floats, as there
# (``float`` here is the dtype ``tga.float``, so they come from math).
from math import e, inf, nan, pi  # noqa: E402

# (and the modules of PyTorch's names that a script's top imports: tga.jit, tga.amp, tga.backends, ...)
_SUBPACKAGES = ("distributions", "models", "nn", "optim", "utils", "viz", "jit", "amp", "backends", "accelerator", "onnx",
                "distributed", "profiler", "fx")  # fmt: skip
_SYMBOLIC = ["compile", "Program", "TraceError"]  # (the tracer is tga.jit.trace; tga.trace is torch.trace)


def __getattr__(name: str):
    # ``tga.models``, ``tga.nn``, ``tga.optim``, ``tga.utils``, ``tga.viz``, ``tga.jit``, ... load on first use, so
    # ``import tinygrad_attn`` stays light (no Graphviz or model code until asked for).
    if name in _SUBPACKAGES:
        import importlib  # noqa: PLC0415

        return importlib.import_module(f"{__name__}.{name}")
    if name in _SYMBOLIC:  # tga.compile, tga.Program, tga.TraceError (tinygrad_attn.symbolic)
        from . import symbolic  # noqa: PLC0415

        return getattr(symbolic, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "Tensor",
    "Function",
    "functional",
    "grad",
    "no_grad",
    "enable_grad",
    "set_grad_enabled",
    "inference_mode",
    "is_grad_enabled",
    "decompose",
    "detect_anomaly",
    "gradcheck",
    "manual_seed",
    "Generator",
    "default_generator",
    "seed",
    "initial_seed",
    "get_rng_state",
    "set_rng_state",
    "device",
    "devices",
    "is_available",
    "set_default_device",
    "get_default_device",
    "default_device",
    "get_device",
    "keep_freed_memory",
    "cat",
    "stack",
    "where",
    "cuda",
    *creation.__all__,
    *dtypes.__all__,
    *tensor_functions.__all__,
    *flags.__all__,
    "autocast",
    "set_printoptions",
    "linalg",
    "special",
    "det",
    "inverse",
    "logdet",
    "matrix_exp",
    "matrix_power",
    "slogdet",
    "save",
    "load",
    "set_num_threads",
    "get_num_threads",
]
__all__ += [n for n in _DECLARED if n not in __all__]  # every op declared @public
__all__ += _SYMBOLIC  # (loaded on first use, by __getattr__)
__all__ += ["inf", "nan", "pi", "e"]  # PyTorch's constants
