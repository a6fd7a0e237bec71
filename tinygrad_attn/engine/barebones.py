"""PyTorch's "barebones" unsigned dtypes, uint16, uint32 and uint64: tensors of them are made, copied,
cast, viewed, indexed, joined, compared for equality, multiplied, and-ed, or-ed, xor-ed and sorted, and
the ops that compute in another dtype take them (``sin`` and the other float functions in the default
float dtype, ``sum``, ``prod`` and the scans in int64); the ops of :data:`NO_KERNEL` have no kernel for
them in PyTorch's CPU and raise its ``NotImplementedError`` ("add" not implemented for 'UInt32').
:func:`~.declare.public` applies this to the names here (and ``declare.install`` to the operators of
the class body), as it applies ``real_only.REAL_ONLY``; the op's definition stays as it is. Promotion
of these dtypes with another integer or bool dtype is refused where dtypes promote
(``tensors.dtypes.promote_types``), not here; ``flip`` reads its own rule (:func:`flips_innermost`).

The table is PyTorch's answer for each op of its OpInfo inventory given operands of these dtypes
(``tests/tensor/test_unsigned_wide_torch.py`` asks it again).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

#: the dtypes PyTorch keeps to a few kernels
WIDE_UNSIGNED = frozenset(np.dtype(n) for n in ("uint16", "uint32", "uint64"))

# (elementwise ops: their operands promote together first, so a float operand computes in float,
# ``x + 1.5`` runs, and an integer of another dtype is promotion's RuntimeError; ``max(x)`` and
# ``max(x, 0)`` promote to x's dtype, the reduction PyTorch has no kernel for either)
_ELEMENTWISE = frozenset(
    """abs add sub rsub pow neg sign sgn square relu relu6 softsign hardtanh clamp clamp_min clamp_max
    max min maximum minimum fmax fmin fmod remainder floor_divide div divide gcd lcm heaviside lt le gt ge
    logical_and logical_or logical_xor logical_not bitwise_not bitwise_left_shift
    bitwise_right_shift __add__ __radd__ __sub__ __rsub__ __pow__ __rpow__ __neg__ __abs__ __lt__ __le__ __gt__
    __ge__ __floordiv__ __rfloordiv__ __mod__ __rmod__ __invert__ __lshift__ __rshift__ __rlshift__ __rrshift__""".split()
)
# (the others: reductions, indexing, linear algebra, layers, the tensor's own dtype or the dtype= asked for deciding;
# the factories PyTorch fills with a kernel of their dtype: eye)
_OTHERS = frozenset(
    """amax amin aminmax argmax argmin argwhere nonzero count_nonzero median nanmedian mode kthvalue topk cummax
    cummin isin bucketize bincount hash_tensor unravel_index gather scatter scatter_add scatter_reduce index_add
    index_copy index_put index_reduce index_select index_fill masked_fill masked_scatter masked_select put take
    take_along_dim tril triu trace combinations cross trapezoid cumulative_trapezoid addbmm addcmul addmm
    addmv addr baddbmm bmm dot vdot inner mm mv matmul __matmul__ __rmatmul__ tensordot matrix_power lu_unpack
    linear bilinear conv1d conv2d conv3d max_pool1d max_pool2d max_pool3d interpolate upsample upsample_bilinear
    upsample_nearest pixel_shuffle pixel_unshuffle channel_shuffle softmin pairwise_distance pad ldexp
    hinge_embedding_loss margin_ranking_loss poisson_nll_loss triplet_margin_loss triplet_margin_with_distance_loss
    to_sparse eye __setitem__""".split()
)
#: the ops, by the name each is declared with (its aliases are the one function) or an operator of Tensor's class body
NO_KERNEL = _ELEMENTWISE | _OTHERS


def _second(args: tuple, kwargs: dict, name: str, default: Any) -> Any:
    return args[1] if len(args) > 1 else kwargs.get(name, default)


# (ops that reach a missing kernel in some of their modes only: where the predicate says; the others run)
_ONLY_WHEN: dict[str, Callable[[tuple, dict], bool]] = {
    # (true division computes in float; floor and trunc division in the dtype)
    "div": lambda args, kwargs: kwargs.get("rounding_mode") is not None,
    "divide": lambda args, kwargs: kwargs.get("rounding_mode") is not None,
    # (a number 0 or 1 as exponent is a fill or a copy, no kernel: x ** 1)
    "pow": lambda args, kwargs: _second(args, kwargs, "exponent", None).__class__ not in (int, bool)
    or _second(args, kwargs, "exponent", None) not in (0, 1),
    "__pow__": lambda args, kwargs: args[1].__class__ not in (int, bool) or args[1] not in (0, 1),
    # (a float tensor times 2 to an integer power: a kernel of the exponent's dtype; an integer input computes
    # 2.0 ** other in float)
    "ldexp": lambda args, kwargs: getattr(getattr(args[0], "dtype", None), "kind", None) == "f",
    # (x[index] = v and x[mask] = v are index_put and masked_fill; x[1:] = v is a copy)
    "__setitem__": lambda args, kwargs: any(
        isinstance(k, list | np.ndarray) or (hasattr(k, "_data") and (k.ndim > 0 or k.dtype == np.bool_))
        for k in (args[1] if isinstance(args[1], tuple) else (args[1],))
    ),
    # (constant and circular padding copy; reflection and replication run kernels, which lack these dtypes)
    "pad": lambda args, kwargs: (args[2] if len(args) > 2 else kwargs.get("mode", "constant")) in (
        "reflect", "replicate"),
}  # fmt: skip


def message(label: str, dtype_name: str, dt: Any, shape: tuple) -> str:
    """PyTorch's first line for ``label`` given a ``dt`` tensor of ``shape``, and what to do instead."""
    return (f'"{label}" not implemented for {dtype_name!r} (dtype {np.dtype(dt).name}, shape {shape}): PyTorch has '
            f"no {label} kernel for uint16, uint32 and uint64; convert with .long()")  # fmt: skip


