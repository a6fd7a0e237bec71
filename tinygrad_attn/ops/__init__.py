"""The primitive ops: the short list every backend must run, each with its gradient.

Everything else in the library (softmax, layer_norm, attention, ...) is written once, in
:mod:`tinygrad_attn.functional`, from these. Each class's ``forward`` and ``backward``
sit side by side; broadcasting is undone in one place, ``engine.backward.unbroadcast``.
"""

from .elementwise import (
    Abs,
    Add,
    Cast,
    Div,
    Erf,
    Exp,
    Log,
    Maximum,
    Minimum,
    Mul,
    Neg,
    Pow,
    PowScalar,
    Relu,
    Sigmoid,
    Sqrt,
    Sub,
    Tanh,
    Where,
)
from .gather_along import GatherAlong, ScatterAddAlong
from .index import Gather, PutAdd, ScatterAdd, Take
from .linalg import Matmul
from .movement import Cat, Expand, Permute, Reshape, Slice, SliceGrad
from .ordering import ArgExtreme, Argsort
from .reduce import Max, Min, Sum
from .rounding import Ceil, Floor, Fmod, Round, Sign
from .running_index import CumArgExtreme
from .scan import Cumsum
from .transcendental import Acos, Acosh, Asin, Asinh, Atan, Atan2, Atanh, Erfinv, Expm1, Log1p
from .trigonometric import Cos, Sin, Tan

#: Every primitive op, by class name.
PRIMITIVES = {
    cls.__name__: cls
    for cls in (
        Add, Sub, Mul, Div, Neg, Pow, PowScalar, Exp, Log, Sqrt, Tanh, Sigmoid, Relu, Abs, Erf,
        Maximum, Minimum, Where, Cast,
        Sum, Max, Min,
        Matmul,
        Reshape, Permute, Expand, Slice, SliceGrad, Cat,
        Gather, ScatterAdd,
        Sin, Cos, Floor, Ceil, Round, Sign, Cumsum, GatherAlong, ScatterAddAlong,
        # inverse trigonometric and hyperbolic functions, log1p, expm1, erfinv (ops/transcendental.py)
        Asin, Acos, Atan, Atan2, Asinh, Acosh, Atanh, Log1p, Expm1, Erfinv,
        Fmod,  # (ops/rounding.py)
        Tan,  # (ops/trigonometric.py)
    )
}  # fmt: skip

__all__ = [c.__name__ for c in PRIMITIVES.values()] + ["PRIMITIVES", "Argsort", "ArgExtreme", "CumArgExtreme"]
# Gather and ScatterAdd with the index as an input: what a trace records for tensor indices.
__all__ += ["Take", "PutAdd"]
