"""PyTorch's products and distances beyond ``matmul``: ``tensordot kron inner vdot mv cross
cdist dist addcmul addcdiv addmv addr``.

Each is a ``tga.`` free function and, where PyTorch has one, a :class:`Tensor` method (the
table :data:`METHODS`), a composite of ``matmul``, ``einsum``, the elementwise ops and the
views, so each has gradients of every order on every device.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..engine.declare import public
from ..engine.forward_grads import refuse_tangents
from ..functional.checks import MissingAxisError, same_dtype
from ..functional.checks import tensor_arg as _tensor
from ..functional.distance import _pnorm
from ..ops.saved import saved_for_backward
from ..tensors._tensor import InvalidArgumentError, Tensor, stack
from ..tensors.dtypes import UnsupportedDtypeError, result_type
from ..tensors.promotion import beta_first, value_first
from ..tensors.shape import dims


@public
def tensordot(a: Tensor, b: Tensor, dims: Any = 2, out: Any = None) -> Tensor:  # noqa: A002
    """The sum of products of ``a``'s last ``dims`` axes with ``b``'s first ``dims`` (an int), or of the
    axes paired in ``dims = (a_axes, b_axes)``; the result has ``a``'s other axes, then ``b``'s."""
    a, b = _tensor(a, "tensordot"), _tensor(b, "tensordot")
    if isinstance(dims, Tensor):
        dims = dims.tolist()
    if isinstance(dims, (int, np.integer)):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        k = int(dims)
        if k > min(a.ndim, b.ndim):
            raise RuntimeError(f"tensordot expects dims < ndim_a or ndim_b, but got dims={k}")
        ia, ib = list(range(a.ndim - k, a.ndim)), list(range(k))
    else:
        ia, ib = ([d] if isinstance(d, (int, np.integer)) else list(d) for d in dims)
        if len(ia) != len(ib):
            raise RuntimeError(f"both dimension lists should have same length, got {len(ia)} and {len(ib)}")
    ia = [_axis(a, d) for d in ia]
    ib = [_axis(b, d) for d in ib]
    # A contracted pair where one side has length 1 is summed on the other side at once (PyTorch's
    # broadcast of that axis); the other pairs must match. What the backward keeps follows from the
    # steps, as in PyTorch: a summed side keeps nothing of its input, the product keeps its operands.
    ta, tb = a, b
    for da, db in zip(ia, ib):
        if b.shape[db] == 1:
            ta = _summed(ta, da)
        elif a.shape[da] == 1:
            tb = _summed(tb, db)
        elif a.shape[da] != b.shape[db]:
            raise RuntimeError(f"contracted dimensions need to match, but first has size {a.shape[da]} in dim {da} "
                               f"and second has size {b.shape[db]} in dim {db}")  # fmt: skip
    ra = [d for d in range(a.ndim) if d not in ia]
    rb = [d for d in range(b.ndim) if d not in ib]
    shape = tuple(a.shape[d] for d in ra) + tuple(b.shape[d] for d in rb)
    m, n = math.prod(a.shape[d] for d in ra), math.prod(b.shape[d] for d in rb)
    ta, tb = ta.permute((*ra, *ia)), tb.permute((*ib, *rb))
    if m != 1 or n != 1:  # a matrix product (the reshapes are views where the strides allow, else copies)
        k = math.prod(ta.shape[len(ra) :])
        return (ta.reshape(m, k) @ tb.reshape(k, n)).reshape(shape)
    if _contiguous(ta) and _contiguous(tb):  # a full contraction of two views: one dot product
        return (ta.reshape(-1) @ tb.reshape(-1)).reshape(shape)
    return _summed(ta.squeeze() * tb.squeeze(), None).reshape(shape)  # (no copy of either made contiguous)


def _summed(x: Tensor, d: int | None) -> Tensor:
    s = x.sum(d, keepdim=d is not None)
    return s if s.dtype == x.dtype else s.astype(x.dtype)  # (an integer sum stays in its dtype, as PyTorch's)


def _contiguous(x: Tensor) -> bool:
    d = x._data
    flags = getattr(getattr(d, "_array", d), "flags", None)
    return flags is None or bool(flags.c_contiguous)


def _axis(x: Tensor, d: int) -> int:
    return dims.one(x.shape, d, "tensordot", scalar_ok=False)


@public(method=True)
def kron(input: Tensor, other: Tensor) -> Tensor:  # noqa: A002
    """The Kronecker product: every entry of ``input`` times a whole block ``other`` (shapes aligned
    at the right, the shorter padded with ones in front)."""
    a, b = _tensor(input, "kron"), _tensor(other, "kron")
    nd = max(a.ndim, b.ndim)
    a = a.reshape((1,) * (nd - a.ndim) + a.shape)
    b = b.reshape((1,) * (nd - b.ndim) + b.shape)
    # (a0, 1, a1, 1, ...) * (1, b0, 1, b1, ...) -> (a0 * b0, a1 * b1, ...)
    ai = a.reshape(tuple(v for s in a.shape for v in (s, 1)))
    bi = b.reshape(tuple(v for s in b.shape for v in (1, s)))
    return (ai * bi).reshape(tuple(p * q for p, q in zip(a.shape, b.shape)))


@public(method=True)
def inner(input: Tensor, other: Tensor) -> Tensor:  # noqa: A002
    """The sum of products over the last axis of each (a product with a 0-d operand)."""
    a, b = _tensor(input, "inner"), _tensor(other, "inner")
    if a.ndim == 0 or b.ndim == 0:
        return a * b
    if a.shape[-1] != b.shape[-1]:
        raise RuntimeError(f"inner() the last dimension must match on both input tensors but got shapes "
                           f"{list(a.shape)} and {list(b.shape)}")  # fmt: skip
    return tensordot(a, b, ([-1], [-1]))


@public(method=True)
def vdot(input: Tensor, other: Tensor) -> Tensor:  # noqa: A002
    """The dot product of two 1-D tensors, the first conjugated."""
    a, b = _tensor(input, "vdot"), _tensor(other, "vdot")
    if a.ndim != 1 or b.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {a.ndim}D and {b.ndim}D tensors")
    if a.shape != b.shape:
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{a.shape[0]}] and src [{b.shape[0]}] to "
                           "have the same number of elements, but got different")  # fmt: skip
    return a.conj() @ b


@public(method=True)
def mv(input: Tensor, vec: Tensor) -> Tensor:  # noqa: A002
    """A matrix (2-D) times a vector (1-D)."""
    a, v = _tensor(input, "mv"), _tensor(vec, "mv")
    if a.ndim != 2 or v.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got {a.ndim}, {v.ndim}")
    return a @ v


@public(method=True, inplace_function=True)
def addmv(  # noqa: A002
    input: Tensor | float, mat: Tensor | float, vec: Tensor | float, *scalars_first: Any, beta: Any = 1, alpha: Any = 1
) -> Tensor:
    """``beta * input + alpha * (mat @ vec)``."""
    input, mat, vec, beta, alpha = beta_first("addmv", ("mat", "vec"), (input, mat, vec, *scalars_first), beta, alpha)
    from ..tensors.tensor_functions import _plus_product  # noqa: PLC0415

    prod = mv(mat, vec)
    same_dtype("addmv", prod, ("input", input))  # (PyTorch's kernel promotes none)
    return _plus_product("addmv", input, prod, beta, alpha)


@public(method=True, inplace=True)
def addr(  # noqa: A002
    input: Tensor | float,
    vec1: Tensor | float,
    vec2: Tensor | float,
    *scalars_first: Any,
    beta: Any = 1,
    alpha: Any = 1,
) -> Tensor:
    """``beta * input + alpha * outer(vec1, vec2)``."""
    input, vec1, vec2, beta, alpha = beta_first(
        "addr", ("vec1", "vec2"), (input, vec1, vec2, *scalars_first), beta, alpha
    )
    from ..tensors.tensor_functions import _plus_product, outer  # noqa: PLC0415

    v1 = _tensor(vec1, "addr")
    if v1.dtype.kind == "f" and alpha != 1:  # (PyTorch's kernel scales vec1 first: alpha * vec1 * vec2, each rounded)
        # (PyTorch's half kernel holds alpha and beta in the tensors' dtype, each product rounded to it: 0-d
        # tensors of that dtype, since a Python number operand of a half tensor is read at float32)
        half = v1.dtype.itemsize == 2
        if half and isinstance(beta, (int, float)) and beta not in (0, 1) and isinstance(input, Tensor):
            input, beta = input * input.new_tensor(beta), 1  # noqa: A001
        a = v1.new_tensor(alpha) if half and isinstance(alpha, (int, float)) else alpha
        return _plus_product("addr", input, outer(v1 * a, vec2), beta, 1)
    return _plus_product("addr", input, outer(v1, vec2), beta, alpha)


@public(method=True, inplace=True)
def addbmm(  # noqa: A002
    input: Tensor | float,
    batch1: Tensor | float,
    batch2: Tensor | float,
    *scalars_first: Any,
    beta: Any = 1,
    alpha: Any = 1,
) -> Tensor:
    """``beta * input + alpha * sum_b(batch1[b] @ batch2[b])``: the products of a batch summed into one matrix."""
    input, batch1, batch2, beta, alpha = beta_first(
        "addbmm", ("batch1", "batch2"), (input, batch1, batch2, *scalars_first), beta, alpha
    )
    from ..tensors.tensor_functions import _plus_product, bmm  # noqa: PLC0415

    b1, b2 = _tensor(batch1, "addbmm"), _tensor(batch2, "addbmm")
    if b1.ndim != 3 or b2.ndim != 3:
        raise (MissingAxisError if min(b1.ndim, b2.ndim) < 3 else RuntimeError)(
            f"batch1 must be a 3D tensor, batch2 must be a 3D tensor (addbmm: shapes {tuple(b1.shape)}, {tuple(b2.shape)})"
        )
    same_dtype("addbmm", b1, ("batch2", b2), ("input", input))  # (PyTorch's kernel promotes none)
    if b1.dtype == np.float16 and b2.dtype == np.float16 and b1.shape[0] > 0:
        return _addbmm_half(input, b1, b2, beta, alpha)
    prod = bmm(b1, b2)
    total = prod.sum(0, dtype=prod.dtype if prod.dtype.kind in "biu" else None)  # (an int sum keeps its dtype)
    return _plus_product("addbmm", input, total, beta, alpha)


def _addbmm_half(input: Any, b1: Tensor, b2: Tensor, beta: Any, alpha: Any) -> Tensor:  # noqa: A002
    """float16 ``addbmm`` as PyTorch's CPU kernel computes it: one ``addmm`` per batch entry into the
    result (each in float32, rounded to float16), the result rounded after every entry."""
    from ..tensors.tensor_functions import _plus_product  # noqa: PLC0415

    single = np.dtype(np.float32)
    out = input
    for k in range(b1.shape[0]):
        acc = out.astype(single) if isinstance(out, Tensor) else out
        out = _plus_product("addbmm", acc, b1[k].astype(single) @ b2[k].astype(single), beta, alpha)
        out = out.astype(np.float16)
        beta = 1  # (the input counts once)
    return out


@public(method=True)
def ger(input: Tensor, vec2: Tensor) -> Tensor:  # noqa: A002
    """PyTorch's older name of :func:`outer` (the outer product of two vectors)."""
    from ..tensors.tensor_functions import outer  # noqa: PLC0415

    return outer(_tensor(input, "ger"), _tensor(vec2, "ger"))


