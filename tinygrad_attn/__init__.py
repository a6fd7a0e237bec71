"""tinygrad_attn: a small, fast, honest deep-learning engine for building attention.

>>> import tinygrad_attn as tga
>>> x = tga.Tensor([[1.0, 2.0, 3.0]], requires_grad=True)
>>> x.softmax(-1).sum().backward()
"""

# The modules that declare PyTorch's ops (``@public``: read by install_methods below) are imported for that; the
# star imports are the other top-level names: typed constructors and dtypes (``tga.bool`` binds the name in this
# module only; the package's modules keep Python's ``bool``).
import sys as _sys
import types as _types

from . import functional, linalg
from .autograd import (
    Function,
    decompose,
    detect_anomaly,
    enable_grad,
    grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)
from .autograd.func import vmap
from .autograd.gradcheck import gradcheck
from .engine import declare
from .engine import overrides as _overrides
from .engine.switches import is_anomaly_check_nan_enabled, is_anomaly_enabled, set_anomaly_enabled
from .linalg import det, inverse, legacy, logdet, matrix_exp, matrix_power, products, slogdet  # noqa: F401 - (declarations)
from .random import Generator, default_generator, get_rng_state, initial_seed, manual_seed, seed, set_rng_state
from .runtime import cuda, flags
from .runtime.amp import (
    GradScaler,
    autocast,
    autocast_decrement_nesting,
    autocast_increment_nesting,
    clear_autocast_cache,
    get_autocast_cpu_dtype,
    get_autocast_dtype,
    get_autocast_gpu_dtype,
    get_autocast_ipu_dtype,
    get_autocast_xla_dtype,
    is_autocast_cache_enabled,
    is_autocast_cpu_enabled,
    is_autocast_enabled,
    is_autocast_ipu_enabled,
    is_autocast_xla_enabled,
    set_autocast_cache_enabled,
    set_autocast_cpu_dtype,
    set_autocast_cpu_enabled,
    set_autocast_dtype,
    set_autocast_enabled,
    set_autocast_gpu_dtype,
    set_autocast_ipu_dtype,
    set_autocast_ipu_enabled,
    set_autocast_xla_dtype,
    set_autocast_xla_enabled,
)
from .runtime.backend import (
    default_device,
    device,
    devices,
    get_default_device,
    get_device,
    is_available,
    set_default_device,
)
from .runtime.control_flow import cond, while_loop
from .runtime.flags import *  # noqa: F403
from .runtime.malloc import keep_freed_memory
from .runtime.threads import (
    get_num_interop_threads,
    get_num_threads,
    init_num_threads,
    set_num_interop_threads,
    set_num_threads,
)
from .runtime.version import __version__  # noqa: E402, F401 - (tga.__version__)
from .serialization import load, save
from .tensors import dtypes, memory_members, stft, storage, tensor_functions, tensor_protocols  # noqa: F401 - (declarations)
from .tensors._tensor import Tensor, cat, stack, where
from .tensors.dtypes import *  # noqa: F403
from .tensors.elementwise import complex_numbers, math_functions, special_functions, tensor_arith, tensor_torch  # noqa: F401
from .tensors.elementwise.tensor_torch import (  # (PyTorch's layout and memory-format objects)
    channels_last,
    channels_last_3d,
    contiguous_format,
    layout,
    memory_format,
    preserve_format,
    strided,
)
from .tensors.factories import creation, tensor_creation, windows  # noqa: F401
from .tensors.factories.creation import *  # noqa: F403
from .tensors.index import indexing  # noqa: F401
from .tensors.mutation import augmented_assignment, inplace_variants, out_argument  # noqa: F401
from .tensors.printing import set_printoptions
from .tensors.reduce import statistics, tensor_reduce  # noqa: F401
from .tensors.shape import shape_functions, tensor_shape, view_copies  # noqa: F401
from .tensors.sparse import sparse, sparse_coo
from .tensors.storage import TypedStorage, UntypedStorage
from .tensors.tensor_functions import *  # noqa: F403


def install_methods() -> list[str]:
    """Put every declared op in place (:mod:`tinygrad_attn.engine.declare`): the ``tga.`` free
    functions, :class:`Tensor`'s methods written outside its class body (``x.var`` *is*
    ``tga.var``, ``x.softmax`` *is* ``F.softmax``), the in-place twins and ``tga.special``.
    ``_tensor.py`` imports none of the modules that declare them. Returns the free functions' names."""
    return declare.install(
        Tensor,
        globals(),
        inplace_variants.variant,
        special,
        out_argument.with_out,
        out_argument.input_checked,
        out_argument.method_of,
    )


