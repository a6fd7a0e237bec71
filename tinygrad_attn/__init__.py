"""tinygrad_attn: a small, fast, honest deep-learning engine for building attention.

>>> import tinygrad_attn as tga
>>> x = tga.Tensor([[1.0, 2.0, 3.0]], requires_grad=True)
>>> x.softmax().sum().backward()
"""

# The star imports are PyTorch's top-level names: factories, free functions and dtypes (``tga.bool`` binds the
# name in this module only; the package's modules keep Python's ``bool``).
from . import (
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
from .flags import *  # noqa: F403
from .gradcheck import gradcheck
from .linalg import TOP_LEVEL as _LINALG_TOP_LEVEL  # (torch.svd, torch.qr, torch.lu, ...: their own signatures)
from .linalg import det, inverse, logdet, matrix_exp, matrix_power, slogdet  # torch's top-level spellings
from .malloc import keep_freed_memory
from .math_functions import *  # noqa: F403
from .printing import set_printoptions
from .products import *  # noqa: F403
from .random import Generator, default_generator, get_rng_state, initial_seed, manual_seed, seed, set_rng_state
from .serialization import load, save
from .shape_functions import *  # noqa: F403
from .special_functions import *  # noqa: F403
from .statistics import *  # noqa: F403
from .tensor_functions import *  # noqa: F403
from .tensor_torch import *  # noqa: F403
from .threads import get_num_threads, set_num_threads

__version__ = "0.1.0"


def install_methods() -> None:
    """Give :class:`Tensor` its methods that are written as free functions or composites, once,
    from the module that implements each (``x.var`` *is* ``tga.var``, ``x.softmax`` *is*
    ``F.softmax``), so ``_tensor.py`` imports none of those modules. The in-place variants
    come last: ``x.name_`` exists for each ``name`` installed before them."""
    tables = (
        tensor_creation,
        tensor_arith,
        tensor_torch,
        tensor_shape,
        tensor_reduce,
        tensor_functions,
        indexing,
        functional,
        augmented_assignment,
        tensor_protocols,
    )
    tables += (shape_functions, products, statistics, special_functions, linalg)
    for table in (m.METHODS for m in tables):
        for name, fn in table.items():
            setattr(Tensor, name, fn)
    math_functions._install(Tensor)
    inplace_variants.install(Tensor)


install_methods()
globals().update(_LINALG_TOP_LEVEL)

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
    *math_functions.__all__,
    *tensor_torch.__all__,
    *flags.__all__,
    "autocast",
    "set_printoptions",
    *shape_functions.__all__,
    *products.__all__,
    *statistics.__all__,
    *special_functions.__all__,
    "linalg",
    "det",
    "inverse",
    "logdet",
    "matrix_exp",
    "matrix_power",
    "slogdet",
    *_LINALG_TOP_LEVEL,
    "save",
    "load",
    "set_num_threads",
    "get_num_threads",
]
__all__ += _SYMBOLIC  # (loaded on first use, by __getattr__)
__all__ += ["inf", "nan", "pi", "e"]  # PyTorch's constants