@public(method=True, dtypes="numeric")
def cross(input: Tensor, other: Tensor, dim: int | None = None) -> Tensor:  # noqa: A002
    """The cross product of 3-vectors along ``dim`` (the two broadcast together); without ``dim``,
    the first axis of size 3 (``torch.cross``'s default; ``torch.linalg.cross`` takes -1)."""
    a, b = _tensor(input, "cross"), _tensor(other, "cross")
    same_dtype("linalg.cross", a, ("other", b))  # (PyTorch's kernel promotes none)
    if a.ndim != b.ndim:
        raise RuntimeError(f"linalg.cross: inputs must have the same number of dimensions, got {a.ndim} and {b.ndim}")
    if a.dtype != b.dtype:  # (PyTorch's kernel does not promote)
        raise RuntimeError(f"cross: expected both inputs of one dtype, got {a.dtype} and {b.dtype}")
    try:
        shape = np.broadcast_shapes(a.shape, b.shape)
    except ValueError:
        raise InvalidArgumentError(
            f"linalg.cross: the shapes {tuple(a.shape)} and {tuple(b.shape)} do not broadcast"
        ) from None
    if dim is not None:
        d = dims.one(shape, dim, "cross", scalar_ok=False)
        if a.shape[d] != 3 or b.shape[d] != 3:
            raise RuntimeError(
                f"linalg.cross: inputs dimension {dim} must have length 3. Got {a.shape[d]} and {b.shape[d]}"
            )
    a, b = a.expand(shape), b.expand(shape)
    if dim is None:
        dim = next((i for i, s in enumerate(shape) if s == 3), None)
        if dim is None:
            raise RuntimeError(f"no dimension of size 3 in input (shapes {tuple(a.shape)} and {tuple(b.shape)})")
    d = dims.one(shape, dim, "cross", scalar_ok=False)
    if shape[d] != 3:
        raise RuntimeError(
            f"linalg.cross: inputs dimension {dim} must have length 3. Got {a.shape[d]} and {b.shape[d]}"
        )
    a0, a1, a2 = a.unbind(d)
    b0, b1, b2 = b.unbind(d)
    return stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], d)