# ``tga.special`` (``torch.special``): the functions declared with a ``special=`` name, no module of its own
special = _sys.modules[f"{__name__}.special"] = _types.ModuleType(f"{__name__}.special", "PyTorch's torch.special.")
special.__all__ = []
_sys.modules[f"{__name__}.sparse"] = sparse
_DECLARED = install_methods()
tensor_protocols.install_binary_operators(Tensor)
# (the methods PyTorch dispatches to a __torch_function__: its public ones and the operators; engine.overrides)
_overrides.register_methods(
    Tensor,
    [n for n in Tensor.__dict__ if not n.startswith("_")]
    + [*tensor_protocols.BINARY_OPERATORS, "__getitem__", "__setitem__", "__neg__", "__pos__", "__abs__", "__invert__"],
)

# PyTorch's top-level constants (``torch.inf``, ``torch.pi``): plain Python floats, as there
# (``float`` here is the dtype ``tga.float``, so they come from math).
from math import e, inf, nan, pi  # noqa: E402

newaxis = None  # (torch.newaxis: NumPy's spelling of a new axis in indexing, x[:, tga.newaxis])

# PyTorch's module paths whose code lives in a package here, from this one table: ``import tinygrad_attn.jit``,
# ``from tinygrad_attn.cuda.amp import GradScaler`` and ``tga.onnx.export`` work as ``torch.jit``, ... do. They are
# cheap modules, registered at import.
_MODULE_PATHS = {
    "cuda": "runtime.cuda",
    "cuda.amp": "runtime.cuda.amp",
    "amp": "runtime.amp",
    "jit": "runtime.jit",
    "compiler": "runtime.compiler",
    "version": "runtime.version",
    "return_types": "tensors.return_types",
    "accelerator": "runtime.accelerator",
    "cpu": "runtime.cpu",
    "multiprocessing": "runtime.multiprocessing",
    "distributed": "runtime.distributed",
    "profiler": "runtime.profiler",
    "fx": "runtime.fx",
    "onnx": "serialization.onnx",
    "fft": "tensors.fft",
    "signal": "tensors.factories.signal",
    "signal.windows": "tensors.factories.windows",
    "testing": "tensors.testing",
    "func": "autograd.func",
    "overrides": "engine.overrides",
    "_C": "engine.overrides",  # (torch._C's DisableTorchFunctionSubclass, DisableTorchFunction, _disabled_torch_function_impl)
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
    "is_inference_mode_enabled",
    "decompose",
    "detect_anomaly",
    "gradcheck",
    "manual_seed",
    "Generator",
    "TypedStorage",
    "UntypedStorage",
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
    "layout",
    "strided",
    "sparse",
    "sparse_coo",
    "save",
    "load",
    "set_num_threads",
    "get_num_threads",
    "set_num_interop_threads",
    "get_num_interop_threads",
    "init_num_threads",
    "cond",
    "while_loop",
    "autocast_decrement_nesting",
    "autocast_increment_nesting",
    "clear_autocast_cache",
    "get_autocast_cpu_dtype",
    "get_autocast_dtype",
    "get_autocast_gpu_dtype",
    "is_autocast_cache_enabled",
    "is_autocast_cpu_enabled",
    "is_autocast_enabled",
    "set_autocast_cache_enabled",
    "set_autocast_cpu_dtype",
    "set_autocast_cpu_enabled",
    "set_autocast_dtype",
    "set_autocast_enabled",
    "set_autocast_gpu_dtype",
    "is_autocast_ipu_enabled",
    "set_autocast_ipu_enabled",
    "get_autocast_ipu_dtype",
    "set_autocast_ipu_dtype",
    "is_autocast_xla_enabled",
    "set_autocast_xla_enabled",
    "get_autocast_xla_dtype",
    "set_autocast_xla_dtype",
]
__all__ += [n for n in _DECLARED if n not in __all__]  # every op declared @public
__all__ += _SYMBOLIC  # (loaded on first use, by __getattr__)
__all__ += ["inf", "nan", "pi", "e", "newaxis"]  # PyTorch's constants
__all__ += ["memory_format", "contiguous_format", "preserve_format", "channels_last", "channels_last_3d",
            "set_anomaly_enabled", "is_anomaly_enabled", "is_anomaly_check_nan_enabled", "vmap", "GradScaler"]  # fmt: skip