def refusing_wide_unsigned(name: str, fn: Callable[..., Any], error: type, result_type: Callable,
                           scalar_type_name: Callable) -> Callable[..., Any]:  # fmt: skip
    """``fn`` raising PyTorch's ``error`` where it would compute in uint16, uint32 or uint64: one of its
    tensor arguments has such a dtype and (for an elementwise op) the operands promote to it, or (for
    the others) no ``dtype=`` of another dtype is asked for; or its ``dtype=`` is one of them."""
    label = name.strip("_")
    promoting = name in _ELEMENTWISE
    only_when = _ONLY_WHEN.get(name)

    @functools.wraps(fn)
    def checked(*args: Any, **kwargs: Any) -> Any:
        found = None
        for a in args:  # (the common call, tensors and numbers only, read fast: these ops run in training loops)
            d = getattr(a, "_data", None)
            if d is not None and d.dtype in WIDE_UNSIGNED:
                found = a
                break
        else:
            for a in kwargs.values():
                d = getattr(a, "_data", None)
                if d is not None and d.dtype in WIDE_UNSIGNED:
                    found = a
                    break
        asked = kwargs.get("dtype") if kwargs else None
        if (found is None and asked is None) or (only_when is not None and not only_when(args, kwargs)):
            return fn(*args, **kwargs)
        dt = asked if found is None else found.dtype
        if promoting and found is not None:
            operands = [
                a for a in (*args, *kwargs.values()) if hasattr(a, "_data") or isinstance(a, int | float | complex)
            ]
            dt = result_type(*operands)  # (PyTorch's promotion error for another integer dtype, first)
        elif asked is not None:  # (computed in the dtype asked for: eye(2, dtype=uint32) has no kernel)
            dt = asked
        if np.dtype(dt) in WIDE_UNSIGNED:
            raise error(message(label, scalar_type_name(dt), dt, tuple(getattr(found, "shape", ()))))
        return fn(*args, **kwargs)

    checked.refuses_wide_unsigned = True
    checked.without_refusal = fn  # (copied outwards by each functools.wraps around it: read by unchecked)
    return checked


def unchecked(fn: Callable[..., Any]) -> Callable[..., Any]:
    """The public op ``fn`` without the refusal above (nor the argument checks outside it), for an op
    written from it that PyTorch computes for these dtypes (``slice_scatter`` from ``index_put``)."""
    return fn.without_refusal


def flips_innermost(x: Any, axes: tuple[int, ...]) -> bool:
    """Whether ``flip`` of these axes reverses ``x``'s innermost dimension in memory (of more than one
    element): PyTorch flips that one with a kernel it has none of for uint16, uint32 and uint64, and
    copies the others (``x.flip(0)`` of a (2, 3) tensor runs, ``x.flip(1)`` raises)."""
    if x._data.dtype not in WIDE_UNSIGNED or x.numel() == 0:
        return False
    moving = [(abs(s), i) for i, (n, s) in enumerate(zip(x.shape, x.stride(), strict=True)) if n > 1]
    return bool(moving) and min(moving)[1] in axes