@public(dtypes="float3264")
def cdist(x1: Tensor, x2: Tensor, p: float = 2.0, compute_mode: str = "use_mm_for_euclid_dist_if_necessary") -> Tensor:
    """The ``p``-norm distance between each row of ``x1 (..., P, M)`` and each row of ``x2 (..., R, M)``:
    a ``(..., P, R)`` tensor (batches broadcast)."""
    refuse_tangents("_cdist_forward", x1, x2)
    x1, x2 = _tensor(x1, "cdist"), _tensor(x2, "cdist")
    if x1.dtype.kind != "f" or x2.dtype.kind != "f":
        raise UnsupportedDtypeError(
            f"cdist only supports floating-point dtypes, X1 got: {x1.dtype}, X2 got: {x2.dtype}"
        )
    same_dtype("cdist", x1, ("x2", x2))  # (PyTorch's kernel promotes none)
    if x1.ndim < 2 or x2.ndim < 2:
        raise RuntimeError(f"cdist only supports at least 2D tensors, X1 got: {x1.ndim}D, X2 got: {x2.ndim}D")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: {x1.shape[-1]} X2: {x2.shape[-1]}")
    if p < 0:
        raise RuntimeError(f"cdist only supports non-negative p values, got {p}")
    diff = x1.unsqueeze(-2) - x2.unsqueeze(-3)  # (..., P, R, M)
    # p = 0: the count of differing entries, in the graph with gradient 0, as PyTorch's
    out = diff.abs().sign().sum(-1) if p == 0 else _pnorm(diff, p)
    return saved_for_backward(out, x1, x2, output=True)  # (what PyTorch's keeps, for every p)


