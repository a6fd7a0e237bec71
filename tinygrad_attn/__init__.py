"""tinygrad_attn: a small, fast, honest deep-learning engine for building attention.

>>> import tinygrad_attn as tga
>>> x = tga.Tensor([[1.0, 2.0, 3.0]], requires_grad=True)
>>> x.softmax().sum().backward()
"""

# The star imports are PyTorch's top-level names: factories, free functions and dtypes (``tga.bool`` binds the
# name in this module only; the package's modules keep Python's ``bool``).
from . import functional, linalg
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
from .autograd.gradcheck import gradcheck
from .linalg import det, inverse, logdet, matrix_exp, matrix_power, products, slogdet  # torch's top-level spellings
from .linalg.products import *  # noqa: F403
from .random import Generator, default_generator, get_rng_state, initial_seed, manual_seed, seed, set_rng_state
from .runtime import cuda, flags
from .runtime.amp import autocast
from .runtime.backend import (
    default_device,
    device,
    devices,
    get_default_device,
    get_device,
    is_available,
    set_default_device,
)
from .runtime.flags import *  # noqa: F403
from .runtime.malloc import keep_freed_memory
from .runtime.threads import get_num_threads, set_num_threads
from .serialization import load, save
from .tensors import dtypes, tensor_functions, tensor_protocols
from .tensors._tensor import Tensor, cat, stack, where
from .tensors.dtypes import *  # noqa: F403
from .tensors.elementwise import math_functions, special_functions, tensor_arith, tensor_torch
from .tensors.elementwise.math_functions import *  # noqa: F403
from .tensors.elementwise.special_functions import *  # noqa: F403
from .tensors.elementwise.tensor_torch import *  # noqa: F403
from .tensors.factories import creation, tensor_creation
from .tensors.factories.creation import *  # noqa: F403
from .tensors.index import indexing
from .tensors.mutation import augmented_assignment, inplace_variants
from .tensors.printing import set_printoptions
from .tensors.reduce import statistics, tensor_reduce
from .tensors.reduce.statistics import *  # noqa: F403
from .tensors.shape import shape_functions, tensor_shape
from .tensors.shape.shape_functions import *  # noqa: F403
from .tensors.tensor_functions import *  # noqa: F403

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

# PyTorch's top-level constants (``torch.inf``, ``torch.pi``): plain Python floats, as there
# (``float`` here is the dtype ``tga.float``, so they come from math).
from math import e, inf, nan, pi  # noqa: E402

# PyTorch's module paths whose code lives in a package here, from this one table: ``import tinygrad_attn.jit``,
# ``from tinygrad_attn.cuda.amp import GradScaler`` and ``tga.onnx.export`` work as ``torch.jit``, ... do. They are
# cheap modules, registered at import.
_MODULE_PATHS = {
    "cuda": "runtime.cuda",
    "cuda.amp": "runtime.cuda.amp",
    "amp": "runtime.amp",
    "jit": "runtime.jit",
    "accelerator": "runtime.accelerator",
    "distributed": "runtime.distributed",
    "profiler": "runtime.profiler",
    "fx": "runtime.fx",
    "onnx": "serialization.onnx",
}


def _register_module_paths() -> None:
    import importlib  # noqa: PLC0415
    import sys  # noqa: PLC0415

    for path, target in _MODULE_PATHS.items():
        module = importlib.import_module(f"{__name__}.{target}")
        sys.modules[f"{__name__}.{path}"] = module
        if "." not in path:
            globals()[path] = module


_register_module_paths()

# (and the heavier subpackages a script's top imports: tga.nn, tga.optim, tga.backends, ... load on first use)
_SUBPACKAGES = ("distributions", "models", "nn", "optim", "utils", "viz", "backends")
_SYMBOLIC = ["compile", "Program", "TraceError"]  # (the tracer is tga.jit.trace; tga.trace is torch.trace)


def __getattr__(name: str):
    # ``tga.models``, ``tga.nn``, ``tga.optim``, ``tga.utils``, ``tga.viz``, ... load on first use, so
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
    "save",
    "load",
    "set_num_threads",
    "get_num_threads",
]
__all__ += _SYMBOLIC  # (loaded on first use, by __getattr__)
__all__ += ["inf", "nan", "pi", "e"]  # PyTorch's constants