@public(method=True)
def dist(input: Tensor, other: Tensor, p: float = 2) -> Tensor:  # noqa: A002
    """The ``p``-norm of ``input - other`` (broadcast together), over every entry."""
    a, b = _tensor(input, "dist"), _tensor(other, "dist")
    if a.dtype.kind not in "fc" and b.dtype.kind not in "fc":
        raise UnsupportedDtypeError(f"dist: input dtype should be either floating point or complex, got {a.dtype} "
                                    f"and {b.dtype}")  # fmt: skip
    d = (a - b).reshape(-1)
    if p == 0:
        out = d.abs().sign().sum()
    elif d.dtype == np.float16:  # (the difference rounded to float16, its norm accumulated in float32, as PyTorch's)
        out = _pnorm(d.astype(np.float32), float(p)).astype(np.float16)
    else:
        out = _pnorm(d, float(p))
    return saved_for_backward(out, a, b, output=True)  # (what PyTorch's keeps, for every p)


@public(method=True, inplace=True, dtypes="numeric", operands=("input", "tensor1", "tensor2"))
def addcmul(input: Tensor, tensor1: Tensor | float, tensor2: Tensor, *more: Tensor, value: Any = 1) -> Tensor:  # noqa: A002
    """``input + value * tensor1 * tensor2`` (all three broadcast; Adam's second-moment update); PyTorch's
    deprecated ``addcmul(input, value, tensor1, tensor2)`` too."""
    tensor1, tensor2, value = value_first("addcmul", tensor1, tensor2, more, value)
    x, t1, t2 = _in_common_dtype("addcmul", input, tensor1, tensor2)
    prod = t1 * t2
    value = _value_in(value, x, t1, t2)
    return x + (prod if value == 1 else prod * value)


def _in_common_dtype(op: str, *operands: Any) -> list[Tensor]:
    """``addcmul``/``addcdiv``'s three tensors in their common dtype, as PyTorch's kernel reads them:
    one promotion of all three, so a float64 ``input`` makes the product of float16 0-d tensors in
    float64, not in float16 and then widened."""
    tensors = [_tensor(t, op) for t in operands]
    dt = result_type(*tensors)
    return [t if t.dtype == dt else t.to(dt) for t in tensors]


def _value_in(value: Any, *operands: Any) -> Any:
    """``addcmul``'s ``value`` as PyTorch's kernel takes it: in the dtype of its tensors, which it
    does not promote (``value=0.5`` with integer tensors is 0, truncated)."""
    if not isinstance(value, (float, np.floating)) or value == 1:
        return value
    kind = result_type(*operands).kind
    return bool(value) if kind == "b" else int(value) if kind in "iu" else value


@public(method=True, inplace=True)
def addcdiv(input: Tensor, tensor1: Tensor | float, tensor2: Tensor, *more: Tensor, value: Any = 1) -> Tensor:  # noqa: A002
    """``input + value * tensor1 / tensor2`` (all three broadcast; Adam's parameter update); PyTorch's
    deprecated ``addcdiv(input, value, tensor1, tensor2)`` too."""
    tensor1, tensor2, value = value_first("addcdiv", tensor1, tensor2, more, value)
    t1, t2 = _tensor(tensor1, "addcdiv"), _tensor(tensor2, "addcdiv")
    if t1.dtype.kind in "iub" and t2.dtype.kind in "iub":
        raise RuntimeError("Integer division with addcdiv is no longer supported, and in a future release addcdiv "
                           "will perform a true division of tensor1 and tensor2.")  # fmt: skip
    x, t1, t2 = _in_common_dtype("addcdiv", input, t1, t2)
    q = t1 / t2
    return x + (q if value == 1 else q * value)


def _shape_check(op: str, shapes: Sequence[tuple]) -> None:
    try:
        np.broadcast_shapes(*shapes)
    except ValueError:
        raise InvalidArgumentError(f"{op}: shapes {list(shapes)} do not broadcast together") from None
